`include "rnic_assert.svh"

// Round-robin arbiter of dma_wr's clients: cq_writer (a, client 0) and
// rx_wr (b, client 1) onto one dma_wr. Model: model/src/wr_arb.rs (same
// register names). Contract: docs/responder.md, "rx_wr and wr_arb".
//
// Requests: skid_arb (u_arb, one request per item) round-robins the two
// request channels; its output is wr_req_*, with the winner as
// wr_req_client. A request taken by dma_wr pushes {client, beats} into the
// order FIFO (u_ord): the data channel then passes exactly ceil(len/64)
// beats of that client, request by request in the order dma_wr took them,
// so beats of different requests never interleave. The data beats go
// through a 2-entry FIFO (u_dq), so every ready is a decode of registers.
// A request is offered to dma_wr only while the order FIFO has room.
//
// wr_done is not demultiplexed here: dma_wr's wr_done_client names the
// client (rnic_top routes it).
module wr_arb #(
  // Requests taken by dma_wr whose data has not all passed, at most.
  parameter int ORD = 4
) (
  input  logic         clk,
  input  logic         rst,
  input  logic         a_req_valid,
  output logic         a_req_ready,
  input  logic [63:0]  a_req_addr,
  input  logic [16:0]  a_req_len,
  input  logic         a_data_valid,
  output logic         a_data_ready,
  input  logic [511:0] a_data,
  input  logic         b_req_valid,
  output logic         b_req_ready,
  input  logic [63:0]  b_req_addr,
  input  logic [16:0]  b_req_len,
  input  logic         b_data_valid,
  output logic         b_data_ready,
  input  logic [511:0] b_data,
  output logic         wr_req_valid,
  input  logic         wr_req_ready,
  output logic [63:0]  wr_req_addr,
  output logic [16:0]  wr_req_len,
  output logic         wr_req_client,
  output logic         wr_data_valid,
  input  logic         wr_data_ready,
  output logic [511:0] wr_data
);
  localparam int RW = 64 + 17;

  if (ORD < 2 || (ORD & (ORD - 1)) != 0) begin : g_bad_ord
    $error("wr_arb: ORD must be a power of two >= 2");
  end

  // ------------------------------------------------------------------
  // Requests
  // ------------------------------------------------------------------
  logic          arb_valid, arb_ready, arb_sel;
  logic [RW-1:0] arb_data;

  skid_arb #(
    .W       (RW),
    .N       (2),
    .PACKETS (1'b0)
  ) u_arb (
    .clk      (clk),
    .rst      (rst),
    .in_valid ({b_req_valid, a_req_valid}),
    .in_ready ({b_req_ready, a_req_ready}),
    .in_data  ({b_req_addr, b_req_len, a_req_addr, a_req_len}),
    .o_valid  (arb_valid),
    .o_ready  (arb_ready),
    .o_data   (arb_data),
    .o_sel    (arb_sel)
  );

  // ------------------------------------------------------------------
  // Order of the requests taken: {client, beats}
  // ------------------------------------------------------------------
  logic        ord_in_ready, ord_valid, ord_pop, take;
  logic [11:0] ord_data;
  logic        ord_sel;
  logic [10:0] ord_beats;
  logic [10:0] beats;

  assign beats = 11'((arb_data[16:0] + 17'd63) >> 6);
  assign take  = arb_valid && ord_in_ready && wr_req_ready;

  sync_fifo #(.WIDTH(12), .DEPTH(ORD)) u_ord (
    .clk      (clk),
    .rst      (rst),
    .in_valid (take),
    .in_ready (ord_in_ready),
    .in_data  ({arb_sel, beats}),
    .out_valid(ord_valid),
    .out_ready(ord_pop),
    .out_data (ord_data)
  );
  assign {ord_sel, ord_beats} = ord_data;

  assign wr_req_valid  = arb_valid && ord_in_ready;
  assign arb_ready     = ord_in_ready && wr_req_ready;
  assign wr_req_addr   = arb_data[RW-1:17];
  assign wr_req_len    = arb_data[16:0];
  assign wr_req_client = arb_sel;

  // ------------------------------------------------------------------
  // Data: the head request's client, its beats
  // ------------------------------------------------------------------
  logic         dq_in_ready, pass;
  logic [10:0]  cnt_q, cnt_d;
  logic [511:0] pass_data;

  always_comb begin
    a_data_ready = ord_valid && !ord_sel && dq_in_ready;
    b_data_ready = ord_valid && ord_sel && dq_in_ready;
    pass         = (a_data_valid && a_data_ready) || (b_data_valid && b_data_ready);
    pass_data    = ord_sel ? b_data : a_data;
    ord_pop      = pass && cnt_q + 11'd1 == ord_beats;
    cnt_d        = cnt_q;
    if (pass) begin
      cnt_d = ord_pop ? 11'd0 : cnt_q + 11'd1;
    end
  end

  sync_fifo #(.WIDTH(512), .DEPTH(2)) u_dq (
    .clk      (clk),
    .rst      (rst),
    .in_valid (pass),
    .in_ready (dq_in_ready),
    .in_data  (pass_data),
    .out_valid(wr_data_valid),
    .out_ready(wr_data_ready),
    .out_data (wr_data)
  );

  always_ff @(posedge clk) begin
    if (rst) begin
      cnt_q <= '0;
    end else begin
      cnt_q <= cnt_d;
    end
  end

  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  `RNIC_ASSERT_HANDSHAKE(a_a_req_hold, clk, rst, a_req_valid, a_req_ready,
                         {a_req_addr, a_req_len})
  `RNIC_ASSERT_HANDSHAKE(a_b_req_hold, clk, rst, b_req_valid, b_req_ready,
                         {b_req_addr, b_req_len})
  `RNIC_ASSERT_HANDSHAKE(a_a_data_hold, clk, rst, a_data_valid, a_data_ready, a_data)
  `RNIC_ASSERT_HANDSHAKE(a_b_data_hold, clk, rst, b_data_valid, b_data_ready, b_data)
  // dma_wr takes lengths 1..65536.
  `RNIC_ASSERT_NEVER(a_len_zero, clk, rst,
                     (a_req_valid && a_req_len == '0) || (b_req_valid && b_req_len == '0))
endmodule
