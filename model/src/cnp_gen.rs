//! `cnp_gen`: turns CE-marked RoCE packets into CNP requests, at most one per
//! QP per interval. Model of `hw/rtl/cnp_gen.sv` (default parameters).
//!
//! Per QP a `pending` bit (a CNP is waiting to be sent) and a `timer` (cycles
//! left in the QP's interval). A CE for QP q is suppressed when `timer[q] != 0`
//! or `pending[q]`; otherwise `pending[q] := 1`, `timer[q] := cfg_interval`.
//! Every timer counts down every cycle, the cycle it is loaded included, so
//! two accepted CEs of a QP are at least `cfg_interval` cycles apart and a CE
//! exactly `cfg_interval` cycles after the last accepted one is accepted
//! (`cfg_interval` 0 and 1 both mean "no interval", only `pending` gates).
//!
//! The output register offers one pending QP (`cnp_valid`, `cnp_qp`), held
//! until taken (`cnp_ready`). The QP's `pending` bit clears when it is taken.
//! Whenever the output is free (nothing offered, or the offer taken this
//! cycle), it loads the first pending QP at or after the round-robin pointer,
//! this cycle's CE and take included; a take moves the pointer to
//! `cnp_qp + 1`. So a CE at n is offered at n+1 when the output is free.

use crate::dut::Dut;
use crate::ports;
use crate::rr_pick::RrPick;

/// QPs (`QPS`); QP numbers are 4 bits.
pub use crate::params::QPS;

ports! {
    /// Inputs of `cnp_gen` (all but `clk`/`rst`).
    pub struct CnpGenIn {
        /// Pulse: a RoCE data packet with ECN CE arrived for `ce_qp`.
        pub ce_valid: bool = 1,
        pub ce_qp: u8 = 4 if ce_valid,
        /// Minimum cycles between two CNPs of one QP.
        pub cfg_interval: u32 = 24,
        pub cnp_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `cnp_gen`, all registered.
    pub struct CnpGenOut {
        /// A CNP for `cnp_qp` is waiting (held until `cnp_ready`).
        pub cnp_valid: bool = 1,
        pub cnp_qp: u8 = 4 if cnp_valid,
        /// Pulse: a CE was seen the cycle before.
        pub ev_ce: bool = 1,
        /// Pulse: that CE was suppressed (interval running or CNP pending).
        pub ev_ce_suppressed: bool = 1,
        /// Pulse: a CNP was taken the cycle before.
        pub ev_cnp: bool = 1,
    }
}

/// The generator. Field names are the RTL's registers (the per-QP vectors
/// there are arrays here).
#[derive(Debug, Clone, Default)]
pub struct CnpGen {
    pending_q: [bool; QPS],
    timer_q: [u32; QPS],
    /// The round robin (`hw/rtl/rr_pick.sv`, instance `u_rr`).
    u_rr: RrPick<QPS>,
    cnp_valid_q: bool,
    cnp_qp_q: u8,
    ev_ce_q: bool,
    ev_ce_suppressed_q: bool,
    ev_cnp_q: bool,
}

impl CnpGen {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> CnpGenOut {
        CnpGenOut {
            cnp_valid: self.cnp_valid_q,
            cnp_qp: self.cnp_qp_q,
            ev_ce: self.ev_ce_q,
            ev_ce_suppressed: self.ev_ce_suppressed_q,
            ev_cnp: self.ev_cnp_q,
        }
    }
}

impl Dut for CnpGen {
    type In = CnpGenIn;
    type Out = CnpGenOut;
    const NAME: &'static str = "cnp_gen";

    fn reset(&mut self) -> CnpGenOut {
        *self = CnpGen::default();
        self.outputs()
    }

    fn tick(&mut self, i: &CnpGenIn) -> CnpGenOut {
        let ce_qp = (i.ce_qp as usize) % QPS;
        let take = self.cnp_valid_q && i.cnp_ready;
        // The CE looks at the registers as they are this cycle: a CE in
        // the cycle its QP's CNP is taken still sees it pending.
        let suppress = i.ce_valid && (self.timer_q[ce_qp] != 0 || self.pending_q[ce_qp]);
        let accept = i.ce_valid && !suppress;

        let mut pend = self.pending_q;
        if take {
            pend[self.cnp_qp_q as usize] = false;
        }
        if accept {
            pend[ce_qp] = true;
        }
        for q in 0..QPS {
            // Loaded, then counted down in the same cycle.
            let t = if accept && q == ce_qp {
                i.cfg_interval & 0xFF_FFFF
            } else {
                self.timer_q[q]
            };
            self.timer_q[q] = t.saturating_sub(1);
        }

        // The picker runs every cycle (its pointer moves on a take); the
        // output register loads its pick only when free.
        let pick = self.u_rr.tick(|q| pend[q], take, self.cnp_qp_q);
        if !self.cnp_valid_q || take {
            self.cnp_valid_q = pick.is_some();
            if let Some(q) = pick {
                self.cnp_qp_q = q;
            }
            // (Nothing pending: cnp_qp keeps its value, as in the RTL.)
        }
        self.pending_q = pend;
        self.ev_ce_q = i.ce_valid;
        self.ev_ce_suppressed_q = suppress;
        self.ev_cnp_q = take;
        self.outputs()
    }
}

impl CnpGen {
    /// Nothing pending or offered: idle ticks (no CE) move only the
    /// interval timers.
    pub fn idle(&self) -> bool {
        !self.cnp_valid_q && !self.pending_q.iter().any(|&p| p)
    }

    /// `n` idle ticks at once (when [`CnpGen::idle`]): the timers count
    /// down to zero.
    pub fn skip(&mut self, n: u64) {
        for t in &mut self.timer_q {
            *t = (*t as u64).saturating_sub(n) as u32;
        }
    }
}

impl crate::trace::Trace for CnpGen {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        t.reg("pending_q", 16, &self.pending_q);
        t.reg("timer_q", 384, &self.timer_q);
        t.reg("cnp_valid_q", 1, &self.cnp_valid_q);
        t.reg("cnp_qp_q", 4, &self.cnp_qp_q);
        t.reg("ev_ce_q", 1, &self.ev_ce_q);
        t.reg("ev_ce_suppressed_q", 1, &self.ev_ce_suppressed_q);
        t.reg("ev_cnp_q", 1, &self.ev_cnp_q);
        t.push("u_rr");
        self.u_rr.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ce(qp: u8, interval: u32, ready: bool) -> CnpGenIn {
        CnpGenIn {
            ce_valid: true,
            ce_qp: qp,
            cfg_interval: interval,
            cnp_ready: ready,
        }
    }

    fn idle(interval: u32, ready: bool) -> CnpGenIn {
        CnpGenIn {
            cfg_interval: interval,
            cnp_ready: ready,
            ..CnpGenIn::default()
        }
    }

    #[test]
    fn ce_offered_next_cycle_and_taken() {
        let mut g = CnpGen::new();
        let o = g.reset();
        assert!(!o.cnp_valid);
        let o = g.tick(&ce(7, 1000, false));
        assert!(o.cnp_valid && o.cnp_qp == 7 && o.ev_ce && !o.ev_ce_suppressed);
        // Held while not taken.
        let o = g.tick(&idle(1000, false));
        assert!(o.cnp_valid && o.cnp_qp == 7 && !o.ev_ce && !o.ev_cnp);
        // Taken: gone the next cycle, ev_cnp pulses.
        let o = g.tick(&idle(1000, true));
        assert!(!o.cnp_valid && o.ev_cnp);
        let o = g.tick(&idle(1000, true));
        assert!(!o.ev_cnp);
    }

    #[test]
    fn interval_gates_exactly() {
        // Interval 10: CE accepted at cycle 0; CEs at 1..=9 suppressed, the
        // one at 10 accepted.
        let mut g = CnpGen::new();
        g.reset();
        let o = g.tick(&ce(3, 10, true));
        assert!(o.cnp_valid && !o.ev_ce_suppressed);
        // Cycle 1: taken; CEs at cycles 1..=9 suppressed.
        for c in 1..10 {
            let o = g.tick(&ce(3, 10, true));
            assert!(o.ev_ce && o.ev_ce_suppressed, "cycle {c}");
            assert!(!o.cnp_valid, "cycle {c}");
        }
        let o = g.tick(&ce(3, 10, true));
        assert!(o.ev_ce && !o.ev_ce_suppressed && o.cnp_valid && o.cnp_qp == 3);
    }

    #[test]
    fn pending_suppresses_after_the_interval() {
        // Interval 2, never taken: the second CE (cycle 5) is suppressed
        // although the interval ended, since the first CNP still waits.
        let mut g = CnpGen::new();
        g.reset();
        g.tick(&ce(1, 2, false));
        for _ in 0..4 {
            g.tick(&idle(2, false));
        }
        let o = g.tick(&ce(1, 2, false));
        assert!(o.ev_ce_suppressed && o.cnp_valid && o.cnp_qp == 1);
        // A CE the cycle its CNP is taken is suppressed too (still pending).
        let o = g.tick(&ce(1, 2, true));
        assert!(o.ev_ce_suppressed && !o.cnp_valid && o.ev_cnp);
        // And the next one, with the interval over and nothing pending, goes.
        let o = g.tick(&ce(1, 2, true));
        assert!(!o.ev_ce_suppressed && o.cnp_valid && o.cnp_qp == 1);
    }

    #[test]
    fn interval_zero_and_one_only_pending_gates() {
        for iv in [0, 1] {
            let mut g = CnpGen::new();
            g.reset();
            let o = g.tick(&ce(2, iv, true));
            assert!(o.cnp_valid);
            // Taken this cycle while a CE of the same QP comes: suppressed
            // (pending); the next cycle's CE is accepted.
            let o = g.tick(&ce(2, iv, true));
            assert!(o.ev_ce_suppressed && !o.cnp_valid);
            let o = g.tick(&ce(2, iv, true));
            assert!(!o.ev_ce_suppressed && o.cnp_valid);
        }
    }

    #[test]
    fn round_robin_over_pending_qps() {
        let mut g = CnpGen::new();
        g.reset();
        // CEs for 9, 2, 12 while nothing is taken: 9 offered first (the
        // first pending one), held.
        let o = g.tick(&ce(9, 100, false));
        assert_eq!((o.cnp_valid, o.cnp_qp), (true, 9));
        let o = g.tick(&ce(2, 100, false));
        assert_eq!(o.cnp_qp, 9);
        let o = g.tick(&ce(12, 100, false));
        assert_eq!(o.cnp_qp, 9);
        // Take 9: pointer at 10, so 12 next, then 2 (wrapping).
        let o = g.tick(&idle(100, true));
        assert_eq!((o.cnp_valid, o.cnp_qp, o.ev_cnp), (true, 12, true));
        let o = g.tick(&idle(100, true));
        assert_eq!((o.cnp_valid, o.cnp_qp), (true, 2));
        let o = g.tick(&idle(100, true));
        assert!(!o.cnp_valid && o.ev_cnp);
    }

    #[test]
    fn ce_while_offer_taken_goes_out_next() {
        // The offer for QP 4 is taken in the same cycle a CE for QP 5
        // arrives: QP 5 is offered right the next cycle.
        let mut g = CnpGen::new();
        g.reset();
        g.tick(&ce(4, 100, false));
        let o = g.tick(&ce(5, 100, true));
        assert_eq!((o.cnp_valid, o.cnp_qp, o.ev_cnp), (true, 5, true));
    }
}
