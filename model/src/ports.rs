//! Port structs: the one place where a block's RTL port list is written down
//! on the Rust side.
//!
//! Every block has an `In` and an `Out` struct declared with [`ports!`]. The
//! macro records each field's RTL name and bit width, so that
//! - the generated Verilator binding (testbench build script) can check at
//!   compile time that every RTL port has a field of the same name and width,
//! - the lockstep runner can compare and print any port without knowing the
//!   block,
//! - the model's VCD writer can dump the same signal names as Verilator.
//!
//! Data fields of a stream name their qualifier (`if rq_valid`): they are
//! compared only in cycles where that valid is high, so neither side has to
//! model don't-care bits.

/// A value that can sit on a port: converts to and from little-endian 64-bit
/// words (bit 0 of word 0 is port bit 0, as in Verilator's `WData`).
pub trait PortValue: Copy + Default + PartialEq + core::fmt::Debug {
    /// Bits this Rust type can hold.
    const BITS: u32;
    fn to_words(&self, out: &mut [u64]);
    fn from_words(words: &[u64]) -> Self;
}

impl PortValue for bool {
    const BITS: u32 = 1;
    fn to_words(&self, out: &mut [u64]) {
        out[0] = *self as u64;
    }
    fn from_words(words: &[u64]) -> Self {
        words[0] & 1 != 0
    }
}

macro_rules! port_value_uint {
    ($($t:ty),*) => {$(
        impl PortValue for $t {
            const BITS: u32 = <$t>::BITS;
            fn to_words(&self, out: &mut [u64]) {
                out[0] = *self as u64;
            }
            fn from_words(words: &[u64]) -> Self {
                words[0] as $t
            }
        }
    )*};
}
port_value_uint!(u8, u16, u32, u64);

impl PortValue for u128 {
    const BITS: u32 = 128;
    fn to_words(&self, out: &mut [u64]) {
        out[0] = *self as u64;
        out[1] = (*self >> 64) as u64;
    }
    fn from_words(words: &[u64]) -> Self {
        words[0] as u128 | (words[1] as u128) << 64
    }
}

/// One beat of a 512-bit data bus: byte `i` on bits `8*i+7 .. 8*i` (AXI-Stream
/// lane order: byte 0 is the first byte on the wire).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Beat(pub [u8; 64]);

impl Default for Beat {
    fn default() -> Self {
        Beat([0; 64])
    }
}

impl core::fmt::Debug for Beat {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for b in self.0.iter().rev() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl core::ops::Deref for Beat {
    type Target = [u8; 64];
    fn deref(&self) -> &[u8; 64] {
        &self.0
    }
}

impl core::ops::DerefMut for Beat {
    fn deref_mut(&mut self) -> &mut [u8; 64] {
        &mut self.0
    }
}

impl PortValue for Beat {
    const BITS: u32 = 512;
    fn to_words(&self, out: &mut [u64]) {
        for (w, chunk) in out.iter_mut().zip(self.chunks_exact(8)) {
            *w = u64::from_le_bytes(chunk.try_into().unwrap());
        }
    }
    fn from_words(words: &[u64]) -> Self {
        let mut b = [0u8; 64];
        for (chunk, w) in b.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&w.to_le_bytes());
        }
        Beat(b)
    }
}

/// A port wider than 128 bits that is not a data beat (a metadata record,
/// a WQE): `N` little-endian 64-bit words, bit 0 of word 0 is port bit 0.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wide<const N: usize>(pub [u64; N]);

impl<const N: usize> Default for Wide<N> {
    fn default() -> Self {
        Wide([0; N])
    }
}

impl<const N: usize> core::fmt::Debug for Wide<N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for w in self.0.iter().rev() {
            write!(f, "{w:016x}")?;
        }
        Ok(())
    }
}

impl<const N: usize> Wide<N> {
    /// Bits `lsb .. lsb + width` (width <= 64) as an integer.
    pub fn field(&self, lsb: usize, width: usize) -> u64 {
        debug_assert!(width <= 64 && lsb + width <= 64 * N);
        let (w, b) = (lsb / 64, lsb % 64);
        let mut v = self.0[w] >> b;
        if b != 0 && b + width > 64 {
            v |= self.0[w + 1] << (64 - b);
        }
        if width < 64 {
            v &= (1u64 << width) - 1;
        }
        v
    }

    /// Sets bits `lsb .. lsb + width` (width <= 64) to the low bits of `v`.
    pub fn set_field(&mut self, lsb: usize, width: usize, v: u64) {
        debug_assert!(width <= 64 && lsb + width <= 64 * N);
        let mask = if width < 64 { (1u64 << width) - 1 } else { !0 };
        let v = v & mask;
        let (w, b) = (lsb / 64, lsb % 64);
        self.0[w] = self.0[w] & !(mask << b) | v << b;
        if b != 0 && b + width > 64 {
            let hi = 64 - b;
            self.0[w + 1] = self.0[w + 1] & !(mask >> hi) | v >> hi;
        }
    }
}

impl<const N: usize> PortValue for Wide<N> {
    const BITS: u32 = 64 * N as u32;
    fn to_words(&self, out: &mut [u64]) {
        out[..N].copy_from_slice(&self.0);
    }
    fn from_words(words: &[u64]) -> Self {
        let mut w = [0u64; N];
        w.copy_from_slice(&words[..N]);
        Wide(w)
    }
}

/// Name, width and compare qualifier of one port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortInfo {
    pub name: &'static str,
    pub width: u32,
    /// Index (in the same struct) of the valid that qualifies this field.
    pub qualifier: Option<&'static str>,
}

impl PortInfo {
    /// 64-bit words needed to hold the port.
    pub const fn words(&self) -> usize {
        self.width.div_ceil(64) as usize
    }
}

/// A struct of ports, generated by [`ports!`].
pub trait Ports: Default + Clone + PartialEq + core::fmt::Debug {
    const PORTS: &'static [PortInfo];
    /// Writes port `idx` into `out` (at least `PORTS[idx].words()` long).
    fn get(&self, idx: usize, out: &mut [u64]);
    /// Sets port `idx` from `words`.
    fn set(&mut self, idx: usize, words: &[u64]);

    /// Port `idx` as words, masked to its width.
    fn get_vec(&self, idx: usize) -> Vec<u64> {
        let info = Self::PORTS[idx];
        let mut v = vec![0u64; info.words()];
        self.get(idx, &mut v);
        mask_words(&mut v, info.width);
        v
    }

    /// Whether port `idx` is compared this cycle: its qualifier (if any) is high.
    fn is_live(&self, idx: usize) -> bool {
        match Self::PORTS[idx].qualifier {
            None => true,
            Some(q) => {
                let qi = port_index(Self::PORTS, q);
                self.get_vec(qi)[0] & 1 != 0
            }
        }
    }
}

/// Clears bits above `width`.
pub fn mask_words(words: &mut [u64], width: u32) {
    for (i, w) in words.iter_mut().enumerate() {
        let lo = i as u32 * 64;
        if lo >= width {
            *w = 0;
        } else if width - lo < 64 {
            *w &= (1u64 << (width - lo)) - 1;
        }
    }
}

/// Index of the port called `name`; panics if absent (a bug in a `ports!` list).
pub fn port_index(ports: &[PortInfo], name: &str) -> usize {
    ports
        .iter()
        .position(|p| p.name == name)
        .unwrap_or_else(|| panic!("no port named {name}"))
}

const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Index of port `name`, at compile time if need be (the generated binding
/// resolves RTL ports to model fields with it).
pub const fn find_port(ports: &[PortInfo], name: &str) -> Option<usize> {
    let mut i = 0;
    while i < ports.len() {
        if str_eq(ports[i].name, name) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Width of port `name`, or 0 when there is no such port. `const`, so that the
/// generated binding can check the RTL's port widths at compile time.
pub const fn port_width(ports: &[PortInfo], name: &str) -> u32 {
    match find_port(ports, name) {
        Some(i) => ports[i].width,
        None => 0,
    }
}

/// Declares a port struct.
///
/// ```
/// rnic_model::ports! {
///     /// Outputs of an example block.
///     pub struct ExampleOut {
///         pub o_valid: bool = 1,
///         pub o_data: rnic_model::ports::Beat = 512 if o_valid,
///     }
/// }
/// ```
#[macro_export]
macro_rules! ports {
    (
        $(#[$m:meta])*
        pub struct $name:ident {
            $( $(#[$fm:meta])* pub $field:ident : $ty:ty = $width:literal $(if $q:ident)? ),* $(,)?
        }
    ) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Default)]
        pub struct $name {
            $( $(#[$fm])* pub $field: $ty, )*
        }

        $( const _: () = assert!(
            <$ty as $crate::ports::PortValue>::BITS >= $width,
            concat!("field ", stringify!($field), " is too narrow for its port width")
        ); )*

        impl $crate::ports::Ports for $name {
            const PORTS: &'static [$crate::ports::PortInfo] = &[
                $( $crate::ports::PortInfo {
                    name: stringify!($field),
                    width: $width,
                    qualifier: $crate::ports!(@q $($q)?),
                }, )*
            ];
            #[allow(unused_assignments)]
            fn get(&self, idx: usize, out: &mut [u64]) {
                let mut i = 0;
                $( if idx == i { return $crate::ports::PortValue::to_words(&self.$field, out); } i += 1; )*
                panic!("port index {idx} out of range");
            }
            #[allow(unused_assignments)]
            fn set(&mut self, idx: usize, words: &[u64]) {
                let mut i = 0;
                $( if idx == i { self.$field = $crate::ports::PortValue::from_words(words); return; } i += 1; )*
                panic!("port index {idx} out of range");
            }
        }
    };
    (@q) => { None };
    (@q $q:ident) => { Some(stringify!($q)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::ports! {
        pub struct T {
            pub v: bool = 1,
            pub len: u32 = 17 if v,
            pub data: Beat = 512 if v,
        }
    }

    #[test]
    fn widths_and_names_are_recorded() {
        assert_eq!(port_width(T::PORTS, "len"), 17);
        assert_eq!(port_width(T::PORTS, "data"), 512);
        assert_eq!(port_width(T::PORTS, "nope"), 0);
        assert_eq!(T::PORTS[1].qualifier, Some("v"));
    }

    #[test]
    fn get_masks_to_width_and_set_round_trips() {
        let mut t = T {
            len: 0xFFFF_FFFF,
            ..T::default()
        };
        assert_eq!(t.get_vec(1), vec![0x1_FFFF]);
        let mut d = Beat::default();
        d[0] = 0x11;
        d[63] = 0xEE;
        t.set(2, &{
            let mut w = [0u64; 8];
            d.to_words(&mut w);
            w
        });
        assert_eq!(t.data, d);
        assert_eq!(t.get_vec(2)[7] >> 56, 0xEE);
        assert!(!t.is_live(2));
        t.v = true;
        assert!(t.is_live(2));
    }
}
