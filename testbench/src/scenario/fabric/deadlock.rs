//! What a `deadlock` vector must end in (docs/fabric.md, "Deadlock"): the
//! run did not complete; no frame of data left any switch for the last
//! `still_cycles`; and the switch-to-switch links whose upstream queue
//! holds lossless frames its downstream switch pauses form a cycle, the
//! buffer dependency that keeps every one of them paused.

use rnic_switch::Switch;

use super::topology::{End, Topology};
use super::LOSSLESS;
use crate::vector::fabric::DeadlockSpec;

/// A fabric standing still, as found at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The last cycle a frame of data left any switch (None: never).
    pub last_data_out: Option<u64>,
    /// A cycle of paused links, as the switches it passes: `a -> b -> a`
    /// is two entries. Empty when there is none.
    pub cycle: Vec<String>,
    /// Bytes held in all switches' buffers.
    pub held_bytes: u64,
}

/// Switch `s` waits on switch `n`: a link from `s` to `n` whose lossless
/// queue at `s` holds frames and is paused by `n`.
fn waits_on(switches: &[Switch], topo: &Topology, s: usize) -> Vec<usize> {
    topo.wires[s]
        .iter()
        .enumerate()
        .filter_map(|(p, end)| match *end {
            End::Switch(n, _)
                if switches[s].queue_depth(p, LOSSLESS) > 0 && switches[s].paused(p, LOSSLESS) =>
            {
                Some(n)
            }
            _ => None,
        })
        .collect()
}

/// A cycle in the wait-for graph of the switches, if there is one (depth
/// first, switches in index order: the same answer every run).
pub fn paused_cycle(switches: &[Switch], topo: &Topology) -> Vec<usize> {
    let n = switches.len();
    let edges: Vec<Vec<usize>> = (0..n).map(|s| waits_on(switches, topo, s)).collect();
    // 0: not seen, 1: on the current path, 2: done.
    let mut state = vec![0u8; n];
    let mut path: Vec<usize> = Vec::new();
    fn visit(
        s: usize,
        e: &[Vec<usize>],
        st: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        st[s] = 1;
        path.push(s);
        for &t in &e[s] {
            if st[t] == 1 {
                let at = path.iter().position(|&x| x == t).expect("on the path");
                return Some(path[at..].to_vec());
            }
            if st[t] == 0 {
                if let Some(c) = visit(t, e, st, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        st[s] = 2;
        None
    }
    for s in 0..n {
        if state[s] == 0 {
            if let Some(c) = visit(s, &edges, &mut state, &mut path) {
                return c;
            }
        }
    }
    Vec::new()
}

/// The stall at the end of a run.
pub fn stall(switches: &[Switch], topo: &Topology, last_data_out: Option<u64>) -> Stall {
    Stall {
        last_data_out,
        cycle: paused_cycle(switches, topo)
            .into_iter()
            .map(|s| topo.names[s].clone())
            .collect(),
        held_bytes: switches.iter().map(Switch::buffer_used).sum(),
    }
}

/// Whether a run that ended at `end` with `s` shows the deadlock `d`
/// calls for; `finished`: every NIC was done.
pub fn check(d: &DeadlockSpec, s: &Stall, end: u64, finished: bool) -> Vec<String> {
    let mut out = Vec::new();
    if finished {
        out.push(format!(
            "every NIC finished by cycle {end}: the fabric did not deadlock"
        ));
        return out;
    }
    let since = s.last_data_out.map_or(0, |c| c + 1);
    if end < since + d.still_cycles {
        out.push(format!(
            "a frame of data left a switch at cycle {}, within the last {} cycles of the run \
             (ended at {end}): the fabric was not still",
            since.saturating_sub(1),
            d.still_cycles
        ));
    }
    if s.cycle.is_empty() {
        out.push(format!(
            "no cycle of paused switch-to-switch links holding frames at cycle {end} \
             ({} bytes held)",
            s.held_bytes
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stall(last: Option<u64>, cycle: &[&str]) -> Stall {
        Stall {
            last_data_out: last,
            cycle: cycle.iter().map(|s| s.to_string()).collect(),
            held_bytes: 4096,
        }
    }

    #[test]
    fn a_still_cycle_of_pauses_passes_and_anything_less_fails() {
        let d = DeadlockSpec { still_cycles: 100 };
        let ring = ["ring0", "ring1", "ring2"];
        // The last frame at 899: still from 900, 100 cycles by 1000.
        assert!(check(&d, &stall(Some(899), &ring), 1000, false).is_empty());
        let p = check(&d, &stall(Some(900), &ring), 1000, false);
        assert!(p.len() == 1 && p[0].contains("at cycle 900"), "{p:?}");
        let p = check(&d, &stall(None, &[]), 1000, false);
        assert!(p.len() == 1 && p[0].starts_with("no cycle"), "{p:?}");
        let p = check(&d, &stall(None, &ring), 1000, true);
        assert!(p[0].contains("did not deadlock"), "{p:?}");
    }
}
