#!/usr/bin/env bash
# RTL code coverage (line, branch, toggle) of the shipped vectors and,
# separately, of the constrained-random tests (issue 14):
#
#   scripts/coverage.sh [--readme] [OUT]   # OUT defaults to target/coverage
#
# Builds the testbench with the `coverage` feature (every Verilated unit
# instrumented, in target/release/verilated-cov/; the normal build is left
# alone), runs `rnic cosim vectors` and the random test files with
# RNIC_COVERAGE_DIR set, so each process leaves one data file, then merges:
#
#   OUT/vectors.dat, OUT/random.dat, OUT/all.dat   verilator_coverage --write
#   OUT/annotated/                                 sources with counts, lines
#                                                  under 1 marked %000000
#   OUT/coverage.info                              lcov, for CI dashboards
#   OUT/summary.md                                 per-block tables (rnic coverage)
#   OUT/holes.txt                                  every point never hit, a toggle
#                                                  point per bit (rnic coverage --holes)
#   OUT/figures/coverage.md                        the README's table
#
# With --readme it also puts that table into README.md (between the
# `<!-- figure:coverage -->` markers, scripts/splice_figures.py).
# Everything else it writes is under OUT. Not part of `cargo test`: the build
# alone takes as long as the normal one, and instrumented RTL runs slower.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
readme=no
if [ "${1:-}" = "--readme" ]; then
    readme=yes
    shift
fi
out="${1:-target/coverage}"
command -v verilator_coverage >/dev/null || {
    echo "verilator_coverage not found: run scripts/install-deps.sh" >&2
    exit 2
}
# OUT is cleared first, so it must be one this script made (or new, or empty).
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ] && [ ! -e "$out/.rnic-coverage" ]; then
    echo "$out: not empty and not made by scripts/coverage.sh; refusing to clear it" >&2
    exit 2
fi
rm -rf "$out"
mkdir -p "$out/vectors" "$out/random" "$out/figures"
out="$(cd "$out" && pwd)"
touch "$out/.rnic-coverage"
step() { echo "=== $* ($(date +%T))"; }
# The RTL starts at zero here, not from its random power-up state
# (README, "Reading a divergence report"): random initial values flip
# most bits of every register once at reset, which would count as
# toggles no stimulus made.
export RNIC_RTL_RAND_RESET=0

step build with RTL coverage
cargo build --release -q --features coverage --bin rnic

step "shipped vectors (rnic cosim vectors)"
RNIC_COVERAGE_DIR="$out/vectors" target/release/rnic cosim vectors >"$out/vectors.log"
tail -1 "$out/vectors.log"

step "random tests (scripts/random-tests.sh), default seeds"
read -ra tests <<<"$(scripts/random-tests.sh | tr '\n' ' ')"
RNIC_COVERAGE_DIR="$out/random" cargo test --release -q --features coverage "${tests[@]}" \
    >"$out/random.log" 2>&1 || { tail -30 "$out/random.log"; exit 1; }
{ grep -c "^test result: ok" "$out/random.log" || true; } | sed 's/$/ random test files passed/'

step merge, annotate, lcov
verilator_coverage --write "$out/vectors.dat" "$out"/vectors/*.dat
verilator_coverage --write "$out/random.dat" "$out"/random/*.dat
verilator_coverage --write "$out/all.dat" "$out/vectors.dat" "$out/random.dat"
verilator_coverage --annotate-min 1 --annotate "$out/annotated" "$out/all.dat" >/dev/null
verilator_coverage --write-info "$out/coverage.info" "$out/all.dat"

step summary
(cd "$out" && "$root/target/release/rnic" coverage vectors.dat random.dat all.dat) \
    | tee "$out/summary.md"
(cd "$out" && "$root/target/release/rnic" coverage --side-by-side vectors.dat random.dat all.dat) \
    >"$out/figures/coverage.md"
(cd "$out" && "$root/target/release/rnic" coverage --holes all.dat) >"$out/holes.txt"
echo "$(wc -l <"$out/holes.txt") points never hit: $out/holes.txt"
if [ "$readme" = yes ]; then
    python3 scripts/splice_figures.py --only coverage "$out/figures" README.md
fi
