// Completion-queue write-back. Model: model/src/cq_writer.rs (same register
// names).
//
// Completions from tx_engine queue in order (CPL_DEPTH entries). The head
// leaves the queue when it needs no frame (cpl_wait_frame = 0) or a
// frame_done has been counted for it: frame_done pulses go into their own
// FIFO (their error bit only) because a frame may leave before its
// completion reaches the head. The CQ's base and size come from the csr CQ
// port (registered lookup), so a popped completion waits two cycles for
// them, then goes out as one 32-byte dma_wr request (request and one data
// beat, each held until taken). wr_done pulses come back in request order;
// a small FIFO of the CQ ids sent names the CQ of each irq.
//
// Timing: head poppable at n -> cq_idx at n+1, cq_base at n+2, wr_req_valid
// and wr_data_valid at n+3; both taken at m -> next pop possible at m+1.
// wr_done_valid at n -> irq_valid / ev_cqe at n+1.
`include "rnic_assert.svh"

module cq_writer #(
  parameter int QPS       = rnic_pkg::QPS,
  parameter int CQS       = rnic_pkg::CQS,
  parameter int CPL_DEPTH = 16
) (
  input  logic                 clk,
  input  logic                 rst,
  input  logic                 cpl_valid,
  output logic                 cpl_ready,
  input  logic                 cpl_wait_frame,
  input  logic [63:0]          cpl_wr_id,
  input  logic [7:0]           cpl_status,
  input  logic [7:0]           cpl_opcode,
  input  logic [31:0]          cpl_len,
  input  logic [31:0]          cpl_imm,
  input  logic                 cpl_imm_flag,
  input  logic [23:0]          cpl_src_qp,
  input  logic [QPW-1:0]       cpl_qp,
  input  logic [CQW-1:0]       cpl_cq,
  input  logic                 frame_done_valid,
  input  logic                 frame_done_err,
  output logic [CQW-1:0]       cq_idx,
  input  logic [63:0]          cq_base,
  input  logic [4:0]           cq_log,
  output logic                 wr_req_valid,
  input  logic                 wr_req_ready,
  output logic [63:0]          wr_req_addr,
  output logic [16:0]          wr_req_len,
  output logic                 wr_data_valid,
  input  logic                 wr_data_ready,
  output logic [511:0]         wr_data,
  input  logic                 wr_done_valid,
  output logic                 irq_valid,
  output logic [CQW-1:0]       irq_cq,
  output logic                 ev_cqe
);
  localparam int QPW       = (QPS > 1) ? $clog2(QPS) : 1;
  localparam int CQW       = (CQS > 1) ? $clog2(CQS) : 1;
  localparam int FD_DEPTH  = 2 * CPL_DEPTH;
  localparam int IRQ_DEPTH = 4;
  localparam int CPL_W     = 1 + 64 + 8 + 8 + 32 + 32 + 1 + 24 + QPW + CQW;


  if (QPS < 2 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("cq_writer: QPS must be a power of two >= 2");
  end
  if (CQS < 2 || (CQS & (CQS - 1)) != 0) begin : g_bad_cqs
    $error("cq_writer: CQS must be a power of two >= 2");
  end
  if (CPL_DEPTH < 2 || (CPL_DEPTH & (CPL_DEPTH - 1)) != 0) begin : g_bad_depth
    $error("cq_writer: CPL_DEPTH must be a power of two >= 2");
  end

  typedef enum logic [1:0] {
    S_IDLE,  // waiting for a poppable head
    S_LOOK,  // cq_idx visible; csr registers the CQ entry
    S_USE,   // cq_base / cq_log visible: build the CQE
    S_SEND   // request and data beat out, waiting to be taken
  } state_e;

  // ------------------------------------------------------------------
  // FIFOs
  // ------------------------------------------------------------------
  logic             pop, fd_pop, irq_pop, irq_push, fd_in_ready_unused;
  logic             cpl_out_valid, fd_out_valid, fd_out_err, irq_in_ready, irq_out_valid;
  logic [CPL_W-1:0] cpl_out;
  logic [CQW-1:0]   irq_out;
  logic             head_wait;
  logic [63:0]      head_wr_id;
  logic [7:0]       head_status, head_opcode;
  logic [31:0]      head_len, head_imm;
  logic             head_imm_flag;
  logic [23:0]      head_src_qp;
  logic [QPW-1:0]   head_qp;
  logic [CQW-1:0]   head_cq;

  sync_fifo #(.WIDTH(CPL_W), .DEPTH(CPL_DEPTH)) u_cpl_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (cpl_valid),
    .in_ready  (cpl_ready),
    .in_data   ({cpl_wait_frame, cpl_wr_id, cpl_status, cpl_opcode, cpl_len, cpl_imm,
                 cpl_imm_flag, cpl_src_qp, cpl_qp, cpl_cq}),
    .out_valid (cpl_out_valid),
    .out_ready (pop),
    .out_data  (cpl_out)
  );
  assign {head_wait, head_wr_id, head_status, head_opcode, head_len, head_imm,
          head_imm_flag, head_src_qp, head_qp, head_cq} = cpl_out;

  sync_fifo #(.WIDTH(1), .DEPTH(FD_DEPTH), .NEVER_FULL(1'b1)) u_fd_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (frame_done_valid),
    // Never full: more entries than frames whose completion can be pending.
    .in_ready  (fd_in_ready_unused),
    .in_data   (frame_done_err),
    .out_valid (fd_out_valid),
    .out_ready (fd_pop),
    .out_data  (fd_out_err)
  );

  sync_fifo #(.WIDTH(CQW), .DEPTH(IRQ_DEPTH)) u_irq_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (irq_push),
    .in_ready  (irq_in_ready),
    .in_data   (cq_idx_q),
    .out_valid (irq_out_valid),
    .out_ready (irq_pop),
    .out_data  (irq_out)
  );

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  state_e         state_q, state_d;
  // The completion being written (status already final).
  logic [63:0]    h_wr_id_q;
  logic [7:0]     h_status_q, h_opcode_q;
  logic [31:0]    h_len_q, h_imm_q;
  logic [QPW-1:0] h_qp_q;
  logic           h_imm_flag_q;
  logic [23:0]    h_src_qp_q;
  logic [CQW-1:0] cq_idx_q;
  logic [15:0]    pi_q [CQS];
  logic           wr_req_valid_q, wr_data_valid_q;
  logic [63:0]    wr_req_addr_q;
  logic [255:0]   wr_data_q;
  logic           irq_valid_q, ev_cqe_q;
  logic [CQW-1:0] irq_cq_q;

  // ------------------------------------------------------------------
  // Next state
  // ------------------------------------------------------------------
  logic           fail;
  logic [15:0]    pi, slot;
  logic           owner;
  logic [255:0]   cqe;
  logic           req_left, data_left;

  always_comb begin
    pop      = state_q == S_IDLE && cpl_out_valid && (!head_wait || fd_out_valid)
               && irq_in_ready;
    fd_pop   = pop && head_wait;
    // A dropped frame (its payload read failed) fails the completion that
    // waited for it; an error CQE has no length.
    fail     = head_wait && fd_out_err && head_status == rnic_pkg::CQE_SUCCESS;
    irq_pop  = wr_done_valid && irq_out_valid;
    irq_push = state_q == S_USE;
  end

  // Slot and owner of the producer index: 16 bits, so for cq_log >= 16 the
  // slot is pi itself and the owner stays 1.
  always_comb begin
    pi    = pi_q[cq_idx_q];
    slot  = pi;
    owner = 1'b1;
    if (cq_log < 5'd16) begin
      slot  = pi & ((16'd1 << cq_log[3:0]) - 16'd1);
      owner = !pi[cq_log[3:0]];
    end
    // Bytes 0x00..0x1F of the CQE, byte 0 in bits 7..0.
    cqe = {40'd0, h_src_qp_q, 7'd0, owner, 7'd0, h_imm_flag_q, h_status_q, h_opcode_q,
           {(32 - QPW){1'b0}}, h_qp_q, h_imm_q, h_len_q, h_wr_id_q};
  end

  always_comb begin
    req_left  = wr_req_valid_q && !wr_req_ready;
    data_left = wr_data_valid_q && !wr_data_ready;
    state_d   = state_q;
    unique case (state_q)
      S_IDLE:  if (pop) state_d = S_LOOK;
      S_LOOK:  state_d = S_USE;
      S_USE:   state_d = S_SEND;
      S_SEND:  if (!req_left && !data_left) state_d = S_IDLE;
      default: state_d = S_IDLE;
    endcase
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      state_q         <= S_IDLE;
      h_wr_id_q       <= '0;
      h_status_q      <= '0;
      h_opcode_q      <= '0;
      h_len_q         <= '0;
      h_imm_q         <= '0;
      h_qp_q          <= '0;
      h_imm_flag_q    <= 1'b0;
      h_src_qp_q      <= '0;
      cq_idx_q        <= '0;
      for (int c = 0; c < CQS; c++) pi_q[c] <= '0;
      wr_req_valid_q  <= 1'b0;
      wr_req_addr_q   <= '0;
      wr_data_valid_q <= 1'b0;
      wr_data_q       <= '0;
      irq_valid_q     <= 1'b0;
      irq_cq_q        <= '0;
      ev_cqe_q        <= 1'b0;
    end else begin
      state_q     <= state_d;
      irq_valid_q <= irq_pop;
      irq_cq_q    <= irq_out;
      ev_cqe_q    <= irq_pop;
      if (pop) begin
        h_wr_id_q  <= head_wr_id;
        h_status_q <= fail ? rnic_pkg::CQE_GENERAL_ERR : head_status;
        h_opcode_q <= head_opcode;
        h_len_q    <= fail ? 32'd0 : head_len;
        h_imm_q    <= head_imm;
        h_qp_q     <= head_qp;
        h_imm_flag_q <= head_imm_flag;
        h_src_qp_q   <= head_src_qp;
        cq_idx_q   <= head_cq;
      end
      if (state_q == S_USE) begin
        wr_req_addr_q    <= cq_base + {43'd0, slot, 5'd0};
        wr_data_q        <= cqe;
        wr_req_valid_q   <= 1'b1;
        wr_data_valid_q  <= 1'b1;
        pi_q[cq_idx_q]   <= pi + 16'd1;
      end else if (state_q == S_SEND) begin
        wr_req_valid_q  <= req_left;
        wr_data_valid_q <= data_left;
      end
    end
  end

  assign cq_idx        = cq_idx_q;
  assign wr_req_valid  = wr_req_valid_q;
  assign wr_req_addr   = wr_req_addr_q;
  assign wr_req_len    = 17'd32;
  assign wr_data_valid = wr_data_valid_q;
  assign wr_data       = {256'd0, wr_data_q};
  assign irq_valid     = irq_valid_q;
  assign irq_cq        = irq_cq_q;
  assign ev_cqe        = ev_cqe_q;
  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  `RNIC_ASSERT_HANDSHAKE(a_cpl_hold, clk, rst, cpl_valid, cpl_ready,
                         {cpl_wait_frame, cpl_wr_id, cpl_status, cpl_opcode, cpl_len, cpl_imm,
                          cpl_imm_flag, cpl_src_qp, cpl_qp, cpl_cq})
  // dma_wr reports one wr_done per CQE write: one without a write waiting
  // for it (an irq entry) would be dropped and would end the wrong write.
  `RNIC_ASSERT_NEVER(a_wr_done_expected, clk, rst, wr_done_valid && !irq_out_valid)
endmodule
