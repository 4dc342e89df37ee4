//! Constrained-random block-level lockstep of `rd_resp` (the READ job
//! store, docs/responder.md, "rd_resp and READ responses in tx_engine").
//!
//! The environment plays the responder (READ tokens on `job_*`, held until
//! taken, for a random subset of QPs, some cases hammering one QP so that
//! it reaches its limit; each token carries a max_dest_rd_atomic `max_rd`
//! 0..7: per QP fixed for the case, or drawn per job as if software
//! rewrote RESP, low in some cases so that the limit binds often) and
//! tx_engine (head reads of random QPs, with or without
//! a job; pops of a QP only after a head read showed its front job, as
//! tx_engine pops a job only after sending it). It predicts from the
//! contract alone, with its own per-QP queues of the jobs it offered:
//! - a job taken while its QP holds max(1, the job's `max_rd`) jobs, or
//!   DEPTH (at the start of the cycle), is refused: `ev_job_full` the next
//!   cycle, the job is gone; any other job taken is stored: `ev_job` the
//!   next cycle;
//! - `job_ready` is high from the cycle after reset on;
//! - `job_avail` bit q = QP q's queue is not empty, every cycle;
//! - a head read at n: at n+1 `job_present` = the QP held a job at the start
//!   of n, and its fields (PSN, address, length, MSN, MTU code) are the
//!   front job's, decoded by the environment from the token it built; held
//!   while no read comes;
//! - every stored job is read at the head and popped exactly once, in the
//!   order offered per QP; at the end every queue is empty.
//!
//! Reproducible as every random test (`tests/common/mod.rs`). With
//! `RNIC_MODEL_ALONE=1` the model runs alone under the environment (no
//! RTL), which is how a mutation of the model is shown to be caught.

mod common;

use std::collections::VecDeque;

use rnic_model::rd_resp::{tok_beat, RdResp, RdRespIn, RdRespOut, DEPTH, QPS};
use rnic_model::resp_tok::{ReadJob, Tok};
use rnic_model::Dut;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRdResp;

const DEFAULT_CASES: u64 = 40;
const DEFAULT_SEED: u64 = 0x7264_5F72_6573_7021; // "rd_resp!"
/// Lockstep cycles the default run must reach in total.
const MIN_TOTAL_CYCLES: u64 = 200_000;

struct Case {
    /// QPs that get jobs.
    qps: Vec<u8>,
    /// Jobs offered in the case.
    jobs: u64,
    /// Percent of cycles a job is offered (when none waits), of jobs for
    /// the first QP of `qps` (the hot one), of cycles with a head read and
    /// with a pop (when one is allowed).
    offer_pct: u8,
    hot_pct: u8,
    rd_pct: u8,
    pop_pct: u8,
    /// Per QP its max_rd, and the percent of jobs that draw their own
    /// (0..7) instead.
    max_rd: Vec<u8>,
    own_max_pct: u8,
}

fn gen_case(r: &mut SplitMix64) -> Case {
    let n = 1 + r.below(QPS as u64) as usize;
    let mut all: Vec<u8> = (0..QPS as u8).collect();
    for k in 0..QPS {
        let j = k + r.below((QPS - k) as u64) as usize;
        all.swap(k, j);
    }
    Case {
        qps: all[..n].to_vec(),
        jobs: 500 + r.below(2500),
        offer_pct: [10, 50, 100][r.below(3) as usize],
        hot_pct: [0, 50, 90][r.below(3) as usize],
        rd_pct: [20, 60, 100][r.below(3) as usize],
        pop_pct: [5, 30, 100][r.below(3) as usize],
        // A third of the cases with low limits (0, 1, 2), a third with 7
        // (what a 3-bit max_dest_rd_atomic allows at most), a third any.
        max_rd: {
            let mode = r.below(3);
            (0..QPS)
                .map(|_| match mode {
                    0 => r.below(3) as u8,
                    1 => 7,
                    _ => r.below(8) as u8,
                })
                .collect()
        },
        own_max_pct: [0, 0, 20][r.below(3) as usize],
    }
}

struct RdEnv {
    r: SplitMix64,
    c: Case,
    offered: u64,
    /// The job offered (held until taken).
    offer: Option<ReadJob>,
    /// Per QP the stored jobs in order, and whether a head read showed the
    /// front one (a pop is allowed then).
    book: Vec<VecDeque<ReadJob>>,
    seen: Vec<bool>,
    /// The head read of the last cycle: (QP, the front job expected, the
    /// job was popped in the read's cycle).
    read: Option<(u8, Option<ReadJob>, bool)>,
    /// The outputs of the last read (held).
    last_read: (bool, ReadJob),
    /// Pulses due this cycle: (ev_job, ev_job_full).
    ev_due: (bool, bool),
    /// Stored, refused, popped jobs (refused with max_rd 7, and with max_rd
    /// 0 read as 1); head reads of an empty QP; the most jobs a QP held.
    stored: u64,
    refused: u64,
    refused_7: u64,
    refused_0: u64,
    popped: u64,
    empty_reads: u64,
    max_fill: usize,
}

impl RdEnv {
    fn new(seed: u64) -> Self {
        let mut r = SplitMix64::new(seed);
        let c = gen_case(&mut r);
        RdEnv {
            r,
            c,
            offered: 0,
            offer: None,
            book: vec![VecDeque::new(); QPS],
            seen: vec![false; QPS],
            read: None,
            last_read: (false, ReadJob::default()),
            ev_due: (false, false),
            stored: 0,
            refused: 0,
            refused_7: 0,
            refused_0: 0,
            popped: 0,
            empty_reads: 0,
            max_fill: 0,
        }
    }

    fn new_job(&mut self) -> ReadJob {
        let qps = &self.c.qps;
        let qp = if self.r.percent(self.c.hot_pct) {
            qps[0]
        } else {
            qps[self.r.below(qps.len() as u64) as usize]
        };
        let len = match self.r.below(4) {
            0 => 0,
            1 => 1 + self.r.below(4096) as u32,
            2 => 1 + self.r.below(1 << 20) as u32,
            _ => self.r.next_u64() as u32,
        };
        ReadJob {
            qp,
            psn: self.r.below(1 << 24) as u32,
            // A zero-length READ's job has address 0.
            addr: if len == 0 { 0 } else { self.r.next_u64() },
            len,
            msn: self.r.below(1 << 24) as u32,
            mtu: self.r.below(8) as u8,
            max_rd: if self.r.percent(self.c.own_max_pct) {
                self.r.below(8) as u8
            } else {
                self.c.max_rd[qp as usize]
            },
        }
    }
}

fn fields(o: &RdRespOut, qp: u8) -> ReadJob {
    ReadJob {
        qp,
        psn: o.job_psn,
        addr: o.job_addr,
        len: o.job_len,
        msn: o.job_msn,
        mtu: o.job_mtu,
        // Not an output: rd_resp does not keep it (the books store 0).
        max_rd: 0,
    }
}

impl Env for RdEnv {
    type In = RdRespIn;
    type Out = RdRespOut;

    fn step(&mut self, cycle: u64, o: &RdRespOut) -> RdRespIn {
        // ---- this cycle's outputs against the books ----
        assert_eq!(o.job_ready, cycle > 0, "cycle {cycle}: job_ready");
        let avail = (0..QPS).fold(0u16, |a, q| a | ((!self.book[q].is_empty()) as u16) << q);
        assert_eq!(o.job_avail, avail, "cycle {cycle}: job_avail");
        assert_eq!(
            (o.ev_job, o.ev_job_full),
            self.ev_due,
            "cycle {cycle}: ev_job / ev_job_full"
        );
        match self.read.take() {
            Some((q, exp, stale)) => {
                assert_eq!(
                    o.job_present,
                    exp.is_some(),
                    "cycle {cycle}: QP {q} present"
                );
                if let Some(j) = exp {
                    assert_eq!(fields(o, q), j, "cycle {cycle}: QP {q} head job");
                    self.seen[q as usize] = !stale;
                } else {
                    self.empty_reads += 1;
                }
                self.last_read = (o.job_present, fields(o, q));
            }
            None => {
                let (p, j) = self.last_read;
                assert_eq!(
                    (o.job_present, fields(o, j.qp)),
                    (p, j),
                    "cycle {cycle}: head read outputs held"
                );
            }
        }

        let mut i = RdRespIn::default();
        // ---- tx_engine: a head read (state at the start of the cycle) ----
        if self.r.percent(self.c.rd_pct) {
            let with: Vec<u8> = (0..QPS as u8)
                .filter(|&q| !self.book[q as usize].is_empty())
                .collect();
            let q = if !with.is_empty() && self.r.percent(80) {
                with[self.r.below(with.len() as u64) as usize]
            } else {
                self.r.below(QPS as u64) as u8
            };
            i.job_rd_valid = true;
            i.job_rd_qp = q;
            self.read = Some((q, self.book[q as usize].front().copied(), false));
        } else {
            i.job_rd_qp = self.r.below(QPS as u64) as u8;
        }
        // ---- the responder: a job offered, held until taken ----
        if self.offer.is_none() && self.offered < self.c.jobs && self.r.percent(self.c.offer_pct) {
            self.offer = Some(self.new_job());
            self.offered += 1;
        }
        self.ev_due = (false, false);
        if let Some(j) = self.offer {
            i.job_valid = true;
            i.job_tok = tok_beat(&Tok::Read(j).pack());
            if o.job_ready {
                self.offer = None;
                let b = &mut self.book[j.qp as usize];
                // The QP at its limit (max_rd, 0 read as 1) or a full ring
                // at the start of the cycle: refused.
                if b.len() >= (j.max_rd as usize).max(1) || b.len() == DEPTH {
                    self.ev_due.1 = true;
                    self.refused += 1;
                    self.refused_7 += (j.max_rd == 7) as u64;
                    self.refused_0 += (j.max_rd == 0) as u64;
                } else {
                    b.push_back(ReadJob { max_rd: 0, ..j });
                    self.ev_due.0 = true;
                    self.stored += 1;
                    self.max_fill = self.max_fill.max(b.len());
                }
            }
        }
        // ---- tx_engine: a pop of a front job it has read ----
        let drain = self.offered == self.c.jobs;
        let can: Vec<u8> = (0..QPS as u8).filter(|&q| self.seen[q as usize]).collect();
        if !can.is_empty() && (drain || self.r.percent(self.c.pop_pct)) {
            let q = can[self.r.below(can.len() as u64) as usize];
            i.job_pop_valid = true;
            i.job_pop_qp = q;
            // The front job (a job stored this cycle goes behind it).
            self.book[q as usize].pop_front();
            self.seen[q as usize] = false;
            // A head read of this cycle shows the popped job: it does not
            // make the next one poppable.
            if let Some((rq, _, stale)) = &mut self.read {
                if *rq == q {
                    *stale = true;
                }
            }
            self.popped += 1;
        } else {
            i.job_pop_qp = self.r.below(QPS as u64) as u8;
        }
        i
    }

    fn finished(&self) -> bool {
        self.offered == self.c.jobs
            && self.offer.is_none()
            && self.book.iter().all(|b| b.is_empty())
            && self.ev_due == (false, false)
    }
}

/// The model and the RTL in lockstep, or the model alone with
/// `RNIC_MODEL_ALONE=1`.
fn run_case(env: &mut RdEnv) -> lockstep::Finished {
    if common::env_u64("RNIC_MODEL_ALONE").is_some_and(|v| v != 0) {
        lockstep::run_single(&mut RdResp::new(), env, 5_000_000)
    } else {
        lockstep::run(&mut RdResp::new(), &mut RtlRdResp::new(), env, 5_000_000)
            .unwrap_or_else(|d| panic!("{d}"))
    }
}

#[test]
fn rd_resp_random_lockstep() {
    let mut total = 0u64;
    let (mut stored, mut refused, mut popped, mut empty_reads) = (0u64, 0u64, 0u64, 0u64);
    let (mut refused_7, mut refused_0, mut seven_cases) = (0u64, 0u64, 0u64);
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = RdEnv::new(seed);
        let fin = run_case(&mut env);
        assert!(fin.completed, "did not finish in {} cycles", fin.cycles);
        assert_eq!(env.stored + env.refused, env.c.jobs, "every job taken");
        assert_eq!(env.popped, env.stored, "every stored job popped once");
        // max_rd is 3 bits: no QP ever holds DEPTH jobs.
        assert!(env.max_fill <= 7 && 7 < DEPTH);
        total += fin.cycles;
        stored += env.stored;
        refused += env.refused;
        refused_7 += env.refused_7;
        refused_0 += env.refused_0;
        popped += env.popped;
        empty_reads += env.empty_reads;
        seven_cases += (env.max_fill == 7) as u64;
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        total >= MIN_TOTAL_CYCLES
            && stored >= 20_000
            && refused >= 1_000
            && refused_7 >= 100
            && refused_0 >= 100
            && empty_reads >= 1_000
            && seven_cases >= 5
    });
    eprintln!(
        "rd_resp lockstep: {} cases, {total} cycles, {stored} jobs stored and popped, \
         {refused} refused at the QP's limit ({refused_7} with max_rd 7, {refused_0} with \
         max_rd 0 read as 1), {empty_reads} head reads of an empty QP, {seven_cases} cases \
         where a QP held 7 jobs",
        run.cases
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} lockstep cycles");
        assert!(stored >= 20_000, "only {stored} jobs");
        assert!(refused >= 1_000, "only {refused} refusals");
        assert!(refused_7 >= 100, "only {refused_7} refusals at max_rd 7");
        assert!(refused_0 >= 100, "only {refused_0} refusals at max_rd 0");
        assert!(empty_reads >= 1_000, "only {empty_reads} empty head reads");
        assert!(seven_cases >= 5, "only {seven_cases} cases reached 7 jobs");
        assert_eq!(popped, stored);
    }
}

/// Each assertion at rd_resp's ports fires on a sequence that breaks its
/// rule (name and cycle checked), and the same sequence kept legal fires
/// nothing.
#[test]
fn rd_resp_assertions_fire() {
    fn run(steps: &[RdRespIn]) -> Vec<(String, u64)> {
        let mut rtl = RtlRdResp::new();
        rtl.reset();
        for s in steps {
            rtl.tick(s);
        }
        rtl.assertion_failures()
            .iter()
            .map(|a| (a.name.clone(), a.cycle))
            .collect()
    }
    let job = ReadJob {
        qp: 2,
        psn: 1,
        addr: 0x1000,
        len: 100,
        msn: 1,
        mtu: 3,
        max_rd: 7,
    };
    let idle = RdRespIn::default();
    let push = |j: ReadJob| RdRespIn {
        job_valid: true,
        job_tok: tok_beat(&Tok::Read(j).pack()),
        ..idle
    };
    let pop = |qp: u8| RdRespIn {
        job_pop_valid: true,
        job_pop_qp: qp,
        ..idle
    };
    // Legal: a job stored, popped the cycle after.
    assert_eq!(run(&[idle, push(job), pop(2)]), vec![], "legal sequence");
    // A pop of a QP with no job (QP 3), and one the cycle the job arrives.
    assert_eq!(
        run(&[idle, push(job), pop(3)]),
        vec![("a_job_pop_empty".to_string(), 2)]
    );
    assert_eq!(
        run(&[
            idle,
            RdRespIn {
                job_pop_valid: true,
                job_pop_qp: 2,
                ..push(job)
            }
        ]),
        vec![("a_job_pop_empty".to_string(), 1)]
    );
    // A RECV completion token (kind 0) offered as a job.
    let mut cqe = push(job);
    cqe.job_tok[0] &= !1;
    assert_eq!(run(&[idle, cqe]), vec![("a_job_kind".to_string(), 1)]);
    // A QP number >= QPS.
    assert_eq!(
        run(&[
            idle,
            push(ReadJob {
                qp: QPS as u8,
                ..job
            })
        ]),
        vec![("a_job_qp".to_string(), 1)]
    );
}
