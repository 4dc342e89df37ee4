//! Cross-check of the testbench's TLP encoding against an independent
//! implementation: cocotbext-pcie's `Tlp` class (PyPI `cocotbext-pcie`),
//! driven through `tests/pcie_crosscheck.py`.
//!
//! Both directions: TLPs built by [`TlpRepr`] (and completions produced by
//! the [`RootComplex`]) are decoded by cocotbext and every field compared;
//! TLPs built by cocotbext's own helpers from the same intent are compared
//! byte for byte with ours.
//!
//! Missing python3 or cocotbext-pcie is a FAILURE, not a skip: CI installs
//! them (`pip install cocotbext-pcie`). Set `PYTHON` to choose the
//! interpreter.

use std::process::Command;

use rnic_testbench::env::{Direction, HostMemory, RootComplex, RootComplexConfig, RqIn};
use rnic_testbench::wire::{to_beats, CplStatus, TlpRepr};
use serde_json::{json, Value};

fn python(args: &[String]) -> Value {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pcie_crosscheck.py");
    let out = Command::new(&py)
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `{py}` ({e}): this test needs python3 with cocotbext-pcie \
                 (`pip install cocotbext-pcie`)"
            )
        });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{script} failed ({}): {stderr}\nthis test needs python3 with cocotbext-pcie \
         (`pip install cocotbext-pcie`)",
        out.status
    );
    serde_json::from_slice(&out.stdout).expect("pcie_crosscheck.py printed no JSON")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The fields cocotbext must decode from `r`, as a JSON object.
fn expected(r: &TlpRepr) -> Value {
    match r {
        TlpRepr::MemRead {
            requester_id,
            tag,
            address,
            length_dw,
            first_be,
            last_be,
        } => json!({
            "fmt_type": if *address >= 1 << 32 { "MEM_READ_64" } else { "MEM_READ" },
            "requester_id": requester_id, "tag": tag, "address": address,
            "length": length_dw, "first_be": first_be, "last_be": last_be,
            "ep": false, "td": false, "tc": 0, "attr": 0, "data": "",
        }),
        TlpRepr::MemWrite {
            requester_id,
            tag,
            address,
            first_be,
            last_be,
            poisoned,
            data,
        } => json!({
            "fmt_type": if *address >= 1 << 32 { "MEM_WRITE_64" } else { "MEM_WRITE" },
            "requester_id": requester_id, "tag": tag, "address": address,
            "length": data.len() / 4, "first_be": first_be, "last_be": last_be,
            "ep": poisoned, "td": false, "data": hex(data),
        }),
        TlpRepr::Completion {
            status,
            byte_count,
            lower_address,
            requester_id,
            completer_id,
            tag,
            poisoned,
            data,
        } => json!({
            "fmt_type": if data.is_some() { "CPL_DATA" } else { "CPL" },
            "status": status.bits(), "byte_count": byte_count, "bcm": false,
            "lower_address": lower_address, "requester_id": requester_id,
            "completer_id": completer_id, "tag": tag, "ep": poisoned,
            "length": data.as_ref().map_or(0, |d| d.len() / 4),
            "data": hex(data.as_deref().unwrap_or(&[])),
        }),
    }
}

fn cpl(status: CplStatus, byte_count: u16, la: u8, data: Option<Vec<u8>>) -> TlpRepr {
    TlpRepr::Completion {
        status,
        byte_count,
        lower_address: la,
        requester_id: 0x0a10,
        completer_id: 0x0008,
        tag: 0xC3,
        poisoned: status == CplStatus::Sc && byte_count == 7,
        data,
    }
}

fn reprs() -> Vec<TlpRepr> {
    let payload: Vec<u8> = (0..=255u8).cycle().take(4093).collect();
    vec![
        TlpRepr::mem_read(0x0100, 0x2A, 0x1234_5678, 64),
        TlpRepr::mem_read(0xFFFF, 0xFF, 0x8765_4321_0000_0003, 1),
        TlpRepr::mem_read(0x0001, 0, 0xFFFF_F000, 4096), // Length 1024 -> 0
        TlpRepr::mem_read(0x0001, 1, 0x1_0000_0102, 5),
        TlpRepr::mem_write(0x0008, 5, 0x1001, &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66]),
        TlpRepr::mem_write(0x0008, 6, 0x2_0000_0003, &payload),
        TlpRepr::mem_write(0x0008, 7, 0x40, &[0xAB]),
        cpl(CplStatus::Sc, 0x102, 0x7E, Some(vec![0, 0, 0xBE, 0xEF])),
        cpl(CplStatus::Sc, 4096, 0, Some(vec![9; 128])),
        cpl(CplStatus::Sc, 7, 0x05, Some(vec![1; 8])),
        cpl(CplStatus::Ur, 4096, 0x10, None),
        cpl(CplStatus::Ca, 3, 0x7F, None),
    ]
}

fn compare(ours: &[u8], want: &Value, got: &Value) {
    for (k, v) in want.as_object().unwrap() {
        assert_eq!(
            &got[k],
            v,
            "field {k} of {}: cocotbext decoded {got}",
            hex(ours)
        );
    }
    assert_eq!(got["repacked"], hex(ours), "cocotbext re-packs differently");
    assert_eq!(
        got["check"],
        true,
        "cocotbext's check() rejects {}",
        hex(ours)
    );
}

#[test]
fn cocotbext_decodes_our_tlps() {
    let reprs = reprs();
    let bytes: Vec<Vec<u8>> = reprs.iter().map(TlpRepr::to_bytes).collect();
    let mut args = vec!["unpack".to_string()];
    args.extend(bytes.iter().map(|b| hex(b)));
    let got = python(&args);
    let got = got.as_array().expect("a JSON list");
    assert_eq!(got.len(), reprs.len());
    for ((r, b), g) in reprs.iter().zip(&bytes).zip(got) {
        compare(b, &expected(r), g);
    }
}

#[test]
fn cocotbext_encodes_like_us() {
    let specs = json!([
        {"kind": "mrd", "requester_id": 0x0100, "tag": 0x2A, "addr": 0x1234_5678u64, "len": 64},
        {"kind": "mrd", "requester_id": 0xABCD, "tag": 0xFF, "addr": 0x1_0000_0102u64, "len": 5},
        {"kind": "mrd", "requester_id": 1, "tag": 0, "addr": 0x3000u64, "len": 4096},
        {"kind": "mrd", "requester_id": 1, "tag": 2, "addr": 0x3003u64, "len": 1},
        {"kind": "mwr", "requester_id": 8, "tag": 5, "addr": 0x1001u64, "data": "112233445566"},
        {"kind": "mwr", "requester_id": 8, "tag": 0, "addr": 0x9_0000_0002u64, "data": "aabbccddeeff0011"},
        {"kind": "cpl", "status": 0, "byte_count": 0x102, "lower_address": 0x7E, "requester_id": 0x0100,
         "completer_id": 0, "tag": 0x2A, "poisoned": false, "data": "0000beef"},
        {"kind": "cpl", "status": 0, "byte_count": 4096, "lower_address": 0, "requester_id": 0x0100,
         "completer_id": 0x10, "tag": 1, "poisoned": true, "data": "01020304"},
        {"kind": "cpl", "status": 1, "byte_count": 4096, "lower_address": 0x10, "requester_id": 0x0100,
         "completer_id": 0x10, "tag": 7, "poisoned": false, "data": null},
        {"kind": "cpl", "status": 4, "byte_count": 20, "lower_address": 0x33, "requester_id": 0x0100,
         "completer_id": 0x10, "tag": 8, "poisoned": false, "data": null},
    ]);
    let ours = [
        TlpRepr::mem_read(0x0100, 0x2A, 0x1234_5678, 64),
        TlpRepr::mem_read(0xABCD, 0xFF, 0x1_0000_0102, 5),
        TlpRepr::mem_read(1, 0, 0x3000, 4096),
        TlpRepr::mem_read(1, 2, 0x3003, 1),
        TlpRepr::mem_write(8, 5, 0x1001, &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66]),
        TlpRepr::mem_write(
            8,
            0,
            0x9_0000_0002,
            &[0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0, 0x11],
        ),
        TlpRepr::Completion {
            status: CplStatus::Sc,
            byte_count: 0x102,
            lower_address: 0x7E,
            requester_id: 0x0100,
            completer_id: 0,
            tag: 0x2A,
            poisoned: false,
            data: Some(vec![0, 0, 0xBE, 0xEF]),
        },
        TlpRepr::Completion {
            status: CplStatus::Sc,
            byte_count: 4096,
            lower_address: 0,
            requester_id: 0x0100,
            completer_id: 0x10,
            tag: 1,
            poisoned: true,
            data: Some(vec![1, 2, 3, 4]),
        },
        TlpRepr::Completion {
            status: CplStatus::Ur,
            byte_count: 4096,
            lower_address: 0x10,
            requester_id: 0x0100,
            completer_id: 0x10,
            tag: 7,
            poisoned: false,
            data: None,
        },
        TlpRepr::Completion {
            status: CplStatus::Ca,
            byte_count: 20,
            lower_address: 0x33,
            requester_id: 0x0100,
            completer_id: 0x10,
            tag: 8,
            poisoned: false,
            data: None,
        },
    ];
    let got = python(&["pack".to_string(), specs.to_string()]);
    let got = got.as_array().expect("a JSON list");
    assert_eq!(got.len(), ours.len());
    for (r, g) in ours.iter().zip(got) {
        assert_eq!(g.as_str().unwrap(), hex(&r.to_bytes()), "for {r:?}");
        // And we parse cocotbext's bytes back to the same Repr.
        let theirs: Vec<u8> = (0..g.as_str().unwrap().len() / 2)
            .map(|i| u8::from_str_radix(&g.as_str().unwrap()[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        assert_eq!(&TlpRepr::parse_bytes(&theirs).unwrap(), r);
    }
}

/// Completions produced by the root complex (RCB splits, unaligned starts)
/// decode in cocotbext to the fields we meant.
#[test]
fn cocotbext_decodes_root_complex_completions() {
    let mut rc = RootComplex::new(RootComplexConfig {
        latency: 1,
        completer_id: 0x0008,
        ..RootComplexConfig::default()
    })
    .unwrap();
    let mut mem = HostMemory::new();
    mem.fill_pattern(0x1_0000_0000, 0x2000, 77);
    let mut beats: Vec<_> = [(1u8, 0x1_0000_0ff3u64, 300u32), (2, 0x1_0000_1001, 7)]
        .iter()
        .flat_map(|&(tag, a, n)| to_beats(&TlpRepr::mem_read(0x0a10, tag, a, n).to_bytes()))
        .collect();
    beats.reverse();
    let mut out = rc.outputs();
    for _ in 0..200 {
        let rq = match beats.last() {
            Some(b) => RqIn {
                valid: true,
                data: b.data,
                keep: b.keep,
                sop: b.sop,
                eop: b.eop,
            },
            None => RqIn::default(),
        };
        if rq.valid && out.rq_ready {
            beats.pop();
        }
        out = rc.step(&rq, true, &mut mem);
    }
    let cpls: Vec<&[u8]> = rc
        .log()
        .iter()
        .filter(|e| e.dir == Direction::Rc)
        .map(|e| e.bytes.as_slice())
        .collect();
    assert_eq!(
        cpls.len(),
        5,
        "300 B from ...ff3 split at 128: 13+128+128+31, plus 7 B"
    );
    let mut args = vec!["unpack".to_string()];
    args.extend(cpls.iter().map(|b| hex(b)));
    let got = python(&args);
    for (b, g) in cpls.iter().zip(got.as_array().unwrap()) {
        compare(b, &expected(&TlpRepr::parse_bytes(b).unwrap()), g);
    }
    let first = &got[0];
    assert_eq!(first["byte_count"], 300);
    assert_eq!(first["lower_address"], 0x73);
    assert_eq!(first["length"], 4, "0x...ff0..0x...1000");
}
