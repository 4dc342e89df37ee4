#!/usr/bin/env bash
# verilator --lint-only -Wall on every RTL top, with no waivers.
# usage: hw/scripts/lint.sh [TOP...]   (default: every top in hw/tops.txt)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
command -v verilator >/dev/null || { echo "verilator not found: sudo apt-get install verilator" >&2; exit 2; }
tops=("$@")
# shellcheck source=rtl_sources.sh
. "$here/scripts/rtl_sources.sh"
[ ${#tops[@]} -gt 0 ] || mapfile -t tops < <(grep -v '^#' "$here/tops.txt" | grep .)
for top in "${tops[@]}"; do
  verilator --lint-only -Wall -I"$here/rtl" --top-module "$top" "${srcs[@]}"
  echo "lint $top: clean"
done
