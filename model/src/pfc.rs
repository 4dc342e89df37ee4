//! `pfc`: the 802.1Qbb PFC pause timers. Model of `hw/rtl/pfc.sv`.
//!
//! One bit-time counter per priority. A PFC frame (`pfc_valid`, a pulse from
//! rx_parser) loads every enabled priority with `quanta * 512` bit times (a
//! refresh replaces what was left, quanta 0 ends the pause); otherwise each
//! counter drops by `BITS_PER_CYCLE`, the link bits that pass in one core
//! clock (400 at 100 Gb/s and 250 MHz), down to 0. `pause[p]` is registered:
//! the new counter != 0. So a frame seen at n with quanta Q pauses from n+1
//! for exactly `ceil(Q * 512 / BITS_PER_CYCLE)` cycles.

use crate::dut::Dut;
use crate::ports;
use crate::trace::{Trace, Tracer};

/// The RTL parameter's default: 100 Gb/s at 250 MHz.
pub use crate::params::BITS_PER_CYCLE;

ports! {
    /// Inputs of `pfc` (all but `clk`/`rst`).
    pub struct PfcIn {
        /// Pulse: a PFC frame was received.
        pub pfc_valid: bool = 1,
        /// Bit p: the frame's time for priority p is valid.
        pub pfc_enable: u8 = 8 if pfc_valid,
        /// Priority p's time in quanta (512 bit times) at bits `[16p, 16p + 16)`.
        pub pfc_quanta: u128 = 128 if pfc_valid,
    }
}

ports! {
    /// Outputs of `pfc`, registered.
    pub struct PfcOut {
        /// Bit p: priority p is paused.
        pub pause: u8 = 8,
    }
}

#[derive(Debug, Clone)]
pub struct Pfc {
    /// The RTL's `BITS_PER_CYCLE` parameter (1 ..= 512 * 65535).
    bits_per_cycle: u32,
    /// Bit times left per priority (26 bits: 65535 * 512 < 2^26).
    remaining_q: [u32; 8],
    pause_q: u8,
}

impl Default for Pfc {
    fn default() -> Self {
        Pfc::with_bits_per_cycle(BITS_PER_CYCLE)
    }
}

impl Pfc {
    pub fn new() -> Self {
        Self::default()
    }

    /// The block with another `BITS_PER_CYCLE` (the RTL rejects 0 and
    /// anything above 512 * 65535 at elaboration; so does this).
    pub fn with_bits_per_cycle(bits_per_cycle: u32) -> Self {
        assert!(
            (1..=512 * 65535).contains(&bits_per_cycle),
            "pfc: BITS_PER_CYCLE must be 1..512*65535"
        );
        Pfc {
            bits_per_cycle,
            remaining_q: [0; 8],
            pause_q: 0,
        }
    }

    pub fn outputs(&self) -> PfcOut {
        PfcOut {
            pause: self.pause_q,
        }
    }
}

impl Dut for Pfc {
    type In = PfcIn;
    type Out = PfcOut;
    const NAME: &'static str = "pfc";

    fn reset(&mut self) -> PfcOut {
        *self = Pfc::with_bits_per_cycle(self.bits_per_cycle);
        self.outputs()
    }

    fn tick(&mut self, i: &PfcIn) -> PfcOut {
        let mut pause = 0u8;
        for p in 0..8 {
            let r = self.remaining_q[p];
            self.remaining_q[p] = if i.pfc_valid && (i.pfc_enable >> p) & 1 != 0 {
                ((i.pfc_quanta >> (16 * p)) as u32 & 0xFFFF) * 512
            } else {
                // The RTL's `r > BPC ? r - BPC : 0`.
                r.saturating_sub(self.bits_per_cycle)
            };
            pause |= ((self.remaining_q[p] != 0) as u8) << p;
        }
        self.pause_q = pause;
        self.outputs()
    }
}

impl Pfc {
    /// Idle cycles (no PFC frame) for which `pause` stays as it is: until
    /// the first running timer runs out. `u64::MAX` when none runs.
    pub fn idle_horizon(&self) -> u64 {
        let bpc = self.bits_per_cycle as u64;
        self.remaining_q
            .iter()
            .filter(|&&r| r != 0)
            .map(|&r| (r as u64).div_ceil(bpc) - 1)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// `n` idle ticks at once (`n` within [`Pfc::idle_horizon`]).
    pub fn skip(&mut self, n: u64) {
        let run = n.saturating_mul(self.bits_per_cycle as u64);
        for r in &mut self.remaining_q {
            *r = (*r as u64).saturating_sub(run) as u32;
        }
    }
}

impl Trace for Pfc {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("remaining_q", 208, &self.remaining_q);
        t.reg("pause_q", 8, &self.pause_q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PFC frame: priority p's time is `q[p]`, enabled where `en` says.
    fn frame(en: u8, q: [u16; 8]) -> PfcIn {
        let mut quanta = 0u128;
        for (p, &x) in q.iter().enumerate() {
            quanta |= (x as u128) << (16 * p);
        }
        PfcIn {
            pfc_valid: true,
            pfc_enable: en,
            pfc_quanta: quanta,
        }
    }

    /// Cycles for which priority 0 is paused after one frame of quanta `q`
    /// (the frame at cycle 0, pause counted from cycle 1 on).
    fn pause_cycles(q: u16) -> u32 {
        let mut m = Pfc::new();
        assert_eq!(m.reset().pause, 0);
        let mut o = m.tick(&frame(1, [q, 0, 0, 0, 0, 0, 0, 0]));
        let mut n = 0;
        while o.pause & 1 != 0 {
            n += 1;
            o = m.tick(&PfcIn::default());
        }
        // Stays resumed.
        for _ in 0..10 {
            assert_eq!(m.tick(&PfcIn::default()).pause, 0);
        }
        n
    }

    #[test]
    fn quanta_q_pauses_ceil_q_times_512_over_400_cycles() {
        // Q = 1: 512 bit times; 400 pass per cycle: 512 -> 112 -> 0, so the
        // pause is visible for 2 cycles (ceil(512 / 400) = 2).
        assert_eq!(pause_cycles(1), 2);
        // Q = 0: no pause at all (resumes at n+1).
        assert_eq!(pause_cycles(0), 0);
        // Q = 25: 12,800 bit times = exactly 32 cycles of 400.
        assert_eq!(pause_cycles(25), 32);
        // Q = 26: 13,312 = 33 * 400 + 112: 34 cycles.
        assert_eq!(pause_cycles(26), 34);
        // Q = 65535: 33,553,920 bit times / 400 = 83,884.8 -> 83,885 cycles.
        assert_eq!(pause_cycles(65535), 83_885);
    }

    #[test]
    fn priorities_are_independent_and_only_enabled_ones_load() {
        let mut m = Pfc::new();
        m.reset();
        // Priorities 1 (Q = 1: 2 cycles) and 6 (Q = 3: 1536 bits, 4 cycles)
        // enabled; priority 2 has a time but is not enabled.
        let o = m.tick(&frame(0b0100_0010, [0, 1, 500, 0, 0, 0, 3, 0]));
        assert_eq!(o.pause, 0b0100_0010);
        assert_eq!(m.tick(&PfcIn::default()).pause, 0b0100_0010);
        assert_eq!(m.tick(&PfcIn::default()).pause, 0b0100_0000);
        assert_eq!(m.tick(&PfcIn::default()).pause, 0b0100_0000);
        assert_eq!(m.tick(&PfcIn::default()).pause, 0);
    }

    #[test]
    fn a_refresh_replaces_and_quanta_zero_resumes_at_once() {
        let mut m = Pfc::new();
        m.reset();
        // Q = 2 (1024 bits: 3 cycles) at cycle 0: paused at 1, 2.
        assert_eq!(m.tick(&frame(1, [2, 0, 0, 0, 0, 0, 0, 0])).pause, 1);
        assert_eq!(m.tick(&PfcIn::default()).pause, 1);
        // Refresh at 2 with Q = 1: 2 more cycles from 3 (not 3 - 2 + 2).
        assert_eq!(m.tick(&frame(1, [1, 0, 0, 0, 0, 0, 0, 0])).pause, 1);
        assert_eq!(m.tick(&PfcIn::default()).pause, 1);
        // Q = 65535 then a Q = 0 frame: resumed the cycle after.
        assert_eq!(m.tick(&frame(1, [65535, 0, 0, 0, 0, 0, 0, 0])).pause, 1);
        assert_eq!(m.tick(&PfcIn::default()).pause, 1);
        assert_eq!(m.tick(&frame(1, [0, 0, 0, 0, 0, 0, 0, 0])).pause, 0);
        // A frame with no enable bit changes nothing (and still counts down).
        assert_eq!(m.tick(&frame(0, [9, 9, 9, 9, 9, 9, 9, 9])).pause, 0);
    }

    #[test]
    fn another_bits_per_cycle() {
        // 512 bits per cycle: Q quanta pause exactly Q cycles.
        let mut m = Pfc::with_bits_per_cycle(512);
        m.reset();
        let mut o = m.tick(&frame(0x80, [0, 0, 0, 0, 0, 0, 0, 7]));
        let mut n = 0;
        while o.pause != 0 {
            assert_eq!(o.pause, 0x80);
            n += 1;
            o = m.tick(&PfcIn::default());
        }
        assert_eq!(n, 7);
    }
}
