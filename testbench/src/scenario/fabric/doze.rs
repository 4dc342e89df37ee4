//! The idle fast path of a model-only host (docs/fabric.md, "Idle hosts").
//!
//! A host whose model has an idle horizon for this cycle's inputs is not
//! ticked: it holds those inputs and counts the cycles it rests. It wakes
//! when its inputs change or the horizon ends, and catches up first with
//! one [`Dut::skip`] of the cycles it rested. The skip is exact (the
//! model's contract, `tests/idle_skip.rs`) and a resting model's outputs
//! are the ones it had, so the fabric sees the same outputs every cycle
//! as if the host had ticked.

use rnic_model::dut::Dut;
use rnic_model::rnic_top::RnicTopIn;

/// Longest wait between two horizon queries of a busy host. A query that
/// gets past the cheap checks costs about a tick (a copy of the NIC and one
/// tick of the copy), so a host that stays busy pays at most one in 64
/// cycles; one that falls idle rests within 64 cycles.
const MAX_BACKOFF: u64 = 64;

#[derive(Debug, Default)]
pub struct Doze {
    /// Resting: the inputs held, the cycles rested, the cycle it must wake
    /// by (the horizon's end).
    rest: Option<(RnicTopIn, u64, u64)>,
    /// No horizon query before this cycle.
    next_query: u64,
    backoff: u64,
    /// Cycles this host rested, over the run.
    pub rested: u64,
}

impl Doze {
    /// Whether the host rests in `cycle` with inputs `i` instead of
    /// ticking. When it wakes, `m` catches up on the cycles it rested,
    /// and the caller ticks it as usual.
    pub fn rests<M: Dut<In = RnicTopIn>>(&mut self, cycle: u64, i: &RnicTopIn, m: &mut M) -> bool {
        if let Some((held, n, until)) = &mut self.rest {
            if held == i && cycle < *until {
                *n += 1;
                self.rested += 1;
                return true;
            }
            m.skip(held, *n);
            self.rest = None;
        }
        if cycle < self.next_query {
            return false;
        }
        let h = m.idle_horizon(i);
        if h == 0 {
            self.backoff = (self.backoff * 2).clamp(1, MAX_BACKOFF);
            self.next_query = cycle + self.backoff;
            return false;
        }
        self.backoff = 0;
        self.rest = Some((*i, 1, cycle.saturating_add(h)));
        self.rested += 1;
        true
    }

    /// Catches `m` up on the cycles rested so far (at the end of a run, so
    /// that the model's state is the one its cycles reached).
    pub fn wake<M: Dut<In = RnicTopIn>>(&mut self, m: &mut M) {
        if let Some((held, n, _)) = self.rest.take() {
            m.skip(&held, n);
        }
    }
}
