//! `rate_limiter`: per-QP token bucket of the DCQCN rate. Model of
//! `hw/rtl/rate_limiter.sv` (default parameters).
//!
//! `tokens[q]` is signed, in 2^-20 byte (the rate unit is 2^-20 byte per
//! cycle). Each cycle: `t = min(tokens + rate[q], cfg_burst << 20)`; a charge
//! (a data frame of `charge_qp` committed to pkt_builder) then takes
//! `(charge_len + 24) << 20` (24 = FCS + preamble + inter-frame gap).
//! `rate_ok[q]` (registered) = `!cc_en[q] || t >= 0`: a QP may start a frame
//! while its bucket is not in debt, and one frame may take it into debt.
//! While `cc_en[q] = 0` the bucket is held full (`cfg_burst` bytes), so CC
//! starts with a full bucket.

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::trace::{Trace, Tracer};

/// QPs (`QPS`); QP numbers are 4 bits.
pub use crate::params::QPS;
/// Token register width: the cap is below 2^44 and cap + rate below 2^45;
/// the rest is room for debt (over a thousand maximal frames charged past an
/// empty bucket, far more than can be in flight between `rate_ok` and the
/// charge).
pub const TW: u32 = 46;

ports! {
    /// Inputs of `rate_limiter` (all but `clk`/`rst`).
    pub struct RateLimiterIn {
        /// dcqcn's current rate Rc of QP q (2^-20 byte per cycle) at bytes
        /// `[4q, 4q + 4)`, little-endian (bits `[32q, 32q + 32)`).
        pub rate: Beat = 512,
        /// Bit q: QP q uses congestion control.
        pub cc_en: u16 = 16,
        /// Bucket cap in bytes.
        pub cfg_burst: u32 = 24,
        /// Pulse: a data frame of `charge_qp` was committed.
        pub charge_valid: bool = 1,
        pub charge_qp: u8 = 4 if charge_valid,
        /// The frame's bytes without FCS.
        pub charge_len: u16 = 14 if charge_valid,
    }
}

ports! {
    /// Outputs of `rate_limiter`, registered.
    pub struct RateLimiterOut {
        /// Bit q: QP q may start a frame.
        pub rate_ok: u16 = 16,
    }
}

/// QP q's rate from the `rate` bus.
pub fn rate_of(rate: &Beat, q: usize) -> u32 {
    u32::from_le_bytes(rate[4 * q..4 * q + 4].try_into().unwrap())
}

/// Sets QP q's rate on the `rate` bus.
pub fn set_rate(rate: &mut Beat, q: usize, r: u32) {
    rate[4 * q..4 * q + 4].copy_from_slice(&r.to_le_bytes());
}

/// `x` as the RTL's TW-bit two's complement register holds it.
fn wrap(x: i64) -> i64 {
    (x << (64 - TW)) >> (64 - TW)
}

#[derive(Debug, Clone)]
pub struct RateLimiter {
    /// Per QP, signed, 2^-20 byte.
    tokens_q: [i64; QPS],
    rate_ok_q: u16,
}

impl Default for RateLimiter {
    fn default() -> Self {
        // Reset: empty (not in debt) buckets, every QP allowed.
        RateLimiter {
            tokens_q: [0; QPS],
            rate_ok_q: 0xFFFF,
        }
    }
}

impl RateLimiter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> RateLimiterOut {
        RateLimiterOut {
            rate_ok: self.rate_ok_q,
        }
    }
}

impl Dut for RateLimiter {
    type In = RateLimiterIn;
    type Out = RateLimiterOut;
    const NAME: &'static str = "rate_limiter";

    fn reset(&mut self) -> RateLimiterOut {
        *self = RateLimiter::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RateLimiterIn) -> RateLimiterOut {
        let cap = ((i.cfg_burst & 0xFF_FFFF) as i64) << 20;
        let cost = (((i.charge_len & 0x3FFF) as i64) + 24) << 20;
        let mut ok = 0u16;
        for q in 0..QPS {
            let sum = wrap(self.tokens_q[q] + rate_of(&i.rate, q) as i64);
            let mut t = sum.min(cap);
            if i.charge_valid && (i.charge_qp & 0xF) as usize == q {
                t = wrap(t - cost);
            }
            if (i.cc_en >> q) & 1 != 0 {
                self.tokens_q[q] = t;
                ok |= ((t >= 0) as u16) << q;
            } else {
                self.tokens_q[q] = cap;
                ok |= 1 << q;
            }
        }
        self.rate_ok_q = ok;
        self.outputs()
    }
}

impl RateLimiter {
    /// Ticks with inputs `i` (no charge) for which `rate_ok` stays as it
    /// is: a bucket below zero fills by its rate every cycle (capped at
    /// the burst) and turns ok once it reaches zero. 0 when a charge is
    /// offered.
    pub fn idle_horizon(&self, i: &RateLimiterIn) -> u64 {
        if i.charge_valid {
            return 0;
        }
        let mut h = u64::MAX;
        for q in 0..QPS {
            let t = self.tokens_q[q];
            let rate = rate_of(&i.rate, q) as i64;
            if (i.cc_en >> q) & 1 == 0 || t >= 0 || rate == 0 {
                continue;
            }
            // Ticks until t + k * rate >= 0, less the one that turns ok.
            h = h.min(((-t) as u64).div_ceil(rate as u64) - 1);
        }
        h
    }

    /// `n` ticks with inputs `i` at once (`n` within the horizon): each
    /// bucket is `min(cap, t + n * rate)`, which is what n steps of
    /// "add the rate, cap at the burst" give (the rate is never negative,
    /// and t <= 2^44 keeps every step inside the 46-bit range).
    pub fn skip(&mut self, i: &RateLimiterIn, n: u64) {
        if n == 0 {
            return;
        }
        let cap = ((i.cfg_burst & 0xFF_FFFF) as i64) << 20;
        for q in 0..QPS {
            self.tokens_q[q] = if (i.cc_en >> q) & 1 != 0 {
                let n = i64::try_from(n).unwrap_or(i64::MAX);
                let fill = (rate_of(&i.rate, q) as i64).saturating_mul(n);
                self.tokens_q[q].saturating_add(fill).min(cap)
            } else {
                cap
            };
        }
    }
}

impl Trace for RateLimiter {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("tokens_q", 736, &self.tokens_q);
        t.reg("rate_ok_q", 16, &self.rate_ok_q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inp(cc_en: u16, burst: u32, rates: &[(usize, u32)]) -> RateLimiterIn {
        let mut rate = Beat::default();
        for &(q, r) in rates {
            set_rate(&mut rate, q, r);
        }
        RateLimiterIn {
            rate,
            cc_en,
            cfg_burst: burst,
            ..RateLimiterIn::default()
        }
    }

    fn charge(mut i: RateLimiterIn, qp: u8, len: u16) -> RateLimiterIn {
        i.charge_valid = true;
        i.charge_qp = qp;
        i.charge_len = len;
        i
    }

    #[test]
    fn rate_bus_layout_is_32_bits_per_qp_little_endian() {
        let mut b = Beat::default();
        set_rate(&mut b, 3, 0x1234_5678);
        assert_eq!(&b[12..16], &[0x78, 0x56, 0x34, 0x12]);
        assert_eq!(rate_of(&b, 3), 0x1234_5678);
        assert_eq!(rate_of(&b, 2), 0);
    }

    #[test]
    fn cc_off_is_always_ok_and_charges_do_nothing() {
        let mut m = RateLimiter::new();
        assert_eq!(m.reset().rate_ok, 0xFFFF);
        let i = inp(0, 100, &[]);
        for _ in 0..5 {
            assert_eq!(m.tick(&charge(i, 7, 9000)).rate_ok, 0xFFFF);
        }
    }

    #[test]
    fn a_full_bucket_takes_frames_until_in_debt_then_refills_at_the_rate() {
        let mut m = RateLimiter::new();
        m.reset();
        // Cap 1000 bytes; QP 2 has rate 2^19 (half a byte per cycle).
        let off = inp(0, 1000, &[(2, 1 << 19)]);
        m.tick(&off); // bucket full: 1000 bytes
        let on = inp(1 << 2, 1000, &[(2, 1 << 19)]);
        // Frame of 476 bytes (+24 = 500): min(1000 + 0.5, 1000) - 500 = 500.
        assert_eq!(m.tick(&charge(on, 2, 476)).rate_ok, 0xFFFF);
        // 500.5 - 500 = 0.5 bytes: still >= 0.
        assert_eq!(m.tick(&charge(on, 2, 476)).rate_ok, 0xFFFF);
        // 1.0 - 500 = -499: QP 2 blocked, the others not.
        assert_eq!(m.tick(&charge(on, 2, 476)).rate_ok, !(1u16 << 2));
        // -499 + 0.5 per cycle: back to >= 0 after 998 more cycles.
        for k in 1..998 {
            assert_eq!(m.tick(&on).rate_ok, !(1u16 << 2), "cycle {k}");
        }
        assert_eq!(m.tick(&on).rate_ok, 0xFFFF);
    }

    #[test]
    fn the_cap_bounds_the_bucket_and_switching_cc_off_refills_it() {
        let mut m = RateLimiter::new();
        m.reset();
        // CC on from reset: tokens start at 0. Rate 100 B/cycle, cap 300 B:
        // after many cycles the bucket holds 300 B, not more.
        let on = inp(1, 300, &[(0, 100 << 20)]);
        for _ in 0..10 {
            m.tick(&on);
        }
        // 300 - (276 + 24) = 0: ok. A second one: min(0 + 100, 300) - 300
        // = -200: blocked.
        assert_eq!(m.tick(&charge(on, 0, 276)).rate_ok & 1, 1);
        assert_eq!(m.tick(&charge(on, 0, 276)).rate_ok & 1, 0);
        // -200 + 100 = -100: blocked; then 0: ok.
        assert_eq!(m.tick(&on).rate_ok & 1, 0);
        assert_eq!(m.tick(&on).rate_ok & 1, 1);
        // Into debt again, then CC off: full bucket at once, so with CC back
        // on a 300-byte frame passes from the first cycle.
        m.tick(&charge(on, 0, 1000));
        let off = inp(0, 300, &[(0, 0)]);
        assert_eq!(m.tick(&off).rate_ok & 1, 1);
        let on0 = inp(1, 300, &[(0, 0)]);
        assert_eq!(m.tick(&charge(on0, 0, 276)).rate_ok & 1, 1);
        assert_eq!(m.tick(&charge(on0, 0, 0)).rate_ok & 1, 0);
    }

    #[test]
    fn the_largest_values_fit() {
        let mut m = RateLimiter::new();
        m.reset();
        // Cap 2^24 - 1 bytes (filled by CC off), rate 2^32 - 1: the bucket
        // stays at the cap;
        // a 16383-byte frame leaves cap - 16407 bytes.
        m.tick(&inp(0, 0xFF_FFFF, &[(0, u32::MAX)]));
        let i = inp(1, 0xFF_FFFF, &[(0, u32::MAX)]);
        m.tick(&i);
        assert_eq!(m.tokens_q[0], 0xFF_FFFF << 20);
        m.tick(&charge(i, 0, 0x3FFF));
        assert_eq!(m.tokens_q[0], (0xFF_FFFF - 16407) << 20);
    }
}
