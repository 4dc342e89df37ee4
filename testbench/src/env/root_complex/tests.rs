use super::*;
use crate::env::pattern_bytes;

/// A stand-in DUT: sends queued TLPs on rq, collects rc TLPs.
struct Harness {
    rc: RootComplex,
    mem: HostMemory,
    out: RootComplexOut,
    to_send: VecDeque<StreamBeat>,
    rx: Deframer,
    got: Vec<(u64, TlpRepr)>,
    rc_valid_cycles: Vec<u64>,
}

impl Harness {
    fn new(cfg: RootComplexConfig) -> Self {
        let rc = RootComplex::new(cfg).unwrap();
        Harness {
            out: rc.outputs(),
            rc,
            mem: HostMemory::new(),
            to_send: VecDeque::new(),
            rx: Deframer::new(),
            got: Vec::new(),
            rc_valid_cycles: Vec::new(),
        }
    }
    fn send(&mut self, r: &TlpRepr) {
        self.to_send.extend(to_beats(&r.to_bytes()));
    }
    fn tick(&mut self, rc_ready: bool) {
        let cycle = self.rc.cycle();
        let rq = match self.to_send.front() {
            Some(b) => RqIn {
                valid: true,
                data: b.data,
                keep: b.keep,
                sop: b.sop,
                eop: b.eop,
            },
            None => RqIn::default(),
        };
        if rq.valid && self.out.rq_ready {
            self.to_send.pop_front();
        }
        if self.out.rc_valid {
            self.rc_valid_cycles.push(cycle);
        }
        if self.out.rc_valid && rc_ready {
            let beat = StreamBeat {
                data: self.out.rc_data,
                keep: self.out.rc_keep,
                sop: self.out.rc_sop,
                eop: self.out.rc_eop,
            };
            if let Some(t) = self.rx.push(&beat).unwrap() {
                self.got.push((cycle, TlpRepr::parse_bytes(&t).unwrap()));
            }
        }
        self.out = self.rc.step(&rq, rc_ready, &mut self.mem);
    }
    fn run(&mut self, cycles: u64) {
        (0..cycles).for_each(|_| self.tick(true));
    }
}

fn cfg(latency: u32) -> RootComplexConfig {
    RootComplexConfig {
        latency,
        ..RootComplexConfig::default()
    }
}

/// Checks the completions of one request against memory and the split
/// rules; returns the number of completions.
fn check_cpls(
    cpls: &[&TlpRepr],
    mem: &HostMemory,
    start: u64,
    len: u64,
    c: &RootComplexConfig,
) -> usize {
    let mut cur = start;
    for (i, r) in cpls.iter().enumerate() {
        let TlpRepr::Completion {
            byte_count,
            lower_address,
            data: Some(d),
            ..
        } = r
        else {
            panic!("not a CplD: {r:?}")
        };
        assert_eq!(*byte_count as u64, start + len - cur, "byte count");
        assert_eq!(*lower_address as u64, cur & 0x7F, "lower address");
        assert!(
            d.len() <= c.cpl_size as usize,
            "payload {} > cpl_size",
            d.len()
        );
        let bytes = r.completion_bytes();
        assert_eq!(bytes, &mem.read(cur, bytes.len())[..]);
        cur += bytes.len() as u64;
        if i + 1 < cpls.len() {
            assert_eq!(cur % c.rcb as u64, 0, "non-last completion ends off RCB");
            if c.split == SplitMode::AtCplSize {
                assert_eq!(cur % c.cpl_size as u64, 0);
            }
        }
    }
    assert_eq!(cur, start + len);
    cpls.len()
}

fn of_tag(got: &[(u64, TlpRepr)], t: u8) -> Vec<&TlpRepr> {
    got.iter()
        .map(|(_, r)| r)
        .filter(|r| matches!(r, TlpRepr::Completion { tag, .. } if *tag == t))
        .collect()
}

#[test]
fn write_then_read_back_split_at_cpl_size() {
    let c = cfg(10);
    let mut h = Harness::new(c.clone());
    let data = pattern_bytes(7, 300);
    h.send(&TlpRepr::mem_write(0x100, 0, 0x1_0000_1003, &data));
    h.send(&TlpRepr::mem_read(0x100, 9, 0x1_0000_1003, 300));
    h.run(200);
    assert_eq!(h.mem.read(0x1_0000_1003, 300), data);
    assert_eq!(
        h.mem.read(0x1_0000_1000, 3),
        vec![0; 3],
        "BE-masked bytes untouched"
    );
    let cpls = of_tag(&h.got, 9);
    // 0x1003..0x1080, 0x1080..0x1100, 0x1100..0x112F.
    assert_eq!(check_cpls(&cpls, &h.mem, 0x1_0000_1003, 300, &c), 3);
    assert_eq!((h.rc.mwr_applied(), h.rc.mrd_received()), (1, 1));
    assert_eq!((h.rc.completions_sent(), h.rc.outstanding()), (3, 0));
    assert!(h.rc.errors().is_empty());
}

#[test]
fn first_completion_waits_exactly_latency() {
    for latency in [1, 5, 40] {
        let mut h = Harness::new(cfg(latency));
        h.send(&TlpRepr::mem_read(1, 2, 0x40, 8));
        h.run(100);
        let accepted = h.rc.log()[0].cycle;
        assert_eq!(h.rc_valid_cycles[0], accepted + latency as u64);
    }
}

#[test]
fn random_split_obeys_rcb_and_size_and_data() {
    for seed in 0..20u64 {
        let c = RootComplexConfig {
            latency: 3,
            rcb: if seed % 2 == 0 { 64 } else { 128 },
            cpl_size: 256,
            split: SplitMode::Random,
            reorder: true,
            seed,
            ..RootComplexConfig::default()
        };
        let mut h = Harness::new(c.clone());
        h.mem.fill_pattern(0, 1 << 16, seed);
        let mut reqs = Vec::new();
        let mut rng = SplitMix64::new(seed);
        for tag in 0..8u8 {
            let start = rng.below(60000);
            let len = 1 + rng.below(1024);
            reqs.push((tag, start, len));
            h.send(&TlpRepr::mem_read(1, tag, start, len as u32));
        }
        h.run(2000);
        for &(tag, start, len) in &reqs {
            check_cpls(&of_tag(&h.got, tag), &h.mem, start, len, &c);
        }
        assert_eq!(h.rc.outstanding(), 0);
    }
}

#[test]
fn reorder_interleaves_tags_but_oldest_first_does_not() {
    let tags_in_order = |reorder| {
        let mut h = Harness::new(RootComplexConfig {
            latency: 1,
            reorder,
            seed: 3,
            ..RootComplexConfig::default()
        });
        for tag in 0..4 {
            h.send(&TlpRepr::mem_read(1, tag, 0x1000 * tag as u64, 1024));
        }
        h.run(600);
        let tags: Vec<u8> = h
            .got
            .iter()
            .map(|(_, r)| match r {
                TlpRepr::Completion { tag, .. } => *tag,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(tags.len(), 32);
        tags
    };
    let fifo = tags_in_order(false);
    assert!(fifo.windows(2).all(|w| w[0] <= w[1]), "{fifo:?}");
    let mixed = tags_in_order(true);
    assert!(mixed.windows(2).any(|w| w[0] > w[1]), "{mixed:?}");
}

#[test]
fn faults() {
    let mut c = cfg(2);
    c.faults = vec![
        Fault {
            range: 0x1000..0x1001,
            kind: FaultKind::Ur,
        },
        Fault {
            range: 0x2000..0x3000,
            kind: FaultKind::Ca,
        },
        Fault {
            range: 0x3000..0x4000,
            kind: FaultKind::Poison,
        },
        Fault {
            range: 0x4000..0x5000,
            kind: FaultKind::Drop,
        },
    ];
    c.completer_id = 0x00F0;
    let mut h = Harness::new(c);
    h.send(&TlpRepr::mem_read(0x100, 1, 0x0F82, 200)); // overlaps 0x1000
    h.send(&TlpRepr::mem_read(0x100, 2, 0x2FFE, 1));
    h.send(&TlpRepr::mem_read(0x100, 3, 0x3010, 300));
    h.send(&TlpRepr::mem_read(0x100, 4, 0x4000, 64));
    h.send(&TlpRepr::mem_read(0x100, 5, 0x5000, 64));
    h.run(300);
    let cpl = |status, byte_count, lower_address, tag| TlpRepr::Completion {
        status,
        byte_count,
        lower_address,
        requester_id: 0x100,
        completer_id: 0xF0,
        tag,
        poisoned: false,
        data: None,
    };
    assert_eq!(of_tag(&h.got, 1), vec![&cpl(CplStatus::Ur, 200, 0x02, 1)]);
    assert_eq!(of_tag(&h.got, 2), vec![&cpl(CplStatus::Ca, 1, 0x7E, 2)]);
    let poisoned = of_tag(&h.got, 3);
    assert_eq!(poisoned.len(), 3);
    assert!(poisoned.iter().all(|r| matches!(
        r,
        TlpRepr::Completion {
            poisoned: true,
            data: Some(_),
            ..
        }
    )));
    assert!(of_tag(&h.got, 4).is_empty());
    assert_eq!(h.rc.dropped().len(), 1);
    assert_eq!(h.rc.dropped()[0].1, 4);
    assert_eq!(of_tag(&h.got, 5).len(), 1);
    assert_eq!(h.rc.outstanding(), 0);
}

#[test]
fn back_pressure_both_ways() {
    let c = RootComplexConfig {
        latency: 1,
        rq_ready: ReadyPolicy::Random { percent: 30 },
        seed: 11,
        ..RootComplexConfig::default()
    };
    let mut h = Harness::new(c.clone());
    h.mem.fill_pattern(0, 8192, 5);
    let data = pattern_bytes(9, 1000);
    h.send(&TlpRepr::mem_write(1, 0, 0x4000, &data[..256]));
    h.send(&TlpRepr::mem_read(1, 7, 0x100, 1000));
    h.send(&TlpRepr::mem_write(1, 0, 0x4100, &data[256..]));
    let mut rng = SplitMix64::new(99);
    let mut held = None;
    let mut ready_seen = 0;
    for _ in 0..3000 {
        let ready = rng.percent(40);
        // An rc beat not taken must be presented again, unchanged.
        if let Some(prev) = held.take() {
            assert!(h.out.rc_valid);
            assert_eq!((h.out.rc_data, h.out.rc_keep, h.out.rc_sop), prev);
        }
        if h.out.rc_valid && !ready {
            held = Some((h.out.rc_data, h.out.rc_keep, h.out.rc_sop));
        }
        ready_seen += h.out.rq_ready as u32;
        h.tick(ready);
    }
    assert!(
        (600..1200).contains(&ready_seen),
        "rq_ready {ready_seen}/3000"
    );
    assert_eq!(h.mem.read(0x4000, 1000), data);
    check_cpls(&of_tag(&h.got, 7), &h.mem, 0x100, 1000, &c);
}

#[test]
fn log_lines_and_bad_input() {
    let mut h = Harness::new(cfg(1));
    h.send(&TlpRepr::mem_read(0x0100, 0x2A, 0x1234_5678, 64));
    // A CfgRd0 (Fmt/Type 0x04) and an orphan continuation beat.
    h.to_send
        .extend(to_beats(&[0x04, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]));
    let mut orphan = to_beats(&[1, 2, 3])[0];
    orphan.sop = false;
    h.to_send.push_back(orphan);
    h.run(20);
    let log = h.rc.log();
    assert_eq!(log[0].to_string(), "0 rq: 0000001001002aff12345678");
    // 0x...78..0x...B8 splits at the 128-byte boundary: 2 and 14 DW.
    assert_eq!(log.iter().filter(|e| e.dir == Direction::Rc).count(), 2);
    let rc = log.iter().find(|e| e.dir == Direction::Rc).unwrap();
    assert!(rc
        .to_string()
        .starts_with(&format!("{} rc: 4a000002", rc.cycle)));
    assert!(matches!(
        h.rc.errors()[0],
        RootComplexError::Tlp { cycle: 1, .. }
    ));
    assert!(matches!(
        h.rc.errors()[1],
        RootComplexError::Frame { cycle: 2, .. }
    ));
}

#[test]
fn odd_requests_are_served_without_panic() {
    for split in [SplitMode::AtCplSize, SplitMode::Random] {
        let mut h = Harness::new(RootComplexConfig {
            latency: 1,
            split,
            ..RootComplexConfig::default()
        });
        // Crossing 4 KB, zero-length, and at the very top of memory.
        h.send(&TlpRepr::mem_read(1, 1, 0x0FF0, 64));
        h.send(&TlpRepr::mem_read(1, 2, 0x2000, 0));
        h.send(&TlpRepr::mem_read(1, 3, u64::MAX - 63, 64));
        h.send(&TlpRepr::mem_write(1, 0, u64::MAX - 3, &[1, 2, 3, 4]));
        h.run(100);
        let crossing = of_tag(&h.got, 1).len();
        assert!(crossing == 2 || split == SplitMode::Random && crossing == 1);
        assert_eq!(of_tag(&h.got, 2).len(), 1);
        assert!(!of_tag(&h.got, 3).is_empty());
        assert_eq!(h.mem.read(u64::MAX - 3, 4), vec![1, 2, 3, 4]);
        assert!(h.rc.errors().is_empty());
    }
}

#[test]
fn config_validation() {
    let bad = |f: fn(&mut RootComplexConfig)| {
        let mut c = RootComplexConfig::default();
        f(&mut c);
        RootComplex::new(c).err()
    };
    assert_eq!(bad(|c| c.rcb = 32), Some(ConfigError::Rcb(32)));
    assert_eq!(bad(|c| c.cpl_size = 200), Some(ConfigError::CplSize(200)));
    assert_eq!(bad(|c| c.cpl_size = 8192), Some(ConfigError::CplSize(8192)));
    assert_eq!(
        bad(|c| c.rq_ready = ReadyPolicy::Random { percent: 0 }),
        Some(ConfigError::ReadyPercent(0))
    );
    assert_eq!(
        bad(|c| c.faults = vec![Fault {
            range: 5..5,
            kind: FaultKind::Ur
        }]),
        Some(ConfigError::EmptyFault(5, 5))
    );
    assert_eq!(bad(|c| c.cpl_size = 4096), None);
}
