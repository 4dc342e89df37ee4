//! `rq_fetch`: RQ doorbells, per-QP producer and fetch indices, batched
//! reads of RECV WQEs (128 bytes, two 512-bit beats each) and up to
//! [`SLOTS`] fetched WQEs per QP. Model of `hw/rtl/rq_fetch.sv` (default
//! parameters, same register names; contract: docs/responder.md,
//! "rq_fetch").
//!
//! The per-QP doorbell row (producer index, ring base, log size) and fetch
//! index are tables with a registered read (`db_mem_q`/`db_rd_q`,
//! `fidx_mem_q`/`fidx_rd_q`); the rest per QP is bitmap-sized (live, pend,
//! busy, drop, slot head and count). A pick at n (round robin, `u_rr`)
//! reads the rows; at n+1 (stage 1) the read of
//! `n = min(pi - fidx, free slots, BATCH, entries before the ring end)`
//! WQEs is issued. Beats come back in order; a WQE is written into the WQE
//! RAM at its second beat, and counted at the read's last beat.

use crate::dut::Dut;
use crate::ports;
use crate::ports::{Beat, PortValue};
use crate::rr_pick::RrPick;
use crate::sync_fifo::SyncFifo;
use crate::trace::{Bits, Trace, TraceValue, Tracer};

/// QPs (`QPS`); QP numbers are 4 bits.
pub use crate::params::QPS;
/// Fetched WQEs kept per QP (`SLOTS`).
pub const SLOTS: usize = 2;
/// At most this many WQEs per read (`BATCH`).
pub const BATCH: usize = 2;
/// Reads in flight at once, all QPs together (`INFL`, the in-flight FIFO).
pub const INFL: usize = 4;
/// Bytes of a RECV WQE.
pub const RQE_BYTES: usize = 128;
/// QP state RESET (`db_state`): the only one that stops fetching.
pub use crate::params::qp_state::RESET as ST_RESET;

/// A RECV WQE on a 1024-bit port: byte `k` at bits `8k + 7 .. 8k`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rqe(pub [u8; RQE_BYTES]);

impl Default for Rqe {
    fn default() -> Self {
        Rqe([0; RQE_BYTES])
    }
}

impl core::fmt::Debug for Rqe {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for b in self.0.iter().rev() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl Rqe {
    /// The WQE of two beats: `lo` is bytes 0..64, `hi` bytes 64..128.
    pub fn from_beats(lo: &Beat, hi: &Beat) -> Rqe {
        let mut r = [0u8; RQE_BYTES];
        r[..64].copy_from_slice(&lo.0);
        r[64..].copy_from_slice(&hi.0);
        Rqe(r)
    }
}

impl PortValue for Rqe {
    const BITS: u32 = 1024;
    fn to_words(&self, out: &mut [u64]) {
        for (w, chunk) in out.iter_mut().zip(self.0.chunks_exact(8)) {
            *w = u64::from_le_bytes(chunk.try_into().unwrap());
        }
    }
    fn from_words(words: &[u64]) -> Self {
        let mut b = [0u8; RQE_BYTES];
        for (chunk, w) in b.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        Rqe(b)
    }
}

ports! {
    /// Inputs of `rq_fetch` (all but `clk`/`rst`).
    pub struct RqFetchIn {
        /// Pulse: an RQ doorbell with the QP's state and RQ ring as csr has them.
        pub db_valid: bool = 1,
        pub db_qp: u8 = 4 if db_valid,
        pub db_pi: u16 = 16 if db_valid,
        /// 0 RESET, 4 INIT, 3 RTR, 1 RTS, 2 ERROR.
        pub db_state: u8 = 3 if db_valid,
        /// 128-byte aligned.
        pub db_base: u64 = 64 if db_valid,
        pub db_log: u8 = 5 if db_valid,
        pub rd_req_ready: bool = 1,
        /// WQE beats from `dma_rd`, in request order, two per WQE.
        pub rd_data_valid: bool = 1,
        pub rd_data: Beat = 512 if rd_data_valid,
        pub rd_data_last: bool = 1 if rd_data_valid,
        /// Non-zero on any beat of a read: the read failed.
        pub rd_data_status: u8 = 3 if rd_data_valid,
        /// Read the head WQE of `rqe_rd_qp`.
        pub rqe_rd_valid: bool = 1,
        pub rqe_rd_qp: u8 = 4 if rqe_rd_valid,
        /// Consume the head WQE of `rqe_pop_qp` (only one that is there).
        pub rqe_pop_valid: bool = 1,
        pub rqe_pop_qp: u8 = 4 if rqe_pop_valid,
    }
}

ports! {
    /// Outputs of `rq_fetch`, all registered.
    pub struct RqFetchOut {
        pub rd_req_valid: bool = 1,
        pub rd_req_addr: u64 = 64 if rd_req_valid,
        /// 128 * n, n = 1 ..= BATCH.
        pub rd_req_len: u32 = 17 if rd_req_valid,
        /// High from the cycle after reset on.
        pub rd_data_ready: bool = 1,
        /// Bit q: QP q has a fetched WQE.
        pub rqe_avail: u16 = 16,
        /// The cycle after a head read (held otherwise): the QP had a WQE.
        pub rqe_present: bool = 1,
        /// Its 128 bytes (meaningful with `rqe_present`; held otherwise).
        pub rqe_data: Rqe = 1024 if rqe_present,
        /// Pulse: a read of `err_qp` failed, its WQEs are dropped.
        pub err_valid: bool = 1,
        pub err_qp: u8 = 4 if err_valid,
        /// WQEs made available this cycle.
        pub ev_rqe_n: u8 = 4,
    }
}

/// A doorbell row: producer index, ring base bits 63:7, log2 ring size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DbRow {
    pub pi: u16,
    pub base: u64,
    pub log: u8,
}

const BASE_MASK: u64 = (1 << 57) - 1;

/// The read that stage 1 makes of a QP whose rows read `row`, `fidx`, with
/// `cnt` slots full: `(address, WQE count)`, the count
/// `min(pi - fidx, free slots, BATCH, entries before the ring end)` (0:
/// nothing to fetch). A log above 16 is taken as 16.
pub fn read_of(row: DbRow, fidx: u16, cnt: u8) -> (u64, u32) {
    let lg = row.log.min(16) as u32;
    let size = 1u32 << lg;
    let off = fidx as u32 & (size - 1);
    let left = size - off;
    let diff = row.pi.wrapping_sub(fidx) as u32;
    let free = SLOTS as u32 - cnt as u32;
    let n = diff.min(free).min(BATCH as u32).min(left);
    ((row.base.wrapping_add(off as u64) & BASE_MASK) << 7, n)
}

/// The prefetcher. Field names are the RTL's registers (flattened per-QP
/// vectors there are arrays here).
#[derive(Debug, Clone, PartialEq)]
pub struct RqFetch {
    /// State is not RESET.
    live_q: [bool; QPS],
    /// A doorbell may have brought WQEs to fetch.
    pend_q: [bool; QPS],
    /// A read of the QP is in flight.
    busy_q: [bool; QPS],
    /// That read is to be discarded (the QP was reset).
    drop_q: [bool; QPS],
    /// Slot of the QP's head WQE.
    hd_q: [u8; QPS],
    /// Fetched WQEs in the QP's slots.
    cnt_q: [u8; QPS],
    rqe_avail_q: u16,
    db_mem_q: [DbRow; QPS],
    fidx_mem_q: [u16; QPS],
    db_rd_q: DbRow,
    fidx_rd_q: u16,
    s1_valid_q: bool,
    s1_qp_q: u8,
    /// The round robin (`hw/rtl/rr_pick.sv`, instance `u_rr`).
    u_rr: RrPick<QPS>,
    rd_req_valid_q: bool,
    rd_req_addr_q: u64,
    rd_req_len_q: u32,
    rd_data_ready_q: bool,
    /// Reads in flight, in issue order: (QP, WQE count).
    u_infl: SyncFifo<(u8, u8)>,
    /// Beats of the head read received so far.
    bcnt_q: u8,
    /// A beat of the head read had a non-zero status.
    bad_q: bool,
    /// First beat of the WQE being received.
    lo_q: Beat,
    /// The WQE RAM: row `q * SLOTS + slot`.
    mem_q: Vec<Rqe>,
    rqe_present_q: bool,
    rqe_data_q: Rqe,
    err_valid_q: bool,
    err_qp_q: u8,
    ev_rqe_n_q: u8,
}

impl Default for RqFetch {
    fn default() -> Self {
        RqFetch {
            live_q: [false; QPS],
            pend_q: [false; QPS],
            busy_q: [false; QPS],
            drop_q: [false; QPS],
            hd_q: [0; QPS],
            cnt_q: [0; QPS],
            rqe_avail_q: 0,
            db_mem_q: [DbRow::default(); QPS],
            fidx_mem_q: [0; QPS],
            db_rd_q: DbRow::default(),
            fidx_rd_q: 0,
            s1_valid_q: false,
            s1_qp_q: 0,
            u_rr: RrPick::new(),
            rd_req_valid_q: false,
            rd_req_addr_q: 0,
            rd_req_len_q: 0,
            rd_data_ready_q: true,
            u_infl: SyncFifo::new(INFL),
            bcnt_q: 0,
            bad_q: false,
            lo_q: Beat::default(),
            mem_q: vec![Rqe::default(); QPS * SLOTS],
            rqe_present_q: false,
            rqe_data_q: Rqe::default(),
            err_valid_q: false,
            err_qp_q: 0,
            ev_rqe_n_q: 0,
        }
    }
}

impl RqFetch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> RqFetchOut {
        RqFetchOut {
            rd_req_valid: self.rd_req_valid_q,
            rd_req_addr: self.rd_req_addr_q,
            rd_req_len: self.rd_req_len_q,
            rd_data_ready: self.rd_data_ready_q,
            rqe_avail: self.rqe_avail_q,
            rqe_present: self.rqe_present_q,
            rqe_data: self.rqe_data_q,
            err_valid: self.err_valid_q,
            err_qp: self.err_qp_q,
            ev_rqe_n: self.ev_rqe_n_q,
        }
    }
}

impl Dut for RqFetch {
    type In = RqFetchIn;
    type Out = RqFetchOut;
    const NAME: &'static str = "rq_fetch";

    fn reset(&mut self) -> RqFetchOut {
        *self = RqFetch::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RqFetchIn) -> RqFetchOut {
        let qm = QPS - 1;
        let dq = i.db_qp as usize & qm;
        let db_reset = i.db_valid && i.db_state & 7 == ST_RESET;

        // ---- Stage 1: the read of the QP picked last cycle. ----
        let s1q = self.s1_qp_q as usize;
        let fidx = self.fidx_rd_q;
        let diff = self.db_rd_q.pi.wrapping_sub(fidx);
        let (req_addr, req_n) = read_of(self.db_rd_q, fidx, self.cnt_q[s1q]);
        let go = self.s1_valid_q && diff != 0 && !db_reset;

        // ---- Returning beats: the head read of the in-flight FIFO. ----
        let (hq, hn) = self.u_infl.out_data();
        let hq = hq as usize;
        let beat = i.rd_data_valid && self.rd_data_ready_q && self.u_infl.out_valid();
        let half = self.bcnt_q & 1 == 1;
        let last = beat && i.rd_data_last;
        let fail = self.bad_q || i.rd_data_status & 7 != 0;
        let disc = self.drop_q[hq] || (db_reset && dq == hq);
        let ok = last && !fail && !disc;
        let err = last && fail && !disc;
        let wslot =
            (self.hd_q[hq] as usize + self.cnt_q[hq] as usize + (self.bcnt_q >> 1) as usize)
                % SLOTS;

        let rq = i.rqe_rd_qp as usize & qm;
        let pq = i.rqe_pop_qp as usize & qm;
        let pop = i.rqe_pop_valid && self.cnt_q[pq] != 0;

        // ---- Stage 0: the pick. ----
        let mut elig = [false; QPS];
        for (q, e) in elig.iter_mut().enumerate() {
            *e = self.live_q[q]
                && self.pend_q[q]
                && !self.busy_q[q]
                && self.cnt_q[q] as usize != SLOTS
                && !(self.s1_valid_q && s1q == q)
                && !(i.db_valid && dq == q);
        }
        let picked = self.u_rr.tick(|q| elig[q], go, self.s1_qp_q);
        let rd_req_valid_d = go || (self.rd_req_valid_q && !i.rd_req_ready);
        let pick = picked.filter(|_| !rd_req_valid_d && self.u_infl.in_ready());

        // ---- Registered reads (the tables as they are before this edge). ----
        if let Some(p) = pick {
            self.db_rd_q = self.db_mem_q[p as usize];
            self.fidx_rd_q = self.fidx_mem_q[p as usize];
        }
        if i.rqe_rd_valid {
            self.rqe_data_q = self.mem_q[rq * SLOTS + self.hd_q[rq] as usize];
            self.rqe_present_q = self.cnt_q[rq] != 0;
        }

        // ---- Table writes. ----
        if i.db_valid {
            self.db_mem_q[dq] = DbRow {
                pi: if db_reset { 0 } else { i.db_pi },
                base: i.db_base >> 7,
                log: i.db_log & 31,
            };
        }
        if go {
            self.fidx_mem_q[s1q] = fidx.wrapping_add(req_n as u16);
        } else if db_reset {
            self.fidx_mem_q[dq] = 0;
        }
        if beat && half {
            self.mem_q[hq * SLOTS + wslot] = Rqe::from_beats(&self.lo_q, &i.rd_data);
        }
        if beat && !half {
            self.lo_q = i.rd_data;
        }

        // ---- Per-QP flops. ----
        let busy_before = self.busy_q[dq];
        if go {
            self.busy_q[s1q] = true;
            if req_n == diff as u32 {
                self.pend_q[s1q] = false;
            }
        } else if self.s1_valid_q && diff == 0 {
            self.pend_q[s1q] = false;
        }
        if last {
            self.busy_q[hq] = false;
            self.drop_q[hq] = false;
        }
        if ok {
            self.cnt_q[hq] += hn;
        }
        if pop {
            self.hd_q[pq] = ((self.hd_q[pq] as usize + 1) % SLOTS) as u8;
            self.cnt_q[pq] -= 1;
        }
        if i.db_valid {
            self.live_q[dq] = !db_reset;
            self.pend_q[dq] = !db_reset;
            if db_reset {
                self.hd_q[dq] = 0;
                self.cnt_q[dq] = 0;
                if busy_before && !(last && hq == dq) {
                    self.drop_q[dq] = true;
                }
            }
        }
        self.rqe_avail_q = (0..QPS).fold(0u16, |m, q| m | ((self.cnt_q[q] != 0) as u16) << q);

        // ---- Pipeline and output registers. ----
        self.s1_valid_q = pick.is_some();
        if let Some(p) = pick {
            self.s1_qp_q = p;
        }
        self.rd_req_valid_q = rd_req_valid_d;
        if go {
            self.rd_req_addr_q = req_addr;
            self.rd_req_len_q = 128 * req_n;
        }
        self.u_infl
            .tick(go.then_some((s1q as u8, req_n as u8)), last);
        self.bcnt_q = if last {
            0
        } else if beat {
            (self.bcnt_q + 1) % (2 * SLOTS as u8)
        } else {
            self.bcnt_q
        };
        self.bad_q = !last && (self.bad_q || (beat && i.rd_data_status & 7 != 0));
        self.rd_data_ready_q = true;
        self.err_valid_q = err;
        if err {
            self.err_qp_q = hq as u8;
        }
        self.ev_rqe_n_q = if ok { hn } else { 0 };
        self.outputs()
    }
}

impl TraceValue for DbRow {
    /// `{pi, base[63:7], log}`: log in the low 5 bits.
    fn put(&self, _w: u32, b: &mut Bits) {
        b.push(self.log as u64, 5);
        b.push(self.base, 57);
        b.push(self.pi as u64, 16);
    }
}

impl TraceValue for Rqe {
    fn put(&self, w: u32, b: &mut Bits) {
        self.0.as_slice().put(w, b);
    }
}

impl Trace for RqFetch {
    /// The RTL's registers in its declaration order; the per-QP vectors
    /// packed (QP 0 lowest), the tables one signal per row.
    fn trace(&self, t: &mut dyn Tracer) {
        let (sw, cw) = (SLOTS.trailing_zeros(), SLOTS.trailing_zeros() + 1);
        let qps = QPS as u32;
        let qpw = QPS.trailing_zeros();
        t.reg("live_q", qps, &self.live_q);
        t.reg("pend_q", qps, &self.pend_q);
        t.reg("busy_q", qps, &self.busy_q);
        t.reg("drop_q", qps, &self.drop_q);
        t.reg("hd_q", qps * sw, &self.hd_q);
        t.reg("cnt_q", qps * cw, &self.cnt_q);
        t.reg("rqe_avail_q", qps, &self.rqe_avail_q);
        t.each("db_mem_q", 78, &self.db_mem_q);
        t.each("fidx_mem_q", 16, &self.fidx_mem_q);
        t.reg("db_rd_q", 78, &self.db_rd_q);
        t.reg("fidx_rd_q", 16, &self.fidx_rd_q);
        t.reg("s1_valid_q", 1, &self.s1_valid_q);
        t.reg("s1_qp_q", qpw, &self.s1_qp_q);
        t.reg("rd_req_valid_q", 1, &self.rd_req_valid_q);
        t.reg("rd_req_addr_q", 64, &self.rd_req_addr_q);
        t.reg("rd_req_len_q", 17, &self.rd_req_len_q);
        t.reg("rd_data_ready_q", 1, &self.rd_data_ready_q);
        t.reg("bcnt_q", cw, &self.bcnt_q);
        t.reg("bad_q", 1, &self.bad_q);
        t.reg("lo_q", 512, &self.lo_q);
        t.each("mem_q", 1024, &self.mem_q);
        t.reg("rqe_present_q", 1, &self.rqe_present_q);
        t.reg("rqe_data_q", 1024, &self.rqe_data_q);
        t.reg("err_valid_q", 1, &self.err_valid_q);
        t.reg("err_qp_q", qpw, &self.err_qp_q);
        t.reg("ev_rqe_n_q", 4, &self.ev_rqe_n_q);
        // In-flight FIFO entries `{qp, n}`: n in the low CW bits.
        t.push("u_infl");
        self.u_infl
            .trace_map(t, qpw + cw, |&(q, n)| (q as u64) << cw | n as u64);
        t.pop();
        t.push("u_rr");
        self.u_rr.trace(t);
        t.pop();
    }
}

#[cfg(test)]
mod tests;
