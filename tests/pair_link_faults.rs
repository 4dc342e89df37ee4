//! The link faults of a pair (docs/pair.md, "Link faults"): the link
//! check judges the link by the vector's faults, applied by the check
//! itself, so a link that does something else fails the run. Each case
//! runs a shipped `vectors/loss/` vector over a link whose faults differ
//! from the vector's (`pair::run_with_link`) and shows `check_link`
//! naming the difference; the faithful link passes. And the capture of a
//! faulty run is pcapng with a comment on each frame the link lost or
//! altered, which tshark reads when it is installed.

mod common;

use std::path::Path;

use rnic_model::rnic_top::RnicTop;
use rnic_testbench::scenario::pair::{self, PairReport};
use rnic_testbench::scenario::{Mode, RunOpts};
use rnic_testbench::vector::{AnyVector, LinkFault, LinkSpec, SystemVector};

fn load(name: &str) -> SystemVector {
    common::pair_nic::load_system(&format!("vectors/loss/{name}.json"))
}

fn run_over(v: &SystemVector, link: &LinkSpec) -> PairReport {
    let r = pair::run_with_link(v, link, Mode::Model, &RunOpts::default(), |_| {
        RnicTop::new()
    })
    .unwrap();
    assert!(r.report.divergence.is_none());
    r
}

fn link_failures(r: &PairReport) -> Vec<&String> {
    r.report
        .failures
        .iter()
        .filter(|f| f.starts_with("link "))
        .collect()
}

#[test]
fn the_faithful_link_passes() {
    for name in ["drop_write_middle", "corrupt_request", "reorder_requests"] {
        let v = load(name);
        let r = run_over(&v, &v.link);
        assert!(
            r.report.failures.is_empty(),
            "{name}: {:?}",
            r.report.failures
        );
        assert!(r.report.completed, "{name}");
    }
}

#[test]
fn a_link_that_drops_nothing_fails_the_check() {
    let v = load("drop_write_middle");
    let mut link = v.link.clone();
    link.a_to_b.faults.clear();
    let r = run_over(&v, &link);
    let f = link_failures(&r);
    assert!(
        f.iter().any(
            |f| f.contains("link A to B: 8 frames sent on A's tx_*, 7 must arrive")
                && f.contains("8 arrived on B's rx_*")
        ),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|f| f.contains("link A to B: the link's record of frame 2 ()")),
        "{f:?}"
    );
}

#[test]
fn a_link_that_corrupts_another_byte_fails_the_check() {
    let v = load("corrupt_request");
    let mut link = v.link.clone();
    let LinkFault::Corrupt(s) = &mut link.a_to_b.faults[0] else {
        panic!("corrupt_request corrupts")
    };
    s.byte = Some(101);
    let r = run_over(&v, &link);
    let f = link_failures(&r);
    assert!(
        f.iter().any(
            |f| f.contains("link A to B: arrival 1 is not frame 1 as the link must deliver it")
        ),
        "{f:?}"
    );
}

#[test]
fn a_link_that_keeps_the_order_fails_the_check() {
    let v = load("reorder_requests");
    let mut link = v.link.clone();
    link.a_to_b.faults.clear();
    let r = run_over(&v, &link);
    let f = link_failures(&r);
    assert!(
        f.iter().any(
            |f| f.contains("link A to B: arrival 0 is not frame 1 as the link must deliver it")
        ),
        "{f:?}"
    );
}

#[test]
fn a_faulty_run_is_captured_as_pcapng_with_comments() {
    let v = load("link_down");
    let r = run_over(&v, &v.link);
    let c = r.report.tx_comments.as_ref().expect("comments with faults");
    assert_eq!(c.len(), r.report.tx_frames.len());
    let lost: Vec<&String> = c.iter().filter(|c| !c.is_empty()).collect();
    assert_eq!(lost.len(), 7, "{lost:?}");
    assert!(lost
        .iter()
        .all(|c| c.starts_with("A to B frame ") && c.ends_with(": lost (faults[0])")));
    // A pair without faults keeps classic pcap (no comments).
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors/pair/uc_both_ways.json");
    let AnyVector::System(clean) = AnyVector::load(&f).unwrap() else {
        panic!()
    };
    assert!(run_over(&clean, &clean.link).report.tx_comments.is_none());

    let path = std::env::temp_dir().join(format!("rnic_link_down_{}.pcapng", std::process::id()));
    rnic_testbench::pcap::write_run_ng(&path, &r.report.tx_frames, c).unwrap();
    let out = std::process::Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-T", "fields", "-e", "frame.comment"])
        .output();
    match out {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), c.len(), "{text}");
            for (l, want) in lines.iter().zip(c) {
                assert_eq!(l, want);
            }
        }
        _ => eprintln!("tshark not available: the pcapng is not read back"),
    }
    std::fs::remove_file(&path).unwrap();
}
