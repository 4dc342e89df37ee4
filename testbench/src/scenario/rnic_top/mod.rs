//! Environment of `rnic_top`: the host (MMIO configuration from the vector's
//! tables, WQEs written into the SQ rings, doorbells), the root complex on
//! `rq_*`/`rc_*`, and the MAC on `tx_*`. It collects every frame and, at the
//! end, reads the counters over MMIO; the checks against the independent
//! reference of [`super::tx_reference`] run in [`RnicTopEnv::finish_checks`].
//!
//! This file is the cycle loop; the rest is split by job: [`program`] (what
//! the host writes over MMIO and into the SQ rings, and reads back),
//! [`expect`] (the frames the reference calls for) and [`checks`] (the
//! end-of-run checks).

use std::collections::VecDeque;

use rnic_model::rnic_top::{RnicTopIn, RnicTopOut};

use super::common::Common;
use super::rx_wire::RxWire;
use super::tx_reference::{self, Expected};
use crate::env::SplitMix64;
use crate::lockstep::Env;
use crate::vector::Vector;
use crate::wire::roce::RoceRepr;

mod checks;
mod expect;
mod host;
mod pfc_check;
mod program;
mod read_window;
mod registers;
mod resp_check;
mod resp_counters;
pub mod resp_predict;
mod resp_reads;
mod rx_drops;

pub use checks::{CqeWrite, QpSends};
pub use host::{Host, RecvPost};
pub use pfc_check::{is_pfc, PfcSent};
use program::{config_writes, readback_plan, uses_rx, Readback};
pub use program::{encode_wqe, COUNTERS, RETX_COUNTERS, RX_COUNTERS};
pub use resp_counters::RESP_COUNTERS;

/// Link bits per clock cycle of `rnic_top` as built (100 Gb/s at 250 MHz).
pub const PFC_BITS_PER_CYCLE: u64 = rnic_model::params::BITS_PER_CYCLE as u64;

/// Cycles with nothing left to send before the counters are read: any frame
/// or CQE the reference does not expect would show up in this window.
pub const DRAIN_CYCLES: u64 = 256;
/// The quiet window a pair's local ACK timeouts call for from the start:
/// one period and the scanner's resolution after a rewind's reads
/// (DRAIN_CYCLES when no QP has a timer, or a single NIC's scripted peer,
/// which is not waited for).
fn timeout_quiet(v: &Vector, in_pair: bool) -> u64 {
    let t = super::gbn_check::T_UNIT;
    v.qps
        .iter()
        .filter(|q| q.timeout != 0 && in_pair)
        .map(|q| REWIND_QUIET + (t << q.timeout) + 2 * crate::vector::QPS as u64)
        .fold(DRAIN_CYCLES, u64::max)
}

/// Quiet cycles a rewind may take before its first resent beat: the WQE
/// re-fetch and the payload read, two host round trips with margin.
pub const REWIND_QUIET: u64 = 4096;

/// A well-formed RoCE frame with BTH opcode 0x81 (CNP).
pub fn is_cnp(f: &[u8]) -> bool {
    RoceRepr::parse_bytes(f).is_ok_and(|r| r.bth.opcode == crate::wire::roce::OPCODE_CNP)
}

/// An MMIO read in flight: a counter (its value is a result) or a
/// register whose value the host knows ([`registers`]).
enum Awaiting {
    Counter(String),
    Register { name: String, addr: u16, want: u32 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Writing the tables.
    Config,
    /// Doorbells; waiting for every expected frame and completion.
    Run,
    /// Quiet period.
    Drain {
        until: u64,
    },
    /// Reading the counters back.
    Counters,
    Done,
}

pub struct RnicTopEnv {
    pub common: Common,
    pub vector: Vector,
    pub expected: Expected,
    phase: Phase,
    config: VecDeque<(u16, u32)>,
    config_done: u64,
    next_db: usize,
    /// Per QP: the vector's WQE indices in posting order, and how many are posted.
    qp_wqes: Vec<Vec<usize>>,
    posted: Vec<usize>,
    tready_rng: SplitMix64,
    tready_pct: u8,
    /// In a fabric, the MAC that paces `tx_*` to the line rate (in place
    /// of the vector's random `tx_tready`).
    pub mac: Option<crate::scenario::fabric::mac::MacPacer>,
    cur_frame: Vec<u8>,
    /// Cycle the current frame's first beat was first offered (tvalid), if it is.
    offered: Option<u64>,
    /// (cycle its first beat was first offered, bytes) of every frame: the
    /// frame has started then, taken or not (a valid beat is never withdrawn).
    pub frames: Vec<(u64, Vec<u8>)>,
    /// Cycle of each frame's last beat.
    pub frame_ends: Vec<u64>,
    pub irqs: Vec<(u64, u8)>,
    /// Cycle of each doorbell write.
    pub doorbell_cycles: Vec<u64>,
    counter_reads: VecDeque<Readback>,
    awaiting: VecDeque<Awaiting>,
    /// Plain RW registers the host wrote ([`registers`]), read back after
    /// the counters once `readback_queued`.
    written: registers::Written,
    readback_queued: bool,
    /// Registers read before configuration, with their reset values.
    reset_reads: VecDeque<(String, u16, u32)>,
    pub counters: Vec<(String, u32)>,
    /// The wire into `rx_*` and the peer.
    pub rx: RxWire,
    /// Frames on `tx_*` that are not CNPs.
    data_frames: usize,
    /// CQE writes seen, filled by the end-of-run checks.
    pub cqe_log: Vec<CqeWrite>,
    /// Set by a pair's runner (scenario::pair) while the other NIC or the
    /// link may still bring frames: the quiet window restarts, so the
    /// counters are read only once nothing more can arrive.
    pub hold: bool,
    /// Cycle the run reached [`Phase::Done`].
    pub done_at: Option<u64>,
    in_pair: bool,
    /// RQ doorbells and the verbs program.
    pub host: Host,
    /// Per QP: request packets sent first and resent (check_frames).
    pub sends: Vec<QpSends>,
    /// Per QP: from this expected packet on, the QP may stop sending
    /// (retry exhaustion predicted; [`RnicTopEnv::mark_exhausted`]).
    pub exhausted_from: Vec<Option<usize>>,
    /// Per QP: the cycle it went to ERROR by retry exhaustion, predicted.
    pub exhausted_at: Vec<Option<u64>>,
    /// Last cycle with a beat on `tx_*` or `rq_*`: the quiet window
    /// restarts after it, so a late ACK or memory write is still seen.
    pub(super) last_activity: u64,
    /// The quiet window so far ([`RnicTopEnv::quiet_window`]) and the
    /// received frames it has looked at.
    quiet_w: u64,
    quiet_n: usize,
    /// Functional coverage: `tx_tvalid` high with `tx_tready` low in some cycle.
    pub tx_stalled: bool,
}

impl RnicTopEnv {
    pub fn new(v: &Vector) -> Result<Self, String> {
        Self::build(v, false)
    }

    /// One NIC of a pair (scenario::pair): its `rx_*` is fed by the link
    /// ([`RxWire::push_link`]), and its receive counters are always read
    /// back and checked.
    pub fn new_in_pair(v: &Vector) -> Result<Self, String> {
        Self::build(v, true)
    }

    /// Whether the receive path's counters are read back and checked.
    pub fn uses_rx(&self) -> bool {
        self.in_pair || uses_rx(&self.vector)
    }

    fn build(v: &Vector, in_pair: bool) -> Result<Self, String> {
        let common = Common::new(v)?;
        let mut qp_wqes = vec![Vec::new(); crate::vector::QPS as usize];
        for (k, w) in v.wqes.iter().enumerate() {
            qp_wqes[w.qp as usize].push(k);
        }
        Ok(RnicTopEnv {
            common,
            vector: v.clone(),
            expected: tx_reference::expected(v),
            phase: Phase::Config,
            config: config_writes(v).into(),
            config_done: 0,
            next_db: 0,
            qp_wqes,
            posted: vec![0; crate::vector::QPS as usize],
            tready_rng: SplitMix64::new(v.mac.seed ^ 0x7478_5F72_6479),
            tready_pct: v.mac.tready_percent,
            mac: None,
            cur_frame: Vec::new(),
            offered: None,
            frames: Vec::new(),
            frame_ends: Vec::new(),
            irqs: Vec::new(),
            doorbell_cycles: Vec::new(),
            counter_reads: readback_plan(v, in_pair || uses_rx(v), in_pair),
            awaiting: VecDeque::new(),
            written: registers::Written::default(),
            readback_queued: false,
            reset_reads: registers::at_reset().into(),
            counters: Vec::new(),
            rx: RxWire::new(v)?,
            data_frames: 0,
            cqe_log: Vec::new(),
            hold: false,
            done_at: None,
            in_pair,
            host: Host::new(v),
            last_activity: 0,
            quiet_w: timeout_quiet(v, in_pair),
            quiet_n: 0,
            sends: vec![QpSends::default(); crate::vector::QPS as usize],
            exhausted_from: vec![None; crate::vector::QPS as usize],
            exhausted_at: vec![None; crate::vector::QPS as usize],
            tx_stalled: false,
        })
    }

    fn all_done(&self, cycle: u64) -> bool {
        cycle >= self.config_done + self.vector.min_cycles
            && self.next_db >= self.vector.doorbells.len()
            && self.host_done()
            && self.data_frames >= self.expected.total_packets()
            && self.irqs.len() >= self.expected.cqes.len()
            && self.rx.idle()
    }

    pub fn step(&mut self, cycle: u64, o: &RnicTopOut) -> RnicTopIn {
        self.update_quiet();
        let mut i = RnicTopIn {
            rq_ready: self.common.rc_out.rq_ready,
            rc_valid: self.common.rc_out.rc_valid,
            rc_data: self.common.rc_out.rc_data,
            rc_keep: self.common.rc_out.rc_keep,
            rc_sop: self.common.rc_out.rc_sop,
            rc_eop: self.common.rc_out.rc_eop,
            ..RnicTopIn::default()
        };
        // This cycle's tready: a beat moves at this cycle's edge if tvalid is high too.
        i.tx_tready = match &self.mac {
            Some(m) => m.ready(),
            None => self.tready_pct >= 100 || self.tready_rng.percent(self.tready_pct),
        };
        self.collect_tx(cycle, o, i.tx_tready);
        if let Some(m) = self.mac.as_mut() {
            let taken = (o.tx_tvalid && i.tx_tready)
                .then(|| (o.tx_tkeep.trailing_ones() as u64, o.tx_tlast));
            m.tick(taken);
        }
        let b = self.rx.beat(cycle);
        (i.rx_tvalid, i.rx_tdata, i.rx_tkeep, i.rx_tlast, i.rx_tuser) =
            (b.valid, b.data, b.keep, b.last, b.user);
        if o.irq_valid {
            self.irqs.push((cycle, o.irq_cq));
        }
        if o.mmio_rd_resp_valid {
            match self.awaiting.pop_front() {
                Some(Awaiting::Counter(name)) => self.counters.push((name, o.mmio_rd_resp_data)),
                Some(Awaiting::Register { name, addr, want }) if o.mmio_rd_resp_data != want => {
                    self.common.fail(
                        cycle,
                        format!(
                            "register readback: {name} ({addr:#06x}) read {:#010x}, \
                             the host's last write (or the map's reset) masked to the \
                             map's bits is {want:#010x}",
                            o.mmio_rd_resp_data
                        ),
                    )
                }
                Some(Awaiting::Register { .. }) => {}
                None => self
                    .common
                    .fail(cycle, "MMIO read response with no read outstanding".into()),
            }
        }
        match self.phase {
            Phase::Config => {
                // Every QP must come out of reset in RESET: its CTRL is read
                // back ([`registers::at_reset`]) while the tables are
                // written, on the read port, so configuration takes no
                // longer; a write to a CTRL not read yet (or read in this
                // cycle) waits.
                let unread = |a: u16| self.reset_reads.iter().any(|r| r.1 == a);
                match self.config.front() {
                    Some(&(a, d)) if !unread(a) => {
                        (i.mmio_wr_valid, i.mmio_wr_addr, i.mmio_wr_data) = (true, a, d);
                        self.config.pop_front();
                    }
                    _ => {}
                }
                if let Some((name, addr, want)) = self.reset_reads.pop_front() {
                    (i.mmio_rd_valid, i.mmio_rd_addr) = (true, addr);
                    self.awaiting
                        .push_back(Awaiting::Register { name, addr, want });
                }
                if self.config.is_empty() && self.reset_reads.is_empty() {
                    self.config_done = cycle + 1;
                    self.rx.start(self.config_done);
                    self.phase = Phase::Run;
                }
            }
            Phase::Run => {
                if let Some((a, d)) = self.next_post(cycle) {
                    (i.mmio_wr_valid, i.mmio_wr_addr, i.mmio_wr_data) = (true, a, d);
                }
                if self.all_done(cycle) {
                    self.phase = Phase::Drain {
                        until: cycle + DRAIN_CYCLES,
                    };
                }
            }
            Phase::Drain { until } => {
                // The quiet window restarts while a read is in flight (a
                // WQE prefetch for a QP that sends nothing more may take
                // several round trips), so the run ends only after
                // DRAIN_CYCLES with no read outstanding.
                if self.common.rc.outstanding() > 0 || self.hold {
                    self.phase = Phase::Drain {
                        until: cycle + DRAIN_CYCLES,
                    };
                } else if cycle >= until.max(self.last_activity + self.quiet_window()) {
                    // Not while the responder still owes a QP its last
                    // required ACK/NAK (a PFC pause can hold it back).
                    self.phase = if self.acks_owed(cycle) {
                        Phase::Drain {
                            until: cycle + DRAIN_CYCLES,
                        }
                    } else {
                        Phase::Counters
                    };
                }
            }
            Phase::Counters => match self.counter_reads.pop_front() {
                Some(Readback::Read(name, a)) => {
                    (i.mmio_rd_valid, i.mmio_rd_addr) = (true, a);
                    self.awaiting.push_back(Awaiting::Counter(name));
                }
                Some(Readback::Check(name, addr, want)) => {
                    (i.mmio_rd_valid, i.mmio_rd_addr) = (true, addr);
                    self.awaiting
                        .push_back(Awaiting::Register { name, addr, want });
                }
                Some(Readback::Write(a, d)) => {
                    (i.mmio_wr_valid, i.mmio_wr_addr, i.mmio_wr_data) = (true, a, d);
                }
                // The registers last: the counter plan's STAT_QP writes
                // are among the writes they read back.
                None if !self.readback_queued => {
                    self.readback_queued = true;
                    self.counter_reads.extend(
                        self.written
                            .expected()
                            .into_iter()
                            .map(|(n, a, v)| Readback::Check(n, a, v)),
                    );
                }
                None if self.awaiting.is_empty() => {
                    self.phase = Phase::Done;
                    self.done_at = Some(cycle);
                }
                None => {}
            },
            Phase::Done => {}
        }
        if i.mmio_wr_valid {
            self.written.note(i.mmio_wr_addr, i.mmio_wr_data);
        }
        if o.rq_valid || o.tx_tvalid {
            self.last_activity = cycle;
        }
        self.common.step_link(
            cycle, o.rq_valid, o.rq_data, o.rq_keep, o.rq_sop, o.rq_eop, o.rc_ready,
        );
        i
    }

    /// Frames on `tx_*`: a frame, once started (its first beat offered),
    /// must not pause (tvalid low) before its last beat; keep must be
    /// contiguous from lane 0, full on every beat but the last.
    fn collect_tx(&mut self, cycle: u64, o: &RnicTopOut, tready: bool) {
        let in_frame = !self.cur_frame.is_empty() || self.offered.is_some();
        if in_frame && !o.tx_tvalid {
            self.common
                .fail(cycle, "tx_tvalid dropped inside a frame".into());
        }
        self.tx_stalled |= o.tx_tvalid && !tready;
        if o.tx_tvalid && self.offered.is_none() {
            self.offered = Some(cycle);
        }
        if !(o.tx_tvalid && tready) {
            return;
        }
        let keep = o.tx_tkeep;
        let n = keep.trailing_ones() as usize;
        if n == 0 || (n < 64 && keep >> n != 0) {
            self.common.fail(
                cycle,
                format!("tx_tkeep {keep:#x} is not contiguous from lane 0"),
            );
        }
        if n < 64 && !o.tx_tlast {
            self.common
                .fail(cycle, format!("partial beat (keep {keep:#x}) before tlast"));
        }
        self.cur_frame.extend_from_slice(&o.tx_tdata[..n]);
        if o.tx_tlast {
            let f = std::mem::take(&mut self.cur_frame);
            let start = self.offered.take().expect("offered before taken");
            let repr = RoceRepr::parse_bytes(&f).ok();
            self.rx.on_tx_frame(cycle, repr.as_ref());
            // CNPs and the responder's ACK/NAKs are not the WQEs' packets.
            if !pfc_check::is_pfc(&f)
                && repr.is_none_or(|r| {
                    r.bth.opcode != crate::wire::roce::OPCODE_CNP
                        && r.bth.opcode != resp_check::OPCODE_ACK
                })
            {
                self.data_frames += 1;
            }
            self.frames.push((start, f));
            self.frame_ends.push(cycle);
        }
    }

    pub fn finished(&self) -> bool {
        self.phase == Phase::Done
    }

    /// Still sending its own work, or within a retransmission's quiet
    /// window after its last beat (a resend may still come).
    pub fn may_send(&self, cycle: u64) -> bool {
        self.running() || (self.quiet_w > DRAIN_CYCLES && cycle < self.last_activity + self.quiet_w)
    }

    /// Quiet cycles after the last beat before the counters are read.
    /// DRAIN_CYCLES, unless the NIC may still retransmit
    /// (docs/retransmission.md): after a sequence-error or RNR NAK arrived,
    /// long enough for a rewind's WQE and payload reads (REWIND_QUIET) and
    /// (in a pair) the longest RNR wait named and, with a local ACK
    /// timeout on a QP, one period and the scanner's resolution more (a
    /// single NIC's scripted peer is not waited for).
    fn quiet_window(&self) -> u64 {
        self.quiet_w
    }

    /// Brings [`RnicTopEnv::quiet_window`] up to date with the frames
    /// received since the last call.
    fn update_quiet(&mut self) {
        use super::gbn_check::rnr_cycles;
        if self.quiet_n == self.rx.sent.len() {
            return;
        }
        let live = super::rx_reference::live_qps(&self.vector);
        let mut w = self.quiet_w;
        for f in &self.rx.sent[self.quiet_n..] {
            if let super::rx_reference::RxEvent::Ack { syndrome, .. } =
                super::rx_reference::classify(&f.bytes, f.fcs, &live)
            {
                if syndrome == 0x60 {
                    w = w.max(REWIND_QUIET);
                } else if syndrome >> 5 == 0b001 && self.in_pair {
                    // A scripted peer's RNR NAK may name any timer (code
                    // 0: 655 ms); a single NIC's run does not wait for it.
                    w = w.max(REWIND_QUIET + rnr_cycles(syndrome & 0x1F));
                }
            }
        }
        self.quiet_w = w;
        self.quiet_n = self.rx.sent.len();
    }

    /// The quiet window the vector's local ACK timeouts call for
    /// (DRAIN_CYCLES when no QP has a timer, or outside a pair).
    pub fn timer_quiet(&self) -> u64 {
        timeout_quiet(&self.vector, self.in_pair)
    }

    /// Still configuring or sending its own work (not yet in the quiet
    /// window or after it).
    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Config | Phase::Run)
    }
}

impl Env for RnicTopEnv {
    type In = RnicTopIn;
    type Out = RnicTopOut;
    fn step(&mut self, cycle: u64, out: &RnicTopOut) -> RnicTopIn {
        RnicTopEnv::step(self, cycle, out)
    }
    fn finished(&self) -> bool {
        RnicTopEnv::finished(self)
    }
}
