//! `retx_ctl`: the requester's retransmission decisions per QP (the local
//! ACK timer, retry_left, rnr_left, the RNR wait; when to rewind and when to
//! give up). Model of `hw/rtl/retx_ctl.sv` (same register names); contract
//! in `docs/retx_ctl.md`.
//!
//! A scanner visits one QP a cycle: at n it reads the QP's row (seen una,
//! deadline) and its RETRY attributes (`attr_idx`), at n+1 it decides and
//! writes the row back. NAKs and gaps are decided the cycle they come, from
//! per-QP flops. Rewinds and exhaustions wait as a bit per QP and leave one
//! at a time through the `rw_*` and `xerr_*` output registers (round robin).

use crate::dut::Dut;
use crate::params::{cqe_status, rnr_timer_units, QPS};
use crate::ports;
use crate::ports::PsnVec;
use crate::trace::{Trace, Tracer};

/// Cycles of 4.096 us (the RTL's default `T_UNIT`).
pub const T_UNIT: u64 = 1024;
/// Cycles of 10 us (the RTL's default `R_UNIT`).
pub const R_UNIT: u64 = 2500;

const TW_MASK: u64 = (1 << 48) - 1;
const QPM: usize = QPS - 1;

ports! {
    /// Inputs of `retx_ctl` (all but `clk`/`rst`).
    pub struct RetxCtlIn {
        /// ack_tracker: QP q's oldest unacknowledged PSN at bits [24q, 24q + 24).
        pub una_all: PsnVec = 384,
        /// QP q has PSNs outstanding.
        pub busy: u16 = 16,
        /// QP q is in ERROR.
        pub halt: u16 = 16,
        /// QP q is in ack_tracker's error mode (in ERROR without it: the
        /// timer drains, an expiry flushes).
        pub err_mode: u16 = 16,
        /// A NAK ack_tracker took (una already = nak_psn).
        pub nak_valid: bool = 1,
        pub nak_qp: u8 = 4 if nak_valid,
        pub nak_psn: u32 = 24 if nak_valid,
        pub nak_rnr: bool = 1 if nak_valid,
        pub nak_timer: u8 = 5 if nak_valid,
        /// rd_sink: a READ response ahead of gap_psn.
        pub gap_valid: bool = 1,
        pub gap_qp: u8 = 4 if gap_valid,
        pub gap_psn: u32 = 24 if gap_valid,
        /// Software restarted the QP's PSN.
        pub clr_valid: bool = 1,
        pub clr_qp: u8 = 4 if clr_valid,
        /// The RETRY fields of QP `attr_idx` of the cycle before.
        pub attr_timeout: u8 = 5,
        pub attr_retry: u8 = 3,
        pub attr_rnr_retry: u8 = 3,
        pub rw_ready: bool = 1,
        pub xerr_ready: bool = 1,
    }
}

ports! {
    /// Outputs of `retx_ctl`, registered.
    pub struct RetxCtlOut {
        pub attr_idx: u8 = 4,
        /// Resend QP rw_qp from PSN rw_psn (held until taken).
        pub rw_valid: bool = 1,
        pub rw_qp: u8 = 4 if rw_valid,
        pub rw_psn: u32 = 24 if rw_valid,
        /// Retries exhausted: status 12 or 13, or 5 for a QP in ERROR
        /// whose timer ran out (held until taken).
        pub xerr_valid: bool = 1,
        pub xerr_qp: u8 = 4 if xerr_valid,
        pub xerr_status: u8 = 8 if xerr_valid,
        /// Pulses: a timer expired, a rewind was taken, an RNR wait started,
        /// an exhaustion was taken.
        pub ev_timeout: bool = 1,
        pub ev_rewind: bool = 1,
        pub ev_rnr_wait: bool = 1,
        pub ev_exhaust: bool = 1,
        /// Bit q: QP q waits out an RNR NAK (rnic_top holds its grants).
        pub hold: u16 = 16,
    }
}

/// QP q's una in `una_all`.
pub fn una_of(una_all: &PsnVec, q: usize) -> u32 {
    una_all.0[q] & 0xFF_FFFF
}

/// Sets QP q's una in `una_all`.
pub fn set_una(una_all: &mut PsnVec, q: usize, psn: u32) {
    una_all.0[q] = psn & 0xFF_FFFF;
}

#[derive(Debug, Clone, PartialEq)]
pub struct RetxCtl {
    t_unit: u64,
    r_unit: u64,
    now_q: u64,
    scan_q: usize,
    s1_v_q: bool,
    /// {seen una 24, deadline 48} of QP scan_q - 1.
    row_q: u128,
    crow_q: u8,
    mem_q: [u128; QPS],
    cmem_q: [u8; QPS],
    gmem_q: [u32; QPS],
    run_q: u16,
    rld_q: u16,
    nsk_q: u16,
    rnrw_q: u16,
    rnrs_q: u16,
    prw_q: u16,
    pgap_q: u16,
    pxe_q: u16,
    xst_q: u16,
    xfl_q: u16,
    xd_q: u16,
    inf_q: u16,
    rl_q: [u8; QPS],
    nl_q: [u8; QPS],
    sel_v_q: bool,
    sel_q: usize,
    gp_q: u32,
    rwp_q: usize,
    xep_q: usize,
    rw_valid_q: bool,
    rw_qp_q: usize,
    rw_psn_q: u32,
    xerr_valid_q: bool,
    xerr_qp_q: usize,
    xerr_status_q: u8,
    ev_timeout_q: bool,
    ev_rewind_q: bool,
    ev_rnr_wait_q: bool,
    ev_exhaust_q: bool,
}

impl Default for RetxCtl {
    fn default() -> Self {
        Self::new()
    }
}

fn bit(v: u16, q: usize) -> bool {
    v >> q & 1 != 0
}

fn put(v: &mut u16, q: usize, b: bool) {
    *v = (*v & !(1 << q)) | (b as u16) << q;
}

impl RetxCtl {
    /// The default parameters (`T_UNIT` 1024, `R_UNIT` 2500).
    pub fn new() -> Self {
        Self::with_units(T_UNIT, R_UNIT)
    }

    /// A variant's `T_UNIT` and `R_UNIT`.
    pub fn with_units(t_unit: u64, r_unit: u64) -> Self {
        RetxCtl {
            t_unit,
            r_unit,
            now_q: 0,
            scan_q: 0,
            s1_v_q: false,
            row_q: 0,
            crow_q: 0,
            mem_q: [0; QPS],
            cmem_q: [0; QPS],
            gmem_q: [0; QPS],
            run_q: 0,
            rld_q: u16::MAX,
            nsk_q: 0,
            rnrw_q: 0,
            rnrs_q: 0,
            prw_q: 0,
            pgap_q: 0,
            pxe_q: 0,
            xst_q: 0,
            xfl_q: 0,
            xd_q: 0,
            inf_q: 0,
            rl_q: [0; QPS],
            nl_q: [0; QPS],
            sel_v_q: false,
            sel_q: 0,
            gp_q: 0,
            rwp_q: 0,
            xep_q: 0,
            rw_valid_q: false,
            rw_qp_q: 0,
            rw_psn_q: 0,
            xerr_valid_q: false,
            xerr_qp_q: 0,
            xerr_status_q: 0,
            ev_timeout_q: false,
            ev_rewind_q: false,
            ev_rnr_wait_q: false,
            ev_exhaust_q: false,
        }
    }

    pub fn outputs(&self) -> RetxCtlOut {
        RetxCtlOut {
            attr_idx: self.scan_q as u8,
            rw_valid: self.rw_valid_q,
            rw_qp: self.rw_qp_q as u8,
            rw_psn: self.rw_psn_q,
            xerr_valid: self.xerr_valid_q,
            xerr_qp: self.xerr_qp_q as u8,
            xerr_status: self.xerr_status_q,
            ev_timeout: self.ev_timeout_q,
            ev_rewind: self.ev_rewind_q,
            ev_rnr_wait: self.ev_rnr_wait_q,
            ev_exhaust: self.ev_exhaust_q,
            hold: self.rnrw_q,
        }
    }
}

impl RetxCtl {
    /// The state without the scanner (its position, the cycle counter and
    /// the rows it read), and the outputs without `attr_idx`.
    fn unscanned(&self) -> (RetxCtl, RetxCtlOut) {
        let mut m = self.clone();
        m.now_q = 0;
        m.scan_q = 0;
        m.s1_v_q = false;
        m.row_q = 0;
        m.crow_q = 0;
        let mut o = self.outputs();
        o.attr_idx = 0;
        (m, o)
    }

    /// Idle with the inputs `i` held (`attrs(q)`: what the lookup of QP q
    /// returns): for a whole round of the scanner, plus one, every tick
    /// leaves everything but the scanner as it is. Then any number of
    /// ticks does, and [`RetxCtl::skip`] is exact.
    pub fn idle_round(&self, i: &RetxCtlIn, attrs: impl Fn(usize) -> (u8, u8, u8)) -> bool {
        // A timer or RNR wait running expires at a scan some time ahead:
        // not idle (the skip would pass its deadline).
        if self.run_q != 0 || self.rnrw_q != 0 {
            return false;
        }
        let want = self.unscanned();
        let mut m = self.clone();
        let mut i = *i;
        for _ in 0..=QPS {
            let looked = m.scan_q;
            m.tick(&i);
            if m.unscanned() != want {
                return false;
            }
            (i.attr_timeout, i.attr_retry, i.attr_rnr_retry) = attrs(looked);
        }
        true
    }

    /// `n` idle ticks at once (after [`RetxCtl::idle_round`]): the cycle
    /// counter and the scanner move, the scanner's read registers hold the
    /// row it read last. The lookup in csr follows `attr_idx` - 1.
    pub fn skip(&mut self, n: u64) {
        if n == 0 {
            return;
        }
        self.now_q = self.now_q.wrapping_add(n) & TW_MASK;
        self.scan_q = (self.scan_q + (n % QPS as u64) as usize) & QPM;
        let last = self.scan_q.wrapping_sub(1) & QPM;
        self.s1_v_q = true;
        self.row_q = self.mem_q[last];
        self.crow_q = self.cmem_q[last];
    }

    /// The QP the scanner looked up last (csr's `xctx_*` show it).
    pub fn last_looked(&self) -> usize {
        self.scan_q.wrapping_sub(1) & QPM
    }
}

/// The first set bit of `v` at or after `from`, cyclically.
fn first_from(v: u16, from: usize) -> Option<usize> {
    (0..QPS).map(|i| (from + i) & QPM).find(|&q| bit(v, q))
}

impl Dut for RetxCtl {
    type In = RetxCtlIn;
    type Out = RetxCtlOut;
    const NAME: &'static str = "retx_ctl";

    fn reset(&mut self) -> RetxCtlOut {
        *self = RetxCtl::with_units(self.t_unit, self.r_unit);
        self.outputs()
    }

    fn tick(&mut self, i: &RetxCtlIn) -> RetxCtlOut {
        let o = self.clone();
        let halt = i.halt;
        // In ERROR, not in error mode: the timer only (drain); in both:
        // nothing runs (frz).
        let drn = halt & !i.err_mode;
        let frz = halt & i.err_mode;
        let nq = i.nak_qp as usize & QPM;
        let gq = i.gap_qp as usize & QPM;
        let cq = i.clr_qp as usize & QPM;

        // Scanner, stage 2: QP p with the row and attributes read at n-1.
        let p = o.scan_q.wrapping_sub(1) & QPM;
        let una_p = una_of(&i.una_all, p);
        let seen = (o.row_q >> 48) as u32 & 0xFF_FFFF;
        let dl = o.row_q as u64 & TW_MASK;
        let hit_p =
            (i.nak_valid && nq == p) || (i.gap_valid && gq == p) || (i.clr_valid && cq == p);
        let sact = o.s1_v_q && !hit_p && !bit(frz, p) && !bit(o.xd_q, p);
        let prog = !bit(o.nsk_q, p) && una_p != seen;
        let reload = bit(o.rld_q, p) || prog;
        let mut rl_s = if reload { i.attr_retry & 7 } else { o.rl_q[p] };
        let nl_s = if reload {
            i.attr_rnr_retry & 7
        } else {
            o.nl_q[p]
        };
        let inf_s = if reload {
            i.attr_rnr_retry & 7 == 7
        } else {
            bit(o.inf_q, p)
        };
        let expired = (o.now_q.wrapping_sub(dl) & TW_MASK) >> 47 == 0;
        let tper = (self.t_unit << (i.attr_timeout & 31)) & TW_MASK;
        let rwait = (rnr_timer_units(o.crow_q) as u64 * self.r_unit) & TW_MASK;
        let mut dl_new = dl;
        let (mut s_rw, mut s_x, mut s_tmo) = (false, false, false);
        let mut s_run = bit(o.run_q, p);
        let mut s_rnrw = bit(o.rnrw_q, p);
        let mut s_rnrs = bit(o.rnrs_q, p);
        if bit(o.rnrw_q, p) {
            if bit(o.rnrs_q, p) {
                dl_new = (o.now_q + rwait) & TW_MASK;
                s_rnrs = false;
            } else if expired {
                s_rnrw = false;
                s_rw = true;
            }
        } else if !bit(i.busy, p) || bit(o.prw_q, p) || i.attr_timeout & 31 == 0 {
            s_run = false;
        } else if !bit(o.run_q, p) || prog {
            s_run = true;
            dl_new = (o.now_q + tper) & TW_MASK;
        } else if expired {
            s_tmo = true;
            s_run = false;
            if rl_s == 0 || bit(drn, p) {
                s_x = true;
            } else {
                rl_s -= 1;
                s_rw = true;
            }
        }

        // NAK and gap decisions.
        let rl_n = o.rl_q[nq];
        let nl_n = o.nl_q[nq];
        let rl_g = o.rl_q[gq];
        // Halted, exhausted or cleared this cycle: its NAKs and gaps do nothing.
        let quiet = |q: usize| bit(halt, q) || bit(o.xd_q, q) || (i.clr_valid && cq == q);
        let nak_ok = i.nak_valid && !quiet(nq);
        let nak_cnt = !bit(o.rld_q, nq);
        let nak_x = nak_ok
            && nak_cnt
            && if i.nak_rnr {
                !bit(o.inf_q, nq) && nl_n == 0
            } else {
                rl_n == 0
            };
        let rnr_go = nak_ok && i.nak_rnr && !nak_x;
        let same_as_nak = i.nak_valid && nq == gq;
        let gap_ok = i.gap_valid && !quiet(gq) && !same_as_nak;
        let gap_cnt = !bit(o.rld_q, gq);
        let gap_x = gap_ok && gap_cnt && rl_g == 0;
        // A pending rewind to una covers any gap PSN (una <= gap_psn).
        let una_pending = bit(o.prw_q, gq) && !bit(o.pgap_q, gq);
        let gap_w = gap_ok && !gap_x && !una_pending;

        let mut run = o.run_q;
        let mut rld = o.rld_q;
        let mut nsk = o.nsk_q;
        let mut rnrw = o.rnrw_q;
        let mut rnrs = o.rnrs_q;
        let mut prw = o.prw_q;
        let mut pgap = o.pgap_q;
        let mut pxe = o.pxe_q;
        let mut xst = o.xst_q;
        let mut xfl = o.xfl_q;
        let mut xd = o.xd_q;
        let mut inf = o.inf_q;

        if sact {
            put(&mut rld, p, false);
            put(&mut nsk, p, false);
            self.rl_q[p] = rl_s;
            self.nl_q[p] = nl_s;
            put(&mut inf, p, inf_s);
            put(&mut run, p, s_run);
            put(&mut rnrw, p, s_rnrw);
            put(&mut rnrs, p, s_rnrs);
            if s_x {
                put(&mut xd, p, true);
                put(&mut pxe, p, true);
                put(&mut xst, p, false);
                put(&mut xfl, p, bit(drn, p));
            } else if s_rw {
                put(&mut prw, p, true);
                put(&mut pgap, p, false);
                put(&mut run, p, false);
            }
        }

        if nak_ok {
            put(&mut nsk, nq, true);
            put(&mut run, nq, false);
            put(&mut rnrw, nq, false);
            put(&mut rnrs, nq, false);
            put(&mut prw, nq, false);
            put(&mut pgap, nq, false);
            if nak_x {
                put(&mut xd, nq, true);
                put(&mut pxe, nq, true);
                put(&mut xst, nq, i.nak_rnr);
                put(&mut xfl, nq, false);
            } else if i.nak_rnr {
                put(&mut rnrw, nq, true);
                put(&mut rnrs, nq, true);
                if nak_cnt && !bit(o.inf_q, nq) {
                    self.nl_q[nq] = nl_n.wrapping_sub(1) & 7;
                }
            } else {
                put(&mut prw, nq, true);
                if nak_cnt {
                    self.rl_q[nq] = rl_n.wrapping_sub(1) & 7;
                }
            }
        }

        if gap_ok {
            put(&mut run, gq, false);
            if gap_x {
                put(&mut xd, gq, true);
                put(&mut pxe, gq, true);
                put(&mut xst, gq, false);
                put(&mut xfl, gq, false);
                put(&mut prw, gq, false);
                put(&mut pgap, gq, false);
                put(&mut rnrw, gq, false);
                put(&mut rnrs, gq, false);
            } else {
                if gap_cnt {
                    self.rl_q[gq] = rl_g.wrapping_sub(1) & 7;
                }
                if gap_w {
                    put(&mut prw, gq, true);
                    put(&mut pgap, gq, true);
                }
            }
        }

        if i.clr_valid {
            put(&mut rld, cq, true);
            for v in [
                &mut nsk, &mut run, &mut rnrw, &mut rnrs, &mut prw, &mut pgap, &mut pxe, &mut xd,
            ] {
                put(v, cq, false);
            }
        }

        // Halted: no wait, no rewind; a timer and an exhaustion only
        // while draining.
        for v in [&mut rnrw, &mut rnrs, &mut prw, &mut pgap] {
            *v &= !halt;
        }
        run &= !frz;
        pxe &= !frz;

        // Rewind output.
        let sel = o.sel_q;
        let touched = (i.nak_valid && nq == sel)
            || (i.gap_valid && gq == sel)
            || (i.clr_valid && cq == sel)
            || bit(halt, sel)
            || (sact && (s_rw || s_x) && p == sel);
        let ld_rw = o.sel_v_q && bit(o.prw_q, sel) && !touched && (!o.rw_valid_q || i.rw_ready);
        self.rw_valid_q = (o.rw_valid_q && !i.rw_ready) || ld_rw;
        let mut rwp = o.rwp_q;
        if ld_rw {
            self.rw_qp_q = sel;
            self.rw_psn_q = if bit(o.pgap_q, sel) {
                o.gp_q
            } else {
                una_of(&i.una_all, sel)
            };
            rwp = (sel + 1) & QPM;
            put(&mut prw, sel, false);
            put(&mut pgap, sel, false);
        }
        let sel_d = first_from(prw, rwp).unwrap_or(rwp);
        self.sel_v_q = prw != 0;
        self.sel_q = sel_d;
        self.rwp_q = rwp;

        // Exhaustion output.
        let mut xmask = o.pxe_q & !frz;
        if i.clr_valid {
            xmask &= !(1 << cq);
        }
        let ld_xe = xmask != 0 && (!o.xerr_valid_q || i.xerr_ready);
        self.xerr_valid_q = (o.xerr_valid_q && !i.xerr_ready) || ld_xe;
        if ld_xe {
            let xc = first_from(xmask, o.xep_q).unwrap_or(o.xep_q);
            self.xerr_qp_q = xc;
            self.xerr_status_q = if bit(o.xfl_q, xc) {
                cqe_status::WR_FLUSH_ERR
            } else if bit(o.xst_q, xc) {
                cqe_status::RNR_RETRY_EXC_ERR
            } else {
                cqe_status::RETRY_EXC_ERR
            };
            self.xep_q = (xc + 1) & QPM;
            put(&mut pxe, xc, false);
        }

        // RAMs.
        if sact {
            self.mem_q[p] = (una_p as u128) << 48 | dl_new as u128;
        }
        self.row_q = o.mem_q[o.scan_q];
        if rnr_go {
            self.cmem_q[nq] = i.nak_timer & 31;
        }
        self.crow_q = if rnr_go && nq == o.scan_q {
            i.nak_timer & 31
        } else {
            o.cmem_q[o.scan_q]
        };
        if gap_w {
            self.gmem_q[gq] = i.gap_psn & 0xFF_FFFF;
        }
        self.gp_q = if gap_w && gq == sel_d {
            i.gap_psn & 0xFF_FFFF
        } else {
            o.gmem_q[sel_d]
        };

        self.now_q = (o.now_q + 1) & TW_MASK;
        self.scan_q = (o.scan_q + 1) & QPM;
        self.s1_v_q = true;
        self.run_q = run;
        self.rld_q = rld;
        self.nsk_q = nsk;
        self.rnrw_q = rnrw;
        self.rnrs_q = rnrs;
        self.prw_q = prw;
        self.pgap_q = pgap;
        self.pxe_q = pxe;
        self.xst_q = xst;
        self.xfl_q = xfl;
        self.xd_q = xd;
        self.inf_q = inf;
        self.ev_timeout_q = sact && s_tmo;
        self.ev_rewind_q = o.rw_valid_q && i.rw_ready;
        self.ev_rnr_wait_q = rnr_go;
        self.ev_exhaust_q = o.xerr_valid_q && i.xerr_ready;
        self.outputs()
    }
}

impl Trace for RetxCtl {
    /// The RTL's registers in its declaration order.
    fn trace(&self, t: &mut dyn Tracer) {
        let qpw = QPS.trailing_zeros();
        let qps = QPS as u32;
        t.reg("now_q", 48, &self.now_q);
        t.reg("scan_q", qpw, &self.scan_q);
        t.reg("s1_v_q", 1, &self.s1_v_q);
        t.reg("row_q", 72, &self.row_q);
        t.reg("crow_q", 5, &self.crow_q);
        t.each("mem_q", 72, &self.mem_q);
        t.each("cmem_q", 5, &self.cmem_q);
        t.each("gmem_q", 24, &self.gmem_q);
        t.reg("run_q", qps, &self.run_q);
        t.reg("rld_q", qps, &self.rld_q);
        t.reg("nsk_q", qps, &self.nsk_q);
        t.reg("rnrw_q", qps, &self.rnrw_q);
        t.reg("rnrs_q", qps, &self.rnrs_q);
        t.reg("prw_q", qps, &self.prw_q);
        t.reg("pgap_q", qps, &self.pgap_q);
        t.reg("pxe_q", qps, &self.pxe_q);
        t.reg("xst_q", qps, &self.xst_q);
        t.reg("xfl_q", qps, &self.xfl_q);
        t.reg("xd_q", qps, &self.xd_q);
        t.reg("inf_q", qps, &self.inf_q);
        t.reg("rl_q", 3 * qps, &self.rl_q);
        t.reg("nl_q", 3 * qps, &self.nl_q);
        t.reg("sel_v_q", 1, &self.sel_v_q);
        t.reg("sel_q", qpw, &self.sel_q);
        t.reg("gp_q", 24, &self.gp_q);
        t.reg("rwp_q", qpw, &self.rwp_q);
        t.reg("xep_q", qpw, &self.xep_q);
        t.reg("rw_valid_q", 1, &self.rw_valid_q);
        t.reg("rw_qp_q", qpw, &self.rw_qp_q);
        t.reg("rw_psn_q", 24, &self.rw_psn_q);
        t.reg("xerr_valid_q", 1, &self.xerr_valid_q);
        t.reg("xerr_qp_q", qpw, &self.xerr_qp_q);
        t.reg("xerr_status_q", 8, &self.xerr_status_q);
        t.reg("ev_timeout_q", 1, &self.ev_timeout_q);
        t.reg("ev_rewind_q", 1, &self.ev_rewind_q);
        t.reg("ev_rnr_wait_q", 1, &self.ev_rnr_wait_q);
        t.reg("ev_exhaust_q", 1, &self.ev_exhaust_q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn idle() -> RetxCtlIn {
        RetxCtlIn {
            attr_timeout: 1,
            attr_retry: 2,
            attr_rnr_retry: 1,
            rw_ready: true,
            xerr_ready: true,
            ..RetxCtlIn::default()
        }
    }

    #[test]
    fn sequence_nak_rewinds_two_cycles_later_then_exhausts() {
        let mut m = RetxCtl::with_units(4, 3);
        for _ in 0..2 * QPS {
            m.tick(&idle()); // counters loaded: retry 2
        }
        let mut seen = vec![];
        for k in 0..3 {
            let mut i = idle();
            i.nak_valid = true;
            i.nak_qp = 5;
            i.nak_psn = 0;
            // NAK at n: tick returns what is visible at n + 1, then n + 2.
            let o1 = m.tick(&i);
            let o2 = m.tick(&idle());
            m.tick(&idle());
            seen.push((k, o1.rw_valid, o1.xerr_valid, o2.rw_valid, o2.xerr_valid));
            if o2.xerr_valid {
                assert_eq!((o2.xerr_qp, o2.xerr_status), (5, 12));
            }
        }
        assert_eq!(
            seen,
            vec![
                (0, false, false, true, false),
                (1, false, false, true, false),
                (2, false, false, false, true)
            ]
        );
    }

    /// Until QP `q`'s exhaustion comes out: its status and the cycle.
    fn run_to_xerr(m: &mut RetxCtl, i: &RetxCtlIn, q: u8, limit: u64) -> Option<(u8, u64)> {
        (0..limit).find_map(|c| {
            let o = m.tick(i);
            (o.xerr_valid && o.xerr_qp == q).then_some((o.xerr_status, c))
        })
    }

    #[test]
    fn a_draining_qp_times_out_to_a_flush_without_rewind() {
        // QP 3 busy, timer period 4 << 1 = 8 cycles, 2 retries: in ERROR
        // outside error mode the first expiry gives up with status 5.
        let mut m = RetxCtl::with_units(4, 3);
        let mut i = idle();
        i.busy = 1 << 3;
        i.halt = 1 << 3;
        let (st, at) = run_to_xerr(&mut m, &i, 3, 200).expect("no exhaustion");
        assert_eq!(st, cqe_status::WR_FLUSH_ERR);
        // Started at its first scan (cycle 4), expired at a scan at least
        // one period later, out the cycle after.
        assert!(
            (12..=4 + 8 + 2 * QPS as u64 + 1).contains(&at),
            "out at {at}"
        );
        assert_eq!(m.prw_q, 0, "a halted QP never rewinds");
        // Once: exhausted until a restart.
        assert_eq!(run_to_xerr(&mut m, &i, 3, 200), None);
    }

    #[test]
    fn a_qp_in_error_mode_too_has_no_timer() {
        let mut m = RetxCtl::with_units(4, 3);
        let mut i = idle();
        i.busy = 1 << 3;
        i.halt = 1 << 3;
        i.err_mode = 1 << 3;
        assert_eq!(run_to_xerr(&mut m, &i, 3, 500), None);
        assert_eq!(m.run_q, 0);
    }

    #[test]
    fn rnr_table_matches_protocol() {
        assert_eq!(rnr_timer_units(0), 65536);
        assert_eq!(rnr_timer_units(1), 1);
        assert_eq!(rnr_timer_units(31), 49152);
    }
}
