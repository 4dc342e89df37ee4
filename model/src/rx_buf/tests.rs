//! Literal cases of the rx_buf contract (docs/responder.md): timing of a kept
//! frame, freeing of a discarded one, priority accounting, overflow.

use super::*;

fn beat(tag: u8, vlan_pcp: Option<u8>) -> Beat {
    let mut b = Beat([tag; 64]);
    if let Some(p) = vlan_pcp {
        (b.0[12], b.0[13], b.0[14]) = (0x81, 0x00, p << 5);
    } else {
        (b.0[12], b.0[13]) = (0x08, 0x00);
    }
    b
}

fn idle() -> RxBufIn {
    RxBufIn {
        out_ready: true,
        ..Default::default()
    }
}

fn send(b: Beat, keep: u64, last: bool) -> RxBufIn {
    RxBufIn {
        in_valid: true,
        in_data: b,
        in_keep: keep,
        in_last: last,
        ..idle()
    }
}

/// A 256-bit metadata record with `x` in its low 32 bits and a marker in
/// its top byte (so a lost high half shows).
fn m(x: u32) -> Beat {
    let mut b = Beat::default();
    b.0[..4].copy_from_slice(&x.to_le_bytes());
    b.0[31] = 0xC3;
    b
}

fn verdict(keep: bool, meta: u32) -> RxBufIn {
    RxBufIn {
        vd_valid: true,
        vd_keep: keep,
        vd_meta: m(meta),
        ..idle()
    }
}

fn lines(o: &RxBufOut, p: usize) -> u128 {
    (o.prio_lines >> (PRIO_W as usize * p)) & ((1 << PRIO_W) - 1)
}

/// Beats at 0 and 1, verdict at 2: decided at the edge ending 2, the first
/// read issued at 3, in the output FIFO at the edge ending 4, visible at 5.
/// (`tick` at cycle n returns what is visible at n + 1.)
#[test]
fn kept_frame_comes_out_three_cycles_after_its_verdict() {
    let mut b = RxBuf::new();
    b.reset();
    let f0 = beat(0x11, Some(5));
    let f1 = beat(0x22, None);
    let o = b.tick(&send(f0, u64::MAX, false)); // cycle 0
    assert_eq!(lines(&o, 5), 1);
    let o = b.tick(&send(f1, 0xFF, true)); // cycle 1
    assert_eq!(
        lines(&o, 5),
        2,
        "a frame's lines count at its first beat's priority"
    );
    let o = b.tick(&verdict(true, 0xABC)); // cycle 2
    assert!(!o.out_valid);
    let o = b.tick(&idle()); // cycle 3: first read issued
    assert!(!o.out_valid);
    assert_eq!(lines(&o, 5), 1, "a line is freed when its read is issued");
    let o = b.tick(&idle()); // cycle 4: into the output FIFO
    assert!(o.out_valid && !o.out_last, "visible at 5");
    assert_eq!(
        (o.out_data, o.out_keep, o.out_meta, o.out_prio),
        (f0, u64::MAX, m(0xABC), 5)
    );
    let o = b.tick(&idle()); // cycle 5
    assert!(o.out_valid && o.out_last);
    assert_eq!((o.out_data, o.out_keep, o.out_meta), (f1, 0xFF, m(0xABC)));
    let o = b.tick(&idle());
    assert!(!o.out_valid);
    assert_eq!(o.prio_lines, 0);
}

#[test]
fn discarded_frame_is_freed_in_one_cycle_at_the_head() {
    let mut b = RxBuf::new();
    b.reset();
    for k in 0..3 {
        b.tick(&send(beat(k, Some(3)), u64::MAX, k == 2));
    }
    let o = b.tick(&verdict(false, 0));
    assert_eq!(lines(&o, 3), 3);
    let o = b.tick(&idle());
    assert_eq!(lines(&o, 3), 0);
    assert_eq!(b.used(), 0);
    for _ in 0..4 {
        assert!(!b.tick(&idle()).out_valid);
    }
}

/// Out stalled: kept one-beat frames hold a slot each until their read is
/// issued, and four reads fill the output FIFO; so FRAMES + 4 frames are
/// stored and the next is dropped (pulse the cycle after its last beat).
#[test]
fn full_frame_slots_drop_whole_frames() {
    let mut b = RxBuf::new();
    b.reset();
    let stalled = |mut i: RxBufIn| {
        i.out_ready = false;
        i
    };
    for k in 0..FRAMES + 4 {
        let o = b.tick(&stalled(send(beat(k as u8, None), 1, true)));
        assert!(!o.ev_drop_full, "frame {k} dropped");
        b.tick(&stalled(verdict(true, k as u32)));
    }
    let o = b.tick(&stalled(send(beat(0xEE, None), 1, true)));
    assert!(o.ev_drop_full, "no frame slot left");
    let mut o = b.tick(&stalled(verdict(true, 0)));
    assert_eq!(b.used(), FRAMES);
    // Draining brings out the stored frames in order, the dropped one never
    // (a beat is taken in the cycle it is visible with out_ready high).
    let mut metas = Vec::new();
    for _ in 0..200 {
        if o.out_valid {
            metas.push(o.out_meta);
        }
        o = b.tick(&idle());
    }
    assert_eq!(metas, (0..FRAMES as u32 + 4).map(m).collect::<Vec<_>>());
}

/// A frame that runs out of lines midway gives back every line it took.
#[test]
fn overflow_midway_rewinds() {
    let mut b = RxBuf::new();
    b.reset();
    let stalled = RxBufIn {
        out_ready: false,
        ..Default::default()
    };
    // One frame of LINES - 2 beats, kept but not drained (out_ready low).
    for k in 0..LINES - 2 {
        b.tick(&send(beat(1, None), u64::MAX, k == LINES - 3));
    }
    b.tick(&verdict(true, 1));
    // Reads are issued (up to the output FIFO's 4), freeing 4 lines.
    for _ in 0..8 {
        b.tick(&stalled);
    }
    let before = b.used();
    assert_eq!(before, LINES - 2 - 4);
    // A 10-beat frame: 6 lines fit, then it overflows and rewinds.
    let mut dropped = false;
    for k in 0..10 {
        let mut i = send(beat(2, Some(7)), u64::MAX, k == 9);
        i.out_ready = false;
        dropped |= b.tick(&i).ev_drop_full;
    }
    let o = b.tick(&stalled);
    assert!(dropped || o.ev_drop_full);
    assert_eq!(b.used(), before);
    assert_eq!(lines(&o, 7), 0);
}

/// The header queue: a kept frame's metadata is offered the cycle after its
/// verdict, two cycles before its first beat; a discarded frame's never.
#[test]
fn header_comes_the_cycle_after_the_verdict_kept_frames_only() {
    let mut b = RxBuf::new();
    b.reset();
    b.tick(&send(beat(1, None), 0xF, true)); // cycle 0: frame A
    b.tick(&send(beat(2, None), 0xF, true)); // cycle 1: frame B
    b.tick(&send(beat(3, None), 0xF, true)); // cycle 2: frame C
    let o = b.tick(&verdict(true, 0xA)); // cycle 3
    assert!(o.hd_valid && o.hd_meta == m(0xA), "offered at 4");
    assert!(!o.out_valid);
    // Not taken: it stays; B is discarded, C kept.
    let o = b.tick(&verdict(false, 0xB)); // cycle 4
    assert!(o.hd_valid && o.hd_meta == m(0xA));
    let mut i = verdict(true, 0xC);
    i.hd_ready = true;
    let o = b.tick(&i); // cycle 5: A's header taken
    assert!(o.out_valid, "A's beat visible at 6 (verdict at 3)");
    assert!(o.hd_valid && o.hd_meta == m(0xC), "B's never offered");
    let mut i = idle();
    i.hd_ready = true;
    let o = b.tick(&i);
    assert!(!o.hd_valid);
}
