//! Waveforms of a fabric run (docs/fabric.md, "Outputs"): the run again
//! from reset, every host ticked every cycle (no idle fast path: a resting
//! host's timers would not move in its trace), each host's last cycles
//! traced into `DIR/h<i>/model.vcd`, and `rtl.vcd` for the hosts that run
//! their RTL. The replay compares nothing and judges nothing: the run
//! before it did.

use std::path::{Path, PathBuf};

use rnic_model::rnic_top::{RnicTopIn, RnicTopOut};

use super::{host_mode, FabricEnv};
use crate::rtl::take_assertion_failure;
use crate::scenario::pair::{Duts, NicModel};
use crate::scenario::Mode;
use crate::vcd_model::ModelVcd;
use crate::vector::FabricVector;

/// Replays cycles `0..=end` and traces `from..=end` into `dir` (as a
/// pair's replay does); the files written, or why one could not be.
pub fn trace<M: NicModel>(
    v: &FabricVector,
    mode: Mode,
    mk_model: &impl Fn(usize) -> M,
    from: u64,
    end: u64,
    dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    let mut env = FabricEnv::new(v)?;
    let n = v.hosts.len();
    let mut duts: Vec<Duts<M>> = (0..n)
        .map(|i| Duts::new(host_mode(v, mode, i), || mk_model(i)))
        .collect();
    let _ = take_assertion_failure();
    let mut outs: Vec<(RnicTopOut, Option<RnicTopOut>)> =
        duts.iter_mut().map(|d| d.reset()).collect();
    let mut vcds: Vec<Option<ModelVcd<RnicTopIn, RnicTopOut>>> = (0..n).map(|_| None).collect();
    let mut files = Vec::new();
    for cycle in 0..=end {
        if cycle == from {
            for (i, d) in duts.iter_mut().enumerate() {
                vcds[i] = d.open_traces(&dir.join(format!("h{i}")), &mut files)?;
            }
        }
        let refs: Vec<&RnicTopOut> = outs.iter().map(|o| &o.0).collect();
        let ins = env.step(cycle, &refs);
        for (i, d) in duts.iter_mut().enumerate() {
            let next = d.tick(&ins[i]);
            // An RTL assertion was reported by the run itself.
            let _ = take_assertion_failure();
            d.record(
                &mut vcds[i],
                cycle,
                &ins[i],
                &outs[i].0,
                &next.0,
                &format!("host h{i}"),
            )?;
            outs[i] = next;
        }
    }
    for (i, d) in duts.iter_mut().enumerate() {
        d.close_traces(vcds[i].take(), &format!("host h{i}"))?;
    }
    Ok(files)
}
