#!/usr/bin/env python3
"""Puts measured figures into a markdown file.

Every block between `<!-- figure:NAME -->` and `<!-- /figure:NAME -->` in
FILE is replaced by DIR/NAME.md, or, when that does not exist, by
DIR/NAME.header followed by DIR/NAME.*.row in key order (a table whose rows
come from several tests). A marker with no figure in DIR is an error, and so
is a figure in DIR that FILE has no marker for: nothing measured is silently
left out, nothing stale silently kept.

usage: splice_figures.py DIR FILE
"""
import pathlib
import re
import sys


def figure(d: pathlib.Path, name: str) -> str:
    whole = d / f"{name}.md"
    if whole.exists():
        return whole.read_text()
    header = d / f"{name}.header"
    rows = sorted(d.glob(f"{name}.*.row"))
    if not header.exists() or not rows:
        sys.exit(f"{d}: no figure {name!r} (run scripts/figures.sh)")
    return header.read_text() + "".join(r.read_text() for r in rows)


def names_in(d: pathlib.Path) -> set:
    out = set()
    for p in d.iterdir():
        if p.suffix in (".md", ".header"):
            out.add(p.stem)
    return out


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    d, f = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    text = f.read_text()
    pat = re.compile(r"(<!-- figure:([\w.-]+) -->\n)(.*?)(<!-- /figure:\2 -->)", re.S)
    seen = set()

    def repl(m: re.Match) -> str:
        seen.add(m.group(2))
        return m.group(1) + figure(d, m.group(2)) + m.group(4)

    new = pat.sub(repl, text)
    unplaced = names_in(d) - seen
    if unplaced:
        sys.exit(f"{f}: no marker for figure(s) {sorted(unplaced)}")
    if new != text:
        f.write_text(new)
    print(f"{f}: {len(seen)} figures")


if __name__ == "__main__":
    main()
