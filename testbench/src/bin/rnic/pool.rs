//! `--jobs N`: independent runs on worker threads, results in a fixed order.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Stack of a worker, as much as the main thread gets on Linux: the
/// Verilated models keep their state on the heap, but deep `eval` code and
/// the model's wide port structs are happier with room.
const WORKER_STACK: usize = 8 << 20;

/// How often the caller's `idle` hook runs while it waits for a result.
const TICK: Duration = Duration::from_millis(100);

/// Runs `job(i)` for every `i` in `0..n` on up to `jobs` threads, each
/// index taken by the next free worker in increasing order, and hands the
/// results to `done` on the calling thread in index order: result `i` as
/// soon as it and every result before it are in, whatever finishes first.
///
/// `idle(finished, next)` runs on the calling thread after each result and
/// every [`TICK`] while waiting: `finished` results are in, `next` is the
/// index `done` waits for.
///
/// `done` returning `Break(b)` stops the pool: no index is started after
/// that, the jobs already running finish, their results are dropped, and
/// `run` returns `Break(b)`. A job that panics resumes the panic here once
/// the other workers have stopped.
pub fn run<T: Send, B>(
    n: usize,
    jobs: usize,
    job: impl Fn(usize) -> T + Sync,
    mut idle: impl FnMut(usize, usize),
    mut done: impl FnMut(usize, T) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let next_index = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, T)>();
    std::thread::scope(|s| {
        for w in 0..jobs.clamp(1, n.max(1)) {
            let tx = tx.clone();
            let (job, next_index, stop) = (&job, &next_index, &stop);
            std::thread::Builder::new()
                .name(format!("rnic-worker-{w}"))
                .stack_size(WORKER_STACK)
                .spawn_scoped(s, move || {
                    let _guard = StopOnPanic(stop);
                    while !stop.load(Ordering::Relaxed) {
                        let i = next_index.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            break;
                        }
                        let r = job(i);
                        if tx.send((i, r)).is_err() {
                            break;
                        }
                    }
                })
                .expect("spawning a worker thread");
        }
        // Only the workers hold senders now: a closed channel means every
        // worker has ended.
        drop(tx);
        let mut pending = BTreeMap::new();
        let (mut finished, mut next) = (0, 0);
        let outcome = loop {
            if next == n {
                break ControlFlow::Continue(());
            }
            match rx.recv_timeout(TICK) {
                Ok((i, r)) => {
                    pending.insert(i, r);
                    finished += 1;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    idle(finished, next);
                    continue;
                }
                // A worker panicked: leaving the scope resumes its panic.
                Err(mpsc::RecvTimeoutError::Disconnected) => break ControlFlow::Continue(()),
            }
            let mut flow = ControlFlow::Continue(());
            while let Some(r) = pending.remove(&next) {
                flow = done(next, r);
                next += 1;
                if flow.is_break() {
                    break;
                }
            }
            if let ControlFlow::Break(b) = flow {
                stop.store(true, Ordering::Relaxed);
                break ControlFlow::Break(b);
            }
            idle(finished, next);
        };
        // Let workers blocked on a full pipeline see the closed channel.
        drop(rx);
        outcome
    })
}

/// Stops the other workers when a job panics, so that the panic ends the
/// invocation as soon as the running jobs are done.
struct StopOnPanic<'a>(&'a AtomicBool);

impl Drop for StopOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn results_come_in_index_order_whatever_finishes_first() {
        for jobs in [1, 2, 3, 8] {
            let mut seen = Vec::new();
            let started = Mutex::new(Vec::new());
            let flow = run(
                7,
                jobs,
                |i| {
                    started.lock().unwrap().push(i);
                    // Earlier indices take longer.
                    std::thread::sleep(Duration::from_millis(5 * (7 - i as u64)));
                    i * 10
                },
                |_, _| {},
                |i, r| {
                    seen.push((i, r));
                    ControlFlow::<()>::Continue(())
                },
            );
            assert!(flow.is_continue());
            assert_eq!(seen, (0..7).map(|i| (i, i * 10)).collect::<Vec<_>>());
            let mut s = started.into_inner().unwrap();
            s.sort();
            assert_eq!(s, (0..7).collect::<Vec<_>>(), "each index once");
        }
    }

    #[test]
    fn break_stops_starting_jobs_and_is_returned() {
        let ran = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let flow = run(
            100,
            2,
            |i| {
                ran.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
                i
            },
            |_, _| {},
            |i, _| {
                seen.push(i);
                if i == 3 {
                    ControlFlow::Break("stop")
                } else {
                    ControlFlow::Continue(())
                }
            },
        );
        assert_eq!(flow, ControlFlow::Break("stop"));
        assert_eq!(seen, [0, 1, 2, 3]);
        assert!(ran.load(Ordering::Relaxed) < 100);
    }

    #[test]
    fn nothing_to_run_is_fine() {
        let flow = run(
            0,
            4,
            |i| i,
            |_, _| {},
            |_, _| ControlFlow::<()>::Continue(()),
        );
        assert!(flow.is_continue());
    }
}
