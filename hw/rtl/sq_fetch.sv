// Send-queue WQE fetch. Model: model/src/sq_fetch.rs (same register names).
//
// Per QP it keeps what the last doorbell said (producer index, state, SQ
// base, log2 ring size), a fetch index, whether a read of it is in flight,
// and a ring of SLOTS WQE buffer entries (head, count of fetched WQEs). A QP
// is eligible when its state is not RESET, pi != fetch index, no read of it
// is in flight and a slot is free. Round robin among eligible QPs, one read
// of n = min(pi - fetch_idx, free slots, BATCH, entries before the ring end)
// WQEs; the slots are implicitly reserved (no second read of the QP can be
// issued before this one ends), so rd_data_ready is always high. This
// cycle's doorbell is looked through (pi_e/state_e/...) so that an idle QP's
// request is visible the cycle after its doorbell.
//
// Beats come back in request order, one WQE each; the in-flight FIFO says
// whose read is at the head. Beats are written into the WQE buffer as they
// arrive, at slot head + count + beat index (a pop does not move that sum);
// the WQEs become available on the last beat if its status is 0, else they
// are dropped and err_valid pulses. The WQE buffer is one RAM (one write
// port, one registered read port): a pop reads it into wqe_data, and a
// second RAM of the same shape holds each slot's SQ index (wqe_idx).
//
// Each QP's SQ ring (base, log2 size) is a RAM too (ring_mem: one write
// port, the doorbell; one asynchronous read port, the selected QP), since
// only the QP chosen to read needs it; the doorbell of this cycle is looked
// through at that read. The ring is not reset: a QP is eligible only once a
// doorbell since reset has set its state, and that doorbell wrote its ring.
// What every QP shows at once (producer and fetch index, state, busy,
// count) stays in flops.
//
// A rewind (rw_valid, rw_qp, rw_idx) sets the QP's fetch index to rw_idx and
// empties its buffer (count := 0). A read of the QP in flight then (the
// cycle's own last beat included) is stale: its beats are not written, its
// WQEs never counted, its error not reported; the QP stays busy until that
// read's last beat, as for any read. The QP is not eligible in the cycle of
// its rewind.
`include "rnic_assert.svh"

module sq_fetch #(
  parameter int QPS   = rnic_pkg::QPS,
  parameter int SLOTS = 4,
  parameter int BATCH = 4,
  parameter int INFL  = 4
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   db_valid,
  input  logic [$clog2(QPS)-1:0] db_qp,
  input  logic [15:0]            db_pi,
  input  logic [1:0]             db_state,
  input  logic [63:0]            db_sq_base,
  input  logic [4:0]             db_sq_log,
  output logic                   rd_req_valid,
  input  logic                   rd_req_ready,
  output logic [63:0]            rd_req_addr,
  output logic [16:0]            rd_req_len,
  input  logic                   rd_data_valid,
  output logic                   rd_data_ready,
  input  logic [511:0]           rd_data,
  input  logic                   rd_data_last,
  input  logic [2:0]             rd_data_status,
  output logic [QPS-1:0]         wqe_avail,
  input  logic                   wqe_pop_valid,
  input  logic [$clog2(QPS)-1:0] wqe_pop_qp,
  input  logic                   rw_valid,
  input  logic [$clog2(QPS)-1:0] rw_qp,
  input  logic [15:0]            rw_idx,
  output logic                   wqe_valid,
  output logic [$clog2(QPS)-1:0] wqe_qp,
  output logic [511:0]           wqe_data,
  output logic [15:0]            wqe_idx,
  output logic                   err_valid,
  output logic [$clog2(QPS)-1:0] err_qp,
  output logic [3:0]             ev_wqe_n
);
  localparam int QPW = $clog2(QPS);
  localparam int SW  = $clog2(SLOTS);
  localparam int CW  = SW + 1;          // a slot count, 0..SLOTS
  localparam int AW  = QPW + SW;        // WQE buffer address {qp, slot}

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("sq_fetch: QPS must be a power of two in 2..256");
  end
  if (SLOTS < 2 || SLOTS > 64 || (SLOTS & (SLOTS - 1)) != 0) begin : g_bad_slots
    $error("sq_fetch: SLOTS must be a power of two in 2..64");
  end
  if (BATCH < 1 || BATCH > 15) begin : g_bad_batch
    $error("sq_fetch: BATCH must be 1..15 (ev_wqe_n is 4 bits)");
  end
  if (INFL < 2 || (INFL & (INFL - 1)) != 0) begin : g_bad_infl
    $error("sq_fetch: INFL must be a power of two >= 2");
  end

  // ------------------------------------------------------------------
  // Registers. Per-QP fields are flattened vectors, entry q at [W*q +: W].
  // ------------------------------------------------------------------
  logic [QPS*16-1:0] pi_q, pi_d;
  logic [QPS*2-1:0]  state_q, state_d;
  logic [QPS*16-1:0] fidx_q, fidx_d;
  logic [QPS-1:0]    busy_q, busy_d;
  logic [QPS-1:0]    stale_q, stale_d;
  logic [QPS*CW-1:0] rn_q, rn_d;
  logic [QPS*SW-1:0] hd_q, hd_d;
  logic [QPS*CW-1:0] cnt_q, cnt_d;
  logic [QPS-1:0]    wqe_avail_q, wqe_avail_d;
  logic [QPW-1:0]    rr_q, rr_d;
  logic              rd_req_valid_q, rd_req_valid_d;
  logic [63:0]       rd_req_addr_q, rd_req_addr_d;
  logic [16:0]       rd_req_len_q, rd_req_len_d;
  logic              rd_data_ready_q;
  logic [SW-1:0]     bcnt_q, bcnt_d;
  logic              wqe_valid_q;
  logic [QPW-1:0]    wqe_qp_q, wqe_qp_d;
  logic [511:0]      wqe_data_q;
  logic [15:0]       wqe_idx_q;
  logic              err_valid_q, err_valid_d;
  logic [QPW-1:0]    err_qp_q, err_qp_d;
  logic [3:0]        ev_wqe_n_q, ev_wqe_n_d;
  logic [511:0]      mem_q [QPS*SLOTS];
  logic [15:0]       idx_q [QPS*SLOTS];
  logic [68:0]       ring_mem [QPS];  // {log2 size, base}

  // ------------------------------------------------------------------
  // In-flight reads, in issue order (= data order): their QP.
  // ------------------------------------------------------------------
  logic           issue, last, fifo_in_ready, fifo_out_valid;
  logic [QPW-1:0] sel, hq;

  sync_fifo #(.WIDTH(QPW), .DEPTH(INFL)) u_infl (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (issue),
    .in_ready  (fifo_in_ready),
    .in_data   (sel),
    .out_valid (fifo_out_valid),
    .out_ready (last),
    .out_data  (hq)
  );

  // ------------------------------------------------------------------
  // The QP table as this cycle's doorbell leaves it, and eligibility.
  // ------------------------------------------------------------------
  logic [QPS*16-1:0] pi_e;
  logic [QPS*2-1:0]  state_e;
  logic [QPS-1:0]    elig;
  logic              db_take;

  always_comb begin
    pi_e    = pi_q;
    state_e = state_q;
    // A doorbell that repeats the known producer index does nothing.
    db_take = db_valid && db_pi != pi_q[16*db_qp +: 16];
    for (int q = 0; q < QPS; q++) begin
      if (db_take && db_qp == QPW'(q)) begin
        pi_e[16*q +: 16]  = db_pi;
        state_e[2*q +: 2] = db_state;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (db_take) ring_mem[db_qp] <= {db_sq_log, db_sq_base};
  end

  always_comb begin
    for (int q = 0; q < QPS; q++) begin
      elig[q] = state_e[2*q +: 2] != 2'd0 && pi_e[16*q +: 16] != fidx_q[16*q +: 16]
                && !busy_q[q] && cnt_q[CW*q +: CW] != CW'(SLOTS)
                && !(rw_valid && rw_qp == QPW'(q));
    end
  end

  // Round robin: the first eligible QP at or after rr_q.
  logic found;

  always_comb begin
    found = 1'b0;
    sel   = rr_q;
    for (int k = 0; k < QPS; k++) begin
      if (!found && elig[rr_q + QPW'(k)]) begin
        found = 1'b1;
        sel   = rr_q + QPW'(k);
      end
    end
  end

  // ------------------------------------------------------------------
  // The selected QP's read.
  // ------------------------------------------------------------------
  logic [15:0]   s_pi, s_fidx, off, diff;
  logic [63:0]   s_base;
  logic [4:0]    s_log, lg;
  logic [68:0]   s_ring;
  logic [CW-1:0] s_cnt;
  logic [16:0]   size, left, free, nmin;

  always_comb begin
    s_pi   = pi_e[16*sel +: 16];
    s_fidx = fidx_q[16*sel +: 16];
    s_ring = (db_take && db_qp == sel) ? {db_sq_log, db_sq_base} : ring_mem[sel];
    s_base = s_ring[63:0];
    s_log  = s_ring[68:64];
    s_cnt  = cnt_q[CW*sel +: CW];
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
    issue  = found && (!rd_req_valid_q || rd_req_ready) && fifo_in_ready;
  end

  // ------------------------------------------------------------------
  // Returning beats and pops.
  // ------------------------------------------------------------------
  logic          beat, last_f, ok, stale, keep;
  logic [SW-1:0] h_hd, p_hd;
  logic [CW-1:0] p_cnt, n_done;
  logic [AW-1:0] waddr, raddr;
  logic [15:0]   widx;
  logic          pop;

  always_comb begin
    beat   = rd_data_valid && rd_data_ready_q && fifo_out_valid;
    last   = beat && rd_data_last;
    // The head read is stale when its QP was rewound while it was in
    // flight, or is rewound now.
    stale  = stale_q[hq] || (rw_valid && rw_qp == hq);
    keep   = beat && !stale;
    last_f = last && !stale;
    ok     = last_f && rd_data_status == 3'd0;
    h_hd   = hd_q[SW*hq +: SW];
    // The beat's SQ index: the read started at fidx - n (the fetch index
    // does not move while a non-stale read of the QP is in flight).
    widx   = fidx_q[16*hq +: 16] - 16'(rn_q[CW*hq +: CW]) + 16'(bcnt_q);
    // Slot of this beat: past the QP's fetched WQEs (count mod SLOTS).
    waddr  = {hq, h_hd + SW'(cnt_q[CW*hq +: CW]) + bcnt_q};
    n_done = CW'(bcnt_q) + CW'(1);
    bcnt_d = last ? '0 : (beat ? bcnt_q + SW'(1) : bcnt_q);
    p_hd   = hd_q[SW*wqe_pop_qp +: SW];
    p_cnt  = cnt_q[CW*wqe_pop_qp +: CW];
    pop    = wqe_pop_valid && p_cnt != '0;
    raddr  = {wqe_pop_qp, p_hd};
  end

  // ------------------------------------------------------------------
  // Next state of the QP table.
  // ------------------------------------------------------------------
  always_comb begin
    pi_d    = pi_e;
    state_d = state_e;
    fidx_d  = fidx_q;
    busy_d  = busy_q;
    stale_d = stale_q;
    rn_d    = rn_q;
    hd_d    = hd_q;
    for (int q = 0; q < QPS; q++) begin
      cnt_d[CW*q +: CW] = cnt_q[CW*q +: CW]
                          + ((ok && hq == QPW'(q)) ? n_done : CW'(0))
                          - ((pop && wqe_pop_qp == QPW'(q)) ? CW'(1) : CW'(0));
      if (pop && wqe_pop_qp == QPW'(q)) hd_d[SW*q +: SW] = hd_q[SW*q +: SW] + SW'(1);
      if (rw_valid && rw_qp == QPW'(q)) begin
        // Not eligible this cycle, so no issue of q below.
        cnt_d[CW*q +: CW]  = '0;
        fidx_d[16*q +: 16] = rw_idx;
        stale_d[q]         = busy_q[q];
      end
      if (last && hq == QPW'(q)) begin
        busy_d[q]  = 1'b0;
        stale_d[q] = 1'b0;
      end
      if (issue && sel == QPW'(q)) begin
        busy_d[q]          = 1'b1;
        rn_d[CW*q +: CW]   = CW'(nmin);
        fidx_d[16*q +: 16] = fidx_q[16*q +: 16] + 16'(nmin);
      end
    end
  end

  always_comb begin
    for (int q = 0; q < QPS; q++) wqe_avail_d[q] = cnt_d[CW*q +: CW] != '0;
  end

  // ------------------------------------------------------------------
  // Output registers' next values.
  // ------------------------------------------------------------------
  always_comb begin
    rr_d           = rr_q;
    rd_req_valid_d = rd_req_valid_q && !rd_req_ready;
    rd_req_addr_d  = rd_req_addr_q;
    rd_req_len_d   = rd_req_len_q;
    if (issue) begin
      rr_d           = sel + QPW'(1);
      rd_req_valid_d = 1'b1;
      rd_req_addr_d  = s_base + {42'd0, off, 6'd0};
      rd_req_len_d   = 17'({nmin, 6'd0});
    end
    wqe_qp_d    = pop ? wqe_pop_qp : wqe_qp_q;
    err_valid_d = last_f && rd_data_status != 3'd0;
    err_qp_d    = last_f ? hq : err_qp_q;
    ev_wqe_n_d  = ok ? 4'(n_done) : 4'd0;
  end

  // ------------------------------------------------------------------
  // WQE buffer: one write port, one registered read port.
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (keep) mem_q[waddr] <= rd_data;
  end

  always_ff @(posedge clk) begin
    if (pop) wqe_data_q <= mem_q[raddr];
  end

  always_ff @(posedge clk) begin
    if (keep) idx_q[waddr] <= widx;
  end

  always_ff @(posedge clk) begin
    if (pop) wqe_idx_q <= idx_q[raddr];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      pi_q            <= '0;
      state_q         <= '0;
      fidx_q          <= '0;
      busy_q          <= '0;
      stale_q         <= '0;
      rn_q            <= '0;
      hd_q            <= '0;
      cnt_q           <= '0;
      wqe_avail_q     <= '0;
      rr_q            <= '0;
      rd_req_valid_q  <= 1'b0;
      rd_req_addr_q   <= '0;
      rd_req_len_q    <= '0;
      rd_data_ready_q <= 1'b1;
      bcnt_q          <= '0;
      wqe_valid_q     <= 1'b0;
      wqe_qp_q        <= '0;
      err_valid_q     <= 1'b0;
      err_qp_q        <= '0;
      ev_wqe_n_q      <= '0;
    end else begin
      pi_q            <= pi_d;
      state_q         <= state_d;
      fidx_q          <= fidx_d;
      busy_q          <= busy_d;
      stale_q         <= stale_d;
      rn_q            <= rn_d;
      hd_q            <= hd_d;
      cnt_q           <= cnt_d;
      wqe_avail_q     <= wqe_avail_d;
      rr_q            <= rr_d;
      rd_req_valid_q  <= rd_req_valid_d;
      rd_req_addr_q   <= rd_req_addr_d;
      rd_req_len_q    <= rd_req_len_d;
      rd_data_ready_q <= 1'b1;
      bcnt_q          <= bcnt_d;
      wqe_valid_q     <= pop;
      wqe_qp_q        <= wqe_qp_d;
      err_valid_q     <= err_valid_d;
      err_qp_q        <= err_qp_d;
      ev_wqe_n_q      <= ev_wqe_n_d;
    end
  end

  assign rd_req_valid  = rd_req_valid_q;
  assign rd_req_addr   = rd_req_addr_q;
  assign rd_req_len    = rd_req_len_q;
  assign rd_data_ready = rd_data_ready_q;
  assign wqe_avail     = wqe_avail_q;
  assign wqe_valid     = wqe_valid_q;
  assign wqe_qp        = wqe_qp_q;
  assign wqe_data      = wqe_data_q;
  assign wqe_idx       = wqe_idx_q;
  assign err_valid     = err_valid_q;
  assign err_qp        = err_qp_q;
  assign ev_wqe_n      = ev_wqe_n_q;

  // ------------------------------------------------------------------
  // Input contract: never a pop of the QP being rewound in that cycle.
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  `RNIC_ASSERT_NEVER(a_pop_rewind, clk, rst, rw_valid && wqe_pop_valid && wqe_pop_qp == rw_qp)
endmodule
