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
//! construction, reset cycles included) is: `clk` low and inputs applied,
//! eval, dump at `4000 n`; `clk` high, eval, dump at `4000 n + 2000`;
//! outputs read. So in the VCD inputs change on the falling edge, at
//! multiples of 4 ns, and registered outputs on the rising edge, 2 ns later.
//! The falling edge and the next cycle's inputs share one eval: the design
//! has no negative-edge logic, so a separate eval of the falling edge alone
//! computed nothing anyone reads, and two evals a cycle instead of three is
//! a third less work. The RTL's `$time` is the same time. Nothing is dumped
//! while no trace is open; a trace opened at cycle `n` starts at `4000 n`.
//!
//! # Assertions
//!
//! The RTL is verilated with `--assert`; its assertions
//! (`hw/rtl/rnic_assert.svh`) report to the shim instead of stopping the
//! process. Every failure is kept as an [`AssertionFailure`] (name,
//! hierarchical scope, cycle): [`Rtl::assertion_failures`] lists them, and
//! the first one of the thread is also left for [`take_assertion_failure`],
//! which the lockstep runner polls after every cycle to fail the run.

use core::ffi::{c_char, c_int, c_void};
use std::cell::RefCell;
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

/// What the RTL's variables without a reset (RAMs, data registers) hold when
/// a harness is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialState {
    /// All zeros, as the model starts (Verilator's default).
    Zeros,
    /// Random, from this seed (1..=2^31-1), as silicon powers up: lockstep
    /// then fails on any output that depends on an uninitialised bit.
    Random(u32),
}

extern "C" {
    fn rtl_shim_set_rand_reset(seed: c_int);
}

/// Sets the initial state of every harness built from now on, in this
/// process. Until this is called it is `RNIC_RTL_RAND_RESET` (`0` zeros, a
/// seed random; unset: `Random(1)`, so every lockstep run checks that the
/// RTL does not depend on power-up values). Tests that compare the RTL's
/// internal registers with the model's (VCD register traces) use `Zeros`.
pub fn set_initial_state(s: InitialState) {
    let seed = match s {
        InitialState::Zeros => 0,
        InitialState::Random(n) => n.clamp(1, i32::MAX as u32) as c_int,
    };
    // SAFETY: stores an int in the shim's atomic; no other effect.
    unsafe { rtl_shim_set_rand_reset(seed) }
}

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
    /// Returns the number of assertion failures so far (saturating).
    pub eval: unsafe extern "C" fn(*mut c_void, u64) -> u32,
    pub trace_open: unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int,
    pub trace_dump: unsafe extern "C" fn(*mut c_void, u64),
    pub trace_flush: unsafe extern "C" fn(*mut c_void),
    pub trace_close: unsafe extern "C" fn(*mut c_void),
    /// Failure `idx` as `name\tscope\tfile\tline\ttime` into a buffer;
    /// returns its full length, or -1 when there is no such failure.
    pub assert_get: unsafe extern "C" fn(*mut c_void, u32, *mut c_char, u32) -> c_int,
}

/// One failure of an RTL assertion (`hw/rtl/rnic_assert.svh`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertionFailure {
    /// The assertion's label, e.g. `a_rd_req_hold`.
    pub name: String,
    /// Hierarchical scope of the instance holding it, e.g.
    /// `TOP.rnic_top.u_dma_rd` (Verilator's `%m` without the label).
    pub scope: String,
    /// Source file name and line of the assertion.
    pub file: String,
    pub line: u32,
    /// The cycle whose rising edge failed it, counted from the end of reset
    /// as environments and the lockstep runner count (the first cycle after
    /// [`Dut::reset`] is 0; [`Rtl::cycle`] counts the reset cycles too).
    pub cycle: u64,
    /// The RTL configuration (top or variant name) it failed in.
    pub variant: &'static str,
}

impl fmt::Display for AssertionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "assertion {} failed in {} ({}) at cycle {} ({}:{})",
            self.name, self.scope, self.variant, self.cycle, self.file, self.line
        )
    }
}

thread_local! {
    /// The first assertion failure on this thread not yet taken.
    static FIRST_FAILURE: RefCell<Option<AssertionFailure>> = const { RefCell::new(None) };
}

/// Takes the first assertion failure that any [`Rtl`] ticked on this thread
/// recorded since the last call (later ones stay in each model's
/// [`Rtl::assertion_failures`]).
pub fn take_assertion_failure() -> Option<AssertionFailure> {
    FIRST_FAILURE.with(|f| f.borrow_mut().take())
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
    /// Failures read back from the shim so far, and how many it counted.
    failures: Vec<AssertionFailure>,
    failure_count: u32,
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
            failures: Vec::new(),
            failure_count: 0,
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
        let n = unsafe { (T::SHIM.eval)(self.handle.as_ptr(), time) };
        if n != self.failure_count {
            self.collect_failures(n);
        }
    }

    /// Reads the failures the shim recorded since the last look.
    #[cold]
    fn collect_failures(&mut self, count: u32) {
        self.failure_count = count;
        let mut buf = vec![0u8; 1024];
        let mut idx = self.failures.len() as u32;
        loop {
            // SAFETY: valid handle; `buf` holds `len` bytes.
            let n = unsafe {
                (T::SHIM.assert_get)(
                    self.handle.as_ptr(),
                    idx,
                    buf.as_mut_ptr().cast(),
                    buf.len() as u32,
                )
            };
            let Ok(n) = usize::try_from(n) else { break };
            let text = String::from_utf8_lossy(&buf[..n.min(buf.len() - 1)]).into_owned();
            let mut f = text.split('\t');
            let mut next = || f.next().unwrap_or("").to_string();
            let (name, full_scope, file, line, time) = (next(), next(), next(), next(), next());
            // %m names the assertion itself; its scope is the instance.
            let scope = full_scope
                .strip_suffix(&format!(".{name}"))
                .unwrap_or(&full_scope)
                .to_string();
            let file = Path::new(&file)
                .file_name()
                .map_or(file.clone(), |n| n.to_string_lossy().into_owned());
            let failure = AssertionFailure {
                name,
                scope,
                file,
                line: line.parse().unwrap_or(0),
                // Assertions are disabled in reset: never below RESET_CYCLES.
                cycle: (time.parse::<u64>().unwrap_or(0) / CLOCK_PERIOD_PS)
                    .saturating_sub(RESET_CYCLES),
                variant: T::VARIANT,
            };
            FIRST_FAILURE.with(|first| {
                let mut first = first.borrow_mut();
                if first.is_none() {
                    *first = Some(failure.clone());
                }
            });
            self.failures.push(failure);
            idx += 1;
        }
    }

    /// The assertion failures so far, oldest first (the shim keeps the
    /// first 64; [`Rtl::assertion_failure_count`] counts them all).
    pub fn assertion_failures(&self) -> &[AssertionFailure] {
        &self.failures
    }

    /// How many assertion failures there were (saturating at `u32::MAX`).
    pub fn assertion_failure_count(&self) -> u32 {
        self.failure_count
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
        self.set_clk(false);
        self.apply(inputs);
        self.eval(t);
        self.dump(t);
        self.set_clk(true);
        self.eval(t + half);
        self.dump(t + half);
        let out = self.outputs();
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
        self.set_clk(false);
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
            .field("assertion_failures", &self.failure_count)
            .finish()
    }
}

include!(concat!(env!("OUT_DIR"), "/rtl_bindings.rs"));
