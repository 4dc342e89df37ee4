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

# DCQCN fast enough to act within a run of a few hundred microseconds.
FAST_CC = {"k_cycles": 1000, "t_inc_cycles": 2000, "b_bytes": 65536,
           "r_ai_mbps": 2000.0, "r_hai_mbps": 10000.0, "cnp_interval_cycles": 400}


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
    if cc:
        q["cc"] = True
    return q


def incast(name, desc, n, size, cc, switch=None, rtl=(), max_cycles=4_000_000):
    recv = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": 1},
                       {"addr": hex(PHYS1), "len": LEN1, "seed": 2}],
            "qps": [qp(0, s - 1, s, s - 1, 5000 + s, 100 * s, False) for s in range(1, n + 1)],
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
            h["cc"] = FAST_CC
        hosts.append(h)
    v = {"format": 1, "kind": "fabric", "name": name, "description": desc,
         "checked_against": CHECK, "topology": "star",
         "link": {"delay": 100, "bits_per_cycle": 400},
         "switch": switch or {}, "hosts": hosts, "max_cycles": max_cycles}
    if rtl:
        v["rtl"] = list(rtl)
    write(name, v)


def write(name, v):
    path = os.path.join(HERE, name + ".json")
    if os.path.exists(path):
        return
    os.makedirs(HERE, exist_ok=True)
    with open(path, "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")


def main():
    incast("incast_4to1_64k_rtl",
           "Incast 4->1 of 64 KiB RC WRITEs through one switch (star, links of 100 cycles, "
           "100 Gb/s): four senders at line rate into one 100 Gb/s port; the switch queues, "
           "marks CE past Kmin and pauses upstream past XOFF; DCQCN cuts each sender on the "
           "CNPs the receiver returns; every WRITE lands and completes. All five NICs run RTL "
           "and model in lockstep.",
           4, 64 * 1024, True, rtl=range(5))
    for n in (8, 16):
        incast("incast_%dto1_1m_pfc" % n,
               "Incast %d->1 of 1 MiB RC WRITEs, PFC on, ECN marking off, DCQCN off: the "
               "receiver's port queue grows to XOFF, the switch pauses the senders' ports and "
               "nothing is dropped; every WRITE lands and completes. Models only, the "
               "receiver's RTL in lockstep." % n,
               n, 1 << 20, False, switch={"ecn": False}, rtl=[0])
        incast("incast_%dto1_1m_dcqcn" % n,
               "Incast %d->1 of 1 MiB RC WRITEs, PFC on, RED/ECN marking (5 KB..200 KB, 1 %%), "
               "DCQCN on every sender: CNPs cut the senders and the queue stays shorter than "
               "with PFC alone; every WRITE lands and completes. Models only, the receiver's "
               "RTL in lockstep." % n,
               n, 1 << 20, True, rtl=[0])


if __name__ == "__main__":
    main()
