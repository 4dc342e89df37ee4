//! The requester's side of RDMA READ (`rd_sink`, docs/rd_sink.md), worked
//! out from the vector and the frames that arrived, independently of the
//! DUTs: per QP the READs the NIC sent (its READ REQUEST packets, in
//! order, each with its local address) and the READ RESPONSE frames that
//! reached it, by the rules of docs/rd_sink.md: a response is taken only
//! for the oldest outstanding READ of its QP, at the PSN that READ expects
//! next, with the opcode its position calls for (ONLY; FIRST, MIDDLE...,
//! LAST), an ACK-class AETH on FIRST / LAST / ONLY and none on MIDDLE, and
//! exactly its length (a full MTU but for the last); its payload goes to
//! the READ's local address plus the MTUs before it. Past response 0 the
//! answer to a re-request (go-back-N asked again for the rest of the READ,
//! docs/rd_sink.md rule 3) may come instead: a FIRST where a MIDDLE is, an
//! ONLY where the LAST is. Anything else is dropped and changes nothing. A READ whose last response was taken is
//! done: its completion may leave, and it acknowledges every PSN up to its
//! last.

use std::collections::VecDeque;

use super::rx_reference::{classify, live_qps, request_meta, RxEvent};
use super::tx_reference::Expected;
use crate::vector::Vector;

/// What the READ responses that arrived do at the requester.
#[derive(Debug, Default, Clone)]
pub struct ReqReads {
    /// Payload placed in host memory: (bus address, bytes), in arrival
    /// order (no write for a response without payload).
    pub writes: Vec<(u64, Vec<u8>)>,
    /// READs done, in order: (QP, the READ's last PSN).
    pub dones: Vec<(u32, u32)>,
    /// Responses taken; dropped with no READ outstanding, as a duplicate
    /// (a PSN 1 to 2^23 before the one expected), as ahead (any other
    /// PSN), malformed (opcode for its position, AETH, length).
    pub taken: u64,
    pub unexp: u64,
    pub dup: u64,
    pub ahead: u64,
    pub bad: u64,
}

struct Outstanding {
    psn0: u32,
    len: u64,
    addr: u64,
    mtu: u64,
    /// Responses taken so far.
    k: u64,
}

const PSN_MOD: u32 = 1 << 24;
/// RC READ RESPONSE FIRST .. ONLY and READ REQUEST (protocol.md section 1);
/// `read_window.rs` takes them from here.
const FIRST: u8 = 0x0D;
const MIDDLE: u8 = 0x0E;
pub(crate) const LAST: u8 = 0x0F;
pub(crate) const ONLY: u8 = 0x10;
pub(crate) const READ_REQUEST: u8 = 0x0C;

/// The READ responses among `frames` (each: bytes, FCS good), in arrival
/// order, against the READ REQUESTs of `exp`.
pub fn predict<'a>(
    v: &Vector,
    exp: &Expected,
    frames: impl Iterator<Item = (&'a [u8], bool)>,
) -> ReqReads {
    let live = live_qps(v);
    let mut out = ReqReads::default();
    let mut reads: Vec<VecDeque<Outstanding>> = exp
        .packets
        .iter()
        .map(|pkts| {
            pkts.iter()
                .filter(|p| p.opcode == READ_REQUEST)
                .map(|p| {
                    let mtu = v
                        .qps
                        .iter()
                        .find(|q| q.qp == p.qp)
                        .map_or(256, |q| q.mtu as u64);
                    Outstanding {
                        psn0: p.psn,
                        len: p.reth.map_or(0, |r| r.2 as u64),
                        addr: p.pay_addr,
                        mtu,
                        k: 0,
                    }
                })
                .collect()
        })
        .collect();
    for (bytes, fcs) in frames {
        let RxEvent::Data { qp, .. } = classify(bytes, fcs, &live) else {
            continue;
        };
        // The fields as rx_parser hands them on (the frame's own bytes:
        // a damaged pad or a short frame's MAC padding change nothing).
        let m = request_meta(bytes);
        let op = m.opcode;
        if !(FIRST..=ONLY).contains(&op) {
            continue;
        }
        let Some(payload) = bytes.get(m.hdr_len..m.hdr_len + m.pay_len) else {
            continue;
        };
        let Some(h) = reads.get_mut(qp as usize).and_then(|q| q.front_mut()) else {
            out.unexp += 1;
            continue;
        };
        let n = h.len.div_ceil(h.mtu).max(1);
        let want_psn = (h.psn0 + h.k as u32) % PSN_MOD;
        if m.psn != want_psn {
            let behind = want_psn.wrapping_sub(m.psn) % PSN_MOD;
            if (1..=1 << 23).contains(&behind) {
                out.dup += 1;
            } else {
                out.ahead += 1;
            }
            continue;
        }
        let want_op = match (n, h.k) {
            (1, _) => ONLY,
            (_, 0) => FIRST,
            (n, k) if k + 1 == n => LAST,
            _ => MIDDLE,
        };
        // Rule 3: past response 0, the answer to a re-request of the rest
        // of the READ starts as a new READ's would: FIRST where a MIDDLE
        // is, ONLY where the LAST is.
        let rerequest =
            h.k > 0 && ((want_op == MIDDLE && op == FIRST) || (want_op == LAST && op == ONLY));
        if op != want_op && !rerequest {
            out.bad += 1;
            continue;
        }
        let aeth_ok = match m.aeth {
            Some(a) => op != MIDDLE && a >> 29 == 0,
            None => op == MIDDLE,
        };
        let want_len = if op == FIRST || op == MIDDLE {
            h.mtu
        } else {
            h.len - h.k * h.mtu
        };
        if !aeth_ok || payload.len() as u64 != want_len {
            out.bad += 1;
            continue;
        }
        out.taken += 1;
        if !payload.is_empty() {
            out.writes.push((h.addr + h.k * h.mtu, payload.to_vec()));
        }
        h.k += 1;
        if h.k == n {
            out.dones.push((qp, (h.psn0 + n as u32 - 1) % PSN_MOD));
            reads[qp as usize].pop_front();
        }
    }
    out
}
