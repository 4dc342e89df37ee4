#!/usr/bin/env python3
"""Writes the fabric vectors in vectors/fabric/ (without `expect`).

Like the other generators it writes only vectors whose file does not exist
yet: to change one, delete its file, run this again, then `rnic bless` it
(bless refuses a vector whose independent checks fail) and review the diff.
The format is docs/fabric.md.

Topology: a star, host i on switch port i. Addresses: host h's QP n sends
from 10.0.h.(n+1) with MAC 02:00:00:00:hh:nn, so the switch routes each
address to its host's port. Every QP tags its frames VLAN 5, PCP 3: the
switch's lossless priority, and the priority the NIC's pause applies to.

Incast N->1: host 0 receives, hosts 1..N each WRITE S bytes over one RC
QP to host 0, all at once: sender s uses its QP s-1 and talks to host 0's
QP s-1 (distinct QP numbers keep every DestQP on host 0 distinct). Each sender's source is MR 0
(gen_tx.py's layout, 2 MiB at 0x10_0000); host 0's receive region is MR 1,
16 MiB at 0x100_0000 (VA 0x7E00_0000_0000, key 0x4561), sender s writing
at (s-1) MiB.
"""
import json
import os
import random

import gen_tx

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fabric")

PHYS1 = 0x100_0000
VA1 = 0x7E00_0000_0000
KEY1 = 0x4561
LEN1 = 0x100_0000
START = 400
# The NIC pauses a QP by its PCP, so RoCE traffic is tagged with the
# switch's lossless priority.
VID = 5
PCP = 3

CHECK = ("every NIC's model, and the RTL of the hosts in `rtl`, in lockstep; each NIC's frames "
         "byte for byte against frames built from its WQEs and memory; each receiver's writes, "
         "MR contents and ACKs predicted by resp_reference from the frames that reached it; "
         "each requester's completions as the ACKs that reached it cover them; every frame the "
         "switch delivered matched to a frame some host sent (unaltered but for a CE mark on an "
         "ECT frame), to the host its IP destination names, decoded and ICRC-checked; frames "
         "never delivered equal to the switch's drops, marks to its marks, no lossless drop "
         "with PFC on, pauses sent equal to pauses received; switch conservation every step; "
         "DCQCN's counters against the CNPs each NIC received; every TLP against the PCIe rules")

CHECK_STUCK = ("every NIC's model; the run must not complete: no frame of data leaves any switch "
               "for the last `deadlock.still_cycles` and the switch-to-switch links whose queues "
               "hold frames their downstream switch pauses form a cycle; every frame delivered "
               "before matched to a frame some host sent, unaltered, to the host its IP "
               "destination names, decoded and ICRC-checked; no drop; switch conservation every "
               "step; every TLP against the PCIe rules")

# DCQCN, a sender's `cc`: None (off), PAPER (the paper's reaction point,
# DCQCN_MODE 0 with F 5 and alpha 1, its timers sped up to act within a
# run of a few hundred microseconds) or DEPLOYED ({}: the reset values,
# the deployed modes with the vendor's default parameters; docs/rx_cc.md).
PAPER = {"dcqcn_mode": 0, "f": 5, "alpha_init": 1024,
         "k_cycles": 1000, "t_inc_cycles": 2000, "b_bytes": 65536,
         "r_ai_mbps": 2000.0, "r_hai_mbps": 10000.0, "cnp_interval_cycles": 400}
DEPLOYED = {}


def qp(h, n, peer, peer_qp, psn, epsn, cc):
    """QP n of host h, talking to QP peer_qp of host peer."""
    q = {"qp": n, "type": "rc", "remote_qpn": peer_qp, "psn": psn, "epsn": epsn,
         "mtu": 1024, "pd": 1, "cq": 0,
         "dst_mac": "02:00:00:00:%02x:%02x" % (peer, peer_qp),
         "src_mac": "02:00:00:00:%02x:%02x" % (h, n),
         "udp_sport": 49152 + 64 * h + n, "dscp": 26, "ecn": True,
         "ip": {"ipv4": {"src": "10.0.%d.%d" % (h, n + 1),
                         "dst": "10.0.%d.%d" % (peer, peer_qp + 1)}},
         "sq": {"base": hex(0x1000_0000 + 0x1_0000 * n), "log_size": 6},
         "rq": {"base": hex(0x3000_0000 + 0x1_0000 * n), "log_size": 6},
         "rq_cq": 1,
         "remote_access": ["remote_write", "remote_read"],
         "vlan": {"vid": VID, "pcp": PCP}}
    if cc is not None:
        q["cc"] = True
    return q


def allreduce(name, desc, ranks, size, topology, cc=None, rtl=(), incast_hosts=(),
              max_cycles=4_000_000):
    """Ring AllReduce of `size` bytes over the hosts `ranks` (rank r is host
    ranks[r], its successor rank r+1 mod n): 2(n-1) steps, each a WRITE with
    immediate of size/n bytes from the rank's QP 0 to its successor's QP 1;
    a rank posts step k+1 only once step k's chunk from its predecessor has
    completed a RECV in its CQ 1 (NCCL's dependency: the chunk to send next
    is the one just reduced). Transport only: the bytes are not reduced.
    The hosts in incast_hosts each WRITE 1 MiB to rank 0 at the same time
    (the background incast), over rank 0's QPs 2, 3, ..."""
    n = len(ranks)
    # A receive region just large enough: every step's chunk, the RECVs'
    # 4 KiB at its end, and the incast's 1 MiB each from 8 MiB on; the
    # end-of-run checks read all of it.
    len1 = 0x80_0000 + (0x10_0000 * len(incast_hosts))
    chunk = size // n
    steps = 2 * (n - 1)
    hosts = [None] * (n + len(incast_hosts))
    for r, me in enumerate(ranks):
        succ, pred = ranks[(r + 1) % n], ranks[(r - 1) % n]
        q0 = qp(me, 0, succ, 1, 100 * me + 7, 3000 + succ, cc)
        q1 = qp(me, 1, pred, 0, 3000 + me, 100 * pred + 7, None)
        # rq_fetch holds two RECVs per QP: a third chunk arriving before
        # the next RECV is fetched gets an RNR NAK; retry after 0.01 ms,
        # not the 655 ms of timer code 0.
        q1["min_rnr_timer"] = 1
        wqes, recvs = [], []
        for k in range(steps):
            src = (k * chunk) % (gen_tx.MR_LEN - chunk)
            wqes.append({"qp": 0, "opcode": "write_imm", "wr_id": hex(0x5E00_0000 + k),
                         "len": chunk, "laddr": hex(gen_tx.VA + src), "lkey": hex(gen_tx.KEY0),
                         "raddr": hex(VA1 + k * chunk), "rkey": hex(KEY1),
                         "imm": hex(0xA000_0000 + (me << 8) + k)})
            recvs.append({"qp": 1, "wr_id": hex(0xEC00_0000 + k),
                          "sges": [{"addr": hex(VA1 + 0x80_0000 - 0x1000 + 16 * k), "len": 16,
                                    "lkey": hex(KEY1)}]})
        program = [{"post_recv": {"qp": 1, "recvs": steps}}, {"wait_until": {"cycle": START}}]
        for k in range(steps):
            program.append({"post_send": {"qp": 0, "wqes": 1}})
            program.append({"wait_cqes": {"cq": 1, "count": k + 1}})
        qps = [q0, q1]
        if r == 0:
            # Sender j uses its QP 2 + j: every DestQP at rank 0 distinct.
            qps += [qp(me, 2 + j, s, 2 + j, 6000 + j, 100 * s, None)
                    for j, s in enumerate(incast_hosts)]
        mine = len1 if r == 0 else 0x80_0000
        h = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": 30 + me},
                        {"addr": hex(PHYS1), "len": mine, "seed": 60 + me}],
             "qps": qps,
             "mrs": [gen_tx.mr(),
                     gen_tx.mr(index=1, key=KEY1, va=VA1, length=mine, pbase=PHYS1,
                               access=["local_write", "remote_write"])],
             "cqs": [gen_tx.cq(0), gen_tx.cq(1)],
             "wqes": wqes, "recvs": recvs, "program": program}
        if cc:
            h["cc"] = cc
        hosts[me] = h
    for j, s in enumerate(incast_hosts):
        w = {"qp": 2 + j, "opcode": "write", "wr_id": hex(0x5E10_0000 + s), "len": 1 << 20,
             "laddr": hex(gen_tx.VA), "lkey": hex(gen_tx.KEY0),
             "raddr": hex(VA1 + 0x80_0000 + j * 0x10_0000), "rkey": hex(KEY1), "imm": "0x0"}
        h = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": 90 + s}],
             "qps": [qp(s, 2 + j, ranks[0], 2 + j, 100 * s, 6000 + j, cc)],
             "mrs": [gen_tx.mr()], "cqs": [gen_tx.cq(0), gen_tx.cq(1)], "wqes": [w],
             "program": [{"wait_until": {"cycle": START}},
                         {"post_send": {"qp": 2 + j, "wqes": 1}}]}
        if cc:
            h["cc"] = cc
        hosts[s] = h
    traffic_vector(name, desc, topology, hosts, rtl, max_cycles)


def incast(name, desc, n, size, cc, switch=None, rtl=(), max_cycles=4_000_000):
    write(name, incast_vector(name, desc, n, size, cc, switch, rtl, max_cycles))


def incast_vector(name, desc, n, size, cc, switch, rtl, max_cycles):
    recv = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": 1},
                       {"addr": hex(PHYS1), "len": LEN1, "seed": 2}],
            "qps": [qp(0, s - 1, s, s - 1, 5000 + s, 100 * s, None) for s in range(1, n + 1)],
            "mrs": [gen_tx.mr(),
                    gen_tx.mr(index=1, key=KEY1, va=VA1, length=LEN1, pbase=PHYS1,
                              access=["local_write", "remote_write"])],
            "cqs": [gen_tx.cq(0), gen_tx.cq(1)],
            "wqes": []}
    hosts = [recv]
    for s in range(1, n + 1):
        w = {"qp": s - 1, "opcode": "write", "wr_id": hex(0x5E00_0000 + s), "len": size,
             "laddr": hex(gen_tx.VA + 0x100 * s), "lkey": hex(gen_tx.KEY0),
             "raddr": hex(VA1 + (s - 1) * 0x10_0000), "rkey": hex(KEY1), "imm": "0x0"}
        h = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": 10 + s}],
             "qps": [qp(s, s - 1, 0, s - 1, 100 * s, 5000 + s, cc)],
             "mrs": [gen_tx.mr()],
             "cqs": [gen_tx.cq(0), gen_tx.cq(1)],
             "wqes": [w],
             "program": [{"wait_until": {"cycle": START}}, {"post_send": {"qp": s - 1, "wqes": 1}}]}
        if cc:
            h["cc"] = cc
        hosts.append(h)
    v = {"format": 1, "kind": "fabric", "name": name, "description": desc,
         "checked_against": CHECK, "topology": {"kind": "star"},
         "link": {"delay": 100, "bits_per_cycle": 400},
         "switch": switch or {}, "hosts": hosts, "max_cycles": max_cycles}
    if rtl:
        v["rtl"] = list(rtl)
    return v


def hol(name, desc, n, size, victim_size, cc, rtl=(), max_cycles=4_000_000):
    """Head-of-line blocking: the incast of incast() (hosts 1..n WRITE
    `size` each to host 0) with one more flow from host 1, on its QP n, to
    host n+1 (WRITE victim_size): the victim shares host 1's link and
    priority with host 1's incast flow, but nothing on its own path is
    congested."""
    v = incast_vector(name, desc, n, size, cc, None, rtl, max_cycles)
    hosts = v["hosts"]
    victim = n + 1
    h1 = hosts[1]
    h1["qps"].append(qp(1, n, victim, n, 7000, 8000, cc))
    h1["wqes"].append({"qp": n, "opcode": "write", "wr_id": hex(0x5E20_0000), "len": victim_size,
                       "laddr": hex(gen_tx.VA + 0x1000), "lkey": hex(gen_tx.KEY0),
                       "raddr": hex(VA1), "rkey": hex(KEY1), "imm": "0x0"})
    h1["program"].append({"post_send": {"qp": n, "wqes": 1}})
    hosts.append({"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": 3},
                             {"addr": hex(PHYS1), "len": 0x20_0000, "seed": 4}],
                  "qps": [qp(victim, n, 1, n, 8000, 7000, None)],
                  "mrs": [gen_tx.mr(),
                          gen_tx.mr(index=1, key=KEY1, va=VA1, length=0x20_0000, pbase=PHYS1,
                                    access=["local_write", "remote_write"])],
                  "cqs": [gen_tx.cq(0), gen_tx.cq(1)], "wqes": []})
    write(name, v)


# The deadlock vectors' local ACK timeout, code 6: 65,536 cycles (262 us),
# longer than the watchdog's 10,000 so a QP held by pauses does not time
# out while the watchdog has yet to act; and each WRITE's size.
TIMEOUT = 6
SIZE = 128 << 10
WATCHDOG = 10_000


def deadlock(name, desc, switch, max_cycles, still_cycles=None):
    """PFC deadlock on a ring of three switches, one host each, every route
    one way round: host h WRITEs 4 x SIZE over its QP 0 to host h+2's
    QP 1, two hops, through ring h+1. Each ring link carries two flows (one
    starting, one passing through) at line rate, so every switch's queue
    toward the next one fills and pauses the previous switch, whose queue
    toward it holds the frames passing through: a cycle of pauses. The QPs
    resend on a local ACK timeout (code TIMEOUT), retry_cnt 7.
    still_cycles: the run must end stuck (a `deadlock` vector)."""
    n = 3
    hosts = []
    for me in range(n):
        dst, src = (me + 2) % n, (me + 1) % n
        q0 = qp(me, 0, dst, 1, 100 * me + 7, 3000 + dst, None)
        q0["timeout"] = TIMEOUT
        q0["retry_cnt"] = 7
        q1 = qp(me, 1, src, 0, 3000 + me, 100 * src + 7, None)
        wqes = [{"qp": 0, "opcode": "write", "wr_id": hex(0x5E30_0000 + 16 * me + k),
                 "len": SIZE, "laddr": hex(gen_tx.VA + k * SIZE),
                 "lkey": hex(gen_tx.KEY0), "raddr": hex(VA1 + k * SIZE),
                 "rkey": hex(KEY1), "imm": "0x0"} for k in range(4)]
        hosts.append({"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": 40 + me},
                                 {"addr": hex(PHYS1), "len": 1 << 20, "seed": 50 + me}],
                      "qps": [q0, q1],
                      "mrs": [gen_tx.mr(),
                              gen_tx.mr(index=1, key=KEY1, va=VA1, length=1 << 20, pbase=PHYS1,
                                        access=["local_write", "remote_write"])],
                      "cqs": [gen_tx.cq(0), gen_tx.cq(1)], "wqes": wqes,
                      "program": [{"wait_until": {"cycle": START}},
                                  {"post_send": {"qp": 0, "wqes": 4}}]})
    v = {"format": 1, "kind": "fabric", "name": name, "description": desc,
         "checked_against": CHECK if still_cycles is None else CHECK_STUCK,
         "topology": {"kind": "ring", "switches": n},
         "link": {"delay": 100, "bits_per_cycle": 400},
         "switch": switch, "hosts": hosts, "max_cycles": max_cycles}
    if still_cycles is not None:
        v["deadlock"] = {"still_cycles": still_cycles}
    write(name, v)


def psn(h, n):
    """The first PSN of host h's QP n (distinct across the fabric)."""
    return 4096 * h + 64 * n + 7


def traffic_host(me, qps, wqes, recv_len, seed):
    """A host whose QPs `qps` (index, peer, peer's QP) all WRITE at START:
    its source is MR 0, its receive region MR 1 of recv_len bytes."""
    return {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": seed},
                       {"addr": hex(PHYS1), "len": recv_len, "seed": seed + 1}],
            "qps": [qp(me, n, peer, pq, psn(me, n), psn(peer, pq), None)
                    for n, peer, pq in qps],
            "mrs": [gen_tx.mr(),
                    gen_tx.mr(index=1, key=KEY1, va=VA1, length=recv_len, pbase=PHYS1,
                              access=["local_write", "remote_write"])],
            "cqs": [gen_tx.cq(0), gen_tx.cq(1)], "wqes": wqes,
            "program": [{"wait_until": {"cycle": START}}]
            + [{"post_send": {"qp": w["qp"], "wqes": 1}} for w in wqes]}


def traffic_vector(name, desc, topology, hosts, rtl, max_cycles):
    v = {"format": 1, "kind": "fabric", "name": name, "description": desc,
         "checked_against": CHECK, "topology": topology,
         "link": {"delay": 100, "bits_per_cycle": 400},
         "switch": {}, "hosts": hosts, "max_cycles": max_cycles}
    if rtl:
        v["rtl"] = list(rtl)
    write(name, v)


def write_wqe(qp_n, wr_id, size, src, dst):
    return {"qp": qp_n, "opcode": "write", "wr_id": hex(wr_id), "len": size,
            "laddr": hex(gen_tx.VA + src), "lkey": hex(gen_tx.KEY0),
            "raddr": hex(VA1 + dst), "rkey": hex(KEY1), "imm": "0x0"}


def permutation(name, desc, n, size, topology, seed, rtl=(), max_cycles=4_000_000):
    """Every host WRITEs `size` bytes to one other host, each host the
    target of exactly one: a random derangement (Python's random, `seed`).
    Host h sends on its QP 0 to its target's QP 1."""
    rng = random.Random(seed)
    while True:
        to = list(range(n))
        rng.shuffle(to)
        if all(to[h] != h for h in range(n)):
            break
    frm = [to.index(h) for h in range(n)]
    hosts = [traffic_host(h, [(0, to[h], 1), (1, frm[h], 0)],
                          [write_wqe(0, 0x5E40_0000 + h, size, 0, 0)], size, 70 + h)
             for h in range(n)]
    traffic_vector(name, desc, topology, hosts, rtl, max_cycles)


def alltoall(name, desc, n, size, topology, rtl=(), max_cycles=4_000_000):
    """Every host WRITEs `size` bytes to every other host, one RC QP per
    pair (both ways): host h's QP k (1..n-1) talks to host h+k, whose QP
    n-k talks back (so the QPs a host names are distinct, as the testbench
    needs); h's WRITE lands at h x size in the peer's receive region.
    Each host posts to h+1, h+2, ... in turn (the usual shifted order),
    all at START."""
    hosts = []
    for h in range(n):
        wqes = [write_wqe(k, 0x5E50_0000 + 256 * h + k, size, 0, h * size)
                for k in range(1, n)]
        hosts.append(traffic_host(h, [(k, (h + k) % n, n - k) for k in range(1, n)], wqes,
                                  n * size, 100 + 2 * h))
    traffic_vector(name, desc, topology, hosts, rtl, max_cycles)


# PFC's XOFF above RED's Kmax: the marks, not the pauses, control the
# queue, as DCQCN is deployed (PFC the backstop).
FAIR_SWITCH = {"xoff_bytes": 512 << 10, "xon_bytes": 480 << 10}


def fairness(name, desc, cc, late, switch, wqes=8, max_cycles=6_000_000):
    """Two flows on one bottleneck: hosts 1 and 2 each WRITE `wqes` x 1 MiB
    to host 0 (the incast's layout, 8 MiB apart), host 2 starting `late`
    cycles after host 1, which has the link to itself by then."""
    v = incast_vector(name, desc, 2, 1 << 20, cc, switch, (), max_cycles)
    for s_ in (1, 2):
        h = v["hosts"][s_]
        w = h["wqes"][0]
        h["wqes"] = [dict(w, wr_id=hex(0x5E60_0000 + 16 * s_ + k),
                          raddr=hex(VA1 + (s_ - 1) * (wqes << 20) + (k << 20)))
                     for k in range(wqes)]
        h["program"] = [{"wait_until": {"cycle": START + (late if s_ == 2 else 0)}},
                        {"post_send": {"qp": s_ - 1, "wqes": wqes}}]
    write(name, v)


def write(name, v):
    path = os.path.join(HERE, name + ".json")
    if os.path.exists(path):
        return
    os.makedirs(HERE, exist_ok=True)
    with open(path, "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")


def lossy_incast():
    """Incast with PFC off: the switch's buffer overflows and drops, and the
    senders' go-back-N recovers every WRITE."""
    v = incast_vector(
        "incast_4to1_lossy",
        "Incast 4->1 of 64 KiB RC WRITEs through one switch with PFC off and a 64 KiB "
        "shared buffer (ECN off, no congestion control): four senders at line rate into one "
        "port overflow the queue and the switch drops (counted per queue). The receiver NAKs "
        "the first frame after each gap (sequence error), each sender goes back to the PSN "
        "the NAK names and, with a local ACK timeout of 3 (8,192 cycles), resends what no NAK "
        "reports; every WRITE is placed exactly once and completes. Hosts 0 (the receiver) "
        "and 1 run RTL and model in lockstep",
        4, 64 * 1024, None, {"pfc": False, "ecn": False, "buffer_bytes": 64 * 1024}, (0, 1),
        4_000_000)
    for h in v["hosts"][1:]:
        for q in h["qps"]:
            q["timeout"] = 3
    write("incast_4to1_lossy", v)


def main():
    lossy_incast()
    incast("incast_4to1_64k_rtl",
           "Incast 4->1 of 64 KiB RC WRITEs through one switch (star, links of 100 cycles, "
           "100 Gb/s): four senders at line rate into one 100 Gb/s port; the switch queues, "
           "marks CE past Kmin and pauses upstream past XOFF; DCQCN cuts each sender on the "
           "CNPs the receiver returns (deployed modes, default parameters); every WRITE lands "
           "and completes. All five NICs run RTL and model in lockstep.",
           4, 64 * 1024, DEPLOYED, rtl=range(5))
    for n in (8, 16):
        incast("incast_%dto1_1m_pfc" % n,
               "Incast %d->1 of 1 MiB RC WRITEs, PFC on, ECN marking off, DCQCN off: the "
               "receiver's port queue grows to XOFF, the switch pauses the senders' ports and "
               "nothing is dropped; every WRITE lands and completes. Models only, the "
               "receiver's RTL in lockstep." % n,
               n, 1 << 20, None, switch={"ecn": False}, rtl=[0])
        for cc, what, how in ((PAPER, "paper", "the paper's reaction point (timers sped up)"),
                              (DEPLOYED, "deployed",
                               "the deployed modes with their default parameters")):
            incast("incast_%dto1_1m_%s" % (n, what),
                   "Incast %d->1 of 1 MiB RC WRITEs, PFC on, RED/ECN marking (5 KB..200 KB, "
                   "1 %%), DCQCN on every sender, %s: CNPs cut the senders and the queue stays "
                   "shorter than with PFC alone; every WRITE lands and completes. Models only, "
                   "the receiver's RTL in lockstep." % (n, how),
                   n, 1 << 20, cc, rtl=[0])
    for cc, what in ((None, "pfc"), (DEPLOYED, "dcqcn")):
        hol("hol_victim_%s" % what,
            "PFC head-of-line blocking: 4 senders WRITE 1 MiB each into host 0 (a 4->1 incast) "
            "while sender 1 also WRITEs 1 MiB on a second QP to host 5, whose path is not "
            "congested. XOFF on host 1's port pauses priority 3, so both of its QPs stop: the "
            "victim flow slows to the incast's share. %s. Host 1's RTL in lockstep."
            % ("PFC alone" if cc is None else
               "DCQCN on (deployed modes, default parameters): CNPs cut host 1's incast QP "
               "alone and the pauses mostly stop, so the victim gets the rest of host 1's link"),
            4, 1 << 20, 1 << 20, cc, rtl=[1])
    allreduce("allreduce_8_leafspine",
              "Ring AllReduce of 2 MiB over 8 hosts on a leaf-spine (2 leaves of 4 hosts, 2 "
              "spines): 14 steps of 256 KiB WRITEs with immediate, each rank's next step waiting "
              "for its predecessor's chunk; the hops 3->4 and 7->0 cross the spines (ECMP by UDP "
              "source port). Rank 0's RTL in lockstep.",
              list(range(8)), 2 << 20, {"kind": "leaf_spine", "leaves": 2, "spines": 2},
              rtl=[0])
    allreduce("allreduce_16_fattree",
              "Ring AllReduce of 4 MiB over the 16 hosts of a k = 4 fat-tree: 30 steps of 256 "
              "KiB WRITEs with immediate, each rank's next step waiting for its predecessor's "
              "chunk; ring hops inside an edge switch, across a pod and across the core. Rank "
              "0's RTL in lockstep.",
              list(range(16)), 4 << 20, {"kind": "fat_tree", "k": 4}, rtl=[0])
    for cc, what, how in ((PAPER, "paper", "the paper's reaction point (timers sped up)"),
                          (DEPLOYED, "deployed",
                           "the deployed modes with their default parameters")):
        fairness("fairness_2flows_%s" % what,
                 "Two flows on one bottleneck: host 1 WRITEs 8 x 1 MiB to host 0 and has the "
                 "100 Gb/s port to itself; 100 us later host 2 starts the same. RED/ECN marking "
                 "(5 KB..200 KB, 1 %%), PFC on, DCQCN on both senders, %s: the CNPs cut both "
                 "flows toward the fair share of 50 Gb/s each. Models only." % how,
                 cc, 25_000, FAIR_SWITCH)
    permutation("permutation_16_fattree",
                "Permutation traffic on the 16 hosts of a k = 4 fat-tree: every host WRITEs 1 "
                "MiB over RC to one other host and receives 1 MiB from one (a random "
                "derangement, seed 1), all at once. Each flow takes one path by the ECMP hash "
                "of its UDP source port; flows whose paths share an uplink split it, so the "
                "last flow finishes later than one flow alone would. Host 0's RTL in lockstep.",
                16, 1 << 20, {"kind": "fat_tree", "k": 4}, 1, rtl=[0])
    alltoall("alltoall_8_rail",
             "All-to-all on a rail-optimized fabric: 4 servers of 2 NICs, NIC r of each "
             "server on rail switch r, each rail's 4 hosts with 4 uplinks, one to each of 4 "
             "spines (non-blocking). Every host WRITEs 128 KiB "
             "over RC to each of the 7 others (one QP per pair), all posted at once; the "
             "NIC's scheduler interleaves its 7 QPs. Traffic to a host on the same rail stays "
             "on the rail switch, the rest crosses a spine. Host 0's RTL in lockstep.",
             8, 128 << 10, {"kind": "rail", "rails": 2, "spines": 4}, rtl=[0])
    deadlock("deadlock_ring3_stuck",
             "PFC deadlock: three switches in a ring, one host each, every route one way round "
             "(a routing that breaks up-down order). Each host WRITEs 512 KiB (4 x 128 KiB) to "
             "the host two switches on; each ring link carries a starting and a passing "
             "flow at line rate, the queues toward the next switch fill and pause the previous "
             "switch, and the pauses close a cycle: every flow stops for good; the local ACK "
             "timers (code 6, 65,536 cycles) fire and nothing moves. The run ends stuck at "
             "max_cycles. Models only.",
             {"ecn": False}, 150_000, still_cycles=100_000)
    deadlock("deadlock_ring3_watchdog",
             "The deadlock of deadlock_ring3_stuck with the PFC watchdog on (10,000 cycles, "
             "40 us): a queue paused that long stops honouring the pause and drops what it "
             "holds and what arrives for it while the pauses last; the cycle breaks, the "
             "receivers NAK the gaps (or the senders time out) and go-back-N resends, the "
             "cycle forms again while the flows last and is broken again; every WRITE lands "
             "and completes. Models only.",
             {"ecn": False, "watchdog_cycles": WATCHDOG}, 2_000_000)

if __name__ == "__main__":
    main()
