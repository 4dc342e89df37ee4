//! The retransmission counters (block RETX: TIMEOUT, REWIND, RNR_WAIT,
//! EXHAUST; docs/retx_ctl.md "Pending requests and the outputs") of one
//! NIC, derived from the wire and the requester's reference, never from
//! the model: per QP the request packets the NIC sent, the ACKs, NAKs and
//! READ responses that arrived at it ([`QpTrace`], as `gbn_check` reads
//! them), and the completions `tx_reference` predicts.
//!
//! - **EXHAUST**, exact: one per QP whose predicted completions hold a
//!   status 12 or 13 (the WQE that starts the flush; `retx_ctl` is quiet
//!   after an exhaustion until a restart, which no vector does mid-run),
//!   and one per QP whose timer `timer_exhaust` found run out while its
//!   responder held it in ERROR (status 5, a flush on the wire's terms).
//! - **RNR_WAIT**, exact: the RNR NAKs that arrived naming a PSN in the
//!   QP's window [una, nxt] while nothing halted it (what `ack_tracker`
//!   passes on), less one per QP that ended with status 13 (its last RNR
//!   NAK exhausted `rnr_retry` instead of starting a wait).
//! - **REWIND**, bounded: at least the rewinds visible on the wire (a
//!   request whose PSN does not continue the one before, skipped PSNs
//!   aside); at most one per cause that can ask for one: sequence NAKs
//!   taken, RNR waits, timeouts (the upper bound below) and READ responses
//!   that arrived (a gap needs one). Not exact: causes that come while a
//!   rewind is pending merge into it, and a rewind that finds nothing to
//!   resend (a timeout whose ACK was already on its way, so una = nxt when
//!   the rewind is loaded) leaves no trace on the wire.
//! - **TIMEOUT**, bounded: at least one per QP the local ACK timer
//!   exhausted (`timer_exhaust`), and every visible rewind of a QP that
//!   got no NAK and no READ response at all (nothing else can cause one);
//!   at most `end / P` per QP with its timer on (P = `T_UNIT << timeout`:
//!   after an expiry the timer stops and restarts no earlier, so two
//!   expiries are at least P apart, and the first is P after a start),
//!   none with it off. Not exact: the NIC's timer runs from a packet's
//!   commit, up to 17 frames before the wire shows it, and the scanner
//!   decides within QPS cycles, so which expiries a run had is not a
//!   function of the wire alone (docs/retransmission.md, Known limits).

use super::gbn_check::{AckKind, QpTrace};
use crate::wire::cqe::{STATUS_RETRY_EXC_ERR, STATUS_RNR_RETRY_EXC_ERR, STATUS_WR_FLUSH_ERR};

const PSN_MOD: u32 = 1 << 24;

fn dist(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from) % PSN_MOD
}

fn add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) % PSN_MOD
}

/// What the counters must read: exact values or inclusive bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetxWant {
    pub timeout: (u64, u64),
    pub rewind: (u64, u64),
    pub rnr_wait: u64,
    pub exhaust: u64,
}

/// What one QP's trace shows (module doc).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QpRetx {
    /// Requests whose PSN does not continue the one before.
    pub jumps: u64,
    /// Sequence NAKs and RNR NAKs taken (in the window, QP not halted).
    pub seq_naks: u64,
    pub rnr_naks: u64,
    /// READ responses that arrived.
    pub read_resps: u64,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Send(usize),
    Ack(usize),
}

/// One QP's trace replayed: the window as the arrivals and sends move it
/// (as `ack_tracker` keeps it: nxt from the requests sent, una from ACKs
/// and NAKs), the NAKs it takes and the rewinds the wire shows.
pub fn replay(t: &QpTrace) -> QpRetx {
    let mut out = QpRetx {
        read_resps: t.read_resps.len() as u64,
        ..QpRetx::default()
    };
    // Arrivals before a send of the same cycle (as timer_exhaust orders
    // them).
    let mut evs: Vec<(u64, u8, Ev)> = Vec::new();
    evs.extend(
        t.sent
            .iter()
            .enumerate()
            .map(|(k, f)| (f.first, 1, Ev::Send(k))),
    );
    evs.extend(
        t.acks
            .iter()
            .enumerate()
            .map(|(k, a)| (a.cycle, 0, Ev::Ack(k))),
    );
    evs.sort_by_key(|e| (e.0, e.1));
    let mut una: Option<u32> = None;
    let mut nxt = 0u32;
    let mut prev_end: Option<u32> = None;
    let mut halted = false;
    let holds =
        |una: Option<u32>, nxt: u32, p: u32| una.is_some_and(|u| dist(u, p) <= dist(u, nxt));
    for (cycle, _, e) in evs {
        // Retries run out, or the responder moved the QP to ERROR:
        // retx_ctl takes no NAK of it any more.
        if [t.exhausted_at, t.resp_error_at]
            .into_iter()
            .flatten()
            .any(|x| x <= cycle)
        {
            halted = true;
        }
        match e {
            Ev::Send(k) => {
                let f = &t.sent[k];
                if let Some(pe) = prev_end {
                    if f.psn != pe && !t.skips.contains(&(pe, f.psn)) {
                        out.jumps += 1;
                    }
                }
                let end = add(f.psn, f.span);
                prev_end = Some(end);
                match una {
                    None => {
                        let start = t.skips.iter().find(|s| s.1 == f.psn).map_or(f.psn, |s| s.0);
                        una = Some(start);
                        nxt = end;
                    }
                    Some(u) => {
                        if dist(u, end) > dist(u, nxt) && dist(u, end) < 1 << 23 {
                            nxt = end;
                        }
                    }
                }
            }
            Ev::Ack(k) => {
                let a = t.acks[k];
                match a.kind {
                    AckKind::Ack => {
                        let p = add(a.psn, 1);
                        if holds(una, nxt, p) {
                            una = Some(p);
                        }
                    }
                    AckKind::SeqNak | AckKind::RnrNak { .. }
                        if !halted && holds(una, nxt, a.psn) =>
                    {
                        una = Some(a.psn);
                        if matches!(a.kind, AckKind::SeqNak) {
                            out.seq_naks += 1;
                        } else {
                            out.rnr_naks += 1;
                        }
                    }
                    AckKind::SeqNak | AckKind::RnrNak { .. } => {}
                    AckKind::RemoteErr => halted = true,
                }
            }
        }
    }
    out
}

/// The counters one NIC must read (module doc). `traces`: its QPs as
/// `gbn_traces` gives them; `statuses`: the predicted completions'
/// (QP, status); `timer_exhausted`: the QPs `timer_exhaust` found run
/// out, with the status it predicted (12, or 5 for a QP in ERROR);
/// `end`: the last cycle of the run.
pub fn predict(
    traces: &[QpTrace],
    statuses: &[(u32, u8)],
    timer_exhausted: &[(u32, u8)],
    end: u64,
) -> RetxWant {
    let mut w = RetxWant::default();
    let (mut causes, mut t_hi) = (0u64, 0u64);
    for t in traces {
        let r = replay(t);
        let ended = |s: u8| statuses.iter().any(|&(q, st)| q == t.qp && st == s);
        let x12 = ended(STATUS_RETRY_EXC_ERR);
        let x13 = ended(STATUS_RNR_RETRY_EXC_ERR);
        let drained = timer_exhausted
            .iter()
            .any(|&(q, st)| q == t.qp && st == STATUS_WR_FLUSH_ERR);
        w.exhaust += (x12 || x13 || drained) as u64;
        w.rnr_wait += r.rnr_naks.saturating_sub(x13 as u64);
        let timer = timer_exhausted.iter().any(|x| x.0 == t.qp) as u64;
        let alone = r.seq_naks == 0 && r.rnr_naks == 0 && r.read_resps == 0;
        w.timeout.0 += timer + if alone { r.jumps } else { 0 };
        let hi = t.retry.period().map_or(0, |p| end / p);
        t_hi += hi;
        w.rewind.0 += r.jumps;
        causes += r.seq_naks + r.rnr_naks.saturating_sub(x13 as u64) + hi + r.read_resps;
    }
    w.timeout.1 = t_hi;
    w.rewind.1 = causes;
    w
}

/// The problems of counters `got` (name, value) against `want`; a
/// counter not read back is not checked.
pub fn check(want: &RetxWant, got: impl Fn(&str) -> Option<u64>) -> Vec<String> {
    let mut out = Vec::new();
    let ranges = [
        ("retx_timeout", want.timeout),
        ("retx_rewind", want.rewind),
        ("retx_rnr_wait", (want.rnr_wait, want.rnr_wait)),
        ("retx_exhaust", (want.exhaust, want.exhaust)),
    ];
    for (name, (lo, hi)) in ranges {
        let Some(v) = got(name) else { continue };
        if v < lo || v > hi {
            let what = if lo == hi {
                format!("{lo}")
            } else {
                format!("{lo} ..= {hi}")
            };
            out.push(format!(
                "{name} = {v}, the wire and the requester's reference call for {what}"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::gbn_check::{AckIn, RetryCfg, SentPkt};

    fn pkt(psn: u32, first: u64) -> SentPkt {
        SentPkt {
            psn,
            first,
            last: first + 2,
            span: 1,
            read: false,
        }
    }

    fn ack(cycle: u64, psn: u32, kind: AckKind) -> AckIn {
        AckIn { cycle, psn, kind }
    }

    /// PSNs 10, 11, 12 sent; a sequence NAK of 11, the resend from 11;
    /// an RNR NAK of 12, the resend of 12; a stale RNR NAK (before una)
    /// and one for a PSN never sent are not taken.
    #[test]
    fn naks_in_the_window_and_the_rewinds_the_wire_shows() {
        let t = QpTrace {
            qp: 3,
            sent: vec![
                pkt(10, 0),
                pkt(11, 10),
                pkt(12, 20),
                pkt(11, 200),
                pkt(12, 210),
                pkt(12, 9000),
            ],
            acks: vec![
                ack(100, 11, AckKind::SeqNak),
                ack(300, 12, AckKind::RnrNak { timer: 1 }),
                ack(301, 5, AckKind::RnrNak { timer: 1 }),
                ack(302, 40, AckKind::RnrNak { timer: 1 }),
                ack(9100, 12, AckKind::Ack),
            ],
            retry: RetryCfg {
                timeout: 0,
                retry_cnt: 7,
                rnr_retry: 7,
                rewinds: true,
            },
            ..QpTrace::default()
        };
        let r = replay(&t);
        assert_eq!(
            r,
            QpRetx {
                jumps: 2,
                seq_naks: 1,
                rnr_naks: 1,
                read_resps: 0
            }
        );
        let w = predict(&[t], &[], &[], 10_000);
        assert_eq!(w.rnr_wait, 1);
        assert_eq!(w.exhaust, 0);
        // Timer off: no timeout; rewinds between the two seen and the
        // two causes.
        assert_eq!(w.timeout, (0, 0));
        assert_eq!(w.rewind, (2, 2));
        let ok = |n: &str| {
            Some(match n {
                "retx_rewind" => 2,
                "retx_rnr_wait" => 1,
                _ => 0,
            })
        };
        assert!(check(&w, ok).is_empty());
        let bad = |n: &str| Some(if n == "retx_rewind" { 3 } else { 0 });
        let m = check(&w, bad);
        assert_eq!(m.len(), 2, "{m:?}"); // rewind 3 > 2, rnr_wait 0 != 1
    }

    /// A QP with its timer on that only ever gets silence: every rewind
    /// the wire shows is a timeout, plus the one that ran it out (status
    /// 12); at most one expiry per period of the run.
    #[test]
    fn timer_alone_bounds_the_timeouts() {
        let t = QpTrace {
            qp: 0,
            sent: vec![pkt(7, 0), pkt(7, 5000), pkt(7, 10_000)],
            retry: RetryCfg {
                timeout: 2, // 4,096 cycles
                retry_cnt: 2,
                rnr_retry: 7,
                rewinds: true,
            },
            ..QpTrace::default()
        };
        let w = predict(
            &[t],
            &[(0, STATUS_RETRY_EXC_ERR)],
            &[(0, STATUS_RETRY_EXC_ERR)],
            20_000,
        );
        assert_eq!(w.timeout, (3, 4));
        assert_eq!(w.rewind, (2, 4));
        assert_eq!(w.exhaust, 1);
        assert_eq!(w.rnr_wait, 0);
    }
}
