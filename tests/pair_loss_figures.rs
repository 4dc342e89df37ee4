//! Go-back-N retransmission under loss (issue 12, section 6), measured in
//! lockstep under every independent check of a pair run (docs/pair.md),
//! the go-back-N order check (`gbn_check`) included.
//!
//! **Goodput against loss.** The shipped 64 KiB goodput vectors
//! (`vectors/pair/rc_write_64k_rtt500.json`, `rc_read_64k_rtt500.json`:
//! one RC QP, MTU 4096, 250 cycles each way, the sender's host answering
//! reads after 100 cycles in 512-byte completions) are changed here, not
//! copied into new files: 256 messages instead of 8 (their buffers reused
//! every 32 messages, as the MRs hold 2 MiB), posted at once (SQ and CQ
//! rings of 512), every RC QP of both hosts with a local ACK timeout (the
//! code derived below) and retry_cnt 7, and the link direction that carries
//! the data (A to B for WRITE, B's READ responses B to A) losing frames at
//! random: `{"drop": {"per_million": P, "seed": 1}}` for P = 0, 100, 1,000
//! and 10,000 (1e-4 .. 1e-2). One seed for all: a frame's draw does not
//! depend on P, so a lower rate loses a subset of the frames a higher one
//! loses (as long as the frame sequences agree). 4,096 data frames: the
//! expected losses are 0.4, 4 and 41; the counts are the link's record.
//!
//! Goodput = the messages' payload (each delivered once: the harness
//! checks B's memory, every CQE at A with status 0) over the cycles from
//! the first data frame's first beat to the last one's last beat. The
//! cost of go-back-N in frames: sent - needed = the frames resent.
//!
//! Contracts: every rate completes every WQE with status 0 and a clean
//! report; the frames resent are at least the frames lost (go-back-N
//! cannot recover a frame without sending it again); loss 0 keeps
//! `tests/pair_figures.rs`'s >= 95 % of the host completion bound; and for
//! WRITE a lower bound on goodput derived from the pipeline (below,
//! [`write_span_bound`]). For READ no such bound is asserted: a rewind
//! makes A ask again for every READ after the lost response, B's
//! `rd_resp` refuses the duplicates its full ring cannot hold
//! (READ_JOB_FULL, timing the testbench does not predict,
//! docs/responder.md) and each refusal costs A a local ACK timeout, so
//! the idle time is not bounded by anything the run's loss pattern fixes.
//!
//! **Reaction times** (small deterministic pairs from the same hosts,
//! three 64-byte WRITEs on one QP): (a) a sequence NAK's last beat at A's
//! `rx_*` to the first beat of the resent frame on `tx_*`, (b) the local
//! ACK timer's nominal expiry (last progress + `T_UNIT << timeout`) to
//! the same. Both are derived cycle by cycle from the block contracts
//! (decomposition at [`nak_to_resend`]) and asserted exactly, at host read
//! latencies 100 and 300; the timer's expiry is a window of QPS cycles
//! (its scanner's resolution), and the exact cycle follows from the scan
//! slot.

mod common;
use common::figures;

use std::path::{Path, PathBuf};

use rnic_testbench::env::Direction;
use rnic_testbench::scenario::pair::{self, PairReport};
use rnic_testbench::scenario::{Mode, RunOpts};
use rnic_testbench::vector::SystemVector;
use rnic_testbench::wire::roce::RoceRepr;
use rnic_testbench::wire::tlp::{Tlp, TlpKind};
use serde_json::{json, Value};

/// The local ACK timer's unit: 4.096 us at 250 MHz (docs/retx_ctl.md).
const T_UNIT: u64 = 1024;
/// QPs of `retx_ctl`'s scanner: it decides each QP once every QPS cycles.
const QPS: u64 = rnic_testbench::vector::QPS as u64;
/// `sq_fetch` reads at most BATCH WQEs at once (docs/tx_datapath.md).
const BATCH: u64 = 4;

/// Messages per goodput run and the link's seed.
const MSGS: usize = 256;
const SEED: u64 = 1;
/// Loss rates, per million frames.
const RATES: [u32; 4] = [0, 100, 1_000, 10_000];

/// BTH opcodes.
const ACK: u8 = 0x11;
const READ_REQUEST: u8 = 0x0C;
/// AETH syndrome of a PSN sequence error NAK.
const NAK_SEQ: u8 = 0x60;

/// 64-byte beats of a frame of `len` bytes.
fn beats(len: usize) -> u64 {
    len.div_ceil(64) as u64
}

fn hex(v: &Value) -> u64 {
    let s = v.as_str().expect("a hex string");
    u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex")
}

/// The shipped vector `vectors/pair/NAME.json` as JSON, and its path.
fn load_json(name: &str) -> (PathBuf, Value) {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("vectors/pair/{name}.json"));
    let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    (f, serde_json::from_str(&text).expect("JSON"))
}

/// Every RC QP of both hosts: local ACK timeout `code`, retry_cnt 7.
fn set_retry(v: &mut Value, code: u8) {
    for h in ["a", "b"] {
        for q in v[h]["qps"].as_array_mut().expect("qps") {
            if q["type"] == "rc" {
                q["timeout"] = json!(code);
                q["retry_cnt"] = json!(7);
            }
        }
    }
}

/// `v` with A's WQEs replaced by `n` copies of its first one, of `len`
/// bytes, message k at offset `(k mod 32) x 64 KiB` of the first one's
/// local and remote buffers (the MRs hold 2 MiB), all posted at once.
fn set_wqes(v: &mut Value, n: usize, len: u64) {
    let w0 = v["a"]["wqes"][0].clone();
    let wqes: Vec<Value> = (0..n as u64)
        .map(|k| {
            let mut w = w0.clone();
            let off = (k % 32) << 16;
            w["len"] = json!(len);
            w["laddr"] = json!(format!("{:#x}", hex(&w0["laddr"]) + off));
            w["raddr"] = json!(format!("{:#x}", hex(&w0["raddr"]) + off));
            w["wr_id"] = json!(format!("{:#x}", 0x5e00_0000 + k));
            w["imm"] = json!(format!("{:#x}", 0x1a_0000 + k));
            w
        })
        .collect();
    v["a"]["wqes"] = json!(wqes);
    // Room for all of them at once: 512-entry send queues and CQs.
    for q in v["a"]["qps"].as_array_mut().expect("qps") {
        q["sq"]["log_size"] = json!(9);
    }
    for c in v["a"]["cqs"].as_array_mut().expect("cqs") {
        c["ring"]["log_size"] = json!(9);
    }
    v["a"]["program"] = json!([
        {"wait_until": {"cycle": 400}},
        {"post_send": {"qp": 0, "wqes": n}}
    ]);
    v.as_object_mut().expect("an object").remove("expect");
}

fn finish(f: &Path, v: Value) -> SystemVector {
    SystemVector::from_json(f, v).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `v` in lockstep; the report must be clean and the run complete.
fn run_clean(v: &SystemVector, what: &str) -> PairReport {
    let r = pair::run(v, Mode::Lockstep, &RunOpts::default()).expect("a pair");
    assert!(
        r.report.clean() && r.report.completed,
        "{what}: divergence {:?}, failures {:?}, completed {}",
        r.report.divergence,
        r.report.failures,
        r.report.completed
    );
    r
}

/// The sender's time per 4 KiB frame at its host's completion rate: an
/// MTU of payload arrives in `cpl_size`-byte completions, each a 12-byte
/// header and its data on new 64-byte beats of `rc_*` (tests/pair_figures.rs):
/// 8 x 9 = 72 cycles at MTU 4096 and 512-byte completions.
fn frame_cycles(mtu: u64, cpl: u64) -> u64 {
    mtu.div_ceil(cpl) * (12 + cpl).div_ceil(64)
}

// ---------------------------------------------------------------------
// The local ACK timeout.

/// 4 KiB frames the transmit path can hold committed ahead of the wire:
/// `pkt_builder`'s payload RAM (PAY_BEATS 256 x 64 B = 16 KiB: 4), `dma_rd`'s
/// buffer in `rnic_top` (BUF_LINES 512 x 64 B: 8), the payload requests
/// queued before `dma_rd` splits them (`rd_req_arb`'s skid, `dma_rd`'s
/// 2-entry request FIFO and its splitter: 4) and `tx_engine`'s step (1).
/// `ack_tracker` counts a packet sent, and so `retx_ctl`'s timer runs for
/// it, from its commit in `tx_engine`, up to this many frames before it
/// leaves.
const PIPE_FRAMES: u64 = 17;

/// B's ACK turnaround: it leaves 18 cycles after the request arrived, one
/// beat (README, "Two NICs", latency).
const ACK_TURN: u64 = 19;

/// B's READ turnaround: its first response 131 cycles after the request
/// arrived at host latency 100 (README, latency: the payload MRd 22
/// cycles after the request, the host's latency, the response 9 after the
/// completion): latency + 31.
const READ_TURN: u64 = 31;

/// The longest the requester waits for progress while it has requests
/// out and nothing was lost since the timer (re)started: the timer must
/// not fire then (a spurious timeout costs a rewind; on a READ stream its
/// duplicates fill B's job ring and cost more timeouts). Cycles.
///
/// WRITE: ACKs come per message (AckReq on the LAST only), so a packet
/// committed first in its message waits for the pipeline ahead of it,
/// its whole message, the LAST's flight and B's ACK:
/// `(PIPE_FRAMES + n) T_f + 2 (delay + 1) + frame + ACK_TURN`.
///
/// READ: after a lost response A asks again for the rest; before B
/// answers it, B sends the responses of every READ its ring already holds
/// (max_dest_rd_atomic of n frames), then up to n frames of the one asked
/// again: A's re-request (its WQE read and the request, `L_A + 2 BATCH +
/// 30` by the path of [`nak_to_resend`] without a payload), the request's
/// flight (2 beats), B's turnaround, the last response's flight.
fn progress_wait(v: &SystemVector, read: bool) -> u64 {
    let qa = &v.a.qps[0];
    let n = 65536u64.div_ceil(qa.mtu as u64);
    let d = v.link.a_to_b.delay + 1 + v.link.b_to_a.delay + 1;
    if read {
        let tf = frame_cycles(qa.mtu as u64, v.b.root_complex.cpl_size as u64);
        let rd = v.b.qps[0].max_dest_rd_atomic.max(1) as u64;
        let la = v.a.root_complex.latency as u64;
        let lb = v.b.root_complex.latency as u64;
        (la + 2 * BATCH + 30) + 2 + d + (lb + READ_TURN) + (rd * n + n) * tf
    } else {
        let tf = frame_cycles(qa.mtu as u64, v.a.root_complex.cpl_size as u64);
        (PIPE_FRAMES + n) * tf + d + beats(qa.mtu as usize + 58) + ACK_TURN
    }
}

/// The smallest timeout code whose period is at least 1.5 times `wait`.
fn timeout_code(wait: u64) -> u8 {
    (1..=31u8)
        .find(|&c| (T_UNIT << c) * 2 >= 3 * wait)
        .expect("a code")
}

// ---------------------------------------------------------------------
// Goodput against loss.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Write,
    Read,
}

impl Kind {
    fn vector(self) -> &'static str {
        match self {
            Kind::Write => "rc_write_64k_rtt500",
            Kind::Read => "rc_read_64k_rtt500",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Write => "WRITE",
            Kind::Read => "READ",
        }
    }

    /// The link direction of the data: A to B (WRITE), B to A (READ
    /// responses).
    fn dir(self) -> usize {
        match self {
            Kind::Write => 0,
            Kind::Read => 1,
        }
    }

    fn is_data(self, op: u8) -> bool {
        match self {
            Kind::Write => matches!(op, 0x06..=0x08 | 0x0A),
            Kind::Read => (0x0D..=0x10).contains(&op),
        }
    }
}

/// The goodput vector of `kind` with `MSGS` messages, timeout `code`, and
/// the data direction dropping `per_million` frames.
fn lossy(kind: Kind, code: u8, per_million: u32) -> SystemVector {
    let (f, mut v) = load_json(kind.vector());
    set_wqes(&mut v, MSGS, 65536);
    set_retry(&mut v, code);
    if per_million > 0 {
        let d = ["a_to_b", "b_to_a"][kind.dir()];
        v["link"][d]["faults"] = json!([{"drop": {"per_million": per_million, "seed": SEED}}]);
    }
    // Room for the slowest rate (READ at 1e-2 ends near 700,000).
    v["max_cycles"] = json!(4_000_000);
    finish(&f, v)
}

/// What one goodput run measured.
struct Goodput {
    lost: u64,
    sent: u64,
    /// First beat of the first data frame.
    first: u64,
    needed: u64,
    /// First data frame's first beat to the last one's last beat.
    span: u64,
    /// A's rewinds: PSN jumps back in its request stream; of them caused
    /// by a sequence NAK (WRITE).
    rewinds: u64,
    by_nak: u64,
    /// Sequence NAK (last beat at A) to the first beat of its resend, and
    /// old-sequence frames in between: per NAK (WRITE).
    nak_resend: Vec<(u64, u64)>,
    /// B's READ_JOB_FULL (READ).
    refused: u64,
}

fn measure(kind: Kind, v: &SystemVector, r: &PairReport) -> Goodput {
    let data: Vec<(&pair::LinkFrame, RoceRepr)> = r.links[kind.dir()]
        .iter()
        .map(|f| (f, RoceRepr::parse_bytes(&f.bytes).expect("a good frame")))
        .filter(|(_, p)| kind.is_data(p.bth.opcode))
        .collect();
    let first = data.first().expect("data frames").0.first;
    let end = data
        .iter()
        .map(|(f, _)| f.first + beats(f.bytes.len()))
        .max()
        .expect("data frames");
    let lost = data.iter().filter(|(f, _)| f.lost()).count() as u64;
    let needed = v.a.wqes.iter().map(|w| w.len.div_ceil(4096) as u64).sum();
    // A's request stream (WRITE frames, or READ REQUESTs) and its rewinds.
    let reqs: Vec<(u64, u32)> = r.links[0]
        .iter()
        .filter_map(|f| {
            let p = RoceRepr::parse_bytes(&f.bytes).expect("a good frame");
            let req = match kind {
                Kind::Write => kind.is_data(p.bth.opcode),
                Kind::Read => p.bth.opcode == READ_REQUEST,
            };
            req.then_some((f.first, p.bth.psn))
        })
        .collect();
    let naks: Vec<(u64, u32)> = r.times[0]
        .rx
        .iter()
        .filter_map(|x| {
            let p = RoceRepr::parse_bytes(&x.bytes).expect("a good frame");
            let a = p.aeth?;
            (p.bth.opcode == ACK && a.syndrome == NAK_SEQ).then_some((x.last, p.bth.psn))
        })
        .collect();
    let (mut rewinds, mut by_nak) = (0, 0);
    let mut since = 0;
    for w in reqs.windows(2) {
        let ((_, prev), (c, psn)) = (w[0], w[1]);
        let run_on = match kind {
            Kind::Write => psn == (prev + 1) & 0xFF_FFFF,
            // A READ REQUEST follows the READ before it by its responses.
            Kind::Read => psn.wrapping_sub(prev) & 0xFF_FFFF <= 16 && psn != prev,
        };
        if run_on {
            continue;
        }
        rewinds += 1;
        if naks.iter().any(|&(t, p)| p == psn && t > since && t < c) {
            by_nak += 1;
        }
        since = c;
    }
    let nak_resend = naks
        .iter()
        .filter_map(|&(t, psn)| {
            let k = reqs.iter().position(|&(c, p)| c > t && p == psn)?;
            let old = reqs.iter().filter(|&&(c, _)| c > t).count() - (reqs.len() - k);
            Some((reqs[k].0 - t, old as u64))
        })
        .collect();
    let refused = r.b.counters.get("read_job_full").copied().unwrap_or(0);
    Goodput {
        lost,
        sent: data.len() as u64,
        first,
        needed,
        span: end - first,
        rewinds,
        by_nak,
        nak_resend,
        refused,
    }
}

/// The WRITE contract: the most cycles the data can take, derived from
/// the pipeline. Every frame sent costs the host's completion stream
/// `T_f` (the stream is host-bound: tests/pair_figures.rs), the loss-free
/// run may take up to 1/0.95 of its frames' time (its contract), and each
/// rewind may leave the wire idle for at most what an idle engine takes
/// from the cause to a resent 4 KiB frame: the path of [`nak_to_resend`]
/// with a full batch of WQE reads (W = BATCH) and 70 more completion
/// beats for the 4 KiB payload (8 completions of 9 beats instead of 2):
/// `B = 2 L + 37 + 2 BATCH + 70`. A rewind by the timer waits for it as
/// well, at most its period plus two scans: `P + 2 QPS + B`.
fn write_span_bound(g: &Goodput, tf: u64, l: u64, period: u64) -> (u64, u64) {
    let b = 2 * l + 37 + 2 * BATCH + 70;
    let loss_free = (g.needed * tf) as f64 / 0.95;
    let timer = g.rewinds - g.by_nak;
    let bound = loss_free as u64
        + g.sent.saturating_sub(g.needed) * tf
        + g.by_nak * b
        + timer * (period + 2 * QPS + b);
    (bound, b)
}

const GOODPUT_HEADER: &[&str] = &[
    "stream",
    "loss rate",
    "frames lost",
    "data frames sent / needed",
    "resent per lost frame",
    "rewinds (WRITE: by NAK; READ: READs refused at B)",
    "NAK to resend, cycles (old frames after the NAK)",
    "cycles",
    "cycles beyond 72 per frame sent",
    "goodput B/cycle (Gb/s)",
    "% of the loss-free host bound",
    "contract",
];

fn goodput_series(kind: Kind) {
    let probe = lossy(kind, 1, 0);
    let wait = progress_wait(&probe, kind == Kind::Read);
    let code = timeout_code(wait);
    let period = T_UNIT << code;
    println!(
        "{}: longest wait for progress {wait} cycles -> timeout code {code} ({period} cycles, \
         {:.2}x)",
        kind.name(),
        period as f64 / wait as f64
    );
    let sender = [&probe.a, &probe.b][kind.dir()];
    let tf = frame_cycles(
        probe.a.qps[0].mtu as u64,
        sender.root_complex.cpl_size as u64,
    );
    let l = sender.root_complex.latency as u64;
    let host = 4096.0 / tf as f64;
    // The table's header names T_f.
    assert_eq!(tf, 72, "T_f of the goodput vectors");
    for pm in RATES {
        let v = lossy(kind, code, pm);
        let t0 = std::time::Instant::now();
        let r = run_clean(&v, &format!("{} at {pm} per million", kind.name()));
        let wall = t0.elapsed().as_secs_f64();
        // Every message completed at A, successfully, once.
        assert_eq!(r.a.cqes.len(), MSGS, "{}: a CQE per message", kind.name());
        assert!(r.a.cqes.iter().all(|c| c.status == 0 && c.len == 65536));
        let g = measure(kind, &v, &r);
        let payload = MSGS as u64 * 65536;
        let bpc = payload as f64 / g.span as f64;
        let resent = g
            .sent
            .checked_sub(g.needed)
            .expect("every frame needed was sent");
        // Go-back-N resends every frame it lost (and more).
        assert!(
            resent >= g.lost,
            "{}: {} frames lost, {resent} resent",
            kind.name(),
            g.lost
        );
        let rate = match pm {
            0 => "0".to_string(),
            100 => "1e-4".to_string(),
            1_000 => "1e-3".to_string(),
            10_000 => "1e-2".to_string(),
            p => format!("{p} per million"),
        };
        let mut contract = String::from("all complete");
        if pm == 0 {
            assert_eq!((g.lost, resent), (0, 0));
            assert!(
                bpc >= 0.95 * host,
                "{}: loss-free goodput {bpc:.2} is below 95 % of {host:.2}",
                kind.name()
            );
            contract += ", ≥ 95 % of bound";
        }
        if kind == Kind::Write {
            let (bound, b) = write_span_bound(&g, tf, l, period);
            println!(
                "  WRITE span bound: {} x {tf} / 0.95 + {resent} x {tf} + {} x {b} + {} x \
                 ({period} + {} + {b}) = {bound}",
                g.needed,
                g.by_nak,
                g.rewinds - g.by_nak,
                2 * QPS
            );
            assert!(
                g.span <= bound,
                "WRITE at {pm} per million: {} cycles, more than the derived {bound}",
                g.span
            );
            contract += &format!(", ≥ {:.2} B/cycle", payload as f64 / bound as f64);
        }
        let nak = if g.nak_resend.is_empty() {
            "–".to_string()
        } else {
            let range = |f: fn(&(u64, u64)) -> u64| {
                let it = || g.nak_resend.iter().map(f);
                (it().min().expect("some"), it().max().expect("some"))
            };
            let (c, o) = (range(|x| x.0), range(|x| x.1));
            format!("{}..{} ({}..{})", c.0, c.1, o.0, o.1)
        };
        let rewinds = match kind {
            Kind::Write => format!("{} ({})", g.rewinds, g.by_nak),
            Kind::Read => format!("{} ({} refused)", g.rewinds, g.refused),
        };
        println!(
            "{} {rate}: lost {}, sent {} of {} needed, {} cycles, {bpc:.2} B/cycle, rewinds {}, \
             NAK to resend {:?}, idle beyond the frames' host time {} cycles; A's last CQE \
             {} cycles after the first data frame; {wall:.1} s",
            kind.name(),
            g.lost,
            g.sent,
            g.needed,
            g.span,
            rewinds,
            g.nak_resend,
            g.span as i64 - (g.sent * tf) as i64,
            r.times[0].cqes.iter().map(|c| c.cycle).max().expect("CQEs") - g.first
        );
        let per_lost = if g.lost == 0 {
            "–".to_string()
        } else {
            format!("{:.1}", resent as f64 / g.lost as f64)
        };
        let key = format!("{}{pm:06}", if kind == Kind::Write { 1 } else { 2 });
        figures::row(
            "loss_goodput",
            GOODPUT_HEADER,
            &key,
            &[
                format!("{} ({MSGS} x 64 KiB, timeout {code})", kind.name()),
                rate,
                g.lost.to_string(),
                format!("{} / {}", g.sent, g.needed),
                per_lost,
                rewinds,
                nak,
                g.span.to_string(),
                (g.span as i64 - (g.sent * tf) as i64).to_string(),
                format!("{bpc:.2} ({:.1})", bpc * 8.0 * 0.25),
                format!("{:.1}", 100.0 * bpc / host),
                contract,
            ],
        );
    }
}

#[test]
fn write_goodput_under_loss() {
    goodput_series(Kind::Write);
}

#[test]
fn read_goodput_under_loss() {
    goodput_series(Kind::Read);
}

// ---------------------------------------------------------------------
// Reaction times.

/// Three 64-byte WRITEs on A's QP 0, posted at once, both hosts answering
/// reads after `lat` cycles, A to B dropping frame `drop` (0: the first,
/// so B NAKs the second; 2: the last, so nothing answers and the timer
/// must fire).
fn small(lat: u32, drop: u64, code: u8) -> SystemVector {
    let (f, mut v) = load_json(Kind::Write.vector());
    set_wqes(&mut v, 3, 64);
    set_retry(&mut v, code);
    for h in ["a", "b"] {
        v[h]["root_complex"]["latency"] = json!(lat);
    }
    v["link"]["a_to_b"]["faults"] = json!([{"drop": {"index": drop}}]);
    finish(&f, v)
}

/// The cycles from a rewind's cause to the first beat of the resent
/// frame, for a requester with nothing in flight (each stage's latency
/// from its contract; "visible at" as in docs/tx_datapath.md):
///
/// - a sequence NAK whose last beat is on `rx_*` at t: `rx_parser`'s
///   `ack_*` visible at t + 2 (rx_cc.md), `ack_tracker`'s `nak_*` at t + 3
///   (the cycle after it takes it), `retx_ctl`'s `rw_*` at t + 5 (NAK at n
///   -> rw at n + 2, retx_ctl.md). For a timeout decided by the scan at m,
///   `rw_*` is visible at m + 2 the same way. Call that cycle R.
/// - `tx_engine` in S_IDLE raises `rw_ready` for R + 1 and takes the
///   rewind then; S_RW at R + 2 loads `sq_rw_*`, visible at R + 3
///   (tx_datapath.md, "Taking a rewind"); `sq_fetch`'s first read from
///   the anchor is visible 2 cycles after the rewind (R + 5, "Rewind");
///   read arbiter 1, `dma_rd` 2, `rq` arbiter 1 (README, doorbell to
///   wire): the WQE MRd on `rq_*` at **R + 9**.
/// - From that MRd, the path of a new send (README, doorbell to wire;
///   tests/tx_perf.rs: 2 L + 25 for one WQE), for W WQEs read at once and
///   a 64-byte payload: the completion (a header beat and W data beats)
///   ends L + W after the MRd; `dma_rd` hands its first data beat 5
///   cycles after that last beat and the rest one a cycle (4 + W);
///   `wqe_avail` 1, tx_sched's grant 1, pop to descriptor and payload read
///   4, read arbiter, `dma_rd`, `rq` arbiter 4: the payload MRd; its
///   completion ends L + 1 after it (two beats), `dma_rd` 5, `pkt_builder`
///   3 (first beat n + 3 after the last payload beat): **2 L + 2 W + 23**.
///
/// Returns (cause to the WQE MRd, cause to the first beat) for a cause
/// whose `rw_*` comes `to_rw` cycles after it (5 for a NAK's last beat, 2
/// for the timer's deciding scan).
fn nak_to_resend(to_rw: u64, l: u64, w: u64) -> (u64, u64) {
    let mrd = to_rw + 9;
    (mrd, mrd + 2 * l + 2 * w + 23)
}

/// The first MRd to A's send queue ring after `after`, with the cycle of
/// its last beat on `rq_*`.
fn wqe_mrd(r: &PairReport, sq: u64, after: u64) -> u64 {
    r.times[0]
        .tlps
        .iter()
        .filter(|e| e.dir == Direction::Rq && e.cycle > after)
        .find(|e| {
            let t = Tlp::new_checked(&e.bytes[..]).expect("a good TLP");
            matches!(t.kind(), Ok(TlpKind::MemRead)) && (sq..sq + (64 << 9)).contains(&t.address())
        })
        .expect("a WQE read after the cause")
        .cycle
}

/// A's request frames: (first beat, PSN), in order.
fn a_requests(r: &PairReport) -> Vec<(u64, u32)> {
    r.links[0]
        .iter()
        .map(|f| {
            let p = RoceRepr::parse_bytes(&f.bytes).expect("a good frame");
            (f.first, p.bth.psn)
        })
        .collect()
}

const REACTION_HEADER: &[&str] = &[
    "cause",
    "host read latency L",
    "WQEs re-read W",
    "cause to the WQE re-read (MRd)",
    "cause to the resent frame's first beat",
    "derived (contract, exact)",
];

/// Timeout code of the reaction pairs: the WRITE goodput runs' code (the
/// wait there is the longer; any code long enough to keep the timer
/// quiet before the NAK does).
fn small_code() -> u8 {
    timeout_code(progress_wait(&lossy(Kind::Write, 1, 0), false))
}

/// (a) NAK to resend: frame 0 (PSN p) lost, B NAKs PSN p when PSN p + 1
/// arrives; A, idle by then, rewinds to p: the anchor is WQE 0 (nothing
/// acknowledged yet), so `sq_fetch` reads all three WQEs again (W = 3).
#[test]
fn nak_to_resend_is_exact() {
    for lat in [100u32, 300] {
        let v = small(lat, 0, small_code());
        let r = run_clean(&v, &format!("NAK reaction at latency {lat}"));
        let p = v.a.qps[0].psn;
        let naks: Vec<(u64, u32)> = r.times[0]
            .rx
            .iter()
            .filter_map(|x| {
                let f = RoceRepr::parse_bytes(&x.bytes).expect("a good frame");
                let a = f.aeth?;
                (a.syndrome == NAK_SEQ).then_some((x.last, f.bth.psn))
            })
            .collect();
        let [(t, psn)] = naks[..] else {
            panic!("one sequence NAK, got {naks:?}")
        };
        assert_eq!(psn, p, "B NAKs the PSN it expected");
        let reqs = a_requests(&r);
        // A is idle when the NAK comes: its three frames have left.
        assert!(reqs.len() == 6 && reqs[2].0 < t, "{reqs:?}");
        let (resend, rpsn) = *reqs.iter().find(|&&(c, _)| c > t).expect("a resend");
        assert_eq!(rpsn, p, "the resend starts at the NAK's PSN");
        let l = lat as u64;
        let w = 3;
        let (want_mrd, want) = nak_to_resend(5, l, w);
        let mrd = wqe_mrd(&r, v.a.qps[0].sq.base.0, t) - t;
        println!(
            "NAK at latency {l}: last beat {t}, WQE MRd +{mrd} (derived {want_mrd}), resend +{} \
             (derived {want} = 2 L + 2 W + 37)",
            resend - t
        );
        assert_eq!(mrd, want_mrd, "NAK to the WQE re-read");
        assert_eq!(resend - t, want, "NAK to the resent frame");
        figures::row(
            "loss_reaction",
            REACTION_HEADER,
            &format!("1{l:04}"),
            &[
                "sequence NAK (its last beat on `rx_*`)".into(),
                l.to_string(),
                w.to_string(),
                mrd.to_string(),
                (resend - t).to_string(),
                format!("2 L + 2 W + 37 = {want}"),
            ],
        );
    }
}

/// (b) Timeout to resend: frame 2 (the last, PSN p + 2) lost, nothing
/// follows it, so no NAK: B ACKs p and p + 1, and A's timer fires. Last
/// progress: the last ACK's last beat at t moves `una` at t + 3
/// (rx_parser t + 2, ack_tracker's register the cycle after). The scanner
/// decides QP 0 at the cycles m = 1 (mod QPS) (retx_ctl.md); the first
/// such m >= t + 3 restarts the timer with the deadline m + P, and as P
/// is a multiple of QPS the expiry is decided exactly then. Nominal
/// expiry t + 3 + P, so the resend is 2 L + 2 W + 34 + (0 .. QPS - 1)
/// after it; W = 1, as the anchor moved past WQEs 0 and 1 when their
/// completions left `ack_tracker`.
#[test]
fn timeout_to_resend_is_exact() {
    let code = small_code();
    let period = T_UNIT << code;
    for lat in [100u32, 300] {
        let v = small(lat, 2, code);
        let r = run_clean(&v, &format!("timeout reaction at latency {lat}"));
        let p = v.a.qps[0].psn;
        let acks: Vec<(u64, u32, u8)> = r.times[0]
            .rx
            .iter()
            .filter_map(|x| {
                let f = RoceRepr::parse_bytes(&x.bytes).expect("a good frame");
                f.aeth.map(|a| (x.last, f.bth.psn, a.syndrome))
            })
            .collect();
        let reqs = a_requests(&r);
        let (resend, rpsn) = reqs[3];
        assert_eq!(rpsn, p + 2, "the resend is the lost PSN: {reqs:?}");
        // The ACKs before the resend: p and p + 1, no NAK.
        let before: Vec<_> = acks.iter().filter(|a| a.0 < resend).collect();
        assert!(
            before.iter().all(|a| a.2 == 0x1F) && before.last().map(|a| a.1) == Some(p + 1),
            "{acks:?}"
        );
        let t = before.last().expect("an ACK").0;
        let progress = t + 3;
        let scan = progress + (QPS + 1 - progress % QPS) % QPS;
        let expiry = scan + period;
        let l = lat as u64;
        let w = 1;
        let (want_mrd, want) = nak_to_resend(2, l, w);
        let nominal = progress + period;
        let mrd = wqe_mrd(&r, v.a.qps[0].sq.base.0, progress) - nominal;
        let got = resend - nominal;
        println!(
            "timeout at latency {l}: last ACK {t}, progress {progress}, scan {scan}, expiry \
             {expiry} (P {period}); from the nominal {nominal}: WQE MRd +{mrd}, resend +{got}, \
             derived {} + {want}",
            scan - progress
        );
        assert_eq!(mrd, scan - progress + want_mrd, "expiry to the WQE re-read");
        assert_eq!(got, scan - progress + want, "expiry to the resent frame");
        let lo = 2 * l + 2 * w + 34;
        assert!((lo..lo + QPS).contains(&got));
        figures::row(
            "loss_reaction",
            REACTION_HEADER,
            &format!("2{l:04}"),
            &[
                format!("local ACK timeout, code {code} (nominal: last progress + {period})"),
                l.to_string(),
                w.to_string(),
                mrd.to_string(),
                got.to_string(),
                format!(
                    "2 L + 2 W + 34 + scan slot {} = {got} (window {lo}..{})",
                    scan - progress,
                    lo + QPS - 1
                ),
            ],
        );
    }
}
