// Receive-queue WQE prefetch: RQ doorbells, per-QP producer and fetch
// indices, batched reads of RECV WQEs (128 bytes, two beats each) through a
// dma_rd client, and up to SLOTS fetched WQEs per QP. Model:
// model/src/rq_fetch.rs (same register names). Contract: docs/responder.md,
// "rq_fetch".
//
// Per-QP state is RAM-shaped: the doorbell row {pi, base[63:7], log} and
// the fetch index are two tables of QPS rows, each with one write port and
// one registered read port. What is left in flops is bitmap-sized: live
// (state != RESET), pend (a doorbell may have brought work), busy (a read
// in flight), drop (that read is to be discarded), and per QP a slot head
// (SW bits) and count (CW bits), read in the cycle of a head read because
// rqe_data is due the cycle after it.
//
// Fetch pipeline: at n rr_pick (u_rr) picks an eligible QP (live, pend, not
// busy, a free slot, not the one in stage 1, not this cycle's doorbell) and
// reads its two rows; only when the request register is free after this
// edge and the in-flight FIFO has room, so that stage 1 can always issue.
// At n+1 (stage 1) the read n = min(pi - fidx, free slots, BATCH, entries
// before the ring end) goes into the request register and the FIFO, and
// the fetch index row is written; with pi == fidx the pick is dropped and
// pend cleared. A RESET doorbell cancels stage 1 (it owns the fetch index
// table's write port that cycle; the QP is picked again).
//
// Beats come back in request order; the in-flight FIFO holds {qp, n}. The
// first beat of a WQE waits in lo_q, the second writes the WQE row at slot
// head + count + k (a pop moves head and count together, and a QP has at
// most one read in flight, so that sum is stable during the read). On the
// last beat the n WQEs are counted if no beat had a nonzero status, else
// err pulses; a read of a QP reset meanwhile is dropped silently.
`include "rnic_assert.svh"

module rq_fetch #(
  parameter int QPS   = rnic_pkg::QPS,
  parameter int SLOTS = 2,
  parameter int BATCH = 2,
  parameter int INFL  = 4
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   db_valid,
  input  logic [$clog2(QPS)-1:0] db_qp,
  input  logic [15:0]            db_pi,
  input  logic [2:0]             db_state,
  input  logic [63:0]            db_base,
  input  logic [4:0]             db_log,
  output logic                   rd_req_valid,
  input  logic                   rd_req_ready,
  output logic [63:0]            rd_req_addr,
  output logic [16:0]            rd_req_len,
  input  logic                   rd_data_valid,
  output logic                   rd_data_ready,
  input  logic [511:0]           rd_data,
  input  logic                   rd_data_last,
  input  logic [2:0]             rd_data_status,
  output logic [QPS-1:0]         rqe_avail,
  input  logic                   rqe_rd_valid,
  input  logic [$clog2(QPS)-1:0] rqe_rd_qp,
  output logic                   rqe_present,
  output logic [1023:0]          rqe_data,
  input  logic                   rqe_pop_valid,
  input  logic [$clog2(QPS)-1:0] rqe_pop_qp,
  output logic                   err_valid,
  output logic [$clog2(QPS)-1:0] err_qp,
  output logic [3:0]             ev_rqe_n
);
  localparam int QPW = $clog2(QPS);
  localparam int SW  = $clog2(SLOTS);
  localparam int CW  = SW + 1;          // a slot count, 0..SLOTS
  localparam int BW  = SW + 1;          // a beat index, 0..2*SLOTS-1
  localparam int AW  = QPW + SW;        // WQE RAM address {qp, slot}
  localparam int DBW = 16 + 57 + 5;     // doorbell row {pi, base[63:7], log}
  localparam int FW  = QPW + CW;        // in-flight FIFO entry {qp, n}

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("rq_fetch: QPS must be a power of two in 2..256");
  end
  if (SLOTS < 2 || SLOTS > 16 || (SLOTS & (SLOTS - 1)) != 0) begin : g_bad_slots
    $error("rq_fetch: SLOTS must be a power of two in 2..16");
  end
  if (BATCH < 1 || BATCH > SLOTS || BATCH > 15) begin : g_bad_batch
    $error("rq_fetch: BATCH must be 1..min(SLOTS, 15) (ev_rqe_n is 4 bits)");
  end
  if (INFL < 2 || (INFL & (INFL - 1)) != 0) begin : g_bad_infl
    $error("rq_fetch: INFL must be a power of two >= 2");
  end

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic [QPS-1:0]    live_q, live_d;
  logic [QPS-1:0]    pend_q, pend_d;
  logic [QPS-1:0]    busy_q, busy_d;
  logic [QPS-1:0]    drop_q, drop_d;
  logic [QPS*SW-1:0] hd_q, hd_d;
  logic [QPS*CW-1:0] cnt_q, cnt_d;
  logic [QPS-1:0]    rqe_avail_q, rqe_avail_d;
  // Per-QP tables and their registered read ports.
  logic [DBW-1:0]    db_mem_q [QPS];
  logic [15:0]       fidx_mem_q [QPS];
  logic [DBW-1:0]    db_rd_q;
  logic [15:0]       fidx_rd_q;
  // Stage 1.
  logic              s1_valid_q;
  logic [QPW-1:0]    s1_qp_q;
  // Request register.
  logic              rd_req_valid_q, rd_req_valid_d;
  logic [63:0]       rd_req_addr_q, rd_req_addr_d;
  logic [16:0]       rd_req_len_q, rd_req_len_d;
  logic              rd_data_ready_q;
  // Returning beats.
  logic [BW-1:0]     bcnt_q, bcnt_d;
  logic              bad_q, bad_d;
  logic [511:0]      lo_q;
  // WQE RAM and its read port.
  logic [1023:0]     mem_q [QPS*SLOTS];
  logic              rqe_present_q;
  logic [1023:0]     rqe_data_q;
  logic              err_valid_q, err_valid_d;
  logic [QPW-1:0]    err_qp_q, err_qp_d;
  logic [3:0]        ev_rqe_n_q, ev_rqe_n_d;

  // ------------------------------------------------------------------
  // Doorbell
  // ------------------------------------------------------------------
  logic           db_reset;
  logic [DBW-1:0] db_row;
  logic           unused_db_base;

  always_comb begin
    db_reset       = db_valid && db_state == 3'(rnic_pkg::QP_RESET);
    // A RESET doorbell zeroes the producer index.
    db_row         = {db_reset ? 16'd0 : db_pi, db_base[63:7], db_log};
    unused_db_base = ^db_base[6:0];
  end

  // ------------------------------------------------------------------
  // In-flight reads, in issue order (= data order): {qp, n}.
  // ------------------------------------------------------------------
  logic          go, last, fifo_in_ready, fifo_out_valid;
  logic [FW-1:0] fifo_in, fifo_out;
  logic [QPW-1:0] hq;
  logic [CW-1:0]  hn;

  sync_fifo #(.WIDTH(FW), .DEPTH(INFL), .NEVER_FULL(1'b1)) u_infl (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (go),
    .in_ready  (fifo_in_ready),
    .in_data   (fifo_in),
    .out_valid (fifo_out_valid),
    .out_ready (last),
    .out_data  (fifo_out)
  );

  assign {hq, hn} = fifo_out;

  // ------------------------------------------------------------------
  // Stage 0: the pick, and the rows' reads.
  // ------------------------------------------------------------------
  logic [QPS-1:0] elig;
  logic           pick_valid, pick;
  logic [QPW-1:0] pick_qp;

  always_comb begin
    for (int q = 0; q < QPS; q++) begin
      elig[q] = live_q[q] && pend_q[q] && !busy_q[q]
                && cnt_q[CW*q +: CW] != CW'(SLOTS)
                && !(s1_valid_q && s1_qp_q == QPW'(q))
                && !(db_valid && db_qp == QPW'(q));
    end
  end

  rr_pick #(
    .N (QPS)
  ) u_rr (
    .clk        (clk),
    .rst        (rst),
    .req        (elig),
    .adv        (go),
    .last_idx   (s1_qp_q),
    .pick_valid (pick_valid),
    .pick_idx   (pick_qp)
  );

  // ------------------------------------------------------------------
  // Stage 1: the selected QP's read.
  // ------------------------------------------------------------------
  logic [15:0]   s_pi, s_fidx, off, diff;
  logic [56:0]   s_base;
  logic [4:0]    s_log, lg;
  logic [CW-1:0] s_cnt;
  logic [16:0]   size, left, free, nmin;

  always_comb begin
    {s_pi, s_base, s_log} = db_rd_q;
    s_fidx = fidx_rd_q;
    s_cnt  = cnt_q[CW*s1_qp_q +: CW];
    // Index bits above 16 do not exist: a log of 16 or more is the whole
    // 16-bit index space.
    lg     = (s_log > 5'd16) ? 5'd16 : s_log;
    size   = 17'd1 << lg;
    off    = s_fidx & 16'(size - 17'd1);
    left   = size - {1'b0, off};
    diff   = s_pi - s_fidx;
    free   = 17'(SLOTS) - 17'(s_cnt);
    nmin   = {1'b0, diff};
    if (free < nmin) nmin = free;
    if (17'(BATCH) < nmin) nmin = 17'(BATCH);
    if (left < nmin) nmin = left;
    // The pick made sure the request register is free and the FIFO has
    // room; a RESET doorbell takes the fetch index table's write port.
    go      = s1_valid_q && diff != 16'd0 && !db_reset;
    fifo_in = {s1_qp_q, CW'(nmin)};
  end

  // ------------------------------------------------------------------
  // Returning beats, reads and pops of the head.
  // ------------------------------------------------------------------
  logic          beat, half, fail, disc, ok, err, pop;
  logic [SW-1:0] h_tl;
  logic [AW-1:0] waddr, raddr;

  always_comb begin
    beat  = rd_data_valid && rd_data_ready_q && fifo_out_valid;
    half  = bcnt_q[0];
    last  = beat && rd_data_last;
    fail  = bad_q || rd_data_status != 3'd0;
    disc  = drop_q[hq] || (db_reset && db_qp == hq);
    ok    = last && !fail && !disc;
    err   = last && fail && !disc;
    // WQE k of the read goes past the QP's fetched WQEs (slot head + count).
    h_tl  = hd_q[SW*hq +: SW] + SW'(cnt_q[CW*hq +: CW]);
    waddr = {hq, h_tl + SW'(bcnt_q >> 1)};
    bcnt_d = last ? '0 : (beat ? bcnt_q + BW'(1) : bcnt_q);
    bad_d  = last ? 1'b0 : (bad_q || (beat && rd_data_status != 3'd0));
    raddr = {rqe_rd_qp, hd_q[SW*rqe_rd_qp +: SW]};
    pop   = rqe_pop_valid && cnt_q[CW*rqe_pop_qp +: CW] != '0;
  end

  // ------------------------------------------------------------------
  // Next state of the per-QP flops.
  // ------------------------------------------------------------------
  always_comb begin
    live_d = live_q;
    pend_d = pend_q;
    busy_d = busy_q;
    drop_d = drop_q;
    hd_d   = hd_q;
    cnt_d  = cnt_q;
    // Stage 1: the read, or nothing to fetch.
    if (go) begin
      busy_d[s1_qp_q] = 1'b1;
      if (nmin == {1'b0, diff}) pend_d[s1_qp_q] = 1'b0;
    end else if (s1_valid_q && diff == 16'd0) begin
      pend_d[s1_qp_q] = 1'b0;
    end
    // A read ends.
    if (last) begin
      busy_d[hq] = 1'b0;
      drop_d[hq] = 1'b0;
    end
    if (ok) cnt_d[CW*hq +: CW] = cnt_d[CW*hq +: CW] + hn;
    if (pop) begin
      hd_d[SW*rqe_pop_qp +: SW]  = hd_q[SW*rqe_pop_qp +: SW] + SW'(1);
      cnt_d[CW*rqe_pop_qp +: CW] = cnt_d[CW*rqe_pop_qp +: CW] - CW'(1);
    end
    // The doorbell last: it wins over everything above for its QP.
    if (db_valid) begin
      live_d[db_qp] = !db_reset;
      pend_d[db_qp] = !db_reset;
      if (db_reset) begin
        hd_d[SW*db_qp +: SW]  = '0;
        cnt_d[CW*db_qp +: CW] = '0;
        // A read in flight ends later, discarded.
        if (busy_q[db_qp] && !(last && hq == db_qp)) drop_d[db_qp] = 1'b1;
      end
    end
  end

  always_comb begin
    for (int q = 0; q < QPS; q++) rqe_avail_d[q] = cnt_d[CW*q +: CW] != '0;
  end

  // ------------------------------------------------------------------
  // Output registers' next values.
  // ------------------------------------------------------------------
  always_comb begin
    rd_req_valid_d = rd_req_valid_q && !rd_req_ready;
    rd_req_addr_d  = rd_req_addr_q;
    rd_req_len_d   = rd_req_len_q;
    if (go) begin
      rd_req_valid_d = 1'b1;
      rd_req_addr_d  = {s_base + 57'(off), 7'd0};
      rd_req_len_d   = 17'({nmin[9:0], 7'd0});
    end
    // Stage 0 only when stage 1 can issue at the next edge.
    pick        = pick_valid && !rd_req_valid_d && fifo_in_ready;
    err_valid_d = err;
    err_qp_d    = err ? hq : err_qp_q;
    ev_rqe_n_d  = ok ? 4'(hn) : 4'd0;
  end

  // ------------------------------------------------------------------
  // Per-QP tables: one write port, one registered read port each.
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (db_valid) db_mem_q[db_qp] <= db_row;
  end

  always_ff @(posedge clk) begin
    if (pick) db_rd_q <= db_mem_q[pick_qp];
  end

  // go and a RESET doorbell never meet (the doorbell cancels stage 1).
  always_ff @(posedge clk) begin
    if (go) begin
      fidx_mem_q[s1_qp_q] <= s_fidx + 16'(nmin);
    end else if (db_reset) begin
      fidx_mem_q[db_qp] <= 16'd0;
    end
  end

  always_ff @(posedge clk) begin
    if (pick) fidx_rd_q <= fidx_mem_q[pick_qp];
  end

  // ------------------------------------------------------------------
  // WQE RAM: one write port (a whole WQE at its second beat), one
  // registered read port (the head read).
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (beat && !half) lo_q <= rd_data;
  end

  always_ff @(posedge clk) begin
    if (beat && half) mem_q[waddr] <= {rd_data, lo_q};
  end

  always_ff @(posedge clk) begin
    if (rqe_rd_valid) rqe_data_q <= mem_q[raddr];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      live_q          <= '0;
      pend_q          <= '0;
      busy_q          <= '0;
      drop_q          <= '0;
      hd_q            <= '0;
      cnt_q           <= '0;
      rqe_avail_q     <= '0;
      s1_valid_q      <= 1'b0;
      s1_qp_q         <= '0;
      rd_req_valid_q  <= 1'b0;
      rd_req_addr_q   <= '0;
      rd_req_len_q    <= '0;
      rd_data_ready_q <= 1'b1;
      bcnt_q          <= '0;
      bad_q           <= 1'b0;
      rqe_present_q   <= 1'b0;
      err_valid_q     <= 1'b0;
      err_qp_q        <= '0;
      ev_rqe_n_q      <= '0;
    end else begin
      live_q          <= live_d;
      pend_q          <= pend_d;
      busy_q          <= busy_d;
      drop_q          <= drop_d;
      hd_q            <= hd_d;
      cnt_q           <= cnt_d;
      rqe_avail_q     <= rqe_avail_d;
      s1_valid_q      <= pick;
      s1_qp_q         <= pick ? pick_qp : s1_qp_q;
      rd_req_valid_q  <= rd_req_valid_d;
      rd_req_addr_q   <= rd_req_addr_d;
      rd_req_len_q    <= rd_req_len_d;
      rd_data_ready_q <= 1'b1;
      bcnt_q          <= bcnt_d;
      bad_q           <= bad_d;
      if (rqe_rd_valid) rqe_present_q <= cnt_q[CW*rqe_rd_qp +: CW] != '0;
      err_valid_q     <= err_valid_d;
      err_qp_q        <= err_qp_d;
      ev_rqe_n_q      <= ev_rqe_n_d;
    end
  end

  assign rd_req_valid  = rd_req_valid_q;
  assign rd_req_addr   = rd_req_addr_q;
  assign rd_req_len    = rd_req_len_q;
  assign rd_data_ready = rd_data_ready_q;
  assign rqe_avail     = rqe_avail_q;
  assign rqe_present   = rqe_present_q;
  assign rqe_data      = rqe_data_q;
  assign err_valid     = err_valid_q;
  assign err_qp        = err_qp_q;
  assign ev_rqe_n      = ev_rqe_n_q;

  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  // The responder pops only a head it has (rqe_avail).
  `RNIC_ASSERT_NEVER(a_pop_empty, clk, rst,
                     rqe_pop_valid && cnt_q[CW*rqe_pop_qp +: CW] == '0)
  // dma_rd returns data only for reads that were asked, 2 beats per WQE.
  `RNIC_ASSERT_NEVER(a_beat_unasked, clk, rst, rd_data_valid && !fifo_out_valid)
  `RNIC_ASSERT_NEVER(a_beat_count, clk, rst,
                     beat && (rd_data_last != (32'(bcnt_q) == 2 * 32'(hn) - 1)))
  // RQ rings are 128-byte aligned.
  `RNIC_ASSERT_NEVER(a_base_align, clk, rst, db_valid && db_base[6:0] != 7'd0)
endmodule
