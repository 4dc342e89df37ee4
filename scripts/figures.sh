#!/usr/bin/env bash
# Regenerates every measured figure in README.md: runs the tests that
# measure them (each in lockstep, under its own contract) with
# RNIC_FIGURES_DIR set, then splices the tables they wrote between the
# README's `<!-- figure:NAME -->` markers. The figures are exact cycle
# counts, so a rerun changes the README only when the design changed.
#
# With --bench it also runs the criterion simulator-speed benchmarks
# (benches/sim_speed.rs, several minutes) and writes their table; without
# it the README's speed table is left as it is. Speeds depend on the
# machine and its load; cycle counts do not.
#
# usage: scripts/figures.sh [--bench]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/figures
rm -rf "$dir"
mkdir -p "$dir"
export RNIC_FIGURES_DIR="$PWD/$dir"
cargo test --release \
    --test throughput --test read_latency --test write_throughput \
    --test tx_perf --test rx_cc_figures --test pair_figures --test pair_pfc \
    --test pair_loss_figures --test dcqcn_deployed --test fabric_figures \
    --test functional_coverage
if [ "${1:-}" = "--bench" ]; then
    cargo bench --bench sim_speed
    python3 scripts/criterion_table.py target/criterion "$dir/sim_speed.md"
    python3 scripts/splice_figures.py --keep coverage "$dir" README.md
else
    # Keep the README's speed table: only the cycle figures are rewritten.
    # (The coverage table is scripts/coverage.sh's.)
    python3 scripts/splice_figures.py --keep sim_speed --keep coverage "$dir" README.md
fi
