//! Constrained-random block-level lockstep of `ack_tracker`.
//!
//! The environment plays tx_engine (completions held until taken: UC and RC
//! QPs, successes whose last PSNs advance per QP by 1 .. 4 with 24-bit
//! wraps, errors and flushes that use no PSN; in some cases it stops
//! offering completions of a QP whose `full` is set, as tx_sched would),
//! rx_parser (ACKs that cover some of the QP's outstanding PSNs, so
//! coalesced, plus duplicates, old ones, NAKs, RNR NAKs and reserved
//! syndromes, with random credit bits) and cq_writer (random `out_ready`).
//!
//! Independent checks, from a predictor written here from docs/rx_cc.md:
//! - UC completions come out in arrival order, unchanged;
//! - each QP's RC completions come out in arrival order, unchanged, none
//!   lost or duplicated; a success only once an ACK covering its last PSN
//!   was on the input at least 3 cycles before (so errors and flushes wait
//!   behind their QP's unacknowledged successes);
//! - `ev_ack` / `ev_dup` / `ev_nak` the cycle after each ACK, as the
//!   contract's window rules (first ACK taken, newer = 1 .. 2^23 - 1 ahead)
//!   predict;
//! - `full[q]` only when QP q has at least DEPTH - 2 completions in the
//!   tracker, and always when it has DEPTH or more;
//! - at the end every completion came out.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. With
//! at least the default case count the test asserts that
//! [`MIN_TOTAL_CYCLES`] lockstep cycles ran.

mod common;

use std::collections::VecDeque;

use rnic_model::ack_tracker::{AckTracker, AckTrackerIn, AckTrackerOut, DEPTH, QPS};
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlAckTracker;

use common::cpl::Cpl;

const DEFAULT_CASES: u64 = 1000;
const DEFAULT_SEED: u64 = 0x6163_6B5F_7472_6B72; // "ack_trkr"
/// Lockstep cycles the default run must reach in total.
const MIN_TOTAL_CYCLES: u64 = 2_000_000;
const M24: u32 = 0xFF_FFFF;

/// An RC completion waiting in the predictor: the completion, its last
/// PSN, success or not.
type Rc = (Cpl, u32, bool);

struct Case {
    uc: [bool; QPS],
    /// QPs in use: 0 .. used.
    used: usize,
    /// Completions to generate.
    total: u32,
    cpl_pct: u8,
    ack_pct: u8,
    out_rdy: u8,
    /// Percent of completions that are errors / flushes.
    err_pct: u8,
    /// Do not offer a completion of a QP whose `full` is set.
    obey_full: bool,
}

fn gen_case(r: &mut SplitMix64) -> Case {
    let mut uc = [false; QPS];
    let uc_pct = [0, 30, 70, 100][r.below(4) as usize];
    for u in uc.iter_mut() {
        *u = r.percent(uc_pct);
    }
    Case {
        uc,
        used: [1, 2, 4, QPS][r.below(4) as usize],
        total: 50 + r.below(400) as u32,
        cpl_pct: [20, 60, 100][r.below(3) as usize],
        ack_pct: [2, 10, 40, 90][r.below(4) as usize],
        out_rdy: if r.percent(30) {
            100
        } else {
            10 + r.below(91) as u8
        },
        err_pct: [0, 10, 30][r.below(3) as usize],
        obey_full: r.percent(50),
    }
}

struct AckEnv {
    r: SplitMix64,
    c: Case,
    // tx_engine
    offered: Option<(Cpl, bool, u32)>,
    generated: u32,
    wr_id: u64,
    /// Per QP: next PSN to use, and the last PSN used (an ACK the peer can
    /// send goes up to it).
    next_psn: [u32; QPS],
    // rx_parser's peer: the highest PSN it has acknowledged so far.
    peer_acked: [u32; QPS],
    // Predictor.
    uc_q: VecDeque<Cpl>,
    rc_q: Vec<VecDeque<Rc>>,
    /// Acknowledged PSN and "an ACK was taken" per QP, and the history of
    /// (input cycle, acknowledged PSN) updates.
    acked: [u32; QPS],
    seen: [bool; QPS],
    ack_log: Vec<Vec<(u64, u32)>>,
    /// Events the outputs must show this cycle: (ack, nak, dup).
    ev_due: (bool, bool, bool),
    out_count: u64,
    stats: [u64; 8],
}

impl AckEnv {
    fn new(seed: u64) -> Self {
        let mut r = SplitMix64::new(seed);
        let c = gen_case(&mut r);
        let mut next_psn = [0; QPS];
        for p in next_psn.iter_mut() {
            *p = if r.percent(50) {
                M24 - r.below(20) as u32
            } else {
                r.below(1 << 24) as u32
            };
        }
        let peer_acked = next_psn.map(|p| p.wrapping_sub(1) & M24);
        AckEnv {
            r,
            c,
            offered: None,
            generated: 0,
            wr_id: 0,
            next_psn,
            peer_acked,
            uc_q: VecDeque::new(),
            rc_q: vec![VecDeque::new(); QPS],
            acked: [0; QPS],
            seen: [false; QPS],
            ack_log: vec![Vec::new(); QPS],
            ev_due: (false, false, false),
            out_count: 0,
            stats: [0; 8],
        }
    }

    /// Completions of QP q in the tracker (predictor's view).
    fn held(&self, q: usize) -> usize {
        if self.c.uc[q] {
            self.uc_q.iter().filter(|c| c.qp as usize == q).count()
        } else {
            self.rc_q[q].len()
        }
    }

    /// A new completion for a random QP in use.
    fn gen_cpl(&mut self, o: &AckTrackerOut) -> Option<(Cpl, bool, u32)> {
        let q = self.r.below(self.c.used as u64) as usize;
        if self.c.obey_full && o.full >> q & 1 == 1 {
            return None;
        }
        let uc = self.c.uc[q];
        let status = if self.r.percent(self.c.err_pct) {
            [2, 4, 5][self.r.below(3) as usize]
        } else {
            0
        };
        let mut psn = 0;
        if status == 0 {
            let span = 1 + self.r.below(4) as u32;
            psn = (self.next_psn[q] + span - 1) & M24;
            self.next_psn[q] = (psn + 1) & M24;
        }
        self.wr_id += 1;
        self.generated += 1;
        let c = Cpl {
            wait_frame: uc && status == 0,
            wr_id: self.wr_id,
            status,
            // Successes are never RDMA READ here: a READ success never
            // leaves (model unit test read_success_never_leaves).
            opcode: self.r.below(if status == 0 { 4 } else { 5 }) as u8,
            len: self.r.next_u64() as u32,
            imm: self.r.next_u64() as u32,
            qp: q as u8,
            cq: self.r.below(4) as u8,
        };
        Some((c, uc, psn))
    }

    /// The contract's ACK rules, on the predictor's state.
    fn predict_ack(&mut self, cycle: u64, q: usize, p: u32, syn: u8) {
        match syn >> 5 {
            0b000 => {
                let d = p.wrapping_sub(self.acked[q]) & M24;
                if !self.seen[q] || (1..1 << 23).contains(&d) {
                    self.acked[q] = p;
                    self.seen[q] = true;
                    self.ack_log[q].push((cycle, p));
                    self.ev_due.0 = true;
                    self.stats[2] += 1;
                } else {
                    self.ev_due.2 = true;
                    self.stats[3] += 1;
                }
            }
            0b011 | 0b001 => {
                self.ev_due.1 = true;
                self.stats[4] += 1;
            }
            _ => {}
        }
    }

    /// Some acknowledged PSN taken from an ACK on the input at `cycle - 3`
    /// or earlier covers `psn` (the latest one need not: an entry may wait
    /// in the output stages, and an ACK at the window's edge may move the
    /// acknowledged PSN 2^23 - 1 on).
    fn covered_by(&self, q: usize, cycle: u64, psn: u32) -> bool {
        self.ack_log[q]
            .iter()
            .any(|&(c, a)| c + 3 <= cycle && a.wrapping_sub(psn) & M24 < 1 << 23)
    }

    fn check_out(&mut self, cycle: u64, o: &AckTrackerOut) {
        let got = Cpl {
            wait_frame: o.out_wait_frame,
            wr_id: o.out_wr_id,
            status: o.out_status,
            opcode: o.out_opcode,
            len: o.out_len,
            imm: o.out_imm,
            qp: o.out_qp,
            cq: o.out_cq,
        };
        let q = o.out_qp as usize;
        if self.c.uc[q] {
            let exp = self.uc_q.pop_front();
            assert_eq!(Some(got), exp, "cycle {cycle}: UC completion out of order");
            self.stats[0] += 1;
        } else {
            let (exp, psn, ok) = self.rc_q[q]
                .pop_front()
                .unwrap_or_else(|| panic!("cycle {cycle}: QP {q}: unexpected {got:?}"));
            assert_eq!(
                got, exp,
                "cycle {cycle}: QP {q}: RC completion out of order"
            );
            if ok {
                assert!(
                    self.covered_by(q, cycle, psn),
                    "cycle {cycle}: QP {q}: success PSN {psn:#x} out before an ACK covered it \
                     (ACKs taken: {:x?})",
                    self.ack_log[q]
                );
            }
            self.stats[1] += 1;
        }
        self.out_count += 1;
    }
}

impl Env for AckEnv {
    type In = AckTrackerIn;
    type Out = AckTrackerOut;

    fn step(&mut self, cycle: u64, o: &AckTrackerOut) -> AckTrackerIn {
        let mut i = AckTrackerIn::default();
        // ---- events due from last cycle's ACK ----
        assert_eq!(
            (o.ev_ack, o.ev_nak, o.ev_dup),
            self.ev_due,
            "cycle {cycle}: ev_ack / ev_nak / ev_dup"
        );
        self.ev_due = (false, false, false);
        // ---- full ----
        for q in 0..QPS {
            let n = self.held(q);
            let f = o.full >> q & 1 == 1;
            if !self.c.uc[q] {
                assert!(
                    !f || n >= DEPTH - 2,
                    "cycle {cycle}: full[{q}] with {n} held"
                );
                assert!(f || n < DEPTH, "cycle {cycle}: not full[{q}] with {n} held");
            } else {
                assert!(!f, "cycle {cycle}: full[{q}] of a UC QP");
            }
        }

        // ---- cq_writer ----
        i.out_ready = self.r.percent(self.c.out_rdy);
        if o.out_valid && i.out_ready {
            self.check_out(cycle, o);
        }

        // ---- tx_engine: a completion is held until taken ----
        if self.offered.is_none() && self.generated < self.c.total && self.r.percent(self.c.cpl_pct)
        {
            self.offered = self.gen_cpl(o);
        }
        if let Some((c, uc, psn)) = self.offered {
            i.cpl_valid = true;
            i.cpl_wait_frame = c.wait_frame;
            i.cpl_wr_id = c.wr_id;
            i.cpl_status = c.status;
            i.cpl_opcode = c.opcode;
            i.cpl_len = c.len;
            i.cpl_imm = c.imm;
            i.cpl_qp = c.qp;
            i.cpl_cq = c.cq;
            i.cpl_uc = uc;
            i.cpl_psn = psn;
            if o.cpl_ready {
                self.offered = None;
                if uc {
                    self.uc_q.push_back(c);
                } else {
                    self.rc_q[c.qp as usize].push_back((c, psn, c.status == 0));
                }
            }
        } else {
            // Don't-care fields while not valid.
            i.cpl_qp = self.r.below(QPS as u64) as u8;
            i.cpl_uc = self.r.percent(50);
            i.cpl_psn = self.r.next_u64() as u32 & M24;
        }

        // ---- rx_parser ----
        if self.r.percent(self.c.ack_pct) {
            let q = self.r.below(self.c.used as u64) as usize;
            let sent = self.next_psn[q].wrapping_sub(1) & M24;
            let outstanding = sent.wrapping_sub(self.peer_acked[q]) & M24;
            let credits = self.r.below(32) as u8;
            let (p, syn) = match self.r.below(20) {
                // Cumulative ACK of some (or all) outstanding PSNs.
                0..=11 => {
                    let k = self.r.below(outstanding as u64 + 1) as u32;
                    let p = (self.peer_acked[q] + k) & M24;
                    self.peer_acked[q] = p;
                    (p, credits)
                }
                // Duplicate or old.
                12 | 13 => (self.peer_acked[q], credits),
                // At the window's edge: 2^23 - 1 ahead is newer, 2^23 is
                // not (a bogus ACK, but the rule must hold).
                16 => (
                    (self.acked[q] + (1 << 23) - self.r.below(2) as u32) & M24,
                    credits,
                ),
                14 | 15 => (
                    self.peer_acked[q].wrapping_sub(self.r.below(100) as u32) & M24,
                    credits,
                ),
                // NAK, RNR NAK, reserved syndromes.
                _ => (
                    self.r.next_u64() as u32 & M24,
                    [0x60, 0x20, 0x40, 0x80, 0xA0, 0xC0, 0xE0][self.r.below(7) as usize] | credits,
                ),
            };
            i.ack_valid = true;
            i.ack_qp = q as u8;
            i.ack_psn = p;
            i.ack_syndrome = syn;
            self.predict_ack(cycle, q, p, syn);
        } else {
            i.ack_qp = self.r.below(QPS as u64) as u8;
            i.ack_psn = self.r.next_u64() as u32 & M24;
            i.ack_syndrome = self.r.next_u64() as u8;
        }
        // Coverage: cycles with some QP full, with a completion refused.
        self.stats[5] += (o.full != 0) as u64;
        self.stats[6] += (i.cpl_valid && !o.cpl_ready) as u64;
        i
    }

    fn finished(&self) -> bool {
        self.generated == self.c.total
            && self.offered.is_none()
            && self.uc_q.is_empty()
            && self.rc_q.iter().all(|q| q.is_empty())
    }
}

#[test]
fn ack_tracker_random_lockstep() {
    let mut total = 0u64;
    let mut stats = [0u64; 8];
    let mut outs = 0u64;
    let run = common::run_cases(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = AckEnv::new(seed);
        let fin = lockstep::run(
            &mut AckTracker::new(),
            &mut RtlAckTracker::new(),
            &mut env,
            1_000_000,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert!(fin.completed, "did not finish in {} cycles", fin.cycles);
        assert_eq!(env.out_count, env.c.total as u64, "completions out");
        total += fin.cycles;
        outs += env.out_count;
        for (a, b) in stats.iter_mut().zip(env.stats) {
            *a += b;
        }
    });
    eprintln!(
        "ack_tracker lockstep: {} cases, {total} cycles, {outs} completions ({} UC, {} RC); \
         ACKs {} taken, {} duplicate; {} NAKs; {} cycles with a QP full, {} with a \
         completion refused",
        run.cases, stats[0], stats[1], stats[2], stats[3], stats[4], stats[5], stats[6]
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} lockstep cycles");
        assert!(stats[0] > 1000 && stats[1] > 1000 && stats[3] > 1000 && stats[4] > 100);
        assert!(
            stats[5] > 1000 && stats[6] > 1000,
            "full / refusal coverage"
        );
    }
}
