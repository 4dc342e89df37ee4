//! The model against docs/protocol.md section 5, rule by rule, with a minimal completer
//! written here (the testbench's root complex is independent of this one).

use rnic_model::dma_rd::{status, DmaRd, DmaRdIn, DmaRdOut, DmaRdParams};
use rnic_model::dma_wr::{DmaWr, DmaWrIn};
use rnic_model::ports::Beat;
use rnic_model::Dut;

/// An MRd as seen on rq.
#[derive(Debug, Clone, Copy)]
struct Mrd {
    four_dw: bool,
    addr: u64,
    len_dw: u32,
    first_be: u8,
    last_be: u8,
    tag: u8,
}

fn parse_mrd(d: &Beat) -> Mrd {
    let four_dw = d[0] == 0x20;
    assert!(d[0] == 0x00 || four_dw, "not an MRd: {:#x}", d[0]);
    let len = ((d[2] as u32 & 3) << 8) | d[3] as u32;
    let addr = if four_dw {
        (u32::from_be_bytes(d[8..12].try_into().unwrap()) as u64) << 32
            | u32::from_be_bytes(d[12..16].try_into().unwrap()) as u64
    } else {
        u32::from_be_bytes(d[8..12].try_into().unwrap()) as u64
    };
    Mrd {
        four_dw,
        addr,
        len_dw: if len == 0 { 1024 } else { len },
        first_be: d[7] & 0xF,
        last_be: d[7] >> 4,
        tag: d[6],
    }
}

/// Byte range an MRd asks for, from its DW address and byte enables.
fn range(m: &Mrd) -> (u64, u64) {
    let start = m.addr + m.first_be.trailing_zeros() as u64;
    let end = if m.len_dw == 1 {
        m.addr + 4 - m.first_be.leading_zeros() as u64 + 4
    } else {
        m.addr + 4 * m.len_dw as u64 - (m.last_be.leading_zeros() as u64 - 4)
    };
    (start, end)
}

fn byte_at(a: u64) -> u8 {
    (a ^ (a >> 8) ^ (a >> 16)) as u8
}

/// Completion TLP bytes for bytes `lo..hi` of a request that ends at `end`.
fn cpl(tag: u8, lo: u64, hi: u64, end: u64, st: u8, ep: bool) -> Vec<u8> {
    let dlo = lo & !3;
    let dhi = (hi + 3) & !3;
    let data = st == 0;
    let ndw = if data { ((dhi - dlo) / 4) as u32 } else { 0 };
    let bc = (end - lo) as u32;
    let mut t = vec![
        if data { 0x4A } else { 0x0A },
        0,
        ((ndw >> 8) & 3) as u8 | if ep { 0x40 } else { 0 },
        ndw as u8,
        0,
        0,
        (st << 5) | ((bc >> 8) & 0xF) as u8,
        bc as u8,
        0x01,
        0x00,
        tag,
        (lo & 0x7F) as u8,
    ];
    if data {
        t.extend((dlo..dhi).map(byte_at));
    }
    t
}

struct Bench {
    rd: DmaRd,
    out: DmaRdOut,
    cycle: u64,
    mrds: Vec<Mrd>,
    beats: Vec<(Beat, u64, bool, u8)>,
    to_send: std::collections::VecDeque<Vec<u8>>,
    cur: Vec<(Beat, u64, bool, bool)>,
}

impl Bench {
    fn new(p: DmaRdParams) -> Self {
        let mut rd = DmaRd::new(p);
        let out = rd.reset();
        Bench {
            rd,
            out,
            cycle: 0,
            mrds: Vec::new(),
            beats: Vec::new(),
            to_send: Default::default(),
            cur: Vec::new(),
        }
    }

    /// One cycle; `req` offered until taken. Returns whether it was taken.
    fn tick(&mut self, mrrs_enc: u8, timeout: u32, req: Option<(u64, u32)>) -> bool {
        let mut i = DmaRdIn {
            cfg_mrrs: mrrs_enc,
            cfg_req_id: 0x0100,
            cfg_cpl_timeout: timeout,
            rd_data_ready: true,
            rq_ready: true,
            ..Default::default()
        };
        let mut taken = false;
        if let Some((a, l)) = req {
            i.rd_req_valid = true;
            i.rd_req_addr = a;
            i.rd_req_len = l;
            taken = self.out.rd_req_ready;
        }
        if self.out.rq_valid {
            self.mrds.push(parse_mrd(&self.out.rq_data));
        }
        if self.out.rd_data_valid {
            let o = &self.out;
            self.beats
                .push((o.rd_data, o.rd_data_keep, o.rd_data_last, o.rd_data_status));
        }
        if self.cur.is_empty() {
            if let Some(t) = self.to_send.pop_front() {
                let n = t.len().div_ceil(64);
                for k in 0..n {
                    let mut b = Beat::default();
                    let chunk = &t[64 * k..t.len().min(64 * k + 64)];
                    b[..chunk.len()].copy_from_slice(chunk);
                    let keep = if chunk.len() == 64 {
                        u64::MAX
                    } else {
                        (1 << chunk.len()) - 1
                    };
                    self.cur.push((b, keep, k == 0, k == n - 1));
                }
                self.cur.reverse();
            }
        }
        if let Some(&(d, k, s, e)) = self.cur.last() {
            if self.out.rc_ready {
                i.rc_valid = true;
                i.rc_data = d;
                i.rc_keep = k;
                i.rc_sop = s;
                i.rc_eop = e;
                self.cur.pop();
            }
        }
        self.out = self.rd.tick(&i);
        self.cycle += 1;
        taken
    }

    /// Bytes of all beats received, keep-masked.
    fn bytes(&self) -> Vec<u8> {
        self.beats
            .iter()
            .flat_map(|(d, k, _, _)| (0..64).filter(move |i| k >> i & 1 != 0).map(move |i| d[i]))
            .collect()
    }
}

#[test]
fn mrds_obey_mrrs_4kb_header_and_byte_enable_rules() {
    for mrrs_enc in 0..6u8 {
        let mrrs = 128u64 << mrrs_enc;
        for &(addr, len) in &[
            (0x1000u64, 1u32),
            (0x1003, 2),
            (0x1FFF, 2),
            (0x2005, 9000),
            (0xFFFF_FF00, 512),
            (0x1_0000_0001, 700),
        ] {
            // Enough tags and buffer that no completion is needed to issue all.
            let mut b = Bench::new(DmaRdParams {
                tags: 256,
                buf_lines: 1024,
            });
            let mut pending = Some((addr, len));
            for _ in 0..200 {
                if b.tick(mrrs_enc, 1 << 20, pending) {
                    pending = None;
                }
            }
            let mut next = addr;
            for m in &b.mrds {
                let (s, e) = range(m);
                assert_eq!(s, next, "MRds cover the request in order");
                next = e;
                assert!(m.len_dw as u64 * 4 <= mrrs, "{m:?} over MRRS {mrrs}");
                assert_eq!(
                    m.addr >> 12,
                    (m.addr + 4 * m.len_dw as u64 - 1) >> 12,
                    "{m:?} crosses 4 KB"
                );
                assert_eq!(m.four_dw, m.addr >> 32 != 0, "{m:?}: 3-DW iff below 4 GB");
                assert_ne!(m.first_be, 0);
                assert_eq!(m.len_dw == 1, m.last_be == 0, "{m:?}: last BE 0 iff 1 DW");
            }
            assert_eq!(next, addr + len as u64, "MRds cover the whole request");
        }
    }
}

#[test]
fn completions_split_at_rcb_and_interleaved_across_tags_return_in_order() {
    let mut b = Bench::new(DmaRdParams::default());
    let (addr, len) = (0x4003u64, 1500u32);
    let mut pending = Some((addr, len));
    for _ in 0..20 {
        if b.tick(1, 1 << 20, pending) {
            pending = None;
        }
    }
    // MRRS 256: six MRds. Answer them newest first, each in 64-byte (RCB)
    // pieces, alternating between two tags.
    let mut queues: Vec<Vec<Vec<u8>>> = b
        .mrds
        .iter()
        .rev()
        .map(|m| {
            let (s, e) = range(m);
            let mut v = Vec::new();
            let mut lo = s;
            while lo < e {
                let hi = e.min((lo / 64 + 1) * 64);
                v.push(cpl(m.tag, lo, hi, e, 0, false));
                lo = hi;
            }
            v
        })
        .collect();
    while queues.iter().any(|q| !q.is_empty()) {
        for q in queues.iter_mut() {
            if !q.is_empty() {
                b.to_send.push_back(q.remove(0));
            }
        }
    }
    for _ in 0..400 {
        b.tick(1, 1 << 20, None);
    }
    let want: Vec<u8> = (addr..addr + len as u64).map(byte_at).collect();
    assert_eq!(b.bytes(), want);
    assert!(b.beats.last().unwrap().2, "last beat flagged");
    assert_eq!(b.beats.last().unwrap().3, status::OK);
    assert_eq!(b.out.stat_tags_busy, 0);
}

#[test]
fn no_mrd_without_a_free_tag_or_reserved_completion_space() {
    // 4 tags: the fifth MRd waits for a completion.
    let mut b = Bench::new(DmaRdParams {
        tags: 4,
        buf_lines: 256,
    });
    let mut pending = Some((0x8000u64, 4096u32));
    for _ in 0..100 {
        if b.tick(0, 1 << 20, pending) {
            pending = None;
        }
    }
    assert_eq!(b.mrds.len(), 4);
    // 64 lines of buffer, MRRS 4096 at an offset: the first MRd takes 63
    // lines, the second (64 lines) does not fit until the first is read out.
    let mut b = Bench::new(DmaRdParams {
        tags: 8,
        buf_lines: 64,
    });
    let mut pending = Some((0x9040u64, 8192u32));
    for _ in 0..100 {
        if b.tick(5, 1 << 20, pending) {
            pending = None;
        }
    }
    assert_eq!(b.mrds.len(), 1);
    assert_eq!(b.out.stat_free_lines, 1);
}

#[test]
fn failures_reach_the_client_as_status_never_as_data() {
    for (st, ep, drop, want) in [
        (1u8, false, false, status::UR),
        (4, false, false, status::CA),
        (0, true, false, status::POISONED),
        (0, false, true, status::TIMEOUT),
    ] {
        let mut b = Bench::new(DmaRdParams::default());
        let mut pending = Some((0x2000u64, 100u32));
        for _ in 0..10 {
            if b.tick(2, 300, pending) {
                pending = None;
            }
        }
        let m = b.mrds[0];
        let (s, e) = range(&m);
        if !drop {
            b.to_send.push_back(cpl(m.tag, s, e, e, st, ep));
        }
        for _ in 0..400 {
            b.tick(2, 300, None);
        }
        assert_eq!(b.beats.len(), 2, "full beat count even on failure");
        assert_eq!(b.beats[1].3, want);
        assert!(b.bytes().iter().all(|&x| x == 0), "failed data is zeroed");
        assert_eq!(b.out.stat_tags_busy, 0, "tag freed");
        assert_eq!(b.out.cnt_cpl_timeout, drop as u32);
    }
}

#[test]
fn writes_obey_mps_and_4kb() {
    for mps_enc in 0..6u8 {
        let mps = 128u64 << mps_enc;
        let mut w = DmaWr::new();
        let mut out = w.reset();
        let (addr, len) = (0x3FFDu64, 5000u32);
        let (mut req, mut beat) = (true, 0u32);
        let mut tlps: Vec<Vec<u8>> = Vec::new();
        let mut cur = Vec::new();
        for _ in 0..400 {
            let mut i = DmaWrIn {
                cfg_mps: mps_enc,
                rq_ready: true,
                ..Default::default()
            };
            if req {
                i.wr_req_valid = true;
                i.wr_req_addr = addr;
                i.wr_req_len = len;
                req = !out.wr_req_ready;
            }
            if beat < len.div_ceil(64) {
                i.wr_data_valid = true;
                for k in 0..64 {
                    i.wr_data[k] = byte_at(addr + (beat * 64) as u64 + k as u64);
                }
                beat += out.wr_data_ready as u32;
            }
            if out.rq_valid {
                let n = out.rq_keep.count_ones() as usize;
                cur.extend_from_slice(&out.rq_data[..n]);
                if out.rq_eop {
                    tlps.push(std::mem::take(&mut cur));
                }
            }
            out = w.tick(&i);
        }
        let mut next = addr;
        for t in &tlps {
            let ndw = ((t[2] as u64 & 3) << 8) | t[3] as u64;
            let ndw = if ndw == 0 { 1024 } else { ndw };
            let a = u32::from_be_bytes(t[8..12].try_into().unwrap()) as u64;
            assert_eq!(t[0], 0x40, "3-DW MWr");
            assert_eq!(t.len() as u64, 12 + 4 * ndw, "payload length = Length");
            assert!(4 * ndw <= mps, "MWr over MPS {mps}");
            assert_eq!(a >> 12, (a + 4 * ndw - 1) >> 12, "MWr crosses 4 KB");
            let fbe = t[7] & 0xF;
            let start = a + fbe.trailing_zeros() as u64;
            assert_eq!(start, next);
            for (k, &x) in t[12..].iter().enumerate() {
                let ba = a + k as u64;
                if ba >= start && ba < addr + len as u64 && (k >= 4 || fbe >> k & 1 != 0) {
                    assert_eq!(x, byte_at(ba), "byte at {ba:#x}");
                }
            }
            next = (a + 4 * ndw).min(addr + len as u64);
        }
        assert_eq!(next, addr + len as u64);
    }
}
