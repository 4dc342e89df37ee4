//! `dcqcn`: the DCQCN reaction point of every QP (docs/protocol.md section 3,
//! docs/rx_cc.md "dcqcn"). Model of `hw/rtl/dcqcn.sv` (default parameters).
//!
//! Per QP registers: current rate `rc`, target rate `rt` (rate units, 2^-20
//! byte per cycle), `alpha` (Q20: 21 bits, 2^20 = 1.0; the `alpha` port
//! shows it >> 10, Q10, truncated), alpha timer `atmr`, increase timer `itmr`,
//! byte counter `bcnt`, stage counters `t` and `bc` (8 bits, saturating) and
//! two pending-event flags, `apend` (the alpha timer expired) and `ipend`
//! (the increase timer expired). A byte event is pending while
//! `bcnt >= cfg_b`; it needs no flag.
//!
//! One shared update datapath serves one QP per cycle:
//! 1. A CNP for a QP with `cc_en` takes it, the cycle it arrives (the cut is
//!    visible the next cycle): `rt := rc`, `rc := max(r_min, rc - (rc *
//!    alpha >> 21))`, `alpha := alpha - ceil(alpha / 2^g) + (2^20 >> g)`
//!    (floor((1 - g) alpha) + g: the rounding toward zero of docs/protocol.md section 3), and
//!    `t`, `bc`, `bcnt`, both timers and both flags := 0 (bytes sent in that
//!    cycle are not counted). Nothing else is served in that cycle.
//! 2. Otherwise the first QP at or after the round-robin pointer that has
//!    `cc_en` and something pending is served, and the pointer moves past
//!    it. Serving applies, at once, the alpha decay (`alpha := alpha -
//!    ceil(alpha / 2^g)`) if `apend`, and ONE increase event: the timer's if
//!    `ipend` (`t += 1`), else the byte counter's if `bcnt >= cfg_b` (`bc +=
//!    1`, `bcnt -= cfg_b`). A QP with both increase events pending thus gets
//!    two steps, on two turns, timer first. The step uses the incremented
//!    counters: fast recovery if `max(t, bc) < f` (`rt` unchanged), hyper if
//!    `min(t, bc) > f` (`rt := min(r_max, rt + r_hai * (min - f))`), else
//!    additive (`rt := min(r_max, rt + r_ai)`); then `rc := (rt + rc) >> 1`.
//! 3. Timers of enabled QPs count every cycle. A timer whose next value
//!    reaches its period (`timer + 1 >= period`, so a period of 0 acts as 1)
//!    restarts from 0 and sets its flag, unless the flag is still set after
//!    this cycle's service: then it waits at its value and expires the
//!    cycle the flag clears. Events are thus never lost, at worst late.
//!    The byte counter adds `tx_len` of the QP's frames, saturating at
//!    2^32 - 1.
//! 4. A QP without `cc_en` is held at `rc = rt = cfg_r_max`, `alpha =
//!    cfg_alpha_init << 10`, everything else 0 (reset leaves all registers
//!    0 for the first cycle; the held values appear one cycle after reset).
//!
//! Counters (32 bits, wrapping): `cnt_cnp` every CNP, `cnt_cut` the cuts
//! made, `cnt_fr`/`cnt_ai`/`cnt_hai` increase events by kind, `cnt_alpha`
//! alpha updates served.
//!
//! `cfg_mode` selects the behaviours of DCQCN as deployed (docs/rx_cc.md,
//! "DCQCN as deployed"; [`MODE_MON_CUT`] .. [`MODE_BYTE_OFF`]), each on its
//! own; 0 is the above. Their state: per QP `dmark`/`dpend` (a CNP in this
//! monitor period / a cut due), `amark`/`aup` (a CNP in this alpha period /
//! the due alpha update adds g), `start` (the QP has seen its first CNP),
//! and the shared period counters `mon_q` and `atk_q`. A due cut is served
//! by the round robin alone; a QP held by MODE_FIRST_CNP is treated as a
//! disabled one.

use crate::dut::Dut;
use crate::ports;
use crate::ports::Beat;
use crate::trace::{Trace, Tracer};

/// QPs (`QPS`); QP numbers are 4 bits.
pub use crate::params::QPS;

ports! {
    /// Inputs of `dcqcn` (all but `clk`/`rst`).
    pub struct DcqcnIn {
        /// Pulse: a CNP for `cnp_qp` arrived (rx_parser).
        pub cnp_valid: bool = 1,
        pub cnp_qp: u8 = 4 if cnp_valid,
        /// Pulse: a data frame of `tx_qp`, `tx_len` bytes without FCS, was
        /// committed (the rate limiter's charge).
        pub tx_valid: bool = 1,
        pub tx_qp: u8 = 4 if tx_valid,
        pub tx_len: u16 = 14 if tx_valid,
        /// Bit q: QP q uses congestion control.
        pub cc_en: u16 = 16,
        pub cfg_g_shift: u8 = 4,
        pub cfg_k: u32 = 24,
        pub cfg_t_inc: u32 = 24,
        pub cfg_b: u32 = 32,
        pub cfg_f: u8 = 8,
        pub cfg_r_ai: u32 = 32,
        pub cfg_r_hai: u32 = 32,
        pub cfg_r_min: u32 = 32,
        pub cfg_r_max: u32 = 32,
        pub cfg_alpha_init: u16 = 11,
        /// Deployed-DCQCN mode bits ([`MODE_MON_CUT`] ..); 0 = the paper's
        /// reaction point.
        pub cfg_mode: u8 = 6,
        /// Rate-reduce monitor period (cycles), with [`MODE_MON_CUT`].
        pub cfg_mon: u32 = 24,
        /// Alpha update period (cycles), with [`MODE_ALPHA_T`].
        pub cfg_alpha_t: u32 = 24,
    }
}

/// Mode bit 0: a CNP only marks the QP; the cut is made once, after the
/// shared monitor period (`cfg_mon`) in which CNPs arrived ends.
pub const MODE_MON_CUT: u8 = 1 << 0;
/// Mode bit 1: alpha is updated on its own shared period (`cfg_alpha_t`):
/// `(1 - g) alpha + g` if a CNP arrived in the period, else `(1 - g) alpha`;
/// the CNP itself leaves alpha alone and `cfg_k` is unused.
pub const MODE_ALPHA_T: u8 = 1 << 1;
/// Mode bit 2: a QP is held at its initial state (alpha = `cfg_alpha_init`,
/// timers stopped) until its first CNP, and again once increases have
/// brought it back to `r_max`.
pub const MODE_FIRST_CNP: u8 = 1 << 2;
/// Mode bit 3: target-rate clamp off: at a cut `rt := rc` only if an
/// increase event happened since the last cut.
pub const MODE_CLAMP_OFF: u8 = 1 << 3;
/// Mode bit 4: deployed increase stages: one stage count (timer and byte
/// events alike) taken before the event: FR below F, AI at F, HAI (one
/// `r_hai`) above.
pub const MODE_DEP_INC: u8 = 1 << 4;
/// Mode bit 5: no byte counter (increases from the timer alone).
pub const MODE_BYTE_OFF: u8 = 1 << 5;
/// The deployed default (the CSR's reset value): every behaviour of bits
/// 0..4, the byte counter on.
pub const MODE_DEPLOYED: u8 = 0x1F;

ports! {
    /// Outputs of `dcqcn`, all registered.
    pub struct DcqcnOut {
        /// QP q's current rate at bits `[32q, 32q + 32)`.
        pub rc: Beat = 512,
        /// QP q's target rate at bits `[32q, 32q + 32)`.
        pub rt: Beat = 512,
        /// QP q's alpha (Q10: the internal Q20 alpha >> 10) at bits
        /// `[11q, 11q + 11)`.
        pub alpha: Beat = 176,
        pub cnt_cnp: u32 = 32,
        pub cnt_cut: u32 = 32,
        pub cnt_fr: u32 = 32,
        pub cnt_ai: u32 = 32,
        pub cnt_hai: u32 = 32,
        pub cnt_alpha: u32 = 32,
    }
}

/// Rate of QP `q` in a packed `rc`/`rt` output.
pub fn rate_of(v: &Beat, q: usize) -> u32 {
    u32::from_le_bytes(v[4 * q..4 * q + 4].try_into().unwrap())
}

/// Alpha of QP `q` in a packed `alpha` output.
pub fn alpha_of(v: &Beat, q: usize) -> u16 {
    let mut a = 0u16;
    for k in 0..11 {
        let bit = 11 * q + k;
        a |= ((v[bit / 8] >> (bit % 8)) as u16 & 1) << k;
    }
    a
}

/// `QPS` rates packed as the `rc`/`rt` ports: QP q at bits `[32q, 32q + 32)`.
fn pack_rates(r: &[u32; QPS]) -> Beat {
    let mut b = Beat::default();
    for (q, v) in r.iter().enumerate() {
        b[4 * q..4 * q + 4].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// `QPS` internal (Q20) alphas packed as the `alpha` port, in Q10 (`>> 10`):
/// QP q at bits `[11q, 11q + 11)`.
fn pack_alphas(a: &[u32; QPS]) -> Beat {
    // 11-bit fields in 64-bit words (a field may straddle two).
    let mut w = [0u64; 3];
    for (q, a20) in a.iter().enumerate() {
        let v = (a20 >> 10) as u64 & 0x7FF;
        let bit = 11 * q;
        w[bit / 64] |= v << (bit % 64);
        if bit % 64 > 64 - 11 {
            w[bit / 64 + 1] |= v >> (64 - bit % 64);
        }
    }
    let mut b = Beat::default();
    for (k, word) in w.iter().enumerate() {
        b[8 * k..8 * k + 8].copy_from_slice(&word.to_le_bytes());
    }
    b
}

/// What the shared datapath writes back for the QP it handles this cycle.
#[derive(Debug, Clone, Copy)]
struct Update {
    rc: u32,
    rt: u32,
    alpha: u32,
    t: u8,
    bc: u8,
}

/// The reaction points. Field names are the RTL's registers (per-QP vectors
/// there are arrays here).
#[derive(Debug, Clone, Default)]
pub struct Dcqcn {
    rc_q: [u32; QPS],
    rt_q: [u32; QPS],
    /// Q20, 21 bits.
    alpha_q: [u32; QPS],
    atmr_q: [u32; QPS],
    itmr_q: [u32; QPS],
    bcnt_q: [u32; QPS],
    t_q: [u8; QPS],
    bc_q: [u8; QPS],
    apend_q: [bool; QPS],
    ipend_q: [bool; QPS],
    /// A CNP arrived in the current monitor period / a cut is due.
    dmark_q: [bool; QPS],
    dpend_q: [bool; QPS],
    /// A CNP arrived in the current alpha period / the due alpha update
    /// adds g.
    amark_q: [bool; QPS],
    aup_q: [bool; QPS],
    /// The QP has seen a CNP since it was enabled or released.
    start_q: [bool; QPS],
    /// Shared free-running period counters: monitor, alpha.
    mon_q: u32,
    atk_q: u32,
    rr_q: u8,
    cnt_cnp_q: u32,
    cnt_cut_q: u32,
    cnt_fr_q: u32,
    cnt_ai_q: u32,
    cnt_hai_q: u32,
    cnt_alpha_q: u32,
}

impl Dcqcn {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> DcqcnOut {
        DcqcnOut {
            rc: pack_rates(&self.rc_q),
            rt: pack_rates(&self.rt_q),
            alpha: pack_alphas(&self.alpha_q),
            cnt_cnp: self.cnt_cnp_q,
            cnt_cut: self.cnt_cut_q,
            cnt_fr: self.cnt_fr_q,
            cnt_ai: self.cnt_ai_q,
            cnt_hai: self.cnt_hai_q,
            cnt_alpha: self.cnt_alpha_q,
        }
    }
}

/// `floor((1 - 2^-g) * alpha)` = `alpha - ceil(alpha / 2^g)`: the ceiling
/// is `alpha >> g` plus one if any bit shifted out was set (rounding toward
/// zero, docs/protocol.md section 3).
fn alpha_keep(alpha: u32, g: u8) -> u32 {
    let lost = alpha & ((1u32 << g) - 1) != 0;
    alpha - (alpha >> g) - lost as u32
}

/// Next value of a timer and its flag, given the flag as this cycle's
/// service leaves it (`pend`): the timer restarts and sets the flag when its
/// next value reaches `period`, unless the flag is still set; then it waits.
fn timer_step(tmr: u32, pend: bool, period: u32) -> (u32, bool) {
    if tmr + 1 >= period {
        if pend {
            (tmr, true)
        } else {
            (0, true)
        }
    } else {
        (tmr + 1, pend)
    }
}

/// A shared free-running period counter after `n` ticks: it restarts from 0
/// the tick whose next value reaches `period` (0 acts as 1).
fn free_step(c: u32, period: u32, n: u64) -> u32 {
    if n == 0 {
        return c;
    }
    let p = period.max(1) as u64;
    if c as u64 + 1 >= p {
        ((n - 1) % p) as u32
    } else {
        ((c as u64 + n) % p) as u32
    }
}

impl Dut for Dcqcn {
    type In = DcqcnIn;
    type Out = DcqcnOut;
    const NAME: &'static str = "dcqcn";

    fn reset(&mut self) -> DcqcnOut {
        *self = Dcqcn::default();
        self.outputs()
    }

    fn tick(&mut self, i: &DcqcnIn) -> DcqcnOut {
        // Inputs as wide as their ports.
        let g = i.cfg_g_shift & 0xF;
        let k = i.cfg_k & 0xFF_FFFF;
        let t_inc = i.cfg_t_inc & 0xFF_FFFF;
        let alpha_init = ((i.cfg_alpha_init & 0x7FF) as u32) << 10;
        let tx_len = (i.tx_len & 0x3FFF) as u32;
        let cnp_qp = i.cnp_qp as usize % QPS;
        let tx_qp = i.tx_qp as usize % QPS;
        let en = |q: usize| i.cc_en >> q & 1 != 0;
        let m = i.cfg_mode & 0x3F;
        let m_mon = m & MODE_MON_CUT != 0;
        let m_at = m & MODE_ALPHA_T != 0;
        let m_first = m & MODE_FIRST_CNP != 0;
        let m_clamp_off = m & MODE_CLAMP_OFF != 0;
        let m_dep = m & MODE_DEP_INC != 0;
        let m_byte_off = m & MODE_BYTE_OFF != 0;

        // Shared period ticks.
        let mon_tick = self.mon_q + 1 >= (i.cfg_mon & 0xFF_FFFF);
        let at_tick = self.atk_q + 1 >= (i.cfg_alpha_t & 0xFF_FFFF);

        // A CNP of an enabled QP; with MODE_MON_CUT it only marks, else it
        // takes the datapath and cuts at once.
        let cnp_en = i.cnp_valid && en(cnp_qp);
        let cut_now = cnp_en && !m_mon;
        let cnp_here = |q: usize| cnp_en && q == cnp_qp;
        // Held at the initial state: disabled, or (MODE_FIRST_CNP) waiting
        // for its first CNP.
        let held = |q: usize| !en(q) || (m_first && !self.start_q[q] && !cnp_here(q));
        let running = |q: usize| en(q) && (!m_first || self.start_q[q]);

        // Otherwise the round robin over QPs with something pending.
        let bpend = |q: usize| !m_byte_off && self.bcnt_q[q] >= i.cfg_b;
        let want = |q: usize| {
            running(q) && (self.dpend_q[q] || self.apend_q[q] || self.ipend_q[q] || bpend(q))
        };
        let pick = (0..QPS)
            .map(|k| (self.rr_q as usize + k) % QPS)
            .find(|&q| want(q));
        let serve = !cut_now && pick.is_some();
        let p = pick.unwrap_or(0);
        let s = if cut_now { cnp_qp } else { p };

        // What the served QP gets: a due cut alone, else the alpha update
        // and one increase event.
        let do_cut = serve && self.dpend_q[p];
        let do_alpha = serve && !do_cut && self.apend_q[p];
        let inc_t = serve && !do_cut && self.ipend_q[p];
        let inc_b = serve && !do_cut && !self.ipend_q[p] && bpend(p);
        let cut = cut_now || do_cut;

        // The shared datapath, on QP s.
        let rc = self.rc_q[s];
        let rt = self.rt_q[s];
        let alpha = self.alpha_q[s];
        let mut up = Update {
            rc,
            rt,
            alpha,
            t: self.t_q[s],
            bc: self.bc_q[s],
        };
        let (mut fr, mut ai, mut hai) = (false, false, false);
        let keep = alpha_keep(alpha, g);
        let g_add = (1u32 << 20) >> g;
        if cut {
            // alpha < 2^21, so the cut is below rc: no underflow.
            let dec = ((rc as u64 * alpha as u64) >> 21) as u32;
            up.rc = (rc - dec).max(i.cfg_r_min);
            // Clamp off: rt follows rc only after an increase since the
            // last cut (the stage counters are 0 until one).
            let increased = up.t != 0 || up.bc != 0;
            up.rt = if m_clamp_off && !increased { rt } else { rc };
            if !m_at {
                // <= 2^20 when alpha <= 2^20; below alpha when alpha is
                // above (an alpha_init above 1.0): stays within 21 bits.
                up.alpha = keep + g_add;
            }
            up.t = 0;
            up.bc = 0;
        } else {
            if do_alpha {
                up.alpha = keep + if m_at && self.aup_q[p] { g_add } else { 0 };
            }
            let stage = up.t;
            if inc_t || (inc_b && m_dep) {
                up.t = up.t.saturating_add(1);
            }
            if inc_b && !m_dep {
                up.bc = up.bc.saturating_add(1);
            }
            if inc_t || inc_b {
                let r_max = i.cfg_r_max as u64;
                // Paper: the incremented counters, max / min of T and BC;
                // deployed: the one stage count before the event.
                let (is_fr, is_hai, mul) = if m_dep {
                    (stage < i.cfg_f, stage > i.cfg_f, 1u64)
                } else {
                    let hi = up.t.max(up.bc);
                    let lo = up.t.min(up.bc);
                    (
                        hi < i.cfg_f,
                        hi >= i.cfg_f && lo > i.cfg_f,
                        lo.wrapping_sub(i.cfg_f) as u64,
                    )
                };
                let rt_n = if is_fr {
                    fr = true;
                    rt as u64
                } else if is_hai {
                    hai = true;
                    (rt as u64 + i.cfg_r_hai as u64 * mul).min(r_max)
                } else {
                    ai = true;
                    (rt as u64 + i.cfg_r_ai as u64).min(r_max)
                };
                up.rt = rt_n as u32;
                up.rc = ((rt_n + rc as u64) >> 1) as u32;
            }
        }
        // MODE_FIRST_CNP: an increase that brings the QP back to r_max
        // (rt = r_max, rc at least r_max - 1) releases it, unless a CNP of
        // the period is marked or arrives now.
        let release = m_first
            && serve
            && (inc_t || inc_b)
            && up.rt == i.cfg_r_max
            && up.rc as u64 + 1 >= i.cfg_r_max as u64
            && !self.dmark_q[p]
            && !cnp_here(p);

        // Every QP's next state.
        let held: [bool; QPS] = std::array::from_fn(held);
        for (q, &held) in held.iter().enumerate() {
            if held {
                self.rc_q[q] = i.cfg_r_max;
                self.rt_q[q] = i.cfg_r_max;
                self.alpha_q[q] = alpha_init;
                self.atmr_q[q] = 0;
                self.itmr_q[q] = 0;
                self.bcnt_q[q] = 0;
                self.t_q[q] = 0;
                self.bc_q[q] = 0;
                self.apend_q[q] = false;
                self.ipend_q[q] = false;
                self.dmark_q[q] = false;
                self.dpend_q[q] = false;
                self.amark_q[q] = false;
                self.aup_q[q] = false;
                self.start_q[q] = false;
                continue;
            }
            let served = serve && q == p;
            let cq = cut && q == s;
            if served || cq {
                self.rc_q[q] = up.rc;
                self.rt_q[q] = up.rt;
                self.alpha_q[q] = up.alpha;
                self.t_q[q] = up.t;
                self.bc_q[q] = up.bc;
            }
            // This CNP counts in the alpha period unless it is the QP's
            // first under MODE_FIRST_CNP (which only sets the start).
            let amark_set = m_at && cnp_here(q) && (!m_first || self.start_q[q]);
            if m_at {
                let apend = self.apend_q[q] && !(served && do_alpha);
                let aup = self.aup_q[q] && !(served && do_alpha);
                let amark = self.amark_q[q] || amark_set;
                self.atmr_q[q] = 0;
                if at_tick {
                    self.apend_q[q] = true;
                    self.aup_q[q] = aup || amark;
                    self.amark_q[q] = false;
                } else {
                    self.apend_q[q] = apend;
                    self.aup_q[q] = aup;
                    self.amark_q[q] = amark;
                }
            } else {
                self.amark_q[q] = false;
                self.aup_q[q] = false;
                if cq {
                    self.atmr_q[q] = 0;
                    self.apend_q[q] = false;
                } else {
                    let apend = self.apend_q[q] && !served;
                    (self.atmr_q[q], self.apend_q[q]) = timer_step(self.atmr_q[q], apend, k);
                }
            }
            if cq {
                self.itmr_q[q] = 0;
                self.ipend_q[q] = false;
                self.bcnt_q[q] = 0;
            } else {
                let ipend = self.ipend_q[q] && !(served && inc_t);
                (self.itmr_q[q], self.ipend_q[q]) = timer_step(self.itmr_q[q], ipend, t_inc);
                let mut b = self.bcnt_q[q];
                if served && inc_b {
                    b -= i.cfg_b;
                }
                if i.tx_valid && q == tx_qp {
                    b = b.saturating_add(tx_len);
                }
                self.bcnt_q[q] = if m_byte_off { 0 } else { b };
            }
            if m_mon {
                let dmark = self.dmark_q[q] || cnp_here(q);
                let dpend = self.dpend_q[q] && !(served && do_cut);
                if mon_tick {
                    self.dpend_q[q] = dpend || dmark;
                    self.dmark_q[q] = false;
                } else {
                    self.dpend_q[q] = dpend;
                    self.dmark_q[q] = dmark;
                }
            } else {
                self.dmark_q[q] = false;
                self.dpend_q[q] = false;
            }
            self.start_q[q] = (self.start_q[q] && !(served && release)) || cnp_here(q);
        }

        self.mon_q = if mon_tick { 0 } else { self.mon_q + 1 };
        self.atk_q = if at_tick { 0 } else { self.atk_q + 1 };
        if serve {
            self.rr_q = (p as u8 + 1) % QPS as u8;
        }
        self.cnt_cnp_q = self.cnt_cnp_q.wrapping_add(i.cnp_valid as u32);
        self.cnt_cut_q = self.cnt_cut_q.wrapping_add(cut as u32);
        self.cnt_fr_q = self.cnt_fr_q.wrapping_add(fr as u32);
        self.cnt_ai_q = self.cnt_ai_q.wrapping_add(ai as u32);
        self.cnt_hai_q = self.cnt_hai_q.wrapping_add(hai as u32);
        self.cnt_alpha_q = self.cnt_alpha_q.wrapping_add(do_alpha as u32);
        self.outputs()
    }
}

impl Dcqcn {
    /// Ticks with inputs `i` for which nothing but the timers moves: no
    /// CNP, no frame, no QP with service pending, every running QP's
    /// timers short of their period, and no shared period tick that would
    /// flag a QP. 0 otherwise.
    pub fn idle_horizon(&self, i: &DcqcnIn) -> u64 {
        if i.cnp_valid || i.tx_valid {
            return 0;
        }
        let k = i.cfg_k & 0xFF_FFFF;
        let t_inc = i.cfg_t_inc & 0xFF_FFFF;
        let m = i.cfg_mode & 0x3F;
        let m_at = m & MODE_ALPHA_T != 0;
        let m_first = m & MODE_FIRST_CNP != 0;
        // Ticks before a shared counter's next tick (its tick is the one
        // whose next value reaches the period).
        let until = |c: u32, period: u32| (period as u64).saturating_sub(c as u64 + 1);
        let mon_left = until(self.mon_q, i.cfg_mon & 0xFF_FFFF);
        let at_left = until(self.atk_q, i.cfg_alpha_t & 0xFF_FFFF);
        let mut h = u64::MAX;
        for q in 0..QPS {
            if i.cc_en >> q & 1 == 0 || (m_first && !self.start_q[q]) {
                continue;
            }
            let bpend = m & MODE_BYTE_OFF == 0 && self.bcnt_q[q] >= i.cfg_b;
            if self.apend_q[q] || self.ipend_q[q] || self.dpend_q[q] || bpend {
                return 0;
            }
            if self.dmark_q[q] {
                h = h.min(mon_left);
            }
            // timer_step fires at the tick whose tmr + 1 reaches the period.
            h = h.min(until(self.itmr_q[q], t_inc));
            if m_at {
                h = h.min(at_left);
            } else {
                h = h.min(until(self.atmr_q[q], k));
            }
        }
        h
    }

    /// `n` ticks with inputs `i` at once (`n` within the horizon): the
    /// running QPs' timers and the shared counters advance, the held QPs
    /// keep their initial values, nothing else changes.
    pub fn skip(&mut self, i: &DcqcnIn, n: u64) {
        if n == 0 {
            return;
        }
        let alpha_init = ((i.cfg_alpha_init & 0x7FF) as u32) << 10;
        let m = i.cfg_mode & 0x3F;
        let m_at = m & MODE_ALPHA_T != 0;
        let m_first = m & MODE_FIRST_CNP != 0;
        self.mon_q = free_step(self.mon_q, i.cfg_mon & 0xFF_FFFF, n);
        self.atk_q = free_step(self.atk_q, i.cfg_alpha_t & 0xFF_FFFF, n);
        for q in 0..QPS {
            if i.cc_en >> q & 1 != 0 && (!m_first || self.start_q[q]) {
                if !m_at {
                    self.atmr_q[q] += n as u32;
                }
                self.itmr_q[q] += n as u32;
                if m & MODE_BYTE_OFF != 0 {
                    self.bcnt_q[q] = 0;
                }
            } else {
                self.rc_q[q] = i.cfg_r_max;
                self.rt_q[q] = i.cfg_r_max;
                self.alpha_q[q] = alpha_init;
                self.atmr_q[q] = 0;
                self.itmr_q[q] = 0;
                self.bcnt_q[q] = 0;
                self.t_q[q] = 0;
                self.bc_q[q] = 0;
                self.apend_q[q] = false;
                self.ipend_q[q] = false;
                self.dmark_q[q] = false;
                self.dpend_q[q] = false;
                self.amark_q[q] = false;
                self.aup_q[q] = false;
                self.start_q[q] = false;
            }
        }
    }
}

impl Trace for Dcqcn {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("rc_q", 512, &self.rc_q);
        t.reg("rt_q", 512, &self.rt_q);
        t.reg("alpha_q", 336, &self.alpha_q);
        t.reg("atmr_q", 384, &self.atmr_q);
        t.reg("itmr_q", 384, &self.itmr_q);
        t.reg("bcnt_q", 512, &self.bcnt_q);
        t.reg("t_q", 128, &self.t_q);
        t.reg("bc_q", 128, &self.bc_q);
        t.reg("apend_q", 16, &self.apend_q);
        t.reg("ipend_q", 16, &self.ipend_q);
        t.reg("dmark_q", 16, &self.dmark_q);
        t.reg("dpend_q", 16, &self.dpend_q);
        t.reg("amark_q", 16, &self.amark_q);
        t.reg("aup_q", 16, &self.aup_q);
        t.reg("start_q", 16, &self.start_q);
        t.reg("mon_q", 24, &self.mon_q);
        t.reg("atk_q", 24, &self.atk_q);
        t.reg("rr_q", 4, &self.rr_q);
        t.reg("cnt_cnp_q", 32, &self.cnt_cnp_q);
        t.reg("cnt_cut_q", 32, &self.cnt_cut_q);
        t.reg("cnt_fr_q", 32, &self.cnt_fr_q);
        t.reg("cnt_ai_q", 32, &self.cnt_ai_q);
        t.reg("cnt_hai_q", 32, &self.cnt_hai_q);
        t.reg("cnt_alpha_q", 32, &self.cnt_alpha_q);
    }
}

#[cfg(test)]
mod tests;
