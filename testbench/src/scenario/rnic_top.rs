//! Environment of `rnic_top`: the host (MMIO configuration from the vector's
//! tables, WQEs written into the SQ rings, doorbells), the root complex on
//! `rq_*`/`rc_*`, and the MAC on `tx_*`. It collects every frame and, at the
//! end, reads the counters over MMIO; the checks against the independent
//! reference of [`super::tx_reference`] run in [`RnicTopEnv::finish_checks`].

use std::collections::VecDeque;

use rnic_model::rnic_top::{RnicTopIn, RnicTopOut};

use super::common::Common;
use super::tx_reference::{self, Expected};
use crate::env::SplitMix64;
use crate::lockstep::Env;
use crate::vector::{QpSpec, Vector, WqeSpec};
use crate::wire::roce::{RoceFrame, RoceRepr};
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

/// Cycles with nothing left to send before the counters are read: any frame
/// or CQE the reference does not expect would show up in this window.
pub const DRAIN_CYCLES: u64 = 256;

/// The 64-byte WQE of docs/tx_datapath.md, little-endian fields.
pub fn encode_wqe(w: &WqeSpec) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[0..8].copy_from_slice(&w.wr_id.0.to_le_bytes());
    b[8] = w.opcode.code();
    b[9] = w.signaled as u8 | (w.solicited as u8) << 1;
    b[12..16].copy_from_slice(&w.len.to_le_bytes());
    b[16..24].copy_from_slice(&w.laddr.0.to_le_bytes());
    b[24..28].copy_from_slice(&(w.lkey.0 as u32).to_le_bytes());
    b[28..32].copy_from_slice(&(w.imm.0 as u32).to_le_bytes());
    b[32..40].copy_from_slice(&w.raddr.0.to_le_bytes());
    b[40..44].copy_from_slice(&(w.rkey.0 as u32).to_le_bytes());
    b
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
    cur_start: u64,
    /// (cycle of the first beat, bytes) of every frame.
    pub frames: Vec<(u64, Vec<u8>)>,
    /// Cycle of each frame's last beat.
    pub frame_ends: Vec<u64>,
    pub irqs: Vec<(u64, u8)>,
    /// Cycle of each doorbell write.
    pub doorbell_cycles: Vec<u64>,
    counter_reads: VecDeque<(&'static str, u16)>,
    awaiting: VecDeque<&'static str>,
    pub counters: Vec<(&'static str, u32)>,
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
    for q in &v.qps {
        w.extend(qp_writes(q));
    }
    w
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
        | q.cq << 12;
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
            cur_start: 0,
            frames: Vec::new(),
            frame_ends: Vec::new(),
            irqs: Vec::new(),
            doorbell_cycles: Vec::new(),
            counter_reads: COUNTERS.iter().copied().collect(),
            awaiting: VecDeque::new(),
            counters: Vec::new(),
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

    fn all_done(&self) -> bool {
        self.next_db >= self.vector.doorbells.len()
            && self.frames.len() >= self.expected.total_packets()
            && self.irqs.len() >= self.expected.cqes.len()
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
                if self.all_done() {
                    self.phase = Phase::Drain {
                        until: cycle + DRAIN_CYCLES,
                    };
                }
            }
            Phase::Drain { until } => {
                if cycle >= until {
                    self.phase = Phase::Counters;
                }
            }
            Phase::Counters => {
                if let Some((name, a)) = self.counter_reads.pop_front() {
                    (i.mmio_rd_valid, i.mmio_rd_addr) = (true, a);
                    self.awaiting.push_back(name);
                } else if self.awaiting.is_empty() {
                    self.phase = Phase::Done;
                }
            }
            Phase::Done => {}
        }
        self.common.step_link(
            cycle, o.rq_valid, o.rq_data, o.rq_keep, o.rq_sop, o.rq_eop, o.rc_ready,
        );
        i
    }

    /// Frames on `tx_*`: a frame, once started, must not pause (tvalid low)
    /// before its last beat; keep must be contiguous from lane 0, full on
    /// every beat but the last.
    fn collect_tx(&mut self, cycle: u64, o: &RnicTopOut, tready: bool) {
        let in_frame = !self.cur_frame.is_empty();
        if in_frame && !o.tx_tvalid {
            self.common
                .fail(cycle, "tx_tvalid dropped inside a frame".into());
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
        if self.cur_frame.is_empty() {
            self.cur_start = cycle;
        }
        self.cur_frame.extend_from_slice(&o.tx_tdata[..n]);
        if o.tx_tlast {
            let f = std::mem::take(&mut self.cur_frame);
            self.frames.push((self.cur_start, f));
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

/// A CQE read back from host memory (docs/tx_datapath.md, CQE layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cqe {
    pub wr_id: u64,
    pub len: u32,
    pub imm: u32,
    pub qp: u32,
    pub opcode: u8,
    pub status: u8,
    pub owner: u8,
}

pub fn decode_cqe(b: &[u8]) -> Cqe {
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    Cqe {
        wr_id: u64::from_le_bytes(b[0..8].try_into().unwrap()),
        len: u32_at(8),
        imm: u32_at(12),
        qp: u32_at(16),
        opcode: b[20],
        status: b[21],
        owner: b[23],
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
    pub cqe: Cqe,
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
                Some(c) if payload.len() == 32 => {
                    let k = &mut count[c.cq as usize];
                    out.push(CqeWrite {
                        cycle: e.cycle,
                        cq: c.cq,
                        index: *k,
                        addr,
                        cqe: decode_cqe(payload),
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
            if w.cqe.owner != owner || w.raw[22] != 0 || w.raw[24..32].iter().any(|&b| b != 0) {
                self.common.fail(
                    cycle,
                    format!(
                        "{at}: owner {:#x} (expected {owner}) or reserved bytes set: {:02x?}",
                        w.cqe.owner, w.raw
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
        use crate::vector::IpPair;
        use crate::wire::roce::{bth, ethernet, ipv4, ipv6, reth, udp, IpRepr};
        let q = self
            .vector
            .qps
            .iter()
            .find(|q| q.qp == p.qp)
            .expect("packet of a known QP");
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
        let repr = RoceRepr {
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
                opcode: p.opcode,
                se: p.se,
                migreq: false,
                pkey: q.pkey,
                fecn: false,
                becn: false,
                dest_qp: q.remote_qpn,
                ack_req: p.ack_req,
                psn: p.psn,
            },
            reth: p
                .reth
                .map(|(va, rkey, dma_len)| reth::Repr { va, rkey, dma_len }),
            aeth: None,
            imm: p.imm,
            payload: self.common.mem.read(p.pay_addr, p.pay_len as usize),
        };
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
    }

    /// End-of-run checks against the reference, then the PCIe ones.
    pub fn finish_checks(&mut self, cycle: u64) {
        self.check_frames(cycle);
        self.check_cqes(cycle);
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
