#!/usr/bin/env bash
# Sets up (Verilator and friends, if missing) and co-simulates every shipped
# vector: the Rust model and the Verilated RTL in lockstep, then reports the
# functional coverage they reached (docs/coverage.md; out/fcov.json). Extra
# arguments go to `rnic cosim` instead (e.g. --vcd out/vcd, --json, or a
# vector path).
set -euo pipefail
cd "$(dirname "$0")"
scripts/install-deps.sh
rnic=(cargo run --release -q -p rnic-testbench --bin rnic --)
if [ $# -gt 0 ]; then
    exec "${rnic[@]}" cosim "$@"
fi
"${rnic[@]}" cosim vectors --fcov out/fcov.json
echo
echo "Functional coverage of the shipped vectors (rnic fcov out/fcov.json --holes: the known holes and why):"
exec "${rnic[@]}" fcov out/fcov.json --check
