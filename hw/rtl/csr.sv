// Control and status registers: MMIO decode, the QP/MR/CQ tables, PCIe
// settings, doorbells, counters. Model: model/src/csr.rs (same register
// names). The register map is hw/csr/csr_map.txt; csr_pkg (generated from it)
// gives every address, mask and field position used here.
//
// Tables are flat vectors of 32-bit words, entry e's word w at
// [32*(WORDS*e + w) +: 32], as the MMIO map lays them out; bits a register
// lacks are masked off on write (and so are constant 0 and optimized away).
//
// Timing (every output is a flop):
// - MMIO read at n -> mmio_rd_resp_* at n+1, the value as it was during n
//   (this cycle's writes not applied);
// - qp_idx/mr_idx/cq_idx at n -> that entry's fields at n+1, as they were
//   during n;
// - DOORBELL write at n -> db_* at n+1 with the QP's state and SQ ring as
//   they are after cycle n's writes (hardware's included);
// - a write at n shows in cfg_*, qp_pcp_all, reads and lookups from n+1
//   (qp_pcp_all is every QP's VLAN.PCP field straight out of the QP table's
//   flops: no lookup, so a write at n is on it at n+1).
// Hardware writes (psn_wr, err_a, err_b) win over an MMIO write to the same
// field in the same cycle; the MMIO write's other fields still apply.
module csr #(
  parameter int QPS = 16,
  parameter int MRS = 16,
  parameter int CQS = 4
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
  input  logic                   err_a_valid,
  input  logic [$clog2(QPS)-1:0] err_a_qp,
  input  logic                   err_b_valid,
  input  logic [$clog2(QPS)-1:0] err_b_qp,
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
  input  logic [31:0]            dma_cpl_timeout
);
  localparam int QPW = $clog2(QPS);
  localparam int MRW = $clog2(MRS);
  localparam int CQW = $clog2(CQS);
  // Words per entry, bits per entry, log2 of the stride in bytes.
  localparam int QP_WORDS = csr_pkg::QP_WORDS;
  localparam int MR_WORDS = csr_pkg::MR_WORDS;
  localparam int CQ_WORDS = csr_pkg::CQ_WORDS;
  localparam int QP_EW = 32 * QP_WORDS;
  localparam int MR_EW = 32 * MR_WORDS;
  localparam int CQ_EW = 32 * CQ_WORDS;
  localparam int QP_SL = $clog2(csr_pkg::QP_STRIDE);
  localparam int MR_SL = $clog2(csr_pkg::MR_STRIDE);
  localparam int CQ_SL = $clog2(csr_pkg::CQ_STRIDE);
  // Bytes each table occupies in this build.
  localparam logic [15:0] QP_SPAN = 16'(QPS * csr_pkg::QP_STRIDE);
  localparam logic [15:0] MR_SPAN = 16'(MRS * csr_pkg::MR_STRIDE);
  localparam logic [15:0] CQ_SPAN = 16'(CQS * csr_pkg::CQ_STRIDE);
  localparam logic [1:0]  ST_ERROR = 2'd2;

  if (QPS < 2 || (QPS & (QPS - 1)) != 0 || QPS > csr_pkg::QP_MAX) begin : g_bad_qps
    $error("csr: QPS must be a power of two in 2..QP_MAX (the map's QP table)");
  end
  if (MRS < 2 || (MRS & (MRS - 1)) != 0 || MRS > csr_pkg::MR_MAX) begin : g_bad_mrs
    $error("csr: MRS must be a power of two in 2..MR_MAX (the map's MR table)");
  end
  if (CQS < 2 || (CQS & (CQS - 1)) != 0 || CQS > csr_pkg::CQ_MAX) begin : g_bad_cqs
    $error("csr: CQS must be a power of two in 2..CQ_MAX (the map's CQ table)");
  end
  if (QPS >= (1 << csr_pkg::GLOBAL_PARAMS_QPS_W) || MRS >= (1 << csr_pkg::GLOBAL_PARAMS_MRS_W)
      || CQS >= (1 << csr_pkg::GLOBAL_PARAMS_CQS_W)) begin : g_bad_params
    $error("csr: a table size does not fit its PARAMS field");
  end
  if (QPW > csr_pkg::GLOBAL_DOORBELL_QP_W || CQW > csr_pkg::QP_CTRL_CQ_W) begin : g_bad_fields
    $error("csr: the doorbell's QP field or CTRL.CQ is narrower than the index");
  end

  // The ports' widths are the contract's; the map must agree.
  if (csr_pkg::QP_CTRL_STATE_W != 2 || csr_pkg::QP_CTRL_MTU_W != 3
      || csr_pkg::QP_REMOTE_QPN_QPN_W != 24 || csr_pkg::QP_PSN_PSN_W != 24
      || csr_pkg::QP_PD_PD_W != 16 || csr_pkg::QP_DST_MAC_HI_VALUE_W != 16
      || csr_pkg::QP_SRC_MAC_HI_VALUE_W != 16 || csr_pkg::QP_UDP_SPORT_W != 16
      || csr_pkg::QP_UDP_DSCP_W != 6 || csr_pkg::QP_VLAN_VID_W != 12
      || csr_pkg::QP_VLAN_PCP_W != 3 || csr_pkg::QP_VLAN_PKEY_W != 16
      || csr_pkg::QP_SQ_LOG_LOG_W != 5 || csr_pkg::MR_FLAGS_ACCESS_W != 4
      || csr_pkg::MR_PD_PD_W != 16 || csr_pkg::CQ_LOG_LOG_W != 5) begin : g_bad_map
    $error("csr: a field of csr_map.txt differs in width from its port");
  end

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic [QPS*QP_EW-1:0] qp_q, qp_d;
  logic [MRS*MR_EW-1:0] mr_q, mr_d;
  logic [CQS*CQ_EW-1:0] cq_q, cq_d;
  logic [31:0]  pcie_cfg_q, cpl_timeout_q;
  logic [31:0]  cnt_tx_frames_q, cnt_wqe_fetched_q, cnt_cqe_written_q, cnt_prot_err_q;
  logic [31:0]  cnt_flush_q, cnt_fetch_err_q, cnt_dma_err_q;
  logic [63:0]  cnt_tx_bytes_q;
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
  logic [2:0]   qp_mtu_q;
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
  logic                wr_glob, db_hit;
  logic [csr_pkg::GLOBAL_DOORBELL_QP_W-1:0] db_field_qp;

  always_comb begin
    wr_glob   = mmio_wr_valid && mmio_wr_addr[1:0] == 2'd0;
    wr_qp_rel = mmio_wr_addr - csr_pkg::QP_BASE;
    wr_mr_rel = mmio_wr_addr - csr_pkg::MR_BASE;
    wr_cq_rel = mmio_wr_addr - csr_pkg::CQ_BASE;
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
    db_field_qp = mmio_wr_data[csr_pkg::GLOBAL_DOORBELL_QP_LSB +: csr_pkg::GLOBAL_DOORBELL_QP_W];
    db_hit    = wr_glob && mmio_wr_addr == csr_pkg::GLOBAL_DOORBELL_ADDR
                && 32'(db_field_qp) < QPS;
  end

  // ------------------------------------------------------------------
  // Next table contents: the MMIO write, then hardware's writes over it
  // ------------------------------------------------------------------
  localparam int QP_PSN_BIT   = 32 * csr_pkg::QP_PSN_WORD + csr_pkg::QP_PSN_PSN_LSB;
  localparam int QP_STATE_BIT = 32 * csr_pkg::QP_CTRL_WORD + csr_pkg::QP_CTRL_STATE_LSB;

  always_comb begin
    qp_d = qp_q;
    for (int e = 0; e < QPS; e++) begin
      for (int w = 0; w < QP_WORDS; w++) begin
        if (wr_qp_hit && wr_qp_ent == QPW'(e) && wr_qp_wrd == (QP_SL-2)'(w)) begin
          qp_d[QP_EW*e + 32*w +: 32] = mmio_wr_data & csr_pkg::QP_MASKS[32*w +: 32];
        end
      end
      if (psn_wr_valid && psn_wr_qp == QPW'(e)) begin
        qp_d[QP_EW*e + QP_PSN_BIT +: csr_pkg::QP_PSN_PSN_W] = psn_wr_psn;
      end
      if ((err_a_valid && err_a_qp == QPW'(e)) || (err_b_valid && err_b_qp == QPW'(e))) begin
        qp_d[QP_EW*e + QP_STATE_BIT +: csr_pkg::QP_CTRL_STATE_W] = ST_ERROR;
      end
    end
  end

  always_comb begin
    mr_d = mr_q;
    for (int e = 0; e < MRS; e++) begin
      for (int w = 0; w < MR_WORDS; w++) begin
        if (wr_mr_hit && wr_mr_ent == MRW'(e) && wr_mr_wrd == (MR_SL-2)'(w)) begin
          mr_d[MR_EW*e + 32*w +: 32] = mmio_wr_data & csr_pkg::MR_MASKS[32*w +: 32];
        end
      end
    end
  end

  always_comb begin
    cq_d = cq_q;
    for (int e = 0; e < CQS; e++) begin
      for (int w = 0; w < CQ_WORDS; w++) begin
        if (wr_cq_hit && wr_cq_ent == CQW'(e) && wr_cq_wrd == (CQ_SL-2)'(w)) begin
          cq_d[CQ_EW*e + 32*w +: 32] = mmio_wr_data & csr_pkg::CQ_MASKS[32*w +: 32];
        end
      end
    end
  end

  // ------------------------------------------------------------------
  // Lookups: word `w` of entry `e`, as a mux over the entries with constant
  // part-selects (the fields are then shifted out of whole words, so no
  // bit of a table goes unread)
  // ------------------------------------------------------------------
  function automatic logic [31:0] qp_word(input logic [QPS*QP_EW-1:0] t,
                                          input logic [QPW-1:0] e, input int w);
    qp_word = 32'd0;
    for (int i = 0; i < QPS; i++) begin
      if (e == QPW'(i)) qp_word = t[QP_EW*i + 32*w +: 32];
    end
  endfunction

  function automatic logic [31:0] mr_word(input logic [MRS*MR_EW-1:0] t,
                                          input logic [MRW-1:0] e, input int w);
    mr_word = 32'd0;
    for (int i = 0; i < MRS; i++) begin
      if (e == MRW'(i)) mr_word = t[MR_EW*i + 32*w +: 32];
    end
  endfunction

  function automatic logic [31:0] cq_word(input logic [CQS*CQ_EW-1:0] t,
                                          input logic [CQW-1:0] e, input int w);
    cq_word = 32'd0;
    for (int i = 0; i < CQS; i++) begin
      if (e == CQW'(i)) cq_word = t[CQ_EW*i + 32*w +: 32];
    end
  endfunction

  logic [QPW-1:0] db_qp_d;
  logic [31:0]    db_ctrl_w, db_sq_log_w;
  logic [31:0]    qp_ctrl_w, qp_rqpn_w, qp_psn_w, qp_pd_w, qp_dmac_hi_w, qp_smac_hi_w, qp_udp_w, qp_vlan_w;
  logic [31:0]    mr_flags_w, mr_pd_w, cq_log_w;

  always_comb begin
    db_qp_d      = db_field_qp[QPW-1:0];
    // The doorbell's QP after this cycle's writes.
    db_ctrl_w    = qp_word(qp_d, db_qp_d, csr_pkg::QP_CTRL_WORD);
    db_sq_log_w  = qp_word(qp_d, db_qp_d, csr_pkg::QP_SQ_LOG_WORD);
    // Lookup ports: the tables as they are now.
    qp_ctrl_w    = qp_word(qp_q, qp_idx, csr_pkg::QP_CTRL_WORD);
    qp_rqpn_w    = qp_word(qp_q, qp_idx, csr_pkg::QP_REMOTE_QPN_WORD);
    qp_psn_w     = qp_word(qp_q, qp_idx, csr_pkg::QP_PSN_WORD);
    qp_pd_w      = qp_word(qp_q, qp_idx, csr_pkg::QP_PD_WORD);
    qp_dmac_hi_w = qp_word(qp_q, qp_idx, csr_pkg::QP_DST_MAC_HI_WORD);
    qp_smac_hi_w = qp_word(qp_q, qp_idx, csr_pkg::QP_SRC_MAC_HI_WORD);
    qp_udp_w     = qp_word(qp_q, qp_idx, csr_pkg::QP_UDP_WORD);
    qp_vlan_w    = qp_word(qp_q, qp_idx, csr_pkg::QP_VLAN_WORD);
    mr_flags_w   = mr_word(mr_q, mr_idx, csr_pkg::MR_FLAGS_WORD);
    mr_pd_w      = mr_word(mr_q, mr_idx, csr_pkg::MR_PD_WORD);
    cq_log_w     = cq_word(cq_q, cq_idx, csr_pkg::CQ_LOG_WORD);
  end

  // ------------------------------------------------------------------
  // MMIO read: the addressed register as it is now
  // ------------------------------------------------------------------
  logic [15:0]      rd_qp_rel, rd_mr_rel, rd_cq_rel;
  logic [QP_SL-3:0] rd_qp_wrd;
  logic [MR_SL-3:0] rd_mr_wrd;
  logic [CQ_SL-3:0] rd_cq_wrd;
  logic [QP_EW-1:0] rd_qp_ent;
  logic [MR_EW-1:0] rd_mr_ent;
  logic [CQ_EW-1:0] rd_cq_ent;
  logic [31:0]      rd_data;

  always_comb begin
    rd_qp_rel = mmio_rd_addr - csr_pkg::QP_BASE;
    rd_mr_rel = mmio_rd_addr - csr_pkg::MR_BASE;
    rd_cq_rel = mmio_rd_addr - csr_pkg::CQ_BASE;
    rd_qp_wrd = rd_qp_rel[QP_SL-1:2];
    rd_mr_wrd = rd_mr_rel[MR_SL-1:2];
    rd_cq_wrd = rd_cq_rel[CQ_SL-1:2];
    rd_qp_ent = qp_q[QP_EW*rd_qp_rel[QP_SL +: QPW] +: QP_EW];
    rd_mr_ent = mr_q[MR_EW*rd_mr_rel[MR_SL +: MRW] +: MR_EW];
    rd_cq_ent = cq_q[CQ_EW*rd_cq_rel[CQ_SL +: CQW] +: CQ_EW];
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
      unique case (mmio_rd_addr)
        csr_pkg::GLOBAL_ID_ADDR:          rd_data = csr_pkg::GLOBAL_ID_VALUE;
        csr_pkg::GLOBAL_VERSION_ADDR:     rd_data = csr_pkg::GLOBAL_VERSION_VALUE;
        csr_pkg::GLOBAL_PCIE_CFG_ADDR:    rd_data = pcie_cfg_q;
        csr_pkg::GLOBAL_CPL_TIMEOUT_ADDR: rd_data = cpl_timeout_q;
        csr_pkg::GLOBAL_PARAMS_ADDR: begin
          rd_data[csr_pkg::GLOBAL_PARAMS_QPS_LSB +: csr_pkg::GLOBAL_PARAMS_QPS_W] =
            csr_pkg::GLOBAL_PARAMS_QPS_W'(QPS);
          rd_data[csr_pkg::GLOBAL_PARAMS_MRS_LSB +: csr_pkg::GLOBAL_PARAMS_MRS_W] =
            csr_pkg::GLOBAL_PARAMS_MRS_W'(MRS);
          rd_data[csr_pkg::GLOBAL_PARAMS_CQS_LSB +: csr_pkg::GLOBAL_PARAMS_CQS_W] =
            csr_pkg::GLOBAL_PARAMS_CQS_W'(CQS);
        end
        csr_pkg::CNT_TX_FRAMES_ADDR:      rd_data = cnt_tx_frames_q;
        csr_pkg::CNT_TX_BYTES_LO_ADDR:    rd_data = cnt_tx_bytes_q[31:0];
        csr_pkg::CNT_TX_BYTES_HI_ADDR:    rd_data = cnt_tx_bytes_q[63:32];
        csr_pkg::CNT_WQE_FETCHED_ADDR:    rd_data = cnt_wqe_fetched_q;
        csr_pkg::CNT_CQE_WRITTEN_ADDR:    rd_data = cnt_cqe_written_q;
        csr_pkg::CNT_PROT_ERR_ADDR:       rd_data = cnt_prot_err_q;
        csr_pkg::CNT_FLUSH_ADDR:          rd_data = cnt_flush_q;
        csr_pkg::CNT_FETCH_ERR_ADDR:      rd_data = cnt_fetch_err_q;
        csr_pkg::CNT_DMA_ERR_ADDR:        rd_data = cnt_dma_err_q;
        csr_pkg::CNT_CPL_UNEXPECTED_ADDR: rd_data = dma_cpl_unexpected;
        csr_pkg::CNT_CPL_MALFORMED_ADDR:  rd_data = dma_cpl_malformed;
        csr_pkg::CNT_CPL_TIMEOUT_ADDR:    rd_data = dma_cpl_timeout;
        // DOORBELL (write-only) and unmapped addresses read 0.
        default:                          rd_data = 32'd0;
      endcase
    end
  end

  // ------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (rst) begin
      qp_q              <= {QPS{csr_pkg::QP_RESETS}};
      mr_q              <= {MRS{csr_pkg::MR_RESETS}};
      cq_q              <= {CQS{csr_pkg::CQ_RESETS}};
      pcie_cfg_q        <= csr_pkg::GLOBAL_PCIE_CFG_RESET;
      cpl_timeout_q     <= csr_pkg::GLOBAL_CPL_TIMEOUT_RESET;
      cnt_tx_frames_q   <= '0;
      cnt_tx_bytes_q    <= '0;
      cnt_wqe_fetched_q <= '0;
      cnt_cqe_written_q <= '0;
      cnt_prot_err_q    <= '0;
      cnt_flush_q       <= '0;
      cnt_fetch_err_q   <= '0;
      cnt_dma_err_q     <= '0;
      rd_resp_valid_q   <= 1'b0;
      rd_resp_data_q    <= '0;
      db_valid_q        <= 1'b0;
      db_qp_q           <= '0;
      db_pi_q           <= '0;
      db_state_q        <= '0;
      db_sq_base_q      <= '0;
      db_sq_log_q       <= '0;
    end else begin
      qp_q <= qp_d;
      mr_q <= mr_d;
      cq_q <= cq_d;
      if (wr_glob && mmio_wr_addr == csr_pkg::GLOBAL_PCIE_CFG_ADDR) begin
        pcie_cfg_q <= mmio_wr_data & csr_pkg::GLOBAL_PCIE_CFG_MASK;
      end
      if (wr_glob && mmio_wr_addr == csr_pkg::GLOBAL_CPL_TIMEOUT_ADDR) begin
        cpl_timeout_q <= mmio_wr_data & csr_pkg::GLOBAL_CPL_TIMEOUT_MASK;
      end
      cnt_tx_frames_q   <= cnt_tx_frames_q + {31'd0, ev_tx_frame};
      cnt_tx_bytes_q    <= cnt_tx_bytes_q + (ev_tx_frame ? {50'd0, ev_tx_len} : 64'd0);
      cnt_wqe_fetched_q <= cnt_wqe_fetched_q + {28'd0, ev_wqe_n};
      cnt_cqe_written_q <= cnt_cqe_written_q + {31'd0, ev_cqe};
      cnt_prot_err_q    <= cnt_prot_err_q + {31'd0, ev_prot_err};
      cnt_flush_q       <= cnt_flush_q + {31'd0, ev_flush};
      cnt_fetch_err_q   <= cnt_fetch_err_q + {31'd0, ev_fetch_err};
      cnt_dma_err_q     <= cnt_dma_err_q + {31'd0, ev_dma_err};
      rd_resp_valid_q   <= mmio_rd_valid;
      if (mmio_rd_valid) rd_resp_data_q <= rd_data;
      db_valid_q <= db_hit;
      if (db_hit) begin
        db_qp_q      <= db_qp_d;
        db_pi_q      <= mmio_wr_data[csr_pkg::GLOBAL_DOORBELL_PI_LSB +: csr_pkg::GLOBAL_DOORBELL_PI_W];
        db_state_q   <= 2'(db_ctrl_w >> csr_pkg::QP_CTRL_STATE_LSB);
        db_sq_base_q <= {qp_word(qp_d, db_qp_d, csr_pkg::QP_SQ_BASE_HI_WORD),
                         qp_word(qp_d, db_qp_d, csr_pkg::QP_SQ_BASE_LO_WORD)};
        db_sq_log_q  <= 5'(db_sq_log_w >> csr_pkg::QP_SQ_LOG_LOG_LSB);
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
      qp_state_q      <= 2'(qp_ctrl_w >> csr_pkg::QP_CTRL_STATE_LSB);
      qp_uc_q         <= qp_ctrl_w[csr_pkg::QP_CTRL_UC_LSB];
      qp_ipv6_q       <= qp_ctrl_w[csr_pkg::QP_CTRL_IPV6_LSB];
      qp_vlan_en_q    <= qp_ctrl_w[csr_pkg::QP_CTRL_VLAN_EN_LSB];
      qp_ecn_en_q     <= qp_ctrl_w[csr_pkg::QP_CTRL_ECN_EN_LSB];
      qp_mtu_q        <= 3'(qp_ctrl_w >> csr_pkg::QP_CTRL_MTU_LSB);
      // CTRL.CQ may be wider than the index: its low bits name the CQ.
      qp_cq_q         <= CQW'(qp_ctrl_w >> csr_pkg::QP_CTRL_CQ_LSB);
      qp_remote_qpn_q <= 24'(qp_rqpn_w >> csr_pkg::QP_REMOTE_QPN_QPN_LSB);
      qp_psn_q        <= 24'(qp_psn_w >> csr_pkg::QP_PSN_PSN_LSB);
      qp_pd_q         <= 16'(qp_pd_w >> csr_pkg::QP_PD_PD_LSB);
      qp_dst_mac_q    <= {16'(qp_dmac_hi_w >> csr_pkg::QP_DST_MAC_HI_VALUE_LSB),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_DST_MAC_LO_WORD)};
      qp_src_mac_q    <= {16'(qp_smac_hi_w >> csr_pkg::QP_SRC_MAC_HI_VALUE_LSB),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_SRC_MAC_LO_WORD)};
      qp_src_ip_q     <= {qp_word(qp_q, qp_idx, csr_pkg::QP_SRC_IP0_WORD),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_SRC_IP1_WORD),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_SRC_IP2_WORD),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_SRC_IP3_WORD)};
      qp_dst_ip_q     <= {qp_word(qp_q, qp_idx, csr_pkg::QP_DST_IP0_WORD),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_DST_IP1_WORD),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_DST_IP2_WORD),
                          qp_word(qp_q, qp_idx, csr_pkg::QP_DST_IP3_WORD)};
      qp_udp_sport_q  <= 16'(qp_udp_w >> csr_pkg::QP_UDP_SPORT_LSB);
      qp_dscp_q       <= 6'(qp_udp_w >> csr_pkg::QP_UDP_DSCP_LSB);
      qp_vid_q        <= 12'(qp_vlan_w >> csr_pkg::QP_VLAN_VID_LSB);
      qp_pcp_q        <= 3'(qp_vlan_w >> csr_pkg::QP_VLAN_PCP_LSB);
      qp_pkey_q       <= 16'(qp_vlan_w >> csr_pkg::QP_VLAN_PKEY_LSB);
      mr_valid_q      <= mr_flags_w[csr_pkg::MR_FLAGS_VALID_LSB];
      mr_key_q        <= mr_word(mr_q, mr_idx, csr_pkg::MR_KEY_WORD);
      mr_va_q         <= {mr_word(mr_q, mr_idx, csr_pkg::MR_VA_HI_WORD),
                          mr_word(mr_q, mr_idx, csr_pkg::MR_VA_LO_WORD)};
      mr_len_q        <= {mr_word(mr_q, mr_idx, csr_pkg::MR_LEN_HI_WORD),
                          mr_word(mr_q, mr_idx, csr_pkg::MR_LEN_LO_WORD)};
      mr_pbase_q      <= {mr_word(mr_q, mr_idx, csr_pkg::MR_PBASE_HI_WORD),
                          mr_word(mr_q, mr_idx, csr_pkg::MR_PBASE_LO_WORD)};
      mr_access_q     <= 4'(mr_flags_w >> csr_pkg::MR_FLAGS_ACCESS_LSB);
      mr_pd_q         <= 16'(mr_pd_w >> csr_pkg::MR_PD_PD_LSB);
      cq_base_q       <= {cq_word(cq_q, cq_idx, csr_pkg::CQ_BASE_HI_WORD),
                          cq_word(cq_q, cq_idx, csr_pkg::CQ_BASE_LO_WORD)};
      cq_log_q        <= 5'(cq_log_w >> csr_pkg::CQ_LOG_LOG_LSB);
    end
  end

  assign mmio_rd_resp_valid = rd_resp_valid_q;
  assign mmio_rd_resp_data  = rd_resp_data_q;
  assign cfg_mrrs        = pcie_cfg_q[csr_pkg::GLOBAL_PCIE_CFG_MRRS_LSB +: csr_pkg::GLOBAL_PCIE_CFG_MRRS_W];
  assign cfg_mps         = pcie_cfg_q[csr_pkg::GLOBAL_PCIE_CFG_MPS_LSB +: csr_pkg::GLOBAL_PCIE_CFG_MPS_W];
  assign cfg_req_id      = pcie_cfg_q[csr_pkg::GLOBAL_PCIE_CFG_REQ_ID_LSB +: csr_pkg::GLOBAL_PCIE_CFG_REQ_ID_W];
  assign cfg_cpl_timeout = cpl_timeout_q[csr_pkg::GLOBAL_CPL_TIMEOUT_CYCLES_LSB +: csr_pkg::GLOBAL_CPL_TIMEOUT_CYCLES_W];
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
  // Every QP's priority, for tx_sched's pause check: the table flops' PCP bits.
  for (genvar e = 0; e < QPS; e++) begin : g_pcp_all
    assign qp_pcp_all[3*e +: 3] =
      qp_q[QP_EW*e + 32*csr_pkg::QP_VLAN_WORD + csr_pkg::QP_VLAN_PCP_LSB +: 3];
  end
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
