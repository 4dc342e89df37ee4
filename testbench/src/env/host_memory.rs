//! Sparse byte-addressed host memory.
//!
//! Only 4 KiB pages that were written exist; everything else reads as 0, so a
//! test can place rings and buffers anywhere in the 64-bit space. Addresses
//! wrap at 2^64 (a range running past the top continues at 0) rather than
//! panic: the DUT may emit any address and the environment must survive it.

use std::collections::BTreeMap;

const PAGE_SHIFT: u32 = 12;
const PAGE: usize = 1 << PAGE_SHIFT;

/// Host memory: a map from page number to page contents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostMemory {
    pages: BTreeMap<u64, Box<[u8; PAGE]>>,
}

/// Calls `f(page_number, offset_in_page, range_in_buffer)` for each page piece
/// of `len` bytes at `addr`.
fn for_each_piece(addr: u64, len: usize, mut f: impl FnMut(u64, usize, std::ops::Range<usize>)) {
    let mut done = 0;
    let mut a = addr;
    while done < len {
        let off = (a as usize) & (PAGE - 1);
        let n = (PAGE - off).min(len - done);
        f(a >> PAGE_SHIFT, off, done..done + n);
        done += n;
        a = a.wrapping_add(n as u64);
    }
}

impl HostMemory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Copies `out.len()` bytes at `addr` into `out`.
    pub fn read_into(&self, addr: u64, out: &mut [u8]) {
        for_each_piece(addr, out.len(), |page, off, r| {
            let dst = &mut out[r.clone()];
            match self.pages.get(&page) {
                Some(p) => dst.copy_from_slice(&p[off..off + r.len()]),
                None => dst.fill(0),
            }
        });
    }

    pub fn read(&self, addr: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        self.read_into(addr, &mut v);
        v
    }

    pub fn write(&mut self, addr: u64, data: &[u8]) {
        for_each_piece(addr, data.len(), |page, off, r| {
            let p = self
                .pages
                .entry(page)
                .or_insert_with(|| Box::new([0; PAGE]));
            p[off..off + r.len()].copy_from_slice(&data[r]);
        });
    }

    /// Writes [`pattern_bytes`]`(seed, len)` at `addr`.
    pub fn fill_pattern(&mut self, addr: u64, len: usize, seed: u64) {
        self.write(addr, &pattern_bytes(seed, len));
    }

    /// [`digest`] of `len` bytes at `addr`.
    pub fn digest_range(&self, addr: u64, len: usize) -> u64 {
        digest(&self.read(addr, len))
    }

    /// Number of 4 KiB pages ever written.
    pub fn pages(&self) -> usize {
        self.pages.len()
    }
}

/// The deterministic fill pattern, part of the test-vector format (so never
/// change it): the state starts as the first SplitMix64 output for `seed`
/// (forced to 1 if that is 0, as xorshift needs a non-zero state); byte `i` is
/// the top byte of the `i+1`-th xorshift64* output (Vigna 2016: `x ^= x >> 12;
/// x ^= x << 25; x ^= x >> 27; out = x * 0x2545F4914F6CDD1D`). The pattern
/// depends on the seed only, not on the address it is written to.
pub fn pattern_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = super::SplitMix64::new(seed).next_u64();
    if x == 0 {
        x = 1;
    }
    (0..len)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// FNV-1a 64 of `bytes` (offset basis 0xcbf29ce484222325, prime
/// 0x100000001b3): the digest used for expected memory contents and frames.
pub fn digest(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwritten_reads_zero_and_writes_span_pages() {
        let mut m = HostMemory::new();
        assert_eq!(m.read(0xdead_0000, 8), vec![0; 8]);
        let data: Vec<u8> = (0..=255).collect();
        m.write(0x1F80, &data); // crosses the 0x2000 page boundary
        assert_eq!(m.read(0x1F80, 256), data);
        assert_eq!(m.read(0x1F7F, 2), vec![0, 0]);
        assert_eq!(m.read(0x2080, 1), vec![0]);
        assert_eq!(m.pages(), 2);
        assert_eq!(m.read(0, 4), vec![0; 4]);
        assert_eq!(m.pages(), 2, "reads allocate nothing");
    }

    #[test]
    fn wraps_at_the_top_of_the_address_space() {
        let mut m = HostMemory::new();
        m.write(u64::MAX - 1, &[1, 2, 3, 4]);
        assert_eq!(m.read(0, 2), vec![3, 4]);
        assert_eq!(m.read(u64::MAX - 1, 4), vec![1, 2, 3, 4]);
    }

    #[test]
    fn pattern_is_deterministic_and_seeded() {
        let a = pattern_bytes(42, 1000);
        assert_eq!(a, pattern_bytes(42, 1000));
        assert_ne!(a, pattern_bytes(43, 1000));
        assert_eq!(&pattern_bytes(42, 10)[..], &a[..10], "prefix-stable");
        let mut m = HostMemory::new();
        m.fill_pattern(0x10_0003, 1000, 42);
        assert_eq!(m.read(0x10_0003, 1000), a);
        // Roughly uniform bytes: every value shows up in 64 KiB.
        let big = pattern_bytes(1, 65536);
        let mut seen = [false; 256];
        big.iter().for_each(|&b| seen[b as usize] = true);
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn fnv1a_known_answers() {
        // Published FNV-1a 64 test vectors.
        assert_eq!(digest(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(digest(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(digest(b"foobar"), 0x8594_4171_f739_67e8);
        let mut m = HostMemory::new();
        m.write(0x40, b"foobar");
        assert_eq!(m.digest_range(0x40, 6), digest(b"foobar"));
    }
}
