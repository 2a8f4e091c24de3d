"""Summarize a CSV file as a Markdown report.

Usage: python3 scripts/summarize.py IN.csv OUT.md

Paths are relative to the working directory. The report's layout is in
references/format.md; its template is assets/template.md, found beside
this script's own directory, wherever the skill is installed.
"""

import csv
import math
import sys
from pathlib import Path
from string import Template

SKILL_DIR = Path(__file__).resolve().parent.parent
TEMPLATE = SKILL_DIR / "assets" / "template.md"


class InputError(Exception):
    """What is wrong with the input, for the user."""


def number(cell):
    """The cell as a finite float, or None when it is not a number."""
    try:
        x = float(cell)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def fmt(x):
    """x rounded to two decimals, without trailing zeros."""
    s = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


def read_csv(path):
    """The header and the data rows of the CSV at path."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, strict=True)
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}: the file is empty (a CSV needs a header row)")
            rows = []
            for row in reader:
                if not row:
                    continue
                if len(row) != len(header):
                    raise InputError(
                        f"{path}:{reader.line_num}: {len(row)} field(s), "
                        f"but the header has {len(header)}"
                    )
                rows.append(row)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file in the working directory") from None
    except IsADirectoryError:
        raise InputError(f"{path}: a directory, not a CSV file") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except csv.Error as err:
        raise InputError(f"{path}:{reader.line_num}: malformed CSV: {err}") from None
    if not rows:
        raise InputError(f"{path}: a header but no data rows")
    return header, rows


def stats_table(header, rows):
    """The Markdown table of the numeric columns, or a line saying there are none."""
    lines = []
    for i, name in enumerate(header):
        cells = [row[i].strip() for row in rows if row[i].strip()]
        values = [number(c) for c in cells]
        if not values or None in values:
            continue
        mean = math.fsum(values) / len(values)
        lines.append(f"| {name} | {fmt(min(values))} | {fmt(max(values))} | {fmt(mean)} |")
    if not lines:
        return "No numeric columns."
    return "\n".join(["| Column | Min | Max | Mean |", "| --- | ---: | ---: | ---: |"] + lines)


def main(argv):
    if len(argv) != 3:
        print("usage: python3 scripts/summarize.py IN.csv OUT.md", file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    try:
        header, rows = read_csv(src)
    except InputError as err:
        print(f"summarize.py: {err}", file=sys.stderr)
        return 1
    report = Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        source=Path(src).name,
        rows=len(rows),
        columns=", ".join(header),
        stats=stats_table(header, rows),
    )
    Path(out).write_text(report, encoding="utf-8")
    print(f"wrote {out}: {len(rows)} rows, {len(header)} columns")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
