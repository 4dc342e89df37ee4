//! Hand-worked cases of protocol.md section 7: each expected effect list is
//! written out from the rules, not computed.

use super::*;
use crate::wire::roce::{bth, ethernet, ipv4, reth, udp, IpRepr};
use std::net::Ipv4Addr;

const MTU: u32 = 256;
const PD: u16 = 3;

fn ctx(uc: bool) -> QpCtx {
    QpCtx {
        qp: 2,
        remote_qpn: 0x101,
        uc,
        ready: true,
        pd: PD,
        mtu: MTU,
        epsn: 100,
        access: REMOTE_WRITE | REMOTE_READ,
        min_rnr_timer: 14,
        mrs: 16,
    }
}

/// MR 1 (key 0x11): VA 0x1000..0x3000 at physical 0x9_0000, every right.
/// MR 2 (key 0x22): VA 0x8000..0x9000 at 0x5_0000, LOCAL_WRITE only.
fn mrs() -> Vec<Mr> {
    vec![
        Mr {
            index: 1,
            key: 0x11,
            va: 0x1000,
            len: 0x2000,
            pbase: 0x9_0000,
            access: LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ,
            pd: PD,
            valid: true,
        },
        Mr {
            index: 2,
            key: 0x22,
            va: 0x8000,
            len: 0x1000,
            pbase: 0x5_0000,
            access: LOCAL_WRITE,
            pd: PD,
            valid: true,
        },
    ]
}

fn responder(uc: bool) -> Responder {
    Responder::new(ctx(uc), mrs())
}

fn pkt(opcode: u8, psn: u32, len: usize) -> RoceRepr {
    RoceRepr {
        eth: ethernet::Repr {
            dst: 1,
            src: 2,
            vlan: None,
        },
        ip: IpRepr::V4(ipv4::Repr {
            src: Ipv4Addr::new(10, 0, 0, 2),
            dst: Ipv4Addr::new(10, 0, 0, 1),
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
            dest_qp: 2,
            ack_req: false,
            psn,
        },
        reth: None,
        aeth: None,
        imm: None,
        payload: (0..len).map(|k| k as u8).collect(),
    }
}

fn with_reth(mut p: RoceRepr, va: u64, rkey: u32, dma_len: u32) -> RoceRepr {
    p.reth = Some(reth::Repr { va, rkey, dma_len });
    p
}

fn recv(wr_id: u64, sges: &[(u64, u32, u32)]) -> rqe::Repr {
    let mut r = rqe::Repr {
        wr_id,
        num_sge: sges.len() as u8,
        ..Default::default()
    };
    for (k, &(va, len, lkey)) in sges.iter().enumerate() {
        r.sges[k] = rqe::Sge { va, len, lkey };
    }
    r
}

fn write(addr: u64, from: u8, n: usize) -> Effect {
    Effect::Write {
        addr,
        bytes: (0..n).map(|k| from.wrapping_add(k as u8)).collect(),
    }
}

fn recv_cqe(wr_id: u64, byte_len: u32, imm: Option<u32>) -> Effect {
    Effect::Cqe {
        wr_id,
        status: ST_SUCCESS,
        opcode: CQE_RECV,
        byte_len,
        imm,
        src_qp: 0x101,
    }
}

#[test]
fn send_only_scatters_across_two_entries() {
    let mut r = responder(false);
    // 64 bytes at VA 0x8010 (MR 2, physical 0x5_0010), then 64 at 0x1000 (MR 1).
    r.post_recv(recv(7, &[(0x8010, 64, 0x22), (0x1000, 64, 0x11)]));
    let e = r.packet(&pkt(0x04, 100, 100));
    assert_eq!(
        e,
        vec![
            write(0x5_0010, 0, 64),
            write(0x9_0000, 64, 36),
            recv_cqe(7, 100, None),
            Effect::Ack { psn: 100, msn: 1 },
        ]
    );
    assert_eq!((r.epsn, r.msn), (101, 1));
}

#[test]
fn send_first_middle_last_continue_in_the_recv() {
    let mut r = responder(false);
    r.post_recv(recv(9, &[(0x1000, 300, 0x11), (0x8000, 1000, 0x22)]));
    let mut f = pkt(0x00, 100, 256);
    f.bth.ack_req = true;
    assert_eq!(
        r.packet(&f),
        vec![write(0x9_0000, 0, 256), Effect::Ack { psn: 100, msn: 0 }]
    );
    // Bytes 256..512: 44 finish entry 0, 212 start entry 1.
    assert_eq!(
        r.packet(&pkt(0x01, 101, 256)),
        vec![write(0x9_0100, 0, 44), write(0x5_0000, 44, 212)]
    );
    let mut last = pkt(0x03, 102, 10);
    last.imm = Some(0xABCD);
    assert_eq!(
        r.packet(&last),
        vec![
            write(0x5_00D4, 0, 10),
            recv_cqe(9, 522, Some(0xABCD)),
            Effect::Ack { psn: 102, msn: 1 },
        ]
    );
}

#[test]
fn no_recv_posted_is_an_rnr_nak_and_a_retry_executes() {
    let mut r = responder(false);
    let p = pkt(0x04, 100, 8);
    assert_eq!(
        r.packet(&p),
        vec![Effect::Nak {
            psn: 100,
            nak: Nak::Rnr(14),
            msn: 0
        }]
    );
    assert_eq!(r.epsn, 100, "ePSN does not move on RNR");
    r.post_recv(recv(1, &[(0x1000, 8, 0x11)]));
    assert_eq!(
        r.packet(&p),
        vec![
            write(0x9_0000, 0, 8),
            recv_cqe(1, 8, None),
            Effect::Ack { psn: 100, msn: 1 }
        ]
    );
}

#[test]
fn one_sequence_nak_per_episode() {
    let mut r = responder(false);
    let seq = Effect::Nak {
        psn: 100,
        nak: Nak::PsnSequence,
        msn: 0,
    };
    let w = |psn| with_reth(pkt(0x0A, psn, 4), 0x1000, 0x11, 4);
    assert_eq!(r.packet(&w(102)), vec![seq.clone()]);
    assert_eq!(
        r.packet(&w(103)),
        vec![Effect::Silent(Silent::AheadNakSent)]
    );
    assert_eq!(
        r.packet(&w(100)),
        vec![write(0x9_0000, 0, 4), Effect::Ack { psn: 100, msn: 1 }]
    );
    // A new episode gets its own NAK, carrying the new ePSN.
    assert_eq!(
        r.packet(&w(105)),
        vec![Effect::Nak {
            psn: 101,
            nak: Nak::PsnSequence,
            msn: 1
        }]
    );
}

#[test]
fn a_duplicate_is_acknowledged_not_executed() {
    let mut r = responder(false);
    let w = with_reth(pkt(0x0A, 100, 4), 0x1000, 0x11, 4);
    r.packet(&w);
    assert_eq!(
        r.packet(&w),
        vec![Effect::Duplicate, Effect::Ack { psn: 100, msn: 1 }]
    );
    assert_eq!((r.epsn, r.msn), (101, 1));
}

#[test]
fn write_errors_are_remote_access_naks_and_stop_the_qp() {
    for (rkey, va, len, why) in [
        (0x12, 0x1000, 4, "key not in the table"),
        (0x22, 0x8000, 4, "MR without REMOTE_WRITE"),
        (0x11, 0x2FFF, 2, "range past the MR's end"),
        (0x11, 0x0FFF, 2, "range before the MR"),
    ] {
        let mut r = responder(false);
        let e = r.packet(&with_reth(pkt(0x0A, 100, len), va, rkey, len as u32));
        assert_eq!(
            e,
            vec![
                Effect::Nak {
                    psn: 100,
                    nak: Nak::RemoteAccess,
                    msn: 0
                },
                Effect::QpError
            ],
            "{why}"
        );
        assert_eq!(
            r.packet(&with_reth(pkt(0x0A, 100, 4), 0x1000, 0x11, 4)),
            vec![Effect::Silent(Silent::QpError)],
            "{why}"
        );
    }
    // The QP must grant the right too.
    let mut r = Responder::new(
        QpCtx {
            access: REMOTE_READ,
            ..ctx(false)
        },
        mrs(),
    );
    let e = r.packet(&with_reth(pkt(0x0A, 100, 4), 0x1000, 0x11, 4));
    assert!(matches!(
        e[0],
        Effect::Nak {
            nak: Nak::RemoteAccess,
            ..
        }
    ));
    // A different PD.
    let mut other = mrs();
    other[0].pd = PD + 1;
    let mut r = Responder::new(ctx(false), other);
    let e = r.packet(&with_reth(pkt(0x0A, 100, 4), 0x1000, 0x11, 4));
    assert!(matches!(
        e[0],
        Effect::Nak {
            nak: Nak::RemoteAccess,
            ..
        }
    ));
}

#[test]
fn write_with_immediate_consumes_a_recv_at_its_last_packet() {
    let mut r = responder(false);
    r.post_recv(recv(5, &[]));
    let first = with_reth(pkt(0x06, 100, 256), 0x1100, 0x11, 300);
    assert_eq!(r.packet(&first), vec![write(0x9_0100, 0, 256)]);
    let mut last = pkt(0x09, 101, 44);
    last.imm = Some(77);
    assert_eq!(
        r.packet(&last),
        vec![
            write(0x9_0200, 0, 44),
            Effect::Cqe {
                wr_id: 5,
                status: ST_SUCCESS,
                opcode: CQE_RECV_RDMA_WITH_IMM,
                byte_len: 300,
                imm: Some(77),
                src_qp: 0x101
            },
            Effect::Ack { psn: 101, msn: 1 },
        ]
    );
    assert!(r.rq.is_empty());
}

#[test]
fn read_of_five_packets_and_its_duplicate() {
    let mut r = responder(false);
    // 1100 bytes at MTU 256: 4 full packets and 76 bytes.
    let req = with_reth(pkt(0x0C, 100, 0), 0x1010, 0x11, 1100);
    let resp = |psn, opcode, off: u64, len, msn| Effect::ReadResponse {
        psn,
        opcode,
        addr: 0x9_0010 + off,
        len,
        msn,
    };
    let want = vec![
        resp(100, 0x0D, 0, 256, 1),
        resp(101, 0x0E, 256, 256, 1),
        resp(102, 0x0E, 512, 256, 1),
        resp(103, 0x0E, 768, 256, 1),
        resp(104, 0x0F, 1024, 76, 1),
    ];
    assert_eq!(r.packet(&req), want);
    assert_eq!((r.epsn, r.msn), (105, 1));
    let mut again = vec![Effect::Duplicate];
    again.extend(want);
    assert_eq!(r.packet(&req), again, "a duplicate READ runs again");
    assert_eq!((r.epsn, r.msn), (105, 1));
    // Zero bytes: one empty ONLY response, no key needed.
    let empty = with_reth(pkt(0x0C, 105, 0), 0, 0xDEAD, 0);
    assert_eq!(
        r.packet(&empty),
        vec![Effect::ReadResponse {
            psn: 105,
            opcode: 0x10,
            addr: 0,
            len: 0,
            msn: 2
        }]
    );
}

#[test]
fn order_and_length_violations_are_invalid_requests() {
    let bad = [
        (pkt(0x01, 100, 256), "SEND MIDDLE with no FIRST"),
        (pkt(0x08, 100, 10), "WRITE LAST with no FIRST"),
        (
            with_reth(pkt(0x06, 100, 255), 0x1000, 0x11, 600),
            "FIRST short of the MTU",
        ),
        (pkt(0x04, 100, 257), "ONLY above the MTU"),
        (pkt(0x1F, 100, 0), "no such operation"),
    ];
    for (p, why) in bad {
        let mut r = responder(false);
        r.post_recv(recv(1, &[(0x1000, 4096, 0x11)]));
        assert_eq!(
            r.packet(&p),
            vec![
                Effect::Nak {
                    psn: 100,
                    nak: Nak::InvalidRequest,
                    msn: 0
                },
                Effect::QpError
            ],
            "{why}"
        );
    }
    // A WRITE whose LAST ends short of the RETH's length.
    let mut r = responder(false);
    r.packet(&with_reth(pkt(0x06, 100, 256), 0x1000, 0x11, 600));
    assert!(matches!(
        r.packet(&pkt(0x08, 101, 10))[0],
        Effect::Nak {
            nak: Nak::InvalidRequest,
            ..
        }
    ));
}

#[test]
fn a_send_longer_than_its_recv() {
    let mut r = responder(false);
    r.post_recv(recv(3, &[(0x1000, 50, 0x11)]));
    assert_eq!(
        r.packet(&pkt(0x04, 100, 51)),
        vec![
            Effect::Cqe {
                wr_id: 3,
                status: ST_LOC_LEN_ERR,
                opcode: CQE_RECV,
                byte_len: 0,
                imm: None,
                src_qp: 0x101
            },
            Effect::Nak {
                psn: 100,
                nak: Nak::InvalidRequest,
                msn: 0
            },
            Effect::QpError,
        ]
    );
}

#[test]
fn uc_gap_drops_the_rest_of_the_message() {
    let mut r = responder(true);
    let w = |op, psn, len| pkt(op, psn, len);
    r.packet(&with_reth(w(0x26, 100, 256), 0x1000, 0x11, 600));
    // 101 lost: 102 (LAST) is dropped, nothing answered.
    assert_eq!(
        r.packet(&w(0x28, 102, 88)),
        vec![Effect::Silent(Silent::UcDropping)]
    );
    // A new ONLY at any PSN starts over; no ACK on UC.
    assert_eq!(
        r.packet(&with_reth(w(0x2A, 200, 4), 0x1400, 0x11, 4)),
        vec![write(0x9_0400, 0, 4)]
    );
    assert_eq!(r.epsn, 201);
}

#[test]
fn psn_wraps_at_24_bits() {
    let mut r = Responder::new(
        QpCtx {
            epsn: 0xFF_FFFF,
            ..ctx(false)
        },
        mrs(),
    );
    let w = |psn| with_reth(pkt(0x0A, psn, 4), 0x1000, 0x11, 4);
    assert_eq!(
        r.packet(&w(0xFF_FFFF)),
        vec![
            write(0x9_0000, 0, 4),
            Effect::Ack {
                psn: 0xFF_FFFF,
                msn: 1
            }
        ]
    );
    assert_eq!(r.epsn, 0);
    assert_eq!(
        r.packet(&w(0)),
        vec![write(0x9_0000, 0, 4), Effect::Ack { psn: 0, msn: 2 }]
    );
    // 0xFF_FFFF is now one behind: a duplicate.
    assert_eq!(r.packet(&w(0xFF_FFFF))[0], Effect::Duplicate);
}

#[test]
fn acks_may_coalesce_but_not_go_back_or_invent() {
    let req = [(1, 0), (2, 0), (3, 1), (5, 2)];
    assert_eq!(acks_cover(&req, &req), Ok(()));
    assert_eq!(acks_cover(&req, &[(3, 1), (5, 2)]), Ok(()));
    assert_eq!(acks_cover(&req, &[(5, 2)]), Ok(()));
    assert!(acks_cover(&req, &[(3, 1)]).is_err(), "5 never answered");
    assert!(
        acks_cover(&req, &[(3, 1), (2, 0), (5, 2)]).is_err(),
        "backward"
    );
    assert!(
        acks_cover(&req, &[(4, 1), (5, 2)]).is_err(),
        "PSN 4 asked for nothing"
    );
    assert!(acks_cover(&req, &[(3, 2), (5, 2)]).is_err(), "wrong MSN");
}
