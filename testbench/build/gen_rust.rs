//! Rust side of a unit: its FFI declarations, marker type, `Rtl<..>` alias,
//! `RtlTop` impl and compile-time port checks against the model, for
//! `$OUT_DIR/rtl_bindings.rs`.

use std::fmt::Write as _;

use crate::units::camel;
use crate::xml::{Param, Port};
use crate::Variant;

/// The Rust side of unit `u` (`label` in comments): FFI, marker type,
/// `Rtl<..>` alias, `RtlTop` impl and the compile-time port checks against the
/// model of `u.top`.
pub fn gen_rust(u: &Variant, label: &str, ports: &[Port], params: &[Param]) -> String {
    let (name, top) = (u.name, u.top);
    let cc = camel(name);
    let top_cc = camel(top);
    let model_in = format!("rnic_model::{top}::{top_cc}In");
    let model_out = format!("rnic_model::{top}::{top_cc}Out");
    let inputs: Vec<&Port> = ports.iter().filter(|p| p.input).collect();
    let outputs: Vec<&Port> = ports.iter().filter(|p| !p.input).collect();
    let pairs = |list: &mut dyn Iterator<Item = (&str, &str)>| -> String {
        list.map(|(n, v)| format!("({n:?}, {v:?})"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let overrides = pairs(&mut u.params.iter().copied());
    let values = pairs(&mut params.iter().map(|p| (p.name.as_str(), p.value.as_str())));
    let what = if u.params.is_empty() {
        format!("`hw/rtl/{top}.sv`")
    } else {
        let list: Vec<String> = u.params.iter().map(|(n, v)| format!("`{n}={v}`")).collect();
        format!("`hw/rtl/{top}.sv` with {}", list.join(", "))
    };
    let mut s = String::new();
    let w = &mut s;
    writeln!(
        w,
        "\n// ---- {label} ------------------------------------------------------------\n\
         \n\
         #[allow(dead_code, clippy::missing_safety_doc)]\n\
         mod {name}_ffi {{\n\
         \x20   use core::ffi::{{c_char, c_int, c_void}};\n\
         \x20   extern \"C\" {{\n\
         \x20       pub fn rtl_{name}_new() -> *mut c_void;\n\
         \x20       pub fn rtl_{name}_delete(h: *mut c_void);\n\
         \x20       pub fn rtl_{name}_set_input(h: *mut c_void, idx: u32, words: *const u64);\n\
         \x20       pub fn rtl_{name}_get_input(h: *mut c_void, idx: u32, words: *mut u64);\n\
         \x20       pub fn rtl_{name}_get_output(h: *mut c_void, idx: u32, words: *mut u64);\n\
         \x20       pub fn rtl_{name}_set_clk(h: *mut c_void, v: u8);\n\
         \x20       pub fn rtl_{name}_set_rst(h: *mut c_void, v: u8);\n\
         \x20       pub fn rtl_{name}_eval(h: *mut c_void, time: u64) -> u32;\n\
         \x20       pub fn rtl_{name}_trace_open(h: *mut c_void, path: *const c_char) -> c_int;\n\
         \x20       pub fn rtl_{name}_trace_dump(h: *mut c_void, time: u64);\n\
         \x20       pub fn rtl_{name}_trace_flush(h: *mut c_void);\n\
         \x20       pub fn rtl_{name}_trace_close(h: *mut c_void);\n\
         \x20       pub fn rtl_{name}_assert_get(h: *mut c_void, idx: u32, buf: *mut c_char, len: u32) -> c_int;\n\
         \x20   }}\n\
         }}\n\
         \n\
         /// Marker of the Verilated {what}; the binding is [`Rtl{cc}`].\n\
         #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]\n\
         pub struct {cc}Top;\n\
         \n\
         /// The Verilated {what}, implementing [`rnic_model::Dut`] with the\n\
         /// model's [`{model_in}`] and [`{model_out}`].\n\
         pub type Rtl{cc} = Rtl<{cc}Top>;\n\
         \n\
         impl RtlTop for {cc}Top {{\n\
         \x20   type In = {model_in};\n\
         \x20   type Out = {model_out};\n\
         \x20   const NAME: &'static str = \"{top}\";\n\
         \x20   const VARIANT: &'static str = \"{name}\";\n\
         \x20   const PARAMS: &'static [(&'static str, &'static str)] = &[{overrides}];\n\
         \x20   const PARAM_VALUES: &'static [(&'static str, &'static str)] = &[{values}];"
    )
    .unwrap();
    for (konst, list, model) in [
        ("INPUTS", &inputs, &model_in),
        ("OUTPUTS", &outputs, &model_out),
    ] {
        writeln!(w, "    const {konst}: &'static [RtlPort] = &[").unwrap();
        for p in list.iter() {
            writeln!(
                w,
                "        RtlPort {{ name: \"{n}\", width: {wd}, field: field_index(<{model} as rnic_model::Ports>::PORTS, \"{n}\") }},",
                n = p.name,
                wd = p.width
            )
            .unwrap();
        }
        writeln!(w, "    ];").unwrap();
    }
    writeln!(
        w,
        "    const SHIM: Shim = Shim {{\n\
         \x20       new: {name}_ffi::rtl_{name}_new,\n\
         \x20       delete: {name}_ffi::rtl_{name}_delete,\n\
         \x20       set_input: {name}_ffi::rtl_{name}_set_input,\n\
         \x20       get_input: {name}_ffi::rtl_{name}_get_input,\n\
         \x20       get_output: {name}_ffi::rtl_{name}_get_output,\n\
         \x20       set_clk: {name}_ffi::rtl_{name}_set_clk,\n\
         \x20       set_rst: {name}_ffi::rtl_{name}_set_rst,\n\
         \x20       eval: {name}_ffi::rtl_{name}_eval,\n\
         \x20       trace_open: {name}_ffi::rtl_{name}_trace_open,\n\
         \x20       trace_dump: {name}_ffi::rtl_{name}_trace_dump,\n\
         \x20       trace_flush: {name}_ffi::rtl_{name}_trace_flush,\n\
         \x20       trace_close: {name}_ffi::rtl_{name}_trace_close,\n\
         \x20       assert_get: {name}_ffi::rtl_{name}_assert_get,\n\
         \x20   }};\n\
         }}\n"
    )
    .unwrap();
    // Compile-time agreement of the RTL and the model (the message is a
    // plain literal: the unit's and module's names only).
    let who = u.who();
    for (dir, list, model, st) in [
        ("input", &inputs, &model_in, format!("{top_cc}In")),
        ("output", &outputs, &model_out, format!("{top_cc}Out")),
    ] {
        for p in list.iter() {
            writeln!(
                w,
                "const _: () = assert!(rnic_model::ports::port_width(<{model} as rnic_model::Ports>::PORTS, \"{n}\") == {wd}, \
                 \"{who}: RTL {dir} `{n}` is {wd} bits, but {st} has no field `{n}` of width {wd}\");",
                n = p.name,
                wd = p.width
            )
            .unwrap();
        }
        writeln!(
            w,
            "const _: () = assert!(<{model} as rnic_model::Ports>::PORTS.len() == {len}, \
             \"{who}: the RTL has {len} {dir}s (besides clk/rst), but {st} has another number of fields\");",
            len = list.len()
        )
        .unwrap();
    }
    s
}
