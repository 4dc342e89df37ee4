//! The receive side of an `rnic_top` vector (docs/responder.md): RECV WQEs,
//! the RQ doorbells that post them, and the host's verbs program (ordered
//! steps: post RECVs, post WQEs, wait for completions). The per-QP
//! responder fields (`epsn`, `rq`, `rq_cq`, `min_rnr_timer`,
//! `max_dest_rd_atomic`, `remote_access`) live on [`super::QpSpec`]; their
//! defaults (ePSN 0, no RQ, the QP's own CQ, timer 0, max_dest_rd_atomic
//! 7, no remote access) keep a vector written before them meaning what it
//! meant (7: `rd_resp` enforces the field, and no older vector has more
//! READs of a QP outstanding at once).

use serde::{Deserialize, Serialize};

use super::{Access, Hex, Ring, Vector, VectorError, CQS};
use crate::wire::rqe;

/// One scatter entry of a RECV WQE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SgeSpec {
    pub addr: Hex,
    pub len: u32,
    pub lkey: Hex,
}

/// A RECV WQE (128 bytes in the QP's RQ ring, `wire::rqe`), in posting
/// order per QP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecvSpec {
    pub qp: u32,
    pub wr_id: Hex,
    /// 0..=4 scatter entries.
    #[serde(default)]
    pub sges: Vec<SgeSpec>,
    /// The entry count written into the WQE when it is not `sges.len()`
    /// (above 4: a broken RECV the NIC completes with status 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_sge: Option<u8>,
}

impl RecvSpec {
    pub fn repr(&self) -> rqe::Repr {
        let mut r = rqe::Repr {
            wr_id: self.wr_id.0,
            num_sge: self.num_sge.unwrap_or(self.sges.len() as u8),
            sges: Default::default(),
        };
        for (k, s) in self.sges.iter().enumerate() {
            r.sges[k] = rqe::Sge {
                va: s.addr.0,
                len: s.len,
                lkey: s.lkey.0 as u32,
            };
        }
        r
    }
}

/// Posts the next `recvs` RECVs of `qp` and rings RQ_DOORBELL, `at` cycles
/// after configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RqDoorbellSpec {
    #[serde(default)]
    pub at: u64,
    pub qp: u32,
    pub recvs: u32,
}

/// One step of the host's verbs program, run in order after configuration
/// (next to the timed `doorbells` / `rq_doorbells`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// Write the QP's next `recvs` RECVs into its RQ ring, ring RQ_DOORBELL.
    PostRecv { qp: u32, recvs: u32 },
    /// Write the QP's next `wqes` WQEs into its SQ ring, ring DOORBELL.
    PostSend { qp: u32, wqes: u32 },
    /// Wait until `count` CQEs in all (from the start of the run) have been
    /// written to CQ `cq` (seen by their interrupts).
    WaitCqes { cq: u32, count: u32 },
    /// Wait until `cycle` cycles after configuration.
    WaitUntil { cycle: u64 },
    /// One MMIO write the register map ignores (`vector::mmio`): a table
    /// word past an entry's registers, an entry past the build's size, a
    /// doorbell for a QP >= QPS. The references predict the run without it.
    IgnoredWrite { addr: Hex, data: Hex },
    /// Configure QP `qp` now, with the same MMIO writes configuration
    /// makes (its `qps` entry, CTRL last), one a cycle: the QP stays in
    /// RESET, untouched, until then, as a connection set up while others
    /// carry traffic. Its posts must come after this step.
    SetupQp { qp: u32 },
}

impl Vector {
    /// Whether QP `qp` is configured by a `setup_qp` step rather than at
    /// the start.
    pub fn deferred_setup(&self, qp: u32) -> bool {
        self.program
            .iter()
            .any(|s| matches!(*s, Step::SetupQp { qp: q } if q == qp))
    }
}

/// Bits of RESP.ACCESS (ibverbs: 2 REMOTE_WRITE, 4 REMOTE_READ, 8 atomic).
pub fn access_bits(a: &[Access]) -> u32 {
    a.iter().map(|x| x.bit()).fold(0, |a, b| a | b)
}

impl Vector {
    /// Checks of the receive side: every reference resolves, every number
    /// fits its register, every RECV is posted once and fits its ring.
    pub(super) fn validate_resp(&self, file: &std::path::Path) -> Result<(), VectorError> {
        let e = |p: String, r: String| Err(super::field_err(file, p, r));
        for (k, q) in self.qps.iter().enumerate() {
            let p = |f: &str| format!("qps[{k}].{f}");
            if q.epsn >= 1 << 24 {
                return e(p("epsn"), format!("{} does not fit in 24 bits", q.epsn));
            }
            if let Some(r) = q.rq {
                if r.log_size > 15 {
                    return e(p("rq.log_size"), format!("{} is not in 0..=15", r.log_size));
                }
                if !r.base.0.is_multiple_of(rqe::RQE_LEN as u64)
                    || r.base
                        .0
                        .checked_add((rqe::RQE_LEN as u64) << r.log_size)
                        .is_none()
                {
                    return e(
                        p("rq.base"),
                        format!(
                            "{:#x} is not 128-byte aligned or the ring reaches 2^64",
                            r.base.0
                        ),
                    );
                }
            }
            if let Some(c) = q.rq_cq {
                if c >= CQS || !self.cqs.iter().any(|x| x.cq == c) {
                    return e(p("rq_cq"), format!("CQ {c} is not in cqs"));
                }
            }
            if q.min_rnr_timer > 31 {
                return e(
                    p("min_rnr_timer"),
                    format!("{} does not fit in 5 bits", q.min_rnr_timer),
                );
            }
            if q.max_dest_rd_atomic > 7 {
                return e(
                    p("max_dest_rd_atomic"),
                    format!("{} does not fit in 3 bits", q.max_dest_rd_atomic),
                );
            }
            if let Some(a) = q
                .remote_access
                .iter()
                .find(|a| !matches!(a, Access::RemoteWrite | Access::RemoteRead))
            {
                return e(
                    p("remote_access"),
                    format!("{a:?} is not a right a QP grants (remote_write, remote_read)"),
                );
            }
        }
        let mut per_qp = vec![0u32; super::QPS as usize];
        for (k, r) in self.recvs.iter().enumerate() {
            let p = |f: &str| format!("recvs[{k}].{f}");
            let Some(q) = self.qps.iter().find(|q| q.qp == r.qp) else {
                return e(p("qp"), format!("QP {} is not in qps", r.qp));
            };
            if q.rq.is_none() {
                return e(p("qp"), format!("QP {} has no rq ring", r.qp));
            }
            if r.sges.len() > rqe::MAX_SGE {
                return e(
                    p("sges"),
                    format!("{} entries: a RECV holds 0..=4", r.sges.len()),
                );
            }
            if r.num_sge.is_some_and(|n| (n as usize) < r.sges.len()) {
                return e(
                    p("num_sge"),
                    "is below the number of sges written".to_string(),
                );
            }
            for (j, s) in r.sges.iter().enumerate() {
                if s.lkey.0 >= 1 << 32 {
                    return e(
                        format!("recvs[{k}].sges[{j}].lkey"),
                        format!("{:#x} does not fit in 32 bits", s.lkey.0),
                    );
                }
                if s.addr.0.checked_add(s.len as u64).is_none() {
                    return e(
                        format!("recvs[{k}].sges[{j}].len"),
                        "the entry wraps past 2^64".into(),
                    );
                }
            }
            per_qp[r.qp as usize] += 1;
        }
        let mut posted = vec![0u32; super::QPS as usize];
        let mut post = |what: String, qp: u32, n: u32| -> Result<(), VectorError> {
            let Some(q) = self.qps.iter().find(|q| q.qp == qp) else {
                return e(format!("{what}.qp"), format!("QP {qp} is not in qps"));
            };
            let i = qp as usize;
            posted[i] += n;
            if posted[i] > per_qp[i] {
                return e(
                    format!("{what}.recvs"),
                    format!("posts more RECVs than QP {qp} has in recvs"),
                );
            }
            if posted[i] > 1 << q.rq.map_or(0, |r| r.log_size) {
                return e(
                    format!("{what}.recvs"),
                    format!(
                        "QP {qp}'s RQ ring holds {} RECVs; the testbench never reuses a slot",
                        1 << q.rq.map_or(0, |r| r.log_size)
                    ),
                );
            }
            Ok(())
        };
        // A QP set up by a step: once, posted to only after it, and never by
        // a timed doorbell (which could ring before the setup).
        let mut set_up = vec![false; super::QPS as usize];
        for (k, s) in self.program.iter().enumerate() {
            let at = format!("program[{k}]");
            let before = |qp: u32, set_up: &[bool]| {
                self.deferred_setup(qp) && !set_up.get(qp as usize).copied().unwrap_or(true)
            };
            match *s {
                Step::SetupQp { qp } => {
                    if !self.qps.iter().any(|q| q.qp == qp) {
                        return e(
                            format!("{at}.setup_qp.qp"),
                            format!("QP {qp} is not in qps"),
                        );
                    }
                    if std::mem::replace(&mut set_up[qp as usize], true) {
                        return e(
                            format!("{at}.setup_qp.qp"),
                            format!("QP {qp} is set up twice"),
                        );
                    }
                }
                Step::PostRecv { qp, .. } | Step::PostSend { qp, .. } if before(qp, &set_up) => {
                    return e(
                        format!("{at}.qp"),
                        format!("QP {qp} is posted to before its setup_qp step"),
                    );
                }
                _ => {}
            }
        }
        for (k, d) in self.doorbells.iter().enumerate() {
            if self.deferred_setup(d.qp) {
                return e(
                    format!("doorbells[{k}].qp"),
                    format!("QP {} is set up by a program step: post to it there", d.qp),
                );
            }
        }
        for (k, d) in self.rq_doorbells.iter().enumerate() {
            if self.deferred_setup(d.qp) {
                return e(
                    format!("rq_doorbells[{k}].qp"),
                    format!("QP {} is set up by a program step: post to it there", d.qp),
                );
            }
        }
        for (k, d) in self.rq_doorbells.iter().enumerate() {
            if d.at > self.max_cycles {
                return e(
                    format!("rq_doorbells[{k}].at"),
                    format!(
                        "{} is past the run's limit (max_cycles = {})",
                        d.at, self.max_cycles
                    ),
                );
            }
            post(format!("rq_doorbells[{k}]"), d.qp, d.recvs)?;
        }
        let mut sq_posted = vec![0u32; super::QPS as usize];
        for d in &self.doorbells {
            sq_posted[d.qp as usize] += d.wqes;
        }
        for (k, s) in self.program.iter().enumerate() {
            let at = format!("program[{k}]");
            match *s {
                Step::PostRecv { qp, recvs } => post(format!("{at}.post_recv"), qp, recvs)?,
                Step::PostSend { qp, wqes } => {
                    let Some(q) = self.qps.iter().find(|q| q.qp == qp) else {
                        return e(
                            format!("{at}.post_send.qp"),
                            format!("QP {qp} is not in qps"),
                        );
                    };
                    if wqes > 1 << q.sq.log_size {
                        return e(
                            format!("{at}.post_send.wqes"),
                            "more WQEs than the SQ ring holds".into(),
                        );
                    }
                    sq_posted[qp as usize] += wqes;
                }
                Step::WaitUntil { cycle } => {
                    if cycle > self.max_cycles {
                        return e(
                            format!("{at}.wait_until.cycle"),
                            format!(
                                "{cycle} is past the run's limit (max_cycles = {})",
                                self.max_cycles
                            ),
                        );
                    }
                }
                Step::IgnoredWrite { addr, data } => {
                    if let Err(r) = super::mmio::ignored(addr.0, data.0) {
                        return e(format!("{at}.ignored_write"), r);
                    }
                }
                Step::SetupQp { .. } => {}
                Step::WaitCqes { cq, count } => {
                    if !self.cqs.iter().any(|c| c.cq == cq) {
                        return e(
                            format!("{at}.wait_cqes.cq"),
                            format!("CQ {cq} is not in cqs"),
                        );
                    }
                    if count == 0 {
                        return e(
                            format!("{at}.wait_cqes.count"),
                            "0: a wait for nothing".into(),
                        );
                    }
                }
            }
        }
        if posted != per_qp {
            return e(
                "recvs".into(),
                "every RECV must be posted by an rq_doorbell or a post_recv step".into(),
            );
        }
        let mut per_qp_wqes = vec![0u32; super::QPS as usize];
        for w in &self.wqes {
            per_qp_wqes[w.qp as usize] += 1;
        }
        if sq_posted != per_qp_wqes {
            return e(
                "doorbells".into(),
                "every WQE must be posted by a doorbell or a post_send step".into(),
            );
        }
        Ok(())
    }

    /// The QP's RQ ring (validated to exist when it has RECVs).
    pub fn rq_ring(&self, qp: u32) -> Option<Ring> {
        self.qps.iter().find(|q| q.qp == qp).and_then(|q| q.rq)
    }
}
