#!/usr/bin/env python3
"""Puts measured figures into a markdown file.

Every block between `<!-- figure:NAME -->` and `<!-- /figure:NAME -->` in
FILE is replaced by DIR/NAME.md, or, when that does not exist, by
DIR/NAME.header followed by DIR/NAME.*.row in key order (a table whose rows
come from several tests). A marker with no figure in DIR is an error, and so
is a figure in DIR that FILE has no marker for: nothing measured is silently
left out, nothing stale silently kept.

A figure named with --keep NAME (repeatable) is left as FILE has it when
DIR has none (e.g. the simulator speeds, measured only on request). With
--only NAME (repeatable) every other marker is left as FILE has it (a
script that measures one figure, e.g. scripts/coverage.sh).

usage: splice_figures.py [--keep NAME | --only NAME]... DIR FILE
"""
import pathlib
import re
import sys


def figure(d: pathlib.Path, name: str):
    whole = d / f"{name}.md"
    if whole.exists():
        return whole.read_text()
    header = d / f"{name}.header"
    rows = sorted(d.glob(f"{name}.*.row"))
    if not header.exists() or not rows:
        return None
    return header.read_text() + "".join(r.read_text() for r in rows)


def names_in(d: pathlib.Path) -> set:
    out = set()
    for p in d.iterdir():
        if p.suffix in (".md", ".header"):
            out.add(p.stem)
    return out


def main() -> None:
    args = sys.argv[1:]
    keep, only = set(), set()
    while len(args) >= 2 and args[0] in ("--keep", "--only"):
        (keep if args[0] == "--keep" else only).add(args[1])
        args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    d, f = pathlib.Path(args[0]), pathlib.Path(args[1])
    text = f.read_text()
    pat = re.compile(r"(<!-- figure:([\w.-]+) -->\n)(.*?)(<!-- /figure:\2 -->)", re.S)
    seen = set()

    def repl(m: re.Match) -> str:
        name = m.group(2)
        if only and name not in only:
            return m.group(0)
        seen.add(name)
        new = figure(d, name)
        if new is None:
            if name in keep:
                return m.group(0)
            sys.exit(f"{d}: no figure {name!r} (run scripts/figures.sh)")
        return m.group(1) + new + m.group(4)

    new = pat.sub(repl, text)
    unplaced = names_in(d) - seen
    if unplaced:
        sys.exit(f"{f}: no marker for figure(s) {sorted(unplaced)}")
    if new != text:
        f.write_text(new)
    print(f"{f}: {len(seen)} figures")


if __name__ == "__main__":
    main()
