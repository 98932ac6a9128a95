# shellcheck shell=bash
# Sourced by the examples' run scripts.
# A port nothing listens on (a connection attempt to it is refused), below the kernel's range of
# ports for outgoing connections, which on a busy host may take a port inside it first.
free_port() {
    local lo=32768 span p
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    span=$((lo - 20000))
    [ "$span" -ge 1000 ] || span=30000
    for _ in $(seq 100); do
        p=$((20000 + RANDOM % span))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
    done
    return 1
}
