//! Constrained-random block-level lockstep of `responder`: model and RTL
//! get the same request packets (real RoCEv2 frames built with the
//! testbench's codec, their metadata derived from the frame), and the
//! environment plays the blocks around it: `csr` (QP contexts, the MR
//! table, registered reads; a QP goes to ERROR when `err_valid` says so),
//! `rq_fetch` (per-QP RECV queues posted at the start, registered head
//! read, pops) and `rx_wr` (takes the commands with random back-pressure,
//! applies each segment to the bytes of the frame it generated).
//!
//! Streams per QP mix in-order messages of every opcode and position
//! (lengths 0..3 MTU), scatter lists of 1..4 entries, bad rkeys, ranges,
//! rights and PDs, entry counts above 4, duplicates, PSN gaps, opcode-order
//! and length violations, RECV queues running dry (RNR), UC QPs, QPs not
//! ready or in ERROR (flush) and ePSNs about to wrap.
//!
//! Checked per QP against `resp_reference::Responder` (the testbench's own
//! reading of protocol.md section 7, no model code): the bytes written and
//! where, the ACK/NAK sequence exactly (and `acks_cover`), the receive
//! completions (flushed ones: the RECVs the reference still holds, status
//! 5), the READ jobs, the QP errors, and every counter pulse in total. Plus
//! the command rules of the contract (at least one command per frame, a
//! frame's segments in offset order inside its payload, tokens between
//! frames) and, in a directed case, the cycles per packet.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`.

mod common;

use std::collections::VecDeque;

use rnic_model::params::{MRS, QPS};
use rnic_model::resp_tok::{ReadJob, RecvCqe, Tok};
use rnic_model::responder::{Responder, ResponderIn, ResponderOut, RqeBits};
use rnic_model::rx_meta::RxMeta;
use rnic_model::Dut;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlResponder;
use rnic_testbench::scenario::resp_reference::{
    self as rf, acks_cover, Effect, Mr, Nak, QpCtx, Silent, SYNDROME_ACK,
};
use rnic_testbench::wire::roce::{bth, ethernet, ipv4, reth, udp, IpRepr, RoceFrame, RoceRepr};
use rnic_testbench::wire::rqe;

const DEFAULT_CASES: u64 = 128;
/// Packets per case.
const PKTS: usize = 500;
/// Lockstep cycles the default run reaches by construction: 5 per packet.
const MIN_CYCLES: u64 = 5 * DEFAULT_CASES * PKTS as u64;
const DEFAULT_SEED: u64 = 0x7265_7370_6F6E_6465; // "responde"
/// Cycles before the first header: EPSN writes, then the QPs go live.
const SETUP: u64 = 40;
const DRAIN: u64 = 3_000;

/// The csr's QP states.
const S_RESET: u8 = 0;
const S_RTS: u8 = 1;
const S_ERROR: u8 = 2;
const S_RTR: u8 = 3;
const S_INIT: u8 = 4;

fn mtu_bytes(code: u8) -> u32 {
    match code {
        0 | 1 => 256,
        2 => 512,
        3 => 1024,
        4 => 2048,
        _ => 4096,
    }
}

/// One QP as the environment set it up.
#[derive(Clone)]
struct Qp {
    ctx: QpCtx,
    state: u8,
    mtu_code: u8,
    cq: u8,
    /// RESP.max_dest_rd_atomic (3 bits): the responder copies it into the
    /// QP's READ job tokens (bits 158:156).
    max_rd: u8,
}

/// A request packet as generated: its QP, frame, metadata and repr.
struct Pkt {
    qp: usize,
    repr: RoceRepr,
    frame: Vec<u8>,
    meta: RxMeta,
}

fn repr(qp: usize, opcode: u8, psn: u32, ack_req: bool, payload: Vec<u8>) -> RoceRepr {
    RoceRepr {
        eth: ethernet::Repr {
            dst: 0x02_00_00_00_00_01,
            src: 0x02_00_00_00_00_02,
            vlan: None,
        },
        ip: IpRepr::V4(ipv4::Repr {
            src: std::net::Ipv4Addr::new(10, 0, 0, 2),
            dst: std::net::Ipv4Addr::new(10, 0, 0, 1),
            dscp: 0,
            ecn: 0,
            ident: 0,
            dont_frag: true,
            ttl: 64,
        }),
        udp: udp::Repr {
            src_port: 49152,
            checksum: 0,
        },
        bth: bth::Repr {
            opcode,
            se: false,
            migreq: false,
            pkey: 0xFFFF,
            fecn: false,
            becn: false,
            dest_qp: qp as u32,
            ack_req,
            psn: psn & 0xFF_FFFF,
        },
        reth: None,
        aeth: None,
        imm: None,
        payload,
    }
}

/// The frame bytes and the metadata rx_parser would give it: header length
/// = frame - ICRC - pad - payload (derived from the emitted frame).
fn finish(qp: usize, r: RoceRepr) -> Pkt {
    let n = r.buffer_len();
    let mut f = RoceFrame::new_unchecked(vec![0u8; n]);
    r.emit(&mut f);
    let frame = f.into_inner();
    let p = r.payload.len();
    let hdr = n - 4 - rnic_testbench::wire::roce::pad_cnt(p) as usize - p;
    assert_eq!(&frame[hdr..hdr + p], &r.payload[..], "payload placement");
    let reth = r.reth.unwrap_or(reth::Repr {
        va: 0,
        rkey: 0,
        dma_len: 0,
    });
    let meta = RxMeta {
        qp: qp as u8,
        opcode: r.bth.opcode,
        psn: r.bth.psn,
        ack_req: r.bth.ack_req,
        has_reth: r.reth.is_some(),
        has_imm: r.imm.is_some(),
        has_aeth: false,
        hdr_len: hdr as u8,
        pay_len: p as u16,
        va: reth.va,
        rkey: reth.rkey,
        dma_len: reth.dma_len,
        imm: r.imm.unwrap_or(0),
        aeth: 0,
    };
    Pkt {
        qp,
        repr: r,
        frame,
        meta,
    }
}

/// The case: QPs, MR table, RECVs, packets.
struct Case {
    qps: Vec<Qp>,
    mrs: Vec<Mr>,
    rqs: Vec<Vec<rqe::Repr>>,
    pkts: Vec<Pkt>,
}

fn gen_case(rng: &mut SplitMix64, n_pkts: usize) -> Case {
    // Half the cases are clean (only duplicates, PSN gaps with go-back,
    // RECV queues running dry); the other half also break keys, ranges,
    // rights, PDs, RECV entries and opcode order, which stop RC QPs.
    let faults = rng.percent(50);
    let f = |rng: &mut SplitMix64, per_mille: u64| faults && rng.below(1000) < per_mille;
    let pds = [3u16, 9];
    // MR table: entry e holds key e + 16 j; with faults some are invalid,
    // lack rights or belong to another PD.
    let mrs: Vec<Mr> = (0..MRS as u32)
        .map(|e| {
            let bad = faults && rng.percent(25);
            Mr {
                index: e,
                key: e + MRS as u32 * rng.below(64) as u32,
                va: 0x1000_0000 * (e as u64 + 1) + rng.below(0x100) * 64,
                len: 0x4000 + rng.below(0x10000),
                pbase: 0x40_0000_0000 + 0x100_0000 * e as u64,
                access: if bad && rng.percent(50) {
                    rng.below(8) as u32
                } else {
                    7
                },
                pd: if bad && rng.percent(50) {
                    pds[1]
                } else {
                    pds[0]
                },
                valid: !(bad && rng.percent(30)),
            }
        })
        .collect();
    let n_act = 1 + rng.below(6) as usize;
    let act: Vec<usize> = (0..n_act).map(|_| rng.below(QPS as u64) as usize).collect();
    let mut qps = Vec::new();
    for q in 0..QPS {
        let mtu_code = if rng.percent(70) {
            rng.below(3) as u8
        } else {
            rng.below(8) as u8
        };
        let state = match rng.below(if act.contains(&q) { 40 } else { 8 }) {
            0 => S_RESET,
            1 => S_INIT,
            2 => S_ERROR,
            3..=15 => S_RTR,
            _ => S_RTS,
        };
        let epsn = if rng.percent(30) {
            0xFF_FFFF - rng.below(8) as u32
        } else {
            rng.below(1 << 24) as u32
        };
        let access = if faults && rng.percent(15) {
            rng.below(8) as u32 & 6
        } else {
            6
        };
        qps.push(Qp {
            ctx: QpCtx {
                qp: q as u32,
                remote_qpn: rng.below(1 << 24) as u32,
                uc: rng.percent(25),
                ready: state == S_RTR || state == S_RTS,
                pd: if faults && rng.percent(5) {
                    pds[1]
                } else {
                    pds[0]
                },
                mtu: mtu_bytes(mtu_code),
                epsn,
                access,
                min_rnr_timer: rng.below(32) as u8,
                mrs: MRS as u32,
            },
            state,
            mtu_code,
            cq: rng.below(4) as u8,
            // Drawn in `RespEnv::new` from a stream of its own.
            max_rd: 0,
        });
    }
    // RECVs: 1..4 entries inside LOCAL_WRITE MRs of the QP's PD, together
    // at least 3 MTU; with faults now and then a broken or short one.
    let good_mrs: Vec<&Mr> = mrs
        .iter()
        .filter(|m| m.valid && m.access & 1 != 0 && m.pd == pds[0])
        .collect();
    let mut rqs = vec![Vec::new(); QPS];
    let mut wr_id = 0x1000u64;
    for (q, rq) in rqs.iter_mut().enumerate() {
        let mtu = qps[q].ctx.mtu as u64;
        let n = if rng.percent(20) {
            rng.below(4) as usize
        } else {
            20 + rng.below(40) as usize
        };
        for _ in 0..n {
            let mut r = rqe::Repr {
                wr_id,
                num_sge: 1 + rng.below(4) as u8,
                ..Default::default()
            };
            wr_id += 1;
            let short = f(rng, 50);
            for k in 0..r.num_sge as usize {
                let m = good_mrs[rng.below(good_mrs.len() as u64) as usize];
                let want = if short {
                    rng.below(mtu + 1)
                } else {
                    3 * mtu / r.num_sge as u64 + 1 + rng.below(mtu)
                };
                let len = want.min(m.len) as u32;
                let va = m.va + rng.below(m.len - len as u64 + 1);
                r.sges[k] = rqe::Sge {
                    va,
                    len,
                    lkey: m.key,
                };
                if f(rng, 20) {
                    r.sges[k].lkey ^= 0x100;
                }
                if f(rng, 20) {
                    r.sges[k].va = m.va + m.len - 1;
                }
            }
            if rng.percent(10) {
                // A zero-length entry in the middle: skipped by the scatter.
                let k = rng.below(r.num_sge as u64) as usize;
                r.sges[k].len = 0;
            }
            if f(rng, 20) {
                r.num_sge = 5 + rng.below(3) as u8;
            }
            rq.push(r);
        }
    }
    // Packets: per QP a stream of messages, interleaved at random.
    let mut gens: Vec<Gen> = (0..QPS)
        .map(|q| Gen {
            psn: qps[q].ctx.epsn,
            recvs: rqs[q].len() as i64,
            queue: VecDeque::new(),
        })
        .collect();
    let mut sent: Vec<Vec<usize>> = vec![Vec::new(); QPS];
    let mut pkts: Vec<Pkt> = Vec::new();
    while pkts.len() < n_pkts {
        let q = act[rng.below(act.len() as u64) as usize];
        if gens[q].queue.is_empty() {
            gen_message(rng, faults, &qps[q], &mrs, &mut gens[q]);
        }
        // A duplicate of an earlier packet (harmless: re-ACK or READ again).
        if !sent[q].is_empty() && rng.percent(3) {
            let k = sent[q][rng.below(sent[q].len() as u64) as usize];
            let r = pkts[k].repr.clone();
            pkts.push(finish(q, r));
            continue;
        }
        // Stray opcodes at the PSN due (invalid, out of order, wrong length).
        if f(rng, 8) {
            let opc = [0x01u8, 0x02, 0x07, 0x08, 0x10, 0x11, 0x0C][rng.below(7) as usize];
            let opc = if opc < 0x0C {
                opc | uc_bit(&qps[q])
            } else {
                opc
            };
            let mtu = qps[q].ctx.mtu as usize;
            let payload = match opc {
                0x01 | 0x07 | 0x21 | 0x27 if rng.percent(50) => vec![7; mtu],
                0x0C | 0x11 | 0x10 => Vec::new(),
                _ => vec![7; 4],
            };
            let mut r = repr(q, opc, gens[q].psn, false, payload);
            if opc == 0x0C {
                r.reth = Some(reth::Repr {
                    va: 0,
                    rkey: 0,
                    dma_len: 0,
                });
            }
            if opc == 0x10 || opc == 0x11 {
                r.aeth = Some(rnic_testbench::wire::roce::aeth::Repr {
                    syndrome: 0,
                    msn: 0,
                });
            }
            pkts.push(finish(q, r));
            continue;
        }
        let r = gens[q].queue.pop_front().unwrap();
        sent[q].push(pkts.len());
        pkts.push(finish(q, r));
    }
    Case {
        qps,
        mrs,
        rqs,
        pkts,
    }
}

fn uc_bit(q: &Qp) -> u8 {
    if q.ctx.uc {
        0x20
    } else {
        0
    }
}

/// A QP's requester side: its next PSN, RECVs the peer posted that its
/// messages have not used up, and the packets still to send.
struct Gen {
    psn: u32,
    recvs: i64,
    queue: VecDeque<RoceRepr>,
}

/// Queues the packets of one message. A lost packet is simulated the way
/// go-back-N shows it to the responder: the next one or two arrive first
/// (ahead of ePSN), then the lost one and everything after it again.
fn gen_message(rng: &mut SplitMix64, faults: bool, qp: &Qp, mrs: &[Mr], g: &mut Gen) {
    let q = qp.ctx.qp as usize;
    let mtu = qp.ctx.mtu as usize;
    let uc = uc_bit(qp);
    // RECV-consuming messages only while the peer has RECVs, but for a
    // rare one that meets an empty queue (RNR).
    let mut kind = rng.below(if qp.ctx.uc { 4 } else { 5 });
    if g.recvs <= 0 && (kind == 0 || kind == 1 || kind == 3) && !rng.percent(5) {
        kind = 2;
    }
    if kind != 2 && kind != 4 {
        g.recvs -= 1;
    }
    let len = match rng.below(4) {
        0 => 0,
        1 => rng.below(65) as usize,
        2 => mtu * (1 + rng.below(3) as usize),
        _ => rng.below(3 * mtu as u64 + 1) as usize,
    };
    // The target: a good MR of this PD, or with faults any entry.
    let good: Vec<&Mr> = mrs
        .iter()
        .filter(|m| m.valid && m.access & 6 == 6 && m.pd == qp.ctx.pd)
        .collect();
    let m = if good.is_empty() || (faults && rng.percent(10)) {
        &mrs[rng.below(mrs.len() as u64) as usize]
    } else {
        good[rng.below(good.len() as u64) as usize]
    };
    let mut reth = reth::Repr {
        va: m.va + rng.below(m.len.saturating_sub(len as u64) + 1),
        rkey: m.key,
        dma_len: len as u32,
    };
    if faults {
        match rng.below(60) {
            0 => reth.rkey ^= 0x200,
            1 => reth.va = m.va + m.len - 8,
            2 => reth.dma_len = len as u32 + 64,
            3 => reth.va = m.va.wrapping_sub(64),
            _ => {}
        }
    }
    let mut pk = Vec::new();
    if kind == 4 {
        // READ: one request, PSN advances by its responses.
        let mut r = repr(q, 0x0C, g.psn, false, Vec::new());
        r.reth = Some(reth);
        let n = (len as u32).div_ceil(mtu as u32).max(1);
        g.psn = g.psn.wrapping_add(n) & 0xFF_FFFF;
        pk.push(r);
    } else {
        let send = kind < 2;
        let imm = kind % 2 == 1;
        let n = len.div_ceil(mtu).max(1);
        for k in 0..n {
            let (first, last) = (k == 0, k + 1 == n);
            let opc = match (send, first, last) {
                (true, true, true) => 0x04 + imm as u8,
                (true, true, false) => 0x00,
                (true, false, false) => 0x01,
                (true, false, true) => 0x02 + imm as u8,
                (false, true, true) => 0x0A + imm as u8,
                (false, true, false) => 0x06,
                (false, false, false) => 0x07,
                (false, false, true) => 0x08 + imm as u8,
            };
            let lo = k * mtu;
            let hi = len.min(lo + mtu);
            let payload: Vec<u8> = (lo..hi).map(|_| rng.next_u64() as u8).collect();
            let mut r = repr(q, opc | uc, g.psn, rng.percent(20), payload);
            if !send && first {
                r.reth = Some(reth);
            }
            if imm && last {
                r.imm = Some(rng.next_u64() as u32);
            }
            g.psn = g.psn.wrapping_add(1) & 0xFF_FFFF;
            pk.push(r);
        }
    }
    if rng.percent(4) {
        // Lose packet j: j+1.. (up to two) arrive first, then j.. again.
        let j = rng.below(pk.len() as u64) as usize;
        let ahead = (j + 1..pk.len().min(j + 3)).map(|k| pk[k].clone());
        let mut v: Vec<RoceRepr> = pk[..j].to_vec();
        v.extend(ahead);
        v.extend(pk[j..].iter().cloned());
        pk = v;
    }
    g.queue.extend(pk);
}

/// What the environment saw per QP.
#[derive(Default, Clone)]
struct Seen {
    writes: Vec<(u64, Vec<u8>)>,
    acks: Vec<(u32, u8, u32)>,
    cqes: Vec<RecvCqe>,
    jobs: Vec<ReadJob>,
    errors: u32,
}

#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
struct Counts {
    exec: u64,
    dup: u64,
    seq: u64,
    rnr: u64,
    inv: u64,
    acc: u64,
    op: u64,
    recv: u64,
    ucd: u64,
    notready: u64,
}

struct RespEnv {
    rng: SplitMix64,
    qps: Vec<Qp>,
    mrs: Vec<Mr>,
    state: Vec<u8>,
    rq: Vec<VecDeque<rqe::Repr>>,
    refs: Vec<rf::Responder>,
    pkts: VecDeque<Pkt>,
    /// Frames rx_wr holds (taken headers), oldest first, and the offset
    /// the next segment of the oldest must not go below.
    frames: VecDeque<(usize, Vec<u8>, usize, usize)>,
    seg_floor: usize,
    offer: bool,
    hd_gap_pct: u8,
    ready_pct: u8,
    ctx_q: Option<usize>,
    mr_q: Option<usize>,
    rqe_q: Option<(bool, RqeBits)>,
    seen: Vec<Seen>,
    expect: Vec<Vec<Effect>>,
    exp_jobs: Vec<Vec<ReadJob>>,
    counts: Counts,
    want: Counts,
    taken: u64,
    last_take: Option<u64>,
    gaps: Vec<u64>,
    mid_frame: bool,
    posted: u64,
    now: u64,
    last_busy: u64,
    // Coverage.
    /// Completions by status (0, 1, 2, 4, 5 used).
    cov_status: [u64; 8],
    cov_uc_exec: u64,
    cov_wrap: u64,
    cov_imm: u64,
    cov_bytes: u64,
    cov_tokens: u64,
    cov_wait: u64,
}

impl RespEnv {
    fn new(seed: u64, n_pkts: usize) -> Self {
        let mut rng = SplitMix64::new(seed);
        let mut c = gen_case(&mut rng, n_pkts);
        // Each QP's max_dest_rd_atomic, 0..7, from a stream of its own so
        // that the rest of the case is what it was before the field.
        let mut mr = SplitMix64::new(seed ^ 0x6D61_785F_7264); // "max_rd"
        for q in &mut c.qps {
            q.max_rd = mr.below(8) as u8;
        }
        let hd_gap_pct = [0, 10, 50][rng.below(3) as usize];
        let ready_pct = [100, 70, 30][rng.below(3) as usize];
        Self::from_case(rng, c, hd_gap_pct, ready_pct)
    }

    fn from_case(rng: SplitMix64, c: Case, hd_gap_pct: u8, ready_pct: u8) -> Self {
        let refs = (0..QPS)
            .map(|q| {
                let mut r = rf::Responder::new(c.qps[q].ctx, c.mrs.clone());
                for x in &c.rqs[q] {
                    r.post_recv(*x);
                }
                r
            })
            .collect();
        let posted = c.rqs.iter().map(|r| r.len() as u64).sum();
        RespEnv {
            hd_gap_pct,
            ready_pct,
            rng,
            state: vec![S_RESET; QPS],
            rq: c.rqs.iter().map(|r| r.iter().copied().collect()).collect(),
            qps: c.qps,
            mrs: c.mrs,
            refs,
            pkts: c.pkts.into(),
            frames: VecDeque::new(),
            seg_floor: 0,
            offer: false,
            ctx_q: None,
            mr_q: None,
            rqe_q: None,
            seen: vec![Seen::default(); QPS],
            expect: vec![Vec::new(); QPS],
            exp_jobs: vec![Vec::new(); QPS],
            counts: Counts::default(),
            want: Counts::default(),
            taken: 0,
            last_take: None,
            gaps: Vec::new(),
            mid_frame: false,
            posted,
            now: 0,
            last_busy: 0,
            cov_status: [0; 8],
            cov_uc_exec: 0,
            cov_wrap: 0,
            cov_imm: 0,
            cov_bytes: 0,
            cov_tokens: 0,
            cov_wait: 0,
        }
    }

    /// Counter pulses the reference's effects call for.
    fn predict_counts(&mut self, e: &[Effect]) {
        let w = &mut self.want;
        let silent = e.iter().any(|x| matches!(x, Effect::Silent(_)));
        let dup = e.iter().any(|x| matches!(x, Effect::Duplicate));
        let nak = e.iter().any(|x| matches!(x, Effect::Nak { .. }));
        if !silent && !dup && !nak {
            w.exec += 1;
        }
        w.dup += dup as u64;
        for x in e {
            match x {
                Effect::Nak { nak, .. } => match nak {
                    Nak::PsnSequence => w.seq += 1,
                    Nak::Rnr(_) => w.rnr += 1,
                    Nak::InvalidRequest => w.inv += 1,
                    Nak::RemoteAccess => w.acc += 1,
                    Nak::RemoteOperational => w.op += 1,
                },
                Effect::Silent(Silent::NotReady | Silent::QpError) => w.notready += 1,
                Effect::Silent(Silent::UcDropping | Silent::UcError) => w.ucd += 1,
                _ => {}
            }
        }
    }

    fn observe(&mut self, cycle: u64, o: &ResponderOut, i: &ResponderIn) {
        let c = &mut self.counts;
        c.exec += o.ev_exec as u64;
        c.dup += o.ev_dup as u64;
        c.seq += o.ev_seq_nak as u64;
        c.rnr += o.ev_rnr_nak as u64;
        c.inv += o.ev_inv_nak as u64;
        c.acc += o.ev_acc_nak as u64;
        c.op += o.ev_op_nak as u64;
        c.recv += o.ev_recv as u64;
        c.ucd += o.ev_uc_drop as u64;
        c.notready += o.ev_notready as u64;
        if o.ack_valid {
            self.seen[o.ack_qp as usize]
                .acks
                .push((o.ack_psn, o.ack_syndrome, o.ack_msn));
        }
        if o.err_valid {
            let q = o.err_qp as usize;
            self.seen[q].errors += 1;
            self.state[q] = S_ERROR;
        }
        if o.rqe_pop_valid {
            let q = o.rqe_pop_qp as usize;
            assert!(
                self.rq[q].pop_front().is_some(),
                "cycle {cycle}: pop of QP {q}'s empty RQ"
            );
        }
        if o.wc_valid && !i.wc_ready {
            self.cov_wait += 1;
        }
        if o.wc_valid && i.wc_ready {
            if o.wc_tok {
                assert!(!self.mid_frame, "cycle {cycle}: a token inside a frame");
                self.cov_tokens += 1;
                match Tok::unpack(&o.wc_tok_data) {
                    Tok::Cqe(c) => self.seen[c.qp as usize].cqes.push(c),
                    Tok::Read(r) => self.seen[r.qp as usize].jobs.push(r),
                }
            } else {
                let (q, frame, hdr, pay) = self
                    .frames
                    .front()
                    .unwrap_or_else(|| panic!("cycle {cycle}: a command with no frame"));
                let (off, len) = (o.wc_off as usize, o.wc_len as usize);
                assert!(
                    off >= *hdr && off >= self.seg_floor && off + len <= hdr + pay,
                    "cycle {cycle}: segment [{off}, +{len}) outside the payload [{hdr}, +{pay}) \
                     or behind the last"
                );
                if len > 0 {
                    self.seen[*q]
                        .writes
                        .push((o.wc_addr, frame[off..off + len].to_vec()));
                    self.cov_bytes += len as u64;
                }
                self.seg_floor = off + len;
                self.mid_frame = !o.wc_last;
                if o.wc_last {
                    self.frames.pop_front();
                    self.seg_floor = 0;
                }
            }
        }
    }

    fn inputs(&mut self, cycle: u64, o: &ResponderOut) -> ResponderIn {
        let mut i = ResponderIn {
            wc_ready: self.rng.percent(self.ready_pct),
            ..Default::default()
        };
        // csr: QP contexts and MR entries, data the cycle after the read.
        if let Some(q) = self.ctx_q {
            let p = &self.qps[q];
            i.ctx_state = self.state[q];
            i.ctx_uc = p.ctx.uc;
            i.ctx_mtu = p.mtu_code;
            i.ctx_pd = p.ctx.pd;
            i.ctx_rq_cq = p.cq;
            i.ctx_rnr_timer = p.ctx.min_rnr_timer;
            i.ctx_max_rd = p.max_rd;
            i.ctx_access = p.ctx.access as u8;
            i.ctx_remote_qpn = p.ctx.remote_qpn;
        }
        if let Some(e) = self.mr_q {
            let m = &self.mrs[e];
            i.mr_valid = m.valid;
            i.mr_key = m.key;
            i.mr_va = m.va;
            i.mr_len = m.len;
            i.mr_pbase = m.pbase;
            i.mr_access = m.access as u8;
            i.mr_pd = m.pd;
        }
        if let Some((p, d)) = self.rqe_q {
            i.rqe_present = p;
            i.rqe_data = d;
        }
        if o.ctx_rd_valid {
            self.ctx_q = Some(o.ctx_rd_qp as usize);
        }
        if o.mr_rd_valid {
            self.mr_q = Some(o.mr_rd_idx as usize);
        }
        if o.rqe_rd_valid {
            let q = o.rqe_rd_qp as usize;
            self.rqe_q = Some(match self.rq[q].front() {
                Some(r) => (true, RqeBits(r.to_bytes())),
                None => (false, RqeBits::default()),
            });
        }
        for q in 0..QPS {
            i.rqe_avail |= (!self.rq[q].is_empty() as u16) << q;
            i.qp_err |= ((self.state[q] == S_ERROR) as u16) << q;
        }
        // Setup: EPSN of every QP while still in RESET, then the states.
        if cycle < QPS as u64 * 2 && cycle.is_multiple_of(2) {
            let q = (cycle / 2) as usize;
            i.epsn_set_valid = true;
            i.epsn_set_qp = q as u8;
            i.epsn_set_psn = self.qps[q].ctx.epsn;
        }
        if cycle == QPS as u64 * 2 + 2 {
            for q in 0..QPS {
                self.state[q] = self.qps[q].state;
            }
        }
        // Headers: an offer stays until taken.
        if cycle >= SETUP && !self.offer && !self.pkts.is_empty() {
            self.offer = !self.rng.percent(self.hd_gap_pct);
        }
        if self.offer {
            i.hd_valid = true;
            i.hd_meta = self.pkts[0].meta.pack();
            if o.hd_ready {
                let p = self.pkts.pop_front().unwrap();
                let e = self.refs[p.qp].packet(&p.repr);
                let exec_before = self.want.exec;
                self.predict_counts(&e);
                if self.qps[p.qp].ctx.uc && self.want.exec > exec_before {
                    self.cov_uc_exec += 1;
                }
                if p.meta.psn == 0xFF_FFFF && self.want.exec > exec_before {
                    self.cov_wrap += 1;
                }
                // The READ responses of this packet: one job.
                let mut job: Option<ReadJob> = None;
                for x in &e {
                    if let Effect::ReadResponse {
                        psn,
                        addr,
                        len,
                        msn,
                        ..
                    } = x
                    {
                        match &mut job {
                            Some(j) => j.len += len,
                            None => {
                                job = Some(ReadJob {
                                    qp: p.qp as u8,
                                    psn: *psn,
                                    addr: *addr,
                                    len: *len,
                                    msn: *msn,
                                    mtu: self.qps[p.qp].mtu_code,
                                    // The QP's RESP.max_dest_rd_atomic as
                                    // this environment programmed it.
                                    max_rd: self.qps[p.qp].max_rd,
                                })
                            }
                        }
                    }
                }
                self.exp_jobs[p.qp].extend(job);
                self.expect[p.qp].extend(e);
                let (h, n) = (p.meta.hdr_len as usize, p.meta.pay_len as usize);
                self.frames.push_back((p.qp, p.frame, h, n));
                self.offer = false;
                self.taken += 1;
                if let Some(t) = self.last_take {
                    self.gaps.push(cycle - t);
                }
                self.last_take = Some(cycle);
            }
        }
        i
    }

    /// The end-of-case comparison, per QP, with the reference.
    fn compare(&mut self) {
        assert!(
            self.frames.is_empty(),
            "frames never drained: {}",
            self.frames.len()
        );
        let mut flushed = 0;
        for q in 0..QPS {
            let s = &self.seen[q];
            let e = &self.expect[q];
            let writes: Vec<(u64, Vec<u8>)> = e
                .iter()
                .filter_map(|x| match x {
                    Effect::Write { addr, bytes } => Some((*addr, bytes.clone())),
                    _ => None,
                })
                .collect();
            assert_eq!(s.writes, writes, "QP {q}: writes");
            // ACKs and NAKs in order, exactly (the responder does not
            // coalesce; ack_gen does), and the ACKs alone through acks_cover.
            let acks: Vec<(u32, u8, u32)> = e
                .iter()
                .filter_map(|x| match x {
                    Effect::Ack { psn, msn } => Some((*psn, SYNDROME_ACK, *msn)),
                    Effect::Nak { psn, nak, msn } => Some((*psn, nak.syndrome(), *msn)),
                    _ => None,
                })
                .collect();
            assert_eq!(s.acks, acks, "QP {q}: ACK/NAK sequence");
            let req: Vec<(u32, u32)> = acks
                .iter()
                .filter(|a| a.1 == SYNDROME_ACK)
                .map(|a| (a.0, a.2))
                .collect();
            let sent: Vec<(u32, u32)> = s
                .acks
                .iter()
                .filter(|a| a.1 == SYNDROME_ACK)
                .map(|a| (a.0, a.2))
                .collect();
            acks_cover(&req, &sent).unwrap_or_else(|m| panic!("QP {q}: {m}"));
            let p = &self.qps[q];
            let mut cqes: Vec<RecvCqe> = e
                .iter()
                .filter_map(|x| match x {
                    Effect::Cqe {
                        wr_id,
                        status,
                        opcode,
                        byte_len,
                        imm,
                        src_qp,
                    } => Some(RecvCqe {
                        qp: q as u8,
                        cq: p.cq,
                        wr_id: *wr_id,
                        status: *status,
                        opcode: *opcode,
                        byte_len: *byte_len,
                        imm: imm.unwrap_or(0),
                        imm_present: imm.is_some(),
                        src_qp: *src_qp,
                    }),
                    _ => None,
                })
                .collect();
            // A QP in ERROR: what the reference still holds is flushed.
            if self.state[q] == S_ERROR {
                for r in &self.refs[q].rq {
                    flushed += 1;
                    cqes.push(RecvCqe {
                        qp: q as u8,
                        cq: p.cq,
                        wr_id: r.wr_id,
                        status: 5,
                        opcode: 128,
                        byte_len: 0,
                        imm: 0,
                        imm_present: false,
                        src_qp: p.ctx.remote_qpn,
                    });
                }
                assert!(self.rq[q].is_empty(), "QP {q}: RECVs left unflushed");
            } else {
                let left: Vec<u64> = self.rq[q].iter().map(|r| r.wr_id).collect();
                let rleft: Vec<u64> = self.refs[q].rq.iter().map(|r| r.wr_id).collect();
                assert_eq!(left, rleft, "QP {q}: RECVs left");
            }
            assert_eq!(s.cqes, cqes, "QP {q}: receive completions");
            for c in &cqes {
                self.cov_status[c.status as usize & 7] += 1;
                self.cov_imm += c.imm_present as u64;
            }
            // READ jobs: the responses of one request, as one job.
            let jobs = &self.exp_jobs[q];
            assert_eq!(&s.jobs, jobs, "QP {q}: READ jobs");
            let errs = e.iter().filter(|x| matches!(x, Effect::QpError)).count() as u32;
            assert_eq!(s.errors, errs, "QP {q}: QP errors");
            assert_eq!(self.refs[q].in_error(), errs > 0);
        }
        let consumed: u64 = self.posted - self.refs.iter().map(|r| r.rq.len() as u64).sum::<u64>();
        self.want.recv = consumed + flushed;
        assert_eq!(self.counts, self.want, "counter pulses");
    }
}

impl Env for RespEnv {
    type In = ResponderIn;
    type Out = ResponderOut;

    fn step(&mut self, cycle: u64, o: &ResponderOut) -> ResponderIn {
        let i = self.inputs(cycle, o);
        self.observe(cycle, o, &i);
        self.now = cycle;
        if !o.hd_ready || o.wc_valid || i.hd_valid {
            self.last_busy = cycle;
        }
        i
    }

    fn finished(&self) -> bool {
        let flush_due = (0..QPS).any(|q| self.state[q] == S_ERROR && !self.rq[q].is_empty());
        self.pkts.is_empty()
            && self.frames.is_empty()
            && !flush_due
            && self.now > self.last_busy + 20
    }
}

#[derive(Default)]
struct Tally {
    cycles: u64,
    pkts: u64,
    want: Counts,
    bytes: u64,
    tokens: u64,
    wait: u64,
    status: [u64; 8],
    uc_exec: u64,
    wrap: u64,
    imm: u64,
    jobs: u64,
    /// READ jobs by the max_rd their QP was given.
    jobs_by_max_rd: [u64; 8],
}

#[test]
fn responder_random_lockstep() {
    let mut t = Tally::default();
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let n = PKTS;
        let mut env = RespEnv::new(seed, n);
        let budget = SETUP + DRAIN + n as u64 * 100;
        let fin = lockstep::run(
            &mut Responder::new(),
            &mut RtlResponder::new(),
            &mut env,
            budget,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert!(fin.completed, "the case did not finish in {budget} cycles");
        assert!(
            env.pkts.is_empty(),
            "{} packets never taken",
            env.pkts.len()
        );
        env.compare();
        t.cycles += fin.cycles;
        t.pkts += env.taken;
        let w = env.want;
        t.want.exec += w.exec;
        t.want.dup += w.dup;
        t.want.seq += w.seq;
        t.want.rnr += w.rnr;
        t.want.inv += w.inv;
        t.want.acc += w.acc;
        t.want.op += w.op;
        t.want.recv += w.recv;
        t.want.ucd += w.ucd;
        t.want.notready += w.notready;
        t.bytes += env.cov_bytes;
        t.tokens += env.cov_tokens;
        t.wait += env.cov_wait;
        for k in 0..8 {
            t.status[k] += env.cov_status[k];
        }
        t.uc_exec += env.cov_uc_exec;
        t.wrap += env.cov_wrap;
        t.imm += env.cov_imm;
        t.jobs += env.exp_jobs.iter().map(|j| j.len() as u64).sum::<u64>();
        for j in env.exp_jobs.iter().flatten() {
            t.jobs_by_max_rd[j.max_rd as usize] += 1;
        }
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        t.cycles >= MIN_CYCLES && t.jobs_by_max_rd.iter().all(|&n| n > 0)
    });
    println!(
        "responder: {} cases, {} cycles, {} packets, {:?}, {} bytes written, {} tokens, \
         {} command waits, completions by status {:?}, {} with immediate, {} READ jobs \
         (by max_rd {:?}), {} UC packets executed, {} executed at PSN 0xFFFFFF",
        run.cases,
        t.cycles,
        t.pkts,
        t.want,
        t.bytes,
        t.tokens,
        t.wait,
        t.status,
        t.imm,
        t.jobs,
        t.jobs_by_max_rd,
        t.uc_exec,
        t.wrap
    );
    // Floors that hold for every seed: every packet is taken (asserted per
    // case) and costs at least 5 cycles (take, two read cycles, a command,
    // the finish). Coverage of every outcome is the tour's job
    // (`responder_every_outcome`), whatever the seed.
    assert_eq!(t.pkts, run.cases * PKTS as u64);
    assert!(
        t.cycles >= 5 * t.pkts,
        "{} cycles for {} packets",
        t.cycles,
        t.pkts
    );
    if run.full {
        assert!(t.cycles >= MIN_CYCLES, "only {} cycles", t.cycles);
        // Every max_rd value reaches a READ job token.
        assert!(
            t.jobs_by_max_rd.iter().all(|&n| n > 0),
            "READ jobs by max_rd: {:?}",
            t.jobs_by_max_rd
        );
    }
}

/// One RC QP (QP 5, RTS, MTU code `mtu_code`, MR entry 1 granting every
/// right) and `pkts` built by `f` from (MR, MTU bytes).
fn directed(mtu_code: u8, n_recvs: usize, f: impl Fn(&Mr, usize) -> Vec<RoceRepr>) -> Case {
    let mrs: Vec<Mr> = (0..MRS as u32)
        .map(|e| Mr {
            index: e,
            key: e + 0x40,
            va: 0x1000_0000 * (e as u64 + 1),
            len: 0x10_0000,
            pbase: 0x40_0000_0000 + 0x100_0000 * e as u64,
            access: 7,
            pd: 3,
            valid: true,
        })
        .collect();
    let qps: Vec<Qp> = (0..QPS)
        .map(|q| Qp {
            ctx: QpCtx {
                qp: q as u32,
                remote_qpn: 0x77,
                uc: false,
                ready: true,
                pd: 3,
                mtu: mtu_bytes(mtu_code),
                epsn: 0xFF_FFF0,
                access: 6,
                min_rnr_timer: 1,
                mrs: MRS as u32,
            },
            state: S_RTS,
            mtu_code,
            cq: 0,
            max_rd: q as u8 & 7,
        })
        .collect();
    let mut rqs = vec![Vec::new(); QPS];
    for k in 0..n_recvs {
        let mut r = rqe::Repr {
            wr_id: k as u64,
            num_sge: 1,
            ..Default::default()
        };
        r.sges[0] = rqe::Sge {
            va: mrs[1].va + 64 * k as u64,
            len: 64,
            lkey: mrs[1].key,
        };
        rqs[5].push(r);
    }
    let pkts = f(&mrs[1], mtu_bytes(mtu_code) as usize)
        .into_iter()
        .map(|r| finish(5, r))
        .collect();
    Case {
        qps,
        mrs,
        rqs,
        pkts,
    }
}

/// Runs a directed case in lockstep with no back-pressure and headers
/// always waiting; returns the cycles between header takes.
fn run_directed(c: Case) -> Vec<u64> {
    let n = c.pkts.len() as u64;
    let mut env = RespEnv::from_case(SplitMix64::new(1), c, 0, 100);
    let fin = lockstep::run(
        &mut Responder::new(),
        &mut RtlResponder::new(),
        &mut env,
        SETUP + DRAIN + n * 40,
    )
    .unwrap_or_else(|d| panic!("{d}"));
    assert!(fin.completed);
    env.compare();
    assert_eq!(env.taken, n);
    env.gaps
}

/// The message rate: a 64-byte SEND ONLY (one RECV entry) every 9 cycles
/// (take, two read cycles, three for the entry's MR check, the segment,
/// the completion token, the finish); an MTU WRITE MIDDLE every 5 (take,
/// two read cycles, the segment, the finish). ePSN wraps on the way.
#[test]
fn responder_cycles_per_packet() {
    let sends = directed(1, 100, |_, _| {
        (0..100u32)
            .map(|k| repr(5, 0x04, 0xFF_FFF0 + k, false, vec![k as u8; 64]))
            .collect()
    });
    let gaps = run_directed(sends);
    assert!(gaps.iter().all(|&g| g == 9), "SEND ONLY gaps {gaps:?}");
    let writes = directed(5, 0, |m, mtu| {
        let n = 50u32;
        (0..n)
            .map(|k| {
                let opc = match k {
                    0 => 0x06,
                    k if k + 1 == n => 0x08,
                    _ => 0x07,
                };
                let mut r = repr(5, opc, 0xFF_FFF0 + k, false, vec![k as u8; mtu]);
                if k == 0 {
                    r.reth = Some(reth::Repr {
                        va: m.va,
                        rkey: m.key,
                        dma_len: n * mtu as u32,
                    });
                }
                r
            })
            .collect()
    });
    let gaps = run_directed(writes);
    assert!(gaps.iter().all(|&g| g == 5), "WRITE gaps {gaps:?}");
    // READ requests of 4 KiB at MTU 1024: a token each, 6 cycles.
    let reads = directed(3, 0, |m, _| {
        (0..50u32)
            .map(|k| {
                let mut r = repr(5, 0x0C, 0xFF_FFF0 + 4 * k, false, Vec::new());
                r.reth = Some(reth::Repr {
                    va: m.va,
                    rkey: m.key,
                    dma_len: 4096,
                });
                r
            })
            .collect()
    });
    let gaps = run_directed(reads);
    assert!(gaps.iter().all(|&g| g == 6), "READ gaps {gaps:?}");
    println!(
        "responder: 64-byte SEND ONLY every 9 cycles, 4096-byte WRITE MIDDLE every 5, \
         READ request every 6"
    );
}

/// The tour: one deterministic case that reaches every outcome, so that
/// the coverage floors hold for every seed. QP 1: a RECV with 5 entries
/// (status 2, remote operational NAK). QP 2: a RECV too short (status 1,
/// invalid request). QP 3: an entry outside its MR (status 4). QP 4: a
/// WRITE with a key the table does not hold (remote access). QP 5: a
/// MIDDLE with no message (invalid request). QP 9: a SEND, its duplicate,
/// a READ and its duplicate, two packets ahead (one sequence NAK), the
/// packet due across the PSN wrap, a SEND with no RECV left (RNR). QP 6
/// (UC): a message with its FIRST lost (dropped), then a whole one. QP 7
/// (ERROR, three RECVs): flushed. QP 8 (RESET): not ready.
#[test]
fn responder_every_outcome() {
    let mut c = directed(1, 0, |_, _| Vec::new());
    let m1 = c.mrs[1];
    let good = |wr_id: u64, len: u32| {
        let mut r = rqe::Repr {
            wr_id,
            num_sge: 1,
            ..Default::default()
        };
        r.sges[0] = rqe::Sge {
            va: m1.va + 0x1000,
            len,
            lkey: m1.key,
        };
        r
    };
    for q in 0..QPS {
        c.qps[q].ctx.epsn = 0xFF_FFFE;
    }
    c.qps[6].ctx.uc = true;
    c.qps[7].state = S_ERROR;
    c.qps[7].ctx.ready = false;
    c.qps[8].state = S_RESET;
    c.qps[8].ctx.ready = false;
    let mut r = good(1, 64);
    r.num_sge = 5;
    c.rqs[1].push(r);
    c.rqs[2].push(good(2, 16));
    let mut r = good(3, 64);
    r.sges[0].va = m1.va + m1.len - 8;
    c.rqs[3].push(r);
    c.rqs[9].push(good(9, 64));
    c.rqs[6].push(good(6, 64));
    for k in 0..3 {
        c.rqs[7].push(good(70 + k, 64));
    }
    let e = 0xFF_FFFEu32;
    let p =
        |q: usize, opc: u8, psn: u32, n: usize| repr(q, opc, psn & 0xFF_FFFF, false, vec![0xA5; n]);
    let read = |q: usize, psn: u32, len: u32| {
        let mut r = repr(q, 0x0C, psn & 0xFF_FFFF, false, Vec::new());
        r.reth = Some(reth::Repr {
            va: m1.va,
            rkey: m1.key,
            dma_len: len,
        });
        r
    };
    let mut w = p(4, 0x0A, e, 8);
    w.reth = Some(reth::Repr {
        va: m1.va,
        rkey: m1.key ^ 0x100,
        dma_len: 8,
    });
    let list = vec![
        p(1, 0x04, e, 8),
        p(2, 0x04, e, 32),
        p(3, 0x04, e, 32),
        w,
        p(5, 0x01, e, 256),
        p(9, 0x04, e, 40),      // executed
        p(9, 0x04, e, 40),      // duplicate: ACK e with MSN 1
        read(9, e + 1, 600),    // three responses: ePSN e + 4 = 2
        read(9, e + 1, 600),    // duplicate READ: the job again
        p(9, 0x04, e + 6, 0),   // ahead: sequence NAK for 2
        p(9, 0x04, e + 7, 0),   // ahead again: silent
        p(9, 0x04, e + 4, 0),   // due: no RECV left, RNR NAK
        p(6, 0x21, e + 1, 256), // UC MIDDLE with its FIRST lost: dropped
        p(6, 0x22, e + 2, 8),   // the rest of it: dropped
        p(6, 0x24, e + 3, 8),   // a new ONLY: executed
        p(7, 0x04, e, 8),       // ERROR: dropped, RECVs flushed
        p(8, 0x04, e, 8),       // RESET: dropped
    ];
    c.pkts = list
        .into_iter()
        .map(|r| {
            let q = r.bth.dest_qp as usize;
            finish(q, r)
        })
        .collect();
    let mut env = RespEnv::from_case(SplitMix64::new(2), c, 0, 50);
    let fin = lockstep::run(
        &mut Responder::new(),
        &mut RtlResponder::new(),
        &mut env,
        SETUP + DRAIN,
    )
    .unwrap_or_else(|d| panic!("{d}"));
    assert!(fin.completed);
    env.compare();
    let w = env.want;
    assert_eq!(
        (w.exec, w.dup, w.seq, w.rnr, w.inv, w.acc, w.op, w.ucd, w.notready),
        (3, 2, 1, 1, 2, 1, 2, 2, 2),
        "the tour's outcomes: {w:?}"
    );
    // Completions: 1 x status 2, 1 x status 1, 1 x status 4, two good ones
    // (QP 9's SEND, QP 6's ONLY), three flushed.
    assert_eq!(env.cov_status[..6], [2, 1, 1, 0, 1, 3]);
    assert_eq!(w.recv, 8);
    assert_eq!(env.exp_jobs[9].len(), 2);
}

/// `a_hd_hold` (the header offer holds until taken) fires when an offer
/// that met `hd_ready` low is withdrawn, and not when it stays up.
#[test]
fn responder_hd_hold_assertion_fires() {
    let offer = ResponderIn {
        hd_valid: true,
        hd_meta: RxMeta {
            qp: 1,
            opcode: 0x04,
            ..Default::default()
        }
        .pack(),
        wc_ready: true,
        ..Default::default()
    };
    let idle = ResponderIn {
        wc_ready: true,
        ..Default::default()
    };
    for withdraw in [false, true] {
        let mut rtl = RtlResponder::new();
        let out = rtl.reset();
        assert!(out.hd_ready);
        // Taken at the first edge; the second offer meets hd_ready low.
        rtl.tick(&offer);
        let out = rtl.tick(&offer);
        assert!(!out.hd_ready, "the block is busy with the first header");
        let next = if withdraw { idle } else { offer };
        for _ in 0..30 {
            rtl.tick(&next);
        }
        let names: Vec<&str> = rtl
            .assertion_failures()
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        if withdraw {
            assert!(names.contains(&"a_hd_hold"), "failures: {names:?}");
        } else {
            assert!(names.is_empty(), "failures: {names:?}");
        }
    }
}
