//! Bytes on the wire: TLP encoding ([`tlp`]), RoCEv2 frames ([`roce`]), PFC
//! frames ([`pfc`]), the host-memory WQE, RECV WQE and CQE layouts ([`wqe`],
//! [`rqe`], [`cqe`])
//! and the beat framing used on the 512-bit `rq_*`/`rc_*` streams.
//!
//! Link convention: a TLP starts at byte 0 of a beat with `sop`; byte `i` of
//! a beat is `data.0[i]`; `keep` (bit `i` = byte `i` valid) is contiguous from
//! byte 0, all ones on every beat but the last, and the last beat has `eop`.

use rnic_model::ports::Beat;
use thiserror::Error;

/// Bytes too short for one of the host-memory layouts ([`wqe`], [`cqe`]).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("{layout} truncated: {len} bytes, it needs {need}")]
pub struct Truncated {
    pub layout: &'static str,
    pub len: usize,
    pub need: usize,
}

impl Truncated {
    fn check(layout: &'static str, len: usize, need: usize) -> Result<(), Truncated> {
        if len < need {
            return Err(Truncated { layout, len, need });
        }
        Ok(())
    }
}

/// The struct of a typed view over bytes and the constructors every view
/// shares: `new_checked` binds the buffer's length to `$n` and fails with
/// what `$check` returns.
macro_rules! byte_view {
    ($(#[$m:meta])* $name:ident, $err:ty, |$n:ident| $check:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name<T: AsRef<[u8]>> {
            buffer: T,
        }
        impl<T: AsRef<[u8]>> $name<T> {
            /// Wraps bytes without checking; accessors may panic on short buffers.
            pub fn new_unchecked(buffer: T) -> Self {
                Self { buffer }
            }
            /// Wraps bytes long enough for every accessor.
            pub fn new_checked(buffer: T) -> core::result::Result<Self, $err> {
                let $n = buffer.as_ref().len();
                $check?;
                Ok(Self { buffer })
            }
            pub fn into_inner(self) -> T {
                self.buffer
            }
            fn b(&self) -> &[u8] {
                self.buffer.as_ref()
            }
        }
        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            #[allow(dead_code)]
            fn bm(&mut self) -> &mut [u8] {
                self.buffer.as_mut()
            }
        }
    };
}

/// A `byte_view!` over a host-memory layout of `$len` bytes, with the
/// helpers its little-endian accessors share.
macro_rules! le_view {
    ($(#[$m:meta])* $name:ident, $layout:literal, $len:expr) => {
        byte_view!($(#[$m])* $name, super::Truncated, |len| super::Truncated::check($layout, len, $len));
        impl<T: AsRef<[u8]>> $name<T> {
            fn u32_at(&self, f: core::ops::Range<usize>) -> u32 {
                u32::from_le_bytes(self.b()[f].try_into().unwrap())
            }
            fn u64_at(&self, f: core::ops::Range<usize>) -> u64 {
                u64::from_le_bytes(self.b()[f].try_into().unwrap())
            }
        }
        impl<T: AsRef<[u8]> + AsMut<[u8]>> $name<T> {
            fn put(&mut self, f: core::ops::Range<usize>, v: &[u8]) {
                self.bm()[f].copy_from_slice(v);
            }
        }
    };
}

pub mod cqe;
pub mod pfc;
pub mod roce;
pub mod rqe;
pub mod tlp;
pub mod wqe;

pub use roce::{RoceError, RoceFrame, RoceRepr};
pub use tlp::{CplStatus, Tlp, TlpError, TlpKind, TlpRepr};

/// Bytes per beat of the 512-bit stream.
pub const BEAT_BYTES: usize = 64;

/// One beat of a TLP stream (the `valid` qualifier lives with the caller).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamBeat {
    pub data: Beat,
    pub keep: u64,
    pub sop: bool,
    pub eop: bool,
}

/// `keep` for the first `n` (1..=64) bytes.
pub fn keep_for(n: usize) -> u64 {
    if n >= BEAT_BYTES {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Splits TLP bytes into beats. An empty slice gives no beats.
pub fn to_beats(tlp: &[u8]) -> Vec<StreamBeat> {
    let n = tlp.len().div_ceil(BEAT_BYTES);
    tlp.chunks(BEAT_BYTES)
        .enumerate()
        .map(|(i, chunk)| {
            let mut data = Beat::default();
            data.0[..chunk.len()].copy_from_slice(chunk);
            StreamBeat {
                data,
                keep: keep_for(chunk.len()),
                sop: i == 0,
                eop: i + 1 == n,
            }
        })
        .collect()
}

/// A break of the stream protocol seen by [`Deframer::push`].
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum FrameError {
    #[error("beat without sop outside a TLP (keep {keep:#018x})")]
    DataWithoutSop { keep: u64 },
    #[error("sop inside a TLP, {bytes} bytes into it")]
    SopInsideTlp { bytes: usize },
    #[error("keep {0:#018x} is not contiguous from byte 0 (or is empty)")]
    NonContiguousKeep(u64),
    #[error("keep {0:#018x} is not all ones on a beat without eop")]
    PartialKeepNotLast(u64),
}

/// Collects accepted beats back into whole TLPs.
///
/// After a protocol error the TLP in progress and the offending beat are
/// discarded and the deframer waits for the next `sop`: a broken stream is a
/// test failure anyway, and resynchronising on `sop` keeps later reports
/// meaningful without guessing.
#[derive(Debug, Default, Clone)]
pub struct Deframer {
    buf: Vec<u8>,
    in_tlp: bool,
}

impl Deframer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one transferred beat; returns the TLP bytes when `eop` ends one.
    pub fn push(&mut self, beat: &StreamBeat) -> Result<Option<Vec<u8>>, FrameError> {
        let keep = beat.keep;
        // Contiguous from byte 0 <=> keep + 1 is a power of two (or wraps to 0).
        let contiguous = keep != 0 && keep & keep.wrapping_add(1) == 0;
        let err = if !contiguous {
            Some(FrameError::NonContiguousKeep(keep))
        } else if !beat.eop && keep != u64::MAX {
            Some(FrameError::PartialKeepNotLast(keep))
        } else if beat.sop && self.in_tlp {
            Some(FrameError::SopInsideTlp {
                bytes: self.buf.len(),
            })
        } else if !beat.sop && !self.in_tlp {
            Some(FrameError::DataWithoutSop { keep })
        } else {
            None
        };
        if let Some(e) = err {
            self.buf.clear();
            self.in_tlp = false;
            return Err(e);
        }
        self.in_tlp = true;
        let n = keep.trailing_ones() as usize;
        self.buf.extend_from_slice(&beat.data.0[..n]);
        if beat.eop {
            self.in_tlp = false;
            return Ok(Some(std::mem::take(&mut self.buf)));
        }
        Ok(None)
    }

    /// Whether a TLP has started and not ended (e.g. at the end of a run).
    pub fn in_progress(&self) -> bool {
        self.in_tlp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + 1) as u8).collect()
    }

    #[test]
    fn round_trip_sizes() {
        for n in [1, 12, 63, 64, 65, 128, 140, 4112] {
            let tlp = bytes(n);
            let beats = to_beats(&tlp);
            assert_eq!(beats.len(), n.div_ceil(64));
            assert!(beats[0].sop && beats.last().unwrap().eop);
            assert!(beats[..beats.len() - 1]
                .iter()
                .all(|b| b.keep == u64::MAX && !b.eop));
            let mut d = Deframer::new();
            let mut out = None;
            for b in &beats {
                out = d.push(b).unwrap();
            }
            assert_eq!(out.unwrap(), tlp);
            assert!(!d.in_progress());
        }
        assert!(to_beats(&[]).is_empty());
    }

    #[test]
    fn last_beat_keep_and_lanes() {
        let beats = to_beats(&bytes(70));
        assert_eq!(beats[1].keep, 0x3F);
        assert_eq!(beats[1].data.0[5], bytes(70)[69]);
        assert_eq!(beats[1].data.0[6], 0);
    }

    #[test]
    fn protocol_breaks() {
        let two = to_beats(&bytes(100));
        let mut d = Deframer::new();
        assert_eq!(
            d.push(&two[1]),
            Err(FrameError::DataWithoutSop { keep: two[1].keep })
        );
        d.push(&two[0]).unwrap();
        assert!(d.in_progress());
        assert_eq!(d.push(&two[0]), Err(FrameError::SopInsideTlp { bytes: 64 }));
        assert!(!d.in_progress());

        let mut holey = two[1];
        holey.keep = 0b1011;
        assert_eq!(d.push(&holey), Err(FrameError::NonContiguousKeep(0b1011)));
        let mut empty = two[1];
        empty.keep = 0;
        assert_eq!(d.push(&empty), Err(FrameError::NonContiguousKeep(0)));

        let mut short = two[0];
        short.keep = 0xFF;
        assert_eq!(d.push(&short), Err(FrameError::PartialKeepNotLast(0xFF)));

        // Resynchronises on the next sop.
        d.push(&two[0]).unwrap();
        assert_eq!(d.push(&two[1]).unwrap().unwrap(), bytes(100));
    }
}
