// RX frame parser: classifies every frame from the MAC as PFC, CNP,
// ACK/NAK, RoCE data, or a drop with its reason (docs/rx_cc.md, section
// rx_parser). Model: model/src/rx_parser.rs (same register names).
//
// Two stages at one beat per cycle, no back-pressure:
// - beat stage (each beat, cycle n): keeps the header bytes 12..97 (beat 0
//   and the first 34 bytes of beat 1; bytes past tkeep read as zero), the
//   layout (802.1Q tag, IPv6) and the IP packet's end from beat 0, and
//   advances the ICRC's CRC register over the beat's covered bytes; on the
//   last beat it keeps the length and the FCS flag and sets fin_q;
// - classify stage (cycle n+1 when fin_q): the rule table on those
//   registers; the event registers are visible at n+2. A data frame's
//   event carries the request metadata (docs/responder.md, "Request
//   metadata"; layout rx_meta_pkg) the responder works from.
//
// ICRC: the covered bytes of a beat are a range [lo, hi) (lo = the IP
// header in beat 0, else 0; hi = the IP packet's end or 64). Bytes outside
// are zeroed, variant bytes ORed with ones, the running state XORed into
// bytes lo..lo+3 (the 8-byte 0xFF prefix's state in beat 0), and one fixed
// 512-in XOR network (crc32_pkg::crc32_d512, shared with pkt_builder)
// gives crc32_raw(0, block): leading zeros do not move a zero register. The
// register runs over the ICRC bytes too, so a good frame leaves the CRC-32
// residue, times x^(8k) for the k zeroed bytes after the IP packet's end in
// its last beat (crc32_pkg::CRC32_RESIDUE_K).
module rx_parser #(
  parameter int QPS = rnic_pkg::QPS
) (
  input  logic                   clk,
  input  logic                   rst,
  input  logic                   rx_tvalid,
  input  logic [511:0]           rx_tdata,
  input  logic [63:0]            rx_tkeep,
  input  logic                   rx_tlast,
  input  logic                   rx_tuser,
  input  logic [2*QPS-1:0]       qp_state_all,
  output logic                   pfc_valid,
  output logic [7:0]             pfc_enable,
  output logic [127:0]           pfc_quanta,
  output logic                   cnp_valid,
  output logic [$clog2(QPS)-1:0] cnp_qp,
  output logic                   data_valid,
  output logic [$clog2(QPS)-1:0] data_qp,
  output logic                   data_ce,
  output logic [255:0]           data_meta,
  output logic                   ack_valid,
  output logic [$clog2(QPS)-1:0] ack_qp,
  output logic [23:0]            ack_psn,
  output logic [7:0]             ack_syndrome,
  output logic [23:0]            ack_msn,
  output logic                   ev_frame,
  output logic                   ev_drop,
  output logic [2:0]             ev_drop_reason
);
  localparam int QPW = $clog2(QPS);
  // Header bytes kept: frame bytes 12..97 (to the ImmDt after a RETH, with
  // tag and IPv6: the longest request header).
  localparam int HDR_BYTES = 86;
  localparam int HW = 8 * HDR_BYTES;
  localparam logic [10:0] BEAT_MAX = 11'd2047;

  if (QPS < 2 || QPS > 256 || (QPS & (QPS - 1)) != 0) begin : g_bad_qps
    $error("rx_parser: QPS must be a power of two in 2..256");
  end

  localparam logic [2:0] DROP_FCS      = 3'd0;
  localparam logic [2:0] DROP_RUNT     = 3'd1;
  localparam logic [2:0] DROP_NOT_ROCE = 3'd2;
  localparam logic [2:0] DROP_TRUNC    = 3'd3;
  localparam logic [2:0] DROP_IP_CSUM  = 3'd4;
  localparam logic [2:0] DROP_ICRC     = 3'd5;
  localparam logic [2:0] DROP_OPCODE   = 3'd6;
  localparam logic [2:0] DROP_QP       = 3'd7;

  // ICRC variant bytes (read as ones), relative to the IP header's first byte.
  localparam logic [1023:0] ORM_V4 = 1024'hff00000000ffff0000000000000000000000000000ffff00ff000000000000ff00;
  localparam logic [1023:0] ORM_V6 = 1024'hff00000000ffff0000000000000000000000000000000000000000000000000000000000000000000000000000ff000000ffffff0f;

  // ---------------------------------------------------------------- state
  logic [10:0]   beat_q, beat_d;
  logic [HW-1:0] hdr_q, hdr_d;
  logic          vlan_q, vlan_d;
  logic          v6_q, v6_d;
  logic [16:0]   ip_end_q, ip_end_d;
  logic [16:0]   ip_left_q, ip_left_d;
  logic [31:0]   crc_q, crc_d;
  logic [17:0]   len_q, len_d;
  logic          fcs_q, fcs_d;
  logic          fin_q, fin_d;

  logic           pfc_valid_q, pfc_valid_d;
  logic [7:0]     pfc_enable_q, pfc_enable_d;
  logic [127:0]   pfc_quanta_q, pfc_quanta_d;
  logic           cnp_valid_q, cnp_valid_d;
  logic [QPW-1:0] cnp_qp_q, cnp_qp_d;
  logic           data_valid_q, data_valid_d;
  logic [QPW-1:0] data_qp_q, data_qp_d;
  logic           data_ce_q, data_ce_d;
  logic [255:0]   data_meta_q, data_meta_d;
  logic           ack_valid_q, ack_valid_d;
  logic [QPW-1:0] ack_qp_q, ack_qp_d;
  logic [23:0]    ack_psn_q, ack_psn_d;
  logic [7:0]     ack_syndrome_q, ack_syndrome_d;
  logic [23:0]    ack_msn_q, ack_msn_d;
  logic           ev_frame_q, ev_frame_d;
  logic           ev_drop_q, ev_drop_d;
  logic [2:0]     ev_drop_reason_q, ev_drop_reason_d;

  // ------------------------------------------------------------ beat stage
  logic [511:0] din;
  logic [6:0]   cnt;
  logic         first;
  logic         vlan0, v60;
  logic [15:0]  et0;
  logic [16:0]  ip_end0;

  always_comb begin
    cnt = '0;
    for (int j = 0; j < 64; j++) begin
      din[8*j +: 8] = rx_tdata[8*j +: 8] & {8{rx_tkeep[j]}};
      cnt           = cnt + 7'(rx_tkeep[j]);
    end
  end

  // Beat 0's layout and the IP packet's end (IPv4 total length, or IPv6
  // payload length + 40; read as IPv4 for any other EtherType, unused then).
  always_comb begin
    first   = (beat_q == '0);
    vlan0   = ({din[8*12 +: 8], din[8*13 +: 8]} == 16'h8100);
    et0     = vlan0 ? {din[8*16 +: 8], din[8*17 +: 8]} : {din[8*12 +: 8], din[8*13 +: 8]};
    v60     = (et0 == 16'h86DD);
    unique case ({vlan0, v60})
      2'b00:   ip_end0 = 17'd14 + 17'({din[8*16 +: 8], din[8*17 +: 8]});
      2'b10:   ip_end0 = 17'd18 + 17'({din[8*20 +: 8], din[8*21 +: 8]});
      2'b01:   ip_end0 = 17'd54 + 17'({din[8*18 +: 8], din[8*19 +: 8]});
      2'b11:   ip_end0 = 17'd58 + 17'({din[8*22 +: 8], din[8*23 +: 8]});
      default: ip_end0 = '0;
    endcase
  end

  // The covered range [lo, hi) of this beat, its variant-byte mask and the
  // state folded in at lo.
  logic [1023:0] orm0, orm1;
  logic [511:0]  mask, sblk, blk;
  logic [6:0]    lo, hi;
  logic [31:0]   crc_next;

  always_comb begin
    orm0 = (v60 ? ORM_V6 : ORM_V4) << (vlan0 ? 144 : 112);
    orm1 = (v6_q ? ORM_V6 : ORM_V4) << (vlan_q ? 144 : 112);
  end

  always_comb begin
    if (first) begin
      lo   = vlan0 ? 7'd18 : 7'd14;
      hi   = (ip_end0 > 17'd64) ? 7'd64 : ip_end0[6:0];
      mask = orm0[511:0];
      sblk = vlan0 ? 512'(crc32_pkg::CRC32_PREFIX) << 144 : 512'(crc32_pkg::CRC32_PREFIX) << 112;
    end else begin
      lo   = '0;
      hi   = (ip_left_q > 17'd64) ? 7'd64 : ip_left_q[6:0];
      mask = (beat_q == 11'd1) ? orm1[1023:512] : '0;
      sblk = 512'(crc_q);
    end
  end

  always_comb begin
    for (int j = 0; j < 64; j++) begin
      if (7'(j) >= lo && 7'(j) < hi) begin
        blk[8*j +: 8] = din[8*j +: 8] | mask[8*j +: 8];
      end else begin
        blk[8*j +: 8] = '0;
      end
    end
    blk = blk ^ sblk;
  end

  always_comb begin
    crc_next = crc32_pkg::crc32_d512(blk);
  end

  always_comb begin
    beat_d    = beat_q;
    hdr_d     = hdr_q;
    vlan_d    = vlan_q;
    v6_d      = v6_q;
    ip_end_d  = ip_end_q;
    ip_left_d = ip_left_q;
    crc_d     = crc_q;
    len_d     = len_q;
    fcs_d     = fcs_q;
    fin_d     = 1'b0;
    if (rx_tvalid) begin
      if (first) begin
        vlan_d    = vlan0;
        v6_d      = v60;
        ip_end_d  = ip_end0;
        ip_left_d = (ip_end0 > 17'd64) ? ip_end0 - 17'd64 : '0;
        hdr_d     = {272'b0, din[511:96]};
        crc_d     = crc_next;
      end else begin
        ip_left_d = (ip_left_q > 17'd64) ? ip_left_q - 17'd64 : '0;
        if (beat_q == 11'd1) begin
          hdr_d[HW-1 -: 272] = din[271:0];
        end
        if (ip_left_q != '0) begin
          crc_d = crc_next;
        end
      end
      if (rx_tlast) begin
        len_d  = {1'b0, beat_q, 6'b0} + 18'(cnt);
        fcs_d  = rx_tuser;
        fin_d  = 1'b1;
        beat_d = '0;
      end else begin
        beat_d = (beat_q == BEAT_MAX) ? beat_q : beat_q + 11'd1;
      end
    end
  end

  // -------------------------------------------------------- classify stage
  // hw: the header from the Ethernet type on (byte k = hw[8*k +: 8] = frame
  // byte 12 + k, + 4 with a tag), so the IP header is at hw byte 2; hu: hw
  // shifted by the IP header, so UDP is at hu byte 22 and the BTH at 30.
  logic [HW-1:0] hw, hu;

  always_comb begin
    hw = vlan_q ? hdr_q >> 32 : hdr_q;
    hu = v6_q ? hw >> 160 : hw;
  end

  logic [15:0]  et;
  logic         is_v4, is_v6, is_pfc, v4_ok, v6_ok, ip_ok, udp_ok;
  logic [7:0]   opcode;
  logic [23:0]  dqp;
  logic [4:0]   ext;
  logic [16:0]  hdr_end;
  logic         trunc;
  logic [19:0]  csum_sum;
  logic [16:0]  csum_s1;
  logic [15:0]  csum_s2;
  logic         csum_bad, icrc_bad, op_bad, qp_bad;
  logic [5:0]   pad;
  logic [31:0]  residue;
  logic [1:0]   qstate;
  logic         ecn_ce;
  logic         reth, imm, aeth;
  logic [1:0]   padcnt;

  always_comb begin
    et     = {hw[8*0 +: 8], hw[8*1 +: 8]};
    is_v4  = (et == 16'h0800);
    is_v6  = (et == 16'h86DD);
    is_pfc = (et == 16'h8808) && ({hw[8*2 +: 8], hw[8*3 +: 8]} == 16'h0101);
    v4_ok  = (hw[8*2 +: 8] == 8'h45) && (({hw[8*8 +: 8], hw[8*9 +: 8]} & 16'h3FFF) == '0)
          && (hw[8*11 +: 8] == 8'd17);
    v6_ok  = (hw[8*2 + 4 +: 4] == 4'd6) && (hw[8*8 +: 8] == 8'd17);
    ip_ok  = (is_v4 && v4_ok) || (is_v6 && v6_ok);
    udp_ok = ({hu[8*24 +: 8], hu[8*25 +: 8]} == 16'd4791);
    opcode = hu[8*30 +: 8];
    dqp    = {hu[8*35 +: 8], hu[8*36 +: 8], hu[8*37 +: 8]};
    ecn_ce = v6_q ? (hw[8*3 + 4 +: 2] == 2'd3) : (hw[8*3 + 0 +: 2] == 2'd3);
  end

  // Extension headers of the opcode (0 for an unknown one) and the end of
  // the headers it needs (BTH, extensions, ICRC).
  always_comb begin
    reth = ((opcode & 8'hDF) == 8'h06) || ((opcode & 8'hDF) == 8'h0A)
        || ((opcode & 8'hDF) == 8'h0B) || (opcode == 8'h0C);
    imm  = ((opcode & 8'hDF) == 8'h03) || ((opcode & 8'hDF) == 8'h05)
        || ((opcode & 8'hDF) == 8'h09) || ((opcode & 8'hDF) == 8'h0B);
    aeth = (opcode == 8'h0D) || (opcode == 8'h0F) || (opcode == 8'h10) || (opcode == 8'h11);
    ext  = (reth ? 5'd16 : 5'd0) + (imm ? 5'd4 : 5'd0) + (aeth ? 5'd4 : 5'd0)
         + ((opcode == 8'h81) ? 5'd16 : 5'd0);
    // BTH at 14 + 20 + 8, + 4 with a tag, + 20 with IPv6; + 12 + 4 (ICRC).
    hdr_end = 17'd58 + (vlan_q ? 17'd4 : 17'd0) + (v6_q ? 17'd20 : 17'd0) + 17'(ext);
    padcnt  = hu[8*31 + 4 +: 2];
    // The PadCnt bytes must fit between the headers and the ICRC too.
    trunc   = (hdr_end + 17'(padcnt) > ip_end_q) || (18'(ip_end_q) > len_q);
  end

  // The request metadata of a data frame (meaningful when !trunc). The
  // payload length saturates at 8191 (no RoCE MTU is above 4096: the
  // responder's length check then refuses the packet).
  logic [16:0]  pay_full;
  logic [12:0]  pay_len;
  logic [255:0] meta;

  function automatic logic [31:0] be32(logic [HW-1:0] h, int k);
    be32 = {h[8*k +: 8], h[8*(k+1) +: 8], h[8*(k+2) +: 8], h[8*(k+3) +: 8]};
  endfunction

  always_comb begin
    pay_full = ip_end_q - hdr_end - 17'(padcnt);
    pay_len  = (pay_full > 17'd8191) ? 13'd8191 : pay_full[12:0];
    meta     = '0;
    meta[rx_meta_pkg::QP_LO +: 8]       = dqp[7:0];
    meta[rx_meta_pkg::OPCODE_LO +: 8]   = opcode;
    meta[rx_meta_pkg::PSN_LO +: 24]     = {hu[8*39 +: 8], hu[8*40 +: 8], hu[8*41 +: 8]};
    meta[rx_meta_pkg::ACKREQ_LO]       = hu[8*38 + 7];
    meta[rx_meta_pkg::HAS_RETH_LO]      = reth;
    meta[rx_meta_pkg::HAS_IMM_LO]       = imm;
    meta[rx_meta_pkg::HAS_AETH_LO]      = aeth;
    meta[rx_meta_pkg::HDR_LEN_LO +: 7]  = 7'(hdr_end - 17'd4);
    meta[rx_meta_pkg::PAY_LEN_LO +: 13] = pay_len;
    if (reth) begin
      meta[rx_meta_pkg::VA_LO +: 64]   = {be32(hu, 42), be32(hu, 46)};
      meta[rx_meta_pkg::RKEY_LO +: 32] = be32(hu, 50);
      meta[rx_meta_pkg::DMA_LEN_LO +: 32]  = be32(hu, 54);
    end
    if (imm) begin
      meta[rx_meta_pkg::IMM_LO +: 32] = reth ? be32(hu, 58) : be32(hu, 42);
    end
    if (aeth) begin
      meta[rx_meta_pkg::AETH_LO +: 32] = be32(hu, 42);
    end
  end

  // IPv4 header checksum: ones'-complement sum of the ten words = 0xFFFF.
  always_comb begin
    csum_sum = '0;
    for (int k = 0; k < 10; k++) begin
      csum_sum = csum_sum + 20'({hw[8*(2 + 2*k) +: 8], hw[8*(3 + 2*k) +: 8]});
    end
    csum_s1  = 17'(csum_sum[15:0]) + 17'(csum_sum[19:16]);
    csum_s2  = csum_s1[15:0] + 16'(csum_s1[16]);
    csum_bad = is_v4 && (csum_s2 != 16'hFFFF);
  end

  always_comb begin
    pad      = 6'(17'd0 - ip_end_q);
    residue  = crc32_pkg::CRC32_RESIDUE_K[32*pad +: 32];
    icrc_bad = (crc_q != residue);
    op_bad   = !((opcode <= 8'h11) || (opcode >= 8'h20 && opcode <= 8'h2B) || (opcode == 8'h81))
            || (hu[8*31 + 0 +: 4] != 4'd0);
    qstate   = qp_state_all[2*dqp[QPW-1:0] +: 2];
    qp_bad   = (dqp >= 24'(QPS)) || (qstate == rnic_pkg::QP_RESET);
  end

  always_comb begin
    pfc_valid_d      = 1'b0;
    cnp_valid_d      = 1'b0;
    data_valid_d     = 1'b0;
    ack_valid_d      = 1'b0;
    ev_drop_d        = 1'b0;
    ev_frame_d       = fin_q;
    ev_drop_reason_d = ev_drop_reason_q;
    pfc_enable_d     = pfc_enable_q;
    pfc_quanta_d     = pfc_quanta_q;
    cnp_qp_d         = cnp_qp_q;
    data_qp_d        = data_qp_q;
    data_ce_d        = data_ce_q;
    data_meta_d      = data_meta_q;
    ack_qp_d         = ack_qp_q;
    ack_psn_d        = ack_psn_q;
    ack_syndrome_d   = ack_syndrome_q;
    ack_msn_d        = ack_msn_q;
    if (fin_q) begin
      if (fcs_q) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_FCS;
      end else if (len_q < 18'd60) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_RUNT;
      end else if (is_pfc) begin
        pfc_valid_d  = 1'b1;
        pfc_enable_d = hw[8*5 +: 8];
        for (int p = 0; p < 8; p++) begin
          pfc_quanta_d[16*p +: 16] = {hw[8*(6 + 2*p) +: 8], hw[8*(7 + 2*p) +: 8]};
        end
      end else if (!(ip_ok && udp_ok)) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_NOT_ROCE;
      end else if (trunc) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_TRUNC;
      end else if (csum_bad) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_IP_CSUM;
      end else if (icrc_bad) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_ICRC;
      end else if (op_bad) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_OPCODE;
      end else if (qp_bad) begin
        ev_drop_d        = 1'b1;
        ev_drop_reason_d = DROP_QP;
      end else if (opcode == 8'h11) begin
        ack_valid_d    = 1'b1;
        ack_qp_d       = dqp[QPW-1:0];
        ack_psn_d      = {hu[8*39 +: 8], hu[8*40 +: 8], hu[8*41 +: 8]};
        ack_syndrome_d = hu[8*42 +: 8];
        ack_msn_d      = {hu[8*43 +: 8], hu[8*44 +: 8], hu[8*45 +: 8]};
      end else if (opcode == 8'h81) begin
        cnp_valid_d = 1'b1;
        cnp_qp_d    = dqp[QPW-1:0];
      end else begin
        data_valid_d = 1'b1;
        data_qp_d    = dqp[QPW-1:0];
        data_ce_d    = ecn_ce;
        data_meta_d  = meta;
      end
    end
  end

  // Header bytes no rule reads in any layout (MAC-side fields, addresses,
  // UDP source port and length, P_Key, payload) and the masks' far halves.
  logic unused_bits;
  assign unused_bits = ^{hw, hu, orm0[1023:512], orm1[511:0]};

  always_ff @(posedge clk) begin
    if (rst) begin
      beat_q           <= '0;
      hdr_q            <= '0;
      vlan_q           <= 1'b0;
      v6_q             <= 1'b0;
      ip_end_q         <= '0;
      ip_left_q        <= '0;
      crc_q            <= '0;
      len_q            <= '0;
      fcs_q            <= 1'b0;
      fin_q            <= 1'b0;
      pfc_valid_q      <= 1'b0;
      pfc_enable_q     <= '0;
      pfc_quanta_q     <= '0;
      cnp_valid_q      <= 1'b0;
      cnp_qp_q         <= '0;
      data_valid_q     <= 1'b0;
      data_qp_q        <= '0;
      data_ce_q        <= 1'b0;
      data_meta_q      <= '0;
      ack_valid_q      <= 1'b0;
      ack_qp_q         <= '0;
      ack_psn_q        <= '0;
      ack_syndrome_q   <= '0;
      ack_msn_q        <= '0;
      ev_frame_q       <= 1'b0;
      ev_drop_q        <= 1'b0;
      ev_drop_reason_q <= '0;
    end else begin
      beat_q           <= beat_d;
      hdr_q            <= hdr_d;
      vlan_q           <= vlan_d;
      v6_q             <= v6_d;
      ip_end_q         <= ip_end_d;
      ip_left_q        <= ip_left_d;
      crc_q            <= crc_d;
      len_q            <= len_d;
      fcs_q            <= fcs_d;
      fin_q            <= fin_d;
      pfc_valid_q      <= pfc_valid_d;
      pfc_enable_q     <= pfc_enable_d;
      pfc_quanta_q     <= pfc_quanta_d;
      cnp_valid_q      <= cnp_valid_d;
      cnp_qp_q         <= cnp_qp_d;
      data_valid_q     <= data_valid_d;
      data_qp_q        <= data_qp_d;
      data_ce_q        <= data_ce_d;
      data_meta_q      <= data_meta_d;
      ack_valid_q      <= ack_valid_d;
      ack_qp_q         <= ack_qp_d;
      ack_psn_q        <= ack_psn_d;
      ack_syndrome_q   <= ack_syndrome_d;
      ack_msn_q        <= ack_msn_d;
      ev_frame_q       <= ev_frame_d;
      ev_drop_q        <= ev_drop_d;
      ev_drop_reason_q <= ev_drop_reason_d;
    end
  end

  assign pfc_valid      = pfc_valid_q;
  assign pfc_enable     = pfc_enable_q;
  assign pfc_quanta     = pfc_quanta_q;
  assign cnp_valid      = cnp_valid_q;
  assign cnp_qp         = cnp_qp_q;
  assign data_valid     = data_valid_q;
  assign data_qp        = data_qp_q;
  assign data_ce        = data_ce_q;
  assign data_meta      = data_meta_q;
  assign ack_valid      = ack_valid_q;
  assign ack_qp         = ack_qp_q;
  assign ack_psn        = ack_psn_q;
  assign ack_syndrome   = ack_syndrome_q;
  assign ack_msn        = ack_msn_q;
  assign ev_frame       = ev_frame_q;
  assign ev_drop        = ev_drop_q;
  assign ev_drop_reason = ev_drop_reason_q;
endmodule
