//! `wr_arb`: round-robin arbiter of `dma_wr`'s clients, `cq_writer` (a,
//! client 0) and `rx_wr` (b, client 1). Model of `hw/rtl/wr_arb.sv` (same
//! register names; contract: docs/responder.md, "rx_wr and wr_arb").
//!
//! The request channels go through `skid_arb` (`u_arb`, one request per
//! item); a request taken by `dma_wr` pushes `{client, beats}` into the order
//! FIFO (`u_ord`), and the data channel passes exactly `ceil(len/64)` beats
//! of that client per request, in that order, through a 2-entry FIFO
//! (`u_dq`). A request is offered only while the order FIFO has room.

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::skid_arb::{SkidArb, SkidArbIn, SkidItem};
use crate::sync_fifo::SyncFifo;
use crate::trace::{Trace, Tracer};

/// Order FIFO depth (`ORD`): requests taken whose data has not all passed.
pub const ORD: usize = 4;

ports! {
    /// Inputs of `wr_arb` (all but `clk`/`rst`).
    pub struct WrArbIn {
        pub a_req_valid: bool = 1,
        pub a_req_addr: u64 = 64 if a_req_valid,
        pub a_req_len: u32 = 17 if a_req_valid,
        pub a_data_valid: bool = 1,
        pub a_data: Beat = 512 if a_data_valid,
        pub b_req_valid: bool = 1,
        pub b_req_addr: u64 = 64 if b_req_valid,
        pub b_req_len: u32 = 17 if b_req_valid,
        pub b_data_valid: bool = 1,
        pub b_data: Beat = 512 if b_data_valid,
        pub wr_req_ready: bool = 1,
        pub wr_data_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `wr_arb`, all decodes of registers.
    pub struct WrArbOut {
        pub a_req_ready: bool = 1,
        pub a_data_ready: bool = 1,
        pub b_req_ready: bool = 1,
        pub b_data_ready: bool = 1,
        pub wr_req_valid: bool = 1,
        pub wr_req_addr: u64 = 64 if wr_req_valid,
        pub wr_req_len: u32 = 17 if wr_req_valid,
        /// 0: a (cq_writer), 1: b (rx_wr).
        pub wr_req_client: bool = 1 if wr_req_valid,
        pub wr_data_valid: bool = 1,
        pub wr_data: Beat = 512 if wr_data_valid,
    }
}

/// A request as `skid_arb` carries it (`{addr, len}`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct WrReq {
    addr: u64,
    len: u32,
}

impl SkidItem for WrReq {
    const W: u32 = 64 + 17;
    fn pack(&self, b: &mut crate::trace::Bits) {
        b.push(self.len as u64, 17);
        b.push(self.addr, 64);
    }
    // Every request is its own item (PACKETS = 0).
    fn last(&self) -> bool {
        true
    }
}

/// The arbiter. Field names are the RTL's registers and instances.
#[derive(Debug, Clone, PartialEq)]
pub struct WrArb {
    u_arb: SkidArb<WrReq, 2, false>,
    /// `{client, beats}` of the requests taken, oldest first.
    u_ord: SyncFifo<(bool, u32)>,
    u_dq: SyncFifo<Beat>,
    cnt_q: u32,
}

impl Default for WrArb {
    fn default() -> Self {
        WrArb {
            u_arb: SkidArb::new(),
            u_ord: SyncFifo::new(ORD),
            u_dq: SyncFifo::new(2),
            cnt_q: 0,
        }
    }
}

impl WrArb {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> WrArbOut {
        let a = self.u_arb.outputs();
        let (sel, _) = self.u_ord.out_data();
        let head = self.u_ord.out_valid() && self.u_dq.in_ready();
        WrArbOut {
            a_req_ready: a.in_ready[0],
            a_data_ready: head && !sel,
            b_req_ready: a.in_ready[1],
            b_data_ready: head && sel,
            wr_req_valid: a.o_valid && self.u_ord.in_ready(),
            wr_req_addr: a.o_data.addr,
            wr_req_len: a.o_data.len,
            wr_req_client: a.o_sel == 1,
            wr_data_valid: self.u_dq.out_valid(),
            wr_data: self.u_dq.out_data(),
        }
    }
}

impl Dut for WrArb {
    type In = WrArbIn;
    type Out = WrArbOut;
    const NAME: &'static str = "wr_arb";

    fn reset(&mut self) -> WrArbOut {
        *self = WrArb::default();
        self.outputs()
    }

    fn tick(&mut self, i: &WrArbIn) -> WrArbOut {
        let o = self.outputs();
        let arb = self.u_arb.outputs();
        let ord_in_ready = self.u_ord.in_ready();
        let take = arb.o_valid && ord_in_ready && i.wr_req_ready;
        let beats = (arb.o_data.len + 63) >> 6;

        let (sel, n) = self.u_ord.out_data();
        let pass = (i.a_data_valid && o.a_data_ready) || (i.b_data_valid && o.b_data_ready);
        let pass_data = if sel { i.b_data } else { i.a_data };
        let pop = pass && self.cnt_q + 1 == n;
        if pass {
            self.cnt_q = if pop { 0 } else { self.cnt_q + 1 };
        }

        self.u_ord
            .tick(take.then_some((arb.o_sel == 1, beats)), pop);
        self.u_dq.tick(pass.then_some(pass_data), i.wr_data_ready);
        self.u_arb.tick(&SkidArbIn {
            in_valid: [i.a_req_valid, i.b_req_valid],
            in_data: [
                WrReq {
                    addr: i.a_req_addr,
                    len: i.a_req_len & 0x1_FFFF,
                },
                WrReq {
                    addr: i.b_req_addr,
                    len: i.b_req_len & 0x1_FFFF,
                },
            ],
            o_ready: ord_in_ready && i.wr_req_ready,
        });
        self.outputs()
    }
}

impl Trace for WrArb {
    /// The RTL's registers: the instances' in their scopes, then `cnt_q`.
    fn trace(&self, t: &mut dyn Tracer) {
        t.push("u_arb");
        self.u_arb.trace(t);
        t.pop();
        // Order entries `{client, beats}`: beats in the low 11 bits.
        t.push("u_ord");
        self.u_ord
            .trace_map(t, 12, |&(c, n)| (c as u64) << 11 | n as u64);
        t.pop();
        t.push("u_dq");
        self.u_dq.trace_all(t, 512);
        t.pop();
        t.reg("cnt_q", 11, &self.cnt_q);
    }
}

#[cfg(test)]
mod tests;
