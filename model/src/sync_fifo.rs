//! `sync_fifo`: a single-clock FIFO. Model of `hw/rtl/sync_fifo.sv`.
//!
//! Its outputs (`in_ready`, `out_valid`, `out_data`) are decodes of its
//! registers only, so a parent can use them in the same cycle without a
//! combinational path from the parent's inputs.

use crate::trace::{TraceValue, Tracer};

#[derive(Debug, Clone, PartialEq)]
pub struct SyncFifo<T> {
    mem: Vec<T>,
    wr_ptr_q: usize,
    rd_ptr_q: usize,
    count_q: usize,
}

/// A FIFO of depth 0, for `std::mem::take` (it holds no storage, so taking
/// a block's FIFOs out of a per-cycle copy costs nothing).
impl<T> Default for SyncFifo<T> {
    fn default() -> Self {
        SyncFifo {
            mem: Vec::new(),
            wr_ptr_q: 0,
            rd_ptr_q: 0,
            count_q: 0,
        }
    }
}

impl<T: Copy + Default> SyncFifo<T> {
    /// `depth` must be a power of two (the RTL rejects anything else).
    pub fn new(depth: usize) -> Self {
        assert!(
            depth.is_power_of_two(),
            "sync_fifo depth must be a power of two"
        );
        SyncFifo {
            mem: vec![T::default(); depth],
            wr_ptr_q: 0,
            rd_ptr_q: 0,
            count_q: 0,
        }
    }

    pub fn in_ready(&self) -> bool {
        self.count_q != self.mem.len()
    }

    pub fn out_valid(&self) -> bool {
        self.count_q != 0
    }

    /// `out_data`: the head entry (stale when empty, as in the RTL).
    pub fn out_data(&self) -> T {
        self.mem[self.rd_ptr_q]
    }

    pub fn count(&self) -> usize {
        self.count_q
    }

    /// One clock edge. `push` is taken only when `in_ready`, `pop` only when
    /// `out_valid`, exactly as the RTL qualifies its handshakes.
    pub fn tick(&mut self, push: Option<T>, pop: bool) {
        let depth = self.mem.len();
        let do_push = push.is_some() && self.in_ready();
        let do_pop = pop && self.out_valid();
        if let (true, Some(v)) = (do_push, push) {
            self.mem[self.wr_ptr_q] = v;
            self.wr_ptr_q = (self.wr_ptr_q + 1) % depth;
        }
        if do_pop {
            self.rd_ptr_q = (self.rd_ptr_q + 1) % depth;
        }
        self.count_q = self.count_q + do_push as usize - do_pop as usize;
    }
}

impl<T> SyncFifo<T> {
    /// The RTL's pointer and count registers (`$clog2(DEPTH)` and one more
    /// bit), in the caller's scope.
    pub fn trace_ptrs(&self, t: &mut dyn Tracer) {
        let aw = self.mem.len().trailing_zeros();
        t.reg("count_q", aw + 1, &self.count_q);
        t.reg("rd_ptr_q", aw, &self.rd_ptr_q);
        t.reg("wr_ptr_q", aw, &self.wr_ptr_q);
    }
}

impl<T> SyncFifo<T> {
    /// The pointers and the storage, `mem_q[k]` of `width` bits each, for
    /// entries the RTL packs in a way of the owner's (`f` gives the bits).
    pub fn trace_map<V: TraceValue>(&self, t: &mut dyn Tracer, width: u32, f: impl Fn(&T) -> V) {
        self.trace_ptrs(t);
        let mem: Vec<V> = self.mem.iter().map(f).collect();
        t.each("mem_q", width, &mem);
    }
}

impl<T: TraceValue> SyncFifo<T> {
    /// The pointers and the storage, `mem_q[k]` of `width` bits each.
    pub fn trace_all(&self, t: &mut dyn Tracer, width: u32) {
        self.trace_ptrs(t);
        t.each("mem_q", width, &self.mem);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_refuses_and_drains_in_order() {
        let mut f = SyncFifo::<u8>::new(2);
        f.tick(Some(1), false);
        f.tick(Some(2), false);
        assert!(!f.in_ready());
        f.tick(Some(3), false); // refused: full
        assert_eq!(f.out_data(), 1);
        f.tick(Some(4), true); // push and pop in one cycle while full: pop only
        assert_eq!(f.count(), 1);
        assert_eq!(f.out_data(), 2);
        f.tick(Some(5), true);
        assert_eq!((f.count(), f.out_data()), (1, 5));
        f.tick(None, true);
        assert!(!f.out_valid());
    }
}
