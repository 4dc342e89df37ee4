//! The invariant CRC that ends every RoCEv2 packet.

use super::{bth, ipv4, ipv6, udp};

pub const ICRC_LEN: usize = 4;

/// The ICRC of an IP packet (IP header to the last pad byte, without the
/// ICRC): CRC-32 (zlib's) over 8 bytes of 0xFF then the packet, with the
/// fields that routers may change replaced by ones. The value is the CRC
/// register; it goes on the wire least significant byte first.
///
/// `ip` must hold at least the IP, UDP and BTH headers.
pub fn icrc(ip: &[u8], ipv6: bool) -> u32 {
    let ip_len = if ipv6 {
        ipv6::HEADER_LEN
    } else {
        ipv4::HEADER_LEN
    };
    let udp = ip_len;
    let bth = udp + udp::HEADER_LEN;
    let mut head = ip[..bth + bth::HEADER_LEN].to_vec();
    if ipv6 {
        // Traffic class and flow label: all of the first word but the version.
        let w = ipv6::field::VER_TC_FLOW;
        head[w.start] |= 0x0F;
        head[w.start + 1..w.end].fill(0xFF);
        head[ipv6::field::HOP_LIMIT] = 0xFF;
    } else {
        head[ipv4::field::TOS] = 0xFF;
        head[ipv4::field::TTL] = 0xFF;
        head[ipv4::field::CHECKSUM].fill(0xFF);
    }
    let c = udp::field::CHECKSUM;
    head[udp + c.start..udp + c.end].fill(0xFF);
    head[bth + bth::field::FECN_BECN] = 0xFF;

    let mut h = crc32fast::Hasher::new();
    h.update(&[0xFF; 8]);
    h.update(&head);
    h.update(&ip[head.len()..]);
    h.finalize()
}

#[cfg(test)]
mod tests {
    use super::super::testdata::{hex, CNP_CX4, WRITE_IMM_V6};
    use super::super::{RoceFrame, RoceRepr};
    use super::*;

    #[test]
    fn icrc_of_literal_packets() {
        // The captured CNP: the IP packet is bytes 14..70, its ICRC the last
        // four, least significant byte first.
        let b = hex(CNP_CX4);
        assert_eq!(icrc(&b[14..70], false), 0x2A00_FD82);
        assert_eq!(b[70..], 0x2A00_FD82u32.to_le_bytes());
        // The tagged IPv6 WRITE: the IP packet is bytes 18..106.
        let b = hex(WRITE_IMM_V6);
        assert_eq!(icrc(&b[18..106], true), 0x0DFC_E7D6);
        assert_eq!(b[106..], [0xD6, 0xE7, 0xFC, 0x0D]);
    }

    /// Which bits of the frame the ICRC does not cover: Ethernet (and tag), and
    /// the masked fields, at offsets worked out by hand for each frame.
    fn uncovered(frame: &str, i: usize, bit: u8) -> bool {
        let masked: &[(usize, u8)] = match frame {
            // Ethernet 0..14; ToS 15, TTL 22, checksum 24-25; UDP checksum
            // 40-41; BTH byte 4 at 42+4.
            "v4" => &[
                (15, 0xFF),
                (22, 0xFF),
                (24, 0xFF),
                (25, 0xFF),
                (40, 0xFF),
                (41, 0xFF),
                (46, 0xFF),
            ],
            // Ethernet+tag 0..18; IPv6 at 18: low nibble of 18, 19-21, hop
            // limit 25; UDP at 58: checksum 64-65; BTH at 66: byte 70.
            "v6" => &[
                (18, 0x0F),
                (19, 0xFF),
                (20, 0xFF),
                (21, 0xFF),
                (25, 0xFF),
                (64, 0xFF),
                (65, 0xFF),
                (70, 0xFF),
            ],
            _ => unreachable!(),
        };
        let eth = if frame == "v4" { 14 } else { 18 };
        i < eth || masked.iter().any(|&(at, m)| at == i && m & bit != 0)
    }

    #[test]
    fn every_covered_bit_fails_the_icrc_and_no_masked_bit_does() {
        for (name, text) in [("v4", CNP_CX4), ("v6", WRITE_IMM_V6)] {
            let good = hex(text);
            let (mut covered, mut masked) = (0, 0);
            for i in 0..good.len() {
                for k in 0..8 {
                    let bit = 1u8 << k;
                    let mut b = good.clone();
                    b[i] ^= bit;
                    let f = RoceFrame::new_unchecked(&b[..]);
                    let ok = f.icrc() == f.compute_icrc();
                    // The EtherType/TPID decide the offsets: skip flips there.
                    let eth_type = if name == "v4" { 12..14 } else { 12..18 };
                    if eth_type.contains(&i) {
                        continue;
                    }
                    if uncovered(name, i, bit) {
                        assert!(ok, "{name}: byte {i} bit {k} is not covered");
                        masked += 1;
                    } else {
                        assert!(!ok, "{name}: byte {i} bit {k} is covered");
                        assert!(RoceRepr::parse_bytes(&b).is_err());
                        covered += 1;
                    }
                }
            }
            assert!(covered > 400 && masked > 50, "{name}: {covered} {masked}");
        }
    }
}
