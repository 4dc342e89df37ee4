// STUB: ports only; the real engine replaces this file.
module dma_wr #(
  parameter int CLIENT_W = 2
) (
  input  logic                clk,
  input  logic                rst,
  input  logic [2:0]          cfg_mps,
  input  logic [15:0]         cfg_req_id,
  input  logic                wr_req_valid,
  output logic                wr_req_ready,
  input  logic [63:0]         wr_req_addr,
  input  logic [16:0]         wr_req_len,
  input  logic [CLIENT_W-1:0] wr_req_client,
  input  logic                wr_data_valid,
  output logic                wr_data_ready,
  input  logic [511:0]        wr_data,
  output logic                wr_done_valid,
  output logic [CLIENT_W-1:0] wr_done_client,
  output logic                rq_valid,
  input  logic                rq_ready,
  output logic [511:0]        rq_data,
  output logic [63:0]         rq_keep,
  output logic                rq_sop,
  output logic                rq_eop
);
  logic q;
  always_ff @(posedge clk) begin
    if (rst) q <= 1'b0;
    else q <= wr_req_valid;
  end
  assign wr_req_ready = q;
  assign wr_data_ready = 1'b0;
  assign wr_done_valid = 1'b0;
  assign wr_done_client = '0;
  assign rq_valid = 1'b0;
  assign rq_data = '0;
  assign rq_keep = '0;
  assign rq_sop = 1'b0;
  assign rq_eop = 1'b0;
endmodule
