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

use super::resp_predict::parse_padded;
use super::RnicTopEnv;
use crate::scenario::req_reads::{
    LAST as RC_READ_RESP_LAST, ONLY as RC_READ_RESP_ONLY, READ_REQUEST as RC_READ_REQUEST,
};

impl RnicTopEnv {
    /// Fails the run for every READ request frame sent while its QP
    /// already had `max(1, max_rd_atomic)` READs outstanding on the wire.
    pub(super) fn check_read_window(&mut self, cycle: u64) {
        let mut problems = Vec::new();
        for q in &self.vector.qps {
            let bound = q.max_rd_atomic.max(1) as usize;
            // (cycle, +1 request sent / -1 last response arrived).
            let mut ev: Vec<(u64, i64)> = Vec::new();
            for (c, f) in &self.frames {
                if let Ok(p) = parse_padded(f) {
                    if p.bth.opcode == RC_READ_REQUEST && p.bth.dest_qp == q.remote_qpn {
                        ev.push((*c, 1));
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
                        ev.push((s.first, -1));
                    }
                }
            }
            // A response that arrived in the cycle a request left counts as
            // arrived first (-1 sorts ahead of +1).
            ev.sort_by_key(|&(c, d)| (c, d));
            let mut out = 0i64;
            for (c, d) in ev {
                out = (out + d).max(0);
                if d > 0 && out as usize > bound {
                    problems.push(format!(
                        "QP {}: a READ request left at cycle {c} with {out} READs outstanding \
                         on the wire, above max_rd_atomic {bound}",
                        q.qp
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
