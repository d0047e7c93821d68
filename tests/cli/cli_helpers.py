"""What the tests of hostile input share: run a ``midnight`` command in this process, and the
house rule that a refusal is one line naming the value and what is allowed."""

from __future__ import annotations

from midnight_env.cli import main


def run_cli(capsys, *args):
    """(exit status, stdout, stderr) of ``midnight ARGS`` (each argument as text)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str, *words: str) -> None:
    """``err`` is one line, no traceback, holding every one of ``words``."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], (word, lines[0])
