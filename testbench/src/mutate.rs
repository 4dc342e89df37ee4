//! Single-operator mutants of the RTL (`rnic-mutate`, issue 14): where in
//! `hw/rtl/*.sv` a mutant can go, and the seeded sample a run tries.
//!
//! Mutants only go into behaviour: the bodies of `always_comb`, `always_ff`
//! and `always` blocks and `assign` statements, never into declarations,
//! parameters, the arithmetic and constants of bit selects, `for` headers,
//! or a statement that calls a system task (`$error` in an
//! elaboration-time check, `$display`). Operators:
//!
//! | op | mutant |
//! | --- | --- |
//! | `rel` | `==` and `!=` swapped; `<` to `<=`, `>` to `>=` and back (a `<=` only inside parentheses, where it is not a non-blocking assignment) |
//! | `logic` | `&&` and `||` swapped; a unary `!` dropped |
//! | `arith` | binary `+` and `-` swapped (not inside `[...]`) |
//! | `const` | `1'b0`/`1'b1` and `'0`/`'1` flipped; a plain decimal constant plus one |
//! | `stuck` | the right-hand side of an assignment replaced by `'0` (unless it is a lone constant: that is `const`'s) |
//!
//! A width written as an expression in a cast (`(LW+1)'(x)`) is still a
//! site (a `+` or a constant inside it); such a mutant usually fails
//! Verilator's width check and is reported as no-build, outside the score.

/// A mutant: replace `file[start..end]` with `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub file: String,
    pub line: u32,
    pub start: usize,
    pub end: usize,
    pub op: &'static str,
    pub from: String,
    pub to: String,
}

impl Site {
    /// The mutated text of the file this site was found in.
    pub fn apply(&self, text: &str) -> String {
        format!("{}{}{}", &text[..self.start], self.to, &text[self.end..])
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tk {
    Ident,
    /// A literal: `12`, `4'hF`, `1'b0`, `'0`.
    Number,
    Punct,
}

#[derive(Clone, Debug)]
struct Token<'a> {
    kind: Tk,
    start: usize,
    end: usize,
    text: &'a str,
}

const PUNCT: &[&str] = &[
    "<<<", ">>>", "===", "!==", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "->", "+:", "-:",
    "++", "--", "+=", "-=", "::",
];

fn tokens(src: &str) -> Vec<Token<'_>> {
    let b = src.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if src[i..].starts_with("//") {
            i = src[i..].find('\n').map_or(b.len(), |n| i + n);
            continue;
        }
        if src[i..].starts_with("/*") {
            i = src[i + 2..].find("*/").map_or(b.len(), |n| i + 2 + n + 2);
            continue;
        }
        let kind = if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            Tk::Punct
        } else if c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c == b'`' {
            i += 1;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            Tk::Ident
        } else if c.is_ascii_digit()
            || (c == b'\'' && i + 1 < b.len() && b"01xXzZbBdDhHoOsS".contains(&b[i + 1]))
        {
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            // A base and its digits: 4'hF, 'd3, 'sb1; a fill: '0; a cast 32'( is not one.
            if i < b.len() && b[i] == b'\'' && i + 1 < b.len() && b[i + 1] != b'(' {
                i += 1;
                if i < b.len() && (b[i] == b's' || b[i] == b'S') {
                    i += 1;
                }
                if i < b.len() && b"bBdDhHoO".contains(&b[i]) {
                    i += 1;
                }
                while i < b.len() && (b[i].is_ascii_hexdigit() || b"xXzZ_?".contains(&b[i])) {
                    i += 1;
                }
            }
            Tk::Number
        } else {
            i += PUNCT
                .iter()
                .find(|p| src[i..].starts_with(**p))
                .map_or(1, |p| p.len());
            Tk::Punct
        };
        out.push(Token {
            kind,
            start,
            end: i,
            text: &src[start..i],
        });
    }
    out
}

/// The sites of one file's text.
pub fn sites(file: &str, src: &str) -> Vec<Site> {
    let toks = tokens(src);
    let line_of = |at: usize| 1 + src[..at].bytes().filter(|&c| c == b'\n').count() as u32;
    let mut out = Vec::new();
    let mut push = |op: &'static str, start: usize, end: usize, to: String| {
        out.push(Site {
            file: file.to_string(),
            line: line_of(start),
            start,
            end,
            op,
            from: src[start..end].to_string(),
            to,
        });
    };
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let body = match t.text {
            "always_comb" | "always_ff" | "always" | "always_latch" => {
                let mut j = i + 1;
                if toks.get(j).is_some_and(|t| t.text == "@") {
                    j = skip_group(&toks, j + 1);
                }
                if toks.get(j).is_some_and(|t| t.text == "begin") {
                    end_of_block(&toks, j)
                } else {
                    (j, end_of_statement(&toks, j))
                }
            }
            "assign" => (i + 1, end_of_statement(&toks, i + 1)),
            _ => {
                i += 1;
                continue;
            }
        };
        let (from, to) = body;
        // Statement by statement, so a statement with a system task is left whole.
        let mut s = from;
        while s < to {
            let e = end_of_statement(&toks, s).min(to);
            let stmt = &toks[s..e.min(toks.len())];
            if !stmt.iter().any(|t| t.text.starts_with('$')) {
                statement_sites(stmt, &mut push);
            }
            s = e + 1;
        }
        i = to + 1;
    }
    out
}

/// Index past the balanced group that opens at `j` (`(`), or `j` itself.
fn skip_group(toks: &[Token], j: usize) -> usize {
    if toks.get(j).map(|t| t.text) != Some("(") {
        return j;
    }
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(j) {
        match t.text {
            "(" => depth += 1,
            ")" => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// (first token inside, index of the matching `end`) of the `begin` at `j`.
fn end_of_block(toks: &[Token], j: usize) -> (usize, usize) {
    let mut depth = 0;
    for (k, t) in toks.iter().enumerate().skip(j) {
        match t.text {
            "begin" => depth += 1,
            "end" => {
                depth -= 1;
                if depth == 0 {
                    return (j + 1, k);
                }
            }
            _ => {}
        }
    }
    (j + 1, toks.len())
}

/// Index of the `;` that ends the statement starting at `j` (outside any
/// parentheses, so a `for` header's `;` do not end it), or of a keyword
/// that ends one without a `;` (`begin`, `end`, `else`, `endcase`, a case
/// label's `:` is not one: the label's statement follows it).
fn end_of_statement(toks: &[Token], j: usize) -> usize {
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(j) {
        match t.text {
            "(" | "[" | "{" => depth += 1,
            ")" | "]" | "}" => depth -= 1,
            ";" if depth == 0 => return k,
            "begin" | "end" | "else" | "endcase" | "case" | "unique" | "priority"
                if depth == 0 && k > j =>
            {
                return k - 1
            }
            _ => {}
        }
    }
    toks.len()
}

fn statement_sites(stmt: &[Token], push: &mut impl FnMut(&'static str, usize, usize, String)) {
    let (mut paren, mut bracket, mut brace) = (0i32, 0i32, 0i32);
    let mut in_for = false;
    let mut for_depth = 0;
    let mut assign_at: Option<usize> = None;
    for (k, t) in stmt.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| &stmt[p]);
        let operand_before = prev.is_some_and(|p| {
            p.kind != Tk::Punct || p.text == ")" || p.text == "]" || p.text == "}"
        });
        match t.text {
            "for" => {
                in_for = true;
                for_depth = paren;
            }
            "(" => paren += 1,
            ")" => {
                paren -= 1;
                if in_for && paren == for_depth {
                    in_for = false;
                }
            }
            "[" => bracket += 1,
            "]" => bracket -= 1,
            "{" => brace += 1,
            "}" => brace -= 1,
            _ => {}
        }
        if in_for {
            continue;
        }
        let top = paren == 0 && bracket == 0 && brace == 0;
        let mut p = |op, to: &str| push(op, t.start, t.end, to.to_string());
        match (t.kind, t.text) {
            (Tk::Punct, "==") => p("rel", "!="),
            (Tk::Punct, "!=") => p("rel", "=="),
            (Tk::Punct, "<") => p("rel", "<="),
            (Tk::Punct, ">") => p("rel", ">="),
            (Tk::Punct, ">=") => p("rel", ">"),
            (Tk::Punct, "<=") if paren > 0 => p("rel", "<"),
            (Tk::Punct, "&&") => p("logic", "||"),
            (Tk::Punct, "||") => p("logic", "&&"),
            (Tk::Punct, "!") => p("logic", ""),
            (Tk::Punct, "+") if bracket == 0 && operand_before => p("arith", "-"),
            (Tk::Punct, "-") if bracket == 0 && operand_before => p("arith", "+"),
            (Tk::Number, "1'b0") => p("const", "1'b1"),
            (Tk::Number, "1'b1") => p("const", "1'b0"),
            (Tk::Number, "'0") => p("const", "'1"),
            (Tk::Number, "'1") => p("const", "'0"),
            (Tk::Number, n)
                if bracket == 0
                    && n.bytes().all(|c| c.is_ascii_digit())
                    && stmt.get(k + 1).map(|x| x.text) != Some("'")
                    && prev.map(|x| x.text) != Some("#") =>
            {
                if let Ok(v) = n.parse::<u64>() {
                    p("const", &(v + 1).to_string());
                }
            }
            _ => {}
        }
        if top && assign_at.is_none() && (t.text == "=" || t.text == "<=") {
            assign_at = Some(k);
        }
    }
    if let Some(a) = assign_at {
        let rhs = &stmt[a + 1..];
        // A constant alone on the right is the `const` operator's.
        let lone_constant = rhs.len() == 1 && rhs[0].kind == Tk::Number;
        if let (Some(first), Some(last), false) = (rhs.first(), rhs.last(), lone_constant) {
            push("stuck", first.start, last.end, "'0".to_string());
        }
    }
}

/// SplitMix64: the sample's shuffle, the same for a seed on every machine.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Indices into a list of `n` sites: a seeded shuffle's first `size`.
pub fn sample(n: usize, size: usize, seed: u64) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    let mut st = seed;
    for i in (1..n).rev() {
        let j = (splitmix(&mut st) % (i as u64 + 1)) as usize;
        idx.swap(i, j);
    }
    idx.truncate(size);
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn muts(src: &str) -> Vec<(u32, &'static str, String, String)> {
        sites("x.sv", src)
            .into_iter()
            .map(|s| (s.line, s.op, s.from, s.to))
            .collect()
    }

    fn m(line: u32, op: &'static str, from: &str, to: &str) -> (u32, &'static str, String, String) {
        (line, op, from.into(), to.into())
    }

    #[test]
    fn declarations_parameters_and_checks_are_left_alone() {
        let src = "module x #(parameter int N = 4) (input logic [N-1:0] a);\n\
                   localparam int M = N + 1;\n\
                   if (N < 2) begin : g_check\n  initial $error(\"N < 2\");\nend\n\
                   logic [M-1:0] b;\nendmodule\n";
        assert_eq!(muts(src), vec![]);
    }

    #[test]
    fn operators_in_an_always_comb() {
        let src = "always_comb begin\n\
                   x_d = x_q;\n\
                   if (a == b && !c) x_d = x_q + 8'd1;\n\
                   end\n";
        assert_eq!(
            muts(src),
            vec![
                m(2, "stuck", "x_q", "'0"),
                m(3, "rel", "==", "!="),
                m(3, "logic", "&&", "||"),
                m(3, "logic", "!", ""),
                m(3, "arith", "+", "-"),
                m(3, "stuck", "x_q + 8'd1", "'0"),
            ]
        );
    }

    #[test]
    fn a_non_blocking_assignment_is_not_a_relation() {
        let src = "always_ff @(posedge clk) begin\n\
                   if (rst) v_q <= 1'b0;\n\
                   else if (n <= 3) v_q <= '0;\n\
                   end\n";
        assert_eq!(
            muts(src),
            vec![
                m(2, "const", "1'b0", "1'b1"),
                m(3, "rel", "<=", "<"),
                m(3, "const", "3", "4"),
                m(3, "const", "'0", "'1"),
            ]
        );
    }

    #[test]
    fn assign_casts_indices_for_headers_comments_and_tasks() {
        let src = "assign y = 32'(a[i-1]) - b; // a - b\n\
                   always_comb begin\n\
                   for (int i = 0; i < 4; i++) z[i] = '0;\n\
                   if (bad) $display(\"a < b\");\n\
                   end\n";
        assert_eq!(
            muts(src),
            vec![
                m(1, "arith", "-", "+"),
                m(1, "stuck", "32'(a[i-1]) - b", "'0"),
                m(3, "const", "'0", "'1"),
            ]
        );
    }

    #[test]
    fn apply_replaces_the_site_only() {
        let src = "assign y = a < b;\n";
        let s = &sites("x.sv", src)[0];
        assert_eq!(s.apply(src), "assign y = a <= b;\n");
    }

    #[test]
    fn the_sample_is_seeded_and_distinct() {
        let a = sample(1000, 200, 7);
        assert_eq!(a, sample(1000, 200, 7));
        assert_ne!(a, sample(1000, 200, 8));
        let mut d = a.clone();
        d.sort();
        d.dedup();
        assert_eq!(d.len(), 200);
        assert_eq!(sample(5, 200, 1).len(), 5);
    }
}
