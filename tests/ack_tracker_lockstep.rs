//! Constrained-random block-level lockstep of `ack_tracker`.
//!
//! The environment plays
//! - csr: in the first cycles it sets most QPs' PSN (`psn_set_*`), the
//!   others keep the reset window [0, 0); later, now and then, it restarts
//!   the window of a QP with nothing queued at a new PSN (near the 24-bit
//!   wrap or anywhere), and sometimes "restarts" the QP whose packet is
//!   reported in the same cycle (the report wins, the restart is lost);
//! - tx_engine: request packets reported on `snd_*` (each one 1 .. 4 PSNs,
//!   as a READ REQUEST takes its response span; reports with no completion
//!   are unsignaled messages or packets before a message's last), and
//!   completions held until taken: UC and RC QPs, a success's last PSN
//!   reported in the cycle it is first offered, errors and flushes using no
//!   PSN, in some cases RC RDMA READ successes (released by their rd_done,
//!   or failed by a remote-error NAK); in some cases it stops offering completions of a QP
//!   whose `full` is set, as tx_sched would; once a QP is in error mode,
//!   mostly flushes (the QP reaching ERROR), some successes still (sent
//!   before it did);
//! - rx_parser: ACKs a peer would send (cumulative over what was reported,
//!   so coalesced, some for a packet reported in that very cycle), repeats,
//!   old ones, and PSNs around the window: one before una, una, nxt - 1,
//!   nxt, beyond nxt, exactly 2^23 ahead of una and 2^23 +- 1, anything;
//!   NAKs and RNR NAKs at una - 1, una, inside, nxt, nxt + 1, 2^23 ahead,
//!   anything; reserved syndromes; random credit bits; now and then for a
//!   QP that never sent anything; remote-error NAKs (0x61 .. 0x63) at the
//!   same places, with successes queued, for UC QPs too, in the cycle a
//!   completion of the QP is taken, in the cycle software restarts the QP,
//!   and on a QP already in error mode; a remote-error NAK for a QP whose
//!   oldest queued completion has been a READ not released for a while
//!   (the peer failing it; in the cases without rd_done nothing else
//!   releases a READ);
//! - rd_sink through rx_wr (`rd_done_*`): for each READ taken, once its
//!   PSNs were reported sent before the cycle, an rd_done with its last
//!   PSN, in order per QP, at random times (so often after an ACK frame
//!   already passed it, or on a QP in error mode), sometimes in the cycle
//!   of an ACK / NAK of the same QP or of a completion of the QP; and
//!   strays: at nxt, beyond it, one or up to 1000 behind una, inside the
//!   window, 2^23 (+- 1) ahead, anything, for any QP;
//! - rd_sink (`rd_prog_*`, READ progress): a PSN inside the window, at
//!   una, nxt - 1, nxt, una - 1 or anything, for a QP in use or any, now
//!   and then in the cycle of an rd_done or ACK of the same QP;
//! - software again: a QP in error mode restarted (`psn_set`) once it has
//!   nothing queued, as on its way back to RTS;
//! - cq_writer: random `out_ready`.
//!
//! Independent checks, from a predictor written here from the rule in
//! docs/rx_cc.md (`ack_tracker`), which keeps each QP's window [una, nxt):
//! - `ev_ack` / `ev_dup` / `ev_nak` / `ev_ack_invalid` the cycle after each
//!   ACK, judged against the window before that cycle's report and restart:
//!   an ACK inside [una, nxt - 1] is taken (una := PSN + 1), one 1 .. 2^23 - 1
//!   before una is a duplicate, any other names a PSN never sent; a NAK is
//!   counted inside [una, nxt], else it is invalid; reserved syndromes
//!   show nothing;
//! - remote-error NAKs (0x61 .. 0x63) counted so, for a QP not in error
//!   mode and not restarted in that cycle: una := PSN, the QP in error
//!   mode, `err_valid` / `err_qp` the next cycle; then the successes of the
//!   QP that una does not cover (every READ), queued or pushed later, leave
//!   in order with status 9 / 10 / 11 for the first, 5 for the others,
//!   length 0, no earlier than 3 cycles after the NAK; covered ones leave
//!   as successes before them; ACKs acknowledge nothing and further NAKs
//!   change nothing until a restart ends error mode;
//! - rd_done (the same window rule as an ACK of its PSN): `ev_rd_done`
//!   the cycle after one in [una, nxt - 1] or 1 .. 2^23 - 1 behind una,
//!   `ev_ack_invalid` for any other (or'ed with the ACK's); unless its QP
//!   is in error mode or restarted in that cycle, every queued READ success
//!   of the QP at or before its PSN (one taken that cycle too) is released,
//!   and in the window una := PSN + 1 unless the cycle's ACK of the QP went
//!   further or a remote-error NAK of the QP is taken; a READ success comes
//!   out with status 0 only once released, 3 cycles after at the earliest,
//!   and covered by una like any success;
//! - READ progress of r, judged like an ACK of r against the window before
//!   the cycle: inside it, for a QP not in error mode, restarted or NAKed
//!   (go-back-N or remote error) in that cycle, una := r + 1 unless the
//!   cycle's ACK or rd_done of the QP went as far; else nothing (checked
//!   on `una_all` every cycle, as every una change);
//! - UC completions come out in arrival order, unchanged;
//! - each QP's RC completions come out in arrival order, unchanged, none
//!   lost or duplicated; a success only once una had passed its last PSN
//!   (one of the 2^23 PSNs before una) at least 3 cycles before, so errors
//!   and flushes wait behind their QP's unacknowledged successes; a READ
//!   success never with status 0;
//! - `full[q]` only when QP q has at least DEPTH - 2 completions in the
//!   tracker, and always when it has DEPTH or more;
//! - at the end every completion came out.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`. With
//! at least the default case count the test asserts that
//! [`MIN_TOTAL_CYCLES`] lockstep cycles ran and that every kind of ACK
//! above was seen often enough. Every floor holds for any seed: when the
//! default cases fall short, more cases run until they are met (at most
//! three times the default more, `common::run_cases_until`).
//!
//! `RNIC_MODEL_ALONE=1` runs the model alone under the environment (how a
//! deliberate bug in the model is shown to be caught; docs/rx_cc.md,
//! `ack_tracker`, lists the ones tried).

mod common;

use std::collections::VecDeque;

use rnic_model::ack_tracker::{AckTracker, AckTrackerIn, AckTrackerOut, DEPTH, QPS};
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlAckTracker;
use rnic_testbench::wire::cqe::{
    STATUS_LOC_PROT_ERR, STATUS_LOC_QP_OP_ERR, STATUS_SUCCESS, STATUS_WR_FLUSH_ERR,
};

use common::cpl::Cpl;

/// Completion statuses of the remote-error NAKs (invalid request, remote
/// access error, remote operational error), as the contract names them.
const STATUS_REM_INV_REQ: u8 = 9;
const STATUS_REM_ACCESS: u8 = 10;
const STATUS_REM_OP: u8 = 11;
/// The CQE opcode of an RDMA READ (ibv_wc_opcode numbering); SEND 0 and
/// RDMA WRITE 1 are the others a requester completes.
const OP_READ: u8 = 2;

const DEFAULT_CASES: u64 = 1000;
const DEFAULT_SEED: u64 = 0x6163_6B5F_7472_6B72; // "ack_trkr"
/// Lockstep cycles the default run must reach in total.
const MIN_TOTAL_CYCLES: u64 = 1_700_000;
const M24: u32 = 0xFF_FFFF;
const HALF: u32 = 1 << 23;

/// `to` is this many PSNs after `from`, modulo 2^24.
fn ahead(from: u32, to: u32) -> u32 {
    to.wrapping_sub(from) & M24
}

/// `p + k` modulo 2^24 (k may be "negative" as 2^24 - k).
fn psn_add(p: u32, k: u32) -> u32 {
    p.wrapping_add(k) & M24
}

/// An RC completion waiting in the predictor.
#[derive(Debug, Clone, Copy)]
struct Rc {
    /// As it must come out (a success turned by error mode: its status,
    /// length 0).
    c: Cpl,
    /// Its last PSN (a success).
    psn: u32,
    /// Pushed as a success.
    ok: bool,
    /// An RDMA READ success: never covered by an ACK, only released by an
    /// rd_done covering its last PSN.
    read: bool,
    /// Released by an rd_done on the input in this cycle.
    rd_rel: Option<u64>,
    /// Turned by a remote-error NAK on the input in this cycle (or pushed
    /// in error mode then).
    turned_at: Option<u64>,
}

/// The SQ index a completion carries (`cpl_idx`): any function of the
/// wr_id, so that the anchor report can be checked against the entry.
fn sq_idx(wr_id: u64) -> u16 {
    (wr_id.wrapping_mul(0x9E37_79B9) >> 7) as u16
}

/// The status a remote-error NAK calls for: syndrome 0x61 / 0x62 / 0x63.
fn remote_error(syn: u8) -> Option<u8> {
    match syn {
        0x61 => Some(STATUS_REM_INV_REQ),
        0x62 => Some(STATUS_REM_ACCESS),
        0x63 => Some(STATUS_REM_OP),
        _ => None,
    }
}

/// Success with last PSN `l` is covered by `una`: one of the 2^23 PSNs
/// before it.
fn covered(l: u32, una: u32) -> bool {
    (1..=HALF).contains(&ahead(l, una))
}

/// What the contract says an ACK / NAK does: (ev_ack, ev_nak, ev_dup,
/// ev_ack_invalid).
type Events = (bool, bool, bool, bool);

struct Case {
    uc: [bool; QPS],
    /// QPs in use: 0 .. used.
    used: usize,
    /// Completions to generate.
    total: u32,
    cpl_pct: u8,
    /// Reports of packets without a completion.
    snd_pct: u8,
    ack_pct: u8,
    out_rdy: u8,
    /// Percent of completions that are errors / flushes.
    err_pct: u8,
    /// Do not offer a completion of a QP whose `full` is set.
    obey_full: bool,
    /// QPs whose PSN software sets at the start.
    set_at_start: [bool; QPS],
    restart_pct: u8,
    /// Percent of ACK-path frames that are remote-error NAKs.
    rerr_pct: u8,
    /// Percent of RC successes that are RDMA READs.
    read_pct: u8,
    /// Cycles a READ waits at the head of its QP before the peer fails it.
    read_wait: u64,
    /// Percent of cycles with an rd_done (a READ's data in, or a stray).
    rd_pct: u8,
    /// Percent of rd_dones that are strays (any PSN, around the window).
    rd_stray_pct: u8,
    /// Percent of cycles retx_ctl offers an exhaustion (status 12 / 13 / 5).
    x_pct: u8,
    /// Percent of cycles with READ progress (rd_sink's implicit ACK).
    prog_pct: u8,
}

fn gen_case(r: &mut SplitMix64) -> Case {
    let mut uc = [false; QPS];
    let uc_pct = [0, 30, 70, 100][r.below(4) as usize];
    for u in uc.iter_mut() {
        *u = r.percent(uc_pct);
    }
    let mut set_at_start = [false; QPS];
    for s in set_at_start.iter_mut() {
        *s = r.percent(80);
    }
    Case {
        uc,
        used: [1, 2, 4, QPS][r.below(4) as usize],
        total: 50 + r.below(400) as u32,
        cpl_pct: [20, 60, 100][r.below(3) as usize],
        snd_pct: [0, 10, 40][r.below(3) as usize],
        ack_pct: [2, 10, 40, 90][r.below(4) as usize],
        out_rdy: if r.percent(30) {
            100
        } else {
            10 + r.below(91) as u8
        },
        err_pct: [0, 10, 30][r.below(3) as usize],
        obey_full: r.percent(50),
        set_at_start,
        restart_pct: [0, 1, 5][r.below(3) as usize],
        rerr_pct: [0, 2, 5, 15][r.below(4) as usize],
        read_pct: [0, 10, 30, 60][r.below(4) as usize],
        read_wait: 20 + r.below(300),
        rd_pct: [0, 3, 15, 50][r.below(4) as usize],
        rd_stray_pct: [5, 20][r.below(2) as usize],
        x_pct: [0, 0, 1, 2][r.below(4) as usize],
        prog_pct: [0, 5, 20][r.below(3) as usize],
    }
}

/// A PSN to start from: near the 24-bit wrap or anywhere.
fn start_psn(r: &mut SplitMix64) -> u32 {
    if r.percent(50) {
        M24 - r.below(20) as u32
    } else {
        r.below(1 << 24) as u32
    }
}

/// Coverage counters (see the test's report).
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    uc_out: u64,
    rc_out: u64,
    taken: u64,
    dup: u64,
    invalid: u64,
    invalid_half: u64,
    nak: u64,
    nak_invalid: u64,
    invalid_unsent_qp: u64,
    same_cycle_invalid: u64,
    reports: u64,
    restarts: u64,
    restarts_lost: u64,
    full_cycles: u64,
    refused: u64,
    // Remote-error NAKs.
    /// Taken (the QP enters error mode).
    rerr_taken: u64,
    /// Taken for a UC QP.
    rerr_uc: u64,
    /// Taken in the cycle a completion of the same QP was.
    rerr_same_push: u64,
    /// Inside the window but the QP already in error mode: counted only.
    rerr_in_err: u64,
    /// Inside the window, lost to a restart of the QP in the same cycle.
    rerr_vs_restart: u64,
    /// Outside the window: invalid.
    rerr_invalid: u64,
    /// Sent because a READ waited too long at its QP's head.
    rerr_read_drain: u64,
    /// Out with status 9, 10, 11 (remote-error NAKs), 12, 13 (exhaustion).
    err_out: [u64; 5],
    /// Successes out flushed (5) by error mode.
    flushed_by_nak: u64,
    /// READ successes out turned.
    read_turned: u64,
    /// Successes queued at a NAK and covered by it: out with status 0.
    kept_at_nak: u64,
    /// Successes pushed while their QP was in error mode.
    pushed_in_err: u64,
    /// ACKs taken in error mode (acknowledging nothing).
    acks_in_err: u64,
    /// Restarts that ended error mode.
    restarts_clearing: u64,
    // READ done (rd_done).
    /// rd_dones naming a PSN sent: in the window.
    rd_in_win: u64,
    /// ... behind una (an ACK frame overtook the READ's data).
    rd_behind: u64,
    /// Naming a PSN never sent: invalid.
    rd_invalid: u64,
    /// Valid, on a QP in error mode: counted only.
    rd_in_err: u64,
    /// Valid, lost to a restart of the QP in the same cycle.
    rd_vs_restart: u64,
    /// In the cycle an ACK / NAK of the same QP came.
    rd_same_ack: u64,
    /// In the cycle a completion of the same QP was taken.
    rd_same_push: u64,
    /// READs released in the cycle their completion was taken.
    rd_at_push: u64,
    /// READ successes out with status 0 (released by an rd_done).
    read_released: u64,
    /// Non-READ successes queued that an rd_done acknowledged (una moved
    /// past them by it, not by an ACK of the cycle).
    implicit_acks: u64,
    // Retransmission (docs/retransmission.md).
    /// Sequence-error NAKs taken (una := p, nak_* reported).
    gbn_taken: u64,
    /// RNR NAKs taken.
    rnr_taken: u64,
    /// Reports of re-sent packets (behind nxt): nxt stays.
    replay_reports: u64,
    /// Exhaustions offered and held back (xerr_ready low).
    xerr_held: u64,
    /// Exhaustions that put their QP in error mode.
    xerr_applied: u64,
    /// ... of them with status 5 (a QP in ERROR whose timer ran out).
    xerr_flush_applied: u64,
    /// ... dropped: the QP in error mode already or restarted.
    xerr_dropped: u64,
    /// ... waited a cycle behind a remote-error NAK.
    xerr_waited: u64,
    /// Anchor reports checked against the successes out.
    anchors: u64,
    // READ progress (rd_prog).
    /// In the window: una moved past its PSN.
    prog_taken: u64,
    /// In the window, but an ACK or READ done of the QP in the same cycle
    /// went as far or further.
    prog_beaten: u64,
    /// Outside [una, nxt - 1]: nothing.
    prog_outside: u64,
    /// On a QP in error mode: nothing.
    prog_in_err: u64,
    /// Lost to a restart or a NAK (go-back-N or remote error) of the QP in
    /// the same cycle.
    prog_lost: u64,
}

impl Stats {
    fn add(&mut self, e: &Stats) {
        macro_rules! sum {
            ($($f:ident),*) => { $(self.$f += e.$f;)* };
        }
        sum!(
            uc_out,
            rc_out,
            taken,
            dup,
            invalid,
            invalid_half,
            nak,
            nak_invalid,
            invalid_unsent_qp,
            same_cycle_invalid,
            reports,
            restarts,
            restarts_lost,
            full_cycles,
            refused,
            rerr_taken,
            rerr_uc,
            rerr_same_push,
            rerr_in_err,
            rerr_vs_restart,
            rerr_invalid,
            rerr_read_drain,
            flushed_by_nak,
            read_turned,
            kept_at_nak,
            pushed_in_err,
            acks_in_err,
            restarts_clearing,
            rd_in_win,
            rd_behind,
            rd_invalid,
            rd_in_err,
            rd_vs_restart,
            rd_same_ack,
            rd_same_push,
            rd_at_push,
            read_released,
            implicit_acks,
            gbn_taken,
            rnr_taken,
            replay_reports,
            xerr_held,
            xerr_applied,
            xerr_flush_applied,
            xerr_dropped,
            xerr_waited,
            anchors,
            prog_taken,
            prog_beaten,
            prog_outside,
            prog_in_err,
            prog_lost
        );
        for k in 0..5 {
            self.err_out[k] += e.err_out[k];
        }
    }
}

/// Floors of the remote-error rules that every run meets, whatever its
/// seed (more cases run until they are met).
struct NakFloors;

impl NakFloors {
    const TAKEN: u64 = 3000;
    const PER_STATUS: u64 = 400;
    const FLUSHED: u64 = 3000;
    const RESTARTS: u64 = 1500;
    const READ_TURNED: u64 = 200;
    const RARE: u64 = 20;

    fn met(s: &Stats) -> bool {
        s.rerr_taken >= Self::TAKEN
            && s.err_out[..3].iter().all(|&n| n >= Self::PER_STATUS)
            && s.flushed_by_nak >= Self::FLUSHED
            && s.restarts_clearing >= Self::RESTARTS
            && s.read_turned >= Self::READ_TURNED
            && s.kept_at_nak >= Self::RARE
            && s.rerr_uc >= Self::RARE
            && s.rerr_same_push >= Self::RARE
            && s.rerr_in_err >= Self::RARE
            && s.rerr_vs_restart >= Self::RARE
            && s.rerr_invalid >= Self::RARE
            && s.pushed_in_err >= Self::RARE
            && s.acks_in_err >= Self::RARE
    }
}

/// Floors of the retransmission rules that every run meets, whatever its
/// seed.
struct RetxFloors;

impl RetxFloors {
    const MANY: u64 = 1000;
    const RARE: u64 = 20;

    fn met(s: &Stats) -> bool {
        s.gbn_taken >= Self::RARE * 5
            && s.rnr_taken >= Self::MANY
            && s.replay_reports >= Self::MANY
            && s.xerr_applied >= Self::RARE * 5
            && s.err_out[3] >= Self::RARE
            && s.err_out[4] >= Self::RARE
            && s.xerr_flush_applied >= Self::RARE
            && s.xerr_dropped >= Self::RARE
            && s.xerr_held >= Self::RARE
            && s.xerr_waited >= 1
            && s.anchors >= Self::MANY
            && s.prog_taken >= Self::MANY
            && s.prog_beaten >= Self::RARE
            && s.prog_outside >= Self::MANY
            && s.prog_in_err >= Self::RARE
            && s.prog_lost >= Self::RARE
    }
}

/// Floors of the READ done rules that every run meets, whatever its seed
/// (more cases run until they are met).
struct RdFloors;

impl RdFloors {
    const RELEASED: u64 = 3000;
    const IMPLICIT: u64 = 1000;
    const RARE: u64 = 20;

    fn met(s: &Stats) -> bool {
        s.read_released >= Self::RELEASED
            && s.implicit_acks >= Self::IMPLICIT
            && s.rd_behind >= Self::RARE
            && s.rd_invalid >= Self::RARE
            && s.rd_in_err >= Self::RARE
            && s.rd_same_ack >= Self::RARE
            && s.rd_same_push >= Self::RARE
            && s.rd_at_push >= Self::RARE
    }
}

struct AckEnv {
    r: SplitMix64,
    c: Case,
    // ---- stimulus ----
    // tx_engine: the completion offered, until taken.
    offered: Option<(Cpl, bool, u32)>,
    generated: u32,
    wr_id: u64,
    /// Per QP: the next PSN tx_engine uses.
    next_psn: [u32; QPS],
    /// The peer: the last PSN it acknowledged per QP.
    peer_acked: [u32; QPS],
    // ---- predictor ----
    /// Per QP: the window [una, nxt).
    una: [u32; QPS],
    nxt: [u32; QPS],
    uc_q: VecDeque<Cpl>,
    rc_q: Vec<VecDeque<Rc>>,
    /// Per QP: (input cycle, una) each time una changed.
    una_log: Vec<Vec<(u64, u32)>>,
    /// Per QP in error mode: the status the next uncovered success gets.
    err_next: [Option<u8>; QPS],
    /// Per QP: since when a READ success is the oldest completion queued.
    read_head_since: [Option<u64>; QPS],
    /// Per QP: the last PSNs of the READs taken, whose rd_done is due.
    reads_sent: Vec<VecDeque<u32>>,
    /// The `ev_rd_done` pulse due this cycle.
    rd_due: bool,
    /// Events the outputs must show this cycle.
    ev_due: Events,
    /// The `err_valid` / `err_qp` pulse due this cycle.
    err_due: Option<u8>,
    /// The `nak_*` report due this cycle: (QP, PSN, RNR, timer code).
    nak_due: Option<(u8, u32, bool, u8)>,
    /// The exhaustion offered (until taken) and the one held by the
    /// tracker (xerr_ready low), as (QP, status).
    x_offer: Option<(u8, u8)>,
    x_held: Option<(u8, u8)>,
    /// Anchor reports seen and not yet matched to a success out, per QP.
    anchors: Vec<VecDeque<(u16, u32)>>,
    out_count: u64,
    stats: Stats,
}

impl AckEnv {
    fn new(seed: u64) -> Self {
        let mut r = SplitMix64::new(seed);
        let c = gen_case(&mut r);
        AckEnv {
            r,
            c,
            offered: None,
            generated: 0,
            wr_id: 0,
            next_psn: [0; QPS],
            peer_acked: [M24; QPS],
            una: [0; QPS],
            nxt: [0; QPS],
            uc_q: VecDeque::new(),
            rc_q: vec![VecDeque::new(); QPS],
            una_log: vec![Vec::new(); QPS],
            err_next: [None; QPS],
            read_head_since: [None; QPS],
            reads_sent: vec![VecDeque::new(); QPS],
            rd_due: false,
            ev_due: (false, false, false, false),
            err_due: None,
            nak_due: None,
            x_offer: None,
            x_held: None,
            anchors: vec![VecDeque::new(); QPS],
            out_count: 0,
            stats: Stats::default(),
        }
    }

    /// Completions of QP q in the tracker (predictor's view).
    fn held(&self, q: usize) -> usize {
        if self.c.uc[q] {
            self.uc_q.iter().filter(|c| c.qp as usize == q).count()
        } else {
            self.rc_q[q].len()
        }
    }

    /// A new completion for a random QP in use, and (a success) the next
    /// PSN after its message, reported sent in the same cycle.
    fn gen_cpl(&mut self, o: &AckTrackerOut) -> Option<((Cpl, bool, u32), Option<u32>)> {
        let q = self.r.below(self.c.used as u64) as usize;
        if self.c.obey_full && o.full >> q & 1 == 1 {
            return None;
        }
        let uc = self.c.uc[q];
        // A QP in error mode reaches ERROR in csr and tx_engine flushes its
        // WQEs; some may have been sent before.
        let status = if self.err_next[q].is_some() && self.r.percent(70) {
            STATUS_WR_FLUSH_ERR
        } else if self.r.percent(self.c.err_pct) {
            [
                STATUS_LOC_QP_OP_ERR,
                STATUS_LOC_PROT_ERR,
                STATUS_WR_FLUSH_ERR,
            ][self.r.below(3) as usize]
        } else {
            STATUS_SUCCESS
        };
        let mut psn = 0;
        let mut sent = None;
        if status == STATUS_SUCCESS {
            let span = 1 + self.r.below(4) as u32;
            psn = psn_add(self.next_psn[q], span - 1);
            self.next_psn[q] = psn_add(psn, 1);
            sent = Some(self.next_psn[q]);
        }
        self.wr_id += 1;
        self.generated += 1;
        // RC successes are RDMA READs in some cases (their rd_done or a
        // remote-error NAK releases them); UC ones never (a READ on UC is an error).
        let opcode = if status == STATUS_SUCCESS {
            if !uc && self.r.percent(self.c.read_pct) {
                OP_READ
            } else {
                self.r.below(2) as u8
            }
        } else {
            // An error or flush: any opcode, READ included (never held).
            [0, 1, OP_READ, 0x7F][self.r.below(4) as usize]
        };
        let c = Cpl {
            wait_frame: uc && status == STATUS_SUCCESS,
            wr_id: self.wr_id,
            status,
            opcode,
            len: self.r.next_u64() as u32,
            imm: self.r.next_u64() as u32,
            qp: q as u8,
            cq: self.r.below(4) as u8,
        };
        Some(((c, uc, psn), sent))
    }

    /// The contract's rule for an ACK / NAK on QP q's window as it is.
    fn judge(&self, q: usize, p: u32, syn: u8) -> Events {
        let (una, nxt) = (self.una[q], self.nxt[q]);
        let sent = ahead(una, p) < ahead(una, nxt);
        // Before una by 1 .. 2^23 - 1 (2^23 before is also 2^23 ahead).
        let before = (1..HALF).contains(&ahead(p, una));
        match syn >> 5 {
            0b000 if sent => (true, false, false, false),
            0b000 if before => (false, false, true, false),
            0b000 => (false, false, false, true),
            // A responder's NAK names the PSN it expected: una .. nxt.
            0b011 | 0b001 if ahead(una, p) <= ahead(una, nxt) => (false, true, false, false),
            0b011 | 0b001 => (false, false, false, true),
            _ => (false, false, false, false),
        }
    }

    /// Some una from an update on the input at `cycle - 3` or earlier had
    /// passed `psn` (the latest need not: an entry may wait in the output
    /// stages).
    fn covered_by(&self, q: usize, cycle: u64, psn: u32) -> bool {
        self.una_log[q]
            .iter()
            .any(|&(c, u)| c + 3 <= cycle && (1..=HALF).contains(&ahead(psn, u)))
    }

    fn check_out(&mut self, cycle: u64, o: &AckTrackerOut) {
        let got = Cpl {
            wait_frame: o.out_wait_frame,
            wr_id: o.out_wr_id,
            status: o.out_status,
            opcode: o.out_opcode,
            len: o.out_len,
            imm: o.out_imm,
            qp: o.out_qp,
            cq: o.out_cq,
        };
        let q = o.out_qp as usize;
        if self.c.uc[q] {
            let exp = self.uc_q.pop_front();
            assert_eq!(Some(got), exp, "cycle {cycle}: UC completion out of order");
            self.stats.uc_out += 1;
        } else {
            let e = self.rc_q[q]
                .pop_front()
                .unwrap_or_else(|| panic!("cycle {cycle}: QP {q}: unexpected {got:?}"));
            assert_eq!(
                got, e.c,
                "cycle {cycle}: QP {q}: RC completion out of order, or with the wrong \
                 status / length"
            );
            match e.turned_at {
                Some(t) => {
                    assert!(
                        cycle >= t + 3,
                        "cycle {cycle}: QP {q}: success turned by the NAK at {t} out early"
                    );
                    let s = &mut self.stats;
                    match e.c.status {
                        STATUS_WR_FLUSH_ERR => s.flushed_by_nak += 1,
                        st => s.err_out[(st - STATUS_REM_INV_REQ) as usize] += 1,
                    }
                    s.read_turned += e.read as u64;
                }
                None if e.ok => {
                    // The anchor moved past it when it reached the output.
                    let a = self.anchors[q].pop_front();
                    assert_eq!(
                        a,
                        Some((sq_idx(e.c.wr_id).wrapping_add(1), psn_add(e.psn, 1))),
                        "cycle {cycle}: QP {q}: success out without its anchor report"
                    );
                    self.stats.anchors += 1;
                    if e.read {
                        let t = e.rd_rel.unwrap_or_else(|| {
                            panic!(
                                "cycle {cycle}: QP {q}: READ success out with no rd_done \
                                 covering it"
                            )
                        });
                        assert!(
                            cycle >= t + 3,
                            "cycle {cycle}: QP {q}: READ released by the rd_done at {t} out early"
                        );
                        self.stats.read_released += 1;
                    }
                    assert!(
                        self.covered_by(q, cycle, e.psn),
                        "cycle {cycle}: QP {q}: success PSN {:#x} out before una passed it \
                         (una history: {:x?})",
                        e.psn,
                        self.una_log[q]
                    );
                }
                None => {}
            }
            self.stats.rc_out += 1;
        }
        self.out_count += 1;
    }

    /// Error mode on QP q's RC entry k (una frozen at the NAK's PSN): a
    /// success una does not cover (a READ never is) leaves with the status
    /// due, and every later one flushed.
    fn turn(&mut self, q: usize, k: usize, cycle: u64) {
        let una = self.una[q];
        let next = self.err_next[q].expect("error mode");
        let e = &mut self.rc_q[q][k];
        let unreleased = e.read && e.rd_rel.is_none();
        if e.ok && e.turned_at.is_none() && (unreleased || !covered(e.psn, una)) {
            e.c.status = next;
            e.c.len = 0;
            e.turned_at = Some(cycle);
            self.err_next[q] = Some(STATUS_WR_FLUSH_ERR);
        }
    }

    /// A remote-error NAK syndrome (credits bits are the code).
    fn rerr_syn(r: &mut SplitMix64) -> u8 {
        0x61 + r.below(3) as u8
    }

    /// An ACK / NAK for QP q (its PSN and syndrome), as a peer or a broken
    /// one would send it.
    fn gen_ack(&mut self, q: usize) -> (u32, u8) {
        let credits = self.r.below(32) as u8;
        let (una, nxt) = (self.una[q], self.nxt[q]);
        let sent_end = self.next_psn[q];
        let r = &mut self.r;
        // NAK 0x60 | credits (0x60 a sequence error, 0x61 .. 0x63 remote
        // errors, others reserved codes), a sequence error, an RNR NAK.
        let nak =
            |r: &mut SplitMix64| [0x60u8 | credits, 0x60, 0x20 | credits][r.below(3) as usize];
        if r.percent(self.c.rerr_pct) {
            // Remote-error NAKs: mostly inside [una, nxt], at its edges,
            // and outside.
            let p = match r.below(8) {
                0 => psn_add(una, M24),
                1 | 2 => una,
                3 | 4 => psn_add(una, r.below(ahead(una, nxt) as u64 + 1) as u32),
                5 => nxt,
                6 => psn_add(nxt, 1),
                _ => psn_add(una, HALF),
            };
            return (p, Self::rerr_syn(r));
        }
        match r.below(24) {
            // Cumulative ACK of some (or all) PSNs reported so far (this
            // cycle's report included).
            0..=9 => {
                let out = ahead(self.peer_acked[q], psn_add(sent_end, M24));
                let k = r.below(out as u64 + 1) as u32;
                let p = psn_add(self.peer_acked[q], k);
                self.peer_acked[q] = p;
                (p, credits)
            }
            // A repeat, or an old one.
            10 => (self.peer_acked[q], credits),
            11 => (
                psn_add(self.peer_acked[q], M24 + 1 - r.below(100) as u32),
                credits,
            ),
            // The window's edges and beyond.
            12 => (psn_add(una, M24), credits),
            13 => (una, credits),
            14 => (psn_add(nxt, M24), credits),
            15 => (psn_add(nxt, r.below(3) as u32), credits),
            16 => (psn_add(nxt, 3 + r.below(5000) as u32), credits),
            // Exactly 2^23 ahead of una, and one either side.
            17 | 18 => (psn_add(una, HALF + M24 + r.below(3) as u32), credits),
            // NAKs: before una, at una, inside, at nxt, after nxt, 2^23 ahead.
            19 => {
                let p = match r.below(6) {
                    0 => psn_add(una, M24),
                    1 => una,
                    2 => psn_add(una, r.below(ahead(una, nxt) as u64 + 1) as u32),
                    3 => nxt,
                    4 => psn_add(nxt, 1),
                    _ => psn_add(una, HALF),
                };
                (p, nak(r))
            }
            20 => (r.below(1 << 24) as u32, nak(r)),
            // Reserved syndromes.
            21 => (
                r.below(1 << 24) as u32,
                [0x40, 0x80, 0xA0, 0xC0, 0xE0][r.below(5) as usize] | credits,
            ),
            // Anything.
            _ => (r.below(1 << 24) as u32, credits),
        }
    }
}

impl Env for AckEnv {
    type In = AckTrackerIn;
    type Out = AckTrackerOut;

    fn step(&mut self, cycle: u64, o: &AckTrackerOut) -> AckTrackerIn {
        let mut i = AckTrackerIn::default();
        // ---- events due from last cycle's ACK ----
        assert_eq!(
            (o.ev_ack, o.ev_nak, o.ev_dup, o.ev_ack_invalid),
            self.ev_due,
            "cycle {cycle}: ev_ack / ev_nak / ev_dup / ev_ack_invalid"
        );
        self.ev_due = (false, false, false, false);
        assert_eq!(
            o.err_valid.then_some(o.err_qp),
            self.err_due,
            "cycle {cycle}: err_valid / err_qp"
        );
        self.err_due = None;
        assert_eq!(o.ev_rd_done, self.rd_due, "cycle {cycle}: ev_rd_done");
        self.rd_due = false;
        // ---- retransmission reports ----
        assert_eq!(
            o.nak_valid
                .then_some((o.nak_qp, o.nak_psn, o.nak_rnr, o.nak_timer)),
            self.nak_due,
            "cycle {cycle}: nak_valid / nak_qp / nak_psn / nak_rnr / nak_timer"
        );
        self.nak_due = None;
        for q in 0..QPS {
            assert_eq!(
                o.una_all.0[q], self.una[q],
                "cycle {cycle}: una_all of QP {q}"
            );
            assert_eq!(
                o.busy >> q & 1 == 1,
                self.una[q] != self.nxt[q],
                "cycle {cycle}: busy[{q}] (una {:#x}, nxt {:#x})",
                self.una[q],
                self.nxt[q]
            );
        }
        assert_eq!(
            o.xerr_ready,
            self.x_held.is_none(),
            "cycle {cycle}: xerr_ready with {:?} held",
            self.x_held
        );
        if o.anc_valid {
            self.anchors[o.anc_qp as usize].push_back((o.anc_idx, o.anc_psn));
        }
        // ---- full ----
        for q in 0..QPS {
            let n = self.held(q);
            let f = o.full >> q & 1 == 1;
            if !self.c.uc[q] {
                assert!(
                    !f || n >= DEPTH - 2,
                    "cycle {cycle}: full[{q}] with {n} held"
                );
                assert!(f || n < DEPTH, "cycle {cycle}: not full[{q}] with {n} held");
            } else {
                assert!(!f, "cycle {cycle}: full[{q}] of a UC QP");
            }
        }

        // ---- cq_writer ----
        i.out_ready = self.r.percent(self.c.out_rdy);
        if o.out_valid && i.out_ready {
            self.check_out(cycle, o);
        }

        // ---- csr at the start: software sets the PSN of most QPs ----
        let starting = cycle < QPS as u64;
        let mut set: Option<(usize, u32)> = None;
        if starting && self.c.set_at_start[cycle as usize] {
            set = Some((cycle as usize, start_psn(&mut self.r)));
        }

        // ---- tx_engine: packet reports and completions ----
        let mut snd: Option<(usize, u32)> = None;
        if !starting {
            if self.offered.is_none()
                && self.generated < self.c.total
                && self.r.percent(self.c.cpl_pct)
            {
                if let Some((c, sent)) = self.gen_cpl(o) {
                    snd = sent.map(|n| (c.0.qp as usize, n));
                    self.offered = Some(c);
                }
            }
            if snd.is_none() && self.r.percent(self.c.snd_pct) {
                // A packet with no completion (an unsignaled message, or
                // one before a message's last).
                let q = self.r.below(self.c.used as u64) as usize;
                self.next_psn[q] = psn_add(self.next_psn[q], 1 + self.r.below(4) as u32);
                snd = Some((q, self.next_psn[q]));
            } else if snd.is_none() && self.r.percent(self.c.snd_pct / 2) {
                // A re-sent packet (go-back-N): its report names a PSN
                // behind nxt, which stays.
                let q = self.r.below(self.c.used as u64) as usize;
                let back = 1 + self
                    .r
                    .below(ahead(self.una[q], self.nxt[q]).clamp(1, 1000) as u64);
                snd = Some((q, psn_add(self.nxt[q], M24 + 1 - back as u32)));
                self.stats.replay_reports += 1;
            }
        }
        // The RC QP whose completion is taken in this cycle.
        let mut pushed: Option<usize> = None;
        if let Some((c, uc, psn)) = self.offered {
            i.cpl_valid = true;
            i.cpl_wait_frame = c.wait_frame;
            i.cpl_wr_id = c.wr_id;
            i.cpl_status = c.status;
            i.cpl_opcode = c.opcode;
            i.cpl_len = c.len;
            i.cpl_imm = c.imm;
            i.cpl_qp = c.qp;
            i.cpl_cq = c.cq;
            i.cpl_uc = uc;
            i.cpl_psn = psn;
            i.cpl_idx = sq_idx(c.wr_id);
            if o.cpl_ready {
                self.offered = None;
                if uc {
                    self.uc_q.push_back(c);
                } else {
                    let q = c.qp as usize;
                    let ok = c.status == STATUS_SUCCESS;
                    self.rc_q[q].push_back(Rc {
                        c,
                        psn,
                        ok,
                        read: ok && c.opcode == OP_READ,
                        rd_rel: None,
                        turned_at: None,
                    });
                    // The peer will answer the READ (its data in host
                    // memory: rd_done) in order per QP.
                    if ok && c.opcode == OP_READ {
                        self.reads_sent[q].push_back(psn);
                    }
                    // Pushed in error mode (from an earlier cycle's NAK).
                    if self.err_next[q].is_some() {
                        self.stats.pushed_in_err += ok as u64;
                        let k = self.rc_q[q].len() - 1;
                        self.turn(q, k, cycle);
                    }
                    pushed = Some(q);
                }
            }
        } else {
            // Don't-care fields while not valid.
            i.cpl_qp = self.r.below(QPS as u64) as u8;
            i.cpl_uc = self.r.percent(50);
            i.cpl_psn = self.r.next_u64() as u32 & M24;
            i.cpl_idx = self.r.next_u64() as u16;
        }
        match snd {
            Some((q, n)) => {
                (i.snd_valid, i.snd_qp, i.snd_nxt) = (true, q as u8, n);
                self.stats.reports += 1;
            }
            None => {
                i.snd_qp = self.r.below(QPS as u64) as u8;
                i.snd_nxt = self.r.next_u64() as u32 & M24;
            }
        }

        // ---- csr later: restarts of idle QPs ----
        let busy = |e: &Self, q: usize| {
            !e.rc_q[q].is_empty() || e.offered.is_some_and(|c| c.0.qp as usize == q)
        };
        if !starting && self.r.percent(self.c.restart_pct) {
            match snd {
                // The QP whose packet is reported now: the restart is lost.
                Some((q, _)) if self.r.percent(30) => {
                    set = Some((q, start_psn(&mut self.r)));
                }
                _ => {
                    let q = self.r.below(self.c.used as u64) as usize;
                    if !busy(self, q) && snd.is_none_or(|s| s.0 != q) {
                        set = Some((q, start_psn(&mut self.r)));
                    }
                }
            }
        }
        // Software brings a QP in error mode back (to RTS) once it has
        // nothing left in the tracker.
        if !starting && set.is_none() && self.r.percent(20) {
            let q = self.r.below(self.c.used as u64) as usize;
            if self.err_next[q].is_some() && !busy(self, q) && snd.is_none_or(|s| s.0 != q) {
                set = Some((q, start_psn(&mut self.r)));
            }
        }
        match set {
            Some((q, p)) => {
                (i.psn_set_valid, i.psn_set_qp, i.psn_set_psn) = (true, q as u8, p);
            }
            None => {
                i.psn_set_qp = self.r.below(QPS as u64) as u8;
                i.psn_set_psn = self.r.next_u64() as u32 & M24;
            }
        }
        // A report wins over a restart of its QP; a restart over an ACK.
        let lost = matches!((set, snd), (Some((a, _)), Some((b, _))) if a == b);
        let set_eff = set.filter(|_| !lost).map(|x| x.0);

        // ---- rx_parser ----
        // A READ at the head of its QP for long: the peer fails it (nothing
        // else releases it).
        for q in 0..QPS {
            let read_head = self.err_next[q].is_none()
                && self.rc_q[q]
                    .front()
                    .is_some_and(|e| e.read && e.rd_rel.is_none());
            self.read_head_since[q] = match (read_head, self.read_head_since[q]) {
                (false, _) => None,
                (true, None) => Some(cycle),
                (true, x) => x,
            };
        }
        let drain = (0..QPS).find(|&q| {
            self.read_head_since[q].is_some_and(|t| t + self.c.read_wait <= cycle)
                && set_eff != Some(q)
        });
        // The peer's READ responses all placed (rd_sink's token after
        // rx_wr): the oldest READ of a QP whose PSNs were sent before this
        // cycle, in order per QP; or a stray one.
        let mut rd: Option<(usize, u32)> = None;
        if !starting && self.r.percent(self.c.rd_pct) {
            if self.r.percent(self.c.rd_stray_pct) {
                let q = if self.r.percent(80) {
                    self.r.below(self.c.used as u64) as usize
                } else {
                    self.r.below(QPS as u64) as usize
                };
                let (una, nxt) = (self.una[q], self.nxt[q]);
                let r = &mut self.r;
                let l = match r.below(8) {
                    0 => nxt,
                    1 => psn_add(nxt, 1 + r.below(100) as u32),
                    2 => psn_add(una, HALF),
                    3 => psn_add(una, M24),
                    4 => psn_add(una, M24 - r.below(1000) as u32),
                    5 => psn_add(una, r.below(ahead(una, nxt) as u64 + 1) as u32),
                    6 => psn_add(una, HALF + M24 + r.below(3) as u32),
                    _ => r.below(1 << 24) as u32,
                };
                rd = Some((q, l));
            } else {
                let k0 = self.r.below(QPS as u64) as usize;
                let nxt = self.nxt;
                let q = (0..QPS).map(|k| (k0 + k) % QPS).find(|&q| {
                    self.reads_sent[q]
                        .front()
                        .is_some_and(|&l| (1..=HALF).contains(&ahead(l, nxt[q])))
                });
                if let Some(q) = q {
                    rd = Some((q, self.reads_sent[q].pop_front().unwrap()));
                }
            }
        }
        let mut acked = None;
        let mut rerr = None;
        let mut gbn: Option<(usize, u32)> = None;
        let ack_now = drain.is_some() || self.r.percent(self.c.ack_pct);
        if ack_now {
            // Mostly QPs in use; now and then any QP (one that may never
            // have sent anything, its window [0, 0) or where software set it).
            let q = if let Some(q) = drain {
                q
            } else if let Some((rq, _)) = rd.filter(|_| self.r.percent(40)) {
                // The same QP as this cycle's rd_done.
                rq
            } else if self.r.percent(90) {
                self.r.below(self.c.used as u64) as usize
            } else {
                self.r.below(QPS as u64) as usize
            };
            let (p, syn) = if drain.is_some() {
                let p = psn_add(
                    self.una[q],
                    self.r.below(ahead(self.una[q], self.nxt[q]) as u64 + 1) as u32,
                );
                self.stats.rerr_read_drain += 1;
                (p, Self::rerr_syn(&mut self.r))
            } else if self.c.rerr_pct > 0 && set_eff.is_some_and(|s| s == q) && self.r.percent(30) {
                // A remote-error NAK in the cycle software restarts the QP.
                (self.una[q], Self::rerr_syn(&mut self.r))
            } else if self.c.rerr_pct > 0 && pushed == Some(q) && self.r.percent(30) {
                // ... in the cycle a completion of the QP is taken.
                (self.nxt[q], Self::rerr_syn(&mut self.r))
            } else {
                self.gen_ack(q)
            };
            (i.ack_valid, i.ack_qp, i.ack_psn, i.ack_syndrome) = (true, q as u8, p, syn);
            let ev = self.judge(q, p, syn);
            self.ev_due = ev;
            let s = &mut self.stats;
            let is_nak = syn >> 5 == 0b011 || syn >> 5 == 0b001;
            s.taken += ev.0 as u64;
            s.dup += ev.2 as u64;
            s.nak += ev.1 as u64;
            s.invalid += (ev.3 && !is_nak) as u64;
            s.nak_invalid += (ev.3 && is_nak) as u64;
            s.invalid_half += (ev.3 && ahead(self.una[q], p) == HALF) as u64;
            s.invalid_unsent_qp += (ev.3 && self.una[q] == self.nxt[q]) as u64;
            s.same_cycle_invalid += (ev.3
                && !is_nak
                && snd.is_some_and(|(sq, n)| {
                    sq == q && ahead(self.una[q], p) < ahead(self.una[q], n)
                })) as u64;
            if ev.0 {
                acked = Some((q, psn_add(p, 1)));
            }
            // A sequence-error or RNR NAK taken: everything before p is
            // acknowledged and it is reported.
            let gbn_syn = syn == 0x60 || syn >> 5 == 0b001;
            if gbn_syn && ev.1 && self.err_next[q].is_none() && set_eff != Some(q) {
                gbn = Some((q, p));
                self.nak_due = Some((q as u8, p, syn >> 5 == 0b001, syn & 0x1F));
                s.gbn_taken += (syn >> 5 == 0b011) as u64;
                s.rnr_taken += (syn >> 5 == 0b001) as u64;
            }
            if let Some(st) = remote_error(syn) {
                if !ev.1 {
                    s.rerr_invalid += 1;
                } else if self.err_next[q].is_some() {
                    s.rerr_in_err += 1;
                } else if set_eff == Some(q) {
                    s.rerr_vs_restart += 1;
                } else {
                    rerr = Some((q, p, st));
                }
            }
        } else {
            i.ack_qp = self.r.below(QPS as u64) as u8;
            i.ack_psn = self.r.next_u64() as u32 & M24;
            i.ack_syndrome = self.r.next_u64() as u8;
        }
        // The rd_done judged like an ACK of its PSN against the window
        // before this cycle: in [una, nxt - 1] or 1 .. 2^23 - 1 behind una
        // it counts (ev_rd_done) and, unless the QP is in error mode or
        // restarted now, releases; else it is invalid.
        let mut rd_take: Option<(usize, u32, bool)> = None;
        match rd {
            Some((q, l)) => {
                (i.rd_done_valid, i.rd_done_qp, i.rd_done_psn) = (true, q as u8, l);
                let (una, nxt) = (self.una[q], self.nxt[q]);
                let in_win = ahead(una, l) < ahead(una, nxt);
                let behind = (1..HALF).contains(&ahead(l, una));
                let s = &mut self.stats;
                s.rd_same_ack += (ack_now && i.ack_qp as usize == q) as u64;
                s.rd_same_push += (pushed == Some(q)) as u64;
                if in_win || behind {
                    self.rd_due = true;
                    s.rd_in_win += in_win as u64;
                    s.rd_behind += behind as u64;
                    if self.err_next[q].is_some() {
                        s.rd_in_err += 1;
                    } else if set_eff == Some(q) {
                        s.rd_vs_restart += 1;
                    } else {
                        rd_take = Some((q, l, in_win));
                    }
                } else {
                    self.ev_due.3 = true;
                    s.rd_invalid += 1;
                }
            }
            None => {
                i.rd_done_qp = self.r.below(QPS as u64) as u8;
                i.rd_done_psn = self.r.next_u64() as u32 & M24;
            }
        }
        // READ progress (rd_sink's implicit ACK of a response accepted):
        // mostly inside the window, at its edges, behind it, anything; now
        // and then on the QP of this cycle's rd_done or ACK.
        let mut prog: Option<(usize, u32)> = None;
        if !starting && self.r.percent(self.c.prog_pct) {
            let q = if let Some((rq, _)) = rd.filter(|_| self.r.percent(30)) {
                rq
            } else if ack_now && self.r.percent(30) {
                i.ack_qp as usize & (QPS - 1)
            } else if self.r.percent(90) {
                self.r.below(self.c.used as u64) as usize
            } else {
                self.r.below(QPS as u64) as usize
            };
            let (una, nxt) = (self.una[q], self.nxt[q]);
            let r = &mut self.r;
            let p = match r.below(8) {
                0..=2 => psn_add(una, r.below(ahead(una, nxt).max(1) as u64) as u32),
                3 => una,
                4 => psn_add(nxt, M24),
                5 => nxt,
                6 => psn_add(una, M24),
                _ => r.below(1 << 24) as u32,
            };
            (i.rd_prog_valid, i.rd_prog_qp, i.rd_prog_psn) = (true, q as u8, p);
            prog = Some((q, p));
        } else {
            i.rd_prog_qp = self.r.below(QPS as u64) as u8;
            i.rd_prog_psn = self.r.next_u64() as u32 & M24;
        }
        let una_before = self.una;

        // ---- the predictor's windows after this cycle ----
        // A restart wins over an ACK or NAK of its QP; in error mode an ACK
        // acknowledges nothing.
        if let Some((q, u)) = acked {
            if set_eff != Some(q) {
                if self.err_next[q].is_some() {
                    self.stats.acks_in_err += 1;
                } else {
                    self.una[q] = u;
                    self.una_log[q].push((cycle, u));
                }
            }
        }
        // The rd_done taken: every queued READ of the QP at or before its
        // PSN l released (a READ taken in this cycle too); in the window it
        // acknowledges up to l unless an ACK of the QP in this cycle went
        // further or a remote-error NAK of the QP is taken now (it wins).
        if let Some((q, l, in_win)) = rd_take {
            let last = self.rc_q[q].len().wrapping_sub(1);
            for (k, e) in self.rc_q[q].iter_mut().enumerate() {
                if e.read && e.rd_rel.is_none() && ahead(e.psn, l) < HALF {
                    e.rd_rel = Some(cycle);
                    self.stats.rd_at_push += (pushed == Some(q) && k == last) as u64;
                }
            }
            let u = psn_add(l, 1);
            let further = ahead(una_before[q], l)
                >= ahead(una_before[q], psn_add(self.una[q], M24))
                || self.una[q] == una_before[q];
            if in_win
                && further
                && rerr.is_none_or(|x: (usize, u32, u8)| x.0 != q)
                && gbn.is_none_or(|x| x.0 != q)
            {
                let cur = self.una[q];
                self.stats.implicit_acks += self.rc_q[q]
                    .iter()
                    .filter(|e| e.ok && !e.read && !covered(e.psn, cur) && covered(e.psn, u))
                    .count() as u64;
                self.una[q] = u;
                self.una_log[q].push((cycle, u));
            }
        }
        // READ progress of r, judged against the window before this cycle:
        // in [una, nxt - 1] of a QP not in error mode, not restarted and not
        // NAKed now, una := r + 1 if that goes further than this cycle's
        // ACK or READ done of the QP moved it.
        if let Some((q, p)) = prog {
            let ub = una_before[q];
            let s = &mut self.stats;
            if ahead(ub, p) >= ahead(ub, self.nxt[q]) {
                s.prog_outside += 1;
            } else if self.err_next[q].is_some() {
                s.prog_in_err += 1;
            } else if set_eff == Some(q)
                || rerr.is_some_and(|x: (usize, u32, u8)| x.0 == q)
                || gbn.is_some_and(|x| x.0 == q)
            {
                s.prog_lost += 1;
            } else if ahead(ub, psn_add(p, 1)) > ahead(ub, self.una[q]) {
                s.prog_taken += 1;
                self.una[q] = psn_add(p, 1);
                self.una_log[q].push((cycle, self.una[q]));
            } else {
                s.prog_beaten += 1;
            }
        }
        // A remote-error NAK taken: everything before p acknowledged, the
        // QP in error mode, its queued successes turned in order (this
        // cycle's completion is behind them).
        if let Some((q, p, st)) = rerr {
            self.una[q] = p;
            self.una_log[q].push((cycle, p));
            self.err_next[q] = Some(st);
            self.err_due = Some(q as u8);
            let s = &mut self.stats;
            s.rerr_taken += 1;
            s.rerr_uc += self.c.uc[q] as u64;
            s.rerr_same_push += (pushed == Some(q)) as u64;
            for k in 0..self.rc_q[q].len() {
                self.turn(q, k, cycle);
            }
            self.stats.kept_at_nak += self.rc_q[q]
                .iter()
                .filter(|e| e.ok && e.turned_at.is_none())
                .count() as u64;
        }
        if let Some((q, p)) = gbn {
            self.una[q] = p;
            self.una_log[q].push((cycle, p));
        }
        // retx_ctl's exhaustion: the one held applies now unless a
        // remote-error NAK is taken in this cycle (then it waits); it is
        // dropped if its QP is in error mode or restarted now.
        let ready = self.x_held.is_none();
        if let Some((xq, st)) = self.x_held {
            let q = xq as usize;
            if rerr.is_some() {
                self.stats.xerr_waited += 1;
            } else {
                if self.err_next[q].is_none() && set_eff != Some(q) {
                    self.err_next[q] = Some(st);
                    self.err_due = Some(xq);
                    for k in 0..self.rc_q[q].len() {
                        self.turn(q, k, cycle);
                    }
                    self.stats.xerr_applied += 1;
                    self.stats.xerr_flush_applied += (st == STATUS_WR_FLUSH_ERR) as u64;
                } else {
                    self.stats.xerr_dropped += 1;
                }
                self.x_held = None;
            }
        }
        if self.x_offer.is_none() && !starting && self.r.percent(self.c.x_pct) {
            let q = self.r.below(self.c.used as u64) as u8;
            // retx_ctl's three: retries (12), RNR retries (13), the timer
            // of a QP in ERROR outside error mode (5, flushed).
            self.x_offer = Some((q, [12, 13, 5][self.r.below(3) as usize]));
        }
        match self.x_offer {
            Some((q, st)) => {
                (i.xerr_valid, i.xerr_qp, i.xerr_status) = (true, q, st);
                if ready {
                    self.x_held = Some((q, st));
                    self.x_offer = None;
                } else {
                    self.stats.xerr_held += 1;
                }
            }
            None => {
                i.xerr_qp = self.r.below(QPS as u64) as u8;
                i.xerr_status = self.r.next_u64() as u8;
            }
        }
        // A report moves nxt forward only.
        if let Some((q, n)) = snd {
            if (1..HALF).contains(&ahead(self.nxt[q], n)) {
                self.nxt[q] = n;
            }
        }
        if let Some((q, p)) = set {
            if lost {
                self.stats.restarts_lost += 1;
            } else {
                self.una[q] = p;
                self.nxt[q] = p;
                self.una_log[q].push((cycle, p));
                self.next_psn[q] = p;
                self.peer_acked[q] = psn_add(p, M24);
                self.reads_sent[q].clear();
                self.stats.restarts += !starting as u64;
                if self.err_next[q].take().is_some() {
                    self.stats.restarts_clearing += 1;
                }
            }
        }
        // Coverage: cycles with some QP full, with a completion refused.
        self.stats.full_cycles += (o.full != 0) as u64;
        self.stats.refused += (i.cpl_valid && !o.cpl_ready) as u64;
        i
    }

    fn finished(&self) -> bool {
        self.generated == self.c.total
            && self.ev_due == (false, false, false, false)
            && self.err_due.is_none()
            && self.nak_due.is_none()
            && self.x_offer.is_none()
            && self.x_held.is_none()
            && !self.rd_due
            && self.offered.is_none()
            && self.uc_q.is_empty()
            && self.rc_q.iter().all(|q| q.is_empty())
    }
}

/// What one case ran: lockstep cycles, completions out, coverage.
struct CaseRun {
    cycles: u64,
    outs: u64,
    stats: Stats,
}

/// One case: model and RTL in lockstep, or the model alone with
/// `RNIC_MODEL_ALONE=1`.
fn one_case(seed: u64) -> CaseRun {
    let mut env = AckEnv::new(seed);
    let fin = if common::env_u64("RNIC_MODEL_ALONE").is_some_and(|v| v != 0) {
        lockstep::run_single(&mut AckTracker::new(), &mut env, 1_000_000)
    } else {
        lockstep::run(
            &mut AckTracker::new(),
            &mut RtlAckTracker::new(),
            &mut env,
            1_000_000,
        )
        .unwrap_or_else(|d| panic!("{d}"))
    };
    assert!(fin.completed, "did not finish in {} cycles", fin.cycles);
    assert_eq!(env.out_count, env.c.total as u64, "completions out");
    CaseRun {
        cycles: fin.cycles,
        outs: env.out_count,
        stats: env.stats,
    }
}

/// The coverage floors of the random run (besides its cycles), met so far?
fn floors_met(s: &Stats) -> bool {
    s.uc_out > 1000
        && s.rc_out > 1000
        && s.taken > 1000
        && s.dup > 1000
        && s.invalid > 1000
        && s.invalid_half > 100
        && s.invalid_unsent_qp > 100
        && s.same_cycle_invalid > 10
        && s.nak > 100
        && s.nak_invalid > 100
        && s.restarts > 100
        && s.restarts_lost > 10
        && s.full_cycles > 1000
        && s.refused > 1000
        && NakFloors::met(s)
        && RdFloors::met(s)
        && RetxFloors::met(s)
}

#[test]
fn ack_tracker_random_lockstep() {
    let mut total = 0u64;
    let mut s = Stats::default();
    let mut outs = 0u64;
    // Every floor below holds for any seed: a full run goes on with more
    // cases (common::run_cases_until) until they are met (seed 9191 fell
    // 4,564 cycles short of the cycle floor before the run went on).
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let c = one_case(seed);
        total += c.cycles;
        outs += c.outs;
        s.add(&c.stats);
        total >= MIN_TOTAL_CYCLES && floors_met(&s)
    });
    let extra = run.cases.saturating_sub(common::cases(DEFAULT_CASES));
    eprintln!(
        "ack_tracker lockstep: {} cases (+{extra} for the floors), {total} cycles, {outs} \
         completions ({} UC, {} RC); {} packet reports, {} window restarts ({} lost to a \
         report); ACKs {} taken, {} duplicate, {} invalid ({} exactly 2^23 ahead of una, {} on \
         an empty window, {} for a packet reported that cycle); NAKs {} counted, {} invalid; {} \
         cycles with a QP full, {} with a completion refused",
        run.cases - extra,
        s.uc_out,
        s.rc_out,
        s.reports,
        s.restarts,
        s.restarts_lost,
        s.taken,
        s.dup,
        s.invalid,
        s.invalid_half,
        s.invalid_unsent_qp,
        s.same_cycle_invalid,
        s.nak,
        s.nak_invalid,
        s.full_cycles,
        s.refused
    );
    eprintln!(
        "remote-error NAKs: {} taken ({} for UC QPs, {} with a completion of the QP taken that \
         cycle, {} to release a READ), {} on a QP already in error mode, {} lost to a restart \
         that cycle, {} outside the window; successes turned out: {:?} with status 9 / 10 / 11, \
         {} flushed ({} of the turned were READs); {} successes covered by the NAK, {} pushed in \
         error mode; {} ACKs in error mode; {} restarts ended error mode",
        s.rerr_taken,
        s.rerr_uc,
        s.rerr_same_push,
        s.rerr_read_drain,
        s.rerr_in_err,
        s.rerr_vs_restart,
        s.rerr_invalid,
        s.err_out,
        s.flushed_by_nak,
        s.read_turned,
        s.kept_at_nak,
        s.pushed_in_err,
        s.acks_in_err,
        s.restarts_clearing
    );
    eprintln!(
        "READ done: {} in the window, {} behind una, {} invalid, {} on a QP in error mode, {} \
         lost to a restart that cycle, {} with an ACK / NAK of the QP that cycle, {} with a \
         completion of the QP taken that cycle ({} releasing that READ); {} READ successes \
         released, {} earlier successes acknowledged by an rd_done",
        s.rd_in_win,
        s.rd_behind,
        s.rd_invalid,
        s.rd_in_err,
        s.rd_vs_restart,
        s.rd_same_ack,
        s.rd_same_push,
        s.rd_at_push,
        s.read_released,
        s.implicit_acks
    );
    eprintln!(
        "retransmission: {} sequence-error and {} RNR NAKs taken, {} re-sent packet reports; \
         exhaustions {} applied ({} with status 5; {:?} out with status 12 / 13), {} dropped, {} held back, {} \
         waited behind a remote-error NAK; {} anchor reports matched; READ progress {} \
         taken, {} beaten by an ACK / READ done of the cycle, {} outside the window, {} in \
         error mode, {} lost to a restart or NAK of the cycle",
        s.gbn_taken,
        s.rnr_taken,
        s.replay_reports,
        s.xerr_applied,
        s.xerr_flush_applied,
        &s.err_out[3..],
        s.xerr_dropped,
        s.xerr_held,
        s.xerr_waited,
        s.anchors,
        s.prog_taken,
        s.prog_beaten,
        s.prog_outside,
        s.prog_in_err,
        s.prog_lost
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} lockstep cycles");
        // The same floors as floors_met, each with its own message.
        assert!(s.uc_out > 1000 && s.rc_out > 1000 && s.taken > 1000 && s.dup > 1000);
        assert!(
            s.invalid > 1000 && s.invalid_half > 100 && s.invalid_unsent_qp > 100,
            "invalid ACK coverage"
        );
        assert!(
            s.same_cycle_invalid > 10,
            "ACKs of a packet reported that cycle"
        );
        assert!(s.nak > 100 && s.nak_invalid > 100, "NAK coverage");
        assert!(
            s.restarts > 100 && s.restarts_lost > 10,
            "window restart coverage"
        );
        assert!(
            s.full_cycles > 1000 && s.refused > 1000,
            "full / refusal coverage"
        );
        assert!(
            NakFloors::met(&s),
            "remote-error NAK floors not met after {extra} extra cases"
        );
        assert!(
            RdFloors::met(&s),
            "READ done floors not met after {extra} extra cases"
        );
        assert!(
            RetxFloors::met(&s),
            "retransmission floors not met after {extra} extra cases"
        );
    }
}
