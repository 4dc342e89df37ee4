//! A NIC's MAC at line rate: `tx_*` moves 64 bytes a cycle, faster than
//! the line, so in a fabric the MAC holds `tx_tready` low as the wire
//! requires. It counts the wire time still owed, in bits: a beat costs its
//! bytes, and a frame's last beat also its padding to 60 bytes and the 24
//! bytes of FCS, preamble and inter-frame gap; every cycle pays off the
//! line's bits per cycle, never below zero (an idle wire banks nothing). A
//! beat is taken while less than one cycle's bits are owed: the wire frees
//! up within this cycle, so a beat may start mid-cycle and no fraction of
//! a cycle is lost. Back-to-back frames of L bytes then take exactly
//! (max(L, 60) + 24) * 8 bits of wire time each.

/// Bytes on the wire per frame besides the frame: FCS 4, preamble and
/// start delimiter 8, inter-frame gap 12.
pub const WIRE_OVERHEAD: u64 = 24;

/// Shortest frame on the wire without its FCS.
pub const MIN_FRAME: u64 = 60;

#[derive(Debug, Clone)]
pub struct MacPacer {
    bits_per_cycle: u64,
    /// Bits of wire time owed.
    debt: u64,
    /// Bytes of the frame taken so far.
    in_frame: u64,
}

impl MacPacer {
    pub fn new(bits_per_cycle: u32) -> Self {
        MacPacer {
            bits_per_cycle: bits_per_cycle as u64,
            debt: 0,
            in_frame: 0,
        }
    }

    /// This cycle's `tx_tready`.
    pub fn ready(&self) -> bool {
        self.debt < self.bits_per_cycle
    }

    /// Ends the cycle: `taken` is the beat that moved in it (its byte
    /// count and tlast), if one did.
    pub fn tick(&mut self, taken: Option<(u64, bool)>) {
        if let Some((bytes, last)) = taken {
            self.in_frame += bytes;
            let mut cost = bytes * 8;
            if last {
                cost += (MIN_FRAME.saturating_sub(self.in_frame) + WIRE_OVERHEAD) * 8;
                self.in_frame = 0;
            }
            self.debt += cost;
        }
        self.debt = self.debt.saturating_sub(self.bits_per_cycle);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs back-to-back frames of `len` bytes (64-byte beats) for
    /// `cycles` and returns the cycles at which frames ended.
    fn ends(bpc: u32, len: u64, cycles: u64) -> Vec<u64> {
        let mut m = MacPacer::new(bpc);
        let mut left = len;
        let mut out = Vec::new();
        for c in 0..cycles {
            let taken = if m.ready() {
                let b = left.min(64);
                left -= b;
                let last = left == 0;
                if last {
                    out.push(c);
                    left = len;
                }
                Some((b, last))
            } else {
                None
            };
            m.tick(taken);
        }
        out
    }

    #[test]
    fn full_frames_take_their_wire_time() {
        // 1024-byte frames at 400 b/cycle: (1024 + 24) * 8 = 8384 bits,
        // 20.96 cycles each, so 20 or 21 cycles apart; the wire never
        // idles while frames wait, so 100 of them take exactly 100 times
        // that.
        let e = ends(400, 1024, 3000);
        let per: Vec<u64> = e.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(per.iter().all(|&d| d == 20 || d == 21), "{per:?}");
        // 100 frames: 838,400 bits = 2096 cycles exactly.
        assert_eq!(e[100] - e[0], 2096);
    }

    #[test]
    fn short_frames_pay_padding_and_overhead() {
        // A 40-byte frame is one beat but (60 + 24) * 8 = 672 bits: at
        // 400 b/cycle, 1.68 cycles; 25 frames take 42 cycles.
        let e = ends(400, 40, 200);
        assert_eq!(e[25] - e[0], 42);
    }
}
