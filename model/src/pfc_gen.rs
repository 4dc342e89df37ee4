//! `pfc_gen`: PFC generation from `rx_buf`'s per-priority occupancy. Model
//! of `hw/rtl/pfc_gen.sv`; contract in `docs/pfc_gen.md`.
//!
//! Per priority p with `cfg_en[p]`: XOFF when `prio_lines[p]` reaches
//! `cfg_xoff`; while p stays at or above `cfg_xon` the XOFF is sent again
//! `cfg_refresh` cycles (0 acts as 1) after the last one was loaded into the
//! output register; XON (time 0) once p falls below `cfg_xon`. A disabled
//! priority forgets its state and sends nothing. The output register loads
//! when empty or being taken: every priority whose XOFF is due (time
//! `cfg_time`), or, when none is, every priority whose XON is due (time 0).

use crate::dut::Dut;
use crate::ports;
use crate::trace::{Trace, Tracer};

/// rx_buf's lines (the RTL parameter `LINES`).
pub const LINES: u16 = 512;

ports! {
    /// Inputs of `pfc_gen` (all but `clk`/`rst`).
    pub struct PfcGenIn {
        /// rx_buf's lines held per priority, p at bits `[10p, 10p + 10)`.
        pub prio_lines: u128 = 80,
        pub cfg_en: u8 = 8,
        pub cfg_xoff: u16 = 10,
        pub cfg_xon: u16 = 10,
        pub cfg_time: u16 = 16,
        pub cfg_refresh: u32 = 24,
        pub pfc_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `pfc_gen`, registered.
    pub struct PfcGenOut {
        /// A PFC frame request (held until `pfc_ready`).
        pub pfc_valid: bool = 1,
        pub pfc_enable: u8 = 8 if pfc_valid,
        pub pfc_quanta: u128 = 128 if pfc_valid,
        /// Pulses: an XOFF frame, an XON frame was taken the cycle before.
        pub ev_xoff: bool = 1,
        pub ev_xon: bool = 1,
    }
}

#[derive(Debug, Clone, Default)]
pub struct PfcGen {
    /// Bit p: XOFF in force for priority p (sent or due).
    off_q: u8,
    /// Bit p: an XOFF (new or refresh) not yet loaded.
    pend_q: u8,
    /// Bit p: an XON not yet loaded.
    xonp_q: u8,
    /// Cycles to priority p's next refresh (0: none running).
    timer_q: [u32; 8],
    out_v_q: bool,
    out_en_q: u8,
    out_quanta_q: u128,
    out_xoff_q: bool,
    ev_xoff_q: bool,
    ev_xon_q: bool,
}

impl PfcGen {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> PfcGenOut {
        PfcGenOut {
            pfc_valid: self.out_v_q,
            pfc_enable: self.out_en_q,
            pfc_quanta: self.out_quanta_q,
            ev_xoff: self.ev_xoff_q,
            ev_xon: self.ev_xon_q,
        }
    }

    /// Whether ticking with `prio_lines` changes nothing but running timers
    /// (used by `RnicTop::idle_horizon`): no frame waiting or due, and no
    /// threshold crossed. `u64::MAX` when no timer runs either.
    pub fn idle_horizon(&self, i: &PfcGenIn) -> u64 {
        if self.out_v_q || self.pend_q != 0 || self.xonp_q != 0 || self.ev_xoff_q || self.ev_xon_q {
            return 0;
        }
        let mut h = u64::MAX;
        for p in 0..8 {
            let en = i.cfg_en >> p & 1 != 0;
            let off = self.off_q >> p & 1 != 0;
            let lines = (i.prio_lines >> (10 * p)) as u16 & 0x3FF;
            if !en && off {
                return 0;
            }
            if !en {
                continue;
            }
            if (off && lines < i.cfg_xon) || (!off && lines >= i.cfg_xoff) {
                return 0;
            }
            let t = self.timer_q[p] as u64;
            if off && t != 0 {
                // Due when the timer reads 1: t - 1 quiet ticks first.
                h = h.min(t - 1);
            }
        }
        h
    }

    /// `n` quiet ticks at once (`n` within [`PfcGen::idle_horizon`]).
    pub fn skip(&mut self, n: u64) {
        for t in &mut self.timer_q {
            *t = (*t as u64).saturating_sub(n) as u32;
        }
    }
}

impl Dut for PfcGen {
    type In = PfcGenIn;
    type Out = PfcGenOut;
    const NAME: &'static str = "pfc_gen";

    fn reset(&mut self) -> PfcGenOut {
        *self = PfcGen::new();
        self.outputs()
    }

    fn tick(&mut self, i: &PfcGenIn) -> PfcGenOut {
        let old = self.clone();
        let period = if i.cfg_refresh & 0xFF_FFFF == 0 {
            1
        } else {
            i.cfg_refresh & 0xFF_FFFF
        };
        let take = old.out_v_q && i.pfc_ready;
        let load = !old.out_v_q || i.pfc_ready;
        let (mut want_off, mut want_on, mut off_d) = (0u8, 0u8, old.off_q);
        for p in 0..8 {
            let bit = 1u8 << p;
            let lines = (i.prio_lines >> (10 * p)) as u16 & 0x3FF;
            let off = old.off_q & bit != 0;
            if i.cfg_en & bit == 0 {
                off_d &= !bit;
            } else if off && lines < i.cfg_xon {
                off_d &= !bit;
                want_on |= bit;
            } else if !off && lines >= i.cfg_xoff {
                off_d |= bit;
                want_off |= bit;
            } else {
                if old.pend_q & bit != 0 || (off && old.timer_q[p] == 1) {
                    want_off |= bit;
                }
                want_on |= old.xonp_q & bit;
            }
        }
        self.out_v_q = old.out_v_q && !i.pfc_ready;
        self.pend_q = want_off;
        self.xonp_q = want_on;
        if load && want_off != 0 {
            self.out_v_q = true;
            self.out_en_q = want_off;
            self.out_xoff_q = true;
            self.out_quanta_q = (0..8)
                .filter(|p| want_off >> p & 1 != 0)
                .fold(0u128, |q, p| q | (i.cfg_time as u128) << (16 * p));
            self.pend_q = 0;
        } else if load && want_on != 0 {
            self.out_v_q = true;
            self.out_en_q = want_on;
            self.out_xoff_q = false;
            self.out_quanta_q = 0;
            self.xonp_q = 0;
        }
        for p in 0..8 {
            let t = old.timer_q[p];
            self.timer_q[p] = if off_d >> p & 1 == 0 {
                0
            } else if load && want_off >> p & 1 != 0 {
                period
            } else {
                t.saturating_sub(1)
            };
        }
        self.off_q = off_d;
        self.ev_xoff_q = take && old.out_xoff_q;
        self.ev_xon_q = take && !old.out_xoff_q;
        self.outputs()
    }
}

impl Trace for PfcGen {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("off_q", 8, &self.off_q);
        t.reg("pend_q", 8, &self.pend_q);
        t.reg("xonp_q", 8, &self.xonp_q);
        t.reg("timer_q", 192, &self.timer_q);
        t.reg("out_v_q", 1, &self.out_v_q);
        t.reg("out_en_q", 8, &self.out_en_q);
        t.reg("out_quanta_q", 128, &self.out_quanta_q);
        t.reg("out_xoff_q", 1, &self.out_xoff_q);
        t.reg("ev_xoff_q", 1, &self.ev_xoff_q);
        t.reg("ev_xon_q", 1, &self.ev_xon_q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(p: usize, n: u16) -> u128 {
        (n as u128) << (10 * p)
    }

    fn cfg(prio_lines: u128, refresh: u32) -> PfcGenIn {
        PfcGenIn {
            prio_lines,
            cfg_en: 1 << 3,
            cfg_xoff: 100,
            cfg_xon: 80,
            cfg_time: 0x1234,
            cfg_refresh: refresh,
            pfc_ready: true,
        }
    }

    #[test]
    fn xoff_refresh_xon() {
        let mut g = PfcGen::new();
        // Below XOFF: nothing.
        let o = g.tick(&cfg(lines(3, 99), 10));
        assert!(!o.pfc_valid);
        // Reaches XOFF at cycle 1: the frame is visible at 2.
        let o = g.tick(&cfg(lines(3, 100), 10));
        assert!(o.pfc_valid);
        assert_eq!(o.pfc_enable, 1 << 3);
        assert_eq!(o.pfc_quanta, 0x1234u128 << 48);
        // Taken; the refresh is visible 10 cycles after the XOFF.
        let mut seen = vec![];
        for c in 2..40 {
            let o = g.tick(&cfg(lines(3, 90), 10));
            if o.pfc_valid {
                seen.push(c);
            }
        }
        assert_eq!(seen, vec![11, 21, 31]);
        // Below XON: an XON frame.
        let o = g.tick(&cfg(lines(3, 79), 10));
        assert!(o.pfc_valid && o.pfc_quanta == 0 && o.pfc_enable == 1 << 3);
        let o = g.tick(&cfg(lines(3, 79), 10));
        assert!(!o.pfc_valid && o.ev_xon);
        // Other priorities never send (not enabled).
        let o = g.tick(&cfg(lines(5, 500), 10));
        assert!(!o.pfc_valid);
    }
}
