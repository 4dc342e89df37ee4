// A context table held in RAM: csr's QP, MR and CQ tables. Model: the
// tables of model/src/csr.rs (a Vec of entries; nothing here is visible at
// csr's ports that the model's plain array does not already show).
//
// One RAM per word (a column: that word of every entry), so that a table of
// hundreds of entries is block or LUT RAM rather than a flip-flop per bit
// read through a mux tree. Each column has one write port (software's MMIO
// write) and one read port per reader that needs that word; reads are
// asynchronous, like the distributed RAM it maps to (and like sync_fifo's
// out_data), and csr registers what it reads, so csr's timing is what it
// was with flip-flops: a lookup at n shows the table as it was during n.
//
// Reset: a RAM cannot be cleared in one cycle, so each entry has an
// initialised bit (flops, cleared by rst). An entry whose bit is clear reads
// as the map's reset values. Software's first write to such an entry writes
// its word and, through the other columns' write ports (idle that cycle:
// an MMIO write is one word), the reset value of every other word, and sets
// the bit. So after rst every entry reads its reset values, as the
// flip-flop table did, and no read ever sees a RAM's power-up contents.
//
// Read port p reads word w of entry rd_ent[p] when bit p*WORDS+w of
// RD_WORDS is set (otherwise that word reads 0 and no RAM port is built).
// No assertions: csr writes only words below WORDS (its decode checks), and
// no input sequence at csr's ports could break a rule here.
module ctx_table #(
  parameter int ENTRIES = 16,
  parameter int WORDS   = 3,
  // Bits of the word index software writes (the entry's stride, log2, - 2).
  parameter int WW      = 2,
  parameter int NRD     = 1,
  parameter logic [32*WORDS-1:0]  MASKS    = '1,
  parameter logic [32*WORDS-1:0]  RESETS   = '0,
  parameter logic [NRD*WORDS-1:0] RD_WORDS = '1
) (
  input  logic                        clk,
  input  logic                        rst,
  input  logic                        wr_valid,
  input  logic [$clog2(ENTRIES)-1:0]  wr_ent,
  input  logic [WW-1:0]               wr_word,
  input  logic [31:0]                 wr_data,
  input  logic [NRD*$clog2(ENTRIES)-1:0] rd_ent,
  output logic [NRD*WORDS*32-1:0]     rd_data
);
  localparam int EW = $clog2(ENTRIES);

  if (ENTRIES < 2 || (ENTRIES & (ENTRIES - 1)) != 0) begin : g_bad_entries
    $error("ctx_table: ENTRIES must be a power of two >= 2");
  end
  if (WORDS < 1 || WORDS > (1 << WW)) begin : g_bad_words
    $error("ctx_table: WORDS must fit the word index (1..2**WW)");
  end

  logic [ENTRIES-1:0] init_q;
  logic               first;  // this write initialises its entry

  assign first = !init_q[wr_ent];

  always_ff @(posedge clk) begin
    if (rst)           init_q <= '0;
    else if (wr_valid) init_q[wr_ent] <= 1'b1;
  end

  for (genvar w = 0; w < WORDS; w++) begin : g_w
    localparam logic [31:0] MASK  = MASKS[32*w +: 32];
    localparam logic [31:0] RESET = RESETS[32*w +: 32];
    logic [31:0] mem [ENTRIES];
    logic        hit;
    assign hit = wr_word == WW'(w);
    always_ff @(posedge clk) begin
      if (wr_valid && (hit || first)) mem[wr_ent] <= hit ? wr_data & MASK : RESET;
    end
    for (genvar p = 0; p < NRD; p++) begin : g_rd
      if (RD_WORDS[WORDS*p + w]) begin : g_on
        logic [EW-1:0] e;
        assign e = rd_ent[EW*p +: EW];
        assign rd_data[32*(WORDS*p + w) +: 32] = init_q[e] ? mem[e] : RESET;
      end else begin : g_off
        assign rd_data[32*(WORDS*p + w) +: 32] = '0;
      end
    end
  end
endmodule
