//! Verilating a unit: the stamp that skips unchanged units, verilator into a
//! staging dir and copying what changed into the Mdir, the XML port list, and
//! the unit's generated shim and wrapper makefile; running commands.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::gen_cpp::gen_shim;
use crate::gen_rust::gen_rust;
use crate::util::{fail, mkdir, write_bytes_if_changed, write_if_changed, Fnv};
use crate::xml::{check_overrides, module_files, parse_top};
use crate::Variant;

const SHIM_HEADER: &str = include_str!("../csrc/rtl_shim.h");

const MISSING_VERILATOR: &str =
    "verilator not found: install it with `sudo apt-get install verilator` (Debian 5.006 is supported)";

/// Where the Verilator outputs are built and cached: `verilated/` in the
/// profile directory (`target/debug/verilated`), shared by every build-script
/// run of that profile directory (dev, test, check, clippy each have their own
/// OUT_DIR, and would otherwise each verilate and compile everything), or in
/// OUT_DIR when the layout is not `<profile>/build/<pkg>-<hash>/out`.
/// Coverage builds use `verilated-cov/` instead.
pub fn verilated_dir(out_dir: &Path, coverage: bool) -> PathBuf {
    let name = if coverage {
        "verilated-cov"
    } else {
        "verilated"
    };
    let mut up = out_dir.ancestors();
    match (up.nth(2), up.next()) {
        (Some(build), Some(profile)) if build.file_name().is_some_and(|n| n == "build") => {
            profile.join(name)
        }
        _ => out_dir.join(name),
    }
}

pub struct Ctx<'a> {
    pub verilator: &'a str,
    /// Verilator's flags for every unit (`VERILATOR_FLAGS`, plus
    /// `COVERAGE_FLAGS` in a coverage build).
    pub flags: &'a [&'a str],
    pub rtl_dir: &'a Path,
    pub sources: &'a [PathBuf],
    pub vdir: &'a Path,
    pub src_hash: &'a str,
    pub unit: &'a Variant,
}

pub struct Built {
    /// The unit's name: Mdir, `V<name>`, `librtl_<name>.a`.
    pub name: String,
    pub mdir: PathBuf,
    pub rust: String,
    /// What the stamp holds once the unit is built.
    pub hash: String,
    /// Verilated anew; still to be made and stamped.
    pub stale: bool,
}

/// A file of `hw/rtl` that holds a module (not a package, not an include):
/// it enters the stamps of the units that instantiate it, and only those.
pub fn is_module_file(p: &Path) -> bool {
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    name.ends_with(".sv") && !name.ends_with("_pkg.sv")
}

/// The stamp of unit `c.unit` whose module files are `deps`: the common
/// hash, the unit's identity and the contents of each dependency; `None`
/// when one is gone (the unit must be verilated again).
fn unit_hash(c: &Ctx, deps: &[String]) -> Option<String> {
    let u = c.unit;
    let mut h = Fnv::new();
    h.field(c.src_hash.as_bytes());
    h.field(u.name.as_bytes());
    h.field(u.top.as_bytes());
    for (n, v) in u.params {
        h.field(n.as_bytes());
        h.field(v.as_bytes());
    }
    for d in deps {
        h.field(d.as_bytes());
        h.field(&fs::read(c.rtl_dir.join(d)).ok()?);
    }
    Some(h.hex())
}

/// Verilates a unit and generates its shim, wrapper makefile and Rust side,
/// unless its stamp says that nothing changed since the last build.
pub fn prepare_unit(c: &Ctx) -> Built {
    let u = c.unit;
    let (name, top) = (u.name, u.top);
    let label = u.label();
    let mdir = c.vdir.join(name);
    let stage = c.vdir.join("stage").join(name);
    let stamp = mdir.join("stamp");
    let lib = mdir.join(format!("librtl_{name}.a"));
    let binding = mdir.join("binding.rs");
    let prefix = format!("V{name}");

    let deps_path = mdir.join("deps");
    let old_deps: Option<Vec<String>> = fs::read_to_string(&deps_path)
        .ok()
        .map(|t| t.lines().map(String::from).collect());
    let up_to_date = old_deps
        .as_deref()
        .and_then(|d| unit_hash(c, d))
        .filter(|h| fs::read_to_string(&stamp).ok().as_deref() == Some(h.as_str()));
    if let (Some(hash), true) = (up_to_date, lib.is_file()) {
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
    cmd.args(c.flags)
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
    let deps: Vec<String> = module_files(&xml, &label)
        .iter()
        .map(|f| {
            let p = Path::new(f);
            if p.parent() != Some(c.rtl_dir) {
                fail(format!(
                    "{label}: module file {f} is not in {}",
                    c.rtl_dir.display()
                ));
            }
            p.file_name().unwrap().to_string_lossy().into_owned()
        })
        .filter(|n| is_module_file(Path::new(n)))
        .collect();
    let hash = unit_hash(c, &deps)
        .unwrap_or_else(|| fail(format!("{label}: a module file vanished while building")));
    write_if_changed(
        &deps_path,
        &deps.iter().map(|d| format!("{d}\n")).collect::<String>(),
    );

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

pub fn verilator_version(verilator: &str) -> String {
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

pub fn run(cmd: &mut Command, what: &str) -> Output {
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
