//! The receive-queue entry (RECV WQE) as the host writes it into an RQ ring,
//! in the style of [`super::wqe`]: an [`Rqe`] view over the 128 bytes and a
//! [`Repr`] with `parse`/`emit`.
//!
//! The testbench's own reading of docs/responder.md ("Host-memory formats");
//! little-endian fields:
//!
//! ```text
//! 0x00 wr_id (8) | 0x08 entries (1) | 0x09 reserved (7)
//! 0x10 + 16k: VA (8) | length (4) | lkey (4)      k = 0..4
//! 0x50 reserved (48)
//! ```
//!
//! Any 128 bytes are an RQE: an entry count above [`MAX_SGE`] is for the NIC
//! to judge, so the view reads it as it is; `Repr` keeps the count and all
//! four entry slots.

pub mod field {
    use super::super::roce::Field;
    pub const WR_ID: Field = 0x00..0x08;
    /// Scatter entries in use, 0..=4.
    pub const NUM_SGE: usize = 0x08;
    pub const RESERVED_09: Field = 0x09..0x10;
    /// Entry `k` starts at `SGE + SGE_LEN * k`.
    pub const SGE: usize = 0x10;
    pub const SGE_LEN: usize = 16;
    /// Within an entry.
    pub const SGE_VA: Field = 0..8;
    pub const SGE_LENGTH: Field = 8..12;
    pub const SGE_LKEY: Field = 12..16;
    pub const RESERVED_50: Field = 0x50..0x80;
}

/// Bytes of a RECV WQE, and its stride in the RQ ring.
pub const RQE_LEN: usize = 128;
/// Scatter entries a RECV WQE can hold.
pub const MAX_SGE: usize = 4;

le_view!(
    /// A view of a RECV WQE's bytes.
    Rqe,
    "RECV WQE",
    RQE_LEN
);

fn sge(k: usize, f: core::ops::Range<usize>) -> core::ops::Range<usize> {
    let at = field::SGE + field::SGE_LEN * k;
    at + f.start..at + f.end
}

impl<T: AsRef<[u8]>> Rqe<T> {
    pub fn wr_id(&self) -> u64 {
        self.u64_at(field::WR_ID)
    }
    /// The entry count as written, possibly above [`MAX_SGE`].
    pub fn num_sge(&self) -> u8 {
        self.b()[field::NUM_SGE]
    }
    /// Entry `k` (0..4): (VA, length, lkey).
    pub fn sge(&self, k: usize) -> Sge {
        Sge {
            va: self.u64_at(sge(k, field::SGE_VA)),
            len: self.u32_at(sge(k, field::SGE_LENGTH)),
            lkey: self.u32_at(sge(k, field::SGE_LKEY)),
        }
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Rqe<T> {
    pub fn set_wr_id(&mut self, v: u64) {
        self.put(field::WR_ID, &v.to_le_bytes());
    }
    pub fn set_num_sge(&mut self, v: u8) {
        self.bm()[field::NUM_SGE] = v;
    }
    pub fn set_sge(&mut self, k: usize, s: Sge) {
        self.put(sge(k, field::SGE_VA), &s.va.to_le_bytes());
        self.put(sge(k, field::SGE_LENGTH), &s.len.to_le_bytes());
        self.put(sge(k, field::SGE_LKEY), &s.lkey.to_le_bytes());
    }
}

/// One scatter entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Sge {
    pub va: u64,
    pub len: u32,
    pub lkey: u32,
}

/// A RECV WQE's fields; reserved bytes are not kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Repr {
    pub wr_id: u64,
    pub num_sge: u8,
    pub sges: [Sge; MAX_SGE],
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(r: &Rqe<T>) -> Repr {
        Repr {
            wr_id: r.wr_id(),
            num_sge: r.num_sge(),
            sges: core::array::from_fn(|k| r.sge(k)),
        }
    }
    /// The entries in use (none when the count is out of range: the NIC
    /// completes such a RECV in error without scattering anything).
    pub fn used(&self) -> &[Sge] {
        let n = self.num_sge as usize;
        if n > MAX_SGE {
            &[]
        } else {
            &self.sges[..n]
        }
    }
    /// Bytes the entries in use can take.
    pub fn capacity(&self) -> u64 {
        self.used().iter().map(|s| s.len as u64).sum()
    }
    /// Writes all 128 bytes, the reserved ones zero.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, r: &mut Rqe<T>) {
        r.bm()[..RQE_LEN].fill(0);
        r.set_wr_id(self.wr_id);
        r.set_num_sge(self.num_sge);
        for (k, s) in self.sges.iter().enumerate() {
            r.set_sge(k, *s);
        }
    }
    pub fn to_bytes(&self) -> [u8; RQE_LEN] {
        let mut b = [0u8; RQE_LEN];
        self.emit(&mut Rqe::new_unchecked(&mut b[..]));
        b
    }
}

#[cfg(test)]
mod tests {
    use super::super::Truncated;
    use super::*;

    /// Two entries, every field from the table of docs/responder.md written
    /// out by hand, little-endian.
    fn two_entries_bytes() -> [u8; 128] {
        let mut b = [0u8; 128];
        b[..16].copy_from_slice(&[
            0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // 0x00 wr_id 0x8877665544332211
            0x02, 0, 0, 0, 0, 0, 0, 0, // 0x08 two entries, reserved
        ]);
        b[16..32].copy_from_slice(&[
            0x00, 0x10, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, // VA 0x1_0000_1000
            0x00, 0x01, 0x00, 0x00, // length 256
            0x05, 0x00, 0x00, 0x00, // lkey 5
        ]);
        b[32..48].copy_from_slice(&[
            0x40, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, // VA 0x20040
            0x01, 0x00, 0x00, 0x00, // length 1
            0x06, 0x01, 0x00, 0x00, // lkey 0x106
        ]);
        b
    }

    fn two_entries() -> Repr {
        let mut sges = [Sge::default(); MAX_SGE];
        sges[0] = Sge {
            va: 0x1_0000_1000,
            len: 256,
            lkey: 5,
        };
        sges[1] = Sge {
            va: 0x2_0040,
            len: 1,
            lkey: 0x106,
        };
        Repr {
            wr_id: 0x8877_6655_4433_2211,
            num_sge: 2,
            sges,
        }
    }

    #[test]
    fn literal_rqe_parses_and_emits() {
        let b = two_entries_bytes();
        let r = Repr::parse(&Rqe::new_checked(&b[..]).unwrap());
        assert_eq!(r, two_entries());
        assert_eq!(r.used().len(), 2);
        assert_eq!(r.capacity(), 257);
        assert_eq!(two_entries().to_bytes(), b);
    }

    #[test]
    fn count_out_of_range_uses_no_entry() {
        let mut b = two_entries_bytes();
        b[field::NUM_SGE] = 5;
        let r = Repr::parse(&Rqe::new_unchecked(&b[..]));
        assert_eq!((r.num_sge, r.used().len(), r.capacity()), (5, 0, 0));
        // Reserved bytes are read past and emitted zero.
        let mut junk = [0xEEu8; 128];
        r.emit(&mut Rqe::new_unchecked(&mut junk[..]));
        assert!(junk[field::RESERVED_09].iter().all(|&x| x == 0));
        assert!(junk[field::RESERVED_50].iter().all(|&x| x == 0));
        assert_eq!(
            Rqe::new_checked(&b[..127]),
            Err(Truncated {
                layout: "RECV WQE",
                len: 127,
                need: 128
            })
        );
    }
}
