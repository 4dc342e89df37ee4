#!/usr/bin/env bash
# verilator --lint-only -Wall on every RTL top, with no waivers.
# usage: hw/scripts/lint.sh [TOP...]   (default: every top in hw/tops.txt;
# rnic_top also at QPS 2, 32, 64, 128 and 256; csr at 256 QPs and MRs)
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
# QPS is a parameter: rnic_top must elaborate and lint clean at other sizes
# than the one it ships with, up to the map's 256.
if printf '%s\n' "${tops[@]}" | grep -qx rnic_top; then
  for qps in 2 32 64 128 256; do
    verilator --lint-only -Wall -I"$here/rtl" --top-module rnic_top -GQPS="$qps" "${srcs[@]}"
    echo "lint rnic_top QPS=$qps: clean"
  done
fi
# csr's tables are RAM (ctx_table): csr alone elaborates at the map's full
# 256 QPs and 256 MRs.
if printf '%s\n' "${tops[@]}" | grep -qx csr; then
  verilator --lint-only -Wall -I"$here/rtl" --top-module csr -GQPS=256 -GMRS=256 "${srcs[@]}"
  echo "lint csr QPS=256 MRS=256: clean"
fi
