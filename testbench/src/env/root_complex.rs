//! Cycle-stepped model of the PCIe root complex as seen by the NIC's
//! requester interface: it takes MRd/MWr TLPs from `rq_*` and returns
//! completions on `rc_*`, one beat per cycle each way.
//!
//! Timing follows the project's rule that every output is registered: in
//! cycle N the DUT shows `rq_*`/`rc_ready` and the root complex shows what
//! [`RootComplex::outputs`] returns (`rq_ready`, `rc_*`). A beat moves where
//! valid and ready are both high in that cycle. [`RootComplex::step`] takes
//! the DUT's cycle-N outputs, performs the cycle-N transfers and returns the
//! root complex's outputs for cycle N+1. The harness loop is therefore:
//!
//! ```text
//! let mut env_out = rc.outputs();                  // cycle 0
//! loop {
//!     dut_in.rq_ready = env_out.rq_ready; ...      // drive cycle N
//!     let next_env = rc.step(&rq_in_from(&dut_out), dut_out.rc_ready, &mut mem);
//!     dut_out = dut.tick(&dut_in);                 // DUT's cycle N+1 outputs
//!     env_out = next_env;
//! }
//! ```
//!
//! A read's data is taken from [`HostMemory`] when its MRd has been received
//! (so it sees every MWr received before it), and its completions may start
//! `latency` cycles after the MRd's last beat was accepted.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Range;

use rnic_model::ports::Beat;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::{HostMemory, SplitMix64};
use crate::wire::{to_beats, CplStatus, Deframer, FrameError, StreamBeat, TlpError, TlpRepr};

/// Where the completions of one request are split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    /// Every completion but the last ends at a `cpl_size`-aligned address.
    AtCplSize,
    /// Each completion ends at a random RCB-aligned address (or the end of
    /// the request) and carries at most `cpl_size` payload bytes.
    Random,
}

/// `rq_ready` behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadyPolicy {
    Always,
    /// Ready in each cycle with probability `percent`/100 (1..=100), seeded.
    Random {
        percent: u8,
    },
}

/// What the root complex does with an MRd that overlaps a fault range.
/// Faults apply to reads only; writes always reach memory.
/// Also the `kind` of a vector's fault, in snake case (`bad_byte_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// One Cpl with status Unsupported Request.
    Ur,
    /// One Cpl with status Completer Abort.
    Ca,
    /// Normal CplDs, all with the EP (poisoned) bit set.
    Poison,
    /// No completion at all (the DUT must time out).
    Drop,
    /// Normal CplDs, but the first one's Byte Count is 4 too large: the DUT
    /// must drop them as malformed and time out.
    BadByteCount,
    /// Normal CplDs addressed to another Requester ID (ours with bit 0
    /// flipped): not the DUT's, so it must ignore them and time out.
    WrongRequester,
    /// Normal CplDs, preceded by a stray CplD with the read's tag | 0x80 (a
    /// tag an engine of up to 128 tags never has outstanding): the DUT must
    /// drop the stray one and complete the read.
    Stray,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub range: Range<u64>,
    pub kind: FaultKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootComplexConfig {
    /// Cycles from an MRd's last beat being accepted to the first cycle its
    /// first completion may be driven (values below 1 act as 1: outputs are
    /// registered).
    pub latency: u32,
    /// Read Completion Boundary: 64 or 128.
    pub rcb: u32,
    /// Largest completion payload: a multiple of `rcb` in 64..=4096.
    pub cpl_size: u32,
    pub split: SplitMode,
    /// Interleave completions of different requests pseudo-randomly instead of
    /// oldest request first.
    pub reorder: bool,
    pub seed: u64,
    pub rq_ready: ReadyPolicy,
    pub completer_id: u16,
    /// The first fault overlapping a read decides its fate.
    pub faults: Vec<Fault>,
}

impl Default for RootComplexConfig {
    fn default() -> Self {
        RootComplexConfig {
            latency: 128,
            rcb: 64,
            cpl_size: 128,
            split: SplitMode::AtCplSize,
            reorder: false,
            seed: 1,
            rq_ready: ReadyPolicy::Always,
            completer_id: 0,
            faults: Vec::new(),
        }
    }
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ConfigError {
    #[error("rcb must be 64 or 128, got {0}")]
    Rcb(u32),
    #[error("cpl_size must be a multiple of rcb in 64..=4096, got {0}")]
    CplSize(u32),
    #[error("rq_ready percent must be in 1..=100, got {0}")]
    ReadyPercent(u8),
    #[error("fault range {0:#x}..{1:#x} is empty")]
    EmptyFault(u64, u64),
}

/// Something the DUT sent that the root complex could not act on.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RootComplexError {
    #[error("cycle {cycle}: rq stream: {err}")]
    Frame { cycle: u64, err: FrameError },
    #[error("cycle {cycle}: malformed rq TLP: {err}")]
    Tlp { cycle: u64, err: TlpError },
    #[error("cycle {cycle}: rq TLP is a completion, not a memory request")]
    NotARequest { cycle: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// NIC to host (`rq_*`).
    Rq,
    /// Host to NIC (`rc_*`).
    Rc,
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Rq => "rq",
            Direction::Rc => "rc",
        })
    }
}

/// One whole TLP that crossed the link, logged in the cycle of its last beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlpLogEntry {
    pub cycle: u64,
    pub dir: Direction,
    pub bytes: Vec<u8>,
}

impl fmt::Display for TlpLogEntry {
    /// `CYCLE rq: HEX` / `CYCLE rc: HEX`, the `--tlp-log` line format.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: ", self.cycle, self.dir)?;
        self.bytes.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// The DUT's `rq_*` outputs in one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RqIn {
    pub valid: bool,
    pub data: Beat,
    pub keep: u64,
    pub sop: bool,
    pub eop: bool,
}

/// What the root complex drives in one cycle (names as the DUT's inputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RootComplexOut {
    pub rq_ready: bool,
    pub rc_valid: bool,
    pub rc_data: Beat,
    pub rc_keep: u64,
    pub rc_sop: bool,
    pub rc_eop: bool,
}

/// A received read whose completions are not all delivered.
struct Pending {
    id: u64,
    ready_at: u64,
    /// Completion TLPs not yet started, in address order, each with
    /// whether it is a deliberate protocol violation.
    queue: VecDeque<(Vec<u8>, bool)>,
}

/// The completion TLP currently on `rc_*`.
struct InFlight {
    id: u64,
    injected: bool,
    bytes: Vec<u8>,
    beats: Vec<StreamBeat>,
    next: usize,
}

pub struct RootComplex {
    cfg: RootComplexConfig,
    cycle: u64,
    out: RootComplexOut,
    deframer: Deframer,
    pending: Vec<Pending>,
    in_flight: Option<InFlight>,
    next_id: u64,
    // Separate streams so that, e.g., changing the split mode does not change
    // the back-pressure pattern.
    ready_rng: SplitMix64,
    reorder_rng: SplitMix64,
    split_rng: SplitMix64,
    log: Vec<TlpLogEntry>,
    errors: Vec<RootComplexError>,
    dropped: Vec<(u64, u8)>,
    /// Log indices of the deliberately wrong completions.
    injected: Vec<usize>,
    /// (cycle, first byte, kind) of every MRd a fault applied to.
    faults_met: Vec<(u64, u64, FaultKind)>,
    mrd_received: u64,
    completions_sent: u64,
    mwr_applied: u64,
}

impl RootComplex {
    pub fn new(cfg: RootComplexConfig) -> Result<Self, ConfigError> {
        if cfg.rcb != 64 && cfg.rcb != 128 {
            return Err(ConfigError::Rcb(cfg.rcb));
        }
        if !(64..=4096).contains(&cfg.cpl_size) || !cfg.cpl_size.is_multiple_of(cfg.rcb) {
            return Err(ConfigError::CplSize(cfg.cpl_size));
        }
        if let ReadyPolicy::Random { percent } = cfg.rq_ready {
            if !(1..=100).contains(&percent) {
                return Err(ConfigError::ReadyPercent(percent));
            }
        }
        if let Some(f) = cfg.faults.iter().find(|f| f.range.is_empty()) {
            return Err(ConfigError::EmptyFault(f.range.start, f.range.end));
        }
        let seed = cfg.seed;
        let mut rc = RootComplex {
            cfg,
            cycle: 0,
            out: RootComplexOut::default(),
            deframer: Deframer::new(),
            pending: Vec::new(),
            in_flight: None,
            next_id: 0,
            ready_rng: SplitMix64::new(seed ^ 0x7271_5F72_6561_6479),
            reorder_rng: SplitMix64::new(seed ^ 0x7265_6F72_6465_7221),
            split_rng: SplitMix64::new(seed ^ 0x7370_6C69_7473_2121),
            log: Vec::new(),
            errors: Vec::new(),
            dropped: Vec::new(),
            injected: Vec::new(),
            faults_met: Vec::new(),
            mrd_received: 0,
            completions_sent: 0,
            mwr_applied: 0,
        };
        rc.out.rq_ready = rc.draw_ready();
        Ok(rc)
    }

    /// What the root complex drives in the current cycle.
    pub fn outputs(&self) -> RootComplexOut {
        self.out
    }

    /// The current cycle (number of `step` calls so far).
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// One clock cycle: `rq` and `rc_ready` are the DUT's outputs in this
    /// cycle. Returns the root complex's outputs for the next cycle.
    pub fn step(&mut self, rq: &RqIn, rc_ready: bool, mem: &mut HostMemory) -> RootComplexOut {
        let cycle = self.cycle;
        if rq.valid && self.out.rq_ready {
            let beat = StreamBeat {
                data: rq.data,
                keep: rq.keep,
                sop: rq.sop,
                eop: rq.eop,
            };
            match self.deframer.push(&beat) {
                Ok(Some(tlp)) => self.receive(cycle, tlp, mem),
                Ok(None) => {}
                Err(err) => self.errors.push(RootComplexError::Frame { cycle, err }),
            }
        }
        if self.out.rc_valid && rc_ready {
            self.rc_beat_taken(cycle);
        }
        if self.in_flight.is_none() {
            self.start_next_completion(cycle + 1);
        }
        let mut next = RootComplexOut {
            rq_ready: self.draw_ready(),
            ..RootComplexOut::default()
        };
        if let Some(f) = &self.in_flight {
            let b = &f.beats[f.next];
            next.rc_valid = true;
            next.rc_data = b.data;
            next.rc_keep = b.keep;
            next.rc_sop = b.sop;
            next.rc_eop = b.eop;
        }
        self.out = next;
        self.cycle += 1;
        next
    }

    fn draw_ready(&mut self) -> bool {
        match self.cfg.rq_ready {
            ReadyPolicy::Always => true,
            ReadyPolicy::Random { percent } => self.ready_rng.percent(percent),
        }
    }

    fn receive(&mut self, cycle: u64, tlp: Vec<u8>, mem: &mut HostMemory) {
        let parsed = TlpRepr::parse_bytes(&tlp);
        self.log.push(TlpLogEntry {
            cycle,
            dir: Direction::Rq,
            bytes: tlp,
        });
        match parsed {
            Err(err) => self.errors.push(RootComplexError::Tlp { cycle, err }),
            Ok(TlpRepr::Completion { .. }) => {
                self.errors.push(RootComplexError::NotARequest { cycle })
            }
            Ok(w @ TlpRepr::MemWrite { .. }) => {
                apply_write(&w, mem);
                self.mwr_applied += 1;
            }
            Ok(r @ TlpRepr::MemRead { .. }) => self.accept_read(cycle, &r, mem),
        }
    }

    fn accept_read(&mut self, cycle: u64, req: &TlpRepr, mem: &HostMemory) {
        let TlpRepr::MemRead {
            requester_id, tag, ..
        } = *req
        else {
            return;
        };
        // MRd always has a byte range.
        let Some((start, len)) = req.byte_range() else {
            return;
        };
        self.mrd_received += 1;
        let end = start.saturating_add(len as u64);
        let fault = self
            .cfg
            .faults
            .iter()
            .find(|f| f.range.start < end && start < f.range.end)
            .map(|f| f.kind);
        if let Some(k) = fault {
            self.faults_met.push((cycle, start, k));
        }
        let completer_id = self.cfg.completer_id;
        let cpl =
            |status, byte_count: u64, lower_address: u64, poisoned, data| TlpRepr::Completion {
                status,
                // 4096 is encoded as 0 by emit.
                byte_count: byte_count as u16,
                lower_address: (lower_address & 0x7F) as u8,
                requester_id,
                completer_id,
                tag,
                poisoned,
                data,
            };
        let mut queue = VecDeque::new();
        // Completions the DUT must refuse leave its read to time out.
        if matches!(
            fault,
            Some(FaultKind::BadByteCount | FaultKind::WrongRequester)
        ) {
            self.dropped.push((cycle, tag));
        }
        match fault {
            Some(FaultKind::Drop) => {
                self.dropped.push((cycle, tag));
                return;
            }
            Some(FaultKind::Ur) => {
                queue.push_back(cpl(CplStatus::Ur, len as u64, start, false, None))
            }
            Some(FaultKind::Ca) => {
                queue.push_back(cpl(CplStatus::Ca, len as u64, start, false, None))
            }
            Some(_) | None => {
                let poisoned = fault == Some(FaultKind::Poison);
                let mut cur = start;
                while cur < end {
                    let next = self.split_point(cur, end);
                    let (lo, hi) = (cur & !3, next.saturating_add(3) & !3);
                    let data = mem.read(lo, (hi - lo) as usize);
                    queue.push_back(cpl(CplStatus::Sc, end - cur, cur, poisoned, Some(data)));
                    cur = next;
                }
            }
        }
        let injected = matches!(
            fault,
            Some(FaultKind::BadByteCount | FaultKind::WrongRequester)
        );
        let mut queue: VecDeque<(Vec<u8>, bool)> = queue
            .into_iter()
            .map(|r| (r.to_bytes(), injected))
            .collect();
        match fault {
            Some(FaultKind::BadByteCount) => {
                if let Some((first, _)) = queue.front_mut() {
                    corrupt_byte_count(first);
                }
            }
            Some(FaultKind::WrongRequester) => {
                for (t, _) in queue.iter_mut() {
                    t[9] ^= 1; // Requester ID low byte
                }
            }
            Some(FaultKind::Stray) => {
                if let Some((first, _)) = queue.front() {
                    let mut stray = first.clone();
                    stray[10] |= 0x80; // tag
                    queue.push_front((stray, true));
                }
            }
            _ => {}
        }
        self.pending.push(Pending {
            id: self.next_id,
            ready_at: cycle + self.cfg.latency.max(1) as u64,
            queue,
        });
        self.next_id += 1;
    }

    /// End (exclusive) of the completion that starts at `cur`.
    fn split_point(&mut self, cur: u64, end: u64) -> u64 {
        let (rcb, size) = (self.cfg.rcb as u64, self.cfg.cpl_size as u64);
        match self.cfg.split {
            SplitMode::AtCplSize => end.min((cur / size + 1).saturating_mul(size)),
            SplitMode::Random => {
                // Payload runs from the DW holding `cur`; it must fit cpl_size.
                let base = cur & !3;
                let mut cands = Vec::new();
                let mut e = (cur / rcb + 1).saturating_mul(rcb);
                while e < end && e - base <= size {
                    cands.push(e);
                    e = e.saturating_add(rcb);
                }
                if (end.saturating_add(3) & !3) - base <= size || cands.is_empty() {
                    cands.push(end);
                }
                // The first RCB boundary after `cur` always qualifies (the
                // `is_empty` fallback only matters at the top of the address
                // space), so `cands` is never empty.
                cands[self.split_rng.below(cands.len() as u64) as usize]
            }
        }
    }

    /// Picks the completion to drive from `at` on, if one is due.
    fn start_next_completion(&mut self, at: u64) {
        let due: Vec<usize> = (0..self.pending.len())
            .filter(|&i| self.pending[i].ready_at <= at && !self.pending[i].queue.is_empty())
            .collect();
        if due.is_empty() {
            return;
        }
        let pick = if self.cfg.reorder {
            due[self.reorder_rng.below(due.len() as u64) as usize]
        } else {
            due[0] // `pending` is in arrival order
        };
        let p = &mut self.pending[pick];
        if let Some((bytes, injected)) = p.queue.pop_front() {
            self.in_flight = Some(InFlight {
                id: p.id,
                injected,
                beats: to_beats(&bytes),
                bytes,
                next: 0,
            });
        }
    }

    fn rc_beat_taken(&mut self, cycle: u64) {
        let Some(f) = &mut self.in_flight else {
            return;
        };
        f.next += 1;
        if f.next < f.beats.len() {
            return;
        }
        let id = f.id;
        if f.injected {
            self.injected.push(self.log.len());
        }
        let bytes = std::mem::take(&mut f.bytes);
        self.in_flight = None;
        self.log.push(TlpLogEntry {
            cycle,
            dir: Direction::Rc,
            bytes,
        });
        self.completions_sent += 1;
        self.pending.retain(|p| p.id != id || !p.queue.is_empty());
    }

    /// Every TLP in both directions, in the order they completed.
    pub fn log(&self) -> &[TlpLogEntry] {
        &self.log
    }
    /// Problems with what the DUT sent (framing, unparsable TLPs).
    pub fn errors(&self) -> &[RootComplexError] {
        &self.errors
    }
    /// (cycle, tag) of each read the DUT gets no acceptable completion for
    /// (`Drop`, `BadByteCount`, `WrongRequester` faults): it must time out.
    pub fn dropped(&self) -> &[(u64, u8)] {
        &self.dropped
    }
    /// (cycle, first byte, kind) of every read a fault applied to.
    pub fn faults_met(&self) -> &[(u64, u64, FaultKind)] {
        &self.faults_met
    }
    /// Whether log entry `index` is a deliberately wrong completion (which
    /// the PCIe checker must not hold against the DUT).
    pub fn is_injected(&self, index: usize) -> bool {
        self.injected.binary_search(&index).is_ok()
    }
    /// Reads received whose completions are not all delivered (dropped reads
    /// excluded).
    pub fn outstanding(&self) -> usize {
        self.pending.len()
    }
    pub fn mrd_received(&self) -> u64 {
        self.mrd_received
    }
    /// Completion TLPs fully accepted by the DUT.
    pub fn completions_sent(&self) -> u64 {
        self.completions_sent
    }
    pub fn mwr_applied(&self) -> u64 {
        self.mwr_applied
    }
    /// A TLP is half-received on `rq_*` (e.g. at the end of a run).
    pub fn rq_in_progress(&self) -> bool {
        self.deframer.in_progress()
    }
}

/// Adds 4 to a completion's 12-bit Byte Count (bytes 6..8 of the header).
fn corrupt_byte_count(t: &mut [u8]) {
    let bc = (((t[6] as u16) & 0xF) << 8 | t[7] as u16).wrapping_add(4) & 0xFFF;
    t[6] = (t[6] & 0xF0) | (bc >> 8) as u8;
    t[7] = bc as u8;
}

/// Writes the enabled bytes of an MWr: First BE for payload DW 0, Last BE for
/// the last DW (a 1-DW write uses First BE only), all bytes in between.
fn apply_write(w: &TlpRepr, mem: &mut HostMemory) {
    let TlpRepr::MemWrite {
        address,
        first_be,
        last_be,
        data,
        ..
    } = w
    else {
        return;
    };
    let dws = data.len() / 4;
    for (i, dw) in data.chunks_exact(4).enumerate() {
        let be = match i {
            0 => *first_be,
            _ if i + 1 == dws => *last_be,
            _ => 0xF,
        };
        let base = address.wrapping_add(4 * i as u64);
        if be == 0xF {
            mem.write(base, dw);
            continue;
        }
        for (j, &b) in dw.iter().enumerate() {
            if be & (1 << j) != 0 {
                mem.write(base.wrapping_add(j as u64), &[b]);
            }
        }
    }
}

#[cfg(test)]
mod tests;
