#!/usr/bin/env python3
"""Check every frame of a pcap as a RoCEv2 frame, decoded by scapy's own layers.

    scapy_roce_check.py FRAMES.pcap [--json OUT.json] [--expect-bad-icrc I[,J...]]

This is an independent second opinion on the frames the testbench (Rust,
testbench/src/wire/roce.rs) and the DUTs produce; it shares no code with them.
Frames are numbered from 0 and are taken as handed to the MAC (no FCS, no
padding to 60 bytes).

Per frame, decoded with scapy (Ether / Dot1Q / IP or IPv6 / UDP, and BTH, AETH,
CNPPadding from scapy.contrib.roce):
  - Ethernet, optional 802.1Q tag, EtherType IPv4 or IPv6;
  - IPv4: version 4, IHL 5, not a fragment, protocol UDP, total length = the
    frame, header checksum recomputed by scapy; IPv6: next header UDP,
    payload length = the frame;
  - UDP: destination port 4791, length = the IP payload;
  - BTH: known opcode, TVer 0, reserved bits 0; then the extension headers
    of the opcode (scapy has no RETH or ImmDt layer and binds AETH only to
    ACK, so the table below splits them off), the CNP's 16 zero bytes;
    PadCnt: payload+pad a multiple of 4, zero pad bytes, no pad on
    FIRST/MIDDLE, nothing after the headers of READ REQUEST/ACK/CNP;
  - ICRC: scapy's BTH.compute_icrc AND this script's own computation of the
    same rule (CRC-32 over 8 bytes of 0xff and the IP packet with ToS/TTL/
    IPv4 checksum, or IPv6 traffic class/flow label/hop limit, the UDP
    checksum and BTH byte 4 set to ones; least significant byte first) must
    both equal the frame's last 4 bytes. Where the installed scapy cannot
    compute an IPv6 ICRC (older releases only handle IPv4), the line says
    "scapy n/a" and the script's own computation decides.

Prints one line per frame and a summary line. Exit status: 0 when every frame
passes (with --expect-bad-icrc: when exactly the listed frames fail, each
with a bad ICRC among its faults), 1 otherwise, 2 when scapy is missing or
the file is not an Ethernet pcap (an empty pcap is a failure). --json writes the decoded fields of every
frame (a list, one object per frame) for a caller to compare.
"""

import argparse
import inspect
import json
import logging
import socket
import struct
import sys
import zlib

try:
    logging.getLogger("scapy").setLevel(logging.ERROR)
    from scapy.compat import raw
    from scapy.contrib.roce import AETH, BTH, CNPPadding
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    from scapy.utils import RawPcapReader
except ImportError as e:  # pragma: no cover - reported by the Rust test
    sys.stderr.write(f"cannot import scapy ({e}); run: pip install scapy\n")
    sys.exit(2)

ROCEV2_PORT = 4791

# opcode: (name, extension headers in wire order, payload kind)
#   payload kind: None = no payload, "full" = FIRST/MIDDLE (never padded),
#   "any" = LAST/ONLY. InfiniBand spec, RC and UC transports, plus CNP.
OPCODES = {}
for base, transport in ((0x00, "RC"), (0x20, "UC")):
    for low, name, hdrs, kind in (
        (0x00, "SEND_FIRST", (), "full"),
        (0x01, "SEND_MIDDLE", (), "full"),
        (0x02, "SEND_LAST", (), "any"),
        (0x03, "SEND_LAST_WITH_IMMEDIATE", ("ImmDt",), "any"),
        (0x04, "SEND_ONLY", (), "any"),
        (0x05, "SEND_ONLY_WITH_IMMEDIATE", ("ImmDt",), "any"),
        (0x06, "RDMA_WRITE_FIRST", ("RETH",), "full"),
        (0x07, "RDMA_WRITE_MIDDLE", (), "full"),
        (0x08, "RDMA_WRITE_LAST", (), "any"),
        (0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", ("ImmDt",), "any"),
        (0x0A, "RDMA_WRITE_ONLY", ("RETH",), "any"),
        (0x0B, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", ("RETH", "ImmDt"), "any"),
    ):
        OPCODES[base | low] = (f"{transport}_{name}", hdrs, kind)
OPCODES.update({
    0x0C: ("RC_RDMA_READ_REQUEST", ("RETH",), None),
    0x0D: ("RC_RDMA_READ_RESPONSE_FIRST", ("AETH",), "full"),
    0x0E: ("RC_RDMA_READ_RESPONSE_MIDDLE", (), "full"),
    0x0F: ("RC_RDMA_READ_RESPONSE_LAST", ("AETH",), "any"),
    0x10: ("RC_RDMA_READ_RESPONSE_ONLY", ("AETH",), "any"),
    0x11: ("RC_ACKNOWLEDGE", ("AETH",), None),
    0x81: ("CNP", ("CNP",), None),
})
EXT_LEN = {"RETH": 16, "AETH": 4, "ImmDt": 4, "CNP": 16}

try:
    SCAPY_ICRC_V6 = "IPv6" in inspect.getsource(BTH.compute_icrc)
except (OSError, TypeError):  # no source: try it and see
    SCAPY_ICRC_V6 = True


def own_icrc(ip_packet, ipv6):
    """The ICRC rule, written out: returns the 4 wire bytes."""
    b = bytearray(ip_packet)
    ip_len = 40 if ipv6 else 20
    if ipv6:
        b[0] |= 0x0F  # traffic class (high nibble) and flow label
        b[1:4] = b"\xff\xff\xff"
        b[7] = 0xFF  # hop limit
    else:
        b[1] = 0xFF  # ToS
        b[8] = 0xFF  # TTL
        b[10:12] = b"\xff\xff"  # header checksum
    b[ip_len + 6:ip_len + 8] = b"\xff\xff"  # UDP checksum
    b[ip_len + 8 + 4] = 0xFF  # BTH FECN/BECN/reserved
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)) & 0xFFFFFFFF)


def mac_int(s):
    return int(s.replace(":", ""), 16)


def check_frame(data):
    """Returns (errors, fields, icrc_bad, note)."""
    errs = []
    f = {}
    pkt = Ether(data)
    f["dst_mac"] = mac_int(pkt.dst)
    f["src_mac"] = mac_int(pkt.src)
    eth_len = 14
    if Dot1Q in pkt:
        tag = pkt[Dot1Q]
        # The DEI field was called "id" before scapy 2.5.
        dei = tag.dei if any(fd.name == "dei" for fd in tag.fields_desc) else tag.id
        f["vlan"] = {"pcp": int(tag.prio), "dei": bool(dei), "vid": int(tag.vlan)}
        eth_len = 18
    else:
        f["vlan"] = None
    ip_total = len(data) - eth_len

    if IP in pkt:
        ip = pkt[IP]
        ip_hdr = 20
        f["ip"] = {
            "version": 4, "src": socket.inet_pton(socket.AF_INET, ip.src).hex(),
            "dst": socket.inet_pton(socket.AF_INET, ip.dst).hex(),
            "dscp": ip.tos >> 2, "ecn": ip.tos & 3, "ident": ip.id,
            "dont_frag": bool(ip.flags.DF), "ttl": ip.ttl,
        }
        if ip.version != 4 or ip.ihl != 5:
            errs.append(f"IPv4 version/IHL {ip.version}/{ip.ihl}, want 4/5")
        if ip.flags.MF or ip.frag or ip.flags.evil:
            errs.append("IPv4 fragment or reserved flag")
        if ip.proto != 17:
            errs.append(f"IPv4 protocol {ip.proto}, want 17 (UDP)")
        if ip.len != ip_total:
            errs.append(f"IPv4 total length {ip.len}, frame has {ip_total}")
        hdr = IP(data[eth_len:eth_len + 20])
        hdr.chksum = None
        want = IP(raw(hdr)).chksum  # scapy computes it
        if ip.chksum != want:
            errs.append(f"IPv4 checksum {ip.chksum:#06x}, scapy computes {want:#06x}")
    elif IPv6 in pkt:
        ip = pkt[IPv6]
        ip_hdr = 40
        f["ip"] = {
            "version": 6, "src": socket.inet_pton(socket.AF_INET6, ip.src).hex(),
            "dst": socket.inet_pton(socket.AF_INET6, ip.dst).hex(),
            "dscp": ip.tc >> 2, "ecn": ip.tc & 3, "flow_label": ip.fl,
            "hop_limit": ip.hlim,
        }
        if ip.nh != 17:
            errs.append(f"IPv6 next header {ip.nh}, want 17 (UDP)")
        if ip.plen != ip_total - 40:
            errs.append(f"IPv6 payload length {ip.plen}, frame has {ip_total - 40}")
    else:
        return [f"not IPv4/IPv6 (EtherType {pkt.lastlayer().name})"], f, False, ""

    if UDP not in pkt:
        return errs + ["no UDP header"], f, False, ""
    udp = pkt[UDP]
    f["udp"] = {"sport": udp.sport, "checksum": udp.chksum}
    if udp.dport != ROCEV2_PORT:
        errs.append(f"UDP destination port {udp.dport}, want {ROCEV2_PORT}")
    if udp.len != ip_total - ip_hdr:
        errs.append(f"UDP length {udp.len}, IP payload is {ip_total - ip_hdr}")
    if BTH not in pkt:
        return errs + ["no BTH (scapy did not decode one)"], f, False, ""
    bth = pkt[BTH]
    f["bth"] = {
        "opcode": bth.opcode, "se": bool(bth.solicited), "migreq": bool(bth.migreq),
        "pad_cnt": bth.padcount, "pkey": bth.pkey, "fecn": bool(bth.fecn),
        "becn": bool(bth.becn), "dest_qp": bth.dqpn, "ack_req": bool(bth.ackreq),
        "psn": bth.psn, "scapy_name": bth.get_field("opcode").i2repr(bth, bth.opcode),
    }
    if bth.version != 0:
        errs.append(f"BTH TVer {bth.version}")
    if bth.resv6 or bth.resv7:
        errs.append("BTH reserved bits set")

    # ICRC: stored, scapy's and ours.
    ip_packet = data[eth_len:-4]
    stored = data[-4:]
    if struct.pack("!I", bth.icrc) != stored:
        errs.append("scapy's BTH.icrc is not the last 4 bytes")
    ours = own_icrc(ip_packet, ip_hdr == 40)
    scapy_ok = ip_hdr == 20 or SCAPY_ICRC_V6
    theirs = bth.compute_icrc(None) if scapy_ok else None
    note = "scapy+own" if scapy_ok else "own; scapy n/a for IPv6"
    icrc_bad = stored != ours or (scapy_ok and stored != theirs)
    if icrc_bad:
        errs.append(f"ICRC {stored.hex()}: scapy computes "
                    f"{theirs.hex() if theirs else 'n/a'}, own {ours.hex()}")
    if scapy_ok and theirs != ours:
        errs.append(f"scapy's ICRC {theirs.hex()} and ours {ours.hex()} differ")
    f["icrc"] = stored.hex()

    op = OPCODES.get(bth.opcode)
    if op is None:
        return errs + [f"unknown opcode {bth.opcode:#04x}"], f, icrc_bad, note
    name, hdrs, kind = op
    f["name"] = name
    rest = data[eth_len + ip_hdr + 8 + 12:-4]
    ext_len = sum(EXT_LEN[h] for h in hdrs)
    if len(rest) < ext_len:
        return errs + [f"{name}: {len(rest)} bytes after BTH, headers need {ext_len}"], \
            f, icrc_bad, note
    f["reth"] = f["aeth"] = f["imm"] = None
    at = 0
    for h in hdrs:
        b = rest[at:at + EXT_LEN[h]]
        if h == "RETH":
            va, rkey, dlen = struct.unpack("!QII", b)
            f["reth"] = {"va": va, "rkey": rkey, "dma_len": dlen}
        elif h == "AETH":
            a = pkt[AETH] if AETH in pkt else AETH(b)  # scapy binds it to ACK only
            f["aeth"] = {"syndrome": a.syndrome, "msn": a.msn}
        elif h == "ImmDt":
            f["imm"] = struct.unpack("!I", b)[0]
        elif h == "CNP":
            c = pkt[CNPPadding] if CNPPadding in pkt else CNPPadding(b)
            if c.reserved1 or c.reserved2:
                errs.append("CNP reserved bytes not zero")
        at += EXT_LEN[h]
    region = rest[ext_len:]
    pad = bth.padcount
    if kind is None and (region or pad):
        errs.append(f"{name} carries no payload, has {len(region)} bytes, PadCnt {pad}")
    if kind == "full" and pad:
        errs.append(f"{name} (FIRST/MIDDLE) with PadCnt {pad}")
    if len(region) % 4:
        errs.append(f"payload+pad {len(region)} bytes, not a multiple of 4")
    if pad > len(region):
        errs.append(f"PadCnt {pad} but {len(region)} bytes")
    elif any(region[len(region) - pad:]):
        errs.append("pad bytes not zero")
    f["payload"] = region[:max(0, len(region) - pad)].hex()
    return errs, f, icrc_bad, note


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pcap")
    ap.add_argument("--json", help="write the decoded fields of every frame here")
    ap.add_argument("--expect-bad-icrc", default="",
                    help="comma-separated frame numbers that must fail their ICRC")
    args = ap.parse_args()
    expect_bad = {int(x) for x in args.expect_bad_icrc.split(",") if x}

    reader = RawPcapReader(args.pcap)
    if reader.linktype != 1:
        sys.stderr.write(f"{args.pcap}: link type {reader.linktype}, want 1 (Ethernet)\n")
        return 2
    decoded, bad, wrong = [], 0, 0
    for i, (data, _meta) in enumerate(reader):
        try:
            errs, f, icrc_bad, note = check_frame(bytes(data))
        except Exception as e:  # a frame scapy cannot take apart is a failure
            errs, f, icrc_bad, note = [f"decode error: {e!r}"], {}, False, ""
        f["index"], f["errors"], f["icrc_bad"] = i, errs, icrc_bad
        decoded.append(f)
        bad += bool(errs)
        if i in expect_bad:
            as_expected = icrc_bad
        else:
            as_expected = not errs
        wrong += not as_expected
        if errs:
            status = "BAD (expected)" if as_expected else "BAD"
            print(f"frame {i}: {status}: {'; '.join(errs)}")
        else:
            b = f["bth"]
            vlan = f["vlan"]["vid"] if f["vlan"] else "-"
            print(f"frame {i}: ok  {f['name']:<34} IPv{f['ip']['version']} vlan={vlan} "
                  f"len={len(data)} qp={b['dest_qp']:#08x} psn={b['psn']:#08x} "
                  f"pad={b['pad_cnt']} icrc={f['icrc']} ({note})"
                  + ("  <- expected a bad ICRC" if i in expect_bad else ""))
    reader.close()
    missing = sorted(x for x in expect_bad if x >= len(decoded))
    wrong += len(missing)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(decoded, out)
    line = f"summary: {len(decoded)} frames, {len(decoded) - bad} ok, {bad} bad"
    if expect_bad:
        line += f"; expected a bad ICRC on {sorted(expect_bad)}"
        if missing:
            line += f" (no such frames: {missing})"
    line += "; " + ("as expected" if wrong == 0 else f"{wrong} not as expected")
    print(line)
    return 0 if wrong == 0 and decoded else 1


if __name__ == "__main__":
    sys.exit(main())
