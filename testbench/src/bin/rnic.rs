//! `rnic`: run test vectors on the model, in lockstep with the RTL, or bless
//! their expected results.
//!
//! Exit status: 0 every vector passed, 1 a divergence or a result mismatch,
//! 2 bad input (a path or vector that does not load, outputs that clash or
//! cannot be written).
//!
//! Vectors run on `--jobs` worker threads, each run with its own model and
//! its own Verilated model (each with its own `VerilatedContext`; see
//! `rtl_shim.h`). Everything whose order shows (the lines on stdout, the
//! TLP log, the JUnit report) and every write to a vector file (`bless`)
//! happens on the main thread, in the order of the sorted vector list.

// Beside this file, not in src/bin/ itself, where Cargo would take each
// file for a binary of its own.
#[path = "rnic/junit.rs"]
mod junit;
#[path = "rnic/pool.rs"]
mod pool;

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use rnic_testbench::scenario::{self, Mode, Report, RunOpts};
use rnic_testbench::vector::{self, AnyVector, FabricVector};

#[derive(Parser)]
#[command(
    name = "rnic",
    version,
    about = "RoCEv2 RNIC co-simulation: model, RTL, lockstep"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run vectors on the Rust model alone (fast; no Verilator needed at run time).
    Run(RunArgs),
    /// Run vectors on the model and the RTL in lockstep, comparing every
    /// output port every cycle.
    Cosim(RunArgs),
    /// Run vectors in lockstep and, when every independent check passes,
    /// write the results into the vector's `expect`.
    Bless(RunArgs),
    /// Summarize Verilator coverage data (`*.dat`, e.g. from
    /// scripts/coverage.sh) per RTL block: one Markdown table per file.
    Coverage(CoverageArgs),
    /// Functional coverage files (`--fcov` of run/cosim), merged, against
    /// the points and the known holes: a table per group.
    Fcov(FcovArgs),
}

#[derive(Args)]
struct FcovArgs {
    /// Files written by `rnic cosim --fcov` (or `run --fcov`); several
    /// (e.g. one per CI shard) are merged.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// List every point missed, then every known hole with its reason.
    #[arg(long)]
    holes: bool,
    /// Exit 1 when a point is neither hit nor a known hole, or a known
    /// hole was hit (take it off testbench/src/fcov/holes.txt).
    #[arg(long)]
    check: bool,
}

/// `rnic fcov`: merged hits against the points; bad input exits 2.
fn fcov_report(a: &FcovArgs) -> Result<ExitCode> {
    use rnic_testbench::fcov;
    let mut c = fcov::Coverage::default();
    for f in &a.files {
        c.merge(&fcov::load(f).map_err(anyhow::Error::msg)?);
    }
    print!("{}", fcov::table(&c).map_err(anyhow::Error::msg)?);
    let (missed, stale) = fcov::check(&c).map_err(anyhow::Error::msg)?;
    if a.holes {
        println!("\nmissed (not a known hole):");
        for p in &missed {
            println!("  {p}");
        }
        println!("\nknown holes:");
        for (p, why) in fcov::holes().map_err(anyhow::Error::msg)? {
            println!("  {p}: {why}");
        }
    }
    for p in &stale {
        println!("hit, but listed as a known hole: {p}");
    }
    if a.check && !(missed.is_empty() && stale.is_empty()) {
        if !a.holes {
            for p in &missed {
                println!("missed: {p}");
            }
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
struct CoverageArgs {
    /// Coverage data files, as verilator_coverage --write produces.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// One table with the files side by side (percentages, in file order,
    /// each file named by its stem) instead of one table per file.
    #[arg(long, conflicts_with = "holes")]
    side_by_side: bool,
    /// List every point never hit (`file:line kind block what`, a toggle
    /// point per signal bit) instead of the totals.
    #[arg(long)]
    holes: bool,
}

/// `rnic coverage`: a table per file on stdout; a file that does not read
/// or parse is bad input (exit 2), named with the reason.
fn coverage_tables(a: &CoverageArgs) -> Result<ExitCode> {
    use rnic_testbench::coverage;
    let mut runs = Vec::new();
    for f in &a.files {
        let text = std::fs::read_to_string(f).with_context(|| format!("{}", f.display()))?;
        let points = coverage::parse(&text).with_context(|| format!("{}", f.display()))?;
        if a.holes {
            print!("{}", coverage::holes(&points));
            continue;
        }
        let stem = f.file_stem().unwrap_or_default().to_string_lossy();
        runs.push((stem.into_owned(), coverage::summarize(&points)));
    }
    if a.side_by_side {
        let named: Vec<(&str, &coverage::Summary)> =
            runs.iter().map(|(n, s)| (n.as_str(), s)).collect();
        print!("{}", coverage::side_by_side(&named));
    } else if !a.holes {
        for (f, (_, s)) in a.files.iter().zip(&runs) {
            print!("{}\n\n{}\n", f.display(), s.table());
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Args)]
struct RunArgs {
    /// Vector files or directories (searched for *.json; links followed,
    /// each real file run once).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Write model.vcd (and rtl.vcd when the RTL runs) to DIR/<vector>:
    /// the file's stem, or its path under a directory argument without
    /// `.json`. Without it, a divergence is traced into out/vcd/<vector>.
    #[arg(long, value_name = "DIR")]
    vcd: Option<PathBuf>,
    /// Cycles of waveform before the end or the divergence.
    #[arg(long, value_name = "CYCLES")]
    vcd_window: Option<u64>,
    /// Log every TLP, one per line: `CYCLE rq: HEX` or `CYCLE rc: HEX`.
    #[arg(long, value_name = "FILE")]
    tlp_log: Option<PathBuf>,
    /// Write every frame sent on `tx_*` as pcap (timestamp = cycle x clock
    /// period): to FILE for one vector, to FILE/<vector>.pcap for several
    /// (<vector> as for --vcd).
    #[arg(long, value_name = "FILE")]
    pcap: Option<PathBuf>,
    /// Draw per-QP DCQCN current/target rate, alpha and the PFC pause
    /// state over time (SVG, sampled from the model; rnic_top vectors),
    /// or a fabric's queues toward each host and the pauses sent to each
    /// (fabric vectors): to FILE for one vector, to FILE/<vector>.svg for
    /// several (<vector> as for --vcd). Not for system vectors.
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// One JSON object per vector on stdout instead of text.
    #[arg(long)]
    json: bool,
    /// Run N vectors at a time, each on its own thread (default: the
    /// number of cores). Results are printed in path order regardless.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Run only shard K of N (1 <= K <= N): the vectors whose index in the
    /// sorted list, counted from 0, is K-1 modulo N. The N shards together
    /// run every vector once.
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<Shard>,
    /// Stop at the first vector that fails: start no other, and leave out
    /// the results of those already running (mutation testing wants a
    /// verdict, not the list).
    #[arg(long)]
    fail_fast: bool,
    /// Also write the results as JUnit XML to FILE (atomically: a
    /// temporary file in FILE's directory, renamed at the end).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write the functional coverage points the passing vectors hit to
    /// FILE (JSON, atomically); `rnic fcov FILE` reports them.
    #[arg(long, value_name = "FILE")]
    fcov: Option<PathBuf>,
    /// Fabric vectors: run the RTL of these hosts (indices, e.g. `0,3`) in
    /// lockstep with their models, in place of the vector's `rtl` list;
    /// every other host runs its model only. `--rtl none` runs no RTL.
    #[arg(long, value_name = "HOSTS", value_parser = parse_hosts)]
    rtl: Option<Hosts>,
    /// Fabric vectors: tick every model-only host every cycle, idle or
    /// not (the idle fast path off; results are the same, only slower).
    #[arg(long)]
    no_idle_skip: bool,
    /// Fabric vectors with no RTL host: tick the hosts on N threads, each
    /// spinning while it waits (a core each, or slower; results are the
    /// same). Default 1.
    #[arg(long, value_name = "N", default_value_t = 1)]
    host_threads: usize,
}

/// `--rtl 0,3` (or `none`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hosts(Vec<usize>);

fn parse_hosts(s: &str) -> Result<Hosts, String> {
    if s == "none" {
        return Ok(Hosts(Vec::new()));
    }
    s.split(',')
        .map(|h| {
            h.trim()
                .parse::<usize>()
                .map_err(|_| format!("{h:?} is not a host index (0, 1, ...)"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Hosts)
}

/// `--shard K/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shard {
    k: usize,
    n: usize,
}

impl Shard {
    /// Whether vector `i` (0-based, of the sorted list) is this shard's.
    fn has(self, i: usize) -> bool {
        i % self.n == self.k - 1
    }
}

fn parse_shard(s: &str) -> Result<Shard, String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| "expected K/N, shard K of N, e.g. 1/4".to_string())?;
    let num = |x: &str, what: &str| {
        x.parse::<usize>()
            .map_err(|_| format!("{what} ({x}) is not a whole number; expected K/N, e.g. 1/4"))
    };
    let (k, n) = (num(k, "K")?, num(n, "N")?);
    if n == 0 {
        return Err("N must be at least 1".into());
    }
    if !(1..=n).contains(&k) {
        return Err(format!("K must be between 1 and N ({n})"));
    }
    Ok(Shard { k, n })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Pass,
    Mismatch,
    Diverged,
    Error,
}

impl Verdict {
    fn name(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Mismatch => "mismatch",
            Verdict::Diverged => "diverged",
            Verdict::Error => "error",
        }
    }
}

fn main() -> ExitCode {
    // Behave like a Unix filter: `rnic cosim vectors | head` ends quietly
    // instead of panicking on the closed pipe.
    // SAFETY: setting a signal disposition before any thread is spawned.
    #[cfg(unix)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        // Colour codes only where a person reads them, not in logs and CI.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Where divergences are traced when `--vcd` is not given.
const DEFAULT_VCD_DIR: &str = "out/vcd";

/// One vector to run and the files it writes, all decided before the
/// first run so that a clash or an unwritable directory stops the
/// invocation before any time is spent.
struct Plan {
    file: PathBuf,
    /// `--vcd`: traced whatever the outcome.
    vcd: Option<PathBuf>,
    /// Traced on divergence only (lockstep without `--vcd`).
    divergence_vcd: Option<PathBuf>,
    pcap: Option<PathBuf>,
    plot: Option<PathBuf>,
}

impl Plan {
    fn outputs(&self) -> impl Iterator<Item = &PathBuf> {
        let vcd = self.vcd.as_ref().or(self.divergence_vcd.as_ref());
        vcd.into_iter().chain(&self.pcap).chain(&self.plot)
    }
}

fn real_main(cli: Cli) -> Result<ExitCode> {
    let (args, mode, bless, cmd) = match cli.cmd {
        Cmd::Run(a) => (a, Mode::Model, false, "run"),
        Cmd::Cosim(a) => (a, Mode::Lockstep, false, "cosim"),
        Cmd::Bless(a) => (a, Mode::Lockstep, true, "bless"),
        Cmd::Coverage(a) => return coverage_tables(&a),
        Cmd::Fcov(a) => return fcov_report(&a),
    };
    let walk = vector::walk(&args.paths)?;
    for n in &walk.notes {
        eprintln!("{n}");
    }
    if walk.found.is_empty() {
        anyhow::bail!("no *.json vectors under {:?}", args.paths);
    }
    // Planned over every vector, not the shard: the output names (and
    // the clashes between them) do not depend on how CI splits the list.
    let all = plan(&args, mode, &walk.found)?;
    let many = all.len() > 1;
    let plans: Vec<Plan> = match args.shard {
        None => all,
        Some(sh) => {
            let total = all.len();
            let mine: Vec<Plan> = all
                .into_iter()
                .enumerate()
                .filter_map(|(i, p)| sh.has(i).then_some(p))
                .collect();
            eprintln!(
                "note: shard {}/{}: {} of {total} vectors",
                sh.k,
                sh.n,
                mine.len()
            );
            mine
        }
    };
    prepare_outputs(&args, many)?;
    let junit_out = args
        .junit
        .as_deref()
        .map(|p| junit::Out::create("--junit", p))
        .transpose()?;
    let fcov_out = args
        .fcov
        .as_deref()
        .map(|p| junit::Out::create("--fcov", p))
        .transpose()?;
    let mut fcov = rnic_testbench::fcov::Coverage::default();
    let mut tlp_log = match &args.tlp_log {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("cannot create {}", p.display()))?,
        )),
        None => None,
    };
    let jobs = match args.jobs {
        Some(j) => j as usize,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(Some(plans.len() as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let mut worst = Verdict::Pass;
    let (mut passed, mut failed) = (0usize, 0usize);
    let mut cases = Vec::new();
    let flow = pool::run(
        plans.len(),
        jobs,
        |i| {
            let t0 = Instant::now();
            let outcome = run_one(&plans[i], &args, mode, bless);
            (outcome, t0.elapsed().as_secs_f64())
        },
        |finished, next| {
            // Only runs longer than a second get a bar.
            if started.elapsed() > Duration::from_secs(1) && bar.is_hidden() {
                bar.set_draw_target(ProgressDrawTarget::stderr());
            }
            bar.set_position(finished as u64);
            // The vector the output waits for.
            if let Some(p) = plans.get(next) {
                bar.set_message(p.file.display().to_string());
            }
        },
        |i, (outcome, secs)| {
            let p = &plans[i];
            let (verdict, case) = match finish(p, &args, bless, outcome, tlp_log.as_mut()) {
                Ok(Outcome::Error { msg, top }) => {
                    bar.suspend(|| emit_error(args.json, &p.file, &msg));
                    (Verdict::Error, error_case(p, top, secs, msg))
                }
                Ok(Outcome::Ran(r)) => {
                    if r.verdict == Verdict::Pass {
                        fcov.merge(&r.report.fcov);
                    }
                    bar.suspend(|| {
                        emit(
                            args.json, &p.file, r.ran_as, &r.report, r.verdict, &r.notes, secs,
                            bless,
                        )
                    });
                    (r.verdict, ran_case(p, &r, secs))
                }
                Err(e) => {
                    // Stops the invocation, as it stops the CI job: the
                    // report says where.
                    let case = error_case(p, top_of(&p.file), secs, format!("{e:#}"));
                    cases.push(case);
                    return ControlFlow::Break(Some(e));
                }
            };
            cases.push(case);
            worst = worst.max(verdict);
            if verdict == Verdict::Pass {
                passed += 1;
            } else {
                failed += 1;
                if args.fail_fast {
                    return ControlFlow::Break(None);
                }
            }
            ControlFlow::Continue(())
        },
    );
    bar.finish_and_clear();
    if let Some(out) = junit_out {
        let mut suite = format!("rnic {cmd}");
        if let Some(sh) = args.shard {
            suite.push_str(&format!(" (shard {}/{})", sh.k, sh.n));
        }
        let xml = junit::render(&suite, &cases, started.elapsed().as_secs_f64());
        out.commit(&xml)?;
    }
    if let Some(out) = fcov_out {
        let json = serde_json::to_string_pretty(&fcov).expect("a map of counts serializes");
        out.commit(&json)?;
    }
    if let ControlFlow::Break(Some(e)) = flow {
        return Err(e);
    }
    if !args.json {
        let skipped = plans.len() - passed - failed;
        if skipped > 0 {
            println!("{passed} passed, {failed} failed, {skipped} not run (--fail-fast)");
        } else {
            println!("{passed} passed, {failed} failed");
        }
    }
    Ok(match worst {
        Verdict::Pass => ExitCode::SUCCESS,
        Verdict::Mismatch | Verdict::Diverged => ExitCode::from(1),
        Verdict::Error => ExitCode::from(2),
    })
}

/// The output files of every vector, named after where the vector file
/// was found (never after its `name`, which is free text), and refused
/// when two runs would write the same file.
fn plan(args: &RunArgs, mode: Mode, found: &[vector::Found]) -> Result<Vec<Plan>> {
    let many = found.len() > 1;
    let mut owner: HashMap<PathBuf, &Path> = HashMap::new();
    let mut plans = Vec::new();
    for f in found {
        let name = plain(&f.out_name, &f.path)?;
        let plan = Plan {
            file: f.path.clone(),
            vcd: args.vcd.as_ref().map(|d| d.join(name)),
            divergence_vcd: (mode == Mode::Lockstep).then(|| Path::new(DEFAULT_VCD_DIR).join(name)),
            pcap: args
                .pcap
                .as_ref()
                .map(|p| per_vector(p, name, "pcap", many)),
            plot: args.plot.as_ref().map(|p| per_vector(p, name, "svg", many)),
        };
        for out in plan.outputs() {
            if let Some(other) = owner.insert(out.clone(), &f.path) {
                anyhow::bail!(
                    "{} and {} would both write {}; nothing was run (give them under \
                     one directory, whose layout keeps them apart, or rename one)",
                    other.display(),
                    f.path.display(),
                    out.display()
                );
            }
        }
        plans.push(plan);
    }
    Ok(plans)
}

/// `name` if it stays inside the directory it is joined to. The walk only
/// makes such names; this is the last guard before anything is written.
fn plain<'a>(name: &'a Path, file: &Path) -> Result<&'a Path> {
    let normal = |c: Component| matches!(c, Component::Normal(_));
    if name.as_os_str().is_empty() || !name.components().all(normal) {
        anyhow::bail!(
            "{}: output name {} would leave the output directory",
            file.display(),
            name.display()
        );
    }
    Ok(name)
}

/// `FILE` itself for a single vector, else `FILE/<name>.<ext>`.
fn per_vector(p: &Path, name: &Path, ext: &str, many: bool) -> PathBuf {
    if !many {
        return p.to_path_buf();
    }
    // Appended, not `with_extension`: `a.b.json` is `a.b.pcap`, not `a.pcap`.
    let mut file = p.join(name).into_os_string();
    file.push(".");
    file.push(ext);
    PathBuf::from(file)
}

/// Creates the output directories before the first run, so that a path
/// that cannot be written stops the invocation before any time is spent.
fn prepare_outputs(args: &RunArgs, many: bool) -> Result<()> {
    let mut dirs: Vec<&Path> = args.vcd.iter().map(PathBuf::as_path).collect();
    for p in args.pcap.iter().chain(&args.plot) {
        match (many, p.parent()) {
            (true, _) => dirs.push(p),
            (false, Some(parent)) if !parent.as_os_str().is_empty() => dirs.push(parent),
            _ => {}
        }
    }
    for d in dirs {
        std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    Ok(())
}

enum Outcome {
    /// The vector did not load or its environment could not be built.
    Error {
        msg: String,
        /// The vector's `top` as far as it can be read (JUnit's classname).
        top: String,
    },
    Ran(Box<Ran>),
}

struct Ran {
    report: Report,
    /// What ran, for the verdict line: a fabric's `--rtl` hosts make a
    /// `run` a lockstep one, and a fabric without RTL hosts runs models.
    ran_as: Mode,
    verdict: Verdict,
    notes: Vec<String>,
    top: &'static str,
    /// `bless`: the vector with its new `expect`, to be written if the
    /// TLP log (written later, in order) does not turn the verdict.
    blessed: Option<String>,
}

/// Runs one vector and writes its own outputs (waveforms, pcap, plot):
/// on a worker thread. A file that cannot be written makes the vector's
/// verdict an error; `Err` is for what stops the whole invocation (a
/// vector `--plot` cannot draw).
fn run_one(p: &Plan, args: &RunArgs, mode: Mode, bless: bool) -> Result<Outcome> {
    let any = match AnyVector::load(&p.file) {
        Ok(v) => v,
        Err(e) => {
            let top = top_of(&p.file);
            return Ok(Outcome::Error {
                msg: e.to_string(),
                top,
            });
        }
    };
    let top = any.top_name();
    let opts = RunOpts {
        vcd_dir: p.vcd.clone(),
        divergence_vcd_dir: p.divergence_vcd.clone(),
        vcd_window: args.vcd_window,
        no_idle_skip: args.no_idle_skip,
        host_threads: args.host_threads,
    };
    // A fabric run's plot, drawn from its report below.
    let mut fabric_trace = None;
    // (report, verdict inputs, the vector with its new `expect` for bless),
    // or why the vector could not run.
    let ran: Result<(Report, Vec<String>, String), String> = match &any {
        AnyVector::Single(v) => scenario::run(v, mode, &opts).map(|r| {
            let m = scenario::mismatches(v, &r);
            let mut nv = (**v).clone();
            nv.expect = Some(r.to_expect());
            (r, m, nv.to_json())
        }),
        AnyVector::System(v) => scenario::pair::run(v, mode, &opts).map(|r| {
            let m = scenario::pair::mismatches(v, &r);
            let mut nv = (**v).clone();
            nv.expect = Some(r.to_expect());
            (r.report, m, nv.to_json())
        }),
        AnyVector::Fabric(v) => fabric_run(p, args, v, mode, &opts).map(|r| {
            if p.plot.is_some() {
                let red = scenario::fabric::red_thresholds(v);
                fabric_trace = Some(rnic_testbench::fabric_plot::FabricTrace::new(
                    &r,
                    red,
                    v.link.bits_per_cycle,
                    vector::rx::CLOCK_MHZ,
                ));
            }
            let m = scenario::fabric::mismatches(v, &r);
            let mut nv = (**v).clone();
            nv.expect = Some(r.to_expect());
            (r.report, m, nv.to_json())
        }),
    };
    let (report, mismatches, with_expect) = match ran {
        Ok(x) => x,
        Err(msg) => {
            return Ok(Outcome::Error {
                msg,
                top: top.into(),
            })
        }
    };
    let mut unwritten: Vec<String> = report.vcd_error.iter().cloned().collect();
    if let Some(path) = &p.pcap {
        let w = write_output(path, |f| match &report.tx_comments {
            Some(c) => rnic_testbench::pcap::write_run_ng(f, &report.tx_frames, c),
            None => rnic_testbench::pcap::write_run(f, &report.tx_frames),
        });
        unwritten.extend(w.err());
    }
    if let (Some(path), Some(t)) = (&p.plot, &fabric_trace) {
        let draw = |f: &Path| rnic_testbench::fabric_plot::draw_svg(t, any.name(), f);
        unwritten.extend(draw_plot(path, draw).err());
    } else if let Some(path) = &p.plot {
        let AnyVector::Single(v) = &any else {
            anyhow::bail!(
                "{}: --plot needs an rnic_top vector, not a {} vector",
                p.file.display(),
                any.top_name()
            );
        };
        let trace = scenario::cc_trace(v).map_err(anyhow::Error::msg)?;
        let draw = |f: &Path| rnic_testbench::plot::draw_svg(&trace, &v.name, f);
        unwritten.extend(draw_plot(path, draw).err());
    }
    let (mut verdict, mut notes) = judge(any.max_cycles(), &report, bless, mismatches);
    if !unwritten.is_empty() {
        verdict = Verdict::Error;
        notes.extend(unwritten);
    }
    let blessed = (bless && report.clean() && verdict != Verdict::Error).then_some(with_expect);
    let ran_as = match (&any, &args.rtl) {
        (AnyVector::Fabric(_), Some(Hosts(h))) if h.is_empty() => Mode::Model,
        (AnyVector::Fabric(_), Some(_)) => Mode::Lockstep,
        (AnyVector::Fabric(v), None) if v.rtl.is_empty() => Mode::Model,
        _ => mode,
    };
    Ok(Outcome::Ran(Box::new(Ran {
        report,
        ran_as,
        verdict,
        notes,
        top,
        blessed,
    })))
}

/// The rest of a run, on the main thread in vector order: its part of the
/// TLP log and, for `bless`, the vector file. `Err` stops the invocation
/// (a blessed vector not saved).
fn finish(
    p: &Plan,
    args: &RunArgs,
    bless: bool,
    outcome: Result<Outcome>,
    tlp_log: Option<&mut impl Write>,
) -> Result<Outcome> {
    let mut r = match outcome? {
        Outcome::Ran(r) => r,
        error => return Ok(error),
    };
    if let Some(w) = tlp_log {
        let path = args.tlp_log.as_deref().expect("a log only with --tlp-log");
        if let Err(e) = write_tlps(w, &p.file, &r.report) {
            r.verdict = Verdict::Error;
            r.notes.push(cannot_write(path, e));
        }
    }
    if bless && r.verdict != Verdict::Error {
        if let Some(text) = &r.blessed {
            std::fs::write(&p.file, text)
                .with_context(|| format!("writing {}", p.file.display()))?;
        }
    }
    Ok(Outcome::Ran(r))
}

/// The `top` field (or `kind` of a system vector) of a vector that did
/// not load, if it has one.
fn top_of(file: &Path) -> String {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| {
            let kind = v.get("kind").and_then(|k| k.as_str());
            kind.or_else(|| v.get("top")?.as_str()).map(str::to_string)
        })
        .unwrap_or_else(|| "unknown".into())
}

fn error_case(p: &Plan, top: String, secs: f64, msg: String) -> junit::Case {
    junit::Case {
        name: p.file.display().to_string(),
        classname: top,
        seconds: secs,
        status: junit::Status::Error {
            message: msg.clone(),
            text: msg,
        },
    }
}

fn ran_case(p: &Plan, r: &Ran, secs: f64) -> junit::Case {
    let text = details(&p.file, &r.report, &r.notes, "");
    let first = text.lines().next().unwrap_or_default().to_string();
    let status = match r.verdict {
        Verdict::Pass => junit::Status::Pass,
        Verdict::Mismatch | Verdict::Diverged => junit::Status::Failure {
            kind: r.verdict.name(),
            message: first,
            text,
        },
        Verdict::Error => junit::Status::Error {
            message: first,
            text,
        },
    };
    junit::Case {
        name: p.file.display().to_string(),
        classname: r.top.into(),
        seconds: secs,
        status,
    }
}

fn write_tlps(w: &mut impl Write, file: &Path, r: &Report) -> std::io::Result<()> {
    writeln!(w, "# {}", file.display())?;
    for e in &r.tlp_log {
        writeln!(w, "{e}")?;
    }
    // Flushed per vector, so a full disk is blamed on the vector it hit.
    w.flush()
}

fn cannot_write(path: &Path, e: std::io::Error) -> String {
    format!("cannot write {}: {e}", path.display())
}

/// Writes `path` (and the directories of a nested output name) with `write`.
fn write_output(
    path: &Path,
    write: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<(), String> {
    let parent = path.parent().filter(|d| !d.as_os_str().is_empty());
    parent
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| write(path))
        .map_err(|e| cannot_write(path, e))
}

fn draw_plot(path: &Path, draw: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    // Creating the file first gets the OS's reason when it cannot be
    // written; the plotting library's own errors are vaguer.
    write_output(path, |f| std::fs::File::create(f).map(drop))?;
    draw(path)
}

/// Runs a fabric vector: with `--rtl`, the RTL of the hosts named (and
/// only those) in lockstep whatever the command; otherwise the vector's
/// list in every mode but `run`'s model-only one.
fn fabric_run(
    p: &Plan,
    args: &RunArgs,
    v: &FabricVector,
    mode: Mode,
    opts: &RunOpts,
) -> Result<scenario::fabric::FabricReport, String> {
    let Some(Hosts(h)) = &args.rtl else {
        return scenario::fabric::run(v, mode, opts);
    };
    if let Some(bad) = h.iter().find(|&&i| i >= v.hosts.len()) {
        return Err(format!(
            "{}: --rtl: host {bad} does not exist ({} hosts)",
            p.file.display(),
            v.hosts.len()
        ));
    }
    let mut run = v.clone();
    run.rtl = h.clone();
    scenario::fabric::run(&run, Mode::Lockstep, opts)
}

/// Verdict and the reasons behind it; `mismatches` are the differences
/// from the blessed results, weighed only when the run is otherwise clean.
fn judge(
    max_cycles: u64,
    r: &Report,
    bless: bool,
    mismatches: Vec<String>,
) -> (Verdict, Vec<String>) {
    if r.divergence.is_some() {
        return (Verdict::Diverged, Vec::new());
    }
    let mut notes: Vec<String> = r
        .failures
        .iter()
        .map(|f| format!("check failed: {f}"))
        .collect();
    if !r.completed {
        notes.push(format!("not complete after max_cycles = {max_cycles}"));
    }
    if !bless && notes.is_empty() {
        notes.extend(mismatches);
    }
    if notes.is_empty() {
        (Verdict::Pass, notes)
    } else {
        (Verdict::Mismatch, notes)
    }
}

fn emit_error(json: bool, file: &Path, msg: &str) {
    if json {
        println!(
            "{}",
            json!({"vector": file.display().to_string(), "status": "error", "error": msg})
        );
    } else {
        println!("ERROR {msg}");
    }
}

#[allow(clippy::too_many_arguments)]
fn emit(
    json: bool,
    file: &Path,
    mode: Mode,
    r: &Report,
    verdict: Verdict,
    notes: &[String],
    secs: f64,
    bless: bool,
) {
    if json {
        let div = r.divergence.as_ref().map(|d| {
            json!({
                "block": d.block, "cycle": d.cycle, "port": d.diff.port, "detail": d.diff.detail,
                "model": d.diff.model, "rtl": d.diff.rtl, "history": d.history,
                "assertion": d.assertion.as_ref().map(|a| json!({
                    "name": a.name, "scope": a.scope, "cycle": a.cycle,
                    "file": a.file, "line": a.line,
                })),
                "vcd": r.vcd, "reproduce": repro(file),
            })
        });
        println!(
            "{}",
            json!({
                "vector": file.display().to_string(), "status": verdict.name(),
                "cycles": r.cycles, "wall_seconds": secs, "divergence": div, "notes": notes,
                "idle_skipped": r.idle_skipped,
            })
        );
        return;
    }
    let what = match (mode, bless) {
        (_, true) => "bless",
        (Mode::Model, _) => "model",
        (Mode::Rtl, _) => "rtl",
        (Mode::Lockstep, _) => "cosim",
    };
    let tag = match verdict {
        Verdict::Pass if bless => "BLESSED",
        Verdict::Pass => "PASS",
        Verdict::Mismatch => "MISMATCH",
        Verdict::Diverged => "DIVERGED",
        Verdict::Error => "ERROR",
    };
    println!(
        "{tag:<8} {what} {} ({} cycles, {secs:.2} s)",
        file.display(),
        r.cycles
    );
    print!("{}", details(file, r, notes, "         "));
}

/// What follows a verdict line: the notes (each line after `indent`), or
/// the divergence report with its waveforms and the command that
/// reproduces it.
fn details(file: &Path, r: &Report, notes: &[String], indent: &str) -> String {
    let mut s = String::new();
    for n in notes {
        s.push_str(&format!("{indent}{n}\n"));
    }
    if let Some(d) = &r.divergence {
        s.push_str(&d.to_string());
        for p in &r.vcd {
            s.push_str(&format!("  waveform: {}\n", p.display()));
        }
        s.push_str(&format!("  reproduce: {}\n", repro(file)));
    }
    s
}

fn repro(file: &Path) -> String {
    format!("rnic cosim {} --vcd out/vcd", file.display())
}
