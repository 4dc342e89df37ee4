//! Directed tests of the `ack_tracker` model.

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
    /// ev_rd_done pulses.
    rdd: u32,
    /// (cycle visible, err_qp) of every err_valid pulse.
    errs: Vec<(u64, u8)>,
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
            rdd: 0,
            errs: vec![],
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
        self.rdd += o.ev_rd_done as u32;
        if o.err_valid {
            self.errs.push((self.cycle, o.err_qp));
        }
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
        cpl_wait_frame: uc && status == cqe_status::SUCCESS,
        cpl_wr_id: wr_id,
        cpl_status: status,
        cpl_opcode: wc_op::RDMA_WRITE,
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
    let n = h.push(cpl(true, 5, 1, cqe_status::SUCCESS, 77));
    let m = h.push(cpl(true, 6, 2, cqe_status::LOC_PROT_ERR, 0));
    h.idle(6);
    let e = Entry {
        wait_frame: true,
        wr_id: 1,
        status: cqe_status::SUCCESS,
        opcode: wc_op::RDMA_WRITE,
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
                    status: cqe_status::LOC_PROT_ERR,
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
    h.push(cpl(false, 2, 1, cqe_status::SUCCESS, 10));
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
    // A successful READ (CQE opcode 2, last PSN 5), then a flush behind it.
    h.push(AckTrackerIn {
        cpl_opcode: wc_op::RDMA_READ,
        ..cpl(false, 1, 1, cqe_status::SUCCESS, 5)
    });
    h.push(cpl(false, 1, 2, cqe_status::WR_FLUSH_ERR, 0));
    h.step(snd(1, 101));
    h.idle(5);
    h.step(ack(1, 100, 0));
    h.idle(50);
    assert!(
        h.outs.is_empty(),
        "a READ needs its response data (rd_done), not an ACK"
    );
    assert_eq!(h.acks, 1);
}

#[test]
fn errors_and_flushes_wait_behind_unacknowledged_successes() {
    let mut h = H::new();
    h.idle(1);
    h.push(cpl(false, 1, 1, cqe_status::SUCCESS, 5));
    h.push(cpl(false, 1, 2, cqe_status::LOC_PROT_ERR, 0)); // protection error
    h.push(cpl(false, 1, 3, cqe_status::WR_FLUSH_ERR, 0)); // flush
    h.push(cpl(false, 7, 4, cqe_status::WR_FLUSH_ERR, 0)); // another QP's flush: nothing ahead
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
    assert_eq!(
        h.ack_ev(0, 104, 0x64),
        NAK,
        "NAK at nxt (code 4: counted only)"
    );
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
    h.push(cpl(false, 0, 1, cqe_status::SUCCESS, 0xFF_FFFF));
    h.push(cpl(false, 0, 2, cqe_status::SUCCESS, 1));
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
    h.push(cpl(false, 1, 11, cqe_status::SUCCESS, 1));
    h.push(cpl(false, 1, 12, cqe_status::SUCCESS, 2));
    h.push(cpl(false, 2, 21, cqe_status::SUCCESS, 1));
    h.push(cpl(false, 2, 22, cqe_status::SUCCESS, 2));
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
        h.push(cpl(false, 4, w, cqe_status::WR_FLUSH_ERR, 0)); // flushes: ready at once
    }
    h.push(cpl(true, 9, 91, cqe_status::SUCCESS, 0));
    h.push(cpl(true, 9, 92, cqe_status::SUCCESS, 0));
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
        if h.step(cpl(false, 4, taken, cqe_status::SUCCESS, taken as u32)) {
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
    while !h.step(cpl(false, 4, taken, cqe_status::SUCCESS, taken as u32)) {
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
    h.push(cpl(true, 1, 1, cqe_status::SUCCESS, 0));
    h.push(cpl(true, 1, 2, cqe_status::SUCCESS, 0));
    h.push(cpl(true, 1, 3, cqe_status::SUCCESS, 0));
    for _ in 0..10 {
        h.step_with(AckTrackerIn::default(), true);
    }
    assert!(h.o.out_valid && h.o.out_wr_id == 1);
    h.idle(10);
    assert_eq!(h.wr_ids(), vec![1, 2, 3]);
}

/// (wr_id, status, len) of every completion out so far.
fn outs3(h: &H) -> Vec<(u64, u8, u32)> {
    h.outs
        .iter()
        .map(|(_, e)| (e.wr_id, e.status, e.len))
        .collect()
}

#[test]
fn remote_error_nak_acknowledges_before_p_and_turns_the_rest() {
    let mut h = H::new();
    h.idle(1);
    // QP 2 from PSN 10: messages ending at 10, 12, 13, and a local error.
    h.step(set(2, 10));
    h.push(cpl(false, 2, 1, cqe_status::SUCCESS, 10));
    h.push(cpl(false, 2, 2, cqe_status::SUCCESS, 12));
    h.push(cpl(false, 2, 3, cqe_status::SUCCESS, 13));
    h.step(snd(2, 14));
    h.idle(5);
    assert!(h.outs.is_empty());
    // NAK 0x62 (remote access error) for PSN 11: 10 is acknowledged.
    let a = h.cycle;
    h.step(ack(2, 11, 0x62));
    h.idle(6);
    assert_eq!(h.errs, vec![(a + 1, 2)]);
    assert_eq!(h.naks, 1);
    assert_eq!(
        outs3(&h),
        vec![(1, 0, 101), (2, 10, 0), (3, 5, 0)],
        "covered success, the error, then flushed"
    );
    assert_eq!(h.outs[1].0, a + 4, "after the success released at a+3");
    // Pushed later, still in error mode: a success is flushed at once, a
    // local error keeps its status and length.
    h.push(cpl(false, 2, 4, cqe_status::SUCCESS, 14));
    h.push(cpl(false, 2, 5, cqe_status::LOC_PROT_ERR, 0));
    h.idle(6);
    assert_eq!(outs3(&h)[3..], [(4, 5, 0), (5, 4, 105)]);
    assert_eq!(h.errs.len(), 1);
}

#[test]
fn remote_error_status_per_code_and_other_naks_unchanged() {
    for (syn, st) in [(0x61u8, 9u8), (0x62, 10), (0x63, 11)] {
        let mut h = H::new();
        h.idle(1);
        h.push(cpl(false, 3, 1, cqe_status::SUCCESS, 0));
        h.step(snd(3, 1));
        let a = h.cycle;
        h.step(ack(3, 0, syn));
        h.idle(5);
        assert_eq!(
            h.outs,
            vec![(a + 3, h.outs[0].1)],
            "NAK at n: error CQE at n+3"
        );
        assert_eq!(outs3(&h), vec![(1, st, 0)], "syndrome {syn:#x}");
    }
    // Sequence error, reserved NAK codes, RNR NAK with codes 1..3: counted only.
    for syn in [0x60u8, 0x64, 0x7F, 0x21, 0x22, 0x23] {
        let mut h = H::new();
        h.idle(1);
        h.push(cpl(false, 3, 1, cqe_status::SUCCESS, 0));
        h.step(snd(3, 1));
        assert_eq!(h.ack_ev(3, 0, syn), NAK, "{syn:#x}");
        h.idle(10);
        assert!(h.outs.is_empty() && h.errs.is_empty(), "{syn:#x}");
        assert_eq!(h.ack_ev(3, 0, 0), NEW, "una did not move");
    }
    // Outside [una, nxt]: invalid, nothing else.
    let mut h = H::new();
    h.idle(1);
    h.step(snd(3, 4));
    assert_eq!(h.ack_ev(3, 5, 0x61), INVALID);
    assert_eq!(h.ack_ev(3, 0xFF_FFFF, 0x61), INVALID);
    assert!(h.errs.is_empty());
    assert_eq!(h.ack_ev(3, 0, 0), NEW);
}

#[test]
fn read_success_leaves_in_error_mode() {
    let mut h = H::new();
    h.idle(1);
    // A READ (span 0..3) and a SEND (4): a NAK for 4 covers the READ's
    // span, but a READ is never covered: it gets the error.
    h.push(AckTrackerIn {
        cpl_opcode: wc_op::RDMA_READ,
        ..cpl(false, 1, 1, cqe_status::SUCCESS, 3)
    });
    h.push(cpl(false, 1, 2, cqe_status::SUCCESS, 4));
    h.step(snd(1, 5));
    h.step(ack(1, 4, 0x63));
    h.idle(6);
    assert_eq!(outs3(&h), vec![(1, 11, 0), (2, 5, 0)]);
}

#[test]
fn error_mode_ignores_later_naks_and_acks_until_a_restart() {
    let mut h = H::new();
    h.idle(1);
    h.step(set(6, 100));
    h.step(snd(6, 110));
    h.push(cpl(false, 6, 1, cqe_status::SUCCESS, 104));
    h.push(cpl(false, 6, 2, cqe_status::SUCCESS, 109));
    h.hold = true; // both wait in the pipeline / queue
    assert_eq!(h.ack_ev(6, 102, 0x61), NAK);
    // Already in error mode: counted, no pulse, the status stays 9; an ACK
    // is counted but acknowledges nothing (una stays 102).
    assert_eq!(h.ack_ev(6, 103, 0x63), NAK);
    assert_eq!(h.ack_ev(6, 109, 0), NEW);
    assert_eq!(h.ack_ev(6, 103, 0), NEW, "una is still 102");
    assert_eq!(h.ack_ev(6, 101, 0), DUP);
    assert_eq!(h.errs.len(), 1);
    h.hold = false;
    h.idle(6);
    assert_eq!(outs3(&h), vec![(1, 9, 0), (2, 5, 0)]);
    // A restart ends error mode: a success waits for its ACK again.
    h.step(set(6, 200));
    h.push(cpl(false, 6, 3, cqe_status::SUCCESS, 200));
    h.step(snd(6, 201));
    h.idle(10);
    assert_eq!(h.outs.len(), 2);
    assert_eq!(h.ack_ev(6, 200, 0), NEW);
    h.idle(5);
    assert_eq!(outs3(&h)[2], (3, 0, 103));
    // And a new remote-error NAK is taken again.
    h.push(cpl(false, 6, 4, cqe_status::SUCCESS, 201));
    h.step(snd(6, 202));
    assert_eq!(h.ack_ev(6, 201, 0x62), NAK);
    h.idle(5);
    assert_eq!(outs3(&h)[3], (4, 10, 0));
    assert_eq!(h.errs.len(), 2);
}

#[test]
fn same_cycle_nak_restart_report_and_completion() {
    // A restart of the QP wins over its NAK (counted, nothing else).
    let mut h = H::new();
    h.idle(1);
    h.step(snd(2, 5));
    h.step(AckTrackerIn {
        psn_set_valid: true,
        psn_set_qp: 2,
        psn_set_psn: 50,
        ..ack(2, 3, 0x61)
    });
    h.idle(2);
    assert_eq!((h.naks, h.errs.len()), (1, 0));
    assert_eq!(h.ack_ev(2, 49, 0), DUP, "the window is [50, 50)");
    // A restart lost to a report of the QP: the NAK is taken.
    h.step(snd(2, 55));
    h.step(AckTrackerIn {
        snd_valid: true,
        snd_qp: 2,
        snd_nxt: 56,
        psn_set_valid: true,
        psn_set_qp: 2,
        psn_set_psn: 900,
        ..ack(2, 52, 0x61)
    });
    h.idle(2);
    assert_eq!(h.errs.len(), 1);
    assert_eq!(h.ack_ev(2, 51, 0), DUP, "una is 52");
    // A restart of another QP does not stop it.
    let mut h = H::new();
    h.idle(1);
    h.step(snd(2, 5));
    h.step(AckTrackerIn {
        psn_set_valid: true,
        psn_set_qp: 3,
        psn_set_psn: 50,
        ..ack(2, 3, 0x61)
    });
    h.idle(2);
    assert_eq!(h.errs, vec![(3, 2)]);
    // A completion pushed in the NAK's cycle is queued behind the ones
    // before it: the error goes to the first uncovered one, it is flushed.
    let mut h = H::new();
    h.idle(1);
    h.push(cpl(false, 4, 1, cqe_status::SUCCESS, 0));
    h.push(cpl(false, 4, 2, cqe_status::SUCCESS, 1));
    h.step(snd(4, 3));
    let n = h.cycle;
    assert!(h.step(AckTrackerIn {
        ack_valid: true,
        ack_qp: 4,
        ack_psn: 1,
        ack_syndrome: 0x61,
        ..cpl(false, 4, 3, cqe_status::SUCCESS, 2)
    }));
    h.idle(6);
    assert_eq!(outs3(&h), vec![(1, 0, 101), (2, 9, 0), (3, 5, 0)]);
    assert_eq!(h.errs, vec![(n + 1, 4)]);
}

#[test]
fn entries_selected_before_the_nak_stay_successes() {
    let mut h = H::new();
    h.idle(1);
    for (w, p) in [(1u64, 0u32), (2, 1), (3, 2)] {
        h.push(cpl(false, 5, w, cqe_status::SUCCESS, p));
    }
    h.step(snd(5, 3));
    h.hold = true;
    // ACK of 1 at n: entries 1, 2 ready from n+1; NAK of 2 at n+2 while
    // they sit in the out register and stage B.
    h.step(ack(5, 1, 0));
    h.idle(1);
    h.step(ack(5, 2, 0x63));
    h.idle(3);
    h.hold = false;
    h.idle(6);
    assert_eq!(outs3(&h), vec![(1, 0, 101), (2, 0, 102), (3, 11, 0)]);
}

/// READ done of `qp`, last PSN `psn`.
fn rdd(qp: u8, psn: u32) -> AckTrackerIn {
    AckTrackerIn {
        rd_done_valid: true,
        rd_done_qp: qp,
        rd_done_psn: psn,
        ..Default::default()
    }
}

fn read_cpl(qp: u8, wr_id: u64, psn: u32) -> AckTrackerIn {
    AckTrackerIn {
        cpl_opcode: wc_op::RDMA_READ,
        ..cpl(false, qp, wr_id, cqe_status::SUCCESS, psn)
    }
}

#[test]
fn rd_done_releases_the_read_at_n_plus_3_and_acks_earlier_work() {
    let mut h = H::new();
    h.idle(1);
    h.step(set(1, 10));
    // SEND 10, READ 11..13, SEND 14, READ 15..15.
    h.push(cpl(false, 1, 1, cqe_status::SUCCESS, 10));
    h.push(read_cpl(1, 2, 13));
    h.push(cpl(false, 1, 3, cqe_status::SUCCESS, 14));
    h.push(read_cpl(1, 4, 15));
    h.step(snd(1, 16));
    h.idle(5);
    // An ACK frame of 15 covers both SENDs' PSNs but releases no READ.
    h.step(ack(1, 15, 0));
    h.idle(10);
    assert_eq!(h.wr_ids(), vec![1], "the READ at the head holds the queue");
    // The first READ's data is in: behind una now (the ACK overtook it),
    // released all the same, una unchanged.
    let n = h.cycle;
    h.step(rdd(1, 13));
    h.idle(6);
    assert_eq!(h.wr_ids(), vec![1, 2, 3]);
    assert_eq!(h.outs[1].0, n + 3, "released by rd_done at n: out at n+3");
    assert_eq!((h.rdd, h.invalid), (1, 0));
    h.step(rdd(1, 15));
    h.idle(6);
    assert_eq!(h.wr_ids(), vec![1, 2, 3, 4]);
    assert_eq!((h.rdd, h.invalid, h.dups), (2, 0, 0));
}

/// READ progress of `qp`: a response with PSN `psn` taken.
fn prog(qp: u8, psn: u32) -> AckTrackerIn {
    AckTrackerIn {
        rd_prog_valid: true,
        rd_prog_qp: qp,
        rd_prog_psn: psn,
        ..Default::default()
    }
}

#[test]
fn read_progress_moves_una_and_releases_nothing() {
    let mut h = H::new();
    h.idle(1);
    h.step(set(6, 50));
    // READ 50..53 (four responses), SEND 54.
    h.push(read_cpl(6, 1, 53));
    h.push(cpl(false, 6, 2, cqe_status::SUCCESS, 54));
    h.step(snd(6, 55));
    let una = |h: &H| h.o.una_all.0[6];
    assert_eq!(una(&h), 50);
    // Responses 50 and 51 taken: una 52, the READ still waits.
    h.step(prog(6, 50));
    h.step(prog(6, 51));
    h.idle(1);
    assert_eq!(una(&h), 52);
    // Ahead of nxt, behind una: nothing (and nothing counted).
    h.step(prog(6, 55));
    h.step(prog(6, 51));
    h.idle(1);
    assert_eq!((una(&h), h.invalid, h.rdd), (52, 0, 0));
    // With an ACK of the QP in the same cycle: the further one wins.
    h.step(AckTrackerIn {
        ack_valid: true,
        ack_qp: 6,
        ack_psn: 52,
        ..prog(6, 53)
    });
    h.idle(1);
    assert_eq!(una(&h), 54);
    h.idle(10);
    assert!(h.outs.is_empty(), "a READ leaves only by its rd_done");
    // A sequence NAK of 54 in the cycle of progress of 54: the NAK wins
    // (una 54, not 55).
    h.step(AckTrackerIn {
        ack_valid: true,
        ack_qp: 6,
        ack_psn: 54,
        ack_syndrome: 0x60,
        ..prog(6, 54)
    });
    h.idle(1);
    assert_eq!(una(&h), 54);
    h.step(rdd(6, 53));
    h.step(ack(6, 54, 0));
    h.idle(8);
    assert_eq!(h.wr_ids(), vec![1, 2]);
}

#[test]
fn rd_done_is_an_implicit_ack_judged_against_the_window() {
    let mut h = H::new();
    h.idle(1);
    h.step(set(2, 100));
    h.push(cpl(false, 2, 1, cqe_status::SUCCESS, 100));
    h.push(read_cpl(2, 2, 102));
    h.push(cpl(false, 2, 3, cqe_status::SUCCESS, 103));
    h.step(snd(2, 104));
    // Ahead of nxt: invalid, nothing released, una unmoved.
    h.step(rdd(2, 104));
    h.idle(10);
    assert!(h.outs.is_empty());
    assert_eq!((h.rdd, h.invalid), (0, 1));
    // In the window: acknowledges 100..102 (SEND 1 with it) and releases 2.
    let n = h.cycle;
    h.step(rdd(2, 102));
    h.idle(8);
    assert_eq!(h.wr_ids(), vec![1, 2]);
    assert_eq!(h.outs[0].0, n + 3);
    assert_eq!(h.rdd, 1);
    // una is 103: an ACK of 102 is now a duplicate, one of 103 takes.
    assert_eq!(h.ack_ev(2, 102, 0), DUP);
    assert_eq!(h.ack_ev(2, 103, 0), NEW);
    h.idle(5);
    assert_eq!(h.wr_ids(), vec![1, 2, 3]);
    // Empty window: invalid again.
    h.step(rdd(2, 103));
    h.idle(2);
    assert_eq!((h.rdd, h.invalid), (2, 1));
}

#[test]
fn rd_done_same_cycle_rules() {
    let mut h = H::new();
    h.idle(1);
    h.step(set(3, 0));
    h.step(snd(3, 20));
    h.push(read_cpl(3, 1, 4));
    h.push(cpl(false, 3, 2, cqe_status::SUCCESS, 9));
    // rd_done of 4 and an ACK of 9 of the same QP in one cycle: both take
    // effect, una goes to the further (10).
    h.step(AckTrackerIn {
        ack_valid: true,
        ack_qp: 3,
        ack_psn: 9,
        ..rdd(3, 4)
    });
    h.idle(6);
    assert_eq!(h.wr_ids(), vec![1, 2]);
    assert_eq!((h.acks, h.rdd), (1, 1));
    assert_eq!(h.ack_ev(3, 9, 0), DUP, "una is 10");
    // The READ's completion pushed in the rd_done's own cycle: released.
    h.push(AckTrackerIn {
        rd_done_valid: true,
        rd_done_qp: 3,
        rd_done_psn: 12,
        ..read_cpl(3, 3, 12)
    });
    h.idle(6);
    assert_eq!(h.wr_ids(), vec![1, 2, 3]);
    // A restart of the QP in the same cycle wins: counted, nothing else.
    h.push(read_cpl(3, 4, 15));
    h.step(AckTrackerIn {
        psn_set_valid: true,
        psn_set_qp: 3,
        psn_set_psn: 15,
        ..rdd(3, 15)
    });
    h.idle(10);
    assert_eq!(h.wr_ids(), vec![1, 2, 3]);
    assert_eq!(h.rdd, 3);
    // A report of the QP in the same cycle: judged against the window
    // before it (15 not sent yet: invalid).
    let inv = h.invalid;
    h.step(AckTrackerIn {
        snd_valid: true,
        snd_qp: 3,
        snd_nxt: 16,
        ..rdd(3, 15)
    });
    h.idle(6);
    assert_eq!((h.rdd, h.invalid - inv), (3, 1));
    assert_eq!(h.wr_ids(), vec![1, 2, 3]);
    // Sent now: an ACK frame of 15 does not release the READ (the restart
    // took the rd_done's effect away), its rd_done does.
    assert_eq!(h.ack_ev(3, 15, 0), NEW);
    h.idle(6);
    assert_eq!(h.wr_ids(), vec![1, 2, 3]);
    h.step(rdd(3, 15));
    h.idle(6);
    assert_eq!(h.wr_ids(), vec![1, 2, 3, 4]);
}

#[test]
fn rd_done_in_error_mode_is_counted_and_ignored() {
    let mut h = H::new();
    h.idle(1);
    h.step(set(1, 0));
    h.push(read_cpl(1, 1, 2));
    h.push(cpl(false, 1, 2, cqe_status::SUCCESS, 3));
    h.step(snd(1, 4));
    h.hold = true;
    h.step(ack(1, 3, 0x62));
    h.step(rdd(1, 2));
    h.hold = false;
    h.idle(8);
    // The READ keeps its error status (not turned back to success).
    assert_eq!(outs3(&h), vec![(1, 10, 0), (2, 5, 0)]);
    assert_eq!((h.rdd, h.invalid), (1, 0));
}
