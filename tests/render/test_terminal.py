"""The terminal as a newcomer meets it: ``midnight render`` steps through one 80x24 frame at a time
on a terminal and prints plain frames to a pipe; ``midnight play`` keeps the board and the choices
on one screen and names rooms (colour, points) and Hugo's landing."""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from midnight_env import Engine, agent_streams
from midnight_env.cli import main
from midnight_env.commands import play as play_cmd
from midnight_env.commands import render as render_cmd
from midnight_env.commands.common import seat_lineup
from midnight_env.commands.render import BACK, NEXT, QUIT, KeyReader, parse_step
from midnight_env.core.dice import FACES_BY_NAME
from midnight_env.core.state import MOVE, PLACE, ROLL
from midnight_env.render.layout import ring_grid
from midnight_env.render.text import render_frame, use_color

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b"
CAPTION = re.compile(r"^--- (\d+)/(\d+): ", re.M)


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def frames_of(out: str) -> list[list[str]]:
    """The frames of ``midnight render`` printed to a pipe: each its caption and board lines."""
    frames: list[list[str]] = []
    for line in out.splitlines():
        if line.startswith("--- ") and not line.startswith("--- round"):
            frames.append([line])
        elif frames and not line.startswith("game over") and not line.startswith("--- round"):
            frames[-1].append(line)
    return frames


def frame_cell(text: str, num_squares: int, square: int) -> tuple[str, str]:
    """The two lines of gallery square ``square`` on a plain frame (a status line, then the ring:
    squares 7 characters wide, the top and bottom rows between rules, the sides two lines each)."""
    rows, _, cells = ring_grid(num_squares)
    r, c, _ = cells[square]
    top = 1 if r == 0 else 4 + 2 * (r - 1) if r < rows - 1 else 4 + 2 * (rows - 2) + 1
    lines = text.split("\n")[1:]
    return lines[top][c * 8:c * 8 + 7], lines[top + 1][c * 8:c * 8 + 7]


def random_game(variant: str, num_players: int, seed: int):
    """An engine and the positions of one random game where a decision is made."""
    eng = Engine(variant, num_players)
    state = eng.new_games([seed])
    rng = agent_streams([seed])
    seen = []
    while not state.done.all():
        if state.phase[0] in (PLACE, MOVE):
            seen.append(state.copy())
        eng.step(state, eng.random_actions(state, rng))
    return eng, seen, state


def play_screen(eng, state) -> str:
    """What ``midnight play`` shows for the human's decision in ``state`` (then q)."""
    lines: list[str] = []
    old = sys.stdin
    sys.stdin = io.StringIO("q\n")
    try:
        play_cmd.choose(eng, state, False, lambda *a, end="\n", flush=False: lines.append(" ".join(map(str, a)) + end))
    finally:
        sys.stdin = old
    return "".join(lines).rstrip("\n")


# -- midnight render ----------------------------------------------------------------------------

def test_render_to_a_pipe_is_every_frame_plain_and_each_fits_80x24(tmp_path):
    """The whole game goes to the pipe, frame after frame, without colour codes; one frame is
    at most 24 lines of at most 80 columns (it was 38 lines of 91)."""
    path = tmp_path / "g.jsonl"
    assert main(["simulate", "--games", "1", "--players", "4", "--record", str(path), "--no-progress"]) == 0
    run = subprocess.run([sys.executable, "-m", "midnight_env.cli", "render", "--record", str(path)],
                         capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                         stdin=subprocess.DEVNULL)
    assert run.returncode == 0 and run.stderr == ""
    assert ESC not in run.stdout
    frames = frames_of(run.stdout)
    events = len(json.loads(path.read_text().splitlines()[0])["events"])
    assert len(frames) > 50 and len(frames) <= events + 1
    assert max(len(f) for f in frames) <= 24
    assert max(len(line) for f in frames for line in f) <= 80
    assert "game over: points" in run.stdout


@pytest.mark.parametrize("variant", ("midnight_party", "hidden_castle"))
@pytest.mark.parametrize("num_players", (1, 2, 8))
def test_every_frame_fits_a_terminal(variant, num_players):
    eng, seen, end = random_game(variant, num_players, 7)
    for state in seen[::5] + [end]:
        text = render_frame(eng, state, color=False)
        lines = text.split("\n")
        assert len(lines) <= 22 and max(len(line) for line in lines) <= 80, text
        assert ESC not in text
        coloured = render_frame(eng, state, color=True)
        assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == text
    # the squares in their ring, Hugo and the guests on them, the points, the rooms are there to read
    for state in seen[::7]:
        text = render_frame(eng, state, color=False)
        for square in range(eng.board.num_squares):
            number, inside = frame_cell(text, eng.board.num_squares, square)
            assert re.match(rf"{square}\b", number), (square, text)
            hugo = square == eng.hugo_square(state)
            assert inside.startswith(("HUGO", "H")) == hugo, (square, text)
            guests = state.gallery[0, :, square]
            if guests.sum() <= 2:
                seats = [int(ch) for ch in re.sub(r"\[\d\]|HUGO|H", "", inside) if ch.isdigit()]
                assert seats == [p for p in range(num_players) for _ in range(guests[p])], (square, text)
    text = render_frame(eng, end, color=False)
    spooky = next(line for line in text.split("\n") if "spooky " in line)
    assert [int(v) for v in re.findall(r"-?\d+", spooky.split("spooky", 1)[1])[:num_players]] == end.spooky[0].tolist()
    assert "game over" in text.split("\n")[0]
    for q in range(eng.board.num_rooms):
        assert re.search(rf"\br{q}[+-]?(\||$| |\n)", text), q


def test_colours_follow_the_terminal_no_color_and_the_flag(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert use_color(None, Tty()) and not use_color(None, io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(None, Tty())
    assert use_color(True, Tty()) and use_color(True, io.StringIO())  # --color wins
    monkeypatch.setenv("NO_COLOR", "")
    assert use_color(None, Tty())  # empty: not set (no-color.org)
    monkeypatch.setenv("TERM", "dumb")
    assert not use_color(None, Tty()) and not use_color(False, Tty())


def test_render_color_flag_to_a_pipe(capsys):
    code, out, _ = run_cli(capsys, "render", "--players", "2", "--seed", "1", "--color")
    assert code == 0 and "\x1b[" in out
    code, out, _ = run_cli(capsys, "render", "--players", "2", "--seed", "1")
    assert code == 0 and ESC not in out and out.count("--- player") > 20


def test_stepping_moves_by_the_keys(capsys):
    """Next, back, a jump, a frame that does not exist, quit: one screen each."""
    eng = Engine("midnight_party", 2)
    agents, lineup = seat_lineup("random", 2)[:2]
    keys = iter([NEXT, NEXT, BACK, 40, 9999, BACK, QUIT])
    prompts = []

    def read(prompt):
        prompts.append(prompt)
        return next(keys)

    screens: list[list[str]] = [[]]

    def out(*args, end="\n"):
        text = " ".join(map(str, args)) + end
        if text.startswith(render_cmd.CLEAR_SCREEN):
            screens.append([])
            text = text[len(render_cmd.CLEAR_SCREEN):]
        screens[-1].append(text)

    render_cmd.step_frames(eng, render_cmd.game_frames(eng, agents, lineup, 1), False, read, out, clear=True)
    shown = [int(m.group(1)) for s in screens for m in CAPTION.finditer("".join(s))]
    assert shown == [1, 2, 3, 2, 40, 40, 39]
    assert "no frame 9999" in prompts[5]
    for s in screens[1:]:
        lines = "".join(s).rstrip("\n").split("\n")
        assert len(lines) + 1 <= 24 and max(map(len, lines)) <= 80  # and the prompt's line


def test_the_last_frame_says_the_result_and_next_ends(capsys):
    eng = Engine("hidden_castle", 2)
    agents, lineup = seat_lineup("random", 2)[:2]
    frames = list(render_cmd.game_frames(eng, agents, lineup, 3))
    total = sum(state is not None for _, state in frames)
    seen = []
    keys = iter([total, NEXT])
    last = render_cmd.step_frames(eng, frames, False, lambda prompt: (seen.append(prompt), next(keys))[1],
                                  lambda *a, end="\n": seen.append(" ".join(a)))
    assert last == total
    text = "\n".join(seen)
    assert f"--- {total}/{total}: " in text and "game over: points" in text and "last frame" in text


@pytest.mark.parametrize("line, step", [("\n", NEXT), ("n\n", NEXT), (" \n", NEXT), ("b\n", BACK), ("p\n", BACK),
                                        ("q\n", QUIT), ("12\n", 12), ("", QUIT)])
def test_typed_lines_step_where_keys_cannot_be_read(line, step):
    written = []
    reader = KeyReader(io.StringIO(line), written.append)
    assert reader("> ") == step
    assert parse_step("zebra") is None


def test_a_line_that_is_not_a_step_is_answered_and_asked_again():
    written = []
    assert KeyReader(io.StringIO("zebra\n3\n"), written.append)("> ") == 3
    assert any("'zebra'" in w and "allowed are" in w for w in written)


def _read_until(fd: int, buf: bytearray, start: int, marker: bytes, timeout: float) -> None:
    """Read the terminal into ``buf`` until ``marker`` shows after ``start`` (or the time is up)."""
    end = time.monotonic() + timeout
    while marker not in buf[start:] and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 65536)
            except OSError:  # the command has ended
                return
            if not data:
                return
            buf += data


# slow: the command started afresh under a pseudo-terminal, keys typed one at a time (2-8 s)
@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_render_on_a_terminal_steps_with_single_keys():
    import pty

    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), TERM="xterm")
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "midnight_env.cli", "render", "--players", "2", "--seed", "1"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    buf = bytearray()
    try:
        start = 0
        for key in (b"n", b" ", b"\x1b[C", b"b", b"12\r", b"x", b"q"):
            if key != b"q":  # (x draws nothing: q follows it at once)
                _read_until(master, buf, start, b"quit > ", 60)
            start = len(buf)
            os.write(master, key)
        _read_until(master, buf, start, b"never shown", 5)  # to the end of the output
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = buf.decode("utf-8", "replace")
    screens = text.split(render_cmd.CLEAR_SCREEN)[1:]
    shown = [int(CAPTION.search(s).group(1)) for s in screens]
    assert shown == [1, 2, 3, 4, 3, 12]  # n, space, right arrow, b, 12 and Enter; x does nothing; q quits
    assert "\x1b[1;" in text  # colours on a terminal
    for s in screens:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", s).replace("\r", "")
        lines = plain.rstrip("\n").split("\n")
        assert len(lines) <= 24 and max(map(len, lines)) <= 80


# -- midnight play ------------------------------------------------------------------------------

def test_play_board_and_choices_fit_one_screen():
    """Every decision of a few games, the ones with most choices included (28 squares to place
    on, 19 moves), is one screen of at most 24 lines of 80 columns, every choice on it."""
    most = 0
    for variant, players, seed in (("midnight_party", 1, 9), ("hidden_castle", 2, 1), ("midnight_party", 8, 2)):
        eng, seen, _ = random_game(variant, players, seed)
        for state in seen:
            screen = play_screen(eng, state)
            lines = screen.split("\n")
            assert len(lines) <= 24 and max(map(len, lines)) <= 80, screen
            legal = int(state.legal[0].sum())
            for k in range(1, legal + 1):
                assert re.search(rf"(^|\s){k}\) [gcrp]", screen), (k, screen)
            most = max(most, legal)
    assert most >= 19


def _room_move(variant: str):
    """A position where the deciding player may enter a room, and that move."""
    for seed in range(40):
        eng, seen, _ = random_game(variant, 2, seed)
        for state in seen:
            if state.phase[0] != MOVE:
                continue
            for a in np.flatnonzero(state.legal[0]):
                if eng.layout.choice_kind(int(a)) == "enter a room":
                    return eng, state, int(a)
    raise AssertionError("no room move found")


def test_a_room_move_names_the_room_its_colour_and_points():
    eng = Engine("midnight_party", 2)
    assert play_cmd.room_words(eng, 2) == "room 2 (game room), green: -3 spooky points"
    assert play_cmd.room_words(eng, 8) == "room 8 (library), red: +1 spooky point"
    assert play_cmd.room_words(eng, 4) == "room 4, plain, no points"
    castle = Engine("hidden_castle", 2)
    assert play_cmd.room_words(castle, 6) == "room 6, green: -3 spooky points (not below 0)"
    assert play_cmd.room_words(castle, 2) == "room 2, red: +1 spooky point"
    eng, state, action = _room_move("midnight_party")
    note = eng.layout.to_notation(action, int(state.roll[0]))
    q = int(note.split(">r")[1])
    screen = play_screen(eng, state)
    choice = next(line for line in screen.split("\n") if re.search(rf"\) {re.escape(note)}\b", line))
    colour = ("plain", "red +1", "green -3")[int(eng.board.room_kind[q])]
    assert play_cmd.room_words(eng, q) in choice or re.search(rf"\) {re.escape(note)} +{colour}\b", choice), choice


def test_hugo_climbing_the_stairs_says_the_landing():
    for variant, words in (("midnight_party", "landing 7"), ("hidden_castle", "step +8")):
        eng = Engine(variant, 2)
        state = eng.new_games([4])
        rng = agent_streams([4])
        while state.phase[0] == PLACE:  # the guests placed; then the first roll is Hugo
            eng.apply_action(state, eng.random_actions(state, rng))
        assert state.phase[0] == ROLL
        before = state.copy()
        eng.apply_roll(state, [FACES_BY_NAME["hugo"]])
        assert play_cmd.hugo_words(eng, before, state) == f"he climbs the cellar stairs to {words} (rooms stay locked)"


def test_play_says_landings_rooms_and_captures(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 400))
    code = main(["play", "--players", "2", "--seed", "5", "--opponents", "random"])
    out = capsys.readouterr().out
    assert code == 0 and ESC not in out
    assert "rolled Hugo: he climbs the cellar stairs to landing 7 (rooms stay locked)" in out
    assert re.search(r"rolled Hugo: he moves to g\d+ and captures \d guests? \(\d of seat \d", out)
    assert re.search(r"moves g\d+>r\d+: room \d+(?: \([a-z ]+\))?, (plain, no points|red: \+1 spooky point|green: -3)",
                     out)
