//! Whole frames as literal bytes, shared by the tests of [`super::icrc`]
//! and of the frame view and Repr: one captured from hardware, one from
//! scapy's tests, two written out by hand from docs/tx_datapath.md.

use std::net::Ipv4Addr;

use super::{bth, ethernet, ipv4, ipv6, reth, udp, IpRepr, RoceRepr};

/// Hex (whitespace ignored) to bytes.
pub fn hex(s: &str) -> Vec<u8> {
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
pub const CNP_CX4: &str = "
    e41d 2dab 2bc2 7cfe 9064 3b32 0800 45c2
    003c 718c 4000 4011 9161 0a00 1101 0a00
    1201 0000 12b7 0028 0000 8100 ffff 4000
    0118 0000 0000 0000 0000 0000 0000 0000
    0000 0000 0000 82fd 002a";

// scapy's "an example UC packet" (same file), UC SEND ONLY with M set and
// PadCnt 2; its IPv4 checksum (0xb4d5), UDP checksum (0xaca2) and ICRC
// (78 f3 53 f3) are the values scapy's test asserts.
pub const UC_SCAPY: &str = "
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
pub const WRITE_IMM_V6: &str = "
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
pub const READ_REQ_V4: &str = "
    102233445566 02aabbccddee 0800
    45 6a 003c 0000 4000 40 11 b6f3 c0a80101 c0a80102
    c000 12b7 0028 0000
    0c 00 ffff 00 000011 80 000100
    0000000000001000 00000100 00002000
    d9d5c95f";

pub fn bth(opcode: u8, dest_qp: u32, psn: u32) -> bth::Repr {
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

pub fn write_imm_v6_repr() -> RoceRepr {
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

pub fn read_req_v4_repr() -> RoceRepr {
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
