#!/usr/bin/env python3
"""Writes the receive-path vectors (vectors/rx/) and the congestion-control
vectors (vectors/cc/), without `expect`.

Like gen_tx.py (whose QP/MR/CQ/WQE helpers it uses) it writes only files
that do not exist yet; after writing, `rnic bless` the new files (bless
refuses a vector whose independent checks fail) and review the diff.

RX frames are written symbolically (docs/rx_cc.md, testbench/src/vector/rx.rs):
{"pfc": {"quanta": {"3": 500}}}, {"cnp": {"qp": 3}}, {"ack": {"qp": 2, "psn": 17}},
{"nak": ...}, {"data": {"qp": 1, "psn": 5, "len": 64, "ce": true}}, {"hex": "..."},
each with `at` (cycles after configuration), optional `count`/`every` and `fault`.
"""
import os

import gen_tx
from gen_tx import cq, mr, qp, wqe

ROOT = os.path.dirname(os.path.abspath(__file__))
CHECK_RX = ("RX counters per drop reason and kind against the class the testbench gives each "
            "frame it built from the vector (docs/rx_cc.md table); CNPs sent byte for byte against "
            "a CNP built by the testbench's encoder and, per QP, against the CE arrivals and the "
            "interval; RC completions against the ACKs sent; PFC pause windows worked out from "
            "the PFC frames' arrival cycles (no data frame of a paused priority starts); every TX "
            "frame byte for byte, every CQE, every TLP against the PCIe rules; model and RTL in "
            "lockstep")
CHECK_CC = (CHECK_RX + "; the DCQCN arithmetic itself by the model's tests against the "
            "floating-point formulas and the dcqcn block's random lockstep test")

# Scaled DCQCN timers and steps, so that a cut and its recovery to line rate
# fit in a vector of a few hundred thousand cycles (the defaults are 55 us /
# 300 us / 10 MiB / 5 and 50 Mb/s: tens of millions of cycles).
# The paper's reaction point (DCQCN_MODE 0, F 5, alpha 1.0), which these
# vectors were written for; the registers' reset values are the deployed
# DCQCN's (docs/rx_cc.md, "DCQCN as deployed").
PAPER_CC = {"dcqcn_mode": 0, "f": 5, "alpha_init": 1024}
FAST_CC = {**PAPER_CC, "k_cycles": 1000, "t_inc_cycles": 2000, "b_bytes": 65536,
           "r_ai_mbps": 2000.0, "r_hai_mbps": 10000.0, "cnp_interval_cycles": 400}


def write(sub, name, v):
    d = os.path.join(ROOT, sub)
    os.makedirs(d, exist_ok=True)
    gen_tx.HERE = d
    gen_tx.CHECK = CHECK_CC if sub == "cc" else CHECK_RX
    gen_tx.vec(name, v.pop("description"), v.pop("qps"), v.pop("wqes", []), **v)


def rx(at, frame, count=1, every=0, fault=None):
    r = {"at": at, "frame": frame}
    if count != 1:
        r["count"], r["every"] = count, every
    if fault is not None:
        r["fault"] = fault
    return r


def pfc(quanta):
    return {"pfc": {"quanta": {str(p): q for p, q in quanta.items()}}}


def stream(q, kbytes, off=0):
    """One signaled UC WRITE of `kbytes` KiB from QP q."""
    return wqe(q, "write", kbytes * 1024, off=off)


def pfc_vectors():
    # Each priority: a VLAN QP on priority p streams 32 KiB at MTU 1024; a
    # PFC frame pauses p for 500 quanta (640 cycles at 400 bits/cycle) mid-stream.
    for p in range(8):
        write("rx", "pfc_prio%d" % p, dict(
            description="PFC pause of priority %d for 500 quanta (640 cycles) while a VLAN QP "
                        "with PCP %d streams 32 KiB: no new frame of it starts from 4 cycles "
                        "after the PFC frame's last beat until the pause ends, then it resumes" % (p, p),
            qps=[qp(0, "uc", vlan=(10, p))], wqes=[stream(0, 32)],
            rx=[rx(450, pfc({p: 500}))]))
    write("rx", "pfc_quanta_0", dict(
        description="A pause of 65535 quanta, then a PFC frame with quanta 0 for the same "
                    "priority 300 cycles later: the pause ends at once (replace, 0 resumes)",
        qps=[qp(0, "uc", vlan=(10, 3))], wqes=[stream(0, 32)],
        rx=[rx(450, pfc({3: 65535})), rx(750, pfc({3: 0}))]))
    write("rx", "pfc_quanta_1", dict(
        description="Pauses of 1 quantum (512 bit times = 2 cycles at 400 bits/cycle), "
                    "20 of them 97 cycles apart, on a streaming priority",
        qps=[qp(0, "uc", vlan=(10, 2))], wqes=[stream(0, 32)],
        rx=[rx(400, pfc({2: 1}), count=20, every=97)]))
    write("rx", "pfc_quanta_65535", dict(
        description="The longest pause, 65535 quanta = 33,553,920 bit times = 83,885 cycles "
                    "at 100 Gb/s / 250 MHz (~335 us), then the stream resumes",
        qps=[qp(0, "uc", vlan=(10, 5))], wqes=[stream(0, 16)],
        rx=[rx(400, pfc({5: 65535}))], max_cycles=200_000))
    write("rx", "pfc_refresh", dict(
        description="A pause of 500 quanta refreshed by a second one 400 cycles later, before "
                    "it expires (640 cycles): the pause runs 640 cycles from the second frame",
        qps=[qp(0, "uc", vlan=(10, 4))], wqes=[stream(0, 32)],
        rx=[rx(450, pfc({4: 500})), rx(850, pfc({4: 500}))]))
    write("rx", "pfc_mid_frame", dict(
        description="PFC frames arriving while 4096-byte frames of the paused priority are on "
                    "the wire (65 beats each, back to back): the frame in flight finishes "
                    "(tvalid never drops inside a frame), the next one waits",
        qps=[qp(0, "uc", mtu=4096, vlan=(10, 3))], wqes=[stream(0, 64)],
        rx=[rx(500 + 211 * k, pfc({3: 100})) for k in range(6)]))
    write("rx", "pfc_multi", dict(
        description="One PFC frame pausing priorities 1 and 5 (QPs 0 and 1, both streaming) "
                    "for 800 quanta; 450 cycles later priority 5 alone resumes (quanta 0)",
        qps=[qp(0, "uc", vlan=(10, 1)), qp(1, "uc", vlan=(11, 5))],
        wqes=[stream(0, 16), stream(1, 16, off=0x8000)],
        rx=[rx(450, pfc({1: 800, 5: 800})), rx(900, pfc({5: 0}))]))
    write("rx", "pfc_others_full_rate", dict(
        description="Priority 3 paused for 5000 quanta (6400 cycles) before its QP has work; "
                    "QP 1 on priority 0 streams 64 KiB at full rate meanwhile, QP 0's frames "
                    "wait until the pause ends",
        qps=[qp(0, "uc", vlan=(10, 3)), qp(1, "uc", vlan=(11, 0))],
        wqes=[stream(0, 8), stream(1, 64, off=0x10000)],
        doorbells=[{"at": 0, "qp": 1, "wqes": 1}, {"at": 300, "qp": 0, "wqes": 1}],
        rx=[rx(100, pfc({3: 5000}))]))


def ack_vectors():
    # RC QP 0 at PSN 7: four signaled 1 KiB WRITEs at MTU 1024 are PSNs 7..10.
    four = [wqe(0, "write", 1024, off=0x1000 * k) for k in range(4)]
    write("rx", "ack_cumulative", dict(
        description="Four RC WRITEs (PSN 7..10), each acknowledged by its own ACK in order: "
                    "four successful CQEs in WQE order",
        qps=[qp(0, "rc", psn=7)], wqes=four,
        rx=[rx(1500 + 50 * k, {"ack": {"qp": 0, "psn": 7 + k, "msn": k + 1}}) for k in range(4)]))
    four = [wqe(0, "write", 1024, off=0x1000 * k) for k in range(4)]
    write("rx", "ack_coalesced", dict(
        description="Four RC WRITEs (PSN 7..10) acknowledged by one coalesced ACK of PSN 10: "
                    "four CQEs",
        qps=[qp(0, "rc", psn=7)], wqes=four,
        rx=[rx(1500, {"ack": {"qp": 0, "psn": 10, "msn": 4}})]))
    four = [wqe(0, "write", 1024, off=0x1000 * k) for k in range(4)]
    write("rx", "ack_duplicate", dict(
        description="ACK of PSN 8, the same ACK again and a stale ACK of PSN 7: one new ACK, "
                    "two duplicates ignored; two CQEs, WRITEs 3 and 4 stay unacknowledged",
        qps=[qp(0, "rc", psn=7)], wqes=four,
        rx=[rx(1500, {"ack": {"qp": 0, "psn": 8}}), rx(1600, {"ack": {"qp": 0, "psn": 8}}),
            rx(1700, {"ack": {"qp": 0, "psn": 7}})]))
    four = [wqe(0, "write", 1024, off=0x1000 * k) for k in range(4)]
    write("rx", "ack_nak", dict(
        description="A NAK (PSN sequence error) and an RNR NAK are counted and change nothing "
                    "(retransmission is the next issue); an ACK of PSN 8 completes two WRITEs",
        qps=[qp(0, "rc", psn=7)], wqes=four,
        rx=[rx(1500, {"nak": {"qp": 0, "psn": 9}}), rx(1550, {"nak": {"qp": 0, "psn": 9, "rnr": True, "code": 3}}),
            rx(1600, {"ack": {"qp": 0, "psn": 8}})]))
    write("rx", "ack_psn_wrap", dict(
        description="RC WRITEs across the 24-bit PSN wrap (PSN 0xFFFFFE, 0xFFFFFF, 0, 1) and "
                    "one ACK of PSN 1: all four are covered in the modular window",
        qps=[qp(0, "rc", psn=0xFFFFFE)], wqes=[wqe(0, "write", 1024, off=0x1000 * k) for k in range(4)],
        rx=[rx(1500, {"ack": {"qp": 0, "psn": 1}})]))
    write("rx", "ack_error_waits", dict(
        description="Two signaled RC WRITEs, a WQE with a bad lkey and one more: the error and "
                    "flush CQEs wait behind the unacknowledged WRITEs and come after them once "
                    "the ACK arrives 2000 cycles later (CQEs in WQE order per QP)",
        qps=[qp(0, "rc", psn=7)],
        wqes=[wqe(0, "write", 1024), wqe(0, "write", 1024, off=0x1000),
              wqe(0, "write", 64, lkey=0x1231), wqe(0, "send", 64)],
        rx=[rx(2000, {"ack": {"qp": 0, "psn": 8}})]))
    write("rx", "ack_auto_peer", dict(
        description="RC SEND, SEND+Imm, WRITE and WRITE+Imm messages of 0..5000 bytes on two "
                    "QPs (IPv4 and IPv6+VLAN), acknowledged by a peer that ACKs every AckReq "
                    "packet it receives in PSN order: every signaled message completes, the "
                    "unsignaled ones do not",
        qps=[qp(0, "rc", psn=100), qp(1, "rc", ipv6=True, vlan=(7, 2), mtu=2048, psn=0xFFFFF0)],
        wqes=[wqe(q, op, n, off=0x2000 * k + 0x40000 * q, signaled=(k != 2))
              for q in (0, 1) for k, (op, n) in enumerate(
                  [("send", 0), ("send_imm", 100), ("write", 5000), ("write_imm", 2048), ("send", 4097)])],
        peer={"auto_ack": True, "ack_delay": 80}))
    # The first RC completions ack_tracker retires come due in one cycle:
    # the ACKs of QP 15 and QP 0 arrive back to back while UC completions,
    # which go first, hold its output (a slow host takes the CQE writes).
    # Cycle 150 found by trying 100..1190 in steps of 10.
    write("rx", "ack_first_retire_two_qps", dict(
        description="One signaled zero-length RC WRITE on QP 0 (PSN 7) and one on QP 15 (PSN "
                    "70), and four signaled zero-length UC WRITEs on QP 1, with a host that "
                    "takes requests 10 % of the cycles; the ACKs of PSN 70 and PSN 7 arrive at "
                    "cycles 150 and 151, while UC completions hold ack_tracker's output: the "
                    "two RC completions, the first it retires, are due in the same cycle and "
                    "leave in round-robin order from QP 0 (QP 0's CQE before QP 15's)",
        qps=[qp(0, "rc", psn=7), qp(1, "uc"), qp(15, "rc", psn=70)],
        wqes=[wqe(0, "write", 0, off=0x100)]
        + [wqe(1, "write", 0, off=0x1000 + 0x100 * k) for k in range(4)]
        + [wqe(15, "write", 0, off=0x8000)],
        root_complex={"latency": 100, "rcb": 64, "cpl_size": 256, "split": "aligned",
                      "reorder": False, "seed": 3, "rq_ready_percent": 10, "faults": []},
        rx=[rx(150, {"ack": {"qp": 15, "psn": 70, "msn": 1}}),
            rx(151, {"ack": {"qp": 0, "psn": 7, "msn": 1}})]))
    # PSN 7..14: eight signaled 1 KiB WRITEs; the fifth one's payload read
    # fails, so its frame (PSN 11) is dropped and the peer ACKs 7..10 only,
    # NAKs 11 at the gap and stops: WRITEs 5..8 stay outstanding (PSN 11..14).
    gap = [wqe(0, "write", 1024, off=0x1000 * k) for k in range(8)]
    write("rx", "ack_beyond_window", dict(
        description="Eight RC WRITEs (PSN 7..14) to an ACKing peer; the fifth one's payload "
                    "read fails (UR), so its frame is dropped and the peer acknowledges 7..10, "
                    "NAKs 11 and stops: four signaled WRITEs stay outstanding (PSN 11..14). "
                    "Then an ACK far beyond anything sent (PSN 1011), an ACK exactly 2^23 ahead "
                    "of the first outstanding PSN (11 + 2^23) and a NAK outside the window "
                    "(PSN 111): none names a PSN that was sent, so each is ignored and counted "
                    "in ack_invalid; four CQEs, the outstanding WRITEs never complete",
        qps=[qp(0, "rc", psn=7)], wqes=gap,
        root_complex={"latency": 100, "rcb": 64, "cpl_size": 256, "split": "aligned",
                      "reorder": False, "seed": 1, "rq_ready_percent": 100,
                      "faults": [{"addr": hex(gen_tx.PHYS + 0x4000), "len": 16, "kind": "ur"}]},
        rx=[rx(5000, {"ack": {"qp": 0, "psn": 7 + 4 + 1000}}),
            rx(5100, {"ack": {"qp": 0, "psn": 7 + 4 + (1 << 23)}}),
            rx(5200, {"nak": {"qp": 0, "psn": 7 + 4 + 100}})],
        peer={"auto_ack": True}))


def drop_vectors():
    # Frames to QP 1 (RTS); QP 3 is in RESET. After each bad frame a good
    # ACK follows, so a parser left in a bad state would miscount it.
    qps = [qp(1, "rc", psn=0), qp(3, "rc", state="reset"), qp(2, "rc", ipv6=True, vlan=(9, 1))]
    arp = ("ffffffffffff020000000001" "0806" "0001080006040001" "020000000001" "0a000001"
           "000000000000" "0a000002")
    good = {"ack": {"qp": 1, "psn": 0}}
    cases = [
        ("fcs", "a CNP and an ACK flagged with an FCS error by the MAC (rx_tuser)",
         [rx(100, {"cnp": {"qp": 1}}, fault="fcs"), rx(200, good, fault="fcs")]),
        ("runt", "an ARP request of 42 bytes and an ACK cut to 59 bytes (below 60)",
         [rx(100, {"hex": arp}), rx(200, good, fault={"truncate": 59})]),
        ("not_roce", "ARP padded to 60 bytes, UDP to port 4792, IPv4 protocol TCP, MAC control "
                     "0x8808 with an opcode other than PFC, EtherType 0x88B5",
         [rx(100, {"hex": arp + "00" * 18}),
          rx(200, good, fault={"udp_dport": 4792}),
          rx(300, {"hex": "020000000001020000000101080045000028000040004006" "0000" "0a0001020a000001"
                           + "00" * 26}),
          rx(400, {"hex": "0180c2000001020000000001880800010000" + "00" * 42}),
          rx(500, {"hex": "020000000001020000000101" "88b5" + "ab" * 46})]),
        ("trunc", "a data packet cut to 70 bytes (IP length beyond the frame) and an IPv6 "
                  "CNP cut inside its reserved bytes",
         [rx(100, {"data": {"qp": 1, "psn": 3, "len": 64}}, fault={"truncate": 70}),
          rx(200, {"cnp": {"qp": 2}}, fault={"truncate": 90})]),
        ("ip_csum", "an ACK and a CNP with a wrong IPv4 header checksum",
         [rx(100, good, fault="ip_checksum"), rx(200, {"cnp": {"qp": 1}}, fault="ip_checksum")]),
        ("icrc", "a wrong ICRC, and a covered byte (the PSN) changed after the ICRC was computed, "
                 "on IPv4 and IPv6+VLAN",
         [rx(100, good, fault="icrc"), rx(200, {"data": {"qp": 1, "psn": 9, "len": 200}}, fault="covered_byte"),
          rx(300, {"cnp": {"qp": 2}}, fault="icrc"), rx(400, {"data": {"qp": 2, "psn": 1, "len": 8}}, fault="covered_byte")]),
        ("opcode", "unknown BTH opcodes 0x1F and 0x40, and TVer 1",
         [rx(100, {"data": {"qp": 1, "psn": 1, "len": 16, "opcode": 0x1F}}),
          rx(200, {"data": {"qp": 1, "psn": 2, "len": 16, "opcode": 0x40}}),
          rx(300, good, fault={"tver": 1})]),
        ("qp", "DestQP 40 (no such QP), DestQP 0x123456, and frames for QP 3 in RESET",
         [rx(100, good, fault={"dest_qp": 40}), rx(200, {"cnp": {"qp": 1}}, fault={"dest_qp": 0x123456}),
          rx(300, {"ack": {"qp": 3, "psn": 0}}), rx(400, {"cnp": {"qp": 3}})]),
    ]
    for name, what, frames in cases:
        rxs = []
        for k, f in enumerate(frames):
            rxs.append(f)
            rxs.append(rx(f["at"] + 40, good))
        write("rx", "drop_" + name, dict(
            description="Dropped and counted as %s: %s; each followed by a well-formed ACK, "
                        "which must still be received (no state corrupted; QP 1 has sent "
                        "nothing, so ack_tracker counts it in ack_invalid)" % (name.upper(), what),
            qps=qps, wqes=[], rx=rxs))
    every = []
    for _, _, frames in cases:
        every += [dict(f, at=0) for f in frames]
    write("rx", "drop_all_back_to_back", dict(
        description="One frame of every drop reason, each followed by a well-formed ACK (for "
                    "QP 1, which has sent nothing: ack_invalid), all back to back (no idle "
                    "cycle): each lands in its own counter",
        qps=qps, wqes=[],
        rx=[x for f in every for x in (f, rx(0, {"ack": {"qp": 1, "psn": 0}}))]))


def line_rate_vectors():
    qps = [qp(1, "rc", psn=0)]
    write("rx", "line_rate_min", dict(
        description="500 back-to-back minimum-size frames, one beat each, a beat every cycle: "
                    "PFC frames (60 bytes, quanta 0) and ACKs (62 bytes) alternating; none dropped",
        qps=qps, wqes=[],
        rx=[rx(100, pfc({7: 0}), count=250, every=0 + 2), rx(101, {"ack": {"qp": 1, "psn": 0}}, count=250, every=2)]))
    write("rx", "line_rate_max", dict(
        description="40 back-to-back maximum-size RoCE packets (4096-byte payload, 4158-byte "
                    "frames, 65 beats, IPv4) for QP 1, every fifth CE-marked: none dropped",
        qps=qps + [qp(2, "uc")], wqes=[],
        rx=[rx(100, {"data": {"qp": 1, "psn": k, "len": 4096, "ce": k % 5 == 0}}) for k in range(40)],
        cc={**PAPER_CC, "b_bytes": 10 << 20, "cnp_interval_cycles": 1}))


def cc_vectors():
    big = lambda q, kb, off=0: wqe(q, "write", kb * 1024, off=off)
    write("cc", "cnp_single", dict(
        description="One CNP for a QP streaming 512 KiB with DCQCN on: Rc halves (alpha 1.0), "
                    "Rt keeps the old rate, alpha moves to (1-g)+g; the rate limiter slows the "
                    "stream, timers and the byte counter bring it back",
        qps=[dict(qp(0, "uc", mtu=4096), cc=True)], wqes=[big(0, 512)],
        rx=[rx(2000, {"cnp": {"qp": 0}})], cc=dict(FAST_CC), max_cycles=400_000))
    write("cc", "cnp_storm_recovery", dict(
        description="A storm of 30 CNPs 300 cycles apart on a QP streaming 2 MiB, then recovery "
                    "through fast recovery, additive and hyper increase back to line rate "
                    "(scaled timers: K 1000, T_INC 2000 cycles, B 64 KiB, R_AI 2 Gb/s, "
                    "R_HAI 10 Gb/s)",
        qps=[dict(qp(0, "uc", mtu=4096), cc=True)], wqes=[big(0, 1024), big(0, 1024, off=0x10_0000)],
        rx=[rx(2000, {"cnp": {"qp": 0}}, count=30, every=300)], cc=dict(FAST_CC),
        max_cycles=1_500_000))
    write("cc", "cnp_storm_deployed", dict(
        description="The storm of cnp_storm_recovery on the deployed reaction point (DCQCN_MODE "
                    "and F, B, alpha at their reset values, scaled T_INC 2000 cycles, B 64 KiB, "
                    "R_AI 2 Gb/s, R_HAI 10 Gb/s): 30 CNPs 300 cycles apart are cut once per "
                    "1000-cycle monitor period, alpha moves on its 250-cycle period, rt stays "
                    "at a cut with no increase since the last, then one fast-recovery step, "
                    "additive and hyper increases",
        qps=[dict(qp(0, "uc", mtu=4096), cc=True)], wqes=[big(0, 1024), big(0, 1024, off=0x10_0000)],
        rx=[rx(2000, {"cnp": {"qp": 0}}, count=30, every=300)],
        cc={"t_inc_cycles": 2000, "b_bytes": 65536, "r_ai_mbps": 2000.0, "r_hai_mbps": 10000.0,
            "cnp_interval_cycles": 400},
        max_cycles=1_500_000))
    write("cc", "cnp_two_qps_deployed", dict(
        description="Two QPs streaming 512 KiB each with DCQCN on, deployed reaction point "
                    "(as cnp_storm_deployed): 12 CNPs for each, QP 1's 150 cycles after QP "
                    "0's, so that a monitor period ends with both QPs' cuts due and every "
                    "alpha period ends with both QPs' updates due in the same cycle: the "
                    "shared update datapath serves them one a cycle, round robin from the "
                    "QP after the last served",
        qps=[dict(qp(0, "uc", mtu=4096), cc=True), dict(qp(1, "uc", mtu=4096), cc=True)],
        wqes=[big(0, 512), big(1, 512, off=0x10_0000)],
        rx=[rx(2000, {"cnp": {"qp": 0}}, count=12, every=300),
            rx(2150, {"cnp": {"qp": 1}}, count=12, every=300)],
        cc={"t_inc_cycles": 2000, "b_bytes": 65536, "r_ai_mbps": 2000.0, "r_hai_mbps": 10000.0,
            "cnp_interval_cycles": 400},
        max_cycles=1_500_000))
    write("cc", "cnp_idle_qp", dict(
        description="CNPs for a QP with DCQCN on and no traffic: the rate is cut anyway; with "
                    "no bytes sent only the timer stages advance (fast recovery then additive "
                    "increase, never hyper)",
        qps=[dict(qp(0, "uc"), cc=True)], wqes=[],
        rx=[rx(100, {"cnp": {"qp": 0}}, count=3, every=500)], cc=dict(FAST_CC),
        min_cycles=60_000, max_cycles=200_000))
    write("cc", "cnp_cc_disabled", dict(
        description="CNPs for a QP without DCQCN: counted by the reaction point, no rate cut, "
                    "the stream keeps its pace",
        qps=[qp(0, "uc")], wqes=[big(0, 64)],
        rx=[rx(800, {"cnp": {"qp": 0}}, count=4, every=200)], cc=dict(FAST_CC)))
    write("cc", "ecn_one_of_many", dict(
        description="Data packets for four QPs, only QP 2's CE-marked: exactly QP 2 answers "
                    "with CNPs (DestQP = its remote QP, DSCP 48, PCP 6 on its VLAN, not ECT)",
        qps=[qp(0, "rc"), qp(1, "rc", ipv6=True), qp(2, "rc", vlan=(5, 1)), qp(3, "uc")], wqes=[],
        rx=[rx(100 + 600 * k, {"data": {"qp": q, "psn": k, "len": 256, "ce": q == 2}})
            for k in range(4) for q in range(4)], cc=dict(FAST_CC)))
    write("cc", "cnp_first_cnp_release", dict(
        description="DCQCN_MODE 0x04 (FIRST_CNP alone, cuts immediate as in the paper): one "
                    "CNP for a QP with DCQCN on and no traffic starts it (alpha and timers "
                    "from their initial state), the timer stages bring Rc back up to R_MAX, "
                    "and the QP is released there (Rc = Rt = R_MAX, alpha back to its initial "
                    "value, no more increase events): the increase counters stop",
        qps=[dict(qp(0, "uc"), cc=True)], wqes=[],
        rx=[rx(100, {"cnp": {"qp": 0}})], cc=dict(FAST_CC, dcqcn_mode=4),
        min_cycles=150_000, max_cycles=400_000))
    write("cc", "ecn_interval", dict(
        description="60 CE-marked packets 50 cycles apart for one QP with a 400-cycle CNP "
                    "interval: a CNP at most every 400 cycles, the others suppressed and counted",
        qps=[qp(1, "rc")], wqes=[],
        rx=[rx(100, {"data": {"qp": 1, "psn": 0, "len": 32, "ce": True}}, count=60, every=50)],
        cc=dict(FAST_CC)))


CHECK_RESP = (CHECK_RX + "; the responder's effects predicted by resp_reference from the frames' "
              "bytes: host writes and every MR's final contents, ACK/NAK frames byte for byte "
              "and as a coalescing of the required ones, RECV CQEs and flushes, CTRL.STATE ERROR")

RVA = gen_tx.VA  # MR 0: local_write, remote_write, remote_read, key 0x1230


def rqp(n, kind="rc", epsn=0, mtu=256, remote_access_override=None, **kw):
    """A receiving QP: RQ ring, remote write (or the rights given), RECV
    completions in CQ 1."""
    q = qp(n, kind, mtu=mtu, **kw)
    q.update({"epsn": epsn, "rq": {"base": hex(0x3000_0000 + 0x1_0000 * n), "log_size": 4},
              "rq_cq": 1, "remote_access": remote_access_override or ["remote_write"],
              "min_rnr_timer": 9})
    return q


def recv(n, wr_id, sges, num_sge=None):
    r = {"qp": n, "wr_id": hex(wr_id),
         "sges": [{"addr": hex(RVA + o), "len": ln, "lkey": hex(gen_tx.KEY0)} for o, ln in sges]}
    if num_sge is not None:
        r["num_sge"] = num_sge
    return r


def data(at, n, psn, op, ln=0, reth=None, imm=None):
    d = {"qp": n, "psn": psn, "len": ln, "opcode": op}
    if reth:
        d["reth"] = {"va": hex(RVA + reth[0]), "rkey": hex(reth[1]), "len": reth[2]}
    if imm is not None:
        d["imm"] = hex(imm)
    return rx(at, {"data": d})


def resp_write(name, v):
    gen_tx.HERE = os.path.join(ROOT, "rx")
    gen_tx.CHECK = CHECK_RESP
    v.setdefault("cqs", [cq(0), cq(1)])
    gen_tx.vec(name, v.pop("description"), v.pop("qps"), v.pop("wqes", []), **v)


def resp_vectors():
    k = gen_tx.KEY0
    # RC: in order, a duplicate, a WRITE of three packets, a PSN gap (one
    # NAK, then silence), the missing PSN, a SEND with immediate of 0
    # bytes, a two-packet SEND over two scatter entries.
    resp_write("resp_rc_sequence", dict(
        description="Scripted RC requests to QP 0 (ePSN 10, MTU 256): SEND ONLY (ACK), the same "
                    "SEND again (a duplicate: ACK of ePSN - 1, not executed), WRITE FIRST/MIDDLE/"
                    "LAST of 600 bytes at an unaligned VA, a packet 6 PSNs ahead (one sequence NAK "
                    "for PSN 14) and another (silent), PSN 14 SEND ONLY with immediate and no "
                    "payload (RECV completion with the immediate flagged), a SEND FIRST/LAST of "
                    "266 bytes scattered over two entries",
        qps=[rqp(0, epsn=10)],
        recvs=[recv(0, 0xA1, [(0x1_0001, 200)]), recv(0, 0xA2, [(0x1_1000, 8)]),
               recv(0, 0xA3, [(0x1_2003, 100), (0x1_3005, 300)])],
        rq_doorbells=[{"at": 0, "qp": 0, "recvs": 3}],
        rx=[data(600, 0, 10, 0x04, 100), data(1000, 0, 10, 0x04, 100),
            data(1400, 0, 11, 0x06, 256, reth=(0x2_0007, k, 600)), data(1500, 0, 12, 0x07, 256),
            data(1600, 0, 13, 0x08, 88), data(1700, 0, 20, 0x04, 4), data(1800, 0, 21, 0x04, 4),
            data(2200, 0, 14, 0x05, 0, imm=0xFEEDF00D), data(2800, 0, 15, 0x00, 256),
            data(2900, 0, 16, 0x02, 10)],
        max_cycles=100_000))
    # UC: no ACKs; a gap drops the rest of the message, FIRST/ONLY restart.
    resp_write("resp_uc_drops", dict(
        description="Scripted UC requests to QP 1 (MTU 256): SEND FIRST, then a MIDDLE with a PSN "
                    "gap (the rest of the message is dropped, its RECV stays consumed without a "
                    "completion), a SEND ONLY at any PSN (executed into the next RECV), a WRITE ONLY "
                    "with immediate (placed, a RECV completed with opcode 129), a WRITE ONLY; no "
                    "ACK is ever sent",
        qps=[rqp(1, "uc", epsn=5)],
        recvs=[recv(1, 0xB1, [(0x4_0000, 1024)]), recv(1, 0xB2, [(0x4_1000, 64)]),
               recv(1, 0xB3, [(0x4_2000, 8)])],
        rq_doorbells=[{"at": 0, "qp": 1, "recvs": 3}],
        rx=[data(600, 1, 5, 0x20, 256), data(700, 1, 7, 0x21, 256), data(800, 1, 8, 0x22, 20),
            data(1400, 1, 30, 0x24, 60),
            data(2000, 1, 31, 0x2B, 40, reth=(0x5_0001, k, 40), imm=0x1234),
            data(2100, 1, 32, 0x2A, 33, reth=(0x5_1003, k, 33))],
        max_cycles=100_000))
    # RC errors, one QP each: bad rkey, opcode order, a RECV with 5 entries.
    resp_write("resp_rc_errors", dict(
        description="Scripted RC errors: QP 0 a WRITE ONLY whose rkey names no MR (remote access "
                    "NAK, ERROR, its two RECVs flushed with status 5, a later SEND dropped "
                    "silently); QP 1 a WRITE MIDDLE with no FIRST (invalid request NAK, ERROR); "
                    "QP 2 a SEND into a RECV whose entry count is 5 (the RECV completed with "
                    "status 2, remote operational NAK, ERROR)",
        qps=[rqp(0, epsn=100), rqp(1, epsn=200), rqp(2, epsn=300)],
        recvs=[recv(0, 0xC1, [(0x6_0000, 64)]), recv(0, 0xC2, [(0x6_1000, 64)]),
               recv(2, 0xC3, [(0x6_2000, 64)], num_sge=5)],
        rq_doorbells=[{"at": 0, "qp": 0, "recvs": 2}, {"at": 0, "qp": 2, "recvs": 1}],
        rx=[data(600, 0, 100, 0x0A, 16, reth=(0x7_0000, 0x1231, 16)), data(900, 0, 101, 0x04, 8),
            data(650, 1, 200, 0x07, 256), data(700, 2, 300, 0x04, 16)],
        max_cycles=100_000))

    # READ responder: every response shape, a duplicate READ, and the
    # checks a READ makes (rights, length 0).
    resp_write("resp_rc_read", dict(
        description="Scripted RC READ requests to QP 0 (ePSN 50, MTU 256, remote read and write), "
                    "answered by rd_resp and tx_engine: 600 bytes at an unaligned VA (FIRST, "
                    "MIDDLE, LAST at PSNs 50-52, AETH MSN 1 on FIRST and LAST), length 0 (ONLY, "
                    "no payload, no key check), a WRITE ONLY (ACK), 1 byte, exactly one MTU, one "
                    "MTU + 1 (FIRST, LAST), then the first READ again (a duplicate: answered again "
                    "from host memory with its own PSNs, ePSN and MSN unchanged); QP 1 (IPv6, "
                    "VLAN, MTU 1024) a 2,500-byte READ (three packets of its MTU) and a READ "
                    "without the remote read right (remote access NAK, ERROR); QP 2 (MTU 4096) a "
                    "12,288-byte READ, three full packets",
        qps=[rqp(0, epsn=50, remote_access_override=["remote_read", "remote_write"]),
             rqp(1, epsn=7, mtu=1024, ipv6=True, vlan=(5, 3),
                 remote_access_override=["remote_read"]),
             rqp(2, epsn=0xFFFFFE, mtu=4096, remote_access_override=["remote_read"])],
        rx=[data(600, 0, 50, 0x0C, reth=(0x8_0003, k, 600)),
            data(800, 0, 53, 0x0C, reth=(0, 0x9999, 0)),
            data(1000, 0, 54, 0x0A, 100, reth=(0x9_0000, k, 100)),
            data(1200, 0, 55, 0x0C, reth=(0xA_0001, k, 1)),
            data(1400, 0, 56, 0x0C, reth=(0xA_1000, k, 256)),
            data(1600, 0, 57, 0x0C, reth=(0xA_2005, k, 257)),
            data(2400, 0, 50, 0x0C, reth=(0x8_0003, k, 600)),
            data(700, 1, 7, 0x0C, reth=(0xB_0000, k, 2500)),
            data(1900, 1, 10, 0x0C, reth=(0xB_4000, 0x1231, 64)),
            data(900, 2, 0xFFFFFE, 0x0C, reth=(0xC_0000, k, 12288))],
        max_cycles=100_000))


def main():
    pfc_vectors()
    ack_vectors()
    drop_vectors()
    line_rate_vectors()
    cc_vectors()
    resp_vectors()


if __name__ == "__main__":
    main()
