//! A divergence in a pair names the NIC: NIC B's model is broken on
//! purpose (one byte of the first beat of its first frame on `tx_*`
//! flipped), A's is the real one. The report must name NIC B, port
//! `tx_tdata`, at the cycle B's first frame starts, found by running the
//! good pair on the model alone.

mod common;

use common::pair_nic::Broken;
use rnic_testbench::scenario::{pair, Mode, RunOpts};
use rnic_testbench::vector::SystemVector;

fn vector() -> SystemVector {
    common::pair_nic::load_system("vectors/pair/uc_both_ways.json")
}

#[test]
fn a_divergence_names_the_nic() {
    let v = vector();
    // Where B's first frame starts, from the good pair on the model alone.
    let good = pair::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    let b_first = good
        .report
        .tx_frames
        .iter()
        .find(|f| f.1[10] == 1)
        .expect("B sends")
        .0;
    let out = std::env::temp_dir().join(format!("rnic-pair-div-{}", std::process::id()));
    let opts = RunOpts {
        divergence_vcd_dir: Some(out.clone()),
        vcd_window: Some(100),
        ..RunOpts::default()
    };
    let r = pair::run_with(&v, Mode::Lockstep, &opts, Broken::maker(1)).unwrap();
    let d = r.report.divergence.expect("diverged");
    assert_eq!(d.block, "NIC B (rnic_top)");
    assert_eq!(d.diff.port, "tx_tdata");
    assert_eq!(d.cycle, b_first);
    assert!(d.to_string().starts_with(&format!(
        "DIVERGENCE in NIC B (rnic_top) at cycle {b_first}: port tx_tdata (1 of 64 bytes differ: byte 20)"
    )));
    for nic in ["a", "b"] {
        for side in ["model.vcd", "rtl.vcd"] {
            assert!(out.join(nic).join(side).is_file(), "{nic}/{side}");
        }
    }
    let _ = std::fs::remove_dir_all(&out);
}
