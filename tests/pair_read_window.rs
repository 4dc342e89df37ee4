//! max_rd_atomic between two NICs (`vectors/pair/rc_read_max_rd.json`):
//! A's QP 0 (max_rd_atomic 2) posts six READs and a WRITE at once, B's QP 0
//! executes at most 2 READs at once (max_dest_rd_atomic 2).
//!
//! The testbench's READ-window check (`scenario/rnic_top/read_window.rs`:
//! never a READ request on the wire while the QP already has its bound
//! outstanding, from A's `tx_*` and `rx_*` frames) runs on every vector;
//! here it is shown to bite, and the run to reach the bound rather than
//! pass it vacuously.

mod common;

use common::pair_nic::{load_system, Tampered};
use rnic_model::csr_map::{QP_BASE, QP_CTRL_OFF, QP_MAX, QP_STRIDE};
use rnic_model::rnic_top::RnicTopIn;
use rnic_testbench::scenario::{pair, Mode, RunOpts};
use rnic_testbench::vector::SystemVector;
use rnic_testbench::wire::roce::RoceRepr;

fn vector() -> SystemVector {
    load_system("vectors/pair/rc_read_max_rd.json")
}

/// The most READs of A's QP 0 outstanding at one of its request frames,
/// counting a READ done when B *sent* its last response (earlier than it
/// arrived at A): a lower bound of what A's window held.
fn most_outstanding(r: &pair::PairReport, a_qpn_at_b: u32) -> i64 {
    let (mut out, mut most) = (0i64, 0i64);
    for (_, f) in &r.report.tx_frames {
        let p = RoceRepr::parse_bytes(f).expect("a good frame");
        match p.bth.opcode {
            0x0C if p.bth.dest_qp == a_qpn_at_b => {
                out += 1;
                most = most.max(out);
            }
            0x0F | 0x10 if p.bth.dest_qp == 0 => out -= 1,
            _ => {}
        }
    }
    most
}

#[test]
fn reads_wait_at_max_rd_atomic_and_all_complete() {
    let v = vector();
    let r = pair::run(&v, Mode::Lockstep, &RunOpts::default()).unwrap();
    assert!(
        r.report.clean(),
        "{:?} {:?}",
        r.report.divergence,
        r.report.failures
    );
    let qpn = v.a.qps[0].remote_qpn;
    assert_eq!(most_outstanding(&r, qpn), 2, "the window fills to 2");
    // Six READs (CQE opcode 2) in order, each its length, then the WRITE (1).
    let got: Vec<(u8, u8, u32)> =
        r.a.cqes
            .iter()
            .map(|c| (c.status, c.opcode, c.len))
            .collect();
    let mut want: Vec<(u8, u8, u32)> = (0..6).map(|k| (0, 2, 5000 + 1000 * k)).collect();
    want.push((0, 1, 3000));
    assert_eq!(got, want);
    // B executed every READ: none refused.
    assert_eq!(r.b.counters.get("read_jobs").copied(), Some(6));
    assert_eq!(r.b.counters.get("read_job_full").copied(), Some(0));
}

/// A NIC whose software's MAX_RD never reaches it: every CTRL write has
/// MAX_RD forced to 7, so A sends all six READs at once and the check
/// must fail the run (the model alone: nothing else differs).
#[test]
fn the_window_check_fails_a_nic_that_ignores_the_bound() {
    let v = vector();
    // Every QP's CTRL word (docs/csr.md).
    let unbounded = |i: &mut RnicTopIn| {
        let rel = i.mmio_wr_addr.wrapping_sub(QP_BASE);
        if i.mmio_wr_valid
            && usize::from(rel / QP_STRIDE) < QP_MAX
            && rel % QP_STRIDE == QP_CTRL_OFF
        {
            i.mmio_wr_data |= 7 << 17;
        }
    };
    let r = pair::run_with(&v, Mode::Model, &RunOpts::default(), |_| {
        Tampered::new(unbounded)
    })
    .unwrap();
    assert!(
        r.report
            .failures
            .iter()
            .any(|f| f.contains("above max_rd_atomic 2")),
        "{:?}",
        r.report.failures
    );
    assert!(most_outstanding(&r, v.a.qps[0].remote_qpn) > 2);
}
