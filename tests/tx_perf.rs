//! The transmit path's performance contract (issue 3), in exact simulation
//! cycles, every point in lockstep (model and RTL):
//!
//! - throughput: one QP (or four) streaming 64 KiB RDMA WRITEs, PCIe round
//!   trip 500 cycles, MRRS 512, must reach 95 % of the bound set by the
//!   slower of
//!   - the MAC: each frame takes ceil(frame bytes / 64) beats, frame bytes =
//!     headers (Ethernet 14 + IPv4 20 + UDP 8 + BTH 12, + RETH 16 on the
//!     first packet of a message) + payload + ICRC 4;
//!   - the completions: a completion of S payload bytes takes
//!     ceil((12 + S) / 64) beats of `rc` (3-DW header), so at most
//!     S / ceil((12 + S) / 64) payload bytes a cycle.
//!
//!   Measured: payload bytes of all frames over the cycles from the first
//!   frame's first beat to the last frame's last beat, both included (the
//!   first round trips, before any frame, are not the stream's rate).
//! - latency: a 64-byte RDMA WRITE's first frame beat is on `tx_*` at most
//!   2 x latency + 32 cycles after the doorbell's MMIO write.
//!
//! `cargo test --release --test tx_perf -- --nocapture` prints the table.

mod common;
use common::figures::Table;

use common::vector_json::{doorbell_json, mr_json, uc_qp_json, write_wqe_json, MR_VA};
use rnic_model::rnic_top::RnicTop;
use rnic_testbench::lockstep;
use rnic_testbench::rtl::RtlRnicTop;
use rnic_testbench::scenario::RnicTopEnv;
use rnic_testbench::vector::Vector;

const LATENCY: u32 = 500;
const MSG: u32 = 65536;
const REQUIRED_PERCENT: u64 = 95;

/// `msgs` 64 KiB unsignaled WRITEs per QP, `qps` QPs, all posted at once.
fn stream(mtu: u32, cpl_size: u32, qps: u32, msgs: u32, latency: u32, len: u32) -> Vector {
    let mut wqes = Vec::new();
    for k in 0..msgs {
        for q in 0..qps {
            let la = MR_VA + (k * qps + q) as u64 * MSG as u64;
            wqes.push(write_wqe_json(q, k, len, la));
        }
    }
    let qs: Vec<String> = (0..qps).map(|n| uc_qp_json(n, mtu, "")).collect();
    let dbs: Vec<String> = (0..qps).map(|q| doorbell_json(0, q, msgs)).collect();
    let total = (msgs * qps) as u64 * MSG as u64;
    let text = format!(
        r#"{{"format":1,"name":"tx_stream","description":"stream","checked_against":"tests/tx_perf.rs",
        "top":"rnic_top",
        "root_complex":{{"latency":{latency},"rcb":64,"cpl_size":{cpl_size}}},
        "memory":[{{"addr":"0x1000000","len":{total},"seed":3}}],
        "qps":[{}],
        "mrs":[{}],
        "cqs":[{{"cq":0,"ring":{{"base":"0x20000000","log_size":4}}}}],
        "wqes":[{}], "doorbells":[{}], "max_cycles":400000}}"#,
        qs.join(","),
        mr_json(&format!("{total:#x}")),
        wqes.join(","),
        dbs.join(",")
    );
    Vector::parse(std::path::Path::new("tx_stream"), &text).expect("valid vector")
}

fn run(v: &Vector) -> RnicTopEnv {
    let mut env = RnicTopEnv::new(v).unwrap();
    let fin = lockstep::run(
        &mut RnicTop::new(),
        &mut RtlRnicTop::new(),
        &mut env,
        v.max_cycles,
    )
    .unwrap_or_else(|d| panic!("{d}"));
    assert!(fin.completed, "stream did not complete");
    env.finish_checks(fin.cycles);
    assert!(env.common.failures.is_empty(), "{:#?}", env.common.failures);
    env
}

/// Beats on `tx_*` for one packet of `pay` payload bytes.
fn frame_beats(pay: u32, first: bool) -> u64 {
    let hdr = 14 + 20 + 8 + 12 + if first { 16 } else { 0 };
    (hdr + pay + 4).div_ceil(64) as u64
}

/// Bound in payload bytes per 1000 cycles (integer, rounded down).
fn bound_milli(mtu: u32, cpl_size: u32) -> (u64, u64) {
    let pkts = MSG / mtu;
    let beats: u64 = (0..pkts).map(|p| frame_beats(mtu, p == 0)).sum();
    let mac = MSG as u64 * 1000 / beats;
    let rc = cpl_size as u64 * 1000 / (12 + cpl_size).div_ceil(64) as u64;
    (mac, rc)
}

#[test]
fn tx_throughput_meets_95_percent_of_the_bound() {
    let mut t = Table::new(
        "tx_throughput",
        &[
            "QPs",
            "path MTU",
            "completion size",
            "MAC bound",
            "rc bound",
            "B/cycle",
            "% of bound",
            "Gb/s",
        ],
    );
    let mut points = Vec::new();
    for mtu in [1024, 2048, 4096] {
        for cpl in [64, 256, 512] {
            points.push((1, mtu, cpl, 4));
        }
    }
    points.push((4, 4096, 512, 2));
    let mut failures = Vec::new();
    for (qps, mtu, cpl, msgs) in points {
        let v = stream(mtu, cpl, qps, msgs, LATENCY, MSG);
        let env = run(&v);
        let first = env.frames[0].0;
        let last = *env.frame_ends.last().unwrap();
        let cycles = last - first + 1;
        let bytes = (qps * msgs) as u64 * MSG as u64;
        let (mac, rc) = bound_milli(mtu, cpl);
        let bound = mac.min(rc);
        let got_milli = bytes * 1000 / cycles;
        let pct_tenths = got_milli * 1000 / bound;
        t.row(&[
            qps.to_string(),
            mtu.to_string(),
            cpl.to_string(),
            format!("{:.2}", mac as f64 / 1000.0),
            format!("{:.2}", rc as f64 / 1000.0),
            format!("{:.2}", got_milli as f64 / 1000.0),
            format!("{:.1}", pct_tenths as f64 / 10.0),
            format!("{:.1}", got_milli as f64 * 8.0 * 0.25 / 1000.0),
        ]);
        if got_milli * 100 < bound * REQUIRED_PERCENT {
            failures.push(format!(
                "{qps} QPs MTU {mtu} cpl {cpl}: {got_milli}/1000 B/cycle < 95 % of {bound}/1000"
            ));
        }
    }
    t.finish();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn doorbell_to_first_byte_is_at_most_two_round_trips_plus_32() {
    let mut t = Table::new(
        "doorbell_to_wire",
        &[
            "PCIe round trip L",
            "doorbell to first frame beat",
            "contract",
        ],
    );
    for latency in [100, 500] {
        let v = stream(1024, 256, 1, 1, latency, 64);
        let env = run(&v);
        let db = env.doorbell_cycles[0];
        let first = env.frames[0].0;
        let took = first - db;
        println!(
            "latency {latency}: doorbell at {db}, first byte at {first}: {took} cycles = 2L + {}",
            took as i64 - 2 * latency as i64
        );
        t.row(&[
            latency.to_string(),
            format!("{took} = 2 L + {}", took as i64 - 2 * latency as i64),
            format!("≤ 2 L + 32 = {}", 2 * latency + 32),
        ]);
        assert!(
            took <= 2 * latency as u64 + 32,
            "{took} > 2 x {latency} + 32"
        );
    }
    t.finish();
}
