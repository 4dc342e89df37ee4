#!/usr/bin/env bash
# Runs every constrained-random test (each test file that reads
# RNIC_RANDOM_SEED, tests/common/mod.rs) once more with one seed, so a CI
# run covers a seed the default run does not. Without an argument the seed
# is derived from the commit (its first 8 hex digits), so each commit gets
# its own and a failure replays exactly:
#
#   scripts/random-seed.sh            # the commit's seed
#   scripts/random-seed.sh 0x1234abcd # any seed
#
# Every random test reaches its floors by construction for any seed, so a
# failure here is a bug found, not bad luck (issue 14).
set -euo pipefail
cd "$(dirname "$0")/.."
seed="${1:-0x$(git rev-parse --short=8 HEAD)}"
read -ra tests <<<"$(scripts/random-tests.sh | tr '\n' ' ')"
echo "RNIC_RANDOM_SEED=$seed over $(( ${#tests[@]} / 2 )) random test files"
echo "replay: scripts/random-seed.sh $seed"
RNIC_RANDOM_SEED="$seed" cargo test --release "${tests[@]}"
