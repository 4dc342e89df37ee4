//! Which arriving frames `rx_buf` lost, for a host whose vector lets its
//! receive buffer overflow (`config.rx_drops`: PFC off, or too little
//! headroom, with a slow or stalled host).
//!
//! Whether a frame finds room is host timing the testbench does not
//! model, so it is not predicted outright. Instead two bounds from
//! docs/responder.md ("rx_buf": LINES 64-byte lines, FRAMES slots, a frame
//! stored whole at arrival or not at all, frames leave in arrival order)
//! and the host writes seen on `rq_*` decide:
//!
//! - **Surely stored**: the lines and slots held at the frame's first beat,
//!   counted high (every frame stored before it, less those surely gone:
//!   a frame is surely out of the buffer once a payload write of a frame
//!   after it left on `rq_*`, since `rx_buf` hands frames out in arrival
//!   order and `rx_wr` writes a payload only after reading it; a frame's
//!   own first write proves nothing of its tail), leave room for the
//!   whole frame.
//! - Otherwise the frame **may have been lost**, and its fate is read from
//!   what it alone would cause: an in-sequence WRITE or SEND is stored iff
//!   its payload reached the host (after its arrival, before the next copy
//!   of the same PSN arrived); the first packet ahead of ePSN is lost if
//!   no sequence NAK for it left, stored if one left before any other
//!   request of the QP arrived, unknown if one did (the NAK may be that
//!   one's: the same NAK either way). A frame that would change nothing
//!   (ahead of ePSN in an episode, not a request) is **unknown**. Anything
//!   else (a duplicate, a READ request or response, a packet needing a
//!   RECV) leaves no trace to tell it by: a problem, the vector must keep
//!   those out of a full buffer.
//!
//! RXBUF_FULL must then lie between the frames found lost and those plus
//! the unknown ones. A NIC that loses a frame while its buffer surely had
//! room, executes a lost one, or writes anything twice fails the other
//! checks as always.

/// rx_buf's lines and frame slots (docs/responder.md, `rx_buf`).
pub const LINES: u64 = 512;
pub const FRAMES: u64 = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Stored,
    Lost,
    Unknown,
}

/// The inference over the frames that arrived, in order.
#[derive(Debug, Default)]
pub struct DropInfer {
    /// Per frame handled so far: its lines and its fate.
    frames: Vec<(u64, Fate)>,
    /// (frame index, cycle of the last beat of a write of its payload):
    /// every frame before it was out of the buffer by then.
    evidence: Vec<(usize, u64)>,
    /// The host's data writes: (cycle of the last beat, address, bytes),
    /// and whether a frame has claimed each.
    writes: Vec<(u64, u64, Vec<u8>)>,
    claimed: Vec<bool>,
    /// The responder's sequence NAKs sent: (cycle, DestQP, PSN), claimed.
    naks: Vec<(u64, u32, u32)>,
    naks_claimed: Vec<bool>,
    pub lost: u64,
    pub unknown: u64,
}

impl DropInfer {
    pub fn new(writes: Vec<(u64, u64, Vec<u8>)>, naks: Vec<(u64, u32, u32)>) -> Self {
        DropInfer {
            claimed: vec![false; writes.len()],
            naks_claimed: vec![false; naks.len()],
            writes,
            naks,
            ..Default::default()
        }
    }

    /// Whether the next frame (`lines` long, first beat at `t`) surely
    /// found room.
    pub fn room_sure(&self, t: u64, lines: u64) -> bool {
        let gone = self.evidence.iter().filter(|e| e.1 < t).map(|e| e.0).max();
        let held = self
            .frames
            .iter()
            .enumerate()
            .filter(|(g, x)| gone.is_none_or(|h| *g >= h) && x.1 != Fate::Lost);
        let (n, l) = held.fold((0u64, 0u64), |(n, l), (_, x)| (n + 1, l + x.0));
        l + lines <= LINES && n < FRAMES
    }

    /// Records the next frame's fate.
    pub fn push(&mut self, lines: u64, fate: Fate) {
        match fate {
            Fate::Lost => self.lost += 1,
            Fate::Unknown => self.unknown += 1,
            Fate::Stored => {}
        }
        self.frames.push((lines, fate));
    }

    /// Claims the host writes of `bytes` at `addr` that left after `after`
    /// and before `until` (a write may be split in several TLPs; each must
    /// carry the frame's own bytes). Returns the cycle of the first one,
    /// None when no byte of it was written in that window.
    pub fn claim_write(&mut self, after: u64, until: u64, addr: u64, bytes: &[u8]) -> Option<u64> {
        let end = addr + bytes.len() as u64;
        let mut first = None;
        for (k, (c, a, b)) in self.writes.iter().enumerate() {
            if self.claimed[k] || *c <= after || *c >= until || *a < addr {
                continue;
            }
            let off = (*a - addr) as usize;
            if *a + b.len() as u64 > end || bytes[off..off + b.len()] != b[..] {
                continue;
            }
            self.claimed[k] = true;
            first = Some(first.map_or(*c, |f: u64| f.min(*c)));
        }
        first
    }

    /// A payload write of frame `f` left at `cycle`: the frames before it
    /// had left the buffer.
    pub fn gone_by(&mut self, f: usize, cycle: u64) {
        self.evidence.push((f, cycle));
    }

    /// Claims a sequence NAK for `psn` to `dest_qp` sent after `after`;
    /// returns the cycle it left.
    pub fn claim_nak(&mut self, after: u64, dest_qp: u32, psn: u32) -> Option<u64> {
        let hit =
            self.naks.iter().enumerate().find(|(k, n)| {
                !self.naks_claimed[*k] && n.0 > after && n.1 == dest_qp && n.2 == psn
            });
        let (k, c) = hit.map(|(k, n)| (k, n.0))?;
        self.naks_claimed[k] = true;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_counts_every_frame_not_surely_gone() {
        let mut d = DropInfer::new(Vec::new(), Vec::new());
        // 28 frames of 18 lines: 504 held, an 18-line frame does not fit,
        // an 8-line one does.
        for _ in 0..28 {
            d.push(18, Fate::Stored);
        }
        assert!(!d.room_sure(100, 18));
        assert!(d.room_sure(100, 8));
        // A write of frame 4 by cycle 90: frames 0..=3 are gone.
        d.gone_by(4, 90);
        assert!(d.room_sure(100, 80));
        assert!(!d.room_sure(100, 81));
        // Not yet at cycle 90 itself.
        assert!(!d.room_sure(90, 18));
        // A lost frame holds nothing; an unknown one counts as held.
        d.push(18, Fate::Lost);
        d.push(18, Fate::Unknown);
        assert!(d.room_sure(100, 62));
        assert!(!d.room_sure(100, 63));
    }

    #[test]
    fn the_slots_bound_small_frames() {
        let mut d = DropInfer::new(Vec::new(), Vec::new());
        for _ in 0..63 {
            d.push(1, Fate::Stored);
        }
        assert!(d.room_sure(0, 1));
        d.push(1, Fate::Stored);
        assert!(!d.room_sure(0, 1));
    }

    #[test]
    fn writes_are_claimed_in_their_window_with_their_own_bytes() {
        let w = vec![
            (50, 0x1000, vec![1, 2]),
            (60, 0x1002, vec![3, 4]),
            (70, 0x1000, vec![9, 9]),
        ];
        let mut d = DropInfer::new(w, vec![(40, 7, 100)]);
        // Before the frame's arrival: not its write.
        assert_eq!(d.claim_write(55, 1000, 0x1000, &[1, 2, 3, 4]), Some(60));
        let mut d = DropInfer::new(d.writes.clone(), Vec::new());
        assert_eq!(d.claim_write(10, 65, 0x1000, &[1, 2, 3, 4]), Some(50));
        // Claimed once; other bytes are not the frame's.
        assert_eq!(d.claim_write(10, 1000, 0x1000, &[1, 2, 3, 4]), None);
        let mut d = DropInfer::new(Vec::new(), vec![(40, 7, 100)]);
        assert_eq!(d.claim_nak(40, 7, 100), None);
        assert_eq!(d.claim_nak(39, 7, 100), Some(40));
        assert_eq!(d.claim_nak(39, 7, 100), None);
    }
}
