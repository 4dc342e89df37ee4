// Round-robin arbiter of dma_rd's read requests: client 0 (a, sq_fetch's
// WQE reads) and client 1 (b, tx_engine's payload reads). Model:
// model/src/rd_req_arb.rs (same register names).
//
// Each input has one skid entry and a registered ready (a flop that always
// equals "skid entry empty"). An accepted request goes straight to the
// output register when the output is free and its input wins; otherwise it
// waits in the skid entry. The round-robin pointer picks between the two
// inputs' heads (the skid entry if full, else the live input), so one input
// alone streams one request per cycle and two busy inputs alternate.
// Latency: input transferred at n -> visible on o_* at n+1 (output free).
module rd_req_arb (
  input  logic        clk,
  input  logic        rst,
  input  logic        a_valid,
  output logic        a_ready,
  input  logic [63:0] a_addr,
  input  logic [16:0] a_len,
  input  logic        b_valid,
  output logic        b_ready,
  input  logic [63:0] b_addr,
  input  logic [16:0] b_len,
  output logic        o_valid,
  input  logic        o_ready,
  output logic [63:0] o_addr,
  output logic [16:0] o_len,
  output logic [1:0]  o_client
);
  // Skid entries, readies, output register, round-robin pointer.
  logic        a_skid_valid_q, b_skid_valid_q;
  logic [63:0] a_skid_addr_q, b_skid_addr_q;
  logic [16:0] a_skid_len_q, b_skid_len_q;
  logic        a_ready_q, b_ready_q;
  logic        o_valid_q;
  logic [63:0] o_addr_q;
  logic [16:0] o_len_q;
  logic [1:0]  o_client_q;
  // 1: b has priority (a was granted last).
  logic        rr_q;

  logic        a_take, b_take, a_has, b_has, slot, grant_a, grant_b;
  logic [63:0] a_head_addr, b_head_addr;
  logic [16:0] a_head_len, b_head_len;

  always_comb begin
    // A transfer on an input happens only when its skid entry is empty.
    a_take      = a_valid && a_ready_q;
    b_take      = b_valid && b_ready_q;
    a_has       = a_skid_valid_q || a_take;
    b_has       = b_skid_valid_q || b_take;
    a_head_addr = a_skid_valid_q ? a_skid_addr_q : a_addr;
    a_head_len  = a_skid_valid_q ? a_skid_len_q : a_len;
    b_head_addr = b_skid_valid_q ? b_skid_addr_q : b_addr;
    b_head_len  = b_skid_valid_q ? b_skid_len_q : b_len;
    slot        = !o_valid_q || o_ready;
    grant_a     = slot && a_has && (!b_has || !rr_q);
    grant_b     = slot && b_has && (!a_has || rr_q);
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      a_skid_valid_q <= 1'b0;
      b_skid_valid_q <= 1'b0;
      a_skid_addr_q  <= '0;
      b_skid_addr_q  <= '0;
      a_skid_len_q   <= '0;
      b_skid_len_q   <= '0;
      a_ready_q      <= 1'b1;
      b_ready_q      <= 1'b1;
      o_valid_q      <= 1'b0;
      o_addr_q       <= '0;
      o_len_q        <= '0;
      o_client_q     <= '0;
      rr_q           <= 1'b0;
    end else begin
      if (grant_a) begin
        o_valid_q  <= 1'b1;
        o_addr_q   <= a_head_addr;
        o_len_q    <= a_head_len;
        o_client_q <= 2'd0;
        rr_q       <= 1'b1;
      end else if (grant_b) begin
        o_valid_q  <= 1'b1;
        o_addr_q   <= b_head_addr;
        o_len_q    <= b_head_len;
        o_client_q <= 2'd1;
        rr_q       <= 1'b0;
      end else if (o_ready) begin
        o_valid_q <= 1'b0;
      end

      // Skid a: emptied by a grant, filled by an accepted request that did
      // not go straight out (both cannot happen: no transfer while full).
      if (a_skid_valid_q && grant_a) begin
        a_skid_valid_q <= 1'b0;
        a_ready_q      <= 1'b1;
      end else if (a_take && !grant_a) begin
        a_skid_valid_q <= 1'b1;
        a_skid_addr_q  <= a_addr;
        a_skid_len_q   <= a_len;
        a_ready_q      <= 1'b0;
      end
      if (b_skid_valid_q && grant_b) begin
        b_skid_valid_q <= 1'b0;
        b_ready_q      <= 1'b1;
      end else if (b_take && !grant_b) begin
        b_skid_valid_q <= 1'b1;
        b_skid_addr_q  <= b_addr;
        b_skid_len_q   <= b_len;
        b_ready_q      <= 1'b0;
      end
    end
  end

  assign a_ready  = a_ready_q;
  assign b_ready  = b_ready_q;
  assign o_valid  = o_valid_q;
  assign o_addr   = o_addr_q;
  assign o_len    = o_len_q;
  assign o_client = o_client_q;
endmodule
