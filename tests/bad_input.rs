//! Bad input gets a clear error, never a panic, a hang or a silent change
//! (issue "Bad input never panics"): one test per class of input that used
//! to go wrong. Each error must name the field and say why, in the
//! vector's own terms; each vector the tool accepts must run clean, its
//! RX frames judged by their bytes alone.

use std::path::Path;

use rnic_testbench::scenario::{self, Mode, Report, RunOpts};
use rnic_testbench::vector::{limits, Vector};
use serde_json::{json, Value};

/// A small `rnic_top` vector: QP 0 (RC, IPv4) and QP 1 (UC, IPv6 + VLAN
/// priority 3), one CQ, one MR, nothing to send.
fn base() -> Value {
    json!({
        "format": 1, "name": "bad_input", "description": "d", "checked_against": "c",
        "top": "rnic_top",
        "qps": [
            {"qp": 0, "type": "rc", "remote_qpn": 256, "psn": 100, "mtu": 1024, "cq": 0,
             "dst_mac": "02:00:00:00:01:00", "src_mac": "02:00:00:00:00:00",
             "ip": {"ipv4": {"src": "10.0.0.1", "dst": "10.0.1.1"}},
             "sq": {"base": "0x10000000", "log_size": 4}},
            {"qp": 1, "type": "uc", "remote_qpn": 257, "mtu": 4096, "cq": 0, "ecn": true,
             "dst_mac": "02:00:00:00:01:01", "src_mac": "02:00:00:00:00:01",
             "ip": {"ipv6": {"src": "fd00::1", "dst": "fd00::2"}},
             "vlan": {"vid": 5, "pcp": 3},
             "sq": {"base": "0x10010000", "log_size": 4}}
        ],
        "cqs": [{"cq": 0, "ring": {"base": "0x20000000", "log_size": 6}}],
        "mrs": [{"index": 1, "key": "0x101", "va": "0x100000", "len": "0x100000",
                 "pbase": "0x100000", "access": ["local_write"]}],
        "max_cycles": 200000
    })
}

/// `base()` with `path` (dotted, array indices as numbers) set to `value`.
fn with(mut v: Value, path: &str, value: Value) -> Value {
    let mut at = &mut v;
    for k in path.split('.') {
        at = match k.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => &mut at[k],
        };
    }
    *at = value;
    v
}

fn parse(v: &Value) -> Result<Vector, String> {
    Vector::parse(Path::new("v.json"), &v.to_string()).map_err(|e| e.to_string())
}

/// The error a vector gets; fails the test when it loads.
fn error(v: &Value) -> String {
    match parse(v) {
        Ok(_) => panic!("accepted: {v}"),
        Err(e) => e,
    }
}

fn assert_error(v: &Value, field: &str, words: &str) {
    let e = error(v);
    assert!(
        e.starts_with(&format!("v.json: {field}: ")) && e.contains(words),
        "expected `{field}: ...{words}...`, got `{e}`"
    );
}

/// Runs a vector on the model alone; it must be clean (every independent
/// check passed, complete).
fn run_clean(v: &Value) -> Report {
    let vec = parse(v).unwrap_or_else(|e| panic!("{e}"));
    let r = scenario::run(&vec, Mode::Model, &RunOpts::default()).expect("runs");
    assert!(
        r.clean(),
        "{}: failures {:?}, completed {}",
        vec.name,
        r.failures,
        r.completed
    );
    r
}

fn rx(frames: Value) -> Value {
    with(base(), "rx", frames)
}

// ------------------------------------------------------------- class 1

#[test]
fn class1_oversized_data_frames_are_errors_not_panics() {
    // 70000 payload bytes would overflow the IPv4 total length and the
    // IPv6 payload length (16 bits).
    for qp in [0, 1] {
        let v = rx(json!([{"frame": {"data": {"qp": qp, "psn": 1, "len": 70000}}}]));
        assert_error(&v, "rx[0].frame.data.len", "above the 9600-byte limit");
    }
    let v = rx(json!([{"frame": {"data": {"qp": 0, "psn": 1, "len": 9600}}}]));
    assert_error(&v, "rx[0].frame.data.len", "9600-byte limit");
}

#[test]
fn class1_every_known_opcode_builds_as_data_and_runs_clean() {
    // Every opcode of the table but CNP, with the headers it needs built
    // from the symbolic fields (or zero): the frame is well formed, and the
    // design's counters equal the reference's prediction from its bytes.
    let ops: Vec<u8> = rnic_testbench::wire::roce::OPCODES
        .iter()
        .map(|o| o.opcode)
        .filter(|&o| o != 0x81)
        .collect();
    assert_eq!(ops.len(), 30);
    let mut frames = Vec::new();
    for (k, &op) in ops.iter().enumerate() {
        let info = rnic_testbench::wire::roce::opcode_info(op).unwrap();
        let mut d = json!({"qp": k % 2, "psn": k, "opcode": op, "ce": k % 3 == 0});
        if info.payload != rnic_testbench::wire::roce::Payload::None {
            d["len"] = json!(17 + k);
        }
        if info.reth {
            d["reth"] = json!({"va": "0x1000", "rkey": "0x55", "len": 4096});
        }
        if info.imm {
            d["imm"] = json!("0xdeadbeef");
        }
        if info.aeth {
            d["aeth"] = json!({"syndrome": 0x1F, "msn": 7});
        }
        frames.push(json!({"at": 10 * k, "frame": {"data": d}}));
    }
    let r = run_clean(&rx(Value::Array(frames)));
    // 16 READ responses, data and the like count as data; one is an ACK.
    assert_eq!(r.counters["rx_frames"], 30);
    assert_eq!(
        r.counters["rx_ack"], 1,
        "0x11 (ACKNOWLEDGE) counts as an ACK"
    );
    assert_eq!(r.counters["rx_data"], 29);
}

#[test]
fn class1_cnp_as_data_and_mismatched_headers_are_refused() {
    let v = rx(json!([{"frame": {"data": {"qp": 0, "psn": 0, "opcode": 0x81}}}]));
    assert_error(&v, "rx[0].frame.data.opcode", "is a CNP");
    let v = rx(json!([{"frame": {"data": {"qp": 0, "psn": 0, "imm": 5}}}]));
    assert_error(&v, "rx[0].frame.data.imm", "carries no ImmDt");
    let v = rx(json!([{"frame": {"data": {"qp": 0, "psn": 0, "opcode": 12, "len": 4}}}]));
    assert_error(&v, "rx[0].frame.data.len", "carries no payload");
}

// ------------------------------------------------------------- class 2

#[test]
fn class2_resource_limits() {
    let v = with(
        base(),
        "memory",
        json!([{"addr": "0x0", "len": 1u64 << 40, "seed": 1}]),
    );
    assert_error(&v, "memory[0].len", "1024 MiB");
    let v = with(base(), "max_cycles", json!(limits::MAX_CYCLES + 1));
    assert_error(&v, "max_cycles", "is not in 1..=1000000000");
    let v = rx(json!([{"frame": {"cnp": {"qp": 0}}, "count": 5_000_000, "every": 1}]));
    let v = with(v, "max_cycles", json!(100_000_000));
    assert_error(&v, "rx[0].count", "more than 4194304 frames");
    let v = rx(json!([{"frame": {"hex": "00".repeat(9601)}}]));
    assert_error(&v, "rx[0].frame.hex", "above the 9600-byte limit");
    let v = with(
        base(),
        "wqes",
        json!([{"qp": 0, "opcode": "send", "wr_id": 1, "len": 1u64 << 31},
               {"qp": 0, "opcode": "send", "wr_id": 2, "len": 1u64 << 31}]),
    );
    assert_error(&v, "wqes[0].len", "1024 MiB");
}

#[test]
fn class2_files_that_never_end_or_are_too_big() {
    let e = Vector::load(Path::new("/dev/zero"))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "/dev/zero: (file): is not a regular file (a vector is a JSON file)"
    );
    let dir = std::env::temp_dir().join(format!("rnic_bad_input_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.json");
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(limits::MAX_FILE_BYTES + 1).unwrap(); // sparse: no disk used
    let e = Vector::load(&big).unwrap_err().to_string();
    assert!(
        e.ends_with("(file): larger than the 64 MiB a vector may be"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

// ------------------------------------------------------------- class 4

#[test]
fn class4_rx_frame_count_scales_linearly() {
    // 200 000 one-beat frames back to back (a PFC storm that pauses
    // nothing: quanta 0): the wire, the peer and the checks are O(1) per
    // frame, so this takes about a second on the model; it used to take
    // minutes (quadratic). Times are not asserted here: the README has them.
    let n = 200_000u64;
    let v = rx(json!([{"frame": {"pfc": {"quanta": {"3": 0}}}, "count": n, "every": 1}]));
    let v = with(v, "max_cycles", json!(2 * n + 10_000));
    let r = run_clean(&v);
    assert_eq!(r.counters["rx_pfc"], n);
    assert_eq!(r.counters["rx_frames"], n);
}

// ------------------------------------------------------------- class 5

#[test]
fn class5_times_past_the_run_are_errors() {
    let big = json!(u64::MAX - 3);
    let db = with(
        with(
            base(),
            "wqes",
            json!([{"qp": 0, "opcode": "send", "wr_id": 1, "len": 8}]),
        ),
        "doorbells",
        json!([{"at": big, "qp": 0, "wqes": 1}]),
    );
    assert_error(&db, "doorbells[0].at", "past the run's limit");
    let v = rx(json!([{"at": big, "frame": {"cnp": {"qp": 0}}}]));
    assert_error(&v, "rx[0].at", "past the run's limit");
    let v = rx(json!([{"at": 5, "frame": {"cnp": {"qp": 0}}, "count": 3, "every": big}]));
    assert_error(&v, "rx[0].every", "past the run's limit");
    let v = with(base(), "min_cycles", big.clone());
    assert_error(&v, "min_cycles", "past the run's limit");
    let v = with(base(), "peer", json!({"auto_ack": true, "ack_delay": big}));
    assert_error(&v, "peer.ack_delay", "past the run's limit");
}

#[test]
fn class5_values_that_do_not_fit_are_errors_not_masked() {
    let cnp = json!({"cnp": {"qp": 0}});
    for (fault, words) in [
        (json!({"tver": 16}), "tver 16 does not fit in 4 bits"),
        (
            json!({"dest_qp": 1 << 24}),
            "dest_qp 16777216 does not fit in 24 bits",
        ),
    ] {
        let v = rx(json!([{"frame": cnp.clone(), "fault": fault}]));
        assert_error(&v, "rx[0].fault", words);
    }
    let v = rx(json!([{"frame": {"ack": {"qp": 0, "psn": 1 << 24}}}]));
    assert_error(&v, "rx[0].frame.ack.psn", "does not fit in 24 bits");
    let v = rx(json!([{"frame": {"ack": {"qp": 0, "psn": 1, "msn": 1 << 24}}}]));
    assert_error(&v, "rx[0].frame.ack.msn", "does not fit in 24 bits");
    let v = rx(json!([{"frame": {"nak": {"qp": 0, "psn": 1, "code": 32}}}]));
    assert_error(&v, "rx[0].frame.nak.code", "5-bit code");
    let v = rx(json!([{"frame": {"data": {"qp": 0, "psn": 1 << 24}}}]));
    assert_error(&v, "rx[0].frame.data.psn", "does not fit in 24 bits");
    let mr = base()["mrs"][0].clone();
    let v = with(base(), "mrs", json!([mr.clone(), mr]));
    assert_error(&v, "mrs[1].index", "set by an earlier mrs entry");
    let cq = base()["cqs"][0].clone();
    let v = with(base(), "cqs", json!([cq.clone(), cq]));
    assert_error(&v, "cqs[1].cq", "set by an earlier cqs entry");
}

// ------------------------------------------------------------- class 6

#[test]
fn class6_bad_configuration_is_a_vector_error() {
    let v = with(base(), "qps.0.sq.base", json!("0xfffffffffffffc00"));
    assert_error(&v, "qps[0].sq.base", "reach 2^64");
    let v = with(base(), "cqs.0.ring.base", json!("0xfffffffffffffc00"));
    assert_error(&v, "cqs[0].ring.base", "reach 2^64");
    let v = with(base(), "config", json!({"cpl_timeout": 0}));
    assert_error(&v, "config.cpl_timeout", "0 would time out every read");
    let v = with(base(), "mrs.0.va", json!("0xffffffffffff0000"));
    assert_error(&v, "mrs[0].len", "wrap past 2^64");
}

// ------------------------------------------------------------- class 7

#[test]
fn class7_messages_a_user_can_act_on() {
    let v = with(
        base(),
        "wqes",
        json!([{"qp": 0, "opcode": "sned", "wr_id": 1, "len": 8}]),
    );
    assert_error(
        &v,
        "wqes[0].opcode",
        "\"sned\" is not an opcode: expected one of send, send_imm, write, write_imm, read",
    );
    let v = with(
        base(),
        "wqes",
        json!([{"qp": 0, "opcode": 300, "wr_id": 1, "len": 8}]),
    );
    assert_error(
        &v,
        "wqes[0].opcode",
        "raw opcode 300 does not fit in a byte",
    );
    let both = json!({"ipv4": {"src": "10.0.0.1", "dst": "10.0.0.2"},
                      "ipv6": {"src": "fd00::1", "dst": "fd00::2"}});
    let v = with(base(), "qps.0.ip", both);
    assert_error(
        &v,
        "qps[0].ip",
        "expected exactly one of ipv4 or ipv6, found 2: ipv4 and ipv6",
    );
    let v = with(base(), "qps.0.ip", json!({}));
    assert_error(&v, "qps[0].ip", "found an empty object");
    let v = rx(json!([{"frame": {"ack": {"qp": 0, "psn": 1}, "cnp": {"qp": 0}}}]));
    assert_error(&v, "rx[0].frame", "found 2: ack and cnp");
    let v = rx(json!([{"frame": {"cnp": {"qp": 0}}, "fault": {"trunc": 5}}]));
    assert_error(&v, "rx[0].fault", "found `trunc`");
    // A header fault on a frame that is not RoCE: no Rust debug text.
    let v = rx(json!([{"frame": {"pfc": {"quanta": {"1": 1}}}, "fault": {"udp_dport": 4792}}]));
    let e = error(&v);
    assert!(
        e.starts_with("v.json: rx[0].fault: udp_dport 4792 damages a RoCE header")
            && !e.contains("Some("),
        "{e}"
    );
    let v = with(base(), "mrs.0.index", json!(20));
    assert_error(&v, "mrs[0].index", "20 is not an MR table entry 0..=15");
}

// ------------------------------------------------------------- class 9

/// The same frames as hex: each symbolic frame of `v`'s rx list replaced by
/// its bytes (faults kept: they apply to the bytes alike).
fn as_hex(v: &Value) -> Value {
    let vec = parse(v).unwrap();
    let mut out = v.clone();
    for (k, r) in vec.rx.iter().enumerate() {
        let b = rnic_testbench::vector::rx::build_frame(&r.frame, &vec.qps, &vec.cc).unwrap();
        let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
        out["rx"][k]["frame"] = json!({ "hex": hex });
    }
    out
}

#[test]
fn class9_hex_frames_are_judged_like_symbolic_ones() {
    // PFC, CNP, ACK, NAK, CE-marked data (CNP expected), on both QPs.
    let v = with(
        rx(json!([
            {"at": 0, "frame": {"pfc": {"quanta": {"3": 700}}}},
            {"at": 100, "frame": {"cnp": {"qp": 1}}},
            {"at": 200, "frame": {"ack": {"qp": 0, "psn": 5}}},
            {"at": 300, "frame": {"nak": {"qp": 0, "psn": 5, "code": 1}}},
            {"at": 400, "frame": {"data": {"qp": 1, "psn": 9, "len": 100, "ce": true}}},
            {"at": 2000, "frame": {"data": {"qp": 0, "psn": 9, "len": 3, "ce": true}}},
        ])),
        "qps.1.cc",
        json!(true),
    );
    let sym = run_clean(&v);
    let hex = run_clean(&as_hex(&v));
    assert_eq!(sym.counters, hex.counters);
    for (name, want) in [
        ("rx_pfc", 1),
        ("rx_cnp", 1),
        ("rx_ack", 2),
        ("rx_data", 2),
        ("rx_ce", 2),
        ("cnp_sent", 2),
    ] {
        assert_eq!(hex.counters[name], want, "{name}");
    }
    assert_eq!(sym.frames, hex.frames, "the CNPs sent are the same");
}

#[test]
fn class9_padding_and_padcnt_follow_the_documented_rules() {
    // Ethernet padding after the IP packet is ignored (the IP length bounds
    // the packet), and PadCnt is not checked: both are data.
    let v = rx(json!([{"frame": {"data": {"qp": 0, "psn": 1, "len": 8}}}]));
    let vec = parse(&v).unwrap();
    let mut b =
        rnic_testbench::vector::rx::build_frame(&vec.rx[0].frame, &vec.qps, &vec.cc).unwrap();
    assert_eq!(b.len(), 66);
    let mut padded = b.clone();
    padded.resize(80, 0);
    // PadCnt 3 on an 8-byte payload whose last bytes are not zero: the
    // codec calls it malformed, the contract does not look. ICRC refilled.
    b[14 + 20 + 8 + 1] |= 0x30;
    rnic_testbench::wire::roce::RoceFrame::new_unchecked(&mut b[..]).fill_icrc();
    let hex = |f: &[u8]| f.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let r = run_clean(&rx(json!([
        {"at": 0, "frame": {"hex": hex(&padded)}},
        {"at": 10, "frame": {"hex": hex(&b)}},
    ])));
    assert_eq!(r.counters["rx_data"], 2);
    assert_eq!(r.counters["drop_not_roce"], 0);
}

#[test]
fn class9_a_hex_ack_completes_rc_work_like_a_symbolic_one() {
    // One signaled RC WRITE (PSN 100) on QP 0, acknowledged by an ACK
    // written symbolically or as its bytes: the reference expects the CQE
    // either way, and the design writes it.
    let v = with(
        with(
            with(
                base(),
                "wqes",
                json!([{"qp": 0, "opcode": "write", "wr_id": "0x77", "len": 64,
                        "laddr": "0x100000", "lkey": "0x101", "raddr": "0x9000", "rkey": 5}]),
            ),
            "doorbells",
            json!([{"at": 0, "qp": 0, "wqes": 1}]),
        ),
        "rx",
        json!([{"at": 3000, "frame": {"ack": {"qp": 0, "psn": 100}}}]),
    );
    let sym = run_clean(&v);
    let hex = run_clean(&as_hex(&v));
    assert_eq!(sym.cqes.len(), 1);
    assert_eq!(sym.cqes, hex.cqes);
    assert_eq!(hex.counters["ack_new"], 1);
}

#[test]
fn class6_a_setup_qp_step_comes_once_and_before_its_posts() {
    let prog = |steps: Value| with(base(), "program", steps);
    assert_error(
        &prog(json!([{"setup_qp": {"qp": 5}}])),
        "program[0].setup_qp.qp",
        "not in qps",
    );
    assert_error(
        &prog(json!([{"setup_qp": {"qp": 1}}, {"setup_qp": {"qp": 1}}])),
        "program[1].setup_qp.qp",
        "twice",
    );
    assert_error(
        &prog(json!([{"post_send": {"qp": 1, "wqes": 0}}, {"setup_qp": {"qp": 1}}])),
        "program[0].qp",
        "before its setup_qp",
    );
    let timed = with(
        prog(json!([{"setup_qp": {"qp": 1}}])),
        "doorbells",
        json!([{"at": 10, "qp": 1, "wqes": 0}]),
    );
    assert_error(&timed, "doorbells[0].qp", "program step");
}

#[test]
fn class6_an_ignored_write_must_be_one_the_map_ignores() {
    let step = |addr: &str, data: &str| {
        with(
            base(),
            "program",
            json!([{"ignored_write": {"addr": addr, "data": data}}]),
        )
    };
    // QP 0's CTRL word, a doorbell for a QP that exists, a global register,
    // an address that is not word-aligned: each would change the run.
    for (addr, data, words) in [
        ("0x8000", "0xffffffff", "a register"),
        ("0x10", "0x30001", "which exists"),
        ("0xc", "0x1", "only table words"),
        ("0x8802", "0x0", "aligned"),
    ] {
        assert_error(&step(addr, data), "program[0].ignored_write", words);
    }
    // Past the QP table and a doorbell for QP 16 load, and change nothing.
    let ok = step("0x8800", "0xffffffff");
    assert!(parse(&ok).is_ok());
    assert!(parse(&step("0x10", "0x100003")).is_ok());
    run_clean(&ok);
}
