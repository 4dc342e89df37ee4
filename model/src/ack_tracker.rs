//! `ack_tracker`: RC completions wait for their ACK. Model of
//! `hw/rtl/ack_tracker.sv` (docs/rx_cc.md, "`ack_tracker`").
//!
//! tx_engine's completions come in on `cpl_*`. UC ones (`cpl_uc`) pass
//! through a FIFO in arrival order (cq_writer pairs wait_frame completions
//! with frames in that order). RC ones (success, error, flush) queue per QP
//! in order; a QP's head may leave when it is an error / flush, or a success
//! whose last PSN (`cpl_psn`) is before the QP's oldest unacknowledged PSN.
//!
//! Per QP the tracker knows the requester's window `[una, nxt)`: the PSNs
//! sent and not yet acknowledged. Software setting the QP's PSN
//! (`psn_set_*`, from csr) restarts it empty at that PSN; each request
//! packet tx_engine commits (`snd_*`, its PSN write-back) moves `nxt` past
//! the packet (a READ REQUEST past its whole response span). ACKs from
//! rx_parser are judged against it, modulo 2^24: PSN p in `[una, nxt - 1]`
//! acknowledges up to p (`una := p + 1`, `ev_ack`); p 1 .. 2^23 - 1 before
//! `una` is a duplicate (`ev_dup`); anything else names a PSN never sent
//! (exactly 2^23 ahead included) and is ignored (`ev_ack_invalid`). A NAK or
//! RNR NAK is counted (`ev_nak`) when its PSN is in `[una, nxt]` (a
//! responder names the PSN it expected), else it is `ev_ack_invalid` too.
//!
//! Remote-error NAKs (syndrome 0x61 invalid request, 0x62 remote access
//! error, 0x63 remote operational error) counted so, for a QP not in error
//! mode and not restarted in the same cycle, also acknowledge every PSN
//! before theirs (`una := p`) and put the QP in error mode (`err_q`, with
//! `err_st_q` = 9 / 10 / 11 for code 1 / 2 / 3), pulsing `err_valid` /
//! `err_qp` the next cycle (csr moves the QP to ERROR). In error mode the
//! QP's head is always ready; a success `una` does not cover (a READ never
//! is) leaves with `err_st_q` and length 0, after which `err_st_q` is 5
//! (flushed) for every later one; `una` no longer moves (ACKs are counted
//! but acknowledge nothing); a remote-error NAK is only counted. A restart
//! (`psn_set`) that takes effect ends error mode. The status is decided at
//! stage A: an entry selected before the NAK (covered then) stays a
//! success.
//!
//! READ done (`rd_done_*`, a READ of the QP with that last PSN has its
//! data in host memory) is an implicit ACK of its PSN l: in `[una, nxt - 1]`
//! `una := l + 1` (unless an ACK of the QP in the same cycle goes further,
//! or a remote-error NAK or restart of the QP wins), 1 .. 2^23 - 1 behind
//! `una` it moves nothing; either way every READ entry of the QP whose last
//! PSN is at or before l (one pushed in the same cycle too) becomes a
//! normal success (`ev_rd_done`). Ahead: `ev_ack_invalid`. In error mode,
//! or with a restart of the QP in the same cycle, it is only counted. An
//! ACK frame never releases a READ.
//!
//! READ progress (`rd_prog_*`, a response of a READ but its last accepted
//! in order) is an implicit ACK of its PSN r and nothing else: in
//! `[una, nxt - 1]` of a QP not in error mode, restarted or NAKed in the
//! cycle, `una := r + 1` when that goes further than an ACK or READ done
//! of the QP in the same cycle. So `una` is the first READ response
//! missing, and a local ACK timeout asks for the rest of the READ only.
//!
//! Storage: the RC entries' bulk fields (wait_frame, wr_id, status, opcode,
//! len, imm, cq) in one RAM of `QPS * DEPTH` entries at address
//! `qp * DEPTH + slot` (one write port, registered read); the last PSN and a
//! "success" bit of every entry in flops (every QP's head is looked at every
//! cycle); per QP head and tail pointers of `DW + 1` bits (count = tail -
//! head), `una` and `nxt`, and error mode (1 + 4 bits). The UC FIFO holds
//! `DEPTH` entries in flops.
//!
//! Pipeline (one completion per cycle):
//! - stage A (select): the UC FIFO's head if there is one, else the first
//!   ready RC head at or after the round-robin pointer (which then moves to
//!   that QP + 1); the RC head is read from the RAM into `rd_data_q`, the UC
//!   head copied to `b_uc_data_q`; it goes to stage B when B is empty or
//!   moves on this cycle;
//! - stage B: moves to the `out_*` registers when they are empty or taken.
//!
//! Timing: a completion transferred at n, with nothing ahead of it and (RC
//! success) its PSN already covered, is visible on `out_*` at n+3; an ACK at
//! n that covers a waiting head: visible at n+3. An ACK is judged against
//! the window as it is before cycle n's own reports and restarts.
//! `cpl_ready` (registered) is high when the completion it will take has
//! room: while a completion waits untaken (`cpl_valid` and not ready, so the
//! same one is offered next cycle) it is its own queue's room; otherwise
//! (the next one is unknown) every queue must have room. `full[q]`
//! (registered) = QP q's queue holds `DEPTH - 2` entries or more after this
//! cycle. Pulses `ev_ack`, `ev_nak`, `ev_dup`, `ev_ack_invalid` are visible
//! the cycle after the ACK.

use crate::dut::Dut;
use crate::ports;
use crate::ports::PsnVec;

/// CQs (CQW = 2).
pub use crate::params::CQS;
/// QPs (QPW = 4).
pub use crate::params::QPS;
use crate::params::{cqe_status, wc_op, CQW, QPW};
use crate::trace::{Bits, Trace, TraceValue, Tracer};
/// Entries per RC queue, and of the UC FIFO (DW = 3).
pub const DEPTH: usize = 8;

ports! {
    /// Inputs of `ack_tracker` (all but `clk`/`rst`).
    pub struct AckTrackerIn {
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
        /// The WQE's send-queue index (the retransmission anchor).
        pub cpl_idx: u16 = 16 if cpl_valid,
        pub ack_valid: bool = 1,
        pub ack_qp: u8 = 4 if ack_valid,
        pub ack_psn: u32 = 24 if ack_valid,
        pub ack_syndrome: u8 = 8 if ack_valid,
        /// tx_engine committed a request packet of QP `snd_qp`; the QP's
        /// next PSN is now `snd_nxt`.
        pub snd_valid: bool = 1,
        pub snd_qp: u8 = 4 if snd_valid,
        pub snd_nxt: u32 = 24 if snd_valid,
        /// Software wrote QP `psn_set_qp`'s PSN: its window restarts empty.
        pub psn_set_valid: bool = 1,
        pub psn_set_qp: u8 = 4 if psn_set_valid,
        pub psn_set_psn: u32 = 24 if psn_set_valid,
        /// A READ of QP `rd_done_qp` whose last PSN is `rd_done_psn` has all
        /// its response data in host memory.
        pub rd_done_valid: bool = 1,
        pub rd_done_qp: u8 = 4 if rd_done_valid,
        pub rd_done_psn: u32 = 24 if rd_done_valid,
        /// A response of a READ of QP `rd_prog_qp`, PSN `rd_prog_psn`, not
        /// its READ's last, was accepted in order (rd_sink's `prog_*`).
        pub rd_prog_valid: bool = 1,
        pub rd_prog_qp: u8 = 4 if rd_prog_valid,
        pub rd_prog_psn: u32 = 24 if rd_prog_valid,
        pub out_ready: bool = 1,
        /// retx_ctl: QP `xerr_qp`'s retries ran out (status 12 or 13).
        pub xerr_valid: bool = 1,
        pub xerr_qp: u8 = 4 if xerr_valid,
        pub xerr_status: u8 = 8 if xerr_valid,
    }
}

ports! {
    /// Outputs of `ack_tracker`, all registered.
    pub struct AckTrackerOut {
        pub cpl_ready: bool = 1,
        pub out_valid: bool = 1,
        pub out_wait_frame: bool = 1 if out_valid,
        pub out_wr_id: u64 = 64 if out_valid,
        pub out_status: u8 = 8 if out_valid,
        pub out_opcode: u8 = 8 if out_valid,
        pub out_len: u32 = 32 if out_valid,
        pub out_imm: u32 = 32 if out_valid,
        pub out_qp: u8 = 4 if out_valid,
        pub out_cq: u8 = 2 if out_valid,
        pub full: u16 = 16,
        /// Error mode per QP (`err_q`), for tx_engine.
        pub err_mode: u16 = 16,
        pub ev_ack: bool = 1,
        pub ev_nak: bool = 1,
        pub ev_dup: bool = 1,
        pub ev_ack_invalid: bool = 1,
        /// A remote-error NAK put QP `err_qp` in error mode.
        pub err_valid: bool = 1,
        pub err_qp: u8 = 4 if err_valid,
        /// An rd_done naming a PSN its QP sent (in the window or behind it).
        pub ev_rd_done: bool = 1,
        /// A sequence-error (`nak_rnr` 0) or RNR NAK (1, timer code
        /// `nak_timer`) of PSN `nak_psn` taken in QP `nak_qp`'s window.
        pub nak_valid: bool = 1,
        pub nak_qp: u8 = 4 if nak_valid,
        pub nak_psn: u32 = 24 if nak_valid,
        pub nak_rnr: bool = 1 if nak_valid,
        pub nak_timer: u8 = 5 if nak_valid,
        /// The window's registers: una per QP, and una != nxt.
        pub una_all: PsnVec = 384,
        pub busy: u16 = 16,
        pub xerr_ready: bool = 1,
        /// A success left: QP `anc_qp`'s anchor is now SQ index `anc_idx`
        /// with first PSN `anc_psn`.
        pub anc_valid: bool = 1,
        pub anc_qp: u8 = 4 if anc_valid,
        pub anc_idx: u16 = 16 if anc_valid,
        pub anc_psn: u32 = 24 if anc_valid,
    }
}

/// A completion as it is stored and sent (`qp` is implicit in the RC RAM's
/// address, and kept here only for UC entries and the output).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Entry {
    pub wait_frame: bool,
    pub wr_id: u64,
    pub status: u8,
    pub opcode: u8,
    pub len: u32,
    pub imm: u32,
    pub qp: u8,
    pub cq: u8,
}

const PSN_MASK: u32 = 0xFF_FFFF;
/// Pointer mask: DW + 1 bits.
const PTR_MASK: u8 = (2 * DEPTH - 1) as u8;

#[derive(Debug, Clone, PartialEq)]
pub struct AckTracker {
    cpl_ready_q: bool,
    // UC pass-through FIFO (flops).
    uc_mem_q: [Entry; DEPTH],
    uc_wr_q: u8,
    uc_rd_q: u8,
    uc_cnt_q: u8,
    // RC queues: the RAM (qp field unused), per-entry last PSN and success
    // bit in flops, per-QP pointers.
    mem_q: [Entry; QPS * DEPTH],
    m_psn_q: [u32; QPS * DEPTH],
    m_ok_q: [bool; QPS * DEPTH],
    /// A successful RDMA READ whose data is not known to be in: not ready
    /// (it holds its QP's queue) until an rd_done covering its last PSN
    /// clears the bit; an ACK never does.
    m_rd_q: [bool; QPS * DEPTH],
    head_q: [u8; QPS],
    tail_q: [u8; QPS],
    /// Per QP: the oldest unacknowledged PSN and the next PSN to be sent.
    una_q: [u32; QPS],
    nxt_q: [u32; QPS],
    /// Per QP: error mode (a remote-error NAK was taken), and the status
    /// the next success not covered by `una` leaves with (4 bits).
    err_q: [bool; QPS],
    err_st_q: [u8; QPS],
    rr_q: u8,
    // Stage B: the RAM's read register, or the UC entry.
    rd_data_q: Entry,
    b_valid_q: bool,
    b_uc_q: bool,
    b_qp_q: u8,
    /// Stage B's RC entry is a success turned into `b_st_q` (length 0).
    b_err_q: bool,
    b_st_q: u8,
    b_uc_data_q: Entry,
    // Outputs.
    out_valid_q: bool,
    out_q: Entry,
    full_q: u16,
    ev_ack_q: bool,
    ev_nak_q: bool,
    ev_dup_q: bool,
    ev_ack_invalid_q: bool,
    err_valid_q: bool,
    err_qp_q: u8,
    ev_rd_done_q: bool,
    // Retransmission (docs/retransmission.md).
    /// Each RC entry's SQ index: a second RAM, written with `mem_q`.
    idx_mem_q: [u16; QPS * DEPTH],
    b_idx_q: u16,
    b_psn_q: u32,
    nak_valid_q: bool,
    nak_qp_q: u8,
    nak_psn_q: u32,
    nak_rnr_q: bool,
    nak_timer_q: u8,
    busy_q: u16,
    /// An exhaustion taken and not yet applied.
    xp_valid_q: bool,
    xp_qp_q: u8,
    xp_st_q: u8,
    anc_valid_q: bool,
    anc_qp_q: u8,
    anc_idx_q: u16,
    anc_psn_q: u32,
}

impl Default for AckTracker {
    fn default() -> Self {
        AckTracker {
            cpl_ready_q: false,
            uc_mem_q: [Entry::default(); DEPTH],
            uc_wr_q: 0,
            uc_rd_q: 0,
            uc_cnt_q: 0,
            mem_q: [Entry::default(); QPS * DEPTH],
            m_psn_q: [0; QPS * DEPTH],
            m_ok_q: [false; QPS * DEPTH],
            m_rd_q: [false; QPS * DEPTH],
            head_q: [0; QPS],
            tail_q: [0; QPS],
            una_q: [0; QPS],
            nxt_q: [0; QPS],
            err_q: [false; QPS],
            err_st_q: [0; QPS],
            rr_q: 0,
            rd_data_q: Entry::default(),
            b_valid_q: false,
            b_uc_q: false,
            b_qp_q: 0,
            b_err_q: false,
            b_st_q: 0,
            b_uc_data_q: Entry::default(),
            out_valid_q: false,
            out_q: Entry::default(),
            full_q: 0,
            ev_ack_q: false,
            ev_nak_q: false,
            ev_dup_q: false,
            ev_ack_invalid_q: false,
            err_valid_q: false,
            err_qp_q: 0,
            ev_rd_done_q: false,
            idx_mem_q: [0; QPS * DEPTH],
            b_idx_q: 0,
            b_psn_q: 0,
            nak_valid_q: false,
            nak_qp_q: 0,
            nak_psn_q: 0,
            nak_rnr_q: false,
            nak_timer_q: 0,
            busy_q: 0,
            xp_valid_q: false,
            xp_qp_q: 0,
            xp_st_q: 0,
            anc_valid_q: false,
            anc_qp_q: 0,
            anc_idx_q: 0,
            anc_psn_q: 0,
        }
    }
}

/// Entries in a queue from its DW+1-bit pointers.
fn count(head: u8, tail: u8) -> u8 {
    tail.wrapping_sub(head) & PTR_MASK
}

/// RAM / flop index of QP q's slot `ptr mod DEPTH`.
fn slot(q: usize, ptr: u8) -> usize {
    q * DEPTH + (ptr as usize & (DEPTH - 1))
}

impl AckTracker {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> AckTrackerOut {
        let o = &self.out_q;
        AckTrackerOut {
            cpl_ready: self.cpl_ready_q,
            out_valid: self.out_valid_q,
            out_wait_frame: o.wait_frame,
            out_wr_id: o.wr_id,
            out_status: o.status,
            out_opcode: o.opcode,
            out_len: o.len,
            out_imm: o.imm,
            out_qp: o.qp,
            out_cq: o.cq,
            full: self.full_q,
            err_mode: (0..QPS).fold(0, |m, q| m | (self.err_q[q] as u16) << q),
            ev_ack: self.ev_ack_q,
            ev_nak: self.ev_nak_q,
            ev_dup: self.ev_dup_q,
            ev_ack_invalid: self.ev_ack_invalid_q,
            err_valid: self.err_valid_q,
            err_qp: self.err_qp_q,
            ev_rd_done: self.ev_rd_done_q,
            nak_valid: self.nak_valid_q,
            nak_qp: self.nak_qp_q,
            nak_psn: self.nak_psn_q,
            nak_rnr: self.nak_rnr_q,
            nak_timer: self.nak_timer_q,
            una_all: PsnVec(self.una_q),
            busy: self.busy_q,
            xerr_ready: !self.xp_valid_q,
            anc_valid: self.anc_valid_q,
            anc_qp: self.anc_qp_q,
            anc_idx: self.anc_idx_q,
            anc_psn: self.anc_psn_q,
        }
    }

    /// QP q's head is a success whose last PSN l is covered, i.e. one of
    /// the 2^23 PSNs before `una`: `(una - 1 - l) mod 2^24 < 2^23`; never a
    /// READ (it completes with its response data).
    fn head_covered(&self, q: usize) -> bool {
        let k = slot(q, self.head_q[q]);
        let d = self.una_q[q].wrapping_sub(1).wrapping_sub(self.m_psn_q[k]) & PSN_MASK;
        !self.m_rd_q[k] && d < 1 << 23
    }

    /// QP q's head may leave: an error / flush, a success covered, or
    /// anything in error mode.
    fn head_ready(&self, q: usize) -> bool {
        count(self.head_q[q], self.tail_q[q]) != 0
            && (!self.m_ok_q[slot(q, self.head_q[q])] || self.err_q[q] || self.head_covered(q))
    }

    /// QP q's head is a success error mode turns (not covered).
    fn head_turned(&self, q: usize) -> bool {
        self.err_q[q] && self.m_ok_q[slot(q, self.head_q[q])] && !self.head_covered(q)
    }
}

impl Dut for AckTracker {
    type In = AckTrackerIn;
    type Out = AckTrackerOut;
    const NAME: &'static str = "ack_tracker";

    fn reset(&mut self) -> AckTrackerOut {
        *self = AckTracker::default();
        self.outputs()
    }

    fn tick(&mut self, i: &AckTrackerIn) -> AckTrackerOut {
        // ---- the pipeline (from this cycle's registers) ----
        let out_free = !self.out_valid_q || i.out_ready;
        let b_move = self.b_valid_q && out_free;
        let a_go = !self.b_valid_q || b_move;
        let uc_avail = self.uc_cnt_q != 0;
        // RC: the first ready head at or after the round-robin pointer.
        let rc_sel = (0..QPS)
            .map(|k| (self.rr_q as usize + k) % QPS)
            .find(|&q| self.head_ready(q));
        let a_uc = a_go && uc_avail;
        let a_rc = if a_go && !uc_avail { rc_sel } else { None };

        // ---- this cycle's completion ----
        let push = i.cpl_valid && self.cpl_ready_q;
        let cq_ = i.cpl_qp as usize & (QPS - 1);
        let e = Entry {
            wait_frame: i.cpl_wait_frame,
            wr_id: i.cpl_wr_id,
            status: i.cpl_status,
            opcode: i.cpl_opcode,
            len: i.cpl_len,
            imm: i.cpl_imm,
            qp: cq_ as u8,
            cq: i.cpl_cq & (CQS as u8 - 1),
        };

        // ---- ACK / NAK (from the inputs; readiness sees it next cycle) ----
        self.ev_ack_q = false;
        self.ev_nak_q = false;
        self.ev_dup_q = false;
        self.ev_ack_invalid_q = false;
        self.err_valid_q = false;
        self.err_qp_q = i.ack_qp & (QPS as u8 - 1);
        // A restart that takes effect (a report of its QP drops it).
        let snd_q = i.snd_valid.then_some(i.snd_qp as usize & (QPS - 1));
        let set_q = (i.psn_set_valid && snd_q != Some(i.psn_set_qp as usize & (QPS - 1)))
            .then_some(i.psn_set_qp as usize & (QPS - 1));
        // The window before this cycle's updates, as the RTL's registers.
        let mut una_d = self.una_q;
        let mut err_d = self.err_q;
        let mut err_st_d = self.err_st_q;
        // The QP whose una a NAK (remote error or go-back-N) moves now.
        let mut nak_una: Option<usize> = None;
        let mut nak_take = false;
        self.nak_valid_q = false;
        self.nak_qp_q = i.ack_qp & (QPS as u8 - 1);
        self.nak_psn_q = i.ack_psn & PSN_MASK;
        self.nak_rnr_q = i.ack_syndrome >> 5 == 0b001;
        self.nak_timer_q = i.ack_syndrome & 0x1F;
        if i.ack_valid {
            let q = i.ack_qp as usize & (QPS - 1);
            let p = i.ack_psn & PSN_MASK;
            let una = self.una_q[q];
            // How far p is past una, and how many PSNs are outstanding.
            let off = p.wrapping_sub(una) & PSN_MASK;
            let win = self.nxt_q[q].wrapping_sub(una) & PSN_MASK;
            // 1 .. 2^23 - 1 before una (exactly 2^23 either way is not).
            let behind = off > 1 << 23;
            match i.ack_syndrome >> 5 {
                // In error mode una stays where the NAK put it.
                0b000 if off < win => {
                    if !self.err_q[q] {
                        una_d[q] = (p + 1) & PSN_MASK;
                    }
                    self.ev_ack_q = true;
                }
                0b000 if behind => self.ev_dup_q = true,
                0b000 => self.ev_ack_invalid_q = true,
                // NAK and RNR NAK name the PSN the responder expected, at
                // most nxt: counted (retransmission is a later issue). A
                // remote error (codes 1 ..= 3) also acknowledges every PSN
                // before p and puts the QP in error mode, unless it is in
                // error mode already or restarted in this cycle.
                0b011 | 0b001 if off <= win => {
                    self.ev_nak_q = true;
                    let code = i.ack_syndrome & 0x1F;
                    let rerr = i.ack_syndrome >> 5 == 0b011 && (1..=3).contains(&code);
                    // Sequence error (code 0) or RNR: everything before p
                    // is acknowledged and retx_ctl decides the rewind.
                    let gbn = i.ack_syndrome >> 5 == 0b001 || code == 0;
                    if gbn && !self.err_q[q] && set_q != Some(q) {
                        una_d[q] = p;
                        nak_una = Some(q);
                        self.nak_valid_q = true;
                    }
                    if rerr && !self.err_q[q] && set_q != Some(q) {
                        nak_una = Some(q);
                        nak_take = true;
                        una_d[q] = p;
                        err_d[q] = true;
                        err_st_d[q] = match code {
                            1 => cqe_status::REM_INV_REQ_ERR,
                            2 => cqe_status::REM_ACCESS_ERR,
                            _ => cqe_status::REM_OP_ERR,
                        };
                        self.err_valid_q = true;
                    }
                }
                0b011 | 0b001 => self.ev_ack_invalid_q = true,
                // Reserved syndromes: nothing.
                _ => {}
            }
        }
        // READ done with last PSN l, judged like an ACK of l against the
        // window before this cycle: in [una, nxt - 1] it acknowledges up to
        // l, unless an ACK of the QP in this cycle goes further (a
        // remote-error NAK taken or a restart of the QP wins over both);
        // 1 .. 2^23 - 1 PSNs behind una it moves nothing; either way it
        // releases the QP's READ entries at or before l, unless the QP is in
        // error mode or restarted in this cycle. Else invalid.
        self.ev_rd_done_q = false;
        let mut release: Option<(usize, u32)> = None;
        if i.rd_done_valid {
            let q = i.rd_done_qp as usize & (QPS - 1);
            let l = i.rd_done_psn & PSN_MASK;
            let una = self.una_q[q];
            let off = l.wrapping_sub(una) & PSN_MASK;
            let win = self.nxt_q[q].wrapping_sub(una) & PSN_MASK;
            if off < win || off > 1 << 23 {
                self.ev_rd_done_q = true;
                if !self.err_q[q] && set_q != Some(q) {
                    release = Some((q, l));
                    let nak_here = nak_una == Some(q);
                    let ack_off = (i.ack_valid && i.ack_syndrome >> 5 == 0 && !nak_here)
                        .then(|| i.ack_psn.wrapping_sub(una) & PSN_MASK)
                        .filter(|&a| a < win && i.ack_qp as usize & (QPS - 1) == q);
                    if off < win && !nak_here && ack_off.is_none_or(|a| a < off) {
                        una_d[q] = (l + 1) & PSN_MASK;
                    }
                }
            } else {
                self.ev_ack_invalid_q = true;
            }
        }
        // READ progress: an implicit ACK of r, taken when it goes furthest
        // (`moved` is how far an ACK or READ done moved una this cycle).
        if i.rd_prog_valid {
            let q = i.rd_prog_qp as usize & (QPS - 1);
            let r = i.rd_prog_psn & PSN_MASK;
            let una = self.una_q[q];
            let off = r.wrapping_sub(una) & PSN_MASK;
            let win = self.nxt_q[q].wrapping_sub(una) & PSN_MASK;
            let moved = una_d[q].wrapping_sub(una) & PSN_MASK;
            if off < win
                && !self.err_q[q]
                && set_q != Some(q)
                && nak_una != Some(q)
                && off + 1 > moved
            {
                una_d[q] = (r + 1) & PSN_MASK;
            }
        }
        // A pending exhaustion applies in a cycle with no remote-error NAK
        // (one err pulse a cycle), unless its QP is in error mode already
        // or restarted now; either way it leaves unless it waited.
        let xq = self.xp_qp_q as usize & (QPS - 1);
        if self.xp_valid_q && !nak_take && !self.err_q[xq] && set_q != Some(xq) {
            err_d[xq] = true;
            err_st_d[xq] = self.xp_st_q;
            self.err_valid_q = true;
            self.err_qp_q = xq as u8;
        }
        if self.xp_valid_q {
            self.xp_valid_q = nak_take;
        } else if i.xerr_valid {
            self.xp_valid_q = true;
            self.xp_qp_q = i.xerr_qp & (QPS as u8 - 1);
            self.xp_st_q = i.xerr_status & 0xF;
        }
        // Stage A turns a success of a QP in error mode: it gets the
        // status, and the QP's next one is flushed.
        let a_turn = a_rc.filter(|&q| self.head_turned(q));
        if let Some(q) = a_turn {
            err_st_d[q] = cqe_status::WR_FLUSH_ERR;
        }
        // A packet's report wins over a software restart of its QP in the
        // same cycle (csr keeps psn_wr's PSN over the MMIO write's); a
        // restart wins over the ACK or NAK, and ends error mode.
        // A report moves nxt forward only (a re-sent packet's does not).
        if let Some(q) = snd_q {
            let d = i.snd_nxt.wrapping_sub(self.nxt_q[q]) & PSN_MASK;
            if d != 0 && d < 1 << 23 {
                self.nxt_q[q] = i.snd_nxt & PSN_MASK;
            }
        }
        if let Some(q) = set_q {
            self.nxt_q[q] = i.psn_set_psn & PSN_MASK;
            una_d[q] = i.psn_set_psn & PSN_MASK;
            err_d[q] = false;
        }

        // ---- the anchor: a success leaving moves it past its WQE ----
        self.anc_valid_q =
            b_move && !self.b_uc_q && !self.b_err_q && self.rd_data_q.status == cqe_status::SUCCESS;
        if b_move {
            self.anc_qp_q = self.b_qp_q;
            self.anc_idx_q = self.b_idx_q.wrapping_add(1);
            self.anc_psn_q = (self.b_psn_q + 1) & PSN_MASK;
        }

        // ---- output register ----
        if b_move {
            self.out_valid_q = true;
            self.out_q = if self.b_uc_q {
                self.b_uc_data_q
            } else if self.b_err_q {
                // Error and flush CQEs have length 0.
                Entry {
                    qp: self.b_qp_q,
                    status: self.b_st_q,
                    len: 0,
                    ..self.rd_data_q
                }
            } else {
                Entry {
                    qp: self.b_qp_q,
                    ..self.rd_data_q
                }
            };
        } else if i.out_ready {
            self.out_valid_q = false;
        }

        // ---- stage A -> B (the RAM read uses the head before the pop) ----
        if a_uc {
            self.b_valid_q = true;
            self.b_uc_q = true;
            self.b_uc_data_q = self.uc_mem_q[self.uc_rd_q as usize & (DEPTH - 1)];
        } else if let Some(q) = a_rc {
            self.b_valid_q = true;
            self.b_uc_q = false;
            self.b_qp_q = q as u8;
            self.b_err_q = a_turn.is_some();
            self.b_st_q = self.err_st_q[q];
            self.rd_data_q = self.mem_q[slot(q, self.head_q[q])];
            self.b_idx_q = self.idx_mem_q[slot(q, self.head_q[q])];
            self.b_psn_q = self.m_psn_q[slot(q, self.head_q[q])];
        } else if b_move {
            self.b_valid_q = false;
        }

        // ---- the windows and error mode (stage A read them as they were) ----
        self.una_q = una_d;
        self.busy_q = (0..QPS)
            .filter(|&q| self.una_q[q] != self.nxt_q[q])
            .fold(0, |b, q| b | 1 << q);
        self.err_q = err_d;
        self.err_st_q = err_st_d;

        // ---- pops and pushes ----
        let mut uc_cnt = self.uc_cnt_q;
        if a_uc {
            self.uc_rd_q = (self.uc_rd_q + 1) & PTR_MASK;
            uc_cnt -= 1;
        }
        if let Some(q) = a_rc {
            self.head_q[q] = (self.head_q[q] + 1) & PTR_MASK;
            self.rr_q = ((q + 1) % QPS) as u8;
        }
        // READ entries released by an rd_done (any slot of the QP: a push
        // rewrites the bit), the one pushed now included.
        let covers = |l: u32, psn: u32| l.wrapping_sub(psn) & PSN_MASK < 1 << 23;
        if let Some((q, l)) = release {
            for k in q * DEPTH..(q + 1) * DEPTH {
                if covers(l, self.m_psn_q[k]) {
                    self.m_rd_q[k] = false;
                }
            }
        }
        if push && i.cpl_uc {
            self.uc_mem_q[self.uc_wr_q as usize & (DEPTH - 1)] = e;
            self.uc_wr_q = (self.uc_wr_q + 1) & PTR_MASK;
            uc_cnt += 1;
        } else if push {
            let k = slot(cq_, self.tail_q[cq_]);
            self.mem_q[k] = Entry { qp: 0, ..e };
            self.idx_mem_q[k] = i.cpl_idx;
            self.m_psn_q[k] = i.cpl_psn & PSN_MASK;
            self.m_ok_q[k] = i.cpl_status == cqe_status::SUCCESS;
            self.m_rd_q[k] = i.cpl_opcode == wc_op::RDMA_READ
                && !release.is_some_and(|(q, l)| q == cq_ && covers(l, i.cpl_psn & PSN_MASK));
            self.tail_q[cq_] = (self.tail_q[cq_] + 1) & PTR_MASK;
        }
        self.uc_cnt_q = uc_cnt;

        // ---- full and cpl_ready from the counts after this cycle ----
        let mut all_room = (uc_cnt as usize) < DEPTH;
        self.full_q = 0;
        for q in 0..QPS {
            let n = count(self.head_q[q], self.tail_q[q]) as usize;
            all_room &= n < DEPTH;
            if n >= DEPTH - 2 {
                self.full_q |= 1 << q;
            }
        }
        // A completion offered and not taken is offered again (valid/ready):
        // it needs room in its own queue; after a transfer (or with none
        // offered) the next one may go anywhere.
        self.cpl_ready_q = if i.cpl_valid && !push {
            if i.cpl_uc {
                (uc_cnt as usize) < DEPTH
            } else {
                (count(self.head_q[cq_], self.tail_q[cq_]) as usize) < DEPTH
            }
        } else {
            all_room
        };
        self.outputs()
    }
}

/// An entry as the RTL packs it: `{wait_frame, wr_id, status, opcode, len,
/// imm, cq}` (EW bits), with the QP number below when the register is that
/// much wider (`uc_mem_q`, `out_q`: `{e, qp}`).
impl TraceValue for Entry {
    fn put(&self, w: u32, b: &mut Bits) {
        if w > 145 + CQW {
            b.push(self.qp as u64, QPW);
        }
        b.push(self.cq as u64, CQW);
        b.push(self.imm as u64, 32);
        b.push(self.len as u64, 32);
        b.push(self.opcode as u64, 8);
        b.push(self.status as u64, 8);
        b.push(self.wr_id, 64);
        b.push(self.wait_frame as u64, 1);
    }
}

impl Trace for AckTracker {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("cpl_ready_q", 1, &self.cpl_ready_q);
        t.reg("uc_wr_q", 4, &self.uc_wr_q);
        t.reg("uc_rd_q", 4, &self.uc_rd_q);
        t.reg("uc_cnt_q", 4, &self.uc_cnt_q);
        t.reg("m_psn_q", 3072, &self.m_psn_q);
        t.reg("m_ok_q", 128, &self.m_ok_q);
        t.reg("m_rd_q", 128, &self.m_rd_q);
        t.reg("head_q", 64, &self.head_q);
        t.reg("tail_q", 64, &self.tail_q);
        t.reg("una_q", 384, &self.una_q);
        t.reg("nxt_q", 384, &self.nxt_q);
        t.reg("err_q", 16, &self.err_q);
        t.reg("err_st_q", 64, &self.err_st_q);
        t.reg("rr_q", 4, &self.rr_q);
        t.reg("b_valid_q", 1, &self.b_valid_q);
        t.reg("b_uc_q", 1, &self.b_uc_q);
        t.reg("b_qp_q", 4, &self.b_qp_q);
        t.reg("b_err_q", 1, &self.b_err_q);
        t.reg("b_st_q", 4, &self.b_st_q);
        t.reg("out_valid_q", 1, &self.out_valid_q);
        t.reg("full_q", 16, &self.full_q);
        t.reg("ev_ack_q", 1, &self.ev_ack_q);
        t.reg("ev_nak_q", 1, &self.ev_nak_q);
        t.reg("ev_dup_q", 1, &self.ev_dup_q);
        t.reg("ev_ack_invalid_q", 1, &self.ev_ack_invalid_q);
        t.reg("err_valid_q", 1, &self.err_valid_q);
        t.reg("err_qp_q", 4, &self.err_qp_q);
        t.reg("ev_rd_done_q", 1, &self.ev_rd_done_q);
        t.reg("b_idx_q", 16, &self.b_idx_q);
        t.reg("b_psn_q", 24, &self.b_psn_q);
        t.reg("nak_valid_q", 1, &self.nak_valid_q);
        t.reg("nak_rnr_q", 1, &self.nak_rnr_q);
        t.reg("nak_qp_q", 4, &self.nak_qp_q);
        t.reg("nak_psn_q", 24, &self.nak_psn_q);
        t.reg("nak_timer_q", 5, &self.nak_timer_q);
        t.reg("busy_q", 16, &self.busy_q);
        t.reg("xp_valid_q", 1, &self.xp_valid_q);
        t.reg("xp_qp_q", 4, &self.xp_qp_q);
        t.reg("xp_st_q", 4, &self.xp_st_q);
        t.reg("anc_valid_q", 1, &self.anc_valid_q);
        t.reg("anc_qp_q", 4, &self.anc_qp_q);
        t.reg("anc_idx_q", 16, &self.anc_idx_q);
        t.reg("anc_psn_q", 24, &self.anc_psn_q);
        t.each("uc_mem_q", 145 + CQW + QPW, &self.uc_mem_q);
        t.reg("rd_data_q", 145 + CQW, &self.rd_data_q);
        t.reg("b_uc_data_q", 145 + CQW + QPW, &self.b_uc_data_q);
        t.reg("out_q", 145 + CQW + QPW, &self.out_q);
    }
}

#[cfg(test)]
mod tests;
