//! Serialization and store-and-forward timing (docs/switch.md, "Timing").
mod common;
use common::*;

#[test]
fn back_to_back_frames_serialize() {
    let mut sw = switch(config(2));
    // Three 1026-byte frames all arrive at cycle 10. Each takes
    // (1026 + 24) * 8 / 400 = 21 cycles exactly, so they start at 11, 32,
    // 53 and end at 31, 52, 73: back to back, no gap.
    for _ in 0..3 {
        sw.receive(0, 10, &data(0, 1, 0, 1026));
    }
    let d = sw.advance(1000);
    let t: Vec<_> = d.iter().map(|d| (d.port, d.first, d.last)).collect();
    assert_eq!(t, vec![(1, 11, 31), (1, 32, 52), (1, 53, 73)]);
    assert_eq!(sw.next_event(), None);
    sw.check_conservation().unwrap();
}

#[test]
fn partial_cycles_round_up() {
    let mut sw = switch(config(2));
    // 1000 bytes: 1024 * 8 / 400 = 20.48 -> 21 cycles. A 20-byte frame is
    // padded to 60: 84 * 8 / 400 = 1.68 -> 2 cycles, and sent as 60 bytes.
    sw.receive(0, 0, &data(0, 1, 0, 1000));
    sw.receive(0, 0, &udp4(host(0), host(1), 1, 0, 0, 42));
    let d = sw.advance(100);
    assert_eq!((d[0].first, d[0].last), (1, 21));
    assert_eq!((d[1].first, d[1].last), (22, 23));
    assert_eq!(d[1].frame.len(), 60);
    assert!(d[1].frame[42..].iter().all(|&b| b == 0));
}

#[test]
fn store_and_forward_is_one_cycle() {
    let mut sw = switch(config(2));
    // Arrived (last byte in) at 100: the earliest start is 101.
    sw.receive(0, 100, &data(0, 1, 0, 500));
    assert_eq!(sw.next_event(), Some(101));
    assert!(sw.advance(100).is_empty());
    let d = sw.advance(101);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].first, 101);
}

#[test]
fn advance_returns_only_started_frames() {
    let mut sw = switch(config(2));
    for _ in 0..2 {
        sw.receive(0, 0, &data(0, 1, 0, 1026));
    }
    // First starts at 1, second at 22: advancing to 21 gives only one;
    // the next event is then exactly the second start.
    assert_eq!(sw.advance(21).len(), 1);
    assert_eq!(sw.next_event(), Some(22));
    assert_eq!(sw.advance(22)[0].first, 22);
}

#[test]
fn frame_forwarded_unchanged_when_not_marked() {
    let mut sw = switch(config(2));
    let f = data(0, 1, ROCE, 300);
    sw.receive(0, 0, &f);
    let d = sw.advance(10);
    assert_eq!(&d[0].frame[..], &f[..]);
}

#[test]
fn advance_to_the_end_of_time_drains() {
    let mut sw = switch(config(2));
    sw.receive(0, 0, &data(0, 1, 0, 100));
    assert_eq!(sw.advance(u64::MAX).len(), 1);
    assert_eq!(sw.next_event(), None);
}

#[test]
fn cycles_near_the_end_of_time_do_not_overflow() {
    let mut cfg = config(2);
    cfg.pfc.xoff_bytes = 100;
    cfg.pfc.xon_bytes = 0;
    cfg.watchdog_cycles = Some(u64::MAX - 5);
    let mut sw = switch(cfg);
    let end = u64::MAX - 3;
    sw.receive(1, end, &rnic_switch::pfc_frame([0; 6], 3, 65535));
    sw.receive(0, end, &data(0, 1, ROCE, 100));
    let _ = sw.advance(u64::MAX);
    sw.check_conservation().unwrap();
}
