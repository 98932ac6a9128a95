//! Raw peers of an engine's same-host socket: the socket only welcomes a process that presents
//! the one-time ticket of a HELLO_ACK issued to its pid, so a raw peer gets one first with a
//! HELLO of its own over TCP.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use ascendless::engine::wire::{Host, Message, TICKET_LEN};

/// The TICKET packet (40 bytes, kind 5, the ticket in bytes 8..24) that a raw HELLO announcing
/// `pid` on this host gets from the engine listening at `server`.
pub fn ticket_packet(server: SocketAddr, pid: u32) -> [u8; 40] {
    let boot_id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap().trim().to_owned();
    let host = Host { pid, boot_id, ticket: [0; TICKET_LEN] };
    let mut raw = TcpStream::connect(server).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    raw.write_all(&Message::Hello { name: "127.0.0.1".into(), regions: vec![], host: Some(host) }.encode())
        .unwrap();
    let Ok(Message::HelloAck { status: 0, host: Some(h), .. }) = Message::read_from(&mut raw) else {
        panic!("no HELLO_ACK with a host from {server}")
    };
    assert_ne!(h.ticket, [0; TICKET_LEN], "{server} issued no ticket");
    let mut packet = [0u8; 40];
    packet[..4].copy_from_slice(&5u32.to_le_bytes());
    packet[8..8 + TICKET_LEN].copy_from_slice(&h.ticket);
    packet[32..].copy_from_slice(&u64::MAX.to_le_bytes());
    packet
}
