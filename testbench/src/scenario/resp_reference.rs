//! What a responder QP must do with the request packets it receives,
//! predicted from docs/protocol.md section 7 and the choices of
//! docs/responder.md alone (it shares no code with the model).
//!
//! One [`Responder`] per QP takes the packets in arrival order (already
//! past the ICRC and header checks; those drops are `rx_reference`'s) and
//! returns, per packet, the [`Effect`]s: host-memory writes, the
//! acknowledgements it calls for, READ responses, receive completions and
//! the QP going to ERROR. Timing is not its business: the checks compare
//! what happened, and in which order per QP.
//!
//! Acknowledgements are *required* ACKs: the responder may coalesce them
//! (docs/responder.md), so [`acks_cover`] is the check on what was sent.

use std::collections::VecDeque;

use crate::wire::roce::RoceRepr;
use crate::wire::rqe;

/// An MR as the responder sees it (the table entry selected by the key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mr {
    /// Table entry: the key selects entry `key mod mrs`.
    pub index: u32,
    pub key: u32,
    pub va: u64,
    pub len: u64,
    pub pbase: u64,
    /// ibverbs bits: 1 LOCAL_WRITE, 2 REMOTE_WRITE, 4 REMOTE_READ.
    pub access: u32,
    pub pd: u16,
    pub valid: bool,
}

pub const LOCAL_WRITE: u32 = 1;
pub const REMOTE_WRITE: u32 = 2;
pub const REMOTE_READ: u32 = 4;

/// The responder's view of a QP's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpCtx {
    pub qp: u32,
    /// The peer's QP number: the source QP of receive completions.
    pub remote_qpn: u32,
    pub uc: bool,
    /// Receives only in RTR or RTS.
    pub ready: bool,
    pub pd: u16,
    pub mtu: u32,
    /// The expected PSN the QP starts from.
    pub epsn: u32,
    /// Remote rights the QP grants (REMOTE_WRITE, REMOTE_READ bits).
    pub access: u32,
    pub min_rnr_timer: u8,
    /// MR table entries (entry = key mod `mrs`).
    pub mrs: u32,
}

/// NAK codes of the AETH (syndrome 011 xxxxx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nak {
    PsnSequence,
    InvalidRequest,
    RemoteAccess,
    RemoteOperational,
    /// RNR NAK (syndrome 001) with this timer code.
    Rnr(u8),
}

/// The AETH syndrome of an ACK: class 000 with the credit field 0x1F, "no
/// credits advertised" (docs/protocol.md section 7; the design's choice,
/// docs/responder.md).
pub const SYNDROME_ACK: u8 = 0x1F;

impl Nak {
    /// The AETH syndrome byte.
    pub fn syndrome(self) -> u8 {
        match self {
            Nak::PsnSequence => 0x60,
            Nak::InvalidRequest => 0x61,
            Nak::RemoteAccess => 0x62,
            Nak::RemoteOperational => 0x63,
            Nak::Rnr(t) => 0x20 | (t & 0x1F),
        }
    }
}

/// Why a packet was not executed and nothing was sent for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Silent {
    NotReady,
    /// Ahead of ePSN after the episode's NAK was sent.
    AheadNakSent,
    /// UC: the rest of a message whose start was lost or broken.
    UcDropping,
    /// UC: a check failed; UC has no NAK.
    UcError,
    /// The QP is in ERROR.
    QpError,
}

/// What one packet causes, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// Bytes written at a host physical address.
    Write {
        addr: u64,
        bytes: Vec<u8>,
    },
    /// An ACK must cover `psn` with this MSN (or a later one).
    Ack {
        psn: u32,
        msn: u32,
    },
    /// A NAK for `psn`; the MSN is the QP's at the time.
    Nak {
        psn: u32,
        nak: Nak,
        msn: u32,
    },
    /// READ RESPONSE packet: PSN, opcode (0x0D..=0x10), payload from host
    /// physical `addr` (`len` bytes), AETH MSN when the opcode carries one.
    ReadResponse {
        psn: u32,
        opcode: u8,
        addr: u64,
        len: u32,
        msn: u32,
    },
    /// A receive completion.
    Cqe {
        wr_id: u64,
        status: u8,
        /// 128 RECV, 129 RECV RDMA WITH IMM.
        opcode: u8,
        byte_len: u32,
        imm: Option<u32>,
        src_qp: u32,
    },
    /// The QP went to ERROR (after a NAK other than sequence or RNR).
    QpError,
    Silent(Silent),
    /// A duplicate: not executed again (its ACK follows as an Ack effect).
    Duplicate,
}

/// Completion statuses this reference produces (ibv_wc_status).
pub const ST_SUCCESS: u8 = 0;
pub const ST_LOC_LEN_ERR: u8 = 1;
pub const ST_LOC_QP_OP_ERR: u8 = 2;
pub const ST_LOC_PROT_ERR: u8 = 4;
pub const CQE_RECV: u8 = 128;
pub const CQE_RECV_RDMA_WITH_IMM: u8 = 129;

/// The operation in the low five bits of a request opcode (protocol.md
/// section 1; the same codes for RC 000 and UC 001 in the top three).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Send,
    Write,
    Read,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pos {
    First,
    Middle,
    Last,
    Only,
}

/// (operation, position, carries immediate) of a request opcode.
fn decode(opcode: u8) -> Option<(Op, Pos, bool)> {
    use Op::*;
    use Pos::*;
    Some(match opcode & 0x1F {
        0x00 => (Send, First, false),
        0x01 => (Send, Middle, false),
        0x02 => (Send, Last, false),
        0x03 => (Send, Last, true),
        0x04 => (Send, Only, false),
        0x05 => (Send, Only, true),
        0x06 => (Write, First, false),
        0x07 => (Write, Middle, false),
        0x08 => (Write, Last, false),
        0x09 => (Write, Last, true),
        0x0A => (Write, Only, false),
        0x0B => (Write, Only, true),
        0x0C if opcode & 0xE0 == 0 => (Read, Only, false),
        _ => return None,
    })
}

/// The message in progress.
#[derive(Debug, Clone)]
enum Msg {
    Idle,
    Send {
        rqe: rqe::Repr,
        placed: u64,
    },
    Write {
        /// Next remote VA to write and bytes the RETH announced still due.
        va: u64,
        left: u64,
        mr: Mr,
        total: u32,
    },
}

const PSN_MASK: u32 = 0xFF_FFFF;

fn psn_add(p: u32, n: u32) -> u32 {
    p.wrapping_add(n) & PSN_MASK
}

/// One QP's responder.
#[derive(Debug, Clone)]
pub struct Responder {
    pub ctx: QpCtx,
    pub mrs: Vec<Mr>,
    /// RECV WQEs posted and not yet consumed, in RQ order.
    pub rq: VecDeque<rqe::Repr>,
    pub epsn: u32,
    pub msn: u32,
    nak_sent: bool,
    msg: Msg,
    error: bool,
    /// UC: dropping until the next FIRST or ONLY.
    uc_dropping: bool,
}

impl Responder {
    pub fn new(ctx: QpCtx, mrs: Vec<Mr>) -> Self {
        Responder {
            epsn: ctx.epsn & PSN_MASK,
            ctx,
            mrs,
            rq: VecDeque::new(),
            msn: 0,
            nak_sent: false,
            msg: Msg::Idle,
            error: false,
            uc_dropping: false,
        }
    }

    pub fn post_recv(&mut self, r: rqe::Repr) {
        self.rq.push_back(r);
    }

    pub fn in_error(&self) -> bool {
        self.error
    }

    /// The MR `key` names, if the entry it selects holds that key and is
    /// valid.
    fn mr(&self, key: u32) -> Option<Mr> {
        let e = key % self.ctx.mrs.max(1);
        self.mrs
            .iter()
            .copied()
            .find(|m| m.index == e)
            .filter(|m| m.valid && m.key == key)
    }

    /// Host physical address of [va, va + len) inside `mr` with `right`, in
    /// the QP's PD; `None` on any violation (no wrap: 65-bit arithmetic).
    fn place(&self, mr: &Mr, va: u64, len: u64, right: u32) -> Option<u64> {
        let inside = va >= mr.va && (va as u128 + len as u128) <= (mr.va as u128 + mr.len as u128);
        (mr.pd == self.ctx.pd && mr.access & right == right && inside)
            .then(|| mr.pbase + (va - mr.va))
    }

    fn nak(&mut self, psn: u32, nak: Nak, out: &mut Vec<Effect>) {
        out.push(Effect::Nak {
            psn,
            nak,
            msn: self.msn,
        });
        if !matches!(nak, Nak::PsnSequence | Nak::Rnr(_)) {
            self.error = true;
            out.push(Effect::QpError);
        }
    }

    /// A UC violation: drop the rest of the message.
    fn uc_drop(&mut self, out: &mut Vec<Effect>) {
        self.uc_dropping = true;
        self.msg = Msg::Idle;
        out.push(Effect::Silent(Silent::UcError));
    }

    /// The effects of request packet `p` (its BTH addressed to this QP).
    pub fn packet(&mut self, p: &RoceRepr) -> Vec<Effect> {
        let mut out = Vec::new();
        if !self.ctx.ready {
            out.push(Effect::Silent(Silent::NotReady));
            return out;
        }
        if self.error {
            out.push(Effect::Silent(Silent::QpError));
            return out;
        }
        let psn = p.bth.psn & PSN_MASK;
        let Some((op, pos, imm)) = decode(p.bth.opcode) else {
            if self.ctx.uc {
                self.uc_drop(&mut out);
            } else {
                self.nak(psn, Nak::InvalidRequest, &mut out);
            }
            return out;
        };
        let delta = psn.wrapping_sub(self.epsn) & PSN_MASK;
        if self.ctx.uc {
            self.uc_packet(p, psn, delta, op, pos, imm, &mut out);
            return out;
        }
        if delta != 0 && delta < 1 << 23 {
            // Ahead: one NAK per episode, carrying ePSN.
            if self.nak_sent {
                out.push(Effect::Silent(Silent::AheadNakSent));
            } else {
                self.nak_sent = true;
                let e = self.epsn;
                self.nak(e, Nak::PsnSequence, &mut out);
            }
            return out;
        }
        if delta != 0 {
            // Behind: a duplicate. A READ is executed again from its PSN;
            // anything else is acknowledged, not executed.
            out.push(Effect::Duplicate);
            if op == Op::Read {
                self.read(p, psn, false, &mut out);
            } else {
                out.push(Effect::Ack {
                    psn: psn_add(self.epsn, PSN_MASK),
                    msn: self.msn,
                });
            }
            return out;
        }
        self.nak_sent = false;
        if op == Op::Read {
            if !matches!(self.msg, Msg::Idle) {
                self.nak(psn, Nak::InvalidRequest, &mut out);
                return out;
            }
            self.read(p, psn, true, &mut out);
            return out;
        }
        if let Err(nak) = self.order_and_length(op, pos, p.payload.len()) {
            self.nak(psn, nak, &mut out);
            return out;
        }
        let done = match self.execute(p, psn, op, pos, imm, &mut out) {
            Ok(done) => done,
            Err(Some(nak)) => {
                self.nak(psn, nak, &mut out);
                return out;
            }
            Err(None) => return out, // RNR: already answered
        };
        self.epsn = psn_add(self.epsn, 1);
        if done {
            self.msn = (self.msn + 1) & PSN_MASK;
        }
        if p.bth.ack_req || done {
            out.push(Effect::Ack { psn, msn: self.msn });
        }
        out
    }

    /// FIRST/MIDDLE/LAST of one operation, or ONLY; FIRST and MIDDLE carry
    /// exactly one MTU, LAST 1..=MTU, ONLY 0..=MTU.
    fn order_and_length(&self, op: Op, pos: Pos, len: usize) -> Result<(), Nak> {
        let in_msg = match &self.msg {
            Msg::Idle => None,
            Msg::Send { .. } => Some(Op::Send),
            Msg::Write { .. } => Some(Op::Write),
        };
        let order_ok = match pos {
            Pos::First | Pos::Only => in_msg.is_none(),
            Pos::Middle | Pos::Last => in_msg == Some(op),
        };
        let mtu = self.ctx.mtu as usize;
        let len_ok = match pos {
            Pos::First | Pos::Middle => len == mtu,
            Pos::Last => (1..=mtu).contains(&len),
            Pos::Only => len <= mtu,
        };
        if order_ok && len_ok {
            Ok(())
        } else {
            Err(Nak::InvalidRequest)
        }
    }

    /// Executes an in-order SEND or WRITE packet. `Ok(done)`: executed,
    /// `done` when it ended its message. `Err(Some(nak))`: refused with that
    /// NAK. `Err(None)`: RNR NAK already pushed, nothing executed.
    fn execute(
        &mut self,
        p: &RoceRepr,
        psn: u32,
        op: Op,
        pos: Pos,
        imm: bool,
        out: &mut Vec<Effect>,
    ) -> Result<bool, Option<Nak>> {
        let starts = matches!(pos, Pos::First | Pos::Only);
        let ends = matches!(pos, Pos::Last | Pos::Only);
        let needs_recv = (op == Op::Send && starts) || (op == Op::Write && ends && imm);
        if needs_recv && self.rq.is_empty() {
            let t = self.ctx.min_rnr_timer;
            out.push(Effect::Nak {
                psn,
                nak: Nak::Rnr(t),
                msn: self.msn,
            });
            return Err(None);
        }
        match op {
            Op::Send => {
                if starts {
                    let rqe = self.rq.pop_front().expect("checked above");
                    self.msg = Msg::Send { rqe, placed: 0 };
                }
                let Msg::Send { rqe, placed } = self.msg.clone() else {
                    unreachable!("order checked")
                };
                let total = placed + p.payload.len() as u64;
                if rqe.num_sge as usize > rqe::MAX_SGE {
                    // The receiver's own WQE is broken: its fault, not the
                    // sender's.
                    self.cqe(&rqe, ST_LOC_QP_OP_ERR, CQE_RECV, 0, None, out);
                    return Err(Some(Nak::RemoteOperational));
                }
                if total > rqe.capacity() {
                    self.cqe(&rqe, ST_LOC_LEN_ERR, CQE_RECV, 0, None, out);
                    return Err(Some(Nak::InvalidRequest));
                }
                let writes = match self.scatter(&rqe, placed, &p.payload) {
                    Some(w) => w,
                    None => {
                        self.cqe(&rqe, ST_LOC_PROT_ERR, CQE_RECV, 0, None, out);
                        return Err(Some(Nak::RemoteOperational));
                    }
                };
                out.extend(writes);
                self.msg = Msg::Send { rqe, placed: total };
                if ends {
                    self.msg = Msg::Idle;
                    let imm = if imm { p.imm } else { None };
                    self.cqe(&rqe, ST_SUCCESS, CQE_RECV, total as u32, imm, out);
                }
            }
            Op::Write => {
                if starts {
                    let Some(reth) = p.reth else {
                        return Err(Some(Nak::InvalidRequest));
                    };
                    let len = reth.dma_len as u64;
                    // A zero-length WRITE touches nothing: no rkey check.
                    let mr = if len == 0 {
                        Some(Mr {
                            index: 0,
                            key: reth.rkey,
                            va: reth.va,
                            len: 0,
                            pbase: 0,
                            access: 0,
                            pd: self.ctx.pd,
                            valid: true,
                        })
                    } else {
                        self.mr(reth.rkey)
                            .filter(|_| self.ctx.access & REMOTE_WRITE != 0)
                            .filter(|m| self.place(m, reth.va, len, REMOTE_WRITE).is_some())
                    };
                    let Some(mr) = mr else {
                        return Err(Some(Nak::RemoteAccess));
                    };
                    self.msg = Msg::Write {
                        va: reth.va,
                        left: len,
                        mr,
                        total: reth.dma_len,
                    };
                }
                let Msg::Write {
                    va,
                    left,
                    mr,
                    total,
                } = self.msg.clone()
                else {
                    unreachable!("order checked")
                };
                let n = p.payload.len() as u64;
                // More than the RETH announced, or a last packet short of it.
                if n > left || (ends && n != left) {
                    return Err(Some(Nak::InvalidRequest));
                }
                if n > 0 {
                    let addr = mr.pbase + (va - mr.va);
                    out.push(Effect::Write {
                        addr,
                        bytes: p.payload.clone(),
                    });
                }
                self.msg = Msg::Write {
                    va: va + n,
                    left: left - n,
                    mr,
                    total,
                };
                if ends {
                    self.msg = Msg::Idle;
                    if imm {
                        let rqe = self.rq.pop_front().expect("checked above");
                        self.cqe(&rqe, ST_SUCCESS, CQE_RECV_RDMA_WITH_IMM, total, p.imm, out);
                    }
                }
            }
            Op::Read => unreachable!("READ is not executed here"),
        }
        Ok(ends)
    }

    /// The writes that place `payload` at offset `at` of the RECV's scatter
    /// list; `None` when an entry's lkey does not grant LOCAL_WRITE in the
    /// QP's PD over its range.
    fn scatter(&self, r: &rqe::Repr, at: u64, payload: &[u8]) -> Option<Vec<Effect>> {
        let mut out = Vec::new();
        let (mut off, mut rest) = (at, payload);
        for s in r.used() {
            if rest.is_empty() {
                break;
            }
            let len = s.len as u64;
            if off >= len {
                off -= len;
                continue;
            }
            let mr = self.mr(s.lkey)?;
            let base = self.place(&mr, s.va, len, LOCAL_WRITE)?;
            let n = ((len - off) as usize).min(rest.len());
            out.push(Effect::Write {
                addr: base + off,
                bytes: rest[..n].to_vec(),
            });
            rest = &rest[n..];
            off = 0;
        }
        Some(out)
    }

    fn cqe(
        &self,
        r: &rqe::Repr,
        status: u8,
        opcode: u8,
        byte_len: u32,
        imm: Option<u32>,
        out: &mut Vec<Effect>,
    ) {
        out.push(Effect::Cqe {
            wr_id: r.wr_id,
            status,
            opcode,
            byte_len,
            imm,
            src_qp: self.ctx.remote_qpn,
        });
    }

    /// A READ REQUEST at `psn`: checks, then the responses, PSN `psn`
    /// onward, one per MTU (one ONLY for 0 to MTU bytes). `fresh`: the
    /// in-order request (ePSN moves past the responses, MSN counts it); a
    /// duplicate leaves both alone.
    fn read(&mut self, p: &RoceRepr, psn: u32, fresh: bool, out: &mut Vec<Effect>) {
        let Some(reth) = p.reth.filter(|_| p.payload.is_empty()) else {
            self.nak(psn, Nak::InvalidRequest, out);
            return;
        };
        let len = reth.dma_len as u64;
        // A zero-length READ reads nothing: no rkey check.
        let addr = if len == 0 {
            Some(0)
        } else {
            self.mr(reth.rkey)
                .filter(|_| self.ctx.access & REMOTE_READ != 0)
                .and_then(|m| self.place(&m, reth.va, len, REMOTE_READ))
        };
        let Some(addr) = addr else {
            self.nak(psn, Nak::RemoteAccess, out);
            return;
        };
        let mtu = self.ctx.mtu as u64;
        let n = len.div_ceil(mtu).max(1) as u32;
        if fresh {
            self.msn = (self.msn + 1) & PSN_MASK;
            self.epsn = psn_add(psn, n);
        }
        for k in 0..n {
            let opcode = match (n, k) {
                (1, _) => 0x10,
                (_, 0) => 0x0D,
                (_, k) if k + 1 == n => 0x0F,
                _ => 0x0E,
            };
            let off = k as u64 * mtu;
            out.push(Effect::ReadResponse {
                psn: psn_add(psn, k),
                opcode,
                addr: addr + off,
                len: (len - off).min(mtu) as u32,
                msn: self.msn,
            });
        }
    }

    /// UC: no ACK or NAK; a PSN gap or any violation drops the rest of the
    /// message; a FIRST or ONLY at any PSN starts a new one (ePSN follows the
    /// packets that arrive).
    #[allow(clippy::too_many_arguments)]
    fn uc_packet(
        &mut self,
        p: &RoceRepr,
        psn: u32,
        delta: u32,
        op: Op,
        pos: Pos,
        imm: bool,
        out: &mut Vec<Effect>,
    ) {
        let starts = matches!(pos, Pos::First | Pos::Only);
        if starts {
            // A new message abandons one in progress (an abandoned SEND's
            // RECV stays consumed, with no completion).
            self.uc_dropping = false;
            self.msg = Msg::Idle;
        } else if delta != 0 || self.uc_dropping {
            self.epsn = psn_add(psn, 1);
            self.uc_dropping = true;
            self.msg = Msg::Idle;
            out.push(Effect::Silent(Silent::UcDropping));
            return;
        }
        self.epsn = psn_add(psn, 1);
        if op == Op::Read || self.order_and_length(op, pos, p.payload.len()).is_err() {
            self.uc_drop(out);
            return;
        }
        let mut scratch = Vec::new();
        match self.execute(p, psn, op, pos, imm, &mut scratch) {
            Ok(_) => out.extend(scratch),
            // No RECV, or a check failed: the message is dropped; an error
            // completion of a consumed RECV still goes to the host.
            Err(_) => {
                out.extend(
                    scratch
                        .into_iter()
                        .filter(|e| matches!(e, Effect::Cqe { .. })),
                );
                self.uc_drop(out);
            }
        }
    }
}

/// Whether the ACKs sent (PSN, MSN, in order) cover the required ones of
/// one QP: every required ACK is answered by a sent ACK at or after it in
/// PSN order (coalescing), sent ACKs never go backward, and each sent ACK
/// is one the responder could send (its PSN is a required one, with that
/// MSN). Returns the first problem.
pub fn acks_cover(required: &[(u32, u32)], sent: &[(u32, u32)]) -> Result<(), String> {
    let mut k = 0; // next required ACK to cover
    for (i, &(psn, msn)) in sent.iter().enumerate() {
        let Some(j) = required[k..].iter().position(|&r| r == (psn, msn)) else {
            return Err(format!(
                "ACK {i} (PSN {psn}, MSN {msn}) answers no request still unanswered \
                 (next required: {:?})",
                required.get(k)
            ));
        };
        k += j + 1;
    }
    match required.get(k) {
        None => Ok(()),
        Some(r) => Err(format!(
            "{} required ACK(s) never answered, from PSN {} MSN {}",
            required.len() - k,
            r.0,
            r.1
        )),
    }
}

#[cfg(test)]
mod tests;
