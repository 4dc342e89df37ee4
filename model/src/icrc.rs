//! The RoCEv2 invariant CRC (docs/protocol.md section 1) as plain functions, for the
//! model, the testbench's frame checks and anyone else who needs it.
//!
//! ICRC = CRC-32 (reflected polynomial 0xEDB88320, initial value all ones,
//! final XOR all ones, as Ethernet/zlib) over 8 bytes of 0xFF, then the frame
//! from the IP header up to the ICRC, with the variant fields (IPv4 DSCP+ECN,
//! TTL, header checksum; IPv6 traffic class, flow label, hop limit; UDP
//! checksum; BTH byte 4) read as all ones. It is sent least significant byte
//! first.

/// Reflected CRC-32 polynomial (Ethernet, zlib).
pub const POLY: u32 = 0xEDB8_8320;

const fn make_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut b = 0;
        while b < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            b += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}

static TABLE: [u32; 256] = make_table();

/// The CRC register after `bytes`, starting from `state`, with no initial
/// or final inversion (the "raw" update). The hardware runs this 64 bytes
/// per cycle; the usual CRC-32 is `!crc32_raw(!0, bytes)`.
pub fn crc32_raw(state: u32, bytes: &[u8]) -> u32 {
    let mut c = state;
    for &b in bytes {
        c = TABLE[((c ^ b as u32) & 0xFF) as usize] ^ (c >> 8);
    }
    c
}

/// Plain CRC-32 (zlib's `crc32`).
pub fn crc32(bytes: &[u8]) -> u32 {
    !crc32_raw(!0, bytes)
}

/// Where the ICRC-covered part of an Ethernet frame starts (the IP header)
/// and which of its bytes are masked, given the frame up to (not including)
/// the ICRC. `None` when the frame is neither IPv4 nor IPv6 (with or without
/// one 802.1Q tag) or too short for its headers.
fn layout(frame: &[u8]) -> Option<(usize, Vec<usize>)> {
    let mut e = 14;
    let mut etype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    if etype == 0x8100 {
        etype = u16::from_be_bytes([*frame.get(16)?, *frame.get(17)?]);
        e = 18;
    }
    let (ip_len, mut masked) = match etype {
        0x0800 => (20, vec![e + 1, e + 8, e + 10, e + 11]),
        // Version/traffic class/flow label are bytes 0..4 (the version
        // nibble stays: see `masked_byte`), hop limit byte 7.
        0x86DD => (40, vec![e, e + 1, e + 2, e + 3, e + 7]),
        _ => return None,
    };
    let u = e + ip_len;
    masked.extend([u + 6, u + 7, u + 8 + 4]);
    if frame.len() < u + 8 + 12 {
        return None;
    }
    Some((e, masked))
}

/// Byte `i` of `frame` as the ICRC sees it.
fn masked_byte(frame: &[u8], i: usize, e: usize, masked: &[usize]) -> u8 {
    if !masked.contains(&i) {
        frame[i]
    } else if i == e && frame[e] >> 4 == 6 {
        // IPv6 byte 0: the version nibble is covered, the traffic class's
        // upper nibble is masked.
        0x6F
    } else {
        0xFF
    }
}

/// ICRC of a RoCEv2 frame given without its ICRC (Ethernet header first).
/// The frame is sent with `icrc(..).to_le_bytes()` appended.
pub fn icrc(frame_without_icrc: &[u8]) -> Option<u32> {
    let f = frame_without_icrc;
    let (e, masked) = layout(f)?;
    let mut c = crc32_raw(!0, &[0xFF; 8]);
    for i in e..f.len() {
        c = crc32_raw(c, &[masked_byte(f, i, e, &masked)]);
    }
    Some(!c)
}

/// Whether a whole frame (ICRC as its last four bytes) carries a valid ICRC.
pub fn icrc_ok(frame: &[u8]) -> bool {
    if frame.len() < 4 {
        return false;
    }
    let (body, tail) = frame.split_at(frame.len() - 4);
    icrc(body) == Some(u32::from_le_bytes(tail.try_into().unwrap()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_check_value() {
        // The CRC-32 catalogue's check value for "123456789".
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    }

    /// A CNP captured from ConnectX-4 Lx hardware (scapy's
    /// test/contrib/roce.uts, "RoCE CNP captured on ConnectX-4 Lx"):
    /// IPv4 with ToS 0xC2 and TTL 64, UDP source port 0, BTH opcode 0x81
    /// with BECN, DestQP 0x118, 16 zero bytes, ICRC 82 fd 00 2a on the wire.
    const CNP: &str = "e41d2dab2bc2 7cfe90643b32 0800 45c2 003c 718c 4000 4011 9161
                       0a001101 0a001201 0000 12b7 0028 0000 8100ffff 40000118 00000000
                       00000000000000000000000000000000 82fd002a";

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn captured_connectx_cnp_verifies() {
        let f = hex(CNP);
        assert_eq!(f.len(), 74);
        assert_eq!(icrc(&f[..70]), Some(0x2A00_FD82));
        assert!(icrc_ok(&f));
    }

    #[test]
    fn covered_bytes_break_the_icrc_masked_ones_do_not() {
        let f = hex(CNP);
        // Covered: IP total length, ID, source address, UDP port, BTH
        // opcode, DestQP, the pad, and the ICRC itself.
        for i in [16, 18, 26, 35, 42, 47, 55, 73] {
            let mut g = f.clone();
            g[i] ^= 0x10;
            assert!(!icrc_ok(&g), "byte {i} changed, ICRC still good");
        }
        // Masked (variant) fields: ToS, TTL, IP checksum, UDP checksum,
        // FECN/BECN byte; and the Ethernet header is not covered at all.
        for i in [15, 22, 24, 25, 40, 41, 46, 0, 6, 12] {
            let mut g = f.clone();
            g[i] ^= 0x10;
            if i == 12 {
                continue; // EtherType decides the layout.
            }
            assert!(icrc_ok(&g), "byte {i} changed, ICRC broken");
        }
    }

    #[test]
    fn initial_ones_equal_complemented_first_word() {
        // What the hardware relies on: starting from all ones is the same as
        // starting from zero with the first four message bytes complemented,
        // and leading zero bytes do not move a zero register.
        let msg = [0xFFu8, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x45, 0x12];
        let mut alt = msg;
        for b in &mut alt[..4] {
            *b = !*b;
        }
        let mut padded = vec![0u8; 37];
        padded.extend_from_slice(&alt);
        assert_eq!(crc32_raw(!0, &msg), crc32_raw(0, &padded));
    }
}
