`include "rnic_assert.svh"

// Receive buffer: stores received frames whole, beat by beat as they
// arrive on rx_*, and hands on the ones their verdict keeps, in arrival
// order. Model: model/src/rx_buf.rs (same register names). Contract:
// docs/responder.md, "rx_buf".
//
// Lines: a ring of LINES 64-byte lines (one beat each) in a RAM with a
// synchronous read. A frame takes consecutive lines from the write pointer.
// A frame is stored only if, at its first beat, a frame slot and a line are
// free; if the lines run out in the middle of it, the lines it took are
// given back at once (it is the newest frame: the write pointer rewinds)
// and the rest of it is ignored. A frame not stored pulses ev_drop_full the
// cycle after its last beat. Lines freed in a cycle count from the next.
//
// Verdicts (vd_*) come in frame order, at least one cycle after each
// frame's last beat, for every frame (stored or not); a FIFO of one bit per
// frame (stored or not) lines them up. A kept frame is read out line by
// line, one line a cycle, with no gap between frames; a discarded frame's
// lines are freed in one cycle when it reaches the head. A line is freed
// when its read is issued.
//
// Header queue: the metadata of every stored frame whose verdict keeps
// it, in frame order, offered on hd_* from the cycle after the verdict (a
// FIFO of HQ entries: the consumer takes a frame's header no later than
// its last beat, so at most FRAMES frames in slots plus OQ + 1 that left
// them have one waiting; an assertion checks it never fills).
//
// Per-priority accounting: prio_lines holds the lines each 802.1p priority
// has in the buffer (the PCP of the frame's VLAN tag, 0 untagged), for PFC
// generation.
module rx_buf #(
  parameter int LINES  = 512,
  parameter int FRAMES = 64,
  parameter int PEND   = 8,
  parameter int META_W = 256
) (
  input  logic                       clk,
  input  logic                       rst,
  input  logic                       in_valid,
  input  logic [511:0]               in_data,
  input  logic [63:0]                in_keep,
  input  logic                       in_last,
  input  logic                       vd_valid,
  input  logic                       vd_keep,
  input  logic [META_W-1:0]          vd_meta,
  output logic                       out_valid,
  output logic [511:0]               out_data,
  output logic [63:0]                out_keep,
  output logic                       out_last,
  output logic [META_W-1:0]          out_meta,
  output logic [2:0]                 out_prio,
  input  logic                       out_ready,
  output logic                       hd_valid,
  input  logic                       hd_ready,
  output logic [META_W-1:0]          hd_meta,
  output logic [8*($clog2(LINES)+1)-1:0] prio_lines,
  output logic                       ev_drop_full
);
  localparam int LW    = $clog2(LINES);
  localparam int FW    = $clog2(FRAMES);
  localparam int PW    = $clog2(PEND);
  localparam int OQ    = 4;  // output FIFO depth: one line a cycle behind a 1-cycle RAM read
  localparam int OQ_W  = 512 + 64 + 1 + META_W + 3;
  // Header queue depth: FRAMES in slots, OQ + 1 beyond (rd register and FIFO).
  localparam int HQ    = 1 << $clog2(FRAMES + OQ + 1);

  if (LINES < 16 || (LINES & (LINES - 1)) != 0) begin : g_bad_lines
    $error("rx_buf: LINES must be a power of two >= 16");
  end
  if (FRAMES < 2 || FRAMES > LINES || (FRAMES & (FRAMES - 1)) != 0) begin : g_bad_frames
    $error("rx_buf: FRAMES must be a power of two in 2..LINES");
  end
  if (PEND < 2 || (PEND & (PEND - 1)) != 0) begin : g_bad_pend
    $error("rx_buf: PEND must be a power of two >= 2");
  end

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic [511:0]     mem_q [LINES];
  logic [LW-1:0]    wp_q, wp_d, rp_q, rp_d;
  logic [LW:0]      used_q, used_d;
  logic [LW:0]      plines_q [8];
  logic [LW:0]      plines_d [8];
  // The frame arriving.
  logic             in_frame_q, in_frame_d;
  logic             cur_ok_q, cur_ok_d;
  logic [LW-1:0]    cur_start_q, cur_start_d;
  logic [LW:0]      cur_n_q, cur_n_d;
  logic [2:0]       cur_prio_q, cur_prio_d;
  logic [FW-1:0]    cur_idx_q, cur_idx_d;
  // Frame slots: head (oldest), verdict (next to decide), tail (next free).
  logic [LW:0]      f_n_q [FRAMES];
  logic [6:0]       f_bytes_q [FRAMES];
  logic [2:0]       f_prio_q [FRAMES];
  logic             f_keep_q [FRAMES];
  logic [META_W-1:0] f_meta_q [FRAMES];
  logic [FW-1:0]    fh_q, fh_d, fv_q, fv_d, ft_q, ft_d;
  logic [FW:0]      fcount_q, fcount_d, dec_q, dec_d;
  logic [LW:0]      hd_off_q, hd_off_d;
  // Per frame whose last beat arrived and has no verdict: was it stored?
  logic [PEND-1:0]  pend_q, pend_d;
  logic [PW:0]      pend_n_q, pend_n_d;
  // The line read issued last cycle, with its beat's sideband.
  logic             rd_valid_q;
  logic [511:0]     rd_data_q;
  logic [63:0]      rd_keep_q;
  logic             rd_last_q;
  logic [META_W-1:0] rd_meta_q;
  logic [2:0]       rd_prio_q;
  logic             ev_drop_full_q, ev_drop_full_d;

  // ------------------------------------------------------------------
  // Output FIFO
  // ------------------------------------------------------------------
  logic            oq_in_ready, oq_out_valid;
  logic [OQ_W-1:0] oq_out_data;
  logic [$clog2(OQ):0] oq_count_q;
  logic            hq_in_ready;

  // The read credit below keeps it from ever being pushed full.
  sync_fifo #(
    .WIDTH     (OQ_W),
    .DEPTH     (OQ),
    .NEVER_FULL(1'b1)
  ) u_oq (
    .clk      (clk),
    .rst      (rst),
    .in_valid (rd_valid_q),
    .in_ready (oq_in_ready),
    .in_data  ({rd_data_q, rd_keep_q, rd_last_q, rd_meta_q, rd_prio_q}),
    .out_valid(oq_out_valid),
    .out_ready(out_ready),
    .out_data (oq_out_data)
  );

  // The header queue. A frame's header is taken no later than its last
  // beat, so it never fills (its assertion checks it).
  sync_fifo #(
    .WIDTH     (META_W),
    .DEPTH     (HQ),
    .NEVER_FULL(1'b1)
  ) u_hq (
    .clk      (clk),
    .rst      (rst),
    .in_valid (vd_valid && pend_q[0] && vd_keep),
    .in_ready (hq_in_ready),
    .in_data  (vd_meta),
    .out_valid(hd_valid),
    .out_ready(hd_ready),
    .out_data (hd_meta)
  );

  assign out_valid = oq_out_valid;
  assign {out_data, out_keep, out_last, out_meta, out_prio} = oq_out_data;

  // The FIFO's occupancy, mirrored here for the read credit (sync_fifo
  // keeps its count private).
  always_ff @(posedge clk) begin
    if (rst) begin
      oq_count_q <= '0;
    end else begin
      oq_count_q <= oq_count_q + {{$clog2(OQ){1'b0}}, rd_valid_q && oq_in_ready}
                                - {{$clog2(OQ){1'b0}}, oq_out_valid && out_ready};
    end
  end

  // ------------------------------------------------------------------
  // Next state
  // ------------------------------------------------------------------
  logic          first, ok, store, ovf, last_beat, stored_frame;
  logic [2:0]    pin;
  logic          vd_pop, vd_stored;
  logic          head_dec, discard, issue, head_last;
  logic [6:0]    last_bytes;
  logic [LW:0]   freed;

  always_comb begin
    // Input side.
    first      = in_valid && !in_frame_q;
    pin        = first ? ((in_data[111:96] == 16'h0081) ? in_data[119:117] : 3'd0) : cur_prio_q;
    ok         = first ? (fcount_q != (FW+1)'(FRAMES) && used_q != (LW+1)'(LINES))
                       : (cur_ok_q && used_q != (LW+1)'(LINES));
    store      = in_valid && ok;
    ovf        = in_valid && !first && cur_ok_q && !ok;
    last_beat  = in_valid && in_last;
    stored_frame = last_beat && ok;
    last_bytes = 7'd0;
    for (int b = 0; b < 64; b++) begin
      if (in_keep[b]) last_bytes = 7'(b + 1);
    end

    // Verdicts.
    vd_pop    = vd_valid;
    vd_stored = pend_q[0];

    // Reader: the head frame, once decided.
    head_dec  = dec_q != '0;
    discard   = head_dec && !f_keep_q[fh_q];
    issue     = head_dec && f_keep_q[fh_q]
             && ((LW+1)'(oq_count_q) + (LW+1)'(rd_valid_q) < (LW+1)'(OQ));
    head_last = hd_off_q + (LW+1)'(1) == f_n_q[fh_q];
    freed     = discard ? f_n_q[fh_q] : (LW+1)'(issue);

    // Defaults.
    wp_d        = wp_q;
    rp_d        = rp_q;
    in_frame_d  = in_valid ? !in_last : in_frame_q;
    cur_ok_d    = cur_ok_q;
    cur_start_d = cur_start_q;
    cur_n_d     = cur_n_q;
    cur_prio_d  = cur_prio_q;
    cur_idx_d   = cur_idx_q;
    ft_d        = ft_q;
    fv_d        = fv_q;
    fh_d        = fh_q;
    fcount_d    = fcount_q;
    dec_d       = dec_q;
    hd_off_d    = hd_off_q;
    pend_d      = pend_q;
    pend_n_d    = pend_n_q;
    used_d      = used_q - freed;
    for (int p = 0; p < 8; p++) begin
      plines_d[p] = plines_q[p];
    end

    if (first) begin
      cur_start_d = wp_q;
      cur_n_d     = '0;
      cur_prio_d  = pin;
      cur_idx_d   = ft_q;
      cur_ok_d    = ok;
      if (ok) begin
        ft_d = ft_q + FW'(1);
      end
    end
    if (store) begin
      wp_d    = wp_q + LW'(1);
      cur_n_d = (first ? (LW+1)'(0) : cur_n_q) + (LW+1)'(1);
      used_d  = used_d + (LW+1)'(1);
      plines_d[pin] = plines_d[pin] + (LW+1)'(1);
    end
    if (ovf) begin
      // Give back what the frame took; it is the newest, so rewind.
      cur_ok_d = 1'b0;
      wp_d     = cur_start_q;
      used_d   = used_d - cur_n_q;
      plines_d[cur_prio_q] = plines_d[cur_prio_q] - cur_n_q;
      ft_d     = ft_q - FW'(1);
    end

    // Slots: +1 at a stored first beat, -1 at an overflow or a frame leaving.
    fcount_d = fcount_q + (FW+1)'(first && ok) - (FW+1)'(ovf)
             - (FW+1)'(discard || (issue && head_last));

    // The bit FIFO: pop (shift) at a verdict, push at a last beat.
    if (vd_pop) begin
      pend_d   = pend_d >> 1;
      pend_n_d = pend_n_d - (PW+1)'(1);
    end
    if (last_beat) begin
      pend_d[pend_n_d[PW-1:0]] = stored_frame;
      pend_n_d = pend_n_d + (PW+1)'(1);
    end
    if (vd_pop && vd_stored) begin
      fv_d  = fv_q + FW'(1);
    end

    // Reader.
    if (discard) begin
      rp_d = rp_q + LW'(f_n_q[fh_q]);
      plines_d[f_prio_q[fh_q]] = plines_d[f_prio_q[fh_q]] - f_n_q[fh_q];
    end
    if (issue) begin
      rp_d = rp_q + LW'(1);
      plines_d[f_prio_q[fh_q]] = plines_d[f_prio_q[fh_q]] - (LW+1)'(1);
      hd_off_d = head_last ? '0 : hd_off_q + (LW+1)'(1);
    end
    if (discard || (issue && head_last)) begin
      fh_d = fh_q + FW'(1);
    end
    dec_d = dec_q + (FW+1)'(vd_pop && vd_stored) - (FW+1)'(discard || (issue && head_last));

    ev_drop_full_d = last_beat && !ok;
  end

  // ------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (store) mem_q[wp_q] <= in_data;
  end

  always_ff @(posedge clk) begin
    if (first && ok) begin
      f_prio_q[ft_q] <= pin;
    end
    if (stored_frame) begin
      f_n_q[cur_idx_d]     <= cur_n_d;
      f_bytes_q[cur_idx_d] <= last_bytes;
    end
    if (vd_pop && vd_stored) begin
      f_keep_q[fv_q] <= vd_keep;
      f_meta_q[fv_q] <= vd_meta;
    end
    if (issue) begin
      rd_data_q <= mem_q[rp_q];
      rd_keep_q <= (head_last && f_bytes_q[fh_q] != 7'd64)
                 ? ((64'd1 << f_bytes_q[fh_q][5:0]) - 64'd1) : {64{1'b1}};
      rd_last_q <= head_last;
      rd_meta_q <= f_meta_q[fh_q];
      rd_prio_q <= f_prio_q[fh_q];
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      wp_q           <= '0;
      rp_q           <= '0;
      used_q         <= '0;
      in_frame_q     <= 1'b0;
      cur_ok_q       <= 1'b0;
      cur_start_q    <= '0;
      cur_n_q        <= '0;
      cur_prio_q     <= '0;
      cur_idx_q      <= '0;
      fh_q           <= '0;
      fv_q           <= '0;
      ft_q           <= '0;
      fcount_q       <= '0;
      dec_q          <= '0;
      hd_off_q       <= '0;
      pend_q         <= '0;
      pend_n_q       <= '0;
      rd_valid_q     <= 1'b0;
      ev_drop_full_q <= 1'b0;
      for (int p = 0; p < 8; p++) plines_q[p] <= '0;
    end else begin
      wp_q           <= wp_d;
      rp_q           <= rp_d;
      used_q         <= used_d;
      in_frame_q     <= in_frame_d;
      cur_ok_q       <= cur_ok_d;
      cur_start_q    <= cur_start_d;
      cur_n_q        <= cur_n_d;
      cur_prio_q     <= cur_prio_d;
      cur_idx_q      <= cur_idx_d;
      fh_q           <= fh_d;
      fv_q           <= fv_d;
      ft_q           <= ft_d;
      fcount_q       <= fcount_d;
      dec_q          <= dec_d;
      hd_off_q       <= hd_off_d;
      pend_q         <= pend_d;
      pend_n_q       <= pend_n_d;
      rd_valid_q     <= issue;
      ev_drop_full_q <= ev_drop_full_d;
      for (int p = 0; p < 8; p++) plines_q[p] <= plines_d[p];
    end
  end

  always_comb begin
    for (int p = 0; p < 8; p++) begin
      prio_lines[p*(LW+1) +: (LW+1)] = plines_q[p];
    end
  end
  assign ev_drop_full = ev_drop_full_q;

  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  // Unused: u_hq's own assertion checks it is never pushed full.
  logic unused_hq_in_ready;
  assign unused_hq_in_ready = hq_in_ready;

  // Verdicts only for frames waiting for one; never more waiting than PEND.
  `RNIC_ASSERT_NEVER(a_vd_no_frame, clk, rst, vd_valid && pend_n_q == '0)
  `RNIC_ASSERT_NEVER(a_pend_overflow, clk, rst,
                     in_valid && in_last && !vd_valid && pend_n_q == (PW+1)'(PEND))
endmodule
