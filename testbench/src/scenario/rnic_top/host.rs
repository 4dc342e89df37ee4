//! The host's posting in the run phase: the timed SQ doorbells, the timed
//! RQ doorbells (RECV WQEs written into the RQ ring first) and the verbs
//! program's steps, one MMIO write a cycle, in that priority.

use super::RnicTopEnv;
use crate::vector::Step;
use crate::wire::rqe;
use rnic_model::csr_map::{GLOBAL_DOORBELL_ADDR, GLOBAL_RQ_DOORBELL_ADDR};

/// RECVs posted by one RQ doorbell: the cycle of the doorbell write, the
/// QP, and the vector's `recvs` indices it posted, in order.
#[derive(Debug, Clone)]
pub struct RecvPost {
    pub cycle: u64,
    pub qp: u32,
    pub recvs: Vec<usize>,
}

/// The host's posting state.
#[derive(Debug, Clone, Default)]
pub struct Host {
    /// Per QP: the vector's RECV indices in posting order, and how many are posted.
    qp_recvs: Vec<Vec<usize>>,
    rq_posted: Vec<usize>,
    next_rqdb: usize,
    next_step: usize,
    /// The rest of a `setup_qp` step's writes, one a cycle.
    setup: std::collections::VecDeque<(u16, u32)>,
    /// Every RQ doorbell written, in order.
    pub recv_posts: Vec<RecvPost>,
}

impl Host {
    pub fn new(v: &crate::vector::Vector) -> Self {
        let n = crate::vector::QPS as usize;
        let mut qp_recvs = vec![Vec::new(); n];
        for (k, r) in v.recvs.iter().enumerate() {
            qp_recvs[r.qp as usize].push(k);
        }
        Host {
            qp_recvs,
            rq_posted: vec![0; n],
            ..Default::default()
        }
    }
}

impl RnicTopEnv {
    /// Whether every timed RQ doorbell and every program step is done.
    pub(super) fn host_done(&self) -> bool {
        self.host.next_rqdb >= self.vector.rq_doorbells.len()
            && self.host.next_step >= self.vector.program.len()
            && self.host.setup.is_empty()
    }

    /// The MMIO write of this cycle in the run phase, if any.
    pub(super) fn next_post(&mut self, cycle: u64) -> Option<(u16, u32)> {
        let base = self.config_done;
        if let Some(d) = self.vector.doorbells.get(self.next_db) {
            if cycle >= base + d.at {
                let (qp, n) = (d.qp, d.wqes);
                self.next_db += 1;
                return Some(self.sq_doorbell(cycle, qp, n));
            }
        }
        if let Some(d) = self.vector.rq_doorbells.get(self.host.next_rqdb) {
            if cycle >= base + d.at {
                let (qp, n) = (d.qp, d.recvs);
                self.host.next_rqdb += 1;
                return Some(self.post_recvs(cycle, qp, n));
            }
        }
        if let Some(w) = self.host.setup.pop_front() {
            return Some(w);
        }
        while let Some(s) = self.vector.program.get(self.host.next_step).cloned() {
            match s {
                Step::SetupQp { qp } => {
                    self.host.next_step += 1;
                    self.host.setup = super::program::qp_writes(self.qp(qp)).into();
                    return self.host.setup.pop_front();
                }
                Step::PostRecv { qp, recvs } => {
                    self.host.next_step += 1;
                    return Some(self.post_recvs(cycle, qp, recvs));
                }
                Step::PostSend { qp, wqes } => {
                    self.host.next_step += 1;
                    return Some(self.sq_doorbell(cycle, qp, wqes));
                }
                Step::IgnoredWrite { addr, data } => {
                    self.host.next_step += 1;
                    return Some((addr.0 as u16, data.0 as u32));
                }
                Step::WaitUntil { cycle: c } => {
                    if cycle < base + c {
                        return None;
                    }
                    self.host.next_step += 1;
                }
                Step::WaitCqes { cq, count } => {
                    let seen = self.irqs.iter().filter(|x| x.1 as u32 == cq).count();
                    if seen < count as usize {
                        return None;
                    }
                    self.host.next_step += 1;
                }
            }
        }
        None
    }

    fn sq_doorbell(&mut self, cycle: u64, qp: u32, n: u32) -> (u16, u32) {
        let data = self.post(qp, n);
        self.doorbell_cycles.push(cycle);
        (GLOBAL_DOORBELL_ADDR, data)
    }

    /// Writes the QP's next `n` RECVs into its RQ ring; the RQ_DOORBELL write.
    fn post_recvs(&mut self, cycle: u64, qp: u32, n: u32) -> (u16, u32) {
        let ring = self
            .vector
            .rq_ring(qp)
            .expect("validated: the QP has an RQ");
        let size = 1usize << ring.log_size;
        let q = qp as usize;
        let mut posted = Vec::new();
        for _ in 0..n {
            let idx = self.host.rq_posted[q];
            let k = self.host.qp_recvs[q][idx];
            let bytes = self.vector.recvs[k].repr().to_bytes();
            let addr = ring.base.0 + (rqe::RQE_LEN * (idx % size)) as u64;
            self.common.mem.write(addr, &bytes);
            self.host.rq_posted[q] += 1;
            posted.push(k);
        }
        self.host.recv_posts.push(RecvPost {
            cycle,
            qp,
            recvs: posted,
        });
        (
            GLOBAL_RQ_DOORBELL_ADDR,
            (self.host.rq_posted[q] as u32 & 0xFFFF) | qp << 16,
        )
    }
}
