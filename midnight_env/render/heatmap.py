"""A value for every gallery square, drawn over the board: where optimal play places its guests.

The ring and the rooms come from :func:`~midnight_env.render.layout.board_layout` (the same
geometry as the board picture); each square is coloured by its value on a scale of its own
panel (better: lighter), the value written on it, the best square outlined, squares already
taken marked with a guest. Rooms keep their kind's colour and show their points.
"""

from __future__ import annotations

import numpy as np

from midnight_env.render.layout import board_layout
from midnight_env.render.style import EDGE, ROOM_FACES, ROOM_POINTS

TAKEN_FACE = "#d0d0d0"


def draw_square_values(ax, board, values, title: str = "", taken=(), lower_is_better: bool = True,
                       cmap: str = "viridis", digits: int = 2) -> None:
    """Draw ``values`` ((S,) floats, nan for a square that is not a choice) on ``ax`` over
    ``board``'s ring and rooms; ``taken``: squares holding a guest placed before."""
    import matplotlib as mpl
    from matplotlib.patches import Circle, Rectangle

    values = np.asarray(values, dtype=np.float64)
    if values.shape != (board.num_squares,):
        raise ValueError(f"values must hold one number per gallery square ({board.num_squares}), got shape "
                         f"{values.shape}")
    layout = board_layout(board, 1, False)
    finite = values[np.isfinite(values)]
    lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
    norm = mpl.colors.Normalize(lo, hi if hi > lo else lo + 1e-9)
    # better is lighter: the colour map runs from dark (worst) to light (best)
    colours = mpl.colormaps[cmap].reversed() if lower_is_better else mpl.colormaps[cmap]
    best = int(np.nanargmin(values) if lower_is_better else np.nanargmax(values)) if len(finite) else -1
    for sq in layout.squares:
        v = values[sq.square]
        face = colours(norm(v)) if np.isfinite(v) else TAKEN_FACE
        ax.add_patch(Rectangle((sq.face.x, sq.face.y), sq.face.w, sq.face.h, facecolor=face,
                               edgecolor="#d62728" if sq.square == best else EDGE,
                               linewidth=3.0 if sq.square == best else 0.6, zorder=2 if sq.square == best else 1))
        c = sq.face.centre
        dark = np.isfinite(v) and ((norm(v) > 0.5) if lower_is_better else (norm(v) < 0.5))
        ink = "white" if dark else "black"
        ax.text(sq.face.x + 0.06, sq.face.y + 0.04, str(sq.square), fontsize=5, ha="left", va="top", color=ink)
        if np.isfinite(v):
            ax.text(c.x, c.y + 0.1, f"{v:.{digits}f}", fontsize=5.5, ha="center", va="center", color=ink)
        if sq.square in taken:
            ax.add_patch(Circle((c.x, c.y + 0.1), 0.22, facecolor="#1f77b4", edgecolor="black", linewidth=0.8))
    for room in layout.rooms:
        b = room.box
        ax.add_patch(Rectangle((b.x, b.y), b.w, b.h, facecolor=ROOM_FACES[room.kind], edgecolor=EDGE, linewidth=0.6))
        label = f"r{room.room}" + (f" {ROOM_POINTS[room.kind]}" if room.kind in ROOM_POINTS else "")
        ax.text(b.centre.x, b.centre.y, label, fontsize=5.5, ha="center", va="center")
    ax.set_xlim(-1.2, layout.cols + 1.2)
    ax.set_ylim(layout.rows + 1.2, -1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=8)
    sm = mpl.cm.ScalarMappable(norm=norm, cmap=colours)
    bar = ax.figure.colorbar(sm, ax=ax, fraction=0.035, pad=0.01)
    bar.ax.tick_params(labelsize=6)


def placement_figure(board, panels, columns: int = 2, suptitle: str = "", digits: int = 2):
    """A figure of one board per panel: ``panels`` is a list of ``(title, values, taken)`` or
    ``(title, values, taken, lower_is_better)`` (default: lower is better, as spooky points)."""
    import matplotlib.pyplot as plt

    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.6 * columns, 3.9 * rows), squeeze=False)
    for ax, (title, values, taken, *lower) in zip(axes.flat, panels):
        draw_square_values(ax, board, values, title, taken, lower[0] if lower else True, digits=digits)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    if suptitle:
        fig.suptitle(suptitle, fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["draw_square_values", "placement_figure"]
