//! DCQCN as deployed against the paper's reaction point (docs/rx_cc.md,
//! "DCQCN as deployed"): time to recover to 99 % of line rate after a 2 ms
//! storm of CNPs every 50 us on one QP, 100 Gb/s at 250 MHz, each reaction
//! point with its own defaults (the register map's reset values for the
//! deployed one; the paper's F = 5, B = 10 MB, K = 55 us, alpha 1.0 with
//! mode 0), with the QP sending 4154-byte frames at its rate ("traffic")
//! and with no frame at all ("timer alone").
//!
//! Each run is measured on the model (`Dcqcn`, skipping idle stretches with
//! its `idle_horizon` / `skip`) and on an f64 reference written here from
//! the formulas of docs/rx_cc.md, event by event, without the model's code:
//! the recovery times must agree within a stated tolerance, and the cuts of
//! the storm must match one for one. The deployed runs (a few million
//! cycles) also run in lockstep, model against RTL every cycle; the paper's
//! (up to seconds of simulated time) run on the model alone.
//!
//! Recovery time = from the storm's last CNP to the first cycle, once the
//! storm's last cut is made, in which `rc` is at least 99 % of `r_max`
//! (cycles, and ms at 250 MHz); the table also gives the lowest rate.
//!
//! `cargo test --release --test dcqcn_deployed -- --nocapture` prints the
//! table (`dcqcn_recovery` with `RNIC_FIGURES_DIR`).

mod common;
use common::figures;

use rnic_model::csr_map as map;
use rnic_model::dcqcn::{rate_of, Dcqcn, DcqcnIn, DcqcnOut, MODE_BYTE_OFF};
use rnic_model::dut::Dut;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlDcqcn;

const R_MAX: u32 = 52_428_800;
/// 4096-byte payload, IPv4 RoCE frame without FCS; the pacing charges 24
/// bytes more (FCS, preamble, gap), as the rate limiter does.
const LEN: u16 = 4154;
const COST: u64 = (LEN as u64 + 24) << 20;
const CYCLES_PER_MS: f64 = 250_000.0;

/// CNPs for QP 0: `count` of them `every` cycles apart from `start`.
#[derive(Debug, Clone, Copy)]
struct Storm {
    start: u64,
    every: u64,
    count: u64,
}

/// The figure's storm: 40 CNPs 12,500 cycles (50 us) apart from cycle
/// 1,000, i.e. 2 ms.
const STORM: Storm = Storm {
    start: 1_000,
    every: 12_500,
    count: 40,
};

impl Storm {
    fn last(&self) -> u64 {
        self.start + (self.count - 1) * self.every
    }

    fn cnp_at(&self, c: u64) -> bool {
        c >= self.start
            && (c - self.start).is_multiple_of(self.every)
            && (c - self.start) / self.every < self.count
    }

    fn next_cnp(&self, c: u64) -> u64 {
        if c <= self.start {
            return self.start;
        }
        let k = (c - self.start).div_ceil(self.every);
        if k < self.count {
            self.start + k * self.every
        } else {
            u64::MAX
        }
    }

    fn times(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.count).map(|k| self.start + k * self.every)
    }
}

/// The deployed defaults: the CC block's reset values.
fn deployed() -> DcqcnIn {
    let r = map::CC_RW_RESETS;
    DcqcnIn {
        cfg_g_shift: (r[0] & 0xF) as u8,
        cfg_f: (r[0] >> 8) as u8,
        cfg_k: r[1],
        cfg_t_inc: r[2],
        cfg_b: r[3],
        cfg_r_ai: r[4],
        cfg_r_hai: r[5],
        cfg_r_min: r[6],
        cfg_r_max: r[7],
        cfg_alpha_init: r[8] as u16,
        cfg_mode: r[13] as u8,
        cfg_mon: r[14],
        cfg_alpha_t: r[15],
        ..DcqcnIn::default()
    }
}

/// The paper's reaction point with its defaults (docs/rx_cc.md).
fn paper() -> DcqcnIn {
    DcqcnIn {
        cfg_mode: 0,
        cfg_f: 5,
        cfg_b: 10 << 20,
        cfg_alpha_init: 1024,
        ..deployed()
    }
}

/// What a run measured: the cycle `rc` first reached 99 % (visible), and
/// `rc` after each cut (cycle visible, rate).
#[derive(Debug)]
struct Run {
    /// The storm's last CNP.
    last: u64,
    recovered: Option<u64>,
    cuts: Vec<(f64, f64)>,
    /// The lowest `rc` seen (at cuts and increases).
    min_rc: f64,
}

impl Run {
    fn new(storm: &Storm) -> Self {
        Run {
            last: storm.last(),
            recovered: None,
            cuts: Vec::new(),
            min_rc: f64::INFINITY,
        }
    }
}

impl Run {
    /// Records `rc` at time `now`: recovered once the cut for the storm's
    /// last CNP is made and `rc` is at 99 % of `r_max`.
    fn done(&mut self, now: f64, rc: f64, r_max: f64) -> bool {
        self.min_rc = self.min_rc.min(rc);
        let last_cut = self.cuts.last().is_some_and(|c| c.0 >= self.last as f64);
        if last_cut && rc >= 0.99 * r_max {
            self.recovered = Some(now.round() as u64);
        }
        self.recovered.is_some()
    }

    /// Cycles from the storm's last CNP to recovery.
    fn cycles(&self) -> u64 {
        self.recovered.expect("recovered") - self.last
    }

    fn ms(&self) -> f64 {
        self.cycles() as f64 / CYCLES_PER_MS
    }
}

/// The stimulus and the measurement, shared by the model-only run and the
/// lockstep environment: inputs for cycle `c` given the outputs visible in
/// it.
struct Stim {
    storm: Storm,
    cfg: DcqcnIn,
    traffic: bool,
    credit: u64,
    cuts_seen: u32,
    run: Run,
}

impl Stim {
    fn new(storm: Storm, cfg: DcqcnIn, traffic: bool) -> Self {
        Stim {
            storm,
            cfg,
            traffic,
            credit: 0,
            cuts_seen: 0,
            run: Run::new(&storm),
        }
    }

    fn observe(&mut self, c: u64, o: &DcqcnOut) {
        let rc = rate_of(&o.rc, 0);
        if o.cnt_cut != self.cuts_seen {
            self.cuts_seen = o.cnt_cut;
            self.run.cuts.push((c as f64, rc as f64));
        }
        // The rates are 0 out of reset and r_max from cycle 2.
        if self.run.recovered.is_none() && c >= 2 {
            self.run.done(c as f64, rc as f64, R_MAX as f64);
        }
    }

    fn inputs(&mut self, c: u64, o: &DcqcnOut) -> DcqcnIn {
        self.observe(c, o);
        let mut i = self.cfg;
        // Cycle 0 loads the initial values (CC_EN is 0 after reset).
        i.cc_en = (c > 0) as u16;
        i.cnp_valid = self.storm.cnp_at(c);
        i.cnp_qp = 0;
        if self.traffic && c > 0 {
            self.credit = (self.credit + rate_of(&o.rc, 0) as u64).min(COST);
            if self.credit >= COST {
                self.credit -= COST;
                i.tx_valid = true;
                i.tx_qp = 0;
                i.tx_len = LEN;
            }
        }
        i
    }
}

/// The model alone, idle stretches skipped, until recovery (or `max`).
fn run_model(storm: Storm, cfg: DcqcnIn, traffic: bool, max: u64) -> Run {
    let mut m = Dcqcn::new();
    let mut o = m.reset();
    let mut s = Stim::new(storm, cfg, traffic);
    let mut c = 0u64;
    while c < max && s.run.recovered.is_none() {
        let i = s.inputs(c, &o);
        if c > 0 && !i.cnp_valid && !i.tx_valid {
            let rc = rate_of(&o.rc, 0) as u64;
            let to_tx = if traffic {
                (COST - s.credit).div_ceil(rc.max(1))
            } else {
                u64::MAX
            };
            let n = m
                .idle_horizon(&i)
                .min(storm.next_cnp(c) - c)
                .min(to_tx)
                .min(max - c);
            if n >= 2 {
                // Cycle c's credit is added; the others' here.
                m.skip(&i, n);
                if traffic {
                    s.credit = (s.credit + (n - 1) * rc).min(COST);
                }
                c += n;
                continue;
            }
        }
        o = m.tick(&i);
        c += 1;
    }
    s.observe(c, &o);
    s.run
}

struct LockEnv {
    s: Stim,
}

impl Env for LockEnv {
    type In = DcqcnIn;
    type Out = DcqcnOut;
    fn step(&mut self, cycle: u64, o: &DcqcnOut) -> DcqcnIn {
        self.s.inputs(cycle, o)
    }
    fn finished(&self) -> bool {
        self.s.run.recovered.is_some()
    }
}

/// Model against RTL every cycle, until recovery.
fn run_lockstep(storm: Storm, cfg: DcqcnIn, traffic: bool, max: u64) -> Run {
    let mut env = LockEnv {
        s: Stim::new(storm, cfg, traffic),
    };
    let fin = lockstep::run(&mut Dcqcn::new(), &mut RtlDcqcn::new(), &mut env, max)
        .unwrap_or_else(|d| panic!("{d}"));
    assert!(fin.completed, "not recovered after {max} cycles");
    env.s.run
}

// ---------------------------------------------------------------------
// f64 references, from the formulas of docs/rx_cc.md (rates in rate
// units, alpha as a real in [0, 1], time in cycles), event by event.
// ---------------------------------------------------------------------

/// The parameters as reals.
struct P {
    g: f64,
    f: u32,
    k: f64,
    t_inc: f64,
    b: f64,
    r_ai: f64,
    r_hai: f64,
    r_min: f64,
    r_max: f64,
    alpha_init: f64,
    mon: u64,
    alpha_t: u64,
    byte_on: bool,
}

impl P {
    fn of(c: &DcqcnIn) -> P {
        P {
            g: 1.0 / (1u64 << c.cfg_g_shift) as f64,
            f: c.cfg_f as u32,
            k: c.cfg_k as f64,
            t_inc: c.cfg_t_inc as f64,
            b: c.cfg_b as f64,
            r_ai: c.cfg_r_ai as f64,
            r_hai: c.cfg_r_hai as f64,
            r_min: c.cfg_r_min as f64,
            r_max: c.cfg_r_max as f64,
            alpha_init: c.cfg_alpha_init as f64 / 1024.0,
            mon: c.cfg_mon as u64,
            alpha_t: c.cfg_alpha_t as u64,
            byte_on: c.cfg_mode & MODE_BYTE_OFF == 0,
        }
    }
}

/// Bytes counted per cycle at rate `rc` (frames paced with 24 bytes more
/// than the byte counter counts).
fn byte_rate(rc: f64, traffic: bool) -> f64 {
    if traffic {
        rc / (1u64 << 20) as f64 * LEN as f64 / (LEN as f64 + 24.0)
    } else {
        0.0
    }
}

/// The paper's reaction point: a CNP cuts at once (rt := rc, rc := max(r_min,
/// rc (1 - alpha / 2)), alpha := (1 - g) alpha + g, T = BC = 0, both timers
/// and the byte counter restart); the alpha timer (K) decays alpha; the
/// increase timer (T_INC) and every B bytes are increase events: FR if
/// max(T, BC) < F, HAI (R_HAI (min - F)) if min(T, BC) > F, else AI; then
/// rc := (rt + rc) / 2.
fn paper_f64(storm: &Storm, p: &P, traffic: bool) -> Run {
    let (mut rc, mut rt, mut a) = (p.r_max, p.r_max, p.alpha_init);
    let (mut t, mut bc) = (0u32, 0u32);
    // The timers run from enable (cycle 1).
    let (mut a_from, mut i_from, mut bytes, mut now) = (1.0, 1.0, 0.0f64, 1.0f64);
    let mut run = Run::new(storm);
    let mut cnps = storm.times().map(|c| c as f64).peekable();
    loop {
        let br = byte_rate(rc, traffic);
        let to_byte = if br > 0.0 {
            now + (p.b - bytes) / br
        } else {
            f64::INFINITY
        };
        let next_cnp = cnps.peek().copied().unwrap_or(f64::INFINITY);
        let ev = next_cnp
            .min(a_from + p.k)
            .min(i_from + p.t_inc)
            .min(to_byte);
        bytes += br * (ev - now);
        now = ev;
        let mut inc = false;
        if ev == next_cnp {
            cnps.next();
            rt = rc;
            rc = (rc * (1.0 - a / 2.0)).max(p.r_min);
            a = (1.0 - p.g) * a + p.g;
            (t, bc, bytes, a_from, i_from) = (0, 0, 0.0, now, now);
            run.cuts.push((now, rc));
            if run.done(now, rc, p.r_max) {
                return run;
            }
        } else if ev == a_from + p.k {
            a *= 1.0 - p.g;
            a_from = now;
        } else if ev == i_from + p.t_inc {
            t += 1;
            i_from = now;
            inc = true;
        } else {
            bc += 1;
            bytes -= p.b;
            inc = true;
        }
        if inc {
            let (hi, lo) = (t.max(bc), t.min(bc));
            if hi < p.f {
            } else if lo > p.f {
                rt = (rt + p.r_hai * (lo - p.f) as f64).min(p.r_max);
            } else {
                rt = (rt + p.r_ai).min(p.r_max);
            }
            rc = (rt + rc) / 2.0;
            if run.done(now, rc, p.r_max) {
                return run;
            }
        }
    }
}

/// Deployed DCQCN (all of DCQCN_MODE's bits 0..4, bit 5 as configured):
/// CNPs mark the monitor period (ends at cycles n with n + 1 a multiple of
/// the period, the counters starting at reset) and the alpha period; a
/// marked monitor period ends in a cut the next cycle: rt := rc only if an
/// increase came since the last cut, rc := max(r_min, rc (1 - alpha / 2)),
/// stage 0, increase timer and byte counter restart; each alpha period's end
/// gives alpha := (1 - g) alpha (+ g if a CNP came in it), after a cut due
/// at the same time. The first CNP only starts the QP (alpha = its initial
/// value, the increase timer starts). Increase events (T_INC, every B bytes
/// when on) with stage s before them: FR if s < F, AI if s = F, HAI (one
/// R_HAI) if s > F; rc := (rt + rc) / 2.
fn deployed_f64(storm: &Storm, p: &P, traffic: bool) -> Run {
    let (mut rc, mut rt, mut a) = (p.r_max, p.r_max, p.alpha_init);
    let mut stage = 0u32;
    let (mut started, mut dmark, mut amark) = (false, false, false);
    let (mut i_from, mut bytes, mut now) = (f64::INFINITY, 0.0f64, 0.0f64);
    let mut run = Run::new(storm);
    let mut cnps = storm.times().peekable();
    // Period ends: the cycles n with n + 1 a multiple of the period (0
    // acts as 1).
    let (mon, alpha_t) = (p.mon.max(1), p.alpha_t.max(1));
    let (mut next_mon, mut next_at) = (mon - 1, alpha_t - 1);
    loop {
        let br = if started { byte_rate(rc, traffic) } else { 0.0 };
        let to_byte = if br > 0.0 && p.byte_on {
            now + (p.b - bytes) / br
        } else {
            f64::INFINITY
        };
        let next_cnp = cnps.peek().map(|&c| c as f64).unwrap_or(f64::INFINITY);
        // Period ends act the cycle after (the datapath serves them then).
        let mon_ev = (next_mon + 1) as f64;
        let at_ev = (next_at + 1) as f64;
        let ev = next_cnp
            .min(mon_ev)
            .min(at_ev)
            .min(i_from + p.t_inc)
            .min(to_byte);
        if started {
            bytes += br * (ev - now);
        }
        now = ev;
        // A period's end (acting the cycle after it) goes before a CNP of
        // that cycle, which belongs to the next period; the cut before the
        // alpha update.
        if ev == mon_ev {
            next_mon += mon;
            if dmark && started {
                dmark = false;
                if stage > 0 {
                    rt = rc;
                }
                rc = (rc * (1.0 - a / 2.0)).max(p.r_min);
                (stage, bytes, i_from) = (0, 0.0, now);
                run.cuts.push((now, rc));
                if run.done(now, rc, p.r_max) {
                    return run;
                }
            }
            continue;
        } else if ev == at_ev {
            next_at += alpha_t;
            if started {
                a = (1.0 - p.g) * a + if amark { p.g } else { 0.0 };
                amark = false;
            }
            continue;
        } else if ev == next_cnp {
            cnps.next();
            if !started {
                started = true;
                a = p.alpha_init;
                i_from = now;
            } else {
                amark = true;
            }
            dmark = true;
            continue;
        } else if ev == i_from + p.t_inc {
            i_from = now;
        } else {
            bytes -= p.b;
        }
        // An increase event.
        if stage == p.f {
            rt = (rt + p.r_ai).min(p.r_max);
        } else if stage > p.f {
            rt = (rt + p.r_hai).min(p.r_max);
        }
        stage += 1;
        rc = (rt + rc) / 2.0;
        if run.done(now, rc, p.r_max) {
            return run;
        }
    }
}

/// The cuts of the storm one for one: the model's rate within `tol` of the
/// reference's.
fn cuts_match(name: &str, m: &Run, f: &Run, tol: f64) -> f64 {
    assert_eq!(
        m.cuts.len(),
        f.cuts.len(),
        "{name}: {} cuts, the f64 reference makes {}",
        m.cuts.len(),
        f.cuts.len()
    );
    let mut worst = 0.0f64;
    for (k, ((_, a), (_, b))) in m.cuts.iter().zip(&f.cuts).enumerate() {
        let d = (a - b).abs() / b;
        assert!(d <= tol, "{name}: cut {k}: model {a}, f64 {b}");
        worst = worst.max(d);
    }
    worst
}

const TABLE: &str = "dcqcn_recovery";
const HEADER: &[&str] = &[
    "reaction point",
    "traffic",
    "recovery (cycles)",
    "recovery (ms)",
    "f64 reference (ms)",
    "lowest rate (Gb/s)",
    "checked",
];

#[test]
fn recovery_after_a_2_ms_cnp_storm_deployed_and_paper() {
    let mut t = figures::Table::new(TABLE, HEADER);
    let mut row = |name: &str, traffic: bool, m: &Run, f: &Run, how: &str| {
        println!(
            "{name} (traffic {traffic}): model {} cycles, f64 {} cycles, lowest rc {} units",
            m.cycles(),
            f.cycles(),
            m.min_rc
        );
        t.row(&[
            name.into(),
            if traffic {
                "4154-byte frames at the QP's rate"
            } else {
                "none (timer alone)"
            }
            .into(),
            (m.cycles()).to_string(),
            format!("{:.3}", m.ms()),
            format!("{:.3}", f.ms()),
            format!("{:.3}", m.min_rc * 100.0 / R_MAX as f64),
            how.into(),
        ]);
    };

    // Deployed, timer alone: the ns-3 Mlx model's setting. In lockstep.
    let dep = deployed();
    let m = run_lockstep(STORM, dep, false, 4_000_000);
    let f = deployed_f64(&STORM, &P::of(&dep), false);
    let w = cuts_match("deployed, timer", &m, &f, 0.01);
    println!(
        "deployed, timer alone: cuts within {:.4} % of f64",
        w * 100.0
    );
    assert!(
        (m.ms() - f.ms()).abs() <= 0.01 * f.ms(),
        "deployed timer: model {} ms, f64 {} ms",
        m.ms(),
        f.ms()
    );
    // Cut once per 4 us at most: one cut per CNP here (50 us apart).
    assert_eq!(m.cuts.len() as u64, STORM.count);
    let dep_timer = m.cycles();
    row(
        "deployed (reset values)",
        false,
        &m,
        &f,
        "lockstep RTL = model",
    );

    // Deployed with traffic (byte counter on, 32,767 bytes). In lockstep.
    let m = run_lockstep(STORM, dep, true, 4_000_000);
    let f = deployed_f64(&STORM, &P::of(&dep), true);
    let w = cuts_match("deployed, traffic", &m, &f, 0.05);
    println!("deployed, traffic: cuts within {:.4} % of f64", w * 100.0);
    assert!(
        (m.ms() - f.ms()).abs() <= 0.05 * f.ms(),
        "deployed traffic: model {} ms, f64 {} ms",
        m.ms(),
        f.ms()
    );
    let dep_traffic = m.cycles();
    row(
        "deployed (reset values)",
        true,
        &m,
        &f,
        "lockstep RTL = model",
    );

    // The ns-3 Mlx setting (no byte counter) with traffic: the timer alone
    // recovers it, as without traffic.
    let ns3 = DcqcnIn {
        cfg_mode: dep.cfg_mode | MODE_BYTE_OFF,
        ..dep
    };
    let m = run_lockstep(STORM, ns3, true, 4_000_000);
    let f = deployed_f64(&STORM, &P::of(&ns3), true);
    cuts_match("deployed, no byte counter", &m, &f, 0.01);
    assert!(
        (m.ms() - f.ms()).abs() <= 0.01 * f.ms(),
        "no byte counter: model {} ms, f64 {} ms",
        m.ms(),
        f.ms()
    );
    let ns3_traffic = m.cycles();
    row(
        "deployed, byte counter off (BYTE_OFF: the ns-3 Mlx code)",
        true,
        &m,
        &f,
        "lockstep RTL = model",
    );

    // The paper's reaction point, model alone (seconds of simulated time).
    let pap = paper();
    let m = run_model(STORM, pap, true, 2_000_000_000);
    let f = paper_f64(&STORM, &P::of(&pap), true);
    let w = cuts_match("paper, traffic", &m, &f, 0.01);
    println!("paper, traffic: cuts within {:.4} % of f64", w * 100.0);
    assert!(
        (m.ms() - f.ms()).abs() <= 0.05 * f.ms(),
        "paper traffic: model {} ms, f64 {} ms",
        m.ms(),
        f.ms()
    );
    let pap_traffic = m.cycles();
    row(
        "paper (mode 0, F 5, B 10 MiB, alpha 1.0)",
        true,
        &m,
        &f,
        "model",
    );

    let m = run_model(STORM, pap, false, 4_000_000_000);
    let f = paper_f64(&STORM, &P::of(&pap), false);
    cuts_match("paper, timer", &m, &f, 0.01);
    assert!(
        (m.ms() - f.ms()).abs() <= 0.01 * f.ms(),
        "paper timer: model {} ms, f64 {} ms",
        m.ms(),
        f.ms()
    );
    let pap_timer = m.cycles();
    row(
        "paper (mode 0, F 5, B 10 MiB, alpha 1.0)",
        false,
        &m,
        &f,
        "model",
    );
    t.finish();

    // The figure's bounds: deployed within 3 ms on the timer alone (seven
    // 300 us fast-recovery halvings), the paper far slower either way.
    assert!(dep_timer <= 750_000, "deployed, timer: {dep_timer} cycles");
    assert!(
        dep_traffic <= 750_000,
        "deployed, traffic: {dep_traffic} cycles"
    );
    assert!(
        ns3_traffic <= 750_000,
        "no byte counter: {ns3_traffic} cycles"
    );
    assert!(
        pap_traffic >= 10 * dep_timer,
        "paper, traffic: {pap_traffic}"
    );
    assert!(pap_timer >= 100 * dep_timer, "paper, timer: {pap_timer}");
}

/// CNPs closer than the monitor period (3 us apart, period 4 us) and one
/// every 10 us, 1 ms each: with MON_CUT the model cuts once per period with
/// CNPs, as the f64 reference does, so fewer cuts than CNPs in the first
/// storm; every cut and the recovery match the reference. Model alone for
/// the timer-only runs, in lockstep with traffic.
#[test]
fn deployed_cuts_once_per_monitor_period_like_the_f64_reference() {
    let dep = deployed();
    for (every, count) in [(750u64, 334u64), (2_500, 100)] {
        let storm = Storm {
            start: 3_333,
            every,
            count,
        };
        for traffic in [false, true] {
            let m = if traffic {
                run_lockstep(storm, dep, true, 4_000_000)
            } else {
                run_model(storm, dep, false, 40_000_000)
            };
            let f = deployed_f64(&storm, &P::of(&dep), traffic);
            let w = cuts_match("storm", &m, &f, 0.01);
            println!(
                "CNPs every {every} cycles, traffic {traffic}: {} CNPs, {} cuts (f64 {}), \
                 cuts within {:.4} %, recovery {} cycles (f64 {})",
                count,
                m.cuts.len(),
                f.cuts.len(),
                w * 100.0,
                m.cycles(),
                f.cycles()
            );
            if every < dep.cfg_mon as u64 {
                assert!((m.cuts.len() as u64) < count, "a cut per CNP");
            }
            assert!(
                m.cycles().abs_diff(f.cycles()) <= 10 + f.cycles() / 100,
                "recovery: model {} cycles, f64 {}",
                m.cycles(),
                f.cycles()
            );
        }
    }
}
