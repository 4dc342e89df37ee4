//! Constrained-random block-level lockstep of `sq_fetch`.
//!
//! Model and RTL get the same stimulus from an environment that plays host
//! software and `dma_rd`:
//! - software posts WQEs (random bytes, a unique wr_id) into per-QP rings of
//!   2^0..2^15 entries in a host-memory byte map and rings doorbells
//!   (producer index increments, ring wraps, some QPs in RESET for a while,
//!   some in ERROR, repeated doorbells that must be ignored); it never
//!   overwrites an entry whose read has not been served;
//! - a fake read responder takes `rd_req`s under random back-pressure and
//!   serves them in order after a random latency, one beat per cycle with
//!   random gaps, from the byte map; now and then a read fails: zeroed data
//!   and a non-zero status on its last beat, as `dma_rd` does;
//! - a popper pops random QPs (mostly ones with a WQE, sometimes empty ones).
//!
//! The environment checks the block's function on its own, from the contract
//! (docs/tx_datapath.md, "sq_fetch"), cycle by cycle:
//! - it predicts each cycle whether a read is issued, for which QP (round
//!   robin among the eligible ones), at which address and of how many WQEs
//!   (`min(pi - fetch_idx, free slots, BATCH, entries before the ring end)`),
//!   and checks the request visible the next cycle (doorbell at n ->
//!   request at n+1 for an idle QP); no read crosses its ring end;
//! - `wqe_avail`, `ev_wqe_n`, `err_valid`/`err_qp`, `wqe_valid`/`wqe_qp`/
//!   `wqe_data` against its own books, with the contract's timing (last beat
//!   at n -> available at n+1, pop at n -> WQE at n+1);
//! - each QP's WQEs pop out exactly once, in ring order, with the posted
//!   bytes, except those of failed reads (each failure reported by `err`);
//! - at the end every posted WQE has been popped or dropped, and batching
//!   (reads of several WQEs, reads cut at the ring end) did happen.
//!
//! A second test runs one QP past the 16-bit wrap of its indices.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or
//! `RNIC_RANDOM_CASES`. A failing case prints its own seed;
//! `RNIC_RANDOM_SEED=<that seed> RNIC_RANDOM_CASES=1` replays it alone.
//! With at least the default case count the test asserts that
//! [`MIN_TOTAL_CYCLES`] lockstep cycles ran.

mod common;

use std::collections::{HashMap, VecDeque};

use rnic_model::ports::Beat;
use rnic_model::sq_fetch::{SqFetch, SqFetchIn, SqFetchOut, BATCH, INFL, QPS, SLOTS};
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlSqFetch;
use rnic_testbench::wire::wqe;

const DEFAULT_CASES: u64 = 64;
const DEFAULT_SEED: u64 = 0x7371_5F66_6574_6368; // "sq_fetch"
/// Cycles of stimulus per case; then the rings drain.
const STIM_CYCLES: u64 = 10_000;
const MAX_CYCLES: u64 = 60_000;
/// Software stops posting on a QP with this many WQEs not yet fetched.
const MAX_BACKLOG: u32 = 48;
/// Lockstep cycles the default random run must reach.
const MIN_TOTAL_CYCLES: u64 = 600_000;

/// One QP as host software and the checker see it.
#[derive(Default)]
struct Qp {
    base: u64,
    log: u8,
    /// Producer index software has rung.
    pi: u16,
    /// What the block captured from the last doorbell that took effect.
    dut_pi: u16,
    dut_state: u8,
    /// Software rings doorbells with this state (0 RESET, 1 RTS, 2 ERROR).
    mode: u8,
    /// Next index the block must fetch.
    fetch: u16,
    /// Index up to which the block's reads have been served: ring entries
    /// before it may be overwritten.
    served: u16,
    /// Posted WQEs from `served` on, in ring order.
    ring: VecDeque<Beat>,
    /// Fetched WQEs not yet popped, in order.
    avail: VecDeque<Beat>,
    busy: bool,
    posted: u64,
    popped: u64,
    dropped: u64,
}

impl Qp {
    fn size(&self) -> u32 {
        1 << self.log
    }
    fn in_ring(&self, addr: u64) -> bool {
        addr >= self.base && addr < self.base + 64 * self.size() as u64
    }
}

/// A read the responder has taken.
struct Read {
    qp: usize,
    addr: u64,
    beats: u32,
    ready_at: u64,
    fail: bool,
}

/// The read the block is expected to issue at the next clock edge.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pred {
    qp: usize,
    addr: u64,
    len: u32,
}

struct FetchEnv {
    rng: SplitMix64,
    qps: Vec<Qp>,
    /// Host memory, byte by byte.
    mem: HashMap<u64, u8>,
    active: Vec<usize>,
    db_pct: u8,
    ready_pct: u8,
    gap_pct: u8,
    pop_pct: u8,
    fail_pct: u8,
    latency: (u64, u64),
    max_post: u32,
    /// Doorbells now and then switch a QP's state (RESET, RTS, ERROR).
    mode_changes: bool,
    stim_cycles: u64,
    cycle: u64,
    wr_seq: u64,
    /// Reads issued (visible on rd_req) whose last beat has not come back,
    /// in issue order, and which of them the responder has taken.
    issued: VecDeque<usize>,
    taken: VecDeque<Read>,
    beat: u32,
    /// The request visible last cycle and not taken.
    held: Option<Pred>,
    pred: Option<Pred>,
    rr: usize,
    /// Expected on the outputs next cycle.
    exp_pop: Option<(usize, Option<Beat>)>,
    exp_err: Option<usize>,
    exp_ev: u8,
    // Statistics.
    reads: u64,
    multi: u64,
    full_batch: u64,
    cut_at_end: u64,
    failed: u64,
    pops_empty: u64,
}

impl FetchEnv {
    fn random(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let n_active = [1, 2, 3, 5, 8, 16][rng.below(6) as usize];
        let mut all: Vec<usize> = (0..QPS).collect();
        for k in (1..QPS).rev() {
            let j = rng.below(k as u64 + 1) as usize;
            all.swap(k, j);
        }
        let active = all[..n_active].to_vec();
        let mut qps: Vec<Qp> = (0..QPS).map(|_| Qp::default()).collect();
        for (q, qp) in qps.iter_mut().enumerate() {
            qp.log = [0u8, 1, 2, 3, 3, 4, 5, 6, 9, 15][rng.below(10) as usize];
            // Rings 2^36 apart, at any 64-byte boundary of their first MiB;
            // one high in the address space.
            let top = if q == 15 { 0xFFFF_0000_0000_0000 } else { 0 };
            qp.base = top | (q as u64 + 1) << 36 | rng.below(1 << 14) << 6;
            qp.mode = match rng.below(10) {
                0 | 1 => 0,
                2 => 2,
                _ => 1,
            };
        }
        let lat_lo = [1, 2, 5, 20][rng.below(4) as usize];
        FetchEnv {
            qps,
            mem: HashMap::new(),
            active,
            db_pct: [5, 15, 40, 80][rng.below(4) as usize],
            ready_pct: [100, 70, 30][rng.below(3) as usize],
            gap_pct: [0, 20, 60][rng.below(3) as usize],
            pop_pct: [100, 60, 20, 5][rng.below(4) as usize],
            fail_pct: [0, 3, 10][rng.below(3) as usize],
            latency: (lat_lo, lat_lo + [0, 5, 40][rng.below(3) as usize]),
            max_post: [1, 3, 8, 40][rng.below(4) as usize],
            mode_changes: true,
            stim_cycles: STIM_CYCLES,
            cycle: 0,
            rng,
            wr_seq: 0,
            issued: VecDeque::new(),
            taken: VecDeque::new(),
            beat: 0,
            held: None,
            pred: None,
            rr: 0,
            exp_pop: None,
            exp_err: None,
            exp_ev: 0,
            reads: 0,
            multi: 0,
            full_batch: 0,
            cut_at_end: 0,
            failed: 0,
            pops_empty: 0,
        }
    }

    /// Posts `k` WQEs on QP `q` and returns its doorbell.
    fn post(&mut self, q: usize, k: u32, state: u8) -> SqFetchIn {
        for _ in 0..k {
            let mut w = Beat::default();
            for b in w.iter_mut() {
                *b = self.rng.next_u64() as u8;
            }
            self.wr_seq += 1;
            // Random bytes but a wr_id that names the WQE.
            wqe::Wqe::new_unchecked(&mut w[..]).set_wr_id(self.wr_seq << 8 | q as u64);
            let qp = &mut self.qps[q];
            let slot = qp.pi as u64 & (qp.size() as u64 - 1);
            let addr = qp.base + 64 * slot;
            for (j, b) in w.iter().enumerate() {
                self.mem.insert(addr + j as u64, *b);
            }
            qp.ring.push_back(w);
            qp.posted += 1;
            qp.pi = qp.pi.wrapping_add(1);
        }
        self.doorbell(q, state)
    }

    fn doorbell(&mut self, q: usize, state: u8) -> SqFetchIn {
        let qp = &mut self.qps[q];
        // The block keeps the doorbell only when it brings a new pi.
        if qp.pi != qp.dut_pi {
            qp.dut_pi = qp.pi;
            qp.dut_state = state;
        }
        SqFetchIn {
            db_valid: true,
            db_qp: q as u8,
            db_pi: qp.pi,
            db_state: state,
            db_sq_base: qp.base,
            db_sq_log: qp.log,
            ..Default::default()
        }
    }

    /// Entries software may still post without overwriting unserved ones.
    fn room(&self, q: usize) -> u32 {
        let qp = &self.qps[q];
        qp.size() - qp.pi.wrapping_sub(qp.served) as u32
    }

    fn stimulus_over(&self, cycle: u64) -> bool {
        cycle >= self.stim_cycles
    }

    /// The doorbell of this cycle, if any.
    fn doorbells(&mut self, cycle: u64) -> SqFetchIn {
        if self.stimulus_over(cycle) {
            // Wake the QPs left in RESET with work, one per cycle.
            let q = (0..QPS).find(|&q| {
                let qp = &self.qps[q];
                qp.dut_state == 0 && qp.pi != qp.fetch && !qp.busy
            });
            if let Some(q) = q {
                if self.room(q) > 0 {
                    return self.post(q, 1, 1);
                }
            }
            return SqFetchIn::default();
        }
        if !self.rng.percent(self.db_pct) {
            return SqFetchIn::default();
        }
        let q = self.active[self.rng.below(self.active.len() as u64) as usize];
        if self.mode_changes && self.rng.percent(3) {
            self.qps[q].mode = self.rng.below(3) as u8;
        }
        let mut state = self.qps[q].mode;
        if self.rng.percent(5) {
            // A repeated doorbell: ignored whatever state it carries.
            state = self.rng.below(4) as u8;
            return self.doorbell(q, state);
        }
        // Room in the ring, and a bounded backlog so that a slow case
        // still drains in a few thousand cycles.
        let backlog = self.qps[q].pi.wrapping_sub(self.qps[q].served) as u32;
        let mut room = self.room(q).min(MAX_BACKLOG.saturating_sub(backlog));
        if state == 0 {
            // Keep a free entry to wake the QP with later.
            room = room.saturating_sub(1);
        }
        if room == 0 {
            return SqFetchIn::default();
        }
        let k = 1 + self.rng.below(room.min(self.max_post) as u64) as u32;
        self.post(q, k, state)
    }

    fn eligible(&self, q: usize) -> bool {
        let qp = &self.qps[q];
        qp.dut_state != 0 && qp.dut_pi != qp.fetch && !qp.busy && qp.avail.len() < SLOTS
    }

    /// The read the contract asks of QP `q` now.
    fn read_for(&self, q: usize) -> Pred {
        let qp = &self.qps[q];
        let off = qp.fetch as u32 & (qp.size() - 1);
        let n = (qp.dut_pi.wrapping_sub(qp.fetch) as u32)
            .min((SLOTS - qp.avail.len()) as u32)
            .min(BATCH as u32)
            .min(qp.size() - off);
        Pred {
            qp: q,
            addr: qp.base + 64 * off as u64,
            len: 64 * n,
        }
    }

    fn check_outputs(&mut self, cycle: u64, o: &SqFetchOut) {
        assert!(o.rd_data_ready, "cycle {cycle}: rd_data_ready low");
        let avail = (0..QPS).fold(0u16, |m, q| m | (!self.qps[q].avail.is_empty() as u16) << q);
        assert_eq!(o.wqe_avail, avail, "cycle {cycle}: wqe_avail");
        assert_eq!(o.ev_wqe_n, self.exp_ev, "cycle {cycle}: ev_wqe_n");
        match self.exp_err.take() {
            Some(q) => {
                assert!(o.err_valid, "cycle {cycle}: failed read of QP {q}: no err");
                assert_eq!(o.err_qp as usize, q, "cycle {cycle}: err_qp");
            }
            None => assert!(!o.err_valid, "cycle {cycle}: unexpected err"),
        }
        match self.exp_pop.take() {
            Some((q, Some(w))) => {
                assert!(o.wqe_valid, "cycle {cycle}: pop of QP {q}: no wqe_valid");
                assert_eq!(o.wqe_qp as usize, q, "cycle {cycle}: wqe_qp");
                assert_eq!(o.wqe_data, w, "cycle {cycle}: QP {q}: WQE bytes");
                self.qps[q].popped += 1;
            }
            _ => assert!(!o.wqe_valid, "cycle {cycle}: wqe_valid without a pop"),
        }
    }

    /// The request visible this cycle: the one predicted at the last edge,
    /// or the one held from the last cycle.
    fn check_request(&mut self, cycle: u64, o: &SqFetchOut) {
        let seen = o.rd_req_valid.then_some((o.rd_req_addr, o.rd_req_len));
        if let Some(h) = self.held {
            assert_eq!(
                seen,
                Some((h.addr, h.len)),
                "cycle {cycle}: request not held"
            );
            assert!(self.pred.is_none());
            return;
        }
        let want = self.pred.take();
        assert_eq!(
            seen,
            want.map(|p| (p.addr, p.len)),
            "cycle {cycle}: read request (expected QP {:?})",
            want.map(|p| p.qp)
        );
        let Some(p) = want else { return };
        let qp = &mut self.qps[p.qp];
        assert!(qp.in_ring(p.addr), "cycle {cycle}: read outside the ring");
        assert!(
            p.addr + p.len as u64 <= qp.base + 64 * qp.size() as u64,
            "cycle {cycle}: read crosses the ring end"
        );
        let n = p.len / 64;
        assert!((1..=BATCH as u32).contains(&n), "cycle {cycle}: {n} WQEs");
        let off = qp.fetch as u32 & (qp.size() - 1);
        let cut = qp.size() - off == n && (qp.dut_pi.wrapping_sub(qp.fetch) as u32) > n;
        qp.fetch = qp.fetch.wrapping_add(n as u16);
        qp.busy = true;
        self.issued.push_back(p.qp);
        self.rr = (p.qp + 1) % QPS;
        self.reads += 1;
        self.multi += (n > 1) as u64;
        self.full_batch += (n == BATCH as u32) as u64;
        self.cut_at_end += cut as u64;
    }
}

impl Env for FetchEnv {
    type In = SqFetchIn;
    type Out = SqFetchOut;

    fn step(&mut self, cycle: u64, o: &SqFetchOut) -> SqFetchIn {
        self.cycle = cycle + 1;
        self.check_outputs(cycle, o);
        self.check_request(cycle, o);

        // The block's view at this edge: before this cycle's beats and pops.
        let slot_free = !o.rd_req_valid;
        let fifo_room = self.issued.len() < INFL;

        let mut i = self.doorbells(cycle);

        // Read requests, taken under back-pressure.
        let ready = self.rng.percent(self.ready_pct);
        i.rd_req_ready = ready;
        if o.rd_req_valid && ready {
            let q = *self.issued.back().expect("a request on rd_req was issued");
            let (lo, hi) = self.latency;
            let lat = lo + self.rng.below(hi - lo + 1);
            let fail = self.rng.percent(self.fail_pct);
            self.taken.push_back(Read {
                qp: q,
                addr: o.rd_req_addr,
                beats: o.rd_req_len / 64,
                ready_at: cycle + lat,
                fail,
            });
            self.held = None;
        } else if o.rd_req_valid {
            self.held = Some(Pred {
                qp: *self.issued.back().unwrap(),
                addr: o.rd_req_addr,
                len: o.rd_req_len,
            });
        } else {
            self.held = None;
        }

        // Snapshot for the prediction of this edge's read: this cycle's
        // doorbell is in, its beats and pops act at the edge, after the block
        // has looked.
        let elig: Vec<bool> = (0..QPS).map(|q| self.eligible(q)).collect();
        let reads: Vec<Pred> = (0..QPS).map(|q| self.read_for(q)).collect();

        // Pops: mostly of a QP with a WQE, sometimes of any QP. Before the
        // beats: a WQE whose last beat comes this cycle is not poppable yet.
        if self.rng.percent(self.pop_pct) || self.stimulus_over(cycle) {
            let q = if o.wqe_avail != 0 && !self.rng.percent(10) {
                let bits: Vec<usize> = (0..QPS).filter(|&q| o.wqe_avail >> q & 1 != 0).collect();
                bits[self.rng.below(bits.len() as u64) as usize]
            } else {
                self.rng.below(QPS as u64) as usize
            };
            i.wqe_pop_valid = true;
            i.wqe_pop_qp = q as u8;
            let w = self.qps[q].avail.pop_front();
            self.pops_empty += w.is_none() as u64;
            self.exp_pop = Some((q, w));
        }

        // Beats, in order, one per cycle, with gaps.
        self.exp_ev = 0;
        if let Some(r) = self.taken.front() {
            if cycle >= r.ready_at && !self.rng.percent(self.gap_pct) {
                let last = self.beat + 1 == r.beats;
                let addr = r.addr + 64 * self.beat as u64;
                i.rd_data_valid = true;
                if !r.fail {
                    for (j, b) in i.rd_data.iter_mut().enumerate() {
                        *b = *self
                            .mem
                            .get(&(addr + j as u64))
                            .expect("read of memory never written");
                    }
                }
                i.rd_data_last = last;
                i.rd_data_status = if r.fail && last {
                    1 + self.rng.below(4) as u8
                } else {
                    0
                };
                self.beat += 1;
                if last {
                    let r = self.taken.pop_front().unwrap();
                    assert_eq!(self.issued.pop_front(), Some(r.qp));
                    self.beat = 0;
                    let qp = &mut self.qps[r.qp];
                    qp.busy = false;
                    qp.served = qp.served.wrapping_add(r.beats as u16);
                    let wqes: Vec<Beat> = qp.ring.drain(..r.beats as usize).collect();
                    if r.fail {
                        qp.dropped += r.beats as u64;
                        self.exp_err = Some(r.qp);
                        self.failed += 1;
                    } else {
                        qp.avail.extend(wqes);
                        self.exp_ev = r.beats as u8;
                    }
                }
            }
        }

        // The read issued at this edge: round robin among the eligible QPs
        // (this cycle's doorbell counts, it is in the snapshot).
        self.pred = None;
        if (slot_free || ready) && fifo_room {
            if let Some(q) = (0..QPS).map(|k| (self.rr + k) % QPS).find(|&q| elig[q]) {
                self.pred = Some(reads[q]);
            }
        }
        if self.held.is_some() {
            assert!(!ready);
        }
        i
    }

    fn finished(&self) -> bool {
        self.stimulus_over(self.cycle)
            && (self.issued.is_empty()
                && self
                    .qps
                    .iter()
                    .all(|qp| qp.pi == qp.served && qp.avail.is_empty())
                && !matches!(self.exp_pop, Some((_, Some(_))))
                && self.exp_err.is_none())
    }
}

fn run_case(seed: u64, stim: u64) -> (u64, FetchEnv) {
    let mut env = FetchEnv::random(seed);
    env.stim_cycles = stim;
    let fin = lockstep::run(
        &mut SqFetch::new(),
        &mut RtlSqFetch::new(),
        &mut env,
        MAX_CYCLES,
    )
    .unwrap_or_else(|d| panic!("seed {seed:#x}: {d}"));
    if !fin.completed {
        for (q, qp) in env.qps.iter().enumerate() {
            eprintln!(
                "QP {q}: log {} pi {} dut_pi {} state {} fetch {} served {} avail {} busy {}",
                qp.log,
                qp.pi,
                qp.dut_pi,
                qp.dut_state,
                qp.fetch,
                qp.served,
                qp.avail.len(),
                qp.busy
            );
        }
        panic!(
            "seed {seed:#x}: not drained after {} cycles ({} reads out)",
            fin.cycles,
            env.issued.len()
        );
    }
    for (q, qp) in env.qps.iter().enumerate() {
        assert_eq!(
            qp.popped + qp.dropped,
            qp.posted,
            "seed {seed:#x}: QP {q}: WQEs popped + dropped != posted"
        );
    }
    (fin.cycles, env)
}

#[test]
fn sq_fetch_random_lockstep() {
    let mut total = 0;
    let (mut reads, mut multi, mut full, mut cut, mut failed, mut popped, mut dropped) =
        (0, 0, 0, 0, 0, 0, 0);
    let run = common::run_cases(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let (cycles, env) = run_case(seed, STIM_CYCLES);
        total += cycles;
        reads += env.reads;
        multi += env.multi;
        full += env.full_batch;
        cut += env.cut_at_end;
        failed += env.failed;
        for qp in &env.qps {
            popped += qp.popped;
            dropped += qp.dropped;
        }
    });
    println!(
        "sq_fetch: {} cases, {total} cycles, {reads} reads ({multi} of several WQEs, \
         {full} of BATCH, {cut} cut at the ring end, {failed} failed), \
         {popped} WQEs popped, {dropped} dropped",
        run.cases
    );
    assert!(multi > 0 && full > 0 && cut > 0, "batching never happened");
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} cycles");
        assert!(failed > 0 && dropped > 0, "no failed read");
    }
}

#[test]
fn sq_fetch_indices_wrap_at_16_bits() {
    // One QP, a ring of 8, everything fast: more than 2^16 WQEs go through,
    // so the producer and fetch indices wrap (and the ring wraps 8192 times).
    let seed = common::seed(DEFAULT_SEED) ^ 0x77;
    let mut env = FetchEnv::random(seed);
    let q = 5;
    env.active = vec![q];
    env.qps[q].log = 3;
    env.qps[q].mode = 1;
    env.db_pct = 90;
    env.ready_pct = 100;
    env.gap_pct = 0;
    env.pop_pct = 100;
    env.fail_pct = 1;
    env.latency = (1, 2);
    env.max_post = 8;
    env.mode_changes = false;
    env.stim_cycles = 160_000;
    let fin = lockstep::run(
        &mut SqFetch::new(),
        &mut RtlSqFetch::new(),
        &mut env,
        MAX_CYCLES * 4,
    )
    .unwrap_or_else(|d| panic!("seed {seed:#x}: {d}"));
    let qp = &env.qps[q];
    println!(
        "sq_fetch wrap: {} cycles, {} WQEs posted, {} popped, {} dropped, {} reads",
        fin.cycles, qp.posted, qp.popped, qp.dropped, env.reads
    );
    assert!(fin.completed, "not drained");
    assert!(
        qp.posted > 0x1_0000,
        "only {} WQEs: no 16-bit wrap",
        qp.posted
    );
    assert_eq!(qp.popped + qp.dropped, qp.posted);
}
