//! The responder's counters read back (docs/responder.md, "In rnic_top",
//! Counters) against the prediction of [`super::resp_predict`].

use super::resp_predict::{RespPrediction, RQ_SLOTS};
use super::resp_reads::ReadOutcome;
use super::RnicTopEnv;
use crate::vector::QpState;
use rnic_model::csr_map::*;

/// The responder's counters, read back at the end of every run.
pub const RESP_COUNTERS: &[(&str, u16)] = &[
    ("resp_exec", CNT_RESP_EXEC_ADDR),
    ("resp_dup", CNT_RESP_DUP_ADDR),
    ("resp_nak_seq", CNT_RESP_NAK_SEQ_ADDR),
    ("resp_nak_rnr", CNT_RESP_NAK_RNR_ADDR),
    ("resp_nak_inv", CNT_RESP_NAK_INV_ADDR),
    ("resp_nak_acc", CNT_RESP_NAK_ACC_ADDR),
    ("resp_nak_op", CNT_RESP_NAK_OP_ADDR),
    ("resp_recv", CNT_RESP_RECV_ADDR),
    ("resp_uc_drop", CNT_RESP_UC_DROP_ADDR),
    ("resp_not_ready", CNT_RESP_NOT_READY_ADDR),
    ("rxbuf_full", CNT_RXBUF_FULL_ADDR),
    ("rq_fetch_err", CNT_RQ_FETCH_ERR_ADDR),
    ("rx_writes", CNT_RX_WRITES_ADDR),
    ("ack_sent", CNT_ACK_SENT_ADDR),
    ("ack_coalesced", CNT_ACK_COALESCED_ADDR),
    ("read_jobs", CNT_READ_JOBS_ADDR),
    ("rqe_fetched", CNT_RQE_FETCHED_ADDR),
    ("rx_wr_bytes_lo", CNT_RX_WR_BYTES_LO_ADDR),
    ("rx_wr_bytes_hi", CNT_RX_WR_BYTES_HI_ADDR),
    ("read_job_full", CNT_READ_JOB_FULL_ADDR),
    ("rdr_taken", CNT_RDR_TAKEN_ADDR),
    ("rdr_done", CNT_RDR_DONE_ADDR),
    ("rdr_unexp", CNT_RDR_UNEXP_ADDR),
    ("rdr_dup", CNT_RDR_DUP_ADDR),
    ("rdr_seq", CNT_RDR_SEQ_ADDR),
    ("rdr_bad", CNT_RDR_BAD_ADDR),
];

impl RnicTopEnv {
    /// Every responder counter against what the frames that arrived call
    /// for. `acks_sent`: ACK/NAK frames per QP seen on `tx_*`; `reads`:
    /// the READ jobs never answered (refused by a full ring).
    pub(super) fn check_resp_counters(
        &self,
        want: &RespPrediction,
        acks_sent: &[usize],
        reads: &ReadOutcome,
    ) -> Vec<String> {
        let v = &self.vector;
        let get = |n: &str| {
            self.counters
                .iter()
                .find(|(m, _)| m == n)
                .map(|x| x.1 as u64)
        };
        let mut exp: Vec<(&str, u64)> = [
            ("resp_exec", "exec"),
            ("resp_dup", "dup"),
            ("resp_nak_seq", "seq_nak"),
            ("resp_nak_rnr", "rnr_nak"),
            ("resp_nak_inv", "inv_nak"),
            ("resp_nak_acc", "acc_nak"),
            ("resp_nak_op", "op_nak"),
            ("resp_recv", "recv"),
            ("resp_uc_drop", "uc_drop"),
            ("resp_not_ready", "notready"),
        ]
        .iter()
        .map(|&(c, k)| (c, want.counts.get(k).copied().unwrap_or(0)))
        .collect();
        // The prediction assumes every request frame reached the responder,
        // unless the vector lets rx_buf drop (rx_drops.rs infers which).
        if !v.config.rx_drops {
            exp.push(("rxbuf_full", 0));
        }
        let ring_fault = v.root_complex.faults.iter().any(|f| {
            v.qps.iter().filter_map(|q| q.rq).any(|r| {
                let (lo, hi) = (r.base.0, r.base.0 + (128u64 << r.log_size));
                f.addr.0 < hi && lo < f.addr.0 + f.len
            })
        });
        if !ring_fault {
            exp.push(("rq_fetch_err", 0));
        }
        exp.push(("rx_writes", want.writes.len() as u64));
        let sent: usize = acks_sent.iter().sum();
        exp.push(("ack_sent", sent as u64));
        let required: usize = want.responses.iter().map(Vec::len).sum();
        exp.push(("ack_coalesced", required.saturating_sub(sent) as u64));
        // Every READ executed offers rd_resp a job: stored, or refused and
        // then never answered.
        let reads_executed = want.counts.get("read").copied().unwrap_or(0);
        exp.push((
            "read_jobs",
            reads_executed - reads.skipped.min(reads_executed),
        ));
        exp.push(("read_job_full", reads.skipped));
        // The requester's READ responses (rd_sink), from the responses that
        // arrived.
        for (name, n) in [
            "rdr_taken",
            "rdr_done",
            "rdr_unexp",
            "rdr_dup",
            "rdr_seq",
            "rdr_bad",
        ]
        .into_iter()
        .zip(want.rdr)
        {
            exp.push((name, n));
        }
        // rq_fetch holds at most RQ_SLOTS RECVs per QP: the ones fetched
        // are those consumed or flushed and up to RQ_SLOTS more.
        let mut fetched = 0u64;
        for q in v.qps.iter().filter(|q| q.state != QpState::Reset) {
            let posted: usize = self
                .host
                .recv_posts
                .iter()
                .filter(|p| p.qp == q.qp)
                .map(|p| p.recvs.len())
                .sum();
            let popped = want.popped[q.qp as usize];
            fetched += posted.min(popped + RQ_SLOTS) as u64;
        }
        exp.push(("rqe_fetched", fetched));
        let bytes: u64 = want.writes.iter().map(|w| w.1.len() as u64).sum();
        exp.push(("rx_wr_bytes_lo", bytes & 0xFFFF_FFFF));
        exp.push(("rx_wr_bytes_hi", bytes >> 32));
        let mut out: Vec<String> = Vec::new();
        if v.config.rx_drops {
            // The frames found lost, and at most every frame whose fate
            // showed nothing (rx_drops.rs).
            let (lo, hi) = (want.rx_lost, want.rx_lost + want.rx_unknown);
            match get("rxbuf_full") {
                Some(d) if (lo..=hi).contains(&d) => {}
                d => out.push(format!(
                    "rxbuf_full = {d:?}: rx_drops found {lo} frames lost and {} whose fate \
                     shows nothing: expected {lo} to {hi}",
                    want.rx_unknown
                )),
            }
        }
        out.extend(exp.into_iter().filter_map(|(name, e)| {
            let g = get(name);
            (g != Some(e & 0xFFFF_FFFF))
                .then(|| format!("{name} = {g:?}, the request frames that arrived call for {e}"))
        }));
        out
    }
}
