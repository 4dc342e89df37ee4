//! Pieces the two-NIC (`pair`) tests share: loading a system vector, and
//! an `rnic_top` model whose inputs a test alters on purpose to show that a
//! check fails a NIC that misbehaves.

use std::path::Path;

use rnic_model::rnic_top::{RnicTop, RnicTopIn, RnicTopOut};
use rnic_model::trace::{Trace, Tracer};
use rnic_model::Dut;
use rnic_testbench::vector::{AnyVector, SystemVector};

/// The system vector at `rel` (from the repository root, e.g.
/// `vectors/pair/uc_both_ways.json`); panics naming it otherwise.
pub fn load_system(rel: &str) -> SystemVector {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    match AnyVector::load(&f).unwrap_or_else(|e| panic!("{e}")) {
        AnyVector::System(v) => *v,
        _ => panic!("{rel} is not a system vector"),
    }
}

/// A fabric vector, by its path from the repository root.
#[allow(dead_code)]
pub fn load_fabric(rel: &str) -> rnic_testbench::vector::FabricVector {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    match AnyVector::load(&f).unwrap_or_else(|e| panic!("{e}")) {
        AnyVector::Fabric(v) => *v,
        _ => panic!("{rel} is not a fabric vector"),
    }
}

/// The `rnic_top` model with `alter` applied to its inputs every cycle
/// before its tick (the model alone: run it with `Mode::Model`).
pub struct Tampered<F: FnMut(&mut RnicTopIn)> {
    pub top: RnicTop,
    pub alter: F,
}

impl<F: FnMut(&mut RnicTopIn)> Tampered<F> {
    pub fn new(alter: F) -> Self {
        Tampered {
            top: RnicTop::new(),
            alter,
        }
    }
}

impl<F: FnMut(&mut RnicTopIn)> Dut for Tampered<F> {
    type In = RnicTopIn;
    type Out = RnicTopOut;
    const NAME: &'static str = "rnic_top";
    fn reset(&mut self) -> RnicTopOut {
        self.top.reset()
    }
    fn tick(&mut self, i: &RnicTopIn) -> RnicTopOut {
        let mut i = *i;
        (self.alter)(&mut i);
        self.top.tick(&i)
    }
}

impl<F: FnMut(&mut RnicTopIn)> Trace for Tampered<F> {
    fn trace(&self, t: &mut dyn Tracer) {
        self.top.trace(t)
    }
}

/// The real `rnic_top` model, broken on purpose in one NIC of a run: its
/// first beat on `tx_*` has byte 20 (in the IPv4 header) flipped. The
/// divergence self-tests find it named.
#[allow(dead_code)]
pub struct Broken {
    pub inner: RnicTop,
    pub broken: bool,
    pub done: bool,
}

#[allow(dead_code)]
impl Broken {
    /// A maker of models for a run's NICs: NIC `which` broken.
    pub fn maker(which: usize) -> impl Fn(usize) -> Broken {
        move |n| Broken {
            inner: RnicTop::new(),
            broken: n == which,
            done: false,
        }
    }
}

impl Dut for Broken {
    type In = RnicTopIn;
    type Out = RnicTopOut;
    const NAME: &'static str = "rnic_top";
    fn reset(&mut self) -> Self::Out {
        self.inner.reset()
    }
    fn tick(&mut self, i: &RnicTopIn) -> Self::Out {
        let mut o = self.inner.tick(i);
        if self.broken && !self.done && o.tx_tvalid {
            o.tx_tdata[20] ^= 0x01;
            self.done = true;
        }
        o
    }
}

impl Trace for Broken {
    fn trace(&self, t: &mut dyn Tracer) {
        self.inner.trace(t)
    }
}
