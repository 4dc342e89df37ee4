//! The end-of-run checks of an `rnic_top` run against the independent
//! references: every frame against the expected one, every CQE and
//! interrupt, the CNPs the CE marks call for, the PFC pause windows, and the
//! receive counters read back.

use super::program::RX_COUNTERS;
use super::{is_cnp, RnicTopEnv, PFC_BITS_PER_CYCLE};
use crate::scenario::gbn_check::{
    self, AckIn, AckKind, QpTrace, ReadResp, RespQp, RetryCfg, SentPkt,
};
use crate::scenario::req_reads::READ_REQUEST;
use crate::scenario::rx_reference::{self, RxEvent};
use crate::scenario::tx_reference::ExpPacket;
use crate::wire::cqe;
use crate::wire::roce::RoceRepr;

/// One CQE write seen on `rq_*`.
#[derive(Debug, Clone)]
pub struct CqeWrite {
    pub cycle: u64,
    pub cq: u32,
    /// Producer index: the k-th CQE written to this CQ.
    pub index: u32,
    pub addr: u64,
    pub cqe: cqe::Repr,
    pub raw: Vec<u8>,
}

impl RnicTopEnv {
    /// Every MWr on `rq_*` into a CQ ring, decoded, in the order they left.
    /// Any other MWr is reported as a failure (the transmit path writes
    /// nothing but CQEs).
    pub fn cqe_writes(&mut self, cycle: u64) -> Vec<CqeWrite> {
        use crate::env::Direction;
        use crate::wire::tlp::{Tlp, TlpKind};
        let mut out = Vec::new();
        let mut count = vec![0u32; crate::vector::CQS as usize];
        let mut bad = Vec::new();
        for e in self.common.rc.log() {
            if e.dir != Direction::Rq {
                continue;
            }
            let Ok(t) = Tlp::new_checked(&e.bytes[..]) else {
                continue;
            };
            if !matches!(t.kind(), Ok(TlpKind::MemWrite)) {
                continue;
            }
            let addr = t.address();
            let ring = self.vector.cqs.iter().find(|c| {
                addr >= c.ring.base.0 && addr < c.ring.base.0 + (32u64 << c.ring.log_size)
            });
            let payload = t.payload();
            match ring {
                // Other writes are the responder's (resp_check).
                None => {}
                Some(c) if payload.len() == cqe::CQE_LEN => {
                    let k = &mut count[c.cq as usize];
                    out.push(CqeWrite {
                        cycle: e.cycle,
                        cq: c.cq,
                        index: *k,
                        addr,
                        cqe: cqe::Repr::parse(&cqe::Cqe::new_unchecked(payload)),
                        raw: payload.to_vec(),
                    });
                    *k += 1;
                }
                _ => bad.push(format!(
                    "MWr of {} bytes to {addr:#x} is not a CQE write",
                    payload.len()
                )),
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
        out
    }

    /// Completions: per CQ, the k-th CQE written goes to entry k mod 2^log
    /// with owner = NOT bit `log` of k and reserved bytes zero; per QP, the
    /// CQEs are the reference's completions in order; nothing else.
    fn check_cqes(&mut self, cycle: u64) {
        let writes = self.cqe_writes(cycle);
        let mut pos = vec![0usize; crate::vector::QPS as usize];
        for w in &writes {
            let c = self
                .vector
                .cqs
                .iter()
                .find(|c| c.cq == w.cq)
                .expect("found by address")
                .clone();
            let at = format!("CQE {} of CQ {} (cycle {})", w.index, w.cq, w.cycle);
            let want_addr = c.ring.base.0 + 32 * (w.index % (1 << c.ring.log_size)) as u64;
            let owner = ((!(w.index >> c.ring.log_size)) & 1) as u8;
            if w.addr != want_addr {
                self.common.fail(
                    cycle,
                    format!("{at}: written to {:#x}, expected {want_addr:#x}", w.addr),
                );
            }
            // A RECV CQE's byte 0x16 (immediate flag) and 0x18..0x1B (source
            // QP) are fields (docs/responder.md), reserved in the others.
            let mut masked = w.raw.clone();
            if w.cqe.opcode >= 128 {
                masked[0x16] &= !1;
                masked[0x18..0x1B].fill(0);
            }
            // A requester CQE keeps them zero (whatever the codec calls reserved).
            let requester_clean = w.cqe.opcode >= 128
                || (w.raw[0x16] == 0 && w.raw[0x18..0x1B].iter().all(|&b| b == 0));
            if w.cqe.owner as u8 != owner
                || !cqe::Cqe::new_unchecked(&masked).reserved_zero()
                || !requester_clean
            {
                self.common.fail(
                    cycle,
                    format!(
                        "{at}: owner {:#x} (expected {owner}) or reserved bytes set: {:02x?}",
                        w.raw[cqe::field::OWNER],
                        w.raw
                    ),
                );
            }
            let e = w.cqe;
            if e.opcode >= 128 {
                continue; // a RECV completion: check_responder
            }
            let Some(p) = pos.get_mut(e.qp as usize) else {
                self.common
                    .fail(cycle, format!("{at}: QP {} does not exist", e.qp));
                continue;
            };
            let mine: Vec<_> = self.expected.cqes.iter().filter(|x| x.qp == e.qp).collect();
            match mine.get(*p) {
                Some(x)
                    if x.cq == w.cq
                        && x.wr_id == e.wr_id
                        && x.status == e.status
                        && x.opcode == e.opcode
                        && x.len == e.len
                        && x.imm == e.imm => {}
                Some(x) => {
                    let msg = format!(
                        "{at}: got wr_id {:#x} status {} opcode {} len {} imm {:#x}; expected (wqes[{}]) \
                         CQ {} wr_id {:#x} status {} opcode {} len {} imm {:#x}",
                        e.wr_id, e.status, e.opcode, e.len, e.imm, x.wqe, x.cq, x.wr_id, x.status, x.opcode,
                        x.len, x.imm
                    );
                    self.common.fail(cycle, msg);
                }
                None => self
                    .common
                    .fail(cycle, format!("{at}: unexpected completion {e:?}")),
            }
            *p += 1;
        }
        let sends = writes.iter().filter(|w| w.cqe.opcode < 128).count();
        if sends != self.expected.cqes.len() {
            let msg = format!(
                "{} requester CQEs written, expected {}",
                sends,
                self.expected.cqes.len()
            );
            self.common.fail(cycle, msg);
        }
        if self.irqs.len() != writes.len() {
            let msg = format!(
                "{} CQ interrupts for {} CQEs",
                self.irqs.len(),
                writes.len()
            );
            self.common.fail(cycle, msg);
        }
        for (k, w) in writes.iter().enumerate() {
            if let Some(&(_, cq)) = self.irqs.get(k) {
                if cq as u32 != w.cq {
                    self.common.fail(
                        cycle,
                        format!("interrupt {k} names CQ {cq}, its CQE went to CQ {}", w.cq),
                    );
                }
            }
        }
        self.cqe_log = writes;
    }
}

/// Per QP, how often its request packets went out (filled by the
/// end-of-run frame check): `first` sends of an expected packet, and
/// `resent` frames of a PSN sent before or re-requesting the rest of a
/// READ (go-back-N, docs/retransmission.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QpSends {
    pub first: u32,
    pub resent: u32,
}

const PSN_MOD: u32 = 1 << 24;

impl RnicTopEnv {
    /// The packet a QP sends when it re-requests the rest of a READ from
    /// response k > 0 (docs/retransmission.md, tx_engine): a new READ
    /// REQUEST at PSN psn0 + k for VA + k x MTU, length - k x MTU. None
    /// when `psn` lies inside no READ of the QP.
    pub fn mid_read_packet(&self, qp: usize, psn: u32) -> Option<ExpPacket> {
        let mtu = self.vector.qps.iter().find(|q| q.qp as usize == qp)?.mtu as u64;
        self.expected.packets.get(qp)?.iter().find_map(|p| {
            let (va, rkey, len) = p.reth.filter(|_| p.opcode == READ_REQUEST)?;
            let n = (len as u64).div_ceil(mtu).max(1);
            let k = (psn.wrapping_sub(p.psn) % PSN_MOD) as u64;
            (1..n).contains(&k).then(|| ExpPacket {
                psn,
                reth: Some((va + k * mtu, rkey, (len as u64 - k * mtu) as u32)),
                ..p.clone()
            })
        })
    }

    /// Retry exhaustion (status 12 / 13) put QP `qp` in ERROR at cycle
    /// `at`: from expected packet `from_packet` on it may stop sending (as
    /// `optional_from` says for a remote-error NAK), and from `at` no NAK
    /// or timeout obliges a rewind (gbn_check). For a timer exhaustion
    /// (`timer_exhaust`, from the pair's end-of-run checks); call it
    /// before them.
    pub fn mark_exhausted(&mut self, qp: u32, from_packet: usize, at: u64) {
        let e = &mut self.exhausted_from[qp as usize];
        *e = Some(e.map_or(from_packet, |k| k.min(from_packet)));
        let c = &mut self.exhausted_at[qp as usize];
        *c = Some(c.map_or(at, |x| x.min(at)));
    }

    /// Every frame must be a well-formed RoCEv2 frame (ICRC, checksum,
    /// lengths) and, byte for byte, the packet the reference expects from
    /// the QP it is addressed to (by DestQP) at its BTH PSN, first send or
    /// resend alike (or a READ's re-request from a later response,
    /// [`Self::mid_read_packet`]); every expected packet goes out at least
    /// once. The order of the PSNs is the go-back-N check's
    /// ([`Self::gbn_violations`]).
    fn check_frames(&mut self, cycle: u64) {
        let nq = crate::vector::QPS as usize;
        let index: Vec<std::collections::HashMap<u32, usize>> = self
            .expected
            .packets
            .iter()
            .map(|ps| ps.iter().enumerate().map(|(i, p)| (p.psn, i)).collect())
            .collect();
        let mut count: Vec<Vec<u32>> = self
            .expected
            .packets
            .iter()
            .map(|ps| vec![0; ps.len()])
            .collect();
        let mut sends = vec![QpSends::default(); nq];
        let mut cnps = Vec::new();
        let frames = std::mem::take(&mut self.frames);
        for (k, (start, f)) in frames.iter().enumerate() {
            if super::pfc_check::is_pfc(f) {
                continue; // MAC control: check_pfc_frames
            }
            let at = format!("frame {k} (cycle {start}, {} bytes)", f.len());
            let repr = match RoceRepr::parse_bytes(f) {
                Ok(r) => r,
                Err(e) => {
                    self.common.fail(cycle, format!("{at}: {e}"));
                    continue;
                }
            };
            let Some(q) = self
                .vector
                .qps
                .iter()
                .find(|q| q.remote_qpn == repr.bth.dest_qp)
            else {
                self.common.fail(
                    cycle,
                    format!("{at}: DestQP {:#x} is no QP's remote QP", repr.bth.dest_qp),
                );
                continue;
            };
            let qp = q.qp as usize;
            if repr.bth.opcode == super::resp_check::OPCODE_ACK
                || super::resp_reads::is_read_response(repr.bth.opcode)
            {
                continue; // the responder's: check_responder
            }
            if repr.bth.opcode == crate::wire::roce::OPCODE_CNP {
                let want = self.expected_cnp(q.qp);
                if *f != want {
                    self.common.fail(
                        cycle,
                        format!("{at}: CNP of QP {qp} differs from the expected CNP {want:02x?}"),
                    );
                }
                cnps.push(q.qp);
                continue;
            }
            let psn = repr.bth.psn;
            let (p, what) = match index[qp].get(&psn) {
                Some(&i) => {
                    count[qp][i] += 1;
                    if count[qp][i] == 1 {
                        sends[qp].first += 1;
                    } else {
                        sends[qp].resent += 1;
                    }
                    let what = format!("packet {i}, send {}", count[qp][i]);
                    (self.expected.packets[qp][i].clone(), what)
                }
                None => match self.mid_read_packet(qp, psn) {
                    Some(p) => {
                        sends[qp].resent += 1;
                        (p, "the re-request of the rest of a READ".to_string())
                    }
                    None => {
                        let r = self.expected.psns.get(qp).copied().unwrap_or_default();
                        self.common.fail(
                            cycle,
                            format!(
                                "{at}: QP {qp} sent PSN {psn} (opcode {:#04x}), no packet the reference expects                                  ({} packets, PSNs {} + {})",
                                repr.bth.opcode,
                                self.expected.packets[qp].len(),
                                r.first,
                                r.count
                            ),
                        );
                        continue;
                    }
                },
            };
            let want = self.expected_frame(&p);
            if *f != want {
                let b = f
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(f.len().min(want.len()));
                self.common.fail(
                    cycle,
                    format!(
                        "{at}: QP {qp} {what} (wqes[{}] opcode {:#04x} PSN {}) differs from the expected \
                         frame ({} bytes) first at byte {b}: got {:02x?}, expected {:02x?}",
                        p.wqe,
                        p.opcode,
                        p.psn,
                        want.len(),
                        f.get(b..(b + 8).min(f.len())),
                        want.get(b..(b + 8).min(want.len())),
                    ),
                );
            }
        }
        for q in &self.vector.qps {
            let qp = q.qp as usize;
            let want = self.expected.packets[qp].len();
            // After a remote-error NAK, or retry exhaustion, the QP may
            // stop anywhere from there.
            let need = [self.expected.optional_from[qp], self.exhausted_from[qp]]
                .into_iter()
                .flatten()
                .fold(want, usize::min);
            let missing: Vec<usize> = (0..need).filter(|&i| count[qp][i] == 0).collect();
            if let Some(&i) = missing.first() {
                let p = &self.expected.packets[qp][i];
                self.common.fail(
                    cycle,
                    format!(
                        "QP {qp}: {} of the {need} packets it must send never went out; the first is packet \
                         {i} (wqes[{}] opcode {:#04x} PSN {})",
                        missing.len(),
                        p.wqe,
                        p.opcode,
                        p.psn
                    ),
                );
            }
        }
        self.sends = sends;
        self.frames = frames;
        self.check_cnps(cycle, &cnps);
    }

    /// This NIC as a requester, per QP of the vector, for the go-back-N
    /// check: its request frames in the order they left (ACKs, READ
    /// responses, CNPs and PFC frames are not requests), the ACKs / NAKs
    /// and READ responses that arrived good on `rx_*` (classified by
    /// their bytes), and the QP's retry attributes from `retry` (by QP
    /// index; missing: timer off).
    pub fn gbn_traces(&self, retry: &[RetryCfg]) -> Vec<QpTrace> {
        let pauses = self.pause_windows();
        let mut out: Vec<QpTrace> = self
            .vector
            .qps
            .iter()
            .map(|q| QpTrace {
                qp: q.qp,
                start: q.psn,
                retry: retry.get(q.qp as usize).copied().unwrap_or_default(),
                exhausted_at: self.exhausted_at[q.qp as usize],
                ends_in_error: self.expected.nak_errors.contains(&q.qp),
                settles: self.in_pair,
                paused: pauses[q.vlan.map_or(0, |v| v.pcp) as usize & 7].clone(),
                ..QpTrace::default()
            })
            .collect();
        // The jumps in each QP's expected PSNs.
        for t in &mut out {
            let q = self.vector.qps.iter().find(|q| q.qp == t.qp).expect("a QP");
            let span = |p: &ExpPacket| match p.reth {
                Some((_, _, len)) if p.opcode == READ_REQUEST => len.div_ceil(q.mtu.max(1)).max(1),
                _ => 1,
            };
            let ps = &self.expected.packets[q.qp as usize];
            // The QP's first PSNs may be skipped (a WQE whose payload read
            // failed): a jump from its start to the first packet.
            if let Some(p0) = ps.first() {
                if p0.psn != q.psn {
                    t.skips.push((q.psn, p0.psn));
                }
            }
            for w in ps.windows(2) {
                let end = (w[0].psn + span(&w[0])) % PSN_MOD;
                if w[1].psn != end {
                    t.skips.push((end, w[1].psn));
                }
            }
        }
        let slot = |qp: u32| self.vector.qps.iter().position(|q| q.qp == qp);
        for ((first, f), &last) in self.frames.iter().zip(&self.frame_ends) {
            if super::pfc_check::is_pfc(f) {
                continue;
            }
            let Ok(r) = RoceRepr::parse_bytes(f) else {
                continue; // check_frames fails it
            };
            let op = r.bth.opcode;
            // A remote-error NAK this NIC's responder sent: the QP went to
            // ERROR outside the requester's error mode (its timer drains).
            if let (true, Some(a)) = (op == super::resp_check::OPCODE_ACK, r.aeth) {
                let q = self
                    .vector
                    .qps
                    .iter()
                    .position(|q| q.remote_qpn == r.bth.dest_qp);
                if let (Some(AckKind::RemoteErr), Some(k)) = (AckKind::of_syndrome(a.syndrome), q) {
                    out[k].resp_error_at.get_or_insert(*first);
                }
            }
            if op == super::resp_check::OPCODE_ACK
                || op == crate::wire::roce::OPCODE_CNP
                || super::resp_reads::is_read_response(op)
            {
                continue;
            }
            let Some(k) = self
                .vector
                .qps
                .iter()
                .position(|q| q.remote_qpn == r.bth.dest_qp)
            else {
                continue;
            };
            let mtu = self.vector.qps[k].mtu.max(1);
            let (read, span) = match r.reth {
                Some(h) if op == READ_REQUEST => (true, h.dma_len.div_ceil(mtu).max(1)),
                _ => (false, 1),
            };
            out[k].sent.push(SentPkt {
                psn: r.bth.psn,
                first: *first,
                last,
                span,
                read,
            });
        }
        let live = rx_reference::live_qps(&self.vector);
        for s in &self.rx.sent {
            match rx_reference::classify(&s.bytes, s.fcs, &live) {
                RxEvent::Ack {
                    qp, psn, syndrome, ..
                } => {
                    let Some(kind) = AckKind::of_syndrome(syndrome) else {
                        continue;
                    };
                    if let Some(k) = slot(qp) {
                        out[k].acks.push(AckIn {
                            cycle: s.last,
                            psn,
                            kind,
                        });
                    }
                }
                RxEvent::Data { qp, .. } => {
                    let m = rx_reference::request_meta(&s.bytes);
                    if let (true, Some(k)) =
                        (super::resp_reads::is_read_response(m.opcode), slot(qp))
                    {
                        out[k].read_resps.push(ReadResp {
                            cycle: s.last,
                            psn: m.psn,
                        });
                    }
                }
                _ => {}
            }
        }
        // The NAK the reference says moved the QP to ERROR, found among
        // the same arrivals.
        for t in &mut out {
            if let Some((psn, syndrome, nth)) = self.expected.error_nak[t.qp as usize] {
                let kind = AckKind::of_syndrome(syndrome);
                t.error_at = t
                    .acks
                    .iter()
                    .filter(|a| a.psn == psn && Some(a.kind) == kind)
                    .nth(nth)
                    .map(|a| a.cycle);
            }
        }
        out
    }

    /// This NIC as a responder, per QP: the requests that arrived good on
    /// `rx_*` (cycle of their last beat, PSN) and the sequence-error NAKs
    /// it sent (cycle of their first beat, PSN).
    pub fn gbn_responder(&self) -> Vec<RespQp> {
        let mut out: Vec<RespQp> = self
            .vector
            .qps
            .iter()
            .map(|q| RespQp {
                qp: q.qp,
                ..RespQp::default()
            })
            .collect();
        let slot = |qp: u32| self.vector.qps.iter().position(|q| q.qp == qp);
        let live = rx_reference::live_qps(&self.vector);
        for s in &self.rx.sent {
            if let RxEvent::Data { qp, .. } = rx_reference::classify(&s.bytes, s.fcs, &live) {
                let m = rx_reference::request_meta(&s.bytes);
                if let (false, Some(k)) = (super::resp_reads::is_read_response(m.opcode), slot(qp))
                {
                    out[k].requests.push((s.last, m.psn));
                }
            }
        }
        for (first, f) in &self.frames {
            let Ok(r) = RoceRepr::parse_bytes(f) else {
                continue;
            };
            let seq_nak = r.bth.opcode == super::resp_check::OPCODE_ACK
                && r.aeth.is_some_and(|a| a.syndrome == 0b0110_0000);
            let k = self
                .vector
                .qps
                .iter()
                .position(|q| q.remote_qpn == r.bth.dest_qp);
            if let (true, Some(k)) = (seq_nak, k) {
                out[k].seq_naks.push((*first, r.bth.psn));
            }
        }
        out
    }

    /// The go-back-N checks of this NIC (`gbn_check`): as a requester,
    /// with the reaction window [`gbn_check::REACTION_FRAMES`] and the
    /// retry attributes `retry`, and as a responder.
    pub fn gbn_violations(&self, retry: &[RetryCfg]) -> Vec<String> {
        let mut out = Vec::new();
        for t in self.gbn_traces(retry) {
            out.extend(gbn_check::check_requester(&t, gbn_check::REACTION_FRAMES));
        }
        for r in self.gbn_responder() {
            out.extend(gbn_check::check_responder(&r));
        }
        out
    }

    /// The CNPs sent, per QP, are those the CE-marked packets must cause
    /// (rx_reference::cnps on the cycles they arrived).
    fn check_cnps(&mut self, cycle: u64, sent: &[u32]) {
        let v = &self.vector;
        let live = rx_reference::live_qps(v);
        let ce: Vec<(u32, u64)> = self
            .rx
            .sent
            .iter()
            .filter_map(|s| match rx_reference::classify(&s.bytes, s.fcs, &live) {
                RxEvent::Data { qp, ce: true } => Some((qp, s.last)),
                _ => None,
            })
            .collect();
        let want = rx_reference::cnps(&ce, v.cc.cnp_interval_cycles as u64);
        let per_qp = |l: &[u32]| {
            let mut m = std::collections::BTreeMap::new();
            for &q in l {
                *m.entry(q).or_insert(0u32) += 1;
            }
            m
        };
        if per_qp(sent) != per_qp(&want) {
            let msg = format!(
                "CNPs sent per QP {:?}, the CE packets call for {:?}",
                per_qp(sent),
                per_qp(&want)
            );
            self.common.fail(cycle, msg);
        }
    }

    /// No data frame of a paused priority starts: PFC frame with last beat
    /// at n and quanta Q for priority p pauses p's frame starts (first beats)
    /// from n + 4 to n + 3 + ceil(Q * 512 / 400) (docs/rx_cc.md, pfc; a later
    /// frame replaces the window from its own n + 4). A frame's priority is
    /// its VLAN PCP, 0 untagged.
    fn check_pause(&mut self, cycle: u64) {
        let windows = self.pause_windows();
        let mut bad = Vec::new();
        for (start, f) in &self.frames {
            // CNPs and PFC frames (MAC control) are never paused.
            if is_cnp(f) || super::pfc_check::is_pfc(f) {
                continue;
            }
            let pcp = if f.len() > 15 && f[12..14] == [0x81, 0x00] {
                f[14] >> 5
            } else {
                0
            };
            // Windows are disjoint and in time order: the one that may hold
            // `start` is the last one opened at or before it.
            let w = &windows[pcp as usize];
            let k = w.partition_point(|x| x.0 <= *start);
            if let Some(w) = k.checked_sub(1).map(|k| w[k]).filter(|w| *start <= w.1) {
                bad.push(format!(
                    "a frame of priority {pcp} started at cycle {start}, inside its PFC pause {}..={}",
                    w.0, w.1
                ));
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
    }

    /// Per priority, the cycles (first, last) its frame starts are paused
    /// by the PFC frames that arrived, disjoint and in time order
    /// ([`Self::check_pause`]'s rule).
    pub(crate) fn pause_windows(&self) -> Vec<Vec<(u64, u64)>> {
        let mut windows: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 8];
        let live = rx_reference::live_qps(&self.vector);
        for s in &self.rx.sent {
            let RxEvent::Pfc { enable, quanta } = rx_reference::classify(&s.bytes, s.fcs, &live)
            else {
                continue;
            };
            let from = s.last + 4;
            for p in (0..8).filter(|p| enable >> p & 1 == 1) {
                let w = &mut windows[p];
                // The new frame replaces the running pause: only the last
                // window can still be open (they are pushed in time order).
                if let Some(x) = w.last_mut() {
                    x.1 = x.1.min(from - 1);
                }
                let d = (quanta[p] as u64 * 512).div_ceil(PFC_BITS_PER_CYCLE);
                if d > 0 {
                    w.push((from, from + d - 1));
                }
            }
        }
        windows
    }

    /// Every RX counter read back is what the frames sent call for.
    fn check_rx_counters(&mut self, cycle: u64) {
        if !self.uses_rx() {
            return;
        }
        let sent: Vec<(&[u8], bool)> = self.rx.sent.iter().map(|s| (&s.bytes[..], s.fcs)).collect();
        let want = rx_reference::counters(&self.vector, &sent);
        let mut bad = Vec::new();
        for &(name, _) in RX_COUNTERS.iter().take(14) {
            let got = self
                .counters
                .iter()
                .find(|(n, _)| n == name)
                .map(|x| x.1 as u64);
            let exp = want.get(name).copied().unwrap_or(0);
            if got != Some(exp) {
                bad.push(format!("{name} = {got:?}, the frames sent call for {exp}"));
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
    }

    /// End-of-run checks against the reference, then the PCIe ones.
    pub fn finish_checks(&mut self, cycle: u64) {
        for p in self.expected.problems.clone() {
            self.common.fail(cycle, p);
        }
        self.check_frames(cycle);
        if !self.in_pair {
            // A pair runs it in its own finish_checks (scenario::pair),
            // with each QP's retry attributes.
            let retry = crate::scenario::pair::retry_config(&self.vector);
            for m in self.gbn_violations(&retry) {
                self.common.fail(cycle, m);
            }
        }
        self.check_cqes(cycle);
        self.check_responder(cycle);
        self.check_rx_counters(cycle);
        self.check_pause(cycle);
        self.check_pfc_frames(cycle);
        self.check_read_window(cycle);
        self.common.finish(cycle);
    }

    /// CQEs as the vector's expected results record them.
    pub fn cqe_results(&self) -> Vec<crate::vector::CqeResult> {
        self.cqe_log
            .iter()
            .map(|w| crate::vector::CqeResult {
                cq: w.cq,
                index: w.index,
                wr_id: crate::vector::Hex(w.cqe.wr_id),
                qp: w.cqe.qp,
                opcode: w.cqe.opcode,
                status: w.cqe.status,
                len: w.cqe.len,
                imm: crate::vector::Hex(w.cqe.imm as u64),
                owner: w.cqe.owner as u8,
                imm_flag: w.raw[0x16] & 1 == 1,
                src_qp: u32::from_le_bytes([w.raw[0x18], w.raw[0x19], w.raw[0x1A], 0]),
            })
            .collect()
    }

    /// Frames as the vector's expected results record them.
    pub fn frame_results(&self) -> Vec<crate::vector::FrameResult> {
        self.frames
            .iter()
            .map(|(_, f)| {
                let pfc = super::pfc_check::is_pfc(f)
                    .then(|| {
                        crate::wire::pfc::Header::new_checked(&f[..])
                            .and_then(|h| crate::wire::pfc::Repr::parse(&h))
                            .ok()
                    })
                    .flatten();
                let what = match RoceRepr::parse_bytes(f) {
                    _ if pfc.is_some() => {
                        let r = pfc.expect("checked");
                        format!("pfc enable {:#04x} times {:?}", r.enable, r.times)
                    }
                    Ok(r) => format!(
                        "dest_qp {:#x} psn {} {}",
                        r.bth.dest_qp,
                        r.bth.psn,
                        crate::wire::roce::opcode_info(r.bth.opcode).map_or("?", |i| i.name)
                    ),
                    Err(e) => format!("undecodable: {e}"),
                };
                crate::vector::FrameResult {
                    what,
                    len: f.len() as u32,
                    digest: crate::vector::Hex(crate::env::digest(f)),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vector::AnyVector;

    /// NIC A of the pair vector `name` (under vectors/pair/), before any run.
    fn nic_a(name: &str) -> RnicTopEnv {
        let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../vectors/pair")
            .join(name);
        let AnyVector::System(v) = AnyVector::load(&f).expect("loads") else {
            panic!("{name} is a system vector");
        };
        RnicTopEnv::new_in_pair(&v.a).expect("builds")
    }

    /// Every expected packet's frame, QP after QP, 100 cycles apart.
    fn all_frames(e: &RnicTopEnv) -> Vec<(u64, Vec<u8>)> {
        let ps: Vec<ExpPacket> = e.expected.packets.iter().flatten().cloned().collect();
        ps.iter()
            .enumerate()
            .map(|(k, p)| (100 * k as u64, e.expected_frame(p)))
            .collect()
    }

    fn failures_of(e: &mut RnicTopEnv, frames: Vec<(u64, Vec<u8>)>) -> Vec<String> {
        e.frame_ends = frames.iter().map(|f| f.0 + 10).collect();
        e.frames = frames;
        e.common.failures.clear();
        e.check_frames(0);
        e.common.failures.iter().map(|f| f.to_string()).collect()
    }

    #[test]
    fn a_resent_identical_frame_passes_a_changed_payload_byte_fails() {
        let mut e = nic_a("rc_four_qps_both_ways.json");
        let frames = all_frames(&e);
        assert_eq!(failures_of(&mut e, frames.clone()), Vec::<String>::new());
        assert_eq!(e.sends[0].resent, 0);
        // Go back to QP 0's packet 2 after packet 4: 2, 3, 4 again.
        let qp0 = e.expected.packets[0].len();
        assert!(qp0 > 5);
        let mut resent = frames[..5].to_vec();
        resent.extend(frames[2..].iter().cloned());
        assert_eq!(failures_of(&mut e, resent.clone()), Vec::<String>::new());
        assert_eq!(e.sends[0].first as usize, qp0);
        assert_eq!(e.sends[0].resent, 3);
        // The resend of packet 3 with its payload shifted by a byte (a
        // well-formed frame, ICRC and all): that frame fails, by QP and PSN.
        let mut bad = resent;
        let mut p = e.expected.packets[0][3].clone();
        p.pay_addr += 1;
        bad[6].1 = e.expected_frame(&p);
        assert_ne!(bad[6].1, frames[3].1);
        let psn = p.psn;
        let v = failures_of(&mut e, bad);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].contains(&format!("PSN {psn}")) && v[0].contains("send 2"),
            "{v:?}"
        );
        // A packet never sent fails; so does a PSN no packet has.
        let mut short = frames.clone();
        short.remove(1);
        let v = failures_of(&mut e, short.clone());
        assert!(v.iter().any(|m| m.contains("never went out")), "{v:?}");
        // Unless retry exhaustion stopped the QP before it.
        e.mark_exhausted(0, 1, 0);
        assert_eq!(failures_of(&mut e, short), Vec::<String>::new());
        e.exhausted_from[0] = None;
        let mut stray = frames;
        let last = e.expected.packets[0][qp0 - 1].clone();
        let mut p = last.clone();
        p.psn = (last.psn + 1000) % PSN_MOD;
        stray.push((1_000_000, e.expected_frame(&p)));
        let v = failures_of(&mut e, stray);
        assert!(
            v.iter()
                .any(|m| m.contains("no packet the reference expects")),
            "{v:?}"
        );
    }

    #[test]
    fn a_read_re_requested_from_a_later_response_is_a_new_read_request() {
        let mut e = nic_a("rc_read_64k_rtt500.json");
        let frames = all_frames(&e);
        let p0 = e.expected.packets[0][0].clone();
        let (va, rkey, len) = p0.reth.expect("a READ");
        // From response 5 (MTU 4096): VA + 5 x 4096, length - 5 x 4096.
        let again = e.mid_read_packet(0, p0.psn + 5).expect("inside the READ");
        assert_eq!(again.reth, Some((va + 5 * 4096, rkey, len - 5 * 4096)));
        assert_eq!(again.psn, p0.psn + 5);
        let mut fs = frames.clone();
        fs.push((1_000_000, e.expected_frame(&again)));
        assert_eq!(failures_of(&mut e, fs), Vec::<String>::new());
        assert_eq!(e.sends[0].resent, 1);
        // The same PSN asking for the whole READ again is wrong.
        let mut whole = p0.clone();
        whole.psn = p0.psn + 5;
        let mut fs = frames;
        fs.push((1_000_000, e.expected_frame(&whole)));
        let v = failures_of(&mut e, fs);
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("re-request"), "{v:?}");
    }
}
