//! Environment of the `dma_rd` top: read clients, host memory, root complex,
//! and the checks that do not trust either DUT.

use rnic_model::dma_rd::{status, DmaRdIn, DmaRdOut};

use super::{common::Common, status_name, ReadOutcome};
use crate::env::{FaultKind, SplitMix64};
use crate::lockstep::Env;
use crate::vector::{ReadReq, Vector};

pub struct DmaRdEnv {
    pub common: Common,
    reads: Vec<ReadReq>,
    /// Status each read must end with, from the vector's faults alone.
    expected: Vec<u8>,
    next_read: usize,
    ready_rng: SplitMix64,
    ready_pct: u8,
    /// Bytes received so far for the read at the head of the return order.
    cur: Vec<u8>,
    pub results: Vec<ReadOutcome>,
    pub last_out: DmaRdOut,
    cfg_mrrs: u8,
    cfg_req_id: u16,
    cfg_cpl_timeout: u32,
    /// Functional coverage: a read request or a data beat was held back.
    pub req_stalled: bool,
    pub data_stalled: bool,
}

/// Status the DUT must report for a read, derived from the vector's faults
/// alone: the first fault range (by address) the read overlaps.
fn expected_status(v: &Vector, r: &ReadReq) -> u8 {
    let (start, end) = (r.addr.0, r.addr.0 + r.len as u64);
    let mut hits: Vec<_> = v
        .root_complex
        .faults
        .iter()
        .filter(|f| f.addr.0 < end && start < f.addr.0 + f.len)
        .collect();
    hits.sort_by_key(|f| f.addr.0);
    match hits.first().map(|f| f.kind) {
        None => status::OK,
        Some(FaultKind::Ur) => status::UR,
        Some(FaultKind::Ca) => status::CA,
        Some(FaultKind::Poison) => status::POISONED,
        Some(FaultKind::Drop | FaultKind::BadByteCount | FaultKind::WrongRequester) => {
            status::TIMEOUT
        }
        Some(FaultKind::Stray) => status::OK,
    }
}

impl DmaRdEnv {
    pub fn new(v: &Vector) -> Result<Self, String> {
        Ok(DmaRdEnv {
            common: Common::new(v)?,
            reads: v.reads.clone(),
            expected: v.reads.iter().map(|r| expected_status(v, r)).collect(),
            next_read: 0,
            ready_rng: SplitMix64::new(v.client.seed ^ 0x7264_5F72_6479),
            ready_pct: v.client.rd_data_ready_percent,
            cur: Vec::new(),
            results: Vec::new(),
            last_out: DmaRdOut::default(),
            req_stalled: false,
            data_stalled: false,
            cfg_mrrs: v.config.mrrs.trailing_zeros() as u8 - 7,
            cfg_req_id: v.config.requester_id,
            cfg_cpl_timeout: v.config.cpl_timeout,
        })
    }

    fn take_beat(&mut self, cycle: u64, o: &DmaRdOut) {
        let k = self.results.len();
        let Some(r) = self.reads.get(k).cloned() else {
            self.common
                .fail(cycle, "read data beat with no read outstanding".into());
            return;
        };
        let off = self.cur.len() as u32;
        let want = (r.len - off).min(64);
        let want_keep = if want == 64 {
            u64::MAX
        } else {
            (1u64 << want) - 1
        };
        let want_last = off + want == r.len;
        if o.rd_data_keep != want_keep
            || o.rd_data_last != want_last
            || o.rd_data_client != r.client
        {
            self.common.fail(
                cycle,
                format!(
                    "reads[{k}] beat at byte {off}: keep {:#x} last {} client {}, expected keep {want_keep:#x} last {want_last} client {}",
                    o.rd_data_keep, o.rd_data_last, o.rd_data_client, r.client
                ),
            );
        }
        self.cur.extend_from_slice(&o.rd_data[..want as usize]);
        if !want_last {
            return;
        }
        let data = std::mem::take(&mut self.cur);
        let exp = self.expected[k];
        if o.rd_data_status != exp {
            self.common.fail(
                cycle,
                format!(
                    "reads[{k}] status {} but the vector's faults imply {}",
                    status_name(o.rd_data_status),
                    status_name(exp)
                ),
            );
        } else if exp == status::OK {
            let host = self.common.mem.read(r.addr.0, r.len as usize);
            if let Some(i) = host.iter().zip(&data).position(|(a, b)| a != b) {
                self.common.fail(
                    cycle,
                    format!(
                        "reads[{k}] byte {i} (address {:#x}) is {:#04x}, host memory holds {:#04x}",
                        r.addr.0 + i as u64,
                        data[i],
                        host[i]
                    ),
                );
            }
        }
        self.results.push(ReadOutcome {
            status: o.rd_data_status,
            data,
            cycle,
        });
    }

    pub fn step(&mut self, cycle: u64, o: &DmaRdOut) -> DmaRdIn {
        self.last_out = *o;
        let mut i = DmaRdIn {
            cfg_mrrs: self.cfg_mrrs,
            cfg_req_id: self.cfg_req_id,
            cfg_cpl_timeout: self.cfg_cpl_timeout,
            ..DmaRdIn::default()
        };
        if let Some(r) = self.reads.get(self.next_read) {
            if r.at <= cycle {
                i.rd_req_valid = true;
                i.rd_req_addr = r.addr.0;
                i.rd_req_len = r.len;
                i.rd_req_client = r.client;
                if o.rd_req_ready {
                    self.next_read += 1;
                } else {
                    self.req_stalled = true;
                }
            }
        }
        i.rd_data_ready = self.ready_rng.percent(self.ready_pct);
        self.data_stalled |= o.rd_data_valid && !i.rd_data_ready;
        if o.rd_data_valid && i.rd_data_ready {
            self.take_beat(cycle, o);
        }
        let rc = self.common.rc_out;
        i.rq_ready = rc.rq_ready;
        i.rc_valid = rc.rc_valid;
        i.rc_data = rc.rc_data;
        i.rc_keep = rc.rc_keep;
        i.rc_sop = rc.rc_sop;
        i.rc_eop = rc.rc_eop;
        self.common.step_link(
            cycle, o.rq_valid, o.rq_data, o.rq_keep, o.rq_sop, o.rq_eop, o.rc_ready,
        );
        i
    }

    pub fn done(&self) -> bool {
        self.results.len() == self.reads.len()
    }

    /// End-of-run checks on the DUT's own resource counters.
    pub fn finish_checks(&mut self, cycle: u64, buf_lines: u16) {
        let o = self.last_out;
        if self.done() && (o.stat_tags_busy != 0 || o.stat_free_lines != buf_lines) {
            self.common.fail(
                cycle,
                format!(
                    "leak at the end: {} tags busy, {} of {buf_lines} buffer lines free",
                    o.stat_tags_busy, o.stat_free_lines
                ),
            );
        }
        self.common.finish(cycle);
    }
}

impl Env for DmaRdEnv {
    type In = DmaRdIn;
    type Out = DmaRdOut;
    fn step(&mut self, cycle: u64, out: &DmaRdOut) -> DmaRdIn {
        DmaRdEnv::step(self, cycle, out)
    }
    fn finished(&self) -> bool {
        self.done()
    }
}
