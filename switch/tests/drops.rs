//! Buffer overflow, unroutable and malformed frames (docs/switch.md,
//! "Admission" and "Parsing").
mod common;
use common::*;

#[test]
fn lossy_drops_when_shared_buffer_is_full() {
    let mut cfg = config(2);
    cfg.buffer_bytes = 5_000;
    let mut sw = switch(cfg);
    // Seven 1000-byte priority-0 frames at cycle 0: five fill the 5000
    // bytes exactly, the sixth and seventh find no room.
    for _ in 0..7 {
        sw.receive(0, 0, &data(0, 1, 0, 1000));
    }
    assert_eq!(sw.buffer_used(), 5_000);
    let c = sw.counters();
    assert_eq!((c.dropped_frames, c.ports[1].queues[0].dropped), (2, 2));
    // The first frame starts (and frees its bytes) at 1: room again.
    sw.receive(0, 1, &data(0, 1, 0, 1000));
    assert_eq!(sw.counters().dropped_frames, 2);
    assert_eq!(sw.advance(1000).len(), 6);
    sw.check_conservation().unwrap();
}

#[test]
fn lossless_uses_headroom_when_shared_is_full() {
    let mut cfg = config(2);
    cfg.buffer_bytes = 2_000;
    cfg.pfc.headroom_bytes = 3_000;
    let mut sw = switch(cfg);
    // Two frames fill the shared pool, three more go to headroom of
    // (0, 3), the sixth is a lossless drop.
    for _ in 0..6 {
        sw.receive(0, 0, &data(0, 1, ROCE, 1000));
    }
    assert_eq!((sw.shared_used(), sw.headroom_used(0, 3)), (2_000, 3_000));
    assert_eq!(sw.counters().ports[1].queues[3].dropped, 1);
    sw.advance(10_000);
    assert_eq!((sw.buffer_used(), sw.headroom_used(0, 3)), (0, 0));
    sw.check_conservation().unwrap();
}

#[test]
fn unroutable_is_dropped_and_counted() {
    let mut sw = switch(config(2));
    sw.receive(0, 0, &udp4(host(0), [192, 168, 0, 1], 1, 0, 0, 100));
    assert_eq!(sw.counters().unroutable, 1);
    assert_eq!(sw.counters().dropped_frames, 1);
    assert!(sw.advance(100).is_empty());
    sw.check_conservation().unwrap();
}

#[test]
fn malformed_frames_are_dropped_and_counted() {
    let mut sw = switch(config(2));
    let good = data(0, 1, 0, 100);
    let truncated = &good[..30]; // IPv4 header cut short
    let mut unknown = good.clone();
    unknown[12..14].copy_from_slice(&[0x88, 0xb5]);
    let mut bad_ihl = good.clone();
    bad_ihl[14] = 0x44; // IHL 4 words < 5
    let mut v5 = good.clone();
    v5[14] = 0x55; // version 5
    let mut not_pfc = good.clone();
    not_pfc[12..14].copy_from_slice(&[0x88, 0x08]); // MAC control, not PFC
    for f in [
        truncated,
        &unknown,
        &bad_ihl,
        &v5,
        &not_pfc,
        &[],
        &good[..13],
    ] {
        sw.receive(0, 0, f);
    }
    sw.receive(7, 0, &good); // no such port
    let c = sw.counters();
    assert_eq!((c.malformed, c.dropped_frames, c.rx_frames), (8, 8, 8));
    assert!(sw.advance(100).is_empty());
    sw.check_conservation().unwrap();
}

#[test]
fn tagged_frames_use_pcp_not_dscp() {
    let mut sw = switch(config(2));
    // DSCP 0 (priority 0 if untagged) but PCP 6 in the tag: strict queue.
    let f = data(0, 1, 0, 100);
    let mut t = f[..12].to_vec();
    t.extend([0x81, 0x00, 0xc0, 0x05]);
    t.extend(&f[12..]);
    for _ in 0..3 {
        sw.receive(0, 0, &f);
    }
    sw.receive(0, 1, &t);
    // The first untagged frame starts at 1 (before the tagged one is
    // counted, at 1 too); the tagged one overtakes the two still queued.
    let d = sw.advance(100);
    assert_eq!(d[1].frame.len(), 104);
    assert_eq!(sw.counters().ports[1].queues[6].enqueued, 1);
}
