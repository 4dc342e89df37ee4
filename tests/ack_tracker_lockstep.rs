//! Constrained-random block-level lockstep of `ack_tracker`.
//!
//! The environment plays
//! - csr: in the first cycles it sets most QPs' PSN (`psn_set_*`), the
//!   others keep the reset window [0, 0); later, now and then, it restarts
//!   the window of a QP with nothing queued at a new PSN (near the 24-bit
//!   wrap or anywhere), and sometimes "restarts" the QP whose packet is
//!   reported in the same cycle (the report wins, the restart is lost);
//! - tx_engine: request packets reported on `snd_*` (each one 1 .. 4 PSNs,
//!   as a READ REQUEST takes its response span; reports with no completion
//!   are unsignaled messages or packets before a message's last), and
//!   completions held until taken: UC and RC QPs, a success's last PSN
//!   reported in the cycle it is first offered, errors and flushes using no
//!   PSN; in some cases it stops offering completions of a QP whose `full`
//!   is set, as tx_sched would;
//! - rx_parser: ACKs a peer would send (cumulative over what was reported,
//!   so coalesced, some for a packet reported in that very cycle), repeats,
//!   old ones, and PSNs around the window: one before una, una, nxt - 1,
//!   nxt, beyond nxt, exactly 2^23 ahead of una and 2^23 +- 1, anything;
//!   NAKs and RNR NAKs at una - 1, una, inside, nxt, nxt + 1, 2^23 ahead,
//!   anything; reserved syndromes; random credit bits; now and then for a
//!   QP that never sent anything;
//! - cq_writer: random `out_ready`.
//!
//! Independent checks, from a predictor written here from the rule in
//! docs/rx_cc.md (`ack_tracker`), which keeps each QP's window [una, nxt):
//! - `ev_ack` / `ev_dup` / `ev_nak` / `ev_ack_invalid` the cycle after each
//!   ACK, judged against the window before that cycle's report and restart:
//!   an ACK inside [una, nxt - 1] is taken (una := PSN + 1), one 1 .. 2^23 - 1
//!   before una is a duplicate, any other names a PSN never sent; a NAK is
//!   counted inside [una, nxt], else it is invalid; reserved syndromes
//!   show nothing;
//! - UC completions come out in arrival order, unchanged;
//! - each QP's RC completions come out in arrival order, unchanged, none
//!   lost or duplicated; a success only once una had passed its last PSN
//!   (one of the 2^23 PSNs before una) at least 3 cycles before, so errors
//!   and flushes wait behind their QP's unacknowledged successes;
//! - `full[q]` only when QP q has at least DEPTH - 2 completions in the
//!   tracker, and always when it has DEPTH or more;
//! - at the end every completion came out.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. With
//! at least the default case count the test asserts that
//! [`MIN_TOTAL_CYCLES`] lockstep cycles ran and that every kind of ACK
//! above was seen often enough.

mod common;

use std::collections::VecDeque;

use rnic_model::ack_tracker::{AckTracker, AckTrackerIn, AckTrackerOut, DEPTH, QPS};
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlAckTracker;
use rnic_testbench::wire::cqe::{
    STATUS_LOC_PROT_ERR, STATUS_LOC_QP_OP_ERR, STATUS_SUCCESS, STATUS_WR_FLUSH_ERR,
};

use common::cpl::Cpl;

const DEFAULT_CASES: u64 = 1000;
const DEFAULT_SEED: u64 = 0x6163_6B5F_7472_6B72; // "ack_trkr"
/// Lockstep cycles the default run must reach in total.
const MIN_TOTAL_CYCLES: u64 = 2_000_000;
const M24: u32 = 0xFF_FFFF;
const HALF: u32 = 1 << 23;

/// `to` is this many PSNs after `from`, modulo 2^24.
fn ahead(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from) & M24
}

/// `p + k` modulo 2^24 (k may be "negative" as 2^24 - k).
fn psn_add(p: u32, k: u32) -> u32 {
    p.wrapping_add(k) & M24
}

/// An RC completion waiting in the predictor: the completion, its last
/// PSN, success or not.
type Rc = (Cpl, u32, bool);

/// What the contract says an ACK / NAK does: (ev_ack, ev_nak, ev_dup,
/// ev_ack_invalid).
type Events = (bool, bool, bool, bool);

struct Case {
    uc: [bool; QPS],
    /// QPs in use: 0 .. used.
    used: usize,
    /// Completions to generate.
    total: u32,
    cpl_pct: u8,
    /// Reports of packets without a completion.
    snd_pct: u8,
    ack_pct: u8,
    out_rdy: u8,
    /// Percent of completions that are errors / flushes.
    err_pct: u8,
    /// Do not offer a completion of a QP whose `full` is set.
    obey_full: bool,
    /// QPs whose PSN software sets at the start.
    set_at_start: [bool; QPS],
    restart_pct: u8,
}

fn gen_case(r: &mut SplitMix64) -> Case {
    let mut uc = [false; QPS];
    let uc_pct = [0, 30, 70, 100][r.below(4) as usize];
    for u in uc.iter_mut() {
        *u = r.percent(uc_pct);
    }
    let mut set_at_start = [false; QPS];
    for s in set_at_start.iter_mut() {
        *s = r.percent(80);
    }
    Case {
        uc,
        used: [1, 2, 4, QPS][r.below(4) as usize],
        total: 50 + r.below(400) as u32,
        cpl_pct: [20, 60, 100][r.below(3) as usize],
        snd_pct: [0, 10, 40][r.below(3) as usize],
        ack_pct: [2, 10, 40, 90][r.below(4) as usize],
        out_rdy: if r.percent(30) {
            100
        } else {
            10 + r.below(91) as u8
        },
        err_pct: [0, 10, 30][r.below(3) as usize],
        obey_full: r.percent(50),
        set_at_start,
        restart_pct: [0, 1, 5][r.below(3) as usize],
    }
}

/// A PSN to start from: near the 24-bit wrap or anywhere.
fn start_psn(r: &mut SplitMix64) -> u32 {
    if r.percent(50) {
        M24 - r.below(20) as u32
    } else {
        r.below(1 << 24) as u32
    }
}

/// Coverage counters (see the test's report).
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    uc_out: u64,
    rc_out: u64,
    taken: u64,
    dup: u64,
    invalid: u64,
    invalid_half: u64,
    nak: u64,
    nak_invalid: u64,
    invalid_unsent_qp: u64,
    same_cycle_invalid: u64,
    reports: u64,
    restarts: u64,
    restarts_lost: u64,
    full_cycles: u64,
    refused: u64,
}

struct AckEnv {
    r: SplitMix64,
    c: Case,
    // ---- stimulus ----
    // tx_engine: the completion offered, until taken.
    offered: Option<(Cpl, bool, u32)>,
    generated: u32,
    wr_id: u64,
    /// Per QP: the next PSN tx_engine uses.
    next_psn: [u32; QPS],
    /// The peer: the last PSN it acknowledged per QP.
    peer_acked: [u32; QPS],
    // ---- predictor ----
    /// Per QP: the window [una, nxt).
    una: [u32; QPS],
    nxt: [u32; QPS],
    uc_q: VecDeque<Cpl>,
    rc_q: Vec<VecDeque<Rc>>,
    /// Per QP: (input cycle, una) each time una changed.
    una_log: Vec<Vec<(u64, u32)>>,
    /// Events the outputs must show this cycle.
    ev_due: Events,
    out_count: u64,
    stats: Stats,
}

impl AckEnv {
    fn new(seed: u64) -> Self {
        let mut r = SplitMix64::new(seed);
        let c = gen_case(&mut r);
        AckEnv {
            r,
            c,
            offered: None,
            generated: 0,
            wr_id: 0,
            next_psn: [0; QPS],
            peer_acked: [M24; QPS],
            una: [0; QPS],
            nxt: [0; QPS],
            uc_q: VecDeque::new(),
            rc_q: vec![VecDeque::new(); QPS],
            una_log: vec![Vec::new(); QPS],
            ev_due: (false, false, false, false),
            out_count: 0,
            stats: Stats::default(),
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

    /// A new completion for a random QP in use, and (a success) the next
    /// PSN after its message, reported sent in the same cycle.
    fn gen_cpl(&mut self, o: &AckTrackerOut) -> Option<((Cpl, bool, u32), Option<u32>)> {
        let q = self.r.below(self.c.used as u64) as usize;
        if self.c.obey_full && o.full >> q & 1 == 1 {
            return None;
        }
        let uc = self.c.uc[q];
        let status = if self.r.percent(self.c.err_pct) {
            [
                STATUS_LOC_QP_OP_ERR,
                STATUS_LOC_PROT_ERR,
                STATUS_WR_FLUSH_ERR,
            ][self.r.below(3) as usize]
        } else {
            STATUS_SUCCESS
        };
        let mut psn = 0;
        let mut sent = None;
        if status == STATUS_SUCCESS {
            let span = 1 + self.r.below(4) as u32;
            psn = psn_add(self.next_psn[q], span - 1);
            self.next_psn[q] = psn_add(psn, 1);
            sent = Some(self.next_psn[q]);
        }
        self.wr_id += 1;
        self.generated += 1;
        let c = Cpl {
            wait_frame: uc && status == STATUS_SUCCESS,
            wr_id: self.wr_id,
            status,
            // Successes are never RDMA READ here: a READ success never
            // leaves (model unit test read_success_never_leaves).
            opcode: self.r.below(if status == STATUS_SUCCESS { 4 } else { 5 }) as u8,
            len: self.r.next_u64() as u32,
            imm: self.r.next_u64() as u32,
            qp: q as u8,
            cq: self.r.below(4) as u8,
        };
        Some(((c, uc, psn), sent))
    }

    /// The contract's rule for an ACK / NAK on QP q's window as it is.
    fn judge(&self, q: usize, p: u32, syn: u8) -> Events {
        let (una, nxt) = (self.una[q], self.nxt[q]);
        let sent = ahead(una, p) < ahead(una, nxt);
        // Before una by 1 .. 2^23 - 1 (2^23 before is also 2^23 ahead).
        let before = (1..HALF).contains(&ahead(p, una));
        match syn >> 5 {
            0b000 if sent => (true, false, false, false),
            0b000 if before => (false, false, true, false),
            0b000 => (false, false, false, true),
            // A responder's NAK names the PSN it expected: una .. nxt.
            0b011 | 0b001 if ahead(una, p) <= ahead(una, nxt) => (false, true, false, false),
            0b011 | 0b001 => (false, false, false, true),
            _ => (false, false, false, false),
        }
    }

    /// Some una from an update on the input at `cycle - 3` or earlier had
    /// passed `psn` (the latest need not: an entry may wait in the output
    /// stages).
    fn covered_by(&self, q: usize, cycle: u64, psn: u32) -> bool {
        self.una_log[q]
            .iter()
            .any(|&(c, u)| c + 3 <= cycle && (1..=HALF).contains(&ahead(psn, u)))
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
            self.stats.uc_out += 1;
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
                    "cycle {cycle}: QP {q}: success PSN {psn:#x} out before una passed it \
                     (una history: {:x?})",
                    self.una_log[q]
                );
            }
            self.stats.rc_out += 1;
        }
        self.out_count += 1;
    }

    /// An ACK / NAK for QP q (its PSN and syndrome), as a peer or a broken
    /// one would send it.
    fn gen_ack(&mut self, q: usize) -> (u32, u8) {
        let credits = self.r.below(32) as u8;
        let (una, nxt) = (self.una[q], self.nxt[q]);
        let sent_end = self.next_psn[q];
        let r = &mut self.r;
        let nak = |r: &mut SplitMix64| [0x60u8, 0x20][r.below(2) as usize] | credits;
        match r.below(24) {
            // Cumulative ACK of some (or all) PSNs reported so far (this
            // cycle's report included).
            0..=9 => {
                let out = ahead(self.peer_acked[q], psn_add(sent_end, M24));
                let k = r.below(out as u64 + 1) as u32;
                let p = psn_add(self.peer_acked[q], k);
                self.peer_acked[q] = p;
                (p, credits)
            }
            // A repeat, or an old one.
            10 => (self.peer_acked[q], credits),
            11 => (
                psn_add(self.peer_acked[q], M24 + 1 - r.below(100) as u32),
                credits,
            ),
            // The window's edges and beyond.
            12 => (psn_add(una, M24), credits),
            13 => (una, credits),
            14 => (psn_add(nxt, M24), credits),
            15 => (psn_add(nxt, r.below(3) as u32), credits),
            16 => (psn_add(nxt, 3 + r.below(5000) as u32), credits),
            // Exactly 2^23 ahead of una, and one either side.
            17 | 18 => (psn_add(una, HALF + M24 + r.below(3) as u32), credits),
            // NAKs: before una, at una, inside, at nxt, after nxt, 2^23 ahead.
            19 => {
                let p = match r.below(6) {
                    0 => psn_add(una, M24),
                    1 => una,
                    2 => psn_add(una, r.below(ahead(una, nxt) as u64 + 1) as u32),
                    3 => nxt,
                    4 => psn_add(nxt, 1),
                    _ => psn_add(una, HALF),
                };
                (p, nak(r))
            }
            20 => (r.below(1 << 24) as u32, nak(r)),
            // Reserved syndromes.
            21 => (
                r.below(1 << 24) as u32,
                [0x40, 0x80, 0xA0, 0xC0, 0xE0][r.below(5) as usize] | credits,
            ),
            // Anything.
            _ => (r.below(1 << 24) as u32, credits),
        }
    }
}

impl Env for AckEnv {
    type In = AckTrackerIn;
    type Out = AckTrackerOut;

    fn step(&mut self, cycle: u64, o: &AckTrackerOut) -> AckTrackerIn {
        let mut i = AckTrackerIn::default();
        // ---- events due from last cycle's ACK ----
        assert_eq!(
            (o.ev_ack, o.ev_nak, o.ev_dup, o.ev_ack_invalid),
            self.ev_due,
            "cycle {cycle}: ev_ack / ev_nak / ev_dup / ev_ack_invalid"
        );
        self.ev_due = (false, false, false, false);
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

        // ---- csr at the start: software sets the PSN of most QPs ----
        let starting = cycle < QPS as u64;
        let mut set: Option<(usize, u32)> = None;
        if starting && self.c.set_at_start[cycle as usize] {
            set = Some((cycle as usize, start_psn(&mut self.r)));
        }

        // ---- tx_engine: packet reports and completions ----
        let mut snd: Option<(usize, u32)> = None;
        if !starting {
            if self.offered.is_none()
                && self.generated < self.c.total
                && self.r.percent(self.c.cpl_pct)
            {
                if let Some((c, sent)) = self.gen_cpl(o) {
                    snd = sent.map(|n| (c.0.qp as usize, n));
                    self.offered = Some(c);
                }
            }
            if snd.is_none() && self.r.percent(self.c.snd_pct) {
                // A packet with no completion (an unsignaled message, or
                // one before a message's last).
                let q = self.r.below(self.c.used as u64) as usize;
                self.next_psn[q] = psn_add(self.next_psn[q], 1 + self.r.below(4) as u32);
                snd = Some((q, self.next_psn[q]));
            }
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
                    self.rc_q[c.qp as usize].push_back((c, psn, c.status == STATUS_SUCCESS));
                }
            }
        } else {
            // Don't-care fields while not valid.
            i.cpl_qp = self.r.below(QPS as u64) as u8;
            i.cpl_uc = self.r.percent(50);
            i.cpl_psn = self.r.next_u64() as u32 & M24;
        }
        match snd {
            Some((q, n)) => {
                (i.snd_valid, i.snd_qp, i.snd_nxt) = (true, q as u8, n);
                self.stats.reports += 1;
            }
            None => {
                i.snd_qp = self.r.below(QPS as u64) as u8;
                i.snd_nxt = self.r.next_u64() as u32 & M24;
            }
        }

        // ---- csr later: restarts of idle QPs ----
        if !starting && self.r.percent(self.c.restart_pct) {
            let busy = |e: &Self, q: usize| {
                !e.rc_q[q].is_empty() || e.offered.is_some_and(|c| c.0.qp as usize == q)
            };
            match snd {
                // The QP whose packet is reported now: the restart is lost.
                Some((q, _)) if self.r.percent(30) => {
                    set = Some((q, start_psn(&mut self.r)));
                }
                _ => {
                    let q = self.r.below(self.c.used as u64) as usize;
                    if !busy(self, q) && snd.is_none_or(|s| s.0 != q) {
                        set = Some((q, start_psn(&mut self.r)));
                    }
                }
            }
        }
        match set {
            Some((q, p)) => {
                (i.psn_set_valid, i.psn_set_qp, i.psn_set_psn) = (true, q as u8, p);
            }
            None => {
                i.psn_set_qp = self.r.below(QPS as u64) as u8;
                i.psn_set_psn = self.r.next_u64() as u32 & M24;
            }
        }

        // ---- rx_parser ----
        let mut acked = None;
        if self.r.percent(self.c.ack_pct) {
            // Mostly QPs in use; now and then any QP (one that may never
            // have sent anything, its window [0, 0) or where software set it).
            let q = if self.r.percent(90) {
                self.r.below(self.c.used as u64) as usize
            } else {
                self.r.below(QPS as u64) as usize
            };
            let (p, syn) = self.gen_ack(q);
            (i.ack_valid, i.ack_qp, i.ack_psn, i.ack_syndrome) = (true, q as u8, p, syn);
            let ev = self.judge(q, p, syn);
            self.ev_due = ev;
            let s = &mut self.stats;
            let is_nak = syn >> 5 == 0b011 || syn >> 5 == 0b001;
            s.taken += ev.0 as u64;
            s.dup += ev.2 as u64;
            s.nak += ev.1 as u64;
            s.invalid += (ev.3 && !is_nak) as u64;
            s.nak_invalid += (ev.3 && is_nak) as u64;
            s.invalid_half += (ev.3 && ahead(self.una[q], p) == HALF) as u64;
            s.invalid_unsent_qp += (ev.3 && self.una[q] == self.nxt[q]) as u64;
            s.same_cycle_invalid += (ev.3
                && !is_nak
                && snd.is_some_and(|(sq, n)| {
                    sq == q && ahead(self.una[q], p) < ahead(self.una[q], n)
                })) as u64;
            if ev.0 {
                acked = Some((q, psn_add(p, 1)));
            }
        } else {
            i.ack_qp = self.r.below(QPS as u64) as u8;
            i.ack_psn = self.r.next_u64() as u32 & M24;
            i.ack_syndrome = self.r.next_u64() as u8;
        }

        // ---- the predictor's windows after this cycle ----
        // A report wins over a restart of its QP; a restart over an ACK.
        let lost = matches!((set, snd), (Some((a, _)), Some((b, _))) if a == b);
        if let Some((q, u)) = acked {
            if set.is_none_or(|(sq, _)| sq != q || lost) {
                self.una[q] = u;
                self.una_log[q].push((cycle, u));
            }
        }
        if let Some((q, n)) = snd {
            self.nxt[q] = n;
        }
        if let Some((q, p)) = set {
            if lost {
                self.stats.restarts_lost += 1;
            } else {
                self.una[q] = p;
                self.nxt[q] = p;
                self.una_log[q].push((cycle, p));
                self.next_psn[q] = p;
                self.peer_acked[q] = psn_add(p, M24);
                self.stats.restarts += !starting as u64;
            }
        }
        // Coverage: cycles with some QP full, with a completion refused.
        self.stats.full_cycles += (o.full != 0) as u64;
        self.stats.refused += (i.cpl_valid && !o.cpl_ready) as u64;
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
    let mut s = Stats::default();
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
        let e = env.stats;
        s.uc_out += e.uc_out;
        s.rc_out += e.rc_out;
        s.taken += e.taken;
        s.dup += e.dup;
        s.invalid += e.invalid;
        s.invalid_half += e.invalid_half;
        s.nak += e.nak;
        s.nak_invalid += e.nak_invalid;
        s.invalid_unsent_qp += e.invalid_unsent_qp;
        s.same_cycle_invalid += e.same_cycle_invalid;
        s.reports += e.reports;
        s.restarts += e.restarts;
        s.restarts_lost += e.restarts_lost;
        s.full_cycles += e.full_cycles;
        s.refused += e.refused;
    });
    eprintln!(
        "ack_tracker lockstep: {} cases, {total} cycles, {outs} completions ({} UC, {} RC); \
         {} packet reports, {} window restarts ({} lost to a report); ACKs {} taken, {} \
         duplicate, {} invalid ({} exactly 2^23 ahead of una, {} on an empty window, {} for a \
         packet reported that cycle); NAKs {} counted, {} invalid; {} cycles with a QP full, \
         {} with a completion refused",
        run.cases,
        s.uc_out,
        s.rc_out,
        s.reports,
        s.restarts,
        s.restarts_lost,
        s.taken,
        s.dup,
        s.invalid,
        s.invalid_half,
        s.invalid_unsent_qp,
        s.same_cycle_invalid,
        s.nak,
        s.nak_invalid,
        s.full_cycles,
        s.refused
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} lockstep cycles");
        assert!(s.uc_out > 1000 && s.rc_out > 1000 && s.taken > 1000 && s.dup > 1000);
        assert!(
            s.invalid > 1000 && s.invalid_half > 100 && s.invalid_unsent_qp > 100,
            "invalid ACK coverage"
        );
        assert!(
            s.same_cycle_invalid > 10,
            "ACKs of a packet reported that cycle"
        );
        assert!(s.nak > 100 && s.nak_invalid > 100, "NAK coverage");
        assert!(
            s.restarts > 100 && s.restarts_lost > 10,
            "window restart coverage"
        );
        assert!(
            s.full_cycles > 1000 && s.refused > 1000,
            "full / refusal coverage"
        );
    }
}
