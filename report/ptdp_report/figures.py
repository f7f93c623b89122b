"""One PNG per experiment, laid out like the paper's figure (layouts.py says lines or bars).

Measured points: filled markers or bars, solid lines. Projected: hollow markers or hatched
bars, dashed lines. Paper values: black 'x'. does_not_fit: grey triangle at the bottom.
"""
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.transforms import blended_transform_factory  # noqa: E402

from .compare import drawable  # noqa: E402
from .layouts import layout_for, x_label, y_label  # noqa: E402
from .points import label_of, labels_of, number, series_name, series_of  # noqa: E402

FIGSIZE = (7.0, 4.0)          # inches, before the legend is added on the right
DPI = 110
TITLE_WIDTH = 78              # characters per title line
COLORS = plt.get_cmap("tab10").colors
MODES = ("measured", "projected")
DASHES = {"measured": "-", "projected": "--"}
HATCH = "///"                 # projected bars
DNF_FACE = "0.6"              # does_not_fit marker
DNF_LABEL = "ptdp: does not fit"
SLANT_CHARS = 80              # slant tick labels when the longest times their count exceeds this
HEADROOM = 1.12               # y axis top over the largest value (axes from 0)
BAR_SPAN = 0.8                # share of a category's width the bars of a group take


def _x_order(labels, kind):
    """Labels in index order; numeric ones on a line plot by value (series may cover different x)."""
    if kind != "lines":
        return labels
    try:
        return sorted(labels, key=float)
    except ValueError:
        return labels


def _groups(points, series):
    """[(colour, series, mode, points)] per (series, mode) present, in series then mode order."""
    groups = []
    modes = sorted({str(p.get("mode")) for p in points}, key=lambda m: (m not in MODES, m))
    for i, name in enumerate(series):
        for mode in modes:
            members = [p for p in points if series_name(p) == name and str(p.get("mode")) == mode]
            if members:
                groups.append((COLORS[i % len(COLORS)], name, mode, members))
    return groups


def _legend_label(name, mode, many_series):
    source = f"ptdp {mode}"
    return f"{name.replace('_', ' ')} — {source}" if many_series else source


def _positions(groups, labels, kind):
    """{(group index, label): x}. Bars: the groups present in a category side by side, centred."""
    at, width = {}, _bar_width(groups, labels)
    for x, label in enumerate(labels):
        present = [i for i, g in enumerate(groups) if any(label_of(p) == label for p in g[3])]
        for slot, i in enumerate(present):
            at[(i, label)] = x + ((slot - (len(present) - 1) / 2) * width if kind == "bars" else 0.0)
    return at


def _bar_width(groups, labels):
    """One width for every bar: the category width shared by the most groups in one category."""
    most = max((sum(any(label_of(p) == label for p in g[3]) for g in groups) for label in labels), default=1)
    return BAR_SPAN / max(most, 1)


def _ok(members):
    return [p for p in members if p.get("status") == "ok" and number(p.get("value")) is not None]


def _draw_lines(ax, groups, at):
    many = len({g[1] for g in groups}) > 1
    for i, (colour, name, mode, members) in enumerate(groups):
        ok = _ok(members)
        if not ok:
            continue
        ax.plot([at[(i, label_of(p))] for p in ok], [p["value"] for p in ok],
                linestyle=DASHES.get(mode, ":"), color=colour, linewidth=1.6,
                marker="o", markersize=6, markeredgewidth=1.5, markeredgecolor=colour,
                markerfacecolor=colour if mode == "measured" else "white",
                label=_legend_label(name, mode, many))


def _draw_bars(ax, groups, at, width):
    many = len({g[1] for g in groups}) > 1
    for i, (colour, name, mode, members) in enumerate(groups):
        ok = _ok(members)
        if not ok:
            continue
        measured = mode == "measured"
        ax.bar([at[(i, label_of(p))] for p in ok], [p["value"] for p in ok], width * 0.92,
               color=to_rgba(colour, 1 if measured else 0.18), edgecolor=colour, linewidth=1.2,
               hatch=None if measured else HATCH, label=_legend_label(name, mode, many))


def _marks(groups, at):
    """Paper values [(x, y)] of every point, and the points that do not fit [(x, colour)]."""
    paper, dnf = [], []
    for i, (colour, _, _, members) in enumerate(groups):
        for p in members:
            x = at[(i, label_of(p))]
            if number(p.get("paper")) is not None:
                paper.append((x, number(p["paper"])))
            if p.get("status") == "does_not_fit":
                dnf.append((x, colour))
    return paper, dnf


def _draw_paper(ax, paper):
    if paper:
        ax.scatter([x for x, _ in paper], [y for _, y in paper], marker="x", color="black",
                   s=36, linewidths=1.6, zorder=6, label="paper")


def _draw_does_not_fit(ax, dnf):
    """A grey triangle at the bottom of each point that does not fit, annotated."""
    if not dnf:
        return
    at_bottom = blended_transform_factory(ax.transData, ax.transAxes)
    ax.scatter([x for x, _ in dnf], [0.035] * len(dnf), transform=at_bottom, marker="v", s=55,
               facecolor=DNF_FACE, edgecolors=[c for _, c in dnf], linewidths=1.2, zorder=6,
               clip_on=False, label=DNF_LABEL)
    for x, _ in dnf:
        ax.text(x, 0.08, "does not fit", transform=at_bottom, rotation=90, fontsize=6.5,
                color="0.35", ha="center", va="bottom")


def _title(text):
    """text wrapped into as few lines of at most TITLE_WIDTH as it needs, of even lengths."""
    lines = -(-len(text) // TITLE_WIDTH)
    return textwrap.fill(text, min(TITLE_WIDTH, -(-len(text) // max(lines, 1)) + 10))


def _decorate(ax, sweep, labels, top):
    ax.set_title(_title(sweep.reproduces), fontsize=9)
    ax.set_xlabel(x_label(sweep), fontsize=9)
    ax.set_ylabel(y_label(sweep.metric), fontsize=9)
    ax.set_xticks(range(len(labels)))
    slanted = max(map(len, labels), default=0) * len(labels) > SLANT_CHARS
    ax.set_xticklabels(labels, fontsize=8, rotation=30 if slanted else 0,
                       ha="right" if slanted else "center")
    ax.tick_params(axis="y", labelsize=8)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    if top is not None:
        ax.set_ylim(0, top * HEADROOM)
    else:
        ax.margins(y=0.12)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    _legend(ax)


def _legend(ax):
    """Outside on the right: ptdp's curves first, then the paper and the points that do not fit."""
    handles, names = ax.get_legend_handles_labels()
    if not handles:
        return
    rank = {"paper": 1, DNF_LABEL: 2}
    order = sorted(range(len(names)), key=lambda i: (rank.get(names[i], 0), i))
    ax.legend([handles[i] for i in order], [names[i] for i in order], loc="upper left",
              bbox_to_anchor=(1.01, 1.0), fontsize=7.5, frameon=False)


def draw_sweep(sweep, out_dir):
    """Draws the sweep's figure into out_dir/<name>.png and returns its path."""
    layout = layout_for(sweep)
    labels = _x_order(labels_of(sweep.points), layout.kind)
    series = series_of(sweep.points)
    groups = _groups([p for p in sweep.points if drawable(p) or number(p.get("paper")) is not None],
                     series)
    at = _positions(groups, labels, layout.kind)
    paper, dnf = _marks(groups, at)
    fig, ax = plt.subplots(figsize=FIGSIZE)
    try:
        if layout.kind == "lines":
            _draw_lines(ax, groups, at)
        else:
            _draw_bars(ax, groups, at, _bar_width(groups, labels))
        _draw_paper(ax, paper)
        _draw_does_not_fit(ax, dnf)
        if not any(_ok(g[3]) for g in groups):
            ax.text(0.5, 0.5, "no point has a ptdp value", transform=ax.transAxes, ha="center")
        values = [p["value"] for g in groups for p in _ok(g[3])] + [y for _, y in paper]
        nonnegative = values and min(values) >= 0 and max(values) > 0
        _decorate(ax, sweep, labels, max(values) if nonnegative else None)
        path = Path(out_dir) / f"{sweep.slug}.png"
        fig.savefig(path, dpi=DPI, bbox_inches="tight")
    finally:
        plt.close(fig)
    return path
