"""The server side of the two-process ADXL test (test_adxl_processes.py), written against
`acl.adxl` only.

    adxl_peer.py IP:PORT COUNT

Initialises an engine listening on IP:PORT, registers a numpy uint32 array of COUNT elements
(element i is (i * 2654435761 + 12345) mod 2**32) and prints "ready ADDR NBYTES SHA256". Then,
per line on stdin, "verify SHA256" prints "ok" when the array's bytes now hash to SHA256 and
"mismatch ACTUAL" otherwise. At the end of input it deregisters, closes and exits."""

from __future__ import annotations

import hashlib
import sys

import numpy as np

from acl import adxl


def pattern(count: int) -> "np.ndarray":
    i = np.arange(count, dtype=np.uint64)
    return ((i * 2654435761 + 12345) % (1 << 32)).astype(np.uint32)


def main() -> int:
    name, count = sys.argv[1], int(sys.argv[2])
    data = pattern(count)
    try:
        engine = adxl.Engine(name)
        handle = engine.register(data)
    except adxl.AdxlError as err:
        print("error %d %s" % (int(err.status), err.message), flush=True)
        return 1
    print("ready %d %d %s" % (handle.addr, data.nbytes, hashlib.sha256(data.tobytes()).hexdigest()), flush=True)
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "verify":
            actual = hashlib.sha256(data.tobytes()).hexdigest()
            print("ok" if actual == words[1] else "mismatch %s" % actual, flush=True)
    engine.deregister(handle)
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
