//! `tx_sched`: a waiting control frame first, else round robin over the QPs
//! that have work and may send. Model of `hw/rtl/tx_sched.sv` (default
//! parameters).
//!
//! The grant is recomputed every cycle from that cycle's inputs, not held
//! while not taken: `ctrl_req` gives a control grant (`grant_ctrl`,
//! `grant_qp` 0; control frames win over data and are never paused), unless
//! [`CTRL_BURST`] control grants were taken since the last data grant taken
//! (`ctrl_run_q`) and a data QP is eligible: then that QP goes (data gets at
//! least one of every `CTRL_BURST + 1` grants, a control frame waits at most
//! one data grant); else
//! the first eligible QP at or after the round-robin pointer, eligible
//! meaning it has work, `rate_ok` and its priority (`qp_pcp`) not paused.
//! When a data grant on the outputs is taken, the pointer moves to
//! `grant_qp + 1` (a control grant leaves it alone), and the grant computed
//! in that same cycle already starts from the moved pointer, so a QP just
//! served is not named again while another waits.

use crate::dut::Dut;
use crate::ports;
use crate::rr_pick::RrPick;

/// Control grants in a row after which waiting data goes first.
pub use crate::params::CTRL_BURST;
/// QPs (`QPS`); QP numbers are 4 bits.
pub use crate::params::QPS;

ports! {
    /// Inputs of `tx_sched` (all but `clk`/`rst`).
    pub struct TxSchedIn {
        /// Bit q: tx_engine has a WQE of QP q in progress.
        pub req_active: u16 = 16,
        /// Bit q: sq_fetch has a fetched WQE of QP q.
        pub req_avail: u16 = 16,
        /// Bit q: QP q's rate limiter lets it start a frame.
        pub rate_ok: u16 = 16,
        /// Bit p: 802.1p priority p is paused (PFC).
        pub pause: u8 = 8,
        /// QP q's priority at bits `[3q, 3q + 3)`.
        pub qp_pcp: u64 = 48,
        /// A control frame is waiting.
        pub ctrl_req: bool = 1,
        pub grant_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `tx_sched`, all registered.
    pub struct TxSchedOut {
        pub grant_valid: bool = 1,
        pub grant_qp: u8 = 4 if grant_valid,
        /// The grant is for the control frame (then `grant_qp` is 0).
        pub grant_ctrl: bool = 1,
    }
}

/// Bit q: QP q has work, may start a frame and its priority is not paused.
fn eligible(i: &TxSchedIn) -> u16 {
    let mut paused = 0u16;
    for q in 0..QPS {
        let pcp = (i.qp_pcp >> (3 * q)) & 7;
        paused |= ((i.pause >> pcp) as u16 & 1) << q;
    }
    (i.req_active | i.req_avail) & i.rate_ok & !paused
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct TxSched {
    grant_valid_q: bool,
    grant_qp_q: u8,
    grant_ctrl_q: bool,
    /// Control grants taken since the last data grant taken (saturating at
    /// `CTRL_BURST`).
    ctrl_run_q: u8,
    /// The round robin (`hw/rtl/rr_pick.sv`, instance `u_rr`).
    u_rr: RrPick<QPS>,
}

impl TxSched {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> TxSchedOut {
        TxSchedOut {
            grant_valid: self.grant_valid_q,
            grant_qp: self.grant_qp_q,
            grant_ctrl: self.grant_ctrl_q,
        }
    }
}

impl Dut for TxSched {
    type In = TxSchedIn;
    type Out = TxSchedOut;
    const NAME: &'static str = "tx_sched";

    fn reset(&mut self) -> TxSchedOut {
        *self = TxSched::default();
        self.outputs()
    }

    fn tick(&mut self, i: &TxSchedIn) -> TxSchedOut {
        let elig = eligible(i);
        // Only a data grant taken moves the pointer.
        let data_taken = self.grant_valid_q && i.grant_ready && !self.grant_ctrl_q;
        let ctrl_taken = self.grant_valid_q && i.grant_ready && self.grant_ctrl_q;
        if data_taken {
            self.ctrl_run_q = 0;
        } else if ctrl_taken && u32::from(self.ctrl_run_q) != CTRL_BURST {
            self.ctrl_run_q += 1;
        }
        let pick = self
            .u_rr
            .tick(|q| elig >> q & 1 != 0, data_taken, self.grant_qp_q);
        // After CTRL_BURST control grants in a row, a waiting data QP goes.
        let data_turn = pick.is_some() && u32::from(self.ctrl_run_q) == CTRL_BURST;
        self.grant_ctrl_q = i.ctrl_req && !data_turn;
        self.grant_valid_q = i.ctrl_req || pick.is_some();
        if self.grant_ctrl_q {
            self.grant_qp_q = 0;
        } else if let Some(q) = pick {
            self.grant_qp_q = q;
        }
        // (No grant at all: grant_qp keeps its value, as in the RTL.)
        self.outputs()
    }
}

impl crate::trace::Trace for TxSched {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        t.reg("grant_valid_q", 1, &self.grant_valid_q);
        t.reg("grant_qp_q", 4, &self.grant_qp_q);
        t.reg("grant_ctrl_q", 1, &self.grant_ctrl_q);
        t.reg(
            "ctrl_run_q",
            (CTRL_BURST + 1).next_power_of_two().trailing_zeros(),
            &self.ctrl_run_q,
        );
        t.push("u_rr");
        self.u_rr.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// No pause, every QP at priority 0, no control frame.
    fn inp(req_active: u16, req_avail: u16, rate_ok: u16, grant_ready: bool) -> TxSchedIn {
        TxSchedIn {
            req_active,
            req_avail,
            rate_ok,
            grant_ready,
            ..TxSchedIn::default()
        }
    }

    #[test]
    fn nothing_to_do_no_grant() {
        let mut s = TxSched::new();
        s.reset();
        assert!(!s.tick(&inp(0, 0, 0xFFFF, true)).grant_valid);
        // Work, but the rate limiter says no.
        assert!(!s.tick(&inp(0b100, 0b1000, 0b0011, true)).grant_valid);
    }

    #[test]
    fn grant_follows_the_inputs_of_the_cycle_before() {
        let mut s = TxSched::new();
        s.reset();
        // QP 5 has a fetched WQE, QP 9 one in progress; pointer at 0.
        let o = s.tick(&inp(1 << 9, 1 << 5, 0xFFFF, false));
        assert!(o.grant_valid);
        assert_eq!(o.grant_qp, 5);
        // Not taken, QP 5's work gone: recomputed, now QP 9.
        let o = s.tick(&inp(1 << 9, 0, 0xFFFF, false));
        assert_eq!((o.grant_valid, o.grant_qp), (true, 9));
        // Nothing left: the grant drops although never taken.
        let o = s.tick(&inp(0, 0, 0xFFFF, false));
        assert!(!o.grant_valid);
    }

    #[test]
    fn round_robin_visits_every_requester_in_turn() {
        let mut s = TxSched::new();
        s.reset();
        let reqs: u16 = (1 << 2) | (1 << 7) | (1 << 15);
        // Every grant taken at once: 2, 7, 15, 2, 7, 15...
        let mut o = s.tick(&inp(reqs, 0, 0xFFFF, true));
        let mut got = Vec::new();
        for _ in 0..6 {
            assert!(o.grant_valid);
            got.push(o.grant_qp);
            o = s.tick(&inp(reqs, 0, 0xFFFF, true));
        }
        assert_eq!(got, vec![2, 7, 15, 2, 7, 15]);
    }

    #[test]
    fn pointer_moves_only_on_a_transfer() {
        let mut s = TxSched::new();
        s.reset();
        let reqs: u16 = (1 << 1) | (1 << 3);
        let o = s.tick(&inp(reqs, 0, 0xFFFF, false));
        assert_eq!(o.grant_qp, 1);
        // Held off: still QP 1, again and again.
        for _ in 0..3 {
            let o = s.tick(&inp(0, reqs, 0xFFFF, false));
            assert_eq!(o.grant_qp, 1);
        }
        // Taken now: the next grant (computed this cycle) is QP 3.
        let o = s.tick(&inp(0, reqs, 0xFFFF, true));
        assert_eq!(o.grant_qp, 3);
        // Taken: pointer at 4, wraps to QP 1.
        let o = s.tick(&inp(0, reqs, 0xFFFF, true));
        assert_eq!(o.grant_qp, 1);
        // A single requester is granted every cycle.
        let o = s.tick(&inp(0, 1 << 1, 0xFFFF, true));
        assert_eq!((o.grant_valid, o.grant_qp), (true, 1));
        let o = s.tick(&inp(0, 1 << 1, 0xFFFF, true));
        assert_eq!((o.grant_valid, o.grant_qp), (true, 1));
    }

    #[test]
    fn a_paused_priority_is_skipped_others_go_on() {
        let mut s = TxSched::new();
        s.reset();
        // QP 0 at priority 3, QP 1 at 5, QP 2 at 3, the others at 0.
        let qp_pcp: u64 = 3 | (5 << 3) | (3 << 6);
        let i = |pause: u8, ready: bool| TxSchedIn {
            req_avail: 0b0111,
            rate_ok: 0xFFFF,
            pause,
            qp_pcp,
            grant_ready: ready,
            ..TxSchedIn::default()
        };
        // Priority 3 paused: only QP 1 (priority 5) may go, every time.
        let o = s.tick(&i(1 << 3, true));
        assert_eq!((o.grant_valid, o.grant_qp, o.grant_ctrl), (true, 1, false));
        let o = s.tick(&i(1 << 3, true));
        assert_eq!((o.grant_valid, o.grant_qp), (true, 1));
        // Priorities 3 and 5 paused: nothing, though all three have work.
        let o = s.tick(&i(0b0010_1000, false));
        assert!(!o.grant_valid);
        // Pausing priorities nobody uses changes nothing; the pointer is at
        // 2 (QP 1 was taken last): QP 2.
        let o = s.tick(&i(!0b0010_1000, false));
        assert_eq!((o.grant_valid, o.grant_qp), (true, 2));
        // Priority 5 paused: QP 2 still (not taken), then, once it is
        // taken, QP 0 (wrapping past the paused QP 1).
        let o = s.tick(&i(1 << 5, false));
        assert_eq!((o.grant_valid, o.grant_qp), (true, 2));
        let o = s.tick(&i(1 << 5, true));
        assert_eq!((o.grant_valid, o.grant_qp), (true, 0));
    }

    #[test]
    fn a_rate_blocked_qp_is_skipped() {
        let mut s = TxSched::new();
        s.reset();
        // QPs 4, 6 and 9 have work; 6 may not start a frame.
        let o = s.tick(&inp(1 << 4, (1 << 6) | (1 << 9), !(1 << 6), true));
        assert_eq!(o.grant_qp, 4);
        let o = s.tick(&inp(1 << 4, (1 << 6) | (1 << 9), !(1 << 6), true));
        assert_eq!(o.grant_qp, 9);
        // QP 6 allowed again: the pointer is at 10, so 4 comes first.
        let o = s.tick(&inp(1 << 4, (1 << 6) | (1 << 9), 0xFFFF, true));
        assert_eq!(o.grant_qp, 4);
        let o = s.tick(&inp(1 << 4, (1 << 6) | (1 << 9), 0xFFFF, true));
        assert_eq!(o.grant_qp, 6);
    }

    #[test]
    fn control_frames_first_never_paused_pointer_untouched() {
        let mut s = TxSched::new();
        s.reset();
        let data = (1 << 2) | (1 << 8);
        let i = |ctrl_req: bool, pause: u8, ready: bool| TxSchedIn {
            req_avail: data,
            rate_ok: 0xFFFF,
            pause,
            ctrl_req,
            grant_ready: ready,
            ..TxSchedIn::default()
        };
        // Data waiting and a control frame: the control frame wins.
        let o = s.tick(&i(true, 0, false));
        assert_eq!((o.grant_valid, o.grant_ctrl, o.grant_qp), (true, true, 0));
        // Every priority paused: the control frame still goes (taken).
        let o = s.tick(&i(true, 0xFF, true));
        assert_eq!((o.grant_valid, o.grant_ctrl, o.grant_qp), (true, true, 0));
        // Taken again; no control frame now: data, from pointer 0 (control
        // transfers did not move it): QP 2.
        let o = s.tick(&i(false, 0, true));
        assert_eq!((o.grant_valid, o.grant_ctrl, o.grant_qp), (true, false, 2));
        // QP 2 taken in the cycle a control frame arrives: the control grant
        // comes next, then data resumes at QP 8 (the pointer moved past 2).
        let o = s.tick(&i(true, 0, true));
        assert_eq!((o.grant_valid, o.grant_ctrl, o.grant_qp), (true, true, 0));
        let o = s.tick(&i(false, 0, true));
        assert_eq!((o.grant_valid, o.grant_ctrl, o.grant_qp), (true, false, 8));
        // All paused, no control frame: nothing.
        let o = s.tick(&i(false, 0xFF, true));
        assert_eq!((o.grant_valid, o.grant_ctrl), (false, false));
        // A control frame with no data at all.
        let o = s.tick(&TxSchedIn {
            ctrl_req: true,
            ..TxSchedIn::default()
        });
        assert_eq!((o.grant_valid, o.grant_ctrl, o.grant_qp), (true, true, 0));
    }

    #[test]
    fn data_gets_one_grant_after_ctrl_burst_control_grants() {
        let mut s = TxSched::new();
        s.reset();
        // A control frame always waiting, QP 3 always eligible, every grant
        // taken: CTRL_BURST control grants, one data grant, again.
        let i = TxSchedIn {
            req_avail: 1 << 3,
            rate_ok: 0xFFFF,
            ctrl_req: true,
            grant_ready: true,
            ..TxSchedIn::default()
        };
        let got: Vec<bool> = (0..3 * (CTRL_BURST as usize + 1))
            .map(|_| s.tick(&i).grant_ctrl)
            .collect();
        let mut want = Vec::new();
        for _ in 0..3 {
            want.extend(std::iter::repeat_n(true, CTRL_BURST as usize));
            want.push(false);
        }
        assert_eq!(got, want);
        // No data eligible: control goes on past the bound.
        let i = TxSchedIn { req_avail: 0, ..i };
        for _ in 0..2 * CTRL_BURST {
            assert!(s.tick(&i).grant_ctrl);
        }
    }
}
