//! `pkt_builder`: RoCEv2 frame builder. Model of `hw/rtl/pkt_builder.sv`.
//!
//! Descriptors queue in a FIFO; payload beats go into a 256-beat RAM (one
//! write port, registered read). A frame starts when its descriptor is at
//! the head and (if it has payload) its payload's last beat is in, so it
//! never stalls once started. Two pipeline stages behind a single enable
//! `adv` (output register free or being taken):
//! - R (slot): one slot per output beat; slot `k` of a frame reads the
//!   payload beat that output beat `k` needs last (payload beat `k`, or
//!   `k - 1` when the header fills beat 0 entirely, H >= 64);
//! - E (emit): builds the beat from the frame's header registers and the
//!   two latest payload beats (realigned by H mod 64), runs the ICRC over
//!   the 64 bytes that end where this beat's part of the ICRC input ends,
//!   inserts the ICRC, and loads the output register.
//!
//! ICRC in hardware: CRC-32 with initial value all ones over `FF x 8 ++ m`
//! equals the raw CRC from zero over `00 00 00 00 FF FF FF FF ++ m` preceded
//! by any number of zero bytes. So the frame's masked copy has that 8-byte
//! prefix just before the IP header and zeros before it, and the raw CRC runs
//! over 64-byte blocks that *end* at multiples of 64 plus `s`, where the
//! last block ends exactly at the ICRC (`s = (FL - 4) mod 64`): every block
//! is full, and the block of beat `k` is the masked beats `k - 1` and `k`
//! shifted by `s`.
//!
//! PFC: a data frame (not `desc_cnp_pad`) whose priority `desc_pcp` is
//! paused (`pause`, from `pfc`) waits in the E stage with its first slot
//! (`hold` stops both stages), so its first beat is not loaded into the
//! output register while its priority is paused: the last decision before
//! the beat becomes visible. Started frames finish; CNPs are never held;
//! frames queued behind a held one wait too (one FIFO).

use crate::dut::Dut;
use crate::icrc::crc32_raw;
use crate::ports;
use crate::ports::Beat;
use crate::sync_fifo::SyncFifo;
use crate::trace::{Bits, Trace, TraceValue, Tracer};

ports! {
    /// Inputs of `pkt_builder` (all but `clk`/`rst`).
    pub struct PktBuilderIn {
        pub desc_valid: bool = 1,
        /// Not used by the builder (kept for the interface and debugging).
        pub desc_qp: u8 = 4 if desc_valid,
        /// A completion waits for this frame: `frame_done` when it leaves.
        pub desc_cpl: bool = 1 if desc_valid,
        pub desc_dst_mac: u64 = 48 if desc_valid,
        pub desc_src_mac: u64 = 48 if desc_valid,
        pub desc_vlan_en: bool = 1 if desc_valid,
        pub desc_pcp: u8 = 3 if desc_valid,
        pub desc_vid: u16 = 12 if desc_valid,
        pub desc_ipv6: bool = 1 if desc_valid,
        pub desc_src_ip: u128 = 128 if desc_valid,
        pub desc_dst_ip: u128 = 128 if desc_valid,
        pub desc_dscp: u8 = 6 if desc_valid,
        pub desc_ecn: u8 = 2 if desc_valid,
        pub desc_udp_sport: u16 = 16 if desc_valid,
        pub desc_opcode: u8 = 8 if desc_valid,
        pub desc_se: bool = 1 if desc_valid,
        pub desc_pkey: u16 = 16 if desc_valid,
        pub desc_becn: bool = 1 if desc_valid,
        pub desc_dest_qp: u32 = 24 if desc_valid,
        pub desc_ack_req: bool = 1 if desc_valid,
        pub desc_psn: u32 = 24 if desc_valid,
        pub desc_reth_en: bool = 1 if desc_valid,
        pub desc_reth_va: u64 = 64 if desc_valid,
        pub desc_reth_rkey: u32 = 32 if desc_valid,
        pub desc_reth_len: u32 = 32 if desc_valid,
        pub desc_imm_en: bool = 1 if desc_valid,
        pub desc_imm: u32 = 32 if desc_valid,
        pub desc_aeth_en: bool = 1 if desc_valid,
        pub desc_aeth: u32 = 32 if desc_valid,
        pub desc_cnp_pad: bool = 1 if desc_valid,
        /// Payload bytes, 0 ..= 4096.
        pub desc_pay_len: u16 = 13 if desc_valid,
        pub pay_valid: bool = 1,
        /// Payload from byte 0, ceil(pay_len / 64) beats per descriptor with
        /// payload; bytes past pay_len are ignored.
        pub pay_data: Beat = 512 if pay_valid,
        pub pay_last: bool = 1 if pay_valid,
        /// dma_rd's status, meaningful on the last beat: non-zero drops the frame.
        pub pay_status: u8 = 3 if pay_valid,
        /// Bit p: 802.1p priority p is paused (PFC, from `pfc`).
        pub pause: u8 = 8,
        /// A PFC frame to send (from `pfc_gen`): enable vector and 8 times.
        pub pfc_valid: bool = 1,
        pub pfc_enable: u8 = 8 if pfc_valid,
        pub pfc_quanta: u128 = 128 if pfc_valid,
        /// Source MAC of PFC frames (csr's PFCG.SRC_MAC).
        pub pfc_src_mac: u64 = 48,
        pub tx_tready: bool = 1,
    }
}

ports! {
    /// Outputs of `pkt_builder`, all registered.
    pub struct PktBuilderOut {
        pub desc_ready: bool = 1,
        pub pay_ready: bool = 1,
        /// The PFC slot is free (registered).
        pub pfc_ready: bool = 1,
        pub tx_tvalid: bool = 1,
        pub tx_tdata: Beat = 512 if tx_tvalid,
        pub tx_tkeep: u64 = 64 if tx_tvalid,
        pub tx_tlast: bool = 1 if tx_tvalid,
        /// Pulse: a frame with `desc_cpl` left, or was dropped (`frame_done_err`).
        pub frame_done_valid: bool = 1,
        pub frame_done_err: bool = 1 if frame_done_valid,
        /// Pulse: a frame left (its `tlast` transfer was the cycle before).
        pub ev_tx_frame: bool = 1,
        pub ev_tx_len: u16 = 14 if ev_tx_frame,
        /// Pulse: a frame was dropped because its payload read failed.
        pub ev_dma_err: bool = 1,
    }
}

/// Descriptor FIFO depth.
pub const DESC_DEPTH: usize = 32;
/// Payload RAM depth in 64-byte beats (four 4096-byte packets).
pub const PAY_BEATS: usize = 256;
/// Depth of the FIFO of payloads whose last beat is in (their error flag).
pub const DONE_DEPTH: usize = 8;

/// One descriptor as the FIFO holds it (everything but `desc_qp`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Desc {
    pub cpl: bool,
    pub dst_mac: u64,
    pub src_mac: u64,
    pub vlan_en: bool,
    pub pcp: u8,
    pub vid: u16,
    pub ipv6: bool,
    pub src_ip: u128,
    pub dst_ip: u128,
    pub dscp: u8,
    pub ecn: u8,
    pub udp_sport: u16,
    pub opcode: u8,
    pub se: bool,
    pub pkey: u16,
    pub becn: bool,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: u32,
    pub reth_en: bool,
    pub reth_va: u64,
    pub reth_rkey: u32,
    pub reth_len: u32,
    pub imm_en: bool,
    pub imm: u32,
    pub aeth_en: bool,
    pub aeth: u32,
    pub cnp_pad: bool,
    pub pay_len: u16,
}

impl Desc {
    /// The descriptor on the input ports, masked to the port widths as the
    /// RTL sees them.
    pub fn from_inputs(i: &PktBuilderIn) -> Desc {
        Desc {
            cpl: i.desc_cpl,
            dst_mac: i.desc_dst_mac & 0xFFFF_FFFF_FFFF,
            src_mac: i.desc_src_mac & 0xFFFF_FFFF_FFFF,
            vlan_en: i.desc_vlan_en,
            pcp: i.desc_pcp & 7,
            vid: i.desc_vid & 0xFFF,
            ipv6: i.desc_ipv6,
            src_ip: i.desc_src_ip,
            dst_ip: i.desc_dst_ip,
            dscp: i.desc_dscp & 0x3F,
            ecn: i.desc_ecn & 3,
            udp_sport: i.desc_udp_sport,
            opcode: i.desc_opcode,
            se: i.desc_se,
            pkey: i.desc_pkey,
            becn: i.desc_becn,
            dest_qp: i.desc_dest_qp & 0xFF_FFFF,
            ack_req: i.desc_ack_req,
            psn: i.desc_psn & 0xFF_FFFF,
            reth_en: i.desc_reth_en,
            reth_va: i.desc_reth_va,
            reth_rkey: i.desc_reth_rkey,
            reth_len: i.desc_reth_len,
            imm_en: i.desc_imm_en,
            imm: i.desc_imm,
            aeth_en: i.desc_aeth_en,
            aeth: i.desc_aeth,
            cnp_pad: i.desc_cnp_pad,
            pay_len: i.desc_pay_len & 0x1FFF,
        }
    }
}

/// A frame's header as the frame registers hold it.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    /// Header bytes in wire order (zero past `h`).
    pub hdr: [u8; 128],
    /// The same as the ICRC sees it: zero before the IP header but for the
    /// 8-byte prefix `00 00 00 00 FF FF FF FF` just before it, variant
    /// fields all ones.
    pub hdrm: [u8; 128],
    /// Header length in bytes (54 ..= 118).
    pub h: u8,
    /// Frame length: header, payload, pad, ICRC.
    pub fl: u16,
}

/// IPv4 header checksum of a 20-byte header whose checksum field is zero.
pub fn ipv4_checksum(ip: &[u8]) -> u16 {
    let mut sum: u32 = ip
        .chunks_exact(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
        .sum();
    // Two folds always suffice for ten words.
    sum = (sum & 0xFFFF) + (sum >> 16);
    sum = (sum & 0xFFFF) + (sum >> 16);
    !(sum as u16)
}

/// Builds the header of a descriptor (the combinational header builder that
/// reads the descriptor FIFO's head).
pub fn build_header(d: &Desc) -> Header {
    let pad = (4 - d.pay_len % 4) % 4;
    let ext =
        16 * d.reth_en as u16 + 4 * d.aeth_en as u16 + 4 * d.imm_en as u16 + 16 * d.cnp_pad as u16;
    // UDP length: UDP header, BTH, extension headers, payload, pad, ICRC.
    let udp_len = 8 + 12 + ext + d.pay_len + pad + 4;
    let tos = d.dscp << 2 | d.ecn;
    let mut h: Vec<u8> = Vec::with_capacity(128);
    h.extend_from_slice(&d.dst_mac.to_be_bytes()[2..]);
    h.extend_from_slice(&d.src_mac.to_be_bytes()[2..]);
    if d.vlan_en {
        h.extend_from_slice(&[0x81, 0x00]);
        h.extend_from_slice(&((d.pcp as u16) << 13 | d.vid).to_be_bytes());
    }
    let e = h.len();
    let mut masked: Vec<usize> = Vec::new();
    if d.ipv6 {
        h.extend_from_slice(&[0x86, 0xDD]);
        let e = h.len();
        h.push(0x60 | tos >> 4);
        h.push((tos & 0xF) << 4);
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(&udp_len.to_be_bytes());
        h.extend_from_slice(&[17, 64]);
        h.extend_from_slice(&d.src_ip.to_be_bytes());
        h.extend_from_slice(&d.dst_ip.to_be_bytes());
        masked.extend([e + 1, e + 2, e + 3, e + 7]);
    } else {
        h.extend_from_slice(&[0x08, 0x00]);
        let e = h.len();
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[1] = tos;
        ip[2..4].copy_from_slice(&(20 + udp_len).to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&(d.src_ip as u32).to_be_bytes());
        ip[16..20].copy_from_slice(&(d.dst_ip as u32).to_be_bytes());
        let c = ipv4_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        h.extend_from_slice(&ip);
        masked.extend([e + 1, e + 8, e + 10, e + 11]);
    }
    let e = e + 2;
    let u = h.len();
    h.extend_from_slice(&d.udp_sport.to_be_bytes());
    h.extend_from_slice(&4791u16.to_be_bytes());
    h.extend_from_slice(&udp_len.to_be_bytes());
    h.extend_from_slice(&[0, 0]);
    masked.extend([u + 6, u + 7, u + 12]);
    // BTH
    h.push(d.opcode);
    h.push((d.se as u8) << 7 | (pad as u8) << 4);
    h.extend_from_slice(&d.pkey.to_be_bytes());
    h.push((d.becn as u8) << 6);
    h.extend_from_slice(&d.dest_qp.to_be_bytes()[1..]);
    h.push((d.ack_req as u8) << 7);
    h.extend_from_slice(&d.psn.to_be_bytes()[1..]);
    // Extension headers in InfiniBand order: RETH, AETH, ImmDt, then the
    // CNP's 16 reserved bytes.
    if d.reth_en {
        h.extend_from_slice(&d.reth_va.to_be_bytes());
        h.extend_from_slice(&d.reth_rkey.to_be_bytes());
        h.extend_from_slice(&d.reth_len.to_be_bytes());
    }
    if d.aeth_en {
        h.extend_from_slice(&d.aeth.to_be_bytes());
    }
    if d.imm_en {
        h.extend_from_slice(&d.imm.to_be_bytes());
    }
    if d.cnp_pad {
        h.extend_from_slice(&[0; 16]);
    }
    let hl = h.len();
    let mut hdr = [0u8; 128];
    hdr[..hl].copy_from_slice(&h);
    let mut hdrm = [0u8; 128];
    hdrm[e..hl].copy_from_slice(&h[e..]);
    hdrm[e - 4..e].copy_from_slice(&[0xFF; 4]);
    for m in masked {
        hdrm[m] = 0xFF;
    }
    if d.ipv6 {
        // Version nibble covered, traffic class's upper nibble masked.
        hdrm[e] = 0x6F;
    }
    Header {
        hdr,
        hdrm,
        h: hl as u8,
        fl: hl as u16 + d.pay_len + pad + 4,
    }
}

/// `n` clamped to 0..=64: how many lanes of beat `k` lie below frame byte
/// `x`.
fn lanes_below(x: u32, k: u32) -> usize {
    x.saturating_sub(64 * k).min(64) as usize
}

/// The frame builder.
#[derive(Debug, Clone, PartialEq)]
pub struct PktBuilder {
    desc_fifo: SyncFifo<Desc>,
    /// Error flag of each payload whose last beat is in, in order.
    done_fifo: SyncFifo<bool>,
    /// Entries of `done_fifo` (for `pay_ready`'s look-ahead).
    done_n_q: usize,
    pay_ram: Vec<Beat>,
    wr_ptr_q: usize,
    rd_ptr_q: usize,
    /// Payload RAM beats written and not yet read (or dropped).
    used_q: usize,
    pay_ready_q: bool,
    // R stage: slots of the frame being issued.
    r_act_q: bool,
    r_k_q: u8,
    r_rd_left_q: u8,
    // Frame registers, loaded at a frame's first slot.
    f_hdr_q: [u8; 128],
    f_hdrm_q: [u8; 128],
    f_h_q: u8,
    f_pay_len_q: u16,
    f_fl_q: u16,
    f_last_k_q: u8,
    f_cpl_q: bool,
    /// The frame's priority and whether it is a CNP (never paused).
    f_pcp_q: u8,
    f_cnp_pad_q: bool,
    // E stage.
    e_v_q: bool,
    e_k_q: u8,
    e_rd_q: bool,
    /// RAM read register (the latest payload beat read).
    rdata_q: Beat,
    /// The payload beat read before `rdata_q`.
    p_prev_q: Beat,
    crc_q: u32,
    /// Masked copy of the previous output beat (ICRC input).
    mprev_q: Beat,
    icrc_q: u32,
    // Output register.
    tx_tvalid_q: bool,
    tx_tdata_q: Beat,
    tx_tkeep_q: u64,
    tx_tlast_q: bool,
    tx_fl_q: u16,
    tx_cpl_q: bool,
    // Pulses.
    frame_done_valid_q: bool,
    frame_done_err_q: bool,
    ev_tx_frame_q: bool,
    ev_tx_len_q: u16,
    ev_dma_err_q: bool,
    // PFC slot (one frame request) and whether the output beat is a PFC frame.
    pf_v_q: bool,
    pfc_ready_q: bool,
    tx_pfc_q: bool,
    pf_en_q: u8,
    pf_quanta_q: u128,
}

impl Default for PktBuilder {
    fn default() -> Self {
        PktBuilder {
            desc_fifo: SyncFifo::new(DESC_DEPTH),
            done_fifo: SyncFifo::new(DONE_DEPTH),
            done_n_q: 0,
            pay_ram: vec![Beat::default(); PAY_BEATS],
            wr_ptr_q: 0,
            rd_ptr_q: 0,
            used_q: 0,
            pay_ready_q: false,
            r_act_q: false,
            r_k_q: 0,
            r_rd_left_q: 0,
            f_hdr_q: [0; 128],
            f_hdrm_q: [0; 128],
            f_h_q: 0,
            f_pay_len_q: 0,
            f_fl_q: 0,
            f_last_k_q: 0,
            f_cpl_q: false,
            f_pcp_q: 0,
            f_cnp_pad_q: false,
            e_v_q: false,
            e_k_q: 0,
            e_rd_q: false,
            rdata_q: Beat::default(),
            p_prev_q: Beat::default(),
            crc_q: 0,
            mprev_q: Beat::default(),
            icrc_q: 0,
            tx_tvalid_q: false,
            tx_tdata_q: Beat::default(),
            tx_tkeep_q: 0,
            tx_tlast_q: false,
            tx_fl_q: 0,
            tx_cpl_q: false,
            frame_done_valid_q: false,
            frame_done_err_q: false,
            ev_tx_frame_q: false,
            ev_tx_len_q: 0,
            ev_dma_err_q: false,
            pf_v_q: false,
            pfc_ready_q: false,
            tx_pfc_q: false,
            pf_en_q: 0,
            pf_quanta_q: 0,
        }
    }
}

impl PktBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> PktBuilderOut {
        PktBuilderOut {
            desc_ready: self.desc_fifo.in_ready(),
            pay_ready: self.pay_ready_q,
            pfc_ready: self.pfc_ready_q,
            tx_tvalid: self.tx_tvalid_q,
            tx_tdata: self.tx_tdata_q,
            tx_tkeep: self.tx_tkeep_q,
            tx_tlast: self.tx_tlast_q,
            frame_done_valid: self.frame_done_valid_q,
            frame_done_err: self.frame_done_err_q,
            ev_tx_frame: self.ev_tx_frame_q,
            ev_tx_len: self.ev_tx_len_q,
            ev_dma_err: self.ev_dma_err_q,
        }
    }

    /// Builds output beat `e_k_q` of the frame in the frame registers:
    /// (beat, masked beat for the ICRC).
    fn form_beat(&self) -> (Beat, Beat) {
        let k = self.e_k_q as u32;
        let h = self.f_h_q as u32;
        // Payload realigned to this beat: the window {cur, prev} shifted
        // down by 64 - H mod 64 bytes. A slot that read nothing (the tail
        // past the payload) sees only the last payload beat, as `prev`.
        let (cur, prev) = if self.e_rd_q {
            (self.rdata_q, self.p_prev_q)
        } else {
            (Beat::default(), self.rdata_q)
        };
        let mut win = [0u8; 128];
        win[..64].copy_from_slice(&prev[..]);
        win[64..].copy_from_slice(&cur[..]);
        let sh = 64 - (h % 64) as usize;
        let mut pay_al = Beat::default();
        pay_al.copy_from_slice(&win[sh..sh + 64]);

        let hdr_n = lanes_below(h, k);
        let pay_end = lanes_below(h + self.f_pay_len_q as u32, k);
        let half = if k == 0 { 0 } else { 64 };
        let mut unm = Beat::default();
        let mut msk = Beat::default();
        for i in 0..64 {
            if i < hdr_n {
                unm[i] = self.f_hdr_q[half + i];
                msk[i] = self.f_hdrm_q[half + i];
            } else if i < pay_end {
                unm[i] = pay_al[i];
                msk[i] = pay_al[i];
            }
        }
        (unm, msk)
    }
}

impl Dut for PktBuilder {
    type In = PktBuilderIn;
    type Out = PktBuilderOut;
    const NAME: &'static str = "pkt_builder";

    fn reset(&mut self) -> PktBuilderOut {
        *self = PktBuilder::default();
        self.outputs()
    }

    fn tick(&mut self, i: &PktBuilderIn) -> PktBuilderOut {
        // Everything below reads this cycle's registers; `old` keeps them.
        // The storage (payload RAM, FIFOs) stays out of the copy: it is read
        // through `self` before it is written at the end of the cycle, and
        // copying 16 KiB every cycle was most of the model's run time.
        let pay_ram = std::mem::take(&mut self.pay_ram);
        let desc_fifo = std::mem::take(&mut self.desc_fifo);
        let done_fifo = std::mem::take(&mut self.done_fifo);
        let old = self.clone();
        (self.pay_ram, self.desc_fifo, self.done_fifo) = (pay_ram, desc_fifo, done_fifo);
        let out_free = !old.tx_tvalid_q || i.tx_tready;
        // A paused data frame's first beat waits in E: both stages stop.
        let hold =
            old.e_v_q && old.e_k_q == 0 && !old.f_cnp_pad_q && (i.pause >> old.f_pcp_q) & 1 != 0;
        // A pending PFC frame takes the output register at a frame boundary
        // (E empty or holding a first beat).
        let pf_take = old.pf_v_q && out_free && !(old.e_v_q && old.e_k_q != 0);
        let pf_in = i.pfc_valid && old.pfc_ready_q;
        let pf_v_d = (old.pf_v_q && !pf_take) || pf_in;
        let adv = out_free && !hold && !pf_take;

        // ---- Head of the descriptor FIFO and its payload. ----
        let head_v = self.desc_fifo.out_valid();
        let head = self.desc_fifo.out_data();
        let head_pay = head.pay_len != 0;
        let done_v = self.done_fifo.out_valid();
        let done_err = self.done_fifo.out_data();
        let head_ok = head_v && (!head_pay || (done_v && !done_err));
        let start = adv && !old.r_act_q && head_ok;
        // A failed payload is dropped once everything before it has left,
        // so that frame_done events stay in descriptor order and no read of
        // the frame before is pending.
        let drop = !old.r_act_q
            && !old.e_v_q
            && !old.tx_tvalid_q
            && head_v
            && head_pay
            && done_v
            && done_err;
        let head_np = (head.pay_len as usize).div_ceil(64);

        // ---- R stage: issue one slot. ----
        let mut ren = false;
        if adv {
            if old.r_act_q {
                ren = old.r_rd_left_q != 0;
                self.e_v_q = true;
                self.e_k_q = old.r_k_q;
                self.e_rd_q = ren;
                self.r_rd_left_q = old.r_rd_left_q - ren as u8;
                self.r_k_q = old.r_k_q + 1;
                if old.r_k_q == old.f_last_k_q {
                    self.r_act_q = false;
                }
            } else if start {
                let hd = build_header(&head);
                let last_k = ((hd.fl - 1) / 64) as u8;
                // When the header fills beat 0 (H >= 64), slot 0 reads nothing.
                ren = head_np != 0 && hd.h < 64;
                self.e_v_q = true;
                self.e_k_q = 0;
                self.e_rd_q = ren;
                self.r_rd_left_q = head_np as u8 - ren as u8;
                self.r_k_q = 1;
                self.r_act_q = last_k != 0;
                self.f_hdr_q = hd.hdr;
                self.f_hdrm_q = hd.hdrm;
                self.f_h_q = hd.h;
                self.f_pay_len_q = head.pay_len;
                self.f_fl_q = hd.fl;
                self.f_last_k_q = last_k;
                self.f_cpl_q = head.cpl;
                self.f_pcp_q = head.pcp;
                self.f_cnp_pad_q = head.cnp_pad;
            } else {
                self.e_v_q = false;
            }
        }
        if ren {
            self.p_prev_q = old.rdata_q;
            self.rdata_q = self.pay_ram[old.rd_ptr_q];
            self.rd_ptr_q = (old.rd_ptr_q + 1) % PAY_BEATS;
        }

        // ---- E stage: build the beat, ICRC, output register. While held,
        // the output register empties if its beat is taken. ----
        if out_free {
            if pf_take {
                self.tx_tvalid_q = true;
                self.tx_tdata_q = pfc_beat(i.pfc_src_mac, old.pf_en_q, old.pf_quanta_q);
                self.tx_tkeep_q = (1u64 << 60) - 1;
                self.tx_tlast_q = true;
                self.tx_pfc_q = true;
            } else if old.e_v_q && !hold {
                self.tx_pfc_q = false;
                let k = old.e_k_q as u32;
                let fl = old.f_fl_q as u32;
                let s = ((fl - 4) % 64) as usize;
                let k_icrc = (fl - 4) / 64;
                let (unm, msk) = old.form_beat();
                // The 64 masked bytes ending at frame byte 64 k + s.
                let mprev = if k == 0 { Beat::default() } else { old.mprev_q };
                let mut win = [0u8; 128];
                win[..64].copy_from_slice(&mprev[..]);
                win[64..].copy_from_slice(&msk[..]);
                let crc_in = if k == 0 { 0 } else { old.crc_q };
                let crc_new = crc32_raw(crc_in, &win[s..s + 64]);
                let icrc_now = !crc_new;
                let mut data = unm;
                if k == k_icrc {
                    for (j, b) in icrc_now.to_le_bytes().iter().enumerate() {
                        if s + j < 64 {
                            data[s + j] = *b;
                        }
                    }
                    self.icrc_q = icrc_now;
                } else if k == k_icrc + 1 {
                    // The ICRC's bytes that did not fit in the beat before.
                    for (j, b) in old.icrc_q.to_le_bytes().iter().enumerate() {
                        if s + j >= 64 {
                            data[s + j - 64] = *b;
                        }
                    }
                }
                self.crc_q = crc_new;
                self.mprev_q = msk;
                self.tx_tvalid_q = true;
                self.tx_tdata_q = data;
                self.tx_tkeep_q = crate::pcie::keep_mask(lanes_below(fl, k) as u32);
                self.tx_tlast_q = old.e_k_q == old.f_last_k_q;
                self.tx_fl_q = old.f_fl_q;
                self.tx_cpl_q = old.f_cpl_q;
            } else {
                self.tx_tvalid_q = false;
            }
        }

        // ---- Pulses. ----
        let tlast_xfer = old.tx_tvalid_q && i.tx_tready && old.tx_tlast_q && !old.tx_pfc_q;
        self.ev_tx_frame_q = tlast_xfer;
        self.ev_tx_len_q = old.tx_fl_q;
        self.frame_done_valid_q = (tlast_xfer && old.tx_cpl_q) || (drop && head.cpl);
        self.frame_done_err_q = drop;
        self.ev_dma_err_q = drop;

        // ---- PFC slot. ----
        self.pf_v_q = pf_v_d;
        self.pfc_ready_q = !pf_v_d;
        if pf_in {
            self.pf_en_q = i.pfc_enable;
            self.pf_quanta_q = i.pfc_quanta;
        }

        // ---- Input side: descriptor FIFO, payload RAM, done FIFO. ----
        let pop_desc = start || drop;
        let pop_done = (start && head_pay) || drop;
        self.desc_fifo
            .tick(i.desc_valid.then(|| Desc::from_inputs(i)), pop_desc);
        let we = i.pay_valid && old.pay_ready_q;
        if we {
            self.pay_ram[old.wr_ptr_q] = i.pay_data;
            self.wr_ptr_q = (old.wr_ptr_q + 1) % PAY_BEATS;
        }
        let push_done = we && i.pay_last;
        self.done_fifo
            .tick(push_done.then_some(i.pay_status & 7 != 0), pop_done);
        let dropped = if drop { head_np } else { 0 };
        if drop {
            self.rd_ptr_q = (old.rd_ptr_q + head_np) % PAY_BEATS;
        }
        self.used_q = old.used_q + we as usize - ren as usize - dropped;
        self.done_n_q = old.done_n_q + push_done as usize - pop_done as usize;
        self.pay_ready_q = self.used_q < PAY_BEATS && self.done_n_q < DONE_DEPTH;
        self.outputs()
    }
}

/// The PFC frame's one beat (60 bytes, the MAC adds the FCS): destination
/// 01:80:C2:00:00:01, `src`, EtherType 0x8808, opcode 0x0101, the enable
/// vector, priority p's time at bytes 18 + 2p (big-endian), zero pad.
fn pfc_beat(src: u64, en: u8, quanta: u128) -> Beat {
    let mut b = Beat::default();
    b[..6].copy_from_slice(&[0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);
    b[6..12].copy_from_slice(&src.to_be_bytes()[2..]);
    b[12..16].copy_from_slice(&[0x88, 0x08, 0x01, 0x01]);
    b[17] = en;
    for p in 0..8 {
        let q = (quanta >> (16 * p)) as u16;
        b[18 + 2 * p..20 + 2 * p].copy_from_slice(&q.to_be_bytes());
    }
    b
}

/// A descriptor as `u_desc_fifo` holds it: the `desc_*` inputs
/// concatenated in port order, `desc_cpl` the most significant.
impl TraceValue for Desc {
    fn put(&self, _: u32, b: &mut Bits) {
        b.push(self.pay_len as u64, 13);
        b.push(self.cnp_pad as u64, 1);
        b.push(self.aeth as u64, 32);
        b.push(self.aeth_en as u64, 1);
        b.push(self.imm as u64, 32);
        b.push(self.imm_en as u64, 1);
        b.push(self.reth_len as u64, 32);
        b.push(self.reth_rkey as u64, 32);
        b.push(self.reth_va, 64);
        b.push(self.reth_en as u64, 1);
        b.push(self.psn as u64, 24);
        b.push(self.ack_req as u64, 1);
        b.push(self.dest_qp as u64, 24);
        b.push(self.becn as u64, 1);
        b.push(self.pkey as u64, 16);
        b.push(self.se as u64, 1);
        b.push(self.opcode as u64, 8);
        b.push(self.udp_sport as u64, 16);
        b.push(self.ecn as u64, 2);
        b.push(self.dscp as u64, 6);
        self.dst_ip.put(128, b);
        self.src_ip.put(128, b);
        b.push(self.ipv6 as u64, 1);
        b.push(self.vid as u64, 12);
        b.push(self.pcp as u64, 3);
        b.push(self.vlan_en as u64, 1);
        b.push(self.src_mac, 48);
        b.push(self.dst_mac, 48);
        b.push(self.cpl as u64, 1);
    }
}

impl Trace for PktBuilder {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("done_n_q", 4, &self.done_n_q);
        t.reg("wr_ptr_q", 8, &self.wr_ptr_q);
        t.reg("rd_ptr_q", 8, &self.rd_ptr_q);
        t.reg("used_q", 9, &self.used_q);
        t.reg("pay_ready_q", 1, &self.pay_ready_q);
        t.reg("r_act_q", 1, &self.r_act_q);
        t.reg("r_k_q", 7, &self.r_k_q);
        t.reg("r_rd_left_q", 7, &self.r_rd_left_q);
        t.reg("f_hdr_q", 1024, &self.f_hdr_q);
        t.reg("f_hdrm_q", 1024, &self.f_hdrm_q);
        t.reg("f_h_q", 7, &self.f_h_q);
        t.reg("f_pay_len_q", 13, &self.f_pay_len_q);
        t.reg("f_fl_q", 14, &self.f_fl_q);
        t.reg("f_last_k_q", 7, &self.f_last_k_q);
        t.reg("f_cpl_q", 1, &self.f_cpl_q);
        t.reg("f_pcp_q", 3, &self.f_pcp_q);
        t.reg("f_cnp_pad_q", 1, &self.f_cnp_pad_q);
        t.reg("e_v_q", 1, &self.e_v_q);
        t.reg("e_k_q", 7, &self.e_k_q);
        t.reg("e_rd_q", 1, &self.e_rd_q);
        t.reg("rdata_q", 512, &self.rdata_q);
        t.reg("p_prev_q", 512, &self.p_prev_q);
        t.reg("crc_q", 32, &self.crc_q);
        t.reg("mprev_q", 512, &self.mprev_q);
        t.reg("icrc_q", 32, &self.icrc_q);
        t.reg("tx_tvalid_q", 1, &self.tx_tvalid_q);
        t.reg("tx_tdata_q", 512, &self.tx_tdata_q);
        t.reg("tx_tkeep_q", 64, &self.tx_tkeep_q);
        t.reg("tx_tlast_q", 1, &self.tx_tlast_q);
        t.reg("tx_fl_q", 14, &self.tx_fl_q);
        t.reg("tx_cpl_q", 1, &self.tx_cpl_q);
        t.reg("frame_done_valid_q", 1, &self.frame_done_valid_q);
        t.reg("frame_done_err_q", 1, &self.frame_done_err_q);
        t.reg("ev_tx_frame_q", 1, &self.ev_tx_frame_q);
        t.reg("ev_tx_len_q", 14, &self.ev_tx_len_q);
        t.reg("ev_dma_err_q", 1, &self.ev_dma_err_q);
        t.reg("pf_v_q", 1, &self.pf_v_q);
        t.reg("pfc_ready_q", 1, &self.pfc_ready_q);
        t.reg("tx_pfc_q", 1, &self.tx_pfc_q);
        t.reg("pf_en_q", 8, &self.pf_en_q);
        t.reg("pf_quanta_q", 128, &self.pf_quanta_q);
        t.push("u_desc_fifo");
        self.desc_fifo.trace_all(t, 678);
        t.pop();
        t.push("u_done_fifo");
        self.done_fifo.trace_all(t, 1);
        t.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_checksum_matches_a_textbook_example() {
        // The classic example header (Wikipedia, "IPv4 header checksum"):
        // 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
        let ip = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(ipv4_checksum(&ip), 0xB861);
    }

    /// Runs the model alone: descriptors offered back to back from cycle 0,
    /// each payload's beats streamed after (`fail`: status 2 on its last
    /// beat), tready always high. Returns the frames, the frame_done_err
    /// values, the ev_dma_err count and (ev_tx_len values).
    fn run(pkts: &[(PktBuilderIn, Vec<u8>, bool)]) -> (Vec<Vec<u8>>, Vec<bool>, usize, Vec<u16>) {
        let mut m = PktBuilder::new();
        let mut o = m.reset();
        let mut beats: Vec<(Beat, bool, u8)> = Vec::new();
        for (_, p, fail) in pkts {
            let n = p.len().div_ceil(64);
            for b in 0..n {
                let mut beat = Beat([0xEE; 64]); // garbage past the length
                let end = (64 * b + 64).min(p.len());
                beat[..end - 64 * b].copy_from_slice(&p[64 * b..end]);
                let last = b + 1 == n;
                beats.push((beat, last, if last && *fail { 2 } else { 0 }));
            }
        }
        let (mut di, mut bi) = (0, 0);
        let (mut frames, mut cur, mut dones, mut errs, mut lens) =
            (Vec::new(), Vec::new(), Vec::new(), 0, Vec::new());
        for _ in 0..2000 {
            let mut i = PktBuilderIn {
                tx_tready: true,
                ..PktBuilderIn::default()
            };
            if di < pkts.len() {
                i = PktBuilderIn {
                    tx_tready: true,
                    ..pkts[di].0
                };
                i.desc_valid = true;
                if o.desc_ready {
                    di += 1;
                }
            }
            if bi < beats.len() {
                i.pay_valid = true;
                (i.pay_data, i.pay_last, i.pay_status) = beats[bi];
                if o.pay_ready {
                    bi += 1;
                }
            }
            if o.tx_tvalid {
                let n = o.tx_tkeep.count_ones() as usize;
                assert_eq!(o.tx_tkeep, crate::pcie::keep_mask(n as u32));
                cur.extend_from_slice(&o.tx_tdata[..n]);
                if o.tx_tlast {
                    frames.push(std::mem::take(&mut cur));
                }
            }
            if o.frame_done_valid {
                dones.push(o.frame_done_err);
            }
            errs += o.ev_dma_err as usize;
            if o.ev_tx_frame {
                lens.push(o.ev_tx_len);
            }
            o = m.tick(&i);
        }
        (frames, dones, errs, lens)
    }

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// RC RDMA WRITE ONLY, IPv4, 5 payload bytes.
    fn write_only_v4() -> PktBuilderIn {
        PktBuilderIn {
            desc_cpl: true,
            desc_dst_mac: 0x02_00_00_00_00_02,
            desc_src_mac: 0x02_00_00_00_00_01,
            desc_src_ip: 0x0A00_0001,
            desc_dst_ip: 0x0A00_0002,
            desc_dscp: 26,
            desc_ecn: 2,
            desc_udp_sport: 0xC000,
            desc_opcode: 0x0A,
            desc_pkey: 0xFFFF,
            desc_dest_qp: 0x000123,
            desc_ack_req: true,
            desc_psn: 0x10,
            desc_reth_en: true,
            desc_reth_va: 0x0000_1000_2000_3000,
            desc_reth_rkey: 0x1122_3344,
            desc_reth_len: 5,
            desc_pay_len: 5,
            ..PktBuilderIn::default()
        }
    }

    #[test]
    fn ipv4_rdma_write_only_with_5_payload_bytes() {
        // Every byte derived by hand from docs/tx_datapath.md "Packets":
        // ToS = 26 << 2 | 2 = 0x6A; pad 3; UDP length 8+12+16+5+3+4 = 48;
        // IP total 68; checksum ~(456A+0044+4000+4011+0A00+0001+0A00+0002)
        // = ~D9C2 = 263D; BTH byte 1 = PadCnt 3 << 4; AckReq bit 7 of byte 8.
        // ICRC from Python's zlib.crc32 over the masked bytes (scapy's RoCE
        // layer computes the same ICRC and IPv4 checksum for this frame).
        let want = hex("020000000002 020000000001 0800
             45 6a 0044 0000 4000 40 11 263d 0a000001 0a000002
             c000 12b7 0030 0000
             0a 30 ffff 00 000123 80 000010
             0000100020003000 11223344 00000005
             a1a2a3a4a5 000000
             675513b3");
        // (ICRC value 0xB3135567 sent least significant byte first.)
        let payload = vec![0xA1, 0xA2, 0xA3, 0xA4, 0xA5];
        let (frames, dones, errs, lens) = run(&[(write_only_v4(), payload, false)]);
        assert_eq!(frames, vec![want.clone()]);
        assert_eq!((dones, errs, lens), (vec![false], 0, vec![82]));
        assert!(crate::icrc::icrc_ok(&want));
        // The IPv4 checksum verifies the usual way: the header sums to FFFF.
        let sum: u32 = want[14..34]
            .chunks(2)
            .map(|w| u16::from_be_bytes([w[0], w[1]]) as u32)
            .sum();
        assert_eq!((sum & 0xFFFF) + (sum >> 16), 0xFFFF);
    }

    /// Cycles in which tx_tvalid is visible: one zero-payload descriptor
    /// offered at cycle 0, `pause(c)` driven at cycle c, tready high.
    fn visible_with_pause(d: PktBuilderIn, pause: impl Fn(u64) -> u8) -> Vec<u64> {
        let mut m = PktBuilder::new();
        m.reset();
        let mut seen = Vec::new();
        for c in 0..30 {
            let mut i = if c == 0 {
                PktBuilderIn {
                    desc_valid: true,
                    ..d
                }
            } else {
                PktBuilderIn::default()
            };
            i.pause = pause(c);
            i.tx_tready = true;
            // Outputs after the edge of cycle c are visible at c + 1.
            if m.tick(&i).tx_tvalid {
                seen.push(c + 1);
            }
        }
        seen
    }

    #[test]
    fn pfc_holds_a_data_frame_of_a_paused_priority_only() {
        // A 58-byte frame (IPv4, no payload, no RETH: one beat) of
        // priority 5. Descriptor in at 0, FIFO head at 1, start (R) at 1,
        // E at 2, first beat visible at 3.
        let d = PktBuilderIn {
            desc_pcp: 5,
            desc_reth_en: false,
            desc_pay_len: 0,
            ..write_only_v4()
        };
        assert_eq!(visible_with_pause(d, |_| 0), vec![3]);
        // Another priority paused: no effect.
        assert_eq!(visible_with_pause(d, |_| !(1 << 5)), vec![3]);
        // Priority 5 paused during cycles 0..=9: E holds the beat from 2 to
        // 9; pause low at 10 loads it: visible at 11 (one beat, one cycle).
        assert_eq!(
            visible_with_pause(d, |c| if c < 10 { 1 << 5 } else { 0 }),
            vec![11]
        );
        // Pause visible at 2 (the E cycle) is the last that stops it; at 3
        // the beat is already visible and goes.
        assert_eq!(
            visible_with_pause(d, |c| if c == 2 { 1 << 5 } else { 0 }),
            vec![4]
        );
        assert_eq!(
            visible_with_pause(d, |c| if c >= 3 { 1 << 5 } else { 0 }),
            vec![3]
        );
        // A CNP (cnp_pad) of a paused priority is never held (54 + 16 + 4
        // = 74 bytes: two beats, at 3 and 4).
        let cnp = PktBuilderIn {
            desc_cnp_pad: true,
            desc_opcode: 0x81,
            ..d
        };
        assert_eq!(visible_with_pause(cnp, |_| 0xFF), vec![3, 4]);
    }

    #[test]
    fn ipv6_vlan_uc_send_only_with_immediate() {
        // TCI = 5 << 13 | 0x123 = A123; traffic class 46 << 2 | 2 = BA, so
        // the first IPv6 word is 6BA00000; pad 2; UDP length
        // 8+12+4+2+2+4 = 32; BTH: 0x25, SE | PadCnt 2 = A0, BECN = 40.
        // ICRC from zlib.crc32; scapy's RoCE layer agrees.
        let d = PktBuilderIn {
            desc_dst_mac: 0x0C42_A100_0001,
            desc_src_mac: 0x0C42_A100_0002,
            desc_vlan_en: true,
            desc_pcp: 5,
            desc_vid: 0x123,
            desc_ipv6: true,
            desc_src_ip: 0x2001_0DB8_0000_0000_0000_0000_0000_0001,
            desc_dst_ip: 0x2001_0DB8_0000_0000_0000_0000_0000_0002,
            desc_dscp: 46,
            desc_ecn: 2,
            desc_udp_sport: 0xD431,
            desc_opcode: 0x25,
            desc_se: true,
            desc_pkey: 0x8001,
            desc_becn: true,
            desc_dest_qp: 0xABCDEF,
            desc_psn: 0xFF_FFFF,
            desc_imm_en: true,
            desc_imm: 0xDEAD_BEEF,
            desc_pay_len: 2,
            ..PktBuilderIn::default()
        };
        let want = hex("0c42a1000001 0c42a1000002 8100 a123 86dd
             6ba00000 0020 11 40
             20010db8000000000000000000000001
             20010db8000000000000000000000002
             d431 12b7 0020 0000
             25 a0 8001 40 abcdef 00 ffffff
             deadbeef
             5a5b 0000
             bd601a6c");
        let (frames, dones, errs, lens) = run(&[(d, vec![0x5A, 0x5B], false)]);
        assert_eq!(frames, vec![want.clone()]);
        assert_eq!((dones, errs, lens), (vec![], 0, vec![90]));
        assert!(crate::icrc::icrc_ok(&want));
    }

    #[test]
    fn failed_payload_is_dropped_and_the_next_frame_is_intact() {
        let mut bad = write_only_v4();
        bad.desc_pay_len = 100;
        let bad_payload: Vec<u8> = (0..100).map(|x| x as u8).collect();
        let mut good = write_only_v4();
        good.desc_cpl = false;
        let (frames, dones, errs, lens) = run(&[
            (bad, bad_payload, true),
            (good, vec![0xA1, 0xA2, 0xA3, 0xA4, 0xA5], false),
        ]);
        // The second frame is the first test's frame (its payload read from
        // after the dropped 2-beat payload), without a frame_done.
        assert_eq!(frames.len(), 1);
        assert_eq!(&frames[0][70..75], &[0xA1, 0xA2, 0xA3, 0xA4, 0xA5]);
        assert!(crate::icrc::icrc_ok(&frames[0]));
        assert_eq!((dones, errs, lens), (vec![true], 1, vec![82]));
    }

    #[test]
    fn payloads_ahead_of_their_descriptors_wait_at_most_8() {
        // Ten 1-beat payloads offered before any descriptor: 8 are taken,
        // then pay_ready stays low; the descriptors release them in order.
        let mut m = PktBuilder::new();
        let mut o = m.reset();
        let mut taken = 0;
        for _ in 0..40 {
            let mut i = PktBuilderIn {
                tx_tready: true,
                ..PktBuilderIn::default()
            };
            if taken < 10 {
                i.pay_valid = true;
                i.pay_last = true;
                i.pay_data = Beat([taken as u8; 64]);
                taken += o.pay_ready as usize;
            }
            o = m.tick(&i);
        }
        assert_eq!(taken, 8);
        assert!(!o.pay_ready);
        let mut d = write_only_v4();
        d.desc_cpl = false;
        d.desc_pay_len = 1;
        let mut frames = Vec::new();
        let mut sent = 0;
        for _ in 0..200 {
            let mut i = PktBuilderIn {
                tx_tready: true,
                ..PktBuilderIn::default()
            };
            if sent < 10 {
                i = PktBuilderIn {
                    tx_tready: true,
                    desc_valid: true,
                    ..d
                };
                sent += o.desc_ready as usize;
            }
            if taken < 10 {
                i.pay_valid = true;
                i.pay_last = true;
                i.pay_data = Beat([taken as u8; 64]);
                taken += o.pay_ready as usize;
            }
            if o.tx_tvalid && o.tx_tlast {
                frames.push(o);
            }
            o = m.tick(&i);
        }
        assert_eq!(frames.len(), 10);
        // 1-byte payload right after the 70-byte header: byte 6 of beat 1.
        for (k, f) in frames.iter().enumerate() {
            assert_eq!(f.tx_tdata[6], k as u8);
            // Frame: 70 + 1 + 3 pad + 4 ICRC = 78 bytes.
            assert_eq!(f.tx_tkeep.count_ones(), 78 - 64);
        }
    }

    #[test]
    fn payload_realigned_across_beats_for_every_header_length() {
        // 200 payload bytes 0..199 behind headers of 54 to 118 bytes: the
        // payload must appear contiguous right after the header.
        let payload: Vec<u8> = (0..200).map(|x| x as u8).collect();
        for opts in 0..64u32 {
            let mut d = write_only_v4();
            d.desc_vlan_en = opts & 1 != 0;
            d.desc_ipv6 = opts & 2 != 0;
            d.desc_reth_en = opts & 4 != 0;
            d.desc_imm_en = opts & 8 != 0;
            d.desc_aeth_en = opts & 16 != 0;
            d.desc_cnp_pad = opts & 32 != 0;
            d.desc_pay_len = 200;
            let h = 14
                + 4 * d.desc_vlan_en as usize
                + if d.desc_ipv6 { 40 } else { 20 }
                + 8
                + 12
                + 16 * d.desc_reth_en as usize
                + 4 * d.desc_imm_en as usize
                + 4 * d.desc_aeth_en as usize
                + 16 * d.desc_cnp_pad as usize;
            let (frames, ..) = run(&[(d, payload.clone(), false)]);
            let f = &frames[0];
            assert_eq!(f.len(), h + 200 + 4, "opts {opts:#x}");
            assert_eq!(&f[h..h + 200], &payload[..], "opts {opts:#x}");
            assert!(crate::icrc::icrc_ok(f), "opts {opts:#x}");
        }
    }
}
