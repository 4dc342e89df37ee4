// Round-robin arbiter of the two completion sources onto cq_writer's cpl_*
// port: a = requester completions (ack_tracker), b = the responder's RECV
// completions. Model: model/src/cq_arb.rs (same register names). Contract:
// docs/tx_datapath.md, "cq_arb".
//
// The arbiter is skid_arb with N = 2, PACKETS = 0 (one skid entry and a
// registered ready per input, registered output): a completion is one item,
// one source alone streams one completion per cycle and two busy sources
// alternate. Order is kept per source only. b never waits for a frame
// (b_wait_frame is passed on, and asserted 0): cq_writer matches frame_done
// pulses to wait_frame completions in order, and only a's completions have
// frames (docs/tx_datapath.md, "cq_arb", the frame_done rule).
// Latency: completion taken at n -> on o_* at n+1 (output free).
`include "rnic_assert.svh"

module cq_arb #(
  parameter int QPS = rnic_pkg::QPS,
  parameter int CQS = rnic_pkg::CQS
) (
  input  logic           clk,
  input  logic           rst,
  input  logic           a_valid,
  output logic           a_ready,
  input  logic           a_wait_frame,
  input  logic [63:0]    a_wr_id,
  input  logic [7:0]     a_status,
  input  logic [7:0]     a_opcode,
  input  logic [31:0]    a_len,
  input  logic [31:0]    a_imm,
  input  logic           a_imm_flag,
  input  logic [23:0]    a_src_qp,
  input  logic [QPW-1:0] a_qp,
  input  logic [CQW-1:0] a_cq,
  input  logic           b_valid,
  output logic           b_ready,
  input  logic           b_wait_frame,
  input  logic [63:0]    b_wr_id,
  input  logic [7:0]     b_status,
  input  logic [7:0]     b_opcode,
  input  logic [31:0]    b_len,
  input  logic [31:0]    b_imm,
  input  logic           b_imm_flag,
  input  logic [23:0]    b_src_qp,
  input  logic [QPW-1:0] b_qp,
  input  logic [CQW-1:0] b_cq,
  output logic           o_valid,
  input  logic           o_ready,
  output logic           o_wait_frame,
  output logic [63:0]    o_wr_id,
  output logic [7:0]     o_status,
  output logic [7:0]     o_opcode,
  output logic [31:0]    o_len,
  output logic [31:0]    o_imm,
  output logic           o_imm_flag,
  output logic [23:0]    o_src_qp,
  output logic [QPW-1:0] o_qp,
  output logic [CQW-1:0] o_cq
);
  localparam int QPW = (QPS > 1) ? $clog2(QPS) : 1;
  localparam int CQW = (CQS > 1) ? $clog2(CQS) : 1;
  localparam int W   = 1 + 64 + 8 + 8 + 32 + 32 + 1 + 24 + QPW + CQW;

  if (QPS < 2 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("cq_arb: QPS must be a power of two >= 2");
  end
  if (CQS < 2 || (CQS & (CQS - 1)) != 0) begin : g_bad_cqs
    $error("cq_arb: CQS must be a power of two >= 2");
  end

  logic [W-1:0] o_item;
  // Which source o_item came from: cq_writer's cpl port does not say.
  /* verilator lint_off UNUSEDSIGNAL */
  logic         o_sel_unused;
  /* verilator lint_on UNUSEDSIGNAL */

  skid_arb #(
    .W       (W),
    .N       (2),
    .PACKETS (1'b0)
  ) u_arb (
    .clk      (clk),
    .rst      (rst),
    .in_valid ({b_valid, a_valid}),
    .in_ready ({b_ready, a_ready}),
    .in_data  ({b_wait_frame, b_wr_id, b_status, b_opcode, b_len, b_imm, b_imm_flag,
                b_src_qp, b_qp, b_cq,
                a_wait_frame, a_wr_id, a_status, a_opcode, a_len, a_imm, a_imm_flag,
                a_src_qp, a_qp, a_cq}),
    .o_valid  (o_valid),
    .o_ready  (o_ready),
    .o_data   (o_item),
    .o_sel    (o_sel_unused)
  );

  assign {o_wait_frame, o_wr_id, o_status, o_opcode, o_len, o_imm, o_imm_flag, o_src_qp,
          o_qp, o_cq} = o_item;

  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  `RNIC_ASSERT_HANDSHAKE(a_a_cpl_hold, clk, rst, a_valid, a_ready,
                         {a_wait_frame, a_wr_id, a_status, a_opcode, a_len, a_imm, a_imm_flag,
                          a_src_qp, a_qp, a_cq})
  `RNIC_ASSERT_HANDSHAKE(a_b_cpl_hold, clk, rst, b_valid, b_ready,
                         {b_wait_frame, b_wr_id, b_status, b_opcode, b_len, b_imm, b_imm_flag,
                          b_src_qp, b_qp, b_cq})
  // A b completion waiting for a frame would take the frame_done of an a
  // completion in cq_writer (frame_done pulses match in order).
  `RNIC_ASSERT_NEVER(a_b_wait_frame, clk, rst, b_valid && b_wait_frame)
endmodule
