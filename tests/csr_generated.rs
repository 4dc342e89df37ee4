//! The register map's generated files (`hw/rtl/addr_map_pkg.sv`,
//! `model/src/csr_map.rs`, `docs/csr.md`) are up to date with
//! `hw/csr/csr_map.txt`: `hw/scripts/gen_csr.py --check` says so.

use std::path::Path;
use std::process::Command;

#[test]
fn generated_register_map_files_are_up_to_date() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .arg(root.join("hw/scripts/gen_csr.py"))
        .arg("--check")
        .output()
        .expect("running python3 hw/scripts/gen_csr.py --check");
    assert!(
        out.status.success(),
        "hw/scripts/gen_csr.py --check failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
