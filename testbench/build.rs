//! Build script: Verilator binding of the RTL tops and of their parameter
//! variants.
//!
//! A *unit* is one Verilated configuration: a top of `hw/tops.txt` with its default
//! parameters (unit name = module name), or a [`Variant`] of one (its own
//! name, the module's name and `-G<NAME>=<VALUE>` overrides). For every unit
//! `u` of module `m`:
//! 1. `verilator --cc --trace --assert -O3 --top-module m --prefix V<u> [-G...]` over
//!    all of `hw/rtl/*.sv` (so submodule files are found), into a staging dir;
//!    changed files are then copied into the unit's Mdir `verilated/<u>`,
//!    so that make's timestamps only see real changes (Verilator rewrites
//!    every output whenever any input changed). `verilated/` is in the profile
//!    directory (e.g. `target/debug/verilated`), see
//!    [`verilate::verilated_dir`].
//! 2. `verilator --xml-only` of the same unit (same `-G`s) gives the port list:
//!    name, direction and (resolved) width of every port, and the module's
//!    parameters as resolved. Nothing per port is written by hand anywhere.
//!    Every override must show up as the resolved value of a parameter (not a
//!    localparam) of that name.
//! 3. From it, generate `shim_<u>.cpp` (the `extern "C"` side; the
//!    port-independent half is `csrc/rtl_shim.h`) and the Rust side
//!    (`binding.rs`, concatenated into `$OUT_DIR/rtl_bindings.rs`, which
//!    `src/rtl.rs` includes). The Rust side uses the *module's* model types
//!    `rnic_model::<m>::{<M>In, <M>Out}` and `NAME = "<m>"` (a variant is the
//!    same block: same ports, same VCD scopes), and asserts at compile time
//!    that each RTL port is a field of the same name and width in `In` (for
//!    inputs) or `Out` (outputs) and that the field counts match. The marker
//!    type is `<U>Top` and the binding `Rtl<U>` (`U` = CamelCase of `u`).
//! 4. `make -f V<u>.mk`, through a two-line wrapper makefile, builds
//!    `librtl_<u>.a` out of `V<u>__ALL.a` and `shim_<u>.o` with
//!    Verilator's own rules and flags (verilated.mk's `%.o` and `%.a` rules).
//!    One top-level `make -j2` runs these sub-makes and the runtime's, so they
//!    share two job slots.
//!
//! The Verilator runtime (verilated.o, verilated_vcd_c.o, verilated_threads.o
//! in 5.006: whatever `VM_GLOBAL_FAST`/`VM_GLOBAL_SLOW` list) is built once,
//! into `libverilated_rt.a`, instead of once per unit: it does not depend on
//! the design, only on the Verilator install and the switches (`VM_TRACE`, ...)
//! that are the same for every unit. It gets its own makefile whose switches
//! are copied from the first top's generated makefiles.
//!
//! Caching: every Mdir has a stamp holding a hash of the Verilator version, the
//! flags, this script and every file in `build/`, `csrc/`, the packages and
//! includes of `hw/rtl/`, the files of the modules the unit instantiates (its
//! `deps`, from the XML's `module_files` of its last verilation) and the
//! unit's own name, module and overrides. When it matches, the unit is not
//! verilated nor made again. When it does not, make still only rebuilds what
//! changed.
//!
//! Environment: `VERILATOR` overrides the verilator executable (default: the
//! one on `PATH`); `RNIC_RTL_DIR` the RTL directory (default `hw/rtl`). The
//! feature `coverage` instruments every unit (see [`COVERAGE_FLAGS`]).
//!
//! This file holds the tables and `main`; the work is in `build/`: [`units`]
//! (checking the tables), [`verilate`] (stamps, verilator, staging), [`xml`]
//! (ports and parameters from the XML), [`gen_cpp`] and [`gen_rust`] (the two
//! sides of the binding), [`make`] (the runtime's makefile, running make) and
//! [`util`].

#[path = "build/gen_cpp.rs"]
mod gen_cpp;
#[path = "build/gen_rust.rs"]
mod gen_rust;
#[path = "build/make.rs"]
mod make;
#[path = "build/units.rs"]
mod units;
#[path = "build/util.rs"]
mod util;
#[path = "build/verilate.rs"]
mod verilate;
#[path = "build/xml.rs"]
mod xml;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use make::{make, prepare_runtime};
use units::units;
use util::{env, fail, files_in, mkdir, write_if_changed, Fnv};
use verilate::{is_module_file, prepare_unit, verilated_dir, verilator_version, Built, Ctx};

/// The Verilated tops: the one list `hw/tops.txt` (one name a line, `#`
/// comments), which lint.sh reads too. Adding a block is a line there,
/// provided the model has `rnic_model::<top>::{<Top>In, <Top>Out}`.
fn read_tops(path: &std::path::Path) -> Vec<&'static str> {
    let text = fs::read_to_string(path)
        .unwrap_or_else(|e| fail(format!("the list of RTL tops {}: {e}", path.display())));
    let tops: Vec<&'static str> = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| &*Box::leak(l.to_string().into_boxed_str()))
        .collect();
    if tops.is_empty() {
        fail(format!("{} lists no top", path.display()));
    }
    tops
}

/// A parameter variant of a top of `hw/tops.txt`: the module `top` verilated with
/// `-G<NAME>=<VALUE>` for each of `params`, as its own model `V<name>` in its
/// own Mdir and library, bound as `Rtl<Name>` (CamelCase of `name`) with the
/// model types and `NAME` of `top`. Values are Verilog constants as `-G` takes
/// them.
struct Variant {
    name: &'static str,
    top: &'static str,
    params: &'static [(&'static str, &'static str)],
}

/// The parameter variants. Adding one is a one-entry change here; its ports
/// must still match the model's structs (the same compile-time checks apply).
const VARIANTS: &[Variant] = &[
    Variant {
        name: "dma_rd_t64",
        top: "dma_rd",
        params: &[("TAGS", "64"), ("BUF_LINES", "512")],
    },
    Variant {
        name: "dma_rd_t128",
        top: "dma_rd",
        params: &[("TAGS", "128"), ("BUF_LINES", "1024")],
    },
    Variant {
        name: "dma_rd_t256",
        top: "dma_rd",
        params: &[("TAGS", "256"), ("BUF_LINES", "4096")],
    },
    // A link rate that does not divide 512: rounding of every pause.
    Variant {
        name: "pfc_b7",
        top: "pfc",
        params: &[("BITS_PER_CYCLE", "7")],
    },
    // Short timer and RNR units: many timeouts and RNR waits per test run.
    Variant {
        name: "retx_ctl_fast",
        top: "retx_ctl",
        params: &[("T_UNIT", "4"), ("R_UNIT", "3")],
    },
];

/// Names that the build script uses itself, in `verilated/` or `build.mk`.
const RESERVED: &[&str] = &["runtime", "stage", "all"];

/// Verilator flags common to every top (warnings are not waived: any warning
/// fails the build). `--assert` compiles the RTL's assertions
/// (`hw/rtl/rnic_assert.svh`); a failure reaches the shim's
/// `rnic_assert_fail` and fails the run (see `src/rtl.rs`).
const VERILATOR_FLAGS: &[&str] = &["--cc", "--trace", "--assert", "-O3"];

/// Added to [`VERILATOR_FLAGS`] when the crate's `coverage` feature is on
/// (`scripts/coverage.sh`): line coverage (every statement block and every
/// branch of an `if` or `case`, which is how 5.006 counts branches) and toggle
/// coverage of every signal bit. These units live in `verilated-cov/`, beside
/// the uninstrumented ones, so switching the feature rebuilds nothing.
/// `csrc/rtl_shim.h` collects a harness's counts when it is dropped.
const COVERAGE_FLAGS: &[&str] = &["--coverage-line", "--coverage-toggle"];

/// Extra make variables. `OPT_FAST` compiles the hot eval code (and the shim);
/// verilated.mk's default is `-Os`, we take `-O2` for simulation speed at a
/// small cost in compile time. `OPT_SLOW` (init code, default none) and
/// `OPT_GLOBAL` (runtime, default `-Os`) keep verilated.mk's defaults.
const MAKE_VARS: &[&str] = &["OPT_FAST=-O2"];

/// The machine has 2 cores.
const MAKE_JOBS: &str = "-j2";

/// Libraries the Verilator runtime needs besides itself (verilated.mk's
/// `CFG_LDLIBS_THREADS` is `-pthread -lpthread -latomic`; g++ adds libstdc++).
const SYSTEM_LIBS: &[&str] = &["stdc++", "pthread", "atomic"];

fn main() {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env("OUT_DIR"));
    // RNIC_RTL_DIR: another copy of the RTL (rnic-mutate builds each mutant
    // from one, in its own target directory).
    println!("cargo:rerun-if-env-changed=RNIC_RTL_DIR");
    let rtl_dir = std::env::var_os("RNIC_RTL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../hw/rtl"));
    let rtl_dir = rtl_dir
        .canonicalize()
        .unwrap_or_else(|e| fail(format!("RTL directory {}: {e}", rtl_dir.display())));

    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build");
    println!("cargo:rerun-if-changed=csrc");
    println!("cargo:rerun-if-changed={}", rtl_dir.display());
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");
    let coverage = std::env::var_os("CARGO_FEATURE_COVERAGE").is_some();
    let flags: Vec<&str> = VERILATOR_FLAGS
        .iter()
        .chain(if coverage { COVERAGE_FLAGS } else { &[] })
        .copied()
        .collect();

    let tops_txt = manifest.join("../hw/tops.txt");
    println!("cargo:rerun-if-changed={}", tops_txt.display());
    let tops = read_tops(&tops_txt);

    let verilator = std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
    let version = verilator_version(&verilator);

    // Every file of hw/rtl goes into the hash (also `include`d ones); the
    // *.sv files are the sources.
    let rtl_files = files_in(&rtl_dir);
    let mut sources: Vec<PathBuf> = rtl_files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "sv"))
        .cloned()
        .collect();
    // Packages (`*_pkg.sv`) first: Verilator wants a package declared before
    // a module refers to it. The sort is stable, so the rest stays in name
    // order.
    sources.sort_by_key(|p| !p.to_string_lossy().ends_with("_pkg.sv"));
    if sources.is_empty() {
        fail(format!("no *.sv files in {}", rtl_dir.display()));
    }

    let mut h = Fnv::new();
    h.field(version.as_bytes());
    for f in flags.iter().chain(MAKE_VARS) {
        h.field(f.as_bytes());
    }
    // The script itself: build.rs and its modules in build/.
    let script =
        std::iter::once(manifest.join("build.rs")).chain(files_in(&manifest.join("build")));
    for f in script {
        h.field(f.file_name().unwrap().as_encoded_bytes());
        h.field(&fs::read(&f).unwrap_or_else(|e| fail(format!("reading {}: {e}", f.display()))));
    }
    let csrc = manifest.join("csrc");
    for f in files_in(&csrc) {
        h.field(f.file_name().unwrap().as_encoded_bytes());
        h.field(&fs::read(&f).unwrap_or_else(|e| fail(format!("reading {}: {e}", f.display()))));
    }
    // Packages and includes go into every unit's stamp; a module's file only
    // into the stamps of the units that instantiate it (see `prepare_unit`),
    // so editing one block re-verilates its own units and rnic_top, not all.
    for f in &rtl_files {
        println!("cargo:rerun-if-changed={}", f.display());
        if is_module_file(f) {
            continue;
        }
        h.field(f.file_name().unwrap().as_encoded_bytes());
        h.field(&fs::read(f).unwrap_or_else(|e| fail(format!("reading {}: {e}", f.display()))));
    }
    let src_hash = h.hex();

    let vdir = verilated_dir(&out_dir, coverage);
    mkdir(&vdir);
    // Several build-script runs (profiles, clippy) may share `vdir`.
    let lock_path = vdir.join(".lock");
    let lock = fs::File::create(&lock_path)
        .unwrap_or_else(|e| fail(format!("creating {}: {e}", lock_path.display())));
    lock.lock()
        .unwrap_or_else(|e| fail(format!("locking {}: {e}", lock_path.display())));
    let mut bindings = String::from(
        "// Generated by testbench/build.rs from the Verilator XML of each top and variant in hw/rtl. Do not edit.\n",
    );
    let built: Vec<Built> = units(&tops)
        .iter()
        .map(|unit| {
            prepare_unit(&Ctx {
                verilator: &verilator,
                flags: &flags,
                rtl_dir: &rtl_dir,
                sources: &sources,
                vdir: &vdir,
                src_hash: &src_hash,
                unit,
            })
        })
        .collect();
    let runtime_dir = prepare_runtime(&vdir, &built[0].mdir, &built[0].name);

    // One make for everything, so that the runtime and all stale units share
    // MAKE_JOBS job slots (make's jobserver) instead of building one by one.
    let mut mk = String::from(
        "# Generated by testbench/build.rs: builds the Verilator runtime and the stale tops and variants.\n",
    );
    let mut goals = vec!["runtime".to_string()];
    let mut rules =
        "runtime:\n\t+$(MAKE) -C runtime -f Vruntime.mk libverilated_rt.a\n".to_string();
    for b in built.iter().filter(|b| b.stale) {
        let u = &b.name;
        goals.push(u.clone());
        writeln!(rules, "{u}:\n\t+$(MAKE) -C {u} -f rtl_{u}.mk librtl_{u}.a").unwrap();
    }
    writeln!(mk, ".PHONY: all {0}\nall: {0}\n{rules}", goals.join(" ")).unwrap();
    write_if_changed(&vdir.join("build.mk"), &mk);
    make(&vdir, "build.mk", "all");

    for b in &built {
        bindings.push_str(&b.rust);
        if b.stale {
            write_if_changed(&b.mdir.join("binding.rs"), &b.rust);
            let stamp = b.mdir.join("stamp");
            fs::write(&stamp, &b.hash)
                .unwrap_or_else(|e| fail(format!("{}: {e}", stamp.display())));
        }
    }
    write_if_changed(&out_dir.join("rtl_bindings.rs"), &bindings);

    for b in &built {
        println!("cargo:rustc-link-search=native={}", b.mdir.display());
        println!("cargo:rustc-link-lib=static=rtl_{}", b.name);
    }
    println!("cargo:rustc-link-search=native={}", runtime_dir.display());
    println!("cargo:rustc-link-lib=static=verilated_rt");
    for lib in SYSTEM_LIBS {
        println!("cargo:rustc-link-lib=dylib={lib}");
    }
}
