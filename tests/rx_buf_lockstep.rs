//! Constrained-random block-level lockstep of `rx_buf`: model and RTL get
//! the same random frames (1 to 40 beats, VLAN priorities or untagged,
//! back to back or with gaps), verdicts 1 to 4 cycles after each frame's
//! last beat (kept or discarded, random metadata) and random `out_ready`
//! back-pressure, and the environment checks the contract
//! (docs/responder.md, "rx_buf") on its own:
//! - the frames that come out are exactly the kept frames that were not
//!   dropped, in arrival order, byte for byte, with their verdict's
//!   metadata and their VLAN priority; keep is full on every beat but the
//!   last, which carries the frame's own last keep;
//! - `ev_drop_full` pulses only the cycle after a frame's last beat, and a
//!   frame is dropped only when the buffer may have been full: an upper bound
//!   of the lines (or frame slots) in use, kept by the environment from what
//!   went in and came out, reached the size at one of its beats;
//! - with `out_ready` always high nothing is ever dropped (the buffer drains
//!   a line a cycle, as fast as the link fills it);
//! - each priority's line count never exceeds the environment's bound for
//!   it, and everything is freed when the traffic stops;
//! - valid/ready: a beat offered and not taken is offered again unchanged;
//! - the header queue: `hd_*` offers, in order, the verdict metadata of
//!   exactly the kept frames that were stored, each from the cycle after its
//!   verdict until taken (`hd_valid` is high exactly when such a header
//!   waits), never a dropped or discarded frame's, and a frame's header is
//!   offered no later than its first beat. The consumer behaves as the
//!   responder will: it takes a frame's beats only once it took its header
//!   (in that cycle or before), with its own random `hd_ready`.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`.

mod common;

use std::collections::VecDeque;

use rnic_model::rx_buf::{RxBuf, RxBufIn, RxBufOut, FRAMES, LINES, META_W, PRIO_W};
use rnic_model::Beat;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRxBuf;

const DEFAULT_CASES: u64 = 24;
const DEFAULT_SEED: u64 = 0x7278_5F62_7566_5F5F; // "rx_buf__"
/// Cycles of traffic per case, then a drain with `out_ready` high.
const CYCLES: u64 = 20_000;
const DRAIN: u64 = 2_000;
const MIN_TOTAL_CYCLES: u64 = 24 * (CYCLES + DRAIN);

#[derive(Debug, Clone)]
struct Frame {
    beats: Vec<Beat>,
    last_keep: u64,
    pcp: u8,
    /// Cycles of its first and last beat.
    first: u64,
    last: u64,
    verdict: Option<(bool, Beat)>,
    /// The cycle its verdict was given.
    vd_at: u64,
    /// Its header was offered (at the head of the header queue).
    hd_seen: bool,
    dropped: Option<bool>,
    /// Beats that came out.
    out: usize,
    /// The cycle it stopped holding lines, as far as the bound knows.
    gone: Option<u64>,
}

impl Frame {
    fn kept(&self) -> Option<bool> {
        Some(self.verdict?.0 && !self.dropped?)
    }
}

struct BufEnv {
    rng: SplitMix64,
    max_beats: u64,
    gap_pct: u8,
    keep_pct: u8,
    ready_pct: u8,
    hd_pct: u8,
    vlan_pct: u8,
    frames: Vec<Frame>,
    /// Frame being sent and its next beat.
    sending: Option<(usize, usize)>,
    /// (cycle due, frame) of verdicts to give, in frame order.
    verdicts: VecDeque<(u64, usize)>,
    /// Next frame whose beats may come out.
    out_cursor: usize,
    /// Next frame whose header may be offered.
    hd_cursor: usize,
    headers: u64,
    prev: Option<(RxBufIn, RxBufOut)>,
    /// (cycle, lines bound, slots bound) of recent cycles, for judging drops.
    bound_hist: VecDeque<(u64, u64, u64)>,
    drops: u64,
    multi_beat_drops: u64,
    discards: u64,
    frames_out: u64,
    stalls: u64,
}

fn pcp_bytes(b: &mut Beat, pcp: Option<u8>) {
    match pcp {
        Some(p) => (b.0[12], b.0[13], b.0[14]) = (0x81, 0x00, p << 5 | (b.0[14] & 0x1F)),
        None => (b.0[12], b.0[13]) = (0x08, 0x00),
    }
}

impl BufEnv {
    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        // Case shapes: an always-ready drain (no drops allowed), a slow one
        // (the buffer fills), or in between.
        let ready_pct = [100, 100, 90, 60, 30, 10][rng.below(6) as usize];
        BufEnv {
            max_beats: [2, 8, 40][rng.below(3) as usize],
            gap_pct: [0, 0, 10, 50][rng.below(4) as usize],
            keep_pct: [100, 70, 30][rng.below(3) as usize],
            ready_pct,
            hd_pct: if ready_pct == 100 {
                100
            } else {
                [100, 70, 30][rng.below(3) as usize]
            },
            vlan_pct: [0, 50, 100][rng.below(3) as usize],
            rng,
            frames: Vec::new(),
            sending: None,
            verdicts: VecDeque::new(),
            out_cursor: 0,
            hd_cursor: 0,
            headers: 0,
            prev: None,
            bound_hist: VecDeque::new(),
            drops: 0,
            multi_beat_drops: 0,
            discards: 0,
            frames_out: 0,
            stalls: 0,
        }
    }

    /// Upper bounds of the lines in use (in total and per priority) and of
    /// the frame slots in use at the start of `cycle`: every beat sent counts
    /// until it came out; a discarded frame (or one not yet decided) counts
    /// whole until every frame before it has gone.
    fn bounds(&self, cycle: u64) -> (u64, [u64; 8], u64) {
        let (mut lines, mut per, mut slots) = (0, [0u64; 8], 0);
        // Frames before the output cursor are gone.
        for f in &self.frames[self.out_cursor..] {
            if f.first >= cycle || f.gone.is_some_and(|g| g < cycle) {
                continue;
            }
            if f.dropped == Some(true) && f.last < cycle {
                continue;
            }
            let sent = if f.last < cycle {
                f.beats.len()
            } else {
                (cycle - f.first) as usize
            };
            let held = (sent - f.out.min(sent)) as u64;
            lines += held;
            per[f.pcp as usize] += held;
            slots += 1;
        }
        (lines, per, slots)
    }

    fn check(&mut self, cycle: u64, o: &RxBufOut) {
        let (ub, per, slots) = self.bounds(cycle);
        self.bound_hist.push_back((cycle, ub, slots));
        if self.bound_hist.len() > 64 {
            self.bound_hist.pop_front();
        }
        let mut sum = 0;
        for (p, &bound) in per.iter().enumerate() {
            let n = (o.prio_lines >> (PRIO_W as usize * p)) as u64 & ((1 << PRIO_W) - 1);
            assert!(
                n <= bound,
                "cycle {cycle}: priority {p} holds {n} lines, at most {bound} possible"
            );
            sum += n;
        }
        assert!(
            sum <= ub.min(LINES as u64),
            "cycle {cycle}: {sum} lines held, bound {ub}"
        );

        // Drop pulses: the cycle after a last beat, for that frame only.
        let n = self.frames.len();
        let just_ended =
            (n.saturating_sub(2)..n).find(|&k| self.frames[k].last.wrapping_add(1) == cycle);
        match just_ended {
            Some(k) => {
                self.frames[k].dropped = Some(o.ev_drop_full);
                if o.ev_drop_full {
                    self.drop_was_legitimate(k);
                }
            }
            None => assert!(
                !o.ev_drop_full,
                "cycle {cycle}: ev_drop_full with no frame ending"
            ),
        }

        // The header queue: the next kept frame (skipping discarded and
        // dropped ones) whose verdict came before this cycle is on offer.
        while self.hd_cursor < self.frames.len()
            && self.frames[self.hd_cursor].vd_at < cycle
            && self.frames[self.hd_cursor].kept() == Some(false)
        {
            self.hd_cursor += 1;
        }
        let hd_due = self
            .frames
            .get(self.hd_cursor)
            .filter(|f| f.vd_at < cycle)
            .map(|f| f.verdict.expect("given").1);
        assert_eq!(
            o.hd_valid,
            hd_due.is_some(),
            "cycle {cycle}: hd_valid, frame {} next",
            self.hd_cursor
        );
        if let Some(meta) = hd_due {
            assert_eq!(
                o.hd_meta, meta,
                "cycle {cycle}: frame {}'s header",
                self.hd_cursor
            );
            self.frames[self.hd_cursor].hd_seen = true;
        }
        // A frame's beat is never offered before its header.
        if o.out_valid {
            let k = self.out_frame(cycle);
            assert!(
                self.frames[k].hd_seen,
                "cycle {cycle}: frame {k}'s beat offered before its header"
            );
        }

        // Valid/ready: an offer not taken stays unchanged.
        if let Some((pi, po)) = &self.prev {
            if po.out_valid && !pi.out_ready {
                assert!(o.out_valid, "cycle {cycle}: an offered beat was withdrawn");
                assert_eq!(
                    (o.out_data, o.out_keep, o.out_last, o.out_meta, o.out_prio),
                    (
                        po.out_data,
                        po.out_keep,
                        po.out_last,
                        po.out_meta,
                        po.out_prio
                    ),
                    "cycle {cycle}: an offered beat changed while stalled"
                );
            }
        }
    }

    fn drop_was_legitimate(&mut self, k: usize) {
        self.drops += 1;
        let f = self.frames[k].clone();
        self.multi_beat_drops += (f.beats.len() > 1) as u64;
        // The bounds as they were at each of its beats.
        let full_at = self.bound_hist.iter().find(|&&(c, lines, slots)| {
            (f.first..=f.last).contains(&c)
                && (lines >= LINES as u64 || (c == f.first && slots >= FRAMES as u64))
        });
        assert!(
            full_at.is_some(),
            "frame {k} ({} beats, cycles {}..={}) dropped while the buffer had room",
            f.beats.len(),
            f.first,
            f.last
        );
        assert!(
            self.ready_pct < 100,
            "frame {k} dropped with out_ready always high"
        );
    }

    /// The frame whose beat is at the head of `out_*`: the first kept frame
    /// from the output cursor.
    fn out_frame(&self, cycle: u64) -> usize {
        (self.out_cursor..self.frames.len())
            .find(|&k| match self.frames[k].kept() {
                Some(kept) => kept,
                None => panic!("cycle {cycle}: a beat offered before frame {k}'s verdict"),
            })
            .unwrap_or_else(|| panic!("cycle {cycle}: a beat offered with no kept frame"))
    }

    /// A beat taken at `cycle`: the next beat of the next frame that can
    /// come out.
    fn on_out(&mut self, cycle: u64, o: &RxBufOut) {
        loop {
            let f = &self.frames[self.out_cursor];
            match f.kept() {
                Some(false) => {
                    self.discards += (f.dropped == Some(false)) as u64;
                    self.frames[self.out_cursor].gone = Some(cycle);
                    self.out_cursor += 1;
                }
                Some(true) => break,
                None => panic!(
                    "cycle {cycle}: a beat came out before frame {}'s verdict",
                    self.out_cursor
                ),
            }
        }
        let k = self.out_cursor;
        let f = &mut self.frames[k];
        let n = f.out;
        let last = n + 1 == f.beats.len();
        let keep = if last { f.last_keep } else { u64::MAX };
        let meta = f.verdict.expect("kept").1;
        assert_eq!(
            o.out_data, f.beats[n],
            "cycle {cycle}: frame {k} beat {n} data"
        );
        assert_eq!(
            (o.out_keep, o.out_last, o.out_meta, o.out_prio),
            (keep, last, meta, f.pcp),
            "cycle {cycle}: frame {k} beat {n} (keep, last, meta, prio)"
        );
        f.out += 1;
        if last {
            f.gone = Some(cycle);
            self.out_cursor += 1;
            self.frames_out += 1;
        }
    }

    fn new_frame(&mut self, cycle: u64) -> usize {
        let n = 1 + self.rng.below(self.max_beats) as usize;
        let vlan = self.rng.percent(self.vlan_pct);
        let pcp = if vlan { self.rng.below(8) as u8 } else { 0 };
        let mut beats = Vec::with_capacity(n);
        for _ in 0..n {
            let mut b = Beat::default();
            for w in b.0.chunks_mut(8) {
                w.copy_from_slice(&self.rng.next_u64().to_le_bytes());
            }
            beats.push(b);
        }
        pcp_bytes(&mut beats[0], vlan.then_some(pcp));
        let bytes = 1 + self.rng.below(64);
        let last_keep = if bytes == 64 {
            u64::MAX
        } else {
            (1 << bytes) - 1
        };
        self.frames.push(Frame {
            beats,
            last_keep,
            pcp,
            first: cycle,
            last: u64::MAX,
            verdict: None,
            vd_at: u64::MAX,
            hd_seen: false,
            dropped: None,
            out: 0,
            gone: None,
        });
        self.frames.len() - 1
    }
}

impl Env for BufEnv {
    type In = RxBufIn;
    type Out = RxBufOut;

    fn step(&mut self, cycle: u64, o: &RxBufOut) -> RxBufIn {
        self.check(cycle, o);
        let traffic = cycle < CYCLES;
        let mut i = RxBufIn {
            out_ready: !traffic || self.rng.percent(self.ready_pct),
            hd_ready: !traffic || self.rng.percent(self.hd_pct),
            ..Default::default()
        };
        // The consumer takes a header, then its frame's beats.
        if o.hd_valid && i.hd_ready {
            self.frames[self.hd_cursor].hd_seen = true;
            self.hd_cursor += 1;
            self.headers += 1;
        }
        if o.out_valid && self.out_frame(cycle) >= self.hd_cursor {
            i.out_ready = false;
        }
        if o.out_valid && i.out_ready {
            self.on_out(cycle, o);
        }
        self.stalls += (o.out_valid && !i.out_ready) as u64;

        // A beat on the link.
        if self.sending.is_none() && traffic && !self.rng.percent(self.gap_pct) {
            let k = self.new_frame(cycle);
            self.sending = Some((k, 0));
        }
        if let Some((k, b)) = self.sending {
            let f = &mut self.frames[k];
            let last = b + 1 == f.beats.len();
            i.in_valid = true;
            i.in_data = f.beats[b];
            i.in_keep = if last { f.last_keep } else { u64::MAX };
            i.in_last = last;
            if last {
                f.last = cycle;
                let prev_due = self.verdicts.back().map_or(0, |v| v.0);
                let due = (cycle + 1 + self.rng.below(4)).max(prev_due + 1);
                self.verdicts.push_back((due, k));
                self.sending = None;
            } else {
                self.sending = Some((k, b + 1));
            }
        }

        // A verdict.
        if self.verdicts.front().is_some_and(|v| v.0 <= cycle) {
            let (_, k) = self.verdicts.pop_front().expect("front");
            let mut meta = Beat::default();
            for w in meta.0[..META_W as usize / 8].chunks_mut(8) {
                w.copy_from_slice(&self.rng.next_u64().to_le_bytes());
            }
            let v = (self.rng.percent(self.keep_pct), meta);
            (i.vd_valid, i.vd_keep, i.vd_meta) = (true, v.0, v.1);
            self.frames[k].verdict = Some(v);
            self.frames[k].vd_at = cycle;
        }
        self.prev = Some((i, *o));
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn rx_buf_random_lockstep() {
    let (mut total, mut drops, mut multi, mut discards, mut out, mut stalls) = (0, 0, 0, 0, 0, 0);
    let mut headers = 0;
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = BufEnv::new(seed);
        let fin = lockstep::run(
            &mut RxBuf::new(),
            &mut RtlRxBuf::new(),
            &mut env,
            CYCLES + DRAIN,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        // Drained: every kept frame out, every line free.
        let (lines, _, _) = env.bounds(fin.cycles);
        let left: Vec<usize> = (env.out_cursor..env.frames.len())
            .filter(|&k| env.frames[k].kept() != Some(false))
            .collect();
        assert!(left.is_empty(), "frames never delivered: {left:?}");
        let hd_left = (env.hd_cursor..env.frames.len())
            .filter(|&k| env.frames[k].kept() != Some(false))
            .count();
        assert_eq!(hd_left, 0, "headers never taken");
        let o = env.prev.expect("ran").1;
        assert_eq!(
            o.prio_lines, 0,
            "lines still held after the drain (bound {lines})"
        );
        total += fin.cycles;
        drops += env.drops;
        multi += env.multi_beat_drops;
        discards += env.discards;
        out += env.frames_out;
        stalls += env.stalls;
        headers += env.headers;
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        total >= MIN_TOTAL_CYCLES
            && out >= 20_000
            && discards >= 2_000
            && drops >= 200
            && multi >= 50
            && stalls >= 10_000
    });
    println!(
        "rx_buf: {} cases, {total} cycles, {out} frames out, {discards} discarded, \
         {drops} dropped ({multi} of several beats), {stalls} stalled beats, {headers} headers",
        run.cases
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} cycles");
        assert!(out >= 20_000, "few frames out ({out})");
        assert_eq!(headers, out, "one header per frame out");
        assert!(discards >= 2_000, "discards barely exercised ({discards})");
        assert!(drops >= 200, "a full buffer barely exercised ({drops})");
        assert!(
            multi >= 50,
            "overflow inside a frame barely exercised ({multi})"
        );
        assert!(
            stalls >= 10_000,
            "back-pressure barely exercised ({stalls})"
        );
    }
}
