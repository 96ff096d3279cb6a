#!/usr/bin/python3
"""Prints the first fenced block of LANGUAGE after the first line of README that starts with LABEL.

Usage: readme_block.py README LABEL LANGUAGE   (exit 1 when there is none)
"""

import sys


def main() -> int:
    path, label, language = sys.argv[1:4]
    lines = open(path, encoding="utf-8").read().split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(label)), None)
    if start is None:
        return 1
    fence = next((i for i in range(start, len(lines)) if lines[i] == "```" + language), None)
    if fence is None:
        return 1
    end = lines.index("```", fence + 1)
    print("\n".join(lines[fence + 1:end]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
