//! The two VCDs of a lockstep run, `model.vcd` (the testbench's writer,
//! `rnic_testbench::vcd_model`) and `rtl.vcd` (Verilator's), read with the
//! small reader below (not the writer's own crate), so that a naming slip on
//! either side shows up: [`check_names`] finds every register the model
//! traces at the RTL's name and width and reports the RTL's `_q` registers
//! it misses, [`check_values`] compares their values at every timestamp.
//! Used by `tests/vcd_names.rs` (rnic_top, the dma tops) and
//! `tests/vcd_names_blocks.rs` (blocks standalone).

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One VCD: every signal's full name and width, and its value changes
/// (time, id code, bits as written, leading zeros trimmed).
pub struct Vcd {
    pub vars: BTreeMap<String, (u32, String)>,
    pub changes: Vec<(u64, String, String)>,
}

fn trim(bits: &str) -> String {
    let t = bits.trim_start_matches('0');
    if t.is_empty() { "0" } else { t }.to_string()
}

pub fn read_vcd(path: &Path) -> Vcd {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut vars = BTreeMap::new();
    let mut scope: Vec<String> = Vec::new();
    let mut lines = text.lines();
    for line in lines.by_ref() {
        let t: Vec<&str> = line.split_whitespace().collect();
        match t.first().copied() {
            Some("$scope") => scope.push(t[2].to_string()),
            Some("$upscope") => {
                scope.pop();
            }
            // `$var wire 32 id cc_q[0] [31:0] $end`: the bit range is not
            // part of the name.
            Some("$var") => {
                let name = format!("{}.{}", scope.join("."), t[4]);
                vars.insert(name, (t[2].parse().expect("width"), t[3].to_string()));
            }
            Some("$enddefinitions") => break,
            _ => {}
        }
    }
    let mut changes = Vec::new();
    let mut now = 0u64;
    for line in lines {
        let line = line.trim();
        if let Some(ts) = line.strip_prefix('#') {
            now = ts.parse().expect("timestamp");
        } else if let Some(v) = line.strip_prefix('b') {
            let (bits, id) = v.split_once(' ').expect("vector change");
            changes.push((now, id.to_string(), trim(bits)));
        } else if line.starts_with(['0', '1', 'x', 'z']) {
            changes.push((now, line[1..].to_string(), line[..1].to_string()));
        }
    }
    Vcd { vars, changes }
}

/// A register name: `<reg>_q` or an element `<reg>_q[k]`.
pub fn is_reg(full: &str) -> bool {
    let leaf = full.rsplit('.').next().unwrap_or("");
    let base = leaf.split('[').next().unwrap_or("");
    base.ends_with("_q")
}

/// Checks names and widths, prints the coverage, and returns
/// (model registers, RTL registers under the same top).
pub fn check_names(model: &Vcd, rtl: &Vcd, top: &str) -> (usize, usize) {
    let mut bad = Vec::new();
    let mut traced = 0;
    for (name, (w, _)) in model.vars.iter().filter(|(n, _)| is_reg(n)) {
        traced += 1;
        match rtl.vars.get(name) {
            None => bad.push(format!("{name}: not in rtl.vcd")),
            Some((rw, _)) if rw != w => bad.push(format!("{name}: width {w}, RTL {rw}")),
            Some(_) => {}
        }
    }
    assert!(
        bad.is_empty(),
        "model registers unlike the RTL's:\n{}",
        bad.join("\n")
    );
    let prefix = format!("TOP.{top}.");
    let rtl_regs: Vec<&String> = rtl
        .vars
        .keys()
        .filter(|n| n.starts_with(&prefix) && is_reg(n))
        .collect();
    let missing: Vec<&&String> = rtl_regs
        .iter()
        .filter(|n| !model.vars.contains_key(**n))
        .collect();
    eprintln!(
        "{top}: the model traces {traced} of the RTL's {} `_q` registers; not traced: {missing:?}",
        rtl_regs.len()
    );
    (traced, rtl_regs.len())
}

/// Registers compared only while a register of the same block (a valid, a
/// count) is non-zero, because one side loads them regardless and they are
/// don't-cares otherwise: (register suffix, its qualifier's suffix). A
/// suffix matches the block standalone (`TOP.responder.tok_q`) and inside
/// rnic_top (`TOP.rnic_top.u_responder.tok_q`) alike.
pub const QUALIFIED: &[(&str, &str)] = &[
    // dma_rd's read stage: on an advance without a step the RTL still
    // loads every field from the reader, the model clears the stage.
    ("dma_rd.p1_fetch_q", "dma_rd.p1_valid_q"),
    ("dma_rd.p1_zero_q", "dma_rd.p1_valid_q"),
    ("dma_rd.p1_emit_q", "dma_rd.p1_valid_q"),
    ("dma_rd.p1_last_q", "dma_rd.p1_valid_q"),
    ("dma_rd.p1_keep_q", "dma_rd.p1_valid_q"),
    ("dma_rd.p1_client_q", "dma_rd.p1_valid_q"),
    ("dma_rd.p1_status_q", "dma_rd.p1_valid_q"),
    ("dma_rd.p1_s_q", "dma_rd.p1_valid_q"),
    // responder's decision (S_RB): the RTL loads segment 0 and the token
    // from the packet's outcome whether or not there is one, the model
    // only when there is (segments below seg_n_q, a token with tok_v_q).
    ("responder.seg_off_q", "responder.seg_n_q"),
    ("responder.seg_len_q", "responder.seg_n_q"),
    ("responder.seg_addr_q", "responder.seg_n_q"),
    ("responder.tok_q", "responder.tok_v_q"),
];

/// The register that qualifies register `name`, if [`QUALIFIED`] names one.
fn qualifier(name: &str) -> Option<String> {
    let (reg, valid) = QUALIFIED.iter().find(|(r, _)| name.ends_with(r))?;
    Some(format!("{}{valid}", &name[..name.len() - reg.len()]))
}

/// Compares every traced register's value at every timestamp; returns the
/// registers compared ([`QUALIFIED`] ones only while their qualifier is
/// non-zero on both sides).
pub fn check_values(model: &Vcd, rtl: &Vcd) -> usize {
    // id code -> name, per side, for the registers both trace.
    let names: Vec<&String> = model.vars.keys().filter(|n| is_reg(n)).collect();
    let index: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (n.as_str(), k))
        .collect();
    let qual: Vec<Option<usize>> = names
        .iter()
        .map(|n| qualifier(n).map(|q| index[q.as_str()]))
        .collect();
    let m_id: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (model.vars[*n].1.as_str(), k))
        .collect();
    let r_id: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(k, n)| (rtl.vars[*n].1.as_str(), k))
        .collect();
    // Per timestamp: the (register, value) changes of the model, the RTL's.
    type Changes<'a> = Vec<(usize, &'a str)>;
    let mut times: BTreeMap<u64, (Changes, Changes)> = BTreeMap::new();
    for (t, id, v) in &model.changes {
        if let Some(&k) = m_id.get(id.as_str()) {
            times.entry(*t).or_default().0.push((k, v));
        }
    }
    for (t, id, v) in &rtl.changes {
        if let Some(&k) = r_id.get(id.as_str()) {
            times.entry(*t).or_default().1.push((k, v));
        }
    }
    let mut mv = vec!["?"; names.len()];
    let mut rv = vec!["?"; names.len()];
    let mut first_diff: BTreeMap<&str, String> = BTreeMap::new();
    for (t, (mc, rc)) in &times {
        for (k, v) in mc {
            mv[*k] = v;
        }
        for (k, v) in rc {
            rv[*k] = v;
        }
        for k in 0..names.len() {
            let on = |v: &str| v != "0" && v != "?";
            let live = qual[k].is_none_or(|q| on(mv[q]) && on(rv[q]));
            if live && mv[k] != rv[k] && mv[k] != "?" && rv[k] != "?" {
                first_diff
                    .entry(names[k].as_str())
                    .or_insert_with(|| format!("at {t} ps: model {} RTL {}", mv[k], rv[k]));
            }
        }
    }
    // Every register has a value on both sides (the comparison compared).
    let unset: Vec<&&String> = (0..names.len())
        .filter(|&k| mv[k] == "?" || rv[k] == "?")
        .map(|k| &names[k])
        .collect();
    assert!(unset.is_empty(), "registers never written: {unset:?}");
    assert!(times.len() > 100, "a run of {} timestamps", times.len());
    assert!(
        first_diff.is_empty(),
        "registers that differ between model.vcd and rtl.vcd ({}):\n{}",
        first_diff.len(),
        first_diff
            .iter()
            .map(|(n, d)| format!("{n} {d}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    names.len()
}
