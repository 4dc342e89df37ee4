// The responder's token layout (wc_tok = 1, wc_tok_data[TOK_W]): a RECV
// completion or a READ job, bit 0 the kind; and rd_sink's READ done token
// (bit TOK_SINK_BIT set). The model's home for the same
// layout is model/src/resp_tok.rs (its table); contract: docs/responder.md,
// "responder".
package resp_pkg;

  localparam int TOK_W = 192;

  // Kind (bit 0).
  localparam logic TOK_CQE  = 1'b0;
  localparam logic TOK_READ = 1'b1;

  // RECV completion: qp 8:1, cq 16:9, wr_id 80:17, status 88:81,
  // opcode 96:89, byte_len 128:97, imm 160:129, imm present 161,
  // src_qp 185:162.
  function automatic logic [TOK_W-1:0] tok_cqe(
    input logic [7:0]  qp,
    input logic [7:0]  cq,
    input logic [63:0] wr_id,
    input logic [7:0]  status,
    input logic [7:0]  opcode,
    input logic [31:0] byte_len,
    input logic [31:0] imm,
    input logic        imm_present,
    input logic [23:0] src_qp
  );
    tok_cqe = {6'd0, src_qp, imm_present, imm, byte_len, opcode, status, wr_id, cq, qp, TOK_CQE};
  endfunction

  // READ job: qp 8:1, first PSN 32:9, bus address 96:33, length 128:97,
  // MSN 152:129, MTU code 155:153, the QP's max_dest_rd_atomic 158:156
  // (rd_resp's per-QP job limit, 0 read as 1).
  function automatic logic [TOK_W-1:0] tok_read(
    input logic [7:0]  qp,
    input logic [23:0] psn,
    input logic [63:0] addr,
    input logic [31:0] len,
    input logic [23:0] msn,
    input logic [2:0]  mtu,
    input logic [2:0]  max_rd
  );
    tok_read = {33'd0, max_rd, mtu, msn, len, addr, psn, qp, TOK_READ};
  endfunction

  // rd_sink's "READ done" token (docs/rd_sink.md): kind bit 0 = TOK_CQE,
  // bit TOK_SINK_BIT = 1, qp 8:1, the READ's LAST PSN 32:9 (psn0 + n - 1,
  // what ack_tracker matches its completion entries by), the rest 0.
  // tok_cqe and tok_read always have bit TOK_SINK_BIT = 0 (their fields
  // end at 185 and 158, the bits above are zero), so that bit alone tells
  // a READ done from the responder's tokens.
  localparam int TOK_SINK_BIT = 191;

  function automatic logic [TOK_W-1:0] tok_rdone(
    input logic [7:0]  qp,
    input logic [23:0] last_psn
  );
    tok_rdone               = '0;
    tok_rdone[TOK_SINK_BIT] = 1'b1;
    tok_rdone[32:0]         = {last_psn, qp, TOK_CQE};
  endfunction

endpackage
