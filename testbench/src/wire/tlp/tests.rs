use super::*;

// 3-DW MRd, 64 bytes at 0x1234_5678, requester 01:00.0, tag 0x2A.
//   DW0: Fmt=000 Type=00000 -> 0x00; TC/Attr2 0x00; TD/EP/Attr/AT/Len[9:8]
//        0x00; Length 16 DW -> 0x10
//   DW1: Requester ID 0x0100 -> 01 00; Tag 2A; LastBE F FirstBE F -> FF
//   DW2: Address 0x12345678 (PH 00) -> 12 34 56 78
const MRD_3DW: [u8; 12] = [
    0x00, 0x00, 0x00, 0x10, 0x01, 0x00, 0x2A, 0xFF, 0x12, 0x34, 0x56, 0x78,
];

// 4-DW MRd, 5 bytes at 0x1_0000_0102, requester 0xABCD, tag 0xFF.
//   Bytes 0x102..=0x106: DW 0x100 bytes 2,3 -> FirstBE 1100 = C;
//   DW 0x104 bytes 0,1,2 -> LastBE 0111 = 7; Length 2.
//   DW0: Fmt=001 Type=00000 -> 0x20; 00; 00; 02
//   DW1: AB CD; FF; 7C
//   DW2-3: address 0x0000_0001_0000_0100 -> 00 00 00 01 00 00 01 00
const MRD_4DW: [u8; 16] = [
    0x20, 0x00, 0x00, 0x02, 0xAB, 0xCD, 0xFF, 0x7C, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00,
];

// 3-DW MWr of 11 22 33 44 55 66 at 0x1001, requester 0x0008, tag 5.
//   Bytes 0x1001..=0x1006: FirstBE 1110 = E, LastBE 0111 = 7, Length 2.
//   DW0: Fmt=010 Type=00000 -> 0x40; 00; 00; 02
//   DW1: 00 08; 05; 7E      DW2: 00 00 10 00
//   Payload DW0 = DW at 0x1000: [pad 11 22 33], DW1 = [44 55 66 pad]
const MWR: [u8; 20] = [
    0x40, 0x00, 0x00, 0x02, 0x00, 0x08, 0x05, 0x7E, 0x00, 0x00, 0x10, 0x00, 0x00, 0x11, 0x22, 0x33,
    0x44, 0x55, 0x66, 0x00,
];

// CplD, completer 0x0000, requester 0x0100, tag 0x2A, status SC, carrying
// the 2 bytes BE EF at 0x207E..0x2080 of a request with 258 (0x102) bytes
// still to come: Lower Address 0x7E, 1 DW payload, data at byte 2.
//   DW0: Fmt=010 Type=01010 -> 0x4A; 00; 00; Length 1 -> 01
//   DW1: 00 00; Status 000 BCM 0 BC[11:8]=1 -> 01; BC[7:0] -> 02
//   DW2: 01 00; 2A; R=0 LowerAddress 0x7E -> 7E
//   Payload: 00 00 BE EF
const CPLD: [u8; 16] = [
    0x4A, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x02, 0x01, 0x00, 0x2A, 0x7E, 0x00, 0x00, 0xBE, 0xEF,
];

// Cpl with UR, completer 0x0010, requester 0x0100, tag 7, for a 4096-byte
// request at ...0x10: Byte Count 4096 is encoded as 0.
//   DW0: Fmt=000 Type=01010 -> 0x0A; 00; 00; Length (reserved) 00
//   DW1: 00 10; Status 001 << 5 = 0x20 | BC[11:8]=0 -> 20; 00
//   DW2: 01 00; 07; 10
const CPL_UR: [u8; 12] = [
    0x0A, 0x00, 0x00, 0x00, 0x00, 0x10, 0x20, 0x00, 0x01, 0x00, 0x07, 0x10,
];

#[test]
fn mrd_3dw() {
    let t = Tlp::new_checked(&MRD_3DW[..]).unwrap();
    assert_eq!((t.fmt(), t.tlp_type(), t.header_len()), (0, 0, 12));
    assert_eq!(
        (t.length_dw(), t.tag(), t.requester_id()),
        (16, 0x2A, 0x0100)
    );
    assert_eq!(
        (t.first_be(), t.last_be(), t.address()),
        (0xF, 0xF, 0x1234_5678)
    );
    let r = TlpRepr::mem_read(0x0100, 0x2A, 0x1234_5678, 64);
    assert_eq!(TlpRepr::parse(&t).unwrap(), r);
    assert_eq!(r.to_bytes(), MRD_3DW);
    assert_eq!(r.byte_range(), Some((0x1234_5678, 64)));
}

#[test]
fn mrd_4dw() {
    let t = Tlp::new_checked(&MRD_4DW[..]).unwrap();
    assert_eq!((t.fmt(), t.header_len(), t.length_dw()), (1, 16, 2));
    assert_eq!((t.first_be(), t.last_be()), (0xC, 0x7));
    assert_eq!(t.address(), 0x1_0000_0100);
    let r = TlpRepr::mem_read(0xABCD, 0xFF, 0x1_0000_0102, 5);
    assert_eq!(TlpRepr::parse(&t).unwrap(), r);
    assert_eq!(r.to_bytes(), MRD_4DW);
    assert_eq!(r.byte_range(), Some((0x1_0000_0102, 5)));
}

#[test]
fn mwr_with_payload() {
    let t = Tlp::new_checked(&MWR[..]).unwrap();
    assert_eq!((t.fmt(), t.has_data(), t.length_dw()), (2, true, 2));
    assert_eq!(t.payload(), &MWR[12..]);
    let r = TlpRepr::mem_write(0x0008, 5, 0x1001, &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66]);
    assert_eq!(TlpRepr::parse(&t).unwrap(), r);
    assert_eq!(r.to_bytes(), MWR);
    assert_eq!(r.byte_range(), Some((0x1001, 6)));
}

#[test]
fn cpld() {
    let t = Tlp::new_checked(&CPLD[..]).unwrap();
    assert!(t.is_completion());
    assert_eq!(
        (t.byte_count(), t.lower_address(), t.status()),
        (0x102, 0x7E, 0)
    );
    assert_eq!(
        (t.requester_id(), t.tag(), t.completer_id()),
        (0x0100, 0x2A, 0)
    );
    let r = TlpRepr::Completion {
        status: CplStatus::Sc,
        byte_count: 0x102,
        lower_address: 0x7E,
        requester_id: 0x0100,
        completer_id: 0,
        tag: 0x2A,
        poisoned: false,
        data: Some(vec![0, 0, 0xBE, 0xEF]),
    };
    assert_eq!(TlpRepr::parse(&t).unwrap(), r);
    assert_eq!(r.to_bytes(), CPLD);
    assert_eq!(r.completion_bytes(), &[0xBE, 0xEF]);
}

#[test]
fn cpl_ur() {
    let t = Tlp::new_checked(&CPL_UR[..]).unwrap();
    assert_eq!(
        (t.status(), t.byte_count(), t.lower_address()),
        (1, 4096, 0x10)
    );
    let r = TlpRepr::Completion {
        status: CplStatus::Ur,
        byte_count: 4096,
        lower_address: 0x10,
        requester_id: 0x0100,
        completer_id: 0x0010,
        tag: 7,
        poisoned: false,
        data: None,
    };
    assert_eq!(TlpRepr::parse(&t).unwrap(), r);
    assert_eq!(r.to_bytes(), CPL_UR);
}

#[test]
fn flag_setters_hit_their_bits() {
    let mut b = MRD_3DW;
    let mut t = Tlp::new_unchecked(&mut b[..]);
    t.set_tc(7);
    t.set_attr(0b101);
    t.set_td(true);
    t.set_ep(true);
    t.set_length_dw(1024);
    // byte 1: TC 111 << 4 | Attr[2] << 2 = 0x74; byte 2: TD EP Attr[1:0]=01.
    assert_eq!(&b[..4], &[0x00, 0x74, 0xD0, 0x00]);
    let t = Tlp::new_unchecked(&b[..]);
    assert_eq!((t.tc(), t.attr(), t.td(), t.ep()), (7, 0b101, true, true));
    assert_eq!(t.length_dw(), 1024);
}

#[test]
fn length_checks() {
    assert_eq!(
        Tlp::new_checked(&MRD_3DW[..8]).unwrap_err(),
        TlpError::Truncated { len: 8, need: 12 }
    );
    assert_eq!(
        Tlp::new_checked(&MWR[..19]).unwrap_err(),
        TlpError::LengthMismatch {
            expected: 20,
            actual: 19
        }
    );
    assert_eq!(
        Tlp::new_checked(&[0x04u8, 0, 0, 1][..]).unwrap_err(),
        TlpError::BadFmtType(0x04)
    );
    assert!(Tlp::new_checked(&[][..]).is_err());
    let mut bad = CPL_UR;
    bad[6] = 0x60; // status 011, reserved
    assert_eq!(TlpRepr::parse_bytes(&bad), Err(TlpError::BadStatus(3)));
}

#[test]
fn byte_enables_edge_cases() {
    // One byte at offset 3: a single DW, FirstBE 1000, LastBE 0.
    assert_eq!(byte_enables(0x13, 1), (1, 0x8, 0));
    // Four bytes straddling a DW boundary: two DWs.
    assert_eq!(byte_enables(0x2, 4), (2, 0xC, 0x3));
    // Zero-length request.
    assert_eq!(byte_enables(0x13, 0), (1, 0, 0));
    let z = TlpRepr::mem_read(1, 2, 0x13, 0);
    assert_eq!(z.byte_range(), Some((0x10, 1)), "PCIe counts it as 1 byte");
    // 4096 aligned bytes: Length 1024 (encoded 0).
    assert_eq!(byte_enables(0x1000, 4096), (1024, 0xF, 0xF));
    let r = TlpRepr::mem_read(1, 2, 0x1000, 4096);
    assert_eq!(&r.to_bytes()[..4], &[0, 0, 0, 0]);
    assert_eq!(TlpRepr::parse_bytes(&r.to_bytes()).unwrap(), r);
}
