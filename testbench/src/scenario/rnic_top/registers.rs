//! The register readback that closes every run: each RW register the host
//! wrote reads back the last value written, masked to the bits the map
//! says exist, and every RW register of the GLOBAL, CC and PFCG blocks it
//! never wrote reads back its reset value. The expected values come from
//! the host's own writes and the register map (`hw/csr/csr_map.txt`,
//! through its generated constants) alone, never from the model: a read
//! mux that picks the wrong word, or a register that drops a bit, fails the
//! run even where model and RTL agree on it.
//!
//! Before configuration, every QP's CTRL reads back its reset value.
//!
//! Not read back at the end: RWH words (hardware writes them too: a QP's CTRL and
//! PSN), and table entries nobody wrote (a table row may start undefined).

use std::collections::BTreeMap;

use crate::vector::{CQS, MRS, QPS};
use rnic_model::csr_map::*;

/// A plain RW register as the map describes it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct RwReg {
    /// The bits that exist.
    pub mask: u32,
    /// Its reset value: block registers only (a table row has no reset
    /// the host can rely on).
    pub reset: Option<u32>,
    /// For reports.
    pub name: String,
}

/// A table of the map: its entries in this build, and per word its mask
/// and whether it is RWH.
struct Table {
    name: &'static str,
    base: u16,
    stride: u16,
    size: u32,
    masks: &'static [u32],
    hw: &'static [bool],
}

const TABLES: [Table; 3] = [
    Table {
        name: "QP",
        base: QP_BASE,
        stride: QP_STRIDE,
        size: QPS,
        masks: &QP_MASKS,
        hw: &QP_HW,
    },
    Table {
        name: "MR",
        base: MR_BASE,
        stride: MR_STRIDE,
        size: MRS,
        masks: &MR_MASKS,
        hw: &MR_HW,
    },
    Table {
        name: "CQ",
        base: CQ_BASE,
        stride: CQ_STRIDE,
        size: CQS,
        masks: &CQ_MASKS,
        hw: &CQ_HW,
    },
];

/// The map's view of the plain RW register at `addr` in this build;
/// `None` for anything else (RO, WO, RWH, a word past an entry's last
/// register, an entry beyond the build's table).
pub(super) fn rw_register(addr: u16) -> Option<RwReg> {
    let blocks: [(&str, u16, &[u32], &[u32]); 2] = [
        ("CC", CC_RW_ADDR, &CC_RW_MASKS, &CC_RW_RESETS),
        ("PFCG", PFCG_RW_ADDR, &PFCG_RW_MASKS, &PFCG_RW_RESETS),
    ];
    let reg = |mask, reset, name: String| Some(RwReg { mask, reset, name });
    for (name, base, masks, resets) in blocks {
        let k = addr.wrapping_sub(base) as usize / 4;
        if addr >= base && addr.is_multiple_of(4) && k < masks.len() {
            return reg(masks[k], Some(resets[k]), format!("{name} RW register {k}"));
        }
    }
    if addr == GLOBAL_PCIE_CFG_ADDR {
        return reg(
            GLOBAL_PCIE_CFG_MASK,
            Some(GLOBAL_PCIE_CFG_RESET),
            "PCIE_CFG".into(),
        );
    }
    if addr == GLOBAL_CPL_TIMEOUT_ADDR {
        let (m, r) = (GLOBAL_CPL_TIMEOUT_MASK, GLOBAL_CPL_TIMEOUT_RESET);
        return reg(m, Some(r), "CPL_TIMEOUT".into());
    }
    for t in &TABLES {
        if addr < t.base || !addr.is_multiple_of(4) {
            continue;
        }
        let (entry, w) = (
            (addr - t.base) / t.stride,
            ((addr - t.base) % t.stride / 4) as usize,
        );
        if (entry as u32) < t.size && w < t.masks.len() && !t.hw[w] {
            return reg(t.masks[w], None, format!("{} {entry} word {w}", t.name));
        }
    }
    None
}

/// `(name, address, value)` of the registers read before configuration:
/// every QP's CTRL, which the map resets to state RESET, so that no QP comes
/// out of reset in another state (in ERROR, say) that configuration would
/// then overwrite unseen.
pub(super) fn at_reset() -> Vec<(String, u16, u32)> {
    (0..QPS as u16)
        .map(|q| {
            let a = QP_BASE + q * QP_STRIDE + QP_CTRL_OFF;
            (
                format!("QP {q} CTRL at reset"),
                a,
                QP_CTRL_RESET & QP_CTRL_MASK,
            )
        })
        .collect()
}

/// What the host has written to plain RW registers, last write winning.
#[derive(Debug, Default)]
pub(super) struct Written(BTreeMap<u16, u32>);

impl Written {
    /// Notes an MMIO write (anything but a plain RW register is ignored).
    pub fn note(&mut self, addr: u16, data: u32) {
        if rw_register(addr).is_some() {
            self.0.insert(addr, data);
        }
    }

    /// `(name, address, expected value)` of every register to read back:
    /// those written, and the block registers left at their reset value.
    pub fn expected(&self) -> Vec<(String, u16, u32)> {
        let mut addrs: Vec<u16> = self.0.keys().copied().collect();
        let blocks = [(CC_RW_ADDR, CC_RW_N), (PFCG_RW_ADDR, PFCG_RW_N)];
        let block_regs = blocks
            .iter()
            .flat_map(|&(b, n)| (0..n as u16).map(move |k| b + 4 * k))
            .chain([GLOBAL_PCIE_CFG_ADDR, GLOBAL_CPL_TIMEOUT_ADDR]);
        addrs.extend(block_regs.filter(|a| !self.0.contains_key(a)));
        addrs.sort_unstable();
        addrs
            .into_iter()
            .filter_map(|a| {
                let r = rw_register(a)?;
                let v = self.0.get(&a).copied().or(r.reset)?;
                Some((r.name, a, v & r.mask))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Addresses and masks worked out by hand from hw/csr/csr_map.txt.
    #[test]
    fn map_view_of_literal_addresses() {
        // QP 1's SQ_BASE_LO: 0x8000 + 0x80 + 0x48.
        let r = rw_register(0x80C8).unwrap();
        assert_eq!(
            (r.mask, r.reset, r.name.as_str()),
            (0xFFFF_FFFF, None, "QP 1 word 18")
        );
        // QP 0's CTRL and PSN are RWH; 0x806C is past the entry's last word.
        assert!(rw_register(0x8000).is_none());
        assert!(rw_register(0x8008).is_none());
        assert!(rw_register(0x806C).is_none());
        // CQ 2's LOG: 0x3000 + 0x20 + 0x8, five bits.
        assert_eq!(rw_register(0x3028).unwrap().mask, 0x1F);
        // CC's STAT_QP (0x230) is the 13th RW register, eight bits, reset 0.
        let r = rw_register(0x0230).unwrap();
        assert_eq!((r.mask, r.reset), (0xFF, Some(0)));
        // Counters and doorbells are not RW.
        assert!(rw_register(0x0100).is_none());
        assert!(rw_register(0x0010).is_none());
        // An entry past the build's table.
        assert!(rw_register(0x8000 + 0x80 * QPS as u16).is_none());
    }

    #[test]
    fn last_write_wins_masked() {
        let mut w = Written::default();
        w.note(0x3028, 7);
        w.note(0x3028, 0xFFFF_FFE9);
        w.note(0x0100, 5);
        let e = w.expected();
        assert!(e.contains(&("CQ 2 word 2".into(), 0x3028, 0x09)));
        assert!(!e.iter().any(|x| x.1 == 0x0100));
        // An unwritten block register reads back its reset: DCQCN_G 0x108.
        assert!(e.iter().any(|x| x.1 == 0x0200 && x.2 == 0x108));
    }
}
