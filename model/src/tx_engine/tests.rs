//! Directed tests of the `tx_engine` model.

use super::*;
use std::collections::VecDeque;

/// The csr fields of one QP that matter here (others are fixed).
#[derive(Clone, Copy)]
struct Qp {
    state: u8,
    uc: bool,
    mtu: u8,
    psn: u32,
    pd: u16,
    cq: u8,
    vlan: bool,
    ipv6: bool,
}

const RTS_RC: Qp = Qp {
    state: qp_state::RTS,
    uc: false,
    mtu: 1,
    psn: 100,
    pd: 7,
    cq: 2,
    vlan: false,
    ipv6: false,
};

#[derive(Clone, Copy, Default)]
struct Mr {
    valid: bool,
    key: u32,
    va: u64,
    len: u64,
    pbase: u64,
    access: u8,
    pd: u16,
}

/// MR 1: key 0x101, VA 0x10000, 64 KiB at physical 0x8000_0000, local
/// write, PD 7.
fn mrs() -> [Mr; MRS] {
    let mut m = [Mr::default(); MRS];
    m[1] = Mr {
        valid: true,
        key: 0x101,
        va: 0x1_0000,
        len: 0x1_0000,
        pbase: 0x8000_0000,
        access: 1,
        pd: 7,
    };
    m
}

#[allow(clippy::too_many_arguments)]
fn wqe(wr_id: u64, op: u8, flags: u8, len: u32, laddr: u64, lkey: u32, imm: u32) -> [u8; 64] {
    let mut w = [0u8; 64];
    w[0..8].copy_from_slice(&wr_id.to_le_bytes());
    w[8] = op;
    w[9] = flags;
    w[0x0C..0x10].copy_from_slice(&len.to_le_bytes());
    w[0x10..0x18].copy_from_slice(&laddr.to_le_bytes());
    w[0x18..0x1C].copy_from_slice(&lkey.to_le_bytes());
    w[0x1C..0x20].copy_from_slice(&imm.to_le_bytes());
    w[0x20..0x28].copy_from_slice(&0xAAAA_0000_0000_1000u64.to_le_bytes());
    w[0x28..0x2C].copy_from_slice(&0x5151u32.to_le_bytes());
    w
}

/// One descriptor as seen by pkt_builder, with its payload read.
#[derive(Debug, PartialEq, Eq)]
struct Pkt {
    opcode: u8,
    psn: u32,
    pay: u16,
    /// (remote VA, rkey, DMA length)
    reth: Option<(u64, u32, u32)>,
    imm: Option<u32>,
    se: bool,
    ack_req: bool,
    cpl: bool,
    /// (address, length) of the payload read.
    rd: Option<(u64, u32)>,
}

#[derive(Debug, PartialEq, Eq)]
struct CplRec {
    wait: bool,
    wr_id: u64,
    status: u8,
    opcode: u8,
    len: u32,
    imm: u32,
    qp: u8,
    cq: u8,
    uc: bool,
    psn: u32,
}

/// A CNP descriptor: (latency from its control grant, opcode, PSN,
/// DSCP, ECN, PCP, BECN, dest QP, pay_len, wire_len, desc_cpl, ack_req).
type Cnp = (u64, u8, u32, u8, u8, u8, bool, u32, u16, u16, bool, bool);

struct Run {
    pkts: Vec<Pkt>,
    /// desc_wire_len of each packet in `pkts`.
    wire: Vec<u16>,
    cnps: Vec<Cnp>,
    cpls: Vec<CplRec>,
    /// Next PSN as written back last.
    psn: u32,
    /// (grant cycle, first-visible cycle of the step's first output, new WQE)
    lat: Vec<(u64, u64, bool)>,
    prot_errs: u32,
    flushes: u32,
    /// Cycles in which a pop was visible, and a data descriptor.
    pops: Vec<u64>,
    pkt_at: Vec<u64>,
}

const Q: u8 = 3;

/// Plays csr (registered reads, PSN and error write-back), sq_fetch (pop
/// at n -> WQE at n+1) and tx_sched (a grant for QP `Q` whenever it has
/// work) around the model, everything always ready.
fn run(qp: Qp, mrs: [Mr; MRS], wqes: &[[u8; 64]]) -> Run {
    run_ctrl(qp, mrs, wqes, &[])
}

/// Same, with a control grant instead of the data grant in each cycle
/// of `ctrl` (cycle, cnp_valid); a CNP is for QP `Q`, with DSCP 48,
/// PCP 6, BECN 1.
fn run_ctrl(qp: Qp, mrs: [Mr; MRS], wqes: &[[u8; 64]], ctrl: &[(u64, bool)]) -> Run {
    run_blk(qp, mrs, wqes, ctrl, 0..0)
}

/// Same, with `wqe_block[Q]` high in the cycles of `block`.
fn run_blk(
    qp: Qp,
    mrs: [Mr; MRS],
    wqes: &[[u8; 64]],
    ctrl: &[(u64, bool)],
    block: std::ops::Range<u64>,
) -> Run {
    run_with(qp, mrs, wqes, ctrl, block, None)
}

/// Same, with software (or ack_tracker) moving QP `Q` to ERROR at
/// `error.0`, and ack_tracker's error mode for it `error.1`.
fn run_with(
    qp: Qp,
    mrs: [Mr; MRS],
    wqes: &[[u8; 64]],
    ctrl: &[(u64, bool)],
    block: std::ops::Range<u64>,
    error: Option<(u64, bool)>,
) -> Run {
    let mut m = TxEngine::new();
    let mut out = m.reset();
    let mut sq: VecDeque<[u8; 64]> = wqes.iter().copied().collect();
    let mut qp = qp;
    let mut wqe_next: Option<[u8; 64]> = None;
    let mut wqe_data = [0u8; 64];
    let mut qp_read = qp;
    let mut mr_read = Mr::default();
    let mut r = Run {
        pkts: vec![],
        wire: vec![],
        cnps: vec![],
        cpls: vec![],
        psn: qp.psn,
        lat: vec![],
        prot_errs: 0,
        flushes: 0,
        pops: vec![],
        pkt_at: vec![],
    };
    let mut pending_grant: Option<(u64, bool)> = None;
    let mut pending_cnp: Option<u64> = None;
    let mut idle = 0;
    for cycle in 0..4_000_000u64 {
        let mut i = TxEngineIn {
            rd_req_ready: true,
            desc_ready: true,
            cpl_ready: true,
            ..Default::default()
        };
        // sq_fetch
        if let Some(w) = wqe_next.take() {
            i.wqe_valid = true;
            i.wqe_qp = Q;
            // sq_fetch's SQ index: one more per WQE (a repeated index
            // would be a WQE sent before: no second completion).
            i.wqe_idx = r.pops.len() as u16;
            wqe_data = w;
        }
        i.wqe_data = Beat::default();
        i.wqe_data[..].copy_from_slice(&[wqe_data, [0; 64]].concat()[..64]);
        if out.wqe_pop_valid {
            assert_eq!(out.wqe_pop_qp, Q);
            wqe_next = Some(sq.pop_front().expect("pop of an empty SQ"));
            r.pops.push(cycle);
        }
        i.wqe_avail = if sq.is_empty() { 0 } else { 1 << Q };
        let blocked = block.contains(&cycle);
        i.wqe_block = if blocked { 1 << Q } else { 0 };
        // tx_sched
        let active = out.req_active >> Q & 1 != 0;
        i.grant_valid = active || !sq.is_empty() || wqe_next.is_some();
        i.grant_qp = Q;
        i.cfg_cnp_dscp = 48;
        i.cfg_cnp_pcp = 6;
        i.cfg_cnp_becn = true;
        if let Some(&(_, v)) = ctrl.iter().find(|c| c.0 == cycle) {
            i.grant_valid = true;
            i.grant_qp = 0;
            i.grant_ctrl = true;
            i.cnp_valid = v;
            i.cnp_qp = Q;
            if v && out.grant_ready {
                pending_cnp = Some(cycle);
            }
        } else if i.grant_valid && out.grant_ready && (active || !sq.is_empty() && !blocked) {
            pending_grant = Some((cycle, !active));
        }
        // csr: this cycle's lookups, then this cycle's writes.
        i.qp_state = qp_read.state;
        i.qp_uc = qp_read.uc;
        i.qp_mtu = qp_read.mtu;
        i.qp_psn = qp_read.psn;
        i.qp_pd = qp_read.pd;
        i.qp_cq = qp_read.cq;
        i.qp_remote_qpn = 0x12345;
        i.qp_pkey = 0xFFFF;
        i.qp_vlan_en = qp_read.vlan;
        i.qp_ipv6 = qp_read.ipv6;
        i.qp_dscp = 10;
        i.qp_pcp = 2;
        i.qp_ecn_en = true;
        i.mr_valid = mr_read.valid;
        i.mr_key = mr_read.key;
        i.mr_va = mr_read.va;
        i.mr_len = mr_read.len;
        i.mr_pbase = mr_read.pbase;
        i.mr_access = mr_read.access;
        i.mr_pd = mr_read.pd;
        // Only QP `Q` is used (qp_idx is 0 until the first grant).
        qp_read = qp;
        let lkey = u32::from_le_bytes(wqe_data[0x18..0x1C].try_into().unwrap());
        mr_read = mrs[lkey as usize % MRS];
        if out.psn_wr_valid {
            assert_eq!(out.psn_wr_qp, Q);
            qp.psn = out.psn_wr_psn;
            r.psn = out.psn_wr_psn;
        }
        if out.err_valid {
            assert_eq!(out.err_qp, Q);
            qp.state = qp_state::ERROR;
        }
        if let Some((at, mode)) = error {
            if cycle == at {
                qp.state = qp_state::ERROR;
            }
            i.err_mode = if mode && cycle >= at { 1 << Q } else { 0 };
        }
        r.prot_errs += out.ev_prot_err as u32;
        r.flushes += out.ev_flush as u32;
        // Outputs of the step (each visible for one cycle: always ready).
        if out.desc_valid && out.desc_cnp_pad {
            let g = pending_cnp.take().expect("a CNP without a control grant");
            assert!(!out.rd_req_valid && !out.cpl_valid);
            assert_eq!(
                (out.desc_qp, out.desc_reth_en, out.desc_imm_en),
                (Q, false, false)
            );
            r.cnps.push((
                cycle - g,
                out.desc_opcode,
                out.desc_psn,
                out.desc_dscp,
                out.desc_ecn,
                out.desc_pcp,
                out.desc_becn,
                out.desc_dest_qp,
                out.desc_pay_len,
                out.desc_wire_len,
                out.desc_cpl,
                out.desc_ack_req,
            ));
            out = m.tick(&i);
            continue;
        }
        if out.desc_valid || out.cpl_valid {
            if let Some((g, new)) = pending_grant.take() {
                r.lat.push((g, cycle, new));
            }
        }
        if out.desc_valid {
            assert!(!out.desc_becn, "BECN on a data packet");
            assert_eq!((out.desc_dscp, out.desc_ecn, out.desc_pcp), (10, 2, 2));
            r.wire.push(out.desc_wire_len);
            r.pkt_at.push(cycle);
            assert_eq!(out.desc_qp, Q);
            assert_eq!(out.desc_dest_qp, 0x12345);
            r.pkts.push(Pkt {
                opcode: out.desc_opcode,
                psn: out.desc_psn,
                pay: out.desc_pay_len,
                reth: out.desc_reth_en.then_some((
                    out.desc_reth_va,
                    out.desc_reth_rkey,
                    out.desc_reth_len,
                )),
                imm: out.desc_imm_en.then_some(out.desc_imm),
                se: out.desc_se,
                ack_req: out.desc_ack_req,
                cpl: out.desc_cpl,
                rd: out
                    .rd_req_valid
                    .then_some((out.rd_req_addr, out.rd_req_len)),
            });
        } else {
            assert!(!out.rd_req_valid, "a payload read without its descriptor");
        }
        if out.cpl_valid {
            r.cpls.push(CplRec {
                wait: out.cpl_wait_frame,
                wr_id: out.cpl_wr_id,
                status: out.cpl_status,
                opcode: out.cpl_opcode,
                len: out.cpl_len,
                imm: out.cpl_imm,
                qp: out.cpl_qp,
                cq: out.cpl_cq,
                uc: out.cpl_uc,
                psn: out.cpl_psn,
            });
        }
        let busy = !sq.is_empty()
            || active
            || wqe_next.is_some()
            || !out.grant_ready
            || ctrl.iter().any(|c| c.0 >= cycle);
        idle = if busy { 0 } else { idle + 1 };
        if idle > 10 {
            return r;
        }
        out = m.tick(&i);
    }
    panic!("did not finish");
}

/// A packet with no extension header and no read.
fn p(opcode: u8, psn: u32, pay: u16, ack_req: bool) -> Pkt {
    Pkt {
        opcode,
        psn,
        pay,
        reth: None,
        imm: None,
        se: false,
        ack_req,
        cpl: false,
        rd: None,
    }
}

/// Same, reading `pay` bytes at `addr`.
fn pr(opcode: u8, psn: u32, pay: u16, ack_req: bool, addr: u64) -> Pkt {
    Pkt {
        rd: Some((addr, pay as u32)),
        ..p(opcode, psn, pay, ack_req)
    }
}

const LA: u64 = 0x1_0010; // local VA: 16 bytes into MR 1
const PA: u64 = 0x8000_0010; // its physical address
const RETH: fn(u32) -> Option<(u64, u32, u32)> = |len| Some((0xAAAA_0000_0000_1000, 0x5151, len));

#[test]
fn mtu_codes() {
    let got: Vec<u32> = (0..8).map(mtu_bytes).collect();
    assert_eq!(got, vec![256, 256, 512, 1024, 2048, 4096, 4096, 4096]);
}

#[test]
fn send_segmentation_at_the_mtu_edges() {
    // MTU 256: lengths 0, 1, 255, 256, 257, 700.
    let ws: Vec<[u8; 64]> = [0u32, 1, 255, 256, 257, 700]
        .iter()
        .enumerate()
        .map(|(k, &len)| wqe(k as u64, wqe_op::SEND, 0, len, LA, 0x101, 0))
        .collect();
    let r = run(RTS_RC, mrs(), &ws);
    let expect = vec![
        p(0x04, 100, 0, true), // zero length: ONLY, no read
        pr(0x04, 101, 1, true, PA),
        pr(0x04, 102, 255, true, PA),
        pr(0x04, 103, 256, true, PA),
        pr(0x00, 104, 256, false, PA),    // FIRST
        pr(0x02, 105, 1, true, PA + 256), // LAST
        pr(0x00, 106, 256, false, PA),
        pr(0x01, 107, 256, false, PA + 256), // MIDDLE
        pr(0x02, 108, 188, true, PA + 512),
    ];
    assert_eq!(r.pkts, expect);
    assert_eq!(r.psn, 109);
    assert!(r.cpls.is_empty(), "nothing signaled, nothing completes");
}

#[test]
fn send_imm_and_solicited() {
    let ws = [
        wqe(1, wqe_op::SEND_IMM, 2, 257, LA, 0x101, 0xCAFE_F00D),
        wqe(2, wqe_op::SEND_IMM, 0, 0, LA, 0x101, 0x1111_2222),
        wqe(3, wqe_op::SEND, 2, 10, LA, 0x101, 0),
    ];
    let r = run(RTS_RC, mrs(), &ws);
    let expect = vec![
        pr(0x00, 100, 256, false, PA),
        Pkt {
            imm: Some(0xCAFE_F00D),
            se: true,
            ..pr(0x03, 101, 1, true, PA + 256) // LAST with Imm
        },
        Pkt {
            imm: Some(0x1111_2222),
            ..p(0x05, 102, 0, true) // ONLY with Imm
        },
        Pkt {
            se: true,
            ..pr(0x04, 103, 10, true, PA)
        },
    ];
    assert_eq!(r.pkts, expect);
}

#[test]
fn write_segmentation_reth_and_imm() {
    let mut qp = RTS_RC;
    qp.mtu = 2; // 512
    let ws = [
        wqe(1, wqe_op::WRITE, 2, 100, LA, 0x101, 0),
        wqe(2, wqe_op::WRITE, 0, 1025, LA, 0x101, 0),
        wqe(3, wqe_op::WRITE_IMM, 2, 512, LA, 0x101, 0x77),
        wqe(4, wqe_op::WRITE_IMM, 0, 513, LA, 0x101, 0x88),
        wqe(5, wqe_op::WRITE, 0, 0, LA, 0x101, 0),
    ];
    let r = run(qp, mrs(), &ws);
    let expect = vec![
        // WRITE has no SE even when solicited.
        Pkt {
            reth: RETH(100),
            ..pr(0x0A, 100, 100, true, PA)
        },
        Pkt {
            reth: RETH(1025),
            ..pr(0x06, 101, 512, false, PA)
        },
        pr(0x07, 102, 512, false, PA + 512),
        pr(0x08, 103, 1, true, PA + 1024),
        Pkt {
            reth: RETH(512),
            imm: Some(0x77),
            se: true,
            ..pr(0x0B, 104, 512, true, PA)
        },
        Pkt {
            reth: RETH(513),
            ..pr(0x06, 105, 512, false, PA)
        },
        Pkt {
            imm: Some(0x88),
            ..pr(0x09, 106, 1, true, PA + 512)
        },
        Pkt {
            reth: RETH(0),
            ..p(0x0A, 107, 0, true)
        },
    ];
    assert_eq!(r.pkts, expect);
    assert_eq!(r.psn, 108);
}

#[test]
fn read_consumes_one_psn_per_response_packet() {
    let mut qp = RTS_RC;
    qp.mtu = 3; // 1024
    let ws = [
        wqe(1, wqe_op::READ, 0, 0, LA, 0x101, 0),
        wqe(2, wqe_op::READ, 0, 1024, LA, 0x101, 0),
        wqe(3, wqe_op::READ, 0, 1025, LA, 0x101, 0),
        wqe(4, wqe_op::READ, 0, 5000, LA, 0x101, 0),
    ];
    let r = run(qp, mrs(), &ws);
    let expect = vec![
        Pkt {
            reth: RETH(0),
            ..p(0x0C, 100, 0, true)
        },
        Pkt {
            reth: RETH(1024),
            ..p(0x0C, 101, 0, true)
        },
        Pkt {
            reth: RETH(1025),
            ..p(0x0C, 102, 0, true)
        },
        Pkt {
            reth: RETH(5000),
            ..p(0x0C, 104, 0, true)
        },
    ];
    assert_eq!(r.pkts, expect);
    assert_eq!(r.psn, 109); // 104 + ceil(5000 / 1024)
}

#[test]
fn psn_wraps_at_2_pow_24() {
    let mut qp = RTS_RC;
    qp.psn = 0xFF_FFFE;
    let ws = [
        wqe(1, wqe_op::SEND, 0, 700, LA, 0x101, 0),
        wqe(2, wqe_op::READ, 0, 600, LA, 0x101, 0),
    ];
    let r = run(qp, mrs(), &ws);
    let psns: Vec<u32> = r.pkts.iter().map(|p| p.psn).collect();
    assert_eq!(psns, vec![0xFF_FFFE, 0xFF_FFFF, 0, 1]);
    assert_eq!(r.psn, 4);
}

#[test]
fn uc_opcodes_and_completions() {
    let mut qp = RTS_RC;
    qp.uc = true;
    qp.mtu = 5; // 4096
    let ws = [
        wqe(1, wqe_op::SEND, 1, 4097, LA, 0x101, 0),
        wqe(2, wqe_op::WRITE_IMM, 1, 8, LA, 0x101, 0x99),
        wqe(3, wqe_op::SEND_IMM, 0, 3, LA, 0x101, 0x42), // unsignaled
        wqe(4, wqe_op::WRITE, 1, 0, LA, 0x101, 0),
    ];
    let r = run(qp, mrs(), &ws);
    let expect = vec![
        pr(0x20, 100, 4096, false, PA),
        Pkt {
            cpl: true,
            ..pr(0x22, 101, 1, false, PA + 4096)
        },
        Pkt {
            reth: RETH(8),
            imm: Some(0x99),
            cpl: true,
            ..pr(0x2B, 102, 8, false, PA)
        },
        Pkt {
            imm: Some(0x42),
            ..pr(0x25, 103, 3, false, PA)
        },
        Pkt {
            reth: RETH(0),
            cpl: true,
            ..p(0x2A, 104, 0, false)
        },
    ];
    assert_eq!(r.pkts, expect);
    let c = |wr_id, opcode, len, imm, psn| CplRec {
        wait: true,
        wr_id,
        status: cqe_status::SUCCESS,
        opcode,
        len,
        imm,
        qp: Q,
        cq: 2,
        uc: true,
        psn,
    };
    assert_eq!(
        r.cpls,
        vec![
            c(1, wc_op::SEND, 4097, 0, 101),
            c(2, wc_op::RDMA_WRITE, 8, 0x99, 102),
            c(4, wc_op::RDMA_WRITE, 0, 0, 104)
        ]
    );
}

/// The CQE opcode of a WQE opcode (docs/protocol.md section 6; written
/// out here, not taken from the model).
fn wc_of(wqe_opcode: u8) -> u8 {
    match wqe_opcode {
        0 | 1 => 0,
        2 | 3 => 1,
        4 => 2,
        _ => 0x7F,
    }
}

fn err(wr_id: u64, status: u8, opcode: u8, imm: u32) -> CplRec {
    CplRec {
        wait: false,
        wr_id,
        status,
        opcode,
        len: 0,
        imm,
        qp: Q,
        cq: 2,
        uc: false,
        psn: 0,
    }
}

/// `bad` must fail with `status`; the good WQE behind it is flushed.
fn fails(qp: Qp, mrs: [Mr; MRS], bad: [u8; 64], status: u8) {
    let good = wqe(9, wqe_op::SEND_IMM, 1, 8, LA, 0x101, 0x5);
    let r = run(qp, mrs, &[bad, good]);
    assert!(r.pkts.is_empty(), "nothing is sent for a faulty WQE");
    let op = bad[8];
    let imm = if op == 1 || op == 3 {
        u32::from_le_bytes(bad[0x1C..0x20].try_into().unwrap())
    } else {
        0
    };
    let uc = |c: CplRec| CplRec { uc: qp.uc, ..c };
    assert_eq!(
        r.cpls,
        vec![
            uc(err(1, status, wc_of(op), imm)),
            uc(err(9, cqe_status::WR_FLUSH_ERR, wc_op::SEND, 5))
        ]
    );
    assert_eq!(r.prot_errs, (status == cqe_status::LOC_PROT_ERR) as u32);
    assert_eq!(r.flushes, 1);
    assert_eq!(r.psn, qp.psn, "no PSN is used");
}

#[test]
fn each_protection_fault_fails_and_flushes() {
    let base = mrs();
    let w = |op, len, laddr, lkey| wqe(1, op, 0, len, laddr, lkey, 0x33);
    // Invalid MR.
    let mut m = base;
    m[1].valid = false;
    fails(RTS_RC, m, w(0, 8, LA, 0x101), cqe_status::LOC_PROT_ERR);
    // Key mismatch (same index 1, other key).
    fails(RTS_RC, base, w(0, 8, LA, 0x201), cqe_status::LOC_PROT_ERR);
    // PD mismatch.
    let mut m = base;
    m[1].pd = 8;
    fails(RTS_RC, m, w(0, 8, LA, 0x101), cqe_status::LOC_PROT_ERR);
    // Below the region.
    fails(
        RTS_RC,
        base,
        w(2, 8, 0xFFFF, 0x101),
        cqe_status::LOC_PROT_ERR,
    );
    // Past the end by one byte; exactly to the end is fine.
    fails(
        RTS_RC,
        base,
        w(0, 0x1_0000 - 15, LA, 0x101),
        cqe_status::LOC_PROT_ERR,
    );
    let r = run(RTS_RC, base, &[w(0, 0x1_0000 - 16, LA, 0x101)]);
    assert_eq!(r.cpls, vec![]);
    assert_eq!(r.pkts.len(), 256);
    // 65-bit arithmetic: laddr + len wraps 2^64 in 64 bits.
    let mut m = base;
    m[1].va = 0xFFFF_FFFF_FFFF_FF00;
    m[1].len = 0x100;
    fails(
        RTS_RC,
        m,
        w(0, 0x200, 0xFFFF_FFFF_FFFF_FF80, 0x101),
        cqe_status::LOC_PROT_ERR,
    );
    // READ needs LOCAL_WRITE; a SEND from the same MR does not.
    let mut m = base;
    m[1].access = 0xE;
    fails(RTS_RC, m, w(4, 8, LA, 0x101), cqe_status::LOC_PROT_ERR);
    assert_eq!(run(RTS_RC, m, &[w(0, 8, LA, 0x101)]).pkts.len(), 1);
    // Zero length: no MR check at all.
    let mut m = base;
    m[1].valid = false;
    assert_eq!(run(RTS_RC, m, &[w(2, 0, 0, 0x101)]).pkts.len(), 1);
}

#[test]
fn invalid_opcode_and_read_on_uc_are_qp_operation_errors() {
    fails(
        RTS_RC,
        mrs(),
        wqe(1, 5, 0, 8, LA, 0x101, 0),
        cqe_status::LOC_QP_OP_ERR,
    );
    fails(
        RTS_RC,
        mrs(),
        wqe(1, 0xFF, 0, 8, LA, 0x101, 0),
        cqe_status::LOC_QP_OP_ERR,
    );
    let mut uc = RTS_RC;
    uc.uc = true;
    fails(
        uc,
        mrs(),
        wqe(1, wqe_op::READ, 1, 8, LA, 0x101, 0),
        cqe_status::LOC_QP_OP_ERR,
    );
    // The opcode check comes before the MR check.
    let mut m = mrs();
    m[1].valid = false;
    fails(
        RTS_RC,
        m,
        wqe(1, 7, 0, 8, LA, 0x101, 0),
        cqe_status::LOC_QP_OP_ERR,
    );
}

#[test]
fn error_state_flushes_everything_signaled_or_not() {
    let mut qp = RTS_RC;
    qp.state = qp_state::ERROR;
    let ws = [
        wqe(1, wqe_op::SEND, 0, 8, LA, 0x101, 0),
        wqe(2, 9, 0, 8, LA, 0x101, 0),
        wqe(3, wqe_op::WRITE_IMM, 1, 8, LA, 0x999, 0xAB),
    ];
    let r = run(qp, mrs(), &ws);
    assert!(r.pkts.is_empty());
    assert_eq!(
        r.cpls,
        vec![
            err(1, cqe_status::WR_FLUSH_ERR, wc_op::SEND, 0),
            err(2, cqe_status::WR_FLUSH_ERR, wc_op::INVALID, 0),
            err(3, cqe_status::WR_FLUSH_ERR, wc_op::RDMA_WRITE, 0xAB),
        ]
    );
    assert_eq!(r.flushes, 3);
}

#[test]
fn error_in_the_middle_of_a_message_ends_it() {
    // A signaled WRITE of 2560 bytes (MTU 256: 10 packets, PSNs 100..109)
    // then a signaled SEND; the QP goes to ERROR at cycle 20, with a few
    // of the WRITE's packets sent.
    let w = [
        wqe(0x51, wqe_op::WRITE, 1, 2560, 0x1_0000, 0x101, 0),
        wqe(0x52, wqe_op::SEND, 1, 100, 0x1_0000, 0x101, 0),
    ];
    let write = |status, len, psn| CplRec {
        wait: false,
        wr_id: 0x51,
        status,
        opcode: 1,
        len,
        imm: 0,
        qp: Q,
        cq: 2,
        uc: false,
        psn,
    };
    for mode in [false, true] {
        let r = run_with(RTS_RC, mrs(), &w, &[], 0..0, Some((20, mode)));
        // A prefix of the WRITE, nothing of the SEND.
        let n = r.pkts.len();
        assert!((1..10).contains(&n), "{n} packets");
        for (k, pkt) in r.pkts.iter().enumerate() {
            assert_eq!(pkt.psn, 100 + k as u32);
            assert_eq!(pkt.opcode, if k == 0 { 0x06 } else { 0x07 });
        }
        // In error mode the WRITE completes as its last packet would
        // (success, its length, last PSN 109: error mode turns it);
        // otherwise flushed. The SEND is flushed either way.
        let first = if mode {
            write(cqe_status::SUCCESS, 2560, 109)
        } else {
            write(cqe_status::WR_FLUSH_ERR, 0, 0)
        };
        assert_eq!(r.cpls.len(), 2);
        assert_eq!(r.cpls[0], first, "error mode {mode}");
        assert_eq!(
            (r.cpls[1].wr_id, r.cpls[1].status, r.cpls[1].len),
            (0x52, cqe_status::WR_FLUSH_ERR, 0)
        );
        assert_eq!(r.flushes, if mode { 1 } else { 2 });
    }
    // ERROR after the last packet: the WRITE is whole and succeeds.
    let r = run_with(RTS_RC, mrs(), &w, &[], 0..0, Some((200, true)));
    assert_eq!(r.pkts.len(), 11);
    assert_eq!(r.cpls[0], write(cqe_status::SUCCESS, 2560, 109));
}

#[test]
fn latency_budget() {
    let ws = [
        wqe(1, wqe_op::SEND, 0, 600, LA, 0x101, 0),
        wqe(2, 9, 0, 8, LA, 0x101, 0),
    ];
    let r = run(RTS_RC, mrs(), &ws);
    // New WQE: grant at n -> outputs at n+4; in progress: n+3. The
    // error completion is a new WQE too.
    let d: Vec<(u64, bool)> = r.lat.iter().map(|&(g, v, new)| (v - g, new)).collect();
    assert_eq!(d, vec![(4, true), (3, false), (3, false), (4, true)]);
}

#[test]
fn rc_signaled_messages_complete_with_their_last_psn() {
    let ws = [
        wqe(1, wqe_op::SEND, 1, 700, LA, 0x101, 0), // PSNs 100..102
        wqe(2, wqe_op::READ, 1, 600, LA, 0x101, 0), // span 103..105
        wqe(3, wqe_op::WRITE_IMM, 1, 0, LA, 0x101, 0x77), // 106
        wqe(4, wqe_op::SEND, 0, 10, LA, 0x101, 0),  // 107, unsignaled
    ];
    let r = run(RTS_RC, mrs(), &ws);
    assert!(r.pkts.iter().all(|p| !p.cpl), "no RC frame is waited for");
    let c = |wr_id, opcode, len, imm, psn| CplRec {
        wait: false,
        wr_id,
        status: cqe_status::SUCCESS,
        opcode,
        len,
        imm,
        qp: Q,
        cq: 2,
        uc: false,
        psn,
    };
    assert_eq!(
        r.cpls,
        vec![
            c(1, wc_op::SEND, 700, 0, 102),
            c(2, wc_op::RDMA_READ, 600, 0, 105),
            c(3, wc_op::RDMA_WRITE, 0, 0x77, 106)
        ]
    );
    // Across the wrap: a READ of 4 response packets from 0xFF_FFFE.
    let mut qp = RTS_RC;
    qp.psn = 0xFF_FFFE;
    let ws = [
        wqe(5, wqe_op::READ, 1, 1000, LA, 0x101, 0),
        wqe(6, wqe_op::SEND, 1, 0, LA, 0x101, 0),
    ];
    let r = run(qp, mrs(), &ws);
    let psns: Vec<(u64, u32)> = r.cpls.iter().map(|c| (c.wr_id, c.psn)).collect();
    assert_eq!(psns, vec![(5, 1), (6, 2)]);
}

#[test]
fn wire_length_of_each_header_shape() {
    let ws = [
        wqe(1, wqe_op::SEND, 0, 0, LA, 0x101, 0),
        wqe(2, wqe_op::SEND, 0, 1, LA, 0x101, 0),
        wqe(3, wqe_op::SEND_IMM, 0, 257, LA, 0x101, 0),
        wqe(4, wqe_op::WRITE, 0, 5, LA, 0x101, 0),
        wqe(5, wqe_op::READ, 0, 600, LA, 0x101, 0),
        wqe(6, wqe_op::WRITE, 0, 300, LA, 0x101, 0),
    ];
    let r = run(RTS_RC, mrs(), &ws);
    // 54 = Ethernet 14 + IPv4 20 + UDP 8 + BTH 12; ICRC 4.
    let want = vec![
        54 + 4,              // SEND ONLY, no payload
        54 + 1 + 3 + 4,      // 1 byte, 3 pad
        54 + 256 + 4,        // SEND FIRST
        54 + 4 + 1 + 3 + 4,  // SEND LAST with ImmDt
        54 + 16 + 5 + 3 + 4, // WRITE ONLY, RETH
        54 + 16 + 4,         // READ REQUEST, RETH
        54 + 16 + 256 + 4,   // WRITE FIRST
        54 + 44 + 4,         // WRITE LAST
    ];
    assert_eq!(r.wire, want);
    let mut qp = RTS_RC;
    qp.vlan = true;
    qp.ipv6 = true;
    let r = run(qp, mrs(), &[wqe(7, wqe_op::WRITE_IMM, 0, 3, LA, 0x101, 0)]);
    // Ethernet 14 + tag 4 + IPv6 40 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4
    // + 3 + 1 pad + ICRC 4.
    assert_eq!(r.wire, vec![106]);
}

#[test]
fn control_grants_send_cnps() {
    // Alone: a control grant without cnp_valid does nothing; with it,
    // the CNP descriptor is visible 3 cycles after the grant.
    let r = run_ctrl(RTS_RC, mrs(), &[], &[(3, false), (6, true)]);
    assert!(r.pkts.is_empty() && r.cpls.is_empty());
    let cnp = |wire| (3, 0x81, 0, 48, 0, 6, true, 0x12345, 0, wire, false, false);
    // 54 + 16 reserved bytes + ICRC 4.
    assert_eq!(r.cnps, vec![cnp(74)]);
    let mut qp = RTS_RC;
    qp.vlan = true;
    qp.ipv6 = true;
    let r = run_ctrl(qp, mrs(), &[], &[(6, true)]);
    assert_eq!(r.cnps, vec![cnp(98)]);
    // Between the packets of a message: the message is unchanged (its
    // PSNs too: a CNP writes none back).
    let ws = [wqe(1, wqe_op::SEND, 1, 1000, LA, 0x101, 0)];
    let ctrl: Vec<(u64, bool)> = (2..60).step_by(5).map(|c| (c, true)).collect();
    let r = run_ctrl(RTS_RC, mrs(), &ws, &ctrl);
    let psns: Vec<u32> = r.pkts.iter().map(|p| p.psn).collect();
    assert_eq!(psns, vec![100, 101, 102, 103]);
    assert_eq!(r.psn, 104);
    assert!(r.cnps.len() >= 3, "{} CNPs", r.cnps.len());
    assert!(r.cnps.iter().all(|&c| c == cnp(74)));
    assert_eq!(r.cpls.len(), 1);
    assert_eq!(r.cpls[0].psn, 103);
}

#[test]
fn wqe_block_stops_new_wqes_only() {
    // A grant every cycle while there is work, everything ready: grant
    // at 1 (grant_ready rises at 1 after reset) -> pop at 2, packets
    // at 5, 9, 13 (600 bytes at MTU 256), the second WQE's grant at 14.
    let ws = [
        wqe(1, wqe_op::SEND, 1, 600, LA, 0x101, 0),
        wqe(2, wqe_op::SEND, 1, 10, LA, 0x101, 0),
    ];
    let r = run_blk(RTS_RC, mrs(), &ws, &[], 0..0);
    assert_eq!((r.pops, r.pkt_at), (vec![2, 15], vec![5, 9, 13, 18]));
    // Blocked in 3..30: the message in progress goes on as before; the
    // grants of 14..29 pop nothing, the one at 30 pops (at 31).
    let r = run_blk(RTS_RC, mrs(), &ws, &[], 3..30);
    assert_eq!((r.pops, r.pkt_at), (vec![2, 31], vec![5, 9, 13, 34]));
    let psns: Vec<u32> = r.pkts.iter().map(|p| p.psn).collect();
    assert_eq!(psns, vec![100, 101, 102, 103]);
    assert_eq!(r.cpls.iter().map(|c| c.wr_id).collect::<Vec<_>>(), [1, 2]);
    // Blocked from the start: the first grant taken with the block low
    // is at 8, so everything moves by 7 cycles.
    let r = run_blk(RTS_RC, mrs(), &ws, &[], 0..8);
    assert_eq!((r.pops, r.pkt_at), (vec![9, 22], vec![12, 16, 20, 25]));
    // Blocked exactly in the cycle of the second WQE's grant (14): that
    // grant does nothing, the next one (15) pops.
    let r = run_blk(RTS_RC, mrs(), &ws, &[], 14..15);
    assert_eq!((r.pops, r.pkt_at), (vec![2, 16], vec![5, 9, 13, 19]));
}

#[test]
fn longest_message_segments_and_counts_psns() {
    // 2^31 bytes at MTU 4096: 2^19 packets, FIRST .. LAST.
    let mut qp = RTS_RC;
    qp.mtu = 5;
    let mut m = mrs();
    m[1].len = 1 << 31;
    let r = run(
        qp,
        m,
        &[wqe(1, wqe_op::SEND, 0, 1 << 31, 0x1_0000, 0x101, 0)],
    );
    assert_eq!(r.pkts.len(), 1 << 19);
    assert_eq!(r.pkts[0].opcode, 0x00);
    assert!(r.pkts[1..(1 << 19) - 1]
        .iter()
        .all(|p| p.opcode == 0x01 && p.pay == 4096));
    let last = r.pkts.last().unwrap();
    assert_eq!(
        (last.opcode, last.pay, last.rd),
        (0x02, 4096, Some((0x8000_0000 + (1 << 31) - 4096, 4096)))
    );
    assert_eq!(r.psn, 100 + (1 << 19));
}

/// One QP context for every QP (csr's answer whatever `qp_idx`), every
/// output ready, nothing else asked.
fn ack_ctx(uc: bool) -> TxEngineIn {
    TxEngineIn {
        desc_ready: true,
        rd_req_ready: true,
        cpl_ready: true,
        qp_state: qp_state::RTS,
        qp_uc: uc,
        qp_vlan_en: true,
        qp_ecn_en: true,
        qp_remote_qpn: 0xABCDE,
        qp_psn: 77,
        qp_dst_mac: 0x0200_0000_0001,
        qp_src_mac: 0x0200_0000_0002,
        qp_src_ip: 0x0A00_0001,
        qp_dst_ip: 0x0A00_0002,
        qp_udp_sport: 0xC000,
        qp_dscp: 26,
        qp_vid: 100,
        qp_pcp: 3,
        qp_pkey: 0x8001,
        cfg_cnp_dscp: 48,
        cfg_cnp_pcp: 6,
        ..TxEngineIn::default()
    }
}

#[test]
fn control_grants_send_acks_round_robin_with_cnps() {
    let mut e = TxEngine::new();
    e.reset();
    let idle = ack_ctx(false);
    assert!(e.tick(&idle).grant_ready);
    // A control grant with a CNP (QP 9) and an ACK (QP 5, a sequence NAK)
    // both waiting; the pointer starts at the CNP.
    let both = TxEngineIn {
        grant_valid: true,
        grant_ctrl: true,
        cnp_valid: true,
        cnp_qp: 9,
        ack_valid: true,
        ack_qp: 5,
        ack_psn: 0x12_3456,
        ack_syndrome: 0x60,
        ack_msn: 0x00_ABCD,
        ..idle
    };
    let o = e.tick(&both);
    assert!(!o.grant_ready && o.ctrl_ack_first, "CNP taken, ACK next");
    let o = e.tick(&idle);
    assert!(!o.desc_valid);
    let o = e.tick(&idle);
    assert!(o.desc_valid && o.desc_cnp_pad && !o.desc_aeth_en && o.desc_qp == 9);
    let o = e.tick(&idle);
    assert!(o.grant_ready && !o.desc_valid);
    // Both still waiting (the ACK was not taken): now the ACK goes.
    let o = e.tick(&both);
    assert!(!o.grant_ready && !o.ctrl_ack_first, "ACK taken, CNP next");
    e.tick(&idle);
    let o = e.tick(&idle);
    let want = TxEngineOut {
        desc_valid: true,
        desc_qp: 5,
        desc_cpl: false,
        desc_dst_mac: 0x0200_0000_0001,
        desc_src_mac: 0x0200_0000_0002,
        desc_vlan_en: true,
        desc_pcp: 3,
        desc_vid: 100,
        desc_ipv6: false,
        desc_src_ip: 0x0A00_0001,
        desc_dst_ip: 0x0A00_0002,
        desc_dscp: 26,
        desc_ecn: 2,
        desc_udp_sport: 0xC000,
        desc_opcode: 0x11,
        desc_se: false,
        desc_pkey: 0x8001,
        desc_becn: false,
        desc_dest_qp: 0xABCDE,
        desc_ack_req: false,
        desc_psn: 0x12_3456,
        desc_aeth_en: true,
        desc_aeth: 0x6000_ABCD,
        desc_cnp_pad: false,
        desc_pay_len: 0,
        // Ethernet 14 + VLAN 4 + IPv4 20 + UDP 8 + BTH 12 + AETH 4 + ICRC 4.
        desc_wire_len: 66,
        ..TxEngineOut::default()
    };
    // Fields a descriptor does not carry (valid-gated ports) compare as
    // the port struct does.
    assert_eq!(
        TxEngineOut {
            grant_ready: false,
            ctrl_ack_first: false,
            qp_idx: 0,
            ..o
        },
        want
    );
    assert!(!o.psn_wr_valid && !o.cpl_valid && !o.rd_req_valid);
    let o = e.tick(&idle);
    assert!(o.grant_ready && !o.desc_valid);
    // An ACK alone is taken whatever the pointer; a CNP alone likewise.
    let ack = TxEngineIn {
        cnp_valid: false,
        ..both
    };
    let o = e.tick(&ack);
    assert!(!o.grant_ready && !o.ctrl_ack_first);
}

#[test]
fn an_ack_for_a_uc_qp_is_dropped() {
    let mut e = TxEngine::new();
    e.reset();
    let idle = ack_ctx(true);
    e.tick(&idle);
    let ack = TxEngineIn {
        grant_valid: true,
        grant_ctrl: true,
        ack_valid: true,
        ack_qp: 2,
        ack_psn: 5,
        ..idle
    };
    // Taken at n (grant_ready low from n+1), no output at all, ready
    // again at n+4.
    assert!(!e.tick(&ack).grant_ready);
    for _ in 0..2 {
        let o = e.tick(&idle);
        assert!(!o.grant_ready && !o.desc_valid && !o.psn_wr_valid && !o.cpl_valid);
    }
    let o = e.tick(&idle);
    assert!(o.grant_ready && !o.desc_valid);
}

/// READ responses from rd_resp's jobs, worked out by hand: a 600-byte job
/// at MTU code 1 (256) whose first PSN is 2^24 - 1 is FIRST (256 bytes,
/// PSN 0xFFFFFF), MIDDLE (256, PSN 0), LAST (88, PSN 1), AETH {0x00, MSN}
/// on FIRST and LAST, reads at 0x5000, 0x5100, 0x5200; a zero-length job
/// is one ONLY packet with an AETH and no read. No PSN write-back, no
/// completion; each job popped with its last descriptor.
#[test]
fn read_response_packets() {
    // The AETH's syndrome byte: ACK, as the responder's.
    const ACK: u32 = (crate::params::aeth_syn::ACK as u32) << 24;
    let mut m = TxEngine::new();
    m.reset();
    let mut o = m.tick(&TxEngineIn::default());
    // (psn, addr, len, msn, mtu code)
    let jobs = [
        (0xFF_FFFFu32, 0x5000u64, 600u32, 9u32, 1u8),
        (5, 0, 0, 10, 5),
    ];
    let (mut ji, mut rd_next) = (0, false);
    let mut got = Vec::new();
    for _ in 0..100 {
        let mut i = TxEngineIn {
            desc_ready: true,
            rd_req_ready: true,
            cpl_ready: true,
            qp_state: qp_state::RTS,
            qp_mtu: 5,
            ..Default::default()
        };
        if ji < jobs.len() {
            i.job_avail = 1 << 3;
            if o.grant_ready {
                (i.grant_valid, i.grant_qp) = (true, 3);
            }
        }
        if rd_next {
            i.job_present = true;
            (i.job_psn, i.job_addr, i.job_len, i.job_msn, i.job_mtu) = jobs[ji];
        }
        rd_next = o.job_rd_valid;
        assert!(!o.psn_wr_valid && !o.cpl_valid);
        if o.desc_valid {
            got.push((
                o.desc_opcode,
                o.desc_psn,
                o.desc_pay_len,
                o.desc_aeth_en.then_some(o.desc_aeth),
                o.rd_req_valid.then_some((o.rd_req_addr, o.rd_req_len)),
                o.job_pop_valid,
            ));
        }
        if o.job_pop_valid {
            assert_eq!(o.job_pop_qp, 3);
            ji += 1;
        }
        o = m.tick(&i);
    }
    assert_eq!(
        got,
        vec![
            (
                0x0D,
                0xFF_FFFF,
                256,
                Some(ACK | 9),
                Some((0x5000, 256)),
                false
            ),
            (0x0E, 0, 256, None, Some((0x5100, 256)), false),
            (0x0F, 1, 88, Some(ACK | 9), Some((0x5200, 88)), true),
            (0x10, 5, 0, Some(ACK | 10), None, true),
        ]
    );
}
