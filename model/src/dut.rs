//! The interface both implementations of a block offer to the lockstep runner.

use crate::ports::Ports;

/// A clocked block: the Rust model or the Verilated RTL of it.
///
/// Every block output is registered, so a tick takes this cycle's inputs and
/// returns the outputs that are visible in the next cycle; outputs never
/// depend combinationally on the inputs of the same cycle.
pub trait Dut {
    type In: Ports;
    type Out: Ports;
    /// RTL module name, also the VCD scope name.
    const NAME: &'static str;

    /// Synchronous reset (with all inputs at their default), returns the
    /// outputs seen in the first cycle after reset.
    fn reset(&mut self) -> Self::Out;

    /// One rising clock edge with `inputs` applied.
    fn tick(&mut self, inputs: &Self::In) -> Self::Out;

    /// Cycles [`Dut::skip`] may jump with `inputs` held, each of them a tick
    /// that would leave every output as it is. 0, the default, for a block
    /// (or an RTL) with no exact fast path for idle cycles.
    fn idle_horizon(&self, _inputs: &Self::In) -> u64 {
        0
    }

    /// `n` ticks with `inputs` held, at once; `n` at most
    /// [`Dut::idle_horizon`] of the state before them.
    fn skip(&mut self, _inputs: &Self::In, n: u64) {
        assert_eq!(n, 0, "{}: no idle fast path to skip {n} cycles", Self::NAME);
    }
}
