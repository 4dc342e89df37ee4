//! `tx_sched`: round robin over the QPs that have work. Model of
//! `hw/rtl/tx_sched.sv` (default parameters).
//!
//! The grant is recomputed every cycle from that cycle's inputs, not held
//! while not taken. When the grant on the outputs is taken, the pointer moves
//! to `grant_qp + 1`, and the grant computed in that same cycle already
//! starts from the moved pointer, so a QP just served is not named again
//! while another waits.

use crate::dut::Dut;
use crate::ports;

/// QPs (`QPS`); QP numbers are 4 bits.
pub const QPS: usize = 16;

ports! {
    /// Inputs of `tx_sched` (all but `clk`/`rst`).
    pub struct TxSchedIn {
        /// Bit q: tx_engine has a WQE of QP q in progress.
        pub req_active: u16 = 16,
        /// Bit q: sq_fetch has a fetched WQE of QP q.
        pub req_avail: u16 = 16,
        /// Bit q: QP q may send (pause / rate limit).
        pub allow: u16 = 16,
        pub grant_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `tx_sched`, all registered.
    pub struct TxSchedOut {
        pub grant_valid: bool = 1,
        pub grant_qp: u8 = 4 if grant_valid,
    }
}

#[derive(Debug, Clone, Default)]
pub struct TxSched {
    grant_valid_q: bool,
    grant_qp_q: u8,
    /// The round-robin pointer: the first QP looked at.
    rr_q: u8,
}

impl TxSched {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> TxSchedOut {
        TxSchedOut {
            grant_valid: self.grant_valid_q,
            grant_qp: self.grant_qp_q,
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
        let want = (i.req_active | i.req_avail) & i.allow;
        let rr_d = if self.grant_valid_q && i.grant_ready {
            (self.grant_qp_q + 1) % QPS as u8
        } else {
            self.rr_q
        };
        let pick = (0..QPS)
            .map(|k| (rr_d as usize + k) % QPS)
            .find(|&q| want >> q & 1 != 0);
        self.grant_valid_q = pick.is_some();
        if let Some(q) = pick {
            self.grant_qp_q = q as u8;
        }
        self.rr_q = rr_d;
        self.outputs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inp(req_active: u16, req_avail: u16, allow: u16, grant_ready: bool) -> TxSchedIn {
        TxSchedIn {
            req_active,
            req_avail,
            allow,
            grant_ready,
        }
    }

    #[test]
    fn nothing_to_do_no_grant() {
        let mut s = TxSched::new();
        s.reset();
        assert!(!s.tick(&inp(0, 0, 0xFFFF, true)).grant_valid);
        // Work, but not allowed.
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
}
