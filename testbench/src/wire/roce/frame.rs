//! A whole RoCEv2 frame: [`RoceFrame`], a view over its bytes that places
//! every header, and [`RoceRepr`], its parsed and checked form.

use super::{
    aeth, bth, ethernet, icrc, immdt, ipv4, ipv6, need, opcode_info, pad_cnt, reth, udp,
    OpcodeInfo, Payload, Result, RoceError, CNP_PAD_LEN, ICRC_LEN,
};

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
/// the opcode ([`OPCODES`](super::OPCODES)); `emit` panics when they do not match.
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
