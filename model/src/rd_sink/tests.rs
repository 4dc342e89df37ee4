//! Literal cases of `rd_sink` (docs/rd_sink.md), worked out by hand.

use super::*;
use crate::resp_tok::TOK_SINK_BIT;

/// A READ RESPONSE header: QP, opcode, PSN, AETH syndrome (None: no AETH),
/// header length, payload length.
fn hd(qp: u8, opcode: u8, psn: u32, syn: Option<u8>, pay: u16) -> MetaBits {
    RxMeta {
        qp,
        opcode,
        psn,
        has_aeth: syn.is_some(),
        aeth: (syn.unwrap_or(0) as u32) << 24 | 0x12,
        hdr_len: if syn.is_some() { 62 } else { 58 },
        pay_len: pay,
        ..Default::default()
    }
    .pack()
}

fn rr(qp: u8, psn: u32, len: u32, addr: u64, mtu: u8) -> RdSinkIn {
    RdSinkIn {
        rr_valid: true,
        rr_qp: qp,
        rr_psn: psn,
        rr_len: len,
        rr_addr: addr,
        rr_mtu: mtu,
        wc_ready: true,
        ..Default::default()
    }
}

fn idle() -> RdSinkIn {
    RdSinkIn {
        wc_ready: true,
        ..Default::default()
    }
}

/// Offers `meta` until taken (wc_ready high), then runs until hd_ready is
/// high again; returns the cycle of the take (from the call) and every
/// output seen from the cycle after the take on.
fn one(m: &mut RdSink, o: &mut RdSinkOut, meta: MetaBits) -> (u64, Vec<RdSinkOut>) {
    let mut c = 0;
    while !o.hd_ready {
        *o = m.tick(&idle());
        c += 1;
    }
    let take = c;
    *o = m.tick(&RdSinkIn {
        hd_valid: true,
        hd_meta: meta,
        ..idle()
    });
    let mut seen = vec![*o];
    while !o.hd_ready {
        *o = m.tick(&idle());
        seen.push(*o);
    }
    // The last command or token is on wc_* in the cycle hd_ready rises.
    (take, seen)
}

/// A command: (off, len, addr, last).
type Cmd = (u16, u16, u64, bool);

/// What a header's outputs add up to: commands, tokens, and the counter
/// pulses in order exec, done, unexp, dup, seq, bad.
fn sum(seen: &[RdSinkOut]) -> (Vec<Cmd>, Vec<TokBits>, [u32; 6]) {
    let (mut cmds, mut toks, mut ev) = (Vec::new(), Vec::new(), [0u32; 6]);
    for o in seen {
        if o.wc_valid {
            if o.wc_tok {
                toks.push(o.wc_tok_data);
            } else {
                cmds.push((o.wc_off, o.wc_len, o.wc_addr, o.wc_last));
            }
        }
        for (k, b) in [
            o.ev_exec, o.ev_done, o.ev_unexp, o.ev_dup, o.ev_seq, o.ev_bad,
        ]
        .into_iter()
        .enumerate()
        {
            ev[k] += b as u32;
        }
    }
    (cmds, toks, ev)
}

/// A READ of 600 bytes at MTU 256 (n = 3) whose PSNs wrap: FIRST, MIDDLE,
/// LAST placed at addr, +256, +512; the token after the LAST's command,
/// with the first PSN; the cycles of docs/rd_sink.md.
#[test]
fn three_responses_and_the_token() {
    let mut m = RdSink::new();
    let mut o = m.reset();
    assert!(o.hd_ready && !o.wc_valid);
    o = m.tick(&rr(5, 0xFF_FFFE, 600, 0x1000, 1));
    let mut cmds = Vec::new();
    for (k, (opc, syn, pay)) in [
        (OP_FIRST, Some(0), 256),
        (OP_MIDDLE, None, 256),
        (OP_LAST, Some(0x1F), 88),
    ]
    .into_iter()
    .enumerate()
    {
        let psn = (0xFF_FFFE + k as u32) & 0xFF_FFFF;
        let (take, seen) = one(&mut m, &mut o, hd(5, opc, psn, syn, pay));
        assert_eq!(take, 0, "hd_ready high when the header comes");
        let (c, t, ev) = sum(&seen);
        let hdr = if syn.is_some() { 62 } else { 58 };
        assert_eq!(c, vec![(hdr, pay, 0x1000 + 256 * k as u64, true)]);
        cmds.push(c);
        // Header taken at n: pulses at n+2, command on wc_* at n+3;
        // hd_ready at n+3 (n+4 after the token at n+4).
        assert!(seen[1].ev_exec && !seen[0].ev_exec);
        assert!(seen[2].wc_valid && !seen[2].wc_tok && !seen[1].wc_valid);
        if k < 2 {
            assert_eq!(seen.len(), 3, "take to hd_ready: 3 cycles");
            assert!(t.is_empty());
            assert_eq!(ev, [1, 0, 0, 0, 0, 0]);
        } else {
            assert_eq!(seen.len(), 4, "with the token: 4 cycles");
            assert!(seen[3].wc_tok);
            // The token names the READ's last PSN: 0xFF_FFFE + 2 wraps to 0.
            assert_eq!(t, vec![tok_rdone(5, 0)]);
            assert_eq!(t[0].get(TOK_SINK_BIT, 1), 1);
            assert_eq!(ev, [1, 1, 0, 0, 0, 0]);
        }
    }
    // The READ is gone: the same LAST again finds nothing.
    let (_, seen) = one(&mut m, &mut o, hd(5, OP_LAST, 0, Some(0), 88));
    let (c, t, ev) = sum(&seen);
    assert_eq!(c, vec![(62, 0, 0, true)], "the empty command");
    assert!(t.is_empty());
    assert_eq!(ev, [0, 0, 1, 0, 0, 0]);
}

/// Every drop reason leaves k where it was; the good response then goes
/// through. A zero-length READ takes one ONLY without payload.
#[test]
fn drops_then_accept() {
    let mut m = RdSink::new();
    m.reset();
    // QP 2: 5000 bytes at MTU 1024 (code 3): n = 5, first PSN 100.
    let mut o = m.tick(&rr(2, 100, 5000, 0x8000_0000, 3));
    let cases: [(MetaBits, [u32; 6]); 10] = [
        (hd(3, OP_FIRST, 100, Some(0), 1024), [0, 0, 1, 0, 0, 0]), // no READ
        (hd(2, OP_FIRST, 99, Some(0), 1024), [0, 0, 0, 1, 0, 0]),  // behind
        (
            hd(2, OP_FIRST, 100 + (1 << 23), Some(0), 1024),
            [0, 0, 0, 1, 0, 0],
        ), // 2^23 behind
        (hd(2, OP_FIRST, 101, Some(0), 1024), [0, 0, 0, 0, 1, 0]), // ahead
        (hd(2, OP_ONLY, 100, Some(0), 1024), [0, 0, 0, 0, 0, 1]),  // opcode
        (hd(2, OP_FIRST, 100, None, 1024), [0, 0, 0, 0, 0, 1]),    // no AETH
        (hd(2, OP_FIRST, 100, Some(0x60), 1024), [0, 0, 0, 0, 0, 1]), // NAK
        (hd(2, OP_FIRST, 100, Some(0x20), 1024), [0, 0, 0, 0, 0, 1]), // RNR
        (hd(2, OP_FIRST, 100, Some(0), 1020), [0, 0, 0, 0, 0, 1]), // short
        (hd(2, OP_FIRST, 100, Some(0x1F), 1024), [1, 0, 0, 0, 0, 0]), // ACK, credit 31
    ];
    for (k, (meta, want)) in cases.into_iter().enumerate() {
        let (_, seen) = one(&mut m, &mut o, meta);
        let (c, t, ev) = sum(&seen);
        assert_eq!(ev, want, "case {k}");
        assert!(t.is_empty());
        let h = RxMeta::unpack(&meta).hdr_len as u16;
        let exp = if want[0] == 1 {
            (h, 1024, 0x8000_0000, true)
        } else {
            (h, 0, 0, true)
        };
        assert_eq!(c, vec![exp], "case {k}");
    }
    // k = 1: a MIDDLE with an AETH is bad, without it good.
    let (_, s) = one(&mut m, &mut o, hd(2, OP_MIDDLE, 101, Some(0), 1024));
    assert_eq!(sum(&s).2, [0, 0, 0, 0, 0, 1]);
    let (_, s) = one(&mut m, &mut o, hd(2, OP_MIDDLE, 101, None, 1024));
    assert_eq!(sum(&s).0, vec![(58, 1024, 0x8000_0400, true)]);
    // A clear: the READ is gone.
    o = m.tick(&RdSinkIn {
        clr_valid: true,
        clr_qp: 2,
        ..idle()
    });
    let (_, s) = one(&mut m, &mut o, hd(2, OP_MIDDLE, 102, None, 1024));
    assert_eq!(sum(&s).2, [0, 0, 1, 0, 0, 0]);
    // A zero-length READ on QP 7: ONLY with no payload, empty command, token.
    o = m.tick(&rr(7, 0xABCDEF, 0, 0, 0));
    let (_, s) = one(&mut m, &mut o, hd(7, OP_ONLY, 0xABCDEF, Some(0), 0));
    let (c, t, ev) = sum(&s);
    assert_eq!(c, vec![(62, 0, 0, true)]);
    assert_eq!(t, vec![tok_rdone(7, 0xABCDEF)]);
    assert_eq!(ev, [1, 1, 0, 0, 0, 0]);
}

/// The ninth READ of a QP is refused and counted; a clear in the same cycle
/// as a push acts first; k restarts at 0 for the next READ.
#[test]
fn ring_full_and_clear() {
    let mut m = RdSink::new();
    m.reset();
    for k in 0..9u32 {
        let o = m.tick(&rr(1, 10 * k, 100, 0x100 * k as u64, 5));
        assert_eq!(o.ev_rr_full, k == 8, "push {k}");
    }
    let o = m.tick(&RdSinkIn {
        clr_valid: true,
        clr_qp: 1,
        ..rr(1, 500, 100, 0x7000, 5)
    });
    assert!(!o.ev_rr_full);
    let mut o = m.tick(&idle());
    let (_, s) = one(&mut m, &mut o, hd(1, OP_ONLY, 0, Some(0), 100));
    assert_eq!(sum(&s).2, [0, 0, 0, 1, 0, 0], "PSN 0 is behind 500");
    let (_, s) = one(&mut m, &mut o, hd(1, OP_ONLY, 500, Some(0), 100));
    let (c, t, _) = sum(&s);
    assert_eq!(c, vec![(62, 100, 0x7000, true)]);
    assert_eq!(t, vec![tok_rdone(1, 500)]);
}

/// A re-request's answers and the gap report: a READ of 3 x 256 bytes at
/// PSN 10. Its FIRST, then the LAST (PSN 12) ahead: `ev_seq` and one gap
/// pulse naming PSN 11 with the QP, at take + 2; the LAST ahead again:
/// `ev_seq` alone. The re-request's FIRST at PSN 11 (where a MIDDLE is
/// due, with its AETH) is placed at addr + 256 and closes the episode; an
/// ONLY at PSN 12 (where the LAST is due) ends the READ with its token,
/// naming PSN 12. A MIDDLE at 10 (k = 0) stays bad.
#[test]
fn rerequest_answers_and_one_gap_per_episode() {
    let mut m = RdSink::new();
    m.reset();
    let mut o = m.tick(&rr(7, 10, 768, 0x4000, 1));
    let gaps = |seen: &[RdSinkOut]| -> Vec<(usize, u8, u32)> {
        (0..seen.len())
            .filter(|&c| seen[c].gap_valid)
            .map(|c| (c, seen[c].gap_qp, seen[c].gap_psn))
            .collect()
    };
    let (_, seen) = one(&mut m, &mut o, hd(7, OP_MIDDLE, 10, None, 256));
    assert_eq!(sum(&seen).2, [0, 0, 0, 0, 0, 1], "a MIDDLE at k = 0");
    let (_, seen) = one(&mut m, &mut o, hd(7, OP_FIRST, 10, Some(0), 256));
    assert_eq!(sum(&seen).2, [1, 0, 0, 0, 0, 0]);
    let (_, seen) = one(&mut m, &mut o, hd(7, OP_LAST, 12, Some(0), 256));
    assert_eq!(sum(&seen).2, [0, 0, 0, 0, 1, 0]);
    // seen[0] is take + 1: the pulse at take + 2.
    assert_eq!(gaps(&seen), vec![(1, 7, 11)]);
    let (_, seen) = one(&mut m, &mut o, hd(7, OP_LAST, 12, Some(0), 256));
    assert_eq!(sum(&seen).2, [0, 0, 0, 0, 1, 0]);
    assert_eq!(gaps(&seen), vec![], "the episode is open");
    let (_, seen) = one(&mut m, &mut o, hd(7, OP_FIRST, 11, Some(0), 256));
    let (c, _, ev) = sum(&seen);
    assert_eq!(ev, [1, 0, 0, 0, 0, 0], "a re-request's FIRST at k = 1");
    assert_eq!(c, vec![(62, 256, 0x4100, true)]);
    let (_, seen) = one(&mut m, &mut o, hd(7, OP_ONLY, 12, Some(0), 256));
    let (c, t, ev) = sum(&seen);
    assert_eq!(ev, [1, 1, 0, 0, 0, 0], "a re-request's ONLY at k = n - 1");
    assert_eq!(c, vec![(62, 256, 0x4200, true)]);
    assert_eq!(t, vec![tok_rdone(7, 12)]);
    assert!(seen.iter().all(|o| !o.gap_valid));
}
