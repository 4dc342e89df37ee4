//! VCD of the model side, with the signal names and timing of the Verilator
//! trace (`rtl.rs`): scope `TOP` with `clk`, `rst` and every port, and the
//! same again in scope `TOP.<block>`; time in ps, inputs change at `4000 n`,
//! the rising edge is at `4000 n + 2000`, where `n` counts cycles from construction with
//! the reset cycles included. So `model.vcd` and `rtl.vcd` open side by side
//! in GTKWave or Surfer with the same names in the same places.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use rnic_model::Ports;
use vcd::{IdCode, TimescaleUnit, Value, Writer};

use crate::rtl::{CLOCK_PERIOD_PS, RESET_CYCLES};

/// Writes one side's ports, cycle by cycle.
pub struct ModelVcd<I: Ports, O: Ports> {
    w: Writer<BufWriter<File>>,
    clk: [IdCode; 2],
    rst: [IdCode; 2],
    ins: Vec<[IdCode; 2]>,
    outs: Vec<[IdCode; 2]>,
    last_in: Option<I>,
    last_out: Option<O>,
}

fn bits(words: &[u64], width: u32) -> impl Iterator<Item = Value> + '_ {
    (0..width).rev().map(move |b| {
        if words[(b / 64) as usize] >> (b % 64) & 1 != 0 {
            Value::V1
        } else {
            Value::V0
        }
    })
}

impl<I: Ports, O: Ports> ModelVcd<I, O> {
    pub fn create(path: &Path, block: &str) -> io::Result<Self> {
        let mut w = Writer::new(BufWriter::new(File::create(path)?));
        w.timescale(1, TimescaleUnit::PS)?;
        let mut clk = Vec::new();
        let mut rst = Vec::new();
        let mut ins: Vec<Vec<IdCode>> = vec![Vec::new(); I::PORTS.len()];
        let mut outs: Vec<Vec<IdCode>> = vec![Vec::new(); O::PORTS.len()];
        w.add_module("TOP")?;
        for depth in 0..2 {
            if depth == 1 {
                w.add_module(block)?;
            }
            clk.push(w.add_wire(1, "clk")?);
            rst.push(w.add_wire(1, "rst")?);
            for (k, p) in I::PORTS.iter().enumerate() {
                ins[k].push(w.add_wire(p.width, p.name)?);
            }
            for (k, p) in O::PORTS.iter().enumerate() {
                outs[k].push(w.add_wire(p.width, p.name)?);
            }
            if depth == 1 {
                w.upscope()?;
            }
        }
        w.upscope()?;
        w.enddefinitions()?;
        let two = |v: Vec<IdCode>| [v[0], v[1]];
        Ok(ModelVcd {
            w,
            clk: two(clk),
            rst: two(rst),
            ins: ins.into_iter().map(two).collect(),
            outs: outs.into_iter().map(two).collect(),
            last_in: None,
            last_out: None,
        })
    }

    fn dump_ports<P: Ports>(
        w: &mut Writer<BufWriter<File>>,
        ids: &[[IdCode; 2]],
        now: &P,
        before: Option<&P>,
    ) -> io::Result<()> {
        for (k, p) in P::PORTS.iter().enumerate() {
            let v = now.get_vec(k);
            if before.is_some_and(|b| b.get_vec(k) == v) {
                continue;
            }
            for id in ids[k] {
                if p.width == 1 {
                    w.change_scalar(id, if v[0] & 1 != 0 { Value::V1 } else { Value::V0 })?;
                } else {
                    w.change_vector(id, bits(&v, p.width))?;
                }
            }
        }
        Ok(())
    }

    /// Cycle `cycle` (counted after reset, as the lockstep runner does):
    /// `inputs` and the outputs `out` visible in it, then the outputs
    /// `next` that the rising edge produced.
    pub fn cycle(&mut self, cycle: u64, inputs: &I, out: &O, next: &O) -> io::Result<()> {
        let n = cycle + RESET_CYCLES;
        self.w.timestamp(CLOCK_PERIOD_PS * n)?;
        for id in self.clk {
            self.w.change_scalar(id, Value::V0)?;
        }
        if self.last_in.is_none() {
            // The window starts after reset: rst is low throughout.
            for id in self.rst {
                self.w.change_scalar(id, Value::V0)?;
            }
        }
        Self::dump_ports(&mut self.w, &self.ins, inputs, self.last_in.as_ref())?;
        Self::dump_ports(&mut self.w, &self.outs, out, self.last_out.as_ref())?;
        self.w
            .timestamp(CLOCK_PERIOD_PS * n + CLOCK_PERIOD_PS / 2)?;
        for id in self.clk {
            self.w.change_scalar(id, Value::V1)?;
        }
        Self::dump_ports(&mut self.w, &self.outs, next, Some(out))?;
        self.last_in = Some(inputs.clone());
        self.last_out = Some(next.clone());
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<()> {
        use std::io::Write;
        self.w.writer().flush()
    }
}
