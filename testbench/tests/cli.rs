//! The `rnic` command as a user meets it: exit codes, error messages that
//! name file, field and reason, JSON lines, TLP log, and VCDs of both sides
//! with the same signal names.

use std::path::{Path, PathBuf};
use std::process::Command;

fn rnic(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("rnic runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rnic-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const GOOD: &str = "../vectors/dma/rd_fault_ur.json";

#[test]
fn a_blessed_vector_passes_in_both_modes() {
    for cmd in ["run", "cosim"] {
        let (code, out, _) = rnic(&[cmd, GOOD]);
        assert_eq!(code, 0, "{out}");
        assert!(out.contains("1 passed, 0 failed"), "{out}");
    }
}

#[test]
fn a_changed_expectation_is_a_mismatch_with_exit_1() {
    let d = scratch("mismatch");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(GOOD)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let c = v["expect"]["cycles"].as_u64().unwrap();
    v["expect"]["cycles"] = (c + 1).into();
    let f = d.join("v.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let (code, out, _) = rnic(&["cosim", f.to_str().unwrap(), "--json"]);
    assert_eq!(code, 1, "{out}");
    let line: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(line["status"], "mismatch");
    assert_eq!(
        line["notes"][0],
        format!("cycles: expected {}, got {c}", c + 1)
    );
}

#[test]
fn fail_fast_stops_at_the_first_failure() {
    let d = scratch("failfast");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(GOOD)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    std::fs::write(d.join("b.json"), v.to_string()).unwrap();
    let c = v["expect"]["cycles"].as_u64().unwrap();
    v["expect"]["cycles"] = (c + 1).into();
    std::fs::write(d.join("a.json"), v.to_string()).unwrap();
    let dir = d.to_str().unwrap();
    let (code, out, _) = rnic(&["run", dir, "--jobs", "1"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.ends_with("1 passed, 1 failed\n"), "{out}");
    let (code, out, _) = rnic(&["run", dir, "--jobs", "1", "--fail-fast"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.ends_with("0 passed, 1 failed, 1 not run (--fail-fast)\n"),
        "{out}"
    );
}

#[test]
fn a_malformed_vector_names_file_field_and_reason_with_exit_2() {
    let d = scratch("bad");
    let f = d.join("bad.json");
    std::fs::write(
        &f,
        r#"{"format":1,"name":"b","description":"d","checked_against":"c","top":"dma_rd",
            "reads":[{"addr":"0x0","len":70000}],"max_cycles":10}"#,
    )
    .unwrap();
    let (code, out, _) = rnic(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(&format!(
            "{}: reads[0].len: 70000 is not in 1..=65536",
            f.display()
        )),
        "{out}"
    );
    let (code, _, err) = rnic(&["run", "no/such/file.json"]);
    assert_eq!(code, 2);
    assert!(err.contains("no/such/file.json"), "{err}");
}

#[test]
fn tlp_log_and_vcds_of_both_sides() {
    let d = scratch("vcd");
    let log = d.join("tlp.log");
    let (code, out, _) = rnic(&[
        "cosim",
        GOOD,
        "--tlp-log",
        log.to_str().unwrap(),
        "--vcd",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&log).unwrap();
    // 3-DW MRd of the first read: Fmt/Type 00, requester 0100, in the rq direction.
    let first = text.lines().find(|l| l.contains(" rq: ")).unwrap();
    let hex = first.split(": ").nth(1).unwrap();
    assert_eq!(&hex[..2], "00");
    assert_eq!(&hex[8..12], "0100");
    assert!(
        text.lines().any(|l| l.contains(" rc: 4a")),
        "a CplD (4a) in the log"
    );
    let names = |p: &Path| -> Vec<String> {
        let t = std::fs::read_to_string(p).unwrap();
        let mut scope = Vec::new();
        let mut v = Vec::new();
        for line in t.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            match w.first() {
                Some(&"$scope") => scope.push(w[2].to_string()),
                Some(&"$upscope") => {
                    scope.pop();
                }
                Some(&"$var") => v.push(format!("{}.{}", scope.join("."), w[4])),
                _ => {}
            }
        }
        v
    };
    let dir = d.join("rd_fault_ur");
    let model = names(&dir.join("model.vcd"));
    let rtl = names(&dir.join("rtl.vcd"));
    for n in [
        "TOP.clk",
        "TOP.rq_data",
        "TOP.dma_rd.rd_data_valid",
        "TOP.dma_rd.rc_keep",
    ] {
        assert!(model.contains(&n.to_string()), "model.vcd lacks {n}");
        assert!(rtl.contains(&n.to_string()), "rtl.vcd lacks {n}");
    }
    // Every model signal exists in the RTL trace (which has internals too).
    for n in &model {
        assert!(rtl.contains(n), "{n} is in model.vcd but not in rtl.vcd");
    }
}

#[test]
fn bless_refuses_a_run_whose_independent_checks_fail() {
    // A completion timeout shorter than the root complex's latency: the read
    // times out though no fault was injected, which the status check catches.
    let d = scratch("bless");
    let f = d.join("v.json");
    let text = r#"{"format":1,"name":"t","description":"d","checked_against":"c","top":"dma_rd",
        "config":{"cpl_timeout":50},"root_complex":{"latency":400},
        "reads":[{"addr":"0x1000","len":64}],"max_cycles":2000}"#;
    std::fs::write(&f, text).unwrap();
    let (code, out, _) = rnic(&["bless", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("reads[0] status timeout but the vector's faults imply ok"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(&f).unwrap(),
        text,
        "nothing blessed"
    );
}

/// (time, value) changes of `TOP.<scope>.<name>` in a VCD, read with the
/// `vcd` crate's parser.
fn changes(path: &Path, scope: &str, name: &str) -> Vec<(u64, String)> {
    let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
    let mut p = vcd::Parser::new(f);
    let h = p.parse_header().unwrap();
    let id = h
        .find_var(&["TOP", scope, name])
        .unwrap_or_else(|| panic!("{}: no TOP.{scope}.{name}", path.display()))
        .code;
    let mut t = 0;
    let mut out = Vec::new();
    for cmd in p {
        match cmd.unwrap() {
            vcd::Command::Timestamp(x) => t = x,
            vcd::Command::ChangeScalar(i, v) if i == id => out.push((t, v.to_string())),
            vcd::Command::ChangeVector(i, v) if i == id => out.push((t, v.to_string())),
            _ => {}
        }
    }
    out
}

#[test]
fn model_and_rtl_waveforms_line_up_in_time() {
    let d = scratch("vcdtime");
    let (code, out, _) = rnic(&[
        "cosim",
        "../vectors/dma/rd_two_clients.json",
        "--vcd",
        d.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let dir = d.join("rd_two_clients");
    for sig in [
        "clk",
        "rq_valid",
        "rc_valid",
        "rd_data_valid",
        "rd_data_last",
        "rd_req_ready",
    ] {
        let m = changes(&dir.join("model.vcd"), "dma_rd", sig);
        let r = changes(&dir.join("rtl.vcd"), "dma_rd", sig);
        assert!(m.len() > 2, "{sig} toggles in the window");
        assert_eq!(m, r, "{sig}: model and RTL waveforms differ");
    }
}

#[test]
fn plot_draws_rates_alpha_and_pause_as_svg() {
    let d = scratch("plot");
    let svg = d.join("storm.svg");
    let (code, out, err) = rnic(&[
        "run",
        "../vectors/cc/cnp_idle_qp.json",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let text = std::fs::read_to_string(&svg).expect("the SVG was written");
    assert!(text.starts_with("<svg"), "not an SVG");
    for label in ["QP 0 Rc", "QP 0 Rt", "alpha", "PFC paused"] {
        assert!(text.contains(label), "no {label:?} in the plot");
    }
    // A DMA vector has no rate to draw: a clear error, exit 2.
    let (code, _, err) = rnic(&["run", GOOD, "--plot", svg.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("--plot needs an rnic_top vector"), "{err}");
}

// ---- paths and output files (issue 9, classes 3 and 8) ----

/// Runs `rnic` in `cwd` with extra environment, killed after a minute so
/// that a walk that never ends fails instead of hanging the suite.
fn rnic_in(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let logs = tempfile::tempdir().unwrap();
    let (o, e) = (logs.path().join("out"), logs.path().join("err"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(args)
        .current_dir(cwd)
        .envs(env.iter().copied())
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .spawn()
        .expect("rnic runs");
    let t0 = std::time::Instant::now();
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code().unwrap_or(-1);
        }
        if t0.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("rnic {args:?} still running after 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let read = |p: &Path| String::from_utf8_lossy(&std::fs::read(p).unwrap()).into_owned();
    (code, read(&o), read(&e))
}

/// Copies `vectors/dma/<src>.json` to `dst` (creating its directory),
/// optionally with another `name`.
fn put(src: &str, dst: &Path, name: Option<&str>) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../vectors/dma/{src}.json"));
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
    if let Some(n) = name {
        v["name"] = n.into();
    }
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    std::fs::write(dst, v.to_string()).unwrap();
}

/// The `vector` field of every JSON line, sorted.
fn vectors_run(out: &str) -> Vec<String> {
    let mut v: Vec<String> = out
        .lines()
        .map(|l| {
            let j: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(j["status"], "pass", "{l}");
            j["vector"].as_str().unwrap().to_string()
        })
        .collect();
    v.sort();
    v
}

/// Every file under `d`, relative to it, sorted.
fn files_under(d: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![d.to_path_buf()];
    while let Some(x) = stack.pop() {
        for e in std::fs::read_dir(&x).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(d).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn directories_linked_in_a_loop_run_each_vector_once() {
    let t = tempfile::tempdir().unwrap();
    put("rd_fault_ur", &t.path().join("v/a/x.json"), None);
    put("rd_fault_ca", &t.path().join("v/b/y.json"), None);
    std::os::unix::fs::symlink("../b", t.path().join("v/a/to_b")).unwrap();
    std::os::unix::fs::symlink("../a", t.path().join("v/b/to_a")).unwrap();
    let (code, out, err) = rnic_in(t.path(), &["run", "v", "--json"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(vectors_run(&out), ["v/a/x.json", "v/b/y.json"], "{err}");
    // Both links lead back into directories already read.
    assert_eq!(err.matches("already read").count(), 2, "{err}");
}

#[test]
fn a_link_to_its_own_directory_runs_each_vector_once() {
    let t = tempfile::tempdir().unwrap();
    put("rd_fault_ur", &t.path().join("v/x.json"), None);
    put("rd_fault_ca", &t.path().join("v/sub/y.json"), None);
    std::os::unix::fs::symlink(".", t.path().join("v/self")).unwrap();
    let (code, out, err) = rnic_in(t.path(), &["run", "v", "--json"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(vectors_run(&out), ["v/sub/y.json", "v/x.json"]);
    assert!(
        err.lines()
            .any(|l| l.starts_with("note: skipped v/self: it leads back to")),
        "{err}"
    );
}

#[test]
fn links_that_lead_nowhere_are_bad_input_in_plain_words() {
    let t = tempfile::tempdir().unwrap();
    put("rd_fault_ur", &t.path().join("v/x.json"), None);
    std::os::unix::fs::symlink("me.json", t.path().join("v/me.json")).unwrap();
    let (code, out, err) = rnic_in(t.path(), &["run", "v"], &[]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "nothing ran: {out}");
    assert!(err.contains("v/me.json: symbolic link loop"), "{err}");
    std::fs::remove_file(t.path().join("v/me.json")).unwrap();
    std::os::unix::fs::symlink("gone.json", t.path().join("v/old.json")).unwrap();
    let (code, _, err) = rnic_in(t.path(), &["run", "v"], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("v/old.json: dangling link"), "{err}");
}

#[test]
fn a_missing_path_is_named_once_with_its_reason() {
    let (code, out, err) = rnic(&["run", "vectors/x.json"]);
    assert_eq!(code, 2, "{out}");
    assert_eq!(
        err.trim_end(),
        "error: vectors/x.json: no such file or directory"
    );
}

#[test]
fn a_vector_name_with_a_path_is_refused_and_nothing_is_written() {
    // Output paths never come from `name` (they follow the vector file);
    // a name that looks like a path is refused outright as well.
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work/deep");
    put("rd_fault_ur", &work.join("v/x.json"), Some("../../x"));
    put("rd_fault_ca", &work.join("v/y.json"), Some("/tmp/../y"));
    let (code, out, err) = rnic_in(
        &work,
        &["cosim", "v", "--vcd", "o/vcd", "--pcap", "o/pcap"],
        &[],
    );
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("v/x.json: name: \"../../x\" is not a name"),
        "{out}"
    );
    let written: Vec<String> = files_under(t.path())
        .into_iter()
        .filter(|f| !f.ends_with(".json"))
        .collect();
    assert!(written.is_empty(), "{written:?}");
}

#[test]
fn vectors_with_one_name_in_two_directories_get_their_own_outputs() {
    let t = tempfile::tempdir().unwrap();
    put("rd_fault_ur", &t.path().join("v/a/x.json"), Some("same"));
    put("rd_fault_ca", &t.path().join("v/b/x.json"), Some("same"));
    let (code, out, err) = rnic_in(
        t.path(),
        &["cosim", "v", "--vcd", "vcd", "--pcap", "pcap"],
        &[],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        files_under(&t.path().join("pcap")),
        ["a/x.pcap", "b/x.pcap"]
    );
    assert_eq!(
        files_under(&t.path().join("vcd")),
        [
            "a/x/model.vcd",
            "a/x/rtl.vcd",
            "b/x/model.vcd",
            "b/x/rtl.vcd"
        ]
    );
}

#[test]
fn two_files_with_one_stem_are_refused_before_anything_runs() {
    let t = tempfile::tempdir().unwrap();
    put("rd_fault_ur", &t.path().join("a/x.json"), None);
    put("rd_fault_ca", &t.path().join("b/x.json"), None);
    for extra in [&["--pcap", "p"][..], &[]] {
        let mut args = vec!["cosim", "a/x.json", "b/x.json"];
        args.extend(extra);
        let (code, out, err) = rnic_in(t.path(), &args, &[]);
        assert_eq!(code, 2, "{out}{err}");
        assert!(out.is_empty(), "nothing ran: {out}");
        assert!(
            err.contains("a/x.json and b/x.json would both write"),
            "{err}"
        );
    }
    assert!(!t.path().join("p").exists(), "no output written");
}

#[test]
fn outputs_that_cannot_be_written_are_bad_input_with_the_reason() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("f");
    std::fs::write(&file, "").unwrap();
    let vcd = file.join("vcd");
    let (code, out, err) = rnic(&["cosim", GOOD, "--vcd", vcd.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "checked before the first run: {out}");
    assert!(
        err.contains(&format!("{}: Not a directory", vcd.display())),
        "{err}"
    );
    // The directory is fine, the vector's own entry in it is not.
    let d = t.path().join("d");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("rd_fault_ur"), "").unwrap();
    let (code, out, err) = rnic(&["cosim", GOOD, "--vcd", d.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.starts_with("ERROR"), "{out}");
    assert!(
        out.contains(&format!("cannot write {}", d.join("rd_fault_ur").display())),
        "{out}"
    );
}

#[test]
fn run_with_vcd_writes_the_model_waveform() {
    let t = tempfile::tempdir().unwrap();
    let (code, out, err) = rnic(&["run", GOOD, "--vcd", t.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(files_under(t.path()), ["rd_fault_ur/model.vcd"]);
    let m = changes(
        &t.path().join("rd_fault_ur/model.vcd"),
        "dma_rd",
        "rq_valid",
    );
    assert!(m.len() > 2, "rq_valid toggles in the model's waveform");
}

#[test]
fn no_colour_codes_on_stderr_that_is_not_a_terminal() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("f");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("vcd");
    let good = t.path().join("vcd");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (dir, log) in [(&bad, "warn"), (&good, "debug")] {
        let args = ["cosim", GOOD, "--vcd", dir.to_str().unwrap()];
        let (_, out, err) = rnic_in(manifest, &args, &[("RUST_LOG", log)]);
        assert!(!err.is_empty(), "something on stderr: {out}");
        assert!(!err.contains("\x1b["), "ANSI escape on stderr: {err:?}");
    }
}

// ---- regressions that scale out: --jobs, --shard, --junit (issue 10) ----

/// Copies `vectors/<src>.json` to `dst`, optionally changing it first.
fn put_edited(src: &str, dst: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../vectors/{src}.json"));
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
    edit(&mut v);
    std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
    std::fs::write(dst, v.to_string()).unwrap();
}

/// Small vectors of all three tops, in a directory `v` under `root`.
fn small_regression(root: &Path) -> Vec<String> {
    let srcs = [
        "dma/rd_fault_ur",
        "dma/rd_fault_ca",
        "dma/wr_mps_512",
        "dma/rd_above_4g",
        "tx/tx_qp_in_error",
        "tx/tx_zero_length",
        "rx/drop_all_back_to_back",
    ];
    let mut names = Vec::new();
    for s in srcs {
        let name = format!("v/{s}.json");
        put_edited(s, &root.join(&name), |_| {});
        names.push(name);
    }
    names.sort();
    names
}

/// JSON lines without their wall time, which is all that may differ.
fn without_wall_time(out: &str) -> Vec<serde_json::Value> {
    out.lines()
        .map(|l| {
            let mut j: serde_json::Value = serde_json::from_str(l).unwrap();
            j.as_object_mut().unwrap().remove("wall_seconds");
            j
        })
        .collect()
}

#[test]
fn jobs_run_in_parallel_and_report_in_path_order() {
    let t = tempfile::tempdir().unwrap();
    let names = small_regression(t.path());
    let (code, one, err) = rnic_in(t.path(), &["cosim", "v", "--json", "--jobs", "1"], &[]);
    assert_eq!(code, 0, "{one}{err}");
    let one = without_wall_time(&one);
    let order: Vec<&str> = one.iter().map(|j| j["vector"].as_str().unwrap()).collect();
    assert_eq!(order, names);
    // More threads than cores, so that runs overlap and finish out of
    // order: the same lines, in the same order, and the same TLP log.
    for jobs in ["3", "7"] {
        let args = ["cosim", "v", "--json", "--jobs", jobs, "--tlp-log", "t.log"];
        let (code, many, err) = rnic_in(t.path(), &args, &[]);
        assert_eq!(code, 0, "{many}{err}");
        assert_eq!(without_wall_time(&many), one, "--jobs {jobs}");
        let log = std::fs::read_to_string(t.path().join("t.log")).unwrap();
        let heads: Vec<&str> = log.lines().filter(|l| l.starts_with("# ")).collect();
        let want: Vec<String> = names.iter().map(|n| format!("# {n}")).collect();
        assert_eq!(heads, want);
    }
    let (code, out, _) = rnic_in(t.path(), &["run", "v", "--jobs", "4"], &[]);
    assert_eq!(code, 0);
    assert!(out.ends_with("7 passed, 0 failed\n"), "{out}");
    let (code, _, err) = rnic_in(t.path(), &["run", "v", "--jobs", "0"], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("--jobs"), "{err}");
}

#[test]
fn the_shards_together_run_every_vector_once() {
    let t = tempfile::tempdir().unwrap();
    let names = small_regression(t.path());
    for n in 1..=4usize {
        let mut union = Vec::new();
        for k in 1..=n {
            let shard = format!("{k}/{n}");
            let (code, out, err) =
                rnic_in(t.path(), &["run", "v", "--json", "--shard", &shard], &[]);
            assert_eq!(code, 0, "{out}{err}");
            let got = vectors_run(&out);
            // Vector i of the sorted list is shard (i mod N) + 1's.
            let want: Vec<String> = names
                .iter()
                .enumerate()
                .filter(|(i, _)| i % n == k - 1)
                .map(|(_, s)| s.clone())
                .collect();
            assert_eq!(got, want, "--shard {shard}");
            assert!(
                err.contains(&format!("note: shard {shard}: {} of 7 vectors", want.len())),
                "{err}"
            );
            union.extend(got);
        }
        union.sort();
        assert_eq!(union, names, "{n} shards");
    }
    // More shards than vectors: the empty ones pass.
    let (code, out, _) = rnic_in(t.path(), &["run", "v", "--shard", "9/9"], &[]);
    assert_eq!(code, 0);
    assert_eq!(out, "0 passed, 0 failed\n");
}

#[test]
fn a_bad_shard_is_bad_input_that_says_why() {
    for (shard, why) in [
        ("0/4", "K must be between 1 and N (4)"),
        ("5/4", "K must be between 1 and N (4)"),
        ("1/0", "N must be at least 1"),
        ("2", "expected K/N"),
        ("a/4", "K (a) is not a whole number"),
        ("1/-4", "N (-4) is not a whole number"),
    ] {
        let (code, out, err) = rnic(&["run", GOOD, "--shard", shard]);
        assert_eq!(code, 2, "--shard {shard}: {out}{err}");
        assert!(out.is_empty(), "nothing ran: {out}");
        assert!(
            err.contains(&format!("invalid value '{shard}' for '--shard <K/N>'"))
                && err.contains(why),
            "--shard {shard}: {err}"
        );
    }
}

/// The attribute `name` of `n` as a number.
fn count(n: roxmltree::Node, name: &str) -> usize {
    n.attribute(name)
        .unwrap_or_else(|| panic!("no {name}"))
        .parse()
        .unwrap()
}

#[test]
fn junit_reports_passes_failures_and_bad_input() {
    let t = tempfile::tempdir().unwrap();
    let v = t.path().join("v");
    put_edited("dma/rd_fault_ur", &v.join("good.json"), |_| {});
    put_edited("dma/rd_fault_ca", &v.join("mismatch.json"), |j| {
        let c = j["expect"]["cycles"].as_u64().unwrap();
        j["expect"]["cycles"] = (c + 1).into();
    });
    // A name full of markup, and a field that does not load.
    let bad = r#"x & <y> "z" 'w'.json"#;
    put_edited("tx/tx_zero_length", &v.join(bad), |j| {
        j["max_cycles"] = "<lots>".into();
    });
    let args = ["cosim", "v", "--jobs", "2", "--junit", "out/ci/junit-1.xml"];
    let (code, out, err) = rnic_in(t.path(), &args, &[]);
    assert_eq!(code, 2, "the worst is bad input: {out}{err}");
    assert!(out.ends_with("1 passed, 2 failed\n"), "{out}");
    let dir = t.path().join("out/ci");
    assert_eq!(files_under(&dir), ["junit-1.xml"], "no temporary file left");
    let xml = std::fs::read_to_string(dir.join("junit-1.xml")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(count(suite, "tests"), 3, "{xml}");
    assert_eq!(count(suite, "failures"), 1, "{xml}");
    assert_eq!(count(suite, "errors"), 1, "{xml}");
    assert!(suite.attribute("time").unwrap().parse::<f64>().unwrap() > 0.0);
    let cases: Vec<_> = suite.children().filter(|n| n.is_element()).collect();
    let names: Vec<_> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
    let bad_path = format!("v/{bad}");
    assert_eq!(names, ["v/good.json", "v/mismatch.json", &bad_path]);
    let classes: Vec<_> = cases
        .iter()
        .map(|c| c.attribute("classname").unwrap())
        .collect();
    assert_eq!(classes, ["dma_rd", "dma_rd", "rnic_top"]);
    assert!(
        cases[0].first_element_child().is_none(),
        "a pass is a bare testcase"
    );
    let failure = cases[1].first_element_child().unwrap();
    assert!(failure.has_tag_name("failure"));
    assert_eq!(failure.attribute("type"), Some("mismatch"));
    assert!(
        failure
            .attribute("message")
            .unwrap()
            .starts_with("cycles: expected "),
        "{xml}"
    );
    let error = cases[2].first_element_child().unwrap();
    assert!(error.has_tag_name("error"));
    let msg = error.attribute("message").unwrap();
    assert!(
        msg.contains(&bad_path) && msg.contains("max_cycles"),
        "{msg}"
    );
    assert_eq!(error.text(), Some(msg));
}

#[test]
fn a_junit_file_that_cannot_be_written_stops_before_the_first_run() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(t.path().join("f"), "").unwrap();
    for (junit, why) in [
        ("f/sub/r.xml", "f/sub: Not a directory"),
        (".", "not a file name"),
    ] {
        let (code, out, err) = rnic_in(
            t.path(),
            &[
                "run",
                &format!("{}/{GOOD}", env!("CARGO_MANIFEST_DIR")),
                "--junit",
                junit,
            ],
            &[],
        );
        assert_eq!(code, 2, "{out}{err}");
        assert!(out.is_empty(), "nothing ran: {out}");
        assert!(err.contains(why), "{err}");
    }
}

#[test]
fn bless_with_jobs_writes_each_vector_once() {
    let t = tempfile::tempdir().unwrap();
    let names = small_regression(t.path());
    for n in &names {
        let f = t.path().join(n);
        let mut j: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        j.as_object_mut().unwrap().remove("expect");
        std::fs::write(&f, j.to_string()).unwrap();
    }
    let (code, out, err) = rnic_in(t.path(), &["bless", "v", "--jobs", "3"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("BLESSED").count(), names.len(), "{out}");
    let (code, out, err) = rnic_in(t.path(), &["cosim", "v", "--jobs", "3"], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.ends_with("7 passed, 0 failed\n"), "{out}");
}

const PAIR: &str = "../vectors/pair/ce_cnp_loop.json";

#[test]
fn a_pair_vector_writes_per_nic_waveforms_and_one_capture_of_both_ways() {
    let d = scratch("pair");
    let (vcd, pcap) = (d.join("vcd"), d.join("both.pcap"));
    let (code, out, err) = rnic(&[
        "cosim",
        PAIR,
        "--vcd",
        vcd.to_str().unwrap(),
        "--vcd-window",
        "200",
        "--pcap",
        pcap.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    for nic in ["a", "b"] {
        for side in ["model.vcd", "rtl.vcd"] {
            let f = vcd.join("ce_cnp_loop").join(nic).join(side);
            assert!(f.is_file(), "{} missing", f.display());
        }
    }
    // One capture, both directions, in time order: A's 128 data frames and
    // B's CNPs (source MACs 02:00:00:00:00:xx and 02:00:00:00:01:xx).
    let b = std::fs::read(&pcap).unwrap();
    let (mut at, mut last, mut from) = (24usize, 0u64, [0usize; 2]);
    while at < b.len() {
        let word = |o: usize| u32::from_le_bytes(b[at + o..at + o + 4].try_into().unwrap());
        let t = word(0) as u64 * 1_000_000_000 + word(4) as u64;
        assert!(t >= last, "capture not in time order");
        last = t;
        from[b[at + 16 + 10] as usize] += 1;
        at += 16 + word(8) as usize;
    }
    assert_eq!(from, [128, 6]);
}

#[test]
fn a_malformed_pair_vector_names_the_host_and_field_with_exit_2() {
    let d = scratch("pair_bad");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(PAIR)).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["b"]["qps"][1]["mtu"] = 100.into();
    let f = d.join("v.json");
    std::fs::write(&f, v.to_string()).unwrap();
    let (code, out, _) = rnic(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains(&format!(
            "{}: b.qps[1].mtu: 100 is not 256, 512, 1024, 2048 or 4096",
            f.display()
        )),
        "{out}"
    );
    v["b"]["qps"][1]["mtu"] = 1024.into();
    v["a"]["peer"] = serde_json::json!({"auto_ack": true});
    std::fs::write(&f, v.to_string()).unwrap();
    let (code, out, _) = rnic(&["run", f.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("a.peer: the other NIC"), "{out}");
}

const FABRIC: &str = "../vectors/fabric/incast_4to1_64k_rtl.json";

#[test]
fn a_fabric_vector_runs_with_rtl_hosts_named_a_capture_and_a_plot() {
    let d = scratch("fabric");
    let (pcap, svg) = (d.join("all.pcapng"), d.join("queues.svg"));
    let (code, out, err) = rnic(&[
        "run",
        "--rtl",
        "0,2",
        FABRIC,
        "--pcap",
        pcap.to_str().unwrap(),
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    // Two hosts ran their RTL in lockstep: the verdict line says so.
    assert!(out.contains("PASS     cosim ../vectors/fabric/"), "{out}");
    // pcapng with a comment per frame naming its link; both directions of
    // some link are there.
    let b = std::fs::read(&pcap).unwrap();
    let has = |s: &str| b.windows(s.len()).any(|w| w == s.as_bytes());
    assert!(has("h1 to switch") && has("switch to h0") && has("switch to h4"));
    // The plot: the queue toward the receiver against RED's thresholds.
    let svg = std::fs::read_to_string(&svg).unwrap();
    for s in ["port to h0", "RED Kmin", "paused toward"] {
        assert!(svg.contains(s), "{s} missing from the plot");
    }
}

#[test]
fn bad_rtl_hosts_are_bad_input_and_fabric_waveforms_are_written() {
    let (code, out, err) = rnic(&["run", "--rtl", "9", FABRIC]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("--rtl: host 9 does not exist (5 hosts)"),
        "{out}{err}"
    );
    let (code, _, err) = rnic(&["run", "--rtl", "x", FABRIC]);
    assert_eq!(code, 2);
    assert!(err.contains("\"x\" is not a host index"), "{err}");
    // Every host's model trace, under the vector's name.
    let d = scratch("fabric_vcd");
    let (code, out, err) = rnic(&["run", FABRIC, "--vcd", d.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let stem = Path::new(FABRIC).file_stem().unwrap();
    for h in 0..5 {
        let f = d.join(stem).join(format!("h{h}/model.vcd"));
        assert!(f.metadata().is_ok_and(|m| m.len() > 0), "{}", f.display());
    }
}

#[test]
fn coverage_tables_count_points_per_block_and_name_a_bad_file() {
    let dir = scratch("coverage");
    let dat = dir.join("v.dat");
    let point = |page: &str, l: u32, n: u64| {
        format!("C '\x01f\x02/r/hw/rtl/a.sv\x01l\x02{l}\x01page\x02{page}\x01o\x02block' {n}\n")
    };
    std::fs::write(
        &dat,
        format!(
            "# SystemC::Coverage-3\n{}{}{}",
            point("v_line/pfc", 3, 9),
            point("v_line/pfc", 4, 0),
            point("v_toggle/pfc__Q1", 5, 2)
        ),
    )
    .unwrap();
    let (code, out, err) = rnic(&["coverage", dat.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("| `pfc` | 1/2 (50.0 %) | 1/1 (100.0 %) |"),
        "{out}"
    );
    assert!(
        out.contains("| all | 1/2 (50.0 %) | 1/1 (100.0 %) |"),
        "{out}"
    );
    let (code, out, err) = rnic(&[
        "coverage",
        "--side-by-side",
        dat.to_str().unwrap(),
        dat.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("| `pfc` | 50.0 / 50.0 | 100.0 / 100.0 | 2 line, 1 toggle |"),
        "{out}"
    );

    std::fs::write(&dat, "# SystemC::Coverage-3\nC '\x01o\x02block' 1\n").unwrap();
    let (code, _, err) = rnic(&["coverage", dat.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("v.dat") && err.contains("line 2: no page"),
        "{err}"
    );
}

/// The mutant sites of the shipped RTL include the two holes issue 14 names
/// (a requester CQE's immediate stuck at 0; csr's QP-table write window
/// one address longer), and none inside an elaboration-time check.
#[test]
fn mutant_sites_of_the_shipped_rtl() {
    let out = Command::new(env!("CARGO_BIN_EXE_rnic-mutate"))
        .args(["list", "--repo", ".."])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("rnic-mutate runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let has = |file_line: &str, what: &str| {
        text.lines()
            .any(|l| l.contains(&format!(" {file_line} ")) && l.contains(what))
    };
    let line_of = |file: &str, needle: &str| {
        let src = std::fs::read_to_string(format!("../hw/rtl/{file}")).unwrap();
        1 + src.lines().position(|l| l.contains(needle)).expect(needle)
    };
    let imm = line_of("tx_engine.sv", "cpl_imm_q        <= has_imm");
    assert!(
        has(
            &format!("tx_engine.sv:{imm}"),
            r#"stuck: "has_imm ? s_imm : 32'd0" -> "'0""#
        ),
        "{text}"
    );
    let win = line_of("csr.sv", "wr_qp_hit = wr_glob &&");
    assert!(
        has(&format!("csr.sv:{win}"), r#"rel: "<" -> "<=""#),
        "{text}"
    );
    let check = line_of("pfc.sv", "$error");
    assert!(!has(&format!("pfc.sv:{check}"), ":"), "{text}");
    // The list names the sites it matches: on the QP window line, the
    // word bound (the second `<`) is listed as equivalent, the table
    // bound (the first) is not (`rel#2`, hw/equivalent_mutants.txt).
    let on_win: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&format!(" csr.sv:{win} rel: ")))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(on_win.len(), 2, "{text}");
    let listed: Vec<&str> = text
        .lines()
        .find_map(|l| l.split_once("listed as equivalent (hw/equivalent_mutants.txt): sites "))
        .map(|(_, s)| s.split(", ").collect())
        .unwrap_or_else(|| panic!("no list of equivalent sites in:\n{text}"));
    assert!(listed.contains(&on_win[1]), "{listed:?} {on_win:?}");
    assert!(!listed.contains(&on_win[0]), "{listed:?} {on_win:?}");
    let total: usize = text
        .lines()
        .find(|l| l.contains(" sites: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(total > 5000, "{total} sites");
}

/// `rnic-mutate run` refuses bad input before it builds or writes anything.
#[test]
fn mutate_run_names_bad_input_and_writes_nothing() {
    let dir = scratch("mutate-bad");
    let out = dir.join("out");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_rnic-mutate"))
            .arg("run")
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("rnic-mutate runs")
    };
    let o = run(&[
        "--repo",
        "..",
        "--out",
        out.to_str().unwrap(),
        "--sites",
        "99999999",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("--sites: no site 99999999"), "{err}");
    let o = run(&[
        "--repo",
        dir.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not the repository"), "{err}");
    assert!(!out.exists(), "nothing written for bad input");
}

/// An entry of hw/equivalent_mutants.txt that matches no site of the RTL
/// is refused, named by file and line: the list cannot excuse a mutant
/// that is not there.
#[test]
fn a_stale_equivalent_mutant_is_refused() {
    let repo = scratch("mutate-stale");
    std::fs::create_dir_all(repo.join("hw/rtl")).unwrap();
    std::fs::write(repo.join("Cargo.toml"), "").unwrap();
    std::fs::write(
        repo.join("hw/rtl/a.sv"),
        "module a (input logic x, output logic y);\n  assign y = !x;\nendmodule\n",
    )
    .unwrap();
    let list = |entry: &str| {
        std::fs::write(
            repo.join("hw/equivalent_mutants.txt"),
            format!("# comment\n{entry}\n"),
        )
        .unwrap();
        Command::new(env!("CARGO_BIN_EXE_rnic-mutate"))
            .args(["list", "--repo", repo.to_str().unwrap()])
            .output()
            .expect("rnic-mutate runs")
    };
    let o = list("a.sv | logic | assign  y = !x; | test entry");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("1 listed as equivalent"));
    let o = list("a.sv | rel | assign y = !x; | test entry");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("equivalent_mutants.txt:2: no rel site on a line `assign y = !x;` of a.sv"),
        "{err}"
    );
    let o = list("a.sv | logic");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(":2: expected `file | op | source line | reason`"),
        "{err}"
    );
}
