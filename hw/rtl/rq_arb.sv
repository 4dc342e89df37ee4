// Round-robin arbiter of the PCIe requester stream: dma_rd's MRd TLPs (a)
// and dma_wr's MWr TLPs (b) onto rq_*. A grant holds from a TLP's first beat
// to its eop beat, so TLPs are never interleaved; the round robin is per TLP.
// Model: model/src/rq_arb.rs (same register names).
//
// Each input has one skid entry and a registered ready (a flop that always
// equals "skid entry empty"). An accepted request goes straight to the
// output register when the output is free and its input wins; otherwise it
// waits in the skid entry. The round-robin pointer picks between the two
// inputs' heads (the skid entry if full, else the live input) at TLP starts,
// so one input alone streams one beat per cycle and two busy inputs
// alternate TLP by TLP. Latency: beat transferred at n -> visible on o_* at
// n+1 (output free).
module rq_arb (
  input  logic         clk,
  input  logic         rst,
  input  logic         a_valid,
  output logic         a_ready,
  input  logic [511:0] a_data,
  input  logic [63:0]  a_keep,
  input  logic         a_sop,
  input  logic         a_eop,
  input  logic         b_valid,
  output logic         b_ready,
  input  logic [511:0] b_data,
  input  logic [63:0]  b_keep,
  input  logic         b_sop,
  input  logic         b_eop,
  output logic         o_valid,
  input  logic         o_ready,
  output logic [511:0] o_data,
  output logic [63:0]  o_keep,
  output logic         o_sop,
  output logic         o_eop
);
  // Skid entries (a beat with its keep, sop and eop), readies, output
  // register, round-robin pointer, packet lock.
  logic         a_skid_valid_q, b_skid_valid_q;
  logic [511:0] a_skid_data_q, b_skid_data_q;
  logic [63:0]  a_skid_keep_q, b_skid_keep_q;
  logic         a_skid_sop_q, b_skid_sop_q, a_skid_eop_q, b_skid_eop_q;
  logic         a_ready_q, b_ready_q;
  logic         o_valid_q;
  logic [511:0] o_data_q;
  logic [63:0]  o_keep_q;
  logic         o_sop_q, o_eop_q;
  // 1: b has priority (a was granted last).
  logic         rr_q;
  // Inside a TLP (its eop not granted yet): only the input granted last
  // (a when rr_q = 1) may be granted.
  logic         lock_q;

  logic         a_take, b_take, a_has, b_has, slot, grant_a, grant_b;
  logic [511:0] a_head_data, b_head_data;
  logic [63:0]  a_head_keep, b_head_keep;
  logic         a_head_sop, b_head_sop, a_head_eop, b_head_eop;

  always_comb begin
    // A transfer on an input happens only when its skid entry is empty.
    a_take      = a_valid && a_ready_q;
    b_take      = b_valid && b_ready_q;
    a_has       = a_skid_valid_q || a_take;
    b_has       = b_skid_valid_q || b_take;
    a_head_data = a_skid_valid_q ? a_skid_data_q : a_data;
    a_head_keep = a_skid_valid_q ? a_skid_keep_q : a_keep;
    a_head_sop  = a_skid_valid_q ? a_skid_sop_q : a_sop;
    a_head_eop  = a_skid_valid_q ? a_skid_eop_q : a_eop;
    b_head_data = b_skid_valid_q ? b_skid_data_q : b_data;
    b_head_keep = b_skid_valid_q ? b_skid_keep_q : b_keep;
    b_head_sop  = b_skid_valid_q ? b_skid_sop_q : b_sop;
    b_head_eop  = b_skid_valid_q ? b_skid_eop_q : b_eop;
    slot        = !o_valid_q || o_ready;
    if (lock_q) begin
      grant_a = slot && a_has && rr_q;
      grant_b = slot && b_has && !rr_q;
    end else begin
      grant_a = slot && a_has && (!b_has || !rr_q);
      grant_b = slot && b_has && (!a_has || rr_q);
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      a_skid_valid_q <= 1'b0;
      b_skid_valid_q <= 1'b0;
      a_skid_data_q  <= '0;
      b_skid_data_q  <= '0;
      a_skid_keep_q  <= '0;
      b_skid_keep_q  <= '0;
      a_skid_sop_q   <= 1'b0;
      b_skid_sop_q   <= 1'b0;
      a_skid_eop_q   <= 1'b0;
      b_skid_eop_q   <= 1'b0;
      a_ready_q      <= 1'b1;
      b_ready_q      <= 1'b1;
      o_valid_q      <= 1'b0;
      o_data_q       <= '0;
      o_keep_q       <= '0;
      o_sop_q        <= 1'b0;
      o_eop_q        <= 1'b0;
      rr_q           <= 1'b0;
      lock_q         <= 1'b0;
    end else begin
      if (grant_a) begin
        o_valid_q <= 1'b1;
        o_data_q  <= a_head_data;
        o_keep_q  <= a_head_keep;
        o_sop_q   <= a_head_sop;
        o_eop_q   <= a_head_eop;
        rr_q      <= 1'b1;
        lock_q    <= !a_head_eop;
      end else if (grant_b) begin
        o_valid_q <= 1'b1;
        o_data_q  <= b_head_data;
        o_keep_q  <= b_head_keep;
        o_sop_q   <= b_head_sop;
        o_eop_q   <= b_head_eop;
        rr_q      <= 1'b0;
        lock_q    <= !b_head_eop;
      end else if (o_ready) begin
        o_valid_q <= 1'b0;
      end

      // Skid a: emptied by a grant, filled by an accepted beat that did not
      // go straight out (both cannot happen: no transfer while full).
      if (a_skid_valid_q && grant_a) begin
        a_skid_valid_q <= 1'b0;
        a_ready_q      <= 1'b1;
      end else if (a_take && !grant_a) begin
        a_skid_valid_q <= 1'b1;
        a_skid_data_q  <= a_data;
        a_skid_keep_q  <= a_keep;
        a_skid_sop_q   <= a_sop;
        a_skid_eop_q   <= a_eop;
        a_ready_q      <= 1'b0;
      end
      if (b_skid_valid_q && grant_b) begin
        b_skid_valid_q <= 1'b0;
        b_ready_q      <= 1'b1;
      end else if (b_take && !grant_b) begin
        b_skid_valid_q <= 1'b1;
        b_skid_data_q  <= b_data;
        b_skid_keep_q  <= b_keep;
        b_skid_sop_q   <= b_sop;
        b_skid_eop_q   <= b_eop;
        b_ready_q      <= 1'b0;
      end
    end
  end

  assign a_ready = a_ready_q;
  assign b_ready = b_ready_q;
  assign o_valid = o_valid_q;
  assign o_data  = o_data_q;
  assign o_keep  = o_keep_q;
  assign o_sop   = o_sop_q;
  assign o_eop   = o_eop_q;
endmodule
