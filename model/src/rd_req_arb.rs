//! `rd_req_arb`: round-robin arbiter of `dma_rd`'s read requests. Model of
//! `hw/rtl/rd_req_arb.sv` (same register names).
//!
//! Input `a` is client 0 (sq_fetch's WQE reads), `b` client 1 (tx_engine's
//! payload reads); `o_client` says which. The arbiter is `skid_arb` (`u_arb`,
//! one request per item, no packets): one skid entry and a registered ready
//! per input, so one input alone streams a request per cycle and two busy
//! inputs alternate. Input transferred at n -> visible on `o_*` at n+1 when
//! the output is free.

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
        pub o_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `rd_req_arb`, all registered.
    pub struct RdReqArbOut {
        pub a_ready: bool = 1,
        pub b_ready: bool = 1,
        pub o_valid: bool = 1,
        pub o_addr: u64 = 64 if o_valid,
        pub o_len: u32 = 17 if o_valid,
        /// 0: input a, 1: input b (two bits, dma_rd's CLIENT_W).
        pub o_client: u8 = 2 if o_valid,
    }
}

/// A request as `skid_arb` carries it (the RTL's item `{addr, len}`).
#[derive(Debug, Clone, Copy, Default)]
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

#[derive(Debug, Clone, Default)]
pub struct RdReqArb {
    u_arb: SkidArb<RdReq, false>,
}

impl RdReqArb {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> RdReqArbOut {
        Self::ports(&self.u_arb.outputs())
    }

    fn ports(o: &SkidArbOut<RdReq>) -> RdReqArbOut {
        RdReqArbOut {
            a_ready: o.a_ready,
            b_ready: o.b_ready,
            o_valid: o.o_valid,
            o_addr: o.o_data.addr,
            o_len: o.o_data.len,
            o_client: o.o_sel as u8,
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
        let o = self.u_arb.tick(&SkidArbIn {
            a_valid: i.a_valid,
            a_data: RdReq {
                addr: i.a_addr,
                len: i.a_len & 0x1_FFFF,
            },
            b_valid: i.b_valid,
            b_data: RdReq {
                addr: i.b_addr,
                len: i.b_len & 0x1_FFFF,
            },
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
