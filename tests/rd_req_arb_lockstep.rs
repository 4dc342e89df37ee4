//! Block-level constrained-random lockstep of `rd_req_arb` (model against
//! RTL), with an environment that checks the arbiter's function on its own:
//! every request offered on `a` and `b` comes out exactly once, in order per
//! input, tagged with its input's client number; producers hold valid and
//! data until the transfer (AXI rule) and may pause; the sink back-pressures
//! at random. Two directed phases check full throughput (one input alone:
//! one request per cycle) and alternation (both busy: a, b, a, b, ...).
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or
//! `RNIC_RANDOM_CASES`. A failing case prints its own seed;
//! `RNIC_RANDOM_SEED=<that seed> RNIC_RANDOM_CASES=1` replays it alone.
//! With at least the default case count the test asserts that
//! [`MIN_CYCLES`] lockstep cycles ran.

mod common;

use std::collections::VecDeque;

use rnic_model::rd_req_arb::{RdReqArb, RdReqArbIn, RdReqArbOut};
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRdReqArb;

const DEFAULT_CASES: u64 = 40;
const DEFAULT_SEED: u64 = 0x7264_5F72_6571_5F61; // "rd_req_a"
const MIN_CYCLES: u64 = 100_000;

/// One producer: its requests, how often it offers one, and whether it is
/// holding an offered request (valid must stay up until the transfer).
struct Source {
    items: VecDeque<(u64, u32)>,
    valid_percent: u8,
    holding: bool,
}

struct ArbEnv {
    rng: SplitMix64,
    src: [Source; 2],
    /// What each input sent (in order), to compare with what came out.
    sent: [VecDeque<(u64, u32)>; 2],
    ready_percent: u8,
    /// Outputs seen so far per client.
    got: [usize; 2],
    /// Cycle-by-cycle output clients (for the directed phases).
    trace: Vec<u8>,
}

impl ArbEnv {
    fn new(seed: u64, n: [usize; 2], valid_percent: [u8; 2], ready_percent: u8) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mut mk = |k: usize| {
            let items: VecDeque<(u64, u32)> = (0..n[k])
                .map(|_| (rng.next_u64(), (rng.next_u64() % (1 << 17)) as u32))
                .collect();
            items
        };
        let (ia, ib) = (mk(0), mk(1));
        ArbEnv {
            rng,
            sent: [ia.clone(), ib.clone()],
            src: [
                Source {
                    items: ia,
                    valid_percent: valid_percent[0],
                    holding: false,
                },
                Source {
                    items: ib,
                    valid_percent: valid_percent[1],
                    holding: false,
                },
            ],
            ready_percent,
            got: [0, 0],
            trace: Vec::new(),
        }
    }
}

impl Env for ArbEnv {
    type In = RdReqArbIn;
    type Out = RdReqArbOut;

    fn step(&mut self, cycle: u64, out: &RdReqArbOut) -> RdReqArbIn {
        // The sink's transfer at this cycle's edge (o_ready chosen below,
        // so account for it after choosing).
        let o_ready = self.rng.percent(self.ready_percent);
        if out.o_valid && o_ready {
            let c = out.o_client as usize;
            assert!(c < 2, "cycle {cycle}: o_client {c}");
            let want = self.sent[c].get(self.got[c]).copied();
            assert_eq!(
                Some((out.o_addr, out.o_len)),
                want,
                "cycle {cycle}: client {c} output #{} is not the next request of input {c}",
                self.got[c]
            );
            self.got[c] += 1;
            self.trace.push(c as u8);
        } else {
            self.trace.push(9);
        }
        let mut i = RdReqArbIn {
            o_ready,
            ..RdReqArbIn::default()
        };
        let readies = [out.a_ready, out.b_ready];
        for (k, s) in self.src.iter_mut().enumerate() {
            let offer = !s.items.is_empty() && (s.holding || self.rng.percent(s.valid_percent));
            let (addr, len) = if offer {
                s.items[0]
            } else {
                // Junk on the data lines while valid is low.
                (self.rng.next_u64(), (self.rng.next_u64() as u32) & 0x1_FFFF)
            };
            if k == 0 {
                (i.a_valid, i.a_addr, i.a_len) = (offer, addr, len);
            } else {
                (i.b_valid, i.b_addr, i.b_len) = (offer, addr, len);
            }
            s.holding = offer && !readies[k];
            if offer && readies[k] {
                s.items.pop_front();
            }
        }
        i
    }

    fn finished(&self) -> bool {
        self.got[0] == self.sent[0].len() && self.got[1] == self.sent[1].len()
    }
}

fn run(env: &mut ArbEnv, max: u64) -> u64 {
    let mut model = RdReqArb::new();
    let mut rtl = RtlRdReqArb::new();
    match lockstep::run(&mut model, &mut rtl, env, max) {
        Ok(f) => {
            assert!(
                f.completed,
                "not every request came out after {} cycles (got {:?} of {}, {})",
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
fn random_rd_req_arb_lockstep() {
    let mut total = 0;
    let run = common::run_cases(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut rng = SplitMix64::new(seed);
        let pick = |r: &mut SplitMix64| [100, 90, 50, 10, 0][r.below(5) as usize];
        let n = [rng.below(3000) as usize, rng.below(3000) as usize];
        let vp = [pick(&mut rng).max(5), pick(&mut rng).max(5)];
        let rp = pick(&mut rng).max(5);
        let mut env = ArbEnv::new(rng.next_u64(), n, vp, rp);
        let cycles = run(&mut env, 1_000_000);
        assert!(cycles > 0 || n == [0, 0], "no cycle ran");
        total += cycles;
    });
    println!(
        "rd_req_arb: {} cases, {total} lockstep cycles (seed {:#x})",
        run.cases, run.seed
    );
    assert!(
        !run.full || total >= MIN_CYCLES,
        "only {total} lockstep cycles ran"
    );
}

#[test]
fn one_input_streams_at_full_rate_and_two_alternate() {
    // a alone, always valid, sink always ready: after the first request's
    // one-cycle latency, one request per cycle.
    let mut env = ArbEnv::new(1, [500, 0], [100, 100], 100);
    let cycles = run(&mut env, 10_000);
    assert_eq!(cycles, 501, "500 requests take 500 cycles + 1 of latency");
    assert!(env.trace[1..501].iter().all(|&c| c == 0));
    // Both always valid: the output alternates a, b, a, b at full rate.
    let mut env = ArbEnv::new(2, [300, 300], [100, 100], 100);
    let cycles = run(&mut env, 10_000);
    assert_eq!(cycles, 601);
    for (k, &c) in env.trace[1..601].iter().enumerate() {
        assert_eq!(c as usize, k % 2, "output {k} came from the wrong input");
    }
}
