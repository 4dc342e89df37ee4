// Round-robin arbiter of dma_rd's read requests: client 0 (a, sq_fetch's
// WQE reads), client 1 (b, tx_engine's payload reads), client 2 (c,
// rq_fetch's RECV WQE reads) and client 3 (d, the READ responder's host
// reads). Model: model/src/rd_req_arb.rs (same register names).
//
// The arbiter is skid_arb with N = 4 (one skid entry and a registered ready
// per input, registered output, round robin per request): one input alone
// streams one request per cycle, busy inputs take turns, and a waiting
// input is passed over at most 3 times. Idle inputs take no turn, so with c
// and d idle a and b see exactly the two-input arbiter. A request is an
// item {addr, len}; o_client is the input it came from.
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
  input  logic        c_valid,
  output logic        c_ready,
  input  logic [63:0] c_addr,
  input  logic [16:0] c_len,
  input  logic        d_valid,
  output logic        d_ready,
  input  logic [63:0] d_addr,
  input  logic [16:0] d_len,
  output logic        o_valid,
  input  logic        o_ready,
  output logic [63:0] o_addr,
  output logic [16:0] o_len,
  output logic [1:0]  o_client
);
  localparam int W = 64 + 17;

  logic [W-1:0] o_data;

  skid_arb #(
    .W       (W),
    .N       (4),
    .PACKETS (1'b0)
  ) u_arb (
    .clk      (clk),
    .rst      (rst),
    .in_valid ({d_valid, c_valid, b_valid, a_valid}),
    .in_ready ({d_ready, c_ready, b_ready, a_ready}),
    .in_data  ({d_addr, d_len, c_addr, c_len, b_addr, b_len, a_addr, a_len}),
    .o_valid  (o_valid),
    .o_ready  (o_ready),
    .o_data   (o_data),
    .o_sel    (o_client)
  );

  assign o_addr = o_data[W-1 -: 64];
  assign o_len  = o_data[16:0];
endmodule
