//! Independent checker of the NIC's PCIe traffic against docs/protocol.md section 5.
//!
//! Every NIC-to-host TLP goes through [`PcieChecker::check_request`], every
//! host-to-NIC completion through [`PcieChecker::check_completion`] (or both
//! through [`PcieChecker::check_log_entry`] in log order), and
//! [`PcieChecker::finish`] at the end reports reads never completed.
//!
//! Rules on requests (MRd/MWr), each with its own [`PcieViolation`]:
//! - only MRd and MWr, well formed (Fmt/Type, byte count matches Length);
//! - 3-DW header iff the address is below 4 GB;
//! - no digest (TD = 0) and not poisoned (EP = 0): this link carries no ECRC
//!   and the engines never forward poisoned data;
//! - First BE non-zero (the engines never issue zero-length requests);
//!   Length 1 -> Last BE = 0; Length >= 2 -> Last BE non-zero;
//! - byte enables contiguous: the enabled bytes of the whole request form one
//!   run. PCIe allows holes in First/Last BE for requests of up to 2 DW; the
//!   engines only ever move contiguous byte ranges, so this project forbids
//!   them (a stricter rule than the base specification);
//! - Length*4 <= MRRS for a read and <= MPS for a write (PCIe limits the
//!   Length field, so a 128-byte read from a non-DW-aligned address needs 33
//!   DW and breaks MRRS = 128);
//! - the DW range [address, address + Length*4) stays inside one 4 KB page;
//! - Requester ID equals the configured one;
//! - an MRd's tag is not outstanding: a tag is free again once its last
//!   completion (Byte Count covered) or a UR/CA completion was delivered, or
//!   after [`release_tag`](PcieChecker::release_tag), or — for a read the
//!   environment dropped ([`mark_dropped`](PcieChecker::mark_dropped)) — after
//!   the completion timeout.

use thiserror::Error;

use crate::env::{Direction, TlpLogEntry};
use crate::wire::{CplStatus, Tlp, TlpError, TlpKind, TlpRepr};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PcieCheckerConfig {
    /// The NIC's Requester ID.
    pub requester_id: u16,
    /// Max Read Request Size in bytes (128..=4096).
    pub mrrs: u32,
    /// Max Payload Size in bytes (128..=4096).
    pub mps: u32,
    /// The DUT's completion timeout in cycles, if known: a dropped read's tag
    /// may be reused only this many cycles after its MRd.
    pub cpl_timeout: Option<u64>,
}

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PcieViolation {
    #[error("malformed TLP: {0}")]
    Malformed(#[from] TlpError),
    #[error("the NIC sent a completion; only MRd and MWr may go to the host")]
    NotARequest,
    #[error("a request arrived on the completion side")]
    NotACompletion,
    #[error("4-DW header for address {0:#x} below 4 GB (must be 3-DW)")]
    FourDwBelow4G(u64),
    #[error("TD set: this link carries no TLP digest")]
    Digest,
    #[error("EP (poisoned) set on a request")]
    PoisonedRequest,
    #[error("First BE is 0")]
    FirstBeZero,
    #[error("Length 1 with Last BE {0:#x} (must be 0)")]
    LastBeNotZero(u8),
    #[error("Length {0} DW with Last BE 0")]
    LastBeZero(u16),
    #[error("byte enables First {first:#x} Last {last:#x} (Length {length_dw}) are not contiguous (project rule)")]
    BeNotContiguous { first: u8, last: u8, length_dw: u16 },
    #[error("MRd Length {length_dw} DW = {} B exceeds MRRS {mrrs} B", *length_dw as u32 * 4)]
    ReadTooLarge { length_dw: u16, mrrs: u32 },
    #[error("MWr Length {length_dw} DW = {} B exceeds MPS {mps} B", *length_dw as u32 * 4)]
    WriteTooLarge { length_dw: u16, mps: u32 },
    #[error("request at {address:#x} of {length_dw} DW crosses a 4 KB boundary")]
    Crosses4k { address: u64, length_dw: u16 },
    #[error("Requester ID {got:#06x}, configured {want:#06x}")]
    RequesterId { got: u16, want: u16 },
    #[error("tag {tag:#04x} reused while its read (cycle {since}) is outstanding")]
    TagInUse { tag: u8, since: u64 },
    #[error("tag {tag:#04x} of a dropped read (cycle {since}) reused at cycle {cycle}, before the {timeout}-cycle completion timeout")]
    TagReusedBeforeTimeout {
        tag: u8,
        since: u64,
        cycle: u64,
        timeout: u64,
    },
    #[error("completion for tag {0:#04x}, which has no outstanding read")]
    UnexpectedCompletion(u8),
    #[error("tag {tag:#04x} never completed (read issued at cycle {since})")]
    TagLeak { tag: u8, since: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Outstanding {
    since: u64,
    dropped: bool,
}

pub struct PcieChecker {
    cfg: PcieCheckerConfig,
    tags: [Option<Outstanding>; 256],
    requests: u64,
}

/// A run of ones within 4 bits (0b0110 yes, 0b0101 no, 0 no).
fn one_run(be: u8) -> bool {
    be != 0 && (be >> be.trailing_zeros()) & ((be >> be.trailing_zeros()) + 1) == 0
}

impl PcieChecker {
    pub fn new(cfg: PcieCheckerConfig) -> Self {
        PcieChecker {
            cfg,
            tags: [None; 256],
            requests: 0,
        }
    }

    /// Checks one NIC-to-host TLP seen at `cycle`; on an MRd whose tag passes
    /// the checks the tag becomes outstanding.
    pub fn check_request(&mut self, cycle: u64, bytes: &[u8]) -> Result<(), Vec<PcieViolation>> {
        self.requests += 1;
        let tlp = Tlp::new_checked(bytes).map_err(|e| vec![e.into()])?;
        let kind = tlp.kind().map_err(|e| vec![e.into()])?;
        if matches!(kind, TlpKind::Cpl | TlpKind::CplD) {
            return Err(vec![PcieViolation::NotARequest]);
        }
        let mut v = Vec::new();
        let (address, len) = (tlp.address(), tlp.length_dw());
        let (first, last) = (tlp.first_be(), tlp.last_be());
        if tlp.header_len() == 16 && address < 1 << 32 {
            v.push(PcieViolation::FourDwBelow4G(address));
        }
        if tlp.td() {
            v.push(PcieViolation::Digest);
        }
        if tlp.ep() {
            v.push(PcieViolation::PoisonedRequest);
        }
        if first == 0 {
            v.push(PcieViolation::FirstBeZero);
        }
        if len == 1 && last != 0 {
            v.push(PcieViolation::LastBeNotZero(last));
        }
        if len >= 2 && last == 0 {
            v.push(PcieViolation::LastBeZero(len));
        }
        // Contiguous: one run in a single DW; otherwise First BE runs up to
        // byte 3 and Last BE starts at byte 0 (inner DWs are all enabled).
        let contiguous = if len == 1 {
            first == 0 || one_run(first)
        } else {
            (first == 0 || one_run(first) && first & 0x8 != 0)
                && (last == 0 || one_run(last) && last & 0x1 != 0)
        };
        if !contiguous {
            v.push(PcieViolation::BeNotContiguous {
                first,
                last,
                length_dw: len,
            });
        }
        let bytes_dw = len as u32 * 4;
        match kind {
            TlpKind::MemRead if bytes_dw > self.cfg.mrrs => v.push(PcieViolation::ReadTooLarge {
                length_dw: len,
                mrrs: self.cfg.mrrs,
            }),
            TlpKind::MemWrite if bytes_dw > self.cfg.mps => v.push(PcieViolation::WriteTooLarge {
                length_dw: len,
                mps: self.cfg.mps,
            }),
            _ => {}
        }
        if (address & 0xFFF) + bytes_dw as u64 > 0x1000 {
            v.push(PcieViolation::Crosses4k {
                address,
                length_dw: len,
            });
        }
        if tlp.requester_id() != self.cfg.requester_id {
            v.push(PcieViolation::RequesterId {
                got: tlp.requester_id(),
                want: self.cfg.requester_id,
            });
        }
        if kind == TlpKind::MemRead {
            let tag = tlp.tag();
            match self.tags[tag as usize] {
                Some(o) if !o.dropped => v.push(PcieViolation::TagInUse {
                    tag,
                    since: o.since,
                }),
                Some(o) => match self.cfg.cpl_timeout {
                    Some(timeout) if cycle < o.since.saturating_add(timeout) => {
                        v.push(PcieViolation::TagReusedBeforeTimeout {
                            tag,
                            since: o.since,
                            cycle,
                            timeout,
                        })
                    }
                    _ => {}
                },
                None => {}
            }
            // Track the new read even after a violation, so that its own
            // completions are not reported as unexpected as well.
            self.tags[tag as usize] = Some(Outstanding {
                since: cycle,
                dropped: false,
            });
        }
        if v.is_empty() {
            Ok(())
        } else {
            Err(v)
        }
    }

    /// Accounts for one completion delivered to the NIC: its tag must be
    /// outstanding; the tag is released by the last completion of the read
    /// (Byte Count within this one's data) or by a failure status.
    pub fn check_completion(
        &mut self,
        _cycle: u64,
        bytes: &[u8],
    ) -> Result<(), Vec<PcieViolation>> {
        let repr = TlpRepr::parse_bytes(bytes).map_err(|e| vec![e.into()])?;
        let TlpRepr::Completion {
            status,
            byte_count,
            tag,
            ..
        } = repr
        else {
            return Err(vec![PcieViolation::NotACompletion]);
        };
        if self.tags[tag as usize].is_none() {
            return Err(vec![PcieViolation::UnexpectedCompletion(tag)]);
        }
        let carried = repr.completion_bytes().len();
        if status != CplStatus::Sc || carried >= byte_count as usize {
            self.tags[tag as usize] = None;
        }
        Ok(())
    }

    /// [`check_request`](Self::check_request) or
    /// [`check_completion`](Self::check_completion) by direction.
    pub fn check_log_entry(&mut self, e: &TlpLogEntry) -> Result<(), Vec<PcieViolation>> {
        match e.dir {
            Direction::Rq => self.check_request(e.cycle, &e.bytes),
            Direction::Rc => self.check_completion(e.cycle, &e.bytes),
        }
    }

    /// The environment will never complete the read with this tag (a `Drop`
    /// fault): it is no leak, and the tag may be reused once the DUT's
    /// completion timeout has passed (at once if no timeout is configured).
    /// Returns whether the tag was outstanding.
    pub fn mark_dropped(&mut self, tag: u8) -> bool {
        match &mut self.tags[tag as usize] {
            Some(o) => {
                o.dropped = true;
                true
            }
            None => false,
        }
    }

    /// Frees a tag unconditionally (the harness saw the DUT give up on it).
    /// Returns whether it was outstanding.
    pub fn release_tag(&mut self, tag: u8) -> bool {
        self.tags[tag as usize].take().is_some()
    }

    /// Tags with a read in flight (dropped ones included).
    pub fn outstanding(&self) -> usize {
        self.tags.iter().flatten().count()
    }

    /// Requests checked so far.
    pub fn requests_checked(&self) -> u64 {
        self.requests
    }

    /// End of run: every read not dropped must have completed.
    pub fn finish(&self) -> Result<(), Vec<PcieViolation>> {
        let leaks: Vec<_> = (0..=255u8)
            .filter_map(|tag| match self.tags[tag as usize] {
                Some(o) if !o.dropped => Some(PcieViolation::TagLeak {
                    tag,
                    since: o.since,
                }),
                _ => None,
            })
            .collect();
        if leaks.is_empty() {
            Ok(())
        } else {
            Err(leaks)
        }
    }
}

#[cfg(test)]
mod tests;
