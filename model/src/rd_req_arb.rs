//! `rd_req_arb`: round-robin arbiter of `dma_rd`'s read requests. Model of
//! `hw/rtl/rd_req_arb.sv` (same register names).
//!
//! Input `a` is client 0 (sq_fetch's WQE reads), `b` client 1 (tx_engine's
//! payload reads); `o_client` says which. Each input has one skid entry and a
//! registered ready that always equals "skid entry empty". An accepted
//! request goes straight into the output register when the output is free and
//! its input wins the round robin, else it waits in the skid entry. One input
//! alone streams a request per cycle; two busy inputs alternate. Input
//! transferred at n -> visible on `o_*` at n+1 when the output is free.

use crate::dut::Dut;
use crate::ports;

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

#[derive(Debug, Clone)]
pub struct RdReqArb {
    a_skid_valid_q: bool,
    a_skid_addr_q: u64,
    a_skid_len_q: u32,
    b_skid_valid_q: bool,
    b_skid_addr_q: u64,
    b_skid_len_q: u32,
    a_ready_q: bool,
    b_ready_q: bool,
    o_valid_q: bool,
    o_addr_q: u64,
    o_len_q: u32,
    o_client_q: u8,
    /// true: b has priority (a was granted last).
    rr_q: bool,
}

impl Default for RdReqArb {
    fn default() -> Self {
        RdReqArb {
            a_skid_valid_q: false,
            a_skid_addr_q: 0,
            a_skid_len_q: 0,
            b_skid_valid_q: false,
            b_skid_addr_q: 0,
            b_skid_len_q: 0,
            // Skid entries are empty after reset, so the inputs are ready.
            a_ready_q: true,
            b_ready_q: true,
            o_valid_q: false,
            o_addr_q: 0,
            o_len_q: 0,
            o_client_q: 0,
            rr_q: false,
        }
    }
}

impl RdReqArb {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> RdReqArbOut {
        RdReqArbOut {
            a_ready: self.a_ready_q,
            b_ready: self.b_ready_q,
            o_valid: self.o_valid_q,
            o_addr: self.o_addr_q,
            o_len: self.o_len_q,
            o_client: self.o_client_q,
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
        let a_len = i.a_len & 0x1_FFFF;
        let b_len = i.b_len & 0x1_FFFF;
        // A transfer on an input happens only when its skid entry is empty.
        let a_take = i.a_valid && self.a_ready_q;
        let b_take = i.b_valid && self.b_ready_q;
        let a_has = self.a_skid_valid_q || a_take;
        let b_has = self.b_skid_valid_q || b_take;
        let (a_head_addr, a_head_len) = if self.a_skid_valid_q {
            (self.a_skid_addr_q, self.a_skid_len_q)
        } else {
            (i.a_addr, a_len)
        };
        let (b_head_addr, b_head_len) = if self.b_skid_valid_q {
            (self.b_skid_addr_q, self.b_skid_len_q)
        } else {
            (i.b_addr, b_len)
        };
        let slot = !self.o_valid_q || i.o_ready;
        let grant_a = slot && a_has && (!b_has || !self.rr_q);
        let grant_b = slot && b_has && (!a_has || self.rr_q);

        if grant_a {
            self.o_valid_q = true;
            self.o_addr_q = a_head_addr;
            self.o_len_q = a_head_len;
            self.o_client_q = 0;
            self.rr_q = true;
        } else if grant_b {
            self.o_valid_q = true;
            self.o_addr_q = b_head_addr;
            self.o_len_q = b_head_len;
            self.o_client_q = 1;
            self.rr_q = false;
        } else if i.o_ready {
            self.o_valid_q = false;
        }

        // Skid entries: emptied by a grant, filled by an accepted request that
        // did not go straight out (never both: no transfer while full).
        if self.a_skid_valid_q && grant_a {
            self.a_skid_valid_q = false;
            self.a_ready_q = true;
        } else if a_take && !grant_a {
            self.a_skid_valid_q = true;
            self.a_skid_addr_q = i.a_addr;
            self.a_skid_len_q = a_len;
            self.a_ready_q = false;
        }
        if self.b_skid_valid_q && grant_b {
            self.b_skid_valid_q = false;
            self.b_ready_q = true;
        } else if b_take && !grant_b {
            self.b_skid_valid_q = true;
            self.b_skid_addr_q = i.b_addr;
            self.b_skid_len_q = b_len;
            self.b_ready_q = false;
        }
        self.outputs()
    }
}

impl crate::trace::Trace for RdReqArb {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        t.reg("a_skid_valid_q", 1, &self.a_skid_valid_q);
        t.reg("a_skid_addr_q", 64, &self.a_skid_addr_q);
        t.reg("a_skid_len_q", 17, &self.a_skid_len_q);
        t.reg("b_skid_valid_q", 1, &self.b_skid_valid_q);
        t.reg("b_skid_addr_q", 64, &self.b_skid_addr_q);
        t.reg("b_skid_len_q", 17, &self.b_skid_len_q);
        t.reg("a_ready_q", 1, &self.a_ready_q);
        t.reg("b_ready_q", 1, &self.b_ready_q);
        t.reg("o_valid_q", 1, &self.o_valid_q);
        t.reg("o_addr_q", 64, &self.o_addr_q);
        t.reg("o_len_q", 17, &self.o_len_q);
        t.reg("o_client_q", 2, &self.o_client_q);
        t.reg("rr_q", 1, &self.rr_q);
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
