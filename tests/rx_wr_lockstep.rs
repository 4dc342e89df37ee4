//! Constrained-random block-level lockstep of `rx_wr`: model and RTL get the
//! same random frames (as rx_buf outputs them: full keep but on the last
//! beat), random command lists per frame (segments at random offsets and
//! lengths inside the frame, zero-length ones, segments sharing a beat,
//! tokens between frames), random back-pressure on every ready and random
//! `wr_done` timing from a simulated `dma_wr` (a request completes after
//! its request and all its data beats were taken, in order, one pulse a
//! cycle). The environment checks the contract (docs/responder.md, "rx_wr
//! and wr_arb") from the stimulus alone:
//! - the requests are exactly the commands' non-empty segments, in order,
//!   with their address and length; the data stream is, per request,
//!   `ceil(len/64)` beats whose first `len` bytes are the frame's bytes
//!   `[off, off + len)` (computed from the frame bytes, not from lanes);
//! - a token is offered only after every write commanded before it had its
//!   `wr_done`; tokens come out in order with their data;
//! - every beat of every frame is taken, no beat of a frame before one of
//!   its commands was accepted; never more than `OUTS` requests without
//!   `wr_done`;
//! - `ev_write`/`ev_bytes` pulse once per request, as it is first offered;
//! - valid/ready: an offer not taken stays unchanged;
//! - no stall: in the full-speed cases (every ready high, commands and
//!   beats always offered, `wr_done` 2 cycles after a request's last beat)
//!   frame f's last beat is taken by cycle `4 + sum over frames <= f of
//!   (1 + B + S + Z) + sum over tokens before it of 6`, B its beats, S its
//!   non-empty segments, Z its zero-length commands: one beat a cycle; and
//!   frame by frame (no token in between), within 1 + B + S + Z cycles of
//!   the previous frame's last beat, plus the previous frame's S + Z (what
//!   of it may follow its last beat).
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`.

mod common;

use std::collections::VecDeque;

use rnic_model::rx_wr::{RxWr, RxWrIn, RxWrOut, OUTS, TOK_W};
use rnic_model::Beat;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRxWr;

const DEFAULT_CASES: u64 = 24;
const DEFAULT_SEED: u64 = 0x7278_5F77_725F_5F5F; // "rx_wr___"
/// Frames per case; every fourth is at least 1024 bytes long.
const FRAMES: usize = 120;
const MAX_CYCLES: u64 = 400_000;
/// Full-speed done latency (cycles after a request's last data beat).
const FAST_DONE: u64 = 2;

#[derive(Debug, Clone, Copy)]
enum Item {
    /// A WRITE command of frame `f`.
    Write {
        f: usize,
        off: u16,
        len: u16,
        addr: u64,
        last: bool,
    },
    Token(Beat),
}

struct Write {
    f: usize,
    off: usize,
    len: usize,
    addr: u64,
}

struct WrEnv {
    rng: SplitMix64,
    fast: bool,
    cmd_pct: u8,
    in_pct: u8,
    req_pct: u8,
    data_pct: u8,
    tok_pct: u8,
    done_max: u64,
    frames: Vec<Vec<u8>>,
    items: Vec<Item>,
    /// Non-empty writes in command order.
    writes: Vec<Write>,
    /// Per token (in order): writes commanded before it.
    tok_after: Vec<usize>,
    tokens: Vec<Beat>,
    /// Per frame: the full-speed bound of its last beat's cycle.
    budget: Vec<u64>,
    /// Per frame: 1 + B + S + Z; S + Z (what may follow its last beat);
    /// whether a token came before it.
    cost: Vec<u64>,
    trail: Vec<u64>,
    tok_before: Vec<bool>,
    // Progress.
    next_item: usize,
    /// The frame of the last command accepted (its commands started).
    cmds_of: Vec<bool>,
    in_frame: usize,
    in_beat: usize,
    frame_done_at: Vec<Option<u64>>,
    reqs_taken: usize,
    data_beats: usize,
    /// Per write (by index): data beats seen.
    beats_of: Vec<usize>,
    /// Simulated dma_wr: writes whose completion is due, with the cycle.
    done_due: VecDeque<u64>,
    next_complete: usize,
    dones: usize,
    toks_taken: usize,
    tok_seen: bool,
    ev_writes: usize,
    prev_in: RxWrIn,
    prev_out: RxWrOut,
    outs_max: usize,
    zero_len: usize,
    shared: usize,
    /// Full speed: the least margin of a frame's last beat to its bound,
    /// cumulative and frame by frame.
    slack: u64,
    frame_slack: u64,
}

fn beats_of(frame: &[u8]) -> usize {
    frame.len().div_ceil(64)
}

impl WrEnv {
    fn new(seed: u64, case_mode: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let fast = case_mode.is_multiple_of(4);
        let slow_done = case_mode % 4 == 3;
        let pick = |rng: &mut SplitMix64, v: &[u8]| v[rng.below(v.len() as u64) as usize];
        let (cmd_pct, in_pct, req_pct, data_pct, tok_pct) = if fast {
            (100, 100, 100, 100, 100)
        } else {
            (
                pick(&mut rng, &[100, 70, 30]),
                pick(&mut rng, &[100, 80, 40]),
                pick(&mut rng, &[100, 60, 20]),
                pick(&mut rng, &[100, 80, 40]),
                pick(&mut rng, &[100, 50, 10]),
            )
        };
        let done_max = if slow_done { 60 } else { 8 };
        let mut frames = Vec::new();
        let mut items = Vec::new();
        let mut writes = Vec::new();
        let mut tok_after = Vec::new();
        let mut tokens = Vec::new();
        let mut budget = Vec::new();
        let mut cost = Vec::new();
        let mut trail = Vec::new();
        let mut tok_before = Vec::new();
        let mut acc = 4u64;
        let mut zero_len = 0;
        for f in 0..FRAMES {
            let len = if f % 4 == 3 {
                1024 + rng.below(8192 - 1024) as usize
            } else if slow_done || rng.percent(50) {
                1 + rng.below(256) as usize
            } else {
                1 + rng.below(1500) as usize
            };
            let bytes: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            let after_tok = matches!(items.last(), Some(Item::Token(_)));
            // Segments: increasing, non-overlapping, inside the frame.
            let nseg = 1 + rng.below(5) as usize;
            let mut cur = 0usize;
            let (mut s, mut z) = (0u64, 0u64);
            let mut cmds = Vec::new();
            for k in 0..nseg {
                let gap = match rng.below(4) {
                    0 => 0,
                    1 => rng.below(8) as usize,
                    _ => rng.below((len - cur) as u64 / 2 + 1) as usize,
                };
                let off = (cur + gap).min(len);
                let room = len - off;
                let seg = match rng.below(6) {
                    0 => 0,
                    1 => room,
                    2 => rng.below(room.min(70) as u64 + 1) as usize,
                    _ => rng.below(room as u64 + 1) as usize,
                };
                let seg = if f.is_multiple_of(5) && k == 0 {
                    0
                } else {
                    seg
                };
                if seg == 0 {
                    z += 1;
                } else {
                    s += 1;
                    writes.push(Write {
                        f,
                        off,
                        len: seg,
                        addr: rng.next_u64(),
                    });
                }
                cmds.push((off, seg, writes.last().map_or(0, |w| w.addr)));
                cur = off + seg;
            }
            zero_len += z as usize;
            for (k, &(off, seg, addr)) in cmds.iter().enumerate() {
                items.push(Item::Write {
                    f,
                    off: off as u16,
                    len: seg as u16,
                    addr: if seg == 0 { rng.next_u64() } else { addr },
                    last: k + 1 == cmds.len(),
                });
            }
            acc += 1 + beats_of(&bytes) as u64 + s + z;
            budget.push(acc);
            cost.push(1 + beats_of(&bytes) as u64 + s + z);
            trail.push(s + z);
            tok_before.push(after_tok);
            frames.push(bytes);
            if f % 3 == 2 || rng.percent(10) {
                let mut t = Beat::default();
                for x in t.iter_mut().take(TOK_W as usize / 8) {
                    *x = rng.next_u64() as u8;
                }
                tok_after.push(writes.len());
                tokens.push(t);
                items.push(Item::Token(t));
                acc += 3 + FAST_DONE + 1;
            }
        }
        let nw = writes.len();
        WrEnv {
            rng,
            fast,
            cmd_pct,
            in_pct,
            req_pct,
            data_pct,
            tok_pct,
            done_max,
            cmds_of: vec![false; frames.len()],
            frame_done_at: vec![None; frames.len()],
            frames,
            items,
            writes,
            tok_after,
            tokens,
            budget,
            cost,
            trail,
            tok_before,
            next_item: 0,
            in_frame: 0,
            in_beat: 0,
            reqs_taken: 0,
            data_beats: 0,
            beats_of: vec![0; nw],
            done_due: VecDeque::new(),
            next_complete: 0,
            dones: 0,
            toks_taken: 0,
            tok_seen: false,
            ev_writes: 0,
            prev_in: RxWrIn::default(),
            prev_out: RxWrOut::default(),
            outs_max: 0,
            zero_len,
            shared: 0,
            slack: u64::MAX,
            frame_slack: u64::MAX,
        }
    }

    /// The write the next data beat belongs to, and that beat's index in it.
    fn data_slot(&self) -> Option<(usize, usize)> {
        let mut n = self.data_beats;
        for (w, wr) in self.writes.iter().enumerate() {
            let b = wr.len.div_ceil(64);
            if n < b {
                return Some((w, n));
            }
            n -= b;
        }
        None
    }

    fn check(&mut self, cycle: u64, o: &RxWrOut) {
        let pi = self.prev_in;
        let po = self.prev_out;
        // Offers not taken stay put.
        if po.wr_req_valid && !pi.wr_req_ready {
            assert!(
                o.wr_req_valid && (o.wr_req_addr, o.wr_req_len) == (po.wr_req_addr, po.wr_req_len),
                "cycle {cycle}: a request not taken changed"
            );
        }
        if po.wr_data_valid && !pi.wr_data_ready {
            assert!(
                o.wr_data_valid && o.wr_data == po.wr_data,
                "cycle {cycle}: a data beat not taken changed"
            );
        }
        if po.tok_valid && !pi.tok_ready {
            assert!(
                o.tok_valid && o.tok_data == po.tok_data,
                "cycle {cycle}: a token not taken changed"
            );
        }
        // ev_write: once per request, as it is first offered.
        let new_req = o.wr_req_valid && (!po.wr_req_valid || pi.wr_req_ready);
        assert_eq!(o.ev_write, new_req, "cycle {cycle}: ev_write");
        if o.ev_write {
            assert_eq!(o.ev_bytes as u32, o.wr_req_len, "cycle {cycle}: ev_bytes");
            self.ev_writes += 1;
        } else {
            assert_eq!(o.ev_bytes, 0, "cycle {cycle}: ev_bytes without ev_write");
        }
        // A token, when first offered: every earlier write completed.
        if o.tok_valid && !self.tok_seen {
            let t = self.toks_taken;
            assert!(
                t < self.tokens.len(),
                "cycle {cycle}: a token never commanded"
            );
            assert!(
                self.dones >= self.tok_after[t],
                "cycle {cycle}: token {t} offered after {} wr_done, {} writes before it",
                self.dones,
                self.tok_after[t]
            );
            self.tok_seen = true;
        }
    }

    fn on_transfers(&mut self, cycle: u64, o: &RxWrOut, i: &RxWrIn) {
        if i.wc_valid && o.wc_ready {
            if let Item::Write { f, .. } = self.items[self.next_item] {
                self.cmds_of[f] = true;
            }
            self.next_item += 1;
        }
        if i.in_valid && o.in_ready {
            let f = self.in_frame;
            assert!(
                self.cmds_of[f],
                "cycle {cycle}: frame {f} taken before any of its commands"
            );
            self.in_beat += 1;
            if self.in_beat == beats_of(&self.frames[f]) {
                self.frame_done_at[f] = Some(cycle);
                if self.fast {
                    assert!(
                        cycle <= self.budget[f],
                        "cycle {cycle}: frame {f}'s last beat taken after its bound {}",
                        self.budget[f]
                    );
                    self.slack = self.slack.min(self.budget[f] - cycle);
                    // Frame by frame (no token in between): within
                    // 1 + B + S + Z cycles of the previous frame's last
                    // beat, plus what of the previous frame may follow its
                    // last beat (its zero-length commands, an emit-only
                    // cycle per segment).
                    if f > 0 && !self.tok_before[f] {
                        let prev = self.frame_done_at[f - 1].expect("in order");
                        let bound = self.cost[f] + self.trail[f - 1];
                        assert!(
                            cycle - prev <= bound,
                            "cycle {cycle}: frame {f} took {} cycles after frame {}, bound {bound}",
                            cycle - prev,
                            f - 1,
                        );
                        self.frame_slack = self.frame_slack.min(bound - (cycle - prev));
                    }
                }
                self.in_frame += 1;
                self.in_beat = 0;
            }
        }
        if o.wr_req_valid && i.wr_req_ready {
            let k = self.reqs_taken;
            assert!(
                k < self.writes.len(),
                "cycle {cycle}: a request never commanded"
            );
            let w = &self.writes[k];
            assert_eq!(
                (o.wr_req_addr, o.wr_req_len as usize),
                (w.addr, w.len),
                "cycle {cycle}: request {k}"
            );
            self.reqs_taken += 1;
        }
        if o.wr_data_valid && i.wr_data_ready {
            let (w, b) = self
                .data_slot()
                .unwrap_or_else(|| panic!("cycle {cycle}: a data beat never commanded"));
            let wr = &self.writes[w];
            let lo = wr.off + 64 * b;
            let hi = (wr.off + wr.len).min(lo + 64);
            let want = &self.frames[wr.f][lo..hi];
            assert_eq!(
                &o.wr_data.0[..hi - lo],
                want,
                "cycle {cycle}: write {w} (frame {} bytes {}..{}) beat {b}",
                wr.f,
                wr.off,
                wr.off + wr.len
            );
            if b == 0 && !wr.off.is_multiple_of(64) && wr.len > 64 - wr.off % 64 {
                self.shared += 1;
            }
            self.beats_of[w] += 1;
            self.data_beats += 1;
        }
        if o.tok_valid && i.tok_ready {
            let t = self.toks_taken;
            assert_eq!(
                o.tok_data, self.tokens[t],
                "cycle {cycle}: token {t}'s data"
            );
            self.toks_taken += 1;
            self.tok_seen = false;
        }
        // The simulated dma_wr: a write completes once its request and all
        // its beats were taken, in order.
        while self.next_complete < self.reqs_taken
            && self.beats_of[self.next_complete] == self.writes[self.next_complete].len.div_ceil(64)
        {
            let lat = if self.fast {
                FAST_DONE
            } else {
                1 + self.rng.below(self.done_max)
            };
            let due = (cycle + lat).max(self.done_due.back().map_or(0, |&d| d + 1));
            self.done_due.push_back(due);
            self.next_complete += 1;
        }
        let outs = self.reqs_taken - self.dones;
        assert!(outs <= OUTS, "cycle {cycle}: {outs} requests outstanding");
        self.outs_max = self.outs_max.max(outs);
    }
}

impl Env for WrEnv {
    type In = RxWrIn;
    type Out = RxWrOut;

    fn step(&mut self, cycle: u64, o: &RxWrOut) -> RxWrIn {
        self.check(cycle, o);
        let mut i = RxWrIn::default();
        // Commands: an offer stays until taken.
        if self.next_item < self.items.len() {
            let held = self.prev_in.wc_valid && !self.prev_out.wc_ready;
            if held || self.rng.percent(self.cmd_pct) {
                i.wc_valid = true;
                match self.items[self.next_item] {
                    Item::Write {
                        off,
                        len,
                        addr,
                        last,
                        ..
                    } => {
                        i.wc_off = off;
                        i.wc_len = len;
                        i.wc_addr = addr;
                        i.wc_last = last;
                    }
                    Item::Token(t) => {
                        i.wc_tok = true;
                        i.wc_tok_data = t;
                    }
                }
            }
        }
        // Beats: rx_buf's output FIFO keeps an offer until it is taken.
        if self.in_frame < self.frames.len() {
            let held = self.prev_in.in_valid && !self.prev_out.in_ready;
            if held || self.rng.percent(self.in_pct) {
                let fr = &self.frames[self.in_frame];
                let lo = 64 * self.in_beat;
                let hi = fr.len().min(lo + 64);
                i.in_valid = true;
                i.in_data.0[..hi - lo].copy_from_slice(&fr[lo..hi]);
                i.in_last = hi == fr.len();
                i.in_keep = if hi - lo == 64 {
                    u64::MAX
                } else {
                    (1u64 << (hi - lo)) - 1
                };
            }
        }
        i.wr_req_ready = self.rng.percent(self.req_pct);
        i.wr_data_ready = self.rng.percent(self.data_pct);
        i.tok_ready = self.rng.percent(self.tok_pct);
        if self.done_due.front().is_some_and(|&d| d <= cycle) {
            self.done_due.pop_front();
            i.wr_done_valid = true;
        }
        self.on_transfers(cycle, o, &i);
        if i.wr_done_valid {
            self.dones += 1;
        }
        self.prev_in = i;
        self.prev_out = *o;
        i
    }

    fn finished(&self) -> bool {
        self.next_item == self.items.len()
            && self.in_frame == self.frames.len()
            && self.dones == self.writes.len()
            && self.toks_taken == self.tokens.len()
            && !self.prev_out.wr_data_valid
    }
}

#[test]
fn rx_wr_random_lockstep() {
    let (mut total, mut frames, mut writes, mut beats, mut toks) = (0, 0, 0, 0, 0);
    let (mut zero, mut shared, mut outs_max, mut k) = (0, 0, 0, 0u64);
    let (mut slack, mut frame_slack) = (u64::MAX, u64::MAX);
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = WrEnv::new(seed, k);
        k += 1;
        let fin = lockstep::run(&mut RxWr::new(), &mut RtlRxWr::new(), &mut env, MAX_CYCLES)
            .unwrap_or_else(|d| panic!("{d}"));
        assert!(
            fin.completed,
            "case not finished in {MAX_CYCLES} cycles: items {}/{}, frames {}/{}, \
             dones {}/{}, tokens {}/{}",
            env.next_item,
            env.items.len(),
            env.in_frame,
            env.frames.len(),
            env.dones,
            env.writes.len(),
            env.toks_taken,
            env.tokens.len()
        );
        assert_eq!(env.reqs_taken, env.writes.len(), "every write requested");
        assert_eq!(env.ev_writes, env.writes.len(), "one ev_write per request");
        assert!(env.data_slot().is_none(), "every data beat delivered");
        total += fin.cycles;
        frames += env.frames.len();
        writes += env.writes.len();
        beats += env.data_beats;
        toks += env.tokens.len();
        zero += env.zero_len;
        shared += env.shared;
        outs_max = outs_max.max(env.outs_max);
        slack = slack.min(env.slack);
        frame_slack = frame_slack.min(env.frame_slack);
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        writes >= 5_000 && shared >= 1_000 && outs_max == OUTS
    });
    println!(
        "rx_wr: {} cases, {total} cycles, {frames} frames, {writes} writes, {beats} data beats, \
         {toks} tokens, {zero} zero-length commands, {shared} writes straddling beats, \
         at most {outs_max} outstanding, least full-speed slack {slack} cycles \
         ({frame_slack} frame by frame)",
        run.cases
    );
    if run.full {
        // By construction: FRAMES frames a case, every fourth of at least
        // 16 beats (each taken in a cycle of its own), every third frame
        // followed by a token, every fifth with a zero-length command.
        let n = run.cases as usize;
        assert_eq!(frames, n * FRAMES);
        assert!(total >= (n * FRAMES / 4 * 16) as u64, "only {total} cycles");
        assert!(toks >= n * FRAMES / 3, "{toks} tokens");
        assert!(zero >= n * FRAMES / 5, "{zero} zero-length commands");
        // Measured on the default run (slow wr_done cases hit the bound).
        assert!(writes >= 5_000, "few writes ({writes})");
        assert!(shared >= 1_000, "few writes straddling beats ({shared})");
        assert_eq!(outs_max, OUTS, "the outstanding bound never reached");
    }
}
