// Transmit scheduler: a waiting control frame first, else round robin over
// the QPs that have work and may send. Model: model/src/tx_sched.rs (same
// register names). The round robin is rr_pick (u_rr), shared with cnp_gen.
//
// The grant is recomputed every cycle from this cycle's inputs (it is not
// held while not taken), so the outputs at n+1 follow the inputs at n:
// - ctrl_req -> a control grant (grant_ctrl = 1, grant_qp = 0); control
//   frames (ACK/CNP) win over data and are never paused, except that after
//   CTRL_BURST control grants taken since the last data grant taken
//   (ctrl_run_q), an eligible data QP gets the grant instead: data gets at
//   least one of every CTRL_BURST + 1 grants taken, and a control frame
//   waits at most one data grant;
// - else grant_valid = any(elig), grant_qp = the first eligible QP at or
//   after the round-robin pointer, where QP q is eligible when it has work
//   (req_active | req_avail), its rate limiter lets it start a frame
//   (rate_ok) and its 802.1p priority (qp_pcp[3q +: 3]) is not paused.
// The pointer moves to grant_qp + 1 when a data grant on the outputs is taken
// (a control grant leaves it alone); the grant computed in that same cycle
// already starts from the moved pointer, so a taken QP is not named again
// while others wait.
module tx_sched #(
  parameter int QPS        = rnic_pkg::QPS,
  parameter int CTRL_BURST = rnic_pkg::CTRL_BURST
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic [QPS-1:0]         req_active,
  input  logic [QPS-1:0]         req_avail,
  input  logic [QPS-1:0]         rate_ok,
  input  logic [7:0]             pause,
  input  logic [3*QPS-1:0]       qp_pcp,
  input  logic                   ctrl_req,
  output logic                   grant_valid,
  output logic [$clog2(QPS)-1:0] grant_qp,
  output logic                   grant_ctrl,
  input  logic                   grant_ready
);
  localparam int QPW = $clog2(QPS);
  localparam int RW  = $clog2(CTRL_BURST + 1);

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("tx_sched: QPS must be a power of two in 2..256");
  end
  if (CTRL_BURST < 1 || CTRL_BURST > 255) begin : g_bad_burst
    $error("tx_sched: CTRL_BURST must be in 1..255");
  end

  logic           grant_valid_q, grant_valid_d;
  logic [QPW-1:0] grant_qp_q, grant_qp_d;
  logic           grant_ctrl_q, grant_ctrl_d;
  // Control grants taken since the last data grant taken (saturating).
  logic [RW-1:0]  ctrl_run_q, ctrl_run_d;
  logic [QPS-1:0] paused, elig;

  always_comb begin
    for (int q = 0; q < QPS; q++) begin
      paused[q] = pause[qp_pcp[3*q +: 3]];
    end
  end

  always_comb begin
    elig = (req_active | req_avail) & rate_ok & ~paused;
  end

  // The data pick; a control request overrides it below. A taken data
  // grant moves the pointer past it (a control grant leaves it alone).
  logic           data_taken, ctrl_taken, data_turn, pick_valid;
  logic [QPW-1:0] pick_qp;

  always_comb begin
    data_taken = grant_valid_q && grant_ready && !grant_ctrl_q;
    ctrl_taken = grant_valid_q && grant_ready && grant_ctrl_q;
    ctrl_run_d = ctrl_run_q;
    if (data_taken) begin
      ctrl_run_d = '0;
    end else if (ctrl_taken && ctrl_run_q != RW'(CTRL_BURST)) begin
      ctrl_run_d = ctrl_run_q + RW'(1);
    end
  end

  rr_pick #(
    .N (QPS)
  ) u_rr (
    .clk        (clk),
    .rst        (rst),
    .req        (elig),
    .adv        (data_taken),
    .last_idx   (grant_qp_q),
    .pick_valid (pick_valid),
    .pick_idx   (pick_qp)
  );

  always_comb begin
    // After CTRL_BURST control grants in a row, a waiting data QP goes.
    data_turn     = pick_valid && ctrl_run_d == RW'(CTRL_BURST);
    grant_ctrl_d  = ctrl_req && !data_turn;
    grant_valid_d = ctrl_req || pick_valid;
    grant_qp_d    = grant_ctrl_d ? '0 : pick_qp;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      grant_valid_q <= 1'b0;
      grant_qp_q    <= '0;
      grant_ctrl_q  <= 1'b0;
      ctrl_run_q    <= '0;
    end else begin
      grant_valid_q <= grant_valid_d;
      grant_qp_q    <= grant_qp_d;
      grant_ctrl_q  <= grant_ctrl_d;
      ctrl_run_q    <= ctrl_run_d;
    end
  end

  assign grant_valid = grant_valid_q;
  assign grant_qp    = grant_qp_q;
  assign grant_ctrl  = grant_ctrl_q;
endmodule
