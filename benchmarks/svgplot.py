"""A small log-log line plot written as SVG by hand (no plotting dependency)."""

from __future__ import annotations

import math
from html import escape

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")
DASHES = ("", "6 3", "2 3", "8 3 2 3")


def _decades(lo: float, hi: float) -> list[float]:
    return [10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def _fmt_bytes(v: float) -> str:
    for unit, size in (("MB", 1e6), ("kB", 1e3)):
        if v >= size:
            return f"{v / size:g} {unit}"
    return f"{v:g} B"


def _fmt_seconds(v: float) -> str:
    if v >= 1:
        return f"{v:g} s"
    return f"{v * 1000:g} ms"


def loglog(series: list[tuple[str, list[tuple[float, float]]]], *, title: str, xlabel: str,
           ylabel: str, width: int = 980, height: int = 540, notes: list[str] | None = None,
           bold: frozenset[str] = frozenset()) -> str:
    """``series``: (label, [(x, y), ...]) with positive values; labels in ``bold`` get solid,
    thicker lines and the others thinner dashed ones. Returns the SVG text."""
    points = [p for _, pts in series for p in pts if p[0] > 0 and p[1] > 0]
    if not points:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="80">'
                f'<text x="10" y="40">{escape(title)}: no data</text></svg>\n')
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    x_lo, x_hi = min(xs) / 1.5, max(xs) * 1.5
    y_lo, y_hi = min(ys) / 1.5, max(ys) * 1.5
    left, right, top, bottom = 78, 330, 44, 64 + 14 * len(notes or [])
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + plot_w * (math.log10(x) - math.log10(x_lo)) / (
            math.log10(x_hi) - math.log10(x_lo))

    def py(y: float) -> float:
        return top + plot_h * (1 - (math.log10(y) - math.log10(y_lo)) / (
            math.log10(y_hi) - math.log10(y_lo)))

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{left}" y="24" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    # grid and ticks: decades, plus 2x and 5x minor lines
    for d in _decades(x_lo, x_hi):
        for m, major in ((1, True), (2, False), (5, False)):
            v = d * m
            if not x_lo <= v <= x_hi:
                continue
            x = px(v)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" '
                       f'stroke="{"#ccc" if major else "#eee"}"/>')
            if major or m == 5:
                out.append(f'<text x="{x:.1f}" y="{top + plot_h + 16}" text-anchor="middle" '
                           f'fill="#333">{_fmt_bytes(v)}</text>')
    for d in _decades(y_lo, y_hi):
        for m, major in ((1, True), (2, False), (5, False)):
            v = d * m
            if not y_lo <= v <= y_hi:
                continue
            y = py(v)
            out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                       f'stroke="{"#ccc" if major else "#eee"}"/>')
            out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" '
                       f'fill="#333">{_fmt_seconds(v)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#333"/>')
    out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 36}" text-anchor="middle">'
               f'{escape(xlabel)}</text>')
    out.append(f'<text transform="translate(18 {top + plot_h / 2}) rotate(-90)" '
               f'text-anchor="middle">{escape(ylabel)}</text>')
    for i, (label, pts) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        strong = label in bold or not bold
        dash = "" if strong else DASHES[1 + i % (len(DASHES) - 1)]
        stroke = 2.6 if strong else 1.6
        pts = sorted(p for p in pts if p[0] > 0 and p[1] > 0)
        if not pts:
            continue
        path = " ".join(f"{'M' if j == 0 else 'L'}{px(x):.1f},{py(y):.1f}"
                        for j, (x, y) in enumerate(pts))
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="{stroke}"'
                   f'{dash_attr}/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3.5" fill="{color}">'
                       f'<title>{escape(label)}: {_fmt_seconds(y)} at {_fmt_bytes(x)}</title>'
                       '</circle>')
        ly = top + 10 + 20 * i
        lx = left + plot_w + 16
        out.append(f'<line x1="{lx}" y1="{ly}" x2="{lx + 26}" y2="{ly}" stroke="{color}" '
                   f'stroke-width="{stroke}"{dash_attr}/>')
        out.append(f'<circle cx="{lx + 13}" cy="{ly}" r="3.5" fill="{color}"/>')
        out.append(f'<text x="{lx + 32}" y="{ly + 4}">{escape(label)}</text>')
    for j, note in enumerate(notes or []):
        out.append(f'<text x="{left}" y="{top + plot_h + 56 + 14 * j}" fill="#555" '
                   f'font-size="11">{escape(note)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
