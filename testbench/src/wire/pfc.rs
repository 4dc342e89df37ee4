//! IEEE 802.1Qbb priority flow control frames (docs/protocol.md section 4), in the
//! style of [`super::roce`]: a [`Header`] view over the bytes with a
//! [`field`] module of byte ranges, and a [`Repr`] with `parse`/`emit`.
//!
//! ```text
//! dst 01:80:C2:00:00:01 | src | EtherType 0x8808 | opcode 0x0101 |
//! class-enable vector (16 bits, bit p = priority p) | 8 x pause time (16 bits) | zero pad to 60
//! ```
//!
//! Untagged (MAC control frames are not VLAN-tagged on the wire); all fields
//! big-endian; pause times in quanta of 512 bit times. This is the
//! testbench's own reading of the format; it shares no code with the model.

use thiserror::Error;

/// Why bytes are not a PFC frame.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum PfcError {
    #[error("PFC frame truncated: {0} bytes, it needs {FRAME_LEN}")]
    Truncated(usize),
    #[error("not a PFC frame: {what} is {value:#x}")]
    NotPfc { what: &'static str, value: u64 },
    #[error("class-enable vector {0:#06x} has bits above priority 7")]
    ReservedEnable(u16),
}

pub type Result<T> = core::result::Result<T, PfcError>;

pub mod field {
    use super::super::roce::Field;
    pub const DST: Field = 0..6;
    pub const SRC: Field = 6..12;
    pub const TYPE: Field = 12..14;
    pub const OPCODE: Field = 14..16;
    pub const CLASS_ENABLE: Field = 16..18;
    /// Priority p's pause time is at `TIMES.start + 2p`.
    pub const TIMES: Field = 18..34;
    /// Zero pad up to the minimum frame.
    pub const PAD: Field = 34..60;
}

/// Frame length without FCS (the minimum Ethernet frame).
pub const FRAME_LEN: usize = 60;
pub const DST_PFC: u64 = 0x0180_C200_0001;
pub const ETHERTYPE_MAC_CONTROL: u16 = 0x8808;
pub const OPCODE_PFC: u16 = 0x0101;

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn mac(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |m, &x| m << 8 | x as u64)
}

/// A view of a PFC frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Header<T> {
    pub fn new_unchecked(buffer: T) -> Self {
        Header { buffer }
    }
    /// Wraps bytes that hold at least [`FRAME_LEN`] bytes.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let len = buffer.as_ref().len();
        if len < FRAME_LEN {
            return Err(PfcError::Truncated(len));
        }
        Ok(Header { buffer })
    }
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    pub fn dst(&self) -> u64 {
        mac(&self.b()[field::DST])
    }
    pub fn src(&self) -> u64 {
        mac(&self.b()[field::SRC])
    }
    pub fn ethertype(&self) -> u16 {
        be16(&self.b()[field::TYPE])
    }
    pub fn opcode(&self) -> u16 {
        be16(&self.b()[field::OPCODE])
    }
    pub fn class_enable(&self) -> u16 {
        be16(&self.b()[field::CLASS_ENABLE])
    }
    /// Priority `p`'s pause time in quanta.
    pub fn time(&self, p: usize) -> u16 {
        be16(&self.b()[field::TIMES.start + 2 * p..])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Header<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    pub fn set_time(&mut self, p: usize, quanta: u16) {
        let at = field::TIMES.start + 2 * p;
        self.bm()[at..at + 2].copy_from_slice(&quanta.to_be_bytes());
    }
}

/// A parsed PFC frame (the destination MAC, EtherType and opcode are fixed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src: u64,
    /// Bit p = priority p's time applies.
    pub enable: u8,
    pub times: [u16; 8],
}

impl Repr {
    /// Checks EtherType, opcode and the reserved upper enable bits (a
    /// receiver takes any destination MAC, so that is not checked).
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        if h.ethertype() != ETHERTYPE_MAC_CONTROL {
            return Err(PfcError::NotPfc {
                what: "EtherType",
                value: h.ethertype() as u64,
            });
        }
        if h.opcode() != OPCODE_PFC {
            return Err(PfcError::NotPfc {
                what: "MAC control opcode",
                value: h.opcode() as u64,
            });
        }
        if h.class_enable() > 0xFF {
            return Err(PfcError::ReservedEnable(h.class_enable()));
        }
        Ok(Repr {
            src: h.src(),
            enable: h.class_enable() as u8,
            times: core::array::from_fn(|p| h.time(p)),
        })
    }

    /// Parses raw frame bytes (at least 60).
    pub fn parse_bytes(bytes: &[u8]) -> Result<Repr> {
        Repr::parse(&Header::new_checked(bytes)?)
    }

    /// Writes the whole frame, pad included, into the first [`FRAME_LEN`]
    /// bytes of `h`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>) {
        let b = h.bm();
        b[..FRAME_LEN].fill(0);
        b[field::DST].copy_from_slice(&DST_PFC.to_be_bytes()[2..]);
        b[field::SRC].copy_from_slice(&self.src.to_be_bytes()[2..]);
        b[field::TYPE].copy_from_slice(&ETHERTYPE_MAC_CONTROL.to_be_bytes());
        b[field::OPCODE].copy_from_slice(&OPCODE_PFC.to_be_bytes());
        b[field::CLASS_ENABLE].copy_from_slice(&(self.enable as u16).to_be_bytes());
        for (p, &t) in self.times.iter().enumerate() {
            h.set_time(p, t);
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut h = Header::new_unchecked(vec![0u8; FRAME_LEN]);
        self.emit(&mut h);
        h.buffer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Priorities 3 and 5 paused for 0xFFFF and 0x0010 quanta, from
    /// 02:00:00:00:00:07, written out by hand from the 802.1Qbb layout.
    const FRAME: &str = "0180c2000001 020000000007 8808 0101 0028
                         0000 0000 0000 ffff 0000 0010 0000 0000";

    #[test]
    fn parse_literal_bytes() {
        let mut f = hex(FRAME);
        f.resize(60, 0);
        let r = Repr::parse_bytes(&f).unwrap();
        assert_eq!(r.src, 0x0200_0000_0007);
        assert_eq!(r.enable, 0x28);
        assert_eq!(r.times, [0, 0, 0, 0xFFFF, 0, 0x10, 0, 0]);
        assert_eq!(Header::new_unchecked(&f).dst(), DST_PFC);
    }

    #[test]
    fn emit_gives_the_literal_bytes() {
        let r = Repr {
            src: 0x0200_0000_0007,
            enable: 0x28,
            times: [0, 0, 0, 0xFFFF, 0, 0x10, 0, 0],
        };
        let mut f = hex(FRAME);
        f.resize(60, 0);
        assert_eq!(r.to_bytes(), f);
    }

    #[test]
    fn rejects() {
        let mut f = hex(FRAME);
        f.resize(60, 0);
        assert_eq!(Repr::parse_bytes(&f[..59]), Err(PfcError::Truncated(59)));
        let mut g = f.clone();
        g[15] = 0x01 ^ 0x01; // opcode 0x0100
        assert!(matches!(
            Repr::parse_bytes(&g),
            Err(PfcError::NotPfc {
                what: "MAC control opcode",
                ..
            })
        ));
        let mut g = f.clone();
        g[16] = 0x01;
        assert_eq!(Repr::parse_bytes(&g), Err(PfcError::ReservedEnable(0x0128)));
        let mut g = f;
        g[13] = 0x00;
        assert!(matches!(
            Repr::parse_bytes(&g),
            Err(PfcError::NotPfc {
                what: "EtherType",
                ..
            })
        ));
    }
}
