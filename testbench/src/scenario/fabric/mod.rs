//! N NICs and a switch in one run (docs/fabric.md). Each host is the
//! single-NIC environment ([`RnicTopEnv`], every end-of-run check of a NIC
//! in a pair) with a MAC that paces its `tx_*` to the line rate; every NIC
//! runs the `rnic_top` model, and the hosts the vector names run their
//! Verilated `rnic_top` in lockstep too. Frames cross a wire (a delay) into
//! a switch model (`rnic_switch`), from switch to switch as the topology
//! ([`topology`]) wires them, and into the destination NIC's `rx_*`, pause
//! frames both ways on every wire.
//!
//! On top of each NIC's own checks the fabric checks delivery against the
//! bytes sent ([`checks`]) and the switch's conservation after every step.

pub mod checks;
mod crew;
pub mod deadlock;
mod doze;
pub mod mac;
mod replay;
pub mod topology;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::Arc;

use rnic_model::rnic_top::{RnicTop, RnicTopIn, RnicTopOut};
use rnic_switch::{Departure, Switch};

use super::pair::{self, Duts, NicModel};
use super::{Mode, Report, RnicTopEnv};
use crate::lockstep::{compare, Divergence, Finished};
use crate::rtl::take_assertion_failure;
use crate::vector::{Expect, FabricExpect, FabricVector};
use crew::Crew;
use doze::Doze;
use topology::{End, Topology};

/// The priority the NICs' RoCE traffic takes (DSCP 26 >> 3) and the
/// switch keeps lossless.
pub const LOSSLESS: usize = 3;

/// Cycles between samples of the switch's queues.
pub const SAMPLE_EVERY: u64 = 500;

/// One sample of the fabric: (cycle, bytes in all switches' buffers,
/// bytes queued on the lossless priority of the switch port facing each
/// host, and of each switch port facing another switch, in the order of
/// [`FabricReport::links`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub cycle: u64,
    pub buffer: u64,
    pub lossless: Vec<u64>,
    pub links: Vec<u64>,
}

/// A frame on a wire into a switch, ordered by the cycle it has fully
/// arrived, then by when it was sent (a deterministic order).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: u64,
    seq: u64,
    switch: usize,
    port: usize,
    frame: Arc<[u8]>,
}

/// The environment of a fabric: every host, the wires and the switches.
pub struct FabricEnv {
    pub nic: Vec<RnicTopEnv>,
    pub switches: Vec<Switch>,
    pub topo: Topology,
    delay: u64,
    /// Per host: frames of its `tx_*` handed to the wire so far.
    forwarded: Vec<usize>,
    /// Frames on wires into switches, earliest first.
    wires: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    /// Per switch: a frame arrived since it last advanced.
    arrived: Vec<bool>,
    /// Every frame a switch sent to a host, in order, `port` = the host.
    pub out: Vec<Departure>,
    /// Every frame a switch sent to another switch, in order: (its first
    /// cycle, the sending switch, the receiving switch, the frame).
    pub between: Vec<(u64, usize, usize, Arc<[u8]>)>,
    /// The first few times a switch did not conserve frames.
    pub conservation: Vec<String>,
    pub samples: Vec<Sample>,
    /// Per host: its expectation following the ACKs that reached it, as
    /// on a faulty link of a pair. Always: a switch may drop (a watchdog,
    /// PFC off), and without ACKs the reference holds an RC QP to the
    /// WQEs it starts before its completions stall (ACK_STALL), fewer than
    /// a long flow posts.
    follow: Vec<pair::AckFollower>,
    /// The last cycle a frame of data (not a pause) left any switch.
    pub last_data_out: Option<u64>,
    /// Every switch port wired to another switch: (switch, port, the
    /// switch at the other end).
    links: Vec<(usize, usize, usize)>,
}

impl FabricEnv {
    pub fn new(v: &FabricVector) -> Result<Self, String> {
        let topo = topology::build(v)?;
        let links = topo.switch_links();
        let switches = topo
            .switches
            .iter()
            .enumerate()
            .map(|(k, c)| {
                Switch::new(c.clone()).map_err(|e| format!("switch {}: {e}", topo.names[k]))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut nic = Vec::with_capacity(v.hosts.len());
        for (i, h) in v.hosts.iter().enumerate() {
            let mut e = RnicTopEnv::new_in_pair(h).map_err(|e| format!("hosts[{i}]: {e}"))?;
            e.mac = Some(mac::MacPacer::new(v.link.bits_per_cycle));
            nic.push(e);
        }
        Ok(FabricEnv {
            forwarded: vec![0; nic.len()],
            arrived: vec![false; switches.len()],
            nic,
            switches,
            topo,
            delay: v.link.delay,
            wires: BinaryHeap::new(),
            seq: 0,
            out: Vec::new(),
            between: Vec::new(),
            conservation: Vec::new(),
            samples: Vec::new(),
            follow: (0..v.hosts.len()).map(|_| Default::default()).collect(),
            last_data_out: None,
            links,
        })
    }

    fn send(&mut self, at: u64, switch: usize, port: usize, frame: Arc<[u8]>) {
        self.seq += 1;
        self.wires.push(Reverse(InFlight {
            at,
            seq: self.seq,
            switch,
            port,
            frame,
        }));
    }

    /// Inputs of every NIC for `cycle`, given their outputs in it.
    pub fn step(&mut self, cycle: u64, outs: &[&RnicTopOut]) -> Vec<RnicTopIn> {
        for (e, f) in self.nic.iter_mut().zip(&mut self.follow) {
            f.follow(e);
            f.follow_timer(e, cycle);
        }
        let ins: Vec<RnicTopIn> = self
            .nic
            .iter_mut()
            .zip(outs)
            .map(|(e, o)| e.step(cycle, o))
            .collect();
        for h in 0..self.nic.len() {
            while self.forwarded[h] < self.nic[h].frames.len() {
                let k = self.forwarded[h];
                let last = self.nic[h].frame_ends[k];
                let f: Arc<[u8]> = pair::mac_pad(&self.nic[h].frames[k].1).into();
                let (s, p) = self.topo.host_at[h];
                self.send(last + 1 + self.delay, s, p, f);
                self.forwarded[h] += 1;
            }
        }
        // Every frame sent arrives later than the cycle it was sent in, so
        // each one is taken in the cycle it has fully arrived.
        while self.wires.peek().is_some_and(|f| f.0.at <= cycle) {
            let Reverse(f) = self.wires.pop().expect("peeked");
            self.switches[f.switch].receive(f.port, f.at, &f.frame);
            self.arrived[f.switch] = true;
        }
        for s in 0..self.switches.len() {
            let due = self.switches[s].next_event().is_some_and(|t| t <= cycle);
            if !(std::mem::take(&mut self.arrived[s]) || due) {
                continue;
            }
            for mut d in self.switches[s].advance(cycle) {
                if !super::rnic_top::is_pfc(&d.frame) {
                    self.last_data_out = Some(d.first);
                }
                let at = d.last + 1 + self.delay;
                match self.topo.wires[s][d.port] {
                    End::Host(h) => {
                        self.nic[h].rx.push_link(at, d.frame.clone());
                        d.port = h;
                        self.out.push(d);
                    }
                    End::Switch(n, p) => {
                        self.between.push((d.first, s, n, d.frame.clone()));
                        self.send(at, n, p, d.frame);
                    }
                }
            }
            if let Err(m) = self.switches[s].check_conservation() {
                if self.conservation.len() < 8 {
                    let name = &self.topo.names[s];
                    self.conservation
                        .push(format!("cycle {cycle}: {name}: {m}"));
                }
            }
        }
        if cycle.is_multiple_of(SAMPLE_EVERY) {
            self.samples.push(Sample {
                cycle,
                buffer: self.switches.iter().map(Switch::buffer_used).sum(),
                lossless: self
                    .topo
                    .host_at
                    .iter()
                    .map(|&(s, p)| self.switches[s].queue_depth(p, LOSSLESS))
                    .collect(),
                links: self
                    .links
                    .iter()
                    .map(|&(s, p, _)| self.switches[s].queue_depth(p, LOSSLESS))
                    .collect(),
            });
        }
        // A NIC's counters are read only once nothing more can reach it:
        // every wire and switch empty and no other NIC still sending.
        let quiet = self.wires.is_empty()
            && self.switches.iter().all(|s| s.buffer_used() == 0)
            && self.nic.iter().all(|e| e.rx.idle());
        let sending: Vec<bool> = self.nic.iter().map(|e| e.may_send(cycle)).collect();
        let senders = sending.iter().filter(|&&x| x).count();
        for (e, me) in self.nic.iter_mut().zip(sending) {
            e.hold = !quiet || senders > usize::from(me);
        }
        ins
    }

    pub fn finished(&self) -> bool {
        self.nic.iter().all(RnicTopEnv::finished)
    }

    /// Every host's own checks and go-back-N, DCQCN's counters against the
    /// CNPs each received, the delivery checks and conservation. A
    /// deadlock vector's hosts never settle: only the checks that hold
    /// mid-run (PCIe rules, delivery) apply, and the deadlock's own.
    fn finish_checks(&mut self, v: &FabricVector, cycle: u64) -> (checks::Delivery, Vec<String>) {
        let mut out = if v.deadlock.is_some() {
            self.nic
                .iter()
                .enumerate()
                .flat_map(|(i, e)| e.common.failures.iter().map(move |f| format!("h{i}: {f}")))
                .collect()
        } else {
            self.settled_host_checks(v, cycle)
        };
        let (d, p) = checks::check(
            &self.nic,
            &self.out,
            &self.switches,
            &self.topo.host_at,
            &[LOSSLESS],
            v.deadlock.is_some(),
        );
        out.extend(p.into_iter().map(|m| format!("fabric: {m}")));
        out.extend(
            self.conservation
                .iter()
                .map(|m| format!("switch conservation: {m}")),
        );
        if let Some(dl) = &v.deadlock {
            out.extend(
                deadlock::check(dl, &self.stall(), cycle, self.finished())
                    .into_iter()
                    .map(|m| format!("deadlock: {m}")),
            );
        }
        (d, out)
    }

    /// Each host's own end-of-run checks, once it has settled.
    fn settled_host_checks(&mut self, v: &FabricVector, cycle: u64) -> Vec<String> {
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
        out
    }

    /// Names of the switch-to-switch links, `ring0>ring1`, in the order
    /// of [`Sample::links`].
    pub fn link_names(&self) -> Vec<String> {
        self.links
            .iter()
            .map(|&(s, _, n)| format!("{}>{}", self.topo.names[s], self.topo.names[n]))
            .collect()
    }

    /// The fabric's state of standing still now.
    pub fn stall(&self) -> deadlock::Stall {
        deadlock::stall(&self.switches, &self.topo, self.last_data_out)
    }

    /// Every switch's non-zero counters, named `<switch>.<counter>`.
    fn counters(&self) -> BTreeMap<String, u64> {
        let mut m = BTreeMap::new();
        for (k, s) in self.switches.iter().enumerate() {
            for (n, v) in s.counters().named() {
                m.insert(format!("{}.{n}", self.topo.names[k]), v);
            }
        }
        m
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
    /// Per host: the cycle of each SQ doorbell, in order.
    pub doorbells: Vec<Vec<u64>>,
    /// Per host: every CQE written, with its cycle (filled when the
    /// end-of-run checks ran).
    pub cqes: Vec<Vec<super::rnic_top::CqeWrite>>,
    /// Every pause frame a switch sent a host: (host, the cycle it takes
    /// effect there, i.e. after its last bit and the link, the frame).
    pub pauses: Vec<(usize, u64, Vec<u8>)>,
    /// How the fabric stood at the end of the run (the cycle of paused
    /// links, if any, and the last frame of data out).
    pub stall: deadlock::Stall,
    /// The switch-to-switch links, `from>to`, as [`Sample::links`] has them.
    pub links: Vec<String>,
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

/// RED's (Kmin, Kmax) in bytes on the lossless priority of the vector's
/// switches, if they mark.
pub fn red_thresholds(v: &FabricVector) -> Option<(u64, u64)> {
    let c = topology::base_config(v, 1);
    c.queues[LOSSLESS]
        .red
        .as_ref()
        .map(|r| (r.kmin_bytes, r.kmax_bytes))
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

/// The environment after a run, how it ended, its divergence, and the
/// NIC-cycles the idle fast path skipped.
type Simulated = (FabricEnv, Finished, Option<Box<Divergence>>, u64);

/// `idle`: model-only hosts rest while idle ([`doze`]); hosts with their
/// RTL always tick. `threads` > 1 ticks the hosts on that many threads
/// ([`crew`]) when no host runs its RTL.
fn simulate<M: NicModel + Send + 'static>(
    v: &FabricVector,
    mode: Mode,
    idle: bool,
    threads: usize,
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
    if threads > 1 && duts.iter().all(|d| d.rtl.is_none()) {
        let models = duts.iter_mut().map(|d| d.model.take().expect("a model"));
        let outs: Vec<RnicTopOut> = outs.iter().map(|o| o.0).collect();
        let crew = Crew::new(models.collect(), threads, idle, &outs);
        return Ok(on_threads(env, crew, outs, v.max_cycles));
    }
    let mut doze: Vec<Doze> = (0..n).map(|_| Doze::default()).collect();
    let rested = |doze: &[Doze]| doze.iter().map(|d| d.rested).sum::<u64>();
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
                    return Ok((env, fin, Some(Box::new(d)), rested(&doze)));
                }
            }
        }
        if env.finished() || cycle >= v.max_cycles {
            let fin = Finished {
                cycles: cycle,
                completed: env.finished(),
            };
            for (z, d) in doze.iter_mut().zip(&mut duts) {
                if let Some(m) = d.model.as_mut() {
                    z.wake(m);
                }
            }
            return Ok((env, fin, None, rested(&doze)));
        }
        let refs: Vec<&RnicTopOut> = outs.iter().map(|o| &o.0).collect();
        let ins = env.step(cycle, &refs);
        for (i, d) in duts.iter_mut().enumerate() {
            if let (true, Some(m), None) = (idle, d.model.as_mut(), &d.rtl) {
                if doze[i].rests(cycle, &ins[i], m) {
                    continue;
                }
            }
            outs[i] = d.tick(&ins[i]);
            if let Some(a) = take_assertion_failure() {
                let d = Divergence::from_assertion(block_name(i), a, Vec::new());
                let fin = Finished {
                    cycles: cycle + 1,
                    completed: false,
                };
                return Ok((env, fin, Some(Box::new(d)), rested(&doze)));
            }
        }
        cycle += 1;
    }
}

/// [`simulate`]'s loop with the hosts on a [`Crew`]: no RTL, so nothing to
/// compare and no assertion to catch.
fn on_threads<M: NicModel + Send + 'static>(
    mut env: FabricEnv,
    mut crew: Crew<M>,
    mut outs: Vec<RnicTopOut>,
    max_cycles: u64,
) -> Simulated {
    let mut cycle = 0u64;
    while !env.finished() && cycle < max_cycles {
        let refs: Vec<&RnicTopOut> = outs.iter().collect();
        let ins = env.step(cycle, &refs);
        crew.tick(cycle, &ins, &mut outs);
        cycle += 1;
    }
    let fin = Finished {
        cycles: cycle,
        completed: env.finished(),
    };
    (env, fin, None, crew.finish())
}

/// Runs a fabric vector: every host's model, and in any mode but
/// [`Mode::Model`] the RTL of the hosts the vector names, in lockstep.
/// Errors only for a vector the fabric cannot be built from.
pub fn run(v: &FabricVector, mode: Mode, opts: &super::RunOpts) -> Result<FabricReport, String> {
    run_with(v, mode, opts, |_| RnicTop::new())
}

/// [`run`] with the models `mk_model(i)`: a self-test breaks one.
pub fn run_with<M: NicModel + Send + 'static>(
    v: &FabricVector,
    mode: Mode,
    opts: &super::RunOpts,
    mk_model: impl Fn(usize) -> M,
) -> Result<FabricReport, String> {
    let (mut env, fin, div, idle_skipped) =
        simulate(v, mode, !opts.no_idle_skip, opts.host_threads, &mk_model)?;
    // Waveforms when asked for, and of a divergence: the run again, traced.
    let (vcd, vcd_error) = match super::vcd_dir(opts, div.is_some(), &v.name) {
        Some(dir) => {
            let end = fin.cycles;
            let from = end.saturating_sub(opts.vcd_window.unwrap_or(super::VCD_WINDOW));
            match replay::trace(v, mode, &mk_model, from, end, &dir) {
                Ok(files) => (files, None),
                Err(e) => (Vec::new(), Some(e)),
            }
        }
        None => (Vec::new(), None),
    };
    let (delivery, failures) = if div.is_none() {
        env.finish_checks(v, fin.cycles)
    } else {
        (checks::Delivery::default(), Vec::new())
    };
    let mut fcov = crate::fcov::Coverage::default();
    for e in &env.nic {
        fcov.merge(&crate::fcov::sample::nic(e));
    }
    for s in &env.switches {
        crate::fcov::sample::switch(&mut fcov, s.counters());
    }
    // Every link in time order: each host's frames into the switch, the
    // switches' frames out to hosts and to each other, each named by its
    // link.
    let mut tx: Vec<(u64, Vec<u8>, String)> = Vec::new();
    for (i, e) in env.nic.iter().enumerate() {
        for (first, b) in &e.frames {
            tx.push((*first, b.clone(), format!("h{i} to switch")));
        }
    }
    for d in &env.out {
        tx.push((d.first, d.frame.to_vec(), format!("switch to h{}", d.port)));
    }
    for (first, a, b, f) in &env.between {
        let n = &env.topo.names;
        tx.push((*first, f.to_vec(), format!("{} to {}", n[*a], n[*b])));
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
    let switch = env.counters();
    let doorbells = env.nic.iter().map(|e| e.doorbell_cycles.clone()).collect();
    let cqes = env.nic.iter().map(|e| e.cqe_log.clone()).collect();
    let pauses = env
        .out
        .iter()
        .filter(|d| super::rnic_top::is_pfc(&d.frame))
        .map(|d| (d.port, d.last + 1 + v.link.delay, d.frame.to_vec()))
        .collect();
    let stall = env.stall();
    let links = env.link_names();
    // A deadlock vector is complete when it ran to its end without
    // finishing, the way it is meant to (its checks say whether it stood
    // still); one that finished fails those checks.
    let completed = if v.deadlock.is_some() {
        div.is_none() && fin.cycles >= v.max_cycles
    } else {
        fin.completed
    };
    let report = Report {
        name: v.name.clone(),
        cycles: fin.cycles,
        completed,
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
        vcd,
        vcd_error,
        fcov,
        idle_skipped,
    };
    Ok(FabricReport {
        report,
        hosts,
        switch,
        delivery,
        samples: std::mem::take(&mut env.samples),
        spans,
        doorbells,
        cqes,
        pauses,
        stall,
        links,
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
