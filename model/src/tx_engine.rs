//! `tx_engine`: send-queue work to packets. Model of `hw/rtl/tx_engine.sv`.
//!
//! On each grant from `tx_sched` the engine does one step for one QP: the
//! next packet of the QP's WQE in progress, or pop a new WQE from `sq_fetch`,
//! check it (docs/tx_datapath.md, "Protection checks") and send its first
//! packet or queue its error / flush completion, or nothing (a stale grant,
//! or a QP with no WQE in progress whose `wqe_block` is high: rnic_top's
//! ack_tracker `full`, so the QP finishes its message but starts no new one).
//! A packet is a descriptor for `pkt_builder`, a payload read (`rd_req`,
//! client 1 of `dma_rd`) when it carries payload, a PSN write-back to csr,
//! and, for the last packet of a signaled message, a completion (UC: it
//! waits for the frame, `cpl_wait_frame`; RC: `ack_tracker` holds it until
//! the ACK, with `cpl_psn` the message's last PSN). A control grant
//! (`grant_ctrl`) takes the CNP (`cnp_valid`, `cnp_qp`) or the ACK
//! (`ack_valid`, `ack_qp`, `ack_psn`, `ack_syndrome`, `ack_msn`) waiting,
//! round robin when both wait (the 1-bit pointer `ctrl_ack_q`, output as
//! `ctrl_ack_first`: the ACK is taken when `ack_valid & (ctrl_ack_first |
//! !cnp_valid)`), and emits its descriptor instead (docs/tx_datapath.md,
//! tx_engine). The three valid/ready
//! outputs are each held until taken; the next grant is taken once all are.
//!
//! Timing (grant transferred at n):
//! - new WQE: `wqe_pop` and `qp_idx` visible at n+1; the WQE (`wqe_valid`)
//!   and the QP context arrive at n+2, the MR entry (csr's MR port, addressed
//!   by the WQE's lkey outside this block) at n+3, when the checks run;
//!   descriptor / payload read / completion visible at n+4;
//! - WQE in progress: `qp_idx` visible at n+1, QP context at n+2, outputs
//!   visible at n+3;
//! - CNP / ACK (control grant with one waiting): as a WQE in progress,
//!   descriptor visible at n+3 (an ACK for a UC QP is dropped: no output,
//!   `grant_ready` back at n+4);
//! - grant for a QP with no work (or with no WQE in progress and
//!   `wqe_block` high in the cycle the grant is taken): ignored,
//!   `grant_ready` stays high;
//! - last of the step's transfers at m -> `grant_ready` visible at m+1.
//!
//! The PSN comes from csr's QP context each time (the write-back of the
//! previous packet is applied long before: it is visible with that packet's
//! descriptor, and the next read of the context is at least two cycles later).

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::trace::{Trace, Tracer};

/// The table sizes and encodings (the lkey's MR index is `lkey mod MRS`,
/// applied in rnic_top).
pub use crate::params::{cqe_status, qp_state, wc_op, wqe_op, CQS, MRS, QPS};

ports! {
    /// Inputs of `tx_engine` (all but `clk`/`rst`).
    pub struct TxEngineIn {
        pub grant_valid: bool = 1,
        pub grant_qp: u8 = 4 if grant_valid,
        pub grant_ctrl: bool = 1 if grant_valid,
        pub cnp_valid: bool = 1,
        pub cnp_qp: u8 = 4 if cnp_valid,
        pub cfg_cnp_dscp: u8 = 6,
        pub cfg_cnp_pcp: u8 = 3,
        pub cfg_cnp_becn: bool = 1,
        pub ack_valid: bool = 1,
        pub ack_qp: u8 = 4 if ack_valid,
        pub ack_psn: u32 = 24 if ack_valid,
        pub ack_syndrome: u8 = 8 if ack_valid,
        pub ack_msn: u32 = 24 if ack_valid,
        /// rd_resp: bit q, QP q has a READ job.
        pub job_avail: u16 = 16,
        /// rd_resp's answer to `job_rd` (the cycle after it): the head job.
        pub job_present: bool = 1,
        pub job_psn: u32 = 24,
        pub job_addr: u64 = 64,
        pub job_len: u32 = 32,
        pub job_msn: u32 = 24,
        pub job_mtu: u8 = 3,
        pub wqe_avail: u16 = 16,
        pub wqe_block: u16 = 16,
        /// ack_tracker's error mode per QP (a WQE in progress ended by
        /// ERROR completes through it).
        pub err_mode: u16 = 16,
        pub wqe_valid: bool = 1,
        pub wqe_qp: u8 = 4 if wqe_valid,
        pub wqe_data: Beat = 512 if wqe_valid,
        pub qp_state: u8 = 2,
        pub qp_uc: bool = 1,
        pub qp_ipv6: bool = 1,
        pub qp_vlan_en: bool = 1,
        pub qp_ecn_en: bool = 1,
        pub qp_mtu: u8 = 3,
        /// CTRL.MAX_RD: passed to `rd_sink` with each READ REQUEST record.
        pub qp_max_rd: u8 = 3,
        pub qp_cq: u8 = 2,
        pub qp_remote_qpn: u32 = 24,
        pub qp_psn: u32 = 24,
        pub qp_pd: u16 = 16,
        pub qp_dst_mac: u64 = 48,
        pub qp_src_mac: u64 = 48,
        pub qp_src_ip: u128 = 128,
        pub qp_dst_ip: u128 = 128,
        pub qp_udp_sport: u16 = 16,
        pub qp_dscp: u8 = 6,
        pub qp_vid: u16 = 12,
        pub qp_pcp: u8 = 3,
        pub qp_pkey: u16 = 16,
        pub mr_valid: bool = 1,
        pub mr_key: u32 = 32,
        pub mr_va: u64 = 64,
        pub mr_len: u64 = 64,
        pub mr_pbase: u64 = 64,
        pub mr_access: u8 = 4,
        pub mr_pd: u16 = 16,
        pub rd_req_ready: bool = 1,
        pub desc_ready: bool = 1,
        pub cpl_ready: bool = 1,
        /// retx_ctl: resend QP `rw_qp` from PSN `rw_psn` (held until taken).
        pub rw_valid: bool = 1,
        pub rw_qp: u8 = 4 if rw_valid,
        pub rw_psn: u32 = 24 if rw_valid,
        /// ack_tracker: QP `anc_qp`'s anchor is SQ index `anc_idx`, PSN
        /// `anc_psn`.
        pub anc_valid: bool = 1,
        pub anc_qp: u8 = 4 if anc_valid,
        pub anc_idx: u16 = 16 if anc_valid,
        pub anc_psn: u32 = 24 if anc_valid,
        /// csr: software restarted QP `psn_set_qp`'s PSN.
        pub psn_set_valid: bool = 1,
        pub psn_set_qp: u8 = 4 if psn_set_valid,
        /// sq_fetch: the SQ index of the WQE on `wqe_data`.
        pub wqe_idx: u16 = 16 if wqe_valid,
    }
}

ports! {
    /// Outputs of `tx_engine`, all registered.
    pub struct TxEngineOut {
        pub grant_ready: bool = 1,
        /// The control round robin: 1 = a control grant takes a waiting
        /// ACK before a waiting CNP.
        pub ctrl_ack_first: bool = 1,
        /// Read the head READ job of `job_rd_qp` (rd_resp).
        pub job_rd_valid: bool = 1,
        pub job_rd_qp: u8 = 4 if job_rd_valid,
        /// Pulse: the head job of `job_pop_qp` is done (its last packet's
        /// descriptor is on `desc_*`).
        pub job_pop_valid: bool = 1,
        pub job_pop_qp: u8 = 4 if job_pop_valid,
        pub req_active: u16 = 16,
        pub wqe_pop_valid: bool = 1,
        pub wqe_pop_qp: u8 = 4 if wqe_pop_valid,
        pub qp_idx: u8 = 4,
        pub psn_wr_valid: bool = 1,
        pub psn_wr_qp: u8 = 4 if psn_wr_valid,
        pub psn_wr_psn: u32 = 24 if psn_wr_valid,
        /// Pulse: a READ REQUEST committed, for rd_sink (first PSN, length,
        /// local bus address, 0 for length 0, and the MTU code used).
        pub rr_valid: bool = 1,
        pub rr_qp: u8 = 4 if rr_valid,
        pub rr_psn: u32 = 24 if rr_valid,
        pub rr_len: u32 = 32 if rr_valid,
        pub rr_addr: u64 = 64 if rr_valid,
        pub rr_mtu: u8 = 3 if rr_valid,
        pub rr_max: u8 = 3 if rr_valid,
        pub err_valid: bool = 1,
        pub err_qp: u8 = 4 if err_valid,
        pub rd_req_valid: bool = 1,
        pub rd_req_addr: u64 = 64 if rd_req_valid,
        pub rd_req_len: u32 = 17 if rd_req_valid,
        pub desc_valid: bool = 1,
        pub desc_qp: u8 = 4 if desc_valid,
        pub desc_cpl: bool = 1 if desc_valid,
        pub desc_dst_mac: u64 = 48 if desc_valid,
        pub desc_src_mac: u64 = 48 if desc_valid,
        pub desc_vlan_en: bool = 1 if desc_valid,
        pub desc_pcp: u8 = 3 if desc_valid,
        pub desc_vid: u16 = 12 if desc_valid,
        pub desc_ipv6: bool = 1 if desc_valid,
        pub desc_src_ip: u128 = 128 if desc_valid,
        pub desc_dst_ip: u128 = 128 if desc_valid,
        pub desc_dscp: u8 = 6 if desc_valid,
        pub desc_ecn: u8 = 2 if desc_valid,
        pub desc_udp_sport: u16 = 16 if desc_valid,
        pub desc_opcode: u8 = 8 if desc_valid,
        pub desc_se: bool = 1 if desc_valid,
        pub desc_pkey: u16 = 16 if desc_valid,
        pub desc_becn: bool = 1 if desc_valid,
        pub desc_dest_qp: u32 = 24 if desc_valid,
        pub desc_ack_req: bool = 1 if desc_valid,
        pub desc_psn: u32 = 24 if desc_valid,
        pub desc_reth_en: bool = 1 if desc_valid,
        pub desc_reth_va: u64 = 64 if desc_valid,
        pub desc_reth_rkey: u32 = 32 if desc_valid,
        pub desc_reth_len: u32 = 32 if desc_valid,
        pub desc_imm_en: bool = 1 if desc_valid,
        pub desc_imm: u32 = 32 if desc_valid,
        pub desc_aeth_en: bool = 1 if desc_valid,
        pub desc_aeth: u32 = 32 if desc_valid,
        pub desc_cnp_pad: bool = 1 if desc_valid,
        pub desc_pay_len: u16 = 13 if desc_valid,
        pub desc_wire_len: u16 = 14 if desc_valid,
        pub cpl_valid: bool = 1,
        pub cpl_wait_frame: bool = 1 if cpl_valid,
        pub cpl_wr_id: u64 = 64 if cpl_valid,
        pub cpl_status: u8 = 8 if cpl_valid,
        pub cpl_opcode: u8 = 8 if cpl_valid,
        pub cpl_len: u32 = 32 if cpl_valid,
        pub cpl_imm: u32 = 32 if cpl_valid,
        pub cpl_qp: u8 = 4 if cpl_valid,
        pub cpl_cq: u8 = 2 if cpl_valid,
        pub cpl_uc: bool = 1 if cpl_valid,
        pub cpl_psn: u32 = 24 if cpl_valid,
        pub ev_prot_err: bool = 1,
        pub ev_flush: bool = 1,
        pub rw_ready: bool = 1,
        /// Pulse: sq_fetch fetches QP `sq_rw_qp`'s WQEs again from index
        /// `sq_rw_idx`.
        pub sq_rw_valid: bool = 1,
        pub sq_rw_qp: u8 = 4 if sq_rw_valid,
        pub sq_rw_idx: u16 = 16 if sq_rw_valid,
        /// The completion's SQ index (ack_tracker keeps it for the anchor).
        pub cpl_idx: u16 = 16 if cpl_valid,
        /// Bit q: QP q's next WQE to pop was sent before (rnic_top lets it
        /// through sq_block).
        pub rpl_all: u16 = 16,
    }
}

/// Path MTU in bytes of the QP's IB MTU code (0 read as 1, 6 and 7 as 5).
pub fn mtu_bytes(code: u8) -> u32 {
    128 << mtu_code(code)
}

fn mtu_code(code: u8) -> u32 {
    match code & 7 {
        0 => 1,
        c if c > 5 => 5,
        c => c as u32,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Idle,
    /// New WQE: the pop is visible.
    Pop,
    /// New WQE: the WQE and the QP context are visible; latch the WQE.
    Wqe,
    /// New WQE: the MR entry is visible; check and emit.
    Chk,
    /// WQE in progress or CNP: `qp_idx` is visible.
    Ctx,
    /// WQE in progress or CNP: the QP context is visible; emit.
    Emit,
    /// Waiting for the step's desc / rd_req / cpl transfers.
    Out,
    /// Rewind: the QP's anchor is visible; act.
    Rw,
    /// Rewind: sq_fetch takes the re-fetch order.
    Rw2,
}

/// The WQE (or WQE in progress) a packet is made from.
#[derive(Debug, Clone, Copy)]
struct Src {
    wr_id: u64,
    opcode: u8,
    flags: u8,
    len: u32,
    paddr: u64,
    rva: u64,
    rkey: u32,
    imm: u32,
    left: u32,
    first: bool,
    /// Never completed before: its last packet pushes the completion and
    /// (a READ) the READ record.
    new: bool,
    /// Its SQ index.
    idx: u16,
    /// This packet's PSN.
    psn: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TxEngine {
    state_q: State,
    grant_ready_q: bool,
    qp_idx_q: u8,
    /// The step is a CNP (a control grant).
    cnp_q: bool,
    /// The step is an ACK (a control grant).
    ack_q: bool,
    /// The step is a READ response packet (a data grant of a QP with a job).
    rsp_q: bool,
    /// Control round robin: an ACK goes before a CNP when both wait.
    ctrl_ack_q: bool,
    // The ACK taken: BTH PSN and AETH.
    a_psn_q: u32,
    a_syndrome_q: u8,
    a_msn_q: u32,
    wqe_pop_valid_q: bool,
    wqe_pop_qp_q: u8,
    // The new WQE, latched from wqe_data.
    w_wr_id_q: u64,
    w_opcode_q: u8,
    w_flags_q: u8,
    w_len_q: u32,
    w_laddr_q: u64,
    w_lkey_q: u32,
    w_imm_q: u32,
    w_rva_q: u64,
    w_rkey_q: u32,
    // Per QP: the WQE in progress (valid while `active_q` bit q is set).
    active_q: u16,
    c_wr_id_q: [u64; QPS],
    c_opcode_q: [u8; QPS],
    c_flags_q: [u8; QPS],
    c_len_q: [u32; QPS],
    /// Physical address of the next payload byte.
    c_paddr_q: [u64; QPS],
    c_rva_q: [u64; QPS],
    c_rkey_q: [u32; QPS],
    c_imm_q: [u32; QPS],
    /// Payload bytes not yet sent.
    c_left_q: [u32; QPS],
    /// Per QP: the head READ job has packets sent (`rp_mem_q` counts them).
    rmid_q: u16,
    /// Per QP: the head job's packets sent (a RAM, read in `Ctx`).
    rp_mem_q: [u32; QPS],
    rp_rd_q: u32,
    job_rd_valid_q: bool,
    job_rd_qp_q: u8,
    job_pop_valid_q: bool,
    job_pop_qp_q: u8,
    // Outputs.
    psn_wr_valid_q: bool,
    psn_wr_qp_q: u8,
    psn_wr_psn_q: u32,
    rr_valid_q: bool,
    rr_qp_q: u8,
    rr_psn_q: u32,
    rr_len_q: u32,
    rr_addr_q: u64,
    rr_mtu_q: u8,
    rr_max_q: u8,
    err_valid_q: bool,
    err_qp_q: u8,
    rd_req_valid_q: bool,
    rd_req_addr_q: u64,
    rd_req_len_q: u32,
    desc_valid_q: bool,
    /// The descriptor's fields (valid aside).
    desc_q: TxEngineOut,
    cpl_valid_q: bool,
    cpl_wait_frame_q: bool,
    cpl_wr_id_q: u64,
    cpl_status_q: u8,
    cpl_opcode_q: u8,
    cpl_len_q: u32,
    cpl_imm_q: u32,
    cpl_qp_q: u8,
    cpl_cq_q: u8,
    cpl_uc_q: bool,
    cpl_psn_q: u32,
    ev_prot_err_q: bool,
    ev_flush_q: bool,
    // Retransmission (docs/retransmission.md). RAMs per QP: the anchor
    // set by the first WQE after a restart (a0) and ack_tracker's (a1), as
    // {SQ index, PSN}; hw, the first SQ index whose last packet was never
    // sent; rs, a rewind's resume PSN. Bits per QP: a0/a1/hw valid, skip
    // (looking for the resume PSN), old (the next WQE to pop was sent).
    rw_ready_q: bool,
    rw_psn_q: u32,
    a0_mem_q: [u64; QPS],
    a1_mem_q: [u64; QPS],
    hw_mem_q: [u16; QPS],
    rs_mem_q: [u32; QPS],
    a0_rd_q: u64,
    a1_rd_q: u64,
    hw_rd_q: u16,
    rs_rd_q: u32,
    a0_ok_q: u16,
    a1_ok_q: u16,
    hw_ok_q: u16,
    skip_q: u16,
    old_q: u16,
    w_idx_q: u16,
    c_idx_q: [u16; QPS],
    c_new_q: u16,
    sq_rw_valid_q: bool,
    sq_rw_qp_q: u8,
    sq_rw_idx_q: u16,
    cpl_idx_q: u16,
}

impl Default for TxEngine {
    fn default() -> Self {
        TxEngine {
            state_q: State::Idle,
            grant_ready_q: false,
            qp_idx_q: 0,
            cnp_q: false,
            ack_q: false,
            rsp_q: false,
            ctrl_ack_q: false,
            a_psn_q: 0,
            a_syndrome_q: 0,
            a_msn_q: 0,
            wqe_pop_valid_q: false,
            wqe_pop_qp_q: 0,
            w_wr_id_q: 0,
            w_opcode_q: 0,
            w_flags_q: 0,
            w_len_q: 0,
            w_laddr_q: 0,
            w_lkey_q: 0,
            w_imm_q: 0,
            w_rva_q: 0,
            w_rkey_q: 0,
            active_q: 0,
            c_wr_id_q: [0; QPS],
            c_opcode_q: [0; QPS],
            c_flags_q: [0; QPS],
            c_len_q: [0; QPS],
            c_paddr_q: [0; QPS],
            c_rva_q: [0; QPS],
            c_rkey_q: [0; QPS],
            c_imm_q: [0; QPS],
            c_left_q: [0; QPS],
            rmid_q: 0,
            rp_mem_q: [0; QPS],
            rp_rd_q: 0,
            job_rd_valid_q: false,
            job_rd_qp_q: 0,
            job_pop_valid_q: false,
            job_pop_qp_q: 0,
            psn_wr_valid_q: false,
            psn_wr_qp_q: 0,
            psn_wr_psn_q: 0,
            rr_valid_q: false,
            rr_qp_q: 0,
            rr_psn_q: 0,
            rr_len_q: 0,
            rr_addr_q: 0,
            rr_mtu_q: 0,
            rr_max_q: 0,
            err_valid_q: false,
            err_qp_q: 0,
            rd_req_valid_q: false,
            rd_req_addr_q: 0,
            rd_req_len_q: 0,
            desc_valid_q: false,
            desc_q: TxEngineOut::default(),
            cpl_valid_q: false,
            cpl_wait_frame_q: false,
            cpl_wr_id_q: 0,
            cpl_status_q: 0,
            cpl_opcode_q: 0,
            cpl_len_q: 0,
            cpl_imm_q: 0,
            cpl_qp_q: 0,
            cpl_cq_q: 0,
            cpl_uc_q: false,
            cpl_psn_q: 0,
            ev_prot_err_q: false,
            ev_flush_q: false,
            rw_ready_q: false,
            rw_psn_q: 0,
            a0_mem_q: [0; QPS],
            a1_mem_q: [0; QPS],
            hw_mem_q: [0; QPS],
            rs_mem_q: [0; QPS],
            a0_rd_q: 0,
            a1_rd_q: 0,
            hw_rd_q: 0,
            rs_rd_q: 0,
            a0_ok_q: 0,
            a1_ok_q: 0,
            hw_ok_q: 0,
            skip_q: 0,
            old_q: 0,
            w_idx_q: 0,
            c_idx_q: [0; QPS],
            c_new_q: 0,
            sq_rw_valid_q: false,
            sq_rw_qp_q: 0,
            sq_rw_idx_q: 0,
            cpl_idx_q: 0,
        }
    }
}

/// `b` is 1 .. 2^15 - 1 SQ indexes after `a` (16-bit ring counters).
fn idx_before(a: u16, b: u16) -> bool {
    let d = b.wrapping_sub(a);
    d != 0 && d < 0x8000
}

fn le32(d: &Beat, off: usize) -> u32 {
    u32::from_le_bytes(d[off..off + 4].try_into().unwrap())
}

fn le64(d: &Beat, off: usize) -> u64 {
    u64::from_le_bytes(d[off..off + 8].try_into().unwrap())
}

impl TxEngine {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> TxEngineOut {
        let d = &self.desc_q;
        TxEngineOut {
            grant_ready: self.grant_ready_q,
            ctrl_ack_first: self.ctrl_ack_q,
            job_rd_valid: self.job_rd_valid_q,
            job_rd_qp: self.job_rd_qp_q,
            job_pop_valid: self.job_pop_valid_q,
            job_pop_qp: self.job_pop_qp_q,
            req_active: self.active_q,
            wqe_pop_valid: self.wqe_pop_valid_q,
            wqe_pop_qp: self.wqe_pop_qp_q,
            qp_idx: self.qp_idx_q,
            psn_wr_valid: self.psn_wr_valid_q,
            psn_wr_qp: self.psn_wr_qp_q,
            psn_wr_psn: self.psn_wr_psn_q,
            rr_valid: self.rr_valid_q,
            rr_qp: self.rr_qp_q,
            rr_psn: self.rr_psn_q,
            rr_len: self.rr_len_q,
            rr_addr: self.rr_addr_q,
            rr_mtu: self.rr_mtu_q,
            rr_max: self.rr_max_q,
            err_valid: self.err_valid_q,
            err_qp: self.err_qp_q,
            rd_req_valid: self.rd_req_valid_q,
            rd_req_addr: self.rd_req_addr_q,
            rd_req_len: self.rd_req_len_q,
            desc_valid: self.desc_valid_q,
            cpl_valid: self.cpl_valid_q,
            cpl_wait_frame: self.cpl_wait_frame_q,
            cpl_wr_id: self.cpl_wr_id_q,
            cpl_status: self.cpl_status_q,
            cpl_opcode: self.cpl_opcode_q,
            cpl_len: self.cpl_len_q,
            cpl_imm: self.cpl_imm_q,
            cpl_qp: self.cpl_qp_q,
            cpl_cq: self.cpl_cq_q,
            cpl_uc: self.cpl_uc_q,
            cpl_psn: self.cpl_psn_q,
            ev_prot_err: self.ev_prot_err_q,
            ev_flush: self.ev_flush_q,
            rw_ready: self.rw_ready_q,
            sq_rw_valid: self.sq_rw_valid_q,
            sq_rw_qp: self.sq_rw_qp_q,
            sq_rw_idx: self.sq_rw_idx_q,
            cpl_idx: self.cpl_idx_q,
            rpl_all: self.old_q,
            ..*d
        }
    }

    /// Queues a completion (held until taken). Only a UC success waits for
    /// its frame; RC successes wait for their ACK in ack_tracker (`psn` is
    /// the message's last PSN, 0 for errors and flushes), error and flush
    /// completions for nothing.
    #[allow(clippy::too_many_arguments)]
    fn set_cpl(
        &mut self,
        wr_id: u64,
        status: u8,
        opcode: u8,
        len: u32,
        imm: u32,
        i: &TxEngineIn,
        psn: u32,
    ) {
        let cq = i.qp_cq;
        self.cpl_valid_q = true;
        self.cpl_wait_frame_q = status == cqe_status::SUCCESS && i.qp_uc;
        self.cpl_uc_q = i.qp_uc;
        self.cpl_psn_q = psn;
        self.cpl_wr_id_q = wr_id;
        self.cpl_status_q = status;
        self.cpl_opcode_q = wc_op::of_wqe(opcode);
        self.cpl_len_q = len;
        // The CQE carries the immediate of the +Imm opcodes only.
        self.cpl_imm_q = if opcode == wqe_op::SEND_IMM || opcode == wqe_op::WRITE_IMM {
            imm
        } else {
            0
        };
        self.cpl_qp_q = self.qp_idx_q;
        self.cpl_cq_q = cq & (CQS as u8 - 1);
    }

    /// The next packet of `s` for QP `qp_idx_q`: descriptor, payload read,
    /// PSN write-back, completion, and the WQE-in-progress update. Returns
    /// the SQ index of a message whose last packet is sent for the first
    /// time.
    fn emit(&mut self, s: Src, i: &TxEngineIn) -> Option<u16> {
        let q = self.qp_idx_q as usize;
        let code = mtu_code(i.qp_mtu);
        let mtu = 128u32 << code;
        let op = s.opcode;
        let is_read = op == wqe_op::READ;
        let is_send = op == wqe_op::SEND || op == wqe_op::SEND_IMM;
        let has_imm = op == wqe_op::SEND_IMM || op == wqe_op::WRITE_IMM;
        // A READ REQUEST is one packet whatever the length.
        let last = is_read || s.left <= mtu;
        let pay = if is_read {
            0
        } else if last {
            s.left
        } else {
            mtu
        };
        let rc_op: u8 = if is_read {
            0x0C
        } else {
            // SEND: FIRST 0, MIDDLE 1, LAST 2 / 3, ONLY 4 / 5; WRITE the
            // same order from 6.
            let base = if is_send { 0x00 } else { 0x06 };
            base + match (s.first, last) {
                (true, true) => 4 + has_imm as u8,
                (true, false) => 0,
                (false, true) => 2 + has_imm as u8,
                (false, false) => 1,
            }
        };
        // READ REQUEST: one PSN per response packet it will get.
        let n_psn: u64 = if is_read {
            ((s.len as u64 + mtu as u64 - 1) >> (7 + code)).max(1)
        } else {
            1
        };
        let psn = s.psn & 0xFF_FFFF;
        let next_psn = ((psn as u64 + n_psn) & 0xFF_FFFF) as u32;
        // Every signaled message completes (UC: after its frame; RC: after
        // its ACK, in ack_tracker), once: not when it is sent again.
        let cpl_due = last && s.flags & 1 != 0 && s.new;

        let d = &mut self.desc_q;
        d.desc_qp = q as u8;
        // Only a UC completion waits for its frame in cq_writer.
        d.desc_cpl = cpl_due && i.qp_uc;
        qp_headers(d, i);
        d.desc_opcode = rc_op | if i.qp_uc { 0x20 } else { 0 };
        // SE only on the last packet of SEND (+Imm) and WRITE_IMM messages.
        d.desc_se = last && s.flags & 2 != 0 && (is_send || op == wqe_op::WRITE_IMM);
        d.desc_pkey = i.qp_pkey;
        d.desc_dest_qp = i.qp_remote_qpn & 0xFF_FFFF;
        d.desc_ack_req = last && !i.qp_uc;
        d.desc_psn = psn;
        d.desc_reth_en = is_read || (!is_send && s.first);
        d.desc_reth_va = s.rva;
        d.desc_reth_rkey = s.rkey;
        d.desc_reth_len = s.len;
        d.desc_imm_en = has_imm && last;
        d.desc_imm = s.imm;
        d.desc_pay_len = pay as u16;
        d.desc_becn = false;
        d.desc_cnp_pad = false;
        d.desc_aeth_en = false;
        d.desc_aeth = 0;
        // Ethernet 14 (+4 VLAN), IP 20 / 40, UDP 8, BTH 12, RETH 16, ImmDt 4,
        // payload and pad to a multiple of 4, ICRC 4.
        d.desc_wire_len = (hdr_len(i)
            + 16 * d.desc_reth_en as u32
            + 4 * d.desc_imm_en as u32
            + pay.next_multiple_of(4)
            + 4) as u16;
        self.desc_valid_q = true;

        self.rd_req_valid_q = pay > 0;
        self.rd_req_addr_q = s.paddr;
        self.rd_req_len_q = pay;

        self.psn_wr_valid_q = true;
        self.psn_wr_qp_q = q as u8;
        self.psn_wr_psn_q = next_psn;

        // A READ of length 0 places nothing: its address is 0. A READ asked
        // again (sent before) is in rd_sink already.
        self.rr_valid_q = is_read && s.new;
        if is_read {
            self.rr_qp_q = q as u8;
            self.rr_psn_q = psn;
            self.rr_len_q = s.len;
            self.rr_addr_q = if s.len == 0 { 0 } else { s.paddr };
            self.rr_mtu_q = code as u8;
            self.rr_max_q = i.qp_max_rd;
        }

        if cpl_due {
            // The message's last PSN (a READ's span ends at next_psn - 1).
            let last_psn = (next_psn.wrapping_sub(1)) & 0xFF_FFFF;
            self.set_cpl(s.wr_id, cqe_status::SUCCESS, op, s.len, s.imm, i, last_psn);
            self.cpl_idx_q = s.idx;
        }
        self.c_new_q = self.c_new_q & !(1 << q) | (s.new as u16) << q;

        if last {
            self.active_q &= !(1 << q);
        } else {
            self.active_q |= 1 << q;
            self.c_wr_id_q[q] = s.wr_id;
            self.c_opcode_q[q] = op;
            self.c_flags_q[q] = s.flags;
            self.c_len_q[q] = s.len;
            self.c_paddr_q[q] = s.paddr.wrapping_add(pay as u64);
            self.c_rva_q[q] = s.rva;
            self.c_rkey_q[q] = s.rkey;
            self.c_imm_q[q] = s.imm;
            self.c_left_q[q] = s.left - pay;
            self.c_idx_q[q] = s.idx;
        }
        (last && s.new).then_some(s.idx)
    }
}

impl TxEngine {
    /// Back to Idle: grants again, unless a rewind waits: it goes first
    /// (taken in the next cycle), so that a busy engine cannot starve it.
    fn back_to_idle(&mut self, i: &TxEngineIn) {
        self.grant_ready_q = !i.rw_valid;
        self.rw_ready_q = i.rw_valid;
        self.state_q = State::Idle;
    }
}

/// Ethernet 14 (+4 VLAN), IP 20 / 40, UDP 8, BTH 12: the bytes every frame
/// has before its extension headers.
fn hdr_len(i: &TxEngineIn) -> u32 {
    54 + 4 * i.qp_vlan_en as u32 + 20 * i.qp_ipv6 as u32
}

impl TxEngine {
    /// The CNP for QP `qp_idx_q` (docs/rx_cc.md): the QP's addresses, the
    /// CNP's own DSCP / PCP / BECN, opcode 0x81, PSN 0, 16 reserved bytes,
    /// no payload, no completion. Fields a CNP does not have are 0.
    fn emit_cnp(&mut self, i: &TxEngineIn) {
        let d = &mut self.desc_q;
        d.desc_qp = self.qp_idx_q;
        d.desc_cpl = false;
        qp_headers(d, i);
        // A CNP has its own priority and DSCP, and is not ECN-capable.
        d.desc_pcp = i.cfg_cnp_pcp & 7;
        d.desc_dscp = i.cfg_cnp_dscp & 0x3F;
        d.desc_ecn = 0;
        d.desc_opcode = 0x81;
        d.desc_se = false;
        d.desc_pkey = i.qp_pkey;
        d.desc_dest_qp = i.qp_remote_qpn & 0xFF_FFFF;
        d.desc_ack_req = false;
        d.desc_psn = 0;
        d.desc_reth_en = false;
        d.desc_reth_va = 0;
        d.desc_reth_rkey = 0;
        d.desc_reth_len = 0;
        d.desc_imm_en = false;
        d.desc_imm = 0;
        d.desc_pay_len = 0;
        d.desc_becn = i.cfg_cnp_becn;
        d.desc_cnp_pad = true;
        d.desc_aeth_en = false;
        d.desc_aeth = 0;
        // Headers, the 16 reserved bytes, ICRC 4.
        d.desc_wire_len = (hdr_len(i) + 16 + 4) as u16;
        self.desc_valid_q = true;
    }

    /// The next READ response packet of QP `qp_idx_q`'s head job (rd_resp's
    /// `job_*`): packet k = `rp_rd_q` if `rmid_q` bit q is set, else 0, at
    /// the job's MTU; opcode ONLY (also for length 0) or FIRST / MIDDLE /
    /// LAST; PSN = job PSN + k; AETH {ACK syndrome 0, job MSN} on FIRST,
    /// LAST and ONLY; payload read of its bytes from the job's bus address.
    /// The QP's own headers as for a data packet; no PSN write-back, no
    /// completion; the job is popped with its last packet.
    fn emit_rsp(&mut self, i: &TxEngineIn) {
        let q = self.qp_idx_q as usize;
        let code = mtu_code(i.job_mtu);
        let mtu = 128u64 << code;
        let k = if self.rmid_q >> q & 1 != 0 {
            self.rp_rd_q
        } else {
            0
        };
        let off = (k as u64) << (7 + code);
        let left = (i.job_len as u64).wrapping_sub(off);
        let (first, last) = (k == 0, left <= mtu);
        let pay = if last { left } else { mtu } as u32;
        let op = match (first, last) {
            (true, true) => 0x10,
            (true, false) => 0x0D,
            (false, true) => 0x0F,
            (false, false) => 0x0E,
        };
        let aeth = first || last;
        let d = &mut self.desc_q;
        d.desc_qp = self.qp_idx_q;
        d.desc_cpl = false;
        qp_headers(d, i);
        d.desc_opcode = op;
        d.desc_se = false;
        d.desc_pkey = i.qp_pkey;
        d.desc_dest_qp = i.qp_remote_qpn & 0xFF_FFFF;
        d.desc_ack_req = false;
        d.desc_psn = (i.job_psn + k) & 0xFF_FFFF;
        d.desc_reth_en = false;
        d.desc_reth_va = 0;
        d.desc_reth_rkey = 0;
        d.desc_reth_len = 0;
        d.desc_imm_en = false;
        d.desc_imm = 0;
        d.desc_pay_len = pay as u16;
        d.desc_becn = false;
        d.desc_cnp_pad = false;
        d.desc_aeth_en = aeth;
        // The ACK syndrome, as the responder's ACKs.
        d.desc_aeth = if aeth {
            (crate::params::aeth_syn::ACK as u32) << 24 | i.job_msn & 0xFF_FFFF
        } else {
            0
        };
        // Headers, AETH 4, payload and pad to a multiple of 4, ICRC 4.
        d.desc_wire_len = (hdr_len(i) + 4 * aeth as u32 + pay.next_multiple_of(4) + 4) as u16;
        self.desc_valid_q = true;

        self.rd_req_valid_q = pay > 0;
        self.rd_req_addr_q = i.job_addr.wrapping_add(off);
        self.rd_req_len_q = pay;

        if last {
            self.job_pop_valid_q = true;
            self.job_pop_qp_q = q as u8;
            self.rmid_q &= !(1 << q);
        } else {
            self.rmid_q |= 1 << q;
            self.rp_mem_q[q] = k + 1;
        }
    }

    /// The ACK / NAK taken for QP `qp_idx_q`: the QP's own headers as for
    /// a data packet of the QP, opcode ACKNOWLEDGE (0x11), BTH PSN and AETH
    /// {syndrome, MSN} as taken, AckReq 0, no payload, no completion.
    fn emit_ack(&mut self, i: &TxEngineIn) {
        let d = &mut self.desc_q;
        d.desc_qp = self.qp_idx_q;
        d.desc_cpl = false;
        qp_headers(d, i);
        d.desc_opcode = 0x11;
        d.desc_se = false;
        d.desc_pkey = i.qp_pkey;
        d.desc_dest_qp = i.qp_remote_qpn & 0xFF_FFFF;
        d.desc_ack_req = false;
        d.desc_psn = self.a_psn_q;
        d.desc_reth_en = false;
        d.desc_reth_va = 0;
        d.desc_reth_rkey = 0;
        d.desc_reth_len = 0;
        d.desc_imm_en = false;
        d.desc_imm = 0;
        d.desc_pay_len = 0;
        d.desc_becn = false;
        d.desc_cnp_pad = false;
        d.desc_aeth_en = true;
        d.desc_aeth = (self.a_syndrome_q as u32) << 24 | self.a_msn_q;
        // Headers, AETH 4, ICRC 4.
        d.desc_wire_len = (hdr_len(i) + 4 + 4) as u16;
        self.desc_valid_q = true;
    }
}

impl Dut for TxEngine {
    type In = TxEngineIn;
    type Out = TxEngineOut;
    const NAME: &'static str = "tx_engine";

    fn reset(&mut self) -> TxEngineOut {
        *self = TxEngine::default();
        self.outputs()
    }

    fn tick(&mut self, i: &TxEngineIn) -> TxEngineOut {
        // Pulses last one cycle.
        self.wqe_pop_valid_q = false;
        self.job_rd_valid_q = false;
        self.job_pop_valid_q = false;
        self.psn_wr_valid_q = false;
        self.rr_valid_q = false;
        self.err_valid_q = false;
        self.ev_prot_err_q = false;
        self.ev_flush_q = false;
        self.sq_rw_valid_q = false;
        // Retransmission updates, applied after the step in the RTL's
        // order (conditions on this cycle's registers).
        let q0 = self.qp_idx_q as usize;
        let mut chk: Option<(bool, bool, u16)> = None; // (skip, old, hw - idx)
                                                       // A rewind acting: the next WQE to pop is old.
        let mut rw_go: Option<bool> = None;
        // A message's last packet sent for the first time: its SQ index.
        let mut last_new: Option<u16> = None;
        let mut rw_take = false;
        let grant_take_q = self.state_q == State::Idle && i.grant_valid && self.grant_ready_q;
        let rw_ready_before = self.rw_ready_q;
        let a0_write = (self.state_q == State::Chk && self.a0_ok_q >> q0 & 1 == 0)
            .then_some((self.w_idx_q as u64) << 24 | (i.qp_psn & 0xFF_FFFF) as u64);

        match self.state_q {
            State::Idle => {
                // grant_ready_q is low only in the reset cycle.
                if i.grant_valid && self.grant_ready_q && i.grant_ctrl {
                    // A control grant names no QP: it is for the ACK or CNP
                    // waiting (the ACK when it is its turn or no CNP waits),
                    // and does nothing when neither does.
                    let take_ack = i.ack_valid && (self.ctrl_ack_q || !i.cnp_valid);
                    self.cnp_q = !take_ack;
                    self.ack_q = take_ack;
                    self.rsp_q = false;
                    if take_ack {
                        self.qp_idx_q = i.ack_qp & (QPS as u8 - 1);
                        self.a_psn_q = i.ack_psn & 0xFF_FFFF;
                        self.a_syndrome_q = i.ack_syndrome;
                        self.a_msn_q = i.ack_msn & 0xFF_FFFF;
                        self.ctrl_ack_q = false;
                        self.grant_ready_q = false;
                        self.state_q = State::Ctx;
                    } else if i.cnp_valid {
                        self.qp_idx_q = i.cnp_qp & (QPS as u8 - 1);
                        self.ctrl_ack_q = true;
                        self.grant_ready_q = false;
                        self.state_q = State::Ctx;
                    }
                } else if i.grant_valid && self.grant_ready_q {
                    let q = i.grant_qp & (QPS as u8 - 1);
                    self.cnp_q = false;
                    self.ack_q = false;
                    // A READ job of the QP goes before its own requests
                    // (docs/responder.md, rd_resp).
                    self.rsp_q = i.job_avail >> q & 1 != 0;
                    self.qp_idx_q = q;
                    if self.rsp_q {
                        self.job_rd_valid_q = true;
                        self.job_rd_qp_q = q;
                        self.grant_ready_q = false;
                        self.state_q = State::Ctx;
                    } else if self.active_q >> q & 1 != 0 {
                        self.grant_ready_q = false;
                        self.state_q = State::Ctx;
                    } else if i.wqe_avail >> q & 1 != 0 && i.wqe_block >> q & 1 == 0 {
                        // Not blocked (rnic_top: ack_tracker has room for
                        // QP q), as seen in the cycle the grant is taken.
                        self.wqe_pop_valid_q = true;
                        self.wqe_pop_qp_q = q;
                        self.grant_ready_q = false;
                        self.state_q = State::Pop;
                    }
                    // else: a stale grant or a blocked QP, nothing to do.
                } else if self.rw_ready_q && i.rw_valid {
                    // A rewind (no grant since the cycle before): the QP's
                    // anchors are read at the take.
                    rw_take = true;
                    self.rw_ready_q = false;
                    self.qp_idx_q = i.rw_qp & (QPS as u8 - 1);
                    self.rw_psn_q = i.rw_psn & 0xFF_FFFF;
                    self.state_q = State::Rw;
                } else {
                    self.rw_ready_q = false;
                    self.grant_ready_q = true;
                }
                // A rewind waits: no grant from the next cycle (a grant
                // taken now that starts no step counts as none).
                if i.rw_valid && !rw_ready_before && self.state_q == State::Idle {
                    self.rw_ready_q = true;
                    self.grant_ready_q = false;
                }
            }
            State::Rw => {
                // The anchor: ack_tracker's once it reported one since the
                // restart, else the first WQE's; no WQE taken since the
                // restart, nothing to do.
                let q = q0;
                if self.a0_ok_q >> q & 1 != 0 {
                    let a = if self.a1_ok_q >> q & 1 != 0 {
                        self.a1_rd_q
                    } else {
                        self.a0_rd_q
                    };
                    let (a_idx, a_psn) = ((a >> 24) as u16, a as u32 & 0xFF_FFFF);
                    rw_go = Some(self.hw_ok_q >> q & 1 != 0 && idx_before(a_idx, self.hw_rd_q));
                    self.psn_wr_valid_q = true;
                    self.psn_wr_qp_q = q as u8;
                    self.psn_wr_psn_q = a_psn;
                    self.sq_rw_valid_q = true;
                    self.sq_rw_qp_q = q as u8;
                    self.sq_rw_idx_q = a_idx;
                    self.active_q &= !(1 << q);
                }
                self.state_q = State::Rw2;
            }
            State::Rw2 => self.back_to_idle(i),
            State::Pop => self.state_q = State::Wqe,
            State::Wqe => {
                // sq_fetch answers a pop of an available WQE the next cycle;
                // anything else would be a wiring error, and is ignored.
                if i.wqe_valid && i.wqe_qp & (QPS as u8 - 1) == self.qp_idx_q {
                    let d = &i.wqe_data;
                    self.w_wr_id_q = le64(d, 0x00);
                    self.w_opcode_q = d[0x08];
                    self.w_flags_q = d[0x09] & 3;
                    self.w_len_q = le32(d, 0x0C);
                    self.w_laddr_q = le64(d, 0x10);
                    self.w_lkey_q = le32(d, 0x18);
                    self.w_imm_q = le32(d, 0x1C);
                    self.w_rva_q = le64(d, 0x20);
                    self.w_rkey_q = le32(d, 0x28);
                    self.w_idx_q = i.wqe_idx;
                    self.state_q = State::Chk;
                } else {
                    self.back_to_idle(i);
                }
            }
            State::Chk => {
                let op = self.w_opcode_q;
                let len = self.w_len_q;
                let (wr_id, imm) = (self.w_wr_id_q, self.w_imm_q);
                // 65-bit bounds: no wrap on either side.
                let end = self.w_laddr_q as u128 + len as u128;
                let mr_end = i.mr_va as u128 + i.mr_len as u128;
                let mr_ok = i.mr_valid
                    && i.mr_key == self.w_lkey_q
                    && i.mr_pd == i.qp_pd
                    && self.w_laddr_q >= i.mr_va
                    && end <= mr_end
                    && (op != wqe_op::READ || i.mr_access & 1 != 0);
                // Replay after a rewind: the WQE's PSNs (one per MTU, at
                // least one); a QP looking for its resume PSN skips a WQE
                // wholly before it and starts the one holding it at packet
                // k; a WQE whose last packet was sent before is "old".
                let code = mtu_code(i.qp_mtu);
                let w_n = (((len as u64 + (128u64 << code) - 1) >> (7 + code)) as u32).max(1);
                let qpsn = i.qp_psn & 0xFF_FFFF;
                let rs_off = self.rs_rd_q.wrapping_sub(qpsn) & 0xFF_FFFF;
                let skipping = self.skip_q >> q0 & 1 != 0;
                let chk_skip = skipping && rs_off >= w_n && rs_off < 1 << 23;
                let k = if skipping && rs_off < w_n { rs_off } else { 0 };
                let koff = (k as u64) << (7 + code);
                let hw_d = self.hw_rd_q.wrapping_sub(self.w_idx_q);
                let chk_old = self.hw_ok_q >> q0 & 1 != 0 && hw_d != 0 && hw_d < 0x8000;
                chk = Some((chk_skip, chk_old, hw_d));
                // err_qp is loaded for every error completion (and only
                // flagged valid for 2 and 4), as in the RTL.
                if chk_skip {
                    // Its PSNs go by unsent.
                    self.psn_wr_valid_q = true;
                    self.psn_wr_qp_q = q0 as u8;
                    self.psn_wr_psn_q = (qpsn + w_n) & 0xFF_FFFF;
                } else if chk_old && i.qp_state & 3 == qp_state::ERROR {
                    // Sent before, its QP now in ERROR: its completion (if
                    // signaled) is in ack_tracker already, which flushes it.
                } else if i.qp_state & 3 == qp_state::ERROR {
                    self.set_cpl(wr_id, cqe_status::WR_FLUSH_ERR, op, 0, imm, i, 0);
                    self.cpl_idx_q = self.w_idx_q;
                    self.err_qp_q = self.qp_idx_q;
                    self.ev_flush_q = true;
                } else if op > wqe_op::READ || (op == wqe_op::READ && i.qp_uc) {
                    self.set_cpl(wr_id, cqe_status::LOC_QP_OP_ERR, op, 0, imm, i, 0);
                    self.cpl_idx_q = self.w_idx_q;
                    self.err_valid_q = true;
                    self.err_qp_q = self.qp_idx_q;
                } else if len != 0 && !mr_ok {
                    self.set_cpl(wr_id, cqe_status::LOC_PROT_ERR, op, 0, imm, i, 0);
                    self.cpl_idx_q = self.w_idx_q;
                    self.err_valid_q = true;
                    self.err_qp_q = self.qp_idx_q;
                    self.ev_prot_err_q = true;
                } else {
                    // From packet k: a READ asks again for the rest, a SEND
                    // or WRITE continues as MIDDLE / LAST.
                    let is_read = op == wqe_op::READ;
                    let s = Src {
                        wr_id,
                        opcode: op,
                        flags: self.w_flags_q,
                        len: if is_read {
                            len.wrapping_sub(koff as u32)
                        } else {
                            len
                        },
                        paddr: i
                            .mr_pbase
                            .wrapping_add(self.w_laddr_q.wrapping_sub(i.mr_va))
                            .wrapping_add(koff),
                        rva: if is_read {
                            self.w_rva_q.wrapping_add(koff)
                        } else {
                            self.w_rva_q
                        },
                        rkey: self.w_rkey_q,
                        imm,
                        left: len.wrapping_sub(koff as u32),
                        first: k == 0,
                        new: !chk_old,
                        idx: self.w_idx_q,
                        psn: (qpsn + k) & 0xFF_FFFF,
                    };
                    last_new = self.emit(s, i);
                }
                self.state_q = State::Out;
            }
            State::Ctx => {
                // The head job's packets sent (read for every step; used by
                // a READ response's).
                self.rp_rd_q = self.rp_mem_q[self.qp_idx_q as usize];
                self.state_q = State::Emit;
            }
            State::Emit if self.rsp_q => {
                // rd_resp answers a head read of a QP with a job; a read
                // that finds none (a wiring error) emits nothing.
                if i.job_present {
                    self.emit_rsp(i);
                }
                self.state_q = State::Out;
            }
            State::Emit if self.cnp_q => {
                self.emit_cnp(i);
                self.state_q = State::Out;
            }
            State::Emit if self.ack_q => {
                // A UC QP has no ACKs: one asked for is dropped.
                if !i.qp_uc {
                    self.emit_ack(i);
                }
                self.state_q = State::Out;
            }
            State::Emit if i.qp_state & 3 == qp_state::ERROR => {
                // The WQE in progress ends at its QP's ERROR, unsent. A
                // message never completed before completes now (signaled
                // or not): in ack_tracker's error mode (RC) as its last
                // packet would, a success of its last PSN that error mode
                // turns; otherwise flushed. It counts as completed for a
                // replay (hw).
                let q = self.qp_idx_q as usize;
                self.active_q &= !(1 << q);
                if self.c_new_q >> q & 1 != 0 {
                    let (wr_id, op, imm) = (self.c_wr_id_q[q], self.c_opcode_q[q], self.c_imm_q[q]);
                    let turn = i.err_mode >> q & 1 != 0 && !i.qp_uc;
                    if turn {
                        let mtu = 128u64 << mtu_code(i.qp_mtu);
                        let rest = (self.c_left_q[q] as u64).div_ceil(mtu) as u32;
                        let last = (i.qp_psn + rest).wrapping_sub(1) & 0xFF_FFFF;
                        let len = self.c_len_q[q];
                        self.set_cpl(wr_id, cqe_status::SUCCESS, op, len, imm, i, last);
                    } else {
                        self.set_cpl(wr_id, cqe_status::WR_FLUSH_ERR, op, 0, imm, i, 0);
                        self.ev_flush_q = true;
                    }
                    self.cpl_idx_q = self.c_idx_q[q];
                    last_new = Some(self.c_idx_q[q]);
                }
                self.state_q = State::Out;
            }
            State::Emit => {
                let q = self.qp_idx_q as usize;
                let s = Src {
                    wr_id: self.c_wr_id_q[q],
                    opcode: self.c_opcode_q[q],
                    flags: self.c_flags_q[q],
                    len: self.c_len_q[q],
                    paddr: self.c_paddr_q[q],
                    rva: self.c_rva_q[q],
                    rkey: self.c_rkey_q[q],
                    imm: self.c_imm_q[q],
                    left: self.c_left_q[q],
                    first: false,
                    new: self.c_new_q >> q & 1 != 0,
                    idx: self.c_idx_q[q],
                    psn: i.qp_psn & 0xFF_FFFF,
                };
                last_new = self.emit(s, i);
                self.state_q = State::Out;
            }
            State::Out => {
                let desc_left = self.desc_valid_q && !i.desc_ready;
                let rd_left = self.rd_req_valid_q && !i.rd_req_ready;
                let cpl_left = self.cpl_valid_q && !i.cpl_ready;
                self.desc_valid_q = desc_left;
                self.rd_req_valid_q = rd_left;
                self.cpl_valid_q = cpl_left;
                if !desc_left && !rd_left && !cpl_left {
                    self.back_to_idle(i);
                }
            }
        }

        // ---- retransmission RAMs: reads at a rewind's take or a grant
        // (before this cycle's writes), one write port each ----
        let anc_row = (i.anc_idx as u64) << 24 | (i.anc_psn & 0xFF_FFFF) as u64;
        if rw_take {
            let q = i.rw_qp as usize & (QPS - 1);
            self.a0_rd_q = self.a0_mem_q[q];
            // An anchor of the same QP in this cycle is forwarded (a1_ok
            // is set at this edge; the old row may never have been written).
            self.a1_rd_q = if i.anc_valid && i.anc_qp as usize & (QPS - 1) == q {
                anc_row
            } else {
                self.a1_mem_q[q]
            };
            self.hw_rd_q = self.hw_mem_q[q];
        } else if grant_take_q {
            let q = i.grant_qp as usize & (QPS - 1);
            self.hw_rd_q = self.hw_mem_q[q];
            self.rs_rd_q = self.rs_mem_q[q];
        }
        if i.anc_valid {
            self.a1_mem_q[i.anc_qp as usize & (QPS - 1)] = anc_row;
        }
        if let Some(a) = a0_write {
            self.a0_mem_q[q0] = a;
        }
        if let Some(idx) = last_new {
            self.hw_mem_q[q0] = idx.wrapping_add(1);
        }
        if rw_go.is_some() {
            self.rs_mem_q[q0] = self.rw_psn_q;
        }
        // ---- per-QP bits, in the RTL's order (a restart last) ----
        let set = |v: &mut u16, q: usize, b: bool| *v = *v & !(1 << q) | (b as u16) << q;
        if i.anc_valid {
            set(&mut self.a1_ok_q, i.anc_qp as usize & (QPS - 1), true);
        }
        if let Some((chk_skip, chk_old, hw_d)) = chk {
            set(&mut self.a0_ok_q, q0, true);
            set(&mut self.skip_q, q0, chk_skip);
            set(&mut self.old_q, q0, chk_old && hw_d != 1);
        }
        if last_new.is_some() {
            set(&mut self.hw_ok_q, q0, true);
        }
        if let Some(old) = rw_go {
            set(&mut self.skip_q, q0, true);
            set(&mut self.old_q, q0, old);
        }
        if i.psn_set_valid {
            let q = i.psn_set_qp as usize & (QPS - 1);
            for v in [
                &mut self.a0_ok_q,
                &mut self.a1_ok_q,
                &mut self.hw_ok_q,
                &mut self.skip_q,
                &mut self.old_q,
            ] {
                set(v, q, false);
            }
        }
        self.outputs()
    }
}

impl Trace for TxEngine {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("state_q", 4, &(self.state_q as u8));
        t.reg("grant_ready_q", 1, &self.grant_ready_q);
        t.reg("qp_idx_q", 4, &self.qp_idx_q);
        t.reg("cnp_q", 1, &self.cnp_q);
        t.reg("ack_q", 1, &self.ack_q);
        t.reg("rsp_q", 1, &self.rsp_q);
        t.reg("ctrl_ack_q", 1, &self.ctrl_ack_q);
        t.reg("a_psn_q", 24, &self.a_psn_q);
        t.reg("a_syndrome_q", 8, &self.a_syndrome_q);
        t.reg("a_msn_q", 24, &self.a_msn_q);
        t.reg("wqe_pop_valid_q", 1, &self.wqe_pop_valid_q);
        t.reg("wqe_pop_qp_q", 4, &self.wqe_pop_qp_q);
        t.reg("w_wr_id_q", 64, &self.w_wr_id_q);
        t.reg("w_opcode_q", 8, &self.w_opcode_q);
        t.reg("w_flags_q", 2, &self.w_flags_q);
        t.reg("w_len_q", 32, &self.w_len_q);
        t.reg("w_laddr_q", 64, &self.w_laddr_q);
        t.reg("w_lkey_q", 32, &self.w_lkey_q);
        t.reg("w_imm_q", 32, &self.w_imm_q);
        t.reg("w_rva_q", 64, &self.w_rva_q);
        t.reg("w_rkey_q", 32, &self.w_rkey_q);
        t.reg("active_q", 16, &self.active_q);
        t.each("c_wr_id_q", 64, &self.c_wr_id_q);
        t.each("c_opcode_q", 3, &self.c_opcode_q);
        t.each("c_flags_q", 2, &self.c_flags_q);
        t.each("c_len_q", 32, &self.c_len_q);
        t.each("c_paddr_q", 64, &self.c_paddr_q);
        t.each("c_rva_q", 64, &self.c_rva_q);
        t.each("c_rkey_q", 32, &self.c_rkey_q);
        t.each("c_imm_q", 32, &self.c_imm_q);
        t.each("c_left_q", 32, &self.c_left_q);
        t.reg("rmid_q", 16, &self.rmid_q);
        t.each("rp_mem_q", 24, &self.rp_mem_q);
        t.reg("rp_rd_q", 24, &self.rp_rd_q);
        t.reg("job_rd_valid_q", 1, &self.job_rd_valid_q);
        t.reg("job_pop_valid_q", 1, &self.job_pop_valid_q);
        t.reg("job_rd_qp_q", 4, &self.job_rd_qp_q);
        t.reg("job_pop_qp_q", 4, &self.job_pop_qp_q);
        t.reg("psn_wr_valid_q", 1, &self.psn_wr_valid_q);
        t.reg("psn_wr_qp_q", 4, &self.psn_wr_qp_q);
        t.reg("psn_wr_psn_q", 24, &self.psn_wr_psn_q);
        t.reg("rr_valid_q", 1, &self.rr_valid_q);
        t.reg("rr_qp_q", 4, &self.rr_qp_q);
        t.reg("rr_psn_q", 24, &self.rr_psn_q);
        t.reg("rr_len_q", 32, &self.rr_len_q);
        t.reg("rr_addr_q", 64, &self.rr_addr_q);
        t.reg("rr_mtu_q", 3, &self.rr_mtu_q);
        t.reg("rr_max_q", 3, &self.rr_max_q);
        t.reg("err_valid_q", 1, &self.err_valid_q);
        t.reg("err_qp_q", 4, &self.err_qp_q);
        t.reg("rd_req_valid_q", 1, &self.rd_req_valid_q);
        t.reg("rd_req_addr_q", 64, &self.rd_req_addr_q);
        t.reg("rd_req_len_q", 17, &self.rd_req_len_q);
        t.reg("desc_valid_q", 1, &self.desc_valid_q);
        t.reg("cpl_valid_q", 1, &self.cpl_valid_q);
        t.reg("cpl_wait_frame_q", 1, &self.cpl_wait_frame_q);
        t.reg("cpl_wr_id_q", 64, &self.cpl_wr_id_q);
        t.reg("cpl_status_q", 8, &self.cpl_status_q);
        t.reg("cpl_opcode_q", 8, &self.cpl_opcode_q);
        t.reg("cpl_len_q", 32, &self.cpl_len_q);
        t.reg("cpl_imm_q", 32, &self.cpl_imm_q);
        t.reg("cpl_qp_q", 4, &self.cpl_qp_q);
        t.reg("cpl_cq_q", 2, &self.cpl_cq_q);
        t.reg("cpl_uc_q", 1, &self.cpl_uc_q);
        t.reg("cpl_psn_q", 24, &self.cpl_psn_q);
        t.reg("ev_prot_err_q", 1, &self.ev_prot_err_q);
        t.reg("ev_flush_q", 1, &self.ev_flush_q);
        t.reg("rw_ready_q", 1, &self.rw_ready_q);
        t.reg("rw_psn_q", 24, &self.rw_psn_q);
        t.each("a0_mem_q", 40, &self.a0_mem_q);
        t.each("a1_mem_q", 40, &self.a1_mem_q);
        t.each("hw_mem_q", 16, &self.hw_mem_q);
        t.each("rs_mem_q", 24, &self.rs_mem_q);
        t.reg("a0_rd_q", 40, &self.a0_rd_q);
        t.reg("a1_rd_q", 40, &self.a1_rd_q);
        t.reg("hw_rd_q", 16, &self.hw_rd_q);
        t.reg("rs_rd_q", 24, &self.rs_rd_q);
        t.reg("a0_ok_q", 16, &self.a0_ok_q);
        t.reg("a1_ok_q", 16, &self.a1_ok_q);
        t.reg("hw_ok_q", 16, &self.hw_ok_q);
        t.reg("skip_q", 16, &self.skip_q);
        t.reg("old_q", 16, &self.old_q);
        t.reg("w_idx_q", 16, &self.w_idx_q);
        t.each("c_idx_q", 16, &self.c_idx_q);
        t.reg("c_new_q", 16, &self.c_new_q);
        t.reg("sq_rw_valid_q", 1, &self.sq_rw_valid_q);
        t.reg("sq_rw_qp_q", 4, &self.sq_rw_qp_q);
        t.reg("sq_rw_idx_q", 16, &self.sq_rw_idx_q);
        t.reg("cpl_idx_q", 16, &self.cpl_idx_q);
        // The descriptor register, one RTL register per field.
        let d = &self.desc_q;
        t.reg("desc_ack_req_q", 1, &d.desc_ack_req);
        t.reg("desc_aeth_en_q", 1, &d.desc_aeth_en);
        t.reg("desc_aeth_q", 32, &d.desc_aeth);
        t.reg("desc_becn_q", 1, &d.desc_becn);
        t.reg("desc_cnp_pad_q", 1, &d.desc_cnp_pad);
        t.reg("desc_cpl_q", 1, &d.desc_cpl);
        t.reg("desc_dest_qp_q", 24, &d.desc_dest_qp);
        t.reg("desc_dscp_q", 6, &d.desc_dscp);
        t.reg("desc_dst_ip_q", 128, &d.desc_dst_ip);
        t.reg("desc_dst_mac_q", 48, &d.desc_dst_mac);
        t.reg("desc_ecn_q", 2, &d.desc_ecn);
        t.reg("desc_imm_en_q", 1, &d.desc_imm_en);
        t.reg("desc_imm_q", 32, &d.desc_imm);
        t.reg("desc_ipv6_q", 1, &d.desc_ipv6);
        t.reg("desc_opcode_q", 8, &d.desc_opcode);
        t.reg("desc_pay_len_q", 13, &d.desc_pay_len);
        t.reg("desc_pcp_q", 3, &d.desc_pcp);
        t.reg("desc_pkey_q", 16, &d.desc_pkey);
        t.reg("desc_psn_q", 24, &d.desc_psn);
        t.reg("desc_qp_q", 4, &d.desc_qp);
        t.reg("desc_reth_en_q", 1, &d.desc_reth_en);
        t.reg("desc_reth_len_q", 32, &d.desc_reth_len);
        t.reg("desc_reth_rkey_q", 32, &d.desc_reth_rkey);
        t.reg("desc_reth_va_q", 64, &d.desc_reth_va);
        t.reg("desc_se_q", 1, &d.desc_se);
        t.reg("desc_src_ip_q", 128, &d.desc_src_ip);
        t.reg("desc_src_mac_q", 48, &d.desc_src_mac);
        t.reg("desc_udp_sport_q", 16, &d.desc_udp_sport);
        t.reg("desc_vid_q", 12, &d.desc_vid);
        t.reg("desc_vlan_en_q", 1, &d.desc_vlan_en);
        t.reg("desc_wire_len_q", 14, &d.desc_wire_len);
    }
}

/// The QP's own Ethernet, VLAN, IP and UDP header fields of a descriptor,
/// as every frame of the QP carries them (data, READ response, ACK; a CNP
/// then overrides its priority, DSCP and ECN).
fn qp_headers(d: &mut TxEngineOut, i: &TxEngineIn) {
    d.desc_dst_mac = i.qp_dst_mac & 0xFFFF_FFFF_FFFF;
    d.desc_src_mac = i.qp_src_mac & 0xFFFF_FFFF_FFFF;
    d.desc_vlan_en = i.qp_vlan_en;
    d.desc_pcp = i.qp_pcp & 7;
    d.desc_vid = i.qp_vid & 0xFFF;
    d.desc_ipv6 = i.qp_ipv6;
    d.desc_src_ip = i.qp_src_ip;
    d.desc_dst_ip = i.qp_dst_ip;
    d.desc_dscp = i.qp_dscp & 0x3F;
    d.desc_ecn = if i.qp_ecn_en { 2 } else { 0 };
    d.desc_udp_sport = i.qp_udp_sport;
}

#[cfg(test)]
mod tests;
