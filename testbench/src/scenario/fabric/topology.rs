//! The fabric's switches and wires, built from the vector's topology
//! (docs/fabric.md, "Topologies"): which switch ports face which host or
//! which other switch's port, and each switch's routes.
//!
//! Every switch gets the vector's switch settings. Routes are host routes
//! (one per address a host's QPs send from): down toward the host where
//! the switch is above it, otherwise an ECMP group of every uplink, so a
//! flow (its UDP source port) takes one path and flows spread. A ring has
//! no up and down: its routes all go the same way round.

use std::net::IpAddr;

use rnic_switch::{Route, SwitchConfig};

use super::{checks, LOSSLESS};
use crate::vector::fabric::Topology as Spec;
use crate::vector::FabricVector;

/// What a switch port's wire leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    Host(usize),
    /// (switch, port)
    Switch(usize, usize),
}

/// The fabric as built.
pub struct Topology {
    pub switches: Vec<SwitchConfig>,
    /// Per switch, per port: the other end of its wire.
    pub wires: Vec<Vec<End>>,
    /// Per host: (switch, port) it hangs off.
    pub host_at: Vec<(usize, usize)>,
    /// Per switch, for reports: `sw0`, or `edge3`, `agg1`, `core0`, ...
    pub names: Vec<String>,
}

impl Topology {
    /// Every switch port wired to another switch: (switch, port, the
    /// switch at the other end), switches and ports in index order.
    pub fn switch_links(&self) -> Vec<(usize, usize, usize)> {
        let mut l = Vec::new();
        for (s, w) in self.wires.iter().enumerate() {
            for (p, e) in w.iter().enumerate() {
                if let End::Switch(n, _) = *e {
                    l.push((s, p, n));
                }
            }
        }
        l
    }
}

/// One switch with `ports` ports and the vector's settings, no routes.
pub fn base_config(v: &FabricVector, ports: usize) -> SwitchConfig {
    let mut c = SwitchConfig::new(ports);
    c.bits_per_cycle = v.link.bits_per_cycle;
    let s = &v.switch;
    if let Some(b) = s.buffer_bytes {
        c.buffer_bytes = b;
    }
    if let Some(p) = s.pfc {
        c.pfc.enabled = p;
    }
    if let Some(b) = s.xoff_bytes {
        c.pfc.xoff_bytes = b;
    }
    if let Some(b) = s.xon_bytes {
        c.pfc.xon_bytes = b;
    }
    if let Some(b) = s.headroom_bytes {
        c.pfc.headroom_bytes = b;
    }
    if s.ecn == Some(false) {
        c.queues[LOSSLESS].red = None;
    } else if let Some(red) = c.queues[LOSSLESS].red.as_mut() {
        if let Some(k) = s.kmin_bytes {
            red.kmin_bytes = k;
        }
        if let Some(k) = s.kmax_bytes {
            red.kmax_bytes = k;
        }
        if let Some(p) = s.pmax {
            red.pmax = p;
        }
    }
    c.watchdog_cycles = s.watchdog_cycles;
    if let Some(seed) = s.seed {
        c.seed = seed;
    }
    c
}

/// A fabric under construction.
struct Build {
    v: FabricVector,
    addrs: Vec<Vec<IpAddr>>,
    t: Topology,
}

impl Build {
    fn switch(&mut self, name: String, ports: usize) -> usize {
        let mut c = base_config(&self.v, ports);
        // Each switch its own RED stream, the same for a given seed.
        c.seed = c.seed.wrapping_add(self.t.switches.len() as u64);
        self.t.switches.push(c);
        self.t
            .wires
            .push(vec![End::Switch(usize::MAX, usize::MAX); ports]);
        self.t.names.push(name);
        self.t.switches.len() - 1
    }

    fn host(&mut self, h: usize, s: usize, p: usize) {
        self.t.wires[s][p] = End::Host(h);
        self.t.host_at[h] = (s, p);
    }

    fn cable(&mut self, a: (usize, usize), b: (usize, usize)) {
        self.t.wires[a.0][a.1] = End::Switch(b.0, b.1);
        self.t.wires[b.0][b.1] = End::Switch(a.0, a.1);
    }

    /// Routes on switch `s` to every address of host `h` over `ports`.
    fn route(&mut self, s: usize, h: usize, ports: Vec<usize>) {
        for &a in &self.addrs[h] {
            let prefix = if a.is_ipv4() { 32 } else { 128 };
            self.t.switches[s].routes.push(Route {
                dst: a,
                prefix,
                ports: ports.clone(),
            });
        }
    }
}

/// Leaves named `<leaf>0..` with N / leaves host ports, then one uplink to
/// each spine; host h on leaf `place(h).0`, port `place(h).1`.
fn leaf_spine(
    b: &mut Build,
    n: usize,
    leaves: usize,
    spines: usize,
    leaf_name: &str,
    place: impl Fn(usize) -> (usize, usize),
) {
    let per = n / leaves;
    let leaf: Vec<usize> = (0..leaves)
        .map(|l| b.switch(format!("{leaf_name}{l}"), per + spines))
        .collect();
    let spine: Vec<usize> = (0..spines)
        .map(|s| b.switch(format!("spine{s}"), leaves))
        .collect();
    for (l, &lf) in leaf.iter().enumerate() {
        for (s, &sp) in spine.iter().enumerate() {
            b.cable((lf, per + s), (sp, l));
        }
    }
    let up: Vec<usize> = (per..per + spines).collect();
    for h in 0..n {
        let (l, j) = place(h);
        b.host(h, leaf[l], j);
        for (m, &sw) in leaf.iter().enumerate() {
            b.route(sw, h, if m == l { vec![j] } else { up.clone() });
        }
        for &sw in &spine {
            b.route(sw, h, vec![l]);
        }
    }
}

pub fn build(v: &FabricVector) -> Result<Topology, String> {
    let n = v.hosts.len();
    let mut b = Build {
        v: v.clone(),
        addrs: v.hosts.iter().map(checks::host_addrs).collect(),
        t: Topology {
            switches: Vec::new(),
            wires: Vec::new(),
            host_at: vec![(0, 0); n],
            names: Vec::new(),
        },
    };
    match v.topology {
        Spec::Star => {
            let s = b.switch("sw0".into(), n);
            for h in 0..n {
                b.host(h, s, h);
                b.route(s, h, vec![h]);
            }
        }
        Spec::LeafSpine { leaves, spines } => {
            let per = n / leaves;
            leaf_spine(&mut b, n, leaves, spines, "leaf", |h| (h / per, h % per));
        }
        Spec::Rail { rails, spines } => {
            // Host h is NIC h % rails of server h / rails.
            leaf_spine(&mut b, n, rails, spines, "rail", |h| (h % rails, h / rails));
        }
        Spec::FatTree { k } => {
            let half = k / 2;
            let per_pod = half * half;
            let edge: Vec<usize> = (0..k * half)
                .map(|e| b.switch(format!("edge{e}"), k))
                .collect();
            let agg: Vec<usize> = (0..k * half)
                .map(|a| b.switch(format!("agg{a}"), k))
                .collect();
            let core: Vec<usize> = (0..half * half)
                .map(|c| b.switch(format!("core{c}"), k))
                .collect();
            for pod in 0..k {
                for e in 0..half {
                    for a in 0..half {
                        b.cable((edge[pod * half + e], half + a), (agg[pod * half + a], e));
                    }
                }
                for a in 0..half {
                    for c in 0..half {
                        b.cable((agg[pod * half + a], half + c), (core[a * half + c], pod));
                    }
                }
            }
            let up: Vec<usize> = (half..k).collect();
            for h in 0..n {
                let (pod, e, j) = (h / per_pod, (h % per_pod) / half, h % half);
                b.host(h, edge[pod * half + e], j);
                for (x, &sw) in edge.iter().enumerate() {
                    b.route(
                        sw,
                        h,
                        if x == pod * half + e {
                            vec![j]
                        } else {
                            up.clone()
                        },
                    );
                }
                for (x, &sw) in agg.iter().enumerate() {
                    b.route(sw, h, if x / half == pod { vec![e] } else { up.clone() });
                }
                for &sw in &core {
                    b.route(sw, h, vec![pod]);
                }
            }
        }
        Spec::Ring { switches } => {
            // Ports 0..per face hosts, port `per` the next switch, port
            // `per + 1` the previous one.
            let per = n / switches;
            let ring: Vec<usize> = (0..switches)
                .map(|r| b.switch(format!("ring{r}"), per + 2))
                .collect();
            for r in 0..switches {
                b.cable((ring[r], per), (ring[(r + 1) % switches], per + 1));
            }
            for h in 0..n {
                let (r, j) = (h / per, h % per);
                b.host(h, ring[r], j);
                for (x, &sw) in ring.iter().enumerate() {
                    b.route(sw, h, if x == r { vec![j] } else { vec![per] });
                }
            }
        }
    }
    for (s, w) in b.t.wires.iter().enumerate() {
        if let Some(p) = w
            .iter()
            .position(|e| *e == End::Switch(usize::MAX, usize::MAX))
        {
            return Err(format!("topology: {} port {p} is not wired", b.t.names[s]));
        }
    }
    Ok(b.t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Follows host `from`'s frames to host `to` along the first port of
    /// every route, returning the switches crossed.
    fn path(t: &Topology, v: &FabricVector, from: usize, to: usize) -> Vec<String> {
        let dst = checks::host_addrs(&v.hosts[to])[0];
        let (mut s, _) = t.host_at[from];
        let mut out = Vec::new();
        for _ in 0..10 {
            out.push(t.names[s].clone());
            let r = t.switches[s]
                .routes
                .iter()
                .find(|r| r.dst == dst)
                .expect("a route to every host");
            match t.wires[s][r.ports[0]] {
                End::Host(h) => {
                    assert_eq!(h, to);
                    return out;
                }
                End::Switch(n, _) => s = n,
            }
        }
        panic!("no path from h{from} to h{to}: {out:?}");
    }

    fn vector(topology: &str, hosts: usize) -> FabricVector {
        let host = |h: usize| {
            format!(
                r#"{{"qps":[{{"qp":0,"type":"uc","remote_qpn":0,"psn":0,"mtu":256,"pd":1,"cq":0,
                "dst_mac":"02:00:00:00:00:01","src_mac":"02:00:00:00:00:02",
                "ip":{{"ipv4":{{"src":"10.0.{h}.1","dst":"10.0.0.1"}}}},
                "sq":{{"base":"0x10000000","log_size":4}}}}],
                "cqs":[{{"cq":0,"ring":{{"base":"0x20000000","log_size":4}}}}]}}"#
            )
        };
        let hs: Vec<String> = (0..hosts).map(host).collect();
        let t = format!(
            r#"{{"format":1,"kind":"fabric","name":"f","description":"d","checked_against":"c",
            "topology":{topology},"hosts":[{}],"max_cycles":1000}}"#,
            hs.join(",")
        );
        match crate::vector::AnyVector::parse(std::path::Path::new("v.json"), &t).unwrap() {
            crate::vector::AnyVector::Fabric(v) => *v,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_fat_tree_of_k_4_has_20_switches_and_up_down_paths() {
        let v = vector(r#"{"kind":"fat_tree","k":4}"#, 16);
        let t = build(&v).unwrap();
        // k^2/2 edge + k^2/2 aggregation + k^2/4 core = 8 + 8 + 4.
        assert_eq!(t.switches.len(), 20);
        // Same edge: one switch. Same pod: edge, aggregation, edge.
        // Another pod: edge, aggregation, core, aggregation, edge.
        assert_eq!(path(&t, &v, 0, 1), ["edge0"]);
        assert_eq!(path(&t, &v, 0, 2), ["edge0", "agg0", "edge1"]);
        assert_eq!(
            path(&t, &v, 0, 15),
            ["edge0", "agg0", "core0", "agg6", "edge7"]
        );
        // Every edge has two uplinks in its ECMP group toward other pods.
        let r = t.switches[0].routes.iter().find(|r| r.ports.len() > 1);
        assert_eq!(r.unwrap().ports, vec![2, 3]);
    }

    #[test]
    fn a_leaf_spine_wires_every_leaf_to_every_spine() {
        let v = vector(r#"{"kind":"leaf_spine","leaves":2,"spines":3}"#, 8);
        let t = build(&v).unwrap();
        assert_eq!(t.switches.len(), 5);
        assert_eq!(t.wires[0][4], End::Switch(2, 0));
        assert_eq!(t.wires[4][1], End::Switch(1, 6));
        assert_eq!(path(&t, &v, 0, 3), ["leaf0"]);
        assert_eq!(path(&t, &v, 0, 7), ["leaf0", "spine0", "leaf1"]);
    }

    #[test]
    fn a_rail_puts_each_servers_nic_r_on_rail_r() {
        // 3 servers of 2 NICs: hosts 0, 2, 4 on rail0, 1, 3, 5 on rail1.
        let v = vector(r#"{"kind":"rail","rails":2,"spines":2}"#, 6);
        let t = build(&v).unwrap();
        assert_eq!(t.names, ["rail0", "rail1", "spine0", "spine1"]);
        assert_eq!(t.host_at[4], (0, 2));
        assert_eq!(t.host_at[3], (1, 1));
        // Same rail: one switch, across servers. Another rail: up and down.
        assert_eq!(path(&t, &v, 0, 4), ["rail0"]);
        assert_eq!(path(&t, &v, 0, 1), ["rail0", "spine0", "rail1"]);
    }

    #[test]
    fn a_ring_routes_one_way_round() {
        let v = vector(r#"{"kind":"ring","switches":3}"#, 6);
        let t = build(&v).unwrap();
        assert_eq!(t.switches.len(), 3);
        // Two hosts a switch, then next (port 2) and previous (port 3).
        assert_eq!(t.host_at[3], (1, 1));
        assert_eq!(t.wires[0][2], End::Switch(1, 3));
        assert_eq!(t.wires[2][2], End::Switch(0, 3));
        // Clockwise even where counter-clockwise is shorter.
        assert_eq!(path(&t, &v, 0, 2), ["ring0", "ring1"]);
        assert_eq!(path(&t, &v, 0, 4), ["ring0", "ring1", "ring2"]);
        assert_eq!(path(&t, &v, 4, 2), ["ring2", "ring0", "ring1"]);
        assert_eq!(path(&t, &v, 5, 4), ["ring2"]);
    }

    #[test]
    fn a_star_is_one_switch_with_a_port_per_host() {
        let v = vector(r#"{"kind":"star"}"#, 3);
        let t = build(&v).unwrap();
        assert_eq!(t.switches.len(), 1);
        assert_eq!(t.host_at, vec![(0, 0), (0, 1), (0, 2)]);
        assert_eq!(path(&t, &v, 2, 0), ["sw0"]);
    }
}
