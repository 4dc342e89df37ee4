#!/usr/bin/env bash
# verilator --lint-only -Wall on every RTL top, with no waivers.
# usage: hw/scripts/lint.sh [TOP...]   (default: every top in hw/tops.txt)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
command -v verilator >/dev/null || { echo "verilator not found: sudo apt-get install verilator" >&2; exit 2; }
tops=("$@")
[ ${#tops[@]} -gt 0 ] || mapfile -t tops < <(grep -v '^#' "$here/tops.txt" | grep .)
for top in "${tops[@]}"; do
  verilator --lint-only -Wall --top-module "$top" "$here"/rtl/*.sv
  echo "lint $top: clean"
done
