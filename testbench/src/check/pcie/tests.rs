use super::*;
use crate::wire::tlp::field;

const RID: u16 = 0x0300;

fn checker() -> PcieChecker {
    PcieChecker::new(PcieCheckerConfig {
        requester_id: RID,
        mrrs: 512,
        mps: 256,
        cpl_timeout: Some(1000),
    })
}

fn mrd(tag: u8, addr: u64, len: u32) -> Vec<u8> {
    TlpRepr::mem_read(RID, tag, addr, len).to_bytes()
}

/// A well-formed request, edited by `f` through the raw view.
fn edited(mut b: Vec<u8>, f: impl FnOnce(&mut Tlp<&mut [u8]>)) -> Vec<u8> {
    f(&mut Tlp::new_unchecked(&mut b[..]));
    b
}

fn only(c: &mut PcieChecker, b: &[u8]) -> PcieViolation {
    let mut v = c.check_request(0, b).unwrap_err();
    assert_eq!(v.len(), 1, "{v:?}");
    v.remove(0)
}

#[test]
fn good_requests_pass() {
    let mut c = checker();
    c.check_request(0, &mrd(1, 0x1000, 512)).unwrap();
    c.check_request(0, &mrd(2, 0x2_0000_0FFF, 1)).unwrap();
    let w = TlpRepr::mem_write(RID, 0, 0x3FFE, &[1, 2]).to_bytes();
    c.check_request(0, &w).unwrap();
    let w = TlpRepr::mem_write(RID, 0, 0x3002, &[0; 254]).to_bytes();
    c.check_request(0, &w).unwrap();
    assert_eq!(c.outstanding(), 2);
}

#[test]
fn malformed_and_wrong_kind() {
    let mut c = checker();
    let mut short = TlpRepr::mem_write(RID, 0, 0x100, &[1; 8]).to_bytes();
    short.pop();
    assert!(matches!(
        only(&mut c, &short),
        PcieViolation::Malformed(TlpError::LengthMismatch {
            expected: 20,
            actual: 19
        })
    ));
    assert!(matches!(
        only(&mut c, &[0x44, 0, 0, 1]),
        PcieViolation::Malformed(TlpError::BadFmtType(0x44))
    ));
    let cpl = TlpRepr::Completion {
        status: CplStatus::Ur,
        byte_count: 4,
        lower_address: 0,
        requester_id: RID,
        completer_id: 0,
        tag: 0,
        poisoned: false,
        data: None,
    };
    assert_eq!(only(&mut c, &cpl.to_bytes()), PcieViolation::NotARequest);
    assert_eq!(
        c.check_completion(0, &mrd(1, 0, 4)),
        Err(vec![PcieViolation::NotACompletion])
    );
}

#[test]
fn four_dw_below_4g() {
    // Hand-built 4-DW MRd for 0x1000: Fmt 001 -> byte 0 = 0x20, address in
    // bytes 8..16.
    let mut b = vec![0u8; field::HEADER_4DW];
    let mut t = Tlp::new_unchecked(&mut b[..]);
    t.set_fmt_type(0x20);
    t.set_length_dw(1);
    t.set_requester_id(RID);
    t.set_first_be(0xF);
    t.set_address(0x1000);
    assert_eq!(
        only(&mut checker(), &b),
        PcieViolation::FourDwBelow4G(0x1000)
    );
}

#[test]
fn digest_and_poison() {
    let mut b = edited(mrd(1, 0x40, 4), |t| t.set_td(true));
    b.extend([0; 4]); // the digest DW the TD bit announces
    assert_eq!(only(&mut checker(), &b), PcieViolation::Digest);
    let w = TlpRepr::mem_write(RID, 0, 0x40, &[1; 4]).to_bytes();
    let w = edited(w, |t| t.set_ep(true));
    assert_eq!(only(&mut checker(), &w), PcieViolation::PoisonedRequest);
}

#[test]
fn byte_enable_rules() {
    let mut c = checker();
    let b = edited(mrd(1, 0x40, 4), |t| t.set_first_be(0));
    assert_eq!(only(&mut c, &b), PcieViolation::FirstBeZero);
    let b = edited(mrd(2, 0x40, 4), |t| t.set_last_be(0xF));
    assert_eq!(only(&mut c, &b), PcieViolation::LastBeNotZero(0xF));
    let b = edited(mrd(3, 0x40, 8), |t| t.set_last_be(0));
    assert_eq!(only(&mut c, &b), PcieViolation::LastBeZero(2));
    // Holes: legal PCIe for short requests, forbidden here.
    let b = edited(mrd(4, 0x40, 4), |t| t.set_first_be(0b0101));
    assert!(matches!(
        only(&mut c, &b),
        PcieViolation::BeNotContiguous { first: 5, .. }
    ));
    // First BE not reaching byte 3 of a multi-DW request.
    let b = edited(mrd(5, 0x40, 8), |t| t.set_first_be(0b0011));
    assert!(matches!(
        only(&mut c, &b),
        PcieViolation::BeNotContiguous { .. }
    ));
    // Last BE not starting at byte 0.
    let b = edited(mrd(6, 0x40, 12), |t| t.set_last_be(0b1100));
    assert!(matches!(
        only(&mut c, &b),
        PcieViolation::BeNotContiguous { last: 0xC, .. }
    ));
    // Bytes 3..=4 straddling two DWs are contiguous.
    c.check_request(0, &mrd(7, 0x43, 2)).unwrap();
}

#[test]
fn size_limits() {
    let mut c = checker();
    c.check_request(0, &mrd(1, 0x1000, 512)).unwrap();
    assert_eq!(
        only(&mut c, &mrd(2, 0x2000, 516)),
        PcieViolation::ReadTooLarge {
            length_dw: 129,
            mrrs: 512
        }
    );
    // 512 bytes from an unaligned address need 129 DW.
    assert!(matches!(
        only(&mut c, &mrd(3, 0x2002, 512)),
        PcieViolation::ReadTooLarge { .. }
    ));
    let w = TlpRepr::mem_write(RID, 0, 0x3000, &[0; 260]).to_bytes();
    assert_eq!(
        only(&mut c, &w),
        PcieViolation::WriteTooLarge {
            length_dw: 65,
            mps: 256
        }
    );
}

#[test]
fn four_kb_boundary() {
    let mut c = checker();
    c.check_request(0, &mrd(1, 0x1E00, 512)).unwrap();
    assert_eq!(
        only(&mut c, &mrd(2, 0x1F00, 512)),
        PcieViolation::Crosses4k {
            address: 0x1F00,
            length_dw: 128
        }
    );
    let w = TlpRepr::mem_write(RID, 0, 0x1_0000_0FFE, &[1; 4]).to_bytes();
    assert!(matches!(only(&mut c, &w), PcieViolation::Crosses4k { .. }));
}

#[test]
fn requester_id() {
    let b = TlpRepr::mem_read(0x0301, 1, 0x40, 4).to_bytes();
    assert_eq!(
        only(&mut checker(), &b),
        PcieViolation::RequesterId {
            got: 0x0301,
            want: RID
        }
    );
}

fn cpld(tag: u8, byte_count: u16, lower_address: u8, dws: usize) -> Vec<u8> {
    TlpRepr::Completion {
        status: CplStatus::Sc,
        byte_count,
        lower_address,
        requester_id: RID,
        completer_id: 0,
        tag,
        poisoned: false,
        data: Some(vec![0; dws * 4]),
    }
    .to_bytes()
}

#[test]
fn tags_reuse_and_release() {
    let mut c = checker();
    c.check_request(10, &mrd(5, 0x1000, 200)).unwrap();
    assert_eq!(
        only(&mut c, &mrd(5, 0x2000, 4)),
        PcieViolation::TagInUse { tag: 5, since: 10 }
    );
    // The violating re-issue (4 bytes) is what is tracked now.
    c.check_request(20, &mrd(6, 0x1002, 6)).unwrap();
    c.check_completion(30, &cpld(5, 4, 0, 1)).unwrap();
    c.check_request(31, &mrd(5, 0x2000, 4)).unwrap();
    // Tag 6: 6 bytes from offset 2 need 2 DW; one CplD finishes it.
    c.check_completion(40, &cpld(6, 6, 2, 2)).unwrap();
    assert_eq!(
        c.check_completion(41, &cpld(6, 6, 2, 2)),
        Err(vec![PcieViolation::UnexpectedCompletion(6)])
    );
    // Split completions: not released until the last one.
    c.check_request(50, &mrd(7, 0x1040, 200)).unwrap();
    c.check_completion(60, &cpld(7, 200, 0x40, 16)).unwrap();
    assert_eq!(
        only(&mut c, &mrd(7, 0, 4)),
        PcieViolation::TagInUse { tag: 7, since: 50 }
    );
    // The violating re-issue replaced the tracking; one full CplD frees it.
    c.check_completion(61, &cpld(7, 4, 0x00, 1)).unwrap();
    c.check_request(62, &mrd(7, 0x1040, 4)).unwrap();
    // UR frees the tag too.
    let ur = TlpRepr::Completion {
        status: CplStatus::Ur,
        byte_count: 4,
        lower_address: 0x40,
        requester_id: RID,
        completer_id: 0,
        tag: 7,
        poisoned: false,
        data: None,
    };
    c.check_completion(70, &ur.to_bytes()).unwrap();
    assert!(c.release_tag(5));
    assert_eq!(c.outstanding(), 0);
    c.finish().unwrap();
}

#[test]
fn dropped_tags_and_leaks() {
    let mut c = checker();
    c.check_request(100, &mrd(1, 0x1000, 64)).unwrap();
    c.check_request(100, &mrd(2, 0x2000, 64)).unwrap();
    assert!(c.mark_dropped(1));
    assert!(!c.mark_dropped(9));
    assert_eq!(
        only(&mut c, &mrd(1, 0x1000, 64)),
        PcieViolation::TagReusedBeforeTimeout {
            tag: 1,
            since: 100,
            cycle: 0,
            timeout: 1000
        }
    );
    assert!(c.mark_dropped(1)); // the early re-issue is dropped too
    c.check_request(1100, &mrd(1, 0x1000, 64)).unwrap();
    assert!(c.mark_dropped(1));
    assert_eq!(
        c.finish(),
        Err(vec![PcieViolation::TagLeak { tag: 2, since: 100 }])
    );
    // Without a known timeout a dropped tag may be reused at once.
    let mut c = PcieChecker::new(PcieCheckerConfig {
        cpl_timeout: None,
        ..c.cfg.clone()
    });
    c.check_request(0, &mrd(3, 0, 4)).unwrap();
    c.mark_dropped(3);
    c.check_request(1, &mrd(3, 0, 4)).unwrap();
}

/// The intended use: feed the root complex's log, tell about drops.
#[test]
fn checks_a_root_complex_log() {
    use crate::env::{Fault, FaultKind, HostMemory, RootComplex, RootComplexConfig, RqIn};
    let mut rc = RootComplex::new(RootComplexConfig {
        latency: 2,
        faults: vec![Fault {
            range: 0x8000..0x9000,
            kind: FaultKind::Drop,
        }],
        ..RootComplexConfig::default()
    })
    .unwrap();
    let mut mem = HostMemory::new();
    let tlps = [
        mrd(1, 0x1000, 512),
        mrd(2, 0x8000, 64),
        TlpRepr::mem_write(RID, 0, 0x2001, &[7; 200]).to_bytes(),
        mrd(3, 0x2000, 300),
    ];
    let mut beats: Vec<_> = tlps.iter().flat_map(|t| crate::wire::to_beats(t)).collect();
    beats.reverse();
    let mut out = rc.outputs();
    for _ in 0..300 {
        let rq = beats.last().map_or(RqIn::default(), |b| RqIn {
            valid: true,
            data: b.data,
            keep: b.keep,
            sop: b.sop,
            eop: b.eop,
        });
        if rq.valid && out.rq_ready {
            beats.pop();
        }
        out = rc.step(&rq, true, &mut mem);
    }
    let mut c = checker();
    for e in rc.log() {
        c.check_log_entry(e).unwrap();
    }
    assert_eq!(
        c.finish(),
        Err(vec![PcieViolation::TagLeak { tag: 2, since: 1 }])
    );
    for &(_, tag) in rc.dropped() {
        assert!(c.mark_dropped(tag));
    }
    c.finish().unwrap();
    assert_eq!(c.requests_checked(), 4);
}

#[test]
fn one_run_helper() {
    let runs: Vec<u8> = (0..16).filter(|&b| one_run(b)).collect();
    assert_eq!(runs, vec![1, 2, 3, 4, 6, 7, 8, 12, 14, 15]);
}
