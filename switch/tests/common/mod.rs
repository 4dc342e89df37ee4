//! Frame builders and a small fabric setup shared by the integration tests.
#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr};

use rnic_switch::{ipv4_checksum, Route, Switch, SwitchConfig};

/// Host k lives behind port k at 10.0.0.k.
pub fn host(k: usize) -> [u8; 4] {
    [10, 0, 0, k as u8]
}

pub fn config(ports: usize) -> SwitchConfig {
    let mut cfg = SwitchConfig::new(ports);
    cfg.routes = (0..ports)
        .map(|k| Route::host(IpAddr::V4(Ipv4Addr::from(host(k))), k))
        .collect();
    cfg
}

pub fn switch(cfg: SwitchConfig) -> Switch {
    Switch::new(cfg).expect("valid config")
}

/// An untagged IPv4/UDP frame of exactly `len` bytes (no FCS) to port 4791.
pub fn udp4(src: [u8; 4], dst: [u8; 4], sport: u16, dscp: u8, ecn: u8, len: usize) -> Vec<u8> {
    assert!(len >= 42);
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x01]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x02]);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = 14;
    f[ip] = 0x45;
    f[ip + 1] = (dscp << 2) | (ecn & 3);
    f[ip + 2..ip + 4].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    f[ip + 6] = 0x40;
    f[ip + 8] = 64;
    f[ip + 9] = 17;
    f[ip + 12..ip + 16].copy_from_slice(&src);
    f[ip + 16..ip + 20].copy_from_slice(&dst);
    let c = ipv4_checksum(&f[ip..ip + 20]);
    f[ip + 10..ip + 12].copy_from_slice(&c.to_be_bytes());
    let u = ip + 20;
    f[u..u + 2].copy_from_slice(&sport.to_be_bytes());
    f[u + 2..u + 4].copy_from_slice(&4791u16.to_be_bytes());
    f[u + 4..u + 6].copy_from_slice(&((len - u) as u16).to_be_bytes());
    f
}

/// A RoCE-like frame from host `from` to host `to` with DSCP `dscp`
/// (priority dscp >> 3 by default), ECT(0).
pub fn data(from: usize, to: usize, dscp: u8, len: usize) -> Vec<u8> {
    udp4(host(from), host(to), 49152, dscp, 2, len)
}

/// DSCP 26: priority 3, the default lossless RoCE class.
pub const ROCE: u8 = 26;

pub fn is_pfc(f: &[u8]) -> bool {
    f.len() >= 14 && f[12..14] == [0x88, 0x08]
}

/// (class-enable vector, pause time of `prio`) of a PFC frame.
pub fn pfc_of(f: &[u8], prio: usize) -> (u16, u16) {
    let cev = u16::from_be_bytes([f[16], f[17]]);
    let t = 18 + 2 * prio;
    (cev, u16::from_be_bytes([f[t], f[t + 1]]))
}
