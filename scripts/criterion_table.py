#!/usr/bin/env python3
"""Writes criterion's simulator-speed results as a markdown table.

Reads every CRITERION/<group>/<bench>/new/{benchmark,estimates}.json (one
element of throughput = one simulated clock cycle, as benches/sim_speed.rs
declares) and writes a table of cycles per second, the mean and criterion's
95 % confidence interval, one row per benchmark. Run after `cargo bench
--bench sim_speed`; scripts/figures.sh --bench does both.

usage: criterion_table.py CRITERION_DIR OUT.md
"""
import json
import pathlib
import sys


def rate(elements: float, ns: float) -> float:
    return elements / (ns * 1e-9)


def human(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f} M"
    if x >= 1e3:
        return f"{x / 1e3:.0f} k"
    return f"{x:.0f}"


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    rows = []
    for bench in sorted(root.glob("*/*/new/benchmark.json")):
        meta = json.loads(bench.read_text())
        est = json.loads((bench.parent / "estimates.json").read_text())["mean"]
        elements = meta.get("throughput", {}).get("Elements")
        if not elements:
            continue
        lo = rate(elements, est["confidence_interval"]["upper_bound"])
        hi = rate(elements, est["confidence_interval"]["lower_bound"])
        mid = rate(elements, est["point_estimate"])
        rows.append((meta["group_id"], meta["function_id"], mid, lo, hi))
    if not rows:
        sys.exit(f"{root}: no criterion results with a throughput (run cargo bench --bench sim_speed)")
    text = "| scenario | run | cycles/s | 95 % interval |\n| --- | --- | --- | --- |\n"
    for g, f, mid, lo, hi in rows:
        text += f"| `{g}` | {f} | {human(mid)} | {human(lo)} .. {human(hi)} |\n"
    out.write_text(text)
    print(f"{out}: {len(rows)} benchmarks")


if __name__ == "__main__":
    main()
