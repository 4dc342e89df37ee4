//! `sq_fetch`: doorbells, per-QP fetch indices, batched WQE reads, the WQE
//! buffer. Model of `hw/rtl/sq_fetch.sv` (default parameters).
//!
//! Per QP it keeps what the last doorbell said (producer index, state, SQ
//! base, log2 ring size), a fetch index, whether a read of it is in flight,
//! and a ring of [`SLOTS`] buffer entries (head, count of fetched WQEs). A QP
//! is eligible when its state is not RESET, `pi != fetch_idx`, no read of it
//! is in flight and a slot is free; round robin picks one and reads
//! `n = min(pi - fetch_idx, free slots, BATCH, entries before the ring end)`
//! WQEs. This cycle's doorbell is looked through, so that an idle QP's
//! request is visible the cycle after the doorbell.
//!
//! A rewind (`rw_*`) sets the QP's fetch index and empties its buffer; a
//! read of the QP in flight then (its last beat this cycle included) is
//! stale: its beats are not written, its WQEs never counted, its error not
//! reported, and the QP stays busy until its last beat. Each slot keeps the
//! SQ index of its WQE beside it (`idx_q`), popped into `wqe_idx`.

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::sync_fifo::SyncFifo;
use crate::trace::{Trace, Tracer};

/// QPs (`QPS`); QP numbers are 4 bits.
pub use crate::params::QPS;
/// WQE buffer entries per QP (`SLOTS`).
pub const SLOTS: usize = 4;
/// At most this many WQEs per read (`BATCH`).
pub const BATCH: usize = 4;
/// Reads in flight at once, all QPs together (`INFL`, the in-flight FIFO).
pub const INFL: usize = 4;

ports! {
    /// Inputs of `sq_fetch` (all but `clk`/`rst`).
    pub struct SqFetchIn {
        /// Pulse: a doorbell, with the QP's state and SQ ring as csr has them.
        pub db_valid: bool = 1,
        pub db_qp: u8 = 4 if db_valid,
        pub db_pi: u16 = 16 if db_valid,
        /// 0 RESET, 1 RTS, 2 ERROR.
        pub db_state: u8 = 2 if db_valid,
        pub db_sq_base: u64 = 64 if db_valid,
        pub db_sq_log: u8 = 5 if db_valid,
        pub rd_req_ready: bool = 1,
        /// WQE beats from `dma_rd` (client 0), in request order, one WQE each.
        pub rd_data_valid: bool = 1,
        pub rd_data: Beat = 512 if rd_data_valid,
        pub rd_data_last: bool = 1 if rd_data_valid,
        /// Meaningful on the last beat: non-zero = the read failed.
        pub rd_data_status: u8 = 3 if rd_data_valid,
        pub wqe_pop_valid: bool = 1,
        pub wqe_pop_qp: u8 = 4 if wqe_pop_valid,
        /// Pulse, always taken: fetch QP `rw_qp` again from SQ index
        /// `rw_idx`, dropping its fetched WQEs. Never with a pop of that QP.
        pub rw_valid: bool = 1,
        pub rw_qp: u8 = 4 if rw_valid,
        pub rw_idx: u16 = 16 if rw_valid,
    }
}

ports! {
    /// Outputs of `sq_fetch`, all registered.
    pub struct SqFetchOut {
        pub rd_req_valid: bool = 1,
        pub rd_req_addr: u64 = 64 if rd_req_valid,
        /// 64 * n, n = 1 ..= BATCH.
        pub rd_req_len: u32 = 17 if rd_req_valid,
        /// High from the cycle after reset on.
        pub rd_data_ready: bool = 1,
        /// Bit q: QP q has a fetched WQE waiting.
        pub wqe_avail: u16 = 16,
        /// Pulse: the WQE popped the cycle before.
        pub wqe_valid: bool = 1,
        pub wqe_qp: u8 = 4 if wqe_valid,
        pub wqe_data: Beat = 512 if wqe_valid,
        /// The popped WQE's SQ index (16 bits, not reduced mod ring size).
        pub wqe_idx: u16 = 16 if wqe_valid,
        /// Pulse: a WQE read of `err_qp` failed, its WQEs are dropped.
        pub err_valid: bool = 1,
        pub err_qp: u8 = 4 if err_valid,
        /// WQEs made available this cycle.
        pub ev_wqe_n: u8 = 4,
    }
}

/// The fetch engine. Field names are the RTL's registers (per-QP vectors
/// there are arrays here).
#[derive(Debug, Clone, PartialEq)]
pub struct SqFetch {
    pi_q: [u16; QPS],
    state_q: [u8; QPS],
    /// The SQ ring per QP: the RTL's `ring_mem` RAM (not reset, not
    /// traced; read only for a QP a doorbell since reset has written).
    base_q: [u64; QPS],
    log_q: [u8; QPS],
    fidx_q: [u16; QPS],
    /// A read of the QP is in flight (issued, last beat not yet back).
    busy_q: [bool; QPS],
    /// The QP's read in flight was overtaken by a rewind: discard its beats.
    stale_q: [bool; QPS],
    /// WQEs of the QP's read in flight (its start is `fidx_q - rn_q`).
    rn_q: [u8; QPS],
    /// Buffer slot of the QP's oldest fetched WQE.
    hd_q: [u8; QPS],
    /// Fetched WQEs waiting in the QP's slots.
    cnt_q: [u8; QPS],
    wqe_avail_q: u16,
    rr_q: u8,
    rd_req_valid_q: bool,
    rd_req_addr_q: u64,
    rd_req_len_q: u32,
    rd_data_ready_q: bool,
    /// QP of each read in flight, in issue order (= data order).
    infl: SyncFifo<u8>,
    /// Beats of the head read received so far.
    bcnt_q: u8,
    /// The WQE buffer: entry `q * SLOTS + slot`.
    mem_q: Vec<Beat>,
    /// SQ index of each buffer entry, same addressing.
    idx_q: Vec<u16>,
    wqe_valid_q: bool,
    wqe_qp_q: u8,
    wqe_data_q: Beat,
    wqe_idx_q: u16,
    err_valid_q: bool,
    err_qp_q: u8,
    ev_wqe_n_q: u8,
}

impl Default for SqFetch {
    fn default() -> Self {
        SqFetch {
            pi_q: [0; QPS],
            state_q: [0; QPS],
            base_q: [0; QPS],
            log_q: [0; QPS],
            fidx_q: [0; QPS],
            busy_q: [false; QPS],
            stale_q: [false; QPS],
            rn_q: [0; QPS],
            hd_q: [0; QPS],
            cnt_q: [0; QPS],
            wqe_avail_q: 0,
            rr_q: 0,
            rd_req_valid_q: false,
            rd_req_addr_q: 0,
            rd_req_len_q: 0,
            rd_data_ready_q: true,
            infl: SyncFifo::new(INFL),
            bcnt_q: 0,
            mem_q: vec![Beat::default(); QPS * SLOTS],
            idx_q: vec![0; QPS * SLOTS],
            wqe_valid_q: false,
            wqe_qp_q: 0,
            wqe_data_q: Beat::default(),
            wqe_idx_q: 0,
            err_valid_q: false,
            err_qp_q: 0,
            ev_wqe_n_q: 0,
        }
    }
}

/// The read of a QP whose table entry reads `pi`, `fidx`, `base`, `log`
/// with `cnt` slots full: `(address, WQE count)`. The count is
/// `min(pi - fidx, free slots, BATCH, entries before the ring end)`; a log
/// size above 16 is taken as 16 (the whole 16-bit index space).
pub fn read_of(pi: u16, fidx: u16, base: u64, log: u8, cnt: u8) -> (u64, u32) {
    let lg = log.min(16) as u32;
    let size = 1u32 << lg;
    let off = fidx as u32 & (size - 1);
    let left = size - off;
    let diff = pi.wrapping_sub(fidx) as u32;
    let free = SLOTS as u32 - cnt as u32;
    let n = diff.min(free).min(BATCH as u32).min(left);
    (base.wrapping_add(64 * off as u64), n)
}

impl SqFetch {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> SqFetchOut {
        SqFetchOut {
            rd_req_valid: self.rd_req_valid_q,
            rd_req_addr: self.rd_req_addr_q,
            rd_req_len: self.rd_req_len_q,
            rd_data_ready: self.rd_data_ready_q,
            wqe_avail: self.wqe_avail_q,
            wqe_valid: self.wqe_valid_q,
            wqe_qp: self.wqe_qp_q,
            wqe_data: self.wqe_data_q,
            wqe_idx: self.wqe_idx_q,
            err_valid: self.err_valid_q,
            err_qp: self.err_qp_q,
            ev_wqe_n: self.ev_wqe_n_q,
        }
    }
}

impl Dut for SqFetch {
    type In = SqFetchIn;
    type Out = SqFetchOut;
    const NAME: &'static str = "sq_fetch";

    fn reset(&mut self) -> SqFetchOut {
        *self = SqFetch::default();
        self.outputs()
    }

    fn tick(&mut self, i: &SqFetchIn) -> SqFetchOut {
        let qmask = QPS as u8 - 1;

        // ---- The QP table as this cycle's doorbell leaves it. A doorbell
        // repeating the known producer index does nothing. ----
        let mut pi_e = self.pi_q;
        let mut state_e = self.state_q;
        let mut base_e = self.base_q;
        let mut log_e = self.log_q;
        let dq = (i.db_qp & qmask) as usize;
        if i.db_valid && i.db_pi != self.pi_q[dq] {
            pi_e[dq] = i.db_pi;
            state_e[dq] = i.db_state & 3;
            base_e[dq] = i.db_sq_base;
            log_e[dq] = i.db_sq_log & 31;
        }

        // ---- Eligibility and round robin from rr_q; a QP being rewound
        // is not eligible this cycle. ----
        let rq = (i.rw_qp & qmask) as usize;
        let elig = |q: usize| {
            state_e[q] != 0
                && pi_e[q] != self.fidx_q[q]
                && !self.busy_q[q]
                && (self.cnt_q[q] as usize) != SLOTS
                && !(i.rw_valid && rq == q)
        };
        let sel = (0..QPS)
            .map(|k| (self.rr_q as usize + k) % QPS)
            .find(|&q| elig(q));
        let slot = !self.rd_req_valid_q || i.rd_req_ready;
        let issue = match sel {
            Some(_) => slot && self.infl.in_ready(),
            None => false,
        };
        let sel = sel.unwrap_or(self.rr_q as usize);
        let (req_addr, req_n) = read_of(
            pi_e[sel],
            self.fidx_q[sel],
            base_e[sel],
            log_e[sel],
            self.cnt_q[sel],
        );

        // ---- Returning beats: the head read of the in-flight FIFO. ----
        let beat = i.rd_data_valid && self.rd_data_ready_q && self.infl.out_valid();
        let last = beat && i.rd_data_last;
        let hq = self.infl.out_data() as usize;
        // A read overtaken by a rewind (earlier or now) is discarded.
        let stale = self.stale_q[hq] || (i.rw_valid && rq == hq);
        let keep = beat && !stale;
        let last_f = last && !stale;
        let ok = last_f && i.rd_data_status & 7 == 0;
        // The beat's SQ index: the fetch index does not move while a
        // non-stale read of the QP is in flight.
        let widx = self.fidx_q[hq]
            .wrapping_sub(self.rn_q[hq] as u16)
            .wrapping_add(self.bcnt_q as u16);
        // The beat's slot: past the QP's fetched WQEs. A pop moves head and
        // count together, so head + count stays put during the read.
        let wslot =
            (self.hd_q[hq] as usize + self.cnt_q[hq] as usize + self.bcnt_q as usize) % SLOTS;
        let n_done = self.bcnt_q + 1;

        // ---- Pop: registered read of the head slot (never the slot being
        // written: that one is not counted as fetched yet). ----
        let pq = (i.wqe_pop_qp & qmask) as usize;
        let pop = i.wqe_pop_valid && self.cnt_q[pq] != 0;
        if pop {
            self.wqe_data_q = self.mem_q[pq * SLOTS + self.hd_q[pq] as usize];
            self.wqe_idx_q = self.idx_q[pq * SLOTS + self.hd_q[pq] as usize];
            self.wqe_qp_q = pq as u8;
        }
        self.wqe_valid_q = pop;
        if keep {
            self.mem_q[hq * SLOTS + wslot] = i.rd_data;
            self.idx_q[hq * SLOTS + wslot] = widx;
        }

        // ---- Per-QP state. ----
        for q in 0..QPS {
            let mut c = self.cnt_q[q];
            if ok && hq == q {
                c += n_done;
            }
            if pop && pq == q {
                c -= 1;
                self.hd_q[q] = (self.hd_q[q] + 1) % SLOTS as u8;
            }
            self.cnt_q[q] = c;
            if i.rw_valid && rq == q {
                // Not eligible this cycle: no issue of q below.
                self.cnt_q[q] = 0;
                self.fidx_q[q] = i.rw_idx;
                self.stale_q[q] = self.busy_q[q];
            }
            if last && hq == q {
                self.busy_q[q] = false;
                self.stale_q[q] = false;
            }
            if issue && sel == q {
                self.busy_q[q] = true;
                self.rn_q[q] = req_n as u8;
                self.fidx_q[q] = self.fidx_q[q].wrapping_add(req_n as u16);
            }
        }
        self.pi_q = pi_e;
        self.state_q = state_e;
        self.base_q = base_e;
        self.log_q = log_e;
        self.wqe_avail_q = (0..QPS).fold(0u16, |m, q| m | ((self.cnt_q[q] != 0) as u16) << q);

        // ---- Request register. ----
        if issue {
            self.rr_q = ((sel + 1) % QPS) as u8;
            self.rd_req_valid_q = true;
            self.rd_req_addr_q = req_addr;
            self.rd_req_len_q = 64 * req_n;
        } else if self.rd_req_valid_q && i.rd_req_ready {
            self.rd_req_valid_q = false;
        }
        self.infl.tick(issue.then_some(sel as u8), last);
        self.bcnt_q = if last {
            0
        } else if beat {
            (self.bcnt_q + 1) % SLOTS as u8
        } else {
            self.bcnt_q
        };

        self.rd_data_ready_q = true;
        self.err_valid_q = last_f && !ok;
        if last_f {
            self.err_qp_q = hq as u8;
        }
        self.ev_wqe_n_q = if ok { n_done } else { 0 };
        self.outputs()
    }
}

impl Trace for SqFetch {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("pi_q", 256, &self.pi_q);
        t.reg("state_q", 32, &self.state_q);
        t.reg("fidx_q", 256, &self.fidx_q);
        t.reg("busy_q", 16, &self.busy_q);
        t.reg("stale_q", 16, &self.stale_q);
        t.reg("rn_q", 48, &self.rn_q);
        t.reg("hd_q", 32, &self.hd_q);
        t.reg("cnt_q", 48, &self.cnt_q);
        t.reg("wqe_avail_q", 16, &self.wqe_avail_q);
        t.reg("rr_q", 4, &self.rr_q);
        t.reg("rd_req_valid_q", 1, &self.rd_req_valid_q);
        t.reg("rd_req_addr_q", 64, &self.rd_req_addr_q);
        t.reg("rd_req_len_q", 17, &self.rd_req_len_q);
        t.reg("rd_data_ready_q", 1, &self.rd_data_ready_q);
        t.reg("bcnt_q", 2, &self.bcnt_q);
        t.reg("wqe_valid_q", 1, &self.wqe_valid_q);
        t.reg("wqe_qp_q", 4, &self.wqe_qp_q);
        t.reg("wqe_data_q", 512, &self.wqe_data_q);
        t.reg("wqe_idx_q", 16, &self.wqe_idx_q);
        t.reg("err_valid_q", 1, &self.err_valid_q);
        t.reg("err_qp_q", 4, &self.err_qp_q);
        t.reg("ev_wqe_n_q", 4, &self.ev_wqe_n_q);
        t.push("u_infl");
        self.infl.trace_all(t, 4);
        t.pop();
    }
}

#[cfg(test)]
mod tests;
