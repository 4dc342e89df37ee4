//! RED/ECN marking probability (DCQCN's form): 0 up to Kmin, linear to Pmax
//! at Kmax, 1 beyond. The depth is the egress queue's bytes before the
//! arriving frame is added, so a lone frame in an empty queue is never
//! marked whatever Kmin is.

use crate::config::Red;
use crate::rng::SplitMix64;

pub fn mark_probability(red: &Red, depth: u64) -> f64 {
    if depth <= red.kmin_bytes {
        0.0
    } else if depth > red.kmax_bytes {
        1.0
    } else {
        // kmin < depth <= kmax, so kmax > kmin and the division is safe.
        red.pmax * (depth - red.kmin_bytes) as f64 / (red.kmax_bytes - red.kmin_bytes) as f64
    }
}

/// Draws only when the answer is in doubt, so runs that never reach Kmin do
/// not consume random numbers (and do not shift later decisions).
pub fn decide(red: &Red, depth: u64, rng: &mut SplitMix64) -> bool {
    let p = mark_probability(red, depth);
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        rng.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: Red = Red {
        kmin_bytes: 0,
        kmax_bytes: 100_000,
        pmax: 0.5,
    };

    #[test]
    fn ends_are_deterministic() {
        let red = Red {
            kmin_bytes: 5_000,
            kmax_bytes: 200_000,
            pmax: 0.01,
        };
        let mut rng = SplitMix64::new(7);
        for d in [0, 4_999, 5_000] {
            assert!((0..1000).all(|_| !decide(&red, d, &mut rng)));
        }
        for d in [200_001, 10_000_000] {
            assert!((0..1000).all(|_| decide(&red, d, &mut rng)));
        }
        // At kmax exactly the probability is pmax, not 1.
        assert_eq!(mark_probability(&red, 200_000), 0.01);
    }

    #[test]
    fn middle_is_binomial() {
        // depth 50,000: p = 0.5 * 50,000 / 100,000 = 0.25. Over n = 10,000
        // draws the mean is 2,500 and sigma = sqrt(10,000 * 0.25 * 0.75) =
        // 43.3; five sigma is 217, so 2,283..=2,717.
        assert_eq!(mark_probability(&R, 50_000), 0.25);
        for seed in [1, 2, 3] {
            let mut rng = SplitMix64::new(seed);
            let marks = (0..10_000).filter(|_| decide(&R, 50_000, &mut rng)).count();
            assert!((2_283..=2_717).contains(&marks), "seed {seed}: {marks}");
        }
    }
}
