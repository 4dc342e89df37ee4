#!/usr/bin/env python3
"""Decode and encode TLPs with cocotbext-pcie, for testbench/tests/pcie_crosscheck.rs.

    pcie_crosscheck.py unpack HEX...   -> JSON list: decoded fields of each TLP,
                                          its re-packed hex, cocotbext's check()
    pcie_crosscheck.py pack JSON       -> JSON list of hex, one TLP per spec:
        {"kind": "mrd", "requester_id", "tag", "addr", "len"}
        {"kind": "mwr", "requester_id", "tag", "addr", "data": HEX}
        {"kind": "cpl", "status", "byte_count", "lower_address", "requester_id",
         "completer_id", "tag", "poisoned", "data": HEX or null}

Exits 2 with a message when cocotbext-pcie is missing.
"""

import contextlib
import json
import sys

try:
    from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpType
    from cocotbext.pcie.core.utils import PcieId
except ImportError as e:  # pragma: no cover - reported by the Rust test
    sys.stderr.write(f"cannot import cocotbext-pcie ({e}); run: pip install cocotbext-pcie\n")
    sys.exit(2)


def decode(hex_tlp):
    pkt = bytes.fromhex(hex_tlp)
    t = Tlp.unpack(pkt)
    # check() prints its complaints to stdout; keep stdout pure JSON.
    with contextlib.redirect_stdout(sys.stderr):
        ok = t.check()
    return {
        "fmt": int(t.fmt),
        "type": int(t.type),
        "fmt_type": t.fmt_type.name,
        "tc": int(t.tc),
        "td": bool(t.td),
        "ep": bool(t.ep),
        "attr": int(t.attr),
        "length": int(t.length),
        "requester_id": int(t.requester_id),
        "completer_id": int(t.completer_id),
        "tag": int(t.tag),
        "first_be": int(t.first_be),
        "last_be": int(t.last_be),
        "address": int(t.address),
        "status": int(t.status),
        "bcm": bool(t.bcm),
        "byte_count": int(t.byte_count),
        "lower_address": int(t.lower_address),
        "data": bytes(t.data).hex(),
        "repacked": bytes(t.pack()).hex(),
        "check": bool(ok),
    }


def encode(spec):
    t = Tlp()
    kind = spec["kind"]
    if kind == "mrd":
        t.fmt_type = TlpType.MEM_READ_64 if spec["addr"] >= 1 << 32 else TlpType.MEM_READ
        t.set_addr_be(spec["addr"], spec["len"])
    elif kind == "mwr":
        t.fmt_type = TlpType.MEM_WRITE_64 if spec["addr"] >= 1 << 32 else TlpType.MEM_WRITE
        t.set_addr_be_data(spec["addr"], bytes.fromhex(spec["data"]))
    elif kind == "cpl":
        data = spec["data"]
        t.fmt_type = TlpType.CPL if data is None else TlpType.CPL_DATA
        t.completer_id = PcieId.from_int(spec["completer_id"])
        t.status = CplStatus(spec["status"])
        t.byte_count = spec["byte_count"]
        t.lower_address = spec["lower_address"]
        t.ep = spec["poisoned"]
        if data is not None:
            t.set_data(bytes.fromhex(data))
    else:
        raise ValueError(f"unknown kind {kind}")
    t.requester_id = PcieId.from_int(spec["requester_id"])
    t.tag = spec["tag"]
    return bytes(t.pack()).hex()


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("unpack", "pack"):
        sys.stderr.write(__doc__)
        sys.exit(1)
    if sys.argv[1] == "unpack":
        out = [decode(h) for h in sys.argv[2:]]
    else:
        out = [encode(s) for s in json.loads(sys.argv[2])]
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
