//! The fabric runner's own contract (docs/fabric.md), on the shipped
//! `vectors/fabric/incast_4to1_64k_rtl.json` (four senders into one host,
//! every NIC in RTL and model):
//! - a divergence names the host whose model and RTL differ, at the cycle
//!   that host's first frame starts (found by running the good fabric on
//!   the models alone);
//! - a host that runs its model only is still judged by the testbench's
//!   references: the same broken model there is no divergence, but its
//!   frames fail the host's own checks and the fabric's delivery check;
//! - the capture holds every link, between switches too: on
//!   `vectors/fabric/alltoall_8_rail.json` the frames it names as leaving
//!   a switch (to a host or to another switch) are as many as the
//!   switches' own `tx_frames` counters say, the frames arriving at one as
//!   many as their `rx_frames`, and each switch-to-switch link of the
//!   topology carries some;
//! - a `deadlock` vector passes only when the run ends stuck: the shipped
//!   stuck ring fails as an ordinary vector, and fails its deadlock checks
//!   when asked to stand still for longer than it did; the watchdog ring
//!   declared a deadlock fails, as it completes;
//! - the idle fast path changes nothing but the speed: with it on and off,
//!   `incast_4to1_lossy` (retransmission timers) and `hol_victim_dcqcn`
//!   (PFC pauses, DCQCN timers) give the same report, field by field, and
//!   with it on most of their NIC-cycles are skipped; the hosts ticked on
//!   two threads (`host_threads`) give the same report again;
//! - `--vcd` traces every host: on `incast_4to1_64k_rtl` in lockstep each
//!   host has its `h<i>/model.vcd` of the run's last cycles, the RTL hosts
//!   an `rtl.vcd` too whose registers hold the model's values at every
//!   timestamp (the reader and checks of `tests/vcd_names.rs`).

mod common;

use common::pair_nic::Broken;
use rnic_testbench::scenario::{fabric, Mode, RunOpts};
use rnic_testbench::vector::fabric::DeadlockSpec;

const VECTOR: &str = "vectors/fabric/incast_4to1_64k_rtl.json";

#[test]
fn a_divergence_names_the_host() {
    let v = common::pair_nic::load_fabric(VECTOR);
    assert!(v.rtl.contains(&2));
    let good = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    let comments = good.report.tx_comments.as_ref().expect("links named");
    let k = comments
        .iter()
        .position(|c| c == "h2 to switch")
        .expect("h2 sends");
    let first = good.report.tx_frames[k].0;
    let r = fabric::run_with(&v, Mode::Lockstep, &RunOpts::default(), Broken::maker(2)).unwrap();
    let d = r.report.divergence.expect("diverged");
    assert_eq!(d.block, "host h2 (rnic_top)");
    assert_eq!(d.diff.port, "tx_tdata");
    assert_eq!(d.cycle, first);
}

#[test]
fn the_capture_holds_every_link() {
    let v = common::pair_nic::load_fabric("vectors/fabric/alltoall_8_rail.json");
    let r = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
    assert!(r.report.clean(), "{:?}", r.report.failures);
    let comments = r.report.tx_comments.as_ref().expect("links named");
    assert_eq!(comments.len(), r.report.tx_frames.len());
    let between = |c: &str| {
        c.split_once(" to ")
            .is_some_and(|(a, b)| !a.starts_with('h') && !b.starts_with('h') && a != "switch")
    };
    let from_hosts = comments
        .iter()
        .filter(|c| c.ends_with(" to switch"))
        .count() as u64;
    let to_hosts = comments
        .iter()
        .filter(|c| c.starts_with("switch to h"))
        .count() as u64;
    let switched = comments.iter().filter(|c| between(c)).count() as u64;
    assert_eq!(
        from_hosts + to_hosts + switched,
        comments.len() as u64,
        "every comment names a link"
    );
    let sum = |suffix: &str| {
        r.switch
            .iter()
            // Per port: not the switch total, not per queue.
            .filter(|(k, _)| k.ends_with(suffix) && k.contains(".port") && !k.contains(".q"))
            .map(|(_, v)| v)
            .sum::<u64>()
    };
    assert_eq!(
        to_hosts + switched,
        sum(".tx_frames"),
        "frames out of switches"
    );
    assert_eq!(
        from_hosts + switched,
        sum(".rx_frames"),
        "frames into switches"
    );
    for l in &r.links {
        let name = l.replace('>', " to ");
        assert!(comments.contains(&name), "no frame on the link {name}");
    }
    assert!(!r.links.is_empty() && switched > 0);
}

#[test]
fn a_model_only_host_is_still_checked() {
    let mut v = common::pair_nic::load_fabric(VECTOR);
    v.rtl = vec![0];
    let r = fabric::run_with(&v, Mode::Lockstep, &RunOpts::default(), Broken::maker(2)).unwrap();
    assert!(r.report.divergence.is_none());
    let f = &r.report.failures;
    assert!(
        f.iter().any(|m| m.starts_with("h2: ")),
        "h2's own checks: {f:?}"
    );
    assert!(
        f.iter()
            .any(|m| m.starts_with("fabric: ") && m.contains("h2's frame 0")),
        "the delivery check: {f:?}"
    );
}

#[test]
fn a_deadlock_is_judged_by_how_the_run_ends() {
    let stuck = common::pair_nic::load_fabric("vectors/fabric/deadlock_ring3_stuck.json");
    let r = fabric::run(&stuck, Mode::Model, &RunOpts::default()).unwrap();
    assert!(r.report.clean(), "{:?}", r.report.failures);
    assert_eq!(r.stall.cycle, ["ring0", "ring1", "ring2"]);
    let since = r.stall.last_data_out.expect("data moved at first") + 1;

    // Without its declaration the same run is a failure: nothing settles.
    let mut plain = stuck.clone();
    plain.deadlock = None;
    let r = fabric::run(&plain, Mode::Model, &RunOpts::default()).unwrap();
    assert!(!r.report.completed);
    assert!(
        r.report.failures.iter().any(|f| f.contains("still hold")),
        "{:?}",
        r.report.failures
    );

    // Still for less than asked: the window check fails.
    let mut longer = stuck.clone();
    longer.deadlock = Some(DeadlockSpec {
        still_cycles: stuck.max_cycles - since + 1,
    });
    let r = fabric::run(&longer, Mode::Model, &RunOpts::default()).unwrap();
    let f = &r.report.failures;
    assert!(
        f.len() == 1 && f[0].contains("the fabric was not still"),
        "{f:?}"
    );

    // The watchdog's ring completes: declared a deadlock, it fails.
    let mut wd = common::pair_nic::load_fabric("vectors/fabric/deadlock_ring3_watchdog.json");
    wd.deadlock = Some(DeadlockSpec { still_cycles: 1000 });
    let r = fabric::run(&wd, Mode::Model, &RunOpts::default()).unwrap();
    assert!(!r.report.completed);
    assert!(
        r.report
            .failures
            .iter()
            .any(|f| f.contains("did not deadlock")),
        "{:?}",
        r.report.failures
    );
}

/// Everything a fabric run reports but the fast path's own count.
fn results(r: &fabric::FabricReport) -> String {
    let p = &r.report;
    format!(
        "{:?}",
        (
            (p.cycles, p.completed, &p.tx_frames, &p.tx_comments),
            (&p.counters, &p.failures, p.divergence.is_some(), &p.fcov),
            (&r.hosts, &r.switch, &r.delivery, &r.samples, &r.spans),
            (&r.doorbells, &r.cqes, &r.pauses, &r.stall, &r.links),
        )
    )
}

#[test]
fn the_idle_fast_path_changes_nothing_but_speed() {
    for (name, floor_pct) in [("incast_4to1_lossy", 50), ("hol_victim_dcqcn", 50)] {
        let v = common::pair_nic::load_fabric(&format!("vectors/fabric/{name}.json"));
        let slow = RunOpts {
            no_idle_skip: true,
            ..RunOpts::default()
        };
        let threads = RunOpts {
            host_threads: 2,
            ..RunOpts::default()
        };
        let on = fabric::run(&v, Mode::Model, &RunOpts::default()).unwrap();
        let off = fabric::run(&v, Mode::Model, &slow).unwrap();
        let two = fabric::run(&v, Mode::Model, &threads).unwrap();
        assert!(on.report.clean(), "{name}: {:?}", on.report.failures);
        assert_eq!(results(&on), results(&off), "{name}");
        assert_eq!(results(&on), results(&two), "{name}: on two threads");
        assert_eq!(on.report.idle_skipped, two.report.idle_skipped, "{name}");
        assert_eq!(off.report.idle_skipped, 0, "{name}");
        let host_cycles = on.report.cycles * v.hosts.len() as u64;
        assert!(
            on.report.idle_skipped * 100 >= host_cycles * floor_pct,
            "{name}: {} of {host_cycles} NIC-cycles skipped",
            on.report.idle_skipped
        );
    }
}

#[test]
fn waveforms_of_every_host() {
    use rnic_testbench::rtl::{set_initial_state, InitialState, CLOCK_PERIOD_PS, RESET_CYCLES};
    // Register values are compared with the model's, which start at zero.
    set_initial_state(InitialState::Zeros);
    let v = common::pair_nic::load_fabric(VECTOR);
    let dir = std::env::temp_dir().join(format!("rnic-fabric-vcd-{}", std::process::id()));
    let opts = RunOpts {
        vcd_dir: Some(dir.clone()),
        vcd_window: Some(300),
        ..RunOpts::default()
    };
    let r = fabric::run(&v, Mode::Lockstep, &opts).unwrap();
    assert!(r.report.clean(), "{:?}", r.report.failures);
    assert!(r.report.vcd_error.is_none(), "{:?}", r.report.vcd_error);
    let end = r.report.cycles;
    let mut names = None;
    for h in 0..v.hosts.len() {
        let m = common::vcd::read_vcd(&dir.join(format!("h{h}/model.vcd")));
        // A timestamp's cycle after reset, as the writer counts them.
        let cycle = |t: u64| t / CLOCK_PERIOD_PS - RESET_CYCLES;
        let first = cycle(m.changes.first().expect("changes").0);
        let last = cycle(m.changes.last().expect("changes").0);
        assert_eq!(
            (first, last),
            (end - 300, end),
            "h{h}: the run's last cycles"
        );
        let vars: Vec<String> = m.vars.keys().cloned().collect();
        assert_eq!(
            names.get_or_insert_with(|| vars.clone()),
            &vars,
            "h{h}: signals"
        );
        let rtl = dir.join(format!("h{h}/rtl.vcd"));
        assert_eq!(rtl.exists(), v.rtl.contains(&h), "h{h}: rtl.vcd");
        if rtl.exists() {
            let r = common::vcd::read_vcd(&rtl);
            let (traced, total) = common::vcd::check_names(&m, &r, "rnic_top");
            assert!(traced * 100 >= total * 95, "h{h}: {traced}/{total}");
            assert_eq!(common::vcd::check_values(&m, &r), traced, "h{h}");
        }
    }
    let files = r.report.vcd.len();
    assert_eq!(files, v.hosts.len() + v.rtl.len());
    std::fs::remove_dir_all(&dir).ok();
}
