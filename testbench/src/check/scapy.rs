//! Runs `tests/scapy_roce_check.py`, the third-party (scapy) decoding of
//! every frame of a pcap: Ethernet/802.1Q, IPv4 checksum or IPv6, UDP, BTH
//! and the ICRC. The script exits 0 when every frame passes, 1 when one
//! fails, 2 when it cannot start (no scapy).

use std::path::Path;
use std::process::{Command, Output};

/// The script, in the repository's `tests/`.
pub const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/scapy_roce_check.py");

/// Runs the script on `pcap` with `extra` arguments, with `$PYTHON` (default
/// `python3`). A missing interpreter or scapy is an error, never a pass.
pub fn run(pcap: &Path, extra: &[&str]) -> Result<Output, String> {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let need = "this check needs python3 with scapy (`pip install scapy`)";
    let out = Command::new(&py)
        .arg(SCRIPT)
        .arg(pcap)
        .args(extra)
        .output()
        .map_err(|e| format!("cannot run `{py}` ({e}): {need}"))?;
    if out.status.code() == Some(2) {
        return Err(format!(
            "{SCRIPT} could not start: {}\n{need}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out)
}
