#!/usr/bin/env python3
"""Writes the faulty-link pair vectors in vectors/loss/ (without `expect`).

Like gen_pair.py it writes only vectors whose file does not exist yet: to
change a scenario, delete its file, run this again, then `rnic bless` the
new files (bless refuses a vector whose independent checks fail) and review
the diff. The link faults are docs/pair.md, "Link faults"; the hosts are
gen_pair_rc.py's (`Side`: RC QPs, MR 1 the receive region, RECVs posted
first, the sender starting at cycle 400 after configuration).

Nothing retransmits yet: a lost request stalls its QP (the responder NAKs
the first packet after the gap with a PSN sequence error, once, and drops
what follows; the requester only counts the NAK), so a WQE whose request
or whose every covering ACK was lost never completes. The checks judge
that from what arrived: the responder's reference is fed the frames as
they arrived, the requester's completions come from the ACKs that arrived,
and the link check applies the vector's faults to the frames as sent.
Such a run ends by its quiet window (docs/pair.md), not at max_cycles,
which stays small here all the same.

A's QP n sends with PSNs from 100 n + 7; B's QP n is its peer (DestQP n).
"""
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
         "each NIC's frames byte for byte against its WQEs; receive counters (ICRC drops "
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


def pair(seed, qps=1, mtu=1024):
    a, b = Side("a", seed), Side("b", seed + 1)
    for n in range(qps):
        a.qp(n, mtu)
        b.qp(n, mtu)
    return a, b


def main():
    gen_pair_rc.gen_qp = gen_pair.qp

    # Drop the middle of a WRITE.
    a, b = pair(31, qps=2)
    a.wqe(0, "write", 4096, src_off=0x1003, dst_off=0x1001)
    a.wqe(0, "write", 1000, src_off=0x9005, dst_off=0x9003)
    a.wqe(1, "write", 3000, src_off=0x2_0007, dst_off=0x2_0005)
    vec("drop_write_middle",
        "A WRITEs 4096 bytes (MTU 1024: PSNs 7..10) then 1000 bytes (PSN 11) on QP 0, and 3000 "
        "bytes on QP 1; the link A to B drops QP 0's PSN 8, the first MIDDLE: B places the "
        "FIRST, NAKs PSN 9 with a PSN sequence error once and drops the rest of that message "
        "and the next one (no host write for them); A counts the NAK and completes neither "
        "WQE of QP 0 (no retransmission yet: the documented behaviour), QP 1's WRITE completes",
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
        "A WRITEs 300 bytes three times on QP 0 (PSNs 7, 8, 9); the link A to B holds PSN 7 "
        "and delivers it right after PSN 8: B drops PSN 8 with a PSN sequence error NAK (PSN "
        "7), takes PSN 7 in sequence, writes and ACKs it, then drops PSN 9 (expected 8) with a "
        "second sequence NAK: one WRITE written, two NAKs counted at A (resp_nak_seq 2, nak 2), "
        "A completes the first WQE only; the other two wait for a retransmission that does not "
        "exist yet",
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
        "after its last) is lost; B NAKs the first packet after the gap once and drops the "
        "rest of QP 0's (the NAK carries its ePSN 13); A completes only what B acknowledged "
        "before the gap: QP 1's WRITE and QP 0's first",
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
        "(PSN 7, its ePSN) and consumes no RECV (both stay posted, prefetched); A counts the "
        "NAK and completes neither SEND",
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
        "bytes (PSN 11) on QP 0; the link B to A drops the response of PSN 8: A's rd_sink "
        "places the FIRST, drops the two after the gap as out of sequence (rdr_taken 1, "
        "rdr_seq 2), so the READ never completes, and the WRITE, acknowledged by B, cannot "
        "complete before it (completions in order): no CQE at A",
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


if __name__ == "__main__":
    main()
