//! RDMA Extended Transport Header (WRITE FIRST/ONLY, READ REQUEST).

use super::{be32, Result};

pub mod field {
    use super::super::Field;
    pub const VA: Field = 0..8;
    pub const RKEY: Field = 8..12;
    pub const DMA_LEN: Field = 12..16;
}
pub const HEADER_LEN: usize = 16;

header_view!(
    /// A RETH (16 bytes).
    Header,
    "RETH",
    HEADER_LEN
);

impl<T: AsRef<[u8]>> Header<T> {
    pub fn va(&self) -> u64 {
        u64::from_be_bytes(self.b()[field::VA].try_into().unwrap())
    }
    pub fn rkey(&self) -> u32 {
        be32(&self.b()[field::RKEY])
    }
    pub fn dma_len(&self) -> u32 {
        be32(&self.b()[field::DMA_LEN])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        Ok(Repr {
            va: h.va(),
            rkey: h.rkey(),
            dma_len: h.dma_len(),
        })
    }
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>) {
        let b = h.bm();
        b[field::VA].copy_from_slice(&self.va.to_be_bytes());
        b[field::RKEY].copy_from_slice(&self.rkey.to_be_bytes());
        b[field::DMA_LEN].copy_from_slice(&self.dma_len.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::super::RoceError;
    use super::*;

    /// VA 0x00007f0012345678, rkey 0xcafebabe, DMA length 5.
    const RETH: [u8; 16] = [
        0x00, 0x00, 0x7F, 0x00, 0x12, 0x34, 0x56, 0x78, 0xCA, 0xFE, 0xBA, 0xBE, 0x00, 0x00, 0x00,
        0x05,
    ];

    #[test]
    fn header_parses_and_emits() {
        let want = Repr {
            va: 0x7F00_1234_5678,
            rkey: 0xCAFE_BABE,
            dma_len: 5,
        };
        let h = Header::new_checked(&RETH[..]).unwrap();
        assert_eq!(Repr::parse(&h), Ok(want));
        let mut b = [0u8; 16];
        want.emit(&mut Header::new_unchecked(&mut b[..]));
        assert_eq!(b, RETH);
        assert_eq!(
            Header::new_checked(&RETH[..15]),
            Err(RoceError::Truncated {
                layer: "RETH",
                len: 15,
                need: 16
            })
        );
    }
}
