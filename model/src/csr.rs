//! `csr`: MMIO decode, the QP/MR/CQ tables, PCIe settings, doorbells and
//! counters. Model of `hw/rtl/csr.sv` (same register names); the register map
//! is [`crate::csr_map`], generated from `hw/csr/csr_map.txt`.
//!
//! Tables are kept as the MMIO map lays them out: per entry, its 32-bit words,
//! bits a register lacks masked off on write. The RTL holds them by column,
//! one RAM per word (`ctx_table`), with CTRL.STATE and CC_EN also in flops
//! (`qp_st_q`, `qp_cc_en_q`) and hardware's PSN writes in a second RAM.
//! Its RAMs are cleared lazily (an entry not written since reset reads its
//! reset values), which no port shows: after reset every entry reads its
//! reset values here too.
//!
//! Timing (every output is a register):
//! - MMIO read at n -> `mmio_rd_resp_*` at n+1, the value as it was during n
//!   (this cycle's writes not applied);
//! - `qp_idx`/`mr_idx`/`cq_idx` at n -> the entry's fields at n+1, as they
//!   were during n;
//! - a DOORBELL write at n -> `db_*` at n+1, with the QP's state and SQ ring as
//!   they are after cycle n's writes (hardware's included);
//! - a write at n shows in `cfg_*`, `qp_pcp_all`, reads and lookups from
//!   n+1 (`qp_pcp_all` is every QP's VLAN.PCP field out of a copy the RTL
//!   keeps in flops, `pcp_all_q`: no lookup, so a write at n is on it at n+1).
//!
//! Hardware writes (`psn_wr`, `err_a/b/c/d`) win over an MMIO write of the
//! same field in the same cycle; the MMIO write's other fields still apply
//! (an MMIO CTRL write in the cycle `err_a` hits the same QP keeps its UC,
//! MTU, ... bits and the state becomes ERROR). An MMIO write of a QP's PSN
//! that takes effect shows on `psn_set_*` at n+1: ack_tracker restarts the
//! QP's window of unacknowledged PSNs at the new PSN; one of its EPSN on
//! `epsn_set_*` at n+1 (the responder restarts there).
//!
//! CTRL.STATE is 3 bits (0 RESET, 1 RTS, 2 ERROR, 3 RTR, 4 INIT). The
//! transmit path sees a 2-bit view ([`tx_view`]: `qp_state`, `db_state`),
//! the receive path another ([`rx_view`]: `qp_state_all`); the responder's
//! ports (`rctx_state`, `rq_db_state`) carry all 3 bits. An RQ DOORBELL
//! write at n -> `rq_db_*` at n+1 like the SQ doorbell; `rctx_idx` /
//! `rmr_idx` at n -> `rctx_*` / `rmr_*` at n+1. The retransmission
//! controller's `xctx_idx` at n -> `xctx_*` (the QP's RETRY fields) at
//! n+1 the same way; after reset they show RETRY's reset values.

use crate::csr_map as map;
use crate::dut::Dut;
use crate::ports;
use crate::trace::{Bits, Trace, Tracer};

/// Table sizes (the RTL parameters' defaults; the port widths below are
/// fixed for them: `QPW = 4`, `MRW = 4`, `CQW = 2`).
pub use crate::params::{CQS, CQW, MRS, MRW, QPS, QPW};

/// QP states (CTRL.STATE).
pub use crate::params::qp_state::{
    ERROR as QP_STATE_ERROR, INIT as QP_STATE_INIT, RESET as QP_STATE_RESET, RTR as QP_STATE_RTR,
    RTS as QP_STATE_RTS,
};

/// The transmit path's 2-bit view of CTRL.STATE: RTS and ERROR as they
/// are, every other state RESET (nothing is sent before RTS).
pub fn tx_view(st: u8) -> u8 {
    match st {
        QP_STATE_RTS | QP_STATE_ERROR => st,
        _ => QP_STATE_RESET,
    }
}

/// The receive path's 2-bit view of CTRL.STATE: RTR and RTS as RTS, ERROR
/// as it is, every other state RESET (rx_parser drops the QP's frames).
pub fn rx_view(st: u8) -> u8 {
    match st {
        QP_STATE_RTS | QP_STATE_RTR => QP_STATE_RTS,
        QP_STATE_ERROR => QP_STATE_ERROR,
        _ => QP_STATE_RESET,
    }
}

ports! {
    /// Inputs of `csr` (all but `clk`/`rst`).
    pub struct CsrIn {
        pub mmio_wr_valid: bool = 1,
        pub mmio_wr_addr: u16 = 16 if mmio_wr_valid,
        pub mmio_wr_data: u32 = 32 if mmio_wr_valid,
        pub mmio_rd_valid: bool = 1,
        pub mmio_rd_addr: u16 = 16 if mmio_rd_valid,
        pub qp_idx: u8 = 4,
        pub mr_idx: u8 = 4,
        pub cq_idx: u8 = 2,
        pub psn_wr_valid: bool = 1,
        pub psn_wr_qp: u8 = 4 if psn_wr_valid,
        pub psn_wr_psn: u32 = 24 if psn_wr_valid,
        pub err_a_valid: bool = 1,
        pub err_a_qp: u8 = 4 if err_a_valid,
        pub err_b_valid: bool = 1,
        pub err_b_qp: u8 = 4 if err_b_valid,
        pub err_c_valid: bool = 1,
        pub err_c_qp: u8 = 4 if err_c_valid,
        pub err_d_valid: bool = 1,
        pub err_d_qp: u8 = 4 if err_d_valid,
        pub err_e_valid: bool = 1,
        pub err_e_qp: u8 = 4 if err_e_valid,
        pub rctx_idx: u8 = 4,
        /// The retransmission controller's lookup of a QP's RETRY register.
        pub xctx_idx: u8 = 4,
        pub rmr_idx: u8 = 4,
        pub ev_tx_frame: bool = 1,
        pub ev_tx_len: u16 = 14 if ev_tx_frame,
        pub ev_wqe_n: u8 = 4,
        pub ev_cqe: bool = 1,
        pub ev_prot_err: bool = 1,
        pub ev_flush: bool = 1,
        pub ev_fetch_err: bool = 1,
        pub ev_dma_err: bool = 1,
        pub dma_cpl_unexpected: u32 = 32,
        pub dma_cpl_malformed: u32 = 32,
        pub dma_cpl_timeout: u32 = 32,
        pub ev_rx_frame: bool = 1,
        pub ev_rx_pfc: bool = 1,
        pub ev_rx_cnp: bool = 1,
        pub ev_rx_ack: bool = 1,
        pub ev_rx_data: bool = 1,
        pub ev_rx_ce: bool = 1,
        pub ev_drop: bool = 1,
        pub ev_drop_reason: u8 = 3 if ev_drop,
        pub ev_ack_new: bool = 1,
        pub ev_ack_dup: bool = 1,
        pub ev_nak: bool = 1,
        pub ev_ack_invalid: bool = 1,
        pub ev_cnp_sent: bool = 1,
        pub ev_ce_suppressed: bool = 1,
        /// The responder side's events (docs/responder.md, "In rnic_top").
        pub ev_resp_exec: bool = 1,
        pub ev_resp_dup: bool = 1,
        pub ev_resp_nak_seq: bool = 1,
        pub ev_resp_nak_rnr: bool = 1,
        pub ev_resp_nak_inv: bool = 1,
        pub ev_resp_nak_acc: bool = 1,
        pub ev_resp_nak_op: bool = 1,
        pub ev_resp_recv: bool = 1,
        pub ev_resp_uc_drop: bool = 1,
        pub ev_resp_not_ready: bool = 1,
        pub ev_rxbuf_full: bool = 1,
        pub ev_rq_fetch_err: bool = 1,
        pub ev_rx_write: bool = 1,
        pub ev_rx_write_bytes: u16 = 13 if ev_rx_write,
        pub ev_ack_sent: bool = 1,
        pub ev_ack_coalesced: bool = 1,
        pub ev_read_job: bool = 1,
        pub ev_read_job_full: bool = 1,
        /// rd_sink's pulses, bit k counted by RDR word k: taken, done, no
        /// READ, duplicate, PSN ahead, malformed.
        pub ev_snk: u8 = 6,
        /// pfc_gen's pulses: an XOFF frame, an XON frame handed to pkt_builder.
        pub ev_pfcg_xoff: bool = 1,
        pub ev_pfcg_xon: bool = 1,
        /// retx_ctl's pulses, bit k counted by RETX word k: a local ACK
        /// timer expiry, a rewind taken by tx_engine, an RNR wait started,
        /// an exhaustion taken by ack_tracker.
        pub ev_retx: u8 = 4,
        pub ev_rqe_n: u8 = 4,
        pub dcqcn_cnt_cnp: u32 = 32,
        pub dcqcn_cnt_cut: u32 = 32,
        pub dcqcn_cnt_fr: u32 = 32,
        pub dcqcn_cnt_ai: u32 = 32,
        pub dcqcn_cnt_hai: u32 = 32,
        pub dcqcn_cnt_alpha: u32 = 32,
        pub stat_rc: u32 = 32,
        pub stat_rt: u32 = 32,
        pub stat_alpha: u16 = 11,
    }
}

ports! {
    /// Outputs of `csr`, all registered.
    pub struct CsrOut {
        pub mmio_rd_resp_valid: bool = 1,
        pub mmio_rd_resp_data: u32 = 32 if mmio_rd_resp_valid,
        pub cfg_mrrs: u8 = 3,
        pub cfg_mps: u8 = 3,
        pub cfg_req_id: u16 = 16,
        pub cfg_cpl_timeout: u32 = 24,
        /// One-cycle pulse per DOORBELL write (to a QP < QPS).
        pub db_valid: bool = 1,
        pub db_qp: u8 = 4 if db_valid,
        pub db_pi: u16 = 16 if db_valid,
        pub db_state: u8 = 2 if db_valid,
        pub db_sq_base: u64 = 64 if db_valid,
        pub db_sq_log: u8 = 5 if db_valid,
        pub qp_state: u8 = 2,
        pub qp_uc: bool = 1,
        pub qp_ipv6: bool = 1,
        pub qp_vlan_en: bool = 1,
        pub qp_ecn_en: bool = 1,
        pub qp_mtu: u8 = 3,
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
        /// Every QP's VLAN.PCP, QP q at bits `[3q, 3q + 3)` (for tx_sched).
        pub qp_pcp_all: u64 = 48,
        pub mr_valid: bool = 1,
        pub mr_key: u32 = 32,
        pub mr_va: u64 = 64,
        pub mr_len: u64 = 64,
        pub mr_pbase: u64 = 64,
        pub mr_access: u8 = 4,
        pub mr_pd: u16 = 16,
        pub cq_base: u64 = 64,
        pub cq_log: u8 = 5,
        /// Every QP's CTRL.STATE, QP q at bits `[2q, 2q + 2)` (for rx_parser).
        pub qp_state_all: u32 = 32,
        /// Every QP's CTRL.CC_EN, QP q at bit q (for dcqcn and rate_limiter).
        pub qp_cc_en_all: u16 = 16,
        pub cfg_g_shift: u8 = 4,
        pub cfg_f: u8 = 8,
        pub cfg_k: u32 = 24,
        pub cfg_t_inc: u32 = 24,
        pub cfg_b: u32 = 32,
        pub cfg_r_ai: u32 = 32,
        pub cfg_r_hai: u32 = 32,
        pub cfg_r_min: u32 = 32,
        pub cfg_r_max: u32 = 32,
        pub cfg_alpha_init: u16 = 11,
        pub cfg_mode: u8 = 6,
        pub cfg_mon: u32 = 24,
        pub cfg_alpha_t: u32 = 24,
        pub cfg_rl_burst: u32 = 24,
        pub cfg_cnp_dscp: u8 = 6,
        pub cfg_cnp_pcp: u8 = 3,
        pub cfg_cnp_becn: bool = 1,
        pub cfg_cnp_interval: u32 = 24,
        pub cfg_stat_qp: u8 = 4,
        /// Block PFCG's fields (pfc_gen, pkt_builder's PFC source MAC).
        pub cfg_pfcg_en: u8 = 8,
        pub cfg_pfcg_xoff: u16 = 10,
        pub cfg_pfcg_xon: u16 = 10,
        pub cfg_pfcg_time: u16 = 16,
        pub cfg_pfcg_refresh: u32 = 24,
        pub cfg_pfcg_src_mac: u64 = 48,
        /// One-cycle pulse: software wrote QP `psn_set_qp`'s PSN (and no
        /// `psn_wr` of that QP overrode it in the same cycle).
        pub psn_set_valid: bool = 1,
        pub psn_set_qp: u8 = 4 if psn_set_valid,
        pub psn_set_psn: u32 = 24 if psn_set_valid,
        /// One-cycle pulse per RQ_DOORBELL write (to a QP < QPS), with the
        /// QP's 3-bit state and RQ ring after cycle n's writes.
        pub rq_db_valid: bool = 1,
        pub rq_db_qp: u8 = 4 if rq_db_valid,
        pub rq_db_pi: u16 = 16 if rq_db_valid,
        pub rq_db_state: u8 = 3 if rq_db_valid,
        pub rq_db_base: u64 = 64 if rq_db_valid,
        pub rq_db_log: u8 = 5 if rq_db_valid,
        /// The responder's QP context lookup (`rctx_idx` last cycle).
        pub rctx_state: u8 = 3,
        pub rctx_uc: bool = 1,
        pub rctx_mtu: u8 = 3,
        pub rctx_pd: u16 = 16,
        pub rctx_rq_cq: u8 = 2,
        pub rctx_rnr_timer: u8 = 5,
        pub rctx_max_rd: u8 = 3,
        pub rctx_access: u8 = 4,
        pub rctx_remote_qpn: u32 = 24,
        /// The retransmission controller's lookup (`xctx_idx` last cycle):
        /// RETRY.TIMEOUT, RETRY_CNT, RNR_RETRY.
        pub xctx_timeout: u8 = 5,
        pub xctx_retry: u8 = 3,
        pub xctx_rnr_retry: u8 = 3,
        /// The responder's MR lookup (`rmr_idx` last cycle).
        pub rmr_valid: bool = 1,
        pub rmr_key: u32 = 32,
        pub rmr_va: u64 = 64,
        pub rmr_len: u64 = 64,
        pub rmr_pbase: u64 = 64,
        pub rmr_access: u8 = 4,
        pub rmr_pd: u16 = 16,
        /// One-cycle pulse: software wrote QP `epsn_set_qp`'s EPSN.
        pub epsn_set_valid: bool = 1,
        pub epsn_set_qp: u8 = 4 if epsn_set_valid,
        pub epsn_set_psn: u32 = 24 if epsn_set_valid,
        /// Every QP's CTRL.STATE == ERROR, QP q at bit q (the responder
        /// flushes their receive queues).
        pub qp_err_all: u16 = 16,
    }
}

/// The receive path's one-bit event counters, in the order of their CNT
/// registers (consecutive words from `CNT_RX_FRAMES_ADDR`).
pub const NEV: usize = 19;
/// Block CC's RW registers, consecutive words from `CC_RW_ADDR` (the map's
/// ARRAY of block CC, the RTL's `cc_q`; masks and resets generated).
pub const NCC: usize = map::CC_RW_N;
/// Block PFCG's RW registers from `PFCG_RW_ADDR` (the RTL's `pfcg_q`).
pub const NPFCG: usize = map::PFCG_RW_N;
/// The responder side's one-bit event counters, consecutive words from
/// `CNT_RESP_EXEC_ADDR` (to `CNT_READ_JOBS_ADDR`).
pub const NREV: usize = 16;

/// This cycle's responder-side events as bits, bit k counted by word k.
fn rev_bits(i: &CsrIn) -> u32 {
    [
        i.ev_resp_exec,
        i.ev_resp_dup,
        i.ev_resp_nak_seq,
        i.ev_resp_nak_rnr,
        i.ev_resp_nak_inv,
        i.ev_resp_nak_acc,
        i.ev_resp_nak_op,
        i.ev_resp_recv,
        i.ev_resp_uc_drop,
        i.ev_resp_not_ready,
        i.ev_rxbuf_full,
        i.ev_rq_fetch_err,
        i.ev_rx_write,
        i.ev_ack_sent,
        i.ev_ack_coalesced,
        i.ev_read_job,
    ]
    .iter()
    .enumerate()
    .fold(0, |v, (k, &b)| v | (b as u32) << k)
}

/// This cycle's receive-path events as bits, bit k counted by event word k.
fn ev_bits(i: &CsrIn) -> u32 {
    let drop = if i.ev_drop {
        1u32 << (i.ev_drop_reason & 7)
    } else {
        0
    };
    i.ev_rx_frame as u32
        | (i.ev_rx_pfc as u32) << 1
        | (i.ev_rx_cnp as u32) << 2
        | (i.ev_rx_ack as u32) << 3
        | (i.ev_rx_data as u32) << 4
        | (i.ev_rx_ce as u32) << 5
        | drop << 6
        | (i.ev_ack_new as u32) << 14
        | (i.ev_ack_dup as u32) << 15
        | (i.ev_nak as u32) << 16
        | (i.ev_cnp_sent as u32) << 17
        | (i.ev_ce_suppressed as u32) << 18
}

/// `(word >> lsb) & (2^w - 1)`: a field of a register word.
fn field(word: u32, lsb: u32, w: u32) -> u32 {
    (((word as u64) >> lsb) & ((1u64 << w) - 1)) as u32
}

/// Two words as one 64-bit value.
fn join64(hi: u32, lo: u32) -> u64 {
    (hi as u64) << 32 | lo as u64
}

/// Which table entry and word an aligned address hits, if any.
fn table_hit(
    addr: u16,
    base: u16,
    stride: u16,
    entries: usize,
    words: usize,
) -> Option<(usize, usize)> {
    let rel = addr.wrapping_sub(base) as usize;
    let (e, w) = (rel / stride as usize, (rel % stride as usize) / 4);
    // An address below the base wraps to a large offset: no hit.
    (addr.is_multiple_of(4) && e < entries && w < words).then_some((e, w))
}

#[derive(Debug, Clone, PartialEq)]
pub struct Csr {
    qp_q: Vec<[u32; map::QP_WORDS]>,
    mr_q: Vec<[u32; map::MR_WORDS]>,
    cq_q: Vec<[u32; map::CQ_WORDS]>,
    pcie_cfg_q: u32,
    cpl_timeout_q: u32,
    cnt_tx_frames_q: u32,
    cnt_tx_bytes_q: u64,
    cnt_wqe_fetched_q: u32,
    cnt_cqe_written_q: u32,
    cnt_prot_err_q: u32,
    cnt_flush_q: u32,
    cnt_fetch_err_q: u32,
    cnt_dma_err_q: u32,
    /// ACKs / NAKs for PSNs never sent: placed after the dcqcn counters in
    /// the map, so not one of the consecutive event words.
    cnt_ack_invalid_q: u32,
    /// The responder side's multi-bit counts.
    cnt_rqe_fetched_q: u32,
    cnt_rx_wr_bytes_q: u64,
    /// READ jobs rd_resp refused (its own word, after RX_WR_BYTES_HI).
    cnt_read_full_q: u32,
    /// rd_sink's events, RDR_TAKEN .. RDR_BAD.
    cnt_snk_q: [u32; 6],
    /// pfc_gen's frames: XOFF_SENT, XON_SENT.
    cnt_pfcg_q: [u32; 2],
    /// retx_ctl's events: RETX TIMEOUT, REWIND, RNR_WAIT, EXHAUST.
    cnt_retx_q: [u32; 4],
    psn_set_valid_q: bool,
    psn_set_qp_q: u8,
    psn_set_psn_q: u32,
    epsn_set_valid_q: bool,
    epsn_set_qp_q: u8,
    epsn_set_psn_q: u32,
    rq_db_valid_q: bool,
    rq_db_qp_q: u8,
    rq_db_pi_q: u16,
    rq_db_state_q: u8,
    rq_db_base_q: u64,
    rq_db_log_q: u8,
    // The responder's lookup registers.
    rctx_state_q: u8,
    rctx_uc_q: bool,
    rctx_mtu_q: u8,
    rctx_pd_q: u16,
    rctx_rq_cq_q: u8,
    rctx_rnr_timer_q: u8,
    rctx_max_rd_q: u8,
    rctx_access_q: u8,
    rctx_remote_qpn_q: u32,
    // The retransmission controller's lookup registers.
    xctx_timeout_q: u8,
    xctx_retry_q: u8,
    xctx_rnr_retry_q: u8,
    rmr_valid_q: bool,
    rmr_key_q: u32,
    rmr_va_q: u64,
    rmr_len_q: u64,
    rmr_pbase_q: u64,
    rmr_access_q: u8,
    rmr_pd_q: u16,
    cnt_ev_q: [u32; NEV],
    cnt_rev_q: [u32; NREV],
    cc_q: [u32; NCC],
    pfcg_q: [u32; NPFCG],
    rd_resp_valid_q: bool,
    rd_resp_data_q: u32,
    db_valid_q: bool,
    db_qp_q: u8,
    db_pi_q: u16,
    db_state_q: u8,
    db_sq_base_q: u64,
    db_sq_log_q: u8,
    // Lookup port registers.
    qp_state_q: u8,
    qp_uc_q: bool,
    qp_ipv6_q: bool,
    qp_vlan_en_q: bool,
    qp_ecn_en_q: bool,
    qp_mtu_q: u8,
    qp_max_rd_q: u8,
    qp_cq_q: u8,
    qp_remote_qpn_q: u32,
    qp_psn_q: u32,
    qp_pd_q: u16,
    qp_dst_mac_q: u64,
    qp_src_mac_q: u64,
    qp_src_ip_q: u128,
    qp_dst_ip_q: u128,
    qp_udp_sport_q: u16,
    qp_dscp_q: u8,
    qp_vid_q: u16,
    qp_pcp_q: u8,
    qp_pkey_q: u16,
    mr_valid_q: bool,
    mr_key_q: u32,
    mr_va_q: u64,
    mr_len_q: u64,
    mr_pbase_q: u64,
    mr_access_q: u8,
    mr_pd_q: u16,
    cq_base_q: u64,
    cq_log_q: u8,
}

impl Default for Csr {
    fn default() -> Self {
        Csr {
            qp_q: vec![map::QP_RESETS; QPS],
            mr_q: vec![map::MR_RESETS; MRS],
            cq_q: vec![map::CQ_RESETS; CQS],
            pcie_cfg_q: map::GLOBAL_PCIE_CFG_RESET,
            cpl_timeout_q: map::GLOBAL_CPL_TIMEOUT_RESET,
            cnt_tx_frames_q: 0,
            cnt_tx_bytes_q: 0,
            cnt_wqe_fetched_q: 0,
            cnt_cqe_written_q: 0,
            cnt_prot_err_q: 0,
            cnt_flush_q: 0,
            cnt_fetch_err_q: 0,
            cnt_dma_err_q: 0,
            cnt_ack_invalid_q: 0,
            cnt_rqe_fetched_q: 0,
            cnt_read_full_q: 0,
            cnt_snk_q: [0; 6],
            cnt_pfcg_q: [0; 2],
            cnt_retx_q: [0; 4],
            cnt_rx_wr_bytes_q: 0,
            psn_set_valid_q: false,
            psn_set_qp_q: 0,
            psn_set_psn_q: 0,
            epsn_set_valid_q: false,
            epsn_set_qp_q: 0,
            epsn_set_psn_q: 0,
            rq_db_valid_q: false,
            rq_db_qp_q: 0,
            rq_db_pi_q: 0,
            rq_db_state_q: 0,
            rq_db_base_q: 0,
            rq_db_log_q: 0,
            rctx_state_q: 0,
            rctx_uc_q: false,
            rctx_mtu_q: 0,
            rctx_pd_q: 0,
            rctx_rq_cq_q: 0,
            rctx_rnr_timer_q: 0,
            rctx_max_rd_q: 0,
            rctx_access_q: 0,
            rctx_remote_qpn_q: 0,
            xctx_timeout_q: field(
                map::QP_RETRY_RESET,
                map::QP_RETRY_TIMEOUT_LSB,
                map::QP_RETRY_TIMEOUT_W,
            ) as u8,
            xctx_retry_q: field(
                map::QP_RETRY_RESET,
                map::QP_RETRY_RETRY_CNT_LSB,
                map::QP_RETRY_RETRY_CNT_W,
            ) as u8,
            xctx_rnr_retry_q: field(
                map::QP_RETRY_RESET,
                map::QP_RETRY_RNR_RETRY_LSB,
                map::QP_RETRY_RNR_RETRY_W,
            ) as u8,
            rmr_valid_q: false,
            rmr_key_q: 0,
            rmr_va_q: 0,
            rmr_len_q: 0,
            rmr_pbase_q: 0,
            rmr_access_q: 0,
            rmr_pd_q: 0,
            cnt_ev_q: [0; NEV],
            cnt_rev_q: [0; NREV],
            cc_q: map::CC_RW_RESETS,
            pfcg_q: map::PFCG_RW_RESETS,
            rd_resp_valid_q: false,
            rd_resp_data_q: 0,
            db_valid_q: false,
            db_qp_q: 0,
            db_pi_q: 0,
            db_state_q: 0,
            db_sq_base_q: 0,
            db_sq_log_q: 0,
            // The lookup registers reset to 0 (not to entry 0's contents).
            qp_state_q: 0,
            qp_uc_q: false,
            qp_ipv6_q: false,
            qp_vlan_en_q: false,
            qp_ecn_en_q: false,
            qp_mtu_q: 0,
            qp_max_rd_q: 0,
            qp_cq_q: 0,
            qp_remote_qpn_q: 0,
            qp_psn_q: 0,
            qp_pd_q: 0,
            qp_dst_mac_q: 0,
            qp_src_mac_q: 0,
            qp_src_ip_q: 0,
            qp_dst_ip_q: 0,
            qp_udp_sport_q: 0,
            qp_dscp_q: 0,
            qp_vid_q: 0,
            qp_pcp_q: 0,
            qp_pkey_q: 0,
            mr_valid_q: false,
            mr_key_q: 0,
            mr_va_q: 0,
            mr_len_q: 0,
            mr_pbase_q: 0,
            mr_access_q: 0,
            mr_pd_q: 0,
            cq_base_q: 0,
            cq_log_q: 0,
        }
    }
}

impl Csr {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> CsrOut {
        CsrOut {
            mmio_rd_resp_valid: self.rd_resp_valid_q,
            mmio_rd_resp_data: self.rd_resp_data_q,
            cfg_mrrs: field(
                self.pcie_cfg_q,
                map::GLOBAL_PCIE_CFG_MRRS_LSB,
                map::GLOBAL_PCIE_CFG_MRRS_W,
            ) as u8,
            cfg_mps: field(
                self.pcie_cfg_q,
                map::GLOBAL_PCIE_CFG_MPS_LSB,
                map::GLOBAL_PCIE_CFG_MPS_W,
            ) as u8,
            cfg_req_id: field(
                self.pcie_cfg_q,
                map::GLOBAL_PCIE_CFG_REQ_ID_LSB,
                map::GLOBAL_PCIE_CFG_REQ_ID_W,
            ) as u16,
            cfg_cpl_timeout: field(
                self.cpl_timeout_q,
                map::GLOBAL_CPL_TIMEOUT_CYCLES_LSB,
                map::GLOBAL_CPL_TIMEOUT_CYCLES_W,
            ),
            db_valid: self.db_valid_q,
            db_qp: self.db_qp_q,
            db_pi: self.db_pi_q,
            db_state: self.db_state_q,
            db_sq_base: self.db_sq_base_q,
            db_sq_log: self.db_sq_log_q,
            qp_state: self.qp_state_q,
            qp_uc: self.qp_uc_q,
            qp_ipv6: self.qp_ipv6_q,
            qp_vlan_en: self.qp_vlan_en_q,
            qp_ecn_en: self.qp_ecn_en_q,
            qp_mtu: self.qp_mtu_q,
            qp_max_rd: self.qp_max_rd_q,
            qp_cq: self.qp_cq_q,
            qp_remote_qpn: self.qp_remote_qpn_q,
            qp_psn: self.qp_psn_q,
            qp_pd: self.qp_pd_q,
            qp_dst_mac: self.qp_dst_mac_q,
            qp_src_mac: self.qp_src_mac_q,
            qp_src_ip: self.qp_src_ip_q,
            qp_dst_ip: self.qp_dst_ip_q,
            qp_udp_sport: self.qp_udp_sport_q,
            qp_dscp: self.qp_dscp_q,
            qp_vid: self.qp_vid_q,
            qp_pcp: self.qp_pcp_q,
            qp_pkey: self.qp_pkey_q,
            qp_pcp_all: self.pcp_all(),
            mr_valid: self.mr_valid_q,
            mr_key: self.mr_key_q,
            mr_va: self.mr_va_q,
            mr_len: self.mr_len_q,
            mr_pbase: self.mr_pbase_q,
            mr_access: self.mr_access_q,
            mr_pd: self.mr_pd_q,
            cq_base: self.cq_base_q,
            cq_log: self.cq_log_q,
            qp_state_all: self.state_all(rx_view) as u32,
            qp_cc_en_all: self.ctrl_all(map::QP_CTRL_CC_EN_LSB, 1) as u16,
            cfg_g_shift: field(self.cc_q[0], map::CC_DCQCN_G_G_SHIFT_LSB, 4) as u8,
            cfg_f: field(self.cc_q[0], map::CC_DCQCN_G_F_LSB, 8) as u8,
            cfg_k: field(self.cc_q[1], map::CC_DCQCN_K_CYCLES_LSB, 24),
            cfg_t_inc: field(self.cc_q[2], map::CC_DCQCN_T_INC_CYCLES_LSB, 24),
            cfg_b: self.cc_q[3],
            cfg_r_ai: self.cc_q[4],
            cfg_r_hai: self.cc_q[5],
            cfg_r_min: self.cc_q[6],
            cfg_r_max: self.cc_q[7],
            cfg_alpha_init: field(self.cc_q[8], map::CC_DCQCN_ALPHA_INIT_LSB, 11) as u16,
            cfg_mode: field(self.cc_q[13], 0, 6) as u8,
            cfg_mon: field(self.cc_q[14], map::CC_DCQCN_MON_CYCLES_LSB, 24),
            cfg_alpha_t: field(self.cc_q[15], map::CC_DCQCN_ALPHA_T_CYCLES_LSB, 24),
            cfg_rl_burst: field(self.cc_q[9], map::CC_RL_BURST_BYTES_LSB, 24),
            cfg_cnp_dscp: field(self.cc_q[10], map::CC_CNP_CFG_DSCP_LSB, 6) as u8,
            cfg_cnp_pcp: field(self.cc_q[10], map::CC_CNP_CFG_PCP_LSB, 3) as u8,
            cfg_cnp_becn: field(self.cc_q[10], map::CC_CNP_CFG_BECN_LSB, 1) != 0,
            cfg_cnp_interval: field(self.cc_q[11], map::CC_CNP_INTERVAL_CYCLES_LSB, 24),
            cfg_stat_qp: field(self.cc_q[12], map::CC_STAT_QP_QP_LSB, QPW) as u8,
            cfg_pfcg_en: field(self.pfcg_q[0], map::PFCG_EN_MASK_LSB, 8) as u8,
            cfg_pfcg_xoff: field(self.pfcg_q[1], map::PFCG_XOFF_LINES_LSB, 10) as u16,
            cfg_pfcg_xon: field(self.pfcg_q[2], map::PFCG_XON_LINES_LSB, 10) as u16,
            cfg_pfcg_time: field(self.pfcg_q[3], map::PFCG_TIME_QUANTA_LSB, 16) as u16,
            cfg_pfcg_refresh: field(self.pfcg_q[4], map::PFCG_REFRESH_CYCLES_LSB, 24),
            cfg_pfcg_src_mac: (field(self.pfcg_q[6], map::PFCG_SRC_MAC_HI_MAC_LSB, 16) as u64)
                << 32
                | self.pfcg_q[5] as u64,
            psn_set_valid: self.psn_set_valid_q,
            psn_set_qp: self.psn_set_qp_q,
            psn_set_psn: self.psn_set_psn_q,
            rq_db_valid: self.rq_db_valid_q,
            rq_db_qp: self.rq_db_qp_q,
            rq_db_pi: self.rq_db_pi_q,
            rq_db_state: self.rq_db_state_q,
            rq_db_base: self.rq_db_base_q,
            rq_db_log: self.rq_db_log_q,
            rctx_state: self.rctx_state_q,
            rctx_uc: self.rctx_uc_q,
            rctx_mtu: self.rctx_mtu_q,
            rctx_pd: self.rctx_pd_q,
            rctx_rq_cq: self.rctx_rq_cq_q,
            rctx_rnr_timer: self.rctx_rnr_timer_q,
            rctx_max_rd: self.rctx_max_rd_q,
            rctx_access: self.rctx_access_q,
            rctx_remote_qpn: self.rctx_remote_qpn_q,
            xctx_timeout: self.xctx_timeout_q,
            xctx_retry: self.xctx_retry_q,
            xctx_rnr_retry: self.xctx_rnr_retry_q,
            rmr_valid: self.rmr_valid_q,
            rmr_key: self.rmr_key_q,
            rmr_va: self.rmr_va_q,
            rmr_len: self.rmr_len_q,
            rmr_pbase: self.rmr_pbase_q,
            rmr_access: self.rmr_access_q,
            rmr_pd: self.rmr_pd_q,
            epsn_set_valid: self.epsn_set_valid_q,
            epsn_set_qp: self.epsn_set_qp_q,
            epsn_set_psn: self.epsn_set_psn_q,
            qp_err_all: self.qp_err_all(),
        }
    }

    /// Every QP's CTRL.STATE seen through `view`, 2 bits a QP.
    fn state_all(&self, view: fn(u8) -> u8) -> u64 {
        let mut v = 0u64;
        for (e, q) in self.qp_q.iter().enumerate() {
            let st = field(
                q[map::QP_CTRL_WORD],
                map::QP_CTRL_STATE_LSB,
                map::QP_CTRL_STATE_W,
            );
            v |= (view(st as u8) as u64) << (2 * e);
        }
        v
    }

    /// Bit q: QP q's CTRL.STATE is ERROR.
    fn qp_err_all(&self) -> u16 {
        let mut v = 0u16;
        for (e, q) in self.qp_q.iter().enumerate() {
            let st = field(
                q[map::QP_CTRL_WORD],
                map::QP_CTRL_STATE_LSB,
                map::QP_CTRL_STATE_W,
            );
            v |= ((st as u8 == QP_STATE_ERROR) as u16) << e;
        }
        v
    }

    /// A CTRL field of every QP, QP q's at bits `[w*q, w*q + w)`: wires from
    /// the table registers, like `qp_pcp_all`.
    fn ctrl_all(&self, lsb: u32, w: u32) -> u64 {
        let mut v = 0u64;
        for (e, q) in self.qp_q.iter().enumerate() {
            v |= (field(q[map::QP_CTRL_WORD], lsb, w) as u64) << (w as usize * e);
        }
        v
    }

    /// `qp_pcp_all`: the PCP bits of every QP's VLAN word, as the table is
    /// now (wires from the table registers in the RTL, no register of its own).
    fn pcp_all(&self) -> u64 {
        let mut v = 0u64;
        for (e, q) in self.qp_q.iter().enumerate() {
            let pcp = field(
                q[map::QP_VLAN_WORD],
                map::QP_VLAN_PCP_LSB,
                map::QP_VLAN_PCP_W,
            );
            v |= (pcp as u64) << (3 * e);
        }
        v
    }

    /// The register an MMIO read of `addr` returns now.
    fn read(&self, addr: u16, i: &CsrIn) -> u32 {
        if !addr.is_multiple_of(4) {
            return 0;
        }
        if let Some((e, w)) = table_hit(addr, map::QP_BASE, map::QP_STRIDE, QPS, map::QP_WORDS) {
            return self.qp_q[e][w];
        }
        if let Some((e, w)) = table_hit(addr, map::MR_BASE, map::MR_STRIDE, MRS, map::MR_WORDS) {
            return self.mr_q[e][w];
        }
        if let Some((e, w)) = table_hit(addr, map::CQ_BASE, map::CQ_STRIDE, CQS, map::CQ_WORDS) {
            return self.cq_q[e][w];
        }
        let ev = addr.wrapping_sub(map::CNT_RX_FRAMES_ADDR) as usize / 4;
        if addr >= map::CNT_RX_FRAMES_ADDR && ev < NEV {
            return self.cnt_ev_q[ev];
        }
        let rev = addr.wrapping_sub(map::CNT_RESP_EXEC_ADDR) as usize / 4;
        if addr >= map::CNT_RESP_EXEC_ADDR && rev < NREV {
            return self.cnt_rev_q[rev];
        }
        let cc = addr.wrapping_sub(map::CC_RW_ADDR) as usize / 4;
        if addr >= map::CC_RW_ADDR && cc < NCC {
            return self.cc_q[cc];
        }
        let pg = addr.wrapping_sub(map::PFCG_RW_ADDR) as usize / 4;
        if addr >= map::PFCG_RW_ADDR && pg < NPFCG {
            return self.pfcg_q[pg];
        }
        match addr {
            map::GLOBAL_ID_ADDR => map::GLOBAL_ID_RESET,
            map::GLOBAL_VERSION_ADDR => map::GLOBAL_VERSION_RESET,
            map::GLOBAL_PCIE_CFG_ADDR => self.pcie_cfg_q,
            map::GLOBAL_CPL_TIMEOUT_ADDR => self.cpl_timeout_q,
            map::GLOBAL_PARAMS_ADDR => {
                (QPS as u32) << map::GLOBAL_PARAMS_QPS_LSB
                    | (MRS as u32) << map::GLOBAL_PARAMS_MRS_LSB
                    | (CQS as u32) << map::GLOBAL_PARAMS_CQS_LSB
            }
            map::CNT_TX_FRAMES_ADDR => self.cnt_tx_frames_q,
            map::CNT_TX_BYTES_LO_ADDR => self.cnt_tx_bytes_q as u32,
            map::CNT_TX_BYTES_HI_ADDR => (self.cnt_tx_bytes_q >> 32) as u32,
            map::CNT_WQE_FETCHED_ADDR => self.cnt_wqe_fetched_q,
            map::CNT_CQE_WRITTEN_ADDR => self.cnt_cqe_written_q,
            map::CNT_PROT_ERR_ADDR => self.cnt_prot_err_q,
            map::CNT_FLUSH_ADDR => self.cnt_flush_q,
            map::CNT_FETCH_ERR_ADDR => self.cnt_fetch_err_q,
            map::CNT_DMA_ERR_ADDR => self.cnt_dma_err_q,
            map::CNT_CPL_UNEXPECTED_ADDR => i.dma_cpl_unexpected,
            map::CNT_CPL_MALFORMED_ADDR => i.dma_cpl_malformed,
            map::CNT_CPL_TIMEOUT_ADDR => i.dma_cpl_timeout,
            map::CNT_DCQCN_CNP_ADDR => i.dcqcn_cnt_cnp,
            map::CNT_DCQCN_CUT_ADDR => i.dcqcn_cnt_cut,
            map::CNT_DCQCN_FR_ADDR => i.dcqcn_cnt_fr,
            map::CNT_DCQCN_AI_ADDR => i.dcqcn_cnt_ai,
            map::CNT_DCQCN_HAI_ADDR => i.dcqcn_cnt_hai,
            map::CNT_DCQCN_ALPHA_ADDR => i.dcqcn_cnt_alpha,
            map::CNT_ACK_INVALID_ADDR => self.cnt_ack_invalid_q,
            map::CNT_RQE_FETCHED_ADDR => self.cnt_rqe_fetched_q,
            map::CNT_READ_JOB_FULL_ADDR => self.cnt_read_full_q,
            map::CNT_RDR_TAKEN_ADDR => self.cnt_snk_q[0],
            map::CNT_RDR_DONE_ADDR => self.cnt_snk_q[1],
            map::CNT_RDR_UNEXP_ADDR => self.cnt_snk_q[2],
            map::CNT_RDR_DUP_ADDR => self.cnt_snk_q[3],
            map::CNT_RDR_SEQ_ADDR => self.cnt_snk_q[4],
            map::CNT_RDR_BAD_ADDR => self.cnt_snk_q[5],
            map::PFCG_XOFF_SENT_ADDR => self.cnt_pfcg_q[0],
            map::PFCG_XON_SENT_ADDR => self.cnt_pfcg_q[1],
            map::RETX_TIMEOUT_ADDR => self.cnt_retx_q[0],
            map::RETX_REWIND_ADDR => self.cnt_retx_q[1],
            map::RETX_RNR_WAIT_ADDR => self.cnt_retx_q[2],
            map::RETX_EXHAUST_ADDR => self.cnt_retx_q[3],
            map::CNT_RX_WR_BYTES_LO_ADDR => self.cnt_rx_wr_bytes_q as u32,
            map::CNT_RX_WR_BYTES_HI_ADDR => (self.cnt_rx_wr_bytes_q >> 32) as u32,
            map::CC_STAT_RC_ADDR => i.stat_rc,
            map::CC_STAT_RT_ADDR => i.stat_rt,
            map::CC_STAT_ALPHA_ADDR => (i.stat_alpha & 0x7FF) as u32,
            // DOORBELL (write-only) and unmapped addresses read 0.
            _ => 0,
        }
    }

    /// The lookup registers' next values (in the port fields of the same
    /// names): the entries the indices name, as the tables are now.
    fn lookup(&self, i: &CsrIn) -> CsrOut {
        let q = &self.qp_q[i.qp_idx as usize % QPS];
        let m = &self.mr_q[i.mr_idx as usize % MRS];
        let c = &self.cq_q[i.cq_idx as usize % CQS];
        let ctrl = q[map::QP_CTRL_WORD];
        let udp = q[map::QP_UDP_WORD];
        let vlan = q[map::QP_VLAN_WORD];
        let flags = m[map::MR_FLAGS_WORD];
        let ip = |w0: usize| {
            (q[w0] as u128) << 96
                | (q[w0 + 1] as u128) << 64
                | (q[w0 + 2] as u128) << 32
                | q[w0 + 3] as u128
        };
        CsrOut {
            qp_state: tx_view(field(ctrl, map::QP_CTRL_STATE_LSB, map::QP_CTRL_STATE_W) as u8),
            qp_uc: field(ctrl, map::QP_CTRL_UC_LSB, 1) != 0,
            qp_ipv6: field(ctrl, map::QP_CTRL_IPV6_LSB, 1) != 0,
            qp_vlan_en: field(ctrl, map::QP_CTRL_VLAN_EN_LSB, 1) != 0,
            qp_ecn_en: field(ctrl, map::QP_CTRL_ECN_EN_LSB, 1) != 0,
            qp_mtu: field(ctrl, map::QP_CTRL_MTU_LSB, map::QP_CTRL_MTU_W) as u8,
            qp_max_rd: field(ctrl, map::QP_CTRL_MAX_RD_LSB, map::QP_CTRL_MAX_RD_W) as u8,
            // CTRL.CQ may be wider than the index: its low bits name the CQ.
            qp_cq: field(ctrl, map::QP_CTRL_CQ_LSB, CQW) as u8,
            qp_remote_qpn: field(
                q[map::QP_REMOTE_QPN_WORD],
                map::QP_REMOTE_QPN_QPN_LSB,
                map::QP_REMOTE_QPN_QPN_W,
            ),
            qp_psn: field(q[map::QP_PSN_WORD], map::QP_PSN_PSN_LSB, map::QP_PSN_PSN_W),
            qp_pd: field(q[map::QP_PD_WORD], map::QP_PD_PD_LSB, map::QP_PD_PD_W) as u16,
            qp_dst_mac: join64(q[map::QP_DST_MAC_HI_WORD], q[map::QP_DST_MAC_LO_WORD]),
            qp_src_mac: join64(q[map::QP_SRC_MAC_HI_WORD], q[map::QP_SRC_MAC_LO_WORD]),
            qp_src_ip: ip(map::QP_SRC_IP0_WORD),
            qp_dst_ip: ip(map::QP_DST_IP0_WORD),
            qp_udp_sport: field(udp, map::QP_UDP_SPORT_LSB, map::QP_UDP_SPORT_W) as u16,
            qp_dscp: field(udp, map::QP_UDP_DSCP_LSB, map::QP_UDP_DSCP_W) as u8,
            qp_vid: field(vlan, map::QP_VLAN_VID_LSB, map::QP_VLAN_VID_W) as u16,
            qp_pcp: field(vlan, map::QP_VLAN_PCP_LSB, map::QP_VLAN_PCP_W) as u8,
            qp_pkey: field(vlan, map::QP_VLAN_PKEY_LSB, map::QP_VLAN_PKEY_W) as u16,
            mr_valid: field(flags, map::MR_FLAGS_VALID_LSB, 1) != 0,
            mr_key: m[map::MR_KEY_WORD],
            mr_va: join64(m[map::MR_VA_HI_WORD], m[map::MR_VA_LO_WORD]),
            mr_len: join64(m[map::MR_LEN_HI_WORD], m[map::MR_LEN_LO_WORD]),
            mr_pbase: join64(m[map::MR_PBASE_HI_WORD], m[map::MR_PBASE_LO_WORD]),
            mr_access: field(flags, map::MR_FLAGS_ACCESS_LSB, map::MR_FLAGS_ACCESS_W) as u8,
            mr_pd: field(m[map::MR_PD_WORD], map::MR_PD_PD_LSB, map::MR_PD_PD_W) as u16,
            cq_base: join64(c[map::CQ_BASE_HI_WORD], c[map::CQ_BASE_LO_WORD]),
            cq_log: field(c[map::CQ_LOG_WORD], map::CQ_LOG_LOG_LSB, map::CQ_LOG_LOG_W) as u8,
            ..CsrOut::default()
        }
    }

    /// QP q's RETRY fields as `xctx_*` shows them: (timeout, retry_cnt,
    /// rnr_retry).
    pub fn retry_of(&self, q: usize) -> (u8, u8, u8) {
        let o = self.lookup_resp(&CsrIn {
            xctx_idx: q as u8,
            ..CsrIn::default()
        });
        (o.xctx_timeout, o.xctx_retry, o.xctx_rnr_retry)
    }

    /// The retransmission controller's lookup registers as a lookup of QP
    /// q leaves them (the idle skip's closed form: the scanner moves every
    /// cycle), and `other`'s, to compare the rest.
    pub fn xctx_load(&mut self, q: usize) {
        (
            self.xctx_timeout_q,
            self.xctx_retry_q,
            self.xctx_rnr_retry_q,
        ) = self.retry_of(q);
    }

    pub fn xctx_copy(&mut self, other: &Csr) {
        self.xctx_timeout_q = other.xctx_timeout_q;
        self.xctx_retry_q = other.xctx_retry_q;
        self.xctx_rnr_retry_q = other.xctx_rnr_retry_q;
    }

    /// The responder's and the retransmission controller's lookup
    /// registers' next values, the same way.
    fn lookup_resp(&self, i: &CsrIn) -> CsrOut {
        let retry = self.qp_q[i.xctx_idx as usize % QPS][map::QP_RETRY_WORD];
        let q = &self.qp_q[i.rctx_idx as usize % QPS];
        let m = &self.mr_q[i.rmr_idx as usize % MRS];
        let ctrl = q[map::QP_CTRL_WORD];
        let resp = q[map::QP_RESP_WORD];
        let flags = m[map::MR_FLAGS_WORD];
        CsrOut {
            rctx_state: field(ctrl, map::QP_CTRL_STATE_LSB, map::QP_CTRL_STATE_W) as u8,
            rctx_uc: field(ctrl, map::QP_CTRL_UC_LSB, 1) != 0,
            rctx_mtu: field(ctrl, map::QP_CTRL_MTU_LSB, map::QP_CTRL_MTU_W) as u8,
            rctx_pd: field(q[map::QP_PD_WORD], map::QP_PD_PD_LSB, map::QP_PD_PD_W) as u16,
            // RESP.RQ_CQ may be wider than the index: its low bits name the CQ.
            rctx_rq_cq: field(resp, map::QP_RESP_RQ_CQ_LSB, CQW) as u8,
            rctx_rnr_timer: field(resp, map::QP_RESP_RNR_TIMER_LSB, map::QP_RESP_RNR_TIMER_W) as u8,
            rctx_max_rd: field(
                resp,
                map::QP_RESP_MAX_DEST_RD_LSB,
                map::QP_RESP_MAX_DEST_RD_W,
            ) as u8,
            rctx_access: field(resp, map::QP_RESP_ACCESS_LSB, map::QP_RESP_ACCESS_W) as u8,
            rctx_remote_qpn: field(
                q[map::QP_REMOTE_QPN_WORD],
                map::QP_REMOTE_QPN_QPN_LSB,
                map::QP_REMOTE_QPN_QPN_W,
            ),
            xctx_timeout: field(retry, map::QP_RETRY_TIMEOUT_LSB, map::QP_RETRY_TIMEOUT_W) as u8,
            xctx_retry: field(
                retry,
                map::QP_RETRY_RETRY_CNT_LSB,
                map::QP_RETRY_RETRY_CNT_W,
            ) as u8,
            xctx_rnr_retry: field(
                retry,
                map::QP_RETRY_RNR_RETRY_LSB,
                map::QP_RETRY_RNR_RETRY_W,
            ) as u8,
            rmr_valid: field(flags, map::MR_FLAGS_VALID_LSB, 1) != 0,
            rmr_key: m[map::MR_KEY_WORD],
            rmr_va: join64(m[map::MR_VA_HI_WORD], m[map::MR_VA_LO_WORD]),
            rmr_len: join64(m[map::MR_LEN_HI_WORD], m[map::MR_LEN_LO_WORD]),
            rmr_pbase: join64(m[map::MR_PBASE_HI_WORD], m[map::MR_PBASE_LO_WORD]),
            rmr_access: field(flags, map::MR_FLAGS_ACCESS_LSB, map::MR_FLAGS_ACCESS_W) as u8,
            rmr_pd: field(m[map::MR_PD_WORD], map::MR_PD_PD_LSB, map::MR_PD_PD_W) as u16,
            ..CsrOut::default()
        }
    }
}

impl Dut for Csr {
    type In = CsrIn;
    type Out = CsrOut;
    const NAME: &'static str = "csr";

    fn reset(&mut self) -> CsrOut {
        *self = Csr::default();
        self.outputs()
    }

    fn tick(&mut self, i: &CsrIn) -> CsrOut {
        // ---- Reads of the current state (before this cycle's writes). ----
        let rd_data = self.read(i.mmio_rd_addr, i);
        let look = self.lookup(i);
        let rlook = self.lookup_resp(i);

        // ---- MMIO write decode. ----
        let wr = i.mmio_wr_valid && i.mmio_wr_addr.is_multiple_of(4);
        let addr = i.mmio_wr_addr;
        let data = i.mmio_wr_data;
        let db_field_qp =
            field(data, map::GLOBAL_DOORBELL_QP_LSB, map::GLOBAL_DOORBELL_QP_W) as usize;
        // A doorbell for a QP the build does not have is ignored.
        let db_hit = wr && addr == map::GLOBAL_DOORBELL_ADDR && db_field_qp < QPS;
        let rq_db_field_qp = field(
            data,
            map::GLOBAL_RQ_DOORBELL_QP_LSB,
            map::GLOBAL_RQ_DOORBELL_QP_W,
        ) as usize;
        let rq_db_hit = wr && addr == map::GLOBAL_RQ_DOORBELL_ADDR && rq_db_field_qp < QPS;

        // ---- Tables: the MMIO write, then hardware's writes over it. ----
        let mut psn_sw = None;
        let mut epsn_sw = None;
        if wr {
            if let Some((e, w)) = table_hit(addr, map::QP_BASE, map::QP_STRIDE, QPS, map::QP_WORDS)
            {
                self.qp_q[e][w] = data & map::QP_MASKS[w];
                let hw = i.psn_wr_valid && i.psn_wr_qp as usize % QPS == e;
                if w == map::QP_PSN_WORD && !hw {
                    psn_sw = Some(e);
                }
                if w == map::QP_EPSN_WORD {
                    epsn_sw = Some(e);
                }
            }
            if let Some((e, w)) = table_hit(addr, map::MR_BASE, map::MR_STRIDE, MRS, map::MR_WORDS)
            {
                self.mr_q[e][w] = data & map::MR_MASKS[w];
            }
            if let Some((e, w)) = table_hit(addr, map::CQ_BASE, map::CQ_STRIDE, CQS, map::CQ_WORDS)
            {
                self.cq_q[e][w] = data & map::CQ_MASKS[w];
            }
        }
        if i.psn_wr_valid {
            let psn_mask = ((1u32 << map::QP_PSN_PSN_W) - 1) << map::QP_PSN_PSN_LSB;
            let word = &mut self.qp_q[i.psn_wr_qp as usize % QPS][map::QP_PSN_WORD];
            *word = (*word & !psn_mask) | ((i.psn_wr_psn << map::QP_PSN_PSN_LSB) & psn_mask);
        }
        let state_mask = ((1u32 << map::QP_CTRL_STATE_W) - 1) << map::QP_CTRL_STATE_LSB;
        for (valid, qp) in [
            (i.err_a_valid, i.err_a_qp),
            (i.err_b_valid, i.err_b_qp),
            (i.err_c_valid, i.err_c_qp),
            (i.err_d_valid, i.err_d_qp),
            (i.err_e_valid, i.err_e_qp),
        ] {
            if valid {
                let word = &mut self.qp_q[qp as usize % QPS][map::QP_CTRL_WORD];
                *word = (*word & !state_mask) | ((QP_STATE_ERROR as u32) << map::QP_CTRL_STATE_LSB);
            }
        }

        // ---- Global registers. ----
        if wr && addr == map::GLOBAL_PCIE_CFG_ADDR {
            self.pcie_cfg_q = data & map::GLOBAL_PCIE_CFG_MASK;
        }
        if wr && addr == map::GLOBAL_CPL_TIMEOUT_ADDR {
            self.cpl_timeout_q = data & map::GLOBAL_CPL_TIMEOUT_MASK;
        }

        // ---- Counters (wrapping). ----
        self.cnt_tx_frames_q = self.cnt_tx_frames_q.wrapping_add(i.ev_tx_frame as u32);
        if i.ev_tx_frame {
            self.cnt_tx_bytes_q = self
                .cnt_tx_bytes_q
                .wrapping_add((i.ev_tx_len & 0x3FFF) as u64);
        }
        self.cnt_wqe_fetched_q = self
            .cnt_wqe_fetched_q
            .wrapping_add((i.ev_wqe_n & 0xF) as u32);
        self.cnt_cqe_written_q = self.cnt_cqe_written_q.wrapping_add(i.ev_cqe as u32);
        self.cnt_prot_err_q = self.cnt_prot_err_q.wrapping_add(i.ev_prot_err as u32);
        self.cnt_flush_q = self.cnt_flush_q.wrapping_add(i.ev_flush as u32);
        self.cnt_fetch_err_q = self.cnt_fetch_err_q.wrapping_add(i.ev_fetch_err as u32);
        self.cnt_dma_err_q = self.cnt_dma_err_q.wrapping_add(i.ev_dma_err as u32);
        self.cnt_ack_invalid_q = self.cnt_ack_invalid_q.wrapping_add(i.ev_ack_invalid as u32);
        self.cnt_rqe_fetched_q = self
            .cnt_rqe_fetched_q
            .wrapping_add((i.ev_rqe_n & 0xF) as u32);
        self.cnt_read_full_q = self.cnt_read_full_q.wrapping_add(i.ev_read_job_full as u32);
        for (k, c) in self.cnt_snk_q.iter_mut().enumerate() {
            *c = c.wrapping_add((i.ev_snk >> k & 1) as u32);
        }
        self.cnt_pfcg_q[0] = self.cnt_pfcg_q[0].wrapping_add(i.ev_pfcg_xoff as u32);
        self.cnt_pfcg_q[1] = self.cnt_pfcg_q[1].wrapping_add(i.ev_pfcg_xon as u32);
        for (k, c) in self.cnt_retx_q.iter_mut().enumerate() {
            *c = c.wrapping_add((i.ev_retx >> k & 1) as u32);
        }
        if i.ev_rx_write {
            self.cnt_rx_wr_bytes_q = self
                .cnt_rx_wr_bytes_q
                .wrapping_add((i.ev_rx_write_bytes & 0x1FFF) as u64);
        }
        self.psn_set_valid_q = psn_sw.is_some();
        if let Some(e) = psn_sw {
            self.psn_set_qp_q = e as u8;
            self.psn_set_psn_q = field(data, map::QP_PSN_PSN_LSB, map::QP_PSN_PSN_W);
        }
        self.epsn_set_valid_q = epsn_sw.is_some();
        if let Some(e) = epsn_sw {
            self.epsn_set_qp_q = e as u8;
            self.epsn_set_psn_q = field(data, map::QP_EPSN_PSN_LSB, map::QP_EPSN_PSN_W);
        }
        let ev = ev_bits(i);
        for (k, c) in self.cnt_ev_q.iter_mut().enumerate() {
            *c = c.wrapping_add(ev >> k & 1);
        }
        let rev = rev_bits(i);
        for (k, c) in self.cnt_rev_q.iter_mut().enumerate() {
            *c = c.wrapping_add(rev >> k & 1);
        }
        let cc = addr.wrapping_sub(map::CC_RW_ADDR) as usize / 4;
        if wr && addr >= map::CC_RW_ADDR && cc < NCC {
            self.cc_q[cc] = data & map::CC_RW_MASKS[cc];
        }
        let pg = addr.wrapping_sub(map::PFCG_RW_ADDR) as usize / 4;
        if wr && addr >= map::PFCG_RW_ADDR && pg < NPFCG {
            self.pfcg_q[pg] = data & map::PFCG_RW_MASKS[pg];
        }

        // ---- Output registers. ----
        self.rd_resp_valid_q = i.mmio_rd_valid;
        if i.mmio_rd_valid {
            self.rd_resp_data_q = rd_data;
        }
        self.db_valid_q = db_hit;
        if db_hit {
            // The QP's entry after this cycle's writes (self.qp_q is now qp_d).
            let q = &self.qp_q[db_field_qp];
            self.db_qp_q = db_field_qp as u8;
            self.db_pi_q =
                field(data, map::GLOBAL_DOORBELL_PI_LSB, map::GLOBAL_DOORBELL_PI_W) as u16;
            self.db_state_q = tx_view(field(
                q[map::QP_CTRL_WORD],
                map::QP_CTRL_STATE_LSB,
                map::QP_CTRL_STATE_W,
            ) as u8);
            self.db_sq_base_q = join64(q[map::QP_SQ_BASE_HI_WORD], q[map::QP_SQ_BASE_LO_WORD]);
            self.db_sq_log_q = field(
                q[map::QP_SQ_LOG_WORD],
                map::QP_SQ_LOG_LOG_LSB,
                map::QP_SQ_LOG_LOG_W,
            ) as u8;
        }
        // An EPSN write restarts the QP's responder, its RQ included: a
        // RESET doorbell (producer index 0) defines rq_fetch's RAM rows.
        self.rq_db_valid_q = rq_db_hit || epsn_sw.is_some();
        if let (false, Some(e)) = (rq_db_hit, epsn_sw) {
            self.rq_db_qp_q = e as u8;
            self.rq_db_pi_q = 0;
            self.rq_db_state_q = QP_STATE_RESET;
            self.rq_db_base_q = 0;
            self.rq_db_log_q = 0;
        }
        if rq_db_hit {
            let q = &self.qp_q[rq_db_field_qp];
            self.rq_db_qp_q = rq_db_field_qp as u8;
            self.rq_db_pi_q = field(
                data,
                map::GLOBAL_RQ_DOORBELL_PI_LSB,
                map::GLOBAL_RQ_DOORBELL_PI_W,
            ) as u16;
            self.rq_db_state_q = field(
                q[map::QP_CTRL_WORD],
                map::QP_CTRL_STATE_LSB,
                map::QP_CTRL_STATE_W,
            ) as u8;
            self.rq_db_base_q = join64(q[map::QP_RQ_BASE_HI_WORD], q[map::QP_RQ_BASE_LO_WORD]);
            self.rq_db_log_q = field(
                q[map::QP_RQ_LOG_WORD],
                map::QP_RQ_LOG_LOG_LSB,
                map::QP_RQ_LOG_LOG_W,
            ) as u8;
        }
        self.rctx_state_q = rlook.rctx_state;
        self.rctx_uc_q = rlook.rctx_uc;
        self.rctx_mtu_q = rlook.rctx_mtu;
        self.rctx_pd_q = rlook.rctx_pd;
        self.rctx_rq_cq_q = rlook.rctx_rq_cq;
        self.rctx_rnr_timer_q = rlook.rctx_rnr_timer;
        self.rctx_max_rd_q = rlook.rctx_max_rd;
        self.rctx_access_q = rlook.rctx_access;
        self.rctx_remote_qpn_q = rlook.rctx_remote_qpn;
        self.xctx_timeout_q = rlook.xctx_timeout;
        self.xctx_retry_q = rlook.xctx_retry;
        self.xctx_rnr_retry_q = rlook.xctx_rnr_retry;
        self.rmr_valid_q = rlook.rmr_valid;
        self.rmr_key_q = rlook.rmr_key;
        self.rmr_va_q = rlook.rmr_va;
        self.rmr_len_q = rlook.rmr_len;
        self.rmr_pbase_q = rlook.rmr_pbase;
        self.rmr_access_q = rlook.rmr_access;
        self.rmr_pd_q = rlook.rmr_pd;
        self.qp_state_q = look.qp_state;
        self.qp_uc_q = look.qp_uc;
        self.qp_ipv6_q = look.qp_ipv6;
        self.qp_vlan_en_q = look.qp_vlan_en;
        self.qp_ecn_en_q = look.qp_ecn_en;
        self.qp_mtu_q = look.qp_mtu;
        self.qp_max_rd_q = look.qp_max_rd;
        self.qp_cq_q = look.qp_cq;
        self.qp_remote_qpn_q = look.qp_remote_qpn;
        self.qp_psn_q = look.qp_psn;
        self.qp_pd_q = look.qp_pd;
        self.qp_dst_mac_q = look.qp_dst_mac;
        self.qp_src_mac_q = look.qp_src_mac;
        self.qp_src_ip_q = look.qp_src_ip;
        self.qp_dst_ip_q = look.qp_dst_ip;
        self.qp_udp_sport_q = look.qp_udp_sport;
        self.qp_dscp_q = look.qp_dscp;
        self.qp_vid_q = look.qp_vid;
        self.qp_pcp_q = look.qp_pcp;
        self.qp_pkey_q = look.qp_pkey;
        self.mr_valid_q = look.mr_valid;
        self.mr_key_q = look.mr_key;
        self.mr_va_q = look.mr_va;
        self.mr_len_q = look.mr_len;
        self.mr_pbase_q = look.mr_pbase;
        self.mr_access_q = look.mr_access;
        self.mr_pd_q = look.mr_pd;
        self.cq_base_q = look.cq_base;
        self.cq_log_q = look.cq_log;
        self.outputs()
    }
}

/// A field of every QP's word `w`, packed as the RTL's per-QP flops are:
/// entry `e`'s field at bits `width * e`. (The table words themselves are
/// RAM in the RTL, `ctx_table`, which a VCD does not show as registers.)
fn per_qp(
    t: &mut dyn Tracer,
    name: &str,
    tab: &[[u32; map::QP_WORDS]],
    w: usize,
    lsb: u32,
    width: u32,
) {
    let mut b = Bits::default();
    for e in tab {
        b.push(field(e[w], lsb, width) as u64, width);
    }
    t.var(name, width * tab.len() as u32, b.words());
}

impl Trace for Csr {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("pcie_cfg_q", 32, &self.pcie_cfg_q);
        t.reg("cpl_timeout_q", 32, &self.cpl_timeout_q);
        t.reg("cnt_tx_frames_q", 32, &self.cnt_tx_frames_q);
        t.reg("cnt_tx_bytes_q", 64, &self.cnt_tx_bytes_q);
        t.reg("cnt_wqe_fetched_q", 32, &self.cnt_wqe_fetched_q);
        t.reg("cnt_cqe_written_q", 32, &self.cnt_cqe_written_q);
        t.reg("cnt_prot_err_q", 32, &self.cnt_prot_err_q);
        t.reg("cnt_flush_q", 32, &self.cnt_flush_q);
        t.reg("cnt_fetch_err_q", 32, &self.cnt_fetch_err_q);
        t.reg("cnt_dma_err_q", 32, &self.cnt_dma_err_q);
        t.reg("cnt_ack_invalid_q", 32, &self.cnt_ack_invalid_q);
        t.reg("cnt_rqe_fetched_q", 32, &self.cnt_rqe_fetched_q);
        t.reg("cnt_read_full_q", 32, &self.cnt_read_full_q);
        t.each("cnt_snk_q", 32, &self.cnt_snk_q);
        t.each("cnt_pfcg_q", 32, &self.cnt_pfcg_q);
        t.each("cnt_retx_q", 32, &self.cnt_retx_q);
        t.reg("cnt_rx_wr_bytes_q", 64, &self.cnt_rx_wr_bytes_q);
        t.reg("psn_set_valid_q", 1, &self.psn_set_valid_q);
        t.reg("psn_set_qp_q", 4, &self.psn_set_qp_q);
        t.reg("psn_set_psn_q", 24, &self.psn_set_psn_q);
        t.reg("epsn_set_valid_q", 1, &self.epsn_set_valid_q);
        t.reg("epsn_set_qp_q", 4, &self.epsn_set_qp_q);
        t.reg("epsn_set_psn_q", 24, &self.epsn_set_psn_q);
        t.reg("rq_db_valid_q", 1, &self.rq_db_valid_q);
        t.reg("rq_db_qp_q", 4, &self.rq_db_qp_q);
        t.reg("rq_db_pi_q", 16, &self.rq_db_pi_q);
        t.reg("rq_db_state_q", 3, &self.rq_db_state_q);
        t.reg("rq_db_base_q", 64, &self.rq_db_base_q);
        t.reg("rq_db_log_q", 5, &self.rq_db_log_q);
        t.reg("rctx_state_q", 3, &self.rctx_state_q);
        t.reg("rctx_uc_q", 1, &self.rctx_uc_q);
        t.reg("rctx_mtu_q", 3, &self.rctx_mtu_q);
        t.reg("rctx_pd_q", 16, &self.rctx_pd_q);
        t.reg("rctx_rq_cq_q", 2, &self.rctx_rq_cq_q);
        t.reg("rctx_rnr_timer_q", 5, &self.rctx_rnr_timer_q);
        t.reg("rctx_max_rd_q", 3, &self.rctx_max_rd_q);
        t.reg("rctx_access_q", 4, &self.rctx_access_q);
        t.reg("rctx_remote_qpn_q", 24, &self.rctx_remote_qpn_q);
        t.reg("xctx_timeout_q", 5, &self.xctx_timeout_q);
        t.reg("xctx_retry_q", 3, &self.xctx_retry_q);
        t.reg("xctx_rnr_retry_q", 3, &self.xctx_rnr_retry_q);
        t.reg("rmr_valid_q", 1, &self.rmr_valid_q);
        t.reg("rmr_key_q", 32, &self.rmr_key_q);
        t.reg("rmr_va_q", 64, &self.rmr_va_q);
        t.reg("rmr_len_q", 64, &self.rmr_len_q);
        t.reg("rmr_pbase_q", 64, &self.rmr_pbase_q);
        t.reg("rmr_access_q", 4, &self.rmr_access_q);
        t.reg("rmr_pd_q", 16, &self.rmr_pd_q);
        t.each("cnt_ev_q", 32, &self.cnt_ev_q);
        t.each("cnt_rev_q", 32, &self.cnt_rev_q);
        t.each("cc_q", 32, &self.cc_q);
        t.each("pfcg_q", 32, &self.pfcg_q);
        t.reg("rd_resp_valid_q", 1, &self.rd_resp_valid_q);
        t.reg("rd_resp_data_q", 32, &self.rd_resp_data_q);
        t.reg("db_valid_q", 1, &self.db_valid_q);
        t.reg("db_qp_q", 4, &self.db_qp_q);
        t.reg("db_pi_q", 16, &self.db_pi_q);
        t.reg("db_state_q", 2, &self.db_state_q);
        t.reg("db_sq_base_q", 64, &self.db_sq_base_q);
        t.reg("db_sq_log_q", 5, &self.db_sq_log_q);
        t.reg("qp_state_q", 2, &self.qp_state_q);
        t.reg("qp_uc_q", 1, &self.qp_uc_q);
        t.reg("qp_ipv6_q", 1, &self.qp_ipv6_q);
        t.reg("qp_vlan_en_q", 1, &self.qp_vlan_en_q);
        t.reg("qp_ecn_en_q", 1, &self.qp_ecn_en_q);
        t.reg("qp_mtu_q", 3, &self.qp_mtu_q);
        t.reg("qp_max_rd_q", 3, &self.qp_max_rd_q);
        t.reg("qp_cq_q", 2, &self.qp_cq_q);
        t.reg("qp_remote_qpn_q", 24, &self.qp_remote_qpn_q);
        t.reg("qp_psn_q", 24, &self.qp_psn_q);
        t.reg("qp_pd_q", 16, &self.qp_pd_q);
        t.reg("qp_dst_mac_q", 48, &self.qp_dst_mac_q);
        t.reg("qp_src_mac_q", 48, &self.qp_src_mac_q);
        t.reg("qp_src_ip_q", 128, &self.qp_src_ip_q);
        t.reg("qp_dst_ip_q", 128, &self.qp_dst_ip_q);
        t.reg("qp_udp_sport_q", 16, &self.qp_udp_sport_q);
        t.reg("qp_dscp_q", 6, &self.qp_dscp_q);
        t.reg("qp_vid_q", 12, &self.qp_vid_q);
        t.reg("qp_pcp_q", 3, &self.qp_pcp_q);
        t.reg("qp_pkey_q", 16, &self.qp_pkey_q);
        t.reg("mr_valid_q", 1, &self.mr_valid_q);
        t.reg("mr_key_q", 32, &self.mr_key_q);
        t.reg("mr_va_q", 64, &self.mr_va_q);
        t.reg("mr_len_q", 64, &self.mr_len_q);
        t.reg("mr_pbase_q", 64, &self.mr_pbase_q);
        t.reg("mr_access_q", 4, &self.mr_access_q);
        t.reg("mr_pd_q", 16, &self.mr_pd_q);
        t.reg("cq_base_q", 64, &self.cq_base_q);
        t.reg("cq_log_q", 5, &self.cq_log_q);
        let ctrl = map::QP_CTRL_WORD;
        per_qp(t, "qp_st_q", &self.qp_q, ctrl, map::QP_CTRL_STATE_LSB, 3);
        per_qp(t, "qp_cc_en_q", &self.qp_q, ctrl, map::QP_CTRL_CC_EN_LSB, 1);
        per_qp(
            t,
            "pcp_all_q",
            &self.qp_q,
            map::QP_VLAN_WORD,
            map::QP_VLAN_PCP_LSB,
            3,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Literal addresses and values from the register map's table, so that
    /// these tests check the generated constants too.
    fn wr(addr: u16, data: u32) -> CsrIn {
        CsrIn {
            mmio_wr_valid: true,
            mmio_wr_addr: addr,
            mmio_wr_data: data,
            ..CsrIn::default()
        }
    }

    fn rd(addr: u16) -> CsrIn {
        CsrIn {
            mmio_rd_valid: true,
            mmio_rd_addr: addr,
            ..CsrIn::default()
        }
    }

    fn read(c: &mut Csr, addr: u16) -> u32 {
        let o = c.tick(&rd(addr));
        assert!(o.mmio_rd_resp_valid);
        o.mmio_rd_resp_data
    }

    #[test]
    fn reset_values_and_constants() {
        let mut c = Csr::new();
        let o = c.reset();
        assert_eq!(
            (o.cfg_mrrs, o.cfg_mps, o.cfg_req_id, o.cfg_cpl_timeout),
            (2, 1, 0x0100, 50000)
        );
        assert!(!o.mmio_rd_resp_valid && !o.db_valid);
        assert_eq!(read(&mut c, 0x0000), 0x524E_4943);
        // Map version 3: the tables moved and PARAMS widened for 256 QPs.
        assert_eq!(read(&mut c, 0x0004), 3);
        assert_eq!(read(&mut c, 0x0008), 0x0100_0012);
        assert_eq!(read(&mut c, 0x000C), 50000);
        // PARAMS: QPS 16 in 9:0, MRS 16 in 19:10, CQS 4 in 29:20.
        assert_eq!(read(&mut c, 0x0014), 0x0040_4010);
        // VLAN of QP 5: PKEY resets to 0xFFFF.
        assert_eq!(read(&mut c, 0x8000 + 5 * 0x80 + 0x44), 0xFFFF_0000);
        assert_eq!(read(&mut c, 0x8000 + 5 * 0x80 + 0x08), 0);
        // Unmapped, write-only, unaligned and beyond-the-build addresses read 0.
        for a in [
            0x0010, 0x0018, 0x00FC, 0x0130, 0x0001, 0x8002, 0x8054, 0x8800, 0x4024, 0x4400, 0x300C,
            0x3040, 0xFFFC,
        ] {
            assert_eq!(read(&mut c, a), 0, "address {a:#x}");
        }
    }

    #[test]
    fn table_registers_read_back_masked_and_feed_the_lookup_ports() {
        let mut c = Csr::new();
        c.reset();
        let q = 0x8000 + 3 * 0x80;
        c.tick(&wr(q, 0xFFFF_FFFF)); // CTRL: every defined bit set
        c.tick(&wr(q + 0x04, 0xABCD_EF12)); // REMOTE_QPN keeps 24 bits
        c.tick(&wr(q + 0x0C, 0x1234_5678)); // PD keeps 16 bits
        c.tick(&wr(q + 0x10, 0x3344_5566)); // DST_MAC_LO
        c.tick(&wr(q + 0x14, 0xFFFF_1122)); // DST_MAC_HI
        c.tick(&wr(q + 0x20, 0x2001_0DB8)); // SRC_IP0
        c.tick(&wr(q + 0x2C, 0xC0A8_0001)); // SRC_IP3
        c.tick(&wr(q + 0x40, 0xFFFF_12B7)); // UDP: sport 0x12B7, DSCP 0x3F
        c.tick(&wr(q + 0x44, 0x1234_5ABC)); // VLAN: VID 0xABC, PCP 5, PKEY 0x1234
                                            // STATE 2:0, UC 4, IPV6 5, VLAN_EN 6, ECN_EN 7, MTU 10:8, CQ 15:12, CC_EN 16,
                                            // MAX_RD 19:17.
        assert_eq!(read(&mut c, q), 0x000F_F7F7);
        assert_eq!(read(&mut c, q + 0x04), 0x00CD_EF12);
        assert_eq!(read(&mut c, q + 0x0C), 0x5678);
        assert_eq!(read(&mut c, q + 0x14), 0x1122);
        assert_eq!(read(&mut c, q + 0x40), 0x003F_12B7);
        assert_eq!(read(&mut c, q + 0x44), 0x1234_5ABC);
        let o = c.tick(&CsrIn {
            qp_idx: 3,
            ..CsrIn::default()
        });
        assert_eq!(
            (
                o.qp_state,
                o.qp_uc,
                o.qp_ipv6,
                o.qp_vlan_en,
                o.qp_ecn_en,
                o.qp_mtu,
                o.qp_cq
            ),
            // STATE 7 is no state the transmit path knows: RESET to it.
            (0, true, true, true, true, 7, 3)
        );
        assert_eq!((o.qp_remote_qpn, o.qp_pd), (0xCD_EF12, 0x5678));
        assert_eq!(o.qp_dst_mac, 0x1122_3344_5566);
        assert_eq!(o.qp_src_ip, 0x2001_0DB8_0000_0000_0000_0000_C0A8_0001);
        assert_eq!((o.qp_udp_sport, o.qp_dscp), (0x12B7, 0x3F));
        assert_eq!((o.qp_vid, o.qp_pcp, o.qp_pkey), (0xABC, 5, 0x1234));

        let m = 0x4000 + 2 * 0x40;
        c.tick(&wr(m, 0x0000_0102));
        c.tick(&wr(m + 0x04, 0x8000_0000));
        c.tick(&wr(m + 0x08, 0x0000_0001));
        c.tick(&wr(m + 0x0C, 0x0001_0000));
        c.tick(&wr(m + 0x18, 0xDEAD_BEEF));
        c.tick(&wr(m + 0x1C, 0xFFFF_FFFF));
        c.tick(&wr(m + 0x20, 0x0009_0007));
        assert_eq!(read(&mut c, m + 0x1C), 0x0000_010F);
        c.tick(&CsrIn {
            mr_idx: 2,
            ..CsrIn::default()
        });
        let o = c.tick(&CsrIn::default());
        // mr_idx went back to 0 for the second tick: entry 0 is empty.
        assert!(!o.mr_valid);
        let o = c.tick(&CsrIn {
            mr_idx: 2,
            ..CsrIn::default()
        });
        assert_eq!(
            (o.mr_valid, o.mr_key, o.mr_access, o.mr_pd),
            (true, 0x102, 0xF, 7)
        );
        assert_eq!(
            (o.mr_va, o.mr_len, o.mr_pbase),
            (0x1_8000_0000, 0x1_0000, 0xDEAD_BEEF_0000_0000)
        );

        c.tick(&wr(0x3000 + 3 * 0x10, 0x0000_1000));
        c.tick(&wr(0x3000 + 3 * 0x10 + 0x08, 0xFFFF_FFEC));
        let o = c.tick(&CsrIn {
            cq_idx: 3,
            ..CsrIn::default()
        });
        assert_eq!((o.cq_base, o.cq_log), (0x1000, 0x0C));
    }

    #[test]
    fn reads_and_lookups_see_the_state_before_this_cycles_write() {
        let mut c = Csr::new();
        c.reset();
        let psn = 0x8000 + 0x08;
        let o = c.tick(&CsrIn {
            mmio_rd_valid: true,
            mmio_rd_addr: psn,
            ..wr(psn, 0x77)
        });
        assert_eq!((o.mmio_rd_resp_data, o.qp_psn), (0, 0));
        let o = c.tick(&rd(psn));
        assert_eq!((o.mmio_rd_resp_data, o.qp_psn), (0x77, 0x77));
        // cfg_* follow a PCIE_CFG write the next cycle.
        let o = c.tick(&wr(0x0008, 0xBEEF_0053));
        assert_eq!((o.cfg_mrrs, o.cfg_mps, o.cfg_req_id), (3, 5, 0xBEEF));
    }

    #[test]
    fn qp_pcp_all_follows_a_vlan_write_the_next_cycle() {
        let mut c = Csr::new();
        let o = c.reset();
        assert_eq!(o.qp_pcp_all, 0);
        // QP 5's VLAN: VID 0x123, PCP 6, PKEY 0xFFFF -> bits 15..17 = 6.
        let o = c.tick(&wr(0x8000 + 5 * 0x80 + 0x44, 0xFFFF_6123));
        assert_eq!(o.qp_pcp_all, 6 << 15);
        // QP 15's VLAN: PCP 7 (bit 15 of the word is not stored) -> 45..47.
        let o = c.tick(&wr(0x8000 + 15 * 0x80 + 0x44, 0x0000_F000));
        assert_eq!(o.qp_pcp_all, 6 << 15 | 7 << 45);
        // QP 0 PCP 1; a write to another word of QP 5 leaves its PCP.
        c.tick(&wr(0x8000 + 0x44, 0x0000_1000));
        let o = c.tick(&wr(0x8000 + 5 * 0x80 + 0x40, 0xFFFF_FFFF));
        assert_eq!(o.qp_pcp_all, 1 | 6 << 15 | 7 << 45);
        // QP 5 back to PCP 0.
        let o = c.tick(&wr(0x8000 + 5 * 0x80 + 0x44, 0x0000_0000));
        assert_eq!(o.qp_pcp_all, 1 | 7 << 45);
    }

    #[test]
    fn doorbell_shows_the_qp_as_after_this_cycles_writes() {
        let mut c = Csr::new();
        c.reset();
        let q = 0x8000 + 7 * 0x80;
        c.tick(&wr(q, 0x0000_0001)); // RTS
        c.tick(&wr(q + 0x48, 0x0004_0000));
        c.tick(&wr(q + 0x4C, 0x0000_0002));
        c.tick(&wr(q + 0x50, 0x0000_0006));
        let o = c.tick(&wr(0x0010, 0xFF07_0123));
        assert!(o.db_valid);
        assert_eq!((o.db_qp, o.db_pi, o.db_state), (7, 0x0123, 1));
        assert_eq!((o.db_sq_base, o.db_sq_log), (0x2_0004_0000, 6));
        let o = c.tick(&CsrIn::default());
        assert!(!o.db_valid, "a pulse");
        // tx_engine puts QP 7 in ERROR in the doorbell's cycle.
        let o = c.tick(&CsrIn {
            err_a_valid: true,
            err_a_qp: 7,
            ..wr(0x0010, 0x0007_0124)
        });
        assert_eq!((o.db_valid, o.db_pi, o.db_state), (true, 0x0124, 2));
        // A doorbell for QP 16 (QPS = 16) is ignored.
        let o = c.tick(&wr(0x0010, 0x0010_0001));
        assert!(!o.db_valid);
    }

    #[test]
    fn hardware_wins_over_an_mmio_write_of_the_same_field() {
        let mut c = Csr::new();
        c.reset();
        let q = 0x8000 + 2 * 0x80;
        // CTRL write (RTS, UC, MTU 3) in the cycle sq_fetch sets ERROR.
        c.tick(&CsrIn {
            err_b_valid: true,
            err_b_qp: 2,
            ..wr(q, 0x0000_0311)
        });
        assert_eq!(read(&mut c, q), 0x0000_0312);
        // PSN write in the cycle tx_engine writes the PSN back.
        c.tick(&CsrIn {
            psn_wr_valid: true,
            psn_wr_qp: 2,
            psn_wr_psn: 0xAB_CDEF,
            ..wr(q + 0x08, 0x0000_0005)
        });
        assert_eq!(read(&mut c, q + 0x08), 0xAB_CDEF);
        // Different QPs: both apply.
        c.tick(&CsrIn {
            psn_wr_valid: true,
            psn_wr_qp: 1,
            psn_wr_psn: 0x10,
            ..wr(q + 0x08, 0x0000_0020)
        });
        assert_eq!(read(&mut c, q + 0x08), 0x20);
        assert_eq!(read(&mut c, 0x8000 + 0x80 + 0x08), 0x10);
        // Writes to RO/CONST registers are ignored.
        c.tick(&wr(0x0000, 0));
        c.tick(&wr(0x0100, 5));
        assert_eq!(read(&mut c, 0x0000), 0x524E_4943);
        assert_eq!(read(&mut c, 0x0100), 0);
    }

    #[test]
    fn counters_count_and_wrap() {
        let mut c = Csr::new();
        c.reset();
        let ev = CsrIn {
            ev_tx_frame: true,
            ev_tx_len: 0x3FFF,
            ev_wqe_n: 4,
            ev_cqe: true,
            ev_prot_err: true,
            ev_flush: true,
            ev_fetch_err: true,
            ev_dma_err: true,
            ..CsrIn::default()
        };
        c.tick(&ev);
        c.tick(&ev);
        c.tick(&CsrIn {
            ev_tx_len: 100, // ignored without ev_tx_frame
            ..CsrIn::default()
        });
        assert_eq!(read(&mut c, 0x0100), 2);
        assert_eq!(read(&mut c, 0x0104), 0x7FFE);
        assert_eq!(read(&mut c, 0x0108), 0);
        assert_eq!(read(&mut c, 0x010C), 8);
        for a in [0x0110, 0x0114, 0x0118, 0x011C, 0x0120] {
            assert_eq!(read(&mut c, a), 2, "address {a:#x}");
        }
        // dma_rd's counters read as they are in the read's cycle.
        let o = c.tick(&CsrIn {
            dma_cpl_malformed: 0x1234_5678,
            ..rd(0x0128)
        });
        assert_eq!(o.mmio_rd_resp_data, 0x1234_5678);
        // The 64-bit byte count carries into the high word; the others wrap.
        c.cnt_tx_bytes_q = 0xFFFF_FFFF;
        c.cnt_tx_frames_q = u32::MAX;
        c.tick(&ev);
        assert_eq!(read(&mut c, 0x0104), 0x3FFE);
        assert_eq!(read(&mut c, 0x0108), 1);
        assert_eq!(read(&mut c, 0x0100), 0);
    }

    #[test]
    fn congestion_block_resets_masks_and_feeds_its_ports() {
        let mut c = Csr::new();
        c.reset();
        // Defaults at 250 MHz / 100 Gb/s, worked out by hand from docs/rx_cc.md:
        // 55 us = 13,750 cycles, 300 us = 75,000, 5 Mb/s = 5 * 2^20 / 2000
        // = 2621.44 -> 2621 units, 100 Gb/s = 50 B/cycle = 50 * 2^20.
        let o = c.outputs();
        assert_eq!((o.cfg_g_shift, o.cfg_f), (8, 1));
        assert_eq!((o.cfg_k, o.cfg_t_inc), (13_750, 75_000));
        assert_eq!((o.cfg_r_ai, o.cfg_r_hai, o.cfg_r_min), (2621, 26_214, 524));
        assert_eq!(o.cfg_r_max, 50 << 20);
        assert_eq!((o.cfg_alpha_init, o.cfg_b), (1023, 32767));
        assert_eq!((o.cfg_mode, o.cfg_mon, o.cfg_alpha_t), (0x1F, 1000, 250));
        assert_eq!(
            (o.cfg_cnp_dscp, o.cfg_cnp_pcp, o.cfg_cnp_becn),
            (48, 6, true)
        );
        assert_eq!((o.cfg_cnp_interval, o.cfg_rl_burst), (1000, 16_384));
        c.tick(&wr(0x0228, 0xFFFF_FFFF)); // CNP_CFG keeps DSCP 5:0, PCP 10:8, BECN 16
        c.tick(&wr(0x0230, 0xFFFF_FF07)); // STAT_QP keeps 8 bits, uses the low 4
        assert_eq!(read(&mut c, 0x0228), 0x0001_073F);
        assert_eq!(read(&mut c, 0x0230), 0xFF07 & 0xFF);
        let o = c.outputs();
        assert_eq!(
            (o.cfg_cnp_dscp, o.cfg_cnp_pcp, o.cfg_cnp_becn),
            (63, 7, true)
        );
        assert_eq!(o.cfg_stat_qp, 7);
        // STAT_* and dcqcn's counters read the inputs as they are.
        let mut i = CsrIn {
            mmio_rd_valid: true,
            mmio_rd_addr: 0x0240,
            stat_rc: 0xDEAD_BEEF,
            stat_alpha: 0x7FF,
            dcqcn_cnt_hai: 77,
            ..CsrIn::default()
        };
        c.tick(&i);
        assert_eq!(c.outputs().mmio_rd_resp_data, 0xDEAD_BEEF);
        i.mmio_rd_addr = 0x0248;
        c.tick(&i);
        assert_eq!(c.outputs().mmio_rd_resp_data, 0x7FF);
        i.mmio_rd_addr = 0x018C; // CNT_DCQCN_HAI
        c.tick(&i);
        assert_eq!(c.outputs().mmio_rd_resp_data, 77);
        // DCQCN_MODE keeps its 6 bits.
        c.tick(&wr(0x0234, 0xFFFF_FFFF));
        assert_eq!(read(&mut c, 0x0234), 0x3F);
        assert_eq!(c.outputs().cfg_mode, 0x3F);
    }

    #[test]
    fn receive_events_count_in_their_own_registers() {
        let mut c = Csr::new();
        c.reset();
        // Two frames dropped for reason 5 (ICRC), one CNP received.
        let drop = CsrIn {
            ev_rx_frame: true,
            ev_drop: true,
            ev_drop_reason: 5,
            ..CsrIn::default()
        };
        c.tick(&drop);
        c.tick(&drop);
        c.tick(&CsrIn {
            ev_rx_frame: true,
            ev_rx_cnp: true,
            ev_ce_suppressed: true,
            ..CsrIn::default()
        });
        assert_eq!(read(&mut c, 0x0130), 3); // RX_FRAMES
        assert_eq!(read(&mut c, 0x0138), 1); // RX_CNP
        assert_eq!(read(&mut c, 0x015C), 2); // DROP_ICRC
        assert_eq!(read(&mut c, 0x0158), 0); // DROP_IP_CSUM
        assert_eq!(read(&mut c, 0x0178), 1); // CE_SUPPRESSED
                                             // The STATE and CC_EN fields of every QP, straight from the table.
        c.tick(&wr(0x8000 + 2 * 0x80, 1 << 16 | 2));
        let o = c.outputs();
        assert_eq!((o.qp_state_all, o.qp_cc_en_all), (2 << 4, 1 << 2));
    }

    #[test]
    fn responder_side_views_doorbell_lookups_and_epsn() {
        let mut c = Csr::new();
        c.reset();
        let q = 0x8000 + 6 * 0x80;
        c.tick(&wr(q + 0x04, 0x00AB_CDEF)); // REMOTE_QPN
        c.tick(&wr(q + 0x0C, 0x0042)); // PD
        c.tick(&wr(q + 0x54, 0x1234_5680)); // RQ_BASE_LO
        c.tick(&wr(q + 0x58, 0x0000_0009)); // RQ_BASE_HI
        c.tick(&wr(q + 0x5C, 0x0000_0007)); // RQ_LOG
                                            // RESP: RNR_TIMER 0x12, MAX_DEST_RD 5, RQ_CQ 3 (0xB: low bits),
                                            // ACCESS 6; bits outside the fields dropped.
        c.tick(&wr(q + 0x60, 0xFFF6_B512));
        assert_eq!(read(&mut c, q + 0x60), 0x0006_B512);
        // RTR: the transmit path sees RESET, the receive path RTS.
        c.tick(&wr(q, 0x0000_0503)); // STATE 3 (RTR), MTU 5
        let o = c.tick(&CsrIn {
            qp_idx: 6,
            rctx_idx: 6,
            ..CsrIn::default()
        });
        assert_eq!(o.qp_state_all >> 12 & 3, 1, "rx view of RTR");
        assert_eq!(o.qp_state, 0, "tx view of RTR");
        let o2 = o;
        assert_eq!(
            (o2.rctx_state, o2.rctx_mtu, o2.rctx_pd, o2.rctx_remote_qpn),
            (3, 5, 0x42, 0xAB_CDEF)
        );
        assert_eq!(
            (
                o2.rctx_rnr_timer,
                o2.rctx_max_rd,
                o2.rctx_rq_cq,
                o2.rctx_access
            ),
            (0x12, 5, 3, 6)
        );
        // RQ doorbell for QP 6: its ring and 3-bit state at n+1.
        // (tick returns the outputs after the edge that ends its cycle.)
        let rq_db = |o: &CsrOut| {
            (
                o.rq_db_qp,
                o.rq_db_pi,
                o.rq_db_state,
                o.rq_db_base,
                o.rq_db_log,
            )
        };
        let o = c.tick(&wr(0x0018, 6 << 16 | 0x0102));
        assert!(o.rq_db_valid && !o.db_valid);
        assert_eq!(rq_db(&o), (6, 0x0102, 3, 0x9_1234_5680, 7));
        assert!(!c.tick(&CsrIn::default()).rq_db_valid);
        // A doorbell for a QP the build lacks is ignored.
        assert!(!c.tick(&wr(0x0018, 16 << 16 | 1)).rq_db_valid);
        // EPSN write: a pulse with the PSN, and it reads back.
        let o = c.tick(&wr(q + 0x64, 0xFF12_3456));
        assert_eq!(
            (o.epsn_set_valid, o.epsn_set_qp, o.epsn_set_psn),
            (true, 6, 0x12_3456)
        );
        // ... and a RESET doorbell of the QP's RQ, with no ring.
        assert!(o.rq_db_valid);
        assert_eq!(rq_db(&o), (6, 0, 0, 0, 0));
        let o = c.tick(&CsrIn::default());
        assert!(!o.epsn_set_valid && !o.rq_db_valid);
        assert_eq!(read(&mut c, q + 0x64), 0x12_3456);
        // INIT: RESET in both views. The responder's error port: ERROR.
        let o = c.tick(&wr(q, 0x0000_0004));
        assert_eq!((o.qp_state_all >> 12 & 3, o.qp_err_all), (0, 0));
        let o = c.tick(&CsrIn {
            err_c_valid: true,
            err_c_qp: 6,
            ..CsrIn::default()
        });
        assert_eq!((o.qp_state_all >> 12 & 3, o.qp_err_all), (2, 1 << 6));
        // The responder's MR port, independent of mr_idx.
        let m = 0x4000 + 9 * 0x40;
        c.tick(&wr(m, 0xC0DE_0009));
        c.tick(&wr(m + 0x04, 0x1000));
        c.tick(&wr(m + 0x0C, 0x2000));
        c.tick(&wr(m + 0x14, 0x8000));
        c.tick(&wr(m + 0x1C, 0x106));
        c.tick(&wr(m + 0x20, 0x42));
        c.tick(&CsrIn {
            rmr_idx: 9,
            mr_idx: 1,
            ..CsrIn::default()
        });
        let o = c.outputs();
        assert_eq!(
            (
                o.rmr_valid,
                o.rmr_key,
                o.rmr_va,
                o.rmr_len,
                o.rmr_pbase,
                o.rmr_access,
                o.rmr_pd
            ),
            (true, 0xC0DE_0009, 0x1000, 0x2000, 0x8000, 6, 0x42)
        );
        assert!(!o.mr_valid);
    }
}
