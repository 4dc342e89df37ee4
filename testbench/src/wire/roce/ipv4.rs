//! IPv4 header without options.

use std::net::Ipv4Addr;

use super::{be16, Result, RoceError};

pub mod field {
    use super::super::Field;
    /// Version(4) IHL(4): 0x45.
    pub const VER_IHL: usize = 0;
    /// DSCP(6) ECN(2). Masked in the ICRC.
    pub const TOS: usize = 1;
    pub const TOTAL_LEN: Field = 2..4;
    pub const IDENT: Field = 4..6;
    /// Reserved(1) DF(1) MF(1) fragment offset(13).
    pub const FLAGS_FRAG: Field = 6..8;
    /// Masked in the ICRC.
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    /// Masked in the ICRC.
    pub const CHECKSUM: Field = 10..12;
    pub const SRC: Field = 12..16;
    pub const DST: Field = 16..20;
}
pub const HEADER_LEN: usize = 20;
pub const PROTOCOL_UDP: u8 = 17;

header_view!(
    /// An IPv4 header (20 bytes).
    Header,
    "IPv4",
    HEADER_LEN
);

/// The Internet checksum (RFC 1071) of `b`: the ones' complement of the
/// ones' complement sum of its 16-bit words.
pub fn checksum(b: &[u8]) -> u16 {
    let mut sum: u32 = b
        .chunks(2)
        .map(|w| be16(&[w[0], w.get(1).copied().unwrap_or(0)]) as u32)
        .sum();
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

impl<T: AsRef<[u8]>> Header<T> {
    pub fn version(&self) -> u8 {
        self.b()[field::VER_IHL] >> 4
    }
    /// Header length in 32-bit words.
    pub fn ihl(&self) -> u8 {
        self.b()[field::VER_IHL] & 0xF
    }
    pub fn dscp(&self) -> u8 {
        self.b()[field::TOS] >> 2
    }
    pub fn ecn(&self) -> u8 {
        self.b()[field::TOS] & 3
    }
    pub fn total_len(&self) -> u16 {
        be16(&self.b()[field::TOTAL_LEN])
    }
    pub fn ident(&self) -> u16 {
        be16(&self.b()[field::IDENT])
    }
    fn flags_frag(&self) -> u16 {
        be16(&self.b()[field::FLAGS_FRAG])
    }
    pub fn reserved_flag(&self) -> bool {
        self.flags_frag() & 0x8000 != 0
    }
    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & 0x4000 != 0
    }
    pub fn more_frags(&self) -> bool {
        self.flags_frag() & 0x2000 != 0
    }
    pub fn frag_offset(&self) -> u16 {
        self.flags_frag() & 0x1FFF
    }
    pub fn ttl(&self) -> u8 {
        self.b()[field::TTL]
    }
    pub fn protocol(&self) -> u8 {
        self.b()[field::PROTOCOL]
    }
    pub fn checksum(&self) -> u16 {
        be16(&self.b()[field::CHECKSUM])
    }
    /// The checksum the header should carry (computed with the field 0).
    pub fn compute_checksum(&self) -> u16 {
        let mut h: [u8; HEADER_LEN] = self.b()[..HEADER_LEN].try_into().unwrap();
        h[field::CHECKSUM].fill(0);
        checksum(&h)
    }
    pub fn src(&self) -> Ipv4Addr {
        <[u8; 4]>::try_from(&self.b()[field::SRC]).unwrap().into()
    }
    pub fn dst(&self) -> Ipv4Addr {
        <[u8; 4]>::try_from(&self.b()[field::DST]).unwrap().into()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub dscp: u8,
    pub ecn: u8,
    pub ident: u16,
    pub dont_frag: bool,
    pub ttl: u8,
}

impl Repr {
    /// Checks version, IHL 5, no fragment, protocol UDP and the checksum.
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        let malformed = |what| RoceError::Malformed {
            layer: "IPv4",
            what,
        };
        if h.version() != 4 {
            return Err(malformed("version is not 4"));
        }
        if h.ihl() != 5 {
            return Err(malformed("IHL is not 5 (options are not supported)"));
        }
        if h.reserved_flag() {
            return Err(malformed("reserved flag set"));
        }
        if h.more_frags() || h.frag_offset() != 0 {
            return Err(malformed("a fragment"));
        }
        if h.protocol() != PROTOCOL_UDP {
            return Err(RoceError::NotRoce {
                what: "IPv4 protocol",
                value: h.protocol() as u32,
            });
        }
        if h.checksum() != h.compute_checksum() {
            return Err(RoceError::BadIpv4Checksum {
                stored: h.checksum(),
                computed: h.compute_checksum(),
            });
        }
        Ok(Repr {
            src: h.src(),
            dst: h.dst(),
            dscp: h.dscp(),
            ecn: h.ecn(),
            ident: h.ident(),
            dont_frag: h.dont_frag(),
            ttl: h.ttl(),
        })
    }
    /// Writes the header for `payload_len` bytes after it, with its checksum.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, payload_len: usize) {
        let b = h.bm();
        b[field::VER_IHL] = 0x45;
        b[field::TOS] = self.dscp << 2 | self.ecn & 3;
        let total = u16::try_from(HEADER_LEN + payload_len).expect("IPv4 packet too long");
        b[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
        b[field::IDENT].copy_from_slice(&self.ident.to_be_bytes());
        let flags: u16 = if self.dont_frag { 0x4000 } else { 0 };
        b[field::FLAGS_FRAG].copy_from_slice(&flags.to_be_bytes());
        b[field::TTL] = self.ttl;
        b[field::PROTOCOL] = PROTOCOL_UDP;
        b[field::SRC].copy_from_slice(&self.src.octets());
        b[field::DST].copy_from_slice(&self.dst.octets());
        let sum = h.compute_checksum();
        h.bm()[field::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The captured CNP's IPv4 header: ToS 0xc2 (DSCP 48, ECN 2), total 60,
    /// ID 0x718c, DF, TTL 64, UDP, checksum 0x9161, 10.0.17.1 -> 10.0.18.1.
    const CNP: [u8; 20] = [
        0x45, 0xC2, 0x00, 0x3C, 0x71, 0x8C, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0A, 0x00, 0x11,
        0x01, 0x0A, 0x00, 0x12, 0x01,
    ];

    fn cnp_repr() -> Repr {
        Repr {
            src: Ipv4Addr::new(10, 0, 17, 1),
            dst: Ipv4Addr::new(10, 0, 18, 1),
            dscp: 48,
            ecn: 2,
            ident: 0x718C,
            dont_frag: true,
            ttl: 64,
        }
    }

    #[test]
    fn header_parses_and_emits() {
        let h = Header::new_checked(&CNP[..]).unwrap();
        assert_eq!((h.version(), h.ihl(), h.total_len()), (4, 5, 60));
        assert_eq!((h.protocol(), h.checksum()), (PROTOCOL_UDP, 0x9161));
        assert_eq!(h.compute_checksum(), 0x9161);
        assert_eq!(Repr::parse(&h), Ok(cnp_repr()));
        let mut b = [0u8; 20];
        cnp_repr().emit(&mut Header::new_unchecked(&mut b[..]), 40);
        assert_eq!(b, CNP);
    }

    #[test]
    fn internet_checksum() {
        // RFC 1071 section 3's example: the sum is ddf2, its complement 220d.
        assert_eq!(
            checksum(&[0x00, 0x01, 0xF2, 0x03, 0xF4, 0xF5, 0xF6, 0xF7]),
            0x220D
        );
        // An odd byte counts as the high byte of a last word.
        assert_eq!(checksum(&[0x01]), 0xFEFF);
        // A header with its checksum in place sums to zero.
        assert_eq!(checksum(&CNP), 0);
    }

    #[test]
    fn parse_refuses_what_roce_does_not_use() {
        let parse = |at: usize, v: u8| {
            let mut b = CNP;
            b[at] = v;
            Repr::parse(&Header::new_unchecked(&b[..])).unwrap_err()
        };
        let malformed = |what| RoceError::Malformed {
            layer: "IPv4",
            what,
        };
        assert_eq!(parse(0, 0x65), malformed("version is not 4"));
        assert_eq!(
            parse(0, 0x46),
            malformed("IHL is not 5 (options are not supported)")
        );
        assert_eq!(parse(6, 0xC0), malformed("reserved flag set"));
        assert_eq!(parse(6, 0x60), malformed("a fragment"));
        assert_eq!(parse(7, 0x01), malformed("a fragment"));
        assert_eq!(
            parse(9, 6),
            RoceError::NotRoce {
                what: "IPv4 protocol",
                value: 6
            }
        );
        assert_eq!(
            parse(11, 0x62),
            RoceError::BadIpv4Checksum {
                stored: 0x9162,
                computed: 0x9161
            }
        );
        assert_eq!(
            Header::new_checked(&CNP[..19]),
            Err(RoceError::Truncated {
                layer: "IPv4",
                len: 19,
                need: 20
            })
        );
    }
}
