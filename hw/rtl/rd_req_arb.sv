// Round-robin arbiter of dma_rd's read requests: client 0 (a, sq_fetch's
// WQE reads) and client 1 (b, tx_engine's payload reads). Model:
// model/src/rd_req_arb.rs (same register names).
//
// The arbiter is skid_arb (one skid entry and a registered ready per input,
// registered output, round robin per request): one input alone streams one
// request per cycle and two busy inputs alternate. A request is an item
// {addr, len}; o_client is the input it came from.
// Latency: input transferred at n -> visible on o_* at n+1 (output free).
module rd_req_arb (
  input  logic        clk,
  input  logic        rst,
  input  logic        a_valid,
  output logic        a_ready,
  input  logic [63:0] a_addr,
  input  logic [16:0] a_len,
  input  logic        b_valid,
  output logic        b_ready,
  input  logic [63:0] b_addr,
  input  logic [16:0] b_len,
  output logic        o_valid,
  input  logic        o_ready,
  output logic [63:0] o_addr,
  output logic [16:0] o_len,
  output logic [1:0]  o_client
);
  localparam int W = 64 + 17;

  logic [W-1:0] o_data;
  logic         o_sel;

  skid_arb #(
    .W       (W),
    .PACKETS (1'b0)
  ) u_arb (
    .clk     (clk),
    .rst     (rst),
    .a_valid (a_valid),
    .a_ready (a_ready),
    .a_data  ({a_addr, a_len}),
    .b_valid (b_valid),
    .b_ready (b_ready),
    .b_data  ({b_addr, b_len}),
    .o_valid (o_valid),
    .o_ready (o_ready),
    .o_data  (o_data),
    .o_sel   (o_sel)
  );

  assign o_addr   = o_data[W-1 -: 64];
  assign o_len    = o_data[16:0];
  assign o_client = {1'b0, o_sel};
endmodule
