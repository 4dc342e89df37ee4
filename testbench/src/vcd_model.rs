//! VCD of the model side, with the signal names and timing of the Verilator
//! trace (`rtl.rs`): scope `TOP` with `clk`, `rst` and every port, and the
//! same again in scope `TOP.<block>` together with the block's registers
//! (`rnic_model::trace`: `TOP.rnic_top.u_csr.cc_q[3]`); time in ps, inputs change at `4000 n`,
//! the rising edge is at `4000 n + 2000`, where `n` counts cycles from construction with
//! the reset cycles included. So `model.vcd` and `rtl.vcd` open side by side
//! in GTKWave or Surfer with the same names in the same places.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use rnic_model::trace::{Trace, Tracer};
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
    regs: Regs,
}

/// The traced registers: their VCD ids and the values last written.
#[derive(Default)]
struct Regs {
    ids: Vec<IdCode>,
    widths: Vec<u32>,
    last: Vec<Vec<u64>>,
    /// The values declared (the state before the first edge) are not
    /// written yet.
    fresh: bool,
}

fn change(
    w: &mut Writer<BufWriter<File>>,
    id: IdCode,
    width: u32,
    words: &[u64],
) -> io::Result<()> {
    if width == 1 {
        w.change_scalar(id, Value::from(words.first().is_some_and(|v| v & 1 != 0)))
    } else {
        w.change_vector(id, bits(words, width))
    }
}

/// Declares the registers a block traces as VCD scopes and wires.
struct Declare<'a> {
    w: &'a mut Writer<BufWriter<File>>,
    regs: &'a mut Regs,
    err: Option<io::Error>,
}

impl Tracer for Declare<'_> {
    fn push(&mut self, scope: &str) {
        if let Err(e) = self.w.add_module(scope) {
            self.err.get_or_insert(e);
        }
    }
    fn pop(&mut self) {
        if let Err(e) = self.w.upscope() {
            self.err.get_or_insert(e);
        }
    }
    fn var(&mut self, name: &str, width: u32, words: &[u64]) {
        match self.w.add_wire(width, name) {
            Ok(id) => {
                self.regs.ids.push(id);
                self.regs.widths.push(width);
            }
            Err(e) => {
                self.err.get_or_insert(e);
            }
        }
        self.regs.last.push(words.to_vec());
    }
}

/// Writes the registers whose value changed since the last dump.
struct Dump<'a> {
    w: &'a mut Writer<BufWriter<File>>,
    regs: &'a mut Regs,
    k: usize,
    err: Option<io::Error>,
}

impl Tracer for Dump<'_> {
    fn push(&mut self, _: &str) {}
    fn pop(&mut self) {}
    fn element(&mut self, _: &str, _: usize, width: u32, words: &[u64]) {
        // Registers go by their order: the name is not needed.
        self.var("", width, words);
    }
    fn var(&mut self, _: &str, width: u32, words: &[u64]) {
        let k = self.k;
        self.k += 1;
        if self.regs.last[k] == words {
            return;
        }
        self.regs.last[k].clear();
        self.regs.last[k].extend_from_slice(words);
        if let Err(e) = change(self.w, self.regs.ids[k], width, words) {
            self.err.get_or_insert(e);
        }
    }
}

fn bits(words: &[u64], width: u32) -> impl Iterator<Item = Value> + '_ {
    (0..width).rev().map(move |b| {
        if words.get((b / 64) as usize).unwrap_or(&0) >> (b % 64) & 1 != 0 {
            Value::V1
        } else {
            Value::V0
        }
    })
}

impl<I: Ports, O: Ports> ModelVcd<I, O> {
    /// A VCD of `block`'s ports and, if given, the registers `regs` traces
    /// (declared from their values now, the state before the first cycle).
    pub fn create(path: &Path, block: &str, regs: Option<&dyn Trace>) -> io::Result<Self> {
        let mut w = Writer::new(BufWriter::new(File::create(path)?));
        let mut reg_ids = Regs {
            fresh: true,
            ..Regs::default()
        };
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
                if let Some(r) = regs {
                    let mut d = Declare {
                        w: &mut w,
                        regs: &mut reg_ids,
                        err: None,
                    };
                    r.trace(&mut d);
                    if let Some(e) = d.err {
                        return Err(e);
                    }
                }
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
            regs: reg_ids,
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

    fn dump_regs(&mut self, regs: Option<&dyn Trace>) -> io::Result<()> {
        let Some(r) = regs else { return Ok(()) };
        let mut d = Dump {
            w: &mut self.w,
            regs: &mut self.regs,
            k: 0,
            err: None,
        };
        r.trace(&mut d);
        d.err.map_or(Ok(()), Err)
    }

    /// Cycle `cycle` (counted after reset, as the lockstep runner does):
    /// `inputs` and the outputs `out` visible in it, then the outputs
    /// `next` that the rising edge produced and the registers `regs` as it
    /// left them (the same block given to `create`, or none).
    pub fn cycle(
        &mut self,
        cycle: u64,
        inputs: &I,
        out: &O,
        next: &O,
        regs: Option<&dyn Trace>,
    ) -> io::Result<()> {
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
        if self.regs.fresh && regs.is_some() {
            // The state before the first edge, as declared.
            let r = &self.regs;
            for ((id, width), words) in r.ids.iter().zip(&r.widths).zip(&r.last) {
                change(&mut self.w, *id, *width, words)?;
            }
            self.regs.fresh = false;
        }
        self.w
            .timestamp(CLOCK_PERIOD_PS * n + CLOCK_PERIOD_PS / 2)?;
        for id in self.clk {
            self.w.change_scalar(id, Value::V1)?;
        }
        Self::dump_ports(&mut self.w, &self.outs, next, Some(out))?;
        self.dump_regs(regs)?;
        self.last_in = Some(inputs.clone());
        self.last_out = Some(next.clone());
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<()> {
        use std::io::Write;
        self.w.writer().flush()
    }
}
