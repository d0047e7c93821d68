"""The README's quick starts run as they are written: every ```python block right after a
``<!-- quickstart -->`` marker is executed, with a training budget of a few hundred steps instead
of the README's few thousand (the one change made to the text, checked to have happened)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
QUICKSTART = re.compile(r"<!-- quickstart -->\n```python\n(.*?)\n```", re.S)
BUDGET = re.compile(r"total_timesteps=[\d_]+")
TEST_BUDGET = "total_timesteps=256"


def quickstarts() -> list[str]:
    return QUICKSTART.findall(README.read_text("utf-8"))


def env_name(code: str) -> str:
    """What a quick start imports from midnight_env: the env it shows."""
    return re.search(r"from midnight_env import (\w+)", code).group(1)


def test_the_readme_has_a_quick_start_for_each_env():
    assert [env_name(code) for code in quickstarts()] == ["midnight_v0", "SingleAgentEnv", "VectorEnv"]


@pytest.fixture
def one_torch_thread():
    """Torch's default of a thread per core makes a tiny MLP's updates slower, not faster, on a
    busy machine; one thread, restored afterwards."""
    torch = pytest.importorskip("torch")  # the "train" extra
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("code", quickstarts(), ids=env_name)
def test_a_quick_start_runs(code, capsys, request):
    if "sb3_contrib" in code:
        pytest.importorskip("sb3_contrib")  # the "train" extra
        request.getfixturevalue("one_torch_thread")
        code, budgets = BUDGET.subn(TEST_BUDGET, code)
        assert budgets == 1, "the MaskablePPO quick start sets its budget with total_timesteps=..."
    exec(compile(code, f"{README.name} quick start", "exec"), {"__name__": "__quickstart__"})
    printed = capsys.readouterr().out
    assert printed.strip(), "a quick start shows what it did"
