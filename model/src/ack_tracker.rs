//! `ack_tracker`: RC completions wait for their ACK. Model of
//! `hw/rtl/ack_tracker.sv` (docs/rx_cc.md, "`ack_tracker`").
//!
//! tx_engine's completions come in on `cpl_*`. UC ones (`cpl_uc`) pass
//! through a FIFO in arrival order (cq_writer pairs wait_frame completions
//! with frames in that order). RC ones (success, error, flush) queue per QP
//! in order; a QP's head may leave when it is an error / flush, or a success
//! whose last PSN (`cpl_psn`) is covered by the QP's acknowledged PSN.
//! ACKs from rx_parser move the acknowledged PSN forward (24-bit modular
//! window, duplicates counted and ignored, the first ACK of a QP since reset
//! always taken); NAK and RNR NAK are only counted.
//!
//! Storage: the RC entries' bulk fields (wait_frame, wr_id, status, opcode,
//! len, imm, cq) in one RAM of `QPS * DEPTH` entries at address
//! `qp * DEPTH + slot` (one write port, registered read); the last PSN and a
//! "success" bit of every entry in flops (every QP's head is looked at every
//! cycle); per QP head and tail pointers of `DW + 1` bits (count = tail -
//! head). The UC FIFO holds `DEPTH` entries in flops.
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
//! n that covers a waiting head: visible at n+3. `cpl_ready` (registered)
//! is high when the completion it will take has room: while a completion
//! waits untaken (`cpl_valid` and not ready, so the same one is offered
//! next cycle) it is its own queue's room; otherwise (the next one is
//! unknown) every queue must have room. `full[q]` (registered) = QP q's
//! queue holds `DEPTH - 2` entries or more after this cycle. Pulses
//! `ev_ack`, `ev_nak`, `ev_dup` are visible the cycle after the ACK.

use crate::dut::Dut;
use crate::ports;

/// QPs (QPW = 4).
pub const QPS: usize = 16;
/// CQs (CQW = 2).
pub const CQS: usize = 4;
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
    /// Per QP: the acknowledged PSN, valid once `seen_q` bit q is set.
    acked_q: [u32; QPS],
    seen_q: u16,
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
            acked_q: [0; QPS],
            seen_q: 0,
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
        }
    }

    /// QP q's head may leave: an error / flush, or a success whose last PSN
    /// l is covered by the acknowledged PSN a: `(a - l) mod 2^24 < 2^23`.
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
        let d = self.acked_q[q].wrapping_sub(self.m_psn_q[k]) & PSN_MASK;
        self.seen_q >> q & 1 == 1 && d < 1 << 23
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
        if i.ack_valid {
            let q = i.ack_qp as usize & (QPS - 1);
            let p = i.ack_psn & PSN_MASK;
            match i.ack_syndrome >> 5 {
                0b000 => {
                    let d = p.wrapping_sub(self.acked_q[q]) & PSN_MASK;
                    // Newer: (p - a) mod 2^24 in 1 .. 2^23 - 1; the first
                    // ACK of the QP is always taken.
                    if self.seen_q >> q & 1 == 0 || (d != 0 && d < 1 << 23) {
                        self.acked_q[q] = p;
                        self.seen_q |= 1 << q;
                        self.ev_ack_q = true;
                    } else {
                        self.ev_dup_q = true;
                    }
                }
                // NAK and RNR NAK: counted only (retransmission is a later
                // issue). Other (reserved) syndromes: nothing.
                0b011 | 0b001 => self.ev_nak_q = true,
                _ => {}
            }
        }

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
            self.m_ok_q[k] = i.cpl_status == 0;
            self.m_rd_q[k] = i.cpl_opcode == 4;
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
    }

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
    fn ack_windows_duplicates_and_naks() {
        let mut h = H::new();
        h.idle(1);
        // First ACK of a QP: taken whatever its PSN.
        h.step(ack(0, 100, 0));
        h.step(ack(0, 100, 0)); // same: duplicate
        h.step(ack(0, 99, 0)); // older: duplicate
        h.step(ack(0, 100 + 0x7F_FFFF, 0)); // 2^23 - 1 ahead: newer
        h.step(ack(0, 100 + 0x7F_FFFF + 0x80_0000, 0)); // 2^23 ahead: duplicate
        h.idle(2);
        assert_eq!((h.acks, h.dups), (2, 3));
        // Across the wrap: 0x80_0063 -> 0x10 is 0x7F_FFAD ahead.
        h.step(ack(0, 0x10, 0));
        h.idle(2);
        assert_eq!((h.acks, h.dups), (3, 3));
        // A success with last PSN 0xFF_FFFE is covered by 0x10.
        h.push(cpl(false, 0, 9, 0, 0xFF_FFFE));
        // And one with 0x11 is not.
        h.push(cpl(false, 0, 10, 0, 0x11));
        h.idle(8);
        assert_eq!(h.wr_ids(), vec![9]);
        // NAK (011), RNR NAK (001): counted only; reserved (010): nothing.
        h.step(ack(0, 0x11, 0x60));
        h.step(ack(0, 0x11, 0x20));
        h.step(ack(0, 0x11, 0x40));
        h.idle(8);
        assert_eq!((h.acks, h.dups, h.naks), (3, 3, 2));
        assert_eq!(h.wr_ids(), vec![9]);
    }

    #[test]
    fn uc_first_then_round_robin_over_qps() {
        let mut h = H::new();
        h.idle(1);
        h.push(cpl(false, 1, 11, 0, 1));
        h.push(cpl(false, 1, 12, 0, 2));
        h.push(cpl(false, 2, 21, 0, 1));
        h.push(cpl(false, 2, 22, 0, 2));
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
