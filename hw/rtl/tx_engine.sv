// Send-queue work to packets. Model: model/src/tx_engine.rs (same register
// names).
//
// On each grant from tx_sched the engine does one step for one QP: the next
// packet of the QP's WQE in progress, or pop a new WQE from sq_fetch, check
// it (docs/tx_datapath.md, "Protection checks") and send its first packet or
// queue its error / flush completion, or nothing (a stale grant, or a QP
// with no WQE in progress whose wqe_block is high). A packet
// is a descriptor for pkt_builder, a payload read (rd_req, dma_rd client 1)
// when it carries payload, a PSN write-back to csr, and, for the last packet
// of a signaled message, a completion (UC: it waits for the frame; RC: it
// goes to ack_tracker, which holds it until the ACK). A control grant
// (grant_ctrl) takes the CNP (cnp_valid, cnp_qp) or the ACK (ack_valid,
// ack_qp, ack_psn, ack_syndrome, ack_msn) waiting, round robin when both
// wait (the 1-bit pointer ctrl_ack_q, output as ctrl_ack_first), and emits
// its descriptor instead: rnic_top forms cnp_ready / ack_ready from the same
// rule (an ACK is taken when ack_valid & (ctrl_ack_first | !cnp_valid)).
// desc, rd_req and cpl are each held until taken; the next grant is taken
// once all are.
//
// READ responses (docs/responder.md, "rd_resp and READ responses in
// tx_engine"): a data grant for a QP whose job_avail bit (rd_resp) is high
// in the grant's cycle is a READ RESPONSE step, before the QP's own WQE in
// progress or new WQE: the head job is read from rd_resp (job_rd at n+1,
// job_* at n+2 with the QP context) and its next packet emitted (opcode
// FIRST / MIDDLE / LAST / ONLY at the job's MTU, PSN = job PSN + packet
// index, AETH {ACK syndrome, job MSN} on FIRST, LAST and ONLY, payload read
// from the job's bus address); the job is popped with its last packet's
// descriptor. No PSN write-back, no completion. Packets already sent of a
// QP's head job: rmid_q (bitmap) and rp_mem_q (a RAM read at n+1).
//
// Timing (grant transferred at n):
//   new WQE:        pop and qp_idx at n+1; WQE and QP context at n+2; MR
//                   entry (addressed by the WQE's lkey in rnic_top) at n+3,
//                   checks; desc / rd_req / cpl visible at n+4
//   WQE in progress: qp_idx at n+1, QP context at n+2, outputs at n+3; a
//                   QP now in ERROR sends no more of it: the WQE ends, and
//                   its flush completion (status 5, if it never completed
//                   before) is the output at n+3
//   READ response:  job_rd and qp_idx at n+1, job and QP context at n+2,
//                   outputs at n+3 (job_pop with the last packet's descriptor)
//   CNP / ACK (control grant with one waiting): the same as a WQE in
//                   progress (an ACK for a UC QP is dropped: no output,
//                   grant_ready back at n+4)
//   no work:         grant ignored, grant_ready stays high (also a QP with
//                    no WQE in progress whose wqe_block is high)
//   last transfer of the step at m -> grant_ready at m+1
module tx_engine #(
  parameter int QPS = rnic_pkg::QPS,
  parameter int MRS = rnic_pkg::MRS,
  parameter int CQS = rnic_pkg::CQS
) (
  input  logic                 clk,
  input  logic                 rst,
  input  logic                 grant_valid,
  output logic                 grant_ready,
  input  logic [QPW-1:0]       grant_qp,
  input  logic                 grant_ctrl,
  input  logic                 cnp_valid,
  input  logic [QPW-1:0]       cnp_qp,
  input  logic [5:0]           cfg_cnp_dscp,
  input  logic [2:0]           cfg_cnp_pcp,
  input  logic                 cfg_cnp_becn,
  input  logic                 ack_valid,
  input  logic [QPW-1:0]       ack_qp,
  input  logic [23:0]          ack_psn,
  input  logic [7:0]           ack_syndrome,
  input  logic [23:0]          ack_msn,
  output logic                 ctrl_ack_first,
  input  logic [QPS-1:0]       job_avail,
  output logic                 job_rd_valid,
  output logic [QPW-1:0]       job_rd_qp,
  input  logic                 job_present,
  input  logic [23:0]          job_psn,
  input  logic [63:0]          job_addr,
  input  logic [31:0]          job_len,
  input  logic [23:0]          job_msn,
  input  logic [2:0]           job_mtu,
  output logic                 job_pop_valid,
  output logic [QPW-1:0]       job_pop_qp,
  output logic [QPS-1:0]       req_active,
  input  logic [QPS-1:0]       wqe_avail,
  input  logic [QPS-1:0]       wqe_block,
  // ack_tracker's error mode per QP: a WQE in progress ended by ERROR
  // completes through it (see quit).
  input  logic [QPS-1:0]       err_mode,
  output logic                 wqe_pop_valid,
  output logic [QPW-1:0]       wqe_pop_qp,
  input  logic                 wqe_valid,
  input  logic [QPW-1:0]       wqe_qp,
  input  logic [511:0]         wqe_data,
  output logic [QPW-1:0]       qp_idx,
  input  logic [1:0]           qp_state,
  input  logic                 qp_uc,
  input  logic                 qp_ipv6,
  input  logic                 qp_vlan_en,
  input  logic                 qp_ecn_en,
  input  logic [2:0]           qp_mtu,
  input  logic [2:0]           qp_max_rd,
  input  logic [CQW-1:0]       qp_cq,
  input  logic [23:0]          qp_remote_qpn,
  input  logic [23:0]          qp_psn,
  input  logic [15:0]          qp_pd,
  input  logic [47:0]          qp_dst_mac,
  input  logic [47:0]          qp_src_mac,
  input  logic [127:0]         qp_src_ip,
  input  logic [127:0]         qp_dst_ip,
  input  logic [15:0]          qp_udp_sport,
  input  logic [5:0]           qp_dscp,
  input  logic [11:0]          qp_vid,
  input  logic [2:0]           qp_pcp,
  input  logic [15:0]          qp_pkey,
  input  logic                 mr_valid,
  input  logic [31:0]          mr_key,
  input  logic [63:0]          mr_va,
  input  logic [63:0]          mr_len,
  input  logic [63:0]          mr_pbase,
  input  logic [3:0]           mr_access,
  input  logic [15:0]          mr_pd,
  output logic                 psn_wr_valid,
  output logic [QPW-1:0]       psn_wr_qp,
  output logic [23:0]          psn_wr_psn,
  // A READ REQUEST committed (pulse, with its descriptor): what rd_sink
  // needs to place the responses (first PSN, length, local bus address,
  // the QP's MTU code as used, and its max_rd_atomic for rd_sink's bound).
  output logic                 rr_valid,
  output logic [QPW-1:0]       rr_qp,
  output logic [23:0]          rr_psn,
  output logic [31:0]          rr_len,
  output logic [63:0]          rr_addr,
  output logic [2:0]           rr_mtu,
  output logic [2:0]           rr_max,
  output logic                 err_valid,
  output logic [QPW-1:0]       err_qp,
  output logic                 rd_req_valid,
  input  logic                 rd_req_ready,
  output logic [63:0]          rd_req_addr,
  output logic [16:0]          rd_req_len,
  output logic                 desc_valid,
  input  logic                 desc_ready,
  output logic [QPW-1:0]       desc_qp,
  output logic                 desc_cpl,
  output logic [47:0]          desc_dst_mac,
  output logic [47:0]          desc_src_mac,
  output logic                 desc_vlan_en,
  output logic [2:0]           desc_pcp,
  output logic [11:0]          desc_vid,
  output logic                 desc_ipv6,
  output logic [127:0]         desc_src_ip,
  output logic [127:0]         desc_dst_ip,
  output logic [5:0]           desc_dscp,
  output logic [1:0]           desc_ecn,
  output logic [15:0]          desc_udp_sport,
  output logic [7:0]           desc_opcode,
  output logic                 desc_se,
  output logic [15:0]          desc_pkey,
  output logic                 desc_becn,
  output logic [23:0]          desc_dest_qp,
  output logic                 desc_ack_req,
  output logic [23:0]          desc_psn,
  output logic                 desc_reth_en,
  output logic [63:0]          desc_reth_va,
  output logic [31:0]          desc_reth_rkey,
  output logic [31:0]          desc_reth_len,
  output logic                 desc_imm_en,
  output logic [31:0]          desc_imm,
  output logic                 desc_aeth_en,
  output logic [31:0]          desc_aeth,
  output logic                 desc_cnp_pad,
  output logic [12:0]          desc_pay_len,
  output logic [13:0]          desc_wire_len,
  output logic                 cpl_valid,
  input  logic                 cpl_ready,
  output logic                 cpl_wait_frame,
  output logic [63:0]          cpl_wr_id,
  output logic [7:0]           cpl_status,
  output logic [7:0]           cpl_opcode,
  output logic [31:0]          cpl_len,
  output logic [31:0]          cpl_imm,
  output logic [QPW-1:0]       cpl_qp,
  output logic [CQW-1:0]       cpl_cq,
  output logic                 cpl_uc,
  output logic [23:0]          cpl_psn,
  output logic                 ev_prot_err,
  output logic                 ev_flush,
  // Retransmission (docs/retransmission.md): resend QP rw_qp from PSN
  // rw_psn (retx_ctl), the anchor reports (ack_tracker), software restarts
  // (csr), the popped WQE's SQ index (sq_fetch), the re-fetch order to
  // sq_fetch, the completion's SQ index, and the QPs whose next WQE is one
  // sent before (rnic_top lifts their sq_block).
  input  logic                 rw_valid,
  output logic                 rw_ready,
  input  logic [QPW-1:0]       rw_qp,
  input  logic [23:0]          rw_psn,
  input  logic                 anc_valid,
  input  logic [QPW-1:0]       anc_qp,
  input  logic [15:0]          anc_idx,
  input  logic [23:0]          anc_psn,
  input  logic                 psn_set_valid,
  input  logic [QPW-1:0]       psn_set_qp,
  input  logic [15:0]          wqe_idx,
  output logic                 sq_rw_valid,
  output logic [QPW-1:0]       sq_rw_qp,
  output logic [15:0]          sq_rw_idx,
  output logic [15:0]          cpl_idx,
  output logic [QPS-1:0]       rpl_all
);
  localparam int QPW = (QPS > 1) ? $clog2(QPS) : 1;
  localparam int CQW = (CQS > 1) ? $clog2(CQS) : 1;


  if (QPS < 2 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("tx_engine: QPS must be a power of two >= 2");
  end
  if (MRS < 2 || (MRS & (MRS - 1)) != 0) begin : g_bad_mrs
    $error("tx_engine: MRS must be a power of two >= 2");
  end
  if (CQS < 2 || (CQS & (CQS - 1)) != 0) begin : g_bad_cqs
    $error("tx_engine: CQS must be a power of two >= 2");
  end

  // The AETH syndrome of a READ response: ACK with credit field 0, the
  // syndrome the responder puts in its ACKs.
  localparam logic [7:0] SYN_ACK = rnic_pkg::AETH_ACK;

  typedef enum logic [3:0] {
    S_IDLE,  // taking grants
    S_POP,   // new WQE: the pop is visible
    S_WQE,   // new WQE: WQE and QP context visible; latch the WQE
    S_CHK,   // new WQE: MR entry visible; check and emit
    S_CTX,   // WQE in progress or CNP: qp_idx visible
    S_EMIT,  // WQE in progress or CNP: QP context visible; emit
    S_OUT,   // waiting for the step's desc / rd_req / cpl transfers
    S_RW,    // rewind: the QP's anchor visible; act
    S_RW2    // rewind: sq_fetch takes the re-fetch order
  } state_e;

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  state_e         state_q, state_d;
  logic           grant_ready_q;
  logic [QPW-1:0] qp_idx_q;
  logic           cnp_q;  // the step is a CNP (control grant)
  logic           ack_q;  // the step is an ACK (control grant)
  logic           rsp_q;  // the step is a READ response packet
  // Control round robin: 1 = an ACK goes before a CNP when both wait.
  logic           ctrl_ack_q;
  // The ACK taken: BTH PSN and AETH.
  logic [23:0]    a_psn_q, a_msn_q;
  logic [7:0]     a_syndrome_q;
  logic           wqe_pop_valid_q;
  logic [QPW-1:0] wqe_pop_qp_q;
  // The new WQE, latched from wqe_data.
  logic [63:0]    w_wr_id_q, w_laddr_q, w_rva_q;
  logic [7:0]     w_opcode_q;
  logic [1:0]     w_flags_q;
  logic [31:0]    w_len_q, w_lkey_q, w_imm_q, w_rkey_q;
  // Per QP: the WQE in progress (valid while its active_q bit is set).
  logic [QPS-1:0] active_q;
  logic [63:0]    c_wr_id_q  [QPS];
  logic [2:0]     c_opcode_q [QPS];
  logic [1:0]     c_flags_q  [QPS];
  logic [31:0]    c_len_q    [QPS];
  logic [63:0]    c_paddr_q  [QPS];  // physical address of the next payload byte
  logic [63:0]    c_rva_q    [QPS];
  logic [31:0]    c_rkey_q   [QPS];
  logic [31:0]    c_imm_q    [QPS];
  logic [31:0]    c_left_q   [QPS];  // payload bytes not yet sent
  // Per QP: the head READ job's packets already sent (valid while its
  // rmid_q bit is set; 0 otherwise), a RAM with a registered read port.
  logic [QPS-1:0] rmid_q;
  logic [23:0]    rp_mem_q   [QPS];
  logic [23:0]    rp_rd_q;
  logic           job_rd_valid_q, job_pop_valid_q;
  logic [QPW-1:0] job_rd_qp_q, job_pop_qp_q;
  // Outputs.
  logic           psn_wr_valid_q;
  logic [QPW-1:0] psn_wr_qp_q;
  logic [23:0]    psn_wr_psn_q;
  logic           rr_valid_q;
  logic [QPW-1:0] rr_qp_q;
  logic [23:0]    rr_psn_q;
  logic [31:0]    rr_len_q;
  logic [63:0]    rr_addr_q;
  logic [2:0]     rr_mtu_q;
  logic [2:0]     rr_max_q;
  logic           err_valid_q;
  logic [QPW-1:0] err_qp_q;
  logic           rd_req_valid_q;
  logic [63:0]    rd_req_addr_q;
  logic [16:0]    rd_req_len_q;
  logic           desc_valid_q, desc_cpl_q, desc_vlan_en_q, desc_ipv6_q, desc_se_q;
  logic           desc_ack_req_q, desc_reth_en_q, desc_imm_en_q;
  logic [QPW-1:0] desc_qp_q;
  logic [47:0]    desc_dst_mac_q, desc_src_mac_q;
  logic [2:0]     desc_pcp_q;
  logic [11:0]    desc_vid_q;
  logic [127:0]   desc_src_ip_q, desc_dst_ip_q;
  logic [5:0]     desc_dscp_q;
  logic [1:0]     desc_ecn_q;
  logic [15:0]    desc_udp_sport_q, desc_pkey_q;
  logic [7:0]     desc_opcode_q;
  logic [23:0]    desc_dest_qp_q, desc_psn_q;
  logic [63:0]    desc_reth_va_q;
  logic [31:0]    desc_reth_rkey_q, desc_reth_len_q, desc_imm_q;
  logic [12:0]    desc_pay_len_q;
  logic           desc_becn_q, desc_cnp_pad_q, desc_aeth_en_q;
  logic [31:0]    desc_aeth_q;
  logic [13:0]    desc_wire_len_q;
  logic           cpl_valid_q, cpl_wait_frame_q;
  logic [63:0]    cpl_wr_id_q;
  logic [7:0]     cpl_status_q, cpl_opcode_q;
  logic [31:0]    cpl_len_q, cpl_imm_q;
  logic [QPW-1:0] cpl_qp_q;
  logic [CQW-1:0] cpl_cq_q;
  logic           cpl_uc_q;
  logic [23:0]    cpl_psn_q;
  logic           ev_prot_err_q, ev_flush_q;
  // Retransmission. Per QP: the anchor set by the first WQE after a
  // restart (a0) and the one ack_tracker reports (a1), {SQ index, PSN};
  // hw: the first SQ index whose last packet was never sent; rs: the
  // resume PSN of a rewind. RAMs with one write port and a registered read
  // (a0/a1/hw at a rewind's take, hw/rs at a grant). Bits per QP: a0/a1/hw
  // valid, skip (a rewind looks for its resume PSN), old (the next WQE to
  // pop was sent before).
  logic           rw_ready_q;
  logic [23:0]    rw_psn_q;
  logic [39:0]    a0_mem_q [QPS];
  logic [39:0]    a1_mem_q [QPS];
  logic [15:0]    hw_mem_q [QPS];
  logic [23:0]    rs_mem_q [QPS];
  logic [39:0]    a0_rd_q, a1_rd_q;
  logic [15:0]    hw_rd_q;
  logic [23:0]    rs_rd_q;
  logic [QPS-1:0] a0_ok_q, a1_ok_q, hw_ok_q, skip_q, old_q;
  logic [15:0]    w_idx_q;
  logic [15:0]    c_idx_q    [QPS];
  logic [QPS-1:0] c_new_q;
  logic           sq_rw_valid_q;
  logic [QPW-1:0] sq_rw_qp_q;
  logic [15:0]    sq_rw_idx_q;
  logic [15:0]    cpl_idx_q;

  // ------------------------------------------------------------------
  // Grant and WQE intake
  // ------------------------------------------------------------------
  logic grant_take, grant_active, grant_avail, grant_job, wqe_ok, take_ack;
  // Reserved WQE bytes, flag bits 7..2 and the access bits other than
  // LOCAL_WRITE are not looked at.
  logic wqe_rsvd_unused;

  always_comb begin
    grant_take   = state_q == S_IDLE && grant_valid && grant_ready_q;
    grant_active = active_q[grant_qp];
    // A READ job of the QP (rd_resp) goes before its own requests.
    grant_job    = job_avail[grant_qp];
    // A control grant takes the ACK when one waits and it is its turn (or
    // no CNP waits), else the CNP if one waits.
    take_ack     = ack_valid && (ctrl_ack_q || !cnp_valid);
    // A QP whose wqe_block is high (rnic_top: ack_tracker full) may finish
    // its WQE in progress but not start a new one: its grant counts as one
    // with no work, whatever tx_sched computed the cycle before.
    grant_avail  = wqe_avail[grant_qp] && !wqe_block[grant_qp];
    // sq_fetch answers a pop of an available WQE the next cycle; anything
    // else would be a wiring error, and is ignored.
    wqe_ok       = wqe_valid && wqe_qp == qp_idx_q;
    wqe_rsvd_unused = ^{wqe_data[511:352], wqe_data[95:74], mr_access[3:1]};
  end

  // ------------------------------------------------------------------
  // Checks of the new WQE (S_CHK)
  // ------------------------------------------------------------------
  logic        is_flush, is_bad_op, mr_ok, chk_pkt;
  logic [64:0] w_end, mr_end;
  logic [63:0] w_paddr;

  always_comb begin
    // 65-bit bounds: no wrap on either side.
    w_end     = {1'b0, w_laddr_q} + {33'd0, w_len_q};
    mr_end    = {1'b0, mr_va} + {1'b0, mr_len};
    w_paddr   = mr_pbase + (w_laddr_q - mr_va);
    mr_ok     = mr_valid && mr_key == w_lkey_q && mr_pd == qp_pd && w_laddr_q >= mr_va
                && w_end <= mr_end && (w_opcode_q != rnic_pkg::WQE_READ || mr_access[0]);
    is_flush  = qp_state == rnic_pkg::QP_ERROR;
    is_bad_op = w_opcode_q > rnic_pkg::WQE_READ || (w_opcode_q == rnic_pkg::WQE_READ && qp_uc);
    chk_pkt   = !is_flush && !is_bad_op && (w_len_q == 32'd0 || mr_ok);
  end

  // ------------------------------------------------------------------
  // The QP's MTU (codes outside 1..5 read as the nearest)
  // ------------------------------------------------------------------
  logic [2:0]  mtu_code;
  logic [3:0]  mtu_log;
  logic [12:0] mtu;

  always_comb begin
    mtu_code = (qp_mtu == 3'd0) ? 3'd1 : ((qp_mtu > 3'd5) ? 3'd5 : qp_mtu);
    mtu_log  = 4'd7 + {1'b0, mtu_code};
    mtu      = 13'd128 << mtu_code;
  end

  // ------------------------------------------------------------------
  // Replay of a new WQE (S_CHK) after a rewind (docs/retransmission.md)
  // ------------------------------------------------------------------
  // w_n: the WQE's PSNs (one per MTU, at least one; a READ's responses).
  // rs_off: the resume PSN's distance from the WQE's first PSN (qp_psn).
  // A QP looking for its resume PSN skips a WQE wholly before it, and
  // starts the one holding it at packet k. chk_old: the WQE's last packet
  // was sent before (its completion and READ record were pushed then).
  logic [32:0] w_span, w_n33;
  logic [23:0] w_n, rs_off, k_psn;
  logic        chk_skip, chk_old, chk_quiet;
  logic [32:0] koff;
  logic [15:0] hw_d;
  logic [39:0] anc_sel;
  logic [15:0] rw_hw_d;
  logic        rw_go, rw_take;

  always_comb begin
    w_span   = {1'b0, w_len_q} + {20'd0, mtu} - 33'd1;
    w_n33    = w_span >> mtu_log;
    w_n      = (w_n33 == 33'd0) ? 24'd1 : w_n33[23:0];
    rs_off   = rs_rd_q - qp_psn;
    chk_skip = skip_q[qp_idx_q] && rs_off >= w_n && rs_off < 24'h80_0000;
    k_psn    = (skip_q[qp_idx_q] && rs_off < w_n) ? rs_off : 24'd0;
    koff     = {9'd0, k_psn} << mtu_log;
    hw_d     = hw_rd_q - w_idx_q;
    chk_old  = hw_ok_q[qp_idx_q] && hw_d != 16'd0 && hw_d < 16'h8000;
    // Nothing sent, nothing completed: a WQE wholly before the resume PSN,
    // or one sent before whose QP is now in ERROR (its completion, if
    // signaled, is in ack_tracker already, which flushes it).
    chk_quiet = state_q == S_CHK && (chk_skip || (chk_old && qp_state == rnic_pkg::QP_ERROR));
    // A rewind: ack_tracker's anchor once it reported one since the
    // restart, else the first WQE's; nothing when no WQE was taken since.
    anc_sel  = a1_ok_q[qp_idx_q] ? a1_rd_q : a0_rd_q;
    rw_hw_d  = hw_rd_q - anc_sel[39:24];
    rw_go    = state_q == S_RW && a0_ok_q[qp_idx_q];
    rw_take  = state_q == S_IDLE && rw_ready_q && rw_valid;
  end

  // ------------------------------------------------------------------
  // Packet source: the new WQE (S_CHK) or the WQE in progress (S_EMIT)
  // ------------------------------------------------------------------
  logic        s_first;
  logic [63:0] s_wr_id, s_paddr, s_rva;
  logic [2:0]  s_opcode;
  logic [1:0]  s_flags;
  logic [31:0] s_len, s_rkey, s_imm, s_left;
  // The message was never completed before (its last packet pushes the
  // completion and the READ record); its SQ index; this packet's PSN.
  logic        s_new;
  logic [15:0] s_idx;
  logic [23:0] s_psn;

  always_comb begin
    if (state_q == S_CHK) begin
      // From packet k (0 unless a rewind resumes inside the WQE): a READ
      // asks again for the rest (address and length moved on), a SEND or
      // WRITE continues as MIDDLE / LAST.
      s_first  = k_psn == 24'd0;
      s_wr_id  = w_wr_id_q;
      s_opcode = w_opcode_q[2:0];
      s_flags  = w_flags_q;
      s_len    = (w_opcode_q == rnic_pkg::WQE_READ) ? w_len_q - koff[31:0] : w_len_q;
      s_paddr  = w_paddr + {31'd0, koff};
      s_rva    = (w_opcode_q == rnic_pkg::WQE_READ) ? w_rva_q + {31'd0, koff} : w_rva_q;
      s_rkey   = w_rkey_q;
      s_imm    = w_imm_q;
      s_left   = w_len_q - koff[31:0];
      s_new    = !chk_old;
      s_idx    = w_idx_q;
      s_psn    = qp_psn + k_psn;
    end else begin
      s_first  = 1'b0;
      s_wr_id  = c_wr_id_q[qp_idx_q];
      s_opcode = c_opcode_q[qp_idx_q];
      s_flags  = c_flags_q[qp_idx_q];
      s_len    = c_len_q[qp_idx_q];
      s_paddr  = c_paddr_q[qp_idx_q];
      s_rva    = c_rva_q[qp_idx_q];
      s_rkey   = c_rkey_q[qp_idx_q];
      s_imm    = c_imm_q[qp_idx_q];
      s_left   = c_left_q[qp_idx_q];
      s_new    = c_new_q[qp_idx_q];
      s_idx    = c_idx_q[qp_idx_q];
      s_psn    = qp_psn;
    end
  end

  // ------------------------------------------------------------------
  // The packet
  // ------------------------------------------------------------------
  logic        is_read, is_send, has_imm, last, cpl_due;
  logic [12:0] pay;
  logic [7:0]  rc_op, op_sel;
  logic [32:0] rd_span, rd_n;
  logic [23:0] n_psn, next_psn;
  // The message's last PSN from this packet on (quit): s_left over MTU.
  logic [32:0] rest_span, rest_n;
  logic [23:0] s_last_psn;
  logic        rest_hi_unused;

  always_comb begin
    is_read  = s_opcode == rnic_pkg::WQE_READ[2:0];
    is_send  = s_opcode == 3'd0 || s_opcode == rnic_pkg::WQE_SEND_IMM[2:0];
    has_imm  = s_opcode == rnic_pkg::WQE_SEND_IMM[2:0] || s_opcode == rnic_pkg::WQE_WRITE_IMM[2:0];
    // A READ REQUEST is one packet whatever the length.
    last     = is_read || s_left <= {19'd0, mtu};
    pay      = is_read ? 13'd0 : (last ? s_left[12:0] : mtu);
    // SEND: FIRST 0, MIDDLE 1, LAST 2 / 3, ONLY 4 / 5; WRITE the same from 6.
    if (s_first && last)  op_sel = 8'd4 + {7'd0, has_imm};
    else if (s_first)     op_sel = 8'd0;
    else if (last)        op_sel = 8'd2 + {7'd0, has_imm};
    else                  op_sel = 8'd1;
    rc_op    = is_read ? 8'h0C : ((is_send ? 8'h00 : 8'h06) + op_sel);
    // READ REQUEST: one PSN per response packet it will get.
    rd_span  = {1'b0, s_len} + {20'd0, mtu} - 33'd1;
    rd_n     = rd_span >> mtu_log;
    n_psn    = !is_read ? 24'd1 : ((rd_n == 33'd0) ? 24'd1 : rd_n[23:0]);
    next_psn = s_psn + n_psn;
    rest_span  = {1'b0, s_left} + {20'd0, mtu} - 33'd1;
    rest_n     = rest_span >> mtu_log;
    s_last_psn = s_psn + rest_n[23:0] - 24'd1;
    rest_hi_unused = ^rest_n[32:24];
    // Every signaled message completes: UC when its frame has left, RC
    // when ack_tracker has its ACK.
    cpl_due  = last && s_flags[0] && s_new;
  end

  // ------------------------------------------------------------------
  // A READ response packet (S_EMIT with rsp_q): the head job's next one
  // ------------------------------------------------------------------
  logic [2:0]  r_code;
  logic [3:0]  r_log;
  logic [12:0] r_mtu, r_pay;
  logic [23:0] r_k, r_psn;
  logic [32:0] r_off, r_left;
  logic [63:0] r_addr;
  logic        r_first, r_last, r_aeth;
  logic [7:0]  r_op;
  logic [1:0]  r_pad;

  always_comb begin
    r_code  = (job_mtu == 3'd0) ? 3'd1 : ((job_mtu > 3'd5) ? 3'd5 : job_mtu);
    r_log   = 4'd7 + {1'b0, r_code};
    r_mtu   = 13'd128 << r_code;
    r_k     = rmid_q[qp_idx_q] ? rp_rd_q : 24'd0;
    // Bytes before packet k (below 2^32 + MTU: 33 bits hold it).
    r_off   = {9'd0, r_k} << r_log;
    r_left  = {1'b0, job_len} - r_off;
    r_first = r_k == 24'd0;
    // A zero-length READ is one ONLY packet.
    r_last  = r_left <= {20'd0, r_mtu};
    r_pay   = r_last ? r_left[12:0] : r_mtu;
    // READ RESPONSE FIRST 0x0D, MIDDLE 0x0E, LAST 0x0F, ONLY 0x10.
    if (r_first && r_last) r_op = 8'h10;
    else if (r_first)      r_op = 8'h0D;
    else if (r_last)       r_op = 8'h0F;
    else                   r_op = 8'h0E;
    r_aeth  = r_first || r_last;
    r_psn   = job_psn + r_k;
    r_addr  = job_addr + {31'd0, r_off};
    r_pad   = 2'd0 - r_pay[1:0];
  end

  // ------------------------------------------------------------------
  // Frame length without FCS (desc_wire_len), for the rate limiter
  // ------------------------------------------------------------------
  logic [13:0] hdr_len, data_len, cnp_len, ack_len, rsp_len;
  logic [1:0]  pad_n;
  logic        reth_en, imm_en;

  always_comb begin
    // Ethernet 14 (+4 VLAN), IP 20 / 40, UDP 8, BTH 12.
    hdr_len  = 14'd54 + (qp_vlan_en ? 14'd4 : 14'd0) + (qp_ipv6 ? 14'd20 : 14'd0);
    reth_en  = is_read || (!is_send && s_first);
    imm_en   = has_imm && last;
    pad_n    = 2'd0 - pay[1:0];
    // + RETH 16, ImmDt 4, payload, pad, ICRC 4.
    data_len = hdr_len + (reth_en ? 14'd16 : 14'd0) + (imm_en ? 14'd4 : 14'd0)
               + {1'b0, pay} + {12'd0, pad_n} + 14'd4;
    // + CNP's 16 reserved bytes, ICRC 4.
    cnp_len  = hdr_len + 14'd20;
    // + AETH 4, ICRC 4.
    ack_len  = hdr_len + 14'd8;
    // + AETH 4 (FIRST, LAST, ONLY), payload, pad, ICRC 4.
    rsp_len  = hdr_len + (r_aeth ? 14'd4 : 14'd0) + {1'b0, r_pay} + {12'd0, r_pad} + 14'd4;
  end

  // ------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------
  logic emit, emit_cnp, emit_ack, emit_rsp, desc_left, rd_left, cpl_left, chk_err, quit;
  logic quit_turn;

  always_comb begin
    desc_left = desc_valid_q && !desc_ready;
    rd_left   = rd_req_valid_q && !rd_req_ready;
    cpl_left  = cpl_valid_q && !cpl_ready;
    // The next packet of a WQE in progress whose QP is now in ERROR is not
    // sent: the WQE ends there (quit), flushed if it never completed.
    quit      = state_q == S_EMIT && !cnp_q && !ack_q && !rsp_q
                && qp_state == rnic_pkg::QP_ERROR;
    quit_turn = err_mode[qp_idx_q] && !qp_uc;
    emit      = (state_q == S_CHK && chk_pkt && !chk_quiet)
                || (state_q == S_EMIT && !cnp_q && !ack_q && !rsp_q && !quit);
    emit_cnp  = state_q == S_EMIT && cnp_q;
    // A UC QP has no ACKs: one asked for is dropped (no descriptor).
    emit_ack  = state_q == S_EMIT && ack_q && !qp_uc;
    // rd_resp answers a head read of a QP with a job (job_avail); a read
    // that finds none (a wiring error) emits nothing.
    emit_rsp  = state_q == S_EMIT && rsp_q && job_present;
    chk_err   = state_q == S_CHK && !chk_pkt && !chk_quiet;
    state_d   = state_q;
    unique case (state_q)
      S_IDLE: begin
        // A control grant names no QP (grant_qp is 0): it is for the CNP
        // or ACK, if one waits, and does nothing otherwise.
        if (grant_take && grant_ctrl) begin
          if (cnp_valid || ack_valid) state_d = S_CTX;
        end else if (grant_take && (grant_job || grant_active)) state_d = S_CTX;
        else if (grant_take && grant_avail) state_d = S_POP;
        else if (rw_take) state_d = S_RW;
      end
      S_POP:   state_d = S_WQE;
      S_WQE:   state_d = wqe_ok ? S_CHK : S_IDLE;
      S_CHK:   state_d = S_OUT;
      S_CTX:   state_d = S_EMIT;
      S_EMIT:  state_d = S_OUT;
      S_OUT:   if (!desc_left && !rd_left && !cpl_left) state_d = S_IDLE;
      S_RW:    state_d = S_RW2;
      S_RW2:   state_d = S_IDLE;
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q          <= S_IDLE;
      grant_ready_q    <= 1'b0;
      qp_idx_q         <= '0;
      cnp_q            <= 1'b0;
      ack_q            <= 1'b0;
      rsp_q            <= 1'b0;
      ctrl_ack_q       <= 1'b0;
      a_psn_q          <= '0;
      a_syndrome_q     <= '0;
      a_msn_q          <= '0;
      wqe_pop_valid_q  <= 1'b0;
      wqe_pop_qp_q     <= '0;
      w_wr_id_q        <= '0;
      w_opcode_q       <= '0;
      w_flags_q        <= '0;
      w_len_q          <= '0;
      w_laddr_q        <= '0;
      w_lkey_q         <= '0;
      w_imm_q          <= '0;
      w_rva_q          <= '0;
      w_rkey_q         <= '0;
      active_q         <= '0;
      rmid_q           <= '0;
      job_rd_valid_q   <= 1'b0;
      job_rd_qp_q      <= '0;
      job_pop_valid_q  <= 1'b0;
      job_pop_qp_q     <= '0;
      psn_wr_valid_q   <= 1'b0;
      psn_wr_qp_q      <= '0;
      psn_wr_psn_q     <= '0;
      rr_valid_q       <= 1'b0;
      rr_qp_q          <= '0;
      rr_psn_q         <= '0;
      rr_len_q         <= '0;
      rr_addr_q        <= '0;
      rr_mtu_q         <= '0;
      rr_max_q         <= '0;
      err_valid_q      <= 1'b0;
      err_qp_q         <= '0;
      rd_req_valid_q   <= 1'b0;
      rd_req_addr_q    <= '0;
      rd_req_len_q     <= '0;
      desc_valid_q     <= 1'b0;
      desc_qp_q        <= '0;
      desc_cpl_q       <= 1'b0;
      desc_dst_mac_q   <= '0;
      desc_src_mac_q   <= '0;
      desc_vlan_en_q   <= 1'b0;
      desc_pcp_q       <= '0;
      desc_vid_q       <= '0;
      desc_ipv6_q      <= 1'b0;
      desc_src_ip_q    <= '0;
      desc_dst_ip_q    <= '0;
      desc_dscp_q      <= '0;
      desc_ecn_q       <= '0;
      desc_udp_sport_q <= '0;
      desc_opcode_q    <= '0;
      desc_se_q        <= 1'b0;
      desc_pkey_q      <= '0;
      desc_dest_qp_q   <= '0;
      desc_ack_req_q   <= 1'b0;
      desc_psn_q       <= '0;
      desc_reth_en_q   <= 1'b0;
      desc_reth_va_q   <= '0;
      desc_reth_rkey_q <= '0;
      desc_reth_len_q  <= '0;
      desc_imm_en_q    <= 1'b0;
      desc_imm_q       <= '0;
      desc_pay_len_q   <= '0;
      desc_becn_q      <= 1'b0;
      desc_cnp_pad_q   <= 1'b0;
      desc_aeth_en_q   <= 1'b0;
      desc_aeth_q      <= '0;
      desc_wire_len_q  <= '0;
      cpl_valid_q      <= 1'b0;
      cpl_wait_frame_q <= 1'b0;
      cpl_wr_id_q      <= '0;
      cpl_status_q     <= '0;
      cpl_opcode_q     <= '0;
      cpl_len_q        <= '0;
      cpl_imm_q        <= '0;
      cpl_qp_q         <= '0;
      cpl_cq_q         <= '0;
      cpl_uc_q         <= 1'b0;
      cpl_psn_q        <= '0;
      ev_prot_err_q    <= 1'b0;
      ev_flush_q       <= 1'b0;
      rw_ready_q       <= 1'b0;
      rw_psn_q         <= '0;
      a0_ok_q          <= '0;
      a1_ok_q          <= '0;
      hw_ok_q          <= '0;
      skip_q           <= '0;
      old_q            <= '0;
      w_idx_q          <= '0;
      c_new_q          <= '0;
      sq_rw_valid_q    <= 1'b0;
      sq_rw_qp_q       <= '0;
      sq_rw_idx_q      <= '0;
      cpl_idx_q        <= '0;
    end else begin
      state_q         <= state_d;
      // Pulses last one cycle.
      wqe_pop_valid_q <= 1'b0;
      job_rd_valid_q  <= 1'b0;
      job_pop_valid_q <= 1'b0;
      psn_wr_valid_q  <= 1'b0;
      rr_valid_q      <= 1'b0;
      err_valid_q     <= 1'b0;
      ev_prot_err_q   <= 1'b0;
      ev_flush_q      <= 1'b0;
      sq_rw_valid_q   <= 1'b0;

      // ---- a rewind: the PSN back to the anchor's, sq_fetch re-fetches
      // from its index, the WQE in progress is dropped, the QP looks for
      // the resume PSN ----
      if (rw_go) begin
        psn_wr_valid_q <= 1'b1;
        psn_wr_qp_q    <= qp_idx_q;
        psn_wr_psn_q   <= anc_sel[23:0];
        sq_rw_valid_q  <= 1'b1;
        sq_rw_qp_q     <= qp_idx_q;
        sq_rw_idx_q    <= anc_sel[39:24];
        active_q[qp_idx_q] <= 1'b0;
      end
      // ---- a WQE skipped: its PSNs go by unsent ----
      if (state_q == S_CHK && chk_skip) begin
        psn_wr_valid_q <= 1'b1;
        psn_wr_qp_q    <= qp_idx_q;
        psn_wr_psn_q   <= qp_psn + w_n;
      end
      // ---- per-QP retransmission bits (a restart clears them last) ----
      if (anc_valid) a1_ok_q[anc_qp] <= 1'b1;
      if (state_q == S_CHK) begin
        a0_ok_q[qp_idx_q] <= 1'b1;
        skip_q[qp_idx_q]  <= chk_skip;
        old_q[qp_idx_q]   <= chk_old && hw_d != 16'd1;
      end
      if ((emit && last && s_new) || (quit && s_new)) hw_ok_q[qp_idx_q] <= 1'b1;
      if (rw_go) begin
        skip_q[qp_idx_q] <= 1'b1;
        old_q[qp_idx_q]  <= hw_ok_q[qp_idx_q] && rw_hw_d != 16'd0 && rw_hw_d < 16'h8000;
      end
      if (psn_set_valid) begin
        a0_ok_q[psn_set_qp] <= 1'b0;
        a1_ok_q[psn_set_qp] <= 1'b0;
        hw_ok_q[psn_set_qp] <= 1'b0;
        skip_q[psn_set_qp]  <= 1'b0;
        old_q[psn_set_qp]   <= 1'b0;
      end

      // ---- grants ----
      if (state_q == S_IDLE) begin
        if (grant_take) begin
          cnp_q <= grant_ctrl && !take_ack;
          ack_q <= grant_ctrl && take_ack;
          rsp_q <= !grant_ctrl && grant_job;
          if (grant_ctrl) begin
            // A control grant with neither waiting does nothing.
            if (take_ack) begin
              qp_idx_q      <= ack_qp;
              a_psn_q       <= ack_psn;
              a_syndrome_q  <= ack_syndrome;
              a_msn_q       <= ack_msn;
              ctrl_ack_q    <= 1'b0;
              grant_ready_q <= 1'b0;
            end else if (cnp_valid) begin
              qp_idx_q      <= cnp_qp;
              ctrl_ack_q    <= 1'b1;
              grant_ready_q <= 1'b0;
            end
          end else begin
            qp_idx_q <= grant_qp;
            // A grant for a QP with no work is taken and does nothing.
            if (grant_job || grant_active || grant_avail) grant_ready_q <= 1'b0;
            if (grant_job) begin
              job_rd_valid_q <= 1'b1;
              job_rd_qp_q    <= grant_qp;
            end else if (!grant_active && grant_avail) begin
              wqe_pop_valid_q <= 1'b1;
              wqe_pop_qp_q    <= grant_qp;
            end
          end
        end else if (rw_take) begin
          // A rewind (grant_ready low since the cycle before): read the
          // QP's anchors at the take.
          rw_ready_q <= 1'b0;
          qp_idx_q   <= rw_qp;
          rw_psn_q   <= rw_psn;
        end else begin
          rw_ready_q    <= 1'b0;
          grant_ready_q <= 1'b1;  // low only in the reset cycle and for a rewind
        end
        // A rewind waits: no grant from the next cycle, then it is taken
        // (a grant taken now that starts no step counts as none, so that
        // stale grants cannot hold a rewind off).
        if (rw_valid && !rw_ready_q && state_d == S_IDLE) begin
          rw_ready_q    <= 1'b1;
          grant_ready_q <= 1'b0;
        end
      end
      // Back to S_IDLE: grants again, unless a rewind waits: it goes
      // first (taken in the next cycle), so that a busy engine cannot
      // starve it.
      if ((state_q == S_WQE && !wqe_ok)
          || (state_q == S_OUT && !desc_left && !rd_left && !cpl_left)
          || state_q == S_RW2) begin
        grant_ready_q <= !rw_valid;
        rw_ready_q    <= rw_valid;
      end

      // ---- WQE latch ----
      if (state_q == S_WQE && wqe_ok) begin
        w_wr_id_q  <= wqe_data[63:0];
        w_opcode_q <= wqe_data[71:64];
        w_flags_q  <= wqe_data[73:72];
        w_len_q    <= wqe_data[127:96];
        w_laddr_q  <= wqe_data[191:128];
        w_lkey_q   <= wqe_data[223:192];
        w_imm_q    <= wqe_data[255:224];
        w_rva_q    <= wqe_data[319:256];
        w_rkey_q   <= wqe_data[351:320];
        w_idx_q    <= wqe_idx;
      end

      // ---- error / flush completion of a new WQE ----
      if (chk_err) begin
        cpl_valid_q      <= 1'b1;
        cpl_wait_frame_q <= 1'b0;
        cpl_wr_id_q      <= w_wr_id_q;
        cpl_status_q     <= is_flush ? rnic_pkg::CQE_WR_FLUSH_ERR : (is_bad_op ? rnic_pkg::CQE_LOC_QP_OP_ERR : rnic_pkg::CQE_LOC_PROT_ERR);
        cpl_opcode_q     <= rnic_pkg::wc_opcode(w_opcode_q);
        cpl_len_q        <= '0;
        // The CQE carries the immediate of the +Imm opcodes only.
        cpl_imm_q        <= (w_opcode_q == rnic_pkg::WQE_SEND_IMM || w_opcode_q == rnic_pkg::WQE_WRITE_IMM)
                            ? w_imm_q : 32'd0;
        cpl_qp_q         <= qp_idx_q;
        cpl_cq_q         <= qp_cq;
        cpl_uc_q         <= qp_uc;
        cpl_psn_q        <= '0;  // no PSN was used
        cpl_idx_q        <= w_idx_q;
        ev_flush_q       <= is_flush;
        err_valid_q      <= !is_flush;
        err_qp_q         <= qp_idx_q;
        ev_prot_err_q    <= !is_flush && !is_bad_op;
      end

      // ---- a WQE in progress ends at its QP's ERROR (no more packets).
      // A message never completed before gets its completion now, signaled
      // or not: an RC QP in ack_tracker's error mode (retries run out, a
      // remote-error NAK) pushes it as its last packet would, a success
      // of its last PSN, which error mode turns into its status (12, 13,
      // 9..11 for the first not acknowledged, 5 after); any other ERROR
      // flushes it (5). One sent before has its completion in ack_tracker
      // already. Marked completed for a replay (hw), as by its last packet.
      if (quit) begin
        active_q[qp_idx_q] <= 1'b0;
        if (s_new) begin
          cpl_valid_q      <= 1'b1;
          cpl_wait_frame_q <= 1'b0;
          cpl_wr_id_q      <= s_wr_id;
          cpl_status_q     <= quit_turn ? rnic_pkg::CQE_SUCCESS : rnic_pkg::CQE_WR_FLUSH_ERR;
          cpl_opcode_q     <= rnic_pkg::wc_opcode({5'd0, s_opcode});
          cpl_len_q        <= quit_turn ? s_len : 32'd0;
          cpl_imm_q        <= has_imm ? s_imm : 32'd0;
          cpl_qp_q         <= qp_idx_q;
          cpl_cq_q         <= qp_cq;
          cpl_uc_q         <= qp_uc;
          cpl_psn_q        <= quit_turn ? s_last_psn : 24'd0;
          cpl_idx_q        <= s_idx;
          ev_flush_q       <= !quit_turn;
        end
      end

      // ---- a packet ----
      if (emit) begin
        desc_valid_q     <= 1'b1;
        desc_qp_q        <= qp_idx_q;
        // Only a UC completion waits for its frame in cq_writer.
        desc_cpl_q       <= cpl_due && qp_uc;
        desc_dst_mac_q   <= qp_dst_mac;
        desc_src_mac_q   <= qp_src_mac;
        desc_vlan_en_q   <= qp_vlan_en;
        desc_pcp_q       <= qp_pcp;
        desc_vid_q       <= qp_vid;
        desc_ipv6_q      <= qp_ipv6;
        desc_src_ip_q    <= qp_src_ip;
        desc_dst_ip_q    <= qp_dst_ip;
        desc_dscp_q      <= qp_dscp;
        desc_ecn_q       <= qp_ecn_en ? 2'b10 : 2'b00;
        desc_udp_sport_q <= qp_udp_sport;
        desc_opcode_q    <= rc_op | (qp_uc ? 8'h20 : 8'h00);
        // SE only on the last packet of SEND (+Imm) and WRITE_IMM messages.
        desc_se_q        <= last && s_flags[1] && (is_send || s_opcode == rnic_pkg::WQE_WRITE_IMM[2:0]);
        desc_pkey_q      <= qp_pkey;
        desc_dest_qp_q   <= qp_remote_qpn;
        desc_ack_req_q   <= last && !qp_uc;
        desc_psn_q       <= s_psn;
        desc_reth_en_q   <= reth_en;
        desc_reth_va_q   <= s_rva;
        desc_reth_rkey_q <= s_rkey;
        desc_reth_len_q  <= s_len;
        desc_imm_en_q    <= imm_en;
        desc_imm_q       <= s_imm;
        desc_pay_len_q   <= pay;
        desc_becn_q      <= 1'b0;
        desc_cnp_pad_q   <= 1'b0;
        desc_aeth_en_q   <= 1'b0;
        desc_aeth_q      <= '0;
        desc_wire_len_q  <= data_len;

        rd_req_valid_q   <= pay != 13'd0;
        rd_req_addr_q    <= s_paddr;
        rd_req_len_q     <= {4'd0, pay};

        psn_wr_valid_q   <= 1'b1;
        psn_wr_qp_q      <= qp_idx_q;
        psn_wr_psn_q     <= next_psn;

        // A READ of length 0 places nothing: its address is 0.
        // A READ asked again (sent before) is in rd_sink already.
        rr_valid_q       <= is_read && s_new;
        if (is_read) begin
          rr_qp_q   <= qp_idx_q;
          rr_psn_q  <= s_psn;
          rr_len_q  <= s_len;
          rr_addr_q <= (s_len == 32'd0) ? 64'd0 : s_paddr;
          rr_mtu_q  <= mtu_code;
          rr_max_q  <= qp_max_rd;
        end

        if (cpl_due) begin
          cpl_valid_q      <= 1'b1;
          cpl_wait_frame_q <= qp_uc;
          cpl_wr_id_q      <= s_wr_id;
          cpl_status_q     <= rnic_pkg::CQE_SUCCESS;
          cpl_opcode_q     <= rnic_pkg::wc_opcode({5'd0, s_opcode});
          cpl_len_q        <= s_len;
          cpl_imm_q        <= has_imm ? s_imm : 32'd0;
          cpl_qp_q         <= qp_idx_q;
          cpl_cq_q         <= qp_cq;
          cpl_uc_q         <= qp_uc;
          // The message's last PSN (a READ's span ends at next_psn - 1).
          cpl_psn_q        <= next_psn - 24'd1;
          cpl_idx_q        <= s_idx;
        end

        active_q[qp_idx_q] <= !last;
        c_new_q[qp_idx_q]  <= s_new;
      end

      // ---- a CNP (docs/rx_cc.md, "tx_engine changes") ----
      if (emit_cnp) begin
        desc_valid_q     <= 1'b1;
        desc_qp_q        <= qp_idx_q;
        desc_cpl_q       <= 1'b0;
        desc_dst_mac_q   <= qp_dst_mac;
        desc_src_mac_q   <= qp_src_mac;
        desc_vlan_en_q   <= qp_vlan_en;
        desc_pcp_q       <= cfg_cnp_pcp;
        desc_vid_q       <= qp_vid;
        desc_ipv6_q      <= qp_ipv6;
        desc_src_ip_q    <= qp_src_ip;
        desc_dst_ip_q    <= qp_dst_ip;
        desc_dscp_q      <= cfg_cnp_dscp;
        desc_ecn_q       <= 2'b00;
        desc_udp_sport_q <= qp_udp_sport;
        desc_opcode_q    <= 8'h81;
        desc_se_q        <= 1'b0;
        desc_pkey_q      <= qp_pkey;
        desc_dest_qp_q   <= qp_remote_qpn;
        desc_ack_req_q   <= 1'b0;
        desc_psn_q       <= '0;
        desc_reth_en_q   <= 1'b0;
        desc_reth_va_q   <= '0;
        desc_reth_rkey_q <= '0;
        desc_reth_len_q  <= '0;
        desc_imm_en_q    <= 1'b0;
        desc_imm_q       <= '0;
        desc_pay_len_q   <= '0;
        desc_becn_q      <= cfg_cnp_becn;
        desc_cnp_pad_q   <= 1'b1;
        desc_aeth_en_q   <= 1'b0;
        desc_aeth_q      <= '0;
        desc_wire_len_q  <= cnp_len;
      end

      // ---- an ACK / NAK (docs/tx_datapath.md, tx_engine) ----
      // The QP's own headers, as for a data packet of the QP; opcode
      // ACKNOWLEDGE, BTH PSN and AETH from ack_gen, no payload.
      if (emit_ack) begin
        desc_valid_q     <= 1'b1;
        desc_qp_q        <= qp_idx_q;
        desc_cpl_q       <= 1'b0;
        desc_dst_mac_q   <= qp_dst_mac;
        desc_src_mac_q   <= qp_src_mac;
        desc_vlan_en_q   <= qp_vlan_en;
        desc_pcp_q       <= qp_pcp;
        desc_vid_q       <= qp_vid;
        desc_ipv6_q      <= qp_ipv6;
        desc_src_ip_q    <= qp_src_ip;
        desc_dst_ip_q    <= qp_dst_ip;
        desc_dscp_q      <= qp_dscp;
        desc_ecn_q       <= qp_ecn_en ? 2'b10 : 2'b00;
        desc_udp_sport_q <= qp_udp_sport;
        desc_opcode_q    <= 8'h11;
        desc_se_q        <= 1'b0;
        desc_pkey_q      <= qp_pkey;
        desc_dest_qp_q   <= qp_remote_qpn;
        desc_ack_req_q   <= 1'b0;
        desc_psn_q       <= a_psn_q;
        desc_reth_en_q   <= 1'b0;
        desc_reth_va_q   <= '0;
        desc_reth_rkey_q <= '0;
        desc_reth_len_q  <= '0;
        desc_imm_en_q    <= 1'b0;
        desc_imm_q       <= '0;
        desc_pay_len_q   <= '0;
        desc_becn_q      <= 1'b0;
        desc_cnp_pad_q   <= 1'b0;
        desc_aeth_en_q   <= 1'b1;
        desc_aeth_q      <= {a_syndrome_q, a_msn_q};
        desc_wire_len_q  <= ack_len;
      end

      // ---- a READ response packet (docs/responder.md, rd_resp) ----
      // The QP's own headers as for a data packet of the QP; no PSN
      // write-back (the responder's PSNs are the job's), no completion.
      if (emit_rsp) begin
        desc_valid_q     <= 1'b1;
        desc_qp_q        <= qp_idx_q;
        desc_cpl_q       <= 1'b0;
        desc_dst_mac_q   <= qp_dst_mac;
        desc_src_mac_q   <= qp_src_mac;
        desc_vlan_en_q   <= qp_vlan_en;
        desc_pcp_q       <= qp_pcp;
        desc_vid_q       <= qp_vid;
        desc_ipv6_q      <= qp_ipv6;
        desc_src_ip_q    <= qp_src_ip;
        desc_dst_ip_q    <= qp_dst_ip;
        desc_dscp_q      <= qp_dscp;
        desc_ecn_q       <= qp_ecn_en ? 2'b10 : 2'b00;
        desc_udp_sport_q <= qp_udp_sport;
        desc_opcode_q    <= r_op;
        desc_se_q        <= 1'b0;
        desc_pkey_q      <= qp_pkey;
        desc_dest_qp_q   <= qp_remote_qpn;
        desc_ack_req_q   <= 1'b0;
        desc_psn_q       <= r_psn;
        desc_reth_en_q   <= 1'b0;
        desc_reth_va_q   <= '0;
        desc_reth_rkey_q <= '0;
        desc_reth_len_q  <= '0;
        desc_imm_en_q    <= 1'b0;
        desc_imm_q       <= '0;
        desc_pay_len_q   <= r_pay;
        desc_becn_q      <= 1'b0;
        desc_cnp_pad_q   <= 1'b0;
        desc_aeth_en_q   <= r_aeth;
        desc_aeth_q      <= r_aeth ? {SYN_ACK, job_msn} : 32'd0;
        desc_wire_len_q  <= rsp_len;

        rd_req_valid_q   <= r_pay != 13'd0;
        rd_req_addr_q    <= r_addr;
        rd_req_len_q     <= {4'd0, r_pay};

        job_pop_valid_q  <= r_last;
        job_pop_qp_q     <= r_last ? qp_idx_q : job_pop_qp_q;
        rmid_q[qp_idx_q] <= !r_last;
      end

      // ---- transfers ----
      if (state_q == S_OUT) begin
        desc_valid_q   <= desc_left;
        rd_req_valid_q <= rd_left;
        cpl_valid_q    <= cpl_left;
      end
    end
  end

  // The WQE in progress: no reset needed (read only while active_q is set).
  always_ff @(posedge clk) begin
    if (emit && !last) begin
      c_wr_id_q[qp_idx_q]  <= s_wr_id;
      c_opcode_q[qp_idx_q] <= s_opcode;
      c_flags_q[qp_idx_q]  <= s_flags;
      c_len_q[qp_idx_q]    <= s_len;
      c_paddr_q[qp_idx_q]  <= s_paddr + {51'd0, pay};
      c_rva_q[qp_idx_q]    <= s_rva;
      c_rkey_q[qp_idx_q]   <= s_rkey;
      c_imm_q[qp_idx_q]    <= s_imm;
      c_left_q[qp_idx_q]   <= s_left - {19'd0, pay};
      c_idx_q[qp_idx_q]    <= s_idx;
    end
  end

  // Retransmission RAMs: one write port each, registered reads at a
  // rewind's take (a0, a1, hw) or a grant (hw, rs). An anchor reported in
  // the cycle of a rewind's take of its QP is forwarded: a1_ok is set at
  // that edge, so the rewind must see the anchor, not the row it replaces
  // (which is undefined before the QP's first anchor).
  always_ff @(posedge clk) begin
    if (anc_valid) a1_mem_q[anc_qp] <= {anc_idx, anc_psn};
    if (state_q == S_CHK && !a0_ok_q[qp_idx_q]) a0_mem_q[qp_idx_q] <= {w_idx_q, qp_psn};
    if ((emit && last && s_new) || (quit && s_new)) hw_mem_q[qp_idx_q] <= s_idx + 16'd1;
    if (rw_go) rs_mem_q[qp_idx_q] <= rw_psn_q;
    if (rw_take) begin
      a0_rd_q <= a0_mem_q[rw_qp];
      a1_rd_q <= (anc_valid && anc_qp == rw_qp) ? {anc_idx, anc_psn} : a1_mem_q[rw_qp];
      hw_rd_q <= hw_mem_q[rw_qp];
    end else if (grant_take) begin
      hw_rd_q <= hw_mem_q[grant_qp];
      rs_rd_q <= rs_mem_q[grant_qp];
    end
  end

  // The head job's packets sent: one write port (a packet that is not
  // the job's last), one registered read port (read at S_CTX, n+1).
  always_ff @(posedge clk) begin
    if (emit_rsp && !r_last) rp_mem_q[qp_idx_q] <= r_k + 24'd1;
  end

  always_ff @(posedge clk) begin
    if (state_q == S_CTX) rp_rd_q <= rp_mem_q[qp_idx_q];
  end

  assign grant_ready    = grant_ready_q;
  assign job_rd_valid   = job_rd_valid_q;
  assign job_rd_qp      = job_rd_qp_q;
  assign job_pop_valid  = job_pop_valid_q;
  assign job_pop_qp     = job_pop_qp_q;
  assign ctrl_ack_first = ctrl_ack_q;
  assign req_active     = active_q;
  assign wqe_pop_valid  = wqe_pop_valid_q;
  assign wqe_pop_qp     = wqe_pop_qp_q;
  assign qp_idx         = qp_idx_q;
  assign psn_wr_valid   = psn_wr_valid_q;
  assign psn_wr_qp      = psn_wr_qp_q;
  assign psn_wr_psn     = psn_wr_psn_q;
  assign rr_valid       = rr_valid_q;
  assign rr_qp          = rr_qp_q;
  assign rr_psn         = rr_psn_q;
  assign rr_len         = rr_len_q;
  assign rr_addr        = rr_addr_q;
  assign rr_mtu         = rr_mtu_q;
  assign rr_max         = rr_max_q;
  assign err_valid      = err_valid_q;
  assign err_qp         = err_qp_q;
  assign rd_req_valid   = rd_req_valid_q;
  assign rd_req_addr    = rd_req_addr_q;
  assign rd_req_len     = rd_req_len_q;
  assign desc_valid     = desc_valid_q;
  assign desc_qp        = desc_qp_q;
  assign desc_cpl       = desc_cpl_q;
  assign desc_dst_mac   = desc_dst_mac_q;
  assign desc_src_mac   = desc_src_mac_q;
  assign desc_vlan_en   = desc_vlan_en_q;
  assign desc_pcp       = desc_pcp_q;
  assign desc_vid       = desc_vid_q;
  assign desc_ipv6      = desc_ipv6_q;
  assign desc_src_ip    = desc_src_ip_q;
  assign desc_dst_ip    = desc_dst_ip_q;
  assign desc_dscp      = desc_dscp_q;
  assign desc_ecn       = desc_ecn_q;
  assign desc_udp_sport = desc_udp_sport_q;
  assign desc_opcode    = desc_opcode_q;
  assign desc_se        = desc_se_q;
  assign desc_pkey      = desc_pkey_q;
  assign desc_becn      = desc_becn_q;
  assign desc_dest_qp   = desc_dest_qp_q;
  assign desc_ack_req   = desc_ack_req_q;
  assign desc_psn       = desc_psn_q;
  assign desc_reth_en   = desc_reth_en_q;
  assign desc_reth_va   = desc_reth_va_q;
  assign desc_reth_rkey = desc_reth_rkey_q;
  assign desc_reth_len  = desc_reth_len_q;
  assign desc_imm_en    = desc_imm_en_q;
  assign desc_imm       = desc_imm_q;
  assign desc_aeth_en   = desc_aeth_en_q;
  assign desc_aeth      = desc_aeth_q;
  assign desc_cnp_pad   = desc_cnp_pad_q;
  assign desc_pay_len   = desc_pay_len_q;
  assign desc_wire_len  = desc_wire_len_q;
  assign cpl_valid      = cpl_valid_q;
  assign cpl_wait_frame = cpl_wait_frame_q;
  assign cpl_wr_id      = cpl_wr_id_q;
  assign cpl_status     = cpl_status_q;
  assign cpl_opcode     = cpl_opcode_q;
  assign cpl_len        = cpl_len_q;
  assign cpl_imm        = cpl_imm_q;
  assign cpl_qp         = cpl_qp_q;
  assign cpl_cq         = cpl_cq_q;
  assign cpl_uc         = cpl_uc_q;
  assign cpl_psn        = cpl_psn_q;
  assign ev_prot_err    = ev_prot_err_q;
  assign ev_flush       = ev_flush_q;
  assign rw_ready       = rw_ready_q;
  assign sq_rw_valid    = sq_rw_valid_q;
  assign sq_rw_qp       = sq_rw_qp_q;
  assign sq_rw_idx      = sq_rw_idx_q;
  assign cpl_idx        = cpl_idx_q;
  assign rpl_all        = old_q;
endmodule
