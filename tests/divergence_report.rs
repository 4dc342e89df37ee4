//! The lockstep reporter must catch a broken model at the right cycle and
//! port. The broken variant exists only in this test: it is the real model
//! with the tag byte of its third MRd corrupted, so the expected cycle is
//! found by running the good model alone, without the RTL.

use std::path::Path;

use rnic_model::dma_rd::{DmaRd, DmaRdIn, DmaRdOut, DmaRdParams};
use rnic_model::Dut;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlDmaRd;
use rnic_testbench::scenario::DmaRdEnv;
use rnic_testbench::vector::Vector;

const VECTOR: &str = r#"{
  "format": 1, "name": "broken_model", "description": "reporter self-test",
  "checked_against": "n/a", "top": "dma_rd", "config": {"mrrs": 128},
  "memory": [{"addr": "0x4000", "len": 8192, "seed": 3}],
  "reads": [{"addr": "0x4000", "len": 1000}, {"addr": "0x5003", "len": 77}],
  "max_cycles": 5000
}"#;

/// The model with MRd number `BAD_MRD` (0-based) carrying tag ^ 0x80.
struct BrokenDmaRd {
    inner: DmaRd,
    mrds: u32,
}

const BAD_MRD: u32 = 2;

impl Dut for BrokenDmaRd {
    type In = DmaRdIn;
    type Out = DmaRdOut;
    const NAME: &'static str = "dma_rd";
    fn reset(&mut self) -> DmaRdOut {
        self.inner.reset()
    }
    fn tick(&mut self, i: &DmaRdIn) -> DmaRdOut {
        let before = self.inner.outputs();
        let mut out = self.inner.tick(i);
        // A new MRd is in the output register when it was empty or taken.
        let fresh = out.rq_valid && (!before.rq_valid || i.rq_ready);
        if fresh {
            if self.mrds == BAD_MRD {
                out.rq_data[6] ^= 0x80;
            }
            self.mrds += 1;
        }
        out
    }
}

/// Cycle in which the good model shows MRd number `n` on rq.
fn cycle_of_mrd(v: &Vector, n: u32) -> u64 {
    let mut m = DmaRd::new(DmaRdParams::default());
    let mut env = DmaRdEnv::new(v).unwrap();
    let mut out = m.reset();
    let mut seen = 0;
    let mut prev_taken = true;
    for c in 0..v.max_cycles {
        if out.rq_valid && prev_taken {
            if seen == n {
                return c;
            }
            seen += 1;
        }
        let i = env.step(c, &out);
        prev_taken = !out.rq_valid || i.rq_ready;
        out = m.tick(&i);
    }
    panic!("the good model never sent MRd {n}");
}

#[test]
fn broken_model_is_caught_at_the_corrupted_mrd() {
    let v = Vector::parse(Path::new("inline"), VECTOR).unwrap();
    let expected_cycle = cycle_of_mrd(&v, BAD_MRD);
    let mut model = BrokenDmaRd {
        inner: DmaRd::new(DmaRdParams::default()),
        mrds: 0,
    };
    let mut rtl = RtlDmaRd::new();
    let mut env = DmaRdEnv::new(&v).unwrap();
    let div = lockstep::run(&mut model, &mut rtl, &mut env, v.max_cycles)
        .expect_err("a corrupted tag must diverge");
    eprintln!("{div}");
    assert_eq!(div.cycle, expected_cycle);
    assert_eq!(div.diff.port, "rq_data");
    assert_eq!(div.diff.detail, "1 of 64 bytes differ: byte 6");
    let text = div.to_string();
    assert!(
        text.contains(&format!("at cycle {expected_cycle}: port rq_data")),
        "{text}"
    );
    assert!(
        text.contains("rq_valid: "),
        "history shows the rq interface:\n{text}"
    );
}

#[test]
fn good_model_and_rtl_agree_on_the_same_scenario() {
    let v = Vector::parse(Path::new("inline"), VECTOR).unwrap();
    let mut env = DmaRdEnv::new(&v).unwrap();
    let fin = lockstep::run(
        &mut DmaRd::new(DmaRdParams::default()),
        &mut RtlDmaRd::new(),
        &mut env,
        v.max_cycles,
    )
    .expect("no divergence");
    assert!(fin.completed && env.finished());
}
