//! `rx_parser`: classifies every received frame (PFC, CNP, ACK/NAK, RoCE
//! data, or a drop with its reason). Model of `hw/rtl/rx_parser.sv`;
//! contract in `docs/rx_cc.md` (section `rx_parser`).
//!
//! Two stages, one beat per cycle, no back-pressure:
//! - **beat stage** (cycle n, each beat): the header bytes 12..97 of the
//!   frame are kept (beat 0 and the first 34 bytes of beat 1, bytes past the
//!   frame's end read as zero), the layout (802.1Q tag, IPv6) and the IP
//!   packet's end are taken from beat 0, and the ICRC's CRC register advances
//!   over the beat's covered bytes. On the last beat the frame's length and
//!   FCS flag are kept and `fin_q` is set.
//! - **classify stage** (cycle n+1, when `fin_q`): the rule table is applied
//!   to those registers; the event registers are visible at n+2. A data
//!   frame's event carries its request metadata ([`crate::rx_meta`]).
//!
//! The ICRC is checked without locating it: the CRC register runs over the
//! covered bytes *including* the four ICRC bytes, and a good frame leaves the
//! fixed CRC-32 residue in it. A beat's covered bytes are a range `[lo, hi)`
//! of it: bytes outside are zeroed, the CRC state is XORed into bytes
//! `lo..lo+4`, and one fixed 64-byte network (`crc32_raw(0, block)`) gives
//! the next state (leading zeros do not move a zero register). The zeroed
//! bytes after the IP packet's end in its last beat are not undone: they
//! multiply the final register by `x^(8k)`, so the residue is compared with
//! its `k`-zero-byte version ([`residue_after_zeros`]).

use crate::dut::Dut;
use crate::icrc::crc32_raw;
use crate::ports;
use crate::ports::Beat;
use crate::rx_meta::{MetaBits, RxMeta, PAY_LEN_MAX};
use crate::trace::{Trace, Tracer};

/// QPs (`QPS` of the RTL); QP numbers are [`QPW`] bits.
pub use crate::params::QPS;
pub use crate::params::QPW;

ports! {
    /// Inputs of `rx_parser` (all but `clk`/`rst`).
    pub struct RxParserIn {
        pub rx_tvalid: bool = 1,
        pub rx_tdata: Beat = 512 if rx_tvalid,
        pub rx_tkeep: u64 = 64 if rx_tvalid,
        pub rx_tlast: bool = 1 if rx_tvalid,
        pub rx_tuser: bool = 1 if rx_tvalid,
        /// QP q's state (0 RESET, 1 RTS, 2 ERROR) at [2q +: 2].
        pub qp_state_all: u32 = 32,
    }
}

ports! {
    /// Outputs of `rx_parser`, all registered pulses (+ their fields).
    pub struct RxParserOut {
        pub pfc_valid: bool = 1,
        pub pfc_enable: u8 = 8 if pfc_valid,
        pub pfc_quanta: u128 = 128 if pfc_valid,
        pub cnp_valid: bool = 1,
        pub cnp_qp: u8 = 4 if cnp_valid,
        pub data_valid: bool = 1,
        pub data_qp: u8 = 4 if data_valid,
        pub data_ce: bool = 1 if data_valid,
        /// The request metadata (docs/responder.md).
        pub data_meta: MetaBits = 256 if data_valid,
        pub ack_valid: bool = 1,
        pub ack_qp: u8 = 4 if ack_valid,
        pub ack_psn: u32 = 24 if ack_valid,
        pub ack_syndrome: u8 = 8 if ack_valid,
        pub ack_msn: u32 = 24 if ack_valid,
        pub ev_frame: bool = 1,
        pub ev_drop: bool = 1,
        pub ev_drop_reason: u8 = 3 if ev_drop,
    }
}

/// `ev_drop_reason` codes (docs/rx_cc.md).
pub const DROP_FCS: u8 = 0;
pub const DROP_RUNT: u8 = 1;
pub const DROP_NOT_ROCE: u8 = 2;
pub const DROP_TRUNC: u8 = 3;
pub const DROP_IP_CSUM: u8 = 4;
pub const DROP_ICRC: u8 = 5;
pub const DROP_OPCODE: u8 = 6;
pub const DROP_QP: u8 = 7;

/// First frame byte kept in `hdr_q` (the MAC addresses are not needed).
pub const HDR_FIRST: usize = 12;
/// Bytes kept: 12..98, up to the ImmDt after a RETH with tag and IPv6 (the
/// longest request header).
pub const HDR_BYTES: usize = 86;
/// Beat counter saturates here (frames over 128 KiB are not expected).
pub const BEAT_MAX: u16 = 2047;

/// The CRC register after the ICRC's 8 bytes of 0xFF (from all ones).
pub fn crc_prefix() -> u32 {
    crc32_raw(!0, &[0xFF; 8])
}

/// What the CRC register holds after a message followed by its own
/// complemented CRC, little-endian: `crc32_raw(0, [0xFF; 4])`, whatever the
/// message (the CRC is linear and `crc32_raw(c, c_le) = 0`).
pub fn residue() -> u32 {
    crc32_raw(0, &[0xFF; 4])
}

/// The residue after `k` more zero bytes (the zeroed tail of the last
/// covered beat). The RTL holds these 64 values as constants.
pub fn residue_after_zeros(k: usize) -> u32 {
    crc32_raw(residue(), &vec![0u8; k])
}

/// The ICRC's all-ones (variant) bits of the first two beats, as an OR mask
/// per frame byte, for the layout (`vlan`, `v6`). IPv4: ToS, TTL, header
/// checksum; IPv6: traffic class and flow label (not the version nibble),
/// hop limit; UDP checksum; BTH byte 4.
pub fn or_mask(vlan: bool, v6: bool) -> [u8; 128] {
    let mut m = [0u8; 128];
    let e = if vlan { 18 } else { 14 };
    if v6 {
        m[e] = 0x0F;
        for i in [1, 2, 3, 7] {
            m[e + i] = 0xFF;
        }
    } else {
        for i in [1, 8, 10, 11] {
            m[e + i] = 0xFF;
        }
    }
    let u = e + if v6 { 40 } else { 20 };
    m[u + 6] = 0xFF;
    m[u + 7] = 0xFF;
    m[u + 8 + 4] = 0xFF;
    m
}

/// Extension-header bytes between BTH and payload for a BTH opcode (0 for an
/// unknown one: it is dropped as OPCODE after the TRUNC check of BTH+ICRC).
pub fn ext_len(opcode: u8) -> u32 {
    let reth = matches!(opcode & 0xDF, 0x06 | 0x0A | 0x0B) || opcode == 0x0C;
    let imm = matches!(opcode & 0xDF, 0x03 | 0x05 | 0x09 | 0x0B);
    let aeth = matches!(opcode, 0x0D | 0x0F | 0x10 | 0x11);
    let cnp = opcode == 0x81;
    16 * reth as u32 + 4 * imm as u32 + 4 * aeth as u32 + 16 * cnp as u32
}

/// Opcodes the parser accepts: 0x00..0x11, 0x20..0x2B, 0x81.
pub fn opcode_known(opcode: u8) -> bool {
    opcode <= 0x11 || (0x20..=0x2B).contains(&opcode) || opcode == 0x81
}

#[derive(Debug, Clone, PartialEq)]
pub struct RxParser {
    /// Index of the next beat of the frame (0: the next beat starts one).
    beat_q: u16,
    /// Frame bytes 12..98 (`hdr_q[i - 12]`), zero past the frame's end.
    hdr_q: [u8; HDR_BYTES],
    /// Layout from beat 0: 802.1Q tag present, EtherType IPv6.
    vlan_q: bool,
    v6_q: bool,
    /// Frame offset just past the IP packet (by its length field).
    ip_end_q: u32,
    /// Covered (IP) bytes from the start of the next beat on.
    ip_left_q: u32,
    crc_q: u32,
    /// Frame length in bytes and FCS flag, set on the last beat.
    len_q: u32,
    fcs_q: bool,
    /// A frame's last beat was taken last cycle: classify it now.
    fin_q: bool,
    pfc_valid_q: bool,
    pfc_enable_q: u8,
    pfc_quanta_q: u128,
    cnp_valid_q: bool,
    cnp_qp_q: u8,
    data_valid_q: bool,
    data_qp_q: u8,
    data_ce_q: bool,
    data_meta_q: MetaBits,
    ack_valid_q: bool,
    ack_qp_q: u8,
    ack_psn_q: u32,
    ack_syndrome_q: u8,
    ack_msn_q: u32,
    ev_frame_q: bool,
    ev_drop_q: bool,
    ev_drop_reason_q: u8,
}

impl Default for RxParser {
    fn default() -> Self {
        RxParser {
            beat_q: 0,
            hdr_q: [0; HDR_BYTES],
            vlan_q: false,
            v6_q: false,
            ip_end_q: 0,
            ip_left_q: 0,
            crc_q: 0,
            len_q: 0,
            fcs_q: false,
            fin_q: false,
            pfc_valid_q: false,
            pfc_enable_q: 0,
            pfc_quanta_q: 0,
            cnp_valid_q: false,
            cnp_qp_q: 0,
            data_valid_q: false,
            data_qp_q: 0,
            data_ce_q: false,
            data_meta_q: MetaBits::default(),
            ack_valid_q: false,
            ack_qp_q: 0,
            ack_psn_q: 0,
            ack_syndrome_q: 0,
            ack_msn_q: 0,
            ev_frame_q: false,
            ev_drop_q: false,
            ev_drop_reason_q: 0,
        }
    }
}

/// One classified frame (the classify stage's result).
enum Class {
    Drop(u8),
    Pfc {
        enable: u8,
        quanta: u128,
    },
    Cnp {
        qp: u8,
    },
    Ack {
        qp: u8,
        psn: u32,
        syndrome: u8,
        msn: u32,
    },
    Data {
        qp: u8,
        ce: bool,
        meta: MetaBits,
    },
}

impl RxParser {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> RxParserOut {
        RxParserOut {
            pfc_valid: self.pfc_valid_q,
            pfc_enable: self.pfc_enable_q,
            pfc_quanta: self.pfc_quanta_q,
            cnp_valid: self.cnp_valid_q,
            cnp_qp: self.cnp_qp_q,
            data_valid: self.data_valid_q,
            data_qp: self.data_qp_q,
            data_ce: self.data_ce_q,
            data_meta: self.data_meta_q,
            ack_valid: self.ack_valid_q,
            ack_qp: self.ack_qp_q,
            ack_psn: self.ack_psn_q,
            ack_syndrome: self.ack_syndrome_q,
            ack_msn: self.ack_msn_q,
            ev_frame: self.ev_frame_q,
            ev_drop: self.ev_drop_q,
            ev_drop_reason: self.ev_drop_reason_q,
        }
    }

    /// Frame byte `i` (12..98) as kept in `hdr_q`.
    fn byte(&self, i: usize) -> u8 {
        self.hdr_q[i - HDR_FIRST]
    }
    fn be16(&self, i: usize) -> u32 {
        (self.byte(i) as u32) << 8 | self.byte(i + 1) as u32
    }
    fn be24(&self, i: usize) -> u32 {
        (self.be16(i)) << 8 | self.byte(i + 2) as u32
    }

    fn be32(&self, i: usize) -> u32 {
        self.be16(i) << 16 | self.be16(i + 2)
    }

    /// The request metadata of a data frame whose BTH is at frame byte `b`
    /// (meaningful when it is not TRUNC).
    fn meta(&self, b: usize, opcode: u8, dqp: u32, hdr_end: u32, padcnt: u32) -> RxMeta {
        let reth = matches!(opcode & 0xDF, 0x06 | 0x0A | 0x0B) || opcode == 0x0C;
        let imm = matches!(opcode & 0xDF, 0x03 | 0x05 | 0x09 | 0x0B);
        let aeth = matches!(opcode, 0x0D | 0x0F | 0x10 | 0x11);
        let x = b + 12;
        let pay = self.ip_end_q - hdr_end - padcnt;
        RxMeta {
            qp: dqp as u8,
            opcode,
            psn: self.be24(b + 9),
            ack_req: self.byte(b + 8) & 0x80 != 0,
            has_reth: reth,
            has_imm: imm,
            has_aeth: aeth,
            hdr_len: (hdr_end - 4) as u8,
            pay_len: pay.min(PAY_LEN_MAX as u32) as u16,
            va: if reth {
                (self.be32(x) as u64) << 32 | self.be32(x + 4) as u64
            } else {
                0
            },
            rkey: if reth { self.be32(x + 8) } else { 0 },
            dma_len: if reth { self.be32(x + 12) } else { 0 },
            imm: match (imm, reth) {
                (false, _) => 0,
                (true, true) => self.be32(x + 16),
                (true, false) => self.be32(x),
            },
            aeth: if aeth { self.be32(x) } else { 0 },
        }
    }

    /// The classify stage: the rule table on the registers of the frame
    /// that ended last cycle.
    fn classify(&self, qp_state_all: u32) -> Class {
        let e = if self.vlan_q { 18 } else { 14 };
        let et = self.be16(e - 2);
        let u = e + if self.v6_q { 40 } else { 20 };
        let b = u + 8;
        let is_v4 = et == 0x0800;
        let is_v6 = et == 0x86DD;
        let is_pfc = et == 0x8808 && self.be16(e) == 0x0101;
        // NOT_ROCE, the IP and UDP part (only meaningful with is_v4/is_v6).
        let v4_ok =
            self.byte(e) == 0x45 && self.be16(e + 6) & 0x3FFF == 0 && self.byte(e + 9) == 17;
        let v6_ok = self.byte(e) >> 4 == 6 && self.byte(e + 6) == 17;
        let ip_ok = (is_v4 && v4_ok) || (is_v6 && v6_ok);
        let udp_ok = self.be16(u + 2) == 4791;
        let opcode = self.byte(b);
        let tver = self.byte(b + 1) & 0x0F;
        let dqp = self.be24(b + 5);
        let hdr_end = b as u32 + 12 + ext_len(opcode) + 4;
        // The PadCnt bytes must fit between the headers and the ICRC too.
        let padcnt = (self.byte(b + 1) >> 4 & 3) as u32;
        let trunc = hdr_end + padcnt > self.ip_end_q || self.ip_end_q > self.len_q;
        // IPv4 header checksum: ones'-complement sum of the 10 words.
        let mut sum = 0u32;
        for k in 0..10 {
            sum += self.be16(e + 2 * k);
        }
        let s1 = (sum & 0xFFFF) + (sum >> 16);
        let s2 = (s1 & 0xFFFF) + (s1 >> 16);
        let csum_bad = is_v4 && s2 & 0xFFFF != 0xFFFF;
        let pad = (self.ip_end_q.wrapping_neg() & 63) as usize;
        let icrc_bad = self.crc_q != residue_after_zeros(pad);
        let op_bad = !opcode_known(opcode) || tver != 0;
        let qp_bad = dqp >= QPS as u32 || (qp_state_all >> (2 * (dqp & 0xF))) & 3 == 0;
        let qp = (dqp & 0xF) as u8;
        if self.fcs_q {
            Class::Drop(DROP_FCS)
        } else if self.len_q < 60 {
            Class::Drop(DROP_RUNT)
        } else if is_pfc {
            let mut quanta = 0u128;
            for p in 0..8 {
                quanta |= (self.be16(e + 4 + 2 * p) as u128) << (16 * p);
            }
            Class::Pfc {
                enable: self.byte(e + 3),
                quanta,
            }
        } else if !(ip_ok && udp_ok) {
            Class::Drop(DROP_NOT_ROCE)
        } else if trunc {
            Class::Drop(DROP_TRUNC)
        } else if csum_bad {
            Class::Drop(DROP_IP_CSUM)
        } else if icrc_bad {
            Class::Drop(DROP_ICRC)
        } else if op_bad {
            Class::Drop(DROP_OPCODE)
        } else if qp_bad {
            Class::Drop(DROP_QP)
        } else if opcode == 0x11 {
            Class::Ack {
                qp,
                psn: self.be24(b + 9),
                syndrome: self.byte(b + 12),
                msn: self.be24(b + 13),
            }
        } else if opcode == 0x81 {
            Class::Cnp { qp }
        } else {
            let ecn = if self.v6_q {
                self.byte(e + 1) >> 4
            } else {
                self.byte(e + 1)
            } & 3;
            Class::Data {
                qp,
                ce: ecn == 3,
                meta: self.meta(b, opcode, dqp, hdr_end, padcnt).pack(),
            }
        }
    }
}

impl Dut for RxParser {
    type In = RxParserIn;
    type Out = RxParserOut;
    const NAME: &'static str = "rx_parser";

    fn reset(&mut self) -> RxParserOut {
        *self = RxParser::default();
        self.outputs()
    }

    fn tick(&mut self, i: &RxParserIn) -> RxParserOut {
        // ---- Classify stage: the frame whose last beat came last cycle. ----
        let fin = self.fin_q;
        let class = fin.then(|| self.classify(i.qp_state_all));
        self.pfc_valid_q = false;
        self.cnp_valid_q = false;
        self.data_valid_q = false;
        self.ack_valid_q = false;
        self.ev_drop_q = false;
        self.ev_frame_q = fin;
        match class {
            None => {}
            Some(Class::Drop(r)) => {
                self.ev_drop_q = true;
                self.ev_drop_reason_q = r;
            }
            Some(Class::Pfc { enable, quanta }) => {
                self.pfc_valid_q = true;
                self.pfc_enable_q = enable;
                self.pfc_quanta_q = quanta;
            }
            Some(Class::Cnp { qp }) => {
                self.cnp_valid_q = true;
                self.cnp_qp_q = qp;
            }
            Some(Class::Ack {
                qp,
                psn,
                syndrome,
                msn,
            }) => {
                self.ack_valid_q = true;
                self.ack_qp_q = qp;
                self.ack_psn_q = psn;
                self.ack_syndrome_q = syndrome;
                self.ack_msn_q = msn;
            }
            Some(Class::Data { qp, ce, meta }) => {
                self.data_valid_q = true;
                self.data_qp_q = qp;
                self.data_ce_q = ce;
                self.data_meta_q = meta;
            }
        }

        // ---- Beat stage. ----
        self.fin_q = false;
        if i.rx_tvalid {
            // Bytes past tkeep read as zero; the beat's byte count is the
            // number of keep bits (contiguous from 0 by the MAC's contract).
            let cnt = i.rx_tkeep.count_ones() as usize;
            let mut din = [0u8; 64];
            for (j, d) in din.iter_mut().enumerate() {
                if i.rx_tkeep >> j & 1 != 0 {
                    *d = i.rx_tdata[j];
                }
            }
            let first = self.beat_q == 0;
            // The covered range [lo, hi) of this beat, the state to fold in
            // at lo, and the variant-field mask.
            let (lo, hi, s, mask) = if first {
                let vlan = (din[12] as u32) << 8 | din[13] as u32 == 0x8100;
                let e = if vlan { 18 } else { 14 };
                let et = (din[e - 2] as u32) << 8 | din[e - 1] as u32;
                let v6 = et == 0x86DD;
                // IPv4 total length, or IPv6 payload length + 40 (read as
                // IPv4 for any other EtherType: then it is not used).
                let ip_end = if v6 {
                    e as u32 + 40 + ((din[e + 4] as u32) << 8 | din[e + 5] as u32)
                } else {
                    e as u32 + ((din[e + 2] as u32) << 8 | din[e + 3] as u32)
                };
                self.vlan_q = vlan;
                self.v6_q = v6;
                self.ip_end_q = ip_end;
                self.ip_left_q = ip_end.saturating_sub(64);
                self.hdr_q = [0; HDR_BYTES];
                self.hdr_q[..64 - HDR_FIRST].copy_from_slice(&din[HDR_FIRST..]);
                let mut m = [0u8; 64];
                m.copy_from_slice(&or_mask(vlan, v6)[..64]);
                (e, ip_end.min(64) as usize, crc_prefix(), m)
            } else {
                let mut m = [0u8; 64];
                if self.beat_q == 1 {
                    self.hdr_q[64 - HDR_FIRST..]
                        .copy_from_slice(&din[..HDR_BYTES + HDR_FIRST - 64]);
                    m.copy_from_slice(&or_mask(self.vlan_q, self.v6_q)[64..]);
                }
                let hi = self.ip_left_q.min(64) as usize;
                self.ip_left_q = self.ip_left_q.saturating_sub(64);
                (0, hi, self.crc_q, m)
            };
            let mut block = [0u8; 64];
            for j in lo..hi.max(lo) {
                block[j] = din[j] | mask[j];
            }
            for (k, sb) in s.to_le_bytes().iter().enumerate() {
                block[lo + k] ^= sb;
            }
            if first || hi > 0 {
                self.crc_q = crc32_raw(0, &block);
            }
            if i.rx_tlast {
                self.len_q = self.beat_q as u32 * 64 + cnt as u32;
                self.fcs_q = i.rx_tuser;
                self.fin_q = true;
                self.beat_q = 0;
            } else {
                self.beat_q = (self.beat_q + 1).min(BEAT_MAX);
            }
        }
        self.outputs()
    }
}

impl Trace for RxParser {
    fn trace(&self, t: &mut dyn Tracer) {
        t.reg("beat_q", 11, &self.beat_q);
        t.reg("hdr_q", 688, &self.hdr_q);
        t.reg("vlan_q", 1, &self.vlan_q);
        t.reg("v6_q", 1, &self.v6_q);
        t.reg("ip_end_q", 17, &self.ip_end_q);
        t.reg("ip_left_q", 17, &self.ip_left_q);
        t.reg("crc_q", 32, &self.crc_q);
        t.reg("len_q", 18, &self.len_q);
        t.reg("fcs_q", 1, &self.fcs_q);
        t.reg("fin_q", 1, &self.fin_q);
        t.reg("pfc_valid_q", 1, &self.pfc_valid_q);
        t.reg("pfc_enable_q", 8, &self.pfc_enable_q);
        t.reg("pfc_quanta_q", 128, &self.pfc_quanta_q);
        t.reg("cnp_valid_q", 1, &self.cnp_valid_q);
        t.reg("cnp_qp_q", 4, &self.cnp_qp_q);
        t.reg("data_valid_q", 1, &self.data_valid_q);
        t.reg("data_qp_q", 4, &self.data_qp_q);
        t.reg("data_ce_q", 1, &self.data_ce_q);
        t.reg("data_meta_q", 256, &self.data_meta_q);
        t.reg("ack_valid_q", 1, &self.ack_valid_q);
        t.reg("ack_qp_q", 4, &self.ack_qp_q);
        t.reg("ack_psn_q", 24, &self.ack_psn_q);
        t.reg("ack_syndrome_q", 8, &self.ack_syndrome_q);
        t.reg("ack_msn_q", 24, &self.ack_msn_q);
        t.reg("ev_frame_q", 1, &self.ev_frame_q);
        t.reg("ev_drop_q", 1, &self.ev_drop_q);
        t.reg("ev_drop_reason_q", 3, &self.ev_drop_reason_q);
    }
}

#[cfg(test)]
mod tests;
