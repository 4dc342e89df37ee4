// CNP generation: CE-marked RoCE packets become CNP requests, at most one
// per QP per interval. Model: model/src/cnp_gen.rs (same register names).
//
// Per QP a pending bit (a CNP waits to be sent) and a timer (cycles left in
// the QP's interval). A CE for QP q is suppressed when timer[q] != 0 or
// pending[q]; otherwise pending[q] := 1, timer[q] := cfg_interval. Every
// timer counts down every cycle, the cycle it is loaded included, so two
// accepted CEs of a QP are at least cfg_interval cycles apart and a CE
// exactly cfg_interval cycles after the last accepted one is accepted.
//
// The output register offers one pending QP, held until cnp_ready; the QP's
// pending bit clears when it is taken. Whenever the output is free (nothing
// offered, or the offer taken this cycle) it loads the first pending QP at
// or after the round-robin pointer, this cycle's CE and take included; a
// take moves the pointer to cnp_qp + 1. A CE at n is offered at n+1 when
// the output is free. The round robin is rr_pick (u_rr), shared with
// tx_sched.
module cnp_gen #(
  parameter int QPS = rnic_pkg::QPS
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   ce_valid,
  input  logic [$clog2(QPS)-1:0] ce_qp,
  input  logic [23:0]            cfg_interval,
  output logic                   cnp_valid,
  output logic [$clog2(QPS)-1:0] cnp_qp,
  input  logic                   cnp_ready,
  output logic                   ev_ce,
  output logic                   ev_ce_suppressed,
  output logic                   ev_cnp
);
  localparam int QPW = $clog2(QPS);

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("cnp_gen: QPS must be a power of two in 2..256");
  end

  // ------------------------------------------------------------------
  // Registers. Per-QP timers are a flattened vector, QP q at [24*q +: 24].
  // ------------------------------------------------------------------
  logic [QPS-1:0]    pending_q, pending_d;
  logic [QPS*24-1:0] timer_q, timer_d;
  logic              cnp_valid_q, cnp_valid_d;
  logic [QPW-1:0]    cnp_qp_q, cnp_qp_d;
  logic              ev_ce_q, ev_ce_suppressed_q, ev_cnp_q;

  // ------------------------------------------------------------------
  // CE acceptance, take, next pending set and timers
  // ------------------------------------------------------------------
  logic take, suppress, accept;

  always_comb begin
    take     = cnp_valid_q && cnp_ready;
    // The CE sees this cycle's registers: a CE in the cycle its QP's CNP
    // is taken still finds it pending.
    suppress = ce_valid && (timer_q[24*ce_qp +: 24] != 24'd0 || pending_q[ce_qp]);
    accept   = ce_valid && !suppress;
  end

  always_comb begin
    pending_d = pending_q;
    if (take) pending_d[cnp_qp_q] = 1'b0;
    if (accept) pending_d[ce_qp] = 1'b1;
  end

  // Loaded, then counted down in the same cycle.
  logic [QPS*24-1:0] timer_l;

  always_comb begin
    timer_l = timer_q;
    if (accept) timer_l[24*ce_qp +: 24] = cfg_interval;
  end

  always_comb begin
    for (int q = 0; q < QPS; q++) begin
      timer_d[24*q +: 24] = (timer_l[24*q +: 24] != 24'd0) ? timer_l[24*q +: 24] - 24'd1 : 24'd0;
    end
  end

  // ------------------------------------------------------------------
  // Output register: the next pending QP, round robin, when free
  // ------------------------------------------------------------------
  logic           pick_valid;
  logic [QPW-1:0] pick_qp;

  // A take moves the pointer past the QP taken.
  rr_pick #(
    .N (QPS)
  ) u_rr (
    .clk        (clk),
    .rst        (rst),
    .req        (pending_d),
    .adv        (take),
    .last_idx   (cnp_qp_q),
    .pick_valid (pick_valid),
    .pick_idx   (pick_qp)
  );

  always_comb begin
    cnp_valid_d = cnp_valid_q;
    cnp_qp_d    = cnp_qp_q;
    if (!cnp_valid_q || take) begin
      cnp_valid_d = pick_valid;
      cnp_qp_d    = pick_qp;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      pending_q          <= '0;
      timer_q            <= '0;
      cnp_valid_q        <= 1'b0;
      cnp_qp_q           <= '0;
      ev_ce_q            <= 1'b0;
      ev_ce_suppressed_q <= 1'b0;
      ev_cnp_q           <= 1'b0;
    end else begin
      pending_q          <= pending_d;
      timer_q            <= timer_d;
      cnp_valid_q        <= cnp_valid_d;
      cnp_qp_q           <= cnp_qp_d;
      ev_ce_q            <= ce_valid;
      ev_ce_suppressed_q <= suppress;
      ev_cnp_q           <= take;
    end
  end

  assign cnp_valid        = cnp_valid_q;
  assign cnp_qp           = cnp_qp_q;
  assign ev_ce            = ev_ce_q;
  assign ev_ce_suppressed = ev_ce_suppressed_q;
  assign ev_cnp           = ev_cnp_q;
endmodule
