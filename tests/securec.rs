//! The secure C functions of `securec.h` (the vendor's libc_sec, which CANN samples call):
//! each error case gives the vendor's code and leaves the destination as documented.

use std::ffi::{CStr, c_char, c_int, c_void};

// Links the library, and with it the C++ object that defines the functions.
use ascendless as _;

unsafe extern "C" {
    fn memset_s(dest: *mut c_void, dest_max: usize, c: c_int, count: usize) -> c_int;
    fn memcpy_s(dest: *mut c_void, dest_max: usize, src: *const c_void, count: usize) -> c_int;
    fn memmove_s(dest: *mut c_void, dest_max: usize, src: *const c_void, count: usize) -> c_int;
    fn strcpy_s(dest: *mut c_char, dest_max: usize, src: *const c_char) -> c_int;
    fn strncpy_s(dest: *mut c_char, dest_max: usize, src: *const c_char, count: usize) -> c_int;
    fn strcat_s(dest: *mut c_char, dest_max: usize, src: *const c_char) -> c_int;
    fn strncat_s(dest: *mut c_char, dest_max: usize, src: *const c_char, count: usize) -> c_int;
    fn sprintf_s(dest: *mut c_char, dest_max: usize, format: *const c_char, ...) -> c_int;
    fn snprintf_s(dest: *mut c_char, dest_max: usize, count: usize, format: *const c_char, ...) -> c_int;
    fn snprintf_truncated_s(dest: *mut c_char, dest_max: usize, format: *const c_char, ...) -> c_int;
    fn strtok_s(token: *mut c_char, delimit: *const c_char, context: *mut *mut c_char) -> *mut c_char;
    fn GetHwSecureCVersion(ver: *mut u16) -> *const c_char;
}

const EOK: c_int = 0;
const EINVAL: c_int = 22;
const EINVAL_AND_RESET: c_int = 150;
const ERANGE: c_int = 34;
const ERANGE_AND_RESET: c_int = 162;
const EOVERLAP_AND_RESET: c_int = 182;

fn text(buf: &[u8]) -> &str {
    CStr::from_bytes_until_nul(buf).unwrap().to_str().unwrap()
}

#[test]
fn memset_s_fills_up_to_dest_max() {
    let mut buf = [1u8; 8];
    // SAFETY: pointers are to live local buffers of the sizes passed, or NULL where the test
    // checks the NULL case (so in every test below).
    unsafe {
        assert_eq!(memset_s(buf.as_mut_ptr().cast(), 8, 7, 4), EOK);
        assert_eq!(buf, [7, 7, 7, 7, 1, 1, 1, 1]);
        assert_eq!(memset_s(buf.as_mut_ptr().cast(), 8, 9, 20), ERANGE_AND_RESET);
        assert_eq!(buf, [9; 8]);
        assert_eq!(memset_s(buf.as_mut_ptr().cast(), 0, 9, 1), ERANGE);
        assert_eq!(memset_s(std::ptr::null_mut(), 8, 9, 1), EINVAL);
        assert_eq!(memset_s(buf.as_mut_ptr().cast(), 0x8000_0000, 9, 1), ERANGE);
    }
}

#[test]
fn memcpy_s_clears_the_destination_on_each_violation() {
    let src = *b"abcdefgh";
    let mut buf = [b'x'; 8];
    // SAFETY: as above, live local buffers of the sizes passed, or NULL on purpose.
    unsafe {
        assert_eq!(memcpy_s(buf.as_mut_ptr().cast(), 8, src.as_ptr().cast(), 8), EOK);
        assert_eq!(&buf, b"abcdefgh");
        assert_eq!(memcpy_s(buf.as_mut_ptr().cast(), 4, src.as_ptr().cast(), 8), ERANGE_AND_RESET);
        assert_eq!(&buf[..4], &[0; 4]);
        buf = [b'x'; 8];
        assert_eq!(memcpy_s(buf.as_mut_ptr().cast(), 8, std::ptr::null(), 1), EINVAL_AND_RESET);
        assert_eq!(buf, [0; 8]);
        buf = *b"abcdefgh";
        let p = buf.as_mut_ptr();
        assert_eq!(memcpy_s(p.cast(), 8, p.add(2).cast(), 4), EOVERLAP_AND_RESET);
        assert_eq!(buf, [0; 8]);
        buf = *b"abcdefgh";
        let p = buf.as_mut_ptr();
        assert_eq!(memmove_s(p.cast(), 8, p.add(2).cast(), 4), EOK);
        assert_eq!(&buf, b"cdefefgh");
    }
}

#[test]
fn string_copies_and_appends_check_the_room_for_the_terminator() {
    let mut buf = [b'x'; 6];
    // SAFETY: as above, live local buffers of the sizes passed, or NULL on purpose.
    unsafe {
        assert_eq!(strcpy_s(buf.as_mut_ptr().cast(), 6, c"hello".as_ptr()), EOK);
        assert_eq!(text(&buf), "hello");
        assert_eq!(strcpy_s(buf.as_mut_ptr().cast(), 6, c"hello!".as_ptr()), ERANGE_AND_RESET);
        assert_eq!(text(&buf), "");
        assert_eq!(strcpy_s(buf.as_mut_ptr().cast(), 6, std::ptr::null()), EINVAL_AND_RESET);
        assert_eq!(strncpy_s(buf.as_mut_ptr().cast(), 6, c"hello world".as_ptr(), 3), EOK);
        assert_eq!(text(&buf), "hel");
        assert_eq!(strcat_s(buf.as_mut_ptr().cast(), 6, c"lo".as_ptr()), EOK);
        assert_eq!(text(&buf), "hello");
        assert_eq!(strcat_s(buf.as_mut_ptr().cast(), 6, c"!".as_ptr()), ERANGE_AND_RESET);
        assert_eq!(text(&buf), "");
        assert_eq!(strncat_s(buf.as_mut_ptr().cast(), 6, c"abcdef".as_ptr(), 2), EOK);
        assert_eq!(text(&buf), "ab");
        let mut unterminated = [b'x'; 4];
        assert_eq!(strcat_s(unterminated.as_mut_ptr().cast(), 4, c"a".as_ptr()), EINVAL_AND_RESET);
        assert_eq!(unterminated[0], 0);
    }
}

#[test]
fn the_printf_family_reports_what_does_not_fit() {
    let mut buf = [b'x'; 8];
    // SAFETY: as above, live local buffers of the sizes passed, or NULL on purpose.
    unsafe {
        assert_eq!(sprintf_s(buf.as_mut_ptr().cast(), 8, c"%d-%s".as_ptr(), 42 as c_int, c"ab".as_ptr()), 5);
        assert_eq!(text(&buf), "42-ab");
        assert_eq!(sprintf_s(buf.as_mut_ptr().cast(), 8, c"%s".as_ptr(), c"too long".as_ptr()), -1);
        assert_eq!(text(&buf), "");
        // count < destMax: truncated to count characters, reported as -1.
        assert_eq!(snprintf_s(buf.as_mut_ptr().cast(), 8, 3, c"%s".as_ptr(), c"abcdef".as_ptr()), -1);
        assert_eq!(text(&buf), "abc");
        assert_eq!(snprintf_s(buf.as_mut_ptr().cast(), 8, 7, c"%s".as_ptr(), c"abc".as_ptr()), 3);
        assert_eq!(
            snprintf_truncated_s(buf.as_mut_ptr().cast(), 8, c"%s".as_ptr(), c"0123456789".as_ptr()),
            7
        );
        assert_eq!(text(&buf), "0123456");
        assert_eq!(sprintf_s(buf.as_mut_ptr().cast(), 8, std::ptr::null()), -1);
        assert_eq!(text(&buf), "");
    }
}

#[test]
fn strtok_s_splits_and_rejects_null_arguments() {
    let mut s = *b"a,b,,c\0";
    let mut ctx: *mut c_char = std::ptr::null_mut();
    let mut parts = Vec::new();
    // SAFETY: as above, live local buffers of the sizes passed, or NULL on purpose.
    unsafe {
        let mut tok = strtok_s(s.as_mut_ptr().cast(), c",".as_ptr(), &mut ctx);
        while !tok.is_null() {
            parts.push(CStr::from_ptr(tok).to_str().unwrap().to_owned());
            tok = strtok_s(std::ptr::null_mut(), c",".as_ptr(), &mut ctx);
        }
        assert!(strtok_s(s.as_mut_ptr().cast(), std::ptr::null(), &mut ctx).is_null());
        let mut ver = 0u16;
        assert!(!GetHwSecureCVersion(&mut ver).is_null());
        assert_ne!(ver, 0);
    }
    assert_eq!(parts, ["a", "b", "c"]);
}
