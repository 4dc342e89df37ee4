//! Immediate data header (the +Imm opcodes' LAST/ONLY packets).

use super::{be32, Result};

pub mod field {
    use super::super::Field;
    pub const IMM: Field = 0..4;
}
pub const HEADER_LEN: usize = 4;

header_view!(
    /// An ImmDt (4 bytes).
    Header,
    "ImmDt",
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Header<T> {
    pub fn imm(&self) -> u32 {
        be32(&self.b()[field::IMM])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub imm: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        Ok(Repr { imm: h.imm() })
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>) {
        h.bm()[field::IMM].copy_from_slice(&self.imm.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::super::RoceError;
    use super::*;

    #[test]
    fn header_parses_and_emits_in_network_order() {
        let bytes = [0xDE, 0xAD, 0xBE, 0xEF];
        let h = Header::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&h), Ok(Repr { imm: 0xDEAD_BEEF }));
        let mut b = [0u8; 4];
        Repr { imm: 0xDEAD_BEEF }.emit(&mut Header::new_unchecked(&mut b[..]));
        assert_eq!(b, bytes);
        assert_eq!(
            Header::new_checked(&bytes[..3]),
            Err(RoceError::Truncated {
                layer: "ImmDt",
                len: 3,
                need: 4
            })
        );
    }
}
