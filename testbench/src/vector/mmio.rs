//! Which MMIO writes the register map says change nothing (docs/csr.md,
//! "Access"): a word of a table entry past the entry's last register, an
//! entry at or beyond the build's table size, and a doorbell naming a QP
//! at or beyond QPS. A vector's `ignored_write` step may name only those:
//! the references predict a run as if it were not there, so a DUT that
//! acts on one shows as frames, completions or counters they do not
//! expect.

use rnic_model::csr_map::{
    CQ_BASE, CQ_STRIDE, CQ_WORDS, GLOBAL_DOORBELL_ADDR, GLOBAL_DOORBELL_QP_LSB,
    GLOBAL_DOORBELL_QP_W, GLOBAL_RQ_DOORBELL_ADDR, GLOBAL_RQ_DOORBELL_QP_LSB,
    GLOBAL_RQ_DOORBELL_QP_W, MR_BASE, MR_STRIDE, MR_WORDS, QP_BASE, QP_STRIDE, QP_WORDS,
};

use super::{CQS, MRS, QPS};

/// A table as the map lays it out: the first address, the stride of an
/// entry, the words of registers in it, the entries the build has, and
/// the entries its window could hold (4 KiB).
struct Table {
    name: &'static str,
    base: u16,
    stride: u16,
    words: usize,
    size: u32,
}

const WINDOW: u32 = 0x1000;

fn tables() -> [Table; 3] {
    [
        Table {
            name: "QP",
            base: QP_BASE,
            stride: QP_STRIDE,
            words: QP_WORDS,
            size: QPS,
        },
        Table {
            name: "MR",
            base: MR_BASE,
            stride: MR_STRIDE,
            words: MR_WORDS,
            size: MRS,
        },
        Table {
            name: "CQ",
            base: CQ_BASE,
            stride: CQ_STRIDE,
            words: CQ_WORDS,
            size: CQS,
        },
    ]
}

/// Why the map ignores a write of `data` to `addr`, or why this is not
/// such a write (the error names the rule it misses).
pub fn ignored(addr: u64, data: u64) -> Result<String, String> {
    if addr > 0xFFFF || !addr.is_multiple_of(4) {
        return Err(format!(
            "{addr:#x} is not a 4-byte aligned MMIO address (16 bits)"
        ));
    }
    if data > 0xFFFF_FFFF {
        return Err(format!("data {data:#x} does not fit in 32 bits"));
    }
    let (addr, data) = (addr as u32, data as u32);
    let qp_field = |lsb: u32, w: u32| (data >> lsb) & ((1 << w) - 1);
    if addr == GLOBAL_DOORBELL_ADDR as u32 {
        let qp = qp_field(GLOBAL_DOORBELL_QP_LSB, GLOBAL_DOORBELL_QP_W);
        return if qp >= QPS {
            Ok(format!("DOORBELL for QP {qp} >= QPS ({QPS})"))
        } else {
            Err(format!("DOORBELL for QP {qp}, which exists: not ignored"))
        };
    }
    if addr == GLOBAL_RQ_DOORBELL_ADDR as u32 {
        let qp = qp_field(GLOBAL_RQ_DOORBELL_QP_LSB, GLOBAL_RQ_DOORBELL_QP_W);
        return if qp >= QPS {
            Ok(format!("RQ_DOORBELL for QP {qp} >= QPS ({QPS})"))
        } else {
            Err(format!(
                "RQ_DOORBELL for QP {qp}, which exists: not ignored"
            ))
        };
    }
    for t in tables() {
        let base = t.base as u32;
        if (base..base + WINDOW).contains(&addr) {
            let entry = (addr - base) / t.stride as u32;
            let word = ((addr - base) % t.stride as u32 / 4) as usize;
            return if entry >= t.size {
                Ok(format!(
                    "{} entry {entry} >= {} ({})",
                    t.name, t.name, t.size
                ))
            } else if word >= t.words {
                Ok(format!(
                    "{} entry {entry}, word {word}: past the entry's {} registers",
                    t.name, t.words
                ))
            } else {
                Err(format!(
                    "{addr:#x} is {} entry {entry}, word {word}: a register",
                    t.name
                ))
            };
        }
    }
    Err(format!(
        "{addr:#x}: only table words past an entry's registers, entries past the build's \
         size, and doorbells for a QP >= QPS are allowed"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rules_of_the_map() {
        // The first address past the 16-entry QP table, the first unused word
        // of QP 0 (27 registers), a doorbell for QP 16.
        assert!(ignored(0x8800, 1).is_ok());
        assert!(ignored(0x8000 + 27 * 4, 1).is_ok());
        assert!(ignored(0x10, 16 << 16 | 3).is_ok());
        assert!(ignored(0x18, 200 << 16).is_ok());
        assert!(ignored(0x4000 + 16 * 0x40, 0).is_ok());
        assert!(ignored(0x4000 + 9 * 4, 0).is_ok());
        assert!(ignored(0x3000 + 4 * 0x10, 0).is_ok());
        // The last word of the last QP: past its 27 registers.
        assert!(ignored(0x87FC, 1).is_ok());
        // Registers, or not the map's at all.
        assert!(ignored(0x8000 + 26 * 4, 1)
            .unwrap_err()
            .contains("a register"));
        assert!(ignored(0x10, 15 << 16).is_err());
        assert!(ignored(0x0C, 0).is_err());
        assert!(ignored(0x8802, 0).is_err());
        assert!(ignored(0x1_0000, 0).is_err());
        assert!(ignored(0x8800, 1 << 32).is_err());
    }
}
