//! `cq_writer`: completion-queue write-back. Model of `hw/rtl/cq_writer.sv`.
//!
//! Completions from `tx_engine` queue in order (`CPL_DEPTH` entries). The
//! head leaves the queue when it needs no frame (`cpl_wait_frame = 0`) or a
//! `frame_done` has been counted for it: frame_done pulses go into their own
//! FIFO (their error bit only) because a frame may leave before its
//! completion reaches the head. The CQ's base and size come from the csr CQ
//! port (registered lookup: `cq_idx` visible at n -> `cq_base` at n+1), so a
//! popped completion waits two cycles for them, then goes out as one
//! 32-byte `dma_wr` request (request and one data beat, each held until
//! taken). `wr_done` pulses come back in request order; a small FIFO of CQ
//! ids of the CQEs sent names the CQ of each `irq`.
//!
//! Timing: head poppable at n -> `cq_idx` visible at n+1, `cq_base` at n+2,
//! `wr_req_valid`/`wr_data_valid` visible at n+3; both taken at m -> next
//! pop possible at m+1. `wr_done_valid` at n -> `irq_valid`/`ev_cqe` at n+1.

use crate::dut::Dut;
use crate::params::{CQW, QPW};
use crate::ports;
use crate::ports::Beat;
use crate::sync_fifo::SyncFifo;
use crate::trace::{Bits, Trace, TraceValue, Tracer};

/// Completion queues.
pub use crate::params::CQS;
/// QPs (the width of `cpl_qp`).
pub use crate::params::QPS;
/// Completions the queue holds.
pub const CPL_DEPTH: usize = 16;
/// frame_done results held: more than the frames whose completion can be
/// outstanding (tx_engine's one, ack_tracker's UC FIFO and two stages,
/// cq_arb's two, this queue: 29 at the defaults; docs/tx_datapath.md,
/// "The frame_done rule with cq_arb").
pub const FD_DEPTH: usize = 2 * CPL_DEPTH;
/// CQ ids of CQEs sent to dma_wr and not yet reported by `wr_done`.
pub const IRQ_DEPTH: usize = 4;

/// CQE status values.
pub use crate::params::cqe_status as status;

ports! {
    /// Inputs of `cq_writer` (all but `clk`/`rst`).
    pub struct CqWriterIn {
        pub cpl_valid: bool = 1,
        /// The completion waits for a frame_done (UC success).
        pub cpl_wait_frame: bool = 1 if cpl_valid,
        pub cpl_wr_id: u64 = 64 if cpl_valid,
        pub cpl_status: u8 = 8 if cpl_valid,
        pub cpl_opcode: u8 = 8 if cpl_valid,
        pub cpl_len: u32 = 32 if cpl_valid,
        pub cpl_imm: u32 = 32 if cpl_valid,
        /// CQE byte 0x16 bit 0: the message carried an immediate (responder).
        pub cpl_imm_flag: bool = 1 if cpl_valid,
        /// CQE bytes 0x18..0x1A: the sender's QP (responder; 0 requester).
        pub cpl_src_qp: u32 = 24 if cpl_valid,
        pub cpl_qp: u8 = 4 if cpl_valid,
        pub cpl_cq: u8 = 2 if cpl_valid,
        /// A frame with `desc_cpl` left (or was dropped: `frame_done_err`).
        pub frame_done_valid: bool = 1,
        pub frame_done_err: bool = 1 if frame_done_valid,
        /// csr CQ port: the entry of the `cq_idx` of the previous cycle.
        pub cq_base: u64 = 64,
        pub cq_log: u8 = 5,
        pub wr_req_ready: bool = 1,
        pub wr_data_ready: bool = 1,
        pub wr_done_valid: bool = 1,
    }
}

ports! {
    /// Outputs of `cq_writer`, all registered.
    pub struct CqWriterOut {
        pub cpl_ready: bool = 1,
        pub cq_idx: u8 = 2,
        pub wr_req_valid: bool = 1,
        pub wr_req_addr: u64 = 64 if wr_req_valid,
        /// Always 32.
        pub wr_req_len: u32 = 17 if wr_req_valid,
        pub wr_data_valid: bool = 1,
        /// The CQE in bytes 0..32, zeros above.
        pub wr_data: Beat = 512 if wr_data_valid,
        pub irq_valid: bool = 1,
        pub irq_cq: u8 = 2 if irq_valid,
        pub ev_cqe: bool = 1,
    }
}

/// One queued completion (the `cpl_*` fields).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cpl {
    pub wait_frame: bool,
    pub wr_id: u64,
    pub status: u8,
    pub opcode: u8,
    pub len: u32,
    pub imm: u32,
    pub imm_flag: bool,
    pub src_qp: u32,
    pub qp: u8,
    pub cq: u8,
}

/// The 32 CQE bytes of the contract's layout.
pub fn cqe_bytes(c: &Cpl, owner: bool) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[0..8].copy_from_slice(&c.wr_id.to_le_bytes());
    b[8..12].copy_from_slice(&c.len.to_le_bytes());
    b[12..16].copy_from_slice(&c.imm.to_le_bytes());
    b[16..20].copy_from_slice(&(c.qp as u32).to_le_bytes());
    b[0x14] = c.opcode;
    b[0x15] = c.status;
    b[0x16] = c.imm_flag as u8;
    b[0x17] = owner as u8;
    b[0x18..0x1B].copy_from_slice(&c.src_qp.to_le_bytes()[..3]);
    b
}

/// Ring slot and owner bit of producer index `pi` in a ring of 2^`cq_log`
/// entries. The index is 16 bits: for `cq_log >= 16` the slot is `pi`
/// itself and the owner stays 1 (bit `cq_log` of a 16-bit index is 0).
pub fn slot_owner(pi: u16, cq_log: u8) -> (u64, bool) {
    let log = cq_log & 31;
    if log >= 16 {
        (pi as u64, true)
    } else {
        let mask = (1u32 << log) - 1;
        ((pi as u32 & mask) as u64, (pi >> log) & 1 == 0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Idle,
    /// `cq_idx` is visible; csr registers the CQ entry.
    Look,
    /// `cq_base`/`cq_log` are visible: build the CQE.
    Use,
    /// Request and data beat out, waiting to be taken.
    Send,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CqWriter {
    cpl_fifo: SyncFifo<Cpl>,
    /// frame_done results (their error bit), in frame order.
    fd_fifo: SyncFifo<bool>,
    irq_fifo: SyncFifo<u8>,
    state_q: State,
    /// The completion being written (status already final).
    h_q: Cpl,
    cq_idx_q: u8,
    pi_q: [u16; CQS],
    wr_req_valid_q: bool,
    wr_req_addr_q: u64,
    wr_data_valid_q: bool,
    wr_data_q: Beat,
    irq_valid_q: bool,
    irq_cq_q: u8,
    ev_cqe_q: bool,
}

impl Default for CqWriter {
    fn default() -> Self {
        CqWriter {
            cpl_fifo: SyncFifo::new(CPL_DEPTH),
            fd_fifo: SyncFifo::new(FD_DEPTH),
            irq_fifo: SyncFifo::new(IRQ_DEPTH),
            state_q: State::Idle,
            h_q: Cpl::default(),
            cq_idx_q: 0,
            pi_q: [0; CQS],
            wr_req_valid_q: false,
            wr_req_addr_q: 0,
            wr_data_valid_q: false,
            wr_data_q: Beat::default(),
            irq_valid_q: false,
            irq_cq_q: 0,
            ev_cqe_q: false,
        }
    }
}

impl CqWriter {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> CqWriterOut {
        CqWriterOut {
            cpl_ready: self.cpl_fifo.in_ready(),
            cq_idx: self.cq_idx_q,
            wr_req_valid: self.wr_req_valid_q,
            wr_req_addr: self.wr_req_addr_q,
            wr_req_len: 32,
            wr_data_valid: self.wr_data_valid_q,
            wr_data: self.wr_data_q,
            irq_valid: self.irq_valid_q,
            irq_cq: self.irq_cq_q,
            ev_cqe: self.ev_cqe_q,
        }
    }

    /// Producer index of CQ `cq` (CQEs written so far, mod 2^16).
    pub fn pi(&self, cq: usize) -> u16 {
        self.pi_q[cq]
    }
}

impl Dut for CqWriter {
    type In = CqWriterIn;
    type Out = CqWriterOut;
    const NAME: &'static str = "cq_writer";

    fn reset(&mut self) -> CqWriterOut {
        *self = CqWriter::default();
        self.outputs()
    }

    fn tick(&mut self, i: &CqWriterIn) -> CqWriterOut {
        let head = self.cpl_fifo.out_data();
        // ---- Head: pop when its frame (if any) is counted and there is
        // room to remember its CQ for the irq. ----
        let pop = self.state_q == State::Idle
            && self.cpl_fifo.out_valid()
            && (!head.wait_frame || self.fd_fifo.out_valid())
            && self.irq_fifo.in_ready();
        let fd_pop = pop && head.wait_frame;
        let fd_err = self.fd_fifo.out_data();

        // ---- irq: one per wr_done, naming the oldest CQ sent. ----
        let irq_pop = i.wr_done_valid && self.irq_fifo.out_valid();
        let irq_head = self.irq_fifo.out_data();
        let mut irq_push = None;

        match self.state_q {
            State::Idle => {
                if pop {
                    let mut h = head;
                    // A dropped frame (its payload read failed) fails the
                    // completion that waited for it; an error CQE has no length.
                    if head.wait_frame && fd_err && head.status == status::SUCCESS {
                        h.status = status::GENERAL_ERR;
                        h.len = 0;
                    }
                    self.h_q = h;
                    self.cq_idx_q = head.cq & (CQS as u8 - 1);
                    self.state_q = State::Look;
                }
            }
            State::Look => self.state_q = State::Use,
            State::Use => {
                let cq = self.cq_idx_q as usize;
                let pi = self.pi_q[cq];
                let (slot, owner) = slot_owner(pi, i.cq_log);
                self.wr_req_addr_q = i.cq_base.wrapping_add(slot << 5);
                let mut beat = Beat::default();
                beat[..32].copy_from_slice(&cqe_bytes(&self.h_q, owner));
                self.wr_data_q = beat;
                self.wr_req_valid_q = true;
                self.wr_data_valid_q = true;
                self.pi_q[cq] = pi.wrapping_add(1);
                irq_push = Some(self.cq_idx_q);
                self.state_q = State::Send;
            }
            State::Send => {
                let req_left = self.wr_req_valid_q && !i.wr_req_ready;
                let data_left = self.wr_data_valid_q && !i.wr_data_ready;
                self.wr_req_valid_q = req_left;
                self.wr_data_valid_q = data_left;
                if !req_left && !data_left {
                    self.state_q = State::Idle;
                }
            }
        }

        self.irq_valid_q = irq_pop;
        self.irq_cq_q = irq_head;
        self.ev_cqe_q = irq_pop;

        self.cpl_fifo.tick(
            i.cpl_valid.then_some(Cpl {
                wait_frame: i.cpl_wait_frame,
                wr_id: i.cpl_wr_id,
                status: i.cpl_status,
                opcode: i.cpl_opcode,
                len: i.cpl_len,
                imm: i.cpl_imm,
                imm_flag: i.cpl_imm_flag,
                src_qp: i.cpl_src_qp & 0xFF_FFFF,
                qp: i.cpl_qp & (QPS as u8 - 1),
                cq: i.cpl_cq & (CQS as u8 - 1),
            }),
            pop,
        );
        self.fd_fifo
            .tick(i.frame_done_valid.then_some(i.frame_done_err), fd_pop);
        self.irq_fifo.tick(irq_push, irq_pop);
        self.outputs()
    }
}

/// A completion as `u_cpl_fifo` holds it: `{wait_frame, wr_id, status,
/// opcode, len, imm, imm_flag, src_qp, qp, cq}`.
impl TraceValue for Cpl {
    fn put(&self, _: u32, b: &mut Bits) {
        b.push(self.cq as u64, CQW);
        b.push(self.qp as u64, QPW);
        b.push(self.src_qp as u64, 24);
        b.push(self.imm_flag as u64, 1);
        b.push(self.imm as u64, 32);
        b.push(self.len as u64, 32);
        b.push(self.opcode as u64, 8);
        b.push(self.status as u64, 8);
        b.push(self.wr_id, 64);
        b.push(self.wait_frame as u64, 1);
    }
}

impl Trace for CqWriter {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("state_q", 2, &(self.state_q as u8));
        t.reg("cq_idx_q", 2, &self.cq_idx_q);
        t.each("pi_q", 16, &self.pi_q);
        t.reg("wr_req_valid_q", 1, &self.wr_req_valid_q);
        t.reg("wr_req_addr_q", 64, &self.wr_req_addr_q);
        t.reg("wr_data_valid_q", 1, &self.wr_data_valid_q);
        t.reg("wr_data_q", 256, &self.wr_data_q);
        t.reg("irq_valid_q", 1, &self.irq_valid_q);
        t.reg("irq_cq_q", 2, &self.irq_cq_q);
        t.reg("ev_cqe_q", 1, &self.ev_cqe_q);
        t.push("u_cpl_fifo");
        self.cpl_fifo.trace_all(t, 145 + 1 + 24 + QPW + CQW);
        t.pop();
        t.push("u_fd_fifo");
        self.fd_fifo.trace_all(t, 1);
        t.pop();
        t.push("u_irq_fifo");
        self.irq_fifo.trace_all(t, 2);
        t.pop();
        let h = &self.h_q;
        t.reg("h_wr_id_q", 64, &h.wr_id);
        t.reg("h_status_q", 8, &h.status);
        t.reg("h_opcode_q", 8, &h.opcode);
        t.reg("h_len_q", 32, &h.len);
        t.reg("h_imm_q", 32, &h.imm);
        t.reg("h_qp_q", QPW, &h.qp);
        t.reg("h_imm_flag_q", 1, &h.imm_flag);
        t.reg("h_src_qp_q", 24, &h.src_qp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the model as csr and dma_wr would (CQ table lookup with one
    /// cycle of latency, requests always taken, wr_done 2 cycles after) and
    /// returns every (addr, CQE bytes) written and the irq CQs, in order.
    fn run(
        cpls: &[Cpl],
        frames: &[(u64, bool)],
        cq_table: &[(u64, u8); CQS],
    ) -> (Vec<(u64, [u8; 32])>, Vec<u8>) {
        let mut m = CqWriter::new();
        let mut out = m.reset();
        let mut next = 0;
        let mut prev_idx = 0u8;
        let mut written = Vec::new();
        let mut irqs = Vec::new();
        let mut done_at: Vec<u64> = Vec::new();
        for cycle in 0..2000u64 {
            let mut i = CqWriterIn {
                wr_req_ready: true,
                wr_data_ready: true,
                ..Default::default()
            };
            if let Some(c) = cpls.get(next) {
                i.cpl_valid = true;
                i.cpl_wait_frame = c.wait_frame;
                i.cpl_wr_id = c.wr_id;
                i.cpl_status = c.status;
                i.cpl_opcode = c.opcode;
                i.cpl_len = c.len;
                i.cpl_imm = c.imm;
                i.cpl_imm_flag = c.imm_flag;
                i.cpl_src_qp = c.src_qp;
                i.cpl_qp = c.qp;
                i.cpl_cq = c.cq;
                if out.cpl_ready {
                    next += 1;
                }
            }
            if let Some(&(_, err)) = frames.iter().find(|f| f.0 == cycle) {
                i.frame_done_valid = true;
                i.frame_done_err = err;
            }
            (i.cq_base, i.cq_log) = cq_table[prev_idx as usize];
            prev_idx = out.cq_idx;
            if out.wr_req_valid {
                assert!(out.wr_data_valid, "request and data go out together");
                assert_eq!(out.wr_req_len, 32);
                assert!(out.wr_data[32..].iter().all(|&b| b == 0));
                written.push((out.wr_req_addr, out.wr_data[..32].try_into().unwrap()));
                done_at.push(cycle + 2);
            }
            i.wr_done_valid = done_at.contains(&cycle);
            if out.irq_valid {
                assert!(out.ev_cqe);
                irqs.push(out.irq_cq);
            }
            out = m.tick(&i);
        }
        (written, irqs)
    }

    fn cpl(wr_id: u64, status: u8, wait: bool, cq: u8) -> Cpl {
        Cpl {
            wait_frame: wait,
            wr_id,
            status,
            opcode: 3,
            len: 0x1234,
            imm: 0xA1B2_C3D4,
            imm_flag: false,
            src_qp: 0,
            qp: 9,
            cq,
        }
    }

    #[test]
    fn cqe_layout_is_the_contracts() {
        // A responder's RECV completion: immediate flag and source QP set.
        let c = Cpl {
            imm_flag: true,
            src_qp: 0xAB_CDEF,
            ..cpl(0x0102_0304_0506_0708, status::SUCCESS, false, 2)
        };
        let (w, irqs) = run(&[c], &[], &[(0, 0), (0, 0), (0x1_0000_0000, 4), (0, 0)]);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].0, 0x1_0000_0000);
        #[rustfmt::skip]
        let expect: [u8; 32] = [
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // wr_id
            0x34, 0x12, 0x00, 0x00, // length
            0xD4, 0xC3, 0xB2, 0xA1, // immediate
            0x09, 0x00, 0x00, 0x00, // local QP
            0x03, 0x00, 0x01, 0x01, // opcode, status, immediate flag, owner
            0xEF, 0xCD, 0xAB, // source QP
            0, 0, 0, 0, 0, // reserved
        ];
        assert_eq!(w[0].1, expect);
        assert_eq!(irqs, vec![2]);
    }

    #[test]
    fn owner_flips_on_every_wrap_per_cq() {
        // CQ 0 has 2 entries at 0x1000; CQ 1 has 4 at 0x2000.
        let cpls: Vec<Cpl> = [0, 1, 0, 0, 1, 0, 0]
            .iter()
            .enumerate()
            .map(|(k, &cq)| cpl(k as u64, status::WR_FLUSH_ERR, false, cq))
            .collect();
        let (w, irqs) = run(&cpls, &[], &[(0x1000, 1), (0x2000, 2), (0, 0), (0, 0)]);
        let got: Vec<(u64, u8)> = w.iter().map(|(a, b)| (*a, b[0x17])).collect();
        assert_eq!(
            got,
            vec![
                (0x1000, 1),
                (0x2000, 1),
                (0x1020, 1),
                (0x1000, 0), // CQ 0, second pass
                (0x2020, 1),
                (0x1020, 0),
                (0x1000, 1), // third pass
            ]
        );
        assert_eq!(irqs, vec![0, 1, 0, 0, 1, 0, 0]);
    }

    #[test]
    fn waits_for_counted_frames_and_fails_on_a_dropped_one() {
        // Two frames finish before any completion arrives (cycles 1, 2), the
        // second one dropped; the flush in between needs no frame.
        let cpls = [
            cpl(1, status::SUCCESS, true, 0),
            cpl(2, status::WR_FLUSH_ERR, false, 0),
            cpl(3, status::SUCCESS, true, 0),
            cpl(4, status::SUCCESS, true, 0),
        ];
        let (w, _) = run(
            &cpls,
            &[(1, false), (2, true), (300, false)],
            &[(0x40, 3); 4],
        );
        let st: Vec<(u8, u8, u32)> = w
            .iter()
            .map(|(_, b)| {
                (
                    b[0],
                    b[0x15],
                    u32::from_le_bytes(b[8..12].try_into().unwrap()),
                )
            })
            .collect();
        assert_eq!(
            st,
            vec![(1, 0, 0x1234), (2, 5, 0x1234), (3, 21, 0), (4, 0, 0x1234)]
        );
    }

    #[test]
    fn a_completion_waiting_for_its_frame_blocks_the_ones_behind() {
        let cpls = [
            cpl(1, status::SUCCESS, true, 0),
            cpl(2, status::LOC_PROT_ERR, false, 0),
        ];
        let (w, _) = run(&cpls, &[(500, false)], &[(0, 4); 4]);
        assert_eq!(w.len(), 2);
        // Without the frame nothing is written.
        let (w, _) = run(&cpls, &[], &[(0, 4); 4]);
        assert!(w.is_empty());
    }
}
