// Two-input round-robin arbiter with one skid entry per input and a
// registered output: the shared core of rd_req_arb (single requests) and
// rq_arb (multi-beat TLPs). Model: model/src/skid_arb.rs (same register
// names).
//
// Each input has one skid entry and a registered ready (a flop that always
// equals "skid entry empty"), so no ready depends on o_ready. An accepted
// item goes straight to the output register when the output is free and its
// input wins; otherwise it waits in the skid entry. The round-robin pointer
// picks between the two inputs' heads (the skid entry if full, else the live
// input), so one input alone streams one item per cycle and two busy inputs
// alternate. With PACKETS = 1, bit 0 of an item is its packet's last-beat
// flag and a grant holds from a packet's first beat to its last (packets are
// never interleaved; the round robin is per packet); with PACKETS = 0 every
// item is its own packet. o_sel names the input of the item on o_data
// (0: a, 1: b). Latency: item transferred at n -> visible at n+1 (output
// free).
module skid_arb #(
  parameter int W       = 8,
  parameter bit PACKETS = 1'b0
) (
  input  logic         clk,
  input  logic         rst,
  input  logic         a_valid,
  output logic         a_ready,
  input  logic [W-1:0] a_data,
  input  logic         b_valid,
  output logic         b_ready,
  input  logic [W-1:0] b_data,
  output logic         o_valid,
  input  logic         o_ready,
  output logic [W-1:0] o_data,
  output logic         o_sel
);
  if (W < 1) begin : g_bad_w
    $error("skid_arb: W must be at least 1");
  end

  // Skid entries, readies, output register, round-robin pointer, packet lock.
  logic         a_skid_valid_q, b_skid_valid_q;
  logic [W-1:0] a_skid_data_q, b_skid_data_q;
  logic         a_ready_q, b_ready_q;
  logic         o_valid_q;
  logic [W-1:0] o_data_q;
  logic         o_sel_q;
  // 1: b has priority (a was granted last).
  logic         rr_q;
  // Inside a packet (its last beat not granted yet): only the input granted
  // last (a when rr_q = 1) may be granted. Stays 0 when PACKETS = 0.
  logic         lock_q;

  logic         a_take, b_take, a_has, b_has, slot, grant_a, grant_b;
  logic [W-1:0] a_head, b_head;

  always_comb begin
    // A transfer on an input happens only when its skid entry is empty.
    a_take = a_valid && a_ready_q;
    b_take = b_valid && b_ready_q;
    a_has  = a_skid_valid_q || a_take;
    b_has  = b_skid_valid_q || b_take;
    a_head = a_skid_valid_q ? a_skid_data_q : a_data;
    b_head = b_skid_valid_q ? b_skid_data_q : b_data;
    slot   = !o_valid_q || o_ready;
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
      a_ready_q      <= 1'b1;
      b_ready_q      <= 1'b1;
      o_valid_q      <= 1'b0;
      o_data_q       <= '0;
      o_sel_q        <= 1'b0;
      rr_q           <= 1'b0;
      lock_q         <= 1'b0;
    end else begin
      if (grant_a) begin
        o_valid_q <= 1'b1;
        o_data_q  <= a_head;
        o_sel_q   <= 1'b0;
        rr_q      <= 1'b1;
        lock_q    <= PACKETS && !a_head[0];
      end else if (grant_b) begin
        o_valid_q <= 1'b1;
        o_data_q  <= b_head;
        o_sel_q   <= 1'b1;
        rr_q      <= 1'b0;
        lock_q    <= PACKETS && !b_head[0];
      end else if (o_ready) begin
        o_valid_q <= 1'b0;
      end

      // Skid a: emptied by a grant, filled by an accepted item that did not
      // go straight out (both cannot happen: no transfer while full).
      if (a_skid_valid_q && grant_a) begin
        a_skid_valid_q <= 1'b0;
        a_ready_q      <= 1'b1;
      end else if (a_take && !grant_a) begin
        a_skid_valid_q <= 1'b1;
        a_skid_data_q  <= a_data;
        a_ready_q      <= 1'b0;
      end
      if (b_skid_valid_q && grant_b) begin
        b_skid_valid_q <= 1'b0;
        b_ready_q      <= 1'b1;
      end else if (b_take && !grant_b) begin
        b_skid_valid_q <= 1'b1;
        b_skid_data_q  <= b_data;
        b_ready_q      <= 1'b0;
      end
    end
  end

  assign a_ready = a_ready_q;
  assign b_ready = b_ready_q;
  assign o_valid = o_valid_q;
  assign o_data  = o_data_q;
  assign o_sel   = o_sel_q;
endmodule
