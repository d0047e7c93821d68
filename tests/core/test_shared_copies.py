"""The rules, the record format and the conformance records travel with the repository
(docs/RULES.md, docs/RECORDS.md, tests/conformance/), copied from the project's ``shared/`` folder,
which is their source: a copy that drifts from it fails here."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"  # beside the repository where the whole project is checked out

# copy in the repository -> its source in shared/
COPIES = {
    "docs/RULES.md": "RULES.md",
    "docs/RECORDS.md": "RECORDS.md",
    "tests/conformance/records.jsonl": "conformance/records.jsonl",
    "tests/conformance/README.md": "conformance/README.md",
}


def copy_differs(copy: Path, source: Path | None) -> str | None:
    """Why ``copy`` is not a faithful copy of ``source``, or None when it is; with no source to
    compare with, only whether the copy is there and not empty."""
    if not copy.is_file() or copy.stat().st_size == 0:
        return f"{copy} is missing or empty"
    if source is None:
        return None
    if not source.is_file():
        return f"{source} is missing, so {copy} cannot be checked against it"
    if copy.read_bytes() != source.read_bytes():
        return f"{copy} differs from {source}: copy it again (cp {source} {copy})"
    return None


@pytest.mark.parametrize("copy,source", COPIES.items(), ids=list(COPIES))
def test_the_copy_in_the_repository_matches_shared(copy, source):
    """Where ``../shared`` exists, the copy is byte for byte its source. Where it does not (a
    clone on its own), there is nothing to compare with: the copy is what the tests and readers
    use, so it passes once the copy is there and not empty, rather than skipping."""
    problem = copy_differs(ROOT / copy, SHARED / source if SHARED.is_dir() else None)
    assert problem is None, problem


def test_a_drifted_copy_is_caught(tmp_path):
    source, copy = tmp_path / "RULES.md", tmp_path / "copy.md"
    source.write_text("# rules\nHugo moves clockwise.\n", "utf-8")
    copy.write_text("# rules\nHugo moves clockwise.\n", "utf-8")
    assert copy_differs(copy, source) is None and copy_differs(copy, None) is None
    copy.write_text("# rules\nHugo moves anticlockwise.\n", "utf-8")
    assert "differs from" in copy_differs(copy, source)
    copy.write_text("", "utf-8")
    assert "missing or empty" in copy_differs(copy, source)
    assert "missing or empty" in copy_differs(copy, None)
    source.unlink()
    copy.write_text("x", "utf-8")
    assert "is missing, so" in copy_differs(copy, source)
