//! `rd_resp`: the READ responder's job store. Model of `hw/rtl/rd_resp.sv`
//! (default parameters, same register names; contract: docs/responder.md,
//! "rd_resp and READ responses in tx_engine").
//!
//! Jobs come as the responder's 192-bit READ token (`resp_tok`, kind bit 0
//! = 1) on `job_*`; per QP a ring of [`DEPTH`] jobs in a RAM of QPS x DEPTH
//! rows (the token's bits 155:9: PSN, bus address, length, MSN, MTU code).
//! `job_ready` is high from the cycle after reset: a job for a QP that
//! holds max(1, `max_rd`) jobs at the start of the cycle (`max_rd`: the
//! QP's max_dest_rd_atomic, token bits 158:156, read from the token
//! offered) is refused and counted (`ev_job_full`), never back-pressured.
//! The ring's own bound, [`DEPTH`], is checked too but is never reached
//! first (`max_rd` <= 7 < DEPTH). `tx_engine` reads the head of a
//! QP (`job_rd_*`, the job on `job_*` the next cycle, held until the next
//! read) and pops it (`job_pop_*`), as the responder does with `rq_fetch`.

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::resp_tok::{ReadJob, Tok, TokBits};
use crate::trace::{Bits, Trace, TraceValue, Tracer};

/// QPs (`QPS`); QP numbers are 4 bits.
pub use crate::params::QPS;
/// Jobs kept per QP (`DEPTH`): more than the 7 outstanding READs the RESP
/// register's 3-bit max_dest_rd_atomic allows at most, so the QP's own
/// limit always binds first.
pub const DEPTH: usize = 8;

ports! {
    /// Inputs of `rd_resp` (all but `clk`/`rst`).
    pub struct RdRespIn {
        /// A READ job: the responder's token (rx_wr's `tok_*` when bit 0,
        /// the kind, is 1), bits 191:0 in bytes 0..24.
        pub job_valid: bool = 1,
        pub job_tok: Beat = 192 if job_valid,
        /// Read the head job of `job_rd_qp` (tx_engine).
        pub job_rd_valid: bool = 1,
        pub job_rd_qp: u8 = 4 if job_rd_valid,
        /// Consume the head job of `job_pop_qp` (only one that is there).
        pub job_pop_valid: bool = 1,
        pub job_pop_qp: u8 = 4 if job_pop_valid,
    }
}

ports! {
    /// Outputs of `rd_resp`, all registered.
    pub struct RdRespOut {
        /// High from the cycle after reset on (a full ring refuses).
        pub job_ready: bool = 1,
        /// Bit q: QP q has at least one job.
        pub job_avail: u16 = 16,
        /// The cycle after a head read (held otherwise): the QP had a job,
        /// and its fields (meaningful with `job_present`).
        pub job_present: bool = 1,
        pub job_psn: u32 = 24 if job_present,
        pub job_addr: u64 = 64 if job_present,
        pub job_len: u32 = 32 if job_present,
        pub job_msn: u32 = 24 if job_present,
        pub job_mtu: u8 = 3 if job_present,
        /// Pulse: a job was stored.
        pub ev_job: bool = 1,
        /// Pulse: a job was refused (its QP held max(1, max_rd) jobs).
        pub ev_job_full: bool = 1,
    }
}

/// A row of the job RAM: the token's bits 155:9.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobRow {
    pub psn: u32,
    pub addr: u64,
    pub len: u32,
    pub msn: u32,
    pub mtu: u8,
}

impl TraceValue for JobRow {
    /// `{mtu, msn, len, addr, psn}`, PSN in the low bits.
    fn put(&self, _w: u32, b: &mut Bits) {
        b.push(self.psn as u64, 24);
        b.push(self.addr, 64);
        b.push(self.len as u64, 32);
        b.push(self.msn as u64, 24);
        b.push(self.mtu as u64, 3);
    }
}

/// The token's 192 bits from a `Beat` (bytes 0..24, little-endian).
pub fn tok_bits(b: &Beat) -> TokBits {
    let w = |k: usize| u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().unwrap());
    TokBits([w(0), w(1), w(2)])
}

/// A token's bits as a `Beat` (bytes 0..24; the rest zero).
pub fn tok_beat(t: &TokBits) -> Beat {
    let mut b = Beat::default();
    for (k, w) in t.0.iter().enumerate() {
        b[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
    }
    b
}

#[derive(Debug, Clone, PartialEq)]
pub struct RdResp {
    job_ready_q: bool,
    /// Slot of the QP's head job.
    hd_q: [u8; QPS],
    /// Jobs in the QP's ring, 0..=DEPTH.
    cnt_q: [u8; QPS],
    job_avail_q: u16,
    /// The job RAM, row `{qp, slot}` (not traced: longer than Verilator dumps).
    mem_q: Vec<JobRow>,
    job_present_q: bool,
    job_row_q: JobRow,
    ev_job_q: bool,
    ev_job_full_q: bool,
}

impl Default for RdResp {
    fn default() -> Self {
        RdResp {
            job_ready_q: false,
            hd_q: [0; QPS],
            cnt_q: [0; QPS],
            job_avail_q: 0,
            mem_q: vec![JobRow::default(); QPS * DEPTH],
            job_present_q: false,
            job_row_q: JobRow::default(),
            ev_job_q: false,
            ev_job_full_q: false,
        }
    }
}

impl RdResp {
    pub fn new() -> Self {
        Self::default()
    }

    fn outputs(&self) -> RdRespOut {
        let r = self.job_row_q;
        RdRespOut {
            job_ready: self.job_ready_q,
            job_avail: self.job_avail_q,
            job_present: self.job_present_q,
            job_psn: r.psn,
            job_addr: r.addr,
            job_len: r.len,
            job_msn: r.msn,
            job_mtu: r.mtu,
            ev_job: self.ev_job_q,
            ev_job_full: self.ev_job_full_q,
        }
    }
}

impl Dut for RdResp {
    type In = RdRespIn;
    type Out = RdRespOut;
    const NAME: &'static str = "rd_resp";

    fn reset(&mut self) -> RdRespOut {
        *self = RdResp::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RdRespIn) -> RdRespOut {
        let qm = QPS - 1;
        let t = tok_bits(&i.job_tok);
        // The token's QP (bits 8:1), its low QPW bits.
        let tq = t.get(1, 8) as usize & qm;
        let take = i.job_valid && self.job_ready_q;
        // The QP's limit from the token (0 reads as 1), or a full ring
        // (never first: the limit is at most 7 < DEPTH).
        let lim = (t.get(156, 3) as usize).max(1);
        let full = self.cnt_q[tq] as usize >= lim || self.cnt_q[tq] as usize == DEPTH;
        let push = take && !full;
        let rq = i.job_rd_qp as usize & qm;
        let pq = i.job_pop_qp as usize & qm;
        let pop = i.job_pop_valid && self.cnt_q[pq] != 0;

        // The head read sees the state at the start of the cycle.
        if i.job_rd_valid {
            self.job_present_q = self.cnt_q[rq] != 0;
            self.job_row_q = self.mem_q[rq * DEPTH + self.hd_q[rq] as usize];
        }
        if push {
            let slot = (self.hd_q[tq] as usize + self.cnt_q[tq] as usize) % DEPTH;
            // Decoded with resp_tok's layout (kind 1: a READ job).
            let mut bits = t;
            bits.set(0, 1, 1);
            let Tok::Read(ReadJob {
                psn,
                addr,
                len,
                msn,
                mtu,
                ..
            }) = Tok::unpack(&bits)
            else {
                unreachable!()
            };
            self.mem_q[tq * DEPTH + slot] = JobRow {
                psn,
                addr,
                len,
                msn,
                mtu,
            };
            self.cnt_q[tq] += 1;
        }
        if pop {
            self.hd_q[pq] = ((self.hd_q[pq] as usize + 1) % DEPTH) as u8;
            self.cnt_q[pq] -= 1;
        }
        self.job_avail_q = (0..QPS).fold(0, |a, q| a | ((self.cnt_q[q] != 0) as u16) << q);
        self.ev_job_q = push;
        self.ev_job_full_q = take && full;
        self.job_ready_q = true;
        self.outputs()
    }
}

impl Trace for RdResp {
    fn trace(&self, t: &mut dyn Tracer) {
        let (sw, cw) = (DEPTH.trailing_zeros(), DEPTH.trailing_zeros() + 1);
        let qps = QPS as u32;
        t.reg("job_ready_q", 1, &self.job_ready_q);
        t.reg("hd_q", qps * sw, &self.hd_q);
        t.reg("cnt_q", qps * cw, &self.cnt_q);
        t.reg("job_avail_q", qps, &self.job_avail_q);
        t.reg("job_present_q", 1, &self.job_present_q);
        t.reg("job_row_q", 147, &self.job_row_q);
        t.reg("ev_job_q", 1, &self.ev_job_q);
        t.reg("ev_job_full_q", 1, &self.ev_job_full_q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(qp: u8, psn: u32, len: u32, max_rd: u8) -> Beat {
        tok_beat(
            &Tok::Read(ReadJob {
                qp,
                psn,
                addr: 0x1000 + psn as u64,
                len,
                msn: psn + 1,
                mtu: 3,
                max_rd,
            })
            .pack(),
        )
    }

    fn offer(m: &mut RdResp, qp: u8, psn: u32, max_rd: u8) -> RdRespOut {
        m.tick(&RdRespIn {
            job_valid: true,
            job_tok: job(qp, psn, 10 * psn, max_rd),
            ..Default::default()
        })
    }

    /// Literal cases: a job shows in job_avail the next cycle, the head
    /// read returns it, the eighth job of a QP at max_rd 7 is refused,
    /// pops go in order.
    #[test]
    fn ring_order_and_refusal() {
        let mut m = RdResp::new();
        let o = m.reset();
        assert!(!o.job_ready);
        let o = m.tick(&RdRespIn::default());
        assert!(o.job_ready && o.job_avail == 0);
        for k in 0..8u32 {
            let o = offer(&mut m, 5, k, 7);
            assert_eq!((o.ev_job, o.ev_job_full), (k < 7, k == 7), "job {k}");
            assert_eq!(o.job_avail, 1 << 5);
        }
        for k in 0..7u32 {
            let o = m.tick(&RdRespIn {
                job_rd_valid: true,
                job_rd_qp: 5,
                ..Default::default()
            });
            assert!(o.job_present);
            assert_eq!(
                (o.job_psn, o.job_addr, o.job_len, o.job_msn, o.job_mtu),
                (k, 0x1000 + k as u64, 10 * k, k + 1, 3)
            );
            let o = m.tick(&RdRespIn {
                job_pop_valid: true,
                job_pop_qp: 5,
                ..Default::default()
            });
            assert_eq!(o.job_avail, if k < 6 { 1 << 5 } else { 0 });
        }
        let o = m.tick(&RdRespIn {
            job_rd_valid: true,
            job_rd_qp: 5,
            ..Default::default()
        });
        assert!(!o.job_present);
    }

    /// The limit is the offered token's max(1, max_rd), against the jobs
    /// the QP holds at the start of the cycle; other QPs do not count.
    #[test]
    fn limit_from_the_token() {
        let mut m = RdResp::new();
        m.reset();
        m.tick(&RdRespIn::default());
        // (QP, max_rd, stored?): before its offers QP 2 holds 0, 1, 1, 2, 2,
        // 2, 3 jobs, QP 9 holds 0, 1.
        let steps = [
            (2, 0, true),
            (2, 0, false),
            (2, 2, true),
            (2, 1, false),
            (9, 1, true),
            (2, 2, false),
            (2, 3, true),
            (2, 3, false),
            (9, 0, false),
        ];
        for (k, &(qp, max_rd, stored)) in steps.iter().enumerate() {
            let o = offer(&mut m, qp, k as u32, max_rd);
            assert_eq!((o.ev_job, o.ev_job_full), (stored, !stored), "step {k}");
        }
        // A pop in the cycle of an offer does not make room for it.
        let o = m.tick(&RdRespIn {
            job_valid: true,
            job_tok: job(9, 20, 0, 1),
            job_pop_valid: true,
            job_pop_qp: 9,
            ..Default::default()
        });
        assert_eq!((o.ev_job, o.ev_job_full), (false, true));
        assert_eq!(o.job_avail, 1 << 2);
        let o = offer(&mut m, 9, 21, 1);
        assert_eq!((o.ev_job, o.ev_job_full), (true, false));
    }
}
