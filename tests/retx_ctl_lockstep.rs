//! Constrained-random block-level lockstep of `retx_ctl`, the requester's
//! retransmission decisions (docs/retx_ctl.md).
//!
//! The environment plays ack_tracker (per QP una and nxt, `busy`, sequence
//! and RNR NAKs with una := the NAK's PSN, QPs that stop making progress),
//! rd_sink (gaps), csr (the RETRY table behind the registered `attr_idx`
//! read port, `halt` and `err_mode` a few cycles after an exhaustion was
//! taken, `halt` alone now and then as software or a responder fault would
//! set it, restarts `clr` with new attributes), tx_engine and ack_tracker's
//! back-pressure on `rw_ready` and `xerr_ready`. A QP halted outside error
//! mode (draining) still sees ACKs and NAKs move its una. Model and RTL are
//! compared every cycle.
//!
//! The reference is written from the contract, not from the model:
//! - counters: retry_left / rnr_left per QP, reloaded at the scan slot the
//!   page defines (QP p is decided at cycles m = p + 1 mod QPS) when una
//!   differs from the una of the previous scan and no NAK came since, or
//!   when a reload is pending (reset, clear); every sequence NAK, gap and
//!   timeout counts, RNR NAKs count unless rnr_retry = 7;
//! - timeouts: `ev_timeout` names the scanned QP; it must be eligible (busy,
//!   not halted or draining, timer on, nothing pending, no RNR wait) since its last
//!   restart cause R, come no earlier than R + period and no later than
//!   R + period + 2 QPS (a missed one fails the run);
//! - every rewind: its QP not halted at the load, a cause the reference
//!   holds (NAK, gap, timeout, or an RNR wait whose earliest end passed),
//!   its PSN (una at the load, or the last gap PSN), and delivered within
//!   a bound that grows only with the cycles the output was busy; every
//!   exhaustion: its QP and status 12 / 13 as the counters predict, or 5
//!   for a draining QP's first timeout (no retry spent, no rewind);
//! - exact latency: a sequence NAK meeting an idle output is on `rw_*` two
//!   cycles later;
//! - the pulses, cycle by cycle.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`.

mod common;

use rnic_model::ports::PsnVec;
use rnic_model::retx_ctl::{set_una, RetxCtl, RetxCtlIn, RetxCtlOut};
use rnic_model::Dut;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::{RtlRetxCtl, RtlRetxCtlFast};

const DEFAULT_CASES: u64 = 64;
/// Cases of the run at default units (150,000 cycles each).
const DEFAULT_UNIT_CASES: u64 = 4;
const DEFAULT_SEED: u64 = 0x7265_7478_5F63_746C; // "retx_ctl"
const QPS: usize = 16;
const PSN: u32 = 0xFF_FFFF;

/// RNR timer codes in units of 10 us: docs/protocol.md section 8's
/// milliseconds divided by 0.01 (written out here, not the model's table).
fn rnr_units(code: u8) -> u64 {
    let ms = [
        655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28,
        1.92, 2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88,
        163.84, 245.76, 327.68, 491.52,
    ];
    (ms[code as usize] / 0.01_f64).round() as u64
}

#[derive(Debug, Default, Clone, Copy)]
struct Cover {
    cycles: u64,
    timeouts: u64,
    nak_rewinds: u64,
    rnr_waits: u64,
    gaps: u64,
    rewinds: u64,
    exh12: u64,
    exh13: u64,
    /// Exhaustions with status 5: a draining QP's timer ran out.
    exh5: u64,
    /// Cycles a QP drains (halted outside error mode) with PSNs outstanding.
    drain_busy: u64,
    /// Cycles a QP is in error mode before csr's ERROR.
    err_alone: u64,
    /// Draining QPs that entered error mode (a remote-error NAK).
    drain_err: u64,
    clears: u64,
    rw_stalls: u64,
    xerr_stalls: u64,
    fast_naks: u64,
    merged: u64,
}

impl Cover {
    /// The floors of `random_retx_ctl_lockstep` for `n` cases asked for.
    fn fast_met(&self, n: u64) -> bool {
        self.cycles >= n * 20_000
            && self.timeouts >= n * 125
            && self.nak_rewinds >= n * 30
            && self.rnr_waits >= n * 14
            && self.gaps >= n * 25
            && self.exh12 >= n * 14
            && self.exh13 >= n
            && self.exh5 >= n / 2
            && self.drain_busy >= n * 500
            && self.err_alone >= n * 20
            && self.drain_err >= n
            && self.clears >= n * 17
            && self.rw_stalls >= n * 150
            && self.xerr_stalls >= n * 50
            && self.fast_naks >= n * 20
            && self.merged >= 5
    }

    /// The floors of the default-units test for `n` cases asked for.
    fn unit_met(&self, n: u64) -> bool {
        self.cycles >= n * 150_000
            && self.timeouts >= n * 60
            && self.nak_rewinds >= n * 25
            && self.rnr_waits >= n * 10
            && self.exh12 >= n * 15
            && self.exh13 >= 2
            && self.exh5 >= n
            && self.fast_naks >= n * 10
    }

    fn add(&mut self, c: &Cover) {
        self.cycles += c.cycles;
        self.timeouts += c.timeouts;
        self.nak_rewinds += c.nak_rewinds;
        self.rnr_waits += c.rnr_waits;
        self.gaps += c.gaps;
        self.rewinds += c.rewinds;
        self.exh12 += c.exh12;
        self.exh13 += c.exh13;
        self.exh5 += c.exh5;
        self.drain_busy += c.drain_busy;
        self.err_alone += c.err_alone;
        self.drain_err += c.drain_err;
        self.clears += c.clears;
        self.rw_stalls += c.rw_stalls;
        self.xerr_stalls += c.xerr_stalls;
        self.fast_naks += c.fast_naks;
        self.merged += c.merged;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pend {
    None,
    Una,
    Gap(u32),
}

#[derive(Debug, Clone, Copy)]
struct Attr {
    timeout: u8,
    retry: u8,
    rnr: u8,
}

/// One QP: the environment's window and the reference's state.
#[derive(Debug, Clone)]
struct Qp {
    una: u32,
    nxt: u32,
    halt: bool,
    /// ack_tracker's error mode (halted without it: draining).
    err_mode: bool,
    attr: Attr,
    /// ACK progress per mille per cycle (0: stuck).
    ack_rate: u64,
    /// Cycle at which to raise halt, and error mode with it (after an
    /// exhaustion was taken) or not (software, a responder fault).
    halt_at: Option<(u64, bool)>,
    /// Cycle at which to raise error mode alone: ack_tracker's comes a
    /// few cycles before csr's ERROR, and a remote-error NAK may reach a
    /// draining QP.
    err_at: Option<u64>,
    // Reference.
    rl: u8,
    nl: u8,
    inf: bool,
    reload: bool,
    nak_since: bool,
    seen: u32,
    exhausted: bool,
    pend: Pend,
    /// The cycle the pending rewind must be loaded by (extended while the
    /// output is busy).
    pend_due: u64,
    /// RNR wait: earliest load cycle and due cycle of its rewind.
    rnr: Option<(u64, u64, bool)>,
    /// An exhaustion to deliver (status) and its due cycle.
    xexp: Option<(u8, u64)>,
    /// Last timer restart cause, and whether eligible since.
    r: u64,
    elig: bool,
}

struct RetxEnv {
    rng: SplitMix64,
    len: u64,
    t_unit: u64,
    r_unit: u64,
    cycle: u64,
    q: Vec<Qp>,
    prev_in: Option<RetxCtlIn>,
    prev_out: RetxCtlOut,
    prev_idx: usize,
    rw_pct: u8,
    xe_pct: u8,
    nak_pm: u64,
    gap_pm: u64,
    clr_pm: u64,
    /// Expected on rw_* at the next cycle (exact latency cases).
    expect_rw: Option<(u64, usize, u32)>,
    last_una: [u32; QPS],
    cover: Cover,
}

fn psn_add(a: u32, b: u32) -> u32 {
    a.wrapping_add(b) & PSN
}

fn psn_diff(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & PSN
}

impl RetxEnv {
    fn new(seed: u64, len: u64, t_unit: u64, r_unit: u64, slow: bool) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mut q = Vec::new();
        for _ in 0..QPS {
            let start = rng.below(1 << 24) as u32;
            let attr = Self::draw_attr(&mut rng, slow);
            let ack_rate = [0, 0, 2, 10, 50][rng.below(5) as usize];
            q.push(Qp {
                una: start,
                nxt: start,
                halt: false,
                err_mode: false,
                attr,
                ack_rate,
                halt_at: None,
                err_at: None,
                rl: 0,
                nl: 0,
                inf: false,
                reload: true,
                nak_since: false,
                seen: 0,
                exhausted: false,
                pend: Pend::None,
                pend_due: 0,
                rnr: None,
                xexp: None,
                r: 0,
                elig: false,
            });
        }
        let rw_pct = [100, 90, 50, 20][rng.below(4) as usize];
        let xe_pct = [100, 50, 10][rng.below(3) as usize];
        let (nak_pm, gap_pm, clr_pm) = if slow {
            (1, 1, 1)
        } else {
            (10 + rng.below(30), 5 + rng.below(20), 1 + rng.below(4))
        };
        RetxEnv {
            rng,
            len,
            t_unit,
            r_unit,
            cycle: 0,
            q,
            prev_in: None,
            prev_out: RetxCtlOut::default(),
            prev_idx: 0,
            rw_pct,
            xe_pct,
            nak_pm,
            gap_pm,
            clr_pm,
            expect_rw: None,
            last_una: [0; QPS],
            cover: Cover::default(),
        }
    }

    fn draw_attr(rng: &mut SplitMix64, slow: bool) -> Attr {
        let timeout = if slow {
            1 + rng.below(2) as u8
        } else {
            [0, 1, 2, 3, 4, 5, 6][rng.below(7) as usize]
        };
        Attr {
            timeout,
            retry: rng.below(8) as u8,
            rnr: rng.below(8) as u8,
        }
    }

    fn period(&self, q: usize) -> u64 {
        self.t_unit << self.q[q].attr.timeout
    }

    /// Halted in error mode: nothing runs.
    fn frozen(qp: &Qp) -> bool {
        qp.halt && qp.err_mode
    }

    fn eligible(qp: &Qp) -> bool {
        qp.una != qp.nxt
            && !Self::frozen(qp)
            && qp.attr.timeout != 0
            && !qp.exhausted
            && qp.pend == Pend::None
            && qp.rnr.is_none()
    }

    fn set_pend(&mut self, q: usize, p: Pend, c: u64) {
        let qp = &mut self.q[q];
        if qp.pend == Pend::None {
            qp.pend_due = c + 3 + QPS as u64;
        }
        qp.pend = p;
    }

    fn exhaust(&mut self, q: usize, status: u8, c: u64) {
        let qp = &mut self.q[q];
        qp.exhausted = true;
        qp.pend = Pend::None;
        qp.rnr = None;
        qp.xexp = Some((status, c + 3 + QPS as u64));
    }

    /// Cycle `c`'s inputs `i` and the outputs they produced (visible at
    /// c + 1, `o`; `before` visible at c): the reference follows the
    /// contract through cycle c. The QPs' una and halt are still cycle c's.
    fn check_cycle(&mut self, c: u64, i: &RetxCtlIn, o: &RetxCtlOut, before: &RetxCtlOut) {
        let halt = i.halt;
        let nq = i.nak_qp as usize;
        let gq = i.gap_qp as usize;
        let cq = i.clr_qp as usize;
        let hit = |q: usize| {
            (i.nak_valid && nq == q) || (i.gap_valid && gq == q) || (i.clr_valid && cq == q)
        };
        let mut cause = [false; QPS];

        // 1. Output loads at c (a new offer visible at c + 1), from what was
        //    pending before cycle c's events.
        let rw_stalled = before.rw_valid && !i.rw_ready;
        let rw_load = o.rw_valid && !rw_stalled;
        if rw_load {
            let q = o.rw_qp as usize;
            assert!(
                halt >> q & 1 == 0,
                "cycle {c}: rewind loaded for halted QP {q}"
            );
            assert!(
                !hit(q),
                "cycle {c}: rewind of QP {q} loaded in a cycle touching it"
            );
            let qp = &self.q[q];
            let una = qp.una;
            let rnr_ok = qp.rnr.is_some_and(|(lo, _, _)| c >= lo);
            let ok = match qp.pend {
                Pend::Una => o.rw_psn == una,
                Pend::Gap(p) => o.rw_psn == p || (rnr_ok && o.rw_psn == una),
                Pend::None => rnr_ok && o.rw_psn == una,
            };
            assert!(
                ok,
                "cycle {c}: rewind of QP {q} to {:#x}: reference pend {:?}, rnr {:?}, una {una:#x}",
                o.rw_psn, qp.pend, qp.rnr
            );
            // (Its PSN, una at the load, was checked above: the NAK's PSN
            // unless an ACK moved una since.)
            if let Some((cy, eq, _)) = self.expect_rw {
                assert_eq!((cy, eq), (c + 1, q), "cycle {c}: NAK latency");
                self.expect_rw = None;
                self.cover.fast_naks += 1;
            }
            let qp = &mut self.q[q];
            let gap_only = matches!(qp.pend, Pend::Gap(p) if p == o.rw_psn);
            if rnr_ok && !gap_only {
                qp.rnr = None;
            } else if let Some(r) = qp.rnr.as_mut() {
                if gap_only && o.rw_psn == una {
                    // Either the gap or the RNR wait's end: the wait may be over.
                    r.2 = false;
                }
            }
            qp.pend = Pend::None;
            cause[q] = true;
        }
        let xe_stalled = before.xerr_valid && !i.xerr_ready;
        let xe_load = o.xerr_valid && !xe_stalled;
        if xe_load {
            let q = o.xerr_qp as usize;
            assert!(
                !Self::frozen(&self.q[q]),
                "cycle {c}: exhaustion loaded for QP {q} halted in error mode"
            );
            let st = self.q[q].xexp.take().map(|x| x.0);
            assert_eq!(st, Some(o.xerr_status), "cycle {c}: exhaustion of QP {q}");
            match o.xerr_status {
                12 => self.cover.exh12 += 1,
                13 => self.cover.exh13 += 1,
                _ => self.cover.exh5 += 1,
            }
        }

        // 2. The scan of cycle c: QP (c - 1) mod QPS, before the events.
        let timeout_q = o.ev_timeout.then_some((c as usize + QPS - 1) % QPS);
        if c >= 1 {
            let p = (c as usize - 1) % QPS;
            let qp = &mut self.q[p];
            if !hit(p) && !Self::frozen(qp) && !qp.exhausted {
                let prog = !qp.nak_since && qp.una != qp.seen;
                if qp.reload || prog {
                    qp.rl = qp.attr.retry;
                    qp.nl = qp.attr.rnr;
                    qp.inf = qp.attr.rnr == 7;
                }
                qp.reload = false;
                qp.nak_since = false;
                qp.seen = qp.una;
            }
        } else {
            assert!(timeout_q.is_none(), "cycle 0 scans nothing");
        }
        if let Some(q) = timeout_q {
            let per = self.period(q);
            let qp = &mut self.q[q];
            // After a rewind that was either a gap's or an RNR wait's end
            // (same PSN), the wait may be over: the timer may run.
            let unsure = matches!(qp.rnr, Some((_, _, false)));
            if unsure {
                qp.rnr = None;
            }
            assert!(
                unsure || (qp.elig && c >= qp.r + per && c <= qp.r + per + 2 * QPS as u64),
                "cycle {c}: timeout of QP {q}: eligible {} since {}, period {per} ({qp:?})",
                qp.elig,
                qp.r
            );
            self.cover.timeouts += 1;
            cause[q] = true;
            if self.q[q].halt {
                // Draining: no retry, no rewind: flushed.
                self.exhaust(q, 5, c);
            } else if self.q[q].rl == 0 {
                self.exhaust(q, 12, c);
            } else {
                self.q[q].rl -= 1;
                self.set_pend(q, Pend::Una, c);
            }
        }

        // 3. Events of cycle c (una already moved by the NAK).
        // Halted, exhausted or cleared this cycle: its NAKs and gaps do nothing.
        let quiet: Vec<bool> = (0..QPS)
            .map(|q| self.q[q].halt || self.q[q].exhausted || (i.clr_valid && cq == q))
            .collect();
        let nak_ok = i.nak_valid && !quiet[nq];
        let mut rnr_go = false;
        let mut nak_rewind = false;
        if nak_ok {
            cause[nq] = true;
            let cnt = !self.q[nq].reload;
            self.q[nq].nak_since = true;
            if i.nak_rnr {
                let (nl, inf) = (self.q[nq].nl, self.q[nq].inf);
                if cnt && !inf && nl == 0 {
                    self.exhaust(nq, 13, c);
                } else {
                    let qp = &mut self.q[nq];
                    if cnt && !inf {
                        qp.nl -= 1;
                    }
                    qp.pend = Pend::None;
                    let w = rnr_units(i.nak_timer) * self.r_unit;
                    let q3 = 3 * QPS as u64;
                    qp.rnr = Some((c + w + 2, c + w + q3 + 3, true));
                    rnr_go = true;
                    self.cover.rnr_waits += 1;
                }
            } else if cnt && self.q[nq].rl == 0 {
                self.exhaust(nq, 12, c);
            } else {
                if cnt {
                    self.q[nq].rl -= 1;
                }
                self.q[nq].rnr = None;
                self.set_pend(nq, Pend::Una, c);
                nak_rewind = true;
                self.cover.nak_rewinds += 1;
            }
        }
        let same_as_nak = i.nak_valid && nq == gq;
        let gap_ok = i.gap_valid && !quiet[gq] && !same_as_nak;
        if gap_ok {
            cause[gq] = true;
            self.cover.gaps += 1;
            let cnt = !self.q[gq].reload;
            if cnt && self.q[gq].rl == 0 {
                self.exhaust(gq, 12, c);
            } else {
                if cnt {
                    self.q[gq].rl -= 1;
                }
                if self.q[gq].pend == Pend::Una {
                    self.cover.merged += 1;
                } else {
                    self.set_pend(gq, Pend::Gap(i.gap_psn), c);
                }
            }
        }
        if i.clr_valid {
            let qp = &mut self.q[cq];
            qp.reload = true;
            qp.nak_since = false;
            qp.exhausted = false;
            qp.pend = Pend::None;
            qp.rnr = None;
            qp.xexp = None;
            cause[cq] = true;
            self.cover.clears += 1;
        }
        for q in 0..QPS {
            if halt >> q & 1 != 0 {
                let qp = &mut self.q[q];
                qp.pend = Pend::None;
                qp.rnr = None;
                if qp.err_mode {
                    qp.xexp = None;
                }
            }
        }
        assert_eq!(o.ev_rnr_wait, rnr_go, "cycle {c}: ev_rnr_wait");
        assert_eq!(
            o.ev_rewind,
            before.rw_valid && i.rw_ready,
            "cycle {c}: ev_rewind"
        );
        assert_eq!(
            o.ev_exhaust,
            before.xerr_valid && i.xerr_ready,
            "cycle {c}: ev_exhaust"
        );
        if o.ev_rewind {
            self.cover.rewinds += 1;
        }

        // 4. Exact latency: a sequence NAK at c meeting an idle rewind path
        //    (nothing else pending, no RNR wait anywhere, rw_* empty at
        //    c + 1) is on rw_* at c + 2, unless cycle c + 1 touches its QP.
        if let Some((cy, eq, _)) = self.expect_rw {
            if cy == c + 1 && (hit(eq) || halt >> eq & 1 != 0) {
                self.expect_rw = None;
            }
        }
        if let Some((cy, eq, _)) = self.expect_rw {
            assert!(cy > c + 1, "cycle {c}: NAK of QP {eq} not on rw_* at {cy}");
        }
        if nak_rewind
            && !o.rw_valid
            && (0..QPS).all(|q| q == nq || self.q[q].pend == Pend::None)
            && self.q.iter().all(|x| x.rnr.is_none())
        {
            self.expect_rw = Some((c + 2, nq, i.nak_psn));
        }

        // 5. Liveness: what is owed is delivered, allowing for a busy output.
        let busy_out = o.rw_valid || i.nak_valid || i.gap_valid || i.clr_valid;
        for q in 0..QPS {
            let qp = &mut self.q[q];
            if qp.pend != Pend::None {
                if busy_out {
                    qp.pend_due += 1;
                }
                assert!(
                    c <= qp.pend_due,
                    "cycle {c}: rewind of QP {q} not delivered ({:?})",
                    qp.pend
                );
            }
            if let Some((lo, due, must)) = qp.rnr.as_mut() {
                if c >= *lo && busy_out {
                    *due += 1;
                }
                assert!(
                    !*must || c <= *due,
                    "cycle {c}: RNR rewind of QP {q} not delivered"
                );
            }
            if let Some((_, due)) = qp.xexp.as_mut() {
                if o.xerr_valid {
                    *due += 1;
                }
                assert!(c <= *due, "cycle {c}: exhaustion of QP {q} not delivered");
            }
        }

        // 6. The ACK timer: restart causes and eligibility after cycle c.
        for (q, &cause) in cause.iter().enumerate() {
            let per = self.period(q);
            let moved = self.q[q].una != self.last_una[q];
            let qp = &mut self.q[q];
            let e = Self::eligible(qp);
            if !e || cause || moved {
                qp.r = c;
            }
            qp.elig = e;
            if e {
                assert!(
                    c <= qp.r + per + 2 * QPS as u64 + 1,
                    "cycle {c}: QP {q} missed its timeout (restart {}, period {per})",
                    qp.r
                );
            }
            self.last_una[q] = qp.una;
        }
    }

    fn input(&self) -> RetxCtlIn {
        let mut una_all = PsnVec::default();
        let (mut busy, mut halt, mut err_mode) = (0u16, 0u16, 0u16);
        for (q, qp) in self.q.iter().enumerate() {
            set_una(&mut una_all, q, qp.una);
            busy |= ((qp.una != qp.nxt) as u16) << q;
            halt |= (qp.halt as u16) << q;
            err_mode |= (qp.err_mode as u16) << q;
        }
        RetxCtlIn {
            una_all,
            busy,
            halt,
            err_mode,
            ..RetxCtlIn::default()
        }
    }
}

impl Env for RetxEnv {
    type In = RetxCtlIn;
    type Out = RetxCtlOut;

    fn step(&mut self, c: u64, out: &RetxCtlOut) -> RetxCtlIn {
        self.cycle = c;
        let before = self.prev_out;
        if let Some(pi) = self.prev_in.take() {
            self.check_cycle(c - 1, &pi, out, &before);
        }
        self.prev_out = *out;

        // The world moves: ack_tracker's window, halts.
        // Software or a responder fault: ERROR without error mode.
        if self.rng.below(1500) == 0 {
            let q = self.rng.below(QPS as u64) as usize;
            self.q[q].halt_at.get_or_insert((c, false));
        }
        for q in 0..QPS {
            let r1 = self.rng.below(1000);
            let r2 = self.rng.below(1000);
            let qp = &mut self.q[q];
            if let Some((t, em)) = qp.halt_at {
                if c >= t {
                    qp.halt = true;
                    qp.err_mode |= em;
                    qp.halt_at = None;
                }
            }
            if qp.err_at.is_some_and(|t| c >= t) {
                self.cover.drain_err += (qp.halt && !qp.err_mode) as u64;
                qp.err_mode = true;
                qp.err_at = None;
            }
            self.cover.err_alone += (qp.err_mode && !qp.halt) as u64;
            // A remote-error NAK reaches a draining QP now and then.
            if qp.halt && !qp.err_mode && qp.err_at.is_none() && r1 == 999 && r2 < 250 {
                qp.err_at = Some(c + 1);
            }
            if Self::frozen(qp) {
                continue;
            }
            if qp.halt && qp.una != qp.nxt {
                self.cover.drain_busy += 1;
            }
            // Nothing new is sent in ERROR; ACKs still come.
            if !qp.halt && r1 < 20 && psn_diff(qp.nxt, qp.una) < 64 {
                qp.nxt = psn_add(qp.nxt, 1 + (r2 % 4) as u32);
            }
            if r2 < qp.ack_rate && qp.una != qp.nxt {
                let d = psn_diff(qp.nxt, qp.una);
                qp.una = psn_add(qp.una, 1 + (r1 as u32 % d));
            }
        }
        // Software: restart a QP now and then (a halted one mostly).
        let mut clr = None;
        if self.rng.below(1000) < self.clr_pm {
            let mut q = self.rng.below(QPS as u64) as usize;
            if let Some(h) = (0..QPS).find(|&k| self.q[(q + k) % QPS].halt) {
                if self.rng.below(4) != 0 {
                    q = (q + h) % QPS;
                }
            }
            let slow = self.t_unit > 100;
            let start = self.rng.below(1 << 24) as u32;
            let attr = Self::draw_attr(&mut self.rng, slow);
            let ack_rate = [0, 0, 2, 10, 50][self.rng.below(5) as usize];
            let qp = &mut self.q[q];
            qp.una = start;
            qp.nxt = start;
            qp.halt = false;
            qp.err_mode = false;
            qp.halt_at = None;
            qp.err_at = None;
            qp.attr = attr;
            qp.ack_rate = ack_rate;
            clr = Some(q);
        }
        // A NAK of p in [una, nxt] of a busy QP: una := p.
        let mut nak = None;
        if self.rng.below(1000) < self.nak_pm {
            let q = self.rng.below(QPS as u64) as usize;
            let qp = &self.q[q];
            if qp.una != qp.nxt && !Self::frozen(qp) && clr != Some(q) {
                let d = psn_diff(qp.nxt, qp.una);
                let p = if self.rng.below(2) == 0 {
                    qp.una
                } else {
                    psn_add(qp.una, self.rng.below(d as u64 + 1) as u32)
                };
                self.q[q].una = p;
                let rnr = self.rng.below(3) == 0;
                let code = if self.t_unit > 100 {
                    1 + self.rng.below(2) as u8
                } else {
                    1 + self.rng.below(12) as u8
                };
                nak = Some((q, p, rnr, code));
            }
        }
        let mut gap = None;
        if self.rng.below(1000) < self.gap_pm {
            let q = self.rng.below(QPS as u64) as usize;
            let qp = &self.q[q];
            if qp.una != qp.nxt && !Self::frozen(qp) && clr != Some(q) {
                let d = psn_diff(qp.nxt, qp.una);
                gap = Some((q, psn_add(qp.una, self.rng.below(d as u64 + 1) as u32)));
            }
        }
        let mut i = self.input();
        if let Some(q) = clr {
            i.clr_valid = true;
            i.clr_qp = q as u8;
        }
        if let Some((q, p, rnr, code)) = nak {
            i.nak_valid = true;
            i.nak_qp = q as u8;
            i.nak_psn = p;
            i.nak_rnr = rnr;
            i.nak_timer = code;
        }
        if let Some((q, p)) = gap {
            i.gap_valid = true;
            i.gap_qp = q as u8;
            i.gap_psn = p;
        }
        // The attributes of last cycle's attr_idx (registered read port).
        let a = self.q[self.prev_idx].attr;
        i.attr_timeout = a.timeout;
        i.attr_retry = a.retry;
        i.attr_rnr_retry = a.rnr;
        self.prev_idx = out.attr_idx as usize;
        i.rw_ready = self.rng.percent(self.rw_pct);
        i.xerr_ready = self.rng.percent(self.xe_pct);
        if out.rw_valid && !i.rw_ready {
            self.cover.rw_stalls += 1;
        }
        if out.xerr_valid && !i.xerr_ready {
            self.cover.xerr_stalls += 1;
        }
        // An exhaustion taken: ack_tracker's error mode and csr's ERROR
        // soon (a draining QP: error mode joins its ERROR).
        if out.xerr_valid && i.xerr_ready {
            let q = out.xerr_qp as usize;
            let d = 1 + self.rng.below(6);
            let e = 1 + self.rng.below(d);
            self.q[q].halt_at = Some((c + d, true));
            self.q[q].err_at = Some(c + e);
        }
        self.cover.cycles += 1;
        self.prev_in = Some(i);
        i
    }

    fn finished(&self) -> bool {
        self.cycle >= self.len
    }
}

fn run_case<R>(seed: u64, len: u64, t_unit: u64, r_unit: u64, slow: bool) -> Cover
where
    R: Dut<In = RetxCtlIn, Out = RetxCtlOut>,
    R: Default,
{
    let mut env = RetxEnv::new(seed, len, t_unit, r_unit, slow);
    let mut model = RetxCtl::with_units(t_unit, r_unit);
    let mut rtl = R::default();
    // Cycle 0's una as the reference's "previous" una.
    env.last_una = core::array::from_fn(|q| env.q[q].una);
    match lockstep::run(&mut model, &mut rtl, &mut env, len + 1) {
        Ok(f) => assert!(f.completed, "ran out of cycles at {}", f.cycles),
        Err(d) => panic!("{d}"),
    }
    env.cover
}

#[test]
fn random_retx_ctl_lockstep() {
    let mut cov = Cover::default();
    // The floors scale with the cases asked for; extra cases (run while a
    // floor is unmet, common::run_cases_until) only add to the counts.
    let n = common::cases(DEFAULT_CASES);
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut rng = SplitMix64::new(seed);
        let len = 20_000 + rng.below(20_000);
        let c = run_case::<RtlRetxCtlFast>(rng.next_u64(), len, 4, 3, false);
        cov.add(&c);
        cov.fast_met(n)
    });
    println!(
        "retx_ctl (T_UNIT 4, R_UNIT 3): {} cases (seed {:#x}), {cov:?}",
        run.cases, run.seed
    );
    if run.full {
        // Seeds 0x7265_7478_5f63_746c, 1, 2, 3 (24 cases each) measured per
        // case 27 k to 30 k cycles, 580 to 640 timeouts, 120 to 170 NAK
        // rewinds, 58 to 81 RNR waits, 100 to 145 gaps, 59 to 67
        // exhaustions 12, 4 to 6 exhaustions 13, 69 to 80 clears, 650 to
        // 1,350 stalled rw_* cycles, 200 to 240 stalled xerr_* cycles, 95
        // to 130 exact NAK latencies, 0.4 to 0.8 merges; the floors are a
        // fourth or less of the lowest. Seeds 0x7265_7478_5f63_746c, 1, 2
        // (64 cases each) measured 1.5 to 2.0 status-5 exhaustions, 1,500
        // to 1,850 draining busy cycles, 79 to 88 cycles of error mode
        // before ERROR and 3.7 to 4.3 draining QPs entering error mode per
        // case: floors a fourth of that or less. (The same floors as
        // fast_met, each with the counts in its message.)
        assert!(cov.cycles >= n * 20_000, "{cov:?}");
        assert!(cov.timeouts >= n * 125, "{cov:?}");
        assert!(cov.nak_rewinds >= n * 30, "{cov:?}");
        assert!(cov.rnr_waits >= n * 14, "{cov:?}");
        assert!(cov.gaps >= n * 25, "{cov:?}");
        assert!(cov.exh12 >= n * 14, "{cov:?}");
        assert!(cov.exh13 >= n, "{cov:?}");
        assert!(cov.exh5 >= n / 2, "{cov:?}");
        assert!(cov.drain_busy >= n * 500, "{cov:?}");
        assert!(cov.err_alone >= n * 20, "{cov:?}");
        assert!(cov.drain_err >= n, "{cov:?}");
        assert!(cov.clears >= n * 17, "{cov:?}");
        assert!(cov.rw_stalls >= n * 150, "{cov:?}");
        assert!(cov.xerr_stalls >= n * 50, "{cov:?}");
        assert!(cov.fast_naks >= n * 20, "{cov:?}");
        assert!(cov.merged >= 5, "{cov:?}");
    }
}

/// The default parameters (T_UNIT 1024, R_UNIT 2500): timeouts of 2,048 and
/// 4,096 cycles, RNR waits of 2,500 and 5,000 cycles, events rarer.
#[test]
fn random_retx_ctl_lockstep_default_units() {
    let mut cov = Cover::default();
    let n = common::cases(DEFAULT_UNIT_CASES);
    let run = common::run_cases_until(DEFAULT_SEED ^ 1, DEFAULT_UNIT_CASES, |seed| {
        let c = run_case::<RtlRetxCtl>(seed, 150_000, 1024, 2500, true);
        cov.add(&c);
        cov.unit_met(n)
    });
    println!(
        "retx_ctl (default units): {} cases (seed {:#x}), {cov:?}",
        run.cases, run.seed
    );
    if run.full {
        // Seeds 1, 2, 3 (24 cases each) measured per case 134 to 137
        // timeouts, 62 to 68 NAK rewinds, 33 RNR waits, 42 to 44
        // exhaustions 12, 3 to 4 exhaustions 13, 34 to 36 exact NAK
        // latencies. (The same floors as unit_met.)
        assert!(cov.cycles >= n * 150_000, "{cov:?}");
        assert!(cov.timeouts >= n * 60, "{cov:?}");
        assert!(cov.nak_rewinds >= n * 25, "{cov:?}");
        assert!(cov.rnr_waits >= n * 10, "{cov:?}");
        assert!(cov.exh12 >= n * 15, "{cov:?}");
        assert!(cov.exh13 >= 2, "{cov:?}");
        assert!(cov.exh5 >= n, "{cov:?}");
        assert!(cov.fast_naks >= n * 10, "{cov:?}");
    }
}

/// Model and RTL side by side (default units), inputs of cycle c from `f`.
fn drive(cycles: u64, f: impl FnMut(u64, &RetxCtlOut) -> RetxCtlIn) -> Vec<RetxCtlOut> {
    let (outs, fails) = common::drive_side_by_side(RetxCtl::new(), RtlRetxCtl::new(), cycles, f);
    assert_eq!(fails, vec![]);
    outs
}

/// A stuck PSN: QP 2 busy, una never moves, timeout 1 (2,048 cycles),
/// retry_cnt r: exactly r rewinds to una, each a period (within the
/// scanner's resolution) after the last one left, then exhaustion 12.
#[test]
fn retry_cnt_bounds_timeouts() {
    for r in [0u8, 1, 3, 7] {
        let una = 0x00AB_CDEF;
        let mut base = RetxCtlIn {
            busy: 1 << 2,
            attr_timeout: 1,
            attr_retry: r,
            attr_rnr_retry: 0,
            rw_ready: true,
            xerr_ready: true,
            ..Default::default()
        };
        set_una(&mut base.una_all, 2, una);
        let cycles = 2_200 * (r as u64 + 2);
        let outs = drive(cycles, |_, _| base);
        let rw: Vec<(usize, u32)> = (1..outs.len())
            .filter(|&c| outs[c].rw_valid && !outs[c - 1].rw_valid)
            .map(|c| (c, outs[c].rw_psn))
            .collect();
        let xe: Vec<(usize, u8, u8)> = (1..outs.len())
            .filter(|&c| outs[c].xerr_valid && !outs[c - 1].xerr_valid)
            .map(|c| (c, outs[c].xerr_qp, outs[c].xerr_status))
            .collect();
        assert_eq!(rw.len(), r as usize, "retry_cnt {r}: rewinds {rw:?}");
        assert!(rw.iter().all(|&(_, p)| p == una));
        assert_eq!(xe.len(), 1, "retry_cnt {r}: {xe:?}");
        assert_eq!((xe[0].1, xe[0].2), (2, 12));
        // Each timeout P = 2,048 cycles after the timer restarted: the first
        // within P + 2 QPS of reset, the next of the last rewind.
        let mut last = 0;
        for &(c, _) in rw.iter().chain([(xe[0].0, 0)].iter()) {
            let gap = c - last;
            assert!(
                (2048..=2048 + 2 * 16 + 3).contains(&gap),
                "retry_cnt {r}: gap {gap}"
            );
            last = c;
        }
    }
}

/// Sequence NAKs of one PSN: retry_cnt r allows r rewinds (each on rw_*
/// two cycles after its NAK), the (r + 1)-th NAK is exhaustion 12 two
/// cycles later. RNR NAKs: rnr_retry 2 allows 2 waits, the third is
/// exhaustion 13; rnr_retry 7 never exhausts.
#[test]
fn naks_count_and_rnr_waits() {
    let una = 77;
    let mut base = RetxCtlIn {
        busy: 1 << 9,
        attr_timeout: 0,
        attr_retry: 3,
        attr_rnr_retry: 2,
        rw_ready: true,
        xerr_ready: true,
        ..Default::default()
    };
    set_una(&mut base.una_all, 9, una);
    let nak_at = |base: RetxCtlIn, rnr: bool| {
        move |c: u64, _: &RetxCtlOut| {
            let mut i = base;
            if c >= 40 && c % 10_000 == 40 {
                i.nak_valid = true;
                i.nak_qp = 9;
                i.nak_psn = una;
                i.nak_rnr = rnr;
                i.nak_timer = 1; // 2,500 cycles
            }
            i
        }
    };
    let outs = drive(45_000, nak_at(base, false));
    for (k, c) in [40usize, 10_040, 20_040, 30_040].into_iter().enumerate() {
        if k < 3 {
            assert!(outs[c + 2].rw_valid && outs[c + 2].rw_psn == una && !outs[c + 1].rw_valid);
        } else {
            assert!(outs[c + 2].xerr_valid && outs[c + 2].xerr_status == 12);
            assert!(!outs[c + 2].rw_valid);
        }
    }
    let outs = drive(35_000, nak_at(base, true));
    let rw: Vec<usize> = (1..outs.len())
        .filter(|&c| outs[c].rw_valid && !outs[c - 1].rw_valid)
        .collect();
    assert_eq!(rw.len(), 2, "{rw:?}");
    for (k, &c) in rw.iter().enumerate() {
        let nak = 40 + 10_000 * k;
        assert!(
            (nak + 2502..=nak + 2500 + 3 * 16).contains(&c),
            "RNR rewind at {c}"
        );
    }
    assert!(outs[20_042].xerr_valid && outs[20_042].xerr_status == 13);
    // rnr_retry 7: no limit.
    base.attr_rnr_retry = 7;
    let outs = drive(45_000, nak_at(base, true));
    assert!(outs.iter().all(|o| !o.xerr_valid));
    assert_eq!(outs.iter().filter(|o| o.ev_rnr_wait).count(), 5);
}
