//! Write throughput of `dma_wr`, model and RTL in lockstep: a stream of
//! 8 × 64 KiB writes must fill at least 95 % of what the `rq` stream can
//! carry. An MWr of MPS payload bytes is ceil((12 + MPS) / 64) beats (3-DW
//! header), so `rq` carries MPS / ceil((12 + MPS) / 64) payload bytes a cycle
//! (128 -> 42.67, 256 -> 51.2, 512 -> 56.89, 4096 -> 63.02). The rate is
//! measured over the whole run, start-up included: total bytes / cycles.

mod common;
use common::figures::Table;

use std::path::Path;

use rnic_testbench::scenario::{self, Mode, RunOpts};
use rnic_testbench::vector::Vector;

const WRITES: u64 = 8;
const LEN: u64 = 65536;

fn stream(mps: u32) -> Vector {
    let writes: Vec<String> = (0..WRITES)
        .map(|i| {
            format!(
                r#"{{"addr":"{:#x}","len":{LEN},"seed":{i}}}"#,
                0x10_0000 + i * 0x1_0000
            )
        })
        .collect();
    let text = format!(
        r#"{{"format":1,"name":"wr_stream_{mps}","description":"write stream","checked_against":"host memory",
            "top":"dma_wr","config":{{"mps":{mps}}},"writes":[{}],"max_cycles":100000}}"#,
        writes.join(",")
    );
    Vector::parse(Path::new("inline"), &text).unwrap()
}

#[test]
fn write_throughput_meets_the_rq_bound() {
    let mut t = Table::new(
        "dma_wr_throughput",
        &[
            "MPS",
            "cycles",
            "B/cycle",
            "bound",
            "% of bound",
            "Gb/s at 250 MHz",
        ],
    );
    for mps in [128u64, 256, 512, 4096] {
        let v = stream(mps as u32);
        let r = scenario::run(&v, Mode::Lockstep, &RunOpts::default()).unwrap();
        if let Some(d) = &r.divergence {
            panic!("{d}");
        }
        assert!(r.clean(), "MPS {mps}: {:?}", r.failures);
        let bytes = WRITES * LEN;
        let beats_per_mwr = (12 + mps).div_ceil(64);
        // bytes / cycles >= 0.95 * mps / beats, in integers.
        assert!(
            100 * bytes * beats_per_mwr >= 95 * mps * r.cycles,
            "MPS {mps}: {bytes} bytes in {} cycles is under 95 % of {mps}/{beats_per_mwr} B/cycle",
            r.cycles
        );
        let rate = bytes as f64 / r.cycles as f64;
        let bound = mps as f64 / beats_per_mwr as f64;
        t.row(&[
            mps.to_string(),
            r.cycles.to_string(),
            format!("{rate:.2}"),
            format!("{bound:.2}"),
            format!("{:.1}", 100.0 * rate / bound),
            format!("{:.1}", rate * 8.0 * 0.25),
        ]);
    }
    t.finish();
}
