//! PFC generation and honouring, headroom and the watchdog
//! (docs/switch.md, "PFC").
mod common;
use common::*;
use rnic_switch::{headroom_needed, pause_cycles, pfc_frame, SwitchConfig};

fn small_pfc(ports: usize) -> SwitchConfig {
    let mut cfg = config(ports);
    cfg.pfc.xoff_bytes = 10_000;
    cfg.pfc.xon_bytes = 5_000;
    cfg.pfc.pause_quanta = 100;
    cfg.pfc.refresh_cycles = 30;
    cfg
}

#[test]
fn xoff_at_the_crossing_refresh_then_xon() {
    let mut sw = switch(small_pfc(2));
    // 1000-byte priority-3 frames from port 0 to port 1 arrive one per
    // cycle at 0..=10; port 1 sends one per 21 cycles (1024 * 8 / 400 =
    // 20.48 -> 21) starting at 1, releasing its bytes as it starts: at 1,
    // 22, 43, 64, 85, 106.
    // Ingress bytes of (0, 3) after the arrival at cycle k (k < 22):
    // (k + 1) * 1000 - 1000, so 9000 at 9 and 10,000 = XOFF at 10.
    let mut pfc = Vec::new();
    for k in 0..=10 {
        sw.receive(0, k, &data(0, 1, ROCE, 1000));
        assert_eq!(sw.xoff(0, 3), k == 10, "cycle {k}");
        pfc.extend(sw.advance(k).into_iter().filter(|d| d.port == 0));
    }
    assert_eq!(sw.ingress_bytes(0, 3), 10_000);
    // Draining: 9000 at 22, 8000 at 43, 7000 at 64, 6000 at 85, 5000 =
    // XON at 106. Refreshes every 30 cycles from the XOFF decided at 10:
    // 40, 70, 100. Each PFC frame is 60 bytes, 2 cycles on port 0's idle
    // wire, starting the cycle after the decision.
    pfc.extend(sw.advance(1000).into_iter().filter(|d| d.port == 0));
    let got: Vec<_> = pfc
        .iter()
        .map(|d| (d.first, d.last, pfc_of(&d.frame, 3)))
        .collect();
    assert_eq!(
        got,
        vec![
            (11, 12, (8, 100)),
            (41, 42, (8, 100)),
            (71, 72, (8, 100)),
            (101, 102, (8, 100)),
            (107, 108, (8, 0)),
        ]
    );
    assert_eq!(
        &pfc[0].frame[..],
        &pfc_frame(sw.config().pfc.src_mac, 3, 100)[..]
    );
    let q = &sw.counters().ports[0].queues[3];
    assert_eq!((q.xoff_sent, q.xon_sent), (4, 1));
    assert_eq!(sw.counters().ports[0].pause_frames_tx, 5);
    assert_eq!(sw.counters().ports[1].queues[3].depth_hwm_bytes, 10_000);
}

#[test]
fn pfc_frame_goes_ahead_of_queued_data() {
    let mut sw = switch(small_pfc(2));
    // Port 0 is busy sending data to host 0 (lossy, from port 1): frames
    // of 1026 bytes start at 1, 22, 43 (21 cycles each).
    for _ in 0..3 {
        sw.receive(1, 0, &data(1, 0, 0, 1026));
    }
    // Ten 1000-byte lossless frames at cycle 5 on port 0: 10,000 = XOFF.
    for _ in 0..10 {
        sw.receive(0, 5, &data(0, 1, ROCE, 1000));
    }
    let d: Vec<_> = sw
        .advance(200)
        .into_iter()
        .filter(|d| d.port == 0)
        .map(|d| (d.first, is_pfc(&d.frame)))
        .collect();
    // The XOFF waits for the frame on the wire (to 21) and starts at 22,
    // ahead of the two data frames queued before it, so data goes at 24.
    // The refresh decided at 5 + 30 = 35 again waits only for that frame:
    // 45, and the last data frame follows at 47.
    assert_eq!(
        d[..5],
        [(1, false), (22, true), (24, false), (45, true), (47, false)]
    );
}

#[test]
fn pause_is_honoured_for_exactly_its_length() {
    let mut sw = switch(config(2));
    // 10 quanta = 5120 bits = 12.8 -> 13 cycles at 400: received at 100,
    // nothing of priority 3 starts in 101..=113.
    assert_eq!(pause_cycles(10, 400), 13);
    sw.receive(1, 100, &pfc_frame([2, 0, 0, 0, 0, 9], 3, 10));
    assert!(sw.paused(1, 3) && !sw.paused(1, 0));
    sw.receive(0, 100, &data(0, 1, ROCE, 500));
    sw.receive(0, 100, &data(0, 1, 0, 100)); // priority 0 is not paused
    let d = sw.advance(1000);
    // Priority 0: starts at 101, 3 cycles. Priority 3: first at 114.
    assert_eq!((d[0].first, d[1].first), (101, 114));
    assert_eq!(sw.counters().ports[1].pause_frames_rx, 1);
    assert_eq!(sw.counters().ports[1].queues[3].paused_cycles, 13);
    assert!(!sw.paused(1, 3));
}

#[test]
fn zero_quanta_resumes_at_once_and_new_pause_replaces() {
    let mut sw = switch(config(2));
    sw.receive(1, 100, &pfc_frame([0; 6], 3, 1000)); // 1280 cycles
    sw.receive(0, 100, &data(0, 1, ROCE, 500));
    assert!(sw.advance(104).is_empty());
    sw.receive(1, 105, &pfc_frame([0; 6], 3, 0));
    assert_eq!(sw.advance(1000)[0].first, 106);

    let mut sw = switch(config(2));
    // 1000 quanta at 100, then 1 quantum (2 cycles) at 105: what is left of
    // the first is replaced, so the pause covers 106..=107, start at 108.
    sw.receive(1, 100, &pfc_frame([0; 6], 3, 1000));
    sw.receive(0, 100, &data(0, 1, ROCE, 500));
    sw.receive(1, 105, &pfc_frame([0; 6], 3, 1));
    assert_eq!(sw.advance(1000)[0].first, 108);
    // 1280 counted at 100, 1275 given back at 105 (106..=1380), 2 more:
    // 5 + 2 = 7 cycles paused in all (101..=107).
    assert_eq!(sw.counters().ports[1].queues[3].paused_cycles, 7);
}

#[test]
fn paused_frame_on_the_wire_finishes() {
    let mut sw = switch(config(2));
    sw.receive(0, 0, &data(0, 1, ROCE, 1026)); // 1..=21
    sw.receive(0, 0, &data(0, 1, ROCE, 1026));
    sw.receive(1, 5, &pfc_frame([0; 6], 3, 10)); // pause 6..=18
    let d = sw.advance(1000);
    // The first frame is not cut; the second waits for the wire (22),
    // by which time the pause is over.
    assert_eq!((d[0].first, d[0].last, d[1].first), (1, 21, 22));
}

/// Four senders at line rate into one egress (4:1 incast) on the lossless
/// priority, over links of `delay` cycles each way. A sender obeys a PFC
/// frame from the cycle after it has fully arrived. Returns the switch
/// after all frames are through and the highest headroom use seen.
fn incast(headroom: u64, delay: u64, frames: usize) -> (rnic_switch::Switch, u64) {
    let mut cfg = config(5);
    cfg.pfc.xoff_bytes = 20_000;
    cfg.pfc.xon_bytes = 10_000;
    cfg.pfc.headroom_bytes = headroom;
    let b = cfg.bits_per_cycle;
    let mut sw = switch(cfg);
    let n = 21; // 1000-byte frames
    let mut next_free = [0u64; 4];
    let mut left = [frames; 4];
    // (since, until) of the pause each sender honours.
    let mut pause = [(1u64, 0u64); 4];
    let mut pfc_at: Vec<(u64, usize, u16)> = Vec::new();
    let mut arrivals: Vec<(u64, usize)> = Vec::new();
    let mut hw = 0;
    let mut t = 0u64;
    while t < 5_000_000 {
        for &(a, i, q) in pfc_at.iter().filter(|x| x.0 == t) {
            pause[i] = (a + 1, a + pause_cycles(q, b));
        }
        for i in 0..4 {
            let (s, u) = pause[i];
            if left[i] > 0 && next_free[i] <= t && !(s <= t && t <= u) {
                left[i] -= 1;
                next_free[i] = t + n;
                arrivals.push((t + n - 1 + delay, i));
            }
        }
        for &(_, i) in arrivals.iter().filter(|x| x.0 == t) {
            sw.receive(i, t, &data(i, 4, ROCE, 1000));
        }
        arrivals.retain(|x| x.0 > t);
        pfc_at.retain(|x| x.0 > t);
        for d in sw.advance(t) {
            if d.port < 4 && is_pfc(&d.frame) {
                pfc_at.push((d.last + delay, d.port, pfc_of(&d.frame, 3).1));
            }
        }
        for i in 0..4 {
            hw = hw.max(sw.headroom_used(i, 3));
        }
        if left.iter().all(|&l| l == 0) && arrivals.is_empty() && sw.buffer_used() == 0 {
            break;
        }
        t += 1;
    }
    sw.check_conservation().unwrap();
    (sw, hw)
}

#[test]
fn incast_with_enough_headroom_is_lossless() {
    // 100 cycles each way, 1000-byte frames, the sender acts the cycle
    // after the PFC frame's last cycle arrives (response 1):
    // 400 * (2 * 100 + 1) / 8 = 10,050, + 2 * (1000 + 24) + 84 = 12,182.
    let h = headroom_needed(400, 100, 1000, 1);
    assert_eq!(h, 12_182);
    let (sw, hw) = incast(h, 100, 300);
    let c = sw.counters();
    assert_eq!(c.dropped_frames, 0);
    assert_eq!(c.ports[4].tx_frames, 1200);
    assert!(hw > 0 && hw <= h, "headroom used {hw}");
    assert!(c.ports[0].queues[3].xoff_sent > 0 && c.ports[0].queues[3].xon_sent > 0);
}

#[test]
fn incast_without_headroom_drops_lossless() {
    let (sw, hw) = incast(0, 100, 300);
    let c = sw.counters();
    assert_eq!(hw, 0);
    assert!(c.ports[4].queues[3].dropped > 0);
    assert_eq!(c.dropped_frames, c.ports[4].queues[3].dropped);
    assert_eq!(c.ports[4].tx_frames + c.dropped_frames, 1200);
}

#[test]
fn watchdog_drops_during_a_storm_until_xon() {
    let mut cfg = config(2);
    cfg.watchdog_cycles = Some(50);
    let mut sw = switch(cfg);
    // Paused from 101 (65535 quanta: 83,885 cycles). Continuously paused
    // for 50 cycles (101..=150), the watchdog fires at 151.
    sw.receive(1, 100, &pfc_frame([0; 6], 3, 65535));
    sw.receive(0, 100, &data(0, 1, ROCE, 500));
    sw.receive(0, 150, &data(0, 1, ROCE, 500));
    assert!(sw.advance(150).is_empty());
    assert_eq!(sw.queue_depth(1, 3), 1000);
    assert!(sw.advance(151).is_empty());
    assert!(sw.in_storm(1, 3) && !sw.paused(1, 3));
    assert_eq!(sw.queue_depth(1, 3), 0);
    // During the storm arriving frames are dropped too.
    sw.receive(0, 160, &data(0, 1, ROCE, 500));
    let q = sw.counters().ports[1].queues[3];
    assert_eq!(q.watchdog_drops, 3);
    // Honoured 101..=150: 50 cycles.
    assert_eq!(q.paused_cycles, 50);
    // XON at 200 ends the storm; a frame arriving then starts at 201.
    sw.receive(1, 200, &pfc_frame([0; 6], 3, 0));
    assert!(!sw.in_storm(1, 3));
    sw.receive(0, 200, &data(0, 1, ROCE, 500));
    assert_eq!(sw.advance(300)[0].first, 201);
    sw.check_conservation().unwrap();
}

#[test]
fn watchdog_off_by_default_keeps_pausing() {
    let mut sw = switch(config(2));
    sw.receive(1, 100, &pfc_frame([0; 6], 3, 65535));
    sw.receive(0, 100, &data(0, 1, ROCE, 500));
    // 100 + 83,885 = 83,985 is the last paused cycle.
    assert!(sw.advance(83_985).is_empty());
    assert_eq!(sw.advance(83_986)[0].first, 83_986);
}
