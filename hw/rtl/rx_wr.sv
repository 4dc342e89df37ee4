`include "rnic_assert.svh"

// Receive write engine: moves payload from rx_buf's out stream to host
// memory through a dma_wr client, as the responder commands it. Model:
// model/src/rx_wr.rs (same register names). Contract: docs/responder.md,
// "rx_wr and wr_arb".
//
// Commands (wc_*) go through a 2-entry FIFO. A WRITE command (wc_tok = 0)
// names a segment [wc_off, wc_off + wc_len) of the frame at the head of the
// in_* stream; it becomes one dma_wr request {wc_addr, wc_len} (none for
// wc_len 0) and ceil(wc_len/64) data beats, realigned so that data byte j
// is frame byte wc_off + j. wc_last ends the frame's commands: the rest of
// the frame is consumed and dropped. A token (wc_tok = 1) is offered on
// tok_* once every earlier request has completed (wr_done counted).
//
// Realignment: hb_q holds the frame beat pos_q - 1 (the last one taken),
// in_data is beat pos_q. Each cycle of a segment either takes a beat (to
// reach the first byte of the next output beat, or to complete it) or
// emits an output beat from {in_data, hb_q} (or from hb_q alone) shifted
// by the segment's lane offset, or both. Output beats go through a 2-entry
// FIFO, so in_ready is a decode of registers.
module rx_wr #(
  parameter int TOK_W = 192,
  // Requests given to dma_wr and not yet completed (wr_done), at most.
  parameter int OUTS  = 8
) (
  input  logic              clk,
  input  logic              rst,
  input  logic              wc_valid,
  output logic              wc_ready,
  input  logic              wc_tok,
  input  logic [12:0]       wc_off,
  input  logic [12:0]       wc_len,
  input  logic [63:0]       wc_addr,
  input  logic              wc_last,
  input  logic [TOK_W-1:0]  wc_tok_data,
  input  logic              in_valid,
  output logic              in_ready,
  input  logic [511:0]      in_data,
  input  logic [63:0]       in_keep,
  input  logic              in_last,
  output logic              wr_req_valid,
  input  logic              wr_req_ready,
  output logic [63:0]       wr_req_addr,
  output logic [16:0]       wr_req_len,
  output logic              wr_data_valid,
  input  logic              wr_data_ready,
  output logic [511:0]      wr_data,
  input  logic              wr_done_valid,
  output logic              tok_valid,
  input  logic              tok_ready,
  output logic [TOK_W-1:0]  tok_data,
  output logic              ev_write,
  output logic [12:0]       ev_bytes
);
  localparam int CMD_W = 1 + 13 + 13 + 64 + 1 + TOK_W;
  localparam int OW    = $clog2(OUTS + 1);

  if (TOK_W < 1) begin : g_bad_tok_w
    $error("rx_wr: TOK_W must be >= 1");
  end
  if (OUTS < 1 || OUTS > 255) begin : g_bad_outs
    $error("rx_wr: OUTS must be 1..255");
  end

  typedef enum logic [1:0] {
    S_IDLE  = 2'd0,  // no segment: the next command may load
    S_SEG   = 2'd1,  // a segment of len > 0 in progress
    S_DRAIN = 2'd2   // the frame's last command done: drop beats up to in_last
  } state_e;

  // ------------------------------------------------------------------
  // Command FIFO
  // ------------------------------------------------------------------
  logic             cq_valid, cq_pop;
  logic [CMD_W-1:0] cq_data;
  logic             h_tok, h_last;
  logic [12:0]      h_off, h_len;
  logic [63:0]      h_addr;
  logic [TOK_W-1:0] h_tok_data;

  sync_fifo #(.WIDTH(CMD_W), .DEPTH(2)) u_cq (
    .clk      (clk),
    .rst      (rst),
    .in_valid (wc_valid),
    .in_ready (wc_ready),
    .in_data  ({wc_tok, wc_off, wc_len, wc_addr, wc_last, wc_tok_data}),
    .out_valid(cq_valid),
    .out_ready(cq_pop),
    .out_data (cq_data)
  );
  assign {h_tok, h_off, h_len, h_addr, h_last, h_tok_data} = cq_data;

  // ------------------------------------------------------------------
  // Output data FIFO
  // ------------------------------------------------------------------
  logic         oq_in_ready, emit;
  logic [511:0] emit_data;

  sync_fifo #(.WIDTH(512), .DEPTH(2)) u_oq (
    .clk      (clk),
    .rst      (rst),
    .in_valid (emit),
    .in_ready (oq_in_ready),
    .in_data  (emit_data),
    .out_valid(wr_data_valid),
    .out_ready(wr_data_ready),
    .out_data (wr_data)
  );

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  state_e           state_q, state_d;
  logic [13:0]      c_off_q, c_off_d;     // frame offset of the next output beat
  logic [12:0]      c_rem_q, c_rem_d;     // segment bytes not yet emitted
  logic             c_last_q, c_last_d;
  logic [7:0]       pos_q, pos_d;         // frame beats taken
  logic [511:0]     hb_q, hb_d;           // frame beat pos_q - 1
  logic             eof_q, eof_d;         // the frame's last beat was taken
  logic             mid_q, mid_d;         // a frame's commands began, not ended
  logic [13:0]      end_q, end_d;         // end of the frame's last segment
  logic [OW-1:0]    outst_q, outst_d;     // requests taken, not completed
  logic             req_valid_q, req_valid_d;
  logic [63:0]      req_addr_q, req_addr_d;
  logic [16:0]      req_len_q, req_len_d;
  logic             tok_valid_q, tok_valid_d;
  logic [TOK_W-1:0] tok_data_q, tok_data_d;
  logic             ev_write_q, ev_write_d;
  logic [12:0]      ev_bytes_q, ev_bytes_d;

  // ------------------------------------------------------------------
  // Next state
  // ------------------------------------------------------------------
  logic [6:0]    n;
  logic [7:0]    lo, hi;
  logic          hi_le, hi_held, from_hold, take, seg_go, fin;
  logic          free, req_free, room, load_w, load_t, frame_end;
  logic [1023:0] win;

  always_comb begin
    // The current output beat: frame bytes [c_off_q, c_off_q + n).
    n         = (c_rem_q >= 13'd64) ? 7'd64 : c_rem_q[6:0];
    lo        = c_off_q[13:6];
    hi        = 8'((c_off_q + 14'(n) - 14'd1) >> 6);
    hi_le     = hi <= pos_q;          // every byte is in a beat taken or on in_*
    hi_held   = hi < pos_q;           // every byte is in hb_q
    from_hold = lo != pos_q;          // the first byte is in hb_q (lo = pos_q - 1)
    win       = {in_data, from_hold ? hb_q : in_data};
    emit_data = 512'(win >> {c_off_q[5:0], 3'b000});

    // A segment cycle: emit (all bytes at hand) or take a beat toward them.
    emit   = 1'b0;
    take   = 1'b0;
    seg_go = 1'b0;
    if (state_q == S_SEG) begin
      if (hi_le) begin
        seg_go = oq_in_ready && (hi_held || in_valid);
        emit   = seg_go;
        take   = seg_go && !hi_held;
      end else begin
        seg_go = in_valid;
        take   = in_valid;
      end
    end
    fin = emit && c_rem_q <= 13'd64;

    in_ready = 1'b0;
    unique case (state_q)
      S_SEG:   in_ready = hi_le ? (oq_in_ready && !hi_held) : 1'b1;
      S_DRAIN: in_ready = 1'b1;
      default: in_ready = 1'b0;
    endcase

    // Commands.
    free     = state_q == S_IDLE || (fin && !c_last_q);
    req_free = !req_valid_q || wr_req_ready;
    room     = 9'(outst_q) + 9'(req_valid_q) < 9'(OUTS);
    load_w   = cq_valid && !h_tok && free && (h_len == 13'd0 || (req_free && room));
    load_t   = cq_valid && h_tok && state_q == S_IDLE && !req_valid_q
            && outst_q == OW'(wr_done_valid) && (!tok_valid_q || tok_ready);
    cq_pop   = load_w || load_t;

    // Defaults.
    state_d     = state_q;
    c_off_d     = c_off_q;
    c_rem_d     = c_rem_q;
    c_last_d    = c_last_q;
    pos_d       = pos_q;
    hb_d        = hb_q;
    eof_d       = eof_q;
    mid_d       = mid_q;
    end_d       = end_q;
    outst_d     = outst_q + OW'(req_valid_q && wr_req_ready) - OW'(wr_done_valid);
    req_valid_d = req_valid_q && !wr_req_ready;
    req_addr_d  = req_addr_q;
    req_len_d   = req_len_q;
    tok_valid_d = tok_valid_q && !tok_ready;
    tok_data_d  = tok_data_q;
    ev_write_d  = 1'b0;
    ev_bytes_d  = '0;
    frame_end   = 1'b0;

    // Beats.
    if (take || (state_q == S_DRAIN && in_valid)) begin
      pos_d = pos_q + 8'd1;
      hb_d  = in_data;
      eof_d = in_last;
    end
    if (emit) begin
      c_off_d = c_off_q + 14'd64;
      c_rem_d = c_rem_q - 13'(n);
    end
    if (fin) begin
      if (!c_last_q) begin
        state_d = S_IDLE;
      end else if (eof_d) begin
        state_d   = S_IDLE;
        frame_end = 1'b1;
      end else begin
        state_d = S_DRAIN;
      end
    end
    if (state_q == S_DRAIN && in_valid && in_last) begin
      state_d   = S_IDLE;
      frame_end = 1'b1;
    end

    // A WRITE command loads over the finishing segment.
    if (load_w) begin
      c_off_d  = 14'(h_off);
      c_rem_d  = h_len;
      c_last_d = h_last;
      mid_d    = !h_last;
      end_d    = 14'(h_off) + 14'(h_len);
      if (h_len != 13'd0) begin
        state_d     = S_SEG;
        req_valid_d = 1'b1;
        req_addr_d  = h_addr;
        req_len_d   = 17'(h_len);
        ev_write_d  = 1'b1;
        ev_bytes_d  = h_len;
      end else if (!h_last) begin
        state_d = S_IDLE;
      end else if (eof_d) begin
        state_d   = S_IDLE;
        frame_end = 1'b1;
      end else begin
        state_d = S_DRAIN;
      end
    end
    if (load_t) begin
      tok_valid_d = 1'b1;
      tok_data_d  = h_tok_data;
    end
    if (frame_end) begin
      pos_d = '0;
      eof_d = 1'b0;
      end_d = '0;
    end
  end

  // ------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    hb_q       <= hb_d;
    c_off_q    <= c_off_d;
    c_rem_q    <= c_rem_d;
    c_last_q   <= c_last_d;
    req_addr_q <= req_addr_d;
    req_len_q  <= req_len_d;
    tok_data_q <= tok_data_d;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q     <= S_IDLE;
      pos_q       <= '0;
      eof_q       <= 1'b0;
      mid_q       <= 1'b0;
      end_q       <= '0;
      outst_q     <= '0;
      req_valid_q <= 1'b0;
      tok_valid_q <= 1'b0;
      ev_write_q  <= 1'b0;
      ev_bytes_q  <= '0;
    end else begin
      state_q     <= state_d;
      pos_q       <= pos_d;
      eof_q       <= eof_d;
      mid_q       <= mid_d;
      end_q       <= end_d;
      outst_q     <= outst_d;
      req_valid_q <= req_valid_d;
      tok_valid_q <= tok_valid_d;
      ev_write_q  <= ev_write_d;
      ev_bytes_q  <= ev_bytes_d;
    end
  end

  assign wr_req_valid = req_valid_q;
  assign wr_req_addr  = req_addr_q;
  assign wr_req_len   = req_len_q;
  assign tok_valid    = tok_valid_q;
  assign tok_data     = tok_data_q;
  assign ev_write     = ev_write_q;
  assign ev_bytes     = ev_bytes_q;

  // in_keep is rx_buf's: full on every beat but the last; the segments'
  // bounds come from the commands, so it is not needed here.
  logic unused_keep;
  assign unused_keep = ^in_keep;

  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  `RNIC_ASSERT_HANDSHAKE(a_wc_hold, clk, rst, wc_valid, wc_ready,
                         {wc_tok, wc_off, wc_len, wc_addr, wc_last, wc_tok_data})
  `RNIC_ASSERT_HANDSHAKE(a_in_hold, clk, rst, in_valid, in_ready,
                         {in_data, in_keep, in_last})
  // A frame's segments in increasing, non-overlapping order.
  `RNIC_ASSERT_NEVER(a_cmd_order, clk, rst,
                     load_w && mid_q && 14'(h_off) < end_q)
  // Tokens only between frames.
  `RNIC_ASSERT_NEVER(a_tok_mid_frame, clk, rst, cq_valid && h_tok && mid_q)
  // A segment never reaches past its frame's last beat.
  `RNIC_ASSERT_NEVER(a_seg_past_frame, clk, rst,
                     state_q == S_SEG && eof_q && !hi_held)
  // wr_done only for requests given.
  `RNIC_ASSERT_NEVER(a_done_unexpected, clk, rst, wr_done_valid && outst_q == '0)
endmodule
