//! Constrained-random block-level lockstep of `wr_arb`: model and RTL get
//! two clients' random write requests (lengths 1 byte to 64 KiB, mostly
//! short) with their data beats offered on their own schedule (before or
//! after the request is taken), and random back-pressure from a simulated
//! `dma_wr`. The environment checks the contract (docs/responder.md, "rx_wr
//! and wr_arb") on its own:
//! - every request arrives once, with its address and length, the client
//!   id of its client (a = 0, b = 1), in each client's order;
//! - the data stream is, request by request in the order `dma_wr` took
//!   them, exactly `ceil(len/64)` beats of that request's client, byte for
//!   byte: never a beat of another request in between;
//! - round robin: while a client has a request offered, the other gets at
//!   most one request through;
//! - valid/ready: an offer not taken stays unchanged;
//! - no stall: in the full-speed cases (every valid and ready high) the run
//!   takes one cycle per data beat plus 4 (the pipeline), so requests of
//!   either client follow each other with no gap.
//!
//! Reproducible (`tests/common/mod.rs`): seed [`DEFAULT_SEED`] or
//! `RNIC_RANDOM_SEED`, [`DEFAULT_CASES`] cases or `RNIC_RANDOM_CASES`.

mod common;

use std::collections::VecDeque;

use rnic_model::wr_arb::{WrArb, WrArbIn, WrArbOut};
use rnic_model::Beat;
use rnic_testbench::env::SplitMix64;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlWrArb;

const DEFAULT_CASES: u64 = 24;
const DEFAULT_SEED: u64 = 0x7772_5F61_7262_5F5F; // "wr_arb__"
/// Requests per client per case.
const REQS: usize = 150;
const MAX_CYCLES: u64 = 400_000;

struct Req {
    addr: u64,
    len: u32,
    beats: Vec<Beat>,
}

/// One client: its requests, and how far its two channels are.
struct Client {
    reqs: Vec<Req>,
    /// Requests offered/taken on its request channel.
    req_next: usize,
    /// Its data stream: (request, beat) of the next beat to offer.
    data_req: usize,
    data_beat: usize,
    /// Requests taken by dma_wr (checked against `reqs` in order).
    taken: usize,
    req_pct: u8,
    data_pct: u8,
    /// Consecutive requests of the other client taken while this one had a
    /// request offered.
    passed: u32,
}

impl Client {
    fn new(rng: &mut SplitMix64, fast: bool) -> Self {
        let reqs = (0..REQS)
            .map(|_| {
                let len = match rng.below(10) {
                    0 => 1 + rng.below(65536) as u32,
                    1..=3 => 1 + rng.below(64) as u32,
                    _ => 1 + rng.below(600) as u32,
                };
                let beats = (0..len.div_ceil(64))
                    .map(|_| {
                        let mut b = Beat::default();
                        for w in b.0.chunks_mut(8) {
                            w.copy_from_slice(&rng.next_u64().to_le_bytes());
                        }
                        b
                    })
                    .collect();
                Req {
                    addr: rng.next_u64(),
                    len,
                    beats,
                }
            })
            .collect();
        let pick = |rng: &mut SplitMix64| [100, 70, 20][rng.below(3) as usize];
        Client {
            reqs,
            req_next: 0,
            data_req: 0,
            data_beat: 0,
            taken: 0,
            req_pct: if fast { 100 } else { pick(rng) },
            data_pct: if fast { 100 } else { pick(rng) },
            passed: 0,
        }
    }

    fn beats(&self) -> usize {
        self.reqs.iter().map(|r| r.beats.len()).sum()
    }

    fn done(&self) -> bool {
        self.taken == self.reqs.len() && self.data_req == self.reqs.len()
    }
}

struct ArbEnv {
    rng: SplitMix64,
    fast: bool,
    ready_pct: u8,
    data_ready_pct: u8,
    c: [Client; 2],
    /// Requests taken by dma_wr whose beats have not all come: (client,
    /// request, beats seen).
    order: VecDeque<(usize, usize, usize)>,
    prev_in: WrArbIn,
    prev_out: WrArbOut,
    worst_passed: u32,
    beats_out: usize,
    interleave_chances: usize,
}

impl ArbEnv {
    fn new(seed: u64, fast: bool) -> Self {
        let mut rng = SplitMix64::new(seed);
        let a = Client::new(&mut rng, fast);
        let b = Client::new(&mut rng, fast);
        let pick = |rng: &mut SplitMix64| [100, 70, 20][rng.below(3) as usize];
        ArbEnv {
            ready_pct: if fast { 100 } else { pick(&mut rng) },
            data_ready_pct: if fast { 100 } else { pick(&mut rng) },
            rng,
            fast,
            c: [a, b],
            order: VecDeque::new(),
            prev_in: WrArbIn::default(),
            prev_out: WrArbOut::default(),
            worst_passed: 0,
            beats_out: 0,
            interleave_chances: 0,
        }
    }

    fn check_hold(&self, cycle: u64, o: &WrArbOut) {
        let (pi, po) = (&self.prev_in, &self.prev_out);
        if po.wr_req_valid && !pi.wr_req_ready {
            assert!(
                o.wr_req_valid
                    && (o.wr_req_addr, o.wr_req_len, o.wr_req_client)
                        == (po.wr_req_addr, po.wr_req_len, po.wr_req_client),
                "cycle {cycle}: a request not taken changed"
            );
        }
        if po.wr_data_valid && !pi.wr_data_ready {
            assert!(
                o.wr_data_valid && o.wr_data == po.wr_data,
                "cycle {cycle}: a data beat not taken changed"
            );
        }
    }

    fn on_dma(&mut self, cycle: u64, o: &WrArbOut, i: &WrArbIn) {
        if o.wr_req_valid && i.wr_req_ready {
            let k = o.wr_req_client as usize;
            let c = &mut self.c[k];
            let r = c.taken;
            assert!(
                r < c.reqs.len(),
                "cycle {cycle}: client {k}: an extra request"
            );
            assert_eq!(
                (o.wr_req_addr, o.wr_req_len),
                (c.reqs[r].addr, c.reqs[r].len),
                "cycle {cycle}: client {k} request {r}"
            );
            c.taken += 1;
            self.order.push_back((k, r, 0));
            // Round robin: the other client, if it has a request offered
            // (or inside the arbiter), was passed over once more.
            let offering = self.prev_in_req(1 - k);
            let other = &mut self.c[1 - k];
            if other.req_next > other.taken || offering {
                other.passed += 1;
                self.worst_passed = self.worst_passed.max(other.passed);
                assert!(
                    other.passed <= 1,
                    "cycle {cycle}: client {} passed over {} times",
                    1 - k,
                    other.passed
                );
            }
            self.c[k].passed = 0;
        }
        if o.wr_data_valid && i.wr_data_ready {
            let &(k, r, n) = self
                .order
                .front()
                .unwrap_or_else(|| panic!("cycle {cycle}: a data beat with no request taken"));
            let want = &self.c[k].reqs[r].beats;
            assert_eq!(
                o.wr_data, want[n],
                "cycle {cycle}: client {k} request {r} beat {n}"
            );
            self.beats_out += 1;
            if n + 1 == want.len() {
                self.order.pop_front();
            } else {
                self.order.front_mut().expect("front").2 += 1;
            }
        }
    }

    /// Client `k` offers a request this cycle (decided before `on_dma`).
    fn prev_in_req(&self, k: usize) -> bool {
        if k == 0 {
            self.prev_in.a_req_valid
        } else {
            self.prev_in.b_req_valid
        }
    }
}

impl Env for ArbEnv {
    type In = WrArbIn;
    type Out = WrArbOut;

    fn step(&mut self, cycle: u64, o: &WrArbOut) -> WrArbIn {
        self.check_hold(cycle, o);
        let mut i = WrArbIn::default();
        let readies = [
            (o.a_req_ready, o.a_data_ready),
            (o.b_req_ready, o.b_data_ready),
        ];
        let prev = [
            (self.prev_in.a_req_valid, self.prev_in.a_data_valid),
            (self.prev_in.b_req_valid, self.prev_in.b_data_valid),
        ];
        let prev_ready = [
            (self.prev_out.a_req_ready, self.prev_out.a_data_ready),
            (self.prev_out.b_req_ready, self.prev_out.b_data_ready),
        ];
        let mut offers = [(None, None); 2];
        for k in 0..2 {
            let c = &self.c[k];
            // Request channel: an offer stays until taken.
            let mut req = None;
            if c.req_next < c.reqs.len() {
                let held = prev[k].0 && !prev_ready[k].0;
                if held || self.rng.percent(c.req_pct) {
                    req = Some((c.reqs[c.req_next].addr, c.reqs[c.req_next].len));
                }
            }
            let mut data = None;
            if c.data_req < c.reqs.len() {
                let held = prev[k].1 && !prev_ready[k].1;
                if held || self.rng.percent(c.data_pct) {
                    data = Some(c.reqs[c.data_req].beats[c.data_beat]);
                }
            }
            offers[k] = (req, data);
        }
        let set = |v: &mut bool, a: &mut u64, l: &mut u32, r: Option<(u64, u32)>| {
            if let Some((x, y)) = r {
                (*v, *a, *l) = (true, x, y);
            }
        };
        set(
            &mut i.a_req_valid,
            &mut i.a_req_addr,
            &mut i.a_req_len,
            offers[0].0,
        );
        set(
            &mut i.b_req_valid,
            &mut i.b_req_addr,
            &mut i.b_req_len,
            offers[1].0,
        );
        if let Some(d) = offers[0].1 {
            (i.a_data_valid, i.a_data) = (true, d);
        }
        if let Some(d) = offers[1].1 {
            (i.b_data_valid, i.b_data) = (true, d);
        }
        i.wr_req_ready = self.rng.percent(self.ready_pct);
        i.wr_data_ready = self.rng.percent(self.data_ready_pct);

        self.prev_in = i;
        self.on_dma(cycle, o, &i);
        // Client-side transfers.
        for (k, &(rr, dr)) in readies.iter().enumerate() {
            let c = &mut self.c[k];
            if offers[k].0.is_some() && rr {
                c.req_next += 1;
            }
            if offers[k].1.is_some() && dr {
                c.data_beat += 1;
                if c.data_beat == c.reqs[c.data_req].beats.len() {
                    c.data_req += 1;
                    c.data_beat = 0;
                }
            }
            // A beat offered while the other client's request is at the
            // head of the data order: it must wait (interleaving avoided).
            if offers[k].1.is_some() && self.order.front().is_some_and(|h| h.0 != k) {
                self.interleave_chances += 1;
            }
        }
        self.prev_out = *o;
        i
    }

    fn finished(&self) -> bool {
        self.c.iter().all(Client::done) && self.order.is_empty() && !self.prev_out.wr_data_valid
    }
}

#[test]
fn wr_arb_random_lockstep() {
    let (mut total, mut reqs, mut beats, mut worst, mut chances) = (0, 0, 0, 0, 0);
    let mut k = 0u64;
    let run = common::run_cases_until(DEFAULT_SEED, DEFAULT_CASES, |seed| {
        let fast = k.is_multiple_of(4);
        k += 1;
        let mut env = ArbEnv::new(seed, fast);
        let fin = lockstep::run(
            &mut WrArb::new(),
            &mut RtlWrArb::new(),
            &mut env,
            MAX_CYCLES,
        )
        .unwrap_or_else(|d| panic!("{d}"));
        assert!(fin.completed, "case not finished in {MAX_CYCLES} cycles");
        let n_beats: usize = env.c.iter().map(Client::beats).sum();
        assert_eq!(env.beats_out, n_beats, "every beat delivered");
        if env.fast {
            let bound = n_beats as u64 + 4;
            assert!(
                fin.cycles <= bound,
                "full speed: {} cycles, bound {bound}",
                fin.cycles
            );
        }
        total += fin.cycles;
        reqs += 2 * REQS;
        beats += n_beats;
        worst = worst.max(env.worst_passed);
        chances += env.interleave_chances;
        // The measured floors below, met so far? (More cases until
        // they are: common::run_cases_until.)
        chances >= 10_000 && worst >= 1
    });
    println!(
        "wr_arb: {} cases, {total} cycles, {reqs} requests, {beats} data beats, \
         {chances} beats held back for another client's request, worst pass-over {worst}",
        run.cases
    );
    if run.full {
        // By construction: REQS requests per client and case, each at
        // least one beat taking a cycle of its own.
        let n = run.cases as usize;
        assert_eq!(reqs, n * 2 * REQS);
        assert!(total >= (n * 2 * REQS) as u64, "only {total} cycles");
        // Measured on the default run.
        assert!(chances >= 10_000, "interleaving barely tempted ({chances})");
        assert!(worst >= 1, "round robin never arbitrated");
    }
}
