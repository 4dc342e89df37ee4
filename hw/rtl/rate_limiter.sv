// Per-QP token bucket of the DCQCN rate. Model: model/src/rate_limiter.rs
// (same register names).
//
// tokens[q] is signed, in 2^-20 byte (the rate unit is 2^-20 byte per
// cycle). Each cycle: t = min(tokens + rate[q], cfg_burst << 20); a charge
// (a data frame of QP charge_qp committed to pkt_builder) then takes
// (charge_len + 24) << 20 (24 = FCS + preamble + inter-frame gap).
// rate_ok[q] (a flop) = !cc_en[q] || t >= 0: a QP may start a frame while
// its bucket is not in debt, and one frame may take it into debt. While
// cc_en[q] = 0 the bucket is held full, so CC starts with cfg_burst bytes.
//
// Width TW = 46 bits: the cap is below 2^44, cap + rate below 2^45, and a
// debt of up to 2^45 - 2^44 (over a thousand maximal frames charged past an
// empty bucket, far more than the frames in flight between rate_ok and the
// charge) stays representable.
module rate_limiter #(
  parameter int QPS = rnic_pkg::QPS
) (
  input  logic                                  clk,
  input  logic                                  rst,
  input  logic [32*QPS-1:0]                     rate,
  input  logic [QPS-1:0]                        cc_en,
  input  logic [23:0]                           cfg_burst,
  input  logic                                  charge_valid,
  input  logic [(QPS > 1 ? $clog2(QPS) : 1)-1:0] charge_qp,
  input  logic [13:0]                           charge_len,
  output logic [QPS-1:0]                        rate_ok
);
  localparam int QPW = (QPS > 1) ? $clog2(QPS) : 1;
  localparam int TW  = 46;

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("rate_limiter: QPS must be a power of two in 2..256");
  end

  logic [TW*QPS-1:0] tokens_q, tokens_d;
  logic [QPS-1:0]    rate_ok_q, rate_ok_d;

  // Cap and charge in token units (both non-negative).
  logic signed [TW-1:0] cap, cost;

  always_comb begin
    cap  = $signed({2'b00, cfg_burst, 20'd0});
    cost = $signed({11'd0, {1'b0, charge_len} + 15'd24, 20'd0});
  end

  logic signed [TW-1:0] sum, t;

  always_comb begin
    tokens_d  = tokens_q;
    rate_ok_d = rate_ok_q;
    sum       = '0;
    t         = '0;
    for (int q = 0; q < QPS; q++) begin
      sum = $signed(tokens_q[TW*q +: TW]) + $signed({14'd0, rate[32*q +: 32]});
      t   = (sum > cap) ? cap : sum;
      if (charge_valid && charge_qp == QPW'(q)) t = t - cost;
      if (cc_en[q]) begin
        tokens_d[TW*q +: TW] = t;
        rate_ok_d[q]         = t >= 0;
      end else begin
        tokens_d[TW*q +: TW] = cap;
        rate_ok_d[q]         = 1'b1;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      // Per QP: one constant of TW * QPS bits would pass Verilator's 8k-bit
      // replication limit at 256 QPs.
      for (int q = 0; q < QPS; q++) tokens_q[TW*q +: TW] <= '0;
      rate_ok_q <= '1;
    end else begin
      tokens_q  <= tokens_d;
      rate_ok_q <= rate_ok_d;
    end
  end

  assign rate_ok = rate_ok_q;
endmodule
