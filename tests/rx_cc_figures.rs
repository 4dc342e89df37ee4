//! The receive path's and congestion control's figures (issue 4), in exact
//! simulation cycles, every run in lockstep (model and RTL) under the
//! environment's independent checks:
//!
//! - PFC reaction: from the last beat of a PFC frame (cycle n) to the pause
//!   being in force: no frame of that priority starts (first beat on
//!   `tx_*`) at n + 4 or later until the pause ends; contract at most 4.
//! - CE-marked packet's last beat to its CNP's first beat on `tx_*`, idle
//!   link: at most 16.
//! - CNP's last beat to the rate cut being in force (the cut rate is what
//!   the rate limiter is filled with, read back through STAT_RC every
//!   cycle): at most 4.
//! - RX line rate: back-to-back minimum- and maximum-size frames, one beat
//!   a cycle, zero drops.
//! - A pause of one priority leaves a QP of another priority at full rate.
//!
//! `cargo test --release --test rx_cc_figures -- --nocapture` prints them.

use std::path::Path;

mod common;
use common::figures;

use common::vector_json::{doorbell_json, mr_json, uc_qp_json, write_wqe_json, MR_VA};

use rnic_model::csr_map::CC_STAT_RC_ADDR;
use rnic_model::rnic_top::{RnicTop, RnicTopIn, RnicTopOut};
use rnic_testbench::lockstep::{self, Env};
use rnic_testbench::rtl::RtlRnicTop;
use rnic_testbench::scenario::RnicTopEnv;
use rnic_testbench::vector::Vector;

/// The README's table of these figures (one row per test).
const TABLE: &str = "rx_cc_figures";
const HEADER: &[&str] = &["figure", "contract", "measured"];

const PFC_REACTION_MAX: u64 = 4;
const CE_TO_CNP_MAX: u64 = 16;
const CNP_TO_CUT_MAX: u64 = 4;

fn qp(n: u32, extra: &str) -> String {
    uc_qp_json(n, 256, extra)
}

/// A vector of `qps` (JSON objects), one 64 KiB WRITE per entry of `writes`
/// (QP, doorbell cycle), and `rx` frames.
fn vector(qps: &[String], writes: &[(u32, u64)], rx: &str, extra: &str) -> Vector {
    let wqes: Vec<String> = writes
        .iter()
        .enumerate()
        .map(|(k, &(q, _))| write_wqe_json(q, k as u32, 65536, MR_VA + k as u64 * 0x1_0000))
        .collect();
    let dbs: Vec<String> = writes
        .iter()
        .map(|&(q, at)| doorbell_json(at, q, 1))
        .collect();
    let text = format!(
        r#"{{"format":1,"name":"figure","description":"figure","checked_against":"tests/rx_cc_figures.rs",
        "top":"rnic_top",
        "memory":[{{"addr":"0x1000000","len":1048576,"seed":3}}],
        "qps":[{}],
        "mrs":[{}],
        "cqs":[{{"cq":0,"ring":{{"base":"0x20000000","log_size":4}}}}],
        "wqes":[{}], "doorbells":[{}], "rx":[{rx}]{extra}, "max_cycles":400000}}"#,
        qps.join(","),
        mr_json("0x100000"),
        wqes.join(","),
        dbs.join(",")
    );
    Vector::parse(Path::new("figure"), &text).expect("valid vector")
}

/// Runs `env` in lockstep to the end and applies every independent check.
fn run<E: Env<In = RnicTopIn, Out = RnicTopOut>>(env: &mut E, max: u64) -> u64 {
    let fin = lockstep::run(&mut RnicTop::new(), &mut RtlRnicTop::new(), env, max)
        .unwrap_or_else(|d| panic!("{d}"));
    assert!(fin.completed, "not complete after {max} cycles");
    fin.cycles
}

fn run_checked(v: &Vector) -> RnicTopEnv {
    let mut env = RnicTopEnv::new(v).unwrap();
    let cycles = run(&mut env, v.max_cycles);
    env.finish_checks(cycles);
    assert!(env.common.failures.is_empty(), "{:#?}", env.common.failures);
    env
}

/// PCP of a frame's 802.1Q tag (0 untagged).
fn pcp(f: &[u8]) -> u8 {
    if f[12..14] == [0x81, 0x00] {
        f[14] >> 5
    } else {
        0
    }
}

#[test]
fn pfc_pause_is_in_force_within_4_cycles() {
    // QP 0 on priority 3 streams 64 KiB in 256-byte packets (6-beat frames,
    // a frame start every few cycles); a PFC frame for priority 3 arrives at
    // 16 different phases of that stream.
    let mut worst = 0;
    let mut tight = 0;
    for phase in 0..16u64 {
        let rx = format!(
            r#"{{"at":{},"frame":{{"pfc":{{"quanta":{{"3":300}}}}}}}}"#,
            500 + phase
        );
        let v = vector(&[qp(0, r#","vlan":{"vid":5,"pcp":3}"#)], &[(0, 0)], &rx, "");
        let env = run_checked(&v);
        let n = env.rx.sent[0].last;
        // 300 quanta = 153,600 bit times = 384 cycles at 400 bits/cycle.
        let end = n + 3 + 384;
        let starts: Vec<u64> = env
            .frames
            .iter()
            .filter(|(_, f)| pcp(f) == 3)
            .map(|&(s, _)| s)
            .collect();
        assert!(
            starts.iter().any(|&s| s > end),
            "phase {phase}: nothing resumed after the pause"
        );
        // The last start after the PFC's last beat and before the pause ended.
        if let Some(&last) = starts.iter().filter(|&&s| s > n && s <= end).max() {
            let k = last - n + 1;
            worst = worst.max(k);
            tight += (k == PFC_REACTION_MAX) as u32;
        }
    }
    println!(
        "PFC reaction: pause in force {worst} cycles after the PFC frame's last beat \
         (worst of 16 phases; {tight} phases had a frame start at n + 3)"
    );
    figures::row(
        TABLE,
        HEADER,
        "1",
        &[
            "PFC frame to pause in force (no frame of that priority starts from n + k on), worst of 16 phases of a 256-byte-packet stream".into(),
            format!("k ≤ {PFC_REACTION_MAX}"),
            format!("{worst} ({tight} of 16 phases had a frame start at n + {})", worst.saturating_sub(1)),
        ],
    );
    assert!(worst <= PFC_REACTION_MAX, "PFC reaction {worst} cycles");
    assert!(
        tight > 0,
        "no phase put a frame start right before the pause: not measured"
    );
}

#[test]
fn ce_to_cnp_within_16_cycles_on_an_idle_link() {
    let mut worst = 0;
    for (name, q) in [
        ("IPv4", qp(1, "")),
        (
            "IPv6 + VLAN",
            qp(1, r#","vlan":{"vid":9,"pcp":2}"#).replace(
                r#"{"ipv4":{"src":"10.0.0.1","dst":"10.0.1.1"}}"#,
                r#"{"ipv6":{"src":"fd00::1","dst":"fd00::2"}}"#,
            ),
        ),
    ] {
        let rx = r#"{"at":200,"frame":{"data":{"qp":1,"psn":0,"len":1000,"ce":true}}}"#;
        let env = run_checked(&vector(&[q], &[], rx, ""));
        let n = env.rx.sent[0].last;
        let (f, _) = env.frames[0];
        println!("CE last beat -> CNP first beat ({name}): {} cycles", f - n);
        worst = worst.max(f - n);
    }
    figures::row(
        TABLE,
        HEADER,
        "2",
        &[
            "CE-marked packet to the first beat of its CNP, idle link (IPv4, IPv6 + VLAN)".into(),
            format!("≤ {CE_TO_CNP_MAX}"),
            worst.to_string(),
        ],
    );
    assert!(worst <= CE_TO_CNP_MAX, "CE to CNP {worst} cycles");
}

/// Polls STAT_RC (QP 0, STAT_QP's reset value) with an MMIO read in every
/// cycle the environment itself does not read.
struct PollRate {
    inner: RnicTopEnv,
    /// Who issued last cycle's read: Some(cycle) when this wrapper did.
    mine: Option<u64>,
    /// (cycle the read was issued, STAT_RC as it was then).
    samples: Vec<(u64, u32)>,
}

impl Env for PollRate {
    type In = RnicTopIn;
    type Out = RnicTopOut;
    fn step(&mut self, cycle: u64, o: &RnicTopOut) -> RnicTopIn {
        let mut o2 = *o;
        if let Some(c) = self.mine.take() {
            assert!(o.mmio_rd_resp_valid, "no response to the STAT_RC read");
            self.samples.push((c, o.mmio_rd_resp_data));
            o2.mmio_rd_resp_valid = false;
        }
        let mut i = self.inner.step(cycle, &o2);
        if !i.mmio_rd_valid {
            (i.mmio_rd_valid, i.mmio_rd_addr) = (true, CC_STAT_RC_ADDR);
            self.mine = Some(cycle);
        }
        i
    }
    fn finished(&self) -> bool {
        self.inner.finished()
    }
}

#[test]
fn cnp_to_rate_cut_within_4_cycles() {
    let v = vector(
        &[qp(0, r#","cc":true"#)],
        &[],
        r#"{"at":300,"frame":{"cnp":{"qp":0}}}"#,
        // The paper's reaction point (DCQCN_MODE 0): the CNP cuts at once.
        // The deployed default (MON_CUT) cuts when the monitor period
        // ends (docs/rx_cc.md); tests/dcqcn_deployed.rs measures that.
        r#","cc":{"dcqcn_mode":0,"f":5,"b_bytes":10485760,"alpha_init":1024}"#,
    );
    let mut env = PollRate {
        inner: RnicTopEnv::new(&v).unwrap(),
        mine: None,
        samples: Vec::new(),
    };
    let cycles = run(&mut env, v.max_cycles);
    env.inner.finish_checks(cycles);
    assert!(
        env.inner.common.failures.is_empty(),
        "{:#?}",
        env.inner.common.failures
    );
    let n = env.inner.rx.sent[0].last;
    let before = env
        .samples
        .iter()
        .rfind(|s| s.0 <= n)
        .expect("samples before the CNP")
        .1;
    // R_MAX by default (100 Gb/s = 50 B/cycle), alpha 1.0: the cut halves it.
    assert_eq!(before, 50 << 20);
    let &(m, after) = env
        .samples
        .iter()
        .find(|s| s.0 > n && s.1 != before)
        .expect("a rate cut");
    assert_eq!(after, 25 << 20, "one CNP at alpha 1.0 halves Rc");
    println!(
        "CNP last beat -> rate cut in force (STAT_RC): {} cycles",
        m - n
    );
    figures::row(
        TABLE,
        HEADER,
        "3",
        &[
            "CNP to the rate cut in force (the cut rate in dcqcn's output, read back through STAT_RC every cycle; DCQCN_MODE 0, the paper's immediate cut)".into(),
            format!("≤ {CNP_TO_CUT_MAX}"),
            (m - n).to_string(),
        ],
    );
    assert!(m - n <= CNP_TO_CUT_MAX, "CNP to rate cut {} cycles", m - n);
}

/// The deployed default (DCQCN_MODE's reset value, MON_CUT): the CNP marks
/// the QP and the cut is made when the 4 us monitor period ends, at most
/// DCQCN_MON cycles later than the paper's immediate cut.
#[test]
fn deployed_cnp_cut_waits_for_the_monitor_period() {
    let v = vector(
        &[qp(0, r#","cc":true"#)],
        &[],
        r#"{"at":300,"frame":{"cnp":{"qp":0}}}"#,
        // Run past the monitor period's end.
        r#","min_cycles":3000"#,
    );
    let mut env = PollRate {
        inner: RnicTopEnv::new(&v).unwrap(),
        mine: None,
        samples: Vec::new(),
    };
    let cycles = run(&mut env, v.max_cycles);
    env.inner.finish_checks(cycles);
    assert!(
        env.inner.common.failures.is_empty(),
        "{:#?}",
        env.inner.common.failures
    );
    let n = env.inner.rx.sent[0].last;
    let &(m, after) = env
        .samples
        .iter()
        .find(|s| s.0 > n && s.1 != 50 << 20)
        .expect("a rate cut");
    // FIRST_CNP: alpha starts at its initial value, 1023/1024 (Q20 1023 <<
    // 10), at the CNP, which does not count in its alpha period (ALPHA_T):
    // the cut uses it after k decays floor(A (1 - 1/256)), one per 1 us
    // alpha period ended before the cut, k <= 4 (the monitor period is 4).
    let mut a: u64 = 1023 << 10;
    let mut decays = None;
    for k in 0..=4 {
        if after as u64 == (50 << 20) - (((50u64 << 20) * a) >> 21) {
            decays = Some(k);
        }
        a = (a * 255) >> 8;
    }
    let k =
        decays.unwrap_or_else(|| panic!("cut to {after}: no alpha 1023/1024 decayed 0..4 times"));
    println!("deployed cut: alpha decayed {k} times before it");
    let mon = rnic_model::csr_map::CC_DCQCN_MON_RESET as u64;
    println!(
        "CNP last beat -> rate cut in force, deployed default (MON_CUT, period {mon}): {} cycles",
        m - n
    );
    figures::row(
        TABLE,
        HEADER,
        "3b",
        &[
            "The same with the deployed default (DCQCN_MODE reset value: the cut waits for the end of the 4 us monitor period)".into(),
            format!("≤ {} + DCQCN_MON ({mon})", CNP_TO_CUT_MAX),
            (m - n).to_string(),
        ],
    );
    assert!(
        m - n <= CNP_TO_CUT_MAX + mon,
        "CNP to rate cut {} cycles",
        m - n
    );
}

#[test]
fn rx_line_rate_back_to_back_zero_drops() {
    for (file, frames, beats_each) in [
        ("vectors/rx/line_rate_min.json", 500u64, 1u64),
        ("vectors/rx/line_rate_max.json", 40, 65),
    ] {
        let v = Vector::load(Path::new(file)).unwrap();
        let env = run_checked(&v);
        let sent = &env.rx.sent;
        assert_eq!(sent.len() as u64, frames);
        // Back to back: every frame starts the cycle after the previous ended.
        for w in sent.windows(2) {
            assert_eq!(w[1].first, w[0].last + 1, "{file}: a gap on rx_*");
        }
        assert!(sent.iter().all(|s| s.last - s.first + 1 == beats_each));
        let c = |name: &str| {
            env.counters
                .iter()
                .find(|(n, _)| n == name)
                .map(|x| x.1 as u64)
                .unwrap()
        };
        let taken = c("rx_pfc") + c("rx_cnp") + c("rx_ack") + c("rx_data");
        let dropped: u64 = [
            "drop_fcs",
            "drop_runt",
            "drop_not_roce",
            "drop_trunc",
            "drop_ip_csum",
            "drop_icrc",
            "drop_opcode",
            "drop_qp",
        ]
        .iter()
        .map(|n| c(n))
        .sum();
        println!(
            "RX line rate ({file}): {frames} frames of {beats_each} beat(s) back to back in {} cycles, \
             {taken} taken, {dropped} dropped",
            sent.last().unwrap().last - sent[0].first + 1
        );
        let what = if beats_each == 1 {
            format!(
                "RX line rate: {frames} back-to-back one-beat frames (60-byte PFC, 62-byte ACK)"
            )
        } else {
            format!("RX line rate: {frames} back-to-back {beats_each}-beat RoCE packets")
        };
        figures::row(
            TABLE,
            HEADER,
            &format!("4{beats_each:03}"),
            &[
                what,
                "zero drops".into(),
                format!(
                    "{frames} frames in {} cycles, {dropped} dropped",
                    sent.last().unwrap().last - sent[0].first + 1
                ),
            ],
        );
        assert_eq!((c("rx_frames"), taken, dropped), (frames, frames, 0));
    }
}

#[test]
fn a_paused_priority_leaves_another_at_full_rate() {
    // QP 1 (priority 0) streams 64 KiB; QP 0 (priority 3) gets its work at
    // cycle 300, after priority 3 was paused for 5000 quanta at 100.
    let q0 = qp(0, r#","vlan":{"vid":5,"pcp":3}"#);
    let q1 = qp(1, r#","vlan":{"vid":6,"pcp":0}"#);
    let rx = r#"{"at":100,"frame":{"pfc":{"quanta":{"3":5000}}}}"#;
    let paused = run_checked(&vector(&[q0, q1.clone()], &[(1, 0), (0, 300)], rx, ""));
    let alone = run_checked(&vector(&[q1], &[(1, 0)], "", ""));
    let span = |env: &RnicTopEnv, p: u8| {
        let s: Vec<(u64, usize)> = env
            .frames
            .iter()
            .filter(|(_, f)| pcp(f) == p)
            .map(|(s, f)| (*s, f.len()))
            .collect();
        let bytes: usize = s.iter().map(|x| x.1).sum();
        (bytes as f64) / ((s.last().unwrap().0 - s[0].0 + 1) as f64)
    };
    let (with, without) = (span(&paused, 0), span(&alone, 0));
    println!(
        "Priority 0 while priority 3 is paused: {with:.2} B/cycle; alone: {without:.2} B/cycle"
    );
    figures::row(
        TABLE,
        HEADER,
        "5",
        &[
            "priority 0 streaming while priority 3 is paused for 5000 quanta".into(),
            "full rate".into(),
            format!("{with:.2} B/cycle vs {without:.2} alone"),
        ],
    );
    assert!(
        with >= without * 0.99,
        "priority 0 slowed by the pause of priority 3: {with:.2} vs {without:.2} B/cycle"
    );
}
