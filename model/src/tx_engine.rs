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
//! (`grant_ctrl`) with `cnp_valid` emits a CNP descriptor for `cnp_qp`
//! instead (docs/rx_cc.md, "tx_engine changes"). The three valid/ready
//! outputs are each held until taken; the next grant is taken once all are.
//!
//! Timing (grant transferred at n):
//! - new WQE: `wqe_pop` and `qp_idx` visible at n+1; the WQE (`wqe_valid`)
//!   and the QP context arrive at n+2, the MR entry (csr's MR port, addressed
//!   by the WQE's lkey outside this block) at n+3, when the checks run;
//!   descriptor / payload read / completion visible at n+4;
//! - WQE in progress: `qp_idx` visible at n+1, QP context at n+2, outputs
//!   visible at n+3;
//! - CNP (control grant with `cnp_valid`): as a WQE in progress, descriptor
//!   visible at n+3;
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

/// The table sizes and encodings (the lkey's MR index is `lkey mod MRS`,
/// applied in rnic_top).
pub use crate::params::{qp_state, wqe_op, CQS, MRS, QPS};

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
        pub wqe_avail: u16 = 16,
        pub wqe_block: u16 = 16,
        pub wqe_valid: bool = 1,
        pub wqe_qp: u8 = 4 if wqe_valid,
        pub wqe_data: Beat = 512 if wqe_valid,
        pub qp_state: u8 = 2,
        pub qp_uc: bool = 1,
        pub qp_ipv6: bool = 1,
        pub qp_vlan_en: bool = 1,
        pub qp_ecn_en: bool = 1,
        pub qp_mtu: u8 = 3,
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
    }
}

ports! {
    /// Outputs of `tx_engine`, all registered.
    pub struct TxEngineOut {
        pub grant_ready: bool = 1,
        pub req_active: u16 = 16,
        pub wqe_pop_valid: bool = 1,
        pub wqe_pop_qp: u8 = 4 if wqe_pop_valid,
        pub qp_idx: u8 = 4,
        pub psn_wr_valid: bool = 1,
        pub psn_wr_qp: u8 = 4 if psn_wr_valid,
        pub psn_wr_psn: u32 = 24 if psn_wr_valid,
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
}

#[derive(Debug, Clone)]
pub struct TxEngine {
    state_q: State,
    grant_ready_q: bool,
    qp_idx_q: u8,
    /// The step is a CNP (a control grant).
    cnp_q: bool,
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
    // Outputs.
    psn_wr_valid_q: bool,
    psn_wr_qp_q: u8,
    psn_wr_psn_q: u32,
    err_valid_q: bool,
    err_qp_q: u8,
    rd_req_valid_q: bool,
    rd_req_addr_q: u64,
    rd_req_len_q: u32,
    desc_valid_q: bool,
    /// The descriptor's fields (valid, aeth_en, aeth aside).
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
}

impl Default for TxEngine {
    fn default() -> Self {
        TxEngine {
            state_q: State::Idle,
            grant_ready_q: false,
            qp_idx_q: 0,
            cnp_q: false,
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
            psn_wr_valid_q: false,
            psn_wr_qp_q: 0,
            psn_wr_psn_q: 0,
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
        }
    }
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
            req_active: self.active_q,
            wqe_pop_valid: self.wqe_pop_valid_q,
            wqe_pop_qp: self.wqe_pop_qp_q,
            qp_idx: self.qp_idx_q,
            psn_wr_valid: self.psn_wr_valid_q,
            psn_wr_qp: self.psn_wr_qp_q,
            psn_wr_psn: self.psn_wr_psn_q,
            err_valid: self.err_valid_q,
            err_qp: self.err_qp_q,
            rd_req_valid: self.rd_req_valid_q,
            rd_req_addr: self.rd_req_addr_q,
            rd_req_len: self.rd_req_len_q,
            desc_valid: self.desc_valid_q,
            // ACKs are not sent yet (responder side: a later issue).
            desc_aeth_en: false,
            desc_aeth: 0,
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
        self.cpl_wait_frame_q = status == crate::params::cqe_status::SUCCESS && i.qp_uc;
        self.cpl_uc_q = i.qp_uc;
        self.cpl_psn_q = psn;
        self.cpl_wr_id_q = wr_id;
        self.cpl_status_q = status;
        self.cpl_opcode_q = opcode;
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
    /// PSN write-back, completion, and the WQE-in-progress update.
    fn emit(&mut self, s: Src, i: &TxEngineIn) {
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
        let psn = i.qp_psn & 0xFF_FFFF;
        let next_psn = ((psn as u64 + n_psn) & 0xFF_FFFF) as u32;
        // Every signaled message completes (UC: after its frame; RC: after
        // its ACK, in ack_tracker).
        let cpl_due = last && s.flags & 1 != 0;

        let d = &mut self.desc_q;
        d.desc_qp = q as u8;
        // Only a UC completion waits for its frame in cq_writer.
        d.desc_cpl = cpl_due && i.qp_uc;
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

        if cpl_due {
            // The message's last PSN (a READ's span ends at next_psn - 1).
            let last_psn = (next_psn.wrapping_sub(1)) & 0xFF_FFFF;
            self.set_cpl(s.wr_id, 0, op, s.len, s.imm, i, last_psn);
        }

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
        }
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
        d.desc_dst_mac = i.qp_dst_mac & 0xFFFF_FFFF_FFFF;
        d.desc_src_mac = i.qp_src_mac & 0xFFFF_FFFF_FFFF;
        d.desc_vlan_en = i.qp_vlan_en;
        d.desc_pcp = i.cfg_cnp_pcp & 7;
        d.desc_vid = i.qp_vid & 0xFFF;
        d.desc_ipv6 = i.qp_ipv6;
        d.desc_src_ip = i.qp_src_ip;
        d.desc_dst_ip = i.qp_dst_ip;
        d.desc_dscp = i.cfg_cnp_dscp & 0x3F;
        d.desc_ecn = 0;
        d.desc_udp_sport = i.qp_udp_sport;
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
        // Headers, the 16 reserved bytes, ICRC 4.
        d.desc_wire_len = (hdr_len(i) + 16 + 4) as u16;
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
        self.psn_wr_valid_q = false;
        self.err_valid_q = false;
        self.ev_prot_err_q = false;
        self.ev_flush_q = false;

        match self.state_q {
            State::Idle => {
                // grant_ready_q is low only in the reset cycle.
                if i.grant_valid && self.grant_ready_q && i.grant_ctrl {
                    // A control grant names no QP: it is for the CNP, if
                    // one waits, and does nothing otherwise.
                    self.cnp_q = true;
                    if i.cnp_valid {
                        self.qp_idx_q = i.cnp_qp & (QPS as u8 - 1);
                        self.grant_ready_q = false;
                        self.state_q = State::Ctx;
                    }
                } else if i.grant_valid && self.grant_ready_q {
                    let q = i.grant_qp & (QPS as u8 - 1);
                    self.cnp_q = false;
                    self.qp_idx_q = q;
                    if self.active_q >> q & 1 != 0 {
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
                } else {
                    self.grant_ready_q = true;
                }
            }
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
                    self.state_q = State::Chk;
                } else {
                    self.grant_ready_q = true;
                    self.state_q = State::Idle;
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
                // err_qp is loaded for every error completion (and only
                // flagged valid for 2 and 4), as in the RTL.
                if i.qp_state & 3 == qp_state::ERROR {
                    self.set_cpl(wr_id, 5, op, 0, imm, i, 0);
                    self.err_qp_q = self.qp_idx_q;
                    self.ev_flush_q = true;
                } else if op > wqe_op::READ || (op == wqe_op::READ && i.qp_uc) {
                    self.set_cpl(wr_id, 2, op, 0, imm, i, 0);
                    self.err_valid_q = true;
                    self.err_qp_q = self.qp_idx_q;
                } else if len != 0 && !mr_ok {
                    self.set_cpl(wr_id, 4, op, 0, imm, i, 0);
                    self.err_valid_q = true;
                    self.err_qp_q = self.qp_idx_q;
                    self.ev_prot_err_q = true;
                } else {
                    let s = Src {
                        wr_id,
                        opcode: op,
                        flags: self.w_flags_q,
                        len,
                        paddr: i
                            .mr_pbase
                            .wrapping_add(self.w_laddr_q.wrapping_sub(i.mr_va)),
                        rva: self.w_rva_q,
                        rkey: self.w_rkey_q,
                        imm,
                        left: len,
                        first: true,
                    };
                    self.emit(s, i);
                }
                self.state_q = State::Out;
            }
            State::Ctx => self.state_q = State::Emit,
            State::Emit if self.cnp_q => {
                self.emit_cnp(i);
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
                };
                self.emit(s, i);
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
                    self.grant_ready_q = true;
                    self.state_q = State::Idle;
                }
            }
        }
        self.outputs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// The csr fields of one QP that matter here (others are fixed).
    #[derive(Clone, Copy)]
    struct Qp {
        state: u8,
        uc: bool,
        mtu: u8,
        psn: u32,
        pd: u16,
        cq: u8,
        vlan: bool,
        ipv6: bool,
    }

    const RTS_RC: Qp = Qp {
        state: qp_state::RTS,
        uc: false,
        mtu: 1,
        psn: 100,
        pd: 7,
        cq: 2,
        vlan: false,
        ipv6: false,
    };

    #[derive(Clone, Copy, Default)]
    struct Mr {
        valid: bool,
        key: u32,
        va: u64,
        len: u64,
        pbase: u64,
        access: u8,
        pd: u16,
    }

    /// MR 1: key 0x101, VA 0x10000, 64 KiB at physical 0x8000_0000, local
    /// write, PD 7.
    fn mrs() -> [Mr; MRS] {
        let mut m = [Mr::default(); MRS];
        m[1] = Mr {
            valid: true,
            key: 0x101,
            va: 0x1_0000,
            len: 0x1_0000,
            pbase: 0x8000_0000,
            access: 1,
            pd: 7,
        };
        m
    }

    #[allow(clippy::too_many_arguments)]
    fn wqe(wr_id: u64, op: u8, flags: u8, len: u32, laddr: u64, lkey: u32, imm: u32) -> [u8; 64] {
        let mut w = [0u8; 64];
        w[0..8].copy_from_slice(&wr_id.to_le_bytes());
        w[8] = op;
        w[9] = flags;
        w[0x0C..0x10].copy_from_slice(&len.to_le_bytes());
        w[0x10..0x18].copy_from_slice(&laddr.to_le_bytes());
        w[0x18..0x1C].copy_from_slice(&lkey.to_le_bytes());
        w[0x1C..0x20].copy_from_slice(&imm.to_le_bytes());
        w[0x20..0x28].copy_from_slice(&0xAAAA_0000_0000_1000u64.to_le_bytes());
        w[0x28..0x2C].copy_from_slice(&0x5151u32.to_le_bytes());
        w
    }

    /// One descriptor as seen by pkt_builder, with its payload read.
    #[derive(Debug, PartialEq, Eq)]
    struct Pkt {
        opcode: u8,
        psn: u32,
        pay: u16,
        /// (remote VA, rkey, DMA length)
        reth: Option<(u64, u32, u32)>,
        imm: Option<u32>,
        se: bool,
        ack_req: bool,
        cpl: bool,
        /// (address, length) of the payload read.
        rd: Option<(u64, u32)>,
    }

    #[derive(Debug, PartialEq, Eq)]
    struct CplRec {
        wait: bool,
        wr_id: u64,
        status: u8,
        opcode: u8,
        len: u32,
        imm: u32,
        qp: u8,
        cq: u8,
        uc: bool,
        psn: u32,
    }

    /// A CNP descriptor: (latency from its control grant, opcode, PSN,
    /// DSCP, ECN, PCP, BECN, dest QP, pay_len, wire_len, desc_cpl, ack_req).
    type Cnp = (u64, u8, u32, u8, u8, u8, bool, u32, u16, u16, bool, bool);

    struct Run {
        pkts: Vec<Pkt>,
        /// desc_wire_len of each packet in `pkts`.
        wire: Vec<u16>,
        cnps: Vec<Cnp>,
        cpls: Vec<CplRec>,
        /// Next PSN as written back last.
        psn: u32,
        /// (grant cycle, first-visible cycle of the step's first output, new WQE)
        lat: Vec<(u64, u64, bool)>,
        prot_errs: u32,
        flushes: u32,
        /// Cycles in which a pop was visible, and a data descriptor.
        pops: Vec<u64>,
        pkt_at: Vec<u64>,
    }

    const Q: u8 = 3;

    /// Plays csr (registered reads, PSN and error write-back), sq_fetch (pop
    /// at n -> WQE at n+1) and tx_sched (a grant for QP `Q` whenever it has
    /// work) around the model, everything always ready.
    fn run(qp: Qp, mrs: [Mr; MRS], wqes: &[[u8; 64]]) -> Run {
        run_ctrl(qp, mrs, wqes, &[])
    }

    /// Same, with a control grant instead of the data grant in each cycle
    /// of `ctrl` (cycle, cnp_valid); a CNP is for QP `Q`, with DSCP 48,
    /// PCP 6, BECN 1.
    fn run_ctrl(qp: Qp, mrs: [Mr; MRS], wqes: &[[u8; 64]], ctrl: &[(u64, bool)]) -> Run {
        run_blk(qp, mrs, wqes, ctrl, 0..0)
    }

    /// Same, with `wqe_block[Q]` high in the cycles of `block`.
    fn run_blk(
        qp: Qp,
        mrs: [Mr; MRS],
        wqes: &[[u8; 64]],
        ctrl: &[(u64, bool)],
        block: std::ops::Range<u64>,
    ) -> Run {
        let mut m = TxEngine::new();
        let mut out = m.reset();
        let mut sq: VecDeque<[u8; 64]> = wqes.iter().copied().collect();
        let mut qp = qp;
        let mut wqe_next: Option<[u8; 64]> = None;
        let mut wqe_data = [0u8; 64];
        let mut qp_read = qp;
        let mut mr_read = Mr::default();
        let mut r = Run {
            pkts: vec![],
            wire: vec![],
            cnps: vec![],
            cpls: vec![],
            psn: qp.psn,
            lat: vec![],
            prot_errs: 0,
            flushes: 0,
            pops: vec![],
            pkt_at: vec![],
        };
        let mut pending_grant: Option<(u64, bool)> = None;
        let mut pending_cnp: Option<u64> = None;
        let mut idle = 0;
        for cycle in 0..4_000_000u64 {
            let mut i = TxEngineIn {
                rd_req_ready: true,
                desc_ready: true,
                cpl_ready: true,
                ..Default::default()
            };
            // sq_fetch
            if let Some(w) = wqe_next.take() {
                i.wqe_valid = true;
                i.wqe_qp = Q;
                wqe_data = w;
            }
            i.wqe_data = Beat::default();
            i.wqe_data[..].copy_from_slice(&[wqe_data, [0; 64]].concat()[..64]);
            if out.wqe_pop_valid {
                assert_eq!(out.wqe_pop_qp, Q);
                wqe_next = Some(sq.pop_front().expect("pop of an empty SQ"));
                r.pops.push(cycle);
            }
            i.wqe_avail = if sq.is_empty() { 0 } else { 1 << Q };
            let blocked = block.contains(&cycle);
            i.wqe_block = if blocked { 1 << Q } else { 0 };
            // tx_sched
            let active = out.req_active >> Q & 1 != 0;
            i.grant_valid = active || !sq.is_empty() || wqe_next.is_some();
            i.grant_qp = Q;
            i.cfg_cnp_dscp = 48;
            i.cfg_cnp_pcp = 6;
            i.cfg_cnp_becn = true;
            if let Some(&(_, v)) = ctrl.iter().find(|c| c.0 == cycle) {
                i.grant_valid = true;
                i.grant_qp = 0;
                i.grant_ctrl = true;
                i.cnp_valid = v;
                i.cnp_qp = Q;
                if v && out.grant_ready {
                    pending_cnp = Some(cycle);
                }
            } else if i.grant_valid && out.grant_ready && (active || !sq.is_empty() && !blocked) {
                pending_grant = Some((cycle, !active));
            }
            // csr: this cycle's lookups, then this cycle's writes.
            i.qp_state = qp_read.state;
            i.qp_uc = qp_read.uc;
            i.qp_mtu = qp_read.mtu;
            i.qp_psn = qp_read.psn;
            i.qp_pd = qp_read.pd;
            i.qp_cq = qp_read.cq;
            i.qp_remote_qpn = 0x12345;
            i.qp_pkey = 0xFFFF;
            i.qp_vlan_en = qp_read.vlan;
            i.qp_ipv6 = qp_read.ipv6;
            i.qp_dscp = 10;
            i.qp_pcp = 2;
            i.qp_ecn_en = true;
            i.mr_valid = mr_read.valid;
            i.mr_key = mr_read.key;
            i.mr_va = mr_read.va;
            i.mr_len = mr_read.len;
            i.mr_pbase = mr_read.pbase;
            i.mr_access = mr_read.access;
            i.mr_pd = mr_read.pd;
            // Only QP `Q` is used (qp_idx is 0 until the first grant).
            qp_read = qp;
            let lkey = u32::from_le_bytes(wqe_data[0x18..0x1C].try_into().unwrap());
            mr_read = mrs[lkey as usize % MRS];
            if out.psn_wr_valid {
                assert_eq!(out.psn_wr_qp, Q);
                qp.psn = out.psn_wr_psn;
                r.psn = out.psn_wr_psn;
            }
            if out.err_valid {
                assert_eq!(out.err_qp, Q);
                qp.state = qp_state::ERROR;
            }
            r.prot_errs += out.ev_prot_err as u32;
            r.flushes += out.ev_flush as u32;
            // Outputs of the step (each visible for one cycle: always ready).
            if out.desc_valid && out.desc_cnp_pad {
                let g = pending_cnp.take().expect("a CNP without a control grant");
                assert!(!out.rd_req_valid && !out.cpl_valid);
                assert_eq!(
                    (out.desc_qp, out.desc_reth_en, out.desc_imm_en),
                    (Q, false, false)
                );
                r.cnps.push((
                    cycle - g,
                    out.desc_opcode,
                    out.desc_psn,
                    out.desc_dscp,
                    out.desc_ecn,
                    out.desc_pcp,
                    out.desc_becn,
                    out.desc_dest_qp,
                    out.desc_pay_len,
                    out.desc_wire_len,
                    out.desc_cpl,
                    out.desc_ack_req,
                ));
                out = m.tick(&i);
                continue;
            }
            if out.desc_valid || out.cpl_valid {
                if let Some((g, new)) = pending_grant.take() {
                    r.lat.push((g, cycle, new));
                }
            }
            if out.desc_valid {
                assert!(!out.desc_becn, "BECN on a data packet");
                assert_eq!((out.desc_dscp, out.desc_ecn, out.desc_pcp), (10, 2, 2));
                r.wire.push(out.desc_wire_len);
                r.pkt_at.push(cycle);
                assert_eq!(out.desc_qp, Q);
                assert_eq!(out.desc_dest_qp, 0x12345);
                r.pkts.push(Pkt {
                    opcode: out.desc_opcode,
                    psn: out.desc_psn,
                    pay: out.desc_pay_len,
                    reth: out.desc_reth_en.then_some((
                        out.desc_reth_va,
                        out.desc_reth_rkey,
                        out.desc_reth_len,
                    )),
                    imm: out.desc_imm_en.then_some(out.desc_imm),
                    se: out.desc_se,
                    ack_req: out.desc_ack_req,
                    cpl: out.desc_cpl,
                    rd: out
                        .rd_req_valid
                        .then_some((out.rd_req_addr, out.rd_req_len)),
                });
            } else {
                assert!(!out.rd_req_valid, "a payload read without its descriptor");
            }
            if out.cpl_valid {
                r.cpls.push(CplRec {
                    wait: out.cpl_wait_frame,
                    wr_id: out.cpl_wr_id,
                    status: out.cpl_status,
                    opcode: out.cpl_opcode,
                    len: out.cpl_len,
                    imm: out.cpl_imm,
                    qp: out.cpl_qp,
                    cq: out.cpl_cq,
                    uc: out.cpl_uc,
                    psn: out.cpl_psn,
                });
            }
            let busy = !sq.is_empty()
                || active
                || wqe_next.is_some()
                || !out.grant_ready
                || ctrl.iter().any(|c| c.0 >= cycle);
            idle = if busy { 0 } else { idle + 1 };
            if idle > 10 {
                return r;
            }
            out = m.tick(&i);
        }
        panic!("did not finish");
    }

    /// A packet with no extension header and no read.
    fn p(opcode: u8, psn: u32, pay: u16, ack_req: bool) -> Pkt {
        Pkt {
            opcode,
            psn,
            pay,
            reth: None,
            imm: None,
            se: false,
            ack_req,
            cpl: false,
            rd: None,
        }
    }

    /// Same, reading `pay` bytes at `addr`.
    fn pr(opcode: u8, psn: u32, pay: u16, ack_req: bool, addr: u64) -> Pkt {
        Pkt {
            rd: Some((addr, pay as u32)),
            ..p(opcode, psn, pay, ack_req)
        }
    }

    const LA: u64 = 0x1_0010; // local VA: 16 bytes into MR 1
    const PA: u64 = 0x8000_0010; // its physical address
    const RETH: fn(u32) -> Option<(u64, u32, u32)> =
        |len| Some((0xAAAA_0000_0000_1000, 0x5151, len));

    #[test]
    fn mtu_codes() {
        let got: Vec<u32> = (0..8).map(mtu_bytes).collect();
        assert_eq!(got, vec![256, 256, 512, 1024, 2048, 4096, 4096, 4096]);
    }

    #[test]
    fn send_segmentation_at_the_mtu_edges() {
        // MTU 256: lengths 0, 1, 255, 256, 257, 700.
        let ws: Vec<[u8; 64]> = [0u32, 1, 255, 256, 257, 700]
            .iter()
            .enumerate()
            .map(|(k, &len)| wqe(k as u64, wqe_op::SEND, 0, len, LA, 0x101, 0))
            .collect();
        let r = run(RTS_RC, mrs(), &ws);
        let expect = vec![
            p(0x04, 100, 0, true), // zero length: ONLY, no read
            pr(0x04, 101, 1, true, PA),
            pr(0x04, 102, 255, true, PA),
            pr(0x04, 103, 256, true, PA),
            pr(0x00, 104, 256, false, PA),    // FIRST
            pr(0x02, 105, 1, true, PA + 256), // LAST
            pr(0x00, 106, 256, false, PA),
            pr(0x01, 107, 256, false, PA + 256), // MIDDLE
            pr(0x02, 108, 188, true, PA + 512),
        ];
        assert_eq!(r.pkts, expect);
        assert_eq!(r.psn, 109);
        assert!(r.cpls.is_empty(), "nothing signaled, nothing completes");
    }

    #[test]
    fn send_imm_and_solicited() {
        let ws = [
            wqe(1, wqe_op::SEND_IMM, 2, 257, LA, 0x101, 0xCAFE_F00D),
            wqe(2, wqe_op::SEND_IMM, 0, 0, LA, 0x101, 0x1111_2222),
            wqe(3, wqe_op::SEND, 2, 10, LA, 0x101, 0),
        ];
        let r = run(RTS_RC, mrs(), &ws);
        let expect = vec![
            pr(0x00, 100, 256, false, PA),
            Pkt {
                imm: Some(0xCAFE_F00D),
                se: true,
                ..pr(0x03, 101, 1, true, PA + 256) // LAST with Imm
            },
            Pkt {
                imm: Some(0x1111_2222),
                ..p(0x05, 102, 0, true) // ONLY with Imm
            },
            Pkt {
                se: true,
                ..pr(0x04, 103, 10, true, PA)
            },
        ];
        assert_eq!(r.pkts, expect);
    }

    #[test]
    fn write_segmentation_reth_and_imm() {
        let mut qp = RTS_RC;
        qp.mtu = 2; // 512
        let ws = [
            wqe(1, wqe_op::WRITE, 2, 100, LA, 0x101, 0),
            wqe(2, wqe_op::WRITE, 0, 1025, LA, 0x101, 0),
            wqe(3, wqe_op::WRITE_IMM, 2, 512, LA, 0x101, 0x77),
            wqe(4, wqe_op::WRITE_IMM, 0, 513, LA, 0x101, 0x88),
            wqe(5, wqe_op::WRITE, 0, 0, LA, 0x101, 0),
        ];
        let r = run(qp, mrs(), &ws);
        let expect = vec![
            // WRITE has no SE even when solicited.
            Pkt {
                reth: RETH(100),
                ..pr(0x0A, 100, 100, true, PA)
            },
            Pkt {
                reth: RETH(1025),
                ..pr(0x06, 101, 512, false, PA)
            },
            pr(0x07, 102, 512, false, PA + 512),
            pr(0x08, 103, 1, true, PA + 1024),
            Pkt {
                reth: RETH(512),
                imm: Some(0x77),
                se: true,
                ..pr(0x0B, 104, 512, true, PA)
            },
            Pkt {
                reth: RETH(513),
                ..pr(0x06, 105, 512, false, PA)
            },
            Pkt {
                imm: Some(0x88),
                ..pr(0x09, 106, 1, true, PA + 512)
            },
            Pkt {
                reth: RETH(0),
                ..p(0x0A, 107, 0, true)
            },
        ];
        assert_eq!(r.pkts, expect);
        assert_eq!(r.psn, 108);
    }

    #[test]
    fn read_consumes_one_psn_per_response_packet() {
        let mut qp = RTS_RC;
        qp.mtu = 3; // 1024
        let ws = [
            wqe(1, wqe_op::READ, 0, 0, LA, 0x101, 0),
            wqe(2, wqe_op::READ, 0, 1024, LA, 0x101, 0),
            wqe(3, wqe_op::READ, 0, 1025, LA, 0x101, 0),
            wqe(4, wqe_op::READ, 0, 5000, LA, 0x101, 0),
        ];
        let r = run(qp, mrs(), &ws);
        let expect = vec![
            Pkt {
                reth: RETH(0),
                ..p(0x0C, 100, 0, true)
            },
            Pkt {
                reth: RETH(1024),
                ..p(0x0C, 101, 0, true)
            },
            Pkt {
                reth: RETH(1025),
                ..p(0x0C, 102, 0, true)
            },
            Pkt {
                reth: RETH(5000),
                ..p(0x0C, 104, 0, true)
            },
        ];
        assert_eq!(r.pkts, expect);
        assert_eq!(r.psn, 109); // 104 + ceil(5000 / 1024)
    }

    #[test]
    fn psn_wraps_at_2_pow_24() {
        let mut qp = RTS_RC;
        qp.psn = 0xFF_FFFE;
        let ws = [
            wqe(1, wqe_op::SEND, 0, 700, LA, 0x101, 0),
            wqe(2, wqe_op::READ, 0, 600, LA, 0x101, 0),
        ];
        let r = run(qp, mrs(), &ws);
        let psns: Vec<u32> = r.pkts.iter().map(|p| p.psn).collect();
        assert_eq!(psns, vec![0xFF_FFFE, 0xFF_FFFF, 0, 1]);
        assert_eq!(r.psn, 4);
    }

    #[test]
    fn uc_opcodes_and_completions() {
        let mut qp = RTS_RC;
        qp.uc = true;
        qp.mtu = 5; // 4096
        let ws = [
            wqe(1, wqe_op::SEND, 1, 4097, LA, 0x101, 0),
            wqe(2, wqe_op::WRITE_IMM, 1, 8, LA, 0x101, 0x99),
            wqe(3, wqe_op::SEND_IMM, 0, 3, LA, 0x101, 0x42), // unsignaled
            wqe(4, wqe_op::WRITE, 1, 0, LA, 0x101, 0),
        ];
        let r = run(qp, mrs(), &ws);
        let expect = vec![
            pr(0x20, 100, 4096, false, PA),
            Pkt {
                cpl: true,
                ..pr(0x22, 101, 1, false, PA + 4096)
            },
            Pkt {
                reth: RETH(8),
                imm: Some(0x99),
                cpl: true,
                ..pr(0x2B, 102, 8, false, PA)
            },
            Pkt {
                imm: Some(0x42),
                ..pr(0x25, 103, 3, false, PA)
            },
            Pkt {
                reth: RETH(0),
                cpl: true,
                ..p(0x2A, 104, 0, false)
            },
        ];
        assert_eq!(r.pkts, expect);
        let c = |wr_id, opcode, len, imm, psn| CplRec {
            wait: true,
            wr_id,
            status: 0,
            opcode,
            len,
            imm,
            qp: Q,
            cq: 2,
            uc: true,
            psn,
        };
        assert_eq!(
            r.cpls,
            vec![
                c(1, 0, 4097, 0, 101),
                c(2, 3, 8, 0x99, 102),
                c(4, 2, 0, 0, 104)
            ]
        );
    }

    fn err(wr_id: u64, status: u8, opcode: u8, imm: u32) -> CplRec {
        CplRec {
            wait: false,
            wr_id,
            status,
            opcode,
            len: 0,
            imm,
            qp: Q,
            cq: 2,
            uc: false,
            psn: 0,
        }
    }

    /// `bad` must fail with `status`; the good WQE behind it is flushed.
    fn fails(qp: Qp, mrs: [Mr; MRS], bad: [u8; 64], status: u8) {
        let good = wqe(9, wqe_op::SEND_IMM, 1, 8, LA, 0x101, 0x5);
        let r = run(qp, mrs, &[bad, good]);
        assert!(r.pkts.is_empty(), "nothing is sent for a faulty WQE");
        let op = bad[8];
        let imm = if op == 1 || op == 3 {
            u32::from_le_bytes(bad[0x1C..0x20].try_into().unwrap())
        } else {
            0
        };
        let uc = |c: CplRec| CplRec { uc: qp.uc, ..c };
        assert_eq!(
            r.cpls,
            vec![uc(err(1, status, op, imm)), uc(err(9, 5, 1, 5))]
        );
        assert_eq!(r.prot_errs, (status == 4) as u32);
        assert_eq!(r.flushes, 1);
        assert_eq!(r.psn, qp.psn, "no PSN is used");
    }

    #[test]
    fn each_protection_fault_fails_and_flushes() {
        let base = mrs();
        let w = |op, len, laddr, lkey| wqe(1, op, 0, len, laddr, lkey, 0x33);
        // Invalid MR.
        let mut m = base;
        m[1].valid = false;
        fails(RTS_RC, m, w(0, 8, LA, 0x101), 4);
        // Key mismatch (same index 1, other key).
        fails(RTS_RC, base, w(0, 8, LA, 0x201), 4);
        // PD mismatch.
        let mut m = base;
        m[1].pd = 8;
        fails(RTS_RC, m, w(0, 8, LA, 0x101), 4);
        // Below the region.
        fails(RTS_RC, base, w(2, 8, 0xFFFF, 0x101), 4);
        // Past the end by one byte; exactly to the end is fine.
        fails(RTS_RC, base, w(0, 0x1_0000 - 15, LA, 0x101), 4);
        let r = run(RTS_RC, base, &[w(0, 0x1_0000 - 16, LA, 0x101)]);
        assert_eq!(r.cpls, vec![]);
        assert_eq!(r.pkts.len(), 256);
        // 65-bit arithmetic: laddr + len wraps 2^64 in 64 bits.
        let mut m = base;
        m[1].va = 0xFFFF_FFFF_FFFF_FF00;
        m[1].len = 0x100;
        fails(RTS_RC, m, w(0, 0x200, 0xFFFF_FFFF_FFFF_FF80, 0x101), 4);
        // READ needs LOCAL_WRITE; a SEND from the same MR does not.
        let mut m = base;
        m[1].access = 0xE;
        fails(RTS_RC, m, w(4, 8, LA, 0x101), 4);
        assert_eq!(run(RTS_RC, m, &[w(0, 8, LA, 0x101)]).pkts.len(), 1);
        // Zero length: no MR check at all.
        let mut m = base;
        m[1].valid = false;
        assert_eq!(run(RTS_RC, m, &[w(2, 0, 0, 0x101)]).pkts.len(), 1);
    }

    #[test]
    fn invalid_opcode_and_read_on_uc_are_qp_operation_errors() {
        fails(RTS_RC, mrs(), wqe(1, 5, 0, 8, LA, 0x101, 0), 2);
        fails(RTS_RC, mrs(), wqe(1, 0xFF, 0, 8, LA, 0x101, 0), 2);
        let mut uc = RTS_RC;
        uc.uc = true;
        fails(uc, mrs(), wqe(1, wqe_op::READ, 1, 8, LA, 0x101, 0), 2);
        // The opcode check comes before the MR check.
        let mut m = mrs();
        m[1].valid = false;
        fails(RTS_RC, m, wqe(1, 7, 0, 8, LA, 0x101, 0), 2);
    }

    #[test]
    fn error_state_flushes_everything_signaled_or_not() {
        let mut qp = RTS_RC;
        qp.state = qp_state::ERROR;
        let ws = [
            wqe(1, wqe_op::SEND, 0, 8, LA, 0x101, 0),
            wqe(2, 9, 0, 8, LA, 0x101, 0),
            wqe(3, wqe_op::WRITE_IMM, 1, 8, LA, 0x999, 0xAB),
        ];
        let r = run(qp, mrs(), &ws);
        assert!(r.pkts.is_empty());
        assert_eq!(
            r.cpls,
            vec![err(1, 5, 0, 0), err(2, 5, 9, 0), err(3, 5, 3, 0xAB)]
        );
        assert_eq!(r.flushes, 3);
    }

    #[test]
    fn latency_budget() {
        let ws = [
            wqe(1, wqe_op::SEND, 0, 600, LA, 0x101, 0),
            wqe(2, 9, 0, 8, LA, 0x101, 0),
        ];
        let r = run(RTS_RC, mrs(), &ws);
        // New WQE: grant at n -> outputs at n+4; in progress: n+3. The
        // error completion is a new WQE too.
        let d: Vec<(u64, bool)> = r.lat.iter().map(|&(g, v, new)| (v - g, new)).collect();
        assert_eq!(d, vec![(4, true), (3, false), (3, false), (4, true)]);
    }

    #[test]
    fn rc_signaled_messages_complete_with_their_last_psn() {
        let ws = [
            wqe(1, wqe_op::SEND, 1, 700, LA, 0x101, 0), // PSNs 100..102
            wqe(2, wqe_op::READ, 1, 600, LA, 0x101, 0), // span 103..105
            wqe(3, wqe_op::WRITE_IMM, 1, 0, LA, 0x101, 0x77), // 106
            wqe(4, wqe_op::SEND, 0, 10, LA, 0x101, 0),  // 107, unsignaled
        ];
        let r = run(RTS_RC, mrs(), &ws);
        assert!(r.pkts.iter().all(|p| !p.cpl), "no RC frame is waited for");
        let c = |wr_id, opcode, len, imm, psn| CplRec {
            wait: false,
            wr_id,
            status: 0,
            opcode,
            len,
            imm,
            qp: Q,
            cq: 2,
            uc: false,
            psn,
        };
        assert_eq!(
            r.cpls,
            vec![
                c(1, 0, 700, 0, 102),
                c(2, 4, 600, 0, 105),
                c(3, 3, 0, 0x77, 106)
            ]
        );
        // Across the wrap: a READ of 4 response packets from 0xFF_FFFE.
        let mut qp = RTS_RC;
        qp.psn = 0xFF_FFFE;
        let ws = [
            wqe(5, wqe_op::READ, 1, 1000, LA, 0x101, 0),
            wqe(6, wqe_op::SEND, 1, 0, LA, 0x101, 0),
        ];
        let r = run(qp, mrs(), &ws);
        let psns: Vec<(u64, u32)> = r.cpls.iter().map(|c| (c.wr_id, c.psn)).collect();
        assert_eq!(psns, vec![(5, 1), (6, 2)]);
    }

    #[test]
    fn wire_length_of_each_header_shape() {
        let ws = [
            wqe(1, wqe_op::SEND, 0, 0, LA, 0x101, 0),
            wqe(2, wqe_op::SEND, 0, 1, LA, 0x101, 0),
            wqe(3, wqe_op::SEND_IMM, 0, 257, LA, 0x101, 0),
            wqe(4, wqe_op::WRITE, 0, 5, LA, 0x101, 0),
            wqe(5, wqe_op::READ, 0, 600, LA, 0x101, 0),
            wqe(6, wqe_op::WRITE, 0, 300, LA, 0x101, 0),
        ];
        let r = run(RTS_RC, mrs(), &ws);
        // 54 = Ethernet 14 + IPv4 20 + UDP 8 + BTH 12; ICRC 4.
        let want = vec![
            54 + 4,              // SEND ONLY, no payload
            54 + 1 + 3 + 4,      // 1 byte, 3 pad
            54 + 256 + 4,        // SEND FIRST
            54 + 4 + 1 + 3 + 4,  // SEND LAST with ImmDt
            54 + 16 + 5 + 3 + 4, // WRITE ONLY, RETH
            54 + 16 + 4,         // READ REQUEST, RETH
            54 + 16 + 256 + 4,   // WRITE FIRST
            54 + 44 + 4,         // WRITE LAST
        ];
        assert_eq!(r.wire, want);
        let mut qp = RTS_RC;
        qp.vlan = true;
        qp.ipv6 = true;
        let r = run(qp, mrs(), &[wqe(7, wqe_op::WRITE_IMM, 0, 3, LA, 0x101, 0)]);
        // Ethernet 14 + tag 4 + IPv6 40 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4
        // + 3 + 1 pad + ICRC 4.
        assert_eq!(r.wire, vec![106]);
    }

    #[test]
    fn control_grants_send_cnps() {
        // Alone: a control grant without cnp_valid does nothing; with it,
        // the CNP descriptor is visible 3 cycles after the grant.
        let r = run_ctrl(RTS_RC, mrs(), &[], &[(3, false), (6, true)]);
        assert!(r.pkts.is_empty() && r.cpls.is_empty());
        let cnp = |wire| (3, 0x81, 0, 48, 0, 6, true, 0x12345, 0, wire, false, false);
        // 54 + 16 reserved bytes + ICRC 4.
        assert_eq!(r.cnps, vec![cnp(74)]);
        let mut qp = RTS_RC;
        qp.vlan = true;
        qp.ipv6 = true;
        let r = run_ctrl(qp, mrs(), &[], &[(6, true)]);
        assert_eq!(r.cnps, vec![cnp(98)]);
        // Between the packets of a message: the message is unchanged (its
        // PSNs too: a CNP writes none back).
        let ws = [wqe(1, wqe_op::SEND, 1, 1000, LA, 0x101, 0)];
        let ctrl: Vec<(u64, bool)> = (2..60).step_by(5).map(|c| (c, true)).collect();
        let r = run_ctrl(RTS_RC, mrs(), &ws, &ctrl);
        let psns: Vec<u32> = r.pkts.iter().map(|p| p.psn).collect();
        assert_eq!(psns, vec![100, 101, 102, 103]);
        assert_eq!(r.psn, 104);
        assert!(r.cnps.len() >= 3, "{} CNPs", r.cnps.len());
        assert!(r.cnps.iter().all(|&c| c == cnp(74)));
        assert_eq!(r.cpls.len(), 1);
        assert_eq!(r.cpls[0].psn, 103);
    }

    #[test]
    fn wqe_block_stops_new_wqes_only() {
        // A grant every cycle while there is work, everything ready: grant
        // at 1 (grant_ready rises at 1 after reset) -> pop at 2, packets
        // at 5, 9, 13 (600 bytes at MTU 256), the second WQE's grant at 14.
        let ws = [
            wqe(1, wqe_op::SEND, 1, 600, LA, 0x101, 0),
            wqe(2, wqe_op::SEND, 1, 10, LA, 0x101, 0),
        ];
        let r = run_blk(RTS_RC, mrs(), &ws, &[], 0..0);
        assert_eq!((r.pops, r.pkt_at), (vec![2, 15], vec![5, 9, 13, 18]));
        // Blocked in 3..30: the message in progress goes on as before; the
        // grants of 14..29 pop nothing, the one at 30 pops (at 31).
        let r = run_blk(RTS_RC, mrs(), &ws, &[], 3..30);
        assert_eq!((r.pops, r.pkt_at), (vec![2, 31], vec![5, 9, 13, 34]));
        let psns: Vec<u32> = r.pkts.iter().map(|p| p.psn).collect();
        assert_eq!(psns, vec![100, 101, 102, 103]);
        assert_eq!(r.cpls.iter().map(|c| c.wr_id).collect::<Vec<_>>(), [1, 2]);
        // Blocked from the start: the first grant taken with the block low
        // is at 8, so everything moves by 7 cycles.
        let r = run_blk(RTS_RC, mrs(), &ws, &[], 0..8);
        assert_eq!((r.pops, r.pkt_at), (vec![9, 22], vec![12, 16, 20, 25]));
        // Blocked exactly in the cycle of the second WQE's grant (14): that
        // grant does nothing, the next one (15) pops.
        let r = run_blk(RTS_RC, mrs(), &ws, &[], 14..15);
        assert_eq!((r.pops, r.pkt_at), (vec![2, 16], vec![5, 9, 13, 19]));
    }

    #[test]
    fn longest_message_segments_and_counts_psns() {
        // 2^31 bytes at MTU 4096: 2^19 packets, FIRST .. LAST.
        let mut qp = RTS_RC;
        qp.mtu = 5;
        let mut m = mrs();
        m[1].len = 1 << 31;
        let r = run(
            qp,
            m,
            &[wqe(1, wqe_op::SEND, 0, 1 << 31, 0x1_0000, 0x101, 0)],
        );
        assert_eq!(r.pkts.len(), 1 << 19);
        assert_eq!(r.pkts[0].opcode, 0x00);
        assert!(r.pkts[1..(1 << 19) - 1]
            .iter()
            .all(|p| p.opcode == 0x01 && p.pay == 4096));
        let last = r.pkts.last().unwrap();
        assert_eq!(
            (last.opcode, last.pay, last.rd),
            (0x02, 4096, Some((0x8000_0000 + (1 << 31) - 4096, 4096)))
        );
        assert_eq!(r.psn, 100 + (1 << 19));
    }
}
