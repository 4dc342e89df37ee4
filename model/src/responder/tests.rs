//! Hand-worked cases of the responder model: each expected command, token
//! and acknowledgement is written out from docs/protocol.md section 7 and
//! the rules of docs/responder.md, not computed.

use super::*;

/// MR entry 1 (key 0x11): VA 0x1000..0x3000 at 0x9_0000, every right, PD 3.
/// MR entry 2 (key 0x22): VA 0x8000..0x9000 at 0x5_0000, LOCAL_WRITE, PD 3.
#[derive(Clone, Copy, Default)]
struct MrE {
    valid: bool,
    key: u32,
    va: u64,
    len: u64,
    pbase: u64,
    access: u8,
    pd: u16,
}

fn mrs() -> [MrE; MRS] {
    let mut t = [MrE::default(); MRS];
    t[1] = MrE {
        valid: true,
        key: 0x11,
        va: 0x1000,
        len: 0x2000,
        pbase: 0x9_0000,
        access: 7,
        pd: 3,
    };
    t[2] = MrE {
        valid: true,
        key: 0x22,
        va: 0x8000,
        len: 0x1000,
        pbase: 0x5_0000,
        access: 1,
        pd: 3,
    };
    t
}

fn recv(wr_id: u64, sges: &[(u64, u32, u32)]) -> RqeBits {
    let mut b = [0u8; 128];
    b[..8].copy_from_slice(&wr_id.to_le_bytes());
    b[8] = sges.len() as u8;
    for (k, &(va, len, lkey)) in sges.iter().enumerate() {
        let at = 0x10 + 16 * k;
        b[at..at + 8].copy_from_slice(&va.to_le_bytes());
        b[at + 8..at + 12].copy_from_slice(&len.to_le_bytes());
        b[at + 12..at + 16].copy_from_slice(&lkey.to_le_bytes());
    }
    RqeBits(b)
}

/// What one packet caused.
#[derive(Debug, Default, PartialEq)]
struct Got {
    /// (offset, length, address, last)
    segs: Vec<(u16, u16, u64, bool)>,
    toks: Vec<Tok>,
    /// (PSN, syndrome, MSN)
    acks: Vec<(u32, u8, u32)>,
    errs: u32,
    pops: u32,
    /// Cycles from the header's take to hd_ready again.
    cycles: u64,
}

/// QP 2: RC unless `uc`, RTS, MTU 256, PD 3, remote QPN 0x101, RQ CQ 1,
/// RNR timer 14, REMOTE_WRITE and REMOTE_READ.
struct Bench {
    r: Responder,
    uc: bool,
    state: u8,
    rq: Vec<RqeBits>,
    mrs: [MrE; MRS],
    o: ResponderOut,
}

impl Bench {
    fn new(uc: bool, epsn: u32) -> Bench {
        let mut r = Responder::new();
        let o = r.reset();
        let mut b = Bench {
            r,
            uc,
            state: state::RTS,
            rq: Vec::new(),
            mrs: mrs(),
            o,
        };
        b.o = b.r.tick(&ResponderIn {
            epsn_set_valid: true,
            epsn_set_qp: 2,
            epsn_set_psn: epsn,
            ..Default::default()
        });
        b.o = b.r.tick(&ResponderIn::default());
        b
    }

    fn packet(&mut self, m: RxMeta) -> Got {
        let mut g = Got::default();
        let (mut ctx, mut mr, mut rqe) = (false, None::<usize>, false);
        let mut taken = false;
        for cycle in 0..200u64 {
            let o = self.o;
            let mut i = ResponderIn {
                hd_valid: !taken,
                hd_meta: m.pack(),
                wc_ready: true,
                ..Default::default()
            };
            if ctx {
                i.ctx_state = self.state;
                i.ctx_uc = self.uc;
                i.ctx_mtu = 1;
                i.ctx_pd = 3;
                i.ctx_rq_cq = 1;
                i.ctx_rnr_timer = 14;
                i.ctx_max_rd = 5;
                i.ctx_access = 6;
                i.ctx_remote_qpn = 0x101;
            }
            if let Some(e) = mr {
                let x = self.mrs[e];
                i.mr_valid = x.valid;
                i.mr_key = x.key;
                i.mr_va = x.va;
                i.mr_len = x.len;
                i.mr_pbase = x.pbase;
                i.mr_access = x.access;
                i.mr_pd = x.pd;
            }
            if rqe {
                i.rqe_present = !self.rq.is_empty();
                i.rqe_data = self.rq.first().copied().unwrap_or_default();
            }
            ctx = o.ctx_rd_valid;
            mr = o.mr_rd_valid.then_some(o.mr_rd_idx as usize);
            rqe = o.rqe_rd_valid;
            if o.wc_valid {
                if o.wc_tok {
                    g.toks.push(Tok::unpack(&o.wc_tok_data));
                } else {
                    g.segs.push((o.wc_off, o.wc_len, o.wc_addr, o.wc_last));
                }
            }
            if o.ack_valid {
                g.acks.push((o.ack_psn, o.ack_syndrome, o.ack_msn));
            }
            g.errs += o.err_valid as u32;
            if o.rqe_pop_valid {
                g.pops += 1;
                self.rq.remove(0);
            }
            if taken && o.hd_ready {
                g.cycles = cycle;
                // One idle cycle: this cycle's pulses are not seen again.
                self.o = self.r.tick(&ResponderIn {
                    wc_ready: true,
                    ..Default::default()
                });
                return g;
            }
            if o.hd_ready && !taken {
                taken = true;
            }
            self.o = self.r.tick(&i);
        }
        panic!("packet never finished");
    }
}

fn meta(opcode: u8, psn: u32, len: u16) -> RxMeta {
    RxMeta {
        qp: 2,
        opcode,
        psn,
        hdr_len: 58,
        pay_len: len,
        ..Default::default()
    }
}

fn cqe(wr_id: u64, status: u8, opcode: u8, byte_len: u32, imm: Option<u32>) -> Tok {
    Tok::Cqe(RecvCqe {
        qp: 2,
        cq: 1,
        wr_id,
        status,
        opcode,
        byte_len,
        imm: imm.unwrap_or(0),
        imm_present: imm.is_some(),
        src_qp: 0x101,
    })
}

/// SEND ONLY of 100 bytes into 64 bytes at VA 0x8010 (MR 2, 0x5_0010) and
/// 64 at 0x1000 (MR 1, 0x9_0000): two segments, the completion, the ACK.
/// 13 cycles from the take to the next ready: take, two read cycles, three
/// per entry checked, a command per segment, the token, the finish.
#[test]
fn send_only_two_entries() {
    let mut b = Bench::new(false, 100);
    b.rq.push(recv(7, &[(0x8010, 64, 0x22), (0x1000, 64, 0x11)]));
    let g = b.packet(meta(0x04, 100, 100));
    assert_eq!(
        g.segs,
        vec![(58, 64, 0x5_0010, false), (58 + 64, 36, 0x9_0000, true)]
    );
    assert_eq!(g.toks, vec![cqe(7, 0, 128, 100, None)]);
    assert_eq!(g.acks, vec![(100, SYN_ACK, 1)]);
    assert_eq!((g.errs, g.pops), (0, 1));
    assert_eq!(g.cycles, 13);
    // The same PSN again: a duplicate, ACK of ePSN - 1 = 100 with MSN 1.
    let g = b.packet(meta(0x04, 100, 100));
    assert_eq!(g.segs, vec![(58, 0, 0, true)]);
    assert_eq!(g.acks, vec![(100, SYN_ACK, 1)]);
    assert!(g.toks.is_empty());
}

/// A SEND FIRST of 256 (one MTU) then LAST of 10 into one 300-byte entry:
/// the second packet continues at offset 256 of the entry.
#[test]
fn send_first_last_continues_the_entry() {
    let mut b = Bench::new(false, 5);
    b.rq.push(recv(9, &[(0x1100, 300, 0x11)]));
    let g = b.packet(meta(0x00, 5, 256));
    assert_eq!(g.segs, vec![(58, 256, 0x9_0100, true)]);
    assert!(g.toks.is_empty() && g.acks.is_empty());
    assert_eq!(g.pops, 1);
    let g = b.packet(meta(0x03, 6, 10));
    assert_eq!(g.segs, vec![(58, 10, 0x9_0200, true)]);
    assert_eq!(g.toks, vec![cqe(9, 0, 128, 266, Some(0))]);
    assert_eq!(g.acks, vec![(6, SYN_ACK, 1)]);
}

/// An entry whose lkey does not grant LOCAL_WRITE over its range: no
/// write, completion status 4, remote operational NAK, QP to ERROR.
#[test]
fn bad_entry_completes_with_status_4() {
    let mut b = Bench::new(false, 0);
    b.rq.push(recv(3, &[(0x8FF0, 64, 0x22)])); // runs past MR 2's end
    let g = b.packet(meta(0x04, 0, 20));
    assert_eq!(g.segs, vec![(58, 0, 0, true)]);
    assert_eq!(g.toks, vec![cqe(3, 4, 128, 0, None)]);
    assert_eq!(g.acks, vec![(0, 0x63, 0)]);
    assert_eq!((g.errs, g.pops), (1, 1));
}

/// Ahead twice: one sequence NAK carrying ePSN, then silence; the packet at
/// ePSN clears the episode. No RECV: RNR NAK with the timer, ePSN stays.
#[test]
fn sequence_nak_once_and_rnr() {
    let mut b = Bench::new(false, 0xFF_FFFF);
    let g = b.packet(meta(0x04, 3, 0));
    assert_eq!(g.acks, vec![(0xFF_FFFF, 0x60, 0)]);
    let g = b.packet(meta(0x04, 4, 0));
    assert!(g.acks.is_empty());
    let g = b.packet(meta(0x04, 0xFF_FFFF, 0));
    assert_eq!(g.acks, vec![(0xFF_FFFF, 0x20 | 14, 0)]);
    assert_eq!(g.errs, 0);
    b.rq.push(recv(1, &[]));
    let g = b.packet(meta(0x04, 0xFF_FFFF, 0));
    assert_eq!(g.toks, vec![cqe(1, 0, 128, 0, None)]);
    assert_eq!(g.acks, vec![(0xFF_FFFF, SYN_ACK, 1)]);
}

/// WRITE ONLY within MR 1, then one with a key the table does not hold,
/// then a READ of 600 bytes at MTU 256 (three responses: ePSN += 3).
#[test]
fn write_and_read() {
    let mut b = Bench::new(false, 10);
    let mut m = meta(0x0A, 10, 16);
    m.has_reth = true;
    m.va = 0x1010;
    m.rkey = 0x11;
    m.dma_len = 16;
    let g = b.packet(m);
    assert_eq!(g.segs, vec![(58, 16, 0x9_0010, true)]);
    assert_eq!(g.acks, vec![(10, SYN_ACK, 1)]);
    let g = b.cycles_of_read();
    assert_eq!(g.toks.len(), 1);
    assert_eq!(
        g.toks[0],
        Tok::Read(ReadJob {
            qp: 2,
            psn: 11,
            addr: 0x9_0100,
            len: 600,
            msn: 2,
            mtu: 1,
            max_rd: 5
        })
    );
    let mut m = meta(0x0A, 14, 16);
    m.has_reth = true;
    m.va = 0x1010;
    m.rkey = 0x31;
    m.dma_len = 16;
    let g = b.packet(m);
    assert_eq!(g.segs, vec![(58, 0, 0, true)]);
    assert_eq!(g.acks, vec![(14, 0x62, 2)]);
    assert_eq!(g.errs, 1);
}

impl Bench {
    fn cycles_of_read(&mut self) -> Got {
        let mut m = meta(0x0C, 11, 0);
        m.has_reth = true;
        m.va = 0x1100;
        m.rkey = 0x11;
        m.dma_len = 600;
        self.packet(m)
    }
}

/// UC: a MIDDLE after a lost FIRST is dropped, and so is the rest of the
/// message; a new ONLY is executed and ePSN follows it. No ACKs.
#[test]
fn uc_drops_the_rest_of_a_broken_message() {
    let mut b = Bench::new(true, 50);
    b.rq.push(recv(4, &[(0x1000, 64, 0x11)]));
    let g = b.packet(meta(0x21, 51, 256));
    assert_eq!(g.segs, vec![(58, 0, 0, true)]);
    let g = b.packet(meta(0x22, 52, 8));
    assert_eq!(g.segs, vec![(58, 0, 0, true)]);
    let g = b.packet(meta(0x24, 90, 8));
    assert_eq!(g.segs, vec![(58, 8, 0x9_0000, true)]);
    assert_eq!(g.toks, vec![cqe(4, 0, 128, 8, None)]);
    assert!(g.acks.is_empty());
}
