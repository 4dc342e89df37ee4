//! Constrained-random block-level lockstep of `tx_sched`: model and RTL get
//! the same random `req_active`, `req_avail`, `allow` and `grant_ready`
//! every cycle, and the environment checks the scheduler's function on its
//! own, from the contract (docs/tx_datapath.md, "tx_sched"):
//! - `grant_valid` at n+1 is exactly "some QP had work and was allowed at n";
//! - a grant names a QP that had work and was allowed at n;
//! - fairness: a QP that keeps work and permission is granted before
//!   `QPS` grants have gone to other QPs.
//!
//! Each case picks densities (sparse to full, sticky or toggling work,
//! `allow` all ones or random, ready rate); [`DEFAULT_CASES`] cases of
//! [`CYCLES`] cycles, `RNIC_RANDOM_CASES` for more, `RNIC_RANDOM_SEED` for
//! another seed (the run is a function of both).

use rnic_model::tx_sched::{TxSched, TxSchedIn, TxSchedOut, QPS};
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlTxSched;

const DEFAULT_CASES: u64 = 32;
const DEFAULT_SEED: u64 = 0x7478_5F73_6368_6564; // "tx_sched"
const CYCLES: u64 = 50_000;
/// Lockstep cycles the default run must reach.
const MIN_TOTAL_CYCLES: u64 = 1_500_000;

fn env_u64(name: &str) -> Option<u64> {
    let s = std::env::var(name).ok()?;
    let t = s.trim();
    let r = match t.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => t.parse(),
    };
    Some(r.unwrap_or_else(|_| panic!("{name}={s:?} is not a number")))
}

/// splitmix64: small, seedable, good enough for stimulus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    /// True with probability `p` percent.
    fn pct(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    /// A mask whose bits are each set with probability `p` percent.
    fn mask(&mut self, p: u64) -> u16 {
        (0..QPS).fold(0u16, |m, q| m | (self.pct(p) as u16) << q)
    }
}

struct SchedEnv {
    rng: Rng,
    /// Percent: a work bit set when redrawn; bits redrawn per cycle.
    density: u64,
    churn: u64,
    allow_all: bool,
    ready_pct: u64,
    active: u16,
    avail: u16,
    allow: u16,
    /// `(req_active | req_avail) & allow` of the previous cycle.
    prev_want: Option<u16>,
    /// Grants to other QPs since QP q last got one, while q kept asking.
    skipped: [u32; QPS],
    grants: u64,
    max_skipped: u32,
}

impl SchedEnv {
    fn new(seed: u64) -> Self {
        let mut rng = Rng(seed);
        let density = [3, 10, 30, 60, 100][rng.below(5) as usize];
        let churn = [1, 5, 20, 100][rng.below(4) as usize];
        let allow_all = rng.pct(50);
        let ready_pct = [100, 80, 50, 10][rng.below(4) as usize];
        SchedEnv {
            rng,
            density,
            churn,
            allow_all,
            ready_pct,
            active: 0,
            avail: 0,
            allow: 0xFFFF,
            prev_want: None,
            skipped: [0; QPS],
            grants: 0,
            max_skipped: 0,
        }
    }

    /// Redraws each bit of `m` with probability `churn`.
    fn churn(&mut self, m: u16) -> u16 {
        let redraw = self.rng.mask(self.churn);
        let fresh = self.rng.mask(self.density);
        (m & !redraw) | (fresh & redraw)
    }
}

impl Env for SchedEnv {
    type In = TxSchedIn;
    type Out = TxSchedOut;

    fn step(&mut self, cycle: u64, o: &TxSchedOut) -> TxSchedIn {
        // The grant visible now was computed from last cycle's inputs.
        let want = self.prev_want.unwrap_or(0);
        assert_eq!(
            o.grant_valid,
            want != 0,
            "cycle {cycle}: grant_valid vs work {want:#06x} of the cycle before"
        );
        if o.grant_valid {
            assert!(
                want >> o.grant_qp & 1 != 0,
                "cycle {cycle}: grant to QP {} which had no allowed work ({want:#06x})",
                o.grant_qp
            );
        }
        let ready = self.rng.pct(self.ready_pct);
        for q in 0..QPS {
            if want >> q & 1 == 0 {
                self.skipped[q] = 0;
            }
        }
        if o.grant_valid && ready {
            self.grants += 1;
            let g = o.grant_qp as usize;
            for q in 0..QPS {
                if q == g {
                    self.skipped[q] = 0;
                } else if want >> q & 1 != 0 {
                    self.skipped[q] += 1;
                    self.max_skipped = self.max_skipped.max(self.skipped[q]);
                    assert!(
                        self.skipped[q] < QPS as u32,
                        "cycle {cycle}: QP {q} kept asking through {} grants to others",
                        self.skipped[q]
                    );
                }
            }
        }
        self.active = self.churn(self.active);
        self.avail = self.churn(self.avail);
        self.allow = if self.allow_all {
            0xFFFF
        } else {
            self.churn(self.allow) | self.rng.mask(50)
        };
        self.prev_want = Some((self.active | self.avail) & self.allow);
        TxSchedIn {
            req_active: self.active,
            req_avail: self.avail,
            allow: self.allow,
            grant_ready: ready,
        }
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn tx_sched_random_lockstep() {
    let cases = env_u64("RNIC_RANDOM_CASES").unwrap_or(DEFAULT_CASES);
    let seed = env_u64("RNIC_RANDOM_SEED").unwrap_or(DEFAULT_SEED);
    let mut total = 0u64;
    let mut grants = 0u64;
    let mut worst = 0u32;
    for case in 0..cases {
        let case_seed = seed ^ case.wrapping_mul(0xA24B_AED4_963E_E407);
        let mut env = SchedEnv::new(case_seed);
        let fin = lockstep::run(
            &mut TxSched::new(),
            &mut RtlTxSched::new(),
            &mut env,
            CYCLES,
        )
        .unwrap_or_else(|d| panic!("case {case} (seed {case_seed:#x}): {d}"));
        total += fin.cycles;
        grants += env.grants;
        worst = worst.max(env.max_skipped);
    }
    println!(
        "tx_sched: {cases} cases, {total} cycles, {grants} grants, longest wait {worst} grants"
    );
    if cases == DEFAULT_CASES {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} cycles");
        // Dense cases make QPs wait behind each other.
        assert!(
            worst >= 4,
            "fairness never exercised (longest wait {worst})"
        );
    }
    assert!(grants > total / 20, "too few grants: {grants}");
}
