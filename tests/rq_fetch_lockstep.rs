//! Constrained-random block-level lockstep of `rq_fetch`.
//!
//! Model and RTL get the same stimulus from an environment that plays host
//! software, `dma_rd` and the responder:
//! - software posts RECV WQEs (random bytes, a wr_id naming the WQE, written
//!   with the testbench's codec `wire::rqe`) into per-QP rings of 2^0..2^16
//!   entries (also logs above 16, which mean 2^16) in a host-memory image and rings RQ doorbells; now and then a
//!   QP changes state (INIT, RTR, RTS, ERROR, or RESET, which clears it and
//!   may give it a new ring size), and some doorbells repeat the producer
//!   index; software never overwrites an entry whose read has not been
//!   served;
//! - a host-memory responder takes `rd_req`s under random back-pressure and
//!   serves them in order after a random latency, one beat per cycle with
//!   random gaps, two beats per WQE, from the image; now and then a read
//!   fails: junk data and a non-zero status on its last beat, on one
//!   random beat, or on every beat;
//! - a simulated responder reads the head of random QPs (mostly ones with a
//!   WQE, sometimes empty ones) and pops QPs that have one.
//!
//! The environment checks the contract (docs/responder.md, "rq_fetch") on
//! its own, from the stimulus alone:
//! - every new `rd_req` is 128-aligned, of 1..=BATCH WQEs, inside one QP's
//!   ring without crossing its end, starts at that QP's next ring index in
//!   order, asks only for WQEs posted and rung, never more than the QP's
//!   free slots, never while a read of that QP is in flight, never for a QP
//!   in RESET; a request not taken is held unchanged; at most INFL reads are
//!   in flight;
//! - `rqe_avail` is the environment's own per-QP book of fetched WQEs (last
//!   beat at n -> available at n+1); `ev_rqe_n` counts them;
//! - a head read at n gives at n+1 whether the QP had a WQE and its 128
//!   bytes, byte-exact from what software posted, in ring order, each WQE
//!   once (pops take them away); outputs hold between reads;
//! - a failed read reports `err_valid`/`err_qp` the cycle after its last
//!   beat and delivers none of its WQEs; a read of a QP reset while it was
//!   in flight delivers nothing and reports nothing;
//! - at the end every posted WQE was popped, lost to a failed read or
//!   cleared by a RESET, and nothing is left in flight.
//!
//! Directed tests: the latency contract (doorbell at n -> `rd_req_valid` at
//! n+3 for an idle block; last beat at n -> `rqe_avail` at n+1), one QP
//! past the 16-bit wrap of its indices, and the block's assertions firing.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. Every
//! case runs at least [`STIM_CYCLES`] cycles (the environment is not
//! finished before), so a default run is at least [`MIN_TOTAL_CYCLES`].

mod common;

use std::collections::{HashMap, VecDeque};

use rnic_model::rq_fetch::{RqFetch, RqFetchIn, RqFetchOut, BATCH, INFL, QPS, SLOTS};
use rnic_model::Dut;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRqFetch;
use rnic_testbench::wire::rqe;

const DEFAULT_CASES: u64 = 64;
const DEFAULT_SEED: u64 = 0x7271_5F66_6574_6368; // "rq_fetch"
/// Cycles of stimulus per case; then the rings drain.
const STIM_CYCLES: u64 = 20_000;
const MAX_CYCLES: u64 = 100_000;
const MIN_TOTAL_CYCLES: u64 = DEFAULT_CASES * STIM_CYCLES;
/// Software stops posting on a QP with this many WQEs not yet served.
const MAX_BACKLOG: u32 = 40;
/// QP states on `db_state`.
const RESET: u8 = 0;
const LIVE_STATES: [u8; 4] = [4, 3, 1, 2];

type Wqe = [u8; 128];

/// One QP as software and the checker see it.
#[derive(Default)]
struct Qp {
    base: u64,
    log: u8,
    /// The state of the last doorbell (software rings on every change).
    state: u8,
    /// RESET doorbells so far: a read issued before one is discarded.
    epoch: u32,
    /// Producer index rung.
    pi: u16,
    /// Next index the block must read.
    fetch: u16,
    /// Reads returned up to here: ring entries before it may be rewritten.
    served: u16,
    /// Posted WQEs from `fetch` on.
    ring: VecDeque<Wqe>,
    /// Fetched, not popped, in order.
    avail: VecDeque<Wqe>,
    /// Reads of this QP in flight (issued, last beat not back), any epoch.
    inflight: u32,
    posted: u64,
    popped: u64,
    failed: u64,
    cleared: u64,
}

impl Qp {
    /// Ring entries: a log above 16 is the whole 16-bit index space.
    fn size(&self) -> u32 {
        1 << self.log.min(16)
    }
    fn end(&self) -> u64 {
        self.base + 128 * self.size() as u64
    }
}

/// A read the block issued.
struct Read {
    qp: usize,
    epoch: u32,
    addr: u64,
    n: u32,
    wqes: Vec<Wqe>,
    ready_at: u64,
    /// Status pattern: 0 good, 1 on the last beat, 2 on one beat, 3 on all.
    fail: u8,
    fail_beat: u32,
}

struct FetchEnv {
    rng: SplitMix64,
    qps: Vec<Qp>,
    /// Host memory, one WQE per 128-byte aligned address.
    mem: HashMap<u64, Wqe>,
    active: Vec<usize>,
    db_pct: u8,
    state_pct: u8,
    ready_pct: u8,
    gap_pct: u8,
    pop_pct: u8,
    read_pct: u8,
    fail_pct: u8,
    latency: (u64, u64),
    max_post: u32,
    stim_cycles: u64,
    cycle: u64,
    wr_seq: u64,
    /// The request on rd_req, issued and not yet taken.
    offered: Option<Read>,
    /// Taken, in order; the front one is being served.
    taken: VecDeque<Read>,
    beat: u32,
    /// Expected next cycle.
    exp_read: Option<(bool, Option<Wqe>)>,
    exp_err: Option<usize>,
    exp_ev: u8,
    prev_out: Option<RqFetchOut>,
    prev_ready: bool,
    // Statistics.
    reads: u64,
    multi: u64,
    cut_at_end: u64,
    failed_reads: u64,
    discarded_reads: u64,
    resets: u64,
    held: u64,
    reads_present: u64,
    reads_empty: u64,
    full_infl: u64,
}

impl FetchEnv {
    fn random(seed: u64, qps_used: usize) -> Self {
        let mut rng = SplitMix64::new(seed);
        let n_active = [1, 2, 3, 5, 8, qps_used][rng.below(6) as usize].min(qps_used);
        let mut all: Vec<usize> = (0..qps_used).collect();
        for k in (1..qps_used).rev() {
            let j = rng.below(k as u64 + 1) as usize;
            all.swap(k, j);
        }
        let active = all[..n_active].to_vec();
        let mut qps: Vec<Qp> = (0..QPS).map(|_| Qp::default()).collect();
        for (q, qp) in qps.iter_mut().enumerate() {
            qp.log = Self::random_log(&mut rng);
            // Rings 2^36 apart at a random 128-byte boundary of their first
            // MiB (a ring is at most 4 MiB); the last QP's high in the
            // address space.
            let top = if q == QPS - 1 {
                0xFFFF_0000_0000_0000
            } else {
                0
            };
            qp.base = top | (q as u64 + 1) << 36 | rng.below(1 << 13) << 7;
            qp.state = RESET;
        }
        let lat_lo = [1, 2, 5, 20][rng.below(4) as usize];
        FetchEnv {
            qps,
            mem: HashMap::new(),
            active,
            db_pct: [5, 15, 40, 80][rng.below(4) as usize],
            state_pct: [1, 3, 8][rng.below(3) as usize],
            ready_pct: [100, 70, 30][rng.below(3) as usize],
            gap_pct: [0, 20, 60][rng.below(3) as usize],
            pop_pct: [100, 60, 20, 5][rng.below(4) as usize],
            read_pct: [0, 30, 90][rng.below(3) as usize],
            fail_pct: [0, 3, 10][rng.below(3) as usize],
            latency: (lat_lo, lat_lo + [0, 5, 40][rng.below(3) as usize]),
            max_post: [1, 2, 5, 20][rng.below(4) as usize],
            stim_cycles: STIM_CYCLES,
            cycle: 0,
            rng,
            wr_seq: 0,
            offered: None,
            taken: VecDeque::new(),
            beat: 0,
            exp_read: None,
            exp_err: None,
            exp_ev: 0,
            prev_out: None,
            prev_ready: false,
            reads: 0,
            multi: 0,
            cut_at_end: 0,
            failed_reads: 0,
            discarded_reads: 0,
            resets: 0,
            held: 0,
            reads_present: 0,
            reads_empty: 0,
            full_infl: 0,
        }
    }

    fn random_log(rng: &mut SplitMix64) -> u8 {
        [0u8, 1, 1, 2, 3, 4, 6, 9, 15, 16, 21][rng.below(11) as usize]
    }

    fn stimulus_over(&self) -> bool {
        self.cycle >= self.stim_cycles
    }

    fn doorbell(&self, q: usize, pi: u16) -> RqFetchIn {
        let qp = &self.qps[q];
        RqFetchIn {
            db_valid: true,
            db_qp: q as u8,
            db_pi: pi,
            db_state: qp.state,
            db_base: qp.base,
            db_log: qp.log,
            ..Default::default()
        }
    }

    /// Posts `k` WQEs on QP `q` (not in RESET) and returns its doorbell.
    fn post(&mut self, q: usize, k: u32) -> RqFetchIn {
        for _ in 0..k {
            let mut w = [0u8; 128];
            for b in w.iter_mut() {
                *b = self.rng.next_u64() as u8;
            }
            self.wr_seq += 1;
            rqe::Rqe::new_unchecked(&mut w[..]).set_wr_id(self.wr_seq << 8 | q as u64);
            let qp = &mut self.qps[q];
            let addr = qp.base + 128 * (qp.pi as u64 & (qp.size() as u64 - 1));
            self.mem.insert(addr, w);
            qp.ring.push_back(w);
            qp.posted += 1;
            qp.pi = qp.pi.wrapping_add(1);
        }
        self.doorbell(q, self.qps[q].pi)
    }

    /// A RESET doorbell: the block clears the QP; so does software. Its
    /// producer index is junk (ignored by contract); the ring may change size.
    fn reset_qp(&mut self, q: usize) -> RqFetchIn {
        let junk = self.rng.next_u64() as u16;
        // The first RESET (defining the QP) keeps the ring a test chose.
        if self.qps[q].epoch > 0 && self.rng.percent(30) {
            self.qps[q].log = Self::random_log(&mut self.rng);
        }
        let qp = &mut self.qps[q];
        qp.state = RESET;
        qp.epoch += 1;
        qp.cleared += (qp.ring.len() + qp.avail.len()) as u64;
        qp.ring.clear();
        qp.avail.clear();
        qp.pi = 0;
        qp.fetch = 0;
        qp.served = 0;
        self.resets += 1;
        self.doorbell(q, junk)
    }

    /// This cycle's doorbell, if any.
    fn doorbells(&mut self) -> RqFetchIn {
        if self.stimulus_over() {
            return RqFetchIn::default();
        }
        if !self.rng.percent(self.db_pct) {
            return RqFetchIn::default();
        }
        let q = self.active[self.rng.below(self.active.len() as u64) as usize];
        if self.qps[q].epoch == 0 {
            // docs/responder.md: a QP's rows (RAM) are defined by its first
            // RESET doorbell (csr sends one on the QP's EPSN write).
            return self.reset_qp(q);
        }
        let first = self.qps[q].state == RESET && self.qps[q].posted == 0;
        if first || self.rng.percent(self.state_pct) {
            let s = if first {
                LIVE_STATES[self.rng.below(4) as usize]
            } else {
                [RESET, 4, 3, 1, 2][self.rng.below(5) as usize]
            };
            if s == RESET {
                return self.reset_qp(q);
            }
            self.qps[q].state = s;
        }
        if self.qps[q].state == RESET {
            if self.rng.percent(20) {
                // Software rings a QP in RESET: cleared again.
                return self.reset_qp(q);
            }
            // Software brings it back up (INIT first, or straight on).
            self.qps[q].state = LIVE_STATES[self.rng.below(4) as usize];
        }
        let qp = &self.qps[q];
        let unserved = qp.pi.wrapping_sub(qp.served) as u32;
        let room = (qp.size() - unserved).min(MAX_BACKLOG.saturating_sub(unserved));
        // k = 0: a doorbell repeating the producer index.
        let k = if self.rng.percent(5) || room == 0 {
            0
        } else {
            1 + self.rng.below(room.min(self.max_post) as u64) as u32
        };
        self.post(q, k)
    }

    fn outstanding(&self) -> usize {
        self.taken.len() + self.offered.is_some() as usize
    }

    /// A request seen on rd_req for the first time.
    fn new_request(&mut self, cycle: u64, addr: u64, len: u32) {
        assert!(
            addr.is_multiple_of(128) && len.is_multiple_of(128),
            "cycle {cycle}: rd_req {addr:#x}+{len} not 128-aligned"
        );
        let n = len / 128;
        assert!(
            (1..=BATCH as u32).contains(&n),
            "cycle {cycle}: read of {n} WQEs"
        );
        let q = (0..QPS)
            .find(|&q| addr >= self.qps[q].base && addr < self.qps[q].end())
            .unwrap_or_else(|| panic!("cycle {cycle}: rd_req {addr:#x} in no ring"));
        assert!(
            self.outstanding() < INFL,
            "cycle {cycle}: more than {INFL} reads in flight"
        );
        self.full_infl += (self.outstanding() + 1 == INFL) as u64;
        let qp = &mut self.qps[q];
        assert_ne!(qp.state, RESET, "cycle {cycle}: read of QP {q} in RESET");
        assert_eq!(
            qp.inflight, 0,
            "cycle {cycle}: second read of QP {q} in flight"
        );
        let off = qp.fetch as u32 & (qp.size() - 1);
        assert_eq!(
            addr,
            qp.base + 128 * off as u64,
            "cycle {cycle}: QP {q}: read not at the next ring index {}",
            qp.fetch
        );
        assert!(
            addr + len as u64 <= qp.end(),
            "cycle {cycle}: QP {q}: read crosses the ring end"
        );
        let posted = qp.pi.wrapping_sub(qp.fetch) as u32;
        assert!(
            n <= posted,
            "cycle {cycle}: QP {q}: read of {n} WQEs, {posted} posted"
        );
        assert!(
            n as usize <= SLOTS - qp.avail.len(),
            "cycle {cycle}: QP {q}: read of {n} WQEs with {} of {SLOTS} slots full",
            qp.avail.len()
        );
        self.reads += 1;
        self.multi += (n > 1) as u64;
        self.cut_at_end += (addr + len as u64 == qp.end() && n < posted && n < BATCH as u32) as u64;
        qp.fetch = qp.fetch.wrapping_add(n as u16);
        qp.inflight += 1;
        let wqes: Vec<Wqe> = qp.ring.drain(..n as usize).collect();
        let fail = if self.rng.percent(self.fail_pct) {
            1 + self.rng.below(3) as u8
        } else {
            0
        };
        self.offered = Some(Read {
            qp: q,
            epoch: qp.epoch,
            addr,
            n,
            wqes,
            ready_at: 0,
            fail,
            fail_beat: self.rng.below(2 * n as u64) as u32,
        });
    }

    fn check_outputs(&mut self, cycle: u64, o: &RqFetchOut) {
        assert!(o.rd_data_ready, "cycle {cycle}: rd_data_ready low");
        let avail = (0..QPS).fold(0u16, |m, q| m | (!self.qps[q].avail.is_empty() as u16) << q);
        assert_eq!(o.rqe_avail, avail, "cycle {cycle}: rqe_avail");
        assert_eq!(o.ev_rqe_n, self.exp_ev, "cycle {cycle}: ev_rqe_n");
        match self.exp_err.take() {
            Some(q) => {
                assert!(o.err_valid, "cycle {cycle}: failed read of QP {q}: no err");
                assert_eq!(o.err_qp as usize, q, "cycle {cycle}: err_qp");
            }
            None => assert!(!o.err_valid, "cycle {cycle}: unexpected err"),
        }
        match self.exp_read.take() {
            Some((present, w)) => {
                assert_eq!(o.rqe_present, present, "cycle {cycle}: rqe_present");
                if let Some(w) = w {
                    assert!(
                        o.rqe_data.0 == w,
                        "cycle {cycle}: head WQE bytes: got {:?}",
                        o.rqe_data
                    );
                }
            }
            None => {
                if let Some(p) = &self.prev_out {
                    assert_eq!(o.rqe_present, p.rqe_present, "cycle {cycle}: present held");
                    assert!(o.rqe_data == p.rqe_data, "cycle {cycle}: data held");
                }
            }
        }
        // Requests: held while not taken, checked when new.
        let was_held = self.prev_out.is_some_and(|p| p.rd_req_valid) && !self.prev_ready;
        if was_held {
            let p = self.prev_out.unwrap();
            assert!(
                o.rd_req_valid && o.rd_req_addr == p.rd_req_addr && o.rd_req_len == p.rd_req_len,
                "cycle {cycle}: request not held"
            );
            self.held += 1;
        } else if o.rd_req_valid {
            self.new_request(cycle, o.rd_req_addr, o.rd_req_len);
        }
    }

    /// Serves the front read: this cycle's beat, if any.
    fn serve(&mut self, cycle: u64, i: &mut RqFetchIn) {
        let Some(r) = self.taken.front() else { return };
        if cycle < r.ready_at || self.rng.percent(self.gap_pct) {
            return;
        }
        let nb = 2 * r.n;
        let last = self.beat + 1 == nb;
        let bad = match r.fail {
            0 => false,
            1 => last,
            2 => self.beat == r.fail_beat,
            _ => true,
        };
        i.rd_data_valid = true;
        i.rd_data_last = last;
        i.rd_data_status = if bad { 1 + self.rng.below(7) as u8 } else { 0 };
        if r.fail != 0 {
            for b in i.rd_data.iter_mut() {
                *b = self.rng.next_u64() as u8;
            }
        } else {
            let w = self
                .mem
                .get(&(r.addr + 128 * (self.beat / 2) as u64))
                .expect("read of memory never written");
            let h = (self.beat % 2) as usize * 64;
            i.rd_data.0.copy_from_slice(&w[h..h + 64]);
        }
        self.beat += 1;
        if !last {
            return;
        }
        self.beat = 0;
        let r = self.taken.pop_front().unwrap();
        let qp = &mut self.qps[r.qp];
        qp.inflight -= 1;
        if qp.epoch != r.epoch {
            // Reset while in flight (or in this very cycle): nothing.
            qp.cleared += r.n as u64;
            self.discarded_reads += 1;
            return;
        }
        qp.served = qp.served.wrapping_add(r.n as u16);
        if r.fail != 0 {
            qp.failed += r.n as u64;
            self.exp_err = Some(r.qp);
            self.failed_reads += 1;
        } else {
            qp.avail.extend(r.wqes);
            self.exp_ev = r.n as u8;
        }
    }

    fn pick(&mut self, with_wqe: bool, qps_used: usize) -> Option<usize> {
        let have: Vec<usize> = (0..QPS)
            .filter(|&q| !self.qps[q].avail.is_empty())
            .collect();
        if with_wqe {
            if have.is_empty() {
                return None;
            }
            return Some(have[self.rng.below(have.len() as u64) as usize]);
        }
        Some(self.rng.below(qps_used as u64) as usize)
    }
}

impl Env for FetchEnv {
    type In = RqFetchIn;
    type Out = RqFetchOut;

    fn step(&mut self, cycle: u64, o: &RqFetchOut) -> RqFetchIn {
        self.cycle = cycle;
        self.check_outputs(cycle, o);
        let drain = self.stimulus_over();

        // Head read: the state before this cycle's pop, completion, doorbell.
        let mut i = RqFetchIn::default();
        if self.rng.percent(self.read_pct) || (drain && self.rng.percent(50)) {
            let with = !self.rng.percent(20);
            if let Some(q) = self.pick(with, QPS) {
                i.rqe_rd_valid = true;
                i.rqe_rd_qp = q as u8;
                let head = self.qps[q].avail.front().copied();
                self.reads_present += head.is_some() as u64;
                self.reads_empty += head.is_none() as u64;
                self.exp_read = Some((head.is_some(), head));
            }
        }
        // Pop of a QP with a WQE.
        if self.rng.percent(self.pop_pct) || drain {
            if let Some(q) = self.pick(true, QPS) {
                i.rqe_pop_valid = true;
                i.rqe_pop_qp = q as u8;
                self.qps[q].avail.pop_front();
                self.qps[q].popped += 1;
            }
        }
        // Doorbell (a RESET clears what the pop left).
        let d = self.doorbells();
        i.db_valid = d.db_valid;
        i.db_qp = d.db_qp;
        i.db_pi = d.db_pi;
        i.db_state = d.db_state;
        i.db_base = d.db_base;
        i.db_log = d.db_log;
        // Beats, after the doorbell: a reset in this cycle discards too.
        self.exp_ev = 0;
        self.serve(cycle, &mut i);
        // The request, taken under back-pressure.
        let ready = drain && self.rng.percent(50) || self.rng.percent(self.ready_pct);
        i.rd_req_ready = ready;
        if o.rd_req_valid && ready {
            let (lo, hi) = self.latency;
            let mut r = self.offered.take().expect("a request on offer");
            r.ready_at = cycle + lo + self.rng.below(hi - lo + 1);
            self.taken.push_back(r);
        }
        self.prev_out = Some(*o);
        self.prev_ready = ready;
        i
    }

    fn finished(&self) -> bool {
        self.stimulus_over()
            && self.offered.is_none()
            && self.taken.is_empty()
            && self
                .qps
                .iter()
                .all(|qp| qp.fetch == qp.pi && qp.avail.is_empty())
            && self.exp_err.is_none()
            && self.exp_ev == 0
            && self.exp_read.is_none()
    }
}

fn run_case(seed: u64, qps_used: usize) -> (u64, FetchEnv) {
    let mut env = FetchEnv::random(seed, qps_used);
    let fin = lockstep::run(
        &mut RqFetch::new(),
        &mut RtlRqFetch::new(),
        &mut env,
        MAX_CYCLES,
    )
    .unwrap_or_else(|d| panic!("seed {seed:#x}: {d}"));
    if !fin.completed {
        for (q, qp) in env.qps.iter().enumerate() {
            eprintln!(
                "QP {q}: log {} state {} pi {} fetch {} served {} avail {} inflight {}",
                qp.log,
                qp.state,
                qp.pi,
                qp.fetch,
                qp.served,
                qp.avail.len(),
                qp.inflight
            );
        }
        panic!(
            "seed {seed:#x}: not drained after {} cycles ({} reads out)",
            fin.cycles,
            env.outstanding()
        );
    }
    for (q, qp) in env.qps.iter().enumerate() {
        assert_eq!(
            qp.popped + qp.failed + qp.cleared,
            qp.posted,
            "seed {seed:#x}: QP {q}: popped + failed + cleared != posted"
        );
    }
    (fin.cycles, env)
}

#[test]
fn rq_fetch_random_lockstep() {
    let mut total = 0;
    let mut st = [0u64; 12];
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let (cycles, env) = run_case(seed, QPS);
        total += cycles;
        let popped: u64 = env.qps.iter().map(|q| q.popped).sum();
        let cleared: u64 = env.qps.iter().map(|q| q.cleared).sum();
        for (s, v) in st.iter_mut().zip([
            env.reads,
            env.multi,
            env.cut_at_end,
            env.failed_reads,
            env.discarded_reads,
            env.resets,
            env.held,
            env.reads_present,
            env.reads_empty,
            env.full_infl,
            popped,
            cleared,
        ]) {
            *s += v;
        }
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        let [reads, multi, cut, failed, discarded, resets, held, _, empty, full_infl, popped, cleared] =
            st;
        reads >= 20_000
            && popped >= 20_000
            && multi >= 1_000
            && cut >= 50
            && failed >= 50
            && discarded >= 10
            && held >= 1_000
            && full_infl >= 100
            && empty >= 1_000
            && resets >= 500
            && cleared >= 1_000
    });
    let [reads, multi, cut, failed, discarded, resets, held, present, empty, full_infl, popped, cleared] =
        st;
    println!(
        "rq_fetch: {} cases, {total} cycles, {reads} reads ({multi} of several WQEs, \
         {cut} cut at the ring end, {failed} failed, {discarded} discarded after a reset, \
         {held} request cycles held, {full_infl} reaching INFL), {resets} RESET doorbells, \
         {popped} WQEs popped, {cleared} cleared, head reads {present} present / {empty} empty",
        run.cases
    );
    if run.full {
        // By construction: no case finishes before STIM_CYCLES.
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} cycles");
        // Measured on the default run, with a wide margin.
        assert!(reads >= 20_000 && popped >= 20_000, "few reads");
        assert!(multi >= 1_000 && cut >= 50, "batching barely exercised");
        assert!(failed >= 50 && discarded >= 10, "failures barely exercised");
        assert!(
            held >= 1_000 && full_infl >= 100,
            "back-pressure barely exercised"
        );
        assert!(empty >= 1_000, "reads of empty QPs barely exercised");
        assert!(resets >= 500 && cleared >= 1_000, "RESET barely exercised");
    }
}

#[test]
fn rq_fetch_indices_wrap_at_16_bits() {
    // One QP, everything fast: more than 2^16 WQEs go through, so the
    // producer and fetch indices wrap; with a ring of 8 the ring wraps
    // thousands of times, with a log of 21 (the whole 16-bit index space)
    // its end is where the indices wrap.
    for log in [3u8, 21] {
        let seed = common::seed(DEFAULT_SEED) ^ 0x77 ^ log as u64;
        let mut env = FetchEnv::random(seed, QPS);
        let q = 9;
        env.active = vec![q];
        env.qps[q].log = log;
        env.db_pct = 90;
        env.state_pct = 0;
        env.ready_pct = 100;
        env.gap_pct = 0;
        env.pop_pct = 100;
        env.read_pct = 50;
        env.fail_pct = 1;
        env.latency = (1, 2);
        env.max_post = 8;
        env.stim_cycles = 700_000;
        let fin = lockstep::run(
            &mut RqFetch::new(),
            &mut RtlRqFetch::new(),
            &mut env,
            800_000,
        )
        .unwrap_or_else(|d| panic!("seed {seed:#x}: {d}"));
        let qp = &env.qps[q];
        println!(
            "rq_fetch wrap, log {log}: {} cycles, {} WQEs posted, {} popped, {} failed, {} reads",
            fin.cycles, qp.posted, qp.popped, qp.failed, env.reads
        );
        assert!(fin.completed, "not drained");
        assert!(
            qp.posted > 0x1_0000,
            "only {} WQEs: no 16-bit wrap",
            qp.posted
        );
        assert_eq!(qp.popped + qp.failed, qp.posted);
    }
}

/// A scripted run: `script(cycle, outputs)` gives the inputs.
struct Script<F: FnMut(u64, &RqFetchOut) -> Option<RqFetchIn>>(F, bool);

impl<F: FnMut(u64, &RqFetchOut) -> Option<RqFetchIn>> Env for Script<F> {
    type In = RqFetchIn;
    type Out = RqFetchOut;
    fn step(&mut self, cycle: u64, o: &RqFetchOut) -> RqFetchIn {
        match (self.0)(cycle, o) {
            Some(i) => i,
            None => {
                self.1 = true;
                RqFetchIn::default()
            }
        }
    }
    fn finished(&self) -> bool {
        self.1
    }
}

/// The cycle contract, for QPs across the range, in lockstep: a doorbell
/// at n for an idle block puts the read on `rd_req` at n+3; with the
/// request taken at once and the data back at once, the last beat at L
/// sets `rqe_avail` at L+1 and `ev_rqe_n` pulses there; a head read at
/// L+1 gives the WQE at L+2.
#[test]
fn rq_fetch_latency() {
    const DB: u64 = 5;
    for q in [0usize, 1, QPS / 2, QPS - 1] {
        let base = 0x40_0000u64 + 0x1000 * q as u64;
        let w: Vec<Wqe> = (0..2u8)
            .map(|k| core::array::from_fn(|j| (j as u8).wrapping_mul(3) ^ k ^ q as u8))
            .collect();
        let mut req_at = None;
        let mut last_at = None;
        let mut avail_at = None;
        let mut got = None;
        let mut env = Script(
            |c: u64, o: &RqFetchOut| -> Option<RqFetchIn> {
                let mut i = RqFetchIn {
                    rd_req_ready: true,
                    ..Default::default()
                };
                if o.rd_req_valid && req_at.is_none() {
                    req_at = Some(c);
                    assert_eq!((o.rd_req_addr, o.rd_req_len), (base, 256));
                }
                if o.rqe_avail >> q & 1 == 1 && avail_at.is_none() {
                    avail_at = Some(c);
                    assert_eq!(o.ev_rqe_n, 2);
                    i.rqe_rd_valid = true;
                    i.rqe_rd_qp = q as u8;
                }
                if avail_at.is_some_and(|a| c == a + 1) {
                    assert!(o.rqe_present);
                    got = Some(o.rqe_data);
                    return None;
                }
                // The QP's rows are defined by a RESET doorbell first.
                if c == DB - 2 {
                    i.db_valid = true;
                    i.db_qp = q as u8;
                    i.db_state = 0;
                }
                if c == DB {
                    i.db_valid = true;
                    i.db_qp = q as u8;
                    i.db_pi = 2;
                    i.db_state = 3;
                    i.db_base = base;
                    i.db_log = 4;
                }
                // Data right after the request was taken: beats 0..3.
                if let Some(r) = req_at.filter(|&r| c > r && c - r - 1 < 4) {
                    let k = c - r - 1;
                    {
                        i.rd_data_valid = true;
                        i.rd_data
                            .0
                            .copy_from_slice(&w[k as usize / 2][(k as usize % 2) * 64..][..64]);
                        i.rd_data_last = k == 3;
                        if k == 3 {
                            last_at = Some(c);
                        }
                    }
                }
                assert!(c < 50, "no WQE");
                Some(i)
            },
            false,
        );
        lockstep::run(&mut RqFetch::new(), &mut RtlRqFetch::new(), &mut env, 100)
            .unwrap_or_else(|d| panic!("{d}"));
        let (r, l, a) = (req_at.unwrap(), last_at.unwrap(), avail_at.unwrap());
        println!(
            "rq_fetch latency, QP {q}: doorbell {DB} -> rd_req {r}; last beat {l} -> rqe_avail {a}"
        );
        assert_eq!(r, DB + 3, "doorbell to rd_req_valid");
        assert_eq!(a, l + 1, "last beat to rqe_avail");
        assert_eq!(got.unwrap().0, w[0], "head WQE bytes");
    }
}

/// The RTL's input-contract assertions fire when the contract is broken
/// (and not when it is kept): a pop of a QP without a WQE, a beat with no
/// read asked, a read whose last beat comes early, an unaligned ring base.
#[test]
fn rq_fetch_assertions_fire() {
    // Each sequence runs after QP 1's defining RESET doorbell and an idle
    // cycle; the cycles reported are counted from the sequence's start.
    fn run(steps: &[RqFetchIn]) -> Vec<(String, u64)> {
        let mut rtl = RtlRqFetch::new();
        rtl.reset();
        let define = RqFetchIn {
            db_valid: true,
            db_qp: 1,
            db_state: 0,
            rd_req_ready: true,
            ..Default::default()
        };
        rtl.tick(&define);
        rtl.tick(&RqFetchIn {
            rd_req_ready: true,
            ..Default::default()
        });
        for s in steps {
            rtl.tick(s);
        }
        rtl.assertion_failures()
            .iter()
            .map(|a| (a.name.clone(), a.cycle - 2))
            .collect()
    }
    let idle = RqFetchIn {
        rd_req_ready: true,
        ..Default::default()
    };
    let db = RqFetchIn {
        db_valid: true,
        db_qp: 1,
        db_pi: 1,
        db_state: 1,
        db_base: 0x1000,
        db_log: 3,
        ..idle
    };
    let beat = |last| RqFetchIn {
        rd_data_valid: true,
        rd_data_last: last,
        ..idle
    };
    let pop = RqFetchIn {
        rqe_pop_valid: true,
        rqe_pop_qp: 1,
        ..idle
    };
    // Kept: a one-WQE read served with two beats, then popped.
    let mut ok = vec![
        db,
        idle,
        idle,
        idle,
        idle,
        beat(false),
        beat(true),
        idle,
        pop,
    ];
    assert_eq!(run(&ok), vec![], "legal sequence");
    ok.truncate(5);
    let mut early = ok.clone();
    early.push(beat(true));
    assert_eq!(run(&early), vec![("a_beat_count".to_string(), 5)]);
    assert_eq!(run(&[idle, pop]), vec![("a_pop_empty".to_string(), 1)]);
    assert_eq!(
        run(&[idle, idle, beat(true)]),
        vec![("a_beat_unasked".to_string(), 2)]
    );
    let unaligned = RqFetchIn {
        db_base: 0x1040,
        ..db
    };
    assert_eq!(
        run(&[idle, unaligned]),
        vec![("a_base_align".to_string(), 1)]
    );
}
