//! What a vector's WQEs must produce, worked out here from the vector alone
//! (docs/protocol.md sections 1 and 6, docs/tx_datapath.md), independently of both DUTs:
//! each WQE's outcome, every packet each QP must send, in order, and every
//! completion. The environment compares the frames and CQEs the DUTs
//! produced against this.

use crate::vector::{Access, MrSpec, QpSpec, QpState, QpType, Vector, WqeOpcode, WqeSpec, MRS};

use crate::wire::cqe;

/// The payload read of `[addr, addr + len)` fails: one of its MRds touches a
/// fault range whose answer is an error (all but a stray completion, which
/// the engine drops and survives).
pub fn read_fails(v: &Vector, addr: u64, len: u32) -> bool {
    len > 0
        && v.root_complex.faults.iter().any(|f| {
            f.kind != crate::env::FaultKind::Stray
                && f.addr.0 < addr + len as u64
                && addr < f.addr.0 + f.len
        })
}

/// One packet a QP must send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpPacket {
    /// Index of the QP in the vector's `qps`.
    pub qp: u32,
    /// Index of the WQE in the vector's `wqes`.
    pub wqe: usize,
    pub opcode: u8,
    pub psn: u32,
    pub se: bool,
    pub ack_req: bool,
    /// (remote VA, rkey, DMA length).
    pub reth: Option<(u64, u32, u32)>,
    pub imm: Option<u32>,
    /// Host-memory (physical) address and length of the payload.
    pub pay_addr: u64,
    pub pay_len: u32,
}

/// One completion a CQ must receive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpCqe {
    pub cq: u32,
    pub qp: u32,
    pub wqe: usize,
    pub wr_id: u64,
    pub opcode: u8,
    pub status: u8,
    pub len: u32,
    pub imm: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Expected {
    /// Per QP index (0..QPS), the packets in order.
    pub packets: Vec<Vec<ExpPacket>>,
    /// In the order each QP produces them (per-QP order is fixed; the order
    /// between QPs sharing a CQ is not).
    pub cqes: Vec<ExpCqe>,
    /// Per QP index (0..QPS), the PSNs it sends over the whole run (a QP
    /// not in the vector: none from 0).
    pub psns: Vec<PsnRange>,
    /// Per QP index: from this packet on, the QP may stop sending anywhere
    /// (a remote-error NAK moved it to ERROR while they were going out:
    /// how many left first is timing the reference does not predict).
    pub optional_from: Vec<Option<usize>>,
    /// What the vector leaves to timing the reference cannot tell.
    pub problems: Vec<String>,
    /// QPs a remote-error NAK moved to ERROR (CTRL.STATE must read it).
    pub nak_errors: Vec<u32>,
    /// Per QP index: the NAK that moved it to ERROR (a remote error, or
    /// the one retries ran out on), as (PSN, syndrome, how many NAKs of
    /// that PSN and syndrome reached the QP before it): the go-back-N
    /// check finds its arrival on the wire and stops the QP there.
    pub error_nak: Vec<Option<(u32, u8, usize)>>,
}

/// The PSNs a QP sends: `count` of them from `first`, the PSN software
/// configured (modulo 2^24; dropped frames' PSNs and READ REQUESTs' whole
/// response spans included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PsnRange {
    pub first: u32,
    pub count: u32,
}

/// What an ACK or NAK does, by the requester's window rule of docs/rx_cc.md
/// (`ack_tracker`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckEffect {
    /// Acknowledges every PSN up to its own: `acked` becomes the offset
    /// after it.
    New(u32),
    Dup,
    Nak,
    /// Names a PSN never sent: changes nothing, counted apart.
    Invalid,
    /// A reserved syndrome.
    Nothing,
}

const PSN_MOD: u32 = 1 << 24;
/// In the RC completion queue: a READ whose data is in (ready whatever
/// the ACKs; a PSN never is this large).
const READ_DONE: u32 = u32::MAX - 1;

/// `to` is this many PSNs after `from`, modulo 2^24.
fn psn_dist(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from) % PSN_MOD
}

impl PsnRange {
    /// An ACK / NAK with `psn` and `syndrome` for this QP when the first
    /// `acked` of its PSNs are acknowledged, once every PSN it sends has
    /// been sent. The window of unacknowledged PSNs is then
    /// [first + acked, first + count): an ACK inside it acknowledges up to
    /// its PSN; one 1 .. 2^23 - 1 PSNs before the window is a duplicate;
    /// any other names a PSN never sent. A NAK names the PSN the responder
    /// expected, from the window's first to the one after its last.
    pub fn effect(&self, acked: u32, psn: u32, syndrome: u8) -> AckEffect {
        let una = (self.first + acked) % PSN_MOD;
        let at = psn_dist(self.first, psn);
        match syndrome >> 5 {
            0b000 if (acked..self.count).contains(&at) => AckEffect::New(at + 1),
            0b000 if (1..1 << 23).contains(&psn_dist(psn, una)) => AckEffect::Dup,
            0b000 => AckEffect::Invalid,
            0b011 | 0b001 if psn_dist(una, psn) <= self.count - acked => AckEffect::Nak,
            0b011 | 0b001 => AckEffect::Invalid,
            _ => AckEffect::Nothing,
        }
    }
}

impl Expected {
    /// The packets that must go out: a QP that may stop sending
    /// (`optional_from`) owes those before that point only.
    pub fn total_packets(&self) -> usize {
        self.packets
            .iter()
            .zip(&self.optional_from)
            .map(|(p, o)| o.map_or(p.len(), |k| k.min(p.len())))
            .sum()
    }
}

/// RC opcode base values (docs/protocol.md section 1); UC = RC | 0x20.
mod op {
    pub const SEND_FIRST: u8 = 0x00;
    pub const SEND_MIDDLE: u8 = 0x01;
    pub const SEND_LAST: u8 = 0x02;
    pub const SEND_LAST_IMM: u8 = 0x03;
    pub const SEND_ONLY: u8 = 0x04;
    pub const SEND_ONLY_IMM: u8 = 0x05;
    pub const WRITE_FIRST: u8 = 0x06;
    pub const WRITE_MIDDLE: u8 = 0x07;
    pub const WRITE_LAST: u8 = 0x08;
    pub const WRITE_LAST_IMM: u8 = 0x09;
    pub const WRITE_ONLY: u8 = 0x0A;
    pub const WRITE_ONLY_IMM: u8 = 0x0B;
    pub const READ_REQUEST: u8 = 0x0C;
}

/// Where WQE `w`'s payload starts in host memory: its local address
/// translated by the MR its lkey selects (entry lkey mod MRS), if that MR
/// grants the access (`mr_allows`).
pub fn payload_base(v: &Vector, q: &QpSpec, w: &WqeSpec) -> Option<u64> {
    let m = v
        .mrs
        .iter()
        .find(|m| m.index as u64 == w.lkey.0 % MRS as u64)?;
    mr_allows(m, q, w).then(|| m.pbase.0.wrapping_add(w.laddr.0 - m.va.0))
}

fn mr_allows(mr: &MrSpec, qp: &QpSpec, w: &WqeSpec) -> bool {
    let lkey = w.lkey.0;
    let end = w.laddr.0 as u128 + w.len as u128;
    mr.valid
        && mr.key.0 == lkey
        && mr.pd == qp.pd
        && w.laddr.0 >= mr.va.0
        && end <= mr.va.0 as u128 + mr.len.0 as u128
        && (w.opcode != WqeOpcode::Read || mr.access.contains(&Access::LocalWrite))
}

/// Queued completions of an RC QP at which it starts no new WQE:
/// ack_tracker's DEPTH - 2 (rnic_top's ACK_DEPTH = 8).
pub const ACK_STALL: usize = 6;

/// How many of QP `q`'s PSNs (from its first one) are acknowledged at the
/// end: by the peer's ACKs of `pkts` (with `peer.auto_ack`) and every ACK
/// of the vector's `rx` that reaches the QP, each judged by
/// [`PsnRange::effect`] on `range`. Exact when every ACK of the vector
/// that names a PSN the QP sends arrives after that PSN was sent (a peer
/// acknowledges what it received); then an ACK either names a PSN sent or
/// changes nothing whatever its arrival time, and the order of the ACKs
/// does not matter.
fn acked_count(
    v: &Vector,
    q: &QpSpec,
    pkts: &[ExpPacket],
    range: PsnRange,
    acks: &[(u32, u32, u8)],
) -> u32 {
    let mut acked = 0;
    let mut take = |psn: u32| {
        if let AckEffect::New(a) = range.effect(acked, psn, 0) {
            acked = acked.max(a);
        }
    };
    if v.peer.auto_ack {
        // The peer ACKs AckReq SEND/WRITE packets received in PSN order and
        // stops at the first gap (a dropped frame: nothing is retransmitted).
        let mut e = q.psn;
        for p in pkts {
            if p.psn != e {
                break;
            }
            let read = p.opcode == op::READ_REQUEST;
            let span = match p.reth {
                Some((_, _, len)) if read => len.div_ceil(q.mtu).max(1),
                _ => 1,
            };
            e = (e + span) & 0xFF_FFFF;
            if p.ack_req && !read {
                take(p.psn);
            }
        }
    }
    for &(dest, psn, syndrome) in acks {
        if dest == q.qp && syndrome >> 5 == 0 {
            take(psn);
        }
    }
    acked
}

/// Every frame of the vector's `rx` that reaches `ack_tracker` as an ACK
/// or NAK, judged by its bytes alone (`rx_reference::classify`: a hex frame
/// or a data frame with the ACKNOWLEDGE opcode counts like a symbolic ACK),
/// in the vector's order, as (DestQP, PSN, AETH syndrome).
pub fn rx_acks(v: &Vector) -> Vec<(u32, u32, u8)> {
    use super::rx_reference::{classify, live_qps, RxEvent};
    use crate::vector::rx;
    let live = live_qps(v);
    let mut out = Vec::new();
    for r in &v.rx {
        let Some((bytes, fcs)) = rx::build_frame(&r.frame, &v.qps, &v.cc)
            .ok()
            .and_then(|f| rx::apply_fault(f, r.fault).ok())
        else {
            continue;
        };
        if let RxEvent::Ack {
            qp, psn, syndrome, ..
        } = classify(&bytes, fcs, &live)
        {
            for _ in 0..r.count {
                out.push((qp, psn, syndrome));
            }
        }
    }
    out
}

/// Works out every packet and completion of `v` (an `rnic_top` vector),
/// the ACKs being those of its `rx` frames ([`rx_acks`]) and its peer.
pub fn expected(v: &Vector) -> Expected {
    expected_with(v, &rx_acks(v), &[])
}

/// [`expected`] with the ACKs and NAKs that reached the NIC given as
/// (DestQP, PSN, syndrome) in arrival order: in a pair, those the other
/// NIC's responder actually sent, decoded from the frames that arrived.
///
/// `rdones`: the READs whose last response arrived and was taken
/// ([`super::req_reads`]), as (QP, the READ's last PSN): each completes its
/// READ and acknowledges every PSN up to it, as an ACK would.
pub fn expected_with(v: &Vector, acks: &[(u32, u32, u8)], rdones: &[(u32, u32)]) -> Expected {
    expected_after(v, acks, rdones, &[])
}

/// [`expected_with`], and the local ACK timer ran out on the QPs of
/// `timer_exhausted`, (QP, the oldest unacknowledged PSN, status), as
/// [`super::timer_exhaust`] predicts from the wire: the WQE holding that
/// PSN completes with the status (12, or 5 for a QP its responder had
/// moved to ERROR) and the rest are flushed, as after a sequence NAK
/// beyond retry_cnt.
pub fn expected_after(
    v: &Vector,
    acks: &[(u32, u32, u8)],
    rdones: &[(u32, u32)],
    timer_exhausted: &[(u32, u32, u8)],
) -> Expected {
    // A READ done is an acknowledgement of its last PSN too.
    let mut all: Vec<(u32, u32, u8)> = acks.to_vec();
    all.extend(rdones.iter().map(|&(q, psn)| (q, psn, 0)));
    let acks = &all[..];
    let mut out = Expected {
        packets: vec![Vec::new(); crate::vector::QPS as usize],
        cqes: Vec::new(),
        psns: vec![PsnRange::default(); crate::vector::QPS as usize],
        optional_from: vec![None; crate::vector::QPS as usize],
        problems: Vec::new(),
        nak_errors: Vec::new(),
        error_nak: vec![None; crate::vector::QPS as usize],
    };
    for q in &v.qps {
        // INIT and RTR: the transmit path sees RESET; an SQ doorbell only
        // records its index (docs/responder.md), nothing is sent.
        if matches!(q.state, QpState::Init | QpState::Rtr) {
            continue;
        }
        let mut err = q.state == QpState::Error;
        let mut psn = q.psn;
        let mtu = q.mtu;
        let uc = q.kind == QpType::Uc;
        let pkts = &mut out.packets[q.qp as usize];
        // RC completions wait in order for their ACK: (CQE, the message's
        // last PSN for a success; None for an error or flush).
        let mut rc_queue: Vec<(ExpCqe, Option<u32>)> = Vec::new();
        // Per WQE that uses PSNs: (its index, the PSN after it).
        let mut psn_ends: Vec<(usize, u32)> = Vec::new();
        let mut complete = |c: ExpCqe, last: Option<u32>| {
            if uc {
                out.cqes.push(c);
            } else {
                rc_queue.push((c, last));
            }
        };
        for (k, w) in v.wqes.iter().enumerate().filter(|(_, w)| w.qp == q.qp) {
            let code = w.opcode.code();
            let has_imm = matches!(w.opcode, WqeOpcode::SendImm | WqeOpcode::WriteImm);
            // The CQE carries the WQE's immediate for the +Imm opcodes, error
            // and flush completions included (docs/tx_datapath.md, CQE).
            let imm = if has_imm { w.imm.0 as u32 } else { 0 };
            let cqe = |status: u8, len: u32| ExpCqe {
                cq: q.cq,
                qp: q.qp,
                wqe: k,
                wr_id: w.wr_id.0,
                opcode: w.opcode.cqe_opcode(),
                status,
                len,
                imm,
            };
            if err {
                complete(cqe(cqe::STATUS_WR_FLUSH_ERR, 0), None);
                continue;
            }
            if code > 4 || (uc && w.opcode == WqeOpcode::Read) {
                complete(cqe(cqe::STATUS_LOC_QP_OP_ERR, 0), None);
                err = true;
                continue;
            }
            let pay_base = match payload_base(v, q, w) {
                _ if w.len == 0 => 0,
                Some(b) => b,
                None => {
                    complete(cqe(cqe::STATUS_LOC_PROT_ERR, 0), None);
                    err = true;
                    continue;
                }
            };
            let ucb = if uc { 0x20 } else { 0 };
            let reth = Some((w.raddr.0, w.rkey.0 as u32, w.len));
            if w.opcode == WqeOpcode::Read {
                pkts.push(ExpPacket {
                    qp: q.qp,
                    wqe: k,
                    opcode: op::READ_REQUEST,
                    psn,
                    se: false,
                    ack_req: true,
                    reth,
                    imm: None,
                    // Where the responses go (rd_sink's record; 0 for
                    // length 0): no payload is read for the request.
                    pay_addr: pay_base,
                    pay_len: 0,
                });
                psn = (psn + w.len.div_ceil(mtu).max(1)) & 0xFF_FFFF;
                psn_ends.push((k, psn));
                // A READ completes when its last response's data is in
                // (rdones), never by an ACK; until then it holds the CQEs
                // behind it.
                if w.signaled {
                    let last = (psn + 0xFF_FFFF) & 0xFF_FFFF;
                    let done = rdones.contains(&(q.qp, last));
                    complete(
                        cqe(cqe::STATUS_SUCCESS, w.len),
                        Some(if done { READ_DONE } else { u32::MAX }),
                    );
                }
                continue;
            }
            let npkts = w.len.div_ceil(mtu).max(1);
            let is_send = matches!(w.opcode, WqeOpcode::Send | WqeOpcode::SendImm);
            let mut payload_failed = false;
            for p in 0..npkts {
                let (first, last) = (p == 0, p == npkts - 1);
                let base = match (is_send, first, last) {
                    (true, true, true) if has_imm => op::SEND_ONLY_IMM,
                    (true, true, true) => op::SEND_ONLY,
                    (true, true, false) => op::SEND_FIRST,
                    (true, false, false) => op::SEND_MIDDLE,
                    (true, false, true) if has_imm => op::SEND_LAST_IMM,
                    (true, false, true) => op::SEND_LAST,
                    (false, true, true) if has_imm => op::WRITE_ONLY_IMM,
                    (false, true, true) => op::WRITE_ONLY,
                    (false, true, false) => op::WRITE_FIRST,
                    (false, false, false) => op::WRITE_MIDDLE,
                    (false, false, true) if has_imm => op::WRITE_LAST_IMM,
                    (false, false, true) => op::WRITE_LAST,
                };
                let off = p * mtu;
                let se_op = is_send || w.opcode == WqeOpcode::WriteImm;
                let pay_addr = pay_base.wrapping_add(off as u64);
                let pay_len = (w.len - off).min(mtu);
                if read_fails(v, pay_addr, pay_len) {
                    // Its frame is dropped (the PSN stays used); a completion
                    // riding on it reports the failure.
                    payload_failed |= last;
                    psn = (psn + 1) & 0xFF_FFFF;
                    continue;
                }
                pkts.push(ExpPacket {
                    qp: q.qp,
                    wqe: k,
                    opcode: base | ucb,
                    psn,
                    se: last && se_op && w.solicited,
                    ack_req: last && !uc,
                    reth: if !is_send && first { reth } else { None },
                    imm: if last && has_imm {
                        Some(w.imm.0 as u32)
                    } else {
                        None
                    },
                    pay_addr,
                    pay_len,
                });
                psn = (psn + 1) & 0xFF_FFFF;
            }
            psn_ends.push((k, psn));
            if uc && w.signaled {
                complete(
                    if payload_failed {
                        cqe(cqe::STATUS_GENERAL_ERR, 0)
                    } else {
                        cqe(cqe::STATUS_SUCCESS, w.len)
                    },
                    None,
                );
            } else if w.signaled {
                // RC: success once acknowledged. A dropped last frame is
                // never acknowledged by a real peer (nothing is retransmitted yet).
                complete(
                    cqe(cqe::STATUS_SUCCESS, w.len),
                    Some((psn + 0xFF_FFFF) & 0xFF_FFFF),
                );
            }
        }
        if !uc {
            let end = psn_ends.last().map_or(q.psn, |x| x.1);
            let range = PsnRange {
                first: q.psn,
                count: psn_dist(q.psn, end),
            };
            let timer = timer_exhausted
                .iter()
                .find(|x| x.0 == q.qp)
                .map(|x| (x.1, x.2));
            let nak = remote_nak(q, range, acks);
            out.error_nak[q.qp as usize] = nak.map(|x| x.2);
            if let Some((p, status)) = nak.map(|x| (x.0, x.1)).or(timer) {
                let cqes =
                    remote_nak_outcome(q, &psn_ends, p, status, &rc_queue, &mut out.problems, v);
                out.psns[q.qp as usize] = range;
                let at = psn_dist(q.psn, p);
                // Optional after p; from p itself for a flush (status 5: the
                // QP in ERROR by its responder), which may name the first
                // PSN never sent.
                let from = at + (status != cqe::STATUS_WR_FLUSH_ERR) as u32;
                out.optional_from[q.qp as usize] = out.packets[q.qp as usize]
                    .iter()
                    .position(|x| psn_dist(q.psn, x.psn) >= from);
                out.cqes.extend(cqes);
                out.nak_errors.push(q.qp);
                continue;
            }
        }
        // ack_tracker holds an RC QP's completions in order; from the first
        // one that never becomes ready, none leaves. Once ACK_STALL of those
        // are queued the QP starts no new WQE (tx_engine's wqe_block), so
        // the WQEs after the one that queued the ACK_STALL-th are never
        // sent nor completed. What is sent decides which ACKs count, and
        // the ACKs what is sent: from everything, cut until nothing changes
        // (a cut only ever removes ACKs that counted, so it only grows).
        let qpi = q.qp as usize;
        let mut last_wqe = usize::MAX;
        let acked = loop {
            let end = psn_ends
                .iter()
                .rev()
                .find(|(k, _)| *k <= last_wqe)
                .map_or(q.psn, |x| x.1);
            let range = PsnRange {
                first: q.psn,
                count: psn_dist(q.psn, end),
            };
            out.psns[qpi] = range;
            let pkts: Vec<ExpPacket> = out.packets[qpi]
                .iter()
                .filter(|p| p.wqe <= last_wqe)
                .cloned()
                .collect();
            let acked = acked_count(v, q, &pkts, range, acks);
            let ready = |last: Option<u32>| match last {
                None | Some(READ_DONE) => true,
                Some(u32::MAX) => false,
                Some(l) => psn_dist(q.psn, l) < acked,
            };
            let cut = rc_queue
                .iter()
                .position(|(_, l)| !ready(*l))
                .and_then(|f| rc_queue.get(f + ACK_STALL - 1))
                .map_or(usize::MAX, |(c, _)| c.wqe);
            if cut == last_wqe {
                break acked;
            }
            last_wqe = cut;
        };
        out.packets[qpi].retain(|p| p.wqe <= last_wqe);
        rc_queue.retain(|(c, _)| c.wqe <= last_wqe);
        let ready = |last: Option<u32>| match last {
            None | Some(READ_DONE) => true,
            Some(u32::MAX) => false,
            Some(l) => psn_dist(q.psn, l) < acked,
        };
        for (c, last) in rc_queue {
            if !ready(last) {
                break;
            }
            out.cqes.push(c);
        }
    }
    out
}

/// The first remote-error NAK (AETH NAK codes 1..3: invalid request,
/// remote access, remote operational) that reaches QP `q` inside its
/// window (judged after the ACKs before it, by [`PsnRange::effect`]):
/// its PSN and the completion status it calls for (9, 10, 11).
///
/// Retries running out put the QP in the same error mode
/// (docs/retransmission.md): sequence-error NAKs (0x60) in the window
/// beyond `retry_cnt` with no ACK between them call for 12 at the last
/// one's PSN, RNR NAKs beyond `rnr_retry` (7: no limit) for 13. A NAK of
/// either kind acknowledges every PSN before its own. (Timeouts running
/// out are read from the requests on the wire, [`super::timer_exhaust`].)
/// Also the NAK itself, as `Expected::error_nak` names it.
#[allow(clippy::type_complexity)]
fn remote_nak(
    q: &QpSpec,
    range: PsnRange,
    acks: &[(u32, u32, u8)],
) -> Option<(u32, u8, (u32, u8, usize))> {
    let mut acked = 0;
    let (mut seq_left, mut rnr_left) = (q.retry_cnt, q.rnr_retry);
    let mine: Vec<(u32, u8)> = acks
        .iter()
        .filter(|a| a.0 == q.qp)
        .map(|a| (a.1, a.2))
        .collect();
    for (j, &(psn, syndrome)) in mine.iter().enumerate() {
        let nak = (
            psn,
            syndrome,
            mine[..j].iter().filter(|&&x| x == (psn, syndrome)).count(),
        );
        let found = |status: u8| Some((psn, status, nak));
        match range.effect(acked, psn, syndrome) {
            AckEffect::New(a) => {
                if a > acked {
                    (seq_left, rnr_left) = (q.retry_cnt, q.rnr_retry);
                }
                acked = acked.max(a);
            }
            AckEffect::Nak if syndrome == 0x60 => {
                if seq_left == 0 {
                    return found(cqe::STATUS_RETRY_EXC_ERR);
                }
                seq_left -= 1;
                acked = psn_dist(range.first, psn);
            }
            AckEffect::Nak if syndrome >> 5 == 0b001 => {
                if q.rnr_retry != 7 {
                    if rnr_left == 0 {
                        return found(cqe::STATUS_RNR_RETRY_EXC_ERR);
                    }
                    rnr_left -= 1;
                }
                acked = psn_dist(range.first, psn);
            }
            AckEffect::Nak if matches!(syndrome, 0x61..=0x63) => {
                let status = match syndrome & 0x1F {
                    1 => cqe::STATUS_REM_INV_REQ_ERR,
                    2 => cqe::STATUS_REM_ACCESS_ERR,
                    _ => cqe::STATUS_REM_OP_ERR,
                };
                return found(status);
            }
            _ => {}
        }
    }
    None
}

/// The completions of an RC QP that received a remote-error NAK for PSN
/// `p` (docs/rx_cc.md, `ack_tracker`): the NAK acknowledges every PSN
/// before `p`, so the signaled WQEs that end before it succeed; the first
/// signaled WQE not acknowledged completes with `status`, every later one
/// with 5 (flushed: by `ack_tracker` if it was sent, by `tx_engine` once
/// the QP is in ERROR if not), byte_len 0 for both. An unsignaled WQE
/// after the NAKed one completes (flushed) only if the ERROR reached
/// `tx_engine` before it was sent, and a WQE with a local error after it
/// completes with that error or flushed the same way: timing, so a
/// vector with either is a problem, never a guess.
fn remote_nak_outcome(
    q: &QpSpec,
    psn_ends: &[(usize, u32)],
    p: u32,
    status: u8,
    rc_queue: &[(ExpCqe, Option<u32>)],
    problems: &mut Vec<String>,
    v: &Vector,
) -> Vec<ExpCqe> {
    let at = psn_dist(q.psn, p);
    // The WQE whose PSNs hold p; the WQEs after it may go out or not.
    let named = psn_ends
        .iter()
        .find(|(_, end)| at < psn_dist(q.psn, *end))
        .map(|x| x.0);
    if let Some(k) = named {
        for (j, w) in v
            .wqes
            .iter()
            .enumerate()
            .filter(|(j, w)| w.qp == q.qp && *j > k)
        {
            if !w.signaled {
                problems.push(format!(
                    "QP {}: wqes[{j}] is unsignaled and follows wqes[{k}], which drew a \
                     remote-error NAK: whether it completes (flushed) depends on whether it \
                     was sent before the QP reached ERROR",
                    q.qp
                ));
            }
        }
        if rc_queue.iter().any(|(c, l)| c.wqe > k && l.is_none()) {
            problems.push(format!(
                "QP {}: a WQE after wqes[{k}] (remote-error NAK) fails locally: it \
                 completes with its error or flushed, depending on timing",
                q.qp
            ));
        }
    }
    let mut out = Vec::new();
    let mut next = status;
    for (c, last) in rc_queue {
        let mut c = c.clone();
        match last {
            Some(READ_DONE) => {}
            Some(l) if *l != u32::MAX && psn_dist(q.psn, *l) < at => {}
            None if named.is_none_or(|k| c.wqe <= k) => {}
            _ => {
                c.status = next;
                c.len = 0;
                next = cqe::STATUS_WR_FLUSH_ERR;
            }
        }
        out.push(c);
    }
    out
}
