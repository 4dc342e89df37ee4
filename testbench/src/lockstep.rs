//! The lockstep runner: model and RTL driven by the same inputs every cycle,
//! every output port compared every cycle, stop at the first difference.
//!
//! The environment computes each cycle's inputs from the *model's* outputs of
//! that cycle; that is sound because at the moment they are used both sides'
//! outputs have just been found equal.
//!
//! A failed RTL assertion (`hw/rtl/rnic_assert.svh`) ends the run like a
//! divergence: [`Divergence::assertion`] names it, its scope and cycle. It
//! catches what the ports cannot show, e.g. a handshake broken inside
//! `rnic_top` in the same way by both sides.

use std::collections::VecDeque;
use std::fmt;

use rnic_model::ports::{Beat, PortInfo};
use rnic_model::{Dut, Ports};

use crate::rtl::{take_assertion_failure, AssertionFailure};

/// The testbench side of a scenario for one top.
pub trait Env {
    type In: Ports;
    type Out: Ports;
    /// Inputs for cycle `cycle`, given the outputs visible in it. Transfers
    /// that happen at this cycle's clock edge (valid and ready both high) are
    /// accounted here.
    fn step(&mut self, cycle: u64, out: &Self::Out) -> Self::In;
    /// The scenario has nothing left to do.
    fn finished(&self) -> bool;
}

/// One port that differs between the two sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortDiff {
    pub port: &'static str,
    /// Where inside the port: `byte 17` of a bus, or `bits 0x..` of a field.
    pub detail: String,
    pub model: String,
    pub rtl: String,
}

/// The first difference of a lockstep run, or the first failed RTL
/// assertion.
#[derive(Debug, Clone)]
pub struct Divergence {
    pub block: &'static str,
    pub cycle: u64,
    /// The differing port; for an assertion, port `(assertion)` with the
    /// assertion's name and scope as detail and the failure as `rtl`.
    pub diff: PortDiff,
    /// Last transactions on each interface, oldest first, both sides.
    pub history: Vec<String>,
    /// The RTL assertion that failed, when that is what ended the run.
    pub assertion: Option<AssertionFailure>,
}

impl Divergence {
    /// The run failed on an RTL assertion: `diff` says so in its fields.
    pub fn from_assertion(block: &'static str, a: AssertionFailure, history: Vec<String>) -> Self {
        Divergence {
            block,
            cycle: a.cycle,
            diff: PortDiff {
                port: "(assertion)",
                detail: format!("{} in {}", a.name, a.scope),
                model: "-".into(),
                rtl: a.to_string(),
            },
            history,
            assertion: Some(a),
        }
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(a) = &self.assertion {
            writeln!(
                f,
                "ASSERTION {} failed in {} ({}) at cycle {} ({}:{})",
                a.name, self.block, a.scope, a.cycle, a.file, a.line
            )?;
        } else {
            writeln!(
                f,
                "DIVERGENCE in {} at cycle {}: port {} ({})",
                self.block, self.cycle, self.diff.port, self.diff.detail
            )?;
            writeln!(f, "  model: {}", self.diff.model)?;
            writeln!(f, "  rtl:   {}", self.diff.rtl)?;
        }
        if !self.history.is_empty() {
            writeln!(f, "  last transactions (cycle side interface: fields):")?;
            for h in &self.history {
                writeln!(f, "    {h}")?;
            }
        }
        Ok(())
    }
}

/// Formats a port value as hex, most significant word first.
pub fn hex_words(words: &[u64], width: u32) -> String {
    if width == 512 {
        let mut s = String::with_capacity(128);
        for w in words.iter().rev() {
            s.push_str(&format!("{w:016x}"));
        }
        return s;
    }
    let digits = width.div_ceil(4) as usize;
    if words.len() == 1 {
        format!("0x{:0digits$x}", words[0])
    } else {
        let mut s = String::from("0x");
        for w in words.iter().rev() {
            s.push_str(&format!("{w:016x}"));
        }
        s
    }
}

/// First differing live port, in declaration order (handshakes are declared
/// before the data they qualify, so a valid that differs is reported rather
/// than its don't-care data).
pub fn compare<O: Ports>(model: &O, rtl: &O) -> Option<PortDiff> {
    // Fast path: identical to the bit, don't-care fields included.
    if model == rtl {
        return None;
    }
    for (idx, info) in O::PORTS.iter().enumerate() {
        if !model.is_live(idx) || !rtl.is_live(idx) {
            continue;
        }
        let m = model.get_vec(idx);
        let r = rtl.get_vec(idx);
        if m != r {
            let (model, rtl) = if info.width == 512 {
                beat_window(&m, &r)
            } else {
                (hex_words(&m, info.width), hex_words(&r, info.width))
            };
            return Some(PortDiff {
                port: info.name,
                detail: diff_detail(info, &m, &r),
                model,
                rtl,
            });
        }
    }
    None
}

/// The 16 bytes of two bus beats around their first difference, in wire
/// order (byte 0 first, as TLPs and frames are read), differing bytes in [].
fn beat_window(m: &[u64], r: &[u64]) -> (String, String) {
    let (mb, rb): (Beat, Beat) = (
        rnic_model::PortValue::from_words(m),
        rnic_model::PortValue::from_words(r),
    );
    let first = (0..64).find(|&i| mb[i] != rb[i]).unwrap_or(0);
    let lo = first & !15;
    let show = |b: &Beat, o: &Beat| {
        let bytes: Vec<String> = (lo..lo + 16)
            .map(|i| {
                if b[i] == o[i] {
                    format!("{:02x}", b[i])
                } else {
                    format!("[{:02x}]", b[i])
                }
            })
            .collect();
        format!("bytes {lo}..{}: {}", lo + 15, bytes.join(" "))
    };
    (show(&mb, &rb), show(&rb, &mb))
}

fn diff_detail(info: &PortInfo, m: &[u64], r: &[u64]) -> String {
    if info.width == 512 {
        let (mb, rb): (Beat, Beat) = (
            rnic_model::PortValue::from_words(m),
            rnic_model::PortValue::from_words(r),
        );
        let bytes: Vec<String> = (0..64)
            .filter(|&i| mb[i] != rb[i])
            .map(|i| i.to_string())
            .collect();
        let shown = bytes.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
        let more = if bytes.len() > 8 { ", ..." } else { "" };
        format!("{} of 64 bytes differ: byte {shown}{more}", bytes.len())
    } else {
        let x: Vec<u64> = m.iter().zip(r).map(|(a, b)| a ^ b).collect();
        format!("differing bits {}", hex_words(&x, info.width))
    }
}

/// Short text of one interface's fields in one cycle.
fn summarize<O: Ports>(o: &O, valid_name: &str) -> String {
    let mut parts = Vec::new();
    for (idx, info) in O::PORTS.iter().enumerate() {
        if info.qualifier != Some(valid_name) {
            continue;
        }
        let v = o.get_vec(idx);
        let s = if info.width == 512 {
            let b: Beat = rnic_model::PortValue::from_words(&v);
            let head: String = b[..16].iter().map(|x| format!("{x:02x}")).collect();
            format!("{}={head}..", info.name)
        } else {
            format!("{}={:x}", info.name, v[0])
        };
        parts.push(s);
    }
    parts.join(" ")
}

/// Names of the ports that qualify others: the stream interfaces.
fn interfaces<O: Ports>() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = Vec::new();
    for p in O::PORTS {
        if let Some(q) = p.qualifier {
            if !v.contains(&q) {
                v.push(q);
            }
        }
    }
    v
}

/// Keeps the last few transactions seen on every interface.
struct History {
    depth: usize,
    lines: Vec<VecDeque<(u64, String)>>,
}

impl History {
    fn new(depth: usize, n: usize) -> Self {
        History {
            depth,
            lines: vec![VecDeque::new(); n],
        }
    }

    fn record<O: Ports>(&mut self, slot: usize, cycle: u64, side: &str, o: &O) {
        for (k, name) in interfaces::<O>().into_iter().enumerate() {
            let idx = rnic_model::ports::port_index(O::PORTS, name);
            if o.get_vec(idx)[0] & 1 == 0 {
                continue;
            }
            let q = &mut self.lines[slot + k];
            if q.len() == self.depth {
                q.pop_front();
            }
            q.push_back((
                cycle,
                format!("{cycle:>8} {side:<5} {name}: {}", summarize(o, name)),
            ));
        }
    }

    fn dump(&self) -> Vec<String> {
        let mut all: Vec<(u64, String)> = self.lines.iter().flatten().cloned().collect();
        all.sort_by_key(|(c, _)| *c);
        all.into_iter().map(|(_, s)| s).collect()
    }
}

/// Cycles of raw history kept for the divergence report.
const RECENT: usize = 256;

/// One cycle as both sides saw it.
struct Snapshot<I, O> {
    cycle: u64,
    inputs: I,
    model: O,
    rtl: O,
}

/// Result of a lockstep run that did not diverge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    pub cycles: u64,
    /// The environment reported completion before `max_cycles`.
    pub completed: bool,
}

/// Runs `model` and `rtl` from reset under `env` until the environment is
/// finished or `max_cycles` have passed. Both DUTs must be freshly built.
pub fn run<M, R, E>(
    model: &mut M,
    rtl: &mut R,
    env: &mut E,
    max_cycles: u64,
) -> Result<Finished, Box<Divergence>>
where
    M: Dut,
    R: Dut<In = M::In, Out = M::Out>,
    E: Env<In = M::In, Out = M::Out>,
{
    // The last cycles, raw; turned into text only if a divergence needs it.
    let mut recent: VecDeque<Snapshot<M::In, M::Out>> = VecDeque::with_capacity(RECENT);
    // A failure left over by an earlier run on this thread is not this run's.
    let _ = take_assertion_failure();
    let mut out_m = model.reset();
    let mut out_r = rtl.reset();
    let mut cycle = 0u64;
    let history =
        |recent: &VecDeque<Snapshot<M::In, M::Out>>, cycle: u64, out_m: &M::Out, out_r: &M::Out| {
            let n_in = interfaces::<M::In>().len();
            let n_out = interfaces::<M::Out>().len();
            let mut hist = History::new(4, n_in + 2 * n_out);
            for s in recent {
                hist.record(0, s.cycle, "in", &s.inputs);
                hist.record(n_in, s.cycle, "model", &s.model);
                hist.record(n_in + n_out, s.cycle, "rtl", &s.rtl);
            }
            hist.record(n_in, cycle, "model", out_m);
            hist.record(n_in + n_out, cycle, "rtl", out_r);
            hist.dump()
        };
    loop {
        // An assertion that failed at the edge into this cycle comes first:
        // it is the cause of whatever the ports show now.
        if let Some(a) = take_assertion_failure() {
            let h = history(&recent, cycle, &out_m, &out_r);
            return Err(Box::new(Divergence::from_assertion(M::NAME, a, h)));
        }
        if let Some(diff) = compare(&out_m, &out_r) {
            return Err(Box::new(Divergence {
                block: M::NAME,
                cycle,
                diff,
                history: history(&recent, cycle, &out_m, &out_r),
                assertion: None,
            }));
        }
        if env.finished() || cycle >= max_cycles {
            return Ok(Finished {
                cycles: cycle,
                completed: env.finished(),
            });
        }
        let inputs = env.step(cycle, &out_m);
        let next_m = model.tick(&inputs);
        let next_r = rtl.tick(&inputs);
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back(Snapshot {
            cycle,
            inputs,
            model: out_m,
            rtl: out_r,
        });
        out_m = next_m;
        out_r = next_r;
        cycle += 1;
    }
}

/// Runs one DUT alone (the model, or the RTL) under `env`.
pub fn run_single<D, E>(dut: &mut D, env: &mut E, max_cycles: u64) -> Finished
where
    D: Dut,
    E: Env<In = D::In, Out = D::Out>,
{
    let mut out = dut.reset();
    let mut cycle = 0u64;
    while !env.finished() && cycle < max_cycles {
        let inputs = env.step(cycle, &out);
        out = dut.tick(&inputs);
        cycle += 1;
    }
    Finished {
        cycles: cycle,
        completed: env.finished(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    rnic_model::ports! {
        pub struct O {
            pub v: bool = 1,
            pub d: Beat = 512 if v,
            pub n: u32 = 17,
        }
    }

    #[test]
    fn data_is_ignored_while_its_valid_is_low() {
        let a = O::default();
        let mut b = O::default();
        b.d[3] = 1;
        assert_eq!(compare(&a, &b), None);
        let a = O { v: true, ..a };
        let b = O { v: true, ..b };
        let d = compare(&a, &b).unwrap();
        assert_eq!(d.port, "d");
        assert!(
            d.detail.contains("1 of 64 bytes differ: byte 3"),
            "{}",
            d.detail
        );
    }

    #[test]
    fn valid_is_reported_before_its_data() {
        let a = O::default();
        let mut b = O {
            v: true,
            ..O::default()
        };
        b.d[0] = 9;
        assert_eq!(compare(&a, &b).unwrap().port, "v");
    }

    #[test]
    fn scalar_diff_names_bits() {
        let a = O {
            n: 0x10,
            ..O::default()
        };
        let b = O {
            n: 0x11,
            ..O::default()
        };
        let d = compare(&a, &b).unwrap();
        assert_eq!((d.port, d.detail.as_str()), ("n", "differing bits 0x00001"));
    }
}
