//! Link faults of a `system` vector (docs/pair.md, "Link faults"): per
//! direction, a list of faults the link applies to the frames of that
//! direction, deterministic (seeded where random).
//!
//! ```json
//! "a_to_b": {"delay": 200, "faults": [
//!     {"drop": {"index": 5}},
//!     {"drop": {"qp": 1, "psn": 107}},
//!     {"drop": {"opcode": 7, "first": 1}},
//!     {"drop": {"per_million": 1000, "seed": 7}},
//!     {"burst": {"index": 10, "count": 4}},
//!     {"corrupt": {"index": 9, "byte": 60}},
//!     {"duplicate": {"index": 3}},
//!     {"reorder": {"index": 4}},
//!     {"down": {"from": 5000, "cycles": 800}}]}
//! ```
//!
//! Every kind but `down` picks frames with one selector ([`Select`]); what
//! a selector picks is defined here ([`Picker`]), once, for the link and
//! for the check that judges it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{limits, shape};

/// The fault kinds, as written.
pub const KINDS: &[&str] = &["drop", "burst", "corrupt", "duplicate", "reorder", "down"];

/// One fault of a direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkFault {
    /// The selected frames are lost.
    Drop(Select),
    /// Each selected frame starts a burst: it and the `count - 1` frames
    /// after it are lost (a frame inside a burst starts no new one).
    Burst(Select),
    /// The selected frames arrive with byte `byte` inverted (XOR 0xFF).
    Corrupt(Select),
    /// The selected frames arrive twice, back to back.
    Duplicate(Select),
    /// The selected frames are held and arrive right after the next frame
    /// of the direction.
    Reorder(Select),
    /// Every frame on the wire in cycles `from..from + cycles` is lost.
    Down(Down),
}

impl LinkFault {
    pub fn kind(&self) -> &'static str {
        match self {
            LinkFault::Drop(_) => "drop",
            LinkFault::Burst(_) => "burst",
            LinkFault::Corrupt(_) => "corrupt",
            LinkFault::Duplicate(_) => "duplicate",
            LinkFault::Reorder(_) => "reorder",
            LinkFault::Down(_) => "down",
        }
    }

    pub fn select(&self) -> Option<&Select> {
        match self {
            LinkFault::Drop(s)
            | LinkFault::Burst(s)
            | LinkFault::Corrupt(s)
            | LinkFault::Duplicate(s)
            | LinkFault::Reorder(s) => Some(s),
            LinkFault::Down(_) => None,
        }
    }
}

/// Which frames of the direction a fault picks: exactly one of
/// - `index`: the frame with that index (0 = the first frame sent in that
///   direction);
/// - `qp` and `psn`: every frame whose BTH has that DestQP and PSN (with
///   `first`: only the first `first` of them, e.g. a first send and
///   `first` - 1 resends of one PSN);
/// - `opcode` (with `first`: only the first `first` frames of it): every
///   frame with that BTH opcode;
/// - `per_million` with `seed`: each frame with that probability, drawn
///   from a SplitMix64 seeded with `seed`, one draw per frame sent in the
///   direction whatever happens to it.
///
/// `byte` (corrupt) and `count` (burst) go with their kind only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Select {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qp: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub psn: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opcode: Option<u8>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_million: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// corrupt: offset of the byte inverted, in the frame as the link
    /// carries it (after the MAC's padding to 60 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byte: Option<u32>,
    /// burst: frames lost per burst.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
}

/// The link is down in cycles `from..from + cycles` (simulation cycles
/// from reset, as the pcap timestamps count them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Down {
    pub from: u64,
    pub cycles: u64,
}

/// Largest burst.
pub const MAX_BURST: u64 = 1_000_000;
/// Largest byte offset of a corrupt fault (a frame is at most 9600 bytes:
/// an offset past the frame is a run failure, not a format error).
pub const MAX_BYTE: u32 = 65535;
/// Faults per direction.
pub const MAX_FAULTS: usize = 1000;
const PSN_MAX: u32 = (1 << 24) - 1;

impl Select {
    /// A short description for logs and pcap comments: `index 5`,
    /// `qp 1 psn 107`, `opcode 0x07 first 1`, `per_million 1000 seed 7`.
    pub fn describe(&self) -> String {
        if let Some(i) = self.index {
            format!("index {i}")
        } else if let (Some(q), Some(p)) = (self.qp, self.psn) {
            match self.first {
                Some(n) => format!("qp {q} psn {p} first {n}"),
                None => format!("qp {q} psn {p}"),
            }
        } else if let Some(o) = self.opcode {
            match self.first {
                Some(n) => format!("opcode {o:#04x} first {n}"),
                None => format!("opcode {o:#04x}"),
            }
        } else if let Some(p) = self.per_million {
            format!("per_million {p} seed {}", self.seed.unwrap_or(0))
        } else {
            "nothing".into()
        }
    }

    /// Whether the selector is deterministic (not `per_million`): one
    /// that selects no frame in a run makes the run fail (it tests
    /// nothing, most likely a mistake in the vector).
    pub fn must_hit(&self) -> bool {
        self.per_million.is_none()
    }
}

/// Shape check on the JSON, before it is typed: each fault is an object
/// with exactly one key of [`KINDS`]. `(field path, reason)`.
pub fn check_shape(link: Option<&Value>) -> Result<(), (String, String)> {
    let Some(link) = link.and_then(Value::as_object) else {
        return Ok(());
    };
    for dir in ["a_to_b", "b_to_a"] {
        let Some(faults) = link
            .get(dir)
            .and_then(|d| d.get("faults"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for (k, f) in faults.iter().enumerate() {
            shape::one_of(f, KINDS, &[]).map_err(|r| (format!("link.{dir}.faults[{k}]"), r))?;
        }
    }
    Ok(())
}

/// Validates the faults of one direction: `(field path under the
/// direction, reason)` of the first bad one.
pub fn validate(faults: &[LinkFault]) -> Result<(), (String, String)> {
    if faults.len() > MAX_FAULTS {
        return Err((
            "faults".into(),
            format!("{} faults, at most {MAX_FAULTS}", faults.len()),
        ));
    }
    for (k, f) in faults.iter().enumerate() {
        let at = |field: &str| {
            if field.is_empty() {
                format!("faults[{k}].{}", f.kind())
            } else {
                format!("faults[{k}].{}.{field}", f.kind())
            }
        };
        match f {
            LinkFault::Down(d) => {
                if !(1..=limits::MAX_CYCLES).contains(&d.cycles) {
                    return Err((
                        at("cycles"),
                        format!("{} is not in 1..={}", d.cycles, limits::MAX_CYCLES),
                    ));
                }
                if d.from > limits::MAX_CYCLES {
                    return Err((
                        at("from"),
                        format!("{} is not in 0..={}", d.from, limits::MAX_CYCLES),
                    ));
                }
            }
            _ => {
                let s = f.select().expect("a selecting fault");
                check_select(f.kind(), s).map_err(|(field, r)| (at(field), r))?;
            }
        }
    }
    Ok(())
}

/// `(field, reason)`; field "" names the selector object.
fn check_select(kind: &str, s: &Select) -> Result<(), (&'static str, String)> {
    let mut found = Vec::new();
    if s.index.is_some() {
        found.push("index");
    }
    if s.qp.is_some() || s.psn.is_some() {
        found.push("qp and psn");
    }
    if s.opcode.is_some() {
        found.push("opcode");
    }
    if s.per_million.is_some() {
        found.push("per_million");
    }
    match found.len() {
        0 => {
            return Err((
                "",
                "selects no frame: give one of index, qp and psn, opcode, per_million".into(),
            ))
        }
        1 => {}
        _ => {
            return Err((
                "",
                format!("give one selector, found {}", found.join(" and ")),
            ))
        }
    }
    match (s.qp, s.psn) {
        (Some(_), None) => {
            return Err((
                "qp",
                "needs psn: a frame is selected by its BTH DestQP and PSN".into(),
            ))
        }
        (None, Some(_)) => {
            return Err((
                "psn",
                "needs qp: a frame is selected by its BTH DestQP and PSN".into(),
            ))
        }
        (Some(q), Some(p)) => {
            if q > PSN_MAX {
                return Err(("qp", format!("{q} is not in 0..={PSN_MAX}")));
            }
            if p > PSN_MAX {
                return Err(("psn", format!("{p} is not in 0..={PSN_MAX}")));
            }
        }
        (None, None) => {}
    }
    if let Some(n) = s.first {
        if s.opcode.is_none() && s.qp.is_none() {
            return Err(("first", "goes with opcode or qp and psn only".into()));
        }
        if n == 0 {
            return Err((
                "first",
                "0 selects nothing (omit it for every frame selected)".into(),
            ));
        }
    }
    if let Some(p) = s.per_million {
        if p > 1_000_000 {
            return Err((
                "per_million",
                format!("{p} is more than 1000000 (a probability in millionths)"),
            ));
        }
    } else if s.seed.is_some() {
        return Err(("seed", "goes with per_million only".into()));
    }
    match (kind, s.byte) {
        ("corrupt", None) => {
            return Err((
                "byte",
                "missing: the offset of the byte corrupt inverts".into(),
            ))
        }
        ("corrupt", Some(b)) if b > MAX_BYTE => {
            return Err(("byte", format!("{b} is not in 0..={MAX_BYTE}")))
        }
        ("corrupt", _) | (_, None) => {}
        (_, Some(_)) => return Err(("byte", "goes with corrupt only".into())),
    }
    match (kind, s.count) {
        ("burst", None) => {
            return Err((
                "count",
                "missing: the frames each burst drops (1 or more)".into(),
            ))
        }
        ("burst", Some(n)) if !(1..=MAX_BURST).contains(&n) => {
            return Err(("count", format!("{n} is not in 1..={MAX_BURST}")))
        }
        ("burst", _) | (_, None) => {}
        (_, Some(_)) => return Err(("count", "goes with burst only".into())),
    }
    Ok(())
}

/// The BTH fields a selector looks at: (DestQP, PSN, opcode) of a RoCE
/// frame (Ethernet, optional 802.1Q tag, IPv4 or IPv6, UDP to 4791), read
/// from the bytes without any other check; None for any other frame.
pub fn bth_of(f: &[u8]) -> Option<(u32, u32, u8)> {
    let (ip, et) = if f.get(12..14)? == [0x81, 0x00] {
        (18, f.get(16..18)?)
    } else {
        (14, f.get(12..14)?)
    };
    let udp = match et {
        [0x08, 0x00] => ip + 4 * (*f.get(ip)? as usize & 0xF),
        [0x86, 0xDD] => ip + 40,
        _ => return None,
    };
    if f.get(udp + 2..udp + 4)? != 4791u16.to_be_bytes() {
        return None;
    }
    let b = f.get(udp + 8..udp + 20)?;
    let qp = u32::from_be_bytes([0, b[5], b[6], b[7]]);
    let psn = u32::from_be_bytes([0, b[9], b[10], b[11]]);
    Some((qp, psn, b[0]))
}

/// What one selector picks, frame after frame, in the order the frames
/// were sent in the direction. Both the link and the check that judges it
/// walk the frames through one [`Picker`] per fault.
#[derive(Debug, Clone)]
pub struct Picker {
    sel: Select,
    rng: crate::env::SplitMix64,
    /// Frames matching the opcode or the QP and PSN so far (for `first`).
    matched: u64,
}

impl Picker {
    pub fn new(sel: &Select) -> Self {
        Picker {
            sel: sel.clone(),
            rng: crate::env::SplitMix64::new(sel.seed.unwrap_or(0)),
            matched: 0,
        }
    }

    /// Whether frame `k` (its bytes `f` as sent) is selected. Call once
    /// per frame, in order.
    pub fn pick(&mut self, k: u64, f: &[u8]) -> bool {
        let s = &self.sel;
        if let Some(i) = s.index {
            return k == i;
        }
        let hit = if let (Some(q), Some(p)) = (s.qp, s.psn) {
            bth_of(f).is_some_and(|(fq, fp, _)| fq == q && fp == p)
        } else if let Some(o) = s.opcode {
            bth_of(f).is_some_and(|(_, _, fo)| fo == o)
        } else {
            false
        };
        if s.qp.is_some() || s.opcode.is_some() {
            if hit {
                self.matched += 1;
            }
            return hit && s.first.is_none_or(|n| self.matched <= n);
        }
        if let Some(p) = s.per_million {
            return self.rng.below(1_000_000) < p as u64;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(json: &str) -> Result<Vec<LinkFault>, String> {
        let v: Value = serde_json::from_str(json).unwrap();
        let f: Vec<LinkFault> = serde_json::from_value(v).map_err(|e| e.to_string())?;
        validate(&f).map_err(|(p, r)| format!("{p}: {r}"))?;
        Ok(f)
    }

    #[test]
    fn every_kind_parses_and_round_trips() {
        let t = r#"[{"drop":{"index":5}},{"drop":{"qp":1,"psn":107}},
            {"drop":{"opcode":7,"first":1}},{"drop":{"per_million":1000,"seed":7}},
            {"burst":{"index":10,"count":4}},{"burst":{"per_million":5,"seed":1,"count":3}},
            {"corrupt":{"index":9,"byte":60}},{"duplicate":{"index":3}},
            {"reorder":{"index":4}},{"down":{"from":5000,"cycles":800}}]"#;
        let f = faults(t).unwrap();
        assert_eq!(f.len(), 10);
        let back: Vec<LinkFault> =
            serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }

    #[test]
    fn bad_faults_say_which_field_and_why() {
        let e = |t: &str| faults(t).unwrap_err();
        assert_eq!(
            e(r#"[{"drop":{}}]"#),
            "faults[0].drop: selects no frame: give one of index, qp and psn, opcode, per_million"
        );
        assert_eq!(
            e(r#"[{"drop":{"index":1,"opcode":4}}]"#),
            "faults[0].drop: give one selector, found index and opcode"
        );
        assert_eq!(
            e(r#"[{"drop":{"qp":1}}]"#),
            "faults[0].drop.qp: needs psn: a frame is selected by its BTH DestQP and PSN"
        );
        assert_eq!(
            e(r#"[{"drop":{"index":1}},{"drop":{"per_million":1000001,"seed":1}}]"#),
            "faults[1].drop.per_million: 1000001 is more than 1000000 (a probability in millionths)"
        );
        assert_eq!(
            e(r#"[{"corrupt":{"index":1}}]"#),
            "faults[0].corrupt.byte: missing: the offset of the byte corrupt inverts"
        );
        assert_eq!(
            e(r#"[{"drop":{"index":1,"byte":3}}]"#),
            "faults[0].drop.byte: goes with corrupt only"
        );
        assert_eq!(
            e(r#"[{"burst":{"index":1,"count":0}}]"#),
            "faults[0].burst.count: 0 is not in 1..=1000000"
        );
        assert_eq!(
            e(r#"[{"drop":{"index":1,"seed":3}}]"#),
            "faults[0].drop.seed: goes with per_million only"
        );
        assert_eq!(
            e(r#"[{"drop":{"opcode":1,"first":0}}]"#),
            "faults[0].drop.first: 0 selects nothing (omit it for every frame selected)"
        );
        assert_eq!(
            e(r#"[{"drop":{"index":1,"first":2}}]"#),
            "faults[0].drop.first: goes with opcode or qp and psn only"
        );
        assert_eq!(
            e(r#"[{"down":{"from":1,"cycles":0}}]"#),
            "faults[0].down.cycles: 0 is not in 1..=1000000000"
        );
        let shape = |t: &str| {
            let v: Value = serde_json::from_str(t).unwrap();
            let (p, r) = check_shape(Some(&v)).unwrap_err();
            format!("{p}: {r}")
        };
        assert_eq!(
            shape(r#"{"a_to_b":{"faults":[{"dorp":{"index":1}}]}}"#),
            "link.a_to_b.faults[0]: expected one of drop, burst, corrupt, duplicate, reorder or down, found `dorp`"
        );
        assert_eq!(
            shape(r#"{"b_to_a":{"faults":["drop"]}}"#),
            "link.b_to_a.faults[0]: expected one of drop, burst, corrupt, duplicate, reorder or down, found \"drop\""
        );
    }

    #[test]
    fn pickers_select_by_index_bth_opcode_and_seed() {
        // An IPv4 RoCE frame: DestQP 1, PSN 107, opcode 0x0A.
        let mut f = vec![0u8; 60];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[36..38].copy_from_slice(&4791u16.to_be_bytes());
        f[42] = 0x0A;
        f[49] = 1;
        f[53] = 107;
        assert_eq!(bth_of(&f), Some((1, 107, 0x0A)));
        let sel = |j: &str| Picker::new(&serde_json::from_str::<Select>(j).unwrap());
        let mut p = sel(r#"{"qp":1,"psn":107}"#);
        assert!(p.pick(0, &f));
        // The first two frames of the PSN: a send and one resend.
        let mut p = sel(r#"{"qp":1,"psn":107,"first":2}"#);
        assert_eq!(
            (0..4).map(|k| p.pick(k, &f)).collect::<Vec<_>>(),
            [true, true, false, false]
        );
        let mut p = sel(r#"{"qp":1,"psn":108,"first":1}"#);
        assert!(!p.pick(0, &f));
        let mut p = sel(r#"{"opcode":10,"first":2}"#);
        assert_eq!(
            (0..4).map(|k| p.pick(k, &f)).collect::<Vec<_>>(),
            [true, true, false, false]
        );
        let mut p = sel(r#"{"index":2}"#);
        assert_eq!(
            (0..4).map(|k| p.pick(k, &f)).collect::<Vec<_>>(),
            [false, false, true, false]
        );
        // Seeded: the same picks every time, about the probability asked.
        let picks = |s: u64| {
            let mut p = sel(&format!(r#"{{"per_million":250000,"seed":{s}}}"#));
            (0..4000).filter(|&k| p.pick(k, &f)).count()
        };
        assert_eq!(picks(7), picks(7));
        assert!((800..1200).contains(&picks(7)), "{}", picks(7));
        let mut p = sel(r#"{"per_million":1000000,"seed":1}"#);
        assert!((0..100).all(|k| p.pick(k, &f)));
        let mut p = sel(r#"{"per_million":0,"seed":1}"#);
        assert!((0..100).all(|k| !p.pick(k, &f)));
    }
}
