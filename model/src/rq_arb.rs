//! `rq_arb`: round-robin arbiter of the PCIe requester stream (`dma_rd`'s
//! MRd TLPs on `a`, `dma_wr`'s MWr TLPs on `b`). Model of
//! `hw/rtl/rq_arb.sv` (same register names).
//!
//! The arbiter is `skid_arb` (`u_arb`), shared with `rd_req_arb`, with its
//! packet lock on: a grant holds from a TLP's first beat to its eop beat, so
//! TLPs are never interleaved, and the round robin alternates per TLP. One input alone
//! streams one beat per cycle. Beat transferred at n -> on `o_*` at n+1 when
//! the output is free.

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::skid_arb::{SkidArb, SkidArbIn, SkidArbOut, SkidItem};

ports! {
    /// Inputs of `rq_arb` (all but `clk`/`rst`).
    pub struct RqArbIn {
        pub a_valid: bool = 1,
        pub a_data: Beat = 512 if a_valid,
        pub a_keep: u64 = 64 if a_valid,
        pub a_sop: bool = 1 if a_valid,
        pub a_eop: bool = 1 if a_valid,
        pub b_valid: bool = 1,
        pub b_data: Beat = 512 if b_valid,
        pub b_keep: u64 = 64 if b_valid,
        pub b_sop: bool = 1 if b_valid,
        pub b_eop: bool = 1 if b_valid,
        pub o_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `rq_arb`, all registered.
    pub struct RqArbOut {
        pub a_ready: bool = 1,
        pub b_ready: bool = 1,
        pub o_valid: bool = 1,
        pub o_data: Beat = 512 if o_valid,
        pub o_keep: u64 = 64 if o_valid,
        pub o_sop: bool = 1 if o_valid,
        pub o_eop: bool = 1 if o_valid,
    }
}

/// One beat of a TLP stream, as held by a skid entry or the output register.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct RqBeat {
    data: Beat,
    keep: u64,
    sop: bool,
    eop: bool,
}

impl SkidItem for RqBeat {
    /// `{data, keep, sop, eop}`: eop in bit 0.
    const W: u32 = 512 + 64 + 2;
    fn pack(&self, b: &mut crate::trace::Bits) {
        use crate::trace::TraceValue;
        b.push(self.eop as u64, 1);
        b.push(self.sop as u64, 1);
        b.push(self.keep, 64);
        self.data.put(512, b);
    }
    // The TLP's eop beat ends the packet (bit 0 of the RTL's item).
    fn last(&self) -> bool {
        self.eop
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct RqArb {
    u_arb: SkidArb<RqBeat, 2, true>,
}

impl RqArb {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> RqArbOut {
        Self::ports(&self.u_arb.outputs())
    }

    fn ports(o: &SkidArbOut<RqBeat, 2>) -> RqArbOut {
        RqArbOut {
            a_ready: o.in_ready[0],
            b_ready: o.in_ready[1],
            o_valid: o.o_valid,
            o_data: o.o_data.data,
            o_keep: o.o_data.keep,
            o_sop: o.o_data.sop,
            o_eop: o.o_data.eop,
        }
    }
}

impl Dut for RqArb {
    type In = RqArbIn;
    type Out = RqArbOut;
    const NAME: &'static str = "rq_arb";

    fn reset(&mut self) -> RqArbOut {
        *self = RqArb::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RqArbIn) -> RqArbOut {
        // o_sel is not a port of rq_arb: rq_* does not say which input.
        let o = self.u_arb.tick(&SkidArbIn {
            in_valid: [i.a_valid, i.b_valid],
            in_data: [
                RqBeat {
                    data: i.a_data,
                    keep: i.a_keep,
                    sop: i.a_sop,
                    eop: i.a_eop,
                },
                RqBeat {
                    data: i.b_data,
                    keep: i.b_keep,
                    sop: i.b_sop,
                    eop: i.b_eop,
                },
            ],
            o_ready: i.o_ready,
        });
        Self::ports(&o)
    }
}

impl crate::trace::Trace for RqArb {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        t.push("u_arb");
        self.u_arb.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A beat whose byte 0 is `tag`, keep = tag, with sop/eop.
    fn beat(tag: u8, sop: bool, eop: bool) -> (Beat, u64, bool, bool) {
        let mut d = Beat::default();
        d[0] = tag;
        d[63] = !tag;
        (d, tag as u64, sop, eop)
    }

    fn inp(
        a: Option<(Beat, u64, bool, bool)>,
        b: Option<(Beat, u64, bool, bool)>,
        o_ready: bool,
    ) -> RqArbIn {
        let (ad, ak, asop, aeop) = a.unwrap_or_default();
        let (bd, bk, bsop, beop) = b.unwrap_or_default();
        RqArbIn {
            a_valid: a.is_some(),
            a_data: ad,
            a_keep: ak,
            a_sop: asop,
            a_eop: aeop,
            b_valid: b.is_some(),
            b_data: bd,
            b_keep: bk,
            b_sop: bsop,
            b_eop: beop,
            o_ready,
        }
    }

    #[test]
    fn a_tlp_is_never_interleaved_with_the_other_input() {
        let mut m = RqArb::new();
        m.reset();
        // a: 3-beat TLP (tags 1, 2, 3); b: 1-beat TLP (tag 9) offered throughout.
        let o = m.tick(&inp(
            Some(beat(1, true, false)),
            Some(beat(9, true, true)),
            true,
        ));
        assert_eq!(
            (o.o_data[0], o.o_keep, o.o_sop, o.o_eop),
            (1, 1, true, false)
        );
        assert_eq!(o.o_data[63], !1u8);
        assert!(!o.b_ready, "b's beat was accepted into its skid entry");
        // Locked to a: a's second beat goes out although b waits with priority.
        let o = m.tick(&inp(
            Some(beat(2, false, false)),
            Some(beat(9, true, true)),
            true,
        ));
        assert_eq!((o.o_data[0], o.o_sop, o.o_eop), (2, false, false));
        let o = m.tick(&inp(
            Some(beat(3, false, true)),
            Some(beat(9, true, true)),
            true,
        ));
        assert_eq!((o.o_data[0], o.o_eop), (3, true));
        // a's TLP is over: b's TLP goes next even though a offers another.
        let o = m.tick(&inp(Some(beat(4, true, true)), None, true));
        assert_eq!(
            (o.o_data[0], o.o_keep, o.o_sop, o.o_eop),
            (9, 9, true, true)
        );
        let o = m.tick(&inp(None, None, true));
        assert_eq!(o.o_data[0], 4);
        let o = m.tick(&inp(None, None, true));
        assert!(!o.o_valid);
    }

    #[test]
    fn a_locked_input_with_a_gap_blocks_the_other_input() {
        let mut m = RqArb::new();
        m.reset();
        let o = m.tick(&inp(None, Some(beat(5, true, false)), true));
        assert_eq!(o.o_data[0], 5);
        // b pauses mid-TLP; a's single-beat TLP must wait.
        let o = m.tick(&inp(Some(beat(7, true, true)), None, true));
        assert!(!o.o_valid && !o.a_ready);
        let o = m.tick(&inp(
            Some(beat(7, true, true)),
            Some(beat(6, false, true)),
            true,
        ));
        assert_eq!((o.o_data[0], o.o_eop), (6, true));
        let o = m.tick(&inp(None, None, true));
        assert_eq!(o.o_data[0], 7);
    }
}
