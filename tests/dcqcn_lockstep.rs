//! Constrained-random block-level lockstep of `dcqcn`: model and RTL get the
//! same random CNPs (from a few hot QPs or all), transmitted frames
//! (`tx_*`), `cc_en` churn and parameters (small K / T_INC / B so that
//! events are frequent, degenerate ones too: periods 0 and 1, B = 0, F = 0
//! or 255, g from 0 to 15, rates up to 2^32 - 1), and the environment checks
//! the block's function on its own, with its own i128 arithmetic of the
//! contract's formulas (docs/rx_cc.md, "dcqcn"), from the outputs and
//! inputs of cycle n against the outputs at n+1:
//! - alpha is Q20 inside (21 bits), the port shows it >> 10 (Q10). The env
//!   keeps, per QP, the interval of internal alphas consistent with
//!   everything seen so far (its own arithmetic; both updates are monotone
//!   in alpha, so an interval maps to an interval): exact after a disable
//!   (`cfg_alpha_init << 10`) and as long as every decay can be attributed
//!   to a QP; a decay counted with no visible change widens the interval of
//!   every enabled QP down to the decayed low end. Every cycle each interval
//!   is cut down to the port's `[alpha << 10, alpha << 10 | 1023]` and must
//!   stay non-empty;
//! - a QP without `cc_en` at n shows `rc = rt = cfg_r_max`, `alpha =
//!   cfg_alpha_init` at n+1;
//! - a CNP at n for an enabled QP: `rt = rc`, `rc = max(r_min, rc - (rc *
//!   A >> 21))` for an A in the QP's interval (exact when the interval is
//!   one value, as it mostly is: the test asserts how often), and the
//!   interval becomes those A's mapped through `floor((1 - g) A) + (2^20 >>
//!   g)`, at n+1; no other QP changes in that cycle and no event is
//!   counted;
//! - otherwise at most one QP changes, and only as one served event allows:
//!   `cnt_fr` / `cnt_ai` / `cnt_hai` (at most one) and `cnt_alpha` say what
//!   was served; a visible increase step must be `rt` unchanged (FR),
//!   `min(r_max, rt + r_ai)` (AI) or `min(r_max, rt + r_hai * k)` (HAI),
//!   and `rc = (rt_new + rc) >> 1`; a decay maps the served QP's interval
//!   through `floor((1 - g) A)`, and alpha may change only with a decay
//!   counted. The stage is checked against upper bounds of T and BC
//!   (periods of T_INC and multiples of B in the QP's epoch since its last
//!   cut or enable): AI needs one of them to reach F, HAI both to pass it,
//!   with 1 <= k <= min(T, BC) - F;
//! - `cnt_cnp` counts every CNP, `cnt_cut` those for enabled QPs;
//! - event accounting per case: increase events served are at most what the
//!   timers and byte counters can have produced (per QP and epoch between
//!   cuts / disables: `floor(cycles / T_INC) + floor(bytes / B)`), alpha
//!   events at most `floor(cycles / K)`; in byte-only cases (no increase
//!   timer) the final drain (no CNP, no frame) must serve the byte events of
//!   each QP's last epoch, up to one per QP per `QPS` cycles.
//!
//! Half the cases draw random deployed-DCQCN mode bits (`cfg_mode`, with
//! random monitor and alpha periods; docs/rx_cc.md, "DCQCN as deployed").
//! The checks above are the paper's reaction point (mode 0); in a mode case
//! the environment keeps the ones every mode obeys (`check_modes`: a
//! disabled QP at its initial state, `cnt_cnp` and `cnt_cut`, at most one
//! event counted and one QP moved by the datapath a cycle, a cut lowers
//! `rc` of one QP to at least `r_min` and nothing else moves with it, an
//! increase leaves `rc = (rt + rc_before) >> 1`), and RTL and model must
//! agree every cycle; the modes' arithmetic is checked by the model's
//! hand-worked tests and the f64 references of tests/dcqcn_deployed.rs.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. A
//! failing case prints its own seed; `RNIC_RANDOM_SEED=<that seed>
//! RNIC_RANDOM_CASES=1` replays it alone. With at least the default case
//! count the test asserts that [`MIN_TOTAL_CYCLES`] lockstep cycles ran.

mod common;

use rnic_model::dcqcn::{Dcqcn, DcqcnIn, DcqcnOut, MODE_FIRST_CNP, MODE_MON_CUT, QPS};
use rnic_model::Beat;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlDcqcn;

const DEFAULT_CASES: u64 = 48;
const DEFAULT_SEED: u64 = 0x6463_7163_6E5F_5F5F; // "dcqcn___"
/// Cycles with traffic per case, then a drain without CNPs and frames.
const CYCLES: u64 = 40_000;
const DRAIN: u64 = 2_000;
/// Lockstep cycles the default run must reach.
const MIN_TOTAL_CYCLES: u64 = 48 * (CYCLES + DRAIN);
/// A period never reached in a case.
const NEVER: u32 = 0xFF_FFFF;

fn rate(v: &Beat, q: usize) -> i128 {
    let mut r = 0i128;
    for k in 0..4 {
        r |= (v[4 * q + k] as i128) << (8 * k);
    }
    r
}

fn alpha(v: &Beat, q: usize) -> i128 {
    let mut a = 0i128;
    for k in 0..11 {
        let bit = 11 * q + k;
        a |= ((v[bit / 8] >> (bit % 8)) as i128 & 1) << k;
    }
    a
}

/// One QP's rates and alpha as visible in a cycle.
#[derive(Debug, Clone, Copy, PartialEq)]
struct St {
    rc: i128,
    rt: i128,
    alpha: i128,
}

fn st(o: &DcqcnOut, q: usize) -> St {
    St {
        rc: rate(&o.rc, q),
        rt: rate(&o.rt, q),
        alpha: alpha(&o.alpha, q),
    }
}

/// 1.0 in the internal Q20 alpha.
const ONE: i128 = 1 << 20;

/// `floor((1 - 2^-g) * a)` for a Q20 alpha: the contract's decay, rounding
/// toward zero (written as a product here, not as the block's subtraction of
/// a ceiling).
fn keep(a: i128, g: u32) -> i128 {
    (a * ((1 << g) - 1)) >> g
}

/// The CNP's alpha update: `floor((1 - g) a) + g`.
fn cnp_alpha(a: i128, g: u32) -> i128 {
    keep(a, g) + (ONE >> g)
}

/// Internal alphas (Q20) of QP q consistent with what was seen: `[lo, hi]`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Span {
    lo: i128,
    hi: i128,
}

/// The A's of `span` for which a cut of `rc` gives `out` (`max(r_min, rc -
/// (rc * A >> 21))`, non-increasing in A, so they form an interval); `None`
/// if there are none.
fn cut_solutions(span: Span, rc: i128, r_min: i128, out: i128) -> Option<Span> {
    let h = |a: i128| (rc - ((rc * a) >> 21)).max(r_min);
    // First A with h(A) <= out (a suffix of the span).
    let (mut l, mut r) = (span.lo, span.hi + 1);
    while l < r {
        let m = (l + r) / 2;
        if h(m) <= out {
            r = m;
        } else {
            l = m + 1;
        }
    }
    let first = l;
    // Last A with h(A) >= out (a prefix).
    let (mut l, mut r) = (span.lo - 1, span.hi);
    while l < r {
        let m = (l + r + 1) / 2;
        if h(m) >= out {
            l = m;
        } else {
            r = m - 1;
        }
    }
    (first <= l).then_some(Span { lo: first, hi: l })
}

struct DcqcnEnv {
    rng: SplitMix64,
    cfg: DcqcnIn,
    cnp_pct: u8,
    tx_pct: u8,
    hot: Vec<u8>,
    en_churn: bool,
    /// Percent per cycle of redrawing one rate parameter, F, g or alpha_init.
    cfg_churn: u8,
    prev_in: Option<DcqcnIn>,
    prev_out: DcqcnOut,
    /// Per QP, the internal alphas consistent with everything seen.
    span: [Span; QPS],
    /// Per QP, the current epoch (since the last cut / enable): counted
    /// cycles and counted bytes.
    ep_cycles: [u64; QPS],
    ep_bytes: [u64; QPS],
    /// Upper bounds of increase and alpha events, closed epochs plus open.
    inc_bound: u64,
    alpha_bound: u64,
    // Coverage.
    cuts: u64,
    /// Cuts above r_min (so the result depends on alpha), and those of
    /// them checked with the QP's alpha known exactly.
    free_cuts: u64,
    exact_cuts: u64,
    steps_seen: [u64; 4],
    to_rmin: u64,
    to_rmax: u64,
    /// Mode cases: cuts and increases seen, QPs released to their initial
    /// state (FIRST_CNP).
    mode_cuts: u64,
    mode_incs: u64,
    mode_releases: u64,
}

impl DcqcnEnv {
    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mut pick = |xs: &[u64]| xs[rng.below(xs.len() as u64) as usize];
        let k = pick(&[0, 1, 7, 55, 500, NEVER as u64]) as u32;
        let t_inc = pick(&[0, 1, 5, 40, 300, NEVER as u64, NEVER as u64]) as u32;
        let b = pick(&[0, 1, 64, 1500, 10_000, 100_000, 0xFFFF_FFFF]) as u32;
        let cnp_pct = pick(&[0, 1, 3, 20, 100]) as u8;
        let tx_pct = pick(&[0, 20, 60, 100]) as u8;
        let n_hot = pick(&[1, 2, 4, QPS as u64]) as usize;
        let en_churn = pick(&[0, 1]) == 1;
        let cfg_churn = pick(&[0, 0, 1]) as u8;
        // Half the cases: random deployed-DCQCN mode bits and periods.
        let mode = if rng.below(2) == 0 {
            0
        } else {
            [0x1F, 0x3F, 1 + rng.below(63) as u8, 1 + rng.below(63) as u8][rng.below(4) as usize]
        };
        let mut pick = |xs: &[u64]| xs[rng.below(xs.len() as u64) as usize];
        let mon = pick(&[0, 1, 7, 55, 250, 1000]) as u32;
        let alpha_t = pick(&[0, 1, 7, 55, 250, 1000]) as u32;
        let mut env = DcqcnEnv {
            rng,
            cfg: DcqcnIn {
                cfg_k: k,
                cfg_t_inc: t_inc,
                cfg_b: b,
                cfg_mode: mode,
                cfg_mon: mon,
                cfg_alpha_t: alpha_t,
                ..DcqcnIn::default()
            },
            cnp_pct,
            tx_pct,
            hot: Vec::new(),
            en_churn,
            cfg_churn,
            prev_in: None,
            prev_out: DcqcnOut::default(),
            // Reset clears every register.
            span: [Span { lo: 0, hi: 0 }; QPS],
            ep_cycles: [0; QPS],
            ep_bytes: [0; QPS],
            inc_bound: 0,
            alpha_bound: 0,
            cuts: 0,
            free_cuts: 0,
            exact_cuts: 0,
            steps_seen: [0; 4],
            to_rmin: 0,
            to_rmax: 0,
            mode_cuts: 0,
            mode_incs: 0,
            mode_releases: 0,
        };
        env.hot = (0..n_hot)
            .map(|_| env.rng.below(QPS as u64) as u8)
            .collect();
        env.cfg.cc_en = match env.rng.below(3) {
            0 => 0xFFFF,
            1 => env.rng.next_u64() as u16,
            _ => env.hot.iter().fold(0, |m, &q| m | 1 << q),
        };
        for f in 0..5 {
            env.redraw(f);
        }
        env
    }

    /// Redraws parameter group `f`: rates, F, g, alpha_init, r_min.
    fn redraw(&mut self, f: u64) {
        let r = &mut self.rng;
        let c = &mut self.cfg;
        match f {
            0 => {
                c.cfg_r_max =
                    [52_428_800, 1000, 0xFFFF_FFFF, r.next_u64() as u32][r.below(4) as usize];
                c.cfg_r_ai =
                    [1, 2621, r.below(1 << 20) as u32, r.next_u64() as u32][r.below(4) as usize];
                c.cfg_r_hai =
                    [0, 26214, r.below(1 << 24) as u32, r.next_u64() as u32][r.below(4) as usize];
            }
            1 => c.cfg_f = [0, 1, 2, 5, 5, 8, 255][r.below(7) as usize],
            2 => c.cfg_g_shift = [8, 8, 0, 1, 4, 10, 15][r.below(7) as usize],
            3 => {
                c.cfg_alpha_init = [1024, 1024, 0, 2047, r.below(2048) as u16][r.below(5) as usize]
            }
            _ => {
                c.cfg_r_min =
                    [0, 524, r.below(1 << 16) as u32, r.next_u64() as u32][r.below(4) as usize]
            }
        }
    }

    /// Closes QP q's epoch into the bounds.
    fn close_epoch(&mut self, q: usize) {
        self.inc_bound += self.ep_cycles[q] / self.cfg.cfg_t_inc.max(1) as u64;
        if self.cfg.cfg_b == 0 {
            self.inc_bound = u64::MAX / 4;
        } else {
            self.inc_bound += self.ep_bytes[q] / self.cfg.cfg_b as u64;
        }
        self.alpha_bound += self.ep_cycles[q] / self.cfg.cfg_k.max(1) as u64;
        self.ep_cycles[q] = 0;
        self.ep_bytes[q] = 0;
    }

    /// Bounds with every open epoch closed (without closing them).
    fn bounds_now(&self) -> (u64, u64) {
        let (mut inc, mut al) = (self.inc_bound, self.alpha_bound);
        for q in 0..QPS {
            inc = inc.saturating_add(self.ep_cycles[q] / self.cfg.cfg_t_inc.max(1) as u64);
            if self.cfg.cfg_b == 0 {
                inc = u64::MAX / 4;
            } else {
                inc = inc.saturating_add(self.ep_bytes[q] / self.cfg.cfg_b as u64);
            }
            al += self.ep_cycles[q] / self.cfg.cfg_k.max(1) as u64;
        }
        (inc, al)
    }

    fn check(&mut self, cycle: u64, o: &DcqcnOut) {
        let Some(i) = self.prev_in else {
            assert_eq!(*o, DcqcnOut::default(), "outputs out of reset");
            return;
        };
        if i.cfg_mode != 0 {
            self.check_modes(cycle, &i, o);
            return;
        }
        let p = self.prev_out;
        let en = |q: usize| i.cc_en >> q & 1 != 0;
        let cut = i.cnp_valid && en(i.cnp_qp as usize);
        let d = |a: u32, b: u32| b.wrapping_sub(a);
        let (d_fr, d_ai, d_hai, d_alpha) = (
            d(p.cnt_fr, o.cnt_fr),
            d(p.cnt_ai, o.cnt_ai),
            d(p.cnt_hai, o.cnt_hai),
            d(p.cnt_alpha, o.cnt_alpha),
        );
        assert_eq!(
            d(p.cnt_cnp, o.cnt_cnp),
            i.cnp_valid as u32,
            "cycle {cycle}: cnt_cnp"
        );
        assert_eq!(
            d(p.cnt_cut, o.cnt_cut),
            cut as u32,
            "cycle {cycle}: cnt_cut"
        );
        assert!(
            d_fr + d_ai + d_hai <= 1 && d_alpha <= 1,
            "cycle {cycle}: counters jumped"
        );
        if cut {
            assert_eq!(
                d_fr + d_ai + d_hai + d_alpha,
                0,
                "cycle {cycle}: event served beside a cut"
            );
        }
        let g = i.cfg_g_shift as u32 & 15;
        let r_max = i.cfg_r_max as i128;
        let mut changed = Vec::new();
        for q in 0..QPS {
            let (a, b) = (st(&p, q), st(o, q));
            if !en(q) {
                let init = i.cfg_alpha_init as i128 & 0x7FF;
                let want = St {
                    rc: r_max,
                    rt: r_max,
                    alpha: init,
                };
                assert_eq!(
                    b, want,
                    "cycle {cycle}: disabled QP {q} not at its initial state"
                );
                self.span[q] = Span {
                    lo: init << 10,
                    hi: init << 10,
                };
            } else if cut && q == i.cnp_qp as usize {
                let r_min = i.cfg_r_min as i128;
                let sp = self.span[q];
                assert_eq!(b.rt, a.rc, "cycle {cycle}: cut of QP {q}: rt := rc");
                let Some(hit) = cut_solutions(sp, a.rc, r_min, b.rc) else {
                    panic!(
                        "cycle {cycle}: cut of QP {q} from {a:?} to rc {}: no alpha in {sp:?} \
                         gives it (max(r_min {r_min}, rc - (rc * A >> 21)))",
                        b.rc
                    );
                };
                self.span[q] = Span {
                    lo: cnp_alpha(hit.lo, g),
                    hi: cnp_alpha(hit.hi, g),
                };
                self.cuts += 1;
                self.to_rmin += (b.rc == r_min) as u64;
                if b.rc > r_min {
                    self.free_cuts += 1;
                    self.exact_cuts += (sp.lo == sp.hi) as u64;
                }
            } else if a != b {
                changed.push((q, a, b));
            }
        }
        assert!(
            changed.len() <= 1,
            "cycle {cycle}: more than one QP changed by the shared datapath: {changed:?}"
        );
        let Some(&(q, a, b)) = changed.first() else {
            if d_alpha == 1 {
                // A decay nobody can see (alpha stayed in its Q10 bucket,
                // no rate moved): any enabled QP may have had it.
                for q in (0..QPS).filter(|&q| en(q)) {
                    self.span[q].lo = keep(self.span[q].lo, g);
                }
            }
            self.narrow(cycle, o);
            return;
        };
        let inc = d_fr + d_ai + d_hai == 1;
        assert!(
            inc || d_alpha == 1,
            "cycle {cycle}: QP {q} changed {a:?} -> {b:?} with no event counted"
        );
        if d_alpha == 1 {
            // The QP that changed is the one served: it decayed.
            let sp = &mut self.span[q];
            (sp.lo, sp.hi) = (keep(sp.lo, g), keep(sp.hi, g));
            self.steps_seen[3] += 1;
        } else {
            assert_eq!(
                b.alpha, a.alpha,
                "cycle {cycle}: QP {q} alpha moved without an event"
            );
        }
        self.narrow(cycle, o);
        if !inc {
            assert_eq!(
                (b.rc, b.rt),
                (a.rc, a.rt),
                "cycle {cycle}: QP {q} rates without an event"
            );
            return;
        }
        // Upper bounds of the QP's stage counters: no more timer events
        // than periods and no more byte events than B's in its epoch.
        let t_ub = (self.ep_cycles[q] / self.cfg.cfg_t_inc.max(1) as u64).min(255);
        let bc_ub = match self.cfg.cfg_b {
            0 => 255,
            b => (self.ep_bytes[q] / b as u64).min(255),
        };
        let f = i.cfg_f as u64;
        if d_fr == 1 {
            assert_eq!(b.rt, a.rt, "cycle {cycle}: QP {q} fast recovery moved rt");
            self.steps_seen[0] += 1;
        } else if d_ai == 1 {
            assert_eq!(
                b.rt,
                (a.rt + i.cfg_r_ai as i128).min(r_max),
                "cycle {cycle}: QP {q} AI"
            );
            assert!(
                t_ub.max(bc_ub) >= f,
                "cycle {cycle}: QP {q} AI with T <= {t_ub}, BC <= {bc_ub}, F {f}"
            );
            self.steps_seen[1] += 1;
        } else {
            let hai = i.cfg_r_hai as i128;
            let lo_ub = t_ub.min(bc_ub);
            assert!(
                lo_ub > f,
                "cycle {cycle}: QP {q} HAI with T <= {t_ub}, BC <= {bc_ub}, F {f}"
            );
            let ok = (1..=(lo_ub - f) as i128).any(|k| b.rt == (a.rt + hai * k).min(r_max));
            assert!(
                ok,
                "cycle {cycle}: QP {q} HAI {a:?} -> {b:?}, r_hai {hai}, at most {} x",
                lo_ub - f
            );
            self.steps_seen[2] += 1;
        }
        assert_eq!(
            b.rc,
            (b.rt + a.rc) >> 1,
            "cycle {cycle}: QP {q} rc after an increase"
        );
        self.to_rmax += (b.rt == r_max) as u64;
    }

    /// The checks every mode obeys (see the top of the file).
    fn check_modes(&mut self, cycle: u64, i: &DcqcnIn, o: &DcqcnOut) {
        let p = self.prev_out;
        let en = |q: usize| i.cc_en >> q & 1 != 0;
        let d = |a: u32, b: u32| b.wrapping_sub(a);
        let (d_cut, d_inc, d_alpha) = (
            d(p.cnt_cut, o.cnt_cut),
            d(p.cnt_fr, o.cnt_fr) + d(p.cnt_ai, o.cnt_ai) + d(p.cnt_hai, o.cnt_hai),
            d(p.cnt_alpha, o.cnt_alpha),
        );
        assert_eq!(
            d(p.cnt_cnp, o.cnt_cnp),
            i.cnp_valid as u32,
            "cycle {cycle}: cnt_cnp"
        );
        let cnp_en = i.cnp_valid && en(i.cnp_qp as usize);
        assert!(
            d_cut <= 1 && d_inc <= 1 && d_alpha <= 1 && d_cut + d_inc + d_alpha <= 2,
            "cycle {cycle}: counters jumped"
        );
        if d_cut == 1 {
            assert_eq!(
                d_inc + d_alpha,
                0,
                "cycle {cycle}: event served beside a cut"
            );
        }
        if i.cfg_mode & MODE_MON_CUT == 0 {
            assert_eq!(d_cut, cnp_en as u32, "cycle {cycle}: immediate cut");
        }
        let r_max = i.cfg_r_max as i128;
        let init = St {
            rc: r_max,
            rt: r_max,
            alpha: i.cfg_alpha_init as i128 & 0x7FF,
        };
        let mut moved = Vec::new();
        for q in 0..QPS {
            let (a, b) = (st(&p, q), st(o, q));
            if !en(q) {
                assert_eq!(
                    b, init,
                    "cycle {cycle}: disabled QP {q} not at its initial state"
                );
            } else if a != b {
                // FIRST_CNP: a QP before its first CNP is held at its
                // initial state, and a released one returns to it.
                if i.cfg_mode & MODE_FIRST_CNP != 0 && b == init {
                    self.mode_releases += (a.rt == r_max) as u64;
                    continue;
                }
                moved.push((q, a, b));
            }
        }
        assert!(
            moved.len() <= 1,
            "cycle {cycle}: more than one QP changed by the shared datapath: {moved:?}"
        );
        let Some(&(q, a, b)) = moved.first() else {
            return;
        };
        assert!(
            d_cut + d_inc + d_alpha > 0,
            "cycle {cycle}: QP {q} changed {a:?} -> {b:?} with no event counted"
        );
        if d_cut == 1 {
            let r_min = i.cfg_r_min as i128;
            assert!(
                b.rc <= a.rc.max(r_min) && b.rc >= r_min.min(a.rc),
                "cycle {cycle}: cut of QP {q} {a:?} -> {b:?}"
            );
            assert!(
                b.rt == a.rt || b.rt == a.rc,
                "cycle {cycle}: cut of QP {q}: rt neither kept nor rc"
            );
            self.mode_cuts += 1;
        } else if d_inc == 1 {
            assert_eq!(
                b.rc,
                (b.rt + a.rc) >> 1,
                "cycle {cycle}: QP {q} rc after an increase"
            );
            self.mode_incs += 1;
        } else {
            assert_eq!(
                (b.rc, b.rt),
                (a.rc, a.rt),
                "cycle {cycle}: QP {q} rates moved by an alpha update"
            );
        }
    }

    /// Cuts every QP's alpha interval down to what its port shows (the
    /// internal value's top 11 bits); each must keep a value.
    fn narrow(&mut self, cycle: u64, o: &DcqcnOut) {
        for q in 0..QPS {
            let v = alpha(&o.alpha, q) << 10;
            let sp = &mut self.span[q];
            let cut = Span {
                lo: sp.lo.max(v),
                hi: sp.hi.min(v + 1023),
            };
            assert!(
                cut.lo <= cut.hi,
                "cycle {cycle}: QP {q} alpha port {} (Q10) outside the possible {sp:?} (Q20)",
                v >> 10
            );
            *sp = cut;
        }
    }

    /// Accounts cycle n's inputs into the epochs.
    fn account(&mut self, i: &DcqcnIn) {
        for q in 0..QPS {
            let en = i.cc_en >> q & 1 != 0;
            let cut = i.cnp_valid && i.cnp_qp as usize == q && en;
            if !en || cut {
                self.close_epoch(q);
                continue;
            }
            self.ep_cycles[q] += 1;
            if i.tx_valid && i.tx_qp as usize == q {
                self.ep_bytes[q] += i.tx_len as u64;
            }
        }
    }
}

impl Env for DcqcnEnv {
    type In = DcqcnIn;
    type Out = DcqcnOut;

    fn step(&mut self, cycle: u64, o: &DcqcnOut) -> DcqcnIn {
        self.check(cycle, o);
        let (mut inc_bound, mut alpha_bound) = self.bounds_now();
        if self.cfg.cfg_mode != 0 {
            // The bounds are the paper's timers and byte counter.
            (inc_bound, alpha_bound) = (u64::MAX, u64::MAX);
        }
        let incs = (o.cnt_fr as u64) + (o.cnt_ai as u64) + (o.cnt_hai as u64);
        assert!(
            incs <= inc_bound,
            "cycle {cycle}: {incs} increase events, timers and bytes allow {inc_bound}"
        );
        assert!(
            o.cnt_alpha as u64 <= alpha_bound,
            "cycle {cycle}: {} alpha events, the timers allow {alpha_bound}",
            o.cnt_alpha
        );
        let traffic = cycle < CYCLES;
        let mut i = self.cfg;
        if traffic {
            if self.en_churn && self.rng.percent(1) {
                i.cc_en ^= 1 << self.rng.below(QPS as u64);
            }
            if self.rng.percent(self.cfg_churn) {
                let f = self.rng.below(5);
                self.redraw(f);
                let cc = i.cc_en;
                i = self.cfg;
                i.cc_en = cc;
            }
            self.cfg.cc_en = i.cc_en;
            i.cnp_valid = self.rng.percent(self.cnp_pct);
            i.tx_valid = self.rng.percent(self.tx_pct);
        }
        // QPs of the hot set for CNPs, any QP for frames; junk while not
        // valid.
        i.cnp_qp = if i.cnp_valid {
            self.hot[self.rng.below(self.hot.len() as u64) as usize]
        } else {
            self.rng.below(QPS as u64) as u8
        };
        i.tx_qp = self.rng.below(QPS as u64) as u8;
        i.tx_len = match self.rng.below(4) {
            0 => self.rng.below(1 << 14) as u16,
            1 => 16383,
            _ => self.rng.below(1600) as u16,
        };
        self.account(&i);
        self.prev_in = Some(i);
        self.prev_out = *o;
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn dcqcn_random_lockstep() {
    let (mut total, mut cuts, mut rmin, mut rmax) = (0u64, 0u64, 0u64, 0u64);
    let (mut free, mut exact) = (0u64, 0u64);
    let mut steps = [0u64; 4];
    let mut drained = 0u64;
    let (mut mode_cases, mut mode_cycles) = (0u64, 0u64);
    let (mut mode_cuts, mut mode_incs, mut mode_releases) = (0u64, 0u64, 0u64);
    let mut mode_bits = [0u64; 6];
    // The share of cuts whose alpha is known exactly depends on the
    // seed's draws (42 to 89 % over the seeds tried): cases go on until
    // it is half.
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = DcqcnEnv::new(seed);
        let mut model = Dcqcn::new();
        let fin = lockstep::run(&mut model, &mut RtlDcqcn::new(), &mut env, CYCLES + DRAIN)
            .unwrap_or_else(|d| panic!("{d}"));
        total += fin.cycles;
        let m = env.cfg.cfg_mode;
        if m != 0 {
            mode_cases += 1;
            mode_cycles += fin.cycles;
            mode_cuts += env.mode_cuts;
            mode_incs += env.mode_incs;
            mode_releases += env.mode_releases;
            for (k, n) in mode_bits.iter_mut().enumerate() {
                *n += (m >> k & 1) as u64;
            }
        }
        cuts += env.cuts;
        free += env.free_cuts;
        exact += env.exact_cuts;
        rmin += env.to_rmin;
        rmax += env.to_rmax;
        for (s, e) in steps.iter_mut().zip(env.steps_seen) {
            *s += e;
        }
        // Byte-only cases: the drain serves each QP's last-epoch byte
        // events, at least one per QP per QPS cycles.
        if env.cfg.cfg_t_inc == NEVER && env.cfg.cfg_b != 0 && m == 0 {
            let o = env.prev_out;
            let incs = (o.cnt_fr as u64) + (o.cnt_ai as u64) + (o.cnt_hai as u64);
            let floor: u64 = (0..QPS)
                .map(|q| (env.ep_bytes[q] / env.cfg.cfg_b as u64).min(DRAIN / QPS as u64 - 1))
                .sum();
            assert!(
                incs >= floor,
                "after the drain only {incs} increase events, the last epochs hold {floor}"
            );
            drained += floor;
        }
        // The floors below, met so far?
        exact * 2 >= free
            && cuts >= 10_000
            && rmin >= 100
            && steps.iter().all(|&n| n >= 1_000)
            && rmax >= 1_000
            && drained >= 100
            && mode_cases >= 16
            && mode_bits.iter().all(|&n| n >= 6)
            && mode_cuts >= 1_000
            && mode_incs >= 1_000
    });
    println!(
        "dcqcn: {} cases, {total} cycles, {cuts} cuts ({rmin} to r_min; of the {free} others \
         {exact} with alpha known exactly), visible steps FR {} AI {} HAI {} alpha {} ({rmax} \
         at r_max), {drained} byte events checked after drains",
        run.cases, steps[0], steps[1], steps[2], steps[3]
    );
    println!(
        "dcqcn modes: {mode_cases} cases ({mode_cycles} cycles; cases per bit {mode_bits:?}), \
         {mode_cuts} cuts, {mode_incs} increases, {mode_releases} releases seen"
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} cycles");
        assert!(cuts >= 10_000, "few cuts ({cuts})");
        assert!(
            exact * 2 >= free,
            "cuts mostly checked against an alpha range ({exact} of {free} exact)"
        );
        assert!(rmin >= 100, "r_min barely reached ({rmin})");
        for (k, n) in ["FR", "AI", "HAI", "alpha"].iter().zip(steps) {
            assert!(n >= 1_000, "{k} steps barely exercised ({n})");
        }
        assert!(rmax >= 1_000, "r_max cap barely exercised ({rmax})");
        assert!(drained >= 100, "drain check barely exercised ({drained})");
        assert!(mode_cases >= 16, "few mode cases ({mode_cases})");
        assert!(
            mode_bits.iter().all(|&n| n >= 6),
            "mode bits barely drawn ({mode_bits:?})"
        );
        assert!(
            mode_cuts >= 1_000 && mode_incs >= 1_000,
            "mode cases barely moved ({mode_cuts} cuts, {mode_incs} increases)"
        );
    }
}
