// Header of a memory request TLP (MRd or MWr): 3 DW below 4 GB, 4 DW above.
// Combinational; the engines register its result. Model: model/src/pcie.rs
// (mem_req_header). `len` is 1..4096 and does not cross a 4 KB boundary.
module pcie_req_hdr (
  input  logic         write,
  input  logic [63:0]  addr,
  input  logic [12:0]  len,
  input  logic [15:0]  req_id,
  input  logic [7:0]   tag,
  output logic [127:0] hdr,    // byte i on bits 8i+7:8i
  output logic         is4dw
);
  logic [63:0] last;
  logic [10:0] ndw;
  logic [3:0]  fbe, lbe;
  logic [7:0]  fmt_type;

  always_comb begin
    last  = addr + {51'd0, len} - 64'd1;
    ndw   = 11'(last[63:2] - addr[63:2]) + 11'd1;
    fbe   = 4'(4'hF << addr[1:0]);
    lbe   = 4'hF >> (2'd3 - last[1:0]);
    if (ndw == 11'd1) begin
      fbe = fbe & lbe;
      lbe = 4'h0;
    end
    is4dw = addr[63:32] != 32'd0;
    unique case ({write, is4dw})
      2'b00:   fmt_type = 8'h00;
      2'b01:   fmt_type = 8'h20;
      2'b10:   fmt_type = 8'h40;
      default: fmt_type = 8'h60;
    endcase
    hdr = '0;
    hdr[7:0]     = fmt_type;
    // Length 1024 DW is encoded as 0: the 10-bit field wraps.
    hdr[23:16]   = {6'd0, ndw[9:8]};
    hdr[31:24]   = ndw[7:0];
    hdr[39:32]   = req_id[15:8];
    hdr[47:40]   = req_id[7:0];
    hdr[55:48]   = tag;
    hdr[63:56]   = {lbe, fbe};
    if (is4dw) begin
      hdr[71:64]   = addr[63:56];
      hdr[79:72]   = addr[55:48];
      hdr[87:80]   = addr[47:40];
      hdr[95:88]   = addr[39:32];
      hdr[103:96]  = addr[31:24];
      hdr[111:104] = addr[23:16];
      hdr[119:112] = addr[15:8];
      hdr[127:120] = {addr[7:2], 2'b00};
    end else begin
      hdr[71:64]   = addr[31:24];
      hdr[79:72]   = addr[23:16];
      hdr[87:80]   = addr[15:8];
      hdr[95:88]   = {addr[7:2], 2'b00};
    end
  end
endmodule
