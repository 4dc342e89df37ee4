//! The blocks not yet in `rnic_top` (the receive side: `rq_fetch`,
//! `rx_buf`, `responder`, `rx_wr`, `wr_arb`, `cq_arb`, `rd_resp`, `rd_sink`, `retx_ctl`) trace their registers as the
//! RTL names them, so that wiring one into `rnic_top` does not fail
//! `tests/vcd_names.rs`: each block runs standalone in a short random
//! lockstep (model and RTL compared every cycle) with both VCDs written,
//! and then, with the checks of `tests/common/vcd.rs`,
//! - every register the model traces is in `rtl.vcd` under the same name
//!   (`TOP.<block>.<reg>_q`, sub-instances `TOP.<block>.u_rr.ptr_q`) with
//!   the same width;
//! - every `_q` register Verilator dumps for the block is traced by the
//!   model (no coverage floor below 100 %: a block added later must be
//!   complete);
//! - every traced register holds the same value in both files at every
//!   timestamp of the run.
//!
//! The stimulus only keeps each block's input contract (the assertions at
//! its ports); what the block computes is checked by its own lockstep test
//! (`tests/<block>_lockstep.rs`). Seeded as every random test
//! (`tests/common/mod.rs`); one case per block by default.

mod common;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use common::vcd;
use rnic_model::cq_arb::{CqArb, CqArbIn, CqArbOut};
use rnic_model::ports::Beat;
use rnic_model::rd_resp::{tok_beat, RdResp, RdRespIn, RdRespOut, DEPTH};
use rnic_model::rd_sink::{RdSink, RdSinkIn, RdSinkOut};
use rnic_model::resp_tok::{ReadJob, Tok};
use rnic_model::responder::{Responder, ResponderIn, ResponderOut, RqeBits};
use rnic_model::retx_ctl::{RetxCtl, RetxCtlIn, RetxCtlOut};
use rnic_model::rq_fetch::{RqFetch, RqFetchIn, RqFetchOut};
use rnic_model::rx_buf::{RxBuf, RxBufIn, RxBufOut, PEND};
use rnic_model::rx_meta::RxMeta;
use rnic_model::rx_wr::{RxWr, RxWrIn, RxWrOut};
use rnic_model::trace::Trace;
use rnic_model::wr_arb::{WrArb, WrArbIn, WrArbOut};
use rnic_model::Dut;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{compare, Env};
use rnic_testbench::rtl::{
    set_initial_state, take_assertion_failure, CqArbTop, InitialState, RdRespTop, RdSinkTop,
    ResponderTop, RetxCtlFastTop, RqFetchTop, Rtl, RtlTop, RxBufTop, RxWrTop, WrArbTop,
};
use rnic_testbench::vcd_model::ModelVcd;

const DEFAULT_SEED: u64 = 0x7663_645F_626C_6B73; // "vcd_blks"
const DEFAULT_CASES: u64 = 1;
/// Cycles per run: enough for every block to reach most of its states,
/// short enough for VCDs of a few MB.
const CYCLES: u64 = 3000;

/// Runs `model` and the RTL of `T` in lockstep under `env` for `cycles`
/// cycles from reset with both VCDs written into `dir` (as the testbench's
/// traced replay does: from the first cycle after reset); returns the paths
/// of model.vcd and rtl.vcd, and the environment.
fn traced_lockstep<M, T, E>(
    mut model: M,
    mut env: E,
    cycles: u64,
    dir: &Path,
) -> (PathBuf, PathBuf, E)
where
    M: Dut<In = T::In, Out = T::Out> + Trace,
    T: RtlTop,
    E: Env<In = T::In, Out = T::Out>,
{
    std::fs::create_dir_all(dir).expect("vcd dir");
    let (mp, rp) = (dir.join("model.vcd"), dir.join("rtl.vcd"));
    let _ = take_assertion_failure();
    // Register values are compared with the model's, which start at zero.
    set_initial_state(InitialState::Zeros);
    let mut rtl = Rtl::<T>::new();
    let mut out_r = rtl.reset();
    let mut out = model.reset();
    rtl.trace_open(&rp);
    let mut mv = ModelVcd::<T::In, T::Out>::create(&mp, T::NAME, Some(&model as &dyn Trace))
        .expect("model.vcd");
    for c in 0..cycles {
        if let Some(d) = compare(&out, &out_r) {
            panic!("{}: outputs differ at cycle {c}: {d:?}", T::NAME);
        }
        let i = env.step(c, &out);
        out_r = rtl.tick(&i);
        let next = model.tick(&i);
        if let Some(a) = take_assertion_failure() {
            panic!("{}: the stimulus broke an input contract: {a}", T::NAME);
        }
        mv.cycle(c, &i, &out, &next, Some(&model as &dyn Trace))
            .expect("model.vcd");
        out = next;
    }
    rtl.trace_close();
    mv.finish().expect("model.vcd");
    (mp, rp, env)
}

/// The block's traced run checked against the RTL's trace: names, widths,
/// full coverage of its `_q` registers, values at every timestamp (the
/// don't-cares of `vcd::QUALIFIED` only where they are live). `busy`
/// asserts that the run did enough for the values to mean something.
fn check_block<M, T, E>(model: M, env: impl Fn(u64) -> E, busy: impl Fn(&E))
where
    M: Dut<In = T::In, Out = T::Out> + Trace + Clone,
    T: RtlTop,
    E: Env<In = T::In, Out = T::Out>,
{
    // A case whose seed leaves the block too idle for the trace to mean
    // much is followed by more (common::run_cases_until) until one is busy
    // enough; every case's trace is checked all the same.
    let mut idle = None;
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let dir = std::env::temp_dir().join(format!("rnic_vcd_names_{}_{seed:x}", T::NAME));
        let (m, r, env) = traced_lockstep::<M, T, E>(model.clone(), env(seed), CYCLES, &dir);
        let busy_enough = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| busy(&env)));
        idle = busy_enough.err().map(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default()
        });
        let (model_vcd, rtl_vcd) = (vcd::read_vcd(&m), vcd::read_vcd(&r));
        let (traced, total) = vcd::check_names(&model_vcd, &rtl_vcd, T::NAME);
        let prefix = format!("TOP.{}.", T::NAME);
        let missing: Vec<&String> = rtl_vcd
            .vars
            .keys()
            .filter(|n| n.starts_with(&prefix) && vcd::is_reg(n))
            .filter(|n| !model_vcd.vars.contains_key(*n))
            .collect();
        assert!(
            missing.is_empty(),
            "{}: RTL registers the model does not trace: {missing:?}",
            T::NAME
        );
        assert_eq!(traced, total, "{}: every register traced", T::NAME);
        let compared = vcd::check_values(&model_vcd, &rtl_vcd);
        assert_eq!(compared, traced);
        idle.is_none()
    });
    if run.full {
        assert!(
            idle.is_none(),
            "{} cases: {}",
            run.cases,
            idle.unwrap_or_default()
        );
    }
}

// ---------------------------------------------------------------------
// rq_fetch: doorbells on a few QPs, reads served in order (2 beats a WQE,
// now and then a failed one), head reads, pops of heads that are there.
// ---------------------------------------------------------------------

struct RqFetchEnv {
    rng: SplitMix64,
    pi: [u16; 4],
    base: [u64; 4],
    log: [u8; 4],
    /// Beats still due per accepted read, in order.
    reads: VecDeque<u32>,
    /// WQEs made available, failed reads, pops.
    wqes: u64,
    errs: u64,
    pops: u64,
}

impl RqFetchEnv {
    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let base = core::array::from_fn(|_| rng.next_u64() << 7 >> 16);
        let log = core::array::from_fn(|_| rng.below(7) as u8);
        RqFetchEnv {
            rng,
            pi: [0; 4],
            base,
            log,
            reads: VecDeque::new(),
            wqes: 0,
            errs: 0,
            pops: 0,
        }
    }
}

impl Env for RqFetchEnv {
    type In = RqFetchIn;
    type Out = RqFetchOut;

    fn step(&mut self, _cycle: u64, o: &RqFetchOut) -> RqFetchIn {
        self.wqes += o.ev_rqe_n as u64;
        self.errs += o.err_valid as u64;
        let r = &mut self.rng;
        let mut i = RqFetchIn {
            rd_req_ready: r.percent(60),
            ..Default::default()
        };
        if o.rd_req_valid && i.rd_req_ready {
            self.reads.push_back(2 * o.rd_req_len / 128);
        }
        if o.rd_data_ready && r.percent(70) {
            if let Some(n) = self.reads.front_mut() {
                i.rd_data_valid = true;
                i.rd_data = Beat(core::array::from_fn(|_| r.next_u64() as u8));
                i.rd_data_last = *n == 1;
                i.rd_data_status = if r.percent(3) {
                    1 + r.below(7) as u8
                } else {
                    0
                };
                *n -= 1;
                if *n == 0 {
                    self.reads.pop_front();
                }
            }
        }
        if r.percent(15) {
            let q = r.below(4) as usize;
            let reset = r.percent(4);
            if !reset {
                self.pi[q] = self.pi[q].wrapping_add(r.below(4) as u16);
            }
            i.db_valid = true;
            i.db_qp = q as u8;
            i.db_pi = self.pi[q];
            i.db_state = if reset {
                0
            } else {
                [3, 1, 4, 2][r.below(4) as usize]
            };
            i.db_base = self.base[q] << 7;
            i.db_log = self.log[q];
            if reset {
                self.pi[q] = 0;
            }
        }
        if r.percent(50) {
            i.rqe_rd_valid = true;
            i.rqe_rd_qp = r.below(16) as u8;
        }
        let avail: Vec<u8> = (0..16).filter(|q| o.rqe_avail >> q & 1 != 0).collect();
        if !avail.is_empty() && r.percent(30) {
            i.rqe_pop_valid = true;
            i.rqe_pop_qp = avail[r.below(avail.len() as u64) as usize];
            self.pops += 1;
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn rq_fetch_registers_match_the_rtl_trace() {
    check_block::<_, RqFetchTop, _>(RqFetch::new(), RqFetchEnv::new, |e| {
        eprintln!(
            "rq_fetch: {} WQEs, {} failed reads, {} pops",
            e.wqes, e.errs, e.pops
        );
        assert!(
            e.wqes >= 100 && e.errs >= 1 && e.pops >= 100,
            "rq_fetch: too idle"
        );
    });
}

// ---------------------------------------------------------------------
// rx_buf: frames of 1 to 24 beats (VLAN-tagged or not) with gaps, verdicts
// a few cycles after each last beat, phases of back-pressure, one that
// fills the buffer; headers taken at random.
// ---------------------------------------------------------------------

struct RxBufEnv {
    rng: SplitMix64,
    /// Beats left of the frame being sent (0: none).
    left: u32,
    /// Cycles of the last beats still waiting for a verdict.
    pend: VecDeque<u64>,
    ready_pct: u8,
    /// Beats handed on, frames dropped for lack of room.
    beats_out: u64,
    drops: u64,
}

impl Env for RxBufEnv {
    type In = RxBufIn;
    type Out = RxBufOut;

    fn step(&mut self, cycle: u64, o: &RxBufOut) -> RxBufIn {
        self.drops += o.ev_drop_full as u64;
        let r = &mut self.rng;
        // Phases of back-pressure: some, nearly total (the buffer fills
        // and drops frames), none.
        if cycle.is_multiple_of(1000) {
            self.ready_pct = [70, 2, 100][(cycle / 1000) as usize % 3];
        }
        let mut i = RxBufIn {
            out_ready: r.percent(self.ready_pct),
            hd_ready: r.percent(60),
            ..Default::default()
        };
        self.beats_out += (o.out_valid && i.out_ready) as u64;
        if self.pend.front().is_some_and(|&c| c < cycle) && r.percent(50) {
            self.pend.pop_front();
            i.vd_valid = true;
            i.vd_keep = r.percent(70);
            // The metadata: META_W bits, the rest of the beat zero.
            i.vd_meta = Beat(core::array::from_fn(|k| {
                if k < 32 {
                    r.next_u64() as u8
                } else {
                    0
                }
            }));
        }
        // A frame starts only while fewer than PEND wait for a verdict, so
        // its last beat never overflows them.
        if self.left == 0 && self.pend.len() < PEND && r.percent(60) {
            self.left = 1 + r.below(24) as u32;
            let mut first = Beat(core::array::from_fn(|_| r.next_u64() as u8));
            if r.percent(50) {
                first.0[12] = 0x81;
                first.0[13] = 0x00;
            }
            i.in_data = first;
        } else if self.left > 0 {
            i.in_data = Beat(core::array::from_fn(|_| r.next_u64() as u8));
        }
        if self.left > 0 && r.percent(90) {
            self.left -= 1;
            i.in_valid = true;
            i.in_last = self.left == 0;
            i.in_keep = if i.in_last {
                u64::MAX >> r.below(64)
            } else {
                u64::MAX
            };
            if i.in_last {
                self.pend.push_back(cycle);
            }
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn rx_buf_registers_match_the_rtl_trace() {
    check_block::<_, RxBufTop, _>(
        RxBuf::default(),
        |seed| RxBufEnv {
            rng: SplitMix64::new(seed),
            left: 0,
            pend: VecDeque::new(),
            ready_pct: 100,
            beats_out: 0,
            drops: 0,
        },
        |e| {
            eprintln!(
                "rx_buf: {} beats out, {} frames dropped",
                e.beats_out, e.drops
            );
            assert!(e.beats_out >= 500 && e.drops >= 1, "rx_buf: too idle");
        },
    );
}

// ---------------------------------------------------------------------
// responder: request headers of every opcode class on four QPs, mostly
// in sequence, answered as csr and rq_fetch would (the data the cycle
// after each read), now and then a QP in error with RECVs to flush.
// ---------------------------------------------------------------------

struct RespEnv {
    rng: SplitMix64,
    psn: [u32; 4],
    /// The message a QP is in: (next opcode, bytes left of a WRITE).
    msg: [Option<(u8, u32)>; 4],
    state: [u8; 4],
    mr_key: [u32; 16],
    /// Reads issued last cycle: the data goes on the ports now.
    ctx_q: Option<usize>,
    mr_q: Option<usize>,
    rqe_q: bool,
    offer: Option<RxMeta>,
    rqe_avail: u16,
    /// Packets executed, ACK/NAK requests, tokens, segment commands.
    exec: u64,
    acks: u64,
    toks: u64,
    segs: u64,
}

impl RespEnv {
    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mr_key = core::array::from_fn(|k| (rng.next_u64() as u32) << 4 | k as u32);
        RespEnv {
            rng,
            psn: [0, 100, 0xFF_FFF0, 7],
            msg: [None; 4],
            state: [1, 1, 3, 1],
            mr_key,
            ctx_q: None,
            mr_q: None,
            rqe_q: false,
            offer: None,
            rqe_avail: 0xF,
            exec: 0,
            acks: 0,
            toks: 0,
            segs: 0,
        }
    }

    /// A RECV of 1 to 4 entries, mostly inside MR 0..3 with their keys.
    fn recv(&mut self) -> RqeBits {
        let r = &mut self.rng;
        let mut b = [0u8; 128];
        b[..8].copy_from_slice(&r.next_u64().to_le_bytes());
        b[8] = 1 + r.below(4) as u8;
        for k in 0..4 {
            let mr = r.below(4) as usize;
            let va = 0x10000 * mr as u64 + r.below(0x4000);
            let len = r.below(0x2000) as u32;
            let key = if r.percent(90) {
                self.mr_key[mr]
            } else {
                r.next_u64() as u32
            };
            let o = 0x10 + 16 * k;
            b[o..o + 8].copy_from_slice(&va.to_le_bytes());
            b[o + 8..o + 12].copy_from_slice(&len.to_le_bytes());
            b[o + 12..o + 16].copy_from_slice(&key.to_le_bytes());
        }
        RqeBits(b)
    }

    /// The next request of a random QP: mostly the next packet of a
    /// well-formed message at the QP's expected PSN, now and then a junk
    /// opcode or a PSN off by a little.
    fn header(&mut self) -> RxMeta {
        let r = &mut self.rng;
        let q = r.below(4) as usize;
        let uc = q == 3;
        let mtu = 1u32 << (8 + (q as u32 & 3));
        const JUNK: [u8; 4] = [0x11, 0x0D, 0x1F, 0x01];
        let (mut opcode, mut pay_len, mut dma_len) = match self.msg[q] {
            // A message starts: SEND/WRITE FIRST or ONLY (with immediate
            // or not), or a READ.
            None => match r.below(if uc { 6 } else { 7 }) {
                0 => {
                    self.msg[q] = Some((0x01, 0));
                    (0x00, mtu, 0)
                }
                1 => (0x04, r.below(mtu as u64 + 1) as u32, 0),
                2 => (0x05, r.below(mtu as u64 + 1) as u32, 0),
                3 => {
                    let total = mtu * (1 + r.below(3) as u32) + 1 + r.below(mtu as u64) as u32;
                    self.msg[q] = Some((0x07, total - mtu));
                    (0x06, mtu, total)
                }
                4 => {
                    let n = r.below(mtu as u64 + 1) as u32;
                    (0x0A, n, n)
                }
                5 => {
                    let n = r.below(mtu as u64 + 1) as u32;
                    (0x0B, n, n)
                }
                _ => (0x0C, 0, r.below(0x4000) as u32),
            },
            // A SEND goes on: MIDDLE or LAST.
            Some((0x01, _)) => {
                if r.percent(50) {
                    (0x01, mtu, 0)
                } else {
                    self.msg[q] = None;
                    let op = if r.percent(50) { 0x02 } else { 0x03 };
                    (op, 1 + r.below(mtu as u64) as u32, 0)
                }
            }
            // A WRITE goes on with what is left of its RETH's length.
            Some((_, left)) => {
                if left > mtu {
                    self.msg[q] = Some((0x07, left - mtu));
                    (0x07, mtu, 0)
                } else {
                    self.msg[q] = None;
                    let op = if r.percent(50) { 0x08 } else { 0x09 };
                    (op, left, 0)
                }
            }
        };
        if r.percent(5) {
            opcode = JUNK[r.below(4) as usize];
            (pay_len, dma_len) = (r.below(mtu as u64) as u32, 0);
            self.msg[q] = None;
        }
        if uc {
            opcode |= 0x20;
        }
        let psn = if r.percent(95) {
            self.psn[q]
        } else {
            self.psn[q].wrapping_add(r.below(5) as u32).wrapping_sub(2) & 0xFF_FFFF
        };
        self.psn[q] = (self.psn[q] + 1) & 0xFF_FFFF;
        let mr = r.below(4) as usize;
        let reth = matches!(opcode & 0x1F, 0x06 | 0x0A | 0x0B | 0x0C);
        let imm = matches!(opcode & 0x1F, 0x03 | 0x05 | 0x09 | 0x0B);
        RxMeta {
            qp: q as u8,
            opcode,
            psn,
            ack_req: r.percent(50),
            has_reth: reth,
            has_imm: imm,
            hdr_len: 40 + r.below(20) as u8,
            pay_len: pay_len as u16,
            va: if reth {
                0x10000 * mr as u64 + r.below(0x4000)
            } else {
                0
            },
            rkey: if reth { self.mr_key[mr] } else { 0 },
            dma_len: if reth { dma_len } else { 0 },
            imm: if imm { r.next_u64() as u32 } else { 0 },
            ..Default::default()
        }
    }
}

impl Env for RespEnv {
    type In = ResponderIn;
    type Out = ResponderOut;

    fn step(&mut self, cycle: u64, o: &ResponderOut) -> ResponderIn {
        let mut i = ResponderIn {
            wc_ready: self.rng.percent(70),
            ..Default::default()
        };
        self.exec += o.ev_exec as u64;
        self.acks += o.ack_valid as u64;
        // A sequence NAK names the PSN the QP expects, the ACK of a
        // duplicate the one before it: go on from there, with a new
        // message.
        let q = o.ack_qp as usize & 3;
        if o.ack_valid && o.ack_syndrome == 0x60 {
            self.psn[q] = o.ack_psn;
            self.msg[q] = None;
        } else if o.ack_valid && o.ev_dup {
            self.psn[q] = (o.ack_psn + 1) & 0xFF_FFFF;
            self.msg[q] = None;
        }
        if o.wc_valid && i.wc_ready {
            self.toks += o.wc_tok as u64;
            self.segs += !o.wc_tok as u64;
        }
        if let Some(q) = self.ctx_q.take() {
            i.ctx_state = if q < 4 { self.state[q] } else { 0 };
            i.ctx_uc = q == 3;
            i.ctx_mtu = 1 + (q as u8 & 3);
            i.ctx_pd = 1;
            i.ctx_rq_cq = q as u8 & 3;
            i.ctx_rnr_timer = 5;
            i.ctx_access = if q == 1 { 0x3 } else { 0xF };
            i.ctx_remote_qpn = 0x100 + q as u32;
        }
        if let Some(e) = self.mr_q.take() {
            i.mr_valid = e != 5;
            i.mr_key = self.mr_key[e];
            i.mr_va = 0x10000 * e as u64;
            i.mr_len = 0x10000;
            i.mr_pbase = 0x8000_0000 + 0x10_0000 * e as u64;
            i.mr_access = 0xF;
            i.mr_pd = 1;
        }
        if std::mem::take(&mut self.rqe_q) {
            i.rqe_present = self.rng.percent(90);
            i.rqe_data = self.recv();
        }
        self.ctx_q = o.ctx_rd_valid.then_some(o.ctx_rd_qp as usize);
        self.mr_q = o.mr_rd_valid.then_some(o.mr_rd_idx as usize);
        self.rqe_q = o.rqe_rd_valid;
        if cycle % 400 == 399 {
            // A QP goes to ERROR (and its RECVs are flushed), or back.
            let q = self.rng.below(4) as usize;
            self.state[q] = if self.state[q] == 2 { 1 } else { 2 };
            self.rqe_avail ^= 1 << (4 + q);
        }
        i.rqe_avail = self.rqe_avail;
        i.qp_err = (0..4).fold(0, |m, q| m | ((self.state[q] == 2) as u16) << q);
        if cycle < 8 && cycle.is_multiple_of(2) {
            let q = cycle as usize / 2;
            i.epsn_set_valid = true;
            i.epsn_set_qp = q as u8;
            i.epsn_set_psn = self.psn[q];
        }
        // A header offered stays until taken.
        if cycle >= 10 && self.offer.is_none() && self.rng.percent(40) {
            self.offer = Some(self.header());
        }
        if let Some(m) = self.offer {
            i.hd_valid = true;
            i.hd_meta = m.pack();
            if o.hd_ready {
                self.offer = None;
            }
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn responder_registers_match_the_rtl_trace() {
    check_block::<_, ResponderTop, _>(Responder::default(), RespEnv::new, |e| {
        eprintln!(
            "responder: {} executed, {} ACK/NAKs, {} tokens, {} segment commands",
            e.exec, e.acks, e.toks, e.segs
        );
        assert!(
            e.exec >= 50 && e.acks >= 50 && e.toks >= 20 && e.segs >= 200,
            "responder: too idle"
        );
    });
}

// ---------------------------------------------------------------------
// rx_wr: frames of 1 to 8 beats on in_*, each with its segment commands
// (increasing, inside the frame, the last one wc_last; sometimes one empty
// command), now and then a token between frames; dma_wr's requests
// completed after a random latency.
// ---------------------------------------------------------------------

struct RxWrEnv {
    rng: SplitMix64,
    /// Commands to give, in order (held on wc_* until taken).
    cmds: VecDeque<RxWrIn>,
    /// Beats to give: (data, keep, last), the head held until taken.
    beats: VecDeque<(Beat, u64, bool)>,
    /// Cycles at which the requests taken complete.
    done: VecDeque<u64>,
    /// Requests written, tokens taken.
    reqs: u64,
    toks: u64,
}

impl RxWrEnv {
    fn new(seed: u64) -> Self {
        RxWrEnv {
            rng: SplitMix64::new(seed),
            cmds: VecDeque::new(),
            beats: VecDeque::new(),
            done: VecDeque::new(),
            reqs: 0,
            toks: 0,
        }
    }

    /// The next frame's beats and commands.
    fn frame(&mut self) {
        let r = &mut self.rng;
        let n = 1 + r.below(8) as usize;
        let last_bytes = 1 + r.below(64) as usize;
        let bytes = (n - 1) * 64 + last_bytes;
        for k in 0..n {
            let last = k + 1 == n;
            let keep = if last {
                u64::MAX >> (64 - last_bytes)
            } else {
                u64::MAX
            };
            self.beats.push_back((
                Beat(core::array::from_fn(|_| r.next_u64() as u8)),
                keep,
                last,
            ));
        }
        let cmd = |off: usize, len: usize, last: bool, addr: u64| RxWrIn {
            wc_valid: true,
            wc_off: off as u16,
            wc_len: len as u16,
            wc_addr: addr,
            wc_last: last,
            ..Default::default()
        };
        if r.percent(10) {
            self.cmds.push_back(cmd(0, 0, true, 0));
        } else {
            // Up to three segments of [hdr, bytes), with gaps.
            let mut off = r.below(bytes.min(60) as u64 + 1) as usize;
            let segs = 1 + r.below(3) as usize;
            for s in 0..segs {
                let left = bytes - off;
                let len = if s + 1 == segs {
                    left
                } else {
                    r.below(left as u64 + 1) as usize
                };
                let addr = r.next_u64() >> 8;
                self.cmds.push_back(cmd(off, len, s + 1 == segs, addr));
                off += len;
                if s + 1 < segs && off < bytes {
                    off += r.below(((bytes - off) / 4) as u64 + 1) as usize;
                }
            }
        }
        if r.percent(30) {
            let mut tok = Beat::default();
            for b in tok.0.iter_mut().take(24) {
                *b = r.next_u64() as u8;
            }
            self.cmds.push_back(RxWrIn {
                wc_valid: true,
                wc_tok: true,
                wc_tok_data: tok,
                ..Default::default()
            });
        }
    }
}

impl Env for RxWrEnv {
    type In = RxWrIn;
    type Out = RxWrOut;

    fn step(&mut self, cycle: u64, o: &RxWrOut) -> RxWrIn {
        if self.cmds.len() < 4 {
            self.frame();
        }
        let r = &mut self.rng;
        let mut i = self.cmds.front().copied().unwrap_or_default();
        if o.wc_ready && i.wc_valid {
            self.cmds.pop_front();
        }
        // The head beat is offered until taken (rx_buf's out_* are never
        // withdrawn).
        if let Some(&(data, keep, last)) = self.beats.front() {
            (i.in_valid, i.in_data, i.in_keep, i.in_last) = (true, data, keep, last);
        }
        if i.in_valid && o.in_ready {
            self.beats.pop_front();
        }
        i.wr_req_ready = r.percent(70);
        i.wr_data_ready = r.percent(80);
        i.tok_ready = r.percent(60);
        if o.wr_req_valid && i.wr_req_ready {
            self.reqs += 1;
            self.done.push_back(cycle + 1 + r.below(20));
        }
        if self.done.front().is_some_and(|&c| c <= cycle) {
            self.done.pop_front();
            i.wr_done_valid = true;
        }
        if o.tok_valid && i.tok_ready {
            self.toks += 1;
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn rx_wr_registers_match_the_rtl_trace() {
    check_block::<_, RxWrTop, _>(RxWr::default(), RxWrEnv::new, |e| {
        eprintln!("rx_wr: {} requests, {} tokens", e.reqs, e.toks);
        assert!(e.reqs >= 100 && e.toks >= 20, "rx_wr: too idle");
    });
}

// ---------------------------------------------------------------------
// wr_arb: two clients with requests of 1 to 1024 bytes, their beats sent
// once a request is taken, random back-pressure from dma_wr.
// ---------------------------------------------------------------------

#[derive(Default)]
struct Client {
    /// The request offered (held until taken).
    req: Option<(u64, u32)>,
    /// Beats due for requests taken, and the beat offered (held until
    /// taken).
    beats: u32,
    beat: Option<Beat>,
}

struct WrArbEnv {
    rng: SplitMix64,
    c: [Client; 2],
    /// Requests and beats that went out.
    reqs: u64,
    beats: u64,
}

impl Env for WrArbEnv {
    type In = WrArbIn;
    type Out = WrArbOut;

    fn step(&mut self, _cycle: u64, o: &WrArbOut) -> WrArbIn {
        let r = &mut self.rng;
        let mut i = WrArbIn {
            wr_req_ready: r.percent(70),
            wr_data_ready: r.percent(80),
            ..Default::default()
        };
        self.reqs += (o.wr_req_valid && i.wr_req_ready) as u64;
        self.beats += (o.wr_data_valid && i.wr_data_ready) as u64;
        let ready = [
            (o.a_req_ready, o.a_data_ready),
            (o.b_req_ready, o.b_data_ready),
        ];
        let mut offers = [(None, None); 2];
        for (k, c) in self.c.iter_mut().enumerate() {
            if c.req.is_none() && r.percent(30) {
                c.req = Some((r.next_u64() >> 8, 1 + r.below(1024) as u32));
            }
            if c.beat.is_none() && c.beats > 0 && r.percent(80) {
                c.beat = Some(Beat(core::array::from_fn(|_| r.next_u64() as u8)));
            }
            offers[k] = (c.req, c.beat);
            if let (Some((_, len)), true) = (c.req, ready[k].0) {
                c.beats += len.div_ceil(64);
                c.req = None;
            }
            if c.beat.is_some() && ready[k].1 {
                c.beat = None;
                c.beats -= 1;
            }
        }
        if let Some((addr, len)) = offers[0].0 {
            (i.a_req_valid, i.a_req_addr, i.a_req_len) = (true, addr, len);
        }
        if let Some(d) = offers[0].1 {
            (i.a_data_valid, i.a_data) = (true, d);
        }
        if let Some((addr, len)) = offers[1].0 {
            (i.b_req_valid, i.b_req_addr, i.b_req_len) = (true, addr, len);
        }
        if let Some(d) = offers[1].1 {
            (i.b_data_valid, i.b_data) = (true, d);
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn wr_arb_registers_match_the_rtl_trace() {
    check_block::<_, WrArbTop, _>(
        WrArb::default(),
        |seed| WrArbEnv {
            rng: SplitMix64::new(seed),
            c: Default::default(),
            reqs: 0,
            beats: 0,
        },
        |e| {
            eprintln!("wr_arb: {} requests, {} beats", e.reqs, e.beats);
            assert!(e.reqs >= 100 && e.beats >= 500, "wr_arb: too idle");
        },
    );
}

// ---------------------------------------------------------------------
// cq_arb: both sources offering random completions (b never waiting for a
// frame), held until taken, random back-pressure from cq_writer.
// ---------------------------------------------------------------------

struct CqArbEnv {
    rng: SplitMix64,
    /// The completion each source offers (held until taken): its inputs.
    offer: [Option<CqArbIn>; 2],
    /// Completions that went out.
    taken: u64,
}

impl Env for CqArbEnv {
    type In = CqArbIn;
    type Out = CqArbOut;

    fn step(&mut self, _cycle: u64, o: &CqArbOut) -> CqArbIn {
        let r = &mut self.rng;
        let o_ready = r.percent(70);
        self.taken += (o.o_valid && o_ready) as u64;
        let ready = [o.a_ready, o.b_ready];
        for (k, slot) in self.offer.iter_mut().enumerate() {
            if slot.is_none() && r.percent(60) {
                let (w, s, op) = (r.next_u64(), r.below(256) as u8, r.below(256) as u8);
                let (len, imm, fl) = (r.next_u64() as u32, r.next_u64() as u32, r.percent(50));
                let (sq, qp, cq) = (
                    r.next_u64() as u32 & 0xFF_FFFF,
                    r.below(16) as u8,
                    r.below(4) as u8,
                );
                *slot = Some(if k == 0 {
                    CqArbIn {
                        a_valid: true,
                        a_wait_frame: r.percent(50),
                        a_wr_id: w,
                        a_status: s,
                        a_opcode: op,
                        a_len: len,
                        a_imm: imm,
                        a_imm_flag: fl,
                        a_src_qp: sq,
                        a_qp: qp,
                        a_cq: cq,
                        ..Default::default()
                    }
                } else {
                    CqArbIn {
                        b_valid: true,
                        b_wr_id: w,
                        b_status: s,
                        b_opcode: op,
                        b_len: len,
                        b_imm: imm,
                        b_imm_flag: fl,
                        b_src_qp: sq,
                        b_qp: qp,
                        b_cq: cq,
                        ..Default::default()
                    }
                });
            }
        }
        let (a, b) = (
            self.offer[0].unwrap_or_default(),
            self.offer[1].unwrap_or_default(),
        );
        let i = CqArbIn {
            o_ready,
            b_valid: b.b_valid,
            b_wait_frame: b.b_wait_frame,
            b_wr_id: b.b_wr_id,
            b_status: b.b_status,
            b_opcode: b.b_opcode,
            b_len: b.b_len,
            b_imm: b.b_imm,
            b_imm_flag: b.b_imm_flag,
            b_src_qp: b.b_src_qp,
            b_qp: b.b_qp,
            b_cq: b.b_cq,
            ..a
        };
        for (k, slot) in self.offer.iter_mut().enumerate() {
            if slot.is_some() && ready[k] {
                *slot = None;
            }
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn cq_arb_registers_match_the_rtl_trace() {
    check_block::<_, CqArbTop, _>(
        CqArb::default(),
        |seed| CqArbEnv {
            rng: SplitMix64::new(seed),
            offer: [None, None],
            taken: 0,
        },
        |e| {
            eprintln!("cq_arb: {} completions", e.taken);
            assert!(e.taken >= 1000, "cq_arb: too idle");
        },
    );
}

// ---------------------------------------------------------------------
// rd_resp: READ jobs on a few QPs (one of them often, so its ring fills
// and refuses), head reads of random QPs, pops of QPs with a job.
// ---------------------------------------------------------------------

struct RdRespEnv {
    rng: SplitMix64,
    /// Jobs per QP as the environment counts them.
    cnt: [usize; 16],
    stored: u64,
    refused: u64,
    pops: u64,
}

impl Env for RdRespEnv {
    type In = RdRespIn;
    type Out = RdRespOut;

    fn step(&mut self, _cycle: u64, o: &RdRespOut) -> RdRespIn {
        let r = &mut self.rng;
        let mut i = RdRespIn::default();
        // A pop only of a QP with a job at the start of the cycle.
        let q = r.below(4) as usize;
        if r.percent(40) && self.cnt[q] > 0 {
            i.job_pop_valid = true;
            i.job_pop_qp = q as u8;
        }
        if r.percent(60) {
            let qp = if r.percent(50) { 3 } else { r.below(4) as u8 };
            let len = if r.percent(20) {
                0
            } else {
                r.next_u64() as u32
            };
            let j = ReadJob {
                qp,
                psn: r.below(1 << 24) as u32,
                addr: if len == 0 { 0 } else { r.next_u64() },
                len,
                msn: r.below(1 << 24) as u32,
                mtu: r.below(8) as u8,
                max_rd: r.below(8) as u8,
            };
            i.job_valid = true;
            i.job_tok = tok_beat(&Tok::Read(j).pack());
            if o.job_ready {
                // Refused at the QP's max(1, max_rd) jobs (or a full ring).
                let n = self.cnt[qp as usize];
                if n == DEPTH || n >= (j.max_rd as usize).max(1) {
                    self.refused += 1;
                } else {
                    self.cnt[qp as usize] += 1;
                    self.stored += 1;
                }
            }
        }
        if r.percent(50) {
            i.job_rd_valid = true;
            i.job_rd_qp = r.below(8) as u8;
        }
        if i.job_pop_valid {
            self.cnt[q] -= 1;
            self.pops += 1;
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn rd_resp_registers_match_the_rtl_trace() {
    check_block::<_, RdRespTop, _>(
        RdResp::new(),
        |seed| RdRespEnv {
            rng: SplitMix64::new(seed),
            cnt: [0; 16],
            stored: 0,
            refused: 0,
            pops: 0,
        },
        |e| {
            eprintln!(
                "rd_resp: {} jobs stored, {} refused, {} pops",
                e.stored, e.refused, e.pops
            );
            assert!(
                e.stored >= 500 && e.refused >= 20 && e.pops >= 400,
                "rd_resp: too idle"
            );
        },
    );
}

// ---------------------------------------------------------------------
// rd_sink: READs pushed on four QPs (never into a full ring: a QP's count
// drops only when its READ done token is seen), their responses mostly in
// order, now and then a stray header or a clear; wc_ready at random.
// ---------------------------------------------------------------------

struct RdSinkEnv {
    rng: SplitMix64,
    /// Per QP: the READs pushed (PSN, length, MTU bytes) not yet answered
    /// whole, the next response of the first, the READs not yet seen done,
    /// the next PSN.
    reads: [VecDeque<(u32, u32, u32)>; 4],
    j: [u32; 4],
    cnt: [usize; 4],
    psn: [u32; 4],
    offer: Option<(RxMeta, bool)>,
    exec: u64,
    done: u64,
    drops: u64,
}

impl Env for RdSinkEnv {
    type In = RdSinkIn;
    type Out = RdSinkOut;

    fn step(&mut self, _cycle: u64, o: &RdSinkOut) -> RdSinkIn {
        self.exec += o.ev_exec as u64;
        self.drops += (o.ev_unexp || o.ev_dup || o.ev_seq || o.ev_bad) as u64;
        let r = &mut self.rng;
        let mut i = RdSinkIn {
            wc_ready: r.percent(70),
            ..Default::default()
        };
        if o.wc_valid && i.wc_ready && o.wc_tok {
            let q = (o.wc_tok_data.0[0] >> 1 & 0xFF) as usize;
            self.cnt[q] = self.cnt[q].saturating_sub(1);
            self.done += 1;
        }
        // The header on offer (held until taken); a good one moves the
        // stream on when taken.
        if self.offer.is_none() && r.percent(60) {
            let q = r.below(4) as usize;
            let mut m = RxMeta {
                qp: q as u8,
                hdr_len: 58,
                ..Default::default()
            };
            let good = r.percent(85) && !self.reads[q].is_empty();
            if good {
                let (psn, len, mtu) = self.reads[q][0];
                let j = self.j[q];
                let n = len.div_ceil(mtu).max(1);
                m.opcode = match (j == 0, j + 1 == n) {
                    (true, true) => 0x10,
                    (true, false) => 0x0D,
                    (false, true) => 0x0F,
                    (false, false) => 0x0E,
                };
                m.psn = psn.wrapping_add(j) & 0xFF_FFFF;
                m.has_aeth = m.opcode != 0x0E;
                m.pay_len = if j + 1 == n {
                    (len - j * mtu) as u16
                } else {
                    mtu as u16
                };
            } else {
                m.opcode = 0x0D + r.below(4) as u8;
                m.psn = r.below(1 << 24) as u32;
                m.has_aeth = r.percent(50);
                m.aeth = (r.next_u64() as u32) & 0xE0FF_FFFF;
                m.pay_len = r.below(300) as u16;
            }
            self.offer = Some((m, good));
        }
        if let Some((m, good)) = self.offer {
            i.hd_valid = true;
            i.hd_meta = m.pack();
            if o.hd_ready {
                self.offer = None;
                let q = m.qp as usize;
                if good && !self.reads[q].is_empty() {
                    let (_, len, mtu) = self.reads[q][0];
                    self.j[q] += 1;
                    if self.j[q] == len.div_ceil(mtu).max(1) {
                        self.reads[q].pop_front();
                        self.j[q] = 0;
                    }
                }
            }
        }
        let r = &mut self.rng;
        let cq = r.below(4) as usize;
        // A clear only while no decision or token is under way, so that no
        // token of a cleared READ comes after it.
        if o.hd_ready && !o.wc_valid && r.below(1000) < 3 {
            i.clr_valid = true;
            i.clr_qp = cq as u8;
            self.reads[cq].clear();
            self.j[cq] = 0;
            self.cnt[cq] = 0;
        }
        let q = r.below(4) as usize;
        if r.percent(10) && self.cnt[q] < DEPTH {
            let code = r.below(8) as u8;
            let mtu = [256, 256, 512, 1024, 2048, 4096, 4096, 4096][code as usize];
            let len = match r.below(3) {
                0 => r.below(5) as u32,
                1 => r.below(3 * mtu as u64) as u32,
                _ => mtu,
            };
            i.rr_valid = true;
            i.rr_qp = q as u8;
            i.rr_psn = self.psn[q];
            i.rr_len = len;
            i.rr_addr = r.next_u64();
            i.rr_mtu = code;
            self.psn[q] = self.psn[q].wrapping_add(len.div_ceil(mtu).max(1)) & 0xFF_FFFF;
            self.reads[q].push_back((i.rr_psn, len, mtu));
            self.cnt[q] += 1;
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn rd_sink_registers_match_the_rtl_trace() {
    check_block::<_, RdSinkTop, _>(
        RdSink::new(),
        |seed| RdSinkEnv {
            rng: SplitMix64::new(seed),
            reads: Default::default(),
            j: [0; 4],
            cnt: [0; 4],
            psn: [0xFF_FFF0; 4],
            offer: None,
            exec: 0,
            done: 0,
            drops: 0,
        },
        |e| {
            eprintln!(
                "rd_sink: {} responses accepted, {} READs done, {} dropped",
                e.exec, e.done, e.drops
            );
            assert!(
                e.exec >= 100 && e.done >= 20 && e.drops >= 20,
                "rd_sink: too idle"
            );
        },
    );
}

// ---------------------------------------------------------------------
// retx_ctl (variant retx_ctl_fast: T_UNIT 4, R_UNIT 3, so that timers and
// RNR waits run out within the run): QPs busy and mostly stuck, NAKs with
// una := their PSN, gaps, clears, back-pressure on both outputs.
// ---------------------------------------------------------------------

struct RetxEnv {
    rng: SplitMix64,
    una: [u32; 16],
    nxt: [u32; 16],
    idx: usize,
    rewinds: u64,
    exhausts: u64,
}

impl Env for RetxEnv {
    type In = RetxCtlIn;
    type Out = RetxCtlOut;

    fn step(&mut self, _cycle: u64, o: &RetxCtlOut) -> RetxCtlIn {
        self.rewinds += o.ev_rewind as u64;
        self.exhausts += o.ev_exhaust as u64;
        let mut i = RetxCtlIn {
            attr_timeout: 1 + (self.idx % 3) as u8,
            attr_retry: (self.idx % 4) as u8,
            attr_rnr_retry: (self.idx % 8) as u8,
            rw_ready: self.rng.below(3) != 0,
            xerr_ready: self.rng.below(2) != 0,
            ..Default::default()
        };
        self.idx = o.attr_idx as usize;
        for q in 0..16 {
            if self.rng.below(50) == 0 {
                self.nxt[q] = self.nxt[q].wrapping_add(1) & 0xFF_FFFF;
            }
            if q % 4 == 0 && self.una[q] != self.nxt[q] && self.rng.below(40) == 0 {
                self.una[q] = self.una[q].wrapping_add(1) & 0xFF_FFFF;
            }
        }
        if self.rng.below(20) == 0 {
            let q = self.rng.below(16) as usize;
            if self.una[q] != self.nxt[q] {
                i.nak_valid = true;
                i.nak_qp = q as u8;
                i.nak_psn = self.una[q];
                i.nak_rnr = self.rng.below(2) == 0;
                i.nak_timer = 1 + self.rng.below(8) as u8;
            }
        }
        if self.rng.below(20) == 0 {
            let q = self.rng.below(16) as usize;
            i.gap_valid = true;
            i.gap_qp = q as u8;
            i.gap_psn = self.una[q].wrapping_add(1) & 0xFF_FFFF;
        }
        if self.rng.below(100) == 0 {
            let q = self.rng.below(16) as usize;
            i.clr_valid = true;
            i.clr_qp = q as u8;
            self.una[q] = self.nxt[q];
            if i.nak_valid && i.nak_qp as usize == q {
                i.nak_valid = false;
            }
        }
        for q in 0..16 {
            rnic_model::retx_ctl::set_una(&mut i.una_all, q, self.una[q]);
            i.busy |= ((self.una[q] != self.nxt[q]) as u16) << q;
        }
        i
    }

    fn finished(&self) -> bool {
        false
    }
}

#[test]
fn retx_ctl_registers_match_the_rtl_trace() {
    check_block::<_, RetxCtlFastTop, _>(
        RetxCtl::with_units(4, 3),
        |seed| RetxEnv {
            rng: SplitMix64::new(seed),
            una: [0; 16],
            nxt: [0; 16],
            idx: 0,
            rewinds: 0,
            exhausts: 0,
        },
        |e| {
            eprintln!(
                "retx_ctl: {} rewinds, {} exhaustions taken",
                e.rewinds, e.exhausts
            );
            assert!(e.rewinds >= 50 && e.exhausts >= 5, "retx_ctl: too idle");
        },
    );
}
