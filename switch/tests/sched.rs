//! Strict priority and DWRR (docs/switch.md, "Scheduling").
mod common;
use common::*;
use rnic_switch::Sched;

fn prio_of(f: &[u8]) -> usize {
    (f[15] >> 5) as usize // DSCP >> 3 with the default map
}

#[test]
fn strict_first_then_dwrr_by_quantum() {
    let mut cfg = config(2);
    cfg.queues[0].sched = Sched::Dwrr { quantum: 4200 };
    cfg.queues[1].sched = Sched::Dwrr { quantum: 2100 };
    let mut sw = switch(cfg);
    // All queued at cycle 0, before the first start at 1: 40 frames of
    // 1050 bytes on priority 0 (DSCP 0), 20 on priority 1 (DSCP 8), 5 on
    // the strict priority 6 (DSCP 48).
    for _ in 0..40 {
        sw.receive(0, 0, &data(0, 1, 0, 1050));
    }
    for _ in 0..20 {
        sw.receive(0, 0, &data(0, 1, 8, 1050));
    }
    for _ in 0..5 {
        sw.receive(0, 0, &data(0, 1, 48, 1050));
    }
    let d = sw.advance(1_000_000);
    let order: Vec<usize> = d.iter().map(|d| prio_of(&d.frame)).collect();
    // Strict first. Then DRR from queue 0: its turn adds 4200 = 4 frames
    // of 1050 exactly; queue 1's adds 2100 = 2 frames; each round is
    // 0,0,0,0,1,1 and ten rounds empty both at once.
    let mut want = vec![6; 5];
    for _ in 0..10 {
        want.extend([0, 0, 0, 0, 1, 1]);
    }
    assert_eq!(order, want);
}

#[test]
fn dwrr_bytes_follow_quanta_with_uneven_frames() {
    let mut cfg = config(2);
    cfg.queues[0].sched = Sched::Dwrr { quantum: 3000 };
    cfg.queues[1].sched = Sched::Dwrr { quantum: 1000 };
    let mut sw = switch(cfg);
    // Priority 0 sends 1500-byte frames, priority 1 sends 700-byte ones,
    // both always backlogged. Every prefix of the schedule has served each
    // queue its quanta so far, give or take one frame plus one quantum:
    // |bytes0 - 3 * bytes1| <= 3 * (1000 + 700) + (3000 + 1500) = 9600.
    for _ in 0..200 {
        sw.receive(0, 0, &data(0, 1, 0, 1500));
        sw.receive(0, 0, &data(0, 1, 8, 700));
    }
    let d = sw.advance(10_000_000);
    let (mut b0, mut b1) = (0i64, 0i64);
    for x in &d {
        match prio_of(&x.frame) {
            0 => b0 += x.frame.len() as i64,
            _ => b1 += x.frame.len() as i64,
        }
        if b1 < 200 * 700 && b0 < 200 * 1500 {
            assert!((b0 - 3 * b1).abs() <= 9600, "{b0} vs {b1}");
        }
    }
}

#[test]
fn strict_frame_waits_only_for_the_frame_on_the_wire() {
    let mut sw = switch(config(2));
    for _ in 0..3 {
        sw.receive(0, 0, &data(0, 1, 0, 1026));
    }
    // DWRR frames start at 1, 22, 43 (21 cycles each). A CNP-class frame
    // arriving at 5 waits for the frame on the wire and goes at 22; it is
    // 100 bytes, (100 + 24) * 8 / 400 = 2.48 -> 3 cycles, so the DWRR
    // frames follow at 25 and 25 + 21 = 46.
    sw.receive(0, 5, &data(0, 1, 48, 100));
    let d = sw.advance(1000);
    let starts: Vec<_> = d.iter().map(|d| (prio_of(&d.frame), d.first)).collect();
    assert_eq!(starts, vec![(0, 1), (6, 22), (0, 25), (0, 46)]);
}
