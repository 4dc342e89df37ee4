//! Ticking model-only hosts on several threads (docs/fabric.md, "Threads").
//!
//! Within a cycle the hosts' ticks are independent: each takes the inputs
//! the environment gave it and returns its outputs. The crew splits the
//! hosts into groups, the calling thread ticking group 0 and one worker
//! thread each other group; a cycle starts when the caller publishes the
//! inputs and ends when every worker has published its outputs. Workers
//! wait by spinning (a sleeping thread's wake-up costs more than a tick),
//! so a crew wants a core per thread and is off by default.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use rnic_model::rnic_top::{RnicTopIn, RnicTopOut};

use super::doze::Doze;
use crate::scenario::pair::NicModel;

/// One worker's hand-over: its hosts' inputs for the cycle in flight and
/// the outputs it returns.
struct Slot {
    ins: Mutex<Vec<RnicTopIn>>,
    outs: Mutex<Vec<RnicTopOut>>,
    /// The cycles (counted from 1) published to it and done by it.
    go: AtomicU64,
    done: AtomicU64,
}

/// A group of hosts: their indices, models and idle fast paths.
struct Group<M> {
    hosts: Vec<usize>,
    models: Vec<M>,
    doze: Vec<Doze>,
    idle: bool,
}

impl<M: NicModel> Group<M> {
    fn tick(&mut self, cycle: u64, ins: &[RnicTopIn], outs: &mut [RnicTopOut]) {
        for (k, m) in self.models.iter_mut().enumerate() {
            if self.idle && self.doze[k].rests(cycle, &ins[k], m) {
                continue;
            }
            outs[k] = m.tick(&ins[k]);
        }
    }

    fn wake(&mut self) -> u64 {
        for (z, m) in self.doze.iter_mut().zip(&mut self.models) {
            z.wake(m);
        }
        self.doze.iter().map(|d| d.rested).sum()
    }
}

pub struct Crew<M> {
    own: Group<M>,
    slots: Vec<Arc<Slot>>,
    workers: Vec<JoinHandle<u64>>,
    groups: Vec<Vec<usize>>,
    stop: Arc<AtomicBool>,
}

/// Waits for `a` to reach `v`: spins, yielding now and then so that more
/// threads than cores still make progress. `false` if `stop` is set.
fn wait(a: &AtomicU64, v: u64, stop: &AtomicBool) -> bool {
    let mut spins = 0u32;
    while a.load(Ordering::Acquire) < v {
        if stop.load(Ordering::Acquire) {
            return false;
        }
        spins += 1;
        if spins.is_multiple_of(1 << 12) {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    true
}

impl<M: NicModel + Send + 'static> Crew<M> {
    /// `threads` groups (at least 1) of the models `models` (host i is
    /// `models[i]`), each ticking host i of group `i % threads`. `outs`:
    /// the outputs after reset.
    pub fn new(models: Vec<M>, threads: usize, idle: bool, outs: &[RnicTopOut]) -> Self {
        let n = models.len();
        let t = threads.clamp(1, n.max(1));
        let groups: Vec<Vec<usize>> = (0..t).map(|g| (g..n).step_by(t).collect()).collect();
        let mut per: Vec<Vec<M>> = (0..t).map(|_| Vec::new()).collect();
        for (i, m) in models.into_iter().enumerate() {
            per[i % t].push(m);
        }
        let mut per = per.into_iter();
        let mk = |hosts: &Vec<usize>, models: Vec<M>| Group {
            hosts: hosts.clone(),
            doze: (0..models.len()).map(|_| Doze::default()).collect(),
            models,
            idle,
        };
        let own = mk(&groups[0], per.next().expect("group 0"));
        let stop = Arc::new(AtomicBool::new(false));
        let mut slots = Vec::new();
        let mut workers = Vec::new();
        for (g, models) in per.enumerate() {
            let hosts = &groups[g + 1];
            let slot = Arc::new(Slot {
                ins: Mutex::new(Vec::new()),
                outs: Mutex::new(hosts.iter().map(|&h| outs[h]).collect()),
                go: AtomicU64::new(0),
                done: AtomicU64::new(0),
            });
            let mut group = mk(hosts, models);
            let (s, stop) = (slot.clone(), stop.clone());
            workers.push(std::thread::spawn(move || {
                let mut mine: Vec<RnicTopOut> = s.outs.lock().expect("outs").clone();
                let mut c = 1u64;
                while wait(&s.go, c, &stop) {
                    let ins = s.ins.lock().expect("ins").clone();
                    group.tick(c - 1, &ins, &mut mine);
                    s.outs.lock().expect("outs").copy_from_slice(&mine);
                    s.done.store(c, Ordering::Release);
                    c += 1;
                }
                group.wake()
            }));
            slots.push(slot);
        }
        Crew {
            own,
            slots,
            workers,
            groups,
            stop,
        }
    }

    /// Ticks every host in `cycle` with its input `ins[i]`; `outs[i]`
    /// becomes its outputs (unchanged for a host that rests). Called for
    /// cycles 0, 1, 2, ... in turn.
    pub fn tick(&mut self, cycle: u64, ins: &[RnicTopIn], outs: &mut [RnicTopOut]) {
        // Cycles are published counted from 1 (0: none yet).
        let go = cycle + 1;
        for (s, hosts) in self.slots.iter().zip(&self.groups[1..]) {
            *s.ins.lock().expect("ins") = hosts.iter().map(|&h| ins[h]).collect();
            s.go.store(go, Ordering::Release);
        }
        let own_ins: Vec<RnicTopIn> = self.own.hosts.iter().map(|&h| ins[h]).collect();
        let mut own_outs: Vec<RnicTopOut> = self.own.hosts.iter().map(|&h| outs[h]).collect();
        self.own.tick(cycle, &own_ins, &mut own_outs);
        for (k, &h) in self.own.hosts.iter().enumerate() {
            outs[h] = own_outs[k];
        }
        for (w, (s, hosts)) in self.slots.iter().zip(&self.groups[1..]).enumerate() {
            let mut spins = 0u32;
            while s.done.load(Ordering::Acquire) < go {
                spins += 1;
                if spins.is_multiple_of(1 << 12) {
                    if self.workers[w].is_finished() {
                        // Only a panic ends a worker before `finish`.
                        let h = self.workers.swap_remove(w);
                        match h.join() {
                            Err(e) => std::panic::resume_unwind(e),
                            Ok(_) => unreachable!("a crew worker stopped early"),
                        }
                    }
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
            let o = s.outs.lock().expect("outs");
            for (k, &h) in hosts.iter().enumerate() {
                outs[h] = o[k];
            }
        }
    }

    /// Stops the workers; the NIC-cycles the idle fast path skipped.
    pub fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Release);
        let mut rested = self.own.wake();
        for w in self.workers.drain(..) {
            rested += w.join().expect("a crew worker panicked");
        }
        rested
    }
}

/// A crew dropped without [`Crew::finish`] (its caller panicked) still
/// stops its workers, which would otherwise spin on.
impl<M> Drop for Crew<M> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}
