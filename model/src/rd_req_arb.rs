//! `rd_req_arb`: round-robin arbiter of `dma_rd`'s read requests. Model of
//! `hw/rtl/rd_req_arb.sv` (same register names).
//!
//! Input `a` is client 0 (sq_fetch's WQE reads), `b` client 1 (tx_engine's
//! payload reads), `c` client 2 (rq_fetch's RECV WQE reads), `d` client 3
//! (the READ responder's host reads); `o_client` says which. The arbiter is
//! `skid_arb` (`u_arb`, N = 4, one request per item, no packets): one skid
//! entry and a registered ready per input, so one input alone streams a
//! request per cycle, busy inputs take turns and idle ones take none.
//! Input transferred at n -> visible on `o_*` at n+1 when the output is
//! free.

use crate::dut::Dut;
use crate::ports;
use crate::skid_arb::{SkidArb, SkidArbIn, SkidArbOut, SkidItem};

ports! {
    /// Inputs of `rd_req_arb` (all but `clk`/`rst`).
    pub struct RdReqArbIn {
        pub a_valid: bool = 1,
        pub a_addr: u64 = 64 if a_valid,
        pub a_len: u32 = 17 if a_valid,
        pub b_valid: bool = 1,
        pub b_addr: u64 = 64 if b_valid,
        pub b_len: u32 = 17 if b_valid,
        pub c_valid: bool = 1,
        pub c_addr: u64 = 64 if c_valid,
        pub c_len: u32 = 17 if c_valid,
        pub d_valid: bool = 1,
        pub d_addr: u64 = 64 if d_valid,
        pub d_len: u32 = 17 if d_valid,
        pub o_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `rd_req_arb`, all registered.
    pub struct RdReqArbOut {
        pub a_ready: bool = 1,
        pub b_ready: bool = 1,
        pub c_ready: bool = 1,
        pub d_ready: bool = 1,
        pub o_valid: bool = 1,
        pub o_addr: u64 = 64 if o_valid,
        pub o_len: u32 = 17 if o_valid,
        /// The input: 0 a, 1 b, 2 c, 3 d (two bits, dma_rd's CLIENT_W).
        pub o_client: u8 = 2 if o_valid,
    }
}

/// A request as `skid_arb` carries it (the RTL's item `{addr, len}`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct RdReq {
    addr: u64,
    len: u32,
}

impl SkidItem for RdReq {
    /// `{addr, len}`: len in bits 16..0.
    const W: u32 = 64 + 17;
    fn pack(&self, b: &mut crate::trace::Bits) {
        b.push(self.len as u64, 17);
        b.push(self.addr, 64);
    }
    // Every request is its own packet (the RTL instantiates PACKETS = 0).
    fn last(&self) -> bool {
        true
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RdReqArb {
    u_arb: SkidArb<RdReq, 4, false>,
}

impl RdReqArb {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> RdReqArbOut {
        Self::ports(&self.u_arb.outputs())
    }

    fn ports(o: &SkidArbOut<RdReq, 4>) -> RdReqArbOut {
        RdReqArbOut {
            a_ready: o.in_ready[0],
            b_ready: o.in_ready[1],
            c_ready: o.in_ready[2],
            d_ready: o.in_ready[3],
            o_valid: o.o_valid,
            o_addr: o.o_data.addr,
            o_len: o.o_data.len,
            o_client: o.o_sel,
        }
    }
}

impl Dut for RdReqArb {
    type In = RdReqArbIn;
    type Out = RdReqArbOut;
    const NAME: &'static str = "rd_req_arb";

    fn reset(&mut self) -> RdReqArbOut {
        *self = RdReqArb::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RdReqArbIn) -> RdReqArbOut {
        let req = |addr, len: u32| RdReq {
            addr,
            len: len & 0x1_FFFF,
        };
        let o = self.u_arb.tick(&SkidArbIn {
            in_valid: [i.a_valid, i.b_valid, i.c_valid, i.d_valid],
            in_data: [
                req(i.a_addr, i.a_len),
                req(i.b_addr, i.b_len),
                req(i.c_addr, i.c_len),
                req(i.d_addr, i.d_len),
            ],
            o_ready: i.o_ready,
        });
        Self::ports(&o)
    }
}

impl crate::trace::Trace for RdReqArb {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        t.push("u_arb");
        self.u_arb.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(a: Option<(u64, u32)>, b: Option<(u64, u32)>, o_ready: bool) -> RdReqArbIn {
        RdReqArbIn {
            a_valid: a.is_some(),
            a_addr: a.map_or(0, |x| x.0),
            a_len: a.map_or(0, |x| x.1),
            b_valid: b.is_some(),
            b_addr: b.map_or(0, |x| x.0),
            b_len: b.map_or(0, |x| x.1),
            o_ready,
            ..Default::default()
        }
    }

    #[test]
    fn one_input_streams_one_per_cycle_with_one_cycle_latency() {
        let mut m = RdReqArb::new();
        let o = m.reset();
        assert!(o.a_ready && o.b_ready && !o.o_valid);
        let o = m.tick(&req(Some((0x1000, 64)), None, true));
        assert_eq!(
            (o.o_valid, o.o_addr, o.o_len, o.o_client),
            (true, 0x1000, 64, 0)
        );
        let o = m.tick(&req(Some((0x1040, 128)), None, true));
        assert_eq!((o.o_addr, o.o_len, o.a_ready), (0x1040, 128, true));
        let o = m.tick(&req(None, Some((0x2000, 1)), true));
        assert_eq!((o.o_addr, o.o_client), (0x2000, 1));
        let o = m.tick(&req(None, None, true));
        assert!(!o.o_valid);
    }

    #[test]
    fn two_busy_inputs_alternate_and_the_loser_waits_in_its_skid_entry() {
        let mut m = RdReqArb::new();
        m.reset();
        // Both offer at cycle 0: a wins (pointer starts at a), b is skidded.
        let o = m.tick(&req(Some((0xA0, 1)), Some((0xB0, 2)), true));
        assert_eq!(
            (o.o_addr, o.o_client, o.a_ready, o.b_ready),
            (0xA0, 0, true, false)
        );
        // a offers its second; b's skid entry has priority now.
        let o = m.tick(&req(Some((0xA1, 3)), Some((0xB1, 4)), true));
        assert_eq!(
            (o.o_addr, o.o_client, o.a_ready, o.b_ready),
            (0xB0, 1, false, true)
        );
        // a's skid entry goes out, b's second is taken and skidded.
        let o = m.tick(&req(Some((0xA2, 5)), Some((0xB1, 4)), true));
        assert_eq!(
            (o.o_addr, o.o_len, o.a_ready, o.b_ready),
            (0xA1, 3, true, false)
        );
        let o = m.tick(&req(Some((0xA2, 5)), None, true));
        assert_eq!((o.o_addr, o.o_client), (0xB1, 1));
        let o = m.tick(&req(None, None, true));
        assert_eq!((o.o_addr, o.o_client), (0xA2, 0));
    }

    #[test]
    fn four_busy_inputs_take_turns_from_the_one_after_the_last_grant() {
        let mut m = RdReqArb::new();
        m.reset();
        let all = RdReqArbIn {
            a_valid: true,
            a_addr: 0xA,
            b_valid: true,
            b_addr: 0xB,
            c_valid: true,
            c_addr: 0xC,
            d_valid: true,
            d_addr: 0xD,
            o_ready: true,
            ..Default::default()
        };
        // a first after reset, then b, c, d from their skid entries, then a.
        let got: Vec<(u64, u8)> = (0..5)
            .map(|_| {
                let o = m.tick(&all);
                (o.o_addr, o.o_client)
            })
            .collect();
        assert_eq!(got, [(0xA, 0), (0xB, 1), (0xC, 2), (0xD, 3), (0xA, 0)]);
        // Only c and a busy after c was granted: d is skipped, a is next.
        let mut m = RdReqArb::new();
        m.reset();
        let ca = RdReqArbIn {
            b_valid: false,
            d_valid: false,
            ..all
        };
        let got: Vec<u8> = (0..4).map(|_| m.tick(&ca).o_client).collect();
        assert_eq!(got, [0, 2, 0, 2]);
    }

    #[test]
    fn back_pressure_holds_the_output_and_fills_the_skid_entry() {
        let mut m = RdReqArb::new();
        m.reset();
        m.tick(&req(Some((1, 1)), None, false));
        let o = m.tick(&req(Some((2, 2)), None, false));
        // Output holds request 1, request 2 sits in the skid entry.
        assert_eq!((o.o_valid, o.o_addr, o.a_ready), (true, 1, false));
        let o = m.tick(&req(Some((3, 3)), None, false));
        assert_eq!((o.o_addr, o.a_ready), (1, false));
        let o = m.tick(&req(Some((3, 3)), None, true));
        assert_eq!((o.o_addr, o.a_ready), (2, true));
        let o = m.tick(&req(Some((3, 3)), None, true));
        assert_eq!(o.o_addr, 3);
    }
}
