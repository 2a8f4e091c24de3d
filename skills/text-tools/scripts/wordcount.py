"""Count the lines, words, characters and bytes of stdin; print them as JSON.

Usage: python3 scripts/wordcount.py < TEXT
The counting rules are in references/rules.md.
"""

import json
import sys


def main():
    data = sys.stdin.buffer.read()
    text = data.decode("utf-8", errors="replace")
    counts = {
        "lines": text.count("\n") + (1 if text and not text.endswith("\n") else 0),
        "words": len(text.split()),
        "chars": len(text),
        "bytes": len(data),
    }
    print(json.dumps(counts, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
