//! The `rnic_top` part of a vector: QPs, MRs, CQs, WQEs and doorbells in
//! plain terms. The testbench turns the tables into MMIO writes and writes
//! each WQE into its SQ ring in host memory just before the doorbell that
//! posts it, so a person can write a scenario without knowing the register
//! map or the WQE layout.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Hex;

/// A MAC address written `"02:00:00:00:00:01"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    /// As the 48-bit number the csr holds (first byte on the wire in bits 47..40).
    pub fn to_u64(self) -> u64 {
        self.0.iter().fold(0, |a, &b| a << 8 | b as u64)
    }
}

impl Serialize for Mac {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let b = self.0;
        s.serialize_str(&format!(
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        ))
    }
}

impl<'de> Deserialize<'de> for Mac {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let parts: Vec<&str> = s.split(':').collect();
        let bad =
            || serde::de::Error::custom(format!("{s:?} is not a MAC address aa:bb:cc:dd:ee:ff"));
        if parts.len() != 6 {
            return Err(bad());
        }
        let mut m = [0u8; 6];
        for (o, p) in m.iter_mut().zip(parts) {
            *o = u8::from_str_radix(p, 16).map_err(|_| bad())?;
        }
        Ok(Mac(m))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QpType {
    Rc,
    Uc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QpState {
    Reset,
    Rts,
    Error,
    /// Receives (the responder acts), sends nothing.
    Rtr,
    /// Neither receives nor sends.
    Init,
}

impl QpState {
    /// CTRL.STATE (docs/responder.md: 3 bits).
    pub fn code(self) -> u32 {
        match self {
            QpState::Reset => 0,
            QpState::Rts => 1,
            QpState::Error => 2,
            QpState::Rtr => 3,
            QpState::Init => 4,
        }
    }
    /// The receive path takes the QP's frames (RTR, RTS, ERROR).
    pub fn receives(self) -> bool {
        matches!(self, QpState::Rts | QpState::Rtr | QpState::Error)
    }
    /// The transmit path fetches and sends (RTS, ERROR flushes).
    pub fn sends(self) -> bool {
        matches!(self, QpState::Rts | QpState::Error)
    }
}

/// IPv4 or IPv6 endpoints of a QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum IpPair {
    Ipv4 { src: Ipv4Addr, dst: Ipv4Addr },
    Ipv6 { src: Ipv6Addr, dst: Ipv6Addr },
}

impl IpPair {
    /// (src, dst) as the csr's 128-bit numbers (IPv4 in the low 32 bits).
    pub fn to_u128(self) -> (u128, u128) {
        match self {
            IpPair::Ipv4 { src, dst } => (u32::from(src) as u128, u32::from(dst) as u128),
            IpPair::Ipv6 { src, dst } => (u128::from(src), u128::from(dst)),
        }
    }
    pub fn is_v6(self) -> bool {
        matches!(self, IpPair::Ipv6 { .. })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vlan {
    pub vid: u16,
    pub pcp: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ring {
    pub base: Hex,
    /// log2 of the number of entries.
    pub log_size: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QpSpec {
    /// QP index (= local QP number).
    pub qp: u32,
    #[serde(rename = "type")]
    pub kind: QpType,
    #[serde(default = "default_state")]
    pub state: QpState,
    pub remote_qpn: u32,
    /// First PSN.
    #[serde(default)]
    pub psn: u32,
    /// Path MTU in bytes: 256, 512, 1024, 2048 or 4096.
    pub mtu: u32,
    #[serde(default)]
    pub pd: u16,
    #[serde(default)]
    pub cq: u32,
    pub dst_mac: Mac,
    pub src_mac: Mac,
    pub ip: IpPair,
    #[serde(default = "default_sport")]
    pub udp_sport: u16,
    #[serde(default)]
    pub dscp: u8,
    /// Send data ECN-capable (ECT(0)).
    #[serde(default)]
    pub ecn: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vlan: Option<Vlan>,
    #[serde(default = "default_pkey")]
    pub pkey: u16,
    pub sq: Ring,
    /// DCQCN congestion control (CTRL.CC_EN): the reaction point and the
    /// rate limiter act on this QP.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cc: bool,
    /// CTRL.MAX_RD, max_rd_atomic: the READs this QP keeps outstanding as
    /// a requester (0 acts as 1). Omitted: 7, the most the field holds.
    #[serde(default = "default_max_rd", skip_serializing_if = "is_max_rd_default")]
    pub max_rd_atomic: u8,
    /// RETRY.TIMEOUT: local ACK timeout 4.096 us x 2^timeout, 0 = no timer
    /// (0..31; omitted: 0, the register's reset value).
    #[serde(default, skip_serializing_if = "is_zero8")]
    pub timeout: u8,
    /// RETRY.RETRY_CNT: retransmissions after a timeout or a sequence-error
    /// NAK before the QP fails (0..7; omitted: 7, the reset value).
    #[serde(default = "default_retry", skip_serializing_if = "is_retry_default")]
    pub retry_cnt: u8,
    /// RETRY.RNR_RETRY: retransmissions after an RNR NAK, 7 = no limit
    /// (0..7; omitted: 7, the reset value).
    #[serde(default = "default_retry", skip_serializing_if = "is_retry_default")]
    pub rnr_retry: u8,
    /// The responder's expected PSN (EPSN, written before CTRL).
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub epsn: u32,
    /// The receive queue: 128-byte RECV WQEs (none: no RECV is posted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq: Option<Ring>,
    /// The CQ of receive completions (RESP.RQ_CQ); default the QP's `cq`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rq_cq: Option<u32>,
    /// RESP.RNR_TIMER: the timer code of the RNR NAKs it sends.
    #[serde(default, skip_serializing_if = "is_zero8")]
    pub min_rnr_timer: u8,
    /// RESP.MAX_DEST_RD: the READs the QP executes at once (`rd_resp`
    /// refuses a READ beyond max(1, it)). Omitted: 7, the most the 3-bit
    /// field holds, so that a vector that does not name it is not limited
    /// (docs/pair.md).
    #[serde(
        default = "default_max_dest_rd_atomic",
        skip_serializing_if = "is_default_max_dest_rd_atomic"
    )]
    pub max_dest_rd_atomic: u8,
    /// The remote rights the QP grants (RESP.ACCESS): remote_write, remote_read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remote_access: Vec<Access>,
}

impl QpSpec {
    /// The CQ its receive completions go to.
    pub fn recv_cq(&self) -> u32 {
        self.rq_cq.unwrap_or(self.cq)
    }
}

fn is_zero32(v: &u32) -> bool {
    *v == 0
}
fn is_zero8(v: &u8) -> bool {
    *v == 0
}

fn default_max_rd() -> u8 {
    7
}
fn is_max_rd_default(v: &u8) -> bool {
    *v == default_max_rd()
}
fn default_retry() -> u8 {
    7
}
fn is_retry_default(v: &u8) -> bool {
    *v == default_retry()
}
fn default_max_dest_rd_atomic() -> u8 {
    7
}
fn is_default_max_dest_rd_atomic(v: &u8) -> bool {
    *v == default_max_dest_rd_atomic()
}

fn default_state() -> QpState {
    QpState::Rts
}
fn default_sport() -> u16 {
    49152
}
fn default_pkey() -> u16 {
    0xFFFF
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    LocalWrite,
    RemoteWrite,
    RemoteRead,
    RemoteAtomic,
}

impl Access {
    /// ibverbs bit value.
    pub fn bit(self) -> u32 {
        match self {
            Access::LocalWrite => 1,
            Access::RemoteWrite => 2,
            Access::RemoteRead => 4,
            Access::RemoteAtomic => 8,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MrSpec {
    /// Table entry; the lkey that selects it is `key` (entry = key mod MRS).
    pub index: u32,
    pub key: Hex,
    pub va: Hex,
    pub len: Hex,
    /// Physical (host memory) address of `va`.
    pub pbase: Hex,
    #[serde(default)]
    pub access: Vec<Access>,
    #[serde(default)]
    pub pd: u16,
    #[serde(default = "yes")]
    pub valid: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CqSpec {
    pub cq: u32,
    pub ring: Ring,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WqeOpcode {
    Send,
    SendImm,
    Write,
    WriteImm,
    Read,
    /// A raw opcode byte (to test invalid ones).
    #[serde(untagged)]
    Raw(u8),
}

/// The opcode names a WQE takes, in code order.
const WQE_OPCODE_NAMES: [(&str, WqeOpcode); 5] = [
    ("send", WqeOpcode::Send),
    ("send_imm", WqeOpcode::SendImm),
    ("write", WqeOpcode::Write),
    ("write_imm", WqeOpcode::WriteImm),
    ("read", WqeOpcode::Read),
];

impl<'de> Deserialize<'de> for WqeOpcode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = WqeOpcode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "one of send, send_imm, write, write_imm, read, or a raw opcode number 0..=255",
                )
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<WqeOpcode, E> {
                u8::try_from(v).map(WqeOpcode::Raw).map_err(|_| {
                    E::custom(format!("raw opcode {v} does not fit in a byte (0..=255)"))
                })
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<WqeOpcode, E> {
                Err(E::custom(format!(
                    "raw opcode {v} does not fit in a byte (0..=255)"
                )))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<WqeOpcode, E> {
                WQE_OPCODE_NAMES
                    .iter()
                    .find(|(n, _)| *n == v)
                    .map(|&(_, o)| o)
                    .ok_or_else(|| {
                        E::custom(format!(
                            "\"{v}\" is not an opcode: expected one of send, send_imm, write, \
                             write_imm, read, or a raw opcode number 0..=255"
                        ))
                    })
            }
        }
        d.deserialize_any(V)
    }
}

impl WqeOpcode {
    pub fn code(self) -> u8 {
        match self {
            WqeOpcode::Send => 0,
            WqeOpcode::SendImm => 1,
            WqeOpcode::Write => 2,
            WqeOpcode::WriteImm => 3,
            WqeOpcode::Read => 4,
            WqeOpcode::Raw(b) => b,
        }
    }

    /// The opcode of the requester's CQE for this WQE (wire/cqe.rs).
    pub fn cqe_opcode(self) -> u8 {
        use crate::wire::cqe;
        match self.code() {
            0 | 1 => cqe::OPCODE_SEND,
            2 | 3 => cqe::OPCODE_RDMA_WRITE,
            4 => cqe::OPCODE_RDMA_READ,
            _ => cqe::OPCODE_INVALID,
        }
    }
}

impl fmt::Display for WqeOpcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WqeOpcode::Raw(b) => write!(f, "raw {b}"),
            o => {
                let name = WQE_OPCODE_NAMES.iter().find(|(_, x)| x == o).map(|x| x.0);
                write!(f, "{}", name.unwrap_or("?"))
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WqeSpec {
    pub qp: u32,
    pub opcode: WqeOpcode,
    pub wr_id: Hex,
    pub len: u32,
    #[serde(default)]
    pub laddr: Hex,
    #[serde(default)]
    pub lkey: Hex,
    #[serde(default)]
    pub raddr: Hex,
    #[serde(default)]
    pub rkey: Hex,
    #[serde(default)]
    pub imm: Hex,
    #[serde(default = "yes")]
    pub signaled: bool,
    #[serde(default)]
    pub solicited: bool,
}

/// Posts the next `wqes` WQEs of `qp` (in the order of the vector's `wqes`
/// list) and rings its doorbell, `at` cycles after configuration is done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoorbellSpec {
    #[serde(default)]
    pub at: u64,
    pub qp: u32,
    pub wqes: u32,
}

/// The MAC side of `tx_*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MacSpec {
    /// Percentage of cycles with tx_tready high (seeded), 1..=100.
    pub tready_percent: u8,
    pub seed: u64,
}

impl Default for MacSpec {
    fn default() -> Self {
        MacSpec {
            tready_percent: 100,
            seed: 1,
        }
    }
}

/// One frame as it left on `tx_*`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameResult {
    /// `"qp 0 psn 5 RC_RDMA_WRITE_ONLY"`: a summary for the reader of the diff.
    pub what: String,
    pub len: u32,
    /// FNV-1a 64 of the frame's bytes.
    pub digest: Hex,
}

/// One CQE as found in host memory at the end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CqeResult {
    pub cq: u32,
    pub index: u32,
    pub wr_id: Hex,
    pub qp: u32,
    pub opcode: u8,
    pub status: u8,
    pub len: u32,
    pub imm: Hex,
    pub owner: u8,
    /// RECV completions: byte 0x16 bit 0, the immediate is present.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imm_flag: bool,
    /// RECV completions: the source QP (bytes 0x18..0x1A).
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub src_qp: u32,
}

/// A ring of 2^log_size entries of `entry` bytes: log_size 0..=15, base
/// aligned to an entry, the whole ring below 2^64.
fn check_ring(path: &str, r: Ring, entry: u64) -> Result<(), (String, String)> {
    if r.log_size > 15 {
        return Err((
            format!("{path}.log_size"),
            format!("{} is not in 0..=15", r.log_size),
        ));
    }
    if !r.base.0.is_multiple_of(entry) {
        return Err((
            format!("{path}.base"),
            format!("{:#x} is not {entry}-byte aligned", r.base.0),
        ));
    }
    if r.base.0.checked_add(entry << r.log_size).is_none() {
        return Err((
            format!("{path}.base"),
            format!(
                "{:#x}: the ring's {} bytes reach 2^64",
                r.base.0,
                entry << r.log_size
            ),
        ));
    }
    Ok(())
}

/// Table sizes of `rnic_top` as built (the RTL's default parameters).
pub const QPS: u32 = rnic_model::params::QPS as u32;
pub const MRS: u32 = rnic_model::params::MRS as u32;
pub const CQS: u32 = rnic_model::params::CQS as u32;

impl super::Vector {
    /// Checks of the `rnic_top` sections: every reference resolves, every
    /// number fits its register.
    pub(super) fn validate_tx(&self, file: &std::path::Path) -> Result<(), super::VectorError> {
        let e = |p: String, r: String| Err(super::field_err(file, p, r));
        if !self.reads.is_empty() || !self.writes.is_empty() {
            return e(
                "reads".into(),
                "rnic_top takes WQEs, not reads/writes".into(),
            );
        }
        if self.qps.is_empty() {
            return e("qps".into(), "rnic_top needs at least one QP".into());
        }
        let m = &self.mac;
        if !(1..=100).contains(&m.tready_percent) {
            return e(
                "mac.tready_percent".into(),
                format!("{} is not in 1..=100", m.tready_percent),
            );
        }
        let mut seen = [false; QPS as usize];
        for (k, q) in self.qps.iter().enumerate() {
            let p = |f: &str| format!("qps[{k}].{f}");
            if q.qp >= QPS || seen[q.qp as usize] {
                return e(
                    p("qp"),
                    format!("{} is not a free QP index below {QPS}", q.qp),
                );
            }
            seen[q.qp as usize] = true;
            if q.remote_qpn >= 1 << 24 {
                return e(
                    p("remote_qpn"),
                    format!("{} does not fit in 24 bits", q.remote_qpn),
                );
            }
            if self.qps[..k].iter().any(|o| o.remote_qpn == q.remote_qpn) {
                return e(
                    p("remote_qpn"),
                    format!(
                        "{:#x} is another QP's too: the testbench tells frames apart by DestQP",
                        q.remote_qpn
                    ),
                );
            }
            if q.psn >= 1 << 24 {
                return e(p("psn"), format!("{} does not fit in 24 bits", q.psn));
            }
            if !super::pow2_in(q.mtu, 256, 4096) {
                return e(
                    p("mtu"),
                    format!("{} is not 256, 512, 1024, 2048 or 4096", q.mtu),
                );
            }
            if !self.cqs.iter().any(|c| c.cq == q.cq) {
                return e(p("cq"), format!("CQ {} is not in cqs", q.cq));
            }
            if q.max_rd_atomic > 7 {
                return e(
                    p("max_rd_atomic"),
                    format!("{} does not fit in 3 bits", q.max_rd_atomic),
                );
            }
            if q.timeout > 31 {
                return e(
                    p("timeout"),
                    format!("{} does not fit in 5 bits (RETRY.TIMEOUT)", q.timeout),
                );
            }
            for (name, v) in [("retry_cnt", q.retry_cnt), ("rnr_retry", q.rnr_retry)] {
                if v > 7 {
                    return e(p(name), format!("{v} does not fit in 3 bits (0..7)"));
                }
            }
            if q.dscp >= 64 {
                return e(p("dscp"), format!("{} does not fit in 6 bits", q.dscp));
            }
            if let Some(v) = q.vlan {
                if v.vid >= 4096 || v.pcp >= 8 {
                    return e(
                        p("vlan"),
                        format!("vid {} / pcp {} out of range", v.vid, v.pcp),
                    );
                }
            }
            check_ring(&p("sq"), q.sq, 64).or_else(|(p, r)| e(p, r))?;
        }
        for (k, m) in self.mrs.iter().enumerate() {
            if m.index >= MRS {
                return e(
                    format!("mrs[{k}].index"),
                    format!("{} is not an MR table entry 0..={}", m.index, MRS - 1),
                );
            }
            if self.mrs[..k].iter().any(|o| o.index == m.index) {
                return e(
                    format!("mrs[{k}].index"),
                    format!("entry {} is set by an earlier mrs entry too", m.index),
                );
            }
            if m.key.0 >= 1 << 32 || m.key.0 % MRS as u64 != m.index as u64 {
                return e(
                    format!("mrs[{k}].key"),
                    format!(
                        "key {:#x} must be 32 bits and select entry {} (key mod {MRS})",
                        m.key.0, m.index
                    ),
                );
            }
            if m.va.0.checked_add(m.len.0).is_none() || m.pbase.0.checked_add(m.len.0).is_none() {
                return e(
                    format!("mrs[{k}].len"),
                    format!(
                        "{:#x} bytes at va {:#x} / pbase {:#x} wrap past 2^64",
                        m.len.0, m.va.0, m.pbase.0
                    ),
                );
            }
        }
        for (k, c) in self.cqs.iter().enumerate() {
            if c.cq >= CQS {
                return e(
                    format!("cqs[{k}].cq"),
                    format!("{} is not a CQ 0..={}", c.cq, CQS - 1),
                );
            }
            if self.cqs[..k].iter().any(|o| o.cq == c.cq) {
                return e(
                    format!("cqs[{k}].cq"),
                    format!("CQ {} is set by an earlier cqs entry too", c.cq),
                );
            }
            check_ring(&format!("cqs[{k}].ring"), c.ring, 32).or_else(|(p, r)| e(p, r))?;
        }
        let mut bytes = 0u64;
        for (k, w) in self.wqes.iter().enumerate() {
            bytes += w.len as u64;
            if bytes > super::limits::MAX_WQE_BYTES {
                return e(
                    format!("wqes[{k}].len"),
                    format!(
                        "the WQEs move more than the {} MiB a vector may send in total",
                        super::limits::MAX_WQE_BYTES >> 20
                    ),
                );
            }
        }
        let mut per_qp = [0u32; QPS as usize];
        for (k, w) in self.wqes.iter().enumerate() {
            if !self.qps.iter().any(|q| q.qp == w.qp) {
                return e(
                    format!("wqes[{k}].qp"),
                    format!("QP {} is not in qps", w.qp),
                );
            }
            if w.len > 1 << 31 {
                return e(format!("wqes[{k}].len"), format!("{} is above 2^31", w.len));
            }
            per_qp[w.qp as usize] += 1;
        }
        let mut posted = [0u32; QPS as usize];
        for (k, d) in self.doorbells.iter().enumerate() {
            if d.at > self.max_cycles {
                return e(
                    format!("doorbells[{k}].at"),
                    format!(
                        "{} is past the run's limit (max_cycles = {})",
                        d.at, self.max_cycles
                    ),
                );
            }
            let Some(q) = self.qps.iter().find(|q| q.qp == d.qp) else {
                return e(
                    format!("doorbells[{k}].qp"),
                    format!("QP {} is not in qps", d.qp),
                );
            };
            posted[d.qp as usize] += d.wqes;
            if posted[d.qp as usize] > per_qp[d.qp as usize] {
                return e(
                    format!("doorbells[{k}].wqes"),
                    format!("posts more WQEs than QP {} has in wqes", d.qp),
                );
            }
            if d.wqes > 1 << q.sq.log_size {
                return e(
                    format!("doorbells[{k}].wqes"),
                    "more WQEs than the SQ ring holds".into(),
                );
            }
        }
        self.validate_rx(file)?;
        // Every WQE posted (by a doorbell or a program step): there.
        self.validate_resp(file)
    }
}
