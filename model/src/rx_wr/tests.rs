//! Literal cases of `rx_wr`: realignment, a token behind a write, the
//! drop of a frame's tail.

use super::*;

fn frame(beats: usize) -> Vec<Beat> {
    (0..beats)
        .map(|k| {
            let mut b = Beat::default();
            for (j, x) in b.iter_mut().enumerate() {
                *x = (k * 64 + j) as u8 ^ 0x5A;
            }
            b
        })
        .collect()
}

fn cmd(off: u16, len: u16, addr: u64, last: bool) -> RxWrIn {
    RxWrIn {
        wc_valid: true,
        wc_off: off,
        wc_len: len,
        wc_addr: addr,
        wc_last: last,
        ..Default::default()
    }
}

/// Runs one frame with the given commands, everything ready, `wr_done` the
/// cycle after each request is taken; returns the data beats, the requests
/// and the cycles until the frame's last beat was taken.
fn run(beats: &[Beat], cmds: &[RxWrIn]) -> (Vec<Beat>, Vec<(u64, u32)>, u64) {
    let mut d = RxWr::new();
    let mut o = d.reset();
    let (mut data, mut reqs) = (Vec::new(), Vec::new());
    let (mut ci, mut bi, mut done) = (0, 0, false);
    let mut end = 0;
    for cycle in 0..200 {
        let mut i = if ci < cmds.len() {
            cmds[ci]
        } else {
            RxWrIn::default()
        };
        if bi < beats.len() {
            i.in_valid = true;
            i.in_data = beats[bi];
            i.in_keep = u64::MAX;
            i.in_last = bi + 1 == beats.len();
        }
        i.wr_req_ready = true;
        i.wr_data_ready = true;
        i.tok_ready = true;
        i.wr_done_valid = done;
        done = o.wr_req_valid;
        if o.wr_req_valid {
            reqs.push((o.wr_req_addr, o.wr_req_len));
        }
        if o.wr_data_valid {
            data.push(o.wr_data);
        }
        if i.wc_valid && o.wc_ready {
            ci += 1;
        }
        if i.in_valid && o.in_ready {
            bi += 1;
            if bi == beats.len() {
                end = cycle;
            }
        }
        o = d.tick(&i);
    }
    (data, reqs, end)
}

#[test]
fn realigns_a_segment_across_beats() {
    let f = frame(3);
    let (data, reqs, _) = run(&f, &[cmd(10, 100, 0x1000, true)]);
    assert_eq!(reqs, vec![(0x1000, 100)]);
    assert_eq!(data.len(), 2);
    let bytes: Vec<u8> = f.iter().flat_map(|b| b.0).collect();
    assert_eq!(&data[0].0[..], &bytes[10..74]);
    assert_eq!(&data[1].0[..36], &bytes[74..110]);
}

#[test]
fn two_segments_share_a_beat_and_the_tail_is_dropped() {
    let f = frame(4);
    let bytes: Vec<u8> = f.iter().flat_map(|b| b.0).collect();
    let (data, reqs, end) = run(
        &f,
        &[
            cmd(0, 20, 0x100, false),
            cmd(20, 30, 0x200, false),
            cmd(60, 8, 0x300, true),
        ],
    );
    assert_eq!(reqs, vec![(0x100, 20), (0x200, 30), (0x300, 8)]);
    assert_eq!(&data[0].0[..20], &bytes[..20]);
    assert_eq!(&data[1].0[..30], &bytes[20..50]);
    assert_eq!(&data[2].0[..8], &bytes[60..68]);
    // Every beat taken: 4 beats, one emit-only cycle (the second segment
    // lies in the beat already taken), one load cycle.
    assert!(end <= 4 + 1 + 2, "frame took until cycle {end}");
}

#[test]
fn token_waits_for_every_write_to_complete() {
    let mut d = RxWr::new();
    let mut o = d.reset();
    let f = frame(1);
    let mut seq = vec![cmd(0, 64, 0x40, true)];
    let mut t = RxWrIn {
        wc_valid: true,
        wc_tok: true,
        ..Default::default()
    };
    t.wc_tok_data.0[0] = 0xAB;
    seq.push(t);
    let (mut ci, mut taken_in) = (0, false);
    let mut done_at = None;
    for cycle in 0..40u64 {
        let mut i = seq.get(ci).copied().unwrap_or_default();
        i.in_valid = !taken_in;
        i.in_data = f[0];
        i.in_last = true;
        i.wr_req_ready = true;
        i.wr_data_ready = true;
        i.tok_ready = true;
        // The simulated dma_wr completes the write at cycle 20 only.
        i.wr_done_valid = cycle == 20;
        if o.tok_valid {
            assert_eq!(o.tok_data.0[0], 0xAB);
            done_at.get_or_insert(cycle);
        }
        if i.wc_valid && o.wc_ready {
            ci += 1;
        }
        taken_in |= i.in_valid && o.in_ready;
        o = d.tick(&i);
    }
    assert_eq!(done_at, Some(21), "token offered the cycle after wr_done");
}
