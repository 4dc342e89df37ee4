//! Block-level constrained-random lockstep of `pfc` (model against RTL, at
//! the default BITS_PER_CYCLE = 400 and at 7 through the `pfc_b7` variant),
//! with an environment that checks `pause` every cycle against its own
//! bookkeeping: per priority the cycle n and quanta Q of the last PFC frame
//! that enabled it; at cycle c > n the bit times left are
//! `Q * 512 - BITS_PER_CYCLE * (c - n - 1)` and the priority must be paused
//! exactly while that is positive (a closed form, not the block's
//! subtract-and-clamp). Frames come at random rates, with random enables
//! and quanta 0, 1, 65535, small and middling values, so refreshes land
//! before, at and after expiry; coverage counts make sure those happen.
//! Plus a directed test: one frame with quanta Q pauses exactly
//! ceil(Q * 512 / BITS_PER_CYCLE) cycles, on both sides.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. A
//! failing case prints its own seed; `RNIC_RANDOM_SEED=<that seed>
//! RNIC_RANDOM_CASES=1` replays it alone. With at least the default case
//! count the test asserts that [`MIN_CYCLES`] lockstep cycles ran and the
//! coverage floors.

mod common;

use rnic_model::pfc::{Pfc, PfcIn, PfcOut};
use rnic_model::Dut;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::{RtlPfc, RtlPfcB7};

const DEFAULT_CASES: u64 = 120;
const DEFAULT_SEED: u64 = 0x7066_635F_5F5F_5F5F; // "pfc_____"
const MIN_CYCLES: u64 = 10_000_000;

#[derive(Debug, Default, Clone, Copy)]
struct Cover {
    frames: u64,
    /// An enabled priority refreshed while still paused.
    refresh_while_paused: u64,
    /// Quanta 0 ending a pause at once.
    zero_resume: u64,
    /// Quanta 65535 loaded / a 65535 pause that ran out on its own.
    max_loaded: u64,
    max_expired: u64,
    /// Pauses that ended by counting down.
    expiries: u64,
}

struct PfcEnv {
    rng: SplitMix64,
    bpc: u64,
    /// Per priority: (cycle of the frame, quanta) of the last enabled frame.
    last: [Option<(u64, u16)>; 8],
    /// Frame probability per cycle, in 1/1,000,000.
    frame_ppm: u64,
    /// Largest "middling" quanta drawn.
    q_max: u64,
    /// Percent of quanta that are 65535.
    max_pct: u8,
    len: u64,
    cycles: u64,
    cover: Cover,
    prev_pause: u8,
}

impl PfcEnv {
    fn new(seed: u64, bpc: u64, frame_ppm: u64, q_max: u64, max_pct: u8, len: u64) -> Self {
        PfcEnv {
            rng: SplitMix64::new(seed),
            bpc,
            last: [None; 8],
            frame_ppm,
            q_max,
            max_pct,
            len,
            cycles: 0,
            cover: Cover::default(),
            prev_pause: 0,
        }
    }

    /// Bit times left for priority p at cycle c (may be <= 0).
    fn left(&self, p: usize, c: u64) -> i64 {
        match self.last[p] {
            None => 0,
            Some((n, q)) => q as i64 * 512 - (self.bpc * (c - n - 1)) as i64,
        }
    }

    fn quanta(&mut self) -> u16 {
        if self.rng.percent(self.max_pct) {
            return 65535;
        }
        match self.rng.below(10) {
            0 => 0,
            1 => 1,
            2 => 2,
            3..=5 => self.rng.below(32) as u16,
            _ => self.rng.below(self.q_max + 1) as u16,
        }
    }
}

impl Env for PfcEnv {
    type In = PfcIn;
    type Out = PfcOut;

    fn step(&mut self, cycle: u64, out: &PfcOut) -> PfcIn {
        self.cycles = cycle;
        let mut want = 0u8;
        for p in 0..8 {
            if cycle > 0 && self.left(p, cycle) > 0 {
                want |= 1 << p;
            }
        }
        assert_eq!(
            out.pause, want,
            "cycle {cycle}: pause {:08b}, expected {want:08b} (last frames {:?})",
            out.pause, self.last
        );
        // Pauses that ended by counting down (not by a frame the cycle before).
        let ended = self.prev_pause & !out.pause;
        for p in 0..8 {
            if ended >> p & 1 != 0 {
                if let Some((n, q)) = self.last[p] {
                    if n + 1 < cycle {
                        self.cover.expiries += 1;
                        if q == 65535 {
                            self.cover.max_expired += 1;
                        }
                    }
                }
            }
        }
        self.prev_pause = out.pause;

        let mut i = PfcIn::default();
        if self.rng.below(1_000_000) < self.frame_ppm {
            self.cover.frames += 1;
            i.pfc_valid = true;
            i.pfc_enable = match self.rng.below(4) {
                0 => 0xFF,
                1 => 1 << self.rng.below(8),
                _ => self.rng.next_u64() as u8,
            };
            for p in 0..8 {
                let q = self.quanta();
                i.pfc_quanta |= (q as u128) << (16 * p);
                if i.pfc_enable >> p & 1 != 0 {
                    // This cycle's pause bit says whether p is paused now.
                    if out.pause >> p & 1 != 0 {
                        if q == 0 {
                            self.cover.zero_resume += 1;
                        } else {
                            self.cover.refresh_while_paused += 1;
                        }
                    }
                    if q == 65535 {
                        self.cover.max_loaded += 1;
                    }
                    self.last[p] = Some((cycle, q));
                }
            }
        } else {
            // Junk on the data lines while pfc_valid is low.
            i.pfc_enable = self.rng.next_u64() as u8;
            i.pfc_quanta = (self.rng.next_u64() as u128) << 64 | self.rng.next_u64() as u128;
        }
        i
    }

    fn finished(&self) -> bool {
        self.cycles >= self.len
    }
}

fn run_env<R: Dut<In = PfcIn, Out = PfcOut>>(
    model: &mut Pfc,
    rtl: &mut R,
    env: &mut PfcEnv,
) -> u64 {
    match lockstep::run(model, rtl, env, env.len + 1) {
        Ok(f) => {
            assert!(f.completed, "ran out of cycles at {}", f.cycles);
            f.cycles
        }
        Err(d) => panic!("{d}"),
    }
}

#[test]
fn random_pfc_lockstep() {
    let mut total = 0;
    let mut cov = Cover::default();
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut rng = SplitMix64::new(seed);
        // Every fourth case at 7 bits per cycle (pfc_b7), small quanta.
        let b7 = rng.below(4) == 0;
        let mut frame_ppm = [1000, 5000, 20_000, 100_000, 500_000][rng.below(5) as usize];
        let (q_max, max_pct, len) = if b7 {
            (rng.below(300) + 1, 0, 20_000 + rng.below(40_000))
        } else if rng.below(3) == 0 {
            // Long cases: rare frames, many 65535s, so some run out.
            frame_ppm = 20;
            (20_000, 50, 300_000)
        } else {
            (
                [8, 100, 2000, 20_000][rng.below(4) as usize],
                [0, 1][rng.below(2) as usize],
                10_000 + rng.below(30_000),
            )
        };
        let bpc = if b7 { 7 } else { 400 };
        let mut env = PfcEnv::new(rng.next_u64(), bpc, frame_ppm, q_max, max_pct, len);
        let mut model = Pfc::with_bits_per_cycle(bpc as u32);
        total += if b7 {
            run_env(&mut model, &mut RtlPfcB7::new(), &mut env)
        } else {
            run_env(&mut model, &mut RtlPfc::new(), &mut env)
        };
        let c = env.cover;
        cov.frames += c.frames;
        cov.refresh_while_paused += c.refresh_while_paused;
        cov.zero_resume += c.zero_resume;
        cov.max_loaded += c.max_loaded;
        cov.max_expired += c.max_expired;
        cov.expiries += c.expiries;
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        total >= MIN_CYCLES
            && cov.refresh_while_paused >= 1000
            && cov.zero_resume >= 100
            && cov.max_expired >= 1
            && cov.expiries >= 1000
    });
    println!(
        "pfc: {} cases, {total} lockstep cycles (seed {:#x}), {cov:?}",
        run.cases, run.seed
    );
    if run.full {
        assert!(total >= MIN_CYCLES, "only {total} lockstep cycles ran");
        assert!(cov.refresh_while_paused >= 1000, "{cov:?}");
        assert!(cov.zero_resume >= 100, "{cov:?}");
        assert!(cov.max_expired >= 1, "{cov:?}");
        assert!(cov.expiries >= 1000, "{cov:?}");
    }
}

/// Env of the directed test: one frame at cycle 0 with quanta `q` for
/// priority `p` only; records the cycles in which pause[p] is high.
struct OneFrame {
    p: usize,
    q: u16,
    paused: Vec<u64>,
    end: u64,
    cycles: u64,
}

impl Env for OneFrame {
    type In = PfcIn;
    type Out = PfcOut;

    fn step(&mut self, cycle: u64, out: &PfcOut) -> PfcIn {
        self.cycles = cycle;
        assert_eq!(
            out.pause & !(1 << self.p),
            0,
            "cycle {cycle}: another priority paused"
        );
        if out.pause >> self.p & 1 != 0 {
            self.paused.push(cycle);
        }
        PfcIn {
            pfc_valid: cycle == 0,
            pfc_enable: 1 << self.p,
            pfc_quanta: (self.q as u128) << (16 * self.p),
        }
    }

    fn finished(&self) -> bool {
        self.cycles >= self.end
    }
}

/// Cycles paused after one frame of quanta `q` (the frame at cycle 0);
/// checks that the pause is one run starting at cycle 1.
fn pause_run<R: Dut<In = PfcIn, Out = PfcOut>>(
    rtl: &mut R,
    bpc: u32,
    p: usize,
    q: u16,
    end: u64,
) -> u64 {
    let mut env = OneFrame {
        p,
        q,
        paused: Vec::new(),
        end,
        cycles: 0,
    };
    let mut model = Pfc::with_bits_per_cycle(bpc);
    lockstep::run(&mut model, rtl, &mut env, end + 1).unwrap_or_else(|d| panic!("{d}"));
    let n = env.paused.len() as u64;
    if n > 0 {
        assert_eq!(env.paused[0], 1, "pause starts the cycle after the frame");
        assert_eq!(env.paused[n as usize - 1], n, "one unbroken run");
    }
    n
}

#[test]
fn quanta_q_pauses_exactly_ceil_q_times_512_over_bits_per_cycle() {
    // BITS_PER_CYCLE = 400 (100 Gb/s at 250 MHz):
    // Q = 1: 512 bit times; 400 per cycle, so 512 > 400 -> 112 > 0 -> 0:
    // paused at cycles 1 and 2, i.e. ceil(512 / 400) = 2 cycles.
    assert_eq!(pause_run(&mut RtlPfc::new(), 400, 3, 1, 10), 2);
    // Q = 0: not paused at all.
    assert_eq!(pause_run(&mut RtlPfc::new(), 400, 0, 0, 10), 0);
    // Q = 25: 12,800 bit times = 32 * 400 exactly: 32 cycles.
    assert_eq!(pause_run(&mut RtlPfc::new(), 400, 5, 25, 100), 32);
    // Q = 65535: 65535 * 512 = 33,553,920 bit times; / 400 = 83,884.8, so
    // 83,884 full cycles leave 320 bits and one more cycle: 83,885 cycles
    // (335.5 us at 250 MHz; 65535 quanta at 100 Gb/s are 335.5 us).
    assert_eq!(pause_run(&mut RtlPfc::new(), 400, 7, 65535, 84_000), 83_885);
    // BITS_PER_CYCLE = 7 (pfc_b7): Q = 1 is 512 = 73 * 7 + 1 bits: 74
    // cycles; Q = 7 is 3584 = 512 * 7 bits: exactly 512 cycles.
    assert_eq!(pause_run(&mut RtlPfcB7::new(), 7, 2, 1, 100), 74);
    assert_eq!(pause_run(&mut RtlPfcB7::new(), 7, 6, 7, 600), 512);
    println!(
        "pfc: quanta 1 -> 2 cycles, 65535 -> 83,885 cycles at 400 bits/cycle (pause from n+1)"
    );
}
