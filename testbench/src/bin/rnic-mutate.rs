//! `rnic-mutate`: mutation testing of the RTL against a regression (issue 14).
//!
//! `rnic-mutate list` prints every mutant site of `hw/rtl/*.sv`
//! (`rnic_testbench::mutate`); `rnic-mutate run --out DIR [PATHS]` tries a
//! seeded sample of them, one at a time: it copies `hw/rtl` to `DIR/rtl`
//! with the one mutant applied, builds `rnic` from it (`RNIC_RTL_DIR`, in
//! the target directory `DIR/target`, so only the units that instantiate
//! the mutated file are verilated again), runs `rnic cosim PATHS` (default
//! `vectors`), and records the mutant as killed (the regression failed),
//! lived (it passed), no-build (Verilator or the C++ compiler rejected it)
//! or timeout. Before the first mutant the unmutated copy must pass.
//!
//! Everything is written under DIR: `DIR/mutants.md` (one line a mutant,
//! appended as each finishes, and the score at the end), `DIR/logs/`.
//! Exit status: 0 the run finished (whatever the score), 2 bad input or a
//! baseline that does not build or pass.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};

use rnic_testbench::mutate::{sample, sites, Site};

#[derive(Parser)]
#[command(
    name = "rnic-mutate",
    about = "Single-operator mutants of hw/rtl against a regression"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print every mutant site (`id file:line op: from -> to`) and the count per operator.
    List(RepoArgs),
    /// Build and run a seeded sample of mutants.
    Run(RunArgs),
}

#[derive(Args)]
struct RepoArgs {
    /// The repository (holding hw/rtl and Cargo.toml).
    #[arg(long, default_value = ".")]
    repo: PathBuf,
}

#[derive(Args)]
struct RunArgs {
    #[command(flatten)]
    repo: RepoArgs,
    /// Output directory: the RTL copy, the target directory, logs, report.
    #[arg(long)]
    out: PathBuf,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Mutants in the sample.
    #[arg(long, default_value_t = 200)]
    sample: usize,
    /// Run only shard K of N of the sample (positions K-1 modulo N).
    #[arg(long, value_name = "K/N", value_parser = parse_shard)]
    shard: Option<(usize, usize)>,
    /// Only these sample positions (e.g. to replay one): comma-separated.
    #[arg(long, value_delimiter = ',')]
    only: Vec<usize>,
    /// These site ids (the first column of `rnic-mutate list`) instead of
    /// a sample: comma-separated.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["only", "shard"])]
    sites: Vec<usize>,
    /// `rnic cosim --jobs`.
    #[arg(long, default_value_t = 2)]
    jobs: u32,
    /// A regression taking longer than this many times the baseline is a
    /// timeout (a mutant that hangs the design runs every vector to its
    /// cycle limit).
    #[arg(long, default_value_t = 5)]
    timeout_factor: u32,
    /// The regression: vector files or directories for `rnic cosim`.
    #[arg(default_value = "vectors")]
    paths: Vec<PathBuf>,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (k, n) = s.split_once('/').ok_or("expected K/N")?;
    let k: usize = k.parse().map_err(|_| "K is not a number")?;
    let n: usize = n.parse().map_err(|_| "N is not a number")?;
    if n == 0 || k == 0 || k > n {
        return Err("need 1 <= K <= N".into());
    }
    Ok((k, n))
}

fn main() -> ExitCode {
    match real_main(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn real_main(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::List(a) => {
            let (all, texts) = all_sites(&a.repo)?;
            let mut per_op: std::collections::BTreeMap<&str, usize> = Default::default();
            for (i, s) in all.iter().enumerate() {
                println!(
                    "{i} {}:{} {}: {:?} -> {:?}",
                    s.file, s.line, s.op, s.from, s.to
                );
                *per_op.entry(s.op).or_default() += 1;
            }
            let known = equivalents(&a.repo, &all, &texts)?;
            println!("{} sites: {per_op:?}", all.len());
            let sites: Vec<String> = all
                .iter()
                .enumerate()
                .filter(|(_, s)| known.iter().any(|e| equivalent_to(&texts, &all, s, e)))
                .map(|(i, _)| i.to_string())
                .collect();
            println!(
                "{} listed as equivalent (hw/equivalent_mutants.txt): sites {}",
                known.len(),
                sites.join(", ")
            );
            Ok(())
        }
        Cmd::Run(a) => run(&a),
    }
}

/// The text of every `hw/rtl/*.sv`, by file name, read once.
type Sources = std::collections::BTreeMap<String, String>;

/// Every site of every `hw/rtl/*.sv`, in file-name then text order, and
/// the texts they were found in.
fn all_sites(repo: &Path) -> Result<(Vec<Site>, Sources)> {
    let dir = repo.join("hw/rtl");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .with_context(|| format!("{}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sv"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    let mut texts = Sources::new();
    for f in files {
        let text = fs::read_to_string(&f).with_context(|| format!("{}", f.display()))?;
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        all.extend(sites(&name, &text));
        texts.insert(name, text);
    }
    Ok((all, texts))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Verdict {
    Killed,
    Lived,
    NoBuild,
    Timeout,
    /// Lived, and listed in `hw/equivalent_mutants.txt` with the reason no
    /// input can tell it from the original: not counted in the score.
    Equivalent,
}

/// One entry of `hw/equivalent_mutants.txt`:
/// `file | op | source line | reason`, the source line as it stands
/// (white space folded), so entries survive lines moving. `op#N` names
/// the N-th site of that operator on the line (counted from 1, left to
/// right), for a line with several of which only one is equivalent.
struct Equivalent {
    file: String,
    op: String,
    nth: Option<usize>,
    text: String,
    reason: String,
    /// Where in the list file, for messages.
    at: usize,
}

fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads the list of known equivalent mutants; every entry must name a
/// line that has a site of that operator today (a stale entry is an
/// error, so the list cannot quietly excuse a new mutant).
fn equivalents(repo: &Path, all: &[Site], texts: &Sources) -> Result<Vec<Equivalent>> {
    let path = repo.join("hw/equivalent_mutants.txt");
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("{}", path.display())),
    };
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() || l.trim_start().starts_with('#') {
            continue;
        }
        let f: Vec<&str> = l.splitn(4, '|').map(str::trim).collect();
        if f.len() != 4 || f.iter().any(|x| x.is_empty()) {
            bail!(
                "{}:{}: expected `file | op | source line | reason`",
                path.display(),
                i + 1
            );
        }
        let (op, nth) = match f[1].split_once('#') {
            Some((op, n)) => match n.parse::<usize>() {
                Ok(n) if n > 0 => (op, Some(n)),
                _ => bail!(
                    "{}:{}: `{}`: the site number after # counts from 1",
                    path.display(),
                    i + 1,
                    f[1]
                ),
            },
            None => (f[1], None),
        };
        let e = Equivalent {
            file: f[0].into(),
            op: op.into(),
            nth,
            text: fold(f[2]),
            reason: f[3].into(),
            at: i + 1,
        };
        if !all.iter().any(|s| equivalent_to(texts, all, s, &e)) {
            bail!(
                "{}:{}: no {}{} site on a line `{}` of {}",
                path.display(),
                e.at,
                e.op,
                e.nth.map_or(String::new(), |n| format!(" #{n}")),
                e.text,
                e.file
            );
        }
        out.push(e);
    }
    Ok(out)
}

fn equivalent_to(texts: &Sources, all: &[Site], s: &Site, e: &Equivalent) -> bool {
    let same_line = |o: &&Site| o.file == s.file && o.line == s.line && o.op == s.op;
    s.file == e.file
        && s.op == e.op
        && e.nth.is_none_or(|n| {
            all.iter()
                .filter(same_line)
                .filter(|o| o.start < s.start)
                .count()
                + 1
                == n
        })
        && texts
            .get(&s.file)
            .and_then(|t| t.lines().nth(s.line as usize - 1))
            .is_some_and(|l| fold(l) == e.text)
}

fn run(a: &RunArgs) -> Result<()> {
    let repo = a.repo.repo.canonicalize().context("--repo")?;
    if !repo.join("Cargo.toml").is_file() || !repo.join("hw/rtl").is_dir() {
        bail!(
            "{}: not the repository (no Cargo.toml and hw/rtl)",
            repo.display()
        );
    }
    let (all, texts) = all_sites(&repo)?;
    let known = equivalents(&repo, &all, &texts)?;
    if let Some(bad) = a.sites.iter().find(|&&id| id >= all.len()) {
        bail!("--sites: no site {bad} (there are {})", all.len());
    }
    let picked = if a.sites.is_empty() {
        sample(all.len(), a.sample, a.seed)
    } else {
        a.sites.clone()
    };
    let mine: Vec<usize> = (0..picked.len())
        .filter(|&p| a.only.is_empty() || a.only.contains(&p))
        .filter(|&p| a.shard.is_none_or(|(k, n)| p % n == k - 1))
        .collect();
    fs::create_dir_all(a.out.join("logs")).with_context(|| format!("{}", a.out.display()))?;
    let out = a.out.canonicalize()?;
    let rtl = out.join("rtl");
    let report_path = out.join("mutants.md");
    let mut report = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&report_path)
        .with_context(|| format!("{}", report_path.display()))?;
    writeln!(
        report,
        "\n## rnic-mutate: {} sites, {}, shard {:?}, regression {:?}\n",
        all.len(),
        if a.sites.is_empty() {
            format!("sample {} with seed {}", picked.len(), a.seed)
        } else {
            format!("sites {:?}", a.sites)
        },
        a.shard,
        a.paths
    )?;

    copy_rtl(&repo.join("hw/rtl"), &rtl)?;
    eprintln!(
        "baseline: building the unmutated RTL in {}",
        out.join("target").display()
    );
    if let Err(e) = build(&repo, &out, "baseline") {
        bail!("the unmutated RTL does not build: {e}");
    }
    let t0 = Instant::now();
    let (ok, summary) = regress(&out, a, "baseline", None)?;
    let base = t0.elapsed();
    if !ok {
        bail!("the unmutated RTL fails the regression: {summary}");
    }
    let limit = base * a.timeout_factor + Duration::from_secs(30);
    eprintln!(
        "baseline passes in {:.1} s; timeout {:.0} s",
        base.as_secs_f64(),
        limit.as_secs_f64()
    );

    let mut tally = [0usize; 5];
    for &pos in &mine {
        let id = picked[pos];
        let s = &all[id];
        let text = &texts[&s.file];
        copy_rtl(&repo.join("hw/rtl"), &rtl)?;
        fs::write(rtl.join(&s.file), s.apply(text))?;
        let tag = format!("m{pos:03}");
        let t = Instant::now();
        let (verdict, detail) = match build(&repo, &out, &tag) {
            Err(e) => (Verdict::NoBuild, e),
            Ok(()) => match regress(&out, a, &tag, Some(limit))? {
                (true, d) => match known.iter().find(|e| equivalent_to(&texts, &all, s, e)) {
                    Some(e) => (Verdict::Equivalent, format!("{}; {d}", e.reason)),
                    None => (Verdict::Lived, d),
                },
                (false, d) if known.iter().any(|e| equivalent_to(&texts, &all, s, e)) => (
                    Verdict::Killed,
                    format!("listed in hw/equivalent_mutants.txt, yet killed: {d}"),
                ),
                (false, d) if d == "timeout" => (Verdict::Timeout, d),
                (false, d) => (Verdict::Killed, d),
            },
        };
        tally[verdict as usize] += 1;
        // Vector paths relative to the repository, so reports compare
        // across checkouts.
        let detail = detail.replace(&format!("{}/", repo.display()), "");
        let line = format!(
            "- {tag} (site {id}) `{}:{}` {}: `{}` -> `{}`: **{verdict:?}** ({detail}; {:.0} s)",
            s.file,
            s.line,
            s.op,
            fold(&s.from),
            fold(&s.to),
            t.elapsed().as_secs_f64()
        );
        eprintln!("{line}");
        writeln!(report, "{line}")?;
    }
    copy_rtl(&repo.join("hw/rtl"), &rtl)?;
    let [killed, lived, nobuild, timeout, equivalent] = tally;
    let mut end = String::new();
    writeln!(
        end,
        "\nkilled {killed}, lived {lived}, equivalent {equivalent}, no-build {nobuild}, timeout {timeout}; score (killed + timeout) / (built and not equivalent) = {}",
        if killed + lived + timeout == 0 {
            "-".to_string()
        } else {
            format!("{:.1} %", 100.0 * (killed + timeout) as f64 / (killed + lived + timeout) as f64)
        }
    )?;
    eprint!("{end}");
    write!(report, "{end}")?;
    Ok(())
}

/// `dst` becomes an exact copy of `src` (the `*.sv`/`*.svh` files), so a
/// previous mutant never lingers.
fn copy_rtl(src: &Path, dst: &Path) -> Result<()> {
    fs::create_dir_all(dst)?;
    for e in fs::read_dir(src)? {
        let p = e?.path();
        if p.is_file() {
            let name = p.file_name().unwrap();
            let data = fs::read(&p)?;
            // Unchanged files keep their timestamps: cargo's rerun check and
            // the per-unit stamps only see the mutated one.
            if fs::read(dst.join(name)).ok().as_deref() != Some(&data[..]) {
                fs::write(dst.join(name), data)?;
            }
        }
    }
    Ok(())
}

/// Builds `rnic` against `out/rtl` into `out/target`; the first error line on failure.
fn build(repo: &Path, out: &Path, tag: &str) -> std::result::Result<(), String> {
    let log = out.join("logs").join(format!("{tag}.build.log"));
    let file = fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let status = Command::new("cargo")
        .current_dir(repo)
        .args([
            "build",
            "--profile",
            "mutate",
            "-q",
            "-p",
            "rnic-testbench",
            "--bin",
            "rnic",
        ])
        .env("CARGO_TARGET_DIR", out.join("target"))
        .env("RNIC_RTL_DIR", out.join("rtl"))
        .stdout(Stdio::null())
        .stderr(file)
        .status()
        .map_err(|e| format!("cargo: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let text = fs::read_to_string(&log).unwrap_or_default();
    // Verilator's own message first: cargo's "failed to run custom build
    // command" comes before it and says nothing of the mutant.
    let first = text
        .lines()
        .find(|l| l.contains("%Error") || l.contains("%Warning"))
        .or_else(|| text.lines().find(|l| l.contains("error")))
        .unwrap_or("build failed");
    Err(first.trim().chars().take(160).collect())
}

/// Runs the regression; (passed, what decided it).
fn regress(out: &Path, a: &RunArgs, tag: &str, limit: Option<Duration>) -> Result<(bool, String)> {
    let log = out.join("logs").join(format!("{tag}.run.log"));
    let file = fs::File::create(&log)?;
    // Run from `out`, so the waveform of a divergence (out/vcd/<vector>
    // under the working directory) lands in the output directory.
    let paths: Vec<PathBuf> = a
        .paths
        .iter()
        .map(|p| a.repo.repo.join(p).canonicalize())
        .collect::<std::io::Result<_>>()
        .context("regression paths")?;
    let mut child = Command::new(out.join("target/mutate/rnic"))
        .arg("cosim")
        .arg("--fail-fast")
        .arg("--jobs")
        .arg(a.jobs.to_string())
        .args(&paths)
        .current_dir(out)
        .stdout(file.try_clone()?)
        .stderr(file)
        .spawn()
        .context("running rnic")?;
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait()? {
            break s;
        }
        if limit.is_some_and(|l| t.elapsed() > l) {
            let _ = child.kill();
            let _ = child.wait();
            return Ok((false, "timeout".into()));
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = fs::remove_dir_all(out.join("out"));
    let text = fs::read_to_string(&log).unwrap_or_default();
    let first_fail = text
        .lines()
        .find(|l| !l.starts_with("PASS") && !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect::<String>();
    // The baseline passed, so any other ending (a crash, exit 2) is the
    // mutant's doing too.
    match status.code() {
        Some(0) => Ok((true, text.lines().last().unwrap_or("").to_string())),
        Some(1) => Ok((false, first_fail)),
        _ => Ok((false, format!("rnic cosim ended with {status}"))),
    }
}
