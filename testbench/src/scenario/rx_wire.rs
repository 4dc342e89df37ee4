//! The wire into `rx_*`: the vector's RX frames and the peer's own ACKs,
//! one 64-byte beat per cycle, frames back to back when they are due
//! together, never overlapping. And the peer: with `peer.auto_ack`, a
//! responder that acknowledges RC SEND/WRITE packets in PSN order the way a
//! real one would (an ACK for every AckReq packet received in sequence, one
//! NAK "PSN sequence error" at the first gap, nothing after it since nothing
//! is retransmitted yet).

use std::collections::VecDeque;
use std::sync::Arc;

use rnic_model::ports::Beat;

use crate::vector::{rx, QpSpec, QpType, RxFrame, Vector};
use crate::wire::roce::RoceRepr;

/// One frame waiting to go out.
#[derive(Debug, Clone)]
struct Pending {
    /// Absolute cycle it may start.
    due: u64,
    /// Shared by every copy of a storm.
    bytes: Arc<[u8]>,
    fcs: bool,
    /// The vector's `rx` index, or None for a peer ACK/NAK.
    spec: Option<usize>,
}

/// One frame that went out on `rx_*`.
#[derive(Debug, Clone)]
pub struct RxSent {
    pub spec: Option<usize>,
    pub first: u64,
    /// Cycle of its last beat.
    pub last: u64,
    pub bytes: Arc<[u8]>,
    pub fcs: bool,
}

/// The beat driven in one cycle.
#[derive(Debug, Clone, Copy, Default)]
pub struct RxBeat {
    pub valid: bool,
    pub data: Beat,
    pub keep: u64,
    pub last: bool,
    pub user: bool,
}

/// Two queues, each in due order, so that every step costs O(1) whatever
/// the number of frames: the vector's frames (all known at the start) and
/// the peer's answers (due a fixed delay after the frames they answer, so
/// pushed in due order). At equal due times the vector's frame goes first.
pub struct RxWire {
    spec_queue: VecDeque<Pending>,
    peer_queue: VecDeque<Pending>,
    cur: Option<(Pending, usize, u64)>,
    pub sent: Vec<RxSent>,
    /// Vector frames not yet handed over (they are queued at config end),
    /// sorted by `at`.
    spec_frames: Vec<Pending>,
    peer: Option<Peer>,
}

struct Peer {
    delay: u64,
    /// Per QP index: next expected PSN, whether the NAK for a gap went out.
    epsn: Vec<Option<u32>>,
    nak_sent: Vec<bool>,
    qps: Vec<QpSpec>,
    cc: rx::CcSpec,
}

impl RxWire {
    pub fn new(v: &Vector) -> Result<Self, String> {
        let mut spec_frames = Vec::new();
        for (k, r) in v.rx.iter().enumerate() {
            let f =
                rx::build_frame(&r.frame, &v.qps, &v.cc).map_err(|e| format!("rx[{k}]: {e}"))?;
            let (f, fcs) = rx::apply_fault(f, r.fault).map_err(|e| format!("rx[{k}]: {e}"))?;
            let bytes: Arc<[u8]> = f.into();
            for n in 0..r.count as u64 {
                spec_frames.push(Pending {
                    due: r.at + n * r.every,
                    bytes: bytes.clone(),
                    fcs,
                    spec: Some(k),
                });
            }
        }
        // Stable: frames due together go in the vector's order.
        spec_frames.sort_by_key(|p| p.due);
        let peer = v.peer.auto_ack.then(|| {
            let n = crate::vector::QPS as usize;
            let mut epsn = vec![None; n];
            for q in &v.qps {
                if q.kind == QpType::Rc {
                    epsn[q.qp as usize] = Some(q.psn);
                }
            }
            Peer {
                delay: v.peer.ack_delay,
                epsn,
                nak_sent: vec![false; n],
                qps: v.qps.clone(),
                cc: v.cc.clone(),
            }
        });
        Ok(RxWire {
            spec_queue: VecDeque::new(),
            peer_queue: VecDeque::new(),
            cur: None,
            sent: Vec::new(),
            spec_frames,
            peer,
        })
    }

    /// Configuration ended at `base`: the vector's frames become due
    /// relative to it.
    pub fn start(&mut self, base: u64) {
        self.spec_queue = std::mem::take(&mut self.spec_frames)
            .into_iter()
            .map(|p| Pending {
                due: base + p.due,
                ..p
            })
            .collect();
    }

    /// Nothing left to send (and nothing on the wire).
    pub fn idle(&self) -> bool {
        self.cur.is_none()
            && self.spec_queue.is_empty()
            && self.peer_queue.is_empty()
            && self.spec_frames.is_empty()
    }

    /// The next frame due by `cycle`, if any.
    fn pop_due(&mut self, cycle: u64) -> Option<Pending> {
        let s = self.spec_queue.front().map(|p| p.due);
        let p = self.peer_queue.front().map(|p| p.due);
        match (s, p) {
            (Some(s), p) if s <= cycle && p.is_none_or(|p| s <= p) => self.spec_queue.pop_front(),
            (_, Some(p)) if p <= cycle => self.peer_queue.pop_front(),
            _ => None,
        }
    }

    /// The beat of cycle `cycle`.
    pub fn beat(&mut self, cycle: u64) -> RxBeat {
        if self.cur.is_none() {
            if let Some(p) = self.pop_due(cycle) {
                self.cur = Some((p, 0, cycle));
            }
        }
        let Some((p, pos, _)) = &mut self.cur else {
            return RxBeat::default();
        };
        let n = (p.bytes.len() - *pos).min(64);
        let mut data = [0u8; 64];
        data[..n].copy_from_slice(&p.bytes[*pos..*pos + n]);
        *pos += n;
        let last = *pos == p.bytes.len();
        let b = RxBeat {
            valid: true,
            data: Beat(data),
            keep: if n == 64 { u64::MAX } else { (1u64 << n) - 1 },
            last,
            user: last && p.fcs,
        };
        if last {
            let (p, _, first) = self.cur.take().expect("a frame on the wire");
            self.sent.push(RxSent {
                spec: p.spec,
                first,
                last: cycle,
                bytes: p.bytes,
                fcs: p.fcs,
            });
        }
        b
    }

    /// A frame from the other NIC of a pair (scenario::pair), due at
    /// `due`: it goes out after the frames already queued. The link pushes
    /// frames in due order.
    pub fn push_link(&mut self, due: u64, bytes: Arc<[u8]>) {
        debug_assert!(self.peer.is_none(), "a pair's NIC has no scripted peer");
        self.peer_queue.push_back(Pending {
            due,
            bytes,
            fcs: false,
            spec: None,
        });
    }

    /// A frame left on `tx_*` at `cycle`: the peer answers it.
    /// `r` is the frame decoded (None when it is not a well-formed RoCE frame).
    pub fn on_tx_frame(&mut self, cycle: u64, r: Option<&RoceRepr>) {
        let Some(peer) = &mut self.peer else { return };
        let Some(r) = r else { return };
        let Some(q) = peer.qps.iter().find(|q| q.remote_qpn == r.bth.dest_qp) else {
            return;
        };
        let qp = q.qp as usize;
        let Some(e) = peer.epsn[qp] else { return };
        let op = r.bth.opcode;
        if op > 0x0C {
            return; // not a request (the peer only answers SEND/WRITE/READ)
        }
        let psn = r.bth.psn;
        let ahead = psn.wrapping_sub(e) & 0xFF_FFFF;
        let answer = |frame: RxFrame| Pending {
            due: cycle + peer.delay,
            bytes: rx::build_frame(&frame, &peer.qps, &peer.cc)
                .expect("a known QP")
                .into(),
            fcs: false,
            spec: None,
        };
        if ahead != 0 {
            if ahead < 1 << 23 && !peer.nak_sent[qp] {
                let nak = answer(RxFrame::Nak {
                    qp: q.qp,
                    psn: e,
                    code: 0,
                    rnr: false,
                });
                peer.nak_sent[qp] = true;
                self.peer_queue.push_back(nak);
            }
            return;
        }
        // A READ REQUEST takes its whole PSN span; its responses are not
        // modelled (no READ response path yet), so it gets no ACK.
        let span = match r.reth {
            Some(reth) if op == 0x0C => {
                let mtu = q.mtu;
                reth.dma_len.div_ceil(mtu).max(1)
            }
            _ => 1,
        };
        let ack = (op != 0x0C && r.bth.ack_req).then(|| {
            answer(RxFrame::Ack {
                qp: q.qp,
                psn,
                msn: 0,
            })
        });
        peer.epsn[qp] = Some((e + span) & 0xFF_FFFF);
        if let Some(a) = ack {
            self.peer_queue.push_back(a);
        }
    }
}
