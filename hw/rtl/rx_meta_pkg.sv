// Request metadata: the header fields rx_parser hands on with every kept
// frame (rx_parser -> rx_buf -> responder), so that no block after rx_parser
// parses a header again. Layout: docs/responder.md, "Request metadata"; the
// model's home for the same layout is model/src/rx_meta.rs. Fields a packet
// does not carry are zero.
package rx_meta_pkg;

  // Each user reads some of these, none all: the one waiver is for this
  // package's constants only.
  /* verilator lint_off UNUSEDPARAM */

  localparam int META_W = 256;

  // Offset (LSB) and width of every field.
  localparam int QP_LO      = 0;    localparam int QP_W      = 8;
  localparam int OPCODE_LO  = 8;    localparam int OPCODE_W  = 8;
  localparam int PSN_LO     = 16;   localparam int PSN_W     = 24;
  localparam int ACKREQ_LO  = 40;
  localparam int HAS_RETH_LO = 41;
  localparam int HAS_IMM_LO = 42;
  localparam int HAS_AETH_LO = 43;
  localparam int HDR_LEN_LO = 44;   localparam int HDR_LEN_W = 7;
  localparam int PAY_LEN_LO = 51;   localparam int PAY_LEN_W = 13;
  localparam int VA_LO      = 64;   localparam int VA_W      = 64;
  localparam int RKEY_LO    = 128;  localparam int RKEY_W    = 32;
  localparam int DMA_LEN_LO = 160;  localparam int DMA_LEN_W = 32;
  localparam int IMM_LO     = 192;  localparam int IMM_W     = 32;
  localparam int AETH_LO    = 224;  localparam int AETH_W    = 32;

  /* verilator lint_on UNUSEDPARAM */

endpackage
