//! The end-of-run checks of an `rnic_top` run against the independent
//! references: every frame against the expected one, every CQE and
//! interrupt, the CNPs the CE marks call for, the PFC pause windows, and the
//! receive counters read back.

use super::program::RX_COUNTERS;
use super::{is_cnp, RnicTopEnv, PFC_BITS_PER_CYCLE};
use crate::scenario::rx_reference::{self, RxEvent};
use crate::wire::cqe;
use crate::wire::roce::RoceRepr;

/// One CQE write seen on `rq_*`.
#[derive(Debug, Clone)]
pub struct CqeWrite {
    pub cycle: u64,
    pub cq: u32,
    /// Producer index: the k-th CQE written to this CQ.
    pub index: u32,
    pub addr: u64,
    pub cqe: cqe::Repr,
    pub raw: Vec<u8>,
}

impl RnicTopEnv {
    /// Every MWr on `rq_*` into a CQ ring, decoded, in the order they left.
    /// Any other MWr is reported as a failure (the transmit path writes
    /// nothing but CQEs).
    pub fn cqe_writes(&mut self, cycle: u64) -> Vec<CqeWrite> {
        use crate::env::Direction;
        use crate::wire::tlp::{Tlp, TlpKind};
        let mut out = Vec::new();
        let mut count = vec![0u32; crate::vector::CQS as usize];
        let mut bad = Vec::new();
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
            let ring = self.vector.cqs.iter().find(|c| {
                addr >= c.ring.base.0 && addr < c.ring.base.0 + (32u64 << c.ring.log_size)
            });
            let payload = t.payload();
            match ring {
                // Other writes are the responder's (resp_check).
                None => {}
                Some(c) if payload.len() == cqe::CQE_LEN => {
                    let k = &mut count[c.cq as usize];
                    out.push(CqeWrite {
                        cycle: e.cycle,
                        cq: c.cq,
                        index: *k,
                        addr,
                        cqe: cqe::Repr::parse(&cqe::Cqe::new_unchecked(payload)),
                        raw: payload.to_vec(),
                    });
                    *k += 1;
                }
                _ => bad.push(format!(
                    "MWr of {} bytes to {addr:#x} is not a CQE write",
                    payload.len()
                )),
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
        out
    }

    /// Completions: per CQ, the k-th CQE written goes to entry k mod 2^log
    /// with owner = NOT bit `log` of k and reserved bytes zero; per QP, the
    /// CQEs are the reference's completions in order; nothing else.
    fn check_cqes(&mut self, cycle: u64) {
        let writes = self.cqe_writes(cycle);
        let mut pos = vec![0usize; crate::vector::QPS as usize];
        for w in &writes {
            let c = self
                .vector
                .cqs
                .iter()
                .find(|c| c.cq == w.cq)
                .expect("found by address")
                .clone();
            let at = format!("CQE {} of CQ {} (cycle {})", w.index, w.cq, w.cycle);
            let want_addr = c.ring.base.0 + 32 * (w.index % (1 << c.ring.log_size)) as u64;
            let owner = ((!(w.index >> c.ring.log_size)) & 1) as u8;
            if w.addr != want_addr {
                self.common.fail(
                    cycle,
                    format!("{at}: written to {:#x}, expected {want_addr:#x}", w.addr),
                );
            }
            // A RECV CQE's byte 0x16 (immediate flag) and 0x18..0x1B (source
            // QP) are fields (docs/responder.md), reserved in the others.
            let mut masked = w.raw.clone();
            if w.cqe.opcode >= 128 {
                masked[0x16] &= !1;
                masked[0x18..0x1B].fill(0);
            }
            // A requester CQE keeps them zero (whatever the codec calls reserved).
            let requester_clean = w.cqe.opcode >= 128
                || (w.raw[0x16] == 0 && w.raw[0x18..0x1B].iter().all(|&b| b == 0));
            if w.cqe.owner as u8 != owner
                || !cqe::Cqe::new_unchecked(&masked).reserved_zero()
                || !requester_clean
            {
                self.common.fail(
                    cycle,
                    format!(
                        "{at}: owner {:#x} (expected {owner}) or reserved bytes set: {:02x?}",
                        w.raw[cqe::field::OWNER],
                        w.raw
                    ),
                );
            }
            let e = w.cqe;
            if e.opcode >= 128 {
                continue; // a RECV completion: check_responder
            }
            let Some(p) = pos.get_mut(e.qp as usize) else {
                self.common
                    .fail(cycle, format!("{at}: QP {} does not exist", e.qp));
                continue;
            };
            let mine: Vec<_> = self.expected.cqes.iter().filter(|x| x.qp == e.qp).collect();
            match mine.get(*p) {
                Some(x)
                    if x.cq == w.cq
                        && x.wr_id == e.wr_id
                        && x.status == e.status
                        && x.opcode == e.opcode
                        && x.len == e.len
                        && x.imm == e.imm => {}
                Some(x) => {
                    let msg = format!(
                        "{at}: got wr_id {:#x} status {} opcode {} len {} imm {:#x}; expected (wqes[{}]) \
                         CQ {} wr_id {:#x} status {} opcode {} len {} imm {:#x}",
                        e.wr_id, e.status, e.opcode, e.len, e.imm, x.wqe, x.cq, x.wr_id, x.status, x.opcode,
                        x.len, x.imm
                    );
                    self.common.fail(cycle, msg);
                }
                None => self
                    .common
                    .fail(cycle, format!("{at}: unexpected completion {e:?}")),
            }
            *p += 1;
        }
        let sends = writes.iter().filter(|w| w.cqe.opcode < 128).count();
        if sends != self.expected.cqes.len() {
            let msg = format!(
                "{} requester CQEs written, expected {}",
                sends,
                self.expected.cqes.len()
            );
            self.common.fail(cycle, msg);
        }
        if self.irqs.len() != writes.len() {
            let msg = format!(
                "{} CQ interrupts for {} CQEs",
                self.irqs.len(),
                writes.len()
            );
            self.common.fail(cycle, msg);
        }
        for (k, w) in writes.iter().enumerate() {
            if let Some(&(_, cq)) = self.irqs.get(k) {
                if cq as u32 != w.cq {
                    self.common.fail(
                        cycle,
                        format!("interrupt {k} names CQ {cq}, its CQE went to CQ {}", w.cq),
                    );
                }
            }
        }
        self.cqe_log = writes;
    }
}

impl RnicTopEnv {
    /// Every frame must be a well-formed RoCEv2 frame (ICRC, checksum,
    /// lengths) and, byte for byte, the next packet the reference expects
    /// from the QP it is addressed to (by DestQP), so the PSN sequence, the
    /// opcodes, the headers and the payload of every QP are all checked.
    fn check_frames(&mut self, cycle: u64) {
        let mut next = vec![0usize; crate::vector::QPS as usize];
        let mut cnps = Vec::new();
        let frames = std::mem::take(&mut self.frames);
        for (k, (start, f)) in frames.iter().enumerate() {
            if super::pfc_check::is_pfc(f) {
                continue; // MAC control: check_pfc_frames
            }
            let at = format!("frame {k} (cycle {start}, {} bytes)", f.len());
            let repr = match RoceRepr::parse_bytes(f) {
                Ok(r) => r,
                Err(e) => {
                    self.common.fail(cycle, format!("{at}: {e}"));
                    continue;
                }
            };
            let Some(q) = self
                .vector
                .qps
                .iter()
                .find(|q| q.remote_qpn == repr.bth.dest_qp)
            else {
                self.common.fail(
                    cycle,
                    format!("{at}: DestQP {:#x} is no QP's remote QP", repr.bth.dest_qp),
                );
                continue;
            };
            let qp = q.qp as usize;
            if repr.bth.opcode == super::resp_check::OPCODE_ACK
                || super::resp_reads::is_read_response(repr.bth.opcode)
            {
                continue; // the responder's: check_responder
            }
            if repr.bth.opcode == crate::wire::roce::OPCODE_CNP {
                let want = self.expected_cnp(q.qp);
                if *f != want {
                    self.common.fail(
                        cycle,
                        format!("{at}: CNP of QP {qp} differs from the expected CNP {want:02x?}"),
                    );
                }
                cnps.push(q.qp);
                continue;
            }
            let Some(p) = self.expected.packets[qp].get(next[qp]).cloned() else {
                self.common.fail(
                    cycle,
                    format!("{at}: QP {qp} sent more packets than expected"),
                );
                continue;
            };
            next[qp] += 1;
            let want = self.expected_frame(&p);
            if *f != want {
                let b = f
                    .iter()
                    .zip(&want)
                    .position(|(a, b)| a != b)
                    .unwrap_or(f.len().min(want.len()));
                self.common.fail(
                    cycle,
                    format!(
                        "{at}: QP {qp} packet {} (wqes[{}] opcode {:#04x} PSN {}) differs from the expected \
                         frame ({} bytes) first at byte {b}: got {:02x?}, expected {:02x?}",
                        next[qp] - 1,
                        p.wqe,
                        p.opcode,
                        p.psn,
                        want.len(),
                        f.get(b..(b + 8).min(f.len())),
                        want.get(b..(b + 8).min(want.len())),
                    ),
                );
            }
        }
        for q in &self.vector.qps {
            let (sent, want) = (
                next[q.qp as usize],
                self.expected.packets[q.qp as usize].len(),
            );
            // After a remote-error NAK the QP may stop anywhere from there.
            let need = self.expected.optional_from[q.qp as usize].map_or(want, |k| k.min(want));
            if sent < need {
                self.common.fail(
                    cycle,
                    format!("QP {}: {sent} packets sent, {need} expected", q.qp),
                );
            }
        }
        self.frames = frames;
        self.check_cnps(cycle, &cnps);
    }

    /// The CNPs sent, per QP, are those the CE-marked packets must cause
    /// (rx_reference::cnps on the cycles they arrived).
    fn check_cnps(&mut self, cycle: u64, sent: &[u32]) {
        let v = &self.vector;
        let live = rx_reference::live_qps(v);
        let ce: Vec<(u32, u64)> = self
            .rx
            .sent
            .iter()
            .filter_map(|s| match rx_reference::classify(&s.bytes, s.fcs, &live) {
                RxEvent::Data { qp, ce: true } => Some((qp, s.last)),
                _ => None,
            })
            .collect();
        let want = rx_reference::cnps(&ce, v.cc.cnp_interval_cycles as u64);
        let per_qp = |l: &[u32]| {
            let mut m = std::collections::BTreeMap::new();
            for &q in l {
                *m.entry(q).or_insert(0u32) += 1;
            }
            m
        };
        if per_qp(sent) != per_qp(&want) {
            let msg = format!(
                "CNPs sent per QP {:?}, the CE packets call for {:?}",
                per_qp(sent),
                per_qp(&want)
            );
            self.common.fail(cycle, msg);
        }
    }

    /// No data frame of a paused priority starts: PFC frame with last beat
    /// at n and quanta Q for priority p pauses p's frame starts (first beats)
    /// from n + 4 to n + 3 + ceil(Q * 512 / 400) (docs/rx_cc.md, pfc; a later
    /// frame replaces the window from its own n + 4). A frame's priority is
    /// its VLAN PCP, 0 untagged.
    fn check_pause(&mut self, cycle: u64) {
        let mut windows: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 8];
        let live = rx_reference::live_qps(&self.vector);
        for s in &self.rx.sent {
            let RxEvent::Pfc { enable, quanta } = rx_reference::classify(&s.bytes, s.fcs, &live)
            else {
                continue;
            };
            let from = s.last + 4;
            for p in (0..8).filter(|p| enable >> p & 1 == 1) {
                let w = &mut windows[p];
                // The new frame replaces the running pause: only the last
                // window can still be open (they are pushed in time order).
                if let Some(x) = w.last_mut() {
                    x.1 = x.1.min(from - 1);
                }
                let d = (quanta[p] as u64 * 512).div_ceil(PFC_BITS_PER_CYCLE);
                if d > 0 {
                    w.push((from, from + d - 1));
                }
            }
        }
        let mut bad = Vec::new();
        for (start, f) in &self.frames {
            // CNPs and PFC frames (MAC control) are never paused.
            if is_cnp(f) || super::pfc_check::is_pfc(f) {
                continue;
            }
            let pcp = if f.len() > 15 && f[12..14] == [0x81, 0x00] {
                f[14] >> 5
            } else {
                0
            };
            // Windows are disjoint and in time order: the one that may hold
            // `start` is the last one opened at or before it.
            let w = &windows[pcp as usize];
            let k = w.partition_point(|x| x.0 <= *start);
            if let Some(w) = k.checked_sub(1).map(|k| w[k]).filter(|w| *start <= w.1) {
                bad.push(format!(
                    "a frame of priority {pcp} started at cycle {start}, inside its PFC pause {}..={}",
                    w.0, w.1
                ));
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
    }

    /// Every RX counter read back is what the frames sent call for.
    fn check_rx_counters(&mut self, cycle: u64) {
        if !self.uses_rx() {
            return;
        }
        let sent: Vec<(&[u8], bool)> = self.rx.sent.iter().map(|s| (&s.bytes[..], s.fcs)).collect();
        let want = rx_reference::counters(&self.vector, &sent);
        let mut bad = Vec::new();
        for &(name, _) in RX_COUNTERS.iter().take(14) {
            let got = self
                .counters
                .iter()
                .find(|(n, _)| n == name)
                .map(|x| x.1 as u64);
            let exp = want.get(name).copied().unwrap_or(0);
            if got != Some(exp) {
                bad.push(format!("{name} = {got:?}, the frames sent call for {exp}"));
            }
        }
        for b in bad {
            self.common.fail(cycle, b);
        }
    }

    /// End-of-run checks against the reference, then the PCIe ones.
    pub fn finish_checks(&mut self, cycle: u64) {
        for p in self.expected.problems.clone() {
            self.common.fail(cycle, p);
        }
        self.check_frames(cycle);
        self.check_cqes(cycle);
        self.check_responder(cycle);
        self.check_rx_counters(cycle);
        self.check_pause(cycle);
        self.check_pfc_frames(cycle);
        self.check_read_window(cycle);
        self.common.finish(cycle);
    }

    /// CQEs as the vector's expected results record them.
    pub fn cqe_results(&self) -> Vec<crate::vector::CqeResult> {
        self.cqe_log
            .iter()
            .map(|w| crate::vector::CqeResult {
                cq: w.cq,
                index: w.index,
                wr_id: crate::vector::Hex(w.cqe.wr_id),
                qp: w.cqe.qp,
                opcode: w.cqe.opcode,
                status: w.cqe.status,
                len: w.cqe.len,
                imm: crate::vector::Hex(w.cqe.imm as u64),
                owner: w.cqe.owner as u8,
                imm_flag: w.raw[0x16] & 1 == 1,
                src_qp: u32::from_le_bytes([w.raw[0x18], w.raw[0x19], w.raw[0x1A], 0]),
            })
            .collect()
    }

    /// Frames as the vector's expected results record them.
    pub fn frame_results(&self) -> Vec<crate::vector::FrameResult> {
        self.frames
            .iter()
            .map(|(_, f)| {
                let pfc = super::pfc_check::is_pfc(f)
                    .then(|| {
                        crate::wire::pfc::Header::new_checked(&f[..])
                            .and_then(|h| crate::wire::pfc::Repr::parse(&h))
                            .ok()
                    })
                    .flatten();
                let what = match RoceRepr::parse_bytes(f) {
                    _ if pfc.is_some() => {
                        let r = pfc.expect("checked");
                        format!("pfc enable {:#04x} times {:?}", r.enable, r.times)
                    }
                    Ok(r) => format!(
                        "dest_qp {:#x} psn {} {}",
                        r.bth.dest_qp,
                        r.bth.psn,
                        crate::wire::roce::opcode_info(r.bth.opcode).map_or("?", |i| i.name)
                    ),
                    Err(e) => format!("undecodable: {e}"),
                };
                crate::vector::FrameResult {
                    what,
                    len: f.len() as u32,
                    digest: crate::vector::Hex(crate::env::digest(f)),
                }
            })
            .collect()
    }
}
