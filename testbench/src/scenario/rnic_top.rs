//! Environment of `rnic_top`: the host (MMIO configuration from the vector's
//! tables, WQEs written into the SQ rings, doorbells), the root complex on
//! `rq_*`/`rc_*`, and the MAC on `tx_*`. It collects every frame and, at the
//! end, reads the counters over MMIO; the checks against the independent
//! reference of [`super::tx_reference`] run in [`RnicTopEnv::finish_checks`].

use std::collections::VecDeque;

use rnic_model::rnic_top::{RnicTopIn, RnicTopOut};

use super::common::Common;
use super::rx_wire::RxWire;
use super::tx_reference::{self, Expected};
use crate::env::SplitMix64;
use crate::lockstep::Env;
use crate::vector::{QpSpec, Vector, WqeSpec};
use crate::wire::roce::{RoceFrame, RoceRepr};
use crate::wire::{cqe, wqe};
// Register addresses: the generated map, the one table the RTL and model share.
use rnic_model::csr_map::*;

/// The counters read back at the end of every run, by name.
pub const COUNTERS: &[(&str, u16)] = &[
    ("tx_frames", CNT_TX_FRAMES_ADDR),
    ("tx_bytes_lo", CNT_TX_BYTES_LO_ADDR),
    ("tx_bytes_hi", CNT_TX_BYTES_HI_ADDR),
    ("wqe_fetched", CNT_WQE_FETCHED_ADDR),
    ("cqe_written", CNT_CQE_WRITTEN_ADDR),
    ("prot_err", CNT_PROT_ERR_ADDR),
    ("flush", CNT_FLUSH_ADDR),
    ("fetch_err", CNT_FETCH_ERR_ADDR),
    ("dma_err", CNT_DMA_ERR_ADDR),
    ("cpl_unexpected", CNT_CPL_UNEXPECTED_ADDR),
    ("cpl_malformed", CNT_CPL_MALFORMED_ADDR),
    ("cpl_timeout", CNT_CPL_TIMEOUT_ADDR),
];

/// The receive path's and congestion control's counters, read back too when
/// the vector sends frames on `rx_*` or enables congestion control.
pub const RX_COUNTERS: &[(&str, u16)] = &[
    ("rx_frames", CNT_RX_FRAMES_ADDR),
    ("rx_pfc", CNT_RX_PFC_ADDR),
    ("rx_cnp", CNT_RX_CNP_ADDR),
    ("rx_ack", CNT_RX_ACK_ADDR),
    ("rx_data", CNT_RX_DATA_ADDR),
    ("rx_ce", CNT_RX_CE_ADDR),
    ("drop_fcs", CNT_DROP_FCS_ADDR),
    ("drop_runt", CNT_DROP_RUNT_ADDR),
    ("drop_not_roce", CNT_DROP_NOT_ROCE_ADDR),
    ("drop_trunc", CNT_DROP_TRUNC_ADDR),
    ("drop_ip_csum", CNT_DROP_IP_CSUM_ADDR),
    ("drop_icrc", CNT_DROP_ICRC_ADDR),
    ("drop_opcode", CNT_DROP_OPCODE_ADDR),
    ("drop_qp", CNT_DROP_QP_ADDR),
    ("ack_new", CNT_ACK_NEW_ADDR),
    ("ack_dup", CNT_ACK_DUP_ADDR),
    ("nak", CNT_NAK_ADDR),
    ("ack_invalid", CNT_ACK_INVALID_ADDR),
    ("cnp_sent", CNT_CNP_SENT_ADDR),
    ("ce_suppressed", CNT_CE_SUPPRESSED_ADDR),
    ("dcqcn_cnp", CNT_DCQCN_CNP_ADDR),
    ("dcqcn_cut", CNT_DCQCN_CUT_ADDR),
    ("dcqcn_fr", CNT_DCQCN_FR_ADDR),
    ("dcqcn_ai", CNT_DCQCN_AI_ADDR),
    ("dcqcn_hai", CNT_DCQCN_HAI_ADDR),
    ("dcqcn_alpha", CNT_DCQCN_ALPHA_ADDR),
];

/// One step of the end-of-run readback: a register read under a name, or a
/// write (STAT_QP, selecting the QP whose DCQCN state the next reads show).
#[derive(Debug, Clone)]
enum Readback {
    Read(String, u16),
    Write(u16, u32),
}

/// Whether the vector uses the receive path or congestion control at all
/// (then its counters and every CC QP's final DCQCN state are results too).
fn uses_rx(v: &Vector) -> bool {
    !v.rx.is_empty() || v.qps.iter().any(|q| q.cc) || v.peer.auto_ack
}

fn readback_plan(v: &Vector) -> VecDeque<Readback> {
    let mut plan: VecDeque<Readback> = COUNTERS
        .iter()
        .map(|&(n, a)| Readback::Read(n.to_string(), a))
        .collect();
    if uses_rx(v) {
        plan.extend(
            RX_COUNTERS
                .iter()
                .map(|&(n, a)| Readback::Read(n.to_string(), a)),
        );
        for q in v.qps.iter().filter(|q| q.cc) {
            plan.push_back(Readback::Write(CC_STAT_QP_ADDR, q.qp));
            plan.push_back(Readback::Read(format!("qp{}_rc", q.qp), CC_STAT_RC_ADDR));
            plan.push_back(Readback::Read(format!("qp{}_rt", q.qp), CC_STAT_RT_ADDR));
            plan.push_back(Readback::Read(
                format!("qp{}_alpha", q.qp),
                CC_STAT_ALPHA_ADDR,
            ));
        }
    }
    plan
}

/// Link bits per clock cycle of `rnic_top` as built (100 Gb/s at 250 MHz).
pub const PFC_BITS_PER_CYCLE: u64 = rnic_model::params::BITS_PER_CYCLE as u64;

/// Cycles with nothing left to send before the counters are read: any frame
/// or CQE the reference does not expect would show up in this window.
pub const DRAIN_CYCLES: u64 = 256;

/// A well-formed RoCE frame with BTH opcode 0x81 (CNP).
pub fn is_cnp(f: &[u8]) -> bool {
    RoceRepr::parse_bytes(f).is_ok_and(|r| r.bth.opcode == crate::wire::roce::OPCODE_CNP)
}

/// The 64-byte WQE of docs/tx_datapath.md ([`wqe`]) for a vector's WQE.
pub fn encode_wqe(w: &WqeSpec) -> [u8; wqe::WQE_LEN] {
    wqe::Repr {
        wr_id: w.wr_id.0,
        opcode: w.opcode.code(),
        signaled: w.signaled,
        solicited: w.solicited,
        len: w.len,
        laddr: w.laddr.0,
        lkey: w.lkey.0 as u32,
        imm: w.imm.0 as u32,
        raddr: w.raddr.0,
        rkey: w.rkey.0 as u32,
    }
    .to_bytes()
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
    awaiting: VecDeque<String>,
    pub counters: Vec<(String, u32)>,
    /// The wire into `rx_*` and the peer.
    pub rx: RxWire,
    /// Frames on `tx_*` that are not CNPs.
    data_frames: usize,
    /// CQE writes seen, filled by the end-of-run checks.
    pub cqe_log: Vec<CqeWrite>,
}

/// `(register, value)` writes that configure `v`'s tables.
fn config_writes(v: &Vector) -> Vec<(u16, u32)> {
    let c = &v.config;
    let mut w = vec![
        (
            GLOBAL_PCIE_CFG_ADDR,
            (c.mrrs.trailing_zeros() - 7)
                | (c.mps.trailing_zeros() - 7) << 4
                | (c.requester_id as u32) << 16,
        ),
        (GLOBAL_CPL_TIMEOUT_ADDR, c.cpl_timeout),
    ];
    for cq in &v.cqs {
        let a = CQ_BASE + (cq.cq as u16) * CQ_STRIDE;
        w.push((a + CQ_BASE_LO_OFF, cq.ring.base.0 as u32));
        w.push((a + CQ_BASE_HI_OFF, (cq.ring.base.0 >> 32) as u32));
        w.push((a + CQ_LOG_OFF, cq.ring.log_size as u32));
    }
    for m in &v.mrs {
        let a = MR_BASE + (m.index as u16) * MR_STRIDE;
        let access: u32 = m.access.iter().map(|x| x.bit()).fold(0, |a, b| a | b);
        w.push((a + MR_KEY_OFF, m.key.0 as u32));
        w.push((a + MR_VA_LO_OFF, m.va.0 as u32));
        w.push((a + MR_VA_HI_OFF, (m.va.0 >> 32) as u32));
        w.push((a + MR_LEN_LO_OFF, m.len.0 as u32));
        w.push((a + MR_LEN_HI_OFF, (m.len.0 >> 32) as u32));
        w.push((a + MR_PBASE_LO_OFF, m.pbase.0 as u32));
        w.push((a + MR_PBASE_HI_OFF, (m.pbase.0 >> 32) as u32));
        w.push((a + MR_PD_OFF, m.pd as u32));
        w.push((a + MR_FLAGS_OFF, access | (m.valid as u32) << 8));
    }
    if v.cc != crate::vector::CcSpec::default() {
        w.extend(cc_writes(&v.cc));
    }
    for q in &v.qps {
        w.extend(qp_writes(q));
    }
    w
}

/// Block CC from the vector's parameters in natural units (docs/rx_cc.md).
fn cc_writes(c: &crate::vector::CcSpec) -> Vec<(u16, u32)> {
    use crate::vector::rx::rate_units;
    vec![
        (CC_DCQCN_G_ADDR, c.g_shift as u32 | (c.f as u32) << 8),
        (CC_DCQCN_K_ADDR, c.k_cycles),
        (CC_DCQCN_T_INC_ADDR, c.t_inc_cycles),
        (CC_DCQCN_B_ADDR, c.b_bytes),
        (CC_DCQCN_R_AI_ADDR, rate_units(c.r_ai_mbps)),
        (CC_DCQCN_R_HAI_ADDR, rate_units(c.r_hai_mbps)),
        (CC_DCQCN_R_MIN_ADDR, rate_units(c.r_min_mbps)),
        (CC_DCQCN_R_MAX_ADDR, rate_units(c.r_max_mbps)),
        (CC_DCQCN_ALPHA_ADDR, c.alpha_init as u32),
        (CC_RL_BURST_ADDR, c.burst_bytes),
        (
            CC_CNP_CFG_ADDR,
            c.cnp_dscp as u32 | (c.cnp_pcp as u32) << 8 | (c.cnp_becn as u32) << 16,
        ),
        (CC_CNP_INTERVAL_ADDR, c.cnp_interval_cycles),
    ]
}

fn qp_writes(q: &QpSpec) -> Vec<(u16, u32)> {
    let a = QP_BASE + (q.qp as u16) * QP_STRIDE;
    let (src, dst) = q.ip.to_u128();
    let (dm, sm) = (q.dst_mac.to_u64(), q.src_mac.to_u64());
    let vlan = q.vlan.map_or(0, |v| v.vid as u32 | (v.pcp as u32) << 12);
    let mtu_code = q.mtu.trailing_zeros() - 7;
    let ctrl = q.state.code()
        | ((q.kind == crate::vector::QpType::Uc) as u32) << 4
        | (q.ip.is_v6() as u32) << 5
        | (q.vlan.is_some() as u32) << 6
        | (q.ecn as u32) << 7
        | mtu_code << 8
        | q.cq << 12
        | (q.cc as u32) << 16;
    let mut w = vec![
        (a + QP_REMOTE_QPN_OFF, q.remote_qpn),
        (a + QP_PSN_OFF, q.psn),
        (a + QP_PD_OFF, q.pd as u32),
        (a + QP_DST_MAC_LO_OFF, dm as u32),
        (a + QP_DST_MAC_HI_OFF, (dm >> 32) as u32),
        (a + QP_SRC_MAC_LO_OFF, sm as u32),
        (a + QP_SRC_MAC_HI_OFF, (sm >> 32) as u32),
    ];
    for k in 0..4u16 {
        let sh = 96 - 32 * k as u32;
        w.push((a + QP_SRC_IP0_OFF + 4 * k, (src >> sh) as u32));
        w.push((a + QP_DST_IP0_OFF + 4 * k, (dst >> sh) as u32));
    }
    w.extend([
        (a + QP_UDP_OFF, q.udp_sport as u32 | (q.dscp as u32) << 16),
        (a + QP_VLAN_OFF, vlan | (q.pkey as u32) << 16),
        (a + QP_SQ_BASE_LO_OFF, q.sq.base.0 as u32),
        (a + QP_SQ_BASE_HI_OFF, (q.sq.base.0 >> 32) as u32),
        (a + QP_SQ_LOG_OFF, q.sq.log_size as u32),
        // Last: the QP becomes active only once everything else is set.
        (a + QP_CTRL_OFF, ctrl),
    ]);
    w
}

impl RnicTopEnv {
    pub fn new(v: &Vector) -> Result<Self, String> {
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
            cur_frame: Vec::new(),
            offered: None,
            frames: Vec::new(),
            frame_ends: Vec::new(),
            irqs: Vec::new(),
            doorbell_cycles: Vec::new(),
            counter_reads: readback_plan(v),
            awaiting: VecDeque::new(),
            counters: Vec::new(),
            rx: RxWire::new(v)?,
            data_frames: 0,
            cqe_log: Vec::new(),
        })
    }

    /// Writes the doorbell's WQEs into the SQ ring and returns the DOORBELL value.
    fn post(&mut self, qp: u32, n: u32) -> u32 {
        let q = self
            .vector
            .qps
            .iter()
            .find(|q| q.qp == qp)
            .expect("validated");
        let size = 1usize << q.sq.log_size;
        for _ in 0..n {
            let idx = self.posted[qp as usize];
            let w = &self.vector.wqes[self.qp_wqes[qp as usize][idx]];
            let addr = q.sq.base.0 + 64 * (idx % size) as u64;
            self.common.mem.write(addr, &encode_wqe(w));
            self.posted[qp as usize] += 1;
        }
        (self.posted[qp as usize] as u32 & 0xFFFF) | qp << 16
    }

    fn all_done(&self, cycle: u64) -> bool {
        cycle >= self.config_done + self.vector.min_cycles
            && self.next_db >= self.vector.doorbells.len()
            && self.data_frames >= self.expected.total_packets()
            && self.irqs.len() >= self.expected.cqes.len()
            && self.rx.idle()
    }

    pub fn step(&mut self, cycle: u64, o: &RnicTopOut) -> RnicTopIn {
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
        i.tx_tready = self.tready_pct >= 100 || self.tready_rng.percent(self.tready_pct);
        self.collect_tx(cycle, o, i.tx_tready);
        let b = self.rx.beat(cycle);
        (i.rx_tvalid, i.rx_tdata, i.rx_tkeep, i.rx_tlast, i.rx_tuser) =
            (b.valid, b.data, b.keep, b.last, b.user);
        if o.irq_valid {
            self.irqs.push((cycle, o.irq_cq));
        }
        if o.mmio_rd_resp_valid {
            match self.awaiting.pop_front() {
                Some(name) => self.counters.push((name, o.mmio_rd_resp_data)),
                None => self
                    .common
                    .fail(cycle, "MMIO read response with no read outstanding".into()),
            }
        }
        match self.phase {
            Phase::Config => {
                if let Some((a, d)) = self.config.pop_front() {
                    (i.mmio_wr_valid, i.mmio_wr_addr, i.mmio_wr_data) = (true, a, d);
                }
                if self.config.is_empty() {
                    self.config_done = cycle + 1;
                    self.rx.start(self.config_done);
                    self.phase = Phase::Run;
                }
            }
            Phase::Run => {
                if let Some(d) = self.vector.doorbells.get(self.next_db) {
                    if cycle >= self.config_done + d.at {
                        let (qp, n) = (d.qp, d.wqes);
                        let data = self.post(qp, n);
                        (i.mmio_wr_valid, i.mmio_wr_addr, i.mmio_wr_data) =
                            (true, GLOBAL_DOORBELL_ADDR, data);
                        self.doorbell_cycles.push(cycle);
                        self.next_db += 1;
                    }
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
                if self.common.rc.outstanding() > 0 {
                    self.phase = Phase::Drain {
                        until: cycle + DRAIN_CYCLES,
                    };
                } else if cycle >= until {
                    self.phase = Phase::Counters;
                }
            }
            Phase::Counters => match self.counter_reads.pop_front() {
                Some(Readback::Read(name, a)) => {
                    (i.mmio_rd_valid, i.mmio_rd_addr) = (true, a);
                    self.awaiting.push_back(name);
                }
                Some(Readback::Write(a, d)) => {
                    (i.mmio_wr_valid, i.mmio_wr_addr, i.mmio_wr_data) = (true, a, d);
                }
                None if self.awaiting.is_empty() => self.phase = Phase::Done,
                None => {}
            },
            Phase::Done => {}
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
            if repr.is_none_or(|r| r.bth.opcode != crate::wire::roce::OPCODE_CNP) {
                self.data_frames += 1;
            }
            self.frames.push((start, f));
            self.frame_ends.push(cycle);
        }
    }

    pub fn finished(&self) -> bool {
        self.phase == Phase::Done
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

/// One CQE write seen on `rq_*`.
#[derive(Debug, Clone)]
pub struct CqeWrite {
    pub cycle: u64,
    pub cq: u32,
    /// Producer index: the k-th CQE written to this CQ.
    pub index: u32,
    pub addr: u64,
    pub cqe: cqe::Repr,
    pub raw: Vec<u8>,
}

impl RnicTopEnv {
    /// Every MWr on `rq_*` into a CQ ring, decoded, in the order they left.
    /// Any other MWr is reported as a failure (the transmit path writes
    /// nothing but CQEs).
    pub fn cqe_writes(&mut self, cycle: u64) -> Vec<CqeWrite> {
        use crate::env::Direction;
        use crate::wire::tlp::{Tlp, TlpKind};
        let mut out = Vec::new();
        let mut count = vec![0u32; crate::vector::CQS as usize];
        let mut bad = Vec::new();
        for e in self.common.rc.log() {
            if e.dir != Direction::Rq {
                continue;
            }
            let Ok(t) = Tlp::new_checked(&e.bytes[..]) else {
                continue;
            };
            if !matches!(t.kind(), Ok(TlpKind::MemWrite)) {
                continue;
            }
            let addr = t.address();
            let ring = self.vector.cqs.iter().find(|c| {
                addr >= c.ring.base.0 && addr < c.ring.base.0 + (32u64 << c.ring.log_size)
            });
            let payload = t.payload();
            match ring {
                Some(c) if payload.len() == cqe::CQE_LEN => {
                    let k = &mut count[c.cq as usize];
                    out.push(CqeWrite {
                        cycle: e.cycle,
                        cq: c.cq,
                        index: *k,
                        addr,
                        cqe: cqe::Repr::parse(&cqe::Cqe::new_unchecked(payload)),
                        raw: payload.to_vec(),
                    });
                    *k += 1;
                }
                _ => bad.push(format!(
                    "MWr of {} bytes to {addr:#x} is not a CQE write",
                    payload.len()
                )),
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
        out
    }

    /// Completions: per CQ, the k-th CQE written goes to entry k mod 2^log
    /// with owner = NOT bit `log` of k and reserved bytes zero; per QP, the
    /// CQEs are the reference's completions in order; nothing else.
    fn check_cqes(&mut self, cycle: u64) {
        let writes = self.cqe_writes(cycle);
        let mut pos = vec![0usize; crate::vector::QPS as usize];
        for w in &writes {
            let c = self
                .vector
                .cqs
                .iter()
                .find(|c| c.cq == w.cq)
                .expect("found by address")
                .clone();
            let at = format!("CQE {} of CQ {} (cycle {})", w.index, w.cq, w.cycle);
            let want_addr = c.ring.base.0 + 32 * (w.index % (1 << c.ring.log_size)) as u64;
            let owner = ((!(w.index >> c.ring.log_size)) & 1) as u8;
            if w.addr != want_addr {
                self.common.fail(
                    cycle,
                    format!("{at}: written to {:#x}, expected {want_addr:#x}", w.addr),
                );
            }
            if w.cqe.owner as u8 != owner || !cqe::Cqe::new_unchecked(&w.raw).reserved_zero() {
                self.common.fail(
                    cycle,
                    format!(
                        "{at}: owner {:#x} (expected {owner}) or reserved bytes set: {:02x?}",
                        w.raw[cqe::field::OWNER],
                        w.raw
                    ),
                );
            }
            let e = w.cqe;
            let Some(p) = pos.get_mut(e.qp as usize) else {
                self.common
                    .fail(cycle, format!("{at}: QP {} does not exist", e.qp));
                continue;
            };
            let mine: Vec<_> = self.expected.cqes.iter().filter(|x| x.qp == e.qp).collect();
            match mine.get(*p) {
                Some(x)
                    if x.cq == w.cq
                        && x.wr_id == e.wr_id
                        && x.status == e.status
                        && x.opcode == e.opcode
                        && x.len == e.len
                        && x.imm == e.imm => {}
                Some(x) => {
                    let msg = format!(
                        "{at}: got wr_id {:#x} status {} opcode {} len {} imm {:#x}; expected (wqes[{}]) \
                         CQ {} wr_id {:#x} status {} opcode {} len {} imm {:#x}",
                        e.wr_id, e.status, e.opcode, e.len, e.imm, x.wqe, x.cq, x.wr_id, x.status, x.opcode,
                        x.len, x.imm
                    );
                    self.common.fail(cycle, msg);
                }
                None => self
                    .common
                    .fail(cycle, format!("{at}: unexpected completion {e:?}")),
            }
            *p += 1;
        }
        if writes.len() != self.expected.cqes.len() {
            let msg = format!(
                "{} CQEs written, expected {}",
                writes.len(),
                self.expected.cqes.len()
            );
            self.common.fail(cycle, msg);
        }
        if self.irqs.len() != writes.len() {
            let msg = format!(
                "{} CQ interrupts for {} CQEs",
                self.irqs.len(),
                writes.len()
            );
            self.common.fail(cycle, msg);
        }
        for (k, w) in writes.iter().enumerate() {
            if let Some(&(_, cq)) = self.irqs.get(k) {
                if cq as u32 != w.cq {
                    self.common.fail(
                        cycle,
                        format!("interrupt {k} names CQ {cq}, its CQE went to CQ {}", w.cq),
                    );
                }
            }
        }
        self.cqe_log = writes;
    }
}

impl RnicTopEnv {
    /// The frame the testbench expects for packet `p`, built from the QP's
    /// configuration, the packet's fields and host memory with the
    /// testbench's own RoCEv2 encoder (wire::roce, ICRC by crc32fast).
    pub fn expected_frame(&self, p: &tx_reference::ExpPacket) -> Vec<u8> {
        self.frame_of(p.qp, |repr| {
            (repr.bth.opcode, repr.bth.se) = (p.opcode, p.se);
            (repr.bth.ack_req, repr.bth.psn) = (p.ack_req, p.psn);
            repr.reth = p
                .reth
                .map(|(va, rkey, dma_len)| crate::wire::roce::reth::Repr { va, rkey, dma_len });
            repr.imm = p.imm;
            repr.payload = self.common.mem.read(p.pay_addr, p.pay_len as usize);
        })
    }

    /// The CNP QP `qp`'s notification point sends (docs/protocol.md section 1: DestQP =
    /// the remote QP, PSN 0, BECN, 16 zero bytes; its own DSCP and priority,
    /// not ECN-capable).
    pub fn expected_cnp(&self, qp: u32) -> Vec<u8> {
        let cc = &self.vector.cc;
        self.frame_of(qp, |repr| {
            if let Some(t) = &mut repr.eth.vlan {
                t.pcp = cc.cnp_pcp;
            }
            match &mut repr.ip {
                crate::wire::roce::IpRepr::V4(r) => (r.dscp, r.ecn) = (cc.cnp_dscp, 0),
                crate::wire::roce::IpRepr::V6(r) => (r.dscp, r.ecn) = (cc.cnp_dscp, 0),
            }
            (repr.bth.opcode, repr.bth.becn) = (crate::wire::roce::OPCODE_CNP, cc.cnp_becn);
        })
    }

    /// A frame QP `qp` sends: its Ethernet, IP and UDP headers and the BTH's
    /// P_Key and DestQP from the vector's QP context (every other BTH field 0),
    /// the rest filled in by `fill`.
    fn frame_of(&self, qp: u32, fill: impl FnOnce(&mut RoceRepr)) -> Vec<u8> {
        use crate::vector::IpPair;
        use crate::wire::roce::{bth, ethernet, ipv4, ipv6, udp, IpRepr};
        let q = self
            .vector
            .qps
            .iter()
            .find(|q| q.qp == qp)
            .expect("frame of a known QP");
        let ecn = if q.ecn { 0b10 } else { 0 };
        let ip = match q.ip {
            IpPair::Ipv4 { src, dst } => IpRepr::V4(ipv4::Repr {
                src,
                dst,
                dscp: q.dscp,
                ecn,
                ident: 0,
                dont_frag: true,
                ttl: 64,
            }),
            IpPair::Ipv6 { src, dst } => IpRepr::V6(ipv6::Repr {
                src,
                dst,
                dscp: q.dscp,
                ecn,
                flow_label: 0,
                hop_limit: 64,
            }),
        };
        let mut repr = RoceRepr {
            eth: ethernet::Repr {
                dst: q.dst_mac.to_u64(),
                src: q.src_mac.to_u64(),
                vlan: q.vlan.map(|v| ethernet::VlanTag {
                    pcp: v.pcp,
                    dei: false,
                    vid: v.vid,
                }),
            },
            ip,
            udp: udp::Repr {
                src_port: q.udp_sport,
                checksum: 0,
            },
            bth: bth::Repr {
                opcode: 0,
                se: false,
                migreq: false,
                pkey: q.pkey,
                fecn: false,
                becn: false,
                dest_qp: q.remote_qpn,
                ack_req: false,
                psn: 0,
            },
            reth: None,
            aeth: None,
            imm: None,
            payload: Vec::new(),
        };
        fill(&mut repr);
        let mut buf = vec![0u8; repr.buffer_len()];
        repr.emit(&mut RoceFrame::new_unchecked(&mut buf[..]));
        buf
    }

    /// Every frame must be a well-formed RoCEv2 frame (ICRC, checksum,
    /// lengths) and, byte for byte, the next packet the reference expects
    /// from the QP it is addressed to (by DestQP), so the PSN sequence, the
    /// opcodes, the headers and the payload of every QP are all checked.
    fn check_frames(&mut self, cycle: u64) {
        let mut next = vec![0usize; crate::vector::QPS as usize];
        let mut cnps = Vec::new();
        let frames = std::mem::take(&mut self.frames);
        for (k, (start, f)) in frames.iter().enumerate() {
            let at = format!("frame {k} (cycle {start}, {} bytes)", f.len());
            let repr = match RoceRepr::parse_bytes(f) {
                Ok(r) => r,
                Err(e) => {
                    self.common.fail(cycle, format!("{at}: {e}"));
                    continue;
                }
            };
            let Some(q) = self
                .vector
                .qps
                .iter()
                .find(|q| q.remote_qpn == repr.bth.dest_qp)
            else {
                self.common.fail(
                    cycle,
                    format!("{at}: DestQP {:#x} is no QP's remote QP", repr.bth.dest_qp),
                );
                continue;
            };
            let qp = q.qp as usize;
            if repr.bth.opcode == crate::wire::roce::OPCODE_CNP {
                let want = self.expected_cnp(q.qp);
                if *f != want {
                    self.common.fail(
                        cycle,
                        format!("{at}: CNP of QP {qp} differs from the expected CNP {want:02x?}"),
                    );
                }
                cnps.push(q.qp);
                continue;
            }
            let Some(p) = self.expected.packets[qp].get(next[qp]).cloned() else {
                self.common.fail(
                    cycle,
                    format!("{at}: QP {qp} sent more packets than expected"),
                );
                continue;
            };
            next[qp] += 1;
            let want = self.expected_frame(&p);
            if *f != want {
                let b = f
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(f.len().min(want.len()));
                self.common.fail(
                    cycle,
                    format!(
                        "{at}: QP {qp} packet {} (wqes[{}] opcode {:#04x} PSN {}) differs from the expected \
                         frame ({} bytes) first at byte {b}: got {:02x?}, expected {:02x?}",
                        next[qp] - 1,
                        p.wqe,
                        p.opcode,
                        p.psn,
                        want.len(),
                        f.get(b..(b + 8).min(f.len())),
                        want.get(b..(b + 8).min(want.len())),
                    ),
                );
            }
        }
        for q in &self.vector.qps {
            let (sent, want) = (
                next[q.qp as usize],
                self.expected.packets[q.qp as usize].len(),
            );
            if sent < want {
                self.common.fail(
                    cycle,
                    format!("QP {}: {sent} packets sent, {want} expected", q.qp),
                );
            }
        }
        self.frames = frames;
        self.check_cnps(cycle, &cnps);
    }

    /// The CNPs sent, per QP, are those the CE-marked packets must cause
    /// (rx_reference::cnps on the cycles they arrived).
    fn check_cnps(&mut self, cycle: u64, sent: &[u32]) {
        let v = &self.vector;
        let live = super::rx_reference::live_qps(v);
        let ce: Vec<(u32, u64)> = self
            .rx
            .sent
            .iter()
            .filter_map(
                |s| match super::rx_reference::classify(&s.bytes, s.fcs, &live) {
                    super::rx_reference::RxEvent::Data { qp, ce: true } => Some((qp, s.last)),
                    _ => None,
                },
            )
            .collect();
        let want = super::rx_reference::cnps(&ce, v.cc.cnp_interval_cycles as u64);
        let per_qp = |l: &[u32]| {
            let mut m = std::collections::BTreeMap::new();
            for &q in l {
                *m.entry(q).or_insert(0u32) += 1;
            }
            m
        };
        if per_qp(sent) != per_qp(&want) {
            let msg = format!(
                "CNPs sent per QP {:?}, the CE packets call for {:?}",
                per_qp(sent),
                per_qp(&want)
            );
            self.common.fail(cycle, msg);
        }
    }

    /// No data frame of a paused priority starts: PFC frame with last beat
    /// at n and quanta Q for priority p pauses p's frame starts (first beats)
    /// from n + 4 to n + 3 + ceil(Q * 512 / 400) (docs/rx_cc.md, pfc; a later
    /// frame replaces the window from its own n + 4). A frame's priority is
    /// its VLAN PCP, 0 untagged.
    fn check_pause(&mut self, cycle: u64) {
        let mut windows: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 8];
        let live = super::rx_reference::live_qps(&self.vector);
        for s in &self.rx.sent {
            let super::rx_reference::RxEvent::Pfc { enable, quanta } =
                super::rx_reference::classify(&s.bytes, s.fcs, &live)
            else {
                continue;
            };
            let from = s.last + 4;
            for p in (0..8).filter(|p| enable >> p & 1 == 1) {
                let w = &mut windows[p];
                // The new frame replaces the running pause: only the last
                // window can still be open (they are pushed in time order).
                if let Some(x) = w.last_mut() {
                    x.1 = x.1.min(from - 1);
                }
                let d = (quanta[p] as u64 * 512).div_ceil(PFC_BITS_PER_CYCLE);
                if d > 0 {
                    w.push((from, from + d - 1));
                }
            }
        }
        let mut bad = Vec::new();
        for (start, f) in &self.frames {
            if is_cnp(f) {
                continue;
            }
            let pcp = if f.len() > 15 && f[12..14] == [0x81, 0x00] {
                f[14] >> 5
            } else {
                0
            };
            // Windows are disjoint and in time order: the one that may hold
            // `start` is the last one opened at or before it.
            let w = &windows[pcp as usize];
            let k = w.partition_point(|x| x.0 <= *start);
            if let Some(w) = k.checked_sub(1).map(|k| w[k]).filter(|w| *start <= w.1) {
                bad.push(format!(
                    "a frame of priority {pcp} started at cycle {start}, inside its PFC pause {}..={}",
                    w.0, w.1
                ));
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
    }

    /// Every RX counter read back is what the frames sent call for.
    fn check_rx_counters(&mut self, cycle: u64) {
        if !uses_rx(&self.vector) {
            return;
        }
        let sent: Vec<(&[u8], bool)> = self.rx.sent.iter().map(|s| (&s.bytes[..], s.fcs)).collect();
        let want = super::rx_reference::counters(&self.vector, &sent);
        let mut bad = Vec::new();
        for &(name, _) in RX_COUNTERS.iter().take(14) {
            let got = self
                .counters
                .iter()
                .find(|(n, _)| n == name)
                .map(|x| x.1 as u64);
            let exp = want.get(name).copied().unwrap_or(0);
            if got != Some(exp) {
                bad.push(format!("{name} = {got:?}, the frames sent call for {exp}"));
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
    }

    /// End-of-run checks against the reference, then the PCIe ones.
    pub fn finish_checks(&mut self, cycle: u64) {
        self.check_frames(cycle);
        self.check_cqes(cycle);
        self.check_rx_counters(cycle);
        self.check_pause(cycle);
        self.common.finish(cycle);
    }

    /// Frames as the vector's expected results record them.
    pub fn frame_results(&self) -> Vec<crate::vector::FrameResult> {
        self.frames
            .iter()
            .map(|(_, f)| {
                let what = match RoceRepr::parse_bytes(f) {
                    Ok(r) => format!(
                        "dest_qp {:#x} psn {} {}",
                        r.bth.dest_qp,
                        r.bth.psn,
                        crate::wire::roce::opcode_info(r.bth.opcode).map_or("?", |i| i.name)
                    ),
                    Err(e) => format!("undecodable: {e}"),
                };
                crate::vector::FrameResult {
                    what,
                    len: f.len() as u32,
                    digest: crate::vector::Hex(crate::env::digest(f)),
                }
            })
            .collect()
    }
}
