//! ACK Extended Transport Header (ACK, READ RESPONSE FIRST/LAST/ONLY).

use super::{be24, put24, Result};

pub mod field {
    use super::super::Field;
    pub const SYNDROME: usize = 0;
    pub const MSN: Field = 1..4;
}
pub const HEADER_LEN: usize = 4;

header_view!(
    /// An AETH (4 bytes).
    Header,
    "AETH",
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Header<T> {
    pub fn syndrome(&self) -> u8 {
        self.b()[field::SYNDROME]
    }
    pub fn msn(&self) -> u32 {
        be24(&self.b()[field::MSN])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub syndrome: u8,
    /// 24 bits.
    pub msn: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        Ok(Repr {
            syndrome: h.syndrome(),
            msn: h.msn(),
        })
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>) {
        let b = h.bm();
        b[field::SYNDROME] = self.syndrome;
        put24(&mut b[field::MSN], self.msn & 0xFF_FFFF);
    }
}

#[cfg(test)]
mod tests {
    use super::super::RoceError;
    use super::*;

    /// Syndrome 0x1f (ACK, credit field 31), MSN 0xabcdef.
    const AETH: [u8; 4] = [0x1F, 0xAB, 0xCD, 0xEF];

    #[test]
    fn header_parses_and_emits() {
        let want = Repr {
            syndrome: 0x1F,
            msn: 0xAB_CDEF,
        };
        let h = Header::new_checked(&AETH[..]).unwrap();
        assert_eq!(Repr::parse(&h), Ok(want));
        let mut b = [0u8; 4];
        want.emit(&mut Header::new_unchecked(&mut b[..]));
        assert_eq!(b, AETH);
        // The MSN is 24 bits: higher bits are not written.
        let wide = Repr {
            msn: 0x7FAB_CDEF,
            ..want
        };
        wide.emit(&mut Header::new_unchecked(&mut b[..]));
        assert_eq!(b, AETH);
        assert_eq!(
            Header::new_checked(&AETH[..3]),
            Err(RoceError::Truncated {
                layer: "AETH",
                len: 3,
                need: 4
            })
        );
    }
}
