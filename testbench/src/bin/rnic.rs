//! `rnic`: run test vectors on the model, in lockstep with the RTL, or bless
//! their expected results.
//!
//! Exit status: 0 every vector passed, 1 a divergence or a result mismatch,
//! 2 bad input (a vector that does not load).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use rnic_testbench::scenario::{self, Mode, Report, RunOpts};
use rnic_testbench::vector::{self, Vector};

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
}

#[derive(Args)]
struct RunArgs {
    /// Vector files or directories (searched for *.json).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Write model.vcd and rtl.vcd to DIR/<vector> (cosim; always done on divergence).
    #[arg(long, value_name = "DIR")]
    vcd: Option<PathBuf>,
    /// Cycles of waveform before the end or the divergence.
    #[arg(long, value_name = "CYCLES")]
    vcd_window: Option<u64>,
    /// Log every TLP, one per line: `CYCLE rq: HEX` or `CYCLE rc: HEX`.
    #[arg(long, value_name = "FILE")]
    tlp_log: Option<PathBuf>,
    /// Write every frame sent on `tx_*` as pcap (timestamp = cycle x clock
    /// period): to FILE for one vector, to FILE/<vector>.pcap for several.
    #[arg(long, value_name = "FILE")]
    pcap: Option<PathBuf>,
    /// Draw per-QP DCQCN current/target rate, alpha and the PFC pause
    /// state over time (SVG, sampled from the model): to FILE for one
    /// vector, to FILE/<vector>.svg for several (rnic_top vectors only).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
    /// One JSON object per vector on stdout instead of text.
    #[arg(long)]
    json: bool,
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

fn real_main(cli: Cli) -> Result<ExitCode> {
    let (args, mode, bless) = match cli.cmd {
        Cmd::Run(a) => (a, Mode::Model, false),
        Cmd::Cosim(a) => (a, Mode::Lockstep, false),
        Cmd::Bless(a) => (a, Mode::Lockstep, true),
    };
    let walk = vector::walk(&args.paths)?;
    for n in &walk.notes {
        eprintln!("{n}");
    }
    let files: Vec<PathBuf> = walk.found.into_iter().map(|f| f.path).collect();
    if files.is_empty() {
        anyhow::bail!("no *.json vectors under {:?}", args.paths);
    }
    let mut tlp_log = match &args.tlp_log {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    let started = Instant::now();
    let bar = ProgressBar::with_draw_target(Some(files.len() as u64), ProgressDrawTarget::hidden());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .expect("static template")
            .progress_chars("=> "),
    );
    let mut worst = Verdict::Pass;
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        // Only runs longer than a second get a bar.
        if started.elapsed() > Duration::from_secs(1) && bar.is_hidden() {
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
        bar.set_message(file.display().to_string());
        let t0 = Instant::now();
        let v = match Vector::load(file) {
            Ok(v) => v,
            Err(e) => {
                bar.suspend(|| emit_error(args.json, file, &e.to_string()));
                worst = worst.max(Verdict::Error);
                failed += 1;
                bar.inc(1);
                continue;
            }
        };
        let opts = RunOpts {
            vcd_dir: args.vcd.as_ref().map(|d| d.join(&v.name)),
            vcd_window: args.vcd_window,
        };
        let report = match scenario::run(&v, mode, &opts) {
            Ok(r) => r,
            Err(e) => {
                bar.suspend(|| emit_error(args.json, file, &e));
                worst = worst.max(Verdict::Error);
                failed += 1;
                bar.inc(1);
                continue;
            }
        };
        if let Some(w) = tlp_log.as_mut() {
            writeln!(w, "# {}", file.display())?;
            for e in &report.tlp_log {
                writeln!(w, "{e}")?;
            }
        }
        if let Some(p) = &args.pcap {
            let path = if files.len() == 1 {
                p.clone()
            } else {
                std::fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
                p.join(format!("{}.pcap", v.name))
            };
            rnic_testbench::pcap::write_run(&path, &report.tx_frames)
                .with_context(|| format!("writing {}", path.display()))?;
        }
        if let Some(p) = &args.plot {
            let path = if files.len() == 1 {
                p.clone()
            } else {
                std::fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
                p.join(format!("{}.svg", v.name))
            };
            let trace = scenario::cc_trace(&v).map_err(anyhow::Error::msg)?;
            rnic_testbench::plot::draw_svg(&trace, &v.name, &path).map_err(anyhow::Error::msg)?;
        }
        let (verdict, notes) = judge(&v, &report, bless);
        if bless && report.clean() {
            let mut nv = v.clone();
            nv.expect = Some(report.to_expect());
            std::fs::write(file, nv.to_json())
                .with_context(|| format!("writing {}", file.display()))?;
        }
        let secs = t0.elapsed().as_secs_f64();
        bar.suspend(|| emit(args.json, file, mode, &report, verdict, &notes, secs, bless));
        worst = worst.max(verdict);
        if verdict == Verdict::Pass {
            passed += 1;
        } else {
            failed += 1;
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if !args.json {
        println!("{passed} passed, {failed} failed");
    }
    Ok(match worst {
        Verdict::Pass => ExitCode::SUCCESS,
        Verdict::Mismatch | Verdict::Diverged => ExitCode::from(1),
        Verdict::Error => ExitCode::from(2),
    })
}

/// Verdict and the reasons behind it.
fn judge(v: &Vector, r: &Report, bless: bool) -> (Verdict, Vec<String>) {
    if r.divergence.is_some() {
        return (Verdict::Diverged, Vec::new());
    }
    let mut notes: Vec<String> = r
        .failures
        .iter()
        .map(|f| format!("check failed: {f}"))
        .collect();
    if !r.completed {
        notes.push(format!("not complete after max_cycles = {}", v.max_cycles));
    }
    if !bless && notes.is_empty() {
        notes.extend(scenario::mismatches(v, r));
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
    let repro = format!("rnic cosim {} --vcd out/vcd", file.display());
    if json {
        let div = r.divergence.as_ref().map(|d| {
            json!({
                "block": d.block, "cycle": d.cycle, "port": d.diff.port, "detail": d.diff.detail,
                "model": d.diff.model, "rtl": d.diff.rtl, "history": d.history,
                "vcd": r.vcd, "reproduce": repro,
            })
        });
        println!(
            "{}",
            json!({
                "vector": file.display().to_string(), "status": verdict.name(),
                "cycles": r.cycles, "wall_seconds": secs, "divergence": div, "notes": notes,
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
    for n in notes {
        println!("         {n}");
    }
    if let Some(d) = &r.divergence {
        print!("{d}");
        for p in &r.vcd {
            println!("  waveform: {}", p.display());
        }
        println!("  reproduce: {repro}");
    }
}
