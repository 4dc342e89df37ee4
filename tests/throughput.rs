//! The read-throughput contract of `dma_rd`: with a 500-cycle PCIe round
//! trip and MRRS 512, a stream of 64 KiB reads must deliver at least 95 % of
//! what either limit allows,
//!
//! - the completion stream: a completion of S payload bytes takes
//!   ceil((12 + S) / 64) beats of `rc` (3-DW header), so `rc` carries at most
//!   S / ceil((12 + S) / 64) payload bytes per cycle (64 -> 32, 256 -> 51.2,
//!   512 -> 56.89);
//! - the tags: at most TAGS MRds of MRRS bytes each are in flight, each for
//!   at least the latency, so TAGS * MRRS / latency bytes per cycle.
//!
//! Measured rate: payload bytes delivered to the client divided by the
//! cycles from the first `rd_data` beat to the last, both included. That
//! window leaves out the one-off first round trip (500 idle cycles before
//! any data, 2.5 % of a 20k-cycle run, which would otherwise count against
//! the engine) and covers everything after it, the last round trip
//! included, so it is the steady-state rate of a back-to-back stream. (At
//! the `rc` bound it can read a hair above 100 %: the reader starts only once
//! the first MRd's completions are all in, so the first few `rc` cycles fall
//! before the window.)
//!
//! Every point runs model and RTL in lockstep: TAGS = 32 on the default
//! build (BUF_LINES = 256), TAGS = 64 and 128 on the RTL variants
//! `dma_rd_t64` and `dma_rd_t128` (BUF_LINES = TAGS * MRRS / 64 = 512 and
//! 1024, the same credit per tag), the model taking the same parameters.
//!
//! `cargo test --test throughput -- --nocapture` prints the table.

mod common;
use common::figures::Table;

use std::path::Path;

use rnic_model::dma_rd::{DmaRd, DmaRdIn, DmaRdOut, DmaRdParams};
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::{RtlDmaRd, RtlDmaRdT128, RtlDmaRdT64};
use rnic_testbench::scenario::DmaRdEnv;
use rnic_testbench::vector::{
    ClientSpec, DutConfig, Hex, MemInit, ReadReq, RootComplexSpec, Split, Top, Vector, FORMAT,
};

const LATENCY: u32 = 500;
const MRRS: u32 = 512;
const READS: u64 = 16;
const READ_LEN: u32 = 65536;
const BASE: u64 = 0x1_0000_0000;
/// Required fraction of the bound, in percent.
const REQUIRED_PERCENT: u64 = 95;

/// The stream: 16 back-to-back 64 KiB reads, nothing throttled but the
/// link and the engine.
fn stream_vector(cpl_size: u32) -> Vector {
    Vector {
        format: FORMAT,
        name: format!("throughput_cpl{cpl_size}"),
        description: "16 x 64 KiB reads back to back, no back-pressure".into(),
        checked_against: "tests/throughput.rs bounds".into(),
        top: Top::DmaRd,
        config: DutConfig {
            mrrs: MRRS,
            ..DutConfig::default()
        },
        root_complex: RootComplexSpec {
            latency: LATENCY,
            rcb: 64,
            cpl_size,
            split: Split::Aligned,
            reorder: false,
            seed: 1,
            rq_ready_percent: 100,
            faults: Vec::new(),
        },
        client: ClientSpec::default(),
        memory: vec![MemInit {
            addr: Hex(BASE),
            len: READS * READ_LEN as u64,
            seed: 9,
        }],
        reads: (0..READS)
            .map(|k| ReadReq {
                at: 0,
                client: (k % 4) as u8,
                addr: Hex(BASE + k * READ_LEN as u64),
                len: READ_LEN,
            })
            .collect(),
        writes: Vec::new(),
        mac: Default::default(),
        qps: Vec::new(),
        mrs: Vec::new(),
        cqs: Vec::new(),
        wqes: Vec::new(),
        doorbells: Vec::new(),
        recvs: Vec::new(),
        rq_doorbells: Vec::new(),
        program: Vec::new(),
        rx: Vec::new(),
        cc: Default::default(),
        peer: Default::default(),
        min_cycles: 0,
        max_cycles: 200_000,
        expect: None,
    }
}

/// [`DmaRdEnv`] plus the measurements: the data window and what the
/// engine's status outputs show inside it.
struct Probe {
    env: DmaRdEnv,
    tags: u16,
    first: Option<u64>,
    last: u64,
    bytes: u64,
    /// Cycles (in the window) with every tag busy.
    tags_full: u64,
    /// Cycles with fewer free buffer lines than one MRRS chunk needs.
    lines_short: u64,
    /// Cycles with a completion beat on `rc`.
    rc_busy: u64,
    tags_busy_sum: u64,
    min_free: u16,
}

impl Probe {
    fn new(v: &Vector, tags: u16) -> Self {
        Probe {
            env: DmaRdEnv::new(v).expect("valid vector"),
            tags,
            first: None,
            last: 0,
            bytes: 0,
            tags_full: 0,
            lines_short: 0,
            rc_busy: 0,
            tags_busy_sum: 0,
            min_free: u16::MAX,
        }
    }
}

impl Env for Probe {
    type In = DmaRdIn;
    type Out = DmaRdOut;
    fn step(&mut self, cycle: u64, o: &DmaRdOut) -> DmaRdIn {
        let i = self.env.step(cycle, o);
        if o.rd_data_valid && i.rd_data_ready {
            self.first.get_or_insert(cycle);
            self.last = cycle;
            self.bytes += o.rd_data_keep.count_ones() as u64;
        }
        // The run stops right after the last beat, so "from the first beat
        // on" is the window.
        if self.first.is_some() {
            self.tags_full += (o.stat_tags_busy == self.tags) as u64;
            self.lines_short += (o.stat_free_lines < (MRRS / 64) as u16) as u64;
            self.rc_busy += i.rc_valid as u64;
            self.tags_busy_sum += o.stat_tags_busy as u64;
            self.min_free = self.min_free.min(o.stat_free_lines);
        }
        i
    }
    fn finished(&self) -> bool {
        self.env.finished()
    }
}

/// A rate as an exact fraction: `num` bytes per `den` cycles.
#[derive(Clone, Copy)]
struct Rate {
    num: u64,
    den: u64,
}

impl Rate {
    fn le(self, o: Rate) -> bool {
        self.num * o.den <= o.num * self.den
    }
    fn f(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

struct Point {
    tags: usize,
    cpl: u32,
    measured: Rate,
    bound: Rate,
    limit: &'static str,
    p: Probe,
}

fn measure(tags: usize, cpl: u32) -> Point {
    let v = stream_vector(cpl);
    let params = DmaRdParams {
        tags,
        buf_lines: tags * MRRS as usize / 64,
    };
    let mut probe = Probe::new(&v, tags as u16);
    let mut model = DmaRd::new(params);
    let fin = match tags {
        32 => lockstep::run(&mut model, &mut RtlDmaRd::new(), &mut probe, v.max_cycles),
        64 => lockstep::run(
            &mut model,
            &mut RtlDmaRdT64::new(),
            &mut probe,
            v.max_cycles,
        ),
        128 => lockstep::run(
            &mut model,
            &mut RtlDmaRdT128::new(),
            &mut probe,
            v.max_cycles,
        ),
        _ => unreachable!("no RTL build with {tags} tags"),
    }
    .unwrap_or_else(|d| panic!("tags {tags} cpl {cpl}:\n{d}"));
    assert!(fin.completed, "tags {tags} cpl {cpl}: not complete");
    probe.env.finish_checks(fin.cycles, params.buf_lines as u16);
    assert!(
        probe.env.common.failures.is_empty(),
        "tags {tags} cpl {cpl}: {:#?}",
        probe.env.common.failures
    );
    assert_eq!(probe.bytes, READS * READ_LEN as u64);
    let rc = Rate {
        num: cpl as u64,
        den: (12 + cpl as u64).div_ceil(64),
    };
    let lat = Rate {
        num: (tags as u32 * MRRS) as u64,
        den: LATENCY as u64,
    };
    let (bound, limit) = if rc.le(lat) {
        (rc, "rc")
    } else {
        (lat, "tags")
    };
    let measured = Rate {
        num: probe.bytes,
        den: probe.last - probe.first.expect("data arrived") + 1,
    };
    Point {
        tags,
        cpl,
        measured,
        bound,
        limit,
        p: probe,
    }
}

#[test]
fn read_throughput_meets_the_bound() {
    let mut points = Vec::new();
    for tags in [32, 64, 128] {
        for cpl in [64, 256, 512] {
            points.push(measure(tags, cpl));
        }
    }
    println!(
        "tags  cpl  run       window  B/cycle  bound (limit)   % bound  Gb/s@250MHz | tags busy avg, all-busy %, lines<8 %, min free, rc busy %"
    );
    for x in &points {
        let w = x.measured.den as f64;
        let pct = |n: u64| 100.0 * n as f64 / w;
        println!(
            "{:>4} {:>4}  {:<8} {:>7}  {:>7.2}  {:>6.2} ({:<4})  {:>7.2}  {:>11.1} | {:>5.1}, {:>5.1}, {:>5.1}, {:>4}, {:>5.1}",
            x.tags,
            x.cpl,
            "lockstep",
            x.measured.den,
            x.measured.f(),
            x.bound.f(),
            x.limit,
            100.0 * x.measured.f() / x.bound.f(),
            x.measured.f() * 8.0 * 0.25,
            x.p.tags_busy_sum as f64 / w,
            pct(x.p.tags_full),
            pct(x.p.lines_short),
            x.p.min_free,
            pct(x.p.rc_busy),
        );
    }
    let mut t = Table::new(
        "dma_rd_throughput",
        &[
            "tags (buffer lines)",
            "completion size",
            "B/cycle",
            "bound (limit)",
            "% of bound",
            "Gb/s at 250 MHz",
        ],
    );
    for x in &points {
        t.row(&[
            format!("{} ({})", x.tags, x.tags * MRRS as usize / 64),
            x.cpl.to_string(),
            format!("{:.2}", x.measured.f()),
            format!("{:.2} ({})", x.bound.f(), x.limit),
            format!("{:.1}", 100.0 * x.measured.f() / x.bound.f()),
            format!("{:.1}", x.measured.f() * 8.0 * 0.25),
        ]);
    }
    t.finish();
    let short: Vec<String> = points
        .iter()
        // measured >= 95 % of bound, exactly: 100 * b/c >= 95 * n/d.
        .filter(|x| {
            100 * x.measured.num * x.bound.den < REQUIRED_PERCENT * x.bound.num * x.measured.den
        })
        .map(|x| {
            format!(
                "tags {} cpl {}: {:.2} B/cycle is {:.1} % of the {} bound {:.2}",
                x.tags,
                x.cpl,
                x.measured.f(),
                100.0 * x.measured.f() / x.bound.f(),
                x.limit,
                x.bound.f()
            )
        })
        .collect();
    assert!(
        short.is_empty(),
        "below {REQUIRED_PERCENT} % of the bound:\n  {}",
        short.join("\n  ")
    );
    // The vector is also a valid vector file (kept in step with the format).
    let v = stream_vector(256);
    Vector::parse(Path::new("throughput"), &v.to_json()).expect("valid vector");
}
