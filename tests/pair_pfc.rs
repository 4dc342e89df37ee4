//! PFC generation between two NICs (docs/pfc_gen.md), in lockstep:
//! `vectors/pair/rc_pfc_slow_host.json`, B's host slower than the link, B
//! generating PFC for the data priority. The figure: B's rx_buf high-water
//! mark (lines of the data priority and of all priorities, read every
//! cycle from the model's `prio_lines`, the lines pfc_gen sees) against
//! the XOFF threshold, the headroom rule's bound and the buffer size, and
//! the PFC frames B sent. Contract: zero RXBUF_FULL drops, the high-water
//! mark at most XOFF + the headroom the rule asks for at this link delay
//! (so at most LINES), every WRITE completed at A. The same run with PFC
//! generation off (`rc_nopfc_slow_host`) and with PFC over a link too long
//! for the default thresholds' headroom (`rc_pfc_short_headroom`): rx_buf
//! drops (which frames is inferred within bounds, `config.rx_drops`), and
//! go-back-N still completes every WRITE; the rows show what it costs.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::figures;
use common::pair_nic::{load_system, Tampered};
use rnic_model::rnic_top::{RnicTop, RnicTopIn, RnicTopOut};
use rnic_model::trace::{Trace, Tracer};
use rnic_model::Dut;
use rnic_testbench::scenario::rnic_top::is_pfc;
use rnic_testbench::scenario::{pair, Mode, RunOpts};
use rnic_testbench::vector::SystemVector;
use rnic_testbench::wire::pfc;
use rnic_testbench::wire::roce::RoceRepr;

/// rx_buf's lines (32 KiB of 64-byte lines).
const LINES: u64 = 512;
/// The largest frame of a NIC in beats (4096-byte payload, 98-byte header).
const MAX_FRAME_BEATS: u64 = 66;

fn load(name: &str) -> SystemVector {
    load_system(&format!("vectors/pair/{name}.json"))
}

/// The model of one NIC, recording the most lines its rx_buf held (one
/// priority's and in all) in any cycle.
struct Probe {
    top: RnicTop,
    prio: usize,
    high_prio: Arc<AtomicU64>,
    high_all: Arc<AtomicU64>,
}

impl Dut for Probe {
    type In = RnicTopIn;
    type Out = RnicTopOut;
    const NAME: &'static str = "rnic_top";
    fn reset(&mut self) -> RnicTopOut {
        self.top.reset()
    }
    fn tick(&mut self, i: &RnicTopIn) -> RnicTopOut {
        let l = self.top.rx_prio_lines();
        self.high_prio
            .fetch_max(l[self.prio] as u64, Ordering::Relaxed);
        self.high_all
            .fetch_max(l.iter().map(|&x| x as u64).sum(), Ordering::Relaxed);
        self.top.tick(i)
    }
}

impl Trace for Probe {
    fn trace(&self, t: &mut dyn Tracer) {
        self.top.trace(t)
    }
}

/// What one run of a slow-host vector shows.
struct Run {
    v: SystemVector,
    r: pair::PairReport,
    high_prio: u64,
    high_all: u64,
}

fn run(name: &str, prio: usize) -> Run {
    let v = load(name);
    let (hp, ha) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let r = pair::run_with(&v, Mode::Lockstep, &RunOpts::default(), |n| Probe {
        top: RnicTop::new(),
        prio,
        // A's marks go nowhere; B's are the figure.
        high_prio: if n == 1 {
            hp.clone()
        } else {
            Arc::new(AtomicU64::new(0))
        },
        high_all: if n == 1 {
            ha.clone()
        } else {
            Arc::new(AtomicU64::new(0))
        },
    })
    .unwrap();
    assert!(
        r.report.clean(),
        "{name}: {:?} {:?}",
        r.report.divergence,
        r.report.failures
    );
    let (high_prio, high_all) = (hp.load(Ordering::Relaxed), ha.load(Ordering::Relaxed));
    Run {
        v,
        r,
        high_prio,
        high_all,
    }
}

/// One row of the figure for the run of `name`, and what the asserts
/// need: (RXBUF_FULL, WRITEs completed at A, B's high-water of priority 3,
/// XOFF + headroom when B generates PFC).
fn figure_row(t: &mut figures::Table, name: &str) -> (u64, usize, u64, Option<u64>) {
    let Run {
        v,
        r,
        high_prio,
        high_all,
    } = run(name, 3);
    let g = v.b.config.pfc_gen.clone();
    let b = &r.b.counters;
    let drops = b.get("rxbuf_full").copied().expect("read back");
    let naks = b.get("resp_nak_seq").copied().expect("read back");
    // B's PFC frames on the wire, decoded here too.
    let b_mac = g.as_ref().map(|g| g.src_mac.to_u64());
    let frames: Vec<(u64, pfc::Repr)> = r
        .report
        .tx_frames
        .iter()
        .filter(|(_, f)| is_pfc(f))
        .map(|(c, f)| (*c, pfc::Repr::parse_bytes(f).expect("a PFC frame")))
        .filter(|(_, p)| Some(p.src) == b_mac)
        .collect();
    // The headroom rule (docs/pfc_gen.md) at this link delay L: 2 L lines
    // in flight (a line a cycle at most), the sender's frame in progress,
    // the receiver's own frame the XOFF waits behind, and the decision and
    // reaction cycles (3 + 1 + 4).
    let l = v.link.a_to_b.delay;
    let headroom = 2 * l + 2 * MAX_FRAME_BEATS + 8;
    let a_done = r.a.cqes.iter().filter(|c| c.status == 0).count();
    // A's data frames: 8 x 16 needed, the rest resent by go-back-N.
    let sent = r
        .report
        .tx_frames
        .iter()
        .filter(|(_, f)| {
            RoceRepr::parse_bytes(f).is_ok_and(|p| (0x06..=0x08).contains(&p.bth.opcode))
        })
        .count();
    let mut limit = None;
    let (thr, rule, pfc_sent, first) = match &g {
        Some(g) => {
            let prio = g.enable.trailing_zeros() as usize;
            assert_eq!(prio, 3);
            let (xoff, xon) = (
                b.get("pfcg_xoff_sent").copied().expect("read back"),
                b.get("pfcg_xon_sent").copied().expect("read back"),
            );
            let wire_xoff = frames.iter().filter(|(_, p)| p.times[prio] != 0).count() as u64;
            assert!(xoff > 0 && xon > 0, "{name}: B paused A");
            assert_eq!(wire_xoff, xoff, "XOFF frames on the wire vs PFCG.XOFF_SENT");
            assert_eq!(frames.len() as u64, xoff + xon);
            // A honoured every pause: its rx_pfc counter saw every frame.
            assert_eq!(r.a.counters.get("rx_pfc").copied(), Some(xoff + xon));
            assert!(
                high_prio >= g.xoff_lines as u64,
                "{name}: B never reached XOFF: the vector shows nothing"
            );
            limit = Some(g.xoff_lines as u64 + headroom);
            (
                format!("{} / {}", g.xoff_lines, g.xon_lines),
                format!(
                    "{} + {headroom} = {}",
                    g.xoff_lines,
                    g.xoff_lines as u64 + headroom
                ),
                format!("{} ({xoff} + {xon})", xoff + xon),
                format!("{}", frames.first().map_or(0, |f| f.0)),
            )
        }
        None => {
            assert!(frames.is_empty(), "{name}: B sent PFC with generation off");
            ("off".into(), "-".into(), "0".into(), "-".into())
        }
    };
    assert!(high_all <= LINES && high_prio <= high_all);
    t.row(&[
        format!("`{}`", v.name),
        format!("{l}"),
        thr,
        format!("{high_prio} ({high_all})"),
        rule,
        format!("{drops}"),
        format!("{naks}"),
        format!("{sent} of 128"),
        pfc_sent,
        first,
        format!("{a_done} of 8"),
        format!("{}", r.report.cycles),
    ]);
    (drops, a_done, high_prio, limit)
}

/// The same slow host with PFC (headroom enough), without PFC, and with
/// too little headroom (docs/pfc_gen.md): with the rule kept, zero drops;
/// otherwise rx_buf drops and go-back-N recovers every WRITE.
#[test]
fn pfc_keeps_a_slow_receiver_lossless() {
    let mut t = figures::Table::new(
        "pair_pfc",
        &[
            "vector",
            "link delay L",
            "XOFF / XON (lines)",
            "B's high-water, priority 3 (all)",
            "XOFF + headroom (rule)",
            "RXBUF_FULL",
            "sequence NAKs (B)",
            "A's WRITE frames sent",
            "PFC frames sent (XOFF + XON)",
            "first XOFF (cycle)",
            "WRITEs completed at A",
            "run (cycles)",
        ],
    );
    let (drops, done, high, limit) = figure_row(&mut t, "rc_pfc_slow_host");
    let limit = limit.expect("PFC on");
    assert_eq!(drops, 0, "B dropped frames with PFC on and headroom enough");
    assert!(limit <= LINES, "the rule holds at this delay");
    assert!(high <= limit, "high-water {high} above XOFF + headroom");
    assert_eq!(done, 8, "A completes all eight WRITEs");
    // Without PFC, and with PFC but too little headroom: drops, and
    // retransmission still completes every WRITE.
    let (drops, done, _, _) = figure_row(&mut t, "rc_nopfc_slow_host");
    assert!(drops > 0, "PFC off: the slow host must overflow rx_buf");
    assert_eq!(done, 8, "PFC off: go-back-N recovers every WRITE");
    let (drops, done, _, limit) = figure_row(&mut t, "rc_pfc_short_headroom");
    assert!(
        limit.expect("PFC on") > LINES,
        "the rule fails at this delay"
    );
    assert!(drops > 0, "too little headroom: rx_buf must overflow");
    assert_eq!(done, 8, "short headroom: go-back-N recovers every WRITE");
    t.finish();
}

/// NIC A deaf to PFC: the PFC beats B sends never reach A's `rx_*` (the
/// model alone; A's RTL is not run). A keeps sending into B's pauses, so
/// the testbench's own pause check fails the run (and B overflows): the
/// check that proves A honoured B's frames in `rc_pfc_slow_host` is not
/// vacuous. (B is deaf too, and hears no PFC: A sends none.)
#[test]
fn a_nic_deaf_to_pfc_fails_the_pause_check() {
    let v = load("rc_pfc_slow_host");
    let deaf = |i: &mut RnicTopIn| {
        if i.rx_tvalid && is_pfc(&i.rx_tdata[..60]) {
            i.rx_tvalid = false;
        }
    };
    let r = pair::run_with(&v, Mode::Model, &RunOpts::default(), |_| {
        Tampered::new(deaf)
    })
    .unwrap();
    let f = &r.report.failures;
    assert!(
        f.iter()
            .any(|x| x.contains("A:") && x.contains("inside its PFC pause")),
        "{f:?}"
    );
}

/// The drop inference (`config.rx_drops`, rx_drops.rs) blames no frame
/// the buffer surely had room for: B's model never sees A's third frame
/// (its beats are taken off B's `rx_*` early in the run, when rx_buf is
/// empty), as if it had been lost with room to spare. The reference counts
/// that frame stored, so B's sequence NAK for it is a response no frame
/// calls for and the run fails. (The receive counters see the missing
/// frame too, but the NAK is the inference's own verdict.)
#[test]
fn a_frame_lost_with_room_to_spare_fails_the_drop_inference() {
    let v = load("rc_nopfc_slow_host");
    let r = pair::run_with(&v, Mode::Model, &RunOpts::default(), |n| {
        let mut frames = 0u32;
        Tampered::new(move |i: &mut RnicTopIn| {
            if n != 1 || !i.rx_tvalid {
                return;
            }
            let this = frames;
            if i.rx_tlast {
                frames += 1;
            }
            if this == 2 {
                i.rx_tvalid = false;
            }
        })
    })
    .unwrap();
    let f = &r.report.failures;
    assert!(
        f.iter().any(|x| x.contains("B:")
            && x.contains("ACK/NAKs sent")
            && x.contains("(PSN 9, syndrome 0x60")),
        "{f:?}"
    );
}
