#!/usr/bin/env bash
# Installs what the project needs beyond Rust on a Debian machine: Verilator
# (co-simulation), Yosys (synthesis check), and the Python packages the tests
# use as independent cross-checks (cocotbext-pcie for TLPs, scapy for RoCE
# frames and their ICRC). Skips whatever
# is already there.
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=()
command -v verilator >/dev/null || missing+=(verilator)
command -v yosys >/dev/null || missing+=(yosys)
command -v make >/dev/null || missing+=(make)
command -v g++ >/dev/null || missing+=(g++)
command -v python3 >/dev/null || missing+=(python3 python3-pip)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
for pkg in cocotbext.pcie:cocotbext-pcie scapy:scapy; do
  if ! python3 -c "import ${pkg%%:*}" 2>/dev/null; then
    python3 -m pip install -q "${pkg##*:}" 2>/dev/null \
      || python3 -m pip install -q --break-system-packages "${pkg##*:}"
  fi
done
verilator --version >&2
