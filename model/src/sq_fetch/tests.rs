//! Directed tests of the `sq_fetch` model.

use super::*;
use std::collections::{HashMap, VecDeque};

/// A read the fake responder has taken: served after `ready_at`.
struct Pending {
    ready_at: u64,
    addr: u64,
    beats: u32,
    fail: bool,
}

/// The model with a host memory, an in-order read responder of fixed
/// latency and a popper.
struct Bench {
    dut: SqFetch,
    out: SqFetchOut,
    cycle: u64,
    /// Host memory by 64-byte line.
    mem: HashMap<u64, Beat>,
    latency: u64,
    rd_ready: bool,
    queue: VecDeque<Pending>,
    beat: u32,
    /// Reads taken, in order: (cycle, addr, len).
    reqs: Vec<(u64, u64, u32)>,
    /// Ordinals (in `reqs`) of the reads that fail.
    fail: Vec<usize>,
    db: VecDeque<SqFetchIn>,
    pops: VecDeque<u8>,
    auto_pop: bool,
    /// (cycle seen, qp, wr_id of the WQE)
    popped: Vec<(u64, u8, u64)>,
    errs: Vec<(u64, u8)>,
    ev: Vec<(u64, u8)>,
    /// Rewinds to apply: (cycle, qp, index).
    rws: Vec<(u64, u8, u16)>,
    /// wqe_idx of each pop, in `popped` order.
    popped_idx: Vec<u16>,
}

/// WQE `idx` of QP `q`: its wr_id says who it is, the rest is a pattern.
fn wqe(q: u8, idx: u16) -> Beat {
    let mut b = Beat::default();
    for (k, x) in b.iter_mut().enumerate() {
        *x = (k as u8).wrapping_mul(7) ^ q ^ (idx as u8);
    }
    b[..8].copy_from_slice(&wr_id(q, idx).to_le_bytes());
    b
}

fn wr_id(q: u8, idx: u16) -> u64 {
    0xAB00_0000 | (q as u64) << 16 | idx as u64
}

impl Bench {
    fn new(latency: u64) -> Self {
        let mut dut = SqFetch::new();
        let out = dut.reset();
        Bench {
            dut,
            out,
            cycle: 0,
            mem: HashMap::new(),
            latency,
            rd_ready: true,
            queue: VecDeque::new(),
            beat: 0,
            reqs: Vec::new(),
            fail: Vec::new(),
            db: VecDeque::new(),
            pops: VecDeque::new(),
            auto_pop: true,
            popped: Vec::new(),
            errs: Vec::new(),
            ev: Vec::new(),
            rws: Vec::new(),
            popped_idx: Vec::new(),
        }
    }

    /// Writes WQEs `from..to` of QP `q` into its ring and queues the
    /// doorbell `pi = to`.
    fn post(&mut self, q: u8, base: u64, log: u8, from: u16, to: u16, state: u8) {
        let mut idx = from;
        while idx != to {
            let slot = idx as u64 & ((1u64 << log) - 1);
            self.mem.insert(base + 64 * slot, wqe(q, idx));
            idx = idx.wrapping_add(1);
        }
        self.db.push_back(SqFetchIn {
            db_valid: true,
            db_qp: q,
            db_pi: to,
            db_state: state,
            db_sq_base: base,
            db_sq_log: log,
            ..Default::default()
        });
    }

    fn step(&mut self) {
        let o = self.out;
        let mut i = self.db.pop_front().unwrap_or_default();
        i.rd_req_ready = self.rd_ready;
        if o.rd_req_valid && self.rd_ready {
            assert_eq!(o.rd_req_len % 64, 0);
            let fail = self.fail.contains(&self.reqs.len());
            self.reqs.push((self.cycle, o.rd_req_addr, o.rd_req_len));
            self.queue.push_back(Pending {
                ready_at: self.cycle + self.latency,
                addr: o.rd_req_addr,
                beats: o.rd_req_len / 64,
                fail,
            });
        }
        if let Some(p) = self.queue.front() {
            if self.cycle >= p.ready_at && o.rd_data_ready {
                let addr = p.addr + 64 * self.beat as u64;
                let last = self.beat + 1 == p.beats;
                i.rd_data_valid = true;
                i.rd_data = if p.fail {
                    Beat::default()
                } else {
                    *self.mem.get(&addr).expect("read of unwritten memory")
                };
                i.rd_data_last = last;
                i.rd_data_status = if p.fail && last { 4 } else { 0 };
                if last {
                    self.queue.pop_front();
                    self.beat = 0;
                } else {
                    self.beat += 1;
                }
            }
        }
        if let Some(q) = self.pops.pop_front() {
            i.wqe_pop_valid = true;
            i.wqe_pop_qp = q;
        } else if self.auto_pop && o.wqe_avail != 0 {
            i.wqe_pop_valid = true;
            i.wqe_pop_qp = o.wqe_avail.trailing_zeros() as u8;
        }
        if let Some(&(_, q, idx)) = self.rws.iter().find(|r| r.0 == self.cycle) {
            i.rw_valid = true;
            i.rw_qp = q;
            i.rw_idx = idx;
        }
        self.out = self.dut.tick(&i);
        self.cycle += 1;
        let o = self.out;
        if o.wqe_valid {
            let id = u64::from_le_bytes(o.wqe_data[..8].try_into().unwrap());
            self.popped.push((self.cycle, o.wqe_qp, id));
            self.popped_idx.push(o.wqe_idx);
        }
        if o.err_valid {
            self.errs.push((self.cycle, o.err_qp));
        }
        if o.ev_wqe_n != 0 {
            self.ev.push((self.cycle, o.ev_wqe_n));
        }
    }

    fn run(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }

    fn req_list(&self) -> Vec<(u64, u32)> {
        self.reqs.iter().map(|&(_, a, l)| (a, l)).collect()
    }

    fn popped_ids(&self, q: u8) -> Vec<u64> {
        self.popped
            .iter()
            .filter(|p| p.1 == q)
            .map(|p| p.2)
            .collect()
    }
}

const BASE: u64 = 0x1_2345_0000;

#[test]
fn one_three_four_wqes_are_one_read_each() {
    for n in [1u16, 3, 4] {
        let mut b = Bench::new(5);
        b.post(2, BASE, 6, 0, n, 1);
        b.run(60);
        assert_eq!(b.req_list(), vec![(BASE, 64 * n as u32)], "{n} WQEs");
        let want: Vec<u64> = (0..n).map(|k| wr_id(2, k)).collect();
        assert_eq!(b.popped_ids(2), want);
        assert_eq!(b.ev.iter().map(|e| e.1).collect::<Vec<_>>(), vec![n as u8]);
        assert!(b.errs.is_empty());
    }
}

#[test]
fn doorbell_to_request_is_one_cycle_and_last_beat_to_avail_one_cycle() {
    let mut b = Bench::new(3);
    b.auto_pop = false;
    // Slots are reserved before a read: data is never back-pressured.
    assert!(b.out.rd_data_ready);
    b.post(4, BASE, 4, 0, 2, 1);
    // Cycle 0 carries the doorbell; the request is visible in cycle 1.
    b.step();
    assert!(b.out.rd_req_valid);
    assert_eq!((b.out.rd_req_addr, b.out.rd_req_len), (BASE, 128));
    // Taken in cycle 1; beats at 4 and 5 (latency 3); avail in cycle 6.
    for c in 2..=6 {
        b.step();
        assert_eq!(b.cycle, c);
        assert_eq!(
            b.out.wqe_avail,
            if c == 6 { 1 << 4 } else { 0 },
            "cycle {c}"
        );
    }
    assert_eq!(b.out.ev_wqe_n, 2);
}

#[test]
fn nine_wqes_follow_the_free_slots() {
    // Popping one WQE per cycle as soon as one is there:
    // read 1: idx 0..3 (4 = BATCH = SLOTS). Its last beat at t, pops at
    //   t+1..t+4; at t+2 one slot is free and the QP is idle:
    // read 2: idx 4 alone (1 free slot). While it is out, the pops
    //   empty the buffer; its last beat at u gives count 1 at u+1, and
    //   that cycle's pop only shows at u+2:
    // read 3: idx 5..7 (3 free);
    // read 4: idx 8, the last one.
    let mut b = Bench::new(10);
    b.post(0, BASE, 6, 0, 9, 1);
    b.run(200);
    assert_eq!(
        b.req_list(),
        vec![
            (BASE, 256),
            (BASE + 256, 64),
            (BASE + 320, 192),
            (BASE + 512, 64)
        ]
    );
    let want: Vec<u64> = (0..9).map(|k| wr_id(0, k)).collect();
    assert_eq!(b.popped_ids(0), want);
}

#[test]
fn ring_end_splits_a_batch() {
    // Ring of 8 entries. 3 + 3 WQEs bring the fetch index to 6; then 4
    // more (idx 6..9) are 2 before the ring end (offsets 6, 7) and 2
    // after it (offsets 0, 1).
    let mut b = Bench::new(4);
    b.post(7, BASE, 3, 0, 3, 1);
    b.run(40);
    b.post(7, BASE, 3, 3, 6, 1);
    b.run(40);
    b.post(7, BASE, 3, 6, 10, 1);
    b.run(60);
    assert_eq!(
        b.req_list(),
        vec![
            (BASE, 192),
            (BASE + 3 * 64, 192),
            (BASE + 6 * 64, 128),
            (BASE, 128)
        ]
    );
    let want: Vec<u64> = (0..10).map(|k| wr_id(7, k)).collect();
    assert_eq!(b.popped_ids(7), want);
}

#[test]
fn producer_index_wraps_at_16_bits() {
    // 16-bit indices: a ring of 2^15 entries, WQEs 0xFFFE..0x0001.
    let mut b = Bench::new(2);
    b.dut.fidx_q[1] = 0xFFFE;
    b.dut.pi_q[1] = 0xFFFE;
    b.post(1, BASE, 15, 0xFFFE, 2, 1);
    b.run(40);
    // Offset 0x7FFE: two entries before the ring end, then offset 0.
    assert_eq!(b.req_list(), vec![(BASE + 0x7FFE * 64, 128), (BASE, 128)]);
    let want: Vec<u64> = [0xFFFEu16, 0xFFFF, 0, 1]
        .iter()
        .map(|&k| wr_id(1, k))
        .collect();
    assert_eq!(b.popped_ids(1), want);
}

#[test]
fn round_robin_between_qps() {
    // Requests held back: QP 9's doorbell comes first and its read sits
    // in the request register; QPs 5 and 1 ring next. Once the reads
    // are taken, the pointer is past 9, so 1 comes before 5.
    let mut b = Bench::new(4);
    b.rd_ready = false;
    b.post(9, BASE, 6, 0, 2, 1);
    b.post(5, BASE + 0x1000, 6, 0, 2, 1);
    b.post(1, BASE + 0x2000, 6, 0, 2, 1);
    b.run(10);
    b.rd_ready = true;
    b.run(60);
    assert_eq!(
        b.req_list(),
        vec![(BASE, 128), (BASE + 0x2000, 128), (BASE + 0x1000, 128)]
    );
    for q in [1u8, 5, 9] {
        assert_eq!(b.popped_ids(q), vec![wr_id(q, 0), wr_id(q, 1)]);
    }
    // Back-to-back reads: each taken the cycle after the one before.
    let c: Vec<u64> = b.reqs.iter().map(|r| r.0).collect();
    assert_eq!((c[1] - c[0], c[2] - c[1]), (1, 1));
}

#[test]
fn failed_read_drops_its_wqes_and_fetching_goes_on() {
    let mut b = Bench::new(4);
    b.fail = vec![0];
    b.post(3, BASE, 5, 0, 3, 1);
    b.run(30);
    assert_eq!(b.req_list(), vec![(BASE, 192)]);
    assert!(b.popped.is_empty());
    assert!(b.ev.is_empty());
    // The last beat of read 0 is at cycle 1 + 4 + 2 = 7: err at 8.
    assert_eq!(b.errs, vec![(8, 3)]);
    assert_eq!(b.out.wqe_avail, 0);
    b.post(3, BASE, 5, 3, 5, 1);
    b.run(30);
    assert_eq!(b.req_list(), vec![(BASE, 192), (BASE + 192, 128)]);
    assert_eq!(b.popped_ids(3), vec![wr_id(3, 3), wr_id(3, 4)]);
    assert_eq!(b.errs.len(), 1);
}

#[test]
fn pops_take_the_head_and_empty_pops_are_ignored() {
    let mut b = Bench::new(2);
    b.auto_pop = false;
    b.post(0, BASE, 6, 0, 2, 1);
    b.run(12);
    assert_eq!(b.out.wqe_avail, 1);
    // Pop of a QP with nothing: nothing comes out.
    b.pops.push_back(7);
    b.step();
    assert!(!b.out.wqe_valid);
    // Pop at n: the head WQE at n+1, and wqe_avail at n+1.
    b.pops.push_back(0);
    b.step();
    assert!(b.out.wqe_valid);
    assert_eq!(b.out.wqe_qp, 0);
    assert_eq!(b.out.wqe_data, wqe(0, 0));
    assert_eq!(b.out.wqe_avail, 1);
    b.pops.push_back(0);
    b.step();
    assert_eq!(b.out.wqe_data, wqe(0, 1));
    assert_eq!(b.out.wqe_avail, 0);
    // Empty now: a third pop is ignored.
    b.pops.push_back(0);
    b.step();
    assert!(!b.out.wqe_valid);
    assert_eq!(b.popped.len(), 2);
}

#[test]
fn reset_state_and_repeated_doorbells_do_not_fetch() {
    let mut b = Bench::new(2);
    // State RESET: recorded, nothing fetched.
    b.post(6, BASE, 6, 0, 2, 0);
    b.run(20);
    assert!(b.reqs.is_empty());
    // Same producer index with RTS: ignored as a whole (state included).
    b.post(6, BASE, 6, 2, 2, 1);
    b.run(20);
    assert!(b.reqs.is_empty());
    // A new producer index with RTS: everything since index 0.
    b.post(6, BASE, 6, 2, 3, 1);
    b.run(30);
    assert_eq!(b.req_list(), vec![(BASE, 192)]);
    assert_eq!(
        b.popped_ids(6),
        (0..3).map(|k| wr_id(6, k)).collect::<Vec<_>>()
    );
    // ERROR state still fetches (tx_engine flushes those WQEs).
    b.post(6, BASE, 6, 3, 4, 2);
    b.run(30);
    assert_eq!(b.req_list().len(), 2);
    assert_eq!(b.popped_ids(6).len(), 4);
}

#[test]
fn rewind_drops_fetched_wqes_and_a_stale_read() {
    // QP 3, a ring of 16: a read of 3 (taken at 1, beats at 11..13,
    // available at 14); pop index 0.
    let mut b = Bench::new(10);
    b.auto_pop = false;
    b.post(3, BASE, 4, 0, 3, 1);
    b.run(16);
    assert_eq!(b.out.wqe_avail, 1 << 3);
    b.pops.push_back(3);
    b.step();
    assert_eq!(b.popped_idx, vec![0]);
    // 5 more: with 2 slots free, a read of indices 3 and 4.
    b.post(3, BASE, 4, 3, 8, 1);
    b.run(3);
    assert_eq!(b.reqs.len(), 2);
    assert_eq!((b.reqs[1].1, b.reqs[1].2), (BASE + 64 * 3, 128));
    // Rewind to 1 while it is in flight: indices 1, 2 are dropped, its
    // beats are discarded, and the QP reads again from 1 after it ends.
    let at = b.cycle;
    b.rws.push((at, 3, 1));
    b.step();
    assert_eq!(
        b.out.wqe_avail, 0,
        "wqe_avail low the cycle after the rewind"
    );
    b.auto_pop = true;
    b.run(80);
    assert_eq!(b.popped_idx, vec![0, 1, 2, 3, 4, 5, 6, 7]);
    let want: Vec<u64> = (0..8).map(|k| wr_id(3, k)).collect();
    assert_eq!(b.popped_ids(3), want);
    assert_eq!(b.reqs[2].1, BASE + 64);
    assert!(b.reqs[2].0 > at + 5, "the re-read waits for the stale one");
    assert!(b.errs.is_empty());
}

#[test]
fn a_stale_read_reports_no_error() {
    let mut b = Bench::new(6);
    b.post(1, BASE, 3, 0, 2, 1);
    b.fail = vec![0];
    // The read is taken at 1; rewind to 0 at 3, before its beats.
    b.rws.push((3, 1, 0));
    b.run(40);
    assert!(b.errs.is_empty(), "a stale read's failure is not reported");
    assert_eq!(b.reqs.len(), 2, "the QP reads again");
    assert_eq!(b.popped_ids(1), vec![wr_id(1, 0), wr_id(1, 1)]);
    assert_eq!(b.popped_idx, vec![0, 1]);
}
