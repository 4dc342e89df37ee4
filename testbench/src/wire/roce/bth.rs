//! InfiniBand Base Transport Header.

use super::{be16, be24, put24, Result, RoceError};

pub mod field {
    use super::super::Field;
    pub const OPCODE: usize = 0;
    /// SE(1) M(1) PadCnt(2) TVer(4).
    pub const FLAGS: usize = 1;
    pub const PKEY: Field = 2..4;
    /// FECN(1) BECN(1) reserved(6). Masked in the ICRC.
    pub const FECN_BECN: usize = 4;
    pub const DEST_QP: Field = 5..8;
    /// AckReq(1) reserved(7).
    pub const ACK_REQ: usize = 8;
    pub const PSN: Field = 9..12;
}
pub const HEADER_LEN: usize = 12;

header_view!(
    /// A BTH (12 bytes).
    Header,
    "BTH",
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Header<T> {
    pub fn opcode(&self) -> u8 {
        self.b()[field::OPCODE]
    }
    pub fn se(&self) -> bool {
        self.b()[field::FLAGS] & 0x80 != 0
    }
    pub fn migreq(&self) -> bool {
        self.b()[field::FLAGS] & 0x40 != 0
    }
    pub fn pad_cnt(&self) -> u8 {
        (self.b()[field::FLAGS] >> 4) & 3
    }
    pub fn tver(&self) -> u8 {
        self.b()[field::FLAGS] & 0xF
    }
    pub fn pkey(&self) -> u16 {
        be16(&self.b()[field::PKEY])
    }
    pub fn fecn(&self) -> bool {
        self.b()[field::FECN_BECN] & 0x80 != 0
    }
    pub fn becn(&self) -> bool {
        self.b()[field::FECN_BECN] & 0x40 != 0
    }
    pub fn resv6(&self) -> u8 {
        self.b()[field::FECN_BECN] & 0x3F
    }
    pub fn dest_qp(&self) -> u32 {
        be24(&self.b()[field::DEST_QP])
    }
    pub fn ack_req(&self) -> bool {
        self.b()[field::ACK_REQ] & 0x80 != 0
    }
    pub fn resv7(&self) -> u8 {
        self.b()[field::ACK_REQ] & 0x7F
    }
    pub fn psn(&self) -> u32 {
        be24(&self.b()[field::PSN])
    }
}

/// PadCnt is derived from the payload length, so it is not here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub opcode: u8,
    pub se: bool,
    pub migreq: bool,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// 24 bits.
    pub dest_qp: u32,
    pub ack_req: bool,
    /// 24 bits.
    pub psn: u32,
}

impl Repr {
    /// Checks TVer 0 and the reserved bits 0 (our frames must have them
    /// so; a receiver would ignore the reserved bits).
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        let malformed = |what| RoceError::Malformed { layer: "BTH", what };
        if h.tver() != 0 {
            return Err(malformed("TVer is not 0"));
        }
        if h.resv6() != 0 || h.resv7() != 0 {
            return Err(malformed("reserved bits set"));
        }
        Ok(Repr {
            opcode: h.opcode(),
            se: h.se(),
            migreq: h.migreq(),
            pkey: h.pkey(),
            fecn: h.fecn(),
            becn: h.becn(),
            dest_qp: h.dest_qp(),
            ack_req: h.ack_req(),
            psn: h.psn(),
        })
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, pad_cnt: u8) {
        let b = h.bm();
        b[field::OPCODE] = self.opcode;
        b[field::FLAGS] = (self.se as u8) << 7 | (self.migreq as u8) << 6 | (pad_cnt & 3) << 4;
        b[field::PKEY].copy_from_slice(&self.pkey.to_be_bytes());
        b[field::FECN_BECN] = (self.fecn as u8) << 7 | (self.becn as u8) << 6;
        put24(&mut b[field::DEST_QP], self.dest_qp & 0xFF_FFFF);
        b[field::ACK_REQ] = (self.ack_req as u8) << 7;
        put24(&mut b[field::PSN], self.psn & 0xFF_FFFF);
    }
}

/// PadCnt for a payload of `len` bytes.
pub fn pad_cnt(len: usize) -> u8 {
    ((4 - len % 4) % 4) as u8
}

#[cfg(test)]
mod tests {
    // A BTH Repr with P_Key ffff and every flag clear.
    use super::super::testdata::bth as repr;
    use super::*;

    /// RC RDMA WRITE ONLY with Immediate: SE, PadCnt 3; P_Key ffff; DestQP
    /// 0x123; AckReq; PSN 0x457.
    const WRITE_IMM: [u8; 12] = [
        0x0B, 0xB0, 0xFF, 0xFF, 0x00, 0x00, 0x01, 0x23, 0x80, 0x00, 0x04, 0x57,
    ];
    /// scapy's UC SEND ONLY: M set, PadCnt 2; DestQP 211; PSN 13571856.
    const UC_SEND: [u8; 12] = [
        0x24, 0x60, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0xD3, 0x00, 0xCF, 0x17, 0x10,
    ];
    /// The captured CNP's: BECN set, DestQP 0x118, PSN 0.
    const CNP: [u8; 12] = [
        0x81, 0x00, 0xFF, 0xFF, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn headers_parse_and_emit() {
        for (bytes, pad, want) in [
            (
                WRITE_IMM,
                3,
                Repr {
                    se: true,
                    ack_req: true,
                    ..repr(0x0B, 0x123, 0x457)
                },
            ),
            (
                UC_SEND,
                2,
                Repr {
                    migreq: true,
                    ..repr(0x24, 211, 13_571_856)
                },
            ),
            (
                CNP,
                0,
                Repr {
                    becn: true,
                    ..repr(0x81, 0x118, 0)
                },
            ),
        ] {
            let h = Header::new_checked(&bytes[..]).unwrap();
            assert_eq!((h.pad_cnt(), h.tver()), (pad, 0));
            assert_eq!(Repr::parse(&h), Ok(want));
            let mut b = [0u8; 12];
            want.emit(&mut Header::new_unchecked(&mut b[..]), pad);
            assert_eq!(b, bytes);
        }
    }

    #[test]
    fn fecn_and_24_bit_fields() {
        let r = Repr {
            fecn: true,
            ..repr(0x04, 0xFF_FFFF, 0xFF_FFFF)
        };
        let mut b = [0u8; 12];
        r.emit(&mut Header::new_unchecked(&mut b[..]), 0);
        assert_eq!(
            b,
            [0x04, 0x00, 0xFF, 0xFF, 0x80, 0xFF, 0xFF, 0xFF, 0x00, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(Repr::parse(&Header::new_unchecked(&b[..])), Ok(r));
    }

    #[test]
    fn parse_wants_tver_0_and_reserved_bits_clear() {
        let malformed = |what| Err(RoceError::Malformed { layer: "BTH", what });
        for (at, v, what) in [
            (1, 0x01, "TVer is not 0"),
            (4, 0x20, "reserved bits set"),
            (8, 0x01, "reserved bits set"),
        ] {
            let mut b = CNP;
            b[at] |= v;
            assert_eq!(Repr::parse(&Header::new_unchecked(&b[..])), malformed(what));
        }
        assert_eq!(
            Header::new_checked(&CNP[..11]),
            Err(RoceError::Truncated {
                layer: "BTH",
                len: 11,
                need: 12
            })
        );
    }

    #[test]
    fn pad_to_4_bytes() {
        let pads: Vec<u8> = (0..9).map(pad_cnt).collect();
        assert_eq!(pads, [0, 3, 2, 1, 0, 3, 2, 1, 0]);
    }
}
