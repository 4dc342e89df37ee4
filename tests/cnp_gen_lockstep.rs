//! Constrained-random block-level lockstep of `cnp_gen`: model and RTL get
//! the same random CE events (QPs drawn from a few "hot" ones or all of
//! them) and random `cnp_ready` back-pressure, and the environment checks the
//! block's function on its own, from the contract (docs/rx_cc.md, "cnp_gen"):
//! - the interval rule, from the CE times the environment saw: a CE of QP q
//!   at n is accepted exactly when no CNP of q is waiting (accepted, not yet
//!   taken) and the last accepted CE of q was at least `cfg_interval` cycles
//!   before (so never two accepted less than `cfg_interval` apart, and every
//!   CE outside the interval with nothing waiting is accepted): checked on
//!   `ev_ce_suppressed` at n+1;
//! - every accepted CE yields exactly one CNP taken for its QP, no CNP is
//!   taken for a QP with nothing accepted (no duplicate, no invention), and
//!   at the end of each case (CEs stop, `cnp_ready` high) nothing is left;
//! - valid/ready: an offer not taken stays, same QP, the next cycle; an
//!   output that was free (not valid, or taken) carries an offer the next
//!   cycle exactly when some CNP is waiting (so a CE at n is offered at n+1
//!   when the output is free);
//! - fairness: a waiting QP is taken before `QPS` CNPs of other QPs;
//! - `ev_ce` / `ev_cnp` pulse the cycle after a CE / a take.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. A
//! failing case prints its own seed; `RNIC_RANDOM_SEED=<that seed>
//! RNIC_RANDOM_CASES=1` replays it alone. With at least the default case
//! count the test asserts that [`MIN_TOTAL_CYCLES`] lockstep cycles ran.

mod common;

use rnic_model::cnp_gen::{CnpGen, CnpGenIn, CnpGenOut, QPS};
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlCnpGen;

const DEFAULT_CASES: u64 = 32;
const DEFAULT_SEED: u64 = 0x636E_705F_6765_6E5F; // "cnp_gen_"
/// Cycles with CE traffic per case, then a drain.
const CYCLES: u64 = 50_000;
const DRAIN: u64 = 200;
/// Lockstep cycles the default run must reach.
const MIN_TOTAL_CYCLES: u64 = 32 * CYCLES;

struct GenEnv {
    rng: SplitMix64,
    interval: u32,
    ce_pct: u8,
    ready_pct: u8,
    /// QPs CEs are drawn from.
    hot: Vec<u8>,
    /// Per QP: cycle of the last accepted CE.
    last_accept: [Option<u64>; QPS],
    /// Per QP: an accepted CE whose CNP has not been taken yet.
    waiting: [bool; QPS],
    /// Per QP: CNPs of other QPs taken while this one waited.
    passed_over: [u32; QPS],
    /// Last cycle's inputs and the output as seen then.
    prev_in: Option<CnpGenIn>,
    prev_out: CnpGenOut,
    ces: u64,
    suppressed: u64,
    taken: u64,
    held: u64,
    worst_wait: u32,
}

impl GenEnv {
    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let interval = [0, 1, 2, 7, 40, 300, 1000][rng.below(7) as usize];
        let ce_pct = [2, 10, 40, 90][rng.below(4) as usize];
        let ready_pct = [100, 70, 30, 5][rng.below(4) as usize];
        let n_hot = [1, 3, QPS][rng.below(3) as usize];
        let hot = (0..n_hot).map(|_| rng.below(QPS as u64) as u8).collect();
        GenEnv {
            rng,
            interval,
            ce_pct,
            ready_pct,
            hot,
            last_accept: [None; QPS],
            waiting: [false; QPS],
            passed_over: [0; QPS],
            prev_in: None,
            prev_out: CnpGenOut::default(),
            ces: 0,
            suppressed: 0,
            taken: 0,
            held: 0,
            worst_wait: 0,
        }
    }

    /// Checks the outputs `o` visible at `cycle` against the previous
    /// cycle's inputs and outputs, and updates the reference state.
    fn check(&mut self, cycle: u64, o: &CnpGenOut) {
        let Some(pi) = self.prev_in else {
            assert!(
                !o.cnp_valid && !o.ev_ce && !o.ev_cnp,
                "outputs out of reset"
            );
            return;
        };
        let n = cycle - 1;
        let po = self.prev_out;
        let take = po.cnp_valid && pi.cnp_ready;
        assert_eq!(o.ev_ce, pi.ce_valid, "cycle {cycle}: ev_ce");
        assert_eq!(o.ev_cnp, take, "cycle {cycle}: ev_cnp");
        // The CE of cycle n, judged on the state before n's take.
        if pi.ce_valid {
            let q = pi.ce_qp as usize;
            let open = match self.last_accept[q] {
                None => true,
                Some(t) => n - t >= self.interval as u64,
            };
            let accept = open && !self.waiting[q];
            assert_eq!(
                o.ev_ce_suppressed, !accept,
                "cycle {cycle}: CE of QP {q} at {n}: waiting {}, last accepted {:?}, interval {}",
                self.waiting[q], self.last_accept[q], self.interval
            );
            self.ces += 1;
            self.suppressed += !accept as u64;
        } else {
            assert!(
                !o.ev_ce_suppressed,
                "cycle {cycle}: suppressed without a CE"
            );
        }
        if take {
            let q = po.cnp_qp as usize;
            assert!(
                self.waiting[q],
                "cycle {}: CNP taken for QP {q}, which had no accepted CE waiting",
                n
            );
            self.waiting[q] = false;
            self.passed_over[q] = 0;
            for p in 0..QPS {
                if self.waiting[p] {
                    self.passed_over[p] += 1;
                    self.worst_wait = self.worst_wait.max(self.passed_over[p]);
                    assert!(
                        self.passed_over[p] < QPS as u32,
                        "cycle {n}: QP {p} waited through {} CNPs of others",
                        self.passed_over[p]
                    );
                }
            }
            self.taken += 1;
        }
        if pi.ce_valid && !o.ev_ce_suppressed {
            let q = pi.ce_qp as usize;
            self.waiting[q] = true;
            self.last_accept[q] = Some(n);
        }
        if po.cnp_valid && !pi.cnp_ready {
            assert!(
                o.cnp_valid && o.cnp_qp == po.cnp_qp,
                "cycle {cycle}: offer of QP {} dropped or changed before it was taken",
                po.cnp_qp
            );
            self.held += 1;
        } else {
            let any = self.waiting.iter().any(|&w| w);
            assert_eq!(
                o.cnp_valid, any,
                "cycle {cycle}: free output, CNP waiting: {any}"
            );
        }
        if o.cnp_valid {
            assert!(
                self.waiting[o.cnp_qp as usize],
                "cycle {cycle}: offer for QP {}, which has nothing waiting",
                o.cnp_qp
            );
        }
    }
}

impl Env for GenEnv {
    type In = CnpGenIn;
    type Out = CnpGenOut;

    fn step(&mut self, cycle: u64, o: &CnpGenOut) -> CnpGenIn {
        self.check(cycle, o);
        let traffic = cycle < CYCLES;
        let ce_valid = traffic && self.rng.percent(self.ce_pct);
        let ce_qp = if ce_valid {
            self.hot[self.rng.below(self.hot.len() as u64) as usize]
        } else {
            // Junk while not valid.
            self.rng.below(QPS as u64) as u8
        };
        let i = CnpGenIn {
            ce_valid,
            ce_qp,
            cfg_interval: self.interval,
            cnp_ready: !traffic || self.rng.percent(self.ready_pct),
        };
        self.prev_in = Some(i);
        self.prev_out = *o;
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn cnp_gen_random_lockstep() {
    let (mut total, mut ces, mut sup, mut taken, mut held, mut worst) = (0, 0, 0, 0, 0, 0);
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = GenEnv::new(seed);
        let fin = lockstep::run(
            &mut CnpGen::new(),
            &mut RtlCnpGen::new(),
            &mut env,
            CYCLES + DRAIN,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert!(
            env.waiting.iter().all(|&w| !w),
            "CNPs never taken after the drain: {:?}",
            env.waiting
        );
        total += fin.cycles;
        ces += env.ces;
        sup += env.suppressed;
        taken += env.taken;
        held += env.held;
        worst = worst.max(env.worst_wait);
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        total >= MIN_TOTAL_CYCLES
            && taken >= 10_000
            && sup >= 10_000
            && held >= 10_000
            && worst >= 3
    });
    println!(
        "cnp_gen: {} cases, {total} cycles, {ces} CEs ({sup} suppressed), {taken} CNPs, \
         {held} offers held, longest wait {worst} CNPs",
        run.cases
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} cycles");
        assert!(taken >= 10_000, "few CNPs ({taken})");
        assert!(sup >= 10_000, "suppression barely exercised ({sup})");
        assert!(held >= 10_000, "back-pressure barely exercised ({held})");
        assert!(worst >= 3, "round robin barely exercised ({worst})");
    }
}
