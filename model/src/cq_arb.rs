//! `cq_arb`: round-robin arbiter of the two completion sources onto
//! `cq_writer`'s `cpl_*` port, `a` = requester completions (ack_tracker),
//! `b` = the responder's RECV completions. Model of `hw/rtl/cq_arb.sv`
//! (same register names; contract: docs/tx_datapath.md, "cq_arb").
//!
//! The arbiter is `skid_arb` (`u_arb`, N = 2, no packets): one skid entry
//! and a registered ready per source, registered output, so one source
//! alone streams a completion per cycle and two busy sources alternate.
//! Completion taken at n -> on `o_*` at n+1 when the output is free.

use crate::dut::Dut;
use crate::params::{CQW, QPW};
use crate::ports;
use crate::skid_arb::{SkidArb, SkidArbIn, SkidArbOut, SkidItem};

/// QPs (the width of `x_qp`) and CQs (of `x_cq`), as cq_writer.
pub use crate::params::{CQS, QPS};

ports! {
    /// Inputs of `cq_arb` (all but `clk`/`rst`).
    pub struct CqArbIn {
        pub a_valid: bool = 1,
        pub a_wait_frame: bool = 1 if a_valid,
        pub a_wr_id: u64 = 64 if a_valid,
        pub a_status: u8 = 8 if a_valid,
        pub a_opcode: u8 = 8 if a_valid,
        pub a_len: u32 = 32 if a_valid,
        pub a_imm: u32 = 32 if a_valid,
        pub a_imm_flag: bool = 1 if a_valid,
        pub a_src_qp: u32 = 24 if a_valid,
        pub a_qp: u8 = 4 if a_valid,
        pub a_cq: u8 = 2 if a_valid,
        pub b_valid: bool = 1,
        /// Must be 0 (asserted): only requester completions have frames.
        pub b_wait_frame: bool = 1 if b_valid,
        pub b_wr_id: u64 = 64 if b_valid,
        pub b_status: u8 = 8 if b_valid,
        pub b_opcode: u8 = 8 if b_valid,
        pub b_len: u32 = 32 if b_valid,
        pub b_imm: u32 = 32 if b_valid,
        pub b_imm_flag: bool = 1 if b_valid,
        pub b_src_qp: u32 = 24 if b_valid,
        pub b_qp: u8 = 4 if b_valid,
        pub b_cq: u8 = 2 if b_valid,
        pub o_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `cq_arb`, all registered.
    pub struct CqArbOut {
        pub a_ready: bool = 1,
        pub b_ready: bool = 1,
        pub o_valid: bool = 1,
        pub o_wait_frame: bool = 1 if o_valid,
        pub o_wr_id: u64 = 64 if o_valid,
        pub o_status: u8 = 8 if o_valid,
        pub o_opcode: u8 = 8 if o_valid,
        pub o_len: u32 = 32 if o_valid,
        pub o_imm: u32 = 32 if o_valid,
        pub o_imm_flag: bool = 1 if o_valid,
        pub o_src_qp: u32 = 24 if o_valid,
        pub o_qp: u8 = 4 if o_valid,
        pub o_cq: u8 = 2 if o_valid,
    }
}

/// A completion as `skid_arb` carries it (the RTL's item `{wait_frame,
/// wr_id, status, opcode, len, imm, imm_flag, src_qp, qp, cq}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CqCpl {
    pub wait_frame: bool,
    pub wr_id: u64,
    pub status: u8,
    pub opcode: u8,
    pub len: u32,
    pub imm: u32,
    pub imm_flag: bool,
    pub src_qp: u32,
    pub qp: u8,
    pub cq: u8,
}

impl SkidItem for CqCpl {
    const W: u32 = 1 + 64 + 8 + 8 + 32 + 32 + 1 + 24 + QPW + CQW;
    fn pack(&self, b: &mut crate::trace::Bits) {
        b.push(self.cq as u64, CQW);
        b.push(self.qp as u64, QPW);
        b.push(self.src_qp as u64, 24);
        b.push(self.imm_flag as u64, 1);
        b.push(self.imm as u64, 32);
        b.push(self.len as u64, 32);
        b.push(self.opcode as u64, 8);
        b.push(self.status as u64, 8);
        b.push(self.wr_id, 64);
        b.push(self.wait_frame as u64, 1);
    }
    // Every completion is its own item (PACKETS = 0).
    fn last(&self) -> bool {
        true
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CqArb {
    u_arb: SkidArb<CqCpl, 2, false>,
}

impl CqArb {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> CqArbOut {
        Self::ports(&self.u_arb.outputs())
    }

    fn ports(o: &SkidArbOut<CqCpl, 2>) -> CqArbOut {
        let c = o.o_data;
        CqArbOut {
            a_ready: o.in_ready[0],
            b_ready: o.in_ready[1],
            o_valid: o.o_valid,
            o_wait_frame: c.wait_frame,
            o_wr_id: c.wr_id,
            o_status: c.status,
            o_opcode: c.opcode,
            o_len: c.len,
            o_imm: c.imm,
            o_imm_flag: c.imm_flag,
            o_src_qp: c.src_qp,
            o_qp: c.qp,
            o_cq: c.cq,
        }
    }
}

impl Dut for CqArb {
    type In = CqArbIn;
    type Out = CqArbOut;
    const NAME: &'static str = "cq_arb";

    fn reset(&mut self) -> CqArbOut {
        *self = CqArb::default();
        self.outputs()
    }

    fn tick(&mut self, i: &CqArbIn) -> CqArbOut {
        // Masked to the RTL's port widths.
        let a = CqCpl {
            wait_frame: i.a_wait_frame,
            wr_id: i.a_wr_id,
            status: i.a_status,
            opcode: i.a_opcode,
            len: i.a_len,
            imm: i.a_imm,
            imm_flag: i.a_imm_flag,
            src_qp: i.a_src_qp & 0xFF_FFFF,
            qp: i.a_qp & (QPS as u8 - 1),
            cq: i.a_cq & (CQS as u8 - 1),
        };
        let b = CqCpl {
            wait_frame: i.b_wait_frame,
            wr_id: i.b_wr_id,
            status: i.b_status,
            opcode: i.b_opcode,
            len: i.b_len,
            imm: i.b_imm,
            imm_flag: i.b_imm_flag,
            src_qp: i.b_src_qp & 0xFF_FFFF,
            qp: i.b_qp & (QPS as u8 - 1),
            cq: i.b_cq & (CQS as u8 - 1),
        };
        let o = self.u_arb.tick(&SkidArbIn {
            in_valid: [i.a_valid, i.b_valid],
            in_data: [a, b],
            o_ready: i.o_ready,
        });
        Self::ports(&o)
    }
}

impl crate::trace::Trace for CqArb {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        t.push("u_arb");
        self.u_arb.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpl(src: char, n: u64) -> CqArbIn {
        let mut i = CqArbIn {
            o_ready: true,
            ..Default::default()
        };
        match src {
            'a' => {
                i.a_valid = true;
                i.a_wr_id = n;
                i.a_wait_frame = true;
            }
            _ => {
                i.b_valid = true;
                i.b_wr_id = n;
                i.b_imm_flag = true;
                i.b_src_qp = 0x12_3456;
            }
        }
        i
    }

    #[test]
    fn one_cycle_latency_and_alternation() {
        let mut m = CqArb::new();
        let o = m.reset();
        assert!(o.a_ready && o.b_ready && !o.o_valid);
        let o = m.tick(&cpl('a', 1));
        assert_eq!((o.o_valid, o.o_wr_id, o.o_wait_frame), (true, 1, true));
        // Both at once: b has priority after a was granted; a skids.
        let mut both = cpl('a', 2);
        let bb = cpl('b', 10);
        both.b_valid = true;
        both.b_wr_id = bb.b_wr_id;
        both.b_imm_flag = true;
        both.b_src_qp = bb.b_src_qp;
        let o = m.tick(&both);
        assert_eq!(
            (o.o_wr_id, o.o_imm_flag, o.o_src_qp, o.a_ready),
            (10, true, 0x12_3456, false)
        );
        let o = m.tick(&CqArbIn {
            o_ready: true,
            ..Default::default()
        });
        assert_eq!((o.o_wr_id, o.a_ready), (2, true));
    }
}
