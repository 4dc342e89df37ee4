//! Runs a vector: builds the environment for its top, drives the model, the
//! RTL or both in lockstep, applies the independent checks, and compares the
//! results with the blessed expectations.

pub mod common;
pub mod dma_rd;
pub mod dma_wr;
pub mod fabric;
pub mod gbn_check;
pub mod link_check;
pub mod pair;
pub mod req_reads;
pub mod resp_cover;
pub mod resp_reference;
pub mod retx_counters;
pub mod rnic_top;
pub mod rx_reference;
pub mod rx_wire;
pub mod timer_exhaust;
pub mod tx_reference;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rnic_model::dma_rd::{status, DmaRd, DmaRdParams};
use rnic_model::dma_wr::DmaWr;
use rnic_model::rnic_top::RnicTop;
use rnic_model::Dut;

use crate::env::{digest, TlpLogEntry};
use crate::lockstep::{self, Divergence, Env, Finished};
use crate::rtl::{take_assertion_failure, Rtl, RtlDmaRd, RtlDmaWr, RtlRnicTop, RtlTop};
use crate::vcd_model::ModelVcd;
use crate::vector::{CqeResult, Expect, FrameResult, Hex, ReadResult, Top, Vector};
use rnic_model::trace::Trace;

pub use dma_rd::DmaRdEnv;
pub use dma_wr::DmaWrEnv;
pub use rnic_top::RnicTopEnv;

/// Which DUTs a run drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Model,
    Rtl,
    Lockstep,
}

#[derive(Debug, Clone, Default)]
pub struct RunOpts {
    /// Trace every run into `model.vcd` (and `rtl.vcd` when the RTL runs)
    /// here, whatever its outcome.
    pub vcd_dir: Option<PathBuf>,
    /// Where a divergence is traced when `vcd_dir` is not set. `None`:
    /// `out/vcd/<the vector's name, sanitized>`; the CLI passes a directory
    /// named after the vector's file instead, as the name is free text.
    pub divergence_vcd_dir: Option<PathBuf>,
    /// Cycles before the divergence that the VCDs cover.
    pub vcd_window: Option<u64>,
    /// Fabric runs: tick every model-only host every cycle, even an idle
    /// one (the idle fast path off, to measure it or to rule it out).
    pub no_idle_skip: bool,
    /// Fabric runs with no RTL host: tick the hosts on this many threads
    /// (0 or 1: on the caller's thread alone).
    pub host_threads: usize,
}

/// Default for [`RunOpts::vcd_window`].
pub const VCD_WINDOW: u64 = 2000;

/// One read as the client received it.
#[derive(Debug, Clone)]
pub struct ReadOutcome {
    pub status: u8,
    pub data: Vec<u8>,
    pub cycle: u64,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct Report {
    pub name: String,
    pub cycles: u64,
    /// Every request completed before `max_cycles`.
    pub completed: bool,
    pub reads: Vec<ReadResult>,
    pub writes: Vec<Hex>,
    pub frames: Vec<FrameResult>,
    pub cqes: Vec<CqeResult>,
    /// Every frame sent on `tx_*`: (cycle of its first beat, bytes).
    pub tx_frames: Vec<(u64, Vec<u8>)>,
    /// A comment per frame of `tx_frames` ("" for none), for a run whose
    /// link alters frames (a pair vector with link faults): `--pcap`
    /// writes pcapng with the comments then (docs/pair.md).
    pub tx_comments: Option<Vec<String>>,
    pub counters: BTreeMap<String, u64>,
    /// Failed independent checks (host memory, PCIe rules, framing, leaks).
    pub failures: Vec<String>,
    pub divergence: Option<Box<Divergence>>,
    pub tlp_log: Vec<TlpLogEntry>,
    /// Files written: model.vcd and rtl.vcd.
    pub vcd: Vec<PathBuf>,
    /// Why the VCDs asked for could not be written (the path and the OS
    /// reason).
    pub vcd_error: Option<String>,
    /// The functional coverage points this run hit (crate::fcov).
    pub fcov: crate::fcov::Coverage,
    /// NIC-cycles the idle fast path skipped (fabric runs; 0 elsewhere).
    pub idle_skipped: u64,
}

impl Report {
    /// Completed, no divergence, every independent check passed.
    pub fn clean(&self) -> bool {
        self.completed && self.failures.is_empty() && self.divergence.is_none()
    }

    pub fn to_expect(&self) -> Expect {
        Expect {
            cycles: self.cycles,
            reads: self.reads.clone(),
            writes: self.writes.clone(),
            frames: self.frames.clone(),
            cqes: self.cqes.clone(),
            counters: self.counters.clone(),
        }
    }
}

pub fn status_name(s: u8) -> &'static str {
    match s {
        status::OK => "ok",
        status::UR => "ur",
        status::CA => "ca",
        status::POISONED => "poisoned",
        status::TIMEOUT => "timeout",
        _ => "invalid",
    }
}

/// The VCD files written, or why they could not be (path and OS reason).
type Traced = Result<Vec<PathBuf>, String>;

/// Drives one or both DUTs; on divergence, or when asked, replays with VCD
/// tracing.
fn drive<M, T, E>(
    mode: Mode,
    mk_model: impl Fn() -> M,
    mut env: E,
    // Builds the same environment again for a traced replay.
    mk_env: impl Fn() -> E,
    max_cycles: u64,
    opts: &RunOpts,
    name: &str,
) -> (E, Finished, Option<Box<Divergence>>, Traced)
where
    M: Dut<In = T::In, Out = T::Out> + Trace,
    T: RtlTop,
    E: Env<In = T::In, Out = T::Out>,
{
    let (fin, div) = match mode {
        Mode::Model => (
            lockstep::run_single(&mut mk_model(), &mut env, max_cycles),
            None,
        ),
        Mode::Rtl => {
            // Alone, the RTL has nothing to diverge from; a failed assertion
            // still fails the run, as in lockstep.
            let _ = take_assertion_failure();
            let mut rtl = Rtl::<T>::new();
            let fin = lockstep::run_single(&mut rtl, &mut env, max_cycles);
            match take_assertion_failure() {
                None => (fin, None),
                Some(a) => (
                    Finished {
                        cycles: fin.cycles,
                        completed: false,
                    },
                    Some(Box::new(Divergence::from_assertion(T::NAME, a, Vec::new()))),
                ),
            }
        }
        Mode::Lockstep => {
            match lockstep::run(&mut mk_model(), &mut Rtl::<T>::new(), &mut env, max_cycles) {
                Ok(f) => (f, None),
                Err(d) => (
                    Finished {
                        cycles: d.cycle,
                        completed: false,
                    },
                    Some(d),
                ),
            }
        }
    };
    let vcd = match vcd_dir(opts, div.is_some(), name) {
        Some(dir) => {
            let end = fin.cycles;
            let from = end.saturating_sub(opts.vcd_window.unwrap_or(VCD_WINDOW));
            tracing::debug!(
                "replaying cycles 0..={end}, tracing {from}.. into {}",
                dir.display()
            );
            trace_window::<M, T, E>(mode, &mk_model, &mk_env, from, end, &dir)
        }
        None => Ok(Vec::new()),
    };
    (env, fin, div, vcd)
}

/// Where this run is traced, if it is.
pub(crate) fn vcd_dir(opts: &RunOpts, diverged: bool, name: &str) -> Option<PathBuf> {
    match (&opts.vcd_dir, &opts.divergence_vcd_dir) {
        (Some(d), _) => Some(d.clone()),
        (None, _) if !diverged => None,
        (None, Some(d)) => Some(d.clone()),
        (None, None) => Some(Path::new("out/vcd").join(safe_file_name(name))),
    }
}

/// `name` as one file name that stays where it is put: only
/// `[A-Za-z0-9_.-]` (anything else becomes `_`), no leading dot (so never
/// `.` or `..`), never empty.
pub fn safe_file_name(name: &str) -> String {
    let keep = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    let s: String = name
        .chars()
        .map(|c| if keep(c) { c } else { '_' })
        .collect();
    let dots = s.len() - s.trim_start_matches('.').len();
    let s = "_".repeat(dots) + &s[dots..];
    if s.is_empty() {
        "vector".into()
    } else {
        s
    }
}

/// Replays cycles `0..=to` deterministically on the sides `mode` runs,
/// tracing them from cycle `from` on. Errors name the file and the reason.
fn trace_window<M, T, E>(
    mode: Mode,
    mk_model: &impl Fn() -> M,
    mk_env: &impl Fn() -> E,
    from: u64,
    to: u64,
    dir: &Path,
) -> Traced
where
    M: Dut<In = T::In, Out = T::Out> + Trace,
    T: RtlTop,
    E: Env<In = T::In, Out = T::Out>,
{
    let at = |p: &Path| {
        let p = p.to_path_buf();
        move |e: std::io::Error| format!("cannot write {}: {e}", p.display())
    };
    std::fs::create_dir_all(dir).map_err(at(dir))?;
    let (mp, rp) = (dir.join("model.vcd"), dir.join("rtl.vcd"));
    let with_model = mode != Mode::Rtl;
    let with_rtl = mode != Mode::Model;
    let mut model = with_model.then(mk_model);
    let mut rtl = with_rtl.then(Rtl::<T>::new);
    let mut env = mk_env();
    let rtl_out = rtl.as_mut().map(|r| r.reset());
    let mut out = match model.as_mut() {
        Some(m) => m.reset(),
        None => rtl_out.expect("the RTL runs"),
    };
    let mut mv: Option<ModelVcd<T::In, T::Out>> = None;
    for c in 0..=to {
        if c == from {
            if let Some(r) = rtl.as_mut() {
                r.try_trace_open(&rp).map_err(at(&rp))?;
            }
            if model.is_some() {
                let regs = model.as_ref().map(|m| m as &dyn Trace);
                mv = Some(ModelVcd::create(&mp, T::NAME, regs).map_err(at(&mp))?);
            }
        }
        let i = env.step(c, &out);
        // The environment follows the model when both run, as in lockstep.
        let rtl_out = rtl.as_mut().map(|r| r.tick(&i));
        let next = match model.as_mut() {
            Some(m) => m.tick(&i),
            None => rtl_out.expect("the RTL runs"),
        };
        if let Some(v) = mv.as_mut() {
            let regs = model.as_ref().map(|m| m as &dyn Trace);
            v.cycle(c, &i, &out, &next, regs).map_err(at(&mp))?;
        }
        out = next;
    }
    if let Some(r) = rtl.as_mut() {
        r.trace_close();
    }
    if let Some(v) = mv {
        v.finish().map_err(at(&mp))?;
    }
    let written = [(with_model, mp), (with_rtl, rp)];
    Ok(written.into_iter().filter(|w| w.0).map(|w| w.1).collect())
}

/// Runs `v` in `mode`. Errors only for a vector the environment cannot be
/// built from; everything that goes wrong in the run is in the report.
pub fn run(v: &Vector, mode: Mode, opts: &RunOpts) -> Result<Report, String> {
    let mut report = Report {
        name: v.name.clone(),
        cycles: 0,
        completed: false,
        reads: Vec::new(),
        writes: Vec::new(),
        frames: Vec::new(),
        cqes: Vec::new(),
        tx_frames: Vec::new(),
        tx_comments: None,
        counters: BTreeMap::new(),
        failures: Vec::new(),
        divergence: None,
        tlp_log: Vec::new(),
        vcd: Vec::new(),
        vcd_error: None,
        fcov: Default::default(),
        idle_skipped: 0,
    };
    match v.top {
        Top::DmaRd => {
            let params = DmaRdParams::default();
            let (mut env, fin, div, vcd) = drive::<_, RtlDmaRdTop, _>(
                mode,
                || DmaRd::new(params),
                DmaRdEnv::new(v)?,
                || DmaRdEnv::new(v).expect("built once already"),
                v.max_cycles,
                opts,
                &v.name,
            );
            if div.is_none() {
                env.finish_checks(fin.cycles, params.buf_lines as u16);
            }
            report.fcov = crate::fcov::sample::dma_rd(&env);
            let o = env.last_out;
            report
                .counters
                .insert("cnt_cpl_unexpected".into(), o.cnt_cpl_unexpected as u64);
            report
                .counters
                .insert("cnt_cpl_malformed".into(), o.cnt_cpl_malformed as u64);
            report
                .counters
                .insert("cnt_cpl_timeout".into(), o.cnt_cpl_timeout as u64);
            report.reads = env
                .results
                .iter()
                .map(|r| ReadResult {
                    status: status_name(r.status).into(),
                    digest: Hex(digest(&r.data)),
                })
                .collect();
            finish_report(&mut report, fin, div, vcd, env.common);
        }
        Top::DmaWr => {
            let (mut env, fin, div, vcd) = drive::<_, RtlDmaWrTop, _>(
                mode,
                DmaWr::new,
                DmaWrEnv::new(v)?,
                || DmaWrEnv::new(v).expect("built once already"),
                v.max_cycles,
                opts,
                &v.name,
            );
            if div.is_none() {
                env.finish_checks(fin.cycles);
            }
            report.fcov = crate::fcov::sample::dma_wr(&env);
            report.writes = v
                .writes
                .iter()
                .map(|w| Hex(env.common.mem.digest_range(w.addr.0, w.len as usize)))
                .collect();
            finish_report(&mut report, fin, div, vcd, env.common);
        }
        Top::RnicTop => {
            let (mut env, fin, div, vcd) = drive::<_, RtlRnicTopTop, _>(
                mode,
                RnicTop::new,
                RnicTopEnv::new(v)?,
                || RnicTopEnv::new(v).expect("built once already"),
                v.max_cycles,
                opts,
                &v.name,
            );
            if div.is_none() {
                env.finish_checks(fin.cycles);
                rx_reference::check_ack_counters(&mut env, fin.cycles);
            }
            report.fcov = crate::fcov::sample::nic(&env);
            report.frames = env.frame_results();
            report.cqes = env.cqe_results();
            report.counters = env
                .counters
                .iter()
                .map(|(n, v)| (n.to_string(), *v as u64))
                .collect();
            report.tx_frames = std::mem::take(&mut env.frames);
            finish_report(&mut report, fin, div, vcd, env.common);
        }
    }
    Ok(report)
}

type RtlDmaRdTop = <RtlDmaRd as RtlAlias>::Top;
type RtlDmaWrTop = <RtlDmaWr as RtlAlias>::Top;
type RtlRnicTopTop = <RtlRnicTop as RtlAlias>::Top;

/// Names the top type behind a generated `RtlFoo` alias.
trait RtlAlias {
    type Top: RtlTop;
}
impl<T: RtlTop> RtlAlias for Rtl<T> {
    type Top = T;
}

fn finish_report(
    report: &mut Report,
    fin: Finished,
    div: Option<Box<Divergence>>,
    vcd: Traced,
    common: common::Common,
) {
    report.cycles = fin.cycles;
    report.completed = fin.completed;
    report.divergence = div;
    match vcd {
        Ok(files) => report.vcd = files,
        Err(e) => report.vcd_error = Some(e),
    }
    report.failures = common.failures;
    report.tlp_log = common.rc.log().to_vec();
}

/// Differences between a clean run's results and the blessed expectations.
pub fn mismatches(v: &Vector, r: &Report) -> Vec<String> {
    let Some(x) = &v.expect else {
        return vec!["no expected results: run `rnic bless` on this vector".into()];
    };
    let mut out = Vec::new();
    if x.cycles != r.cycles {
        out.push(format!("cycles: expected {}, got {}", x.cycles, r.cycles));
    }
    for (k, (e, g)) in x.reads.iter().zip(&r.reads).enumerate() {
        if e != g {
            out.push(format!(
                "reads[{k}]: expected {} {:#x}, got {} {:#x}",
                e.status, e.digest.0, g.status, g.digest.0
            ));
        }
    }
    if x.reads.len() != r.reads.len() {
        out.push(format!(
            "reads: expected {} results, got {}",
            x.reads.len(),
            r.reads.len()
        ));
    }
    for (k, (e, g)) in x.writes.iter().zip(&r.writes).enumerate() {
        if e != g {
            out.push(format!(
                "writes[{k}]: expected digest {:#x}, got {:#x}",
                e.0, g.0
            ));
        }
    }
    if x.writes.len() != r.writes.len() {
        out.push(format!(
            "writes: expected {} results, got {}",
            x.writes.len(),
            r.writes.len()
        ));
    }
    for (k, (e, g)) in x.frames.iter().zip(&r.frames).enumerate() {
        if e != g {
            out.push(format!(
                "frames[{k}]: expected {} ({} bytes, {:#x}), got {} ({} bytes, {:#x})",
                e.what, e.len, e.digest.0, g.what, g.len, g.digest.0
            ));
        }
    }
    if x.frames.len() != r.frames.len() {
        out.push(format!(
            "frames: expected {}, got {}",
            x.frames.len(),
            r.frames.len()
        ));
    }
    for (k, (e, g)) in x.cqes.iter().zip(&r.cqes).enumerate() {
        if e != g {
            out.push(format!("cqes[{k}]: expected {e:?}, got {g:?}"));
        }
    }
    if x.cqes.len() != r.cqes.len() {
        out.push(format!(
            "cqes: expected {}, got {}",
            x.cqes.len(),
            r.cqes.len()
        ));
    }
    if x.counters != r.counters {
        out.push(format!(
            "counters: expected {:?}, got {:?}",
            x.counters, r.counters
        ));
    }
    out
}

/// Samples for `rnic run --plot`: runs `v` (an `rnic_top` vector) on the
/// model and records the DCQCN state of its QPs (those with congestion
/// control, else all) and the PFC pause bits, about 2000 samples over the run.
pub fn cc_trace(v: &Vector) -> Result<crate::plot::CcTrace, String> {
    if v.top != Top::RnicTop {
        return Err(format!("{}: --plot needs an rnic_top vector", v.name));
    }
    let mut qps: Vec<u32> = v.qps.iter().filter(|q| q.cc).map(|q| q.qp).collect();
    if qps.is_empty() {
        qps = v.qps.iter().map(|q| q.qp).collect();
    }
    // A first run finds the length, so that the samples spread over it.
    let mut env = RnicTopEnv::new(v)?;
    let fin = lockstep::run_single(&mut RnicTop::new(), &mut env, v.max_cycles);
    let every = (fin.cycles / 2000).max(1);
    let mut t = crate::plot::CcTrace {
        qps: qps.clone(),
        rc: vec![Vec::new(); qps.len()],
        rt: vec![Vec::new(); qps.len()],
        alpha: vec![Vec::new(); qps.len()],
        clock_mhz: crate::vector::rx::CLOCK_MHZ,
        ..Default::default()
    };
    let mut env = RnicTopEnv::new(v)?;
    let mut model = RnicTop::new();
    let mut out = model.reset();
    for c in 0..=fin.cycles {
        if c % every == 0 {
            let p = model.cc_probe();
            t.cycles.push(c);
            for (k, &q) in qps.iter().enumerate() {
                t.rc[k].push(crate::vector::rx::units_to_gbps(p.rc[q as usize]));
                t.rt[k].push(crate::vector::rx::units_to_gbps(p.rt[q as usize]));
                t.alpha[k].push(p.alpha[q as usize] as f64 / 1024.0);
            }
            t.pause.push(p.pause);
        }
        let i = env.step(c, &out);
        out = model.tick(&i);
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vector_name_cannot_lead_out_of_the_vcd_directory() {
        assert_eq!(safe_file_name("rd_64k"), "rd_64k");
        assert_eq!(safe_file_name("../../x"), "___.._x");
        assert_eq!(safe_file_name("a/b c"), "a_b_c");
        assert_eq!(safe_file_name(".."), "__");
        assert_eq!(safe_file_name(""), "vector");
        let opts = RunOpts::default();
        assert_eq!(vcd_dir(&opts, false, "x"), None);
        assert_eq!(
            vcd_dir(&opts, true, "../../x"),
            Some(PathBuf::from("out/vcd/___.._x"))
        );
    }
}
