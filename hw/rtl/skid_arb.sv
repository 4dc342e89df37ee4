// N-input round-robin arbiter with one skid entry per input and a
// registered output: the shared core of rd_req_arb (single requests),
// rq_arb (multi-beat TLPs), wr_arb and cq_arb. Model: model/src/skid_arb.rs
// (same register names).
//
// Each input has one skid entry and a registered ready (a flop that always
// equals "skid entry empty"), so no ready depends on o_ready. An accepted
// item goes straight to the output register when the output is free and its
// input wins; otherwise it waits in the skid entry. The round robin picks
// among the inputs' heads (the skid entry if full, else the live input),
// starting at rr_q: after input k is granted, priority starts at k+1 (mod
// N), after reset at 0. So one input alone streams one item per cycle and a
// waiting input is passed over at most N-1 times. With PACKETS = 1, bit 0 of
// an item is its packet's last-beat flag and a grant holds from a packet's
// first beat to its last (packets are never interleaved; the round robin is
// per packet); with PACKETS = 0 every item is its own packet. Input k's item
// is in_data[k*W +: W]; o_sel names the input of the item on o_data.
// Latency: item transferred at n -> visible at n+1 (output free).
module skid_arb #(
  parameter int W       = 8,
  parameter int N       = 2,
  parameter bit PACKETS = 1'b0
) (
  input  logic                 clk,
  input  logic                 rst,
  input  logic [N-1:0]         in_valid,
  output logic [N-1:0]         in_ready,
  input  logic [N*W-1:0]       in_data,
  output logic                 o_valid,
  input  logic                 o_ready,
  output logic [W-1:0]         o_data,
  output logic [$clog2(N)-1:0] o_sel
);
  localparam int SW  = $clog2(N);
  // One bit more: rr_q + j before the wrap at N (N need not be 2^SW).
  localparam int SW1 = SW + 1;

  if (W < 1) begin : g_bad_w
    $error("skid_arb: W must be at least 1");
  end
  if (N < 2 || N > 8) begin : g_bad_n
    $error("skid_arb: N must be 2..8");
  end

  // Skid entries, readies, output register, round-robin pointer, packet lock.
  logic [N-1:0]  skid_valid_q;
  logic [W-1:0]  skid_data_q [N];
  logic [N-1:0]  in_ready_q;
  logic          o_valid_q;
  logic [W-1:0]  o_data_q;
  // The input granted last (0 after reset).
  logic [SW-1:0] o_sel_q;
  // The first input in priority order: the one after the input granted last.
  logic [SW-1:0] rr_q;
  // Inside a packet (its last beat not granted yet): only the input granted
  // last (o_sel_q) may be granted. Stays 0 when PACKETS = 0.
  logic          lock_q;

  logic [N-1:0]  take, has, grant;
  logic [W-1:0]  head [N];
  logic          slot, any;
  logic [SW-1:0] win, rr_next;
  logic [W-1:0]  win_head;
  logic [SW:0]   idx;

  always_comb begin
    // A transfer on an input happens only when its skid entry is empty.
    for (int k = 0; k < N; k++) begin
      take[k] = in_valid[k] && in_ready_q[k];
      has[k]  = skid_valid_q[k] || take[k];
      head[k] = skid_valid_q[k] ? skid_data_q[k] : in_data[k*W +: W];
    end
    slot = !o_valid_q || o_ready;
    any  = 1'b0;
    win  = o_sel_q;
    idx  = '0;
    if (lock_q) begin
      any = has[o_sel_q];
    end else begin
      // The first input with an item, from rr_q on, wrapping at N.
      for (int j = 0; j < N; j++) begin
        idx = {1'b0, rr_q} + SW1'(j);
        if (idx >= SW1'(N)) begin
          idx = idx - SW1'(N);
        end
        if (!any && has[idx[SW-1:0]]) begin
          any = 1'b1;
          win = idx[SW-1:0];
        end
      end
    end
    grant = '0;
    if (slot && any) begin
      grant[win] = 1'b1;
    end
    win_head = head[win];
    rr_next  = (win == SW'(N - 1)) ? '0 : win + 1'b1;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      skid_valid_q <= '0;
      for (int k = 0; k < N; k++) skid_data_q[k] <= '0;
      in_ready_q   <= '1;
      o_valid_q    <= 1'b0;
      o_data_q     <= '0;
      o_sel_q      <= '0;
      rr_q         <= '0;
      lock_q       <= 1'b0;
    end else begin
      if (|grant) begin
        o_valid_q <= 1'b1;
        o_data_q  <= win_head;
        o_sel_q   <= win;
        rr_q      <= rr_next;
        lock_q    <= PACKETS && !win_head[0];
      end else if (o_ready) begin
        o_valid_q <= 1'b0;
      end

      // Skid k: emptied by a grant, filled by an accepted item that did not
      // go straight out (both cannot happen: no transfer while full).
      for (int k = 0; k < N; k++) begin
        if (skid_valid_q[k] && grant[k]) begin
          skid_valid_q[k] <= 1'b0;
          in_ready_q[k]   <= 1'b1;
        end else if (take[k] && !grant[k]) begin
          skid_valid_q[k] <= 1'b1;
          skid_data_q[k]  <= in_data[k*W +: W];
          in_ready_q[k]   <= 1'b0;
        end
      end
    end
  end

  assign in_ready = in_ready_q;
  assign o_valid  = o_valid_q;
  assign o_data   = o_data_q;
  assign o_sel    = o_sel_q;
endmodule
