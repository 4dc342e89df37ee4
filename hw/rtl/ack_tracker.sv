// RC completions wait for their ACK. Model: model/src/ack_tracker.rs (same
// register names). Contract: docs/rx_cc.md, "ack_tracker".
//
// UC completions (cpl_uc) pass through a FIFO in arrival order. RC ones
// (success, error, flush) queue per QP in order; a QP's head may leave when
// it is an error / flush, or a success whose last PSN is before the QP's
// oldest unacknowledged PSN (una).
//
// Per QP the tracker keeps the requester's window [una, nxt): the PSNs sent
// and not yet acknowledged. A software write of the QP's PSN (psn_set_*)
// restarts it empty at that PSN; every request packet tx_engine commits
// (snd_*, its PSN write-back) moves nxt to the PSN after it (a READ's whole
// response span at once). An ACK with PSN p is taken when p is in
// [una, nxt - 1] (una := p + 1), a duplicate when p is 1 .. 2^23 - 1 before
// una, and otherwise (a PSN never sent, 2^23 ahead included) ignored and
// counted (ev_ack_invalid); a NAK / RNR NAK counts as ev_nak when its PSN is
// in [una, nxt], else as ev_ack_invalid. All modulo 2^24.
//
// Remote-error NAKs (syndrome 0x61 invalid request, 0x62 remote access
// error, 0x63 remote operational error) in [una, nxt] of a QP not in error
// mode also acknowledge every PSN before theirs (una := p) and put the QP in
// error mode (err_q, err_st_q = 9 / 10 / 11) with an err_valid / err_qp pulse
// for csr: from then on its head is always ready; a success the QP's una
// does not cover (a READ success never is) leaves with err_st_q and length 0,
// and err_st_q becomes 5 (flushed) for every later one. una no longer moves
// (ACKs are counted but acknowledge nothing). A restart (psn_set) clears
// error mode. Decided at stage A: an entry selected before the NAK keeps its
// status.
//
// READ done (rd_done_*: a READ of the QP with that last PSN has its data in
// host memory) is an implicit ACK of its PSN l, judged the same way: in
// [una, nxt - 1] una := l + 1 (unless an ACK of the QP in the same cycle goes
// further, or a remote-error NAK / restart of the QP wins); behind una it
// moves nothing; either way it clears m_rd_q of every entry of the QP whose
// last PSN is at or before l (a completion pushed in that cycle too), so the
// READ leaves as a normal success (ev_rd_done). Ahead: ev_ack_invalid. In
// error mode or with a restart of the QP in the cycle it is only counted.
// An ACK frame never releases a READ.
//
// READ progress (rd_prog_*: a response of a READ, not its last, accepted in
// order) is an implicit ACK of its PSN r and nothing else: in [una, nxt - 1]
// of a QP not in error mode, restarted or NAKed in the cycle, una := r + 1
// when that is further than an ACK or READ done of the QP in the same cycle
// moves it. So una is the first READ response missing, and a local ACK
// timeout asks for the rest of the READ, not all of it (protocol.md 8).
//
// Retransmission (docs/retransmission.md): a sequence-error NAK (0x60) or
// an RNR NAK (001 ttttt) of p in [una, nxt] of a QP not in error mode and
// not restarted acknowledges every PSN before p (una := p) and goes out on
// nak_* the cycle after. A report (snd_*) moves nxt forward only, so a
// re-sent packet leaves it. una_all / busy are the window's registers.
// xerr_* (retx_ctl: retries exhausted) is held in one register (xerr_ready
// low while it is) and puts the QP in error mode with its status (12 / 13)
// in the next cycle with no remote-error NAK, with an err_valid pulse;
// dropped if the QP is in error mode already or restarted. A success
// leaving stage B (not turned) reports the anchor: anc_idx = its SQ index
// (cpl_idx, kept in a second RAM) + 1, anc_psn = its last PSN + 1.
//
// Storage: the RC entries' bulk fields in one RAM (QPS * DEPTH entries at
// qp * DEPTH + slot, one write port, registered read); every entry's last
// PSN and success bit in flops (every QP's head is looked at each cycle);
// per-QP head / tail pointers of DW + 1 bits. UC FIFO: DEPTH entries, flops.
// una is in flops too (every head is compared with it every cycle); nxt is
// read at one index (ack_qp) and written at two (snd_qp, psn_set_qp), kept
// in flops with a reset so that a QP never configured has the empty window
// [0, 0). Error mode: err_q and err_st_q (1 + 4 bits per QP), flops with a
// reset. Per-QP and per-entry flops are flattened vectors (QP q's pointer
// at [PW*q +: PW]) so that Yosys keeps them as registers, not memories.
//
// Pipeline: stage A selects the UC FIFO's head if any, else the first ready
// RC head at or after rr_q (rr_q then moves past it), reading the RAM into
// rd_data_q (or copying the UC head to b_uc_data_q); stage B moves to the
// out_* registers when they are empty or taken.
//
// Timing: completion transferred at n, nothing ahead, PSN covered -> out_*
// at n+3; an ACK at n covering a waiting head -> out_* at n+3; ev_* at n+1.
// The window an ACK at n is judged against is the one after cycle n-1's
// updates (a packet reported at n is not yet sent for it).
// cpl_ready: while a completion waits untaken, room in its own queue; else
// room in every queue. full[q]: QP q's queue holds DEPTH - 2 or more.
`include "rnic_assert.svh"

module ack_tracker #(
  parameter int QPS   = rnic_pkg::QPS,
  parameter int CQS   = rnic_pkg::CQS,
  parameter int DEPTH = 8
) (
  input  logic                 clk,
  input  logic                 rst,
  input  logic                 cpl_valid,
  output logic                 cpl_ready,
  input  logic                 cpl_wait_frame,
  input  logic [63:0]          cpl_wr_id,
  input  logic [7:0]           cpl_status,
  input  logic [7:0]           cpl_opcode,
  input  logic [31:0]          cpl_len,
  input  logic [31:0]          cpl_imm,
  input  logic [QPW-1:0]       cpl_qp,
  input  logic [CQW-1:0]       cpl_cq,
  input  logic                 cpl_uc,
  input  logic [23:0]          cpl_psn,
  // The WQE's send-queue index (retransmission's anchor; RC entries only).
  input  logic [15:0]          cpl_idx,
  input  logic                 ack_valid,
  input  logic [QPW-1:0]       ack_qp,
  input  logic [23:0]          ack_psn,
  input  logic [7:0]           ack_syndrome,
  input  logic                 snd_valid,
  input  logic [QPW-1:0]       snd_qp,
  input  logic [23:0]          snd_nxt,
  input  logic                 psn_set_valid,
  input  logic [QPW-1:0]       psn_set_qp,
  input  logic [23:0]          psn_set_psn,
  // A READ of QP rd_done_qp whose last PSN is rd_done_psn has all its
  // response data in host memory (rd_sink's token, after rx_wr).
  input  logic                 rd_done_valid,
  input  logic [QPW-1:0]       rd_done_qp,
  input  logic [23:0]          rd_done_psn,
  // A READ response of QP rd_prog_qp with PSN rd_prog_psn, not its READ's
  // last, was accepted in order (rd_sink's prog_*).
  input  logic                 rd_prog_valid,
  input  logic [QPW-1:0]       rd_prog_qp,
  input  logic [23:0]          rd_prog_psn,
  output logic                 out_valid,
  input  logic                 out_ready,
  output logic                 out_wait_frame,
  output logic [63:0]          out_wr_id,
  output logic [7:0]           out_status,
  output logic [7:0]           out_opcode,
  output logic [31:0]          out_len,
  output logic [31:0]          out_imm,
  output logic [QPW-1:0]       out_qp,
  output logic [CQW-1:0]       out_cq,
  output logic [QPS-1:0]       full,
  output logic                 ev_ack,
  output logic                 ev_nak,
  output logic                 ev_dup,
  output logic                 ev_ack_invalid,
  // A remote-error NAK put QP err_qp in error mode (csr moves it to ERROR).
  output logic                 err_valid,
  output logic [QPW-1:0]       err_qp,
  // An rd_done naming a PSN its QP sent (in [una, nxt) or behind una).
  output logic                 ev_rd_done,
  // A sequence-error or RNR NAK taken in the window (una moved to its PSN):
  // retx_ctl decides the rewind (docs/retransmission.md).
  output logic                 nak_valid,
  output logic [QPW-1:0]       nak_qp,
  output logic [23:0]          nak_psn,
  output logic                 nak_rnr,
  output logic [4:0]           nak_timer,
  // The window per QP: una (QP q's at [24*q +: 24]) and una != nxt.
  output logic [24*QPS-1:0]    una_all,
  output logic [QPS-1:0]       busy,
  // Retries exhausted (retx_ctl): error mode with status 12 / 13.
  input  logic                 xerr_valid,
  output logic                 xerr_ready,
  input  logic [QPW-1:0]       xerr_qp,
  input  logic [7:0]           xerr_status,
  // A success left: the anchor moves past it (the next WQE's SQ index and
  // first PSN).
  // Error mode per QP (err_q): tx_engine ends a WQE in progress of a QP in
  // ERROR with the completion error mode turns (docs/retransmission.md).
  output logic [QPS-1:0]       err_mode,
  output logic                 anc_valid,
  output logic [QPW-1:0]       anc_qp,
  output logic [15:0]          anc_idx,
  output logic [23:0]          anc_psn
);
  localparam int QPW = (QPS > 1) ? $clog2(QPS) : 1;
  localparam int CQW = (CQS > 1) ? $clog2(CQS) : 1;
  localparam int DW  = (DEPTH > 1) ? $clog2(DEPTH) : 1;
  localparam int N   = QPS * DEPTH;
  localparam int AW  = QPW + DW;
  localparam int PW  = DW + 1;   // pointer / count width
  // RAM entry: wait_frame, wr_id, status, opcode, len, imm, cq.
  localparam int EW  = 1 + 64 + 8 + 8 + 32 + 32 + CQW;
  // UC entry: the same and the QP.
  localparam int UW  = EW + QPW;
  // Where an entry's length and status are.
  localparam int E_LEN = CQW + 32;
  localparam int E_ST  = CQW + 72;
  // Completion status of a success turned by a remote-error NAK: 8 + the
  // NAK code (9 invalid request, 10 remote access, 11 remote operational
  // error), or flushed for the ones after it.
  localparam logic [3:0] ST_FLUSH = 4'(rnic_pkg::CQE_WR_FLUSH_ERR);

  if (QPS < 2 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("ack_tracker: QPS must be a power of two >= 2");
  end
  if (CQS < 2 || (CQS & (CQS - 1)) != 0) begin : g_bad_cqs
    $error("ack_tracker: CQS must be a power of two >= 2");
  end
  if (DEPTH < 4 || (DEPTH & (DEPTH - 1)) != 0) begin : g_bad_depth
    $error("ack_tracker: DEPTH must be a power of two >= 4");
  end

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic           cpl_ready_q;
  logic [UW-1:0]  uc_mem_q [DEPTH];
  logic [DW:0]    uc_wr_q, uc_rd_q, uc_cnt_q;
  logic [EW-1:0]  mem_q [N];      // the RAM
  logic [24*N-1:0]   m_psn_q;
  logic [N-1:0]      m_ok_q;
  // A successful RDMA READ whose data is not known to be in yet: it is not
  // ready (and holds its QP's queue) until an rd_done covering its last PSN
  // clears the bit; an ACK never does.
  logic [N-1:0]      m_rd_q;
  logic [PW*QPS-1:0] head_q, tail_q;
  // The window [una, nxt) per QP, QP q's at [24*q +: 24].
  logic [24*QPS-1:0] una_q, nxt_q;
  // Error mode per QP (a remote-error NAK taken) and the status the next
  // uncovered success gets, QP q's at [4*q +: 4].
  logic [QPS-1:0]    err_q;
  logic [4*QPS-1:0]  err_st_q;
  logic [QPW-1:0] rr_q;
  logic [EW-1:0]  rd_data_q;      // the RAM's read register
  logic           b_valid_q, b_uc_q;
  logic [QPW-1:0] b_qp_q;
  // Stage B's RC entry is a success turned into b_st_q (length 0).
  logic           b_err_q;
  logic [3:0]     b_st_q;
  logic [UW-1:0]  b_uc_data_q;
  logic           out_valid_q;
  logic [UW-1:0]  out_q;
  logic [QPS-1:0] full_q;
  logic           ev_ack_q, ev_nak_q, ev_dup_q, ev_ack_invalid_q;
  logic           err_valid_q;
  logic [QPW-1:0] err_qp_q;
  logic           ev_rd_done_q;
  // Retransmission: each RC entry's SQ index (a second RAM at the same
  // address, written with the first), stage B's index and last PSN, the
  // NAK report, busy, a pending exhaustion, the anchor report.
  logic [15:0]    idx_mem_q [N];
  logic [15:0]    b_idx_q;
  logic [23:0]    b_psn_q;
  logic           nak_valid_q, nak_rnr_q;
  logic [QPW-1:0] nak_qp_q;
  logic [23:0]    nak_psn_q;
  logic [4:0]     nak_timer_q;
  logic [QPS-1:0] busy_q;
  logic           xp_valid_q;
  logic [QPW-1:0] xp_qp_q;
  logic [3:0]     xp_st_q;
  logic           anc_valid_q;
  logic [QPW-1:0] anc_qp_q;
  logic [15:0]    anc_idx_q;
  logic [23:0]    anc_psn_q;

  // ------------------------------------------------------------------
  // Head readiness per QP
  // ------------------------------------------------------------------
  logic [QPS-1:0] rdy, cvt;

  // Per QP: its DEPTH entries' PSN / success flops (a constant slice), the
  // head's picked by the head pointer. cvt: the head is a success that
  // leaves with the error mode's status.
  for (genvar g = 0; g < QPS; g++) begin : g_head
    logic [24*DEPTH-1:0] psns;
    logic [DEPTH-1:0]    oks, rds;
    logic [DW-1:0]       slot;
    logic [23:0]         d;   // last acknowledged PSN (una - 1) - the head's last PSN
    logic                cov; // a success covered by una (never a READ)
    always_comb begin
      psns   = m_psn_q[24*DEPTH*g +: 24*DEPTH];
      oks    = m_ok_q[DEPTH*g +: DEPTH];
      rds    = m_rd_q[DEPTH*g +: DEPTH];
      slot   = head_q[PW*g +: DW];
      d      = una_q[24*g +: 24] - 24'd1 - psns[24*slot +: 24];
      // A success covered: (una - 1 - l) mod 2^24 < 2^23.
      cov    = !rds[slot] && d < 24'h80_0000;
      // An error / flush, a success covered, or anything in error mode.
      rdy[g] = (tail_q[PW*g +: PW] != head_q[PW*g +: PW]) && (!oks[slot] || cov || err_q[g]);
      cvt[g] = err_q[g] && oks[slot] && !cov;
    end
  end

  // ------------------------------------------------------------------
  // Selection: UC first, then round robin over the ready RC heads
  // ------------------------------------------------------------------
  logic           out_free, b_move, a_go, uc_avail, rc_any, a_uc, a_rc;
  logic [QPW-1:0] rc_sel;

  always_comb begin
    rc_any = 1'b0;
    rc_sel = '0;
    // Downwards, so that the last hit is the first QP from rr_q.
    for (int k = QPS - 1; k >= 0; k--) begin
      if (rdy[rr_q + k[QPW-1:0]]) begin
        rc_any = 1'b1;
        rc_sel = rr_q + k[QPW-1:0];
      end
    end
  end

  always_comb begin
    out_free = !out_valid_q || out_ready;
    b_move   = b_valid_q && out_free;
    a_go     = !b_valid_q || b_move;
    uc_avail = uc_cnt_q != '0;
    a_uc     = a_go && uc_avail;
    a_rc     = a_go && !uc_avail && rc_any;
  end

  // ------------------------------------------------------------------
  // This cycle's completion and ACK
  // ------------------------------------------------------------------
  logic          push, push_uc, push_rc;
  logic [EW-1:0] e;
  logic [AW-1:0] wr_addr, rd_addr;
  logic [2:0]    syn;
  logic [23:0]   una_a, off_a, win_a;
  logic          is_ack, is_nak, in_win, in_nak, behind, ack_take;
  logic          is_rerr, set_eff, nak_take, a_cvt, is_gbn, gbn_take, x_apply;
  logic [23:0]   snd_d;
  logic          snd_fwd;
  // Statuses 12 and 13 fit the 4-bit error-mode status.
  logic          xerr_st_unused;
  assign xerr_st_unused = ^xerr_status[7:4];
  logic [23:0]   una_r, off_r, win_r, rel_push_d;
  logic          rd_in_win, rd_behind, rd_ok, rd_eff, rd_over, rel_push;
  logic [23:0]   una_p, off_p, win_p;
  logic          pg_eff;

  always_comb begin
    push    = cpl_valid && cpl_ready_q;
    push_uc = push && cpl_uc;
    push_rc = push && !cpl_uc;
    e       = {cpl_wait_frame, cpl_wr_id, cpl_status, cpl_opcode, cpl_len, cpl_imm, cpl_cq};
    wr_addr = {cpl_qp, tail_q[PW*cpl_qp +: DW]};
    rd_addr = {rc_sel, head_q[PW*rc_sel +: DW]};
    syn     = ack_syndrome[7:5];
    is_ack  = ack_valid && syn == 3'b000;
    is_nak  = ack_valid && (syn == 3'b011 || syn == 3'b001);
    // NAK codes 1, 2, 3: invalid request, remote access, remote operational.
    is_rerr = ack_valid && syn == 3'b011 && ack_syndrome[4:0] >= 5'd1 && ack_syndrome[4:0] <= 5'd3;
    // The ACK against its QP's window: how far p is past una, and how many
    // PSNs are outstanding.
    una_a   = una_q[24*ack_qp +: 24];
    off_a   = ack_psn - una_a;
    win_a   = nxt_q[24*ack_qp +: 24] - una_a;
    in_win  = off_a < win_a;          // p in [una, nxt - 1]
    in_nak  = off_a <= win_a;         // p in [una, nxt]
    // p 1 .. 2^23 - 1 before una: off in 2^23 + 1 .. 2^24 - 1. Exactly
    // 2^23 either way is not before una: never sent, ignored.
    behind  = off_a > 24'h80_0000;
    ack_take = is_ack && in_win;
    // A restart that takes effect (a report of its QP in the cycle drops it).
    set_eff = psn_set_valid && !(snd_valid && snd_qp == psn_set_qp);
    // A remote-error NAK in [una, nxt] of a QP not in error mode and not
    // restarted in this cycle.
    nak_take = is_rerr && in_nak && !err_q[ack_qp] && !(set_eff && psn_set_qp == ack_qp);
    // A sequence-error NAK (011 00000) or an RNR NAK (001 ttttt) in [una,
    // nxt] of a QP not in error mode and not restarted: everything before
    // p is acknowledged, and retx_ctl hears of it.
    is_gbn   = ack_valid && ((syn == 3'b011 && ack_syndrome[4:0] == 5'd0) || syn == 3'b001);
    gbn_take = is_gbn && in_nak && !err_q[ack_qp] && !(set_eff && psn_set_qp == ack_qp);
    // A pending exhaustion takes effect in a cycle with no remote-error NAK
    // (one err pulse a cycle; it waits one cycle behind one), unless its
    // QP is in error mode already or restarted now (then it is dropped).
    x_apply  = xp_valid_q && !nak_take && !err_q[xp_qp_q] && !(set_eff && psn_set_qp == xp_qp_q);
    // A report moves nxt forward only: a re-sent packet's report (PSNs
    // before nxt) leaves it, so ACKs of PSNs sent before a rewind still
    // count.
    snd_d    = snd_nxt - nxt_q[24*snd_qp +: 24];
    snd_fwd  = snd_d != 24'd0 && snd_d < 24'h80_0000;
    // Stage A takes a success that leaves with the error mode's status.
    a_cvt = a_rc && cvt[rc_sel];
    // READ done with last PSN l, judged like an ACK of l against the
    // window before this cycle: in [una, nxt - 1] it acknowledges up to l;
    // behind una (1 .. 2^23 - 1 PSNs) it moves nothing but still releases
    // (an ACK frame may overtake a READ's data); else invalid.
    una_r     = una_q[24*rd_done_qp +: 24];
    off_r     = rd_done_psn - una_r;
    win_r     = nxt_q[24*rd_done_qp +: 24] - una_r;
    rd_in_win = off_r < win_r;
    rd_behind = off_r > 24'h80_0000;
    rd_ok     = rd_done_valid && (rd_in_win || rd_behind);
    // Takes effect unless the QP is in error mode or restarted now.
    rd_eff    = rd_ok && !err_q[rd_done_qp] && !(set_eff && psn_set_qp == rd_done_qp);
    // It moves una unless an ACK of the same QP in this cycle goes further
    // (a remote-error NAK or a restart of the QP wins, below).
    rd_over   = rd_eff && rd_in_win &&
                !(ack_take && !err_q[ack_qp] && ack_qp == rd_done_qp && off_a >= off_r);
    // A READ completion pushed now whose last PSN l covers is released too.
    rel_push_d = rd_done_psn - cpl_psn;
    rel_push  = rd_eff && rd_done_qp == cpl_qp && rel_push_d < 24'h80_0000;
    // A READ response's implicit ACK of r: in [una, nxt - 1] of a QP not in
    // error mode, not restarted and not NAKed in this cycle, it moves una
    // to r + 1 if that is further than the ACK or READ done of the QP in
    // this cycle goes (below). Otherwise nothing, not even a count.
    una_p  = una_q[24*rd_prog_qp +: 24];
    off_p  = rd_prog_psn - una_p;
    win_p  = nxt_q[24*rd_prog_qp +: 24] - una_p;
    pg_eff = rd_prog_valid && off_p < win_p && !err_q[rd_prog_qp] &&
             !(set_eff && psn_set_qp == rd_prog_qp) &&
             !((nak_take || gbn_take) && ack_qp == rd_prog_qp);
  end

  // ------------------------------------------------------------------
  // Counts after this cycle: full and cpl_ready
  // ------------------------------------------------------------------
  logic [PW*QPS-1:0] head_n, tail_n, cnt_n;
  logic [DW:0]    uc_cnt_n;
  logic [QPS-1:0] full_d;
  logic           rc_room, all_room, cpl_ready_d;

  always_comb begin
    rc_room = 1'b1;
    for (int q = 0; q < QPS; q++) begin
      head_n[PW*q +: PW] = head_q[PW*q +: PW] + {{DW{1'b0}}, a_rc && rc_sel == q[QPW-1:0]};
      tail_n[PW*q +: PW] = tail_q[PW*q +: PW] + {{DW{1'b0}}, push_rc && cpl_qp == q[QPW-1:0]};
      cnt_n[PW*q +: PW]  = tail_n[PW*q +: PW] - head_n[PW*q +: PW];
      full_d[q] = cnt_n[PW*q +: PW] >= PW'(DEPTH - 2);
      if (cnt_n[PW*q +: PW] == PW'(DEPTH)) rc_room = 1'b0;
    end
  end

  always_comb begin
    uc_cnt_n = uc_cnt_q + {{DW{1'b0}}, push_uc} - {{DW{1'b0}}, a_uc};
    all_room = rc_room && uc_cnt_n != PW'(DEPTH);
    // A completion offered and not taken is offered again: it needs room
    // in its own queue; otherwise the next one may go anywhere.
    if (cpl_valid && !push) begin
      cpl_ready_d = cpl_uc ? uc_cnt_n != PW'(DEPTH) : cnt_n[PW*cpl_qp +: PW] != PW'(DEPTH);
    end else begin
      cpl_ready_d = all_room;
    end
  end

  // ------------------------------------------------------------------
  // The windows after this cycle
  // ------------------------------------------------------------------
  // A packet's report wins over a software restart of its QP in the same
  // cycle (as in csr, where psn_wr wins over the MMIO write); a restart
  // wins over an ACK or NAK (and ends error mode). In error mode una stays
  // where the NAK put it.
  logic [24*QPS-1:0] una_n, nxt_n;
  logic [QPS-1:0]    busy_n;
  always_comb begin
    una_n = una_q;
    nxt_n = nxt_q;
    for (int q = 0; q < QPS; q++) begin
      if (snd_valid && snd_qp == q[QPW-1:0]) begin
        if (snd_fwd) nxt_n[24*q +: 24] = snd_nxt;
      end else if (psn_set_valid && psn_set_qp == q[QPW-1:0]) begin
        nxt_n[24*q +: 24] = psn_set_psn;
      end
      if (set_eff && psn_set_qp == q[QPW-1:0]) begin
        una_n[24*q +: 24] = psn_set_psn;
      end else if ((nak_take || gbn_take) && ack_qp == q[QPW-1:0]) begin
        una_n[24*q +: 24] = ack_psn;
      end else if (rd_over && rd_done_qp == q[QPW-1:0]) begin
        una_n[24*q +: 24] = rd_done_psn + 24'd1;
      end else if (ack_take && !err_q[q] && ack_qp == q[QPW-1:0]) begin
        una_n[24*q +: 24] = ack_psn + 24'd1;
      end
      // off_p + 1 <= win_p < 2^24: no wrap; una_n - una_q is 0 or how far
      // the ACK or READ done moved it.
      if (pg_eff && rd_prog_qp == q[QPW-1:0] &&
          off_p + 24'd1 > una_n[24*q +: 24] - una_q[24*q +: 24]) begin
        una_n[24*q +: 24] = rd_prog_psn + 24'd1;
      end
      busy_n[q] = una_n[24*q +: 24] != nxt_n[24*q +: 24];
    end
  end

  // Stage B's RC entry; a success turned by error mode has its status and
  // length 0 (the CQE's length of every error and flush).
  logic [EW-1:0] rc_out;
  always_comb begin
    rc_out = rd_data_q;
    if (b_err_q) begin
      rc_out[E_ST +: 8]   = {4'd0, b_st_q};
      rc_out[E_LEN +: 32] = '0;
    end
  end

  // ------------------------------------------------------------------
  // RAM: one write port, registered read
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (push_rc) mem_q[wr_addr] <= e;
    if (a_rc) rd_data_q <= mem_q[rd_addr];
    if (push_rc) idx_mem_q[wr_addr] <= cpl_idx;
    if (a_rc) b_idx_q <= idx_mem_q[rd_addr];
  end

  // Per-entry PSN / success (one write enable per entry) and the UC FIFO:
  // no reset needed (read only while counted).
  // An rd_done of QP q with last PSN l releases every READ entry of q
  // whose last PSN is at or up to 2^23 - 1 before l (slots outside the
  // queue too: harmless, a push rewrites the bit).
  for (genvar k = 0; k < N; k++) begin : g_meta
    logic [23:0] dr;
    assign dr = rd_done_psn - m_psn_q[24*k +: 24];
    always_ff @(posedge clk) begin
      if (push_rc && wr_addr == AW'(k)) begin
        m_psn_q[24*k +: 24] <= cpl_psn;
        m_ok_q[k]           <= cpl_status == rnic_pkg::CQE_SUCCESS;
        m_rd_q[k]           <= cpl_opcode == rnic_pkg::WC_RDMA_READ && !rel_push;
      end else if (rd_eff && rd_done_qp == QPW'(k / DEPTH) && dr < 24'h80_0000) begin
        m_rd_q[k]           <= 1'b0;
      end
    end
  end

  always_ff @(posedge clk) begin
    if (push_uc) uc_mem_q[uc_wr_q[DW-1:0]] <= {e, cpl_qp};
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      cpl_ready_q <= 1'b0;
      uc_wr_q     <= '0;
      uc_rd_q     <= '0;
      uc_cnt_q    <= '0;
      head_q      <= '0;
      tail_q      <= '0;
      una_q       <= '0;
      nxt_q       <= '0;
      err_q       <= '0;
      err_st_q    <= '0;
      rr_q        <= '0;
      b_valid_q   <= 1'b0;
      b_uc_q      <= 1'b0;
      b_qp_q      <= '0;
      b_err_q     <= 1'b0;
      b_st_q      <= '0;
      b_uc_data_q <= '0;
      out_valid_q <= 1'b0;
      out_q       <= '0;
      full_q      <= '0;
      ev_ack_q    <= 1'b0;
      ev_nak_q    <= 1'b0;
      ev_dup_q    <= 1'b0;
      ev_ack_invalid_q <= 1'b0;
      err_valid_q <= 1'b0;
      err_qp_q    <= '0;
      ev_rd_done_q <= 1'b0;
      b_psn_q     <= '0;
      nak_valid_q <= 1'b0;
      nak_qp_q    <= '0;
      nak_psn_q   <= '0;
      nak_rnr_q   <= 1'b0;
      nak_timer_q <= '0;
      busy_q      <= '0;
      xp_valid_q  <= 1'b0;
      xp_qp_q     <= '0;
      xp_st_q     <= '0;
      anc_valid_q <= 1'b0;
      anc_qp_q    <= '0;
      anc_idx_q   <= '0;
      anc_psn_q   <= '0;
    end else begin
      cpl_ready_q <= cpl_ready_d;
      full_q      <= full_d;
      head_q      <= head_n;
      tail_q      <= tail_n;
      uc_cnt_q <= uc_cnt_n;
      if (push_uc) uc_wr_q <= uc_wr_q + 1'b1;
      if (a_uc) uc_rd_q <= uc_rd_q + 1'b1;
      if (a_rc) rr_q <= rc_sel + 1'b1;

      // ---- ACK / NAK ----
      ev_ack_q <= ack_take;
      ev_dup_q <= is_ack && !in_win && behind;
      // NAK (011) and RNR NAK (001) inside [una, nxt]: counted only;
      // reserved syndromes: nothing.
      ev_nak_q <= is_nak && in_nak;
      // An ACK / NAK and an rd_done both invalid in one cycle: one pulse.
      ev_ack_invalid_q <= (is_ack && !in_win && !behind) || (is_nak && !in_nak) ||
                          (rd_done_valid && !rd_ok);
      ev_rd_done_q <= rd_ok;
      err_valid_q <= nak_take || x_apply;
      err_qp_q    <= x_apply ? xp_qp_q : ack_qp;
      // ---- retransmission reports ----
      nak_valid_q <= gbn_take;
      nak_qp_q    <= ack_qp;
      nak_psn_q   <= ack_psn;
      nak_rnr_q   <= syn == 3'b001;
      nak_timer_q <= ack_syndrome[4:0];
      // One exhaustion held at a time; it waits only behind a remote-error
      // NAK of another QP.
      // (Applied, or dropped: its QP is in error mode or restarted.)
      if (xp_valid_q) begin
        if (!nak_take) xp_valid_q <= 1'b0;
      end else if (xerr_valid) begin
        xp_valid_q <= 1'b1;
        xp_qp_q    <= xerr_qp;
        xp_st_q    <= xerr_status[3:0];
      end

      // ---- the windows ----
      // A packet's report wins over a software restart of its QP in the
      // same cycle (as in csr, where psn_wr wins over the MMIO write); a
      // restart wins over an ACK or NAK (and ends error mode). In error
      // mode una stays where the NAK put it.
      una_q  <= una_n;
      nxt_q  <= nxt_n;
      busy_q <= busy_n;
      for (int q = 0; q < QPS; q++) begin
        // ---- error mode ----
        // (nak_take needs the QP out of error mode, a_cvt in it: never both.)
        if (set_eff && psn_set_qp == q[QPW-1:0]) begin
          err_q[q] <= 1'b0;
        end else if (nak_take && ack_qp == q[QPW-1:0]) begin
          err_q[q] <= 1'b1;
          unique case (ack_syndrome[1:0])
            2'd1:    err_st_q[4*q +: 4] <= 4'(rnic_pkg::CQE_REM_INV_REQ_ERR);
            2'd2:    err_st_q[4*q +: 4] <= 4'(rnic_pkg::CQE_REM_ACCESS_ERR);
            default: err_st_q[4*q +: 4] <= 4'(rnic_pkg::CQE_REM_OP_ERR);
          endcase
        end
        if (x_apply && xp_qp_q == q[QPW-1:0]) begin
          err_q[q]           <= 1'b1;
          err_st_q[4*q +: 4] <= xp_st_q;
        end
        if (a_cvt && rc_sel == q[QPW-1:0]) begin
          err_st_q[4*q +: 4] <= ST_FLUSH;
        end
      end

      // ---- the anchor: a success leaving moves it past its WQE ----
      anc_valid_q <= b_move && !b_uc_q && !b_err_q && rd_data_q[E_ST +: 8] == rnic_pkg::CQE_SUCCESS;
      if (b_move) begin
        anc_qp_q  <= b_qp_q;
        anc_idx_q <= b_idx_q + 16'd1;
        anc_psn_q <= b_psn_q + 24'd1;
      end

      // ---- output register ----
      if (b_move) begin
        out_valid_q <= 1'b1;
        out_q       <= b_uc_q ? b_uc_data_q : {rc_out, b_qp_q};
      end else if (out_ready) begin
        out_valid_q <= 1'b0;
      end

      // ---- stage A -> B ----
      if (a_uc) begin
        b_valid_q   <= 1'b1;
        b_uc_q      <= 1'b1;
        b_uc_data_q <= uc_mem_q[uc_rd_q[DW-1:0]];
      end else if (a_rc) begin
        b_valid_q <= 1'b1;
        b_uc_q    <= 1'b0;
        b_qp_q    <= rc_sel;
        b_psn_q   <= m_psn_q[24*rd_addr +: 24];
        b_err_q   <= cvt[rc_sel];
        b_st_q    <= err_st_q[4*rc_sel +: 4];
      end else if (b_move) begin
        b_valid_q <= 1'b0;
      end
    end
  end

  assign cpl_ready      = cpl_ready_q;
  assign out_valid      = out_valid_q;
  assign {out_wait_frame, out_wr_id, out_status, out_opcode, out_len, out_imm, out_cq,
          out_qp}       = out_q;
  assign full           = full_q;
  assign ev_ack         = ev_ack_q;
  assign ev_nak         = ev_nak_q;
  assign ev_dup         = ev_dup_q;
  assign ev_ack_invalid = ev_ack_invalid_q;
  assign err_valid      = err_valid_q;
  assign err_qp         = err_qp_q;
  assign ev_rd_done     = ev_rd_done_q;
  assign nak_valid      = nak_valid_q;
  assign nak_qp         = nak_qp_q;
  assign nak_psn        = nak_psn_q;
  assign nak_rnr        = nak_rnr_q;
  assign nak_timer      = nak_timer_q;
  assign una_all        = una_q;
  assign busy           = busy_q;
  assign xerr_ready     = !xp_valid_q;
  assign err_mode       = err_q;
  assign anc_valid      = anc_valid_q;
  assign anc_qp         = anc_qp_q;
  assign anc_idx        = anc_idx_q;
  assign anc_psn        = anc_psn_q;
  // ------------------------------------------------------------------
  // Assertions (simulation only; rnic_assert.svh)
  // ------------------------------------------------------------------
  `RNIC_ASSERT_IMPORT

  `RNIC_ASSERT_HANDSHAKE(a_cpl_hold, clk, rst, cpl_valid, cpl_ready,
                         {cpl_wait_frame, cpl_wr_id, cpl_status, cpl_opcode, cpl_len, cpl_imm,
                          cpl_qp, cpl_cq, cpl_uc, cpl_psn})
  `RNIC_ASSERT_HANDSHAKE(a_xerr_hold, clk, rst, xerr_valid, xerr_ready, {xerr_qp, xerr_status})
  // Only a success is turned by error mode: the success flop that decided
  // (m_ok_q) and the status the RAM gives back are of the same entry.
  `RNIC_ASSERT_NEVER(a_cvt_success, clk, rst,
                     b_valid_q && !b_uc_q && b_err_q && rd_data_q[E_ST +: 8] != rnic_pkg::CQE_SUCCESS)
endmodule
