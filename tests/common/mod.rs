//! Plumbing shared by the constrained-random tests in `tests/` (one copy,
//! used with `mod common;`; cargo compiles `tests/common/mod.rs` as a module
//! of each test, not as a test of its own).
//!
//! Every random test reads the same two environment variables, each a
//! decimal number or `0x`-prefixed hex:
//! - `RNIC_RANDOM_SEED`: the run's seed (each test has its own default,
//!   `DEFAULT_SEED` in the test);
//! - `RNIC_RANDOM_CASES`: how many cases to run (default `DEFAULT_CASES` in
//!   the test). A test asserts its floors (lockstep cycles, coverage counts)
//!   when at least its default number of cases ran, as those floors were
//!   measured for the default run.
//!
//! A seed and a case count define a run. Case `k` runs with its own seed,
//! [`case_seed`]`(seed, k)`, and case 0 with the run's seed itself, so the
//! "case k (seed S)" that [`run_cases`] reports for a failure is replayed
//! alone with `RNIC_RANDOM_SEED=S RNIC_RANDOM_CASES=1`.
//!
//! The stimulus generator is `rnic_testbench::env::SplitMix64` (written out
//! there, so a seed means the same stream whatever crate versions change).
//!
//! Fixtures that several tests share: [`cpl::Cpl`], a completion on the
//! `cpl_*` interface, [`vector_json`], pieces of `rnic_top` vectors,
//! [`figures`], the README's measured tables, and [`vcd`], the reader and
//! checks of a lockstep run's two VCDs.

// Each test uses only part of this module (dma_random has its own proptest
// runner and takes only the seed and case count).
#![allow(dead_code)]

use std::panic::{catch_unwind, AssertUnwindSafe};

pub mod cpl;
pub mod figures;
pub mod pair_nic;
pub mod vcd;
pub mod vector_json;

/// Model and RTL side by side for `cycles` cycles from reset, the inputs
/// of cycle c from `f(c, the cycle's outputs)`; the outputs compared every
/// cycle (a difference panics, naming the cycle). Returns every cycle's
/// outputs and the RTL's assertion failures (name, cycle): the directed
/// schedule and assertion tests of the block-level lockstep files.
pub fn drive_side_by_side<M, T>(
    mut model: M,
    mut rtl: rnic_testbench::rtl::Rtl<T>,
    cycles: u64,
    mut f: impl FnMut(u64, &M::Out) -> M::In,
) -> (Vec<M::Out>, Vec<(String, u64)>)
where
    M: rnic_model::Dut,
    T: rnic_testbench::rtl::RtlTop,
    rnic_testbench::rtl::Rtl<T>: rnic_model::Dut<In = M::In, Out = M::Out>,
{
    use rnic_model::Dut;
    let _ = rnic_testbench::rtl::take_assertion_failure();
    let (mut om, mut or) = (model.reset(), rtl.reset());
    let mut outs = Vec::new();
    for c in 0..cycles {
        if let Some(d) = rnic_testbench::lockstep::compare(&om, &or) {
            panic!("cycle {c}: model and RTL differ: {d:?}");
        }
        let i = f(c, &om);
        outs.push(om);
        om = model.tick(&i);
        or = rtl.tick(&i);
    }
    let fails = rtl
        .assertion_failures()
        .iter()
        .map(|a| (a.name.clone(), a.cycle))
        .collect();
    let _ = rnic_testbench::rtl::take_assertion_failure();
    (outs, fails)
}

/// The seed variable, the same for every random test.
pub const SEED_VAR: &str = "RNIC_RANDOM_SEED";
/// The case-count variable, the same for every random test.
pub const CASES_VAR: &str = "RNIC_RANDOM_CASES";

/// `name` as a decimal or `0x` hex number; `None` when unset; a value that
/// is not a number fails the test rather than silently running the default.
pub fn env_u64(name: &str) -> Option<u64> {
    let s = std::env::var(name).ok()?;
    let t = s.trim();
    let r = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    Some(r.unwrap_or_else(|_| panic!("{name}={s:?} is not a number")))
}

/// The run's seed: `RNIC_RANDOM_SEED`, else the test's default.
pub fn seed(default: u64) -> u64 {
    env_u64(SEED_VAR).unwrap_or(default)
}

/// The run's case count: `RNIC_RANDOM_CASES`, else the test's default.
pub fn cases(default: u64) -> u64 {
    env_u64(CASES_VAR).unwrap_or(default)
}

/// Case `k`'s seed: the run's seed XOR `k` times an odd constant (from
/// wyhash). Case 0 gets the run's seed itself. Not `seed + k * gamma`:
/// SplitMix64's state advances by gamma per output, so that would make case
/// k+1's stream case k's stream shifted by one draw.
pub fn case_seed(seed: u64, k: u64) -> u64 {
    seed ^ k.wrapping_mul(0xA24B_AED4_963E_E407)
}

/// What [`run_cases`] ran.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub seed: u64,
    pub cases: u64,
    /// At least the test's default number of cases ran: the floors measured
    /// for the default run apply.
    pub full: bool,
}

/// Runs the random cases of a test: `case(case_seed(seed, k))` for `k` in
/// `0..cases`, with the seed and count from the environment (see the module
/// documentation) or the test's defaults. A case fails by panicking (a
/// divergence or a failed check); the panic is re-raised with "case k (seed
/// S)" and how to replay that case alone, so the report names the case
/// whatever check failed.
pub fn run_cases(default_seed: u64, default_cases: u64, mut case: impl FnMut(u64)) -> Run {
    let seed = seed(default_seed);
    let cases = cases(default_cases);
    for k in 0..cases {
        run_case(k, case_seed(seed, k), &mut case);
    }
    Run {
        seed,
        cases,
        full: cases >= default_cases,
    }
}

/// Case `k` with seed `s`; a failure re-raised with how to replay it.
fn run_case<T>(k: u64, s: u64, case: &mut impl FnMut(u64) -> T) -> T {
    // The closure only accumulates statistics in the caller; after a
    // failure the test ends, so nothing sees a half-updated state.
    match catch_unwind(AssertUnwindSafe(|| case(s))) {
        Ok(t) => t,
        Err(e) => {
            let why = e
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| e.downcast_ref::<&str>().copied())
                .unwrap_or("(no message)");
            panic!(
                "case {k} (seed {s:#x}) failed:\n{why}\n\
                 replay this case alone: {SEED_VAR}={s:#x} {CASES_VAR}=1"
            );
        }
    }
}

/// [`run_cases`] for a test with a floor some seeds reach slowly (a share
/// of its checks done exactly, say): after the run's cases, while `case`
/// (which returns whether the floors are met so far) says no, more cases
/// (k = cases, cases + 1, ...) up to `3 * default_cases` more. So a floor
/// is reached by construction for any seed, and only a bug fails it. Only
/// a full run is extended; `cases` counts the extra ones too.
pub fn run_cases_until(
    default_seed: u64,
    default_cases: u64,
    mut case: impl FnMut(u64) -> bool,
) -> Run {
    let seed = seed(default_seed);
    let cases = cases(default_cases);
    let mut met = false;
    for k in 0..cases {
        met = run_case(k, case_seed(seed, k), &mut case);
    }
    let full = cases >= default_cases;
    let mut k = cases;
    while full && !met && k < cases + 3 * default_cases {
        met = run_case(k, case_seed(seed, k), &mut case);
        k += 1;
    }
    Run {
        seed,
        cases: k,
        full,
    }
}
