#!/usr/bin/env python3
"""Request frames built by scapy for a NIC to answer, and its answers checked.

    scapy_inject.py build CONFIG.json OUT.json
    scapy_inject.py check CONFIG.json TX.pcap

An implementation no one in this project wrote (scapy's Ether / Dot1Q / IP /
IPv6 / UDP layers and scapy.contrib.roce's BTH with its ICRC) makes the
request frames; the NIC under test (model and RTL in lockstep, driven by
tests/resp_scapy.rs) receives them, and the frames it sends back are decoded
by scapy again and compared field by field with what this script expects
from the protocol alone (docs/protocol.md section 7, docs/responder.md's
rules). It shares no code with the testbench or the model.

CONFIG (written by the Rust test):
  {"nic_mac": "02:..", "peer_mac": "02:..", "read": true,
   "mem_va": 139637976727552, "mem_seed": 3,
   "qps": [{"qp": 1, "peer_qpn": 85, "ipv6": false, "nic_ip": "10.0.0.1",
            "peer_ip": "10.0.0.2", "vlan": null | {"vid": 5, "pcp": 3},
            "epsn": 100, "mtu": 1024, "udp_sport": 49152,
            "wr_va": 4096, "wr_rkey": 258, "rd_va": 65536, "rd_rkey": 259,
            "seed": 7}]}

Per QP the program is fixed (below, `program`): SEND ONLY, a three-packet
SEND, WRITE ONLY, a three-packet WRITE, SEND with immediate, WRITE with
immediate, and with "read" a three-packet READ of host memory the vector
fills with its seeded pattern (mem_seed, from VA mem_va on). Every message's last packet
asks for an ACK; the Rust test spaces the frames far enough apart that no two
ACKs coalesce, so the answers are exact: one ACK per AckReq packet, PSN = that packet's, MSN = messages executed so
far, and for the READ its responses. An ACK's credit field (syndrome bits
4:0) is not compared: the protocol leaves it to the responder.

build writes OUT.json: {"frames": [{"qp", "hex", "desc"}], "messages":
[{"qp", "kind", "payload", "va" | "recv"}], "responses": [...]} in the order
the frames must be injected. check exits 0 when the pcap holds exactly the
expected responses in that order, each matching in every field listed in
`check_frame`, 1 otherwise, 2 on a usage error or missing scapy.
"""

import json
import logging
import os
import sys

try:
    logging.getLogger("scapy").setLevel(logging.ERROR)
    from scapy.compat import raw
    from scapy.contrib.roce import AETH, BTH
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.packet import Raw
    from scapy.utils import RawPcapReader
except ImportError as e:  # pragma: no cover - reported by the Rust test
    sys.stderr.write(f"cannot import scapy ({e}); run: pip install scapy\n")
    sys.exit(2)

# The ICRC rule written out (the sibling checker's), a second opinion on
# scapy's, and the ICRC of IPv6 frames where an older scapy cannot compute it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scapy_roce_check import own_icrc  # noqa: E402

# RC opcodes (InfiniBand spec, table of BTH opcodes), written out here on
# purpose rather than taken from the project.
SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_LAST_IMM = 0x00, 0x01, 0x02, 0x03
SEND_ONLY, SEND_ONLY_IMM = 0x04, 0x05
WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST = 0x06, 0x07, 0x08
WRITE_ONLY, WRITE_ONLY_IMM = 0x0A, 0x0B
READ_REQUEST = 0x0C
READ_RESP_FIRST, READ_RESP_MIDDLE, READ_RESP_LAST, READ_RESP_ONLY = 0x0D, 0x0E, 0x0F, 0x10
ACKNOWLEDGE = 0x11
# An ACK's syndrome is 000 in bits 7:5; bits 4:0 are a credit count the
# responder may fill in as it likes (these requesters use no end-to-end
# credits), so only the top three bits are compared.
SYNDROME_ACK = 0x00
ROCE_PORT = 4791


def pattern(seed, n):
    """Payload bytes of a message: a simple function of a seed."""
    return bytes(((seed * 37 + i * 11 + (i >> 8)) & 0xFF) for i in range(n))


M64 = (1 << 64) - 1


def memory_pattern(seed, n):
    """The first n bytes of a test vector's memory fill (the vector format,
    written down in testbench/src/env/host_memory.rs: SplitMix64's first output as an xorshift64* state, forced to 1
    if 0; byte i the top byte of the (i+1)-th xorshift64* output)."""
    z = (seed + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    x = (z ^ (z >> 31)) or 1
    out = bytearray(n)
    for i in range(n):
        x ^= x >> 12
        x ^= (x << 25) & M64
        x ^= x >> 27
        out[i] = ((x * 0x2545F4914F6CDD1D) & M64) >> 56
    return bytes(out)


def program(q, with_read):
    """The messages sent to one QP: (kind, opcode list, payload, extras)."""
    mtu = q["mtu"]
    s = q["seed"]
    msgs = [
        ("send", [SEND_ONLY], pattern(s + 1, 64), {}),
        ("send", [SEND_FIRST, SEND_MIDDLE, SEND_LAST], pattern(s + 2, 2 * mtu + 37), {}),
        ("write", [WRITE_ONLY], pattern(s + 3, 100), {"va": q["wr_va"]}),
        (
            "write",
            [WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST],
            pattern(s + 4, 2 * mtu + 5),
            {"va": q["wr_va"] + 8192},
        ),
        ("send_imm", [SEND_ONLY_IMM], pattern(s + 5, 16), {"imm": 0x12345678 ^ s}),
        (
            "write_imm",
            [WRITE_ONLY_IMM],
            pattern(s + 6, 8),
            {"va": q["wr_va"] + 3 * 8192, "imm": 0x0BADCAFE ^ s},
        ),
    ]
    if with_read:
        msgs.append(("read", [READ_REQUEST], b"", {"va": q["rd_va"], "len": 2 * mtu + 9}))
    return msgs


def l2_l3(cfg, q, to_nic):
    """Ether (+ Dot1Q) / IP or IPv6 / UDP, in the direction asked."""
    src_mac, dst_mac = (cfg["peer_mac"], cfg["nic_mac"]) if to_nic else (cfg["nic_mac"], cfg["peer_mac"])
    src_ip, dst_ip = (q["peer_ip"], q["nic_ip"]) if to_nic else (q["nic_ip"], q["peer_ip"])
    p = Ether(src=src_mac, dst=dst_mac)
    if q.get("vlan"):
        p = p / Dot1Q(vlan=q["vlan"]["vid"], prio=q["vlan"]["pcp"])
    if q["ipv6"]:
        p = p / IPv6(src=src_ip, dst=dst_ip, hlim=64)
    else:
        p = p / IP(src=src_ip, dst=dst_ip, ttl=64, flags="DF")
    return p / UDP(sport=q["udp_sport"], dport=ROCE_PORT)


def request(cfg, q, opcode, psn, ackreq, body):
    """One request frame: headers, extension headers and payload in `body`,
    padded to 4 bytes (PadCnt), ICRC computed by scapy."""
    pad = (-len(body)) % 4
    bth = BTH(opcode=opcode, padcount=pad, dqpn=q["qp"], ackreq=1 if ackreq else 0, psn=psn & 0xFFFFFF)
    frame = raw(l2_l3(cfg, q, True) / bth / Raw(body + b"\x00" * pad))
    ip_at = 18 if q.get("vlan") else 14
    own = own_icrc(frame[ip_at:-4], q["ipv6"])
    if frame[-4:] != own:
        if q["ipv6"] and frame[-4:] == b"\x00" * 4:
            # This scapy computes no IPv6 ICRC (releases before 2.6).
            return frame[:-4] + own
        sys.stderr.write(f"scapy's ICRC {frame[-4:].hex()} and the rule's {own.hex()} differ\n")
        sys.exit(2)
    return frame


def reth(va, rkey, length):
    return va.to_bytes(8, "big") + rkey.to_bytes(4, "big") + length.to_bytes(4, "big")


def build(cfg):
    frames, messages, responses = [], [], []
    for q in cfg["qps"]:
        psn, msn, recv = q["epsn"], 0, 0
        mtu = q["mtu"]
        for kind, ops, payload, ex in program(q, cfg.get("read", False)):
            if kind == "read":
                n = max(1, -(-ex["len"] // mtu))
                body = reth(ex["va"], q["rd_rkey"], ex["len"])
                frames.append({"qp": q["qp"], "hex": request(cfg, q, READ_REQUEST, psn, True, body).hex(),
                               "desc": f"READ REQUEST psn {psn & 0xFFFFFF} len {ex['len']}"})
                msn += 1
                # What the READ finds: the vector's memory fill of the
                # region holding rd_va (mem_va, mem_seed).
                off = ex["va"] - cfg["mem_va"]
                data = memory_pattern(cfg["mem_seed"], off + ex["len"])[off:]
                messages.append({"qp": q["qp"], "kind": kind, "payload": data.hex(), "va": ex["va"]})
                for i in range(n):
                    op = READ_RESP_ONLY if n == 1 else (
                        READ_RESP_FIRST if i == 0 else READ_RESP_LAST if i == n - 1 else READ_RESP_MIDDLE)
                    chunk = data[i * mtu:(i + 1) * mtu]
                    responses.append({"qp": q["qp"], "opcode": op, "psn": (psn + i) & 0xFFFFFF,
                                      "aeth": op != READ_RESP_MIDDLE, "syndrome": SYNDROME_ACK,
                                      "msn": msn, "payload": chunk.hex()})
                psn += n
                continue
            chunks = [payload[i * mtu:(i + 1) * mtu] for i in range(len(ops))]
            for i, op in enumerate(ops):
                last = i == len(ops) - 1
                body = b""
                if op in (WRITE_FIRST, WRITE_ONLY, WRITE_ONLY_IMM):
                    body += reth(ex["va"], q["wr_rkey"], len(payload))
                if op in (SEND_ONLY_IMM, WRITE_ONLY_IMM, SEND_LAST_IMM):
                    body += ex["imm"].to_bytes(4, "big")
                body += chunks[i]
                frames.append({"qp": q["qp"], "hex": request(cfg, q, op, psn, last, body).hex(),
                               "desc": f"opcode {op:#04x} psn {psn & 0xFFFFFF} ({kind}, {len(chunks[i])} B)"})
                if last:
                    msn += 1
                    responses.append({"qp": q["qp"], "opcode": ACKNOWLEDGE, "psn": psn & 0xFFFFFF,
                                      "aeth": True, "syndrome": SYNDROME_ACK, "msn": msn, "payload": ""})
                psn += 1
            m = {"qp": q["qp"], "kind": kind, "payload": payload.hex()}
            if "va" in ex:
                m["va"] = ex["va"]
            if kind in ("send", "send_imm", "write_imm"):
                m["recv"] = recv
                recv += 1
            if "imm" in ex:
                m["imm"] = ex["imm"]
            messages.append(m)
    return {"frames": frames, "messages": messages, "responses": responses}


def check_frame(cfg, q, exp, data):
    """Every field of one answer frame; returns a list of faults."""
    faults = []
    p = Ether(data)
    if p.dst != cfg["peer_mac"].lower() or p.src != cfg["nic_mac"].lower():
        faults.append(f"MACs {p.src} -> {p.dst}")
    if q.get("vlan"):
        if Dot1Q not in p:
            faults.append("no 802.1Q tag")
        elif p[Dot1Q].vlan != q["vlan"]["vid"] or p[Dot1Q].prio != q["vlan"]["pcp"]:
            faults.append(f"VLAN {p[Dot1Q].vlan}/{p[Dot1Q].prio}")
    elif Dot1Q in p:
        faults.append("unexpected 802.1Q tag")
    ip_layer = IPv6 if q["ipv6"] else IP
    if ip_layer not in p:
        return faults + [f"not {ip_layer.__name__}"]
    ip = p[ip_layer]
    if ip.src != q["nic_ip"] or ip.dst != q["peer_ip"]:
        faults.append(f"IP {ip.src} -> {ip.dst}")
    if not q["ipv6"]:
        again = IP(raw(ip))
        again.chksum = None
        if IP(raw(again)).chksum != ip.chksum:
            faults.append("IPv4 header checksum")
    if UDP not in p or p[UDP].dport != ROCE_PORT:
        return faults + ["not UDP 4791"]
    bth = BTH(raw(p[UDP].payload))
    if bth.opcode != exp["opcode"]:
        faults.append(f"opcode {bth.opcode:#04x}, expected {exp['opcode']:#04x}")
    if bth.dqpn != q["peer_qpn"]:
        faults.append(f"DestQP {bth.dqpn}, expected {q['peer_qpn']}")
    if bth.psn != exp["psn"]:
        faults.append(f"PSN {bth.psn}, expected {exp['psn']}")
    if bth.version != 0 or bth.pkey != 0xFFFF:
        faults.append(f"TVer {bth.version} P_Key {bth.pkey:#x}")
    rest = raw(p[UDP].payload)[12:-4]
    icrc = raw(p[UDP].payload)[-4:]
    if exp["aeth"]:
        if len(rest) < 4:
            return faults + ["no AETH"]
        aeth = AETH(rest[:4])
        if aeth.syndrome >> 5 != exp["syndrome"] >> 5 or aeth.msn != exp["msn"]:
            faults.append(f"AETH {aeth.syndrome:#04x}/{aeth.msn}, expected {exp['syndrome']:#04x}/{exp['msn']}")
        rest = rest[4:]
    pad = bth.padcount
    body = rest[: len(rest) - pad] if pad else rest
    if body.hex() != exp["payload"]:
        faults.append(f"payload of {len(body)} bytes differs from the {len(exp['payload']) // 2} expected")
    # The ICRC as scapy computes it for this frame's own headers (an older
    # scapy computes none for IPv6: zeros), and as the rule written out.
    again = Ether(data)
    again[BTH].icrc = None
    by_scapy = raw(again)[-4:]
    if by_scapy != icrc and not (q["ipv6"] and by_scapy == b"\x00" * 4):
        faults.append("ICRC (scapy)")
    ip_at = 18 if Dot1Q in p else 14
    if own_icrc(data[ip_at:-4], q["ipv6"]) != icrc:
        faults.append("ICRC (rule)")
    return faults


def check(cfg, pcap):
    exp = build(cfg)["responses"]
    qps = {q["qp"]: q for q in cfg["qps"]}
    got = [bytes(d) for d, _ in RawPcapReader(pcap)]
    bad = 0
    for i, e in enumerate(exp):
        if i >= len(got):
            print(f"answer {i}: missing (qp {e['qp']} opcode {e['opcode']:#04x} psn {e['psn']})")
            bad += 1
            continue
        faults = check_frame(cfg, qps[e["qp"]], e, got[i])
        print(f"answer {i}: qp {e['qp']} opcode {e['opcode']:#04x} psn {e['psn']}: "
              + ("ok" if not faults else "; ".join(faults)))
        bad += bool(faults)
    for i in range(len(exp), len(got)):
        print(f"frame {i}: not expected")
        bad += 1
    print(f"{len(exp) - bad if bad <= len(exp) else 0} of {len(exp)} answers match, {len(got)} frames sent")
    return 0 if bad == 0 else 1


def main(argv):
    if len(argv) != 4 or argv[1] not in ("build", "check"):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[2]) as f:
        cfg = json.load(f)
    if argv[1] == "build":
        with open(argv[3], "w") as f:
            json.dump(build(cfg), f, indent=1)
        return 0
    return check(cfg, argv[3])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
