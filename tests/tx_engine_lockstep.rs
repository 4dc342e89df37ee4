//! Constrained-random block-level lockstep of `tx_engine`.
//!
//! The environment plays the blocks around the engine, each with the timing
//! of docs/tx_datapath.md:
//! - csr: QP and MR tables with registered reads (`out(n+1) = table[idx(n)]`
//!   before cycle n's writes); the MR port's address is the lkey bits of
//!   sq_fetch's `wqe_data` register, as rnic_top wires it; PSN write-back and
//!   QP -> ERROR are applied;
//! - sq_fetch: WQEs become available at random times, in order per QP; a pop
//!   at n delivers the WQE at n+1 and clears its availability at n+1;
//! - tx_sched: `grant(n+1)` from `req_active(n) | wqe_avail(n)`, round robin
//!   from the pointer, which moves on a transfer; because of that lag the
//!   engine also gets stale grants; on top, some cycles have no grant (the
//!   `allow` mask of issue 4) and some grants name a random QP;
//! - random back-pressure on desc, rd_req and cpl;
//! - cnp_gen: a CNP for a random QP waits at random times (`cnp_valid`,
//!   held until taken by a control grant); some grants are control grants
//!   (`grant_ctrl`, `grant_qp` 0), with or without a CNP waiting;
//! - ack_gen: an ACK / NAK (every syndrome kind: ACK, RNR NAK, NAK codes
//!   0..4; random QP, PSN and MSN; now and then for a UC QP) waits at random
//!   times (`ack_valid`, held until taken); a control grant takes the ACK
//!   when the environment's own round-robin pointer says so (asserted equal
//!   to `ctrl_ack_first` every cycle) or no CNP waits, else the CNP;
//! - software (or a fault elsewhere, or retries run out): in some cases,
//!   now and then, csr's context of a QP with a WQE in progress (some of
//!   its packets taken, not all) is set to ERROR, and for an RC QP
//!   ack_tracker's `err_mode` bit is set with it or not;
//! - ack_tracker's `full` as `wqe_block`: in some cases random QPs' bits
//!   flip at random times (held for a while, like a full queue); tx_sched
//!   mostly leaves blocked QPs out of its grant (rnic_top gates `rate_ok`
//!   with `full`), computed a cycle before, so a grant often meets a block
//!   that has just risen, and sometimes it ignores the block altogether.
//!
//! Independent checks: a reference written here from the WQE list computes
//! each QP's packet sequence (opcode, PSN, payload length, payload read
//! address and length, RETH, ImmDt, SE, AckReq, desc_cpl, header fields from
//! the QP context) and completion sequence (status, opcode, length,
//! immediate, CQ, wait_frame, UC flag, last PSN: RC signaled messages
//! complete too, without waiting for a frame); every transfer is compared
//! with it, the
//! k-th descriptor with payload with the k-th payload read, the j-th
//! wait_frame completion with the j-th desc_cpl descriptor; error / flush /
//! protection event pulses are counted; a new WQE is popped exactly the cycle
//! after its grant, and never for a grant of a QP with no WQE in progress
//! whose `wqe_block` is high in the grant's cycle (that grant is taken and
//! does nothing), while a grant of a blocked QP with a WQE in progress
//! sends its next packet as usual; and every step's latency from the
//! grant is exactly the contract's budget (new WQE 4 cycles, WQE in progress
//! 3, CNP 3). Every descriptor's `desc_wire_len` is the length of the frame
//! the testbench's own encoder (`rnic_testbench::wire::roce::RoceRepr`)
//! builds from it, and each CNP descriptor (in the order the CNPs were
//! taken) carries its QP's addresses and the CNP configuration. Each ACK
//! descriptor (in the order the control frames were taken) is turned into
//! frame bytes by that encoder, parsed back by the testbench's decoder
//! (`RoceRepr::parse`: ICRC, opcode 0x11 with an AETH and no payload) and
//! compared field by field with the QP's headers and the ACK taken; an ACK
//! for a UC QP gives no output at all and `grant_ready` rises 4 cycles after
//! its grant.
//!
//!
//! After such an ERROR (docs/tx_datapath.md, "ERROR in the middle of a
//! message"): at most `KILL_WINDOW` more packets of the QP, in order (what
//! was committed); then each WQE from the one in progress on ends as its
//! own completion (sent whole before the step saw ERROR), a success of
//! its length and last PSN when it stopped in the middle on an RC QP in
//! error mode (signaled or not), flushed (5) otherwise or when it never
//! started, or, for a WQE whose step began before the write, its own
//! local error; none is skipped unless sent whole and unsignaled.
//!
//! READ responses (docs/responder.md, "rd_resp and READ responses in
//! tx_engine"): in most cases the environment also plays rd_resp, with READ
//! jobs (every MTU code, lengths 0, around the MTU and up to 256 KiB,
//! first PSNs about to wrap) becoming available on random QPs at random
//! times (`job_avail`), a registered head read (`job_rd` at n, the job on
//! `job_*` at n+1) and pops. From each job alone it derives the response
//! packets (docs/protocol.md section 1: ONLY for one packet, also for
//! length 0, else FIRST, MIDDLE..., LAST; every packet but the last one MTU
//! of the job's MTU code; PSN = job PSN + index mod 2^24; AETH with
//! syndrome 0x1F, the ACK syndrome the responder uses, and the job's MSN on
//! FIRST, LAST and ONLY) and checks every response descriptor against it:
//! the frame built by the testbench's encoder and parsed back by its
//! decoder has the QP's headers, the opcode, PSN, AETH and payload length
//! (AckReq, SE 0, no RETH / ImmDt); its payload read is at job address +
//! index x MTU, and the reads of a job cover exactly [addr, addr + len); no
//! PSN write-back and no completion come with it. A data grant taken for a
//! QP whose `job_avail` bit is high must be a response step (read at n+1,
//! descriptor at n+3), whatever WQE the QP has in progress or waiting; a
//! job is popped exactly in the cycle its last packet's descriptor shows,
//! and every job exactly once. `tx_engine_read_response_rate` measures the
//! cycle figures of docs/responder.md (a 64 KiB READ at MTU 4096).
//! With `RNIC_MODEL_ALONE=1` the random test runs the model alone under
//! the environment (no RTL), to show a mutation of the model is caught.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or
//! `RNIC_RANDOM_CASES`. A failing case prints its own seed;
//! `RNIC_RANDOM_SEED=<that seed> RNIC_RANDOM_CASES=1` replays it alone.
//! With at least the default case count the test asserts that
//! [`MIN_TOTAL_CYCLES`] lockstep cycles ran.

mod common;

use std::collections::VecDeque;

use rnic_model::resp_tok::ReadJob;
use rnic_model::tx_engine::{TxEngine, TxEngineIn, TxEngineOut, MRS, QPS};
use rnic_model::Beat;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlTxEngine;
use rnic_testbench::wire::cqe::{
    STATUS_LOC_PROT_ERR, STATUS_LOC_QP_OP_ERR, STATUS_SUCCESS, STATUS_WR_FLUSH_ERR,
};
use rnic_testbench::wire::roce::{
    aeth, bth, ethernet, ipv4, ipv6, reth, udp, IpRepr, RoceFrame, RoceRepr,
};
use rnic_testbench::wire::wqe;
use std::net::{Ipv4Addr, Ipv6Addr};

const DEFAULT_CASES: u64 = 300;
const DEFAULT_SEED: u64 = 0x7478_5F65_6E67_696E; // "tx_engin"
/// Lockstep cycles the default run must reach in total.
const MIN_TOTAL_CYCLES: u64 = 500_000;
/// Packets a case generates at most (its WQEs stop there).
const PKT_BUDGET: u64 = 1500;
/// Packets of a QP that may still be taken after the environment wrote
/// ERROR into its context: one waiting in the descriptor register and one
/// from the step that read the context before the write.
const KILL_WINDOW: u64 = 2;

/// The environment moved a QP to ERROR with a WQE in progress.
#[derive(Debug, Clone, Copy)]
struct Kill {
    /// The cycle of the write.
    at: u64,
    /// Packets of the QP taken since.
    after: u64,
    /// ack_tracker's error mode for the QP (`err_mode`), set with it.
    turn: bool,
    /// The first WQE whose completion (or whole sending) is still due.
    next: usize,
    /// The first WQE not started at the write.
    first_new: usize,
}

#[derive(Debug, Clone, Copy, Default)]
struct Qp {
    state: u8,
    uc: bool,
    ipv6: bool,
    vlan_en: bool,
    ecn_en: bool,
    mtu: u8,
    /// CTRL.MAX_RD: only passed through to the rr_* record.
    max_rd: u8,
    cq: u8,
    remote_qpn: u32,
    psn: u32,
    pd: u16,
    dst_mac: u64,
    src_mac: u64,
    src_ip: u128,
    dst_ip: u128,
    udp_sport: u16,
    dscp: u8,
    vid: u16,
    pcp: u8,
    pkey: u16,
}

#[derive(Debug, Clone, Copy, Default)]
struct Mr {
    valid: bool,
    key: u32,
    va: u64,
    len: u64,
    pbase: u64,
    access: u8,
    pd: u16,
}

#[derive(Debug, Clone, Copy)]
struct Wqe {
    wr_id: u64,
    op: u8,
    flags: u8,
    len: u32,
    laddr: u64,
    lkey: u32,
    imm: u32,
    rva: u64,
    rkey: u32,
    /// Random bytes for the reserved fields (must be ignored).
    junk: u64,
}

impl Wqe {
    fn bytes(&self) -> Beat {
        let mut b = Beat::default();
        for (k, x) in b.iter_mut().enumerate() {
            *x = (self.junk >> (8 * (k % 8))) as u8 ^ k as u8;
        }
        // The fields over the junk; op and flags as drawn, reserved bits too.
        let mut w = wqe::Wqe::new_unchecked(&mut b[..]);
        w.set_wr_id(self.wr_id);
        w.set_opcode(self.op);
        w.set_flags(self.flags);
        w.set_length(self.len);
        w.set_laddr(self.laddr);
        w.set_lkey(self.lkey);
        w.set_imm(self.imm);
        w.set_raddr(self.rva);
        w.set_rkey(self.rkey);
        b
    }
}

/// A packet as the reference expects it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pkt {
    opcode: u8,
    psn: u32,
    pay: u32,
    reth: Option<(u64, u32, u32)>,
    imm: Option<u32>,
    se: bool,
    ack_req: bool,
    cpl: bool,
    /// Payload read address (when pay > 0).
    rd_addr: u64,
    /// The WQE's index in its QP's list (not an output: bookkeeping).
    wqe: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Cpl {
    wait: bool,
    wr_id: u64,
    status: u8,
    opcode: u8,
    len: u32,
    imm: u32,
    cq: u8,
    uc: bool,
    /// The message's last PSN (0 for errors and flushes).
    psn: u32,
}

fn mtu_of(code: u8) -> u32 {
    match code {
        0 | 1 => 256,
        2 => 512,
        3 => 1024,
        4 => 2048,
        _ => 4096,
    }
}

/// The operation a CQE names for WQE opcode `op` (ibv_wc_opcode,
/// protocol.md section 6): SEND 0, RDMA WRITE 1, RDMA READ 2; 0x7F for
/// no operation.
fn wc_opcode(op: u8) -> u8 {
    match op {
        0 | 1 => 0,
        2 | 3 => 1,
        4 => 2,
        _ => 0x7F,
    }
}

/// The reference: what QP `qp` must send and complete for `wqes`.
fn reference(qp: &Qp, mrs: &[Mr; MRS], wqes: &[Wqe]) -> (Vec<Pkt>, Vec<Cpl>) {
    let mut pkts = Vec::new();
    let mut cpls = Vec::new();
    let mut error = qp.state == 2;
    let mut psn = qp.psn;
    let mtu = mtu_of(qp.mtu);
    for (wi, w) in wqes.iter().enumerate() {
        let imm_op = w.op == 1 || w.op == 3;
        let wc_op = wc_opcode(w.op);
        let fail = |status: u8| Cpl {
            wait: false,
            wr_id: w.wr_id,
            status,
            opcode: wc_op,
            len: 0,
            imm: if imm_op { w.imm } else { 0 },
            cq: qp.cq,
            uc: qp.uc,
            psn: 0,
        };
        if error {
            cpls.push(fail(STATUS_WR_FLUSH_ERR));
            continue;
        }
        if w.op > 4 || (w.op == 4 && qp.uc) {
            cpls.push(fail(STATUS_LOC_QP_OP_ERR));
            error = true;
            continue;
        }
        let mr = mrs[w.lkey as usize % MRS];
        if w.len > 0 {
            let ok = mr.valid
                && mr.key == w.lkey
                && mr.pd == qp.pd
                && w.laddr >= mr.va
                && w.laddr as u128 + w.len as u128 <= mr.va as u128 + mr.len as u128
                && (w.op != 4 || mr.access & 1 == 1);
            if !ok {
                cpls.push(fail(STATUS_LOC_PROT_ERR));
                error = true;
                continue;
            }
        }
        let pa = mr.pbase.wrapping_add(w.laddr.wrapping_sub(mr.va));
        let signaled = w.flags & 1 == 1;
        let solicited = w.flags & 2 == 2;
        let uc_bit = if qp.uc { 0x20 } else { 0 };
        let reth = Some((w.rva, w.rkey, w.len));
        if w.op == 4 {
            pkts.push(Pkt {
                opcode: 0x0C,
                psn,
                pay: 0,
                reth,
                imm: None,
                se: false,
                ack_req: true,
                cpl: false,
                // A READ REQUEST reads nothing: rd_addr is where its
                // responses go, the record rd_sink gets (`rr_*`; 0 for
                // length 0).
                rd_addr: if w.len > 0 { pa } else { 0 },
                wqe: wi,
            });
            let n = (w.len as u64).div_ceil(mtu as u64).max(1);
            psn = ((psn as u64 + n) % (1 << 24)) as u32;
            if signaled {
                cpls.push(Cpl {
                    wait: false,
                    wr_id: w.wr_id,
                    status: STATUS_SUCCESS,
                    opcode: 2, // RDMA READ (CQE numbering)
                    len: w.len,
                    imm: 0,
                    cq: qp.cq,
                    uc: false,
                    // The last PSN of the READ's span.
                    psn: (psn + (1 << 24) - 1) % (1 << 24),
                });
            }
            continue;
        }
        let n = (w.len as u64).div_ceil(mtu as u64).max(1);
        for k in 0..n {
            let (first, last) = (k == 0, k == n - 1);
            let pay = if last { w.len - (k as u32) * mtu } else { mtu };
            // RC opcode numbers of docs/protocol.md section 1.
            let opcode = match (w.op, first, last) {
                (0 | 1, true, false) => 0x00,
                (0 | 1, false, false) => 0x01,
                (0, false, true) => 0x02,
                (1, false, true) => 0x03,
                (0, true, true) => 0x04,
                (1, true, true) => 0x05,
                (2 | 3, true, false) => 0x06,
                (2 | 3, false, false) => 0x07,
                (2, false, true) => 0x08,
                (3, false, true) => 0x09,
                (2, true, true) => 0x0A,
                (3, true, true) => 0x0B,
                _ => unreachable!(),
            };
            pkts.push(Pkt {
                opcode: opcode | uc_bit,
                psn,
                pay,
                reth: if (w.op == 2 || w.op == 3) && first {
                    reth
                } else {
                    None
                },
                imm: if imm_op && last { Some(w.imm) } else { None },
                se: last && solicited && w.op != 2,
                ack_req: last && !qp.uc,
                cpl: last && qp.uc && signaled,
                rd_addr: if pay > 0 {
                    pa.wrapping_add(k * mtu as u64)
                } else {
                    0
                },
                wqe: wi,
            });
            psn = (psn + 1) % (1 << 24);
        }
        if signaled {
            // UC: after its frame (cq_writer waits); RC: ack_tracker waits
            // for the ACK of the last PSN.
            cpls.push(Cpl {
                wait: qp.uc,
                wr_id: w.wr_id,
                status: STATUS_SUCCESS,
                opcode: wc_op,
                len: w.len,
                imm: if imm_op { w.imm } else { 0 },
                cq: qp.cq,
                uc: qp.uc,
                psn: (psn + (1 << 24) - 1) % (1 << 24),
            });
        }
    }
    (pkts, cpls)
}

/// A READ response packet as derived from its job.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RPkt {
    opcode: u8,
    psn: u32,
    pay: u32,
    /// AETH (syndrome, MSN) on FIRST, LAST and ONLY.
    aeth: Option<(u8, u32)>,
    /// Payload read address (when pay > 0).
    rd_addr: u64,
}

/// The response packets of a READ job (docs/protocol.md sections 1 and 7,
/// docs/responder.md): one per MTU of the job's MTU code, at least one.
fn rsp_packets(j: &ReadJob) -> Vec<RPkt> {
    let mtu = mtu_of(j.mtu) as u64;
    let len = j.len as u64;
    let n = len.div_ceil(mtu).max(1);
    let v: Vec<RPkt> = (0..n)
        .map(|k| {
            let (first, last) = (k == 0, k == n - 1);
            let pay = if last { len - k * mtu } else { mtu };
            RPkt {
                opcode: match (first, last) {
                    (true, true) => 0x10,
                    (true, false) => 0x0D,
                    (false, false) => 0x0E,
                    (false, true) => 0x0F,
                },
                psn: ((j.psn as u64 + k) % (1 << 24)) as u32,
                pay: pay as u32,
                // The responder's ACK syndrome is 0x1F (ACK, no credits
                // advertised; docs/responder.md).
                aeth: (first || last).then_some((0x1F, j.msn)),
                rd_addr: if pay > 0 { j.addr + k * mtu } else { 0 },
            }
        })
        .collect();
    // The reads tile [addr, addr + len) exactly.
    let mut at = j.addr;
    for p in v.iter().filter(|p| p.pay > 0) {
        assert_eq!(p.rd_addr, at);
        at += p.pay as u64;
    }
    assert_eq!(at, j.addr + len);
    v
}

struct Case {
    qps: [Qp; QPS],
    mrs: [Mr; MRS],
    wqes: Vec<Vec<Wqe>>,
    /// Percent of cycles each ready is high.
    desc_rdy: u8,
    rd_rdy: u8,
    cpl_rdy: u8,
    /// Percent of cycles a not-yet-available WQE of a QP becomes available.
    fetch_pct: u8,
    /// Percent of cycles without a grant, and with a random QP granted.
    no_grant_pct: u8,
    rand_grant_pct: u8,
    /// Percent of grants that are control grants, and of cycles a CNP
    /// starts waiting (when none waits).
    ctrl_pct: u8,
    cnp_pct: u8,
    cnp_dscp: u8,
    cnp_pcp: u8,
    cnp_becn: bool,
    /// Percent of cycles one random QP's `wqe_block` bit flips, and of
    /// grants that ignore the block (the others leave blocked QPs out).
    block_flip_pct: u8,
    block_ignore_pct: u8,
    /// Percent of cycles an ACK starts waiting (when none waits), and of
    /// ACKs asked for any QP (UC ones included) rather than an RC QP.
    ack_pct: u8,
    ack_any_pct: u8,
    /// READ jobs per QP (rd_resp), and the percent of cycles the next one
    /// of a QP becomes available.
    jobs: Vec<Vec<ReadJob>>,
    job_pct: u8,
    /// Percent of cycles the environment moves a QP with a WQE in
    /// progress to ERROR (csr, software or a fault elsewhere).
    kill_pct: u8,
}

/// An ACK / NAK as ack_gen offers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ack {
    qp: u8,
    psn: u32,
    syndrome: u8,
    msn: u32,
}

/// A control frame taken, in the order taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ctrl {
    Cnp(u8),
    Ack(Ack),
}

fn gen_case(r: &mut SplitMix64) -> Case {
    let mut mrs = [Mr::default(); MRS];
    for (i, m) in mrs.iter_mut().enumerate() {
        let len = match r.below(4) {
            0 => r.below(0x100) + 1,
            1 | 2 => r.below(0x4_0000) + 1,
            _ => 1 << 33,
        };
        *m = Mr {
            valid: r.percent(90),
            key: (i as u32) | ((r.below(8) as u32) << 4),
            va: match r.below(3) {
                0 => r.below(1 << 20) << 8,
                1 => r.next_u64(),
                _ => u64::MAX - len + 1 - r.below(2), // right at the top of VA space
            },
            len,
            pbase: r.next_u64() & !0xFFF,
            access: r.below(16) as u8,
            pd: (i % 3) as u16,
        };
    }
    // Half the cases have no faults at all, so that long messages and long
    // WQE sequences run; in the others a fault flushes the QP's later WQEs.
    let faults = r.percent(50);
    let f = |r: &mut SplitMix64, p: u8| faults && r.percent(p);
    let mut qps = [Qp::default(); QPS];
    for q in qps.iter_mut() {
        *q = Qp {
            state: if f(r, 8) { 2 } else { 1 },
            uc: r.percent(50),
            ipv6: r.percent(50),
            vlan_en: r.percent(50),
            ecn_en: r.percent(50),
            mtu: r.below(8) as u8,
            max_rd: r.below(8) as u8,
            cq: r.below(4) as u8,
            remote_qpn: r.below(1 << 24) as u32,
            psn: if r.percent(30) {
                (1 << 24) - 1 - r.below(4) as u32
            } else {
                r.below(1 << 24) as u32
            },
            pd: r.below(3) as u16,
            dst_mac: r.next_u64() & 0xFFFF_FFFF_FFFF,
            src_mac: r.next_u64() & 0xFFFF_FFFF_FFFF,
            src_ip: (r.next_u64() as u128) << 64 | r.next_u64() as u128,
            dst_ip: (r.next_u64() as u128) << 64 | r.next_u64() as u128,
            udp_sport: r.next_u64() as u16,
            dscp: r.below(64) as u8,
            vid: r.below(4096) as u16,
            pcp: r.below(8) as u8,
            pkey: r.next_u64() as u16,
        };
    }
    let used = 1 + r.below(QPS as u64) as usize;
    let mut wqes = vec![Vec::new(); QPS];
    let mut pkts = 0u64;
    let mut wr_id = r.next_u64() & 0xFFFF_0000;
    'outer: for _ in 0..200 {
        let q = r.below(used as u64) as usize;
        let mtu = mtu_of(qps[q].mtu) as u64;
        // Most WQEs are good; a fault (which flushes the QP's later WQEs)
        // is one of 5 % invalid opcodes, 2 % READs on UC, 8 % MR faults.
        let mut op = r.below(5) as u8;
        if op == 4 && qps[q].uc && !f(r, 10) {
            op = r.below(4) as u8;
        }
        if f(r, 5) {
            op = 5 + r.below(251) as u8;
        }
        let len = match r.below(10) {
            0 => 0,
            1 => 1 + r.below(3),
            2 => mtu - 1 + r.below(3),
            3 => mtu * (1 + r.below(4)) + r.below(3) - 1,
            4 => r.below(1 << 16),
            5 if r.percent(10) => r.below(1 << 31) + 1,
            _ => r.below(3 * 4096),
        } as u32;
        // An MR that passes: valid, same PD, LOCAL_WRITE for a READ, long enough.
        let fits = |m: &Mr| {
            m.valid && m.pd == qps[q].pd && (op != 4 || m.access & 1 == 1) && m.len >= len as u64
        };
        let good: Vec<usize> = (0..MRS).filter(|&k| fits(&mrs[k])).collect();
        let mi = if good.is_empty() || f(r, 8) {
            r.below(MRS as u64) as usize
        } else {
            good[r.below(good.len() as u64) as usize]
        };
        let mr = mrs[mi];
        let lkey = if f(r, 3) { r.next_u64() as u32 } else { mr.key };
        let room = mr.len.saturating_sub(len as u64);
        let laddr = match if faults { r.below(50) } else { 3 + r.below(47) } {
            0 => mr.va.wrapping_sub(1),
            1 => mr.va.wrapping_add(room + 1),
            2 => r.next_u64(),
            3..=8 => mr.va.wrapping_add(room),
            9..=14 => mr.va,
            _ => mr.va.wrapping_add(r.below(room + 1)),
        };
        let n = if op == 4 {
            1
        } else {
            (len as u64).div_ceil(mtu).max(1)
        };
        if pkts + n > PKT_BUDGET {
            if pkts > PKT_BUDGET / 2 {
                break 'outer;
            }
            continue;
        }
        pkts += n;
        wr_id += 1;
        wqes[q].push(Wqe {
            wr_id,
            op,
            flags: r.below(256) as u8,
            len,
            laddr,
            lkey,
            imm: r.next_u64() as u32,
            rva: r.next_u64(),
            rkey: r.next_u64() as u32,
            junk: r.next_u64(),
        });
    }
    // READ jobs (rd_resp) in most cases, on random QPs, within the budget.
    let mut jobs = vec![Vec::new(); QPS];
    if r.percent(75) {
        let mut rpk = 0u64;
        for _ in 0..r.below(60) {
            let q = r.below(QPS as u64) as usize;
            let code = r.below(8) as u8;
            let mtu = mtu_of(code) as u64;
            let len = match r.below(8) {
                0 => 0,
                1 => 1 + r.below(4),
                2 => mtu - 1 + r.below(3),
                3 => mtu * (1 + r.below(4)) + r.below(3) - 1,
                4 => 1 << 16,
                5 => r.below(1 << 18),
                _ => r.below(3 * 4096),
            } as u32;
            let n = (len as u64).div_ceil(mtu).max(1);
            if rpk + n > PKT_BUDGET {
                continue;
            }
            rpk += n;
            jobs[q].push(ReadJob {
                qp: q as u8,
                psn: if r.percent(30) {
                    (1 << 24) - 1 - r.below(4) as u32
                } else {
                    r.below(1 << 24) as u32
                },
                // A zero-length READ's job has address 0; no job wraps the
                // bus address space.
                addr: if len == 0 { 0 } else { r.next_u64() >> 1 },
                len,
                msn: r.below(1 << 24) as u32,
                mtu: code,
                // rd_resp's limit: not an output of rd_resp, unseen here.
                max_rd: 0,
            });
        }
    }
    let rdy = |r: &mut SplitMix64| {
        if r.percent(30) {
            100
        } else {
            20 + r.below(81) as u8
        }
    };
    Case {
        qps,
        mrs,
        wqes,
        desc_rdy: rdy(r),
        rd_rdy: rdy(r),
        cpl_rdy: rdy(r),
        fetch_pct: [2, 10, 50, 100][r.below(4) as usize],
        no_grant_pct: [0, 0, 10, 40][r.below(4) as usize],
        rand_grant_pct: [0, 5, 20][r.below(3) as usize],
        ctrl_pct: [0, 5, 20, 40][r.below(4) as usize],
        cnp_pct: [1, 10, 50, 100][r.below(4) as usize],
        cnp_dscp: r.below(64) as u8,
        cnp_pcp: r.below(8) as u8,
        cnp_becn: r.percent(50),
        block_flip_pct: [0, 0, 2, 10, 50][r.below(5) as usize],
        block_ignore_pct: [0, 10, 50][r.below(3) as usize],
        ack_pct: [0, 1, 10, 50, 100][r.below(5) as usize],
        ack_any_pct: [0, 5, 30][r.below(3) as usize],
        jobs,
        job_pct: [1, 10, 50, 100][r.below(4) as usize],
        kill_pct: [0, 0, 0, 1, 3][r.below(5) as usize],
    }
}

struct TxEnv {
    r: SplitMix64,
    c: Case,
    // csr
    qp_tab: [Qp; QPS],
    qp_read: Qp,
    mr_read: Mr,
    // sq_fetch
    pending: Vec<VecDeque<Wqe>>,
    avail: Vec<VecDeque<Wqe>>,
    wqe_next: Option<(u8, Wqe)>,
    wqe_data: Beat,
    wqe_qp: u8,
    /// The SQ index sq_fetch gives each popped WQE (`wqe_idx`): per QP, one
    /// more than the last (wrapping 16 bits); the next, the register, and
    /// the index each (QP, wr_id) was popped with, for `cpl_idx`.
    idx_next: [u16; QPS],
    wqe_idx: u16,
    idx_of: std::collections::HashMap<(usize, u64), u16>,
    // tx_sched
    grant_next: Option<u8>,
    grant_next_ctrl: bool,
    ptr: usize,
    // ack_tracker: `wqe_block` (its `full`) this cycle.
    block: u16,
    // cnp_gen: the CNP waiting (its QP), then the CNPs taken and not yet
    // seen as descriptors, in order.
    cnp: Option<u8>,
    // ack_gen: the ACK waiting; the round-robin pointer (true: an ACK goes
    // before a CNP); the control frames taken and not yet seen as
    // descriptors, in order.
    ack: Option<Ack>,
    ack_first: bool,
    exp_ctrl: VecDeque<Ctrl>,
    /// The cycle grant_ready must rise after an ACK for a UC QP.
    ready_due: Option<u64>,
    /// ACK frames checked by syndrome kind (ACK, RNR NAK, NAK), ACKs for a
    /// UC QP dropped, control grants taken with both an ACK and a CNP waiting.
    ack_kinds: [u64; 3],
    acks_dropped: u64,
    both_waiting: u64,
    // checks
    exp_pkts: Vec<VecDeque<Pkt>>,
    exp_cpls: Vec<VecDeque<Cpl>>,
    left: usize,
    /// Descriptors with payload waiting for their read, and reads waiting
    /// for their descriptor.
    rd_wait_desc: VecDeque<(u8, u64, u32)>,
    /// READ REQUEST records seen on `rr_*` (QP, PSN, length, address, MTU
    /// code), each checked when its descriptor is taken.
    rr_seen: VecDeque<(u8, u32, u32, u64, u8, u8)>,
    rr_checked: u64,
    desc_wait_rd: VecDeque<(u8, u64, u32)>,
    /// QPs of desc_cpl descriptors not yet matched with a completion.
    cpl_frames: VecDeque<u8>,
    /// QPs of wait_frame completions taken before their descriptor.
    cpls_wait_frame: VecDeque<u8>,
    /// Grant taken: (cycle, latency budget).
    step_start: Option<(u64, u64)>,
    /// (cycle, QP) of the pop the last grant calls for.
    pop_due: Option<(u64, u8)>,
    prev_valids: bool,
    prev_desc: bool,
    errs_exp: usize,
    errs: usize,
    prot_exp: usize,
    prot: usize,
    flush_exp: usize,
    flush: usize,
    /// Steps: WQE in progress, new WQE, CNP, ACK, READ response.
    steps: [u64; 5],
    /// Packets, completions by status (0, 2, 4, 5), CNPs, ACKs.
    stats: [u64; 7],
    /// Grants taken for a blocked QP: with a WQE available and none in
    /// progress (nothing must happen), with a WQE in progress (it goes on).
    blocked: [u64; 2],
    // rd_resp: jobs not yet available, available (job_avail), the answer
    // to the last head read (held), the response packets still due per QP,
    // jobs not yet popped, bytes read of each QP's head job.
    jobs_pending: Vec<VecDeque<ReadJob>>,
    jobs_avail: Vec<VecDeque<ReadJob>>,
    job_out: (bool, ReadJob),
    job_read_due: Option<u64>,
    exp_rsp: Vec<VecDeque<RPkt>>,
    jobs_left: usize,
    rsp_read: Vec<u64>,
    bytes_jobs: Vec<VecDeque<ReadJob>>,
    /// The step started is a READ response step.
    rsp_step: bool,
    /// Response packets, jobs popped, zero-length jobs, jobs whose PSNs
    /// wrap, response steps taken while the QP had a WQE in progress or
    /// waiting, response descriptors by opcode (FIRST, MIDDLE, LAST, ONLY).
    rsp_stats: [u64; 5],
    rsp_ops: [u64; 4],
    /// First-visible cycles of response descriptors (for the rate test).
    rsp_cycles: Vec<u64>,
    /// The first cycle a job was available (for the rate test).
    job_first_avail: Option<u64>,
    // ERROR in the middle of a message (per QP, per WQE of the QP): the
    // reference's packets and completion of each WQE, its last PSN, the
    // packets taken, the WQE of the last one; the kill and ack_tracker's
    // error mode (`err_mode`); WQEs sent whole with no completion after
    // it; completions after a kill: own, turned, flushed, own local error.
    npk: Vec<Vec<u32>>,
    orig: Vec<Vec<Option<Cpl>>>,
    last_psn: Vec<Vec<u32>>,
    sent: Vec<Vec<u32>>,
    cur: [usize; QPS],
    kill: [Option<Kill>; QPS],
    err_mode: u16,
    must_finish: Vec<Vec<usize>>,
    kill_stats: [u64; 4],
    cpl_seen: Vec<Vec<bool>>,
}

/// The frame the testbench's encoder builds from a descriptor (zero
/// payload bytes).
fn desc_repr(o: &TxEngineOut) -> RoceRepr {
    let ip = if o.desc_ipv6 {
        IpRepr::V6(ipv6::Repr {
            src: Ipv6Addr::from(o.desc_src_ip),
            dst: Ipv6Addr::from(o.desc_dst_ip),
            dscp: o.desc_dscp,
            ecn: o.desc_ecn,
            flow_label: 0,
            hop_limit: 64,
        })
    } else {
        IpRepr::V4(ipv4::Repr {
            src: Ipv4Addr::from(o.desc_src_ip as u32),
            dst: Ipv4Addr::from(o.desc_dst_ip as u32),
            dscp: o.desc_dscp,
            ecn: o.desc_ecn,
            ident: 0,
            dont_frag: true,
            ttl: 64,
        })
    };
    RoceRepr {
        eth: ethernet::Repr {
            dst: o.desc_dst_mac,
            src: o.desc_src_mac,
            vlan: o.desc_vlan_en.then_some(ethernet::VlanTag {
                pcp: o.desc_pcp,
                dei: false,
                vid: o.desc_vid,
            }),
        },
        ip,
        udp: udp::Repr {
            src_port: o.desc_udp_sport,
            checksum: 0,
        },
        bth: bth::Repr {
            opcode: o.desc_opcode,
            se: o.desc_se,
            migreq: false,
            pkey: o.desc_pkey,
            fecn: false,
            becn: o.desc_becn,
            dest_qp: o.desc_dest_qp,
            ack_req: o.desc_ack_req,
            psn: o.desc_psn,
        },
        reth: o.desc_reth_en.then_some(reth::Repr {
            va: o.desc_reth_va,
            rkey: o.desc_reth_rkey,
            dma_len: o.desc_reth_len,
        }),
        aeth: o.desc_aeth_en.then_some(aeth::Repr {
            syndrome: (o.desc_aeth >> 24) as u8,
            msn: o.desc_aeth & 0xFF_FFFF,
        }),
        imm: o.desc_imm_en.then_some(o.desc_imm),
        payload: vec![0; o.desc_pay_len as usize],
    }
}

fn qp_of(t: &[Qp; QPS], i: u8) -> Qp {
    t[i as usize % QPS]
}

impl TxEnv {
    fn new(seed: u64) -> Self {
        let mut r = SplitMix64::new(seed);
        let c = gen_case(&mut r);
        let mut exp_pkts = Vec::new();
        let mut exp_cpls = Vec::new();
        let (mut errs_exp, mut prot_exp, mut flush_exp) = (0, 0, 0);
        let (mut npk, mut orig, mut last_psn) = (Vec::new(), Vec::new(), Vec::new());
        for q in 0..QPS {
            let (p, k) = reference(&c.qps[q], &c.mrs, &c.wqes[q]);
            let ws = &c.wqes[q];
            let mtu = mtu_of(c.qps[q].mtu);
            let mut n = vec![0u32; ws.len()];
            let mut last = vec![0u32; ws.len()];
            for x in &p {
                n[x.wqe] += 1;
                // A READ REQUEST's span: one PSN per response.
                let span = match x.reth {
                    Some((_, _, len)) if x.opcode == 0x0C => len.div_ceil(mtu).max(1),
                    _ => 1,
                };
                last[x.wqe] = (x.psn + span - 1) % (1 << 24);
            }
            npk.push(n);
            last_psn.push(last);
            orig.push(
                ws.iter()
                    .map(|w| k.iter().find(|c| c.wr_id == w.wr_id).cloned())
                    .collect::<Vec<_>>(),
            );
            errs_exp += k
                .iter()
                .filter(|c| c.status == STATUS_LOC_QP_OP_ERR || c.status == STATUS_LOC_PROT_ERR)
                .count();
            prot_exp += k.iter().filter(|c| c.status == STATUS_LOC_PROT_ERR).count();
            flush_exp += k.iter().filter(|c| c.status == STATUS_WR_FLUSH_ERR).count();
            exp_pkts.push(VecDeque::from(p));
            exp_cpls.push(VecDeque::from(k));
        }
        let exp_rsp: Vec<VecDeque<RPkt>> = c
            .jobs
            .iter()
            .map(|js| js.iter().flat_map(rsp_packets).collect())
            .collect();
        let jobs_left = c.jobs.iter().map(|v| v.len()).sum::<usize>();
        let left = exp_pkts.iter().map(|v| v.len()).sum::<usize>()
            + exp_cpls.iter().map(|v| v.len()).sum::<usize>()
            + exp_rsp.iter().map(|v| v.len()).sum::<usize>();
        let c_wq: Vec<usize> = c.wqes.iter().map(Vec::len).collect();
        let c_jobs = c.jobs.iter().map(|v| v.iter().copied().collect()).collect();
        let bytes_jobs = c.jobs.iter().map(|v| v.iter().copied().collect()).collect();
        TxEnv {
            r,
            qp_tab: c.qps,
            qp_read: Qp::default(),
            mr_read: Mr::default(),
            pending: c.wqes.iter().map(|v| v.iter().copied().collect()).collect(),
            avail: vec![VecDeque::new(); QPS],
            wqe_next: None,
            wqe_data: Beat::default(),
            wqe_qp: 0,
            idx_next: [0; QPS],
            wqe_idx: 0,
            idx_of: std::collections::HashMap::new(),
            grant_next: None,
            grant_next_ctrl: false,
            ptr: 0,
            block: 0,
            cnp: None,
            ack: None,
            ack_first: false,
            exp_ctrl: VecDeque::new(),
            ready_due: None,
            ack_kinds: [0; 3],
            acks_dropped: 0,
            both_waiting: 0,
            c,
            exp_pkts,
            exp_cpls,
            left,
            rd_wait_desc: VecDeque::new(),
            rr_seen: VecDeque::new(),
            rr_checked: 0,
            desc_wait_rd: VecDeque::new(),
            cpl_frames: VecDeque::new(),
            cpls_wait_frame: VecDeque::new(),
            step_start: None,
            pop_due: None,
            prev_valids: false,
            prev_desc: false,
            errs_exp,
            errs: 0,
            prot_exp,
            prot: 0,
            flush_exp,
            flush: 0,
            steps: [0; 5],
            stats: [0; 7],
            blocked: [0; 2],
            jobs_pending: c_jobs,
            jobs_avail: vec![VecDeque::new(); QPS],
            job_out: (false, ReadJob::default()),
            job_read_due: None,
            exp_rsp,
            jobs_left,
            rsp_read: vec![0; QPS],
            bytes_jobs,
            rsp_step: false,
            rsp_stats: [0; 5],
            rsp_ops: [0; 4],
            rsp_cycles: Vec::new(),
            job_first_avail: None,
            sent: npk.iter().map(|v| vec![0; v.len()]).collect(),
            npk,
            orig,
            last_psn,
            cur: [0; QPS],
            kill: [None; QPS],
            err_mode: 0,
            must_finish: vec![Vec::new(); QPS],
            kill_stats: [0; 4],
            cpl_seen: c_wq.iter().map(|&v| vec![false; v]).collect(),
        }
    }

    /// Moves QP `q`, with a WQE in progress, to ERROR at `cycle` (after
    /// this cycle's lookup, as a csr write); an RC QP is put in
    /// ack_tracker's error mode too, or not. Its expected packets and
    /// completions become what `check_killed_cpl` accepts.
    fn kill_qp(&mut self, cycle: u64, q: usize) {
        let turn = !self.c.qps[q].uc && self.r.percent(50);
        self.qp_tab[q].state = 2;
        if turn {
            self.err_mode |= 1 << q;
        }
        let w = self.cur[q];
        // A completion not yet taken is of a WQE at or before w; w's own
        // may have been taken before its last packet (RC: pushed with it).
        let mut next = self.exp_cpls[q]
            .front()
            .and_then(|c| self.c.wqes[q].iter().position(|x| x.wr_id == c.wr_id))
            .map_or(w, |p| p.min(w));
        while next <= w && self.cpl_seen[q][next] {
            next += 1;
        }
        for c in &self.exp_cpls[q] {
            match c.status {
                STATUS_WR_FLUSH_ERR => self.flush_exp -= 1,
                STATUS_LOC_QP_OP_ERR => self.errs_exp -= 1,
                STATUS_LOC_PROT_ERR => {
                    self.errs_exp -= 1;
                    self.prot_exp -= 1;
                }
                _ => {}
            }
        }
        self.left -= self.exp_pkts[q].len() + self.exp_cpls[q].len();
        self.exp_cpls[q].clear();
        self.kill[q] = Some(Kill {
            at: cycle,
            after: 0,
            turn,
            next,
            first_new: w + 1,
        });
    }

    /// A CNP descriptor: the next CNP taken, its QP's addresses, the CNP
    /// configuration.
    fn check_cnp(&mut self, cycle: u64, o: &TxEngineOut) {
        let q = match self.exp_ctrl.pop_front() {
            Some(Ctrl::Cnp(q)) => q,
            other => panic!("cycle {cycle}: a CNP descriptor, expected {other:?}"),
        };
        assert_eq!(o.desc_qp, q, "cycle {cycle}: CNP QP");
        let qp = self.c.qps[q as usize];
        let c = &self.c;
        let got = (
            (o.desc_dst_mac, o.desc_src_mac, o.desc_vlan_en, o.desc_vid),
            (o.desc_ipv6, o.desc_src_ip, o.desc_dst_ip),
            (o.desc_udp_sport, o.desc_pkey, o.desc_dest_qp),
            (o.desc_pcp, o.desc_dscp, o.desc_ecn, o.desc_becn),
            (
                o.desc_opcode,
                o.desc_psn,
                o.desc_ack_req,
                o.desc_se,
                o.desc_cpl,
            ),
            (
                o.desc_reth_en,
                o.desc_imm_en,
                o.desc_aeth_en,
                o.desc_pay_len,
            ),
        );
        let want = (
            (qp.dst_mac, qp.src_mac, qp.vlan_en, qp.vid),
            (qp.ipv6, qp.src_ip, qp.dst_ip),
            (qp.udp_sport, qp.pkey, qp.remote_qpn),
            (c.cnp_pcp, c.cnp_dscp, 0, c.cnp_becn),
            (0x81, 0, false, false, false),
            (false, false, false, 0),
        );
        assert_eq!(got, want, "cycle {cycle}: CNP descriptor");
        assert!(!o.rd_req_valid, "cycle {cycle}: a payload read with a CNP");
        self.stats[5] += 1;
    }

    /// `desc_wire_len` against the length of the frame the testbench's
    /// encoder builds from the descriptor (it also insists that the
    /// extension headers present match the opcode).
    fn check_wire_len(&self, cycle: u64, o: &TxEngineOut) {
        let f = desc_repr(o);
        assert_eq!(
            o.desc_wire_len as usize,
            f.buffer_len(),
            "cycle {cycle}: desc_wire_len of opcode {:#04x}",
            o.desc_opcode
        );
    }

    /// An ACK descriptor: the next control frame taken is this ACK; the
    /// frame the testbench encodes from the descriptor, decoded again by the
    /// testbench, has exactly the QP's headers (as a data packet of the QP
    /// would) and the ACK's PSN and AETH.
    fn check_ack(&mut self, cycle: u64, o: &TxEngineOut) {
        let a = match self.exp_ctrl.pop_front() {
            Some(Ctrl::Ack(a)) => a,
            other => panic!("cycle {cycle}: an ACK descriptor, expected {other:?}"),
        };
        let qp = self.c.qps[a.qp as usize];
        assert!(!qp.uc, "cycle {cycle}: an ACK frame for UC QP {}", a.qp);
        assert_eq!(
            (o.desc_qp, o.desc_cpl, o.desc_cnp_pad, o.desc_pay_len),
            (a.qp, false, false, 0),
            "cycle {cycle}: ACK descriptor"
        );
        assert!(!o.rd_req_valid, "cycle {cycle}: a payload read with an ACK");
        let bytes = desc_repr(o).to_bytes();
        let f = RoceFrame::new_checked(&bytes[..])
            .unwrap_or_else(|e| panic!("cycle {cycle}: ACK frame: {e:?}"));
        let got = RoceRepr::parse(&f).unwrap_or_else(|e| panic!("cycle {cycle}: ACK frame: {e:?}"));
        let ecn = if qp.ecn_en { 2 } else { 0 };
        let want = RoceRepr {
            eth: ethernet::Repr {
                dst: qp.dst_mac,
                src: qp.src_mac,
                vlan: qp.vlan_en.then_some(ethernet::VlanTag {
                    pcp: qp.pcp,
                    dei: false,
                    vid: qp.vid,
                }),
            },
            ip: if qp.ipv6 {
                IpRepr::V6(ipv6::Repr {
                    src: Ipv6Addr::from(qp.src_ip),
                    dst: Ipv6Addr::from(qp.dst_ip),
                    dscp: qp.dscp,
                    ecn,
                    flow_label: 0,
                    hop_limit: 64,
                })
            } else {
                IpRepr::V4(ipv4::Repr {
                    src: Ipv4Addr::from(qp.src_ip as u32),
                    dst: Ipv4Addr::from(qp.dst_ip as u32),
                    dscp: qp.dscp,
                    ecn,
                    ident: 0,
                    dont_frag: true,
                    ttl: 64,
                })
            },
            udp: udp::Repr {
                src_port: qp.udp_sport,
                checksum: 0,
            },
            bth: bth::Repr {
                opcode: 0x11,
                se: false,
                migreq: false,
                pkey: qp.pkey,
                fecn: false,
                becn: false,
                dest_qp: qp.remote_qpn,
                ack_req: false,
                psn: a.psn,
            },
            reth: None,
            aeth: Some(aeth::Repr {
                syndrome: a.syndrome,
                msn: a.msn,
            }),
            imm: None,
            payload: vec![],
        };
        assert_eq!(got, want, "cycle {cycle}: ACK frame of QP {}", a.qp);
        self.ack_kinds[match a.syndrome >> 5 {
            0 => 0,
            1 => 1,
            _ => 2,
        }] += 1;
        self.stats[6] += 1;
    }

    /// A READ response descriptor: the next packet derived from the QP's
    /// jobs; the frame the testbench encodes from the descriptor, decoded
    /// again, has the QP's headers (as a data packet of the QP), the
    /// packet's opcode, PSN, AETH and payload length, and nothing else.
    fn check_rsp(&mut self, cycle: u64, o: &TxEngineOut) {
        let q = o.desc_qp as usize;
        let qp = self.c.qps[q];
        let p = self.exp_rsp[q]
            .pop_front()
            .unwrap_or_else(|| panic!("cycle {cycle}: QP {q}: unexpected READ response"));
        assert!(
            !o.desc_cpl && !o.desc_cnp_pad && !o.desc_becn,
            "cycle {cycle}: QP {q}: READ response flags"
        );
        let bytes = desc_repr(o).to_bytes();
        let f = RoceFrame::new_checked(&bytes[..])
            .unwrap_or_else(|e| panic!("cycle {cycle}: READ response frame: {e:?}"));
        let got = RoceRepr::parse(&f)
            .unwrap_or_else(|e| panic!("cycle {cycle}: READ response frame: {e:?}"));
        let ecn = if qp.ecn_en { 2 } else { 0 };
        let want = RoceRepr {
            eth: ethernet::Repr {
                dst: qp.dst_mac,
                src: qp.src_mac,
                vlan: qp.vlan_en.then_some(ethernet::VlanTag {
                    pcp: qp.pcp,
                    dei: false,
                    vid: qp.vid,
                }),
            },
            ip: if qp.ipv6 {
                IpRepr::V6(ipv6::Repr {
                    src: Ipv6Addr::from(qp.src_ip),
                    dst: Ipv6Addr::from(qp.dst_ip),
                    dscp: qp.dscp,
                    ecn,
                    flow_label: 0,
                    hop_limit: 64,
                })
            } else {
                IpRepr::V4(ipv4::Repr {
                    src: Ipv4Addr::from(qp.src_ip as u32),
                    dst: Ipv4Addr::from(qp.dst_ip as u32),
                    dscp: qp.dscp,
                    ecn,
                    ident: 0,
                    dont_frag: true,
                    ttl: 64,
                })
            },
            udp: udp::Repr {
                src_port: qp.udp_sport,
                checksum: 0,
            },
            bth: bth::Repr {
                opcode: p.opcode,
                se: false,
                migreq: false,
                pkey: qp.pkey,
                fecn: false,
                becn: false,
                dest_qp: qp.remote_qpn,
                ack_req: false,
                psn: p.psn,
            },
            reth: None,
            aeth: p.aeth.map(|(syndrome, msn)| aeth::Repr { syndrome, msn }),
            imm: None,
            payload: vec![0; p.pay as usize],
        };
        assert_eq!(got, want, "cycle {cycle}: QP {q}: READ response");
        self.rsp_ops[(p.opcode - 0x0D) as usize] += 1;
        // The job's reads so far, from its FIRST / ONLY on.
        if p.opcode == 0x0D || p.opcode == 0x10 {
            self.rsp_read[q] = 0;
        }
        self.rsp_read[q] += p.pay as u64;
        if p.opcode == 0x0F || p.opcode == 0x10 {
            let jb = self.bytes_jobs[q].pop_front().unwrap();
            assert_eq!(
                self.rsp_read[q], jb.len as u64,
                "cycle {cycle}: QP {q}: bytes read for a READ job"
            );
        }
        if p.pay > 0 {
            let d = (q as u8, p.rd_addr, p.pay);
            match self.rd_wait_desc.pop_front() {
                Some(rd) => assert_eq!(rd, d, "cycle {cycle}: READ response payload read"),
                None => self.desc_wait_rd.push_back(d),
            }
        }
        self.rsp_stats[0] += 1;
        self.left -= 1;
    }

    fn check_desc(&mut self, cycle: u64, o: &TxEngineOut) {
        self.check_wire_len(cycle, o);
        if o.desc_cnp_pad {
            return self.check_cnp(cycle, o);
        }
        if (0x0D..=0x10).contains(&o.desc_opcode) {
            return self.check_rsp(cycle, o);
        }
        if o.desc_aeth_en || o.desc_opcode == 0x11 {
            return self.check_ack(cycle, o);
        }
        let q = o.desc_qp as usize;
        let qp = self.c.qps[q];
        let got = Pkt {
            opcode: o.desc_opcode,
            psn: o.desc_psn,
            pay: o.desc_pay_len as u32,
            reth: o
                .desc_reth_en
                .then_some((o.desc_reth_va, o.desc_reth_rkey, o.desc_reth_len)),
            imm: o.desc_imm_en.then_some(o.desc_imm),
            se: o.desc_se,
            ack_req: o.desc_ack_req,
            cpl: o.desc_cpl,
            rd_addr: 0,
            wqe: 0,
        };
        let exp = self.exp_pkts[q]
            .pop_front()
            .unwrap_or_else(|| panic!("cycle {cycle}: QP {q}: unexpected packet {got:?}"));
        assert_eq!(
            got,
            Pkt {
                rd_addr: 0,
                wqe: 0,
                ..exp.clone()
            },
            "cycle {cycle}: QP {q}: packet"
        );
        self.sent[q][exp.wqe] += 1;
        self.cur[q] = exp.wqe;
        if let Some(k) = self.kill[q].as_mut() {
            // After the ERROR: only what was committed (the output
            // register and the step running), KILL_WINDOW packets.
            k.after += 1;
            assert!(
                k.after <= KILL_WINDOW,
                "cycle {cycle}: QP {q}: packet {} after its ERROR at cycle {}",
                k.after,
                k.at
            );
        }
        let hdr = (
            o.desc_dst_mac,
            o.desc_src_mac,
            o.desc_vlan_en,
            o.desc_pcp,
            o.desc_vid,
            o.desc_ipv6,
            o.desc_src_ip,
            o.desc_dst_ip,
            o.desc_dscp,
            o.desc_ecn,
        );
        let hdr2 = (o.desc_udp_sport, o.desc_pkey, o.desc_dest_qp);
        let want = (
            qp.dst_mac,
            qp.src_mac,
            qp.vlan_en,
            qp.pcp,
            qp.vid,
            qp.ipv6,
            qp.src_ip,
            qp.dst_ip,
            qp.dscp,
            if qp.ecn_en { 2 } else { 0 },
        );
        let want2 = (qp.udp_sport, qp.pkey, qp.remote_qpn);
        assert_eq!(hdr, want, "cycle {cycle}: QP {q}: header fields");
        assert_eq!(hdr2, want2, "cycle {cycle}: QP {q}: header fields");
        assert!(
            !o.desc_becn && !o.desc_aeth_en && o.desc_aeth == 0 && !o.desc_cnp_pad,
            "cycle {cycle}: control-frame options set on a data packet"
        );
        if exp.cpl {
            match self.cpls_wait_frame.pop_front() {
                Some(c) => assert_eq!(c, q as u8, "cycle {cycle}: completion of another frame"),
                None => self.cpl_frames.push_back(q as u8),
            }
        }
        if exp.opcode == 0x0C {
            // The record for rd_sink: the QP's MTU code as used (0 -> 1,
            // 6 and 7 -> 5) and its CTRL.MAX_RD as programmed.
            let code = match qp.mtu {
                0 => 1,
                c if c > 5 => 5,
                c => c,
            };
            let len = exp.reth.map_or(0, |r| r.2);
            let want = (q as u8, exp.psn, len, exp.rd_addr, code, qp.max_rd);
            let got = self.rr_seen.pop_front();
            assert_eq!(got, Some(want), "cycle {cycle}: QP {q}: rr_* record");
            self.rr_checked += 1;
        }
        if exp.pay > 0 {
            let d = (q as u8, exp.rd_addr, exp.pay);
            match self.rd_wait_desc.pop_front() {
                Some(rd) => assert_eq!(rd, d, "cycle {cycle}: payload read"),
                None => self.desc_wait_rd.push_back(d),
            }
        }
        self.stats[0] += 1;
        if self.kill[q].is_none() {
            self.left -= 1;
        }
    }

    fn check_rd(&mut self, cycle: u64, o: &TxEngineOut) {
        let got = (o.rd_req_addr, o.rd_req_len);
        match self.desc_wait_rd.pop_front() {
            Some((_, a, l)) => assert_eq!(got, (a, l), "cycle {cycle}: payload read"),
            None => {
                // Its descriptor is still waiting; it names the QP.
                self.rd_wait_desc
                    .push_back((o.desc_qp, o.rd_req_addr, o.rd_req_len));
                assert!(
                    o.desc_valid,
                    "cycle {cycle}: payload read without a descriptor"
                );
            }
        }
    }

    fn check_cpl(&mut self, cycle: u64, o: &TxEngineOut) {
        let q = o.cpl_qp as usize;
        let got = Cpl {
            wait: o.cpl_wait_frame,
            wr_id: o.cpl_wr_id,
            status: o.cpl_status,
            opcode: o.cpl_opcode,
            len: o.cpl_len,
            imm: o.cpl_imm,
            cq: o.cpl_cq,
            uc: o.cpl_uc,
            psn: o.cpl_psn,
        };
        if let Some(w) = self.c.wqes[q].iter().position(|x| x.wr_id == got.wr_id) {
            self.cpl_seen[q][w] = true;
        }
        if self.kill[q].is_some() {
            self.check_killed_cpl(cycle, q, &got);
        } else {
            let exp = self.exp_cpls[q]
                .pop_front()
                .unwrap_or_else(|| panic!("cycle {cycle}: QP {q}: unexpected completion {got:?}"));
            assert_eq!(got, exp, "cycle {cycle}: QP {q}: completion");
            self.left -= 1;
        }
        // The SQ index of the WQE it completes (ack_tracker's anchor).
        assert_eq!(
            Some(&o.cpl_idx),
            self.idx_of.get(&(q, got.wr_id)),
            "cycle {cycle}: QP {q}: cpl_idx of wr_id {:#x}",
            got.wr_id
        );
        self.stats[match got.status {
            STATUS_SUCCESS => 1,
            STATUS_LOC_QP_OP_ERR => 2,
            STATUS_LOC_PROT_ERR => 3,
            _ => 4,
        }] += 1;
        if got.wait {
            // The j-th wait_frame completion belongs to the j-th desc_cpl
            // descriptor (either may be taken first).
            match self.cpl_frames.pop_front() {
                Some(f) => assert_eq!(f, q as u8, "cycle {cycle}: completion of another frame"),
                None => self.cpls_wait_frame.push_back(q as u8),
            }
        }
    }

    /// A completion of QP `q` after the environment moved it to ERROR
    /// with a WQE in progress (docs/tx_datapath.md, "ERROR in the middle
    /// of a message"). WQE w (by wr_id) ends one of four ways:
    /// - all its packets sent before the step saw ERROR: its own
    ///   completion (signaled) or none (then it is skipped here);
    /// - quit in the middle, RC in ack_tracker's error mode: a success of
    ///   its last PSN and length, signaled or not (the same as its own);
    /// - quit in the middle otherwise, or not started: flushed (5);
    /// - the first WQE after the one in progress, its step started before
    ///   the ERROR was written: its own local error, if the reference has
    ///   one.
    ///
    /// Packets of a WQE that ended may still come (committed before), at
    /// most KILL_WINDOW after the ERROR in all.
    fn check_killed_cpl(&mut self, cycle: u64, q: usize, got: &Cpl) {
        let k = self.kill[q].expect("killed");
        let ws = &self.c.wqes[q];
        let w = ws
            .iter()
            .position(|x| x.wr_id == got.wr_id)
            .unwrap_or_else(|| panic!("cycle {cycle}: QP {q}: completion of no WQE {got:?}"));
        assert!(
            w >= k.next,
            "cycle {cycle}: QP {q}: a second completion of WQE {w} {got:?}"
        );
        for (s, x) in ws.iter().enumerate().take(w).skip(k.next) {
            assert!(
                x.flags & 1 == 0 && self.orig[q][s].is_none(),
                "cycle {cycle}: QP {q}: WQE {s} skipped (no completion) before {w}"
            );
            self.must_finish[q].push(s);
        }
        let x = &ws[w];
        let imm_op = x.op == 1 || x.op == 3;
        let wc_op = wc_opcode(x.op);
        let qp = self.c.qps[q];
        let flush = Cpl {
            wait: false,
            wr_id: x.wr_id,
            status: STATUS_WR_FLUSH_ERR,
            opcode: wc_op,
            len: 0,
            imm: if imm_op { x.imm } else { 0 },
            cq: qp.cq,
            uc: qp.uc,
            psn: 0,
        };
        let turned = Cpl {
            status: STATUS_SUCCESS,
            len: x.len,
            psn: self.last_psn[q][w],
            ..flush.clone()
        };
        let orig = self.orig[q][w].clone();
        let how = if orig.as_ref() == Some(got) && got.status == STATUS_SUCCESS {
            0
        } else if k.turn && !qp.uc && *got == turned {
            1
        } else if *got == flush && !(k.turn && !qp.uc && self.sent[q][w] > 0) {
            // (Started, in error mode, an RC WQE is turned, not flushed.)
            2
        } else if w == k.first_new && orig.as_ref() == Some(got) {
            3
        } else {
            panic!(
                "cycle {cycle}: QP {q}: WQE {w} after ERROR (cycle {}, error mode {}): got \
                 {got:?}; its own {orig:?}, turned {turned:?}, flushed {flush:?}",
                k.at, k.turn
            )
        };
        match how {
            2 => self.flush_exp += 1,
            3 => {
                self.errs_exp += 1;
                self.prot_exp += (got.status == STATUS_LOC_PROT_ERR) as usize;
            }
            _ => {}
        }
        self.kill_stats[how] += 1;
        self.kill[q].as_mut().expect("killed").next = w + 1;
    }

    /// A killed QP is done: every WQE has its completion, or was sent
    /// whole with none due; what is left of the expected packets belongs
    /// to WQEs that ended (dropped here).
    fn killed_done(&self, q: usize) -> bool {
        let Some(k) = self.kill[q] else { return true };
        let n = self.c.wqes[q].len();
        let tail_ok = (k.next..n).all(|w| {
            self.c.wqes[q][w].flags & 1 == 0
                && self.orig[q][w].is_none()
                && self.sent[q][w] == self.npk[q][w]
        });
        let skipped_ok = self.must_finish[q]
            .iter()
            .all(|&w| self.sent[q][w] == self.npk[q][w]);
        tail_ok && skipped_ok
    }
}

impl Env for TxEnv {
    type In = TxEngineIn;
    type Out = TxEngineOut;

    fn step(&mut self, cycle: u64, o: &TxEngineOut) -> TxEngineIn {
        let mut i = TxEngineIn::default();
        // ---- sq_fetch ----
        if let Some((q, w)) = self.wqe_next.take() {
            i.wqe_valid = true;
            self.wqe_qp = q;
            self.wqe_data = w.bytes();
            self.wqe_idx = self.idx_next[q as usize];
            self.idx_next[q as usize] = self.wqe_idx.wrapping_add(1);
            self.idx_of.insert((q as usize, w.wr_id), self.wqe_idx);
        }
        i.wqe_qp = self.wqe_qp;
        i.wqe_data = self.wqe_data;
        i.wqe_idx = self.wqe_idx;
        for q in 0..QPS {
            if !self.avail[q].is_empty() {
                i.wqe_avail |= 1 << q;
            }
        }
        // ---- rd_resp: job_avail, the answer to last cycle's head read ----
        for q in 0..QPS {
            if !self.jobs_avail[q].is_empty() {
                i.job_avail |= 1 << q;
                self.job_first_avail.get_or_insert(cycle);
            }
        }
        if self.job_read_due.take().is_some() {
            assert!(
                self.job_out.0,
                "cycle {cycle}: head read of a QP with no job"
            );
        }
        let j = self.job_out.1;
        (
            i.job_present,
            i.job_psn,
            i.job_addr,
            i.job_len,
            i.job_msn,
            i.job_mtu,
        ) = (self.job_out.0, j.psn, j.addr, j.len, j.msn, j.mtu);
        if o.job_rd_valid {
            // The head read of a response step, the cycle after its grant.
            assert!(
                self.rsp_step && self.step_start.is_some_and(|(g, _)| g + 1 == cycle),
                "cycle {cycle}: head read outside a READ response step"
            );
            let q = o.job_rd_qp as usize;
            let f = self.jobs_avail[q].front().copied();
            self.job_out = (f.is_some(), f.unwrap_or_default());
            self.job_read_due = Some(cycle + 1);
        }
        if o.job_pop_valid {
            // The job's last packet's descriptor shows in this very cycle.
            let q = o.job_pop_qp as usize;
            let jb = self.jobs_avail[q]
                .pop_front()
                .unwrap_or_else(|| panic!("cycle {cycle}: pop of QP {q} with no job"));
            let last = rsp_packets(&jb).pop().unwrap();
            assert!(
                o.desc_valid
                    && o.desc_qp as usize == q
                    && o.desc_opcode == last.opcode
                    && o.desc_psn == last.psn,
                "cycle {cycle}: QP {q}: pop without the job's last packet on desc"
            );
            assert!(
                !self.prev_desc,
                "cycle {cycle}: pop after the descriptor showed"
            );
            self.jobs_left -= 1;
            self.rsp_stats[1] += 1;
            self.rsp_stats[2] += (jb.len == 0) as u64;
            self.rsp_stats[3] += (last.psn < jb.psn) as u64;
        }
        // ---- ack_tracker: full, held for a while ----
        if self.r.percent(self.c.block_flip_pct) {
            self.block ^= 1 << self.r.below(QPS as u64);
        }
        i.wqe_block = self.block;
        // A grant for a QP without a WQE in progress pops at n+1, and only then.
        let pop_due = self.pop_due.take_if(|(c, _)| *c == cycle);
        assert_eq!(
            o.wqe_pop_valid.then_some(o.wqe_pop_qp),
            pop_due.map(|(_, q)| q),
            "cycle {cycle}: pop"
        );
        if o.wqe_pop_valid {
            let q = o.wqe_pop_qp as usize;
            let w = self.avail[q]
                .pop_front()
                .unwrap_or_else(|| panic!("cycle {cycle}: pop of QP {q} with nothing available"));
            self.wqe_next = Some((q as u8, w));
        }

        // ---- tx_sched ----
        if let Some(g) = self.grant_next {
            i.grant_valid = true;
            i.grant_qp = g;
            i.grant_ctrl = self.grant_next_ctrl;
        }
        // ---- cnp_gen ----
        if self.cnp.is_none() && self.r.percent(self.c.cnp_pct) {
            self.cnp = Some(self.r.below(QPS as u64) as u8);
        }
        i.cnp_valid = self.cnp.is_some();
        i.cnp_qp = self.cnp.unwrap_or(self.r.below(QPS as u64) as u8);
        i.cfg_cnp_dscp = self.c.cnp_dscp;
        i.cfg_cnp_pcp = self.c.cnp_pcp;
        i.cfg_cnp_becn = self.c.cnp_becn;
        // ---- ack_gen ----
        if self.ack.is_none() && self.r.percent(self.c.ack_pct) {
            let any = self.r.percent(self.c.ack_any_pct);
            let cands: Vec<u8> = (0..QPS as u8)
                .filter(|&q| any || !self.c.qps[q as usize].uc)
                .collect();
            if !cands.is_empty() {
                let qp = cands[self.r.below(cands.len() as u64) as usize];
                // ACK (credit count), RNR NAK (timer), NAK (codes 0..4).
                let syndrome = match self.r.below(3) {
                    0 => self.r.below(32) as u8,
                    1 => 0x20 | self.r.below(32) as u8,
                    _ => 0x60 + self.r.below(5) as u8,
                };
                self.ack = Some(Ack {
                    qp,
                    psn: self.r.below(1 << 24) as u32,
                    syndrome,
                    msn: self.r.below(1 << 24) as u32,
                });
            }
        }
        {
            let junk = Ack {
                qp: self.r.below(QPS as u64) as u8,
                psn: self.r.below(1 << 24) as u32,
                syndrome: self.r.below(256) as u8,
                msn: self.r.below(1 << 24) as u32,
            };
            let a = self.ack.unwrap_or(junk);
            i.ack_valid = self.ack.is_some();
            i.ack_qp = a.qp;
            i.ack_psn = a.psn;
            i.ack_syndrome = a.syndrome;
            i.ack_msn = a.msn;
        }
        assert_eq!(
            o.ctrl_ack_first, self.ack_first,
            "cycle {cycle}: control round-robin pointer"
        );
        // After an ACK for a UC QP: nothing, and grant_ready back at n+4.
        if let Some(c) = self.ready_due {
            assert_eq!(
                o.grant_ready,
                cycle == c,
                "cycle {cycle}: grant_ready after a UC ACK"
            );
            if cycle == c {
                self.ready_due = None;
            }
        }
        if i.grant_valid && i.grant_ctrl && o.grant_ready {
            // rnic_top: the ACK is taken when ack_valid & (ctrl_ack_first |
            // !cnp_valid), else the CNP when cnp_valid. With neither the
            // grant does nothing.
            if self.ack.is_some() && self.cnp.is_some() {
                self.both_waiting += 1;
            }
            if self.ack.is_some() && (self.ack_first || self.cnp.is_none()) {
                let a = self.ack.take().unwrap();
                self.ack_first = false;
                assert!(self.step_start.is_none());
                if self.c.qps[a.qp as usize].uc {
                    self.acks_dropped += 1;
                    self.ready_due = Some(cycle + 4);
                } else {
                    self.step_start = Some((cycle, 3));
                    self.exp_ctrl.push_back(Ctrl::Ack(a));
                }
            } else if let Some(q) = self.cnp.take() {
                self.ack_first = true;
                assert!(self.step_start.is_none());
                self.step_start = Some((cycle, 3));
                self.exp_ctrl.push_back(Ctrl::Cnp(q));
            }
        } else if i.grant_valid && o.grant_ready && i.job_avail >> i.grant_qp & 1 == 1 {
            // A QP with a READ job: its next response packet, before its
            // own WQE in progress or waiting.
            let q = i.grant_qp as usize;
            self.ptr = (q + 1) % QPS;
            assert!(self.step_start.is_none());
            self.step_start = Some((cycle, 3));
            self.rsp_step = true;
            if o.req_active >> q & 1 == 1 || i.wqe_avail >> q & 1 == 1 {
                self.rsp_stats[4] += 1;
            }
        } else if i.grant_valid && o.grant_ready {
            let q = i.grant_qp as usize;
            self.ptr = (q + 1) % QPS;
            let active = o.req_active >> q & 1 == 1;
            let avail = i.wqe_avail >> q & 1 == 1;
            // A QP with no WQE in progress and its block high: a grant with
            // no work (no pop, no output, grant_ready stays high).
            let blocked = i.wqe_block >> q & 1 == 1;
            if blocked && active {
                self.blocked[1] += 1;
            } else if blocked && avail {
                self.blocked[0] += 1;
            }
            if active || avail && !blocked {
                assert!(self.step_start.is_none());
                self.step_start = Some((cycle, if active { 3 } else { 4 }));
                if !active {
                    self.pop_due = Some((cycle + 1, q as u8));
                }
            }
        }
        let mut work = o.req_active | i.wqe_avail | i.job_avail;
        // rnic_top: tx_sched's rate_ok is gated with ack_tracker's full
        // (which stops in-progress messages there too), but not for a QP
        // with a READ job (docs/responder.md).
        if !self.r.percent(self.c.block_ignore_pct) {
            work &= !(i.wqe_block & !i.job_avail);
        }
        // tx_sched: a control grant names QP 0.
        self.grant_next_ctrl = self.r.percent(self.c.ctrl_pct);
        self.grant_next = if self.grant_next_ctrl {
            Some(0)
        } else if self.r.percent(self.c.no_grant_pct) {
            None
        } else if self.r.percent(self.c.rand_grant_pct) {
            Some(self.r.below(QPS as u64) as u8)
        } else {
            (0..QPS)
                .map(|k| (self.ptr + k) % QPS)
                .find(|&q| work >> q & 1 == 1)
                .map(|q| q as u8)
        };

        // ---- latency: the step's first output ----
        let valids = o.desc_valid || o.cpl_valid;
        if valids && !self.prev_valids {
            let (g, budget) = self
                .step_start
                .take()
                .unwrap_or_else(|| panic!("cycle {cycle}: output without a grant"));
            assert_eq!(
                cycle - g,
                budget,
                "cycle {cycle}: latency from the grant at {g}"
            );
            let rsp = o.desc_valid && (0x0D..=0x10).contains(&o.desc_opcode);
            assert_eq!(
                rsp,
                std::mem::take(&mut self.rsp_step),
                "cycle {cycle}: a READ response step (grant at {g})"
            );
            if rsp {
                assert!(
                    !o.psn_wr_valid && !o.cpl_valid,
                    "cycle {cycle}: PSN write-back or completion with a READ response"
                );
                self.rsp_cycles.push(cycle);
            }
            let kind = if rsp {
                4
            } else if o.desc_valid && o.desc_cnp_pad {
                2
            } else if o.desc_valid && o.desc_aeth_en {
                3
            } else {
                (budget == 4) as usize
            };
            self.steps[kind] += 1;
        }
        self.prev_valids = valids;
        self.prev_desc = o.desc_valid;

        // ---- csr: this cycle's lookups, then this cycle's writes ----
        let q = self.qp_read;
        i.qp_state = q.state;
        i.qp_uc = q.uc;
        i.qp_ipv6 = q.ipv6;
        i.qp_vlan_en = q.vlan_en;
        i.qp_ecn_en = q.ecn_en;
        i.qp_mtu = q.mtu;
        i.qp_max_rd = q.max_rd;
        i.qp_cq = q.cq;
        i.qp_remote_qpn = q.remote_qpn;
        i.qp_psn = q.psn;
        i.qp_pd = q.pd;
        i.qp_dst_mac = q.dst_mac;
        i.qp_src_mac = q.src_mac;
        i.qp_src_ip = q.src_ip;
        i.qp_dst_ip = q.dst_ip;
        i.qp_udp_sport = q.udp_sport;
        i.qp_dscp = q.dscp;
        i.qp_vid = q.vid;
        i.qp_pcp = q.pcp;
        i.qp_pkey = q.pkey;
        let m = self.mr_read;
        i.mr_valid = m.valid;
        i.mr_key = m.key;
        i.mr_va = m.va;
        i.mr_len = m.len;
        i.mr_pbase = m.pbase;
        i.mr_access = m.access;
        i.mr_pd = m.pd;
        self.qp_read = qp_of(&self.qp_tab, o.qp_idx);
        let lkey = wqe::Wqe::new_unchecked(&i.wqe_data[..]).lkey();
        self.mr_read = self.c.mrs[lkey as usize % MRS];
        if o.psn_wr_valid {
            self.qp_tab[o.psn_wr_qp as usize].psn = o.psn_wr_psn;
        }
        if o.rr_valid {
            // With the READ REQUEST's descriptor, in the cycle it shows.
            assert!(
                o.desc_valid
                    && o.desc_opcode == 0x0C
                    && o.desc_qp == o.rr_qp
                    && o.desc_psn == o.rr_psn,
                "cycle {cycle}: rr_* without its READ REQUEST descriptor"
            );
            self.rr_seen
                .push_back((o.rr_qp, o.rr_psn, o.rr_len, o.rr_addr, o.rr_mtu, o.rr_max));
        }
        if o.err_valid {
            self.qp_tab[o.err_qp as usize].state = 2;
            self.errs += 1;
        }
        // The environment's own ERROR: a QP with a WQE in progress (some
        // of its packets taken, not all).
        if self.c.kill_pct > 0 && self.r.percent(self.c.kill_pct) {
            let k0 = self.r.below(QPS as u64) as usize;
            let pick = (0..QPS).map(|k| (k0 + k) % QPS).find(|&q| {
                let w = self.cur[q];
                self.kill[q].is_none()
                    && self.qp_tab[q].state != 2
                    && w < self.sent[q].len()
                    && (1..self.npk[q][w]).contains(&self.sent[q][w])
            });
            if let Some(q) = pick {
                self.kill_qp(cycle, q);
            }
        }
        i.err_mode = self.err_mode;
        self.prot += o.ev_prot_err as usize;
        self.flush += o.ev_flush as usize;

        // ---- back-pressure and transfers ----
        i.desc_ready = self.r.percent(self.c.desc_rdy);
        i.rd_req_ready = self.r.percent(self.c.rd_rdy);
        i.cpl_ready = self.r.percent(self.c.cpl_rdy);
        if o.rd_req_valid && i.rd_req_ready {
            self.check_rd(cycle, o);
        }
        if o.desc_valid && i.desc_ready {
            self.check_desc(cycle, o);
        }
        if o.cpl_valid && i.cpl_ready {
            self.check_cpl(cycle, o);
        }

        // ---- READ jobs stored this cycle show next cycle ----
        for q in 0..QPS {
            if !self.jobs_pending[q].is_empty() && self.r.percent(self.c.job_pct) {
                let j = self.jobs_pending[q].pop_front().unwrap();
                self.jobs_avail[q].push_back(j);
            }
        }
        // ---- WQEs fetched this cycle show next cycle ----
        for q in 0..QPS {
            if !self.pending[q].is_empty() && self.r.percent(self.c.fetch_pct) {
                let w = self.pending[q].pop_front().unwrap();
                self.avail[q].push_back(w);
            }
        }
        i
    }

    fn finished(&self) -> bool {
        // Every packet, completion and payload read taken; a killed QP
        // done, nothing left on the outputs.
        self.left == 0
            && (0..QPS).all(|q| self.killed_done(q))
            && (self.kill.iter().all(Option::is_none) || !self.prev_valids)
            && self.jobs_left == 0
            && self.step_start.is_none()
            && self.desc_wait_rd.is_empty()
            && self.exp_ctrl.is_empty()
            && self.ready_due.is_none()
    }
}

#[test]
fn tx_engine_random_lockstep() {
    let mut total = 0u64;
    let (mut new_steps, mut cont_steps) = (0u64, 0u64);
    let (mut cnp_steps, mut ack_steps) = (0u64, 0u64);
    let mut stats = [0u64; 7];
    let (mut ack_kinds, mut acks_dropped, mut both_waiting) = ([0u64; 3], 0u64, 0u64);
    let mut blocked = [0u64; 2];
    let (mut rsp_stats, mut rsp_ops, mut rsp_steps) = ([0u64; 5], [0u64; 4], 0u64);
    let mut rr_checked = 0u64;
    let (mut kills, mut kill_stats) = (0u64, [0u64; 4]);
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let mut env = TxEnv::new(seed);
        // RNIC_MODEL_ALONE=1: the model alone under the environment (how a
        // mutation of the model is shown to be caught).
        let fin = if common::env_u64("RNIC_MODEL_ALONE").is_some_and(|v| v != 0) {
            lockstep::run_single(&mut TxEngine::new(), &mut env, 2_000_000)
        } else {
            lockstep::run(
                &mut TxEngine::new(),
                &mut RtlTxEngine::new(),
                &mut env,
                2_000_000,
            )
            .unwrap_or_else(|d| panic!("{d}"))
        };
        assert!(fin.completed, "did not finish in {} cycles", fin.cycles);
        for q in 0..QPS {
            // A killed QP's packets never sent belong to WQEs that ended.
            if let Some(k) = env.kill[q] {
                assert!(
                    env.exp_pkts[q].iter().all(|p| p.wqe < k.next),
                    "QP {q}: packets left of a WQE that did not end"
                );
                env.exp_pkts[q].clear();
            }
            assert!(env.exp_pkts[q].is_empty() && env.exp_cpls[q].is_empty());
            assert!(env.exp_rsp[q].is_empty() && env.jobs_avail[q].is_empty());
        }
        for (a, b) in rsp_stats.iter_mut().zip(env.rsp_stats) {
            *a += b;
        }
        for (a, b) in rsp_ops.iter_mut().zip(env.rsp_ops) {
            *a += b;
        }
        rsp_steps += env.steps[4];
        rr_checked += env.rr_checked;
        kills += env.kill.iter().filter(|k| k.is_some()).count() as u64;
        for (a, b) in kill_stats.iter_mut().zip(env.kill_stats) {
            *a += b;
        }
        assert!(
            env.rr_seen.is_empty(),
            "rr_* records with no READ REQUEST taken"
        );
        assert!(
            env.desc_wait_rd.is_empty()
                && env.rd_wait_desc.is_empty()
                && env.cpl_frames.is_empty()
                && env.cpls_wait_frame.is_empty()
        );
        assert_eq!(
            (env.errs, env.prot, env.flush),
            (env.errs_exp, env.prot_exp, env.flush_exp),
            "err_valid / ev_prot_err / ev_flush pulses"
        );
        total += fin.cycles;
        new_steps += env.steps[1];
        cont_steps += env.steps[0];
        cnp_steps += env.steps[2];
        ack_steps += env.steps[3];
        for (a, b) in ack_kinds.iter_mut().zip(env.ack_kinds) {
            *a += b;
        }
        acks_dropped += env.acks_dropped;
        both_waiting += env.both_waiting;
        blocked[0] += env.blocked[0];
        blocked[1] += env.blocked[1];
        for (a, b) in stats.iter_mut().zip(env.stats) {
            *a += b;
        }
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        total >= MIN_TOTAL_CYCLES
            && rr_checked >= 500
            && rsp_ops.iter().all(|&k| k >= 500)
            && rsp_stats[1] >= 2000
            && rsp_stats[2] >= 100
            && rsp_stats[3] >= 20
            && rsp_stats[4] >= 500
            && cnp_steps >= 1000
            && ack_steps >= 1000
            && ack_kinds.iter().all(|&k| k >= 200)
            && acks_dropped >= 20
            && both_waiting >= 500
            && blocked[0] >= 1000
            && blocked[1] >= 1000
            && kills >= 100
            && kill_stats[1] >= 20
            && kill_stats[2] >= 20
    });
    eprintln!(
        "ERROR in the middle of a message: {kills} QPs moved to ERROR with a WQE in progress; \
         completions after it: {} own, {} turned by error mode, {} flushed, {} own local error",
        kill_stats[0], kill_stats[1], kill_stats[2], kill_stats[3]
    );
    eprintln!(
        "tx_engine lockstep: {} cases, {total} cycles, {new_steps} new-WQE steps, \
         {cont_steps} in-progress steps, {cnp_steps} CNP steps, {ack_steps} ACK steps; \
         {} packets ({} CNPs, {} ACKs: {ack_kinds:?} ACK / RNR NAK / NAK), \
         {acks_dropped} ACKs for UC QPs dropped, {both_waiting} control grants with both waiting; \
         completions: {} success, {} QP op error, {} protection error, {} flushed; \
         blocked grants: {} with a WQE waiting (nothing done), {} with a WQE in progress",
        run.cases,
        stats[0],
        stats[5],
        stats[6],
        stats[1],
        stats[2],
        stats[3],
        stats[4],
        blocked[0],
        blocked[1]
    );
    eprintln!("tx_engine lockstep: {rr_checked} READ REQUEST records (rr_*) checked");
    eprintln!(
        "tx_engine lockstep, READ responses: {rsp_steps} response steps, {} packets \
         ({rsp_ops:?} FIRST / MIDDLE / LAST / ONLY), {} jobs popped ({} of length 0, \
         {} with PSNs wrapping), {} response steps while the QP had a WQE in progress or waiting",
        rsp_stats[0], rsp_stats[1], rsp_stats[2], rsp_stats[3], rsp_stats[4]
    );
    if run.full {
        assert!(total >= MIN_TOTAL_CYCLES, "only {total} lockstep cycles");
        assert!(rr_checked >= 500, "only {rr_checked} READ REQUEST records");
        assert!(
            rsp_ops.iter().all(|&k| k >= 500),
            "READ response opcodes: {rsp_ops:?}"
        );
        assert!(
            rsp_stats[1] >= 2000 && rsp_stats[2] >= 100 && rsp_stats[3] >= 20,
            "READ jobs: {rsp_stats:?}"
        );
        assert!(
            rsp_stats[4] >= 500,
            "READ responses ahead of WQEs: {rsp_stats:?}"
        );
        assert!(cnp_steps >= 1000, "only {cnp_steps} CNPs");
        assert!(ack_steps >= 1000, "only {ack_steps} ACKs");
        assert!(
            ack_kinds.iter().all(|&k| k >= 200),
            "ACK / RNR NAK / NAK frames: {ack_kinds:?}"
        );
        assert!(acks_dropped >= 20, "only {acks_dropped} ACKs for UC QPs");
        assert!(
            both_waiting >= 500,
            "only {both_waiting} grants with both waiting"
        );
        assert!(
            blocked[0] >= 1000 && blocked[1] >= 1000,
            "only {blocked:?} blocked grants"
        );
    }
}

/// The cycle figures of docs/responder.md ("rd_resp and READ responses in
/// tx_engine"): one 64 KiB READ job at MTU code 5 (4096) on an RC QP,
/// nothing else to send, every ready high, tx_sched granting from the
/// cycle after `job_avail` rises. The contract: the first response
/// descriptor is visible 4 cycles after `job_avail` (1 for tx_sched's grant,
/// 3 for the step), then one descriptor every 4 cycles: 16 packets, the
/// last at 4 + 15 x 4 = 64 cycles after `job_avail`.
#[test]
fn tx_engine_read_response_rate() {
    let mut r = SplitMix64::new(DEFAULT_SEED);
    let mut c = gen_case(&mut r);
    c.qps[0].state = 1;
    c.qps[0].uc = false;
    c.qps[0].mtu = 5;
    c.wqes = vec![Vec::new(); QPS];
    c.jobs = vec![Vec::new(); QPS];
    c.jobs[0].push(ReadJob {
        qp: 0,
        psn: (1 << 24) - 3,
        addr: 0x1_0000_0000,
        len: 64 << 10,
        msn: 7,
        mtu: 5,
        max_rd: 0,
    });
    (c.desc_rdy, c.rd_rdy, c.cpl_rdy) = (100, 100, 100);
    (c.no_grant_pct, c.rand_grant_pct, c.ctrl_pct) = (0, 0, 0);
    (c.ack_pct, c.block_flip_pct, c.job_pct) = (0, 0, 100);
    let mut env = TxEnv::new(0);
    env.r = r;
    env.jobs_pending = c.jobs.iter().map(|v| v.iter().copied().collect()).collect();
    env.bytes_jobs = env.jobs_pending.clone();
    env.exp_rsp = c
        .jobs
        .iter()
        .map(|js| js.iter().flat_map(rsp_packets).collect())
        .collect();
    env.exp_pkts = vec![VecDeque::new(); QPS];
    env.exp_cpls = vec![VecDeque::new(); QPS];
    env.pending = vec![VecDeque::new(); QPS];
    env.jobs_left = 1;
    env.left = 16;
    (env.errs_exp, env.prot_exp, env.flush_exp) = (0, 0, 0);
    env.qp_tab = c.qps;
    env.c = c;
    let fin = lockstep::run(
        &mut TxEngine::new(),
        &mut RtlTxEngine::new(),
        &mut env,
        10_000,
    )
    .unwrap_or_else(|d| panic!("{d}"));
    assert!(fin.completed, "did not finish in {} cycles", fin.cycles);
    let a = env.job_first_avail.unwrap();
    let d: Vec<u64> = env.rsp_cycles.iter().map(|c| c - a).collect();
    eprintln!("READ response rate: job_avail at {a}, descriptors at +{d:?} (64 KiB, MTU 4096)");
    assert_eq!(d.len(), 16);
    assert_eq!(d[0], 4, "job available to first response descriptor");
    assert!(
        d.windows(2).all(|w| w[1] - w[0] == 4),
        "one packet per 4 cycles"
    );
    assert_eq!(d[15], 64);
}
