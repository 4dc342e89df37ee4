// Assertion macros of the RTL (prim_assert style): one named line per rule.
//
// Every macro expands to nothing under SYNTHESIS (Yosys' read_verilog
// defines it), so the netlist never sees an assertion. In simulation the
// testbench verilates with --assert; a failing assertion calls the DPI-C
// function rnic_assert_fail (testbench/csrc/rtl_shim.h) with its name, its
// hierarchical scope (%m), file and line, instead of $error: $error would
// reach Verilator's vl_stop, which ends the process, while the shim records
// the failure with its cycle and the Rust side fails the run naming it.
//
// A module with assertions includes this file and puts `RNIC_ASSERT_IMPORT
// once in its body, before its first assertion.
//
// Rules (docs/architecture.md, "Assertions", lists every use):
// - RNIC_ASSERT(name, clk, rst, prop): prop holds at every rising edge
//   outside reset.
// - RNIC_ASSERT_NEVER(name, clk, rst, cond): cond is never true at a
//   rising edge outside reset.
// - RNIC_ASSERT_HANDSHAKE(name, clk, rst, valid, ready, payload): once
//   valid is up without ready, valid stays up and payload stays put until
//   the transfer (valid && ready at an edge).
// - RNIC_ASSERT_STABLE(name, clk, rst, valid, ready, payload): valid may
//   drop while not taken (a bubble), but an offer that follows a stall
//   directly is the same payload.
`ifndef RNIC_ASSERT_SVH
`define RNIC_ASSERT_SVH

`ifndef SYNTHESIS

`define RNIC_ASSERT_IMPORT \
  import "DPI-C" function void rnic_assert_fail(input string name, input string scope, \
                                                input string file, input int line);

`define RNIC_ASSERT(name, clk, rst, prop) \
  name: assert property (@(posedge clk) disable iff (rst) prop) \
    else rnic_assert_fail(`"name`", $sformatf("%m"), `__FILE__, `__LINE__);

`else

`define RNIC_ASSERT_IMPORT
`define RNIC_ASSERT(name, clk, rst, prop)

`endif

`define RNIC_ASSERT_NEVER(name, clk, rst, cond) \
  `RNIC_ASSERT(name, clk, rst, !(cond))

`define RNIC_ASSERT_HANDSHAKE(name, clk, rst, valid, ready, payload) \
  `RNIC_ASSERT(name, clk, rst, (valid) && !(ready) |=> (valid) && $stable(payload))

`define RNIC_ASSERT_STABLE(name, clk, rst, valid, ready, payload) \
  `RNIC_ASSERT(name, clk, rst, (valid) && !(ready) |=> !(valid) || $stable(payload))

`endif
