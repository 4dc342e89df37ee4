`include "rnic_assert.svh"

// RoCEv2 frame builder. Model: model/src/pkt_builder.rs (same register names).
//
// Descriptors queue in a FIFO; payload beats go into an inferable RAM (one
// write port, registered read). A frame starts when its descriptor is at the
// head and, if it has payload, its payload's last beat is in: store and
// forward, so a started frame never stalls. Two stages behind one enable
// adv (output register free or being taken):
//   R (slot): one slot per output beat; slot k reads the payload beat that
//     output beat k needs last (beat k, or k-1 when the header fills beat 0);
//   E (emit): header registers + the two latest payload beats realigned by
//     H mod 64, ICRC over the 64 masked bytes ending where this beat's share
//     of the ICRC input ends, ICRC insert, output register.
// ICRC: CRC-32 from all ones over FF x 8 ++ m equals the raw CRC from zero
// over 00000000 FFFFFFFF ++ m behind any number of zero bytes, so the masked
// header carries that prefix just before the IP header and zeros before it,
// and the raw CRC (crc32_pkg::crc32_d512) runs over full 64-byte blocks
// aligned to end at the ICRC.
//
// PFC: a data frame (not desc_cnp_pad) whose priority desc_pcp is paused
// (input pause, from pfc) waits in the E stage with its first slot: hold
// stops both stages, so the first beat is not loaded into the output
// register while pause[pcp] is high. This is the last decision before the
// beat becomes visible, so a pause visible at m stops every frame of that
// priority that has not become visible by m. Frames already started finish;
// CNPs are never held. The frames behind a held one wait too (one FIFO).
//
// PFC frames (from pfc_gen, docs/pfc_gen.md): a request (pfc_valid/ready,
// enable vector, 8 pause times) waits in a one-entry slot (pf_*_q; ready is
// the slot being free, registered) and leaves as one 60-byte beat (the MAC
// adds the FCS) at the next frame boundary: when the output register is
// free and the E stage holds no beat of a frame already started (empty, or
// a frame's first beat, held by PFC or not). That cycle the PFC beat takes
// the output register and both stages stop, exactly as hold does. PFC
// frames are never paused, and count neither as TX frames nor frame_done.
// With no request pending nothing changes.
module pkt_builder #(
  parameter int QPS        = rnic_pkg::QPS,
  parameter int DESC_DEPTH = 32,
  parameter int PAY_BEATS  = 256
) (
  input  logic                                clk,
  input  logic                                rst,
  input  logic                                desc_valid,
  output logic                                desc_ready,
  input  logic [(QPS > 1 ? $clog2(QPS) : 1)-1:0] desc_qp,
  input  logic                                desc_cpl,
  input  logic [47:0]                         desc_dst_mac,
  input  logic [47:0]                         desc_src_mac,
  input  logic                                desc_vlan_en,
  input  logic [2:0]                          desc_pcp,
  input  logic [11:0]                         desc_vid,
  input  logic                                desc_ipv6,
  input  logic [127:0]                        desc_src_ip,
  input  logic [127:0]                        desc_dst_ip,
  input  logic [5:0]                          desc_dscp,
  input  logic [1:0]                          desc_ecn,
  input  logic [15:0]                         desc_udp_sport,
  input  logic [7:0]                          desc_opcode,
  input  logic                                desc_se,
  input  logic [15:0]                         desc_pkey,
  input  logic                                desc_becn,
  input  logic [23:0]                         desc_dest_qp,
  input  logic                                desc_ack_req,
  input  logic [23:0]                         desc_psn,
  input  logic                                desc_reth_en,
  input  logic [63:0]                         desc_reth_va,
  input  logic [31:0]                         desc_reth_rkey,
  input  logic [31:0]                         desc_reth_len,
  input  logic                                desc_imm_en,
  input  logic [31:0]                         desc_imm,
  input  logic                                desc_aeth_en,
  input  logic [31:0]                         desc_aeth,
  input  logic                                desc_cnp_pad,
  input  logic [12:0]                         desc_pay_len,
  input  logic                                pay_valid,
  output logic                                pay_ready,
  input  logic [511:0]                        pay_data,
  input  logic                                pay_last,
  input  logic [2:0]                          pay_status,
  input  logic [7:0]                          pause,
  input  logic                                pfc_valid,
  output logic                                pfc_ready,
  input  logic [7:0]                          pfc_enable,
  input  logic [127:0]                        pfc_quanta,
  input  logic [47:0]                         pfc_src_mac,
  output logic                                tx_tvalid,
  input  logic                                tx_tready,
  output logic [511:0]                        tx_tdata,
  output logic [63:0]                         tx_tkeep,
  output logic                                tx_tlast,
  output logic                                frame_done_valid,
  output logic                                frame_done_err,
  output logic                                ev_tx_frame,
  output logic [13:0]                         ev_tx_len,
  output logic                                ev_dma_err
);
  localparam int DW   = 678;                 // descriptor FIFO entry
  localparam int PW   = $clog2(PAY_BEATS);
  localparam int DONE_DEPTH = 8;
  localparam int DNW  = $clog2(DONE_DEPTH);

  if (DESC_DEPTH < 2 || (DESC_DEPTH & (DESC_DEPTH - 1)) != 0) begin : g_bad_desc_depth
    $error("pkt_builder: DESC_DEPTH must be a power of two >= 2");
  end
  if (PAY_BEATS < 128 || (PAY_BEATS & (PAY_BEATS - 1)) != 0) begin : g_bad_pay_beats
    $error("pkt_builder: PAY_BEATS must be a power of two >= 128 (two 4096-byte packets)");
  end

  // desc_qp is part of the interface only.
  logic unused_desc_qp;
  assign unused_desc_qp = ^desc_qp;

  // ------------------------------------------------------------------
  // Descriptor FIFO and the FIFO of finished payloads (their error flag)
  // ------------------------------------------------------------------
  logic          head_v, done_v, done_err, pop_desc, pop_done, push_done;
  logic [DW-1:0] head;
  logic          done_in_ready_unused;

  sync_fifo #(.WIDTH(DW), .DEPTH(DESC_DEPTH)) u_desc_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (desc_valid),
    .in_ready  (desc_ready),
    .in_data   ({desc_cpl, desc_dst_mac, desc_src_mac, desc_vlan_en, desc_pcp, desc_vid,
                 desc_ipv6, desc_src_ip, desc_dst_ip, desc_dscp, desc_ecn, desc_udp_sport,
                 desc_opcode, desc_se, desc_pkey, desc_becn, desc_dest_qp, desc_ack_req,
                 desc_psn, desc_reth_en, desc_reth_va, desc_reth_rkey, desc_reth_len,
                 desc_imm_en, desc_imm, desc_aeth_en, desc_aeth, desc_cnp_pad, desc_pay_len}),
    .out_valid (head_v),
    .out_ready (pop_desc),
    .out_data  (head)
  );

  // pay_ready already refuses a beat when this FIFO could fill.
  sync_fifo #(.WIDTH(1), .DEPTH(DONE_DEPTH)) u_done_fifo (
    .clk       (clk),
    .rst       (rst),
    .in_valid  (push_done),
    .in_ready  (done_in_ready_unused),
    .in_data   (|pay_status),
    .out_valid (done_v),
    .out_ready (pop_done),
    .out_data  (done_err)
  );

  logic         h_cpl, h_vlan_en, h_ipv6, h_se, h_becn, h_ack_req;
  logic         h_reth_en, h_imm_en, h_aeth_en, h_cnp_pad;
  logic [47:0]  h_dst_mac, h_src_mac;
  logic [2:0]   h_pcp;
  logic [11:0]  h_vid;
  logic [127:0] h_src_ip, h_dst_ip;
  logic [5:0]   h_dscp;
  logic [1:0]   h_ecn;
  logic [15:0]  h_udp_sport, h_pkey;
  logic [7:0]   h_opcode;
  logic [23:0]  h_dest_qp, h_psn;
  logic [63:0]  h_reth_va;
  logic [31:0]  h_reth_rkey, h_reth_len, h_imm, h_aeth;
  logic [12:0]  h_pay_len;

  assign {h_cpl, h_dst_mac, h_src_mac, h_vlan_en, h_pcp, h_vid,
          h_ipv6, h_src_ip, h_dst_ip, h_dscp, h_ecn, h_udp_sport,
          h_opcode, h_se, h_pkey, h_becn, h_dest_qp, h_ack_req,
          h_psn, h_reth_en, h_reth_va, h_reth_rkey, h_reth_len,
          h_imm_en, h_imm, h_aeth_en, h_aeth, h_cnp_pad, h_pay_len} = head;

  // ------------------------------------------------------------------
  // Header builder (combinational, from the FIFO head). Built in wire
  // order (byte 0 in bits 1023:1016), then byte-reversed to lane order.
  // ------------------------------------------------------------------
  function automatic logic [1023:0] lanes(input logic [1023:0] w);
    for (int j = 0; j < 128; j++) lanes[8*j +: 8] = w[8*(127-j) +: 8];
  endfunction

  logic [1:0]    hb_pad;
  logic [5:0]    hb_ext;
  logic [15:0]   hb_udp_len;
  logic [7:0]    hb_tos;
  logic [4:0]    hb_e;        // IP header offset: 14 or 18
  logic [6:0]    hb_x;        // extension headers' offset
  logic [6:0]    hb_h;        // header length
  logic [13:0]   hb_fl;       // frame length
  logic [19:0]   hb_sum0;
  logic [15:0]   hb_csum;
  logic [95:0]   hb_bth, hb_bth_m;
  logic [63:0]   hb_udp, hb_udp_m;
  logic [143:0]  hb_eth;
  logic [479:0]  hb_ip, hb_ip_m;
  logic [191:0]  hb_ext_w;
  logic [1023:0] hb_hdr_w, hb_hdrm_w, hb_hdr, hb_hdrm;

  always_comb begin
    hb_pad     = 2'(3'd4 - {1'b0, h_pay_len[1:0]});
    hb_ext     = (h_reth_en ? 6'd16 : 6'd0) + (h_aeth_en ? 6'd4 : 6'd0)
               + (h_imm_en ? 6'd4 : 6'd0) + (h_cnp_pad ? 6'd16 : 6'd0);
    hb_udp_len = 16'd24 + {10'd0, hb_ext} + {3'd0, h_pay_len} + {14'd0, hb_pad};
    hb_tos     = {h_dscp, h_ecn};
    hb_e       = h_vlan_en ? 5'd18 : 5'd14;
    hb_x       = {2'd0, hb_e} + (h_ipv6 ? 7'd60 : 7'd40);
    hb_h       = hb_x + {1'b0, hb_ext};
    hb_fl      = {7'd0, hb_h} + {1'b0, h_pay_len} + {12'd0, hb_pad} + 14'd4;
    // IPv4 header checksum: ten words, checksum field zero, two folds.
    hb_sum0    = {4'd0, 8'h45, hb_tos} + {4'd0, hb_udp_len + 16'd20} + 20'h04000
               + 20'h04011 + {4'd0, h_src_ip[31:16]} + {4'd0, h_src_ip[15:0]}
               + {4'd0, h_dst_ip[31:16]} + {4'd0, h_dst_ip[15:0]};
  end

  logic [16:0] hb_sum1;
  always_comb begin
    hb_sum1 = {1'b0, hb_sum0[15:0]} + {13'd0, hb_sum0[19:16]};
    hb_csum = ~(hb_sum1[15:0] + {15'd0, hb_sum1[16]});
  end

  always_comb begin
    hb_eth   = h_vlan_en ? {h_dst_mac, h_src_mac, 16'h8100, h_pcp, 1'b0, h_vid,
                            h_ipv6 ? 16'h86DD : 16'h0800}
                         : {h_dst_mac, h_src_mac, h_ipv6 ? 16'h86DD : 16'h0800, 32'd0};
    hb_udp   = {h_udp_sport, 16'd4791, hb_udp_len, 16'h0000};
    hb_udp_m = {h_udp_sport, 16'd4791, hb_udp_len, 16'hFFFF};
    hb_bth   = {h_opcode, h_se, 1'b0, hb_pad, 4'h0, h_pkey, 1'b0, h_becn, 6'd0,
                h_dest_qp, h_ack_req, 7'd0, h_psn};
    hb_bth_m = {h_opcode, h_se, 1'b0, hb_pad, 4'h0, h_pkey, 8'hFF,
                h_dest_qp, h_ack_req, 7'd0, h_psn};
    if (h_ipv6) begin
      hb_ip   = {4'h6, hb_tos, 20'd0, hb_udp_len, 8'd17, 8'd64, h_src_ip, h_dst_ip,
                 hb_udp, hb_bth};
      hb_ip_m = {4'h6, 28'hFFF_FFFF, hb_udp_len, 8'd17, 8'hFF, h_src_ip, h_dst_ip,
                 hb_udp_m, hb_bth_m};
    end else begin
      hb_ip   = {8'h45, hb_tos, hb_udp_len + 16'd20, 16'd0, 16'h4000, 8'd64, 8'd17, hb_csum,
                 h_src_ip[31:0], h_dst_ip[31:0], hb_udp, hb_bth, 160'd0};
      hb_ip_m = {8'h45, 8'hFF, hb_udp_len + 16'd20, 16'd0, 16'h4000, 8'hFF, 8'd17, 16'hFFFF,
                 h_src_ip[31:0], h_dst_ip[31:0], hb_udp_m, hb_bth_m, 160'd0};
    end
    // RETH, AETH, ImmDt in InfiniBand order (the CNP pad is zeros).
    hb_ext_w = {h_reth_en ? {h_reth_va, h_reth_rkey, h_reth_len} : 128'd0, 64'd0}
             | ({h_aeth_en ? h_aeth : 32'd0, 160'd0} >> (h_reth_en ? 8'd128 : 8'd0))
             | ({h_imm_en ? h_imm : 32'd0, 160'd0}
                >> {(h_reth_en ? 3'd4 : 3'd0) + {2'd0, h_aeth_en}, 5'd0});
  end

  always_comb begin
    hb_hdr_w  = {hb_eth, 880'd0}
              | ({hb_ip, 544'd0} >> {hb_e, 3'b000})
              | ({hb_ext_w, 832'd0} >> {hb_x, 3'b000});
    hb_hdrm_w = ({64'h0000_0000_FFFF_FFFF, 960'd0} >> {hb_e - 5'd8, 3'b000})
              | ({hb_ip_m, 544'd0} >> {hb_e, 3'b000})
              | ({hb_ext_w, 832'd0} >> {hb_x, 3'b000});
    hb_hdr    = lanes(hb_hdr_w);
    hb_hdrm   = lanes(hb_hdrm_w);
  end

  // ------------------------------------------------------------------
  // Registers
  // ------------------------------------------------------------------
  logic [DNW:0]  done_n_q;
  logic [PW-1:0] wr_ptr_q, rd_ptr_q;
  logic [PW:0]   used_q;
  logic          pay_ready_q;
  logic          r_act_q;
  logic [6:0]    r_k_q, r_rd_left_q;
  logic [1023:0] f_hdr_q, f_hdrm_q;
  logic [6:0]    f_h_q;
  logic [12:0]   f_pay_len_q;
  logic [13:0]   f_fl_q;
  logic [6:0]    f_last_k_q;
  logic          f_cpl_q;
  logic [2:0]    f_pcp_q;
  logic          f_cnp_pad_q;
  logic          e_v_q, e_rd_q;
  logic [6:0]    e_k_q;
  logic [511:0]  rdata_q, p_prev_q, mprev_q;
  logic [31:0]   crc_q, icrc_q;
  logic          tx_tvalid_q, tx_tlast_q, tx_cpl_q;
  logic [511:0]  tx_tdata_q;
  logic [63:0]   tx_tkeep_q;
  logic [13:0]   tx_fl_q;
  logic          frame_done_valid_q, frame_done_err_q, ev_tx_frame_q, ev_dma_err_q;
  logic [13:0]   ev_tx_len_q;
  logic          pf_v_q, pfc_ready_q, tx_pfc_q;
  logic [7:0]    pf_en_q;
  logic [127:0]  pf_quanta_q;

  logic [511:0]  pay_ram [PAY_BEATS];

  // ------------------------------------------------------------------
  // Control: start, drop, slot issue
  // ------------------------------------------------------------------
  logic       out_free, hold, adv, head_pay, head_ok, start, drop, ren, we, tlast_xfer;
  logic       pf_take, pf_v_d, pf_in;
  logic [6:0] head_np, hb_last_k;

  always_comb begin
    out_free   = !tx_tvalid_q || tx_tready;
    // A paused data frame's first beat waits in E; both stages stop.
    hold       = e_v_q && e_k_q == 7'd0 && !f_cnp_pad_q && pause[f_pcp_q];
    // A pending PFC frame takes the output register at a frame boundary.
    pf_take    = pf_v_q && out_free && !(e_v_q && e_k_q != 7'd0);
    pf_in      = pfc_valid && pfc_ready_q;
    pf_v_d     = (pf_v_q && !pf_take) || pf_in;
    adv        = out_free && !hold && !pf_take;
    head_pay   = h_pay_len != 13'd0;
    head_ok    = head_v && (!head_pay || (done_v && !done_err));
    start      = adv && !r_act_q && head_ok;
    // A failed payload is dropped once everything before it has left, so
    // frame_done stays in descriptor order and no read is pending.
    drop       = !r_act_q && !e_v_q && !tx_tvalid_q && head_v && head_pay && done_v && done_err;
    head_np    = 7'((h_pay_len + 13'd63) >> 6);
    hb_last_k  = 7'((hb_fl - 14'd1) >> 6);
    ren        = adv && (r_act_q ? (r_rd_left_q != 7'd0)
                                 : (start && head_np != 7'd0 && !hb_h[6]));
    we         = pay_valid && pay_ready_q;
    push_done  = we && pay_last;
    pop_desc   = start || drop;
    pop_done   = (start && head_pay) || drop;
    tlast_xfer = tx_tvalid_q && tx_tready && tx_tlast_q && !tx_pfc_q;
  end

  // The PFC frame's one beat: 60 bytes in wire order, then lane order.
  function automatic logic [511:0] pfc_beat(input logic [47:0] src, input logic [7:0] en,
                                            input logic [127:0] q);
    logic [511:0] w;
    w = {48'h0180_C200_0001, src, 16'h8808, 16'h0101, 8'h00, en, 368'd0};
    for (int p = 0; p < 8; p++) w[511-144-16*p -: 16] = q[16*p +: 16];
    for (int j = 0; j < 64; j++) pfc_beat[8*j +: 8] = w[8*(63-j) +: 8];
  endfunction

  // ------------------------------------------------------------------
  // Payload RAM: one write port, registered read with enable.
  // ------------------------------------------------------------------
  always_ff @(posedge clk) begin
    if (we) pay_ram[wr_ptr_q] <= pay_data;
  end

  always_ff @(posedge clk) begin
    if (ren) rdata_q <= pay_ram[rd_ptr_q];
  end

  // ------------------------------------------------------------------
  // E stage: beat, masked beat, ICRC
  // ------------------------------------------------------------------
  function automatic logic [63:0] thermo(input logic [6:0] n);
    thermo = (n >= 7'd64) ? {64{1'b1}} : ((64'd1 << n[5:0]) - 64'd1);
  endfunction

  function automatic logic [511:0] bytes_of(input logic [63:0] m);
    for (int j = 0; j < 64; j++) bytes_of[8*j +: 8] = {8{m[j]}};
  endfunction

  // Lanes of beat k (base = 64 k) below frame byte x, clamped to 0..64.
  function automatic logic [6:0] below(input logic [13:0] x, input logic [13:0] base);
    below = (x <= base) ? 7'd0 : ((x - base >= 14'd64) ? 7'd64 : 7'(x - base));
  endfunction

  logic [13:0]   e_base;
  logic [5:0]    e_s;
  logic [6:0]    e_kicrc, e_hdr_n, e_pay_end, e_fl_end, e_sh;
  logic [1023:0] e_win;
  logic [511:0]  e_pay_al, e_hsel, e_hmsel, e_hmask, e_pmask, e_unm, e_msk;

  always_comb begin
    e_base    = {1'b0, e_k_q, 6'd0};
    e_s       = 6'(f_fl_q - 14'd4);
    e_kicrc   = 7'((f_fl_q - 14'd4) >> 6);
    e_hdr_n   = below({7'd0, f_h_q}, e_base);
    e_pay_end = below({7'd0, f_h_q} + {1'b0, f_pay_len_q}, e_base);
    e_fl_end  = below(f_fl_q, e_base);
    // A slot that read nothing (the tail) sees the last payload beat as prev.
    e_win     = e_rd_q ? {rdata_q, p_prev_q} : {512'd0, rdata_q};
    e_sh      = 7'd64 - {1'b0, f_h_q[5:0]};
    e_pay_al  = e_win[{e_sh, 3'b000} +: 512];
    e_hsel    = (e_k_q == 7'd0) ? f_hdr_q[511:0] : f_hdr_q[1023:512];
    e_hmsel   = (e_k_q == 7'd0) ? f_hdrm_q[511:0] : f_hdrm_q[1023:512];
    e_hmask   = bytes_of(thermo(e_hdr_n));
    e_pmask   = bytes_of(thermo(e_pay_end)) & ~e_hmask;
    e_unm     = (e_hsel & e_hmask) | (e_pay_al & e_pmask);
    e_msk     = (e_hmsel & e_hmask) | (e_pay_al & e_pmask);
  end

  logic [1023:0] c_win;
  logic [31:0]   c_in, c_new, c_icrc;
  logic [511:0]  e_data;

  always_comb begin
    c_win  = {e_msk, (e_k_q == 7'd0) ? 512'd0 : mprev_q};
    c_in   = (e_k_q == 7'd0) ? 32'd0 : crc_q;
    // The raw CRC from c_in over the 64 bytes: c_in folded into the block's
    // first four bytes (crc32_pkg, shared with rx_parser).
    c_new  = crc32_pkg::crc32_d512(c_win[{1'b0, e_s, 3'b000} +: 512] ^ {480'd0, c_in});
    c_icrc = ~c_new;
    if (e_k_q == e_kicrc) begin
      e_data = e_unm | ({480'd0, c_icrc} << {e_s, 3'b000});
    end else if (e_k_q == e_kicrc + 7'd1) begin
      // The ICRC bytes that did not fit in the beat before (s > 60).
      e_data = e_unm | {480'd0, icrc_q >> {7'd64 - {1'b0, e_s}, 3'b000}};
    end else begin
      e_data = e_unm;
    end
  end

  // ------------------------------------------------------------------
  // State
  // ------------------------------------------------------------------
  logic [PW:0]  used_d;
  logic [DNW:0] done_n_d;

  always_comb begin
    used_d   = used_q + {{PW{1'b0}}, we} - {{PW{1'b0}}, ren}
             - (drop ? {{(PW-6){1'b0}}, head_np} : '0);
    done_n_d = done_n_q + {{DNW{1'b0}}, push_done} - {{DNW{1'b0}}, pop_done};
  end

  always_ff @(posedge clk) begin
    if (rst) begin
      done_n_q           <= '0;
      wr_ptr_q           <= '0;
      rd_ptr_q           <= '0;
      used_q             <= '0;
      pay_ready_q        <= 1'b0;
      r_act_q            <= 1'b0;
      r_k_q              <= '0;
      r_rd_left_q        <= '0;
      f_hdr_q            <= '0;
      f_hdrm_q           <= '0;
      f_h_q              <= '0;
      f_pay_len_q        <= '0;
      f_fl_q             <= '0;
      f_last_k_q         <= '0;
      f_cpl_q            <= 1'b0;
      f_pcp_q            <= '0;
      f_cnp_pad_q        <= 1'b0;
      e_v_q              <= 1'b0;
      e_k_q              <= '0;
      e_rd_q             <= 1'b0;
      p_prev_q           <= '0;
      crc_q              <= '0;
      mprev_q            <= '0;
      icrc_q             <= '0;
      tx_tvalid_q        <= 1'b0;
      tx_tdata_q         <= '0;
      tx_tkeep_q         <= '0;
      tx_tlast_q         <= 1'b0;
      tx_fl_q            <= '0;
      tx_cpl_q           <= 1'b0;
      frame_done_valid_q <= 1'b0;
      frame_done_err_q   <= 1'b0;
      ev_tx_frame_q      <= 1'b0;
      ev_tx_len_q        <= '0;
      ev_dma_err_q       <= 1'b0;
      pf_v_q             <= 1'b0;
      pf_en_q            <= '0;
      pf_quanta_q        <= '0;
      pfc_ready_q        <= 1'b0;
      tx_pfc_q           <= 1'b0;
    end else begin
      // R stage
      if (adv) begin
        if (r_act_q) begin
          e_v_q       <= 1'b1;
          e_k_q       <= r_k_q;
          e_rd_q      <= ren;
          r_rd_left_q <= r_rd_left_q - {6'd0, ren};
          r_k_q       <= r_k_q + 7'd1;
          if (r_k_q == f_last_k_q) r_act_q <= 1'b0;
        end else if (start) begin
          e_v_q       <= 1'b1;
          e_k_q       <= '0;
          e_rd_q      <= ren;
          r_rd_left_q <= head_np - {6'd0, ren};
          r_k_q       <= 7'd1;
          r_act_q     <= hb_last_k != 7'd0;
          f_hdr_q     <= hb_hdr;
          f_hdrm_q    <= hb_hdrm;
          f_h_q       <= hb_h;
          f_pay_len_q <= h_pay_len;
          f_fl_q      <= hb_fl;
          f_last_k_q  <= hb_last_k;
          f_cpl_q     <= h_cpl;
          f_pcp_q     <= h_pcp;
          f_cnp_pad_q <= h_cnp_pad;
        end else begin
          e_v_q <= 1'b0;
        end
      end
      if (ren) p_prev_q <= rdata_q;
      if (ren) begin
        rd_ptr_q <= rd_ptr_q + 1'b1;
      end else if (drop) begin
        rd_ptr_q <= rd_ptr_q + PW'(head_np);
      end

      // E stage (held: the output register empties if its beat is taken)
      if (out_free) begin
        if (pf_take) begin
          tx_tvalid_q <= 1'b1;
          tx_tdata_q  <= pfc_beat(pfc_src_mac, pf_en_q, pf_quanta_q);
          tx_tkeep_q  <= {4'h0, {60{1'b1}}};
          tx_tlast_q  <= 1'b1;
          tx_pfc_q    <= 1'b1;
        end else if (e_v_q && !hold) begin
          tx_pfc_q    <= 1'b0;
          if (e_k_q == e_kicrc) icrc_q <= c_icrc;
          crc_q       <= c_new;
          mprev_q     <= e_msk;
          tx_tvalid_q <= 1'b1;
          tx_tdata_q  <= e_data;
          tx_tkeep_q  <= thermo(e_fl_end);
          tx_tlast_q  <= e_k_q == f_last_k_q;
          tx_fl_q     <= f_fl_q;
          tx_cpl_q    <= f_cpl_q;
        end else begin
          tx_tvalid_q <= 1'b0;
        end
      end

      // Pulses
      ev_tx_frame_q      <= tlast_xfer;
      ev_tx_len_q        <= tx_fl_q;
      frame_done_valid_q <= (tlast_xfer && tx_cpl_q) || (drop && h_cpl);
      frame_done_err_q   <= drop;
      ev_dma_err_q       <= drop;

      // PFC slot
      pf_v_q      <= pf_v_d;
      pfc_ready_q <= !pf_v_d;
      if (pf_in) begin
        pf_en_q     <= pfc_enable;
        pf_quanta_q <= pfc_quanta;
      end

      // Input side
      if (we) wr_ptr_q <= wr_ptr_q + 1'b1;
      used_q      <= used_d;
      done_n_q    <= done_n_d;
      pay_ready_q <= (used_d < (PW+1)'(PAY_BEATS)) && (done_n_d < (DNW+1)'(DONE_DEPTH));
    end
  end

  assign pay_ready        = pay_ready_q;
  assign pfc_ready        = pfc_ready_q;
  assign tx_tvalid        = tx_tvalid_q;
  assign tx_tdata         = tx_tdata_q;
  assign tx_tkeep         = tx_tkeep_q;
  assign tx_tlast         = tx_tlast_q;
  assign frame_done_valid = frame_done_valid_q;
  assign frame_done_err   = frame_done_err_q;
  assign ev_tx_frame      = ev_tx_frame_q;
  assign ev_tx_len        = ev_tx_len_q;
  assign ev_dma_err       = ev_dma_err_q;

  // Input contract of the PFC port: a request offered and not taken stays
  // offered, unchanged (pfc_gen holds its output register until taken).
  `RNIC_ASSERT_IMPORT
  `RNIC_ASSERT_HANDSHAKE(a_pfc_hold, clk, rst, pfc_valid, pfc_ready, {pfc_enable, pfc_quanta})
endmodule
