//! `responder`: the RC/UC responder, one request packet at a time. Model of
//! `hw/rtl/responder.sv` (same register names); contract: docs/responder.md,
//! "responder"; behaviour: docs/protocol.md section 7 with the choices of
//! docs/responder.md ("Responder rules this design fixes").
//!
//! Per packet: take the header (`hd_*`), read the QP context, the QP's row
//! of the state table, the MR entry the RETH's rkey selects and the QP's
//! head RECV (all registered reads issued together), decide (S_RB), for a
//! SEND check every scatter entry the payload touches against the MR table
//! (one MR read each), then give `rx_wr` the frame's segment commands (at
//! least one), then at most one token (RECV completion or READ job), and
//! finish: ACK/NAK request, QP to ERROR, RECV pop, counter pulses and the
//! row written back. With no header waiting, a QP in ERROR with a fetched
//! RECV gets it completed with status 5 (flush, round robin).

use crate::dut::Dut;
use crate::params::{cqe_status, wc_op, CQS, MRS, QPS};
use crate::ports::PortValue;
use crate::resp_tok::{ReadJob, RecvCqe, Tok, TokBits};
use crate::rr_pick::RrPick;
use crate::rx_meta::{MetaBits, RxMeta};
use crate::trace::{Bits, Trace, TraceValue, Tracer};

/// The 128 bytes of a RECV WQE: byte k at bits [8k +: 8].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct RqeBits(pub [u8; 128]);

impl Default for RqeBits {
    fn default() -> Self {
        RqeBits([0; 128])
    }
}

impl core::fmt::Debug for RqeBits {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for b in self.0.iter().rev() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl PortValue for RqeBits {
    const BITS: u32 = 1024;
    fn to_words(&self, out: &mut [u64]) {
        for (w, c) in out.iter_mut().zip(self.0.chunks_exact(8)) {
            *w = u64::from_le_bytes(c.try_into().unwrap());
        }
    }
    fn from_words(words: &[u64]) -> Self {
        let mut b = [0u8; 128];
        for (c, w) in b.chunks_exact_mut(8).zip(words) {
            c.copy_from_slice(&w.to_le_bytes());
        }
        RqeBits(b)
    }
}

crate::ports! {
    /// Inputs of `responder` (all but `clk`/`rst`).
    pub struct ResponderIn {
        pub hd_valid: bool = 1,
        pub hd_meta: MetaBits = 256 if hd_valid,
        pub ctx_state: u8 = 3,
        pub ctx_uc: bool = 1,
        pub ctx_mtu: u8 = 3,
        pub ctx_pd: u16 = 16,
        pub ctx_rq_cq: u8 = 2,
        pub ctx_rnr_timer: u8 = 5,
        pub ctx_max_rd: u8 = 3,
        pub ctx_access: u8 = 4,
        pub ctx_remote_qpn: u32 = 24,
        pub mr_valid: bool = 1,
        pub mr_key: u32 = 32,
        pub mr_va: u64 = 64,
        pub mr_len: u64 = 64,
        pub mr_pbase: u64 = 64,
        pub mr_access: u8 = 4,
        pub mr_pd: u16 = 16,
        pub rqe_present: bool = 1,
        pub rqe_data: RqeBits = 1024,
        pub rqe_avail: u16 = 16,
        pub qp_err: u16 = 16,
        pub epsn_set_valid: bool = 1,
        pub epsn_set_qp: u8 = 4 if epsn_set_valid,
        pub epsn_set_psn: u32 = 24 if epsn_set_valid,
        pub wc_ready: bool = 1,
    }
}

crate::ports! {
    /// Outputs of `responder`, all registered.
    pub struct ResponderOut {
        pub hd_ready: bool = 1,
        pub ctx_rd_valid: bool = 1,
        pub ctx_rd_qp: u8 = 4 if ctx_rd_valid,
        pub mr_rd_valid: bool = 1,
        pub mr_rd_idx: u8 = 4 if mr_rd_valid,
        pub rqe_rd_valid: bool = 1,
        pub rqe_rd_qp: u8 = 4 if rqe_rd_valid,
        pub rqe_pop_valid: bool = 1,
        pub rqe_pop_qp: u8 = 4 if rqe_pop_valid,
        pub wc_valid: bool = 1,
        pub wc_tok: bool = 1 if wc_valid,
        pub wc_off: u16 = 13 if wc_valid,
        pub wc_len: u16 = 13 if wc_valid,
        pub wc_addr: u64 = 64 if wc_valid,
        pub wc_last: bool = 1 if wc_valid,
        pub wc_tok_data: TokBits = 192 if wc_valid,
        pub ack_valid: bool = 1,
        pub ack_qp: u8 = 4 if ack_valid,
        pub ack_psn: u32 = 24 if ack_valid,
        pub ack_syndrome: u8 = 8 if ack_valid,
        pub ack_msn: u32 = 24 if ack_valid,
        pub err_valid: bool = 1,
        pub err_qp: u8 = 4 if err_valid,
        pub ev_exec: bool = 1,
        pub ev_dup: bool = 1,
        pub ev_seq_nak: bool = 1,
        pub ev_rnr_nak: bool = 1,
        pub ev_inv_nak: bool = 1,
        pub ev_acc_nak: bool = 1,
        pub ev_op_nak: bool = 1,
        pub ev_recv: bool = 1,
        pub ev_uc_drop: bool = 1,
        pub ev_notready: bool = 1,
    }
}

/// Counter pulses: bit positions of `ev_q` / `fin_ev_q`.
pub mod ev {
    pub const EXEC: u16 = 1 << 0;
    pub const DUP: u16 = 1 << 1;
    pub const SEQ_NAK: u16 = 1 << 2;
    pub const RNR_NAK: u16 = 1 << 3;
    pub const INV_NAK: u16 = 1 << 4;
    pub const ACC_NAK: u16 = 1 << 5;
    pub const OP_NAK: u16 = 1 << 6;
    pub const RECV: u16 = 1 << 7;
    pub const UC_DROP: u16 = 1 << 8;
    pub const NOTREADY: u16 = 1 << 9;
}

/// QP states of `ctx_state`.
pub mod state {
    pub const RESET: u8 = 0;
    pub const RTS: u8 = 1;
    pub const ERROR: u8 = 2;
    pub const RTR: u8 = 3;
    pub const INIT: u8 = 4;
}

/// AETH syndromes (their home: `params::aeth_syn`).
pub use crate::params::aeth_syn::{
    ACK as SYN_ACK, NAK_ACC as SYN_ACC, NAK_INV as SYN_INV, NAK_OP as SYN_OP, NAK_SEQ as SYN_SEQ,
    RNR as SYN_RNR,
};

const PSN_MASK: u32 = 0xFF_FFFF;

/// Message class of a state row.
pub const CLS_IDLE: u8 = 0;
pub const CLS_SEND: u8 = 1;
pub const CLS_WRITE: u8 = 2;

/// One scatter entry of a RECV.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sge {
    pub va: u64,
    pub len: u32,
    pub lkey: u32,
}

/// The RECV fields the responder keeps (wr_id, raw entry count, entries).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recv {
    pub wr_id: u64,
    pub nsge: u8,
    pub sge: [Sge; 4],
}

impl Recv {
    pub fn from_bytes(b: &RqeBits) -> Recv {
        let u64_at = |o: usize| u64::from_le_bytes(b.0[o..o + 8].try_into().unwrap());
        let u32_at = |o: usize| u32::from_le_bytes(b.0[o..o + 4].try_into().unwrap());
        Recv {
            wr_id: u64_at(0),
            nsge: b.0[8],
            sge: core::array::from_fn(|k| Sge {
                va: u64_at(0x10 + 16 * k),
                len: u32_at(0x18 + 16 * k),
                lkey: u32_at(0x1C + 16 * k),
            }),
        }
    }

    /// Bytes the entries in use can take (entry count at most 4).
    fn capacity(&self) -> u64 {
        self.sge[..(self.nsge.min(4) as usize)]
            .iter()
            .map(|s| s.len as u64)
            .sum()
    }
}

/// One row of the per-QP state table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Row {
    pub epsn: u32,
    pub msn: u32,
    pub nak_sent: bool,
    pub uc_drop: bool,
    pub cls: u8,
    /// WRITE: next bus address, bytes still due, the RETH's length.
    pub waddr: u64,
    pub wleft: u32,
    pub wtotal: u32,
    /// SEND: bytes placed so far (34 bits) and the RECV being filled.
    pub placed: u64,
    pub recv: Recv,
}

/// FSM states.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum St {
    #[default]
    Idle,
    /// Reads on the ports.
    Ra,
    /// Read data valid: decide.
    Rb,
    /// Scatter check: next entry.
    Sge,
    /// Scatter check: MR read on the port.
    Sgw,
    /// Scatter check: MR data valid.
    Sgc,
    /// Segment commands.
    Seg,
    /// The token.
    Tok,
    /// Pulses and the row write.
    Fin,
    /// Flush: reads on the ports.
    Fa,
    /// Flush: data valid.
    Fb,
}

/// The responder. Field names are the RTL's registers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Responder {
    state_q: St,
    hd_ready_q: bool,
    m_q: RxMeta,
    fl_qp_q: u8,
    row_mem_q: [Row; QPS],
    row_q: Row,
    epsn_pend_q: bool,
    epsn_pqp_q: u8,
    epsn_ppsn_q: u32,
    ctx_rd_valid_q: bool,
    ctx_rd_qp_q: u8,
    mr_rd_valid_q: bool,
    mr_rd_idx_q: u8,
    rqe_rd_valid_q: bool,
    rqe_rd_qp_q: u8,
    // Latched context (for the scatter check and its failure).
    c_uc_q: bool,
    c_pd_q: u16,
    c_cq_q: u8,
    c_rqpn_q: u32,
    cur_q: Recv,
    // Scatter walk.
    k_q: u8,
    off_q: u64,
    rest_q: u16,
    pos_q: u16,
    // The packet's outcome.
    seg_n_q: u8,
    seg_i_q: u8,
    seg_off_q: [u16; 4],
    seg_len_q: [u16; 4],
    seg_addr_q: [u64; 4],
    tok_v_q: bool,
    tok_q: TokBits,
    fin_ack_q: bool,
    fin_psn_q: u32,
    fin_syn_q: u8,
    fin_msn_q: u32,
    fin_err_q: bool,
    fin_pop_q: bool,
    fin_we_q: bool,
    fin_ev_q: u16,
    row_n_q: Row,
    fl_q: bool,
    // Output registers.
    wc_valid_q: bool,
    wc_tok_q: bool,
    wc_off_q: u16,
    wc_len_q: u16,
    wc_addr_q: u64,
    wc_last_q: bool,
    wc_tok_data_q: TokBits,
    ack_valid_q: bool,
    ack_qp_q: u8,
    ack_psn_q: u32,
    ack_syndrome_q: u8,
    ack_msn_q: u32,
    err_valid_q: bool,
    err_qp_q: u8,
    rqe_pop_valid_q: bool,
    rqe_pop_qp_q: u8,
    ev_q: u16,
    /// The flush round robin (`hw/rtl/rr_pick.sv`, instance `u_rr`).
    u_rr: RrPick<QPS>,
}

/// Bytes of an MTU code (tx_datapath.md): 0, 1 -> 256 .. 5, 6, 7 -> 4096.
pub fn mtu_log(code: u8) -> u32 {
    match code & 7 {
        0 | 1 => 8,
        c @ 2..=4 => 7 + c as u32,
        _ => 12,
    }
}

/// [va, va + len) inside [mr_va, mr_va + mr_len), 65-bit arithmetic.
fn inside(va: u64, len: u64, mr_va: u64, mr_len: u64) -> bool {
    va >= mr_va && va as u128 + len as u128 <= mr_va as u128 + mr_len as u128
}

/// (send, write, read) class, first, last-or-only end, immediate, valid.
struct Dec {
    valid: bool,
    send: bool,
    write: bool,
    read: bool,
    starts: bool,
    ends: bool,
    imm: bool,
}

fn decode(opcode: u8) -> Dec {
    let low = opcode & 0x1F;
    let read = opcode == 0x0C;
    let valid = low <= 0x0B || read;
    let (starts, ends) = match low {
        0x00 | 0x06 => (true, false),
        0x01 | 0x07 => (false, false),
        0x02 | 0x03 | 0x08 | 0x09 => (false, true),
        _ => (true, true), // ONLY (and READ)
    };
    Dec {
        valid,
        send: valid && low <= 0x05,
        write: valid && (0x06..=0x0B).contains(&low),
        read,
        starts,
        ends,
        imm: matches!(low, 0x03 | 0x05 | 0x09 | 0x0B),
    }
}

impl Responder {
    pub fn new() -> Self {
        Self::default()
    }

    fn outputs(&self) -> ResponderOut {
        let e = |b: u16| self.ev_q & b != 0;
        ResponderOut {
            hd_ready: self.hd_ready_q,
            ctx_rd_valid: self.ctx_rd_valid_q,
            ctx_rd_qp: self.ctx_rd_qp_q,
            mr_rd_valid: self.mr_rd_valid_q,
            mr_rd_idx: self.mr_rd_idx_q,
            rqe_rd_valid: self.rqe_rd_valid_q,
            rqe_rd_qp: self.rqe_rd_qp_q,
            rqe_pop_valid: self.rqe_pop_valid_q,
            rqe_pop_qp: self.rqe_pop_qp_q,
            wc_valid: self.wc_valid_q,
            wc_tok: self.wc_tok_q,
            wc_off: self.wc_off_q,
            wc_len: self.wc_len_q,
            wc_addr: self.wc_addr_q,
            wc_last: self.wc_last_q,
            wc_tok_data: self.wc_tok_data_q,
            ack_valid: self.ack_valid_q,
            ack_qp: self.ack_qp_q,
            ack_psn: self.ack_psn_q,
            ack_syndrome: self.ack_syndrome_q,
            ack_msn: self.ack_msn_q,
            err_valid: self.err_valid_q,
            err_qp: self.err_qp_q,
            ev_exec: e(ev::EXEC),
            ev_dup: e(ev::DUP),
            ev_seq_nak: e(ev::SEQ_NAK),
            ev_rnr_nak: e(ev::RNR_NAK),
            ev_inv_nak: e(ev::INV_NAK),
            ev_acc_nak: e(ev::ACC_NAK),
            ev_op_nak: e(ev::OP_NAK),
            ev_recv: e(ev::RECV),
            ev_uc_drop: e(ev::UC_DROP),
            ev_notready: e(ev::NOTREADY),
        }
    }

    fn cqe(
        &self,
        (cq, rqpn): (u8, u32),
        r: &Recv,
        status: u8,
        opcode: u8,
        len: u32,
        imm: Option<u32>,
    ) -> TokBits {
        Tok::Cqe(RecvCqe {
            qp: self.m_q.qp,
            cq,
            wr_id: r.wr_id,
            status,
            opcode,
            byte_len: len,
            imm: imm.unwrap_or(0),
            imm_present: imm.is_some(),
            src_qp: rqpn & PSN_MASK,
        })
        .pack()
    }

    /// The row a UC packet leaves when it drops the rest of its message.
    fn uc_drop_row(r: &Row, psn: u32) -> Row {
        Row {
            epsn: (psn + 1) & PSN_MASK,
            uc_drop: true,
            cls: CLS_IDLE,
            ..*r
        }
    }

    /// The decision (state S_RB): read data on the inputs.
    fn decide(&mut self, i: &ResponderIn) {
        let m = self.m_q;
        let r = self.row_q;
        let d = decode(m.opcode);
        let psn = m.psn & PSN_MASK;
        let uc = i.ctx_uc;
        let len = m.pay_len as u64;
        let mtul = mtu_log(i.ctx_mtu);
        let mtu = 1u64 << mtul;
        let head = Recv::from_bytes(&i.rqe_data);
        let cur = if d.starts { head } else { r.recv };
        let cq = i.ctx_rq_cq % CQS as u8;
        let rqpn = i.ctx_remote_qpn & PSN_MASK;
        // Defaults: nothing but the one empty command.
        self.c_uc_q = uc;
        self.c_pd_q = i.ctx_pd;
        self.c_cq_q = cq;
        self.c_rqpn_q = rqpn;
        self.cur_q = cur;
        self.seg_n_q = 0;
        self.seg_i_q = 0;
        self.tok_v_q = false;
        self.fin_ack_q = false;
        self.fin_psn_q = 0;
        self.fin_syn_q = 0;
        self.fin_msn_q = 0;
        self.fin_err_q = false;
        self.fin_pop_q = false;
        self.fin_we_q = false;
        self.fin_ev_q = 0;
        self.row_n_q = r;
        self.k_q = 0;
        self.off_q = 0;
        self.rest_q = 0;
        self.pos_q = 0;
        let mut go_sge = false;

        let ready = i.ctx_state == state::RTR || i.ctx_state == state::RTS;
        if !ready {
            self.fin_ev_q = ev::NOTREADY;
            self.state_q = St::Seg;
            return;
        }
        self.fin_we_q = true;
        let delta = psn.wrapping_sub(r.epsn) & PSN_MASK;
        let mut row = r;
        // Outcome pieces.
        let mut nak: Option<(u32, u8, u16)> = None; // psn, syndrome, counter
        let mut fail = false; // UC: drop the rest of the message
        let mut exec = false;

        // The rkey check of a WRITE FIRST/ONLY or READ: (ok, bus address).
        let key_ok = |right: u8| -> (bool, u64) {
            if m.dma_len == 0 {
                return (true, 0);
            }
            let ok = i.mr_valid
                && i.mr_key == m.rkey
                && i.ctx_access & right != 0
                && i.mr_pd == i.ctx_pd
                && i.mr_access & right != 0
                && inside(m.va, m.dma_len as u64, i.mr_va, i.mr_len);
            (ok, i.mr_pbase.wrapping_add(m.va.wrapping_sub(i.mr_va)))
        };
        let order_ok = |cls: u8| -> bool {
            let in_cls = match (d.send, d.write) {
                (true, _) => CLS_SEND,
                (_, true) => CLS_WRITE,
                _ => 3,
            };
            let order = if d.starts {
                cls == CLS_IDLE
            } else {
                cls == in_cls
            };
            let len_ok = match (d.starts, d.ends) {
                (_, false) => len == mtu,
                (false, true) => len >= 1 && len <= mtu,
                (true, true) => len <= mtu,
            };
            order && len_ok
        };
        let needs_recv = (d.send && d.starts) || (d.write && d.ends && d.imm);
        let imm = if d.imm { Some(m.imm) } else { None };

        if !d.valid {
            if uc {
                // Dropped before the PSN is looked at: ePSN stays.
                row.uc_drop = true;
                row.cls = CLS_IDLE;
                self.fin_ev_q = ev::UC_DROP;
            } else {
                nak = Some((psn, SYN_INV, ev::INV_NAK));
            }
        } else if !uc && delta != 0 && delta < 1 << 23 {
            if !r.nak_sent {
                row.nak_sent = true;
                nak = Some((r.epsn, SYN_SEQ, ev::SEQ_NAK));
            }
        } else if !uc && delta != 0 {
            self.fin_ev_q |= ev::DUP;
            if d.read {
                let (ok, addr) = key_ok(4);
                if !m.has_reth || len != 0 {
                    nak = Some((psn, SYN_INV, ev::INV_NAK));
                } else if !ok {
                    nak = Some((psn, SYN_ACC, ev::ACC_NAK));
                } else {
                    self.tok_v_q = true;
                    self.tok_q = self.read_job(psn, addr, r.msn, i.ctx_mtu, i.ctx_max_rd);
                }
            } else {
                self.fin_ack_q = true;
                self.fin_psn_q = r.epsn.wrapping_sub(1) & PSN_MASK;
                self.fin_syn_q = SYN_ACK;
                self.fin_msn_q = r.msn;
            }
        } else {
            // RC in order, or UC.
            let mut go = true;
            if uc {
                if d.starts {
                    row.uc_drop = false;
                    row.cls = CLS_IDLE;
                } else if delta != 0 || r.uc_drop {
                    row = Self::uc_drop_row(&r, psn);
                    self.fin_ev_q = ev::UC_DROP;
                    go = false;
                }
                row.epsn = (psn + 1) & PSN_MASK;
            } else {
                row.nak_sent = false;
            }
            if go {
                if d.read {
                    let (ok, addr) = key_ok(4);
                    if uc {
                        fail = true;
                    } else if row.cls != CLS_IDLE || !m.has_reth || len != 0 {
                        nak = Some((psn, SYN_INV, ev::INV_NAK));
                    } else if !ok {
                        nak = Some((psn, SYN_ACC, ev::ACC_NAK));
                    } else {
                        let n = ((m.dma_len as u64 + mtu - 1) >> mtul).max(1) as u32;
                        row.msn = (r.msn + 1) & PSN_MASK;
                        row.epsn = (psn + n) & PSN_MASK;
                        self.tok_v_q = true;
                        self.tok_q = self.read_job(psn, addr, row.msn, i.ctx_mtu, i.ctx_max_rd);
                        self.fin_ev_q = ev::EXEC;
                    }
                } else if !order_ok(row.cls) {
                    if uc {
                        fail = true;
                    } else {
                        nak = Some((psn, SYN_INV, ev::INV_NAK));
                    }
                } else if needs_recv && !i.rqe_present {
                    if uc {
                        fail = true;
                    } else {
                        nak = Some((psn, SYN_RNR | (i.ctx_rnr_timer & 0x1F), ev::RNR_NAK));
                    }
                } else if d.send {
                    self.fin_pop_q = d.starts;
                    let placed = if d.starts { 0 } else { r.placed };
                    let total = placed + len;
                    if cur.nsge > 4 {
                        self.tok_v_q = true;
                        self.tok_q = self.cqe(
                            (cq, rqpn),
                            &cur,
                            cqe_status::LOC_QP_OP_ERR,
                            wc_op::RECV,
                            0,
                            None,
                        );
                        fail = uc;
                        if !uc {
                            nak = Some((psn, SYN_OP, ev::OP_NAK));
                        }
                    } else if total > cur.capacity() {
                        self.tok_v_q = true;
                        self.tok_q = self.cqe(
                            (cq, rqpn),
                            &cur,
                            cqe_status::LOC_LEN_ERR,
                            wc_op::RECV,
                            0,
                            None,
                        );
                        fail = uc;
                        if !uc {
                            nak = Some((psn, SYN_INV, ev::INV_NAK));
                        }
                    } else {
                        exec = true;
                        row.cls = if d.ends { CLS_IDLE } else { CLS_SEND };
                        row.placed = total;
                        row.recv = cur;
                        if d.ends {
                            self.tok_v_q = true;
                            self.tok_q = self.cqe(
                                (cq, rqpn),
                                &cur,
                                cqe_status::SUCCESS,
                                wc_op::RECV,
                                total as u32,
                                imm,
                            );
                        }
                        go_sge = len > 0;
                        self.off_q = placed;
                        self.rest_q = m.pay_len;
                    }
                } else {
                    // WRITE
                    let (ok, base) = key_ok(2);
                    if d.starts && !m.has_reth {
                        if uc {
                            fail = true;
                        } else {
                            nak = Some((psn, SYN_INV, ev::INV_NAK));
                        }
                    } else if d.starts && !ok {
                        if uc {
                            fail = true;
                        } else {
                            nak = Some((psn, SYN_ACC, ev::ACC_NAK));
                        }
                    } else {
                        let (addr, left, total) = if d.starts {
                            (base, m.dma_len, m.dma_len)
                        } else {
                            (r.waddr, r.wleft, r.wtotal)
                        };
                        if len > left as u64 || (d.ends && len != left as u64) {
                            if uc {
                                fail = true;
                            } else {
                                nak = Some((psn, SYN_INV, ev::INV_NAK));
                            }
                        } else {
                            exec = true;
                            if len > 0 {
                                self.seg_n_q = 1;
                                self.seg_off_q[0] = m.hdr_len as u16;
                                self.seg_len_q[0] = m.pay_len;
                                self.seg_addr_q[0] = addr;
                            }
                            row.cls = if d.ends { CLS_IDLE } else { CLS_WRITE };
                            row.waddr = addr.wrapping_add(len);
                            row.wleft = left - len as u32;
                            row.wtotal = total;
                            if d.ends && d.imm {
                                self.fin_pop_q = true;
                                self.tok_v_q = true;
                                self.tok_q = self.cqe(
                                    (cq, rqpn),
                                    &head,
                                    cqe_status::SUCCESS,
                                    wc_op::RECV_RDMA_WITH_IMM,
                                    total,
                                    imm,
                                );
                            }
                        }
                    }
                }
            }
        }
        if exec {
            self.fin_ev_q = ev::EXEC;
            if !uc {
                row.epsn = (psn + 1) & PSN_MASK;
                if d.ends {
                    row.msn = (r.msn + 1) & PSN_MASK;
                }
                if m.ack_req || d.ends {
                    self.fin_ack_q = true;
                    self.fin_psn_q = psn;
                    self.fin_syn_q = SYN_ACK;
                    self.fin_msn_q = row.msn;
                }
            }
        }
        if let Some((p, syn, e)) = nak {
            self.fin_ack_q = true;
            self.fin_psn_q = p;
            self.fin_syn_q = syn;
            self.fin_msn_q = r.msn;
            self.fin_err_q = syn != SYN_SEQ && syn & 0xE0 != SYN_RNR;
            self.fin_ev_q |= e;
        }
        if fail {
            row = Self::uc_drop_row(&r, psn);
            self.fin_ev_q = ev::UC_DROP;
        }
        self.row_n_q = row;
        self.state_q = if go_sge { St::Sge } else { St::Seg };
    }

    fn read_job(&self, psn: u32, addr: u64, msn: u32, mtu: u8, max_rd: u8) -> TokBits {
        Tok::Read(ReadJob {
            qp: self.m_q.qp,
            psn,
            addr,
            len: self.m_q.dma_len,
            msn,
            mtu: mtu & 7,
            max_rd: max_rd & 7,
        })
        .pack()
    }

    /// The scatter check failed on an entry: no segment, a completion with
    /// status 4, a remote operational NAK (RC) or the UC drop.
    fn sge_fail(&mut self) {
        let m = self.m_q;
        let psn = m.psn & PSN_MASK;
        let r = self.row_q;
        self.seg_n_q = 0;
        self.tok_v_q = true;
        self.tok_q = self.cqe(
            (self.c_cq_q, self.c_rqpn_q),
            &self.cur_q,
            cqe_status::LOC_PROT_ERR,
            wc_op::RECV,
            0,
            None,
        );
        if self.c_uc_q {
            self.fin_ack_q = false;
            self.fin_err_q = false;
            self.fin_ev_q = ev::UC_DROP;
            self.row_n_q = Self::uc_drop_row(&r, psn);
        } else {
            self.fin_ack_q = true;
            self.fin_psn_q = psn;
            self.fin_syn_q = SYN_OP;
            self.fin_msn_q = r.msn;
            self.fin_err_q = true;
            self.fin_ev_q = ev::OP_NAK;
            self.row_n_q = Row {
                nak_sent: false,
                ..r
            };
        }
    }
}

impl Dut for Responder {
    type In = ResponderIn;
    type Out = ResponderOut;
    const NAME: &'static str = "responder";

    fn reset(&mut self) -> ResponderOut {
        *self = Responder::default();
        self.hd_ready_q = true;
        self.outputs()
    }

    fn tick(&mut self, i: &ResponderIn) -> ResponderOut {
        let q = |x: u8| x % QPS as u8;
        let wc_free = !self.wc_valid_q || i.wc_ready;
        if wc_free {
            self.wc_valid_q = false;
        }
        // Pulses last one cycle.
        self.ack_valid_q = false;
        self.err_valid_q = false;
        self.rqe_pop_valid_q = false;
        self.ev_q = 0;
        let mut ctx_rd = false;
        let mut mr_rd = false;
        let mut rqe_rd = false;
        let fin_we = self.state_q == St::Fin && self.fin_we_q;
        let fin_qp = q(self.m_q.qp) as usize;
        let fin_row = self.row_n_q;

        // The flush picker runs every cycle; it moves past a flushed QP in Fa.
        let flushable = i.qp_err & i.rqe_avail;
        let pick = self.u_rr.tick(
            |p| flushable >> p & 1 != 0,
            self.state_q == St::Fa,
            self.fl_qp_q,
        );

        match self.state_q {
            St::Idle => {
                if i.hd_valid && self.hd_ready_q {
                    let m = RxMeta::unpack(&i.hd_meta);
                    self.m_q = m;
                    self.row_q = self.row_mem_q[q(m.qp) as usize];
                    self.ctx_rd_qp_q = q(m.qp);
                    self.rqe_rd_qp_q = q(m.qp);
                    self.mr_rd_idx_q = (m.rkey % MRS as u32) as u8;
                    ctx_rd = true;
                    mr_rd = true;
                    rqe_rd = true;
                    self.hd_ready_q = false;
                    self.fl_q = false;
                    self.state_q = St::Ra;
                } else if !i.hd_valid {
                    if let Some(p) = pick {
                        self.fl_qp_q = p;
                        self.ctx_rd_qp_q = p;
                        self.rqe_rd_qp_q = p;
                        ctx_rd = true;
                        rqe_rd = true;
                        self.hd_ready_q = false;
                        self.fl_q = true;
                        self.state_q = St::Fa;
                    }
                }
            }
            St::Ra => self.state_q = St::Rb,
            St::Rb => self.decide(i),
            St::Sge => {
                let k = self.k_q as usize;
                let s = self.cur_q.sge[k & 3];
                if self.off_q >= s.len as u64 {
                    self.off_q -= s.len as u64;
                    self.k_q += 1;
                } else {
                    self.mr_rd_idx_q = (s.lkey % MRS as u32) as u8;
                    mr_rd = true;
                    self.state_q = St::Sgw;
                }
            }
            St::Sgw => self.state_q = St::Sgc,
            St::Sgc => {
                let k = self.k_q as usize;
                let s = self.cur_q.sge[k & 3];
                let ok = i.mr_valid
                    && i.mr_key == s.lkey
                    && i.mr_pd == self.c_pd_q
                    && i.mr_access & 1 != 0
                    && inside(s.va, s.len as u64, i.mr_va, i.mr_len);
                if !ok {
                    self.sge_fail();
                    self.state_q = St::Seg;
                } else {
                    let avail = s.len as u64 - self.off_q;
                    let n = avail.min(self.rest_q as u64) as u16;
                    let j = self.seg_n_q as usize & 3;
                    self.seg_off_q[j] = self.m_q.hdr_len as u16 + self.pos_q;
                    self.seg_len_q[j] = n;
                    self.seg_addr_q[j] = i
                        .mr_pbase
                        .wrapping_add(s.va.wrapping_sub(i.mr_va))
                        .wrapping_add(self.off_q);
                    self.seg_n_q += 1;
                    self.pos_q += n;
                    self.rest_q -= n;
                    self.off_q = 0;
                    self.k_q += 1;
                    self.state_q = if self.rest_q == 0 { St::Seg } else { St::Sge };
                }
            }
            St::Seg => {
                if wc_free {
                    let j = self.seg_i_q as usize & 3;
                    let last = self.seg_n_q == 0 || self.seg_i_q + 1 == self.seg_n_q;
                    self.wc_valid_q = true;
                    self.wc_tok_q = false;
                    self.wc_off_q = if self.seg_n_q == 0 {
                        self.m_q.hdr_len as u16
                    } else {
                        self.seg_off_q[j]
                    };
                    self.wc_len_q = if self.seg_n_q == 0 {
                        0
                    } else {
                        self.seg_len_q[j]
                    };
                    self.wc_addr_q = if self.seg_n_q == 0 {
                        0
                    } else {
                        self.seg_addr_q[j]
                    };
                    self.wc_last_q = last;
                    self.wc_tok_data_q = TokBits::default();
                    self.seg_i_q += 1;
                    if last {
                        self.state_q = if self.tok_v_q { St::Tok } else { St::Fin };
                    }
                }
            }
            St::Tok => {
                if wc_free {
                    self.wc_valid_q = true;
                    self.wc_tok_q = true;
                    self.wc_off_q = 0;
                    self.wc_len_q = 0;
                    self.wc_addr_q = 0;
                    self.wc_last_q = false;
                    self.wc_tok_data_q = self.tok_q;
                    self.state_q = St::Fin;
                }
            }
            St::Fin => {
                let qp = if self.fl_q {
                    self.fl_qp_q
                } else {
                    q(self.m_q.qp)
                };
                self.ack_valid_q = self.fin_ack_q;
                self.ack_qp_q = qp;
                self.ack_psn_q = self.fin_psn_q;
                self.ack_syndrome_q = self.fin_syn_q;
                self.ack_msn_q = self.fin_msn_q;
                self.err_valid_q = self.fin_err_q;
                self.err_qp_q = qp;
                self.rqe_pop_valid_q = self.fin_pop_q;
                self.rqe_pop_qp_q = qp;
                self.ev_q = self.fin_ev_q | if self.fin_pop_q { ev::RECV } else { 0 };
                self.hd_ready_q = true;
                self.state_q = St::Idle;
            }
            St::Fa => self.state_q = St::Fb,
            St::Fb => {
                self.fin_ack_q = false;
                self.fin_err_q = false;
                self.fin_we_q = false;
                self.fin_ev_q = 0;
                self.fin_pop_q = i.rqe_present;
                self.tok_v_q = i.rqe_present;
                let r = Recv::from_bytes(&i.rqe_data);
                self.tok_q = Tok::Cqe(RecvCqe {
                    qp: self.fl_qp_q,
                    cq: i.ctx_rq_cq % CQS as u8,
                    wr_id: r.wr_id,
                    status: cqe_status::WR_FLUSH_ERR,
                    opcode: wc_op::RECV,
                    byte_len: 0,
                    imm: 0,
                    imm_present: false,
                    src_qp: i.ctx_remote_qpn & PSN_MASK,
                })
                .pack();
                self.state_q = if i.rqe_present { St::Tok } else { St::Fin };
            }
        }
        // Row table write port: a packet's row, else an EPSN write.

        if fin_we {
            self.row_mem_q[fin_qp] = fin_row;
            if i.epsn_set_valid {
                self.epsn_pend_q = true;
                self.epsn_pqp_q = q(i.epsn_set_qp);
                self.epsn_ppsn_q = i.epsn_set_psn & PSN_MASK;
            }
        } else if self.epsn_pend_q || i.epsn_set_valid {
            let (qp, psn) = if self.epsn_pend_q {
                (self.epsn_pqp_q, self.epsn_ppsn_q)
            } else {
                (q(i.epsn_set_qp), i.epsn_set_psn & PSN_MASK)
            };
            self.row_mem_q[qp as usize] = Row {
                epsn: psn,
                ..Row::default()
            };
            self.epsn_pend_q = self.epsn_pend_q && i.epsn_set_valid;
            self.epsn_pqp_q = q(i.epsn_set_qp);
            self.epsn_ppsn_q = i.epsn_set_psn & PSN_MASK;
        }

        self.ctx_rd_valid_q = ctx_rd;
        self.mr_rd_valid_q = mr_rd;
        self.rqe_rd_valid_q = rqe_rd;
        self.outputs()
    }
}

/// Bits of a RECV as the RTL keeps it (`RCV_W`).
const RCV_W: u32 = 72 + 4 * 128;
/// Bits of a state row (`ROW_W`): the fields below `R_RECV`, then the RECV.
const ROW_W: u32 = 214 + RCV_W;

impl TraceValue for Recv {
    /// wr_id 63:0, entry count 71:64, entry k at 72 + 128k (VA, length,
    /// lkey from the low bits up).
    fn put(&self, _w: u32, b: &mut Bits) {
        b.push(self.wr_id, 64);
        b.push(self.nsge as u64, 8);
        for s in &self.sge {
            b.push(s.va, 64);
            b.push(s.len as u64, 32);
            b.push(s.lkey as u64, 32);
        }
    }
}

impl TraceValue for Row {
    /// The RTL's `R_*` offsets: EPSN 0, MSN 24, NAK 48, UCD 49, CLS 50,
    /// WADDR 52, WLEFT 116, WTOTAL 148, PLACED 180, RECV 214.
    fn put(&self, _w: u32, b: &mut Bits) {
        b.push(self.epsn as u64, 24);
        b.push(self.msn as u64, 24);
        b.push(self.nak_sent as u64, 1);
        b.push(self.uc_drop as u64, 1);
        b.push(self.cls as u64, 2);
        b.push(self.waddr, 64);
        b.push(self.wleft as u64, 32);
        b.push(self.wtotal as u64, 32);
        b.push(self.placed, 34);
        self.recv.put(RCV_W, b);
    }
}

impl Trace for Responder {
    /// The RTL's registers in its declaration order (`state_q` is the
    /// `state_e` encoding, S_IDLE = 0 in the order of [`St`]).
    fn trace(&self, t: &mut dyn Tracer) {
        let (qpw, mrw, cqw) = (
            QPS.trailing_zeros(),
            MRS.trailing_zeros(),
            CQS.trailing_zeros(),
        );
        t.reg("state_q", 4, &(self.state_q as u8));
        t.reg("hd_ready_q", 1, &self.hd_ready_q);
        t.reg("m_q", 256, &self.m_q.pack());
        t.reg("fl_qp_q", qpw, &self.fl_qp_q);
        t.reg("fl_q", 1, &self.fl_q);
        t.each("row_mem_q", ROW_W, &self.row_mem_q);
        t.reg("row_q", ROW_W, &self.row_q);
        t.reg("epsn_pend_q", 1, &self.epsn_pend_q);
        t.reg("epsn_pqp_q", qpw, &self.epsn_pqp_q);
        t.reg("epsn_ppsn_q", 24, &self.epsn_ppsn_q);
        t.reg("ctx_rd_valid_q", 1, &self.ctx_rd_valid_q);
        t.reg("ctx_rd_qp_q", qpw, &self.ctx_rd_qp_q);
        t.reg("mr_rd_valid_q", 1, &self.mr_rd_valid_q);
        t.reg("mr_rd_idx_q", mrw, &self.mr_rd_idx_q);
        t.reg("rqe_rd_valid_q", 1, &self.rqe_rd_valid_q);
        t.reg("rqe_rd_qp_q", qpw, &self.rqe_rd_qp_q);
        t.reg("c_uc_q", 1, &self.c_uc_q);
        t.reg("c_pd_q", 16, &self.c_pd_q);
        t.reg("c_cq_q", cqw, &self.c_cq_q);
        t.reg("c_rqpn_q", 24, &self.c_rqpn_q);
        t.reg("cur_q", RCV_W, &self.cur_q);
        t.reg("k_q", 3, &self.k_q);
        t.reg("off_q", 34, &self.off_q);
        t.reg("rest_q", 13, &self.rest_q);
        t.reg("pos_q", 13, &self.pos_q);
        t.reg("seg_n_q", 3, &self.seg_n_q);
        t.reg("seg_i_q", 3, &self.seg_i_q);
        t.reg("seg_off_q", 4 * 13, &self.seg_off_q);
        t.reg("seg_len_q", 4 * 13, &self.seg_len_q);
        t.reg("seg_addr_q", 4 * 64, &self.seg_addr_q);
        t.reg("tok_v_q", 1, &self.tok_v_q);
        t.reg("tok_q", 192, &self.tok_q);
        t.reg("fin_ack_q", 1, &self.fin_ack_q);
        t.reg("fin_psn_q", 24, &self.fin_psn_q);
        t.reg("fin_syn_q", 8, &self.fin_syn_q);
        t.reg("fin_msn_q", 24, &self.fin_msn_q);
        t.reg("fin_err_q", 1, &self.fin_err_q);
        t.reg("fin_pop_q", 1, &self.fin_pop_q);
        t.reg("fin_we_q", 1, &self.fin_we_q);
        t.reg("fin_ev_q", 10, &self.fin_ev_q);
        t.reg("row_n_q", ROW_W, &self.row_n_q);
        t.reg("wc_valid_q", 1, &self.wc_valid_q);
        t.reg("wc_tok_q", 1, &self.wc_tok_q);
        t.reg("wc_off_q", 13, &self.wc_off_q);
        t.reg("wc_len_q", 13, &self.wc_len_q);
        t.reg("wc_addr_q", 64, &self.wc_addr_q);
        t.reg("wc_last_q", 1, &self.wc_last_q);
        t.reg("wc_tok_data_q", 192, &self.wc_tok_data_q);
        t.reg("ack_valid_q", 1, &self.ack_valid_q);
        t.reg("ack_qp_q", qpw, &self.ack_qp_q);
        t.reg("ack_psn_q", 24, &self.ack_psn_q);
        t.reg("ack_syndrome_q", 8, &self.ack_syndrome_q);
        t.reg("ack_msn_q", 24, &self.ack_msn_q);
        t.reg("err_valid_q", 1, &self.err_valid_q);
        t.reg("err_qp_q", qpw, &self.err_qp_q);
        t.reg("rqe_pop_valid_q", 1, &self.rqe_pop_valid_q);
        t.reg("rqe_pop_qp_q", qpw, &self.rqe_pop_qp_q);
        t.reg("ev_q", 10, &self.ev_q);
        t.push("u_rr");
        self.u_rr.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests;
