//! The request metadata record (docs/responder.md, "Request metadata"):
//! the header fields of a kept request packet or READ response, as
//! `rx_parser` extracts them, carried with the frame through `rx_buf` to the
//! responder. Mirror of `hw/rtl/rx_meta_pkg.sv` (bit offsets below).

use crate::ports::Wide;

/// The record on a port: 256 bits.
pub type Meta = Wide<4>;
pub const META_W: usize = 256;

pub const QP_LSB: usize = 0;
pub const OPCODE_LSB: usize = 8;
pub const PSN_LSB: usize = 16;
pub const ACK_REQ_BIT: usize = 40;
pub const HAS_RETH_BIT: usize = 41;
pub const HAS_IMM_BIT: usize = 42;
pub const HAS_AETH_BIT: usize = 43;
pub const HDR_LEN_LSB: usize = 44;
pub const PAY_LEN_LSB: usize = 51;
pub const RETH_VA_LSB: usize = 64;
pub const RETH_RKEY_LSB: usize = 128;
pub const RETH_LEN_LSB: usize = 160;
pub const IMM_LSB: usize = 192;
pub const AETH_LSB: usize = 224;

/// Payload lengths saturate here (the field is 13 bits).
pub const PAY_LEN_MAX: u16 = 8191;

/// The record's fields. Fields a packet does not carry are zero.
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
    /// Frame offset of the first payload byte (7 bits).
    pub hdr_len: u8,
    /// Payload bytes (13 bits, saturating at [`PAY_LEN_MAX`]).
    pub pay_len: u16,
    pub reth_va: u64,
    pub reth_rkey: u32,
    pub reth_len: u32,
    pub imm: u32,
    /// Syndrome 31:24, MSN 23:0.
    pub aeth: u32,
}

impl RxMeta {
    pub fn pack(&self) -> Meta {
        let mut m = Meta::default();
        m.set_field(QP_LSB, 8, self.qp as u64);
        m.set_field(OPCODE_LSB, 8, self.opcode as u64);
        m.set_field(PSN_LSB, 24, self.psn as u64);
        m.set_field(ACK_REQ_BIT, 1, self.ack_req as u64);
        m.set_field(HAS_RETH_BIT, 1, self.has_reth as u64);
        m.set_field(HAS_IMM_BIT, 1, self.has_imm as u64);
        m.set_field(HAS_AETH_BIT, 1, self.has_aeth as u64);
        m.set_field(HDR_LEN_LSB, 7, self.hdr_len as u64);
        m.set_field(PAY_LEN_LSB, 13, self.pay_len as u64);
        m.set_field(RETH_VA_LSB, 64, self.reth_va);
        m.set_field(RETH_RKEY_LSB, 32, self.reth_rkey as u64);
        m.set_field(RETH_LEN_LSB, 32, self.reth_len as u64);
        m.set_field(IMM_LSB, 32, self.imm as u64);
        m.set_field(AETH_LSB, 32, self.aeth as u64);
        m
    }

    pub fn unpack(m: &Meta) -> RxMeta {
        RxMeta {
            qp: m.field(QP_LSB, 8) as u8,
            opcode: m.field(OPCODE_LSB, 8) as u8,
            psn: m.field(PSN_LSB, 24) as u32,
            ack_req: m.field(ACK_REQ_BIT, 1) != 0,
            has_reth: m.field(HAS_RETH_BIT, 1) != 0,
            has_imm: m.field(HAS_IMM_BIT, 1) != 0,
            has_aeth: m.field(HAS_AETH_BIT, 1) != 0,
            hdr_len: m.field(HDR_LEN_LSB, 7) as u8,
            pay_len: m.field(PAY_LEN_LSB, 13) as u16,
            reth_va: m.field(RETH_VA_LSB, 64),
            reth_rkey: m.field(RETH_RKEY_LSB, 32) as u32,
            reth_len: m.field(RETH_LEN_LSB, 32) as u32,
            imm: m.field(IMM_LSB, 32) as u32,
            aeth: m.field(AETH_LSB, 32) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Literal words, worked by hand from the table in docs/responder.md.
    #[test]
    fn packs_at_the_documented_offsets() {
        let m = RxMeta {
            qp: 0xA5,
            opcode: 0x0A,
            psn: 0x123456,
            ack_req: true,
            has_reth: true,
            has_imm: false,
            has_aeth: true,
            hdr_len: 0x62,
            pay_len: 0x1001,
            reth_va: 0x0102_0304_0506_0708,
            reth_rkey: 0xCAFE_F00D,
            reth_len: 0x0000_1000,
            imm: 0xDEAD_BEEF,
            aeth: 0x1F00_0042,
        };
        // word 0: qp a5 @0, opcode 0a @8, psn 123456 @16, ackreq @40,
        // reth @41, aeth @43, hdr_len 0x62 @44, pay_len 0x1001 @51.
        let w0 = 0xA5
            | 0x0A << 8
            | 0x12_3456 << 16
            | 1 << 40
            | 1 << 41
            | 1 << 43
            | 0x62u64 << 44
            | 0x1001u64 << 51;
        let p = m.pack();
        assert_eq!(
            p.0,
            [
                w0,
                0x0102_0304_0506_0708,
                0x0000_1000_CAFE_F00D,
                0x1F00_0042_DEAD_BEEF
            ]
        );
        assert_eq!(RxMeta::unpack(&p), m);
    }

    #[test]
    fn fields_do_not_spill() {
        let m = RxMeta {
            psn: 0xFF_FFFF,
            hdr_len: 0x7F,
            pay_len: PAY_LEN_MAX,
            ..Default::default()
        };
        let p = m.pack();
        assert_eq!(p.field(0, 16), 0);
        assert_eq!(p.field(40, 4), 0);
        assert_eq!(RxMeta::unpack(&p), m);
    }
}
