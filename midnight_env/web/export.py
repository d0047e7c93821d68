"""One game as a single HTML file (``midnight render --html``): the page's viewer with its script,
its style and the game view inside, to open from disk, attach to an issue or send with a paper.
It needs no server and loads nothing from the network."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"  # the page's files

_STYLE_LINK = '<link rel="stylesheet" href="static/style.css">'
_SCRIPT_TAG = '<script src="static/app.js"></script>'


def embedded_json(value) -> str:
    """JSON that can stand inside a ``<script>`` element: no ``<``, ``>`` or ``&`` can end it early."""
    text = json.dumps(value, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def standalone_html(view: dict, title: str = "midnight game") -> str:
    """The page with ``view`` (a game view, ``views.record_view``) inside, showing only the viewer."""
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    style = (STATIC / "style.css").read_text(encoding="utf-8")
    script = (STATIC / "app.js").read_text(encoding="utf-8")
    if _STYLE_LINK not in page or _SCRIPT_TAG not in page or "</script" in script.lower() or "</style" in style.lower():
        raise RuntimeError("the page's files do not have the shape the HTML export expects")  # a broken install
    page = page.replace("<title>midnight</title>", f"<title>{escape(title)}</title>")
    page = page.replace(_STYLE_LINK, f"<style>\n{style}\n</style>")
    game = f'<script id="midnight-game" type="application/json">{embedded_json(view)}</script>'
    return page.replace(_SCRIPT_TAG, f"{game}\n<script>\n{script}\n</script>")


def write_html(view: dict, path: str | Path, title: str = "midnight game") -> Path:
    path = Path(path)
    path.write_text(standalone_html(view, title), encoding="utf-8")
    return path


__all__ = ["STATIC", "standalone_html", "write_html", "embedded_json"]
