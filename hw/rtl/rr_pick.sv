// Round-robin picker over N requesters: the shared core of tx_sched (QPs
// with work) and cnp_gen (QPs with a CNP pending). Model:
// model/src/rr_pick.rs (same register names).
//
// The pointer ptr_q is the first requester to look at. When adv is set (the
// caller's grant of last_idx was taken this cycle) the pointer moves to
// last_idx + 1, and the pick of this same cycle already starts from the
// moved pointer (ptr_d), so a taken requester is not named again while
// others wait. pick_idx is the first requester in req at or after ptr_d;
// with no requester, pick_valid = 0 and pick_idx = last_idx (the callers'
// output registers then hold their index). Combinational from the inputs
// to the pick; the callers register it.
module rr_pick #(
  parameter int N = 16
) (
  input  logic                 clk,
  input  logic                 rst,
  input  logic [N-1:0]         req,
  input  logic                 adv,
  input  logic [$clog2(N)-1:0] last_idx,
  output logic                 pick_valid,
  output logic [$clog2(N)-1:0] pick_idx
);
  localparam int NW = $clog2(N);

  if (N < 2 || (N & (N - 1)) != 0) begin : g_bad_n
    $error("rr_pick: N must be a power of two, at least 2");
  end

  logic [NW-1:0] ptr_q, ptr_d;

  always_comb begin
    ptr_d      = adv ? last_idx + NW'(1) : ptr_q;
    pick_valid = 1'b0;
    pick_idx   = last_idx;
    for (int k = 0; k < N; k++) begin
      if (!pick_valid && req[ptr_d + NW'(k)]) begin
        pick_valid = 1'b1;
        pick_idx   = ptr_d + NW'(k);
      end
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      ptr_q <= '0;
    end else begin
      ptr_q <= ptr_d;
    end
  end
endmodule
