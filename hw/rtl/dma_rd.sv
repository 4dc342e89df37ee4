// PCIe DMA read engine. Model: model/src/dma_rd.rs (same register names).
//
// Client requests {addr, len 1..65536, client} are split into MRd TLPs at
// MRRS-aligned addresses (so no MRd crosses a 4 KB boundary). Each MRd takes
// a tag and reserves its completion-buffer lines (the completion credits)
// before it leaves. Completions of any tag, split at any RCB, interleaved in
// any order, are written straight into the buffer at their final position:
// a line holds host bytes at lane = address mod 64, so one beat straddles at
// most two consecutive lines, which sit in different banks. The reader walks
// the buffer in request order and emits each request's bytes from lane 0 with
// one fixed shift (address mod 64), so data reaches every client in request
// order whatever order the completions came in.
//
// A failed MRd (UR/CA status, poisoned data, completion timeout) still
// yields the request's full beat count, its bytes zeroed, and the status on
// the last beat: a streaming client never loses framing and never sees
// stale data as good.
`include "rnic_assert.svh"

module dma_rd #(
  parameter int TAGS      = 32,
  parameter int BUF_LINES = 256,
  parameter int CLIENT_W  = 2
) (
  input  logic                clk,
  input  logic                rst,
  input  logic [2:0]          cfg_mrrs,
  input  logic [15:0]         cfg_req_id,
  input  logic [23:0]         cfg_cpl_timeout,
  input  logic                rd_req_valid,
  output logic                rd_req_ready,
  input  logic [63:0]         rd_req_addr,
  input  logic [16:0]         rd_req_len,
  input  logic [CLIENT_W-1:0] rd_req_client,
  output logic                rd_data_valid,
  input  logic                rd_data_ready,
  output logic [511:0]        rd_data,
  output logic [63:0]         rd_data_keep,
  output logic                rd_data_last,
  output logic [CLIENT_W-1:0] rd_data_client,
  output logic [2:0]          rd_data_status,
  output logic                rq_valid,
  input  logic                rq_ready,
  output logic [511:0]        rq_data,
  output logic [63:0]         rq_keep,
  output logic                rq_sop,
  output logic                rq_eop,
  input  logic                rc_valid,
  output logic                rc_ready,
  input  logic [511:0]        rc_data,
  input  logic [63:0]         rc_keep,
  input  logic                rc_sop,
  input  logic                rc_eop,
  output logic [8:0]          stat_tags_busy,
  output logic [15:0]         stat_free_lines,
  output logic [31:0]         cnt_cpl_unexpected,
  output logic [31:0]         cnt_cpl_malformed,
  output logic [31:0]         cnt_cpl_timeout
);
  localparam int TAGW     = (TAGS > 1) ? $clog2(TAGS) : 1;
  localparam int LW       = $clog2(BUF_LINES);
  localparam int CF_DEPTH = (TAGS > 2) ? (1 << $clog2(TAGS)) : 2;
  localparam int REQ_W    = 64 + 17 + CLIENT_W;
  localparam int CH_W     = TAGW + 7 + 6 + 17 + CLIENT_W;

  localparam logic [2:0] ST_OK       = 3'd0;
  localparam logic [2:0] ST_UR       = 3'd1;
  localparam logic [2:0] ST_CA       = 3'd2;
  localparam logic [2:0] ST_POISONED = 3'd3;
  localparam logic [2:0] ST_TIMEOUT  = 3'd4;

  if (TAGS < 1 || TAGS > 256) begin : g_bad_tags
    $error("dma_rd: TAGS must be 1..256");
  end
  if (BUF_LINES < 64 || BUF_LINES > 32768 || (BUF_LINES & (BUF_LINES - 1)) != 0) begin : g_bad_buf
    $error("dma_rd: BUF_LINES must be a power of two in 64..32768");
  end

  // ------------------------------------------------------------------
  // Request FIFO
  // ------------------------------------------------------------------
  logic             req_out_valid;
  logic [REQ_W-1:0] req_out_data;
  logic             pop_req;
  logic [63:0]      head_req_addr;
  logic [16:0]      head_req_len;
  logic [CLIENT_W-1:0] head_req_client;

  // A request that finds the FIFO empty and the splitter idle skips the
  // FIFO and loads the splitter directly: one cycle less from request to MRd.
  // (bypass_req is computed with the splitter's other controls below.)
  logic bypass_req;

  sync_fifo #(.WIDTH(REQ_W), .DEPTH(2)) u_req_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (rd_req_valid && !bypass_req),
    .in_ready  (rd_req_ready),
    .in_data   ({rd_req_addr, rd_req_len, rd_req_client}),
    .out_valid (req_out_valid),
    .out_ready (pop_req),
    .out_data  (req_out_data)
  );
  assign {head_req_addr, head_req_len, head_req_client} = req_out_data;

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  // Splitter.
  logic        sp_busy_q;
  logic [63:0] sp_addr_q;
  logic [16:0] sp_rem_q;
  logic [5:0]  sp_s_q;
  logic [16:0] sp_len_q;
  logic [CLIENT_W-1:0] sp_client_q;
  // Tag table: flops, TAGS entries.
  logic [TAGS-1:0]         tg_busy_q, tg_done_q;
  // Per-tag fields are flattened vectors (entry t at [W*t +: W]): Yosys 0.23
  // takes no multi-dimensional packed arrays.
  logic [TAGS*3-1:0]       tg_err_q;
  logic [TAGS*13-1:0]      tg_rem_q, tg_end_q, tg_fla_q;
  logic [TAGS*LW-1:0]      tg_base_q;
  logic [TAGS*24-1:0]      tg_timer_q;
  logic [8:0]              tags_busy_q;
  logic [LW-1:0]           alloc_ptr_q;
  logic [15:0]             free_lines_q;
  // MRd output.
  logic         rq_valid_q;
  logic [511:0] rq_data_q;
  logic [63:0]  rq_keep_q;
  // Completion input register and context.
  logic         rc_ready_q, c_valid_q, c_sop_q, c_eop_q;
  logic [511:0] c_data_q;
  logic [63:0]  c_keep_q;
  logic         ct_active_q;
  logic         ct_write_q, ct_apply_q, ct_new_done_q;
  logic [7:0]   ct_tag_q, ct_beat_q;
  logic [5:0]   ct_rot_q;
  logic [LW-1:0] ct_line_q;
  logic [12:0]  ct_total_q, ct_new_rem_q;
  logic [2:0]   ct_new_err_q;
  // Reader.
  logic         rd_act_q, rd_chunk_zero_q;
  logic [5:0]   rd_s_q;
  logic [16:0]  rd_len_q;
  logic [CLIENT_W-1:0] rd_client_q;
  logic [2:0]   rd_status_q;
  logic [10:0]  rd_step_q, rd_nlines_q, rd_nbeats_q;
  logic [6:0]   rd_chunk_left_q;
  logic [LW-1:0] rd_ptr_q;
  logic         p1_valid_q, p1_fetch_q, p1_zero_q, p1_emit_q, p1_last_q;
  logic [63:0]  p1_keep_q;
  logic [CLIENT_W-1:0] p1_client_q;
  logic [2:0]   p1_status_q;
  logic [5:0]   p1_s_q;
  logic [511:0] ram_q, prev_q;
  // Read data output.
  logic         out_valid_q, out_last_q;
  logic [511:0] out_data_q;
  logic [63:0]  out_keep_q;
  logic [CLIENT_W-1:0] out_client_q;
  logic [2:0]   out_status_q;
  logic [31:0]  cnt_unexpected_q, cnt_malformed_q, cnt_timeout_q;
  // Completion buffer: even and odd lines.
  logic [511:0] bank0 [BUF_LINES/2];
  logic [511:0] bank1 [BUF_LINES/2];

  // ------------------------------------------------------------------
  // Chunk FIFO: MRds in issue order, for the reader.
  // ------------------------------------------------------------------
  logic            issue, claim;
  logic [7:0]      alloc_tag;
  logic [6:0]      sp_nlines;
  logic            head_valid;
  logic [CH_W-1:0] head_data;
  logic [TAGW-1:0] head_tag;
  logic [6:0]      head_nlines;
  logic [5:0]      head_s;
  logic [16:0]     head_len;
  logic [CLIENT_W-1:0] head_client;
  logic            chunk_in_ready_unused;

  sync_fifo #(.WIDTH(CH_W), .DEPTH(CF_DEPTH), .NEVER_FULL(1'b1)) u_chunk_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (issue),
    // Never full: it holds at most one entry per busy tag.
    .in_ready  (chunk_in_ready_unused),
    .in_data   ({alloc_tag[TAGW-1:0], sp_nlines, sp_s_q, sp_len_q, sp_client_q}),
    .out_valid (head_valid),
    .out_ready (claim),
    .out_data  (head_data)
  );
  assign {head_tag, head_nlines, head_s, head_len, head_client} = head_data;

  // ------------------------------------------------------------------
  // Reader: stage 0 picks the next line, stage 1 realigns it.
  // ------------------------------------------------------------------
  logic         advance, fetch, start_req;
  logic         need_fetch, need_claim, head_done, step_go;
  logic [2:0]   head_err;
  logic [16:0]  beat_rem;
  logic [6:0]   keep_n;
  logic [63:0]  step_keep;
  logic         rd_act_d, rd_chunk_zero_d;
  logic [2:0]   rd_status_d;
  logic [10:0]  rd_step_d;
  logic [6:0]   rd_chunk_left_d;
  logic [511:0] p1_cur;
  logic [511:0] realign;

  always_comb begin
    advance    = !out_valid_q || rd_data_ready;
    head_done  = head_valid && tg_done_q[head_tag];
    head_err   = tg_err_q[3*head_tag +: 3];
    need_fetch = rd_step_q < rd_nlines_q;
    need_claim = need_fetch && rd_chunk_left_q == 7'd0;
    start_req  = advance && !rd_act_q && head_valid;
    step_go    = advance && rd_act_q && (!need_claim || head_done);
    claim      = step_go && need_claim;
    fetch      = step_go && need_fetch;
    beat_rem   = rd_len_q - {rd_step_q - 11'd1, 6'd0};
    keep_n     = (beat_rem > 17'd64) ? 7'd64 : beat_rem[6:0];
    step_keep  = (rd_step_q == 11'd0) ? 64'd0 :
                 (keep_n == 7'd64) ? {64{1'b1}} : ((64'd1 << keep_n) - 64'd1);

    rd_act_d        = rd_act_q;
    rd_step_d       = rd_step_q;
    rd_status_d     = rd_status_q;
    rd_chunk_left_d = rd_chunk_left_q;
    rd_chunk_zero_d = rd_chunk_zero_q;
    if (start_req) begin
      rd_act_d        = 1'b1;
      rd_status_d     = ST_OK;
      rd_step_d       = 11'd0;
      rd_chunk_left_d = 7'd0;
      rd_chunk_zero_d = 1'b0;
    end else if (step_go) begin
      if (need_claim) begin
        rd_chunk_zero_d = head_err != ST_OK;
        if (rd_status_q == ST_OK) rd_status_d = head_err;
        rd_chunk_left_d = head_nlines - 7'd1;
      end else if (need_fetch) begin
        rd_chunk_left_d = rd_chunk_left_q - 7'd1;
      end
      rd_step_d = rd_step_q + 11'd1;
      if (rd_step_q == rd_nbeats_q) rd_act_d = 1'b0;
    end

    p1_cur       = (p1_fetch_q && !p1_zero_q) ? ram_q : 512'd0;
    realign      = 512'({p1_cur, prev_q} >> {p1_s_q, 3'b000});
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      rd_act_q        <= 1'b0;
      rd_s_q          <= '0;
      rd_len_q        <= '0;
      rd_client_q     <= '0;
      rd_status_q     <= ST_OK;
      rd_step_q       <= '0;
      rd_nlines_q     <= '0;
      rd_nbeats_q     <= '0;
      rd_chunk_left_q <= '0;
      rd_chunk_zero_q <= 1'b0;
      rd_ptr_q        <= '0;
      p1_valid_q      <= 1'b0;
      p1_fetch_q      <= 1'b0;
      p1_zero_q       <= 1'b0;
      p1_emit_q       <= 1'b0;
      p1_last_q       <= 1'b0;
      p1_keep_q       <= '0;
      p1_client_q     <= '0;
      p1_status_q     <= ST_OK;
      p1_s_q          <= '0;
      ram_q           <= '0;
      prev_q          <= '0;
      out_valid_q     <= 1'b0;
      out_data_q      <= '0;
      out_keep_q      <= '0;
      out_last_q      <= 1'b0;
      out_client_q    <= '0;
      out_status_q    <= ST_OK;
    end else begin
      rd_act_q        <= rd_act_d;
      rd_step_q       <= rd_step_d;
      rd_status_q     <= rd_status_d;
      rd_chunk_left_q <= rd_chunk_left_d;
      rd_chunk_zero_q <= rd_chunk_zero_d;
      if (start_req) begin
        rd_s_q      <= head_s;
        rd_len_q    <= head_len;
        rd_client_q <= head_client;
        rd_nlines_q <= 11'(({12'd0, head_s} + {1'b0, head_len} + 18'd63) >> 6);
        rd_nbeats_q <= 11'(({1'b0, head_len} + 18'd63) >> 6);
      end
      if (advance) begin
        p1_valid_q  <= step_go;
        p1_fetch_q  <= fetch;
        p1_zero_q   <= rd_chunk_zero_d;
        p1_emit_q   <= rd_step_q != 11'd0;
        p1_last_q   <= rd_step_q == rd_nbeats_q;
        p1_keep_q   <= step_keep;
        p1_client_q <= rd_client_q;
        p1_status_q <= rd_status_d;
        p1_s_q      <= rd_s_q;
        out_valid_q <= p1_valid_q && p1_emit_q;
        if (p1_valid_q && p1_emit_q) begin
          out_data_q   <= realign & keep_to_bits(p1_keep_q);
          out_keep_q   <= p1_keep_q;
          out_last_q   <= p1_last_q;
          out_client_q <= p1_client_q;
          out_status_q <= p1_status_q;
        end
        if (p1_valid_q) prev_q <= p1_cur;
      end
      if (fetch) begin
        ram_q    <= rd_ptr_q[0] ? bank1[rd_ptr_q[LW-1:1]] : bank0[rd_ptr_q[LW-1:1]];
        rd_ptr_q <= rd_ptr_q + 1'b1;
      end
    end
  end

  function automatic logic [511:0] keep_to_bits(input logic [63:0] keep);
    for (int j = 0; j < 64; j++) keep_to_bits[8*j +: 8] = {8{keep[j]}};
  endfunction

  // ------------------------------------------------------------------
  // Splitter: one MRd per cycle when a tag and the buffer lines are free.
  // ------------------------------------------------------------------
  logic [2:0]   mrrs_enc;
  logic [12:0]  mrrs, room, chunk;
  logic [11:0]  off;
  logic         any_free;
  logic [127:0] mrd_hdr;
  logic         mrd_is4dw;
  logic [12:0]  page_off;

  always_comb begin
    mrrs_enc  = (cfg_mrrs > 3'd5) ? 3'd5 : cfg_mrrs;
    mrrs      = 13'd128 << mrrs_enc;
    off       = sp_addr_q[11:0] & 12'(mrrs - 13'd1);
    room      = mrrs - {1'b0, off};
    chunk     = (sp_rem_q < {4'd0, room}) ? sp_rem_q[12:0] : room;
    sp_nlines = 7'(({8'd0, sp_addr_q[5:0]} + {1'b0, chunk} + 14'd63) >> 6);
    any_free  = 1'b0;
    alloc_tag = 8'd0;
    for (int t = TAGS - 1; t >= 0; t--) begin
      if (!tg_busy_q[t]) begin
        any_free  = 1'b1;
        alloc_tag = 8'(t);
      end
    end
    issue    = sp_busy_q && any_free && free_lines_q >= {9'd0, sp_nlines}
               && (!rq_valid_q || rq_ready);
    pop_req  = !sp_busy_q && req_out_valid;
    bypass_req = rd_req_valid && rd_req_ready && !sp_busy_q && !req_out_valid;
    page_off = {1'b0, sp_addr_q[11:0]};
  end

  pcie_req_hdr u_mrd_hdr (
    .write  (1'b0),
    .addr   (sp_addr_q),
    .len    (chunk),
    .req_id (cfg_req_id),
    .tag    (alloc_tag),
    .hdr    (mrd_hdr),
    .is4dw  (mrd_is4dw)
  );

  always_ff @(posedge clk) begin
    if (rst) begin
      sp_busy_q   <= 1'b0;
      sp_addr_q   <= '0;
      sp_rem_q    <= '0;
      sp_s_q      <= '0;
      sp_len_q    <= '0;
      sp_client_q <= '0;
      rq_valid_q  <= 1'b0;
      rq_data_q   <= '0;
      rq_keep_q   <= '0;
      alloc_ptr_q <= '0;
    end else begin
      if (pop_req) begin
        sp_busy_q   <= 1'b1;
        sp_addr_q   <= head_req_addr;
        sp_rem_q    <= head_req_len;
        sp_s_q      <= head_req_addr[5:0];
        sp_len_q    <= head_req_len;
        sp_client_q <= head_req_client;
      end else if (bypass_req) begin
        sp_busy_q   <= 1'b1;
        sp_addr_q   <= rd_req_addr;
        sp_rem_q    <= rd_req_len;
        sp_s_q      <= rd_req_addr[5:0];
        sp_len_q    <= rd_req_len;
        sp_client_q <= rd_req_client;
      end else if (issue) begin
        sp_addr_q <= sp_addr_q + {51'd0, chunk};
        sp_rem_q  <= sp_rem_q - {4'd0, chunk};
        if (sp_rem_q == {4'd0, chunk}) sp_busy_q <= 1'b0;
      end
      if (issue) begin
        rq_valid_q  <= 1'b1;
        rq_data_q   <= {384'd0, mrd_hdr};
        rq_keep_q   <= mrd_is4dw ? 64'h0000_0000_0000_FFFF : 64'h0000_0000_0000_0FFF;
        alloc_ptr_q <= alloc_ptr_q + LW'(sp_nlines);
      end else if (rq_valid_q && rq_ready) begin
        rq_valid_q <= 1'b0;
      end
    end
  end

  // ------------------------------------------------------------------
  // Completions: header decode at sop, buffer writes on every beat, tag
  // update at a well-formed eop.
  // ------------------------------------------------------------------
  logic [7:0]   c_tag;
  logic [15:0]  c_rid;
  logic [6:0]   c_la;
  logic         c_ep;
  logic [2:0]   c_fmt, c_st;
  logic [4:0]   c_type;
  logic [10:0]  c_len_dw;
  logic [12:0]  c_bc;
  logic [TAGW-1:0] c_tagi;
  logic         h_busy, h_done;
  logic [2:0]   h_err;
  logic [12:0]  h_rem, h_end, h_fla, h_f, h_f_dw, h_end_dw, h_avail, h_n;
  logic [LW-1:0] h_base;
  logic signed [14:0] h_doff;
  logic         h_malformed, h_unexpected;
  // Context of the current beat's TLP.
  logic         x_valid, x_write, x_apply, x_new_done, x_live, x_last_ok;
  logic [7:0]   x_tag, x_beat;
  logic [5:0]   x_rot;
  logic [LW-1:0] x_line, x_line1;
  logic [12:0]  x_total, x_new_rem;
  logic [2:0]   x_new_err;
  logic [1:0]   n_unexpected, n_malformed;
  logic         cpl_update;
  logic [63:0]  src_ok, rot_ok, lo_mask, be_l0, be_l1, be0, be1;
  logic [511:0] rot_data;
  logic [LW-2:0] a0, a1;
  logic [13:0]  pos;

  always_comb begin
    // Completion header fields (byte n of the TLP is c_data_q[8n+7:8n]).
    c_fmt    = c_data_q[7:5];
    c_type   = c_data_q[4:0];
    c_ep     = c_data_q[22];
    c_len_dw = ({c_data_q[17:16], c_data_q[31:24]} == 10'd0) ? 11'd1024
               : {1'b0, c_data_q[17:16], c_data_q[31:24]};
    c_st     = c_data_q[55:53];
    c_bc     = ({c_data_q[51:48], c_data_q[63:56]} == 12'd0) ? 13'd4096
               : {1'b0, c_data_q[51:48], c_data_q[63:56]};
    c_rid    = {c_data_q[71:64], c_data_q[79:72]};
    c_tag    = c_data_q[87:80];
    c_la     = c_data_q[94:88];
    c_tagi   = c_tag[TAGW-1:0];
    h_busy   = tg_busy_q[c_tagi];
    h_done   = tg_done_q[c_tagi];
    h_err    = tg_err_q[3*c_tagi +: 3];
    h_rem    = tg_rem_q[13*c_tagi +: 13];
    h_end    = tg_end_q[13*c_tagi +: 13];
    h_fla    = tg_fla_q[13*c_tagi +: 13];
    h_base   = tg_base_q[LW*c_tagi +: LW];
    h_f      = h_end - h_rem;
    h_f_dw   = {h_f[12:2], 2'b00};
    h_end_dw = (h_end + 13'd3) & ~13'd3;
    h_avail  = {c_len_dw, 2'b00} - {11'd0, h_f[1:0]};
    h_n      = (h_rem < h_avail) ? h_rem : h_avail;
    h_doff   = $signed({2'b00, h_f_dw}) - 15'sd12 - $signed({2'b00, h_fla});

    h_malformed  = !(c_type == 5'h0A && (c_fmt == 3'd0 || c_fmt == 3'd2));
    h_unexpected = !h_malformed && (c_rid != cfg_req_id || {24'd0, c_tag} >= TAGS
                                    || !h_busy || h_done);

    // Decode of the sop beat into a context; a dropped TLP gets an all-zero
    // context (no writes, no update) so that its beats are swallowed.
    n_unexpected = 2'd0;
    n_malformed  = 2'd0;
    x_valid    = 1'b0;
    x_write    = 1'b0;
    x_apply    = 1'b0;
    x_tag      = 8'd0;
    x_rot      = 6'd0;
    x_line     = '0;
    x_beat     = 8'd0;
    x_total    = 13'd0;
    x_new_rem  = 13'd0;
    x_new_err  = ST_OK;
    x_new_done = 1'b0;
    if (c_valid_q && c_sop_q) begin
      x_valid = 1'b1;
      if (ct_active_q) n_malformed = n_malformed + 2'd1;
      if (h_malformed) begin
        n_malformed = n_malformed + 2'd1;
      end else if (h_unexpected) begin
        n_unexpected = n_unexpected + 2'd1;
      end else if (c_st != 3'd0) begin
        x_apply    = 1'b1;
        x_tag      = c_tag;
        x_total    = 13'd12 + ((c_fmt == 3'd2) ? {c_len_dw, 2'b00} : 13'd0);
        x_new_rem  = h_rem;
        x_new_done = 1'b1;
        x_new_err  = (h_err != ST_OK) ? h_err : ((c_st == 3'd1) ? ST_UR : ST_CA);
      end else if (c_fmt == 3'd0 || c_bc != h_rem || c_la != h_f[6:0]
                   || {1'b0, h_f_dw} + {1'b0, c_len_dw, 2'b00} > {1'b0, h_end_dw}) begin
        n_malformed = n_malformed + 2'd1;
      end else begin
        x_write    = 1'b1;
        x_apply    = 1'b1;
        x_tag      = c_tag;
        x_total    = 13'd12 + {c_len_dw, 2'b00};
        x_rot      = h_doff[5:0];
        x_line     = h_base + LW'(h_doff >>> 6);
        x_new_rem  = h_rem - h_n;
        x_new_done = (h_rem - h_n) == 13'd0;
        x_new_err  = (h_err != ST_OK) ? h_err : (c_ep ? ST_POISONED : ST_OK);
      end
    end else if (c_valid_q && ct_active_q) begin
      x_valid    = 1'b1;
      x_write    = ct_write_q;
      x_apply    = ct_apply_q;
      x_tag      = ct_tag_q;
      x_rot      = ct_rot_q;
      x_line     = ct_line_q;
      x_beat     = ct_beat_q;
      x_total    = ct_total_q;
      x_new_rem  = ct_new_rem_q;
      x_new_err  = ct_new_err_q;
      x_new_done = ct_new_done_q;
    end else if (c_valid_q) begin
      n_malformed = n_malformed + 2'd1;  // data outside a TLP
    end
    x_live    = tg_busy_q[x_tag[TAGW-1:0]] && !tg_done_q[x_tag[TAGW-1:0]];
    x_line1   = x_line + 1'b1;
    x_last_ok = {6'd0, x_beat} == ((x_total - 13'd1) >> 6);
    cpl_update = 1'b0;
    if (x_valid && c_eop_q && x_apply) begin
      if (!x_last_ok) n_malformed = n_malformed + 2'd1;
      else cpl_update = x_live;
    end

    // Byte lanes of this beat that carry payload, rotated to buffer lanes.
    for (int i = 0; i < 64; i++) begin
      pos       = {x_beat, 6'd0} + 14'(i);
      src_ok[i] = c_keep_q[i] && pos >= 14'd12 && pos < {1'b0, x_total};
    end
    rot_ok   = (src_ok << x_rot) | (src_ok >> (7'd64 - {1'b0, x_rot}));
    lo_mask  = (64'd1 << x_rot) - 64'd1;
    be_l0    = rot_ok & ~lo_mask;
    be_l1    = rot_ok & lo_mask;
    if (!(x_valid && x_write && x_live)) begin
      be_l0 = 64'd0;
      be_l1 = 64'd0;
    end
    rot_data = (c_data_q << {x_rot, 3'b000}) | (c_data_q >> (10'd512 - {1'b0, x_rot, 3'b000}));
    // x_line and x_line1 differ in parity: route each to its bank.
    be0 = x_line[0] ? be_l1 : be_l0;
    be1 = x_line[0] ? be_l0 : be_l1;
    a0  = x_line[0] ? x_line1[LW-1:1] : x_line[LW-1:1];
    a1  = x_line[0] ? x_line[LW-1:1] : x_line1[LW-1:1];
  end

  always_ff @(posedge clk) begin
    for (int j = 0; j < 64; j++) begin
      if (be0[j]) bank0[a0][8*j +: 8] <= rot_data[8*j +: 8];
      if (be1[j]) bank1[a1][8*j +: 8] <= rot_data[8*j +: 8];
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      rc_ready_q    <= 1'b0;
      c_valid_q     <= 1'b0;
      c_data_q      <= '0;
      c_keep_q      <= '0;
      c_sop_q       <= 1'b0;
      c_eop_q       <= 1'b0;
      ct_active_q   <= 1'b0;
      ct_write_q    <= 1'b0;
      ct_apply_q    <= 1'b0;
      ct_tag_q      <= '0;
      ct_rot_q      <= '0;
      ct_line_q     <= '0;
      ct_beat_q     <= '0;
      ct_total_q    <= '0;
      ct_new_rem_q  <= '0;
      ct_new_err_q  <= ST_OK;
      ct_new_done_q <= 1'b0;
    end else begin
      // Completions are never back-pressured: their buffer space was
      // reserved before the MRd left. Ready is just "out of reset".
      rc_ready_q <= 1'b1;
      c_valid_q  <= rc_valid && rc_ready_q;
      if (rc_valid && rc_ready_q) begin
        c_data_q <= rc_data;
        c_keep_q <= rc_keep;
        c_sop_q  <= rc_sop;
        c_eop_q  <= rc_eop;
      end
      if (x_valid) begin
        ct_active_q <= !c_eop_q;
        if (!c_eop_q) begin
          ct_write_q    <= x_write;
          ct_apply_q    <= x_apply;
          ct_tag_q      <= x_tag;
          ct_rot_q      <= x_rot;
          ct_line_q     <= x_line1;
          ct_beat_q     <= (x_beat == 8'hFF) ? x_beat : x_beat + 8'd1;
          ct_total_q    <= x_total;
          ct_new_rem_q  <= x_new_rem;
          ct_new_err_q  <= x_new_err;
          ct_new_done_q <= x_new_done;
        end
      end
    end
  end

  // ------------------------------------------------------------------
  // Tag table: timers, then the completion update, allocation, claim.
  // ------------------------------------------------------------------
  logic [8:0]      n_timeouts;
  logic [TAGS-1:0] tg_timing;

  // The timeout runs from the MRd leaving, not from its issue: an MRd held
  // in the output register by rq back-pressure is not sent yet.
  always_comb begin
    n_timeouts = 9'd0;
    for (int t = 0; t < TAGS; t++) begin
      tg_timing[t] = tg_busy_q[t] && !tg_done_q[t] && !(rq_valid_q && rq_data_q[55:48] == 8'(t));
      if (tg_timing[t] && tg_timer_q[24*t +: 24] == 24'd0) n_timeouts = n_timeouts + 9'd1;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      tg_busy_q    <= '0;
      tg_done_q    <= '0;
      tg_err_q     <= '0;
      tg_rem_q     <= '0;
      tg_end_q     <= '0;
      tg_fla_q     <= '0;
      tg_base_q    <= '0;
      tg_timer_q   <= '0;
      tags_busy_q  <= '0;
      free_lines_q <= 16'(BUF_LINES);
    end else begin
      for (int t = 0; t < TAGS; t++) begin
        if (tg_timing[t]) begin
          if (tg_timer_q[24*t +: 24] == 24'd0) begin
            tg_done_q[t] <= 1'b1;
            if (tg_err_q[3*t +: 3] == ST_OK) tg_err_q[3*t +: 3] <= ST_TIMEOUT;
          end else begin
            tg_timer_q[24*t +: 24] <= tg_timer_q[24*t +: 24] - 24'd1;
          end
        end
      end
      if (cpl_update) begin
        tg_rem_q[13*x_tag[TAGW-1:0] +: 13]  <= x_new_rem;
        tg_err_q[3*x_tag[TAGW-1:0] +: 3]  <= x_new_err;
        tg_done_q[x_tag[TAGW-1:0]] <= x_new_done;
      end
      if (issue) begin
        tg_busy_q[alloc_tag[TAGW-1:0]]  <= 1'b1;
        tg_done_q[alloc_tag[TAGW-1:0]]  <= 1'b0;
        tg_err_q[3*alloc_tag[TAGW-1:0] +: 3]   <= ST_OK;
        tg_rem_q[13*alloc_tag[TAGW-1:0] +: 13]   <= chunk;
        tg_end_q[13*alloc_tag[TAGW-1:0] +: 13]   <= page_off + chunk;
        tg_fla_q[13*alloc_tag[TAGW-1:0] +: 13]   <= page_off & ~13'd63;
        tg_base_q[LW*alloc_tag[TAGW-1:0] +: LW]  <= alloc_ptr_q;
        tg_timer_q[24*alloc_tag[TAGW-1:0] +: 24] <= cfg_cpl_timeout;
      end
      if (claim) begin
        tg_busy_q[head_tag] <= 1'b0;
        tg_done_q[head_tag] <= 1'b0;
      end
      tags_busy_q  <= tags_busy_q + {8'd0, issue} - {8'd0, claim};
      free_lines_q <= free_lines_q - (issue ? {9'd0, sp_nlines} : 16'd0) + {15'd0, fetch};
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      cnt_unexpected_q <= '0;
      cnt_malformed_q  <= '0;
      cnt_timeout_q    <= '0;
    end else begin
      cnt_unexpected_q <= cnt_unexpected_q + {30'd0, n_unexpected};
      cnt_malformed_q  <= cnt_malformed_q + {30'd0, n_malformed};
      cnt_timeout_q    <= cnt_timeout_q + {23'd0, n_timeouts};
    end
  end

  // ------------------------------------------------------------------
  // Outputs: all straight from registers.
  // ------------------------------------------------------------------
  assign rd_data_valid      = out_valid_q;
  assign rd_data            = out_data_q;
  assign rd_data_keep       = out_keep_q;
  assign rd_data_last       = out_last_q;
  assign rd_data_client     = out_client_q;
  assign rd_data_status     = out_status_q;
  assign rq_valid           = rq_valid_q;
  assign rq_data            = rq_data_q;
  assign rq_keep            = rq_keep_q;
  assign rq_sop             = rq_valid_q;
  assign rq_eop             = rq_valid_q;
  assign rc_ready           = rc_ready_q;
  assign stat_tags_busy     = tags_busy_q;
  assign stat_free_lines    = free_lines_q;
  assign cnt_cpl_unexpected = cnt_unexpected_q;
  assign cnt_cpl_malformed  = cnt_malformed_q;
  assign cnt_cpl_timeout    = cnt_timeout_q;
  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  // Input handshakes: a request or completion beat offered is held, unchanged,
  // until taken (docs/architecture.md, "Assertions").
  `RNIC_ASSERT_HANDSHAKE(a_rd_req_hold, clk, rst, rd_req_valid, rd_req_ready,
                         {rd_req_addr, rd_req_len, rd_req_client})
  `RNIC_ASSERT_HANDSHAKE(a_rc_hold, clk, rst, rc_valid, rc_ready,
                         {rc_data, rc_keep, rc_sop, rc_eop})
endmodule
