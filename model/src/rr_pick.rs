//! `rr_pick`: round-robin picker over `N` requesters, the shared core of
//! `tx_sched` (QPs with work) and `cnp_gen` (QPs with a CNP pending). Model
//! of `hw/rtl/rr_pick.sv` (same register names); its owners hold it as
//! `u_rr`, the RTL instance name.
//!
//! The pointer `ptr_q` is the first requester to look at. When `adv` is set
//! (the owner's grant of `last_idx` was taken this cycle) the pointer moves
//! to `last_idx + 1`, and this same cycle's pick already starts from the
//! moved pointer, so a requester just served is not named again while
//! others wait. The RTL's `pick_idx` with no requester is `last_idx`; here
//! that is `None`, and the owners keep their index, as the RTL does.

/// The picker's one register. `N` is a power of two, at most 256.
#[derive(Debug, Clone, PartialEq)]
pub struct RrPick<const N: usize> {
    ptr_q: u8,
}

impl<const N: usize> Default for RrPick<N> {
    fn default() -> Self {
        const { assert!(N >= 2 && N <= 256 && N.is_power_of_two()) };
        RrPick { ptr_q: 0 }
    }
}

impl<const N: usize> RrPick<N> {
    pub fn new() -> Self {
        Self::default()
    }

    /// One clock edge: returns this cycle's pick (the first `q` with
    /// `req(q)` at or after the moved pointer) and moves the pointer.
    /// Call it exactly once per owner tick, as the RTL evaluates it every
    /// cycle.
    pub fn tick(&mut self, req: impl Fn(usize) -> bool, adv: bool, last_idx: u8) -> Option<u8> {
        let ptr_d = if adv {
            ((last_idx as usize + 1) % N) as u8
        } else {
            self.ptr_q
        };
        let pick = (0..N).map(|k| (ptr_d as usize + k) % N).find(|&q| req(q));
        self.ptr_q = ptr_d;
        pick.map(|q| q as u8)
    }
}

impl<const N: usize> crate::trace::Trace for RrPick<N> {
    fn trace(&self, t: &mut dyn crate::trace::Tracer) {
        t.reg("ptr_q", N.trailing_zeros(), &self.ptr_q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_first_requester_at_or_after_the_pointer() {
        let mut p = RrPick::<4>::new();
        // Pointer 0: requesters 1 and 3 -> 1.
        assert_eq!(p.tick(|q| q == 1 || q == 3, false, 0), Some(1));
        // 1 taken: pointer 2, so 3 even though 1 still asks.
        assert_eq!(p.tick(|q| q == 1 || q == 3, true, 1), Some(3));
        // 3 taken: the pointer wraps to 0.
        assert_eq!(p.tick(|q| q == 1 || q == 3, true, 3), Some(1));
        // Nobody asks: no pick; the pointer stays at 0.
        assert_eq!(p.tick(|_| false, false, 1), None);
        assert_eq!(p.tick(|_| true, false, 1), Some(0));
    }
}
