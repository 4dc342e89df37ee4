//! The requester's READ window, from the wire alone: a QP never has more
//! READs outstanding than its `max_rd_atomic` (CTRL.MAX_RD, 0 acting as 1;
//! protocol.md section 7).
//!
//! Seen from outside the NIC, a READ is outstanding from its request frame
//! on `tx_*` until its last response (READ RESPONSE LAST or ONLY) arrives
//! on `rx_*`. The NIC counts a READ from the moment it commits the request
//! (before the frame) until it has taken the last response (after its
//! arrival), so at every request frame the READs outstanding on the wire,
//! that one included, are at most what the NIC counted then: never more
//! than the bound. A response that arrives and is then dropped (a
//! duplicate, a bad one) only makes this count smaller, so the check never
//! blames a correct NIC; a NIC that ignored the bound sends a request with
//! the window already full and fails it.
//!
//! Go-back-N sends READ REQUESTs again: a rewind resends a READ, a lost
//! response makes the requester ask again for the rest of it from response
//! k (a READ REQUEST at psn0 + k; docs/rd_sink.md rule 3). Either names the
//! same last PSN as the READ it replaces and is no new READ: the NIC pushes
//! no second record for it (docs/retransmission.md, tx_engine). So a READ
//! is keyed by its last PSN (its request's PSN plus its responses, one per
//! MTU, less one): a request is a new READ only when no outstanding READ
//! of the QP ends at that PSN, and the READ is over when a LAST or ONLY
//! with that PSN arrives (a response that arrives and is then dropped as
//! out of sequence still ends it here, which again only makes the count
//! smaller than the NIC's).

use super::resp_predict::parse_padded;
use super::RnicTopEnv;
use crate::scenario::req_reads::{
    LAST as RC_READ_RESP_LAST, ONLY as RC_READ_RESP_ONLY, READ_REQUEST as RC_READ_REQUEST,
};

const PSN_MASK: u32 = (1 << 24) - 1;

impl RnicTopEnv {
    /// Fails the run for every READ request frame sent while its QP
    /// already had `max(1, max_rd_atomic)` READs outstanding on the wire.
    pub(super) fn check_read_window(&mut self, cycle: u64) {
        let mut problems = Vec::new();
        for q in &self.vector.qps {
            let bound = q.max_rd_atomic.max(1) as usize;
            let mtu = q.mtu.max(1) as u64;
            // (cycle, order, PSN): a request sent (order 1, the PSN its
            // READ ends at) or a last response arrived (order 0, its PSN).
            let mut ev: Vec<(u64, u8, u32)> = Vec::new();
            for (c, f) in &self.frames {
                if let Ok(p) = parse_padded(f) {
                    if p.bth.opcode == RC_READ_REQUEST && p.bth.dest_qp == q.remote_qpn {
                        let len = p.reth.map_or(0, |r| r.dma_len as u64);
                        let n = len.div_ceil(mtu).max(1) as u32;
                        ev.push((*c, 1, (p.bth.psn + n - 1) & PSN_MASK));
                    }
                }
            }
            for s in &self.rx.sent {
                if s.fcs {
                    continue;
                }
                if let Ok(p) = parse_padded(&s.bytes) {
                    let last = matches!(p.bth.opcode, RC_READ_RESP_LAST | RC_READ_RESP_ONLY);
                    if last && p.bth.dest_qp == q.qp {
                        ev.push((s.first, 0, p.bth.psn));
                    }
                }
            }
            // A response that arrived in the cycle a request left counts as
            // arrived first.
            ev.sort_by_key(|&(c, o, _)| (c, o));
            // The last PSNs of the READs outstanding.
            let mut out: Vec<u32> = Vec::new();
            for (c, o, end) in ev {
                if o == 0 {
                    out.retain(|&e| e != end);
                    continue;
                }
                if out.contains(&end) {
                    continue;
                }
                out.push(end);
                if out.len() > bound {
                    problems.push(format!(
                        "QP {}: a READ request left at cycle {c} with {} READs outstanding \
                         on the wire, above max_rd_atomic {bound}",
                        q.qp,
                        out.len()
                    ));
                    break;
                }
            }
        }
        for p in problems {
            self.common.fail(cycle, p);
        }
    }
}
