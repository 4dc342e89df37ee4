//! `skid_arb`: two-input round-robin arbiter with one skid entry per input
//! and a registered output, the shared core of `rd_req_arb` (single
//! requests) and `rq_arb` (multi-beat TLPs). Model of `hw/rtl/skid_arb.sv`
//! (same register names); its owners hold it as `u_arb`, the RTL instance
//! name.
//!
//! Each input has one skid entry and a registered ready that always equals
//! "skid entry empty". An accepted item goes straight into the output
//! register when the output is free and its input wins the round robin,
//! else it waits in the skid entry. With `PACKETS`, an item's `last()` ends
//! its packet and a grant holds from a packet's first item to its last
//! (the RTL's bit 0 of the item); without, every item is its own packet.
//! `o_sel` names the input of the item on `o_data` (false: a, true: b).
//! Item transferred at n -> visible at n+1 when the output is free.

/// What the arbiter carries: the RTL's `W`-bit item.
pub trait SkidItem: Copy + Default {
    /// The RTL's item width `W`.
    const W: u32;
    /// The packet's last beat (read only with `PACKETS`).
    fn last(&self) -> bool;
    /// The item as the RTL packs it, from bit 0 up (for the VCD).
    fn pack(&self, b: &mut crate::trace::Bits);
}

/// The arbiter's inputs (all but `clk`/`rst`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SkidArbIn<T> {
    pub a_valid: bool,
    pub a_data: T,
    pub b_valid: bool,
    pub b_data: T,
    pub o_ready: bool,
}

/// The arbiter's outputs, all registered.
#[derive(Debug, Clone, Copy, Default)]
pub struct SkidArbOut<T> {
    pub a_ready: bool,
    pub b_ready: bool,
    pub o_valid: bool,
    pub o_data: T,
    pub o_sel: bool,
}

#[derive(Debug, Clone)]
pub struct SkidArb<T, const PACKETS: bool> {
    a_skid_valid_q: bool,
    a_skid_data_q: T,
    b_skid_valid_q: bool,
    b_skid_data_q: T,
    a_ready_q: bool,
    b_ready_q: bool,
    o_valid_q: bool,
    o_data_q: T,
    o_sel_q: bool,
    /// true: b has priority (a was granted last).
    rr_q: bool,
    /// Inside a packet: only the input granted last may be granted.
    lock_q: bool,
}

impl<T: SkidItem, const PACKETS: bool> Default for SkidArb<T, PACKETS> {
    fn default() -> Self {
        SkidArb {
            a_skid_valid_q: false,
            a_skid_data_q: T::default(),
            b_skid_valid_q: false,
            b_skid_data_q: T::default(),
            // Skid entries are empty after reset, so the inputs are ready.
            a_ready_q: true,
            b_ready_q: true,
            o_valid_q: false,
            o_data_q: T::default(),
            o_sel_q: false,
            rr_q: false,
            lock_q: false,
        }
    }
}

impl<T: SkidItem, const PACKETS: bool> SkidArb<T, PACKETS> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> SkidArbOut<T> {
        SkidArbOut {
            a_ready: self.a_ready_q,
            b_ready: self.b_ready_q,
            o_valid: self.o_valid_q,
            o_data: self.o_data_q,
            o_sel: self.o_sel_q,
        }
    }

    /// One clock edge.
    pub fn tick(&mut self, i: &SkidArbIn<T>) -> SkidArbOut<T> {
        // A transfer on an input happens only when its skid entry is empty.
        let a_take = i.a_valid && self.a_ready_q;
        let b_take = i.b_valid && self.b_ready_q;
        let a_has = self.a_skid_valid_q || a_take;
        let b_has = self.b_skid_valid_q || b_take;
        let a_head = if self.a_skid_valid_q {
            self.a_skid_data_q
        } else {
            i.a_data
        };
        let b_head = if self.b_skid_valid_q {
            self.b_skid_data_q
        } else {
            i.b_data
        };
        let slot = !self.o_valid_q || i.o_ready;
        let (grant_a, grant_b) = if self.lock_q {
            (slot && a_has && self.rr_q, slot && b_has && !self.rr_q)
        } else {
            (
                slot && a_has && (!b_has || !self.rr_q),
                slot && b_has && (!a_has || self.rr_q),
            )
        };

        if grant_a {
            self.o_valid_q = true;
            self.o_data_q = a_head;
            self.o_sel_q = false;
            self.rr_q = true;
            self.lock_q = PACKETS && !a_head.last();
        } else if grant_b {
            self.o_valid_q = true;
            self.o_data_q = b_head;
            self.o_sel_q = true;
            self.rr_q = false;
            self.lock_q = PACKETS && !b_head.last();
        } else if i.o_ready {
            self.o_valid_q = false;
        }

        // Skid entries: emptied by a grant, filled by an accepted item that
        // did not go straight out (never both: no transfer while full).
        if self.a_skid_valid_q && grant_a {
            self.a_skid_valid_q = false;
            self.a_ready_q = true;
        } else if a_take && !grant_a {
            self.a_skid_valid_q = true;
            self.a_skid_data_q = i.a_data;
            self.a_ready_q = false;
        }
        if self.b_skid_valid_q && grant_b {
            self.b_skid_valid_q = false;
            self.b_ready_q = true;
        } else if b_take && !grant_b {
            self.b_skid_valid_q = true;
            self.b_skid_data_q = i.b_data;
            self.b_ready_q = false;
        }
        self.outputs()
    }
}
impl<T: SkidItem, const PACKETS: bool> crate::trace::Trace for SkidArb<T, PACKETS> {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        let item = |t: &mut dyn crate::trace::Tracer, name: &str, v: &T| {
            let mut b = crate::trace::Bits::default();
            v.pack(&mut b);
            t.var(name, T::W, b.words());
        };
        t.reg("a_skid_valid_q", 1, &self.a_skid_valid_q);
        t.reg("b_skid_valid_q", 1, &self.b_skid_valid_q);
        item(t, "a_skid_data_q", &self.a_skid_data_q);
        item(t, "b_skid_data_q", &self.b_skid_data_q);
        t.reg("a_ready_q", 1, &self.a_ready_q);
        t.reg("b_ready_q", 1, &self.b_ready_q);
        t.reg("o_valid_q", 1, &self.o_valid_q);
        item(t, "o_data_q", &self.o_data_q);
        t.reg("o_sel_q", 1, &self.o_sel_q);
        t.reg("rr_q", 1, &self.rr_q);
        t.reg("lock_q", 1, &self.lock_q);
    }
}
