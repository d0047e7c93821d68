"""Where results came from: the git commit of the code that produced them.

Tournaments store it with every game, training runs with every model, so that a figure can be
traced to the code that made it. Outside a git checkout (an installed wheel) there is none.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]  # midnight_env/infra/provenance.py -> the checkout
_CODE = ("midnight_env", "agents", "experiments")  # what counts as the code, relative to the checkout


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=_REPO, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def code_commit() -> str | None:
    """The commit of the code, ``+dirty`` when it has uncommitted changes; None outside git."""
    head = _git("rev-parse", "HEAD")
    if head is None:
        return None
    changed = _git("status", "--porcelain", "--", *_CODE)
    return head + ("+dirty" if changed else "")
