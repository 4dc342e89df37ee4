//! Request frames from an implementation no one here wrote: scapy builds RC
//! SEND, SEND with immediate, WRITE and WRITE with immediate messages (ONLY
//! and FIRST/MIDDLE/LAST) for two QPs, one IPv4 and one IPv6 with a VLAN tag,
//! with a PSN wrap on the first (tests/scapy_inject.py). One NIC, model and
//! RTL in lockstep, receives them; then
//! - every frame it sent back is decoded by scapy and compared field by
//!   field with the answers the script expects from the protocol alone
//!   (an ACK per message, PSN, MSN, syndrome, addresses, ICRC);
//! - the host memory writes (MWr TLPs decoded by the testbench's TLP codec)
//!   put every WRITE payload at its VA's bus address and every SEND payload
//!   into its RECV buffer, byte for byte as the script made them;
//! - the receive completions are the script's messages in order (wr_id,
//!   opcode 128 / 129, byte_len, immediate);
//! - and the run's own independent checks (the responder reference, the
//!   PCIe rules) pass.
//!
//! Missing python3 or scapy is a failure, not a skip (CI installs them).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use rnic_testbench::env::root_complex::Direction;
use rnic_testbench::pcap;
use rnic_testbench::scenario::{self, Mode, RunOpts};
use rnic_testbench::vector::Vector;
use rnic_testbench::wire::tlp::{Tlp, TlpKind};
use serde_json::{json, Value};

const NIC_MAC: &str = "02:00:00:00:00:01";
const PEER_MAC: &str = "02:00:00:00:00:02";
/// Cycles between injected frames: each answer leaves before the next
/// request arrives, so no two ACKs coalesce and the answers are exact.
const GAP: u64 = 1500;
const RECVS_PER_QP: u64 = 4;
/// Each RECV's one buffer: room for the largest SEND of the program.
const RECV_BUF: u64 = 0x4000;

struct QpCfg {
    qp: u64,
    peer_qpn: u64,
    ipv6: bool,
    nic_ip: &'static str,
    peer_ip: &'static str,
    vlan: Option<(u64, u64)>,
    epsn: u64,
    mtu: u64,
    seed: u64,
}

const QPS: [QpCfg; 2] = [
    QpCfg {
        qp: 1,
        peer_qpn: 0x55,
        ipv6: false,
        nic_ip: "10.0.0.1",
        peer_ip: "10.0.0.2",
        vlan: None,
        epsn: 0xFF_FFFE,
        mtu: 1024,
        seed: 7,
    },
    QpCfg {
        qp: 2,
        peer_qpn: 0x56,
        ipv6: true,
        nic_ip: "fd00::1",
        peer_ip: "fd00::2",
        vlan: Some((5, 3)),
        epsn: 5,
        mtu: 256,
        seed: 9,
    },
];

// Memory regions: the remote-write target, and the RECV buffers.
const WR_KEY: u64 = 0x102;
const WR_VA: u64 = 0x7f00_0000_0000;
const WR_PBASE: u64 = 0x10_0000;
/// The memory fill of the WRITE (and READ) MR.
const WR_SEED: u64 = 3;
const RECV_KEY: u64 = 0x104;
const RECV_VA: u64 = 0x7e00_0000_0000;
const RECV_PBASE: u64 = 0x40_0000;
const MR_LEN: u64 = 0x20_0000;

fn tmp(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("resp_scapy");
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scapy_inject.py")
}

fn python(what: &str, a: &Path, b: &Path) -> std::process::Output {
    let out = Command::new("python3")
        .arg(script())
        .args([what.as_ref(), a.as_os_str(), b.as_os_str()])
        .output()
        .unwrap_or_else(|e| panic!("python3 not runnable ({e}); install python3 and scapy"));
    assert_ne!(
        out.status.code(),
        Some(2),
        "scapy_inject.py {what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Per QP: its RQ ring, and the buffer of its RECV k.
fn rq_base(qp: u64) -> u64 {
    0x3000_0000 + qp * 0x1_0000
}
fn recv_va(qp: u64, k: u64) -> u64 {
    RECV_VA + (qp * RECVS_PER_QP + k) * RECV_BUF
}

fn config() -> Value {
    let qps: Vec<Value> = QPS
        .iter()
        .map(|q| {
            json!({
                "qp": q.qp, "peer_qpn": q.peer_qpn, "ipv6": q.ipv6,
                "nic_ip": q.nic_ip, "peer_ip": q.peer_ip,
                "vlan": q.vlan.map(|(vid, pcp)| json!({"vid": vid, "pcp": pcp})),
                "epsn": q.epsn, "mtu": q.mtu, "udp_sport": 49152 + q.qp,
                "wr_va": WR_VA + q.qp * 0x4_0000, "wr_rkey": WR_KEY,
                // READ from a part of the MR no WRITE touches.
                "rd_va": WR_VA + q.qp * 0x4_0000 + 0x2_0003, "rd_rkey": WR_KEY, "seed": q.seed,
            })
        })
        .collect();
    // The READs find the vector's memory fill of the WRITE MR (seed 3).
    json!({"nic_mac": NIC_MAC, "peer_mac": PEER_MAC, "read": true,
           "mem_va": WR_VA, "mem_seed": WR_SEED, "qps": qps})
}

fn vector(frames: &[Value]) -> Value {
    let qps: Vec<Value> = QPS
        .iter()
        .map(|q| {
            let ip = if q.ipv6 {
                json!({"ipv6": {"src": q.nic_ip, "dst": q.peer_ip}})
            } else {
                json!({"ipv4": {"src": q.nic_ip, "dst": q.peer_ip}})
            };
            let mut v = json!({
                "qp": q.qp, "type": "rc", "state": "rts", "remote_qpn": q.peer_qpn,
                "psn": 0, "mtu": q.mtu, "pd": 1, "cq": 0,
                "dst_mac": PEER_MAC, "src_mac": NIC_MAC, "ip": ip,
                "udp_sport": 49152 + q.qp, "dscp": 26, "ecn": false, "pkey": 65535,
                "sq": {"base": format!("{:#x}", 0x1000_0000 + q.qp * 0x1_0000), "log_size": 4},
                "epsn": q.epsn,
                "rq": {"base": format!("{:#x}", rq_base(q.qp)), "log_size": 4},
                "rq_cq": 1, "remote_access": ["remote_write", "remote_read"],
            });
            if let Some((vid, pcp)) = q.vlan {
                v["vlan"] = json!({"vid": vid, "pcp": pcp});
            }
            v
        })
        .collect();
    let recvs: Vec<Value> = QPS
        .iter()
        .flat_map(|q| {
            (0..RECVS_PER_QP).map(move |k| {
                json!({"qp": q.qp, "wr_id": format!("{:#x}", 0xA000 + q.qp * 0x100 + k),
                       "sges": [{"addr": format!("{:#x}", recv_va(q.qp, k)),
                                 "len": RECV_BUF, "lkey": format!("{RECV_KEY:#x}")}]})
            })
        })
        .collect();
    let rx: Vec<Value> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| json!({"at": 2000 + GAP * i as u64, "frame": {"hex": f["hex"]}}))
        .collect();
    json!({
        "format": 1,
        "name": "resp_scapy",
        "description": "scapy-built RC requests (SEND, SEND+Imm, WRITE, WRITE+Imm; ONLY and FIRST/MIDDLE/LAST; IPv4 and IPv6+VLAN; PSN wrap) answered by one NIC",
        "checked_against": "tests/scapy_inject.py's expected answers decoded by scapy; MWr payloads; RECV CQEs; the run's responder reference",
        "top": "rnic_top",
        "config": {"mrrs": 512, "mps": 256, "requester_id": 256, "cpl_timeout": 50000},
        "root_complex": {"latency": 100, "rcb": 64, "cpl_size": 256, "split": "aligned",
                         "reorder": false, "seed": 1, "rq_ready_percent": 100, "faults": []},
        "client": {"rd_data_ready_percent": 100, "wr_data_valid_percent": 100, "seed": 1},
        "memory": [
            {"addr": format!("{WR_PBASE:#x}"), "len": MR_LEN, "seed": WR_SEED},
            {"addr": format!("{RECV_PBASE:#x}"), "len": MR_LEN, "seed": 4}
        ],
        "qps": qps,
        "mrs": [
            {"index": WR_KEY % 16, "key": format!("{WR_KEY:#x}"), "va": format!("{WR_VA:#x}"),
             "len": format!("{MR_LEN:#x}"), "pbase": format!("{WR_PBASE:#x}"), "pd": 1,
             "access": ["local_write", "remote_write", "remote_read"], "valid": true},
            {"index": RECV_KEY % 16, "key": format!("{RECV_KEY:#x}"), "va": format!("{RECV_VA:#x}"),
             "len": format!("{MR_LEN:#x}"), "pbase": format!("{RECV_PBASE:#x}"), "pd": 1,
             "access": ["local_write"], "valid": true}
        ],
        "cqs": [
            {"cq": 0, "ring": {"base": "0x20000000", "log_size": 6}},
            {"cq": 1, "ring": {"base": "0x20010000", "log_size": 6}}
        ],
        "wqes": [],
        "doorbells": [],
        "recvs": recvs,
        "rq_doorbells": QPS.iter().map(|q| json!({"at": 0, "qp": q.qp, "recvs": RECVS_PER_QP})).collect::<Vec<_>>(),
        "rx": rx,
        "max_cycles": 2000 + GAP * (frames.len() as u64 + 4) + 20000,
    })
}

/// Every byte the NIC wrote to host memory, by bus address (later writes win).
fn written(log: &[rnic_testbench::env::root_complex::TlpLogEntry]) -> BTreeMap<u64, u8> {
    let mut mem = BTreeMap::new();
    for e in log.iter().filter(|e| e.dir == Direction::Rq) {
        let Ok(t) = Tlp::new_checked(&e.bytes[..]) else {
            continue;
        };
        if t.kind().ok() != Some(TlpKind::MemWrite) {
            continue;
        }
        let (first, last, n) = (t.first_be(), t.last_be(), t.length_dw() as usize);
        for (i, b) in t.payload().iter().enumerate().take(4 * n) {
            let be = if i < 4 {
                first
            } else if i >= 4 * (n - 1) {
                last
            } else {
                0xF
            };
            if be >> (i % 4) & 1 == 1 {
                mem.insert(t.address() + i as u64, *b);
            }
        }
    }
    mem
}

fn hex(s: &Value) -> Vec<u8> {
    let s = s.as_str().unwrap();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn scapy_requests_get_exact_answers_memory_and_completions() {
    let cfg_path = tmp("config.json");
    std::fs::write(&cfg_path, serde_json::to_vec_pretty(&config()).unwrap()).unwrap();
    let built_path = tmp("built.json");
    let out = python("build", &cfg_path, &built_path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built: Value = serde_json::from_slice(&std::fs::read(&built_path).unwrap()).unwrap();
    let frames = built["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 2 * 11, "the script's program changed");

    let vpath = tmp("resp_scapy.json");
    std::fs::write(&vpath, serde_json::to_vec_pretty(&vector(frames)).unwrap()).unwrap();
    let v = Vector::load(&vpath).unwrap_or_else(|e| panic!("{e}"));
    let r = scenario::run(&v, Mode::Lockstep, &RunOpts::default()).unwrap();
    assert!(r.clean(), "{:?} {:?}", r.divergence, r.failures);
    assert_eq!(
        r.counters.get("drop_icrc"),
        Some(&0),
        "a scapy frame failed the NIC's ICRC"
    );

    // 1. The answers, decoded by scapy.
    let tx_pcap = tmp("answers.pcap");
    pcap::write_run(&tx_pcap, &r.tx_frames).unwrap();
    let out = python("check", &cfg_path, &tx_pcap);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "scapy_inject.py check:\n{text}");
    // Per QP 6 ACKs and the READ's 3 responses.
    assert!(text.contains("18 of 18 answers match"), "{text}");

    // 2. Host memory, from the MWr TLPs alone.
    let mem = written(&r.tlp_log);
    let messages = built["messages"].as_array().unwrap();
    let mut recv_cqes = Vec::new();
    for m in messages {
        let qp = m["qp"].as_u64().unwrap();
        let payload = hex(&m["payload"]);
        let kind = m["kind"].as_str().unwrap();
        if kind == "read" {
            continue; // its data is in the answers, checked above
        }
        // A WRITE (with or without immediate) lands at its VA; a SEND in
        // the buffer of the RECV it consumed.
        let at = match kind {
            "write" | "write_imm" => m["va"].as_u64().unwrap() - WR_VA + WR_PBASE,
            _ => recv_va(qp, m["recv"].as_u64().unwrap()) - RECV_VA + RECV_PBASE,
        };
        let got: Vec<Option<u8>> = (0..payload.len() as u64)
            .map(|i| mem.get(&(at + i)).copied())
            .collect();
        let want: Vec<Option<u8>> = payload.iter().map(|b| Some(*b)).collect();
        assert!(
            got == want,
            "qp {qp} {kind} of {} bytes not at {at:#x}",
            payload.len()
        );
        if let Some(k) = m.get("recv") {
            let imm = m.get("imm").and_then(Value::as_u64);
            let opcode = if kind == "write_imm" { 129 } else { 128 };
            recv_cqes.push((
                qp,
                0xA000 + qp * 0x100 + k.as_u64().unwrap(),
                opcode,
                payload.len() as u32,
                imm,
            ));
        }
    }
    assert_eq!(recv_cqes.len() as u64, 2 * RECVS_PER_QP);

    // 3. The receive completions, in order per QP, in the RQ's CQ.
    for q in &QPS {
        let want: Vec<_> = recv_cqes.iter().filter(|c| c.0 == q.qp).collect();
        let got: Vec<_> = r
            .cqes
            .iter()
            .filter(|c| c.cq == 1 && c.qp as u64 == q.qp)
            .collect();
        assert_eq!(got.len(), want.len(), "qp {}: {got:?}", q.qp);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.wr_id.0, g.opcode, g.status, g.len),
                (w.1, w.2, 0, w.3),
                "qp {}: {g:?}",
                q.qp
            );
            if let Some(imm) = w.4 {
                assert_eq!(g.imm.0, imm, "qp {}: immediate", q.qp);
            }
        }
    }
}
