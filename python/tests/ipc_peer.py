"""Process B of the vendor's IPC notify flow, written against the vendor's `acl` module only.

Protocol with process A (the test), one line each way on standard input/output:
  B -> A  "pid <pid>"                 (from acl.rt.device_get_bare_tgid)
  A -> B  "keys <notify_key> <mem_key> <size>"
  B -> A  "written"                   (after the copy and the record ran on B's stream)
          or "import <ret>" and exit, with --expect-refused
  A -> B  "done"                      (A has read the data)
  B -> A  "closed"                    (B closed its imports: A may close and free)
Usage: python ipc_peer.py [--expect-refused]
"""

import sys

import acl

ACL_MEMCPY_HOST_TO_HOST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS = 0x2
ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS = 0x1
DEVICE = 3


def send(*words):
    print(*words, flush=True)


def receive():
    line = sys.stdin.readline()
    if not line:
        sys.exit("peer: process A went away")
    return line.split()


def check(ret, what):
    if ret != 0:
        send("error", what, ret, acl.get_recent_err_msg())
        sys.exit(1)


def pattern(size):
    period = bytes((i * 13 + 5) & 0xFF for i in range(256))
    return period * (size // 256)


def main():
    expect_refused = "--expect-refused" in sys.argv[1:]
    check(acl.init(), "init")
    check(acl.rt.set_device(DEVICE), "set_device")
    pid, ret = acl.rt.device_get_bare_tgid()
    check(ret, "device_get_bare_tgid")
    send("pid", pid)

    words = receive()
    assert words[0] == "keys", words
    notify_key, mem_key, size = words[1], words[2], int(words[3])

    notify, ret = acl.rt.notify_import_by_key(notify_key, ACL_RT_NOTIFY_IMPORT_FLAG_ENABLE_PEER_ACCESS)
    if expect_refused:
        send("import", ret)
        acl.get_recent_err_msg()
        check(acl.rt.reset_device(DEVICE), "reset_device")
        check(acl.finalize(), "finalize")
        return
    check(ret, "notify_import_by_key")
    dev_ptr, ret = acl.rt.ipc_mem_import_by_key(mem_key, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
    check(ret, "ipc_mem_import_by_key")

    stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    host, ret = acl.rt.malloc_host(size)
    check(ret, "malloc_host")
    data = pattern(size)
    check(acl.rt.memcpy(host, size, acl.util.bytes_to_ptr(data), size, ACL_MEMCPY_HOST_TO_HOST), "memcpy")
    # Write into A's device memory, then record A's notify behind the copy on the same stream.
    check(acl.rt.memcpy_async(dev_ptr, size, host, size, ACL_MEMCPY_HOST_TO_DEVICE, stream), "memcpy_async")
    check(acl.rt.record_notify(notify, stream), "record_notify")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    send("written")

    words = receive()
    assert words == ["done"], words
    check(acl.rt.free_host(host), "free_host")
    check(acl.rt.ipc_mem_close(mem_key), "ipc_mem_close")
    check(acl.rt.destroy_notify(notify), "destroy_notify")
    send("closed")
    check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.reset_device(DEVICE), "reset_device")
    check(acl.finalize(), "finalize")


if __name__ == "__main__":
    main()
