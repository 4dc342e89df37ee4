// PCIe DMA write engine. Model: model/src/dma_wr.rs (same register names).
//
// Client requests {addr, len 1..65536, client} with their data packed from
// byte 0 (ceil(len/64) beats) become MWr TLPs of at most MPS bytes, split at
// MPS-aligned addresses (so none crosses a 4 KB boundary). Client bytes
// collect in a 128-byte accumulator; each TLP beat takes the bytes it needs
// at its own lane offset (header 12/16 bytes plus the address's DW offset),
// so any alignment streams at one beat per cycle. wr_done pulses when the
// request's last MWr has left (MWr is posted: nothing comes back).
`include "rnic_assert.svh"

module dma_wr #(
  parameter int CLIENT_W = 2
) (
  input  logic                clk,
  input  logic                rst,
  input  logic [2:0]          cfg_mps,
  input  logic [15:0]         cfg_req_id,
  input  logic                wr_req_valid,
  output logic                wr_req_ready,
  input  logic [63:0]         wr_req_addr,
  input  logic [16:0]         wr_req_len,
  input  logic [CLIENT_W-1:0] wr_req_client,
  input  logic                wr_data_valid,
  output logic                wr_data_ready,
  input  logic [511:0]        wr_data,
  output logic                wr_done_valid,
  output logic [CLIENT_W-1:0] wr_done_client,
  output logic                rq_valid,
  input  logic                rq_ready,
  output logic [511:0]        rq_data,
  output logic [63:0]         rq_keep,
  output logic                rq_sop,
  output logic                rq_eop
);
  localparam int REQ_W = 64 + 17 + CLIENT_W;

  if (CLIENT_W < 1 || CLIENT_W > 8) begin : g_bad_client_w
    $error("dma_wr: CLIENT_W must be 1..8");
  end

  // ------------------------------------------------------------------
  // Request and data FIFOs
  // ------------------------------------------------------------------
  logic             req_out_valid, start;
  logic [REQ_W-1:0] req_out_data;
  logic [63:0]      head_addr;
  logic [16:0]      head_len;
  logic [CLIENT_W-1:0] head_client;
  logic             data_out_valid, pull;
  logic [511:0]     data_out;

  sync_fifo #(.WIDTH(REQ_W), .DEPTH(2)) u_req_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (wr_req_valid),
    .in_ready  (wr_req_ready),
    .in_data   ({wr_req_addr, wr_req_len, wr_req_client}),
    .out_valid (req_out_valid),
    .out_ready (start),
    .out_data  (req_out_data)
  );
  assign {head_addr, head_len, head_client} = req_out_data;

  sync_fifo #(.WIDTH(512), .DEPTH(2)) u_data_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (wr_data_valid),
    .in_ready  (wr_data_ready),
    .in_data   (wr_data),
    .out_valid (data_out_valid),
    .out_ready (pull),
    .out_data  (data_out)
  );

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic          w_busy_q;
  logic [63:0]   w_addr_q;
  logic [16:0]   w_rem_q, w_in_rem_q;
  logic [CLIENT_W-1:0] w_client_q;
  logic [1023:0] acc_q;
  logic [7:0]    acc_cnt_q;
  logic          t_act_q, t_last_q;
  logic [12:0]   t_left_q, t_bytes_q;
  logic          rq_valid_q, rq_sop_q, rq_eop_q, rq_last_q;
  logic [511:0]  rq_data_q;
  logic [63:0]   rq_keep_q;
  logic [CLIENT_W-1:0] rq_client_q;
  logic          done_valid_q;
  logic [CLIENT_W-1:0] done_client_q;

  // ------------------------------------------------------------------
  // Next MWr beat
  // ------------------------------------------------------------------
  logic [2:0]    mps_enc;
  logic [12:0]   mps, room, chunk, total;
  logic [11:0]   off;
  logic [127:0]  hdr;
  logic          is4dw;
  logic [6:0]    hlen, p0, m_hdr, m_cont, consume;
  logic [10:0]   ndw;
  logic          slot, emit_hdr, emit_cont, last_tlp;
  // The beat going into the rq register, header beat or continuation.
  logic          emit, emit_eop, emit_last;
  logic [511:0]  emit_data;
  logic [12:0]   emit_bytes;
  logic [511:0]  beat_hdr, beat_cont;
  logic [7:0]    acc_after;
  logic [6:0]    n_in;

  pcie_req_hdr u_mwr_hdr (
    .write  (1'b1),
    .addr   (w_addr_q),
    .len    (chunk),
    .req_id (cfg_req_id),
    .tag    (8'd0),
    .hdr    (hdr),
    .is4dw  (is4dw)
  );

  function automatic logic [511:0] byte_mask(input logic [6:0] n);
    for (int j = 0; j < 64; j++) byte_mask[8*j +: 8] = {8{7'(j) < n}};
  endfunction

  function automatic logic [63:0] keep_of(input logic [12:0] n);
    keep_of = (n >= 13'd64) ? {64{1'b1}} : ((64'd1 << n[5:0]) - 64'd1);
  endfunction

  always_comb begin
    mps_enc  = (cfg_mps > 3'd5) ? 3'd5 : cfg_mps;
    mps      = 13'd128 << mps_enc;
    slot     = !rq_valid_q || rq_ready;
    off      = w_addr_q[11:0] & 12'(mps - 13'd1);
    room     = mps - {1'b0, off};
    chunk    = (w_rem_q < {4'd0, room}) ? w_rem_q[12:0] : room;
  end

  // Separate from the block above: chunk feeds the header module, whose
  // is4dw comes back here.
  always_comb begin
    hlen     = is4dw ? 7'd16 : 7'd12;
    ndw      = 11'(({11'd0, w_addr_q[1:0]} + chunk + 13'd3) >> 2);
    total    = {6'd0, hlen} + {ndw, 2'b00};
    p0       = hlen + {5'd0, w_addr_q[1:0]};
    m_hdr    = ({6'd0, 7'd64 - p0} < chunk) ? 7'd64 - p0 : chunk[6:0];
    m_cont   = (t_left_q > 13'd64) ? 7'd64 : t_left_q[6:0];
    last_tlp = w_rem_q == {4'd0, chunk};

    emit_hdr  = slot && w_busy_q && !t_act_q && {1'b0, acc_cnt_q} >= {2'b0, m_hdr};
    emit_cont = slot && w_busy_q && t_act_q && {1'b0, acc_cnt_q} >= {2'b0, m_cont};
    consume   = emit_hdr ? m_hdr : (emit_cont ? m_cont : 7'd0);
    emit       = emit_hdr || emit_cont;
    emit_bytes = emit_hdr ? total : t_bytes_q;
    emit_eop   = emit_bytes <= 13'd64;
    emit_last  = (emit_hdr ? last_tlp : t_last_q) && emit_eop;

    beat_hdr  = {384'd0, hdr} | ((acc_q[511:0] & byte_mask(m_hdr)) << {p0, 3'b000});
    beat_cont = acc_q[511:0] & byte_mask(m_cont);
    emit_data = emit_hdr ? beat_hdr : beat_cont;

    acc_after = acc_cnt_q - {1'b0, consume};
    pull      = w_busy_q && w_in_rem_q != 17'd0 && data_out_valid && acc_after <= 8'd64;
    n_in      = (w_in_rem_q > 17'd64) ? 7'd64 : w_in_rem_q[6:0];
    start     = !w_busy_q && req_out_valid;
  end

  // ------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------
  logic [1023:0] acc_shift;

  always_comb begin
    acc_shift = acc_q >> {consume, 3'b000};
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      w_busy_q     <= 1'b0;
      w_addr_q     <= '0;
      w_rem_q      <= '0;
      w_in_rem_q   <= '0;
      w_client_q   <= '0;
      acc_q        <= '0;
      acc_cnt_q    <= '0;
      t_act_q      <= 1'b0;
      t_left_q     <= '0;
      t_bytes_q    <= '0;
      t_last_q     <= 1'b0;
      rq_valid_q   <= 1'b0;
      rq_data_q    <= '0;
      rq_keep_q    <= '0;
      rq_sop_q     <= 1'b0;
      rq_eop_q     <= 1'b0;
      rq_last_q    <= 1'b0;
      rq_client_q  <= '0;
      done_valid_q <= 1'b0;
      done_client_q <= '0;
    end else begin
      done_valid_q  <= rq_valid_q && rq_ready && rq_eop_q && rq_last_q;
      done_client_q <= rq_client_q;

      if (emit_hdr) begin
        w_addr_q <= w_addr_q + {51'd0, chunk};
        w_rem_q  <= w_rem_q - {4'd0, chunk};
        if (total <= 13'd64) begin
          if (last_tlp) w_busy_q <= 1'b0;
        end else begin
          t_act_q   <= 1'b1;
          t_left_q  <= chunk - {6'd0, m_hdr};
          t_bytes_q <= total - 13'd64;
          t_last_q  <= last_tlp;
        end
      end else if (emit_cont) begin
        t_left_q <= t_left_q - {6'd0, m_cont};
        if (t_bytes_q <= 13'd64) begin
          t_act_q <= 1'b0;
          if (t_last_q) w_busy_q <= 1'b0;
        end else begin
          t_bytes_q <= t_bytes_q - 13'd64;
        end
      end

      if (pull) begin
        acc_q <= (acc_shift & ~({512'd0, {512{1'b1}}} << {acc_after, 3'b000}))
                 | ({512'd0, data_out} << {acc_after, 3'b000});
        acc_cnt_q  <= acc_after + {1'b0, n_in};
        w_in_rem_q <= w_in_rem_q - {10'd0, n_in};
      end else begin
        acc_q     <= acc_shift;
        acc_cnt_q <= acc_after;
      end

      if (emit) begin
        rq_valid_q  <= 1'b1;
        rq_data_q   <= emit_data;
        rq_keep_q   <= keep_of(emit_bytes);
        rq_sop_q    <= emit_hdr;
        rq_eop_q    <= emit_eop;
        rq_last_q   <= emit_last;
        rq_client_q <= w_client_q;
      end else if (rq_valid_q && rq_ready) begin
        rq_valid_q <= 1'b0;
      end

      if (start) begin
        w_busy_q   <= 1'b1;
        w_addr_q   <= head_addr;
        w_rem_q    <= head_len;
        w_in_rem_q <= head_len;
        w_client_q <= head_client;
      end
    end
  end

  assign wr_done_valid  = done_valid_q;
  assign wr_done_client = done_client_q;
  assign rq_valid       = rq_valid_q;
  assign rq_data        = rq_data_q;
  assign rq_keep        = rq_keep_q;
  assign rq_sop         = rq_sop_q;
  assign rq_eop         = rq_eop_q;
  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  `RNIC_ASSERT_HANDSHAKE(a_wr_req_hold, clk, rst, wr_req_valid, wr_req_ready,
                         {wr_req_addr, wr_req_len, wr_req_client})
  // A data beat may be withdrawn while not taken (dma_wr only counts what
  // it takes, and its block-level client inserts such bubbles), but one
  // offered again right after a stall is the same beat.
  `RNIC_ASSERT_STABLE(a_wr_data_stable, clk, rst, wr_data_valid, wr_data_ready, wr_data)
endmodule
