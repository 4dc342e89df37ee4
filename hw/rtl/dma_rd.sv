// STUB: ports only; the real engine replaces this file.
module dma_rd #(
  parameter int TAGS      = 32,
  parameter int BUF_LINES = 256,
  parameter int CLIENT_W  = 2
) (
  input  logic                clk,
  input  logic                rst,
  input  logic [2:0]          cfg_mrrs,
  input  logic [15:0]         cfg_req_id,
  input  logic [23:0]         cfg_cpl_timeout,
  input  logic                rd_req_valid,
  output logic                rd_req_ready,
  input  logic [63:0]         rd_req_addr,
  input  logic [16:0]         rd_req_len,
  input  logic [CLIENT_W-1:0] rd_req_client,
  output logic                rd_data_valid,
  input  logic                rd_data_ready,
  output logic [511:0]        rd_data,
  output logic [63:0]         rd_data_keep,
  output logic                rd_data_last,
  output logic [CLIENT_W-1:0] rd_data_client,
  output logic [2:0]          rd_data_status,
  output logic                rq_valid,
  input  logic                rq_ready,
  output logic [511:0]        rq_data,
  output logic [63:0]         rq_keep,
  output logic                rq_sop,
  output logic                rq_eop,
  input  logic                rc_valid,
  output logic                rc_ready,
  input  logic [511:0]        rc_data,
  input  logic [63:0]         rc_keep,
  input  logic                rc_sop,
  input  logic                rc_eop,
  output logic [8:0]          stat_tags_busy,
  output logic [15:0]         stat_free_lines,
  output logic [31:0]         cnt_cpl_unexpected,
  output logic [31:0]         cnt_cpl_malformed,
  output logic [31:0]         cnt_cpl_timeout
);
  logic cnt_q;
  always_ff @(posedge clk) begin
    if (rst) cnt_q <= 1'b0;
    else cnt_q <= rd_req_valid;
  end
  assign rd_req_ready = cnt_q;
  assign rd_data_valid = 1'b0;
  assign rd_data = '0;
  assign rd_data_keep = '0;
  assign rd_data_last = 1'b0;
  assign rd_data_client = '0;
  assign rd_data_status = '0;
  assign rq_valid = 1'b0;
  assign rq_data = '0;
  assign rq_keep = '0;
  assign rq_sop = 1'b0;
  assign rq_eop = 1'b0;
  assign rc_ready = 1'b1;
  assign stat_tags_busy = '0;
  assign stat_free_lines = '0;
  assign cnt_cpl_unexpected = '0;
  assign cnt_cpl_malformed = '0;
  assign cnt_cpl_timeout = '0;
endmodule
