// Single-clock FIFO. Its outputs are decodes of its own registers, so a
// parent may use them in the cycle they are seen. Model: model/src/sync_fifo.rs.
`include "rnic_assert.svh"

module sync_fifo #(
  parameter int WIDTH = 8,
  parameter int DEPTH = 2,
  // The parent never pushes while the FIFO is full (it leaves in_ready
  // unused); an assertion checks it in simulation.
  parameter bit NEVER_FULL = 1'b0
) (
  input  logic             clk,
  input  logic             rst,
  input  logic             in_valid,
  output logic             in_ready,
  input  logic [WIDTH-1:0] in_data,
  output logic             out_valid,
  input  logic             out_ready,
  output logic [WIDTH-1:0] out_data
);
  localparam int AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;

  if (DEPTH < 2 || (DEPTH & (DEPTH - 1)) != 0) begin : g_bad_depth
    $error("sync_fifo: DEPTH must be a power of two >= 2");
  end

  logic [WIDTH-1:0] mem_q [DEPTH];
  logic [AW-1:0]    wr_ptr_q, rd_ptr_q;
  logic [AW:0]      count_q;
  logic             do_push, do_pop;

  assign in_ready  = count_q != (AW+1)'(DEPTH);
  assign out_valid = count_q != '0;
  assign out_data  = mem_q[rd_ptr_q];
  assign do_push   = in_valid && in_ready;
  assign do_pop    = out_ready && out_valid;

  always_ff @(posedge clk) begin
    if (do_push) mem_q[wr_ptr_q] <= in_data;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wr_ptr_q <= '0;
      rd_ptr_q <= '0;
      count_q  <= '0;
    end else begin
      if (do_push) wr_ptr_q <= wr_ptr_q + 1'b1;
      if (do_pop) rd_ptr_q <= rd_ptr_q + 1'b1;
      count_q <= count_q + {{AW{1'b0}}, do_push} - {{AW{1'b0}}, do_pop};
    end
  end
  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  // A parent that sets NEVER_FULL relies on the FIFO never being full when
  // it pushes (it ignores in_ready): a push then would be lost.
  if (NEVER_FULL) begin : g_never_full
    `RNIC_ASSERT_NEVER(a_no_push_full, clk, rst, in_valid && !in_ready)
  end
endmodule
