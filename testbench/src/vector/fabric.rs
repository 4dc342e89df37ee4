//! The `fabric` vector kind: N NICs, each with its own host, joined by a
//! switch (docs/fabric.md).
//!
//! Hosts are written as a system vector's are (the fields of a single-NIC
//! `rnic_top` vector that describe a host) and validated by the same code;
//! errors name the host by index (`hosts[3].qps[0].mtu: ...`). The switch
//! takes its defaults from the switch model, each overridable here.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::system::{check_head, deserialize, host_vector, HostAbout, MAX_DELAY};
use super::{field_err, Expect, Vector, VectorError, FORMAT};

/// The value of `kind` that makes a vector a fabric vector.
pub const KIND: &str = "fabric";

/// Hosts a fabric may have.
pub const MAX_HOSTS: usize = 64;

/// How the hosts are joined (docs/fabric.md, "Topologies").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    /// One switch, host i on port i.
    Star,
    /// `leaves` leaf switches with hosts / leaves hosts each, every leaf
    /// wired to each of `spines` spine switches.
    LeafSpine { leaves: usize, spines: usize },
    /// The k-ary fat-tree: k pods of k/2 edge and k/2 aggregation
    /// switches, (k/2)^2 core switches, k^3/4 hosts.
    FatTree { k: usize },
    /// `switches` switches in a ring, hosts / switches hosts on each;
    /// every route goes one way round (switch i to i+1), so the links'
    /// buffers depend on each other in a cycle: the shape of a PFC
    /// deadlock.
    Ring { switches: usize },
    /// Rail-optimized: servers of `rails` NICs each (hosts h = server x
    /// rails + r), NIC r of every server on rail switch r, every rail
    /// switch wired to each of `spines` spines.
    Rail { rails: usize, spines: usize },
}

/// Switches a ring may have: three make the smallest cycle of
/// switch-to-switch links.
pub const RING_SWITCHES: std::ops::RangeInclusive<usize> = 3..=16;

/// A vector that shows a fabric stopping for good (docs/fabric.md,
/// "Deadlock"): it does not complete; the run goes to `max_cycles` and must
/// end with no frame of data leaving any switch for the last
/// `still_cycles`, and a cycle of switch-to-switch links each holding
/// lossless frames its downstream switch pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadlockSpec {
    pub still_cycles: u64,
}

/// Every link of the fabric: the same delay and rate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FabricLink {
    /// Propagation delay, cycles: from the cycle after a frame's last bit
    /// leaves one end to the cycle its last bit has arrived at the other.
    pub delay: u64,
    /// Line rate in bits per cycle, for the switch's egress and each NIC's
    /// MAC (400 = 100 Gb/s at 250 MHz).
    pub bits_per_cycle: u32,
}

impl Default for FabricLink {
    fn default() -> Self {
        FabricLink {
            delay: 100,
            bits_per_cycle: 400,
        }
    }
}

/// Overrides of the switch model's defaults (docs/switch.md); a field left
/// out keeps the default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_bytes: Option<u64>,
    /// PFC on the lossless priority (3): XOFF upstream, pauses honoured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pfc: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xoff_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xon_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headroom_bytes: Option<u64>,
    /// RED/ECN marking on the lossless priority (false: never marks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kmin_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kmax_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pmax: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watchdog_cycles: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// The blessed results of a fabric vector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FabricExpect {
    /// Cycles until every NIC was done.
    pub cycles: u64,
    /// Per host, as a single NIC's results.
    pub hosts: Vec<Expect>,
    /// The switch's non-zero counters by name.
    pub switch: BTreeMap<String, u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FabricFile {
    format: u32,
    kind: String,
    name: String,
    description: String,
    checked_against: String,
    topology: Topology,
    #[serde(default)]
    link: FabricLink,
    #[serde(default)]
    switch: SwitchSpec,
    hosts: Vec<serde_json::Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    rtl: Vec<usize>,
    max_cycles: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deadlock: Option<DeadlockSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expect: Option<FabricExpect>,
}

/// A validated fabric vector.
#[derive(Debug, Clone, PartialEq)]
pub struct FabricVector {
    pub name: String,
    pub description: String,
    pub checked_against: String,
    pub topology: Topology,
    pub link: FabricLink,
    pub switch: SwitchSpec,
    /// Host `i` is on switch port `i`; each is an `rnic_top` vector named
    /// `<name>.h<i>`.
    pub hosts: Vec<Vector>,
    /// Hosts whose RTL runs in lockstep with their model.
    pub rtl: Vec<usize>,
    pub max_cycles: u64,
    /// The run is expected to stop for good rather than complete.
    pub deadlock: Option<DeadlockSpec>,
    pub expect: Option<FabricExpect>,
    raw: Vec<serde_json::Map<String, Value>>,
}

/// Whether parsed vector JSON is a fabric vector.
pub fn is_fabric(json: &Value) -> bool {
    json.get("kind").and_then(Value::as_str) == Some(KIND)
}

impl FabricVector {
    pub fn from_json(file: &Path, json: Value) -> Result<FabricVector, VectorError> {
        let f: FabricFile = deserialize(file, &json)?;
        check_head(file, f.format, &f.kind, KIND, &f.name, f.max_cycles)?;
        let e = |p: &str, r: String| Err(field_err(file, p, r));
        if f.link.delay > MAX_DELAY {
            return e(
                "link.delay",
                format!("{} is not in 0..={MAX_DELAY}", f.link.delay),
            );
        }
        // A NIC's tx_* moves at most 512 bits a cycle: a faster line
        // would never be the bottleneck it is here to be.
        if !(1..=512).contains(&f.link.bits_per_cycle) {
            return e(
                "link.bits_per_cycle",
                format!("{} is not in 1..=512", f.link.bits_per_cycle),
            );
        }
        if let Err((p, r)) = check_switch(&f.switch) {
            return e(&format!("switch.{p}"), r);
        }
        if !(2..=MAX_HOSTS).contains(&f.hosts.len()) {
            return e(
                "hosts",
                format!("{} hosts is not in 2..={MAX_HOSTS}", f.hosts.len()),
            );
        }
        if let Err((p, r)) = check_topology(&f.topology, f.hosts.len()) {
            return e(&format!("topology.{p}"), r);
        }
        for (k, &h) in f.rtl.iter().enumerate() {
            if h >= f.hosts.len() {
                return e(
                    &format!("rtl[{k}]"),
                    format!("host {h} does not exist ({} hosts)", f.hosts.len()),
                );
            }
            if f.rtl[..k].contains(&h) {
                return e(&format!("rtl[{k}]"), format!("host {h} is named twice"));
            }
        }
        if let Some(d) = f.deadlock {
            if !(1..f.max_cycles).contains(&d.still_cycles) {
                return e(
                    "deadlock.still_cycles",
                    format!(
                        "{} is not in 1..{} (max_cycles)",
                        d.still_cycles, f.max_cycles
                    ),
                );
            }
        }
        let about = HostAbout {
            name: &f.name,
            description: &f.description,
            checked_against: &f.checked_against,
            max_cycles: f.max_cycles,
        };
        let mut hosts = Vec::with_capacity(f.hosts.len());
        for (i, m) in f.hosts.iter().enumerate() {
            hosts.push(host_vector(
                file,
                &about,
                &format!("hosts[{i}]"),
                &format!("h{i}"),
                m,
            )?);
        }
        Ok(FabricVector {
            name: f.name,
            description: f.description,
            checked_against: f.checked_against,
            topology: f.topology,
            link: f.link,
            switch: f.switch,
            hosts,
            rtl: f.rtl,
            max_cycles: f.max_cycles,
            deadlock: f.deadlock,
            expect: f.expect,
            raw: f.hosts,
        })
    }

    /// Serializes the vector as pretty JSON (2-space indent, trailing
    /// newline), the hosts as they were written.
    pub fn to_json(&self) -> String {
        let f = FabricFile {
            format: FORMAT,
            kind: KIND.into(),
            name: self.name.clone(),
            description: self.description.clone(),
            checked_against: self.checked_against.clone(),
            topology: self.topology,
            link: self.link.clone(),
            switch: self.switch.clone(),
            hosts: self.raw.clone(),
            rtl: self.rtl.clone(),
            max_cycles: self.max_cycles,
            deadlock: self.deadlock,
            expect: self.expect.clone(),
        };
        let mut s = serde_json::to_string_pretty(&f).expect("vector serializes");
        s.push('\n');
        s
    }
}

/// A topology's shape against the number of hosts.
fn check_topology(t: &Topology, hosts: usize) -> Result<(), (String, String)> {
    match *t {
        Topology::Star => Ok(()),
        Topology::Rail { rails, spines } => check_topology(
            &Topology::LeafSpine {
                leaves: rails,
                spines,
            },
            hosts,
        )
        .map_err(|(f, r)| {
            let f = if f == "leaves" { "rails".into() } else { f };
            (f, r.replace("leaves", "rails"))
        }),
        Topology::LeafSpine { leaves, spines } => {
            if !(1..=MAX_HOSTS).contains(&leaves) {
                return Err((
                    "leaves".into(),
                    format!("{leaves} is not in 1..={MAX_HOSTS}"),
                ));
            }
            if !(1..=MAX_HOSTS).contains(&spines) {
                return Err((
                    "spines".into(),
                    format!("{spines} is not in 1..={MAX_HOSTS}"),
                ));
            }
            if !hosts.is_multiple_of(leaves) {
                return Err((
                    "leaves".into(),
                    format!("{hosts} hosts do not spread evenly over {leaves} leaves"),
                ));
            }
            Ok(())
        }
        Topology::FatTree { k } => {
            if !matches!(k, 2 | 4 | 6) {
                return Err((
                    "k".into(),
                    format!("{k} is not 2, 4 or 6 (k^3/4 hosts, at most {MAX_HOSTS})"),
                ));
            }
            if hosts != k * k * k / 4 {
                return Err((
                    "k".into(),
                    format!(
                        "a fat-tree of k = {k} has {} hosts, not {hosts}",
                        k * k * k / 4
                    ),
                ));
            }
            Ok(())
        }
        Topology::Ring { switches } => {
            if !RING_SWITCHES.contains(&switches) {
                return Err((
                    "switches".into(),
                    format!(
                        "{switches} is not in {}..={}",
                        RING_SWITCHES.start(),
                        RING_SWITCHES.end()
                    ),
                ));
            }
            if !hosts.is_multiple_of(switches) {
                return Err((
                    "switches".into(),
                    format!("{hosts} hosts do not spread evenly over {switches} switches"),
                ));
            }
            Ok(())
        }
    }
}

/// The switch overrides' own ranges (the switch model checks how they
/// combine when the run builds it).
fn check_switch(s: &SwitchSpec) -> Result<(), (String, String)> {
    const GIB: u64 = 1 << 30;
    let bytes = [
        ("buffer_bytes", s.buffer_bytes),
        ("xoff_bytes", s.xoff_bytes),
        ("xon_bytes", s.xon_bytes),
        ("headroom_bytes", s.headroom_bytes),
        ("kmin_bytes", s.kmin_bytes),
        ("kmax_bytes", s.kmax_bytes),
    ];
    for (name, v) in bytes {
        if let Some(v) = v {
            if v > GIB {
                return Err((name.into(), format!("{v} is more than 1 GiB")));
            }
        }
    }
    if let Some(p) = s.pmax {
        if !(0.0..=1.0).contains(&p) {
            return Err(("pmax".into(), format!("{p} is not a probability in 0..=1")));
        }
    }
    if s.watchdog_cycles == Some(0) {
        return Err((
            "watchdog_cycles".into(),
            "0 would drop every paused frame: leave it out to turn the watchdog off".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::AnyVector;
    use super::*;

    fn host(h: u8) -> String {
        format!(
            r#"{{"memory":[{{"addr":"0x100000","len":4096,"seed":1}}],
            "qps":[{{"qp":0,"type":"uc","remote_qpn":0,"psn":0,"mtu":256,"pd":1,"cq":0,
              "dst_mac":"02:00:00:00:00:01","src_mac":"02:00:00:00:00:02",
              "ip":{{"ipv4":{{"src":"10.0.{h}.1","dst":"10.0.9.1"}}}},
              "sq":{{"base":"0x10000000","log_size":4}}}}],
            "cqs":[{{"cq":0,"ring":{{"base":"0x20000000","log_size":4}}}}]}}"#
        )
    }

    fn text(extra: &str, hosts: &[String]) -> String {
        format!(
            r#"{{"format":1,"kind":"fabric","name":"f","description":"d","checked_against":"c",
            "topology":{{"kind":"star"}},"hosts":[{}],"max_cycles":1000{extra}}}"#,
            hosts.join(",")
        )
    }

    fn err(t: &str) -> String {
        AnyVector::parse(Path::new("v.json"), t)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn a_fabric_vector_parses_and_round_trips() {
        let t = text(
            r#","link":{"delay":7},"switch":{"pfc":false,"pmax":0.5},"rtl":[1]"#,
            &[host(0), host(1), host(2)],
        );
        let AnyVector::Fabric(v) = AnyVector::parse(Path::new("v.json"), &t).unwrap() else {
            panic!("not a fabric vector")
        };
        assert_eq!(v.hosts.len(), 3);
        assert_eq!(v.hosts[2].name, "f.h2");
        assert_eq!(v.link.delay, 7);
        assert_eq!(v.link.bits_per_cycle, 400);
        assert_eq!(v.switch.pfc, Some(false));
        assert_eq!(v.rtl, vec![1]);
        let again = AnyVector::parse(Path::new("v.json"), &v.to_json()).unwrap();
        assert_eq!(again, AnyVector::Fabric(v));
    }

    #[test]
    fn errors_name_the_field() {
        let two = [host(0), host(1)];
        let bad = host(1).replace(r#""mtu":256"#, r#""mtu":100"#);
        let t = text("", &[host(0), bad]);
        assert!(
            err(&t).starts_with("v.json: hosts[1].qps[0].mtu: "),
            "{}",
            err(&t)
        );
        let t = text("", &[host(0), r#"{"rx":[]}"#.into()]);
        assert!(err(&t).starts_with("v.json: hosts[1].rx: "), "{}", err(&t));
        let t = text("", &[host(0)]);
        assert_eq!(err(&t), "v.json: hosts: 1 hosts is not in 2..=64");
        let t = text(r#","rtl":[2]"#, &two);
        assert_eq!(err(&t), "v.json: rtl[0]: host 2 does not exist (2 hosts)");
        let t = text(r#","rtl":[1,1]"#, &two);
        assert_eq!(err(&t), "v.json: rtl[1]: host 1 is named twice");
        let t = text("", &two).replace(r#""star""#, r#""torus""#);
        assert!(
            err(&t).starts_with("v.json: topology.kind: unknown variant `torus`"),
            "{}",
            err(&t)
        );
        let t = text("", &two).replace(r#""star""#, r#""ring","switches":2"#);
        assert_eq!(err(&t), "v.json: topology.switches: 2 is not in 3..=16");
        let t = text("", &[host(0), host(1), host(2), host(3)])
            .replace(r#""star""#, r#""ring","switches":3"#);
        assert_eq!(
            err(&t),
            "v.json: topology.switches: 4 hosts do not spread evenly over 3 switches"
        );
        let t = text("", &[host(0), host(1), host(2)])
            .replace(r#""star""#, r#""rail","rails":2,"spines":1"#);
        assert_eq!(
            err(&t),
            "v.json: topology.rails: 3 hosts do not spread evenly over 2 rails"
        );
        let t = text(r#","deadlock":{"still_cycles":1000}"#, &two);
        assert_eq!(
            err(&t),
            "v.json: deadlock.still_cycles: 1000 is not in 1..1000 (max_cycles)"
        );
        let t = text("", &two).replace(r#""star""#, r#""fat_tree","k":4"#);
        assert_eq!(
            err(&t),
            "v.json: topology.k: a fat-tree of k = 4 has 16 hosts, not 2"
        );
        let t = text("", &[host(0), host(1), host(2)])
            .replace(r#""star""#, r#""leaf_spine","leaves":2,"spines":1"#);
        assert_eq!(
            err(&t),
            "v.json: topology.leaves: 3 hosts do not spread evenly over 2 leaves"
        );
        let t = text(r#","link":{"bits_per_cycle":600}"#, &two);
        assert_eq!(
            err(&t),
            "v.json: link.bits_per_cycle: 600 is not in 1..=512"
        );
        let t = text(r#","switch":{"pmax":1.5}"#, &two);
        assert_eq!(
            err(&t),
            "v.json: switch.pmax: 1.5 is not a probability in 0..=1"
        );
        let t = text(r#","switch":{"watchdog_cycles":0}"#, &two);
        assert!(err(&t).starts_with("v.json: switch.watchdog_cycles: 0 would drop"));
        let t = text(r#","switch":{"kmin":1}"#, &two);
        assert!(
            err(&t).starts_with("v.json: switch.kmin: unknown field `kmin`"),
            "{}",
            err(&t)
        );
    }
}
