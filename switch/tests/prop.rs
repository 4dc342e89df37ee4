//! Random inputs: the switch never panics, conserves frames and bytes
//! after every step, and is deterministic for a seed.
mod common;
use common::*;
use proptest::prelude::*;
use rnic_switch::{pfc_frame, Departure, Sched, SwitchConfig};

#[derive(Clone, Debug)]
enum Ev {
    Data {
        from: usize,
        to: usize,
        dscp: u8,
        ecn: u8,
        len: usize,
        sport: u16,
    },
    Pfc {
        port: usize,
        prio: usize,
        quanta: u16,
    },
    Junk {
        port: usize,
        bytes: Vec<u8>,
    },
}

fn ev() -> impl Strategy<Value = (u64, Ev)> {
    let data = (
        0..4usize,
        0..5usize,
        0..64u8,
        0..4u8,
        42..1500usize,
        any::<u16>(),
    )
        .prop_map(|(from, to, dscp, ecn, len, sport)| Ev::Data {
            from,
            to,
            dscp,
            ecn,
            len,
            sport,
        });
    let pfc = (
        0..4usize,
        0..8usize,
        prop_oneof![Just(0u16), 1..200u16, Just(65535)],
    )
        .prop_map(|(port, prio, quanta)| Ev::Pfc { port, prio, quanta });
    let junk = (0..5usize, proptest::collection::vec(any::<u8>(), 0..80))
        .prop_map(|(port, bytes)| Ev::Junk { port, bytes });
    (0..40u64, prop_oneof![8 => data, 1 => pfc, 1 => junk])
}

fn cfg(seed: u64) -> SwitchConfig {
    let mut c = config(4);
    c.buffer_bytes = 20_000;
    c.pfc.xoff_bytes = 6_000;
    c.pfc.xon_bytes = 3_000;
    c.pfc.headroom_bytes = 4_000;
    c.pfc.refresh_cycles = 50;
    c.pfc.pause_quanta = 300;
    c.watchdog_cycles = Some(400);
    c.queues[1].lossless = true;
    c.queues[2].sched = Sched::Strict;
    c.queues[1].red = c.queues[3].red;
    c.seed = seed;
    c
}

fn frame(e: &Ev) -> (usize, Vec<u8>) {
    match e {
        Ev::Data {
            from,
            to,
            dscp,
            ecn,
            len,
            sport,
        } => (
            *from,
            udp4(host(*from), host(*to), *sport, *dscp, *ecn, *len),
        ),
        Ev::Pfc { port, prio, quanta } => (*port, pfc_frame([0; 6], *prio, *quanta)),
        Ev::Junk { port, bytes } => (*port, bytes.clone()),
    }
}

fn run(seed: u64, evs: &[(u64, Ev)]) -> Vec<Departure> {
    let mut sw = switch(cfg(seed));
    let mut t = 0;
    let mut out = Vec::new();
    for (gap, e) in evs {
        t += gap;
        let (port, f) = frame(e);
        sw.receive(port, t, &f);
        sw.check_conservation().unwrap();
        let d = sw.advance(t);
        assert!(d.iter().all(|d| d.first <= t && d.last >= d.first));
        out.extend(d);
        sw.check_conservation().unwrap();
    }
    // Let everything drain, hopping from event to event.
    while let Some(n) = sw.next_event() {
        out.extend(sw.advance(n));
        sw.check_conservation().unwrap();
        if n > t + 1_000_000 {
            break;
        }
    }
    assert_eq!(sw.buffer_used(), 0);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn conserves_and_is_deterministic(seed in any::<u64>(), evs in proptest::collection::vec(ev(), 1..200)) {
        let a = run(seed, &evs);
        // Frames on one port never overlap on the wire.
        let mut last = [None::<u64>; 4];
        for d in &a {
            if let Some(l) = last[d.port] {
                prop_assert!(d.first > l);
            }
            last[d.port] = Some(d.last);
        }
        prop_assert_eq!(a, run(seed, &evs));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), port in 0..6usize) {
        let mut sw = switch(cfg(1));
        sw.receive(port, 0, &bytes);
        sw.advance(10_000);
        sw.check_conservation().unwrap();
        let c = sw.counters();
        prop_assert_eq!(c.rx_frames, 1);
    }

    #[test]
    fn mangled_headers_never_panic(i in 0..60usize, v in any::<u8>(), cut in 0..80usize) {
        // Valid frames with one header byte changed and cut anywhere: the
        // parser sees every field boundary.
        let mut f = data(0, 1, 26, 80);
        f[i] = v;
        f.truncate(cut);
        let mut sw = switch(cfg(1));
        sw.receive(0, 0, &f);
        sw.advance(10_000);
        sw.check_conservation().unwrap();
    }
}
