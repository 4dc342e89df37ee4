//! The READ responses the NIC sent as a responder (`rd_resp` and
//! `tx_engine`'s READ RESPONSE step, docs/responder.md) against
//! [`super::resp_predict`]: per QP, the predicted jobs' packets in order,
//! each frame byte for byte the one the testbench builds from the QP's
//! context, the packet's PSN, opcode and AETH and the host memory the READ
//! names (the vector's initial memory with the payloads of the requests
//! that arrived before the READ placed).
//!
//! `rd_resp` refuses a job when its QP already holds max(1,
//! max_dest_rd_atomic) unanswered (the QP's RESP field as the vector sets
//! it): which jobs meet that limit is timing the testbench does not
//! predict, so a QP that executed more READs than its limit may skip whole
//! jobs, and the number skipped over all QPs must equal
//! `CNT_READ_JOB_FULL`. A QP with no more READs than its limit can never
//! reach it and must answer every one.
//!
//! A response packet whose payload read meets a host fault that fails it
//! (the vector's root complex: anything but a stray completion,
//! [`tx_reference::read_fails`]) is dropped by `pkt_builder` (DMA_ERR), as
//! a request's is: it is not sent, and the job's other packets are.

use super::resp_predict::{ReadJob, ReadPacket, RespPrediction};
use super::RnicTopEnv;
use crate::env::HostMemory;
use crate::scenario::tx_reference;
use crate::vector::qp_frame::{self, ecn_of, From};
use crate::wire::roce::{aeth, RoceRepr};

/// Jobs `rd_resp` keeps per QP for a QP whose RESP.max_dest_rd_atomic is
/// `max_rd` (docs/responder.md, `rd_resp`: 0 reads as 1).
pub fn rd_resp_limit(max_rd: u8) -> usize {
    (max_rd as usize).max(1)
}

/// The AETH syndrome of a READ response: the one the responder puts in its
/// ACKs.
use crate::scenario::resp_reference::SYNDROME_ACK;

/// Whether `op` is a READ RESPONSE opcode (FIRST, MIDDLE, LAST, ONLY).
pub fn is_read_response(op: u8) -> bool {
    (0x0D..=0x10).contains(&op)
}

/// A READ response frame sent: frame index, start cycle, bytes, decoded.
type SentFrame = (usize, u64, Vec<u8>, RoceRepr);

/// What [`RnicTopEnv::check_read_responses`] found besides failures.
#[derive(Debug, Default)]
pub struct ReadOutcome {
    /// Jobs with no response at all (allowed only for a QP with more READs
    /// than its limit).
    pub skipped: u64,
}

impl RnicTopEnv {
    /// READ RESPONSE frames sent so far, per QP.
    fn sent_read_responses(&self) -> Vec<Vec<SentFrame>> {
        let mut sent = vec![Vec::new(); crate::vector::QPS as usize];
        for (k, (start, f)) in self.frames.iter().enumerate() {
            let Ok(r) = RoceRepr::parse_bytes(f) else {
                continue;
            };
            if !is_read_response(r.bth.opcode) {
                continue;
            }
            if let Some(q) = self
                .vector
                .qps
                .iter()
                .find(|q| q.remote_qpn == r.bth.dest_qp)
            {
                sent[q.qp as usize].push((k, *start, f.clone(), r));
            }
        }
        sent
    }

    /// Whether response packet `p` goes out: its payload read does not fail.
    fn sent_at_all(&self, p: &ReadPacket) -> bool {
        !tx_reference::read_fails(&self.vector, p.addr, p.len)
    }

    /// Whether some QP has sent fewer READ response packets than its jobs
    /// call for (the run must not end yet).
    pub(super) fn reads_owed(&self, want: &RespPrediction) -> bool {
        let sent = self.sent_read_responses();
        self.vector.qps.iter().any(|q| {
            let i = q.qp as usize;
            let n: usize = want.reads[i]
                .iter()
                .flat_map(|j| &j.packets)
                .filter(|p| self.sent_at_all(p))
                .count();
            sent[i].len() < n
        })
    }

    /// The frame QP `qp` must send for READ response packet `p` of a job
    /// whose payload is `bytes`.
    fn expected_read_response(
        &self,
        qp: u32,
        p: &super::resp_predict::ReadPacket,
        bytes: Vec<u8>,
    ) -> Vec<u8> {
        let q = self
            .vector
            .qps
            .iter()
            .find(|q| q.qp == qp)
            .expect("a known QP");
        let b = qp_frame::bth(q, From::Nic, p.opcode, p.psn);
        let mut repr = qp_frame::repr(q, From::Nic, b, q.dscp, ecn_of(q));
        if p.opcode != 0x0E {
            repr.aeth = Some(aeth::Repr {
                syndrome: SYNDROME_ACK,
                msn: p.msn,
            });
        }
        repr.payload = bytes;
        qp_frame::emit(&repr)
    }

    /// Each job's payloads: host memory as the READ found it.
    fn read_payloads(&self, want: &RespPrediction) -> Vec<Vec<Vec<Vec<u8>>>> {
        let mut mem = HostMemory::new();
        for m in &self.vector.memory {
            mem.fill_pattern(m.addr.0, m.len as usize, m.seed);
        }
        let mut order: Vec<(usize, usize, usize)> = Vec::new();
        for (q, jobs) in want.reads.iter().enumerate() {
            for (j, job) in jobs.iter().enumerate() {
                order.push((job.writes_before, q, j));
            }
        }
        order.sort();
        let mut out: Vec<Vec<Vec<Vec<u8>>>> = want
            .reads
            .iter()
            .map(|jobs| vec![Vec::new(); jobs.len()])
            .collect();
        let mut applied = 0;
        for (before, q, j) in order {
            for (a, b) in &want.writes[applied..before] {
                mem.write(*a, b);
            }
            applied = applied.max(before);
            let job: &ReadJob = &want.reads[q][j];
            out[q][j] = job
                .packets
                .iter()
                .map(|p| mem.read(p.addr, p.len as usize))
                .collect();
        }
        out
    }

    /// Per QP: the sent READ responses are the predicted jobs' packets, in
    /// order, byte for byte; whole jobs may be missing only where a full
    /// ring could have refused them.
    pub(super) fn check_read_responses(&self, want: &RespPrediction) -> (Vec<String>, ReadOutcome) {
        let mut out = Vec::new();
        let mut res = ReadOutcome::default();
        let sent = self.sent_read_responses();
        let payloads = self.read_payloads(want);
        for q in &self.vector.qps {
            let i = q.qp as usize;
            let jobs = &want.reads[i];
            let may_skip = jobs.len() > rd_resp_limit(q.max_dest_rd_atomic);
            let got = &sent[i];
            let mut g = 0;
            for (j, job) in jobs.iter().enumerate() {
                // The packets that go out: a failed payload read drops its
                // frame. A job with none leaves no trace on the wire.
                let Some(first) = job.packets.iter().copied().find(|p| self.sent_at_all(p)) else {
                    continue;
                };
                // A job's first packet (FIRST or ONLY) carries the MSN of
                // its execution. Go-back-N can make a QP execute the same
                // READ twice as duplicates (same PSN and opcode) with a
                // fresh READ in between, i.e. with different MSNs; when the
                // ring refused the earlier one, only the MSN tells which job
                // the frame answers.
                let starts = got.get(g).is_some_and(|s| {
                    s.3.bth.psn == first.psn
                        && s.3.bth.opcode == first.opcode
                        && s.3.aeth.map(|a| a.msn) == Some(first.msn)
                });
                if !starts {
                    if may_skip {
                        res.skipped += 1;
                        continue;
                    }
                    out.push(format!(
                        "QP {}: READ job {j} (PSN {}, {} packets): {}",
                        q.qp,
                        first.psn,
                        job.packets.len(),
                        match got.get(g) {
                            Some(s) => format!(
                                "frame {} (cycle {}) is opcode {:#04x} PSN {} instead of its \
                                 first packet",
                                s.0, s.1, s.3.bth.opcode, s.3.bth.psn
                            ),
                            None => "never answered".into(),
                        }
                    ));
                    break;
                }
                for (k, p) in job.packets.iter().enumerate() {
                    if !self.sent_at_all(p) {
                        continue;
                    }
                    let Some((fi, start, f, _)) = got.get(g) else {
                        out.push(format!(
                            "QP {}: READ job {j} (PSN {}): packet {k} of {} never sent",
                            q.qp,
                            first.psn,
                            job.packets.len()
                        ));
                        break;
                    };
                    g += 1;
                    let want_f = self.expected_read_response(q.qp, p, payloads[i][j][k].clone());
                    if *f != want_f && out.len() < 16 {
                        let b = f
                            .iter()
                            .zip(&want_f)
                            .position(|(a, b)| a != b)
                            .unwrap_or(f.len().min(want_f.len()));
                        out.push(format!(
                            "frame {fi} (cycle {start}): QP {} READ response (job {j}, opcode \
                             {:#04x}, PSN {}, {} bytes from {:#x}) differs from the frame the \
                             testbench builds ({} bytes) first at byte {b}",
                            q.qp,
                            p.opcode,
                            p.psn,
                            p.len,
                            p.addr,
                            want_f.len()
                        ));
                    }
                }
            }
            if g < got.len() {
                let s = &got[g];
                out.push(format!(
                    "QP {}: {} READ response frames sent beyond the predicted jobs, the first \
                     frame {} (cycle {}, opcode {:#04x}, PSN {})",
                    q.qp,
                    got.len() - g,
                    s.0,
                    s.1,
                    s.3.bth.opcode,
                    s.3.bth.psn
                ));
            }
        }
        (out, res)
    }
}
