//! The functional coverage contract (docs/coverage.md, "Functional
//! coverage"): every shipped vector, run on the model (the points are
//! counted from the ports and the counters, on which model and RTL agree
//! cycle for cycle, as tests/vectors.rs checks vector by vector), hits
//! every point of `testbench/src/fcov/points.rs` that is not a known hole
//! in `holes.txt`, and no known hole. Its table per group is the README's
//! figure `fcov`.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rnic_testbench::fcov::{self, Coverage};
use rnic_testbench::scenario::{self, Mode, Report, RunOpts};
use rnic_testbench::vector::{self, AnyVector};

/// The report of one vector on the model; it must pass to count.
fn run(path: &Path) -> Report {
    let any = AnyVector::load(path).unwrap_or_else(|e| panic!("{e}"));
    let o = RunOpts::default();
    let (r, mismatches) = match any {
        AnyVector::Single(v) => {
            let r = scenario::run(&v, Mode::Model, &o).unwrap();
            let m = scenario::mismatches(&v, &r);
            (r, m)
        }
        AnyVector::System(v) => {
            let pr = scenario::pair::run(&v, Mode::Model, &o).unwrap();
            let m = scenario::pair::mismatches(&v, &pr);
            (pr.report, m)
        }
        AnyVector::Fabric(v) => {
            let fr = scenario::fabric::run(&v, Mode::Model, &o).unwrap();
            let m = scenario::fabric::mismatches(&v, &fr);
            (fr.report, m)
        }
    };
    assert!(
        r.clean() && mismatches.is_empty(),
        "{}: does not pass on the model: {:?} {mismatches:?}",
        path.display(),
        r.failures
    );
    r
}

#[test]
fn shipped_vectors_hit_every_point_but_the_known_holes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("vectors");
    let files: Vec<PathBuf> = vector::walk(&[root])
        .unwrap()
        .found
        .into_iter()
        .map(|f| f.path)
        .collect();
    assert!(files.len() > 150, "only {} vectors found", files.len());
    let next = Mutex::new(0usize);
    let total = Mutex::new(Coverage::default());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let k = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(f) = files.get(k) else { break };
                let r = run(f);
                total.lock().unwrap().merge(&r.fcov);
            });
        }
    });
    let total = total.into_inner().unwrap();
    let mut t = common::figures::Table::new("fcov", &fcov::TABLE_HEADER);
    for r in fcov::summary(&total).unwrap() {
        t.row(&[
            r.group.clone(),
            r.points.to_string(),
            r.hit.to_string(),
            r.holes.to_string(),
            r.missed().to_string(),
        ]);
    }
    t.finish();
    assert_eq!(
        total.unknown(),
        Vec::<&str>::new(),
        "names that are not points"
    );
    let (missed, stale) = fcov::check(&total).unwrap();
    assert!(
        missed.is_empty(),
        "points no shipped vector hits and not known holes (add a vector, or a hole with its \
         reason to testbench/src/fcov/holes.txt):\n  {}",
        missed.join("\n  ")
    );
    assert!(
        stale.is_empty(),
        "known holes that were hit (take them off holes.txt):\n  {}",
        stale.join("\n  ")
    );
}
