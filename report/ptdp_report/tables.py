"""Markdown tables for report.md: the one table writer that markdown.py and its sections
(ablation, closure, modern) share, so that no section imports markdown.py back.
"""


def cell(text):
    """Text made safe for a table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def table(header, rows):
    """The lines of a Markdown table: header, separator, one line per row (cells made safe)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines
