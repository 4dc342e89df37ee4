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
//! Storage: the RC entries' bulk fields (wait_frame, wr_id, status, opcode,
//! len, imm, cq) in one RAM of `QPS * DEPTH` entries at address
//! `qp * DEPTH + slot` (one write port, registered read); the last PSN and a
//! "success" bit of every entry in flops (every QP's head is looked at every
//! cycle); per QP head and tail pointers of `DW + 1` bits (count = tail -
//! head), `una` and `nxt`. The UC FIFO holds `DEPTH` entries in flops.
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

/// CQs (CQW = 2).
pub use crate::params::CQS;
/// QPs (QPW = 4).
pub use crate::params::QPS;
use crate::params::{cqe_status, wqe_op};
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
        pub out_ready: bool = 1,
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
        pub ev_ack: bool = 1,
        pub ev_nak: bool = 1,
        pub ev_dup: bool = 1,
        pub ev_ack_invalid: bool = 1,
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

#[derive(Debug, Clone)]
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
    /// A successful RDMA READ never leaves: its completion needs the READ
    /// response data, not handled yet (it holds its QP's queue).
    m_rd_q: [bool; QPS * DEPTH],
    head_q: [u8; QPS],
    tail_q: [u8; QPS],
    /// Per QP: the oldest unacknowledged PSN and the next PSN to be sent.
    una_q: [u32; QPS],
    nxt_q: [u32; QPS],
    rr_q: u8,
    // Stage B: the RAM's read register, or the UC entry.
    rd_data_q: Entry,
    b_valid_q: bool,
    b_uc_q: bool,
    b_qp_q: u8,
    b_uc_data_q: Entry,
    // Outputs.
    out_valid_q: bool,
    out_q: Entry,
    full_q: u16,
    ev_ack_q: bool,
    ev_nak_q: bool,
    ev_dup_q: bool,
    ev_ack_invalid_q: bool,
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
            rr_q: 0,
            rd_data_q: Entry::default(),
            b_valid_q: false,
            b_uc_q: false,
            b_qp_q: 0,
            b_uc_data_q: Entry::default(),
            out_valid_q: false,
            out_q: Entry::default(),
            full_q: 0,
            ev_ack_q: false,
            ev_nak_q: false,
            ev_dup_q: false,
            ev_ack_invalid_q: false,
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
            ev_ack: self.ev_ack_q,
            ev_nak: self.ev_nak_q,
            ev_dup: self.ev_dup_q,
            ev_ack_invalid: self.ev_ack_invalid_q,
        }
    }

    /// QP q's head may leave: an error / flush, or a success whose last PSN
    /// l is covered, i.e. one of the 2^23 PSNs before `una`:
    /// `(una - 1 - l) mod 2^24 < 2^23`.
    fn head_ready(&self, q: usize) -> bool {
        if count(self.head_q[q], self.tail_q[q]) == 0 {
            return false;
        }
        let k = slot(q, self.head_q[q]);
        if !self.m_ok_q[k] {
            return true;
        }
        if self.m_rd_q[k] {
            return false;
        }
        let d = self.una_q[q].wrapping_sub(1).wrapping_sub(self.m_psn_q[k]) & PSN_MASK;
        d < 1 << 23
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
        // The window before this cycle's updates, as the RTL's registers.
        let mut una_d = self.una_q;
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
                0b000 if off < win => {
                    una_d[q] = (p + 1) & PSN_MASK;
                    self.ev_ack_q = true;
                }
                0b000 if behind => self.ev_dup_q = true,
                0b000 => self.ev_ack_invalid_q = true,
                // NAK and RNR NAK name the PSN the responder expected, at
                // most nxt: counted only (retransmission is a later issue).
                0b011 | 0b001 if off <= win => self.ev_nak_q = true,
                0b011 | 0b001 => self.ev_ack_invalid_q = true,
                // Reserved syndromes: nothing.
                _ => {}
            }
        }
        // A packet's report wins over a software restart of its QP in the
        // same cycle (csr keeps psn_wr's PSN over the MMIO write's); a
        // restart wins over the ACK.
        let snd_q = i.snd_valid.then_some(i.snd_qp as usize & (QPS - 1));
        if let Some(q) = snd_q {
            self.nxt_q[q] = i.snd_nxt & PSN_MASK;
        }
        if i.psn_set_valid {
            let q = i.psn_set_qp as usize & (QPS - 1);
            if snd_q != Some(q) {
                self.nxt_q[q] = i.psn_set_psn & PSN_MASK;
                una_d[q] = i.psn_set_psn & PSN_MASK;
            }
        }
        self.una_q = una_d;

        // ---- output register ----
        if b_move {
            self.out_valid_q = true;
            self.out_q = if self.b_uc_q {
                self.b_uc_data_q
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
            self.rd_data_q = self.mem_q[slot(q, self.head_q[q])];
        } else if b_move {
            self.b_valid_q = false;
        }

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
        if push && i.cpl_uc {
            self.uc_mem_q[self.uc_wr_q as usize & (DEPTH - 1)] = e;
            self.uc_wr_q = (self.uc_wr_q + 1) & PTR_MASK;
            uc_cnt += 1;
        } else if push {
            let k = slot(cq_, self.tail_q[cq_]);
            self.mem_q[k] = Entry { qp: 0, ..e };
            self.m_psn_q[k] = i.cpl_psn & PSN_MASK;
            self.m_ok_q[k] = i.cpl_status == cqe_status::SUCCESS;
            self.m_rd_q[k] = i.cpl_opcode == wqe_op::READ;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the model cycle by cycle, out_ready high unless told, and
    /// records what it shows: (cycle visible, entry) of every output
    /// transfer, and the event pulses.
    struct H {
        m: AckTracker,
        o: AckTrackerOut,
        cycle: u64,
        outs: Vec<(u64, Entry)>,
        acks: u32,
        naks: u32,
        dups: u32,
        invalid: u32,
        /// out_ready low.
        hold: bool,
    }

    impl H {
        fn new() -> H {
            let mut m = AckTracker::new();
            let o = m.reset();
            H {
                m,
                o,
                cycle: 0,
                outs: vec![],
                acks: 0,
                naks: 0,
                dups: 0,
                invalid: 0,
                hold: false,
            }
        }

        /// One cycle with `i` (out_ready forced high unless `hold`).
        fn step_with(&mut self, mut i: AckTrackerIn, hold: bool) -> bool {
            i.out_ready = !hold;
            let o = self.o;
            if o.out_valid && i.out_ready {
                self.outs.push((
                    self.cycle,
                    Entry {
                        wait_frame: o.out_wait_frame,
                        wr_id: o.out_wr_id,
                        status: o.out_status,
                        opcode: o.out_opcode,
                        len: o.out_len,
                        imm: o.out_imm,
                        qp: o.out_qp,
                        cq: o.out_cq,
                    },
                ));
            }
            self.acks += o.ev_ack as u32;
            self.naks += o.ev_nak as u32;
            self.dups += o.ev_dup as u32;
            self.invalid += o.ev_ack_invalid as u32;
            let took = i.cpl_valid && o.cpl_ready;
            self.o = self.m.tick(&i);
            self.cycle += 1;
            took
        }

        fn step(&mut self, i: AckTrackerIn) -> bool {
            self.step_with(i, self.hold)
        }

        fn idle(&mut self, n: u64) {
            for _ in 0..n {
                self.step(AckTrackerIn::default());
            }
        }

        /// Offers `i` until it is taken; returns the transfer cycle.
        fn push(&mut self, i: AckTrackerIn) -> u64 {
            for _ in 0..100 {
                let c = self.cycle;
                if self.step(i) {
                    return c;
                }
            }
            panic!("completion not taken");
        }

        fn wr_ids(&self) -> Vec<u64> {
            self.outs.iter().map(|(_, e)| e.wr_id).collect()
        }

        /// (ev_ack, ev_dup, ev_nak, ev_ack_invalid) counted so far.
        fn events(&self) -> (u32, u32, u32, u32) {
            (self.acks, self.dups, self.naks, self.invalid)
        }

        /// One ACK / NAK, then a cycle for its event to show.
        fn ack_ev(&mut self, qp: u8, psn: u32, syndrome: u8) -> (u32, u32, u32, u32) {
            let before = self.events();
            self.step(ack(qp, psn, syndrome));
            self.idle(1);
            let e = self.events();
            (
                e.0 - before.0,
                e.1 - before.1,
                e.2 - before.2,
                e.3 - before.3,
            )
        }
    }

    /// tx_engine committed packets of `qp` up to (not including) `nxt`.
    fn snd(qp: u8, nxt: u32) -> AckTrackerIn {
        AckTrackerIn {
            snd_valid: true,
            snd_qp: qp,
            snd_nxt: nxt,
            ..Default::default()
        }
    }

    /// Software set `qp`'s PSN.
    fn set(qp: u8, psn: u32) -> AckTrackerIn {
        AckTrackerIn {
            psn_set_valid: true,
            psn_set_qp: qp,
            psn_set_psn: psn,
            ..Default::default()
        }
    }

    const NEW: (u32, u32, u32, u32) = (1, 0, 0, 0);
    const DUP: (u32, u32, u32, u32) = (0, 1, 0, 0);
    const NAK: (u32, u32, u32, u32) = (0, 0, 1, 0);
    const INVALID: (u32, u32, u32, u32) = (0, 0, 0, 1);
    const NOTHING: (u32, u32, u32, u32) = (0, 0, 0, 0);

    fn cpl(uc: bool, qp: u8, wr_id: u64, status: u8, psn: u32) -> AckTrackerIn {
        AckTrackerIn {
            cpl_valid: true,
            cpl_wait_frame: uc && status == 0,
            cpl_wr_id: wr_id,
            cpl_status: status,
            cpl_opcode: 2,
            cpl_len: 100 + wr_id as u32,
            cpl_imm: 0xAB00 + wr_id as u32,
            cpl_qp: qp,
            cpl_cq: 3,
            cpl_uc: uc,
            cpl_psn: psn,
            ..Default::default()
        }
    }

    fn ack(qp: u8, psn: u32, syndrome: u8) -> AckTrackerIn {
        AckTrackerIn {
            ack_valid: true,
            ack_qp: qp,
            ack_psn: psn,
            ack_syndrome: syndrome,
            ..Default::default()
        }
    }

    #[test]
    fn uc_passes_straight_through_at_n_plus_3() {
        let mut h = H::new();
        h.idle(1);
        let n = h.push(cpl(true, 5, 1, 0, 77));
        let m = h.push(cpl(true, 6, 2, 4, 0));
        h.idle(6);
        let e = Entry {
            wait_frame: true,
            wr_id: 1,
            status: 0,
            opcode: 2,
            len: 101,
            imm: 0xAB01,
            qp: 5,
            cq: 3,
        };
        assert_eq!(
            h.outs,
            vec![
                (n + 3, e),
                (
                    m + 3,
                    Entry {
                        wait_frame: false,
                        wr_id: 2,
                        status: 4,
                        len: 102,
                        imm: 0xAB02,
                        qp: 6,
                        ..e
                    }
                )
            ]
        );
    }

    #[test]
    fn rc_success_waits_for_the_ack_of_its_last_psn() {
        let mut h = H::new();
        h.idle(1);
        h.step(set(2, 9));
        h.step(snd(2, 11));
        h.push(cpl(false, 2, 1, 0, 10));
        h.idle(20);
        h.step(ack(2, 9, 0));
        h.idle(20);
        assert!(h.outs.is_empty(), "PSN 10 is not acknowledged by 9");
        let a = h.cycle;
        h.step(ack(2, 10, 0x1F)); // ACK, credit bits anything
        h.idle(5);
        assert_eq!(h.outs.len(), 1);
        assert_eq!(h.outs[0].0, a + 3);
        assert_eq!((h.outs[0].1.qp, h.outs[0].1.wr_id), (2, 1));
        assert!(!h.outs[0].1.wait_frame);
        assert_eq!((h.acks, h.dups, h.naks), (2, 0, 0));
    }

    #[test]
    fn read_success_never_leaves_and_holds_its_queue() {
        let mut h = H::new();
        h.idle(1);
        // A successful READ (opcode 4, last PSN 5), then a flush behind it.
        h.push(AckTrackerIn {
            cpl_opcode: 4,
            ..cpl(false, 1, 1, 0, 5)
        });
        h.push(cpl(false, 1, 2, 5, 0));
        h.step(snd(1, 101));
        h.idle(5);
        h.step(ack(1, 100, 0));
        h.idle(50);
        assert!(
            h.outs.is_empty(),
            "a READ needs its response data, not an ACK"
        );
        assert_eq!(h.acks, 1);
    }

    #[test]
    fn errors_and_flushes_wait_behind_unacknowledged_successes() {
        let mut h = H::new();
        h.idle(1);
        h.push(cpl(false, 1, 1, 0, 5));
        h.push(cpl(false, 1, 2, 4, 0)); // protection error
        h.push(cpl(false, 1, 3, 5, 0)); // flush
        h.push(cpl(false, 7, 4, 5, 0)); // another QP's flush: nothing ahead
        h.step(snd(1, 6));
        h.idle(10);
        assert_eq!(h.wr_ids(), vec![4]);
        let a = h.cycle;
        h.step(ack(1, 5, 0));
        h.idle(10);
        assert_eq!(h.wr_ids(), vec![4, 1, 2, 3]);
        // One per cycle from n+3.
        let t: Vec<u64> = h.outs[1..].iter().map(|x| x.0).collect();
        assert_eq!(t, vec![a + 3, a + 4, a + 5]);
    }

    #[test]
    fn coalesced_ack_releases_every_covered_message() {
        let mut h = H::new();
        h.idle(1);
        h.step(snd(3, 9));
        for (k, psn) in [1u32, 2, 7, 8].into_iter().enumerate() {
            h.push(cpl(false, 3, k as u64, 0, psn));
        }
        h.step(ack(3, 7, 0));
        h.idle(10);
        assert_eq!(h.wr_ids(), vec![0, 1, 2]);
        h.step(ack(3, 8, 0));
        h.idle(10);
        assert_eq!(h.wr_ids(), vec![0, 1, 2, 3]);
    }

    #[test]
    fn window_rule_literal_cases() {
        let mut h = H::new();
        h.idle(1);
        // QP 0 at PSN 100, four PSNs sent: the window is [100, 104).
        h.step(set(0, 100));
        h.step(snd(0, 101));
        h.step(snd(0, 104));
        h.idle(1);
        assert_eq!(h.ack_ev(0, 99, 0), DUP, "1 before una");
        assert_eq!(h.ack_ev(0, 104, 0), INVALID, "nxt: never sent");
        assert_eq!(h.ack_ev(0, 105, 0), INVALID, "beyond nxt");
        assert_eq!(
            h.ack_ev(0, 100 + 0x80_0000, 0),
            INVALID,
            "exactly 2^23 ahead"
        );
        assert_eq!(h.ack_ev(0, 100 + 0x7F_FFFF, 0), INVALID, "2^23 - 1 ahead");
        assert_eq!(
            h.ack_ev(0, 100 + 0x80_0001, 0),
            DUP,
            "2^23 + 1 ahead = 2^23 - 1 before"
        );
        assert_eq!(h.ack_ev(0, 101, 0x1F), NEW, "inside, any credit bits");
        assert_eq!(h.ack_ev(0, 101, 0), DUP, "the same again");
        assert_eq!(h.ack_ev(0, 100, 0), DUP, "older");
        // The window is [102, 104): NAKs name a PSN in [una, nxt].
        assert_eq!(h.ack_ev(0, 101, 0x60), INVALID, "NAK before una");
        assert_eq!(h.ack_ev(0, 102, 0x60), NAK, "NAK at una");
        assert_eq!(h.ack_ev(0, 104, 0x61), NAK, "NAK at nxt");
        assert_eq!(h.ack_ev(0, 105, 0x60), INVALID, "NAK beyond nxt");
        assert_eq!(h.ack_ev(0, 103, 0x20), NAK, "RNR NAK inside");
        assert_eq!(
            h.ack_ev(0, 102 + 0x80_0000, 0x20),
            INVALID,
            "RNR NAK 2^23 ahead"
        );
        assert_eq!(h.ack_ev(0, 103, 0x40), NOTHING, "reserved syndrome");
        assert_eq!(h.ack_ev(0, 103, 0xE0), NOTHING, "reserved syndrome");
        // The edge: nxt - 1 empties the window; then nothing is valid but a
        // NAK at nxt.
        assert_eq!(h.ack_ev(0, 103, 0), NEW, "nxt - 1");
        assert_eq!(h.ack_ev(0, 104, 0), INVALID, "empty window");
        assert_eq!(h.ack_ev(0, 103, 0), DUP);
        assert_eq!(h.ack_ev(0, 104, 0x60), NAK);
        // The other QPs never changed: their windows are [0, 0).
        assert_eq!(h.ack_ev(5, 0, 0), INVALID, "a QP that sent nothing");
        assert_eq!(h.ack_ev(5, 0xFF_FFFF, 0), DUP, "1 before its una 0");
        assert_eq!(h.ack_ev(5, 0, 0x60), NAK, "NAK at its nxt 0");
        assert_eq!(h.ack_ev(5, 1, 0x60), INVALID);
    }

    #[test]
    fn exactly_2_23_ahead_of_the_outstanding_work_releases_nothing() {
        let mut h = H::new();
        h.idle(1);
        // PSN 7..14, eight signaled WRITEs; 7..10 acknowledged.
        h.step(set(0, 7));
        h.step(snd(0, 15));
        for k in 0..8u32 {
            h.push(cpl(false, 0, k as u64, 0, 7 + k));
        }
        assert_eq!(h.ack_ev(0, 10, 0), NEW);
        h.idle(8);
        assert_eq!(h.wr_ids(), vec![0, 1, 2, 3]);
        // The first outstanding PSN is 11: 2^23 ahead of it, 2^23 ahead of
        // the last acknowledged one, far beyond, a NAK beyond nxt.
        assert_eq!(h.ack_ev(0, 11 + 0x80_0000, 0), INVALID);
        assert_eq!(
            h.ack_ev(0, 10 + 0x80_0000, 0),
            INVALID,
            "2^23 ahead of the last acknowledged PSN"
        );
        assert_eq!(h.ack_ev(0, 12 + 0x80_0000, 0), DUP, "2^23 - 1 before una");
        assert_eq!(h.ack_ev(0, 1011, 0), INVALID);
        assert_eq!(h.ack_ev(0, 111, 0x60), INVALID);
        h.idle(20);
        assert_eq!(h.wr_ids(), vec![0, 1, 2, 3], "nothing released");
        // The real ACK still works.
        assert_eq!(h.ack_ev(0, 14, 0), NEW);
        h.idle(10);
        assert_eq!(h.wr_ids(), (0..8).collect::<Vec<u64>>());
    }

    #[test]
    fn window_across_the_psn_wrap() {
        let mut h = H::new();
        h.idle(1);
        // PSN 0xFFFFFE, 0xFFFFFF, 0, 1 sent; successes end at 0xFFFFFF and 1.
        h.step(set(0, 0xFF_FFFE));
        h.step(snd(0, 0));
        h.step(snd(0, 2));
        h.push(cpl(false, 0, 1, 0, 0xFF_FFFF));
        h.push(cpl(false, 0, 2, 0, 1));
        assert_eq!(h.ack_ev(0, 2, 0), INVALID, "nxt");
        assert_eq!(h.ack_ev(0, 0xFF_FFFD, 0), DUP);
        assert_eq!(h.ack_ev(0, 0, 0), NEW);
        h.idle(8);
        assert_eq!(h.wr_ids(), vec![1]);
        assert_eq!(h.ack_ev(0, 0xFF_FFFF, 0), DUP);
        assert_eq!(h.ack_ev(0, 1, 0), NEW);
        h.idle(8);
        assert_eq!(h.wr_ids(), vec![1, 2]);
    }

    #[test]
    fn same_cycle_report_restart_and_ack() {
        let mut h = H::new();
        h.idle(1);
        // A packet's report and its ACK in one cycle: not sent yet.
        h.step(AckTrackerIn {
            snd_valid: true,
            snd_qp: 2,
            snd_nxt: 1,
            ..ack(2, 0, 0)
        });
        h.idle(1);
        assert_eq!(h.events(), INVALID);
        assert_eq!(h.ack_ev(2, 0, 0), NEW);
        // A report wins over a restart of the same QP: the window is
        // [1, 5), not [500, 500).
        h.step(AckTrackerIn {
            snd_valid: true,
            snd_qp: 2,
            snd_nxt: 5,
            ..set(2, 500)
        });
        assert_eq!(h.ack_ev(2, 500, 0x60), INVALID);
        assert_eq!(h.ack_ev(2, 3, 0), NEW);
        // A report for another QP does not stop the restart.
        h.step(AckTrackerIn {
            snd_valid: true,
            snd_qp: 3,
            snd_nxt: 9,
            ..set(2, 500)
        });
        assert_eq!(h.ack_ev(2, 499, 0), DUP);
        assert_eq!(h.ack_ev(2, 500, 0x60), NAK);
        assert_eq!(h.ack_ev(3, 8, 0), NEW);
        // A restart wins over an ACK of the same cycle (which still counts).
        h.step(snd(2, 510));
        let acks = h.acks;
        h.step(AckTrackerIn {
            psn_set_valid: true,
            psn_set_qp: 2,
            psn_set_psn: 600,
            ..ack(2, 505, 0)
        });
        h.idle(1);
        assert_eq!(h.acks, acks + 1, "judged against [500, 510)");
        assert_eq!(h.ack_ev(2, 506, 0), DUP, "the window is [600, 600)");
        assert_eq!(h.ack_ev(2, 600, 0), INVALID);
    }

    #[test]
    fn uc_first_then_round_robin_over_qps() {
        let mut h = H::new();
        h.idle(1);
        h.push(cpl(false, 1, 11, 0, 1));
        h.push(cpl(false, 1, 12, 0, 2));
        h.push(cpl(false, 2, 21, 0, 1));
        h.push(cpl(false, 2, 22, 0, 2));
        h.step(snd(1, 3));
        h.step(snd(2, 3));
        h.step(ack(2, 2, 0)); // QP 2 alone first: rr moves to 3
        h.step(ack(1, 2, 0));
        h.idle(10);
        assert_eq!(h.wr_ids(), vec![21, 11, 22, 12]);
        // UC first: the output held, so that UC and RC heads compete.
        let mut h = H::new();
        h.idle(1);
        h.hold = true;
        for w in [41, 42, 43] {
            h.push(cpl(false, 4, w, 5, 0)); // flushes: ready at once
        }
        h.push(cpl(true, 9, 91, 0, 0));
        h.push(cpl(true, 9, 92, 0, 0));
        h.hold = false;
        h.idle(10);
        // 41 (out register) and 42 (stage B) were taken while alone; then
        // the UC ones win over 43.
        assert_eq!(h.wr_ids(), vec![41, 42, 91, 92, 43]);
    }

    #[test]
    fn full_and_cpl_ready_never_lose_an_entry() {
        let mut h = H::new();
        h.idle(1);
        // QP 4: successes PSN 0.. never acknowledged: DEPTH fit.
        h.step(snd(4, 100));
        let mut taken = 0;
        let mut full_at = None;
        for _ in 0..40 {
            if h.o.full >> 4 & 1 == 1 && full_at.is_none() {
                full_at = Some(taken);
            }
            if h.step(cpl(false, 4, taken, 0, taken as u32)) {
                taken += 1;
            }
        }
        assert_eq!(taken as usize, DEPTH);
        assert_eq!(full_at, Some(DEPTH as u64 - 2));
        assert_eq!(h.o.full, 1 << 4);
        // The 9th waits; other queues are empty but it is QP 4's.
        assert!(!h.o.cpl_ready);
        h.step(ack(4, 3, 0)); // releases PSNs 0..3
        let mut n = 0;
        while !h.step(cpl(false, 4, taken, 0, taken as u32)) {
            n += 1;
            assert!(n < 10);
        }
        h.step(ack(4, 8, 0));
        h.idle(20);
        assert_eq!(h.wr_ids(), (0..=8).collect::<Vec<u64>>());
        assert_eq!(h.o.full, 0);
    }

    #[test]
    fn held_output_keeps_its_entry() {
        let mut h = H::new();
        h.idle(1);
        h.push(cpl(true, 1, 1, 0, 0));
        h.push(cpl(true, 1, 2, 0, 0));
        h.push(cpl(true, 1, 3, 0, 0));
        for _ in 0..10 {
            h.step_with(AckTrackerIn::default(), true);
        }
        assert!(h.o.out_valid && h.o.out_wr_id == 1);
        h.idle(10);
        assert_eq!(h.wr_ids(), vec![1, 2, 3]);
    }
}
