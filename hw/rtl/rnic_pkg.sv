// One home for the numbers every block shares: the table sizes of rnic_top
// as built (the parameters' defaults), the link rate, and the encodings
// software and hardware agree on. The model's home for the same numbers is
// model/src/params.rs; the register map's is hw/csr/csr_map.txt.
package rnic_pkg;

  // Each block uses some of these, none uses all: the one waiver here is
  // for this package's constants only.
  /* verilator lint_off UNUSEDPARAM */

  // Queue pairs, memory regions (a key selects entry key mod MRS),
  // completion queues.
  localparam int QPS = 16;
  localparam int MRS = 16;
  localparam int CQS = 4;

  // Link bits per core clock cycle: 100 Gb/s at 250 MHz.
  localparam int BITS_PER_CYCLE = 400;

  // tx_sched: control grants (CNP / ACK) in a row after which a waiting
  // eligible data QP gets the next grant.
  localparam int CTRL_BURST = 8;

  // QP states. CTRL.STATE is 3 bits: these three, which are also the
  // values of the 2-bit views the transmit and receive paths get from csr,
  // and RTR and INIT, which only CTRL.STATE and the responder's ports carry.
  localparam logic [1:0] QP_RESET = 2'd0;
  localparam logic [1:0] QP_RTS   = 2'd1;
  localparam logic [1:0] QP_ERROR = 2'd2;
  localparam logic [2:0] QP_RTR   = 3'd3;
  localparam logic [2:0] QP_INIT  = 3'd4;

  // WQE opcodes (byte 8 of the WQE).
  localparam logic [7:0] WQE_SEND      = 8'd0;
  localparam logic [7:0] WQE_SEND_IMM  = 8'd1;
  localparam logic [7:0] WQE_WRITE     = 8'd2;
  localparam logic [7:0] WQE_WRITE_IMM = 8'd3;
  localparam logic [7:0] WQE_READ      = 8'd4;

  // CQE opcodes (ibv_wc_opcode numbering, docs/protocol.md section 6). A
  // requester's CQE names the operation (SEND and SEND with immediate are
  // both SEND); WC_INVALID, no ibv code, is the opcode of the error CQE of
  // a WQE whose opcode names no operation (bit 7 clear: every opcode with
  // bit 7 set is a receive completion's).
  localparam logic [7:0] WC_SEND               = 8'd0;
  localparam logic [7:0] WC_RDMA_WRITE         = 8'd1;
  localparam logic [7:0] WC_RDMA_READ          = 8'd2;
  localparam logic [7:0] WC_RECV               = 8'd128;
  localparam logic [7:0] WC_RECV_RDMA_WITH_IMM = 8'd129;
  localparam logic [7:0] WC_INVALID            = 8'h7F;

  function automatic logic [7:0] wc_opcode(input logic [7:0] wqe_opcode);
    unique case (wqe_opcode)
      WQE_SEND, WQE_SEND_IMM:   wc_opcode = WC_SEND;
      WQE_WRITE, WQE_WRITE_IMM: wc_opcode = WC_RDMA_WRITE;
      WQE_READ:                 wc_opcode = WC_RDMA_READ;
      default:                  wc_opcode = WC_INVALID;
    endcase
  endfunction

  // CQE status (ibv_wc_status numbering).
  localparam logic [7:0] CQE_SUCCESS       = 8'd0;
  localparam logic [7:0] CQE_LOC_LEN_ERR   = 8'd1;
  localparam logic [7:0] CQE_LOC_QP_OP_ERR = 8'd2;
  localparam logic [7:0] CQE_LOC_PROT_ERR  = 8'd4;
  localparam logic [7:0] CQE_WR_FLUSH_ERR  = 8'd5;
  // A requester's WQE the responder NAKed: invalid request, remote access
  // error, remote operational error (AETH NAK codes 1, 2, 3).
  localparam logic [7:0] CQE_REM_INV_REQ_ERR = 8'd9;
  localparam logic [7:0] CQE_REM_ACCESS_ERR  = 8'd10;
  localparam logic [7:0] CQE_REM_OP_ERR      = 8'd11;
  // Retries exhausted (retx_ctl): retry_cnt after timeouts and sequence
  // NAKs, rnr_retry after RNR NAKs (docs/protocol.md section 8).
  localparam logic [7:0] CQE_RETRY_EXC_ERR     = 8'd12;
  localparam logic [7:0] CQE_RNR_RETRY_EXC_ERR = 8'd13;
  localparam logic [7:0] CQE_GENERAL_ERR   = 8'd21;

  // BTH opcodes rnic_top tells apart (docs/protocol.md section 1): RC READ
  // RESPONSE FIRST..ONLY (0x0D..0x10) and ACKNOWLEDGE.
  localparam logic [7:0] BTH_RC_RD_RESP_FIRST = 8'h0D;
  localparam logic [7:0] BTH_RC_RD_RESP_ONLY  = 8'h10;
  localparam logic [7:0] BTH_RC_ACK           = 8'h11;

  // AETH syndromes the responder sends (docs/protocol.md section 7): ACK
  // with the credit field 0x1F (no credits advertised: this NIC's
  // requesters and responders use no end-to-end credits), RNR NAK (timer
  // code in bits 4:0), and the NAKs: PSN sequence error, invalid request,
  // remote access error, remote operational error.
  localparam logic [7:0] AETH_ACK     = 8'h1F;
  localparam logic [7:0] AETH_RNR     = 8'h20;
  localparam logic [7:0] AETH_NAK_SEQ = 8'h60;
  localparam logic [7:0] AETH_NAK_INV = 8'h61;
  localparam logic [7:0] AETH_NAK_ACC = 8'h62;
  localparam logic [7:0] AETH_NAK_OP  = 8'h63;

  /* verilator lint_on UNUSEDPARAM */

  // An RNR NAK's timer code (AETH bits 4:0) as a wait in units of 10 us
  // (docs/protocol.md section 8: the milliseconds / 0.01); code 0 is the
  // longest, 655.36 ms. The model's copy is params::rnr_timer_units.
  function automatic logic [16:0] rnr_timer_units(input logic [4:0] code);
    unique case (code)
      5'd0:  rnr_timer_units = 17'd65536;
      5'd1:  rnr_timer_units = 17'd1;
      5'd2:  rnr_timer_units = 17'd2;
      5'd3:  rnr_timer_units = 17'd3;
      5'd4:  rnr_timer_units = 17'd4;
      5'd5:  rnr_timer_units = 17'd6;
      5'd6:  rnr_timer_units = 17'd8;
      5'd7:  rnr_timer_units = 17'd12;
      5'd8:  rnr_timer_units = 17'd16;
      5'd9:  rnr_timer_units = 17'd24;
      5'd10: rnr_timer_units = 17'd32;
      5'd11: rnr_timer_units = 17'd48;
      5'd12: rnr_timer_units = 17'd64;
      5'd13: rnr_timer_units = 17'd96;
      5'd14: rnr_timer_units = 17'd128;
      5'd15: rnr_timer_units = 17'd192;
      5'd16: rnr_timer_units = 17'd256;
      5'd17: rnr_timer_units = 17'd384;
      5'd18: rnr_timer_units = 17'd512;
      5'd19: rnr_timer_units = 17'd768;
      5'd20: rnr_timer_units = 17'd1024;
      5'd21: rnr_timer_units = 17'd1536;
      5'd22: rnr_timer_units = 17'd2048;
      5'd23: rnr_timer_units = 17'd3072;
      5'd24: rnr_timer_units = 17'd4096;
      5'd25: rnr_timer_units = 17'd6144;
      5'd26: rnr_timer_units = 17'd8192;
      5'd27: rnr_timer_units = 17'd12288;
      5'd28: rnr_timer_units = 17'd16384;
      5'd29: rnr_timer_units = 17'd24576;
      5'd30: rnr_timer_units = 17'd32768;
      default: rnr_timer_units = 17'd49152;
    endcase
  endfunction

endpackage
