//! Directed tests of the `rx_parser` model on literal frames.

use super::*;
use crate::icrc;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The ConnectX-4 Lx CNP of `icrc.rs` (scapy's test/contrib/roce.uts).
const CNP: &str = "e41d2dab2bc2 7cfe90643b32 0800 45c2 003c 718c 4000 4011 9161
                   0a001101 0a001201 0000 12b7 0028 0000 8100ffff 40000118 00000000
                   00000000000000000000000000000000 82fd002a";

/// RTS for every QP.
const ALL_RTS: u32 = 0x5555_5555;

/// Feeds frames (bytes, FCS error flag) back to back, `gap` idle cycles
/// after each, and returns every output cycle with an event as
/// (cycle, outputs); cycle 0 is the first beat's cycle.
fn run(frames: &[(Vec<u8>, bool)], gap: usize, qp_state_all: u32) -> Vec<(usize, RxParserOut)> {
    let mut m = RxParser::new();
    m.reset();
    let mut ins = Vec::new();
    for (f, fcs) in frames {
        let n = f.len().div_ceil(64);
        for (k, chunk) in f.chunks(64).enumerate() {
            let mut d = Beat::default();
            d[..chunk.len()].copy_from_slice(chunk);
            ins.push(RxParserIn {
                rx_tvalid: true,
                rx_tdata: d,
                rx_tkeep: if chunk.len() == 64 {
                    !0
                } else {
                    (1u64 << chunk.len()) - 1
                },
                rx_tlast: k + 1 == n,
                rx_tuser: *fcs && k + 1 == n,
                qp_state_all,
            });
        }
        for _ in 0..gap {
            ins.push(RxParserIn {
                qp_state_all,
                ..Default::default()
            });
        }
    }
    for _ in 0..4 {
        ins.push(RxParserIn {
            qp_state_all,
            ..Default::default()
        });
    }
    let mut ev = Vec::new();
    for (c, i) in ins.iter().enumerate() {
        // The outputs visible in cycle c + 1.
        let o = m.tick(i);
        if o.ev_frame || o.ev_drop || o.pfc_valid || o.cnp_valid || o.data_valid || o.ack_valid {
            ev.push((c + 1, o));
        }
    }
    ev
}

fn one(f: Vec<u8>) -> RxParserOut {
    let n = f.len().div_ceil(64);
    let ev = run(&[(f, false)], 0, ALL_RTS);
    assert_eq!(ev.len(), 1, "{ev:?}");
    // Last beat in cycle n - 1, event visible at n + 1.
    assert_eq!(ev[0].0, n + 1);
    assert!(ev[0].1.ev_frame);
    ev[0].1
}

fn drop_reason(f: Vec<u8>) -> Option<u8> {
    let o = one(f);
    o.ev_drop.then_some(o.ev_drop_reason)
}

/// Rewrites the IPv4 header checksum (IP header at 14) and the ICRC.
fn fix(f: &mut [u8]) {
    f[24] = 0;
    f[25] = 0;
    let mut s = 0u32;
    for k in 0..10 {
        s += u16::from_be_bytes([f[14 + 2 * k], f[15 + 2 * k]]) as u32;
    }
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    f[24..26].copy_from_slice(&(!(s as u16)).to_be_bytes());
    let n = f.len();
    let c = icrc::icrc(&f[..n - 4]).unwrap();
    f[n - 4..].copy_from_slice(&c.to_le_bytes());
}

/// The captured CNP sent to QP 5 (DestQP rewritten, ICRC recomputed).
fn cnp_qp5() -> Vec<u8> {
    let mut f = hex(CNP);
    f[48] = 0x00;
    f[49] = 0x05;
    fix(&mut f);
    f
}

/// An RC ACK, IPv4 untagged, to QP 3: PSN 0x123456, syndrome 0x1F (ACK,
/// credits 31), MSN 0xABCDEF; 62 bytes.
fn ack() -> Vec<u8> {
    let mut f = hex("020000000001 020000000002 0800
         4502 0030 0001 4000 4011 0000 0a000001 0a000002
         c000 12b7 001c 0000
         11 00 ffff 00 000003 80 123456
         1f abcdef
         00000000");
    assert_eq!(f.len(), 62);
    fix(&mut f);
    f
}

#[test]
fn residue_is_the_crc32_magic_and_holds_for_any_message() {
    assert_eq!(residue(), 0xDEBB_20E3);
    for len in [1usize, 5, 63, 64, 100] {
        let msg: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
        let c = !crc32_raw(crc_prefix(), &msg);
        let mut all = msg.clone();
        all.extend_from_slice(&c.to_le_bytes());
        assert_eq!(crc32_raw(crc_prefix(), &all), residue());
    }
    // And the zero-byte versions: k zeros after the residue.
    assert_eq!(residue_after_zeros(0), residue());
    assert_eq!(residue_after_zeros(3), crc32_raw(residue(), &[0, 0, 0]));
}

#[test]
fn captured_cnp_passes_the_icrc_and_is_dropped_for_its_qp() {
    // DestQP 0x118 >= 16 QPs: the last rule; every earlier one passed.
    assert_eq!(drop_reason(hex(CNP)), Some(DROP_QP));
}

#[test]
fn cnp_to_a_local_qp() {
    let o = one(cnp_qp5());
    assert!(o.cnp_valid && !o.ev_drop && !o.data_valid);
    assert_eq!(o.cnp_qp, 5);
}

#[test]
fn ack_fields() {
    let o = one(ack());
    assert!(o.ack_valid && !o.ev_drop);
    assert_eq!(
        (o.ack_qp, o.ack_psn, o.ack_syndrome, o.ack_msn),
        (3, 0x12_3456, 0x1F, 0xAB_CDEF)
    );
}

#[test]
fn pfc_frame() {
    // Priorities 1 and 3 enabled, times 0x0001.. per priority, tagged.
    let mut f = hex("0180c2000001 020000000009 8100 6000 8808 0101 000a
         0100 0203 0405 0607 0809 0a0b 0c0d 0e0f");
    f.resize(60, 0);
    let o = one(f);
    assert!(o.pfc_valid && !o.ev_drop);
    assert_eq!(o.pfc_enable, 0x0A);
    assert_eq!(o.pfc_quanta & 0xFFFF, 0x0100);
    assert_eq!(o.pfc_quanta >> 112, 0x0E0F);
}

#[test]
fn ce_marked_data() {
    // SEND ONLY to QP 2, 4 bytes of payload, IPv4 ECN = CE (ToS 0x03).
    let mut f = hex("020000000001 020000000002 0800
         4503 0030 0001 4000 4011 0000 0a000001 0a000002
         c000 12b7 001c 0000
         04 00 ffff 00 000002 80 000001
         deadbeef
         00000000");
    fix(&mut f);
    let o = one(f.clone());
    assert!(o.data_valid && o.data_ce, "{o:?}");
    assert_eq!(o.data_qp, 2);
    // Payload at 14 + 20 + 8 + 12 = 54, 4 bytes; no extension header.
    assert_eq!(
        RxMeta::unpack(&o.data_meta),
        RxMeta {
            qp: 2,
            opcode: 0x04,
            psn: 1,
            ack_req: true,
            hdr_len: 54,
            pay_len: 4,
            ..Default::default()
        }
    );
    // ECT(0): not CE. The ToS byte is not covered by the ICRC.
    f[15] = 0x02;
    fix(&mut f);
    let o = one(f);
    assert!(o.data_valid && !o.data_ce);
}

#[test]
fn variant_bytes_do_not_break_the_icrc() {
    // TTL, ToS (ECN) and BTH byte 4 changed without refreshing the ICRC
    // (only the IPv4 checksum, which covers TTL and ToS).
    for i in [22usize, 15, 46] {
        let mut f = ack();
        f[i] ^= 0x40;
        let n = f.len();
        let keep = f[n - 4..].to_vec();
        fix(&mut f);
        f[n - 4..].copy_from_slice(&keep);
        assert!(one(f).ack_valid, "byte {i}");
    }
}

#[test]
fn one_frame_per_drop_reason() {
    // FCS: the MAC's flag on the last beat, whatever the frame.
    let ev = run(&[(ack(), true)], 0, ALL_RTS);
    assert_eq!((ev[0].1.ev_drop, ev[0].1.ev_drop_reason), (true, DROP_FCS));
    // RUNT: 59 bytes.
    let mut f = ack();
    f.truncate(59);
    assert_eq!(drop_reason(f), Some(DROP_RUNT));
    // NOT_ROCE: ARP; UDP to another port; TCP; 0x8808 not PFC.
    let mut f = hex("ffffffffffff 020000000002 0806 0001 0800 0604 0001");
    f.resize(60, 0);
    assert_eq!(drop_reason(f), Some(DROP_NOT_ROCE));
    let mut f = ack();
    f[37] = 0xB8; // port 4792
    assert_eq!(drop_reason(f), Some(DROP_NOT_ROCE));
    let mut f = ack();
    f[23] = 6; // TCP
    fix(&mut f);
    assert_eq!(drop_reason(f), Some(DROP_NOT_ROCE));
    let mut f = hex("0180c2000001 020000000009 8808 0001 ffff");
    f.resize(60, 0);
    assert_eq!(drop_reason(f), Some(DROP_NOT_ROCE));
    // TRUNC: IP length 4 bytes longer than the frame.
    let mut f = ack();
    f[17] += 4;
    fix(&mut f);
    assert_eq!(drop_reason(f), Some(DROP_TRUNC));
    // TRUNC: the IP packet ends inside the AETH (frame padded to 62).
    let mut f = ack();
    f[17] -= 8;
    f[39] -= 8;
    fix_csum_only(&mut f);
    assert_eq!(drop_reason(f), Some(DROP_TRUNC));
    // IP_CSUM.
    let mut f = ack();
    f[25] ^= 1;
    assert_eq!(drop_reason(f), Some(DROP_IP_CSUM));
    // ICRC: a covered byte (the MSN).
    let mut f = ack();
    f[56] ^= 0x80;
    assert_eq!(drop_reason(f), Some(DROP_ICRC));
    // OPCODE: 0x12; TVer 1.
    let mut f = ack();
    f[42] = 0x12;
    fix(&mut f);
    assert_eq!(drop_reason(f), Some(DROP_OPCODE));
    let mut f = ack();
    f[43] = 0x01;
    fix(&mut f);
    assert_eq!(drop_reason(f), Some(DROP_OPCODE));
    // QP: QP 3 in RESET.
    let ev = run(&[(ack(), false)], 0, ALL_RTS & !(3 << 6));
    assert_eq!((ev[0].1.ev_drop, ev[0].1.ev_drop_reason), (true, DROP_QP));
}

fn fix_csum_only(f: &mut [u8]) {
    f[24] = 0;
    f[25] = 0;
    let mut s = 0u32;
    for k in 0..10 {
        s += u16::from_be_bytes([f[14 + 2 * k], f[15 + 2 * k]]) as u32;
    }
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    f[24..26].copy_from_slice(&(!(s as u16)).to_be_bytes());
}

#[test]
fn ethernet_padding_after_the_ip_packet_is_ignored() {
    // The 62-byte ACK padded to 130 bytes (three beats): same ACK.
    let mut f = ack();
    f.resize(130, 0xA5);
    let o = one(f);
    assert!(o.ack_valid);
    assert_eq!(o.ack_psn, 0x12_3456);
}

#[test]
fn long_ipv6_tagged_frames_back_to_back() {
    // A WRITE ONLY (RETH + ImmDt), IPv6 with a tag, 4000 bytes of payload,
    // built by hand; then a one-beat ACK right behind it.
    let payload: Vec<u8> = (0..4000u32).map(|i| (i * 7) as u8).collect();
    let ip_payload = 8 + 12 + 16 + 4 + payload.len() + 4;
    let mut f = hex("020000000001 020000000002 8100 a005 86dd");
    f.extend([0x60, 0x30, 0x00, 0x01]); // TC 0x03 (CE), flow label 1
    f.extend((ip_payload as u16).to_be_bytes());
    f.extend([17, 64]);
    f.extend([0x20; 32]);
    f.extend([0xc0, 0x01, 0x12, 0xb7]);
    f.extend((ip_payload as u16).to_be_bytes());
    f.extend([0, 0]);
    f.extend(hex("2b 00 ffff 00 000009 80 000007"));
    f.extend([0x11; 16]);
    f.extend([0x22; 4]);
    f.extend(&payload);
    f.extend([0; 4]);
    let n = f.len();
    let c = icrc::icrc(&f[..n - 4]).unwrap();
    f[n - 4..].copy_from_slice(&c.to_le_bytes());
    let beats = n.div_ceil(64);
    let ev = run(&[(f.clone(), false), (ack(), false)], 0, ALL_RTS);
    assert_eq!(ev.len(), 2);
    assert_eq!(ev[0].0, beats + 1);
    assert!(ev[0].1.data_valid && ev[0].1.data_ce);
    assert_eq!(ev[0].1.data_qp, 9);
    // The longest request header ends at frame byte 98 (tag, IPv6, RETH,
    // ImmDt): every field of it reaches the metadata.
    assert_eq!(
        RxMeta::unpack(&ev[0].1.data_meta),
        RxMeta {
            qp: 9,
            opcode: 0x2B,
            psn: 7,
            ack_req: true,
            has_reth: true,
            has_imm: true,
            has_aeth: false,
            hdr_len: 98,
            pay_len: 4000,
            va: 0x1111_1111_1111_1111,
            rkey: 0x1111_1111,
            dma_len: 0x1111_1111,
            imm: 0x2222_2222,
            aeth: 0,
        }
    );
    assert_eq!(ev[1].0, beats + 2);
    assert!(ev[1].1.ack_valid);
    // The same with one covered payload byte flipped: ICRC.
    f[1000] ^= 1;
    assert_eq!(drop_reason(f), Some(DROP_ICRC));
}

#[test]
fn one_beat_frames_at_line_rate() {
    let frames: Vec<_> = (0..5).map(|_| (ack(), false)).collect();
    let ev = run(&frames, 0, ALL_RTS);
    assert_eq!(ev.iter().map(|e| e.0).collect::<Vec<_>>(), [2, 3, 4, 5, 6]);
    assert!(ev.iter().all(|e| e.1.ack_valid));
}

/// SEND ONLY to QP 2, `pay` payload bytes of which the last `pad` are
/// PadCnt padding (BTH byte 1 bits 5:4).
fn send_only_padded(pay: usize, pad: u8) -> Vec<u8> {
    let mut f = hex("020000000001 020000000002 0800
         4500 0000 0001 4000 4011 0000 0a000001 0a000002
         c000 12b7 0000 0000
         04 00 ffff 00 000002 00 000001");
    f.extend(vec![0x5A; pay]);
    f.extend([0; 4]); // ICRC, computed by fix_ip
    f[43] = pad << 4;
    let ip_len = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&ip_len.to_be_bytes());
    f[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
    while f.len() < 60 {
        f.push(0); // Ethernet padding: outside the IP packet
    }
    let n = 14 + ip_len as usize;
    fix_ip(&mut f, n);
    f
}

/// [`fix`] for a frame with Ethernet padding after the IP packet's end `n`.
fn fix_ip(f: &mut [u8], n: usize) {
    let mut g = f[..n].to_vec();
    fix(&mut g);
    f[..n].copy_from_slice(&g);
}

#[test]
fn padcnt_is_taken_off_the_payload_and_must_fit() {
    // 4 bytes after the BTH, 3 of them padding: one byte of payload.
    let o = one(send_only_padded(4, 3));
    assert!(o.data_valid, "{o:?}");
    assert_eq!(RxMeta::unpack(&o.data_meta).pay_len, 1);
    // Padding claimed with no bytes to hold it: TRUNC.
    assert_eq!(drop_reason(send_only_padded(0, 1)), Some(DROP_TRUNC));
    assert_eq!(drop_reason(send_only_padded(2, 3)), Some(DROP_TRUNC));
    assert_eq!(drop_reason(send_only_padded(3, 3)), None);
}

#[test]
fn read_response_carries_its_aeth() {
    // READ RESPONSE ONLY (0x10) to QP 6, AETH syndrome 0x1F MSN 0x000102,
    // 8 bytes of payload.
    let mut f = hex("020000000001 020000000002 0800
         4500 0038 0001 4000 4011 0000 0a000001 0a000002
         c000 12b7 0024 0000
         10 00 ffff 00 000006 00 0000ff
         1f000102
         0102030405060708
         00000000");
    fix(&mut f);
    let o = one(f);
    assert_eq!(
        RxMeta::unpack(&o.data_meta),
        RxMeta {
            qp: 6,
            opcode: 0x10,
            psn: 0xFF,
            has_aeth: true,
            hdr_len: 58,
            pay_len: 8,
            aeth: 0x1F00_0102,
            ..Default::default()
        }
    );
}
