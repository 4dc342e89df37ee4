#!/usr/bin/env python3
"""Writes the two-NIC PFC generation vectors (vectors/pair/rc_pfc_*.json,
rc_nopfc_*.json, without `expect`; docs/pfc_gen.md).

Like gen_pair.py it writes only vectors whose file does not exist yet: to
change one, delete its file, run this again, then `rnic bless` it and
review the diff. The host layout and the RC QPs are gen_pair_rc.py's
(`Side`); this script only adds scenarios.

The scenario: B's host is slow. It takes a write TLP on `rq_*` in
RQ_READY percent of the cycles, and with the default MPS of 256 each
272-byte MWr is 5 beats, so B places at most 51.2 * RQ_READY / 100
payload bytes a cycle, far less than the link brings (a 4096-byte frame
every 66 cycles, 62 bytes a cycle). A streams eight 64 KiB RC WRITEs on
one QP of MTU 4096 tagged VLAN PCP 3, the link 100 cycles each way
(a delay the default thresholds' headroom covers, docs/pfc_gen.md).

- rc_pfc_slow_host: B generates PFC for priority 3 with the default
  thresholds (XOFF 160, XON 128 lines), pause time and refresh period;
  its rx_buf never fills (RXBUF_FULL 0), its PFC frames pause A's
  priority 3 (A's pfc block; the testbench checks no frame of A's
  priority 3 starts inside a pause), every WRITE is placed and completed.
- rc_nopfc_slow_host: the same with PFC generation off. B's rx_buf
  fills and drops (RXBUF_FULL counts them, `config.rx_drops`: which
  frames were lost is inferred within bounds, docs/pair.md); B NAKs the
  first frame after each gap, A goes back (and its local ACK timer,
  timeout 3, resends what no NAK reports), and every WRITE is placed
  exactly once and completed.
- rc_pfc_short_headroom: PFC on, but the link is 300 cycles each way,
  beyond what the default thresholds' headroom covers: drops despite the
  pauses, recovered the same way.
"""
import gen_pair
import gen_pair_rc
from gen_pair_rc import Side

CHECK = (gen_pair_rc.CHECK + "; every PFC frame B sends decoded by the testbench's codec "
         "(wire/pfc.rs: destination, EtherType 0x8808, opcode 0x0101, B's PFCG source MAC, "
         "enable bits only for priority 3, times all PFCG.TIME for XOFF or all 0 for XON, an "
         "XON only after an XOFF) and counted against PFCG.XOFF_SENT and XON_SENT; A's frames "
         "of priority 3 never start inside a pause B's frames imposed (check_pause)")

RQ_READY = 40
DELAY = 100
PCP = 3


def write(*args, **kw):
    gen_pair.vec(*args, check=CHECK, **kw)


def slow_host(name, pfc, desc, delay=DELAY, pfc_cfg=None):
    a, b = Side("a", 151), Side("b", 152)
    # VLAN 5, PCP 3 (gen_pair_rc.Side.qp tags PCP 3).
    qa = a.qp(0, 4096, vlan=5)
    if not pfc or delay > DELAY:
        # Code 3: 8,192 cycles, above the slow host's round trip.
        qa["timeout"] = 3
    b.qp(0, 4096, vlan=5)
    for k in range(8):
        a.wqe(0, "write", 65536, src_off=0x1_0000 * k, dst_off=0x1_0000 * k)
    b.root_complex = {"rq_ready_percent": RQ_READY, "seed": 5}
    if pfc:
        b.config = {"pfc_gen": {"enable": 1 << PCP, "src_mac": "02:00:00:00:01:ff",
                                **(pfc_cfg or {})}}
    if not pfc or delay > DELAY:
        b.config = dict(b.config or {}, rx_drops=True)
    write(name, desc, a.build(plain=[0]), b.build(),
          link={"a_to_b": {"delay": delay}, "b_to_a": {"delay": delay}},
          max_cycles=2_000_000)


def every_priority():
    """The slow host once per priority: QP p tagged PCP p sends one 64 KiB
    WRITE after the one before completed, PFC generated for all eight."""
    a, b = Side("a", 161), Side("b", 162)
    for p in range(8):
        a.qp(p, 4096, vlan=5)["vlan"]["pcp"] = p
        b.qp(p, 4096, vlan=5)["vlan"]["pcp"] = p
        a.wqe(p, "write", 65536, src_off=0x1_0000 * p, dst_off=0x1_0000 * p)
    b.root_complex = {"rq_ready_percent": RQ_READY, "seed": 5}
    b.config = {"pfc_gen": {"enable": 0xFF, "src_mac": "02:00:00:00:01:ff"}}
    gen_pair.vec(
        "rc_pfc_every_priority",
        "PFC generation on every priority: the slow host of rc_pfc_slow_host (B takes write "
        "TLPs in %d %% of the cycles) receives one 64 KiB RC WRITE on each of eight QPs, QP p "
        "tagged VLAN PCP p, one after the other (each posted when the one before completed), "
        "with PFC generated for all eight priorities: B sends an XOFF and then an XON for "
        "each priority in turn, A pauses and resumes that priority, nothing is dropped "
        "(RXBUF_FULL 0), every WRITE is placed and completed" % RQ_READY,
        a.build(pace=list(range(8))), b.build(),
        link={"a_to_b": {"delay": DELAY}, "b_to_a": {"delay": DELAY}},
        max_cycles=2_000_000,
        check=CHECK.replace("enable bits only for priority 3", "enable bits only for the "
                            "priority of the frames that filled the buffer")
                   .replace("A's frames of priority 3", "A's frames of each priority"))


def main():
    gen_pair_rc.gen_qp = gen_pair.qp
    every_priority()
    slow_host(
        "rc_pfc_slow_host", True,
        "PFC generation: A streams eight 64 KiB RC WRITEs (MTU 4096, VLAN PCP 3) to B over a "
        "link of %d cycles each way; B's host takes write TLPs in %d %% of the cycles at MPS "
        "256, slower than the link. B generates PFC for priority 3 (default thresholds XOFF "
        "160, XON 128 lines, pause 65535 quanta, refresh 40000 cycles): XOFF when its rx_buf "
        "holds 160 lines of priority 3, XON below 128. A's priority 3 pauses on each XOFF and "
        "resumes on each XON; B drops nothing (RXBUF_FULL 0), places every WRITE and ACKs it; "
        "A completes all eight" % (DELAY, RQ_READY))
    slow_host(
        "rc_nopfc_slow_host", False,
        "PFC off: the run of rc_pfc_slow_host (eight 64 KiB RC WRITEs, MTU 4096, VLAN PCP 3, "
        "a link of %d cycles each way, B's host taking write TLPs in %d %% of the cycles at "
        "MPS 256) with B's PFC generation off and A's local ACK timeout 3 (8,192 cycles): "
        "B's rx_buf fills and drops whole frames (RXBUF_FULL counts them); B NAKs the first "
        "frame after each gap once, A goes back to it (go-back-N, re-reading the payload "
        "from host memory), the timer resends what no NAK reports; every WRITE is placed "
        "exactly once and all eight complete" % (DELAY, RQ_READY))
    slow_host(
        "rc_pfc_longest_refresh", True,
        "The run of rc_pfc_slow_host with B's XOFF refresh period at its largest, "
        "0xFFFFFF cycles (67 ms at 250 MHz; REFRESH's other end, 0, acts as 1): within "
        "this run no XOFF is ever refreshed, each pause of 65535 quanta (335,544 cycles) "
        "outlasts the time B stays above XON, and its XON ends it; nothing dropped, every "
        "WRITE placed and completed",
        pfc_cfg={"refresh_cycles": 0xFF_FFFF})
    # Headroom: XOFF + 2 L + 140 <= 512 lines (docs/pfc_gen.md) holds for
    # L <= 106; at 300 the frames already on the link when the XOFF
    # leaves overflow the buffer.
    slow_host(
        "rc_pfc_short_headroom", True,
        "PFC with too little headroom: the run of rc_pfc_slow_host (PFC on, default "
        "thresholds XOFF 160 / XON 128 lines) over a link of 300 cycles each way, where the "
        "headroom rule wants XOFF + 2 L + 140 = 900 lines of a 512-line buffer: the data in "
        "flight when the XOFF leaves B overflows it, rx_buf drops (RXBUF_FULL counts them), "
        "B NAKs each gap once, A goes back (timeout 3 resends what no NAK reports), and "
        "every WRITE is placed exactly once and all eight complete", delay=300)


if __name__ == "__main__":
    main()
