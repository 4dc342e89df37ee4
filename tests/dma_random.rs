//! Constrained-random block-level lockstep of `dma_rd` and `dma_wr`.
//!
//! proptest generates whole test vectors (the same [`Vector`] the CLI runs):
//! link sizes, completion splitting and order, latency, back-pressure on
//! both sides, 1..=12 requests whose lengths and addresses sit on the edges
//! that break DMA engines (1..4 bytes, a beat +-1, MRRS/MPS +-1, 4 KiB +-1,
//! up to 64 KiB; any byte offset, next to 4 KB pages and MRRS boundaries,
//! across 4 GB, at the top of the address space) and, for reads, at most one
//! fault range (UR, CA, poison, drop, bad byte count, wrong requester, stray
//! completion) on one request. Each vector runs model
//! and RTL in lockstep with every independent check of the environment
//! (host memory, PCIe rules, framing, leaks); a case passes when nothing
//! diverged, every request completed and no check failed.
//!
//! Reproducibility: the runner's RNG is ChaCha with a fixed seed
//! ([`DEFAULT_SEED`], or `RNIC_RANDOM_SEED`), independent of proptest's own
//! `PROPTEST_*` variables, and failure persistence is off
//! (`failure_persistence: None`): a seed and a case count fully define a run,
//! so there is no regression file to keep in sync. A failing case prints its
//! shrunk vector as JSON; save it under `vectors/` to keep it as a directed
//! test (`rnic run <file>` replays it, with VCDs).
//!
//! Case count: [`DEFAULT_CASES`] per top, chosen so that one `cargo test`
//! runs well over [`MIN_TOTAL_CYCLES`] lockstep cycles in total; the test
//! asserts that floor. `RNIC_RANDOM_CASES=n` runs `n` cases per top instead.
//! Both variables are read as in every random test (`tests/common/mod.rs`:
//! decimal or `0x` hex).

mod common;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};
use rnic_testbench::scenario::{self, Mode, RunOpts};
use rnic_testbench::vector::{
    ClientSpec, DutConfig, FaultKind, FaultSpec, Hex, MemInit, ReadReq, RootComplexSpec, Split,
    Top, Vector, WriteReq, FORMAT,
};

/// Cases per top in a plain `cargo test`.
const DEFAULT_CASES: u32 = 128;
/// Lockstep cycles the two tests must run together (per `cargo test`).
const MIN_TOTAL_CYCLES: u64 = 100_000;
const DEFAULT_SEED: u64 = 0x726E_6963_5F64_6D61; // "rnic_dma"
/// Requests stop being added once their bytes reach this, so that a case
/// stays a few thousand cycles even under heavy back-pressure.
const BYTE_BUDGET: u32 = 48 * 1024;
/// Far above any clean case (a few thousand cycles, at most a few tens of
/// thousands with every gap and a drop timeout): a hang shows as
/// `completed == false`, not as a stuck test.
const MAX_CYCLES: u64 = 400_000;

/// Request `k` lives in slot `k` of its region: 128 KiB apart, more than
/// 4 pages of offset plus the longest request plus the 130 bytes an offset
/// may reach below the slot, so requests never overlap and a fault range
/// placed on one request cannot touch another.
const SLOT: u64 = 0x2_0000;

/// Region bases. The second puts slot 5, page 0 exactly at 4 GB, so
/// "just below a page" offsets there straddle the 3-DW/4-DW header switch;
/// the last ends 2 MiB below 2^64 (12 slots of 128 KiB fit).
const REGIONS: [u64; 5] = [
    0x0000_0000_0001_0000,
    0x0000_0001_0000_0000 - 5 * SLOT,
    0x0000_0001_2345_0000,
    0x0000_7FFF_FFF0_0000,
    0xFFFF_FFFF_FFE0_0000,
];

/// Lockstep cycles run by the two tests of this file, both counted towards
/// [`MIN_TOTAL_CYCLES`].
static TOTAL_CYCLES: AtomicU64 = AtomicU64::new(0);
/// Tests that have finished their cases; the last one checks the floor.
static DONE: Mutex<u32> = Mutex::new(0);
const TESTS: u32 = 2;

#[derive(Debug, Clone, Copy)]
enum Len {
    /// Index into [`edge_lens`].
    Edge(usize),
    Small(u32),
    Any(u32),
}

#[derive(Debug, Clone, Copy)]
enum Off {
    /// Any byte of the page.
    Any(u32),
    /// `d` bytes below the page start (1..=130).
    BelowPage(u32),
    /// `d` bytes above the page start (0..=130).
    AbovePage(u32),
    /// `d` bytes around the first MRRS/MPS boundary of the page.
    SizeEdge(i32),
}

#[derive(Debug, Clone)]
struct ReqGen {
    len: Len,
    page: u64,
    off: Off,
    client: u8,
    /// Cycles between this request's `at` and the previous one's.
    gap: u64,
    seed: u64,
}

#[derive(Debug, Clone)]
struct FaultGen {
    /// Request it is placed on (modulo the request count).
    req: usize,
    kind: FaultKind,
    /// Whole request, or a sub-range picked by `a` and `b`.
    whole: bool,
    a: u32,
    b: u32,
}

#[derive(Debug, Clone)]
struct Case {
    /// log2(MRRS or MPS / 128).
    size_enc: u32,
    rcb: u32,
    cpl_units: u32,
    split: Split,
    reorder: bool,
    latency: u32,
    rq_ready_percent: u8,
    client_percent: u8,
    region: usize,
    reqs: Vec<ReqGen>,
    fault: Option<FaultGen>,
    timeout: u32,
    rc_seed: u64,
    client_seed: u64,
}

/// Lengths that sit on an edge for transfer size `s` (MRRS or MPS).
fn edge_lens(s: u32) -> [u32; 18] {
    [
        1,
        2,
        3,
        4,
        5,
        63,
        64,
        65,
        127,
        128,
        129,
        s - 1,
        s,
        s + 1,
        4095,
        4096,
        4097,
        65536,
    ]
}

fn percent() -> impl Strategy<Value = u8> {
    prop_oneof![1 => Just(100u8), 2 => 20u8..=100]
}

fn req_gen() -> impl Strategy<Value = ReqGen> {
    let len = prop_oneof![
        6 => (0usize..18).prop_map(Len::Edge),
        3 => (1u32..=1024).prop_map(Len::Small),
        1 => (1u32..=65536).prop_map(Len::Any),
    ];
    let off = prop_oneof![
        2 => (0u32..4096).prop_map(Off::Any),
        1 => (1u32..=130).prop_map(Off::BelowPage),
        1 => (0u32..=130).prop_map(Off::AbovePage),
        1 => (-65i32..=65).prop_map(Off::SizeEdge),
    ];
    let gap = prop_oneof![3 => Just(0u64), 1 => 0u64..1500];
    (len, 0u64..4, off, 0u8..4, gap, any::<u64>()).prop_map(
        |(len, page, off, client, gap, seed)| ReqGen {
            len,
            page,
            off,
            client,
            gap,
            seed,
        },
    )
}

fn fault_gen() -> impl Strategy<Value = FaultGen> {
    let kind = prop_oneof![
        Just(FaultKind::Ur),
        Just(FaultKind::Ca),
        Just(FaultKind::Poison),
        Just(FaultKind::Drop),
        Just(FaultKind::BadByteCount),
        Just(FaultKind::WrongRequester),
        Just(FaultKind::Stray),
    ];
    (0usize..12, kind, any::<bool>(), any::<u32>(), any::<u32>()).prop_map(
        |(req, kind, whole, a, b)| FaultGen {
            req,
            kind,
            whole,
            a,
            b,
        },
    )
}

fn case(top: Top) -> impl Strategy<Value = Case> {
    let split = prop_oneof![Just(Split::Aligned), Just(Split::Random)];
    // Mostly small completions (the interesting splits), sometimes any size.
    let cpl_units = prop_oneof![3 => 1u32..=8, 1 => 1u32..=64];
    let latency = prop_oneof![1 => 1u32..=10, 3 => 1u32..=600];
    let fault = if top == Top::DmaRd {
        proptest::option::weighted(0.35, fault_gen()).boxed()
    } else {
        Just(None).boxed()
    };
    (
        (
            0u32..=5,
            prop_oneof![Just(64u32), Just(128)],
            cpl_units,
            split,
        ),
        (any::<bool>(), latency, percent(), percent()),
        (0..REGIONS.len(), prop::collection::vec(req_gen(), 1..=12)),
        (fault, 2000u32..=5000, any::<u64>(), any::<u64>()),
    )
        .prop_map(
            |(
                (size_enc, rcb, cpl_units, split),
                (reorder, latency, rq_ready_percent, client_percent),
                (region, reqs),
                (fault, timeout, rc_seed, client_seed),
            )| Case {
                size_enc,
                rcb,
                cpl_units,
                split,
                reorder,
                latency,
                rq_ready_percent,
                client_percent,
                region,
                reqs,
                fault,
                timeout,
                rc_seed,
                client_seed,
            },
        )
}

/// Address and length of every request of `c` (after the byte budget).
fn layout(c: &Case, size: u32) -> Vec<(u64, u32)> {
    let mut out = Vec::new();
    let mut total = 0u32;
    for (k, r) in c.reqs.iter().enumerate() {
        if total >= BYTE_BUDGET {
            break;
        }
        let len = match r.len {
            Len::Edge(i) => edge_lens(size)[i],
            Len::Small(n) | Len::Any(n) => n,
        };
        let page = REGIONS[c.region] + k as u64 * SLOT + r.page * 4096;
        let addr = match r.off {
            Off::Any(o) => page + o as u64,
            Off::BelowPage(d) => page - d as u64,
            Off::AbovePage(d) => page + d as u64,
            Off::SizeEdge(d) => (page + size as u64).wrapping_add_signed(d as i64),
        };
        total += len;
        out.push((addr, len));
    }
    out
}

/// The vector a case describes.
fn build(top: Top, c: &Case, index: u32) -> Vector {
    let size = 128u32 << c.size_enc;
    let reqs = layout(c, size);
    let mut at = 0u64;
    let ats: Vec<u64> = c.reqs[..reqs.len()]
        .iter()
        .map(|r| {
            at += r.gap;
            at
        })
        .collect();
    let mut faults = Vec::new();
    let mut timeout = 50_000;
    if let Some(f) = &c.fault {
        let (addr, len) = reqs[f.req % reqs.len()];
        let (lo, hi) = if f.whole {
            (0, len)
        } else {
            let a = f.a % len;
            (a, a + 1 + f.b % (len - a))
        };
        faults.push(FaultSpec {
            addr: Hex(addr + lo as u64),
            len: (hi - lo) as u64,
            kind: f.kind,
        });
        // Every kind that leaves the read without an acceptable completion
        // ends in a completion timeout.
        let starves = matches!(
            f.kind,
            FaultKind::Drop | FaultKind::BadByteCount | FaultKind::WrongRequester
        );
        if starves {
            // Small enough that a starved read ends quickly, large enough
            // for latency (<= 600) plus a full completion buffer's worth of
            // completions queued ahead (< 1000 cycles).
            timeout = c.timeout;
        }
    }
    let mut v = Vector {
        format: FORMAT,
        name: format!("random_{}_{index}", top.name()),
        description: "constrained-random case from tests/dma_random.rs".into(),
        checked_against: "model/RTL lockstep and the environment's independent checks".into(),
        top,
        config: DutConfig {
            mrrs: size,
            mps: size,
            cpl_timeout: timeout,
            ..DutConfig::default()
        },
        root_complex: RootComplexSpec {
            latency: c.latency,
            rcb: c.rcb,
            cpl_size: c.rcb * c.cpl_units.min(4096 / c.rcb),
            split: c.split,
            reorder: c.reorder,
            seed: c.rc_seed,
            rq_ready_percent: c.rq_ready_percent,
            faults,
        },
        client: ClientSpec {
            rd_data_ready_percent: c.client_percent,
            wr_data_valid_percent: c.client_percent,
            seed: c.client_seed,
        },
        memory: Vec::new(),
        reads: Vec::new(),
        writes: Vec::new(),
        mac: Default::default(),
        qps: Vec::new(),
        mrs: Vec::new(),
        cqs: Vec::new(),
        wqes: Vec::new(),
        doorbells: Vec::new(),
        min_cycles: 0,
        recvs: Vec::new(),
        rq_doorbells: Vec::new(),
        program: Vec::new(),
        rx: Vec::new(),
        cc: Default::default(),
        peer: Default::default(),
        max_cycles: MAX_CYCLES,
        expect: None,
    };
    for (((addr, len), at), r) in reqs.iter().zip(ats).zip(&c.reqs) {
        // Memory around a write too: MWr byte enables must leave the bytes
        // next to the range alone, which the final memory compare sees.
        let margin = if top == Top::DmaWr { 64 } else { 0 };
        v.memory.push(MemInit {
            addr: Hex(addr - margin),
            len: *len as u64 + 2 * margin,
            seed: r.seed,
        });
        match top {
            Top::DmaRd => v.reads.push(ReadReq {
                at,
                client: r.client,
                addr: Hex(*addr),
                len: *len,
            }),
            Top::DmaWr => v.writes.push(WriteReq {
                at,
                client: r.client,
                addr: Hex(*addr),
                len: *len,
                seed: r.seed ^ 0x5A5A,
            }),
            Top::RnicTop => unreachable!("this test drives the DMA engines only"),
        }
    }
    v
}

/// Runs the random cases for one top; returns the lockstep cycles run.
fn random_lockstep(top: Top) -> u64 {
    let cases = common::cases(DEFAULT_CASES.into()) as u32;
    let seed = common::seed(DEFAULT_SEED) ^ top as u64;
    let config = Config {
        cases,
        failure_persistence: None,
        // Each shrink step is a lockstep run; this bounds a failing run to
        // minutes while still getting to a small vector.
        max_shrink_iters: 300,
        ..Config::default()
    };
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes);
    let mut runner = TestRunner::new_with_rng(config, rng);
    let cycles = AtomicU64::new(0);
    let index = AtomicU64::new(0);
    let result = runner.run(&case(top), |c| {
        let n = index.fetch_add(1, Ordering::Relaxed) as u32;
        let v = build(top, &c, n);
        // Built in Rust, so check it is a vector the CLI would accept too.
        let v = Vector::parse(Path::new(&v.name), &v.to_json())
            .map_err(|e| TestCaseError::fail(format!("generated an invalid vector: {e}")))?;
        let r = scenario::run(&v, Mode::Lockstep, &RunOpts::default())
            .map_err(|e| TestCaseError::fail(format!("environment: {e}")))?;
        cycles.fetch_add(r.cycles, Ordering::Relaxed);
        let why = if let Some(d) = &r.divergence {
            format!("{d}")
        } else if !r.failures.is_empty() {
            format!("independent checks failed:\n  {}", r.failures.join("\n  "))
        } else if !r.completed {
            format!("not complete after {} cycles", r.cycles)
        } else {
            return Ok(());
        };
        Err(TestCaseError::fail(format!(
            "{why}\nvector:\n{}",
            v.to_json()
        )))
    });
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, c)) => {
            panic!(
                "{} random lockstep failed (seed {seed:#x}); minimal case {c:?}\n{why}",
                top.name()
            )
        }
        Err(e) => panic!("{} random lockstep: {e}", top.name()),
    }
    let n = cycles.into_inner();
    println!("{}: {cases} cases, {n} lockstep cycles", top.name());
    n
}

/// Adds this test's cycles to the file total; the second test to finish
/// checks the floor (the two may run in parallel threads) when at least the
/// default number of cases ran, as in every random test.
fn account(cycles: u64) {
    let total = TOTAL_CYCLES.fetch_add(cycles, Ordering::SeqCst) + cycles;
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    *done += 1;
    if *done == TESTS {
        println!("total: {total} lockstep cycles");
        let full = common::cases(DEFAULT_CASES.into()) >= DEFAULT_CASES.into();
        assert!(
            !full || total >= MIN_TOTAL_CYCLES,
            "only {total} lockstep cycles ran; raise DEFAULT_CASES"
        );
    }
}

#[test]
fn random_dma_rd_lockstep() {
    account(random_lockstep(Top::DmaRd));
}

#[test]
fn random_dma_wr_lockstep() {
    account(random_lockstep(Top::DmaWr));
}
