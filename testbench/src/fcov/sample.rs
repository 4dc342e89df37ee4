//! The samplers: each turns what an environment saw during a run into hits
//! of [`super::points`]. They read the wire (frames as they left `tx_*`
//! and as they entered `rx_*`), the CQEs found in host memory, the faults
//! the root complex applied, the stall flags the environments set, and the
//! counters read back over MMIO at the end of the run.

use std::collections::HashMap;

use super::points::{DCQCN, FAULT_KINDS, RQ_STATUSES, SQ_STATUSES};
use super::Coverage;
use crate::env::FaultKind;
use crate::scenario::common::Common;
use crate::scenario::rnic_top::{is_pfc, RnicTopEnv};
use crate::scenario::rx_reference::{classify, live_qps, RxEvent};
use crate::scenario::tx_reference;
use crate::scenario::{DmaRdEnv, DmaWrEnv};
use crate::vector::{QpSpec, Vector};
use crate::wire::roce::{IpRepr, RoceRepr};
use crate::wire::{pfc, rqe::RQE_LEN, wqe::WQE_LEN};

/// Length class of a message of `len` bytes on a path MTU of `mtu`
/// ([`super::points::LENS`]).
pub fn len_class(len: u64, mtu: u64) -> &'static str {
    match len {
        0 => "zero",
        1 => "one",
        l if l < mtu => "short",
        l if l == mtu => "mtu",
        l if l <= 2 * mtu => "two",
        _ => "multi",
    }
}

/// Where a request packet sits in its message, by the low five opcode
/// bits (RC and UC share them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    First,
    Middle,
    /// LAST or ONLY; `only`: the message has one packet; `imm`: with
    /// immediate.
    End {
        only: bool,
        imm: bool,
    },
    Read,
}

/// (operation kind, part) of a request opcode, or None for responses,
/// ACKs, CNPs and unknown opcodes.
fn part(opcode: u8) -> Option<(&'static str, Part)> {
    if opcode >> 5 > 1 {
        return None;
    }
    let end = |only, imm| Part::End { only, imm };
    Some(match opcode & 0x1F {
        0x00 => ("send", Part::First),
        0x01 => ("send", Part::Middle),
        0x02 => ("send", end(false, false)),
        0x03 => ("send", end(false, true)),
        0x04 => ("send", end(true, false)),
        0x05 => ("send", end(true, true)),
        0x06 => ("write", Part::First),
        0x07 => ("write", Part::Middle),
        0x08 => ("write", end(false, false)),
        0x09 => ("write", end(false, true)),
        0x0A => ("write", end(true, false)),
        0x0B => ("write", end(true, true)),
        0x0C if opcode >> 5 == 0 => ("read", Part::Read),
        _ => return None,
    })
}

/// One finished message: operation, length class, transport, IP version,
/// VLAN.
struct Msg {
    op: String,
    len: &'static str,
    tr: &'static str,
    ip: &'static str,
    vlan: &'static str,
}

/// Reassembles request messages from one direction's packets, in order,
/// per destination QP: FIRST starts one (a resent FIRST starts it again),
/// MIDDLE and LAST add to one started, LAST and ONLY end it; a MIDDLE or
/// LAST with nothing started (a resend from the middle) is not counted.
#[derive(Default)]
struct Assembler {
    open: HashMap<(u128, u32), (&'static str, u64, u32)>,
}

impl Assembler {
    /// `mtu`: the path MTU of the QP the packet belongs to.
    fn packet(&mut self, r: &RoceRepr, mtu: u64) -> Option<Msg> {
        let (kind, p) = part(r.bth.opcode)?;
        let key = (ip_dst(&r.ip), r.bth.dest_qp);
        let bytes = r.payload.len() as u64;
        let (op, total, pkts) = match p {
            Part::Read => {
                let len = r.reth.map_or(0, |x| x.dma_len) as u64;
                return Some(self.msg(r, "read".into(), len_class(len, mtu)));
            }
            Part::First => {
                self.open.insert(key, (kind, bytes, 1));
                return None;
            }
            Part::Middle => {
                let o = self.open.get_mut(&key)?;
                o.1 += bytes;
                o.2 += 1;
                return None;
            }
            Part::End { only: true, imm } => (op_name(kind, imm), bytes, 1),
            Part::End { only: false, imm } => {
                let (k, t, n) = self.open.remove(&key)?;
                if k != kind {
                    return None;
                }
                (op_name(kind, imm), t + bytes, n + 1)
            }
        };
        let class = match pkts {
            // ONLY: at most one MTU.
            1 => len_class(total, mtu),
            2 => "two",
            _ => "multi",
        };
        Some(self.msg(r, op, class))
    }

    fn msg(&self, r: &RoceRepr, op: String, len: &'static str) -> Msg {
        Msg {
            op,
            len,
            tr: if r.bth.opcode >> 5 == 0 { "rc" } else { "uc" },
            ip: match r.ip {
                IpRepr::V4(_) => "v4",
                IpRepr::V6(_) => "v6",
            },
            vlan: if r.eth.vlan.is_some() {
                "tagged"
            } else {
                "untagged"
            },
        }
    }
}

fn op_name(kind: &str, imm: bool) -> String {
    if imm {
        format!("{kind}_imm")
    } else {
        kind.to_string()
    }
}

fn ip_dst(ip: &IpRepr) -> u128 {
    match ip {
        IpRepr::V4(r) => u32::from(r.dst) as u128,
        IpRepr::V6(r) => u128::from(r.dst),
    }
}

/// The local QP that sends to (`dest_qp`, `dst`).
fn sender_qp(v: &Vector, dest_qp: u32, dst: u128) -> Option<&QpSpec> {
    v.qps
        .iter()
        .find(|q| q.remote_qpn == dest_qp && q.ip.to_u128().1 == dst)
}

/// Everything one NIC of `rnic_top` did: call after its end-of-run checks
/// (they fill the CQE log).
pub fn nic(e: &RnicTopEnv) -> Coverage {
    let mut c = Coverage::default();
    let v = &e.vector;
    // Requests sent.
    let mut tx = Assembler::default();
    for (_, f) in &e.frames {
        if is_pfc(f) {
            pfc_sent(&mut c, f);
            continue;
        }
        let Ok(r) = RoceRepr::parse_bytes(f) else {
            continue;
        };
        let Some(q) = sender_qp(v, r.bth.dest_qp, ip_dst(&r.ip)) else {
            continue;
        };
        if let Some(m) = tx.packet(&r, q.mtu as u64) {
            c.hit(format!(
                "tx.{}.{}.{}.{}.{}",
                m.op, m.len, m.tr, m.ip, m.vlan
            ));
        }
    }
    // Frames received: the classifier's verdict on each.
    let live = live_qps(v);
    let mut rx = Assembler::default();
    for s in &e.rx.sent {
        match classify(&s.bytes, s.fcs, &live) {
            RxEvent::Drop(d) => c.hit(format!("drop.{}", drop_name(d.counter()))),
            RxEvent::Data { qp, .. } => {
                let Ok(r) = RoceRepr::parse_bytes(&s.bytes) else {
                    continue;
                };
                let Some(q) = v.qps.iter().find(|q| q.qp == qp) else {
                    continue;
                };
                if let Some(m) = rx.packet(&r, q.mtu as u64) {
                    c.hit(format!("rx.{}.{}.{}", m.op, m.len, m.tr));
                    c.hit(format!("rx_frame.{}.{}.{}", m.tr, m.ip, m.vlan));
                }
            }
            RxEvent::Pfc { .. } | RxEvent::Cnp { .. } | RxEvent::Ack { .. } => {}
        }
    }
    pfc_received(&mut c, &e.pause_windows(), e.done_at);
    for w in &e.cqe_log {
        let (side, table): (&str, &[(u8, &str)]) = if w.cqe.opcode >= 128 {
            ("rq", &RQ_STATUSES)
        } else {
            ("sq", &SQ_STATUSES)
        };
        c.hit(format!("cqe.{side}.{}", named(table, w.cqe.status)));
        c.hit(format!(
            "cqe.op.{}",
            named(&super::points::CQE_OPCODES, w.cqe.opcode)
        ));
    }
    counters(&mut c, &e.counters);
    for &(_, addr, kind) in e.common.rc.faults_met() {
        c.hit(format!("pcie.{}.{}", client_of(v, addr), outcome(kind)));
    }
    stalls(&mut c, "rnic_top", &e.common);
    if e.tx_stalled {
        c.hit("bp.rnic_top.tx_tready".into());
    }
    c
}

/// The name of a status or opcode, or its number (not a point: the check
/// reports it as unknown).
fn named(table: &[(u8, &'static str)], n: u8) -> String {
    table
        .iter()
        .find(|(k, _)| *k == n)
        .map_or_else(|| format!("unnamed_{n}"), |(_, s)| s.to_string())
}

/// `drop_fcs` -> `fcs`.
fn drop_name(counter: &str) -> &str {
    counter.strip_prefix("drop_").unwrap_or(counter)
}

/// Hits from the counters read back: protocol events, the responder's
/// and receive buffer's drops, DCQCN stages.
fn counters(c: &mut Coverage, read: &[(String, u32)]) {
    let get = |n: &str| {
        read.iter()
            .find(|(m, _)| m == n)
            .map_or(0, |(_, v)| *v as u64)
    };
    for ev in super::points::EVENTS {
        c.hit_n(format!("event.{ev}"), get(ev));
    }
    c.hit_n("drop.resp_uc".into(), get("resp_uc_drop"));
    c.hit_n("drop.resp_not_ready".into(), get("resp_not_ready"));
    c.hit_n("drop.rxbuf_full".into(), get("rxbuf_full"));
    for (stage, counter) in DCQCN {
        c.hit_n(format!("dcqcn.{stage}"), get(counter));
    }
}

/// A PFC frame the NIC sent: XOFF (time > 0) or XON per enabled priority.
fn pfc_sent(c: &mut Coverage, f: &[u8]) {
    let Ok(r) = pfc::Header::new_checked(f).and_then(|h| pfc::Repr::parse(&h)) else {
        return;
    };
    for p in 0..8 {
        if r.enable >> p & 1 == 1 {
            let k = if r.times[p] > 0 { "xoff" } else { "xon" };
            c.hit(format!("pfc.tx.{k}.p{p}"));
        }
    }
}

/// Received pauses, from the windows the PFC frames that arrived impose
/// (`RnicTopEnv::pause_windows`, the rule `check_pause` holds the NIC
/// to): each window is a pause in force; one that ends before the run
/// did, with no window of its priority right after it (a refresh), is a
/// resume, by XON or by running out.
fn pfc_received(c: &mut Coverage, windows: &[Vec<(u64, u64)>], done_at: Option<u64>) {
    for (p, w) in windows.iter().enumerate() {
        for (k, &(_, last)) in w.iter().enumerate() {
            c.hit(format!("pfc.rx.pause.p{p}"));
            let refreshed = w.get(k + 1).is_some_and(|n| n.0 == last + 1);
            if !refreshed && done_at.is_some_and(|d| last < d) {
                c.hit(format!("pfc.rx.resume.p{p}"));
            }
        }
    }
}

/// The DMA read client a read at `addr` came from ([`super::points::PCIE_CLIENTS`]).
fn client_of(v: &Vector, addr: u64) -> &'static str {
    let within = |base: u64, len: u64| base <= addr && addr < base + len;
    if v.qps
        .iter()
        .any(|q| within(q.sq.base.0, (WQE_LEN as u64) << q.sq.log_size))
    {
        "wqe"
    } else if v.qps.iter().any(|q| {
        q.rq.is_some_and(|r| within(r.base.0, (RQE_LEN as u64) << r.log_size))
    }) {
        "rqe"
    } else if v.wqes.iter().any(|w| {
        v.qps.iter().find(|q| q.qp == w.qp).is_some_and(|q| {
            tx_reference::payload_base(v, q, w).is_some_and(|b| within(b, w.len as u64))
        })
    }) {
        "payload"
    } else {
        "resp_read"
    }
}

fn outcome(k: FaultKind) -> &'static str {
    match k {
        FaultKind::Ur | FaultKind::Ca | FaultKind::Poison => "error",
        FaultKind::Drop | FaultKind::BadByteCount | FaultKind::WrongRequester => "timeout",
        FaultKind::Stray => "stray",
    }
}

fn kind_name(k: FaultKind) -> &'static str {
    let i = match k {
        FaultKind::Ur => 0,
        FaultKind::Ca => 1,
        FaultKind::Poison => 2,
        FaultKind::Drop => 3,
        FaultKind::BadByteCount => 4,
        FaultKind::WrongRequester => 5,
        FaultKind::Stray => 6,
    };
    FAULT_KINDS[i]
}

fn stalls(c: &mut Coverage, top: &str, common: &Common) {
    if common.rq_stalled {
        c.hit(format!("bp.{top}.rq_ready"));
    }
    if common.rc_stalled {
        c.hit(format!("bp.{top}.rc_ready"));
    }
}

/// A `dma_rd` vector: the faults applied, by kind, and the stalls.
pub fn dma_rd(e: &DmaRdEnv) -> Coverage {
    let mut c = Coverage::default();
    for &(_, _, k) in e.common.rc.faults_met() {
        c.hit(format!("pcie.dma_rd.{}", kind_name(k)));
    }
    stalls(&mut c, "dma_rd", &e.common);
    if e.req_stalled {
        c.hit("bp.dma_rd.rd_req_ready".into());
    }
    if e.data_stalled {
        c.hit("bp.dma_rd.rd_data_ready".into());
    }
    c
}

/// A `dma_wr` vector: the stalls (`dma_wr` has no completions to stall).
pub fn dma_wr(e: &DmaWrEnv) -> Coverage {
    let mut c = Coverage::default();
    if e.common.rq_stalled {
        c.hit("bp.dma_wr.rq_ready".into());
    }
    if e.req_stalled {
        c.hit("bp.dma_wr.wr_req_ready".into());
    }
    if e.data_stalled {
        c.hit("bp.dma_wr.wr_data_ready".into());
    }
    c
}

/// A fabric's switches, from their counters.
pub fn switch(c: &mut Coverage, s: &rnic_switch::SwitchCounters) {
    let mut sum = [0u64; 6];
    for p in &s.ports {
        sum[3] += p.pause_frames_rx;
        for q in &p.queues {
            sum[0] += q.marked;
            sum[1] += q.xoff_sent;
            sum[2] += q.xon_sent;
            sum[4] += q.dropped;
            sum[5] += q.watchdog_drops;
        }
    }
    for (n, name) in sum.iter().zip(super::points::SWITCH) {
        c.hit_n(format!("switch.{name}"), *n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_classes() {
        let m = 1024;
        let got: Vec<_> = [0, 1, 2, 1023, 1024, 1025, 2048, 2049, 1 << 20]
            .iter()
            .map(|&l| len_class(l, m))
            .collect();
        assert_eq!(
            got,
            ["zero", "one", "short", "short", "mtu", "two", "two", "multi", "multi"]
        );
    }

    #[test]
    fn opcode_parts() {
        assert_eq!(part(0x00), Some(("send", Part::First)));
        assert_eq!(
            part(0x2B),
            Some((
                "write",
                Part::End {
                    only: true,
                    imm: true
                }
            ))
        );
        // UC has no READ; responses, ACK and CNP are not requests.
        assert_eq!(part(0x2C), None);
        assert_eq!(part(0x0C), Some(("read", Part::Read)));
        assert_eq!(part(0x10), None);
        assert_eq!(part(0x11), None);
        assert_eq!(part(0x81), None);
    }

    /// Messages from literal packets: a WRITE with immediate over IPv6 and
    /// VLAN in one packet, a SEND in FIRST/MIDDLE/LAST, a LAST with nothing
    /// started (a resend from the middle) not counted, a READ by its DMA
    /// length.
    #[test]
    fn messages_are_reassembled_from_packets() {
        use crate::wire::roce::testdata::{read_req_v4_repr, write_imm_v6_repr};
        let mut a = Assembler::default();
        let m = a.packet(&write_imm_v6_repr(), 256).unwrap();
        assert_eq!(
            (m.op.as_str(), m.len, m.tr, m.ip, m.vlan),
            ("write_imm", "short", "rc", "v6", "tagged")
        );
        let mut p = write_imm_v6_repr();
        p.reth = None;
        p.imm = None;
        p.payload = vec![0; 256];
        for op in [0x20, 0x21] {
            p.bth.opcode = op;
            assert!(a.packet(&p, 256).is_none());
        }
        p.bth.opcode = 0x22;
        p.payload = vec![0; 7];
        let m = a.packet(&p, 256).unwrap();
        assert_eq!((m.op.as_str(), m.len, m.tr), ("send", "multi", "uc"));
        assert!(
            a.packet(&p, 256).is_none(),
            "a LAST with no FIRST before it"
        );
        let r = read_req_v4_repr();
        let m = a.packet(&r, r.reth.unwrap().dma_len as u64).unwrap();
        assert_eq!(
            (m.op.as_str(), m.len, m.ip, m.vlan),
            ("read", "mtu", "v4", "untagged")
        );
    }

    #[test]
    fn pause_resumes_by_xon_by_running_out_not_by_a_refresh() {
        let mut c = Coverage::default();
        let mut w = vec![Vec::new(); 8];
        // Priority 2: refreshed while in force (the next window starts the
        // cycle after), then running out: two pauses, one resume.
        w[2] = vec![(100, 149), (150, 300)];
        // Priority 3: cut short by an XON; priority 5: 1 quantum, run out.
        w[3] = vec![(104, 108)];
        w[5] = vec![(104, 105)];
        // Priority 6: still in force when the run ends at 400.
        w[6] = vec![(104, 83_989)];
        pfc_received(&mut c, &w, Some(400));
        let hits: Vec<(&str, u64)> = c.hits.iter().map(|(k, n)| (k.as_str(), *n)).collect();
        assert_eq!(
            hits,
            [
                ("pfc.rx.pause.p2", 2),
                ("pfc.rx.pause.p3", 1),
                ("pfc.rx.pause.p5", 1),
                ("pfc.rx.pause.p6", 1),
                ("pfc.rx.resume.p2", 1),
                ("pfc.rx.resume.p3", 1),
                ("pfc.rx.resume.p5", 1)
            ]
        );
    }
}
