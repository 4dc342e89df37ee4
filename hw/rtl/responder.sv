`include "rnic_assert.svh"

// Responder: the RC/UC receive side of docs/protocol.md section 7 with the
// choices of docs/responder.md, one request packet at a time. Model:
// model/src/responder.rs (same register names). Contract: docs/responder.md,
// "responder".
//
// Per packet: S_IDLE takes the header and issues the reads (QP context, MR
// entry of the RETH's rkey, head RECV, this QP's row of the state table);
// S_RA: the reads are on the ports; S_RB: their data is valid and the packet
// is decided (every check in the reference's order). A SEND that places
// bytes then walks its RECV's scatter entries (S_SGE/S_SGW/S_SGC: one MR
// read per entry the payload touches) before any command is given: a bad
// entry turns the outcome into a completion with status 4 and no write.
// S_SEG gives rx_wr the frame's segment commands (one empty command when
// nothing is written), S_TOK the token (RECV completion or READ job), S_FIN
// pulses the ACK/NAK, QP error, RECV pop and counters and writes the row
// back. With no header waiting, a QP with qp_err and rqe_avail gets its head
// RECV completed with status 5 (S_FA/S_FB, round robin through u_rr).
module responder #(
  parameter int QPS = rnic_pkg::QPS,
  parameter int MRS = rnic_pkg::MRS,
  parameter int CQS = rnic_pkg::CQS
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   hd_valid,
  output logic                   hd_ready,
  input  logic [rx_meta_pkg::META_W-1:0] hd_meta,
  output logic                   ctx_rd_valid,
  output logic [$clog2(QPS)-1:0] ctx_rd_qp,
  input  logic [2:0]             ctx_state,
  input  logic                   ctx_uc,
  input  logic [2:0]             ctx_mtu,
  input  logic [15:0]            ctx_pd,
  input  logic [$clog2(CQS)-1:0] ctx_rq_cq,
  input  logic [4:0]             ctx_rnr_timer,
  input  logic [2:0]             ctx_max_rd,
  input  logic [3:0]             ctx_access,
  input  logic [23:0]            ctx_remote_qpn,
  output logic                   mr_rd_valid,
  output logic [$clog2(MRS)-1:0] mr_rd_idx,
  input  logic                   mr_valid,
  input  logic [31:0]            mr_key,
  input  logic [63:0]            mr_va,
  input  logic [63:0]            mr_len,
  input  logic [63:0]            mr_pbase,
  input  logic [3:0]             mr_access,
  input  logic [15:0]            mr_pd,
  output logic                   rqe_rd_valid,
  output logic [$clog2(QPS)-1:0] rqe_rd_qp,
  input  logic                   rqe_present,
  input  logic [1023:0]          rqe_data,
  output logic                   rqe_pop_valid,
  output logic [$clog2(QPS)-1:0] rqe_pop_qp,
  input  logic [QPS-1:0]         rqe_avail,
  input  logic [QPS-1:0]         qp_err,
  input  logic                   epsn_set_valid,
  input  logic [$clog2(QPS)-1:0] epsn_set_qp,
  input  logic [23:0]            epsn_set_psn,
  output logic                   wc_valid,
  input  logic                   wc_ready,
  output logic                   wc_tok,
  output logic [12:0]            wc_off,
  output logic [12:0]            wc_len,
  output logic [63:0]            wc_addr,
  output logic                   wc_last,
  output logic [resp_pkg::TOK_W-1:0] wc_tok_data,
  output logic                   ack_valid,
  output logic [$clog2(QPS)-1:0] ack_qp,
  output logic [23:0]            ack_psn,
  output logic [7:0]             ack_syndrome,
  output logic [23:0]            ack_msn,
  output logic                   err_valid,
  output logic [$clog2(QPS)-1:0] err_qp,
  output logic                   ev_exec,
  output logic                   ev_dup,
  output logic                   ev_seq_nak,
  output logic                   ev_rnr_nak,
  output logic                   ev_inv_nak,
  output logic                   ev_acc_nak,
  output logic                   ev_op_nak,
  output logic                   ev_recv,
  output logic                   ev_uc_drop,
  output logic                   ev_notready
);
  `RNIC_ASSERT_IMPORT

  localparam int QPW = $clog2(QPS);
  // The layouts (qualified: Yosys 0.23 does not parse `import`).
  localparam int META_W      = rx_meta_pkg::META_W;
  localparam int QP_LO       = rx_meta_pkg::QP_LO;
  localparam int OPCODE_LO   = rx_meta_pkg::OPCODE_LO;
  localparam int OPCODE_W    = rx_meta_pkg::OPCODE_W;
  localparam int PSN_LO      = rx_meta_pkg::PSN_LO;
  localparam int PSN_W       = rx_meta_pkg::PSN_W;
  localparam int ACKREQ_LO   = rx_meta_pkg::ACKREQ_LO;
  localparam int HAS_RETH_LO = rx_meta_pkg::HAS_RETH_LO;
  localparam int HDR_LEN_LO  = rx_meta_pkg::HDR_LEN_LO;
  localparam int HDR_LEN_W   = rx_meta_pkg::HDR_LEN_W;
  localparam int PAY_LEN_LO  = rx_meta_pkg::PAY_LEN_LO;
  localparam int PAY_LEN_W   = rx_meta_pkg::PAY_LEN_W;
  localparam int VA_LO       = rx_meta_pkg::VA_LO;
  localparam int VA_W        = rx_meta_pkg::VA_W;
  localparam int RKEY_LO     = rx_meta_pkg::RKEY_LO;
  localparam int RKEY_W      = rx_meta_pkg::RKEY_W;
  localparam int DMA_LEN_LO  = rx_meta_pkg::DMA_LEN_LO;
  localparam int DMA_LEN_W   = rx_meta_pkg::DMA_LEN_W;
  localparam int IMM_LO      = rx_meta_pkg::IMM_LO;
  localparam int IMM_W       = rx_meta_pkg::IMM_W;
  localparam int TOK_W       = resp_pkg::TOK_W;
  localparam int MRW = $clog2(MRS);
  localparam int CQW = $clog2(CQS);

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("responder: QPS must be a power of two in 2..256");
  end
  if (MRS < 2 || (MRS & (MRS - 1)) != 0) begin : g_bad_mrs
    $error("responder: MRS must be a power of two, at least 2");
  end
  if (CQS < 2 || CQS > 256 || (CQS & (CQS - 1)) != 0) begin : g_bad_cqs
    $error("responder: CQS must be a power of two in 2..256");
  end

  // QP states (ctx_state) and AETH syndromes.
  localparam logic [2:0] ST_RTS   = 3'd1;
  localparam logic [2:0] ST_RTR   = 3'd3;
  localparam logic [7:0] SYN_ACK  = rnic_pkg::AETH_ACK;
  localparam logic [7:0] SYN_RNR  = rnic_pkg::AETH_RNR;
  localparam logic [7:0] SYN_SEQ  = rnic_pkg::AETH_NAK_SEQ;
  localparam logic [7:0] SYN_INV  = rnic_pkg::AETH_NAK_INV;
  localparam logic [7:0] SYN_ACC  = rnic_pkg::AETH_NAK_ACC;
  localparam logic [7:0] SYN_OP   = rnic_pkg::AETH_NAK_OP;

  // Counter pulses: bits of fin_ev_q / ev_q.
  localparam int EV_EXEC = 0, EV_DUP = 1, EV_SEQ = 2, EV_RNR = 3, EV_INV = 4;
  localparam int EV_ACC = 5, EV_OP = 6, EV_RECV = 7, EV_UCD = 8, EV_NR = 9;

  // Message class of a row.
  localparam logic [1:0] CLS_IDLE  = 2'd0;
  localparam logic [1:0] CLS_SEND  = 2'd1;
  localparam logic [1:0] CLS_WRITE = 2'd2;

  // A RECV as kept: wr_id 63:0, entry count 71:64, entry k at 72 + 128k
  // (VA +63:0, length +95:64, lkey +127:96): rqe_data's bytes 0..8 and
  // 0x10..0x50.
  localparam int RCV_W = 72 + 4 * 128;

  // A row of the state table.
  localparam int R_EPSN   = 0;    // 24
  localparam int R_MSN    = 24;   // 24
  localparam int R_NAK    = 48;
  localparam int R_UCD    = 49;
  localparam int R_CLS    = 50;   // 2
  localparam int R_WADDR  = 52;   // 64
  localparam int R_WLEFT  = 116;  // 32
  localparam int R_WTOTAL = 148;  // 32
  localparam int R_PLACED = 180;  // 34
  localparam int R_RECV   = 214;  // RCV_W
  localparam int ROW_W    = R_RECV + RCV_W;

  typedef enum logic [3:0] {
    S_IDLE, S_RA, S_RB, S_SGE, S_SGW, S_SGC, S_SEG, S_TOK, S_FIN, S_FA, S_FB
  } state_e;

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  state_e             state_q, state_d;
  logic               hd_ready_q, hd_ready_d;
  logic [META_W-1:0]  m_q, m_d;
  logic [QPW-1:0]     fl_qp_q, fl_qp_d;
  logic               fl_q, fl_d;
  logic [ROW_W-1:0]   row_mem_q [QPS];
  logic [ROW_W-1:0]   row_q;
  logic               epsn_pend_q, epsn_pend_d;
  logic [QPW-1:0]     epsn_pqp_q, epsn_pqp_d;
  logic [23:0]        epsn_ppsn_q, epsn_ppsn_d;
  logic               ctx_rd_valid_q, ctx_rd_valid_d;
  logic [QPW-1:0]     ctx_rd_qp_q, ctx_rd_qp_d;
  logic               mr_rd_valid_q, mr_rd_valid_d;
  logic [MRW-1:0]     mr_rd_idx_q, mr_rd_idx_d;
  logic               rqe_rd_valid_q, rqe_rd_valid_d;
  logic [QPW-1:0]     rqe_rd_qp_q, rqe_rd_qp_d;
  logic               c_uc_q, c_uc_d;
  logic [15:0]        c_pd_q, c_pd_d;
  logic [CQW-1:0]     c_cq_q, c_cq_d;
  logic [23:0]        c_rqpn_q, c_rqpn_d;
  logic [RCV_W-1:0]   cur_q, cur_d;
  logic [2:0]         k_q, k_d;
  logic [33:0]        off_q, off_d;
  logic [12:0]        rest_q, rest_d;
  logic [12:0]        pos_q, pos_d;
  logic [2:0]         seg_n_q, seg_n_d;
  logic [2:0]         seg_i_q, seg_i_d;
  // Segments k = 0..3 at [13k +: 13] (offset, length) and [64k +: 64].
  logic [4*13-1:0]    seg_off_q, seg_off_d;
  logic [4*13-1:0]    seg_len_q, seg_len_d;
  logic [4*64-1:0]    seg_addr_q, seg_addr_d;
  logic               tok_v_q, tok_v_d;
  logic [TOK_W-1:0]   tok_q, tok_d;
  logic               fin_ack_q, fin_ack_d;
  logic [23:0]        fin_psn_q, fin_psn_d;
  logic [7:0]         fin_syn_q, fin_syn_d;
  logic [23:0]        fin_msn_q, fin_msn_d;
  logic               fin_err_q, fin_err_d;
  logic               fin_pop_q, fin_pop_d;
  logic               fin_we_q, fin_we_d;
  logic [9:0]         fin_ev_q, fin_ev_d;
  logic [ROW_W-1:0]   row_n_q, row_n_d;
  logic               wc_valid_q, wc_valid_d;
  logic               wc_tok_q, wc_tok_d;
  logic [12:0]        wc_off_q, wc_off_d;
  logic [12:0]        wc_len_q, wc_len_d;
  logic [63:0]        wc_addr_q, wc_addr_d;
  logic               wc_last_q, wc_last_d;
  logic [TOK_W-1:0]   wc_tok_data_q, wc_tok_data_d;
  logic               ack_valid_q, ack_valid_d;
  logic [QPW-1:0]     ack_qp_q, ack_qp_d;
  logic [23:0]        ack_psn_q, ack_psn_d;
  logic [7:0]         ack_syndrome_q, ack_syndrome_d;
  logic [23:0]        ack_msn_q, ack_msn_d;
  logic               err_valid_q, err_valid_d;
  logic [QPW-1:0]     err_qp_q, err_qp_d;
  logic               rqe_pop_valid_q, rqe_pop_valid_d;
  logic [QPW-1:0]     rqe_pop_qp_q, rqe_pop_qp_d;
  logic [9:0]         ev_q, ev_d;

  // ------------------------------------------------------------------
  // The header being worked on, its row, the read data
  // ------------------------------------------------------------------
  logic [QPW-1:0]   m_qp, hd_qp;
  logic [7:0]       m_opc;
  logic [23:0]      m_psn;
  logic             m_ackreq, m_has_reth;
  logic [6:0]       m_hdr_len;
  logic [12:0]      m_pay_len;
  logic [63:0]      m_va;
  logic [31:0]      m_rkey, m_dma_len, m_imm;
  logic [23:0]      r_epsn, r_msn;
  logic             r_nak, r_ucd;
  logic [1:0]       r_cls;
  logic [63:0]      r_waddr;
  logic [31:0]      r_wleft, r_wtotal;
  logic [33:0]      r_placed;
  logic [RCV_W-1:0] r_recv, head;

  always_comb begin
    m_qp       = m_q[QP_LO +: QPW];
    hd_qp      = hd_meta[QP_LO +: QPW];
    m_opc      = m_q[OPCODE_LO +: OPCODE_W];
    m_psn      = m_q[PSN_LO +: PSN_W];
    m_ackreq   = m_q[ACKREQ_LO];
    m_has_reth = m_q[HAS_RETH_LO];
    m_hdr_len  = m_q[HDR_LEN_LO +: HDR_LEN_W];
    m_pay_len  = m_q[PAY_LEN_LO +: PAY_LEN_W];
    m_va       = m_q[VA_LO +: VA_W];
    m_rkey     = m_q[RKEY_LO +: RKEY_W];
    m_dma_len  = m_q[DMA_LEN_LO +: DMA_LEN_W];
    m_imm      = m_q[IMM_LO +: IMM_W];
    r_epsn     = row_q[R_EPSN +: 24];
    r_msn      = row_q[R_MSN +: 24];
    r_nak      = row_q[R_NAK];
    r_ucd      = row_q[R_UCD];
    r_cls      = row_q[R_CLS +: 2];
    r_waddr    = row_q[R_WADDR +: 64];
    r_wleft    = row_q[R_WLEFT +: 32];
    r_wtotal   = row_q[R_WTOTAL +: 32];
    r_placed   = row_q[R_PLACED +: 34];
    r_recv     = row_q[R_RECV +: RCV_W];
    head       = {rqe_data[639:128], rqe_data[71:0]};
  end

  // A row from its fields.
  function automatic logic [ROW_W-1:0] mk_row(
    input logic [23:0]      epsn,
    input logic [23:0]      msn,
    input logic             nak,
    input logic             ucd,
    input logic [1:0]       cls,
    input logic [63:0]      waddr,
    input logic [31:0]      wleft,
    input logic [31:0]      wtotal,
    input logic [33:0]      placed,
    input logic [RCV_W-1:0] recv
  );
    mk_row = {recv, placed, wtotal, wleft, waddr, cls, ucd, nak, msn, epsn};
  endfunction

  // [va, va + len) inside [mva, mva + mlen), 65-bit arithmetic.
  function automatic logic in_range(
    input logic [63:0] va,
    input logic [63:0] len,
    input logic [63:0] mva,
    input logic [63:0] mlen
  );
    in_range = (va >= mva) && ({1'b0, va} + {1'b0, len} <= {1'b0, mva} + {1'b0, mlen});
  endfunction

  // ------------------------------------------------------------------
  // Decision (S_RB)
  // ------------------------------------------------------------------
  logic [4:0]  low5;
  logic        d_valid, d_send, d_write, d_read, d_starts, d_ends, d_imm;
  logic [23:0] delta;
  logic [3:0]  mtul;
  logic [12:0] mtu;
  logic [RCV_W-1:0] cur;
  logic        ready, needs_recv, len_ok, order_ok;
  logic [1:0]  cls_eff, in_cls;
  logic        acc_ok_w, acc_ok_r;
  logic [63:0] key_base;
  logic [2:0]  cur_nsge_c;
  logic [33:0] cur_cap;
  logic [34:0] send_total;
  logic [33:0] send_placed;
  logic [32:0] rd_n;
  logic [63:0] w_addr;
  logic [31:0] w_left, w_total;
  logic [7:0]  cq8;

  always_comb begin
    low5     = m_opc[4:0];
    d_read   = m_opc == 8'h0C;
    d_valid  = low5 <= 5'h0B || d_read;
    d_send   = d_valid && low5 <= 5'h05;
    d_write  = d_valid && low5 >= 5'h06 && low5 <= 5'h0B;
    d_imm    = low5 == 5'h03 || low5 == 5'h05 || low5 == 5'h09 || low5 == 5'h0B;
    unique case (low5)
      5'h00, 5'h06:               begin d_starts = 1'b1; d_ends = 1'b0; end
      5'h01, 5'h07:               begin d_starts = 1'b0; d_ends = 1'b0; end
      5'h02, 5'h03, 5'h08, 5'h09: begin d_starts = 1'b0; d_ends = 1'b1; end
      default:                    begin d_starts = 1'b1; d_ends = 1'b1; end
    endcase
    delta    = m_psn - r_epsn;
    unique case (ctx_mtu)
      3'd0, 3'd1: mtul = 4'd8;
      3'd2:       mtul = 4'd9;
      3'd3:       mtul = 4'd10;
      3'd4:       mtul = 4'd11;
      default:    mtul = 4'd12;
    endcase
    mtu      = 13'd1 << mtul;
    cur      = d_starts ? head : r_recv;
    ready    = ctx_state == ST_RTS || ctx_state == ST_RTR;
    needs_recv = (d_send && d_starts) || (d_write && d_ends && d_imm);
    // The class a FIRST/ONLY finds: a UC one abandons the message.
    cls_eff  = (ctx_uc && d_starts) ? CLS_IDLE : r_cls;
    in_cls   = d_send ? CLS_SEND : (d_write ? CLS_WRITE : 2'd3);
    if (!d_ends) begin
      len_ok = m_pay_len == mtu;
    end else if (!d_starts) begin
      len_ok = m_pay_len != 13'd0 && m_pay_len <= mtu;
    end else begin
      len_ok = m_pay_len <= mtu;
    end
    order_ok = (d_starts ? cls_eff == CLS_IDLE : cls_eff == in_cls) && len_ok;
    // The rkey of a WRITE FIRST/ONLY or READ (zero length: no check).
    acc_ok_w = (m_dma_len == 32'd0) ||
               (mr_valid && mr_key == m_rkey && ctx_access[1] && mr_pd == ctx_pd &&
                mr_access[1] && in_range(m_va, {32'd0, m_dma_len}, mr_va, mr_len));
    acc_ok_r = (m_dma_len == 32'd0) ||
               (mr_valid && mr_key == m_rkey && ctx_access[2] && mr_pd == ctx_pd &&
                mr_access[2] && in_range(m_va, {32'd0, m_dma_len}, mr_va, mr_len));
    key_base = (m_dma_len == 32'd0) ? 64'd0 : mr_pbase + (m_va - mr_va);
    cur_nsge_c = (cur[71:64] > 8'd4) ? 3'd4 : cur[66:64];
    cur_cap  = '0;
    for (int k = 0; k < 4; k++) begin
      if (3'(k) < cur_nsge_c) cur_cap = cur_cap + {2'd0, cur[72 + 128 * k + 64 +: 32]};
    end
    send_placed = d_starts ? 34'd0 : r_placed;
    send_total  = {1'b0, send_placed} + {22'd0, m_pay_len};
    rd_n     = ({1'b0, m_dma_len} + {20'd0, mtu} - 33'd1) >> mtul;
    if (rd_n == 33'd0) rd_n = 33'd1;
    w_addr   = d_starts ? key_base : r_waddr;
    w_left   = d_starts ? m_dma_len : r_wleft;
    w_total  = d_starts ? m_dma_len : r_wtotal;
    cq8      = 8'(ctx_rq_cq);
  end

  // The decision's outcome, as the model's `decide`.
  logic [23:0]      o_epsn, o_msn;
  logic             o_nak, o_ucd;
  logic [1:0]       o_cls;
  logic [63:0]      o_waddr;
  logic [31:0]      o_wleft, o_wtotal;
  logic [33:0]      o_placed;
  logic [RCV_W-1:0] o_recv;
  logic             o_we, o_tok_v, o_ack, o_err, o_pop, o_go_sge, o_seg;
  logic [TOK_W-1:0] o_tok;
  logic [23:0]      o_psn, o_amsn;
  logic [7:0]       o_syn;
  logic [9:0]       o_ev;
  logic             nak_v, fail, exec;
  logic [23:0]      nak_psn;
  logic [7:0]       nak_syn;
  logic [9:0]       nak_ev;
  logic             go;

  always_comb begin
    o_epsn = r_epsn;  o_msn = r_msn;  o_nak = r_nak;  o_ucd = r_ucd;  o_cls = r_cls;
    o_waddr = r_waddr;  o_wleft = r_wleft;  o_wtotal = r_wtotal;  o_placed = r_placed;
    o_recv = r_recv;
    o_we = 1'b0;  o_tok_v = 1'b0;  o_tok = '0;  o_ack = 1'b0;  o_err = 1'b0;
    o_pop = 1'b0;  o_go_sge = 1'b0;  o_seg = 1'b0;
    o_psn = '0;  o_syn = '0;  o_amsn = '0;  o_ev = '0;
    nak_v = 1'b0;  nak_psn = '0;  nak_syn = '0;  nak_ev = '0;
    fail = 1'b0;  exec = 1'b0;  go = 1'b1;
    if (!ready) begin
      o_ev[EV_NR] = 1'b1;
    end else begin
      o_we = 1'b1;
      if (!d_valid) begin
        if (ctx_uc) begin
          // Dropped before the PSN is looked at: ePSN stays.
          o_ucd = 1'b1;
          o_cls = CLS_IDLE;
          o_ev[EV_UCD] = 1'b1;
        end else begin
          nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_INV;  nak_ev[EV_INV] = 1'b1;
        end
      end else if (!ctx_uc && delta != 24'd0 && !delta[23]) begin
        // Ahead: one sequence NAK per episode.
        if (!r_nak) begin
          o_nak = 1'b1;
          nak_v = 1'b1;  nak_psn = r_epsn;  nak_syn = SYN_SEQ;  nak_ev[EV_SEQ] = 1'b1;
        end
      end else if (!ctx_uc && delta != 24'd0) begin
        // Behind: a duplicate.
        o_ev[EV_DUP] = 1'b1;
        if (d_read) begin
          if (!m_has_reth || m_pay_len != 13'd0) begin
            nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_INV;  nak_ev[EV_INV] = 1'b1;
          end else if (!acc_ok_r) begin
            nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_ACC;  nak_ev[EV_ACC] = 1'b1;
          end else begin
            o_tok_v = 1'b1;
            o_tok = resp_pkg::tok_read(8'(m_qp), m_psn, key_base, m_dma_len, r_msn, ctx_mtu,
                                       ctx_max_rd);
          end
        end else begin
          o_ack = 1'b1;  o_psn = r_epsn - 24'd1;  o_syn = SYN_ACK;  o_amsn = r_msn;
        end
      end else begin
        // RC in order, or UC.
        if (ctx_uc) begin
          if (d_starts) begin
            o_ucd = 1'b0;
            o_cls = CLS_IDLE;
          end else if (delta != 24'd0 || r_ucd) begin
            o_ucd = 1'b1;
            o_cls = CLS_IDLE;
            o_ev[EV_UCD] = 1'b1;
            go = 1'b0;
          end
          o_epsn = m_psn + 24'd1;
        end else begin
          o_nak = 1'b0;
        end
        if (go) begin
          if (d_read) begin
            if (ctx_uc) begin
              fail = 1'b1;
            end else if (r_cls != CLS_IDLE || !m_has_reth || m_pay_len != 13'd0) begin
              nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_INV;  nak_ev[EV_INV] = 1'b1;
            end else if (!acc_ok_r) begin
              nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_ACC;  nak_ev[EV_ACC] = 1'b1;
            end else begin
              o_msn = r_msn + 24'd1;
              o_epsn = m_psn + rd_n[23:0];
              o_tok_v = 1'b1;
              o_tok = resp_pkg::tok_read(8'(m_qp), m_psn, key_base, m_dma_len, r_msn + 24'd1,
                                         ctx_mtu, ctx_max_rd);
              o_ev[EV_EXEC] = 1'b1;
            end
          end else if (!order_ok) begin
            if (ctx_uc) begin
              fail = 1'b1;
            end else begin
              nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_INV;  nak_ev[EV_INV] = 1'b1;
            end
          end else if (needs_recv && !rqe_present) begin
            if (ctx_uc) begin
              fail = 1'b1;
            end else begin
              nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_RNR | {3'd0, ctx_rnr_timer};
              nak_ev[EV_RNR] = 1'b1;
            end
          end else if (d_send) begin
            o_pop = d_starts;
            if (cur[71:64] > 8'd4) begin
              o_tok_v = 1'b1;
              o_tok = resp_pkg::tok_cqe(8'(m_qp), cq8, cur[63:0], rnic_pkg::CQE_LOC_QP_OP_ERR, rnic_pkg::WC_RECV, 32'd0, 32'd0, 1'b0,
                              ctx_remote_qpn);
              if (ctx_uc) begin
                fail = 1'b1;
              end else begin
                nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_OP;  nak_ev[EV_OP] = 1'b1;
              end
            end else if (send_total > {1'b0, cur_cap}) begin
              o_tok_v = 1'b1;
              o_tok = resp_pkg::tok_cqe(8'(m_qp), cq8, cur[63:0], rnic_pkg::CQE_LOC_LEN_ERR, rnic_pkg::WC_RECV, 32'd0, 32'd0, 1'b0,
                              ctx_remote_qpn);
              if (ctx_uc) begin
                fail = 1'b1;
              end else begin
                nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_INV;  nak_ev[EV_INV] = 1'b1;
              end
            end else begin
              exec = 1'b1;
              o_cls = d_ends ? CLS_IDLE : CLS_SEND;
              o_placed = send_total[33:0];
              o_recv = cur;
              if (d_ends) begin
                o_tok_v = 1'b1;
                o_tok = resp_pkg::tok_cqe(8'(m_qp), cq8, cur[63:0], rnic_pkg::CQE_SUCCESS, rnic_pkg::WC_RECV, send_total[31:0], m_imm,
                                d_imm, ctx_remote_qpn);
                if (!d_imm) o_tok[160:129] = 32'd0;
              end
              o_go_sge = m_pay_len != 13'd0;
            end
          end else begin
            // WRITE
            if (d_starts && !m_has_reth) begin
              if (ctx_uc) begin
                fail = 1'b1;
              end else begin
                nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_INV;  nak_ev[EV_INV] = 1'b1;
              end
            end else if (d_starts && !acc_ok_w) begin
              if (ctx_uc) begin
                fail = 1'b1;
              end else begin
                nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_ACC;  nak_ev[EV_ACC] = 1'b1;
              end
            end else if ({19'd0, m_pay_len} > w_left ||
                         (d_ends && {19'd0, m_pay_len} != w_left)) begin
              if (ctx_uc) begin
                fail = 1'b1;
              end else begin
                nak_v = 1'b1;  nak_psn = m_psn;  nak_syn = SYN_INV;  nak_ev[EV_INV] = 1'b1;
              end
            end else begin
              exec = 1'b1;
              o_seg = m_pay_len != 13'd0;
              o_cls = d_ends ? CLS_IDLE : CLS_WRITE;
              o_waddr = w_addr + {51'd0, m_pay_len};
              o_wleft = w_left - {19'd0, m_pay_len};
              o_wtotal = w_total;
              if (d_ends && d_imm) begin
                o_pop = 1'b1;
                o_tok_v = 1'b1;
                o_tok = resp_pkg::tok_cqe(8'(m_qp), cq8, head[63:0], rnic_pkg::CQE_SUCCESS, rnic_pkg::WC_RECV_RDMA_WITH_IMM, w_total, m_imm, 1'b1,
                                ctx_remote_qpn);
              end
            end
          end
        end
      end
      if (exec) begin
        o_ev = '0;
        o_ev[EV_EXEC] = 1'b1;
        if (!ctx_uc) begin
          o_epsn = m_psn + 24'd1;
          if (d_ends) o_msn = r_msn + 24'd1;
          if (m_ackreq || d_ends) begin
            o_ack = 1'b1;  o_psn = m_psn;  o_syn = SYN_ACK;
            o_amsn = d_ends ? r_msn + 24'd1 : r_msn;
          end
        end
      end
      if (nak_v) begin
        o_ack = 1'b1;  o_psn = nak_psn;  o_syn = nak_syn;  o_amsn = r_msn;
        o_err = nak_syn != SYN_SEQ && nak_syn[7:5] != SYN_RNR[7:5];
        o_ev = o_ev | nak_ev;
      end
      if (fail) begin
        // UC: drop the rest of the message (ePSN already past this packet).
        o_epsn = m_psn + 24'd1;
        o_ucd = 1'b1;
        o_cls = CLS_IDLE;
        o_ev = '0;
        o_ev[EV_UCD] = 1'b1;
      end
    end
  end

  // ------------------------------------------------------------------
  // Scatter check (S_SGC) and the flush picker
  // ------------------------------------------------------------------
  logic [63:0] sg_va;
  logic [31:0] sg_len, sg_lkey;
  logic        sg_ok;
  logic [33:0] sg_avail;
  logic [12:0] sg_n;
  logic [QPS-1:0] flushable;
  logic        pick_valid;
  logic [QPW-1:0] pick_qp;

  always_comb begin
    sg_va    = cur_q[72 + 128 * k_q[1:0] +: 64];
    sg_len   = cur_q[72 + 128 * k_q[1:0] + 64 +: 32];
    sg_lkey  = cur_q[72 + 128 * k_q[1:0] + 96 +: 32];
    sg_ok    = mr_valid && mr_key == sg_lkey && mr_pd == c_pd_q && mr_access[0] &&
               in_range(sg_va, {32'd0, sg_len}, mr_va, mr_len);
    sg_avail = {2'd0, sg_len} - off_q;
    sg_n     = (sg_avail < {21'd0, rest_q}) ? sg_avail[12:0] : rest_q;
    flushable = qp_err & rqe_avail;
  end

  rr_pick #(
    .N (QPS)
  ) u_rr (
    .clk        (clk),
    .rst        (rst),
    .req        (flushable),
    .adv        (state_q == S_FA),
    .last_idx   (fl_qp_q),
    .pick_valid (pick_valid),
    .pick_idx   (pick_qp)
  );

  // ------------------------------------------------------------------
  // Next state
  // ------------------------------------------------------------------
  logic wc_free;
  logic [1:0] seg_j;

  always_comb begin
    state_d        = state_q;
    hd_ready_d     = hd_ready_q;
    m_d            = m_q;
    fl_qp_d        = fl_qp_q;
    fl_d           = fl_q;
    ctx_rd_valid_d = 1'b0;
    ctx_rd_qp_d    = ctx_rd_qp_q;
    mr_rd_valid_d  = 1'b0;
    mr_rd_idx_d    = mr_rd_idx_q;
    rqe_rd_valid_d = 1'b0;
    rqe_rd_qp_d    = rqe_rd_qp_q;
    c_uc_d         = c_uc_q;
    c_pd_d         = c_pd_q;
    c_cq_d         = c_cq_q;
    c_rqpn_d       = c_rqpn_q;
    cur_d          = cur_q;
    k_d            = k_q;
    off_d          = off_q;
    rest_d         = rest_q;
    pos_d          = pos_q;
    seg_n_d        = seg_n_q;
    seg_i_d        = seg_i_q;
    seg_off_d      = seg_off_q;
    seg_len_d      = seg_len_q;
    seg_addr_d     = seg_addr_q;
    tok_v_d        = tok_v_q;
    tok_d          = tok_q;
    fin_ack_d      = fin_ack_q;
    fin_psn_d      = fin_psn_q;
    fin_syn_d      = fin_syn_q;
    fin_msn_d      = fin_msn_q;
    fin_err_d      = fin_err_q;
    fin_pop_d      = fin_pop_q;
    fin_we_d       = fin_we_q;
    fin_ev_d       = fin_ev_q;
    row_n_d        = row_n_q;
    wc_free        = !wc_valid_q || wc_ready;
    wc_valid_d     = wc_valid_q && !wc_ready;
    wc_tok_d       = wc_tok_q;
    wc_off_d       = wc_off_q;
    wc_len_d       = wc_len_q;
    wc_addr_d      = wc_addr_q;
    wc_last_d      = wc_last_q;
    wc_tok_data_d  = wc_tok_data_q;
    ack_valid_d    = 1'b0;
    ack_qp_d       = ack_qp_q;
    ack_psn_d      = ack_psn_q;
    ack_syndrome_d = ack_syndrome_q;
    ack_msn_d      = ack_msn_q;
    err_valid_d    = 1'b0;
    err_qp_d       = err_qp_q;
    rqe_pop_valid_d = 1'b0;
    rqe_pop_qp_d   = rqe_pop_qp_q;
    ev_d           = '0;
    seg_j          = seg_i_q[1:0];

    unique case (state_q)
      S_IDLE: begin
        if (hd_valid && hd_ready_q) begin
          m_d            = hd_meta;
          ctx_rd_qp_d    = hd_qp;
          rqe_rd_qp_d    = hd_qp;
          mr_rd_idx_d    = hd_meta[RKEY_LO +: MRW];
          ctx_rd_valid_d = 1'b1;
          mr_rd_valid_d  = 1'b1;
          rqe_rd_valid_d = 1'b1;
          hd_ready_d     = 1'b0;
          fl_d           = 1'b0;
          state_d        = S_RA;
        end else if (!hd_valid && pick_valid) begin
          fl_qp_d        = pick_qp;
          ctx_rd_qp_d    = pick_qp;
          rqe_rd_qp_d    = pick_qp;
          ctx_rd_valid_d = 1'b1;
          rqe_rd_valid_d = 1'b1;
          hd_ready_d     = 1'b0;
          fl_d           = 1'b1;
          state_d        = S_FA;
        end
      end
      S_RA: state_d = S_RB;
      S_RB: begin
        c_uc_d    = ctx_uc;
        c_pd_d    = ctx_pd;
        c_cq_d    = ctx_rq_cq;
        c_rqpn_d  = ctx_remote_qpn;
        cur_d     = cur;
        seg_n_d   = {2'd0, o_seg};
        seg_i_d   = '0;
        seg_off_d[0 +: 13]  = {6'd0, m_hdr_len};
        seg_len_d[0 +: 13]  = m_pay_len;
        seg_addr_d[0 +: 64] = w_addr;
        tok_v_d   = o_tok_v;
        tok_d     = o_tok;
        fin_ack_d = o_ack;
        fin_psn_d = o_psn;
        fin_syn_d = o_syn;
        fin_msn_d = o_amsn;
        fin_err_d = o_err;
        fin_pop_d = o_pop;
        fin_we_d  = o_we;
        fin_ev_d  = o_ev;
        row_n_d   = mk_row(o_epsn, o_msn, o_nak, o_ucd, o_cls, o_waddr, o_wleft, o_wtotal,
                           o_placed, o_recv);
        k_d       = '0;
        off_d     = o_go_sge ? send_placed : 34'd0;
        rest_d    = o_go_sge ? m_pay_len : 13'd0;
        pos_d     = '0;
        state_d   = o_go_sge ? S_SGE : S_SEG;
      end
      S_SGE: begin
        if (off_q >= {2'd0, sg_len}) begin
          off_d = off_q - {2'd0, sg_len};
          k_d   = k_q + 3'd1;
        end else begin
          mr_rd_idx_d   = sg_lkey[MRW-1:0];
          mr_rd_valid_d = 1'b1;
          state_d       = S_SGW;
        end
      end
      S_SGW: state_d = S_SGC;
      S_SGC: begin
        if (!sg_ok) begin
          // A bad entry: nothing written, the RECV completes with status 4.
          seg_n_d = '0;
          tok_v_d = 1'b1;
          tok_d   = resp_pkg::tok_cqe(8'(m_qp), 8'(c_cq_q), cur_q[63:0], rnic_pkg::CQE_LOC_PROT_ERR, rnic_pkg::WC_RECV, 32'd0, 32'd0,
                            1'b0, c_rqpn_q);
          fin_ev_d = '0;
          if (c_uc_q) begin
            fin_ack_d = 1'b0;
            fin_err_d = 1'b0;
            fin_ev_d[EV_UCD] = 1'b1;
            row_n_d = mk_row(m_psn + 24'd1, r_msn, r_nak, 1'b1, CLS_IDLE, r_waddr, r_wleft,
                             r_wtotal, r_placed, r_recv);
          end else begin
            fin_ack_d = 1'b1;
            fin_psn_d = m_psn;
            fin_syn_d = SYN_OP;
            fin_msn_d = r_msn;
            fin_err_d = 1'b1;
            fin_ev_d[EV_OP] = 1'b1;
            row_n_d = mk_row(r_epsn, r_msn, 1'b0, r_ucd, r_cls, r_waddr, r_wleft,
                             r_wtotal, r_placed, r_recv);
          end
          state_d = S_SEG;
        end else begin
          seg_off_d[13 * seg_n_q[1:0] +: 13]  = {6'd0, m_hdr_len} + pos_q;
          seg_len_d[13 * seg_n_q[1:0] +: 13]  = sg_n;
          seg_addr_d[64 * seg_n_q[1:0] +: 64] = mr_pbase + (sg_va - mr_va) + {30'd0, off_q};
          seg_n_d = seg_n_q + 3'd1;
          pos_d   = pos_q + sg_n;
          rest_d  = rest_q - sg_n;
          off_d   = '0;
          k_d     = k_q + 3'd1;
          state_d = (rest_q == sg_n) ? S_SEG : S_SGE;
        end
      end
      S_SEG: begin
        if (wc_free) begin
          wc_valid_d    = 1'b1;
          wc_tok_d      = 1'b0;
          wc_off_d      = (seg_n_q == 3'd0) ? {6'd0, m_hdr_len} : seg_off_q[13 * seg_j +: 13];
          wc_len_d      = (seg_n_q == 3'd0) ? 13'd0 : seg_len_q[13 * seg_j +: 13];
          wc_addr_d     = (seg_n_q == 3'd0) ? 64'd0 : seg_addr_q[64 * seg_j +: 64];
          wc_last_d     = seg_n_q == 3'd0 || seg_i_q + 3'd1 == seg_n_q;
          wc_tok_data_d = '0;
          seg_i_d       = seg_i_q + 3'd1;
          if (wc_last_d) state_d = tok_v_q ? S_TOK : S_FIN;
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
          wc_tok_data_d = tok_q;
          state_d       = S_FIN;
        end
      end
      S_FIN: begin
        ack_valid_d     = fin_ack_q;
        ack_qp_d        = fl_q ? fl_qp_q : m_qp;
        ack_psn_d       = fin_psn_q;
        ack_syndrome_d  = fin_syn_q;
        ack_msn_d       = fin_msn_q;
        err_valid_d     = fin_err_q;
        err_qp_d        = fl_q ? fl_qp_q : m_qp;
        rqe_pop_valid_d = fin_pop_q;
        rqe_pop_qp_d    = fl_q ? fl_qp_q : m_qp;
        ev_d            = fin_ev_q;
        ev_d[EV_RECV]   = fin_pop_q;
        hd_ready_d      = 1'b1;
        state_d         = S_IDLE;
      end
      S_FA: state_d = S_FB;
      S_FB: begin
        fin_ack_d = 1'b0;
        fin_err_d = 1'b0;
        fin_we_d  = 1'b0;
        fin_ev_d  = '0;
        fin_pop_d = rqe_present;
        tok_v_d   = rqe_present;
        tok_d     = resp_pkg::tok_cqe(8'(fl_qp_q), 8'(ctx_rq_cq), rqe_data[63:0], rnic_pkg::CQE_WR_FLUSH_ERR, rnic_pkg::WC_RECV, 32'd0,
                            32'd0, 1'b0, ctx_remote_qpn);
        state_d   = rqe_present ? S_TOK : S_FIN;
      end
      default: state_d = S_IDLE;
    endcase
  end

  // ------------------------------------------------------------------
  // The state table: read at the header's take, one write port (a
  // packet's row at S_FIN, else an EPSN write, one held if they meet).
  // ------------------------------------------------------------------
  logic             fin_we;
  logic             tw_en;
  logic [QPW-1:0]   tw_qp;
  logic [ROW_W-1:0] tw_row;

  always_comb begin
    fin_we      = state_q == S_FIN && fin_we_q;
    epsn_pend_d = epsn_pend_q;
    epsn_pqp_d  = epsn_pqp_q;
    epsn_ppsn_d = epsn_ppsn_q;
    tw_en       = 1'b0;
    tw_qp       = m_qp;
    tw_row      = row_n_q;
    if (fin_we) begin
      tw_en = 1'b1;
      if (epsn_set_valid) begin
        epsn_pend_d = 1'b1;
        epsn_pqp_d  = epsn_set_qp;
        epsn_ppsn_d = epsn_set_psn;
      end
    end else if (epsn_pend_q || epsn_set_valid) begin
      tw_en       = 1'b1;
      tw_qp       = epsn_pend_q ? epsn_pqp_q : epsn_set_qp;
      tw_row      = mk_row(epsn_pend_q ? epsn_ppsn_q : epsn_set_psn, 24'd0, 1'b0, 1'b0, CLS_IDLE,
                           64'd0, 32'd0, 32'd0, 34'd0, '0);
      epsn_pend_d = epsn_pend_q && epsn_set_valid;
      epsn_pqp_d  = epsn_set_qp;
      epsn_ppsn_d = epsn_set_psn;
    end
  end

  always_ff @(posedge clk) begin
    if (tw_en) row_mem_q[tw_qp] <= tw_row;
    if (state_q == S_IDLE && hd_valid && hd_ready_q) row_q <= row_mem_q[hd_qp];
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q         <= S_IDLE;
      hd_ready_q      <= 1'b1;
      m_q             <= '0;
      fl_qp_q         <= '0;
      fl_q            <= 1'b0;
      epsn_pend_q     <= 1'b0;
      epsn_pqp_q      <= '0;
      epsn_ppsn_q     <= '0;
      ctx_rd_valid_q  <= 1'b0;
      ctx_rd_qp_q     <= '0;
      mr_rd_valid_q   <= 1'b0;
      mr_rd_idx_q     <= '0;
      rqe_rd_valid_q  <= 1'b0;
      rqe_rd_qp_q     <= '0;
      c_uc_q          <= 1'b0;
      c_pd_q          <= '0;
      c_cq_q          <= '0;
      c_rqpn_q        <= '0;
      cur_q           <= '0;
      k_q             <= '0;
      off_q           <= '0;
      rest_q          <= '0;
      pos_q           <= '0;
      seg_n_q         <= '0;
      seg_i_q         <= '0;
      seg_off_q       <= '0;
      seg_len_q       <= '0;
      seg_addr_q      <= '0;
      tok_v_q         <= 1'b0;
      tok_q           <= '0;
      fin_ack_q       <= 1'b0;
      fin_psn_q       <= '0;
      fin_syn_q       <= '0;
      fin_msn_q       <= '0;
      fin_err_q       <= 1'b0;
      fin_pop_q       <= 1'b0;
      fin_we_q        <= 1'b0;
      fin_ev_q        <= '0;
      row_n_q         <= '0;
      wc_valid_q      <= 1'b0;
      wc_tok_q        <= 1'b0;
      wc_off_q        <= '0;
      wc_len_q        <= '0;
      wc_addr_q       <= '0;
      wc_last_q       <= 1'b0;
      wc_tok_data_q   <= '0;
      ack_valid_q     <= 1'b0;
      ack_qp_q        <= '0;
      ack_psn_q       <= '0;
      ack_syndrome_q  <= '0;
      ack_msn_q       <= '0;
      err_valid_q     <= 1'b0;
      err_qp_q        <= '0;
      rqe_pop_valid_q <= 1'b0;
      rqe_pop_qp_q    <= '0;
      ev_q            <= '0;
    end else begin
      state_q         <= state_d;
      hd_ready_q      <= hd_ready_d;
      m_q             <= m_d;
      fl_qp_q         <= fl_qp_d;
      fl_q            <= fl_d;
      epsn_pend_q     <= epsn_pend_d;
      epsn_pqp_q      <= epsn_pqp_d;
      epsn_ppsn_q     <= epsn_ppsn_d;
      ctx_rd_valid_q  <= ctx_rd_valid_d;
      ctx_rd_qp_q     <= ctx_rd_qp_d;
      mr_rd_valid_q   <= mr_rd_valid_d;
      mr_rd_idx_q     <= mr_rd_idx_d;
      rqe_rd_valid_q  <= rqe_rd_valid_d;
      rqe_rd_qp_q     <= rqe_rd_qp_d;
      c_uc_q          <= c_uc_d;
      c_pd_q          <= c_pd_d;
      c_cq_q          <= c_cq_d;
      c_rqpn_q        <= c_rqpn_d;
      cur_q           <= cur_d;
      k_q             <= k_d;
      off_q           <= off_d;
      rest_q          <= rest_d;
      pos_q           <= pos_d;
      seg_n_q         <= seg_n_d;
      seg_i_q         <= seg_i_d;
      seg_off_q       <= seg_off_d;
      seg_len_q       <= seg_len_d;
      seg_addr_q      <= seg_addr_d;
      tok_v_q         <= tok_v_d;
      tok_q           <= tok_d;
      fin_ack_q       <= fin_ack_d;
      fin_psn_q       <= fin_psn_d;
      fin_syn_q       <= fin_syn_d;
      fin_msn_q       <= fin_msn_d;
      fin_err_q       <= fin_err_d;
      fin_pop_q       <= fin_pop_d;
      fin_we_q        <= fin_we_d;
      fin_ev_q        <= fin_ev_d;
      row_n_q         <= row_n_d;
      wc_valid_q      <= wc_valid_d;
      wc_tok_q        <= wc_tok_d;
      wc_off_q        <= wc_off_d;
      wc_len_q        <= wc_len_d;
      wc_addr_q       <= wc_addr_d;
      wc_last_q       <= wc_last_d;
      wc_tok_data_q   <= wc_tok_data_d;
      ack_valid_q     <= ack_valid_d;
      ack_qp_q        <= ack_qp_d;
      ack_psn_q       <= ack_psn_d;
      ack_syndrome_q  <= ack_syndrome_d;
      ack_msn_q       <= ack_msn_d;
      err_valid_q     <= err_valid_d;
      err_qp_q        <= err_qp_d;
      rqe_pop_valid_q <= rqe_pop_valid_d;
      rqe_pop_qp_q    <= rqe_pop_qp_d;
      ev_q            <= ev_d;
    end
  end

  // ------------------------------------------------------------------
  // Assertions
  // ------------------------------------------------------------------
  // rx_buf's header queue holds an offer until it is taken.
  `RNIC_ASSERT_HANDSHAKE(a_hd_hold, clk, rst, hd_valid, hd_ready, hd_meta)
  // No assertion on EPSN writes: one held at S_FIN is written the next
  // cycle, never S_FIN again, and one arriving then is held in its place,
  // so none is ever lost.

  // Input bits the responder has no use for: REMOTE_ATOMIC and LOCAL_WRITE
  // of the QP, the MR's REMOTE_ATOMIC, the RECV's reserved bytes.
  logic unused_in;
  assign unused_in = ^{ctx_access[3], ctx_access[0], mr_access[3], rqe_data[1023:640],
                       rqe_data[127:72]};

  assign hd_ready      = hd_ready_q;
  assign ctx_rd_valid  = ctx_rd_valid_q;
  assign ctx_rd_qp     = ctx_rd_qp_q;
  assign mr_rd_valid   = mr_rd_valid_q;
  assign mr_rd_idx     = mr_rd_idx_q;
  assign rqe_rd_valid  = rqe_rd_valid_q;
  assign rqe_rd_qp     = rqe_rd_qp_q;
  assign rqe_pop_valid = rqe_pop_valid_q;
  assign rqe_pop_qp    = rqe_pop_qp_q;
  assign wc_valid      = wc_valid_q;
  assign wc_tok        = wc_tok_q;
  assign wc_off        = wc_off_q;
  assign wc_len        = wc_len_q;
  assign wc_addr       = wc_addr_q;
  assign wc_last       = wc_last_q;
  assign wc_tok_data   = wc_tok_data_q;
  assign ack_valid     = ack_valid_q;
  assign ack_qp        = ack_qp_q;
  assign ack_psn       = ack_psn_q;
  assign ack_syndrome  = ack_syndrome_q;
  assign ack_msn       = ack_msn_q;
  assign err_valid     = err_valid_q;
  assign err_qp        = err_qp_q;
  assign ev_exec       = ev_q[EV_EXEC];
  assign ev_dup        = ev_q[EV_DUP];
  assign ev_seq_nak    = ev_q[EV_SEQ];
  assign ev_rnr_nak    = ev_q[EV_RNR];
  assign ev_inv_nak    = ev_q[EV_INV];
  assign ev_acc_nak    = ev_q[EV_ACC];
  assign ev_op_nak     = ev_q[EV_OP];
  assign ev_recv       = ev_q[EV_RECV];
  assign ev_uc_drop    = ev_q[EV_UCD];
  assign ev_notready   = ev_q[EV_NR];
endmodule
