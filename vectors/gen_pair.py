#!/usr/bin/env python3
"""Writes the two-NIC (`system`) vectors in vectors/pair/ (without `expect`).

Like gen_tx.py it writes only vectors whose file does not exist yet: to
change a scenario, delete its file, run this again, then `rnic bless` the
new files (bless refuses a vector whose independent checks fail) and review
the diff. The format is docs/pair.md.

Both hosts use gen_tx.py's memory layout (payload in one 2 MiB region
registered as MR 0, SQ rings at 0x1000_0000 + 64 KiB * qp, CQ rings at
0x2000_0000 + 64 KiB * cq). QP n of A talks to QP n of B: each one's
remote_qpn is the other's index, MACs and IPs mirror each other. The RC
vectors (rc_*, with RECVs, responder fields and a verbs program) are
written by gen_pair_rc.py, called from here.
"""
import json
import os

import gen_pair_rc
import gen_tx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pair")
CHECK = ("each NIC's frames byte for byte against frames the testbench builds from that host's "
         "WQEs, QP context and memory, each NIC's CQEs against completions worked out from its "
         "WQEs, every frame on the link decoded and ICRC-checked by the testbench's codec and "
         "delivered whole, in order, after the link delay and marked exactly as the link's rule "
         "says, each NIC's receive counters against the frames it received, CNPs against the "
         "CE-marked frames received and the CNP interval, DCQCN's CNP and cut counters against "
         "the CNPs received, every TLP against the PCIe rules; both NICs' model and RTL in "
         "lockstep")

# The paper's reaction point (DCQCN_MODE 0, F 5, alpha 1.0), which these
# vectors were written for; the registers' reset values are the deployed
# DCQCN's (docs/rx_cc.md, "DCQCN as deployed").
PAPER_CC = {"dcqcn_mode": 0, "f": 5, "alpha_init": 1024}
FAST_CC = {**PAPER_CC, "k_cycles": 1000, "t_inc_cycles": 2000, "b_bytes": 65536,
           "r_ai_mbps": 2000.0, "r_hai_mbps": 10000.0, "cnp_interval_cycles": 400}


def qp(side, n, mtu=1024, cc=False, ipv6=False):
    me, peer = (0, 1) if side == "a" else (1, 0)
    q = {"qp": n, "type": "uc", "remote_qpn": n, "psn": 100 * n + 7 + 50 * me,
         "mtu": mtu, "pd": 1, "cq": 0,
         "dst_mac": "02:00:00:00:%02x:%02x" % (peer, n),
         "src_mac": "02:00:00:00:%02x:%02x" % (me, n),
         "udp_sport": 49152 + n, "dscp": 26, "ecn": True,
         "sq": {"base": hex(0x1000_0000 + 0x1_0000 * n), "log_size": 6}}
    if ipv6:
        q["ip"] = {"ipv6": {"src": "fd00::%x:%x" % (me + 1, n), "dst": "fd00::%x:%x" % (peer + 1, n)}}
    else:
        q["ip"] = {"ipv4": {"src": "10.0.%d.%d" % (me, n + 1), "dst": "10.0.%d.%d" % (peer, n + 1)}}
    if cc:
        q["cc"] = True
    return q


def host(qps, wqes, seed, cc=None, doorbells=None):
    if doorbells is None:
        doorbells = []
        for q in qps:
            n = sum(1 for w in wqes if w["qp"] == q["qp"])
            if n:
                doorbells.append({"at": 0, "qp": q["qp"], "wqes": n})
    h = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": seed}],
         "qps": qps, "mrs": [gen_tx.mr()], "cqs": [gen_tx.cq()],
         "wqes": wqes, "doorbells": doorbells}
    if cc:
        h["cc"] = cc
    return h


def vec(name, desc, a, b, link=None, max_cycles=400_000, check=CHECK):
    v = {"format": 1, "kind": "system", "name": name, "description": desc,
         "checked_against": check, "a": a, "b": b,
         "link": link or {"a_to_b": {"delay": 0}, "b_to_a": {"delay": 0}},
         "max_cycles": max_cycles}
    path = os.path.join(HERE, name + ".json")
    if os.path.exists(path):
        return
    os.makedirs(HERE, exist_ok=True)
    with open(path, "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")


def wqe(q, op, length, off=0):
    return gen_tx.wqe(q, op, length, off=off)


def main():
    mtus = [256, 1024, 4096, 512]
    # UC SEND, several QPs, A to B, no delay.
    qa = [qp("a", n, mtus[n]) for n in range(4)]
    qb = [qp("b", n, mtus[n]) for n in range(4)]
    w = [wqe(n, op, ln, off=0x4000 * (4 * n + k))
         for n in range(4) for k, (op, ln) in enumerate([("send", 3000), ("send_imm", 100), ("send", 0)])]
    vec("uc_send_a_to_b",
        "UC SENDs (with and without immediate, one of length 0) on four QPs of MTU 256..4096, "
        "A to B over a link of delay 0: B receives every frame byte for byte as A sent it and "
        "counts it as data; A completes every WQE when its last frame has left",
        host(qa, w, 7), host(qb, [], 8))
    # UC WRITE, several QPs, A to B, a few hundred cycles of delay.
    w = [wqe(n, op, ln, off=0x4000 * (4 * n + k))
         for n in range(3) for k, (op, ln) in enumerate([("write", 5000), ("write_imm", 700)])]
    vec("uc_write_a_to_b_delay",
        "UC RDMA WRITEs (with and without immediate) on three QPs, A to B over a link of 300 "
        "cycles each way: every frame arrives whole, in order, no earlier than 300 cycles after "
        "it left",
        host(qa[:3], w, 7), host(qb[:3], [], 8),
        link={"a_to_b": {"delay": 300}, "b_to_a": {"delay": 300}})
    # Both directions at once, different delays.
    wa = [wqe(n, op, ln, off=0x4000 * (4 * n + k))
          for n in range(2) for k, (op, ln) in enumerate([("write", 6000), ("send", 1500)])]
    wb = [wqe(n, op, ln, off=0x4000 * (4 * n + k))
          for n in range(2) for k, (op, ln) in enumerate([("send_imm", 4000), ("write_imm", 300)])]
    vec("uc_both_ways",
        "A and B send UC WRITEs and SENDs to each other on two QPs at once (links of 0 cycles "
        "A to B and 250 cycles B to A): each receives the other's frames while sending its own, "
        "each completes its own work",
        host(qa[:2], wa, 7), host(qb[:2], wb, 9),
        link={"a_to_b": {"delay": 0}, "b_to_a": {"delay": 250}})
    # CE marking: the CNP feedback loop.
    qa = [qp("a", n, 1024, cc=True) for n in range(2)]
    qb = [qp("b", n, 1024) for n in range(2)]
    w = [wqe(n, "write", 64 * 1024, off=0x4_0000 * n) for n in range(2)]
    vec("ce_cnp_loop",
        "A streams 64 KiB UC WRITEs on two QPs with congestion control on; the link to B marks "
        "every 8th ECT frame CE (a delay of 200 cycles each way); B answers the marks with CNPs "
        "(at most one per QP per 400-cycle interval), which reach A over the link and cut its "
        "rates: A's DCQCN counts each CNP and a cut per CNP",
        host(qa, w, 7, cc=dict(FAST_CC)), host(qb, [], 8, cc=dict(FAST_CC)),
        link={"a_to_b": {"delay": 200, "ce_every": 8}, "b_to_a": {"delay": 200}},
        max_cycles=2_000_000)
    # Both directions marked, IPv6 (the marker's other branch).
    qa = [qp("a", 0, 4096, cc=True, ipv6=True)]
    qb = [qp("b", 0, 4096, cc=True, ipv6=True)]
    vec("ce_both_ways_ipv6",
        "IPv6: A and B each stream a 32 KiB UC WRITE to the other with congestion control on; "
        "both directions mark every 3rd ECT frame CE (delay 0 and 120 cycles): each NIC sends "
        "CNPs for the marks it receives and cuts its rate for the CNPs it gets",
        host(qa, [wqe(0, "write", 32 * 1024)], 7, cc=dict(FAST_CC)),
        host(qb, [wqe(0, "write", 32 * 1024, off=0x8_0000)], 9, cc=dict(FAST_CC)),
        link={"a_to_b": {"delay": 0, "ce_every": 3}, "b_to_a": {"delay": 120, "ce_every": 3}},
        max_cycles=2_000_000)
    gen_pair_rc.gen_qp = qp
    gen_pair_rc.main(vec)


if __name__ == "__main__":
    main()
