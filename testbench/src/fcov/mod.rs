//! Functional coverage: which of the points in [`points`] a run actually
//! exercised, counted from what happened on the DUT's ports (frames on
//! the wire, CQEs written to host memory, faults the root complex applied,
//! stalls, the counters read back over MMIO), never from what the vector
//! asked for. `rnic cosim --fcov FILE` merges every vector's hits into
//! FILE; `rnic fcov FILE` reports them against [`points::all`] and the
//! known holes in `holes.txt` (docs/coverage.md, "Functional coverage").

pub mod points;
pub mod sample;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Hits per point (only points hit at least once are present).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coverage {
    pub hits: BTreeMap<String, u64>,
}

impl Coverage {
    pub fn hit(&mut self, point: String) {
        *self.hits.entry(point).or_insert(0) += 1;
    }

    /// `point` hit `n` times (nothing when `n` is 0).
    pub fn hit_n(&mut self, point: String, n: u64) {
        if n > 0 {
            *self.hits.entry(point).or_insert(0) += n;
        }
    }

    pub fn merge(&mut self, o: &Coverage) {
        for (k, n) in &o.hits {
            *self.hits.entry(k.clone()).or_insert(0) += n;
        }
    }

    /// Names hit that are not points: a sampler's bug.
    pub fn unknown(&self) -> Vec<&str> {
        let all: std::collections::BTreeSet<String> = points::all().into_iter().collect();
        self.hits
            .keys()
            .filter(|k| !all.contains(*k))
            .map(String::as_str)
            .collect()
    }
}

/// The known holes: points no shipped vector hits, each with its reason.
/// One line each, `point  reason`; `#` starts a comment.
pub const HOLES: &str = include_str!("holes.txt");

/// [`HOLES`] parsed: (point, reason). A line with no reason, a name that
/// is not a point, or a point listed twice is an error naming the line.
pub fn holes() -> Result<Vec<(String, String)>, String> {
    let all: std::collections::BTreeSet<String> = points::all().into_iter().collect();
    let mut out: Vec<(String, String)> = Vec::new();
    for (n, line) in HOLES.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (p, reason) = line
            .split_once(char::is_whitespace)
            .map(|(p, r)| (p, r.trim()))
            .unwrap_or((line, ""));
        let at = format!("fcov/holes.txt line {}", n + 1);
        if reason.is_empty() {
            return Err(format!("{at}: `{p}` has no reason"));
        }
        if !all.contains(p) {
            return Err(format!("{at}: `{p}` is not a coverage point"));
        }
        if out.iter().any(|(q, _)| q == p) {
            return Err(format!("{at}: `{p}` is listed twice"));
        }
        out.push((p.to_string(), reason.to_string()));
    }
    Ok(out)
}

/// Points neither hit nor known holes, and known holes that were hit
/// (stale: take them off the list). Both empty: the contract holds.
pub fn check(c: &Coverage) -> Result<(Vec<String>, Vec<String>), String> {
    let holes = holes()?;
    let known = |p: &str| holes.iter().any(|(q, _)| q == p);
    let missed = points::all()
        .into_iter()
        .filter(|p| !c.hits.contains_key(p) && !known(p))
        .collect();
    let stale = holes
        .iter()
        .filter(|(p, _)| c.hits.contains_key(p))
        .map(|(p, _)| p.clone())
        .collect();
    Ok((missed, stale))
}

/// One group of points: how many, how many hit, how many known holes
/// among those not hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRow {
    pub group: String,
    pub points: usize,
    pub hit: usize,
    pub holes: usize,
}

impl GroupRow {
    /// Neither hit nor a known hole.
    pub fn missed(&self) -> usize {
        self.points - self.hit - self.holes
    }
}

/// Per group in the order each first appears in [`points::all`], then the
/// total (`all`).
pub fn summary(c: &Coverage) -> Result<Vec<GroupRow>, String> {
    let holes = holes()?;
    let mut rows: Vec<GroupRow> = Vec::new();
    for p in points::all() {
        let g = points::group(&p);
        let k = match rows.iter().position(|r| r.group == g) {
            Some(k) => k,
            None => {
                rows.push(GroupRow {
                    group: g.to_string(),
                    points: 0,
                    hit: 0,
                    holes: 0,
                });
                rows.len() - 1
            }
        };
        let r = &mut rows[k];
        r.points += 1;
        if c.hits.contains_key(&p) {
            r.hit += 1;
        } else if holes.iter().any(|(q, _)| *q == p) {
            r.holes += 1;
        }
    }
    let total = GroupRow {
        group: "all".into(),
        points: rows.iter().map(|r| r.points).sum(),
        hit: rows.iter().map(|r| r.hit).sum(),
        holes: rows.iter().map(|r| r.holes).sum(),
    };
    rows.push(total);
    Ok(rows)
}

/// The column names of [`table`].
pub const TABLE_HEADER: [&str; 5] = ["group", "points", "hit", "known holes", "missed"];

/// [`summary`] as a Markdown table.
pub fn table(c: &Coverage) -> Result<String, String> {
    let mut s = format!(
        "| {} |\n|---|---:|---:|---:|---:|\n",
        TABLE_HEADER.join(" | ")
    );
    for r in summary(c)? {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} |",
            r.group,
            r.points,
            r.hit,
            r.holes,
            r.missed()
        );
    }
    Ok(s)
}

/// Reads a file `rnic cosim --fcov` wrote.
pub fn load(path: &std::path::Path) -> Result<Coverage, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let c: Coverage = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a coverage file: {e}", path.display()))?;
    if let Some(u) = c.unknown().first() {
        return Err(format!("{}: `{u}` is not a coverage point", path.display()));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_has_one_row_per_group() {
        let rows = summary(&Coverage::default()).unwrap();
        let names: Vec<&str> = rows.iter().map(|r| r.group.as_str()).collect();
        assert_eq!(
            names,
            [
                "tx", "rx", "rx_frame", "cqe", "drop", "event", "dcqcn", "pfc", "pcie", "bp",
                "switch", "all"
            ]
        );
        let all = rows.last().unwrap();
        assert_eq!((all.points, all.hit), (points::all().len(), 0));
        assert_eq!(all.holes, holes().unwrap().len());
    }

    #[test]
    fn holes_parse() {
        let h = holes().unwrap();
        assert!(h.iter().all(|(p, r)| !p.is_empty() && !r.is_empty()));
    }

    #[test]
    fn check_finds_missed_and_stale() {
        let holes = holes().unwrap();
        let mut c = Coverage::default();
        for p in points::all() {
            if !holes.iter().any(|(q, _)| *q == p) {
                c.hit(p);
            }
        }
        assert_eq!(check(&c).unwrap(), (vec![], vec![]));
        let first = points::all()
            .into_iter()
            .find(|p| !holes.iter().any(|(q, _)| q == p))
            .unwrap();
        c.hits.remove(&first);
        assert_eq!(check(&c).unwrap().0, vec![first.clone()]);
        if let Some((h, _)) = holes.first() {
            c.hit(h.clone());
            assert_eq!(check(&c).unwrap().1, vec![h.clone()]);
        }
        c.hit("tx.nonsense".into());
        assert_eq!(c.unknown(), vec!["tx.nonsense"]);
    }
}
