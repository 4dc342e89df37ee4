// Round-robin arbiter of the PCIe requester stream: dma_rd's MRd TLPs (a)
// and dma_wr's MWr TLPs (b) onto rq_*. A grant holds from a TLP's first beat
// to its eop beat, so TLPs are never interleaved; the round robin is per TLP.
// Model: model/src/rq_arb.rs (same register names).
//
// The arbiter is skid_arb with PACKETS = 1 (one skid entry and a registered
// ready per input, registered output): an item is a beat {data, keep, sop,
// eop}, eop at bit 0 being the packet's last-beat flag. One input alone
// streams one beat per cycle and two busy inputs alternate TLP by TLP.
// Latency: beat transferred at n -> visible on o_* at n+1 (output free).
module rq_arb (
  input  logic         clk,
  input  logic         rst,
  input  logic         a_valid,
  output logic         a_ready,
  input  logic [511:0] a_data,
  input  logic [63:0]  a_keep,
  input  logic         a_sop,
  input  logic         a_eop,
  input  logic         b_valid,
  output logic         b_ready,
  input  logic [511:0] b_data,
  input  logic [63:0]  b_keep,
  input  logic         b_sop,
  input  logic         b_eop,
  output logic         o_valid,
  input  logic         o_ready,
  output logic [511:0] o_data,
  output logic [63:0]  o_keep,
  output logic         o_sop,
  output logic         o_eop
);
  localparam int W = 512 + 64 + 2;

  logic [W-1:0] o_item;
  // Which input o_item came from: rq_* does not say.
  /* verilator lint_off UNUSEDSIGNAL */
  logic         o_sel_unused;
  /* verilator lint_on UNUSEDSIGNAL */

  skid_arb #(
    .W       (W),
    .N       (2),
    .PACKETS (1'b1)
  ) u_arb (
    .clk      (clk),
    .rst      (rst),
    .in_valid ({b_valid, a_valid}),
    .in_ready ({b_ready, a_ready}),
    .in_data  ({b_data, b_keep, b_sop, b_eop, a_data, a_keep, a_sop, a_eop}),
    .o_valid  (o_valid),
    .o_ready  (o_ready),
    .o_data   (o_item),
    .o_sel    (o_sel_unused)
  );

  assign o_data = o_item[W-1 -: 512];
  assign o_keep = o_item[65:2];
  assign o_sop  = o_item[1];
  assign o_eop  = o_item[0];
endmodule
