#!/usr/bin/env bash
# Regenerates every measured figure in README.md: runs the tests that
# measure them (each in lockstep, under its own contract) with
# RNIC_FIGURES_DIR set, then splices the tables they wrote between the
# README's `<!-- figure:NAME -->` markers. The figures are exact cycle
# counts, so a rerun changes the README only when the design changed.
#
# usage: scripts/figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dir=target/figures
rm -rf "$dir"
mkdir -p "$dir"
export RNIC_FIGURES_DIR="$PWD/$dir"
cargo test --release \
    --test throughput --test read_latency --test write_throughput \
    --test tx_perf --test rx_cc_figures
python3 scripts/splice_figures.py "$dir" README.md
