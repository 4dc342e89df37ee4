//! Incast figures (docs/fabric.md) from simulated cycles, which are exact:
//! the shipped `vectors/fabric/incast_*` run on the models (their RTL
//! hosts are covered by the per-vector tests), and for each:
//!
//! - completion: from the first sender's doorbell to the last sender's
//!   CQE, against the wire's lower bound, derived here from the vector
//!   alone: every sender's WRITE is S / MTU frames, the first with a RETH
//!   (14 Ethernet + 20 IPv4 + 8 UDP + 12 BTH + 16 RETH + MTU + 4 ICRC
//!   bytes), the rest without, each plus 24 bytes of FCS, preamble and gap,
//!   and all of them cross the receiver's one port at B bits a cycle. No
//!   run can beat it (asserted: the MAC and the switch do not exceed the
//!   line); with PFC alone the run stays within 10 % of it (asserted: pause
//!   keeps nothing lost and the bottleneck busy).
//! - Jain's fairness index of the senders' throughputs (S over each one's
//!   doorbell-to-CQE time): 1 is perfectly fair, 1/N is one sender alone.
//! - the receiver port's lossless queue, its mean and its peak (sampled
//!   every `SAMPLE_EVERY` cycles from the first doorbell to the last CQE),
//!   the switch's pause frames, CE marks and the CNPs the senders'
//!   reaction points counted.
//!
//! With DCQCN on, in the paper's mode and in the deployed modes, the
//! switch must pause less and hold a shorter queue on average than with
//! PFC alone on the same incast (asserted): that is what the CNPs are for. Its peak is no lower: the first round trip's burst
//! reaches XOFF on every port before the first CNP can act.

mod common;
use common::figures;

use rnic_testbench::scenario::fabric::{self, FabricReport};
use rnic_testbench::scenario::{Mode, RunOpts};
use rnic_testbench::vector::{FabricVector, WqeOpcode};

/// Bytes of a RoCEv2 WRITE frame around its payload, IPv4, no VLAN:
/// Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4.
const HEADERS: u64 = 14 + 20 + 8 + 12 + 4;
const RETH: u64 = 16;
const WIRE: u64 = 24;
const MTU: u64 = 1024;

fn load(name: &str) -> FabricVector {
    common::pair_nic::load_fabric(&format!("vectors/fabric/{name}.json"))
}

/// Cycles the receiver's port needs for every sender's WRITE.
fn wire_bound(v: &FabricVector) -> u64 {
    let mut bits = 0;
    for h in &v.hosts[1..] {
        for w in &h.wqes {
            let p = (w.len as u64).div_ceil(MTU);
            bits += ((w.len as u64) + p * (HEADERS + WIRE) + RETH) * 8;
        }
    }
    bits.div_ceil(v.link.bits_per_cycle as u64)
}

struct Figures {
    completion: u64,
    bound: u64,
    jain: f64,
    mean_queue: u64,
    peak_queue: u64,
    pauses: u64,
    marks: u64,
    cnps: u64,
}

fn measure(v: &FabricVector, r: &FabricReport) -> Figures {
    let rep = &r.report;
    assert!(rep.divergence.is_none(), "{:?}", rep.divergence);
    assert!(rep.failures.is_empty(), "{}", rep.failures.join("\n"));
    assert!(rep.completed);
    let senders = &r.spans[1..];
    let start = senders
        .iter()
        .filter_map(|s| s.0)
        .min()
        .expect("a doorbell");
    let end = senders.iter().filter_map(|s| s.1).max().expect("a CQE");
    let tput: Vec<f64> = senders
        .iter()
        .zip(&v.hosts[1..])
        .map(|(s, h)| {
            let (a, b) = (s.0.expect("doorbell"), s.1.expect("CQE"));
            h.wqes[0].len as f64 / (b - a) as f64
        })
        .collect();
    let sum: f64 = tput.iter().sum();
    let sq: f64 = tput.iter().map(|x| x * x).sum();
    let counter = |name: &str| -> u64 {
        r.hosts
            .iter()
            .flat_map(|h| h.counters.iter())
            .filter(|(n, _)| n.as_str() == name)
            .map(|(_, v)| *v)
            .sum()
    };
    Figures {
        completion: end - start,
        bound: wire_bound(v),
        jain: sum * sum / (tput.len() as f64 * sq),
        mean_queue: {
            let q: Vec<u64> = r
                .samples
                .iter()
                .filter(|s| (start..=end).contains(&s.cycle))
                .map(|s| s.lossless[0])
                .collect();
            q.iter().sum::<u64>() / q.len().max(1) as u64
        },
        peak_queue: r.samples.iter().map(|s| s.lossless[0]).max().unwrap_or(0),
        pauses: r.delivery.pauses_from_switch,
        marks: r.delivery.marked,
        cnps: counter("dcqcn_cnp"),
    }
}

const HEADER: &[&str] = &[
    "vector",
    "senders x size",
    "completion (cycles)",
    "wire bound",
    "ratio",
    "Jain",
    "mean queue (KiB)",
    "peak queue (KiB)",
    "pause frames",
    "CE marks",
    "CNPs",
];

fn row(name: &str, v: &FabricVector, f: &Figures) {
    let n = v.hosts.len() - 1;
    let size = v.hosts[1].wqes[0].len;
    // Rows by sender count: PFC alone, the paper's DCQCN, the deployed.
    let order = ["pfc", "rtl", "paper", "deployed"]
        .iter()
        .position(|m| name.ends_with(m))
        .unwrap_or(9);
    let key = format!("{n:02}_{order}");
    figures::row(
        "fabric_incast",
        HEADER,
        &key,
        &[
            format!("`{name}`"),
            format!("{n} x {} KiB", size / 1024),
            f.completion.to_string(),
            f.bound.to_string(),
            format!("{:.3}", f.completion as f64 / f.bound as f64),
            format!("{:.3}", f.jain),
            format!("{:.1}", f.mean_queue as f64 / 1024.0),
            format!("{:.1}", f.peak_queue as f64 / 1024.0),
            f.pauses.to_string(),
            f.marks.to_string(),
            f.cnps.to_string(),
        ],
    );
}

fn run(name: &str) -> (FabricVector, Figures) {
    let v = load(name);
    let r = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    let f = measure(&v, &r);
    row(name, &v, &f);
    assert!(
        f.completion >= f.bound,
        "{name}: {} cycles beats the line ({})",
        f.completion,
        f.bound
    );
    (v, f)
}

/// Ring AllReduce: from the first rank's first doorbell to the last CQE
/// of any rank (its last chunk's RECV), against the bandwidth bound
/// 2 (N - 1) / N x S / B: each rank's link carries 2 (N - 1) chunks of
/// S / N bytes, payload alone. Headers and the wire overhead add 82 bytes
/// per 1024 (8 %), and each of the 2 (N - 1) steps waits for the previous
/// one's last packet to cross the fabric and complete a RECV (a few hundred
/// cycles of links and host writes against a step of about 5,000): the
/// contract is within 30 % of the bound, and nothing beats it.
fn allreduce(name: &str) {
    let v = load(name);
    let r = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    let rep = &r.report;
    assert!(rep.failures.is_empty(), "{}", rep.failures.join("\n"));
    assert!(rep.completed);
    let ranks: Vec<usize> = (0..v.hosts.len())
        .filter(|&h| {
            v.hosts[h]
                .wqes
                .iter()
                .any(|w| w.opcode == WqeOpcode::WriteImm)
        })
        .collect();
    let n = ranks.len() as u64;
    let chunk = v.hosts[ranks[0]].wqes[0].len as u64;
    let size = chunk * n;
    let start = ranks.iter().filter_map(|&h| r.spans[h].0).min().unwrap();
    let end = ranks.iter().filter_map(|&h| r.spans[h].1).max().unwrap();
    let bound = (2 * (n - 1) * chunk * 8).div_ceil(v.link.bits_per_cycle as u64);
    let completion = end - start;
    let topo = match v.topology {
        rnic_testbench::vector::fabric::Topology::Star => "star".to_string(),
        rnic_testbench::vector::fabric::Topology::LeafSpine { leaves, spines } => {
            format!("leaf-spine {leaves} x {spines}")
        }
        rnic_testbench::vector::fabric::Topology::FatTree { k } => format!("fat-tree k = {k}"),
        rnic_testbench::vector::fabric::Topology::Ring { switches } => {
            format!("ring of {switches}")
        }
        rnic_testbench::vector::fabric::Topology::Rail { rails, spines } => {
            format!("{rails} rails x {spines} spines")
        }
    };
    figures::row(
        "fabric_allreduce",
        &[
            "vector",
            "ranks",
            "topology",
            "size",
            "completion (cycles)",
            "bound 2(N-1)/N x S/B",
            "ratio",
            "pause frames",
        ],
        &format!("{n:02}"),
        &[
            format!("`{name}`"),
            n.to_string(),
            topo,
            format!("{} MiB", size >> 20),
            completion.to_string(),
            bound.to_string(),
            format!("{:.3}", completion as f64 / bound as f64),
            r.delivery.pauses_from_switch.to_string(),
        ],
    );
    assert!(completion >= bound, "{name}: {completion} beats {bound}");
    assert!(
        completion * 10 <= bound * 13,
        "{name}: {completion} cycles, more than 30 % over the bound {bound}"
    );
}

#[test]
fn allreduce_8_leafspine() {
    allreduce("allreduce_8_leafspine");
}

#[test]
fn allreduce_16_fattree() {
    allreduce("allreduce_16_fattree");
}

/// Head-of-line blocking: host 1 sends into a 4->1 incast on one QP and
/// to an idle host on another (the victim, 1 MiB). Its throughput, from
/// its doorbell (host 1's second) to its CQE, in Gb/s at 250 MHz, with
/// PFC alone and with DCQCN; asserted: DCQCN gives the victim more, as
/// the cut lands on the incast QP alone while a pause stops both.
fn victim_gbps(name: &str) -> (f64, u64) {
    let v = load(name);
    let r = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    let rep = &r.report;
    assert!(rep.failures.is_empty(), "{}", rep.failures.join("\n"));
    let q = v.hosts[1].wqes[1].qp;
    let len = v.hosts[1].wqes[1].len as f64;
    let start = r.doorbells[1][1];
    let done = r.cqes[1]
        .iter()
        .find(|c| c.cqe.qp == q)
        .expect("the victim completes")
        .cycle;
    (
        len * 8.0 / (done - start) as f64 * 0.25,
        r.delivery.pauses_from_switch,
    )
}

#[test]
fn hol_victim() {
    let (pfc, pfc_pauses) = victim_gbps("hol_victim_pfc");
    let (cc, cc_pauses) = victim_gbps("hol_victim_dcqcn");
    for (name, g, p) in [
        ("hol_victim_pfc", pfc, pfc_pauses),
        ("hol_victim_dcqcn", cc, cc_pauses),
    ] {
        figures::row(
            "fabric_hol",
            &["vector", "victim throughput (Gb/s)", "pause frames"],
            name,
            &[format!("`{name}`"), format!("{g:.1}"), p.to_string()],
        );
    }
    assert!(
        cc > pfc,
        "DCQCN's victim {cc:.1} Gb/s is not above PFC's {pfc:.1}"
    );
}

#[test]
fn incast_4to1_64k() {
    run("incast_4to1_64k_rtl");
}

/// PFC alone, then DCQCN on the same incast in the paper's mode and in
/// the deployed modes.
fn pfc_then_dcqcn(n: usize) {
    let (_, pfc) = run(&format!("incast_{n}to1_1m_pfc"));
    assert!(
        pfc.completion * 10 <= pfc.bound * 11,
        "PFC alone leaves the bottleneck idle: {} cycles for a bound of {}",
        pfc.completion,
        pfc.bound
    );
    assert!(pfc.pauses > 0, "the incast never reached XOFF");
    for mode in ["paper", "deployed"] {
        let (_, cc) = run(&format!("incast_{n}to1_1m_{mode}"));
        assert!(cc.cnps > 0);
        assert!(
            cc.pauses < pfc.pauses,
            "{mode}: DCQCN's {} pause frames are not fewer than PFC alone's {}",
            cc.pauses,
            pfc.pauses
        );
        assert!(
            cc.mean_queue < pfc.mean_queue,
            "{mode}: DCQCN's mean queue {} is not below PFC alone's {}",
            cc.mean_queue,
            pfc.mean_queue
        );
    }
}

#[test]
fn incast_8to1_1m() {
    pfc_then_dcqcn(8);
}

#[test]
fn incast_16to1_1m() {
    pfc_then_dcqcn(16);
}

/// PFC deadlock (docs/fabric.md, "Deadlock"): the ring of three switches
/// whose routes all go one way round, without and with the PFC watchdog.
/// Without, the run ends stuck: a cycle of paused links holding frames, no
/// data moving, the WRITEs incomplete (asserted by the vector's checks).
/// With, the watchdog drops what the paused queues hold, go-back-N resends
/// it, and every WRITE lands: bytes delivered exactly once (the hosts'
/// checks) at the price of the drops and the time shown.
#[test]
fn deadlock_ring3() {
    for (name, watchdog) in [
        ("deadlock_ring3_stuck", false),
        ("deadlock_ring3_watchdog", true),
    ] {
        let v = load(name);
        assert_eq!(v.switch.watchdog_cycles.is_some(), watchdog);
        let r = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
        let rep = &r.report;
        assert!(rep.clean(), "{name}: {}", rep.failures.join("\n"));
        let sum = |suffix: &str| -> u64 {
            r.switch
                .iter()
                .filter(|(k, _)| k.ends_with(suffix))
                .map(|(_, v)| v)
                .sum()
        };
        let drops = sum(".watchdog_drops");
        let bytes: u64 = v
            .hosts
            .iter()
            .flat_map(|h| h.wqes.iter())
            .map(|w| w.len as u64)
            .sum();
        let cqes: usize = r.cqes.iter().map(Vec::len).sum();
        let wqes: usize = v.hosts.iter().map(|h| h.wqes.len()).sum();
        let end = if watchdog {
            let last = r.spans.iter().filter_map(|s| s.1).max().unwrap();
            format!("all {wqes} WRITEs complete at cycle {last}")
        } else {
            format!(
                "stuck from cycle {} to the end ({}), {cqes} of {wqes} WRITEs complete",
                r.stall.last_data_out.unwrap() + 1,
                rep.cycles
            )
        };
        let cycle = if r.stall.cycle.is_empty() {
            "none".to_string()
        } else {
            let mut c = r.stall.cycle.clone();
            c.push(c[0].clone());
            c.join(" > ")
        };
        figures::row(
            "fabric_deadlock",
            &[
                "vector",
                "watchdog",
                "outcome",
                "WRITE data (MiB)",
                "watchdog drops",
                "pause frames to hosts",
                "KiB held at the end",
                "paused cycle at the end",
            ],
            name,
            &[
                format!("`{name}`"),
                v.switch
                    .watchdog_cycles
                    .map_or("off".into(), |w| format!("{w} cycles")),
                end,
                format!("{:.2}", bytes as f64 / (1 << 20) as f64),
                drops.to_string(),
                r.delivery.pauses_from_switch.to_string(),
                (r.stall.held_bytes / 1024).to_string(),
                cycle,
            ],
        );
        if watchdog {
            assert!(drops > 0, "{name}: the watchdog never fired");
            assert_eq!(cqes, wqes, "{name}");
            assert!(r.stall.cycle.is_empty() && r.stall.held_bytes == 0);
        } else {
            assert_eq!(drops, 0);
            assert!(cqes < wqes, "{name}: {cqes} of {wqes} complete");
            assert_eq!(r.stall.cycle, ["ring0", "ring1", "ring2"]);
        }
    }
}

/// Bytes of an 802.1Q tag: the fabric vectors' QPs tag their frames.
const VLAN: u64 = 4;

/// Bits host WQEs put on the wire for `len` bytes of WRITE payload: MTU
/// frames, the first with a RETH, each with headers, tag and wire
/// overhead.
fn write_bits(len: u64) -> u64 {
    let p = len.div_ceil(MTU).max(1);
    (len + p * (HEADERS + VLAN + WIRE) + RETH) * 8
}

/// Permutation and all-to-all: from the first doorbell to the last
/// requester CQE, against the busiest host link's lower bound (the bits
/// its WRITEs send, or those sent to it, whichever is more, at B bits a
/// cycle; derived from the vector alone, the destination host by the QP's
/// IP destination); Jain's index and the range of the flows' throughputs
/// (each WQE's bytes over its host's first doorbell to its CQE).
fn traffic(name: &str) {
    let v = load(name);
    let r = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    let rep = &r.report;
    assert!(rep.clean(), "{name}: {}", rep.failures.join("\n"));
    let n = v.hosts.len();
    let src_of =
        |h: usize| -> Vec<u128> { v.hosts[h].qps.iter().map(|q| q.ip.to_u128().0).collect() };
    let (mut out_bits, mut in_bits) = (vec![0u64; n], vec![0u64; n]);
    let mut flows = Vec::new();
    for (h, host) in v.hosts.iter().enumerate() {
        for w in &host.wqes {
            let q = host.qps.iter().find(|q| q.qp == w.qp).unwrap();
            let dst = q.ip.to_u128().1;
            let to = (0..n).find(|&d| src_of(d).contains(&dst)).unwrap();
            let bits = write_bits(w.len as u64);
            out_bits[h] += bits;
            in_bits[to] += bits;
            let done = r.cqes[h]
                .iter()
                .find(|c| c.cqe.wr_id == w.wr_id.0)
                .expect("every WRITE completes")
                .cycle;
            let gbps = w.len as f64 * 8.0 / (done - r.doorbells[h][0]) as f64 * 0.25;
            flows.push(gbps);
        }
    }
    let busiest = out_bits.iter().chain(&in_bits).max().copied().unwrap();
    let bound = busiest.div_ceil(v.link.bits_per_cycle as u64);
    let start = r.doorbells.iter().filter_map(|d| d.first()).min().unwrap();
    let end = r.spans.iter().filter_map(|s| s.1).max().unwrap();
    let completion = end - start;
    let sum: f64 = flows.iter().sum();
    let sq: f64 = flows.iter().map(|x| x * x).sum();
    let jain = sum * sum / (flows.len() as f64 * sq);
    let lo = flows.iter().copied().fold(f64::MAX, f64::min);
    let hi = flows.iter().copied().fold(0.0, f64::max);
    let topo = match v.topology {
        rnic_testbench::vector::fabric::Topology::FatTree { k } => format!("fat-tree k = {k}"),
        rnic_testbench::vector::fabric::Topology::Rail { rails, spines } => {
            format!("{rails} rails x {spines} spines")
        }
        t => format!("{t:?}"),
    };
    figures::row(
        "fabric_traffic",
        &[
            "vector",
            "topology",
            "hosts",
            "flows x size",
            "completion (cycles)",
            "busiest link bound",
            "ratio",
            "Jain",
            "flows (Gb/s)",
            "pause frames",
        ],
        name,
        &[
            format!("`{name}`"),
            topo,
            n.to_string(),
            format!("{} x {} KiB", flows.len(), v.hosts[0].wqes[0].len >> 10),
            completion.to_string(),
            bound.to_string(),
            format!("{:.3}", completion as f64 / bound as f64),
            format!("{jain:.3}"),
            format!("{lo:.1} .. {hi:.1}"),
            r.delivery.pauses_from_switch.to_string(),
        ],
    );
    assert!(completion >= bound, "{name}: {completion} beats {bound}");
}

#[test]
fn permutation_16_fattree() {
    traffic("permutation_16_fattree");
}

#[test]
fn alltoall_8_rail() {
    traffic("alltoall_8_rail");
}

/// Two flows on one bottleneck (`fairness_2flows_*`): each flow's rate
/// into host 0 in windows of `FAIR_WINDOW` cycles, from the frames the
/// switch sent host 0 (wire bytes: frame, FCS, preamble and gap), told
/// apart by IP source. From the late flow's first frame to the end of
/// the first flow's last: from when both stay within 10 % of the fair
/// share (half the line, 50 Gb/s), how many windows are, and the mean
/// rates. DCQCN cuts both flows and recovers them together, so the
/// shares stay fair on average while the sum swings well below the line
/// (the queue empties between cuts).
const FAIR_WINDOW: u64 = 12_500;

fn fairness(name: &str) {
    let v = load(name);
    let r = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    let rep = &r.report;
    assert!(rep.clean(), "{name}: {}", rep.failures.join("\n"));
    let comments = rep.tx_comments.as_ref().unwrap();
    // Per flow (host 1, host 2): (cycle, wire bytes) of its frames to h0.
    let mut flows: [Vec<(u64, u64)>; 2] = [Vec::new(), Vec::new()];
    for ((at, f), c) in rep.tx_frames.iter().zip(comments) {
        if c != "switch to h0" || f.len() < 18 + 20 || f[12..14] != [0x81, 0x00] {
            continue;
        }
        // 802.1Q tagged IPv4: the source address's third byte is the host.
        let src_host = f[18 + 12 + 2] as usize;
        if let 1 | 2 = src_host {
            flows[src_host - 1].push((*at, f.len() as u64 + WIRE));
        }
    }
    let from = flows[1][0].0;
    let to = flows[0].last().unwrap().0.min(flows[1].last().unwrap().0);
    let fair = v.link.bits_per_cycle as f64 / 2.0;
    let windows = (to - from) / FAIR_WINDOW;
    let rate = |f: &[(u64, u64)], w: u64| {
        let (a, b) = (from + w * FAIR_WINDOW, from + (w + 1) * FAIR_WINDOW);
        let bytes: u64 = f.iter().filter(|x| x.0 >= a && x.0 < b).map(|x| x.1).sum();
        bytes as f64 * 8.0 / FAIR_WINDOW as f64
    };
    let ok: Vec<bool> = (0..windows)
        .map(|w| {
            flows
                .iter()
                .all(|f| (rate(f, w) - fair).abs() <= 0.1 * fair)
        })
        .collect();
    let us = |w: usize| (w as u64 * FAIR_WINDOW) as f64 / 250.0;
    let stays = ok
        .iter()
        .rposition(|&x| !x)
        .map_or(Some(0), |k| (k + 1 < ok.len()).then_some(k + 1));
    let mean: Vec<f64> = flows
        .iter()
        .map(|f| (0..windows).map(|w| rate(f, w)).sum::<f64>() / windows as f64 * 0.25)
        .collect();
    let show = |x: Option<usize>| x.map_or("not reached".into(), |w| format!("{:.0}", us(w)));
    figures::row(
        "fabric_fairness",
        &[
            "vector",
            "both stay within 10 % of 50 Gb/s from (us after the 2nd flow starts)",
            "50-us windows within",
            "mean rates while both run (Gb/s)",
        ],
        name,
        &[
            format!("`{name}`"),
            show(stays),
            format!("{} of {}", ok.iter().filter(|&&x| x).count(), ok.len()),
            format!("{:.1} + {:.1}", mean[0], mean[1]),
        ],
    );
    assert!(
        windows >= 10,
        "{name}: only {windows} windows with both flows"
    );
    // Fair on average: the two means within 10 % of each other.
    assert!(
        (mean[0] - mean[1]).abs() <= 0.1 * mean[0].max(mean[1]),
        "{name}: {mean:?}"
    );
}

#[test]
fn fairness_2flows() {
    fairness("fairness_2flows_paper");
    fairness("fairness_2flows_deployed");
}
