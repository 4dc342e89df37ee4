//! The send-queue entry (WQE) as the host writes it into an SQ ring, in the
//! style of [`super::roce`]: a [`Wqe`] view over the 64 bytes with a
//! [`field`] module of byte ranges, and a [`Repr`] with `parse`/`emit`.
//!
//! The testbench's own reading of docs/tx_datapath.md ("Host-memory
//! formats"); it shares no code with the model, which decodes WQEs as the
//! RTL does. Every field is little-endian:
//!
//! ```text
//! 0x00 wr_id (8) | 0x08 opcode (1) | 0x09 flags (1) | 0x0A reserved (2) | 0x0C length (4)
//! 0x10 local VA (8) | 0x18 lkey (4) | 0x1C immediate (4) | 0x20 remote VA (8) | 0x28 rkey (4)
//! 0x2C reserved (20)
//! ```
//!
//! Any 64 bytes are a WQE: an opcode above 4 and set reserved bits are for
//! the NIC to judge (or ignore), so the view reads them as they are.

pub mod field {
    use super::super::roce::Field;
    pub const WR_ID: Field = 0x00..0x08;
    /// 0 SEND, 1 SEND_IMM, 2 RDMA_WRITE, 3 RDMA_WRITE_IMM, 4 RDMA_READ.
    pub const OPCODE: usize = 0x08;
    /// Bit 0 signaled, bit 1 solicited; the others reserved.
    pub const FLAGS: usize = 0x09;
    pub const RESERVED_0A: Field = 0x0A..0x0C;
    pub const LEN: Field = 0x0C..0x10;
    pub const LADDR: Field = 0x10..0x18;
    pub const LKEY: Field = 0x18..0x1C;
    /// Sent as ImmDt, the 32-bit value in network order.
    pub const IMM: Field = 0x1C..0x20;
    pub const RADDR: Field = 0x20..0x28;
    pub const RKEY: Field = 0x28..0x2C;
    pub const RESERVED_2C: Field = 0x2C..0x40;
}

/// Bytes of a WQE, and its stride in the SQ ring.
pub const WQE_LEN: usize = 64;
pub const OP_SEND: u8 = 0;
pub const OP_SEND_IMM: u8 = 1;
pub const OP_RDMA_WRITE: u8 = 2;
pub const OP_RDMA_WRITE_IMM: u8 = 3;
pub const OP_RDMA_READ: u8 = 4;
pub const FLAG_SIGNALED: u8 = 1;
pub const FLAG_SOLICITED: u8 = 2;

le_view!(
    /// A view of a WQE's bytes.
    Wqe,
    "WQE",
    WQE_LEN
);

impl<T: AsRef<[u8]>> Wqe<T> {
    pub fn wr_id(&self) -> u64 {
        self.u64_at(field::WR_ID)
    }
    pub fn opcode(&self) -> u8 {
        self.b()[field::OPCODE]
    }
    /// The whole flags byte, reserved bits included.
    pub fn flags(&self) -> u8 {
        self.b()[field::FLAGS]
    }
    pub fn signaled(&self) -> bool {
        self.flags() & FLAG_SIGNALED != 0
    }
    pub fn solicited(&self) -> bool {
        self.flags() & FLAG_SOLICITED != 0
    }
    /// The message length in bytes.
    pub fn length(&self) -> u32 {
        self.u32_at(field::LEN)
    }
    pub fn laddr(&self) -> u64 {
        self.u64_at(field::LADDR)
    }
    pub fn lkey(&self) -> u32 {
        self.u32_at(field::LKEY)
    }
    pub fn imm(&self) -> u32 {
        self.u32_at(field::IMM)
    }
    pub fn raddr(&self) -> u64 {
        self.u64_at(field::RADDR)
    }
    pub fn rkey(&self) -> u32 {
        self.u32_at(field::RKEY)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Wqe<T> {
    pub fn set_wr_id(&mut self, v: u64) {
        self.put(field::WR_ID, &v.to_le_bytes());
    }
    pub fn set_opcode(&mut self, v: u8) {
        self.bm()[field::OPCODE] = v;
    }
    /// The whole flags byte, reserved bits included.
    pub fn set_flags(&mut self, v: u8) {
        self.bm()[field::FLAGS] = v;
    }
    pub fn set_length(&mut self, v: u32) {
        self.put(field::LEN, &v.to_le_bytes());
    }
    pub fn set_laddr(&mut self, v: u64) {
        self.put(field::LADDR, &v.to_le_bytes());
    }
    pub fn set_lkey(&mut self, v: u32) {
        self.put(field::LKEY, &v.to_le_bytes());
    }
    pub fn set_imm(&mut self, v: u32) {
        self.put(field::IMM, &v.to_le_bytes());
    }
    pub fn set_raddr(&mut self, v: u64) {
        self.put(field::RADDR, &v.to_le_bytes());
    }
    pub fn set_rkey(&mut self, v: u32) {
        self.put(field::RKEY, &v.to_le_bytes());
    }
}

/// A WQE's fields. The opcode is the raw code (invalid ones are stimulus
/// too); the reserved flag bits and bytes are not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Repr {
    pub wr_id: u64,
    pub opcode: u8,
    pub signaled: bool,
    pub solicited: bool,
    pub len: u32,
    pub laddr: u64,
    pub lkey: u32,
    pub imm: u32,
    pub raddr: u64,
    pub rkey: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(w: &Wqe<T>) -> Repr {
        Repr {
            wr_id: w.wr_id(),
            opcode: w.opcode(),
            signaled: w.signaled(),
            solicited: w.solicited(),
            len: w.length(),
            laddr: w.laddr(),
            lkey: w.lkey(),
            imm: w.imm(),
            raddr: w.raddr(),
            rkey: w.rkey(),
        }
    }
    /// Writes all 64 bytes, the reserved ones zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, w: &mut Wqe<T>) {
        w.bm()[..WQE_LEN].fill(0);
        w.set_wr_id(self.wr_id);
        w.set_opcode(self.opcode);
        w.set_flags(
            if self.signaled { FLAG_SIGNALED } else { 0 }
                | if self.solicited { FLAG_SOLICITED } else { 0 },
        );
        w.set_length(self.len);
        w.set_laddr(self.laddr);
        w.set_lkey(self.lkey);
        w.set_imm(self.imm);
        w.set_raddr(self.raddr);
        w.set_rkey(self.rkey);
    }
    pub fn to_bytes(&self) -> [u8; WQE_LEN] {
        let mut b = [0u8; WQE_LEN];
        self.emit(&mut Wqe::new_unchecked(&mut b[..]));
        b
    }
}

#[cfg(test)]
mod tests {
    use super::super::Truncated;
    use super::*;

    /// A signaled, solicited RDMA_WRITE_IMM, every field from the table of
    /// docs/tx_datapath.md written out by hand, little-endian.
    const WRITE_IMM: [u8; 64] = [
        0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // 0x00 wr_id 0x0102030405060708
        0x03, 0x03, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, // 0x08 op 3, flags 3, len 0x1000
        0x00, 0x00, 0x00, 0x00, 0x00, 0x7F, 0x00, 0x00, // 0x10 laddr 0x7f0000000000
        0x10, 0x00, 0x00, 0x00, 0xEF, 0xBE, 0xAD, 0xDE, // 0x18 lkey 0x10, imm 0xdeadbeef
        0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x20 raddr 0x1000
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x28 rkey 1, reserved
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x30 reserved
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x38 reserved
    ];

    fn write_imm() -> Repr {
        Repr {
            wr_id: 0x0102_0304_0506_0708,
            opcode: OP_RDMA_WRITE_IMM,
            signaled: true,
            solicited: true,
            len: 0x1000,
            laddr: 0x7F00_0000_0000,
            lkey: 0x10,
            imm: 0xDEAD_BEEF,
            raddr: 0x1000,
            rkey: 1,
        }
    }

    #[test]
    fn literal_wqe_parses_and_emits() {
        let w = Wqe::new_checked(&WRITE_IMM[..]).unwrap();
        assert_eq!(Repr::parse(&w), write_imm());
        assert_eq!(write_imm().to_bytes(), WRITE_IMM);
    }

    #[test]
    fn reserved_bits_are_read_past_and_emitted_zero() {
        let mut b = [0xFFu8; 64];
        let mut w = Wqe::new_unchecked(&mut b[..]);
        w.set_flags(0xFE); // solicited, not signaled, reserved bits set
        w.set_opcode(0x80); // not an opcode: kept as it is
        let r = Repr::parse(&w);
        assert_eq!((r.opcode, r.signaled, r.solicited), (0x80, false, true));
        assert_eq!((r.wr_id, r.len, r.rkey), (u64::MAX, u32::MAX, u32::MAX));
        let mut e = [0xAAu8; 64];
        r.emit(&mut Wqe::new_unchecked(&mut e[..]));
        assert_eq!(e[field::FLAGS], FLAG_SOLICITED);
        assert!(e[field::RESERVED_0A].iter().all(|&x| x == 0));
        assert!(e[field::RESERVED_2C].iter().all(|&x| x == 0));
        assert_eq!(
            Wqe::new_checked(&b[..63]),
            Err(Truncated {
                layout: "WQE",
                len: 63,
                need: 64
            })
        );
    }
}
