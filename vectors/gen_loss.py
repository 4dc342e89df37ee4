#!/usr/bin/env python3
"""Writes the faulty-link pair vectors in vectors/loss/ (without `expect`).

Like gen_pair.py it writes only vectors whose file does not exist yet: to
change a scenario, delete its file, run this again, then `rnic bless` the
new files (bless refuses a vector whose independent checks fail) and review
the diff. The link faults are docs/pair.md, "Link faults"; the hosts are
gen_pair_rc.py's (`Side`: RC QPs, MR 1 the receive region, RECVs posted
first, the sender starting at cycle 400 after configuration).

A lost request is recovered by go-back-N (docs/retransmission.md): the
responder NAKs the first packet after a gap with a PSN sequence error
once per episode, and the requester goes back to the NAKed PSN; with a
local ACK timeout on a QP (`timeout`, 4.096 us x 2^timeout), a loss no
NAK reports (the last packet, a lost NAK or ACK) is resent when the timer
expires, and `retry_cnt` rewinds without progress end in status 12. The
checks judge each run from what was on the wire: the responder's
reference is fed the frames as they arrived, the requester's completions
come from the ACKs that arrived (and a timer exhaustion from the requests
that left, scenario/timer_exhaust.rs), the go-back-N check
(scenario/gbn_check.rs) holds every rewind to its cause, and the link
check applies the vector's faults to the frames as sent. The vectors
written before retransmission existed keep their timers off: a loss no
NAK can recover stalls its QP, and such a run ends by its quiet window
(docs/pair.md).

A's QP n sends with PSNs from 100 n + 7; B's QP n is its peer (DestQP n).
"""
import copy
import json
import os

import gen_pair
import gen_pair_rc
import gen_tx
from gen_pair_rc import KEY1, VA1, Side

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loss")

CHECK = ("both NICs' model and RTL in lockstep; the link check: the frames each NIC received "
         "are exactly those the other sent with the vector's faults applied by the check itself "
         "(lost frames absent, duplicates twice, held frames after the next one, corrupted "
         "frames with the byte inverted and dropped by the receiver's reference classifier), in "
         "order, no earlier than the delay allows; the receiver's effects predicted by "
         "resp_reference from the frames that arrived (host writes, final MR contents, RECV "
         "CQEs, every ACK/NAK frame byte for byte and as a coalescing of the required "
         "responses); the requester's RC completions only as the ACKs that arrived cover them; "
         "each NIC's frames byte for byte against its WQEs, first sends and resends alike; "
         "go-back-N order (every rewind to the PSN its cause names, within the reaction "
         "window; every NAK served); retries running out predicted from the NAKs and, for the "
         "local ACK timer, from the requests that left; receive counters (ICRC drops "
         "included) against the frames that arrived, classified by their bytes; PCIe rules")

OP_ACK = 0x11
OP_SEND_ONLY = 0x04


def vec(name, desc, a, b, link, max_cycles=200_000):
    v = {"format": 1, "kind": "system", "name": name, "description": desc,
         "checked_against": CHECK, "a": a, "b": b, "link": link, "max_cycles": max_cycles}
    path = os.path.join(HERE, name + ".json")
    if os.path.exists(path):
        return
    os.makedirs(HERE, exist_ok=True)
    with open(path, "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")


def link(a_to_b=(), b_to_a=(), delay=100):
    return {"a_to_b": {"delay": delay, "faults": list(a_to_b)},
            "b_to_a": {"delay": delay, "faults": list(b_to_a)}}


def pair(seed, qps=1, mtu=1024, timeout=None, retry_cnt=None):
    """A's QPs take the local ACK timeout code and retry_cnt given."""
    a, b = Side("a", seed), Side("b", seed + 1)
    for n in range(qps):
        q = a.qp(n, mtu)
        if timeout is not None:
            q["timeout"] = timeout
        if retry_cnt is not None:
            q["retry_cnt"] = retry_cnt
        b.qp(n, mtu)
    return a, b


# The local ACK timeout of the recovering vectors: code 2, 4,096 cycles
# (16.4 us), well above a message's round trip here (two link delays of
# 100, host reads of a few hundred cycles) so no timer expires while an
# ACK is on its way.
TIMEOUT = 2


# The cycle of rnr_exhaust_meets_setup's setup_qp step.
RNR_SETUP_AT = 2003


def first(qp, psn, n=1):
    """The first n frames of (DestQP, PSN): a send and n - 1 resends."""
    return {"qp": qp, "psn": psn, "first": n}


def main():
    gen_pair_rc.gen_qp = gen_pair.qp

    # Drop the middle of a WRITE.
    a, b = pair(31, qps=2)
    a.wqe(0, "write", 4096, src_off=0x1003, dst_off=0x1001)
    a.wqe(0, "write", 1000, src_off=0x9005, dst_off=0x9003)
    a.wqe(1, "write", 3000, src_off=0x2_0007, dst_off=0x2_0005)
    vec("drop_write_middle",
        "A WRITEs 4096 bytes (MTU 1024: PSNs 7..10) then 1000 bytes (PSN 11) on QP 0, and 3000 "
        "bytes on QP 1; the link A to B drops every frame of QP 0's PSN 8 (the first MIDDLE): B"
        " places the FIRST, NAKs PSN 8 with a PSN sequence error once and drops the rest; A "
        "goes back to PSN 8 and resends from the middle of the WRITE (MIDDLE 8, 9, LAST 10, "
        "ONLY 11), but the link drops PSN 8 again and B, still in the same episode, NAKs no "
        "more; with no local ACK timeout set QP 0 completes neither WQE, QP 1's WRITE completes",
        a.build(plain=[0, 1]), b.build(),
        link([{"drop": {"qp": 0, "psn": 8}}]))

    # Drop an ACK: a later one covers it.
    a, b = pair(33)
    for k in range(6):
        a.wqe(0, "write", 2048, src_off=0x1000 * k + 1, dst_off=0x1000 * k + 3)
    vec("drop_ack",
        "A posts six 2048-byte WRITEs at once on QP 0 (two packets each, AckReq on the LAST); "
        "the link B to A drops the first ACK (opcode 0x11, first 1): a later ACK, cumulative, "
        "covers its PSNs, so A completes all six WQEs anyway, in order; B wrote every payload",
        a.build(plain=[0]), b.build(),
        link(b_to_a=[{"drop": {"opcode": OP_ACK, "first": 1}}]))

    # Corrupt a request: B drops it on its ICRC.
    a, b = pair(35)
    a.wqe(0, "write", 700, src_off=0x101, dst_off=0x203)
    a.wqe(0, "write", 500, src_off=0x1101, dst_off=0x1203)
    vec("corrupt_request",
        "A WRITEs 700 bytes (PSN 7) then 500 bytes (PSN 8) on QP 0; the link A to B inverts "
        "byte 100 (inside the payload) of PSN 8: B's rx_parser drops it on its ICRC (counted "
        "in drop_icrc, as the testbench's classifier says from the bytes), nothing is written "
        "for it and no NAK follows (nothing arrives after it); A completes the first WRITE "
        "only",
        a.build(plain=[0]), b.build(),
        link([{"corrupt": {"qp": 0, "psn": 8, "byte": 100}}]))

    # Duplicate a SEND: B treats the copy as a duplicate.
    a, b = pair(37)
    a.wqe(0, "send", 600, src_off=0x301)
    a.wqe(0, "send", 200, src_off=0x701)
    for k in range(3):
        b.recv(0, [(0x1000 * k, 1024)])
    vec("duplicate_request",
        "A SENDs 600 bytes (PSN 7) and 200 bytes (PSN 8) on QP 0 to B, which posted three "
        "RECVs; the link A to B delivers PSN 7 twice, back to back: B executes it once "
        "(the copy is a duplicate, PSN below its ePSN: acknowledged again, no second write, no "
        "RECV consumed), the 200-byte SEND fills the second RECV, the third RECV stays posted; "
        "A completes both SENDs",
        a.build(plain=[0]), b.build(),
        link([{"duplicate": {"qp": 0, "psn": 7}}]))

    # Reorder two requests.
    a, b = pair(39)
    for k in range(3):
        a.wqe(0, "write", 300, src_off=0x400 * k + 5, dst_off=0x400 * k + 9)
    vec("reorder_requests",
        "A WRITEs 300 bytes three times on QP 0 (PSNs 7, 8, 9); the link A to B holds PSN 7 and"
        " delivers it right after PSN 8: B drops PSN 8 with a PSN sequence error NAK (PSN 7), "
        "takes PSN 7 in sequence, writes and ACKs it, then drops PSN 9 (expected 8) with a "
        "second sequence NAK (PSN 8, a new episode); A goes back to PSN 8 and resends 8 and 9, "
        "which B executes: all three WRITEs are written and complete",
        a.build(plain=[0]), b.build(),
        link([{"reorder": {"qp": 0, "psn": 7}}]))

    # The link goes down for a while.
    a, b = pair(41, qps=2)
    for k in range(4):
        a.wqe(0, "write", 4096, src_off=0x1_0000 * k + 1, dst_off=0x1_0000 * k + 1)
    a.wqe(1, "write", 100, src_off=0x8_0001, dst_off=0x8_0001)
    vec("link_down",
        "A WRITEs four 4096-byte messages on QP 0 (16 packets) and 100 bytes on QP 1, back to "
        "back, over a link of 20 cycles each way; the link A to B is down in cycles 900..999, "
        "in the middle of them: every frame on the wire then (from its first beat to 20 cycles "
        "after its last) is lost; B NAKs the first packet after the gap once (its ePSN 13) and "
        "drops the rest of QP 0's; A goes back to PSN 13, in the middle of the second WRITE "
        "(MIDDLE 13, LAST 14, then the last two messages), and all five WQEs complete",
        a.build(plain=[0, 1]), b.build(),
        link([{"down": {"from": 900, "cycles": 100}}], delay=20))

    # Seeded random loss of ACKs, single and in bursts.
    a, b = pair(43)
    for k in range(24):
        a.wqe(0, "write", 256, src_off=0x200 * k + 3, dst_off=0x200 * k + 7)
    vec("random_ack_loss",
        "A posts 24 WRITEs of 256 bytes at once on QP 0; the link B to A loses ACKs at random, "
        "seeded: each with probability 0.2, and bursts of 2 starting with probability 0.1; A "
        "completes a WQE only when an ACK that arrived covers it (a later cumulative ACK "
        "covers lost ones: 17 of 24 ACKs arrive, the last among them, and all 24 WQEs "
        "complete); B wrote all 24",
        a.build(plain=[0]), b.build(),
        link(b_to_a=[{"drop": {"per_million": 200000, "seed": 7}},
                     {"burst": {"per_million": 100000, "seed": 9, "count": 2}}]))

    # Drop the first SEND of a QP by opcode.
    a, b = pair(45)
    a.wqe(0, "send", 100, src_off=0x101)
    a.wqe(0, "send", 100, src_off=0x201)
    for k in range(2):
        b.recv(0, [(0x1000 * k, 512)])
    vec("drop_first_send",
        "A SENDs 100 bytes twice on QP 0 (SEND ONLY, PSNs 7 and 8); the link A to B drops the "
        "first SEND ONLY (opcode 0x04, first 1): B drops PSN 8 with a PSN sequence error NAK "
        "(PSN 7, its ePSN) and consumes no RECV; A goes back to PSN 7 (go-back-N: both WQEs "
        "read again from the send queue, both SENDs resent), B executes them in order into its "
        "two RECVs and A completes both SENDs",
        a.build(plain=[0]), b.build(),
        link([{"drop": {"opcode": OP_SEND_ONLY, "first": 1}}]))

    # READ: a response lost, a request duplicated.
    def read_then_write(seed):
        a, b = pair(seed)
        a.wqe(0, "read", 4000, src_off=0, lkey=KEY1, rkey=gen_tx.KEY0, rva=gen_tx.VA + 0x100)
        a.wqes[-1]["laddr"] = hex(VA1 + 0x2_0003)
        a.wqe(0, "write", 500, src_off=0x9_0000, dst_off=0x9_0001)
        return a, b

    a, b = read_then_write(201)
    vec("drop_read_response",
        "A READs 4000 bytes from B (PSNs 7..10, four responses of MTU 1024) then WRITEs 500 "
        "bytes (PSN 11) on QP 0; the link B to A drops every frame of PSN 8 (a response): A's "
        "rd_sink places the FIRST, drops the two after the gap as out of sequence and reports "
        "the gap, and A asks again for the rest of the READ from PSN 8 (a READ REQUEST for the "
        "last 3000 bytes, then the WRITE again); B answers it, but the link drops its new "
        "response of PSN 8 too and no local ACK timeout is set, so the READ never completes and"
        " the WRITE cannot complete before it: no CQE at A",
        a.build(plain=[0]), b.build(),
        link(b_to_a=[{"drop": {"qp": 0, "psn": 8}}]))

    a, b = read_then_write(203)
    vec("duplicate_read_request",
        "A READs 4000 bytes from B then WRITEs 500 bytes on QP 0; the link A to B delivers the "
        "READ request (frame 0) twice: B executes the copy as a duplicate READ (resp_dup 1, "
        "read_jobs 2) and answers it again from its memory; A places the first four responses "
        "and completes the READ, drops the four repeated ones as unexpected (rdr_unexp 4), "
        "completes the WRITE",
        a.build(plain=[0]), b.build(),
        link([{"duplicate": {"index": 0}}]))

    a, b = read_then_write(205)
    vec("duplicate_read_response",
        "A READs 4000 bytes from B (PSNs 7..10, four responses of MTU 1024) then WRITEs 500 "
        "bytes (PSN 11) on QP 0; the link B to A delivers the MIDDLE response of PSN 8 twice, "
        "back to back: A's rd_sink places it once and drops the copy as a duplicate (its PSN "
        "behind the next one due: rdr_dup 1), takes PSNs 9 and 10, and both WQEs complete",
        a.build(plain=[0]), b.build(),
        link(b_to_a=[{"duplicate": {"qp": 0, "psn": 8}}]))

    # An ACK corrupted: A drops it on its ICRC, a later ACK covers it.
    a, b = pair(215)
    for k in range(4):
        a.wqe(0, "write", 2048, src_off=0x1000 * k + 1, dst_off=0x1000 * k + 3)
    vec("corrupt_ack",
        "A posts four 2048-byte WRITEs at once on QP 0; the link B to A inverts byte 50 (in "
        "the BTH) of the first ACK: A drops it on its ICRC (drop_icrc 1, 3 ACKs taken) and "
        "completes all four WQEs on the later cumulative ACKs",
        a.build(plain=[0]), b.build(),
        link(b_to_a=[{"corrupt": {"index": 0, "byte": 50}}]))

    # Every random fault, both ways, while both NICs send.
    a, b = pair(219, qps=2)
    for k in range(10):
        a.wqe(k % 2, "write", 1500, src_off=0x1000 * k + 1, dst_off=0x1000 * k + 3)
        b.wqe(k % 2, "write", 900, src_off=0x1000 * k + 5, dst_off=0x8_0000 + 0x1000 * k + 3)

    def rnd(s):
        return [{"drop": {"per_million": 50000, "seed": s}},
                {"corrupt": {"per_million": 50000, "seed": s + 1, "byte": 61}},
                {"duplicate": {"per_million": 50000, "seed": s + 2}},
                {"reorder": {"per_million": 50000, "seed": s + 3}}]
    vec("random_both_ways",
        "A and B each WRITE ten messages to the other on two QPs at once (requests and ACKs "
        "share each direction); both directions drop, corrupt (byte 61), duplicate and "
        "reorder frames at random, 5% each, seeded (these seeds hit every kind in both "
        "directions: the pcapng capture comments each): whatever arrived is what the link "
        "check predicts from the seeds, and every effect (writes, sequence NAKs both ways, "
        "stalled QPs, ICRC drops, duplicates) is what the references work out from the frames "
        "that arrived",
        a.build(plain=[0, 1]), b.build(plain=[0, 1]),
        link(rnd(9), rnd(185)))


    recovery_vectors()
    drain_vectors()
    mixed_exhaust_vector()


def recovery_vectors():
    """One drop of each packet kind in each position, recovered by a NAK
    or by the timer; retries running out; RNR waits; random loss."""
    for op in ("send", "write"):
        # Per QP n: a 3000-byte message (PSNs 100 n + 7..9) then 100 bytes
        # (100 n + 10); QP n loses the first send of its n-th packet.
        a, b = pair(301 if op == "send" else 303, qps=4, timeout=TIMEOUT)
        for n in range(4):
            a.wqe(n, op, 3000, src_off=0x1_0000 * n + 0x101, dst_off=0x1_0000 * n + 0x103)
            a.wqe(n, op, 100, src_off=0x1_0000 * n + 0x8101, dst_off=0x1_0000 * n + 0x8103)
            if op == "send":
                b.recv(n, [(0x1_0000 * n, 4096)])
                b.recv(n, [(0x1_0000 * n + 0x8000, 512)])
        what = "SENDs into B's two RECVs" if op == "send" else "WRITEs"
        vec(f"drop_once_{op}",
            f"On each of four QPs A {what} 3000 bytes (MTU 1024: FIRST, MIDDLE, LAST) then 100 "
            f"bytes (ONLY), posted at once, local ACK timeout {TIMEOUT} (4,096 cycles); the link "
            "A to B loses the first send of one packet per QP: QP 0 the FIRST, QP 1 the MIDDLE, "
            "QP 2 the LAST, QP 3 the ONLY. On QPs 0..2 the next packet arrives out of sequence, "
            "B NAKs the lost PSN once (sequence error) and A goes back to it; QP 3's ONLY is the "
            "last packet, nothing reports it and A's timer resends it. Every message is "
            "delivered once, in order, and both WQEs of every QP complete",
            a.build(plain=[0, 1, 2, 3]), b.build(),
            link([{"drop": first(n, 100 * n + 7 + n)} for n in range(4)]))

    # READ: the request, and each response position.
    a, b = pair(305, qps=5, timeout=TIMEOUT)
    reads = [100, 4000, 4000, 4000, 500]
    for n, ln in enumerate(reads):
        a.wqe(n, "read", ln, src_off=0, lkey=KEY1, rkey=gen_tx.KEY0,
              rva=gen_tx.VA + 0x1000 * n + 0x100)
        a.wqes[-1]["laddr"] = hex(VA1 + 0x2_0000 * n + 0x3)
        if n == 0:
            a.wqe(0, "write", 100, src_off=0x9_0000, dst_off=0x9_0001)
    vec("drop_once_read",
        f"A READs from B on five QPs, local ACK timeout {TIMEOUT}; one frame of each is lost "
        "once. QP 0: the READ REQUEST (PSN 7, 100 bytes), a WRITE (PSN 8) behind it: B NAKs "
        "PSN 7 and A sends both again. QPs 1..3 READ 4000 bytes (responses FIRST, MIDDLE, "
        "MIDDLE, LAST): the link B to A loses QP 1's FIRST (PSN 107) and QP 2's MIDDLE (PSN "
        "208): rd_sink sees the next response ahead and A asks again from the first missing "
        "response (QP 1: the whole READ again; QP 2: a new READ REQUEST for the rest, PSN "
        "208, VA and length moved on by one MTU); "
        "QP 3 loses its LAST (PSN 310) and QP 4 its only response (PSN 407, 500 bytes): "
        "nothing follows them, and A's timer asks again from the oldest unacknowledged PSN: "
        "every response taken acknowledges its own PSN, so QP 3 asks only for the rest (a "
        "READ REQUEST PSN 310, VA and length moved on by three MTUs: 928 bytes, answered by "
        "one ONLY) and QP 4 for its whole READ (PSN 407). Every READ's data is placed once "
        "and every WQE completes",
        a.build(plain=[0, 1, 2, 3, 4]), b.build(),
        link(b_to_a=[{"drop": first(n, p)} for n, p in ((1, 107), (2, 208), (3, 310),
                                                        (4, 407))],
             a_to_b=[{"drop": first(0, 7)}]))

    # The LAST response lost, and the next READ's response shows the gap:
    # the rest is one packet, so it comes back as an ONLY where a LAST is due.
    a, b = pair(307, timeout=TIMEOUT)
    for k, ln in enumerate((2000, 500)):
        a.wqe(0, "read", ln, src_off=0, lkey=KEY1, rkey=gen_tx.KEY0,
              rva=gen_tx.VA + 0x1000 * k + 0x100)
        a.wqes[-1]["laddr"] = hex(VA1 + 0x2_0000 * k + 0x3)
    vec("drop_read_last_rest_only",
        f"A READs 2000 bytes (MTU 1024: responses FIRST PSN 7, LAST PSN 8) then 500 bytes "
        f"(ONLY, PSN 9) on QP 0, posted at once, local ACK timeout {TIMEOUT}; the link B to A "
        "loses the first READ's LAST once. The second READ's ONLY (PSN 9) shows rd_sink the "
        "gap, and A asks again for the rest of the first READ (READ REQUEST PSN 8, VA and "
        "length moved on by one MTU: 976 bytes), which B answers with one READ RESPONSE ONLY "
        "(PSN 8): rd_sink takes an ONLY where a LAST was due. Both READs' data is placed once "
        "and both WQEs complete, in order",
        a.build(plain=[0]), b.build(),
        link(b_to_a=[{"drop": first(0, 8)}]))

    # An ACK and a NAK lost.
    a, b = pair(307, qps=2, timeout=TIMEOUT)
    a.wqe(0, "write", 200, src_off=0x101, dst_off=0x103)
    a.wqe(0, "write", 200, src_off=0x501, dst_off=0x503)
    a.wqe(1, "write", 200, src_off=0x1101, dst_off=0x1103)
    a.wqe(1, "write", 200, src_off=0x1501, dst_off=0x1503)
    vec("drop_once_ack_nak",
        f"A WRITEs 200 bytes twice on QPs 0 and 1, local ACK timeout {TIMEOUT}. QP 0: the link "
        "B to A loses the ACK of the last PSN (8): nothing else covers it, A's timer resends "
        "PSN 8, B acknowledges the duplicate again (no second write) and A completes both. "
        "QP 1: the link A to B loses PSN 107 once and B to A loses the sequence NAK B sends "
        "for it (its PSN is 107); A's timer resends from 107 and both complete",
        a.build(plain=[0, 1]), b.build(),
        link(a_to_b=[{"drop": first(1, 107)}],
             b_to_a=[{"drop": first(0, 8)}, {"drop": first(1, 107)}]))

    # Retries running out on the timer: retry_cnt 0 and 7.
    a, b = pair(309, qps=1, timeout=TIMEOUT, retry_cnt=0)
    a.wqe(0, "write", 100, src_off=0x101, dst_off=0x103)
    a.wqe(0, "write", 100, src_off=0x501, dst_off=0x503)
    vec("timeout_retry0",
        f"A WRITEs 100 bytes twice on QP 0 (PSNs 7, 8), local ACK timeout {TIMEOUT} and "
        "retry_cnt 0; the link A to B loses every frame of PSN 8: the first expiry of A's timer "
        "finds no retry left, the second WQE completes with status 12 (retry exceeded, "
        "byte_len 0) and QP 0 goes to ERROR; the first completes, B wrote it only",
        a.build(plain=[0]), b.build(),
        link([{"drop": {"qp": 0, "psn": 8}}]))

    a, b = pair(311, qps=2, timeout=TIMEOUT, retry_cnt=7)
    for n in range(2):
        for k in range(3):
            a.wqe(n, "write", 100, src_off=0x1000 * (3 * n + k) + 1,
                  dst_off=0x1000 * (3 * n + k) + 3)
    vec("timeout_retry7",
        f"A WRITEs 100 bytes three times on QPs 0 and 1 (PSNs 7..9, 107..109), local ACK "
        f"timeout {TIMEOUT}, retry_cnt 7. QP 0: the link A to B loses the first 7 sends of PSN "
        "8: B NAKs PSN 8 once (for PSN 9), then A's timer resends 6 times; the 8th send "
        "arrives, within the 7 retries, and all three WQEs complete. QP 1: every frame of PSN "
        "108 is lost: the NAK and 6 timer rewinds use the 7 retries, the next expiry ends the "
        "QP: the WQE of PSN 108 completes with 12, the one after it flushed (5), QP 1 in ERROR",
        a.build(plain=[0, 1]), b.build(),
        link([{"drop": first(0, 8, 7)}, {"drop": {"qp": 1, "psn": 108}}]),
        max_cycles=400_000)

    # Retries run out in the middle of a long message: the QP goes to
    # ERROR with most of the WRITE unsent, and sends no more of it.
    a, b = pair(341, qps=1, mtu=4096, retry_cnt=0)
    a.wqe(0, "write", 262144, src_off=0x1_0001, dst_off=0x1_0003)
    a.wqe(0, "write", 100, src_off=0x9_0001, dst_off=0x9_0003)
    vec("exhaust_mid_message",
        "A WRITEs 256 KiB on QP 0 (MTU 4096: 64 packets, PSNs 7..70) then 100 bytes (PSN 71), "
        "retry_cnt 0; the link A to B loses the first send of PSN 9. B NAKs PSN 9 (sequence "
        "error) when PSN 10 arrives; with no retry left the NAK ends the QP: the WRITE "
        "completes with status 12 (retry exceeded, byte_len 0), the second WQE is flushed "
        "(5) and QP 0 goes to ERROR. From there A sends only what it had committed (the "
        "go-back-N check allows the reaction window after the NAK's arrival) and none of the "
        "rest of the WRITE, which tx_engine ends at its next packet with the QP in ERROR",
        a.build(plain=[0]), b.build(),
        link([{"drop": first(0, 9)}]))

    # The timer runs out in the middle of a long message: the run must
    # not wait for the rest of it.
    a, b = pair(343, qps=1, mtu=4096, timeout=TIMEOUT, retry_cnt=0)
    a.wqe(0, "write", 1 << 20, src_off=0x1, dst_off=0x3)
    vec("timer_exhaust_mid_message",
        f"A WRITEs 1 MiB on QP 0 (MTU 4096: 256 packets, PSNs 7..262), local ACK timeout "
        f"{TIMEOUT} (4,096 cycles) and retry_cnt 0, on a link that loses nothing. B "
        "acknowledges a WRITE at its last packet (the only one with AckReq), so nothing "
        "acknowledges this one for its first 4,096 cycles: the first expiry of A's timer, "
        "some 60 packets in, finds no retry left. The WRITE completes with status 12 (retry "
        "exceeded, byte_len 0) and QP 0 goes to ERROR with most of the WRITE unsent; A sends "
        "only what it had committed and none of the rest, and B, which never sees the last "
        "packet, sends nothing",
        a.build(plain=[0]), b.build(),
        link())

    # RNR: the RECVs are posted late.
    a, b = pair(313, qps=2)
    for n in range(2):
        b.qps[n]["min_rnr_timer"] = 1
        a.qps[n]["rnr_retry"] = 3
        b.recv(n, [(0x1000 + 0x8000 * n, 512)])
    a.wqe(0, "send", 200, src_off=0x101)
    a.wqe(1, "send", 200, src_off=0x501)
    a.wqe(1, "send", 300, src_off=0x901)
    b.recv(1, [(0x2000 + 0x8000, 512)])
    hb = b.build()
    hb["program"] = [s for s in hb["program"] if "post_recv" not in s]
    hb["rq_doorbells"] = [{"at": 1400, "qp": 0, "recvs": 1}, {"at": 1400, "qp": 1, "recvs": 2}]
    vec("rnr_recv_late",
        "A SENDs from cycle 400 (rnr_retry 3): 200 bytes on QP 0, 200 and 300 bytes on QP 1; "
        "B posts the RECVs only at cycle 1400, min_rnr_timer 1 (0.01 ms, 2,500 cycles). QP 0: "
        "the SEND gets an RNR NAK, A waits the 2,500 cycles it names, sends it again into the "
        "RECV and completes it. QP 1: the first SEND gets an RNR NAK and the second, out of "
        "sequence behind it, a sequence NAK, which ends A's RNR wait at once (docs/responder.md "
        "\"Coalescing\": it only makes the requester resend sooner and be told RNR again); "
        "once the RECVs are there both SENDs land and complete",
        a.build(plain=[0, 1]), hb, link())

    # RNR on eight QPs at once, each with its own timer code: retx_ctl keeps
    # the codes in a RAM that the scanner reads while NAKs write it.
    a, b = pair(317, qps=8)
    for n in range(8):
        b.qps[n]["min_rnr_timer"] = n + 1
        a.qps[n]["rnr_retry"] = 7
        b.recv(n, [(0x1000 + 0x1000 * n, 256)])
        a.wqe(n, "send", 64 + 8 * n, src_off=0x101 + 0x200 * n)
    hb = b.build()
    hb["program"] = [s for s in hb["program"] if "post_recv" not in s]
    hb["rq_doorbells"] = [{"at": 12000, "qp": n, "recvs": 1} for n in range(8)]
    vec("rnr_codes_per_qp",
        "A SENDs once on each of QPs 0..7 at once (rnr_retry 7: no limit); B has no RECV "
        "until cycle 12000 and answers each with an RNR NAK naming its QP's min_rnr_timer, "
        "code n + 1 for QP n (0.01 ms to 0.16 ms, 2,500 to 40,000 cycles): eight RNR NAKs "
        "within a few cycles of each other, each QP waiting its own time (QP 0 five times "
        "before the RECVs are there, QP 4 and up once), then every SEND lands and completes",
        a.build(plain=list(range(8))), hb, link(), max_cycles=200_000)

    # RNR exhaustions back to back: B's NAKs wait behind its own frames and
    # then leave one a cycle, so A's retx_ctl reports them one after another.
    a, b = pair(331, qps=5, mtu=4096)
    for n in range(4):
        b.qps[n]["min_rnr_timer"] = 1
        a.qps[n]["rnr_retry"] = 0
        a.wqe(n, "send", 64, src_off=0x101 + 0x100 * n)
    b.wqe(4, "write", 65536, src_off=0x1_0003, dst_off=0x2_0005)
    what = ("A SENDs 64 bytes on each of QPs 0..3 (rnr_retry 0) while B streams a 64 KiB "
            "WRITE to A on QP 4 (MTU 4096); B has no RECVs, so each SEND gets an RNR NAK, and "
            "the NAKs wait behind B's 4 KiB frames and reach A back to back: each ends its QP "
            "at once, all four SENDs complete with status 13 (RNR retry exceeded) and the QPs "
            "go to ERROR, while B's WRITE is placed and completed")
    ha, hb = a.build(plain=[0, 1, 2, 3]), b.build(plain=[4])
    vec("rnr_exhaust_back_to_back", what, ha, hb, link(), max_cycles=100_000)
    # The same, with A's QP 5 (QP 4's settings, no peer traffic) set up by a
    # setup_qp step whose PSN write takes effect in the cycle ack_tracker
    # applies one of the exhaustions (found by trying each cycle).
    q5 = copy.deepcopy(next(q for q in ha["qps"] if q["qp"] == 4))
    q5["qp"], q5["remote_qpn"] = 5, 5
    for ring in ("sq", "rq"):
        q5[ring]["base"] = hex(int(q5[ring]["base"], 16) + 0x1_0000)
    ha = dict(ha, qps=ha["qps"] + [q5],
              program=ha["program"] + [{"wait_until": {"cycle": RNR_SETUP_AT}},
                                       {"setup_qp": {"qp": 5}}])
    vec("rnr_exhaust_meets_setup",
        what + f". A's setup_qp of QP 5 at cycle {RNR_SETUP_AT} makes its PSN write take "
        "effect in the cycle an exhaustion is applied: the exhaustion must not be lost to "
        "the other QP's restart",
        ha, hb, link(), max_cycles=100_000)

    # Random loss both ways over many messages on 4 QPs. The seeds are
    # picked so that each direction loses frames in this run (SplitMix64's
    # draws, one per frame; a seed that happened to lose nothing would test
    # nothing); what they hit is in the descriptions, read off the capture.
    hits = {
        "random_loss_1e-2": "these seeds lose 3 WRITE packets A to B (each NAKed by B once, "
                            "A goes back) and 2 ACKs B to A (covered by later ones)",
        "random_loss_1e-3": "these seeds lose 3 WRITE packets A to B (NAKed, A goes back) and "
                            "one READ response B to A (rd_sink's gap: A asks again for the "
                            "rest of the READ)",
    }
    for name, pm, seeds, count, length in (("random_loss_1e-2", 10_000, (61, 20), 8, 8192),
                                           ("random_loss_1e-3", 1_000, (23, 11), 16, 16384)):
        hit = hits[name]
        a, b = pair(315 + pm % 7, qps=4, timeout=TIMEOUT)
        for n in range(4):
            for k in range(count):
                off = 0x1_0000 * n + 0x4000 * k + 0x40
                if k % 4 == 3:
                    a.wqe(n, "read", length // 4, src_off=0, lkey=KEY1, rkey=gen_tx.KEY0,
                          rva=gen_tx.VA + 0x4_0000 + off)
                    a.wqes[-1]["laddr"] = hex(VA1 + 0x10_0000 + off)
                else:
                    a.wqe(n, "write", length, src_off=off + 1, dst_off=off + 3)
        # B's host takes writes at line rate (MPS 4096; at the default
        # 256 rx_buf fills and drops, which no reference predicts).
        b.config = {"mps": 4096}
        frames = 4 * (count * 3 // 4 * length // 1024 + count // 4 * length // 4096)
        vec(name,
            f"A sends {count} messages on each of four QPs (WRITEs of {length} bytes, every "
            f"fourth a READ of {length // 4}), MTU 1024, about {frames} data frames; the link "
            f"loses each frame with probability {pm / 1e6:g} in both directions (seeded): "
            f"{hit}. Go-back-N recovers every loss, every message is delivered exactly once "
            "and in order, every WQE completes",
            a.build(plain=[0, 1, 2, 3]), b.build(),
            link([{"drop": {"per_million": pm, "seed": seeds[0]}}],
                 b_to_a=[{"drop": {"per_million": pm, "seed": seeds[1]}}]),
            max_cycles=2_000_000)

    # A resend while the QP's completion queue in ack_tracker is full: the
    # replayed WQEs must not be held back by it (their completions are in
    # that queue already; tx_engine's replay bit lifts the block).
    a, b = pair(331)
    for k in range(12):
        a.wqe(0, "write", 64, src_off=0x100 * k + 1, dst_off=0x100 * k + 3)
    vec("resend_with_full_ack_queue",
        "A posts twelve signaled 64-byte WRITEs on QP 0 at once (PSNs 7..18); ack_tracker "
        "holds at most 6 of them before it blocks the QP, so six go out and wait; the link A "
        "to B loses the first send of PSN 7: B NAKs 7 (sequence error) when 8 arrives and "
        "drops 8..12, so the NAK acknowledges nothing and the queue is still full when A goes "
        "back to 7. The six WQEs A sends again were sent before, so the full queue does not "
        "hold them; B's ACKs then empty the queue, the other six go out, and all twelve "
        "complete in order",
        a.build(plain=[0]), b.build(),
        link([{"drop": first(0, 7)}]))


def drain_vectors():
    """A QP its own responder moved to ERROR: its timer keeps running and
    flushes what no ACK covers (status 5); what it never sent is flushed."""
    def hosts(seed, first_len, second_len, timeout=None, retry_cnt=None):
        """A WRITEs first_len bytes on QP 0 from cycle 400 and second_len
        bytes at 2500, once its QP is in ERROR; B WRITEs 64 bytes with a
        bad rkey at 1000, after A's first WRITE has left."""
        a, b = pair(seed, timeout=timeout, retry_cnt=retry_cnt)
        a.wqe(0, "write", first_len, src_off=0x101, dst_off=0x103)
        a.wqe(0, "write", second_len, src_off=0x2101, dst_off=0x2103)
        b.wqe(0, "write", 64, src_off=0x301, dst_off=0x303, rkey=0x4571)
        ha, hb = a.build(plain=[0]), b.build(plain=[0])
        ha["program"] = [{"wait_until": {"cycle": 400}}, {"post_send": {"qp": 0, "wqes": 1}},
                         {"wait_until": {"cycle": 2500}}, {"post_send": {"qp": 0, "wqes": 1}}]
        hb["program"] = [{"wait_until": {"cycle": 1000}}, {"post_send": {"qp": 0, "wqes": 1}}]
        return ha, hb

    vec("error_drains_unacked_write",
        f"One QP carrying traffic both ways, local ACK timeout {TIMEOUT} (4,096 cycles), "
        "retry_cnt 7. From cycle 400 A WRITEs 4000 bytes on QP 0 (PSNs 7..10); the link A to "
        "B loses PSN 10, the only packet with AckReq, so B acknowledges nothing. At cycle 1000 "
        "B WRITEs 64 bytes to A with an rkey that names no MR: A's responder answers with a "
        "remote access NAK and moves QP 0 to ERROR (its requester is not in error mode: no "
        "NAK came to it), and B's WRITE completes with status 10, B's QP 0 to ERROR. A's "
        "WRITE was sent whole and no ACK will ever come: A's timer, still running in ERROR, "
        "runs out and flushes it (status 5, no resend, retries left or not); the 100-byte "
        "WRITE A posts at cycle 2500 is flushed too. Before the drain a QP in ERROR had no "
        "timer and the first WRITE's completion never left",
        *hosts(351, 4000, 100, TIMEOUT, 7), link([{"drop": first(0, 10)}]))
    vec("error_flushes_unsent_write",
        "One QP carrying traffic both ways, its local ACK timer off, a link that loses nothing. "
        "From cycle 400 A WRITEs 100 bytes on QP 0 (PSN 7), which B acknowledges. At cycle "
        "1000 B WRITEs 64 bytes to A with an rkey that names no MR: A's responder answers "
        "with a remote access NAK and moves QP 0 to ERROR, B's WRITE completes with status "
        "10. The 3000-byte WRITE A posts at cycle 2500 is never sent: A completes it flushed "
        "(status 5) and nothing else leaves QP 0",
        *hosts(353, 100, 3000), link())


def mixed_exhaust_vector():
    """The timer and a NAK share retry_cnt: the NAK finds none left."""
    a, b = pair(355, timeout=TIMEOUT, retry_cnt=1)
    a.wqe(0, "write", 100, src_off=0x101, dst_off=0x103)
    a.wqe(0, "write", 100, src_off=0x2101, dst_off=0x2103)
    ha = a.build(plain=[0])
    ha["program"] = [{"wait_until": {"cycle": 400}}, {"post_send": {"qp": 0, "wqes": 1}},
                     {"wait_until": {"cycle": 6000}}, {"post_send": {"qp": 0, "wqes": 1}}]
    vec("nak_after_timer_rewind_exhausts",
        f"A WRITEs 100 bytes on QP 0 (PSN 7) at cycle 400, local ACK timeout {TIMEOUT} (4,096 "
        "cycles), retry_cnt 1; the link A to B loses its first two sends. The first expiry "
        "spends the one retry and resends PSN 7 (lost again); A posts a second WRITE at cycle "
        "6000, before the next expiry: PSN 8 reaches B out of sequence and B NAKs 7. That "
        "NAK finds no retry left: the first WRITE completes with status 12 at once, the "
        "second flushed (5), QP 0 to ERROR, no further resend",
        ha, b.build(), link([{"drop": first(0, 7, 2)}]))

if __name__ == "__main__":
    main()
