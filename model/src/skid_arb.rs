//! `skid_arb`: N-input round-robin arbiter with one skid entry per input
//! and a registered output, the shared core of `rd_req_arb` (single
//! requests), `rq_arb` (multi-beat TLPs), `wr_arb` and `cq_arb`. Model of
//! `hw/rtl/skid_arb.sv` (same register names); its owners hold it as
//! `u_arb`, the RTL instance name.
//!
//! Each input has one skid entry and a registered ready that always equals
//! "skid entry empty". An accepted item goes straight into the output
//! register when the output is free and its input wins the round robin,
//! else it waits in the skid entry. The round robin starts at `rr_q`: after
//! input k is granted, priority starts at k+1 (mod N), after reset at 0.
//! With `PACKETS`, an item's `last()` ends its packet and a grant holds from
//! a packet's first item to its last (the RTL's bit 0 of the item); without,
//! every item is its own packet. `o_sel` names the input of the item on
//! `o_data`. Item transferred at n -> visible at n+1 when the output is free.

/// What the arbiter carries: the RTL's `W`-bit item.
pub trait SkidItem: Copy + Default {
    /// The RTL's item width `W`.
    const W: u32;
    /// The packet's last beat (read only with `PACKETS`).
    fn last(&self) -> bool;
    /// The item as the RTL packs it, from bit 0 up (for the VCD).
    fn pack(&self, b: &mut crate::trace::Bits);
}

/// The arbiter's inputs (all but `clk`/`rst`): input k is `in_*[k]`.
#[derive(Debug, Clone, Copy)]
pub struct SkidArbIn<T, const N: usize> {
    pub in_valid: [bool; N],
    pub in_data: [T; N],
    pub o_ready: bool,
}

impl<T: SkidItem, const N: usize> Default for SkidArbIn<T, N> {
    fn default() -> Self {
        SkidArbIn {
            in_valid: [false; N],
            in_data: [T::default(); N],
            o_ready: false,
        }
    }
}

/// The arbiter's outputs, all registered.
#[derive(Debug, Clone, Copy)]
pub struct SkidArbOut<T, const N: usize> {
    pub in_ready: [bool; N],
    pub o_valid: bool,
    pub o_data: T,
    /// The input of `o_data` (`$clog2(N)` bits in the RTL).
    pub o_sel: u8,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SkidArb<T, const N: usize, const PACKETS: bool> {
    skid_valid_q: [bool; N],
    skid_data_q: [T; N],
    in_ready_q: [bool; N],
    o_valid_q: bool,
    o_data_q: T,
    /// The input granted last (0 after reset).
    o_sel_q: u8,
    /// The first input in priority order: the one after the input granted
    /// last.
    rr_q: u8,
    /// Inside a packet: only the input granted last may be granted.
    lock_q: bool,
}

impl<T: SkidItem, const N: usize, const PACKETS: bool> Default for SkidArb<T, N, PACKETS> {
    fn default() -> Self {
        assert!((2..=8).contains(&N), "skid_arb: N must be 2..8");
        SkidArb {
            skid_valid_q: [false; N],
            skid_data_q: [T::default(); N],
            // Skid entries are empty after reset, so the inputs are ready.
            in_ready_q: [true; N],
            o_valid_q: false,
            o_data_q: T::default(),
            o_sel_q: 0,
            rr_q: 0,
            lock_q: false,
        }
    }
}

impl<T: SkidItem, const N: usize, const PACKETS: bool> SkidArb<T, N, PACKETS> {
    /// The RTL's `SW = $clog2(N)`: the width of `o_sel_q` and `rr_q`.
    const SW: u32 = usize::BITS - (N - 1).leading_zeros();

    pub fn new() -> Self {
        Self::default()
    }

    pub fn outputs(&self) -> SkidArbOut<T, N> {
        SkidArbOut {
            in_ready: self.in_ready_q,
            o_valid: self.o_valid_q,
            o_data: self.o_data_q,
            o_sel: self.o_sel_q,
        }
    }

    /// One clock edge.
    pub fn tick(&mut self, i: &SkidArbIn<T, N>) -> SkidArbOut<T, N> {
        // A transfer on an input happens only when its skid entry is empty.
        let take: [bool; N] = std::array::from_fn(|k| i.in_valid[k] && self.in_ready_q[k]);
        let has: [bool; N] = std::array::from_fn(|k| self.skid_valid_q[k] || take[k]);
        let head = |k: usize| {
            if self.skid_valid_q[k] {
                self.skid_data_q[k]
            } else {
                i.in_data[k]
            }
        };
        let slot = !self.o_valid_q || i.o_ready;
        // Under a packet lock only the input granted last; else the first
        // input with an item from rr_q on, wrapping at N.
        let win = if self.lock_q {
            Some(self.o_sel_q as usize).filter(|&k| has[k])
        } else {
            (0..N)
                .map(|j| (self.rr_q as usize + j) % N)
                .find(|&k| has[k])
        };
        let grant = win.filter(|_| slot);

        if let Some(k) = grant {
            let h = head(k);
            self.o_valid_q = true;
            self.o_data_q = h;
            self.o_sel_q = k as u8;
            self.rr_q = ((k + 1) % N) as u8;
            self.lock_q = PACKETS && !h.last();
        } else if i.o_ready {
            self.o_valid_q = false;
        }

        // Skid entries: emptied by a grant, filled by an accepted item that
        // did not go straight out (never both: no transfer while full).
        for (k, &took) in take.iter().enumerate() {
            let granted = grant == Some(k);
            if self.skid_valid_q[k] && granted {
                self.skid_valid_q[k] = false;
                self.in_ready_q[k] = true;
            } else if took && !granted {
                self.skid_valid_q[k] = true;
                self.skid_data_q[k] = i.in_data[k];
                self.in_ready_q[k] = false;
            }
        }
        self.outputs()
    }
}

impl<T: SkidItem, const N: usize, const PACKETS: bool> crate::trace::Trace
    for SkidArb<T, N, PACKETS>
{
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        let bits = |v: &T| {
            let mut b = crate::trace::Bits::default();
            v.pack(&mut b);
            b
        };
        t.reg("skid_valid_q", N as u32, &self.skid_valid_q);
        for (k, v) in self.skid_data_q.iter().enumerate() {
            t.element("skid_data_q", k, T::W, bits(v).words());
        }
        t.reg("in_ready_q", N as u32, &self.in_ready_q);
        t.reg("o_valid_q", 1, &self.o_valid_q);
        t.var("o_data_q", T::W, bits(&self.o_data_q).words());
        t.reg("o_sel_q", Self::SW, &self.o_sel_q);
        t.reg("rr_q", Self::SW, &self.rr_q);
        t.reg("lock_q", 1, &self.lock_q);
    }
}
