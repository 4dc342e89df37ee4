//! Small helpers: environment, files, writing only what changed, failing
//! the build, and a stable hash.

use std::fs;
use std::path::{Path, PathBuf};

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| fail(format!("{name} is not set (run through cargo)")))
}

/// The regular files in `dir`, sorted.
pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| fail(format!("reading {}: {e}", dir.display())))
        .map(|e| e.unwrap_or_else(|e| fail(format!("reading {}: {e}", dir.display()))))
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

pub fn mkdir(p: &Path) {
    fs::create_dir_all(p).unwrap_or_else(|e| fail(format!("creating {}: {e}", p.display())));
}

pub fn write_if_changed(path: &Path, text: &str) {
    write_bytes_if_changed(path, text.as_bytes());
}

/// Leaves the file (and its mtime) alone when it already holds `data`.
pub fn write_bytes_if_changed(path: &Path, data: &[u8]) {
    if fs::read(path).ok().as_deref() == Some(data) {
        return;
    }
    fs::write(path, data).unwrap_or_else(|e| fail(format!("writing {}: {e}", path.display())));
}

pub fn fail(msg: impl std::fmt::Display) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1);
}

/// FNV-1a, 64 bits: stable across Rust versions, unlike `DefaultHasher`.
pub struct Fnv(u64);

impl Fnv {
    pub fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub fn bytes(&mut self, data: &[u8]) {
        for &b in data {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// Length-prefixed, so that field boundaries count.
    pub fn field(&mut self, data: &[u8]) {
        self.bytes(&(data.len() as u64).to_le_bytes());
        self.bytes(data);
    }
    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}
