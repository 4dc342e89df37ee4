//! The model's VCD and Verilator's hold the same registers under the same
//! names: every register the model traces (`rnic_model::trace`) exists in
//! `rtl.vcd` at the same hierarchical name with the same width, and holds
//! the same value at every timestamp of a short run. The share of the
//! RTL's `_q` registers the model covers is reported and has a floor.
//!
//! Both files are read with the small VCD reader of `tests/common/vcd.rs`
//! (not the writer's own crate), so a naming slip on either side shows up
//! here. `tests/vcd_names_blocks.rs` checks the receive-side blocks the
//! same way, each standalone (they are in rnic_top's trace too).

mod common;

use std::path::{Path, PathBuf};

use common::vcd;

use rnic_testbench::rtl::{set_initial_state, InitialState};
use rnic_testbench::scenario::{self, Mode, RunOpts};
use rnic_testbench::vector::Vector;

/// Runs `vector` in lockstep with both VCDs written; returns their paths.
fn traced_run(vector: &str, dir: &str) -> (PathBuf, PathBuf) {
    // Register values are compared with the model's, which start at zero.
    set_initial_state(InitialState::Zeros);
    let v = Vector::load(Path::new(vector)).unwrap_or_else(|e| panic!("{e}"));
    let dir = std::env::temp_dir().join(dir);
    let opts = RunOpts {
        vcd_dir: Some(dir.clone()),
        ..RunOpts::default()
    };
    let r = scenario::run(&v, Mode::Lockstep, &opts).expect("runs");
    assert!(
        r.divergence.is_none() && r.completed,
        "{vector}: a clean run"
    );
    assert!(r.vcd_error.is_none(), "{:?}", r.vcd_error);
    (dir.join("model.vcd"), dir.join("rtl.vcd"))
}

#[test]
fn rnic_top_registers_match_the_rtl_trace() {
    let (m, r) = traced_run("vectors/tx/tx_rc_read.json", "rnic_vcd_names_top");
    let (model, rtl) = (vcd::read_vcd(&m), vcd::read_vcd(&r));
    let (traced, total) = vcd::check_names(&model, &rtl, "rnic_top");
    // 1050 of 1050 with the responder blocks in rnic_top (715 before).
    assert!(
        traced * 100 >= total * 95,
        "coverage {traced}/{total} under 95 %"
    );
    let compared = vcd::check_values(&model, &rtl);
    assert_eq!(compared, traced);
}

#[test]
fn block_top_registers_match_the_rtl_trace() {
    let dma = std::fs::read_dir("vectors/dma")
        .expect("vectors/dma")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .min()
        .expect("a dma vector");
    let (m, r) = traced_run(dma.to_str().expect("utf-8 path"), "rnic_vcd_names_block");
    let (model, rtl) = (vcd::read_vcd(&m), vcd::read_vcd(&r));
    let top = if model.vars.keys().any(|n| n.starts_with("TOP.dma_wr.")) {
        "dma_wr"
    } else {
        "dma_rd"
    };
    let (traced, total) = vcd::check_names(&model, &rtl, top);
    assert!(
        traced * 100 >= total * 95,
        "coverage {traced}/{total} under 95 %"
    );
    vcd::check_values(&model, &rtl);
}
