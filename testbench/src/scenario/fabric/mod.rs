//! N NICs and a switch in one run (docs/fabric.md). Each host is the
//! single-NIC environment ([`RnicTopEnv`], every end-of-run check of a NIC
//! in a pair) with a MAC that paces its `tx_*` to the line rate; every NIC
//! runs the `rnic_top` model, and the hosts the vector names run their
//! Verilated `rnic_top` in lockstep too. Frames cross a link (a delay) into
//! the switch model (`rnic_switch`), and the switch's departures cross a
//! link into the destination NIC's `rx_*`, pause frames both ways.
//!
//! On top of each NIC's own checks the fabric checks delivery against the
//! bytes sent ([`checks`]) and the switch's conservation after every step.

pub mod checks;
pub mod mac;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use rnic_model::rnic_top::{RnicTop, RnicTopIn, RnicTopOut};
use rnic_switch::{Departure, Route, Switch, SwitchConfig};

use super::pair::{self, Duts, NicModel};
use super::{Mode, Report, RnicTopEnv};
use crate::lockstep::{compare, Divergence, Finished};
use crate::rtl::take_assertion_failure;
use crate::vector::{Expect, FabricExpect, FabricVector};

/// The priority the NICs' RoCE traffic takes (DSCP 26 >> 3) and the
/// switch keeps lossless.
pub const LOSSLESS: usize = 3;

/// Cycles between samples of the switch's queues.
pub const SAMPLE_EVERY: u64 = 500;

/// The switch of a star: one port per host, host `i` on port `i`, a route
/// to each address a host's QPs send from.
pub fn switch_config(v: &FabricVector) -> Result<SwitchConfig, String> {
    let mut c = SwitchConfig::new(v.hosts.len());
    c.bits_per_cycle = v.link.bits_per_cycle;
    let s = &v.switch;
    if let Some(b) = s.buffer_bytes {
        c.buffer_bytes = b;
    }
    if let Some(p) = s.pfc {
        c.pfc.enabled = p;
    }
    if let Some(b) = s.xoff_bytes {
        c.pfc.xoff_bytes = b;
    }
    if let Some(b) = s.xon_bytes {
        c.pfc.xon_bytes = b;
    }
    if let Some(b) = s.headroom_bytes {
        c.pfc.headroom_bytes = b;
    }
    if s.ecn == Some(false) {
        c.queues[LOSSLESS].red = None;
    } else if let Some(red) = c.queues[LOSSLESS].red.as_mut() {
        if let Some(k) = s.kmin_bytes {
            red.kmin_bytes = k;
        }
        if let Some(k) = s.kmax_bytes {
            red.kmax_bytes = k;
        }
        if let Some(p) = s.pmax {
            red.pmax = p;
        }
    }
    c.watchdog_cycles = s.watchdog_cycles;
    if let Some(seed) = s.seed {
        c.seed = seed;
    }
    for (i, h) in v.hosts.iter().enumerate() {
        for a in checks::host_addrs(h) {
            c.routes.push(Route::host(a, i));
        }
    }
    Ok(c)
}

/// One sample of the switch: (cycle, bytes in the shared buffer, bytes
/// queued on the lossless priority of each egress port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub cycle: u64,
    pub buffer: u64,
    pub lossless: Vec<u64>,
}

/// The environment of a fabric: every host, the links and the switch.
pub struct FabricEnv {
    pub nic: Vec<RnicTopEnv>,
    pub switch: Switch,
    delay: u64,
    /// Per host: frames of its `tx_*` handed to the link so far.
    forwarded: Vec<usize>,
    /// Frames on a link into the switch: (cycle fully arrived, port, bytes).
    to_switch: VecDeque<(u64, usize, Arc<[u8]>)>,
    /// Every frame the switch sent, in order.
    pub out: Vec<Departure>,
    /// The first few times the switch did not conserve frames.
    pub conservation: Vec<String>,
    pub samples: Vec<Sample>,
}

impl FabricEnv {
    pub fn new(v: &FabricVector) -> Result<Self, String> {
        let switch = Switch::new(switch_config(v)?).map_err(|e| format!("switch: {e}"))?;
        let mut nic = Vec::with_capacity(v.hosts.len());
        for (i, h) in v.hosts.iter().enumerate() {
            let mut e = RnicTopEnv::new_in_pair(h).map_err(|e| format!("hosts[{i}]: {e}"))?;
            e.mac = Some(mac::MacPacer::new(v.link.bits_per_cycle));
            nic.push(e);
        }
        Ok(FabricEnv {
            forwarded: vec![0; nic.len()],
            nic,
            switch,
            delay: v.link.delay,
            to_switch: VecDeque::new(),
            out: Vec::new(),
            conservation: Vec::new(),
            samples: Vec::new(),
        })
    }

    /// Inputs of every NIC for `cycle`, given their outputs in it.
    pub fn step(&mut self, cycle: u64, outs: &[&RnicTopOut]) -> Vec<RnicTopIn> {
        let ins: Vec<RnicTopIn> = self
            .nic
            .iter_mut()
            .zip(outs)
            .map(|(e, o)| e.step(cycle, o))
            .collect();
        for (s, e) in self.nic.iter().enumerate() {
            while self.forwarded[s] < e.frames.len() {
                let k = self.forwarded[s];
                let last = e.frame_ends[k];
                let f: Arc<[u8]> = pair::mac_pad(&e.frames[k].1).into();
                self.to_switch.push_back((last + 1 + self.delay, s, f));
                self.forwarded[s] += 1;
            }
        }
        let mut moved = false;
        while self.to_switch.front().is_some_and(|f| f.0 <= cycle) {
            let (at, port, f) = self.to_switch.pop_front().expect("front exists");
            self.switch.receive(port, at, &f);
            moved = true;
        }
        if moved || self.switch.next_event().is_some_and(|t| t <= cycle) {
            for d in self.switch.advance(cycle) {
                let due = d.last + 1 + self.delay;
                self.nic[d.port].rx.push_link(due, d.frame.clone());
                self.out.push(d);
            }
            if let Err(m) = self.switch.check_conservation() {
                if self.conservation.len() < 8 {
                    self.conservation.push(format!("cycle {cycle}: {m}"));
                }
            }
        }
        if cycle.is_multiple_of(SAMPLE_EVERY) {
            self.samples.push(Sample {
                cycle,
                buffer: self.switch.buffer_used(),
                lossless: (0..self.nic.len())
                    .map(|p| self.switch.queue_depth(p, LOSSLESS))
                    .collect(),
            });
        }
        // A NIC's counters are read only once nothing more can reach it:
        // every link and the switch empty and no other NIC still sending.
        let quiet = self.to_switch.is_empty()
            && self.switch.buffer_used() == 0
            && self.nic.iter().all(|e| e.rx.idle());
        let senders = self.nic.iter().filter(|e| e.may_send(cycle)).count();
        for e in self.nic.iter_mut() {
            let others = senders - usize::from(e.may_send(cycle));
            e.hold = !quiet || others > 0;
        }
        ins
    }

    pub fn finished(&self) -> bool {
        self.nic.iter().all(RnicTopEnv::finished)
    }

    /// Every host's own checks and go-back-N, DCQCN's counters against the
    /// CNPs each received, the delivery checks and conservation.
    fn finish_checks(&mut self, v: &FabricVector, cycle: u64) -> (checks::Delivery, Vec<String>) {
        let mut out = Vec::new();
        for (i, e) in self.nic.iter_mut().enumerate() {
            let retry = pair::retry_config(&v.hosts[i]);
            let p = pair::settle_host(e, &retry, cycle);
            out.extend(p.into_iter().map(|m| format!("h{i}: {m}")));
        }
        for (i, e) in self.nic.iter().enumerate() {
            out.extend(e.common.failures.iter().map(|f| format!("h{i}: {f}")));
            let retry = pair::retry_config(&v.hosts[i]);
            out.extend(
                e.gbn_violations(&retry)
                    .into_iter()
                    .map(|f| format!("h{i}: go-back-N: {f}")),
            );
            out.extend(
                pair::check_dcqcn(&v.hosts[i], e)
                    .into_iter()
                    .map(|f| format!("h{i}: {f}")),
            );
        }
        let pfc_on = self.switch.config().pfc.enabled;
        let (d, p) = checks::check(&self.nic, &self.out, &self.switch, &[LOSSLESS], pfc_on);
        out.extend(p.into_iter().map(|m| format!("fabric: {m}")));
        out.extend(
            self.conservation
                .iter()
                .map(|m| format!("switch conservation: {m}")),
        );
        (d, out)
    }
}

/// What a fabric run produced: `report` as for a single NIC (cycles,
/// failures, `tx_frames` = every frame on every link in time order, each
/// named by its link), each host's results, the switch's counters.
pub struct FabricReport {
    pub report: Report,
    pub hosts: Vec<Expect>,
    pub switch: BTreeMap<String, u64>,
    pub delivery: checks::Delivery,
    pub samples: Vec<Sample>,
    /// Per host: (cycle of its first doorbell, cycle its last CQE was
    /// written), for completion times.
    pub spans: Vec<(Option<u64>, Option<u64>)>,
}

impl FabricReport {
    pub fn to_expect(&self) -> FabricExpect {
        FabricExpect {
            cycles: self.report.cycles,
            hosts: self.hosts.clone(),
            switch: self.switch.clone(),
        }
    }
}

/// Which DUTs host `i` runs in a run of `mode`: the model always; its RTL
/// too when the vector names it and the mode runs RTL.
fn host_mode(v: &FabricVector, mode: Mode, i: usize) -> Mode {
    if mode != Mode::Model && v.rtl.contains(&i) {
        Mode::Lockstep
    } else {
        Mode::Model
    }
}

/// Names a host for a divergence (a report outlives the run).
fn block_name(i: usize) -> &'static str {
    Box::leak(format!("host h{i} (rnic_top)").into_boxed_str())
}

type Simulated = (FabricEnv, Finished, Option<Box<Divergence>>);

fn simulate<M: NicModel>(
    v: &FabricVector,
    mode: Mode,
    mk_model: &impl Fn(usize) -> M,
) -> Result<Simulated, String> {
    let mut env = FabricEnv::new(v)?;
    let n = v.hosts.len();
    let mut duts: Vec<Duts<M>> = (0..n)
        .map(|i| Duts::new(host_mode(v, mode, i), || mk_model(i)))
        .collect();
    let _ = take_assertion_failure();
    let mut outs: Vec<(RnicTopOut, Option<RnicTopOut>)> =
        duts.iter_mut().map(|d| d.reset()).collect();
    let mut cycle = 0u64;
    loop {
        for (i, o) in outs.iter().enumerate() {
            if let (m, Some(r)) = o {
                if let Some(diff) = compare(m, r) {
                    let d = Divergence {
                        block: block_name(i),
                        cycle,
                        diff,
                        history: Vec::new(),
                        assertion: None,
                    };
                    let fin = Finished {
                        cycles: cycle,
                        completed: false,
                    };
                    return Ok((env, fin, Some(Box::new(d))));
                }
            }
        }
        if env.finished() || cycle >= v.max_cycles {
            let fin = Finished {
                cycles: cycle,
                completed: env.finished(),
            };
            return Ok((env, fin, None));
        }
        let refs: Vec<&RnicTopOut> = outs.iter().map(|o| &o.0).collect();
        let ins = env.step(cycle, &refs);
        for (i, d) in duts.iter_mut().enumerate() {
            outs[i] = d.tick(&ins[i]);
            if let Some(a) = take_assertion_failure() {
                let d = Divergence::from_assertion(block_name(i), a, Vec::new());
                let fin = Finished {
                    cycles: cycle + 1,
                    completed: false,
                };
                return Ok((env, fin, Some(Box::new(d))));
            }
        }
        cycle += 1;
    }
}

/// Runs a fabric vector: every host's model, and in any mode but
/// [`Mode::Model`] the RTL of the hosts the vector names, in lockstep.
/// Errors only for a vector the fabric cannot be built from.
pub fn run(v: &FabricVector, mode: Mode, opts: &super::RunOpts) -> Result<FabricReport, String> {
    run_with(v, mode, opts, |_| RnicTop::new())
}

/// [`run`] with the models `mk_model(i)`: a self-test breaks one.
pub fn run_with<M: NicModel>(
    v: &FabricVector,
    mode: Mode,
    opts: &super::RunOpts,
    mk_model: impl Fn(usize) -> M,
) -> Result<FabricReport, String> {
    if opts.vcd_dir.is_some() {
        return Err("--vcd: a fabric run does not write waveforms yet; \
                    run the host as a single-NIC or pair vector to trace it"
            .into());
    }
    let (mut env, fin, div) = simulate(v, mode, &mk_model)?;
    let (delivery, failures) = if div.is_none() {
        env.finish_checks(v, fin.cycles)
    } else {
        (checks::Delivery::default(), Vec::new())
    };
    // Every link in time order: each host's frames into the switch, then
    // the switch's frames out, each named by its link.
    let mut tx: Vec<(u64, Vec<u8>, String)> = Vec::new();
    for (i, e) in env.nic.iter().enumerate() {
        for (first, b) in &e.frames {
            tx.push((*first, b.clone(), format!("h{i} to switch")));
        }
    }
    for d in &env.out {
        tx.push((d.first, d.frame.to_vec(), format!("switch to h{}", d.port)));
    }
    tx.sort_by_key(|f| f.0);
    let tx_comments = Some(tx.iter().map(|f| f.2.clone()).collect());
    let tx_frames: Vec<(u64, Vec<u8>)> = tx.into_iter().map(|f| (f.0, f.1)).collect();
    let hosts: Vec<Expect> = env.nic.iter().map(pair::host_expect).collect();
    let spans = env
        .nic
        .iter()
        .map(|e| {
            let last_cqe = e.cqe_log.iter().map(|c| c.cycle).max();
            (e.doorbell_cycles.first().copied(), last_cqe)
        })
        .collect();
    let switch: BTreeMap<String, u64> = env.switch.counters().named().into_iter().collect();
    let report = Report {
        name: v.name.clone(),
        cycles: fin.cycles,
        completed: fin.completed,
        reads: Vec::new(),
        writes: Vec::new(),
        frames: Vec::new(),
        cqes: Vec::new(),
        tx_frames,
        tx_comments,
        counters: BTreeMap::new(),
        failures,
        divergence: div,
        tlp_log: Vec::new(),
        vcd: Vec::new(),
        vcd_error: None,
    };
    Ok(FabricReport {
        report,
        hosts,
        switch,
        delivery,
        samples: std::mem::take(&mut env.samples),
        spans,
    })
}

/// Differences between a clean fabric run's results and the blessed ones.
pub fn mismatches(v: &FabricVector, r: &FabricReport) -> Vec<String> {
    let Some(x) = &v.expect else {
        return vec!["no expected results: run `rnic bless` on this vector".into()];
    };
    let mut out = Vec::new();
    if x.cycles != r.report.cycles {
        out.push(format!(
            "cycles: expected {}, got {}",
            x.cycles, r.report.cycles
        ));
    }
    if x.hosts.len() != r.hosts.len() {
        out.push(format!(
            "hosts: expected {}, got {}",
            x.hosts.len(),
            r.hosts.len()
        ));
    }
    for (i, (e, g)) in x.hosts.iter().zip(&r.hosts).enumerate() {
        out.extend(pair::host_mismatches(&format!("hosts[{i}]"), e, g));
    }
    if x.switch != r.switch {
        out.push(format!(
            "switch: expected {:?}, got {:?}",
            x.switch, r.switch
        ));
    }
    out
}
