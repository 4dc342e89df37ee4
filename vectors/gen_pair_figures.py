#!/usr/bin/env python3
"""Writes the two-NIC figure vectors of tests/pair_figures.rs (vectors/pair/,
without `expect`): SEND/RECV message rate and doorbell-to-completion latency.

Like gen_pair.py it writes only vectors whose file does not exist yet: to
change one, delete its file, run this again, then `rnic bless` it and
review the diff. The host layout and the RC QPs are gen_pair_rc.py's
(`Side`); this script only adds scenarios.

Conditions of every vector here, as for the goodput vectors: each host's
root complex answers reads after 100 cycles (the default latency), RC,
MTU 4096.

SEND/RECV rate. B posts every RECV first thing; A keeps W SENDs in
flight: before posting SEND n (n >= W) it waits for n - W + 1 requester
completions. With one QP W = 2, with 16 QPs (SENDs round robin) W = 32,
i.e. two per QP: `rq_fetch` holds two RECVs per QP, and a SEND may only
arrive once its RECV is surely fetched, a host read after the SEND two
before it consumed its slot (docs/pair.md, "RECVs and timing"); a sender
with a third SEND in flight on a QP may meet an empty slot (an RNR NAK
and a wait of the RNR timer before the resend: not what the rate figure
measures).

Latency. One 64-byte WRITE (QP 0), then, after its completion, one
64-byte READ (QP 1), over a link of L cycles each way.
"""
import gen_pair
import gen_pair_rc
import gen_tx
from gen_pair_rc import KEY1, VA1, Side

CHECK = gen_pair_rc.CHECK


def write(*args, **kw):
    gen_pair.vec(*args, check=CHECK, **kw)


def send_rate(name, qps, n, delay):
    """n 64-byte SENDs A to B, round robin over `qps` QPs, two in flight
    per QP (completion-driven)."""
    a, b = Side("a", 131 + qps), Side("b", 132 + qps)
    per = n // qps
    log = max(6, (per - 1).bit_length())
    for q in range(qps):
        for s in (a, b):
            qq = s.qp(q, 4096, log=log)
            qq["sq"]["log_size"] = log
    for k in range(n):
        q = k % qps
        a.wqe(q, "send", 64, src_off=0x100 * k)
        b.recv(q, [(0x100 * k, 64)])
    ha = a.build(plain=list(range(qps)))
    hb = b.build()
    # A's own program: SEND k is posted once k - W + 1 completions are in.
    w = 2 * qps
    prog = [{"wait_until": {"cycle": gen_pair_rc.START}}]
    for k in range(n):
        if k >= w:
            prog.append({"wait_cqes": {"cq": 2, "count": k - w + 1}})
        prog.append({"post_send": {"qp": k % qps, "wqes": 1}})
    ha["program"] = prog
    cq_log = max(8, (n - 1).bit_length())
    ha["cqs"] = [gen_tx.cq(0), gen_tx.cq(1), gen_tx.cq(2, log=cq_log)]
    hb["cqs"] = [gen_tx.cq(0), gen_tx.cq(1, log=cq_log)]
    write(name,
          "Message rate: %d 64-byte RC SENDs A to B, round robin over %d QP%s (MTU 4096), "
          "link %d cycles each way, both hosts answering reads after 100 cycles; B posts a "
          "64-byte RECV for each first thing, A keeps two SENDs in flight per QP (SEND k posted "
          "after k - %d + 1 completions), as many as rq_fetch prefetches RECVs per QP; "
          "tests/pair_figures.rs measures messages per cycle from the frames' timing. Every "
          "payload placed in its RECV, every RECV and every SEND completed"
          % (n, qps, "s" if qps > 1 else "", delay, w),
          ha, hb, link={"a_to_b": {"delay": delay}, "b_to_a": {"delay": delay}},
          max_cycles=2_000_000)


def latency(name, delay):
    """A 64-byte WRITE, then after its completion a 64-byte READ."""
    a, b = Side("a", 141), Side("b", 142)
    for q in range(2):
        a.qp(q, 4096)
        b.qp(q, 4096)
    a.wqe(0, "write", 64, src_off=0x40, dst_off=0x1000)
    a.wqe(1, "read", 64, src_off=0, dst_off=0, lkey=KEY1, rkey=gen_tx.KEY0, rva=gen_tx.VA + 0x2000)
    a.wqes[-1]["laddr"] = hex(VA1 + 0x3000)
    ha = a.build(pace=[0, 1])
    write(name,
          "Latency: one 64-byte RC WRITE (QP 0), then after its completion one 64-byte RC READ "
          "(QP 1), A to B over a link of %d cycles each way, both hosts answering reads after "
          "100 cycles; tests/pair_figures.rs measures doorbell to the payload's MWr (at B for "
          "the WRITE, at A for the READ) and doorbell to A's CQE" % delay,
          ha, b.build(), link={"a_to_b": {"delay": delay}, "b_to_a": {"delay": delay}})


def main():
    gen_pair_rc.gen_qp = gen_pair.qp
    send_rate("rc_send64_rate_1qp", 1, 256, 250)
    send_rate("rc_send64_rate_16qp", 16, 512, 250)
    latency("rc_latency_l100", 100)
    latency("rc_latency_l500", 500)


if __name__ == "__main__":
    main()
