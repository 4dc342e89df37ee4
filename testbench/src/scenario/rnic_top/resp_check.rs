//! The end-of-run checks of the responder's effects against
//! [`super::resp_predict`]: every host memory write that is not a CQE,
//! every ACK/NAK frame (byte for byte, and as a coalescing of the required
//! ones), every RECV completion, the final memory of every MR, and the
//! state of every QP the responder moved to ERROR.

use super::resp_predict::{cqe_fields, RespPrediction, LOCAL_WRITE, REMOTE_WRITE};
use super::RnicTopEnv;
use crate::env::HostMemory;
use crate::scenario::resp_cover::{self, Response};
use crate::vector::qp_frame::{self, ecn_of, From};
use crate::wire::roce::{aeth, RoceRepr};

/// Cycles of silence on `tx_*` and `rq_*` after which an owed ACK/NAK is
/// no longer waited for.
pub const ACK_WAIT_CYCLES: u64 = 20_000;

/// BTH opcode ACKNOWLEDGE.
pub const OPCODE_ACK: u8 = 0x11;

/// CQE byte 0x16 bit 0: the immediate is present (RECV CQEs).
const IMM_FLAG: usize = 0x16;
/// CQE bytes 0x18..0x1B: the source QP (RECV CQEs), little-endian.
const SRC_QP: std::ops::Range<usize> = 0x18..0x1B;

impl RnicTopEnv {
    /// Every MWr on `rq_*` outside the CQ rings: (cycle, address, bytes).
    pub(super) fn data_writes(&self) -> Vec<(u64, u64, Vec<u8>)> {
        use crate::env::Direction;
        use crate::wire::tlp::{Tlp, TlpKind};
        let mut out = Vec::new();
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
            let in_cq = self.vector.cqs.iter().any(|c| {
                addr >= c.ring.base.0 && addr < c.ring.base.0 + (32u64 << c.ring.log_size)
            });
            if !in_cq {
                // The bytes the byte enables name: the first DW's from
                // first_be, the last DW's from last_be (one DW: first_be).
                let p = t.payload();
                let dws = p.len() / 4;
                let on = |k: usize| {
                    let (dw, b) = (k / 4, k % 4);
                    let be = if dw == 0 {
                        t.first_be()
                    } else if dw + 1 == dws {
                        t.last_be()
                    } else {
                        0xF
                    };
                    be >> b & 1 == 1
                };
                let (Some(lo), Some(hi)) = (
                    (0..p.len()).find(|&k| on(k)),
                    (0..p.len()).rfind(|&k| on(k)),
                ) else {
                    continue;
                };
                out.push((e.cycle, addr + lo as u64, p[lo..=hi].to_vec()));
            }
        }
        out
    }

    /// The ACK/NAK frame the QP `qp` must send for `r` (docs/tx_datapath.md,
    /// tx_engine: the QP's headers, opcode 0x11, AckReq 0, the AETH).
    pub fn expected_ack(&self, qp: u32, r: Response) -> Vec<u8> {
        let q = self
            .vector
            .qps
            .iter()
            .find(|q| q.qp == qp)
            .expect("a known QP");
        let b = qp_frame::bth(q, From::Nic, OPCODE_ACK, r.0);
        let mut repr = qp_frame::repr(q, From::Nic, b, q.dscp, ecn_of(q));
        repr.aeth = Some(aeth::Repr {
            syndrome: r.1,
            msn: r.2,
        });
        qp_frame::emit(&repr)
    }

    /// Whether some QP's last required ACK/NAK (always sent: nothing
    /// after it can replace it) or one of its READ responses has not left
    /// on `tx_*` yet.
    pub(super) fn acks_owed(&self, cycle: u64) -> bool {
        // A frame held by a PFC pause (an ACK/NAK or CNP too) leaves after
        // it: no end before the last pause has run out.
        if cycle <= self.pause_end() {
            return true;
        }
        // A NIC silent this long will not send it: let the checks say so.
        if cycle > self.last_activity + ACK_WAIT_CYCLES {
            return false;
        }
        let want = self.predict_responder();
        if self.reads_owed(&want) {
            return true;
        }
        let sent = self.sent_acks();
        self.vector.qps.iter().any(|q| {
            let i = q.qp as usize;
            want.responses[i]
                .last()
                .is_some_and(|last| sent[i].last() != Some(last))
        })
    }

    /// The last cycle a PFC frame received pauses a priority: per
    /// priority the newest frame that names it replaces the pause, from
    /// its last beat + 4 for its time (docs/rx_cc.md, pfc).
    fn pause_end(&self) -> u64 {
        use crate::scenario::rx_reference::{classify, live_qps, RxEvent};
        let live = live_qps(&self.vector);
        let mut end = [0u64; 8];
        for s in &self.rx.sent {
            if let RxEvent::Pfc { enable, quanta } = classify(&s.bytes, s.fcs, &live) {
                for p in (0..8).filter(|p| enable >> p & 1 == 1) {
                    let d = (quanta[p] as u64 * 512).div_ceil(super::PFC_BITS_PER_CYCLE);
                    end[p] = s.last + 3 + d;
                }
            }
        }
        end.into_iter().max().unwrap_or(0)
    }

    /// The ACK/NAK frames sent so far, per QP.
    fn sent_acks(&self) -> Vec<Vec<Response>> {
        let mut sent: Vec<Vec<Response>> = vec![Vec::new(); crate::vector::QPS as usize];
        for (_, f) in &self.frames {
            let Ok(r) = RoceRepr::parse_bytes(f) else {
                continue;
            };
            if r.bth.opcode != OPCODE_ACK {
                continue;
            }
            if let Some(q) = self
                .vector
                .qps
                .iter()
                .find(|q| q.remote_qpn == r.bth.dest_qp)
            {
                let a = r.aeth.map_or((0, 0), |a| (a.syndrome, a.msn));
                sent[q.qp as usize].push((r.bth.psn, a.0, a.1));
            }
        }
        sent
    }

    /// The responder's checks (after `check_cqes`, which fills `cqe_log`).
    pub(super) fn check_responder(&mut self, cycle: u64) {
        let want = self.predict_responder();
        let mut bad: Vec<String> = want.problems.clone();
        bad.extend(self.check_writes(&want));
        let (b, acks_sent) = self.check_acks(&want);
        bad.extend(b);
        let (b, reads) = self.check_read_responses(&want);
        bad.extend(b);
        if self.uses_rx() {
            bad.extend(self.check_resp_counters(&want, &acks_sent, &reads));
        }
        bad.extend(self.check_recv_cqes(&want));
        bad.extend(self.check_error_states(&want));
        for b in bad {
            self.common.fail(cycle, b);
        }
    }

    /// Host writes: the same bytes at the same addresses (the last write
    /// of a byte wins on both sides), the same number of bytes written in
    /// all, every write inside an MR granting REMOTE_WRITE or LOCAL_WRITE,
    /// and every MR's final contents.
    fn check_writes(&self, want: &RespPrediction) -> Vec<String> {
        let mut out = Vec::new();
        let got = self.data_writes();
        let total = |it: &mut dyn Iterator<Item = usize>| it.sum::<usize>();
        let (nw, ng) = (
            total(&mut want.writes.iter().map(|w| w.1.len())),
            total(&mut got.iter().map(|w| w.2.len())),
        );
        if nw != ng {
            out.push(format!(
                "responder: {ng} bytes written to host memory outside the CQ rings, the \
                 request frames call for {nw}"
            ));
        }
        // Bytes written, the last write of a byte winning, as the ranges
        // covered and a memory holding them: a map per byte cost seconds
        // on a receiver of 16 MiB.
        let mut wmem = HostMemory::new();
        for (a, b) in &want.writes {
            wmem.write(*a, b);
        }
        let mut gmem = HostMemory::new();
        for (c, a, b) in &got {
            let ok = self.vector.mrs.iter().any(|m| {
                let bits = crate::vector::resp::access_bits(&m.access);
                m.valid
                    && bits & (REMOTE_WRITE | LOCAL_WRITE) != 0
                    && *a >= m.pbase.0
                    && a + b.len() as u64 <= m.pbase.0 + m.len.0
            });
            if !ok && out.len() < 8 {
                out.push(format!(
                    "responder: MWr at cycle {c} of {} bytes to {a:#x} is in no MR granting \
                     REMOTE_WRITE or LOCAL_WRITE",
                    b.len()
                ));
            }
            gmem.write(*a, b);
        }
        let wcov = covered(want.writes.iter().map(|(a, b)| (*a, b.len())));
        let gcov = covered(got.iter().map(|(_, a, b)| (*a, b.len())));
        let first = first_difference(&wcov, &wmem, &gcov, &gmem);
        if let Some(first) = first {
            let len = |c: &[(u64, u64)]| c.iter().map(|r| r.1 - r.0).sum::<u64>();
            out.push(format!(
                "responder: host memory written differs from the request frames' payloads \
                 ({} bytes expected, {} written; first difference: {first})",
                len(&wcov),
                len(&gcov),
            ));
        }
        // Final memory of every MR: the initial pattern with the expected
        // writes applied (an MR overlapping a ring the host writes is left
        // to the checks above).
        let mut mem = HostMemory::new();
        for m in &self.vector.memory {
            mem.fill_pattern(m.addr.0, m.len as usize, m.seed);
        }
        for (a, b) in &want.writes {
            mem.write(*a, b);
        }
        let rings: Vec<(u64, u64)> = self.ring_ranges();
        for m in &self.vector.mrs {
            let (lo, hi) = (m.pbase.0, m.pbase.0 + m.len.0);
            if m.len.0 == 0 || m.len.0 > 1 << 26 || rings.iter().any(|r| r.0 < hi && lo < r.1) {
                continue;
            }
            let n = m.len.0 as usize;
            if mem.digest_range(lo, n) != self.common.mem.digest_range(lo, n) {
                out.push(format!(
                    "MR {} (pbase {lo:#x}, {n} bytes): final host memory differs from the \
                     initial contents with the request frames' payloads placed",
                    m.index
                ));
            }
        }
        out
    }

    /// Host-written ranges: SQ, RQ and CQ rings.
    fn ring_ranges(&self) -> Vec<(u64, u64)> {
        let v = &self.vector;
        let mut r: Vec<(u64, u64)> = v
            .qps
            .iter()
            .map(|q| (q.sq.base.0, q.sq.base.0 + (64u64 << q.sq.log_size)))
            .collect();
        r.extend(
            v.qps
                .iter()
                .filter_map(|q| q.rq)
                .map(|q| (q.base.0, q.base.0 + (128u64 << q.log_size))),
        );
        r.extend(
            v.cqs
                .iter()
                .map(|c| (c.ring.base.0, c.ring.base.0 + (32u64 << c.ring.log_size))),
        );
        r
    }

    /// ACK/NAK frames: each byte for byte the frame of its response, and
    /// per QP a coalescing of the required responses.
    fn check_acks(&self, want: &RespPrediction) -> (Vec<String>, Vec<usize>) {
        let mut out = Vec::new();
        let n = crate::vector::QPS as usize;
        let mut sent: Vec<Vec<Response>> = vec![Vec::new(); n];
        for (k, (start, f)) in self.frames.iter().enumerate() {
            let Ok(r) = RoceRepr::parse_bytes(f) else {
                continue;
            };
            if r.bth.opcode != OPCODE_ACK {
                continue;
            }
            let Some(q) = self
                .vector
                .qps
                .iter()
                .find(|q| q.remote_qpn == r.bth.dest_qp)
            else {
                continue; // check_frames reports it
            };
            let a = r.aeth.map_or((0, 0), |a| (a.syndrome, a.msn));
            let resp = (r.bth.psn, a.0, a.1);
            if *f != self.expected_ack(q.qp, resp) {
                out.push(format!(
                    "frame {k} (cycle {start}): ACK/NAK of QP {} (PSN {}, syndrome {:#04x}, MSN {}) \
                     differs from the frame the testbench builds for it",
                    q.qp, resp.0, resp.1, resp.2
                ));
            }
            sent[q.qp as usize].push(resp);
        }
        for q in &self.vector.qps {
            let i = q.qp as usize;
            if let Err(e) = resp_cover::responses_cover(&want.responses[i], &sent[i]) {
                out.push(format!("QP {}: ACK/NAKs sent: {e}", q.qp));
            }
        }
        (out, sent.iter().map(Vec::len).collect())
    }

    /// RECV completions (opcode 128/129) per QP, in order, in the QP's
    /// receive CQ, every field including the immediate flag and source QP.
    fn check_recv_cqes(&self, want: &RespPrediction) -> Vec<String> {
        let mut out = Vec::new();
        let n = crate::vector::QPS as usize;
        let mut got: Vec<Vec<_>> = vec![Vec::new(); n];
        for w in self.cqe_log.iter().filter(|w| w.cqe.opcode >= 128) {
            let imm = (w.raw[IMM_FLAG] & 1 == 1).then_some(w.cqe.imm);
            let mut s = [0u8; 4];
            s[..3].copy_from_slice(&w.raw[SRC_QP]);
            let src = u32::from_le_bytes(s);
            if (w.cqe.qp as usize) < n {
                got[w.cqe.qp as usize].push((
                    w.cq,
                    (w.cqe.wr_id, w.cqe.status, w.cqe.opcode, w.cqe.len, imm, src),
                    w.cqe.imm,
                ));
            } else {
                out.push(format!("RECV CQE for QP {} that does not exist", w.cqe.qp));
            }
        }
        for q in &self.vector.qps {
            let i = q.qp as usize;
            let exp: Vec<_> = want.cqes[i].iter().filter_map(cqe_fields).collect();
            let g = &got[i];
            for (k, e) in exp.iter().enumerate() {
                match g.get(k) {
                    Some((cq, x, raw_imm))
                        if *cq == q.recv_cq() && x == e && (e.4.is_some() || *raw_imm == 0) => {}
                    Some((cq, x, raw_imm)) => out.push(format!(
                        "QP {}: RECV CQE {k}: got CQ {cq} (wr_id, status, opcode, byte_len, imm, \
                         src_qp) = {x:x?} (imm field {raw_imm:#x}); expected CQ {} {e:x?}",
                        q.qp,
                        q.recv_cq()
                    )),
                    None => out.push(format!(
                        "QP {}: RECV CQE {k} never written; expected {e:x?}",
                        q.qp
                    )),
                }
            }
            if g.len() > exp.len() {
                out.push(format!(
                    "QP {}: {} RECV CQEs written, {} expected; the first extra: {:x?}",
                    q.qp,
                    g.len(),
                    exp.len(),
                    g[exp.len()].1
                ));
            }
        }
        out
    }

    /// A QP the responder moved to ERROR reads back CTRL.STATE = ERROR.
    fn check_error_states(&self, want: &RespPrediction) -> Vec<String> {
        let mut out = Vec::new();
        for q in &self.vector.qps {
            let name = format!("qp{}_ctrl", q.qp);
            let Some(ctrl) = self.counters.iter().find(|(n, _)| *n == name).map(|x| x.1) else {
                continue;
            };
            let state = ctrl & 7;
            if self.expected.nak_errors.contains(&q.qp) && state != 2 {
                out.push(format!(
                    "QP {}: a remote-error NAK must move the requester QP to ERROR; CTRL.STATE \
                     reads {state}",
                    q.qp
                ));
            }
            if want.errors[q.qp as usize] && state != 2 {
                out.push(format!(
                    "QP {}: the responder's remote error must move it to ERROR; CTRL.STATE \
                     reads {state}",
                    q.qp
                ));
            }
        }
        out
    }
}

/// The byte ranges `[lo, hi)` the writes `(address, length)` cover, merged
/// and in order.
fn covered(ws: impl Iterator<Item = (u64, usize)>) -> Vec<(u64, u64)> {
    let mut r: Vec<(u64, u64)> = ws
        .filter(|w| w.1 > 0)
        .map(|(a, n)| (a, a + n as u64))
        .collect();
    r.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(r.len());
    for (lo, hi) in r {
        match out.last_mut() {
            Some(l) if lo <= l.1 => l.1 = l.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// The first byte where two sets of writes differ (in the ranges covered
/// or in a covered byte's value), described; `None` when they agree.
fn first_difference(
    wcov: &[(u64, u64)],
    wmem: &HostMemory,
    gcov: &[(u64, u64)],
    gmem: &HostMemory,
) -> Option<String> {
    for (w, g) in wcov.iter().zip(gcov) {
        if w != g {
            let at = if w.0 != g.0 {
                w.0.min(g.0)
            } else {
                w.1.min(g.1)
            };
            return Some(format!(
                "bytes expected at {:#x}..{:#x}, written at {:#x}..{:#x} (from {at:#x})",
                w.0, w.1, g.0, g.1
            ));
        }
    }
    if wcov.len() != gcov.len() {
        return Some("one side has more".into());
    }
    for &(lo, hi) in wcov {
        let n = (hi - lo) as usize;
        if wmem.digest_range(lo, n) == gmem.digest_range(lo, n) {
            continue;
        }
        let (wb, gb) = (wmem.read(lo, n), gmem.read(lo, n));
        let k = wb.iter().zip(&gb).position(|(x, y)| x != y).unwrap_or(0);
        return Some(format!(
            "expected {:#x}={:#04x}, got {:#x}={:#04x}",
            lo + k as u64,
            wb[k],
            lo + k as u64,
            gb[k]
        ));
    }
    None
}

#[cfg(test)]
mod write_tests {
    use super::*;

    #[test]
    fn covered_merges_overlapping_and_adjacent_writes() {
        let c = covered([(10, 5), (0, 4), (15, 2), (12, 1), (30, 0)].into_iter());
        assert_eq!(c, vec![(0, 4), (10, 17)]);
    }

    #[test]
    fn the_last_write_of_a_byte_wins_and_a_difference_is_named() {
        let (mut w, mut g) = (HostMemory::new(), HostMemory::new());
        w.write(0x100, &[1, 2, 3]);
        w.write(0x101, &[9]);
        g.write(0x100, &[1, 9, 3]);
        let c = covered([(0x100, 3), (0x101, 1)].into_iter());
        assert_eq!(first_difference(&c, &w, &c, &g), None);
        g.write(0x102, &[4]);
        assert_eq!(
            first_difference(&c, &w, &c, &g).unwrap(),
            "expected 0x102=0x03, got 0x102=0x04"
        );
        let d = covered([(0x100, 4)].into_iter());
        assert!(first_difference(&c, &w, &d, &g)
            .unwrap()
            .starts_with("bytes expected"));
    }
}
