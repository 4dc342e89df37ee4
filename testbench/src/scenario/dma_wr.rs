//! Environment of the `dma_wr` top: write clients and the root complex that
//! applies MWr to host memory; the expected memory is computed here from the
//! vector alone.

use rnic_model::dma_wr::{DmaWrIn, DmaWrOut};
use rnic_model::ports::Beat;

use super::common::Common;
use crate::env::{pattern_bytes, HostMemory, SplitMix64};
use crate::lockstep::Env;
use crate::vector::{Vector, WriteReq};

pub struct DmaWrEnv {
    pub common: Common,
    writes: Vec<WriteReq>,
    data: Vec<Vec<u8>>,
    next_req: usize,
    /// (write, beat) of the next data beat to offer.
    next_beat: (usize, usize),
    valid_rng: SplitMix64,
    valid_pct: u8,
    pub done: Vec<u64>,
    /// Host memory as it must end: initial contents with every write applied
    /// in order.
    pub reference: HostMemory,
    cfg_mps: u8,
    cfg_req_id: u16,
    /// Functional coverage: a write request or a data beat was held back.
    pub req_stalled: bool,
    pub data_stalled: bool,
}

impl DmaWrEnv {
    pub fn new(v: &Vector) -> Result<Self, String> {
        let common = Common::new(v)?;
        let data: Vec<Vec<u8>> = v
            .writes
            .iter()
            .map(|w| pattern_bytes(w.seed, w.len as usize))
            .collect();
        let mut reference = common.mem.clone();
        for (w, d) in v.writes.iter().zip(&data) {
            reference.write(w.addr.0, d);
        }
        Ok(DmaWrEnv {
            common,
            writes: v.writes.clone(),
            data,
            next_req: 0,
            next_beat: (0, 0),
            valid_rng: SplitMix64::new(v.client.seed ^ 0x7772_5F76_6C64),
            valid_pct: v.client.wr_data_valid_percent,
            done: Vec::new(),
            req_stalled: false,
            data_stalled: false,
            reference,
            cfg_mps: v.config.mps.trailing_zeros() as u8 - 7,
            cfg_req_id: v.config.requester_id,
        })
    }

    pub fn step(&mut self, cycle: u64, o: &DmaWrOut) -> DmaWrIn {
        let mut i = DmaWrIn {
            cfg_mps: self.cfg_mps,
            cfg_req_id: self.cfg_req_id,
            rq_ready: self.common.rc_out.rq_ready,
            ..DmaWrIn::default()
        };
        if let Some(w) = self.writes.get(self.next_req) {
            if w.at <= cycle {
                i.wr_req_valid = true;
                i.wr_req_addr = w.addr.0;
                i.wr_req_len = w.len;
                i.wr_req_client = w.client;
                if o.wr_req_ready {
                    self.next_req += 1;
                } else {
                    self.req_stalled = true;
                }
            }
        }
        let (wi, bi) = self.next_beat;
        if let Some(w) = self.writes.get(wi) {
            if w.at <= cycle && self.valid_rng.percent(self.valid_pct) {
                let d = &self.data[wi];
                let lo = bi * 64;
                let hi = (lo + 64).min(d.len());
                let mut beat = Beat::default();
                beat[..hi - lo].copy_from_slice(&d[lo..hi]);
                i.wr_data_valid = true;
                i.wr_data = beat;
                self.data_stalled |= !o.wr_data_ready;
                if o.wr_data_ready {
                    self.next_beat = if hi == d.len() {
                        (wi + 1, 0)
                    } else {
                        (wi, bi + 1)
                    };
                }
            }
        }
        if o.wr_done_valid {
            let k = self.done.len();
            match self.writes.get(k) {
                Some(w) if w.client == o.wr_done_client => {}
                Some(w) => self.common.fail(
                    cycle,
                    format!(
                        "writes[{k}] done for client {}, expected {}",
                        o.wr_done_client, w.client
                    ),
                ),
                None => self
                    .common
                    .fail(cycle, "wr_done with no write outstanding".into()),
            }
            self.done.push(cycle);
        }
        self.common.step_link(
            cycle, o.rq_valid, o.rq_data, o.rq_keep, o.rq_sop, o.rq_eop, false,
        );
        i
    }

    pub fn finished(&self) -> bool {
        self.done.len() >= self.writes.len()
    }

    /// Host memory over every write's range must equal the reference.
    pub fn finish_checks(&mut self, cycle: u64) {
        for (k, w) in self.writes.iter().enumerate() {
            let got = self.common.mem.read(w.addr.0, w.len as usize);
            let want = self.reference.read(w.addr.0, w.len as usize);
            if let Some(b) = got.iter().zip(&want).position(|(a, b)| a != b) {
                let msg = format!(
                    "writes[{k}] byte {b} (address {:#x}) is {:#04x} in host memory, expected {:#04x}",
                    w.addr.0 + b as u64,
                    got[b],
                    want[b]
                );
                self.common.fail(cycle, msg);
            }
        }
        if self.common.mem != self.reference {
            self.common.fail(
                cycle,
                "host memory differs from the expected contents outside the written ranges".into(),
            );
        }
        self.common.finish(cycle);
    }
}

impl Env for DmaWrEnv {
    type In = DmaWrIn;
    type Out = DmaWrOut;
    fn step(&mut self, cycle: u64, out: &DmaWrOut) -> DmaWrIn {
        DmaWrEnv::step(self, cycle, out)
    }
    fn finished(&self) -> bool {
        DmaWrEnv::finished(self)
    }
}
