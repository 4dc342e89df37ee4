//! Two NICs in one run (docs/pair.md): A and B, each its own `rnic_top`
//! model against its own Verilated `rnic_top` in lockstep, each with the
//! host environment of a single-NIC run ([`RnicTopEnv`]: tables, memory,
//! root complex, WQEs and doorbells, every end-of-run check), joined by a
//! link: every frame A sends on `tx_*` reaches B's `rx_*` after the link's
//! delay, CE-marked by the link's rule, and the other way round.
//!
//! On top of each NIC's own checks the pair checks the link (every frame
//! decoded and ICRC-checked, delivered whole, in order, no earlier than the
//! delay allows, marked exactly as the rule says) and the DCQCN counters
//! against the CNPs each NIC received. All of it comes from the vector and
//! the bytes on the wire, never from the model.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rnic_model::rnic_top::{RnicTop, RnicTopIn, RnicTopOut};
use rnic_model::trace::Trace;
use rnic_model::Dut;

use super::rx_reference::{self, RxEvent};
use super::timer_exhaust::{ExhaustKind, TimerExhaustion};
use super::{Mode, Report, RnicTopEnv, RtlRnicTopTop, VCD_WINDOW};
use crate::lockstep::{compare, Divergence, Finished};
use crate::rtl::{take_assertion_failure, Rtl, RtlTop};
use crate::vcd_model::ModelVcd;
use crate::vector::link_fault::Picker;
use crate::vector::{Expect, LinkDir, LinkFault, LinkSpec, SystemExpect, SystemVector, Vector};

/// The two NICs by name, in report order.
pub const NICS: [&str; 2] = ["A", "B"];

/// Block names of the divergence reports: they name the NIC.
const BLOCK: [&str; 2] = ["NIC A (rnic_top)", "NIC B (rnic_top)"];

/// Marks `f` CE when it is ECT: the IP ECN field (IPv4 TOS or IPv6 traffic
/// class, behind an optional 802.1Q tag) 01 or 10 becomes 11, and the IPv4
/// header checksum is recomputed. The ICRC masks these bits, so it stays
/// valid. Returns whether the frame was ECT (and is now CE); a frame that
/// is not IP, or not ECT, is left alone.
pub fn mark_ce(f: &mut [u8]) -> bool {
    if f.len() < 14 {
        return false;
    }
    let (ip, ethertype) = if f[12..14] == [0x81, 0x00] && f.len() >= 18 {
        (18, u16::from_be_bytes([f[16], f[17]]))
    } else {
        (14, u16::from_be_bytes([f[12], f[13]]))
    };
    match ethertype {
        0x0800 if f.len() >= ip + 20 => {
            let ecn = f[ip + 1] & 3;
            if ecn != 1 && ecn != 2 {
                return false;
            }
            f[ip + 1] |= 3;
            f[ip + 10..ip + 12].fill(0);
            let sum = crate::wire::roce::ipv4::checksum(&f[ip..ip + 20]);
            f[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
            true
        }
        0x86DD if f.len() >= ip + 40 => {
            // Traffic class: low nibble of byte 0, high nibble of byte 1;
            // ECN is its low two bits, bits 5:4 of byte 1.
            let ecn = (f[ip + 1] >> 4) & 3;
            if ecn != 1 && ecn != 2 {
                return false;
            }
            f[ip + 1] |= 0x30;
            true
        }
        _ => false,
    }
}

/// The sending MAC's padding: a frame shorter than the Ethernet minimum
/// (60 bytes without FCS) is padded with zeros (docs/protocol.md: the NIC
/// hands the MAC frames without padding; docs/rx_cc.md: the receiver
/// ignores bytes after the IP length).
pub const MIN_FRAME: usize = 60;

pub fn mac_pad(f: &[u8]) -> Vec<u8> {
    let mut b = f.to_vec();
    if b.len() < MIN_FRAME {
        b.resize(MIN_FRAME, 0);
    }
    b
}

/// What the link did to a frame, besides carrying it (docs/pair.md,
/// "Link faults"). `fault` is the index in the direction's `faults`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkAct {
    /// Marked CE by the `ce_every` rule.
    Marked,
    /// Lost: by a drop, a burst or the link being down.
    Lost { fault: usize },
    /// Delivered with byte `byte` inverted.
    Corrupted { fault: usize, byte: usize },
    /// A corrupt fault whose byte lies past the frame (`len` bytes): the
    /// frame is delivered unaltered and the run fails.
    CorruptPast {
        fault: usize,
        byte: usize,
        len: usize,
    },
    /// Delivered twice, back to back.
    Duplicated { fault: usize },
    /// Held, delivered right after the next frame of the direction.
    Reordered { fault: usize },
    /// Held by a reorder with no frame after it: never delivered.
    NeverReleased,
}

impl std::fmt::Display for LinkAct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkAct::Marked => write!(f, "CE-marked"),
            LinkAct::Lost { fault } => write!(f, "lost (faults[{fault}])"),
            LinkAct::Corrupted { fault, byte } => {
                write!(f, "corrupted at byte {byte} (faults[{fault}])")
            }
            LinkAct::CorruptPast { fault, byte, len } => write!(
                f,
                "not corrupted: byte {byte} is past the frame's {len} bytes (faults[{fault}])"
            ),
            LinkAct::Duplicated { fault } => write!(f, "duplicated (faults[{fault}])"),
            LinkAct::Reordered { fault } => {
                write!(f, "reordered after the next frame (faults[{fault}])")
            }
            LinkAct::NeverReleased => {
                write!(f, "held by reorder, no frame followed: never delivered")
            }
        }
    }
}

/// One frame on the link, as its sender sent it and what the link did.
#[derive(Debug, Clone)]
pub struct LinkFrame {
    /// Cycle of its first and last beat on the sender's `tx_*`.
    pub first: u64,
    pub last: u64,
    /// Earliest cycle of its first beat on the receiver's `rx_*`.
    pub due: u64,
    /// As delivered (marked, corrupted), when it is.
    pub bytes: Arc<[u8]>,
    pub marked: bool,
    /// Everything the link did to it, in order; empty: delivered as sent.
    pub acts: Vec<LinkAct>,
}

impl LinkFrame {
    pub fn lost(&self) -> bool {
        self.acts
            .iter()
            .any(|a| matches!(a, LinkAct::Lost { .. } | LinkAct::NeverReleased))
    }

    /// The acts as one line ("" when delivered as sent), for logs and the
    /// pcap comment.
    pub fn describe(&self) -> String {
        let v: Vec<String> = self.acts.iter().map(|a| a.to_string()).collect();
        v.join("; ")
    }
}

/// One direction of the link.
struct Link {
    spec: LinkDir,
    /// ECT frames seen, for the marking rule.
    ect: u64,
    frames: Vec<LinkFrame>,
    /// Per fault: its picker (None for `down`) and, for a burst, the
    /// frames it still drops.
    pickers: Vec<Option<Picker>>,
    burst_left: Vec<u64>,
    /// Frames held by a reorder: (index in `frames`, copies).
    held: Vec<(usize, usize)>,
}

impl Link {
    fn new(spec: LinkDir) -> Self {
        let pickers = spec
            .faults
            .iter()
            .map(|f| f.select().map(Picker::new))
            .collect();
        let n = spec.faults.len();
        Link {
            spec,
            ect: 0,
            frames: Vec::new(),
            pickers,
            burst_left: vec![0; n],
            held: Vec::new(),
        }
    }

    /// A frame whose last beat left at `last`: what the receiver gets, as
    /// (due cycle, bytes) in delivery order (none when it is lost or held;
    /// the frames it releases after it).
    fn carry(&mut self, first: u64, last: u64, sent: &[u8]) -> Vec<(u64, Arc<[u8]>)> {
        let k = self.frames.len() as u64;
        let mut b = mac_pad(sent);
        let mut acts = Vec::new();
        let mut marked = false;
        if self.spec.ce_every > 0 {
            let mut probe = b.clone();
            if mark_ce(&mut probe) {
                self.ect += 1;
                if self.ect.is_multiple_of(self.spec.ce_every) {
                    b = probe;
                    marked = true;
                    acts.push(LinkAct::Marked);
                }
            }
        }
        let due = last + 1 + self.spec.delay;
        let (mut lost, mut copies, mut held) = (None, 1, false);
        let mut flips = Vec::new();
        let mut later = Vec::new();
        for (i, f) in self.spec.faults.iter().enumerate() {
            // Every picker sees every frame, whatever happens to it.
            let picked = self.pickers[i].as_mut().is_some_and(|p| p.pick(k, sent));
            match f {
                LinkFault::Drop(_) if picked => {
                    lost.get_or_insert(i);
                }
                LinkFault::Burst(s) => {
                    if self.burst_left[i] > 0 {
                        self.burst_left[i] -= 1;
                        lost.get_or_insert(i);
                    } else if picked {
                        self.burst_left[i] = s.count.unwrap_or(1).saturating_sub(1);
                        lost.get_or_insert(i);
                    }
                }
                LinkFault::Down(d) => {
                    let end = d.from.saturating_add(d.cycles);
                    if first < end && last.saturating_add(self.spec.delay) >= d.from {
                        lost.get_or_insert(i);
                    }
                }
                LinkFault::Corrupt(s) if picked => flips.push((i, s.byte.unwrap_or(0) as usize)),
                LinkFault::Duplicate(_) if picked => {
                    copies = 2;
                    later.push(LinkAct::Duplicated { fault: i });
                }
                LinkFault::Reorder(_) if picked => {
                    held = true;
                    later.push(LinkAct::Reordered { fault: i });
                }
                _ => {}
            }
        }
        if let Some(fault) = lost {
            acts = vec![LinkAct::Lost { fault }];
        } else {
            for (fault, byte) in flips {
                acts.push(if byte < b.len() {
                    b[byte] ^= 0xFF;
                    LinkAct::Corrupted { fault, byte }
                } else {
                    LinkAct::CorruptPast {
                        fault,
                        byte,
                        len: b.len(),
                    }
                });
            }
            acts.extend(later);
        }
        let bytes: Arc<[u8]> = b.into();
        self.frames.push(LinkFrame {
            first,
            last,
            due,
            bytes: bytes.clone(),
            marked,
            acts,
        });
        let me = self.frames.len() - 1;
        let mut out = Vec::new();
        if lost.is_none() && held {
            self.held.push((me, copies));
            return out;
        }
        if lost.is_none() {
            out.extend(std::iter::repeat_n((due, bytes), copies));
        }
        // Frames held for this one follow it (whatever happened to it).
        for (h, n) in std::mem::take(&mut self.held) {
            let f = &self.frames[h];
            out.extend(std::iter::repeat_n((f.due.max(due), f.bytes.clone()), n));
        }
        out
    }

    /// End of the run: the frames still held were never delivered.
    fn close(&mut self) {
        for (h, _) in std::mem::take(&mut self.held) {
            self.frames[h].acts.push(LinkAct::NeverReleased);
        }
    }
}

/// The environment of a pair: both hosts and the link.
pub struct PairEnv {
    pub nic: [RnicTopEnv; 2],
    /// `link[0]` A to B, `link[1]` B to A.
    links: [Link; 2],
    /// Per NIC: frames of its `tx_*` handed to the link so far.
    forwarded: [usize; 2],
    /// Some direction has faults: each NIC's expectation during the run
    /// follows the ACKs that arrived (below).
    faulty: bool,
    /// Per NIC: its expectation following the ACKs that arrived.
    follow: [AckFollower; 2],
}

impl PairEnv {
    pub fn new(v: &SystemVector) -> Result<Self, String> {
        Self::with_link(v, &v.link)
    }

    /// The pair with the link `link` in place of the vector's (the checks
    /// still judge by the vector's): a self-test of the link checks.
    pub fn with_link(v: &SystemVector, link: &LinkSpec) -> Result<Self, String> {
        let a = RnicTopEnv::new_in_pair(&v.a).map_err(|e| format!("a: {e}"))?;
        let b = RnicTopEnv::new_in_pair(&v.b).map_err(|e| format!("b: {e}"))?;
        Ok(PairEnv {
            nic: [a, b],
            links: [
                Link::new(link.a_to_b.clone()),
                Link::new(link.b_to_a.clone()),
            ],
            forwarded: [0, 0],
            faulty: v.link.a_to_b.faulty() || v.link.b_to_a.faulty() || link != &v.link,
            follow: Default::default(),
        })
    }

    /// Under faults an RC WQE may never complete (its request lost for
    /// good with no timer to resend it, or its retries run out), so a NIC's run may
    /// not wait for every completion: its expectation during the run is
    /// the one the ACKs that arrived so far call for
    /// (`tx_reference::expected_with`, as the end-of-run checks work it
    /// out), renewed whenever a frame arrives. It only decides when the
    /// NIC's quiet window starts; the window itself (nothing on the link,
    /// the other NIC done sending, no ACK owed) ends the run.
    fn follow_acks(&mut self, cycle: u64) {
        for (n, e) in self.nic.iter_mut().enumerate() {
            if self.faulty {
                self.follow[n].follow(e);
            }
            self.follow[n].follow_timer(e, cycle);
        }
    }

    /// Inputs of both NICs for `cycle`, given their outputs in it.
    pub fn step(&mut self, cycle: u64, out: [&RnicTopOut; 2]) -> [RnicTopIn; 2] {
        self.follow_acks(cycle);
        let ia = self.nic[0].step(cycle, out[0]);
        let ib = self.nic[1].step(cycle, out[1]);
        for s in 0..2 {
            let d = 1 - s;
            while self.forwarded[s] < self.nic[s].frames.len() {
                let k = self.forwarded[s];
                let (first, ref bytes) = self.nic[s].frames[k];
                let last = self.nic[s].frame_ends[k];
                for (due, f) in self.links[s].carry(first, last, bytes) {
                    self.nic[d].rx.push_link(due, f);
                }
                self.forwarded[s] += 1;
            }
        }
        // Nothing more can arrive at a NIC once the other one has sent all
        // its own work and both directions of the link are empty (a CNP
        // answering the last frames leaves well within the quiet window).
        // A NIC in its quiet window may still retransmit (a rewind's reads,
        // an RNR wait, a timeout): the other waits for that too.
        let quiet = self.nic[0].rx.idle() && self.nic[1].rx.idle();
        self.nic[0].hold = !quiet || self.nic[1].may_send(cycle);
        self.nic[1].hold = !quiet || self.nic[0].may_send(cycle);
        [ia, ib]
    }

    pub fn finished(&self) -> bool {
        self.nic[0].finished() && self.nic[1].finished()
    }

    /// The frames of one direction (0: A to B, 1: B to A).
    pub fn link_frames(&self, dir: usize) -> &[LinkFrame] {
        &self.links[dir].frames
    }

    /// The end-of-run checks: each NIC's own (its frames against its
    /// reference, CQEs, receive counters from the frames it received, CNPs
    /// from the CE marks it received, PCIe rules), the link, and DCQCN.
    fn finish_checks(&mut self, v: &SystemVector, cycle: u64) -> Vec<String> {
        let mut problems = Vec::new();
        for (n, e) in self.nic.iter_mut().enumerate() {
            let retry = retry_config(if n == 0 { &v.a } else { &v.b });
            problems.extend(
                settle_host(e, &retry, cycle)
                    .into_iter()
                    .map(|m| format!("{}: {m}", NICS[n])),
            );
        }
        let mut out = problems;
        for (n, e) in self.nic.iter().enumerate() {
            out.extend(
                e.common
                    .failures
                    .iter()
                    .map(|f| format!("{}: {f}", NICS[n])),
            );
        }
        // Go-back-N (gbn_check): each NIC's requests against the ACKs,
        // NAKs and READ responses that arrived at it, and its responder's
        // sequence NAKs against the requests the link delivered to it.
        for (n, hv) in [&v.a, &v.b].into_iter().enumerate() {
            let retry = retry_config(hv);
            out.extend(
                self.nic[n]
                    .gbn_violations(&retry)
                    .into_iter()
                    .map(|f| format!("{}: go-back-N: {f}", NICS[n])),
            );
        }
        for (dir, spec) in [&v.link.a_to_b, &v.link.b_to_a].into_iter().enumerate() {
            out.extend(self.check_link(dir, spec));
        }
        for (n, hv) in [&v.a, &v.b].into_iter().enumerate() {
            out.extend(
                check_dcqcn(hv, &self.nic[n])
                    .into_iter()
                    .map(|f| format!("{}: {f}", NICS[n])),
            );
        }
        out
    }

    /// One direction: the frames that arrived are those the vector's
    /// link (its faults applied by the check itself,
    /// [`super::link_check::predict`], to the frames as sent) must
    /// deliver, in order, whole, no earlier than their due cycle; each
    /// decodes with a good ICRC and IPv4 checksum unless the link corrupted
    /// it, and a corrupted one the receiver's reference drops
    /// (`rx_reference::classify`). The link's own record of what it did
    /// (the pcap's comments) must agree with the check's.
    fn check_link(&self, dir: usize, spec: &LinkDir) -> Vec<String> {
        let (s, d) = (dir, 1 - dir);
        let name = format!("link {} to {}", NICS[s], NICS[d]);
        let mut out = Vec::new();
        let sent: Vec<super::link_check::Sent> = self.nic[s]
            .frames
            .iter()
            .zip(&self.nic[s].frame_ends)
            .map(|((first, b), &last)| super::link_check::Sent {
                first: *first,
                last,
                bytes: b,
            })
            .collect();
        let want = super::link_check::predict(spec, &sent);
        out.extend(want.problems.iter().map(|p| format!("{name}: {p}")));
        let got = &self.nic[d].rx.sent;
        if want.arrivals.len() != got.len() {
            out.push(format!(
                "{name}: {} frames sent on {}'s tx_*, {} must arrive (faults applied), {} arrived on {}'s rx_*",
                sent.len(),
                NICS[s],
                want.arrivals.len(),
                got.len(),
                NICS[d]
            ));
        }
        let live = rx_reference::live_qps(&self.nic[d].vector);
        for (n, (w, g)) in want.arrivals.iter().zip(got).enumerate() {
            let k = w.k;
            if g.bytes[..] != w.bytes[..] || g.fcs {
                out.push(format!(
                    "{name}: arrival {n} is not frame {k} as the link must deliver it (marking rule and faults applied)"
                ));
                continue;
            }
            if g.first < w.due {
                out.push(format!(
                    "{name}: frame {k} left at cycle {}, arrived at {} (delay {}, due {})",
                    sent[k].last, g.first, spec.delay, w.due
                ));
            }
            if w.corrupted.is_empty() {
                if let Err(e) = super::rnic_top::resp_predict::decodes_delivered(&g.bytes) {
                    out.push(format!(
                        "{name}: frame {k} as delivered does not decode: {e}"
                    ));
                }
            } else if !matches!(
                rx_reference::classify(&g.bytes, g.fcs, &live),
                RxEvent::Drop(_)
            ) {
                out.push(format!(
                    "{name}: frame {k} corrupted at byte {:?} is still a good frame for the receiver: the fault tests nothing",
                    w.corrupted
                ));
            }
        }
        // The link's record against the check's fates.
        let rec = &self.links[dir].frames;
        if rec.len() == want.fates.len() {
            for (k, (r, f)) in rec.iter().zip(&want.fates).enumerate() {
                let lost = r.acts.iter().find_map(|a| match a {
                    LinkAct::Lost { fault } => Some(*fault),
                    _ => None,
                });
                let corrupted: Vec<usize> = r
                    .acts
                    .iter()
                    .filter_map(|a| match a {
                        LinkAct::Corrupted { byte, .. } => Some(*byte),
                        _ => None,
                    })
                    .collect();
                let dup = r
                    .acts
                    .iter()
                    .any(|a| matches!(a, LinkAct::Duplicated { .. }));
                let re = r
                    .acts
                    .iter()
                    .any(|a| matches!(a, LinkAct::Reordered { .. }));
                if (lost, &corrupted, dup, re) != (f.lost, &f.corrupted, f.duplicated, f.reordered)
                {
                    out.push(format!(
                        "{name}: the link's record of frame {k} ({}) is not what the faults call for ({f:?})",
                        r.describe()
                    ));
                }
            }
        } else {
            out.push(format!(
                "{name}: the link recorded {} frames, {} were sent",
                rec.len(),
                want.fates.len()
            ));
        }
        out
    }

    /// Each NIC's results as an `expect`.
    fn expect_of(&self, n: usize) -> Expect {
        host_expect(&self.nic[n])
    }
}

/// One NIC's results as an `expect`: the cycle its readback ended, the
/// frames it sent, the CQEs in its host's memory, its counters.
pub(super) fn host_expect(e: &RnicTopEnv) -> Expect {
    Expect {
        cycles: e.done_at.unwrap_or(0),
        reads: Vec::new(),
        writes: Vec::new(),
        frames: e.frame_results(),
        cqes: e.cqe_results(),
        counters: e
            .counters
            .iter()
            .map(|(n, v)| (n.to_string(), *v as u64))
            .collect(),
    }
}

/// One NIC's end-of-run checks against what arrived at it (any number of
/// peers): its expectation settled by the ACKs and READ responses that
/// arrived and by any local ACK timer run out, then the single NIC's own
/// checks (into `e.common.failures`). Returns the problems of the
/// prediction itself.
pub(super) fn settle_host(
    e: &mut RnicTopEnv,
    retry: &[super::gbn_check::RetryCfg],
    cycle: u64,
) -> Vec<String> {
    let mut problems = Vec::new();
    // RC work completes as the ACKs that actually arrived allow
    // (the other NIC's responder, decoded from the wire).
    let acks = arrived_acks(e);
    // READs complete as their responses arrived; which READs went
    // out depends on which completed (ack_tracker's stall), so
    // until nothing changes. A round that changes something finds
    // at least one more READ done, so at most one round per WQE
    // and one to confirm: a stream of READs behind lost responses
    // can need one round per READ (a fixed 16 rounds once cut a
    // 32-READ run short and failed its frames as unexpected).
    let mut dones: Vec<(u32, u32)> = Vec::new();
    let rounds = e.vector.wqes.len() + 2;
    let mut settled = false;
    for _ in 0..rounds {
        let exp = super::tx_reference::expected_with(&e.vector, &acks, &dones);
        let sent = e.rx.sent.iter().map(|s| (&s.bytes[..], s.fcs));
        let rr = super::req_reads::predict(&e.vector, &exp, sent);
        e.expected = exp;
        if rr.dones == dones {
            settled = true;
            break;
        }
        dones = rr.dones;
    }
    if !settled {
        e.common.failures.push(format!(
            "cycle {cycle}: the READs done did not settle in {rounds} rounds of the \
                 requester's reference"
        ));
    }
    // A QP left with requests outstanding after the quiet window
    // ran its local ACK timer out (timer_exhaust, from the wire).
    let mut timer = Vec::new();
    for t in e.gbn_traces(retry) {
        if e.expected.nak_errors.contains(&t.qp) {
            continue;
        }
        match super::timer_exhaust::predict(&t) {
            Ok(Some(x)) if takes_effect(e, t.qp, &x) => timer.push((t.qp, x)),
            Ok(Some(_)) => {}
            Ok(None) => {}
            Err(m) => problems.push(m),
        }
    }
    if !timer.is_empty() {
        let at: Vec<(u32, u32, u8)> = timer.iter().map(|(q, x)| (*q, x.psn, x.status)).collect();
        e.expected = super::tx_reference::expected_after(&e.vector, &acks, &dones, &at);
        for (q, x) in &timer {
            let from = e.expected.optional_from[*q as usize]
                .unwrap_or(e.expected.packets[*q as usize].len());
            e.mark_exhausted(*q, from, x.after);
        }
    }
    e.finish_checks(cycle);
    rx_reference::check_ack_counters(e, cycle);
    // The retransmission counters against the wire and the reference
    // (retx_counters: exact where the wire decides them, else bounds).
    let statuses: Vec<(u32, u8)> = e.expected.cqes.iter().map(|c| (c.qp, c.status)).collect();
    let timer_qps: Vec<(u32, u8)> = timer
        .iter()
        .filter(|(_, x)| x.kind == ExhaustKind::Timer)
        .map(|(q, x)| (*q, x.status))
        .collect();
    let want = super::retx_counters::predict(&e.gbn_traces(retry), &statuses, &timer_qps, cycle);
    let got = |n: &str| e.counters.iter().find(|(m, _)| m == n).map(|x| x.1 as u64);
    for m in super::retx_counters::check(&want, got) {
        e.common.fail(cycle, m);
    }
    problems
}

/// The retry attributes of each QP of host `v`, by QP index, for the
/// go-back-N check (`gbn_check::RetryCfg`: local ACK timeout code,
/// retry_cnt, rnr_retry), from the vector's QP fields `timeout`,
/// `retry_cnt` and `rnr_retry`.
pub fn retry_config(v: &Vector) -> Vec<super::gbn_check::RetryCfg> {
    let mut out = vec![super::gbn_check::RetryCfg::default(); crate::vector::QPS as usize];
    for q in &v.qps {
        // The NIC retransmits (docs/retransmission.md): a NAK or an expired
        // timer must be followed by a rewind.
        out[q.qp as usize] = super::gbn_check::RetryCfg {
            timeout: q.timeout,
            retry_cnt: q.retry_cnt,
            rnr_retry: q.rnr_retry,
            rewinds: true,
        };
    }
    out
}

/// Keeps a NIC's expectation the one the ACKs that reached it so far call
/// for (`tx_reference::expected_with` on [`arrived_acks`]), looking at
/// each frame of its `rx_*` once and working the expectation out again
/// only when an ACK or NAK arrived.
///
/// It also follows the local ACK timer: a QP whose timer runs out in the
/// middle of a message sends no more of it, so once the NIC has been
/// silent (nothing sent, nothing received) for the quiet window its
/// timeouts call for, [`super::timer_exhaust`] is asked, as at the end of
/// the run, and a predicted exhaustion takes that QP's rest out of what
/// the run waits for. The same question covers a QP its responder moved
/// to ERROR: what no ACK covered drains by its timer, and what it never
/// sent is flushed (with no timer, after `DRAIN_CYCLES` of silence).
#[derive(Debug, Default)]
pub(super) struct AckFollower {
    /// Frames of the NIC's `rx_*` already looked at.
    seen: usize,
    acks: Vec<(u32, u32, u8)>,
    /// Timer exhaustions predicted during the run: (QP, oldest
    /// unacknowledged PSN, status).
    timer: Vec<(u32, u32, u8)>,
}

impl AckFollower {
    pub(super) fn follow(&mut self, e: &mut RnicTopEnv) {
        if self.catch_up(e) {
            e.expected =
                super::tx_reference::expected_after(&e.vector, &self.acks, &[], &self.timer);
        }
    }

    /// Adds the ACKs and NAKs among the frames `rx_*` took since the last
    /// call; whether there were any.
    fn catch_up(&mut self, e: &RnicTopEnv) -> bool {
        if e.rx.sent.len() == self.seen {
            return false;
        }
        let before = self.acks.len();
        self.acks.extend(acks_in(e, self.seen));
        self.seen = e.rx.sent.len();
        self.acks.len() != before
    }

    /// At `cycle`: once the NIC has been silent for exactly its timer's
    /// quiet window, the exhaustions the wire shows so far.
    pub(super) fn follow_timer(&mut self, e: &mut RnicTopEnv, cycle: u64) {
        // Without a timer the window is the drain's: a QP its responder
        // moved to ERROR has its unsent WQEs flushed, timer or not.
        let horizon = e.timer_quiet();
        if !e.running() {
            return;
        }
        let tx = e.frame_ends.last().copied().unwrap_or(0);
        let rx = e.rx.sent.last().map_or(0, |s| s.last);
        if cycle != tx.max(rx) + horizon {
            return;
        }
        let retry = retry_config(&e.vector);
        let mut timer = self.timer.clone();
        for t in e.gbn_traces(&retry) {
            // A pause in the window may have held a resend back.
            let held = t.paused.iter().any(|&(_, b)| b + horizon > cycle);
            if held || e.expected.nak_errors.contains(&t.qp) || timer.iter().any(|x| x.0 == t.qp) {
                continue;
            }
            if let Ok(Some(x)) = super::timer_exhaust::predict(&t) {
                if takes_effect(e, t.qp, &x) {
                    timer.push((t.qp, x.psn, x.status));
                }
            }
        }
        if timer.len() != self.timer.len() {
            self.timer = timer;
            self.catch_up(e);
            e.expected =
                super::tx_reference::expected_after(&e.vector, &self.acks, &[], &self.timer);
        }
    }
}

/// Whether QP `qp`'s predicted end `x` changes what the reference expects:
/// always, but for a flush of WQEs never sent (a QP its responder moved to
/// ERROR with nothing outstanding), only while the reference still
/// expects packets from its PSN on.
fn takes_effect(e: &RnicTopEnv, qp: u32, x: &TimerExhaustion) -> bool {
    if x.kind != ExhaustKind::Unsent {
        return true;
    }
    let Some(q) = e.vector.qps.iter().find(|q| q.qp == qp) else {
        return false;
    };
    let at = x.psn.wrapping_sub(q.psn) & 0xFF_FFFF;
    e.expected.packets[qp as usize]
        .iter()
        .any(|p| p.psn.wrapping_sub(q.psn) & 0xFF_FFFF >= at)
}

/// The ACKs and NAKs that arrived on the NIC's `rx_*`, classified by
/// their bytes: (DestQP, PSN, syndrome), in arrival order.
pub(super) fn arrived_acks(e: &RnicTopEnv) -> Vec<(u32, u32, u8)> {
    acks_in(e, 0)
}

/// [`arrived_acks`] among the frames of the NIC's `rx_*` from index `from`.
fn acks_in(e: &RnicTopEnv, from: usize) -> Vec<(u32, u32, u8)> {
    let live = rx_reference::live_qps(&e.vector);
    e.rx.sent[from..]
        .iter()
        .filter_map(|s| match rx_reference::classify(&s.bytes, s.fcs, &live) {
            RxEvent::Ack {
                qp, psn, syndrome, ..
            } => Some((qp, psn, syndrome)),
            _ => None,
        })
        .collect()
}

/// DCQCN's counters against the CNPs the NIC received: every CNP for a live
/// QP reaches the reaction point (`dcqcn_cnp`), and each one for a QP with
/// congestion control on cuts its rate (`dcqcn_cut`; docs/rx_cc.md,
/// `dcqcn`).
pub(super) fn check_dcqcn(v: &Vector, e: &RnicTopEnv) -> Vec<String> {
    let live = rx_reference::live_qps(v);
    let (mut cnp, mut cut) = (0u64, 0u64);
    for s in &e.rx.sent {
        if let RxEvent::Cnp { qp } = rx_reference::classify(&s.bytes, s.fcs, &live) {
            cnp += 1;
            if v.qps.iter().any(|q| q.qp == qp && q.cc) {
                cut += 1;
            }
        }
    }
    let get = |n: &str| e.counters.iter().find(|(m, _)| m == n).map(|x| x.1 as u64);
    let mut out = Vec::new();
    for (name, want) in [("dcqcn_cnp", cnp), ("dcqcn_cut", cut)] {
        if get(name) != Some(want) {
            out.push(format!(
                "{name} = {:?}, the CNPs received call for {want}",
                get(name)
            ));
        }
    }
    out
}

/// What a pair run produced: `report` as for a single NIC (cycles, verdict
/// material, `tx_frames` = both directions in time order, failures named
/// by NIC or link), and each NIC's results.
pub struct PairReport {
    pub report: Report,
    pub a: Expect,
    pub b: Expect,
    /// Per host (0 = A, 1 = B): what happened when, for figures.
    pub times: [HostTimes; 2],
    /// Per host, per QP index: request packets sent first and resent
    /// (filled by the end-of-run checks, i.e. without a divergence).
    pub sends: [Vec<super::rnic_top::QpSends>; 2],
    /// Per direction (0: A to B, 1: B to A), the link's record: every frame
    /// as its sender sent it, with its cycles and what the link did to it
    /// (lost, corrupted, ...): the loss figures (`tests/pair_loss_figures.rs`)
    /// count the frames lost and time the sender's frames from it.
    pub links: [Vec<LinkFrame>; 2],
}

/// One host of a pair run, with cycle stamps (`tests/pair_figures.rs`).
#[derive(Debug, Clone, Default)]
pub struct HostTimes {
    /// Cycle of each SQ doorbell MMIO write (the timed `doorbells` and the
    /// program's `post_send`s), in order: the cycle `mmio_wr_valid` is high.
    pub doorbells: Vec<u64>,
    /// Every TLP between the NIC and its root complex, in order: `rq` the
    /// NIC's requests (MRd, MWr) stamped with the cycle of their last beat
    /// on `rq_*`, `rc` the completions with the cycle of their last beat
    /// taken on `rc_*`.
    pub tlps: Vec<crate::env::TlpLogEntry>,
    /// The MWrs into a CQ ring, decoded, with their cycle (filled only when
    /// the end-of-run checks ran, i.e. without a divergence).
    pub cqes: Vec<super::rnic_top::CqeWrite>,
    /// (cycle, CQ) of each interrupt.
    pub irqs: Vec<(u64, u8)>,
    /// Every frame that arrived on the NIC's `rx_*`, with the cycles of
    /// its first and last beat there (after the link: delay, losses).
    pub rx: Vec<super::rx_wire::RxSent>,
}

impl HostTimes {
    fn take(e: &mut RnicTopEnv) -> Self {
        HostTimes {
            doorbells: std::mem::take(&mut e.doorbell_cycles),
            tlps: e.common.rc.log().to_vec(),
            cqes: std::mem::take(&mut e.cqe_log),
            irqs: std::mem::take(&mut e.irqs),
            rx: std::mem::take(&mut e.rx.sent),
        }
    }
}

impl PairReport {
    pub fn to_expect(&self) -> SystemExpect {
        SystemExpect {
            cycles: self.report.cycles,
            a: self.a.clone(),
            b: self.b.clone(),
        }
    }
}

/// The `rnic_top` model of one NIC: [`RnicTop`], or in a self-test a
/// deliberately broken one.
pub trait NicModel: Dut<In = RnicTopIn, Out = RnicTopOut> + Trace {}
impl<M: Dut<In = RnicTopIn, Out = RnicTopOut> + Trace> NicModel for M {}

/// One NIC's DUTs: the model, the RTL, or both.
pub(super) struct Duts<M> {
    pub model: Option<M>,
    pub rtl: Option<Rtl<RtlRnicTopTop>>,
}

impl<M: NicModel> Duts<M> {
    pub fn new(mode: Mode, mk: impl FnOnce() -> M) -> Self {
        Duts {
            model: (mode != Mode::Rtl).then(mk),
            rtl: (mode != Mode::Model).then(Rtl::<RtlRnicTopTop>::new),
        }
    }

    /// (the outputs the environment follows, the RTL's when both run).
    pub fn reset(&mut self) -> (RnicTopOut, Option<RnicTopOut>) {
        let r = self.rtl.as_mut().map(|r| r.reset());
        match self.model.as_mut() {
            Some(m) => (m.reset(), r),
            None => (r.expect("the RTL runs"), None),
        }
    }

    pub fn tick(&mut self, i: &RnicTopIn) -> (RnicTopOut, Option<RnicTopOut>) {
        let r = self.rtl.as_mut().map(|r| r.tick(i));
        match self.model.as_mut() {
            Some(m) => (m.tick(i), r),
            None => (r.expect("the RTL runs"), None),
        }
    }

    /// Starts tracing into `dir` (created): `rtl.vcd` from the RTL,
    /// `model.vcd` for the model, whose writer is returned; each file
    /// written is added to `files`.
    pub fn open_traces(
        &mut self,
        dir: &Path,
        files: &mut Vec<PathBuf>,
    ) -> Result<Option<ModelVcd<RnicTopIn, RnicTopOut>>, String> {
        let at = |p: &Path| {
            let p = p.to_path_buf();
            move |e: std::io::Error| format!("cannot write {}: {e}", p.display())
        };
        std::fs::create_dir_all(dir).map_err(at(dir))?;
        if let Some(r) = self.rtl.as_mut() {
            let p = dir.join("rtl.vcd");
            r.try_trace_open(&p).map_err(at(&p))?;
            files.push(p);
        }
        let Some(m) = self.model.as_ref() else {
            return Ok(None);
        };
        let p = dir.join("model.vcd");
        let w = ModelVcd::create(&p, RtlRnicTopTop::NAME, Some(m as &dyn Trace)).map_err(at(&p))?;
        files.push(p);
        Ok(Some(w))
    }

    /// Writes this cycle into the model's trace `w`, if one is open: the
    /// inputs `i`, the outputs `out` seen in it and `next` after its edge.
    /// `who` names the NIC in an error.
    pub fn record(
        &self,
        w: &mut Option<ModelVcd<RnicTopIn, RnicTopOut>>,
        cycle: u64,
        i: &RnicTopIn,
        out: &RnicTopOut,
        next: &RnicTopOut,
        who: &str,
    ) -> Result<(), String> {
        let Some(w) = w.as_mut() else {
            return Ok(());
        };
        let regs = self.model.as_ref().map(|m| m as &dyn Trace);
        w.cycle(cycle, i, out, next, regs)
            .map_err(|e| format!("cannot write the model VCD of {who}: {e}"))
    }

    /// Ends the traces [`Duts::open_traces`] began (`w`, the model's).
    pub fn close_traces(
        &mut self,
        w: Option<ModelVcd<RnicTopIn, RnicTopOut>>,
        who: &str,
    ) -> Result<(), String> {
        if let Some(r) = self.rtl.as_mut() {
            r.trace_close();
        }
        match w {
            Some(w) => w
                .finish()
                .map_err(|e| format!("cannot write the model VCD of {who}: {e}")),
            None => Ok(()),
        }
    }
}

/// Tracing of a replay: from cycle `from`, into `dir/a/` and `dir/b/`.
struct TraceTo<'a> {
    from: u64,
    dir: &'a Path,
}

type Traced = Result<Vec<PathBuf>, String>;

/// The environment after a run, how it ended, its divergence, its waveforms.
type Simulated = (PairEnv, Finished, Option<Box<Divergence>>, Traced);

/// Runs the pair from reset. With `trace`, steps cycles `0..=max_cycles`
/// and traces (a replay; nothing is compared); otherwise stops when both
/// NICs are done, at `max_cycles`, or at the first divergence or failed
/// RTL assertion.
fn simulate<M: NicModel>(
    v: &SystemVector,
    link: &LinkSpec,
    mode: Mode,
    mk_model: &impl Fn(usize) -> M,
    max_cycles: u64,
    trace: Option<TraceTo>,
) -> Result<Simulated, String> {
    let mut env = PairEnv::with_link(v, link)?;
    let mut duts = [
        Duts::new(mode, || mk_model(0)),
        Duts::new(mode, || mk_model(1)),
    ];
    let _ = take_assertion_failure();
    let mut outs = [duts[0].reset(), duts[1].reset()];
    let mut vcds: [Option<ModelVcd<RnicTopIn, RnicTopOut>>; 2] = [None, None];
    let mut files = Vec::new();
    let mut cycle = 0u64;
    loop {
        if let Some(t) = &trace {
            if cycle > max_cycles {
                break;
            }
            if cycle == t.from {
                for (n, d) in duts.iter_mut().enumerate() {
                    vcds[n] = d.open_traces(&t.dir.join(["a", "b"][n]), &mut files)?;
                }
            }
        } else {
            for n in 0..2 {
                if let (o, Some(r)) = &outs[n] {
                    if let Some(diff) = compare(o, r) {
                        let d = Divergence {
                            block: BLOCK[n],
                            cycle,
                            diff,
                            history: Vec::new(),
                            assertion: None,
                        };
                        let fin = Finished {
                            cycles: cycle,
                            completed: false,
                        };
                        return Ok((env, fin, Some(Box::new(d)), Ok(Vec::new())));
                    }
                }
            }
            if env.finished() || cycle >= max_cycles {
                let fin = Finished {
                    cycles: cycle,
                    completed: env.finished(),
                };
                return Ok((env, fin, None, Ok(Vec::new())));
            }
        }
        let ins = env.step(cycle, [&outs[0].0, &outs[1].0]);
        for n in 0..2 {
            let next = duts[n].tick(&ins[n]);
            if let Some(a) = take_assertion_failure() {
                if trace.is_none() {
                    let d = Divergence::from_assertion(BLOCK[n], a, Vec::new());
                    let fin = Finished {
                        cycles: cycle + 1,
                        completed: false,
                    };
                    return Ok((env, fin, Some(Box::new(d)), Ok(Vec::new())));
                }
            }
            let who = format!("NIC {}", NICS[n]);
            duts[n].record(&mut vcds[n], cycle, &ins[n], &outs[n].0, &next.0, &who)?;
            outs[n] = next;
        }
        cycle += 1;
    }
    for (n, d) in duts.iter_mut().enumerate() {
        d.close_traces(vcds[n].take(), &format!("NIC {}", NICS[n]))?;
    }
    let fin = Finished {
        cycles: cycle,
        completed: env.finished(),
    };
    Ok((env, fin, None, Ok(files)))
}

/// Runs a system vector in `mode`. Errors only for a vector the
/// environment cannot be built from; everything that goes wrong in the run
/// is in the report. `opts` as for a single NIC; the waveforms go to
/// `DIR/a/` and `DIR/b/`.
pub fn run(v: &SystemVector, mode: Mode, opts: &super::RunOpts) -> Result<PairReport, String> {
    run_with(v, mode, opts, |_| RnicTop::new())
}

/// [`run`] with the models `mk_model(0)` (A) and `mk_model(1)` (B): the
/// divergence self-test breaks one of them on purpose.
pub fn run_with<M: NicModel>(
    v: &SystemVector,
    mode: Mode,
    opts: &super::RunOpts,
    mk_model: impl Fn(usize) -> M,
) -> Result<PairReport, String> {
    run_with_link(v, &v.link, mode, opts, mk_model)
}

/// [`run_with`] over the link `link` in place of the vector's, while the
/// checks judge by the vector's: `tests/pair_link_faults.rs` shows that
/// the link check fails a link that does not do what the vector says.
pub fn run_with_link<M: NicModel>(
    v: &SystemVector,
    link: &LinkSpec,
    mode: Mode,
    opts: &super::RunOpts,
    mk_model: impl Fn(usize) -> M,
) -> Result<PairReport, String> {
    let (mut env, fin, div, _) = simulate(v, link, mode, &mk_model, v.max_cycles, None)?;
    for l in &mut env.links {
        l.close();
    }
    let dir = super::vcd_dir(opts, div.is_some(), &v.name);
    let vcd: Traced = match dir {
        Some(dir) => {
            let end = fin.cycles;
            let from = end.saturating_sub(opts.vcd_window.unwrap_or(VCD_WINDOW));
            match simulate(
                v,
                link,
                mode,
                &mk_model,
                end,
                Some(TraceTo { from, dir: &dir }),
            ) {
                Ok((_, _, _, files)) => files,
                Err(e) => Err(e),
            }
        }
        None => Ok(Vec::new()),
    };
    let failures = if div.is_none() {
        env.finish_checks(v, fin.cycles)
    } else {
        Vec::new()
    };
    let mut fcov = crate::fcov::sample::nic(&env.nic[0]);
    fcov.merge(&crate::fcov::sample::nic(&env.nic[1]));
    // Both directions as the frames left their senders, in time order;
    // with faults, each frame the link altered or lost says what it did.
    let mut tx: Vec<(u64, Vec<u8>, String)> = Vec::new();
    for (n, e) in env.nic.iter().enumerate() {
        for (k, (first, b)) in e.frames.iter().enumerate() {
            let acts = env.links[n].frames.get(k).map(LinkFrame::describe);
            let c = match acts {
                Some(a) if !a.is_empty() => {
                    format!("{} to {} frame {k}: {a}", NICS[n], NICS[1 - n])
                }
                _ => String::new(),
            };
            tx.push((*first, b.clone(), c));
        }
    }
    tx.sort_by_key(|f| f.0);
    let with_comments = link.a_to_b.faulty() || link.b_to_a.faulty();
    let tx_comments = with_comments.then(|| tx.iter().map(|f| f.2.clone()).collect());
    let tx_frames: Vec<(u64, Vec<u8>)> = tx.into_iter().map(|f| (f.0, f.1)).collect();
    let (a, b) = (env.expect_of(0), env.expect_of(1));
    let sends = [env.nic[0].sends.clone(), env.nic[1].sends.clone()];
    let links = [
        std::mem::take(&mut env.links[0].frames),
        std::mem::take(&mut env.links[1].frames),
    ];
    let times = [
        HostTimes::take(&mut env.nic[0]),
        HostTimes::take(&mut env.nic[1]),
    ];
    let mut report = Report {
        name: v.name.clone(),
        cycles: fin.cycles,
        completed: fin.completed,
        reads: Vec::new(),
        writes: Vec::new(),
        frames: Vec::new(),
        cqes: Vec::new(),
        tx_frames,
        tx_comments,
        counters: BTreeMap::new(),
        failures,
        divergence: div,
        tlp_log: Vec::new(),
        vcd: Vec::new(),
        vcd_error: None,
        fcov,
        idle_skipped: 0,
    };
    match vcd {
        Ok(f) => report.vcd = f,
        Err(e) => report.vcd_error = Some(e),
    }
    Ok(PairReport {
        report,
        a,
        b,
        times,
        sends,
        links,
    })
}

/// Differences between a clean pair run's results and the blessed ones.
pub fn mismatches(v: &SystemVector, r: &PairReport) -> Vec<String> {
    let Some(x) = &v.expect else {
        return vec!["no expected results: run `rnic bless` on this vector".into()];
    };
    let mut out = Vec::new();
    if x.cycles != r.report.cycles {
        out.push(format!(
            "cycles: expected {}, got {}",
            x.cycles, r.report.cycles
        ));
    }
    for (n, (e, g)) in [(&x.a, &r.a), (&x.b, &r.b)].into_iter().enumerate() {
        out.extend(host_mismatches(["a", "b"][n], e, g));
    }
    out
}

/// Differences between one NIC's blessed results `e` and a run's `g`,
/// each named under `who.`.
pub(super) fn host_mismatches(who: &str, e: &Expect, g: &Expect) -> Vec<String> {
    let mut out = Vec::new();
    if e.cycles != g.cycles {
        out.push(format!(
            "{who}.cycles: expected {}, got {}",
            e.cycles, g.cycles
        ));
    }
    for (k, (ef, gf)) in e.frames.iter().zip(&g.frames).enumerate() {
        if ef != gf {
            out.push(format!(
                "{who}.frames[{k}]: expected {} ({} bytes, {:#x}), got {} ({} bytes, {:#x})",
                ef.what, ef.len, ef.digest.0, gf.what, gf.len, gf.digest.0
            ));
        }
    }
    if e.frames.len() != g.frames.len() {
        out.push(format!(
            "{who}.frames: expected {}, got {}",
            e.frames.len(),
            g.frames.len()
        ));
    }
    if e.cqes != g.cqes {
        out.push(format!(
            "{who}.cqes: expected {:?}, got {:?}",
            e.cqes, g.cqes
        ));
    }
    if e.counters != g.counters {
        out.push(format!(
            "{who}.counters: expected {:?}, got {:?}",
            e.counters, g.counters
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marking_sets_ce_and_keeps_the_ipv4_checksum_good() {
        // Ethernet + IPv4 header with ECT(0), checksum filled.
        let mut f = vec![0u8; 14 + 20];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[15] = 26 << 2 | 2;
        f[16..18].copy_from_slice(&20u16.to_be_bytes());
        f[22] = 64;
        f[23] = 17;
        let s = crate::wire::roce::ipv4::checksum(&f[14..34]);
        f[24..26].copy_from_slice(&s.to_be_bytes());
        assert!(mark_ce(&mut f));
        assert_eq!(f[15] & 3, 3);
        assert_eq!(f[15] >> 2, 26);
        assert_eq!(crate::wire::roce::ipv4::checksum(&f[14..34]), 0);
        // Now CE: not ECT any more.
        assert!(!mark_ce(&mut f));
        // Not-ECT is left alone.
        let mut g = f.clone();
        g[15] &= !3;
        let before = g.clone();
        assert!(!mark_ce(&mut g));
        assert_eq!(g, before);
    }
}
