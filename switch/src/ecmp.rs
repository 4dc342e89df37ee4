//! Forwarding: longest prefix match on the destination IP, then one port of
//! the route's ECMP group chosen by a hash of the 5-tuple.

use std::net::IpAddr;

use crate::config::Route;
use crate::parse::IpFrame;
use crate::rng::mix;

fn addr_bits(a: &IpAddr) -> u128 {
    match a {
        IpAddr::V4(v) => u32::from(*v) as u128,
        IpAddr::V6(v) => u128::from(*v),
    }
}

fn matches(r: &Route, dst: &IpAddr) -> bool {
    let width: u32 = match (r.dst, dst) {
        (IpAddr::V4(_), IpAddr::V4(_)) => 32,
        (IpAddr::V6(_), IpAddr::V6(_)) => 128,
        _ => return false,
    };
    let plen = (r.prefix as u32).min(width);
    if plen == 0 {
        return true;
    }
    let shift = width - plen;
    (addr_bits(&r.dst) >> shift) == (addr_bits(dst) >> shift)
}

/// The longest matching route; among equal prefixes the first listed.
pub fn lookup<'a>(routes: &'a [Route], dst: &IpAddr) -> Option<&'a Route> {
    let mut best: Option<&Route> = None;
    for r in routes.iter().filter(|r| matches(r, dst)) {
        if best.is_none_or(|b| r.prefix > b.prefix) {
            best = Some(r);
        }
    }
    best
}

/// FNV-1a (64-bit) over the seed (8 bytes, little-endian), source IP, then
/// destination IP (4 or 16 bytes each, network order), protocol (1 byte),
/// source and destination port (2 bytes each, network order), whitened by
/// SplitMix64's finaliser because FNV's low bits, which the modulo keeps,
/// are its weakest.
pub fn flow_hash(seed: u64, f: &IpFrame) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    eat(&seed.to_le_bytes());
    for a in [f.src, f.dst] {
        match a {
            IpAddr::V4(v) => eat(&v.octets()),
            IpAddr::V6(v) => eat(&v.octets()),
        }
    }
    eat(&[f.proto]);
    eat(&f.sport.to_be_bytes());
    eat(&f.dport.to_be_bytes());
    mix(h)
}

/// The egress port of a frame: `None` when no route matches.
pub fn egress(routes: &[Route], seed: u64, f: &IpFrame) -> Option<usize> {
    let r = lookup(routes, &f.dst)?;
    match r.ports.len() {
        0 => None,
        1 => Some(r.ports[0]),
        n => Some(r.ports[(flow_hash(seed, f) % n as u64) as usize]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn r(a: [u8; 4], prefix: u8, port: usize) -> Route {
        Route {
            dst: IpAddr::V4(Ipv4Addr::from(a)),
            prefix,
            ports: vec![port],
        }
    }

    #[test]
    fn longest_prefix_wins() {
        let routes = vec![
            r([0, 0, 0, 0], 0, 0),
            r([10, 0, 0, 0], 8, 1),
            r([10, 1, 0, 0], 16, 2),
        ];
        let at = |a: [u8; 4]| lookup(&routes, &IpAddr::V4(Ipv4Addr::from(a))).map(|r| r.ports[0]);
        assert_eq!(at([10, 1, 2, 3]), Some(2));
        assert_eq!(at([10, 2, 2, 3]), Some(1));
        assert_eq!(at([11, 0, 0, 1]), Some(0));
        let v6 = "::1".parse().unwrap();
        assert!(lookup(&routes, &v6).is_none());
    }
}
