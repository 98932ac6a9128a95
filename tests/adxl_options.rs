//! Initialize's options through the native C API (the function both C++ faces, `adxl::AdxlEngine`
//! and `hixl::Hixl`, pass their option maps to): Mooncake's exact maps are taken and the
//! engines then move bytes; bad configurations are PARAM_INVALID with a message naming the key.

use std::ffi::{CStr, CString, c_void};
use std::ptr::null_mut;

use ascendless::error::engine_status::*;
use ascendless::ffi::engine::*;

#[path = "common/ports.rs"]
mod ports;

fn last_error() -> String {
    let p = ascendless_last_error();
    assert!(!p.is_null(), "no message was left");
    // SAFETY: the library returns a NUL-terminated string valid until this thread's next read.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

struct Engine(AscendlessEngine);

impl Engine {
    fn new() -> Engine {
        let mut e = null_mut();
        // SAFETY: a valid out-pointer.
        assert_eq!(unsafe { ascendless_engine_create(&mut e) }, ADXL_SUCCESS);
        Engine(e)
    }

    /// Initialize with `options` in the order a C++ `std::map` hands them over (sorted).
    fn initialize(&self, name: &str, options: &[(&str, &str)]) -> u32 {
        let mut sorted = options.to_vec();
        sorted.sort();
        let keys: Vec<CString> = sorted.iter().map(|(k, _)| CString::new(*k).unwrap()).collect();
        let values: Vec<CString> = sorted.iter().map(|(_, v)| CString::new(*v).unwrap()).collect();
        let kp: Vec<_> = keys.iter().map(|k| k.as_ptr()).collect();
        let vp: Vec<_> = values.iter().map(|v| v.as_ptr()).collect();
        let name = CString::new(name).unwrap();
        // SAFETY: NUL-terminated strings and two arrays of `len` of them, alive for the call.
        unsafe { ascendless_engine_initialize(self.0, name.as_ptr(), kp.as_ptr(), vp.as_ptr(), kp.len()) }
    }

    fn register(&self, buf: &mut [u8]) {
        let mut handle = null_mut::<c_void>();
        // SAFETY: the buffer outlives the engine's use of it (deregistered by finalize first).
        let st = unsafe {
            ascendless_engine_register_mem(self.0, buf.as_mut_ptr() as usize, buf.len(), 1, &mut handle)
        };
        assert_eq!(st, ADXL_SUCCESS, "{}", last_error());
    }

    fn transfer(&self, remote: &str, op: i32, local: &mut [u8], remote_addr: usize) -> u32 {
        let desc =
            AscendlessTransferDesc { local_addr: local.as_mut_ptr() as usize, remote_addr, len: local.len() };
        let remote = CString::new(remote).unwrap();
        // SAFETY: one descriptor over registered memory of both engines.
        unsafe { ascendless_engine_transfer_sync(self.0, remote.as_ptr(), op, &desc, 1, 5000) }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        ascendless_engine_finalize(self.0);
        ascendless_engine_destroy(self.0);
    }
}

const READ: i32 = 0;
const WRITE: i32 = 1;

/// What Mooncake's TransferExecutorBase::initializeEngines may put in the map, by environment.
fn mooncake_maps() -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    vec![
        ("no variables", vec![("AutoConnect", "0"), ("adxl.BufferPool", "0:0")]),
        (
            "HCCL_RDMA_TC/SL, ASCEND_BUFFER_POOL, auto connect",
            vec![
                ("adxl.RdmaTrafficClass", "132"),
                ("adxl.RdmaServiceLevel", "4"),
                ("AutoConnect", "1"),
                ("adxl.BufferPool", "4:8"),
            ],
        ),
        (
            "client-server mode and ASCEND_GLOBAL_RESOURCE_CONFIG",
            vec![
                ("adxl.LocalCommRes", r#"{"version":"1.3"}"#),
                ("AutoConnect", "1"),
                ("adxl.BufferPool", "0:0"),
                (
                    "GlobalResourceConfig",
                    r#"{"connect_pool.thread_num":"4","connect_pool.task_queue_capacity":"256","comm_resource_config.protocol_desc":["roce:device","hccs:device"],"channel_pool.max_channel":"256","channel_pool.high_waterline":"0.8","channel_pool.low_waterline":"0.6"}"#,
                ),
            ],
        ),
        (
            "fabric memory (ASCEND_GLOBAL_RESOURCE_CONFIG with fabric_memory)",
            vec![
                ("AutoConnect", "1"),
                ("adxl.BufferPool", "0:0"),
                ("EnableUseFabricMem", "1"),
                (
                    "GlobalResourceConfig",
                    r#"{"fabric_memory":{"max_capacity":"32","start_address":"40"},"fabric_memory.task_stream_num":"1","comm_resource_config.listen_port":16666}"#,
                ),
            ],
        ),
    ]
}

#[test]
fn mooncakes_option_maps_are_taken_and_engines_transfer() {
    for (what, options) in mooncake_maps() {
        let server_name = format!("127.0.0.1:{}", ports::free_port());
        let (server, client) = (Engine::new(), Engine::new());
        assert_eq!(server.initialize(&server_name, &options), ADXL_SUCCESS, "{what}: {}", last_error());
        assert_eq!(client.initialize("127.0.0.1", &options), ADXL_SUCCESS, "{what}: {}", last_error());
        let mut remote = vec![0u8; 1 << 16];
        let mut local: Vec<u8> = (0..1 << 16).map(|i| (i * 7 + 3) as u8).collect();
        let mut back = vec![0u8; 1 << 16];
        server.register(&mut remote);
        client.register(&mut local);
        client.register(&mut back);
        let name = CString::new(server_name.as_str()).unwrap();
        // SAFETY: a NUL-terminated name.
        let connected = unsafe { ascendless_engine_connect(client.0, name.as_ptr(), 3000) };
        assert_eq!(connected, ADXL_SUCCESS, "{what}: {}", last_error());
        let remote_addr = remote.as_ptr() as usize;
        assert_eq!(
            client.transfer(&server_name, WRITE, &mut local, remote_addr),
            ADXL_SUCCESS,
            "{what}: {}",
            last_error()
        );
        assert_eq!(
            client.transfer(&server_name, READ, &mut back, remote_addr),
            ADXL_SUCCESS,
            "{what}: {}",
            last_error()
        );
        assert_eq!(back, local, "{what}");
        if options.contains(&("EnableUseFabricMem", "1")) {
            // Mooncake's fabric mode sends transfers between two buffers of one process through
            // the engine to itself (no local copy engine).
            let mut own = vec![0u8; 1 << 16];
            server.register(&mut own);
            let own_addr = own.as_ptr() as usize;
            let mut src = local.clone();
            server.register(&mut src);
            assert_eq!(
                server.transfer(&server_name, WRITE, &mut src, own_addr),
                ADXL_SUCCESS,
                "{what}: {}",
                last_error()
            );
            assert_eq!(own, local, "{what}: to itself");
        }
    }
}

#[test]
fn bad_configurations_are_param_invalid_naming_the_key() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        (&[("GlobalResourceConfig", r#"{"connect_pool.thread_num":"0"}"#)], "connect_pool.thread_num"),
        (&[("GlobalResourceConfig", r#"{"connect_pool.task_queue_capacity":70000}"#)], "[1, 65535]"),
        (&[("GlobalResourceConfig", "not json")], "GlobalResourceConfig"),
        (
            &[("GlobalResourceConfig", r#"{"comm_resource_config.protocol_desc":"rdma:nic"}"#)],
            "protocol_desc",
        ),
        (&[("GlobalResourceConfig", r#"{"channel_pool.max_channel":"64"}"#)], "waterline"),
        (&[("EnableUseFabricMem", "1"), ("adxl.BufferPool", "4:8")], "EnableUseFabricMem=1"),
        (&[("EnableUseFabricMem", "yes")], "EnableUseFabricMem"),
        (&[("adxl.LocalCommRes", r#"{"version":"2"}"#)], "version"),
        (&[("RdmaTrafficClass", "130")], "multiple of 4"),
        (&[("adxl.RdmaServiceLevel", "8")], "0..=7"),
        (&[("hixl.BufferPool", "0:0")], "unknown option"),
    ];
    for (options, needle) in cases {
        let e = Engine::new();
        assert_eq!(e.initialize("127.0.0.1", options), ADXL_PARAM_INVALID, "{options:?}");
        let message = last_error();
        assert!(message.contains(needle), "{options:?}: {message}");
    }
}
