#!/usr/bin/env bash
# FPGA resources of rnic_top per block: Yosys 0.23 `synth_xilinx` for
# UltraScale+ (-family xcup), out of context (-noiopad), hierarchy kept so
# that `stat` counts each block on its own. Prints a Markdown table (LUT,
# FF, block RAM, LUT-RAM, SRL, DSP per block, and the total) and keeps the
# Yosys log in target/synth/.
#
# On demand, not in CI: CI keeps the generic flow of synth.sh. QPS is the
# number of QPs rnic_top is built for (default: rnic_pkg's); a value the
# RTL rejects at elaboration fails here the same way.
#
# usage: hw/scripts/resources.sh [QPS] [TOP]   (QPS "-": the default;
# TOP: a block instead of rnic_top, its submodules then the rows)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
command -v yosys >/dev/null || { echo "yosys not found: sudo apt-get install yosys" >&2; exit 2; }
qps=${1:-}
[ "$qps" != "-" ] || qps=""
top=${2:-rnic_top}
if { [ -n "$qps" ] && ! [[ "$qps" =~ ^[0-9]+$ ]]; } || ! [[ "$top" =~ ^[a-z0-9_]+$ ]]; then
  echo "usage: hw/scripts/resources.sh [QPS] [TOP]" >&2
  exit 2
fi
# shellcheck source=rtl_sources.sh
. "$here/scripts/rtl_sources.sh"
out=${SYNTH_OUT:-$here/../target/synth}
mkdir -p "$out"
log="$out/resources_$top${qps:+_qps$qps}.log"
set_qps=""
[ -z "$qps" ] || set_qps="chparam -set QPS $qps $top"
start=$(date +%s)
yosys -q -l "$log" -p "
  read_verilog -sv -I$here/rtl ${srcs[*]}
  $set_qps
  synth_xilinx -family xcup -top $top -noiopad
  stat
" >/dev/null
secs=$(( $(date +%s) - start ))
python3 - "$log" "$secs" "${qps:-default}" "$top" <<'EOF'
import re, sys
log, secs, qps, top_name = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
text = open(log).read()
# The last `stat`: one "=== module ===" section per module, cell counts
# by type.
text = text[text.rfind("Printing statistics."):]
kinds = {
    "LUT": re.compile(r"^LUT[1-6]$"),
    "FF": re.compile(r"^FD[CPRS]E$"),
    "RAMB36": re.compile(r"^RAMB36E2$"),
    "RAMB18": re.compile(r"^RAMB18E2$"),
    "LUTRAM": re.compile(r"^RAM(32M16|32M|64M8|64M|32X1[DS]|64X1[DS]|128X1[DS]|256X1[DS]|512X1S)$"),
    "SRL": re.compile(r"^SRL(16E|C32E)$"),
    "DSP": re.compile(r"^DSP48E2$"),
}
cells = {}
for m in re.finditer(r"^=== (\S+) ===\n(.*?)(?=^=== |\Z)", text, re.S | re.M):
    name, body = m.group(1), m.group(2)
    if name == "design":
        continue
    cells[name] = {c.group(1): int(c.group(2))
                   for c in re.finditer(r"^\s+(\S+)\s+(\d+)\s*$", body, re.M)}
memo = {}
def rolled(name):
    """A module's primitives with its submodules' (times their count)."""
    if name not in memo:
        row = dict.fromkeys(kinds, 0)
        for t, n in cells[name].items():
            if t in cells:
                for k, v in rolled(t).items():
                    row[k] += n * v
            for k, rx in kinds.items():
                if rx.match(t):
                    row[k] += n
        memo[name] = row
    return memo[name]
def base(name):
    # A parameterized module: $paramod$<hash>\name or $paramod\name\P=...
    return re.sub(r"^\$paramod(\$[0-9a-f]+)?\\", "", name).split("\\")[0]
mods = {}
top = cells[top_name]
for t, n in top.items():
    if t in cells:
        row = mods.setdefault(base(t), dict.fromkeys(kinds, 0))
        for k, v in rolled(t).items():
            row[k] += n * v
own = {k: sum(n for t, n in top.items() if rx.match(t)) for k, rx in kinds.items()}
mods[top_name + " (glue)"] = own
cols = list(kinds)
print(f"{top_name}, QPS {qps}, synth_xilinx -family xcup, {secs} s")
print()
print("| block | " + " | ".join(cols) + " |")
print("| --- |" + " --- |" * len(cols))
for name, row in sorted(mods.items(), key=lambda x: -x[1]["LUT"]):
    print(f"| `{name}` | " + " | ".join(f"{row[c]:,}" for c in cols) + " |")
tot = rolled(top_name)
print("| total | " + " | ".join(f"{tot[c]:,}" for c in cols) + " |")
EOF
