//! Literal cases of `rq_fetch`'s contract (docs/responder.md, "rq_fetch").

use super::*;

const BASE: u64 = 0x1_0000_0080;

fn db(qp: u8, pi: u16, state: u8, log: u8) -> RqFetchIn {
    RqFetchIn {
        db_valid: true,
        db_qp: qp,
        db_pi: pi,
        db_state: state,
        db_base: BASE,
        db_log: log,
        ..Default::default()
    }
}

fn idle() -> RqFetchIn {
    RqFetchIn::default()
}

/// The beats of WQE `k`: byte j of the WQE is `k * 7 + j` (mod 256).
fn wqe(k: u8) -> Rqe {
    let mut r = [0u8; RQE_BYTES];
    for (j, b) in r.iter_mut().enumerate() {
        *b = k.wrapping_mul(7).wrapping_add(j as u8);
    }
    Rqe(r)
}

fn beat(w: &Rqe, hi: bool, last: bool, status: u8) -> RqFetchIn {
    let mut d = Beat::default();
    let at = if hi { 64 } else { 0 };
    d.0.copy_from_slice(&w.0[at..at + 64]);
    RqFetchIn {
        rd_data_valid: true,
        rd_data: d,
        rd_data_last: last,
        rd_data_status: status,
        ..Default::default()
    }
}

/// Ticks idle until a request shows; returns (cycles, addr, len) and takes it.
fn take_req(f: &mut RqFetch) -> (u32, u64, u32) {
    for n in 1..20 {
        let o = f.tick(&RqFetchIn {
            rd_req_ready: false,
            ..idle()
        });
        if o.rd_req_valid {
            let r = (n, o.rd_req_addr, o.rd_req_len);
            f.tick(&RqFetchIn {
                rd_req_ready: true,
                ..idle()
            });
            return r;
        }
    }
    panic!("no request");
}

/// Doorbell at n -> request at n+3; two WQEs in one read; available the
/// cycle after the last beat; a read sees the head before a pop of the
/// same cycle.
#[test]
fn doorbell_fetch_read_pop() {
    let mut f = RqFetch::new();
    f.reset();
    assert!(!f.tick(&db(3, 2, 1, 4)).rd_req_valid);
    // The doorbell's tick returned cycle n+1's outputs; the request shows
    // on the second tick after it: cycle n+3.
    let (n, addr, len) = take_req(&mut f);
    assert_eq!((n, addr, len), (2, BASE, 256));
    let (w0, w1) = (wqe(0), wqe(1));
    f.tick(&beat(&w0, false, false, 0));
    f.tick(&beat(&w0, true, false, 0));
    assert_eq!(f.outputs().rqe_avail, 0);
    f.tick(&beat(&w1, false, false, 0));
    let o = f.tick(&beat(&w1, true, true, 0));
    assert_eq!((o.rqe_avail, o.ev_rqe_n), (1 << 3, 2));
    // Read and pop in the same cycle: the read sees w0.
    let o = f.tick(&RqFetchIn {
        rqe_rd_valid: true,
        rqe_rd_qp: 3,
        rqe_pop_valid: true,
        rqe_pop_qp: 3,
        ..idle()
    });
    assert!(o.rqe_present);
    assert_eq!(o.rqe_data, w0);
    assert_eq!(o.ev_rqe_n, 0);
    let o = f.tick(&RqFetchIn {
        rqe_rd_valid: true,
        rqe_rd_qp: 3,
        ..idle()
    });
    assert_eq!(o.rqe_data, w1);
    // Held without a read.
    let o = f.tick(&RqFetchIn {
        rqe_pop_valid: true,
        rqe_pop_qp: 3,
        ..idle()
    });
    assert!(o.rqe_present && o.rqe_data == w1 && o.rqe_avail == 0);
    let o = f.tick(&RqFetchIn {
        rqe_rd_valid: true,
        rqe_rd_qp: 3,
        ..idle()
    });
    assert!(!o.rqe_present && o.rqe_avail == 0);
}

/// Serves a read of `n` WQEs (`k0`, `k0 + 1`, ...) and pops them all.
fn serve_and_pop(f: &mut RqFetch, qp: u8, k0: u8, n: u8) {
    for k in 0..n {
        f.tick(&beat(&wqe(k0 + k), false, false, 0));
        f.tick(&beat(&wqe(k0 + k), true, k + 1 == n, 0));
    }
    for _ in 0..n {
        f.tick(&RqFetchIn {
            rqe_pop_valid: true,
            rqe_pop_qp: qp,
            ..idle()
        });
    }
}

/// A ring of 4: entries 0-1 in one read, then 2 alone (all that is
/// posted); with two more posted, entry 3 alone (the ring end cuts the
/// read), then entry 0.
#[test]
fn read_cut_at_ring_end() {
    let mut f = RqFetch::new();
    f.reset();
    f.tick(&db(1, 3, 1, 2));
    let (_, addr, len) = take_req(&mut f);
    assert_eq!((addr, len), (BASE, 256));
    serve_and_pop(&mut f, 1, 0, 2);
    let (_, addr, len) = take_req(&mut f);
    assert_eq!((addr, len), (BASE + 2 * 128, 128));
    serve_and_pop(&mut f, 1, 2, 1);
    f.tick(&db(1, 5, 3, 2));
    let (_, addr, len) = take_req(&mut f);
    assert_eq!((addr, len), (BASE + 3 * 128, 128), "cut at the ring end");
    serve_and_pop(&mut f, 1, 3, 1);
    let (_, addr, len) = take_req(&mut f);
    assert_eq!((addr, len), (BASE, 128), "wrapped to entry 0");
}

/// A failed read: no WQE, err pulses the cycle after its last beat.
#[test]
fn error_drops_and_reports() {
    let mut f = RqFetch::new();
    f.reset();
    f.tick(&db(7, 1, 1, 3));
    take_req(&mut f);
    f.tick(&beat(&wqe(0), false, false, 2));
    let o = f.tick(&beat(&wqe(0), true, true, 0));
    assert!(o.err_valid && o.err_qp == 7);
    assert_eq!((o.rqe_avail, o.ev_rqe_n), (0, 0));
    assert!(!f.tick(&idle()).err_valid);
}

/// A RESET doorbell with a read in flight: the read completes, discarded,
/// no error; the QP fetches again from index 0 after it.
#[test]
fn reset_discards_read_in_flight() {
    let mut f = RqFetch::new();
    f.reset();
    f.tick(&db(2, 1, 1, 3));
    take_req(&mut f);
    f.tick(&db(2, 9, ST_RESET, 3));
    f.tick(&db(2, 1, 4, 3));
    f.tick(&beat(&wqe(0), false, false, 1));
    let o = f.tick(&beat(&wqe(0), true, true, 1));
    assert!(!o.err_valid && o.rqe_avail == 0 && o.ev_rqe_n == 0);
    let (_, addr, len) = take_req(&mut f);
    assert_eq!((addr, len), (BASE, 128));
    f.tick(&beat(&wqe(5), false, false, 0));
    let o = f.tick(&beat(&wqe(5), true, true, 0));
    assert_eq!(o.rqe_avail, 1 << 2);
}

/// Doorbells that do not add work (repeated pi, RESET on an idle QP) issue
/// nothing.
#[test]
fn no_work_no_read() {
    let mut f = RqFetch::new();
    f.reset();
    f.tick(&db(4, 0, 1, 3));
    f.tick(&db(5, 0, ST_RESET, 3));
    for _ in 0..10 {
        assert!(!f.tick(&idle()).rd_req_valid);
    }
}
