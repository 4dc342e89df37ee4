//! UDP header of a RoCEv2 packet (destination port 4791).

use super::{be16, Result, RoceError};

pub mod field {
    use super::super::Field;
    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    /// Not computed (RoCEv2 sends 0); masked in the ICRC.
    pub const CHECKSUM: Field = 6..8;
}
pub const HEADER_LEN: usize = 8;
pub const ROCEV2_PORT: u16 = 4791;

header_view!(
    /// A UDP header (8 bytes).
    Header,
    "UDP",
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Header<T> {
    pub fn src_port(&self) -> u16 {
        be16(&self.b()[field::SRC_PORT])
    }
    pub fn dst_port(&self) -> u16 {
        be16(&self.b()[field::DST_PORT])
    }
    /// Header and data, in bytes.
    pub fn length(&self) -> u16 {
        be16(&self.b()[field::LENGTH])
    }
    pub fn checksum(&self) -> u16 {
        be16(&self.b()[field::CHECKSUM])
    }
}

/// The checksum is kept as found (this project sends 0), not verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub src_port: u16,
    pub checksum: u16,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        if h.dst_port() != ROCEV2_PORT {
            return Err(RoceError::NotRoce {
                what: "UDP destination port",
                value: h.dst_port() as u32,
            });
        }
        Ok(Repr {
            src_port: h.src_port(),
            checksum: h.checksum(),
        })
    }
    /// Writes the header for `payload_len` bytes after it, to port 4791.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, payload_len: usize) {
        let b = h.bm();
        b[field::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        b[field::DST_PORT].copy_from_slice(&ROCEV2_PORT.to_be_bytes());
        let len = u16::try_from(HEADER_LEN + payload_len).expect("UDP datagram too long");
        b[field::LENGTH].copy_from_slice(&len.to_be_bytes());
        b[field::CHECKSUM].copy_from_slice(&self.checksum.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0xc123 -> 4791, length 52, checksum 0.
    const ZERO_SUM: [u8; 8] = [0xC1, 0x23, 0x12, 0xB7, 0x00, 0x34, 0x00, 0x00];
    /// scapy's UC example: 0xc000 -> 4791, length 44, checksum 0xaca2.
    const WITH_SUM: [u8; 8] = [0xC0, 0x00, 0x12, 0xB7, 0x00, 0x2C, 0xAC, 0xA2];

    #[test]
    fn header_parses_and_emits() {
        for (bytes, src_port, len, checksum) in
            [(ZERO_SUM, 0xC123, 52, 0), (WITH_SUM, 0xC000, 44, 0xACA2)]
        {
            let h = Header::new_checked(&bytes[..]).unwrap();
            assert_eq!((h.dst_port(), h.length()), (ROCEV2_PORT, len));
            let r = Repr::parse(&h).unwrap();
            assert_eq!(r, Repr { src_port, checksum });
            let mut b = [0u8; 8];
            r.emit(&mut Header::new_unchecked(&mut b[..]), len as usize - 8);
            assert_eq!(b, bytes);
        }
    }

    #[test]
    fn parse_wants_port_4791() {
        let mut b = ZERO_SUM;
        b[3] = 0xB6;
        assert_eq!(
            Repr::parse(&Header::new_unchecked(&b[..])),
            Err(RoceError::NotRoce {
                what: "UDP destination port",
                value: 4790
            })
        );
        assert_eq!(
            Header::new_checked(&b[..7]),
            Err(RoceError::Truncated {
                layer: "UDP",
                len: 7,
                need: 8
            })
        );
    }
}
