# shellcheck shell=bash
# Sourced by the examples' run scripts and by tests/lib.sh.
# free_port [TAKEN...]: a TCP port on 127.0.0.1 that nothing listens on and that is not one of
# TAKEN, below the kernel's range of ports for outgoing connections. Inside that range, outgoing
# connections hold ports (thousands, on a busy host), and one can take a port between the choice
# and the program's bind: "Address already in use". Below it, only listeners do, and those refuse
# no connection. Two ports chosen for one run are chosen apart (`b=$(free_port "$a")`): nothing
# listens on either until the programs start, so the probe alone cannot tell them apart. (The
# Rust tests do the same: tests/common/ports.rs.)
free_port() {
    local lo=32768 base=20000 span p
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    span=$((lo - base))
    [ "$span" -ge 1000 ] || span=30000 # a range starting low: no room below it, try anywhere
    for _ in $(seq 100); do
        p=$((base + RANDOM % span))
        case " $* " in *" $p "*) continue ;; esac
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    echo "no free port on 127.0.0.1" >&2
    return 1
}
