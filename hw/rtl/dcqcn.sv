// DCQCN reaction point of every QP (docs/protocol.md section 3, docs/rx_cc.md "dcqcn").
// Model: model/src/dcqcn.rs (same register names).
//
// Per QP: current rate rc, target rate rt (rate units, 2^-20 byte per
// cycle), alpha (Q20, 21 bits, 2^20 = 1.0; the alpha port shows it >> 10,
// Q10), alpha timer atmr, increase timer itmr, byte counter
// bcnt, stage counters t and bc (8 bits, saturating), and the pending flags
// apend (alpha timer expired) and ipend (increase timer expired). A byte
// event is pending while bcnt >= cfg_b (no flag).
//
// One shared update datapath (one multiplier for the cut, one for the hyper
// increase) serves one QP per cycle:
// 1. A CNP for a QP with cc_en takes it the cycle it arrives (cut visible
//    at n+1): rt := rc, rc := max(r_min, rc - (rc * alpha >> 21)),
//    alpha := alpha - ceil(alpha / 2^g) + (2^20 >> g) (= floor((1 - g)
//    alpha) + g: rounding toward zero); t, bc, bcnt, timers and
//    flags := 0 (bytes of that cycle are not counted). Nothing else is
//    served that cycle.
// 2. Otherwise the first QP at or after the round-robin pointer with cc_en
//    and something pending is served, the pointer moves past it. Serving
//    applies the alpha decay (alpha := alpha - ceil(alpha / 2^g)) if apend
//    and ONE increase event: the timer's
//    if ipend (t += 1), else the byte counter's (bc += 1, bcnt -= cfg_b).
//    Fast recovery if max(t, bc) < f, hyper if min(t, bc) > f (rt :=
//    min(r_max, rt + r_hai * (min - f))), else additive (rt := min(r_max,
//    rt + r_ai)); then rc := (rt + rc) >> 1.
// 3. Timers of enabled QPs count every cycle; one whose next value reaches
//    its period restarts and sets its flag, unless the flag is still set
//    after this cycle's service: then it waits and expires the cycle the
//    flag clears. bcnt adds tx_len (saturating).
// 4. A QP without cc_en is held at rc = rt = cfg_r_max, alpha =
//    cfg_alpha_init << 10, everything else 0.
module dcqcn #(
  parameter int QPS = rnic_pkg::QPS
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   cnp_valid,
  input  logic [$clog2(QPS)-1:0] cnp_qp,
  input  logic                   tx_valid,
  input  logic [$clog2(QPS)-1:0] tx_qp,
  input  logic [13:0]            tx_len,
  input  logic [QPS-1:0]         cc_en,
  input  logic [3:0]             cfg_g_shift,
  input  logic [23:0]            cfg_k,
  input  logic [23:0]            cfg_t_inc,
  input  logic [31:0]            cfg_b,
  input  logic [7:0]             cfg_f,
  input  logic [31:0]            cfg_r_ai,
  input  logic [31:0]            cfg_r_hai,
  input  logic [31:0]            cfg_r_min,
  input  logic [31:0]            cfg_r_max,
  input  logic [10:0]            cfg_alpha_init,
  output logic [32*QPS-1:0]      rc,
  output logic [32*QPS-1:0]      rt,
  output logic [11*QPS-1:0]      alpha,
  output logic [31:0]            cnt_cnp,
  output logic [31:0]            cnt_cut,
  output logic [31:0]            cnt_fr,
  output logic [31:0]            cnt_ai,
  output logic [31:0]            cnt_hai,
  output logic [31:0]            cnt_alpha
);
  localparam int QPW = $clog2(QPS);

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("dcqcn: QPS must be a power of two in 2..256");
  end

  // ------------------------------------------------------------------
  // Registers. Per-QP fields are flattened vectors, QP q at [W*q +: W].
  // ------------------------------------------------------------------
  logic [32*QPS-1:0] rc_q, rc_d;
  logic [32*QPS-1:0] rt_q, rt_d;
  logic [21*QPS-1:0] alpha_q, alpha_d;
  logic [24*QPS-1:0] atmr_q, atmr_d;
  logic [24*QPS-1:0] itmr_q, itmr_d;
  logic [32*QPS-1:0] bcnt_q, bcnt_d;
  logic [8*QPS-1:0]  t_q, t_d;
  logic [8*QPS-1:0]  bc_q, bc_d;
  logic [QPS-1:0]    apend_q, apend_d;
  logic [QPS-1:0]    ipend_q, ipend_d;
  logic [QPW-1:0]    rr_q, rr_d;
  logic [31:0]       cnt_cnp_q, cnt_cut_q, cnt_fr_q, cnt_ai_q, cnt_hai_q, cnt_alpha_q;

  // ------------------------------------------------------------------
  // Who uses the datapath: a CNP, else the round robin
  // ------------------------------------------------------------------
  logic           cut, serve, pick_valid;
  logic [QPW-1:0] pick, s;
  logic [QPS-1:0] bpend, want;

  always_comb begin
    cut = cnp_valid && cc_en[cnp_qp];
    for (int q = 0; q < QPS; q++) begin
      bpend[q] = bcnt_q[32*q +: 32] >= cfg_b;
      want[q]  = cc_en[q] && (apend_q[q] || ipend_q[q] || bpend[q]);
    end
  end

  always_comb begin
    pick_valid = 1'b0;
    pick       = '0;
    for (int k = 0; k < QPS; k++) begin
      if (!pick_valid && want[rr_q + QPW'(k)]) begin
        pick_valid = 1'b1;
        pick       = rr_q + QPW'(k);
      end
    end
  end

  logic do_alpha, inc_t, inc_b;

  always_comb begin
    serve    = !cut && pick_valid;
    s        = cut ? cnp_qp : pick;
    do_alpha = serve && apend_q[pick];
    inc_t    = serve && ipend_q[pick];
    inc_b    = serve && !ipend_q[pick] && bpend[pick];
    rr_d     = serve ? pick + QPW'(1) : rr_q;
  end

  // ------------------------------------------------------------------
  // The shared datapath, on QP s
  // ------------------------------------------------------------------
  logic [31:0] s_rc, s_rt;
  logic [20:0] s_alpha;
  logic [7:0]  s_t, s_bc;

  always_comb begin
    s_rc    = rc_q[32*s +: 32];
    s_rt    = rt_q[32*s +: 32];
    s_alpha = alpha_q[21*s +: 21];
    s_t     = t_q[8*s +: 8];
    s_bc    = bc_q[8*s +: 8];
  end

  // alpha * (1 - g) rounded toward zero: alpha - ceil(alpha / 2^g), the
  // ceiling being alpha >> g plus one if any bit shifted out was set. Shared
  // by the CNP update and the decay (one QP per cycle either way).
  logic        a_lost;
  logic [20:0] a_keep;

  always_comb begin
    a_lost = (s_alpha & ~(21'h1F_FFFF << cfg_g_shift)) != 21'd0;
    a_keep = s_alpha - (s_alpha >> cfg_g_shift) - 21'(a_lost);
  end

  // The cut: alpha < 2^21, so rc * alpha >> 21 is below rc (no underflow).
  // The CNP's alpha: a_keep + 2^20 >> g stays <= 2^20 when alpha <= 2^20,
  // and below alpha when alpha > 2^20 (alpha_init above 1.0): no overflow.
  logic [52:0] cut_prod;
  logic [31:0] cut_rc;
  logic [20:0] cut_alpha;

  always_comb begin
    cut_prod  = 53'(s_rc) * 53'(s_alpha);
    cut_rc    = s_rc - 32'(cut_prod >> 21);
    if (cut_rc < cfg_r_min) cut_rc = cfg_r_min;
    cut_alpha = a_keep + (21'h10_0000 >> cfg_g_shift);
  end

  // The increase event, with the incremented stage counters.
  logic [7:0]  inc_t_n, inc_bc_n, hi, lo, lo_f;
  logic        fr, ai, hai;
  logic [39:0] hai_prod;
  logic [40:0] rt_sum;
  logic [31:0] inc_rt;
  logic [32:0] rc_sum;
  logic [31:0] inc_rc;

  always_comb begin
    inc_t_n  = (inc_t && s_t != 8'hFF) ? s_t + 8'd1 : s_t;
    inc_bc_n = (inc_b && s_bc != 8'hFF) ? s_bc + 8'd1 : s_bc;
    hi       = (inc_t_n > inc_bc_n) ? inc_t_n : inc_bc_n;
    lo       = (inc_t_n > inc_bc_n) ? inc_bc_n : inc_t_n;
    fr       = (inc_t || inc_b) && hi < cfg_f;
    hai      = (inc_t || inc_b) && !(hi < cfg_f) && lo > cfg_f;
    ai       = (inc_t || inc_b) && !(hi < cfg_f) && !(lo > cfg_f);
    lo_f     = lo - cfg_f;
    hai_prod = 40'(cfg_r_hai) * 40'(lo_f);
    if (hai) rt_sum = 41'(s_rt) + 41'(hai_prod);
    else if (ai) rt_sum = 41'(s_rt) + 41'(cfg_r_ai);
    else rt_sum = 41'(s_rt);
    // Fast recovery leaves rt as it is, even above a lowered r_max.
    inc_rt    = (!fr && rt_sum > 41'(cfg_r_max)) ? cfg_r_max : rt_sum[31:0];
    rc_sum    = 33'(inc_rt) + 33'(s_rc);
    inc_rc    = 32'(rc_sum >> 1);
  end

  // ------------------------------------------------------------------
  // Every QP's next state
  // ------------------------------------------------------------------
  logic [QPS-1:0] apend_s, ipend_s, aexp, iexp;

  // Flags as this cycle's service leaves them, and timer expiries.
  always_comb begin
    for (int q = 0; q < QPS; q++) begin
      apend_s[q] = apend_q[q] && !(serve && pick == QPW'(q));
      ipend_s[q] = ipend_q[q] && !(inc_t && pick == QPW'(q));
      aexp[q]    = 25'(atmr_q[24*q +: 24]) + 25'd1 >= 25'(cfg_k);
      iexp[q]    = 25'(itmr_q[24*q +: 24]) + 25'd1 >= 25'(cfg_t_inc);
    end
  end

  logic [32*QPS-1:0] bcnt_s;
  logic [QPS*33-1:0] bcnt_sum;

  always_comb begin
    for (int q = 0; q < QPS; q++) begin
      bcnt_s[32*q +: 32] = (inc_b && pick == QPW'(q)) ? bcnt_q[32*q +: 32] - cfg_b
                                                      : bcnt_q[32*q +: 32];
      bcnt_sum[33*q +: 33] = 33'(bcnt_s[32*q +: 32])
                           + ((tx_valid && tx_qp == QPW'(q)) ? 33'(tx_len) : 33'd0);
    end
  end

  always_comb begin
    rc_d    = rc_q;
    rt_d    = rt_q;
    alpha_d = alpha_q;
    t_d     = t_q;
    bc_d    = bc_q;
    atmr_d  = atmr_q;
    itmr_d  = itmr_q;
    bcnt_d  = bcnt_q;
    apend_d = apend_q;
    ipend_d = ipend_q;
    for (int q = 0; q < QPS; q++) begin
      if (!cc_en[q]) begin
        rc_d[32*q +: 32]    = cfg_r_max;
        rt_d[32*q +: 32]    = cfg_r_max;
        alpha_d[21*q +: 21] = {cfg_alpha_init, 10'd0};
        atmr_d[24*q +: 24]  = '0;
        itmr_d[24*q +: 24]  = '0;
        bcnt_d[32*q +: 32]  = '0;
        t_d[8*q +: 8]       = '0;
        bc_d[8*q +: 8]      = '0;
        apend_d[q]          = 1'b0;
        ipend_d[q]          = 1'b0;
      end else if (cut && cnp_qp == QPW'(q)) begin
        rc_d[32*q +: 32]    = cut_rc;
        rt_d[32*q +: 32]    = s_rc;
        alpha_d[21*q +: 21] = cut_alpha;
        atmr_d[24*q +: 24]  = '0;
        itmr_d[24*q +: 24]  = '0;
        bcnt_d[32*q +: 32]  = '0;
        t_d[8*q +: 8]       = '0;
        bc_d[8*q +: 8]      = '0;
        apend_d[q]          = 1'b0;
        ipend_d[q]          = 1'b0;
      end else begin
        if (serve && pick == QPW'(q)) begin
          if (inc_t || inc_b) begin
            rc_d[32*q +: 32] = inc_rc;
            rt_d[32*q +: 32] = inc_rt;
          end
          if (do_alpha) alpha_d[21*q +: 21] = a_keep;
          t_d[8*q +: 8]  = inc_t_n;
          bc_d[8*q +: 8] = inc_bc_n;
        end
        // Timers: restart and flag on expiry, or wait while still flagged.
        if (!aexp[q]) begin
          atmr_d[24*q +: 24] = atmr_q[24*q +: 24] + 24'd1;
          apend_d[q]         = apend_s[q];
        end else begin
          atmr_d[24*q +: 24] = apend_s[q] ? atmr_q[24*q +: 24] : 24'd0;
          apend_d[q]         = 1'b1;
        end
        if (!iexp[q]) begin
          itmr_d[24*q +: 24] = itmr_q[24*q +: 24] + 24'd1;
          ipend_d[q]         = ipend_s[q];
        end else begin
          itmr_d[24*q +: 24] = ipend_s[q] ? itmr_q[24*q +: 24] : 24'd0;
          ipend_d[q]         = 1'b1;
        end
        bcnt_d[32*q +: 32] = bcnt_sum[33*q + 32] ? 32'hFFFF_FFFF : bcnt_sum[33*q +: 32];
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      rc_q        <= '0;
      rt_q        <= '0;
      alpha_q     <= '0;
      atmr_q      <= '0;
      itmr_q      <= '0;
      bcnt_q      <= '0;
      t_q         <= '0;
      bc_q        <= '0;
      apend_q     <= '0;
      ipend_q     <= '0;
      rr_q        <= '0;
      cnt_cnp_q   <= '0;
      cnt_cut_q   <= '0;
      cnt_fr_q    <= '0;
      cnt_ai_q    <= '0;
      cnt_hai_q   <= '0;
      cnt_alpha_q <= '0;
    end else begin
      rc_q        <= rc_d;
      rt_q        <= rt_d;
      alpha_q     <= alpha_d;
      atmr_q      <= atmr_d;
      itmr_q      <= itmr_d;
      bcnt_q      <= bcnt_d;
      t_q         <= t_d;
      bc_q        <= bc_d;
      apend_q     <= apend_d;
      ipend_q     <= ipend_d;
      rr_q        <= rr_d;
      cnt_cnp_q   <= cnt_cnp_q + 32'(cnp_valid);
      cnt_cut_q   <= cnt_cut_q + 32'(cut);
      cnt_fr_q    <= cnt_fr_q + 32'(fr);
      cnt_ai_q    <= cnt_ai_q + 32'(ai);
      cnt_hai_q   <= cnt_hai_q + 32'(hai);
      cnt_alpha_q <= cnt_alpha_q + 32'(do_alpha);
    end
  end

  assign rc        = rc_q;
  assign rt        = rt_q;
  // The port shows alpha in Q10: the top 11 bits, truncated.
  for (genvar q = 0; q < QPS; q++) begin : g_alpha
    assign alpha[11*q +: 11] = alpha_q[21*q + 10 +: 11];
  end

  assign cnt_cnp   = cnt_cnp_q;
  assign cnt_cut   = cnt_cut_q;
  assign cnt_fr    = cnt_fr_q;
  assign cnt_ai    = cnt_ai_q;
  assign cnt_hai   = cnt_hai_q;
  assign cnt_alpha = cnt_alpha_q;
endmodule
