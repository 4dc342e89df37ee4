//! RoCEv2 frames as bytes, in the style of smoltcp's `wire` module (and of
//! [`super::tlp`]): for every header a typed view over a byte buffer with a
//! `field` module of byte ranges, and a plain `Repr` with `parse`/`emit`;
//! then [`RoceFrame`], a view of a whole frame, and [`RoceRepr`], its parsed
//! form, whose `parse` checks everything a receiver would (and a little more:
//! this is what tells us the DUTs' frames are right).
//!
//! This is the testbench's own, independent reading of the frame layout of
//! `docs/tx_datapath.md` ("Packets") and the shared SPEC (section 1); it
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
//! Derived fields (EtherType, IP and UDP lengths, IPv4 checksum, PadCnt,
//! ICRC) are not in the `Repr`s: `emit` computes them (taking what the outer
//! layer knows as an argument) and `parse` checks them.

use std::net::{Ipv4Addr, Ipv6Addr};

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

/// The struct of a header view and the constructors every view shares.
macro_rules! header_view {
    ($(#[$m:meta])* $name:ident, $layer:literal, $len:expr) => {
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
            /// Wraps bytes that hold at least the fixed header.
            pub fn new_checked(buffer: T) -> super::Result<Self> {
                super::need($layer, buffer.as_ref().len(), $len)?;
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

pub mod ethernet {
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
}

pub mod ipv4 {
    //! IPv4 header without options.

    use super::{be16, Ipv4Addr, Result, RoceError};

    pub mod field {
        use super::super::Field;
        /// Version(4) IHL(4): 0x45.
        pub const VER_IHL: usize = 0;
        /// DSCP(6) ECN(2). Masked in the ICRC.
        pub const TOS: usize = 1;
        pub const TOTAL_LEN: Field = 2..4;
        pub const IDENT: Field = 4..6;
        /// Reserved(1) DF(1) MF(1) fragment offset(13).
        pub const FLAGS_FRAG: Field = 6..8;
        /// Masked in the ICRC.
        pub const TTL: usize = 8;
        pub const PROTOCOL: usize = 9;
        /// Masked in the ICRC.
        pub const CHECKSUM: Field = 10..12;
        pub const SRC: Field = 12..16;
        pub const DST: Field = 16..20;
    }
    pub const HEADER_LEN: usize = 20;
    pub const PROTOCOL_UDP: u8 = 17;

    header_view!(
        /// An IPv4 header (20 bytes).
        Header,
        "IPv4",
        HEADER_LEN
    );

    /// The Internet checksum (RFC 1071) of `b`: the ones' complement of the
    /// ones' complement sum of its 16-bit words.
    pub fn checksum(b: &[u8]) -> u16 {
        let mut sum: u32 = b
            .chunks(2)
            .map(|w| be16(&[w[0], w.get(1).copied().unwrap_or(0)]) as u32)
            .sum();
        while sum > 0xFFFF {
            sum = (sum & 0xFFFF) + (sum >> 16);
        }
        !(sum as u16)
    }

    impl<T: AsRef<[u8]>> Header<T> {
        pub fn version(&self) -> u8 {
            self.b()[field::VER_IHL] >> 4
        }
        /// Header length in 32-bit words.
        pub fn ihl(&self) -> u8 {
            self.b()[field::VER_IHL] & 0xF
        }
        pub fn dscp(&self) -> u8 {
            self.b()[field::TOS] >> 2
        }
        pub fn ecn(&self) -> u8 {
            self.b()[field::TOS] & 3
        }
        pub fn total_len(&self) -> u16 {
            be16(&self.b()[field::TOTAL_LEN])
        }
        pub fn ident(&self) -> u16 {
            be16(&self.b()[field::IDENT])
        }
        fn flags_frag(&self) -> u16 {
            be16(&self.b()[field::FLAGS_FRAG])
        }
        pub fn reserved_flag(&self) -> bool {
            self.flags_frag() & 0x8000 != 0
        }
        pub fn dont_frag(&self) -> bool {
            self.flags_frag() & 0x4000 != 0
        }
        pub fn more_frags(&self) -> bool {
            self.flags_frag() & 0x2000 != 0
        }
        pub fn frag_offset(&self) -> u16 {
            self.flags_frag() & 0x1FFF
        }
        pub fn ttl(&self) -> u8 {
            self.b()[field::TTL]
        }
        pub fn protocol(&self) -> u8 {
            self.b()[field::PROTOCOL]
        }
        pub fn checksum(&self) -> u16 {
            be16(&self.b()[field::CHECKSUM])
        }
        /// The checksum the header should carry (computed with the field 0).
        pub fn compute_checksum(&self) -> u16 {
            let mut h: [u8; HEADER_LEN] = self.b()[..HEADER_LEN].try_into().unwrap();
            h[field::CHECKSUM].fill(0);
            checksum(&h)
        }
        pub fn src(&self) -> Ipv4Addr {
            <[u8; 4]>::try_from(&self.b()[field::SRC]).unwrap().into()
        }
        pub fn dst(&self) -> Ipv4Addr {
            <[u8; 4]>::try_from(&self.b()[field::DST]).unwrap().into()
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Repr {
        pub src: Ipv4Addr,
        pub dst: Ipv4Addr,
        pub dscp: u8,
        pub ecn: u8,
        pub ident: u16,
        pub dont_frag: bool,
        pub ttl: u8,
    }

    impl Repr {
        /// Checks version, IHL 5, no fragment, protocol UDP and the checksum.
        pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
            let malformed = |what| RoceError::Malformed {
                layer: "IPv4",
                what,
            };
            if h.version() != 4 {
                return Err(malformed("version is not 4"));
            }
            if h.ihl() != 5 {
                return Err(malformed("IHL is not 5 (options are not supported)"));
            }
            if h.reserved_flag() {
                return Err(malformed("reserved flag set"));
            }
            if h.more_frags() || h.frag_offset() != 0 {
                return Err(malformed("a fragment"));
            }
            if h.protocol() != PROTOCOL_UDP {
                return Err(RoceError::NotRoce {
                    what: "IPv4 protocol",
                    value: h.protocol() as u32,
                });
            }
            if h.checksum() != h.compute_checksum() {
                return Err(RoceError::BadIpv4Checksum {
                    stored: h.checksum(),
                    computed: h.compute_checksum(),
                });
            }
            Ok(Repr {
                src: h.src(),
                dst: h.dst(),
                dscp: h.dscp(),
                ecn: h.ecn(),
                ident: h.ident(),
                dont_frag: h.dont_frag(),
                ttl: h.ttl(),
            })
        }
        /// Writes the header for `payload_len` bytes after it, with its checksum.
        pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, payload_len: usize) {
            let b = h.bm();
            b[field::VER_IHL] = 0x45;
            b[field::TOS] = self.dscp << 2 | self.ecn & 3;
            let total = u16::try_from(HEADER_LEN + payload_len).expect("IPv4 packet too long");
            b[field::TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
            b[field::IDENT].copy_from_slice(&self.ident.to_be_bytes());
            let flags: u16 = if self.dont_frag { 0x4000 } else { 0 };
            b[field::FLAGS_FRAG].copy_from_slice(&flags.to_be_bytes());
            b[field::TTL] = self.ttl;
            b[field::PROTOCOL] = PROTOCOL_UDP;
            b[field::SRC].copy_from_slice(&self.src.octets());
            b[field::DST].copy_from_slice(&self.dst.octets());
            let sum = h.compute_checksum();
            h.bm()[field::CHECKSUM].copy_from_slice(&sum.to_be_bytes());
        }
    }
}

pub mod ipv6 {
    //! IPv6 header without extension headers.

    use super::{be16, Ipv6Addr, Result, RoceError};

    pub mod field {
        use super::super::Field;
        /// Version(4) traffic class(8) flow label(20). All but the version
        /// are masked in the ICRC.
        pub const VER_TC_FLOW: Field = 0..4;
        pub const PAYLOAD_LEN: Field = 4..6;
        pub const NEXT_HEADER: usize = 6;
        /// Masked in the ICRC.
        pub const HOP_LIMIT: usize = 7;
        pub const SRC: Field = 8..24;
        pub const DST: Field = 24..40;
    }
    pub const HEADER_LEN: usize = 40;

    header_view!(
        /// An IPv6 header (40 bytes).
        Header,
        "IPv6",
        HEADER_LEN
    );

    impl<T: AsRef<[u8]>> Header<T> {
        fn first_word(&self) -> u32 {
            super::be32(&self.b()[field::VER_TC_FLOW])
        }
        pub fn version(&self) -> u8 {
            (self.first_word() >> 28) as u8
        }
        pub fn traffic_class(&self) -> u8 {
            (self.first_word() >> 20) as u8
        }
        pub fn flow_label(&self) -> u32 {
            self.first_word() & 0xF_FFFF
        }
        pub fn payload_len(&self) -> u16 {
            be16(&self.b()[field::PAYLOAD_LEN])
        }
        pub fn next_header(&self) -> u8 {
            self.b()[field::NEXT_HEADER]
        }
        pub fn hop_limit(&self) -> u8 {
            self.b()[field::HOP_LIMIT]
        }
        pub fn src(&self) -> Ipv6Addr {
            <[u8; 16]>::try_from(&self.b()[field::SRC]).unwrap().into()
        }
        pub fn dst(&self) -> Ipv6Addr {
            <[u8; 16]>::try_from(&self.b()[field::DST]).unwrap().into()
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Repr {
        pub src: Ipv6Addr,
        pub dst: Ipv6Addr,
        /// The traffic class is DSCP(6) ECN(2), as in IPv4.
        pub dscp: u8,
        pub ecn: u8,
        pub flow_label: u32,
        pub hop_limit: u8,
    }

    impl Repr {
        /// Checks the version and that UDP follows directly.
        pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
            if h.version() != 6 {
                return Err(RoceError::Malformed {
                    layer: "IPv6",
                    what: "version is not 6",
                });
            }
            if h.next_header() != super::ipv4::PROTOCOL_UDP {
                return Err(RoceError::NotRoce {
                    what: "IPv6 next header",
                    value: h.next_header() as u32,
                });
            }
            Ok(Repr {
                src: h.src(),
                dst: h.dst(),
                dscp: h.traffic_class() >> 2,
                ecn: h.traffic_class() & 3,
                flow_label: h.flow_label(),
                hop_limit: h.hop_limit(),
            })
        }
        /// Writes the header for `payload_len` bytes after it.
        pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, payload_len: usize) {
            let b = h.bm();
            let tc = (self.dscp << 2 | self.ecn & 3) as u32;
            let w = 6 << 28 | tc << 20 | self.flow_label & 0xF_FFFF;
            b[field::VER_TC_FLOW].copy_from_slice(&w.to_be_bytes());
            let len = u16::try_from(payload_len).expect("IPv6 payload too long");
            b[field::PAYLOAD_LEN].copy_from_slice(&len.to_be_bytes());
            b[field::NEXT_HEADER] = super::ipv4::PROTOCOL_UDP;
            b[field::HOP_LIMIT] = self.hop_limit;
            b[field::SRC].copy_from_slice(&self.src.octets());
            b[field::DST].copy_from_slice(&self.dst.octets());
        }
    }
}

pub mod udp {
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
}

pub mod bth {
    //! InfiniBand Base Transport Header.

    use super::{be16, be24, put24, Result, RoceError};

    pub mod field {
        use super::super::Field;
        pub const OPCODE: usize = 0;
        /// SE(1) M(1) PadCnt(2) TVer(4).
        pub const FLAGS: usize = 1;
        pub const PKEY: Field = 2..4;
        /// FECN(1) BECN(1) reserved(6). Masked in the ICRC.
        pub const FECN_BECN: usize = 4;
        pub const DEST_QP: Field = 5..8;
        /// AckReq(1) reserved(7).
        pub const ACK_REQ: usize = 8;
        pub const PSN: Field = 9..12;
    }
    pub const HEADER_LEN: usize = 12;

    header_view!(
        /// A BTH (12 bytes).
        Header,
        "BTH",
        HEADER_LEN
    );

    impl<T: AsRef<[u8]>> Header<T> {
        pub fn opcode(&self) -> u8 {
            self.b()[field::OPCODE]
        }
        pub fn se(&self) -> bool {
            self.b()[field::FLAGS] & 0x80 != 0
        }
        pub fn migreq(&self) -> bool {
            self.b()[field::FLAGS] & 0x40 != 0
        }
        pub fn pad_cnt(&self) -> u8 {
            (self.b()[field::FLAGS] >> 4) & 3
        }
        pub fn tver(&self) -> u8 {
            self.b()[field::FLAGS] & 0xF
        }
        pub fn pkey(&self) -> u16 {
            be16(&self.b()[field::PKEY])
        }
        pub fn fecn(&self) -> bool {
            self.b()[field::FECN_BECN] & 0x80 != 0
        }
        pub fn becn(&self) -> bool {
            self.b()[field::FECN_BECN] & 0x40 != 0
        }
        pub fn resv6(&self) -> u8 {
            self.b()[field::FECN_BECN] & 0x3F
        }
        pub fn dest_qp(&self) -> u32 {
            be24(&self.b()[field::DEST_QP])
        }
        pub fn ack_req(&self) -> bool {
            self.b()[field::ACK_REQ] & 0x80 != 0
        }
        pub fn resv7(&self) -> u8 {
            self.b()[field::ACK_REQ] & 0x7F
        }
        pub fn psn(&self) -> u32 {
            be24(&self.b()[field::PSN])
        }
    }

    /// PadCnt is derived from the payload length, so it is not here.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Repr {
        pub opcode: u8,
        pub se: bool,
        pub migreq: bool,
        pub pkey: u16,
        pub fecn: bool,
        pub becn: bool,
        /// 24 bits.
        pub dest_qp: u32,
        pub ack_req: bool,
        /// 24 bits.
        pub psn: u32,
    }

    impl Repr {
        /// Checks TVer 0 and the reserved bits 0 (our frames must have them
        /// so; a receiver would ignore the reserved bits).
        pub fn parse<T: AsRef<[u8]>>(h: &Header<T>) -> Result<Repr> {
            let malformed = |what| RoceError::Malformed { layer: "BTH", what };
            if h.tver() != 0 {
                return Err(malformed("TVer is not 0"));
            }
            if h.resv6() != 0 || h.resv7() != 0 {
                return Err(malformed("reserved bits set"));
            }
            Ok(Repr {
                opcode: h.opcode(),
                se: h.se(),
                migreq: h.migreq(),
                pkey: h.pkey(),
                fecn: h.fecn(),
                becn: h.becn(),
                dest_qp: h.dest_qp(),
                ack_req: h.ack_req(),
                psn: h.psn(),
            })
        }
        pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, h: &mut Header<T>, pad_cnt: u8) {
            let b = h.bm();
            b[field::OPCODE] = self.opcode;
            b[field::FLAGS] = (self.se as u8) << 7 | (self.migreq as u8) << 6 | (pad_cnt & 3) << 4;
            b[field::PKEY].copy_from_slice(&self.pkey.to_be_bytes());
            b[field::FECN_BECN] = (self.fecn as u8) << 7 | (self.becn as u8) << 6;
            put24(&mut b[field::DEST_QP], self.dest_qp & 0xFF_FFFF);
            b[field::ACK_REQ] = (self.ack_req as u8) << 7;
            put24(&mut b[field::PSN], self.psn & 0xFF_FFFF);
        }
    }
}

pub mod reth {
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
}

pub mod aeth {
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
}

pub mod immdt {
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
}

/// The CNP's reserved bytes after the BTH.
pub const CNP_PAD_LEN: usize = 16;
pub const ICRC_LEN: usize = 4;
pub const OPCODE_CNP: u8 = 0x81;

/// What payload an opcode carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Payload {
    /// None (READ REQUEST, ACK, CNP).
    None,
    /// A FIRST or MIDDLE packet: a whole path MTU, so never padded.
    Full,
    /// A LAST or ONLY packet: any length, padded to 4 bytes.
    Any,
}

/// One row of the opcode table: the headers after the BTH, in wire order
/// RETH, AETH, ImmDt (no opcode has both RETH and AETH), or CNP's 16
/// reserved bytes, then the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    pub opcode: u8,
    /// As in scapy's `scapy.contrib.roce` (and Wireshark, less the spaces).
    pub name: &'static str,
    pub reth: bool,
    pub aeth: bool,
    pub imm: bool,
    pub cnp_pad: bool,
    pub payload: Payload,
}

impl OpcodeInfo {
    /// Bytes of headers between the BTH and the payload.
    pub fn ext_len(&self) -> usize {
        self.reth as usize * reth::HEADER_LEN
            + self.aeth as usize * aeth::HEADER_LEN
            + self.imm as usize * immdt::HEADER_LEN
            + self.cnp_pad as usize * CNP_PAD_LEN
    }
}

const RETH: u8 = 1;
const AETH: u8 = 2;
const IMM: u8 = 4;
const CNP: u8 = 8;

const fn op(opcode: u8, name: &'static str, hdrs: u8, payload: Payload) -> OpcodeInfo {
    OpcodeInfo {
        opcode,
        name,
        reth: hdrs & RETH != 0,
        aeth: hdrs & AETH != 0,
        imm: hdrs & IMM != 0,
        cnp_pad: hdrs & CNP != 0,
        payload,
    }
}

use Payload::{Any, Full};

/// RC and UC opcodes (SPEC section 1; UC = RC | 0x20 where UC defines it)
/// and CNP.
pub const OPCODES: [OpcodeInfo; 31] = [
    op(0x00, "RC_SEND_FIRST", 0, Full),
    op(0x01, "RC_SEND_MIDDLE", 0, Full),
    op(0x02, "RC_SEND_LAST", 0, Any),
    op(0x03, "RC_SEND_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x04, "RC_SEND_ONLY", 0, Any),
    op(0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", IMM, Any),
    op(0x06, "RC_RDMA_WRITE_FIRST", RETH, Full),
    op(0x07, "RC_RDMA_WRITE_MIDDLE", 0, Full),
    op(0x08, "RC_RDMA_WRITE_LAST", 0, Any),
    op(0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x0A, "RC_RDMA_WRITE_ONLY", RETH, Any),
    op(0x0B, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMM, Any),
    op(0x0C, "RC_RDMA_READ_REQUEST", RETH, Payload::None),
    op(0x0D, "RC_RDMA_READ_RESPONSE_FIRST", AETH, Full),
    op(0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", 0, Full),
    op(0x0F, "RC_RDMA_READ_RESPONSE_LAST", AETH, Any),
    op(0x10, "RC_RDMA_READ_RESPONSE_ONLY", AETH, Any),
    op(0x11, "RC_ACKNOWLEDGE", AETH, Payload::None),
    op(0x20, "UC_SEND_FIRST", 0, Full),
    op(0x21, "UC_SEND_MIDDLE", 0, Full),
    op(0x22, "UC_SEND_LAST", 0, Any),
    op(0x23, "UC_SEND_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x24, "UC_SEND_ONLY", 0, Any),
    op(0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", IMM, Any),
    op(0x26, "UC_RDMA_WRITE_FIRST", RETH, Full),
    op(0x27, "UC_RDMA_WRITE_MIDDLE", 0, Full),
    op(0x28, "UC_RDMA_WRITE_LAST", 0, Any),
    op(0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", IMM, Any),
    op(0x2A, "UC_RDMA_WRITE_ONLY", RETH, Any),
    op(0x2B, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", RETH | IMM, Any),
    op(OPCODE_CNP, "CNP", CNP, Payload::None),
];

/// The table row of `opcode`, if it is one we know.
pub fn opcode_info(opcode: u8) -> Option<&'static OpcodeInfo> {
    OPCODES.iter().find(|o| o.opcode == opcode)
}

/// PadCnt for a payload of `len` bytes.
pub fn pad_cnt(len: usize) -> u8 {
    ((4 - len % 4) % 4) as u8
}

/// The ICRC of an IP packet (IP header to the last pad byte, without the
/// ICRC): CRC-32 (zlib's) over 8 bytes of 0xFF then the packet, with the
/// fields that routers may change replaced by ones. The value is the CRC
/// register; it goes on the wire least significant byte first.
///
/// `ip` must hold at least the IP, UDP and BTH headers.
pub fn icrc(ip: &[u8], ipv6: bool) -> u32 {
    let ip_len = if ipv6 {
        ipv6::HEADER_LEN
    } else {
        ipv4::HEADER_LEN
    };
    let udp = ip_len;
    let bth = udp + udp::HEADER_LEN;
    let mut head = ip[..bth + bth::HEADER_LEN].to_vec();
    if ipv6 {
        // Traffic class and flow label: all of the first word but the version.
        let w = ipv6::field::VER_TC_FLOW;
        head[w.start] |= 0x0F;
        head[w.start + 1..w.end].fill(0xFF);
        head[ipv6::field::HOP_LIMIT] = 0xFF;
    } else {
        head[ipv4::field::TOS] = 0xFF;
        head[ipv4::field::TTL] = 0xFF;
        head[ipv4::field::CHECKSUM].fill(0xFF);
    }
    let c = udp::field::CHECKSUM;
    head[udp + c.start..udp + c.end].fill(0xFF);
    head[bth + bth::field::FECN_BECN] = 0xFF;

    let mut h = crc32fast::Hasher::new();
    h.update(&[0xFF; 8]);
    h.update(&head);
    h.update(&ip[head.len()..]);
    h.finalize()
}

/// A read/write view of a whole RoCEv2 frame. The offsets of the inner
/// headers follow from the Ethernet tag, the EtherType and the opcode;
/// [`check_len`](Self::check_len) makes them safe to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoceFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> RoceFrame<T> {
    pub fn new_unchecked(buffer: T) -> RoceFrame<T> {
        RoceFrame { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<RoceFrame<T>> {
        let f = RoceFrame::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn ethernet(&self) -> ethernet::Header<&[u8]> {
        ethernet::Header::new_unchecked(self.b())
    }
    pub fn ip_offset(&self) -> usize {
        self.ethernet().header_len()
    }
    pub fn is_ipv6(&self) -> bool {
        self.ethernet().ethertype() == ethernet::ETHERTYPE_IPV6
    }
    pub fn udp_offset(&self) -> usize {
        self.ip_offset()
            + if self.is_ipv6() {
                ipv6::HEADER_LEN
            } else {
                ipv4::HEADER_LEN
            }
    }
    pub fn bth_offset(&self) -> usize {
        self.udp_offset() + udp::HEADER_LEN
    }
    pub fn ipv4(&self) -> ipv4::Header<&[u8]> {
        ipv4::Header::new_unchecked(&self.b()[self.ip_offset()..])
    }
    pub fn ipv6(&self) -> ipv6::Header<&[u8]> {
        ipv6::Header::new_unchecked(&self.b()[self.ip_offset()..])
    }
    pub fn udp(&self) -> udp::Header<&[u8]> {
        udp::Header::new_unchecked(&self.b()[self.udp_offset()..])
    }
    pub fn bth(&self) -> bth::Header<&[u8]> {
        bth::Header::new_unchecked(&self.b()[self.bth_offset()..])
    }
    /// The opcode's table row (`None` for an unknown opcode).
    pub fn info(&self) -> Option<&'static OpcodeInfo> {
        opcode_info(self.bth().opcode())
    }
    fn ext_offset(&self) -> usize {
        self.bth_offset() + bth::HEADER_LEN
    }
    pub fn reth(&self) -> Option<reth::Header<&[u8]>> {
        let at = self.ext_offset();
        self.info()?
            .reth
            .then(|| reth::Header::new_unchecked(&self.b()[at..]))
    }
    pub fn aeth(&self) -> Option<aeth::Header<&[u8]>> {
        let at = self.ext_offset();
        self.info()?
            .aeth
            .then(|| aeth::Header::new_unchecked(&self.b()[at..]))
    }
    pub fn immdt(&self) -> Option<immdt::Header<&[u8]>> {
        let info = self.info()?;
        let at = self.ext_offset() + info.reth as usize * reth::HEADER_LEN;
        info.imm
            .then(|| immdt::Header::new_unchecked(&self.b()[at..]))
    }
    /// The CNP's 16 reserved bytes (empty for other opcodes).
    pub fn cnp_pad(&self) -> &[u8] {
        match self.info() {
            Some(i) if i.cnp_pad => &self.b()[self.ext_offset()..self.payload_offset()],
            _ => &[],
        }
    }
    pub fn payload_offset(&self) -> usize {
        self.ext_offset() + self.info().map_or(0, OpcodeInfo::ext_len)
    }
    pub fn icrc_offset(&self) -> usize {
        self.b().len() - ICRC_LEN
    }
    /// Payload and pad bytes, between the headers and the ICRC.
    pub fn payload_and_pad(&self) -> &[u8] {
        &self.b()[self.payload_offset()..self.icrc_offset()]
    }
    /// The payload: [`payload_and_pad`](Self::payload_and_pad) less PadCnt
    /// bytes (all of it when PadCnt is larger).
    pub fn payload(&self) -> &[u8] {
        let r = self.payload_and_pad();
        &r[..r.len().saturating_sub(self.bth().pad_cnt() as usize)]
    }
    /// The ICRC the frame carries, as a CRC register value.
    pub fn icrc(&self) -> u32 {
        u32::from_le_bytes(self.b()[self.icrc_offset()..].try_into().unwrap())
    }
    /// The ICRC the frame should carry.
    pub fn compute_icrc(&self) -> u32 {
        icrc(
            &self.b()[self.ip_offset()..self.icrc_offset()],
            self.is_ipv6(),
        )
    }

    /// Checks that this is a RoCEv2 frame whose lengths all agree, so that
    /// no accessor can panic: Ethernet (tag) and IP headers present, IP and
    /// UDP lengths equal to what the frame holds, UDP to port 4791, a known
    /// opcode, and room for the BTH, the opcode's extension headers and the
    /// ICRC. Checksums and field values are [`RoceRepr::parse`]'s job.
    pub fn check_len(&self) -> Result<()> {
        let len = self.b().len();
        need("Ethernet", len, ethernet::HEADER_LEN)?;
        let e = self.ip_offset();
        need("802.1Q tag", len, e)?;
        let (ip_len, ip_payload) = match self.ethernet().ethertype() {
            ethernet::ETHERTYPE_IPV4 => {
                need("IPv4", len - e, ipv4::HEADER_LEN)?;
                let ip = self.ipv4();
                // Checked here, not only in the Repr: IHL places the UDP header.
                if ip.version() != 4 || ip.ihl() != 5 {
                    return Err(RoceError::Malformed {
                        layer: "IPv4",
                        what: "version/IHL is not 0x45 (options are not supported)",
                    });
                }
                if ip.total_len() as usize != len - e {
                    return Err(RoceError::BadLength {
                        field: "IPv4 total length",
                        header: ip.total_len() as usize,
                        actual: len - e,
                    });
                }
                (ipv4::HEADER_LEN, len - e - ipv4::HEADER_LEN)
            }
            ethernet::ETHERTYPE_IPV6 => {
                need("IPv6", len - e, ipv6::HEADER_LEN)?;
                let ip = self.ipv6();
                if ip.payload_len() as usize != len - e - ipv6::HEADER_LEN {
                    return Err(RoceError::BadLength {
                        field: "IPv6 payload length",
                        header: ip.payload_len() as usize,
                        actual: len - e - ipv6::HEADER_LEN,
                    });
                }
                (ipv6::HEADER_LEN, len - e - ipv6::HEADER_LEN)
            }
            other => {
                return Err(RoceError::NotRoce {
                    what: "EtherType",
                    value: other as u32,
                })
            }
        };
        let protocol = if self.is_ipv6() {
            self.ipv6().next_header()
        } else {
            self.ipv4().protocol()
        };
        if protocol != ipv4::PROTOCOL_UDP {
            return Err(RoceError::NotRoce {
                what: "IP protocol",
                value: protocol as u32,
            });
        }
        need("UDP", ip_payload, udp::HEADER_LEN)?;
        let u = self.udp();
        if u.length() as usize != ip_payload {
            return Err(RoceError::BadLength {
                field: "UDP length",
                header: u.length() as usize,
                actual: ip_payload,
            });
        }
        if u.dst_port() != udp::ROCEV2_PORT {
            return Err(RoceError::NotRoce {
                what: "UDP destination port",
                value: u.dst_port() as u32,
            });
        }
        let after_udp = ip_payload - udp::HEADER_LEN;
        need("BTH and ICRC", after_udp, bth::HEADER_LEN + ICRC_LEN)?;
        let info = self
            .info()
            .ok_or(RoceError::UnknownOpcode(self.bth().opcode()))?;
        need(
            "extension headers and ICRC",
            after_udp,
            bth::HEADER_LEN + info.ext_len() + ICRC_LEN,
        )?;
        debug_assert_eq!(e + ip_len + udp::HEADER_LEN, self.bth_offset());
        Ok(())
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> RoceFrame<T> {
    /// Writes the ICRC computed over the frame into its last 4 bytes.
    pub fn fill_icrc(&mut self) {
        let crc = self.compute_icrc();
        let at = self.icrc_offset();
        self.buffer.as_mut()[at..].copy_from_slice(&crc.to_le_bytes());
    }
}

/// IPv4 or IPv6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpRepr {
    V4(ipv4::Repr),
    V6(ipv6::Repr),
}

impl IpRepr {
    pub fn header_len(&self) -> usize {
        match self {
            IpRepr::V4(_) => ipv4::HEADER_LEN,
            IpRepr::V6(_) => ipv6::HEADER_LEN,
        }
    }
}

/// A parsed RoCEv2 frame. Which extension headers are present follows from
/// the opcode ([`OPCODES`]); `emit` panics when they do not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoceRepr {
    pub eth: ethernet::Repr,
    pub ip: IpRepr,
    pub udp: udp::Repr,
    pub bth: bth::Repr,
    pub reth: Option<reth::Repr>,
    pub aeth: Option<aeth::Repr>,
    pub imm: Option<u32>,
    /// Without the pad.
    pub payload: Vec<u8>,
}

impl RoceRepr {
    /// Parses and checks a frame: the structure ([`RoceFrame::check_len`]),
    /// then the ICRC (first, so that a damaged frame is reported as such
    /// rather than by some field it happens to break), then every header:
    /// IPv4 checksum, reserved bits, the CNP's zero bytes, and PadCnt
    /// (payload and pad a multiple of 4, zero pad bytes, no pad on
    /// FIRST/MIDDLE, nothing at all after the headers of an opcode without
    /// payload).
    pub fn parse<T: AsRef<[u8]>>(f: &RoceFrame<T>) -> Result<RoceRepr> {
        f.check_len()?;
        let (stored, computed) = (f.icrc(), f.compute_icrc());
        if stored != computed {
            return Err(RoceError::BadIcrc { stored, computed });
        }
        let eth = ethernet::Repr::parse(&f.ethernet())?;
        let ip = if f.is_ipv6() {
            IpRepr::V6(ipv6::Repr::parse(&f.ipv6())?)
        } else {
            IpRepr::V4(ipv4::Repr::parse(&f.ipv4())?)
        };
        let udp = udp::Repr::parse(&f.udp())?;
        let bth = bth::Repr::parse(&f.bth())?;
        let info = f.info().expect("checked by check_len");
        if f.cnp_pad().iter().any(|&b| b != 0) {
            return Err(RoceError::Malformed {
                layer: "CNP",
                what: "reserved bytes after the BTH are not zero",
            });
        }
        let region = f.payload_and_pad();
        let pad = f.bth().pad_cnt();
        let bad_pad = |what| RoceError::BadPadCnt {
            opcode: info.name,
            pad_cnt: pad,
            region: region.len(),
            what,
        };
        match info.payload {
            Payload::None if !region.is_empty() || pad != 0 => {
                return Err(bad_pad("this opcode carries no payload"))
            }
            Payload::Full if pad != 0 => {
                return Err(bad_pad("FIRST/MIDDLE packets are not padded"))
            }
            _ => {}
        }
        if !region.len().is_multiple_of(4) {
            return Err(bad_pad("payload and pad are not a multiple of 4 bytes"));
        }
        if pad as usize > region.len() {
            return Err(bad_pad("more pad than bytes"));
        }
        if region[region.len() - pad as usize..]
            .iter()
            .any(|&b| b != 0)
        {
            return Err(bad_pad("pad bytes are not zero"));
        }
        Ok(RoceRepr {
            eth,
            ip,
            udp,
            bth,
            reth: f.reth().map(|h| reth::Repr::parse(&h)).transpose()?,
            aeth: f.aeth().map(|h| aeth::Repr::parse(&h)).transpose()?,
            imm: f
                .immdt()
                .map(|h| immdt::Repr::parse(&h).map(|r| r.imm))
                .transpose()?,
            payload: f.payload().to_vec(),
        })
    }

    /// Parses raw frame bytes.
    pub fn parse_bytes(bytes: &[u8]) -> Result<RoceRepr> {
        RoceRepr::parse(&RoceFrame::new_unchecked(bytes))
    }

    /// The opcode's table row; panics when the opcode is unknown or the
    /// extension headers do not match it.
    fn info(&self) -> &'static OpcodeInfo {
        let info = opcode_info(self.bth.opcode)
            .unwrap_or_else(|| panic!("unknown opcode {:#04x}", self.bth.opcode));
        assert_eq!(
            (self.reth.is_some(), self.aeth.is_some(), self.imm.is_some()),
            (info.reth, info.aeth, info.imm),
            "{}: (RETH, AETH, ImmDt) present must match the opcode",
            info.name
        );
        assert!(
            info.payload != Payload::None || self.payload.is_empty(),
            "{} carries no payload",
            info.name
        );
        info
    }

    fn bth_offset(&self) -> usize {
        self.eth.header_len() + self.ip.header_len() + udp::HEADER_LEN
    }

    /// Frame length: headers, payload, pad and ICRC.
    pub fn buffer_len(&self) -> usize {
        let p = self.payload.len();
        self.bth_offset()
            + bth::HEADER_LEN
            + self.info().ext_len()
            + p
            + pad_cnt(p) as usize
            + ICRC_LEN
    }

    /// Writes the frame, ICRC included, into `f`, whose buffer must be
    /// exactly [`buffer_len`](Self::buffer_len) bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, f: &mut RoceFrame<T>) {
        let info = self.info();
        let len = self.buffer_len();
        let b = f.buffer.as_mut();
        assert_eq!(b.len(), len, "buffer is not buffer_len() bytes");
        b.fill(0);
        let ip_at = self.eth.header_len();
        let udp_at = ip_at + self.ip.header_len();
        let bth_at = self.bth_offset();
        let (ethertype, ip_payload) = match self.ip {
            IpRepr::V4(_) => (ethernet::ETHERTYPE_IPV4, len - ip_at - ipv4::HEADER_LEN),
            IpRepr::V6(_) => (ethernet::ETHERTYPE_IPV6, len - ip_at - ipv6::HEADER_LEN),
        };
        self.eth
            .emit(&mut ethernet::Header::new_unchecked(&mut b[..]), ethertype);
        match &self.ip {
            IpRepr::V4(r) => r.emit(
                &mut ipv4::Header::new_unchecked(&mut b[ip_at..]),
                ip_payload,
            ),
            IpRepr::V6(r) => r.emit(
                &mut ipv6::Header::new_unchecked(&mut b[ip_at..]),
                ip_payload,
            ),
        }
        self.udp.emit(
            &mut udp::Header::new_unchecked(&mut b[udp_at..]),
            ip_payload - udp::HEADER_LEN,
        );
        let pad = pad_cnt(self.payload.len());
        self.bth
            .emit(&mut bth::Header::new_unchecked(&mut b[bth_at..]), pad);
        let mut at = bth_at + bth::HEADER_LEN;
        if let Some(r) = &self.reth {
            r.emit(&mut reth::Header::new_unchecked(&mut b[at..]));
            at += reth::HEADER_LEN;
        }
        if let Some(r) = &self.aeth {
            r.emit(&mut aeth::Header::new_unchecked(&mut b[at..]));
            at += aeth::HEADER_LEN;
        }
        if let Some(imm) = self.imm {
            immdt::Repr { imm }.emit(&mut immdt::Header::new_unchecked(&mut b[at..]));
            at += immdt::HEADER_LEN;
        }
        if info.cnp_pad {
            at += CNP_PAD_LEN; // already zero
        }
        b[at..at + self.payload.len()].copy_from_slice(&self.payload);
        // The pad bytes are already zero.
        f.fill_icrc();
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut f = RoceFrame::new_unchecked(vec![0u8; self.buffer_len()]);
        self.emit(&mut f);
        f.into_inner()
    }
}

#[cfg(test)]
mod tests;
