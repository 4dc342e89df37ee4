//! The RTL's CRC-32 (`hw/rtl/crc32_pkg.sv`, used by pkt_builder and
//! rx_parser) is what `hw/scripts/gen_crc32.py` writes, and its matrix and
//! constants agree with an independent CRC-32: the crc32fast crate, not the
//! model's table (`model/src/icrc.rs`) nor the generator's bit-serial loop.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn crc32_pkg_is_what_the_generator_writes() {
    let out = Command::new("python3")
        .arg(root().join("hw/scripts/gen_crc32.py"))
        .arg("--check")
        .output()
        .expect("running python3 hw/scripts/gen_crc32.py --check");
    assert!(
        out.status.success(),
        "hw/scripts/gen_crc32.py --check failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The hex literals `<width>'h...` of the localparam `name`, in source
/// order (most significant part first), as one little-endian byte string.
fn param_bytes(src: &str, name: &str) -> Vec<u8> {
    let start = src
        .find(&format!("{name} ="))
        .unwrap_or_else(|| panic!("{name} not in crc32_pkg.sv"));
    let end = start + src[start..].find(';').expect("';' after the localparam");
    let mut hex = String::new();
    for lit in src[start..end].split("'h").skip(1) {
        hex.extend(lit.chars().take_while(|c| c.is_ascii_hexdigit()));
    }
    assert!(
        hex.len().is_multiple_of(2),
        "{name}: odd number of hex digits"
    );
    // Most significant digit first -> bytes, least significant first.
    let mut bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|k| u8::from_str_radix(&hex[2 * k..2 * k + 2], 16).unwrap())
        .collect();
    bytes.reverse();
    bytes
}

/// crc32_d512 as the RTL computes it: bit i is the parity of blk & row i.
fn d512(rows: &[u8], blk: &[u8; 64]) -> u32 {
    let mut c = 0u32;
    for i in 0..32 {
        let row = &rows[64 * i..64 * i + 64];
        let parity = row
            .iter()
            .zip(blk)
            .fold(0u32, |p, (r, b)| p ^ (r & b).count_ones());
        c |= (parity & 1) << i;
    }
    c
}

/// The raw CRC register (no inversions) after `data` from `state`, by
/// crc32fast: its initial value and result are the inverted register.
fn raw(state: u32, data: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(!state);
    h.update(data);
    !h.finalize()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

fn pkg() -> String {
    std::fs::read_to_string(root().join("hw/rtl/crc32_pkg.sv")).expect("reading crc32_pkg.sv")
}

#[test]
fn matrix_matches_crc32fast_for_every_byte_count() {
    let src = pkg();
    let rows = param_bytes(&src, "CRC32_M");
    assert_eq!(rows.len(), 32 * 64);
    let mut rng = Rng(0x1CC5_EED5);
    for n in 1..=64usize {
        for _ in 0..20 {
            let data: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            // The callers' layout: covered bytes at the end of the block,
            // zeros before them, the running state folded into their first
            // four bytes (from zero when fewer than four are covered).
            let state = if n >= 4 { rng.next() as u32 } else { 0 };
            let mut blk = [0u8; 64];
            blk[64 - n..].copy_from_slice(&data);
            for (k, b) in state.to_le_bytes().iter().enumerate() {
                if n >= 4 {
                    blk[64 - n + k] ^= b;
                }
            }
            assert_eq!(
                d512(&rows, &blk),
                raw(state, &data),
                "{n} bytes, state {state:#x}"
            );
        }
    }
}

#[test]
fn prefix_and_residues_match_crc32fast() {
    let src = pkg();
    let prefix = param_bytes(&src, "CRC32_PREFIX");
    let prefix = u32::from_le_bytes(prefix[..4].try_into().unwrap());
    assert_eq!(prefix, raw(!0, &[0xFF; 8]));

    let res = param_bytes(&src, "CRC32_RESIDUE_K");
    assert_eq!(res.len(), 64 * 4);
    // A good frame: a message and its CRC-32, least significant byte first.
    let mut frame = b"any message at all".to_vec();
    let crc = crc32fast::hash(&frame);
    frame.extend_from_slice(&crc.to_le_bytes());
    let good = raw(!0, &frame);
    for k in 0..64 {
        let entry = u32::from_le_bytes(res[4 * k..4 * k + 4].try_into().unwrap());
        assert_eq!(
            entry,
            raw(good, &vec![0u8; k]),
            "residue after {k} zero bytes"
        );
    }
}
