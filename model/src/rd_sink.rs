//! `rd_sink`: the requester's READ response receiver. Model of
//! `hw/rtl/rd_sink.sv` (default parameters, same register names); contract:
//! docs/rd_sink.md.
//!
//! tx_engine pushes every READ it commits (`rr_*`: first PSN, length, local
//! bus address, MTU code) onto its QP's ring of [`DEPTH`] outstanding READs;
//! a push into a full ring is refused and counted (`ev_rr_full`). A clear
//! (`clr_*`) empties a QP's ring and progress. Each READ RESPONSE header
//! from rx_buf (`hd_*`, rx_meta layout) is decided against its QP's oldest
//! READ H and k, the responses of H accepted so far: no READ, PSN, opcode
//! order, AETH, payload length, in that order; an accepted response gives
//! `rx_wr` one command (its payload to `addr + k MTU`), a dropped one the
//! empty command, and H's last response is followed by a READ done token
//! (`resp_tok::tok_rdone`) and pops H. Past H's first response a
//! re-request's answer is accepted too (a FIRST where a MIDDLE is due, an
//! ONLY where a LAST is). A response ahead of H's next PSN reports that PSN
//! on `gap_*`, once per episode of its QP (`gp_q`), until a response of the
//! QP is accepted or the QP is cleared. Every response accepted but a
//! READ's last reports its PSN on `prog_*` (an implicit ACK: ack_tracker's
//! una moves past it, so a local ACK timeout asks for the rest of the READ).
//!
//! Storage as the RTL: the ring in a RAM of QPS x DEPTH rows, k in a RAM of
//! QPS rows, both read (registered) when a header is taken; per QP in flops
//! the ring head, count, `kz` (k reads as zero), `rr_block` and `gp`.
//!
//! Cycles (header taken at n): S_DEC at n+1 decides and commits, the
//! counter pulse (and a gap pulse) at n+2, S_CMD at n+2 loads the command
//! (on `wc_*` from n+3), S_TOK the token after it; `hd_ready` rises with
//! the last one.

use crate::dut::Dut;
use crate::params::{bth_op, QPS};
use crate::ports;
use crate::resp_tok::{tok_rdone, TokBits};
use crate::rx_meta::{MetaBits, RxMeta};
use crate::trace::{Bits, Trace, TraceValue, Tracer};
use crate::tx_engine::mtu_bytes;

/// Outstanding READs kept per QP (`DEPTH`).
pub const DEPTH: usize = 8;

const PSN_MASK: u32 = 0xFF_FFFF;
/// k is 24 bits: a READ has at most 2^24 responses (2^32 - 1 bytes at 256).
const K_MASK: u32 = 0xFF_FFFF;

/// READ RESPONSE opcodes: FIRST, MIDDLE, LAST, ONLY (0x0D..0x10).
pub const OP_FIRST: u8 = bth_op::RC_RD_RESP_FIRST;
pub const OP_MIDDLE: u8 = bth_op::RC_RD_RESP_FIRST + 1;
pub const OP_LAST: u8 = bth_op::RC_RD_RESP_FIRST + 2;
pub const OP_ONLY: u8 = bth_op::RC_RD_RESP_ONLY;

ports! {
    /// Inputs of `rd_sink` (all but `clk`/`rst`).
    pub struct RdSinkIn {
        /// A READ committed by tx_engine (pulse).
        pub rr_valid: bool = 1,
        pub rr_qp: u8 = 4 if rr_valid,
        pub rr_psn: u32 = 24 if rr_valid,
        pub rr_len: u32 = 32 if rr_valid,
        pub rr_addr: u64 = 64 if rr_valid,
        pub rr_mtu: u8 = 3 if rr_valid,
        /// The QP's CTRL.MAX_RD (max_rd_atomic) at the READ's commit.
        pub rr_max: u8 = 3 if rr_valid,
        /// Empty a QP's ring and progress (pulse).
        pub clr_valid: bool = 1,
        pub clr_qp: u8 = 4 if clr_valid,
        /// A READ RESPONSE header (rx_meta layout), held until taken.
        pub hd_valid: bool = 1,
        pub hd_meta: MetaBits = 256 if hd_valid,
        pub wc_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `rd_sink`, all registered.
    pub struct RdSinkOut {
        pub hd_ready: bool = 1,
        /// Bit q: QP q has max(1, max_rd_atomic) READs outstanding, or
        /// DEPTH: it may start no new WQE (`tx_engine`'s `wqe_block`).
        pub rr_block: u16 = 16,
        pub wc_valid: bool = 1,
        pub wc_tok: bool = 1 if wc_valid,
        pub wc_off: u16 = 13 if wc_valid,
        pub wc_len: u16 = 13 if wc_valid,
        pub wc_addr: u64 = 64 if wc_valid,
        pub wc_last: bool = 1 if wc_valid,
        pub wc_tok_data: TokBits = 192 if wc_valid,
        /// Counter pulses: a response accepted, a READ done, a response
        /// with no READ, a duplicate, a PSN ahead, a bad response, a push
        /// refused (ring full).
        pub ev_exec: bool = 1,
        pub ev_done: bool = 1,
        pub ev_unexp: bool = 1,
        pub ev_dup: bool = 1,
        pub ev_seq: bool = 1,
        pub ev_bad: bool = 1,
        pub ev_rr_full: bool = 1,
        /// A response ahead of the head READ's next PSN, the first of its
        /// QP's gap episode (pulse): the QP and the first missing PSN.
        pub gap_valid: bool = 1,
        pub gap_qp: u8 = 4 if gap_valid,
        pub gap_psn: u32 = 24 if gap_valid,
        /// A response accepted that is not its READ's last (pulse, with
        /// the counter pulse): its QP and PSN, an implicit ACK for
        /// ack_tracker.
        pub prog_valid: bool = 1,
        pub prog_qp: u8 = 4 if prog_valid,
        pub prog_psn: u32 = 24 if prog_valid,
    }
}

/// Counter pulses: bit positions of `ev_q`.
pub mod ev {
    pub const EXEC: u8 = 1 << 0;
    pub const DONE: u8 = 1 << 1;
    pub const UNEXP: u8 = 1 << 2;
    pub const DUP: u8 = 1 << 3;
    pub const SEQ: u8 = 1 << 4;
    pub const BAD: u8 = 1 << 5;
}

/// A row of the ring RAM: one outstanding READ.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RrRow {
    pub psn: u32,
    pub len: u32,
    pub addr: u64,
    pub mtu: u8,
    pub max: u8,
}

impl TraceValue for RrRow {
    /// `{mtu, addr, len, psn}`, PSN in the low bits.
    fn put(&self, _w: u32, b: &mut Bits) {
        b.push(self.psn as u64, 24);
        b.push(self.len as u64, 32);
        b.push(self.addr, 64);
        b.push(self.mtu as u64, 3);
        b.push(self.max as u64, 3);
    }
}

/// FSM states (`state_e`, in its order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum St {
    #[default]
    Idle,
    /// Ring row and k valid: decide and commit.
    Dec,
    /// The frame's command.
    Cmd,
    /// The READ done token.
    Tok,
}

/// The decision of S_DEC.
struct Decision {
    exec: bool,
    last: bool,
    unexp: bool,
    dup: bool,
    seq: bool,
    bad: bool,
    /// H's progress and the bytes of H already placed (k MTU).
    k: u32,
    /// H's next response PSN, psn0 + k.
    exp_psn: u32,
    done_b: u64,
}

/// The block. Field names are the RTL's registers, in its order.
#[derive(Debug, Clone, PartialEq)]
pub struct RdSink {
    state_q: St,
    hd_ready_q: bool,
    // The header being worked on.
    m_qp_q: u8,
    m_opc_q: u8,
    m_psn_q: u32,
    m_aeth_q: bool,
    /// The AETH syndrome's top 3 bits.
    m_syn_q: u8,
    m_hdr_q: u8,
    m_pay_q: u16,
    /// At the take: the QP had a READ; its head row, k as stored, kz.
    has_q: bool,
    row_q: RrRow,
    kr_q: u32,
    kzr_q: bool,
    /// The ring RAM, row `{qp, slot}` (not traced: longer than Verilator
    /// dumps).
    mem_q: Vec<RrRow>,
    /// k of each QP's head READ (valid while the QP's kz is clear).
    kmem_q: [u32; QPS],
    hd_q: [u8; QPS],
    cnt_q: [u8; QPS],
    kz_q: [bool; QPS],
    blk_q: [bool; QPS],
    /// A gap of the QP was reported (its episode is open).
    gp_q: [bool; QPS],
    c_len_q: u16,
    c_addr_q: u64,
    c_done_q: bool,
    wc_valid_q: bool,
    wc_tok_q: bool,
    wc_off_q: u16,
    wc_len_q: u16,
    wc_addr_q: u64,
    wc_last_q: bool,
    wc_tok_data_q: TokBits,
    ev_q: u8,
    ev_rr_full_q: bool,
    gap_valid_q: bool,
    gap_qp_q: u8,
    gap_psn_q: u32,
    prog_valid_q: bool,
    prog_qp_q: u8,
    prog_psn_q: u32,
}

impl Default for RdSink {
    /// The state after reset (the RAMs as Verilator starts them: zero).
    fn default() -> Self {
        RdSink {
            state_q: St::Idle,
            hd_ready_q: true,
            m_qp_q: 0,
            m_opc_q: 0,
            m_psn_q: 0,
            m_aeth_q: false,
            m_syn_q: 0,
            m_hdr_q: 0,
            m_pay_q: 0,
            has_q: false,
            row_q: RrRow::default(),
            kr_q: 0,
            kzr_q: false,
            mem_q: vec![RrRow::default(); QPS * DEPTH],
            kmem_q: [0; QPS],
            hd_q: [0; QPS],
            cnt_q: [0; QPS],
            kz_q: [true; QPS],
            blk_q: [false; QPS],
            gp_q: [false; QPS],
            c_len_q: 0,
            c_addr_q: 0,
            c_done_q: false,
            wc_valid_q: false,
            wc_tok_q: false,
            wc_off_q: 0,
            wc_len_q: 0,
            wc_addr_q: 0,
            wc_last_q: false,
            wc_tok_data_q: TokBits::default(),
            ev_q: 0,
            ev_rr_full_q: false,
            gap_valid_q: false,
            gap_qp_q: 0,
            gap_psn_q: 0,
            prog_valid_q: false,
            prog_qp_q: 0,
            prog_psn_q: 0,
        }
    }
}

impl RdSink {
    pub fn new() -> Self {
        Self::default()
    }

    fn outputs(&self) -> RdSinkOut {
        let e = |b: u8| self.ev_q & b != 0;
        RdSinkOut {
            hd_ready: self.hd_ready_q,
            rr_block: self
                .blk_q
                .iter()
                .enumerate()
                .fold(0, |a, (q, &b)| a | (b as u16) << q),
            wc_valid: self.wc_valid_q,
            wc_tok: self.wc_tok_q,
            wc_off: self.wc_off_q,
            wc_len: self.wc_len_q,
            wc_addr: self.wc_addr_q,
            wc_last: self.wc_last_q,
            wc_tok_data: self.wc_tok_data_q,
            ev_exec: e(ev::EXEC),
            ev_done: e(ev::DONE),
            ev_unexp: e(ev::UNEXP),
            ev_dup: e(ev::DUP),
            ev_seq: e(ev::SEQ),
            ev_bad: e(ev::BAD),
            ev_rr_full: self.ev_rr_full_q,
            gap_valid: self.gap_valid_q,
            gap_qp: self.gap_qp_q,
            gap_psn: self.gap_psn_q,
            prog_valid: self.prog_valid_q,
            prog_qp: self.prog_qp_q,
            prog_psn: self.prog_psn_q,
        }
    }

    /// The decision of S_DEC on the registers loaded at the take and this
    /// cycle's clear.
    fn decide(&self, i: &RdSinkIn) -> Decision {
        let r = self.row_q;
        let mtul = mtu_bytes(r.mtu).trailing_zeros();
        let mtu = 1u64 << mtul;
        let k = if self.kzr_q { 0 } else { self.kr_q };
        // Bytes of H already placed and what is left (k < n: not negative).
        let done_b = (k as u64) << mtul;
        let rem = (r.len as u64).wrapping_sub(done_b) & ((1 << 37) - 1);
        let last = rem <= mtu;
        let first = k == 0;
        let exp_opc = match (first, last) {
            (true, true) => OP_ONLY,
            (false, true) => OP_LAST,
            (true, false) => OP_FIRST,
            (false, false) => OP_MIDDLE,
        };
        // At k > 0 the responses of a re-request of the rest of H may
        // come: a FIRST where a MIDDLE is due, an ONLY where a LAST is.
        let opc_ok = self.m_opc_q == exp_opc
            || (!first && !last && self.m_opc_q == OP_FIRST)
            || (!first && last && self.m_opc_q == OP_ONLY);
        // The AETH by the opcode received.
        let aeth_ok = if self.m_opc_q == OP_MIDDLE {
            !self.m_aeth_q
        } else {
            self.m_aeth_q && self.m_syn_q == 0
        };
        let len_ok = if last {
            self.m_pay_q as u64 == rem
        } else {
            self.m_pay_q as u64 == mtu
        };
        let exp_psn = r.psn.wrapping_add(k) & PSN_MASK;
        let delta = self.m_psn_q.wrapping_sub(exp_psn) & PSN_MASK;
        let ok = self.has_q && !(i.clr_valid && i.clr_qp as usize % QPS == self.m_qp_q as usize);
        let behind = delta & 1 << 23 != 0;
        let bad = ok && delta == 0 && (!opc_ok || !aeth_ok || !len_ok);
        Decision {
            exec: ok && delta == 0 && !bad,
            last,
            unexp: !ok,
            dup: ok && delta != 0 && behind,
            seq: ok && delta != 0 && !behind,
            bad,
            k,
            exp_psn,
            done_b,
        }
    }
}

/// A QP is blocked at max(1, max_rd_atomic) READs outstanding, or at a
/// full ring.
fn at_bound(cnt: u8, max: u8) -> bool {
    cnt >= max.max(1) || cnt as usize == DEPTH
}

impl Dut for RdSink {
    type In = RdSinkIn;
    type Out = RdSinkOut;
    const NAME: &'static str = "rd_sink";

    fn reset(&mut self) -> RdSinkOut {
        *self = RdSink::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RdSinkIn) -> RdSinkOut {
        let qm = QPS - 1;
        // ---- on the state at the start of the cycle ----
        let take = i.hd_valid && self.hd_ready_q;
        let m = RxMeta::unpack(&i.hd_meta);
        let hd_qp = m.qp as usize & qm;
        let rq = i.rr_qp as usize & qm;
        let cq = i.clr_qp as usize & qm;
        // A clear of the pushed QP in the same cycle acts first.
        let cnt_rr = if i.clr_valid && cq == rq {
            0
        } else {
            self.cnt_q[rq] as usize
        };
        let full = cnt_rr == DEPTH;
        let push = i.rr_valid && !full;
        let refuse = i.rr_valid && full;
        let tail = (self.hd_q[rq] as usize + cnt_rr) % DEPTH;
        let d = self.decide(i);
        let dec = self.state_q == St::Dec;
        let mq = self.m_qp_q as usize & qm;
        let pop = dec && d.exec && d.last;
        let pop_max = self.row_q.max;
        let kinc = dec && d.exec && !d.last;
        let wc_free = !self.wc_valid_q || i.wc_ready;

        // ---- FSM and output registers ----
        if wc_free {
            self.wc_valid_q = false;
        }
        self.ev_q = 0;
        self.gap_valid_q = false;
        self.prog_valid_q = false;
        match self.state_q {
            St::Idle => {
                if take {
                    self.hd_ready_q = false;
                    self.state_q = St::Dec;
                }
            }
            St::Dec => {
                self.c_len_q = if d.exec { self.m_pay_q } else { 0 };
                self.c_addr_q = if d.exec && self.m_pay_q != 0 {
                    self.row_q.addr.wrapping_add(d.done_b)
                } else {
                    0
                };
                self.c_done_q = d.exec && d.last;
                let bit = |c: bool, b: u8| if c { b } else { 0 };
                self.ev_q = bit(d.exec, ev::EXEC)
                    | bit(d.exec && d.last, ev::DONE)
                    | bit(d.unexp, ev::UNEXP)
                    | bit(d.dup, ev::DUP)
                    | bit(d.seq, ev::SEQ)
                    | bit(d.bad, ev::BAD);
                // The first response ahead of an episode: the first
                // missing PSN.
                if d.seq && !self.gp_q[self.m_qp_q as usize & qm] {
                    self.gap_valid_q = true;
                    self.gap_qp_q = self.m_qp_q;
                    self.gap_psn_q = d.exp_psn;
                }
                // A response accepted that is not its READ's last: an
                // implicit ACK of its PSN (the last one's is the READ done
                // token, once its data is in host memory).
                if d.exec && !d.last {
                    self.prog_valid_q = true;
                    self.prog_qp_q = self.m_qp_q;
                    self.prog_psn_q = self.m_psn_q;
                }
                self.state_q = St::Cmd;
            }
            St::Cmd => {
                if wc_free {
                    self.wc_valid_q = true;
                    self.wc_tok_q = false;
                    self.wc_off_q = self.m_hdr_q as u16;
                    self.wc_len_q = self.c_len_q;
                    self.wc_addr_q = self.c_addr_q;
                    self.wc_last_q = true;
                    self.wc_tok_data_q = TokBits::default();
                    if self.c_done_q {
                        self.state_q = St::Tok;
                    } else {
                        self.hd_ready_q = true;
                        self.state_q = St::Idle;
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
                    // The last response's PSN, psn0 + n - 1: the READ's last.
                    self.wc_tok_data_q = tok_rdone(self.m_qp_q, self.m_psn_q);
                    self.hd_ready_q = true;
                    self.state_q = St::Idle;
                }
            }
        }

        // ---- the two RAMs: registered reads (before this edge's writes) ----
        if take {
            self.row_q = self.mem_q[hd_qp * DEPTH + self.hd_q[hd_qp] as usize];
            self.kr_q = self.kmem_q[hd_qp];
        }
        if push {
            self.mem_q[rq * DEPTH + tail] = RrRow {
                psn: i.rr_psn & PSN_MASK,
                len: i.rr_len,
                addr: i.rr_addr,
                mtu: i.rr_mtu & 7,
                max: i.rr_max & 7,
            };
        }
        if kinc {
            self.kmem_q[mq] = (d.k + 1) & K_MASK;
        }

        // ---- the header's fields, loaded at the take ----
        if take {
            self.m_qp_q = hd_qp as u8;
            self.m_opc_q = m.opcode;
            self.m_psn_q = m.psn & PSN_MASK;
            self.m_aeth_q = m.has_aeth;
            self.m_syn_q = (m.aeth >> 29) as u8;
            self.m_hdr_q = m.hdr_len;
            self.m_pay_q = m.pay_len;
            self.has_q =
                (m.qp as usize) < QPS && self.cnt_q[hd_qp] != 0 && !(i.clr_valid && cq == hd_qp);
            self.kzr_q = self.kz_q[hd_qp];
        }

        // ---- per-QP flops: clear, then push, then the decision's commit ----
        if i.clr_valid {
            self.cnt_q[cq] = 0;
            self.kz_q[cq] = true;
        }
        if push {
            self.cnt_q[rq] += 1;
        }
        if pop {
            self.hd_q[mq] = ((self.hd_q[mq] as usize + 1) % DEPTH) as u8;
            self.cnt_q[mq] -= 1;
            self.kz_q[mq] = true;
        }
        if kinc {
            self.kz_q[mq] = false;
        }
        // rr_block follows the count after the edge, against the
        // max_rd_atomic of the event: a push's own, a pop's READ's.
        if i.clr_valid {
            self.blk_q[cq] = false;
        }
        if pop {
            self.blk_q[mq] = at_bound(self.cnt_q[mq], pop_max);
        }
        if push {
            self.blk_q[rq] = at_bound(self.cnt_q[rq], i.rr_max & 7);
        }
        // The gap episode: opened by a response ahead, closed by an
        // accepted one or a clear.
        if i.clr_valid {
            self.gp_q[cq] = false;
        }
        if dec && d.seq {
            self.gp_q[mq] = true;
        }
        if dec && d.exec {
            self.gp_q[mq] = false;
        }
        self.ev_rr_full_q = refuse;
        self.outputs()
    }
}

impl Trace for RdSink {
    /// The RTL's registers in its declaration order (`state_q` is the
    /// `state_e` encoding, S_IDLE = 0 in the order of [`St`]).
    fn trace(&self, t: &mut dyn Tracer) {
        let qpw = QPS.trailing_zeros();
        let (sw, cw) = (DEPTH.trailing_zeros(), DEPTH.trailing_zeros() + 1);
        let qps = QPS as u32;
        t.reg("state_q", 2, &(self.state_q as u8));
        t.reg("hd_ready_q", 1, &self.hd_ready_q);
        t.reg("m_qp_q", qpw, &self.m_qp_q);
        t.reg("m_opc_q", 8, &self.m_opc_q);
        t.reg("m_psn_q", 24, &self.m_psn_q);
        t.reg("m_aeth_q", 1, &self.m_aeth_q);
        t.reg("m_syn_q", 3, &self.m_syn_q);
        t.reg("m_hdr_q", 7, &self.m_hdr_q);
        t.reg("m_pay_q", 13, &self.m_pay_q);
        t.reg("has_q", 1, &self.has_q);
        t.reg("row_q", 126, &self.row_q);
        t.reg("kr_q", 24, &self.kr_q);
        t.reg("kzr_q", 1, &self.kzr_q);
        t.each("kmem_q", 24, &self.kmem_q);
        t.reg("hd_q", qps * sw, &self.hd_q);
        t.reg("cnt_q", qps * cw, &self.cnt_q);
        t.reg("kz_q", qps, &self.kz_q);
        t.reg("blk_q", qps, &self.blk_q);
        t.reg("gp_q", qps, &self.gp_q);
        t.reg("c_len_q", 13, &self.c_len_q);
        t.reg("c_addr_q", 64, &self.c_addr_q);
        t.reg("c_done_q", 1, &self.c_done_q);
        t.reg("wc_valid_q", 1, &self.wc_valid_q);
        t.reg("wc_tok_q", 1, &self.wc_tok_q);
        t.reg("wc_off_q", 13, &self.wc_off_q);
        t.reg("wc_len_q", 13, &self.wc_len_q);
        t.reg("wc_addr_q", 64, &self.wc_addr_q);
        t.reg("wc_last_q", 1, &self.wc_last_q);
        t.reg("wc_tok_data_q", 192, &self.wc_tok_data_q);
        t.reg("ev_q", 6, &self.ev_q);
        t.reg("ev_rr_full_q", 1, &self.ev_rr_full_q);
        t.reg("gap_valid_q", 1, &self.gap_valid_q);
        t.reg("gap_qp_q", qpw, &self.gap_qp_q);
        t.reg("gap_psn_q", 24, &self.gap_psn_q);
        t.reg("prog_valid_q", 1, &self.prog_valid_q);
        t.reg("prog_qp_q", qpw, &self.prog_qp_q);
        t.reg("prog_psn_q", 24, &self.prog_psn_q);
    }
}

#[cfg(test)]
mod tests;
