//! The completion-queue entry (CQE) as the NIC writes it into a CQ ring, in
//! the style of [`super::roce`]: a [`Cqe`] view over the 32 bytes with a
//! [`field`] module of byte ranges, and a [`Repr`] with `parse`/`emit`.
//!
//! The testbench's own reading of docs/tx_datapath.md ("Host-memory
//! formats"); it shares no code with the model. Every field is
//! little-endian:
//!
//! ```text
//! 0x00 wr_id (8) | 0x08 byte length (4) | 0x0C immediate (4) | 0x10 local QP (4)
//! 0x14 opcode (1) | 0x15 status (1) | 0x16 bit 0 immediate flag (1) | 0x17 bit 0 owner (1)
//! 0x18 source QP (3) | 0x1B reserved (5)
//! ```
//!
//! The reserved bytes and bits must be zero; [`Repr::parse`] reads past
//! them and [`Cqe::reserved_zero`] says whether they are.

pub mod field {
    use super::super::roce::Field;
    pub const WR_ID: Field = 0x00..0x08;
    /// The WQE's length; 0 for error and flush completions.
    pub const LEN: Field = 0x08..0x0C;
    /// The WQE's immediate for the +Imm opcodes, else 0.
    pub const IMM: Field = 0x0C..0x10;
    pub const QP: Field = 0x10..0x14;
    /// The opcode (`OPCODE_*`, ibv_wc_opcode numbering).
    pub const OPCODE: usize = 0x14;
    pub const STATUS: usize = 0x15;
    /// Bit 0: the message carried an immediate (responder completions), the
    /// others reserved.
    pub const IMM_FLAG: usize = 0x16;
    /// Bit 0 the owner bit, the others reserved.
    pub const OWNER: usize = 0x17;
    /// The sending QP's number, 24 bits (responder completions; 0 for the
    /// requester's).
    pub const SRC_QP: Field = 0x18..0x1B;
    pub const RESERVED_1B: Field = 0x1B..0x20;
}

/// Bytes of a CQE, and its stride in the CQ ring.
pub const CQE_LEN: usize = 32;
/// Opcodes, numbered as `ibv_wc_opcode` (docs/protocol.md section 6): a
/// requester's CQE names the operation, SEND with immediate being a SEND
/// and WRITE with immediate a WRITE; `OPCODE_INVALID` (no ibv code) is the
/// error CQE of a WQE whose opcode names no operation (bit 7 clear: every
/// opcode with bit 7 set is a receive completion's).
pub const OPCODE_SEND: u8 = 0;
pub const OPCODE_RDMA_WRITE: u8 = 1;
pub const OPCODE_RDMA_READ: u8 = 2;
pub const OPCODE_RECV: u8 = 128;
pub const OPCODE_RECV_RDMA_WITH_IMM: u8 = 129;
pub const OPCODE_INVALID: u8 = 0x7F;
/// Statuses, numbered as `ibv_wc_status`.
pub const STATUS_SUCCESS: u8 = 0;
/// Invalid opcode, or RDMA READ on a UC QP.
pub const STATUS_LOC_QP_OP_ERR: u8 = 2;
pub const STATUS_LOC_PROT_ERR: u8 = 4;
pub const STATUS_WR_FLUSH_ERR: u8 = 5;
/// The responder's NAKs: invalid request, remote access error, remote
/// operational error (AETH NAK codes 1, 2, 3).
pub const STATUS_REM_INV_REQ_ERR: u8 = 9;
pub const STATUS_REM_ACCESS_ERR: u8 = 10;
pub const STATUS_REM_OP_ERR: u8 = 11;
/// Retries ran out: after timeouts or sequence-error NAKs (retry_cnt), or
/// RNR NAKs (rnr_retry).
pub const STATUS_RETRY_EXC_ERR: u8 = 12;
pub const STATUS_RNR_RETRY_EXC_ERR: u8 = 13;
/// The payload's PCIe read failed.
pub const STATUS_GENERAL_ERR: u8 = 21;

le_view!(
    /// A view of a CQE's bytes.
    Cqe,
    "CQE",
    CQE_LEN
);

impl<T: AsRef<[u8]>> Cqe<T> {
    pub fn wr_id(&self) -> u64 {
        self.u64_at(field::WR_ID)
    }
    /// The byte length.
    pub fn length(&self) -> u32 {
        self.u32_at(field::LEN)
    }
    pub fn imm(&self) -> u32 {
        self.u32_at(field::IMM)
    }
    pub fn qp(&self) -> u32 {
        self.u32_at(field::QP)
    }
    pub fn opcode(&self) -> u8 {
        self.b()[field::OPCODE]
    }
    pub fn status(&self) -> u8 {
        self.b()[field::STATUS]
    }
    pub fn imm_flag(&self) -> bool {
        self.b()[field::IMM_FLAG] & 1 != 0
    }
    pub fn owner(&self) -> bool {
        self.b()[field::OWNER] & 1 != 0
    }
    pub fn src_qp(&self) -> u32 {
        let b = &self.b()[field::SRC_QP];
        u32::from_le_bytes([b[0], b[1], b[2], 0])
    }
    /// Whether every reserved byte and bit is zero, as the layout requires.
    pub fn reserved_zero(&self) -> bool {
        let b = self.b();
        b[field::IMM_FLAG] & !1 == 0
            && b[field::OWNER] & !1 == 0
            && b[field::RESERVED_1B].iter().all(|&x| x == 0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Cqe<T> {
    pub fn set_wr_id(&mut self, v: u64) {
        self.put(field::WR_ID, &v.to_le_bytes());
    }
    pub fn set_length(&mut self, v: u32) {
        self.put(field::LEN, &v.to_le_bytes());
    }
    pub fn set_imm(&mut self, v: u32) {
        self.put(field::IMM, &v.to_le_bytes());
    }
    pub fn set_qp(&mut self, v: u32) {
        self.put(field::QP, &v.to_le_bytes());
    }
    pub fn set_opcode(&mut self, v: u8) {
        self.bm()[field::OPCODE] = v;
    }
    pub fn set_status(&mut self, v: u8) {
        self.bm()[field::STATUS] = v;
    }
    /// Writes the whole byte: the flag, the reserved bits zero.
    pub fn set_imm_flag(&mut self, v: bool) {
        self.bm()[field::IMM_FLAG] = v as u8;
    }
    /// Writes the whole byte: the owner bit, the reserved bits zero.
    pub fn set_owner(&mut self, v: bool) {
        self.bm()[field::OWNER] = v as u8;
    }
    /// The low 24 bits of `v`.
    pub fn set_src_qp(&mut self, v: u32) {
        self.put(field::SRC_QP, &v.to_le_bytes()[..3]);
    }
}

/// A CQE's fields (the reserved ones are not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Repr {
    pub wr_id: u64,
    pub len: u32,
    pub imm: u32,
    pub qp: u32,
    pub opcode: u8,
    pub status: u8,
    pub imm_flag: bool,
    pub owner: bool,
    /// 24 bits.
    pub src_qp: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(c: &Cqe<T>) -> Repr {
        Repr {
            wr_id: c.wr_id(),
            len: c.length(),
            imm: c.imm(),
            qp: c.qp(),
            opcode: c.opcode(),
            status: c.status(),
            imm_flag: c.imm_flag(),
            owner: c.owner(),
            src_qp: c.src_qp(),
        }
    }
    /// Writes all 32 bytes, the reserved ones zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, c: &mut Cqe<T>) {
        c.bm()[..CQE_LEN].fill(0);
        c.set_wr_id(self.wr_id);
        c.set_length(self.len);
        c.set_imm(self.imm);
        c.set_qp(self.qp);
        c.set_opcode(self.opcode);
        c.set_status(self.status);
        c.set_imm_flag(self.imm_flag);
        c.set_owner(self.owner);
        c.set_src_qp(self.src_qp);
    }
    pub fn to_bytes(&self) -> [u8; CQE_LEN] {
        let mut b = [0u8; CQE_LEN];
        self.emit(&mut Cqe::new_unchecked(&mut b[..]));
        b
    }
}

#[cfg(test)]
mod tests {
    use super::super::Truncated;
    use super::*;

    /// A first-pass (owner 1) success of a SEND_IMM on QP 3, every field
    /// from the table of docs/tx_datapath.md written out by hand.
    const SEND_IMM_OK: [u8; 32] = [
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // 0x00 wr_id 0x0102030405060708
        0x40, 0x00, 0x00, 0x00, 0xEF, 0xBE, 0xAD, 0xDE, // 0x08 len 64, imm 0xdeadbeef
        0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, // 0x10 qp 3, op 1, status 0, owner 1
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x18 src_qp 0, reserved
    ];
    /// A second-pass (owner 0) flush of an RDMA_READ on QP 15: length 0.
    const READ_FLUSHED: [u8; 32] = [
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // 0x00 wr_id all ones
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x08 len 0, imm 0
        0x0F, 0x00, 0x00, 0x00, 0x04, 0x05, 0x00, 0x00, // 0x10 qp 15, op 4, status 5, owner 0
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x18 src_qp 0, reserved
    ];
    /// A responder's RECV completion of a SEND with immediate on QP 2 from
    /// source QP 0x00A1B2 (owner 1): immediate flag set.
    const RECV_IMM: [u8; 32] = [
        0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x00 wr_id 0x11
        0x00, 0x01, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12, // 0x08 len 256, imm 0x12345678
        0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01,
        0x01, // 0x10 qp 2, op 1, status 0, imm flag, owner 1
        0xB2, 0xA1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x18 src_qp 0x00A1B2, reserved
    ];

    #[test]
    fn literal_cqes_parse_and_emit() {
        let ok = Repr {
            wr_id: 0x0102_0304_0506_0708,
            len: 64,
            imm: 0xDEAD_BEEF,
            qp: 3,
            opcode: 1,
            status: STATUS_SUCCESS,
            imm_flag: false,
            owner: true,
            src_qp: 0,
        };
        let flushed = Repr {
            wr_id: u64::MAX,
            len: 0,
            imm: 0,
            qp: 15,
            opcode: 4,
            status: STATUS_WR_FLUSH_ERR,
            imm_flag: false,
            owner: false,
            src_qp: 0,
        };
        let recv = Repr {
            wr_id: 0x11,
            len: 256,
            imm: 0x1234_5678,
            qp: 2,
            opcode: 1,
            status: STATUS_SUCCESS,
            imm_flag: true,
            owner: true,
            src_qp: 0xA1B2,
        };
        for (bytes, want) in [(SEND_IMM_OK, ok), (READ_FLUSHED, flushed), (RECV_IMM, recv)] {
            let c = Cqe::new_checked(&bytes[..]).unwrap();
            assert!(c.reserved_zero());
            assert_eq!(Repr::parse(&c), want);
            assert_eq!(want.to_bytes(), bytes);
        }
    }

    #[test]
    fn reserved_bytes_and_bits_are_seen() {
        for (at, v) in [
            (0x16, 0x02),
            (0x16, 0x80),
            (0x17, 0x02),
            (0x17, 0x81),
            (0x1B, 1),
            (0x1F, 0x80),
        ] {
            let mut b = SEND_IMM_OK;
            b[at] |= v;
            let c = Cqe::new_unchecked(&b[..]);
            assert!(!c.reserved_zero(), "byte {at:#x} {v:#x}");
            assert!(c.owner());
        }
        // The flag and the three source-QP bytes are fields, not reserved.
        let mut b = SEND_IMM_OK;
        b[0x16] = 1;
        b[0x18..0x1B].copy_from_slice(&[0xFF, 0xFF, 0xFF]);
        let c = Cqe::new_unchecked(&b[..]);
        assert!(c.reserved_zero());
        assert_eq!((c.imm_flag(), c.src_qp()), (true, 0xFF_FFFF));
        assert_eq!(
            Cqe::new_checked(&SEND_IMM_OK[..31]),
            Err(Truncated {
                layout: "CQE",
                len: 31,
                need: 32
            })
        );
    }
}
