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
// cfg_mode selects the behaviours of deployed DCQCN (docs/rx_cc.md, "DCQCN
// as deployed"), each on its own; 0 is the above:
//   bit 0 MON_CUT: a CNP only sets dmark; when the shared monitor period
//     (cfg_mon) ends, dmark moves to dpend, and the round robin serves the
//     due cut (alone) like any other event.
//   bit 1 ALPHA_T: the cut leaves alpha and the alpha timer alone; at each
//     tick of the shared alpha period (cfg_alpha_t) every running QP gets
//     apend, with aup = a CNP came in the period (amark); serving it is
//     alpha := alpha - ceil(alpha / 2^g) (+ 2^20 >> g if aup).
//   bit 2 FIRST_CNP: an enabled QP is held like a disabled one until a CNP
//     (start); an increase that brings it to rt = r_max, rc >= r_max - 1
//     releases it (start := 0). The first CNP does not set amark.
//   bit 3 CLAMP_OFF: at a cut rt := rc only if t or bc is non-zero (an
//     increase since the last cut), else rt stays.
//   bit 4 DEP_INC: one stage count t (timer and byte events), compared
//     before the event: FR if t < f, AI if t == f, HAI (rt + r_hai) if t > f.
//   bit 5 BYTE_OFF: the byte counter stays 0, no byte events.
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
  input  logic [5:0]             cfg_mode,
  input  logic [23:0]            cfg_mon,
  input  logic [23:0]            cfg_alpha_t,
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
  logic [QPS-1:0]    dmark_q, dmark_d;
  logic [QPS-1:0]    dpend_q, dpend_d;
  logic [QPS-1:0]    amark_q, amark_d;
  logic [QPS-1:0]    aup_q, aup_d;
  logic [QPS-1:0]    start_q, start_d;
  logic [23:0]       mon_q, mon_d;
  logic [23:0]       atk_q, atk_d;
  logic [QPW-1:0]    rr_q, rr_d;
  logic [31:0]       cnt_cnp_q, cnt_cut_q, cnt_fr_q, cnt_ai_q, cnt_hai_q, cnt_alpha_q;

  // ------------------------------------------------------------------
  // Who uses the datapath: a CNP, else the round robin
  // ------------------------------------------------------------------
  logic           m_mon, m_at, m_first, m_clamp_off, m_dep, m_byte_off;
  logic           mon_tick, at_tick;
  logic           cnp_en, cut_now, cut, serve, pick_valid;
  logic [QPW-1:0] pick, s;
  logic [QPS-1:0] cnp_here, held, running, bpend, want;

  always_comb begin
    m_mon       = cfg_mode[0];
    m_at        = cfg_mode[1];
    m_first     = cfg_mode[2];
    m_clamp_off = cfg_mode[3];
    m_dep       = cfg_mode[4];
    m_byte_off  = cfg_mode[5];
    // Shared free-running period counters (a period of 0 acts as 1).
    mon_tick    = 25'(mon_q) + 25'd1 >= 25'(cfg_mon);
    at_tick     = 25'(atk_q) + 25'd1 >= 25'(cfg_alpha_t);
    mon_d       = mon_tick ? 24'd0 : mon_q + 24'd1;
    atk_d       = at_tick ? 24'd0 : atk_q + 24'd1;
    cnp_en      = cnp_valid && cc_en[cnp_qp];
    cut_now     = cnp_en && !m_mon;
    for (int q = 0; q < QPS; q++) begin
      cnp_here[q] = cnp_en && cnp_qp == QPW'(q);
      held[q]     = !cc_en[q] || (m_first && !start_q[q] && !cnp_here[q]);
      running[q]  = cc_en[q] && (!m_first || start_q[q]);
      bpend[q]    = !m_byte_off && bcnt_q[32*q +: 32] >= cfg_b;
      want[q]     = running[q] && (dpend_q[q] || apend_q[q] || ipend_q[q] || bpend[q]);
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

  logic do_cut, do_alpha, inc_t, inc_b;

  always_comb begin
    serve    = !cut_now && pick_valid;
    s        = cut_now ? cnp_qp : pick;
    do_cut   = serve && dpend_q[pick];
    do_alpha = serve && !do_cut && apend_q[pick];
    inc_t    = serve && !do_cut && ipend_q[pick];
    inc_b    = serve && !do_cut && !ipend_q[pick] && bpend[pick];
    cut      = cut_now || do_cut;
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
  // Clamp off: rt follows rc only after an increase since the last cut
  // (t and bc are 0 until one). ALPHA_T: the cut leaves alpha.
  logic [52:0] cut_prod;
  logic [31:0] cut_rc, cut_rt;
  logic [20:0] cut_alpha, a_plus_g, dec_alpha;

  always_comb begin
    cut_prod  = 53'(s_rc) * 53'(s_alpha);
    cut_rc    = s_rc - 32'(cut_prod >> 21);
    if (cut_rc < cfg_r_min) cut_rc = cfg_r_min;
    cut_rt    = (m_clamp_off && s_t == 8'd0 && s_bc == 8'd0) ? s_rt : s_rc;
    a_plus_g  = a_keep + (21'h10_0000 >> cfg_g_shift);
    cut_alpha = m_at ? s_alpha : a_plus_g;
    // The served alpha update: + g only for an ALPHA_T period with a CNP.
    dec_alpha = (m_at && aup_q[pick]) ? a_plus_g : a_keep;
  end

  // The increase event, with the incremented stage counters.
  logic [7:0]  inc_t_n, inc_bc_n, hi, lo, lo_f;
  logic        is_fr, is_hai, fr, ai, hai;
  logic [39:0] hai_prod;
  logic [40:0] rt_sum;
  logic [31:0] inc_rt;
  logic [32:0] rc_sum;
  logic [31:0] inc_rc;

  always_comb begin
    // DEP_INC: every event counts in t, the stage is t before it.
    inc_t_n  = ((inc_t || (inc_b && m_dep)) && s_t != 8'hFF) ? s_t + 8'd1 : s_t;
    inc_bc_n = (inc_b && !m_dep && s_bc != 8'hFF) ? s_bc + 8'd1 : s_bc;
    hi       = (inc_t_n > inc_bc_n) ? inc_t_n : inc_bc_n;
    lo       = (inc_t_n > inc_bc_n) ? inc_bc_n : inc_t_n;
    if (m_dep) begin
      is_fr  = s_t < cfg_f;
      is_hai = s_t > cfg_f;
      lo_f   = 8'd1;
    end else begin
      is_fr  = hi < cfg_f;
      is_hai = !(hi < cfg_f) && lo > cfg_f;
      lo_f   = lo - cfg_f;
    end
    fr       = (inc_t || inc_b) && is_fr;
    hai      = (inc_t || inc_b) && !is_fr && is_hai;
    ai       = (inc_t || inc_b) && !is_fr && !is_hai;
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
  logic [QPS-1:0] cq, served, apend_s, ipend_s, aexp, iexp, amark_set;
  logic           release_p;

  // FIRST_CNP: an increase that brings the served QP back to r_max
  // releases it, unless a CNP of the period is marked or arrives now.
  always_comb begin
    release_p = m_first && serve && (inc_t || inc_b) && inc_rt == cfg_r_max
             && 33'(inc_rc) + 33'd1 >= 33'(cfg_r_max) && !dmark_q[pick] && !cnp_here[pick];
  end

  // Flags as this cycle's service leaves them, and timer expiries.
  always_comb begin
    for (int q = 0; q < QPS; q++) begin
      served[q]    = serve && pick == QPW'(q);
      cq[q]        = cut && s == QPW'(q);
      apend_s[q]   = apend_q[q] && !(served[q] && (m_at ? do_alpha : 1'b1));
      ipend_s[q]   = ipend_q[q] && !(inc_t && pick == QPW'(q));
      aexp[q]      = 25'(atmr_q[24*q +: 24]) + 25'd1 >= 25'(cfg_k);
      iexp[q]      = 25'(itmr_q[24*q +: 24]) + 25'd1 >= 25'(cfg_t_inc);
      amark_set[q] = m_at && cnp_here[q] && !(m_first && !start_q[q]);
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
    dmark_d = dmark_q;
    dpend_d = dpend_q;
    amark_d = amark_q;
    aup_d   = aup_q;
    start_d = start_q;
    for (int q = 0; q < QPS; q++) begin
      if (held[q]) begin
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
        dmark_d[q]          = 1'b0;
        dpend_d[q]          = 1'b0;
        amark_d[q]          = 1'b0;
        aup_d[q]            = 1'b0;
        start_d[q]          = 1'b0;
      end else begin
        // The datapath's result for the QP it handled.
        if (cq[q]) begin
          rc_d[32*q +: 32]    = cut_rc;
          rt_d[32*q +: 32]    = cut_rt;
          alpha_d[21*q +: 21] = cut_alpha;
          t_d[8*q +: 8]       = '0;
          bc_d[8*q +: 8]      = '0;
        end else if (served[q]) begin
          if (inc_t || inc_b) begin
            rc_d[32*q +: 32] = inc_rc;
            rt_d[32*q +: 32] = inc_rt;
          end
          if (do_alpha) alpha_d[21*q +: 21] = dec_alpha;
          t_d[8*q +: 8]  = inc_t_n;
          bc_d[8*q +: 8] = inc_bc_n;
        end
        // Alpha: the shared period (ALPHA_T) or the QP's own timer.
        if (m_at) begin
          atmr_d[24*q +: 24] = '0;
          if (at_tick) begin
            apend_d[q] = 1'b1;
            aup_d[q]   = (aup_q[q] && !(served[q] && do_alpha)) || amark_q[q] || amark_set[q];
            amark_d[q] = 1'b0;
          end else begin
            apend_d[q] = apend_s[q];
            aup_d[q]   = aup_q[q] && !(served[q] && do_alpha);
            amark_d[q] = amark_q[q] || amark_set[q];
          end
        end else begin
          amark_d[q] = 1'b0;
          aup_d[q]   = 1'b0;
          if (cq[q]) begin
            atmr_d[24*q +: 24] = '0;
            apend_d[q]         = 1'b0;
          end else if (!aexp[q]) begin
            // Timers: restart and flag on expiry, or wait while still flagged.
            atmr_d[24*q +: 24] = atmr_q[24*q +: 24] + 24'd1;
            apend_d[q]         = apend_s[q];
          end else begin
            atmr_d[24*q +: 24] = apend_s[q] ? atmr_q[24*q +: 24] : 24'd0;
            apend_d[q]         = 1'b1;
          end
        end
        // Increase timer and byte counter; a cut restarts them.
        if (cq[q]) begin
          itmr_d[24*q +: 24] = '0;
          ipend_d[q]         = 1'b0;
          bcnt_d[32*q +: 32] = '0;
        end else begin
          if (!iexp[q]) begin
            itmr_d[24*q +: 24] = itmr_q[24*q +: 24] + 24'd1;
            ipend_d[q]         = ipend_s[q];
          end else begin
            itmr_d[24*q +: 24] = ipend_s[q] ? itmr_q[24*q +: 24] : 24'd0;
            ipend_d[q]         = 1'b1;
          end
          if (m_byte_off) bcnt_d[32*q +: 32] = '0;
          else bcnt_d[32*q +: 32] = bcnt_sum[33*q + 32] ? 32'hFFFF_FFFF : bcnt_sum[33*q +: 32];
        end
        // MON_CUT: the period's mark becomes a due cut when it ends.
        if (m_mon) begin
          if (mon_tick) begin
            dpend_d[q] = (dpend_q[q] && !(served[q] && do_cut)) || dmark_q[q] || cnp_here[q];
            dmark_d[q] = 1'b0;
          end else begin
            dpend_d[q] = dpend_q[q] && !(served[q] && do_cut);
            dmark_d[q] = dmark_q[q] || cnp_here[q];
          end
        end else begin
          dmark_d[q] = 1'b0;
          dpend_d[q] = 1'b0;
        end
        start_d[q] = (start_q[q] && !(served[q] && release_p)) || cnp_here[q];
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
      dmark_q     <= '0;
      dpend_q     <= '0;
      amark_q     <= '0;
      aup_q       <= '0;
      start_q     <= '0;
      mon_q       <= '0;
      atk_q       <= '0;
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
      dmark_q     <= dmark_d;
      dpend_q     <= dpend_d;
      amark_q     <= amark_d;
      aup_q       <= aup_d;
      start_q     <= start_d;
      mon_q       <= mon_d;
      atk_q       <= atk_d;
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
