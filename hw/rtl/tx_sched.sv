// Transmit scheduler: round robin over QPs with work. Model:
// model/src/tx_sched.rs (same register names).
//
// The grant is recomputed every cycle from this cycle's inputs (it is not
// held while not taken): grant_valid = any((req_active | req_avail) & allow),
// grant_qp = the first such QP at or after the round-robin pointer. The
// pointer moves to grant_qp + 1 when the grant on the outputs is taken; the
// grant computed in that same cycle already starts from the moved pointer,
// so a taken QP is not named again while others wait.
module tx_sched #(
  parameter int QPS = 16
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic [QPS-1:0]         req_active,
  input  logic [QPS-1:0]         req_avail,
  input  logic [QPS-1:0]         allow,
  output logic                   grant_valid,
  output logic [$clog2(QPS)-1:0] grant_qp,
  input  logic                   grant_ready
);
  localparam int QPW = $clog2(QPS);

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("tx_sched: QPS must be a power of two in 2..256");
  end

  logic           grant_valid_q, grant_valid_d;
  logic [QPW-1:0] grant_qp_q, grant_qp_d;
  logic [QPW-1:0] rr_q, rr_d;
  logic [QPS-1:0] want;

  always_comb begin
    want = (req_active | req_avail) & allow;
    rr_d = (grant_valid_q && grant_ready) ? grant_qp_q + QPW'(1) : rr_q;
  end

  always_comb begin
    grant_valid_d = 1'b0;
    grant_qp_d    = grant_qp_q;
    for (int k = 0; k < QPS; k++) begin
      if (!grant_valid_d && want[rr_d + QPW'(k)]) begin
        grant_valid_d = 1'b1;
        grant_qp_d    = rr_d + QPW'(k);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      grant_valid_q <= 1'b0;
      grant_qp_q    <= '0;
      rr_q          <= '0;
    end else begin
      grant_valid_q <= grant_valid_d;
      grant_qp_q    <= grant_qp_d;
      rr_q          <= rr_d;
    end
  end

  assign grant_valid = grant_valid_q;
  assign grant_qp    = grant_qp_q;
endmodule
