//! Verilator coverage data (`*.dat`, "SystemC::Coverage-3") read into totals
//! per RTL block, for `rnic coverage` and `scripts/coverage.sh`.
//!
//! A data file is a `# SystemC::Coverage-3` line, then one line per point:
//! `C '<key>' <count>`, the key a run of `\x01<name>\x02<value>` fields. The
//! fields used here: `page` (`v_line/<module>`, `v_branch/<module>`,
//! `v_toggle/<module>`, `v_user/<module>`: the kind of point and the module
//! it belongs to, `<module>__<suffix>` when parameters specialized it), `f`
//! (file) and `l` (line). A block that several Verilated units specialize
//! differently (`ack_gen` as its own top, `ack_gen__Q10` inside `rnic_top`)
//! has its points once: keys equal but for that suffix are one point, their
//! counts summed, so a block's total is the same in every file and the
//! merge of two runs is not counted twice. A point is hit when its count
//! is at least 1; `verilator_coverage --annotate` is run with
//! `--annotate-min 1` so that the annotated sources agree.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum CoverageError {
    #[error("line {line}: {reason}")]
    Malformed { line: usize, reason: &'static str },
    #[error("not a Verilator coverage file (no `# SystemC::Coverage-3` header)")]
    NoHeader,
}

/// What a point counts, from its `page`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A statement block (`v_line`).
    Line,
    /// One way out of an `if` or `case` (`v_branch`).
    Branch,
    /// One bit of a signal changing (`v_toggle`).
    Toggle,
    /// A `cover` statement in the RTL (`v_user`).
    User,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Line, Kind::Branch, Kind::Toggle, Kind::User];

    fn from_page(page: &str) -> Option<Kind> {
        Some(match page {
            "v_line" => Kind::Line,
            "v_branch" => Kind::Branch,
            "v_toggle" => Kind::Toggle,
            "v_user" => Kind::User,
            _ => return None,
        })
    }

    fn page(self) -> &'static str {
        match self {
            Kind::Line => "v_line",
            Kind::Branch => "v_branch",
            Kind::Toggle => "v_toggle",
            Kind::User => "v_user",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Line => "line",
            Kind::Branch => "branch",
            Kind::Toggle => "toggle",
            Kind::User => "user",
        }
    }
}

/// One coverage point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    pub kind: Kind,
    pub module: String,
    pub file: String,
    pub line: u32,
    /// What the point is (`o`): `block`, `if`, `else`, or the signal bit of
    /// a toggle point (`len_q[3]`).
    pub what: String,
    pub count: u64,
}

/// Parses a data file. Points of a page this module does not know are
/// an error, so a Verilator that counts something new is noticed.
pub fn parse(text: &str) -> Result<Vec<Point>, CoverageError> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, l)) if l.trim() == "# SystemC::Coverage-3" => {}
        _ => return Err(CoverageError::NoHeader),
    }
    let mut points: Vec<Point> = Vec::new();
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for (i, l) in lines {
        let line = i + 1;
        let bad = |reason| CoverageError::Malformed { line, reason };
        if l.trim().is_empty() || l.starts_with('#') {
            continue;
        }
        let rest = l
            .strip_prefix("C '")
            .ok_or(bad("does not start with C '"))?;
        let (key, count) = rest.rsplit_once("' ").ok_or(bad("no closing quote"))?;
        let count: u64 = count
            .trim()
            .parse()
            .map_err(|_| bad("count is not a number"))?;
        let (mut page, mut file, mut lineno, mut what) = (None, None, None, "");
        for field in key.split('\x01').filter(|f| !f.is_empty()) {
            let (name, value) = field.split_once('\x02').ok_or(bad("field without value"))?;
            match name {
                "page" => page = Some(value),
                "f" => file = Some(value),
                "l" => lineno = Some(value),
                "o" => what = value,
                _ => {}
            }
        }
        let page = page.ok_or(bad("no page"))?;
        let (kind, module) = page
            .split_once('/')
            .ok_or(bad("page is not <kind>/<module>"))?;
        let kind = Kind::from_page(kind).ok_or(bad("unknown page kind"))?;
        // A module specialized by parameters is `<name>__<suffix>`; its points
        // count for the block.
        let module = module.split_once("__").map_or(module, |(m, _)| m);
        let canonical = key.replace(page, &format!("{}/{module}", kind.page()));
        if let Some(&at) = seen.get(&canonical) {
            points[at].count += count;
            continue;
        }
        seen.insert(canonical, points.len());
        points.push(Point {
            kind,
            module: module.to_string(),
            file: file.ok_or(bad("no file"))?.to_string(),
            line: lineno
                .ok_or(bad("no line"))?
                .parse()
                .map_err(|_| bad("line is not a number"))?,
            what: what.to_string(),
            count,
        });
    }
    Ok(points)
}

/// The points never hit, one line each (`file:line kind block what`),
/// sorted by file and line: the per-bit list that `verilator_coverage
/// --annotate` cannot show (it sums the bits of a signal into one count).
pub fn holes(points: &[Point]) -> String {
    let mut zero: Vec<&Point> = points.iter().filter(|p| p.count == 0).collect();
    zero.sort_by(|a, b| (&a.file, a.line, &a.what).cmp(&(&b.file, b.line, &b.what)));
    let mut out = String::new();
    for p in zero {
        let file = p.file.rsplit('/').next().unwrap_or(&p.file);
        writeln!(
            out,
            "{file}:{} {} {} {}",
            p.line,
            p.kind.name(),
            p.module,
            p.what
        )
        .unwrap();
    }
    out
}

/// Points hit and points in all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub hit: u64,
    pub total: u64,
}

impl Tally {
    fn add(&mut self, count: u64) {
        self.total += 1;
        self.hit += u64::from(count > 0);
    }

    /// The percentage hit, rounded down to 0.1 % (so 99.96 % does not show
    /// as 100.0 %), or `-` when there is no point.
    pub fn percent(self) -> String {
        if self.total == 0 {
            return "-".into();
        }
        let tenths = self.hit * 1000 / self.total;
        format!("{}.{}", tenths / 10, tenths % 10)
    }

    /// `hit/total (pct %)`, or `-` when there is no point.
    pub fn cell(self) -> String {
        if self.total == 0 {
            return "-".into();
        }
        format!("{}/{} ({} %)", self.hit, self.total, self.percent())
    }
}

/// Tallies by module, then by kind; plus the sum over all modules.
#[derive(Debug, Default)]
pub struct Summary {
    pub blocks: BTreeMap<String, BTreeMap<Kind, Tally>>,
    pub all: BTreeMap<Kind, Tally>,
}

pub fn summarize(points: &[Point]) -> Summary {
    let mut s = Summary::default();
    for p in points {
        s.blocks
            .entry(p.module.clone())
            .or_default()
            .entry(p.kind)
            .or_default()
            .add(p.count);
        s.all.entry(p.kind).or_default().add(p.count);
    }
    s
}

impl Summary {
    /// A Markdown table: one row per block and one for all of them; a column
    /// per kind of point that occurs.
    pub fn table(&self) -> String {
        let kinds: Vec<Kind> = Kind::ALL
            .into_iter()
            .filter(|k| self.all.contains_key(k))
            .collect();
        let mut t = String::from("| block |");
        for k in &kinds {
            write!(t, " {} |", k.name()).unwrap();
        }
        t.push_str("\n| --- |");
        t.push_str(&" --- |".repeat(kinds.len()));
        t.push('\n');
        let row = |t: &mut String, name: &str, m: &BTreeMap<Kind, Tally>| {
            write!(t, "| {name} |").unwrap();
            for k in &kinds {
                write!(t, " {} |", m.get(k).copied().unwrap_or_default().cell()).unwrap();
            }
            t.push('\n');
        };
        for (name, m) in &self.blocks {
            row(&mut t, &format!("`{name}`"), m);
        }
        row(&mut t, "all", &self.all);
        t
    }
}

/// One Markdown table of several summaries side by side (e.g. the shipped
/// vectors, the random tests, both): a row per block, a column per kind, each
/// cell the percentages in the order of `runs` (`-` where a run has no point
/// of that kind in that block), and a last column with the points of each
/// kind in the last run.
pub fn side_by_side(runs: &[(&str, &Summary)]) -> String {
    let kinds: Vec<Kind> = Kind::ALL
        .into_iter()
        .filter(|k| runs.iter().any(|(_, s)| s.all.contains_key(k)))
        .collect();
    let names: Vec<&str> = runs.iter().map(|(n, _)| *n).collect();
    let order = names.join(" / ");
    let mut t = String::from("| block |");
    for k in &kinds {
        write!(t, " {} % ({order}) |", k.name()).unwrap();
    }
    t.push_str(" points |\n| --- |");
    t.push_str(&" ---: |".repeat(kinds.len() + 1));
    t.push('\n');
    let mut blocks: Vec<&String> = runs.iter().flat_map(|(_, s)| s.blocks.keys()).collect();
    blocks.sort();
    blocks.dedup();
    let last = runs.last().map(|(_, s)| *s);
    let row = |t: &mut String, name: &str, get: &dyn Fn(&Summary, Kind) -> Option<Tally>| {
        write!(t, "| {name} |").unwrap();
        for &k in &kinds {
            let cells: Vec<String> = runs
                .iter()
                .map(|(_, s)| get(s, k).unwrap_or_default().percent())
                .collect();
            write!(t, " {} |", cells.join(" / ")).unwrap();
        }
        let points: Vec<String> = kinds
            .iter()
            .map(|&k| {
                let n = last.and_then(|s| get(s, k)).map_or(0, |x| x.total);
                format!("{n} {}", k.name())
            })
            .collect();
        writeln!(t, " {} |", points.join(", ")).unwrap();
    };
    for b in blocks {
        row(&mut t, &format!("`{b}`"), &|s, k| {
            s.blocks.get(b).and_then(|m| m.get(&k)).copied()
        });
    }
    row(&mut t, "all", &|s, k| s.all.get(&k).copied());
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(page: &str, l: u32, count: u64) -> String {
        format!(
            "C '\x01t\x02line\x01page\x02{page}\x01f\x02hw/rtl/x.sv\x01l\x02{l}\x01n\x024\x01o\x02block' {count}\n"
        )
    }

    #[test]
    fn parses_points_and_tallies_per_block() {
        let text = format!(
            "# SystemC::Coverage-3\n{}{}{}{}",
            line("v_line/dma_rd", 10, 3),
            line("v_line/dma_rd", 11, 0),
            line("v_toggle/dma_rd", 12, 1),
            line("v_branch/csr__Q3", 7, 0),
        );
        let points = parse(&text).unwrap();
        assert_eq!(points.len(), 4);
        assert_eq!(
            points[0],
            Point {
                kind: Kind::Line,
                module: "dma_rd".into(),
                file: "hw/rtl/x.sv".into(),
                line: 10,
                what: "block".into(),
                count: 3
            }
        );
        let s = summarize(&points);
        assert_eq!(s.blocks["dma_rd"][&Kind::Line], Tally { hit: 1, total: 2 });
        assert_eq!(
            s.blocks["dma_rd"][&Kind::Toggle],
            Tally { hit: 1, total: 1 }
        );
        assert_eq!(s.blocks["csr"][&Kind::Branch], Tally { hit: 0, total: 1 });
        assert_eq!(s.all[&Kind::Line], Tally { hit: 1, total: 2 });
        let t = s.table();
        assert!(t.starts_with("| block | line | branch | toggle |\n"), "{t}");
        assert!(t.contains("| `csr` | - | 0/1 (0.0 %) | - |"), "{t}");
        assert!(
            t.contains("| `dma_rd` | 1/2 (50.0 %) | - | 1/1 (100.0 %) |"),
            "{t}"
        );
    }

    #[test]
    fn a_block_specialized_twice_counts_each_point_once() {
        let text = format!(
            "# SystemC::Coverage-3\n{}{}{}",
            line("v_line/ack_gen", 10, 0),
            line("v_line/ack_gen__Q10", 10, 5),
            line("v_line/ack_gen__Q10", 11, 0),
        );
        let points = parse(&text).unwrap();
        assert_eq!(points.len(), 2);
        assert_eq!((points[0].line, points[0].count), (10, 5));
        let s = summarize(&points);
        assert_eq!(s.blocks["ack_gen"][&Kind::Line], Tally { hit: 1, total: 2 });
    }

    #[test]
    fn runs_side_by_side_show_percentages_in_order() {
        let one = format!(
            "# SystemC::Coverage-3\n{}{}",
            line("v_line/csr", 1, 1),
            line("v_line/csr", 2, 0)
        );
        let both = format!("{one}{}", line("v_toggle/pfc", 3, 0));
        let a = summarize(&parse(&one).unwrap());
        let b = summarize(&parse(&both.replace("' 0\n", "' 2\n")).unwrap());
        let t = side_by_side(&[("vectors", &a), ("all", &b)]);
        assert!(
            t.starts_with(
                "| block | line % (vectors / all) | toggle % (vectors / all) | points |\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("| `csr` | 50.0 / 100.0 | - / - | 2 line, 0 toggle |"),
            "{t}"
        );
        assert!(
            t.contains("| `pfc` | - / - | - / 100.0 | 0 line, 1 toggle |"),
            "{t}"
        );
        assert!(
            t.contains("| all | 50.0 / 100.0 | - / 100.0 | 2 line, 1 toggle |"),
            "{t}"
        );
    }

    #[test]
    fn holes_list_each_point_never_hit() {
        let text = format!(
            "# SystemC::Coverage-3\n{}{}{}",
            line("v_line/csr", 9, 0),
            line("v_line/csr", 2, 4),
            line("v_line/pfc__Q1", 3, 0),
        );
        let h = holes(&parse(&text).unwrap());
        assert_eq!(h, "x.sv:3 line pfc block\nx.sv:9 line csr block\n");
    }

    #[test]
    fn a_percentage_is_rounded_down() {
        assert_eq!(
            Tally {
                hit: 9999,
                total: 10000
            }
            .cell(),
            "9999/10000 (99.9 %)"
        );
        assert_eq!(Tally::default().cell(), "-");
    }

    #[test]
    fn malformed_lines_name_line_and_reason() {
        assert_eq!(parse("C 'x' 1\n"), Err(CoverageError::NoHeader));
        let bad = |body: &str| parse(&format!("# SystemC::Coverage-3\n{body}")).unwrap_err();
        assert_eq!(
            bad("X\n"),
            CoverageError::Malformed {
                line: 2,
                reason: "does not start with C '"
            }
        );
        assert_eq!(
            bad(&line("v_line/a", 1, 0).replace("' 0", "' many")),
            CoverageError::Malformed {
                line: 2,
                reason: "count is not a number"
            }
        );
        assert_eq!(
            bad(&line("v_expr/a", 1, 0)),
            CoverageError::Malformed {
                line: 2,
                reason: "unknown page kind"
            }
        );
        assert_eq!(
            bad("C '\x01page\x02v_line/a\x01l\x021' 0\n"),
            CoverageError::Malformed {
                line: 2,
                reason: "no file"
            }
        );
    }
}
