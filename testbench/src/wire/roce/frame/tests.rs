use std::net::Ipv4Addr;

use crate::wire::roce::testdata::*;
use crate::wire::roce::*;

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
