//! Verilator binding of the RTL blocks.
//!
//! `build.rs` verilates every top listed in its `TOPS` and every parameter
//! variant listed in its `VARIANTS`, and reads each one's port list from
//! Verilator's XML, so nothing here or in the generated code is written per
//! port. For a top `foo_bar` it generates
//! - `RtlFooBar` (= [`Rtl`]`<FooBarTop>`), implementing [`Dut`] with the
//!   model's `rnic_model::foo_bar::{FooBarIn, FooBarOut}`;
//! - compile-time assertions that every RTL input (output) is a field of the
//!   same name and width in `FooBarIn` (`FooBarOut`), and that the structs have
//!   no other fields: a mismatch between RTL and model does not compile.
//!
//! A variant `foo_bar_x` of `foo_bar` (the same module verilated with
//! `-G<NAME>=<VALUE>` overrides, as its own model `Vfoo_bar_x`) gives
//! `RtlFooBarX` (= [`Rtl`]`<FooBarXTop>`) with the *module's* model types,
//! `NAME = "foo_bar"` (so VCD scopes and [`Dut::NAME`] are the module's) and
//! the same compile-time checks. [`RtlTop::VARIANT`], [`RtlTop::PARAMS`] and
//! [`RtlTop::PARAM_VALUES`] say which configuration a type is; e.g.
//! `RtlDmaRdT128`: `VARIANT = "dma_rd_t128"`, `PARAMS = [("TAGS", "128"),
//! ("BUF_LINES", "1024")]`, `param("CLIENT_W") == Some("2")`.
//!
//! Ports travel as little-endian 64-bit words through [`Ports::get`] and
//! [`Ports::set`]; `clk` and `rst` are driven by the binding itself.
//!
//! # Clocking and trace convention
//!
//! Time is in picoseconds (Verilator's trace unit) of the default 250 MHz
//! clock, [`CLOCK_PERIOD_PS`] = 4000. A cycle `n` (counted from
//! construction, reset cycles included) is: inputs applied with `clk` low,
//! eval, dump at `4000 n`; `clk` high, eval, dump at `4000 n + 2000`;
//! outputs read; `clk` low, eval. So in the VCD inputs change on the falling
//! edge, at multiples of 4 ns, and registered outputs on the rising edge,
//! 2 ns later. The RTL's `$time` is the same time. Nothing is dumped while no
//! trace is open; a trace opened at cycle `n` starts at `4000 n`.

use core::ffi::{c_char, c_int, c_void};
use std::ffi::CString;
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::NonNull;

use rnic_model::ports::PortInfo;
use rnic_model::{Dut, Ports};

/// The clock period in trace time units (ps): 250 MHz, the design's
/// default clock, so waveforms show real time.
pub const CLOCK_PERIOD_PS: u64 = 4000;

/// Clock cycles that [`Dut::reset`] holds `rst` high.
pub const RESET_CYCLES: u64 = 2;

/// The `extern "C"` entry points of one top's generated shim.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Shim {
    pub new: unsafe extern "C" fn() -> *mut c_void,
    pub delete: unsafe extern "C" fn(*mut c_void),
    pub set_input: unsafe extern "C" fn(*mut c_void, u32, *const u64),
    pub get_input: unsafe extern "C" fn(*mut c_void, u32, *mut u64),
    pub get_output: unsafe extern "C" fn(*mut c_void, u32, *mut u64),
    pub set_clk: unsafe extern "C" fn(*mut c_void, u8),
    pub set_rst: unsafe extern "C" fn(*mut c_void, u8),
    pub eval: unsafe extern "C" fn(*mut c_void, u64),
    pub trace_open: unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int,
    pub trace_dump: unsafe extern "C" fn(*mut c_void, u64),
    pub trace_flush: unsafe extern "C" fn(*mut c_void),
    pub trace_close: unsafe extern "C" fn(*mut c_void),
}

/// One RTL port (other than `clk`/`rst`) as Verilator reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtlPort {
    pub name: &'static str,
    pub width: u32,
    /// Index of the field of the same name in the model's `PORTS`.
    pub field: usize,
}

impl RtlPort {
    /// 64-bit words needed to hold the port.
    pub const fn words(&self) -> usize {
        self.width.div_ceil(64) as usize
    }
}

/// A Verilated top, as described by the generated code.
pub trait RtlTop: 'static {
    type In: Ports;
    type Out: Ports;
    /// RTL module name (also for a variant: its VCD scopes are the module's).
    const NAME: &'static str;
    /// Name of this configuration: [`RtlTop::NAME`] for a top of build.rs's
    /// `TOPS`, the variant's name (e.g. `dma_rd_t128`) for one of `VARIANTS`.
    /// The Verilated model is `V<VARIANT>`.
    const VARIANT: &'static str;
    /// The parameter overrides (`-G<NAME>=<VALUE>`) as build.rs's `VARIANTS`
    /// lists them; empty for a top of `TOPS`.
    const PARAMS: &'static [(&'static str, &'static str)];
    /// Every parameter (not localparam) of the top module as Verilator
    /// resolved it for this configuration, overrides and defaults alike, in
    /// declaration order: integers in decimal, anything else as Verilator's XML
    /// writes it. build.rs checks that each override shows up here.
    const PARAM_VALUES: &'static [(&'static str, &'static str)];
    /// Inputs in RTL declaration order; index `i` is the shim's input `i`.
    const INPUTS: &'static [RtlPort];
    /// Outputs in RTL declaration order; index `i` is the shim's output `i`.
    const OUTPUTS: &'static [RtlPort];
    #[doc(hidden)]
    const SHIM: Shim;

    /// The resolved value of parameter `name` (see [`RtlTop::PARAM_VALUES`]).
    fn param(name: &str) -> Option<&'static str> {
        Self::PARAM_VALUES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
}

/// Index of the port called `name` in `ports`, at compile time (a missing
/// field is a compile error; the generated width assertions say which).
#[doc(hidden)]
pub const fn field_index(ports: &[PortInfo], name: &str) -> usize {
    match rnic_model::ports::find_port(ports, name) {
        Some(i) => i,
        None => panic!("an RTL port has no model field of its name"),
    }
}

/// A Verilated top. Owns its model (with its own `VerilatedContext`), frees
/// it on drop (after calling `final()`), and counts clock cycles.
pub struct Rtl<T: RtlTop> {
    handle: NonNull<c_void>,
    cycle: u64,
    tracing: bool,
    scratch: Vec<u64>,
    _top: PhantomData<fn() -> T>,
}

// SAFETY: the handle is owned exclusively by this value, is only used through
// `&mut self` (or `&self` for reads that do not touch shared state), and a
// Verilated model with its own VerilatedContext has no thread affinity.
unsafe impl<T: RtlTop> Send for Rtl<T> {}

impl<T: RtlTop> Rtl<T> {
    /// Builds the model with `clk` and `rst` low and all inputs zero, and
    /// evaluates it once. Call [`Dut::reset`] before ticking.
    pub fn new() -> Self {
        // SAFETY: the shim's constructor takes no arguments.
        let raw = unsafe { (T::SHIM.new)() };
        let handle = NonNull::new(raw)
            .unwrap_or_else(|| panic!("{}: constructing the Verilated model failed", T::VARIANT));
        let max_words = T::INPUTS
            .iter()
            .chain(T::OUTPUTS)
            .map(RtlPort::words)
            .max()
            .unwrap_or(1);
        let mut rtl = Rtl {
            handle,
            cycle: 0,
            tracing: false,
            scratch: vec![0; max_words.max(1)],
            _top: PhantomData,
        };
        rtl.set_clk(false);
        rtl.set_rst(false);
        rtl.eval(0);
        rtl
    }

    /// Clock cycles run so far (reset cycles included).
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Starts a VCD trace into `path` (replacing any open one).
    ///
    /// # Panics
    /// If the file cannot be created; see [`Rtl::try_trace_open`].
    pub fn trace_open(&mut self, path: &Path) {
        if let Err(e) = self.try_trace_open(path) {
            panic!("{}: cannot open trace {}: {e}", T::VARIANT, path.display());
        }
    }

    /// Starts a VCD trace into `path` (replacing any open one).
    pub fn try_trace_open(&mut self, path: &Path) -> io::Result<()> {
        let c = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
        self.tracing = false;
        // SAFETY: valid handle, NUL-terminated path that outlives the call.
        let rc = unsafe { (T::SHIM.trace_open)(self.handle.as_ptr(), c.as_ptr()) };
        if rc != 0 {
            return Err(io::Error::other("VerilatedVcdC could not open the file"));
        }
        self.tracing = true;
        Ok(())
    }

    /// Writes buffered trace data to the file.
    pub fn trace_flush(&mut self) {
        // SAFETY: valid handle; a no-op without an open trace.
        unsafe { (T::SHIM.trace_flush)(self.handle.as_ptr()) }
    }

    /// Ends the trace, if one is open.
    pub fn trace_close(&mut self) {
        // SAFETY: valid handle; a no-op without an open trace.
        unsafe { (T::SHIM.trace_close)(self.handle.as_ptr()) }
        self.tracing = false;
    }

    /// Whether a trace is open.
    pub fn is_tracing(&self) -> bool {
        self.tracing
    }

    /// The inputs as the Verilated model holds them now (masked to the
    /// RTL widths).
    pub fn inputs(&self) -> T::In {
        let mut v = T::In::default();
        let mut words = vec![0u64; self.scratch.len()];
        for (i, p) in T::INPUTS.iter().enumerate() {
            let w = &mut words[..p.words()];
            w.fill(0);
            // SAFETY: valid handle, index in range, `w` holds the port's words.
            unsafe { (T::SHIM.get_input)(self.handle.as_ptr(), i as u32, w.as_mut_ptr()) };
            v.set(p.field, w);
        }
        v
    }

    /// The outputs of the Verilated model now.
    pub fn outputs(&mut self) -> T::Out {
        let mut v = T::Out::default();
        for (i, p) in T::OUTPUTS.iter().enumerate() {
            let w = &mut self.scratch[..p.words()];
            w.fill(0);
            // SAFETY: valid handle, index in range, `w` holds the port's words.
            unsafe { (T::SHIM.get_output)(self.handle.as_ptr(), i as u32, w.as_mut_ptr()) };
            v.set(p.field, w);
        }
        v
    }

    fn apply(&mut self, inputs: &T::In) {
        for (i, p) in T::INPUTS.iter().enumerate() {
            let w = &mut self.scratch[..p.words()];
            w.fill(0);
            inputs.get(p.field, w);
            // SAFETY: valid handle, index in range, `w` holds the port's words
            // (the shim masks bits above the port's width).
            unsafe { (T::SHIM.set_input)(self.handle.as_ptr(), i as u32, w.as_ptr()) };
        }
    }

    fn set_clk(&mut self, v: bool) {
        // SAFETY: valid handle.
        unsafe { (T::SHIM.set_clk)(self.handle.as_ptr(), v as u8) }
    }

    fn set_rst(&mut self, v: bool) {
        // SAFETY: valid handle.
        unsafe { (T::SHIM.set_rst)(self.handle.as_ptr(), v as u8) }
    }

    fn eval(&mut self, time: u64) {
        // SAFETY: valid handle.
        unsafe { (T::SHIM.eval)(self.handle.as_ptr(), time) }
    }

    fn dump(&mut self, time: u64) {
        if self.tracing {
            // SAFETY: valid handle.
            unsafe { (T::SHIM.trace_dump)(self.handle.as_ptr(), time) }
        }
    }

    /// One clock cycle with `inputs` applied; see the module docs.
    fn clock(&mut self, inputs: &T::In) -> T::Out {
        let t = CLOCK_PERIOD_PS * self.cycle;
        let half = CLOCK_PERIOD_PS / 2;
        self.apply(inputs);
        self.eval(t);
        self.dump(t);
        self.set_clk(true);
        self.eval(t + half);
        self.dump(t + half);
        let out = self.outputs();
        self.set_clk(false);
        self.eval(t + CLOCK_PERIOD_PS);
        self.cycle += 1;
        out
    }
}

impl<T: RtlTop> Default for Rtl<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: RtlTop> Dut for Rtl<T> {
    type In = T::In;
    type Out = T::Out;
    const NAME: &'static str = T::NAME;

    /// `rst` high with all inputs zero for [`RESET_CYCLES`] clock cycles, then
    /// `rst` low (clock low), and the outputs seen then.
    fn reset(&mut self) -> T::Out {
        let zero = T::In::default();
        self.set_rst(true);
        for _ in 0..RESET_CYCLES {
            self.clock(&zero);
        }
        self.set_rst(false);
        self.eval(CLOCK_PERIOD_PS * self.cycle);
        self.outputs()
    }

    /// Inputs applied, `clk` raised, outputs read, `clk` lowered.
    fn tick(&mut self, inputs: &T::In) -> T::Out {
        self.clock(inputs)
    }
}

impl<T: RtlTop> Drop for Rtl<T> {
    fn drop(&mut self) {
        // SAFETY: valid handle, not used again. Closes any trace, calls
        // `final()` and frees the model and its context.
        unsafe { (T::SHIM.delete)(self.handle.as_ptr()) }
    }
}

impl<T: RtlTop> fmt::Debug for Rtl<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rtl")
            .field("top", &T::NAME)
            .field("variant", &T::VARIANT)
            .field("params", &T::PARAMS)
            .field("cycle", &self.cycle)
            .field("tracing", &self.tracing)
            .finish()
    }
}

include!(concat!(env!("OUT_DIR"), "/rtl_bindings.rs"));
