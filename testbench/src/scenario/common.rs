//! What every DMA scenario has: host memory, the root complex, the PCIe rule
//! checker on every TLP, and the list of failed independent checks.

use rnic_model::ports::Beat;

use crate::check::pcie::{PcieChecker, PcieCheckerConfig};
use crate::env::{
    Fault, HostMemory, ReadyPolicy, RootComplex, RootComplexConfig, RootComplexOut, RqIn, SplitMode,
};
use crate::vector::{Split, Vector};

/// Independent checks stop being recorded after this many failures.
const MAX_FAILURES: usize = 32;

pub struct Common {
    pub mem: HostMemory,
    pub rc: RootComplex,
    /// What the root complex drives in the current cycle.
    pub rc_out: RootComplexOut,
    pub checker: PcieChecker,
    log_seen: usize,
    errors_seen: usize,
    dropped_seen: usize,
    pub failures: Vec<String>,
    /// Functional coverage: the DUT had a TLP on `rq_*` the root complex
    /// was not ready for, and the root complex a completion on `rc_*` the
    /// DUT was not ready for, in some cycle.
    pub rq_stalled: bool,
    pub rc_stalled: bool,
}

impl Common {
    pub fn new(v: &Vector) -> Result<Self, String> {
        let mut mem = HostMemory::new();
        for m in &v.memory {
            mem.fill_pattern(m.addr.0, m.len as usize, m.seed);
        }
        let r = &v.root_complex;
        let cfg = RootComplexConfig {
            latency: r.latency,
            rcb: r.rcb,
            cpl_size: r.cpl_size,
            split: match r.split {
                Split::Aligned => SplitMode::AtCplSize,
                Split::Random => SplitMode::Random,
            },
            reorder: r.reorder,
            seed: r.seed,
            rq_ready: if r.rq_ready_percent >= 100 {
                ReadyPolicy::Always
            } else {
                ReadyPolicy::Random {
                    percent: r.rq_ready_percent,
                }
            },
            completer_id: 0,
            faults: r
                .faults
                .iter()
                .map(|f| Fault {
                    range: f.addr.0..f.addr.0 + f.len,
                    kind: f.kind,
                })
                .collect(),
        };
        let rc = RootComplex::new(cfg).map_err(|e| format!("root_complex: {e}"))?;
        let rc_out = rc.outputs();
        let checker = PcieChecker::new(PcieCheckerConfig {
            requester_id: v.config.requester_id,
            mrrs: v.config.mrrs,
            mps: v.config.mps,
            cpl_timeout: Some(v.config.cpl_timeout as u64),
        });
        Ok(Common {
            mem,
            rc,
            rc_out,
            checker,
            log_seen: 0,
            errors_seen: 0,
            dropped_seen: 0,
            failures: Vec::new(),
            rq_stalled: false,
            rc_stalled: false,
        })
    }

    pub fn fail(&mut self, cycle: u64, msg: String) {
        if self.failures.len() < MAX_FAILURES {
            self.failures.push(format!("cycle {cycle}: {msg}"));
        }
    }

    /// Clocks the root complex with the DUT's link outputs of this cycle and
    /// runs the PCIe checker over every TLP that completed.
    #[allow(clippy::too_many_arguments)]
    pub fn step_link(
        &mut self,
        cycle: u64,
        rq_valid: bool,
        rq_data: Beat,
        rq_keep: u64,
        rq_sop: bool,
        rq_eop: bool,
        rc_ready: bool,
    ) {
        self.rq_stalled |= rq_valid && !self.rc_out.rq_ready;
        self.rc_stalled |= self.rc_out.rc_valid && !rc_ready;
        let rq = RqIn {
            valid: rq_valid,
            data: rq_data,
            keep: rq_keep,
            sop: rq_sop,
            eop: rq_eop,
        };
        self.rc_out = self.rc.step(&rq, rc_ready, &mut self.mem);
        let n_err = self.rc.errors().len();
        for k in self.errors_seen..n_err {
            let e = self.rc.errors()[k].to_string();
            self.fail(cycle, format!("root complex: {e}"));
        }
        self.errors_seen = n_err;
        let n_log = self.rc.log().len();
        for k in self.log_seen..n_log {
            if self.rc.is_injected(k) {
                continue;
            }
            let e = self.rc.log()[k].clone();
            if let Err(vs) = self.checker.check_log_entry(&e) {
                for vio in vs {
                    self.fail(e.cycle, format!("PCIe rule: {vio}: {e}"));
                }
            }
        }
        self.log_seen = n_log;
        let n_drop = self.rc.dropped().len();
        for k in self.dropped_seen..n_drop {
            let (_, tag) = self.rc.dropped()[k];
            self.checker.mark_dropped(tag);
        }
        self.dropped_seen = n_drop;
    }

    /// End of run: no tag leaks, no half-sent TLP.
    pub fn finish(&mut self, cycle: u64) {
        if let Err(vs) = self.checker.finish() {
            for vio in vs {
                self.fail(cycle, format!("PCIe rule at end of run: {vio}"));
            }
        }
        if self.rc.rq_in_progress() {
            self.fail(cycle, "a TLP was left half-sent on rq".into());
        }
    }
}
