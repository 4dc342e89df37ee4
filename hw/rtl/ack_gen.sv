// ACK/NAK generation: the responder's acknowledgements, one pending per QP,
// offered to the transmit control path. Model: model/src/ack_gen.rs (same
// register names). Contract: docs/responder.md, "ack_gen".
//
// Per QP a pending bit and a row (PSN, AETH syndrome, MSN) in a table
// indexed like a RAM. A request for QP q writes q's row and sets pending[q];
// if q was already pending, the older acknowledgement is replaced unsent
// (coalescing: the newest state of the responder is what the requester
// needs) and ev_coalesced pulses.
//
// The output register offers one acknowledgement, held until ack_ready.
// Whenever it is free (nothing offered, or the offer taken this cycle) it
// loads the first pending QP at or after the round-robin pointer, this
// cycle's request included (its values looked through), and clears that
// QP's pending bit: a request for a QP whose acknowledgement is on offer
// makes it pending again, to go after. A take moves the pointer to
// ack_qp + 1 (the round robin is rr_pick, u_rr, shared with tx_sched and
// cnp_gen). A request at n is offered at n+1 when the output is free.
module ack_gen #(
  parameter int QPS = rnic_pkg::QPS
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   req_valid,
  input  logic [$clog2(QPS)-1:0] req_qp,
  input  logic [23:0]            req_psn,
  input  logic [7:0]             req_syndrome,
  input  logic [23:0]            req_msn,
  output logic                   ack_valid,
  output logic [$clog2(QPS)-1:0] ack_qp,
  output logic [23:0]            ack_psn,
  output logic [7:0]             ack_syndrome,
  output logic [23:0]            ack_msn,
  input  logic                   ack_ready,
  output logic                   ev_ack,
  output logic                   ev_coalesced
);
  localparam int QPW = $clog2(QPS);
  localparam int ROW = 24 + 8 + 24;

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("ack_gen: QPS must be a power of two in 2..256");
  end

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic [QPS-1:0] pending_q, pending_d;
  logic [ROW-1:0] row_q [QPS];
  logic           ack_valid_q, ack_valid_d;
  logic [QPW-1:0] ack_qp_q, ack_qp_d;
  logic [ROW-1:0] ack_row_q, ack_row_d;
  logic           ev_ack_q, ev_coalesced_q;

  logic           take, load, coalesce;
  logic [QPS-1:0] pending_l;
  logic [ROW-1:0] req_row;
  logic           pick_valid;
  logic [QPW-1:0] pick_qp;

  always_comb begin
    take      = ack_valid_q && ack_ready;
    load      = !ack_valid_q || take;
    coalesce  = req_valid && pending_q[req_qp];
    req_row   = {req_psn, req_syndrome, req_msn};
    pending_l = pending_q;
    if (req_valid) pending_l[req_qp] = 1'b1;
  end

  rr_pick #(
    .N (QPS)
  ) u_rr (
    .clk        (clk),
    .rst        (rst),
    .req        (pending_l),
    .adv        (take),
    .last_idx   (ack_qp_q),
    .pick_valid (pick_valid),
    .pick_idx   (pick_qp)
  );

  always_comb begin
    pending_d   = pending_l;
    ack_valid_d = ack_valid_q;
    ack_qp_d    = ack_qp_q;
    ack_row_d   = ack_row_q;
    if (load) begin
      ack_valid_d = pick_valid;
      if (pick_valid) begin
        ack_qp_d  = pick_qp;
        ack_row_d = (req_valid && req_qp == pick_qp) ? req_row : row_q[pick_qp];
        pending_d[pick_qp] = 1'b0;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (req_valid) row_q[req_qp] <= req_row;
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      pending_q      <= '0;
      ack_valid_q    <= 1'b0;
      ack_qp_q       <= '0;
      ack_row_q      <= '0;
      ev_ack_q       <= 1'b0;
      ev_coalesced_q <= 1'b0;
    end else begin
      pending_q      <= pending_d;
      ack_valid_q    <= ack_valid_d;
      ack_qp_q       <= ack_qp_d;
      ack_row_q      <= ack_row_d;
      ev_ack_q       <= take;
      ev_coalesced_q <= coalesce;
    end
  end

  assign ack_valid    = ack_valid_q;
  assign ack_qp       = ack_qp_q;
  assign {ack_psn, ack_syndrome, ack_msn} = ack_row_q;
  assign ev_ack       = ev_ack_q;
  assign ev_coalesced = ev_coalesced_q;
endmodule
