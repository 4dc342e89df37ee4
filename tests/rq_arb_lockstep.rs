//! Block-level constrained-random lockstep of `rq_arb` (model against RTL),
//! with an environment that checks the arbiter's function on its own: two
//! producers send TLPs of 1..=8 beats (sop on the first, eop on the last,
//! random data and keep, pauses inside TLPs too), holding valid and data
//! until each transfer; the sink back-pressures at random. The output must
//! be the two TLP sequences merged, every TLP exactly once, unbroken (no
//! beat of the other input between its sop and eop), in order per input.
//! Two directed phases check full throughput (one input alone: one beat per
//! cycle) and alternation per TLP (both busy).
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or
//! `RNIC_RANDOM_CASES`. A failing case prints its own seed;
//! `RNIC_RANDOM_SEED=<that seed> RNIC_RANDOM_CASES=1` replays it alone.
//! With at least the default case count the test asserts that
//! [`MIN_CYCLES`] lockstep cycles ran.

mod common;

use std::collections::VecDeque;

use rnic_model::rq_arb::{RqArb, RqArbIn, RqArbOut};
use rnic_model::Beat;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRqArb;

const DEFAULT_CASES: u64 = 30;
const DEFAULT_SEED: u64 = 0x7271_5F61_7262_5F5F; // "rq_arb__"
const MIN_CYCLES: u64 = 60_000;

/// A random beat, 8 bytes per draw (junk on the data lines).
fn random_beat(rng: &mut SplitMix64) -> Beat {
    let mut b = Beat::default();
    for c in b.chunks_exact_mut(8) {
        c.copy_from_slice(&rng.next_u64().to_le_bytes());
    }
    b
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct RqBeat {
    data: Beat,
    keep: u64,
    sop: bool,
    eop: bool,
}

type Tlp = Vec<RqBeat>;

/// One producer: its TLPs' beats in order, how often it offers a beat, and
/// whether it holds an offered beat (valid stays up until the transfer).
struct Source {
    beats: VecDeque<RqBeat>,
    valid_percent: u8,
    holding: bool,
}

struct ArbEnv {
    rng: SplitMix64,
    src: [Source; 2],
    /// Each input's TLPs, to compare with what came out.
    sent: [Vec<Tlp>; 2],
    ready_percent: u8,
    /// TLPs received so far per input.
    got: [usize; 2],
    /// The TLP being received: (input, beats so far).
    cur: Option<(usize, usize)>,
    /// Per cycle: the input of the beat that left, 9 for none.
    trace: Vec<u8>,
}

impl ArbEnv {
    fn new(
        seed: u64,
        n: [usize; 2],
        max_beats: u64,
        valid_percent: [u8; 2],
        ready_percent: u8,
    ) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mut sent: [Vec<Tlp>; 2] = [Vec::new(), Vec::new()];
        for (k, tlps) in sent.iter_mut().enumerate() {
            for t in 0..n[k] {
                let len = 1 + (rng.next_u64() % max_beats) as usize;
                let tlp: Tlp = (0..len)
                    .map(|j| {
                        let mut data = random_beat(&mut rng);
                        // Tag (input, TLP, beat): every beat is unique.
                        data[0] = k as u8;
                        data[1..5].copy_from_slice(&(t as u32).to_le_bytes());
                        data[5] = j as u8;
                        RqBeat {
                            data,
                            keep: rng.next_u64(),
                            sop: j == 0,
                            eop: j + 1 == len,
                        }
                    })
                    .collect();
                tlps.push(tlp);
            }
        }
        let mk = |k: usize, sent: &[Vec<Tlp>; 2]| Source {
            beats: sent[k].iter().flatten().copied().collect(),
            valid_percent: valid_percent[k],
            holding: false,
        };
        ArbEnv {
            rng,
            src: [mk(0, &sent), mk(1, &sent)],
            sent,
            ready_percent,
            got: [0, 0],
            cur: None,
            trace: Vec::new(),
        }
    }

    /// Checks one output beat against the TLP it must belong to.
    fn receive(&mut self, cycle: u64, b: RqBeat) {
        let (k, j) = match self.cur {
            Some(c) => c,
            None => {
                // A new TLP: it must be the next TLP of one of the inputs.
                assert!(b.sop, "cycle {cycle}: a TLP starts without sop");
                let k = b.data[0] as usize;
                assert!(k < 2, "cycle {cycle}: beat of no input");
                (k, 0)
            }
        };
        let tlp = self.sent[k]
            .get(self.got[k])
            .unwrap_or_else(|| panic!("cycle {cycle}: input {k} sent no more TLPs"));
        assert_eq!(
            b, tlp[j],
            "cycle {cycle}: beat {j} of input {k}'s TLP #{} differs (interleaved, lost, \
             repeated or reordered)",
            self.got[k]
        );
        if b.eop {
            self.got[k] += 1;
            self.cur = None;
        } else {
            self.cur = Some((k, j + 1));
        }
        self.trace.push(k as u8);
    }
}

impl Env for ArbEnv {
    type In = RqArbIn;
    type Out = RqArbOut;

    fn step(&mut self, cycle: u64, out: &RqArbOut) -> RqArbIn {
        let o_ready = self.rng.percent(self.ready_percent);
        if out.o_valid && o_ready {
            self.receive(
                cycle,
                RqBeat {
                    data: out.o_data,
                    keep: out.o_keep,
                    sop: out.o_sop,
                    eop: out.o_eop,
                },
            );
        } else {
            self.trace.push(9);
        }
        let mut i = RqArbIn {
            o_ready,
            ..RqArbIn::default()
        };
        let readies = [out.a_ready, out.b_ready];
        for (k, s) in self.src.iter_mut().enumerate() {
            let offer = !s.beats.is_empty() && (s.holding || self.rng.percent(s.valid_percent));
            let b = if offer {
                s.beats[0]
            } else {
                // Junk on the data lines while valid is low.
                RqBeat {
                    data: random_beat(&mut self.rng),
                    keep: self.rng.next_u64(),
                    sop: self.rng.percent(50),
                    eop: self.rng.percent(50),
                }
            };
            if k == 0 {
                (i.a_valid, i.a_data, i.a_keep, i.a_sop, i.a_eop) =
                    (offer, b.data, b.keep, b.sop, b.eop);
            } else {
                (i.b_valid, i.b_data, i.b_keep, i.b_sop, i.b_eop) =
                    (offer, b.data, b.keep, b.sop, b.eop);
            }
            s.holding = offer && !readies[k];
            if offer && readies[k] {
                s.beats.pop_front();
            }
        }
        i
    }

    fn finished(&self) -> bool {
        self.got[0] == self.sent[0].len() && self.got[1] == self.sent[1].len()
    }
}

fn run(env: &mut ArbEnv, max: u64) -> u64 {
    let mut model = RqArb::new();
    let mut rtl = RtlRqArb::new();
    match lockstep::run(&mut model, &mut rtl, env, max) {
        Ok(f) => {
            assert!(
                f.completed,
                "not every TLP came out after {} cycles (got {:?} of {}, {})",
                f.cycles,
                env.got,
                env.sent[0].len(),
                env.sent[1].len()
            );
            f.cycles
        }
        Err(d) => panic!("{d}"),
    }
}

#[test]
fn random_rq_arb_lockstep() {
    let mut total = 0;
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut rng = SplitMix64::new(seed);
        let pick = |r: &mut SplitMix64| [100, 90, 50, 10][r.below(4) as usize];
        let n = [rng.below(400) as usize, rng.below(400) as usize];
        let vp = [pick(&mut rng), pick(&mut rng)];
        let rp = pick(&mut rng);
        let max_beats = [1, 2, 8][rng.below(3) as usize];
        let mut env = ArbEnv::new(rng.next_u64(), n, max_beats, vp, rp);
        total += run(&mut env, 1_000_000);
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        total >= MIN_CYCLES
    });
    println!(
        "rq_arb: {} cases, {total} lockstep cycles (seed {:#x})",
        run.cases, run.seed
    );
    assert!(
        !run.full || total >= MIN_CYCLES,
        "only {total} lockstep cycles ran"
    );
}

#[test]
fn one_input_streams_at_full_rate_and_two_alternate_per_tlp() {
    // a alone, always valid, sink always ready: one beat per cycle after
    // the one-cycle latency.
    let mut env = ArbEnv::new(3, [100, 0], 8, [100, 100], 100);
    let beats: usize = env.sent[0].iter().map(Vec::len).sum();
    let cycles = run(&mut env, 10_000);
    assert_eq!(cycles as usize, beats + 1);
    // Both always valid, single-beat TLPs: a, b, a, b at full rate.
    let mut env = ArbEnv::new(4, [200, 200], 1, [100, 100], 100);
    let cycles = run(&mut env, 10_000);
    assert_eq!(cycles, 401);
    for (k, &c) in env.trace[1..401].iter().enumerate() {
        assert_eq!(c as usize, k % 2, "beat {k} came from the wrong input");
    }
    // Both always valid, multi-beat TLPs: whole TLPs alternate, no idle beat.
    let mut env = ArbEnv::new(5, [100, 100], 8, [100, 100], 100);
    let beats: usize = env.sent.iter().flatten().map(Vec::len).sum();
    let cycles = run(&mut env, 10_000);
    assert_eq!(
        cycles as usize,
        beats + 1,
        "no idle cycle while both are busy"
    );
    let mut expect = Vec::new();
    for t in 0..100 {
        for k in 0..2 {
            expect.extend(std::iter::repeat_n(k as u8, env.sent[k][t].len()));
        }
    }
    assert_eq!(&env.trace[1..], &expect[..], "TLPs alternate a, b, a, b");
}
