//! The `system` vector kind: two NICs, A and B, each with its own host
//! (tables, memory, root complex, WQEs and doorbells), joined by a link
//! with a delay per direction and an optional CE-marking rule
//! (docs/pair.md).
//!
//! A host is written with the fields of a single-NIC `rnic_top` vector
//! (`config`, `root_complex`, `memory`, `mac`, `qps`, `mrs`, `cqs`, `wqes`,
//! `doorbells`, `cc`, `min_cycles`) and is validated by the same code: it
//! becomes an `rnic_top` [`Vector`] of its own, and every error names the
//! host (`a.qps[0].mtu: ...`).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fabric::FabricVector;
use super::link_fault::{self, LinkFault};
use super::{field_err, limits, valid_name, Expect, Vector, VectorError, FORMAT};

/// The value of `kind` that makes a vector a system vector.
pub const KIND: &str = "system";

/// The fields a host may have: those of an `rnic_top` vector that describe
/// the host and its NIC. `rx` and `peer` are the link's job here.
pub const HOST_FIELDS: &[&str] = &[
    "config",
    "root_complex",
    "memory",
    "mac",
    "qps",
    "mrs",
    "cqs",
    "wqes",
    "doorbells",
    "recvs",
    "rq_doorbells",
    "program",
    "cc",
    "min_cycles",
];

/// Largest link delay, cycles.
pub const MAX_DELAY: u64 = 1_000_000;

/// One direction of the link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct LinkDir {
    /// Cycles from the cycle after a frame's last beat on the sender's
    /// `tx_*` to the earliest cycle of its first beat on the receiver's
    /// `rx_*` (store and forward; 0 = the next cycle).
    pub delay: u64,
    /// Mark every `ce_every`-th ECT frame (IP ECN 01 or 10) CE (11),
    /// counting from 1; 0 marks none.
    #[serde(skip_serializing_if = "is_zero")]
    pub ce_every: u64,
    /// Faults the link applies to this direction's frames
    /// ([`super::link_fault`], docs/pair.md "Link faults").
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<LinkFault>,
}

impl LinkDir {
    /// Whether the direction has any fault.
    pub fn faulty(&self) -> bool {
        !self.faults.is_empty()
    }
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct LinkSpec {
    pub a_to_b: LinkDir,
    pub b_to_a: LinkDir,
}

/// The blessed results of a system vector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SystemExpect {
    /// Cycles until both NICs were done.
    pub cycles: u64,
    /// Per NIC: `cycles` is the cycle its readback ended; frames are those it
    /// sent, CQEs those in its host's memory, counters its own.
    pub a: Expect,
    pub b: Expect,
}

/// The whole file as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SystemFile {
    format: u32,
    kind: String,
    name: String,
    description: String,
    checked_against: String,
    a: serde_json::Map<String, Value>,
    b: serde_json::Map<String, Value>,
    #[serde(default)]
    link: LinkSpec,
    max_cycles: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expect: Option<SystemExpect>,
}

/// A validated system vector.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemVector {
    pub name: String,
    pub description: String,
    pub checked_against: String,
    /// Each host as an `rnic_top` vector (name `<name>.a` / `<name>.b`,
    /// no `rx`, no `peer`, no `expect`).
    pub a: Vector,
    pub b: Vector,
    pub link: LinkSpec,
    pub max_cycles: u64,
    pub expect: Option<SystemExpect>,
    /// The hosts as written, for [`SystemVector::to_json`].
    raw: (
        serde_json::Map<String, Value>,
        serde_json::Map<String, Value>,
    ),
}

/// Whether parsed vector JSON is a system vector (has `"kind": "system"`).
pub fn is_system(json: &Value) -> bool {
    json.get("kind").and_then(Value::as_str) == Some(KIND)
}

impl SystemVector {
    /// Parses and validates the JSON of a system vector; `file` is only
    /// used in errors.
    pub fn from_json(file: &Path, json: Value) -> Result<SystemVector, VectorError> {
        link_fault::check_shape(json.get("link")).map_err(|(p, r)| field_err(file, p, r))?;
        let f: SystemFile = deserialize(file, &json)?;
        check_head(file, f.format, &f.kind, KIND, &f.name, f.max_cycles)?;
        let e = |p: &str, r: String| Err(field_err(file, p, r));
        for (dir, d) in [("a_to_b", &f.link.a_to_b), ("b_to_a", &f.link.b_to_a)] {
            if d.delay > MAX_DELAY {
                return e(
                    &format!("link.{dir}.delay"),
                    format!("{} is not in 0..={MAX_DELAY}", d.delay),
                );
            }
            if let Err((p, r)) = link_fault::validate(&d.faults) {
                return e(&format!("link.{dir}.{p}"), r);
            }
        }
        let about = HostAbout {
            name: &f.name,
            description: &f.description,
            checked_against: &f.checked_against,
            max_cycles: f.max_cycles,
        };
        let host =
            |who: &str, m: &serde_json::Map<String, Value>| host_vector(file, &about, who, who, m);
        let a = host("a", &f.a)?;
        let b = host("b", &f.b)?;
        Ok(SystemVector {
            name: f.name,
            description: f.description,
            checked_against: f.checked_against,
            a,
            b,
            link: f.link,
            max_cycles: f.max_cycles,
            expect: f.expect,
            raw: (f.a, f.b),
        })
    }

    /// Serializes the vector as pretty JSON (2-space indent, trailing
    /// newline), the hosts as they were written.
    pub fn to_json(&self) -> String {
        let f = SystemFile {
            format: FORMAT,
            kind: KIND.into(),
            name: self.name.clone(),
            description: self.description.clone(),
            checked_against: self.checked_against.clone(),
            a: self.raw.0.clone(),
            b: self.raw.1.clone(),
            link: self.link.clone(),
            max_cycles: self.max_cycles,
            expect: self.expect.clone(),
        };
        let mut s = serde_json::to_string_pretty(&f).expect("vector serializes");
        s.push('\n');
        s
    }
}

/// A multi-NIC vector file's fields, errors naming the field's path.
pub(super) fn deserialize<T: serde::de::DeserializeOwned>(
    file: &Path,
    json: &Value,
) -> Result<T, VectorError> {
    serde_path_to_error::deserialize(json).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." {
            "(top level)".to_string()
        } else {
            path
        };
        field_err(file, path, e.into_inner().to_string())
    })
}

/// The fields every multi-NIC vector kind checks the same way.
pub(super) fn check_head(
    file: &Path,
    format: u32,
    kind: &str,
    want: &str,
    name: &str,
    max_cycles: u64,
) -> Result<(), VectorError> {
    let e = |p: &str, r: String| Err(field_err(file, p, r));
    if format != FORMAT {
        return e(
            "format",
            format!("{format} is not a known format (this tool reads {FORMAT})"),
        );
    }
    if kind != want {
        return e(
            "kind",
            format!("{kind:?} is not a vector kind (\"{want}\")"),
        );
    }
    if !valid_name(name) {
        return e(
            "name",
            format!(
                "{name:?} is not a name: 1 to 100 of A-Z a-z 0-9 _ . -, not starting with a dot"
            ),
        );
    }
    if !(1..=limits::MAX_CYCLES).contains(&max_cycles) {
        return e(
            "max_cycles",
            format!("{max_cycles} is not in 1..={}", limits::MAX_CYCLES),
        );
    }
    Ok(())
}

/// What a host inherits from the vector it is part of.
pub(super) struct HostAbout<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub checked_against: &'a str,
    pub max_cycles: u64,
}

/// Host `who` as an `rnic_top` vector named `<vector>.<tag>`, validated
/// like one; errors are named under `who.`.
pub(super) fn host_vector(
    file: &Path,
    f: &HostAbout,
    who: &str,
    tag: &str,
    m: &serde_json::Map<String, Value>,
) -> Result<Vector, VectorError> {
    for k in m.keys() {
        if !HOST_FIELDS.contains(&k.as_str()) {
            let why = match k.as_str() {
                "rx" | "peer" => {
                    "the other NIC is the host's peer: frames reach rx_* over the link".to_string()
                }
                _ => format!("not a host field (a host takes {})", HOST_FIELDS.join(", ")),
            };
            return Err(field_err(file, format!("{who}.{k}"), why));
        }
    }
    let mut obj = m.clone();
    obj.insert("format".into(), FORMAT.into());
    obj.insert("name".into(), format!("{}.{tag}", f.name).into());
    obj.insert("description".into(), f.description.into());
    obj.insert("checked_against".into(), f.checked_against.into());
    obj.insert("top".into(), "rnic_top".into());
    obj.insert("max_cycles".into(), f.max_cycles.into());
    Vector::from_json(file, Value::Object(obj)).map_err(|e| match e {
        VectorError::Field { file, path, reason } => VectorError::Field {
            file,
            path: if path == "(top level)" {
                who.to_string()
            } else {
                format!("{who}.{path}")
            },
            reason,
        },
        other => other,
    })
}

/// A vector of either kind.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyVector {
    Single(Box<Vector>),
    System(Box<SystemVector>),
    Fabric(Box<FabricVector>),
}

impl AnyVector {
    /// Reads and validates a vector file of either kind (the limits of
    /// [`Vector::load`]); a system vector has `"kind": "system"`.
    pub fn load(file: &Path) -> Result<AnyVector, VectorError> {
        let text = super::read_text(file)?;
        Self::parse(file, &text)
    }

    pub fn parse(file: &Path, text: &str) -> Result<AnyVector, VectorError> {
        let json: Value = serde_json::from_str(text)
            .map_err(|e| field_err(file, "(top level)", format!("not valid JSON: {e}")))?;
        if super::fabric::is_fabric(&json) {
            FabricVector::from_json(file, json).map(|v| AnyVector::Fabric(Box::new(v)))
        } else if is_system(&json) {
            SystemVector::from_json(file, json).map(|v| AnyVector::System(Box::new(v)))
        } else {
            Vector::from_json(file, json).map(|v| AnyVector::Single(Box::new(v)))
        }
    }

    pub fn name(&self) -> &str {
        match self {
            AnyVector::Single(v) => &v.name,
            AnyVector::System(v) => &v.name,
            AnyVector::Fabric(v) => &v.name,
        }
    }

    pub fn max_cycles(&self) -> u64 {
        match self {
            AnyVector::Single(v) => v.max_cycles,
            AnyVector::System(v) => v.max_cycles,
            AnyVector::Fabric(v) => v.max_cycles,
        }
    }

    /// `dma_rd`, `dma_wr`, `rnic_top`, `system` or `fabric`.
    pub fn top_name(&self) -> &'static str {
        match self {
            AnyVector::Single(v) => v.top.name(),
            AnyVector::System(_) => KIND,
            AnyVector::Fabric(_) => super::fabric::KIND,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(qp_extra: &str) -> String {
        format!(
            r#"{{"memory":[{{"addr":"0x100000","len":4096,"seed":1}}],
            "qps":[{{"qp":0,"type":"uc","remote_qpn":0,"psn":0,"mtu":256,"pd":1,"cq":0,
              "dst_mac":"02:00:00:00:00:01","src_mac":"02:00:00:00:00:02",
              "ip":{{"ipv4":{{"src":"10.0.0.1","dst":"10.0.0.2"}}}},
              "sq":{{"base":"0x10000000","log_size":4}}{qp_extra}}}],
            "cqs":[{{"cq":0,"ring":{{"base":"0x20000000","log_size":4}}}}]}}"#
        )
    }

    fn text(a: &str, b: &str, link: &str) -> String {
        format!(
            r#"{{"format":1,"kind":"system","name":"p","description":"d","checked_against":"c",
            "a":{a},"b":{b},"link":{link},"max_cycles":1000}}"#
        )
    }

    fn err(t: &str) -> String {
        AnyVector::parse(Path::new("v.json"), t)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_system_vector_parses_and_round_trips() {
        let t = text(
            &host(""),
            &host(""),
            r#"{"a_to_b":{"delay":300,"ce_every":2}}"#,
        );
        let AnyVector::System(v) = AnyVector::parse(Path::new("v.json"), &t).unwrap() else {
            panic!("not a system vector")
        };
        assert_eq!(v.link.a_to_b.delay, 300);
        assert_eq!(v.link.a_to_b.ce_every, 2);
        assert_eq!(v.a.qps.len(), 1);
        assert_eq!(v.a.name, "p.a");
        let again = AnyVector::parse(Path::new("v.json"), &v.to_json()).unwrap();
        assert_eq!(again, AnyVector::System(v));
    }

    #[test]
    fn host_errors_name_the_host() {
        let bad = host("").replace(r#""mtu":256"#, r#""mtu":100"#);
        let t = text(&host(""), &bad, "{}");
        assert!(err(&t).starts_with("v.json: b.qps[0].mtu: "), "{}", err(&t));
        let t = text(&host(""), r#"{"rx":[]}"#, "{}");
        assert!(err(&t).starts_with("v.json: b.rx: "), "{}", err(&t));
        let t = text(&host(""), &host(""), r#"{"a_to_b":{"delai":3}}"#);
        assert!(
            err(&t).starts_with("v.json: link.a_to_b.delai: unknown field `delai`"),
            "{}",
            err(&t)
        );
        let t = text(&host(""), &host(""), r#"{"b_to_a":{"delay":2000000}}"#);
        assert!(
            err(&t).starts_with("v.json: link.b_to_a.delay: 2000000 is not in"),
            "{}",
            err(&t)
        );
    }

    #[test]
    fn link_fault_errors_name_file_direction_and_fault() {
        let t = |link: &str| text(&host(""), &host(""), link);
        assert_eq!(
            err(&t(r#"{"a_to_b":{"faults":[{"drop":{"index":1}},{"lose":{}}]}}"#)),
            "v.json: link.a_to_b.faults[1]: expected one of drop, burst, corrupt, duplicate, reorder or down, found `lose`"
        );
        assert_eq!(
            err(&t(
                r#"{"b_to_a":{"faults":[{"drop":{"per_million":2000000,"seed":1}}]}}"#
            )),
            "v.json: link.b_to_a.faults[0].drop.per_million: 2000000 is more than 1000000 (a probability in millionths)"
        );
        assert!(
            err(&t(
                r#"{"a_to_b":{"faults":[{"drop":{"index":1,"bogus":2}}]}}"#
            ))
            .starts_with("v.json: link.a_to_b.faults[0].drop.bogus: unknown field `bogus`"),
            "{}",
            err(&t(
                r#"{"a_to_b":{"faults":[{"drop":{"index":1,"bogus":2}}]}}"#
            ))
        );
        assert!(
            err(&t(
                r#"{"a_to_b":{"faults":[{"down":{"from":-1,"cycles":3}}]}}"#
            ))
            .starts_with("v.json: link.a_to_b.faults[0].down.from: "),
            "{}",
            err(&t(
                r#"{"a_to_b":{"faults":[{"down":{"from":-1,"cycles":3}}]}}"#
            ))
        );
        let ok = t(r#"{"a_to_b":{"delay":5,"faults":[{"reorder":{"opcode":10}}]}}"#);
        let AnyVector::System(v) = AnyVector::parse(Path::new("v.json"), &ok).unwrap() else {
            panic!("not a system vector")
        };
        assert_eq!(v.link.a_to_b.faults.len(), 1);
        let again = AnyVector::parse(Path::new("v.json"), &v.to_json()).unwrap();
        assert_eq!(again, AnyVector::System(v));
    }
}
