//! `rnic_top`: every block of the transmit datapath behind the top-level
//! ports of ARCHITECTURE.md. Model of `hw/rtl/rnic_top.sv`.

use crate::ports;
use crate::ports::Beat;

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

use crate::cq_writer::{CqWriter, CqWriterIn, CqWriterOut};
use crate::csr::{Csr, CsrIn, CsrOut};
use crate::dma_rd::{DmaRd, DmaRdIn, DmaRdOut, DmaRdParams};
use crate::dma_wr::{DmaWr, DmaWrIn, DmaWrOut};
use crate::dut::Dut;
use crate::pkt_builder::{PktBuilder, PktBuilderIn, PktBuilderOut};
use crate::rd_req_arb::{RdReqArb, RdReqArbIn, RdReqArbOut};
use crate::rq_arb::{RqArb, RqArbIn, RqArbOut};
use crate::sq_fetch::{SqFetch, SqFetchIn, SqFetchOut};
use crate::tx_engine::{TxEngine, TxEngineIn, TxEngineOut};
use crate::tx_sched::{TxSched, TxSchedIn, TxSchedOut};

/// `dma_rd` as `rnic_top` instantiates it (TAGS, BUF_LINES).
pub const DMA_RD_PARAMS: DmaRdParams = DmaRdParams {
    tags: 64,
    buf_lines: 512,
};
/// Byte offset of the lkey in a WQE: the MR lookup is addressed from it.
const WQE_LKEY: usize = 0x18;
const QPS: usize = 16;

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
        }
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

    /// Every block's inputs this cycle, from the top inputs and the blocks'
    /// registered outputs, exactly as rnic_top.sv wires them.
    #[allow(clippy::type_complexity)]
    fn wire(
        &self,
        i: &RnicTopIn,
    ) -> (
        CsrIn,
        SqFetchIn,
        TxSchedIn,
        TxEngineIn,
        PktBuilderIn,
        CqWriterIn,
        RdReqArbIn,
        DmaRdIn,
        DmaWrIn,
        RqArbIn,
    ) {
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
        let mr_idx = sqf.wqe_data[WQE_LKEY] & 0x0F;
        let to_sqf = rd.rd_data_valid && rd.rd_data_client == 0;
        let to_pb = rd.rd_data_valid && rd.rd_data_client == 1;
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
            // The receive path is not wired yet: no RX events, dcqcn's
            // counters and state read 0 (as the RTL ties them).
            ..CsrIn::default()
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
        };
        let sched_in = TxSchedIn {
            req_active: te.req_active,
            req_avail: sqf.wqe_avail,
            // The rate limiters, PFC pause and control frames (ACK/CNP)
            // arrive with issue 4: until then every QP may send, no
            // priority is paused and no control frame waits.
            rate_ok: ((1u32 << QPS) - 1) as u16,
            pause: 0,
            qp_pcp: c.qp_pcp_all,
            ctrl_req: false,
            grant_ready: te.grant_ready,
        };
        // Until ack_tracker is wired (issue 4), completions of successful
        // RC messages are taken from tx_engine and dropped here, as before
        // they were not made at all.
        let te_cpl_rc_ok = !te.cpl_uc && te.cpl_status == 0;
        let te_in = TxEngineIn {
            grant_valid: sch.grant_valid,
            grant_qp: sch.grant_qp,
            wqe_avail: sqf.wqe_avail,
            wqe_valid: sqf.wqe_valid,
            wqe_qp: sqf.wqe_qp,
            wqe_data: sqf.wqe_data,
            qp_state: c.qp_state,
            qp_uc: c.qp_uc,
            qp_ipv6: c.qp_ipv6,
            qp_vlan_en: c.qp_vlan_en,
            qp_ecn_en: c.qp_ecn_en,
            qp_mtu: c.qp_mtu,
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
            cpl_ready: cqw.cpl_ready || te_cpl_rc_ok,
            // Issue 4's grant_ctrl / cnp_* / cfg_cnp_* are not wired yet
            // (0, as the RTL's unconnected pins): the integrator wires them.
            ..Default::default()
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
            // PFC not wired yet (the integrator connects pfc's pause here).
            pause: 0,
            tx_tready: i.tx_tready,
        };
        let cqw_in = CqWriterIn {
            cpl_valid: te.cpl_valid && !te_cpl_rc_ok,
            cpl_wait_frame: te.cpl_wait_frame,
            cpl_wr_id: te.cpl_wr_id,
            cpl_status: te.cpl_status,
            cpl_opcode: te.cpl_opcode,
            cpl_len: te.cpl_len,
            cpl_imm: te.cpl_imm,
            cpl_qp: te.cpl_qp,
            cpl_cq: te.cpl_cq,
            frame_done_valid: pb.frame_done_valid,
            frame_done_err: pb.frame_done_err,
            cq_base: c.cq_base,
            cq_log: c.cq_log,
            wr_req_ready: wr.wr_req_ready,
            wr_data_ready: wr.wr_data_ready,
            wr_done_valid: wr.wr_done_valid,
        };
        let ra_in = RdReqArbIn {
            a_valid: sqf.rd_req_valid,
            a_addr: sqf.rd_req_addr,
            a_len: sqf.rd_req_len,
            b_valid: te.rd_req_valid,
            b_addr: te.rd_req_addr,
            b_len: te.rd_req_len,
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
            rd_data_ready: if rd.rd_data_client == 0 {
                sqf.rd_data_ready
            } else {
                pb.pay_ready
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
            wr_req_valid: cqw.wr_req_valid,
            wr_req_addr: cqw.wr_req_addr,
            wr_req_len: cqw.wr_req_len,
            wr_req_client: 0,
            wr_data_valid: cqw.wr_data_valid,
            wr_data: cqw.wr_data,
            rq_ready: rqa.b_ready,
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
        (
            csr_in, sqf_in, sched_in, te_in, pb_in, cqw_in, ra_in, rd_in, wr_in, rqa_in,
        )
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
        self.top_out()
    }

    fn tick(&mut self, i: &RnicTopIn) -> RnicTopOut {
        let (csr, sqf, sch, te, pb, cqw, ra, rd, wr, rqa) = self.wire(i);
        self.o_csr = self.csr.tick(&csr);
        self.o_sqf = self.sq_fetch.tick(&sqf);
        self.o_sched = self.tx_sched.tick(&sch);
        self.o_te = self.tx_engine.tick(&te);
        self.o_pb = self.pkt_builder.tick(&pb);
        self.o_cqw = self.cq_writer.tick(&cqw);
        self.o_rdarb = self.rd_req_arb.tick(&ra);
        self.o_rd = self.dma_rd.tick(&rd);
        self.o_wr = self.dma_wr.tick(&wr);
        self.o_rqarb = self.rq_arb.tick(&rqa);
        self.top_out()
    }
}
