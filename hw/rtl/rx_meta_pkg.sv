// The request metadata record: the header fields of a kept request packet
// or READ response, as rx_parser's classify stage extracts them, carried
// with the frame through rx_buf to the responder (docs/responder.md,
// "Request metadata"). The model's home for the same layout is
// model/src/rx_meta.rs.
package rx_meta_pkg;

  /* verilator lint_off UNUSEDPARAM */
  localparam int META_W = 256;

  localparam int QP_LSB        = 0;    // 8 bits: DestQP (< QPS)
  localparam int OPCODE_LSB    = 8;    // 8 bits: BTH opcode
  localparam int PSN_LSB       = 16;   // 24 bits: BTH PSN
  localparam int ACK_REQ_BIT   = 40;   // BTH AckReq
  localparam int HAS_RETH_BIT  = 41;
  localparam int HAS_IMM_BIT   = 42;
  localparam int HAS_AETH_BIT  = 43;
  localparam int HDR_LEN_LSB   = 44;   // 7 bits: frame offset of the payload
  localparam int PAY_LEN_LSB   = 51;   // 13 bits: payload bytes (saturates at 8191)
  localparam int RETH_VA_LSB   = 64;   // 64 bits
  localparam int RETH_RKEY_LSB = 128;  // 32 bits
  localparam int RETH_LEN_LSB  = 160;  // 32 bits: DMA length
  localparam int IMM_LSB       = 192;  // 32 bits: ImmDt
  localparam int AETH_LSB      = 224;  // 32 bits: syndrome 31:24, MSN 23:0
  /* verilator lint_on UNUSEDPARAM */

endpackage
