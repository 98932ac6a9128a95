//! The signature of a subscription record (`ProfOpDesc.signature`): the vendor's checksum over
//! the rest of the record, a CRC-32C (Castagnoli, reflected) that starts at !0 and is not
//! inverted at the end (hicann/runtime `Utils::GenerateSignature`).

const fn table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { 0x82F6_3B78 ^ (c >> 1) } else { c >> 1 };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static TABLE: [u32; 256] = table();

pub fn signature(data: &[u8]) -> u32 {
    data.iter().fold(!0u32, |s, &b| TABLE[((s ^ u32::from(b)) & 0xff) as usize] ^ (s >> 8))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_is_the_vendors() {
        // The first entries of the vendor's SIGNATURE_TABLE.
        assert_eq!(&super::TABLE[..4], &[0x0000_0000, 0xF26B_8303, 0xE13B_70F7, 0x1350_F3F4]);
        assert_eq!(super::signature(&[]), !0);
    }
}
