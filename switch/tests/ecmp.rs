//! ECMP on the 5-tuple (docs/switch.md, "Forwarding").
mod common;
use common::*;
use rnic_switch::Route;
use std::net::{IpAddr, Ipv4Addr};

fn fabric() -> rnic_switch::Switch {
    let mut cfg = config(5);
    cfg.routes.push(Route {
        dst: IpAddr::V4(Ipv4Addr::new(10, 1, 0, 0)),
        prefix: 16,
        ports: vec![0, 1, 2, 3],
    });
    switch(cfg)
}

#[test]
fn one_flow_one_path() {
    let mut sw = fabric();
    for k in 0..50 {
        sw.receive(4, k * 100, &udp4(host(4), [10, 1, 0, 7], 50_000, 0, 0, 200));
    }
    let d = sw.advance(100_000);
    assert_eq!(d.len(), 50);
    assert!(d.iter().all(|x| x.port == d[0].port));
}

#[test]
fn source_ports_spread_evenly() {
    let mut sw = fabric();
    // 1000 flows differing only in the UDP source port, 250 expected per
    // port. Chi-square with 3 degrees of freedom: P(X > 16.27) = 0.001.
    for k in 0..1000u64 {
        sw.receive(
            4,
            k * 100,
            &udp4(host(4), [10, 1, 0, 7], 49152 + k as u16, 0, 0, 200),
        );
    }
    let mut n = [0f64; 4];
    for d in sw.advance(1_000_000) {
        n[d.port] += 1.0;
    }
    let chi2: f64 = n.iter().map(|c| (c - 250.0).powi(2) / 250.0).sum();
    assert!(chi2 < 16.27, "{n:?} chi2 {chi2}");
}

#[test]
fn host_route_beats_the_group() {
    let mut sw = fabric();
    // 10.1.0.0/16 is the group; 10.0.0.2/32 is port 2 alone.
    sw.receive(4, 0, &udp4(host(4), host(2), 7, 0, 0, 200));
    assert_eq!(sw.advance(100)[0].port, 2);
}
