//! The responder's tokens to `rx_wr` (`wc_tok = 1`, `wc_tok_data[192]`): a
//! RECV completion or a READ job. The RTL's home for the same layout is
//! `hw/rtl/resp_pkg.sv`; bit 0 is the kind.
//!
//! ```text
//! RECV completion (kind 0)            READ job (kind 1)
//!   0        kind = 0                   0        kind = 1
//!   8:1      qp                         8:1      qp
//!   16:9     cq                         32:9     first PSN
//!   80:17    wr_id                      96:33    bus address
//!   88:81    status                     128:97   length (bytes)
//!   96:89    opcode (128, 129)          152:129  MSN
//!   128:97   byte_len                   155:153  MTU code (ctx_mtu)
//!   160:129  imm                        158:156  max_dest_rd_atomic
//!                                                (ctx_max_rd)
//!   161      imm present
//!   185:162  src_qp
//! ```
//! Bits above the last field are zero.
//!
//! `rd_sink`'s READ done token ([`tok_rdone`], docs/rd_sink.md) has bit 0
//! = 0 (as a RECV completion) and bit [`TOK_SINK_BIT`] = 191 set, qp in 8:1
//! and the READ's last PSN in 32:9, every other bit zero. Neither layout
//! above reaches bit 191 (their last fields end at 185 and 158), so that bit
//! alone tells the two blocks' tokens apart.
//!
//! A READ job's `max_rd` is the QP's `RESP.max_dest_rd_atomic` when the
//! READ executed: `rd_resp` refuses the job if its QP already holds
//! max(1, `max_rd`) jobs.

use crate::ports::PortValue;

/// Bits of a token.
pub const TOK_W: u32 = 192;

/// A token's 192 bits as three little-endian 64-bit words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct TokBits(pub [u64; 3]);

impl PortValue for TokBits {
    const BITS: u32 = 192;
    fn to_words(&self, out: &mut [u64]) {
        out[..3].copy_from_slice(&self.0);
    }
    fn from_words(words: &[u64]) -> Self {
        TokBits([words[0], words[1], words[2]])
    }
}

impl crate::trace::TraceValue for TokBits {
    fn put(&self, w: u32, b: &mut crate::trace::Bits) {
        let mut left = w;
        for x in self.0 {
            let n = left.min(64);
            b.push(x, n);
            left -= n;
        }
    }
}

impl TokBits {
    /// Bits `[lo, lo + w)`, `1 <= w <= 64` (may straddle two words).
    pub fn get(&self, lo: u32, w: u32) -> u64 {
        let (word, sh) = ((lo / 64) as usize, lo % 64);
        let mut v = self.0[word] >> sh;
        if sh + w > 64 {
            v |= self.0[word + 1] << (64 - sh);
        }
        v & mask(w)
    }

    /// Sets bits `[lo, lo + w)` to `v` (masked to `w`), `1 <= w <= 64`.
    pub fn set(&mut self, lo: u32, w: u32, v: u64) {
        let (word, sh) = ((lo / 64) as usize, lo % 64);
        let (m, v) = (mask(w), v & mask(w));
        self.0[word] = (self.0[word] & !(m << sh)) | (v << sh);
        if sh + w > 64 {
            let (m_hi, v_hi) = (m >> (64 - sh), v >> (64 - sh));
            self.0[word + 1] = (self.0[word + 1] & !m_hi) | v_hi;
        }
    }

    /// A READ job (kind 1), not a completion or rd_sink's READ done.
    pub fn is_read(&self) -> bool {
        self.0[0] & 1 != 0
    }
}

/// The low `w` bits set, `1 <= w <= 64`.
fn mask(w: u32) -> u64 {
    u64::MAX >> (64 - w)
}

/// A RECV completion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecvCqe {
    pub qp: u8,
    pub cq: u8,
    pub wr_id: u64,
    pub status: u8,
    pub opcode: u8,
    pub byte_len: u32,
    pub imm: u32,
    pub imm_present: bool,
    pub src_qp: u32,
}

/// A READ job for the READ responder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadJob {
    pub qp: u8,
    pub psn: u32,
    pub addr: u64,
    pub len: u32,
    pub msn: u32,
    pub mtu: u8,
    /// The QP's max_dest_rd_atomic (3 bits; `rd_resp` reads 0 as 1).
    pub max_rd: u8,
}

/// The bit that marks `rd_sink`'s READ done token (`resp_pkg::TOK_SINK_BIT`).
pub const TOK_SINK_BIT: u32 = 191;

/// `rd_sink`'s READ done token (`resp_pkg::tok_rdone`): kind 0, bit
/// [`TOK_SINK_BIT`] set, `qp` in 8:1, the READ's last PSN in 32:9
/// (psn0 + n - 1 mod 2^24: `ack_tracker` matches its entries by it).
pub fn tok_rdone(qp: u8, last_psn: u32) -> TokBits {
    let mut t = TokBits::default();
    t.set(1, 8, qp as u64);
    t.set(9, 24, last_psn as u64);
    t.set(TOK_SINK_BIT, 1, 1);
    t
}

/// A token, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    Cqe(RecvCqe),
    Read(ReadJob),
}

impl Tok {
    pub fn pack(&self) -> TokBits {
        let mut t = TokBits::default();
        match self {
            Tok::Cqe(c) => {
                t.set(1, 8, c.qp as u64);
                t.set(9, 8, c.cq as u64);
                t.set(17, 64, c.wr_id);
                t.set(81, 8, c.status as u64);
                t.set(89, 8, c.opcode as u64);
                t.set(97, 32, c.byte_len as u64);
                t.set(129, 32, c.imm as u64);
                t.set(161, 1, c.imm_present as u64);
                t.set(162, 24, c.src_qp as u64);
            }
            Tok::Read(r) => {
                t.set(0, 1, 1);
                t.set(1, 8, r.qp as u64);
                t.set(9, 24, r.psn as u64);
                t.set(33, 64, r.addr);
                t.set(97, 32, r.len as u64);
                t.set(129, 24, r.msn as u64);
                t.set(153, 3, r.mtu as u64);
                t.set(156, 3, r.max_rd as u64);
            }
        }
        t
    }

    pub fn unpack(t: &TokBits) -> Tok {
        if t.get(0, 1) == 0 {
            Tok::Cqe(RecvCqe {
                qp: t.get(1, 8) as u8,
                cq: t.get(9, 8) as u8,
                wr_id: t.get(17, 64),
                status: t.get(81, 8) as u8,
                opcode: t.get(89, 8) as u8,
                byte_len: t.get(97, 32) as u32,
                imm: t.get(129, 32) as u32,
                imm_present: t.get(161, 1) != 0,
                src_qp: t.get(162, 24) as u32,
            })
        } else {
            Tok::Read(ReadJob {
                qp: t.get(1, 8) as u8,
                psn: t.get(9, 24) as u32,
                addr: t.get(33, 64),
                len: t.get(97, 32) as u32,
                msn: t.get(129, 24) as u32,
                mtu: t.get(153, 3) as u8,
                max_rd: t.get(156, 3) as u8,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The word-wise `get`/`set` against one bit at a time: `set`
        /// writes exactly bits `[lo, lo + w)`, `get` reads them back.
        #[test]
        fn get_set_bitwise(words: [u64; 3], lo in 0u32..192, w in 1u32..=64, v: u64) {
            let w = w.min(192 - lo);
            let mut t = TokBits(words);
            t.set(lo, w, v);
            for b in 0..192u32 {
                let bit = (t.0[(b / 64) as usize] >> (b % 64)) & 1;
                let want = if (lo..lo + w).contains(&b) {
                    (v >> (b - lo)) & 1
                } else {
                    (words[(b / 64) as usize] >> (b % 64)) & 1
                };
                prop_assert_eq!(bit, want, "bit {}", b);
            }
            let got = (0..w).fold(0u64, |x, i| {
                x | ((t.0[((lo + i) / 64) as usize] >> ((lo + i) % 64)) & 1) << i
            });
            prop_assert_eq!(t.get(lo, w), got);
        }
    }

    /// Literal bits of both kinds, worked out by hand from the table above.
    #[test]
    fn literal_bits() {
        let c = Tok::Cqe(RecvCqe {
            qp: 0x81,
            cq: 0x03,
            wr_id: 0x8000_0000_0000_0001,
            status: 5,
            opcode: 128,
            byte_len: 0x1000,
            imm: 0xFFFF_FFFF,
            imm_present: true,
            src_qp: 0xAB_CDEF,
        });
        // word 0: kind 0, qp 0x81 at 1 (0x102), cq 3 at 9 (0x600),
        // wr_id bit 0 at 17, wr_id bit 63 at 80 (word 1 bit 16);
        // status 5 at 81 (word 1 bits 17, 19); opcode 128 at 89 + 7 = 96
        // (word 1 bit 32); byte_len 0x1000 at 97 + 12 = 109 (word 1 bit 45);
        // imm at 129..161 (word 2 bits 1..33); present at 161 (word 2 bit 33);
        // src_qp at 162 (word 2 bits 34..58).
        assert_eq!(
            c.pack().0,
            [
                0x102 | 0x600 | 1 << 17,
                1 << 16 | 5 << 17 | 1 << 32 | 1 << 45,
                0xFFFF_FFFF << 1 | 1 << 33 | 0xAB_CDEF << 34,
            ]
        );
        let r = Tok::Read(ReadJob {
            qp: 2,
            psn: 0xFF_FFFF,
            addr: 0x1_0000_0001,
            len: 3,
            msn: 1,
            mtu: 5,
            max_rd: 6,
        });
        // kind 1; qp 2 at 1 (0x4); psn at 9..33; addr bit 0 at 33, bit 32 at
        // 65 (word 1 bit 1); len 3 at 97 (word 1 bits 33, 34); msn 1 at 129
        // (word 2 bit 1); mtu 5 at 153 (word 2 bits 25, 27); max_rd 6 at
        // 156 (word 2 bits 29, 30: 0x6000_0000).
        assert_eq!(
            r.pack().0,
            [
                1 | 0x4 | 0xFF_FFFF << 9 | 1 << 33,
                1 << 1 | 3 << 33,
                1 << 1 | 5 << 25 | 0x6000_0000
            ]
        );
        assert_eq!(Tok::unpack(&c.pack()), c);
        assert_eq!(Tok::unpack(&r.pack()), r);
        // READ done: qp 0x81 at 1 (0x102), psn 0xFF_FFFF at 9..33, bit 191
        // (word 2 bit 63); kind 0.
        assert_eq!(
            tok_rdone(0x81, 0xFF_FFFF).0,
            [0x102 | 0xFF_FFFF << 9, 0, 1 << 63]
        );
    }

    /// Bit 191 is zero in every RECV completion and READ job token, even
    /// with every field at its largest value.
    #[test]
    fn sink_bit_only_in_rdone() {
        let c = Tok::Cqe(RecvCqe {
            qp: !0,
            cq: !0,
            wr_id: !0,
            status: !0,
            opcode: !0,
            byte_len: !0,
            imm: !0,
            imm_present: true,
            src_qp: 0xFF_FFFF,
        });
        let r = Tok::Read(ReadJob {
            qp: !0,
            psn: 0xFF_FFFF,
            addr: !0,
            len: !0,
            msn: 0xFF_FFFF,
            mtu: 7,
            max_rd: 7,
        });
        assert_eq!(c.pack().get(TOK_SINK_BIT, 1), 0);
        assert_eq!(r.pack().get(TOK_SINK_BIT, 1), 0);
        assert_eq!(
            c.pack().0[2] >> 58,
            0,
            "RECV completion: bits 186..191 zero"
        );
        assert_eq!(r.pack().0[2] >> 31, 0, "READ job: bits 159..191 zero");
        let d = tok_rdone(0xFF, 0xFF_FFFF);
        assert_eq!((d.get(0, 1), d.get(TOK_SINK_BIT, 1)), (0, 1));
    }
}
