//! Constrained-random block-level lockstep of `rd_sink`, the requester's
//! READ response receiver (docs/rd_sink.md).
//!
//! The environment plays tx_engine (READ requests pushed on `rr_*`, never
//! into a full ring, and clears), the peer's responder (READ RESPONSE
//! frames built with the testbench's codec, their metadata derived from the
//! frame as rx_parser gives it, offered on `hd_*` and held until taken) and
//! rx_wr (random back-pressure on `wc_ready`, every command applied to the
//! bytes of the frame it names).
//!
//! Streams per QP: READs of every MTU code and of lengths 0, 1..4, around
//! one and several MTUs and up to 256 KiB, first PSNs about to wrap; the
//! peer answers them in order and, in faulty cases, also loses packets
//! (the next ones arrive first, then it goes back), repeats earlier ones,
//! and inserts damaged ones (wrong opcode, wrong length, no AETH, an AETH
//! on a MIDDLE, a NAK-class syndrome); stray responses go to QPs with
//! nothing outstanding (or far ahead of anything outstanding); QPs are
//! cleared with READs and responses in flight; rings fill. Some READs the
//! peer answers up to a response k > 0 and then again from k as the answer
//! of a re-request (FIRST, or ONLY when one is left), mostly after later
//! responses arrived ahead (a gap, then quiet ones).
//!
//! The environment's own reference, from the contract alone (no model
//! code): per QP the READs it pushed and the responses accepted of the
//! oldest; for every header the one outcome (accepted, no READ, duplicate,
//! PSN ahead, bad; the opcode rule as relaxed for re-requests), the gap
//! pulse (once per episode, the first missing PSN), the progress pulse
//! (with the counter pulse, the PSN of every response accepted but a
//! READ's last), the command (payload
//! to `addr + k MTU`, or the empty one), the READ done token (exactly once per READ, after its last
//! command, in order), the counter pulse two cycles after the take. It
//! checks every command's address and the frame bytes it names against the
//! READ's data (so every byte of every READ lands once, at its address),
//! the token's bits, that a READ is done only once all its bytes were
//! placed, offers held while not taken, and the cycle schedule (exactly in
//! the full-speed cases). Every case starts with a scripted prologue that
//! reaches each outcome, fills a ring and clears a QP, so the floors hold
//! for any seed.
//!
//! Reproducible as every random test (`tests/common/mod.rs`). With
//! `RNIC_MODEL_ALONE=1` the model runs alone under the environment (no
//! RTL), which is how a mutation of the model is shown to be caught.

mod common;

use std::collections::VecDeque;
use std::net::{Ipv4Addr, Ipv6Addr};

use rnic_model::params::QPS;
use rnic_model::rd_sink::{RdSink, RdSinkIn, RdSinkOut, DEPTH};
use rnic_model::rx_meta::RxMeta;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRdSink;
use rnic_testbench::wire::roce::{
    aeth, bth, ethernet, ipv4, ipv6, pad_cnt, udp, IpRepr, RoceFrame, RoceRepr,
};

const DEFAULT_CASES: u64 = 400;
const DEFAULT_SEED: u64 = 0x7264_5F73_696E_6B21; // "rd_sink!"
/// Lockstep cycles a case may take.
const BUDGET: u64 = 4_000_000;

// READ RESPONSE opcodes (docs/protocol.md section 1).
const FIRST: u8 = 0x0D;
const MIDDLE: u8 = 0x0E;
const LAST: u8 = 0x0F;
const ONLY: u8 = 0x10;
const PSN_MASK: u32 = 0xFF_FFFF;

/// Path MTU of an MTU code (0 read as 256, 6 and 7 as 4096).
fn mtu_bytes(code: u8) -> u64 {
    match code {
        0 | 1 => 256,
        2 => 512,
        3 => 1024,
        4 => 2048,
        _ => 4096,
    }
}

/// Byte `off` of READ `rid`'s data (what the peer's memory holds).
fn data(rid: u64, off: u64) -> u8 {
    let x = rid.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ off.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    let x = x ^ (x >> 29);
    (x ^ (x >> 43) ^ off) as u8
}

/// A READ as tx_engine committed it.
#[derive(Debug, Clone, Copy)]
struct Read {
    id: u64,
    qp: usize,
    psn: u32,
    len: u32,
    addr: u64,
    code: u8,
    /// The QP's max_rd_atomic with it (`rr_max`).
    max: u8,
}

impl Read {
    fn mtu(&self) -> u64 {
        mtu_bytes(self.code)
    }
    /// Its responses: max(1, ceil(len / MTU)).
    fn n(&self) -> u32 {
        (self.len as u64).div_ceil(self.mtu()).max(1) as u32
    }
    fn opcode(&self, j: u32) -> u8 {
        match (j == 0, j + 1 == self.n()) {
            (true, true) => ONLY,
            (true, false) => FIRST,
            (false, true) => LAST,
            (false, false) => MIDDLE,
        }
    }
    /// The opcode of response j when the peer answers a re-request of the
    /// rest of the READ from response k (a new READ: FIRST..LAST, or ONLY
    /// when one response is left).
    fn opcode_from(&self, k: u32, j: u32) -> u8 {
        match (j == k, j + 1 == self.n()) {
            (true, true) => ONLY,
            (true, false) => FIRST,
            (false, true) => LAST,
            (false, false) => MIDDLE,
        }
    }
    /// Payload of response j: an MTU, the rest for the last.
    fn pay(&self, j: u32) -> usize {
        if j + 1 == self.n() {
            (self.len as u64 - j as u64 * self.mtu()) as usize
        } else {
            self.mtu() as usize
        }
    }
}

/// What the generator meant a packet to be (coverage; the reference
/// decides by the rules alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    Good,
    Dup,
    Ahead,
    WrongOp,
    WrongLen,
    NoAeth,
    MidAeth,
    Nak,
    Stray,
}

/// A response packet as the peer sends it.
#[derive(Debug, Clone)]
struct Pkt {
    qp: usize,
    opcode: u8,
    psn: u32,
    /// The AETH syndrome, when the opcode carries an AETH.
    syn: u8,
    /// The metadata's AETH flag inverted (a damaged meta: rx_parser derives
    /// it from the opcode, so only this way can it disagree).
    flip_aeth: bool,
    /// Payload: bytes `data(rid, off + i)`, `i < len`.
    rid: u64,
    off: u64,
    len: usize,
    why: Why,
}

/// Response j of `r` as the answer to a re-request from response k.
fn again(r: &Read, k: u32, j: u32, syn: u8) -> Pkt {
    Pkt {
        opcode: r.opcode_from(k, j),
        ..good(r, j, syn)
    }
}

fn good(r: &Read, j: u32, syn: u8) -> Pkt {
    Pkt {
        qp: r.qp,
        opcode: r.opcode(j),
        psn: r.psn.wrapping_add(j) & PSN_MASK,
        syn,
        flip_aeth: false,
        rid: r.id,
        off: j as u64 * r.mtu(),
        len: r.pay(j),
        why: Why::Good,
    }
}

/// Frame headers of a QP.
#[derive(Debug, Clone, Copy)]
struct Shape {
    vlan: Option<ethernet::VlanTag>,
    v6: bool,
}

/// The frame and the metadata rx_parser would give it: header length =
/// frame - ICRC - pad - payload (derived from the emitted frame).
fn build(shape: Shape, p: &Pkt, msn: u32) -> (Vec<u8>, RxMeta) {
    let payload: Vec<u8> = (0..p.len as u64).map(|i| data(p.rid, p.off + i)).collect();
    let ip = if shape.v6 {
        IpRepr::V6(ipv6::Repr {
            src: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 2),
            dst: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1),
            dscp: 26,
            ecn: 2,
            flow_label: 0x1234,
            hop_limit: 64,
        })
    } else {
        IpRepr::V4(ipv4::Repr {
            src: Ipv4Addr::new(10, 0, 0, 2),
            dst: Ipv4Addr::new(10, 0, 0, 1),
            dscp: 0,
            ecn: 0,
            ident: 0,
            dont_frag: true,
            ttl: 64,
        })
    };
    let has = p.opcode != MIDDLE;
    let r = RoceRepr {
        eth: ethernet::Repr {
            dst: 0x02_00_00_00_00_01,
            src: 0x02_00_00_00_00_02,
            vlan: shape.vlan,
        },
        ip,
        udp: udp::Repr {
            src_port: 49152,
            checksum: 0,
        },
        bth: bth::Repr {
            opcode: p.opcode,
            se: false,
            migreq: false,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp: p.qp as u32,
            ack_req: false,
            psn: p.psn,
        },
        reth: None,
        aeth: has.then_some(aeth::Repr {
            syndrome: p.syn,
            msn,
        }),
        imm: None,
        payload,
    };
    let n = r.buffer_len();
    let mut f = RoceFrame::new_unchecked(vec![0u8; n]);
    r.emit(&mut f);
    let frame = f.into_inner();
    let hdr = n - 4 - pad_cnt(p.len) as usize - p.len;
    let meta_aeth = has != p.flip_aeth;
    let meta = RxMeta {
        qp: p.qp as u8,
        opcode: p.opcode,
        psn: p.psn,
        has_aeth: meta_aeth,
        hdr_len: hdr as u8,
        pay_len: p.len as u16,
        aeth: if meta_aeth {
            (p.syn as u32) << 24 | (msn & PSN_MASK)
        } else {
            0
        },
        ..Default::default()
    };
    (frame, meta)
}

/// A damaged copy of good packet `p` (response j of `r`) of the given kind.
fn damaged(rng: &mut SplitMix64, r: &Read, p: &Pkt, kind: Why) -> Pkt {
    let mut d = p.clone();
    d.why = kind;
    match kind {
        Why::WrongOp => {
            // Past response 0 a FIRST stands for a MIDDLE and an ONLY for
            // a LAST (a re-request's answer): neither is a wrong opcode.
            let alt = match p.opcode {
                _ if p.off == 0 => p.opcode,
                FIRST => MIDDLE,
                MIDDLE => FIRST,
                LAST => ONLY,
                _ => LAST,
            };
            let ops = [FIRST, MIDDLE, LAST, ONLY];
            let others: Vec<u8> = ops
                .into_iter()
                .filter(|&o| o != p.opcode && o != alt)
                .collect();
            d.opcode = others[rng.below(others.len() as u64) as usize];
            d.syn = 0;
        }
        Why::WrongLen => {
            let mtu = r.mtu() as usize;
            d.len = if p.opcode == FIRST || p.opcode == MIDDLE {
                [mtu - 4, mtu + 4, 0][rng.below(3) as usize]
            } else {
                let c: Vec<usize> = [p.len + 1, p.len + 4, p.len.wrapping_sub(1), 0, mtu]
                    .into_iter()
                    .filter(|&l| l != p.len && l <= mtu + 4)
                    .collect();
                c[rng.below(c.len() as u64) as usize]
            };
        }
        Why::NoAeth | Why::MidAeth => d.flip_aeth = true,
        Why::Nak => {
            d.syn = [
                0x20, 0x3F, 0x40, 0x5F, 0x60, 0x61, 0x62, 0x63, 0x80, 0xE0, 0xFF,
            ][rng.below(11) as usize]
        }
        _ => unreachable!(),
    }
    d
}

/// The damage that applies to a packet of this opcode, at random.
fn damage_kind(rng: &mut SplitMix64, opcode: u8) -> Why {
    match (opcode == MIDDLE, rng.below(4)) {
        (_, 0) => Why::WrongOp,
        (_, 1) => Why::WrongLen,
        (true, _) => Why::MidAeth,
        (false, 2) => Why::NoAeth,
        (false, _) => Why::Nak,
    }
}

/// An ACK syndrome: mostly 0, sometimes a credit count (the low 5 bits).
fn ack_syn(rng: &mut SplitMix64) -> u8 {
    if rng.percent(70) {
        0
    } else {
        rng.below(32) as u8
    }
}

/// One QP: the requester's side (next PSN, MTU code, how many READs it
/// keeps outstanding) and the peer's (READs not answered yet, packets to
/// send).
struct Gen {
    code: u8,
    shape: Shape,
    next_psn: u32,
    limit: usize,
    /// The QP's max_rd_atomic (a READ takes another now and then).
    max: u8,
    /// READs pushed whose responses the peer has not generated, with the
    /// first response still to generate.
    pushed: VecDeque<(Read, u32)>,
    queue: VecDeque<Pkt>,
    last_good: Option<Pkt>,
}

/// A header taken, to be decided the next cycle.
struct Taken {
    pkt: Pkt,
    frame: Vec<u8>,
    meta: RxMeta,
    /// The QP held a READ at the take (QP < QPS, no clear then).
    has: bool,
    cycle: u64,
}

/// An output rx_wr must see, in order.
#[derive(Debug)]
enum Exp {
    Cmd {
        take: u64,
        off: u16,
        len: u16,
        addr: u64,
        frame: Vec<u8>,
        /// Accepted with payload: the READ and the data offset.
        src: Option<(u64, u64)>,
    },
    Tok {
        take: u64,
        qp: usize,
        psn: u32,
        rid: u64,
    },
}

/// The prologue: scripted steps, one per cycle at most.
#[derive(Debug)]
enum Step {
    Push(Read, u32),
    Pkt(Pkt),
    /// Wait until no header is offered or waiting for its decision.
    Settle,
    Clear(usize),
    Random,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Counts {
    exec: u64,
    done: u64,
    unexp: u64,
    dup: u64,
    seq: u64,
    bad: u64,
}

/// A gap pulse due: the QP and the first missing PSN. The same shape for
/// a progress pulse: the QP and the PSN of a response accepted that is
/// not its READ's last.
type Gap = Option<(usize, u32)>;

#[derive(Default)]
struct Tally {
    cycles: u64,
    pkts: u64,
    counts: Counts,
    pushed: u64,
    bytes: u64,
    /// Bad responses by damage: wrong opcode, length, no AETH, AETH on
    /// MIDDLE, NAK class.
    bad_kind: [u64; 5],
    done_mtu: [u64; 8],
    done_zero: u64,
    done_wrap: u64,
    done_big: u64,
    clears: u64,
    strays: u64,
    full_cases: u64,
    /// rr_block rising below a full ring (by max_rd_atomic), falling.
    blk_rise_max: u64,
    blk_fall: u64,
    waits: u64,
    full_speed: u64,
    /// Accepted past response 0: a FIRST where a MIDDLE was due, an ONLY
    /// where a LAST was (a re-request's answer).
    rereq_first: u64,
    rereq_only: u64,
    /// Responses ahead: reported as a gap, or not (an episode open).
    gaps: u64,
    gap_quiet: u64,
    /// Progress pulses (responses accepted, not their READ's last).
    progs: u64,
    /// READs the peer answered again from some response k > 0.
    rereqs: u64,
}

struct SinkEnv {
    rng: SplitMix64,
    gens: Vec<Gen>,
    act: Vec<usize>,
    script: VecDeque<Step>,
    random: bool,
    draining: bool,
    /// Per case: packets and READs done before the drain, and the rates.
    want_pkts: u64,
    want_done: u64,
    push_pct: u8,
    ready_pct: u8,
    gap_pct: u8,
    fault_pm: u64,
    clear_pm: u64,
    stray_pm: u64,
    /// Per mille of READs of more than one response the peer answers up
    /// to some response k > 0, then again from k as a re-request's answer.
    rereq_pm: u64,
    full_speed: bool,
    // ---- the reference ----
    reads: Vec<Read>,
    book: Vec<VecDeque<Read>>,
    k: Vec<u32>,
    /// Per QP: a gap was reported and no response of the QP accepted (nor a
    /// clear) since.
    gp: Vec<bool>,
    placed: Vec<u64>,
    done: Vec<bool>,
    /// rr_block as it must read next cycle, and the READ popped this
    /// cycle (its QP and max_rd_atomic).
    blk: Vec<bool>,
    popped: Option<(usize, u8)>,
    offer: Option<(Pkt, Vec<u8>, RxMeta)>,
    pending: Option<Taken>,
    expect: VecDeque<Exp>,
    ev_due: VecDeque<(u64, Counts, Gap, Gap)>,
    last_take: Option<(u64, bool)>,
    /// The last cycle's wc offer, when it was not taken (must be held).
    held: Option<RdSinkOut>,
    idle: u64,
    // ---- what happened ----
    counts: Counts,
    seen: Counts,
    t: Tally,
}

impl SinkEnv {
    fn new(seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let n_act = 1 + rng.below(QPS as u64) as usize;
        let mut all: Vec<usize> = (0..QPS).collect();
        for k in 0..QPS {
            let j = k + rng.below((QPS - k) as u64) as usize;
            all.swap(k, j);
        }
        let act = all[..n_act].to_vec();
        let gens = (0..QPS)
            .map(|_| Gen {
                code: rng.below(8) as u8,
                shape: Shape {
                    vlan: rng.percent(30).then(|| ethernet::VlanTag {
                        pcp: rng.below(8) as u8,
                        dei: false,
                        vid: rng.below(4096) as u16,
                    }),
                    v6: rng.percent(30),
                },
                next_psn: if rng.percent(30) {
                    PSN_MASK - rng.below(16) as u32
                } else {
                    rng.below(1 << 24) as u32
                },
                limit: if rng.percent(30) {
                    DEPTH
                } else {
                    1 + rng.below(DEPTH as u64) as usize
                },
                max: rng.below(8) as u8,
                pushed: VecDeque::new(),
                queue: VecDeque::new(),
                last_good: None,
            })
            .collect();
        let full_speed = rng.percent(25);
        let faulty = rng.percent(50);
        let mut e = SinkEnv {
            gens,
            act,
            script: VecDeque::new(),
            random: false,
            draining: false,
            want_pkts: 1200 + rng.below(1200),
            want_done: 20 + rng.below(20),
            push_pct: [3, 15, 60][rng.below(3) as usize],
            ready_pct: if full_speed {
                100
            } else {
                [100, 70, 30][rng.below(3) as usize]
            },
            gap_pct: if full_speed {
                0
            } else {
                [0, 10, 50][rng.below(3) as usize]
            },
            fault_pm: if faulty { 20 + rng.below(40) } else { 0 },
            clear_pm: if faulty { rng.below(2) } else { 0 },
            stray_pm: if faulty { 5 + rng.below(20) } else { 0 },
            rereq_pm: [0, 100, 300][rng.below(3) as usize],
            full_speed,
            reads: Vec::new(),
            book: vec![VecDeque::new(); QPS],
            k: vec![0; QPS],
            gp: vec![false; QPS],
            placed: Vec::new(),
            done: Vec::new(),
            blk: vec![false; QPS],
            popped: None,
            offer: None,
            pending: None,
            expect: VecDeque::new(),
            ev_due: VecDeque::new(),
            last_take: None,
            held: None,
            idle: 0,
            counts: Counts::default(),
            seen: Counts::default(),
            t: Tally::default(),
            rng,
        };
        e.prologue();
        e
    }

    /// A new READ of QP q with the given code and length (the requester's
    /// next PSNs).
    fn new_read(&mut self, q: usize, code: u8, len: u32) -> Read {
        let g = &mut self.gens[q];
        let r = Read {
            id: self.reads.len() as u64,
            qp: q,
            psn: g.next_psn,
            len,
            addr: (self.rng.next_u64() >> 4).wrapping_add(self.rng.below(64)),
            code,
            max: if self.rng.percent(85) {
                g.max
            } else {
                self.rng.below(8) as u8
            },
        };
        g.next_psn = g.next_psn.wrapping_add(r.n()) & PSN_MASK;
        self.reads.push(r);
        self.placed.push(0);
        self.done.push(false);
        r
    }

    fn random_len(&mut self, code: u8) -> u32 {
        let mtu = mtu_bytes(code) as u32;
        let r = &mut self.rng;
        match r.below(100) {
            0..=9 => 0,
            10..=24 => 1 + r.below(4) as u32,
            25..=49 => mtu - 1 + r.below(3) as u32,
            50..=74 => (2 + r.below(4) as u32) * mtu - 1 + r.below(3) as u32,
            75..=96 => 1 + r.below(16 << 10) as u32,
            _ => 1 + r.below(256 << 10) as u32,
        }
    }

    /// The scripted start of every case: QP a gets DEPTH READs (its ring
    /// full: every MTU code, a zero-length READ, a 256 KiB one; the first,
    /// X, of three responses whose PSNs wrap); QP b two READs; then one
    /// header of each outcome and damage, in an order whose outcomes are
    /// fixed; then b is cleared with a READ half received, and a new READ
    /// of b must start again at response 0.
    fn prologue(&mut self) {
        let a = self.act[0];
        let b = (a + 1) % QPS;
        let s = (a + 2) % QPS;
        self.gens[a].next_psn = PSN_MASK - 1;
        // Below DEPTH, so that filling a's ring raises rr_block by the
        // bound before the ring is full.
        self.gens[a].max = 1 + self.rng.below(DEPTH as u64 - 1) as u8;
        let x = self.new_read(a, 7, 2 * 4096 + 1);
        // All three of X's responses come from the prologue.
        self.script.push_back(Step::Push(x, 3));
        let zero = self.rng.below(7) as u8;
        let big = (zero + 1 + self.rng.below(6) as u8) % 7;
        for c in 0..DEPTH as u8 - 1 {
            let code = c % 7;
            let len = if code == zero {
                0
            } else if code == big {
                256 << 10
            } else {
                self.random_len(code)
            };
            let r = self.new_read(a, code, len);
            self.script.push_back(Step::Push(r, 0));
        }
        let cb = self.gens[b].code;
        let y1 = self.new_read(b, cb, 2 * mtu_bytes(cb) as u32);
        let cb2 = self.gens[b].code;
        let len2 = self.random_len(cb2);
        let y2 = self.new_read(b, cb2, len2);
        self.script.push_back(Step::Push(y1, 0));
        self.script.push_back(Step::Push(y2, 0));
        // A stray for QP s, whose ring is empty.
        let st = Pkt {
            qp: s,
            opcode: FIRST,
            psn: self.gens[s].next_psn.wrapping_add(0x40_0000) & PSN_MASK,
            syn: 0,
            flip_aeth: false,
            rid: u64::MAX,
            off: 0,
            len: 256,
            why: Why::Stray,
        };
        self.script.push_back(Step::Pkt(st));
        let x0 = good(&x, 0, 0);
        let mut x1 = good(&x, 1, 0);
        x1.why = Why::Ahead;
        self.script.push_back(Step::Pkt(x1.clone()));
        for kind in [Why::WrongOp, Why::WrongLen, Why::NoAeth, Why::Nak] {
            let d = damaged(&mut self.rng, &x, &x0, kind);
            self.script.push_back(Step::Pkt(d));
        }
        self.script.push_back(Step::Pkt(x0.clone()));
        let mut dup = x0.clone();
        dup.why = Why::Dup;
        self.script.push_back(Step::Pkt(dup));
        let d = damaged(&mut self.rng, &x, &good(&x, 1, 0), Why::MidAeth);
        self.script.push_back(Step::Pkt(d));
        // A gap episode: response 2 ahead (the gap of psn0 + 1 reported),
        // again (quiet), then the answers of re-requests: a FIRST at 1
        // where a MIDDLE is due, an ONLY at 2 where the LAST is.
        let mut x2 = good(&x, 2, 0);
        x2.why = Why::Ahead;
        self.script.push_back(Step::Pkt(x2.clone()));
        self.script.push_back(Step::Pkt(x2));
        self.script.push_back(Step::Pkt(again(&x, 1, 1, 0)));
        let x2o = again(&x, 2, 2, 0);
        self.script.push_back(Step::Pkt(x2o.clone()));
        self.gens[a].last_good = Some(x2o);
        self.script.push_back(Step::Pkt(good(&y1, 0, 0)));
        self.script.push_back(Step::Settle);
        self.script.push_back(Step::Clear(b));
        let mut late = good(&y1, 1, 0);
        late.why = Why::Stray;
        self.script.push_back(Step::Pkt(late));
        let cb3 = self.gens[b].code;
        let len3 = self.random_len(cb3);
        let y3 = self.new_read(b, cb3, len3);
        self.script.push_back(Step::Push(y3, 0));
        self.script.push_back(Step::Random);
    }

    /// The peer's packets for the next READ of QP q it has not answered.
    fn generate(&mut self, q: usize) {
        let Some((r, j0)) = self.gens[q].pushed.pop_front() else {
            return;
        };
        let faults = self.fault_pm;
        let rereq_pm = self.rereq_pm;
        let rng = &mut self.rng;
        let n = r.n();
        // A re-request: the peer answers up to response k - 1, then (as
        // the requester asked again for the rest from k) FIRST/ONLY at k.
        // Mostly a loss came first: one to three later responses arrive
        // ahead (a gap, then quiet ones), some of them twice.
        let rq = (n - j0 > 1 && rng.below(1000) < rereq_pm)
            .then(|| j0 + 1 + rng.below((n - j0 - 1) as u64) as u32);
        let mut list: Vec<Pkt> = (j0..n)
            .map(|j| match rq {
                Some(k) if j >= k => again(&r, k, j, ack_syn(rng)),
                _ => good(&r, j, ack_syn(rng)),
            })
            .collect();
        if let Some(k) = rq {
            self.t.rereqs += 1;
            if k + 1 < n && rng.percent(70) {
                let mut ahead = Vec::new();
                for _ in 0..1 + rng.below(3) {
                    let j = k + 1 + rng.below((n - k - 1) as u64) as u32;
                    let p = Pkt {
                        why: Why::Ahead,
                        ..good(&r, j, 0)
                    };
                    if rng.percent(30) {
                        ahead.push(p.clone());
                    }
                    ahead.push(p);
                }
                let at = (k - j0) as usize;
                list.splice(at..at, ahead);
            }
        }
        // A packet lost: the next (up to two) arrive first, then it again.
        if faults > 0 && rng.below(1000) < 5 * faults && list.len() > 1 {
            let j = rng.below(list.len() as u64 - 1) as usize;
            let ahead: Vec<Pkt> = list[j + 1..list.len().min(j + 3)]
                .iter()
                .map(|p| Pkt {
                    why: Why::Ahead,
                    ..p.clone()
                })
                .collect();
            list.splice(j..j, ahead);
        }
        let g = &mut self.gens[q];
        // A repeat of the previous READ's last response first.
        if faults > 0 && rng.below(1000) < 2 * faults {
            if let Some(p) = &g.last_good {
                g.queue.push_back(Pkt {
                    why: Why::Dup,
                    ..p.clone()
                });
            }
        }
        let mut sent: Vec<Pkt> = Vec::new();
        for p in list {
            if p.why == Why::Good && faults > 0 && rng.below(1000) < faults {
                let kind = damage_kind(rng, p.opcode);
                g.queue.push_back(damaged(rng, &r, &p, kind));
            }
            g.queue.push_back(p.clone());
            if p.why == Why::Good {
                sent.push(p);
            }
            if faults > 0 && !sent.is_empty() && rng.below(1000) < faults {
                let d = &sent[rng.below(sent.len() as u64) as usize];
                g.queue.push_back(Pkt {
                    why: Why::Dup,
                    ..d.clone()
                });
            }
        }
        if !sent.is_empty() {
            g.last_good = sent.last().cloned();
        }
    }

    fn offer(&mut self, p: Pkt) {
        let msn = self.rng.below(1 << 24) as u32;
        let (frame, meta) = build(self.gens[p.qp].shape, &p, msn);
        self.offer = Some((p, frame, meta));
    }

    // ---------------------------------------------------------------
    // The reference
    // ---------------------------------------------------------------

    /// Decides the header taken last cycle; `clr` is this cycle's clear.
    fn decide(&mut self, c: u64, t: Taken, clr: Option<usize>) {
        let m = t.meta;
        let q = m.qp as usize;
        let mut ev = Counts::default();
        let mut cmd = (m.hdr_len as u16, 0u16, 0u64, None);
        let mut tok = None;
        let mut gap: Gap = None;
        let mut prog: Gap = None;
        if !t.has || clr == Some(q) {
            ev.unexp = 1;
        } else {
            let h = self.book[q][0];
            let k = self.k[q];
            let exp_psn = h.psn.wrapping_add(k) & PSN_MASK;
            if m.psn != exp_psn {
                let behind = exp_psn.wrapping_sub(m.psn) & PSN_MASK;
                if (1..=1 << 23).contains(&behind) {
                    ev.dup = 1;
                } else {
                    ev.seq = 1;
                    // Ahead: reported once per episode, the first PSN
                    // missing.
                    if self.gp[q] {
                        self.t.gap_quiet += 1;
                    } else {
                        self.gp[q] = true;
                        gap = Some((q, exp_psn));
                        self.t.gaps += 1;
                    }
                }
            } else {
                // Rule 3, relaxed past response 0: a re-request's answer
                // may put a FIRST where a MIDDLE is due, an ONLY where a
                // LAST is. Rule 4 by the opcode received.
                let want = h.opcode(k);
                let op_ok = m.opcode == want
                    || (k > 0 && want == MIDDLE && m.opcode == FIRST)
                    || (k > 0 && want == LAST && m.opcode == ONLY);
                let aeth_ok = if m.opcode == MIDDLE {
                    !m.has_aeth
                } else {
                    m.has_aeth && m.aeth >> 29 == 0
                };
                if !op_ok || !aeth_ok || m.pay_len as usize != h.pay(k) {
                    ev.bad = 1;
                    let kind = match t.pkt.why {
                        Why::WrongOp => 0,
                        Why::WrongLen => 1,
                        Why::NoAeth => 2,
                        Why::MidAeth => 3,
                        Why::Nak => 4,
                        w => panic!("cycle {c}: a {w:?} packet is bad: {:?}", t.pkt),
                    };
                    self.t.bad_kind[kind] += 1;
                } else {
                    // The generator only ever puts READ h's response k here.
                    let off = k as u64 * h.mtu();
                    assert_eq!(
                        (t.pkt.rid, t.pkt.off),
                        (h.id, off),
                        "cycle {c}: accepted a packet not meant for READ {} response {k}",
                        h.id
                    );
                    ev.exec = 1;
                    self.gp[q] = false;
                    self.t.rereq_first += (k > 0 && m.opcode == FIRST) as u64;
                    self.t.rereq_only += (k > 0 && m.opcode == ONLY) as u64;
                    let pay = m.pay_len;
                    let addr = if pay == 0 {
                        0
                    } else {
                        h.addr.wrapping_add(off)
                    };
                    cmd = (m.hdr_len as u16, pay, addr, Some((h.id, off)));
                    self.k[q] += 1;
                    // Not the last: an implicit ACK of its PSN for
                    // ack_tracker (the last one's is the READ done token).
                    if self.k[q] != h.n() {
                        prog = Some((q, m.psn));
                        self.t.progs += 1;
                    }
                    if self.k[q] == h.n() {
                        ev.done = 1;
                        tok = Some(h);
                        self.popped = Some((q, h.max));
                        self.book[q].pop_front();
                        self.k[q] = 0;
                    }
                }
            }
        }
        self.expect.push_back(Exp::Cmd {
            take: t.cycle,
            off: cmd.0,
            len: cmd.1,
            addr: cmd.2,
            frame: t.frame,
            src: cmd.3,
        });
        if let Some(h) = tok {
            self.expect.push_back(Exp::Tok {
                take: t.cycle,
                qp: q,
                // The READ's last PSN: psn0 + n - 1 (mod 2^24).
                psn: (h.psn + h.n() - 1) & 0xFF_FFFF,
                rid: h.id,
            });
        }
        self.last_take = Some((t.cycle, tok.is_some()));
        let w = &mut self.counts;
        w.exec += ev.exec;
        w.done += ev.done;
        w.unexp += ev.unexp;
        w.dup += ev.dup;
        w.seq += ev.seq;
        w.bad += ev.bad;
        // The pulse is visible the cycle after the decision.
        self.ev_due.push_back((c + 1, ev, gap, prog));
    }

    /// This cycle's outputs against the reference; `ready` is this cycle's
    /// wc_ready.
    fn check(&mut self, c: u64, o: &RdSinkOut, ready: bool) {
        let (ev, gap, prog) = match self.ev_due.front() {
            Some(&(t, e, g, p)) if t == c => {
                self.ev_due.pop_front();
                (e, g, p)
            }
            _ => (Counts::default(), None, None),
        };
        let got_gap = o.gap_valid.then_some((o.gap_qp as usize, o.gap_psn));
        assert_eq!(got_gap, gap, "cycle {c}: gap pulse (QP, first missing PSN)");
        let got_prog = o.prog_valid.then_some((o.prog_qp as usize, o.prog_psn));
        assert_eq!(
            got_prog, prog,
            "cycle {c}: progress pulse (QP, PSN of a response accepted, not the READ's last)"
        );
        let got = Counts {
            exec: o.ev_exec as u64,
            done: o.ev_done as u64,
            unexp: o.ev_unexp as u64,
            dup: o.ev_dup as u64,
            seq: o.ev_seq as u64,
            bad: o.ev_bad as u64,
        };
        assert_eq!(got, ev, "cycle {c}: counter pulses");
        assert!(!o.ev_rr_full, "cycle {c}: ev_rr_full without a full ring");
        let want_blk = self
            .blk
            .iter()
            .enumerate()
            .fold(0u16, |a, (q, &b)| a | (b as u16) << q);
        assert_eq!(o.rr_block, want_blk, "cycle {c}: rr_block");
        let s = &mut self.seen;
        s.exec += got.exec;
        s.done += got.done;
        s.unexp += got.unexp;
        s.dup += got.dup;
        s.seq += got.seq;
        s.bad += got.bad;
        // hd_ready: low from the take until the header's last output is
        // loaded; in the full-speed cases high again exactly at take + 3
        // (take + 4 after a token).
        if let Some((t, tok)) = self.last_take {
            if c == t + 1 || c == t + 2 {
                assert!(
                    !o.hd_ready,
                    "cycle {c}: hd_ready {} cycles after a take",
                    c - t
                );
            }
            if self.full_speed && c == t + 3 {
                assert_eq!(
                    o.hd_ready, !tok,
                    "cycle {c}: hd_ready 3 cycles after a take"
                );
            }
            if self.full_speed && c == t + 4 && tok {
                assert!(
                    o.hd_ready,
                    "cycle {c}: hd_ready 4 cycles after a take and a token"
                );
            }
        }
        if let Some(h) = self.held.take() {
            assert_eq!(
                (o.wc_valid, o.wc_tok, o.wc_off, o.wc_len, o.wc_addr, o.wc_last),
                (h.wc_valid, h.wc_tok, h.wc_off, h.wc_len, h.wc_addr, h.wc_last),
                "cycle {c}: a command not taken was not held"
            );
            assert_eq!(o.wc_tok_data, h.wc_tok_data, "cycle {c}: token not held");
        }
        if o.wc_valid && !ready {
            self.held = Some(*o);
            self.t.waits += 1;
        }
        if !(o.wc_valid && ready) {
            return;
        }
        let e = self
            .expect
            .pop_front()
            .unwrap_or_else(|| panic!("cycle {c}: a command or token nobody expects"));
        match e {
            Exp::Cmd {
                take,
                off,
                len,
                addr,
                frame,
                src,
            } => {
                assert!(!o.wc_tok, "cycle {c}: a token where a command is due");
                assert_eq!(
                    (o.wc_off, o.wc_len, o.wc_addr, o.wc_last),
                    (off, len, addr, true),
                    "cycle {c}: command (off, len, addr, last) of the header taken at {take}"
                );
                assert!(c >= take + 3, "cycle {c}: command of a take at {take}");
                if self.full_speed {
                    assert_eq!(c, take + 3, "cycle {c}: command of a take at {take}");
                }
                if let Some((rid, doff)) = src {
                    let (o0, n) = (off as usize, len as usize);
                    for (i, b) in frame[o0..o0 + n].iter().enumerate() {
                        assert_eq!(
                            *b,
                            data(rid, doff + i as u64),
                            "cycle {c}: READ {rid} byte {} (frame byte {})",
                            doff + i as u64,
                            o0 + i
                        );
                    }
                    assert_eq!(
                        self.placed[rid as usize], doff,
                        "READ {rid}: bytes in order"
                    );
                    self.placed[rid as usize] += n as u64;
                    self.t.bytes += n as u64;
                }
            }
            Exp::Tok { take, qp, psn, rid } => {
                assert!(o.wc_tok, "cycle {c}: a command where a token is due");
                assert_eq!(
                    (o.wc_off, o.wc_len, o.wc_addr, o.wc_last),
                    (0, 0, 0, false),
                    "cycle {c}: token fields"
                );
                // Bit 0 = 0, QP 8:1, the READ's last PSN 32:9, bit 191 = 1.
                let want = [(qp as u64) << 1 | (psn as u64) << 9, 0, 1u64 << 63];
                assert_eq!(o.wc_tok_data.0, want, "cycle {c}: READ {rid}'s token");
                if self.full_speed {
                    assert_eq!(c, take + 4, "cycle {c}: token of a take at {take}");
                }
                let r = self.reads[rid as usize];
                assert!(!self.done[rid as usize], "READ {rid} done twice");
                assert_eq!(self.placed[rid as usize], r.len as u64, "READ {rid} bytes");
                self.done[rid as usize] = true;
                let t = &mut self.t;
                t.done_mtu[r.code as usize] += 1;
                t.done_zero += (r.len == 0) as u64;
                t.done_wrap += (r.psn + r.n() - 1 > PSN_MASK) as u64;
                t.done_big += (r.len >= 64 << 10) as u64;
            }
        }
    }

    /// Book-keeping of a push (the reference's ring and the peer's list).
    fn push(&mut self, i: &mut RdSinkIn, r: Read, j0: u32) {
        i.rr_valid = true;
        i.rr_qp = r.qp as u8;
        i.rr_psn = r.psn;
        i.rr_len = r.len;
        i.rr_addr = r.addr;
        i.rr_mtu = r.code;
        i.rr_max = r.max;
        self.gens[r.qp].pushed.push_back((r, j0));
        self.t.pushed += 1;
    }

    fn finished_inner(&self) -> bool {
        self.draining
            && self.offer.is_none()
            && self.pending.is_none()
            && self.expect.is_empty()
            && self
                .gens
                .iter()
                .all(|g| g.queue.is_empty() && g.pushed.is_empty())
            && self.idle > 8
    }

    fn end_checks(&self) {
        for q in 0..QPS {
            assert!(self.book[q].is_empty(), "QP {q}: READs never done");
        }
        assert_eq!(self.seen, self.counts, "counter pulses in total");
        assert!(self.ev_due.is_empty());
    }
}

impl Env for SinkEnv {
    type In = RdSinkIn;
    type Out = RdSinkOut;

    fn step(&mut self, c: u64, o: &RdSinkOut) -> RdSinkIn {
        let ready = self.rng.percent(self.ready_pct);
        self.check(c, o, ready);
        let mut i = RdSinkIn {
            wc_ready: ready,
            ..Default::default()
        };
        let mut clr: Option<usize> = None;
        let mut push: Option<(Read, u32)> = None;

        if !self.random {
            // ---- the prologue, one step a cycle ----
            match self.script.front() {
                Some(Step::Push(r, j0)) => {
                    push = Some((*r, *j0));
                    self.script.pop_front();
                }
                Some(Step::Pkt(_)) if self.offer.is_none() => {
                    let Some(Step::Pkt(p)) = self.script.pop_front() else {
                        unreachable!()
                    };
                    self.offer(p);
                }
                Some(Step::Settle) if self.offer.is_none() && self.pending.is_none() => {
                    self.script.pop_front();
                }
                Some(Step::Clear(q)) => {
                    clr = Some(*q);
                    self.script.pop_front();
                }
                Some(Step::Random) => {
                    self.script.pop_front();
                    self.random = true;
                }
                _ => {}
            }
        } else {
            // ---- random traffic ----
            if !self.draining
                && self.t.pkts >= self.want_pkts
                && self.counts.done > self.want_done + DEPTH as u64
            {
                self.draining = true;
            }
            // The peer answers READs pushed before this cycle.
            for q in 0..QPS {
                if self.gens[q].queue.is_empty() {
                    self.generate(q);
                }
            }
            // Never QP a (act[0]): the prologue's READs must all be done.
            if !self.draining && self.act.len() > 1 && self.rng.below(1000) < self.clear_pm {
                let q = self.act[1 + self.rng.below(self.act.len() as u64 - 1) as usize];
                clr = Some(q);
            }
            if !self.draining && self.rng.percent(self.push_pct) {
                let q = self.act[self.rng.below(self.act.len() as u64) as usize];
                // Outstanding at the start of the cycle, after a clear of
                // the same cycle: never a push into a full ring.
                let now = if clr == Some(q) {
                    0
                } else {
                    self.book[q].len()
                };
                if now < self.gens[q].limit {
                    let code = if self.rng.percent(80) {
                        self.gens[q].code
                    } else {
                        self.rng.below(8) as u8
                    };
                    let len = self.random_len(code);
                    let r = self.new_read(q, code, len);
                    push = Some((r, 0));
                }
            }
            if self.offer.is_none() && !self.rng.percent(self.gap_pct) {
                if !self.draining && self.rng.below(1000) < self.stray_pm {
                    let q = self.rng.below(QPS as u64) as usize;
                    let p = Pkt {
                        qp: q,
                        opcode: [FIRST, MIDDLE, LAST, ONLY][self.rng.below(4) as usize],
                        psn: self.gens[q]
                            .next_psn
                            .wrapping_add(0x40_0000 + self.rng.below(0x1_0000) as u32)
                            & PSN_MASK,
                        syn: 0,
                        flip_aeth: false,
                        rid: u64::MAX,
                        off: 0,
                        len: self.rng.below(300) as usize,
                        why: Why::Stray,
                    };
                    self.t.strays += 1;
                    self.offer(p);
                } else {
                    let with: Vec<usize> = (0..QPS)
                        .filter(|&q| !self.gens[q].queue.is_empty())
                        .collect();
                    if !with.is_empty() {
                        let q = with[self.rng.below(with.len() as u64) as usize];
                        let p = self.gens[q].queue.pop_front().unwrap();
                        self.offer(p);
                    }
                }
            }
        }

        // ---- the header taken last cycle is decided now ----
        if let Some(t) = self.pending.take() {
            self.decide(c, t, clr);
        }
        // ---- a header offered, maybe taken ----
        if let Some((p, frame, meta)) = &self.offer {
            i.hd_valid = true;
            i.hd_meta = meta.pack();
            if o.hd_ready {
                let q = meta.qp as usize;
                let has = q < QPS && !self.book[q].is_empty() && clr != Some(q);
                self.pending = Some(Taken {
                    pkt: p.clone(),
                    frame: frame.clone(),
                    meta: *meta,
                    has,
                    cycle: c,
                });
                self.offer = None;
                self.t.pkts += 1;
            }
        }
        // ---- clear, then push ----
        if let Some(q) = clr {
            i.clr_valid = true;
            i.clr_qp = q as u8;
            self.book[q].clear();
            self.k[q] = 0;
            self.gp[q] = false;
            self.gens[q].pushed.clear();
            self.t.clears += 1;
        } else {
            i.clr_qp = self.rng.below(QPS as u64) as u8;
        }
        if let Some((r, j0)) = push {
            self.push(&mut i, r, j0);
            let b = &mut self.book[r.qp];
            assert!(
                b.len() < DEPTH,
                "the environment never fills a ring past DEPTH"
            );
            b.push_back(r);
            if b.len() == DEPTH && !self.reads.is_empty() {
                self.t.full_cases = 1;
            }
        }
        // ---- rr_block after this cycle: the count of each touched QP
        // against the max_rd_atomic of its event (a clear: none; a pop:
        // the READ's; a push, last: its own) ----
        let bound = |n: usize, max: u8| n >= (max.max(1) as usize) || n == DEPTH;
        let before = self.blk.clone();
        if let Some(q) = clr {
            self.blk[q] = false;
        }
        if let Some((q, max)) = self.popped.take() {
            self.blk[q] = bound(self.book[q].len(), max);
        }
        if let Some((r, _)) = push {
            self.blk[r.qp] = bound(self.book[r.qp].len(), r.max);
        }
        for (q, &was) in before.iter().enumerate() {
            if self.blk[q] && !was && self.book[q].len() < DEPTH {
                self.t.blk_rise_max += 1;
            }
            if !self.blk[q] && was {
                self.t.blk_fall += 1;
            }
        }
        let busy = i.hd_valid || !o.hd_ready || o.wc_valid || self.pending.is_some();
        self.idle = if busy { 0 } else { self.idle + 1 };
        i
    }

    fn finished(&self) -> bool {
        self.finished_inner()
    }
}

/// The model and the RTL in lockstep, or the model alone with
/// `RNIC_MODEL_ALONE=1`.
fn run_case(env: &mut SinkEnv) -> lockstep::Finished {
    if common::env_u64("RNIC_MODEL_ALONE").is_some_and(|v| v != 0) {
        lockstep::run_single(&mut RdSink::new(), env, BUDGET)
    } else {
        lockstep::run(&mut RdSink::new(), &mut RtlRdSink::new(), env, BUDGET)
            .unwrap_or_else(|d| panic!("{d}"))
    }
}

#[test]
fn rd_sink_random_lockstep() {
    let mut t = Tally::default();
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = SinkEnv::new(seed);
        let fin = run_case(&mut env);
        assert!(
            fin.completed,
            "the case did not finish in {} cycles",
            fin.cycles
        );
        env.end_checks();
        let e = &env.t;
        t.cycles += fin.cycles;
        t.pkts += e.pkts;
        t.pushed += e.pushed;
        t.bytes += e.bytes;
        t.clears += e.clears;
        t.strays += e.strays;
        t.waits += e.waits;
        t.full_cases += e.full_cases;
        t.blk_rise_max += e.blk_rise_max;
        t.blk_fall += e.blk_fall;
        t.full_speed += env.full_speed as u64;
        t.rereq_first += e.rereq_first;
        t.rereq_only += e.rereq_only;
        t.gaps += e.gaps;
        t.gap_quiet += e.gap_quiet;
        t.progs += e.progs;
        t.rereqs += e.rereqs;
        t.done_zero += e.done_zero;
        t.done_wrap += e.done_wrap;
        t.done_big += e.done_big;
        for k in 0..8 {
            t.done_mtu[k] += e.done_mtu[k];
        }
        for k in 0..5 {
            t.bad_kind[k] += e.bad_kind[k];
        }
        let (w, c) = (&mut t.counts, env.counts);
        w.exec += c.exec;
        w.done += c.done;
        w.unexp += c.unexp;
        w.dup += c.dup;
        w.seq += c.seq;
        w.bad += c.bad;
        // The default run's floors at the end (the others hold for every
        // case by construction), met so far? (More cases until they are:
        // common::run_cases_until.)
        t.full_speed >= 1 && t.waits >= 1000
    });
    let c = t.counts;
    eprintln!(
        "rd_sink lockstep: {} cases ({} full speed), {} cycles, {} headers: {} accepted, \
         {} unexpected, {} duplicates, {} ahead, {} bad (wrong opcode {}, length {}, \
         no AETH {}, AETH on MIDDLE {}, NAK class {}); {} READs pushed, {} done \
         (by MTU code {:?}; {} of length 0, {} whose PSNs wrap, {} of 64 KiB or more), \
         {} bytes placed, {} clears, {} strays, {} cycles a command waited, \
         {} cases filling a ring, rr_block raised {} times below a full ring and \
         lowered {} times; {} READs answered again from k > 0, accepted past \
         response 0: {} FIRSTs, {} ONLYs; {} gaps reported, {} ahead quiet",
        run.cases,
        t.full_speed,
        t.cycles,
        t.pkts,
        c.exec,
        c.unexp,
        c.dup,
        c.seq,
        c.bad,
        t.bad_kind[0],
        t.bad_kind[1],
        t.bad_kind[2],
        t.bad_kind[3],
        t.bad_kind[4],
        t.pushed,
        c.done,
        t.done_mtu,
        t.done_zero,
        t.done_wrap,
        t.done_big,
        t.bytes,
        t.clears,
        t.strays,
        t.waits,
        t.full_cases,
        t.blk_rise_max,
        t.blk_fall,
        t.rereqs,
        t.rereq_first,
        t.rereq_only,
        t.gaps,
        t.gap_quiet
    );
    // Floors that hold by construction for any seed: every case runs until
    // it has taken 1,200 headers and finished 20 + DEPTH + 1 READs, each
    // header takes at least 3 cycles, and the prologue reaches every
    // outcome and damage once, fills a ring and clears a QP; its READs on
    // QP a (never cleared at random) are all finished by the drain: every
    // MTU code, a zero-length one, a 256 KiB one, one whose PSNs wrap.
    let n = run.cases;
    assert_eq!(c.exec + c.unexp + c.dup + c.seq + c.bad, t.pkts);
    assert!(t.pkts >= 1200 * n, "only {} headers", t.pkts);
    assert!(t.cycles >= 3 * t.pkts, "only {} cycles", t.cycles);
    assert!(
        c.done >= (20 + DEPTH as u64 + 1) * n,
        "only {} READs done",
        c.done
    );
    for (what, v) in [
        ("unexpected", c.unexp),
        ("duplicate", c.dup),
        ("ahead", c.seq),
        ("clears", t.clears),
        ("rings filled", t.full_cases),
        ("rr_block rises below a full ring", t.blk_rise_max),
        ("rr_block falls", t.blk_fall),
        ("zero-length READs", t.done_zero),
        ("PSN wraps", t.done_wrap),
        ("READs of 64 KiB or more", t.done_big),
        ("re-request FIRSTs accepted", t.rereq_first),
        ("re-request ONLYs accepted", t.rereq_only),
        ("ahead responses quiet in an episode", t.gap_quiet),
        ("progress pulses", t.progs),
    ] {
        assert!(v >= n, "only {v} {what}");
    }
    // The prologue opens two episodes (a MIDDLE ahead, X's LAST ahead).
    assert!(t.gaps >= 2 * n, "only {} gaps reported", t.gaps);
    assert!(c.bad >= 5 * n, "only {} bad", c.bad);
    for (k, v) in t.bad_kind.iter().enumerate() {
        assert!(*v >= n, "only {v} bad responses of damage {k}");
    }
    for (k, v) in t.done_mtu.iter().enumerate() {
        assert!(*v >= n, "only {v} READs done with MTU code {k}");
    }
    if run.full {
        // The default run: its mix of back-pressure and full-speed cases.
        assert!(t.full_speed >= 1 && t.waits >= 1000);
    }
}

// ---------------------------------------------------------------------
// Directed: the cycle schedule, and the assertions
// ---------------------------------------------------------------------

/// Model and RTL side by side for `cycles` cycles, the inputs of each
/// cycle from `f` given the (equal) outputs of the cycle; outputs compared
/// every cycle. Returns the outputs and the RTL's assertion failures (name,
/// cycle).
fn drive(
    cycles: u64,
    f: impl FnMut(u64, &RdSinkOut) -> RdSinkIn,
) -> (Vec<RdSinkOut>, Vec<(String, u64)>) {
    common::drive_side_by_side(RdSink::new(), RtlRdSink::new(), cycles, f)
}

/// [`drive`] with a fixed input sequence.
fn both(steps: &[RdSinkIn]) -> (Vec<RdSinkOut>, Vec<(String, u64)>) {
    drive(steps.len() as u64, |c, _| steps[c as usize])
}

fn idle() -> RdSinkIn {
    RdSinkIn {
        wc_ready: true,
        ..Default::default()
    }
}

fn rr(r: &Read) -> RdSinkIn {
    RdSinkIn {
        rr_valid: true,
        rr_qp: r.qp as u8,
        rr_psn: r.psn,
        rr_len: r.len,
        rr_addr: r.addr,
        rr_mtu: r.code,
        rr_max: r.max,
        ..idle()
    }
}

fn hd(p: &Pkt) -> RdSinkIn {
    let (_, meta) = build(
        Shape {
            vlan: None,
            v6: false,
        },
        p,
        7,
    );
    RdSinkIn {
        hd_valid: true,
        hd_meta: meta.pack(),
        ..idle()
    }
}

/// The schedule of docs/rd_sink.md with nothing back-pressured: a header
/// taken at n is decided at n+1, its pulse is visible at n+2 and its
/// command at n+3, when hd_ready is high again; after a READ's last
/// response the token is visible at n+4 and hd_ready rises then. So a
/// FIRST, MIDDLE or dropped header takes 3 cycles from take to take, a
/// LAST or ONLY 4.
#[test]
fn rd_sink_cycles_per_header() {
    let r = Read {
        id: 1,
        qp: 3,
        psn: 40,
        len: 4 * 256,
        addr: 0x10_0000,
        code: 1,
        max: 0,
    };
    // Headers offered back to back from cycle 2: FIRST, MIDDLE, a
    // duplicate, MIDDLE, LAST, then one with nothing outstanding.
    let mut dup = good(&r, 0, 0);
    dup.why = Why::Dup;
    let seq = [
        good(&r, 0, 0),
        good(&r, 1, 0),
        dup,
        good(&r, 2, 0),
        good(&r, 3, 0),
        good(&r, 3, 0),
    ];
    let (mut next, mut takes) = (0, Vec::new());
    let (outs, fails) = drive(40, |c, o| match c {
        0 => rr(&r),
        _ if c >= 2 && next < seq.len() => {
            if o.hd_ready {
                takes.push(c);
                next += 1;
            }
            hd(&seq[next - o.hd_ready as usize])
        }
        _ => idle(),
    });
    assert!(fails.is_empty(), "{fails:?}");
    let gaps: Vec<u64> = takes.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(gaps, vec![3, 3, 3, 3, 4], "take to take");
    let at = |c: u64| &outs[c as usize];
    for (k, &t) in takes.iter().enumerate() {
        assert!(!at(t + 1).hd_ready && !at(t + 2).hd_ready);
        let pulses = [
            at(t + 2).ev_exec,
            at(t + 2).ev_done,
            at(t + 2).ev_unexp,
            at(t + 2).ev_dup,
        ];
        let want = match k {
            0 | 1 | 3 => [true, false, false, false],
            2 => [false, false, false, true],
            4 => [true, true, false, false],
            _ => [false, false, true, false],
        };
        assert_eq!(pulses, want, "header {k}: pulses at take + 2");
        let cmd = at(t + 3);
        assert!(
            cmd.wc_valid && !cmd.wc_tok && cmd.wc_last,
            "header {k}: command at take + 3"
        );
        let placed = matches!(k, 0 | 1 | 3 | 4);
        assert_eq!(cmd.wc_len, if placed { 256 } else { 0 }, "header {k}");
        if k == 4 {
            assert!(at(t + 4).wc_valid && at(t + 4).wc_tok, "token at take + 4");
            // The READ's last PSN: 40 + 4 - 1.
            assert_eq!(at(t + 4).wc_tok_data.0, [3 << 1 | 43 << 9, 0, 1 << 63]);
        }
    }
}

/// Each assertion at rd_sink's ports fires on a sequence that breaks its
/// rule (name and cycle checked), and the same sequence kept legal fires
/// nothing. Model and RTL agree on every output throughout, the refused
/// push of a full ring included (`ev_rr_full` the cycle after).
#[test]
fn rd_sink_assertions_fire() {
    let r = |k: u32| Read {
        id: k as u64,
        qp: 2,
        psn: 100 * k,
        len: 10,
        addr: 0x1000 * k as u64,
        code: 3,
        max: 7,
    };
    let h = hd(&good(&r(0), 0, 0));
    // Legal: a READ, its ONLY offered while rd_sink is busy with an earlier
    // header and held until taken, DEPTH READs in a ring.
    let mut legal = vec![idle(), rr(&r(0))];
    legal.extend([h, h, h, h, h]);
    for k in 1..DEPTH as u32 {
        legal.push(rr(&r(k)));
    }
    legal.extend([idle(), idle(), idle()]);
    let (outs, fails) = both(&legal);
    assert_eq!(fails, vec![], "legal sequence");
    assert!(outs.iter().all(|o| !o.ev_rr_full));
    assert_eq!(outs.iter().filter(|o| o.ev_exec).count(), 1);

    // a_hd_hold: a header offered while hd_ready is low, then withdrawn,
    // and one changed while not taken.
    let h2 = hd(&good(&r(1), 0, 0));
    let (_, f) = both(&[idle(), rr(&r(0)), h, h, idle(), idle()]);
    assert_eq!(f, vec![("a_hd_hold".to_string(), 4)]);
    let (_, f) = both(&[idle(), rr(&r(0)), h, h, h2, h2, h2, idle()]);
    assert_eq!(f, vec![("a_hd_hold".to_string(), 4)]);

    // a_hd_qp: a header whose QP is not below QPS.
    let mut p = good(&r(0), 0, 0);
    p.qp = QPS;
    let (outs, f) = both(&[idle(), hd(&p), idle(), idle(), idle()]);
    assert_eq!(f, vec![("a_hd_qp".to_string(), 1)]);
    assert!(outs[3].ev_unexp, "a QP >= QPS has nothing outstanding");

    // a_rr_full: a ninth READ for one QP, refused and counted.
    let mut s = vec![idle()];
    for k in 0..=DEPTH as u32 {
        s.push(rr(&r(k)));
    }
    s.push(idle());
    let (outs, f) = both(&s);
    assert_eq!(f, vec![("a_rr_full".to_string(), DEPTH as u64 + 1)]);
    let full: Vec<usize> = (0..outs.len()).filter(|&c| outs[c].ev_rr_full).collect();
    assert_eq!(full, vec![DEPTH + 2]);
}

/// rr_block by the schedule of docs/rd_sink.md: a push at m counts at the
/// edge ending m, so the bit reads high from m + 1 once the QP holds
/// max(1, max_rd_atomic) READs; a READ's last response taken at n is
/// decided (and the READ popped) at n + 1, so the bit falls at n + 2. A
/// clear drops it the cycle after; max 0 acts as 1; a push with another
/// max re-judges the count by that one.
#[test]
fn rd_sink_rr_block_follows_max_rd_atomic() {
    let r = |k: u32, max: u8| Read {
        id: k as u64,
        qp: 5,
        psn: 10 + k,
        len: 8,
        addr: 0x1000 * (k as u64 + 1),
        code: 1,
        max,
    };
    let bit = |o: &RdSinkOut| o.rr_block >> 5 & 1 == 1;
    // Cycle 1: READ 0 (max 2): one outstanding, not blocked at 2.
    // Cycle 2: READ 1 (max 2): two, blocked from 3.
    // Cycle 4: READ 0's ONLY taken; decided at 5; unblocked at 6.
    // Cycle 8: READ 2 (max 0, acting as 1): two outstanding again, blocked
    // from 9 although READ 1 said 2.
    // Cycle 10: a clear of QP 5: unblocked at 11.
    let clr = RdSinkIn {
        clr_valid: true,
        clr_qp: 5,
        ..idle()
    };
    let steps = vec![
        idle(),
        rr(&r(0, 2)),
        rr(&r(1, 2)),
        idle(),
        hd(&good(&r(0, 2), 0, 0)),
        idle(),
        idle(),
        idle(),
        rr(&r(2, 0)),
        idle(),
        clr,
        idle(),
        idle(),
    ];
    let (outs, fails) = both(&steps);
    assert_eq!(fails, vec![]);
    let got: Vec<bool> = outs.iter().map(bit).collect();
    let mut want = vec![false; steps.len()];
    for c in [3, 4, 5, 9, 10] {
        want[c] = true;
    }
    assert_eq!(got, want, "rr_block of QP 5, cycle by cycle");
    assert!(outs[6].ev_done, "READ 0 done (pulse at take + 2)");
    assert!(outs.iter().all(|o| o.rr_block & !(1 << 5) == 0));
}

/// The gap report by the schedule of docs/rd_sink.md: a response ahead
/// taken at n pulses `gap_*` at n + 2 (with `ev_seq`), naming the head
/// READ's first missing PSN, psn0 + k; more responses ahead of the QP stay
/// quiet until one of its responses is accepted (here the answer of a
/// re-request, a FIRST where a MIDDLE is due) or the QP is cleared. PSNs
/// wrap (psn0 = 2^24 - 2).
#[test]
fn rd_sink_gap_once_per_episode() {
    let r = Read {
        id: 1,
        qp: 6,
        psn: PSN_MASK - 1,
        len: 4 * 256,
        addr: 0x2000,
        code: 1,
        max: 0,
    };
    let r2 = Read {
        id: 2,
        psn: 100,
        len: 2 * 256,
        addr: 0x8000,
        ..r
    };
    let ahead = |r: &Read, j: u32| Pkt {
        why: Why::Ahead,
        ..good(r, j, 0)
    };
    let clr = RdSinkIn {
        clr_valid: true,
        clr_qp: 6,
        ..idle()
    };
    // Headers every 5 cycles from 3: FIRST, 2 ahead (gap: psn0 + 1), 3
    // and 2 ahead (quiet), the re-request's FIRST at 1 (accepted, the
    // episode closed), 3 ahead (gap: psn0 + 2). A clear at 33 and a new
    // READ at 34: its response 1 ahead at 36 (gap: 100), then both
    // responses.
    let hdrs = [
        (3, good(&r, 0, 0)),
        (8, ahead(&r, 2)),
        (13, ahead(&r, 3)),
        (18, ahead(&r, 2)),
        (23, again(&r, 1, 1, 0)),
        (28, ahead(&r, 3)),
        (36, ahead(&r2, 1)),
        (41, good(&r2, 0, 0)),
        (46, good(&r2, 1, 0)),
    ];
    let mut steps = vec![idle(); 56];
    steps[1] = rr(&r);
    steps[33] = clr;
    steps[34] = rr(&r2);
    for (c, p) in &hdrs {
        steps[*c] = hd(p);
    }
    let (outs, fails) = both(&steps);
    assert_eq!(fails, vec![]);
    for (c, _) in &hdrs {
        assert!(outs[*c].hd_ready, "header at {c} taken");
    }
    let gaps: Vec<(usize, u8, u32)> = (0..outs.len())
        .filter(|&c| outs[c].gap_valid)
        .map(|c| (c, outs[c].gap_qp, outs[c].gap_psn))
        .collect();
    assert_eq!(gaps, vec![(10, 6, PSN_MASK), (30, 6, 0), (38, 6, 100)]);
    let seq: Vec<usize> = (0..outs.len()).filter(|&c| outs[c].ev_seq).collect();
    assert_eq!(seq, vec![10, 15, 20, 30, 38]);
    let exec: Vec<usize> = (0..outs.len()).filter(|&c| outs[c].ev_exec).collect();
    assert_eq!(exec, vec![5, 25, 43, 48]);
    assert!(outs[48].ev_done, "the second READ done");
}
