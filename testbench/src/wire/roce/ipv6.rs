//! IPv6 header without extension headers.

use std::net::Ipv6Addr;

use super::{be16, Result, RoceError};

pub mod field {
    use super::super::Field;
    /// Version(4) traffic class(8) flow label(20). All but the version
    /// are masked in the ICRC.
    pub const VER_TC_FLOW: Field = 0..4;
    pub const PAYLOAD_LEN: Field = 4..6;
    pub const NEXT_HEADER: usize = 6;
    /// Masked in the ICRC.
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: Field = 8..24;
    pub const DST: Field = 24..40;
}
pub const HEADER_LEN: usize = 40;

header_view!(
    /// An IPv6 header (40 bytes).
    Header,
    "IPv6",
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Header<T> {
    fn first_word(&self) -> u32 {
        super::be32(&self.b()[field::VER_TC_FLOW])
    }
    pub fn version(&self) -> u8 {
        (self.first_word() >> 28) as u8
    }
    pub fn traffic_class(&self) -> u8 {
        (self.first_word() >> 20) as u8
    }
    pub fn flow_label(&self) -> u32 {
        self.first_word() & 0xF_FFFF
    }
    pub fn payload_len(&self) -> u16 {
        be16(&self.b()[field::PAYLOAD_LEN])
    }
    pub fn next_header(&self) -> u8 {
        self.b()[field::NEXT_HEADER]
    }
    pub fn hop_limit(&self) -> u8 {
        self.b()[field::HOP_LIMIT]
    }
    pub fn src(&self) -> Ipv6Addr {
        <[u8; 16]>::try_from(&self.b()[field::SRC]).unwrap().into()
    }
    pub fn dst(&self) -> Ipv6Addr {
        <[u8; 16]>::try_from(&self.b()[field::DST]).unwrap().into()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    /// The traffic class is DSCP(6) ECN(2), as in IPv4.
    pub dscp: u8,
    pub ecn: u8,
    pub flow_label: u32,
    pub hop_limit: u8,
}

impl Repr {
    /// Checks the version and that UDP follows directly.
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        if h.version() != 6 {
            return Err(RoceError::Malformed {
                layer: "IPv6",
                what: "version is not 6",
            });
        }
        if h.next_header() != super::ipv4::PROTOCOL_UDP {
            return Err(RoceError::NotRoce {
                what: "IPv6 next header",
                value: h.next_header() as u32,
            });
        }
        Ok(Repr {
            src: h.src(),
            dst: h.dst(),
            dscp: h.traffic_class() >> 2,
            ecn: h.traffic_class() & 3,
            flow_label: h.flow_label(),
            hop_limit: h.hop_limit(),
        })
    }
    /// Writes the header for `payload_len` bytes after it.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, payload_len: usize) {
        let b = h.bm();
        let tc = (self.dscp << 2 | self.ecn & 3) as u32;
        let w = 6 << 28 | tc << 20 | self.flow_label & 0xF_FFFF;
        b[field::VER_TC_FLOW].copy_from_slice(&w.to_be_bytes());
        let len = u16::try_from(payload_len).expect("IPv6 payload too long");
        b[field::PAYLOAD_LEN].copy_from_slice(&len.to_be_bytes());
        b[field::NEXT_HEADER] = super::ipv4::PROTOCOL_UDP;
        b[field::HOP_LIMIT] = self.hop_limit;
        b[field::SRC].copy_from_slice(&self.src.octets());
        b[field::DST].copy_from_slice(&self.dst.octets());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Version 6, traffic class 0x6a (DSCP 26, ECN 2), flow label 0x12345,
    /// payload length 52, next header UDP, hop limit 64, fd00::1 -> fd00::2.
    const HEADER: [u8; 40] = [
        0x66, 0xA1, 0x23, 0x45, 0x00, 0x34, 0x11, 0x40, //
        0xFD, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, //
        0xFD, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, //
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
    ];

    fn repr() -> Repr {
        Repr {
            src: "fd00::1".parse().unwrap(),
            dst: "fd00::2".parse().unwrap(),
            dscp: 26,
            ecn: 2,
            flow_label: 0x12345,
            hop_limit: 64,
        }
    }

    #[test]
    fn header_parses_and_emits() {
        let h = Header::new_checked(&HEADER[..]).unwrap();
        assert_eq!((h.version(), h.traffic_class()), (6, 0x6A));
        assert_eq!((h.flow_label(), h.payload_len()), (0x12345, 52));
        assert_eq!((h.next_header(), h.hop_limit()), (17, 64));
        assert_eq!(Repr::parse(&h), Ok(repr()));
        let mut b = [0u8; 40];
        repr().emit(&mut Header::new_unchecked(&mut b[..]), 52);
        assert_eq!(b, HEADER);
    }

    #[test]
    fn parse_refuses_other_versions_and_extension_headers() {
        let mut b = HEADER;
        b[0] = 0x46;
        assert_eq!(
            Repr::parse(&Header::new_unchecked(&b[..])),
            Err(RoceError::Malformed {
                layer: "IPv6",
                what: "version is not 6"
            })
        );
        let mut b = HEADER;
        b[6] = 0; // hop-by-hop options
        assert_eq!(
            Repr::parse(&Header::new_unchecked(&b[..])),
            Err(RoceError::NotRoce {
                what: "IPv6 next header",
                value: 0
            })
        );
        assert_eq!(
            Header::new_checked(&HEADER[..39]),
            Err(RoceError::Truncated {
                layer: "IPv6",
                len: 39,
                need: 40
            })
        );
    }
}
