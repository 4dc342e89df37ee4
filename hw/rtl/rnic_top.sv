// The RNIC datapath behind the top-level ports of docs/architecture.md: the
// transmit path, the receive path (RX parser, ACK tracking, PFC),
// congestion control (CNP generation, DCQCN, rate limiters) and the
// responder (rx_buf, responder, rq_fetch, rx_wr, wr_arb, ack_gen).
// Model: model/src/rnic_top.rs (same instance and wire names).
//
// Only wiring lives here: every block registers its outputs, so the glue
// below (the read-data demultiplexer by client, the write-done
// demultiplexer, the MR lookup addressed by the popped WQE's lkey, the
// scheduler's allowance, the CNP handshake, the STAT_QP window on dcqcn's
// state, rx_buf's verdict, the charge rule, the responder token decode) is
// combinational on registered outputs and adds no cycle. See
// docs/tx_datapath.md, docs/rx_cc.md and docs/responder.md ("In rnic_top")
// for the contracts between the blocks.
module rnic_top #(
  parameter int QPS            = rnic_pkg::QPS,
  parameter int MRS            = rnic_pkg::MRS,
  parameter int CQS            = rnic_pkg::CQS,
  parameter int TAGS           = 64,
  parameter int BUF_LINES      = 512,
  // rx_buf's 64-byte lines (the received request packets it holds whole).
  parameter int RXB_LINES      = 512,
  // Link bits per clock cycle (100 Gb/s at 250 MHz), for PFC pause times.
  parameter int BITS_PER_CYCLE = rnic_pkg::BITS_PER_CYCLE,
  // Completions ack_tracker holds per QP.
  parameter int ACK_DEPTH      = 8
) (
  input  logic         clk,
  input  logic         rst,
  input  logic         mmio_wr_valid,
  input  logic [15:0]  mmio_wr_addr,
  input  logic [31:0]  mmio_wr_data,
  input  logic         mmio_rd_valid,
  input  logic [15:0]  mmio_rd_addr,
  output logic         mmio_rd_resp_valid,
  output logic [31:0]  mmio_rd_resp_data,
  output logic         rq_valid,
  input  logic         rq_ready,
  output logic [511:0] rq_data,
  output logic [63:0]  rq_keep,
  output logic         rq_sop,
  output logic         rq_eop,
  input  logic         rc_valid,
  output logic         rc_ready,
  input  logic [511:0] rc_data,
  input  logic [63:0]  rc_keep,
  input  logic         rc_sop,
  input  logic         rc_eop,
  output logic         tx_tvalid,
  input  logic         tx_tready,
  output logic [511:0] tx_tdata,
  output logic [63:0]  tx_tkeep,
  output logic         tx_tlast,
  input  logic         rx_tvalid,
  input  logic [511:0] rx_tdata,
  input  logic [63:0]  rx_tkeep,
  input  logic         rx_tlast,
  input  logic         rx_tuser,
  output logic         irq_valid,
  output logic [1:0]   irq_cq
);
  localparam int QPW = (QPS > 1) ? $clog2(QPS) : 1;
  localparam int MRW = (MRS > 1) ? $clog2(MRS) : 1;
  localparam int CQW = (CQS > 1) ? $clog2(CQS) : 1;
  // WQE byte offset of the lkey (docs/tx_datapath.md, WQE layout).
  localparam int WQE_LKEY_BIT = 8 * 8'h18;

  if (CQW != 2) begin : g_bad_cqs
    $error("rnic_top: irq_cq is 2 bits wide, CQS must be 3 or 4");
  end

  // ---------------- csr ----------------
  logic [2:0]   cfg_mrrs, cfg_mps;
  logic [15:0]  cfg_req_id;
  logic [23:0]  cfg_cpl_timeout;
  logic         db_valid;
  logic [QPW-1:0] db_qp;
  logic [15:0]  db_pi;
  logic [1:0]   db_state;
  logic [63:0]  db_sq_base;
  logic [4:0]   db_sq_log;
  logic [QPW-1:0] qp_idx;
  logic [1:0]   qp_state;
  logic         qp_uc, qp_ipv6, qp_vlan_en, qp_ecn_en;
  logic [2:0]   qp_mtu, qp_max_rd;
  logic [CQW-1:0] qp_cq;
  logic [23:0]  qp_remote_qpn, qp_psn;
  logic [15:0]  qp_pd;
  logic [47:0]  qp_dst_mac, qp_src_mac;
  logic [127:0] qp_src_ip, qp_dst_ip;
  logic [15:0]  qp_udp_sport;
  logic [5:0]   qp_dscp;
  logic [11:0]  qp_vid;
  logic [2:0]   qp_pcp;
  logic [15:0]  qp_pkey;
  logic [3*QPS-1:0] qp_pcp_all;
  logic         mr_valid;
  logic [31:0]  mr_key;
  logic [63:0]  mr_va, mr_len, mr_pbase;
  logic [3:0]   mr_access;
  logic [15:0]  mr_pd;
  logic [CQW-1:0] cq_idx;
  logic [63:0]  cq_base;
  logic [4:0]   cq_log;
  logic         psn_wr_valid;
  logic [QPW-1:0] psn_wr_qp;
  logic [23:0]  psn_wr_psn;
  logic         te_err_valid, sqf_err_valid;
  logic [QPW-1:0] te_err_qp, sqf_err_qp;
  logic         ev_tx_frame, ev_cqe, ev_prot_err, ev_flush, ev_dma_err;
  logic [13:0]  ev_tx_len;
  logic [3:0]   ev_wqe_n;
  logic [31:0]  cnt_cpl_unexpected, cnt_cpl_malformed, cnt_cpl_timeout;

  // ---------------- sq_fetch / tx_sched / tx_engine ----------------
  logic         sqf_rd_req_valid, sqf_rd_req_ready;
  logic [63:0]  sqf_rd_req_addr;
  logic [16:0]  sqf_rd_req_len;
  logic         sqf_rd_data_ready;
  logic [QPS-1:0] wqe_avail, req_active;
  logic         wqe_pop_valid;
  logic [QPW-1:0] wqe_pop_qp;
  logic         wqe_valid;
  logic [QPW-1:0] wqe_qp;
  logic [511:0] wqe_data;
  logic         grant_valid, grant_ready;
  logic [QPW-1:0] grant_qp;
  logic         te_rd_req_valid, te_rd_req_ready;
  logic [63:0]  te_rd_req_addr;
  logic [16:0]  te_rd_req_len;

  // ---------------- descriptor tx_engine -> pkt_builder ----------------
  logic         desc_valid, desc_ready;
  logic [QPW-1:0] desc_qp;
  logic         desc_cpl;
  logic [47:0]  desc_dst_mac, desc_src_mac;
  logic         desc_vlan_en;
  logic [2:0]   desc_pcp;
  logic [11:0]  desc_vid;
  logic         desc_ipv6;
  logic [127:0] desc_src_ip, desc_dst_ip;
  logic [5:0]   desc_dscp;
  logic [1:0]   desc_ecn;
  logic [15:0]  desc_udp_sport;
  logic [7:0]   desc_opcode;
  logic         desc_se;
  logic [15:0]  desc_pkey;
  logic         desc_becn;
  logic [23:0]  desc_dest_qp;
  logic         desc_ack_req;
  logic [23:0]  desc_psn;
  logic         desc_reth_en;
  logic [63:0]  desc_reth_va;
  logic [31:0]  desc_reth_rkey, desc_reth_len;
  logic         desc_imm_en;
  logic [31:0]  desc_imm;
  logic         desc_aeth_en;
  logic [31:0]  desc_aeth;
  logic         desc_cnp_pad;
  logic [12:0]  desc_pay_len;

  // ---------------- completions ----------------
  logic         cpl_valid, cpl_ready, cpl_wait_frame;
  logic [63:0]  cpl_wr_id;
  logic [7:0]   cpl_status, cpl_opcode;
  logic [31:0]  cpl_len, cpl_imm;
  logic [QPW-1:0] cpl_qp;
  logic [CQW-1:0] cpl_cq;
  logic         cpl_imm_flag;
  logic [23:0]  cpl_src_qp;
  // ack_tracker's requester completions, before cq_arb merges them with
  // the responder's RECV completions.
  logic         at_out_valid, at_out_ready, at_out_wait_frame;
  logic [63:0]  at_out_wr_id;
  logic [7:0]   at_out_status, at_out_opcode;
  logic [31:0]  at_out_len, at_out_imm;
  logic [QPW-1:0] at_out_qp;
  logic [CQW-1:0] at_out_cq;
  logic         frame_done_valid, frame_done_err;
  logic         cqw_wr_req_valid, cqw_wr_req_ready;
  logic [63:0]  cqw_wr_req_addr;
  logic [16:0]  cqw_wr_req_len;
  logic         cqw_wr_data_valid, cqw_wr_data_ready;
  logic [511:0] cqw_wr_data;
  logic         cqw_wr_done_valid;

  // ---------------- DMA ----------------
  logic         rd_req_valid, rd_req_ready;
  logic [63:0]  rd_req_addr;
  logic [16:0]  rd_req_len;
  logic [1:0]   rd_req_client;
  logic         rd_data_valid, rd_data_ready, rd_data_last, pay_ready;
  logic [511:0] rd_data;
  logic [1:0]   rd_data_client;
  logic [2:0]   rd_data_status;
  logic         rdq_valid, rdq_ready, rdq_sop, rdq_eop;
  logic [511:0] rdq_data;
  logic [63:0]  rdq_keep;
  logic         wrq_valid, wrq_ready, wrq_sop, wrq_eop;
  logic [511:0] wrq_data;
  logic [63:0]  wrq_keep;
  // dma_wr's two clients behind wr_arb (0 cq_writer, 1 rx_wr).
  logic         wr_req_valid, wr_req_ready, wr_req_client;
  logic [63:0]  wr_req_addr;
  logic [16:0]  wr_req_len;
  logic         wr_data_valid, wr_data_ready;
  logic [511:0] wr_data;
  logic         wr_done_valid;
  logic [1:0]   wr_done_client;
  // Engine status outputs this top does not use (dma_rd's occupancy).
  /* verilator lint_off UNUSEDSIGNAL */
  logic [63:0]  rd_data_keep_unused;
  logic [8:0]   stat_tags_busy_unused;
  logic [15:0]  stat_free_lines_unused;
  // The ACK's MSN: ack_tracker matches ACKs by PSN.
  logic [23:0]  ack_msn_unused;
  // rx_buf's beat metadata and priority (the responder works from the
  // header queue; rx_wr needs only the bytes).
  logic [255:0] rxb_out_meta_unused;
  logic [2:0]   rxb_out_prio_unused;
  /* verilator lint_on UNUSEDSIGNAL */

  // ---------------- receive path, PFC, congestion control ----------------
  logic [3:0]   cfg_g_shift;
  logic [7:0]   cfg_f;
  logic [23:0]  cfg_k, cfg_t_inc, cfg_rl_burst, cfg_cnp_interval;
  logic [31:0]  cfg_b, cfg_r_ai, cfg_r_hai, cfg_r_min, cfg_r_max;
  logic [10:0]  cfg_alpha_init;
  logic [5:0]   cfg_mode;
  logic [23:0]  cfg_mon, cfg_alpha_t;
  logic [5:0]   cfg_cnp_dscp;
  logic [2:0]   cfg_cnp_pcp;
  logic         cfg_cnp_becn;
  logic [QPW-1:0] cfg_stat_qp;
  logic [2*QPS-1:0] qp_state_all;
  logic [QPS-1:0] qp_cc_en_all;
  logic         pfc_valid;
  logic [7:0]   pfc_enable, pause;
  logic [127:0] pfc_quanta;
  logic         rxp_cnp_valid, data_valid, data_ce, ack_valid;
  logic [QPW-1:0] rxp_cnp_qp, data_qp, ack_qp;
  logic [23:0]  ack_psn;
  logic [7:0]   ack_syndrome;
  logic         ev_rx_frame, ev_drop, ev_rx_ce, ev_ce_suppressed, ev_cnp_sent;
  logic         ev_ack_new, ev_ack_dup, ev_nak, ev_ack_invalid;
  // Software set a QP's PSN (csr): ack_tracker restarts its window there.
  logic         psn_set_valid;
  logic [QPW-1:0] psn_set_qp;
  logic [23:0]  psn_set_psn;
  logic [2:0]   ev_drop_reason;
  logic [32*QPS-1:0] dc_rc, dc_rt;
  logic [11*QPS-1:0] dc_alpha;
  logic [31:0]  dc_cnt_cnp, dc_cnt_cut, dc_cnt_fr, dc_cnt_ai, dc_cnt_hai, dc_cnt_alpha;
  logic [QPS-1:0] rl_rate_ok, ack_full;
  logic           at_err_valid;
  logic [QPW-1:0] at_err_qp;
  logic         cg_cnp_valid, cg_cnp_ready;
  logic [QPW-1:0] cg_cnp_qp;
  // ack_gen's offer (the responder's ACK / NAK) and tx_engine's control
  // round robin.
  logic         ag_ack_valid, ag_ack_ready, ctrl_take, ctrl_ack_first;
  logic [QPW-1:0] ag_ack_qp;
  logic [23:0]  ag_ack_psn, ag_ack_msn;
  logic [7:0]   ag_ack_syndrome;
  logic         grant_ctrl, charge_valid;
  logic [13:0]  desc_wire_len;
  // tx_engine's completions, before ack_tracker orders them.
  logic         te_cpl_valid, te_cpl_ready, te_cpl_wait_frame, te_cpl_uc;
  logic [63:0]  te_cpl_wr_id;
  logic [7:0]   te_cpl_status, te_cpl_opcode;
  logic [31:0]  te_cpl_len, te_cpl_imm;
  logic [QPW-1:0] te_cpl_qp;
  logic [CQW-1:0] te_cpl_cq;
  logic [23:0]  te_cpl_psn;

  // ---------------- responder side ----------------
  // csr's responder ports: RQ doorbells, context and MR lookups, EPSN
  // writes, the QPs in ERROR.
  logic         rq_db_valid;
  logic [QPW-1:0] rq_db_qp;
  logic [15:0]  rq_db_pi;
  logic [2:0]   rq_db_state;
  logic [63:0]  rq_db_base;
  logic [4:0]   rq_db_log;
  logic [2:0]   rctx_state, rctx_mtu;
  logic         rctx_uc;
  logic [15:0]  rctx_pd, rmr_pd;
  logic [CQW-1:0] rctx_rq_cq;
  logic [4:0]   rctx_rnr_timer;
  logic [2:0]   rctx_max_rd;
  logic [3:0]   rctx_access, rmr_access;
  logic [23:0]  rctx_remote_qpn;
  logic         rmr_valid;
  logic [31:0]  rmr_key;
  logic [63:0]  rmr_va, rmr_len, rmr_pbase;
  logic         epsn_set_valid;
  logic [QPW-1:0] epsn_set_qp;
  logic [23:0]  epsn_set_psn;
  logic [QPS-1:0] qp_err_all;
  // rx_parser -> rx_buf (verdict) -> responder (headers), rx_wr (bytes).
  logic [255:0] data_meta;
  logic         rxb_vd_keep;
  logic         rxb_out_valid, rxb_out_last;
  logic [511:0] rxb_out_data;
  logic [63:0]  rxb_out_keep;
  logic         rxb_hd_valid;
  logic [255:0] rxb_hd_meta;
  // tx_engine's READ REQUEST record, for rd_sink.
  logic           te_rr_valid;
  logic [QPW-1:0] te_rr_qp;
  logic [23:0]    te_rr_psn;
  logic [31:0]    te_rr_len;
  logic [63:0]    te_rr_addr;
  logic [2:0]     te_rr_mtu, te_rr_max;
  // A QP may start no new WQE: its ack_tracker queue is full, or it has
  // as many READs outstanding as its max_rd_atomic allows (rd_sink).
  logic [QPS-1:0] snk_rr_block, sq_block;
  logic         rxb_ev_drop_full;
  // responder
  logic         rsp_hd_ready;
  logic [QPW-1:0] rsp_ctx_rd_qp, rsp_rqe_rd_qp, rsp_rqe_pop_qp, rsp_ack_qp, rsp_err_qp;
  logic [MRW-1:0] rsp_mr_rd_idx;
  logic         rsp_rqe_rd_valid, rsp_rqe_pop_valid;
  logic         rsp_wc_valid, rsp_wc_tok, rsp_wc_last;
  logic [12:0]  rsp_wc_off, rsp_wc_len;
  logic [63:0]  rsp_wc_addr;
  logic [resp_pkg::TOK_W-1:0] rsp_wc_tok_data;
  // The header and command paths shared by the responder (r) and rd_sink
  // (s): rx_wr's command inputs after the multiplexer.
  logic         rsp_hd_valid, snk_hd_valid, snk_hd_ready, rxb_hd_ready, hd_is_rr;
  // Frames open per consumer: 0..2 (a consumer may take its next header
  // while its last command of the previous one still waits for rx_wr).
  logic [1:0]   r_open_q, s_open_q;
  logic         r_take, r_done, s_take, s_done;
  logic         wc_hold_q, wc_sel_s_q, wc_sel_s;
  logic         snk_wc_valid, snk_wc_tok, snk_wc_last;
  logic [12:0]  snk_wc_off, snk_wc_len;
  logic [63:0]  snk_wc_addr;
  logic [resp_pkg::TOK_W-1:0] snk_wc_tok_data;
  logic         mx_wc_valid, mx_wc_tok, mx_wc_last;
  logic [12:0]  mx_wc_off, mx_wc_len;
  logic [63:0]  mx_wc_addr;
  logic [resp_pkg::TOK_W-1:0] mx_wc_tok_data;
  logic         snk_ev_exec, snk_ev_done, snk_ev_unexp, snk_ev_dup, snk_ev_seq, snk_ev_bad;
  logic         snk_ev_rr_full, rxw_tok_rdone;
  logic         rsp_ack_valid;
  logic [23:0]  rsp_ack_psn, rsp_ack_msn;
  logic [7:0]   rsp_ack_syndrome;
  logic         rsp_err_valid;
  logic         rsp_ev_exec, rsp_ev_dup, rsp_ev_seq_nak, rsp_ev_rnr_nak, rsp_ev_inv_nak;
  logic         rsp_ev_acc_nak, rsp_ev_op_nak, rsp_ev_recv, rsp_ev_uc_drop, rsp_ev_notready;
  // The lookups' valid bits: csr's lookups are free-running registers
  // addressed by the index alone.
  /* verilator lint_off UNUSEDSIGNAL */
  logic         rsp_ctx_rd_valid_unused, rsp_mr_rd_valid_unused;
  // rd_req_arb's client 3: reserved (READ response payload is read by
  // tx_engine, client 1).
  logic         arb_d_ready_unused;
  // ack_tracker's READs completed: rd_sink's ev_done counts them.
  logic           at_ev_rd_done_unused;
  // Retransmission (docs/retransmission.md).
  logic           at_nak_valid, at_nak_rnr;
  logic [QPW-1:0] at_nak_qp;
  logic [23:0]    at_nak_psn;
  logic [4:0]     at_nak_timer;
  logic [24*QPS-1:0] at_una_all;
  logic [QPS-1:0] at_busy;
  logic           at_xerr_ready;
  logic [QPS-1:0] at_err_mode;  // ack_tracker error mode per QP, to tx_engine
  logic           at_anc_valid;
  logic [QPW-1:0] at_anc_qp;
  logic [15:0]    at_anc_idx;
  logic [23:0]    at_anc_psn;
  logic           te_rw_ready, te_sq_rw_valid;
  logic [QPW-1:0] te_sq_rw_qp;
  logic [15:0]    te_sq_rw_idx, te_cpl_idx;
  logic [QPS-1:0] te_rpl_all;
  logic [15:0]    sqf_wqe_idx;
  logic [QPW-1:0] rtx_attr_idx;
  logic [4:0]     xctx_timeout;
  logic [2:0]     xctx_retry, xctx_rnr_retry;
  logic           snk_gap_valid;
  logic [QPW-1:0] snk_gap_qp;
  logic [23:0]    snk_gap_psn;
  logic           snk_prog_valid;
  logic [QPW-1:0] snk_prog_qp;
  logic [23:0]    snk_prog_psn;
  logic           rtx_rw_valid;
  logic [QPW-1:0] rtx_rw_qp;
  logic [23:0]    rtx_rw_psn;
  logic           rtx_xerr_valid;
  logic [QPW-1:0] rtx_xerr_qp;
  logic [7:0]     rtx_xerr_status;
  logic [QPS-1:0] rtx_hold;
  // rd_sink's ring-full pulse: never in a conforming run (its rr_block
  // stops the QP first; rd_sink asserts it), not counted.
  logic           snk_ev_rr_full_unused;
  /* verilator lint_on UNUSEDSIGNAL */
  // retx_ctl's event pulses, counted by csr (block RETX).
  logic           rtx_ev_timeout, rtx_ev_rewind, rtx_ev_rnr_wait, rtx_ev_exhaust;
  // rq_fetch
  logic         rqf_rd_req_valid, rqf_rd_req_ready, rqf_rd_data_ready;
  logic [63:0]  rqf_rd_req_addr;
  logic [16:0]  rqf_rd_req_len;
  logic [QPS-1:0] rqf_rqe_avail;
  logic         rqf_rqe_present;
  logic [1023:0] rqf_rqe_data;
  logic         rqf_err_valid;
  logic [QPW-1:0] rqf_err_qp;
  logic [3:0]   rqf_ev_rqe_n;
  // rx_wr
  logic         rxw_wc_ready, rxw_in_ready;
  logic         rxw_wr_req_valid, rxw_wr_req_ready, rxw_wr_data_valid, rxw_wr_data_ready;
  logic [63:0]  rxw_wr_req_addr;
  logic [16:0]  rxw_wr_req_len;
  logic [511:0] rxw_wr_data;
  logic         rxw_tok_valid, rxw_tok_ready, rxw_tok_cqe, rxw_tok_read;
  logic [resp_pkg::TOK_W-1:0] rxw_tok_data;
  // rd_resp <-> tx_engine (READ jobs)
  logic           rdr_job_ready, rdr_ev_job, rdr_ev_job_full;
  logic [QPS-1:0] rdr_job_avail;
  logic           te_job_rd_valid, te_job_pop_valid;
  logic [QPW-1:0] te_job_rd_qp, te_job_pop_qp;
  logic           rdr_job_present;
  logic [23:0]    rdr_job_psn, rdr_job_msn;
  logic [63:0]    rdr_job_addr;
  logic [31:0]    rdr_job_len;
  logic [2:0]     rdr_job_mtu;
  logic         rxw_ev_write;
  logic [12:0]  rxw_ev_bytes;
  // ack_gen's events, cq_arb's responder input.
  logic         ag_ev_ack, ag_ev_coalesced, cqa_b_ready;

  // PFC generation's wires (docs/pfc_gen.md; the block is below).
  logic [8*($clog2(RXB_LINES)+1)-1:0] rxb_prio_lines;
  logic [7:0]   cfg_pfcg_en;
  logic [9:0]   cfg_pfcg_xoff, cfg_pfcg_xon;
  logic [15:0]  cfg_pfcg_time;
  logic [23:0]  cfg_pfcg_refresh;
  logic [47:0]  cfg_pfcg_src_mac;
  logic         pg_valid, pg_ready, pg_ev_xoff, pg_ev_xon;
  logic [7:0]   pg_enable;
  logic [127:0] pg_quanta;

  csr #(.QPS(QPS), .MRS(MRS), .CQS(CQS)) u_csr (
    .clk, .rst,
    .mmio_wr_valid, .mmio_wr_addr, .mmio_wr_data,
    .mmio_rd_valid, .mmio_rd_addr,
    .mmio_rd_resp_valid, .mmio_rd_resp_data,
    .cfg_mrrs, .cfg_mps, .cfg_req_id, .cfg_cpl_timeout,
    .db_valid, .db_qp, .db_pi, .db_state, .db_sq_base, .db_sq_log,
    .qp_idx,
    .qp_state, .qp_uc, .qp_ipv6, .qp_vlan_en, .qp_ecn_en, .qp_mtu, .qp_max_rd, .qp_cq,
    .qp_remote_qpn, .qp_psn, .qp_pd, .qp_dst_mac, .qp_src_mac, .qp_src_ip,
    .qp_dst_ip, .qp_udp_sport, .qp_dscp, .qp_vid, .qp_pcp, .qp_pkey,
    .qp_pcp_all,
    .mr_idx(wqe_data[WQE_LKEY_BIT +: MRW]),
    .mr_valid, .mr_key, .mr_va, .mr_len, .mr_pbase, .mr_access, .mr_pd,
    .cq_idx, .cq_base, .cq_log,
    .psn_wr_valid, .psn_wr_qp, .psn_wr_psn,
    .psn_set_valid, .psn_set_qp, .psn_set_psn,
    .err_a_valid(te_err_valid), .err_a_qp(te_err_qp),
    .err_b_valid(sqf_err_valid), .err_b_qp(sqf_err_qp),
    // The responder's "QP to ERROR" and rq_fetch's failed RECV reads.
    .err_c_valid(rsp_err_valid), .err_c_qp(rsp_err_qp),
    .err_d_valid(rqf_err_valid), .err_d_qp(rqf_err_qp),
    // ack_tracker's remote-error NAKs: the requester QP to ERROR.
    .err_e_valid(at_err_valid), .err_e_qp(at_err_qp),
    .rq_db_valid, .rq_db_qp, .rq_db_pi, .rq_db_state, .rq_db_base, .rq_db_log,
    // The responder's context and MR lookups: registered in csr, data the
    // cycle after the index, as the responder expects.
    .rctx_idx(rsp_ctx_rd_qp), .rctx_state, .rctx_uc, .rctx_mtu, .rctx_pd, .rctx_rq_cq,
    .rctx_rnr_timer, .rctx_max_rd, .rctx_access, .rctx_remote_qpn,
    .xctx_idx(rtx_attr_idx), .xctx_timeout, .xctx_retry, .xctx_rnr_retry,
    .rmr_idx(rsp_mr_rd_idx), .rmr_valid, .rmr_key, .rmr_va, .rmr_len, .rmr_pbase, .rmr_access,
    .rmr_pd,
    .epsn_set_valid, .epsn_set_qp, .epsn_set_psn, .qp_err_all,
    .ev_tx_frame, .ev_tx_len, .ev_wqe_n, .ev_cqe, .ev_prot_err, .ev_flush,
    .ev_fetch_err(sqf_err_valid), .ev_dma_err,
    .dma_cpl_unexpected(cnt_cpl_unexpected),
    .dma_cpl_malformed(cnt_cpl_malformed),
    .dma_cpl_timeout(cnt_cpl_timeout),
    .cfg_g_shift, .cfg_f, .cfg_k, .cfg_t_inc, .cfg_b, .cfg_r_ai, .cfg_r_hai,
    .cfg_r_min, .cfg_r_max, .cfg_alpha_init, .cfg_mode, .cfg_mon, .cfg_alpha_t,
    .cfg_rl_burst, .cfg_cnp_dscp,
    .cfg_cnp_pcp, .cfg_cnp_becn, .cfg_cnp_interval, .cfg_stat_qp,
    .cfg_pfcg_en, .cfg_pfcg_xoff, .cfg_pfcg_xon, .cfg_pfcg_time, .cfg_pfcg_refresh,
    .cfg_pfcg_src_mac,
    .qp_state_all, .qp_cc_en_all,
    .ev_rx_frame, .ev_rx_pfc(pfc_valid), .ev_rx_cnp(rxp_cnp_valid), .ev_rx_ack(ack_valid),
    .ev_rx_data(data_valid), .ev_rx_ce, .ev_drop, .ev_drop_reason, .ev_ack_new, .ev_ack_dup,
    .ev_nak, .ev_ack_invalid, .ev_cnp_sent, .ev_ce_suppressed,
    .ev_resp_exec(rsp_ev_exec), .ev_resp_dup(rsp_ev_dup), .ev_resp_nak_seq(rsp_ev_seq_nak),
    .ev_resp_nak_rnr(rsp_ev_rnr_nak), .ev_resp_nak_inv(rsp_ev_inv_nak),
    .ev_resp_nak_acc(rsp_ev_acc_nak), .ev_resp_nak_op(rsp_ev_op_nak),
    .ev_resp_recv(rsp_ev_recv), .ev_resp_uc_drop(rsp_ev_uc_drop),
    .ev_resp_not_ready(rsp_ev_notready), .ev_rxbuf_full(rxb_ev_drop_full),
    .ev_rq_fetch_err(rqf_err_valid), .ev_rx_write(rxw_ev_write),
    .ev_rx_write_bytes(rxw_ev_bytes), .ev_ack_sent(ag_ev_ack),
    .ev_ack_coalesced(ag_ev_coalesced), .ev_read_job(rdr_ev_job),
    .ev_read_job_full(rdr_ev_job_full),
    .ev_snk({snk_ev_bad, snk_ev_seq, snk_ev_dup, snk_ev_unexp, snk_ev_done, snk_ev_exec}),
    .ev_pfcg_xoff(pg_ev_xoff), .ev_pfcg_xon(pg_ev_xon),
    .ev_retx({rtx_ev_exhaust, rtx_ev_rnr_wait, rtx_ev_rewind, rtx_ev_timeout}),
    .ev_rqe_n(rqf_ev_rqe_n),
    .dcqcn_cnt_cnp(dc_cnt_cnp), .dcqcn_cnt_cut(dc_cnt_cut), .dcqcn_cnt_fr(dc_cnt_fr),
    .dcqcn_cnt_ai(dc_cnt_ai), .dcqcn_cnt_hai(dc_cnt_hai), .dcqcn_cnt_alpha(dc_cnt_alpha),
    .stat_rc(dc_rc[32*cfg_stat_qp +: 32]), .stat_rt(dc_rt[32*cfg_stat_qp +: 32]),
    .stat_alpha(dc_alpha[11*cfg_stat_qp +: 11])
  );

  rx_parser #(.QPS(QPS)) u_rx_parser (
    .clk, .rst,
    .rx_tvalid, .rx_tdata, .rx_tkeep, .rx_tlast, .rx_tuser,
    .qp_state_all,
    .pfc_valid, .pfc_enable, .pfc_quanta,
    .cnp_valid(rxp_cnp_valid), .cnp_qp(rxp_cnp_qp),
    .data_valid, .data_qp, .data_ce, .data_meta,
    .ack_valid, .ack_qp, .ack_psn, .ack_syndrome, .ack_msn(ack_msn_unused),
    .ev_frame(ev_rx_frame), .ev_drop, .ev_drop_reason
  );

  pfc #(.BITS_PER_CYCLE(BITS_PER_CYCLE)) u_pfc (
    .clk, .rst,
    .pfc_valid, .pfc_enable, .pfc_quanta, .pause
  );

  cnp_gen #(.QPS(QPS)) u_cnp_gen (
    .clk, .rst,
    .ce_valid(data_valid && data_ce), .ce_qp(data_qp),
    .cfg_interval(cfg_cnp_interval),
    .cnp_valid(cg_cnp_valid), .cnp_qp(cg_cnp_qp), .cnp_ready(cg_cnp_ready),
    .ev_ce(ev_rx_ce), .ev_ce_suppressed, .ev_cnp(ev_cnp_sent)
  );

  // ---------------- responder (docs/responder.md, "In rnic_top") ----------------
  // rx_buf's verdict, one per frame in frame order: rx_parser's ev_frame
  // pulses for every frame it saw (its last beat + 2, dropped frames too),
  // and a request packet's data_valid/data_meta come in that same cycle.
  // Kept: data packets (requests and READ RESPONSEs) for a QP not in
  // RESET that passed every check.
  assign rxb_vd_keep = data_valid;

  rx_buf #(.LINES(RXB_LINES)) u_rx_buf (
    .clk, .rst,
    .in_valid(rx_tvalid), .in_data(rx_tdata), .in_keep(rx_tkeep), .in_last(rx_tlast),
    .vd_valid(ev_rx_frame), .vd_keep(rxb_vd_keep), .vd_meta(data_meta),
    .out_valid(rxb_out_valid), .out_data(rxb_out_data), .out_keep(rxb_out_keep),
    .out_last(rxb_out_last), .out_meta(rxb_out_meta_unused), .out_prio(rxb_out_prio_unused),
    .out_ready(rxw_in_ready),
    .hd_valid(rxb_hd_valid), .hd_ready(rxb_hd_ready), .hd_meta(rxb_hd_meta),
    .prio_lines(rxb_prio_lines),
    .ev_drop_full(rxb_ev_drop_full)
  );

  responder #(.QPS(QPS), .MRS(MRS), .CQS(CQS)) u_responder (
    .clk, .rst,
    .hd_valid(rsp_hd_valid), .hd_ready(rsp_hd_ready), .hd_meta(rxb_hd_meta),
    .ctx_rd_valid(rsp_ctx_rd_valid_unused), .ctx_rd_qp(rsp_ctx_rd_qp),
    .ctx_state(rctx_state), .ctx_uc(rctx_uc), .ctx_mtu(rctx_mtu), .ctx_pd(rctx_pd),
    .ctx_rq_cq(rctx_rq_cq), .ctx_rnr_timer(rctx_rnr_timer), .ctx_max_rd(rctx_max_rd),
    .ctx_access(rctx_access),
    .ctx_remote_qpn(rctx_remote_qpn),
    .mr_rd_valid(rsp_mr_rd_valid_unused), .mr_rd_idx(rsp_mr_rd_idx),
    .mr_valid(rmr_valid), .mr_key(rmr_key), .mr_va(rmr_va), .mr_len(rmr_len),
    .mr_pbase(rmr_pbase), .mr_access(rmr_access), .mr_pd(rmr_pd),
    .rqe_rd_valid(rsp_rqe_rd_valid), .rqe_rd_qp(rsp_rqe_rd_qp),
    .rqe_present(rqf_rqe_present), .rqe_data(rqf_rqe_data),
    .rqe_pop_valid(rsp_rqe_pop_valid), .rqe_pop_qp(rsp_rqe_pop_qp),
    .rqe_avail(rqf_rqe_avail), .qp_err(qp_err_all),
    .epsn_set_valid, .epsn_set_qp, .epsn_set_psn,
    .wc_valid(rsp_wc_valid), .wc_ready(rxw_wc_ready && !wc_sel_s), .wc_tok(rsp_wc_tok),
    .wc_off(rsp_wc_off), .wc_len(rsp_wc_len), .wc_addr(rsp_wc_addr), .wc_last(rsp_wc_last),
    .wc_tok_data(rsp_wc_tok_data),
    .ack_valid(rsp_ack_valid), .ack_qp(rsp_ack_qp), .ack_psn(rsp_ack_psn),
    .ack_syndrome(rsp_ack_syndrome), .ack_msn(rsp_ack_msn),
    .err_valid(rsp_err_valid), .err_qp(rsp_err_qp),
    .ev_exec(rsp_ev_exec), .ev_dup(rsp_ev_dup), .ev_seq_nak(rsp_ev_seq_nak),
    .ev_rnr_nak(rsp_ev_rnr_nak), .ev_inv_nak(rsp_ev_inv_nak), .ev_acc_nak(rsp_ev_acc_nak),
    .ev_op_nak(rsp_ev_op_nak), .ev_recv(rsp_ev_recv), .ev_uc_drop(rsp_ev_uc_drop),
    .ev_notready(rsp_ev_notready)
  );

  rq_fetch #(.QPS(QPS)) u_rq_fetch (
    .clk, .rst,
    .db_valid(rq_db_valid), .db_qp(rq_db_qp), .db_pi(rq_db_pi), .db_state(rq_db_state),
    .db_base(rq_db_base), .db_log(rq_db_log),
    .rd_req_valid(rqf_rd_req_valid), .rd_req_ready(rqf_rd_req_ready),
    .rd_req_addr(rqf_rd_req_addr), .rd_req_len(rqf_rd_req_len),
    .rd_data_valid(rd_data_valid && rd_data_client == 2'd2),
    .rd_data_ready(rqf_rd_data_ready),
    .rd_data, .rd_data_last, .rd_data_status,
    .rqe_avail(rqf_rqe_avail),
    .rqe_rd_valid(rsp_rqe_rd_valid), .rqe_rd_qp(rsp_rqe_rd_qp),
    .rqe_present(rqf_rqe_present), .rqe_data(rqf_rqe_data),
    .rqe_pop_valid(rsp_rqe_pop_valid), .rqe_pop_qp(rsp_rqe_pop_qp),
    .err_valid(rqf_err_valid), .err_qp(rqf_err_qp),
    .ev_rqe_n(rqf_ev_rqe_n)
  );

  // ---- the header and command paths shared with rd_sink ----
  // rx_buf's header queue feeds the responder (requests) or rd_sink (READ
  // RESPONSEs). Both give rx_wr commands for the frame at the head of
  // rx_buf's bytes, so a header goes to one only while the other has no
  // frame open (a frame is open from its header's take until its wc_last
  // command is taken; counted, since a consumer may take its next header
  // before rx_wr took the last command of the one before): frames'
  // commands never interleave. Tokens (the responder's flushes, rd_sink's
  // READ done) come between frames anyway.
  assign hd_is_rr = rxb_hd_meta[rx_meta_pkg::OPCODE_LO +: 8] >= rnic_pkg::BTH_RC_RD_RESP_FIRST
                 && rxb_hd_meta[rx_meta_pkg::OPCODE_LO +: 8] <= rnic_pkg::BTH_RC_RD_RESP_ONLY;
  assign rsp_hd_valid = rxb_hd_valid && !hd_is_rr && s_open_q == 2'd0;
  assign snk_hd_valid = rxb_hd_valid && hd_is_rr && r_open_q == 2'd0;
  assign rxb_hd_ready = hd_is_rr ? (snk_hd_ready && r_open_q == 2'd0)
                                 : (rsp_hd_ready && s_open_q == 2'd0);
  assign r_take = rsp_hd_valid && rsp_hd_ready;
  assign s_take = snk_hd_valid && snk_hd_ready;
  // rx_wr's command port: the responder first, except that an offer not
  // taken stays (wc_hold_q) so rx_wr sees it unchanged.
  assign wc_sel_s = wc_hold_q ? wc_sel_s_q : !rsp_wc_valid;
  assign mx_wc_valid    = wc_sel_s ? snk_wc_valid : rsp_wc_valid;
  assign mx_wc_tok      = wc_sel_s ? snk_wc_tok : rsp_wc_tok;
  assign mx_wc_off      = wc_sel_s ? snk_wc_off : rsp_wc_off;
  assign mx_wc_len      = wc_sel_s ? snk_wc_len : rsp_wc_len;
  assign mx_wc_addr     = wc_sel_s ? snk_wc_addr : rsp_wc_addr;
  assign mx_wc_last     = wc_sel_s ? snk_wc_last : rsp_wc_last;
  assign mx_wc_tok_data = wc_sel_s ? snk_wc_tok_data : rsp_wc_tok_data;
  assign r_done = !wc_sel_s && rsp_wc_valid && rxw_wc_ready && !rsp_wc_tok && rsp_wc_last;
  assign s_done = wc_sel_s && snk_wc_valid && rxw_wc_ready && !snk_wc_tok && snk_wc_last;

  always_ff @(posedge clk) begin
    if (rst) begin
      r_open_q   <= 2'd0;
      s_open_q   <= 2'd0;
      wc_hold_q  <= 1'b0;
      wc_sel_s_q <= 1'b0;
    end else begin
      wc_hold_q  <= mx_wc_valid && !rxw_wc_ready;
      wc_sel_s_q <= wc_sel_s;
      r_open_q   <= r_open_q + {1'b0, r_take} - {1'b0, r_done};
      s_open_q   <= s_open_q + {1'b0, s_take} - {1'b0, s_done};
    end
  end

  // A QP re-sending WQEs it sent before (te_rpl_all) is not blocked: their
  // completions and READ records were pushed the first time.
  assign sq_block = (ack_full | snk_rr_block) & ~te_rpl_all;

  // The requester's READ responses (docs/rd_sink.md): READ records from
  // tx_engine, cleared when software restarts the QP's PSN.
  rd_sink #(.QPS(QPS)) u_rd_sink (
    .clk, .rst,
    .rr_valid(te_rr_valid), .rr_qp(te_rr_qp), .rr_psn(te_rr_psn), .rr_len(te_rr_len),
    .rr_addr(te_rr_addr), .rr_mtu(te_rr_mtu), .rr_max(te_rr_max), .rr_block(snk_rr_block),
    .clr_valid(psn_set_valid), .clr_qp(psn_set_qp),
    .hd_valid(snk_hd_valid), .hd_ready(snk_hd_ready), .hd_meta(rxb_hd_meta),
    .wc_valid(snk_wc_valid), .wc_ready(rxw_wc_ready && wc_sel_s), .wc_tok(snk_wc_tok),
    .wc_off(snk_wc_off), .wc_len(snk_wc_len), .wc_addr(snk_wc_addr), .wc_last(snk_wc_last),
    .wc_tok_data(snk_wc_tok_data),
    .ev_exec(snk_ev_exec), .ev_done(snk_ev_done), .ev_unexp(snk_ev_unexp), .ev_dup(snk_ev_dup),
    .ev_seq(snk_ev_seq), .ev_bad(snk_ev_bad), .ev_rr_full(snk_ev_rr_full),
    .gap_valid(snk_gap_valid), .gap_qp(snk_gap_qp), .gap_psn(snk_gap_psn),
    .prog_valid(snk_prog_valid), .prog_qp(snk_prog_qp), .prog_psn(snk_prog_psn)
  );
  assign snk_ev_rr_full_unused = snk_ev_rr_full;

  rx_wr u_rx_wr (
    .clk, .rst,
    .wc_valid(mx_wc_valid), .wc_ready(rxw_wc_ready), .wc_tok(mx_wc_tok),
    .wc_off(mx_wc_off), .wc_len(mx_wc_len), .wc_addr(mx_wc_addr), .wc_last(mx_wc_last),
    .wc_tok_data(mx_wc_tok_data),
    .in_valid(rxb_out_valid), .in_ready(rxw_in_ready), .in_data(rxb_out_data),
    .in_keep(rxb_out_keep), .in_last(rxb_out_last),
    .wr_req_valid(rxw_wr_req_valid), .wr_req_ready(rxw_wr_req_ready),
    .wr_req_addr(rxw_wr_req_addr), .wr_req_len(rxw_wr_req_len),
    .wr_data_valid(rxw_wr_data_valid), .wr_data_ready(rxw_wr_data_ready),
    .wr_data(rxw_wr_data),
    .wr_done_valid(wr_done_valid && wr_done_client == 2'd1),
    .tok_valid(rxw_tok_valid), .tok_ready(rxw_tok_ready), .tok_data(rxw_tok_data),
    .ev_write(rxw_ev_write), .ev_bytes(rxw_ev_bytes)
  );
  // rx_wr's tokens (layout resp_pkg: bit 0 the kind, bit 191 rd_sink's).
  // A RECV completion goes to cq_arb's input b, a READ job to rd_resp
  // (whose job_ready is high from the cycle after reset: a full ring
  // refuses, never stalls), a READ done to ack_tracker (a pulse it always
  // takes: the READ's data is in host memory).
  assign rxw_tok_rdone = rxw_tok_valid && rxw_tok_data[0] == resp_pkg::TOK_CQE
                      && rxw_tok_data[resp_pkg::TOK_SINK_BIT];
  assign rxw_tok_cqe   = rxw_tok_valid && rxw_tok_data[0] == resp_pkg::TOK_CQE
                      && !rxw_tok_data[resp_pkg::TOK_SINK_BIT];
  assign rxw_tok_read  = rxw_tok_valid && rxw_tok_data[0] == resp_pkg::TOK_READ;
  assign rxw_tok_ready = rxw_tok_read ? rdr_job_ready : (rxw_tok_rdone || cqa_b_ready);

  // The READ responder's job store: tx_engine answers its jobs with READ
  // RESPONSE packets (docs/responder.md, "rd_resp and READ responses").
  rd_resp #(.QPS(QPS)) u_rd_resp (
    .clk, .rst,
    .job_valid(rxw_tok_read), .job_ready(rdr_job_ready), .job_tok(rxw_tok_data),
    .job_avail(rdr_job_avail),
    .job_rd_valid(te_job_rd_valid), .job_rd_qp(te_job_rd_qp),
    .job_present(rdr_job_present), .job_psn(rdr_job_psn), .job_addr(rdr_job_addr),
    .job_len(rdr_job_len), .job_msn(rdr_job_msn), .job_mtu(rdr_job_mtu),
    .job_pop_valid(te_job_pop_valid), .job_pop_qp(te_job_pop_qp),
    .ev_job(rdr_ev_job), .ev_job_full(rdr_ev_job_full)
  );

  // The responder's acknowledgements, one pending per QP (docs/responder.md,
  // "ack_gen").
  ack_gen #(.QPS(QPS)) u_ack_gen (
    .clk, .rst,
    .req_valid(rsp_ack_valid), .req_qp(rsp_ack_qp), .req_psn(rsp_ack_psn),
    .req_syndrome(rsp_ack_syndrome), .req_msn(rsp_ack_msn),
    .ack_valid(ag_ack_valid), .ack_qp(ag_ack_qp), .ack_psn(ag_ack_psn),
    .ack_syndrome(ag_ack_syndrome), .ack_msn(ag_ack_msn), .ack_ready(ag_ack_ready),
    .ev_ack(ag_ev_ack), .ev_coalesced(ag_ev_coalesced)
  );

  // A data frame is committed when its descriptor goes to pkt_builder: the
  // rate limiter charges it and dcqcn's byte counter counts it. Control
  // frames are not the QP's data: a CNP (desc_cnp_pad) and an ACK/NAK
  // (opcode ACKNOWLEDGE) are charged to neither.
  assign charge_valid = desc_valid && desc_ready && !desc_cnp_pad
                     && desc_opcode != rnic_pkg::BTH_RC_ACK;

  dcqcn #(.QPS(QPS)) u_dcqcn (
    .clk, .rst,
    .cnp_valid(rxp_cnp_valid), .cnp_qp(rxp_cnp_qp),
    .tx_valid(charge_valid), .tx_qp(desc_qp), .tx_len(desc_wire_len),
    .cc_en(qp_cc_en_all),
    .cfg_g_shift, .cfg_k, .cfg_t_inc, .cfg_b, .cfg_f, .cfg_r_ai, .cfg_r_hai,
    .cfg_r_min, .cfg_r_max, .cfg_alpha_init, .cfg_mode, .cfg_mon, .cfg_alpha_t,
    .rc(dc_rc), .rt(dc_rt), .alpha(dc_alpha),
    .cnt_cnp(dc_cnt_cnp), .cnt_cut(dc_cnt_cut), .cnt_fr(dc_cnt_fr), .cnt_ai(dc_cnt_ai),
    .cnt_hai(dc_cnt_hai), .cnt_alpha(dc_cnt_alpha)
  );

  rate_limiter #(.QPS(QPS)) u_rate_limiter (
    .clk, .rst,
    .rate(dc_rc), .cc_en(qp_cc_en_all), .cfg_burst(cfg_rl_burst),
    .charge_valid, .charge_qp(desc_qp), .charge_len(desc_wire_len),
    .rate_ok(rl_rate_ok)
  );

  ack_tracker #(.QPS(QPS), .CQS(CQS), .DEPTH(ACK_DEPTH)) u_ack_tracker (
    .clk, .rst,
    .cpl_valid(te_cpl_valid), .cpl_ready(te_cpl_ready), .cpl_wait_frame(te_cpl_wait_frame),
    .cpl_wr_id(te_cpl_wr_id), .cpl_status(te_cpl_status), .cpl_opcode(te_cpl_opcode),
    .cpl_len(te_cpl_len), .cpl_imm(te_cpl_imm), .cpl_qp(te_cpl_qp), .cpl_cq(te_cpl_cq),
    .cpl_uc(te_cpl_uc), .cpl_psn(te_cpl_psn), .cpl_idx(te_cpl_idx),
    .ack_valid, .ack_qp, .ack_psn, .ack_syndrome,
    // The PSNs sent: tx_engine's PSN write-back after every request packet
    // it commits (a READ REQUEST's covers its whole response span).
    .snd_valid(psn_wr_valid), .snd_qp(psn_wr_qp), .snd_nxt(psn_wr_psn),
    .psn_set_valid, .psn_set_qp, .psn_set_psn,
    // READ done: rd_sink's token, out of rx_wr after the READ's writes.
    .rd_done_valid(rxw_tok_rdone), .rd_done_qp(rxw_tok_data[1 +: QPW]),
    .rd_done_psn(rxw_tok_data[9 +: 24]),
    // READ progress: rd_sink's implicit ACK of a response accepted.
    .rd_prog_valid(snk_prog_valid), .rd_prog_qp(snk_prog_qp), .rd_prog_psn(snk_prog_psn),
    .out_valid(at_out_valid), .out_ready(at_out_ready), .out_wait_frame(at_out_wait_frame),
    .out_wr_id(at_out_wr_id), .out_status(at_out_status), .out_opcode(at_out_opcode),
    .out_len(at_out_len), .out_imm(at_out_imm), .out_qp(at_out_qp), .out_cq(at_out_cq),
    .full(ack_full), .err_valid(at_err_valid), .err_qp(at_err_qp),
    .ev_ack(ev_ack_new), .ev_nak, .ev_dup(ev_ack_dup), .ev_ack_invalid,
    // Not counted yet (csr has no READ-done counter).
    .ev_rd_done(at_ev_rd_done_unused),
    .nak_valid(at_nak_valid), .nak_qp(at_nak_qp), .nak_psn(at_nak_psn), .nak_rnr(at_nak_rnr),
    .nak_timer(at_nak_timer), .una_all(at_una_all), .busy(at_busy),
    .xerr_valid(rtx_xerr_valid), .xerr_ready(at_xerr_ready), .xerr_qp(rtx_xerr_qp),
    .xerr_status(rtx_xerr_status),
    .err_mode(at_err_mode),
    .anc_valid(at_anc_valid), .anc_qp(at_anc_qp), .anc_idx(at_anc_idx), .anc_psn(at_anc_psn)
  );

  // Go-back-N decisions (docs/retransmission.md): the ACK timer, the
  // retry counts and the RNR wait per QP; rewinds go to tx_engine,
  // exhaustion to ack_tracker's error mode.
  retx_ctl #(.QPS(QPS)) u_retx_ctl (
    .clk, .rst,
    .una_all(at_una_all), .busy(at_busy), .halt(qp_err_all), .err_mode(at_err_mode),
    .nak_valid(at_nak_valid), .nak_qp(at_nak_qp), .nak_psn(at_nak_psn), .nak_rnr(at_nak_rnr),
    .nak_timer(at_nak_timer),
    .gap_valid(snk_gap_valid), .gap_qp(snk_gap_qp), .gap_psn(snk_gap_psn),
    .clr_valid(psn_set_valid), .clr_qp(psn_set_qp),
    .attr_idx(rtx_attr_idx), .attr_timeout(xctx_timeout), .attr_retry(xctx_retry),
    .attr_rnr_retry(xctx_rnr_retry),
    .rw_valid(rtx_rw_valid), .rw_qp(rtx_rw_qp), .rw_psn(rtx_rw_psn), .rw_ready(te_rw_ready),
    .xerr_valid(rtx_xerr_valid), .xerr_qp(rtx_xerr_qp), .xerr_status(rtx_xerr_status),
    .xerr_ready(at_xerr_ready),
    .ev_timeout(rtx_ev_timeout), .ev_rewind(rtx_ev_rewind),
    .ev_rnr_wait(rtx_ev_rnr_wait), .ev_exhaust(rtx_ev_exhaust), .hold(rtx_hold)
  );

  sq_fetch #(.QPS(QPS)) u_sq_fetch (
    .clk, .rst,
    .db_valid, .db_qp, .db_pi, .db_state, .db_sq_base, .db_sq_log,
    .rd_req_valid(sqf_rd_req_valid), .rd_req_ready(sqf_rd_req_ready),
    .rd_req_addr(sqf_rd_req_addr), .rd_req_len(sqf_rd_req_len),
    .rd_data_valid(rd_data_valid && rd_data_client == 2'd0),
    .rd_data_ready(sqf_rd_data_ready),
    .rd_data, .rd_data_last, .rd_data_status,
    .wqe_avail, .wqe_pop_valid, .wqe_pop_qp,
    // A rewind: fetch the QP again from its anchor's SQ index.
    .rw_valid(te_sq_rw_valid), .rw_qp(te_sq_rw_qp), .rw_idx(te_sq_rw_idx),
    .wqe_valid, .wqe_qp, .wqe_data, .wqe_idx(sqf_wqe_idx),
    .err_valid(sqf_err_valid), .err_qp(sqf_err_qp),
    .ev_wqe_n
  );

  tx_sched #(.QPS(QPS)) u_tx_sched (
    .clk, .rst,
    // A QP has work when it has a WQE or a READ job to answer.
    .req_active, .req_avail(wqe_avail | rdr_job_avail),
    // A QP may start a frame when its rate limiter allows it and it is not
    // blocked (sq_block: its completion queue in ack_tracker is full, or
    // its READs are at max_rd_atomic), or it has a READ to answer
    // (tx_engine answers first and never starts a blocked QP's WQE); a
    // waiting CNP or ACK goes first (within tx_sched's bound on control
    // grants in a row).
    // A QP waiting out an RNR NAK sends nothing of its own (rtx_hold).
    .rate_ok(rl_rate_ok & ~((sq_block | rtx_hold) & ~rdr_job_avail)), .pause,
    .qp_pcp(qp_pcp_all),
    .ctrl_req(cg_cnp_valid || ag_ack_valid),
    .grant_valid, .grant_qp, .grant_ctrl, .grant_ready
  );
  // tx_engine takes the CNP or the ACK with the control grant: the ACK when
  // it is the ACK's turn (ctrl_ack_first) or no CNP waits, else the CNP
  // (docs/tx_datapath.md, tx_engine).
  assign ctrl_take    = grant_valid && grant_ctrl && grant_ready;
  assign ag_ack_ready = ctrl_take && ag_ack_valid && (ctrl_ack_first || !cg_cnp_valid);
  assign cg_cnp_ready = ctrl_take && cg_cnp_valid && !(ag_ack_valid && ctrl_ack_first);

  tx_engine #(.QPS(QPS), .MRS(MRS), .CQS(CQS)) u_tx_engine (
    .clk, .rst,
    .grant_valid, .grant_qp, .grant_ready, .req_active,
    // A QP whose ack_tracker queue is full finishes its message but starts
    // no new one (tx_sched's grant may predate the full).
    .wqe_avail, .wqe_block(sq_block), .err_mode(at_err_mode), .wqe_pop_valid, .wqe_pop_qp, .wqe_valid, .wqe_qp, .wqe_data,
    .qp_idx,
    .qp_state, .qp_uc, .qp_ipv6, .qp_vlan_en, .qp_ecn_en, .qp_mtu, .qp_max_rd, .qp_cq,
    .qp_remote_qpn, .qp_psn, .qp_pd, .qp_dst_mac, .qp_src_mac, .qp_src_ip,
    .qp_dst_ip, .qp_udp_sport, .qp_dscp, .qp_vid, .qp_pcp, .qp_pkey,
    .mr_valid, .mr_key, .mr_va, .mr_len, .mr_pbase, .mr_access, .mr_pd,
    .psn_wr_valid, .psn_wr_qp, .psn_wr_psn,
    .rr_valid(te_rr_valid), .rr_qp(te_rr_qp), .rr_psn(te_rr_psn),
    .rr_len(te_rr_len), .rr_addr(te_rr_addr), .rr_mtu(te_rr_mtu), .rr_max(te_rr_max),
    .err_valid(te_err_valid), .err_qp(te_err_qp),
    .rd_req_valid(te_rd_req_valid), .rd_req_ready(te_rd_req_ready),
    .rd_req_addr(te_rd_req_addr), .rd_req_len(te_rd_req_len),
    .desc_valid, .desc_ready, .desc_qp, .desc_cpl,
    .desc_dst_mac, .desc_src_mac, .desc_vlan_en, .desc_pcp, .desc_vid,
    .desc_ipv6, .desc_src_ip, .desc_dst_ip, .desc_dscp, .desc_ecn, .desc_udp_sport,
    .desc_opcode, .desc_se, .desc_pkey, .desc_becn, .desc_dest_qp, .desc_ack_req, .desc_psn,
    .desc_reth_en, .desc_reth_va, .desc_reth_rkey, .desc_reth_len,
    .desc_imm_en, .desc_imm, .desc_aeth_en, .desc_aeth, .desc_cnp_pad, .desc_pay_len,
    .rw_valid(rtx_rw_valid), .rw_ready(te_rw_ready), .rw_qp(rtx_rw_qp), .rw_psn(rtx_rw_psn),
    .anc_valid(at_anc_valid), .anc_qp(at_anc_qp), .anc_idx(at_anc_idx), .anc_psn(at_anc_psn),
    .psn_set_valid, .psn_set_qp, .wqe_idx(sqf_wqe_idx),
    .sq_rw_valid(te_sq_rw_valid), .sq_rw_qp(te_sq_rw_qp), .sq_rw_idx(te_sq_rw_idx),
    .cpl_idx(te_cpl_idx), .rpl_all(te_rpl_all),
    .cpl_valid(te_cpl_valid), .cpl_ready(te_cpl_ready), .cpl_wait_frame(te_cpl_wait_frame),
    .cpl_wr_id(te_cpl_wr_id), .cpl_status(te_cpl_status), .cpl_opcode(te_cpl_opcode),
    .cpl_len(te_cpl_len), .cpl_imm(te_cpl_imm), .cpl_qp(te_cpl_qp), .cpl_cq(te_cpl_cq),
    .cpl_uc(te_cpl_uc), .cpl_psn(te_cpl_psn),
    .grant_ctrl, .cnp_valid(cg_cnp_valid), .cnp_qp(cg_cnp_qp),
    .cfg_cnp_dscp, .cfg_cnp_pcp, .cfg_cnp_becn,
    .ack_valid(ag_ack_valid), .ack_qp(ag_ack_qp), .ack_psn(ag_ack_psn),
    .ack_syndrome(ag_ack_syndrome), .ack_msn(ag_ack_msn), .ctrl_ack_first,
    .desc_wire_len,
    .job_avail(rdr_job_avail), .job_rd_valid(te_job_rd_valid), .job_rd_qp(te_job_rd_qp),
    .job_present(rdr_job_present), .job_psn(rdr_job_psn), .job_addr(rdr_job_addr),
    .job_len(rdr_job_len), .job_msn(rdr_job_msn), .job_mtu(rdr_job_mtu),
    .job_pop_valid(te_job_pop_valid), .job_pop_qp(te_job_pop_qp),
    .ev_prot_err, .ev_flush
  );

  pkt_builder #(.QPS(QPS)) u_pkt_builder (
    .clk, .rst,
    .desc_valid, .desc_ready, .desc_qp, .desc_cpl,
    .desc_dst_mac, .desc_src_mac, .desc_vlan_en, .desc_pcp, .desc_vid,
    .desc_ipv6, .desc_src_ip, .desc_dst_ip, .desc_dscp, .desc_ecn, .desc_udp_sport,
    .desc_opcode, .desc_se, .desc_pkey, .desc_becn, .desc_dest_qp, .desc_ack_req, .desc_psn,
    .desc_reth_en, .desc_reth_va, .desc_reth_rkey, .desc_reth_len,
    .desc_imm_en, .desc_imm, .desc_aeth_en, .desc_aeth, .desc_cnp_pad, .desc_pay_len,
    .pay_valid(rd_data_valid && rd_data_client == 2'd1),
    .pay_ready, .pay_data(rd_data), .pay_last(rd_data_last), .pay_status(rd_data_status),
    .pause,
    .pfc_valid(pg_valid), .pfc_ready(pg_ready), .pfc_enable(pg_enable), .pfc_quanta(pg_quanta),
    .pfc_src_mac(cfg_pfcg_src_mac),
    .tx_tvalid, .tx_tready, .tx_tdata, .tx_tkeep, .tx_tlast,
    .frame_done_valid, .frame_done_err,
    .ev_tx_frame, .ev_tx_len, .ev_dma_err
  );

  // Completions to cq_writer: a = ack_tracker's requester completions (no
  // immediate flag, source QP 0), b = the responder's RECV completions
  // (never wait for a frame; qp and cq are the token's low bits, bounded by
  // QPS and CQS where the responder made them).
  cq_arb #(.QPS(QPS), .CQS(CQS)) u_cq_arb (
    .clk, .rst,
    .a_valid(at_out_valid), .a_ready(at_out_ready), .a_wait_frame(at_out_wait_frame),
    .a_wr_id(at_out_wr_id), .a_status(at_out_status), .a_opcode(at_out_opcode),
    .a_len(at_out_len), .a_imm(at_out_imm), .a_imm_flag(1'b0), .a_src_qp(24'd0),
    .a_qp(at_out_qp), .a_cq(at_out_cq),
    .b_valid(rxw_tok_cqe), .b_ready(cqa_b_ready), .b_wait_frame(1'b0),
    .b_wr_id(rxw_tok_data[80:17]), .b_status(rxw_tok_data[88:81]),
    .b_opcode(rxw_tok_data[96:89]), .b_len(rxw_tok_data[128:97]),
    .b_imm(rxw_tok_data[160:129]), .b_imm_flag(rxw_tok_data[161]),
    .b_src_qp(rxw_tok_data[185:162]),
    .b_qp(rxw_tok_data[1 +: QPW]), .b_cq(rxw_tok_data[9 +: CQW]),
    .o_valid(cpl_valid), .o_ready(cpl_ready), .o_wait_frame(cpl_wait_frame),
    .o_wr_id(cpl_wr_id), .o_status(cpl_status), .o_opcode(cpl_opcode), .o_len(cpl_len),
    .o_imm(cpl_imm), .o_imm_flag(cpl_imm_flag), .o_src_qp(cpl_src_qp), .o_qp(cpl_qp),
    .o_cq(cpl_cq)
  );

  cq_writer #(.CQS(CQS), .QPS(QPS)) u_cq_writer (
    .clk, .rst,
    .cpl_valid, .cpl_ready, .cpl_wait_frame, .cpl_wr_id, .cpl_status, .cpl_opcode,
    .cpl_len, .cpl_imm, .cpl_imm_flag, .cpl_src_qp, .cpl_qp, .cpl_cq,
    .frame_done_valid, .frame_done_err,
    .cq_idx, .cq_base, .cq_log,
    .wr_req_valid(cqw_wr_req_valid), .wr_req_ready(cqw_wr_req_ready),
    .wr_req_addr(cqw_wr_req_addr), .wr_req_len(cqw_wr_req_len),
    .wr_data_valid(cqw_wr_data_valid), .wr_data_ready(cqw_wr_data_ready),
    .wr_data(cqw_wr_data),
    .wr_done_valid(cqw_wr_done_valid),
    .irq_valid, .irq_cq,
    .ev_cqe
  );

  rd_req_arb u_rd_req_arb (
    .clk, .rst,
    .a_valid(sqf_rd_req_valid), .a_ready(sqf_rd_req_ready),
    .a_addr(sqf_rd_req_addr), .a_len(sqf_rd_req_len),
    .b_valid(te_rd_req_valid), .b_ready(te_rd_req_ready),
    .b_addr(te_rd_req_addr), .b_len(te_rd_req_len),
    .c_valid(rqf_rd_req_valid), .c_ready(rqf_rd_req_ready),
    .c_addr(rqf_rd_req_addr), .c_len(rqf_rd_req_len),
    // Client 3, the READ responder, is not built yet.
    .d_valid(1'b0), .d_ready(arb_d_ready_unused), .d_addr('0), .d_len('0),
    .o_valid(rd_req_valid), .o_ready(rd_req_ready),
    .o_addr(rd_req_addr), .o_len(rd_req_len), .o_client(rd_req_client)
  );

  // Read data goes to its client (0 sq_fetch, 1 tx_engine's payload through
  // pkt_builder, 2 rq_fetch; 3, the READ responder, asks for none); each
  // client's ready is a register of its own.
  always_comb begin
    unique case (rd_data_client)
      2'd0:    rd_data_ready = sqf_rd_data_ready;
      2'd1:    rd_data_ready = pay_ready;
      2'd2:    rd_data_ready = rqf_rd_data_ready;
      default: rd_data_ready = 1'b0;
    endcase
  end

  dma_rd #(.TAGS(TAGS), .BUF_LINES(BUF_LINES), .CLIENT_W(2)) u_dma_rd (
    .clk, .rst,
    .cfg_mrrs, .cfg_req_id, .cfg_cpl_timeout,
    .rd_req_valid, .rd_req_ready, .rd_req_addr, .rd_req_len, .rd_req_client,
    .rd_data_valid, .rd_data_ready, .rd_data, .rd_data_keep(rd_data_keep_unused),
    .rd_data_last, .rd_data_client, .rd_data_status,
    .rq_valid(rdq_valid), .rq_ready(rdq_ready), .rq_data(rdq_data), .rq_keep(rdq_keep),
    .rq_sop(rdq_sop), .rq_eop(rdq_eop),
    .rc_valid, .rc_ready, .rc_data, .rc_keep, .rc_sop, .rc_eop,
    .stat_tags_busy(stat_tags_busy_unused), .stat_free_lines(stat_free_lines_unused),
    .cnt_cpl_unexpected, .cnt_cpl_malformed, .cnt_cpl_timeout
  );

  // dma_wr's clients: 0 cq_writer, 1 rx_wr (the responder's payload).
  wr_arb u_wr_arb (
    .clk, .rst,
    .a_req_valid(cqw_wr_req_valid), .a_req_ready(cqw_wr_req_ready),
    .a_req_addr(cqw_wr_req_addr), .a_req_len(cqw_wr_req_len),
    .a_data_valid(cqw_wr_data_valid), .a_data_ready(cqw_wr_data_ready), .a_data(cqw_wr_data),
    .b_req_valid(rxw_wr_req_valid), .b_req_ready(rxw_wr_req_ready),
    .b_req_addr(rxw_wr_req_addr), .b_req_len(rxw_wr_req_len),
    .b_data_valid(rxw_wr_data_valid), .b_data_ready(rxw_wr_data_ready), .b_data(rxw_wr_data),
    .wr_req_valid, .wr_req_ready, .wr_req_addr, .wr_req_len, .wr_req_client,
    .wr_data_valid, .wr_data_ready, .wr_data
  );
  // A write's completion goes back to the client that asked for it.
  assign cqw_wr_done_valid = wr_done_valid && wr_done_client == 2'd0;

  dma_wr u_dma_wr (
    .clk, .rst,
    .cfg_mps, .cfg_req_id,
    .wr_req_valid, .wr_req_ready, .wr_req_addr, .wr_req_len,
    .wr_req_client({1'b0, wr_req_client}),
    .wr_data_valid, .wr_data_ready, .wr_data,
    .wr_done_valid, .wr_done_client,
    .rq_valid(wrq_valid), .rq_ready(wrq_ready), .rq_data(wrq_data), .rq_keep(wrq_keep),
    .rq_sop(wrq_sop), .rq_eop(wrq_eop)
  );

  // ---------------- PFC generation (docs/pfc_gen.md) ----------------
  // rx_buf's lines per priority -> pfc_gen -> pkt_builder's PFC slot; the
  // frames sent count in csr (PFCG.XOFF_SENT, XON_SENT).

  pfc_gen #(.LINES(RXB_LINES)) u_pfc_gen (
    .clk, .rst,
    .prio_lines(rxb_prio_lines),
    .cfg_en(cfg_pfcg_en), .cfg_xoff(cfg_pfcg_xoff), .cfg_xon(cfg_pfcg_xon),
    .cfg_time(cfg_pfcg_time), .cfg_refresh(cfg_pfcg_refresh),
    .pfc_valid(pg_valid), .pfc_ready(pg_ready), .pfc_enable(pg_enable), .pfc_quanta(pg_quanta),
    .ev_xoff(pg_ev_xoff), .ev_xon(pg_ev_xon)
  );

  rq_arb u_rq_arb (
    .clk, .rst,
    .a_valid(rdq_valid), .a_ready(rdq_ready), .a_data(rdq_data), .a_keep(rdq_keep),
    .a_sop(rdq_sop), .a_eop(rdq_eop),
    .b_valid(wrq_valid), .b_ready(wrq_ready), .b_data(wrq_data), .b_keep(wrq_keep),
    .b_sop(wrq_sop), .b_eop(wrq_eop),
    .o_valid(rq_valid), .o_ready(rq_ready), .o_data(rq_data), .o_keep(rq_keep),
    .o_sop(rq_sop), .o_eop(rq_eop)
  );
endmodule
