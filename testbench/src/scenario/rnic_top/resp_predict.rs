//! What the responder must do with the request frames that arrived on
//! `rx_*`, worked out by [`resp_reference`] (docs/responder.md) from the
//! vector's QP and MR tables, the RECVs the host posted and the frames'
//! own bytes (decoded by the testbench's codec), never from the model.
//!
//! Timing enters in one place: whether a RECV is there when a SEND (or a
//! WRITE with immediate) needs one. `rq_fetch` prefetches at most
//! [`RQ_SLOTS`] RECVs per QP, so RECV k is surely there `margin` cycles
//! after both its doorbell and the consumption of RECV k - SLOTS, and
//! surely not before its doorbell. A frame that needs a RECV in between is
//! a vector whose outcome the testbench cannot tell: a failure that says
//! so, never a guess.

use super::rx_drops::{DropInfer, Fate};
use super::RnicTopEnv;
use crate::scenario::resp_cover;
use crate::scenario::resp_reference::{self as rr, Effect, Mr, QpCtx, Responder};
use crate::scenario::rx_reference::{classify, live_qps, RxEvent};
use crate::vector::{QpState, QpType, Vector};
use crate::wire::roce::RoceRepr;

/// RECV WQE slots per QP in `rq_fetch` (docs/responder.md, SLOTS = 2).
pub const RQ_SLOTS: usize = 2;

/// Cycles from an RQ doorbell (or the consumption that frees a slot) after
/// which the RECV is surely fetched: the host's read latency and a margin
/// for the request path, the beats and a low `rq_ready`.
pub fn recv_margin(v: &Vector) -> u64 {
    let rc = &v.root_complex;
    (rc.latency as u64 + 128) * 100 / rc.rq_ready_percent.max(1) as u64
}

/// Everything the responder must cause, per QP (index = QP).
#[derive(Debug, Default)]
pub struct RespPrediction {
    /// Host writes in the order they must happen per QP (all QPs in the
    /// order the frames arrived).
    pub writes: Vec<(u64, Vec<u8>)>,
    /// Required ACK/NAKs per QP.
    pub responses: Vec<Vec<resp_cover::Response>>,
    /// RECV completions per QP (Effect::Cqe only), flushes included.
    pub cqes: Vec<Vec<Effect>>,
    /// Per QP: the responder moved it to ERROR.
    pub errors: Vec<bool>,
    /// Frames whose outcome the vector's timing leaves open.
    pub problems: Vec<String>,
    /// The responder's event counts (docs/responder.md, `ev_*`): exec,
    /// dup, seq_nak, rnr_nak, inv_nak, acc_nak, op_nak, recv (RECVs
    /// consumed or flushed), uc_drop, notready.
    pub counts: std::collections::BTreeMap<&'static str, u64>,
    /// Per QP: RECVs consumed or flushed.
    pub popped: Vec<usize>,
    /// Per QP: the READ responses owed, one job per READ executed (fresh
    /// or again), in arrival order.
    pub reads: Vec<Vec<ReadJob>>,
    /// The requester's READ responses (rd_sink's counters RDR_TAKEN,
    /// RDR_DONE, RDR_UNEXP, RDR_DUP, RDR_SEQ, RDR_BAD).
    pub rdr: [u64; 6],
    /// rx_drops ([`super::rx_drops`]): frames found lost, and frames whose
    /// fate changes nothing that shows.
    pub rx_lost: u64,
    pub rx_unknown: u64,
}

/// The READ RESPONSE packets one READ request calls for, and how many of
/// [`RespPrediction::writes`] arrived before it (its payload is host
/// memory with those writes applied).
#[derive(Debug, Clone)]
pub struct ReadJob {
    pub packets: Vec<ReadPacket>,
    pub writes_before: usize,
}

/// One READ RESPONSE packet: PSN, opcode (0x0D..=0x10), payload from host
/// physical `addr` (`len` bytes), the AETH's MSN where the opcode has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadPacket {
    pub psn: u32,
    pub opcode: u8,
    pub addr: u64,
    pub len: u32,
    pub msn: u32,
}

/// The event counts one packet's effects call for (the responder's
/// counter pulses: a packet neither silent, nor a duplicate, nor NAKed was
/// executed; the ahead packets after a NAK count nothing).
fn count(out: &mut RespPrediction, e: &[Effect]) {
    use crate::scenario::resp_reference::{Nak, Silent};
    let mut add = |k: &'static str| *out.counts.entry(k).or_insert(0) += 1;
    let silent = e.iter().any(|x| matches!(x, Effect::Silent(_)));
    let dup = e.iter().any(|x| matches!(x, Effect::Duplicate));
    let nak = e.iter().any(|x| matches!(x, Effect::Nak { .. }));
    if !silent && !dup && !nak {
        add("exec");
    }
    if dup {
        add("dup");
    }
    // A READ executed (fresh or again): its job token for rd_resp.
    if e.iter().any(|x| matches!(x, Effect::ReadResponse { .. })) {
        add("read");
    }
    for x in e {
        match x {
            Effect::Nak { nak, .. } => add(match nak {
                Nak::PsnSequence => "seq_nak",
                Nak::Rnr(_) => "rnr_nak",
                Nak::InvalidRequest => "inv_nak",
                Nak::RemoteAccess => "acc_nak",
                Nak::RemoteOperational => "op_nak",
            }),
            Effect::Silent(Silent::NotReady | Silent::QpError) => add("notready"),
            Effect::Silent(Silent::UcDropping | Silent::UcError) => add("uc_drop"),
            _ => {}
        }
    }
}

/// The MR table as the responder sees it.
pub fn mrs_of(v: &Vector) -> Vec<Mr> {
    v.mrs
        .iter()
        .map(|m| Mr {
            index: m.index,
            key: m.key.0 as u32,
            va: m.va.0,
            len: m.len.0,
            pbase: m.pbase.0,
            access: crate::vector::resp::access_bits(&m.access),
            pd: m.pd,
            valid: m.valid,
        })
        .collect()
}

/// A request opcode the responder takes (SEND, WRITE, READ REQUEST; RC or
/// UC), as opposed to READ responses and acknowledgements.
fn is_request(op: u8) -> bool {
    op >> 5 <= 1 && op & 0x1F <= 0x0C
}

/// Whether request `p` needs a RECV: SEND FIRST/ONLY, WRITE with
/// immediate LAST/ONLY.
fn needs_recv(op: u8) -> bool {
    matches!(op & 0x1F, 0x00 | 0x04 | 0x05 | 0x09 | 0x0B)
}

/// Per QP: the RECVs posted (vector index, doorbell cycle) and the cycles
/// the consumed ones were consumed.
struct RecvTimes {
    posted: Vec<(usize, u64)>,
    /// Next posted RECV not yet handed to the reference.
    next: usize,
    consumed: Vec<u64>,
}

impl RnicTopEnv {
    /// The responder's effects for the frames that arrived so far.
    pub fn predict_responder(&self) -> RespPrediction {
        let v = &self.vector;
        let n = crate::vector::QPS as usize;
        let margin = recv_margin(v);
        let mrs = mrs_of(v);
        let mut resp: Vec<Option<Responder>> = vec![None; n];
        for q in &v.qps {
            let ctx = QpCtx {
                qp: q.qp,
                remote_qpn: q.remote_qpn,
                uc: q.kind == QpType::Uc,
                ready: matches!(q.state, QpState::Rts | QpState::Rtr),
                pd: q.pd,
                mtu: q.mtu,
                epsn: q.epsn,
                access: crate::vector::resp::access_bits(&q.remote_access),
                min_rnr_timer: q.min_rnr_timer,
                mrs: crate::vector::MRS,
            };
            resp[q.qp as usize] = Some(Responder::new(ctx, mrs.clone()));
        }
        let mut times: Vec<RecvTimes> = (0..n)
            .map(|_| RecvTimes {
                posted: Vec::new(),
                next: 0,
                consumed: Vec::new(),
            })
            .collect();
        for p in &self.host.recv_posts {
            for &k in &p.recvs {
                times[p.qp as usize].posted.push((k, p.cycle));
            }
        }
        let mut out = RespPrediction {
            responses: vec![Vec::new(); n],
            cqes: vec![Vec::new(); n],
            errors: vec![false; n],
            popped: vec![0; n],
            reads: vec![Vec::new(); n],
            ..Default::default()
        };
        for k in [
            "exec", "dup", "seq_nak", "rnr_nak", "inv_nak", "acc_nak", "op_nak", "recv", "uc_drop",
            "notready", "read",
        ] {
            out.counts.insert(k, 0);
        }
        let live = live_qps(v);
        // rx_drops: which frames rx_buf lost is inferred (rx_drops.rs).
        let mut drops = v
            .config
            .rx_drops
            .then(|| DropInfer::new(self.data_writes(), self.seq_naks_sent()));
        for (f, s) in self.rx.sent.iter().enumerate() {
            let lines = (s.bytes.len() as u64).div_ceil(64);
            let sure = drops.as_ref().is_none_or(|d| d.room_sure(s.first, lines));
            let req = match classify(&s.bytes, s.fcs, &live) {
                RxEvent::Data { qp, .. } => parse_request(&s.bytes)
                    .filter(|p| is_request(p.bth.opcode))
                    .map(|p| (qp, p)),
                _ => None,
            };
            let Some((qp, p)) = req else {
                // Not a request: no effect either way, but for a READ
                // response (rd_sink's, whose reference takes every one
                // that arrived).
                if let Some(d) = drops.as_mut() {
                    let op = crate::vector::link_fault::bth_of(&s.bytes).map(|b| b.2);
                    if !sure && op.is_some_and(|o| (0x0D..=0x10).contains(&o)) {
                        out.problems.push(format!(
                            "rx_drops: rx frame {f} (cycle {}), a READ response, arrived while \
                             rx_buf may have been full: keep READ responses out of a full buffer",
                            s.first
                        ));
                    }
                    d.push(lines, if sure { Fate::Stored } else { Fate::Unknown });
                }
                continue;
            };
            let q = qp as usize;
            let Some(r) = resp[q].as_mut() else {
                if let Some(d) = drops.as_mut() {
                    d.push(lines, if sure { Fate::Stored } else { Fate::Unknown });
                }
                continue;
            };
            if let Some(d) = drops.as_mut() {
                let until = self.rx.sent[f + 1..]
                    .iter()
                    .find(|x| {
                        parse_request(&x.bytes).is_some_and(|y| {
                            y.bth.dest_qp == p.bth.dest_qp && y.bth.psn == p.bth.psn
                        })
                    })
                    .map_or(u64::MAX, |x| x.first);
                let next_of_qp = self.rx.sent[f + 1..]
                    .iter()
                    .find(|x| {
                        parse_request(&x.bytes).is_some_and(|y| y.bth.dest_qp == p.bth.dest_qp)
                    })
                    .map_or(u64::MAX, |x| x.first);
                let w = Window { until, next_of_qp };
                let fate = infer_fate(d, r, &p, s, sure, w, f, &mut out.problems);
                d.push(lines, fate);
                if fate == Fate::Lost {
                    continue;
                }
            }
            let t = s.first;
            // Hand over every RECV surely fetched by t; stop at one that
            // may or may not be.
            let tm = &mut times[q];
            let mut open = None;
            while let Some(&(k, at)) = tm.posted.get(tm.next) {
                let i = tm.next;
                let freed = if i >= RQ_SLOTS {
                    tm.consumed.get(i - RQ_SLOTS).copied()
                } else {
                    Some(0)
                };
                let ready_at = freed.map(|c| c.max(at) + margin);
                match ready_at {
                    Some(x) if x <= t => {
                        r.post_recv(v.recvs[k].repr());
                        tm.next += 1;
                    }
                    _ => {
                        if at <= t {
                            open = Some(k);
                        }
                        break;
                    }
                }
            }
            if needs_recv(p.bth.opcode) && r.rq.is_empty() && !r.in_error() {
                if let Some(k) = open {
                    out.problems.push(format!(
                        "rx frame {f} (cycle {t}, QP {qp}, PSN {}) needs a RECV and recvs[{k}] \
                         was posted or freed a slot less than {margin} cycles before: whether \
                         it was fetched in time is timing the testbench does not predict; \
                         post earlier or send later",
                        p.bth.psn
                    ));
                }
            }
            let before = r.rq.len();
            let effects = r.packet(&p);
            for _ in r.rq.len()..before {
                tm.consumed.push(t);
                out.popped[q] += 1;
                *out.counts.entry("recv").or_insert(0) += 1;
            }
            count(&mut out, &effects);
            let mut effects = effects;
            if r.in_error() {
                out.errors[q] = true;
            }
            absorb(&mut out, q, &mut effects);
        }
        if let Some(d) = &drops {
            (out.rx_lost, out.rx_unknown) = (d.lost, d.unknown);
        }
        // The requester's READ responses place their payloads too
        // (rd_sink, through the same rx_wr).
        let sent = self.rx.sent.iter().map(|s| (&s.bytes[..], s.fcs));
        let rr = crate::scenario::req_reads::predict(v, &self.expected, sent);
        out.writes.extend(rr.writes);
        out.rdr = [
            rr.taken,
            rr.dones.len() as u64,
            rr.unexp,
            rr.dup,
            rr.ahead,
            rr.bad,
        ];
        for q in &v.qps {
            let i = q.qp as usize;
            let Some(r) = resp[i].as_mut() else { continue };
            if q.state == QpState::Error || r.in_error() {
                // Every RECV posted is fetched in ERROR too, and flushed.
                let tm = &mut times[i];
                for &(k, _) in &tm.posted[tm.next..] {
                    r.post_recv(v.recvs[k].repr());
                }
                tm.next = tm.posted.len();
                let mut f = resp_cover::flush(r);
                *out.counts.entry("recv").or_insert(0) += f.len() as u64;
                out.popped[i] += f.len();
                absorb(&mut out, i, &mut f);
            }
        }
        out
    }
}

/// First beats after a frame: of the next copy of its PSN (`until`) and
/// of the next request of its QP (`next_of_qp`).
struct Window {
    until: u64,
    next_of_qp: u64,
}

/// The fate of request frame `f` (`s`, decoded `p`) for the QP's
/// responder `r` (rx_drops.rs): stored when it surely found room or what
/// it alone causes shows, lost when that is missing, unknown when it would
/// change nothing or its trace may be another frame's.
#[allow(clippy::too_many_arguments)]
fn infer_fate(
    d: &mut DropInfer,
    r: &Responder,
    p: &RoceRepr,
    s: &crate::scenario::rx_wire::RxSent,
    sure: bool,
    w: Window,
    f: usize,
    problems: &mut Vec<String>,
) -> Fate {
    let until = w.until;
    use crate::scenario::resp_reference::{Nak, Silent};
    let effects = r.clone().packet(p);
    let writes: Vec<(u64, &[u8])> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Write { addr, bytes } => Some((*addr, &bytes[..])),
            _ => None,
        })
        .collect();
    if !writes.is_empty() {
        let seen: Vec<Option<u64>> = writes
            .iter()
            .map(|(a, b)| d.claim_write(s.last, until, *a, b))
            .collect();
        if let Some(c) = seen.iter().flatten().min() {
            d.gone_by(f, *c);
        }
        return if sure || seen.iter().all(Option::is_some) {
            Fate::Stored
        } else if seen.iter().all(Option::is_none) {
            Fate::Lost
        } else {
            problems.push(format!(
                "rx_drops: rx frame {f} (cycle {}, PSN {}): only part of its payload reached \
                 the host",
                s.first, p.bth.psn
            ));
            Fate::Stored
        };
    }
    if sure {
        return Fate::Stored;
    }
    let quiet = effects
        .iter()
        .all(|e| matches!(e, Effect::Silent(Silent::AheadNakSent)));
    let seq_nak = effects.iter().find_map(|e| match e {
        Effect::Nak {
            psn,
            nak: Nak::PsnSequence,
            ..
        } => Some(*psn),
        _ => None,
    });
    let only_nak = effects.iter().all(|e| matches!(e, Effect::Nak { .. }));
    match seq_nak {
        Some(psn) if only_nak => match d.claim_nak(s.last, r.ctx.remote_qpn, psn) {
            Some(c) if c < w.next_of_qp => Fate::Stored,
            Some(_) => Fate::Unknown,
            None => Fate::Lost,
        },
        _ if quiet => Fate::Unknown,
        _ => {
            problems.push(format!(
                "rx_drops: rx frame {f} (cycle {}, QP {}, PSN {}, opcode {:#04x}) arrived while \
                 rx_buf may have been full, and what it causes ({effects:?}) leaves no trace \
                 that tells whether it was stored: keep such frames out of a full buffer",
                s.first, p.bth.dest_qp, p.bth.psn, p.bth.opcode
            ));
            Fate::Stored
        }
    }
}

impl RnicTopEnv {
    /// The sequence NAKs this NIC sent: (cycle of the first beat, DestQP,
    /// PSN).
    fn seq_naks_sent(&self) -> Vec<(u64, u32, u32)> {
        self.frames
            .iter()
            .filter_map(|(c, f)| {
                let r = RoceRepr::parse_bytes(f).ok()?;
                let a = r.aeth?;
                (r.bth.opcode == 0x11 && a.syndrome == 0x60).then_some((
                    *c,
                    r.bth.dest_qp,
                    r.bth.psn,
                ))
            })
            .collect()
    }
}

/// Decodes a frame as it arrived: a short frame carries the sending MAC's
/// padding after the IP packet (docs/rx_cc.md: ignored), which the codec
/// does not take, so the frame is cut to the IP length first.
pub fn parse_padded(f: &[u8]) -> Result<RoceRepr, String> {
    RoceRepr::parse_bytes(f).or_else(|e| {
        let ip = if f.get(12..14) == Some(&[0x81, 0x00]) {
            18
        } else {
            14
        };
        let et = f.get(ip - 2..ip).map(|b| u16::from_be_bytes([b[0], b[1]]));
        let end = match et {
            Some(0x0800) => f
                .get(ip + 2..ip + 4)
                .map(|b| ip + u16::from_be_bytes([b[0], b[1]]) as usize),
            Some(0x86DD) => f
                .get(ip + 4..ip + 6)
                .map(|b| ip + 40 + u16::from_be_bytes([b[0], b[1]]) as usize),
            _ => None,
        };
        match end {
            Some(n) if n < f.len() => RoceRepr::parse_bytes(&f[..n]).map_err(|e| e.to_string()),
            _ => Err(e.to_string()),
        }
    })
}

/// Whether a frame as delivered by the link decodes: a PFC frame (MAC
/// control, checked by `pfc_check`) or a RoCEv2 frame ([`parse_padded`]).
pub fn decodes_delivered(f: &[u8]) -> Result<(), String> {
    if super::pfc_check::is_pfc(f) {
        return Ok(());
    }
    parse_padded(f).map(|_| ())
}

/// A request frame as `rx_parser` hands it on ([`classify`] said Data):
/// the codec's decoding, or, for what the codec refuses but the parser
/// takes (a FIRST or MIDDLE packet with a PadCnt), the frame decoded with
/// PadCnt 0 (ICRC recomputed) and the payload cut by the request metadata
/// (`rx_reference::request_meta`: IP end - ICRC - PadCnt).
pub fn parse_request(f: &[u8]) -> Option<RoceRepr> {
    if let Ok(p) = parse_padded(f) {
        return Some(p);
    }
    let m = crate::scenario::rx_reference::request_meta(f);
    let e = if f.get(12..14) == Some(&[0x81, 0x00]) {
        18
    } else {
        14
    };
    let v6 = f.get(e - 2..e) == Some(&[0x86, 0xDD]);
    let ip_end = if v6 {
        e + 40 + u16::from_be_bytes([*f.get(e + 4)?, *f.get(e + 5)?]) as usize
    } else {
        e + u16::from_be_bytes([*f.get(e + 2)?, *f.get(e + 3)?]) as usize
    };
    let mut g = f.get(..ip_end)?.to_vec();
    let bth = e + if v6 { 40 } else { 20 } + 8;
    *g.get_mut(bth + 1)? &= !0x30;
    let crc = crate::wire::roce::icrc(&g[e..ip_end - 4], v6);
    g[ip_end - 4..].copy_from_slice(&crc.to_le_bytes());
    let mut p = RoceRepr::parse_bytes(&g).ok()?;
    p.payload = f.get(m.hdr_len..m.hdr_len + m.pay_len)?.to_vec();
    Some(p)
}

fn absorb(out: &mut RespPrediction, q: usize, effects: &mut Vec<Effect>) {
    out.responses[q].extend(resp_cover::required(effects));
    let mut job = ReadJob {
        packets: Vec::new(),
        writes_before: out.writes.len(),
    };
    for e in effects.drain(..) {
        match e {
            Effect::Write { addr, bytes } => out.writes.push((addr, bytes)),
            c @ Effect::Cqe { .. } => out.cqes[q].push(c),
            Effect::ReadResponse {
                psn,
                opcode,
                addr,
                len,
                msn,
            } => job.packets.push(ReadPacket {
                psn,
                opcode,
                addr,
                len,
                msn,
            }),
            _ => {}
        }
    }
    if !job.packets.is_empty() {
        out.reads[q].push(job);
    }
}

/// The effects' RECV completion fields, for messages.
pub fn cqe_fields(e: &Effect) -> Option<(u64, u8, u8, u32, Option<u32>, u32)> {
    match *e {
        Effect::Cqe {
            wr_id,
            status,
            opcode,
            byte_len,
            imm,
            src_qp,
        } => Some((wr_id, status, opcode, byte_len, imm, src_qp)),
        _ => None,
    }
}

pub use rr::{LOCAL_WRITE, REMOTE_WRITE};
