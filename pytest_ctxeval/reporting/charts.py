"""Inline SVG charts for the HTML report: tokens over requests, and planted-fact survival curves.

Each chart is built from numbers of the results JSON (``tokens`` and ``survival`` per scenario,
:mod:`pytest_ctxeval.reporting.facts_table`) into a small self-contained ``<svg>`` (no script, no external
asset: the report's Content-Security-Policy stays ``default-src 'none'``). Every piece of text is
escaped here, where the markup is made; the template inserts the result as markup.

>>> svg = tokens_svg({"requests": [100, 900, 1800, 400], "compactions": [[3, 1800, 300]], "window": 2000})
>>> svg.startswith("<svg") and "compaction 1" in svg and "<script" not in svg
True
"""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["tokens_svg", "survival_svg"]

W, H, PAD_L, PAD_R, PAD_T, PAD_B = 640, 200, 56, 120, 12, 28
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f",
            "#bcbd22")


def _x(i: float, n: int) -> float:
    return PAD_L + (W - PAD_L - PAD_R) * (i / max(1, n))


def _y(v: float, top: float) -> float:
    return PAD_T + (H - PAD_T - PAD_B) * (1 - v / top if top else 1)


def _frame(title: str, top_label: str, bottom_label: str, x_label: str) -> list[str]:
    t = escape(title)
    return [f'<svg width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" '
            f'aria-label="{t}"><title>{t}</title>',
            f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" stroke="#999"/>',
            f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{PAD_L}" y2="{H - PAD_B}" stroke="#999"/>',
            f'<text x="{PAD_L - 4}" y="{PAD_T + 8}" font-size="10" text-anchor="end">{escape(top_label)}</text>',
            f'<text x="{PAD_L - 4}" y="{H - PAD_B}" font-size="10" text-anchor="end">{escape(bottom_label)}</text>',
            f'<text x="{(W - PAD_R + PAD_L) / 2:.0f}" y="{H - 6}" font-size="10" text-anchor="middle">'
            f'{escape(x_label)}</text>']


def tokens_svg(data: dict[str, Any]) -> str:
    """The input tokens of every request, the context window, and each compaction as a drop from its
    size before to its size after (``data``: :func:`pytest_ctxeval.reporting.facts_table.request_tokens`)."""
    tokens = [int(t) for t in data.get("requests") or []]
    if not tokens:
        return ""
    window = int(data.get("window") or 0)
    comps = [(int(a), int(b), int(c)) for a, b, c in data.get("compactions") or []]
    top = max([window, *tokens, *(b for _, b, _ in comps)]) or 1
    n = len(tokens)
    out = _frame("tokens per request, compactions marked", f"{top:,}", "0", f"request 1 … {n}")
    points = " ".join(f"{_x(i, n):.1f},{_y(t, top):.1f}" for i, t in enumerate(tokens, start=1))
    out.append(f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{points}"/>')
    if window:
        y = _y(window, top)
        out.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" stroke="#999" '
                   f'stroke-dasharray="4 3"/><text x="{W - PAD_R + 4}" y="{y + 3:.1f}" font-size="10">'
                   f'window {window:,}</text>')
    for k, (after, pre, post) in enumerate(comps, start=1):
        x = _x(after + 0.5, n)
        out.append(f'<line x1="{x:.1f}" y1="{_y(pre, top):.1f}" x2="{x:.1f}" y2="{_y(post, top):.1f}" '
                   f'stroke="#d62728" stroke-width="2"><title>{escape(f"compaction {k}: {pre:,} → {post:,} tokens")}'
                   f'</title></line>')
        out.append(f'<text x="{x:.1f}" y="{_y(pre, top) - 3:.1f}" font-size="9" text-anchor="middle" '
                   f'fill="#d62728">{k}</text>')
    out.append(f'<text x="{W - PAD_R + 4}" y="{PAD_T + 24}" font-size="10" fill="#d62728">| compaction</text>')
    out.append("</svg>")
    return "\n".join(out)


def survival_svg(survival: dict[str, Any]) -> str:
    """One curve per fact type: the share held in each round (``survival``: the ``by_type`` part of a
    scenario's ``survival`` entry); a dashed mark at each type's bar."""
    types = (survival or {}).get("types") or {}
    rounds = (survival or {}).get("rounds") or []
    if not types or not rounds:
        return ""
    n = len(rounds)
    out = _frame("planted facts held per round, by type", "100%", "0%", f"round 1 … {n}")

    def xr(i: int) -> float:
        return _x(i, n) if n > 1 else (PAD_L + W - PAD_R) / 2

    for j, (name, row) in enumerate(types.items()):
        colour = _COLOURS[j % len(_COLOURS)]
        pts = [(xr(i), _y(v, 1.0)) for i, v in enumerate(row.get("curve") or [], start=1) if v is not None]
        label = escape(str(name))
        if len(pts) > 1:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                       f'points="{" ".join(f"{x:.1f},{y + j * 0.8:.1f}" for x, y in pts)}"><title>{label}</title></polyline>')
        for (x, y), v in zip(pts, [v for v in row.get("curve") or [] if v is not None]):
            out.append(f'<circle cx="{x:.1f}" cy="{y + j * 0.8:.1f}" r="2.5" fill="{colour}"><title>'
                       f'{label}: {v:.0%}</title></circle>')
        bar = float(row.get("bar") or 0)
        cliff = row.get("cliff")
        text = f"{name}" + (f" (bar {bar:.0%}, cliff round {cliff})" if bar and cliff else
                            f" (bar {bar:.0%})" if bar else "")
        out.append(f'<text x="{W - PAD_R + 4}" y="{PAD_T + 10 + 13 * j}" font-size="10" fill="{colour}">'
                   f'{escape(text)}</text>')
        if bar:
            y = _y(bar, 1.0)
            out.append(f'<line x1="{PAD_L}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" stroke="{colour}" '
                       f'stroke-dasharray="2 4" stroke-opacity="0.5"/>')
    out.append("</svg>")
    return "\n".join(out)
