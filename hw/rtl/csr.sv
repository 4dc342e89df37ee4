// Control and status registers: MMIO decode, the QP/MR/CQ tables, PCIe
// settings, doorbells, counters. Model: model/src/csr.rs (same register
// names). The register map is hw/csr/csr_map.txt; addr_map_pkg (generated from it)
// gives every address, mask and field position used here, and gen_csr.py
// writes the block registers' read mux below from its `read` lines.
//
// Tables are held by column, one word of every entry together: the QP, MR
// and CQ tables in RAM (ctx_table: a RAM per word, a read port per reader
// of that word). What hardware writes in the QP table is kept beside it:
// CTRL.STATE (with CC_EN) in flops, since every QP's state is also seen at
// once, and the PSN field in a second RAM that psn_wr writes, with one flop
// per QP saying which of the two RAMs wrote it last (a live-value table), so
// MMIO and psn_wr can both write in one cycle. Bits a register lacks are
// masked off on write (and so are constant 0 and optimized away).
//
// Timing (every output is a flop):
// - MMIO read at n -> mmio_rd_resp_* at n+1, the value as it was during n
//   (this cycle's writes not applied);
// - qp_idx/mr_idx/cq_idx at n -> that entry's fields at n+1, as they were
//   during n;
// - DOORBELL write at n -> db_* at n+1 with the QP's state and SQ ring as
//   they are after cycle n's writes (hardware's included);
// - a write at n shows in cfg_*, qp_pcp_all, reads and lookups from n+1
//   (qp_pcp_all is every QP's VLAN.PCP field out of a copy in flops,
//   pcp_all_q, written with the VLAN word: no lookup, so a write at n is on
//   it at n+1).
// Hardware writes (psn_wr, err_a/b/c/d) win over an MMIO write to the same
// field in the same cycle; the MMIO write's other fields still apply.
// An MMIO write of a QP's PSN that takes effect shows on psn_set_* at n+1
// (ack_tracker restarts the QP's window of unacknowledged PSNs there); one
// of its EPSN on epsn_set_* at n+1 (the responder restarts there).
//
// CTRL.STATE is 3 bits (0 RESET, 1 RTS, 2 ERROR, 3 RTR, 4 INIT). The
// transmit path sees a 2-bit view (qp_state, db_state): RTS and ERROR as
// they are, every other state RESET, so nothing is sent before RTS. The
// receive path sees another (qp_state_all): RTR and RTS as RTS (1), ERROR
// as it is, every other state RESET (rx_parser drops the QP's frames).
// The responder's context port (rctx_*) and the RQ doorbell carry all 3
// bits. RQ DOORBELL at n -> rq_db_* at n+1 like the SQ doorbell; the
// responder's lookups rctx_idx/rmr_idx at n -> rctx_*/rmr_* at n+1.
// The retransmission controller's lookup xctx_idx at n -> xctx_* (the QP's
// RETRY fields) at n+1, the same way; after reset they show RETRY's reset
// values.
module csr #(
  parameter int QPS = rnic_pkg::QPS,
  parameter int MRS = rnic_pkg::MRS,
  parameter int CQS = rnic_pkg::CQS
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   mmio_wr_valid,
  input  logic [15:0]            mmio_wr_addr,
  input  logic [31:0]            mmio_wr_data,
  input  logic                   mmio_rd_valid,
  input  logic [15:0]            mmio_rd_addr,
  output logic                   mmio_rd_resp_valid,
  output logic [31:0]            mmio_rd_resp_data,
  output logic [2:0]             cfg_mrrs,
  output logic [2:0]             cfg_mps,
  output logic [15:0]            cfg_req_id,
  output logic [23:0]            cfg_cpl_timeout,
  output logic                   db_valid,
  output logic [$clog2(QPS)-1:0] db_qp,
  output logic [15:0]            db_pi,
  output logic [1:0]             db_state,
  output logic [63:0]            db_sq_base,
  output logic [4:0]             db_sq_log,
  input  logic [$clog2(QPS)-1:0] qp_idx,
  output logic [1:0]             qp_state,
  output logic                   qp_uc,
  output logic                   qp_ipv6,
  output logic                   qp_vlan_en,
  output logic                   qp_ecn_en,
  output logic [2:0]             qp_mtu,
  output logic [2:0]             qp_max_rd,
  output logic [$clog2(CQS)-1:0] qp_cq,
  output logic [23:0]            qp_remote_qpn,
  output logic [23:0]            qp_psn,
  output logic [15:0]            qp_pd,
  output logic [47:0]            qp_dst_mac,
  output logic [47:0]            qp_src_mac,
  output logic [127:0]           qp_src_ip,
  output logic [127:0]           qp_dst_ip,
  output logic [15:0]            qp_udp_sport,
  output logic [5:0]             qp_dscp,
  output logic [11:0]            qp_vid,
  output logic [2:0]             qp_pcp,
  output logic [15:0]            qp_pkey,
  output logic [3*QPS-1:0]       qp_pcp_all,
  output logic [2*QPS-1:0]       qp_state_all,
  output logic [QPS-1:0]         qp_cc_en_all,
  input  logic [$clog2(MRS)-1:0] mr_idx,
  output logic                   mr_valid,
  output logic [31:0]            mr_key,
  output logic [63:0]            mr_va,
  output logic [63:0]            mr_len,
  output logic [63:0]            mr_pbase,
  output logic [3:0]             mr_access,
  output logic [15:0]            mr_pd,
  input  logic [$clog2(CQS)-1:0] cq_idx,
  output logic [63:0]            cq_base,
  output logic [4:0]             cq_log,
  input  logic                   psn_wr_valid,
  input  logic [$clog2(QPS)-1:0] psn_wr_qp,
  input  logic [23:0]            psn_wr_psn,
  output logic                   psn_set_valid,
  output logic [$clog2(QPS)-1:0] psn_set_qp,
  output logic [23:0]            psn_set_psn,
  input  logic                   err_a_valid,
  input  logic [$clog2(QPS)-1:0] err_a_qp,
  input  logic                   err_b_valid,
  input  logic [$clog2(QPS)-1:0] err_b_qp,
  input  logic                   err_c_valid,
  input  logic [$clog2(QPS)-1:0] err_c_qp,
  input  logic                   err_d_valid,
  input  logic [$clog2(QPS)-1:0] err_d_qp,
  input  logic                   err_e_valid,
  input  logic [$clog2(QPS)-1:0] err_e_qp,
  // The responder's side (docs/responder.md): RQ doorbells, its own QP
  // context and MR lookups, EPSN writes, which QPs are in ERROR.
  output logic                   rq_db_valid,
  output logic [$clog2(QPS)-1:0] rq_db_qp,
  output logic [15:0]            rq_db_pi,
  output logic [2:0]             rq_db_state,
  output logic [63:0]            rq_db_base,
  output logic [4:0]             rq_db_log,
  input  logic [$clog2(QPS)-1:0] rctx_idx,
  output logic [2:0]             rctx_state,
  output logic                   rctx_uc,
  output logic [2:0]             rctx_mtu,
  output logic [15:0]            rctx_pd,
  output logic [$clog2(CQS)-1:0] rctx_rq_cq,
  output logic [4:0]             rctx_rnr_timer,
  output logic [2:0]             rctx_max_rd,
  output logic [3:0]             rctx_access,
  output logic [23:0]            rctx_remote_qpn,
  input  logic [$clog2(QPS)-1:0] xctx_idx,
  output logic [4:0]             xctx_timeout,
  output logic [2:0]             xctx_retry,
  output logic [2:0]             xctx_rnr_retry,
  input  logic [$clog2(MRS)-1:0] rmr_idx,
  output logic                   rmr_valid,
  output logic [31:0]            rmr_key,
  output logic [63:0]            rmr_va,
  output logic [63:0]            rmr_len,
  output logic [63:0]            rmr_pbase,
  output logic [3:0]             rmr_access,
  output logic [15:0]            rmr_pd,
  output logic                   epsn_set_valid,
  output logic [$clog2(QPS)-1:0] epsn_set_qp,
  output logic [23:0]            epsn_set_psn,
  output logic [QPS-1:0]         qp_err_all,
  input  logic                   ev_tx_frame,
  input  logic [13:0]            ev_tx_len,
  input  logic [3:0]             ev_wqe_n,
  input  logic                   ev_cqe,
  input  logic                   ev_prot_err,
  input  logic                   ev_flush,
  input  logic                   ev_fetch_err,
  input  logic                   ev_dma_err,
  input  logic [31:0]            dma_cpl_unexpected,
  input  logic [31:0]            dma_cpl_malformed,
  input  logic [31:0]            dma_cpl_timeout,
  // Congestion control and PFC parameters (block CC).
  output logic [3:0]             cfg_g_shift,
  output logic [7:0]             cfg_f,
  output logic [23:0]            cfg_k,
  output logic [23:0]            cfg_t_inc,
  output logic [31:0]            cfg_b,
  output logic [31:0]            cfg_r_ai,
  output logic [31:0]            cfg_r_hai,
  output logic [31:0]            cfg_r_min,
  output logic [31:0]            cfg_r_max,
  output logic [10:0]            cfg_alpha_init,
  output logic [5:0]             cfg_mode,
  output logic [23:0]            cfg_mon,
  output logic [23:0]            cfg_alpha_t,
  output logic [23:0]            cfg_rl_burst,
  output logic [5:0]             cfg_cnp_dscp,
  output logic [2:0]             cfg_cnp_pcp,
  output logic                   cfg_cnp_becn,
  output logic [23:0]            cfg_cnp_interval,
  output logic [$clog2(QPS)-1:0] cfg_stat_qp,
  // Block PFCG's fields (pfc_gen, pkt_builder's PFC source MAC).
  output logic [7:0]             cfg_pfcg_en,
  output logic [9:0]             cfg_pfcg_xoff,
  output logic [9:0]             cfg_pfcg_xon,
  output logic [15:0]            cfg_pfcg_time,
  output logic [23:0]            cfg_pfcg_refresh,
  output logic [47:0]            cfg_pfcg_src_mac,
  // Receive-path and congestion-control events (one-cycle pulses).
  input  logic                   ev_rx_frame,
  input  logic                   ev_rx_pfc,
  input  logic                   ev_rx_cnp,
  input  logic                   ev_rx_ack,
  input  logic                   ev_rx_data,
  input  logic                   ev_rx_ce,
  input  logic                   ev_drop,
  input  logic [2:0]             ev_drop_reason,
  input  logic                   ev_ack_new,
  input  logic                   ev_ack_dup,
  input  logic                   ev_nak,
  input  logic                   ev_ack_invalid,
  input  logic                   ev_cnp_sent,
  input  logic                   ev_ce_suppressed,
  // The responder side's events (docs/responder.md, "In rnic_top"): one-bit
  // pulses counted in cnt_rev_q, RECV WQEs fetched and payload bytes.
  input  logic                   ev_resp_exec,
  input  logic                   ev_resp_dup,
  input  logic                   ev_resp_nak_seq,
  input  logic                   ev_resp_nak_rnr,
  input  logic                   ev_resp_nak_inv,
  input  logic                   ev_resp_nak_acc,
  input  logic                   ev_resp_nak_op,
  input  logic                   ev_resp_recv,
  input  logic                   ev_resp_uc_drop,
  input  logic                   ev_resp_not_ready,
  input  logic                   ev_rxbuf_full,
  input  logic                   ev_rq_fetch_err,
  input  logic                   ev_rx_write,
  input  logic [12:0]            ev_rx_write_bytes,
  input  logic                   ev_ack_sent,
  input  logic                   ev_ack_coalesced,
  input  logic                   ev_read_job,
  input  logic                   ev_read_job_full,
  // rd_sink's pulses: taken, done, no READ, duplicate, PSN ahead, malformed.
  input  logic [5:0]             ev_snk,
  // pfc_gen's pulses: an XOFF frame, an XON frame handed to pkt_builder.
  input  logic                   ev_pfcg_xoff,
  input  logic                   ev_pfcg_xon,
  // retx_ctl's pulses, bit k counted by RETX word k: a local ACK timer
  // expiry, a rewind taken by tx_engine, an RNR wait started, an
  // exhaustion taken by ack_tracker.
  input  logic [3:0]             ev_retx,
  input  logic [3:0]             ev_rqe_n,
  // dcqcn's own counters and the STAT_QP QP's state, read as they are.
  input  logic [31:0]            dcqcn_cnt_cnp,
  input  logic [31:0]            dcqcn_cnt_cut,
  input  logic [31:0]            dcqcn_cnt_fr,
  input  logic [31:0]            dcqcn_cnt_ai,
  input  logic [31:0]            dcqcn_cnt_hai,
  input  logic [31:0]            dcqcn_cnt_alpha,
  input  logic [31:0]            stat_rc,
  input  logic [31:0]            stat_rt,
  input  logic [10:0]            stat_alpha
);
  localparam int QPW = $clog2(QPS);
  localparam int MRW = $clog2(MRS);
  localparam int CQW = $clog2(CQS);
  // Words per entry, bits per entry, log2 of the stride in bytes.
  localparam int QP_WORDS = addr_map_pkg::QP_WORDS;
  localparam int MR_WORDS = addr_map_pkg::MR_WORDS;
  localparam int CQ_WORDS = addr_map_pkg::CQ_WORDS;
  localparam int QP_EW = 32 * QP_WORDS;
  localparam int MR_EW = 32 * MR_WORDS;
  localparam int CQ_EW = 32 * CQ_WORDS;
  localparam int QP_SL = $clog2(addr_map_pkg::QP_STRIDE);
  localparam int MR_SL = $clog2(addr_map_pkg::MR_STRIDE);
  localparam int CQ_SL = $clog2(addr_map_pkg::CQ_STRIDE);
  // Bytes each table occupies in this build.
  localparam logic [15:0] QP_SPAN = 16'(QPS * addr_map_pkg::QP_STRIDE);
  localparam logic [15:0] MR_SPAN = 16'(MRS * addr_map_pkg::MR_STRIDE);
  localparam logic [15:0] CQ_SPAN = 16'(CQS * addr_map_pkg::CQ_STRIDE);

  if (QPS < 2 || (QPS & (QPS - 1)) != 0 || QPS > addr_map_pkg::QP_MAX) begin : g_bad_qps
    $error("csr: QPS must be a power of two in 2..QP_MAX (the map's QP table)");
  end
  if (MRS < 2 || (MRS & (MRS - 1)) != 0 || MRS > addr_map_pkg::MR_MAX) begin : g_bad_mrs
    $error("csr: MRS must be a power of two in 2..MR_MAX (the map's MR table)");
  end
  if (CQS < 2 || (CQS & (CQS - 1)) != 0 || CQS > addr_map_pkg::CQ_MAX) begin : g_bad_cqs
    $error("csr: CQS must be a power of two in 2..CQ_MAX (the map's CQ table)");
  end
  if (QPS >= (1 << addr_map_pkg::GLOBAL_PARAMS_QPS_W) || MRS >= (1 << addr_map_pkg::GLOBAL_PARAMS_MRS_W)
      || CQS >= (1 << addr_map_pkg::GLOBAL_PARAMS_CQS_W)) begin : g_bad_params
    $error("csr: a table size does not fit its PARAMS field");
  end
  if (QPW > addr_map_pkg::GLOBAL_DOORBELL_QP_W || CQW > addr_map_pkg::QP_CTRL_CQ_W
      || QPW > addr_map_pkg::GLOBAL_RQ_DOORBELL_QP_W || CQW > addr_map_pkg::QP_RESP_RQ_CQ_W) begin : g_bad_fields
    $error("csr: the doorbell's QP field or CTRL.CQ is narrower than the index");
  end

  // The doorbell reads its QP's entry without looking for an MMIO write to
  // it in the same cycle (see below): the doorbell must not be in the QP table.
  if (32'(addr_map_pkg::GLOBAL_DOORBELL_ADDR) >= 32'(addr_map_pkg::QP_BASE)
      && 32'(addr_map_pkg::GLOBAL_DOORBELL_ADDR) < 32'(addr_map_pkg::QP_BASE) + QPS * addr_map_pkg::QP_STRIDE)
  begin : g_bad_db
    $error("csr: DOORBELL lies inside the QP table");
  end
  if (32'(addr_map_pkg::GLOBAL_RQ_DOORBELL_ADDR) >= 32'(addr_map_pkg::QP_BASE)
      && 32'(addr_map_pkg::GLOBAL_RQ_DOORBELL_ADDR) < 32'(addr_map_pkg::QP_BASE) + QPS * addr_map_pkg::QP_STRIDE)
  begin : g_bad_rq_db
    $error("csr: RQ_DOORBELL lies inside the QP table");
  end

  // The ports' widths are the contract's; the map must agree.
  if (addr_map_pkg::QP_CTRL_STATE_W != 3 || addr_map_pkg::QP_CTRL_MTU_W != 3
      || addr_map_pkg::QP_CTRL_MAX_RD_W != 3
      || addr_map_pkg::QP_REMOTE_QPN_QPN_W != 24 || addr_map_pkg::QP_PSN_PSN_W != 24
      || addr_map_pkg::QP_PD_PD_W != 16 || addr_map_pkg::QP_DST_MAC_HI_VALUE_W != 16
      || addr_map_pkg::QP_SRC_MAC_HI_VALUE_W != 16 || addr_map_pkg::QP_UDP_SPORT_W != 16
      || addr_map_pkg::QP_UDP_DSCP_W != 6 || addr_map_pkg::QP_VLAN_VID_W != 12
      || addr_map_pkg::QP_VLAN_PCP_W != 3 || addr_map_pkg::QP_VLAN_PKEY_W != 16
      || addr_map_pkg::QP_SQ_LOG_LOG_W != 5 || addr_map_pkg::MR_FLAGS_ACCESS_W != 4
      || addr_map_pkg::MR_PD_PD_W != 16 || addr_map_pkg::CQ_LOG_LOG_W != 5
      || addr_map_pkg::QP_RQ_LOG_LOG_W != 5 || addr_map_pkg::QP_RESP_RNR_TIMER_W != 5
      || addr_map_pkg::QP_RESP_MAX_DEST_RD_W != 3 || addr_map_pkg::QP_RESP_ACCESS_W != 4
      || addr_map_pkg::QP_EPSN_PSN_W != 24 || addr_map_pkg::QP_RETRY_TIMEOUT_W != 5
      || addr_map_pkg::QP_RETRY_RETRY_CNT_W != 3 || addr_map_pkg::QP_RETRY_RNR_RETRY_W != 3)
  begin : g_bad_map
    $error("csr: a field of csr_map.txt differs in width from its port");
  end

  if (addr_map_pkg::CC_DCQCN_G_G_SHIFT_W != 4 || addr_map_pkg::CC_DCQCN_G_F_W != 8
      || addr_map_pkg::CC_DCQCN_K_CYCLES_W != 24 || addr_map_pkg::CC_DCQCN_T_INC_CYCLES_W != 24
      || addr_map_pkg::CC_DCQCN_ALPHA_INIT_W != 11 || addr_map_pkg::CC_RL_BURST_BYTES_W != 24
      || addr_map_pkg::CC_CNP_CFG_DSCP_W != 6 || addr_map_pkg::CC_CNP_CFG_PCP_W != 3
      || addr_map_pkg::CC_CNP_INTERVAL_CYCLES_W != 24 || addr_map_pkg::CC_STAT_QP_QP_W < QPW
      || addr_map_pkg::CC_STAT_ALPHA_VALUE_W != 11
      || addr_map_pkg::CC_DCQCN_MON_CYCLES_W != 24 || addr_map_pkg::CC_DCQCN_ALPHA_T_CYCLES_W != 24)
  begin : g_bad_cc_fields
    $error("csr: a field of block CC differs in width from its port");
  end

  if (addr_map_pkg::PFCG_EN_MASK_W != 8 || addr_map_pkg::PFCG_XOFF_LINES_W != 10
      || addr_map_pkg::PFCG_XON_LINES_W != 10 || addr_map_pkg::PFCG_TIME_QUANTA_W != 16
      || addr_map_pkg::PFCG_REFRESH_CYCLES_W != 24 || addr_map_pkg::PFCG_SRC_MAC_HI_MAC_W != 16)
  begin : g_bad_pfcg_fields
    $error("csr: a field of block PFCG differs in width from its port");
  end

  // The two 2-bit views of CTRL.STATE (see the header).
  function automatic logic [1:0] tx_view(input logic [2:0] st);
    unique case (st)
      3'(rnic_pkg::QP_RTS):   tx_view = rnic_pkg::QP_RTS;
      3'(rnic_pkg::QP_ERROR): tx_view = rnic_pkg::QP_ERROR;
      default:                tx_view = rnic_pkg::QP_RESET;
    endcase
  endfunction

  function automatic logic [1:0] rx_view(input logic [2:0] st);
    unique case (st)
      3'(rnic_pkg::QP_RTS), rnic_pkg::QP_RTR: rx_view = rnic_pkg::QP_RTS;
      3'(rnic_pkg::QP_ERROR):                 rx_view = rnic_pkg::QP_ERROR;
      default:                                rx_view = rnic_pkg::QP_RESET;
    endcase
  endfunction

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  // Every word of the three tables is in RAM (ctx_table). Beside it, per
  // QP: CTRL.STATE and CTRL.CC_EN in flops (hardware writes STATE, and
  // every QP's state and CC enable is seen at once), and PSN's second RAM
  // for hardware's writes with a flop saying which RAM wrote last.
  logic [3*QPS-1:0] qp_st_q;
  logic [QPS-1:0]   qp_cc_en_q, psn_lvt_q;
  logic [23:0]      psn_hw_mem [QPS];
  // Every QP's VLAN.PCP, a copy of the RAM's field for qp_pcp_all.
  logic [3*QPS-1:0] pcp_all_q;
  logic [31:0]  pcie_cfg_q, cpl_timeout_q;
  logic [31:0]  cnt_tx_frames_q, cnt_wqe_fetched_q, cnt_cqe_written_q, cnt_prot_err_q;
  logic [31:0]  cnt_flush_q, cnt_fetch_err_q, cnt_dma_err_q;
  logic [63:0]  cnt_tx_bytes_q;
  // ACKs / NAKs for PSNs never sent: counted from ack_tracker's own event,
  // not one of the receive path's event counters below.
  logic [31:0]  cnt_ack_invalid_q;
  // The responder side's multi-bit counts (RECV WQEs fetched, payload bytes
  // written); its one-bit events count in cnt_rev_q below.
  logic [31:0]  cnt_rqe_fetched_q;
  logic [31:0]  cnt_read_full_q;
  logic [31:0]  cnt_snk_q [6];
  logic [31:0]  cnt_pfcg_q [2];
  logic [31:0]  cnt_retx_q [4];
  logic [63:0]  cnt_rx_wr_bytes_q;
  logic         psn_set_valid_q;
  logic [QPW-1:0] psn_set_qp_q;
  logic [23:0]  psn_set_psn_q;
  logic         epsn_set_valid_q;
  logic [QPW-1:0] epsn_set_qp_q;
  logic [23:0]  epsn_set_psn_q;
  logic         rq_db_valid_q;
  logic [QPW-1:0] rq_db_qp_q;
  logic [15:0]  rq_db_pi_q;
  logic [2:0]   rq_db_state_q;
  logic [63:0]  rq_db_base_q;
  logic [4:0]   rq_db_log_q;
  logic [2:0]   rctx_state_q;
  logic         rctx_uc_q;
  logic [2:0]   rctx_mtu_q;
  logic [15:0]  rctx_pd_q;
  logic [CQW-1:0] rctx_rq_cq_q;
  logic [4:0]   rctx_rnr_timer_q;
  logic [2:0]   rctx_max_rd_q;
  logic [3:0]   rctx_access_q;
  logic [23:0]  rctx_remote_qpn_q;
  logic [4:0]   xctx_timeout_q;
  logic [2:0]   xctx_retry_q;
  logic [2:0]   xctx_rnr_retry_q;
  logic         rmr_valid_q;
  logic [31:0]  rmr_key_q;
  logic [63:0]  rmr_va_q, rmr_len_q, rmr_pbase_q;
  logic [3:0]   rmr_access_q;
  logic [15:0]  rmr_pd_q;
  // The one-bit event counters of the receive path: ev_vec[k] counts in
  // cnt_ev_q[k], which the map's `read` line of its CNT register names.
  localparam int NEV = 19;
  logic [NEV-1:0] ev_vec;
  logic [31:0]  cnt_ev_q [NEV];
  // The responder side's one-bit event counters: rev_vec[k] counts in
  // cnt_rev_q[k] (CNT_RESP_EXEC .. CNT_READ_JOBS, in that order).
  localparam int NREV = 16;
  logic [NREV-1:0] rev_vec;
  logic [31:0]  cnt_rev_q [NREV];
  // Block CC's RW words in address order (DCQCN_G .. STAT_QP): the map's
  // ARRAY of block CC, its masks and resets generated from it.
  localparam int NCC = addr_map_pkg::CC_RW_N;
  logic [31:0]  cc_q [NCC];
  logic [15:0]  wr_cc_rel;
  // Block PFCG's RW words in address order (EN .. SRC_MAC_HI).
  localparam int NPFCG = addr_map_pkg::PFCG_RW_N;
  logic [31:0]  pfcg_q [NPFCG];
  logic [15:0]  wr_pfcg_rel;
  logic         rd_resp_valid_q;
  logic [31:0]  rd_resp_data_q;
  logic         db_valid_q;
  logic [QPW-1:0] db_qp_q;
  logic [15:0]  db_pi_q;
  logic [1:0]   db_state_q;
  logic [63:0]  db_sq_base_q;
  logic [4:0]   db_sq_log_q;
  // Lookup port registers (qp_*, mr_*, cq_*).
  logic [1:0]   qp_state_q;
  logic         qp_uc_q, qp_ipv6_q, qp_vlan_en_q, qp_ecn_en_q;
  logic [2:0]   qp_mtu_q, qp_max_rd_q;
  logic [CQW-1:0] qp_cq_q;
  logic [23:0]  qp_remote_qpn_q, qp_psn_q;
  logic [15:0]  qp_pd_q;
  logic [47:0]  qp_dst_mac_q, qp_src_mac_q;
  logic [127:0] qp_src_ip_q, qp_dst_ip_q;
  logic [15:0]  qp_udp_sport_q;
  logic [5:0]   qp_dscp_q;
  logic [11:0]  qp_vid_q;
  logic [2:0]   qp_pcp_q;
  logic [15:0]  qp_pkey_q;
  logic         mr_valid_q;
  logic [31:0]  mr_key_q;
  logic [63:0]  mr_va_q, mr_len_q, mr_pbase_q;
  logic [3:0]   mr_access_q;
  logic [15:0]  mr_pd_q;
  logic [63:0]  cq_base_q;
  logic [4:0]   cq_log_q;

  // ------------------------------------------------------------------
  // Write decode: which table entry and word (aligned addresses only)
  // ------------------------------------------------------------------
  logic [15:0]         wr_qp_rel, wr_mr_rel, wr_cq_rel;
  logic                wr_qp_hit, wr_mr_hit, wr_cq_hit;
  logic [QPW-1:0]      wr_qp_ent;
  logic [MRW-1:0]      wr_mr_ent;
  logic [CQW-1:0]      wr_cq_ent;
  logic [QP_SL-3:0]    wr_qp_wrd;
  logic [MR_SL-3:0]    wr_mr_wrd;
  logic [CQ_SL-3:0]    wr_cq_wrd;
  logic                wr_glob, db_hit, rq_db_hit;
  logic [addr_map_pkg::GLOBAL_DOORBELL_QP_W-1:0] db_field_qp;
  logic [addr_map_pkg::GLOBAL_RQ_DOORBELL_QP_W-1:0] rq_db_field_qp;

  always_comb begin
    wr_glob   = mmio_wr_valid && mmio_wr_addr[1:0] == 2'd0;
    wr_qp_rel = mmio_wr_addr - addr_map_pkg::QP_BASE;
    wr_mr_rel = mmio_wr_addr - addr_map_pkg::MR_BASE;
    wr_cq_rel = mmio_wr_addr - addr_map_pkg::CQ_BASE;
    wr_qp_ent = wr_qp_rel[QP_SL +: QPW];
    wr_mr_ent = wr_mr_rel[MR_SL +: MRW];
    wr_cq_ent = wr_cq_rel[CQ_SL +: CQW];
    wr_qp_wrd = wr_qp_rel[QP_SL-1:2];
    wr_mr_wrd = wr_mr_rel[MR_SL-1:2];
    wr_cq_wrd = wr_cq_rel[CQ_SL-1:2];
    // An address below a table's base wraps to a large offset: no hit.
    wr_qp_hit = wr_glob && wr_qp_rel < QP_SPAN && 32'(wr_qp_wrd) < QP_WORDS;
    wr_mr_hit = wr_glob && wr_mr_rel < MR_SPAN && 32'(wr_mr_wrd) < MR_WORDS;
    wr_cq_hit = wr_glob && wr_cq_rel < CQ_SPAN && 32'(wr_cq_wrd) < CQ_WORDS;
    db_field_qp = mmio_wr_data[addr_map_pkg::GLOBAL_DOORBELL_QP_LSB +: addr_map_pkg::GLOBAL_DOORBELL_QP_W];
    db_hit    = wr_glob && mmio_wr_addr == addr_map_pkg::GLOBAL_DOORBELL_ADDR
                && 32'(db_field_qp) < QPS;
    rq_db_field_qp = mmio_wr_data[addr_map_pkg::GLOBAL_RQ_DOORBELL_QP_LSB +: addr_map_pkg::GLOBAL_RQ_DOORBELL_QP_W];
    rq_db_hit = wr_glob && mmio_wr_addr == addr_map_pkg::GLOBAL_RQ_DOORBELL_ADDR
                && 32'(rq_db_field_qp) < QPS;
  end

  // ------------------------------------------------------------------
  // Tables: RAM columns in a ctx_table (software's writes), and per QP the
  // flops and the RAM hardware writes (the registers' comment above).
  // ------------------------------------------------------------------
  logic [QPS-1:0]      qp_ent_oh, psn_hit, err_hit;
  logic                qp_wrd_ctrl, qp_wrd_psn;

  always_comb begin
    for (int e = 0; e < QPS; e++) begin
      qp_ent_oh[e] = wr_qp_hit && wr_qp_ent == QPW'(e);
      psn_hit[e]   = psn_wr_valid && psn_wr_qp == QPW'(e);
      err_hit[e]   = (err_a_valid && err_a_qp == QPW'(e)) || (err_b_valid && err_b_qp == QPW'(e))
                  || (err_c_valid && err_c_qp == QPW'(e)) || (err_d_valid && err_d_qp == QPW'(e))
                  || (err_e_valid && err_e_qp == QPW'(e));
    end
    qp_wrd_ctrl = wr_qp_wrd == (QP_SL-2)'(addr_map_pkg::QP_CTRL_WORD);
    qp_wrd_psn  = wr_qp_wrd == (QP_SL-2)'(addr_map_pkg::QP_PSN_WORD);
  end

  // A software write of a QP's PSN field that psn_wr does not override, and
  // of its EPSN (no hardware writes it).
  logic psn_sw, epsn_sw;
  always_comb begin
    psn_sw  = wr_qp_hit && qp_wrd_psn && !psn_hit[wr_qp_ent];
    epsn_sw = wr_qp_hit && wr_qp_wrd == (QP_SL-2)'(addr_map_pkg::QP_EPSN_WORD);
  end

  // Per entry: STATE (err_a..e win over an MMIO write of it, not of CTRL's
  // other fields), CC_EN, the PSN's last writer (psn_wr wins over an MMIO
  // write of PSN: a live-value table of one bit), the PCP copy.
  for (genvar e = 0; e < QPS; e++) begin : g_qp_e
    localparam logic [2:0] ST_RESET =
      addr_map_pkg::QP_RESETS[32*addr_map_pkg::QP_CTRL_WORD + addr_map_pkg::QP_CTRL_STATE_LSB +: 3];
    localparam logic CC_EN_RESET =
      addr_map_pkg::QP_RESETS[32*addr_map_pkg::QP_CTRL_WORD + addr_map_pkg::QP_CTRL_CC_EN_LSB];
    localparam logic [2:0] PCP_RESET =
      addr_map_pkg::QP_RESETS[32*addr_map_pkg::QP_VLAN_WORD + addr_map_pkg::QP_VLAN_PCP_LSB +: 3];
    logic ctrl_hit;
    assign ctrl_hit = qp_ent_oh[e] && qp_wrd_ctrl;
    always_ff @(posedge clk) begin
      if (rst) begin
        qp_st_q[3*e +: 3]   <= ST_RESET;
        qp_cc_en_q[e]       <= CC_EN_RESET;
        psn_lvt_q[e]        <= 1'b0;
        pcp_all_q[3*e +: 3] <= PCP_RESET;
      end else begin
        if (err_hit[e])    qp_st_q[3*e +: 3] <= 3'(rnic_pkg::QP_ERROR);
        else if (ctrl_hit) qp_st_q[3*e +: 3] <= mmio_wr_data[addr_map_pkg::QP_CTRL_STATE_LSB +: 3];
        if (ctrl_hit) qp_cc_en_q[e] <= mmio_wr_data[addr_map_pkg::QP_CTRL_CC_EN_LSB];
        if (psn_hit[e])                       psn_lvt_q[e] <= 1'b1;
        else if (qp_ent_oh[e] && qp_wrd_psn) psn_lvt_q[e] <= 1'b0;
        if (qp_ent_oh[e] && wr_qp_wrd == (QP_SL-2)'(addr_map_pkg::QP_VLAN_WORD)) begin
          pcp_all_q[3*e +: 3] <= mmio_wr_data[addr_map_pkg::QP_VLAN_PCP_LSB +: 3];
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (psn_wr_valid) psn_hw_mem[psn_wr_qp] <= psn_wr_psn;
  end

  // The QP table's readers, one ctx_table read port each.
  localparam int QP_NRD = 6;
  localparam int RQ_TX = 0, RQ_RESP = 1, RQ_RETRY = 2, RQ_DB = 3, RQ_RQDB = 4, RQ_MMIO = 5;
  // Bit w of a reader's mask: it reads word w.
  function automatic logic [QP_WORDS-1:0] qp_bit(input int w);
    qp_bit = QP_WORDS'(1) << w;
  endfunction
  localparam logic [QP_WORDS-1:0] QP_TX_WORDS =
    qp_bit(addr_map_pkg::QP_CTRL_WORD) | qp_bit(addr_map_pkg::QP_PSN_WORD)
    | qp_bit(addr_map_pkg::QP_REMOTE_QPN_WORD) | qp_bit(addr_map_pkg::QP_PD_WORD)
    | qp_bit(addr_map_pkg::QP_DST_MAC_LO_WORD) | qp_bit(addr_map_pkg::QP_DST_MAC_HI_WORD)
    | qp_bit(addr_map_pkg::QP_SRC_MAC_LO_WORD) | qp_bit(addr_map_pkg::QP_SRC_MAC_HI_WORD)
    | qp_bit(addr_map_pkg::QP_SRC_IP0_WORD) | qp_bit(addr_map_pkg::QP_SRC_IP1_WORD)
    | qp_bit(addr_map_pkg::QP_SRC_IP2_WORD) | qp_bit(addr_map_pkg::QP_SRC_IP3_WORD)
    | qp_bit(addr_map_pkg::QP_DST_IP0_WORD) | qp_bit(addr_map_pkg::QP_DST_IP1_WORD)
    | qp_bit(addr_map_pkg::QP_DST_IP2_WORD) | qp_bit(addr_map_pkg::QP_DST_IP3_WORD)
    | qp_bit(addr_map_pkg::QP_UDP_WORD) | qp_bit(addr_map_pkg::QP_VLAN_WORD);
  localparam logic [QP_WORDS-1:0] QP_RESP_WORDS =
    qp_bit(addr_map_pkg::QP_CTRL_WORD) | qp_bit(addr_map_pkg::QP_REMOTE_QPN_WORD) | qp_bit(addr_map_pkg::QP_PD_WORD)
    | qp_bit(addr_map_pkg::QP_RESP_WORD);
  localparam logic [QP_WORDS-1:0] QP_RETRY_WORDS = qp_bit(addr_map_pkg::QP_RETRY_WORD);
  localparam logic [QP_WORDS-1:0] QP_DB_WORDS =
    qp_bit(addr_map_pkg::QP_CTRL_WORD) | qp_bit(addr_map_pkg::QP_SQ_BASE_LO_WORD) | qp_bit(addr_map_pkg::QP_SQ_BASE_HI_WORD)
    | qp_bit(addr_map_pkg::QP_SQ_LOG_WORD);
  localparam logic [QP_WORDS-1:0] QP_RQDB_WORDS =
    qp_bit(addr_map_pkg::QP_CTRL_WORD) | qp_bit(addr_map_pkg::QP_RQ_BASE_LO_WORD) | qp_bit(addr_map_pkg::QP_RQ_BASE_HI_WORD)
    | qp_bit(addr_map_pkg::QP_RQ_LOG_WORD);
  localparam logic [QP_WORDS-1:0] QP_MMIO_WORDS = '1;

  logic [15:0]      rd_qp_rel, rd_mr_rel, rd_cq_rel;
  logic [QPW-1:0]   db_qp_d, rq_db_qp_d, rd_qp_e;
  logic [QP_NRD*QPW-1:0] qp_rd_ent;
  // Words a reader does not read are 0 and left unread.
  /* verilator lint_off UNUSEDSIGNAL */
  logic [QP_NRD*QP_EW-1:0] qp_rd;
  /* verilator lint_on UNUSEDSIGNAL */

  assign rd_qp_e    = rd_qp_rel[QP_SL +: QPW];
  assign db_qp_d    = db_field_qp[QPW-1:0];
  assign rq_db_qp_d = rq_db_field_qp[QPW-1:0];
  assign qp_rd_ent = {rd_qp_e, rq_db_qp_d, db_qp_d, xctx_idx, rctx_idx, qp_idx};

  ctx_table #(
    .ENTRIES(QPS), .WORDS(QP_WORDS), .WW(QP_SL - 2), .NRD(QP_NRD),
    .MASKS(addr_map_pkg::QP_MASKS), .RESETS(addr_map_pkg::QP_RESETS),
    .RD_WORDS({QP_MMIO_WORDS, QP_RQDB_WORDS, QP_DB_WORDS, QP_RETRY_WORDS, QP_RESP_WORDS, QP_TX_WORDS})
  ) u_qp_tab (
    .clk, .rst,
    .wr_valid(wr_qp_hit),
    .wr_ent  (wr_qp_ent),
    .wr_word (wr_qp_wrd),
    .wr_data (mmio_wr_data),
    .rd_ent  (qp_rd_ent),
    .rd_data (qp_rd)
  );

  // The MR table's readers: the transmit path's lookup, the responder's,
  // MMIO; the CQ table's: the lookup, MMIO. Every reader reads every word.
  logic [3*MR_EW-1:0] mr_rd;
  logic [2*CQ_EW-1:0] cq_rd;

  ctx_table #(
    .ENTRIES(MRS), .WORDS(MR_WORDS), .WW(MR_SL - 2), .NRD(3),
    .MASKS(addr_map_pkg::MR_MASKS), .RESETS(addr_map_pkg::MR_RESETS)
  ) u_mr_tab (
    .clk, .rst,
    .wr_valid(wr_mr_hit),
    .wr_ent  (wr_mr_ent),
    .wr_word (wr_mr_wrd),
    .wr_data (mmio_wr_data),
    .rd_ent  ({rd_mr_rel[MR_SL +: MRW], rmr_idx, mr_idx}),
    .rd_data (mr_rd)
  );

  ctx_table #(
    .ENTRIES(CQS), .WORDS(CQ_WORDS), .WW(CQ_SL - 2), .NRD(2),
    .MASKS(addr_map_pkg::CQ_MASKS), .RESETS(addr_map_pkg::CQ_RESETS)
  ) u_cq_tab (
    .clk, .rst,
    .wr_valid(wr_cq_hit),
    .wr_ent  (wr_cq_ent),
    .wr_word (wr_cq_wrd),
    .wr_data (mmio_wr_data),
    .rd_ent  ({rd_cq_rel[CQ_SL +: CQW], cq_idx}),
    .rd_data (cq_rd)
  );

  // ------------------------------------------------------------------
  // Lookups: reader p's word w (its table's read data), or entry `e`'s word
  // out of a flop column (a constant slice, given at the call)
  // ------------------------------------------------------------------
  // Bit offsets of reader p's word w in a table's read data (constants:
  // a function taking the wide read vector would copy all of it at every
  // call in the Verilated C++).
  function automatic int qp_off(input int p, input int w);
    qp_off = 32 * (QP_WORDS * p + w);
  endfunction

  function automatic int mr_off(input int p, input int w);
    mr_off = 32 * (MR_WORDS * p + w);
  endfunction

  function automatic int cq_off(input int p, input int w);
    cq_off = 32 * (CQ_WORDS * p + w);
  endfunction

  // A CTRL word as read: the RAM's, with the entry's STATE and CC_EN from
  // their flops (the RAM holds what MMIO last wrote there).
  function automatic logic [31:0] ctrl_of(input logic [31:0] ram, input logic [2:0] st, input logic cc_en);
    ctrl_of = ram;
    ctrl_of[addr_map_pkg::QP_CTRL_STATE_LSB +: 3] = st;
    ctrl_of[addr_map_pkg::QP_CTRL_CC_EN_LSB]      = cc_en;
  endfunction

  logic [31:0]    db_ctrl_w, db_sq_lo_w, db_sq_hi_w, db_sq_log_w;
  logic [31:0]    rq_db_ctrl_w, rq_db_lo_w, rq_db_hi_w, rq_db_log_w;
  logic [31:0]    rctx_ctrl_w, rctx_rqpn_w, rctx_pd_w, rctx_resp_w;
  logic [31:0]    xctx_retry_w;
  logic [31:0]    rmr_key_w, rmr_va_lo_w, rmr_va_hi_w, rmr_len_lo_w, rmr_len_hi_w;
  logic [31:0]    rmr_pbase_lo_w, rmr_pbase_hi_w, rmr_flags_w, rmr_pd_w;
  logic [31:0]    qp_ctrl_w, qp_rqpn_w, qp_psn_w, qp_pd_w, qp_udp_w, qp_vlan_w;
  logic [31:0]    qp_dmac_lo_w, qp_dmac_hi_w, qp_smac_lo_w, qp_smac_hi_w;
  logic [127:0]   qp_sip_w, qp_dip_w;
  logic [31:0]    mr_key_w, mr_va_lo_w, mr_va_hi_w, mr_len_lo_w, mr_len_hi_w;
  logic [31:0]    mr_pbase_lo_w, mr_pbase_hi_w, mr_flags_w, mr_pd_w;
  logic [31:0]    cq_base_lo_w, cq_base_hi_w, cq_log_w;

  // The doorbell's QP after this cycle's writes. The doorbell is this
  // cycle's one MMIO write, so no MMIO write touches the QP table in the
  // same cycle: the only writes to that entry are hardware's, and of the
  // fields read here only STATE is one of them (err_a..e; psn_wr writes
  // PSN). Reading the table and applying that override, rather than picking
  // out of the CTRL words' next values, leaves those feeding the flops
  // alone, so Yosys turns their muxes into flop enables and drops the
  // masked-off bits.
  always_comb begin
    db_ctrl_w     = ctrl_of(qp_rd[qp_off(RQ_DB, addr_map_pkg::QP_CTRL_WORD) +: 32],
                            qp_st_q[3*db_qp_d +: 3], qp_cc_en_q[db_qp_d]);
    if (err_hit[db_qp_d]) begin
      db_ctrl_w[addr_map_pkg::QP_CTRL_STATE_LSB +: addr_map_pkg::QP_CTRL_STATE_W] = 3'(rnic_pkg::QP_ERROR);
    end
    db_sq_lo_w   = qp_rd[qp_off(RQ_DB, addr_map_pkg::QP_SQ_BASE_LO_WORD) +: 32];
    db_sq_hi_w   = qp_rd[qp_off(RQ_DB, addr_map_pkg::QP_SQ_BASE_HI_WORD) +: 32];
    db_sq_log_w  = qp_rd[qp_off(RQ_DB, addr_map_pkg::QP_SQ_LOG_WORD) +: 32];
  end

  // The RQ doorbell's QP, the same way (it is this cycle's one MMIO write).
  always_comb begin
    rq_db_ctrl_w  = ctrl_of(qp_rd[qp_off(RQ_RQDB, addr_map_pkg::QP_CTRL_WORD) +: 32],
                            qp_st_q[3*rq_db_qp_d +: 3], qp_cc_en_q[rq_db_qp_d]);
    if (err_hit[rq_db_qp_d]) begin
      rq_db_ctrl_w[addr_map_pkg::QP_CTRL_STATE_LSB +: addr_map_pkg::QP_CTRL_STATE_W] = 3'(rnic_pkg::QP_ERROR);
    end
    rq_db_lo_w   = qp_rd[qp_off(RQ_RQDB, addr_map_pkg::QP_RQ_BASE_LO_WORD) +: 32];
    rq_db_hi_w   = qp_rd[qp_off(RQ_RQDB, addr_map_pkg::QP_RQ_BASE_HI_WORD) +: 32];
    rq_db_log_w  = qp_rd[qp_off(RQ_RQDB, addr_map_pkg::QP_RQ_LOG_WORD) +: 32];
  end

  // The responder's lookups: the tables as they are now.
  always_comb begin
    rctx_ctrl_w     = ctrl_of(qp_rd[qp_off(RQ_RESP, addr_map_pkg::QP_CTRL_WORD) +: 32],
                              qp_st_q[3*rctx_idx +: 3], qp_cc_en_q[rctx_idx]);
    rctx_rqpn_w    = qp_rd[qp_off(RQ_RESP, addr_map_pkg::QP_REMOTE_QPN_WORD) +: 32];
    rctx_pd_w      = qp_rd[qp_off(RQ_RESP, addr_map_pkg::QP_PD_WORD) +: 32];
    rctx_resp_w    = qp_rd[qp_off(RQ_RESP, addr_map_pkg::QP_RESP_WORD) +: 32];
    xctx_retry_w   = qp_rd[qp_off(RQ_RETRY, addr_map_pkg::QP_RETRY_WORD) +: 32];
    rmr_key_w      = mr_rd[mr_off(1, addr_map_pkg::MR_KEY_WORD) +: 32];
    rmr_va_lo_w    = mr_rd[mr_off(1, addr_map_pkg::MR_VA_LO_WORD) +: 32];
    rmr_va_hi_w    = mr_rd[mr_off(1, addr_map_pkg::MR_VA_HI_WORD) +: 32];
    rmr_len_lo_w   = mr_rd[mr_off(1, addr_map_pkg::MR_LEN_LO_WORD) +: 32];
    rmr_len_hi_w   = mr_rd[mr_off(1, addr_map_pkg::MR_LEN_HI_WORD) +: 32];
    rmr_pbase_lo_w = mr_rd[mr_off(1, addr_map_pkg::MR_PBASE_LO_WORD) +: 32];
    rmr_pbase_hi_w = mr_rd[mr_off(1, addr_map_pkg::MR_PBASE_HI_WORD) +: 32];
    rmr_flags_w    = mr_rd[mr_off(1, addr_map_pkg::MR_FLAGS_WORD) +: 32];
    rmr_pd_w       = mr_rd[mr_off(1, addr_map_pkg::MR_PD_WORD) +: 32];
  end

  // Lookup ports: the tables as they are now.
  always_comb begin
    qp_ctrl_w     = ctrl_of(qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_CTRL_WORD) +: 32],
                            qp_st_q[3*qp_idx +: 3], qp_cc_en_q[qp_idx]);
    qp_psn_w     = psn_lvt_q[qp_idx] ? {8'd0, psn_hw_mem[qp_idx]}
                                     : qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_PSN_WORD) +: 32];
    qp_rqpn_w    = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_REMOTE_QPN_WORD) +: 32];
    qp_pd_w      = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_PD_WORD) +: 32];
    qp_dmac_lo_w = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_DST_MAC_LO_WORD) +: 32];
    qp_dmac_hi_w = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_DST_MAC_HI_WORD) +: 32];
    qp_smac_lo_w = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_SRC_MAC_LO_WORD) +: 32];
    qp_smac_hi_w = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_SRC_MAC_HI_WORD) +: 32];
    qp_sip_w     = {qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_SRC_IP0_WORD) +: 32],
                    qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_SRC_IP1_WORD) +: 32],
                    qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_SRC_IP2_WORD) +: 32],
                    qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_SRC_IP3_WORD) +: 32]};
    qp_dip_w     = {qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_DST_IP0_WORD) +: 32],
                    qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_DST_IP1_WORD) +: 32],
                    qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_DST_IP2_WORD) +: 32],
                    qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_DST_IP3_WORD) +: 32]};
    qp_udp_w     = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_UDP_WORD) +: 32];
    qp_vlan_w    = qp_rd[qp_off(RQ_TX, addr_map_pkg::QP_VLAN_WORD) +: 32];
    mr_key_w      = mr_rd[mr_off(0, addr_map_pkg::MR_KEY_WORD) +: 32];
    mr_va_lo_w    = mr_rd[mr_off(0, addr_map_pkg::MR_VA_LO_WORD) +: 32];
    mr_va_hi_w    = mr_rd[mr_off(0, addr_map_pkg::MR_VA_HI_WORD) +: 32];
    mr_len_lo_w   = mr_rd[mr_off(0, addr_map_pkg::MR_LEN_LO_WORD) +: 32];
    mr_len_hi_w   = mr_rd[mr_off(0, addr_map_pkg::MR_LEN_HI_WORD) +: 32];
    mr_pbase_lo_w = mr_rd[mr_off(0, addr_map_pkg::MR_PBASE_LO_WORD) +: 32];
    mr_pbase_hi_w = mr_rd[mr_off(0, addr_map_pkg::MR_PBASE_HI_WORD) +: 32];
    mr_flags_w    = mr_rd[mr_off(0, addr_map_pkg::MR_FLAGS_WORD) +: 32];
    mr_pd_w       = mr_rd[mr_off(0, addr_map_pkg::MR_PD_WORD) +: 32];
    cq_base_lo_w  = cq_rd[cq_off(0, addr_map_pkg::CQ_BASE_LO_WORD) +: 32];
    cq_base_hi_w  = cq_rd[cq_off(0, addr_map_pkg::CQ_BASE_HI_WORD) +: 32];
    cq_log_w      = cq_rd[cq_off(0, addr_map_pkg::CQ_LOG_WORD) +: 32];
  end

  // ------------------------------------------------------------------
  // MMIO read: the addressed register as it is now
  // ------------------------------------------------------------------
  logic [QP_SL-3:0] rd_qp_wrd;
  logic [MR_SL-3:0] rd_mr_wrd;
  logic [CQ_SL-3:0] rd_cq_wrd;
  logic [QP_EW-1:0] rd_qp_ent;
  logic [MR_EW-1:0] rd_mr_ent;
  logic [CQ_EW-1:0] rd_cq_ent;
  logic [31:0]      rd_data;

  always_comb begin
    rd_qp_rel = mmio_rd_addr - addr_map_pkg::QP_BASE;
    rd_mr_rel = mmio_rd_addr - addr_map_pkg::MR_BASE;
    rd_cq_rel = mmio_rd_addr - addr_map_pkg::CQ_BASE;
  end

  always_comb begin
    rd_qp_wrd = rd_qp_rel[QP_SL-1:2];
    rd_mr_wrd = rd_mr_rel[MR_SL-1:2];
    rd_cq_wrd = rd_cq_rel[CQ_SL-1:2];
    // The addressed entry's words: the RAM reader's, CTRL and PSN as the
    // lookups see them.
    rd_qp_ent = qp_rd[QP_EW*RQ_MMIO +: QP_EW];
    rd_qp_ent[32*addr_map_pkg::QP_CTRL_WORD +: 32] =
      ctrl_of(rd_qp_ent[32*addr_map_pkg::QP_CTRL_WORD +: 32], qp_st_q[3*rd_qp_e +: 3], qp_cc_en_q[rd_qp_e]);
    if (psn_lvt_q[rd_qp_e]) rd_qp_ent[32*addr_map_pkg::QP_PSN_WORD +: 32] = {8'd0, psn_hw_mem[rd_qp_e]};
    rd_mr_ent = mr_rd[MR_EW*2 +: MR_EW];
    rd_cq_ent = cq_rd[CQ_EW +: CQ_EW];
  end

  always_comb begin
    rd_data = 32'd0;
    if (mmio_rd_addr[1:0] != 2'd0) begin
      rd_data = 32'd0;
    end else if (rd_qp_rel < QP_SPAN) begin
      for (int w = 0; w < QP_WORDS; w++) begin
        if (rd_qp_wrd == (QP_SL-2)'(w)) rd_data = rd_qp_ent[32*w +: 32];
      end
    end else if (rd_mr_rel < MR_SPAN) begin
      for (int w = 0; w < MR_WORDS; w++) begin
        if (rd_mr_wrd == (MR_SL-2)'(w)) rd_data = rd_mr_ent[32*w +: 32];
      end
    end else if (rd_cq_rel < CQ_SPAN) begin
      for (int w = 0; w < CQ_WORDS; w++) begin
        if (rd_cq_wrd == (CQ_SL-2)'(w)) rd_data = rd_cq_ent[32*w +: 32];
      end
    end else begin
      // BEGIN gen_csr.py: the block registers' read mux (from hw/csr/csr_map.txt)
      unique case (mmio_rd_addr)
        addr_map_pkg::GLOBAL_ID_ADDR: rd_data = addr_map_pkg::GLOBAL_ID_VALUE;
        addr_map_pkg::GLOBAL_VERSION_ADDR: rd_data = addr_map_pkg::GLOBAL_VERSION_VALUE;
        addr_map_pkg::GLOBAL_PCIE_CFG_ADDR: rd_data = pcie_cfg_q;
        addr_map_pkg::GLOBAL_CPL_TIMEOUT_ADDR: rd_data = cpl_timeout_q;
        addr_map_pkg::GLOBAL_PARAMS_ADDR: begin
          rd_data[addr_map_pkg::GLOBAL_PARAMS_QPS_LSB +: addr_map_pkg::GLOBAL_PARAMS_QPS_W] = addr_map_pkg::GLOBAL_PARAMS_QPS_W'(QPS);
          rd_data[addr_map_pkg::GLOBAL_PARAMS_MRS_LSB +: addr_map_pkg::GLOBAL_PARAMS_MRS_W] = addr_map_pkg::GLOBAL_PARAMS_MRS_W'(MRS);
          rd_data[addr_map_pkg::GLOBAL_PARAMS_CQS_LSB +: addr_map_pkg::GLOBAL_PARAMS_CQS_W] = addr_map_pkg::GLOBAL_PARAMS_CQS_W'(CQS);
        end
        addr_map_pkg::CNT_TX_FRAMES_ADDR: rd_data = cnt_tx_frames_q;
        addr_map_pkg::CNT_TX_BYTES_LO_ADDR: rd_data = cnt_tx_bytes_q[31:0];
        addr_map_pkg::CNT_TX_BYTES_HI_ADDR: rd_data = cnt_tx_bytes_q[63:32];
        addr_map_pkg::CNT_WQE_FETCHED_ADDR: rd_data = cnt_wqe_fetched_q;
        addr_map_pkg::CNT_CQE_WRITTEN_ADDR: rd_data = cnt_cqe_written_q;
        addr_map_pkg::CNT_PROT_ERR_ADDR: rd_data = cnt_prot_err_q;
        addr_map_pkg::CNT_FLUSH_ADDR: rd_data = cnt_flush_q;
        addr_map_pkg::CNT_FETCH_ERR_ADDR: rd_data = cnt_fetch_err_q;
        addr_map_pkg::CNT_DMA_ERR_ADDR: rd_data = cnt_dma_err_q;
        addr_map_pkg::CNT_CPL_UNEXPECTED_ADDR: rd_data = dma_cpl_unexpected;
        addr_map_pkg::CNT_CPL_MALFORMED_ADDR: rd_data = dma_cpl_malformed;
        addr_map_pkg::CNT_CPL_TIMEOUT_ADDR: rd_data = dma_cpl_timeout;
        addr_map_pkg::CNT_RX_FRAMES_ADDR: rd_data = cnt_ev_q[0];
        addr_map_pkg::CNT_RX_PFC_ADDR: rd_data = cnt_ev_q[1];
        addr_map_pkg::CNT_RX_CNP_ADDR: rd_data = cnt_ev_q[2];
        addr_map_pkg::CNT_RX_ACK_ADDR: rd_data = cnt_ev_q[3];
        addr_map_pkg::CNT_RX_DATA_ADDR: rd_data = cnt_ev_q[4];
        addr_map_pkg::CNT_RX_CE_ADDR: rd_data = cnt_ev_q[5];
        addr_map_pkg::CNT_DROP_FCS_ADDR: rd_data = cnt_ev_q[6];
        addr_map_pkg::CNT_DROP_RUNT_ADDR: rd_data = cnt_ev_q[7];
        addr_map_pkg::CNT_DROP_NOT_ROCE_ADDR: rd_data = cnt_ev_q[8];
        addr_map_pkg::CNT_DROP_TRUNC_ADDR: rd_data = cnt_ev_q[9];
        addr_map_pkg::CNT_DROP_IP_CSUM_ADDR: rd_data = cnt_ev_q[10];
        addr_map_pkg::CNT_DROP_ICRC_ADDR: rd_data = cnt_ev_q[11];
        addr_map_pkg::CNT_DROP_OPCODE_ADDR: rd_data = cnt_ev_q[12];
        addr_map_pkg::CNT_DROP_QP_ADDR: rd_data = cnt_ev_q[13];
        addr_map_pkg::CNT_ACK_NEW_ADDR: rd_data = cnt_ev_q[14];
        addr_map_pkg::CNT_ACK_DUP_ADDR: rd_data = cnt_ev_q[15];
        addr_map_pkg::CNT_NAK_ADDR: rd_data = cnt_ev_q[16];
        addr_map_pkg::CNT_CNP_SENT_ADDR: rd_data = cnt_ev_q[17];
        addr_map_pkg::CNT_CE_SUPPRESSED_ADDR: rd_data = cnt_ev_q[18];
        addr_map_pkg::CNT_DCQCN_CNP_ADDR: rd_data = dcqcn_cnt_cnp;
        addr_map_pkg::CNT_DCQCN_CUT_ADDR: rd_data = dcqcn_cnt_cut;
        addr_map_pkg::CNT_DCQCN_FR_ADDR: rd_data = dcqcn_cnt_fr;
        addr_map_pkg::CNT_DCQCN_AI_ADDR: rd_data = dcqcn_cnt_ai;
        addr_map_pkg::CNT_DCQCN_HAI_ADDR: rd_data = dcqcn_cnt_hai;
        addr_map_pkg::CNT_DCQCN_ALPHA_ADDR: rd_data = dcqcn_cnt_alpha;
        addr_map_pkg::CNT_ACK_INVALID_ADDR: rd_data = cnt_ack_invalid_q;
        addr_map_pkg::CNT_RESP_EXEC_ADDR: rd_data = cnt_rev_q[0];
        addr_map_pkg::CNT_RESP_DUP_ADDR: rd_data = cnt_rev_q[1];
        addr_map_pkg::CNT_RESP_NAK_SEQ_ADDR: rd_data = cnt_rev_q[2];
        addr_map_pkg::CNT_RESP_NAK_RNR_ADDR: rd_data = cnt_rev_q[3];
        addr_map_pkg::CNT_RESP_NAK_INV_ADDR: rd_data = cnt_rev_q[4];
        addr_map_pkg::CNT_RESP_NAK_ACC_ADDR: rd_data = cnt_rev_q[5];
        addr_map_pkg::CNT_RESP_NAK_OP_ADDR: rd_data = cnt_rev_q[6];
        addr_map_pkg::CNT_RESP_RECV_ADDR: rd_data = cnt_rev_q[7];
        addr_map_pkg::CNT_RESP_UC_DROP_ADDR: rd_data = cnt_rev_q[8];
        addr_map_pkg::CNT_RESP_NOT_READY_ADDR: rd_data = cnt_rev_q[9];
        addr_map_pkg::CNT_RXBUF_FULL_ADDR: rd_data = cnt_rev_q[10];
        addr_map_pkg::CNT_RQ_FETCH_ERR_ADDR: rd_data = cnt_rev_q[11];
        addr_map_pkg::CNT_RX_WRITES_ADDR: rd_data = cnt_rev_q[12];
        addr_map_pkg::CNT_ACK_SENT_ADDR: rd_data = cnt_rev_q[13];
        addr_map_pkg::CNT_ACK_COALESCED_ADDR: rd_data = cnt_rev_q[14];
        addr_map_pkg::CNT_READ_JOBS_ADDR: rd_data = cnt_rev_q[15];
        addr_map_pkg::CNT_RQE_FETCHED_ADDR: rd_data = cnt_rqe_fetched_q;
        addr_map_pkg::CNT_RX_WR_BYTES_LO_ADDR: rd_data = cnt_rx_wr_bytes_q[31:0];
        addr_map_pkg::CNT_RX_WR_BYTES_HI_ADDR: rd_data = cnt_rx_wr_bytes_q[63:32];
        addr_map_pkg::CNT_READ_JOB_FULL_ADDR: rd_data = cnt_read_full_q;
        addr_map_pkg::CNT_RDR_TAKEN_ADDR: rd_data = cnt_snk_q[0];
        addr_map_pkg::CNT_RDR_DONE_ADDR: rd_data = cnt_snk_q[1];
        addr_map_pkg::CNT_RDR_UNEXP_ADDR: rd_data = cnt_snk_q[2];
        addr_map_pkg::CNT_RDR_DUP_ADDR: rd_data = cnt_snk_q[3];
        addr_map_pkg::CNT_RDR_SEQ_ADDR: rd_data = cnt_snk_q[4];
        addr_map_pkg::CNT_RDR_BAD_ADDR: rd_data = cnt_snk_q[5];
        addr_map_pkg::CC_DCQCN_G_ADDR: rd_data = cc_q[0];
        addr_map_pkg::CC_DCQCN_K_ADDR: rd_data = cc_q[1];
        addr_map_pkg::CC_DCQCN_T_INC_ADDR: rd_data = cc_q[2];
        addr_map_pkg::CC_DCQCN_B_ADDR: rd_data = cc_q[3];
        addr_map_pkg::CC_DCQCN_R_AI_ADDR: rd_data = cc_q[4];
        addr_map_pkg::CC_DCQCN_R_HAI_ADDR: rd_data = cc_q[5];
        addr_map_pkg::CC_DCQCN_R_MIN_ADDR: rd_data = cc_q[6];
        addr_map_pkg::CC_DCQCN_R_MAX_ADDR: rd_data = cc_q[7];
        addr_map_pkg::CC_DCQCN_ALPHA_ADDR: rd_data = cc_q[8];
        addr_map_pkg::CC_RL_BURST_ADDR: rd_data = cc_q[9];
        addr_map_pkg::CC_CNP_CFG_ADDR: rd_data = cc_q[10];
        addr_map_pkg::CC_CNP_INTERVAL_ADDR: rd_data = cc_q[11];
        addr_map_pkg::CC_STAT_QP_ADDR: rd_data = cc_q[12];
        addr_map_pkg::CC_DCQCN_MODE_ADDR: rd_data = cc_q[13];
        addr_map_pkg::CC_DCQCN_MON_ADDR: rd_data = cc_q[14];
        addr_map_pkg::CC_DCQCN_ALPHA_T_ADDR: rd_data = cc_q[15];
        addr_map_pkg::CC_STAT_RC_ADDR: rd_data = stat_rc;
        addr_map_pkg::CC_STAT_RT_ADDR: rd_data = stat_rt;
        addr_map_pkg::CC_STAT_ALPHA_ADDR: rd_data[addr_map_pkg::CC_STAT_ALPHA_VALUE_LSB +: addr_map_pkg::CC_STAT_ALPHA_VALUE_W] = stat_alpha;
        addr_map_pkg::PFCG_EN_ADDR: rd_data = pfcg_q[0];
        addr_map_pkg::PFCG_XOFF_ADDR: rd_data = pfcg_q[1];
        addr_map_pkg::PFCG_XON_ADDR: rd_data = pfcg_q[2];
        addr_map_pkg::PFCG_TIME_ADDR: rd_data = pfcg_q[3];
        addr_map_pkg::PFCG_REFRESH_ADDR: rd_data = pfcg_q[4];
        addr_map_pkg::PFCG_SRC_MAC_LO_ADDR: rd_data = pfcg_q[5];
        addr_map_pkg::PFCG_SRC_MAC_HI_ADDR: rd_data = pfcg_q[6];
        addr_map_pkg::PFCG_XOFF_SENT_ADDR: rd_data = cnt_pfcg_q[0];
        addr_map_pkg::PFCG_XON_SENT_ADDR: rd_data = cnt_pfcg_q[1];
        addr_map_pkg::RETX_TIMEOUT_ADDR: rd_data = cnt_retx_q[0];
        addr_map_pkg::RETX_REWIND_ADDR: rd_data = cnt_retx_q[1];
        addr_map_pkg::RETX_RNR_WAIT_ADDR: rd_data = cnt_retx_q[2];
        addr_map_pkg::RETX_EXHAUST_ADDR: rd_data = cnt_retx_q[3];
        // WO registers (DOORBELL) and unmapped addresses read 0.
        default: rd_data = 32'd0;
      endcase
      // END gen_csr.py
    end
  end

  // ------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (rst) begin
      pcie_cfg_q        <= addr_map_pkg::GLOBAL_PCIE_CFG_RESET;
      cpl_timeout_q     <= addr_map_pkg::GLOBAL_CPL_TIMEOUT_RESET;
      cnt_tx_frames_q   <= '0;
      cnt_tx_bytes_q    <= '0;
      cnt_wqe_fetched_q <= '0;
      cnt_cqe_written_q <= '0;
      cnt_prot_err_q    <= '0;
      cnt_flush_q       <= '0;
      cnt_fetch_err_q   <= '0;
      cnt_dma_err_q     <= '0;
      cnt_ack_invalid_q <= '0;
      cnt_rqe_fetched_q <= '0;
      cnt_read_full_q   <= '0;
      cnt_rx_wr_bytes_q <= '0;
      psn_set_valid_q   <= 1'b0;
      psn_set_qp_q      <= '0;
      psn_set_psn_q     <= '0;
      epsn_set_valid_q  <= 1'b0;
      epsn_set_qp_q     <= '0;
      epsn_set_psn_q    <= '0;
      rq_db_valid_q     <= 1'b0;
      rq_db_qp_q        <= '0;
      rq_db_pi_q        <= '0;
      rq_db_state_q     <= '0;
      rq_db_base_q      <= '0;
      rq_db_log_q       <= '0;
      rd_resp_valid_q   <= 1'b0;
      rd_resp_data_q    <= '0;
      db_valid_q        <= 1'b0;
      db_qp_q           <= '0;
      db_pi_q           <= '0;
      db_state_q        <= '0;
      db_sq_base_q      <= '0;
      db_sq_log_q       <= '0;
    end else begin
      if (wr_glob && mmio_wr_addr == addr_map_pkg::GLOBAL_PCIE_CFG_ADDR) begin
        pcie_cfg_q <= mmio_wr_data & addr_map_pkg::GLOBAL_PCIE_CFG_MASK;
      end
      if (wr_glob && mmio_wr_addr == addr_map_pkg::GLOBAL_CPL_TIMEOUT_ADDR) begin
        cpl_timeout_q <= mmio_wr_data & addr_map_pkg::GLOBAL_CPL_TIMEOUT_MASK;
      end
      cnt_tx_frames_q   <= cnt_tx_frames_q + {31'd0, ev_tx_frame};
      cnt_tx_bytes_q    <= cnt_tx_bytes_q + (ev_tx_frame ? {50'd0, ev_tx_len} : 64'd0);
      cnt_wqe_fetched_q <= cnt_wqe_fetched_q + {28'd0, ev_wqe_n};
      cnt_cqe_written_q <= cnt_cqe_written_q + {31'd0, ev_cqe};
      cnt_prot_err_q    <= cnt_prot_err_q + {31'd0, ev_prot_err};
      cnt_flush_q       <= cnt_flush_q + {31'd0, ev_flush};
      cnt_fetch_err_q   <= cnt_fetch_err_q + {31'd0, ev_fetch_err};
      cnt_dma_err_q     <= cnt_dma_err_q + {31'd0, ev_dma_err};
      cnt_ack_invalid_q <= cnt_ack_invalid_q + {31'd0, ev_ack_invalid};
      cnt_rqe_fetched_q <= cnt_rqe_fetched_q + {28'd0, ev_rqe_n};
      cnt_read_full_q   <= cnt_read_full_q + {31'd0, ev_read_job_full};
      cnt_rx_wr_bytes_q <= cnt_rx_wr_bytes_q + (ev_rx_write ? {51'd0, ev_rx_write_bytes} : 64'd0);
      psn_set_valid_q   <= psn_sw;
      if (psn_sw) begin
        psn_set_qp_q  <= wr_qp_ent;
        psn_set_psn_q <= 24'(mmio_wr_data >> addr_map_pkg::QP_PSN_PSN_LSB);
      end
      epsn_set_valid_q  <= epsn_sw;
      if (epsn_sw) begin
        epsn_set_qp_q  <= wr_qp_ent;
        epsn_set_psn_q <= 24'(mmio_wr_data >> addr_map_pkg::QP_EPSN_PSN_LSB);
      end
      // An EPSN write restarts the QP's responder, its RQ included: it goes
      // out as a RESET doorbell (producer index 0), which defines rq_fetch's
      // per-QP rows (RAM, no reset) before the QP's first RQ DOORBELL.
      rq_db_valid_q <= rq_db_hit || epsn_sw;
      if (rq_db_hit) begin
        rq_db_qp_q    <= rq_db_qp_d;
        rq_db_pi_q    <= mmio_wr_data[addr_map_pkg::GLOBAL_RQ_DOORBELL_PI_LSB +: addr_map_pkg::GLOBAL_RQ_DOORBELL_PI_W];
        rq_db_state_q <= 3'(rq_db_ctrl_w >> addr_map_pkg::QP_CTRL_STATE_LSB);
        rq_db_base_q  <= {rq_db_hi_w, rq_db_lo_w};
        rq_db_log_q   <= 5'(rq_db_log_w >> addr_map_pkg::QP_RQ_LOG_LOG_LSB);
      end else if (epsn_sw) begin
        rq_db_qp_q    <= wr_qp_ent;
        rq_db_pi_q    <= '0;
        rq_db_state_q <= 3'(rnic_pkg::QP_RESET);
        rq_db_base_q  <= '0;
        rq_db_log_q   <= '0;
      end
      rd_resp_valid_q   <= mmio_rd_valid;
      if (mmio_rd_valid) rd_resp_data_q <= rd_data;
      db_valid_q <= db_hit;
      if (db_hit) begin
        db_qp_q      <= db_qp_d;
        db_pi_q      <= mmio_wr_data[addr_map_pkg::GLOBAL_DOORBELL_PI_LSB +: addr_map_pkg::GLOBAL_DOORBELL_PI_W];
        db_state_q   <= tx_view(3'(db_ctrl_w >> addr_map_pkg::QP_CTRL_STATE_LSB));
        db_sq_base_q <= {db_sq_hi_w, db_sq_lo_w};
        db_sq_log_q  <= 5'(db_sq_log_w >> addr_map_pkg::QP_SQ_LOG_LOG_LSB);
      end
    end
  end

  always_comb begin
    ev_vec = {ev_ce_suppressed, ev_cnp_sent, ev_nak, ev_ack_dup, ev_ack_new, 8'(ev_drop) << ev_drop_reason,
              ev_rx_ce, ev_rx_data, ev_rx_ack, ev_rx_cnp, ev_rx_pfc, ev_rx_frame};
    rev_vec = {ev_read_job, ev_ack_coalesced, ev_ack_sent, ev_rx_write, ev_rq_fetch_err,
               ev_rxbuf_full, ev_resp_not_ready, ev_resp_uc_drop, ev_resp_recv, ev_resp_nak_op,
               ev_resp_nak_acc, ev_resp_nak_inv, ev_resp_nak_rnr, ev_resp_nak_seq, ev_resp_dup,
               ev_resp_exec};
    wr_cc_rel = mmio_wr_addr - addr_map_pkg::CC_RW_ADDR;
    wr_pfcg_rel = mmio_wr_addr - addr_map_pkg::PFCG_RW_ADDR;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      cnt_pfcg_q[0] <= '0;
      cnt_pfcg_q[1] <= '0;
    end else begin
      cnt_pfcg_q[0] <= cnt_pfcg_q[0] + {31'd0, ev_pfcg_xoff};
      cnt_pfcg_q[1] <= cnt_pfcg_q[1] + {31'd0, ev_pfcg_xon};
    end
  end

  for (genvar k = 0; k < NPFCG; k++) begin : g_pfcg
    always_ff @(posedge clk) begin
      if (rst) begin
        pfcg_q[k] <= addr_map_pkg::PFCG_RW_RESETS[32*k +: 32];
      end else if (wr_glob && wr_pfcg_rel == 16'(4 * k)) begin
        pfcg_q[k] <= mmio_wr_data & addr_map_pkg::PFCG_RW_MASKS[32*k +: 32];
      end
    end
  end

  for (genvar k = 0; k < 4; k++) begin : g_retx
    always_ff @(posedge clk) begin
      if (rst) cnt_retx_q[k] <= '0;
      else     cnt_retx_q[k] <= cnt_retx_q[k] + {31'd0, ev_retx[k]};
    end
  end

  for (genvar k = 0; k < 6; k++) begin : g_snk
    always_ff @(posedge clk) begin
      if (rst) cnt_snk_q[k] <= '0;
      else     cnt_snk_q[k] <= cnt_snk_q[k] + {31'd0, ev_snk[k]};
    end
  end

  for (genvar k = 0; k < NREV; k++) begin : g_rev
    always_ff @(posedge clk) begin
      if (rst) cnt_rev_q[k] <= '0;
      else     cnt_rev_q[k] <= cnt_rev_q[k] + {31'd0, rev_vec[k]};
    end
  end

  for (genvar k = 0; k < NEV; k++) begin : g_ev
    always_ff @(posedge clk) begin
      if (rst) cnt_ev_q[k] <= '0;
      else     cnt_ev_q[k] <= cnt_ev_q[k] + {31'd0, ev_vec[k]};
    end
  end

  for (genvar k = 0; k < NCC; k++) begin : g_cc
    always_ff @(posedge clk) begin
      if (rst) begin
        cc_q[k] <= addr_map_pkg::CC_RW_RESETS[32*k +: 32];
      end else if (wr_glob && wr_cc_rel == 16'(4 * k)) begin
        cc_q[k] <= mmio_wr_data & addr_map_pkg::CC_RW_MASKS[32*k +: 32];
      end
    end
  end

  // Lookup ports: plain registered reads of the entry the index names.
  always_ff @(posedge clk) begin
    if (rst) begin
      qp_state_q      <= '0;
      qp_uc_q         <= 1'b0;
      qp_ipv6_q       <= 1'b0;
      qp_vlan_en_q    <= 1'b0;
      qp_ecn_en_q     <= 1'b0;
      qp_mtu_q        <= '0;
      qp_max_rd_q     <= '0;
      qp_cq_q         <= '0;
      qp_remote_qpn_q <= '0;
      qp_psn_q        <= '0;
      qp_pd_q         <= '0;
      qp_dst_mac_q    <= '0;
      qp_src_mac_q    <= '0;
      qp_src_ip_q     <= '0;
      qp_dst_ip_q     <= '0;
      qp_udp_sport_q  <= '0;
      qp_dscp_q       <= '0;
      qp_vid_q        <= '0;
      qp_pcp_q        <= '0;
      qp_pkey_q       <= '0;
      mr_valid_q      <= 1'b0;
      mr_key_q        <= '0;
      mr_va_q         <= '0;
      mr_len_q        <= '0;
      mr_pbase_q      <= '0;
      mr_access_q     <= '0;
      mr_pd_q         <= '0;
      cq_base_q       <= '0;
      cq_log_q        <= '0;
    end else begin
      qp_state_q      <= tx_view(3'(qp_ctrl_w >> addr_map_pkg::QP_CTRL_STATE_LSB));
      qp_uc_q         <= qp_ctrl_w[addr_map_pkg::QP_CTRL_UC_LSB];
      qp_ipv6_q       <= qp_ctrl_w[addr_map_pkg::QP_CTRL_IPV6_LSB];
      qp_vlan_en_q    <= qp_ctrl_w[addr_map_pkg::QP_CTRL_VLAN_EN_LSB];
      qp_ecn_en_q     <= qp_ctrl_w[addr_map_pkg::QP_CTRL_ECN_EN_LSB];
      qp_mtu_q        <= 3'(qp_ctrl_w >> addr_map_pkg::QP_CTRL_MTU_LSB);
      qp_max_rd_q     <= 3'(qp_ctrl_w >> addr_map_pkg::QP_CTRL_MAX_RD_LSB);
      // CTRL.CQ may be wider than the index: its low bits name the CQ.
      qp_cq_q         <= CQW'(qp_ctrl_w >> addr_map_pkg::QP_CTRL_CQ_LSB);
      qp_remote_qpn_q <= 24'(qp_rqpn_w >> addr_map_pkg::QP_REMOTE_QPN_QPN_LSB);
      qp_psn_q        <= 24'(qp_psn_w >> addr_map_pkg::QP_PSN_PSN_LSB);
      qp_pd_q         <= 16'(qp_pd_w >> addr_map_pkg::QP_PD_PD_LSB);
      qp_dst_mac_q    <= {16'(qp_dmac_hi_w >> addr_map_pkg::QP_DST_MAC_HI_VALUE_LSB), qp_dmac_lo_w};
      qp_src_mac_q    <= {16'(qp_smac_hi_w >> addr_map_pkg::QP_SRC_MAC_HI_VALUE_LSB), qp_smac_lo_w};
      qp_src_ip_q     <= qp_sip_w;
      qp_dst_ip_q     <= qp_dip_w;
      qp_udp_sport_q  <= 16'(qp_udp_w >> addr_map_pkg::QP_UDP_SPORT_LSB);
      qp_dscp_q       <= 6'(qp_udp_w >> addr_map_pkg::QP_UDP_DSCP_LSB);
      qp_vid_q        <= 12'(qp_vlan_w >> addr_map_pkg::QP_VLAN_VID_LSB);
      qp_pcp_q        <= 3'(qp_vlan_w >> addr_map_pkg::QP_VLAN_PCP_LSB);
      qp_pkey_q       <= 16'(qp_vlan_w >> addr_map_pkg::QP_VLAN_PKEY_LSB);
      mr_valid_q      <= mr_flags_w[addr_map_pkg::MR_FLAGS_VALID_LSB];
      mr_key_q        <= mr_key_w;
      mr_va_q         <= {mr_va_hi_w, mr_va_lo_w};
      mr_len_q        <= {mr_len_hi_w, mr_len_lo_w};
      mr_pbase_q      <= {mr_pbase_hi_w, mr_pbase_lo_w};
      mr_access_q     <= 4'(mr_flags_w >> addr_map_pkg::MR_FLAGS_ACCESS_LSB);
      mr_pd_q         <= 16'(mr_pd_w >> addr_map_pkg::MR_PD_PD_LSB);
      cq_base_q       <= {cq_base_hi_w, cq_base_lo_w};
      cq_log_q        <= 5'(cq_log_w >> addr_map_pkg::CQ_LOG_LOG_LSB);
    end
  end

  // The responder's lookup ports, the same way.
  always_ff @(posedge clk) begin
    if (rst) begin
      rctx_state_q      <= '0;
      rctx_uc_q         <= 1'b0;
      rctx_mtu_q        <= '0;
      rctx_pd_q         <= '0;
      rctx_rq_cq_q      <= '0;
      rctx_rnr_timer_q  <= '0;
      rctx_max_rd_q     <= '0;
      rctx_access_q     <= '0;
      rctx_remote_qpn_q <= '0;
      rmr_valid_q       <= 1'b0;
      rmr_key_q         <= '0;
      rmr_va_q          <= '0;
      rmr_len_q         <= '0;
      rmr_pbase_q       <= '0;
      rmr_access_q      <= '0;
      rmr_pd_q          <= '0;
    end else begin
      rctx_state_q      <= 3'(rctx_ctrl_w >> addr_map_pkg::QP_CTRL_STATE_LSB);
      rctx_uc_q         <= rctx_ctrl_w[addr_map_pkg::QP_CTRL_UC_LSB];
      rctx_mtu_q        <= 3'(rctx_ctrl_w >> addr_map_pkg::QP_CTRL_MTU_LSB);
      rctx_pd_q         <= 16'(rctx_pd_w >> addr_map_pkg::QP_PD_PD_LSB);
      rctx_rq_cq_q      <= CQW'(rctx_resp_w >> addr_map_pkg::QP_RESP_RQ_CQ_LSB);
      rctx_rnr_timer_q  <= 5'(rctx_resp_w >> addr_map_pkg::QP_RESP_RNR_TIMER_LSB);
      rctx_max_rd_q     <= 3'(rctx_resp_w >> addr_map_pkg::QP_RESP_MAX_DEST_RD_LSB);
      rctx_access_q     <= 4'(rctx_resp_w >> addr_map_pkg::QP_RESP_ACCESS_LSB);
      rctx_remote_qpn_q <= 24'(rctx_rqpn_w >> addr_map_pkg::QP_REMOTE_QPN_QPN_LSB);
      rmr_valid_q       <= rmr_flags_w[addr_map_pkg::MR_FLAGS_VALID_LSB];
      rmr_key_q         <= rmr_key_w;
      rmr_va_q          <= {rmr_va_hi_w, rmr_va_lo_w};
      rmr_len_q         <= {rmr_len_hi_w, rmr_len_lo_w};
      rmr_pbase_q       <= {rmr_pbase_hi_w, rmr_pbase_lo_w};
      rmr_access_q      <= 4'(rmr_flags_w >> addr_map_pkg::MR_FLAGS_ACCESS_LSB);
      rmr_pd_q          <= 16'(rmr_pd_w >> addr_map_pkg::MR_PD_PD_LSB);
    end
  end

  // The retransmission controller's lookup port, the same way; its reset
  // value is RETRY's.
  localparam logic [31:0] XCTX_RESET = addr_map_pkg::QP_RESETS[32*addr_map_pkg::QP_RETRY_WORD +: 32];

  always_ff @(posedge clk) begin
    if (rst) begin
      xctx_timeout_q   <= 5'(XCTX_RESET >> addr_map_pkg::QP_RETRY_TIMEOUT_LSB);
      xctx_retry_q     <= 3'(XCTX_RESET >> addr_map_pkg::QP_RETRY_RETRY_CNT_LSB);
      xctx_rnr_retry_q <= 3'(XCTX_RESET >> addr_map_pkg::QP_RETRY_RNR_RETRY_LSB);
    end else begin
      xctx_timeout_q   <= 5'(xctx_retry_w >> addr_map_pkg::QP_RETRY_TIMEOUT_LSB);
      xctx_retry_q     <= 3'(xctx_retry_w >> addr_map_pkg::QP_RETRY_RETRY_CNT_LSB);
      xctx_rnr_retry_q <= 3'(xctx_retry_w >> addr_map_pkg::QP_RETRY_RNR_RETRY_LSB);
    end
  end

  assign xctx_timeout    = xctx_timeout_q;
  assign xctx_retry      = xctx_retry_q;
  assign xctx_rnr_retry  = xctx_rnr_retry_q;
  assign rq_db_valid     = rq_db_valid_q;
  assign rq_db_qp        = rq_db_qp_q;
  assign rq_db_pi        = rq_db_pi_q;
  assign rq_db_state     = rq_db_state_q;
  assign rq_db_base      = rq_db_base_q;
  assign rq_db_log       = rq_db_log_q;
  assign rctx_state      = rctx_state_q;
  assign rctx_uc         = rctx_uc_q;
  assign rctx_mtu        = rctx_mtu_q;
  assign rctx_pd         = rctx_pd_q;
  assign rctx_rq_cq      = rctx_rq_cq_q;
  assign rctx_rnr_timer  = rctx_rnr_timer_q;
  assign rctx_max_rd     = rctx_max_rd_q;
  assign rctx_access     = rctx_access_q;
  assign rctx_remote_qpn = rctx_remote_qpn_q;
  assign rmr_valid       = rmr_valid_q;
  assign rmr_key         = rmr_key_q;
  assign rmr_va          = rmr_va_q;
  assign rmr_len         = rmr_len_q;
  assign rmr_pbase       = rmr_pbase_q;
  assign rmr_access      = rmr_access_q;
  assign rmr_pd          = rmr_pd_q;
  assign epsn_set_valid  = epsn_set_valid_q;
  assign epsn_set_qp     = epsn_set_qp_q;
  assign epsn_set_psn    = epsn_set_psn_q;

  assign mmio_rd_resp_valid = rd_resp_valid_q;
  assign mmio_rd_resp_data  = rd_resp_data_q;
  assign cfg_mrrs        = pcie_cfg_q[addr_map_pkg::GLOBAL_PCIE_CFG_MRRS_LSB +: addr_map_pkg::GLOBAL_PCIE_CFG_MRRS_W];
  assign cfg_mps         = pcie_cfg_q[addr_map_pkg::GLOBAL_PCIE_CFG_MPS_LSB +: addr_map_pkg::GLOBAL_PCIE_CFG_MPS_W];
  assign cfg_req_id      = pcie_cfg_q[addr_map_pkg::GLOBAL_PCIE_CFG_REQ_ID_LSB +: addr_map_pkg::GLOBAL_PCIE_CFG_REQ_ID_W];
  assign cfg_cpl_timeout = cpl_timeout_q[addr_map_pkg::GLOBAL_CPL_TIMEOUT_CYCLES_LSB +: addr_map_pkg::GLOBAL_CPL_TIMEOUT_CYCLES_W];
  assign psn_set_valid   = psn_set_valid_q;
  assign psn_set_qp      = psn_set_qp_q;
  assign psn_set_psn     = psn_set_psn_q;
  assign db_valid        = db_valid_q;
  assign db_qp           = db_qp_q;
  assign db_pi           = db_pi_q;
  assign db_state        = db_state_q;
  assign db_sq_base      = db_sq_base_q;
  assign db_sq_log       = db_sq_log_q;
  assign qp_state        = qp_state_q;
  assign qp_uc           = qp_uc_q;
  assign qp_ipv6         = qp_ipv6_q;
  assign qp_vlan_en      = qp_vlan_en_q;
  assign qp_ecn_en       = qp_ecn_en_q;
  assign qp_mtu          = qp_mtu_q;
  assign qp_max_rd       = qp_max_rd_q;
  assign qp_cq           = qp_cq_q;
  assign qp_remote_qpn   = qp_remote_qpn_q;
  assign qp_psn          = qp_psn_q;
  assign qp_pd           = qp_pd_q;
  assign qp_dst_mac      = qp_dst_mac_q;
  assign qp_src_mac      = qp_src_mac_q;
  assign qp_src_ip       = qp_src_ip_q;
  assign qp_dst_ip       = qp_dst_ip_q;
  assign qp_udp_sport    = qp_udp_sport_q;
  assign qp_dscp         = qp_dscp_q;
  assign qp_vid          = qp_vid_q;
  assign qp_pcp          = qp_pcp_q;
  assign qp_pkey         = qp_pkey_q;
  // Every QP's priority, for tx_sched's pause check: the copy of the PCP bits.
  assign qp_pcp_all = pcp_all_q;
  // Every QP's state (rx_parser) and CC enable (dcqcn, rate_limiter), like PCP.
  for (genvar e = 0; e < QPS; e++) begin : g_state_all
    assign qp_state_all[2*e +: 2] =
      rx_view(qp_st_q[3*e +: 3]);
    assign qp_err_all[e] =
      qp_st_q[3*e +: 3]
      == 3'(rnic_pkg::QP_ERROR);
    assign qp_cc_en_all[e] =
      qp_cc_en_q[e];
  end
  // Block CC's fields; word k of cc_q is the register at CC_DCQCN_G_ADDR + 4k.
  assign cfg_g_shift      = cc_q[0][addr_map_pkg::CC_DCQCN_G_G_SHIFT_LSB +: 4];
  assign cfg_f            = cc_q[0][addr_map_pkg::CC_DCQCN_G_F_LSB +: 8];
  assign cfg_k            = cc_q[1][addr_map_pkg::CC_DCQCN_K_CYCLES_LSB +: 24];
  assign cfg_t_inc        = cc_q[2][addr_map_pkg::CC_DCQCN_T_INC_CYCLES_LSB +: 24];
  assign cfg_b            = cc_q[3];
  assign cfg_r_ai         = cc_q[4];
  assign cfg_r_hai        = cc_q[5];
  assign cfg_r_min        = cc_q[6];
  assign cfg_r_max        = cc_q[7];
  assign cfg_alpha_init   = cc_q[8][addr_map_pkg::CC_DCQCN_ALPHA_INIT_LSB +: 11];
  // dcqcn's cfg_mode bit k is DCQCN_MODE's field of mode bit k (docs/rx_cc.md).
  assign cfg_mode         = {cc_q[13][addr_map_pkg::CC_DCQCN_MODE_BYTE_OFF_LSB],
                             cc_q[13][addr_map_pkg::CC_DCQCN_MODE_DEP_INC_LSB],
                             cc_q[13][addr_map_pkg::CC_DCQCN_MODE_CLAMP_OFF_LSB],
                             cc_q[13][addr_map_pkg::CC_DCQCN_MODE_FIRST_CNP_LSB],
                             cc_q[13][addr_map_pkg::CC_DCQCN_MODE_ALPHA_T_LSB],
                             cc_q[13][addr_map_pkg::CC_DCQCN_MODE_MON_CUT_LSB]};
  assign cfg_mon          = cc_q[14][addr_map_pkg::CC_DCQCN_MON_CYCLES_LSB +: 24];
  assign cfg_alpha_t      = cc_q[15][addr_map_pkg::CC_DCQCN_ALPHA_T_CYCLES_LSB +: 24];
  assign cfg_rl_burst     = cc_q[9][addr_map_pkg::CC_RL_BURST_BYTES_LSB +: 24];
  assign cfg_cnp_dscp     = cc_q[10][addr_map_pkg::CC_CNP_CFG_DSCP_LSB +: 6];
  assign cfg_cnp_pcp      = cc_q[10][addr_map_pkg::CC_CNP_CFG_PCP_LSB +: 3];
  assign cfg_cnp_becn     = cc_q[10][addr_map_pkg::CC_CNP_CFG_BECN_LSB];
  assign cfg_cnp_interval = cc_q[11][addr_map_pkg::CC_CNP_INTERVAL_CYCLES_LSB +: 24];
  assign cfg_stat_qp      = cc_q[12][addr_map_pkg::CC_STAT_QP_QP_LSB +: QPW];
  // Block PFCG's fields; word k of pfcg_q is the register at PFCG_EN_ADDR + 4k.
  assign cfg_pfcg_en      = pfcg_q[0][addr_map_pkg::PFCG_EN_MASK_LSB +: 8];
  assign cfg_pfcg_xoff    = pfcg_q[1][addr_map_pkg::PFCG_XOFF_LINES_LSB +: 10];
  assign cfg_pfcg_xon     = pfcg_q[2][addr_map_pkg::PFCG_XON_LINES_LSB +: 10];
  assign cfg_pfcg_time    = pfcg_q[3][addr_map_pkg::PFCG_TIME_QUANTA_LSB +: 16];
  assign cfg_pfcg_refresh = pfcg_q[4][addr_map_pkg::PFCG_REFRESH_CYCLES_LSB +: 24];
  assign cfg_pfcg_src_mac = {pfcg_q[6][addr_map_pkg::PFCG_SRC_MAC_HI_MAC_LSB +: 16], pfcg_q[5]};
  assign mr_valid        = mr_valid_q;
  assign mr_key          = mr_key_q;
  assign mr_va           = mr_va_q;
  assign mr_len          = mr_len_q;
  assign mr_pbase        = mr_pbase_q;
  assign mr_access       = mr_access_q;
  assign mr_pd           = mr_pd_q;
  assign cq_base         = cq_base_q;
  assign cq_log          = cq_log_q;
endmodule
