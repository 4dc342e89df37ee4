//! Test vector format v1: one JSON file per scenario.
//!
//! The DMA tops take `reads`/`writes`; `rnic_top` takes the QP, MR and CQ
//! tables, WQEs and doorbells of [`tx`].
//!
//! A vector names the top it drives, its configuration, the environment
//! (root complex latency, completion size, faults, back-pressure), initial
//! host memory, the client requests, how many cycles it may run, and the
//! blessed expected results (`expect`, written by `rnic bless`). Unknown
//! fields are errors, so a typo never silently changes a scenario. Every
//! error names the file, the field path and the reason.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thiserror::Error;

pub use crate::env::FaultKind;

pub mod fabric;
pub mod limits;
pub mod link_fault;
pub mod mmio;
pub mod paths;
pub mod qp_frame;
pub mod resp;
pub mod rx;
mod shape;
pub mod system;
pub mod tx;
pub use fabric::{FabricExpect, FabricVector};
pub use link_fault::{LinkFault, Select};
pub use paths::{collect, walk, CollectError, Found, Walk};
pub use resp::{RecvSpec, RqDoorbellSpec, SgeSpec, Step};
pub use rx::{CcSpec, PeerSpec, RxFault, RxFrame, RxSpec};
pub use system::{AnyVector, LinkDir, LinkSpec, SystemExpect, SystemVector};
pub use tx::*;

/// The current format number.
pub const FORMAT: u32 = 1;

#[derive(Debug, Error)]
pub enum VectorError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: PathBuf,
        source: std::io::Error,
    },
    #[error("{file}: {path}: {reason}")]
    Field {
        file: PathBuf,
        path: String,
        reason: String,
    },
}

/// A 64-bit number written as `"0x..."` (or a plain JSON number on input).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Hex(pub u64);

impl Serialize for Hex {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{:#x}", self.0))
    }
}

impl<'de> Deserialize<'de> for Hex {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Hex;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-negative integer or a \"0x...\" hex string")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Hex, E> {
                Ok(Hex(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Hex, E> {
                let t = v.trim();
                let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
                    None => t.replace('_', "").parse(),
                };
                r.map(Hex)
                    .map_err(|_| E::custom(format!("{v:?} is not a number")))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Top {
    DmaRd,
    DmaWr,
    RnicTop,
}

impl Top {
    pub fn name(self) -> &'static str {
        match self {
            Top::DmaRd => "dma_rd",
            Top::DmaWr => "dma_wr",
            Top::RnicTop => "rnic_top",
        }
    }
}

/// The DUT's configuration inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DutConfig {
    /// Max Read Request Size in bytes: 128, 256, ..., 4096.
    pub mrrs: u32,
    /// Max Payload Size in bytes: 128, 256, ..., 4096.
    pub mps: u32,
    pub requester_id: u16,
    /// Completion timeout in cycles (24 bits).
    pub cpl_timeout: u32,
    /// PFC generation (block PFCG, docs/pfc_gen.md); absent: the registers
    /// keep their reset values, generation off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc_gen: Option<PfcGenSpec>,
    /// Not the DUT's: the vector lets `rx_buf` drop frames, which the
    /// testbench cannot place in time (docs/pfc_gen.md, "Without PFC, and
    /// with too little headroom"): each frame's fate is inferred within
    /// bounds (`scenario/rnic_top/rx_drops.rs`) and the responder's
    /// effects are checked as those of the frames found stored.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rx_drops: bool,
}

/// Block PFCG as a vector sets it; a field left out takes the register's
/// reset value (docs/csr.md). Thresholds in 64-byte rx_buf lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcGenSpec {
    /// Bit p: generate PFC for priority p.
    pub enable: u8,
    pub xoff_lines: u16,
    pub xon_lines: u16,
    /// Pause time of XOFF frames, quanta of 512 bit times.
    pub pause_quanta: u16,
    pub refresh_cycles: u32,
    /// Source MAC of the PFC frames.
    pub src_mac: Mac,
}

impl Default for PfcGenSpec {
    fn default() -> Self {
        use rnic_model::csr_map as m;
        PfcGenSpec {
            enable: 0,
            xoff_lines: m::PFCG_RW_RESETS[1] as u16,
            xon_lines: m::PFCG_RW_RESETS[2] as u16,
            pause_quanta: m::PFCG_RW_RESETS[3] as u16,
            refresh_cycles: m::PFCG_RW_RESETS[4],
            src_mac: Mac::default(),
        }
    }
}

impl Default for DutConfig {
    fn default() -> Self {
        DutConfig {
            mrrs: 512,
            mps: 256,
            requester_id: 0x0100,
            cpl_timeout: 50_000,
            pfc_gen: None,
            rx_drops: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// Completions end at cpl_size-aligned addresses.
    Aligned,
    /// Completions end at random RCB-aligned addresses (seeded).
    Random,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    pub addr: Hex,
    pub len: u64,
    pub kind: FaultKind,
}

/// The root complex / host side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RootComplexSpec {
    /// Cycles from an MRd to its first completion.
    pub latency: u32,
    /// Read Completion Boundary, 64 or 128.
    pub rcb: u32,
    /// Largest completion payload, a multiple of rcb.
    pub cpl_size: u32,
    pub split: Split,
    /// Interleave completions of different tags in a seeded random order.
    pub reorder: bool,
    pub seed: u64,
    /// Percentage of cycles with rq_ready high (seeded), 1..=100.
    pub rq_ready_percent: u8,
    pub faults: Vec<FaultSpec>,
}

impl Default for RootComplexSpec {
    fn default() -> Self {
        RootComplexSpec {
            latency: 100,
            rcb: 64,
            cpl_size: 256,
            split: Split::Aligned,
            reorder: false,
            seed: 1,
            rq_ready_percent: 100,
            faults: Vec::new(),
        }
    }
}

/// The DMA clients' side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ClientSpec {
    /// Percentage of cycles with rd_data_ready high (seeded), 1..=100.
    pub rd_data_ready_percent: u8,
    /// Percentage of cycles a pending write offers its next data beat.
    pub wr_data_valid_percent: u8,
    pub seed: u64,
}

impl Default for ClientSpec {
    fn default() -> Self {
        ClientSpec {
            rd_data_ready_percent: 100,
            wr_data_valid_percent: 100,
            seed: 1,
        }
    }
}

/// Host memory filled with the seeded pattern of `HostMemory::fill_pattern`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemInit {
    pub addr: Hex,
    pub len: u64,
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadReq {
    /// Earliest cycle the request is offered.
    #[serde(default)]
    pub at: u64,
    #[serde(default)]
    pub client: u8,
    pub addr: Hex,
    /// Bytes, 1..=65536.
    pub len: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteReq {
    #[serde(default)]
    pub at: u64,
    #[serde(default)]
    pub client: u8,
    pub addr: Hex,
    /// Bytes, 1..=65536.
    pub len: u32,
    /// The data written is the seeded pattern of this seed.
    pub seed: u64,
}

/// Results of one read as the client saw them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadResult {
    /// ok, ur, ca, poisoned, timeout.
    pub status: String,
    /// FNV-1a 64 of the bytes returned.
    pub digest: Hex,
}

/// The blessed results, compared on every run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Cycles until the scenario completed.
    pub cycles: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<ReadResult>,
    /// FNV-1a 64 of host memory over each write's range after the run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<Hex>,
    /// Frames sent on `tx_*`, in order (rnic_top).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub frames: Vec<FrameResult>,
    /// CQEs in host memory at the end, per CQ in ring order (rnic_top).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cqes: Vec<CqeResult>,
    /// DUT counters at the end (name -> value).
    #[serde(default)]
    pub counters: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vector {
    pub format: u32,
    pub name: String,
    /// What the scenario tests.
    pub description: String,
    /// What the expected results were checked against before blessing.
    pub checked_against: String,
    pub top: Top,
    #[serde(default)]
    pub config: DutConfig,
    #[serde(default)]
    pub root_complex: RootComplexSpec,
    #[serde(default)]
    pub client: ClientSpec,
    #[serde(default)]
    pub memory: Vec<MemInit>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<ReadReq>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<WriteReq>,
    #[serde(default, skip_serializing_if = "is_default_mac")]
    pub mac: MacSpec,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub qps: Vec<QpSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mrs: Vec<MrSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cqs: Vec<CqSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wqes: Vec<WqeSpec>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub doorbells: Vec<DoorbellSpec>,
    /// RECV WQEs in posting order per QP (rnic_top).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recvs: Vec<RecvSpec>,
    /// Timed RQ doorbells, like `doorbells` (rnic_top).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rq_doorbells: Vec<RqDoorbellSpec>,
    /// The host's verbs program: steps in order after configuration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub program: Vec<Step>,
    /// Frames the peer sends on `rx_*` (rnic_top).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rx: Vec<RxSpec>,
    /// Congestion-control parameters (rnic_top; defaults: docs/rx_cc.md).
    #[serde(default, skip_serializing_if = "is_default_cc")]
    pub cc: CcSpec,
    /// The far end of the link (rnic_top).
    #[serde(default, skip_serializing_if = "is_default_peer")]
    pub peer: PeerSpec,
    /// Keep running until at least this many cycles after configuration,
    /// even when nothing is left to send (rnic_top: to watch timers, e.g.
    /// DCQCN recovery of an idle QP).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_cycles: u64,
    /// The run fails if the scenario is not complete by then.
    pub max_cycles: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

fn field_err(file: &Path, path: impl Into<String>, reason: impl Into<String>) -> VectorError {
    VectorError::Field {
        file: file.to_path_buf(),
        path: path.into(),
        reason: reason.into(),
    }
}

/// The text of a vector file: a regular file of at most
/// [`limits::MAX_FILE_BYTES`].
pub(crate) fn read_text(file: &Path) -> Result<String, VectorError> {
    use std::io::Read;
    let io = |source| VectorError::Io {
        file: file.to_path_buf(),
        source,
    };
    let f = std::fs::File::open(file).map_err(io)?;
    let meta = f.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(field_err(
            file,
            "(file)",
            "is not a regular file (a vector is a JSON file)",
        ));
    }
    let mut text = String::new();
    f.take(limits::MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io)?;
    if text.len() as u64 > limits::MAX_FILE_BYTES {
        return Err(field_err(
            file,
            "(file)",
            format!(
                "larger than the {} MiB a vector may be",
                limits::MAX_FILE_BYTES >> 20
            ),
        ));
    }
    Ok(text)
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_default_peer(p: &PeerSpec) -> bool {
    *p == PeerSpec::default()
}

fn is_default_cc(c: &CcSpec) -> bool {
    *c == CcSpec::default()
}

fn is_default_mac(m: &MacSpec) -> bool {
    *m == MacSpec::default()
}

/// A vector's name: short, and safe wherever it is shown.
fn valid_name(n: &str) -> bool {
    (1..=100).contains(&n.len())
        && !n.starts_with('.')
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

fn pow2_in(v: u32, lo: u32, hi: u32) -> bool {
    v.is_power_of_two() && (lo..=hi).contains(&v)
}

impl Vector {
    /// Reads and validates a vector file: a regular file of at most
    /// [`limits::MAX_FILE_BYTES`].
    pub fn load(file: &Path) -> Result<Vector, VectorError> {
        Self::parse(file, &read_text(file)?)
    }

    /// Parses and validates vector text; `file` is only used in errors.
    pub fn parse(file: &Path, text: &str) -> Result<Vector, VectorError> {
        let json: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| field_err(file, "(top level)", format!("not valid JSON: {e}")))?;
        Self::from_json(file, json)
    }

    /// Validates parsed vector JSON; `file` is only used in errors.
    pub fn from_json(file: &Path, json: serde_json::Value) -> Result<Vector, VectorError> {
        shape::check(&json).map_err(|(path, reason)| field_err(file, path, reason))?;
        let v: Vector = serde_path_to_error::deserialize(&json).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let path = if path == "." {
                "(top level)".to_string()
            } else {
                path
            };
            field_err(file, path, inner.to_string())
        })?;
        v.validate(file)?;
        Ok(v)
    }

    fn validate(&self, file: &Path) -> Result<(), VectorError> {
        let e = |p: &str, r: String| Err(field_err(file, p, r));
        if self.format != FORMAT {
            return e(
                "format",
                format!(
                    "{} is not a known format (this tool reads {FORMAT})",
                    self.format
                ),
            );
        }
        if self.description.trim().is_empty() {
            return e("description", "must say what the vector tests".into());
        }
        if self.checked_against.trim().is_empty() {
            return e(
                "checked_against",
                "must say what the results were checked against".into(),
            );
        }
        if !valid_name(&self.name) {
            return e(
                "name",
                format!(
                    "{:?} is not a name: 1 to 100 of A-Z a-z 0-9 _ . -, not starting with a dot",
                    self.name
                ),
            );
        }
        if !(1..=limits::MAX_CYCLES).contains(&self.max_cycles) {
            return e(
                "max_cycles",
                format!("{} is not in 1..={}", self.max_cycles, limits::MAX_CYCLES),
            );
        }
        if self.min_cycles > self.max_cycles {
            return e(
                "min_cycles",
                format!(
                    "{} is past the run's limit (max_cycles = {})",
                    self.min_cycles, self.max_cycles
                ),
            );
        }
        let c = &self.config;
        if !pow2_in(c.mrrs, 128, 4096) {
            return e(
                "config.mrrs",
                format!("{} is not a power of two in 128..=4096", c.mrrs),
            );
        }
        if !pow2_in(c.mps, 128, 4096) {
            return e(
                "config.mps",
                format!("{} is not a power of two in 128..=4096", c.mps),
            );
        }
        if !(1..1 << 24).contains(&c.cpl_timeout) {
            return e(
                "config.cpl_timeout",
                format!(
                    "{} is not in 1..=16777215 (24 bits; 0 would time out every read at once)",
                    c.cpl_timeout
                ),
            );
        }
        if let Some(g) = &c.pfc_gen {
            if g.xoff_lines > 512 || g.xon_lines > g.xoff_lines {
                return e(
                    "config.pfc_gen",
                    format!(
                        "xoff_lines {} and xon_lines {} must keep xon <= xoff <= 512 (rx_buf's lines)",
                        g.xoff_lines, g.xon_lines
                    ),
                );
            }
            if g.refresh_cycles >= 1 << 24 {
                return e(
                    "config.pfc_gen.refresh_cycles",
                    format!("{} does not fit in 24 bits", g.refresh_cycles),
                );
            }
        }
        let rc = &self.root_complex;
        if rc.rcb != 64 && rc.rcb != 128 {
            return e("root_complex.rcb", format!("{} is not 64 or 128", rc.rcb));
        }
        if !(64..=4096).contains(&rc.cpl_size) || !rc.cpl_size.is_multiple_of(rc.rcb) {
            return e(
                "root_complex.cpl_size",
                format!(
                    "{} is not a multiple of rcb ({}) in 64..=4096",
                    rc.cpl_size, rc.rcb
                ),
            );
        }
        if !(1..=100).contains(&rc.rq_ready_percent) {
            return e(
                "root_complex.rq_ready_percent",
                format!("{} is not in 1..=100", rc.rq_ready_percent),
            );
        }
        for (k, f) in rc.faults.iter().enumerate() {
            if f.len == 0 || f.addr.0.checked_add(f.len).is_none() {
                return e(
                    &format!("root_complex.faults[{k}].len"),
                    format!("{} is empty or wraps", f.len),
                );
            }
        }
        let cl = &self.client;
        if !(1..=100).contains(&cl.rd_data_ready_percent) {
            return e(
                "client.rd_data_ready_percent",
                format!("{} is not in 1..=100", cl.rd_data_ready_percent),
            );
        }
        if !(1..=100).contains(&cl.wr_data_valid_percent) {
            return e(
                "client.wr_data_valid_percent",
                format!("{} is not in 1..=100", cl.wr_data_valid_percent),
            );
        }
        let mut total = 0u64;
        for (k, m) in self.memory.iter().enumerate() {
            if m.addr.0.checked_add(m.len).is_none() {
                return e(&format!("memory[{k}].len"), "range wraps past 2^64".into());
            }
            total = total.saturating_add(m.len);
            if total > limits::MAX_MEMORY_BYTES {
                return e(
                    &format!("memory[{k}].len"),
                    format!(
                        "{} bytes: the regions add up to more than the {} MiB of host memory a vector may fill",
                        m.len,
                        limits::MAX_MEMORY_BYTES >> 20
                    ),
                );
            }
        }
        let check_req = |what: &str, k: usize, client: u8, addr: u64, len: u32, at: u64| {
            if at > self.max_cycles {
                return e(
                    &format!("{what}[{k}].at"),
                    format!(
                        "{at} is past the run's limit (max_cycles = {})",
                        self.max_cycles
                    ),
                );
            }
            if client > 3 {
                return e(
                    &format!("{what}[{k}].client"),
                    format!("{client} is not a client id 0..=3"),
                );
            }
            if !(1..=65536).contains(&len) {
                return e(
                    &format!("{what}[{k}].len"),
                    format!("{len} is not in 1..=65536"),
                );
            }
            if addr.checked_add(len as u64).is_none() {
                return e(&format!("{what}[{k}].addr"), "range wraps past 2^64".into());
            }
            Ok(())
        };
        for (k, r) in self.reads.iter().enumerate() {
            check_req("reads", k, r.client, r.addr.0, r.len, r.at)?;
        }
        for (k, w) in self.writes.iter().enumerate() {
            check_req("writes", k, w.client, w.addr.0, w.len, w.at)?;
        }
        match self.top {
            Top::DmaRd if !self.writes.is_empty() => {
                return e("writes", "dma_rd takes no writes".into())
            }
            Top::DmaWr if !self.reads.is_empty() => {
                return e("reads", "dma_wr takes no reads".into())
            }
            Top::RnicTop => self.validate_tx(file)?,
            _ => {}
        }
        if self.top != Top::RnicTop {
            if !self.qps.is_empty()
                || !self.wqes.is_empty()
                || !self.doorbells.is_empty()
                || !self.rx.is_empty()
                || !self.recvs.is_empty()
                || !self.rq_doorbells.is_empty()
                || !self.program.is_empty()
            {
                return e("qps", "only rnic_top takes QPs, WQEs and doorbells".into());
            }
            if self.reads.is_empty() && self.writes.is_empty() {
                return e("reads", "the vector has no requests".into());
            }
        }
        if let Some(x) = &self.expect {
            if !x.reads.is_empty() && x.reads.len() != self.reads.len() {
                return e(
                    "expect.reads",
                    format!("{} results for {} reads", x.reads.len(), self.reads.len()),
                );
            }
            if !x.writes.is_empty() && x.writes.len() != self.writes.len() {
                return e(
                    "expect.writes",
                    format!(
                        "{} results for {} writes",
                        x.writes.len(),
                        self.writes.len()
                    ),
                );
            }
        }
        Ok(())
    }

    /// Serializes the vector as pretty JSON (2-space indent, trailing newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("vector serializes");
        s.push('\n');
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: &str = r#"{"format":1,"name":"t","description":"d","checked_against":"c",
        "top":"dma_rd","reads":[{"addr":"0x1000","len":4}],"max_cycles":100}"#;

    fn err(text: &str) -> String {
        Vector::parse(Path::new("v.json"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn minimal_vector_parses_with_defaults() {
        let v = Vector::parse(Path::new("v.json"), MIN).unwrap();
        assert_eq!(v.reads[0].addr, Hex(0x1000));
        assert_eq!(v.config.mrrs, 512);
        let again = Vector::parse(Path::new("v.json"), &v.to_json()).unwrap();
        assert_eq!(again, v);
    }

    #[test]
    fn errors_name_file_field_and_reason() {
        let t = MIN.replace(r#""len":4"#, r#""len":0"#);
        assert_eq!(err(&t), "v.json: reads[0].len: 0 is not in 1..=65536");
        let t = MIN.replace(
            r#""top":"dma_rd""#,
            r#""top":"dma_rd","config":{"mrrs":100}"#,
        );
        assert_eq!(
            err(&t),
            "v.json: config.mrrs: 100 is not a power of two in 128..=4096"
        );
        let t = MIN.replace(r#""addr":"0x1000""#, r#""addr":"0xZZ""#);
        assert!(
            err(&t).starts_with("v.json: reads[0].addr: \"0xZZ\" is not a number"),
            "{}",
            err(&t)
        );
        let t = MIN.replace(r#""max_cycles":100"#, r#""max_cycles":100,"maxcycles":3"#);
        assert!(err(&t).contains("unknown field `maxcycles`"), "{}", err(&t));
    }
}
