//! Every frame of every vector that sends frames (vectors/tx, and the CNPs
//! and data of vectors/rx and vectors/cc), as model and RTL sent it in lockstep, decoded and checked by a third party: scapy's RoCE layers
//! (tests/scapy_roce_check.py: Ethernet/802.1Q, IPv4 checksum or IPv6,
//! UDP port and length, BTH fields, ICRC). Then one covered byte of one
//! frame is changed and the script must report exactly that frame's ICRC
//! as bad. The pcaps stay in the target tmp dir, for Wireshark.
//!
//! Missing python3 or scapy is a failure, not a skip (CI installs them).

use std::path::{Path, PathBuf};
use std::process::Output;

use rnic_testbench::check::scapy;
use rnic_testbench::pcap;
use rnic_testbench::scenario::{self, Mode, RunOpts};
use rnic_testbench::vector::{self, Vector};

fn run_script(pcap: &Path, extra: &[&str]) -> Output {
    scapy::run(pcap, extra).unwrap_or_else(|e| panic!("{e}"))
}

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("tx_scapy");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn scapy_accepts_every_frame_of_every_tx_vector() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = vector::collect(&[
        root.join("vectors/tx"),
        root.join("vectors/rx"),
        root.join("vectors/cc"),
    ])
    .unwrap();
    assert!(files.len() >= 70, "only {} vectors", files.len());
    let (mut total, mut cnps) = (0, 0);
    let mut failures = Vec::new();
    for f in &files {
        let v = Vector::load(f).unwrap();
        let r = scenario::run(&v, Mode::Lockstep, &RunOpts::default()).unwrap();
        assert!(
            r.clean(),
            "{}: {:?} {:?}",
            f.display(),
            r.divergence,
            r.failures
        );
        if r.tx_frames.is_empty() {
            // Vectors whose every WQE fails send nothing; nothing to decode.
            continue;
        }
        let pcap = tmp(&format!("{}.pcap", v.name));
        pcap::write_run(&pcap, &r.tx_frames).unwrap();
        let out = run_script(&pcap, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            failures.push(format!("{}:\n{stdout}", f.display()));
        }
        // One line per frame: the script looked at every one.
        let lines = stdout.lines().filter(|l| l.starts_with("frame ")).count();
        assert_eq!(lines, r.tx_frames.len(), "{}: {stdout}", f.display());
        total += r.tx_frames.len();
        cnps += stdout.lines().filter(|l| l.contains("CNP")).count();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    println!(
        "{total} frames ({cnps} CNPs) of {} vectors checked by scapy",
        files.len()
    );
    assert!(total > 1000, "only {total} frames");
    assert!(cnps >= 20, "only {cnps} CNPs decoded");
}

#[test]
fn scapy_catches_one_changed_byte() {
    let v = Vector::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/tx/tx_vlan.json"))
        .unwrap();
    let r = scenario::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    assert!(r.clean());
    let mut frames = r.tx_frames.clone();
    assert!(frames.len() >= 3);
    // A payload byte of frame 1 (covered by the ICRC, not by any other check).
    let victim = 1;
    let n = frames[victim].1.len();
    frames[victim].1[n - 10] ^= 0x01;
    let pcap = tmp("tx_vlan_corrupted.pcap");
    pcap::write_run(&pcap, &frames).unwrap();
    let out = run_script(&pcap, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(stdout.matches("BAD").count(), 1, "{stdout}");
    let out = run_script(&pcap, &["--expect-bad-icrc", &victim.to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
