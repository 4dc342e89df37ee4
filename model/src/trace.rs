//! Register tracing: every block names its registers, with the RTL's names,
//! widths and bit layout, so that a waveform of the model (the testbench's
//! `model.vcd`) holds the same signals as Verilator's (`rtl.vcd`) under the
//! same hierarchical names (`TOP.rnic_top.u_<block>.<reg>_q`).
//!
//! Layout follows the RTL declarations: a packed per-QP vector
//! (`logic [QPS-1:0][31:0] rc_q`) is one wide signal with element 0 in the
//! low bits; an unpacked array (`logic [31:0] cc_q [NCC]`) is one signal
//! per element, `cc_q[k]`, as Verilator names them. Memories Verilator does
//! not dump (arrays longer than its `--trace-max-array`) are not traced.

use crate::ports::Beat;

/// Receives a block's registers, in the same order every cycle.
pub trait Tracer {
    /// Enter sub-instance `scope` (the RTL's instance name, `u_req_fifo`).
    fn push(&mut self, scope: &str);
    /// Leave the innermost scope.
    fn pop(&mut self);
    /// One register: `width` bits in little-endian 64-bit words (bit 0 of
    /// `words[0]` is bit 0), no bits set at or above `width`.
    fn var(&mut self, name: &str, width: u32, words: &[u64]);
    /// Element `k` of unpacked array `name` (Verilator's `name[k]`). A
    /// tracer that needs no names (a state snapshot) skips the formatting.
    fn element(&mut self, name: &str, k: usize, width: u32, words: &[u64]) {
        self.var(&format!("{name}[{k}]"), width, words);
    }
}

/// A block whose registers can be traced.
pub trait Trace {
    /// Reports every traced register to `t`: the same names, widths and
    /// order on every call (a VCD writer declares them from the first).
    fn trace(&self, t: &mut dyn Tracer);
}

/// Words held without allocating (registers up to 1024 bits; wider ones,
/// the CSR tables, spill to the heap).
const INLINE: usize = 16;

/// Bits of a register, appended field by field from bit 0 up.
#[derive(Debug)]
pub struct Bits {
    inline: [u64; INLINE],
    heap: Vec<u64>,
    len: u32,
}

impl Default for Bits {
    fn default() -> Self {
        Bits {
            inline: [0; INLINE],
            heap: Vec::new(),
            len: 0,
        }
    }
}

impl Bits {
    fn word(&mut self, k: usize) -> &mut u64 {
        if k == INLINE && self.heap.is_empty() {
            self.heap.extend_from_slice(&self.inline);
        }
        if k >= INLINE {
            if self.heap.len() <= k {
                self.heap.resize(k + 1, 0);
            }
            &mut self.heap[k]
        } else {
            &mut self.inline[k]
        }
    }

    /// Appends the low `w` bits of `v` (w <= 64).
    pub fn push(&mut self, v: u64, w: u32) {
        if w == 0 {
            return;
        }
        let v = if w == 64 { v } else { v & ((1u64 << w) - 1) };
        let (k, off) = ((self.len / 64) as usize, self.len % 64);
        *self.word(k) |= v << off;
        if off != 0 && off + w > 64 {
            *self.word(k + 1) |= v >> (64 - off);
        }
        self.len += w;
    }

    pub fn words(&self) -> &[u64] {
        let n = self.len.div_ceil(64) as usize;
        if n > INLINE {
            &self.heap[..n]
        } else {
            &self.inline[..n]
        }
    }
}

/// A register's value as the RTL lays it out in `elem_width`-bit elements
/// (scalars: one element of the whole width).
pub trait TraceValue {
    /// Elements (1 for a scalar, N for a packed array).
    const LEN: u32 = 1;
    fn put(&self, elem_width: u32, b: &mut Bits);
}

macro_rules! trace_uint {
    ($($t:ty),*) => {$(
        impl TraceValue for $t {
            fn put(&self, w: u32, b: &mut Bits) {
                // Sign-extended for i64 (two's complement of the RTL width).
                b.push(*self as u64, w.min(64));
                if w > 64 {
                    b.push(0, w - 64);
                }
            }
        }
    )*};
}
trace_uint!(bool, u8, u16, u32, u64, usize, i64);

impl TraceValue for u128 {
    fn put(&self, w: u32, b: &mut Bits) {
        b.push(*self as u64, w.min(64));
        if w > 64 {
            b.push((*self >> 64) as u64, w - 64);
        }
    }
}

impl TraceValue for Beat {
    fn put(&self, w: u32, b: &mut Bits) {
        self.0.as_slice().put(w, b);
    }
}

impl<const N: usize> TraceValue for crate::ports::Wide<N> {
    fn put(&self, w: u32, b: &mut Bits) {
        let mut left = w;
        for x in self.0 {
            let n = left.min(64);
            b.push(x, n);
            left -= n;
        }
    }
}

impl TraceValue for [u8] {
    /// A byte string as a vector, byte 0 in bits 7..0 (as `Beat`).
    fn put(&self, w: u32, b: &mut Bits) {
        let mut left = w;
        for c in self.chunks(8) {
            let mut v = [0u8; 8];
            v[..c.len()].copy_from_slice(c);
            let n = left.min(64);
            b.push(u64::from_le_bytes(v), n);
            left -= n;
        }
    }
}

impl<T: TraceValue, const N: usize> TraceValue for [T; N] {
    const LEN: u32 = N as u32;
    fn put(&self, w: u32, b: &mut Bits) {
        for e in self {
            e.put(w, b);
        }
    }
}

impl dyn Tracer + '_ {
    /// A register of `width` bits; an array is packed, element 0 lowest.
    pub fn reg<V: TraceValue>(&mut self, name: &str, width: u32, v: &V) {
        let mut b = Bits::default();
        v.put(width / V::LEN, &mut b);
        self.var(name, width, b.words());
    }

    /// An unpacked array: one register `name[k]` of `width` bits per
    /// element.
    pub fn each<V: TraceValue>(&mut self, name: &str, width: u32, v: &[V]) {
        for (k, e) in v.iter().enumerate() {
            let mut b = Bits::default();
            e.put(width / V::LEN, &mut b);
            self.element(name, k, width, b.words());
        }
    }
}
