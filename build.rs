//! Generates one integration test per vector file (tests/vectors.rs
//! includes the result), so a failure names its vector and a new vector
//! needs no hand-written test.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let vectors = root.join("vectors");
    println!("cargo:rerun-if-changed=vectors");
    let mut files = Vec::new();
    walk(&vectors, &mut files);
    files.sort();
    let mut src = String::new();
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let rel = f.strip_prefix(&vectors).unwrap();
        let name: String = rel
            .with_extension("")
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        writeln!(
            src,
            "#[test]\nfn {name}() {{\n    cosim_vector({:?});\n}}\n",
            f.display().to_string()
        )
        .unwrap();
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("vector_tests.rs");
    std::fs::write(out, src).unwrap();
}
