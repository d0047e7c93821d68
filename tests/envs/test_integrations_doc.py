"""Every snippet of docs/INTEGRATIONS.md runs as it is written there, read from the file so that
the page and the tests cannot drift apart. Each plays a few hundred steps with a masked random
policy through its library's own API and asserts (or lets the env's ``illegal="raise"`` assert)
that every action was legal."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "INTEGRATIONS.md"
SNIPPET = re.compile(r"<!-- snippet: (?P<name>\w+) \| needs: (?P<needs>[\w. ]+?)(?: \| extra: (?P<extra>\w+))? -->\n"
                     r"```python\n(?P<code>.*?)```", re.S)
LIBRARIES = ("gymnasium", "pettingzoo", "sb3", "tianshou", "torchrl", "rllib", "openspiel", "supersuit")
SLOW = {"rllib", "tianshou", "sb3", "torchrl"}  # seconds of imports (torch) and set-up each


def snippets() -> list:
    text = DOC.read_text(encoding="utf-8")
    found = [m.groupdict() for m in SNIPPET.finditer(text)]
    return [pytest.param(s, id=s["name"], marks=[pytest.mark.slow] if s["name"] in SLOW else []) for s in found]


def test_every_library_has_a_snippet_and_every_python_block_is_one():
    text = DOC.read_text(encoding="utf-8")
    names = [m["name"] for m in SNIPPET.finditer(text)]
    assert set(LIBRARIES) <= set(names)
    assert len(names) == len(set(names)) == text.count("```python")


@pytest.mark.parametrize("snippet", snippets())
def test_snippet_runs(snippet, require, tmp_path, monkeypatch):
    for module in snippet["needs"].split():
        require(module, extra=snippet["extra"] or "integrations")
    monkeypatch.chdir(tmp_path)  # whatever a snippet writes lands here
    namespace = {"__name__": f"integrations_{snippet['name']}"}
    exec(compile(snippet["code"], f"{DOC}:{snippet['name']}", "exec"), namespace)
    if "steps" in namespace:  # every snippet that plays says how many decisions it made
        assert namespace["steps"] >= 256
