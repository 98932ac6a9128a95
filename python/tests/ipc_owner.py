"""Process A of the vendor's IPC notify flow as a stand-alone script written against the
vendor's `acl` module only: it starts process B (ipc_peer.py) itself and talks to it over B's
standard input/output (the protocol is in ipc_peer.py). Exits 0 when B's bytes arrived intact.
Usage: python ipc_owner.py [--no-pid-validation]
"""

import os
import subprocess
import sys

import acl

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_NOTIFY_DEFAULT = 0
ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION = 0x2
ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION = 0x1
DEVICE = 2
SIZE = 1 << 20


def check(ret, what):
    if ret != 0:
        sys.exit("[owner] %s failed: %d %s" % (what, ret, acl.get_recent_err_msg()))


def main():
    validate = "--no-pid-validation" not in sys.argv[1:]
    check(acl.init(), "init")
    check(acl.rt.set_device(DEVICE), "set_device")
    stream, ret = acl.rt.create_stream()
    check(ret, "create_stream")
    notify, ret = acl.rt.create_notify(ACL_NOTIFY_DEFAULT)
    check(ret, "create_notify")
    dev_ptr, ret = acl.rt.malloc(SIZE, ACL_MEM_MALLOC_HUGE_FIRST)
    check(ret, "malloc")
    check(acl.rt.memset(dev_ptr, SIZE, 0, SIZE), "memset")
    notify_key, ret = acl.rt.notify_get_export_key(
        notify, 65, 0 if validate else ACL_RT_NOTIFY_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    check(ret, "notify_get_export_key")
    mem_key, ret = acl.rt.ipc_mem_get_export_key(
        dev_ptr, SIZE, 65, 0 if validate else ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION)
    check(ret, "ipc_mem_get_export_key")

    peer_script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ipc_peer.py")
    peer = subprocess.Popen([sys.executable, peer_script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)

    def send(*words):
        peer.stdin.write(" ".join(str(w) for w in words) + "\n")
        peer.stdin.flush()

    def receive():
        words = peer.stdout.readline().split()
        if not words or words[0] == "error":
            peer.kill()
            sys.exit("[owner] process B failed: %s" % words)
        return words

    words = receive()
    pid = int(words[1])
    if validate:
        check(acl.rt.notify_set_import_pid(notify, [pid]), "notify_set_import_pid")
        check(acl.rt.ipc_mem_set_import_pid(mem_key, [pid]), "ipc_mem_set_import_pid")
        print("[owner] whitelisted peer pid %d" % pid)
    send("keys", notify_key, mem_key, SIZE)

    check(acl.rt.wait_and_reset_notify(notify, stream, 30), "wait_and_reset_notify")
    host, ret = acl.rt.malloc_host(SIZE)
    check(ret, "malloc_host")
    check(acl.rt.memcpy_async(host, SIZE, dev_ptr, SIZE, ACL_MEMCPY_DEVICE_TO_HOST, stream), "memcpy_async")
    check(acl.rt.synchronize_stream(stream), "synchronize_stream")
    data = acl.util.ptr_to_bytes(host, SIZE)
    period = bytes((i * 13 + 5) & 0xFF for i in range(256))
    good = data == period * (SIZE // 256)
    print("[owner] notified; the %d bytes the peer wrote are %s" % (SIZE, "all correct" if good else "WRONG"))
    receive()  # "written"
    send("done")
    receive()  # "closed": B closed its imports first, the vendor's rule

    check(acl.rt.free_host(host), "free_host")
    check(acl.rt.ipc_mem_close(mem_key), "ipc_mem_close")
    check(acl.rt.free(dev_ptr), "free")
    check(acl.rt.destroy_notify(notify), "destroy_notify")
    check(acl.rt.destroy_stream(stream), "destroy_stream")
    check(acl.rt.reset_device(DEVICE), "reset_device")
    check(acl.finalize(), "finalize")
    if peer.wait(timeout=30) != 0:
        sys.exit("[owner] process B exited with %d" % peer.returncode)
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
