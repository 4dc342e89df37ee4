//! Reading the few header fields the switch acts on, and the two rewrites it
//! makes (CE marking, PFC frames of its own). Every read is bounds-checked:
//! a frame is arbitrary bytes until proven otherwise.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

const TPID: u16 = 0x8100;
const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86DD;
const ETH_MAC_CONTROL: u16 = 0x8808;
const PFC_OPCODE: u16 = 0x0101;
pub const PFC_DST: [u8; 6] = [0x01, 0x80, 0xC2, 0x00, 0x00, 0x01];
/// The minimum frame without FCS; shorter frames are padded with zeros.
pub const MIN_FRAME: usize = 60;

/// Where the ECN bits live, so marking can rewrite them in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnAt {
    /// IPv4 header at this offset: ECN in byte 1, checksum in bytes 10-11.
    V4(usize),
    /// IPv6 header at this offset: ECN in bits 5:4 of byte 1.
    V6(usize),
}

/// What the switch needs of a data frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpFrame {
    pub prio: usize,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub proto: u8,
    pub sport: u16,
    pub dport: u16,
    pub ecn: u8,
    pub ecn_at: EcnAt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    Data(IpFrame),
    /// A PFC frame: class-enable vector and the eight pause times.
    Pfc {
        enable: u8,
        quanta: [u16; 8],
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformed {
    Truncated,
    UnknownEtherType,
    BadIpHeader,
    NotPfc,
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Parses a frame as received (without FCS, padded or not).
/// `dscp_prio` maps an untagged frame's DSCP to its priority.
pub fn parse(f: &[u8], dscp_prio: &[u8; 64]) -> Result<Parsed, Malformed> {
    use Malformed::*;
    let mut et = be16(f, 12).ok_or(Truncated)?;
    let mut off = 14;
    let mut pcp = None;
    if et == TPID {
        let tci = be16(f, 14).ok_or(Truncated)?;
        pcp = Some((tci >> 13) as usize);
        et = be16(f, 16).ok_or(Truncated)?;
        off = 18;
    }
    match et {
        ETH_MAC_CONTROL => parse_pfc(f, off),
        ETH_IPV4 => {
            let h = f.get(off..off + 20).ok_or(Truncated)?;
            let ihl = (h[0] & 0x0f) as usize * 4;
            if h[0] >> 4 != 4 || ihl < 20 {
                return Err(BadIpHeader);
            }
            if f.len() < off + ihl {
                return Err(Truncated);
            }
            let proto = h[9];
            let (sport, dport) = ports(f, off + ihl, proto)?;
            let dscp = h[1] >> 2;
            Ok(Parsed::Data(IpFrame {
                prio: pcp.unwrap_or(dscp_prio[dscp as usize] as usize & 7),
                src: IpAddr::V4(Ipv4Addr::new(h[12], h[13], h[14], h[15])),
                dst: IpAddr::V4(Ipv4Addr::new(h[16], h[17], h[18], h[19])),
                proto,
                sport,
                dport,
                ecn: h[1] & 3,
                ecn_at: EcnAt::V4(off),
            }))
        }
        ETH_IPV6 => {
            let h = f.get(off..off + 40).ok_or(Truncated)?;
            if h[0] >> 4 != 6 {
                return Err(BadIpHeader);
            }
            let tc = (h[0] << 4) | (h[1] >> 4);
            let proto = h[6];
            let (sport, dport) = ports(f, off + 40, proto)?;
            let mut s = [0u8; 16];
            let mut d = [0u8; 16];
            s.copy_from_slice(&h[8..24]);
            d.copy_from_slice(&h[24..40]);
            Ok(Parsed::Data(IpFrame {
                prio: pcp.unwrap_or(dscp_prio[(tc >> 2) as usize] as usize & 7),
                src: IpAddr::V6(Ipv6Addr::from(s)),
                dst: IpAddr::V6(Ipv6Addr::from(d)),
                proto,
                sport,
                dport,
                ecn: tc & 3,
                ecn_at: EcnAt::V6(off),
            }))
        }
        _ => Err(UnknownEtherType),
    }
}

/// UDP and TCP carry the ports ECMP hashes on; other protocols hash as 0, 0.
fn ports(f: &[u8], l4: usize, proto: u8) -> Result<(u16, u16), Malformed> {
    match proto {
        6 | 17 => Ok((
            be16(f, l4).ok_or(Malformed::Truncated)?,
            be16(f, l4 + 2).ok_or(Malformed::Truncated)?,
        )),
        _ => Ok((0, 0)),
    }
}

fn parse_pfc(f: &[u8], off: usize) -> Result<Parsed, Malformed> {
    if f.get(0..6) != Some(&PFC_DST[..]) || be16(f, off) != Some(PFC_OPCODE) {
        return Err(Malformed::NotPfc);
    }
    let cev = be16(f, off + 2).ok_or(Malformed::Truncated)?;
    let mut quanta = [0u16; 8];
    for (p, q) in quanta.iter_mut().enumerate() {
        *q = be16(f, off + 4 + 2 * p).ok_or(Malformed::Truncated)?;
    }
    // The upper byte of the class-enable vector is reserved and ignored.
    Ok(Parsed::Pfc {
        enable: cev as u8,
        quanta,
    })
}

/// Sets ECN to CE (11) in place. The IPv4 checksum is updated incrementally
/// (RFC 1624, eqn. 3) so a frame that arrived with a bad checksum keeps it
/// bad rather than being silently repaired.
pub fn mark_ce(f: &mut [u8], at: EcnAt) {
    match at {
        EcnAt::V4(o) => {
            if f.len() < o + 12 {
                return;
            }
            let old = u16::from_be_bytes([f[o], f[o + 1]]);
            f[o + 1] |= 3;
            let new = u16::from_be_bytes([f[o], f[o + 1]]);
            let hc = u16::from_be_bytes([f[o + 10], f[o + 11]]);
            let mut sum = (!hc as u32) + (!old as u32) + new as u32;
            while sum > 0xffff {
                sum = (sum & 0xffff) + (sum >> 16);
            }
            let hc = !(sum as u16);
            f[o + 10..o + 12].copy_from_slice(&hc.to_be_bytes());
        }
        EcnAt::V6(o) => {
            if let Some(b) = f.get_mut(o + 1) {
                *b |= 0x30;
            }
        }
    }
}

/// A PFC frame for one priority: XOFF with `quanta`, or XON with 0.
pub fn pfc_frame(src: [u8; 6], prio: usize, quanta: u16) -> Vec<u8> {
    let mut f = vec![0u8; MIN_FRAME];
    f[0..6].copy_from_slice(&PFC_DST);
    f[6..12].copy_from_slice(&src);
    f[12..14].copy_from_slice(&ETH_MAC_CONTROL.to_be_bytes());
    f[14..16].copy_from_slice(&PFC_OPCODE.to_be_bytes());
    f[16..18].copy_from_slice(&(1u16 << (prio & 7)).to_be_bytes());
    let t = 18 + 2 * (prio & 7);
    f[t..t + 2].copy_from_slice(&quanta.to_be_bytes());
    f
}

/// The standard IPv4 header checksum over `h` (checksum field included:
/// a valid header sums to 0).
pub fn ipv4_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        let w = u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]);
        sum += w as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4_header(tos: u8) -> Vec<u8> {
        let mut h = vec![
            0x45, tos, 0, 60, 0x12, 0x34, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        let c = ipv4_checksum(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        h
    }

    #[test]
    fn ce_keeps_ipv4_checksum_valid() {
        // ECT(0) = 10 with DSCP 26: TOS 0x6a; CE makes it 0x6b.
        let mut f = vec![0u8; 14];
        f[12] = 0x08;
        f.extend(v4_header(0x6a));
        mark_ce(&mut f, EcnAt::V4(14));
        assert_eq!(f[15], 0x6b);
        // A valid header, checksum included, sums to all ones: result 0.
        assert_eq!(ipv4_checksum(&f[14..34]), 0);
        assert_eq!(&f[14..34], &v4_header(0x6b)[..]);
    }

    #[test]
    fn ipv6_ce_spans_traffic_class() {
        // Traffic class 0x69 (DSCP 26, ECT(1)): bytes 0x66, 0x90.
        let mut f = vec![0u8; 54];
        f[14] = 0x66;
        f[15] = 0x90;
        mark_ce(&mut f, EcnAt::V6(14));
        assert_eq!((f[14], f[15]), (0x66, 0xb0));
    }

    #[test]
    fn pfc_round_trip() {
        let f = pfc_frame([2, 0, 0, 0, 0, 1], 3, 0xffff);
        assert_eq!(f.len(), 60);
        let p = parse(&f, &[0; 64]).unwrap();
        let mut q = [0; 8];
        q[3] = 0xffff;
        assert_eq!(
            p,
            Parsed::Pfc {
                enable: 8,
                quanta: q
            }
        );
    }
}
