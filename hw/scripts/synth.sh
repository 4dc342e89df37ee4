#!/usr/bin/env bash
# Synthesizes each RTL top with Yosys' generic flow. RAMs stay RAM macros
# ($mem cells, as an FPGA or ASIC flow maps them to block RAM) instead of
# being exploded into flip-flops by memory_map, which would take Yosys 0.23
# over ten minutes for the 16 KiB completion buffer and say nothing more
# about the design. Fails on any latch, on a combinational loop, or on any
# other problem `check -assert` finds.
#
# usage: hw/scripts/synth.sh [TOP...]   (default: rnic_top, the design: it
# holds every block with the parameters it ships with, so CI synthesizes it
# once rather than each block again on its own; name a block to see its own
# cell count)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
command -v yosys >/dev/null || { echo "yosys not found: sudo apt-get install yosys" >&2; exit 2; }
tops=("$@")
# shellcheck source=rtl_sources.sh
. "$here/scripts/rtl_sources.sh"
[ ${#tops[@]} -gt 0 ] || tops=(rnic_top)
out=${SYNTH_OUT:-$here/../target/synth}
mkdir -p "$out"
for top in "${tops[@]}"; do
  log="$out/$top.log"
  start=$(date +%s)
  yosys -q -l "$log" -p "
    read_verilog -sv -I$here/rtl ${srcs[*]}
    synth -top $top -run begin:fine
    opt -fast -full
    techmap
    opt -fast
    abc -fast
    opt -fast
    check -assert
    stat
  " >/dev/null
  # proc_dlatch says "Latch inferred for signal ..." when it makes one.
  if grep -q 'Latch inferred' "$log" || grep -Fq '$_DLATCH' "$log"; then
    echo "synth $top: latch inferred (see $log)" >&2
    exit 1
  fi
  cells=$(grep -E '^ +Number of cells:' "$log" | tail -1 | awk '{print $4}')
  rams=$(grep -F '$mem_v2' "$log" | tail -1 | awk '{print $2}' || true)
  echo "synth $top: ok, $cells cells, ${rams:-0} RAM macros, $(( $(date +%s) - start )) s"
done
