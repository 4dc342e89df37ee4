//! Cross-check of the testbench's RoCEv2 frames against scapy: frames built
//! by [`RoceRepr::emit`] (IPv4 and IPv6, with and without an 802.1Q tag,
//! every RC/UC opcode of the table with its extension headers, payloads from
//! 0 to 4096 bytes with every PadCnt, a CNP) are written to a pcap by
//! [`PcapWriter`] and checked by `tests/scapy_roce_check.py`, which decodes
//! them with scapy's layers (its ICRC included) and reports the fields; every
//! field must be the one we meant. Then one covered byte of one frame is
//! flipped and the script must report exactly that frame's ICRC as bad.
//!
//! Missing python3 or scapy is a FAILURE, not a skip: CI installs them
//! (scripts/install-deps.sh). Set `PYTHON` to choose the interpreter. The
//! pcaps are left in the target tmp dir for a look in Wireshark.

use std::path::{Path, PathBuf};
use std::process::Output;

use rnic_testbench::check::scapy;
use rnic_testbench::pcap::PcapWriter;
use rnic_testbench::wire::roce::{
    aeth, bth, ethernet, ipv4, ipv6, opcode_info, pad_cnt, reth, udp, IpRepr, Payload, RoceFrame,
    RoceRepr, OPCODES,
};
use serde_json::{json, Value};

fn run_script(pcap: &Path, extra: &[&str]) -> Output {
    scapy::run(pcap, extra).unwrap_or_else(|e| panic!("{e}"))
}

/// xorshift64*: reproducible field values without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn bits(&mut self, n: u32) -> u64 {
        self.next() >> (64 - n)
    }
    fn flag(&mut self) -> bool {
        self.bits(1) == 1
    }
}

fn frame(rng: &mut Rng, opcode: u8, ipv6: bool, tagged: bool, len: usize) -> RoceRepr {
    let info = opcode_info(opcode).unwrap();
    let ip = if ipv6 {
        IpRepr::V6(ipv6::Repr {
            src: (rng.next() as u128 | (rng.next() as u128) << 64).into(),
            dst: (rng.next() as u128 | (rng.next() as u128) << 64).into(),
            dscp: rng.bits(6) as u8,
            ecn: rng.bits(2) as u8,
            flow_label: rng.bits(20) as u32,
            hop_limit: rng.bits(8) as u8,
        })
    } else {
        IpRepr::V4(ipv4::Repr {
            src: (rng.bits(32) as u32).into(),
            dst: (rng.bits(32) as u32).into(),
            dscp: rng.bits(6) as u8,
            ecn: rng.bits(2) as u8,
            ident: rng.bits(16) as u16,
            dont_frag: rng.flag(),
            ttl: rng.bits(8) as u8,
        })
    };
    RoceRepr {
        eth: ethernet::Repr {
            dst: rng.bits(48),
            src: rng.bits(48),
            vlan: tagged.then(|| ethernet::VlanTag {
                pcp: rng.bits(3) as u8,
                dei: rng.flag(),
                vid: rng.bits(12) as u16,
            }),
        },
        ip,
        udp: udp::Repr {
            src_port: 49152 | rng.bits(14) as u16,
            checksum: 0,
        },
        bth: bth::Repr {
            opcode,
            se: rng.flag(),
            migreq: rng.flag(),
            pkey: rng.bits(16) as u16,
            fecn: rng.flag(),
            becn: rng.flag(),
            dest_qp: rng.bits(24) as u32,
            ack_req: rng.flag(),
            psn: rng.bits(24) as u32,
        },
        reth: info.reth.then(|| reth::Repr {
            va: rng.next(),
            rkey: rng.bits(32) as u32,
            dma_len: rng.bits(32) as u32,
        }),
        aeth: info.aeth.then(|| aeth::Repr {
            syndrome: rng.bits(8) as u8,
            msn: rng.bits(24) as u32,
        }),
        imm: info.imm.then(|| rng.bits(32) as u32),
        payload: (0..len).map(|_| rng.bits(8) as u8).collect(),
    }
}

/// Every opcode with its headers, IPv4/IPv6 x tag/no tag, payload lengths
/// 0..=4096 with every PadCnt (FIRST/MIDDLE: whole MTUs), and a CNP as the
/// spec sends it (BECN, PSN 0, DSCP 48).
fn frames() -> Vec<RoceRepr> {
    let mut rng = Rng(0x5EED_0FC0_FFEE);
    let mut out = Vec::new();
    for info in &OPCODES {
        let lens: &[usize] = match info.payload {
            Payload::None => &[0],
            Payload::Full => &[256, 1024, 4096],
            Payload::Any => &[0, 1, 2, 3, 4, 5, 1021, 4093, 4094, 4095, 4096],
        };
        for &len in lens {
            for (ipv6, tagged) in [(false, false), (false, true), (true, false), (true, true)] {
                out.push(frame(&mut rng, info.opcode, ipv6, tagged, len));
            }
        }
    }
    let mut cnp = frame(&mut rng, 0x81, false, true, 0);
    cnp.bth = bth::Repr {
        se: false,
        migreq: false,
        fecn: false,
        becn: true,
        ack_req: false,
        psn: 0,
        ..cnp.bth
    };
    if let IpRepr::V4(ip) = &mut cnp.ip {
        (ip.dscp, ip.ecn) = (48, 0);
    }
    out.push(cnp);
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The fields the script must decode from `r`.
fn expected(r: &RoceRepr) -> Value {
    let info = opcode_info(r.bth.opcode).unwrap();
    let ip = match &r.ip {
        IpRepr::V4(ip) => json!({
            "version": 4, "src": hex(&ip.src.octets()), "dst": hex(&ip.dst.octets()),
            "dscp": ip.dscp, "ecn": ip.ecn, "ident": ip.ident, "dont_frag": ip.dont_frag,
            "ttl": ip.ttl,
        }),
        IpRepr::V6(ip) => json!({
            "version": 6, "src": hex(&ip.src.octets()), "dst": hex(&ip.dst.octets()),
            "dscp": ip.dscp, "ecn": ip.ecn, "flow_label": ip.flow_label,
            "hop_limit": ip.hop_limit,
        }),
    };
    let b = &r.bth;
    json!({
        "dst_mac": r.eth.dst, "src_mac": r.eth.src,
        "vlan": r.eth.vlan.map(|t| json!({"pcp": t.pcp, "dei": t.dei, "vid": t.vid})),
        "ip": ip,
        "udp": {"sport": r.udp.src_port, "checksum": r.udp.checksum},
        "bth": {
            "opcode": b.opcode, "se": b.se, "migreq": b.migreq,
            "pad_cnt": pad_cnt(r.payload.len()), "pkey": b.pkey, "fecn": b.fecn,
            "becn": b.becn, "dest_qp": b.dest_qp, "ack_req": b.ack_req, "psn": b.psn,
            // Our opcode table's names are scapy's.
            "scapy_name": info.name,
        },
        "name": info.name,
        "reth": r.reth.map(|h| json!({"va": h.va, "rkey": h.rkey, "dma_len": h.dma_len})),
        "aeth": r.aeth.map(|h| json!({"syndrome": h.syndrome, "msn": h.msn})),
        "imm": r.imm,
        "payload": hex(&r.payload),
        "errors": [],
        "icrc_bad": false,
    })
}

/// Every key of `want` (recursively) has the same value in `got`.
fn assert_subset(want: &Value, got: &Value, path: &str) {
    match want {
        Value::Object(m) => {
            for (k, v) in m {
                assert_subset(v, &got[k], &format!("{path}.{k}"));
            }
        }
        _ => assert_eq!(got, want, "{path}"),
    }
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let mut w = PcapWriter::new(path).unwrap();
    for (i, f) in frames.iter().enumerate() {
        // 4 ns per 512-bit beat at 250 MHz, one frame after the other.
        w.write_frame(i as u64 * 100_000, f).unwrap();
    }
    w.finish().unwrap();
}

fn tmp(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

#[test]
fn scapy_accepts_our_frames_and_catches_a_flipped_byte() {
    let reprs = frames();
    let bytes: Vec<Vec<u8>> = reprs.iter().map(RoceRepr::to_bytes).collect();
    assert!(bytes.len() > 800, "{} frames", bytes.len());
    for (r, b) in reprs.iter().zip(&bytes) {
        assert_eq!(&RoceRepr::parse_bytes(b).unwrap(), r);
    }
    // Coverage of what the test claims: both IP versions with every PadCnt.
    for v6 in [false, true] {
        for pad in 0..4 {
            assert!(reprs
                .iter()
                .any(|r| matches!(r.ip, IpRepr::V6(_)) == v6 && pad_cnt(r.payload.len()) == pad));
        }
    }

    let good = tmp("roce_scapy_good.pcap");
    let json_path = tmp("roce_scapy_good.json");
    write_pcap(&good, &bytes);
    let out = run_script(&good, &["--json", json_path.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scapy_roce_check.py rejects our frames ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = format!("summary: {0} frames, {0} ok, 0 bad", bytes.len());
    assert!(stdout.contains(&summary), "{stdout}");
    let decoded: Value = serde_json::from_slice(&std::fs::read(&json_path).unwrap()).unwrap();
    let decoded = decoded.as_array().unwrap();
    assert_eq!(decoded.len(), reprs.len());
    for (i, (r, got)) in reprs.iter().zip(decoded).enumerate() {
        assert_subset(&expected(r), got, &format!("frame {i}"));
    }

    // One covered byte flipped: a payload byte in the middle of a long IPv6
    // frame, so that only the ICRC can notice.
    let victim = reprs
        .iter()
        .position(|r| r.payload.len() == 4093 && matches!(r.ip, IpRepr::V6(_)))
        .unwrap();
    let mut broken = bytes.clone();
    let at = RoceFrame::new_checked(&bytes[victim][..])
        .unwrap()
        .payload_offset()
        + 2000;
    broken[victim][at] ^= 0x10;
    let bad = tmp("roce_scapy_bad_icrc.pcap");
    write_pcap(&bad, &broken);

    let out = run_script(&bad, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("frame {victim}: ")))
        .unwrap();
    assert!(
        line.starts_with(&format!("frame {victim}: BAD: ICRC ")),
        "{line}"
    );
    assert_eq!(stdout.matches("BAD").count(), 1, "{stdout}");

    let out = run_script(&bad, &["--expect-bad-icrc", &victim.to_string()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains(&format!("frame {victim}: BAD (expected): ICRC ")));
    // And the flag is not a blanket pass: the good file fails it.
    let out = run_script(&good, &["--expect-bad-icrc", &victim.to_string()]);
    assert_eq!(out.status.code(), Some(1));
}

/// The script's other checks are alive too, and it accepts the CNP captured
/// from ConnectX-4 Lx hardware (scapy's test/contrib/roce.uts).
#[test]
fn scapy_check_names_other_faults() {
    let cnp_hex = "e41d2dab2bc2 7cfe90643b32 0800 \
                   45c2003c718c400040119161 0a001101 0a001201 \
                   000012b700280000 8100ffff400001180000000000000000000000000000000000000000 \
                   82fd002a";
    let cnp: Vec<u8> = cnp_hex
        .split_whitespace()
        .collect::<String>()
        .as_bytes()
        .chunks(2)
        .map(|h| u8::from_str_radix(std::str::from_utf8(h).unwrap(), 16).unwrap())
        .collect();
    assert_eq!(cnp.len(), 74);
    let mut rng = Rng(7);
    let mut send = frame(&mut rng, 0x04, false, false, 5); // SEND ONLY, PadCnt 3
    send.ip = IpRepr::V4(ipv4::Repr {
        src: [10, 0, 0, 1].into(),
        dst: [10, 0, 0, 2].into(),
        dscp: 0,
        ecn: 0,
        ident: 0,
        dont_frag: true,
        ttl: 64,
    });
    let good = send.to_bytes();
    // Untagged IPv4: IP at 14, UDP at 34, BTH at 42, payload at 54.
    let refill = |mut b: Vec<u8>| {
        RoceFrame::new_unchecked(&mut b[..]).fill_icrc();
        b
    };
    let mut bad_sum = good.clone();
    bad_sum[25] ^= 1; // IPv4 checksum: masked, the ICRC still holds
    let mut bad_pad = good.clone();
    bad_pad[54 + 6] = 0xEE;
    let mut bad_udp_len = good.clone();
    bad_udp_len[39] += 4;
    let mut bad_tver = good.clone();
    bad_tver[43] |= 1;
    let frames = [
        cnp,
        good,
        bad_sum,
        refill(bad_pad),
        refill(bad_udp_len),
        refill(bad_tver),
    ];
    let path = tmp("roce_scapy_faults.pcap");
    write_pcap(&path, &frames);
    let out = run_script(&path, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("frame 0: ok  CNP "), "{stdout}");
    assert!(lines[0].contains("icrc=82fd002a"), "{stdout}");
    assert!(
        lines[1].starts_with("frame 1: ok  RC_SEND_ONLY "),
        "{stdout}"
    );
    for (line, what) in lines[2..6].iter().zip([
        "IPv4 checksum",
        "pad bytes not zero",
        "UDP length 36, IP payload is 32", // 8 + BTH 12 + 5 + pad 3 + ICRC 4
        "BTH TVer 1",
    ]) {
        assert!(line.contains(": BAD: ") && line.contains(what), "{line}");
        assert!(!line.contains("ICRC"), "{line}");
    }
    assert!(
        stdout.contains("summary: 6 frames, 2 ok, 4 bad"),
        "{stdout}"
    );
}
