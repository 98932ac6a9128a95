"""The server side of the two-process test of the engine's newer members
(test_adxl_processes.py), written against `acl.adxl` / `acl.hixl` only.

    adxl_member_peer.py IP:PORT SIZE adxl|hixl

Initialises an engine (acl.adxl.Engine or acl.hixl.Engine) listening on IP:PORT that lets
peers reach only registered memory (OPTION_REMOTE_ACCESS "registered"), and registers two
regions of SIZE bytes: SHARED, from malloc_mem(MemType.HOST) (byte i is (i * 7 + 3) mod 256),
and PRIVATE, a bytearray registered with local_only=True. Prints
"ready SHARED_ADDR PRIVATE_ADDR SHA256_OF_SHARED". Then, per line on stdin:

- "verify SHA256": "ok" when SHARED now hashes to SHA256, else "mismatch ACTUAL";
- "free": deregisters SHARED and frees it with free_mem, frees it again and prints
  "freed STATUS" with the status the second free_mem raised (0 if none).

At the end of input it closes the engine and exits.
"""

from __future__ import annotations

import ctypes
import hashlib
import sys

from acl import adxl, hixl


def pattern(size: int) -> bytes:
    return bytes((i * 7 + 3) & 0xFF for i in range(size))


def main() -> int:
    name, size, face = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    module = hixl if face == "hixl" else adxl
    try:
        engine = module.Engine(name, {adxl.OPTION_REMOTE_ACCESS: "registered"})
        shared = adxl.Engine.malloc_mem(adxl.MemType.HOST, size)  # the static member
        ctypes.memmove(shared, pattern(size), size)
        shared_handle = engine.register(shared, size, adxl.MemType.HOST)
        private = bytearray(b"p" * size)
        engine.register(private, local_only=True)
    except adxl.AdxlError as err:
        print("error %d %s" % (int(err.status), err.message), flush=True)
        return 1
    digest = hashlib.sha256(ctypes.string_at(shared, size)).hexdigest()
    print("ready %d %d %s" % (shared, adxl.buffer_address(private), digest), flush=True)
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "verify":
            actual = hashlib.sha256(ctypes.string_at(shared, size)).hexdigest()
            print("ok" if actual == words[1] else "mismatch %s" % actual, flush=True)
        elif words and words[0] == "free":
            engine.deregister(shared_handle)
            adxl.free_mem(shared)
            try:
                adxl.free_mem(shared)
                again = 0
            except adxl.AdxlError as err:
                again = int(err.status)
            print("freed %d" % again, flush=True)
    engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
