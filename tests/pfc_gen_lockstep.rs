//! Constrained-random block-level lockstep of `pfc_gen`, PFC generation
//! from rx_buf's per-priority occupancy (docs/pfc_gen.md).
//!
//! The environment plays rx_buf (per-priority line counts that wander
//! around the thresholds: random walks with small steps, plateaus, and
//! jumps), software (random enable masks, XOFF and XON thresholds with
//! XON <= XOFF, pause times including 0 and 65535, refresh periods
//! including 0 and 1, changed during the run) and pkt_builder (random
//! back-pressure on `pfc_ready`). Its reference follows the contract, not
//! the model: per priority whether XOFF is in force, the cycle from which
//! its next XOFF is due (the crossing cycle, or the cycle of the last XOFF
//! loaded plus the refresh period then configured) and whether an XON is
//! owed; it predicts the output register (every frame's enable vector and
//! 8 times, and the cycle it becomes visible) and the counter pulses, and
//! checks them every cycle.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. The
//! floors hold for any seed with at least the default case count (each is
//! a small fraction of what one case makes by construction).

mod common;

use rnic_model::pfc_gen::{PfcGen, PfcGenIn, PfcGenOut};
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlPfcGen;

const DEFAULT_CASES: u64 = 200;
const DEFAULT_SEED: u64 = 0x7066_635F_6765_6E5F; // "pfc_gen_"
const LINES: u16 = 512;

/// The frame the reference expects in the output register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Frame {
    enable: u8,
    quanta: u128,
    xoff: bool,
}

#[derive(Debug, Default, Clone, Copy)]
struct Cover {
    cycles: u64,
    xoff_frames: u64,
    xon_frames: u64,
    /// XOFF frames naming a priority already in XOFF (refreshes).
    refreshes: u64,
    /// Frames with two or more priorities.
    merged: u64,
    /// Cycles a frame waited with pfc_ready low.
    stalled: u64,
    /// An XON owed but not sent because an XOFF was due (XOFF first).
    xon_deferred: u64,
    /// Config writes during a run.
    reconfig: u64,
}

#[derive(Debug, Clone, Copy)]
struct Cfg {
    en: u8,
    xoff: u16,
    xon: u16,
    time: u16,
    refresh: u32,
}

struct GenEnv {
    rng: SplitMix64,
    len: u64,
    cycle: u64,
    cfg: Cfg,
    lines: [u16; 8],
    /// Per priority: the walk's drift target and step size.
    target: [u16; 8],
    step: [u16; 8],
    ready_pct: u8,
    // Reference state.
    off: [bool; 8],
    /// Valid while `off`: the cycle from which the next XOFF is due.
    due: [u64; 8],
    xon_owed: [bool; 8],
    out: Option<Frame>,
    ev: (bool, bool),
    cover: Cover,
}

impl GenEnv {
    fn new(seed: u64, len: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let cfg = Self::draw_cfg(&mut rng);
        let ready_pct = [100, 90, 50, 20, 5][rng.below(5) as usize];
        let mut e = GenEnv {
            rng,
            len,
            cycle: 0,
            cfg,
            lines: [0; 8],
            target: [0; 8],
            step: [1; 8],
            ready_pct,
            off: [false; 8],
            due: [0; 8],
            xon_owed: [false; 8],
            out: None,
            ev: (false, false),
            cover: Cover::default(),
        };
        for p in 0..8 {
            e.retarget(p);
        }
        e
    }

    fn draw_cfg(rng: &mut SplitMix64) -> Cfg {
        let xoff = match rng.below(4) {
            0 => 1 + rng.below(8) as u16,
            1 => LINES - rng.below(8) as u16,
            _ => 1 + rng.below(LINES as u64) as u16,
        };
        let xon = match rng.below(4) {
            0 => xoff,
            1 => 0,
            _ => rng.below(xoff as u64 + 1) as u16,
        };
        let time = match rng.below(5) {
            0 => 0,
            1 => 0xFFFF,
            _ => rng.next_u64() as u16,
        };
        let refresh = match rng.below(6) {
            0 => 0,
            1 => 1,
            2 => 2 + rng.below(4) as u32,
            3 => 0xFF_FFFF,
            _ => 8 + rng.below(300) as u32,
        };
        let en = match rng.below(4) {
            0 => 0xFF,
            1 => 1 << rng.below(8),
            _ => rng.next_u64() as u8,
        };
        Cfg {
            en,
            xoff,
            xon,
            time,
            refresh,
        }
    }

    /// A new drift target for priority p's walk: near a threshold mostly.
    fn retarget(&mut self, p: usize) {
        let c = self.cfg;
        let near = |x: u16, rng: &mut SplitMix64| {
            (x as i64 + rng.below(9) as i64 - 4).clamp(0, LINES as i64) as u16
        };
        self.target[p] = match self.rng.below(6) {
            0 => near(c.xoff, &mut self.rng),
            1 => near(c.xon, &mut self.rng),
            2 => 0,
            3 => LINES,
            _ => self.rng.below(LINES as u64 + 1) as u16,
        };
        self.step[p] = [1, 1, 2, 4, 16, 66][self.rng.below(6) as usize];
    }

    fn input(&self, ready: bool) -> PfcGenIn {
        let mut prio_lines = 0u128;
        for (p, &n) in self.lines.iter().enumerate() {
            prio_lines |= (n as u128) << (10 * p);
        }
        PfcGenIn {
            prio_lines,
            cfg_en: self.cfg.en,
            cfg_xoff: self.cfg.xoff,
            cfg_xon: self.cfg.xon,
            cfg_time: self.cfg.time,
            cfg_refresh: self.cfg.refresh,
            pfc_ready: ready,
        }
    }

    /// The reference: this cycle's decisions given `lines`, `cfg` and
    /// `ready`; sets the output expected at the next cycle.
    fn decide(&mut self, c: u64, ready: bool) {
        let cfg = self.cfg;
        let take = self.out.is_some() && ready;
        let free = self.out.is_none() || ready;
        self.ev = (
            take && self.out.is_some_and(|f| f.xoff),
            take && self.out.is_some_and(|f| !f.xoff),
        );
        let (mut want_off, mut want_on, mut fresh) = (0u8, 0u8, 0u8);
        for p in 0..8 {
            let n = self.lines[p];
            if cfg.en >> p & 1 == 0 {
                self.off[p] = false;
                self.xon_owed[p] = false;
            } else if self.off[p] && n < cfg.xon {
                self.off[p] = false;
                want_on |= 1 << p;
            } else if !self.off[p] && n >= cfg.xoff {
                self.off[p] = true;
                self.due[p] = c;
                want_off |= 1 << p;
                fresh |= 1 << p;
            } else {
                if self.off[p] && self.due[p] <= c {
                    want_off |= 1 << p;
                }
                if self.xon_owed[p] {
                    want_on |= 1 << p;
                }
            }
        }
        if take {
            self.out = None;
        }
        if free && want_off != 0 {
            let mut quanta = 0u128;
            for p in 0..8 {
                if want_off >> p & 1 != 0 {
                    quanta |= (cfg.time as u128) << (16 * p);
                    // The next XOFF is due one refresh period (0 acts as 1) on.
                    self.due[p] = c + cfg.refresh.max(1) as u64;
                }
            }
            self.out = Some(Frame {
                enable: want_off,
                quanta,
                xoff: true,
            });
            self.cover.xoff_frames += 1;
            self.cover.refreshes += (want_off & !fresh).count_ones() as u64;
            if want_on != 0 {
                self.cover.xon_deferred += 1;
            }
        } else if free && want_on != 0 {
            self.out = Some(Frame {
                enable: want_on,
                quanta: 0,
                xoff: false,
            });
            self.cover.xon_frames += 1;
            want_on = 0;
        }
        if let Some(f) = self.out {
            if f.enable.count_ones() >= 2 && free {
                self.cover.merged += 1;
            }
        }
        for p in 0..8 {
            self.xon_owed[p] = want_on >> p & 1 != 0;
        }
    }
}

impl Env for GenEnv {
    type In = PfcGenIn;
    type Out = PfcGenOut;

    fn step(&mut self, cycle: u64, out: &PfcGenOut) -> PfcGenIn {
        self.cycle = cycle;
        // The output register and the pulses, as predicted last cycle.
        assert_eq!(
            out.pfc_valid,
            self.out.is_some(),
            "cycle {cycle}: pfc_valid (expected {:?})",
            self.out
        );
        if let Some(f) = self.out {
            assert_eq!(
                (out.pfc_enable, out.pfc_quanta),
                (f.enable, f.quanta),
                "cycle {cycle}: frame"
            );
        }
        assert_eq!((out.ev_xoff, out.ev_xon), self.ev, "cycle {cycle}: pulses");

        // Software: now and then a new configuration (XON <= XOFF always).
        if self.rng.below(4000) == 0 {
            let mut n = Self::draw_cfg(&mut self.rng);
            if self.rng.below(2) == 0 {
                n.en = self.cfg.en ^ (1 << self.rng.below(8));
            }
            self.cfg = n;
            self.cover.reconfig += 1;
        }
        // rx_buf: each priority walks toward its target.
        for p in 0..8 {
            let (n, t, s) = (self.lines[p], self.target[p], self.step[p]);
            if self.rng.below(3) == 0 {
                continue; // a plateau cycle
            }
            let s = 1 + self.rng.below(s as u64) as u16;
            self.lines[p] = if n < t {
                (n + s).min(t)
            } else if n > t {
                n.saturating_sub(s).max(t)
            } else {
                // Wobble around the target a while, then a new one.
                if self.rng.below(40) == 0 {
                    self.retarget(p);
                }
                (n as i32 + self.rng.below(3) as i32 - 1).clamp(0, LINES as i32) as u16
            };
        }
        let ready = self.rng.percent(self.ready_pct);
        if self.out.is_some() && !ready {
            self.cover.stalled += 1;
        }
        self.decide(cycle, ready);
        self.cover.cycles += 1;
        self.input(ready)
    }

    fn finished(&self) -> bool {
        self.cycle >= self.len
    }
}

#[test]
fn random_pfc_gen_lockstep() {
    let mut cov = Cover::default();
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut rng = SplitMix64::new(seed);
        let len = 2_000 + rng.below(8_000);
        let mut env = GenEnv::new(rng.next_u64(), len);
        let (mut model, mut rtl) = (PfcGen::new(), RtlPfcGen::new());
        match lockstep::run(&mut model, &mut rtl, &mut env, len + 1) {
            Ok(f) => assert!(f.completed, "ran out of cycles at {}", f.cycles),
            Err(d) => panic!("{d}"),
        }
        let c = env.cover;
        cov.cycles += c.cycles;
        cov.xoff_frames += c.xoff_frames;
        cov.xon_frames += c.xon_frames;
        cov.refreshes += c.refreshes;
        cov.merged += c.merged;
        cov.stalled += c.stalled;
        cov.xon_deferred += c.xon_deferred;
        cov.reconfig += c.reconfig;
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        cov.cycles >= 200 * 2_000
            && cov.xoff_frames >= 20_000
            && cov.xon_frames >= 1_000
            && cov.merged >= 10_000
            && cov.refreshes >= 50_000
            && cov.stalled >= 20_000
            && cov.xon_deferred >= 5_000
            && cov.reconfig >= 100
    });
    println!(
        "pfc_gen: {} cases (seed {:#x}), {cov:?}",
        run.cases, run.seed
    );
    if run.full {
        // Seeds 0x7066635f67656e5f, 1, 2, 3 measured 1.17 M cycles, 227 k to
        // 276 k XOFF frames, 4.6 k to 5.5 k XON, 149 k+ merged, 685 k+
        // refreshes, 200 k+ stalled cycles, 52 k+ deferred XONs, 278+
        // reconfigurations; the floors are a tenth or less.
        assert!(cov.cycles >= 200 * 2_000, "{cov:?}");
        assert!(cov.xoff_frames >= 20_000, "{cov:?}");
        assert!(cov.xon_frames >= 1_000, "{cov:?}");
        assert!(cov.merged >= 10_000, "{cov:?}");
        assert!(cov.refreshes >= 50_000, "{cov:?}");
        assert!(cov.stalled >= 20_000, "{cov:?}");
        assert!(cov.xon_deferred >= 5_000, "{cov:?}");
        assert!(cov.reconfig >= 100, "{cov:?}");
    }
}

/// Model and RTL side by side, the inputs of cycle c from `f`; outputs
/// compared every cycle. Returns the outputs and the RTL's assertion
/// failures (name, cycle).
fn drive(cycles: u64, mut f: impl FnMut(u64) -> PfcGenIn) -> (Vec<PfcGenOut>, Vec<(String, u64)>) {
    common::drive_side_by_side(PfcGen::new(), RtlPfcGen::new(), cycles, |c, _| f(c))
}

fn cfg_in(lines: &[(usize, u16)], en: u8, xoff: u16, xon: u16, refresh: u32) -> PfcGenIn {
    let mut prio_lines = 0u128;
    for &(p, n) in lines {
        prio_lines |= (n as u128) << (10 * p);
    }
    PfcGenIn {
        prio_lines,
        cfg_en: en,
        cfg_xoff: xoff,
        cfg_xon: xon,
        cfg_time: 0xFFFF,
        cfg_refresh: refresh,
        pfc_ready: true,
    }
}

/// The exact schedule of the contract: XOFF the cycle after the crossing,
/// refreshes every REFRESH cycles, XON the cycle after falling below XON,
/// two priorities crossing together in one frame, XOFF before a waiting XON.
#[test]
fn pfc_gen_schedule() {
    // Priority 3 reaches XOFF 100 at cycle 5, stays at 90 (above XON 80)
    // until cycle 40, then 79.
    let (outs, fails) = drive(60, |c| {
        let n = match c {
            0..=4 => 99,
            5..=39 => 90 + (c == 5) as u16 * 10,
            _ => 79,
        };
        cfg_in(&[(3, n)], 1 << 3, 100, 80, 12)
    });
    assert_eq!(fails, vec![]);
    let frames: Vec<(usize, u8, u128)> = outs
        .iter()
        .enumerate()
        .filter(|(_, o)| o.pfc_valid)
        .map(|(c, o)| (c, o.pfc_enable, o.pfc_quanta))
        .collect();
    let xoff = 0xFFFFu128 << 48;
    assert_eq!(
        frames,
        vec![
            (6, 1 << 3, xoff),
            (18, 1 << 3, xoff),
            (30, 1 << 3, xoff),
            (41, 1 << 3, 0)
        ]
    );
    assert_eq!(outs.iter().filter(|o| o.ev_xoff).count(), 3);
    assert_eq!(outs.iter().filter(|o| o.ev_xon).count(), 1);

    // Priorities 1 and 6 cross in the same cycle: one frame names both.
    let (outs, _) = drive(5, |_| cfg_in(&[(1, 200), (6, 300)], 0x42, 150, 100, 1000));
    assert!(outs[1].pfc_valid && outs[1].pfc_enable == 0x42);
    assert_eq!(outs[1].pfc_quanta, 0xFFFFu128 << 16 | 0xFFFFu128 << 96);
}

/// Each assertion of pfc_gen.sv fires on the input that breaks its rule,
/// and not on the legal sequence around it.
#[test]
fn pfc_gen_assertions_fire() {
    // Legal: every priority at LINES, XON = XOFF.
    let full: Vec<(usize, u16)> = (0..8).map(|p| (p, LINES)).collect();
    let (_, fails) = drive(6, |_| cfg_in(&full, 0xFF, 300, 300, 5));
    assert_eq!(fails, vec![]);
    // a_lines_range: priority 2 holds LINES + 1 lines at cycle 3.
    let (_, fails) = drive(6, |c| {
        cfg_in(&[(2, if c == 3 { LINES + 1 } else { 7 })], 0, 300, 200, 5)
    });
    assert_eq!(fails, vec![("a_lines_range".to_string(), 3)]);
    // a_xon_above_xoff: XON above XOFF while a priority is enabled (cycle
    // 4); the same thresholds with every priority off are legal (cycle 2).
    let (_, fails) = drive(6, |c| {
        let en = if c == 4 { 1 } else { 0 };
        let xon = if c == 2 || c == 4 { 301 } else { 200 };
        cfg_in(&[], en, 300, xon, 5)
    });
    assert_eq!(fails, vec![("a_xon_above_xoff".to_string(), 4)]);
}
