#!/usr/bin/env python3
"""Writes the transmit-path vectors in vectors/tx/ (without `expect`).

Like gen_dma.py it writes only vectors whose file does not exist yet: to
change a scenario, delete its file and run this again, then `rnic bless`
the new files (bless refuses a vector whose independent checks fail) and
review the diff.

Memory layout shared by the scenarios: payload buffers in one 2 MiB
physical region filled with a seeded pattern, registered as MR 0 at a
virtual address far from it (so a VA/PA mix-up shows); SQ rings at
0x1000_0000 + 64 KiB * qp; CQ rings at 0x2000_0000 + 64 KiB * cq.
"""
import json
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tx")
CHECK = ("every frame byte for byte against a frame built by the testbench from "
         "the WQE, the QP context and host memory (headers, PSN sequence per QP, "
         "payload, ICRC with the crc32fast crate), frames decoded and ICRC-checked "
         "by scapy (tests/scapy_roce_check.py), every CQE in host memory against "
         "completions worked out from the WQEs and tables (status, order per QP, "
         "owner bit), every TLP against the PCIe rules; model and RTL in lockstep")
PHYS = 0x10_0000
VA = 0x7F00_0000_0000
MR_LEN = 0x20_0000
KEY0 = 0x1230  # entry 0


def mr(index=0, key=KEY0, va=VA, length=MR_LEN, pbase=PHYS, access=None, pd=1, valid=True):
    m = {"index": index, "key": hex(key), "va": hex(va), "len": hex(length),
         "pbase": hex(pbase), "pd": pd,
         "access": access if access is not None else ["local_write", "remote_write", "remote_read"]}
    if not valid:
        m["valid"] = False
    return m


def qp(n, kind="uc", mtu=1024, ipv6=False, vlan=None, psn=None, cq=0, dscp=26, ecn=True,
       sq_log=6, state=None, pd=1):
    q = {"qp": n, "type": kind, "remote_qpn": 0x100 + n, "psn": psn if psn is not None else 1000 * n + 7,
         "mtu": mtu, "pd": pd, "cq": cq,
         "dst_mac": "02:00:00:00:01:%02x" % n, "src_mac": "02:00:00:00:00:%02x" % n,
         "udp_sport": 49152 + n, "dscp": dscp, "ecn": ecn,
         "sq": {"base": hex(0x1000_0000 + 0x1_0000 * n), "log_size": sq_log}}
    if ipv6:
        q["ip"] = {"ipv6": {"src": "fd00::1:%x" % n, "dst": "fd00::2:%x" % n}}
    else:
        q["ip"] = {"ipv4": {"src": "10.0.0.%d" % (n + 1), "dst": "10.0.1.%d" % (n + 1)}}
    if vlan:
        q["vlan"] = {"vid": vlan[0], "pcp": vlan[1]}
    if state:
        q["state"] = state
    return q


def cq(n=0, log=8):
    return {"cq": n, "ring": {"base": hex(0x2000_0000 + 0x1_0000 * n), "log_size": log}}


def wqe(q, op, length, off=0, wr_id=None, lkey=KEY0, imm=0, signaled=True, solicited=False,
        raddr=0x5_0000_0000, rkey=0xABCD):
    wqe.count += 1
    return {"qp": q, "opcode": op, "wr_id": hex(wr_id if wr_id is not None else 0x1000 + wqe.count),
            "len": length, "laddr": hex(VA + off), "lkey": hex(lkey),
            "raddr": hex(raddr + off), "rkey": hex(rkey), "imm": hex(imm or (0xC0DE0000 + wqe.count)),
            "signaled": signaled, "solicited": solicited}


wqe.count = 0


def vec(name, desc, qps, wqes, doorbells=None, mrs=None, cqs=None, max_cycles=400_000, **kw):
    if doorbells is None:
        # One doorbell per QP posting all its WQEs.
        doorbells = []
        for q in qps:
            n = sum(1 for w in wqes if w["qp"] == q["qp"])
            if n:
                doorbells.append({"at": 0, "qp": q["qp"], "wqes": n})
    v = {"format": 1, "name": name, "description": desc, "checked_against": CHECK,
         "top": "rnic_top",
         "memory": [{"addr": hex(PHYS), "len": MR_LEN, "seed": 7}],
         "qps": qps, "mrs": mrs if mrs is not None else [mr()],
         "cqs": cqs if cqs is not None else [cq()],
         "wqes": wqes, "doorbells": doorbells}
    v.update(kw)
    v["max_cycles"] = max_cycles
    path = os.path.join(HERE, name + ".json")
    if os.path.exists(path):
        return
    with open(path, "w") as f:
        json.dump(v, f, indent=2)
        f.write("\n")


OPS = ["send", "send_imm", "write", "write_imm"]


def main():
    os.makedirs(HERE, exist_ok=True)
    # Every opcode, RC and UC, at the segmentation edges of MTU 1024.
    for kind in ["rc", "uc"]:
        for op in OPS:
            ws = [wqe(0, op, n, off=0x1000 * k, solicited=(k % 2 == 1))
                  for k, n in enumerate([0, 1, 1023, 1024, 1025, 3000])]
            vec("tx_%s_%s" % (kind, op),
                "%s %s messages of 0, 1, MTU-1, MTU, MTU+1 and ~3 MTU bytes (MTU 1024): "
                "ONLY / FIRST-MIDDLE-LAST opcodes, PSN per packet, RETH and ImmDt placement, "
                "SE on the last packet of solicited messages%s"
                % (kind.upper(), op.upper().replace("_", "+"),
                   ", one CQE per signaled message once its last frame left" if kind == "uc"
                   else "; RC completions wait for ACKs (issue 4): no CQE"),
                [qp(0, kind)], ws)
    vec("tx_rc_read",
        "RC RDMA READ requests of 0, 1, MTU, MTU+1 and 64 KiB bytes: one READ REQUEST each with "
        "RETH, no payload, consuming max(1, ceil(len/MTU)) PSNs",
        [qp(0, "rc")], [wqe(0, "read", n, off=0x1_0000 * k) for k, n in enumerate([0, 1, 1024, 1025, 65536])])
    # Every path MTU with the lengths around it and 64 KiB.
    for mtu in [256, 512, 1024, 2048, 4096]:
        lens = [0, 1, mtu - 1, mtu, mtu + 1, 65536]
        vec("tx_mtu_%d" % mtu,
            "UC RDMA WRITEs at path MTU %d of 0, 1, MTU-1, MTU, MTU+1 and 64 KiB bytes" % mtu,
            [qp(0, "uc", mtu=mtu)], [wqe(0, "write", n, off=0x1_1000 * k) for k, n in enumerate(lens)])
    vec("tx_unaligned",
        "UC SENDs from local addresses at every offset class (1, 3, 31, 63 bytes into a beat, "
        "4 KiB - 1, across a 4 KiB page): payload realigned behind headers of any length",
        [qp(0, "uc", mtu=512)],
        [wqe(0, "send", n, off=o) for o, n in
         [(1, 100), (3, 1500), (31, 64), (63, 513), (0xFFF, 2), (0x1FF0, 4000), (0x2FC1, 777)]])
    vec("tx_multi_qp",
        "Four QPs (RC and UC, MTU 256..4096) with several messages each, doorbells at once: "
        "round-robin packet interleaving, per-QP PSN sequences, completions in order per QP",
        [qp(0, "uc", mtu=256), qp(1, "rc", mtu=1024), qp(2, "uc", mtu=4096), qp(3, "uc", mtu=512, cq=1)],
        [wqe(q, op, n, off=0x4000 * q + 0x100 * k)
         for k, (op, n) in enumerate([("write", 3000), ("send", 700), ("write_imm", 5000), ("send_imm", 1)])
         for q in range(4)],
        cqs=[cq(0), cq(1)])
    vec("tx_ipv6",
        "IPv6 UC QP: WRITE, SEND+Imm and WRITE+Imm over several packets; IPv6 header, "
        "traffic class DSCP/ECN, ICRC with the IPv6 masks",
        [qp(0, "uc", ipv6=True, mtu=512)],
        [wqe(0, "write", 1200), wqe(0, "send_imm", 600, off=0x2000), wqe(0, "write_imm", 3, off=0x3001)])
    vec("tx_vlan",
        "802.1Q-tagged UC QPs (VID 100 PCP 3, IPv4; VID 4095 PCP 7, IPv6): tag placement and "
        "every header shifted by 4 bytes",
        [qp(0, "uc", vlan=(100, 3)), qp(1, "uc", vlan=(4095, 7), ipv6=True, mtu=256)],
        [wqe(0, "write", 2100), wqe(1, "send", 700, off=0x8000), wqe(0, "send_imm", 0)])
    vec("tx_ecn_dscp",
        "DSCP and ECN per QP: ECT(0) on an ECN QP, not-ECT on the other, DSCP 0 and 63",
        [qp(0, "uc", dscp=0, ecn=True), qp(1, "uc", dscp=63, ecn=False)],
        [wqe(0, "write", 100), wqe(1, "write", 100, off=0x1000)])
    vec("tx_psn_wrap",
        "PSN wraps from 2^24-2 through 0 inside one message; a READ's PSN span wraps too",
        [qp(0, "rc", mtu=256, psn=0xFFFFFE)],
        [wqe(0, "write", 1024), wqe(0, "read", 1000, off=0x1000), wqe(0, "send", 10, off=0x2000)])
    vec("tx_zero_length",
        "Zero-length messages of every opcode (no payload read, no MR check: lkey 0 is fine)",
        [qp(0, "rc"), qp(1, "uc")],
        [wqe(q, op, 0, lkey=0) for q in (0, 1) for op in OPS] + [wqe(0, "read", 0, lkey=0)])
    vec("tx_unsignaled",
        "UC: unsignaled messages write no CQE, signaled ones do, in order",
        [qp(0, "uc")],
        [wqe(0, "write", 100 * k + 1, off=0x400 * k, signaled=(k % 3 == 0)) for k in range(9)])
    # Protection faults (docs/protocol.md section 6): error CQE, QP to error, the rest flushed.
    faults = [
        ("bad_key", "an lkey whose entry holds another key", dict(lkey=KEY0 + 16)),
        ("invalid_mr", "an lkey selecting an invalid MR", dict(lkey=0x21)),
        ("below_range", "a local address below the MR", dict(off=-1)),
        ("beyond_range", "a range ending one byte past the MR", dict(off=MR_LEN - 99)),
        ("pd_mismatch", "an MR of another protection domain", dict(lkey=0x42)),
    ]
    for name, what, kw in faults:
        length = 100
        vec("tx_fault_" + name,
            "Protection fault: %s. The WQE after a good one gets a local protection error CQE "
            "(status 4) with nothing read or sent for it, the QP goes to error and the "
            "two WQEs behind it are flushed (status 5), signaled or not" % what,
            [qp(0, "uc")],
            [wqe(0, "write", 64), wqe(0, "write", length, **kw), wqe(0, "send", 10, signaled=False),
             wqe(0, "write", 20)],
            mrs=[mr(), mr(index=1, key=0x21, valid=False), mr(index=2, key=0x42, pd=2)])
    vec("tx_fault_read_no_local_write",
        "Protection fault: RDMA READ into an MR without LOCAL_WRITE (status 4), the rest flushed",
        [qp(0, "rc")],
        [wqe(0, "read", 100, lkey=0x23), wqe(0, "write", 10)],
        mrs=[mr(), mr(index=3, key=0x23, access=["remote_read"])])
    vec("tx_fault_opcode",
        "Invalid WQE opcode (7) and RDMA READ on a UC QP: local QP operation error (status 2), "
        "the rest flushed",
        [qp(0, "uc"), qp(1, "uc")],
        [wqe(0, "write", 10), wqe(0, 7, 10), wqe(0, "write", 10), wqe(1, "read", 10), wqe(1, "write", 5)])
    vec("tx_qp_in_error",
        "A QP configured in the error state: every WQE is flushed, nothing is read or sent",
        [qp(0, "uc", state="error")], [wqe(0, "write", 10), wqe(0, "send", 0, signaled=False)])
    vec("tx_batch_fetch",
        "Nine WQEs posted by one doorbell: fetched several per DMA read",
        [qp(0, "uc", mtu=256)], [wqe(0, "send", 17 * k + 1, off=0x200 * k) for k in range(9)])
    vec("tx_sq_wrap",
        "SQ ring of 4 entries, 11 WQEs posted by 4 doorbells far enough apart for the NIC to "
        "drain the ring: fetches wrap and never read across the ring end",
        [qp(0, "uc", sq_log=2)], [wqe(0, "write", 40 * k + 3, off=0x100 * k) for k in range(11)],
        doorbells=[{"at": 0, "qp": 0, "wqes": 3}, {"at": 3000, "qp": 0, "wqes": 4},
                   {"at": 6000, "qp": 0, "wqes": 2}, {"at": 9000, "qp": 0, "wqes": 2}])
    vec("tx_cq_wrap",
        "CQ ring of 4 entries, 10 signaled completions: the owner bit flips on every wrap",
        [qp(0, "uc")], [wqe(0, "send", 8 * k, off=0x40 * k) for k in range(10)],
        cqs=[cq(0, log=2)])
    vec("tx_payload_read_fault",
        "PCIe errors on payload reads: a message whose only packet's read gets UR, one whose last "
        "packet's read is poisoned, one whose read gets CA on an unsignaled message: each failed "
        "frame is dropped (its PSN stays used), a completion riding on it has status 21, later "
        "messages go out normally",
        [qp(0, "uc", mtu=512)],
        [wqe(0, "write", 100, off=0x1000), wqe(0, "write", 300, off=0x2000),
         wqe(0, "send", 1200, off=0x3000), wqe(0, "send", 50, off=0x4000, signaled=False),
         wqe(0, "write_imm", 64, off=0x5000)],
        root_complex={"latency": 100, "rcb": 64, "cpl_size": 256, "split": "aligned", "reorder": False,
                      "seed": 1, "rq_ready_percent": 100,
                      "faults": [{"addr": hex(PHYS + 0x2000), "len": 16, "kind": "ur"},
                                 {"addr": hex(PHYS + 0x3400), "len": 8, "kind": "poison"},
                                 {"addr": hex(PHYS + 0x4000), "len": 4, "kind": "ca"}]})
    vec("tx_backpressure",
        "MAC back-pressure (tready 60%), rq back-pressure (70%), random completion splitting and "
        "reordering: frames never pause once started, nothing lost",
        [qp(0, "uc", mtu=1024), qp(1, "uc", mtu=256)],
        [wqe(q, op, n, off=0x8000 * q + 0x1000 * k) for k, (op, n) in
         enumerate([("write", 5000), ("send_imm", 70), ("write_imm", 2049)]) for q in (0, 1)],
        mac={"tready_percent": 60, "seed": 3},
        root_complex={"latency": 300, "rcb": 64, "cpl_size": 128, "split": "random", "reorder": True,
                      "seed": 5, "rq_ready_percent": 70, "faults": []})

    # Added later, at the end: wqe() numbers WQEs in call order, so a vector
    # inserted above would change the wr_ids of every vector after it.
    vec("tx_fault_imm",
        "Error and flush completions of +Imm WQEs: a WRITE with immediate whose lkey names an "
        "invalid MR gets a local protection error CQE (status 4) carrying its immediate and "
        "byte_len 0, the QP goes to error, and the SEND with immediate and the WRITE with "
        "immediate behind it are flushed (status 5), each CQE carrying its own immediate; "
        "the plain WRITE before them completes as usual with immediate 0",
        [qp(0, "uc")],
        [wqe(0, "write", 64), wqe(0, "write_imm", 100, lkey=0x21, imm=0x1111_2222),
         wqe(0, "send_imm", 10, imm=0x3333_4444), wqe(0, "write_imm", 20, imm=0x5555_6666)],
        mrs=[mr(), mr(index=1, key=0x21, valid=False)])
    vec("tx_payload_read_timeout",
        "PCIe completion faults on payload reads, one per kind that leaves a read without its "
        "data: no completion at all, a completion with a Byte Count 4 too large (malformed, "
        "dropped) and completions to another requester (ignored) each time the read out after "
        "CPL_TIMEOUT (5,000 cycles here): the frame is dropped (its PSN stays used) and a "
        "completion riding on it has status 21; a stray completion with a tag never issued "
        "before good data (on one payload read and on the first WQE fetch) is dropped and "
        "counted, and its message goes out whole",
        [qp(0, "uc", mtu=512)],
        [wqe(0, "write", 100, off=0x1000), wqe(0, "write", 300, off=0x2000),
         wqe(0, "send", 200, off=0x3000), wqe(0, "write_imm", 64, off=0x4000),
         wqe(0, "send", 50, off=0x5000), wqe(0, "write", 40, off=0x6000)],
        config={"cpl_timeout": 5000},
        root_complex={"latency": 100, "rcb": 64, "cpl_size": 256, "split": "aligned", "reorder": False,
                      "seed": 1, "rq_ready_percent": 100,
                      "faults": [{"addr": hex(PHYS + 0x2000), "len": 16, "kind": "drop"},
                                 {"addr": hex(PHYS + 0x3000), "len": 8, "kind": "bad_byte_count"},
                                 {"addr": hex(PHYS + 0x4000), "len": 4, "kind": "wrong_requester"},
                                 {"addr": hex(PHYS + 0x5000), "len": 4, "kind": "stray"},
                                 {"addr": hex(0x1000_0000), "len": 4, "kind": "stray"}]})
    # Writes the register map ignores (docs/csr.md): a DUT that takes one
    # changes QP 0, MR 0 or CQ 0 (the entry index wraps) or rings QP 0.
    ignored = [(0x8800, 0xFFFF_FFFF), (0x8000 + 27 * 4, 0xFFFF_FFFF), (0x807C, 0xFFFF_FFFF),
               (0x4000 + 16 * 0x40, 0xFFFF_FFFF), (0x4000 + 9 * 4, 0xFFFF_FFFF),
               (0x3000 + 4 * 0x10, 0xFFFF_FFFF), (0x3000 + 3 * 4, 0xFFFF_FFFF),
               (0x10, 16 << 16 | 3), (0x10, 255 << 16 | 7), (0x18, 16 << 16 | 2)]
    vec("tx_ignored_writes",
        "MMIO writes the register map ignores, after configuration and before any WQE is "
        "posted: all-ones into the first entry past the QP table (QP 16), past the MR table "
        "(MR 16) and past the CQ table (CQ 4), into the first and last unused words of QP 0 "
        "(27, 31), the first unused word of MR 0 (9) and of CQ 0 (3), and doorbells for QPs "
        "16 and 255 and an RQ doorbell for QP 16. Then two WRITEs and a SEND on QP 0: their "
        "frames and CQEs are exactly those of a run without the ignored writes",
        [qp(0, "uc")],
        [wqe(0, "write", 100, off=0x100), wqe(0, "send", 40, off=0x200),
         wqe(0, "write", 2000, off=0x1000)],
        doorbells=[],
        program=[{"ignored_write": {"addr": hex(a), "data": hex(d)}} for a, d in ignored]
        + [{"post_send": {"qp": 0, "wqes": 3}}])


if __name__ == "__main__":
    main()
