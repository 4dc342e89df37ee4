// PFC (802.1Qbb) pause timers. Model: model/src/pfc.rs (same register names).
//
// One bit-time counter per priority (26 bits: 65535 quanta * 512 bit times
// fits). A PFC frame from rx_parser (pfc_valid, a pulse) loads every enabled
// priority with quanta * 512 (a refresh replaces what was left; quanta 0
// ends the pause); otherwise each counter drops by BITS_PER_CYCLE, the link
// bits that pass in one core clock, down to 0. pause[p] is a flop: the new
// counter != 0. So a frame seen at n with quanta Q pauses from n+1 for
// exactly ceil(Q * 512 / BITS_PER_CYCLE) cycles.
module pfc #(
  parameter int BITS_PER_CYCLE = rnic_pkg::BITS_PER_CYCLE
) (
  input  logic         clk,
  input  logic         rst,
  input  logic         pfc_valid,
  input  logic [7:0]   pfc_enable,
  input  logic [127:0] pfc_quanta,
  output logic [7:0]   pause
);
  localparam int RW = 26;
  localparam logic [RW-1:0] BPC = RW'(BITS_PER_CYCLE);

  // A step of 0 never ends a pause; one above a whole maximal pause ends
  // every pause at once and needs more than RW bits.
  if (BITS_PER_CYCLE < 1 || BITS_PER_CYCLE > 512 * 65535) begin : g_bad_bpc
    $error("pfc: BITS_PER_CYCLE must be 1..512*65535");
  end

  logic [RW*8-1:0] remaining_q, remaining_d;
  logic [7:0]      pause_q, pause_d;

  always_comb begin
    remaining_d = remaining_q;
    pause_d     = pause_q;
    for (int p = 0; p < 8; p++) begin
      if (pfc_valid && pfc_enable[p]) begin
        // quanta * 512: the 16-bit quanta shifted by 9.
        remaining_d[RW*p +: RW] = {1'b0, pfc_quanta[16*p +: 16], 9'd0};
      end else if (remaining_q[RW*p +: RW] > BPC) begin
        remaining_d[RW*p +: RW] = remaining_q[RW*p +: RW] - BPC;
      end else begin
        remaining_d[RW*p +: RW] = '0;
      end
      pause_d[p] = remaining_d[RW*p +: RW] != '0;
    end
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      remaining_q <= '0;
      pause_q     <= '0;
    end else begin
      remaining_q <= remaining_d;
      pause_q     <= pause_d;
    end
  end

  assign pause = pause_q;
endmodule
