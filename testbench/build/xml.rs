//! Ports and parameters of a unit's top module from `verilator --xml-only`:
//! port list, dtype widths resolved through the typetable, resolved
//! parameter values, and the check that every override took effect.

use std::collections::HashMap;

use crate::util::fail;
use crate::Variant;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: u32,
}

/// A parameter (not a localparam) of the top module as Verilator resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    /// Decimal for an integer, else the constant as the XML writes it.
    pub value: String,
    /// Width and bits of an integer constant of up to 64 bits.
    pub bits: Option<(u32, u64)>,
}

/// The files of the modules in the design (`<module_files>`), as Verilator
/// names them (absolute paths here, since the sources are given so).
pub fn module_files(xml: &str, top: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(xml)
        .unwrap_or_else(|e| fail(format!("{top}: cannot parse Verilator's XML: {e}")));
    let list = doc
        .descendants()
        .find(|n| n.has_tag_name("module_files"))
        .unwrap_or_else(|| fail(format!("{top}: Verilator's XML has no <module_files>")));
    let files: Vec<String> = list
        .children()
        .filter(|n| n.has_tag_name("file"))
        .filter_map(|n| n.attribute("filename").map(String::from))
        .collect();
    if files.is_empty() {
        fail(format!("{top}: Verilator's XML lists no module file"));
    }
    files
}

/// The ports but `clk` and `rst` of module `module_name`, in declaration
/// order, and its parameters; `top` names the unit in messages.
pub fn parse_top(xml: &str, module_name: &str, top: &str) -> (Vec<Port>, Vec<Param>) {
    let doc = roxmltree::Document::parse(xml)
        .unwrap_or_else(|e| fail(format!("{top}: cannot parse Verilator's XML: {e}")));
    let types: HashMap<&str, roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.has_tag_name("typetable"))
        .flat_map(|t| t.descendants())
        .filter(|n| n.is_element())
        .filter_map(|n| n.attribute("id").map(|id| (id, n)))
        .collect();
    let module = doc
        .descendants()
        .find(|n| n.has_tag_name("module") && n.attribute("topModule") == Some("1"))
        .unwrap_or_else(|| fail(format!("{top}: Verilator's XML has no top module")));
    if module.attribute("name") != Some(module_name) {
        fail(format!(
            "{top}: Verilator's XML names the top module {:?}",
            module.attribute("name")
        ));
    }
    let mut params = Vec::new();
    for var in module
        .children()
        .filter(|n| n.has_tag_name("var") && n.attribute("param") == Some("true"))
    {
        let name = var.attribute("name").unwrap_or_default();
        // Parameters without a constant value (none in this design) are left out.
        let Some(text) = var
            .children()
            .find(|n| n.has_tag_name("const"))
            .and_then(|n| n.attribute("name"))
        else {
            continue;
        };
        let signed_type = matches!(
            var.attribute("vartype"),
            Some("int" | "integer" | "shortint" | "longint" | "byte")
        );
        let (value, bits) = match const_bits(text) {
            Some((width, signed, n)) => {
                let w = width.unwrap_or(64);
                let v = if signed || signed_type {
                    sign_extend(n, w).to_string()
                } else {
                    n.to_string()
                };
                (v, Some((w, n)))
            }
            None => (text.to_string(), None),
        };
        params.push(Param {
            name: name.to_string(),
            value,
            bits,
        });
    }
    let mut pins: Vec<(u32, Port)> = Vec::new();
    for var in module.children().filter(|n| n.has_tag_name("var")) {
        let Some(dir) = var.attribute("dir") else {
            continue;
        };
        let name = var.attribute("name").unwrap_or_default().to_string();
        let input = match dir {
            "input" => true,
            "output" => false,
            other => fail(format!(
                "{top}: port {name} has direction {other}; only input and output are supported"
            )),
        };
        if name.is_empty()
            || name.as_bytes()[0].is_ascii_digit()
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        {
            fail(format!(
                "{top}: port {name:?} is not a plain identifier; not supported"
            ));
        }
        let dtype = var
            .attribute("dtype_id")
            .unwrap_or_else(|| fail(format!("{top}: port {name} has no dtype_id")));
        let width = dtype_width(&types, dtype, top, &name, 0);
        let pin: u32 = var
            .attribute("pinIndex")
            .and_then(|p| p.parse().ok())
            .unwrap_or(u32::MAX);
        pins.push((pin, Port { name, input, width }));
    }
    pins.sort_by_key(|(pin, _)| *pin);
    let mut ports: Vec<Port> = pins.into_iter().map(|(_, p)| p).collect();
    for special in ["clk", "rst"] {
        match ports.iter().position(|p| p.name == special) {
            Some(i) if ports[i].input && ports[i].width == 1 => {
                ports.remove(i);
            }
            _ => fail(format!(
                "{top}: the binding drives a 1-bit input `{special}`, which the RTL lacks"
            )),
        }
    }
    (ports, params)
}

/// Each override of `u` must be a parameter of the module whose resolved
/// value is the override's (compared as bits when both are integers).
pub fn check_overrides(u: &Variant, params: &[Param], top: &str) {
    for (name, value) in u.params {
        let Some(p) = params.iter().find(|p| p.name == *name) else {
            fail(format!(
                "{top}: `{}` has no parameter {name} (localparams cannot be overridden)",
                u.top
            ))
        };
        if let (Some((w, got)), Some((_, _, want))) = (p.bits, const_bits(value)) {
            let mask = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
            if got & mask != want & mask {
                fail(format!(
                    "{top}: Verilator resolved parameter {name} to {}, not to the override {value}",
                    p.value
                ));
            }
        }
    }
}

/// Width in bits of dtype `id`: basic types with left/right, packed arrays,
/// packed structs/unions, enums and typedef references.
fn dtype_width(
    types: &HashMap<&str, roxmltree::Node>,
    id: &str,
    top: &str,
    port: &str,
    depth: u32,
) -> u32 {
    if depth > 64 {
        fail(format!("{top}: port {port}: dtype nesting too deep"));
    }
    let node = types.get(id).unwrap_or_else(|| {
        fail(format!(
            "{top}: port {port}: dtype {id} not in the typetable"
        ))
    });
    let sub = |n: &roxmltree::Node| {
        let s = n.attribute("sub_dtype_id").unwrap_or_else(|| {
            fail(format!(
                "{top}: port {port}: {} without sub_dtype_id",
                n.tag_name().name()
            ))
        });
        dtype_width(types, s, top, port, depth + 1)
    };
    let attr_i64 =
        |n: &roxmltree::Node, a: &str| n.attribute(a).and_then(|v| v.parse::<i64>().ok());
    match node.tag_name().name() {
        "basicdtype" => match (attr_i64(node, "left"), attr_i64(node, "right")) {
            (Some(l), Some(r)) => ((l - r).unsigned_abs() + 1) as u32,
            _ => match node.attribute("name").unwrap_or_default() {
                "logic" | "bit" | "reg" | "wire" => 1,
                "byte" => 8,
                "shortint" => 16,
                "int" | "integer" => 32,
                "longint" | "time" => 64,
                other => fail(format!("{top}: port {port}: unsupported basic type {other}")),
            },
        },
        "refdtype" | "enumdtype" | "memberdtype" | "typedefdtype" => sub(node),
        "packarraydtype" => {
            let range = node
                .children()
                .find(|n| n.has_tag_name("range"))
                .unwrap_or_else(|| fail(format!("{top}: port {port}: packed array without range")));
            let bounds: Vec<i64> = range
                .children()
                .filter(|n| n.has_tag_name("const"))
                .map(|n| parse_const(n.attribute("name").unwrap_or_default(), top, port))
                .collect();
            if bounds.len() != 2 {
                fail(format!(
                    "{top}: port {port}: packed array range is not two constants"
                ));
            }
            ((bounds[0] - bounds[1]).unsigned_abs() + 1) as u32 * sub(node)
        }
        "structdtype" | "uniondtype" => {
            if node.attribute("packed") == Some("false") {
                fail(format!("{top}: port {port}: unpacked struct ports are not supported"));
            }
            let members = node
                .children()
                .filter(|n| n.has_tag_name("memberdtype"))
                .map(|m| sub(&m));
            if node.has_tag_name("structdtype") {
                members.sum()
            } else {
                members.max().unwrap_or(0)
            }
        }
        other => fail(format!(
            "{top}: port {port}: type {other} is not supported (only packed types can be ports of the binding)"
        )),
    }
}

/// A Verilator XML constant such as `32'sh1f`, `8'd3` or `5`.
fn parse_const(s: &str, top: &str, port: &str) -> i64 {
    match const_bits(s) {
        Some((Some(w), true, n)) => sign_extend(n, w),
        Some((_, _, n)) => n as i64,
        None => fail(format!("{top}: port {port}: cannot parse constant {s:?}")),
    }
}

/// A Verilog integer constant such as `32'sh1f`, `8'd3`, `'h80` or `-5`, of
/// up to 64 bits: its width when sized, whether it is signed, its bits.
/// `None` for anything else (strings, reals, wider or malformed constants).
fn const_bits(s: &str) -> Option<(Option<u32>, bool, u64)> {
    let s: String = s
        .chars()
        .filter(|&c| c != '_' && !c.is_whitespace())
        .collect();
    let Some((w, v)) = s.split_once('\'') else {
        let n: i64 = s.parse().ok()?;
        return Some((None, true, n as u64));
    };
    let width = match w {
        "" => None,
        w => Some(w.parse::<u32>().ok().filter(|w| (1..=64).contains(w))?),
    };
    let signed = v.starts_with(['s', 'S']);
    let v = v.trim_start_matches(['s', 'S']);
    let radix = match v.chars().next()? {
        'h' | 'H' => 16,
        'd' | 'D' => 10,
        'o' | 'O' => 8,
        'b' | 'B' => 2,
        _ => return None,
    };
    let n = u64::from_str_radix(&v[1..], radix).ok()?;
    match width {
        Some(w) if w < 64 && n >> w != 0 => None,
        _ => Some((width, signed, n)),
    }
}

/// `n` as a `width`-bit two's complement number.
fn sign_extend(n: u64, width: u32) -> i64 {
    if width == 0 || width >= 64 {
        n as i64
    } else {
        let shift = 64 - width;
        ((n << shift) as i64) >> shift
    }
}
