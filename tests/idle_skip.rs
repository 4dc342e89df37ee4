//! `RnicTop::skip(n)` leaves the model exactly where `n` ticks would.
//!
//! States come from real runs (vectors with a long PFC pause, DCQCN cuts
//! and recovery), sampled along the way; from each, with the top inputs
//! held idle, the model is advanced by `skip(n)` and, separately, by `n`
//! ticks, for `n` of 1, half the horizon and the whole horizon; every
//! register (all 715 the model traces) and the outputs of the next tick
//! must agree. The test also asserts it met the interesting states: a
//! pause running, a DCQCN rate below its target, a rate-limited QP.

use std::path::Path;

use rnic_model::rnic_top::{RnicTop, RnicTopIn};
use rnic_model::trace::{Trace, Tracer};
use rnic_model::Dut;
use rnic_testbench::scenario::RnicTopEnv;
use rnic_testbench::vector::Vector;

/// Every register by name.
#[derive(Default, PartialEq, Debug)]
struct State(Vec<(String, Vec<u64>)>);

impl Tracer for State {
    fn push(&mut self, s: &str) {
        self.0.push((format!("push {s}"), Vec::new()));
    }
    fn pop(&mut self) {
        self.0.push(("pop".into(), Vec::new()));
    }
    fn var(&mut self, name: &str, _: u32, words: &[u64]) {
        self.0.push((name.to_string(), words.to_vec()));
    }
}

fn state(m: &RnicTop) -> State {
    let mut s = State::default();
    m.trace(&mut s);
    s
}

/// A register's low word, by scope and name.
fn reg(s: &State, scope: &str, name: &str) -> u64 {
    let at =
        s.0.iter()
            .position(|(n, _)| n == &format!("push {scope}"))
            .expect("scope");
    s.0[at..]
        .iter()
        .find(|(n, _)| n == name)
        .expect("register")
        .1[0]
}

/// Idle top inputs: nothing offered, both sinks ready.
fn idle() -> RnicTopIn {
    RnicTopIn {
        rq_ready: true,
        tx_tready: true,
        ..RnicTopIn::default()
    }
}

#[derive(Default, Debug)]
struct Seen {
    compared: u32,
    paused: u32,
    recovering: u32,
    rate_limited: u32,
}

/// Compares skip(n) with n ticks from `m`.
fn check(m: &RnicTop, n: u64, what: &str) {
    let i = idle();
    let mut a = m.clone();
    for _ in 0..n {
        a.tick(&i);
    }
    let mut b = m.clone();
    b.skip(&i, n);
    let (sa, sb) = (state(&a), state(&b));
    if sa != sb {
        let d: Vec<_> =
            sa.0.iter()
                .zip(&sb.0)
                .filter(|(x, y)| x != y)
                .take(5)
                .collect();
        panic!("{what}: skip({n}) differs from {n} ticks: {d:?}");
    }
    assert_eq!(a.tick(&i), b.tick(&i), "{what}: outputs after skip({n})");
    assert_eq!(
        state(&a),
        state(&b),
        "{what}: state one tick after skip({n})"
    );
}

fn sample(vector: &str, every: u64, seen: &mut Seen) {
    let v = Vector::load(Path::new(vector)).unwrap_or_else(|e| panic!("{e}"));
    let mut env = RnicTopEnv::new(&v).expect("valid vector");
    let mut m = RnicTop::new();
    let mut out = m.reset();
    for c in 0..v.max_cycles {
        if c % every == every - 1 {
            let h = m.idle_horizon(&idle());
            if h > 1 {
                let s = state(&m);
                let probe = m.cc_probe();
                seen.paused += (probe.pause != 0) as u32;
                seen.recovering += probe.rc.iter().zip(&probe.rt).any(|(c, t)| c < t) as u32;
                let ok = reg(&s, "u_rate_limiter", "rate_ok_q");
                seen.rate_limited += (ok & 0xFFFF != 0xFFFF) as u32;
                // Long horizons are checked up to 20 000 cycles (the ticks
                // are the slow side).
                let h = h.min(20_000);
                for n in [1, h / 2, h] {
                    check(&m, n, &format!("{vector} cycle {c}"));
                    seen.compared += 1;
                }
            }
        }
        let i = env.step(c, &out);
        out = m.tick(&i);
        if env.finished() {
            break;
        }
    }
}

#[test]
fn skip_equals_ticks_in_paused_recovering_and_rate_limited_states() {
    let mut seen = Seen::default();
    sample("vectors/rx/pfc_quanta_65535.json", 4001, &mut seen);
    sample("vectors/cc/cnp_single.json", 501, &mut seen);
    sample("vectors/cc/cnp_storm_recovery.json", 2003, &mut seen);
    // The deployed reaction point: shared monitor and alpha periods.
    sample("vectors/cc/cnp_storm_deployed.json", 1001, &mut seen);
    eprintln!("{seen:?}");
    assert!(seen.compared >= 30, "{seen:?}");
    assert!(seen.paused >= 3, "{seen:?}");
    assert!(seen.recovering >= 3, "{seen:?}");
    assert!(seen.rate_limited >= 1, "{seen:?}");
}

/// A model with nothing to do skips as far as its timers allow, and a
/// horizon is never passed: one more idle tick after skip(h) still agrees.
#[test]
fn fresh_model_is_idle_for_ever() {
    let mut m = RnicTop::new();
    m.reset();
    // The first ticks load the configuration's reset values (dcqcn's rates,
    // and retx_ctl's retry counts: its scanner's first round, QPS cycles).
    assert_eq!(m.idle_horizon(&idle()), 0);
    for _ in 0..rnic_model::params::QPS + 4 {
        m.tick(&idle());
    }
    let h = m.idle_horizon(&idle());
    assert_eq!(h, u64::MAX, "no timer runs after reset");
    check(&m, 1000, "after reset");
}
