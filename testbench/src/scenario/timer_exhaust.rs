//! Retry exhaustion by the local ACK timer (status 12, or 5 for a QP its
//! responder moved to ERROR), predicted from the wire: per RC QP, the
//! request packets the NIC sent and the
//! acknowledgements and READ responses that arrived at it
//! ([`QpTrace`]), and the QP's `timeout` and `retry_cnt`.
//!
//! The rule (docs/protocol.md section 8, docs/retx_ctl.md "Events"): a
//! QP whose timer is on and which still has requests unacknowledged
//! cannot stay silent for longer than one period; each expiry either
//! resends from the oldest unacknowledged PSN (a rewind, costing one
//! retry) or, with no retry left, ends the QP with status 12. So a run
//! whose quiet window (longer than one period, docs/pair.md) ended with
//! requests outstanding, nothing halting the QP, says the timer ran out,
//! and it must have run out after exactly `retry_cnt` rewinds since the
//! last progress (an ACK or a READ response taken moving the oldest
//! unacknowledged PSN forward; a NAK's own move is not progress; each
//! response rd_sink takes acknowledges its PSN, docs/rd_sink.md). Every
//! rewind costs one retry except the one that ends an RNR wait (RNR NAKs
//! count against `rnr_retry`, not here).
//!
//! The timer and the sequence NAKs spend the same retries: a sequence NAK
//! that arrives after `retry_cnt` rewinds since the last progress, some of
//! them the timer's, finds none left and ends the QP with 12 at its
//! arrival (`ExhaustKind::Nak`; the NAK-only count is `tx_reference`'s).
//!
//! A QP the NIC's own responder moved to ERROR (it sent a remote-error NAK
//! for it, `QpTrace::resp_error_at`) resends nothing, but its timer keeps
//! running: requests still unacknowledged when the quiet window ends ran
//! it out, and its oldest unacknowledged PSN's WQE and every one after are
//! flushed (status 5), whatever retries were left (docs/retransmission.md,
//! "A QP in ERROR").
//!
//! What this does not follow: causes that merge into one rewind on the
//! wire (a READ gap or a NAK while a rewind is pending, an RNR NAK that
//! drops a pending one: two retries or a retry and a free wait, one
//! rewind). A trace where the count does not come out is reported, never
//! guessed; the vectors keep such overlaps out of their exhausting QPs.

use super::gbn_check::{AckKind, QpTrace, ReadSink};
use crate::wire::cqe::{STATUS_RETRY_EXC_ERR, STATUS_WR_FLUSH_ERR};

const PSN_MOD: u32 = 1 << 24;

fn dist(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from) % PSN_MOD
}

fn add(psn: u32, n: u32) -> u32 {
    psn.wrapping_add(n) % PSN_MOD
}

/// A predicted timer exhaustion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerExhaustion {
    /// The oldest unacknowledged PSN: its WQE completes with 12.
    pub psn: u32,
    /// The cycle after the QP's last request beat (the NAK's arrival for
    /// `ExhaustKind::Nak`, the responder's remote-error NAK for a QP in
    /// ERROR by it): the exhaustion came later (from it on the go-back-N
    /// check expects no rewind).
    pub after: u64,
    /// The status of that WQE: 12 (retries exhausted), or 5 (flushed: the
    /// QP was in ERROR already, its responder's doing).
    pub status: u8,
    /// What ended the QP.
    pub kind: ExhaustKind,
}

/// What a [`TimerExhaustion`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExhaustKind {
    /// The timer ran out (`RETX_TIMEOUT` and `RETX_EXHAUST` count it).
    Timer,
    /// A sequence NAK found no retry left, some of them spent by the
    /// timer (`tx_reference` counts NAKs alone): exhaustion 12 at the
    /// NAK's arrival.
    Nak,
    /// A QP its responder moved to ERROR with nothing outstanding: `psn`
    /// is the next PSN to send, and the WQEs from it on were never sent
    /// and are flushed by tx_engine. No counter moves.
    Unsent,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// Request `k` of the trace, at its first beat.
    Send(usize),
    /// Acknowledgement `k`, at its last beat.
    Ack(usize),
    /// READ response `k`, at its last beat.
    Resp(usize),
}

/// The timer exhaustion `t` calls for, if any; Err names a trace whose
/// retries do not add up (module doc).
pub fn predict(t: &QpTrace) -> Result<Option<TimerExhaustion>, String> {
    let period = t.retry.period();
    if period.is_none() && t.resp_error_at.is_none() {
        return Ok(None);
    }
    // Arrivals before a send of the same cycle: the send cannot have seen
    // them, which only matters for a tie that moves nothing.
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
    evs.extend(
        t.read_resps
            .iter()
            .enumerate()
            .map(|(k, r)| (r.cycle, 0, Ev::Resp(k))),
    );
    evs.sort_by_key(|e| (e.0, e.1));
    let mut una: Option<u32> = None;
    let mut nxt = 0;
    let mut prev_end: Option<u32> = None;
    let mut rewinds = 0u32;
    let mut rnr_wait = false;
    let mut halted = false;
    // The READs sent and their responses, as rd_sink takes them.
    let mut rd = ReadSink::default();
    let holds =
        |una: Option<u32>, nxt: u32, p: u32| una.is_some_and(|u| dist(u, p) <= dist(u, nxt));
    // From the responder's ERROR on (`resp_error_at`) nothing obliges a
    // rewind and retx_ctl takes no NAK; ACKs and NAKs still move una.
    let cut = t.resp_error_at.unwrap_or(u64::MAX);
    for (cycle, _, e) in evs {
        let drained = cycle >= cut;
        match e {
            Ev::Send(k) => {
                let f = &t.sent[k];
                if let Some(pe) = prev_end {
                    if f.psn != pe && !t.skips.contains(&(pe, f.psn)) {
                        if rnr_wait {
                            rnr_wait = false;
                        } else {
                            rewinds += 1;
                        }
                    }
                }
                let end = add(f.psn, f.span);
                prev_end = Some(end);
                rd.sent(f);
                match una {
                    // PSNs skipped before the first packet (a payload read
                    // that failed) are unacknowledged too.
                    None => {
                        let start = t.skips.iter().find(|s| s.1 == f.psn).map_or(f.psn, |s| s.0);
                        (una, nxt) = (Some(start), end);
                    }
                    Some(u) => {
                        if dist(u, end) > dist(u, nxt) && dist(u, end) < 1 << 23 {
                            nxt = end;
                        }
                    }
                }
            }
            Ev::Ack(k) => {
                let a = &t.acks[k];
                match a.kind {
                    AckKind::Ack => {
                        let p = add(a.psn, 1);
                        if una != Some(p) && holds(una, nxt, p) {
                            una = Some(p);
                            rewinds = 0;
                        }
                    }
                    // A sequence NAK ends an RNR wait (retx_ctl.md,
                    // "Events"): its rewind costs a retry, and with none
                    // left it ends the QP (status 12) at once. With the
                    // timer off every retry is a NAK's: tx_reference's.
                    AckKind::SeqNak if holds(una, nxt, a.psn) => {
                        if period.is_some()
                            && !halted
                            && !drained
                            && rewinds == t.retry.retry_cnt as u32
                        {
                            return Ok(Some(TimerExhaustion {
                                psn: a.psn,
                                after: a.cycle,
                                status: STATUS_RETRY_EXC_ERR,
                                kind: ExhaustKind::Nak,
                            }));
                        }
                        una = Some(a.psn);
                        rnr_wait = false;
                    }
                    AckKind::RnrNak { .. } if holds(una, nxt, a.psn) => {
                        una = Some(a.psn);
                        rnr_wait = true;
                    }
                    AckKind::RemoteErr => halted = true,
                    _ => {}
                }
            }
            Ev::Resp(k) => {
                // Each response rd_sink takes acknowledges its PSN (READ
                // progress, and the READ done for the last).
                let r = &t.read_resps[k];
                if rd.take(r.psn) {
                    let p = add(r.psn, 1);
                    if una != Some(p) && holds(una, nxt, p) {
                        una = Some(p);
                        rewinds = 0;
                    }
                }
            }
        }
    }
    let after = t.sent.last().map_or(0, |f| f.last + 1);
    if let (Some(cut), false) = (t.resp_error_at, halted) {
        // In ERROR by its responder: what no ACK covered drains by the
        // timer; with nothing outstanding, the rest was never sent. The
        // go-back-N check holds the QP to its causes until then.
        let (u, nxt) = una.map_or((t.start, t.start), |u| (u, nxt));
        let kind = if u != nxt {
            ExhaustKind::Timer
        } else {
            ExhaustKind::Unsent
        };
        if kind == ExhaustKind::Timer && period.is_none() {
            return Ok(None); // the successes wait (retransmission.md)
        }
        return Ok(Some(TimerExhaustion {
            psn: u,
            after: cut,
            status: STATUS_WR_FLUSH_ERR,
            kind,
        }));
    }
    let (Some(u), Some(period)) = (una, period) else {
        return Ok(None);
    };
    if halted || u == nxt {
        return Ok(None);
    }
    if rnr_wait {
        // The quiet window outlasts the RNR time named: the wait must have
        // ended in a resend.
        return Err(format!(
            "QP {}: an RNR NAK of PSN {u} was never followed by a resend",
            t.qp
        ));
    }
    let want = t.retry.retry_cnt as u32;
    if rewinds != want {
        return Err(format!(
            "QP {}: PSNs {u}..{nxt} still unacknowledged at the end of the run with the local ACK \
             timer on (period {period} cycles) after {rewinds} rewinds since the last progress: \
             retry_cnt {want} calls for exhaustion (status 12) after exactly {want}",
            t.qp
        ));
    }
    Ok(Some(TimerExhaustion {
        psn: u,
        after,
        status: STATUS_RETRY_EXC_ERR,
        kind: ExhaustKind::Timer,
    }))
}

#[cfg(test)]
mod tests {
    use super::super::gbn_check::{AckIn, RetryCfg, SentPkt};
    use super::*;

    fn trace(psns: &[u32], acks: &[(u64, u32, AckKind)], retry_cnt: u8) -> QpTrace {
        QpTrace {
            qp: 3,
            sent: psns
                .iter()
                .enumerate()
                .map(|(k, &psn)| SentPkt {
                    psn,
                    first: 100 * k as u64,
                    last: 100 * k as u64 + 2,
                    span: 1,
                    read: false,
                })
                .collect(),
            acks: acks
                .iter()
                .map(|&(cycle, psn, kind)| AckIn { cycle, psn, kind })
                .collect(),
            retry: RetryCfg {
                timeout: 2,
                retry_cnt,
                rnr_retry: 7,
                rewinds: true,
            },
            ..QpTrace::default()
        }
    }

    #[test]
    fn a_psn_never_acknowledged_exhausts_after_retry_cnt_rewinds() {
        // 5 and 6 sent, 5 acknowledged, 6 resent twice: retry_cnt 2.
        let t = trace(&[5, 6, 6, 6], &[(50, 5, AckKind::Ack)], 2);
        assert_eq!(
            predict(&t),
            Ok(Some(TimerExhaustion {
                psn: 6,
                after: 303,
                status: 12,
                kind: ExhaustKind::Timer
            }))
        );
        // retry_cnt 3 wants one more resend: the run ended too early.
        assert!(predict(&trace(&[5, 6, 6, 6], &[(50, 5, AckKind::Ack)], 3)).is_err());
        // With no timer nothing is predicted.
        let mut off = t.clone();
        off.retry.timeout = 0;
        assert_eq!(predict(&off), Ok(None));
    }

    #[test]
    fn progress_reloads_the_retries_and_a_nak_move_is_none() {
        // 7 8 9, NAK 8 (una 8, not progress), rewind to 8 (1), ACK 8
        // (progress: reload), timer rewind to 9 (1): retry_cnt 1.
        let acks = [(150, 8, AckKind::SeqNak), (350, 8, AckKind::Ack)];
        let t = trace(&[7, 8, 9, 8, 9, 9], &acks, 1);
        assert_eq!(predict(&t).map(|x| x.map(|x| x.psn)), Ok(Some(9)));
        // Without the ACK, two rewinds since the last progress.
        let t = trace(&[7, 8, 9, 8, 9, 9], &acks[..1], 2);
        assert_eq!(predict(&t).map(|x| x.map(|x| x.psn)), Ok(Some(8)));
    }

    #[test]
    fn every_read_response_taken_acknowledges_its_psn() {
        use super::super::gbn_check::ReadResp;
        // A READ of two responses (PSNs 5, 6), then a WRITE (7) whose ACK
        // is lost: both responses taken make the READ done, una 7.
        let mut t = trace(&[5, 7], &[], 0);
        t.sent[0].span = 2;
        t.sent[0].read = true;
        t.read_resps = vec![
            ReadResp { cycle: 150, psn: 5 },
            ReadResp { cycle: 160, psn: 6 },
        ];
        assert_eq!(predict(&t).map(|x| x.map(|x| x.psn)), Ok(Some(7)));
        // Only the first taken: the READ is not done but una is 6 (READ
        // progress); a response ahead is dropped and moves nothing.
        t.read_resps.truncate(1);
        assert_eq!(predict(&t).map(|x| x.map(|x| x.psn)), Ok(Some(6)));
        t.read_resps = vec![ReadResp { cycle: 160, psn: 6 }];
        assert_eq!(predict(&t).map(|x| x.map(|x| x.psn)), Ok(Some(5)));
    }

    #[test]
    fn everything_acknowledged_or_halted_predicts_nothing() {
        let t = trace(&[1, 2], &[(500, 2, AckKind::Ack)], 0);
        assert_eq!(predict(&t), Ok(None));
        let t = trace(&[1, 2], &[(500, 1, AckKind::RemoteErr)], 0);
        assert_eq!(predict(&t), Ok(None));
        // An RNR wait's rewind costs no retry; a wait still running at the
        // end is no timer exhaustion.
        let rnr = AckKind::RnrNak { timer: 1 };
        let t = trace(&[1, 2, 2], &[(150, 2, rnr)], 0);
        assert_eq!(
            predict(&t),
            Ok(Some(TimerExhaustion {
                psn: 2,
                after: 203,
                status: 12,
                kind: ExhaustKind::Timer
            }))
        );
        let t = trace(&[1, 2], &[(150, 2, rnr)], 0);
        assert!(predict(&t).is_err());
        // A sequence NAK in the wait ends it: that rewind costs a retry.
        let t = trace(
            &[1, 2, 3, 2],
            &[(150, 2, rnr), (250, 2, AckKind::SeqNak)],
            1,
        );
        assert_eq!(predict(&t).map(|x| x.map(|x| x.psn)), Ok(Some(2)));
    }

    #[test]
    fn a_qp_its_responder_moved_to_error_is_flushed_at_its_oldest_unacked_psn() {
        // 4 5 6 sent, 4 acknowledged, no rewind, retries left: once its
        // responder NAKed a request with a remote error the timer flushes
        // from 5 (status 5) instead of resending.
        let mut t = trace(&[4, 5, 6], &[(50, 4, AckKind::Ack)], 3);
        assert!(predict(&t).is_err(), "retries left: a resend is due");
        t.resp_error_at = Some(120);
        assert_eq!(
            predict(&t),
            Ok(Some(TimerExhaustion {
                psn: 5,
                after: 120,
                status: 5,
                kind: ExhaustKind::Timer
            }))
        );
        // Everything acknowledged: no timer, the rest (from 6, never sent)
        // flushed.
        let mut t = trace(&[4, 5], &[(250, 5, AckKind::Ack)], 3);
        t.resp_error_at = Some(120);
        let x = predict(&t).unwrap().unwrap();
        assert_eq!((x.psn, x.status, x.kind), (6, 5, ExhaustKind::Unsent));
        // Nothing ever sent: from the QP's first PSN, with the timer off too.
        let mut t = trace(&[], &[], 3);
        (t.start, t.resp_error_at, t.retry.timeout) = (40, Some(120), 0);
        let x = predict(&t).unwrap().unwrap();
        assert_eq!((x.psn, x.kind), (40, ExhaustKind::Unsent));
        // The timer off with requests outstanding: they wait (a known limit).
        let mut t = trace(&[4, 5], &[], 3);
        t.resp_error_at = Some(120);
        t.retry.timeout = 0;
        assert_eq!(predict(&t), Ok(None));
        // A remote-error NAK came to the requester too: error mode
        // completes everything itself.
        let mut t = trace(&[4, 5], &[(150, 4, AckKind::RemoteErr)], 3);
        t.resp_error_at = Some(120);
        assert_eq!(predict(&t), Ok(None));
    }

    #[test]
    fn a_sequence_nak_with_no_retry_left_after_timer_rewinds_ends_the_qp() {
        // retry_cnt 1: 7 sent, the timer resends it (the retry), then 8;
        // the NAK of 7 finds no retry left: 12 at its arrival.
        let nak = (350, 7, AckKind::SeqNak);
        let t = trace(&[7, 7, 8], &[nak], 1);
        assert_eq!(
            predict(&t),
            Ok(Some(TimerExhaustion {
                psn: 7,
                after: 350,
                status: 12,
                kind: ExhaustKind::Nak
            }))
        );
        // retry_cnt 2 leaves one: the NAK's rewind is due instead (and the
        // run that ends without it does not add up).
        assert!(predict(&trace(&[7, 7, 8], &[nak], 2)).is_err());
        // An ACK of 7 first is progress: the retries reload.
        let t = trace(
            &[7, 7, 8, 9],
            &[(250, 7, AckKind::Ack), (350, 8, AckKind::SeqNak)],
            1,
        );
        assert_ne!(
            predict(&t).map(|x| x.map(|x| x.kind)),
            Ok(Some(ExhaustKind::Nak))
        );
    }
}
