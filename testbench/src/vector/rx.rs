//! The receive side of an `rnic_top` vector: frames the peer sends on
//! `rx_*`, written the way a person thinks of them ("CNP for QP 3", "PFC
//! priority 3 for 500 quanta", "ACK QP 2 PSN 17"), or as raw hex, with an
//! optional fault that damages the frame for the drop tests; and the
//! congestion-control parameters in natural units.
//!
//! A RoCE frame "for QP q" is what q's peer would send: Ethernet, VLAN and IP
//! addresses of q's context swapped (the peer's MAC and IP are q's
//! destination), DestQP = q (the local QP number), q's P_Key and UDP port.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::limits::MAX_FRAME_BYTES;
use super::qp_frame::{self, ecn_of, emit, From};
use super::{Hex, QpSpec};
use crate::wire::roce::{aeth, bth, reth, udp, Payload, RoceFrame, RoceRepr, ICRC_LEN};

/// One frame (or a train of identical frames) on `rx_*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxSpec {
    /// Earliest cycle after configuration the (first) frame starts; frames
    /// never overlap: one that is due while another is on the wire follows
    /// it back to back.
    #[serde(default)]
    pub at: u64,
    /// Copies of the frame (a storm), `every` cycles apart.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub every: u64,
    pub frame: RxFrame,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<RxFault>,
}

fn one() -> u32 {
    1
}
fn is_one(v: &u32) -> bool {
    *v == 1
}
fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RxFrame {
    /// PFC: pause time in quanta per priority (`{"3": 500}`); the other
    /// priorities' enable bits are clear.
    Pfc { quanta: BTreeMap<u8, u16> },
    /// A CNP for local QP `qp` (its reaction point).
    Cnp { qp: u32 },
    /// An ACK (syndrome 0) acknowledging every PSN up to `psn`.
    Ack {
        qp: u32,
        psn: u32,
        #[serde(default)]
        msn: u32,
    },
    /// A NAK (syndrome 0x60 | code) or, with `rnr`, an RNR NAK (0x20 | code).
    Nak {
        qp: u32,
        psn: u32,
        #[serde(default)]
        code: u8,
        #[serde(default)]
        rnr: bool,
    },
    /// A data packet (default RC SEND ONLY, `len` payload bytes), CE-marked
    /// when `ce`. The extension headers `opcode` calls for are built from
    /// `reth`, `imm` and `aeth` (zero where not given); giving one the
    /// opcode does not carry is an error.
    Data {
        qp: u32,
        psn: u32,
        #[serde(default)]
        len: u32,
        #[serde(default)]
        ce: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        opcode: Option<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reth: Option<RethSpec>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        imm: Option<Hex>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        aeth: Option<AethSpec>,
    },
    /// Raw bytes, hex (whitespace allowed).
    Hex(String),
}

/// The RETH of a symbolic data packet (RDMA WRITE FIRST/ONLY, READ REQUEST).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RethSpec {
    pub va: Hex,
    pub rkey: Hex,
    /// DMA length in bytes.
    pub len: u32,
}

/// The AETH of a symbolic data packet (READ RESPONSE FIRST/LAST/ONLY).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AethSpec {
    pub syndrome: u8,
    pub msn: u32,
}

/// Damage done to the frame after it is built (each one a drop reason of
/// docs/rx_cc.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RxFault {
    /// The MAC flags an FCS error (`rx_tuser` on the last beat).
    Fcs,
    /// Cut the frame to this many bytes.
    Truncate(u32),
    /// Flip a bit of the IPv4 header checksum.
    IpChecksum,
    /// Flip a bit of the ICRC.
    Icrc,
    /// Flip a payload bit the ICRC covers (the ICRC no longer matches).
    CoveredByte,
    /// Rewrite the UDP destination port (the ICRC is recomputed).
    UdpDport(u16),
    /// Rewrite DestQP (the ICRC is recomputed).
    DestQp(u32),
    /// Rewrite BTH TVer (the ICRC is recomputed).
    Tver(u8),
}

impl std::fmt::Display for RxFault {
    /// As the vector writes it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RxFault::Fcs => write!(f, "fcs"),
            RxFault::Truncate(n) => write!(f, "truncate {n}"),
            RxFault::IpChecksum => write!(f, "ip_checksum"),
            RxFault::Icrc => write!(f, "icrc"),
            RxFault::CoveredByte => write!(f, "covered_byte"),
            RxFault::UdpDport(p) => write!(f, "udp_dport {p}"),
            RxFault::DestQp(q) => write!(f, "dest_qp {q}"),
            RxFault::Tver(t) => write!(f, "tver {t}"),
        }
    }
}

/// The far end of the link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PeerSpec {
    /// Answer RC SEND/WRITE packets like a responder: an ACK for each
    /// AckReq packet received in PSN order, one NAK (PSN sequence error) at
    /// the first gap.
    pub auto_ack: bool,
    /// Cycles from a packet's last beat on `tx_*` to its ACK being due on `rx_*`.
    pub ack_delay: u64,
}

impl Default for PeerSpec {
    fn default() -> Self {
        PeerSpec {
            auto_ack: false,
            ack_delay: 64,
        }
    }
}

/// Congestion-control parameters in natural units; each becomes its
/// register of block CC (docs/rx_cc.md gives the conversions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CcSpec {
    pub g_shift: u8,
    pub f: u8,
    pub k_cycles: u32,
    pub t_inc_cycles: u32,
    pub b_bytes: u32,
    pub r_ai_mbps: f64,
    pub r_hai_mbps: f64,
    pub r_min_mbps: f64,
    pub r_max_mbps: f64,
    pub alpha_init: u16,
    pub burst_bytes: u32,
    pub cnp_dscp: u8,
    pub cnp_pcp: u8,
    pub cnp_becn: bool,
    pub cnp_interval_cycles: u32,
    /// DCQCN_MODE (docs/rx_cc.md, "DCQCN as deployed"): 0 = the paper's
    /// reaction point.
    pub dcqcn_mode: u8,
    /// DCQCN_MON: the rate-reduce monitor period.
    pub mon_cycles: u32,
    /// DCQCN_ALPHA_T: the alpha update period.
    pub alpha_t_cycles: u32,
}

impl Default for CcSpec {
    fn default() -> Self {
        CcSpec {
            g_shift: 8,
            f: 1,
            k_cycles: 13_750,
            t_inc_cycles: 75_000,
            b_bytes: 32_767,
            r_ai_mbps: 5.0,
            r_hai_mbps: 50.0,
            r_min_mbps: 1.0,
            r_max_mbps: 100_000.0,
            alpha_init: 1023,
            burst_bytes: 16384,
            cnp_dscp: 48,
            cnp_pcp: 6,
            cnp_becn: true,
            cnp_interval_cycles: 1000,
            dcqcn_mode: 0x1F,
            mon_cycles: 1000,
            alpha_t_cycles: 250,
        }
    }
}

/// The core clock the rate units assume.
pub const CLOCK_MHZ: f64 = 250.0;

/// Mb/s in rate units of 2^-20 byte per cycle, rounded toward zero.
pub fn rate_units(mbps: f64) -> u32 {
    (mbps * (1u64 << 20) as f64 / (8.0 * CLOCK_MHZ)) as u32
}

/// Rate units back in Gb/s.
pub fn units_to_gbps(units: u32) -> f64 {
    units as f64 * 8.0 * CLOCK_MHZ / (1u64 << 20) as f64 / 1000.0
}

/// The PFC frame of docs/protocol.md section 4 (60 bytes, no FCS) pausing each listed
/// priority for its quanta, from the peer's MAC 02:00:00:00:00:fe.
pub fn pfc_frame(quanta: &BTreeMap<u8, u16>) -> Vec<u8> {
    let mut r = crate::wire::pfc::Repr {
        src: 0x0200_0000_00FE,
        enable: 0,
        times: [0; 8],
    };
    for (&p, &q) in quanta {
        r.enable |= 1 << p;
        r.times[p as usize] = q;
    }
    r.to_bytes()
}

/// What QP `q`'s peer sends it, with these BTH fields and extension headers.
fn peer_repr(q: &QpSpec, bth: bth::Repr, aeth: Option<aeth::Repr>, dscp: u8, ecn: u8) -> RoceRepr {
    RoceRepr {
        aeth,
        ..qp_frame::repr(q, From::Peer, bth, dscp, ecn)
    }
}

fn bth_for(q: &QpSpec, opcode: u8, psn: u32) -> bth::Repr {
    qp_frame::bth(q, From::Peer, opcode, psn)
}

/// Why a frame cannot be built: the field under `frame` (e.g.
/// `data.len`) and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    pub field: String,
    pub reason: String,
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "frame.{}: {}", self.field, self.reason)
    }
}

fn ferr(field: &str, reason: impl Into<String>) -> FrameError {
    FrameError {
        field: field.into(),
        reason: reason.into(),
    }
}

/// A 24-bit field of a symbolic frame.
fn bits24(field: &str, v: u32) -> Result<u32, FrameError> {
    if v >= 1 << 24 {
        return Err(ferr(field, format!("{v} does not fit in 24 bits")));
    }
    Ok(v)
}

/// The bytes of `frame` (before any fault), given the vector's QPs, and
/// the CNP settings for CNPs' DSCP.
pub fn build_frame(frame: &RxFrame, qps: &[QpSpec], cc: &CcSpec) -> Result<Vec<u8>, FrameError> {
    let qp = |kind: &str, n: u32| {
        qps.iter().find(|q| q.qp == n).ok_or_else(|| {
            ferr(
                &format!("{kind}.qp"),
                format!("QP {n} is not in the vector's qps"),
            )
        })
    };
    Ok(match frame {
        RxFrame::Pfc { quanta } => {
            if let Some(p) = quanta.keys().find(|&&p| p > 7) {
                return Err(ferr("pfc.quanta", format!("priority {p} is not 0..=7")));
            }
            pfc_frame(quanta)
        }
        RxFrame::Cnp { qp: n } => {
            let q = qp("cnp", *n)?;
            let mut b = bth_for(q, crate::wire::roce::OPCODE_CNP, 0);
            b.becn = true;
            emit(&peer_repr(q, b, None, cc.cnp_dscp, 0))
        }
        RxFrame::Ack { qp: n, psn, msn } => {
            let q = qp("ack", *n)?;
            let a = aeth::Repr {
                syndrome: 0,
                msn: bits24("ack.msn", *msn)?,
            };
            let b = bth_for(q, 0x11, bits24("ack.psn", *psn)?);
            emit(&peer_repr(q, b, Some(a), q.dscp, ecn_of(q)))
        }
        RxFrame::Nak {
            qp: n,
            psn,
            code,
            rnr,
        } => {
            let q = qp("nak", *n)?;
            if *code > 0x1F {
                return Err(ferr(
                    "nak.code",
                    format!("{code} does not fit the AETH's 5-bit code (0..=31)"),
                ));
            }
            let syndrome = if *rnr { 0x20 } else { 0x60 } | code;
            let a = aeth::Repr { syndrome, msn: 0 };
            let b = bth_for(q, 0x11, bits24("nak.psn", *psn)?);
            emit(&peer_repr(q, b, Some(a), q.dscp, ecn_of(q)))
        }
        RxFrame::Data {
            qp: n,
            psn,
            len,
            ce,
            opcode,
            reth: reth_spec,
            imm,
            aeth: aeth_spec,
        } => {
            let q = qp("data", *n)?;
            let ecn = if *ce { 0b11 } else { ecn_of(q) };
            let op = opcode.unwrap_or(0x04);
            if op == crate::wire::roce::OPCODE_CNP {
                return Err(ferr(
                    "data.opcode",
                    "0x81 is a CNP: write it as {\"cnp\": {\"qp\": N}}",
                ));
            }
            let info = crate::wire::roce::opcode_info(op);
            let name = info.map_or("an opcode this tool does not know", |i| i.name);
            let (has_reth, has_aeth, has_imm) =
                info.map_or((false, false, false), |i| (i.reth, i.aeth, i.imm));
            for (given, has, field, hdr) in [
                (reth_spec.is_some(), has_reth, "data.reth", "RETH"),
                (aeth_spec.is_some(), has_aeth, "data.aeth", "AETH"),
                (imm.is_some(), has_imm, "data.imm", "ImmDt"),
            ] {
                if given && !has {
                    return Err(ferr(
                        field,
                        format!("opcode {op:#04x} ({name}) carries no {hdr}"),
                    ));
                }
            }
            if *len > 0 && info.is_some_and(|i| i.payload == Payload::None) {
                return Err(ferr(
                    "data.len",
                    format!("opcode {op:#04x} ({name}) carries no payload"),
                ));
            }
            if imm.is_some_and(|i| i.0 >= 1 << 32) {
                return Err(ferr("data.imm", "does not fit in 32 bits"));
            }
            let ext = info.map_or(0, |i| i.ext_len());
            let total = peer_header_len(q) + ext + *len as usize + 3 + ICRC_LEN;
            if total > MAX_FRAME_BYTES {
                return Err(ferr(
                    "data.len",
                    format!(
                        "{len} payload bytes make a frame of about {total} bytes, above the \
                         {MAX_FRAME_BYTES}-byte limit"
                    ),
                ));
            }
            let mut r = peer_repr(
                q,
                bth_for(q, op, bits24("data.psn", *psn)?),
                None,
                q.dscp,
                ecn,
            );
            r.payload = (0..*len).map(|k| (k * 7 + 3) as u8).collect();
            if info.is_none() {
                // An opcode the codec does not know: BTH only, then the payload.
                return Ok(raw_bth_frame(&r));
            }
            r.reth = has_reth.then(|| {
                let s = reth_spec.unwrap_or_default();
                reth::Repr {
                    va: s.va.0,
                    rkey: s.rkey.0 as u32,
                    dma_len: s.len,
                }
            });
            if reth_spec.is_some_and(|s| s.rkey.0 >= 1 << 32) {
                return Err(ferr("data.reth.rkey", "does not fit in 32 bits"));
            }
            if let Some(a) = aeth_spec {
                bits24("data.aeth.msn", a.msn)?;
            }
            r.aeth = has_aeth.then(|| {
                let s = aeth_spec.unwrap_or_default();
                aeth::Repr {
                    syndrome: s.syndrome,
                    msn: s.msn,
                }
            });
            r.imm = has_imm.then(|| imm.map_or(0, |i| i.0 as u32));
            emit(&r)
        }
        RxFrame::Hex(h) => {
            let t: String = h.chars().filter(|c| !c.is_whitespace()).collect();
            if t.len() > 2 * MAX_FRAME_BYTES {
                return Err(ferr(
                    "hex",
                    format!(
                        "{} bytes, above the {MAX_FRAME_BYTES}-byte limit",
                        t.len() / 2
                    ),
                ));
            }
            if t.is_empty() || !t.len().is_multiple_of(2) {
                return Err(ferr("hex", "needs an even, non-zero number of hex digits"));
            }
            (0..t.len())
                .step_by(2)
                .map(|k| u8::from_str_radix(&t[k..k + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .map_err(|_| ferr("hex", "holds a character that is not a hex digit"))?
        }
    })
}

/// Bytes of Ethernet (and tag), IP, UDP and BTH headers of what QP `q`'s
/// peer sends.
fn peer_header_len(q: &QpSpec) -> usize {
    let l2 = if q.vlan.is_some() { 18 } else { 14 };
    let ip = if q.ip.is_v6() { 40 } else { 20 };
    l2 + ip + udp::HEADER_LEN + bth::HEADER_LEN
}

/// A frame with an opcode outside the codec's table: emitted as a SEND ONLY
/// with the opcode byte rewritten and the ICRC recomputed, so only the
/// opcode is wrong.
fn raw_bth_frame(r: &RoceRepr) -> Vec<u8> {
    let op = r.bth.opcode;
    let mut s = r.clone();
    s.bth.opcode = 0x04;
    let mut f = emit(&s);
    let bth_at = s.eth.header_len() + s.ip.header_len() + udp::HEADER_LEN;
    f[bth_at] = op;
    refill_icrc(&mut f);
    f
}

/// Recomputes a RoCE frame's ICRC after a header was rewritten.
fn refill_icrc(f: &mut [u8]) {
    RoceFrame::new_unchecked(f).fill_icrc();
}

/// Applies `fault` to a built frame; returns the bytes and the FCS flag.
pub fn apply_fault(mut f: Vec<u8>, fault: Option<RxFault>) -> Result<(Vec<u8>, bool), String> {
    let l2 = if f.len() >= 14 && f[12..14] == [0x81, 0x00] {
        18
    } else {
        14
    };
    let v6 = f.len() > l2 && f[l2] >> 4 == 6;
    let ip_len = if v6 { 40 } else { 20 };
    let bth_at = l2 + ip_len + 8;
    let need = |n: usize, f: &Vec<u8>| {
        if f.len() < n {
            Err(format!("the fault needs a frame of at least {n} bytes"))
        } else {
            Ok(())
        }
    };
    let header_fault = !matches!(
        fault,
        None | Some(RxFault::Fcs) | Some(RxFault::Truncate(_))
    );
    if let (true, Some(x)) = (header_fault, fault) {
        if let Err(why) = RoceRepr::parse_bytes(&f) {
            return Err(format!(
                "{x} damages a RoCE header, but the frame is not a well-formed RoCE frame ({why})"
            ));
        }
    }
    match fault {
        None => {}
        Some(RxFault::Fcs) => return Ok((f, true)),
        Some(RxFault::Truncate(n)) => {
            if n == 0 || n as usize > f.len() {
                return Err(format!(
                    "truncate {n}: not in 1..={} (the frame's length)",
                    f.len()
                ));
            }
            f.truncate(n as usize);
        }
        Some(RxFault::IpChecksum) => {
            need(l2 + 20, &f)?;
            if v6 {
                return Err("ip_checksum on an IPv6 frame".into());
            }
            f[l2 + 11] ^= 0x01;
        }
        Some(RxFault::Icrc) => {
            let n = f.len();
            f[n - 1] ^= 0x80;
        }
        Some(RxFault::CoveredByte) => {
            need(bth_at + 12 + 4, &f)?;
            // The BTH's PSN low byte: covered, and any value is a valid PSN.
            f[bth_at + 11] ^= 0x01;
        }
        Some(RxFault::UdpDport(p)) => {
            need(bth_at, &f)?;
            f[bth_at - 6..bth_at - 4].copy_from_slice(&p.to_be_bytes());
            refill_icrc(&mut f);
        }
        Some(RxFault::DestQp(qp)) => {
            need(bth_at + 12, &f)?;
            if qp >= 1 << 24 {
                return Err(format!("dest_qp {qp} does not fit in 24 bits"));
            }
            f[bth_at + 5..bth_at + 8].copy_from_slice(&qp.to_be_bytes()[1..]);
            refill_icrc(&mut f);
        }
        Some(RxFault::Tver(t)) => {
            need(bth_at + 12, &f)?;
            if t >= 16 {
                return Err(format!("tver {t} does not fit in 4 bits (0..=15)"));
            }
            f[bth_at + 1] = (f[bth_at + 1] & 0xF0) | (t & 0x0F);
            refill_icrc(&mut f);
        }
    }
    Ok((f, false))
}

impl super::Vector {
    /// Every RX frame builds (its QP exists, its fault fits it) and every CC
    /// parameter fits its register.
    pub(super) fn validate_rx(&self, file: &std::path::Path) -> Result<(), super::VectorError> {
        let e = |p: String, r: String| Err(super::field_err(file, p, r));
        let mut frames = 0u64;
        for (k, r) in self.rx.iter().enumerate() {
            let f = build_frame(&r.frame, &self.qps, &self.cc).map_err(|x| {
                super::field_err(file, format!("rx[{k}].frame.{}", x.field), x.reason)
            })?;
            let (f, _) = apply_fault(f, r.fault)
                .map_err(|why| super::field_err(file, format!("rx[{k}].fault"), why))?;
            if f.len() > MAX_FRAME_BYTES {
                return e(
                    format!("rx[{k}].frame"),
                    format!("{} bytes is above {MAX_FRAME_BYTES}", f.len()),
                );
            }
            if r.count == 0 || (r.count > 1 && r.every == 0) {
                return e(
                    format!("rx[{k}].count"),
                    "count must be at least 1, with `every` > 0 for more than one".into(),
                );
            }
            frames += r.count as u64;
            if frames > super::limits::MAX_RX_FRAMES {
                return e(
                    format!("rx[{k}].count"),
                    format!(
                        "the rx list sends more than {} frames in all",
                        super::limits::MAX_RX_FRAMES
                    ),
                );
            }
            // The last copy must be due within the run.
            let last = (r.count as u64 - 1)
                .checked_mul(r.every)
                .and_then(|x| x.checked_add(r.at));
            match last {
                Some(t) if t <= self.max_cycles => {}
                _ => {
                    let what = if r.count > 1 {
                        "its last copy (at + (count - 1) x every) is due past".to_string()
                    } else {
                        format!("{} is past", r.at)
                    };
                    let field = if r.count > 1 { "every" } else { "at" };
                    return e(
                        format!("rx[{k}].{field}"),
                        format!("{what} the run's limit (max_cycles = {})", self.max_cycles),
                    );
                }
            }
        }
        if self.peer.ack_delay > self.max_cycles {
            return e(
                "peer.ack_delay".into(),
                format!(
                    "{} is past the run's limit (max_cycles = {})",
                    self.peer.ack_delay, self.max_cycles
                ),
            );
        }
        let c = &self.cc;
        let checks: [(&str, u64, u64); 11] = [
            ("cc.g_shift", c.g_shift as u64, 10),
            ("cc.k_cycles", c.k_cycles as u64, (1 << 24) - 1),
            ("cc.t_inc_cycles", c.t_inc_cycles as u64, (1 << 24) - 1),
            ("cc.alpha_init", c.alpha_init as u64, 1024),
            ("cc.dcqcn_mode", c.dcqcn_mode as u64, 0x3F),
            ("cc.mon_cycles", c.mon_cycles as u64, (1 << 24) - 1),
            ("cc.alpha_t_cycles", c.alpha_t_cycles as u64, (1 << 24) - 1),
            ("cc.burst_bytes", c.burst_bytes as u64, (1 << 24) - 1),
            ("cc.cnp_dscp", c.cnp_dscp as u64, 63),
            ("cc.cnp_pcp", c.cnp_pcp as u64, 7),
            (
                "cc.cnp_interval_cycles",
                c.cnp_interval_cycles as u64,
                (1 << 24) - 1,
            ),
        ];
        for (p, v, max) in checks {
            if v > max {
                return e(p.into(), format!("{v} is above {max}"));
            }
        }
        for (p, mbps) in [
            ("cc.r_ai_mbps", c.r_ai_mbps),
            ("cc.r_hai_mbps", c.r_hai_mbps),
            ("cc.r_min_mbps", c.r_min_mbps),
            ("cc.r_max_mbps", c.r_max_mbps),
        ] {
            if !(0.0..=400_000.0).contains(&mbps) {
                return e(p.into(), format!("{mbps} Mb/s is not in 0..=400000"));
            }
        }
        if c.r_min_mbps > c.r_max_mbps {
            return e("cc.r_min_mbps".into(), "above r_max_mbps".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_units_at_250_mhz() {
        // 1 Mb/s = 10^6 / 8 / 250e6 B/cycle = 1/2000 -> 2^20 / 2000 = 524.288.
        assert_eq!(rate_units(1.0), 524);
        assert_eq!(rate_units(5.0), 2621);
        assert_eq!(rate_units(100_000.0), 50 << 20);
        assert!((units_to_gbps(50 << 20) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn pfc_frame_layout() {
        let f = pfc_frame(&BTreeMap::from([(3, 500), (7, 0xFFFF)]));
        assert_eq!(f.len(), 60);
        assert_eq!(&f[12..18], &[0x88, 0x08, 0x01, 0x01, 0x00, 0x88]);
        assert_eq!(&f[24..26], &[0x01, 0xF4]); // priority 3 at 18 + 2*3
        assert_eq!(&f[32..34], &[0xFF, 0xFF]); // priority 7
        assert!(f[34..].iter().all(|&b| b == 0));
    }
}
