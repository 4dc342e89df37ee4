//! Go-back-N order (docs/retransmission.md, docs/protocol.md section 8),
//! as a pure function of what was on the wire: per QP the request packets
//! a NIC sent, in order, the acknowledgements and READ responses that
//! arrived at it, and the QP's retry attributes. PSNs of consecutive
//! request packets run on (next = previous + span) except at a rewind, and
//! every rewind has a cause that names its PSN:
//!
//! - (a) a sequence-error NAK of r that arrived (last beat) at t, the
//!   rewind's first beat after t;
//! - (b) an RNR NAK of r that arrived at t, the resend not before t plus
//!   the RNR time its timer code names ([`rnr_cycles`]);
//! - (c) the local ACK timeout: r the oldest unacknowledged PSN, at least
//!   one period ([`RetryCfg::period`]) after the last progress, less
//!   [`TIMER_SLACK`] cycles of scanner resolution;
//! - (d) a READ gap: r the first missing response PSN of the oldest READ
//!   not done, as a response ahead of it showed before the rewind (the
//!   responses taken as `rd_sink` takes them: in order, for that READ).
//!
//! Every READ response taken in order acknowledges its PSN (una moves
//! past it), so a timeout in the middle of a READ names its first
//! missing response, not the READ's first PSN.
//!
//! After a cause (a NAK, an RNR NAK, an expired timeout) the NIC may still
//! send up to `window` frames of the old sequence (committed before the
//! cause reached it); the next one must be the rewind to the cause's PSN.
//! When the old sequence reaches that PSN on its own (a replay from an
//! earlier rewind passing it), the cause is served, and a rewind to the
//! same PSN within the window after is a legal duplicate resend.
//!
//! The responder side ([`check_responder`]): a responder sends one
//! sequence-error NAK per episode; the next one only after the PSN the
//! first one named has arrived.

/// Frames of the old sequence a QP may still send after a cause before
/// its rewind must begin (docs/retransmission.md, "Reaction window"):
/// everything already committed to `pkt_builder` goes out, up to its
/// descriptor queue (DESC_DEPTH = 32), plus the step `tx_engine` finishes
/// and the one the cause overtook on the wire.
pub const REACTION_FRAMES: usize = 34;

/// Cycles a timeout may fire before its nominal expiry: `retx_ctl`'s
/// scanner visits a QP once every QPS cycles (256 at 256 QPs), so where
/// it samples progress and expiry each may be off by that much.
pub const TIMER_SLACK: u64 = 256;

/// The local ACK timer's unit: 4.096 us at 250 MHz.
pub const T_UNIT: u64 = 1024;

/// The RNR timer's unit: 10 us at 250 MHz.
pub const R_UNIT: u64 = 2500;

const PSN_MOD: u32 = 1 << 24;

/// RNR timer codes 1..=31 in units of 10 us (docs/protocol.md section 8,
/// the table in ms divided by 0.01); code 0 is 655.36 ms.
const RNR_UNITS: [u64; 32] = [
    65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
];

/// Cycles an RNR NAK with timer code `code` (5 bits) asks the requester
/// to wait.
pub fn rnr_cycles(code: u8) -> u64 {
    RNR_UNITS[(code & 0x1F) as usize] * R_UNIT
}

/// A QP's retry attributes (the QP register `RETRY`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryCfg {
    /// Local ACK timeout code, 5 bits; 0 = no timer.
    pub timeout: u8,
    pub retry_cnt: u8,
    /// 7 = no limit.
    pub rnr_retry: u8,
    /// The NIC retransmits (go-back-N is built): a cause obliges the
    /// rewind within the reaction window. Off, a cause only justifies a
    /// rewind (today's NIC ignores NAKs and has no timer).
    pub rewinds: bool,
}

impl RetryCfg {
    /// The local ACK timeout in cycles (`T_UNIT << timeout`), None when off.
    pub fn period(&self) -> Option<u64> {
        (self.timeout & 0x1F != 0).then(|| T_UNIT << (self.timeout & 0x1F))
    }
}

/// One request packet a NIC sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentPkt {
    pub psn: u32,
    /// Cycles of its first and last beat on `tx_*`.
    pub first: u64,
    pub last: u64,
    /// PSNs it uses: 1, or a READ REQUEST's response count.
    pub span: u32,
    /// A READ REQUEST.
    pub read: bool,
}

/// An acknowledgement's class, by its AETH syndrome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckKind {
    Ack,
    /// NAK, PSN sequence error.
    SeqNak,
    /// RNR NAK with its timer code.
    RnrNak {
        timer: u8,
    },
    /// NAK invalid request, remote access or remote operational error:
    /// the QP goes to ERROR.
    RemoteErr,
}

impl AckKind {
    /// The class of an AETH syndrome; None for the reserved ones.
    pub fn of_syndrome(syndrome: u8) -> Option<AckKind> {
        match (syndrome >> 5, syndrome & 0x1F) {
            (0b000, _) => Some(AckKind::Ack),
            (0b001, timer) => Some(AckKind::RnrNak { timer }),
            (0b011, 0) => Some(AckKind::SeqNak),
            (0b011, _) => Some(AckKind::RemoteErr),
            _ => None,
        }
    }
}

/// An acknowledgement that arrived at the requester.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckIn {
    /// Cycle of its last beat on `rx_*`.
    pub cycle: u64,
    pub psn: u32,
    pub kind: AckKind,
}

/// A READ RESPONSE frame that arrived at the requester: (cycle of its last
/// beat, PSN).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadResp {
    pub cycle: u64,
    pub psn: u32,
}

/// Everything the requester check needs about one QP.
#[derive(Debug, Clone, Default)]
pub struct QpTrace {
    pub qp: u32,
    /// The QP's first PSN, as software configured it.
    pub start: u32,
    /// Request packets in the order they left.
    pub sent: Vec<SentPkt>,
    /// In arrival order.
    pub acks: Vec<AckIn>,
    /// In arrival order.
    pub read_resps: Vec<ReadResp>,
    pub retry: RetryCfg,
    /// PSN jumps that are no rewinds, (end, next): after a packet whose
    /// PSNs end before `end`, the QP's next packet has PSN `next` (PSNs
    /// the reference skips, e.g. a WQE whose payload read failed).
    pub skips: Vec<(u32, u32)>,
    /// From this cycle the QP is in ERROR by retry exhaustion (status 12
    /// / 13, predicted from the requests that left): as after a
    /// remote-error NAK, no cause obliges a rewind any more.
    pub exhausted_at: Option<u64>,
    /// The cycle (last beat) the NAK that moved the QP to ERROR arrived
    /// (a remote error, or the NAK retries ran out on, as the reference
    /// names it). From ERROR on, no cause obliges a rewind and the QP
    /// starts nothing new: at most `window` frames committed before it may
    /// still leave.
    pub error_at: Option<u64>,
    /// The cycle (first beat) the NIC sent a remote-error NAK for this QP:
    /// its responder moved the QP to ERROR outside the requester's error
    /// mode. The same rule as `error_at` from then on; its local ACK timer
    /// keeps running and, once it runs out, the requests still
    /// unacknowledged are flushed (status 5; docs/retransmission.md,
    /// "A QP in ERROR").
    pub resp_error_at: Option<u64>,
    /// The reference has the QP end in ERROR by a NAK (a remote error, or
    /// retries run out on NAKs): its last cause obliges no rewind.
    pub ends_in_error: bool,
    /// The run waited out every rewind a cause calls for (a pair's quiet
    /// window: a rewind's reads, the RNR time, a timer period), so a cause
    /// left unserved at its end is a violation. A single NIC's run with a
    /// scripted peer does not wait for RNR times.
    pub settles: bool,
    /// Cycles (first, last) the QP's priority was paused by PFC frames
    /// that reached the NIC, in time order: a packet held by a pause may
    /// have been committed, and its timer started, long before it left.
    pub paused: Vec<(u64, u64)>,
}

/// `to` is this many PSNs after `from`, modulo 2^24.
fn dist(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from) % PSN_MOD
}

fn add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) % PSN_MOD
}

/// `b` is 1 .. 2^23 - 1 PSNs after `a`.
fn after(a: u32, b: u32) -> bool {
    (1..1 << 23).contains(&dist(a, b))
}

#[derive(Debug, Clone, Copy)]
enum CauseKind {
    Seq,
    Rnr { not_before: u64 },
    Timeout,
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    kind: CauseKind,
    /// Cycle of the cause.
    t: u64,
    target: u32,
    /// Old-sequence frames sent since.
    frames: usize,
}

impl Pending {
    fn describe(&self) -> String {
        match self.kind {
            CauseKind::Seq => format!("sequence NAK of PSN {} at cycle {}", self.target, self.t),
            CauseKind::Rnr { not_before } => format!(
                "RNR NAK of PSN {} at cycle {} (resend from cycle {not_before})",
                self.target, self.t
            ),
            CauseKind::Timeout => format!(
                "local ACK timeout at cycle {} (oldest unacknowledged PSN {})",
                self.t, self.target
            ),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Ack(AckIn),
    Resp(ReadResp),
}

impl Ev {
    fn cycle(&self) -> u64 {
        match self {
            Ev::Ack(a) => a.cycle,
            Ev::Resp(r) => r.cycle,
        }
    }
}

/// The requester window as the arrivals move it.
struct Window {
    /// None before the first packet.
    una: Option<u32>,
    nxt: u32,
    /// Cycle the local ACK timer last (re)started.
    since: u64,
    halted: bool,
}

impl Window {
    fn busy(&self) -> bool {
        self.una.is_some_and(|u| u != self.nxt)
    }

    /// `p` lies in [una, nxt].
    fn holds(&self, p: u32) -> bool {
        self.una.is_some_and(|u| dist(u, p) <= dist(u, self.nxt))
    }

    /// Everything before `p` is acknowledged (p in [una, nxt]).
    fn ack_to(&mut self, p: u32, cycle: u64) {
        if let Some(u) = self.una {
            if u != p && self.holds(p) {
                self.una = Some(p);
                self.since = cycle;
            }
        }
    }
}

/// Go-back-N order of one QP's requests (module doc). Returns the
/// violations, each naming the QP, the PSNs and the cycles.
pub fn check_requester(t: &QpTrace, window: usize) -> Vec<String> {
    let qp = t.qp;
    let mut out = Vec::new();
    let period = t.retry.period();
    let mut evs: Vec<Ev> = t
        .acks
        .iter()
        .map(|&a| Ev::Ack(a))
        .chain(t.read_resps.iter().map(|&r| Ev::Resp(r)))
        .collect();
    evs.sort_by_key(Ev::cycle);
    let mut w = Window {
        una: None,
        nxt: 0,
        since: 0,
        halted: false,
    };
    let mut pending: Option<Pending> = None;
    // A cause whose PSN the running sequence reached on its own (a replay
    // from an earlier rewind passing it), with the frames sent since: the
    // NIC may still rewind to it within the window, a legal resend.
    let mut reached: Option<(u32, usize)> = None;
    let mut prev: Option<SentPkt> = None;
    let mut rd = ReadSink::default();
    let mut ei = 0;
    // An expired local ACK timer before cycle `now` becomes the pending
    // cause (only when nothing else is pending: an RNR wait or a NAK's
    // rewind holds the timer).
    let expire = |w: &mut Window, pending: &mut Option<Pending>, now: u64| {
        let Some(p) = period else { return };
        if w.halted || pending.is_some() || !w.busy() {
            return;
        }
        let due = w.since + p;
        if now > due + TIMER_SLACK {
            *pending = Some(Pending {
                kind: CauseKind::Timeout,
                t: due,
                target: w.una.expect("busy"),
                frames: 0,
            });
            w.since = due;
        }
    };
    // ERROR (retries run out, or a remote-error NAK): the QP stops within
    // the reaction window.
    let error = [t.exhausted_at, t.error_at, t.resp_error_at]
        .into_iter()
        .flatten()
        .min();
    let mut after_error = 0;
    for (k, f) in t.sent.iter().enumerate() {
        if error.is_some_and(|h| f.first > h) {
            after_error += 1;
            if after_error == window + 1 {
                out.push(format!(
                    "QP {qp}: request {k} (PSN {}, cycle {}) is the {}th frame after the QP went \
                     to ERROR at cycle {} (reaction window {window}): a QP in ERROR starts nothing new",
                    f.psn,
                    f.first,
                    after_error,
                    error.unwrap_or_default()
                ));
            }
        }
        while ei < evs.len() && evs[ei].cycle() < f.first {
            let e = evs[ei];
            ei += 1;
            expire(&mut w, &mut pending, e.cycle());
            arrive(e, &mut w, &mut pending);
            if let Ev::Resp(r) = e {
                rd.take(r.psn);
            }
        }
        if error.is_some_and(|x| x <= f.first) {
            w.halted = true;
            pending = None;
        }
        expire(&mut w, &mut pending, f.first);
        let at = format!(
            "QP {qp}: request {k} (PSN {}, cycles {}..={})",
            f.psn, f.first, f.last
        );
        let cont = prev.is_none_or(|p| {
            let end = add(p.psn, p.span);
            f.psn == end || t.skips.contains(&(end, f.psn))
        });
        if let Some((_, n)) = reached.as_mut() {
            *n += 1;
        }
        match pending {
            // (A target the reference expects missing, e.g. a WQE whose
            // payload read fails again, is passed over as in order.)
            Some(pd) if f.psn == pd.target || t.skips.contains(&(pd.target, f.psn)) => {
                if cont {
                    reached = Some((pd.target, 0));
                }
                if let CauseKind::Rnr { not_before } = pd.kind {
                    if f.first < not_before {
                        out.push(format!(
                            "{at}: resent {} cycles after the {}, before its RNR time",
                            f.first - pd.t,
                            pd.describe()
                        ));
                    }
                }
                pending = None;
            }
            Some(mut pd) if cont => {
                pd.frames += 1;
                if pd.frames > window && !t.retry.rewinds {
                    // Nothing retransmits: the cause is ignored.
                    pending = None;
                } else if pd.frames > window {
                    out.push(format!(
                        "{at}: old sequence {} frames after the {} (reaction window {window}); \
                         expected the rewind to PSN {}",
                        pd.frames,
                        pd.describe(),
                        pd.target
                    ));
                    pending = None;
                } else {
                    pending = Some(pd);
                }
            }
            Some(pd) => {
                if other_cause(&w, period, &rd, f).is_none() {
                    out.push(format!(
                        "{at}: rewind to PSN {}, but the {} calls for PSN {}",
                        f.psn,
                        pd.describe(),
                        pd.target
                    ));
                }
                pending = None;
            }
            None if cont => {}
            None => {
                let why = other_cause(&w, period, &rd, f);
                if let (Some("timeout"), Some(p)) = (why, period) {
                    // The timer reloads when it expires (nominally here).
                    w.since += p;
                }
                let again = reached.is_some_and(|(r, n)| r == f.psn && n <= window);
                if why.is_none() && !again {
                    let p = prev.expect("not the first");
                    out.push(format!(
                        "{at}: rewind from PSN {} (request {}, cycle {}) with no cause: no NAK, \
                         RNR NAK, timeout (una {:?}, timer since cycle {}, period {:?}) or READ gap calls for it",
                        add(p.psn, p.span),
                        k - 1,
                        p.first,
                        w.una,
                        w.since,
                        period
                    ));
                }
            }
        }
        // The window: nxt only moves forward; a send into an empty window
        // starts the timer.
        let end = add(f.psn, f.span);
        match w.una {
            None => {
                // PSNs before the first packet that never went out (a WQE
                // whose payload read failed) are unacknowledged too.
                let start = t.skips.iter().find(|s| s.1 == f.psn).map_or(f.psn, |s| s.0);
                w.una = Some(start);
                w.nxt = end;
                // Held by a pause, the first packet's timer may have
                // started at any time before (`since` stays 0).
                if !t.paused.iter().any(|&(a, _)| a < f.first) {
                    w.since = f.first;
                }
            }
            Some(u) => {
                // The NIC's timer starts when a packet is committed into an
                // empty window, a little before its first beat, unless a
                // pause held it: then it may have started at any time
                // since the window emptied (`since` stays that progress).
                let held = t.paused.iter().any(|&(a, b)| b >= w.since && a < f.first);
                if !w.busy() && end != u && dist(u, f.psn) < 1 << 23 && !held {
                    w.since = f.first;
                }
                if dist(u, end) > dist(u, w.nxt) && dist(u, end) < 1 << 23 {
                    w.nxt = end;
                }
            }
        }
        rd.sent(f);
        prev = Some(*f);
    }
    // What arrived after the last request: a NAK or an RNR NAK there, or
    // one still waiting for its rewind, obliges a resend the run never saw
    // (the quiet window outlasts a rewind and the RNR time named). An
    // expired timer is timer_exhaust's: a resend or an exhaustion.
    for &e in &evs[ei..] {
        if error.is_some_and(|x| x <= e.cycle()) {
            w.halted = true;
            pending = None;
        }
        arrive(e, &mut w, &mut pending);
    }
    if let Some(pd) = pending {
        let owed = t.settles && t.retry.rewinds && !w.halted && !t.ends_in_error && w.busy();
        if owed && !matches!(pd.kind, CauseKind::Timeout) && Some(pd.target) != Some(w.nxt) {
            out.push(format!(
                "QP {qp}: the {} was never followed by its rewind ({} old frames after it)",
                pd.describe(),
                pd.frames
            ));
        }
    }
    out
}

/// An acknowledgement or READ response arriving: moves the window and
/// makes a NAK or RNR NAK in it the pending cause.
fn arrive(e: Ev, w: &mut Window, pending: &mut Option<Pending>) {
    match e {
        Ev::Ack(a) => match a.kind {
            AckKind::Ack => {
                if w.holds(add(a.psn, 1)) {
                    w.ack_to(add(a.psn, 1), a.cycle);
                }
            }
            AckKind::SeqNak | AckKind::RnrNak { .. } if !w.halted && w.holds(a.psn) => {
                w.ack_to(a.psn, a.cycle);
                let kind = match a.kind {
                    AckKind::RnrNak { timer } => CauseKind::Rnr {
                        not_before: a.cycle + rnr_cycles(timer),
                    },
                    _ => CauseKind::Seq,
                };
                *pending = Some(Pending {
                    kind,
                    t: a.cycle,
                    target: a.psn,
                    frames: 0,
                });
                w.since = a.cycle;
            }
            AckKind::SeqNak | AckKind::RnrNak { .. } => {}
            AckKind::RemoteErr => {
                w.halted = true;
                *pending = None;
            }
        },
        Ev::Resp(r) => {
            // In order only (rd_sink drops a response ahead).
            if w.una == Some(r.psn) && w.busy() {
                w.ack_to(add(r.psn, 1), r.cycle);
            }
        }
    }
}

/// The READs of one QP as `rd_sink` takes their responses (docs/rd_sink.md):
/// only for the oldest READ not done, at the PSN it expects next; a
/// response ahead of that PSN opens a gap there. (Also `timer_exhaust`'s.)
#[derive(Default)]
pub(super) struct ReadSink {
    /// The READs sent, in order: (first PSN, responses, responses taken).
    reads: Vec<(u32, u32, u32)>,
    /// Every first missing PSN a response ahead showed.
    gaps: Vec<u32>,
}

impl ReadSink {
    /// Request `f` left: a READ REQUEST outside every READ sent is a new
    /// READ (one inside is that READ asked again, whole or the rest).
    pub(super) fn sent(&mut self, f: &SentPkt) {
        if f.read && !self.reads.iter().any(|h| dist(h.0, f.psn) < h.1) {
            self.reads.push((f.psn, f.span, 0));
        }
    }

    /// A READ response of PSN `psn` arrived: whether it was taken (in
    /// order, for the oldest READ not done).
    pub(super) fn take(&mut self, psn: u32) -> bool {
        let Some(h) = self.reads.iter_mut().find(|h| h.2 < h.1) else {
            return false;
        };
        let next = add(h.0, h.2);
        if psn == next {
            h.2 += 1;
            return true;
        }
        if after(next, psn) && !self.gaps.contains(&next) {
            self.gaps.push(next);
        }
        false
    }
}

/// A rewind of request `f` justified without a pending NAK: (c) the
/// timeout or (d) a READ gap. Returns which.
fn other_cause(
    w: &Window,
    period: Option<u64>,
    rd: &ReadSink,
    f: &SentPkt,
) -> Option<&'static str> {
    if let (Some(p), Some(u)) = (period, w.una) {
        if f.psn == u && w.busy() && f.first + TIMER_SLACK >= w.since + p {
            return Some("timeout");
        }
    }
    // (d): a response ahead showed f.psn as the first response missing of
    // the oldest READ not done (rd_sink's gap), before the rewind. Not
    // from una: an ACK of a later PSN may have overtaken the READ's data.
    rd.gaps.contains(&f.psn).then_some("READ gap")
}

/// The responder side of one QP: the requests that arrived (cycle of
/// their last beat, PSN), in order, and the sequence-error NAKs it sent
/// (cycle of their first beat, PSN), in order.
#[derive(Debug, Clone, Default)]
pub struct RespQp {
    pub qp: u32,
    pub requests: Vec<(u64, u32)>,
    pub seq_naks: Vec<(u64, u32)>,
}

/// One sequence-error NAK per episode: after a NAK of p (sent at s1),
/// the next sequence NAK of the QP (at s2) comes only after a request
/// with PSN p arrived. A NAK of p again needs p to have arrived after s1;
/// a NAK of another PSN (the responder's ePSN moved, so p was executed)
/// needs p to have arrived before s2, after the NAK before the first one
/// (a NAK leaves a little after the requests that follow its cause, so p
/// may have arrived just before it).
pub fn check_responder(r: &RespQp) -> Vec<String> {
    let mut out = Vec::new();
    for (j, pair) in r.seq_naks.windows(2).enumerate() {
        let ((s1, p), (s2, p2)) = (pair[0], pair[1]);
        let from = if p2 == p {
            s1
        } else {
            j.checked_sub(1).map_or(0, |i| r.seq_naks[i].0)
        };
        let arrived = r
            .requests
            .iter()
            .any(|&(c, q)| q == p && c > from && c < s2);
        if !arrived {
            out.push(format!(
                "QP {}: sequence NAK of PSN {p2} at cycle {s2}, a second one in the episode of the \
                 sequence NAK of PSN {p} at cycle {s1}: PSN {p} had not arrived in between",
                r.qp
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Single-PSN packets `psns`, one every 100 cycles from cycle 1000.
    fn sends(psns: &[u32]) -> Vec<SentPkt> {
        psns.iter()
            .enumerate()
            .map(|(k, &psn)| SentPkt {
                psn,
                first: 1000 + 100 * k as u64,
                last: 1000 + 100 * k as u64 + 10,
                span: 1,
                read: false,
            })
            .collect()
    }

    fn trace(psns: &[u32], acks: &[(u64, u32, AckKind)]) -> QpTrace {
        QpTrace {
            qp: 3,
            start: 0,
            sent: sends(psns),
            acks: acks
                .iter()
                .map(|&(cycle, psn, kind)| AckIn { cycle, psn, kind })
                .collect(),
            read_resps: Vec::new(),
            retry: RetryCfg {
                rewinds: true,
                ..RetryCfg::default()
            },
            skips: Vec::new(),
            exhausted_at: None,
            error_at: None,
            resp_error_at: None,
            ends_in_error: false,
            settles: true,
            paused: Vec::new(),
        }
    }

    fn check(t: &QpTrace) -> Vec<String> {
        check_requester(t, REACTION_FRAMES)
    }

    #[test]
    fn a_clean_run_passes() {
        let t = trace(&[10, 11, 12, 13], &[(1250, 11, AckKind::Ack)]);
        assert_eq!(check(&t), Vec::<String>::new());
        // A skip the reference calls for is no rewind.
        let mut t = trace(&[10, 11, 14], &[]);
        assert_eq!(check(&t).len(), 1);
        t.skips = vec![(12, 14)];
        assert_eq!(check(&t), Vec::<String>::new());
        // Across the PSN wrap, and a READ's span.
        let mut t = trace(&[PSN_MOD - 1, 0, 1], &[]);
        t.sent[1].span = 4;
        t.sent[1].read = true;
        t.sent[2].psn = 4;
        assert_eq!(check(&t), Vec::<String>::new());
    }

    #[test]
    fn a_nak_justified_rewind_passes() {
        // 10..14 at 1000..1400; NAK of 11 arrives at 1250: 13 (1300) is
        // inside the window, then the rewind to 11.
        let t = trace(
            &[10, 11, 12, 13, 11, 12, 13, 14],
            &[(1250, 11, AckKind::SeqNak)],
        );
        assert_eq!(check(&t), Vec::<String>::new());
    }

    #[test]
    fn a_nak_never_followed_by_its_rewind_fails() {
        // The NAK of 11 arrives after the last request: no rewind follows.
        let t = trace(&[10, 11, 12, 13], &[(1350, 11, AckKind::SeqNak)]);
        let v = check(&t);
        assert!(
            v.len() == 1 && v[0].contains("never followed by its rewind"),
            "{v:?}"
        );
        // Unless the reference ends the QP in ERROR by its NAKs.
        let mut e = t.clone();
        e.ends_in_error = true;
        assert_eq!(check(&e), Vec::<String>::new());
        // An RNR NAK likewise.
        let r = trace(&[10, 11], &[(1150, 11, AckKind::RnrNak { timer: 1 })]);
        assert_eq!(check(&r).len(), 1);
    }

    #[test]
    fn a_rewind_with_no_cause_fails() {
        let t = trace(&[10, 11, 12, 11, 12], &[(1150, 10, AckKind::Ack)]);
        let v = check(&t);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("QP 3") && v[0].contains("no cause"), "{v:?}");
        // A NAK arriving after the rewind started does not justify it.
        let t = trace(&[10, 11, 12, 11, 12], &[(1320, 11, AckKind::SeqNak)]);
        assert!(check(&t).iter().any(|m| m.contains("no cause")));
    }

    #[test]
    fn a_rewind_to_the_wrong_psn_fails() {
        let t = trace(&[10, 11, 12, 13, 10, 11], &[(1250, 11, AckKind::SeqNak)]);
        let v = check(&t);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].contains("rewind to PSN 10") && v[0].contains("calls for PSN 11"),
            "{v:?}"
        );
    }

    #[test]
    fn a_resend_too_early_after_rnr_fails() {
        // Code 1: 10 us = 2500 cycles.
        let rnr = AckKind::RnrNak { timer: 1 };
        let early = trace(&[10, 11, 11], &[(1150, 11, rnr)]);
        let v = check(&early);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("before its RNR time"), "{v:?}");
        let mut ok = trace(&[10, 11, 11], &[(1150, 11, rnr)]);
        ok.sent[2].first = 1150 + 2500;
        assert_eq!(check(&ok), Vec::<String>::new());
        assert_eq!(rnr_cycles(0), 65536 * 2500);
        assert_eq!(rnr_cycles(31), 49152 * 2500);
    }

    #[test]
    fn a_timeout_rewind_before_the_period_fails() {
        // Timeout code 2: 4096 cycles. 10 and 11 unacknowledged from 1000.
        let mut t = trace(&[10, 11, 10], &[]);
        t.retry.timeout = 2;
        t.sent[2].first = 1000 + 4096 - TIMER_SLACK - 1;
        let v = check(&t);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("no cause"), "{v:?}");
        // At the period (within the slack) it passes.
        t.sent[2].first = 1000 + 4096 - TIMER_SLACK;
        assert_eq!(check(&t), Vec::<String>::new());
        // Progress restarts the timer: an ACK of 10 at 2000 moves una to
        // 11, so a rewind to 11 at 5000 is early, at 6200 on time.
        let mut t = trace(&[10, 11, 11], &[(2000, 10, AckKind::Ack)]);
        t.retry.timeout = 2;
        t.sent[2].first = 5000;
        assert_eq!(check(&t).len(), 1);
        t.sent[2].first = 6200;
        assert_eq!(check(&t), Vec::<String>::new());
        // The timer is off by default: never a cause.
        let t = trace(&[10, 11, 10], &[]);
        assert_eq!(check(&t).len(), 1);
    }

    #[test]
    fn a_pause_lets_the_timer_start_before_the_first_beat() {
        // 10 sent at 1000, acknowledged at 2000: the window is empty. 11
        // leaves at 7000 and is rewound to at 7100, 5,100 cycles after the
        // progress but 100 after its first beat: code 2's 4,096 cycles
        // have run only if 11 was committed, and its timer started, long
        // before it left, which a pause toward the NIC allows and nothing
        // else does.
        let mut t = trace(&[10, 11, 11], &[(2000, 10, AckKind::Ack)]);
        t.retry.timeout = 2;
        t.sent[1].first = 7000;
        t.sent[2].first = 7100;
        let v = check(&t);
        assert!(
            v.len() == 1 && v[0].contains("timer since cycle 7000"),
            "{v:?}"
        );
        // Paused 2500..=6999: the timer may have started at 2000.
        t.paused = vec![(2500, 6999)];
        assert_eq!(check(&t), Vec::<String>::new());
        // 5,100 cycles is past the period from the progress, but 4,000
        // would not be: the pause does not excuse an early rewind.
        t.sent[2].first = 2000 + 4096 - TIMER_SLACK - 1;
        t.sent[1].first = t.sent[2].first - 100;
        t.paused = vec![(2500, t.sent[1].first - 1)];
        assert_eq!(check(&t).len(), 1);
        // A pause over before the window emptied excuses nothing.
        t.sent[1].first = 7000;
        t.sent[2].first = 7100;
        t.paused = vec![(1200, 1900)];
        assert_eq!(check(&t).len(), 1);
    }

    #[test]
    fn a_nak_reached_by_a_replay_may_still_be_served_by_its_rewind() {
        // 10..=13 leave at 1000..1300; a sequence NAK of 10 at 1350 calls
        // for the replay from 10 at 1400. A NAK of 12 arrives at 1550,
        // while the replay runs; it reaches 12 at 1600 on its own, and the
        // NIC, which decided the second NAK's rewind meanwhile, resends
        // from 12 again after 13: a legal duplicate.
        let nak = |c, p| (c, p, AckKind::SeqNak);
        let acks = [nak(1350, 10), nak(1550, 12)];
        let t = trace(&[10, 11, 12, 13, 10, 11, 12, 13, 12], &acks);
        assert_eq!(check(&t), Vec::<String>::new());
        // To another PSN it is still a rewind with no cause.
        let t = trace(&[10, 11, 12, 13, 10, 11, 12, 13, 11], &acks);
        let v = check(&t);
        assert!(v.len() == 1 && v[0].contains("no cause"), "{v:?}");
        // And only within the reaction window after the PSN was reached.
        let mut psns = vec![10, 11, 12, 13];
        psns.extend(10..16 + REACTION_FRAMES as u32);
        psns.push(12);
        let t = trace(&psns, &acks);
        let v = check(&t);
        assert!(v.len() == 1 && v[0].contains("no cause"), "{v:?}");
    }

    #[test]
    fn an_expired_timeout_calls_for_the_rewind_within_the_window() {
        let mut t = trace(&[10, 11, 12, 13, 14], &[]);
        t.retry.timeout = 1; // 2048 cycles
        t.sent[2].first = 4000; // the timer expired at 3048
        t.sent[3].first = 4100;
        t.sent[4].first = 4200;
        let v = check_requester(&t, 2);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("timeout") && v[0].contains("PSN 14"), "{v:?}");
    }

    #[test]
    fn the_reaction_window_holds_r_old_frames_and_no_more() {
        // NAK of 11 at 1150: 12 and 13 (1200, 1300) are inside a window of
        // 2, 14 (1400) is beyond it.
        let inside = trace(&[10, 11, 12, 13, 11], &[(1150, 11, AckKind::SeqNak)]);
        assert_eq!(check_requester(&inside, 2), Vec::<String>::new());
        let beyond = trace(&[10, 11, 12, 13, 14, 11], &[(1150, 11, AckKind::SeqNak)]);
        let v = check_requester(&beyond, 2);
        assert!(
            v.iter()
                .any(|m| m.contains("PSN 14") && m.contains("reaction window 2")),
            "{v:?}"
        );
        // With a window of 3 it passes.
        assert_eq!(check_requester(&beyond, 3), Vec::<String>::new());
        // A NIC that does not retransmit yet may ignore the NAK.
        let mut off = trace(&[10, 11, 12, 13, 14], &[(1150, 11, AckKind::SeqNak)]);
        off.retry.rewinds = false;
        assert_eq!(check_requester(&off, 2), Vec::<String>::new());
        off.retry.rewinds = true;
        assert_eq!(check_requester(&off, 2).len(), 1);
        // Nor once retry exhaustion put the QP in ERROR.
        off.exhausted_at = Some(1160);
        assert_eq!(check(&off), Vec::<String>::new());
    }

    #[test]
    fn a_qp_in_error_stops_within_the_reaction_window() {
        // A remote-error NAK of 11 arrives at 1150: 12 and 13 were
        // committed before it (window 2); 14 is a new start in ERROR.
        let nak = [(1150, 11, AckKind::RemoteErr)];
        let mut inside = trace(&[10, 11, 12, 13], &nak);
        inside.error_at = Some(1150);
        assert_eq!(check_requester(&inside, 2), Vec::<String>::new());
        let mut beyond = trace(&[10, 11, 12, 13, 14, 15], &nak);
        beyond.error_at = Some(1150);
        let v = check_requester(&beyond, 2);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].contains("PSN 14") && v[0].contains("ERROR at cycle 1150"),
            "{v:?}"
        );
        // Retries run out on a sequence NAK: it obliges no rewind, and
        // the frames after it are judged by the same window.
        let mut seq = trace(&[10, 11, 12, 13], &[(1150, 11, AckKind::SeqNak)]);
        seq.error_at = Some(1150);
        assert_eq!(check_requester(&seq, 2), Vec::<String>::new());
        let v = check_requester(&seq, 1);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("PSN 13") && v[0].contains("ERROR"), "{v:?}");
        // Retries run out (timer): the same rule from exhausted_at.
        let mut timer = trace(&[10, 11, 12, 13, 14], &[]);
        timer.exhausted_at = Some(1150);
        assert_eq!(check_requester(&timer, 2).len(), 1);
        assert_eq!(check_requester(&timer, 3), Vec::<String>::new());
    }

    #[test]
    fn a_nak_before_the_responders_error_still_calls_for_its_rewind() {
        // 10..13 sent by 1310, NAK of 12 at 1350, the QP's responder puts
        // it in ERROR at 1900 (its timer then drains): the NAK came while
        // the QP could serve it, so a run without the resend fails.
        let nak = [(1350, 12, AckKind::SeqNak)];
        let mut t = trace(&[10, 11, 12, 13], &nak);
        t.resp_error_at = Some(1900);
        t.exhausted_at = Some(1900);
        assert_eq!(check_requester(&t, 2).len(), 1);
        let mut served = trace(&[10, 11, 12, 13, 12, 13], &nak);
        served.resp_error_at = Some(1900);
        assert_eq!(check_requester(&served, 2), Vec::<String>::new());
        // The NAK after the ERROR obliges nothing.
        t.resp_error_at = Some(1320);
        t.exhausted_at = Some(1320);
        assert_eq!(check_requester(&t, 2), Vec::<String>::new());
    }

    #[test]
    fn a_read_gap_justifies_a_re_request() {
        // READ of 4 responses at PSN 20; 20, 21 arrive, 22 is lost, 23
        // arrives: a new READ REQUEST from 22.
        let mut t = trace(&[20, 22], &[]);
        t.sent[0].span = 4;
        t.sent[0].read = true;
        t.sent[1].span = 2;
        t.sent[1].read = true;
        t.sent[1].first = 2000;
        t.read_resps = vec![
            ReadResp {
                cycle: 1500,
                psn: 20,
            },
            ReadResp {
                cycle: 1510,
                psn: 21,
            },
            ReadResp {
                cycle: 1530,
                psn: 23,
            },
        ];
        assert_eq!(check(&t), Vec::<String>::new());
        // Without the response ahead there is no gap.
        t.read_resps.pop();
        assert_eq!(check(&t).len(), 1);
    }

    #[test]
    fn a_timeout_on_a_read_asks_for_the_rest_only() {
        // Timeout code 1 (2048 cycles). READ of 4 responses at PSN 20 sent
        // at 1000; 20 and 21 arrive at 1500, 1510 (una 22), 22 and 23 are
        // lost. The timer runs from the last progress (1510, due at 3558):
        // the resend at 4000 is a READ REQUEST from 22.
        let mut t = trace(&[20, 22], &[]);
        t.retry.timeout = 1;
        t.sent[0].span = 4;
        t.sent[0].read = true;
        t.sent[1].span = 2;
        t.sent[1].read = true;
        t.sent[1].first = 4000;
        t.sent[1].last = 4010;
        t.read_resps = vec![
            ReadResp {
                cycle: 1500,
                psn: 20,
            },
            ReadResp {
                cycle: 1510,
                psn: 21,
            },
        ];
        assert_eq!(check(&t), Vec::<String>::new());
        // Asking for the whole READ again (from 20) has no cause: 20 and
        // 21 arrived, so it is neither the timeout's PSN nor a gap.
        t.sent[1].psn = 20;
        t.sent[1].span = 4;
        let v = check(&t);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("PSN 22"), "{v:?}");
    }

    #[test]
    fn a_second_sequence_nak_in_one_episode_fails() {
        // Request 11 lost: 12 arrives at 100, NAK of 11 at 120; 13 arrives
        // at 200, a second NAK of 11 at 220, or of 12 (as if 11 had been
        // executed) at 230.
        let r = RespQp {
            qp: 2,
            requests: vec![(50, 10), (100, 12), (200, 13)],
            seq_naks: vec![(120, 11), (220, 11)],
        };
        let v = check_responder(&r);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("QP 2") && v[0].contains("PSN 11"), "{v:?}");
        let r = RespQp {
            qp: 2,
            requests: vec![(50, 10), (100, 12), (200, 13)],
            seq_naks: vec![(120, 11), (230, 12)],
        };
        assert_eq!(check_responder(&r).len(), 1);
        // Reordered: 12 (100), then 11 (105), 13 (110); the NAK of 11
        // leaves at 120, after 11 arrived, and 13 calls for a NAK of 12.
        let r = RespQp {
            qp: 2,
            requests: vec![(50, 10), (100, 12), (105, 11), (110, 13)],
            seq_naks: vec![(120, 11), (140, 12)],
        };
        assert_eq!(check_responder(&r), Vec::<String>::new());
        // Once 11 arrived (the resend, at 300), a later episode may NAK again.
        let r = RespQp {
            qp: 2,
            requests: vec![(50, 10), (100, 12), (300, 11), (400, 14)],
            seq_naks: vec![(120, 11), (420, 13)],
        };
        assert_eq!(check_responder(&r), Vec::<String>::new());
    }
}
