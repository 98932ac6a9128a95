"""Process B of the IPC event and value wait/write tests (test_ipc_events_two_processes.py),
written against the `acl` module only.

B starts by sending ``pid <pid>`` (from acl.rt.device_get_bare_tgid, the pid process A
whitelists for its memory), then obeys one command per line on standard input and answers one
line on standard output, the ``ret`` of the step first (the first non-zero one when a command
makes several calls). IPC event handles travel as hexadecimal text.

  export_event                -> "<ret> <handle hex>"  (B creates an IPC event and shares it)
  open_event <handle hex>     -> "<ret>"               (B opens A's event)
  record                      -> "<ret>"               (record on B's stream, synchronised)
  wait                        -> "<ret>"               (B's stream waits on the event, synchronised)
  sync_event                  -> "<ret>"               (synchronize_event_with_timeout, 10 s)
  status                      -> "<ret> <status>"      (query_event_status: 1 complete, 0 not)
  destroy_event               -> "<ret>"
  import_mem <key>            -> "<ret>"               (B maps A's device memory, a 64-bit word)
  block_then_record <value>   -> "<ret>"               (B's stream waits for the word to equal
                                                        <value>, then records the event: a
                                                        record that stays pending till then)
  value_write <value>         -> "<ret>"               (value_write on B's stream, synchronised)
  value_wait <value> <flag>   -> "<ret>"               (value_wait on B's stream, synchronised
                                                        with a 10 s bound)
  close_mem                   -> "<ret>"               (ipc_mem_close of the import)
  exit                        -> B releases everything and ends (exit code 0)
Usage: python ipc_event_peer.py <device>
"""

import sys

import acl

ACL_EVENT_IPC = 0x40
ACL_STREAM_WAIT_VALUE_EQ = 1
ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS = 0x1
SYNC_LIMIT_MS = 10000


def send(*words):
    print(*words, flush=True)


def first_error(*codes):
    for code in codes:
        if code != 0:
            return code
    return 0


def main():
    device = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    rt = acl.rt
    if acl.init() != 0 or rt.set_device(device) != 0:
        send("error", "init", acl.get_recent_err_msg())
        sys.exit(1)
    stream, ret = rt.create_stream()
    pid, ret2 = rt.device_get_bare_tgid()
    if ret != 0 or ret2 != 0:
        send("error", "setup", ret, ret2)
        sys.exit(1)
    send("pid", pid)

    event = 0
    key = None
    word = 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command, args = words[0], words[1:]
        if command == "export_event":
            event, ret = rt.create_event_ex_with_flag(ACL_EVENT_IPC)
            handle, ret2 = rt.ipc_get_event_handle(event) if ret == 0 else (b"", ret)
            send(first_error(ret, ret2), handle.hex() or "-")
        elif command == "open_event":
            event, ret = rt.ipc_open_event_handle(bytes.fromhex(args[0]))
            send(ret)
        elif command == "record":
            send(first_error(rt.record_event(event, stream), rt.synchronize_stream(stream)))
        elif command == "wait":
            send(first_error(rt.stream_wait_event(stream, event),
                             rt.synchronize_stream_with_timeout(stream, SYNC_LIMIT_MS)))
        elif command == "sync_event":
            send(rt.synchronize_event_with_timeout(event, SYNC_LIMIT_MS))
        elif command == "status":
            status, ret = rt.query_event_status(event)
            send(ret, status)
        elif command == "destroy_event":
            send(rt.destroy_event(event))
            event = 0
        elif command == "import_mem":
            key = args[0]
            word, ret = rt.ipc_mem_import_by_key(key, ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS)
            send(ret)
        elif command == "block_then_record":
            send(first_error(rt.value_wait(word, int(args[0]), ACL_STREAM_WAIT_VALUE_EQ, stream),
                             rt.record_event(event, stream)))
        elif command == "value_write":
            send(first_error(rt.value_write(word, int(args[0]), 0, stream), rt.synchronize_stream(stream)))
        elif command == "value_wait":
            send(first_error(rt.value_wait(word, int(args[0]), int(args[1]), stream),
                             rt.synchronize_stream_with_timeout(stream, SYNC_LIMIT_MS)))
        elif command == "close_mem":
            send(rt.ipc_mem_close(key))
            key = None
        elif command == "exit":
            break
        else:
            send("error", "unknown command", command)
    # A went away or said exit: release what is left (importers close first, the vendor's rule).
    rt.synchronize_stream(stream)
    if key is not None:
        rt.ipc_mem_close(key)
    if event:
        rt.destroy_event(event)
    rt.destroy_stream(stream)
    rt.reset_device(device)
    acl.finalize()


if __name__ == "__main__":
    main()
