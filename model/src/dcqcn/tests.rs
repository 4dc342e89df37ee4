//! Directed tests of the `dcqcn` model.

use super::*;

/// Never reached in these tests (2^24 - 1 cycles).
const NEVER: u32 = 0xFF_FFFF;

/// Drives one `Dcqcn` through its ports. Events are made on demand: an
/// increase-timer event by a period of 1 for one cycle, an alpha event
/// likewise with `cfg_k`, a byte event by a frame of exactly `cfg_b`
/// bytes; each is followed by an idle cycle in which the datapath
/// serves it (nothing else is pending).
struct H {
    d: Dcqcn,
    i: DcqcnIn,
    o: DcqcnOut,
}

impl H {
    /// `cc_en` is applied after one cycle with every QP disabled, which
    /// loads the initial values (reset leaves zeros).
    fn new(cfg: DcqcnIn, cc_en: u16) -> H {
        let mut d = Dcqcn::new();
        d.reset();
        let mut i = cfg;
        i.cc_en = 0;
        let o = d.tick(&i);
        i.cc_en = cc_en;
        H { d, i, o }
    }
    fn tick(&mut self) -> DcqcnOut {
        self.o = self.d.tick(&self.i);
        self.i.cnp_valid = false;
        self.i.tx_valid = false;
        self.o
    }
    fn cnp(&mut self, q: u8) {
        self.i.cnp_valid = true;
        self.i.cnp_qp = q;
        self.tick();
        self.tick();
    }
    fn t_event(&mut self) {
        let keep = self.i.cfg_t_inc;
        self.i.cfg_t_inc = 1;
        self.tick();
        self.i.cfg_t_inc = keep;
        self.tick();
    }
    fn a_event(&mut self) {
        let keep = self.i.cfg_k;
        self.i.cfg_k = 1;
        self.tick();
        self.i.cfg_k = keep;
        self.tick();
    }
    fn b_event(&mut self, q: u8) {
        self.i.tx_valid = true;
        self.i.tx_qp = q;
        self.i.tx_len = self.i.cfg_b as u16;
        self.tick();
        self.tick();
    }
    fn rc(&self, q: usize) -> u32 {
        rate_of(&self.o.rc, q)
    }
    fn rt(&self, q: usize) -> u32 {
        rate_of(&self.o.rt, q)
    }
    /// The port's alpha (Q10).
    fn alpha(&self, q: usize) -> u16 {
        alpha_of(&self.o.alpha, q)
    }
    /// The internal alpha register (Q20).
    fn a20(&self, q: usize) -> u32 {
        self.d.alpha_q[q]
    }
    fn rates(&self, q: usize) -> (u32, u32) {
        (self.rc(q), self.rt(q))
    }
    fn counts(&self) -> [u32; 6] {
        let o = &self.o;
        [
            o.cnt_cnp,
            o.cnt_cut,
            o.cnt_fr,
            o.cnt_ai,
            o.cnt_hai,
            o.cnt_alpha,
        ]
    }
}

/// The defaults of docs/rx_cc.md at 250 MHz / 100 Gb/s, timers off.
fn defaults() -> DcqcnIn {
    DcqcnIn {
        cfg_g_shift: 8,
        cfg_k: NEVER,
        cfg_t_inc: NEVER,
        cfg_b: 1000,
        cfg_f: 5,
        cfg_r_ai: 2621,
        cfg_r_hai: 26214,
        cfg_r_min: 524,
        cfg_r_max: 52_428_800,
        cfg_alpha_init: 1024,
        ..DcqcnIn::default()
    }
}

/// Small rates, so every step can be worked out by hand.
fn small() -> DcqcnIn {
    DcqcnIn {
        cfg_f: 2,
        cfg_r_ai: 10,
        cfg_r_hai: 100,
        cfg_r_min: 50,
        cfg_r_max: 1000,
        ..defaults()
    }
}

#[test]
fn first_cut_halves_line_rate() {
    let mut h = H::new(defaults(), 1);
    assert_eq!(h.rates(0), (52_428_800, 52_428_800));
    assert_eq!(h.alpha(0), 1024);
    // CNP at n, cut visible at n+1: 52,428,800 * 1024 >> 11 = 26,214,400.
    h.i.cnp_valid = true;
    h.i.cnp_qp = 0;
    h.tick();
    assert_eq!(h.rates(0), (26_214_400, 52_428_800));
    // alpha 2^20 - 2^12 + 2^12 (2^20 / 256 is exact).
    assert_eq!((h.a20(0), h.alpha(0)), (1 << 20, 1024));
    assert_eq!(h.counts(), [1, 1, 0, 0, 0, 0]);
    // Other QPs (disabled) hold R_MAX.
    assert_eq!(h.rates(1), (52_428_800, 52_428_800));
}

#[test]
fn hand_worked_fr_ai_hai_alpha_rmin() {
    // F = 2, R_AI = 10, R_HAI = 100, R_MIN = 50, R_MAX = 1000.
    let mut h = H::new(small(), 1);
    h.cnp(0);
    assert_eq!(h.rates(0), (500, 1000));
    h.cnp(0);
    assert_eq!(h.rates(0), (250, 500));
    // (event, T, BC) -> (rc, rt), worked out from the formulas.
    h.t_event(); // T1 B0: FR, rc (500 + 250) / 2
    assert_eq!(h.rates(0), (375, 500));
    h.b_event(0); // T1 B1: FR
    assert_eq!(h.rates(0), (437, 500));
    h.t_event(); // T2 B1: max = F -> AI
    assert_eq!(h.rates(0), (473, 510));
    h.b_event(0); // T2 B2: AI
    assert_eq!(h.rates(0), (496, 520));
    h.t_event(); // T3 B2: min = F -> AI
    assert_eq!(h.rates(0), (513, 530));
    h.b_event(0); // T3 B3: HAI x1
    assert_eq!(h.rates(0), (571, 630));
    h.t_event(); // T4 B3: HAI x1
    assert_eq!(h.rates(0), (650, 730));
    h.b_event(0); // T4 B4: HAI x2
    assert_eq!(h.rates(0), (790, 930));
    h.t_event(); // T5 B4: HAI x2, capped at R_MAX
    assert_eq!(h.rates(0), (895, 1000));
    h.t_event();
    assert_eq!(h.rates(0), (947, 1000));
    assert_eq!(h.counts(), [2, 2, 2, 3, 5, 0]);
    // Alpha decay (Q20): 1,048,576 - 4096 = 1,044,480 (port 1020);
    // 1,044,480 / 256 = 4080 exactly: 1,040,400 (port 1016, as
    // 1016 * 1024 = 1,040,384).
    h.a_event();
    assert_eq!((h.a20(0), h.alpha(0)), (1_044_480, 1020));
    h.a_event();
    assert_eq!((h.a20(0), h.alpha(0)), (1_040_400, 1016));
    assert_eq!(h.counts()[5], 2);
    // Cut: 947 * 1,040,400 = 985,258,800, / 2^21 = 469.8 -> 469:
    // rc 478. Alpha: 1,040,400 / 256 = 4064.06, ceil 4065:
    // 1,036,335 + 4096 = 1,040,431.
    h.cnp(0);
    assert_eq!(h.rates(0), (478, 947));
    assert_eq!((h.a20(0), h.alpha(0)), (1_040_431, 1016));
    // 478 * 1,040,431 / 2^21 = 237.1 -> 237, rc 241; alpha
    // 1,040,431 - 4065 + 4096 = 1,040,462. 241 * 1,040,462 / 2^21 =
    // 119.6 -> 119, rc 122; alpha + 31 again. 122 * 1,040,493 / 2^21
    // = 60.5 -> 60, rc 62. 62 * 1,040,524 / 2^21 = 30.8 -> 30: 32,
    // below R_MIN: 50. Each CNP adds 4096 - 4065 = 31 to alpha.
    h.cnp(0);
    assert_eq!((h.rates(0), h.a20(0)), ((241, 478), 1_040_462));
    h.cnp(0);
    assert_eq!((h.rates(0), h.a20(0)), ((122, 241), 1_040_493));
    h.cnp(0);
    assert_eq!((h.rates(0), h.a20(0)), ((62, 122), 1_040_524));
    h.cnp(0);
    assert_eq!((h.rates(0), h.a20(0)), ((50, 62), 1_040_555));
    assert_eq!(h.alpha(0), 1016);
    // The CNP reset the stages: the next event is fast recovery,
    // (62 + 50) / 2.
    h.b_event(0);
    assert_eq!(h.rates(0), (56, 62));
    // Fixed point never quite reaches R_MAX: (R + (R - 1)) >> 1 = R - 1.
    for _ in 0..200 {
        h.t_event();
        h.b_event(0);
    }
    assert_eq!(h.rates(0), (999, 1000));
}

#[test]
fn alpha_decays_to_zero_rounding_toward_zero() {
    // alpha_init 1 (Q10) = 1024 in Q20; g = 1/256. a - ceil(a / 256)
    // takes 4 per step while a > 768 (64 steps to 768), 3 while a >
    // 512 (768 - 3 * 86 = 510: 86 steps), 2 while a > 256 (510 - 2 *
    // 127 = 256: 127 steps), then 1 per step: 256 more. 533 in all,
    // and 0 stays 0. (Rounding the decay toward zero is what lets it
    // reach 0; a - (a >> 8) would stop at 255.)
    let mut h = H::new(
        DcqcnIn {
            cfg_alpha_init: 1,
            ..defaults()
        },
        1,
    );
    assert_eq!((h.a20(0), h.alpha(0)), (1024, 1));
    h.a_event();
    assert_eq!((h.a20(0), h.alpha(0)), (1020, 0));
    let mut seen = vec![1020];
    for _ in 1..533 {
        h.a_event();
        seen.push(h.a20(0));
    }
    assert_eq!(
        (seen[63], seen[63 + 86], seen[63 + 86 + 127]),
        (768, 510, 256)
    );
    assert_eq!(seen[531..], [1, 0]);
    for _ in 0..5 {
        h.a_event();
    }
    assert_eq!(h.a20(0), 0);
    assert_eq!(h.counts()[5], 538);
    // g = 1/2 from 1.0: 2^20, 2^19, ..., 2^0 after 20 decays, then
    // 1 - ceil(1 / 2) = 0. The port (>> 10) shows 1 after 10 decays,
    // 0 after 11.
    let mut h = H::new(
        DcqcnIn {
            cfg_g_shift: 1,
            ..defaults()
        },
        1,
    );
    for n in 1..=21 {
        h.a_event();
        let want = if n <= 20 { 1 << (20 - n) } else { 0 };
        assert_eq!((h.a20(0), h.alpha(0)), (want, (want >> 10) as u16));
    }
    // g = 1/2 CNP: 0 - 0 + 2^19 (port 512); again: 2^19 - 2^18 + 2^19.
    h.cnp(0);
    assert_eq!((h.a20(0), h.alpha(0)), (1 << 19, 512));
    h.cnp(0);
    assert_eq!((h.a20(0), h.alpha(0)), (3 << 18, 768));
    // g = 0 (g = 1): the CNP sets alpha to exactly 1.0 from anything ...
    h.i.cfg_g_shift = 0;
    h.cnp(0);
    assert_eq!(h.a20(0), 1 << 20);
    // ... and the decay to 0.
    h.a_event();
    assert_eq!(h.a20(0), 0);
}

#[test]
fn alpha_init_above_one_stays_in_21_bits() {
    // alpha_init 2047 (Q10) = 2,096,128 (Q20), the largest. The cut
    // takes rc * 2,096,128 >> 21: 1000 * 2,096,128 = 2,096,128,000,
    // / 2,097,152 = 999.5 -> 999: rc 1 -> R_MIN 50. Alpha: 2,096,128 /
    // 256 = 8188 exactly: 2,087,940 + 4096 = 2,092,036 (port 2043):
    // below the old value, toward 1.0.
    let mut h = H::new(
        DcqcnIn {
            cfg_alpha_init: 2047,
            ..small()
        },
        1,
    );
    assert_eq!((h.a20(0), h.alpha(0)), (2_096_128, 2047));
    h.cnp(0);
    assert_eq!(h.rates(0), (50, 1000));
    assert_eq!((h.a20(0), h.alpha(0)), (2_092_036, 2043));
}

#[test]
fn disabled_qp_holds_config_cnp_only_counted() {
    let mut h = H::new(small(), 0b10);
    h.cnp(0);
    assert_eq!(h.counts()[..2], [1, 0]);
    assert_eq!((h.rates(0), h.alpha(0)), ((1000, 1000), 1024));
    h.cnp(1);
    assert_eq!(h.counts()[..2], [2, 1]);
    assert_eq!(h.rates(1), (500, 1000));
    // Config changes show through on disabled QPs the next cycle.
    h.i.cfg_r_max = 777;
    h.i.cfg_alpha_init = 300;
    h.tick();
    assert_eq!((h.rates(0), h.alpha(0)), ((777, 777), 300));
    // Disabling QP 1 drops its state.
    h.i.cc_en = 0;
    h.tick();
    assert_eq!((h.rates(1), h.alpha(1)), ((777, 777), 300));
    // Its timers and byte counter were cleared: re-enabled, a tx of
    // B - 1 bytes gives no event.
    h.i.cc_en = 0b10;
    h.i.cfg_b = 100;
    h.cnp(1);
    h.i.tx_valid = true;
    h.i.tx_qp = 1;
    h.i.tx_len = 99;
    h.tick();
    h.tick();
    h.tick();
    assert_eq!(h.counts()[2..5], [0, 0, 0]);
    // One more byte: an event.
    h.i.tx_valid = true;
    h.i.tx_qp = 1;
    h.i.tx_len = 1;
    h.tick();
    h.tick();
    assert_eq!(h.counts()[2..5], [1, 0, 0]);
}

#[test]
fn round_robin_and_cnp_priority() {
    // QPs 0, 1 and 5 cut once (rc < rt, so any step moves rc).
    let mut h = H::new(small(), 0b10_0011);
    h.cnp(0);
    h.cnp(1);
    h.cnp(5);
    // All three get a timer event in the same cycle.
    h.i.cfg_t_inc = 1;
    h.tick();
    h.i.cfg_t_inc = NEVER;
    // Served one per cycle, in QP order from the pointer (0): 0, 1...
    h.tick();
    assert_eq!((h.rc(0), h.rc(1), h.rc(5)), (750, 500, 500));
    // ... but a CNP (QP 0) takes the datapath: nobody else served.
    h.i.cnp_valid = true;
    h.i.cnp_qp = 0;
    h.tick();
    assert_eq!((h.rc(0), h.rc(1), h.rc(5)), (375, 500, 500));
    h.tick();
    assert_eq!((h.rc(1), h.rc(5)), (750, 500));
    h.tick();
    assert_eq!(h.rc(5), 750);
    assert_eq!(h.counts()[2], 3);
    h.tick();
    assert_eq!(h.counts()[2], 3);
}

#[test]
fn timer_and_byte_events_are_two_steps_timer_first() {
    let mut h = H::new(small(), 1);
    h.cnp(0);
    h.cnp(0);
    // (250, 500). Both a timer and a byte event in the same cycle.
    h.i.cfg_t_inc = 1;
    h.i.tx_valid = true;
    h.i.tx_qp = 0;
    h.i.tx_len = 1000;
    h.tick();
    h.i.cfg_t_inc = NEVER;
    h.tick();
    assert_eq!(h.rates(0), (375, 500));
    h.tick();
    assert_eq!(h.rates(0), (437, 500));
    // F = 2: with T = BC = 1, one event more is AI; a combined event
    // (T and BC in one step) would have left (437, 500) after one step.
    h.t_event();
    assert_eq!(h.rates(0), (473, 510));
    assert_eq!(h.counts()[2..5], [2, 1, 0]);
}

#[test]
fn cnp_clears_pending_and_ignores_its_cycle_bytes() {
    let mut h = H::new(small(), 1);
    h.cnp(0);
    // A timer event pending ...
    h.i.cfg_t_inc = 1;
    h.tick();
    h.i.cfg_t_inc = NEVER;
    // ... and a CNP with a full B of bytes in the cycle it would be
    // served: both dropped.
    h.i.cnp_valid = true;
    h.i.cnp_qp = 0;
    h.i.tx_valid = true;
    h.i.tx_qp = 0;
    h.i.tx_len = 1000;
    h.tick();
    for _ in 0..5 {
        h.tick();
    }
    assert_eq!(h.rates(0), (250, 500));
    assert_eq!(h.counts()[2..5], [0, 0, 0]);
}

#[test]
fn expiry_waits_while_its_event_is_not_served() {
    // QP 1 has an increase period of 4 cycles; QP 0 gets a CNP every
    // cycle for 20 cycles, so QP 1 is not served: its first expiry is
    // flagged (at its 4th counted cycle), the second waits. After the
    // storm: served, the waiting expiry flags again at once and is
    // served the next cycle; then one every 4 cycles.
    let mut h = H::new(
        DcqcnIn {
            cfg_t_inc: 4,
            ..small()
        },
        0b11,
    );
    h.i.cfg_t_inc = NEVER;
    h.cnp(1);
    // Fresh start of QP 1's timer: a CNP clears it.
    h.i.cfg_t_inc = 4;
    for _ in 0..20 {
        h.i.cnp_valid = true;
        h.i.cnp_qp = 0;
        h.tick();
    }
    // QP 0's timer was cleared every cycle: nothing of it. Disabled
    // from now on, so that only QP 1's events count.
    h.i.cc_en = 0b10;
    let events = |h: &H| h.counts()[2..5].iter().sum::<u32>();
    assert_eq!(events(&h), 0);
    let mut seen = Vec::new();
    for _ in 0..12 {
        h.tick();
        seen.push(events(&h));
    }
    // Served at +1, +2, then +6, +10 (period 4 from the restart).
    assert_eq!(seen, vec![1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4]);
}

// ------------------------------------------------------------------
// Fixed point against a plain floating-point DCQCN
// ------------------------------------------------------------------

/// One DCQCN event, as the float model and the port-driven fixed-point
/// model both get it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ev {
    Cnp,
    Timer,
    Bytes,
    Alpha,
}

/// The paper's formulas in f64: rates in the same unit, alpha in
/// [0, 1], g = 2^-G, no rounding anywhere. T and BC are the same
/// integers as in the fixed-point path.
struct Float {
    rc: f64,
    rt: f64,
    alpha: f64,
    t: u32,
    bc: u32,
}

impl Float {
    fn apply(&mut self, ev: Ev, c: &DcqcnIn) {
        let g = 1.0 / (1u32 << c.cfg_g_shift) as f64;
        let f = c.cfg_f as u32;
        match ev {
            Ev::Cnp => {
                self.rt = self.rc;
                self.rc = (self.rc * (1.0 - self.alpha / 2.0)).max(c.cfg_r_min as f64);
                self.alpha = (1.0 - g) * self.alpha + g;
                self.t = 0;
                self.bc = 0;
            }
            Ev::Alpha => self.alpha *= 1.0 - g,
            Ev::Timer | Ev::Bytes => {
                if ev == Ev::Timer {
                    self.t = (self.t + 1).min(255);
                } else {
                    self.bc = (self.bc + 1).min(255);
                }
                let (hi, lo) = (self.t.max(self.bc), self.t.min(self.bc));
                let r_max = c.cfg_r_max as f64;
                if hi < f {
                } else if lo > f {
                    self.rt = (self.rt + c.cfg_r_hai as f64 * (lo - f) as f64).min(r_max);
                } else {
                    self.rt = (self.rt + c.cfg_r_ai as f64).min(r_max);
                }
                self.rc = (self.rt + self.rc) / 2.0;
            }
        }
    }
}

/// Worst-case distance between the fixed-point and the float state,
/// propagated event by event (in the fixed-point units: rate units,
/// alpha in 2^-20):
/// - alpha: `floor((1 - g) A)` is the exact `(1 - g) A` minus what the
///   ceiling adds, `lost = (-A mod 2^G) / 2^G` in [0, 1 - 2^-G];
///   `2^20 >> G` is exact (G <= 15); both updates shrink the old
///   difference by (1 - g). So `d = a - A` (float minus fixed) stays
///   in `[0, ea]` with `ea' = (1 - g) ea + lost`, and `ea <= (1 -
///   2^-G) / g = 2^G - 1`: at G = 8, 255 / 2^20 < 2^-12. The port (`A >> 10`) is then below
///   the float alpha in Q10 by less than 1 + 255/1024 LSB.
/// - CNP: `Rc - floor(Rc A / 2^21)` is `Rc (1 - A / 2^21) + [0, 1)`,
///   so `Rc' - rc'` = `(Rc - rc)(1 - A / 2^21) + rc (a - A) / 2^21 +
///   [0, 1)`; max(r_min) is 1-Lipschitz: `ec' = ec (1 - A / 2^21) + rc
///   ea / 2^21 + 1`, `et' = ec`. With `ea <= 255` the alpha term is at
///   most 1.2e-4 of the rate per CNP.
/// - increase: Rt gets the same integer increment in both (min(r_max)
///   1-Lipschitz): `et' = et`; `(Rt + Rc) >> 1` loses at most 1/2:
///   `ec' = (et + ec) / 2 + 1/2`.
///
/// Plus 1e-6 per step for f64 rounding (rates below 2^32, alpha below
/// 2^21: relative error 1e-16 per operation).
struct Bound {
    ec: f64,
    et: f64,
    ea: f64,
}

impl Bound {
    fn apply(&mut self, ev: Ev, c: &DcqcnIn, fixed_alpha: u32, float_rc: f64) {
        let g = 1.0 / (1u32 << c.cfg_g_shift) as f64;
        let m = 1u32 << c.cfg_g_shift;
        // What the ceiling adds to this very A, in 2^-20.
        let lost = ((m - fixed_alpha % m) % m) as f64 * g;
        match ev {
            Ev::Cnp => {
                let a = fixed_alpha as f64 / (1u64 << 21) as f64;
                let ec = self.ec * (1.0 - a) + float_rc * self.ea / (1u64 << 21) as f64 + 1.0;
                self.et = self.ec;
                self.ec = ec;
                self.ea = (1.0 - g) * self.ea + lost;
            }
            Ev::Alpha => self.ea = (1.0 - g) * self.ea + lost,
            Ev::Timer | Ev::Bytes => self.ec = (self.et + self.ec) / 2.0 + 0.5,
        }
        self.ec += 1e-6;
        self.et += 1e-6;
        self.ea += 1e-6;
    }
}

/// Largest differences seen on a trajectory.
#[derive(Debug, Default)]
struct Track {
    rc: f64,
    rt: f64,
    /// Float minus fixed alpha, in 2^-20 (never negative: asserted).
    alpha: f64,
    /// Float alpha in Q10 minus the port's alpha, in 2^-10.
    alpha_port: f64,
    rel_rc: f64,
    /// Largest propagated bound on Rc.
    bound_rc: f64,
}

/// Drives QP 0 of the fixed-point model (through its ports) and the
/// float model with `evs`, checks the propagated bound after every
/// event and returns the largest differences. With `shared_alpha` the
/// float model takes the fixed-point alpha at each event (so only the
/// rate arithmetic is compared; the alpha bound stays 0).
fn track(c: DcqcnIn, evs: &[Ev], shared_alpha: bool) -> (H, Float, Track) {
    const ONE: f64 = (1u32 << 20) as f64;
    let mut h = H::new(c, 1);
    let mut fl = Float {
        rc: c.cfg_r_max as f64,
        rt: c.cfg_r_max as f64,
        alpha: c.cfg_alpha_init as f64 / 1024.0,
        t: 0,
        bc: 0,
    };
    let mut b = Bound {
        ec: 0.0,
        et: 0.0,
        ea: 0.0,
    };
    let mut tr = Track::default();
    for (n, &ev) in evs.iter().enumerate() {
        if shared_alpha {
            fl.alpha = h.a20(0) as f64 / ONE;
        }
        b.apply(ev, &c, h.a20(0), fl.rc);
        if shared_alpha {
            b.ea = 0.0;
        }
        fl.apply(ev, &c);
        match ev {
            Ev::Cnp => h.cnp(0),
            Ev::Timer => h.t_event(),
            Ev::Bytes => h.b_event(0),
            Ev::Alpha => h.a_event(),
        }
        // The port shows the register's top 11 bits.
        assert_eq!(h.alpha(0) as u32, h.a20(0) >> 10);
        let drc = (h.rc(0) as f64 - fl.rc).abs();
        let drt = (h.rt(0) as f64 - fl.rt).abs();
        let (da, dp) = if shared_alpha {
            (0.0, 0.0)
        } else {
            (
                fl.alpha * ONE - h.a20(0) as f64,
                fl.alpha * 1024.0 - h.alpha(0) as f64,
            )
        };
        assert!(
            drc <= b.ec && drt <= b.et && (-1e-6..=b.ea).contains(&da),
            "event {n} ({ev:?}): fixed ({}, {}, {}) float ({}, {}, {}) differ by \
             ({drc}, {drt}, {da}), bound ({}, {}, {})",
            h.rc(0),
            h.rt(0),
            h.a20(0),
            fl.rc,
            fl.rt,
            fl.alpha * ONE,
            b.ec,
            b.et,
            b.ea
        );
        tr.rc = tr.rc.max(drc);
        tr.rt = tr.rt.max(drt);
        tr.alpha = tr.alpha.max(da);
        tr.alpha_port = tr.alpha_port.max(dp);
        tr.rel_rc = tr.rel_rc.max(drc / fl.rc);
        tr.bound_rc = tr.bound_rc.max(b.ec);
    }
    (h, fl, tr)
}

/// xorshift64*, enough for shuffling an event list.
fn next(s: &mut u64) -> u64 {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    s.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

/// 200 CNPs, 10^4 increase events (timer or byte at random) and 400
/// alpha decays, shuffled.
fn random_mix(seed: u64) -> Vec<Ev> {
    let mut evs = vec![Ev::Cnp; 200];
    evs.extend(std::iter::repeat_n(Ev::Alpha, 400));
    let mut s = seed;
    for _ in 0..10_000 {
        evs.push(if next(&mut s) & 1 == 0 {
            Ev::Timer
        } else {
            Ev::Bytes
        });
    }
    for k in (1..evs.len()).rev() {
        let j = (next(&mut s) % (k as u64 + 1)) as usize;
        evs.swap(k, j);
    }
    evs
}

#[test]
fn float_tracks_cnp_storm_then_recovery_to_line_rate() {
    // 40 CNPs back to back (alpha stays exactly 1: 2^20 - 2^12 + 2^12,
    // and (1 - g) + g), then timer and byte events alternating until
    // both are back at line rate.
    let c = defaults();
    let mut evs = vec![Ev::Cnp; 40];
    for k in 0..400 {
        evs.push(if k % 2 == 0 { Ev::Timer } else { Ev::Bytes });
    }
    let (h, fl, tr) = track(c, &evs, false);
    // Recovery: Rt at R_MAX in both, Rc one unit below it in fixed
    // point ((R + R - 1) >> 1 = R - 1), within 1 of it in float.
    assert_eq!(h.rates(0), (52_428_799, 52_428_800));
    assert!(fl.rt == 52_428_800.0 && fl.rc > 52_428_799.0);
    // With alpha exact, the cut and halving truncations stay below
    // 2 units (the propagated bound allows a little more).
    assert_eq!(tr.alpha, 0.0);
    assert!(tr.rc < 2.0 && tr.rt < 2.0, "{tr:?}");
    println!("storm and recovery: largest differences {tr:?}");
}

#[test]
fn float_rates_track_within_units_given_the_same_alpha() {
    // The rate arithmetic alone: the float model takes the fixed-point
    // alpha before each event. `track` asserts the propagated bound
    // (with ea = 0 it grows by about one unit per CNP in the worst
    // case: each cut adds < 1, increases add 1/2 and average with Rt);
    // the stated bound for these trajectories is 8 units, i.e. a
    // relative error below 1e-5 at rates above 1 Gb/s.
    for seed in [0x9E37_79B9_7F4A_7C15u64, 1, 0xDEAD_BEEF] {
        let (_, _, tr) = track(defaults(), &random_mix(seed), true);
        println!("random mix, same alpha: largest differences {tr:?}");
        assert!(tr.rc <= 8.0 && tr.rt <= 8.0, "{tr:?}");
    }
}

/// The stated bounds of the whole path (alpha included) on the long
/// trajectories, beside the propagated one `track` asserts at every
/// event: alpha (Q20) at most 2^G - 1 = 255 / 2^20 below the float,
/// never above; the port's Q10 alpha less than 1 + 255/1024 LSB below
/// the float one; Rc within 0.1 % of the float rate.
fn assert_stated_bounds(tr: &Track) {
    assert!(tr.alpha <= 255.0 + 1e-3, "{tr:?}");
    assert!(tr.alpha_port < 1.0 + 255.0 / 1024.0, "{tr:?}");
    assert!(tr.rel_rc < 1e-3, "{tr:?}");
}

#[test]
fn float_tracks_random_mix_within_the_propagated_bound() {
    // The whole fixed-point path against the float one, alpha included.
    // Q20 alpha rounded toward zero stays below the float one by less
    // than 255 / 2^20 (derived in `Bound`); the cut rate follows it.
    // Measured (printed): see docs/rx_cc.md, dcqcn "As built".
    for seed in [0x9E37_79B9_7F4A_7C15u64, 1, 0xDEAD_BEEF] {
        let (_, _, tr) = track(defaults(), &random_mix(seed), false);
        println!("random mix: largest differences {tr:?}");
        assert_stated_bounds(&tr);
    }
}

#[test]
fn float_tracks_long_decay() {
    // 10^4 increase events with 1500 alpha decays and 20 CNPs: alpha
    // decays far (a Q10 alpha with a - (a >> 8) would have stopped at
    // 255/1024); Q20 rounded toward zero follows the float one down.
    let c = defaults();
    let mut evs = Vec::new();
    let mut s = 0x0123_4567_89AB_CDEFu64;
    for k in 0..11_520 {
        let r = next(&mut s) % 10_000;
        evs.push(if k % 576 == 0 {
            Ev::Cnp
        } else if r < 1500 {
            Ev::Alpha
        } else if r.is_multiple_of(2) {
            Ev::Timer
        } else {
            Ev::Bytes
        });
    }
    let (h, fl, tr) = track(c, &evs, false);
    println!(
        "long decay: largest differences {tr:?}; final alpha fixed {} / 2^20, float {}",
        h.a20(0),
        fl.alpha * (1u32 << 20) as f64
    );
    assert_stated_bounds(&tr);
}

// ---------------------------------------------------------------------
// DCQCN as deployed (docs/rx_cc.md): one test per mode bit, each worked
// out by hand against the paper's behaviour (mode 0) where they differ.
// ---------------------------------------------------------------------

impl H {
    /// Ticks until the shared monitor counter reads `v` (the next tick is
    /// the one that sees it).
    fn align_mon(&mut self, v: u32) {
        while self.d.mon_q != v {
            self.tick();
        }
    }
    fn align_atk(&mut self, v: u32) {
        while self.d.atk_q != v {
            self.tick();
        }
    }
    fn cnp_tick(&mut self, q: u8) {
        self.i.cnp_valid = true;
        self.i.cnp_qp = q;
        self.tick();
    }
}

fn mode(c: DcqcnIn, m: u8) -> DcqcnIn {
    DcqcnIn {
        cfg_mode: m,
        cfg_mon: 10,
        cfg_alpha_t: 10,
        ..c
    }
}

#[test]
fn mon_cut_marks_and_cuts_once_when_the_period_ends() {
    let mut h = H::new(mode(small(), MODE_MON_CUT), 1);
    h.align_mon(2);
    // Three CNPs (mon 2, 3, 4): counted, nothing cut yet.
    for _ in 0..3 {
        h.cnp_tick(0);
        assert_eq!(h.rates(0), (1000, 1000));
    }
    assert_eq!(h.counts(), [3, 0, 0, 0, 0, 0]);
    // Ticks at mon 5..8: nothing; the tick at mon 9 ends the period (the
    // cut is due); the next serves it: 1000 - (1000 * 2^20 >> 21) = 500.
    for _ in 5..=9 {
        h.tick();
        assert_eq!(h.rates(0), (1000, 1000));
    }
    h.tick();
    assert_eq!(h.rates(0), (500, 1000));
    assert_eq!(h.counts(), [3, 1, 0, 0, 0, 0]);
    // A CNP every cycle for three whole periods: three cuts, one a period
    // (alpha stays 1.0: rc halves, rt takes the rate before each cut).
    h.align_mon(0);
    for _ in 0..30 {
        h.cnp_tick(0);
    }
    h.tick();
    assert_eq!(h.counts()[..2], [33, 4]);
    // 125 - (125 * 2^20 >> 21) = 125 - 62.
    assert_eq!(h.rates(0), (63, 125));
}

#[test]
fn alpha_t_updates_alpha_on_its_own_period_not_at_the_cut() {
    // alpha_init 0.5 so that the CNP's update would show: the paper's CNP
    // makes it floor(0.5 (1 - 1/256) 2^20) + 2^12 = 522,240 + 4,096.
    let c = DcqcnIn {
        cfg_alpha_init: 512,
        ..defaults()
    };
    let mut paper = H::new(mode(c, 0), 1);
    paper.cnp(0);
    assert_eq!(paper.a20(0), 526_336);

    // H::new's tick (QP disabled) leaves the alpha counter at 1.
    let mut h = H::new(mode(c, MODE_ALPHA_T), 1);
    assert_eq!(h.d.atk_q, 1);
    // Cut with alpha 0.5 (a quarter off), alpha unchanged.
    h.cnp_tick(0);
    assert_eq!(h.rates(0), (39_321_600, 52_428_800));
    assert_eq!(h.a20(0), 524_288);
    // atk 2..9: the tick at 9 ends the period (with a CNP); served next:
    // 524,288 - 2,048 + 4,096.
    for _ in 2..=9 {
        h.tick();
    }
    assert_eq!(h.a20(0), 524_288);
    h.tick();
    assert_eq!(h.a20(0), 526_336);
    assert_eq!(h.counts()[5], 1);
    // A period without a CNP: 526,336 - 526,336 / 256 = 524,280.
    for _ in 0..10 {
        h.tick();
    }
    assert_eq!(h.a20(0), 524_280);
    assert_eq!(h.counts()[5], 2);
    // cfg_k is unused: a K of 1 changes nothing within the period.
    h.i.cfg_k = 1;
    for _ in 1..=8 {
        h.tick();
    }
    assert_eq!((h.a20(0), h.counts()[5]), (524_280, 2));
}

#[test]
fn first_cnp_holds_alpha_and_timers_until_it_and_releases_at_r_max() {
    let c = DcqcnIn {
        cfg_k: 10,
        ..small()
    };
    // Paper: 100 idle cycles decay alpha (9 decays, K = 10, each served
    // the cycle after its expiry).
    let mut paper = H::new(mode(c, 0), 1);
    for _ in 0..100 {
        paper.tick();
    }
    assert!(paper.a20(0) < 1 << 20);
    assert_eq!(paper.counts()[5], 9);
    // Deployed: held at alpha_init, no event.
    let mut h = H::new(mode(c, MODE_FIRST_CNP), 1);
    for _ in 0..100 {
        h.tick();
    }
    assert_eq!((h.a20(0), h.counts()), (1 << 20, [0; 6]));
    // The first CNP cuts from the initial state: alpha 1.0, rc halves.
    h.cnp_tick(0);
    assert_eq!(h.rates(0), (500, 1000));
    h.i.cfg_k = NEVER;
    // Timer events (F = 2): FR, then AI (rt stays at r_max 1000), each
    // rc := (1000 + rc) >> 1: 750, 875, 937, 968, 984, 992, 996, 998, 999.
    let want = [750, 875, 937, 968, 984, 992, 996, 998, 999];
    for (k, &rc) in want.iter().enumerate() {
        h.t_event();
        assert_eq!(h.rates(0), (rc, 1000), "event {k}");
    }
    // rc = r_max - 1 with rt = r_max: released, held at the initial state
    // from the next cycle on.
    assert!(!h.d.start_q[0]);
    h.tick();
    assert_eq!(h.rates(0), (1000, 1000));
    // The next CNP is a first CNP again.
    h.cnp_tick(0);
    assert_eq!(h.rates(0), (500, 1000));
    assert!(h.d.start_q[0]);
}

#[test]
fn first_cnp_does_not_count_in_its_alpha_period() {
    let c = DcqcnIn {
        cfg_alpha_init: 512,
        ..defaults()
    };
    let mut h = H::new(mode(c, MODE_FIRST_CNP | MODE_ALPHA_T), 1);
    h.align_atk(0);
    h.cnp_tick(0);
    // The period's update is a decay: 524,288 - 2,048.
    for _ in 1..=10 {
        h.tick();
    }
    assert_eq!(h.a20(0), 522_240);
    // A second CNP counts: 522,240 - 2,040 + 4,096.
    h.cnp_tick(0);
    for _ in 2..=10 {
        h.tick();
    }
    assert_eq!(h.a20(0), 524_296);
}

#[test]
fn clamp_off_keeps_rt_unless_an_increase_came_since_the_last_cut() {
    let mut h = H::new(mode(small(), MODE_CLAMP_OFF), 1);
    h.cnp(0);
    assert_eq!(h.rates(0), (500, 1000));
    h.cnp(0);
    // Paper would make rt 500.
    assert_eq!(h.rates(0), (250, 1000));
    // FR (t = 1 < F = 2): rc = (1000 + 250) >> 1.
    h.t_event();
    assert_eq!(h.rates(0), (625, 1000));
    // An increase came: rt := rc; rc = 625 - (625 * 2^20 >> 21) = 313.
    h.cnp(0);
    assert_eq!(h.rates(0), (313, 625));
    h.cnp(0);
    assert_eq!(h.rates(0), (157, 625));
}

#[test]
fn dep_inc_counts_every_event_in_one_stage_before_it() {
    let mut h = H::new(mode(small(), MODE_DEP_INC), 1);
    for _ in 0..3 {
        h.cnp(0);
    }
    assert_eq!(h.rates(0), (125, 250));
    // Stages 0, 1 < F = 2: FR; 2: AI (+10); 3, 4: HAI (+100 each, not
    // 100 * (stage - F)); then a byte event is stage 5: HAI again.
    let want = [(187, 250), (218, 250), (239, 260), (299, 360), (379, 460)];
    for (k, &r) in want.iter().enumerate() {
        h.t_event();
        assert_eq!(h.rates(0), r, "event {k}");
    }
    h.b_event(0);
    assert_eq!(h.rates(0), (469, 560));
    assert_eq!((h.d.t_q[0], h.d.bc_q[0]), (6, 0));
    assert_eq!(h.counts()[2..5], [2, 1, 3]);
    // The paper on the same timer events: T = 1 FR, then AI for ever (BC
    // stays 0, so never hyper).
    let mut p = H::new(mode(small(), 0), 1);
    for _ in 0..3 {
        p.cnp(0);
    }
    for _ in 0..5 {
        p.t_event();
    }
    assert_eq!(p.counts()[2..5], [1, 4, 0]);
}

#[test]
fn byte_off_stops_the_byte_counter() {
    // B = 0: the paper has a byte event pending at every turn.
    let c = DcqcnIn {
        cfg_b: 0,
        ..small()
    };
    let mut p = H::new(mode(c, 0), 1);
    p.cnp(0);
    p.tick();
    assert!(p.counts()[2] > 0);
    let mut h = H::new(mode(c, MODE_BYTE_OFF), 1);
    h.cnp(0);
    h.i.tx_valid = true;
    h.i.tx_qp = 0;
    h.i.tx_len = 1500;
    for _ in 0..20 {
        h.tick();
        h.i.tx_valid = true;
    }
    assert_eq!(h.counts(), [1, 1, 0, 0, 0, 0]);
    assert_eq!(h.d.bcnt_q[0], 0);
}

#[test]
fn deployed_idle_skip_equals_ticks() {
    // A storm then a long quiet stretch, all modes on: skipping within
    // the horizon lands on the state ticking does.
    let c = DcqcnIn {
        cfg_t_inc: 700,
        cfg_mon: 100,
        cfg_alpha_t: 37,
        ..mode(defaults(), MODE_DEPLOYED | MODE_BYTE_OFF)
    };
    let mut a = H::new(c, 0b101);
    for k in 0..500u32 {
        a.i.cnp_valid = k.is_multiple_of(50);
        a.i.cnp_qp = (k % 3) as u8;
        a.tick();
    }
    let mut b = a.d.clone();
    let mut skips = 0;
    for _ in 0..4_000 {
        // All QPs released: the horizon is unbounded.
        let n = b.idle_horizon(&a.i).min(5_000);
        if n > 1 {
            for _ in 0..n {
                a.tick();
            }
            b.skip(&a.i, n);
            skips += 1;
        } else {
            a.tick();
            b.tick(&a.i);
        }
        assert_eq!(format!("{:?}", a.d), format!("{b:?}"));
    }
    assert!(skips > 10, "{skips}");
}
