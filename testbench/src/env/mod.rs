//! Environment models around the DUT: host memory and the PCIe root complex.

pub mod host_memory;
pub mod root_complex;

pub use host_memory::{digest, pattern_bytes, HostMemory};
pub use root_complex::{
    ConfigError, Direction, Fault, FaultKind, ReadyPolicy, RootComplex, RootComplexConfig,
    RootComplexError, RootComplexOut, RqIn, SplitMode, TlpLogEntry,
};

/// SplitMix64 (Steele, Lea, Flood 2014; the seeding generator of
/// xoshiro/xorshift): every seed, 0 included, gives a full-period stream.
/// Written out here rather than taken from `rand` so that a seed in a test
/// vector means the same stream forever, whatever crate versions change.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0); the modulo bias is below 2^-40 for the
    /// small `n` used here, irrelevant for stimulus.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: u8) -> bool {
        self.below(100) < percent as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_known_answer() {
        // First outputs for seed 0 (reference C implementation by S. Vigna).
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }
}
