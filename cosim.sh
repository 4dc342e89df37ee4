#!/usr/bin/env bash
# Sets up (Verilator and friends, if missing) and co-simulates every shipped
# vector: the Rust model and the Verilated RTL in lockstep. Extra arguments
# go to `rnic cosim` (e.g. --vcd out/vcd, --json, or a vector path).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(vectors)
exec cargo run --release -q -p rnic-testbench --bin rnic -- cosim "${args[@]}"
