// The requester's retransmission decisions, per QP: the local ACK timer,
// retry_left / rnr_left, the RNR wait, and when to rewind or give up.
// Model: model/src/retx_ctl.rs (same register names). Contract:
// docs/retx_ctl.md.
//
// A scanner visits one QP a cycle: at n it reads the QP's row (seen una,
// deadline) and its RETRY attributes (attr_idx), at n+1 it decides with
// both and writes the row back. NAKs (ack_tracker) and gaps (rd_sink) are
// decided the cycle they come, from per-QP flops. Rewinds and exhaustions
// wait as a bit per QP and leave one at a time through the rw_* and xerr_*
// output registers (round robin each).
//
// Storage: RAM of QPS rows {seen una 24, deadline 48} (scanner: one
// registered read and one write a cycle), RAM of QPS RNR timer codes
// (written by an RNR NAK, read by the scanner), RAM of QPS gap PSNs
// (written by a gap, read by the rewind picker); both small RAMs forward a
// write to a read of the same row in the same cycle. Flops per QP: 18 bits
// (12 flags, retry_left, rnr_left).
//
// A QP in ERROR (halt) gets no rewind and hears no NAK or gap. If it is
// not in ack_tracker's error mode as well (csr moved it there for another
// cause: software, a later WQE's local error, its responder side), the
// requests it already sent may still be acknowledged, so its timer keeps
// running (drain); an expiry then gives up at once with status 5
// (flushed): a peer that never answers cannot hold its completions.
`include "rnic_assert.svh"

module retx_ctl #(
  parameter int QPS    = rnic_pkg::QPS,
  parameter int T_UNIT = 1024,           // cycles of 4.096 us
  parameter int R_UNIT = 2500            // cycles of 10 us
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic [24*QPS-1:0]      una_all,
  input  logic [QPS-1:0]         busy,
  input  logic [QPS-1:0]         halt,
  input  logic [QPS-1:0]         err_mode,
  input  logic                   nak_valid,
  input  logic [$clog2(QPS)-1:0] nak_qp,
  input  logic [23:0]            nak_psn,
  input  logic                   nak_rnr,
  input  logic [4:0]             nak_timer,
  input  logic                   gap_valid,
  input  logic [$clog2(QPS)-1:0] gap_qp,
  input  logic [23:0]            gap_psn,
  input  logic                   clr_valid,
  input  logic [$clog2(QPS)-1:0] clr_qp,
  output logic [$clog2(QPS)-1:0] attr_idx,
  input  logic [4:0]             attr_timeout,
  input  logic [2:0]             attr_retry,
  input  logic [2:0]             attr_rnr_retry,
  output logic                   rw_valid,
  output logic [$clog2(QPS)-1:0] rw_qp,
  output logic [23:0]            rw_psn,
  input  logic                   rw_ready,
  output logic                   xerr_valid,
  output logic [$clog2(QPS)-1:0] xerr_qp,
  output logic [7:0]             xerr_status,
  input  logic                   xerr_ready,
  output logic                   ev_timeout,
  output logic                   ev_rewind,
  output logic                   ev_rnr_wait,
  output logic                   ev_exhaust,
  // Bit q: QP q waits out an RNR NAK: it sends nothing until the rewind
  // (rnic_top holds its grants).
  output logic [QPS-1:0]         hold
);
  localparam int QPW = $clog2(QPS);
  localparam int TW  = 48;              // the cycle counter and deadlines
  localparam int RW  = 24 + TW;         // row: {seen una, deadline}

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("retx_ctl: QPS must be a power of two in 2..256");
  end
  // T_UNIT << 31 and 65536 * R_UNIT stay far below 2^47 (the compare's range).
  if (T_UNIT < 1 || T_UNIT > 65536) begin : g_bad_tunit
    $error("retx_ctl: T_UNIT must be in 1..65536");
  end
  if (R_UNIT < 1 || R_UNIT > 1048576) begin : g_bad_runit
    $error("retx_ctl: R_UNIT must be in 1..2^20");
  end

  `RNIC_ASSERT_IMPORT

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic [TW-1:0]    now_q;
  logic [QPW-1:0]   scan_q;              // the QP read this cycle (attr_idx)
  logic             s1_v_q;              // row_q/crow_q hold QP scan_q - 1
  logic [RW-1:0]    row_q;
  logic [4:0]       crow_q;
  logic [RW-1:0]    mem_q [QPS];
  logic [4:0]       cmem_q [QPS];
  logic [23:0]      gmem_q [QPS];
  logic [QPS-1:0]   run_q, run_d;        // ACK timer running (deadline valid)
  logic [QPS-1:0]   rld_q, rld_d;        // counters to reload at the next scan
  logic [QPS-1:0]   nsk_q, nsk_d;        // a NAK moved una: not progress
  logic [QPS-1:0]   rnrw_q, rnrw_d;      // in an RNR wait
  logic [QPS-1:0]   rnrs_q, rnrs_d;      // RNR wait not started yet (code in cmem)
  logic [QPS-1:0]   prw_q, prw_d;        // rewind pending
  logic [QPS-1:0]   pgap_q, pgap_d;      // ... to the PSN in gmem (else una)
  logic [QPS-1:0]   pxe_q, pxe_d;        // exhaustion pending
  logic [QPS-1:0]   xst_q, xst_d;        // its status: 0 = 12, 1 = 13
  logic [QPS-1:0]   xfl_q, xfl_d;        // ... unless set: 5 (drain expiry)
  logic [QPS-1:0]   xd_q, xd_d;          // exhausted: quiet until a clear
  logic [QPS-1:0]   inf_q, inf_d;        // rnr_retry = 7 (no limit)
  logic [3*QPS-1:0] rl_q, rl_d;          // retry_left
  logic [3*QPS-1:0] nl_q, nl_d;          // rnr_left
  logic             sel_v_q, sel_v_d;    // rewind candidate (gp_q its gap PSN)
  logic [QPW-1:0]   sel_q, sel_d;
  logic [23:0]      gp_q;
  logic [QPW-1:0]   rwp_q, rwp_d;        // round-robin pointers
  logic [QPW-1:0]   xep_q, xep_d;
  logic             rw_valid_q, rw_valid_d;
  logic [QPW-1:0]   rw_qp_q, rw_qp_d;
  logic [23:0]      rw_psn_q, rw_psn_d;
  logic             xerr_valid_q, xerr_valid_d;
  logic [QPW-1:0]   xerr_qp_q, xerr_qp_d;
  logic [7:0]       xerr_status_q, xerr_status_d;
  logic             ev_timeout_q, ev_rewind_q, ev_rnr_wait_q, ev_exhaust_q;

  // In ERROR, not in error mode: timer only (drain). In ERROR otherwise:
  // nothing runs (frz).
  logic [QPS-1:0] drn, frz;
  assign drn = halt & ~err_mode;
  assign frz = halt & err_mode;

  // ------------------------------------------------------------------
  // Scanner (stage 2: QP p, row and attributes read the cycle before)
  // ------------------------------------------------------------------
  logic [QPW-1:0] p;
  logic [23:0]    una_p, seen;
  logic [TW-1:0]  dl, dl_new, d_exp, tper, rwait;
  logic           hit_p, sact, prog, reload, expired;
  logic           s_rw, s_x, s_tmo, s_run, s_rnrw, s_rnrs;
  logic [2:0]     rl_s, nl_s;
  logic           inf_s;

  always_comb begin
    p       = scan_q - QPW'(1);
    una_p   = una_all[24*p +: 24];
    seen    = row_q[RW-1:TW];
    dl      = row_q[TW-1:0];
    hit_p   = (nak_valid && nak_qp == p) || (gap_valid && gap_qp == p)
              || (clr_valid && clr_qp == p);
    sact    = s1_v_q && !hit_p && !frz[p] && !xd_q[p];
    prog    = !nsk_q[p] && una_p != seen;
    reload  = rld_q[p] || prog;
    rl_s    = reload ? attr_retry : rl_q[3*p +: 3];
    nl_s    = reload ? attr_rnr_retry : nl_q[3*p +: 3];
    inf_s   = reload ? attr_rnr_retry == 3'd7 : inf_q[p];
    d_exp   = now_q - dl;
    expired = !d_exp[TW-1];
    tper    = TW'(T_UNIT) << attr_timeout;
    rwait   = TW'(rnic_pkg::rnr_timer_units(crow_q)) * TW'(R_UNIT);
    dl_new  = dl;
    s_rw    = 1'b0;
    s_x     = 1'b0;
    s_tmo   = 1'b0;
    s_run   = run_q[p];
    s_rnrw  = rnrw_q[p];
    s_rnrs  = rnrs_q[p];
    if (rnrw_q[p]) begin
      if (rnrs_q[p]) begin
        dl_new = now_q + rwait;
        s_rnrs = 1'b0;
      end else if (expired) begin
        s_rnrw = 1'b0;
        s_rw   = 1'b1;
      end
    end else if (!busy[p] || prw_q[p] || attr_timeout == 5'd0) begin
      s_run = 1'b0;
    end else if (!run_q[p] || prog) begin
      s_run  = 1'b1;
      dl_new = now_q + tper;
    end else if (expired) begin
      s_tmo = 1'b1;
      s_run = 1'b0;
      if (rl_s == 3'd0 || drn[p]) s_x = 1'b1;
      else begin
        rl_s = rl_s - 3'd1;
        s_rw = 1'b1;
      end
    end
  end

  // ------------------------------------------------------------------
  // Per-QP state: the scanner's decision, NAK, gap, clear, halt
  // ------------------------------------------------------------------
  logic nak_ok, nak_cnt, nak_x, gap_ok, gap_cnt, gap_x, gap_w, rnr_go;
  logic [2:0] rl_n, nl_n, rl_g;

  always_comb begin
    rl_n    = rl_q[3*nak_qp +: 3];
    nl_n    = nl_q[3*nak_qp +: 3];
    rl_g    = rl_q[3*gap_qp +: 3];
    nak_ok  = nak_valid && !halt[nak_qp] && !xd_q[nak_qp] && !(clr_valid && clr_qp == nak_qp);
    nak_cnt = !rld_q[nak_qp];
    nak_x   = nak_ok && nak_cnt &&
              (nak_rnr ? (!inf_q[nak_qp] && nl_n == 3'd0) : rl_n == 3'd0);
    rnr_go  = nak_ok && nak_rnr && !nak_x;
    gap_ok  = gap_valid && !halt[gap_qp] && !xd_q[gap_qp] && !(clr_valid && clr_qp == gap_qp)
              && !(nak_valid && nak_qp == gap_qp);
    gap_cnt = !rld_q[gap_qp];
    gap_x   = gap_ok && gap_cnt && rl_g == 3'd0;
    // A pending rewind to una covers any gap PSN (una <= gap_psn): merged.
    gap_w   = gap_ok && !gap_x && !(prw_q[gap_qp] && !pgap_q[gap_qp]);
  end

  logic           ld_rw, touched, ld_xe, xany;
  logic [QPW-1:0] xc, idx;
  logic [QPS-1:0] xmask;

  always_comb begin
    run_d  = run_q;
    rld_d  = rld_q;
    nsk_d  = nsk_q;
    rnrw_d = rnrw_q;
    rnrs_d = rnrs_q;
    prw_d  = prw_q;
    pgap_d = pgap_q;
    pxe_d  = pxe_q;
    xst_d  = xst_q;
    xfl_d  = xfl_q;
    xd_d   = xd_q;
    inf_d  = inf_q;
    rl_d   = rl_q;
    nl_d   = nl_q;

    // The scanner's QP (no event for it this cycle).
    if (sact) begin
      rld_d[p]       = 1'b0;
      nsk_d[p]       = 1'b0;
      rl_d[3*p +: 3] = rl_s;
      nl_d[3*p +: 3] = nl_s;
      inf_d[p]       = inf_s;
      run_d[p]       = s_run;
      rnrw_d[p]      = s_rnrw;
      rnrs_d[p]      = s_rnrs;
      if (s_x) begin
        xd_d[p]   = 1'b1;
        pxe_d[p]  = 1'b1;
        xst_d[p]  = 1'b0;
        xfl_d[p]  = drn[p];
      end else if (s_rw) begin
        prw_d[p]  = 1'b1;
        pgap_d[p] = 1'b0;
        run_d[p]  = 1'b0;
      end
    end

    // A NAK: sequence error rewinds now, RNR waits first.
    if (nak_ok) begin
      nsk_d[nak_qp]  = 1'b1;
      run_d[nak_qp]  = 1'b0;
      rnrw_d[nak_qp] = 1'b0;
      rnrs_d[nak_qp] = 1'b0;
      prw_d[nak_qp]  = 1'b0;
      pgap_d[nak_qp] = 1'b0;
      if (nak_x) begin
        xd_d[nak_qp]  = 1'b1;
        pxe_d[nak_qp] = 1'b1;
        xst_d[nak_qp] = nak_rnr;
        xfl_d[nak_qp] = 1'b0;
      end else if (nak_rnr) begin
        rnrw_d[nak_qp] = 1'b1;
        rnrs_d[nak_qp] = 1'b1;
        if (nak_cnt && !inf_q[nak_qp]) nl_d[3*nak_qp +: 3] = nl_n - 3'd1;
      end else begin
        prw_d[nak_qp] = 1'b1;
        if (nak_cnt) rl_d[3*nak_qp +: 3] = rl_n - 3'd1;
      end
    end

    // A gap: counted like a sequence NAK, rewinds to gap_psn.
    if (gap_ok) begin
      run_d[gap_qp] = 1'b0;
      if (gap_x) begin
        xd_d[gap_qp]   = 1'b1;
        pxe_d[gap_qp]  = 1'b1;
        xst_d[gap_qp]  = 1'b0;
        xfl_d[gap_qp]  = 1'b0;
        prw_d[gap_qp]  = 1'b0;
        pgap_d[gap_qp] = 1'b0;
        rnrw_d[gap_qp] = 1'b0;
        rnrs_d[gap_qp] = 1'b0;
      end else begin
        if (gap_cnt) rl_d[3*gap_qp +: 3] = rl_g - 3'd1;
        if (gap_w) begin
          prw_d[gap_qp]  = 1'b1;
          pgap_d[gap_qp] = 1'b1;
        end
      end
    end

    // A clear: reload at the next scan, everything pending dropped.
    if (clr_valid) begin
      rld_d[clr_qp]  = 1'b1;
      nsk_d[clr_qp]  = 1'b0;
      run_d[clr_qp]  = 1'b0;
      rnrw_d[clr_qp] = 1'b0;
      rnrs_d[clr_qp] = 1'b0;
      prw_d[clr_qp]  = 1'b0;
      pgap_d[clr_qp] = 1'b0;
      pxe_d[clr_qp]  = 1'b0;
      xd_d[clr_qp]   = 1'b0;
    end

    // Halted QPs: no wait, no rewind; a timer and an exhaustion only
    // while draining.
    run_d  = run_d & ~frz;
    rnrw_d = rnrw_d & ~halt;
    rnrs_d = rnrs_d & ~halt;
    prw_d  = prw_d & ~halt;
    pgap_d = pgap_d & ~halt;
    pxe_d  = pxe_d & ~frz;

    // Rewind output: the candidate picked last cycle, unless its pending
    // state changes this cycle (then it is picked again).
    touched = (nak_valid && nak_qp == sel_q) || (gap_valid && gap_qp == sel_q)
              || (clr_valid && clr_qp == sel_q) || halt[sel_q]
              || (sact && (s_rw || s_x) && p == sel_q);
    ld_rw   = sel_v_q && prw_q[sel_q] && !touched && (!rw_valid_q || rw_ready);
    rw_valid_d = (rw_valid_q && !rw_ready) || ld_rw;
    rw_qp_d    = rw_qp_q;
    rw_psn_d   = rw_psn_q;
    rwp_d      = rwp_q;
    if (ld_rw) begin
      rw_qp_d         = sel_q;
      rw_psn_d        = pgap_q[sel_q] ? gp_q : una_all[24*sel_q +: 24];
      rwp_d           = sel_q + QPW'(1);
      prw_d[sel_q]    = 1'b0;
      pgap_d[sel_q]   = 1'b0;
    end
    // The next candidate: the first pending rewind from rwp_d on.
    sel_v_d = prw_d != '0;
    sel_d   = rwp_d;
    for (int i = QPS - 1; i >= 0; i--) begin
      idx = rwp_d + QPW'(i);
      if (prw_d[idx]) sel_d = idx;
    end

    // Exhaustion output: the first pending one from xep_q on.
    xmask = pxe_q & ~frz;
    if (clr_valid) xmask[clr_qp] = 1'b0;
    xany = xmask != '0;
    xc   = xep_q;
    for (int i = QPS - 1; i >= 0; i--) begin
      idx = xep_q + QPW'(i);
      if (xmask[idx]) xc = idx;
    end
    ld_xe = xany && (!xerr_valid_q || xerr_ready);
    xerr_valid_d  = (xerr_valid_q && !xerr_ready) || ld_xe;
    xerr_qp_d     = xerr_qp_q;
    xerr_status_d = xerr_status_q;
    xep_d         = xep_q;
    if (ld_xe) begin
      xerr_qp_d     = xc;
      xerr_status_d = xfl_q[xc] ? rnic_pkg::CQE_WR_FLUSH_ERR :
                      xst_q[xc] ? rnic_pkg::CQE_RNR_RETRY_EXC_ERR : rnic_pkg::CQE_RETRY_EXC_ERR;
      xep_d         = xc + QPW'(1);
      pxe_d[xc]     = 1'b0;
    end
  end

  // ------------------------------------------------------------------
  // RAMs: one write and one registered read each a cycle
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (sact) mem_q[p] <= {una_p, dl_new};
    row_q <= mem_q[scan_q];
  end

  always_ff @(posedge clk) begin
    if (rnr_go) cmem_q[nak_qp] <= nak_timer;
    crow_q <= (rnr_go && nak_qp == scan_q) ? nak_timer : cmem_q[scan_q];
  end

  always_ff @(posedge clk) begin
    if (gap_w) gmem_q[gap_qp] <= gap_psn;
    gp_q <= (gap_w && gap_qp == sel_d) ? gap_psn : gmem_q[sel_d];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      now_q         <= '0;
      scan_q        <= '0;
      s1_v_q        <= 1'b0;
      run_q         <= '0;
      rld_q         <= '1;
      nsk_q         <= '0;
      rnrw_q        <= '0;
      rnrs_q        <= '0;
      prw_q         <= '0;
      pgap_q        <= '0;
      pxe_q         <= '0;
      xst_q         <= '0;
      xfl_q         <= '0;
      xd_q          <= '0;
      inf_q         <= '0;
      rl_q          <= '0;
      nl_q          <= '0;
      sel_v_q       <= 1'b0;
      sel_q         <= '0;
      rwp_q         <= '0;
      xep_q         <= '0;
      rw_valid_q    <= 1'b0;
      rw_qp_q       <= '0;
      rw_psn_q      <= '0;
      xerr_valid_q  <= 1'b0;
      xerr_qp_q     <= '0;
      xerr_status_q <= '0;
      ev_timeout_q  <= 1'b0;
      ev_rewind_q   <= 1'b0;
      ev_rnr_wait_q <= 1'b0;
      ev_exhaust_q  <= 1'b0;
    end else begin
      now_q         <= now_q + TW'(1);
      scan_q        <= scan_q + QPW'(1);
      s1_v_q        <= 1'b1;
      run_q         <= run_d;
      rld_q         <= rld_d;
      nsk_q         <= nsk_d;
      rnrw_q        <= rnrw_d;
      rnrs_q        <= rnrs_d;
      prw_q         <= prw_d;
      pgap_q        <= pgap_d;
      pxe_q         <= pxe_d;
      xst_q         <= xst_d;
      xfl_q         <= xfl_d;
      xd_q          <= xd_d;
      inf_q         <= inf_d;
      rl_q          <= rl_d;
      nl_q          <= nl_d;
      sel_v_q       <= sel_v_d;
      sel_q         <= sel_d;
      rwp_q         <= rwp_d;
      xep_q         <= xep_d;
      rw_valid_q    <= rw_valid_d;
      rw_qp_q       <= rw_qp_d;
      rw_psn_q      <= rw_psn_d;
      xerr_valid_q  <= xerr_valid_d;
      xerr_qp_q     <= xerr_qp_d;
      xerr_status_q <= xerr_status_d;
      ev_timeout_q  <= sact && s_tmo;
      ev_rewind_q   <= rw_valid_q && rw_ready;
      ev_rnr_wait_q <= rnr_go;
      ev_exhaust_q  <= xerr_valid_q && xerr_ready;
    end
  end

  assign attr_idx    = scan_q;
  assign hold        = rnrw_q;
  assign rw_valid    = rw_valid_q;
  assign rw_qp       = rw_qp_q;
  assign rw_psn      = rw_psn_q;
  assign xerr_valid  = xerr_valid_q;
  assign xerr_qp     = xerr_qp_q;
  assign xerr_status = xerr_status_q;
  assign ev_timeout  = ev_timeout_q;
  assign ev_rewind   = ev_rewind_q;
  assign ev_rnr_wait = ev_rnr_wait_q;
  assign ev_exhaust  = ev_exhaust_q;

  // Outputs: an offer is held, unchanged, until taken.
  `RNIC_ASSERT_HANDSHAKE(a_rw_hold, clk, rst, rw_valid, rw_ready, {rw_qp, rw_psn})
  `RNIC_ASSERT_HANDSHAKE(a_xerr_hold, clk, rst, xerr_valid, xerr_ready, {xerr_qp, xerr_status})
  // Input contract: ack_tracker has set una := nak_psn when the NAK comes.
  `RNIC_ASSERT(a_nak_una, clk, rst, !nak_valid || una_all[24*nak_qp +: 24] == nak_psn)
endmodule
