"""The picture (:func:`render_rgb`): the :class:`~midnight_env.render.layout.BoardLayout` of the
board drawn with matplotlib (Agg, no window), and the position on it.

Everything that never changes is drawn once per board, seat count and size (a scene, kept for
reuse); a frame restores that background and draws the guests, Hugo, the clock's hands, the
status and the points on it.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from midnight_env.core.config import CASTLE_POINTS_LIMIT, CLOCK_TIMES
from midnight_env.core.state import MOVE, OVER
from midnight_env.infra import checks
from midnight_env.render.layout import HUGO_OUTLINE, Anchor, HugoSpot, board_layout
from midnight_env.render.seats import SEAT_SYMBOLS, seat_hex
from midnight_env.render.snapshot import Position, clock_text, snapshot, status_lines, turn_text
from midnight_env.render.style import (
    ARROW_COLOUR,
    ARROW_FACE,
    BACKGROUND,
    BAR_FULL_POINTS,
    CLOCK_FACE,
    DOOR_FACE,
    EDGE,
    FONT_POINTS,
    GHOST_EDGE,
    GHOST_FACE,
    HAND_LENGTHS,
    HAND_WIDTHS,
    LEGEND,
    LINE_POINTS,
    REFERENCE_PIXELS,
    ROOM_FACES,
    ROOM_POINTS,
    SQUARE_FACE,
    STAIR_FACE,
    TIME_MARK,
    WINE_FACE,
    game_title,
    hand_angles,
    stair_label,
    stairs_title,
    text_colour,
)


class _Scene:
    """A figure with everything that never changes drawn once (the background) and the
    artists that do kept for reuse; a frame restores the background and draws on it."""

    def __init__(self, engine, size: int):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.markers import MarkerStyle

        self.board = engine.board
        self.castle = engine.config.castle
        self.num_players = engine.num_players
        lay = self.layout = board_layout(self.board, self.num_players, self.castle)
        self.fig = Figure(figsize=(size / 100, size / 100), dpi=100, facecolor=BACKGROUND)
        self.canvas = FigureCanvasAgg(self.fig)
        ax = self.ax = self.fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(lay.view.x, lay.view.right)
        ax.set_ylim(lay.view.bottom, lay.view.y)  # y grows downwards, like the layout
        ax.set_aspect("equal")
        ax.axis("off")
        scale = size / REFERENCE_PIXELS  # font sizes and line widths follow the picture size
        self.fs, self.lw = FONT_POINTS * scale, LINE_POINTS * scale
        self.points_per_unit = size / lay.view.h * 72 / 100  # marker sizes are in points
        markers = [MarkerStyle(f"${SEAT_SYMBOLS[p]}$") for p in range(self.num_players)] + [MarkerStyle("o")]
        paths = [m.get_path().transformed(m.get_transform()) for m in markers]
        self.digit_path, self.pip_path = paths[:-1], paths[-1]

        self._gallery()
        self._stairs()
        self._inside()
        self._panel()
        self.canvas.draw()
        self.background = self.canvas.copy_from_bbox(self.fig.bbox)

    def _text(self, at: Anchor, words: str, fontsize: float, **style):
        return self.ax.text(at.x, at.y, words, fontsize=fontsize, ha=at.ha, va=at.va, **style)

    # -- the background ------------------------------------------------------------------------
    def _gallery(self) -> None:
        from matplotlib.patches import Rectangle

        ax, fs, lw = self.ax, self.fs, self.lw
        room_at = {room.door_square: room for room in self.layout.rooms}
        for sq in self.layout.squares:
            arrow = sq.arrow_mark is not None
            ax.add_patch(Rectangle(sq.face[:2], sq.face.w, sq.face.h, facecolor=ARROW_FACE if arrow else SQUARE_FACE,
                                   edgecolor=EDGE, linewidth=self.lw))
            self._text(sq.number, str(sq.square), fs * 0.8, color=EDGE, fontweight="bold" if arrow else "normal")
            if arrow:
                self._text(sq.arrow_mark, "\u2192", fs * 1.1, color=ARROW_COLOUR, fontweight="bold")
            room = room_at.get(sq.square)
            if room is None:
                continue
            q, face = room.room, ROOM_FACES[room.kind]
            ax.add_patch(Rectangle(room.box[:2], room.box.w, room.box.h, facecolor=face, edgecolor=EDGE, linewidth=lw))
            ax.add_patch(Rectangle(room.door[:2], room.door.w, room.door.h, facecolor=face, edgecolor=EDGE,
                                   linewidth=lw * 0.7, zorder=3))
            self._text(room.label, f"r{q}", fs * 0.8, color="#222")
            points = ROOM_POINTS.get(room.kind)
            if points:
                self._text(room.points, points, fs * 0.8, color="#222", fontweight="bold")
            if room.name != f"room {q}":
                self._text(room.name_at, room.name, fs * 0.6, color="#222", style="italic")
            self._text(sq.room_tag, f"r{q}", fs * 0.62, color="#555")

    def _stairs(self) -> None:
        """The stair places, from the one next to the gallery down to the cellar door; the wine
        cellar beside them; Hugo's way onto the arrow square."""
        from matplotlib.patches import FancyArrowPatch, Rectangle

        ax, fs, lw, lay = self.ax, self.fs, self.lw, self.layout
        climb = list(reversed(lay.stairs)) + ([lay.cellar_door] if lay.cellar_door else [])
        for stair in climb:
            label = stair_label(stair.value, self.castle)
            face, colour = (STAIR_FACE, "#2b2115") if stair.value is not None else (DOOR_FACE, "white")
            ax.add_patch(Rectangle(stair.box[:2], stair.box.w, stair.box.h, facecolor=face, edgecolor=EDGE,
                                   linewidth=lw))
            self._text(stair.label, label, fs * 0.85, color=colour, fontweight="bold")
        wine = lay.wine_cellar
        if wine is not None:
            ax.add_patch(Rectangle(wine.box[:2], wine.box.w, wine.box.h, facecolor=WINE_FACE, edgecolor=EDGE,
                                   linewidth=lw))
            self._text(wine.label, f"wine cellar {wine.value}", fs * 0.62, color="white")
        ax.add_patch(FancyArrowPatch(*lay.stairs_arrow, arrowstyle="-|>", mutation_scale=12 * self.fs / 9,
                                     color=ARROW_COLOUR, linewidth=lw * 1.5, zorder=4))
        title = stairs_title(self.castle)
        self._text(lay.stairs_title, title, fs * 0.8, color=EDGE, fontweight="bold", linespacing=1.3)

    def _inside(self) -> None:
        """Title, the clock (hidden_castle) and the status lines, right of the stairs."""
        from matplotlib.lines import Line2D
        from matplotlib.patches import Circle, Rectangle

        ax, fs, lw, lay = self.ax, self.fs, self.lw, self.layout
        self._text(lay.title, game_title(self.castle), fs * 1.15, color=EDGE, fontweight="bold", style="italic")
        self.dynamic = []
        clock = lay.clock
        if clock is not None:
            (cx, cy), radius = clock.centre, clock.radius
            ax.add_patch(Circle((cx, cy), radius, facecolor=CLOCK_FACE, edgecolor=EDGE, linewidth=lw * 1.5))
            for h in range(12):
                t = h / 12 * 2 * math.pi
                inner = 0.72 if h % 3 == 0 else 0.84
                ax.plot([cx + inner * radius * math.sin(t), cx + 0.95 * radius * math.sin(t)],
                        [cy - inner * radius * math.cos(t), cy - 0.95 * radius * math.cos(t)], color=EDGE,
                        linewidth=lw)
            self.hands = [Line2D([], [], color=EDGE, linewidth=lw * w, solid_capstyle="round", animated=True)
                          for w in HAND_WIDTHS]
            for hand in self.hands:
                ax.add_line(hand)
            for at, t in zip(clock.times, CLOCK_TIMES):
                self._text(at, t, fs * 0.62, color="#555")
            mark = clock.marks[0]
            self.time_mark = Rectangle(mark[:2], mark.w, mark.h, facecolor="none", edgecolor=TIME_MARK,
                                       linewidth=lw * 1.6, animated=True)
            ax.add_patch(self.time_mark)
            self.dynamic += self.hands + [self.time_mark]
        self.info = self._text(lay.status, "", fs * 0.85, color="#222", linespacing=1.6, animated=True)
        self.dynamic.append(self.info)

    def _panel(self) -> None:
        """Below the ring: whose turn, the die, the spooky points of every seat and a legend."""
        from matplotlib.collections import EllipseCollection
        from matplotlib.patches import FancyBboxPatch, Polygon, Rectangle

        ax, fs, lw, n, lay = self.ax, self.fs, self.lw, self.num_players, self.layout
        for seat in lay.seats:
            self._text(seat.name, f"seat {seat.seat}", fs, color="#222")
        d = np.array([2 * seat.disc.r for seat in lay.seats])
        ax.add_collection(EllipseCollection(d, d, np.zeros(n), units="xy",
                                            offsets=[seat.disc[:2] for seat in lay.seats],
                                            offset_transform=ax.transData, facecolors=seat_hex(range(n)),
                                            edgecolors="#1a1a1a", linewidths=lw * 0.8, zorder=5))
        self.bars = [Rectangle(seat.bar[:2], 0, seat.bar.h, facecolor=seat_hex([seat.seat])[0], alpha=0.85,
                               edgecolor="none", animated=True) for seat in lay.seats]
        self.points = [self._text(seat.points, "", fs, color="#222", fontweight="bold", animated=True)
                       for seat in lay.seats]
        for bar in self.bars:
            ax.add_patch(bar)
        self.turn = self._text(lay.turn, "", fs * 1.1, color="#222", fontweight="bold", animated=True)
        disc = lay.turn_disc
        self.turn_disc = EllipseCollection([2 * disc.r], [2 * disc.r], [0], units="xy", offsets=[disc[:2]],
                                           offset_transform=ax.transData, edgecolors="#1a1a1a",
                                           linewidths=lw * 0.8, animated=True)
        ax.add_collection(self.turn_disc)
        # the die of the roll being decided
        die = lay.die
        self.die = FancyBboxPatch(die[:2], die.w, die.h, boxstyle="round,pad=0.02,rounding_size=0.1",
                                  facecolor="white", edgecolor="#222", linewidth=lw * 1.4, animated=True)
        ax.add_patch(self.die)
        self.dynamic += self.bars + self.points + [self.turn, self.turn_disc]
        # legend, along the bottom edge; each entry as wide as its words
        x, y, side = lay.legend.x, lay.legend.y, lay.legend_swatch
        renderer = self.canvas.get_renderer()
        to_data = ax.transData.inverted()
        for what, kind, words in LEGEND:
            if what == "hugo":
                ax.add_patch(Polygon(HUGO_OUTLINE * 0.42 + (x + 0.15, y), facecolor=GHOST_FACE,
                                     edgecolor=GHOST_EDGE, linewidth=lw))
            else:
                face = ARROW_FACE if what == "arrow" else ROOM_FACES[kind]
                ax.add_patch(Rectangle((x, y - side / 2), side, side, facecolor=face, edgecolor=EDGE,
                                       linewidth=lw * 0.8))
            label = self._text(Anchor(x + 0.4, y, "left", "center"), words, fs * 0.8, color="#222")
            box = label.get_window_extent(renderer)
            x = to_data.transform((box.x1, box.y0))[0] + 0.35

    # -- one frame --------------------------------------------------------------------------------
    def frame(self, pos: Position) -> np.ndarray:
        ax, lay = self.ax, self.layout
        discs: list[tuple[float, float, float, int]] = []  # x, y, radius, seat
        ghosts = []  # Hugo, drawn over everything else
        # guests on the gallery, Hugo on his square
        for sq in lay.squares:
            s = sq.square
            seats = [p for p in range(pos.num_players) for _ in range(int(pos.gallery[p, s]))]
            if s == pos.hugo_square:
                ghosts += self._hugo(sq.hugo_beside_guests if seats else sq.hugo)
            if seats:
                area = sq.guests_beside_hugo if s == pos.hugo_square else sq.guests
                centres, rad = area.discs(len(seats))
                discs += [(x, y, rad, p) for (x, y), p in zip(centres, seats)]
        for room in sorted(lay.rooms, key=lambda room: room.door_square):  # in the ring's order
            if pos.room[room.room] >= 0:
                discs.append((*room.occupant, int(pos.room[room.room])))
        # captured guests on the stairs, Hugo on his place
        for stair in reversed(lay.stairs):
            seats = [p for p in range(pos.num_players) for _ in range(int(pos.stairs[p, stair.place]))]
            if seats:
                centres, rad = stair.guests.discs(len(seats))
                discs += [(x, y, rad, p) for (x, y), p in zip(centres, seats)]
            if stair.place == pos.hugo_place:
                ghosts += self._hugo(stair.hugo)
        if lay.cellar_door is not None and pos.hugo_at_cellar_door:
            ghosts += self._hugo(lay.cellar_door.hugo)
        if lay.wine_cellar is not None:
            wine = lay.wine_cellar
            seats = [p for p in range(pos.num_players) for _ in range(int(pos.stairs[p, wine.place]))]
            if seats:
                centres, rad = wine.guests.discs(len(seats))
                discs += [(x, y, rad, p) for (x, y), p in zip(centres, seats)]
        fresh = self._discs(discs) + ghosts  # artists made for this frame only

        # clock or rounds, and the status
        if lay.clock is not None:
            (cx, cy), radius = lay.clock.centre, lay.clock.radius
            for hand, angle, length in zip(self.hands, hand_angles(clock_text(pos)), HAND_LENGTHS):
                tip = (cx + length * radius * math.sin(angle), cy - length * radius * math.cos(angle))
                hand.set_data([cx, tip[0]], [cy, tip[1]])
            self.time_mark.set_x(lay.clock.marks[min(pos.clock, len(CLOCK_TIMES) - 1)].x)
        self.info.set_text("\n".join(status_lines(self.board, pos)))
        self.turn.set_text(turn_text(pos))
        self.turn_disc.set_facecolor(seat_hex([pos.player]) if pos.phase != OVER else "none")
        self.turn_disc.set_visible(pos.phase != OVER)
        shown = list(self.dynamic)
        if pos.phase == MOVE:  # the die of the roll being decided
            fresh += self._pips(pos.roll)
            shown.append(self.die)

        # points: a bar and a number per seat
        winners = pos.winners if pos.phase == OVER else ()
        top = max(CASTLE_POINTS_LIMIT if pos.castle else BAR_FULL_POINTS, int(pos.spooky.max()))
        for seat, bar, points in zip(lay.seats, self.bars, self.points):
            p = seat.seat
            pts = int(pos.spooky[p])
            length = seat.bar.w * max(pts, 0) / top
            bar.set_width(length)
            mark = "  \u2605 winner" if p in winners else ("  \u25c0" if pos.phase != OVER and p == pos.player else "")
            points.set_text(f"{pts}{mark}")
            points.set_x(bar.get_x() + length + 0.05)

        self.canvas.restore_region(self.background)
        for artist in shown + fresh:
            if artist.get_visible():
                ax.draw_artist(artist)
        image = np.asarray(self.canvas.buffer_rgba())[:, :, :3].copy()
        for artist in fresh:
            artist.remove()
        return image

    def _hugo(self, spot: HugoSpot) -> list:
        from matplotlib.patches import Ellipse, Polygon

        x, y, h = spot
        parts = [Polygon(HUGO_OUTLINE * h + (x, y), closed=True, facecolor=GHOST_FACE, edgecolor=GHOST_EDGE,
                         linewidth=self.lw * 1.3)]
        parts += [Ellipse((x + dx * h, y - 0.12 * h), 0.11 * h, 0.17 * h, facecolor="#111") for dx in (-0.14, 0.14)]
        parts.append(Ellipse((x, y + 0.1 * h), 0.12 * h, 0.1 * h, facecolor="#111"))
        for part in parts:
            part.set_animated(True)
            self.ax.add_artist(part)
        return parts

    def _discs(self, discs) -> list:
        """One collection for every guest disc, one scatter of seat symbols per seat."""
        from matplotlib.collections import EllipseCollection

        if not discs:
            return []
        ax = self.ax
        d = np.array([2 * rad for _, _, rad, _ in discs])
        seats = np.array([p for *_, p in discs])
        xy = np.array([(x, y) for x, y, _, _ in discs])
        out = [EllipseCollection(d, d, np.zeros(len(d)), units="xy", offsets=xy, offset_transform=ax.transData,
                                 facecolors=seat_hex(seats), edgecolors="#1a1a1a", linewidths=self.lw * 0.8,
                                 animated=True)]
        ax.add_collection(out[0], autolim=False)
        labelled = d >= 0.17  # symbols only where they can be read
        for p in np.unique(seats[labelled]):
            mine = labelled & (seats == p)
            out.append(self._symbols(self.digit_path[p], xy[mine], 0.55 * d[mine], text_colour(seat_hex([p])[0])))
        return out

    def _symbols(self, path, xy, heights, colour):
        """Marker-like symbols (seat digits, die pips) of the given heights in data units, without
        the cost of ``scatter`` (which rescales the axes)."""
        from matplotlib.collections import PathCollection
        from matplotlib.transforms import IdentityTransform

        sizes = (np.asarray(heights) * self.points_per_unit) ** 2
        symbols = PathCollection((path,), sizes=sizes, offsets=xy, offset_transform=self.ax.transData,
                                 facecolors=colour, edgecolors="none", animated=True)
        symbols.set_transform(IdentityTransform())
        self.ax.add_collection(symbols, autolim=False)
        return symbols

    def _pips(self, roll: int) -> list:
        x, y, w, _ = self.layout.die
        spots = {1: [(0.5, 0.5)], 2: [(0.25, 0.25), (0.75, 0.75)], 4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75),
                 (0.75, 0.75)], 5: [(0.25, 0.25), (0.75, 0.25), (0.5, 0.5), (0.25, 0.75), (0.75, 0.75)]}
        xy = np.array([(x + w * u, y + w * v) for u, v in spots.get(roll, [])]).reshape(-1, 2)
        return [self._symbols(self.pip_path, xy, np.full(len(xy), 0.13), "#222")] if len(xy) else []


_SCENES: OrderedDict = OrderedDict()
_MAX_SCENES = 4  # figures kept for reuse; older ones are dropped (and freed)


def _scene(engine, size: int) -> _Scene:
    board = engine.board
    key = (engine.variant, board.name, board.num_squares, board.arrow_square, tuple(board.door_square.tolist()),
           tuple(board.room_kind.tolist()), tuple(board.stair_values.tolist()), board.hugo_start, board.overflow,
           board.wine_cellar_value, board.room_names, engine.num_players, size)
    scene = _SCENES.get(key)
    if scene is None:
        scene = _SCENES[key] = _Scene(engine, size)
        while len(_SCENES) > _MAX_SCENES:
            _SCENES.popitem(last=False)
    _SCENES.move_to_end(key)
    return scene


def render_rgb(engine, state, i: int = 0, size: int = 640) -> np.ndarray:
    """Game ``i`` as a ``(size, size, 3)`` uint8 picture (matplotlib, Agg; no window)."""
    size = checks.integer("size=", size, 64, 4096, allowed="integers 64..4096 (pixels)")
    pos = snapshot(engine, state, i)
    return _scene(engine, int(size)).frame(pos)


__all__ = ["render_rgb"]
