`include "rnic_assert.svh"

// PFC generation (802.1Qbb, sending side). Model: model/src/pfc_gen.rs
// (same register names). Contract: docs/pfc_gen.md.
//
// Per priority p with cfg_en[p]: XOFF when prio_lines[p] (rx_buf's lines
// held by p) reaches cfg_xoff; while p stays at or above cfg_xon, the XOFF
// is sent again cfg_refresh cycles (0 acts as 1) after the last one was
// loaded into the output register; XON (time 0) once p falls below
// cfg_xon. A disabled priority forgets its state and sends nothing.
//
// One output register holds the next frame (pfc_valid/ready; enable vector
// and 8 pause times). It loads when empty or being taken. A frame carries
// every priority whose XOFF (new or refresh) is due at that cycle, each with
// the time cfg_time; only when no XOFF is due does it carry every priority
// whose XON is due, with time 0. So a frame is either XOFF or XON, never
// both (the counters count frames of each kind).
module pfc_gen #(
  parameter int LINES = 512
) (
  input  logic                            clk,
  input  logic                            rst,
  input  logic [8*($clog2(LINES)+1)-1:0]  prio_lines,
  input  logic [7:0]                      cfg_en,
  input  logic [$clog2(LINES):0]          cfg_xoff,
  input  logic [$clog2(LINES):0]          cfg_xon,
  input  logic [15:0]                     cfg_time,
  input  logic [23:0]                     cfg_refresh,
  output logic                            pfc_valid,
  input  logic                            pfc_ready,
  output logic [7:0]                      pfc_enable,
  output logic [127:0]                    pfc_quanta,
  output logic                            ev_xoff,
  output logic                            ev_xon
);
  localparam int LW = $clog2(LINES) + 1;
  localparam int TW = 24;

  if (LINES < 16 || (LINES & (LINES - 1)) != 0) begin : g_bad_lines
    $error("pfc_gen: LINES must be a power of two >= 16 (rx_buf's)");
  end

  `RNIC_ASSERT_IMPORT

  logic [7:0]      off_q, off_d;       // XOFF in force (sent or due)
  logic [7:0]      pend_q, pend_d;     // an XOFF (new or refresh) not yet loaded
  logic [7:0]      xonp_q, xonp_d;     // an XON not yet loaded
  logic [TW*8-1:0] timer_q, timer_d;   // cycles to the next refresh, 0 = none
  logic            out_v_q, out_v_d;
  logic [7:0]      out_en_q, out_en_d;
  logic [127:0]    out_quanta_q, out_quanta_d;
  logic            out_xoff_q, out_xoff_d;
  logic            ev_xoff_q, ev_xon_q;

  logic [7:0]      want_off, want_on;
  logic            load, take;
  logic [TW-1:0]   period;
  logic [LW-1:0]   lines;
  logic [TW-1:0]   t;

  always_comb begin
    want_off = '0;
    want_on  = '0;
    off_d    = off_q;
    period   = (cfg_refresh == '0) ? TW'(1) : cfg_refresh;
    take     = out_v_q && pfc_ready;
    load     = !out_v_q || pfc_ready;
    for (int p = 0; p < 8; p++) begin
      lines = prio_lines[LW*p +: LW];
      t     = timer_q[TW*p +: TW];
      if (!cfg_en[p]) begin
        off_d[p] = 1'b0;
      end else if (off_q[p] && lines < cfg_xon) begin
        off_d[p]   = 1'b0;
        want_on[p] = 1'b1;
      end else if (!off_q[p] && lines >= cfg_xoff) begin
        off_d[p]    = 1'b1;
        want_off[p] = 1'b1;
      end else begin
        want_off[p] = pend_q[p] || (off_q[p] && t == TW'(1));
        want_on[p]  = xonp_q[p];
      end
    end

    out_v_d      = out_v_q && !pfc_ready;
    out_en_d     = out_en_q;
    out_quanta_d = out_quanta_q;
    out_xoff_d   = out_xoff_q;
    pend_d       = want_off;
    xonp_d       = want_on;
    if (load && want_off != '0) begin
      out_v_d      = 1'b1;
      out_en_d     = want_off;
      out_xoff_d   = 1'b1;
      for (int p = 0; p < 8; p++) out_quanta_d[16*p +: 16] = want_off[p] ? cfg_time : 16'd0;
      pend_d       = '0;
    end else if (load && want_on != '0) begin
      out_v_d      = 1'b1;
      out_en_d     = want_on;
      out_xoff_d   = 1'b0;
      out_quanta_d = '0;
      xonp_d       = '0;
    end

    for (int p = 0; p < 8; p++) begin
      t = timer_q[TW*p +: TW];
      if (!off_d[p]) begin
        timer_d[TW*p +: TW] = '0;
      end else if (load && want_off[p]) begin
        timer_d[TW*p +: TW] = period;
      end else begin
        timer_d[TW*p +: TW] = (t != '0) ? t - TW'(1) : '0;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      off_q        <= '0;
      pend_q       <= '0;
      xonp_q       <= '0;
      timer_q      <= '0;
      out_v_q      <= 1'b0;
      out_en_q     <= '0;
      out_quanta_q <= '0;
      out_xoff_q   <= 1'b0;
      ev_xoff_q    <= 1'b0;
      ev_xon_q     <= 1'b0;
    end else begin
      off_q        <= off_d;
      pend_q       <= pend_d;
      xonp_q       <= xonp_d;
      timer_q      <= timer_d;
      out_v_q      <= out_v_d;
      out_en_q     <= out_en_d;
      out_quanta_q <= out_quanta_d;
      out_xoff_q   <= out_xoff_d;
      ev_xoff_q    <= take && out_xoff_q;
      ev_xon_q     <= take && !out_xoff_q;
    end
  end

  assign pfc_valid  = out_v_q;
  assign pfc_enable = out_en_q;
  assign pfc_quanta = out_quanta_q;
  assign ev_xoff    = ev_xoff_q;
  assign ev_xon     = ev_xon_q;

  // Input contracts: rx_buf never holds more than LINES lines for one
  // priority; software keeps XON <= XOFF while any priority is enabled.
  logic [7:0] over;
  always_comb begin
    for (int p = 0; p < 8; p++) over[p] = prio_lines[LW*p +: LW] > LW'(LINES);
  end
  `RNIC_ASSERT_NEVER(a_lines_range, clk, rst, over != '0)
  `RNIC_ASSERT_NEVER(a_xon_above_xoff, clk, rst, cfg_en != '0 && cfg_xon > cfg_xoff)
endmodule
