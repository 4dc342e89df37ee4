`include "rnic_assert.svh"

// READ response receiver (the requester's side of an RDMA READ): per QP a
// ring of the READs tx_engine committed, and per READ RESPONSE header from
// rx_buf's header queue one decision against the QP's oldest READ, then
// commands for rx_wr exactly like the responder's (frame bytes to a bus
// address; one empty command for a dropped frame) and, after a READ's last
// response, a "READ done" token. Model: model/src/rd_sink.rs (same register
// names). Contract: docs/rd_sink.md.
//
// Storage: the outstanding READs in one RAM of QPS x DEPTH rows (first PSN,
// length, bus address, MTU code, the QP's max_rd_atomic; one write port, the
// push; one registered
// read port, at the header's take); the progress of each QP's head READ (k,
// the responses accepted) in a RAM of QPS rows (one write port, the
// decision; registered read at the take). In flops, bitmap-sized: per QP
// the ring head (SW bits), the count (CW bits), kz (k reads as zero:
// after reset, a clear, or the READ's last response) and rr_block (the QP
// has as many READs outstanding as its max_rd_atomic allows, or DEPTH) and
// gp (a gap of the QP was reported: the episode is open).
//
// Per header (FSM): S_IDLE takes it and issues both reads; S_DEC decides
// (no READ, PSN, opcode order, AETH, length; docs/rd_sink.md) and commits
// (k written, the READ popped after its last response); S_CMD gives the one
// command; S_TOK the token when the READ is done. A response ahead of the
// head READ's next PSN opens a gap episode of its QP and pulses gap_* once
// (the first missing PSN); an accepted response or a clear closes it. Every
// accepted response but a READ's last pulses prog_* (its PSN: an implicit
// ACK for ack_tracker, so a timeout asks for the rest of a READ only).
module rd_sink #(
  parameter int QPS   = rnic_pkg::QPS,
  parameter int DEPTH = 8
) (
  input  logic                           clk,
  input  logic                           rst,
  input  logic                           rr_valid,
  input  logic [$clog2(QPS)-1:0]         rr_qp,
  input  logic [23:0]                    rr_psn,
  input  logic [31:0]                    rr_len,
  input  logic [63:0]                    rr_addr,
  input  logic [2:0]                     rr_mtu,
  input  logic [2:0]                     rr_max,
  output logic [QPS-1:0]                 rr_block,
  input  logic                           clr_valid,
  input  logic [$clog2(QPS)-1:0]         clr_qp,
  input  logic                           hd_valid,
  output logic                           hd_ready,
  input  logic [rx_meta_pkg::META_W-1:0] hd_meta,
  output logic                           wc_valid,
  input  logic                           wc_ready,
  output logic                           wc_tok,
  output logic [12:0]                    wc_off,
  output logic [12:0]                    wc_len,
  output logic [63:0]                    wc_addr,
  output logic                           wc_last,
  output logic [resp_pkg::TOK_W-1:0]     wc_tok_data,
  output logic                           ev_exec,
  output logic                           ev_done,
  output logic                           ev_unexp,
  output logic                           ev_dup,
  output logic                           ev_seq,
  output logic                           ev_bad,
  output logic                           ev_rr_full,
  output logic                           gap_valid,
  output logic [$clog2(QPS)-1:0]         gap_qp,
  output logic [23:0]                    gap_psn,
  output logic                           prog_valid,
  output logic [$clog2(QPS)-1:0]         prog_qp,
  output logic [23:0]                    prog_psn
);
  `RNIC_ASSERT_IMPORT

  localparam int QPW = $clog2(QPS);
  localparam int SW  = $clog2(DEPTH);
  localparam int CW  = SW + 1;          // a ring count, 0..DEPTH
  localparam int AW  = QPW + SW;        // ring RAM address {qp, slot}
  localparam int KW  = 24;              // k < n <= 2^24 (2^32 - 1 bytes at 256)
  // A ring row: {max 125:123, mtu 122:120, addr 119:56, len 55:24, psn 23:0}.
  localparam int RW  = 126;
  // The metadata layout (qualified: Yosys 0.23 does not parse `import`).
  localparam int META_W      = rx_meta_pkg::META_W;
  localparam int QP_LO       = rx_meta_pkg::QP_LO;
  localparam int QP_W        = rx_meta_pkg::QP_W;
  localparam int OPCODE_LO   = rx_meta_pkg::OPCODE_LO;
  localparam int OPCODE_W    = rx_meta_pkg::OPCODE_W;
  localparam int PSN_LO      = rx_meta_pkg::PSN_LO;
  localparam int PSN_W       = rx_meta_pkg::PSN_W;
  localparam int HAS_AETH_LO = rx_meta_pkg::HAS_AETH_LO;
  localparam int HDR_LEN_LO  = rx_meta_pkg::HDR_LEN_LO;
  localparam int HDR_LEN_W   = rx_meta_pkg::HDR_LEN_W;
  localparam int PAY_LEN_LO  = rx_meta_pkg::PAY_LEN_LO;
  localparam int PAY_LEN_W   = rx_meta_pkg::PAY_LEN_W;
  localparam int AETH_LO     = rx_meta_pkg::AETH_LO;
  localparam int AETH_W      = rx_meta_pkg::AETH_W;
  localparam int TOK_W       = resp_pkg::TOK_W;

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("rd_sink: QPS must be a power of two in 2..256");
  end
  if (DEPTH < 4 || DEPTH > 256 || (DEPTH & (DEPTH - 1)) != 0) begin : g_bad_depth
    $error("rd_sink: DEPTH must be a power of two in 4..256");
  end

  // READ RESPONSE opcodes (docs/protocol.md section 1; rnic_pkg names the
  // first and the last).
  localparam logic [7:0] OP_FIRST  = rnic_pkg::BTH_RC_RD_RESP_FIRST;
  localparam logic [7:0] OP_MIDDLE = rnic_pkg::BTH_RC_RD_RESP_FIRST + 8'd1;
  localparam logic [7:0] OP_LAST   = rnic_pkg::BTH_RC_RD_RESP_FIRST + 8'd2;
  localparam logic [7:0] OP_ONLY   = rnic_pkg::BTH_RC_RD_RESP_ONLY;

  // Counter pulses: bits of ev_q.
  localparam int EV_EXEC = 0, EV_DONE = 1, EV_UNEXP = 2, EV_DUP = 3, EV_SEQ = 4, EV_BAD = 5;

  typedef enum logic [1:0] {S_IDLE, S_DEC, S_CMD, S_TOK} state_e;

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  state_e            state_q, state_d;
  logic              hd_ready_q, hd_ready_d;
  // The header being worked on: the fields rd_sink reads.
  logic [QPW-1:0]    m_qp_q;
  logic [7:0]        m_opc_q;
  logic [23:0]       m_psn_q;
  logic              m_aeth_q;
  logic [2:0]        m_syn_q;
  logic [6:0]        m_hdr_q;
  logic [12:0]       m_pay_q;
  // At the take: the QP had a READ (QP < QPS, count != 0, no clear), its
  // head row, k as stored and kz.
  logic              has_q;
  logic [RW-1:0]     row_q;
  logic [KW-1:0]     kr_q;
  logic              kzr_q;
  logic [RW-1:0]     mem_q [QPS*DEPTH];
  logic [KW-1:0]     kmem_q [QPS];
  logic [QPS*SW-1:0] hd_q, hd_d;
  logic [QPS*CW-1:0] cnt_q, cnt_d;
  logic [QPS-1:0]    kz_q, kz_d;
  logic [QPS-1:0]    blk_q, blk_d;
  logic [QPS-1:0]    gp_q, gp_d;
  // The decision: the command's length and address, a token due.
  logic [12:0]       c_len_q, c_len_d;
  logic [63:0]       c_addr_q, c_addr_d;
  logic              c_done_q, c_done_d;
  logic              wc_valid_q, wc_valid_d;
  logic              wc_tok_q, wc_tok_d;
  logic [12:0]       wc_off_q, wc_off_d;
  logic [12:0]       wc_len_q, wc_len_d;
  logic [63:0]       wc_addr_q, wc_addr_d;
  logic              wc_last_q, wc_last_d;
  logic [TOK_W-1:0]  wc_tok_data_q, wc_tok_data_d;
  logic [5:0]        ev_q, ev_d;
  logic              ev_rr_full_q;
  logic              gap_valid_q, gap_valid_d;
  logic [QPW-1:0]    gap_qp_q, gap_qp_d;
  logic [23:0]       gap_psn_q, gap_psn_d;
  logic              prog_valid_q, prog_valid_d;
  logic [QPW-1:0]    prog_qp_q, prog_qp_d;
  logic [23:0]       prog_psn_q, prog_psn_d;

  // ------------------------------------------------------------------
  // A header taken, a READ pushed, a clear
  // ------------------------------------------------------------------
  logic           take, hd_in_range, clr_rr, full, push, refuse;
  logic [QPW-1:0] hd_qp;
  logic [CW-1:0]  cnt_rr;
  logic [SW-1:0]  tail;
  logic [AW-1:0]  waddr, raddr;
  logic           unused_meta;

  always_comb begin
    take        = hd_valid && hd_ready_q;
    hd_qp       = hd_meta[QP_LO +: QPW];
    hd_in_range = {1'b0, hd_meta[QP_LO +: QP_W]} < 9'(QPS);
    // A clear of the pushed QP in the same cycle acts first.
    clr_rr      = clr_valid && clr_qp == rr_qp;
    cnt_rr      = clr_rr ? '0 : cnt_q[CW*rr_qp +: CW];
    full        = cnt_rr == CW'(DEPTH);
    push        = rr_valid && !full;
    refuse      = rr_valid && full;
    tail        = hd_q[SW*rr_qp +: SW] + cnt_rr[SW-1:0];
    waddr       = {rr_qp, tail};
    raddr       = {hd_qp, hd_q[SW*hd_qp +: SW]};
    // AckReq, RETH, ImmDt flags, RETH, ImmDt and the AETH's credit and MSN
    // are not looked at.
    unused_meta = ^{hd_meta[AETH_LO +: AETH_W - 3], hd_meta[HAS_AETH_LO - 1 -: 3],
                    hd_meta[META_W - AETH_W - 1 : PAY_LEN_LO + PAY_LEN_W]};
  end

  // ------------------------------------------------------------------
  // Decision (S_DEC): the head READ H = (psn0, len, addr, mtu), k
  // ------------------------------------------------------------------
  logic [23:0] r_psn;
  logic [31:0] r_len;
  logic [63:0] r_addr;
  logic [2:0]  r_mtu;
  logic [2:0]  r_max;
  logic [3:0]  mtul;
  logic [12:0] mtu;
  logic [KW-1:0] k;
  logic [36:0] done_b, rem;
  logic        last, first, ok, opc_ok, aeth_ok, len_ok;
  logic [23:0] exp_psn, delta;
  logic [7:0]  exp_opc;
  logic        d_unexp, d_dup, d_seq, d_bad, d_exec;

  always_comb begin
    r_psn  = row_q[23:0];
    r_len  = row_q[55:24];
    r_addr = row_q[119:56];
    r_mtu  = row_q[122:120];
    r_max  = row_q[125:123];
    unique case (r_mtu)
      3'd0, 3'd1: mtul = 4'd8;
      3'd2:       mtul = 4'd9;
      3'd3:       mtul = 4'd10;
      3'd4:       mtul = 4'd11;
      default:    mtul = 4'd12;
    endcase
    mtu     = 13'd1 << mtul;
    k       = kzr_q ? '0 : kr_q;
    // Bytes of H already placed, and what is left (k < n: never negative).
    done_b  = {13'd0, k} << mtul;
    rem     = {5'd0, r_len} - done_b;
    last    = rem <= {24'd0, mtu};
    first   = k == '0;
    if (last) exp_opc = first ? OP_ONLY : OP_LAST;
    else      exp_opc = first ? OP_FIRST : OP_MIDDLE;
    // At k > 0 the responses of a re-request of the rest of H may come: a
    // FIRST where a MIDDLE is due, an ONLY where a LAST is.
    opc_ok  = m_opc_q == exp_opc ||
              (!first && !last && m_opc_q == OP_FIRST) ||
              (!first && last && m_opc_q == OP_ONLY);
    // FIRST, LAST, ONLY carry an AETH of the ACK class; MIDDLE none (by the
    // opcode received).
    aeth_ok = (m_opc_q == OP_MIDDLE) ? !m_aeth_q : (m_aeth_q && m_syn_q == 3'b000);
    len_ok  = last ? ({24'd0, m_pay_q} == rem) : (m_pay_q == mtu);
    exp_psn = r_psn + k;
    delta   = m_psn_q - exp_psn;
    // A clear of the QP at the take (in has_q) or now: no READ.
    ok      = has_q && !(clr_valid && clr_qp == m_qp_q);
    d_unexp = !ok;
    d_dup   = ok && delta != '0 && delta[23];
    d_seq   = ok && delta != '0 && !delta[23];
    d_bad   = ok && delta == '0 && (!opc_ok || !aeth_ok || !len_ok);
    d_exec  = ok && delta == '0 && !d_bad;
  end

  // A QP is blocked at max(1, max_rd_atomic) READs outstanding, or at a
  // full ring.
  function automatic logic at_bound(input logic [CW-1:0] cnt, input logic [2:0] max);
    logic [CW:0] lim;
    lim      = (max == 3'd0) ? (CW+1)'(1) : (CW+1)'(max);
    at_bound = {1'b0, cnt} >= lim || cnt == CW'(DEPTH);
  endfunction

  // Commit at S_DEC: k + 1 written, or (last response) the READ popped and
  // kz set. rr_block follows the QP's count after the edge, against the
  // max_rd_atomic of the event: a push's own, a pop's READ's.
  logic dec, pop, kinc;

  always_comb begin
    dec  = state_q == S_DEC;
    pop  = dec && d_exec && last;
    kinc = dec && d_exec && !last;
    hd_d  = hd_q;
    cnt_d = cnt_q;
    kz_d  = kz_q;
    blk_d = blk_q;
    gp_d  = gp_q;
    if (clr_valid) begin
      cnt_d[CW*clr_qp +: CW] = '0;
      kz_d[clr_qp]           = 1'b1;
    end
    if (push) cnt_d[CW*rr_qp +: CW] = cnt_d[CW*rr_qp +: CW] + CW'(1);
    // pop and kinc never meet a clear of m_qp_q (that header is unexpected).
    if (pop) begin
      hd_d[SW*m_qp_q +: SW]  = hd_q[SW*m_qp_q +: SW] + SW'(1);
      cnt_d[CW*m_qp_q +: CW] = cnt_d[CW*m_qp_q +: CW] - CW'(1);
      kz_d[m_qp_q]           = 1'b1;
    end
    if (kinc) kz_d[m_qp_q] = 1'b0;
    if (clr_valid) blk_d[clr_qp] = 1'b0;
    if (pop)  blk_d[m_qp_q] = at_bound(cnt_d[CW*m_qp_q +: CW], r_max);
    if (push) blk_d[rr_qp]  = at_bound(cnt_d[CW*rr_qp +: CW], rr_max);
    // The gap episode: opened by a response ahead (d_seq never meets a clear
    // of m_qp_q), closed by an accepted one (kinc or pop) or a clear.
    if (clr_valid) gp_d[clr_qp] = 1'b0;
    if (dec && d_seq) gp_d[m_qp_q] = 1'b1;
    if (dec && d_exec) gp_d[m_qp_q] = 1'b0;
  end

  // ------------------------------------------------------------------
  // Next state
  // ------------------------------------------------------------------
  logic wc_free;

  always_comb begin
    state_d       = state_q;
    hd_ready_d    = hd_ready_q;
    c_len_d       = c_len_q;
    c_addr_d      = c_addr_q;
    c_done_d      = c_done_q;
    wc_free       = !wc_valid_q || wc_ready;
    wc_valid_d    = wc_valid_q && !wc_ready;
    wc_tok_d      = wc_tok_q;
    wc_off_d      = wc_off_q;
    wc_len_d      = wc_len_q;
    wc_addr_d     = wc_addr_q;
    wc_last_d     = wc_last_q;
    wc_tok_data_d = wc_tok_data_q;
    ev_d          = '0;
    gap_valid_d   = 1'b0;
    gap_qp_d      = gap_qp_q;
    gap_psn_d     = gap_psn_q;
    prog_valid_d  = 1'b0;
    prog_qp_d     = prog_qp_q;
    prog_psn_d    = prog_psn_q;

    unique case (state_q)
      S_IDLE: begin
        if (take) begin
          hd_ready_d = 1'b0;
          state_d    = S_DEC;
        end
      end
      S_DEC: begin
        c_len_d  = d_exec ? m_pay_q : 13'd0;
        c_addr_d = (d_exec && m_pay_q != 13'd0) ? r_addr + {27'd0, done_b} : 64'd0;
        c_done_d = d_exec && last;
        ev_d[EV_EXEC]  = d_exec;
        ev_d[EV_DONE]  = d_exec && last;
        ev_d[EV_UNEXP] = d_unexp;
        ev_d[EV_DUP]   = d_dup;
        ev_d[EV_SEQ]   = d_seq;
        ev_d[EV_BAD]   = d_bad;
        // The first response ahead of an episode: the first missing PSN.
        if (d_seq && !gp_q[m_qp_q]) begin
          gap_valid_d = 1'b1;
          gap_qp_d    = m_qp_q;
          gap_psn_d   = exp_psn;
        end
        // A response accepted that is not its READ's last: an implicit ACK
        // of its PSN (the last one's is the READ done token, once its data
        // is in host memory).
        if (d_exec && !last) begin
          prog_valid_d = 1'b1;
          prog_qp_d    = m_qp_q;
          prog_psn_d   = m_psn_q;
        end
        state_d  = S_CMD;
      end
      S_CMD: begin
        if (wc_free) begin
          // The frame's one command: its payload, or empty (dropped, or a
          // zero-length response).
          wc_valid_d    = 1'b1;
          wc_tok_d      = 1'b0;
          wc_off_d      = {6'd0, m_hdr_q};
          wc_len_d      = c_len_q;
          wc_addr_d     = c_addr_q;
          wc_last_d     = 1'b1;
          wc_tok_data_d = '0;
          if (c_done_q) begin
            state_d = S_TOK;
          end else begin
            hd_ready_d = 1'b1;
            state_d    = S_IDLE;
          end
        end
      end
      S_TOK: begin
        if (wc_free) begin
          wc_valid_d    = 1'b1;
          wc_tok_d      = 1'b1;
          wc_off_d      = '0;
          wc_len_d      = '0;
          wc_addr_d     = '0;
          wc_last_d     = 1'b0;
          // The accepted last response's PSN is psn0 + n - 1: the READ's last.
          wc_tok_data_d = resp_pkg::tok_rdone(8'(m_qp_q), m_psn_q);
          hd_ready_d    = 1'b1;
          state_d       = S_IDLE;
        end
      end
      default: state_d = S_IDLE;
    endcase
  end

  // ------------------------------------------------------------------
  // The two RAMs: one write port and one registered read port each.
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (push) mem_q[waddr] <= {rr_max, rr_mtu, rr_addr, rr_len, rr_psn};
  end

  always_ff @(posedge clk) begin
    if (take) row_q <= mem_q[raddr];
  end

  always_ff @(posedge clk) begin
    if (kinc) kmem_q[m_qp_q] <= k + KW'(1);
  end

  always_ff @(posedge clk) begin
    if (take) kr_q <= kmem_q[hd_qp];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q       <= S_IDLE;
      hd_ready_q    <= 1'b1;
      m_qp_q        <= '0;
      m_opc_q       <= '0;
      m_psn_q       <= '0;
      m_aeth_q      <= 1'b0;
      m_syn_q       <= '0;
      m_hdr_q       <= '0;
      m_pay_q       <= '0;
      has_q         <= 1'b0;
      kzr_q         <= 1'b0;
      hd_q          <= '0;
      cnt_q         <= '0;
      kz_q          <= '1;
      blk_q         <= '0;
      gp_q          <= '0;
      c_len_q       <= '0;
      c_addr_q      <= '0;
      c_done_q      <= 1'b0;
      wc_valid_q    <= 1'b0;
      wc_tok_q      <= 1'b0;
      wc_off_q      <= '0;
      wc_len_q      <= '0;
      wc_addr_q     <= '0;
      wc_last_q     <= 1'b0;
      wc_tok_data_q <= '0;
      ev_q          <= '0;
      ev_rr_full_q  <= 1'b0;
      gap_valid_q   <= 1'b0;
      gap_qp_q      <= '0;
      gap_psn_q     <= '0;
      prog_valid_q  <= 1'b0;
      prog_qp_q     <= '0;
      prog_psn_q    <= '0;
    end else begin
      state_q       <= state_d;
      hd_ready_q    <= hd_ready_d;
      if (take) begin
        m_qp_q   <= hd_qp;
        m_opc_q  <= hd_meta[OPCODE_LO +: OPCODE_W];
        m_psn_q  <= hd_meta[PSN_LO +: PSN_W];
        m_aeth_q <= hd_meta[HAS_AETH_LO];
        m_syn_q  <= hd_meta[AETH_LO + AETH_W - 3 +: 3];
        m_hdr_q  <= hd_meta[HDR_LEN_LO +: HDR_LEN_W];
        m_pay_q  <= hd_meta[PAY_LEN_LO +: PAY_LEN_W];
        has_q    <= hd_in_range && cnt_q[CW*hd_qp +: CW] != '0 &&
                    !(clr_valid && clr_qp == hd_qp);
        kzr_q    <= kz_q[hd_qp];
      end
      hd_q          <= hd_d;
      cnt_q         <= cnt_d;
      kz_q          <= kz_d;
      blk_q         <= blk_d;
      gp_q          <= gp_d;
      c_len_q       <= c_len_d;
      c_addr_q      <= c_addr_d;
      c_done_q      <= c_done_d;
      wc_valid_q    <= wc_valid_d;
      wc_tok_q      <= wc_tok_d;
      wc_off_q      <= wc_off_d;
      wc_len_q      <= wc_len_d;
      wc_addr_q     <= wc_addr_d;
      wc_last_q     <= wc_last_d;
      wc_tok_data_q <= wc_tok_data_d;
      ev_q          <= ev_d;
      ev_rr_full_q  <= refuse;
      gap_valid_q   <= gap_valid_d;
      gap_qp_q      <= gap_qp_d;
      gap_psn_q     <= gap_psn_d;
      prog_valid_q  <= prog_valid_d;
      prog_qp_q     <= prog_qp_d;
      prog_psn_q    <= prog_psn_d;
    end
  end

  assign hd_ready    = hd_ready_q;
  assign rr_block    = blk_q;
  assign wc_valid    = wc_valid_q;
  assign wc_tok      = wc_tok_q;
  assign wc_off      = wc_off_q;
  assign wc_len      = wc_len_q;
  assign wc_addr     = wc_addr_q;
  assign wc_last     = wc_last_q;
  assign wc_tok_data = wc_tok_data_q;
  assign ev_exec     = ev_q[EV_EXEC];
  assign ev_done     = ev_q[EV_DONE];
  assign ev_unexp    = ev_q[EV_UNEXP];
  assign ev_dup      = ev_q[EV_DUP];
  assign ev_seq      = ev_q[EV_SEQ];
  assign ev_bad      = ev_q[EV_BAD];
  assign ev_rr_full  = ev_rr_full_q;
  assign gap_valid   = gap_valid_q;
  assign gap_qp      = gap_qp_q;
  assign gap_psn     = gap_psn_q;
  assign prog_valid  = prog_valid_q;
  assign prog_qp     = prog_qp_q;
  assign prog_psn    = prog_psn_q;

  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  // rx_buf's header queue holds an offer until it is taken.
  `RNIC_ASSERT_HANDSHAKE(a_hd_hold, clk, rst, hd_valid, hd_ready, hd_meta)
  // The header's QP is a QP of this NIC (rx_parser bounded it).
  `RNIC_ASSERT_NEVER(a_hd_qp, clk, rst,
                     hd_valid && {1'b0, hd_meta[QP_LO +: QP_W]} >= 9'(QPS))
  // The integration honours rr_block (rnic_top: tx_engine's wqe_block), which
  // rises at a full ring: a push into a full ring never happens.
  `RNIC_ASSERT_NEVER(a_rr_full, clk, rst, refuse)
endmodule
