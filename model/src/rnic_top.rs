//! `rnic_top`: every block of the datapath (transmit, receive, congestion
//! and flow control, the responder) behind the top-level ports of
//! docs/architecture.md. Model of `hw/rtl/rnic_top.sv`.

use crate::params::{bth_op, CQW, QPS, QPW};
use crate::ports;
use crate::ports::{Beat, PortValue};

ports! {
    /// Inputs of `rnic_top` (all but `clk`/`rst`).
    pub struct RnicTopIn {
        pub mmio_wr_valid: bool = 1,
        pub mmio_wr_addr: u16 = 16 if mmio_wr_valid,
        pub mmio_wr_data: u32 = 32 if mmio_wr_valid,
        pub mmio_rd_valid: bool = 1,
        pub mmio_rd_addr: u16 = 16 if mmio_rd_valid,
        pub rq_ready: bool = 1,
        pub rc_valid: bool = 1,
        pub rc_data: Beat = 512 if rc_valid,
        pub rc_keep: u64 = 64 if rc_valid,
        pub rc_sop: bool = 1 if rc_valid,
        pub rc_eop: bool = 1 if rc_valid,
        pub tx_tready: bool = 1,
        /// MAC RX: frames without FCS, no back-pressure; `rx_tuser` on the
        /// last beat flags an FCS error.
        pub rx_tvalid: bool = 1,
        pub rx_tdata: Beat = 512 if rx_tvalid,
        pub rx_tkeep: u64 = 64 if rx_tvalid,
        pub rx_tlast: bool = 1 if rx_tvalid,
        pub rx_tuser: bool = 1 if rx_tvalid,
    }
}

ports! {
    /// Outputs of `rnic_top`, all registered.
    pub struct RnicTopOut {
        pub mmio_rd_resp_valid: bool = 1,
        pub mmio_rd_resp_data: u32 = 32 if mmio_rd_resp_valid,
        pub rq_valid: bool = 1,
        pub rq_data: Beat = 512 if rq_valid,
        pub rq_keep: u64 = 64 if rq_valid,
        pub rq_sop: bool = 1 if rq_valid,
        pub rq_eop: bool = 1 if rq_valid,
        pub rc_ready: bool = 1,
        pub tx_tvalid: bool = 1,
        pub tx_tdata: Beat = 512 if tx_tvalid,
        pub tx_tkeep: u64 = 64 if tx_tvalid,
        pub tx_tlast: bool = 1 if tx_tvalid,
        /// One-cycle pulse: a CQE of CQ `irq_cq` has been written.
        pub irq_valid: bool = 1,
        pub irq_cq: u8 = 2 if irq_valid,
    }
}

use crate::ack_gen::{AckGen, AckGenIn, AckGenOut};
use crate::ack_tracker::{AckTracker, AckTrackerIn, AckTrackerOut};
use crate::cnp_gen::{CnpGen, CnpGenIn, CnpGenOut};
use crate::cq_arb::{CqArb, CqArbIn, CqArbOut};
use crate::cq_writer::{CqWriter, CqWriterIn, CqWriterOut};
use crate::csr::{Csr, CsrIn, CsrOut};
use crate::dcqcn::{Dcqcn, DcqcnIn, DcqcnOut};
use crate::dma_rd::{DmaRd, DmaRdIn, DmaRdOut, DmaRdParams};
use crate::dma_wr::{DmaWr, DmaWrIn, DmaWrOut};
use crate::dut::Dut;
use crate::pfc::{Pfc, PfcIn, PfcOut};
use crate::pfc_gen::{PfcGen, PfcGenIn, PfcGenOut};
use crate::pkt_builder::{PktBuilder, PktBuilderIn, PktBuilderOut};
use crate::rate_limiter::{RateLimiter, RateLimiterIn, RateLimiterOut};
use crate::rd_req_arb::{RdReqArb, RdReqArbIn, RdReqArbOut};
use crate::rd_resp::{RdResp, RdRespIn, RdRespOut};
use crate::rd_sink::{RdSink, RdSinkIn, RdSinkOut};
use crate::resp_tok::{TokBits, TOK_SINK_BIT};
use crate::responder::{Responder, ResponderIn, ResponderOut};
use crate::retx_ctl::{RetxCtl, RetxCtlIn, RetxCtlOut};
use crate::rq_arb::{RqArb, RqArbIn, RqArbOut};
use crate::rq_fetch::{RqFetch, RqFetchIn, RqFetchOut};
use crate::rx_buf::{RxBuf, RxBufIn, RxBufOut};
use crate::rx_meta::{field as meta_field, MetaBits};
use crate::rx_parser::{RxParser, RxParserIn, RxParserOut};
use crate::rx_wr::{RxWr, RxWrIn, RxWrOut};
use crate::sq_fetch::{SqFetch, SqFetchIn, SqFetchOut};
use crate::trace::{Trace, Tracer};
use crate::tx_engine::{TxEngine, TxEngineIn, TxEngineOut};
use crate::tx_sched::{TxSched, TxSchedIn, TxSchedOut};
use crate::wr_arb::{WrArb, WrArbIn, WrArbOut};

/// `dma_rd` as `rnic_top` instantiates it (TAGS, BUF_LINES).
pub const DMA_RD_PARAMS: DmaRdParams = DmaRdParams {
    tags: 64,
    buf_lines: 512,
};
/// Byte offset of the lkey in a WQE: the MR lookup is addressed from it.
const WQE_LKEY: usize = 0x18;

/// One port value as another of the same bits (the RTL's wire between two
/// blocks whose models chose different Rust types for it); bits past the
/// narrower are zero.
fn conv<A: PortValue, B: PortValue>(a: &A) -> B {
    let mut w = [0u64; 16];
    a.to_words(&mut w);
    B::from_words(&w)
}

/// Every block and, for each, the outputs it shows this cycle (the registers
/// the RTL's wires carry between instances).
#[derive(Debug, Clone)]
pub struct RnicTop {
    csr: Csr,
    sq_fetch: SqFetch,
    tx_sched: TxSched,
    tx_engine: TxEngine,
    pkt_builder: PktBuilder,
    cq_writer: CqWriter,
    rd_req_arb: RdReqArb,
    dma_rd: DmaRd,
    dma_wr: DmaWr,
    rq_arb: RqArb,
    rx_parser: RxParser,
    pfc: Pfc,
    cnp_gen: CnpGen,
    dcqcn: Dcqcn,
    rate_limiter: RateLimiter,
    ack_tracker: AckTracker,
    ack_gen: AckGen,
    rx_buf: RxBuf,
    responder: Responder,
    rq_fetch: RqFetch,
    rx_wr: RxWr,
    wr_arb: WrArb,
    cq_arb: CqArb,
    rd_resp: RdResp,
    rd_sink: RdSink,
    retx_ctl: RetxCtl,
    pfc_gen: PfcGen,
    glue: Glue,
    o_csr: CsrOut,
    o_sqf: SqFetchOut,
    o_sched: TxSchedOut,
    o_te: TxEngineOut,
    o_pb: PktBuilderOut,
    o_cqw: CqWriterOut,
    o_rdarb: RdReqArbOut,
    o_rd: DmaRdOut,
    o_wr: DmaWrOut,
    o_rqarb: RqArbOut,
    o_rxp: RxParserOut,
    o_pfc: PfcOut,
    o_cg: CnpGenOut,
    o_dc: DcqcnOut,
    o_rl: RateLimiterOut,
    o_at: AckTrackerOut,
    o_ag: AckGenOut,
    o_rxb: RxBufOut,
    o_rsp: ResponderOut,
    o_rqf: RqFetchOut,
    o_rxw: RxWrOut,
    o_wa: WrArbOut,
    o_cqa: CqArbOut,
    o_rdr: RdRespOut,
    o_snk: RdSinkOut,
    o_rtx: RetxCtlOut,
    o_pg: PfcGenOut,
}

/// Every block's inputs in one cycle.
struct Ins {
    csr: CsrIn,
    sqf: SqFetchIn,
    sched: TxSchedIn,
    te: TxEngineIn,
    pb: PktBuilderIn,
    cqw: CqWriterIn,
    ra: RdReqArbIn,
    rd: DmaRdIn,
    wr: DmaWrIn,
    rqa: RqArbIn,
    rxp: RxParserIn,
    pfc: PfcIn,
    cg: CnpGenIn,
    dc: DcqcnIn,
    rl: RateLimiterIn,
    at: AckTrackerIn,
    ag: AckGenIn,
    rxb: RxBufIn,
    rsp: ResponderIn,
    rqf: RqFetchIn,
    rxw: RxWrIn,
    wa: WrArbIn,
    cqa: CqArbIn,
    rdr: RdRespIn,
    snk: RdSinkIn,
    rtx: RetxCtlIn,
    pg: PfcGenIn,
}

/// rnic_top's own registers: the header and command paths the responder
/// and rd_sink share (rnic_top.sv, "the header and command paths shared
/// with rd_sink").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Glue {
    /// Frames the responder / rd_sink has open (header taken, its wc_last
    /// command not yet taken): 0..2, a consumer taking its next header
    /// before rx_wr took the last command of the one before.
    r_open_q: u8,
    s_open_q: u8,
    /// rx_wr's command offer was not taken: the same source stays.
    wc_hold_q: bool,
    wc_sel_s_q: bool,
}

/// The shared paths' wires this cycle.
#[derive(Debug, Clone, Copy)]
struct GlueWires {
    rsp_hd_valid: bool,
    snk_hd_valid: bool,
    rxb_hd_ready: bool,
    wc_sel_s: bool,
}

/// Bits `[lsb, lsb + w)` of a wide port (byte 0 holds bits 7..0), w <= 32.
fn bits(b: &Beat, lsb: usize, w: usize) -> u32 {
    // The (up to 5) bytes holding the field, then shift and mask.
    let mut v = 0u64;
    for (k, byte) in b[lsb / 8..(lsb + w).div_ceil(8)].iter().enumerate() {
        v |= (*byte as u64) << (8 * k);
    }
    (v >> (lsb % 8) & ((1u64 << w) - 1)) as u32
}

/// The congestion and flow control state of one cycle, for plots: each
/// QP's DCQCN current and target rate (rate units of 2^-20 byte/cycle),
/// alpha (Q10), and the PFC pause bits.
#[derive(Debug, Clone, Default)]
pub struct CcProbe {
    pub rc: [u32; QPS],
    pub rt: [u32; QPS],
    pub alpha: [u16; QPS],
    pub pause: u8,
}

impl Default for RnicTop {
    fn default() -> Self {
        Self::new()
    }
}

impl RnicTop {
    pub fn new() -> Self {
        RnicTop {
            csr: Csr::new(),
            sq_fetch: SqFetch::new(),
            tx_sched: TxSched::new(),
            tx_engine: TxEngine::new(),
            pkt_builder: PktBuilder::new(),
            cq_writer: CqWriter::new(),
            rd_req_arb: RdReqArb::new(),
            dma_rd: DmaRd::new(DMA_RD_PARAMS),
            dma_wr: DmaWr::new(),
            rq_arb: RqArb::new(),
            rx_parser: RxParser::new(),
            pfc: Pfc::new(),
            cnp_gen: CnpGen::new(),
            dcqcn: Dcqcn::new(),
            rate_limiter: RateLimiter::new(),
            ack_tracker: AckTracker::new(),
            ack_gen: AckGen::new(),
            rx_buf: RxBuf::new(),
            responder: Responder::new(),
            rq_fetch: RqFetch::new(),
            rx_wr: RxWr::new(),
            wr_arb: WrArb::new(),
            cq_arb: CqArb::new(),
            rd_resp: RdResp::new(),
            rd_sink: RdSink::new(),
            retx_ctl: RetxCtl::new(),
            pfc_gen: PfcGen::new(),
            glue: Glue::default(),
            o_csr: CsrOut::default(),
            o_sqf: SqFetchOut::default(),
            o_sched: TxSchedOut::default(),
            o_te: TxEngineOut::default(),
            o_pb: PktBuilderOut::default(),
            o_cqw: CqWriterOut::default(),
            o_rdarb: RdReqArbOut::default(),
            o_rd: DmaRdOut::default(),
            o_wr: DmaWrOut::default(),
            o_rqarb: RqArbOut::default(),
            o_rxp: RxParserOut::default(),
            o_pfc: PfcOut::default(),
            o_cg: CnpGenOut::default(),
            o_dc: DcqcnOut::default(),
            o_rl: RateLimiterOut::default(),
            o_at: AckTrackerOut::default(),
            o_ag: AckGenOut::default(),
            o_rxb: RxBufOut::default(),
            o_rsp: ResponderOut::default(),
            o_rqf: RqFetchOut::default(),
            o_rxw: RxWrOut::default(),
            o_wa: WrArbOut::default(),
            o_cqa: CqArbOut::default(),
            o_rdr: RdRespOut::default(),
            o_snk: RdSinkOut::default(),
            o_rtx: RetxCtlOut::default(),
            o_pg: PfcGenOut::default(),
        }
    }

    /// The DCQCN and PFC state this cycle (the blocks' registered outputs).
    pub fn cc_probe(&self) -> CcProbe {
        let d = &self.o_dc;
        CcProbe {
            rc: core::array::from_fn(|q| bits(&d.rc, 32 * q, 32)),
            rt: core::array::from_fn(|q| bits(&d.rt, 32 * q, 32)),
            alpha: core::array::from_fn(|q| bits(&d.alpha, 11 * q, 11) as u16),
            pause: self.o_pfc.pause,
        }
    }

    /// rx_buf's lines held per priority this cycle (its `prio_lines`, what
    /// pfc_gen sees), for the PFC figures.
    pub fn rx_prio_lines(&self) -> [u16; 8] {
        core::array::from_fn(|p| (self.o_rxb.prio_lines >> (10 * p)) as u16 & 0x3FF)
    }

    fn top_out(&self) -> RnicTopOut {
        let (c, pb, rq, cqw) = (&self.o_csr, &self.o_pb, &self.o_rqarb, &self.o_cqw);
        RnicTopOut {
            mmio_rd_resp_valid: c.mmio_rd_resp_valid,
            mmio_rd_resp_data: c.mmio_rd_resp_data,
            rq_valid: rq.o_valid,
            rq_data: rq.o_data,
            rq_keep: rq.o_keep,
            rq_sop: rq.o_sop,
            rq_eop: rq.o_eop,
            rc_ready: self.o_rd.rc_ready,
            tx_tvalid: pb.tx_tvalid,
            tx_tdata: pb.tx_tdata,
            tx_tkeep: pb.tx_tkeep,
            tx_tlast: pb.tx_tlast,
            irq_valid: cqw.irq_valid,
            irq_cq: cqw.irq_cq,
        }
    }

    /// The shared header and command paths' wires (rnic_top.sv): a header
    /// goes to the responder (requests) or rd_sink (READ RESPONSEs) only
    /// while the other has no frame open; rx_wr's commands come from the
    /// responder first, an offer not taken staying as it is.
    fn glue_wires(&self) -> GlueWires {
        let g = &self.glue;
        let op = bits(&self.o_rxb.hd_meta, meta_field::OPCODE.0 as usize, 8) as u8;
        let hd_is_rr = (bth_op::RC_RD_RESP_FIRST..=bth_op::RC_RD_RESP_ONLY).contains(&op);
        let valid = self.o_rxb.hd_valid;
        GlueWires {
            rsp_hd_valid: valid && !hd_is_rr && g.s_open_q == 0,
            snk_hd_valid: valid && hd_is_rr && g.r_open_q == 0,
            rxb_hd_ready: if hd_is_rr {
                self.o_snk.hd_ready && g.r_open_q == 0
            } else {
                self.o_rsp.hd_ready && g.s_open_q == 0
            },
            wc_sel_s: if g.wc_hold_q {
                g.wc_sel_s_q
            } else {
                !self.o_rsp.wc_valid
            },
        }
    }

    /// The shared paths' registers after this cycle.
    fn glue_next(&self, gw: &GlueWires) -> Glue {
        let (g, r, k) = (&self.glue, &self.o_rsp, &self.o_snk);
        let ready = self.o_rxw.wc_ready;
        let mx_valid = if gw.wc_sel_s { k.wc_valid } else { r.wc_valid };
        let r_take = gw.rsp_hd_valid && r.hd_ready;
        let s_take = gw.snk_hd_valid && k.hd_ready;
        let r_done = !gw.wc_sel_s && r.wc_valid && ready && !r.wc_tok && r.wc_last;
        let s_done = gw.wc_sel_s && k.wc_valid && ready && !k.wc_tok && k.wc_last;
        Glue {
            wc_hold_q: mx_valid && !ready,
            wc_sel_s_q: gw.wc_sel_s,
            // 2-bit counters, as the RTL's.
            r_open_q: (g.r_open_q + r_take as u8).wrapping_sub(r_done as u8) & 3,
            s_open_q: (g.s_open_q + s_take as u8).wrapping_sub(s_done as u8) & 3,
        }
    }

    /// Every block's inputs this cycle, from the top inputs and the blocks'
    /// registered outputs, exactly as rnic_top.sv wires them.
    fn wire(&self, i: &RnicTopIn) -> Ins {
        let ag = &self.o_ag;
        let (c, sqf, sch, te, pb, cqw, ra, rd, wr, rqa) = (
            &self.o_csr,
            &self.o_sqf,
            &self.o_sched,
            &self.o_te,
            &self.o_pb,
            &self.o_cqw,
            &self.o_rdarb,
            &self.o_rd,
            &self.o_wr,
            &self.o_rqarb,
        );
        let (rxp, pfc, cg, dc, rl, at) = (
            &self.o_rxp,
            &self.o_pfc,
            &self.o_cg,
            &self.o_dc,
            &self.o_rl,
            &self.o_at,
        );
        let (rxb, rsp, rqf, rxw, wa, cqa, rdr) = (
            &self.o_rxb,
            &self.o_rsp,
            &self.o_rqf,
            &self.o_rxw,
            &self.o_wa,
            &self.o_cqa,
            &self.o_rdr,
        );
        let snk = &self.o_snk;
        let rtx = &self.o_rtx;
        let gw = self.glue_wires();
        let mr_idx = sqf.wqe_data[WQE_LKEY] & 0x0F;
        let to_sqf = rd.rd_data_valid && rd.rd_data_client == 0;
        let to_pb = rd.rd_data_valid && rd.rd_data_client == 1;
        let to_rqf = rd.rd_data_valid && rd.rd_data_client == 2;
        // rx_wr's tokens: a RECV completion goes to cq_arb's input b, a
        // READ job to rd_resp (job_ready high from the cycle after reset: a
        // full ring refuses, never stalls).
        // cq_arb's b fields are the token's bits whatever its kind (as the
        // RTL's slices): layout resp_pkg.sv / resp_tok.rs.
        // rd_sink's READ done (kind 0 with bit 191) goes to ack_tracker, a
        // pulse it always takes.
        let tok = conv::<Beat, TokBits>(&rxw.tok_data);
        let tok_is_read = tok.is_read();
        let tok_is_rdone = !tok_is_read && tok.get(TOK_SINK_BIT, 1) != 0;
        let tok_cqe = rxw.tok_valid && !tok_is_read && !tok_is_rdone;
        let tok_read = rxw.tok_valid && tok_is_read;
        let tok_rdone = rxw.tok_valid && tok_is_rdone;
        let tok_ready = if tok_is_read {
            rdr.job_ready
        } else {
            tok_is_rdone || cqa.b_ready
        };
        let csr_in = CsrIn {
            mmio_wr_valid: i.mmio_wr_valid,
            mmio_wr_addr: i.mmio_wr_addr,
            mmio_wr_data: i.mmio_wr_data,
            mmio_rd_valid: i.mmio_rd_valid,
            mmio_rd_addr: i.mmio_rd_addr,
            qp_idx: te.qp_idx,
            mr_idx,
            cq_idx: cqw.cq_idx,
            psn_wr_valid: te.psn_wr_valid,
            psn_wr_qp: te.psn_wr_qp,
            psn_wr_psn: te.psn_wr_psn,
            err_a_valid: te.err_valid,
            err_a_qp: te.err_qp,
            err_b_valid: sqf.err_valid,
            err_b_qp: sqf.err_qp,
            // The responder's "QP to ERROR" and rq_fetch's failed RECV reads.
            err_c_valid: rsp.err_valid,
            err_c_qp: rsp.err_qp,
            err_d_valid: rqf.err_valid,
            err_d_qp: rqf.err_qp,
            // ack_tracker's remote-error NAKs: the requester QP to ERROR.
            err_e_valid: at.err_valid,
            err_e_qp: at.err_qp,
            // The responder's lookups: registered in csr, data next cycle.
            rctx_idx: rsp.ctx_rd_qp,
            // The retransmission controller's lookup of RETRY.
            xctx_idx: rtx.attr_idx,
            rmr_idx: rsp.mr_rd_idx,
            ev_tx_frame: pb.ev_tx_frame,
            ev_tx_len: pb.ev_tx_len,
            ev_wqe_n: sqf.ev_wqe_n,
            ev_cqe: cqw.ev_cqe,
            ev_prot_err: te.ev_prot_err,
            ev_flush: te.ev_flush,
            ev_fetch_err: sqf.err_valid,
            ev_dma_err: pb.ev_dma_err,
            dma_cpl_unexpected: rd.cnt_cpl_unexpected,
            dma_cpl_malformed: rd.cnt_cpl_malformed,
            dma_cpl_timeout: rd.cnt_cpl_timeout,
            ev_rx_frame: rxp.ev_frame,
            ev_rx_pfc: rxp.pfc_valid,
            ev_rx_cnp: rxp.cnp_valid,
            ev_rx_ack: rxp.ack_valid,
            ev_rx_data: rxp.data_valid,
            ev_rx_ce: cg.ev_ce,
            ev_drop: rxp.ev_drop,
            ev_drop_reason: rxp.ev_drop_reason,
            ev_ack_new: at.ev_ack,
            ev_ack_dup: at.ev_dup,
            ev_nak: at.ev_nak,
            ev_ack_invalid: at.ev_ack_invalid,
            ev_cnp_sent: cg.ev_cnp,
            ev_ce_suppressed: cg.ev_ce_suppressed,
            ev_resp_exec: rsp.ev_exec,
            ev_resp_dup: rsp.ev_dup,
            ev_resp_nak_seq: rsp.ev_seq_nak,
            ev_resp_nak_rnr: rsp.ev_rnr_nak,
            ev_resp_nak_inv: rsp.ev_inv_nak,
            ev_resp_nak_acc: rsp.ev_acc_nak,
            ev_resp_nak_op: rsp.ev_op_nak,
            ev_resp_recv: rsp.ev_recv,
            ev_resp_uc_drop: rsp.ev_uc_drop,
            ev_resp_not_ready: rsp.ev_notready,
            ev_rxbuf_full: rxb.ev_drop_full,
            ev_rq_fetch_err: rqf.err_valid,
            ev_rx_write: rxw.ev_write,
            ev_rx_write_bytes: rxw.ev_bytes,
            ev_ack_sent: ag.ev_ack,
            ev_ack_coalesced: ag.ev_coalesced,
            ev_read_job: rdr.ev_job,
            ev_read_job_full: rdr.ev_job_full,
            ev_snk: snk.ev_exec as u8
                | (snk.ev_done as u8) << 1
                | (snk.ev_unexp as u8) << 2
                | (snk.ev_dup as u8) << 3
                | (snk.ev_seq as u8) << 4
                | (snk.ev_bad as u8) << 5,
            // snk.ev_rr_full is not counted (rnic_top.sv: never in a
            // conforming run); snk.gap_* go to retx_ctl.
            ev_pfcg_xoff: self.o_pg.ev_xoff,
            ev_pfcg_xon: self.o_pg.ev_xon,
            ev_retx: rtx.ev_timeout as u8
                | (rtx.ev_rewind as u8) << 1
                | (rtx.ev_rnr_wait as u8) << 2
                | (rtx.ev_exhaust as u8) << 3,
            ev_rqe_n: rqf.ev_rqe_n,
            dcqcn_cnt_cnp: dc.cnt_cnp,
            dcqcn_cnt_cut: dc.cnt_cut,
            dcqcn_cnt_fr: dc.cnt_fr,
            dcqcn_cnt_ai: dc.cnt_ai,
            dcqcn_cnt_hai: dc.cnt_hai,
            dcqcn_cnt_alpha: dc.cnt_alpha,
            // The STAT_QP window on dcqcn's per-QP state.
            stat_rc: bits(&dc.rc, 32 * c.cfg_stat_qp as usize, 32),
            stat_rt: bits(&dc.rt, 32 * c.cfg_stat_qp as usize, 32),
            stat_alpha: bits(&dc.alpha, 11 * c.cfg_stat_qp as usize, 11) as u16,
        };
        let sqf_in = SqFetchIn {
            db_valid: c.db_valid,
            db_qp: c.db_qp,
            db_pi: c.db_pi,
            db_state: c.db_state,
            db_sq_base: c.db_sq_base,
            db_sq_log: c.db_sq_log,
            rd_req_ready: ra.a_ready,
            rd_data_valid: to_sqf,
            rd_data: rd.rd_data,
            rd_data_last: rd.rd_data_last,
            rd_data_status: rd.rd_data_status,
            wqe_pop_valid: te.wqe_pop_valid,
            wqe_pop_qp: te.wqe_pop_qp,
            // A rewind: fetch the QP again from its anchor's SQ index.
            rw_valid: te.sq_rw_valid,
            rw_qp: te.sq_rw_qp,
            rw_idx: te.sq_rw_idx,
        };
        // A QP may start no new WQE: its ack_tracker queue is full, or it
        // has as many READs outstanding as its max_rd_atomic allows.
        // A QP re-sending WQEs it sent before (te.rpl_all) is not blocked:
        // their completions and READ records were pushed the first time.
        let sq_block = (at.full | snk.rr_block) & !te.rpl_all;
        let sched_in = TxSchedIn {
            req_active: te.req_active,
            // A QP has work when it has a WQE or a READ job to answer.
            req_avail: sqf.wqe_avail | rdr.job_avail,
            // A QP may start a frame when its rate limiter allows it and it
            // is not blocked (its ack_tracker queue full, or its READs at
            // max_rd_atomic), or it has a READ to answer (tx_engine answers
            // first and never starts a blocked QP's WQE).
            // A QP waiting out an RNR NAK sends nothing of its own.
            rate_ok: rl.rate_ok & !((sq_block | rtx.hold) & !rdr.job_avail),
            pause: pfc.pause,
            qp_pcp: c.qp_pcp_all,
            // A waiting CNP or ACK (within tx_sched's bound on control
            // grants in a row).
            ctrl_req: cg.cnp_valid || ag.ack_valid,
            grant_ready: te.grant_ready,
        };
        // tx_engine takes the CNP or the ACK with the control grant: the ACK
        // when it is the ACK's turn (ctrl_ack_first) or no CNP waits.
        let ctrl_take = sch.grant_valid && sch.grant_ctrl && te.grant_ready;
        let ack_ready = ctrl_take && ag.ack_valid && (te.ctrl_ack_first || !cg.cnp_valid);
        let cnp_ready = ctrl_take && cg.cnp_valid && !(ag.ack_valid && te.ctrl_ack_first);
        // The responder's acknowledgements, one pending per QP.
        let ag_in = AckGenIn {
            req_valid: rsp.ack_valid,
            req_qp: rsp.ack_qp,
            req_psn: rsp.ack_psn,
            req_syndrome: rsp.ack_syndrome,
            req_msn: rsp.ack_msn,
            ack_ready,
        };
        // A data frame is committed when its descriptor goes to pkt_builder:
        // the rate limiter charges it and dcqcn's byte counter counts it.
        // Control frames (a CNP, an ACK/NAK) are not the QP's data.
        let charge =
            te.desc_valid && pb.desc_ready && !te.desc_cnp_pad && te.desc_opcode != bth_op::RC_ACK;
        let te_in = TxEngineIn {
            grant_valid: sch.grant_valid,
            grant_qp: sch.grant_qp,
            wqe_avail: sqf.wqe_avail,
            // A blocked QP finishes its message but starts no new one
            // (tx_sched's grant may predate the block).
            wqe_block: sq_block,
            err_mode: at.err_mode,
            wqe_valid: sqf.wqe_valid,
            wqe_qp: sqf.wqe_qp,
            wqe_data: sqf.wqe_data,
            qp_state: c.qp_state,
            qp_uc: c.qp_uc,
            qp_ipv6: c.qp_ipv6,
            qp_vlan_en: c.qp_vlan_en,
            qp_ecn_en: c.qp_ecn_en,
            qp_mtu: c.qp_mtu,
            qp_max_rd: c.qp_max_rd,
            qp_cq: c.qp_cq,
            qp_remote_qpn: c.qp_remote_qpn,
            qp_psn: c.qp_psn,
            qp_pd: c.qp_pd,
            qp_dst_mac: c.qp_dst_mac,
            qp_src_mac: c.qp_src_mac,
            qp_src_ip: c.qp_src_ip,
            qp_dst_ip: c.qp_dst_ip,
            qp_udp_sport: c.qp_udp_sport,
            qp_dscp: c.qp_dscp,
            qp_vid: c.qp_vid,
            qp_pcp: c.qp_pcp,
            qp_pkey: c.qp_pkey,
            mr_valid: c.mr_valid,
            mr_key: c.mr_key,
            mr_va: c.mr_va,
            mr_len: c.mr_len,
            mr_pbase: c.mr_pbase,
            mr_access: c.mr_access,
            mr_pd: c.mr_pd,
            rd_req_ready: ra.b_ready,
            desc_ready: pb.desc_ready,
            cpl_ready: at.cpl_ready,
            grant_ctrl: sch.grant_ctrl,
            cnp_valid: cg.cnp_valid,
            cnp_qp: cg.cnp_qp,
            cfg_cnp_dscp: c.cfg_cnp_dscp,
            cfg_cnp_pcp: c.cfg_cnp_pcp,
            cfg_cnp_becn: c.cfg_cnp_becn,
            ack_valid: ag.ack_valid,
            ack_qp: ag.ack_qp,
            ack_psn: ag.ack_psn,
            ack_syndrome: ag.ack_syndrome,
            ack_msn: ag.ack_msn,
            job_avail: rdr.job_avail,
            job_present: rdr.job_present,
            job_psn: rdr.job_psn,
            job_addr: rdr.job_addr,
            job_len: rdr.job_len,
            job_msn: rdr.job_msn,
            job_mtu: rdr.job_mtu,
            rw_valid: rtx.rw_valid,
            rw_qp: rtx.rw_qp,
            rw_psn: rtx.rw_psn,
            anc_valid: at.anc_valid,
            anc_qp: at.anc_qp,
            anc_idx: at.anc_idx,
            anc_psn: at.anc_psn,
            psn_set_valid: c.psn_set_valid,
            psn_set_qp: c.psn_set_qp,
            wqe_idx: sqf.wqe_idx,
        };
        let rdr_in = RdRespIn {
            job_valid: tok_read,
            job_tok: rxw.tok_data,
            job_rd_valid: te.job_rd_valid,
            job_rd_qp: te.job_rd_qp,
            job_pop_valid: te.job_pop_valid,
            job_pop_qp: te.job_pop_qp,
        };
        let pb_in = PktBuilderIn {
            desc_valid: te.desc_valid,
            desc_qp: te.desc_qp,
            desc_cpl: te.desc_cpl,
            desc_dst_mac: te.desc_dst_mac,
            desc_src_mac: te.desc_src_mac,
            desc_vlan_en: te.desc_vlan_en,
            desc_pcp: te.desc_pcp,
            desc_vid: te.desc_vid,
            desc_ipv6: te.desc_ipv6,
            desc_src_ip: te.desc_src_ip,
            desc_dst_ip: te.desc_dst_ip,
            desc_dscp: te.desc_dscp,
            desc_ecn: te.desc_ecn,
            desc_udp_sport: te.desc_udp_sport,
            desc_opcode: te.desc_opcode,
            desc_se: te.desc_se,
            desc_pkey: te.desc_pkey,
            desc_becn: te.desc_becn,
            desc_dest_qp: te.desc_dest_qp,
            desc_ack_req: te.desc_ack_req,
            desc_psn: te.desc_psn,
            desc_reth_en: te.desc_reth_en,
            desc_reth_va: te.desc_reth_va,
            desc_reth_rkey: te.desc_reth_rkey,
            desc_reth_len: te.desc_reth_len,
            desc_imm_en: te.desc_imm_en,
            desc_imm: te.desc_imm,
            desc_aeth_en: te.desc_aeth_en,
            desc_aeth: te.desc_aeth,
            desc_cnp_pad: te.desc_cnp_pad,
            desc_pay_len: te.desc_pay_len,
            pay_valid: to_pb,
            pay_data: rd.rd_data,
            pay_last: rd.rd_data_last,
            pay_status: rd.rd_data_status,
            pause: pfc.pause,
            pfc_valid: self.o_pg.pfc_valid,
            pfc_enable: self.o_pg.pfc_enable,
            pfc_quanta: self.o_pg.pfc_quanta,
            pfc_src_mac: c.cfg_pfcg_src_mac,
            tx_tready: i.tx_tready,
        };
        // Completions: a = ack_tracker's (no immediate flag, source QP 0),
        // b = the responder's RECV completions (never wait for a frame).
        let cqa_in = CqArbIn {
            a_valid: at.out_valid,
            a_wait_frame: at.out_wait_frame,
            a_wr_id: at.out_wr_id,
            a_status: at.out_status,
            a_opcode: at.out_opcode,
            a_len: at.out_len,
            a_imm: at.out_imm,
            a_imm_flag: false,
            a_src_qp: 0,
            a_qp: at.out_qp,
            a_cq: at.out_cq,
            b_valid: tok_cqe,
            b_wait_frame: false,
            b_wr_id: tok.get(17, 64),
            b_status: tok.get(81, 8) as u8,
            b_opcode: tok.get(89, 8) as u8,
            b_len: tok.get(97, 32) as u32,
            b_imm: tok.get(129, 32) as u32,
            b_imm_flag: tok.get(161, 1) != 0,
            b_src_qp: tok.get(162, 24) as u32,
            // qp and cq: the token's low QPW / CQW bits.
            b_qp: tok.get(1, QPW) as u8,
            b_cq: tok.get(9, CQW) as u8,
            o_ready: cqw.cpl_ready,
        };
        let cqw_in = CqWriterIn {
            cpl_valid: cqa.o_valid,
            cpl_wait_frame: cqa.o_wait_frame,
            cpl_wr_id: cqa.o_wr_id,
            cpl_status: cqa.o_status,
            cpl_opcode: cqa.o_opcode,
            cpl_len: cqa.o_len,
            cpl_imm: cqa.o_imm,
            cpl_imm_flag: cqa.o_imm_flag,
            cpl_src_qp: cqa.o_src_qp,
            cpl_qp: cqa.o_qp,
            cpl_cq: cqa.o_cq,
            frame_done_valid: pb.frame_done_valid,
            frame_done_err: pb.frame_done_err,
            cq_base: c.cq_base,
            cq_log: c.cq_log,
            wr_req_ready: wa.a_req_ready,
            wr_data_ready: wa.a_data_ready,
            wr_done_valid: wr.wr_done_valid && wr.wr_done_client == 0,
        };
        let ra_in = RdReqArbIn {
            a_valid: sqf.rd_req_valid,
            a_addr: sqf.rd_req_addr,
            a_len: sqf.rd_req_len,
            b_valid: te.rd_req_valid,
            b_addr: te.rd_req_addr,
            b_len: te.rd_req_len,
            c_valid: rqf.rd_req_valid,
            c_addr: rqf.rd_req_addr,
            c_len: rqf.rd_req_len,
            // Client 3, the READ responder, is not built yet.
            d_valid: false,
            d_addr: 0,
            d_len: 0,
            o_ready: rd.rd_req_ready,
        };
        let rd_in = DmaRdIn {
            cfg_mrrs: c.cfg_mrrs,
            cfg_req_id: c.cfg_req_id,
            cfg_cpl_timeout: c.cfg_cpl_timeout,
            rd_req_valid: ra.o_valid,
            rd_req_addr: ra.o_addr,
            rd_req_len: ra.o_len,
            rd_req_client: ra.o_client,
            // Read data goes to its client (client 3 asks for none).
            rd_data_ready: match rd.rd_data_client {
                0 => sqf.rd_data_ready,
                1 => pb.pay_ready,
                2 => rqf.rd_data_ready,
                _ => false,
            },
            rq_ready: rqa.a_ready,
            rc_valid: i.rc_valid,
            rc_data: i.rc_data,
            rc_keep: i.rc_keep,
            rc_sop: i.rc_sop,
            rc_eop: i.rc_eop,
        };
        let wr_in = DmaWrIn {
            cfg_mps: c.cfg_mps,
            cfg_req_id: c.cfg_req_id,
            wr_req_valid: wa.wr_req_valid,
            wr_req_addr: wa.wr_req_addr,
            wr_req_len: wa.wr_req_len,
            wr_req_client: wa.wr_req_client as u8,
            wr_data_valid: wa.wr_data_valid,
            wr_data: wa.wr_data,
            rq_ready: rqa.b_ready,
        };
        // dma_wr's clients: 0 cq_writer, 1 rx_wr.
        let wa_in = WrArbIn {
            a_req_valid: cqw.wr_req_valid,
            a_req_addr: cqw.wr_req_addr,
            a_req_len: cqw.wr_req_len,
            a_data_valid: cqw.wr_data_valid,
            a_data: cqw.wr_data,
            b_req_valid: rxw.wr_req_valid,
            b_req_addr: rxw.wr_req_addr,
            b_req_len: rxw.wr_req_len,
            b_data_valid: rxw.wr_data_valid,
            b_data: rxw.wr_data,
            wr_req_ready: wr.wr_req_ready,
            wr_data_ready: wr.wr_data_ready,
        };
        // rx_buf's verdict: rx_parser's ev_frame (one per frame, in order)
        // keeps a data packet (data_valid): a request or a READ RESPONSE.
        let rxb_in = RxBufIn {
            in_valid: i.rx_tvalid,
            in_data: i.rx_tdata,
            in_keep: i.rx_tkeep,
            in_last: i.rx_tlast,
            vd_valid: rxp.ev_frame,
            vd_keep: rxp.data_valid,
            vd_meta: conv(&rxp.data_meta),
            out_ready: rxw.in_ready,
            hd_ready: gw.rxb_hd_ready,
        };
        let rsp_in = ResponderIn {
            hd_valid: gw.rsp_hd_valid,
            hd_meta: conv::<Beat, MetaBits>(&rxb.hd_meta),
            ctx_state: c.rctx_state,
            ctx_uc: c.rctx_uc,
            ctx_mtu: c.rctx_mtu,
            ctx_pd: c.rctx_pd,
            ctx_rq_cq: c.rctx_rq_cq,
            ctx_rnr_timer: c.rctx_rnr_timer,
            ctx_max_rd: c.rctx_max_rd,
            ctx_access: c.rctx_access,
            ctx_remote_qpn: c.rctx_remote_qpn,
            mr_valid: c.rmr_valid,
            mr_key: c.rmr_key,
            mr_va: c.rmr_va,
            mr_len: c.rmr_len,
            mr_pbase: c.rmr_pbase,
            mr_access: c.rmr_access,
            mr_pd: c.rmr_pd,
            rqe_present: rqf.rqe_present,
            rqe_data: conv(&rqf.rqe_data),
            rqe_avail: rqf.rqe_avail,
            qp_err: c.qp_err_all,
            epsn_set_valid: c.epsn_set_valid,
            epsn_set_qp: c.epsn_set_qp,
            epsn_set_psn: c.epsn_set_psn,
            wc_ready: rxw.wc_ready && !gw.wc_sel_s,
        };
        // The READ responses: tx_engine's READ records, cleared when
        // software restarts the QP's PSN.
        let snk_in = RdSinkIn {
            rr_valid: te.rr_valid,
            rr_qp: te.rr_qp,
            rr_psn: te.rr_psn,
            rr_len: te.rr_len,
            rr_addr: te.rr_addr,
            rr_mtu: te.rr_mtu,
            rr_max: te.rr_max,
            clr_valid: c.psn_set_valid,
            clr_qp: c.psn_set_qp,
            hd_valid: gw.snk_hd_valid,
            hd_meta: conv::<Beat, MetaBits>(&rxb.hd_meta),
            wc_ready: rxw.wc_ready && gw.wc_sel_s,
        };
        let rqf_in = RqFetchIn {
            db_valid: c.rq_db_valid,
            db_qp: c.rq_db_qp,
            db_pi: c.rq_db_pi,
            db_state: c.rq_db_state,
            db_base: c.rq_db_base,
            db_log: c.rq_db_log,
            rd_req_ready: ra.c_ready,
            rd_data_valid: to_rqf,
            rd_data: rd.rd_data,
            rd_data_last: rd.rd_data_last,
            rd_data_status: rd.rd_data_status,
            rqe_rd_valid: rsp.rqe_rd_valid,
            rqe_rd_qp: rsp.rqe_rd_qp,
            rqe_pop_valid: rsp.rqe_pop_valid,
            rqe_pop_qp: rsp.rqe_pop_qp,
        };
        // rx_wr's command port: the responder or rd_sink (glue_wires).
        let (r, k, sel) = (rsp, snk, gw.wc_sel_s);
        let rxw_in = RxWrIn {
            wc_valid: if sel { k.wc_valid } else { r.wc_valid },
            wc_tok: if sel { k.wc_tok } else { r.wc_tok },
            wc_off: if sel { k.wc_off } else { r.wc_off },
            wc_len: if sel { k.wc_len } else { r.wc_len },
            wc_addr: if sel { k.wc_addr } else { r.wc_addr },
            wc_last: if sel { k.wc_last } else { r.wc_last },
            wc_tok_data: if sel {
                conv(&k.wc_tok_data)
            } else {
                conv(&r.wc_tok_data)
            },
            in_valid: rxb.out_valid,
            in_data: rxb.out_data,
            in_keep: rxb.out_keep,
            in_last: rxb.out_last,
            wr_req_ready: wa.b_req_ready,
            wr_data_ready: wa.b_data_ready,
            wr_done_valid: wr.wr_done_valid && wr.wr_done_client == 1,
            tok_ready,
        };
        let rqa_in = RqArbIn {
            a_valid: rd.rq_valid,
            a_data: rd.rq_data,
            a_keep: rd.rq_keep,
            a_sop: rd.rq_sop,
            a_eop: rd.rq_eop,
            b_valid: wr.rq_valid,
            b_data: wr.rq_data,
            b_keep: wr.rq_keep,
            b_sop: wr.rq_sop,
            b_eop: wr.rq_eop,
            o_ready: i.rq_ready,
        };
        let rxp_in = RxParserIn {
            rx_tvalid: i.rx_tvalid,
            rx_tdata: i.rx_tdata,
            rx_tkeep: i.rx_tkeep,
            rx_tlast: i.rx_tlast,
            rx_tuser: i.rx_tuser,
            qp_state_all: c.qp_state_all,
        };
        let pfc_in = PfcIn {
            pfc_valid: rxp.pfc_valid,
            pfc_enable: rxp.pfc_enable,
            pfc_quanta: rxp.pfc_quanta,
        };
        let cg_in = CnpGenIn {
            ce_valid: rxp.data_valid && rxp.data_ce,
            ce_qp: rxp.data_qp,
            cfg_interval: c.cfg_cnp_interval,
            cnp_ready,
        };
        let dc_in = DcqcnIn {
            cnp_valid: rxp.cnp_valid,
            cnp_qp: rxp.cnp_qp,
            tx_valid: charge,
            tx_qp: te.desc_qp,
            tx_len: te.desc_wire_len,
            cc_en: c.qp_cc_en_all,
            cfg_g_shift: c.cfg_g_shift,
            cfg_k: c.cfg_k,
            cfg_t_inc: c.cfg_t_inc,
            cfg_b: c.cfg_b,
            cfg_f: c.cfg_f,
            cfg_r_ai: c.cfg_r_ai,
            cfg_r_hai: c.cfg_r_hai,
            cfg_r_min: c.cfg_r_min,
            cfg_r_max: c.cfg_r_max,
            cfg_alpha_init: c.cfg_alpha_init,
            cfg_mode: c.cfg_mode,
            cfg_mon: c.cfg_mon,
            cfg_alpha_t: c.cfg_alpha_t,
        };
        let rl_in = RateLimiterIn {
            rate: dc.rc,
            cc_en: c.qp_cc_en_all,
            cfg_burst: c.cfg_rl_burst,
            charge_valid: charge,
            charge_qp: te.desc_qp,
            charge_len: te.desc_wire_len,
        };
        let at_in = AckTrackerIn {
            cpl_valid: te.cpl_valid,
            cpl_wait_frame: te.cpl_wait_frame,
            cpl_wr_id: te.cpl_wr_id,
            cpl_status: te.cpl_status,
            cpl_opcode: te.cpl_opcode,
            cpl_len: te.cpl_len,
            cpl_imm: te.cpl_imm,
            cpl_qp: te.cpl_qp,
            cpl_cq: te.cpl_cq,
            cpl_uc: te.cpl_uc,
            cpl_psn: te.cpl_psn,
            ack_valid: rxp.ack_valid,
            ack_qp: rxp.ack_qp,
            ack_psn: rxp.ack_psn,
            ack_syndrome: rxp.ack_syndrome,
            // The PSNs sent: tx_engine's PSN write-back after every request
            // packet it commits (a READ REQUEST's covers its response span).
            snd_valid: te.psn_wr_valid,
            snd_qp: te.psn_wr_qp,
            snd_nxt: te.psn_wr_psn,
            psn_set_valid: c.psn_set_valid,
            psn_set_qp: c.psn_set_qp,
            psn_set_psn: c.psn_set_psn,
            // READ done: rd_sink's token, out of rx_wr after the writes.
            rd_done_valid: tok_rdone,
            rd_done_qp: tok.get(1, QPW) as u8,
            rd_done_psn: tok.get(9, 24) as u32,
            // READ progress: rd_sink's implicit ACK of a response accepted.
            rd_prog_valid: snk.prog_valid,
            rd_prog_qp: snk.prog_qp,
            rd_prog_psn: snk.prog_psn,
            out_ready: cqa.a_ready,
            cpl_idx: te.cpl_idx,
            xerr_valid: rtx.xerr_valid,
            xerr_qp: rtx.xerr_qp,
            xerr_status: rtx.xerr_status,
        };
        // Go-back-N decisions (docs/retransmission.md): rewinds to
        // tx_engine, exhaustion to ack_tracker's error mode.
        let rtx_in = RetxCtlIn {
            una_all: at.una_all,
            busy: at.busy,
            halt: c.qp_err_all,
            err_mode: at.err_mode,
            nak_valid: at.nak_valid,
            nak_qp: at.nak_qp,
            nak_psn: at.nak_psn,
            nak_rnr: at.nak_rnr,
            nak_timer: at.nak_timer,
            gap_valid: snk.gap_valid,
            gap_qp: snk.gap_qp,
            gap_psn: snk.gap_psn,
            clr_valid: c.psn_set_valid,
            clr_qp: c.psn_set_qp,
            attr_timeout: c.xctx_timeout,
            attr_retry: c.xctx_retry,
            attr_rnr_retry: c.xctx_rnr_retry,
            rw_ready: te.rw_ready,
            xerr_ready: at.xerr_ready,
        };
        Ins {
            csr: csr_in,
            sqf: sqf_in,
            sched: sched_in,
            te: te_in,
            pb: pb_in,
            cqw: cqw_in,
            ra: ra_in,
            rd: rd_in,
            wr: wr_in,
            rqa: rqa_in,
            rxp: rxp_in,
            pfc: pfc_in,
            cg: cg_in,
            dc: dc_in,
            rl: rl_in,
            at: at_in,
            ag: ag_in,
            rxb: rxb_in,
            rsp: rsp_in,
            rqf: rqf_in,
            rxw: rxw_in,
            wa: wa_in,
            cqa: cqa_in,
            rdr: rdr_in,
            snk: snk_in,
            rtx: rtx_in,
            // PFC generation from rx_buf's occupancy, into pkt_builder.
            pg: PfcGenIn {
                prio_lines: rxb.prio_lines,
                cfg_en: c.cfg_pfcg_en,
                cfg_xoff: c.cfg_pfcg_xoff,
                cfg_xon: c.cfg_pfcg_xon,
                cfg_time: c.cfg_pfcg_time,
                cfg_refresh: c.cfg_pfcg_refresh,
                pfc_ready: self.o_pb.pfc_ready,
            },
        }
    }
}

impl RnicTop {
    /// The blocks without free-running timers hold the same state as in
    /// `o`: every field, registers and RAMs alike.
    fn datapath_equal(&self, o: &RnicTop) -> bool {
        self.csr == o.csr
            && self.sq_fetch == o.sq_fetch
            && self.tx_sched == o.tx_sched
            && self.tx_engine == o.tx_engine
            && self.pkt_builder == o.pkt_builder
            && self.cq_writer == o.cq_writer
            && self.rd_req_arb == o.rd_req_arb
            && self.dma_rd == o.dma_rd
            && self.dma_wr == o.dma_wr
            && self.rq_arb == o.rq_arb
            && self.rx_parser == o.rx_parser
            && self.ack_tracker == o.ack_tracker
            && self.ack_gen == o.ack_gen
            && self.rx_buf == o.rx_buf
            && self.responder == o.responder
            && self.rq_fetch == o.rq_fetch
            && self.rx_wr == o.rx_wr
            && self.wr_arb == o.wr_arb
            && self.cq_arb == o.cq_arb
            && self.rd_resp == o.rd_resp
            && self.rd_sink == o.rd_sink
    }

    fn outputs_equal(&self, o: &RnicTop) -> bool {
        self.o_csr == o.o_csr
            && self.o_sqf == o.o_sqf
            && self.o_sched == o.o_sched
            && self.o_te == o.o_te
            && self.o_pb == o.o_pb
            && self.o_cqw == o.o_cqw
            && self.o_rdarb == o.o_rdarb
            && self.o_rd == o.o_rd
            && self.o_wr == o.o_wr
            && self.o_rqarb == o.o_rqarb
            && self.o_rxp == o.o_rxp
            && self.o_pfc == o.o_pfc
            && self.o_cg == o.o_cg
            && self.o_dc == o.o_dc
            && self.o_rl == o.o_rl
            && self.o_at == o.o_at
            && self.o_ag == o.o_ag
            && self.o_rxb == o.o_rxb
            && self.o_rsp == o.o_rsp
            && self.o_rqf == o.o_rqf
            && self.o_rxw == o.o_rxw
            && self.o_wa == o.o_wa
            && self.o_cqa == o.o_cqa
            && self.o_rdr == o.o_rdr
            && self.o_snk == o.o_snk
            && self.o_rtx == o.o_rtx
            && self.o_pg == o.o_pg
            && self.glue == o.glue
    }

    /// Cycles [`RnicTop::skip`] may jump with the top inputs `i` held.
    ///
    /// Nonzero only when `i` offers nothing (no MMIO access, completion or
    /// RX beat) and the NIC is idle: one tick changes no register of the
    /// datapath blocks and no block's outputs, so with the same inputs the
    /// next tick does the same, for as long as the timer blocks (PFC pause,
    /// DCQCN timers, rate limiter buckets, CNP intervals) keep their
    /// outputs: the least of their horizons.
    pub fn idle_horizon(&self, i: &RnicTopIn) -> u64 {
        if i.mmio_wr_valid || i.mmio_rd_valid || i.rc_valid || i.rx_tvalid {
            return 0;
        }
        if !self.cnp_gen.idle() {
            return 0;
        }
        // The timers' horizons first: they are cheap, and right after a
        // skip one of them is usually zero.
        let w = self.wire(i);
        let h = self
            .pfc
            .idle_horizon()
            .min(self.rate_limiter.idle_horizon(&w.rl))
            .min(self.dcqcn.idle_horizon(&w.dc))
            .min(self.pfc_gen.idle_horizon(&w.pg));
        if h == 0 {
            return 0;
        }
        // retx_ctl's scanner (and its lookup in csr) moves every cycle; it
        // has a closed form when a whole round of it changes nothing else.
        if !self.retx_ctl.idle_round(&w.rtx, |q| self.csr.retry_of(q)) {
            return 0;
        }
        if h == 0 {
            return 0;
        }
        let mut next = self.clone();
        next.tick(i);
        // Everything but the scanner must stand still.
        next.csr.xctx_copy(&self.csr);
        next.o_csr.xctx_timeout = self.o_csr.xctx_timeout;
        next.o_csr.xctx_retry = self.o_csr.xctx_retry;
        next.o_csr.xctx_rnr_retry = self.o_csr.xctx_rnr_retry;
        next.o_rtx = self.o_rtx;
        if !next.outputs_equal(self) || !next.datapath_equal(self) {
            return 0;
        }
        h
    }

    /// `n` ticks with the top inputs `i` held, at once and exactly as the
    /// ticks would leave the state; `n` at most [`RnicTop::idle_horizon`].
    /// Only the timers move; every output stays as it is.
    pub fn skip(&mut self, i: &RnicTopIn, n: u64) {
        let w = self.wire(i);
        self.pfc.skip(n);
        self.rate_limiter.skip(&w.rl, n);
        self.dcqcn.skip(&w.dc, n);
        self.cnp_gen.skip(n);
        self.pfc_gen.skip(n);
        self.retx_ctl.skip(n);
        if n > 0 {
            self.csr.xctx_load(self.retx_ctl.last_looked());
            self.o_csr = self.csr.outputs();
            self.o_rtx = self.retx_ctl.outputs();
        }
    }
}

impl Dut for RnicTop {
    type In = RnicTopIn;
    type Out = RnicTopOut;
    const NAME: &'static str = "rnic_top";

    fn reset(&mut self) -> RnicTopOut {
        self.o_csr = self.csr.reset();
        self.o_sqf = self.sq_fetch.reset();
        self.o_sched = self.tx_sched.reset();
        self.o_te = self.tx_engine.reset();
        self.o_pb = self.pkt_builder.reset();
        self.o_cqw = self.cq_writer.reset();
        self.o_rdarb = self.rd_req_arb.reset();
        self.o_rd = self.dma_rd.reset();
        self.o_wr = self.dma_wr.reset();
        self.o_rqarb = self.rq_arb.reset();
        self.o_rxp = self.rx_parser.reset();
        self.o_pfc = self.pfc.reset();
        self.o_cg = self.cnp_gen.reset();
        self.o_dc = self.dcqcn.reset();
        self.o_rl = self.rate_limiter.reset();
        self.o_at = self.ack_tracker.reset();
        self.o_ag = self.ack_gen.reset();
        self.o_rxb = self.rx_buf.reset();
        self.o_rsp = self.responder.reset();
        self.o_rqf = self.rq_fetch.reset();
        self.o_rxw = self.rx_wr.reset();
        self.o_wa = self.wr_arb.reset();
        self.o_cqa = self.cq_arb.reset();
        self.o_rdr = self.rd_resp.reset();
        self.o_snk = self.rd_sink.reset();
        self.o_rtx = self.retx_ctl.reset();
        self.o_pg = self.pfc_gen.reset();
        self.glue = Glue::default();
        self.top_out()
    }

    fn idle_horizon(&self, i: &RnicTopIn) -> u64 {
        RnicTop::idle_horizon(self, i)
    }

    fn skip(&mut self, i: &RnicTopIn, n: u64) {
        RnicTop::skip(self, i, n)
    }

    fn tick(&mut self, i: &RnicTopIn) -> RnicTopOut {
        let w = self.wire(i);
        let glue = self.glue_next(&self.glue_wires());
        self.o_csr = self.csr.tick(&w.csr);
        self.o_sqf = self.sq_fetch.tick(&w.sqf);
        self.o_sched = self.tx_sched.tick(&w.sched);
        self.o_te = self.tx_engine.tick(&w.te);
        self.o_pb = self.pkt_builder.tick(&w.pb);
        self.o_cqw = self.cq_writer.tick(&w.cqw);
        self.o_rdarb = self.rd_req_arb.tick(&w.ra);
        self.o_rd = self.dma_rd.tick(&w.rd);
        self.o_wr = self.dma_wr.tick(&w.wr);
        self.o_rqarb = self.rq_arb.tick(&w.rqa);
        self.o_rxp = self.rx_parser.tick(&w.rxp);
        self.o_pfc = self.pfc.tick(&w.pfc);
        self.o_cg = self.cnp_gen.tick(&w.cg);
        self.o_dc = self.dcqcn.tick(&w.dc);
        self.o_rl = self.rate_limiter.tick(&w.rl);
        self.o_at = self.ack_tracker.tick(&w.at);
        self.o_ag = self.ack_gen.tick(&w.ag);
        self.o_rxb = self.rx_buf.tick(&w.rxb);
        self.o_rsp = self.responder.tick(&w.rsp);
        self.o_rqf = self.rq_fetch.tick(&w.rqf);
        self.o_rxw = self.rx_wr.tick(&w.rxw);
        self.o_wa = self.wr_arb.tick(&w.wa);
        self.o_cqa = self.cq_arb.tick(&w.cqa);
        self.o_rdr = self.rd_resp.tick(&w.rdr);
        self.o_snk = self.rd_sink.tick(&w.snk);
        self.o_rtx = self.retx_ctl.tick(&w.rtx);
        self.o_pg = self.pfc_gen.tick(&w.pg);
        self.glue = glue;
        self.top_out()
    }
}

impl Trace for RnicTop {
    /// Every block's registers in the scope of its instance in rnic_top.sv.
    fn trace(&self, t: &mut dyn Tracer) {
        let g = &self.glue;
        t.reg("r_open_q", 2, &g.r_open_q);
        t.reg("s_open_q", 2, &g.s_open_q);
        t.reg("wc_hold_q", 1, &g.wc_hold_q);
        t.reg("wc_sel_s_q", 1, &g.wc_sel_s_q);
        let blocks: [(&str, &dyn Trace); 27] = [
            ("u_csr", &self.csr),
            ("u_sq_fetch", &self.sq_fetch),
            ("u_tx_sched", &self.tx_sched),
            ("u_tx_engine", &self.tx_engine),
            ("u_pkt_builder", &self.pkt_builder),
            ("u_cq_writer", &self.cq_writer),
            ("u_rd_req_arb", &self.rd_req_arb),
            ("u_dma_rd", &self.dma_rd),
            ("u_dma_wr", &self.dma_wr),
            ("u_rq_arb", &self.rq_arb),
            ("u_rx_parser", &self.rx_parser),
            ("u_pfc", &self.pfc),
            ("u_cnp_gen", &self.cnp_gen),
            ("u_dcqcn", &self.dcqcn),
            ("u_rate_limiter", &self.rate_limiter),
            ("u_ack_tracker", &self.ack_tracker),
            ("u_ack_gen", &self.ack_gen),
            ("u_rx_buf", &self.rx_buf),
            ("u_responder", &self.responder),
            ("u_rq_fetch", &self.rq_fetch),
            ("u_rx_wr", &self.rx_wr),
            ("u_wr_arb", &self.wr_arb),
            ("u_cq_arb", &self.cq_arb),
            ("u_rd_resp", &self.rd_resp),
            ("u_rd_sink", &self.rd_sink),
            ("u_pfc_gen", &self.pfc_gen),
            ("u_retx_ctl", &self.retx_ctl),
        ];
        for (name, b) in blocks {
            t.push(name);
            b.trace(t);
            t.pop();
        }
    }
}
