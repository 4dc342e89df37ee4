//! RoCEv2 frames as bytes, in the style of smoltcp's `wire` module (and of
//! [`super::tlp`]): for every header a typed view over a byte buffer with a
//! `field` module of byte ranges, and a plain `Repr` with `parse`/`emit`;
//! then [`RoceFrame`], a view of a whole frame, and [`RoceRepr`], its parsed
//! form, whose `parse` checks everything a receiver would (and a little more:
//! this is what tells us the DUTs' frames are right).
//!
//! This is the testbench's own, independent reading of the frame layout of
//! `docs/tx_datapath.md` ("Packets") and docs/protocol.md (section 1); it
//! shares no code with the model. Only what RoCEv2 frames use is understood:
//! IPv4 without options or fragments, IPv6 without extension headers, UDP to
//! port 4791, and the RC/UC opcodes of [`OPCODES`] plus CNP.
//!
//! A frame is what is handed to the MAC: no FCS, and no padding to 60 bytes
//! (trailing bytes after the IP packet are an error). Every multi-byte
//! header field is big-endian; the ICRC is sent least significant byte first.
//!
//! ```text
//! Ethernet 14 B [802.1Q tag 4 B] | IPv4 20 B or IPv6 40 B | UDP 8 B | BTH 12 B
//! [RETH 16 B] [AETH 4 B] [ImmDt 4 B] [CNP reserved 16 B] | payload | PadCnt zero bytes | ICRC 4 B
//! ```
//!
//! One file per header ([`ethernet`], [`ipv4`], [`ipv6`], [`udp`], [`bth`],
//! [`reth`], [`aeth`], [`immdt`]), each with its tests on literal bytes;
//! then the opcode table, the ICRC, and the frame view and Repr, re-exported
//! here.
//!
//! Derived fields (EtherType, IP and UDP lengths, IPv4 checksum, PadCnt,
//! ICRC) are not in the `Repr`s: `emit` computes them (taking what the outer
//! layer knows as an argument) and `parse` checks them.

use thiserror::Error;

/// Why bytes are not a well-formed RoCEv2 frame.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum RoceError {
    #[error("{layer} truncated: {len} bytes left, it needs {need}")]
    Truncated {
        layer: &'static str,
        len: usize,
        need: usize,
    },
    #[error("not RoCEv2: {what} is {value:#x}")]
    NotRoce { what: &'static str, value: u32 },
    #[error("malformed {layer}: {what}")]
    Malformed {
        layer: &'static str,
        what: &'static str,
    },
    #[error("{field} says {header} bytes, the frame has {actual}")]
    BadLength {
        field: &'static str,
        header: usize,
        actual: usize,
    },
    #[error("bad IPv4 header checksum {stored:#06x}, computed {computed:#06x}")]
    BadIpv4Checksum { stored: u16, computed: u16 },
    #[error("unknown BTH opcode {0:#04x}")]
    UnknownOpcode(u8),
    #[error("bad PadCnt {pad_cnt} on {opcode} with {region} bytes of payload and pad: {what}")]
    BadPadCnt {
        opcode: &'static str,
        pad_cnt: u8,
        region: usize,
        what: &'static str,
    },
    /// Values are CRC register values (the 4 wire bytes read little-endian).
    #[error("bad ICRC {stored:#010x}, computed {computed:#010x}")]
    BadIcrc { stored: u32, computed: u32 },
}

pub type Result<T> = core::result::Result<T, RoceError>;

pub type Field = core::ops::Range<usize>;

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn be24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes(b[..4].try_into().unwrap())
}
fn put24(b: &mut [u8], v: u32) {
    b.copy_from_slice(&v.to_be_bytes()[1..]);
}

fn need(layer: &'static str, len: usize, need: usize) -> Result<()> {
    if len < need {
        return Err(RoceError::Truncated { layer, len, need });
    }
    Ok(())
}

/// A `byte_view!` (see `wire/mod.rs`) over a header of `$len` bytes or
/// more; a shorter buffer is [`RoceError::Truncated`].
macro_rules! header_view {
    ($(#[$m:meta])* $name:ident, $layer:literal, $len:expr) => {
        byte_view!($(#[$m])* $name, super::RoceError, |len| super::need($layer, len, $len));
    };
}

pub mod aeth;
pub mod bth;
pub mod ethernet;
pub mod immdt;
pub mod ipv4;
pub mod ipv6;
pub mod reth;
pub mod udp;

mod frame;
mod icrc;
mod opcodes;

pub use bth::pad_cnt;
pub use frame::{IpRepr, RoceFrame, RoceRepr};
pub use icrc::{icrc, ICRC_LEN};
pub use opcodes::{opcode_info, OpcodeInfo, Payload, CNP_PAD_LEN, OPCODES, OPCODE_CNP};

#[cfg(test)]
pub(crate) mod testdata;
