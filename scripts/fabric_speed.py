#!/usr/bin/env python3
"""Measures the fabric simulator's speed (README, "Simulator speed").

Writes three throwaway fabric vectors into a temporary directory, each
host pair WRITing 2 MiB less 4 KiB over RC at once (host 2i to host 2i+1), and runs
each with `rnic run --jobs 1 --json` (models only, every check on):

- 2 hosts on a star,
- 16 hosts on a k = 4 fat-tree (pairs across pods: host i to i + 8),
- 64 hosts on a star.

Prints simulated cycles, simulated milliseconds at 250 MHz, wall seconds,
wall seconds per simulated millisecond and NIC-cycles per second (hosts x
cycles / wall), the share of NIC-cycles the idle fast path skipped
(docs/fabric.md, "Idle hosts") and the wall seconds with it off
(`--no-idle-skip`). These vectors are not blessed: `rnic run` reports
them as "no expected results", which is expected here; any other failure
stops the script.

Then runs every shipped vector in vectors/fabric/ on the models alone,
with the idle fast path on and off, and prints each one's wall seconds
both ways and the share of NIC-cycles skipped. Each point is an independent run, so a parameter sweep shards
across machines like the vectors (`rnic run --shard K/N`).

usage: scripts/fabric_speed.py [path/to/rnic]
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "vectors"))
import gen_fabric  # noqa: E402
import gen_tx  # noqa: E402

SIZE = 2 * 1024 * 1024 - 4096


def pairs_vector(name, n, topology, pairs):
    hosts = [None] * n
    for s, d in pairs:
        w = {"qp": 0, "opcode": "write", "wr_id": "0x5e000001", "len": SIZE,
             "laddr": hex(gen_tx.VA), "lkey": hex(gen_tx.KEY0),
             "raddr": hex(gen_fabric.VA1), "rkey": hex(gen_fabric.KEY1), "imm": "0x0"}
        hosts[s] = {"memory": [{"addr": hex(gen_tx.PHYS), "len": gen_tx.MR_LEN, "seed": s}],
                    "qps": [gen_fabric.qp(s, 0, d, 0, 100, 200, False)],
                    "mrs": [gen_tx.mr()], "cqs": [gen_tx.cq(0), gen_tx.cq(1)], "wqes": [w],
                    "program": [{"wait_until": {"cycle": 400}},
                                {"post_send": {"qp": 0, "wqes": 1}}]}
        hosts[d] = {"memory": [{"addr": hex(gen_fabric.PHYS1), "len": 0x20_0000, "seed": d}],
                    "qps": [gen_fabric.qp(d, 0, s, 0, 200, 100, False)],
                    "mrs": [gen_tx.mr(index=1, key=gen_fabric.KEY1, va=gen_fabric.VA1,
                                      length=0x20_0000, pbase=gen_fabric.PHYS1,
                                      access=["local_write", "remote_write"])],
                    "cqs": [gen_tx.cq(0), gen_tx.cq(1)], "wqes": []}
    return {"format": 1, "kind": "fabric", "name": name, "description": "speed",
            "checked_against": "speed", "topology": topology,
            "link": {"delay": 100, "bits_per_cycle": 400}, "switch": {}, "hosts": hosts,
            "max_cycles": 2_000_000}


def run(rnic, path, *extra):
    """`rnic run` on the models alone: (cycles, wall seconds, NIC-cycles
    skipped); exits on a failure other than "no expected results"."""
    out = subprocess.run([rnic, "run", "--rtl", "none", "--jobs", "1", "--json", *extra, path],
                         capture_output=True, text=True)
    r = json.loads(out.stdout.splitlines()[0])
    notes = [x for x in r["notes"] if "no expected results" not in x]
    if r["divergence"] or notes or r["status"] not in ("pass", "mismatch"):
        sys.exit(f"{path}: {r}")
    return r["cycles"], r["wall_seconds"], r["idle_skipped"]


def slow(rnic, path, cycles):
    """Wall seconds with the idle fast path off; the run must take the
    same cycles."""
    c, wall, skipped = run(rnic, path, "--no-idle-skip")
    if (c, skipped) != (cycles, 0):
        sys.exit(f"{path}: {c} cycles ({skipped} skipped) without the fast path, {cycles} with")
    return wall


def main():
    rnic = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "target", "release",
                                                               "rnic")
    runs = [
        ("speed_2_star", 2, {"kind": "star"}, [(0, 1)]),
        ("speed_16_fattree", 16, {"kind": "fat_tree", "k": 4}, [(i, i + 8) for i in range(8)]),
        ("speed_64_star", 64, {"kind": "star"}, [(2 * i, 2 * i + 1) for i in range(32)]),
    ]
    print("| hosts | topology | simulated cycles | simulated ms | wall s | wall s per "
          "simulated ms | NIC-cycles/s | NIC-cycles skipped | wall s, fast path off |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as d:
        for name, n, topo, pairs in runs:
            path = os.path.join(d, name + ".json")
            with open(path, "w") as f:
                json.dump(pairs_vector(name, n, topo, pairs), f)
            cycles, wall, skipped = run(rnic, path)
            wall_off = slow(rnic, path, cycles)
            ms = cycles / 250e3
            print(f"| {n} | {topo['kind'].replace('_', '-')} | {cycles} | {ms:.3f} | {wall:.2f} "
                  f"| {wall / ms:.2f} | {n * cycles / wall / 1e3:.0f} k "
                  f"| {100 * skipped / (n * cycles):.0f} % | {wall_off:.2f} |")
    print()
    print("| vector | hosts | simulated cycles | NIC-cycles skipped | wall s | "
          "wall s, fast path off |")
    print("| --- | --- | --- | --- | --- | --- |")
    tot = [0.0, 0.0]
    fabric = os.path.join(HERE, "..", "vectors", "fabric")
    for f in sorted(os.listdir(fabric)):
        path = os.path.join(fabric, f)
        with open(path) as fh:
            n = len(json.load(fh)["hosts"])
        cycles, wall, skipped = run(rnic, path)
        wall_off = slow(rnic, path, cycles)
        tot[0] += wall
        tot[1] += wall_off
        print(f"| `{f[:-5]}` | {n} | {cycles} | {100 * skipped / (n * cycles):.0f} % "
              f"| {wall:.2f} | {wall_off:.2f} |")
    print(f"| all | | | | {tot[0]:.1f} | {tot[1]:.1f} |")


if __name__ == "__main__":
    main()
