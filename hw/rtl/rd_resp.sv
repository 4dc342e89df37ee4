// READ responder's job store: per QP a ring of outstanding READ jobs (the
// responder's READ tokens), read and consumed at the head by tx_engine.
// Model: model/src/rd_resp.rs (same register names). Contract:
// docs/responder.md, "rd_resp and READ responses in tx_engine".
//
// Jobs come as the responder's 192-bit READ token (resp_pkg layout, kind
// bit 0 = 1), so rnic_top connects rx_wr's tok_* straight here when the
// token is a READ. job_ready is high from the cycle after reset on: a job
// for a QP that holds max(1, max_rd) jobs at the start of the cycle
// (max_rd: the QP's max_dest_rd_atomic, token bits 158:156, taken from the
// token offered; no per-QP copy) is refused and counted (ev_job_full),
// never back-pressured, because a stall here would stop rx_wr's token
// output and with it the whole receive path of every QP until this QP's
// responses went out, which may wait on that receive path
// (docs/responder.md). The ring's own bound (DEPTH jobs) is checked too,
// though it cannot be reached: max_rd <= 7 < 8 <= DEPTH.
//
// Storage: one RAM of QPS x DEPTH rows of the token's fields 155:9 (PSN,
// bus address, length, MSN, MTU code), one write port (a job taken), one
// registered read port (the head read). In flops, bitmap-sized: per QP the
// head slot (SW bits) and the job count (CW bits), and job_avail.
//
// Head read and pop, as rq_fetch: a read at n reports the QP's state at the
// start of n (job_present = the count was nonzero, job_* = the head row) at
// n+1, held until the next read; a pop or a job taken in the same cycle acts
// at the edge. A job taken at n shows in job_avail at n+1, a pop at n
// clears it (if it was the last job) at n+1.
`include "rnic_assert.svh"

module rd_resp #(
  parameter int QPS   = rnic_pkg::QPS,
  parameter int DEPTH = 8
) (
  input  logic                      clk,
  input  logic                      rst,
  input  logic                      job_valid,
  output logic                      job_ready,
  input  logic [resp_pkg::TOK_W-1:0] job_tok,
  output logic [QPS-1:0]            job_avail,
  input  logic                      job_rd_valid,
  input  logic [$clog2(QPS)-1:0]    job_rd_qp,
  output logic                      job_present,
  output logic [23:0]               job_psn,
  output logic [63:0]               job_addr,
  output logic [31:0]               job_len,
  output logic [23:0]               job_msn,
  output logic [2:0]                job_mtu,
  input  logic                      job_pop_valid,
  input  logic [$clog2(QPS)-1:0]    job_pop_qp,
  output logic                      ev_job,
  output logic                      ev_job_full
);
  localparam int QPW = $clog2(QPS);
  localparam int SW  = $clog2(DEPTH);
  localparam int CW  = SW + 1;          // a job count, 0..DEPTH
  localparam int AW  = QPW + SW;        // RAM address {qp, slot}
  localparam int RW  = 147;             // token bits 155:9

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("rd_resp: QPS must be a power of two in 2..256");
  end
  // Above the 7 READs max_dest_rd_atomic (3 bits) allows at most, so the
  // per-QP limit (max(1, max_rd) <= 7) always binds before a full ring.
  if (DEPTH < 8 || DEPTH > 256 || (DEPTH & (DEPTH - 1)) != 0) begin : g_bad_depth
    $error("rd_resp: DEPTH must be a power of two in 8..256");
  end

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic              job_ready_q;
  logic [QPS*SW-1:0] hd_q, hd_d;
  logic [QPS*CW-1:0] cnt_q, cnt_d;
  logic [QPS-1:0]    job_avail_q, job_avail_d;
  logic [RW-1:0]     mem_q [QPS*DEPTH];
  logic              job_present_q;
  logic [RW-1:0]     job_row_q;
  logic              ev_job_q, ev_job_full_q;

  // ------------------------------------------------------------------
  // A job offered, a pop
  // ------------------------------------------------------------------
  logic           take, full, push, refuse, pop;
  logic [QPW-1:0] tq;
  logic [2:0]     lim;                  // max(1, the token's max_rd)
  logic [SW-1:0]  tail;
  logic [AW-1:0]  waddr, raddr;
  logic           unused_tok;

  always_comb begin
    tq     = job_tok[QPW:1];
    take   = job_valid && job_ready_q;
    lim    = job_tok[158:156] == 3'd0 ? 3'd1 : job_tok[158:156];
    // The QP's limit, or a full ring (DEPTH > 7 >= lim: never reached
    // first, kept as the ring's own guard).
    full   = cnt_q[CW*tq +: CW] >= CW'(lim) || cnt_q[CW*tq +: CW] == CW'(DEPTH);
    push   = take && !full;
    refuse = take && full;
    tail   = hd_q[SW*tq +: SW] + cnt_q[CW*tq +: SW];
    waddr  = {tq, tail};
    raddr  = {job_rd_qp, hd_q[SW*job_rd_qp +: SW]};
    pop    = job_pop_valid && cnt_q[CW*job_pop_qp +: CW] != '0;
    // The kind bit, the QP bits above QPW (asserted), max_rd (used only
    // here, at the offer) and the bits above it (zero) are not stored.
    unused_tok = ^{job_tok[resp_pkg::TOK_W-1:159], job_tok[8:0]};
  end

  always_comb begin
    hd_d  = hd_q;
    cnt_d = cnt_q;
    if (push) cnt_d[CW*tq +: CW] = cnt_d[CW*tq +: CW] + CW'(1);
    if (pop) begin
      hd_d[SW*job_pop_qp +: SW]  = hd_q[SW*job_pop_qp +: SW] + SW'(1);
      cnt_d[CW*job_pop_qp +: CW] = cnt_d[CW*job_pop_qp +: CW] - CW'(1);
    end
    for (int q = 0; q < QPS; q++) job_avail_d[q] = cnt_d[CW*q +: CW] != '0;
  end

  // ------------------------------------------------------------------
  // Job RAM: one write port (a job taken), one registered read port.
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (push) mem_q[waddr] <= job_tok[155:9];
  end

  always_ff @(posedge clk) begin
    if (job_rd_valid) job_row_q <= mem_q[raddr];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      job_ready_q   <= 1'b0;
      hd_q          <= '0;
      cnt_q         <= '0;
      job_avail_q   <= '0;
      job_present_q <= 1'b0;
      ev_job_q      <= 1'b0;
      ev_job_full_q <= 1'b0;
    end else begin
      job_ready_q   <= 1'b1;
      hd_q          <= hd_d;
      cnt_q         <= cnt_d;
      job_avail_q   <= job_avail_d;
      if (job_rd_valid) job_present_q <= cnt_q[CW*job_rd_qp +: CW] != '0;
      ev_job_q      <= push;
      ev_job_full_q <= refuse;
    end
  end

  assign job_ready   = job_ready_q;
  assign job_avail   = job_avail_q;
  assign job_present = job_present_q;
  assign job_psn     = job_row_q[23:0];
  assign job_addr    = job_row_q[87:24];
  assign job_len     = job_row_q[119:88];
  assign job_msn     = job_row_q[143:120];
  assign job_mtu     = job_row_q[146:144];
  assign ev_job      = ev_job_q;
  assign ev_job_full = ev_job_full_q;

  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  // Only READ tokens (kind 1) are jobs.
  `RNIC_ASSERT_NEVER(a_job_kind, clk, rst, job_valid && job_tok[0] != resp_pkg::TOK_READ)
  // The token's QP is a QP of this NIC (the responder bounded it).
  `RNIC_ASSERT_NEVER(a_job_qp, clk, rst,
                     job_valid && {1'b0, job_tok[8:1]} >= 9'(QPS))
  // tx_engine pops only a head it has (job_avail).
  `RNIC_ASSERT_NEVER(a_job_pop_empty, clk, rst,
                     job_pop_valid && cnt_q[CW*job_pop_qp +: CW] == '0)
endmodule
