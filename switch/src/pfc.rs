//! PFC both ways: the pause an egress queue honours (with the watchdog that
//! may override it), the XOFF/XON state of an ingress (port, priority), and
//! the headroom arithmetic (docs/switch.md, "PFC").

/// Cycles a pause of `quanta` lasts at `bits_per_cycle`: a quantum is 512
/// bit times, and a partial cycle still blocks a start.
pub fn pause_cycles(quanta: u16, bits_per_cycle: u32) -> u64 {
    (quanta as u64 * 512).div_ceil(bits_per_cycle.max(1) as u64)
}

/// Wire cycles of a frame of `len` bytes (no FCS, padded to 60): FCS,
/// preamble and inter-frame gap add 24 bytes.
pub fn wire_cycles(len: usize, bits_per_cycle: u32) -> u64 {
    ((len.max(60) as u64 + 24) * 8).div_ceil(bits_per_cycle.max(1) as u64)
}

/// Headroom one lossless (ingress port, priority) needs beyond XOFF so that
/// nothing is dropped: every byte the upstream sender can still put on the
/// wire after the frame that crossed XOFF has arrived.
///
/// After that arrival, the XOFF waits behind at most one frame already on
/// our wire (`mtu_bytes` + 24), takes its own 84 wire bytes, crosses the
/// link (`link_delay_cycles`), the sender takes `response_cycles` to act
/// and then still finishes the frame it has started (another MTU + 24).
/// Meanwhile everything it sent in the last link delay before we decided
/// is still in flight toward us. So, in bytes:
///
/// `ceil(B * (2 * delay + response) / 8) + 2 * (mtu + 24) + 84`
///
/// where the time terms are at the link rate of B bits per cycle and the
/// frame terms are counted at wire size (conservative: the buffer stores
/// only the frame, not the 24 overhead bytes).
pub fn headroom_needed(
    bits_per_cycle: u32,
    link_delay_cycles: u64,
    mtu_bytes: u64,
    response_cycles: u64,
) -> u64 {
    let time_bits = bits_per_cycle as u64 * (2 * link_delay_cycles + response_cycles);
    time_bits.div_ceil(8) + 2 * (mtu_bytes + 24) + 84
}

/// A received pause on one egress queue. Cycle `c` is paused when
/// `since <= c <= until` and the watchdog has not fired.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pause {
    /// Last paused cycle of the pause as received (honoured or not).
    pub until: u64,
    /// First cycle of the current unbroken pause, if there is one.
    pub since: Option<u64>,
    /// The watchdog fired: the pause is ignored and the queue drops until
    /// the received pause would have ended anyway.
    pub storm: bool,
}

impl Pause {
    /// Applies a PFC frame received at `at` with a pause of `cycles`
    /// (0 = XON). Returns the change in honoured future cycles, for the
    /// `paused_cycles` counter.
    pub fn receive(&mut self, at: u64, cycles: u64) -> i64 {
        let old_left = if self.storm || self.since.is_none() {
            0
        } else {
            self.until.saturating_sub(at) as i64
        };
        let continuing = self.since.is_some() && self.until >= at;
        if cycles == 0 {
            self.since = None;
            self.until = at;
            // XON ends a storm at once: the queue is free from at + 1.
            self.storm = false;
            return -old_left;
        }
        if !continuing {
            self.since = Some(at.saturating_add(1));
        }
        self.until = at.saturating_add(cycles);
        if self.storm {
            0
        } else {
            cycles as i64 - old_left
        }
    }

    /// Whether a frame of this queue may not start at cycle `c`.
    pub fn blocks(&self, c: u64) -> bool {
        !self.storm && matches!(self.since, Some(s) if s <= c && c <= self.until)
    }

    /// First cycle from `c` on at which the pause no longer blocks.
    pub fn free_from(&self, c: u64) -> u64 {
        if self.blocks(c) {
            self.until.saturating_add(1)
        } else {
            c
        }
    }

    /// The cycle the watchdog fires: the queue has then been paused for
    /// `w` cycles (`since ..= since + w - 1`) and is still paused.
    pub fn watchdog_due(&self, w: u64) -> Option<u64> {
        match self.since {
            Some(s) if !self.storm && s.saturating_add(w) <= self.until => {
                Some(s.saturating_add(w))
            }
            _ => None,
        }
    }

    /// The cycle a storm ends: the first cycle the received pause no
    /// longer covers.
    pub fn storm_end(&self) -> Option<u64> {
        self.storm.then_some(self.until.saturating_add(1))
    }
}

/// XOFF/XON state of one ingress (port, priority).
#[derive(Clone, Copy, Debug, Default)]
pub struct Gen {
    pub xoff: bool,
    pub next_refresh: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pause_lengths() {
        // 65535 quanta * 512 bits = 33,553,920 bits / 400 = 83,884.8 -> 83,885.
        assert_eq!(pause_cycles(65535, 400), 83_885);
        // 1 quantum = 512 bits: 2 cycles at 400 (1.28), 1 at 512.
        assert_eq!(pause_cycles(1, 400), 2);
        assert_eq!(pause_cycles(1, 512), 1);
        assert_eq!(pause_cycles(0, 400), 0);
    }

    #[test]
    fn wire_lengths() {
        // 60 + 24 = 84 bytes = 672 bits: 1.68 -> 2 cycles at 400.
        assert_eq!(wire_cycles(10, 400), 2);
        // 1000 + 24 = 1024 bytes = 8192 bits: 20.48 -> 21 cycles.
        assert_eq!(wire_cycles(1000, 400), 21);
        // 1026 + 24 = 1050 bytes = 8400 bits: exactly 21 cycles.
        assert_eq!(wire_cycles(1026, 400), 21);
    }

    #[test]
    fn headroom_worked_example() {
        // 100 Gb/s at 250 MHz (400 bits/cycle), 1000 cycles (4 us, about
        // 800 m of fibre) each way, 4096-byte MTU frames, a sender that
        // reacts in 100 cycles:
        // time: 400 * (2 * 1000 + 100) / 8 = 105,000 bytes
        // frames: 2 * (4096 + 24) = 8,240; the PFC frame itself: 84
        // total 113,324 bytes.
        assert_eq!(headroom_needed(400, 1000, 4096, 100), 113_324);
    }

    #[test]
    fn refreshed_pause_is_continuous() {
        let mut p = Pause::default();
        assert_eq!(p.receive(100, 50), 50);
        assert!(!p.blocks(100) && p.blocks(101) && p.blocks(150) && !p.blocks(151));
        // A refresh at 120 replaces the 30 cycles left with 50 more.
        assert_eq!(p.receive(120, 50), 20);
        assert_eq!((p.since, p.until), (Some(101), 170));
        assert_eq!(p.watchdog_due(60), Some(161));
        // XON at 130 gives back 40 cycles: 131 is free.
        assert_eq!(p.receive(130, 0), -40);
        assert!(!p.blocks(131));
    }
}
