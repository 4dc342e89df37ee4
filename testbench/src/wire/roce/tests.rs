use super::*;

/// Hex (whitespace ignored) to bytes.
fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

// A CNP captured from ConnectX-4 Lx hardware (scapy's test/contrib/roce.uts,
// "RoCE CNP captured on ConnectX-4 Lx"):
//   Ethernet  e4:1d:2d:ab:2b:c2 <- 7c:fe:90:64:3b:32, IPv4
//   IPv4      ToS 0xc2 (DSCP 48, ECN 10), total 60, ID 0x718c, DF, TTL 64,
//             UDP, checksum 0x9161, 10.0.17.1 -> 10.0.18.1
//   UDP       0 -> 4791, length 40, checksum 0
//   BTH       CNP 0x81, P_Key ffff, BECN (byte 4 = 0x40), DestQP 0x000118, PSN 0
//   16 zero bytes, ICRC 82 fd 00 2a (register 0x2a00fd82)
const CNP_CX4: &str = "
    e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2
    003c 718c 4000 4011 9161 0a00 1101 0a00
    1201 0000 12b7 0028 0000 8100 ffff 4000
    0118 0000 0000 0000 0000 0000 0000 0000
    0000 0000 0000 82fd 002a";

// scapy's "an example UC packet" (same file), UC SEND ONLY with M set and
// PadCnt 2; its IPv4 checksum (0xb4d5), UDP checksum (0xaca2) and ICRC
// (78 f3 53 f3) are the values scapy's test asserts.
const UC_SCAPY: &str = "
    248a07a8fa22 248a07a8fa22 0800
    45 01 0040 0478 4000 40 11 b4d5 c0a80007 c0a80007
    c000 12b7 002c aca2
    24 60 ffff 00 0000d3 00 cf1710
    4630818be28935d90e9a95505401be885e50 0000
    78f353f3";

// Written out by hand from docs/tx_datapath.md; ICRC from scapy.
//   Ethernet  02:00:00:00:00:02 <- 02:00:00:00:00:01, tag PCP 3 VID 100
//             (TCI 0x6064), EtherType 86dd
//   IPv6      version 6, traffic class 0x6a (DSCP 26, ECN 10), flow label
//             0x12345 -> 66a12345; payload length 52 (UDP 8 + BTH 12 +
//             RETH 16 + ImmDt 4 + 5 payload + 3 pad + ICRC 4); next header
//             17; hop limit 64; fd00::1 -> fd00::2
//   UDP       0xc123 -> 4791, length 52, checksum 0
//   BTH       0x0b RC WRITE ONLY+Imm; SE 1, M 0, PadCnt 3, TVer 0 -> b0;
//             P_Key ffff; 00; DestQP 000123; AckReq -> 80; PSN 000457
//   RETH      VA 00007f0012345678, rkey cafebabe, length 5
//   ImmDt     deadbeef
//   payload   01 02 03 04 05, pad 00 00 00, ICRC d6 e7 fc 0d
const WRITE_IMM_V6: &str = "
    020000000002 020000000001 8100 6064 86dd
    66a12345 0034 11 40
    fd000000000000000000000000000001
    fd000000000000000000000000000002
    c123 12b7 0034 0000
    0b b0 ffff 00 000123 80 000457
    00007f0012345678 cafebabe 00000005
    deadbeef
    0102030405 000000
    d6e7fc0d";

// Also by hand; checksum and ICRC from scapy, the checksum also by hand:
// 456a+003c+0000+4000+4011+c0a8+0101+c0a8+0102 = 2490a -> 490c -> ~ = b6f3.
//   Ethernet  10:22:33:44:55:66 <- 02:aa:bb:cc:dd:ee, IPv4
//   IPv4      ToS 0x6a, total 60 (20+8+12+16+4), ID 0, DF, TTL 64, UDP,
//             192.168.1.1 -> 192.168.1.2
//   UDP       49152 -> 4791, length 40, checksum 0
//   BTH       0x0c RC READ REQUEST; 00; ffff; 00; DestQP 000011; AckReq 80;
//             PSN 000100
//   RETH      VA 0x1000, rkey 0x100, length 0x2000; ICRC d9 d5 c9 5f
const READ_REQ_V4: &str = "
    102233445566 02aabbccddee 0800
    45 6a 003c 0000 4000 40 11 b6f3 c0a80101 c0a80102
    c000 12b7 0028 0000
    0c 00 ffff 00 000011 80 000100
    0000000000001000 00000100 00002000
    d9d5c95f";

fn bth(opcode: u8, dest_qp: u32, psn: u32) -> bth::Repr {
    bth::Repr {
        opcode,
        se: false,
        migreq: false,
        pkey: 0xFFFF,
        fecn: false,
        becn: false,
        dest_qp,
        ack_req: false,
        psn,
    }
}

fn write_imm_v6_repr() -> RoceRepr {
    RoceRepr {
        eth: ethernet::Repr {
            dst: 0x02_00_00_00_00_02,
            src: 0x02_00_00_00_00_01,
            vlan: Some(ethernet::VlanTag {
                pcp: 3,
                dei: false,
                vid: 100,
            }),
        },
        ip: IpRepr::V6(ipv6::Repr {
            src: "fd00::1".parse().unwrap(),
            dst: "fd00::2".parse().unwrap(),
            dscp: 26,
            ecn: 2,
            flow_label: 0x12345,
            hop_limit: 64,
        }),
        udp: udp::Repr {
            src_port: 0xC123,
            checksum: 0,
        },
        bth: bth::Repr {
            se: true,
            ack_req: true,
            ..bth(0x0B, 0x123, 0x457)
        },
        reth: Some(reth::Repr {
            va: 0x7F00_1234_5678,
            rkey: 0xCAFE_BABE,
            dma_len: 5,
        }),
        aeth: None,
        imm: Some(0xDEAD_BEEF),
        payload: vec![1, 2, 3, 4, 5],
    }
}

fn read_req_v4_repr() -> RoceRepr {
    RoceRepr {
        eth: ethernet::Repr {
            dst: 0x10_22_33_44_55_66,
            src: 0x02_AA_BB_CC_DD_EE,
            vlan: None,
        },
        ip: IpRepr::V4(ipv4::Repr {
            src: Ipv4Addr::new(192, 168, 1, 1),
            dst: Ipv4Addr::new(192, 168, 1, 2),
            dscp: 26,
            ecn: 2,
            ident: 0,
            dont_frag: true,
            ttl: 64,
        }),
        udp: udp::Repr {
            src_port: 49152,
            checksum: 0,
        },
        bth: bth::Repr {
            ack_req: true,
            ..bth(0x0C, 0x11, 0x100)
        },
        reth: Some(reth::Repr {
            va: 0x1000,
            rkey: 0x100,
            dma_len: 0x2000,
        }),
        aeth: None,
        imm: None,
        payload: vec![],
    }
}

#[test]
fn hand_written_frames_parse_and_emit() {
    for (text, repr) in [
        (WRITE_IMM_V6, write_imm_v6_repr()),
        (READ_REQ_V4, read_req_v4_repr()),
    ] {
        let bytes = hex(text);
        assert_eq!(RoceRepr::parse_bytes(&bytes), Ok(repr.clone()));
        assert_eq!(repr.buffer_len(), bytes.len());
        assert_eq!(repr.to_bytes(), bytes);
    }
    assert_eq!(hex(WRITE_IMM_V6).len(), 18 + 40 + 52);
    let b = hex(WRITE_IMM_V6);
    let f = RoceFrame::new_checked(&b[..]).unwrap();
    assert_eq!(
        (f.ip_offset(), f.udp_offset(), f.bth_offset()),
        (18, 58, 66)
    );
    assert_eq!(f.bth().pad_cnt(), 3);
    assert_eq!(f.payload_and_pad(), &[1, 2, 3, 4, 5, 0, 0, 0]);
    assert_eq!(f.icrc(), 0x0DFC_E7D6);
    let b = hex(READ_REQ_V4);
    let f = RoceFrame::new_checked(&b[..]).unwrap();
    assert_eq!(f.ipv4().checksum(), 0xB6F3);
    assert_eq!(f.ipv4().compute_checksum(), 0xB6F3);
}

#[test]
fn captured_connectx_cnp_verifies() {
    let bytes = hex(CNP_CX4);
    assert_eq!(bytes.len(), 74);
    let f = RoceFrame::new_checked(&bytes[..]).unwrap();
    assert_eq!(f.icrc(), 0x2A00_FD82);
    assert_eq!(f.compute_icrc(), 0x2A00_FD82);
    let r = RoceRepr::parse(&f).unwrap();
    let want = RoceRepr {
        eth: ethernet::Repr {
            dst: 0xE41D_2DAB_2BC2,
            src: 0x7CFE_9064_3B32,
            vlan: None,
        },
        ip: IpRepr::V4(ipv4::Repr {
            src: Ipv4Addr::new(10, 0, 17, 1),
            dst: Ipv4Addr::new(10, 0, 18, 1),
            dscp: 48,
            ecn: 2,
            ident: 0x718C,
            dont_frag: true,
            ttl: 64,
        }),
        udp: udp::Repr {
            src_port: 0,
            checksum: 0,
        },
        bth: bth::Repr {
            becn: true,
            ..bth(OPCODE_CNP, 0x118, 0)
        },
        reth: None,
        aeth: None,
        imm: None,
        payload: vec![],
    };
    assert_eq!(r, want);
    // Our emit rebuilds the hardware's frame byte for byte.
    assert_eq!(want.to_bytes(), bytes);
}

#[test]
fn scapy_uc_example_verifies() {
    let bytes = hex(UC_SCAPY);
    let r = RoceRepr::parse_bytes(&bytes).unwrap();
    assert_eq!(
        (r.bth.opcode, r.bth.migreq, r.bth.dest_qp),
        (0x24, true, 211)
    );
    assert_eq!(r.bth.psn, 13_571_856);
    assert_eq!(r.udp.checksum, 0xACA2);
    assert_eq!(r.payload.len(), 18);
    assert_eq!(r.to_bytes(), bytes);
}

/// Which bits of the frame the ICRC does not cover: Ethernet (and tag), and
/// the masked fields, at offsets worked out by hand for each frame.
fn uncovered(frame: &str, i: usize, bit: u8) -> bool {
    let masked: &[(usize, u8)] = match frame {
        // Ethernet 0..14; ToS 15, TTL 22, checksum 24-25; UDP checksum
        // 40-41; BTH byte 4 at 42+4.
        "v4" => &[
            (15, 0xFF),
            (22, 0xFF),
            (24, 0xFF),
            (25, 0xFF),
            (40, 0xFF),
            (41, 0xFF),
            (46, 0xFF),
        ],
        // Ethernet+tag 0..18; IPv6 at 18: low nibble of 18, 19-21, hop
        // limit 25; UDP at 58: checksum 64-65; BTH at 66: byte 70.
        "v6" => &[
            (18, 0x0F),
            (19, 0xFF),
            (20, 0xFF),
            (21, 0xFF),
            (25, 0xFF),
            (64, 0xFF),
            (65, 0xFF),
            (70, 0xFF),
        ],
        _ => unreachable!(),
    };
    let eth = if frame == "v4" { 14 } else { 18 };
    i < eth || masked.iter().any(|&(at, m)| at == i && m & bit != 0)
}

#[test]
fn every_covered_bit_fails_the_icrc_and_no_masked_bit_does() {
    for (name, text) in [("v4", CNP_CX4), ("v6", WRITE_IMM_V6)] {
        let good = hex(text);
        let (mut covered, mut masked) = (0, 0);
        for i in 0..good.len() {
            for k in 0..8 {
                let bit = 1u8 << k;
                let mut b = good.clone();
                b[i] ^= bit;
                let f = RoceFrame::new_unchecked(&b[..]);
                let ok = f.icrc() == f.compute_icrc();
                // The EtherType/TPID decide the offsets: skip flips there.
                let eth_type = if name == "v4" { 12..14 } else { 12..18 };
                if eth_type.contains(&i) {
                    continue;
                }
                if uncovered(name, i, bit) {
                    assert!(ok, "{name}: byte {i} bit {k} is not covered");
                    masked += 1;
                } else {
                    assert!(!ok, "{name}: byte {i} bit {k} is covered");
                    assert!(RoceRepr::parse_bytes(&b).is_err());
                    covered += 1;
                }
            }
        }
        assert!(covered > 400 && masked > 50, "{name}: {covered} {masked}");
    }
}

/// Rewrites the IPv4 and UDP lengths, the IPv4 checksum and the ICRC of an
/// untagged IPv4 frame after surgery, so that only the intended fault stays.
fn fix_v4(mut b: Vec<u8>) -> Vec<u8> {
    let ip_len = (b.len() - 14) as u16;
    b[16..18].copy_from_slice(&ip_len.to_be_bytes());
    b[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
    b[24..26].fill(0);
    let sum = ipv4::checksum(&b[14..34]);
    b[24..26].copy_from_slice(&sum.to_be_bytes());
    let mut f = RoceFrame::new_unchecked(&mut b[..]);
    f.fill_icrc();
    b
}

fn send_only_v4(payload: usize) -> Vec<u8> {
    let mut r = read_req_v4_repr();
    r.bth.opcode = 0x04;
    r.reth = None;
    r.payload = (1..=payload as u8).collect();
    r.to_bytes()
}

#[test]
fn errors_name_what_is_wrong() {
    use RoceError::*;
    let cnp = hex(CNP_CX4);
    let parse = |b: &[u8]| RoceRepr::parse_bytes(b).unwrap_err();

    assert_eq!(
        parse(&cnp[..10]),
        Truncated {
            layer: "Ethernet",
            len: 10,
            need: 14
        }
    );
    assert_eq!(
        parse(&cnp[..30]),
        Truncated {
            layer: "IPv4",
            len: 16,
            need: 20
        }
    );
    let mut b = cnp.clone();
    b[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(
        parse(&b),
        NotRoce {
            what: "EtherType",
            value: 0x0806
        }
    );
    let mut b = cnp.clone();
    b[23] = 6;
    assert_eq!(
        parse(&b),
        NotRoce {
            what: "IP protocol",
            value: 6
        }
    );
    let mut b = cnp.clone();
    b[37] = 0xB6; // 4790
    assert_eq!(
        parse(&b),
        NotRoce {
            what: "UDP destination port",
            value: 4790
        }
    );
    let mut b = cnp.clone();
    b.push(0); // e.g. MAC padding: not part of a frame handed to the MAC
    assert_eq!(
        parse(&b),
        BadLength {
            field: "IPv4 total length",
            header: 60,
            actual: 61
        }
    );
    let mut b = cnp.clone();
    b[39] = 0x29;
    assert_eq!(
        parse(&b),
        BadLength {
            field: "UDP length",
            header: 41,
            actual: 40
        }
    );
    let mut b = cnp.clone();
    b[25] = 0x62; // masked in the ICRC, so the IPv4 checksum catches it
    assert_eq!(
        parse(&b),
        BadIpv4Checksum {
            stored: 0x9162,
            computed: 0x9161
        }
    );
    let mut b = cnp.clone();
    b[60] = 1; // a CNP reserved byte
    assert_eq!(
        parse(&b),
        BadIcrc {
            stored: 0x2A00_FD82,
            computed: RoceFrame::new_unchecked(&b[..]).compute_icrc()
        }
    );
    assert_eq!(
        parse(&fix_v4(b)),
        Malformed {
            layer: "CNP",
            what: "reserved bytes after the BTH are not zero"
        }
    );
    let mut b = cnp.clone();
    b[42] = 0x15;
    assert_eq!(parse(&fix_v4(b)), UnknownOpcode(0x15));
    let mut b = cnp.clone();
    b[43] = 0x01; // TVer 1
    assert!(matches!(parse(&fix_v4(b)), Malformed { layer: "BTH", .. }));
    let mut b = cnp.clone();
    b[50] = 0x01; // reserved bit after AckReq
    assert!(matches!(parse(&fix_v4(b)), Malformed { layer: "BTH", .. }));
    let mut b = cnp.clone();
    b[14] = 0x46;
    assert!(matches!(parse(&fix_v4(b)), Malformed { layer: "IPv4", .. }));
    let mut b = cnp.clone();
    b[20] = 0x60; // DF and MF
    assert!(matches!(parse(&fix_v4(b)), Malformed { layer: "IPv4", .. }));

    // PadCnt. SEND ONLY with 5 bytes: 5 + 3 pad at 42+12 = 54..62.
    let good = send_only_v4(5);
    assert_eq!(good.len(), 14 + 20 + 8 + 12 + 8 + 4);
    assert_eq!(good[43] >> 4 & 3, 3);
    RoceRepr::parse_bytes(&good).unwrap();
    let pad = |b: Vec<u8>| match parse(&b) {
        BadPadCnt { what, .. } => what,
        e => panic!("{e}"),
    };
    let mut b = good.clone();
    b[61] = 0xAA;
    assert_eq!(pad(fix_v4(b)), "pad bytes are not zero");
    let mut b = good.clone();
    b.remove(61); // 7 bytes of payload and pad
    assert_eq!(
        pad(fix_v4(b)),
        "payload and pad are not a multiple of 4 bytes"
    );
    let mut b = good.clone();
    b[42] = 0x00; // SEND FIRST with a pad
    assert_eq!(pad(fix_v4(b)), "FIRST/MIDDLE packets are not padded");
    let mut b = send_only_v4(0);
    b[43] |= 0x20; // PadCnt 2 with no bytes
    assert_eq!(pad(fix_v4(b)), "more pad than bytes");
    let mut b = send_only_v4(0);
    b[42] = 0x11; // ACK, with 0 bytes where its AETH should be
    assert_eq!(
        parse(&fix_v4(b)),
        Truncated {
            layer: "extension headers and ICRC",
            len: 16,
            need: 20
        }
    );
    let mut b = send_only_v4(4);
    b[42] = 0x11; // ACK with AETH (the 4 bytes) and then nothing: fine
    RoceRepr::parse_bytes(&fix_v4(b)).unwrap();
    let mut b = send_only_v4(8);
    b[42] = 0x11; // ACK with 4 bytes after the AETH
    assert_eq!(pad(fix_v4(b)), "this opcode carries no payload");
}

#[test]
fn opcode_table() {
    assert_eq!(OPCODES.len(), 18 + 12 + 1);
    for rc in &OPCODES[..12] {
        let uc = opcode_info(rc.opcode | 0x20).unwrap();
        assert_eq!(uc.name, rc.name.replace("RC_", "UC_"));
        assert_eq!(
            (uc.reth, uc.aeth, uc.imm, uc.cnp_pad, uc.payload),
            (rc.reth, rc.aeth, rc.imm, rc.cnp_pad, rc.payload)
        );
    }
    let ext = |op: u8| opcode_info(op).unwrap().ext_len();
    assert_eq!(
        [
            ext(0x00),
            ext(0x06),
            ext(0x0B),
            ext(0x0C),
            ext(0x0D),
            ext(0x11),
            ext(0x81)
        ],
        [0, 16, 20, 16, 4, 4, 16]
    );
    assert!(opcode_info(0x2C).is_none() && opcode_info(0x12).is_none());
}

#[test]
fn round_trip_every_opcode_and_pad() {
    let mut n = 0;
    for info in &OPCODES {
        let lens: &[usize] = match info.payload {
            Payload::None => &[0],
            Payload::Full => &[256, 4096],
            Payload::Any => &[0, 1, 2, 3, 4, 4093, 4094, 4095, 4096],
        };
        for &len in lens {
            for (v6, tagged) in [(false, false), (false, true), (true, false), (true, true)] {
                let mut r = if v6 {
                    write_imm_v6_repr()
                } else {
                    read_req_v4_repr()
                };
                r.eth.vlan = tagged.then_some(ethernet::VlanTag {
                    pcp: 6,
                    dei: true,
                    vid: 0xFFF,
                });
                r.bth.opcode = info.opcode;
                r.reth = info.reth.then_some(reth::Repr {
                    va: u64::MAX - len as u64,
                    rkey: 7,
                    dma_len: len as u32,
                });
                r.aeth = info.aeth.then_some(aeth::Repr {
                    syndrome: 0x1F,
                    msn: 0xAB_CDEF,
                });
                r.imm = info.imm.then_some(len as u32);
                r.payload = (0..len).map(|i| (i * 13 + 5) as u8).collect();
                let b = r.to_bytes();
                let want_len = 14 + 4 * tagged as usize + if v6 { 40 } else { 20 } + 8 + 12;
                let want_len = want_len + info.ext_len() + len.div_ceil(4) * 4 + 4;
                assert_eq!(b.len(), want_len, "{}", info.name);
                assert_eq!(RoceRepr::parse_bytes(&b), Ok(r), "{}", info.name);
                n += 1;
            }
        }
    }
    assert!(n > 500);
}

#[test]
fn damaged_frames_never_panic() {
    for text in [CNP_CX4, WRITE_IMM_V6, READ_REQ_V4, UC_SCAPY] {
        let good = hex(text);
        for n in 0..good.len() {
            assert!(RoceRepr::parse_bytes(&good[..n]).is_err(), "{n} bytes");
        }
        for i in 0..good.len() {
            for v in [0x00, 0x01, 0x45, 0x7F, 0x80, 0x81, 0xFF, good[i] ^ 0x20] {
                let mut b = good.clone();
                b[i] = v;
                let _ = RoceRepr::parse_bytes(&b);
                let f = RoceFrame::new_unchecked(&b[..]);
                if f.check_len().is_ok() {
                    let _ = (f.payload(), f.cnp_pad(), f.reth(), f.aeth(), f.immdt());
                }
            }
        }
    }
}
