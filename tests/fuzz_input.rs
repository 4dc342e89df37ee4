//! Fuzzing on stable Rust, driven by proptest, inside `cargo test`:
//! - the shipped vectors, mutated (nasty numbers, wrong types, missing or
//!   unknown keys, duplicated entries), through the loader: never a panic;
//!   a vector that loads runs on the model (its run cut to a few thousand
//!   cycles) without a panic, or is refused by the environment with a
//!   message (exit 2 in the CLI);
//! - random and damaged frames through the `rx_parser` model and the
//!   testbench's reference classifier: never a panic, and the same event
//!   for every frame;
//! - random RX frames with random faults written symbolically and as hex
//!   bytes: both vectors run clean on `rnic_top` (the design's counters as
//!   the reference predicts from the bytes) and leave the same counters.
//!
//! Default: 2 000 mutated vectors, 100 000 frames (cases of 50) and 500
//! symbolic/hex pairs. `RNIC_RANDOM_CASES=N` runs N of each (N x 50
//! frames), `RNIC_RANDOM_SEED` another stream; a failure prints the
//! proptest input that replays it.

mod common;

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use rnic_model::ports::Beat;
use rnic_model::rx_parser::{RxParser, RxParserIn, RxParserOut};
use rnic_model::Dut;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::scenario::rx_reference::{self, DropReason, RxEvent};
use rnic_testbench::scenario::{self, Mode, RunOpts};
use rnic_testbench::vector::{self, AnyVector, QpSpec, RxFault, RxFrame, Vector};
use serde_json::{json, Value};

const DEFAULT_SEED: u64 = 0x6675_7A7A; // "fuzz"
/// Mutated vectors per default run.
const DEFAULT_VECTORS: u64 = 2000;
/// Frames per default run, in cases of [`FRAMES_PER_CASE`].
const DEFAULT_FRAMES: u64 = 100_000;
const FRAMES_PER_CASE: usize = 50;
/// Cycles a loaded mutant runs on the model.
const MUTANT_CYCLES: u64 = 3000;

fn runner(cases: u64) -> TestRunner {
    let seed = common::seed(DEFAULT_SEED);
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases: cases as u32,
            failure_persistence: None,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &key),
    )
}

// ------------------------------------------------------------- vectors

fn shipped() -> Vec<(PathBuf, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let files = vector::collect(&[root]).expect("vectors/");
    assert!(files.len() > 100);
    files
        .into_iter()
        .map(|f| {
            let v = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            (f, v)
        })
        .collect()
}

/// Values that break naive code: limits, wraps, signs, wrong types.
fn nasty(rng: &mut SplitMix64) -> Value {
    let xs = [
        json!(0),
        json!(1),
        json!(-1),
        json!(u64::MAX),
        json!(u64::MAX - 1),
        json!(1u64 << 63),
        json!(1u64 << 32),
        json!(u32::MAX),
        json!(1 << 24),
        json!((1 << 24) - 1),
        json!(1 << 23),
        json!(65535),
        json!(65536),
        json!(9600),
        json!(256),
        json!(7),
        json!(1e308),
        json!(0.5),
        json!("0xffffffffffffffff"),
        json!("0x"),
        json!(""),
        json!("x"),
        json!("../../x"),
        json!(null),
        json!(true),
        json!([]),
        json!({}),
        json!({"hex": "00"}),
        json!({"data": {"qp": 0, "psn": 0, "len": 70000}}),
        json!({"truncate": 1}),
        json!("fcs"),
        json!({"ipv4": {"src": "1.2.3.4", "dst": "5.6.7.8"}}),
    ];
    xs[rng.below(xs.len() as u64) as usize].clone()
}

/// Every node of `v` by its path (object keys and array indices).
fn paths(v: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                at.push(json!(k));
                paths(x, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (k, x) in a.iter().enumerate() {
                at.push(json!(k));
                paths(x, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn node<'a>(v: &'a mut Value, path: &[Value]) -> &'a mut Value {
    path.iter().fold(v, |v, k| match k {
        Value::String(s) => &mut v[s.as_str()],
        k => &mut v[k.as_u64().unwrap() as usize],
    })
}

/// One random mutation of `v`.
fn mutate(v: &mut Value, rng: &mut SplitMix64) {
    let mut all = Vec::new();
    paths(v, &mut Vec::new(), &mut all);
    let path = all[rng.below(all.len() as u64) as usize].clone();
    match rng.below(6) {
        0 | 1 => *node(v, &path) = nasty(rng),
        2 => {
            // Numbers: off by one, doubled, near a power of two.
            let n = node(v, &path);
            if let Some(x) = n.as_u64() {
                *n = json!(match rng.below(4) {
                    0 => x.wrapping_add(1),
                    1 => x.wrapping_sub(1),
                    2 => x.wrapping_mul(2),
                    _ => x ^ (1 << rng.below(64)),
                });
            } else {
                *n = nasty(rng);
            }
        }
        3 => {
            // Take a key or an element away.
            if let Some((last, parent)) = path.split_last() {
                match node(v, parent) {
                    Value::Object(m) => {
                        m.remove(last.as_str().unwrap());
                    }
                    Value::Array(a) => {
                        a.remove(last.as_u64().unwrap() as usize);
                    }
                    _ => {}
                }
            }
        }
        4 => {
            // Duplicate an element, or add a key (known elsewhere or not).
            let keys = ["qp", "at", "count", "every", "len", "psn", "fault", "bogus"];
            match node(v, &path) {
                Value::Array(a) if !a.is_empty() => {
                    let x = a[rng.below(a.len() as u64) as usize].clone();
                    a.push(x);
                }
                Value::Object(m) => {
                    let k = keys[rng.below(keys.len() as u64) as usize];
                    m.insert(k.into(), nasty(rng));
                }
                _ => *node(v, &path) = nasty(rng),
            }
        }
        _ => {
            // Rename a key (a frame of another kind, a fault of another name).
            let names = [
                "pfc", "cnp", "ack", "nak", "data", "hex", "ipv4", "ipv6", "tver",
            ];
            if let Some((last, parent)) = path.split_last() {
                if let Value::Object(m) = node(v, parent) {
                    if let Some(x) = m.remove(last.as_str().unwrap()) {
                        let k = names[rng.below(names.len() as u64) as usize];
                        m.insert(k.into(), x);
                    }
                }
            }
        }
    }
}

#[test]
fn mutated_vectors_never_panic() {
    let vectors = shipped();
    let cases = common::cases(DEFAULT_VECTORS);
    // proptest's runner takes a Fn: tallies in cells.
    let (loaded, refused, run_errors) = (Cell::new(0u64), Cell::new(0u64), Cell::new(0u64));
    let messages = RefCell::new(std::collections::BTreeSet::new());
    runner(cases)
        .run(&(0..vectors.len(), any::<u64>()), |(k, seed)| {
            let (file, v) = &vectors[k];
            let mut rng = SplitMix64::new(seed);
            let mut m = v.clone();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut m, &mut rng);
            }
            let text = m.to_string();
            match AnyVector::parse(file, &text) {
                Err(e) => {
                    refused.set(refused.get() + 1);
                    let e = e.to_string();
                    // A refusal names the file and a field, then says why.
                    let rest = e.strip_prefix(&format!("{}: ", file.display()));
                    prop_assert!(
                        rest.is_some_and(|r| r.contains(": ") && !r.contains("Some(")),
                        "not `file: field: reason`: {e}"
                    );
                    messages
                        .borrow_mut()
                        .insert(e.split(": ").nth(1).unwrap_or("").to_string());
                }
                Ok(AnyVector::Single(mut vec)) => {
                    loaded.set(loaded.get() + 1);
                    vec.max_cycles = vec.max_cycles.min(MUTANT_CYCLES);
                    if scenario::run(&vec, Mode::Model, &RunOpts::default()).is_err() {
                        run_errors.set(run_errors.get() + 1);
                    }
                }
                Ok(AnyVector::System(mut vec)) => {
                    loaded.set(loaded.get() + 1);
                    vec.max_cycles = vec.max_cycles.min(MUTANT_CYCLES);
                    if scenario::pair::run(&vec, Mode::Model, &RunOpts::default()).is_err() {
                        run_errors.set(run_errors.get() + 1);
                    }
                }
                Ok(AnyVector::Fabric(mut vec)) => {
                    loaded.set(loaded.get() + 1);
                    vec.max_cycles = vec.max_cycles.min(MUTANT_CYCLES);
                    if scenario::fabric::run(&vec, Mode::Model, &RunOpts::default()).is_err() {
                        run_errors.set(run_errors.get() + 1);
                    }
                }
            }
            Ok(())
        })
        .unwrap();
    eprintln!(
        "{cases} mutated vectors: {} refused ({} distinct fields named), {} loaded and ran \
         ({} refused by the environment), 0 panics",
        refused.get(),
        messages.borrow().len(),
        loaded.get(),
        run_errors.get(),
    );
    let (loaded, refused) = (loaded.get(), refused.get());
    assert_eq!(loaded + refused, cases);
    if cases >= DEFAULT_VECTORS {
        // Both sides of the loader are exercised.
        assert!(
            refused > cases / 4 && loaded > cases / 10,
            "{refused} / {loaded}"
        );
    }
}

// ------------------------------------------------------------- frames

/// A frame QP `q`'s peer might send, as a vector would write it.
fn symbolic(rng: &mut SplitMix64) -> RxFrame {
    let qp = rng.below(3) as u32;
    let psn = rng.next_u64() as u32 & 0xFF_FFFF;
    match rng.below(6) {
        0 => {
            let mut quanta = std::collections::BTreeMap::new();
            for p in 0..8 {
                if rng.percent(30) {
                    quanta.insert(p, rng.next_u64() as u16);
                }
            }
            RxFrame::Pfc { quanta }
        }
        1 => RxFrame::Cnp { qp },
        2 => RxFrame::Ack {
            qp,
            psn,
            msn: rng.next_u64() as u32 & 0xFF_FFFF,
        },
        3 => RxFrame::Nak {
            qp,
            psn,
            code: rng.below(32) as u8,
            rnr: rng.percent(50),
        },
        _ => {
            let op = rnic_testbench::wire::roce::OPCODES[rng.below(31) as usize].opcode;
            let info = rnic_testbench::wire::roce::opcode_info(op).unwrap();
            let none = info.payload == rnic_testbench::wire::roce::Payload::None;
            RxFrame::Data {
                qp,
                psn,
                len: if none { 0 } else { rng.below(1500) as u32 },
                ce: rng.percent(50),
                opcode: (op != 0x81).then_some(op),
                reth: None,
                imm: None,
                aeth: None,
            }
        }
    }
}

fn qps() -> Vec<QpSpec> {
    let v: Value = json!([
        {"qp": 0, "type": "rc", "remote_qpn": 256, "mtu": 1024,
         "dst_mac": "02:00:00:00:01:00", "src_mac": "02:00:00:00:00:00",
         "ip": {"ipv4": {"src": "10.0.0.1", "dst": "10.0.1.1"}},
         "sq": {"base": "0x10000000", "log_size": 4}},
        {"qp": 1, "type": "uc", "remote_qpn": 257, "mtu": 4096, "ecn": true,
         "dst_mac": "02:00:00:00:01:01", "src_mac": "02:00:00:00:00:01",
         "ip": {"ipv6": {"src": "fd00::1", "dst": "fd00::2"}}, "vlan": {"vid": 5, "pcp": 3},
         "sq": {"base": "0x10010000", "log_size": 4}},
        {"qp": 2, "type": "rc", "remote_qpn": 258, "mtu": 256,
         "dst_mac": "02:00:00:00:01:02", "src_mac": "02:00:00:00:00:02",
         "ip": {"ipv4": {"src": "10.0.0.2", "dst": "10.0.1.2"}}, "vlan": {"vid": 9, "pcp": 0},
         "sq": {"base": "0x10020000", "log_size": 4}}
    ]);
    serde_json::from_value(v).unwrap()
}

/// A frame: built well, then (mostly) damaged at random: bytes flipped
/// (often in the headers), cut, grown with padding, or pure random bytes.
fn frame(rng: &mut SplitMix64, qps: &[QpSpec]) -> (Vec<u8>, bool) {
    let cc = vector::CcSpec::default();
    let mut f = if rng.percent(5) {
        (0..rng.below(300)).map(|_| rng.next_u64() as u8).collect()
    } else {
        let f = vector::rx::build_frame(&symbolic(rng), qps, &cc).unwrap();
        // Header rewrites with the ICRC refilled: unknown opcodes, TVer,
        // DestQP, UDP port.
        let fault = match rng.below(10) {
            0 => Some(RxFault::Tver(rng.below(16) as u8)),
            1 => Some(RxFault::DestQp(rng.below(20) as u32)),
            2 => Some(RxFault::UdpDport(if rng.percent(50) {
                4791
            } else {
                rng.next_u64() as u16
            })),
            _ => None,
        };
        let f = match vector::rx::apply_fault(f.clone(), fault) {
            Ok((g, _)) => g,
            Err(_) => f,
        };
        if rng.percent(5) && f.len() > 60 {
            // An opcode outside the table, ICRC refilled.
            let mut g = f.clone();
            let bth = rnic_testbench::wire::roce::RoceFrame::new_unchecked(&g[..]).bth_offset();
            if g.len() > bth + 16 {
                g[bth] =
                    [0x12, 0x13, 0x14, 0x15, 0x18, 0x30, 0x64, 0x80, 0xFF][rng.below(9) as usize];
                rnic_testbench::wire::roce::RoceFrame::new_unchecked(&mut g[..]).fill_icrc();
                return (g, false);
            }
        }
        f
    };
    for _ in 0..rng.below(4) {
        match rng.below(5) {
            0 | 1 if !f.is_empty() => {
                // Headers are the first ~80 bytes: hit them most.
                let k = if rng.percent(80) {
                    rng.below(f.len().min(80) as u64)
                } else {
                    rng.below(f.len() as u64)
                } as usize;
                f[k] ^= 1 << rng.below(8);
            }
            2 if !f.is_empty() => f.truncate(rng.below(f.len() as u64) as usize),
            3 => f.resize(f.len() + rng.below(40) as usize, 0),
            _ => {}
        }
    }
    if f.is_empty() {
        f.push(0);
    }
    (f, rng.percent(3))
}

fn observed(o: &RxParserOut) -> Option<RxEvent> {
    if o.pfc_valid {
        let mut quanta = [0u16; 8];
        for (k, q) in quanta.iter_mut().enumerate() {
            *q = (o.pfc_quanta >> (16 * k)) as u16;
        }
        return Some(RxEvent::Pfc {
            enable: o.pfc_enable,
            quanta,
        });
    }
    if o.cnp_valid {
        return Some(RxEvent::Cnp {
            qp: o.cnp_qp as u32,
        });
    }
    if o.data_valid {
        return Some(RxEvent::Data {
            qp: o.data_qp as u32,
            ce: o.data_ce,
        });
    }
    if o.ack_valid {
        return Some(RxEvent::Ack {
            qp: o.ack_qp as u32,
            psn: o.ack_psn,
            syndrome: o.ack_syndrome,
            msn: o.ack_msn,
        });
    }
    o.ev_drop
        .then(|| RxEvent::Drop(DropReason::ALL[o.ev_drop_reason as usize]))
}

#[test]
fn random_frames_same_event_in_model_and_reference() {
    let qps = qps();
    let cases = common::cases(DEFAULT_FRAMES / FRAMES_PER_CASE as u64);
    let tally = RefCell::new(std::collections::BTreeMap::new());
    runner(cases)
        .run(&any::<u64>(), |seed| {
            let mut rng = SplitMix64::new(seed);
            // QPs 0 and 2 live (RTS / ERROR), 1 in RESET or not.
            let state: u32 = 0b10_00_01 | (rng.below(2) as u32) << 2;
            let live = |q: u32| q < 16 && state >> (2 * q) & 3 != 0;
            let mut model = RxParser::new();
            model.reset();
            let mut want = Vec::new();
            let mut got = Vec::new();
            for _ in 0..FRAMES_PER_CASE {
                let (f, fcs) = frame(&mut rng, &qps);
                want.push(rx_reference::classify(&f, fcs, live));
                for (k, chunk) in f.chunks(64).enumerate() {
                    let mut data = [0u8; 64];
                    data[..chunk.len()].copy_from_slice(chunk);
                    let last = (k + 1) * 64 >= f.len();
                    let i = RxParserIn {
                        rx_tvalid: true,
                        rx_tdata: Beat(data),
                        rx_tkeep: if chunk.len() == 64 {
                            u64::MAX
                        } else {
                            (1 << chunk.len()) - 1
                        },
                        rx_tlast: last,
                        rx_tuser: last && fcs,
                        qp_state_all: state,
                    };
                    got.extend(observed(&model.tick(&i)));
                }
            }
            for _ in 0..4 {
                got.extend(observed(&model.tick(&RxParserIn {
                    qp_state_all: state,
                    ..Default::default()
                })));
            }
            prop_assert_eq!(&got, &want);
            for e in &want {
                *tally.borrow_mut().entry(e.counter()).or_insert(0u64) += 1;
            }
            Ok(())
        })
        .unwrap();
    let tally = tally.into_inner();
    let total: u64 = tally.values().sum();
    eprintln!("{total} frames, model = reference for each, 0 panics: {tally:?}");
    assert_eq!(total, cases * FRAMES_PER_CASE as u64);
    if cases * FRAMES_PER_CASE as u64 >= DEFAULT_FRAMES {
        // Every event and drop reason is reached.
        let events = ["rx_pfc", "rx_cnp", "rx_data", "rx_ack"];
        let drops = DropReason::ALL.map(DropReason::counter);
        for name in events.into_iter().chain(drops) {
            assert!(
                tally.get(name).copied().unwrap_or(0) > 100,
                "{name}: {tally:?}"
            );
        }
    }
}

// ------------------------------------------------- symbolic against hex

/// Random RX frames (with random faults) on an `rnic_top` vector, and the
/// same vector with every frame written as its bytes: both run clean on the
/// model (the design's counters equal the reference's prediction from the
/// bytes, CNPs and pauses as the bytes call for) and leave the same counters.
#[test]
fn symbolic_and_hex_frames_get_the_same_prediction_and_counters() {
    let cases = (common::cases(DEFAULT_VECTORS) / 4).max(1);
    let faults = [
        None,
        None,
        None,
        Some(RxFault::Fcs),
        Some(RxFault::Icrc),
        Some(RxFault::CoveredByte),
        Some(RxFault::IpChecksum),
        Some(RxFault::UdpDport(4792)),
        Some(RxFault::DestQp(9)),
        Some(RxFault::Tver(1)),
        Some(RxFault::Truncate(50)),
    ];
    let qps_spec = qps();
    let qps = serde_json::to_value(&qps_spec).unwrap();
    runner(cases)
        .run(&any::<u64>(), |seed| {
            let mut rng = SplitMix64::new(seed);
            let mut rx = Vec::new();
            for k in 0..1 + rng.below(12) {
                let frame = symbolic(&mut rng);
                let mut fault = faults[rng.below(faults.len() as u64) as usize];
                // Only faults that fit the frame (no ip_checksum on IPv6, no
                // header fault on PFC, no cut past the end).
                let bytes =
                    vector::rx::build_frame(&frame, &qps_spec, &Default::default()).unwrap();
                if vector::rx::apply_fault(bytes, fault).is_err() {
                    fault = None;
                }
                rx.push(json!({"at": 40 * k, "frame": frame, "fault": fault}));
            }
            let v = json!({
                "format": 1, "name": "sym_hex", "description": "d", "checked_against": "c",
                "top": "rnic_top", "qps": qps, "max_cycles": 100000,
                "cqs": [{"cq": 0, "ring": {"base": "0x20000000", "log_size": 6}}],
                "rx": rx,
            });
            let sym = Vector::parse(Path::new("sym.json"), &v.to_string())
                .unwrap_or_else(|e| panic!("{e}"));
            let mut hex = sym.clone();
            for r in &mut hex.rx {
                let b = vector::rx::build_frame(&r.frame, &sym.qps, &sym.cc).unwrap();
                r.frame = RxFrame::Hex(b.iter().map(|x| format!("{x:02x}")).collect());
            }
            let a = scenario::run(&sym, Mode::Model, &RunOpts::default()).unwrap();
            let b = scenario::run(&hex, Mode::Model, &RunOpts::default()).unwrap();
            prop_assert!(a.clean(), "symbolic: {:?}", a.failures);
            prop_assert!(b.clean(), "hex: {:?}", b.failures);
            prop_assert_eq!(&a.counters, &b.counters);
            prop_assert_eq!(&a.frames, &b.frames);
            Ok(())
        })
        .unwrap();
    eprintln!("{cases} vectors: symbolic and hex frames judged alike");
}
