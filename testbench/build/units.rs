//! The units (tops and parameter variants) to verilate: their checks, and
//! their names, labels and `-G` arguments.

use crate::util::fail;
use crate::{Variant, RESERVED, VARIANTS};

/// Every unit: the `tops` of hw/tops.txt (their own name, no overrides), then the
/// [`VARIANTS`], checked: names of `[a-z][a-z0-9_]*`, distinct (also in CamelCase),
/// not reserved; a variant's top among `tops`; parameters named by identifiers,
/// each at most once, with non-empty values.
pub fn units(tops: &[&'static str]) -> Vec<Variant> {
    let mut units: Vec<Variant> = tops
        .iter()
        .map(|&top| Variant {
            name: top,
            top,
            params: &[],
        })
        .collect();
    for v in VARIANTS {
        if !tops.contains(&v.top) {
            fail(format!(
                "variant {:?}: its top {:?} is not in hw/tops.txt",
                v.name, v.top
            ));
        }
        if v.params.is_empty() {
            fail(format!(
                "variant {:?} overrides no parameter: it would be `{}` itself",
                v.name, v.top
            ));
        }
        for (i, (name, value)) in v.params.iter().enumerate() {
            if !is_identifier(name) {
                fail(format!(
                    "variant {:?}: parameter name {name:?} is not an identifier",
                    v.name
                ));
            }
            if v.params[..i].iter().any(|(n, _)| n == name) {
                fail(format!(
                    "variant {:?}: parameter {name} is given twice",
                    v.name
                ));
            }
            if value.trim().is_empty() || value.chars().any(char::is_control) {
                fail(format!(
                    "variant {:?}: parameter {name} has the value {value:?}; a Verilog constant is needed",
                    v.name
                ));
            }
        }
        units.push(Variant {
            name: v.name,
            top: v.top,
            params: v.params,
        });
    }
    for (i, u) in units.iter().enumerate() {
        let name = u.name;
        if !name.starts_with(|c: char| c.is_ascii_lowercase())
            || !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            fail(format!(
                "top or variant name {name:?}: only [a-z][a-z0-9_]* is supported"
            ));
        }
        if RESERVED.contains(&name) {
            fail(format!("name {name:?} is reserved by the build script"));
        }
        if let Some(o) = units[..i]
            .iter()
            .find(|o| o.name == name || camel(o.name) == camel(name))
        {
            fail(format!(
                "top or variant names {:?} and {name:?} collide (Rust name Rtl{})",
                o.name,
                camel(name)
            ));
        }
    }
    units
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && !s.as_bytes()[0].is_ascii_digit()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Variant {
    /// `-G<NAME>=<VALUE>` for each override.
    pub fn g_args(&self) -> Vec<String> {
        self.params
            .iter()
            .map(|(n, v)| format!("-G{n}={v}"))
            .collect()
    }

    /// For generated messages (plain identifiers): `dma_rd`, or
    /// `dma_rd_t128 (dma_rd)`.
    pub fn who(&self) -> String {
        if self.name == self.top {
            self.name.to_string()
        } else {
            format!("{} ({})", self.name, self.top)
        }
    }

    /// For messages: `dma_rd`, or `dma_rd_t128 (dma_rd, TAGS=128 BUF_LINES=1024)`.
    pub fn label(&self) -> String {
        if self.params.is_empty() && self.name == self.top {
            return self.name.to_string();
        }
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        format!("{} ({}, {})", self.name, self.top, params.join(" "))
    }
}

pub fn camel(top: &str) -> String {
    top.split('_')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut c = s.chars();
            let first = c.next().unwrap().to_ascii_uppercase();
            std::iter::once(first).chain(c).collect::<String>()
        })
        .collect()
}
