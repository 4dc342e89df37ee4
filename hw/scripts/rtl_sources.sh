# Sourced by lint.sh, synth.sh and resources.sh: sets `srcs` to every RTL
# file, packages (*_pkg.sv) first, since Verilator and Yosys want a package
# declared before a module refers to it. `here` is hw/.
mapfile -t srcs < <(ls "$here"/rtl/*_pkg.sv 2>/dev/null; ls "$here"/rtl/*.sv | grep -v '_pkg\.sv$')
