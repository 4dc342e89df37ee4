//! What the receive path must do with the frames on `rx_*`, worked out from
//! their bytes alone by the classification table of docs/rx_cc.md
//! (`rx_parser`): which event or drop each frame causes, which counter it
//! lands in, and which CE-marked packets must each cause a CNP. A frame
//! written symbolically in a vector and the same bytes written as hex are
//! judged alike, because only the bytes (and the MAC's FCS flag) are read.
//!
//! The rules are written here from the contract with the testbench's own
//! header views (`wire`), independently of the model.

use std::collections::BTreeMap;

use crate::vector::{Vector, QPS};
use crate::wire::pfc;
use crate::wire::roce::{self, aeth, bth, ethernet, immdt, ipv4, ipv6, reth, udp};

/// Drop reasons in `ev_drop_reason` order (docs/rx_cc.md): the first rule
/// a frame breaks names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DropReason {
    Fcs = 0,
    Runt = 1,
    NotRoce = 2,
    Trunc = 3,
    IpCsum = 4,
    Icrc = 5,
    Opcode = 6,
    Qp = 7,
}

impl DropReason {
    pub const ALL: [DropReason; 8] = [
        DropReason::Fcs,
        DropReason::Runt,
        DropReason::NotRoce,
        DropReason::Trunc,
        DropReason::IpCsum,
        DropReason::Icrc,
        DropReason::Opcode,
        DropReason::Qp,
    ];

    /// The counter of the register map this drop increments.
    pub fn counter(self) -> &'static str {
        match self {
            DropReason::Fcs => "drop_fcs",
            DropReason::Runt => "drop_runt",
            DropReason::NotRoce => "drop_not_roce",
            DropReason::Trunc => "drop_trunc",
            DropReason::IpCsum => "drop_ip_csum",
            DropReason::Icrc => "drop_icrc",
            DropReason::Opcode => "drop_opcode",
            DropReason::Qp => "drop_qp",
        }
    }
}

/// The one event a frame causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxEvent {
    /// PFC: the enable vector and every priority's time in quanta.
    Pfc {
        enable: u8,
        quanta: [u16; 8],
    },
    Cnp {
        qp: u32,
    },
    /// Any other RoCE packet to a live QP; `ce` when IP ECN = 11.
    Data {
        qp: u32,
        ce: bool,
    },
    /// Opcode ACKNOWLEDGE (ACK, NAK or RNR NAK, by syndrome).
    Ack {
        qp: u32,
        psn: u32,
        syndrome: u8,
        msn: u32,
    },
    Drop(DropReason),
}

impl RxEvent {
    /// The counter it increments besides `rx_frames`.
    pub fn counter(self) -> &'static str {
        match self {
            RxEvent::Pfc { .. } => "rx_pfc",
            RxEvent::Cnp { .. } => "rx_cnp",
            RxEvent::Data { .. } => "rx_data",
            RxEvent::Ack { .. } => "rx_ack",
            RxEvent::Drop(r) => r.counter(),
        }
    }
}

/// Classifies frame `f` (no FCS bytes; `fcs` = the MAC flagged an FCS
/// error) by the table of docs/rx_cc.md, first matching rule first.
/// `live(q)`: local QP q exists and is not in RESET. Header bytes past the
/// frame's end read as zero (the contract's rule where it is silent).
pub fn classify(f: &[u8], fcs: bool, live: impl Fn(u32) -> bool) -> RxEvent {
    use DropReason::*;
    if fcs {
        return RxEvent::Drop(Fcs);
    }
    if f.len() < 60 {
        return RxEvent::Drop(Runt);
    }
    // Every header this looks at lies within the first 160 bytes.
    let mut h = f.to_vec();
    h.resize(f.len().max(160), 0);
    let eth = ethernet::Header::new_unchecked(&h[..]);
    let e = eth.header_len();
    let et = eth.ethertype();
    if et == pfc::ETHERTYPE_MAC_CONTROL {
        // The PFC view is untagged: take the tag out.
        let g: Vec<u8> = h[..12].iter().chain(&h[e - 2..]).copied().collect();
        let p = pfc::Header::new_unchecked(&g[..]);
        if p.opcode() == pfc::OPCODE_PFC {
            let mut quanta = [0u16; 8];
            for (k, q) in quanta.iter_mut().enumerate() {
                *q = p.time(k);
            }
            return RxEvent::Pfc {
                enable: p.class_enable() as u8,
                quanta,
            };
        }
        return RxEvent::Drop(NotRoce);
    }
    let (v6, ip_hlen, ip_end, ecn) = match et {
        ethernet::ETHERTYPE_IPV4 => {
            let ip = ipv4::Header::new_unchecked(&h[e..]);
            let frag = ip.more_frags() || ip.frag_offset() != 0;
            if ip.version() != 4 || ip.ihl() != 5 || frag || ip.protocol() != 17 {
                return RxEvent::Drop(NotRoce);
            }
            (false, 20, e + ip.total_len() as usize, ip.ecn())
        }
        ethernet::ETHERTYPE_IPV6 => {
            let ip = ipv6::Header::new_unchecked(&h[e..]);
            if ip.version() != 6 || ip.next_header() != 17 {
                return RxEvent::Drop(NotRoce);
            }
            (
                true,
                40,
                e + 40 + ip.payload_len() as usize,
                ip.traffic_class() & 3,
            )
        }
        _ => return RxEvent::Drop(NotRoce),
    };
    let u = e + ip_hlen;
    if udp::Header::new_unchecked(&h[u..]).dst_port() != udp::ROCEV2_PORT {
        return RxEvent::Drop(NotRoce);
    }
    let b = u + udp::HEADER_LEN;
    let bh = bth::Header::new_unchecked(&h[b..]);
    let info = roce::opcode_info(bh.opcode());
    // The IP length (not the frame's) bounds the packet: Ethernet padding
    // after it is ignored.
    let hdr_end = b + bth::HEADER_LEN + info.map_or(0, |i| i.ext_len()) + roce::ICRC_LEN;
    // The BTH's pad bytes must fit in the packet as well.
    if hdr_end + bh.pad_cnt() as usize > ip_end || ip_end > f.len() {
        return RxEvent::Drop(Trunc);
    }
    if !v6 && ipv4::checksum(&h[e..e + 20]) != 0 {
        return RxEvent::Drop(IpCsum);
    }
    let stored = u32::from_le_bytes(f[ip_end - 4..ip_end].try_into().expect("4 bytes"));
    if roce::icrc(&f[e..ip_end - 4], v6) != stored {
        return RxEvent::Drop(Icrc);
    }
    if info.is_none() || bh.tver() != 0 {
        return RxEvent::Drop(Opcode);
    }
    let qp = bh.dest_qp();
    if !live(qp) {
        return RxEvent::Drop(Qp);
    }
    match bh.opcode() {
        0x11 => {
            let a = aeth::Header::new_unchecked(&h[b + bth::HEADER_LEN..]);
            RxEvent::Ack {
                qp,
                psn: bh.psn(),
                syndrome: a.syndrome(),
                msn: a.msn(),
            }
        }
        roce::OPCODE_CNP => RxEvent::Cnp { qp },
        _ => RxEvent::Data { qp, ce: ecn == 3 },
    }
}

/// The request metadata of a data frame (docs/responder.md, "Request
/// metadata"): what `rx_parser` must hand on with a frame that
/// [`classify`] calls `Data`. Taken from the testbench's header views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReqMeta {
    pub qp: u32,
    pub opcode: u8,
    pub psn: u32,
    pub ack_req: bool,
    /// Frame offset of the first payload byte.
    pub hdr_len: usize,
    /// Payload bytes, PadCnt excluded.
    pub pay_len: usize,
    /// RETH (VA, rkey, DMA length).
    pub reth: Option<(u64, u32, u32)>,
    pub imm: Option<u32>,
    /// AETH as its 32-bit word (syndrome, MSN).
    pub aeth: Option<u32>,
}

impl ReqMeta {
    /// The 256-bit record as four little-endian words, by the table of
    /// docs/responder.md (written here from the table, not from the model).
    pub fn words(&self) -> [u64; 4] {
        let (va, rkey, len) = self.reth.unwrap_or_default();
        let w0 = self.qp as u64 & 0xFF
            | (self.opcode as u64) << 8
            | (self.psn as u64 & 0xFF_FFFF) << 16
            | (self.ack_req as u64) << 40
            | (self.reth.is_some() as u64) << 41
            | (self.imm.is_some() as u64) << 42
            | (self.aeth.is_some() as u64) << 43
            | (self.hdr_len as u64 & 0x7F) << 44
            | (self.pay_len.min(8191) as u64) << 51;
        [
            w0,
            va,
            rkey as u64 | (len as u64) << 32,
            self.imm.unwrap_or(0) as u64 | (self.aeth.unwrap_or(0) as u64) << 32,
        ]
    }
}

/// The metadata of frame `f`, meaningful when [`classify`] says `Data`.
pub fn request_meta(f: &[u8]) -> ReqMeta {
    let eth = ethernet::Header::new_unchecked(f);
    let e = eth.header_len();
    let (ip_hlen, ip_end) = if eth.ethertype() == ethernet::ETHERTYPE_IPV6 {
        let ip = ipv6::Header::new_unchecked(&f[e..]);
        (40, e + 40 + ip.payload_len() as usize)
    } else {
        let ip = ipv4::Header::new_unchecked(&f[e..]);
        (20, e + ip.total_len() as usize)
    };
    let b = e + ip_hlen + udp::HEADER_LEN;
    let bh = bth::Header::new_unchecked(&f[b..]);
    let info = roce::opcode_info(bh.opcode()).expect("a data frame has a known opcode");
    let mut x = b + bth::HEADER_LEN;
    let reth = info.reth.then(|| {
        let r = reth::Header::new_unchecked(&f[x..]);
        x += reth::HEADER_LEN;
        (r.va(), r.rkey(), r.dma_len())
    });
    let imm = info.imm.then(|| {
        let i = immdt::Header::new_unchecked(&f[x..]);
        x += immdt::HEADER_LEN;
        i.imm()
    });
    let aeth = info.aeth.then(|| {
        let a = aeth::Header::new_unchecked(&f[x..]);
        x += aeth::HEADER_LEN;
        (a.syndrome() as u32) << 24 | a.msn()
    });
    ReqMeta {
        qp: bh.dest_qp(),
        opcode: bh.opcode(),
        psn: bh.psn(),
        ack_req: bh.ack_req(),
        hdr_len: x,
        pay_len: ip_end - roce::ICRC_LEN - bh.pad_cnt() as usize - x,
        reth,
        imm,
        aeth,
    }
}

/// `live` for the vector's QPs as configured: below QPS, listed, not RESET.
pub fn live_qps(v: &Vector) -> impl Fn(u32) -> bool + '_ {
    |n| n < QPS && v.qps.iter().any(|q| q.qp == n && q.state.receives())
}

/// The counters the frames that went out on `rx_*` must leave (`sent`:
/// bytes and FCS flag of each, peer ACKs included): `rx_frames`, the
/// event's or drop's counter, and `rx_ce` for CE-marked data.
pub fn counters(v: &Vector, sent: &[(&[u8], bool)]) -> BTreeMap<&'static str, u64> {
    let live = live_qps(v);
    let mut c = BTreeMap::new();
    for &(bytes, fcs) in sent {
        *c.entry("rx_frames").or_insert(0) += 1;
        let ev = classify(bytes, fcs, &live);
        *c.entry(ev.counter()).or_insert(0) += 1;
        if let RxEvent::Data { ce: true, .. } = ev {
            *c.entry("rx_ce").or_insert(0) += 1;
        }
    }
    c
}

/// The CNPs the notification point must send, per QP: CE-marked data
/// packets, in the order their last beats arrived, each one starting a CNP
/// unless the QP's previous CNP was started less than `interval` cycles
/// before (docs/rx_cc.md, `cnp_gen`). `ce` = (QP, cycle of the last beat).
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
/// `ack_tracker` ([`classify`] says ACK; a peer frame always does), judged in
/// that order against its QP's window by
/// [`PsnRange::effect`](super::tx_reference::PsnRange::effect): the window
/// starts empty at the PSN the vector configures and its end is the PSN
/// after the last one the QP sends (`exp.psns`). Exact when an ACK or NAK
/// naming a PSN the QP sends arrives after that PSN was sent, as one from a
/// real peer does.
pub fn ack_counters(
    v: &Vector,
    exp: &super::tx_reference::Expected,
    sent: &[(&[u8], bool)],
) -> BTreeMap<&'static str, u64> {
    use super::tx_reference::AckEffect;
    let live = live_qps(v);
    let mut c: BTreeMap<&'static str, u64> = ["ack_new", "ack_dup", "nak", "ack_invalid"]
        .into_iter()
        .map(|n| (n, 0))
        .collect();
    let mut acked = [0u32; QPS as usize];
    // A remote-error NAK (codes 1..3) acknowledges what is before its PSN
    // and puts the QP in error mode, where ACKs are judged and counted but
    // move nothing (docs/rx_cc.md, ack_tracker).
    let mut error = [false; QPS as usize];
    for &(bytes, fcs) in sent {
        let RxEvent::Ack {
            qp, psn, syndrome, ..
        } = classify(bytes, fcs, &live)
        else {
            continue;
        };
        let q = qp as usize;
        let name = match exp.psns[q].effect(acked[q], psn, syndrome) {
            AckEffect::New(a) => {
                if !error[q] {
                    acked[q] = a;
                }
                "ack_new"
            }
            AckEffect::Dup => "ack_dup",
            AckEffect::Nak if matches!(syndrome, 0x61..=0x63) => {
                if !error[q] {
                    acked[q] = psn.wrapping_sub(exp.psns[q].first) & 0xFF_FFFF;
                    error[q] = true;
                }
                "nak"
            }
            // A sequence-error NAK (0x60) or an RNR NAK acknowledges what
            // is before its PSN too (go-back-N, docs/retransmission.md),
            // outside error mode.
            AckEffect::Nak if syndrome == 0x60 || syndrome >> 5 == 0b001 => {
                if !error[q] {
                    acked[q] = psn.wrapping_sub(exp.psns[q].first) & 0xFF_FFFF;
                }
                "nak"
            }
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
    let sent: Vec<(&[u8], bool)> = env.rx.sent.iter().map(|s| (&s.bytes[..], s.fcs)).collect();
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
