//! RED/ECN marking on enqueue (docs/switch.md, "Marking").
mod common;
use common::*;
use rnic_switch::{ipv4_checksum, Red};

#[test]
fn deterministic_ends_and_ce_rewrite() {
    let mut cfg = config(2);
    cfg.queues[1].red = Some(Red {
        kmin_bytes: 2_000,
        kmax_bytes: 4_000,
        pmax: 0.5,
    });
    let mut sw = switch(cfg);
    // Ten ECT(0) 1000-byte priority-1 frames at cycle 0 (before any
    // start). Depth before each: 0, 1000, ..., 9000. At or below 2000
    // (frames 0-2) never marked; 3000 and 4000 (frames 3, 4) with 0.25 and
    // 0.5; above 4000 (frames 5-9) always.
    for _ in 0..10 {
        sw.receive(0, 0, &data(0, 1, 8, 1000));
    }
    // A not-ECT frame at depth 10,000 is never marked.
    sw.receive(0, 0, &udp4(host(0), host(1), 1, 8, 0, 1000));
    let d = sw.advance(10_000);
    let ecn: Vec<u8> = d.iter().map(|d| d.frame[15] & 3).collect();
    assert_eq!(ecn[..3], [2, 2, 2]);
    assert_eq!(ecn[5..], [3, 3, 3, 3, 3, 0]);
    for x in &d {
        assert_eq!(ipv4_checksum(&x.frame[14..34]), 0);
    }
    let m = sw.counters().ports[1].queues[1].marked;
    assert!((5..=7).contains(&m));
    assert_eq!(m as usize, ecn.iter().filter(|&&e| e == 3).count());
}

#[test]
fn default_roce_queue_never_marks_a_shallow_queue() {
    let mut sw = switch(config(2));
    // One 1000-byte frame every 30 cycles drains in 21: the queue is
    // empty at each arrival, depth 0 <= kmin = 5000.
    for k in 0..1000 {
        sw.receive(0, 30 * k, &data(0, 1, ROCE, 1000));
    }
    sw.advance(100_000);
    assert_eq!(sw.counters().ports[1].queues[3].marked, 0);
    assert_eq!(sw.counters().ports[1].queues[3].depth_hwm_bytes, 1000);
}

#[test]
fn middle_of_the_curve_is_binomial_at_fixed_depth() {
    let mut cfg = config(2);
    cfg.queues[1].red = Some(Red {
        kmin_bytes: 0,
        kmax_bytes: 100_000,
        pmax: 0.5,
    });
    let mut sw = switch(cfg);
    // Hold the queue at 50,000 bytes: pause it, fill it with 50 frames of
    // 1000 bytes, then offer one frame and let one go, 10,000 times (the
    // frames offered are counted at depth 50,000 each time).
    // p = 0.5 * 50,000 / 100,000 = 0.25; mean 2500, sigma 43.3, five
    // sigma: 2283..=2717.
    let pause = rnic_switch::pfc_frame([0; 6], 1, 65535);
    sw.receive(1, 0, &pause);
    for _ in 0..50 {
        sw.receive(0, 0, &udp4(host(0), host(1), 1, 8, 0, 1000));
    }
    let mut t = 1;
    for _ in 0..10_000 {
        assert_eq!(sw.queue_depth(1, 1), 50_000);
        sw.receive(0, t, &data(0, 1, 8, 1000));
        sw.receive(1, t, &rnic_switch::pfc_frame([0; 6], 1, 0));
        // One frame starts at t + 1 (21 cycles), then pause again at
        // t + 1 so no second one starts.
        sw.advance(t);
        sw.receive(1, t + 1, &pause);
        sw.advance(t + 1);
        t += 30;
    }
    let m = sw.counters().ports[1].queues[1].marked;
    assert!((2_283..=2_717).contains(&m), "{m}");
}

#[test]
fn ipv6_frames_are_routed_prioritised_and_marked() {
    use rnic_switch::Route;
    use std::net::IpAddr;
    let mut cfg = config(2);
    let dst: IpAddr = "fd00::1".parse().unwrap();
    cfg.routes.push(Route::host(dst, 1));
    cfg.queues[3].red = Some(Red {
        kmin_bytes: 0,
        kmax_bytes: 0,
        pmax: 0.0,
    });
    let mut sw = switch(cfg);
    // IPv6/UDP, traffic class DSCP 26 (priority 3) ECT(0): 0x6a, which
    // spans the version byte (0x66) and the next (0xa0).
    let mut f = vec![0u8; 14 + 40 + 8 + 100];
    f[12..14].copy_from_slice(&[0x86, 0xdd]);
    f[14] = 0x66;
    f[15] = 0xa0;
    f[20] = 17;
    f[21] = 64;
    f[38..54].copy_from_slice(&match dst {
        IpAddr::V6(a) => a.octets(),
        IpAddr::V4(_) => unreachable!(),
    });
    f[56..58].copy_from_slice(&4791u16.to_be_bytes());
    // The first finds the queue empty (depth 0 = kmax: p = pmax = 0); the
    // second finds 162 bytes > kmax: always marked, CE = traffic class
    // 0x6b, bytes 0x66 0xb0.
    sw.receive(0, 0, &f);
    sw.receive(0, 0, &f);
    let d = sw.advance(100);
    assert_eq!(d.len(), 2);
    assert!(d.iter().all(|d| d.port == 1));
    assert_eq!((d[0].frame[14], d[0].frame[15]), (0x66, 0xa0));
    assert_eq!((d[1].frame[14], d[1].frame[15]), (0x66, 0xb0));
    assert_eq!(sw.counters().ports[1].queues[3].marked, 1);
}
