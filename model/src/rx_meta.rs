//! Request metadata: the header fields `rx_parser` hands on with every kept
//! frame (`rx_parser` -> `rx_buf` -> `responder`). The layout is
//! docs/responder.md, "Request metadata"; the RTL's home for it is
//! `hw/rtl/rx_meta_pkg.sv`. Fields a packet does not carry are zero.

use crate::ports::PortValue;

/// Bits of the metadata.
pub const META_W: u32 = 256;

/// The 256 metadata bits as four little-endian 64-bit words (bit `i` is bit
/// `i % 64` of word `i / 64`): the port value of `vd_meta` / `hd_meta`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MetaBits(pub [u64; 4]);

impl PortValue for MetaBits {
    const BITS: u32 = 256;
    fn to_words(&self, out: &mut [u64]) {
        out[..4].copy_from_slice(&self.0);
    }
    fn from_words(words: &[u64]) -> Self {
        MetaBits([words[0], words[1], words[2], words[3]])
    }
}

impl crate::trace::TraceValue for MetaBits {
    fn put(&self, w: u32, b: &mut crate::trace::Bits) {
        let mut left = w;
        for x in self.0 {
            let n = left.min(64);
            b.push(x, n);
            left -= n;
        }
    }
}

/// The payload length field saturates here (13 bits; rx_parser).
pub const PAY_LEN_MAX: u16 = 8191;

/// Field offsets (LSB) and widths, as `rx_meta_pkg`.
pub mod field {
    pub const QP: (u32, u32) = (0, 8);
    pub const OPCODE: (u32, u32) = (8, 8);
    pub const PSN: (u32, u32) = (16, 24);
    pub const ACK_REQ: (u32, u32) = (40, 1);
    pub const HAS_RETH: (u32, u32) = (41, 1);
    pub const HAS_IMM: (u32, u32) = (42, 1);
    pub const HAS_AETH: (u32, u32) = (43, 1);
    pub const HDR_LEN: (u32, u32) = (44, 7);
    pub const PAY_LEN: (u32, u32) = (51, 13);
    pub const VA: (u32, u32) = (64, 64);
    pub const RKEY: (u32, u32) = (128, 32);
    pub const DMA_LEN: (u32, u32) = (160, 32);
    pub const IMM: (u32, u32) = (192, 32);
    pub const AETH: (u32, u32) = (224, 32);
}

/// The metadata's fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RxMeta {
    pub qp: u8,
    pub opcode: u8,
    /// 24 bits.
    pub psn: u32,
    pub ack_req: bool,
    pub has_reth: bool,
    pub has_imm: bool,
    pub has_aeth: bool,
    /// 7 bits: frame offset of the first payload byte.
    pub hdr_len: u8,
    /// 13 bits: payload bytes (without pad and ICRC).
    pub pay_len: u16,
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
    pub imm: u32,
    /// Syndrome 31:24, MSN 23:0.
    pub aeth: u32,
}

impl MetaBits {
    /// Bits `[lo, lo + w)` (w <= 64, never across a 64-bit word here).
    pub fn get(&self, (lo, w): (u32, u32)) -> u64 {
        let v = self.0[(lo / 64) as usize] >> (lo % 64);
        if w == 64 {
            v
        } else {
            v & ((1u64 << w) - 1)
        }
    }

    /// Sets bits `[lo, lo + w)` to `v` (masked to `w` bits).
    pub fn set(&mut self, (lo, w): (u32, u32), v: u64) {
        let m = if w == 64 { !0 } else { (1u64 << w) - 1 };
        let word = &mut self.0[(lo / 64) as usize];
        *word = (*word & !(m << (lo % 64))) | ((v & m) << (lo % 64));
    }
}

impl RxMeta {
    pub fn pack(&self) -> MetaBits {
        use field::*;
        let mut b = MetaBits::default();
        b.set(QP, self.qp as u64);
        b.set(OPCODE, self.opcode as u64);
        b.set(PSN, self.psn as u64);
        b.set(ACK_REQ, self.ack_req as u64);
        b.set(HAS_RETH, self.has_reth as u64);
        b.set(HAS_IMM, self.has_imm as u64);
        b.set(HAS_AETH, self.has_aeth as u64);
        b.set(HDR_LEN, self.hdr_len as u64);
        b.set(PAY_LEN, self.pay_len as u64);
        b.set(VA, self.va);
        b.set(RKEY, self.rkey as u64);
        b.set(DMA_LEN, self.dma_len as u64);
        b.set(IMM, self.imm as u64);
        b.set(AETH, self.aeth as u64);
        b
    }

    pub fn unpack(b: &MetaBits) -> RxMeta {
        use field::*;
        RxMeta {
            qp: b.get(QP) as u8,
            opcode: b.get(OPCODE) as u8,
            psn: b.get(PSN) as u32,
            ack_req: b.get(ACK_REQ) != 0,
            has_reth: b.get(HAS_RETH) != 0,
            has_imm: b.get(HAS_IMM) != 0,
            has_aeth: b.get(HAS_AETH) != 0,
            hdr_len: b.get(HDR_LEN) as u8,
            pay_len: b.get(PAY_LEN) as u16,
            va: b.get(VA),
            rkey: b.get(RKEY) as u32,
            dma_len: b.get(DMA_LEN) as u32,
            imm: b.get(IMM) as u32,
            aeth: b.get(AETH) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each field alone lands on the bits the table of docs/responder.md
    /// gives it (the expected words are written out by hand).
    #[test]
    fn fields_land_on_their_bits() {
        let one = |m: RxMeta| m.pack().0;
        let z = RxMeta::default();
        assert_eq!(one(RxMeta { qp: 0xA5, ..z }), [0xA5, 0, 0, 0]);
        assert_eq!(one(RxMeta { opcode: 0x0C, ..z }), [0x0C00, 0, 0, 0]);
        assert_eq!(
            one(RxMeta {
                psn: 0xFF_FFFF,
                ..z
            }),
            [0xFF_FFFF_0000, 0, 0, 0]
        );
        assert_eq!(one(RxMeta { ack_req: true, ..z }), [1 << 40, 0, 0, 0]);
        assert_eq!(
            one(RxMeta {
                has_reth: true,
                ..z
            }),
            [1 << 41, 0, 0, 0]
        );
        assert_eq!(one(RxMeta { has_imm: true, ..z }), [1 << 42, 0, 0, 0]);
        assert_eq!(
            one(RxMeta {
                has_aeth: true,
                ..z
            }),
            [1 << 43, 0, 0, 0]
        );
        assert_eq!(one(RxMeta { hdr_len: 0x7F, ..z }), [0x7F << 44, 0, 0, 0]);
        assert_eq!(
            one(RxMeta {
                pay_len: 0x1FFF,
                ..z
            }),
            [0xFFF8_0000_0000_0000, 0, 0, 0]
        );
        assert_eq!(
            one(RxMeta {
                va: 0x0123_4567_89AB_CDEF,
                ..z
            }),
            [0, 0x0123_4567_89AB_CDEF, 0, 0]
        );
        assert_eq!(
            one(RxMeta {
                rkey: 0xDEAD_BEEF,
                ..z
            }),
            [0, 0, 0xDEAD_BEEF, 0]
        );
        assert_eq!(
            one(RxMeta {
                dma_len: 0x1234_5678,
                ..z
            }),
            [0, 0, 0x1234_5678_0000_0000, 0]
        );
        assert_eq!(
            one(RxMeta {
                imm: 0xCAFE_F00D,
                ..z
            }),
            [0, 0, 0, 0xCAFE_F00D]
        );
        assert_eq!(
            one(RxMeta {
                aeth: 0x6100_0007,
                ..z
            }),
            [0, 0, 0, 0x6100_0007_0000_0000]
        );
    }

    #[test]
    fn pack_unpack_round_trip() {
        let m = RxMeta {
            qp: 7,
            opcode: 0x0A,
            psn: 0x12_3456,
            ack_req: true,
            has_reth: true,
            has_imm: false,
            has_aeth: false,
            hdr_len: 70,
            pay_len: 4096,
            va: 0xFFFF_0000_1234_0000,
            rkey: 0x101,
            dma_len: 9000,
            imm: 0,
            aeth: 0,
        };
        assert_eq!(RxMeta::unpack(&m.pack()), m);
        // Out-of-range values are cut to their field and touch no other.
        let mut b = MetaBits::default();
        b.set(field::HDR_LEN, 0xFFFF);
        assert_eq!(b.0, [0x7F << 44, 0, 0, 0]);
    }
}
