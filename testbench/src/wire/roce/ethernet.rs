//! Ethernet II header with an optional 802.1Q tag.

use super::{be16, Result};

pub mod field {
    use super::super::Field;
    pub const DST: Field = 0..6;
    pub const SRC: Field = 6..12;
    /// The EtherType, or TPID 0x8100 when an 802.1Q tag follows.
    pub const TYPE: Field = 12..14;
    /// With a tag: PCP(3) DEI(1) VID(12).
    pub const TCI: Field = 14..16;
    /// With a tag: the EtherType.
    pub const INNER_TYPE: Field = 16..18;
}
pub const HEADER_LEN: usize = 14;
pub const TAG_LEN: usize = 4;
pub const TPID_8021Q: u16 = 0x8100;
pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;

header_view!(
    /// An Ethernet header (14 bytes, 18 with a tag).
    Header,
    "Ethernet",
    HEADER_LEN
);

/// MACs are 48-bit numbers, bits 47..40 the first byte on the wire.
fn mac(b: &[u8]) -> u64 {
    b.iter().fold(0, |m, &x| m << 8 | x as u64)
}

impl<T: AsRef<[u8]>> Header<T> {
    pub fn dst(&self) -> u64 {
        mac(&self.b()[field::DST])
    }
    pub fn src(&self) -> u64 {
        mac(&self.b()[field::SRC])
    }
    pub fn tagged(&self) -> bool {
        be16(&self.b()[field::TYPE]) == TPID_8021Q
    }
    pub fn header_len(&self) -> usize {
        HEADER_LEN + if self.tagged() { TAG_LEN } else { 0 }
    }
    /// The EtherType (after the tag, if any).
    pub fn ethertype(&self) -> u16 {
        if self.tagged() {
            be16(&self.b()[field::INNER_TYPE])
        } else {
            be16(&self.b()[field::TYPE])
        }
    }
    /// The tag's PCP, DEI and VID (call only when [`tagged`](Self::tagged)).
    pub fn tag(&self) -> VlanTag {
        let tci = be16(&self.b()[field::TCI]);
        VlanTag {
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            vid: tci & 0xFFF,
        }
    }
}

/// An 802.1Q tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanTag {
    pub pcp: u8,
    pub dei: bool,
    pub vid: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub dst: u64,
    pub src: u64,
    pub vlan: Option<VlanTag>,
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
        Ok(Repr {
            dst: h.dst(),
            src: h.src(),
            vlan: h.tagged().then(|| h.tag()),
        })
    }
    pub fn header_len(&self) -> usize {
        HEADER_LEN + if self.vlan.is_some() { TAG_LEN } else { 0 }
    }
    /// Writes the header (buffer at least [`header_len`](Self::header_len)).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, ethertype: u16) {
        let b = h.bm();
        b[field::DST].copy_from_slice(&self.dst.to_be_bytes()[2..]);
        b[field::SRC].copy_from_slice(&self.src.to_be_bytes()[2..]);
        let ty = match self.vlan {
            Some(t) => {
                b[field::TYPE].copy_from_slice(&TPID_8021Q.to_be_bytes());
                let tci = (t.pcp as u16 & 7) << 13 | (t.dei as u16) << 12 | t.vid & 0xFFF;
                b[field::TCI].copy_from_slice(&tci.to_be_bytes());
                field::INNER_TYPE
            }
            None => field::TYPE,
        };
        b[ty].copy_from_slice(&ethertype.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::super::RoceError;
    use super::*;

    /// 02:00:00:00:00:02 <- 02:00:00:00:00:01, 802.1Q tag PCP 3 DEI 0 VID
    /// 100 (TCI 0x6064), then IPv6.
    const TAGGED: [u8; 18] = [
        0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x81, 0x00, 0x60,
        0x64, 0x86, 0xDD,
    ];
    /// e4:1d:2d:ab:2b:c2 <- 7c:fe:90:64:3b:32, IPv4 (the captured CNP's).
    const UNTAGGED: [u8; 14] = [
        0xE4, 0x1D, 0x2D, 0xAB, 0x2B, 0xC2, 0x7C, 0xFE, 0x90, 0x64, 0x3B, 0x32, 0x08, 0x00,
    ];

    #[test]
    fn tagged_header_parses_and_emits() {
        let h = Header::new_checked(&TAGGED[..]).unwrap();
        assert!(h.tagged());
        assert_eq!((h.header_len(), h.ethertype()), (18, ETHERTYPE_IPV6));
        let r = Repr::parse(&h).unwrap();
        let tag = VlanTag {
            pcp: 3,
            dei: false,
            vid: 100,
        };
        assert_eq!(
            r,
            Repr {
                dst: 0x02_00_00_00_00_02,
                src: 0x02_00_00_00_00_01,
                vlan: Some(tag),
            }
        );
        assert_eq!(r.header_len(), 18);
        let mut b = [0u8; 18];
        r.emit(&mut Header::new_unchecked(&mut b[..]), ETHERTYPE_IPV6);
        assert_eq!(b, TAGGED);
    }

    #[test]
    fn untagged_header_parses_and_emits() {
        let h = Header::new_checked(&UNTAGGED[..]).unwrap();
        assert!(!h.tagged());
        assert_eq!((h.header_len(), h.ethertype()), (14, ETHERTYPE_IPV4));
        let r = Repr::parse(&h).unwrap();
        assert_eq!(
            r,
            Repr {
                dst: 0xE41D_2DAB_2BC2,
                src: 0x7CFE_9064_3B32,
                vlan: None,
            }
        );
        let mut b = [0u8; 14];
        r.emit(&mut Header::new_unchecked(&mut b[..]), ETHERTYPE_IPV4);
        assert_eq!(b, UNTAGGED);
    }

    #[test]
    fn tag_bits_and_truncation() {
        let mut b = TAGGED;
        b[14..16].copy_from_slice(&[0xDF, 0xFF]); // PCP 6, DEI 1, VID 0xfff
        let tag = Header::new_unchecked(&b[..]).tag();
        assert_eq!(
            tag,
            VlanTag {
                pcp: 6,
                dei: true,
                vid: 0xFFF
            }
        );
        assert_eq!(
            Header::new_checked(&UNTAGGED[..13]),
            Err(RoceError::Truncated {
                layer: "Ethernet",
                len: 13,
                need: 14
            })
        );
    }
}
