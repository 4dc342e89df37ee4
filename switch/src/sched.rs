//! The eight egress queues of one port and the choice of the next frame:
//! strict queues first (highest priority number first), then deficit round
//! robin in bytes among the rest (docs/switch.md, "Scheduling").

use std::collections::VecDeque;

use crate::config::{QueueCfg, Sched, PRIOS};

/// A frame waiting in an egress queue.
#[derive(Clone, Debug)]
pub struct Queued {
    /// As it will be sent: padded, CE applied.
    pub frame: Vec<u8>,
    /// First cycle it may start (store and forward).
    pub eligible: u64,
    pub in_port: usize,
    /// Charged to its ingress (port, priority) headroom, not the shared pool.
    pub in_headroom: bool,
}

impl Queued {
    pub fn len(&self) -> u64 {
        self.frame.len() as u64
    }
}

#[derive(Clone, Debug, Default)]
pub struct Queues {
    pub q: [VecDeque<Queued>; PRIOS],
    pub depth: [u64; PRIOS],
    deficit: [u64; PRIOS],
    /// The DWRR queue whose turn it is, and whether it has had its quantum
    /// for this turn.
    cur: usize,
    granted: bool,
}

impl Queues {
    pub fn push(&mut self, prio: usize, f: Queued) {
        self.depth[prio] += f.len();
        self.q[prio].push_back(f);
    }

    pub fn pop(&mut self, prio: usize) -> Option<Queued> {
        let f = self.q[prio].pop_front()?;
        self.depth[prio] -= f.len();
        if self.q[prio].is_empty() {
            // An empty queue keeps no credit (standard DRR).
            self.deficit[prio] = 0;
        }
        Some(f)
    }

    /// Picks the queue to serve now among those `ready` says may start,
    /// and charges DWRR. `None` when no queue is ready.
    ///
    /// DWRR: when a queue's turn comes and it is ready, it gets its quantum
    /// added to its deficit; it sends head frames while the head fits in
    /// the deficit; then the turn passes on. A queue that is not ready
    /// (empty, paused, or its head still arriving) is skipped without
    /// credit; one that is empty also loses its deficit.
    pub fn pick(
        &mut self,
        cfg: &[QueueCfg; PRIOS],
        ready: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let nonempty: [bool; PRIOS] = std::array::from_fn(|p| !self.q[p].is_empty());
        let ok = |p: usize| ready(p) && nonempty[p];
        if let Some(p) = (0..PRIOS)
            .rev()
            .find(|&p| cfg[p].sched == Sched::Strict && ok(p))
        {
            return Some(p);
        }
        let quantum = |p: usize| match cfg[p].sched {
            Sched::Dwrr { quantum } => Some(quantum.max(1) as u64),
            Sched::Strict => None,
        };
        if !(0..PRIOS).any(|p| quantum(p).is_some() && ok(p)) {
            return None;
        }
        // Terminates: some ready queue gains at least one byte of credit
        // per round until its head fits.
        loop {
            let p = self.cur;
            match quantum(p) {
                Some(qn) if ok(p) => {
                    if !self.granted {
                        self.deficit[p] += qn;
                        self.granted = true;
                    }
                    let head = self.q[p].front().map_or(0, Queued::len);
                    if head <= self.deficit[p] {
                        self.deficit[p] -= head;
                        if self.q[p].len() == 1 {
                            // pop() clears the deficit; the turn passes on.
                            self.next();
                        }
                        return Some(p);
                    }
                }
                _ => {}
            }
            if !nonempty[p] {
                self.deficit[p] = 0;
            }
            self.next();
        }
    }

    fn next(&mut self) {
        self.cur = (self.cur + 1) % PRIOS;
        self.granted = false;
    }
}
