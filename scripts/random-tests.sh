#!/usr/bin/env bash
# Prints `--test <name>` for every constrained-random test file (each test
# file that reads RNIC_RANDOM_SEED, tests/common/mod.rs): the one list that
# scripts/random-seed.sh and scripts/coverage.sh run.
set -euo pipefail
cd "$(dirname "$0")/.."
for f in tests/*.rs; do
    if grep -qE 'run_cases|common::seed\(|RNIC_RANDOM_SEED' "$f"; then
        echo "--test $(basename "$f" .rs)"
    fi
done
