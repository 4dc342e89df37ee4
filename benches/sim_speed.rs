//! Simulation speed in clock cycles per second: the model alone, the
//! Verilated RTL alone, and both in lockstep, on two scenarios: a `dma_rd`
//! stress stream and `rnic_top` streaming 64 KiB RDMA WRITEs.
//!
//! `rnic_top_stream`: one UC QP, 4 x 64 KiB WRITEs at path MTU 4096, PCIe
//! latency 500, 512-byte completions (the throughput contract's point of
//! tests/tx_perf.rs).
//!
//! The scenario is the throughput test's stream (tests/throughput.rs: MRRS
//! 512, latency 500, 256-byte completions, TAGS 32) shortened to 4 x 64 KiB,
//! plus seeded random back-pressure on `rq_ready` and `rd_data_ready` (70 %)
//! so that the stall paths run too. Every figure includes the environment
//! (root complex, PCIe checker, client), which is the same work in all
//! three, because that is what a user of `rnic run` / `rnic cosim` waits
//! for. Building the environment and the DUTs (host memory fill, Verilated
//! model construction) is setup, outside the timing.
//!
//! `rnic_top_idle`: the model alone after vectors/cc/cnp_single.json, with
//! nothing in flight but DCQCN's timers (recovering after a CNP) and the
//! CNP interval timer: cycle by cycle (`tick`, 100 k cycles) and with the
//! idle fast path (`skip` to the next timer event, `tick` there, 10 M
//! cycles).
//!
//! `cargo bench --bench sim_speed`; criterion reports the rates as
//! "elem/s", one element being one clock cycle.

use std::path::Path;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use rnic_model::dma_rd::{DmaRd, DmaRdParams};
use rnic_model::rnic_top::{RnicTop, RnicTopIn};
use rnic_model::Dut;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::{RtlDmaRd, RtlRnicTop};
use rnic_testbench::scenario::{DmaRdEnv, RnicTopEnv};
use rnic_testbench::vector::Vector;

const VECTOR: &str = r#"{
  "format": 1, "name": "sim_speed", "top": "dma_rd",
  "description": "4 x 64 KiB reads, 256-byte completions, 70 % back-pressure both sides",
  "checked_against": "benchmark only",
  "config": {"mrrs": 512},
  "root_complex": {"latency": 500, "rcb": 64, "cpl_size": 256, "split": "aligned",
                   "rq_ready_percent": 70, "seed": 5},
  "client": {"rd_data_ready_percent": 70, "seed": 6},
  "memory": [{"addr": "0x100000000", "len": 262144, "seed": 9}],
  "reads": [
    {"addr": "0x100000000", "len": 65536, "client": 0},
    {"addr": "0x100010000", "len": 65536, "client": 1},
    {"addr": "0x100020000", "len": 65536, "client": 2},
    {"addr": "0x100030000", "len": 65536, "client": 3}
  ],
  "max_cycles": 100000
}"#;

/// One criterion group: the model alone, the RTL alone and both in
/// lockstep on the same scenario, each run checked to take `cycles`.
fn bench_group<M, R, E>(
    c: &mut Criterion,
    name: &str,
    max_cycles: u64,
    model: impl Fn() -> M,
    rtl: impl Fn() -> R,
    env: impl Fn() -> E,
    failures: impl Fn(&E) -> usize,
) where
    M: Dut,
    R: Dut<In = M::In, Out = M::Out>,
    E: Env<In = M::In, Out = M::Out>,
{
    // The run is deterministic: find its length once, and check that it is
    // a clean run (a benchmark of a broken scenario measures nothing).
    let mut e = env();
    let fin = lockstep::run(&mut model(), &mut rtl(), &mut e, max_cycles)
        .unwrap_or_else(|d| panic!("{d}"));
    assert!(fin.completed && failures(&e) == 0);
    let cycles = fin.cycles;

    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .throughput(Throughput::Elements(cycles));
    g.bench_function("model", |b| {
        b.iter_batched(
            || (model(), env()),
            |(mut m, mut e)| {
                let f = lockstep::run_single(&mut m, &mut e, max_cycles);
                assert_eq!(f.cycles, cycles);
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("rtl", |b| {
        b.iter_batched(
            || (rtl(), env()),
            |(mut r, mut e)| {
                let f = lockstep::run_single(&mut r, &mut e, max_cycles);
                assert_eq!(f.cycles, cycles);
            },
            BatchSize::LargeInput,
        )
    });
    g.bench_function("lockstep", |b| {
        b.iter_batched(
            || (model(), rtl(), env()),
            |(mut m, mut r, mut e)| {
                let f = lockstep::run(&mut m, &mut r, &mut e, max_cycles).expect("no divergence");
                assert_eq!(f.cycles, cycles);
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn sim_speed(c: &mut Criterion) {
    let v = Vector::parse(Path::new("sim_speed"), VECTOR).expect("valid vector");
    bench_group(
        c,
        "dma_rd_stream",
        v.max_cycles,
        || DmaRd::new(DmaRdParams::default()),
        RtlDmaRd::new,
        || DmaRdEnv::new(&v).expect("valid vector"),
        |e| e.common.failures.len(),
    );
}

const TX_VECTOR: &str = r#"{
  "format": 1, "name": "sim_speed_tx", "top": "rnic_top",
  "description": "4 x 64 KiB UC RDMA WRITEs, MTU 4096, latency 500, 512-byte completions",
  "checked_against": "benchmark only",
  "root_complex": {"latency": 500, "rcb": 64, "cpl_size": 512},
  "memory": [{"addr": "0x1000000", "len": 262144, "seed": 3}],
  "qps": [{"qp": 0, "type": "uc", "remote_qpn": 256, "mtu": 4096, "pd": 1, "cq": 0,
           "dst_mac": "02:00:00:00:01:00", "src_mac": "02:00:00:00:00:00",
           "ip": {"ipv4": {"src": "10.0.0.1", "dst": "10.0.1.1"}},
           "sq": {"base": "0x10000000", "log_size": 4}}],
  "mrs": [{"index": 0, "key": "0x10", "va": "0x1000000", "len": "0x40000", "pbase": "0x1000000", "pd": 1}],
  "cqs": [{"cq": 0, "ring": {"base": "0x20000000", "log_size": 4}}],
  "wqes": [
    {"qp": 0, "opcode": "write", "wr_id": 0, "len": 65536, "laddr": "0x1000000", "lkey": "0x10"},
    {"qp": 0, "opcode": "write", "wr_id": 1, "len": 65536, "laddr": "0x1010000", "lkey": "0x10"},
    {"qp": 0, "opcode": "write", "wr_id": 2, "len": 65536, "laddr": "0x1020000", "lkey": "0x10"},
    {"qp": 0, "opcode": "write", "wr_id": 3, "len": 65536, "laddr": "0x1030000", "lkey": "0x10"}
  ],
  "doorbells": [{"qp": 0, "wqes": 4}],
  "max_cycles": 100000
}"#;

fn sim_speed_tx(c: &mut Criterion) {
    let v = Vector::parse(Path::new("sim_speed_tx"), TX_VECTOR).expect("valid vector");
    bench_group(
        c,
        "rnic_top_stream",
        v.max_cycles,
        RnicTop::new,
        RtlRnicTop::new,
        || RnicTopEnv::new(&v).expect("valid vector"),
        |e| e.common.failures.len(),
    );
}

/// The model after `vector` ran to its end (nothing left in flight).
fn settled(vector: &str) -> RnicTop {
    let v = Vector::load(Path::new(vector)).expect("valid vector");
    let mut env = RnicTopEnv::new(&v).expect("valid vector");
    let mut m = RnicTop::new();
    let mut out = m.reset();
    for c in 0..v.max_cycles {
        out = m.tick(&env.step(c, &out));
        if env.finished() {
            break;
        }
    }
    m
}

fn sim_speed_idle(c: &mut Criterion) {
    const CYCLES: u64 = 10_000_000;
    let idle = RnicTopIn {
        rq_ready: true,
        tx_tready: true,
        ..RnicTopIn::default()
    };
    let m0 = settled("vectors/cc/cnp_single.json");
    assert!(m0.idle_horizon(&idle) > 0, "the scenario is idle");
    let mut g = c.benchmark_group("rnic_top_idle");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        // Cycle by cycle runs a hundredth of the cycles (the rate is what
        // counts).
        .throughput(Throughput::Elements(CYCLES / 100));
    g.bench_function("model_tick", |b| {
        b.iter_batched(
            || m0.clone(),
            |mut m| {
                for _ in 0..CYCLES / 100 {
                    m.tick(&idle);
                }
                m
            },
            BatchSize::LargeInput,
        )
    });
    g.throughput(Throughput::Elements(CYCLES));
    g.bench_function("model_skip", |b| {
        b.iter_batched(
            || m0.clone(),
            |mut m| {
                let mut left = CYCLES;
                while left > 0 {
                    let n = m.idle_horizon(&idle).min(left);
                    if n > 1 {
                        m.skip(&idle, n);
                        left -= n;
                    } else {
                        m.tick(&idle);
                        left -= 1;
                    }
                }
                m
            },
            BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, sim_speed, sim_speed_tx, sim_speed_idle);
criterion_main!(benches);
