//! `ack_gen`: the responder's acknowledgements, one pending per QP, offered
//! to the transmit control path. Model of `hw/rtl/ack_gen.sv` (same register
//! names; contract: docs/responder.md, "ack_gen").
//!
//! A request for QP q writes q's row (PSN, syndrome, MSN) and sets
//! `pending[q]`; one that finds q pending replaces the unsent one
//! (coalescing). The output register, whenever free, loads the first pending
//! QP at or after the round-robin pointer (this cycle's request looked
//! through) and clears its pending bit; a take moves the pointer past it
//! (the round robin is `rr_pick`, instance `u_rr`, as in `cnp_gen`).

use crate::dut::Dut;
use crate::ports;
use crate::rr_pick::RrPick;

pub use crate::params::QPS;

ports! {
    /// Inputs of `ack_gen` (all but `clk`/`rst`).
    pub struct AckGenIn {
        /// Pulse: the responder asks for an ACK/NAK on `req_qp`.
        pub req_valid: bool = 1,
        pub req_qp: u8 = 4 if req_valid,
        pub req_psn: u32 = 24 if req_valid,
        /// AETH syndrome (ACK, RNR NAK or NAK with its code).
        pub req_syndrome: u8 = 8 if req_valid,
        pub req_msn: u32 = 24 if req_valid,
        pub ack_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `ack_gen`, all registered.
    pub struct AckGenOut {
        pub ack_valid: bool = 1,
        pub ack_qp: u8 = 4 if ack_valid,
        pub ack_psn: u32 = 24 if ack_valid,
        pub ack_syndrome: u8 = 8 if ack_valid,
        pub ack_msn: u32 = 24 if ack_valid,
        /// Pulse: an acknowledgement was taken the cycle before.
        pub ev_ack: bool = 1,
        /// Pulse: a request replaced an unsent one the cycle before.
        pub ev_coalesced: bool = 1,
    }
}

/// An acknowledgement: PSN, AETH syndrome, MSN (the RTL packs them in one
/// 56-bit row in that order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Row {
    pub psn: u32,
    pub syndrome: u8,
    pub msn: u32,
}

/// The generator. Field names are the RTL's registers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AckGen {
    pending_q: [bool; QPS],
    row_q: [Row; QPS],
    /// The round robin (`hw/rtl/rr_pick.sv`, instance `u_rr`).
    u_rr: RrPick<QPS>,
    ack_valid_q: bool,
    ack_qp_q: u8,
    ack_row_q: Row,
    ev_ack_q: bool,
    ev_coalesced_q: bool,
}

impl AckGen {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> AckGenOut {
        AckGenOut {
            ack_valid: self.ack_valid_q,
            ack_qp: self.ack_qp_q,
            ack_psn: self.ack_row_q.psn,
            ack_syndrome: self.ack_row_q.syndrome,
            ack_msn: self.ack_row_q.msn,
            ev_ack: self.ev_ack_q,
            ev_coalesced: self.ev_coalesced_q,
        }
    }
}

impl Dut for AckGen {
    type In = AckGenIn;
    type Out = AckGenOut;
    const NAME: &'static str = "ack_gen";

    fn reset(&mut self) -> AckGenOut {
        *self = AckGen::default();
        self.outputs()
    }

    fn tick(&mut self, i: &AckGenIn) -> AckGenOut {
        let q = i.req_qp as usize % QPS;
        let take = self.ack_valid_q && i.ack_ready;
        let load = !self.ack_valid_q || take;
        let coalesce = i.req_valid && self.pending_q[q];
        let req_row = Row {
            psn: i.req_psn & 0xFF_FFFF,
            syndrome: i.req_syndrome,
            msn: i.req_msn & 0xFF_FFFF,
        };
        let mut pending = self.pending_q;
        if i.req_valid {
            pending[q] = true;
        }
        // The picker runs every cycle, as in the RTL.
        let pick = self.u_rr.tick(|p| pending[p], take, self.ack_qp_q);
        if load {
            self.ack_valid_q = pick.is_some();
            if let Some(p) = pick {
                let p = p as usize;
                self.ack_qp_q = p as u8;
                self.ack_row_q = if i.req_valid && q == p {
                    req_row
                } else {
                    self.row_q[p]
                };
                pending[p] = false;
            }
        }
        if i.req_valid {
            self.row_q[q] = req_row;
        }
        self.pending_q = pending;
        self.ev_ack_q = take;
        self.ev_coalesced_q = coalesce;
        self.outputs()
    }
}

impl crate::trace::Trace for AckGen {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        // A row as the RTL packs it: {psn, syndrome, msn}.
        let row = |r: &Row| (r.psn as u64) << 32 | (r.syndrome as u64) << 24 | r.msn as u64;
        let rows: [u64; QPS] = core::array::from_fn(|q| row(&self.row_q[q]));
        t.reg("pending_q", QPS as u32, &self.pending_q);
        t.each("row_q", 56, &rows);
        t.reg("ack_valid_q", 1, &self.ack_valid_q);
        t.reg("ack_qp_q", crate::params::QPW, &self.ack_qp_q);
        t.reg("ack_row_q", 56, &row(&self.ack_row_q));
        t.reg("ev_ack_q", 1, &self.ev_ack_q);
        t.reg("ev_coalesced_q", 1, &self.ev_coalesced_q);
        t.push("u_rr");
        self.u_rr.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(qp: u8, psn: u32) -> AckGenIn {
        AckGenIn {
            req_valid: true,
            req_qp: qp,
            req_psn: psn,
            req_syndrome: 0,
            req_msn: psn,
            ack_ready: false,
        }
    }

    /// A request at n is on offer at n+1; one for a pending QP replaces it;
    /// one for the QP on offer goes after it.
    #[test]
    fn offer_coalesce_and_requeue() {
        let mut g = AckGen::new();
        g.reset();
        let o = g.tick(&req(3, 10));
        assert!(o.ack_valid && o.ack_qp == 3 && o.ack_psn == 10);
        // QP 5 twice while QP 3 is on offer: the second replaces the first.
        assert!(!g.tick(&req(5, 20)).ev_coalesced);
        assert!(g.tick(&req(5, 21)).ev_coalesced);
        // QP 3 again while its first ACK is on offer: pending again, not coalesced.
        assert!(!g.tick(&req(3, 11)).ev_coalesced);
        let take = AckGenIn {
            ack_ready: true,
            ..Default::default()
        };
        let o = g.tick(&take);
        assert!(o.ev_ack && o.ack_valid);
        assert_eq!(
            (o.ack_qp, o.ack_psn),
            (5, 21),
            "round robin after 3: 5, newest row"
        );
        let o = g.tick(&take);
        assert_eq!((o.ack_qp, o.ack_psn), (3, 11));
        let o = g.tick(&take);
        assert!(!o.ack_valid && o.ev_ack);
    }
}
