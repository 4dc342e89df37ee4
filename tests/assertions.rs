//! Every RTL assertion (`hw/rtl/rnic_assert.svh`, table in
//! docs/architecture.md "Assertions") can fire: each test drives a
//! block-level Verilated top with an input sequence that breaks the rule on
//! purpose, and checks that exactly that assertion fails, with its scope and
//! the cycle of the breaking edge. The same sequence with the rule kept
//! fails nothing, so the assertion is not one that fires anyway.
//!
//! Handshake rules (`valid` held, payload stable, until `ready`) are broken
//! both ways: valid dropped while stalled, and the payload changed while
//! stalled; `a_wr_data_stable` allows the first and is shown not to fire
//! on it.

use rnic_model::cq_writer::CqWriter;
use rnic_model::Dut;
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::{
    take_assertion_failure, AssertionFailure, Rtl, RtlAckTracker, RtlCqWriter, RtlDmaRd, RtlDmaWr,
    RtlRxBuf, RtlTop, RESET_CYCLES,
};

/// A change to one cycle's inputs.
type Change<'a, I> = &'a dyn Fn(&mut I);

/// Cycles allowed to reach a stall (ready low while valid is up).
const STALL_WITHIN: u64 = 200;

/// What a run saw: the failures, and the cycle of the edge that should
/// have failed (the one after the stall).
struct Outcome {
    failures: Vec<AssertionFailure>,
    break_cycle: u64,
}

/// Offers `base` (valid up) every cycle until `ready` is seen low, offers it
/// once more in that stalled cycle, then applies `base` changed by `brk` for
/// one cycle and `idle` for a few more; without `brk`, keeps offering `base`.
fn stall_then<T: RtlTop>(
    base: T::In,
    idle: T::In,
    ready: impl Fn(&T::Out) -> bool,
    brk: Option<Change<T::In>>,
) -> Outcome
where
    T::In: Copy,
{
    let mut rtl = Rtl::<T>::new();
    let mut out = rtl.reset();
    let mut n = 0;
    while ready(&out) {
        assert!(
            n < STALL_WITHIN,
            "{}: ready never went low within {STALL_WITHIN} cycles",
            T::VARIANT
        );
        out = rtl.tick(&base);
        n += 1;
    }
    assert!(
        rtl.assertion_failures().is_empty(),
        "{}: failures before the stall: {:?}",
        T::VARIANT,
        rtl.assertion_failures()
    );
    // The stalled cycle: valid up, ready low, at its rising edge.
    rtl.tick(&base);
    let break_cycle = rtl.cycle() - RESET_CYCLES;
    match brk {
        // Kept legal: the offer stays up (taken or not).
        None => {
            for _ in 0..4 {
                rtl.tick(&base);
            }
        }
        Some(b) => {
            let mut next = base;
            b(&mut next);
            rtl.tick(&next);
            for _ in 0..3 {
                rtl.tick(&idle);
            }
        }
    }
    Outcome {
        failures: rtl.assertion_failures().to_vec(),
        break_cycle,
    }
}

/// Checks that the run failed `name` (in a scope ending with `scope`) at
/// `cycle`, and nothing else first.
fn expect_failure(o: &Outcome, name: &str, scope: &str, cycle: u64) {
    let first = o
        .failures
        .first()
        .unwrap_or_else(|| panic!("{name} did not fire"));
    assert_eq!(first.name, name, "first failure: {first}");
    assert!(
        first.scope.ends_with(scope),
        "{name}: scope {} does not end with {scope}",
        first.scope
    );
    assert_eq!(first.cycle, cycle, "{first}");
}

/// The handshake rule `name` of `scope` on a block: each of `fires` applied
/// to the cycle after a stall fails it there; each of `quiet` (what the
/// rule allows) and an offer held fail nothing.
fn handshake<T: RtlTop>(
    name: &str,
    scope: &str,
    base: T::In,
    idle: T::In,
    ready: impl Fn(&T::Out) -> bool + Copy,
    fires: &[Change<T::In>],
    quiet: &[Change<T::In>],
) where
    T::In: Copy,
{
    let held = stall_then::<T>(base, idle, ready, None);
    assert!(
        held.failures.is_empty(),
        "{name}: a held offer failed: {:?}",
        held.failures
    );
    for brk in fires {
        let o = stall_then::<T>(base, idle, ready, Some(*brk));
        expect_failure(&o, name, scope, o.break_cycle);
    }
    for ok in quiet {
        let o = stall_then::<T>(base, idle, ready, Some(*ok));
        assert!(o.failures.is_empty(), "{name}: {:?}", o.failures);
    }
}

#[test]
fn dma_rd_a_rd_req_hold() {
    use rnic_model::dma_rd::DmaRdIn;
    // rq_ready low: nothing is issued, the request FIFO fills up.
    let idle = DmaRdIn::default();
    let base = DmaRdIn {
        rd_req_valid: true,
        rd_req_addr: 0x1_0000_0000,
        rd_req_len: 4096,
        rd_req_client: 1,
        ..idle
    };
    handshake::<<RtlDmaRd as Wrap>::T>(
        "a_rd_req_hold",
        "TOP.dma_rd",
        base,
        idle,
        |o| o.rd_req_ready,
        &[&|i| i.rd_req_valid = false, &|i| i.rd_req_len = 2048],
        &[],
    );
}

#[test]
fn dma_rd_a_rc_hold() {
    use rnic_model::dma_rd::DmaRdIn;
    // rc_ready is low in the first cycle after reset only (a registered
    // reset value): a completion beat offered then must stay.
    let idle = DmaRdIn::default();
    let mut base = DmaRdIn {
        rc_valid: true,
        rc_keep: u64::MAX,
        rc_sop: true,
        rc_eop: true,
        ..idle
    };
    base.rc_data[0] = 0x4a;
    handshake::<<RtlDmaRd as Wrap>::T>(
        "a_rc_hold",
        "TOP.dma_rd",
        base,
        idle,
        |o| o.rc_ready,
        &[&|i| i.rc_valid = false, &|i| i.rc_data[5] ^= 0x10],
        &[],
    );
}

#[test]
fn dma_wr_a_wr_req_hold() {
    use rnic_model::dma_wr::DmaWrIn;
    // No data and rq_ready low: the engine waits, the request FIFO fills.
    let idle = DmaWrIn::default();
    let base = DmaWrIn {
        wr_req_valid: true,
        wr_req_addr: 0x2000,
        wr_req_len: 256,
        wr_req_client: 2,
        ..idle
    };
    handshake::<<RtlDmaWr as Wrap>::T>(
        "a_wr_req_hold",
        "TOP.dma_wr",
        base,
        idle,
        |o| o.wr_req_ready,
        &[&|i| i.wr_req_valid = false, &|i| i.wr_req_addr = 0x3000],
        &[],
    );
}

#[test]
fn dma_wr_a_wr_data_stable() {
    use rnic_model::dma_wr::DmaWrIn;
    // Data without a request: the data FIFO fills.
    let idle = DmaWrIn::default();
    let mut base = DmaWrIn {
        wr_data_valid: true,
        ..idle
    };
    base.wr_data[0] = 0x11;
    // A bubble is allowed; a different beat right after the stall is not.
    handshake::<<RtlDmaWr as Wrap>::T>(
        "a_wr_data_stable",
        "TOP.dma_wr",
        base,
        idle,
        |o| o.wr_data_ready,
        &[&|i| i.wr_data[63] = 0x80],
        &[&|i| i.wr_data_valid = false],
    );
}

#[test]
fn cq_writer_a_cpl_hold() {
    use rnic_model::cq_writer::CqWriterIn;
    // wr_req_ready low: the first CQE write never leaves, the completion
    // FIFO fills.
    let idle = CqWriterIn::default();
    let base = CqWriterIn {
        cpl_valid: true,
        cpl_wr_id: 0x1234,
        cpl_len: 64,
        cpl_qp: 1,
        cpl_cq: 1,
        ..idle
    };
    handshake::<<RtlCqWriter as Wrap>::T>(
        "a_cpl_hold",
        "TOP.cq_writer",
        base,
        idle,
        |o| o.cpl_ready,
        &[&|i| i.cpl_valid = false, &|i| i.cpl_wr_id = 0x5678],
        &[],
    );
}

#[test]
fn ack_tracker_a_cpl_hold() {
    use rnic_model::ack_tracker::AckTrackerIn;
    // RC completions wait for an ACK that never comes: the QP's queue fills.
    let idle = AckTrackerIn::default();
    let base = AckTrackerIn {
        cpl_valid: true,
        cpl_wr_id: 7,
        cpl_qp: 2,
        cpl_psn: 100,
        ..idle
    };
    handshake::<<RtlAckTracker as Wrap>::T>(
        "a_cpl_hold",
        "TOP.ack_tracker",
        base,
        idle,
        |o| o.cpl_ready,
        &[&|i| i.cpl_valid = false, &|i| i.cpl_psn = 101],
        &[],
    );
}

#[test]
fn cq_writer_a_wr_done_expected() {
    use rnic_model::cq_writer::CqWriterIn;
    let mut rtl = RtlCqWriter::new();
    rtl.reset();
    let idle = CqWriterIn::default();
    for _ in 0..3 {
        rtl.tick(&idle);
    }
    assert!(rtl.assertion_failures().is_empty());
    // A wr_done with no CQE write in flight.
    let at = rtl.cycle() - RESET_CYCLES;
    rtl.tick(&CqWriterIn {
        wr_done_valid: true,
        ..idle
    });
    rtl.tick(&idle);
    let o = Outcome {
        failures: rtl.assertion_failures().to_vec(),
        break_cycle: at,
    };
    expect_failure(&o, "a_wr_done_expected", "TOP.cq_writer", o.break_cycle);
}

#[test]
fn sync_fifo_a_no_push_full() {
    use rnic_model::cq_writer::CqWriterIn;
    // cq_writer's frame_done FIFO (NEVER_FULL) holds 2 * CPL_DEPTH = 32
    // entries, one per frame whose completion waits; frame_done pulses with
    // no completion at all fill it, and the 33rd push is lost.
    let idle = CqWriterIn::default();
    let pulse = CqWriterIn {
        frame_done_valid: true,
        ..idle
    };
    let mut rtl = RtlCqWriter::new();
    rtl.reset();
    for _ in 0..32 {
        rtl.tick(&pulse);
    }
    rtl.tick(&idle);
    assert!(
        rtl.assertion_failures().is_empty(),
        "32 entries fit: {:?}",
        rtl.assertion_failures()
    );
    let at = rtl.cycle() - RESET_CYCLES;
    rtl.tick(&pulse);
    rtl.tick(&idle);
    let o = Outcome {
        failures: rtl.assertion_failures().to_vec(),
        break_cycle: at,
    };
    expect_failure(
        &o,
        "a_no_push_full",
        "TOP.cq_writer.u_fd_fifo.g_never_full",
        o.break_cycle,
    );
}

/// rx_buf: `ticks` one-beat frames, then a cycle with `last` (a frame's
/// last beat or a verdict as given); the failures after it.
fn rx_buf_run(frames: usize, last: rnic_model::rx_buf::RxBufIn) -> Outcome {
    use rnic_model::rx_buf::RxBufIn;
    let idle = RxBufIn {
        out_ready: true,
        ..Default::default()
    };
    let frame = RxBufIn {
        in_valid: true,
        in_keep: 1,
        in_last: true,
        ..idle
    };
    let mut rtl = RtlRxBuf::new();
    rtl.reset();
    for _ in 0..frames {
        rtl.tick(&frame);
    }
    assert!(
        rtl.assertion_failures().is_empty(),
        "{frames} frames waiting are allowed: {:?}",
        rtl.assertion_failures()
    );
    let at = rtl.cycle() - RESET_CYCLES;
    rtl.tick(&last);
    rtl.tick(&idle);
    Outcome {
        failures: rtl.assertion_failures().to_vec(),
        break_cycle: at,
    }
}

#[test]
fn rx_buf_a_vd_no_frame() {
    use rnic_model::rx_buf::RxBufIn;
    let verdict = RxBufIn {
        vd_valid: true,
        vd_keep: true,
        out_ready: true,
        ..Default::default()
    };
    // One frame waiting: its verdict is legal.
    assert!(rx_buf_run(1, verdict).failures.is_empty());
    let o = rx_buf_run(0, verdict);
    expect_failure(&o, "a_vd_no_frame", "TOP.rx_buf", o.break_cycle);
}

#[test]
fn rx_buf_a_pend_overflow() {
    use rnic_model::rx_buf::{RxBufIn, PEND};
    let frame = RxBufIn {
        in_valid: true,
        in_keep: 1,
        in_last: true,
        out_ready: true,
        ..Default::default()
    };
    // PEND frames may wait; a verdict in the same cycle makes room.
    let both = RxBufIn {
        vd_valid: true,
        ..frame
    };
    assert!(rx_buf_run(PEND, both).failures.is_empty());
    let o = rx_buf_run(PEND, frame);
    expect_failure(&o, "a_pend_overflow", "TOP.rx_buf", o.break_cycle);
}

/// A failed assertion ends a lockstep run like a divergence, naming the
/// assertion, scope and cycle, even though the ports of both sides agree.
#[test]
fn lockstep_reports_an_assertion_as_a_divergence() {
    use rnic_model::cq_writer::{CqWriterIn, CqWriterOut};
    struct Spurious;
    impl Env for Spurious {
        type In = CqWriterIn;
        type Out = CqWriterOut;
        fn step(&mut self, cycle: u64, _: &CqWriterOut) -> CqWriterIn {
            CqWriterIn {
                wr_done_valid: cycle == 5,
                ..CqWriterIn::default()
            }
        }
        fn finished(&self) -> bool {
            false
        }
    }
    let d = lockstep::run(
        &mut CqWriter::new(),
        &mut RtlCqWriter::new(),
        &mut Spurious,
        50,
    )
    .expect_err("the assertion ends the run");
    let a = d.assertion.as_ref().expect("an assertion, not a port");
    assert_eq!(a.name, "a_wr_done_expected");
    assert_eq!(a.scope, "TOP.cq_writer");
    // The runner's cycle 5 (the RTL's count has the reset cycles on top).
    assert_eq!(a.cycle, 5);
    assert_eq!(d.cycle, a.cycle);
    let text = d.to_string();
    assert!(
        text.contains("ASSERTION a_wr_done_expected failed in cq_writer (TOP.cq_writer)"),
        "{text}"
    );
    // Taken by the runner: nothing left for the next run on this thread.
    assert!(take_assertion_failure().is_none());
}

/// The binding's assertion log survives moving the model to another thread
/// (its context is attached to whichever thread drives it).
#[test]
fn assertions_are_reported_from_another_thread() {
    use rnic_model::cq_writer::CqWriterIn;
    let mut rtl = RtlCqWriter::new();
    rtl.reset();
    let rtl = std::thread::spawn(move || {
        rtl.tick(&CqWriterIn {
            wr_done_valid: true,
            ..CqWriterIn::default()
        });
        rtl.tick(&CqWriterIn::default());
        rtl
    })
    .join()
    .unwrap();
    let f = rtl.assertion_failures();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].name, "a_wr_done_expected");
    assert_eq!(f[0].cycle, 0);
}

/// `Rtl<T>` to its `T` (the generated aliases name the binding).
trait Wrap {
    type T: RtlTop;
}
impl<T: RtlTop> Wrap for Rtl<T> {
    type T = T;
}

/// Runs `seq` (one input a cycle) on a fresh `T`, then `tail` idle cycles;
/// the failures.
fn run_seq<T: RtlTop>(seq: &[T::In], idle: T::In, tail: usize) -> Vec<AssertionFailure>
where
    T::In: Copy,
{
    let mut rtl = Rtl::<T>::new();
    rtl.reset();
    for i in seq {
        rtl.tick(i);
    }
    for _ in 0..tail {
        rtl.tick(&idle);
    }
    rtl.assertion_failures().to_vec()
}

/// The first failure is `name` in `scope` at `cycle`.
fn first_is(f: &[AssertionFailure], name: &str, scope: &str, cycle: u64) {
    let o = Outcome {
        failures: f.to_vec(),
        break_cycle: cycle,
    };
    expect_failure(&o, name, scope, cycle);
}

/// The assertions of the receive write path: rx_buf's header queue,
/// rx_wr's input rules and wr_arb's, each broken on purpose (and the same
/// sequence kept legal fails nothing).
#[test]
fn rx_write_path_assertions_fire() {
    use rnic_model::rx_buf::{RxBufIn, HQ};
    use rnic_model::rx_wr::RxWrIn;
    use rnic_model::wr_arb::WrArbIn;
    use rnic_testbench::rtl::{RxBufTop, RxWrTop, WrArbTop};

    // rx_buf's header queue (u_hq, NEVER_FULL) holds HQ headers, enough
    // when each frame's header is taken no later than its last beat. A
    // consumer that drains beats (out_ready high) and never takes a header
    // breaks that: HQ kept one-beat frames fit, the next verdict's push is
    // lost.
    let idle = RxBufIn {
        out_ready: true,
        ..Default::default()
    };
    let frame = RxBufIn {
        in_valid: true,
        in_keep: 1,
        in_last: true,
        ..idle
    };
    let verdict = RxBufIn {
        vd_valid: true,
        vd_keep: true,
        ..idle
    };
    let mut seq: Vec<RxBufIn> = (0..HQ).flat_map(|_| [frame, verdict]).collect();
    seq.push(frame);
    let f = run_seq::<RxBufTop>(&seq, idle, 2);
    assert!(f.is_empty(), "{HQ} headers fit: {f:?}");
    let at = seq.len() as u64;
    seq.push(verdict);
    let f = run_seq::<RxBufTop>(&seq, idle, 2);
    first_is(&f, "a_no_push_full", "TOP.rx_buf.u_hq.g_never_full", at);

    // rx_wr. Everything ready; a one-beat frame always on in_*.
    let w_idle = RxWrIn {
        in_valid: true,
        in_keep: u64::MAX,
        in_last: true,
        wr_req_ready: true,
        wr_data_ready: true,
        tok_ready: true,
        ..Default::default()
    };
    let cmd = |off: u16, len: u16, last: bool| RxWrIn {
        wc_valid: true,
        wc_off: off,
        wc_len: len,
        wc_last: last,
        ..w_idle
    };
    let tok = RxWrIn {
        wc_valid: true,
        wc_tok: true,
        ..w_idle
    };
    // a_done_unexpected: wr_done with no request outstanding.
    let done = RxWrIn {
        wr_done_valid: true,
        ..w_idle
    };
    first_is(
        &run_seq::<RxWrTop>(&[done], w_idle, 2),
        "a_done_unexpected",
        "TOP.rx_wr",
        0,
    );
    // a_tok_mid_frame: a token after a frame's first command, before its
    // last. Command at 0 is loaded at 1; the token is at the head from 2.
    let legal = run_seq::<RxWrTop>(&[cmd(0, 0, true), tok], w_idle, 4);
    assert!(legal.is_empty(), "{legal:?}");
    first_is(
        &run_seq::<RxWrTop>(&[cmd(0, 0, false), tok], w_idle, 4),
        "a_tok_mid_frame",
        "TOP.rx_wr",
        2,
    );
    // a_cmd_order: a segment starting before the previous one's end. The
    // first (bytes 10..20) loads at 1 and is written at 2, where the
    // second loads.
    let legal = run_seq::<RxWrTop>(&[cmd(10, 10, false), cmd(20, 1, true)], w_idle, 6);
    assert!(legal.is_empty(), "{legal:?}");
    first_is(
        &run_seq::<RxWrTop>(&[cmd(10, 10, false), cmd(19, 1, true)], w_idle, 6),
        "a_cmd_order",
        "TOP.rx_wr",
        2,
    );
    // a_seg_past_frame: 100 bytes of a one-beat frame. Loaded at 1, the
    // beat is taken at 2; at 3 the segment still needs the next beat.
    let legal = run_seq::<RxWrTop>(&[cmd(0, 64, true)], w_idle, 6);
    assert!(legal.is_empty(), "{legal:?}");
    first_is(
        &run_seq::<RxWrTop>(&[cmd(0, 100, true)], w_idle, 6),
        "a_seg_past_frame",
        "TOP.rx_wr",
        3,
    );
    // a_wc_hold: with tok_ready low, a token fills the token register and
    // two more the command FIFO; wc_ready goes low.
    let stalled_tok = RxWrIn {
        tok_ready: false,
        ..tok
    };
    handshake::<RxWrTop>(
        "a_wc_hold",
        "TOP.rx_wr",
        stalled_tok,
        RxWrIn {
            tok_ready: false,
            ..w_idle
        },
        |o| o.wc_ready,
        &[&|i| i.wc_valid = false, &|i| i.wc_tok_data.0[0] ^= 1],
        &[],
    );
    // a_in_hold: no command, so no beat is taken (in_ready low from reset).
    let beat = RxWrIn {
        in_valid: true,
        in_keep: u64::MAX,
        ..Default::default()
    };
    handshake::<RxWrTop>(
        "a_in_hold",
        "TOP.rx_wr",
        beat,
        RxWrIn::default(),
        |o| o.in_ready,
        &[&|i| i.in_valid = false, &|i| i.in_data.0[5] ^= 1, &|i| {
            i.in_last = true
        }],
        &[],
    );

    // wr_arb: a_len_zero (dma_wr takes 1..65536 bytes).
    let a_idle = WrArbIn {
        wr_req_ready: true,
        wr_data_ready: true,
        ..Default::default()
    };
    let zero = WrArbIn {
        b_req_valid: true,
        b_req_len: 0,
        ..a_idle
    };
    first_is(
        &run_seq::<WrArbTop>(&[zero], a_idle, 2),
        "a_len_zero",
        "TOP.wr_arb",
        0,
    );
    // a_a_data_hold / a_b_data_hold: no request taken, so no beat is
    // (data_ready low from reset).
    for (name, base) in [
        (
            "a_a_data_hold",
            WrArbIn {
                a_data_valid: true,
                ..Default::default()
            },
        ),
        (
            "a_b_data_hold",
            WrArbIn {
                b_data_valid: true,
                ..Default::default()
            },
        ),
    ] {
        let a = name == "a_a_data_hold";
        handshake::<WrArbTop>(
            name,
            "TOP.wr_arb",
            base,
            WrArbIn::default(),
            move |o| if a { o.a_data_ready } else { o.b_data_ready },
            &[
                &|i| (i.a_data_valid, i.b_data_valid) = (false, false),
                &|i| {
                    i.a_data.0[0] ^= 1;
                    i.b_data.0[0] ^= 1;
                },
            ],
            &[],
        );
    }
    // a_a_req_hold / a_b_req_hold: dma_wr not ready, the output register
    // and the skid entry fill, the client's ready drops.
    for (name, base) in [
        (
            "a_a_req_hold",
            WrArbIn {
                a_req_valid: true,
                a_req_len: 64,
                ..Default::default()
            },
        ),
        (
            "a_b_req_hold",
            WrArbIn {
                b_req_valid: true,
                b_req_len: 64,
                ..Default::default()
            },
        ),
    ] {
        let a = name == "a_a_req_hold";
        handshake::<WrArbTop>(
            name,
            "TOP.wr_arb",
            base,
            WrArbIn::default(),
            move |o| if a { o.a_req_ready } else { o.b_req_ready },
            &[&|i| (i.a_req_valid, i.b_req_valid) = (false, false), &|i| {
                (i.a_req_addr, i.b_req_addr) = (1, 1)
            }],
            &[],
        );
    }
}

/// sq_fetch: a pop of the QP being rewound in the same cycle (the rewind
/// empties its buffer; tx_engine never pops a QP it rewinds).
#[test]
fn sq_fetch_a_pop_rewind() {
    use rnic_model::sq_fetch::SqFetchIn;
    use rnic_testbench::rtl::SqFetchTop;
    let idle = SqFetchIn {
        rd_req_ready: true,
        ..Default::default()
    };
    let rw = SqFetchIn {
        rw_valid: true,
        rw_qp: 3,
        rw_idx: 5,
        ..idle
    };
    let pop = |q: u8, base: SqFetchIn| SqFetchIn {
        wqe_pop_valid: true,
        wqe_pop_qp: q,
        ..base
    };
    // A pop of another QP with the rewind, and of the QP the cycle after.
    let legal = run_seq::<SqFetchTop>(&[pop(2, rw), pop(3, idle)], idle, 2);
    assert!(legal.is_empty(), "{legal:?}");
    first_is(
        &run_seq::<SqFetchTop>(&[idle, pop(3, rw)], idle, 2),
        "a_pop_rewind",
        "TOP.sq_fetch",
        1,
    );
}

/// retx_ctl's input contract `a_nak_una`: ack_tracker has set una := the
/// NAK's PSN when the NAK comes. A NAK of PSN 5 with una 5 fails nothing;
/// the same NAK with una 4 fails at its cycle.
#[test]
fn retx_ctl_a_nak_una() {
    use rnic_model::retx_ctl::{set_una, RetxCtlIn};
    use rnic_testbench::rtl::RetxCtlTop;

    let nak = |una: u32| {
        let mut i = RetxCtlIn {
            nak_valid: true,
            nak_qp: 3,
            nak_psn: 5,
            busy: 1 << 3,
            ..Default::default()
        };
        set_una(&mut i.una_all, 3, una);
        i
    };
    let mut idle = RetxCtlIn::default();
    set_una(&mut idle.una_all, 3, 5);
    let legal = run_seq::<RetxCtlTop>(&[idle, idle, nak(5), idle], idle, 3);
    assert_eq!(legal, vec![]);
    let f = run_seq::<RetxCtlTop>(&[idle, idle, nak(4), idle], idle, 3);
    first_is(&f, "a_nak_una", "TOP.retx_ctl", 2);
}
