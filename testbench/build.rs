//! Build script: Verilator binding of the RTL tops and of their parameter
//! variants.
//!
//! A *unit* is one Verilated configuration: a top of [`TOPS`] with its default
//! parameters (unit name = module name), or a [`Variant`] of one (its own
//! name, the module's name and `-G<NAME>=<VALUE>` overrides). For every unit
//! `u` of module `m`:
//! 1. `verilator --cc --trace -O3 --top-module m --prefix V<u> [-G...]` over
//!    all of `hw/rtl/*.sv` (so submodule files are found), into a staging dir;
//!    changed files are then copied into the unit's Mdir `verilated/<u>`,
//!    so that make's timestamps only see real changes (Verilator rewrites
//!    every output whenever any input changed). `verilated/` is in the profile
//!    directory (e.g. `target/debug/verilated`), see [`verilated_dir`].
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
//! flags, this script, `csrc/`, every file in `hw/rtl/` and the unit's own
//! name, module and overrides. When it matches, the unit is not verilated nor
//! made again. When it does not, make still only rebuilds what changed.
//!
//! Environment: `VERILATOR` overrides the verilator executable (default: the
//! one on `PATH`).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The Verilated tops. Adding a block is a one-line change here, provided the
/// model has `rnic_model::<top>::{<Top>In, <Top>Out}`.
const TOPS: &[&str] = &["dma_rd", "dma_wr"];

/// A parameter variant of a top of [`TOPS`]: the module `top` verilated with
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
];

/// Names that the build script uses itself, in `verilated/` or `build.mk`.
const RESERVED: &[&str] = &["runtime", "stage", "all"];

/// Verilator flags common to every top (warnings are not waived: any warning
/// fails the build).
const VERILATOR_FLAGS: &[&str] = &["--cc", "--trace", "-O3"];

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

const SHIM_HEADER: &str = include_str!("csrc/rtl_shim.h");
const THIS_SCRIPT: &str = include_str!("build.rs");

const MISSING_VERILATOR: &str =
    "verilator not found: install it with `sudo apt-get install verilator` (Debian 5.006 is supported)";

fn main() {
    let manifest = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env("OUT_DIR"));
    let rtl_dir = manifest.join("../hw/rtl");
    let rtl_dir = rtl_dir
        .canonicalize()
        .unwrap_or_else(|e| fail(format!("RTL directory {}: {e}", rtl_dir.display())));

    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=csrc");
    println!("cargo:rerun-if-changed={}", rtl_dir.display());
    println!("cargo:rerun-if-env-changed=VERILATOR");
    println!("cargo:rerun-if-env-changed=VERILATOR_ROOT");

    // hw/tops.txt lists the tops for the other RTL flows (lint, synthesis);
    // say so when it and TOPS disagree.
    let tops_txt = manifest.join("../hw/tops.txt");
    if let Ok(text) = fs::read_to_string(&tops_txt) {
        println!("cargo:rerun-if-changed={}", tops_txt.display());
        let listed: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        for t in listed.iter().filter(|t| !TOPS.contains(t)) {
            println!(
                "cargo:warning=hw/tops.txt lists `{t}`, which TOPS in testbench/build.rs lacks"
            );
        }
        for t in TOPS.iter().filter(|t| !listed.contains(t)) {
            println!("cargo:warning=TOPS in testbench/build.rs has `{t}`, which hw/tops.txt lacks");
        }
    }

    let verilator = std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".into());
    let version = verilator_version(&verilator);

    // Every file of hw/rtl goes into the hash (also `include`d ones); the
    // *.sv files are the sources.
    let rtl_files = files_in(&rtl_dir);
    let sources: Vec<PathBuf> = rtl_files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "sv"))
        .cloned()
        .collect();
    if sources.is_empty() {
        fail(format!("no *.sv files in {}", rtl_dir.display()));
    }

    let mut h = Fnv::new();
    h.field(version.as_bytes());
    for f in VERILATOR_FLAGS.iter().chain(MAKE_VARS) {
        h.field(f.as_bytes());
    }
    h.field(THIS_SCRIPT.as_bytes());
    let csrc = manifest.join("csrc");
    for f in files_in(&csrc) {
        h.field(f.file_name().unwrap().as_encoded_bytes());
        h.field(&fs::read(&f).unwrap_or_else(|e| fail(format!("reading {}: {e}", f.display()))));
    }
    for f in &rtl_files {
        println!("cargo:rerun-if-changed={}", f.display());
        h.field(f.file_name().unwrap().as_encoded_bytes());
        h.field(&fs::read(f).unwrap_or_else(|e| fail(format!("reading {}: {e}", f.display()))));
    }
    let src_hash = h.hex();

    let vdir = verilated_dir(&out_dir);
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
    let built: Vec<Built> = units()
        .iter()
        .map(|unit| {
            prepare_unit(&Ctx {
                verilator: &verilator,
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

/// Every unit: the tops of [`TOPS`] (their own name, no overrides), then the
/// [`VARIANTS`], checked: names of `[a-z][a-z0-9_]*`, distinct (also in CamelCase),
/// not reserved; a variant's top in [`TOPS`]; parameters named by identifiers,
/// each at most once, with non-empty values.
fn units() -> Vec<Variant> {
    let mut units: Vec<Variant> = TOPS
        .iter()
        .map(|&top| Variant {
            name: top,
            top,
            params: &[],
        })
        .collect();
    for v in VARIANTS {
        if !TOPS.contains(&v.top) {
            fail(format!(
                "variant {:?}: its top {:?} is not in TOPS (testbench/build.rs)",
                v.name, v.top
            ));
        }
        if v.params.is_empty() {
            fail(format!(
                "variant {:?} overrides no parameter: it would be `{}` itself",
                v.name, v.top
            ));
        }
        for (i, (name, value)) in v.params.iter().enumerate() {
            if !is_identifier(name) {
                fail(format!(
                    "variant {:?}: parameter name {name:?} is not an identifier",
                    v.name
                ));
            }
            if v.params[..i].iter().any(|(n, _)| n == name) {
                fail(format!(
                    "variant {:?}: parameter {name} is given twice",
                    v.name
                ));
            }
            if value.trim().is_empty() || value.chars().any(char::is_control) {
                fail(format!(
                    "variant {:?}: parameter {name} has the value {value:?}; a Verilog constant is needed",
                    v.name
                ));
            }
        }
        units.push(Variant {
            name: v.name,
            top: v.top,
            params: v.params,
        });
    }
    for (i, u) in units.iter().enumerate() {
        let name = u.name;
        if !name.starts_with(|c: char| c.is_ascii_lowercase())
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            fail(format!(
                "top or variant name {name:?}: only [a-z][a-z0-9_]* is supported"
            ));
        }
        if RESERVED.contains(&name) {
            fail(format!("name {name:?} is reserved by the build script"));
        }
        if let Some(o) = units[..i]
            .iter()
            .find(|o| o.name == name || camel(o.name) == camel(name))
        {
            fail(format!(
                "top or variant names {:?} and {name:?} collide (Rust name Rtl{})",
                o.name,
                camel(name)
            ));
        }
    }
    units
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Where the Verilator outputs are built and cached: `verilated/` in the
/// profile directory (`target/debug/verilated`), shared by every build-script
/// run of that profile directory (dev, test, check, clippy each have their own
/// OUT_DIR, and would otherwise each verilate and compile everything), or in
/// OUT_DIR when the layout is not `<profile>/build/<pkg>-<hash>/out`.
fn verilated_dir(out_dir: &Path) -> PathBuf {
    let mut up = out_dir.ancestors();
    match (up.nth(2), up.next()) {
        (Some(build), Some(profile)) if build.file_name().is_some_and(|n| n == "build") => {
            profile.join("verilated")
        }
        _ => out_dir.join("verilated"),
    }
}

struct Ctx<'a> {
    verilator: &'a str,
    rtl_dir: &'a Path,
    sources: &'a [PathBuf],
    vdir: &'a Path,
    src_hash: &'a str,
    unit: &'a Variant,
}

struct Built {
    /// The unit's name: Mdir, `V<name>`, `librtl_<name>.a`.
    name: String,
    mdir: PathBuf,
    rust: String,
    /// What the stamp holds once the unit is built.
    hash: String,
    /// Verilated anew; still to be made and stamped.
    stale: bool,
}

impl Variant {
    /// `-G<NAME>=<VALUE>` for each override.
    fn g_args(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|(n, v)| format!("-G{n}={v}"))
            .collect()
    }

    /// For generated messages (plain identifiers): `dma_rd`, or
    /// `dma_rd_t128 (dma_rd)`.
    fn who(&self) -> String {
        if self.name == self.top {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.top)
        }
    }

    /// For messages: `dma_rd`, or `dma_rd_t128 (dma_rd, TAGS=128 BUF_LINES=1024)`.
    fn label(&self) -> String {
        if self.params.is_empty() && self.name == self.top {
            return self.name.to_string();
        }
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!("{} ({}, {})", self.name, self.top, params.join(" "))
    }
}

/// Verilates a unit and generates its shim, wrapper makefile and Rust side,
/// unless its stamp says that nothing changed since the last build.
fn prepare_unit(c: &Ctx) -> Built {
    let u = c.unit;
    let (name, top) = (u.name, u.top);
    let label = u.label();
    let mdir = c.vdir.join(name);
    let stage = c.vdir.join("stage").join(name);
    let stamp = mdir.join("stamp");
    let lib = mdir.join(format!("librtl_{name}.a"));
    let binding = mdir.join("binding.rs");
    let prefix = format!("V{name}");

    let mut h = Fnv::new();
    h.field(c.src_hash.as_bytes());
    h.field(name.as_bytes());
    h.field(top.as_bytes());
    for (n, v) in u.params {
        h.field(n.as_bytes());
        h.field(v.as_bytes());
    }
    let hash = h.hex();

    if fs::read_to_string(&stamp).ok().as_deref() == Some(hash.as_str()) && lib.is_file() {
        if let Ok(rust) = fs::read_to_string(&binding) {
            return Built {
                name: name.into(),
                mdir,
                rust,
                hash,
                stale: false,
            };
        }
    }
    let _ = fs::remove_file(&stamp);
    mkdir(&mdir);
    mkdir(&stage);

    // 1. Verilate into the staging dir, then copy what changed into the Mdir.
    let mut cmd = Command::new(c.verilator);
    cmd.args(VERILATOR_FLAGS)
        .args(["--top-module", top, "--prefix", &prefix, "--Mdir"])
        .arg(&stage)
        .args(u.g_args())
        .arg(format!("-I{}", c.rtl_dir.display()))
        .args(c.sources);
    run(&mut cmd, &format!("verilator ({label})"));
    sync_generated(&stage, &mdir, &prefix);

    // 2. Port list and parameters from the XML.
    let xml_dir = stage.join("xml");
    let xml_path = xml_dir.join(format!("{prefix}.xml"));
    let mut cmd = Command::new(c.verilator);
    cmd.args([
        "--xml-only",
        "--top-module",
        top,
        "--prefix",
        &prefix,
        "--Mdir",
    ])
    .arg(&xml_dir)
    .arg("--xml-output")
    .arg(&xml_path)
    .args(u.g_args())
    .arg(format!("-I{}", c.rtl_dir.display()))
    .args(c.sources);
    run(&mut cmd, &format!("verilator --xml-only ({label})"));
    let xml = fs::read_to_string(&xml_path)
        .unwrap_or_else(|e| fail(format!("reading {}: {e}", xml_path.display())));
    let (ports, params) = parse_top(&xml, top, &label);
    check_overrides(u, &params, &label);

    // 3. Generated C++ and Rust.
    write_if_changed(&mdir.join("rtl_shim.h"), SHIM_HEADER);
    write_if_changed(
        &mdir.join(format!("shim_{name}.cpp")),
        &gen_shim(name, &label, &u.who(), &ports),
    );
    let wrapper = format!(
        "# Generated by testbench/build.rs: Verilator's makefile plus one archive of model and shim.\n\
         include {prefix}.mk\n\
         librtl_{name}.a: {prefix}__ALL.a shim_{name}.o\n"
    );
    write_if_changed(&mdir.join(format!("rtl_{name}.mk")), &wrapper);
    Built {
        name: name.into(),
        mdir,
        rust: gen_rust(u, &label, &ports, &params),
        hash,
        stale: true,
    }
}

/// Copies Verilator's outputs from `stage` to `mdir` where their contents
/// differ. Generated files that a new verilation no longer produces are
/// removed together with make's objects and dependency files (a stale `.d`
/// naming a deleted header would stop make).
fn sync_generated(stage: &Path, mdir: &Path, prefix: &str) {
    let is_generated = |name: &str| {
        name.starts_with(prefix)
            && !name.ends_with("__ver.d")
            && !name.ends_with("__verFiles.dat")
            && !name.ends_with("__ALL.cpp")
            && (name.ends_with(".cpp") || name.ends_with(".h") || name.ends_with(".mk"))
    };
    let list = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap_or_else(|e| fail(format!("reading {}: {e}", dir.display())))
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| is_generated(n))
            .collect();
        v.sort();
        v
    };
    let new = list(stage);
    let stale: Vec<String> = list(mdir)
        .into_iter()
        .filter(|n| !new.contains(n))
        .collect();
    if !stale.is_empty() {
        for entry in fs::read_dir(mdir).into_iter().flatten().flatten() {
            let name = entry.file_name().into_string().unwrap_or_default();
            if stale.contains(&name)
                || name.ends_with(".o")
                || name.ends_with(".d")
                || name.ends_with(".a")
                || name.ends_with("__ALL.cpp")
            {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    for name in new {
        let data = fs::read(stage.join(&name))
            .unwrap_or_else(|e| fail(format!("reading {}: {e}", stage.join(&name).display())));
        write_bytes_if_changed(&mdir.join(&name), &data);
    }
}

/// Writes the makefile of `libverilated_rt.a`, in its own directory, with the
/// first top's switches (identical for every top: same Verilator flags).
fn prepare_runtime(vdir: &Path, first_mdir: &Path, first_top: &str) -> PathBuf {
    let dir = vdir.join("runtime");
    mkdir(&dir);
    let read = |name: String| {
        let p = first_mdir.join(name);
        fs::read_to_string(&p).unwrap_or_else(|e| fail(format!("reading {}: {e}", p.display())))
    };
    let mut vars = parse_mk(&read(format!("V{first_top}.mk")));
    vars.extend(parse_mk(&read(format!("V{first_top}_classes.mk"))));
    let mut mk = String::from(
        "# Generated by testbench/build.rs: the Verilator runtime, with the switches of the\n\
         # tops' generated makefiles.\n",
    );
    for (name, value) in &vars {
        // Everything but the design's own classes and names.
        if name.starts_with("VM_CLASSES_")
            || name.starts_with("VM_SUPPORT_")
            || name == "VM_USER_CLASSES"
            || name == "VM_USER_DIR"
            || name == "VM_PREFIX"
            || name == "VM_MODPREFIX"
        {
            continue;
        }
        writeln!(mk, "{name} = {}", value.join(" ")).unwrap();
    }
    mk.push_str(
        "VM_PREFIX = Vruntime\n\
         VM_MODPREFIX = Vruntime\n\
         include $(VERILATOR_ROOT)/include/verilated.mk\n\
         libverilated_rt.a: $(VK_GLOBAL_OBJS)\n",
    );
    if !vars.iter().any(|(n, _)| n == "VERILATOR_ROOT") {
        fail(format!(
            "V{first_top}.mk sets no VERILATOR_ROOT: unexpected Verilator makefile layout"
        ));
    }
    write_if_changed(&dir.join("Vruntime.mk"), &mk);
    dir
}

/// `NAME = value` and `NAME += \` continued lists of a Verilator makefile,
/// in order, `+=` lists merged into their variable.
fn parse_mk(text: &str) -> Vec<(String, Vec<String>)> {
    let mut vars: Vec<(String, Vec<String>)> = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let line = line.trim();
        if line.starts_with('#') || line.starts_with("include") {
            continue;
        }
        let (name, append, rest) = if let Some((n, r)) = line.split_once("+=") {
            (n.trim(), true, r.trim())
        } else if let Some((n, r)) = line.split_once('=') {
            if n.ends_with('?') || n.ends_with(':') {
                continue;
            }
            (n.trim(), false, r.trim())
        } else {
            continue;
        };
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue;
        }
        let mut values: Vec<String> = Vec::new();
        let mut cont = rest.ends_with('\\');
        values.extend(
            rest.trim_end_matches('\\')
                .split_whitespace()
                .map(String::from),
        );
        while cont {
            let Some(l) = lines.next() else { break };
            let l = l.trim();
            cont = l.ends_with('\\');
            values.extend(
                l.trim_end_matches('\\')
                    .split_whitespace()
                    .map(String::from),
            );
        }
        match vars.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) if append => v.extend(values),
            Some((_, v)) => *v = values,
            None => vars.push((name.to_string(), values)),
        }
    }
    vars
}

fn make(dir: &Path, makefile: &str, target: &str) {
    let mut cmd = Command::new("make");
    cmd.arg("-C")
        .arg(dir)
        .args(["-f", makefile, MAKE_JOBS])
        .args(MAKE_VARS)
        .arg(target)
        // A make that started cargo must not hand its jobserver to ours.
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL");
    run(&mut cmd, &format!("make {target} in {}", dir.display()));
}

// ---------------------------------------------------------------------------
// Ports and parameters from the XML.

#[derive(Debug, Clone, PartialEq, Eq)]
struct Port {
    name: String,
    input: bool,
    width: u32,
}

/// A parameter (not a localparam) of the top module as Verilator resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Param {
    name: String,
    /// Decimal for an integer, else the constant as the XML writes it.
    value: String,
    /// Width and bits of an integer constant of up to 64 bits.
    bits: Option<(u32, u64)>,
}

/// The ports but `clk` and `rst` of module `module_name`, in declaration
/// order, and its parameters; `top` names the unit in messages.
fn parse_top(xml: &str, module_name: &str, top: &str) -> (Vec<Port>, Vec<Param>) {
    let doc = roxmltree::Document::parse(xml)
        .unwrap_or_else(|e| fail(format!("{top}: cannot parse Verilator's XML: {e}")));
    let types: HashMap<&str, roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("typetable"))
        .flat_map(|t| t.descendants())
        .filter(|n| n.is_element())
        .filter_map(|n| n.attribute("id").map(|id| (id, n)))
        .collect();
    let module = doc
        .descendants()
        .find(|n| n.has_tag_name("module") && n.attribute("topModule") == Some("1"))
        .unwrap_or_else(|| fail(format!("{top}: Verilator's XML has no top module")));
    if module.attribute("name") != Some(module_name) {
        fail(format!(
            "{top}: Verilator's XML names the top module {:?}",
            module.attribute("name")
        ));
    }
    let mut params = Vec::new();
    for var in module
        .children()
        .filter(|n| n.has_tag_name("var") && n.attribute("param") == Some("true"))
    {
        let name = var.attribute("name").unwrap_or_default();
        // Parameters without a constant value (none in this design) are left out.
        let Some(text) = var
            .children()
            .find(|n| n.has_tag_name("const"))
            .and_then(|n| n.attribute("name"))
        else {
            continue;
        };
        let signed_type = matches!(
            var.attribute("vartype"),
            Some("int" | "integer" | "shortint" | "longint" | "byte")
        );
        let (value, bits) = match const_bits(text) {
            Some((width, signed, n)) => {
                let w = width.unwrap_or(64);
                let v = if signed || signed_type {
                    sign_extend(n, w).to_string()
                } else {
                    n.to_string()
                };
                (v, Some((w, n)))
            }
            None => (text.to_string(), None),
        };
        params.push(Param {
            name: name.to_string(),
            value,
            bits,
        });
    }
    let mut pins: Vec<(u32, Port)> = Vec::new();
    for var in module.children().filter(|n| n.has_tag_name("var")) {
        let Some(dir) = var.attribute("dir") else {
            continue;
        };
        let name = var.attribute("name").unwrap_or_default().to_string();
        let input = match dir {
            "input" => true,
            "output" => false,
            other => fail(format!(
                "{top}: port {name} has direction {other}; only input and output are supported"
            )),
        };
        if name.is_empty()
            || name.as_bytes()[0].is_ascii_digit()
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            fail(format!(
                "{top}: port {name:?} is not a plain identifier; not supported"
            ));
        }
        let dtype = var
            .attribute("dtype_id")
            .unwrap_or_else(|| fail(format!("{top}: port {name} has no dtype_id")));
        let width = dtype_width(&types, dtype, top, &name, 0);
        let pin: u32 = var
            .attribute("pinIndex")
            .and_then(|p| p.parse().ok())
            .unwrap_or(u32::MAX);
        pins.push((pin, Port { name, input, width }));
    }
    pins.sort_by_key(|(pin, _)| *pin);
    let mut ports: Vec<Port> = pins.into_iter().map(|(_, p)| p).collect();
    for special in ["clk", "rst"] {
        match ports.iter().position(|p| p.name == special) {
            Some(i) if ports[i].input && ports[i].width == 1 => {
                ports.remove(i);
            }
            _ => fail(format!(
                "{top}: the binding drives a 1-bit input `{special}`, which the RTL lacks"
            )),
        }
    }
    (ports, params)
}

/// Each override of `u` must be a parameter of the module whose resolved
/// value is the override's (compared as bits when both are integers).
fn check_overrides(u: &Variant, params: &[Param], top: &str) {
    for (name, value) in u.params {
        let Some(p) = params.iter().find(|p| p.name == *name) else {
            fail(format!(
                "{top}: `{}` has no parameter {name} (localparams cannot be overridden)",
                u.top
            ))
        };
        if let (Some((w, got)), Some((_, _, want))) = (p.bits, const_bits(value)) {
            let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            if got & mask != want & mask {
                fail(format!(
                    "{top}: Verilator resolved parameter {name} to {}, not to the override {value}",
                    p.value
                ));
            }
        }
    }
}

/// Width in bits of dtype `id`: basic types with left/right, packed arrays,
/// packed structs/unions, enums and typedef references.
fn dtype_width(
    types: &HashMap<&str, roxmltree::Node>,
    id: &str,
    top: &str,
    port: &str,
    depth: u32,
) -> u32 {
    if depth > 64 {
        fail(format!("{top}: port {port}: dtype nesting too deep"));
    }
    let node = types.get(id).unwrap_or_else(|| {
        fail(format!(
            "{top}: port {port}: dtype {id} not in the typetable"
        ))
    });
    let sub = |n: &roxmltree::Node| {
        let s = n.attribute("sub_dtype_id").unwrap_or_else(|| {
            fail(format!(
                "{top}: port {port}: {} without sub_dtype_id",
                n.tag_name().name()
            ))
        });
        dtype_width(types, s, top, port, depth + 1)
    };
    let attr_i64 =
        |n: &roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse::<i64>().ok());
    match node.tag_name().name() {
        "basicdtype" => match (attr_i64(node, "left"), attr_i64(node, "right")) {
            (Some(l), Some(r)) => ((l - r).unsigned_abs() + 1) as u32,
            _ => match node.attribute("name").unwrap_or_default() {
                "logic" | "bit" | "reg" | "wire" => 1,
                "byte" => 8,
                "shortint" => 16,
                "int" | "integer" => 32,
                "longint" | "time" => 64,
                other => fail(format!("{top}: port {port}: unsupported basic type {other}")),
            },
        },
        "refdtype" | "enumdtype" | "memberdtype" | "typedefdtype" => sub(node),
        "packarraydtype" => {
            let range = node
                .children()
                .find(|n| n.has_tag_name("range"))
                .unwrap_or_else(|| fail(format!("{top}: port {port}: packed array without range")));
            let bounds: Vec<i64> = range
                .children()
                .filter(|n| n.has_tag_name("const"))
                .map(|n| parse_const(n.attribute("name").unwrap_or_default(), top, port))
                .collect();
            if bounds.len() != 2 {
                fail(format!(
                    "{top}: port {port}: packed array range is not two constants"
                ));
            }
            ((bounds[0] - bounds[1]).unsigned_abs() + 1) as u32 * sub(node)
        }
        "structdtype" | "uniondtype" => {
            if node.attribute("packed") == Some("false") {
                fail(format!("{top}: port {port}: unpacked struct ports are not supported"));
            }
            let members = node
                .children()
                .filter(|n| n.has_tag_name("memberdtype"))
                .map(|m| sub(&m));
            if node.has_tag_name("structdtype") {
                members.sum()
            } else {
                members.max().unwrap_or(0)
            }
        }
        other => fail(format!(
            "{top}: port {port}: type {other} is not supported (only packed types can be ports of the binding)"
        )),
    }
}

/// A Verilator XML constant such as `32'sh1f`, `8'd3` or `5`.
fn parse_const(s: &str, top: &str, port: &str) -> i64 {
    match const_bits(s) {
        Some((Some(w), true, n)) => sign_extend(n, w),
        Some((_, _, n)) => n as i64,
        None => fail(format!("{top}: port {port}: cannot parse constant {s:?}")),
    }
}

/// A Verilog integer constant such as `32'sh1f`, `8'd3`, `'h80` or `-5`, of
/// up to 64 bits: its width when sized, whether it is signed, its bits.
/// `None` for anything else (strings, reals, wider or malformed constants).
fn const_bits(s: &str) -> Option<(Option<u32>, bool, u64)> {
    let s: String = s
        .chars()
        .filter(|&c| c != '_' && !c.is_whitespace())
        .collect();
    let Some((w, v)) = s.split_once('\'') else {
        let n: i64 = s.parse().ok()?;
        return Some((None, true, n as u64));
    };
    let width = match w {
        "" => None,
        w => Some(w.parse::<u32>().ok().filter(|w| (1..=64).contains(w))?),
    };
    let signed = v.starts_with(['s', 'S']);
    let v = v.trim_start_matches(['s', 'S']);
    let radix = match v.chars().next()? {
        'h' | 'H' => 16,
        'd' | 'D' => 10,
        'o' | 'O' => 8,
        'b' | 'B' => 2,
        _ => return None,
    };
    let n = u64::from_str_radix(&v[1..], radix).ok()?;
    match width {
        Some(w) if w < 64 && n >> w != 0 => None,
        _ => Some((width, signed, n)),
    }
}

/// `n` as a `width`-bit two's complement number.
fn sign_extend(n: u64, width: u32) -> i64 {
    if width == 0 || width >= 64 {
        n as i64
    } else {
        let shift = 64 - width;
        ((n << shift) as i64) >> shift
    }
}

// ---------------------------------------------------------------------------
// Code generation.

fn camel(top: &str) -> String {
    top.split('_')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            let first = c.next().unwrap().to_ascii_uppercase();
            std::iter::once(first).chain(c).collect::<String>()
        })
        .collect()
}

/// The C++ side of unit `top` (`label` in comments, `who` in messages).
fn gen_shim(top: &str, label: &str, who: &str, ports: &[Port]) -> String {
    let mut s = String::new();
    let w = &mut s;
    writeln!(
        w,
        "// Generated by testbench/build.rs from `verilator --xml-only` of {label}. Do not edit.\n\
         #include \"rtl_shim.h\"\n\
         #include \"V{top}.h\"\n\
         \n\
         namespace {{\n\
         using Model = V{top};\n\
         using H = rtl_shim::Harness<Model>;\n\
         inline Model& model(void* h) {{ return *static_cast<H*>(h)->model; }}\n\
         }}  // namespace\n"
    )
    .unwrap();
    for p in ports {
        writeln!(
            w,
            "static_assert(rtl_shim::storage_fits<decltype(Model::{n})>({wd}), \
             \"{who}: Verilator does not store port {n} as a {wd}-bit value\");",
            n = p.name,
            wd = p.width
        )
        .unwrap();
    }
    writeln!(w, "\nextern \"C\" {{\n").unwrap();
    writeln!(
        w,
        "void* rtl_{top}_new() {{ return rtl_shim::harness_new<Model>(); }}\n\
         void rtl_{top}_delete(void* h) {{ delete static_cast<H*>(h); }}\n\
         void rtl_{top}_set_clk(void* h, uint8_t v) {{ model(h).clk = v & 1; }}\n\
         void rtl_{top}_set_rst(void* h, uint8_t v) {{ model(h).rst = v & 1; }}\n\
         void rtl_{top}_eval(void* h, uint64_t time) {{\n\
         \x20   static_cast<H*>(h)->ctx->time(time);\n\
         \x20   static_cast<H*>(h)->eval();\n\
         }}\n\
         int rtl_{top}_trace_open(void* h, const char* path) {{\n\
         \x20   return rtl_shim::harness_trace_open<Model>(h, path);\n\
         }}\n\
         void rtl_{top}_trace_dump(void* h, uint64_t time) {{ static_cast<H*>(h)->trace_dump(time); }}\n\
         void rtl_{top}_trace_flush(void* h) {{ static_cast<H*>(h)->trace_flush(); }}\n\
         void rtl_{top}_trace_close(void* h) {{ static_cast<H*>(h)->trace_close(); }}\n"
    )
    .unwrap();
    let inputs: Vec<&Port> = ports.iter().filter(|p| p.input).collect();
    let outputs: Vec<&Port> = ports.iter().filter(|p| !p.input).collect();
    let switch = |w: &mut String, sig: &str, list: &[&Port], call: &str| {
        writeln!(w, "{sig} {{\n    Model& m = model(h);\n    switch (idx) {{").unwrap();
        for (i, p) in list.iter().enumerate() {
            writeln!(
                w,
                "    case {i}: rtl_shim::{call}(m.{n}, words, {wd}); break;",
                n = p.name,
                wd = p.width
            )
            .unwrap();
        }
        writeln!(w, "    default: break;\n    }}\n}}").unwrap();
    };
    switch(
        w,
        &format!("void rtl_{top}_set_input(void* h, uint32_t idx, const uint64_t* words)"),
        &inputs,
        "put",
    );
    switch(
        w,
        &format!("void rtl_{top}_get_input(void* h, uint32_t idx, uint64_t* words)"),
        &inputs,
        "get",
    );
    switch(
        w,
        &format!("void rtl_{top}_get_output(void* h, uint32_t idx, uint64_t* words)"),
        &outputs,
        "get",
    );
    writeln!(w, "\n}}  // extern \"C\"").unwrap();
    s
}

/// The Rust side of unit `u` (`label` in comments): FFI, marker type,
/// `Rtl<..>` alias, `RtlTop` impl and the compile-time port checks against the
/// model of `u.top`.
fn gen_rust(u: &Variant, label: &str, ports: &[Port], params: &[Param]) -> String {
    let (name, top) = (u.name, u.top);
    let cc = camel(name);
    let top_cc = camel(top);
    let model_in = format!("rnic_model::{top}::{top_cc}In");
    let model_out = format!("rnic_model::{top}::{top_cc}Out");
    let inputs: Vec<&Port> = ports.iter().filter(|p| p.input).collect();
    let outputs: Vec<&Port> = ports.iter().filter(|p| !p.input).collect();
    let pairs = |list: &mut dyn Iterator<Item = (&str, &str)>| -> String {
        list.map(|(n, v)| format!("({n:?}, {v:?})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let overrides = pairs(&mut u.params.iter().copied());
    let values = pairs(&mut params.iter().map(|p| (p.name.as_str(), p.value.as_str())));
    let what = if u.params.is_empty() {
        format!("`hw/rtl/{top}.sv`")
    } else {
        let list: Vec<String> = u.params.iter().map(|(n, v)| format!("`{n}={v}`")).collect();
        format!("`hw/rtl/{top}.sv` with {}", list.join(", "))
    };
    let mut s = String::new();
    let w = &mut s;
    writeln!(
        w,
        "\n// ---- {label} ------------------------------------------------------------\n\
         \n\
         #[allow(dead_code, clippy::missing_safety_doc)]\n\
         mod {name}_ffi {{\n\
         \x20   use core::ffi::{{c_char, c_int, c_void}};\n\
         \x20   extern \"C\" {{\n\
         \x20       pub fn rtl_{name}_new() -> *mut c_void;\n\
         \x20       pub fn rtl_{name}_delete(h: *mut c_void);\n\
         \x20       pub fn rtl_{name}_set_input(h: *mut c_void, idx: u32, words: *const u64);\n\
         \x20       pub fn rtl_{name}_get_input(h: *mut c_void, idx: u32, words: *mut u64);\n\
         \x20       pub fn rtl_{name}_get_output(h: *mut c_void, idx: u32, words: *mut u64);\n\
         \x20       pub fn rtl_{name}_set_clk(h: *mut c_void, v: u8);\n\
         \x20       pub fn rtl_{name}_set_rst(h: *mut c_void, v: u8);\n\
         \x20       pub fn rtl_{name}_eval(h: *mut c_void, time: u64);\n\
         \x20       pub fn rtl_{name}_trace_open(h: *mut c_void, path: *const c_char) -> c_int;\n\
         \x20       pub fn rtl_{name}_trace_dump(h: *mut c_void, time: u64);\n\
         \x20       pub fn rtl_{name}_trace_flush(h: *mut c_void);\n\
         \x20       pub fn rtl_{name}_trace_close(h: *mut c_void);\n\
         \x20   }}\n\
         }}\n\
         \n\
         /// Marker of the Verilated {what}; the binding is [`Rtl{cc}`].\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]\n\
         pub struct {cc}Top;\n\
         \n\
         /// The Verilated {what}, implementing [`rnic_model::Dut`] with the\n\
         /// model's [`{model_in}`] and [`{model_out}`].\n\
         pub type Rtl{cc} = Rtl<{cc}Top>;\n\
         \n\
         impl RtlTop for {cc}Top {{\n\
         \x20   type In = {model_in};\n\
         \x20   type Out = {model_out};\n\
         \x20   const NAME: &'static str = \"{top}\";\n\
         \x20   const VARIANT: &'static str = \"{name}\";\n\
         \x20   const PARAMS: &'static [(&'static str, &'static str)] = &[{overrides}];\n\
         \x20   const PARAM_VALUES: &'static [(&'static str, &'static str)] = &[{values}];"
    )
    .unwrap();
    for (konst, list, model) in [
        ("INPUTS", &inputs, &model_in),
        ("OUTPUTS", &outputs, &model_out),
    ] {
        writeln!(w, "    const {konst}: &'static [RtlPort] = &[").unwrap();
        for p in list.iter() {
            writeln!(
                w,
                "        RtlPort {{ name: \"{n}\", width: {wd}, field: field_index(<{model} as rnic_model::Ports>::PORTS, \"{n}\") }},",
                n = p.name,
                wd = p.width
            )
            .unwrap();
        }
        writeln!(w, "    ];").unwrap();
    }
    writeln!(
        w,
        "    const SHIM: Shim = Shim {{\n\
         \x20       new: {name}_ffi::rtl_{name}_new,\n\
         \x20       delete: {name}_ffi::rtl_{name}_delete,\n\
         \x20       set_input: {name}_ffi::rtl_{name}_set_input,\n\
         \x20       get_input: {name}_ffi::rtl_{name}_get_input,\n\
         \x20       get_output: {name}_ffi::rtl_{name}_get_output,\n\
         \x20       set_clk: {name}_ffi::rtl_{name}_set_clk,\n\
         \x20       set_rst: {name}_ffi::rtl_{name}_set_rst,\n\
         \x20       eval: {name}_ffi::rtl_{name}_eval,\n\
         \x20       trace_open: {name}_ffi::rtl_{name}_trace_open,\n\
         \x20       trace_dump: {name}_ffi::rtl_{name}_trace_dump,\n\
         \x20       trace_flush: {name}_ffi::rtl_{name}_trace_flush,\n\
         \x20       trace_close: {name}_ffi::rtl_{name}_trace_close,\n\
         \x20   }};\n\
         }}\n"
    )
    .unwrap();
    // Compile-time agreement of the RTL and the model (the message is a
    // plain literal: the unit's and module's names only).
    let who = u.who();
    for (dir, list, model, st) in [
        ("input", &inputs, &model_in, format!("{top_cc}In")),
        ("output", &outputs, &model_out, format!("{top_cc}Out")),
    ] {
        for p in list.iter() {
            writeln!(
                w,
                "const _: () = assert!(rnic_model::ports::port_width(<{model} as rnic_model::Ports>::PORTS, \"{n}\") == {wd}, \
                 \"{who}: RTL {dir} `{n}` is {wd} bits, but {st} has no field `{n}` of width {wd}\");",
                n = p.name,
                wd = p.width
            )
            .unwrap();
        }
        writeln!(
            w,
            "const _: () = assert!(<{model} as rnic_model::Ports>::PORTS.len() == {len}, \
             \"{who}: the RTL has {len} {dir}s (besides clk/rst), but {st} has another number of fields\");",
            len = list.len()
        )
        .unwrap();
    }
    s
}

// ---------------------------------------------------------------------------
// Helpers.

fn verilator_version(verilator: &str) -> String {
    match Command::new(verilator).arg("--version").output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => fail(format!(
            "`{verilator} --version` failed ({}):\n{}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => fail(MISSING_VERILATOR),
        Err(e) => fail(format!("running `{verilator} --version`: {e}")),
    }
}

fn run(cmd: &mut Command, what: &str) -> Output {
    let out = cmd.output().unwrap_or_else(|e| {
        if e.kind() == ErrorKind::NotFound && what.starts_with("verilator") {
            fail(MISSING_VERILATOR)
        }
        fail(format!("{what}: cannot run {cmd:?}: {e}"))
    });
    if !out.status.success() {
        fail(format!(
            "{what} failed ({}).\ncommand: {cmd:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    out
}

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| fail(format!("{name} is not set (run through cargo)")))
}

/// The regular files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| fail(format!("reading {}: {e}", dir.display())))
        .map(|e| e.unwrap_or_else(|e| fail(format!("reading {}: {e}", dir.display()))))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

fn mkdir(p: &Path) {
    fs::create_dir_all(p).unwrap_or_else(|e| fail(format!("creating {}: {e}", p.display())));
}

fn write_if_changed(path: &Path, text: &str) {
    write_bytes_if_changed(path, text.as_bytes());
}

/// Leaves the file (and its mtime) alone when it already holds `data`.
fn write_bytes_if_changed(path: &Path, data: &[u8]) {
    if fs::read(path).ok().as_deref() == Some(data) {
        return;
    }
    fs::write(path, data).unwrap_or_else(|e| fail(format!("writing {}: {e}", path.display())));
}

fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1);
}

/// FNV-1a, 64 bits: stable across Rust versions, unlike `DefaultHasher`.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, data: &[u8]) {
        for &b in data {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// Length-prefixed, so that field boundaries count.
    fn field(&mut self, data: &[u8]) {
        self.bytes(&(data.len() as u64).to_le_bytes());
        self.bytes(data);
    }
    fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}
