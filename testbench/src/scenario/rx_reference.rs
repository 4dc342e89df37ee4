//! What the receive path must do with the vector's RX frames, worked out
//! from the frames' specification alone (docs/rx_cc.md's classification
//! table, SPEC section 2): which counter each frame lands in, and which
//! CE-marked packets must each cause a CNP.

use std::collections::BTreeMap;

use crate::vector::{QpState, RxFault, RxFrame, Vector, QPS};
use crate::wire::roce::RoceRepr;

/// Where a frame ends up: the name of the counter it increments (besides
/// `rx_frames`), as `rnic_top`'s environment reads them back.
pub fn class(v: &Vector, frame: &RxFrame, fault: Option<RxFault>, bytes: &[u8]) -> &'static str {
    if fault == Some(RxFault::Fcs) {
        return "drop_fcs";
    }
    if bytes.len() < 60 {
        return "drop_runt";
    }
    match fault {
        // Bytes past the end read as zero (docs/rx_cc.md, rx_parser): a frame
        // cut before its UDP destination port fails the port check first.
        Some(RxFault::Truncate(n)) if (n as usize) < udp_dport_end(bytes) => {
            return "drop_not_roce"
        }
        Some(RxFault::Truncate(_)) => return "drop_trunc",
        Some(RxFault::IpChecksum) => return "drop_ip_csum",
        Some(RxFault::Icrc) | Some(RxFault::CoveredByte) => return "drop_icrc",
        Some(RxFault::UdpDport(p)) if p != 4791 => return "drop_not_roce",
        Some(RxFault::Tver(t)) if t & 0xF != 0 => return "drop_opcode",
        _ => {}
    }
    let known_op = |op: u8| op <= 0x11 || (0x20..=0x2B).contains(&op) || op == 0x81;
    let qp_ok = |n: u32| {
        n < QPS
            && v.qps
                .iter()
                .find(|q| q.qp == n)
                .is_some_and(|q| q.state != QpState::Reset)
    };
    let dest = |n: u32| match fault {
        Some(RxFault::DestQp(d)) => d,
        _ => n,
    };
    match frame {
        RxFrame::Pfc { .. } => "rx_pfc",
        RxFrame::Cnp { qp } if qp_ok(dest(*qp)) => "rx_cnp",
        RxFrame::Ack { qp, .. } | RxFrame::Nak { qp, .. } if qp_ok(dest(*qp)) => "rx_ack",
        RxFrame::Data { opcode, .. } if !known_op(opcode.unwrap_or(4)) => "drop_opcode",
        RxFrame::Data { qp, .. } if qp_ok(dest(*qp)) => "rx_data",
        RxFrame::Hex(_) => match RoceRepr::parse_bytes(bytes) {
            Ok(r) if qp_ok(r.bth.dest_qp) => "rx_data",
            Ok(_) => "drop_qp",
            Err(_) => "drop_not_roce",
        },
        _ => "drop_qp",
    }
}

/// Offset just past the UDP destination port of a RoCE frame (Ethernet,
/// optional 802.1Q tag, IPv4 or IPv6), from its first bytes.
fn udp_dport_end(f: &[u8]) -> usize {
    let l2 = if f[12..14] == [0x81, 0x00] { 18 } else { 14 };
    let ip = if f[l2] >> 4 == 6 { 40 } else { 20 };
    l2 + ip + 4
}

/// The counters the vector's RX frames must leave, from [`class`]; CE
/// packets also count in `rx_ce`. `sent` are the frames as they went out
/// (vector index, bytes), peer ACKs included (index None, always `rx_ack`).
pub fn counters(v: &Vector, sent: &[(Option<usize>, &[u8])]) -> BTreeMap<&'static str, u64> {
    let mut c = BTreeMap::new();
    for &(spec, bytes) in sent {
        *c.entry("rx_frames").or_insert(0) += 1;
        let Some(k) = spec else {
            *c.entry("rx_ack").or_insert(0) += 1;
            continue;
        };
        let r = &v.rx[k];
        let cl = class(v, &r.frame, r.fault, bytes);
        *c.entry(cl).or_insert(0) += 1;
        if cl == "rx_data" && matches!(r.frame, RxFrame::Data { ce: true, .. }) {
            *c.entry("rx_ce").or_insert(0) += 1;
        }
    }
    c
}

/// The CNPs the notification point must send, per QP: CE-marked data
/// packets, in the order their last beats arrived, each one starting a CNP
/// unless the QP's previous CNP was started less than `interval` cycles
/// before (SPEC section 2). `ce` = (QP, cycle of the last beat).
pub fn cnps(ce: &[(u32, u64)], interval: u64) -> Vec<u32> {
    let mut last: BTreeMap<u32, u64> = BTreeMap::new();
    let mut out = Vec::new();
    for &(qp, t) in ce {
        if last.get(&qp).is_none_or(|&l| t - l >= interval) {
            last.insert(qp, t);
            out.push(qp);
        }
    }
    out
}

/// The counters of `ack_tracker` (`ack_new`, `ack_dup`, `nak`,
/// `ack_invalid`) the ACKs and NAKs sent must leave: every frame of `sent`
/// (the vector's and the peer's, in the order they went out) that reaches
/// `ack_tracker` ([`class`] `rx_ack`; a peer frame always does), judged in
/// that order against its QP's window by
/// [`PsnRange::effect`](super::tx_reference::PsnRange::effect): the window
/// starts empty at the PSN the vector configures and its end is the PSN
/// after the last one the QP sends (`exp.psns`). Exact when an ACK or NAK
/// naming a PSN the QP sends arrives after that PSN was sent, as one from a
/// real peer does.
pub fn ack_counters(
    v: &Vector,
    exp: &super::tx_reference::Expected,
    sent: &[(Option<usize>, &[u8])],
) -> BTreeMap<&'static str, u64> {
    use super::tx_reference::{ack_fields, AckEffect};
    let mut c: BTreeMap<&'static str, u64> = ["ack_new", "ack_dup", "nak", "ack_invalid"]
        .into_iter()
        .map(|n| (n, 0))
        .collect();
    let mut acked = [0u32; QPS as usize];
    for &(spec, bytes) in sent {
        if let Some(k) = spec {
            let r = &v.rx[k];
            if class(v, &r.frame, r.fault, bytes) != "rx_ack" {
                continue;
            }
        }
        let Some((qp, psn, syndrome)) = ack_fields(bytes) else {
            continue;
        };
        let q = qp as usize;
        let name = match exp.psns[q].effect(acked[q], psn, syndrome) {
            AckEffect::New(a) => {
                acked[q] = a;
                "ack_new"
            }
            AckEffect::Dup => "ack_dup",
            AckEffect::Nak => "nak",
            AckEffect::Invalid => "ack_invalid",
            AckEffect::Nothing => continue,
        };
        *c.get_mut(name).expect("listed above") += 1;
    }
    c
}

/// Checks the `ack_tracker` counters read back (when the run reads the RX
/// counters) against [`ack_counters`].
pub fn check_ack_counters(env: &mut super::RnicTopEnv, cycle: u64) {
    let sent: Vec<(Option<usize>, &[u8])> =
        env.rx.sent.iter().map(|s| (s.spec, &s.bytes[..])).collect();
    let want = ack_counters(&env.vector, &env.expected, &sent);
    let mut bad = Vec::new();
    for (name, exp) in want {
        let Some(got) = env.counters.iter().find(|(n, _)| n == name).map(|x| x.1) else {
            continue;
        };
        if got as u64 != exp {
            bad.push(format!(
                "{name} = {got}, the ACKs and NAKs sent call for {exp}"
            ));
        }
    }
    for b in bad {
        env.common.fail(cycle, b);
    }
}
