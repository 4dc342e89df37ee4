//! Two-NIC figures from simulated cycles (exact, so asserted as bounds):
//! the shipped vectors `vectors/pair/rc_write_64k_rtt500.json` and
//! `rc_read_64k_rtt500.json` run in lockstep with every independent check,
//! and the timing of the data frames (A's WRITEs, B's READ responses) on
//! the sender's `tx_*` gives the goodput.
//!
//! Two bounds, each derived here from the vector alone: the wire (the
//! frames' own beats back to back, one 64-byte beat a cycle, every frame
//! on a new beat) and the host's completion stream that carries the
//! payload to the NIC (`cpl_size`-byte completions, each a 12-byte header
//! and its data on new 64-byte beats of `rc_*`: 512 bytes in 9 beats,
//! 56.9 bytes a cycle, below the wire's 63). Goodput is the payload over
//! the cycles from the first frame's first beat to the last frame's last.
//! The contract: at least 95 % of the lower bound with RTT 500 cycles and
//! a host read latency of 100, i.e. neither the ACK window
//! (`ack_tracker`, 6 messages) nor the read round trip stalls the sender.

use std::path::Path;

use rnic_testbench::scenario::{pair, Mode, RunOpts};
use rnic_testbench::vector::{AnyVector, SystemVector};
use rnic_testbench::wire::roce::RoceRepr;

/// 64-byte beats a frame of `len` bytes takes on `tx_*`.
fn beats(len: usize) -> u64 {
    len.div_ceil(64) as u64
}

fn load(name: &str) -> SystemVector {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("vectors/pair/{name}.json"));
    match AnyVector::load(&f).unwrap_or_else(|e| panic!("{e}")) {
        AnyVector::System(v) => *v,
        AnyVector::Single(_) => panic!("not a system vector"),
    }
}

/// Runs the pair vector `name` in lockstep (clean), measures the payload
/// rate of the data frames whose opcode `is_data` selects, prints it as
/// `what` and asserts it is at least 95 % of the lower bound, the host
/// completion size being `cpl` (the sender's root complex). Returns the
/// report for the caller's own checks.
fn goodput(
    name: &str,
    what: &str,
    is_data: impl Fn(u8) -> bool,
    cpl_of: impl Fn(&SystemVector) -> u32,
) -> pair::PairReport {
    let v = load(name);
    let r = pair::run(&v, Mode::Lockstep, &RunOpts::default()).unwrap();
    assert!(
        r.report.clean(),
        "{:?} {:?}",
        r.report.divergence,
        r.report.failures
    );
    let mut first = u64::MAX;
    let mut end = 0;
    let (mut sum_beats, mut payload, mut frames) = (0u64, 0u64, 0u64);
    for (cycle, f) in &r.report.tx_frames {
        let p = RoceRepr::parse_bytes(f).expect("a good frame");
        if !is_data(p.bth.opcode) {
            continue;
        }
        first = first.min(*cycle);
        end = end.max(cycle + beats(f.len()));
        sum_beats += beats(f.len());
        payload += p.payload.len() as u64;
        frames += 1;
    }
    assert_eq!(
        payload,
        8 * 65536,
        "{what}: every message's data on the wire"
    );
    assert_eq!(frames, 8 * 16, "{what}: 16 frames of 4 KiB per message");
    let span = end - first;
    let bpc = payload as f64 / span as f64;
    let wire = payload as f64 / sum_beats as f64;
    let cpl = cpl_of(&v) as u64;
    let host = cpl as f64 / (12 + cpl).div_ceil(64) as f64;
    let bound = wire.min(host);
    println!(
        "{what} 8 x 64 KiB, MTU 4096, RTT 500, completions of {cpl} B: {payload} payload bytes \
         in {span} cycles = {bpc:.2} B/cycle ({:.1} Gb/s at 250 MHz); wire bound {wire:.2}, \
         host completion bound {host:.2}: {:.1} % of the lower",
        bpc * 8.0 * 0.25,
        100.0 * bpc / bound
    );
    assert!(
        bpc >= 0.95 * bound,
        "{what}: goodput {:.1} % of the bound",
        100.0 * bpc / bound
    );
    r
}

#[test]
fn write_goodput_64k_mtu4096_rtt500() {
    // A's request frames (B sends only ACKs): RDMA WRITE FIRST/MIDDLE/LAST/ONLY.
    let r = goodput(
        "rc_write_64k_rtt500",
        "WRITE",
        |op| matches!(op, 0x06..=0x08 | 0x0A),
        |v| v.a.root_complex.cpl_size,
    );
    // Every WRITE completed at A, successfully.
    assert_eq!(r.a.cqes.len(), 8);
    assert!(r.a.cqes.iter().all(|c| c.status == 0));
}

#[test]
fn read_goodput_64k_mtu4096_rtt500() {
    // B's READ RESPONSE frames, whose payload B's host completions bring.
    let r = goodput(
        "rc_read_64k_rtt500",
        "READ",
        |op| (0x0D..=0x10).contains(&op),
        |v| v.b.root_complex.cpl_size,
    );
    // Every READ completed at A, successfully, with its length.
    assert_eq!(r.a.cqes.len(), 8);
    assert!(r
        .a
        .cqes
        .iter()
        .all(|c| c.status == 0 && c.opcode == 4 && c.len == 65536));
}
