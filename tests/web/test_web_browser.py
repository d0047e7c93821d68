"""The page in a real browser: headless Chromium (Debian's ``chromium`` and ``chromium-driver``,
driven by Selenium) against ``midnight serve`` started as a user starts it. A whole game against
``random`` played by clicking on the board; a record stepped through with the buttons and the keys
and opened again from its link; a record analysed, the loss of a move and the better one shown; the
leaderboard; a bad link answered on the page; the HTML file of
``render --html`` opened from disk; a screenshot that is not blank.

The tests are skipped, saying why, where Chromium or its driver is not installed (``.ci/run``
installs both); on CI (``CI=true``) a missing browser fails them instead."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from midnight_env import Engine
from midnight_env.arena.play import play_batch
from midnight_env.arena.registry import make_agent
from midnight_env.core.records import replay_record
from midnight_env.tournament import make_tournament_config, run_tournament

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1500,1000"]
WAIT = 180  # seconds: the first request may compile the engine's kernels


def _missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (the test extra: python -m pip install -e '.[test]')"
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        return "the web extra is not installed (python -m pip install -e '.[web]')"
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return f"{path} is missing: install Debian's {package} (apt-get install chromium chromium-driver)"
    return None


_WHY = _missing()
if _WHY is not None:
    if os.environ.get("CI") == "true":  # CI installs the browser: its absence there is a failure
        pytest.fail(f"browser tests cannot run on CI: {_WHY}", pytrace=False)
    pytest.skip(f"browser tests skipped: {_WHY}", allow_module_level=True)

from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A data folder with a record file of two games and a tournament database."""
    folder = tmp_path_factory.mktemp("data")
    engine = Engine("midnight_party", 3)
    agents = [make_agent("random"), make_agent("expert")]
    records = play_batch(engine, agents, np.array([[0, 1, 0], [1, 0, 1]]), [21, 22], record=True,
                         agent_names=["random", "expert"]).records
    (folder / "games.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    config = make_tournament_config("midnight_party", 2, ["random", "runner", "coward"], seed=3)
    run_tournament(config, 6, db=folder / "results.sqlite", progress=False)
    return folder


@pytest.fixture(scope="module")
def server(data):
    """``midnight serve --port 0 --data DIR``, as a user starts it; stopped with Ctrl-C (SIGINT)."""
    proc = subprocess.Popen([sys.executable, "-m", "midnight_env.cli", "serve", "--port", "0", "--data", str(data)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("midnight serve: http://"):
        proc.kill()
        pytest.fail(f"midnight serve did not start: {line}{proc.stderr.read()}")
    url = line.split()[2]
    yield url
    proc.send_signal(signal.SIGINT)
    try:
        assert proc.wait(timeout=30) in (0, 130)
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="midnight-chromium-")  # an empty profile
    for flag in CHROMIUM_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait(driver, condition, timeout: float = WAIT):
    return WebDriverWait(driver, timeout).until(lambda d: condition(d))


def load(driver, url: str) -> None:
    driver.get("about:blank")
    driver.get(url)
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")


def by(driver, css: str):
    return driver.find_element(By.CSS_SELECTOR, css)


def shown(driver, element_id: str) -> bool:
    return driver.find_element(By.ID, element_id).is_displayed()


def position(driver) -> int:
    return int(by(driver, "#event-input").get_attribute("value"))


def test_a_whole_game_against_random_is_played_by_clicking_on_the_board(server, browser, data):
    load(browser, server + "#play")
    Select(by(browser, "#play-players")).select_by_value("2")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#play-opponents input")) == 1)
    opponent = by(browser, "#play-opponents input")
    opponent.clear()
    opponent.send_keys("random")
    by(browser, "#play-seed").send_keys("12")
    Select(by(browser, "#play-speed")).select_by_value("0")
    by(browser, "#play-start").click()
    rng = random.Random(1)
    clicks, typed = 0, []
    while True:
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#play-moves button") or shown(d, "play-result"))
        if shown(browser, "play-result"):
            break
        turn = by(browser, "#play-side").get_attribute("data-turn")
        moves = [b.get_attribute("data-move") for b in browser.find_elements(By.CSS_SELECTOR, "#play-moves button")]
        move = rng.choice(moves)
        if move == "pass" or not typed:  # the keyboard path: the first decision, and passing (no place to click)
            by(browser, "#play-input").send_keys(str(moves.index(move) + 1), Keys.ENTER)
            typed.append(move)
        elif ">" not in move:  # a placement: one click on the square
            by(browser, f'#play-board rect.pick.target[data-place="{move}"]').click()
        else:  # a move: the guest, then where it goes
            origin, target = move.split(">")
            by(browser, f'#play-board rect.pick.origin[data-place="{origin}"]').click()
            by(browser, f'#play-board rect.pick.target[data-place="{target}"]').click()
        clicks += 1
        wait(browser, lambda d, before=turn: d.find_element(By.ID, "play-side").get_attribute("data-turn") != before
             or shown(d, "play-result"))
    result = by(browser, "#play-result").text
    assert "Recorded as played.jsonl line 1" in result and ("You win" in result or "You lose" in result
                                                             or "share" in result)
    rec = json.loads((data / "played.jsonl").read_text(encoding="utf-8").splitlines()[0])
    replay_record(rec)
    mine = [ev for ev in rec["events"] if ev["e"] in ("place", "move") and ev["p"] == 0]
    assert len(mine) == clicks > 10 and rec["agents"] == ["human", "random"]
    assert mine[0]["a"] == typed[0]
    by(browser, "#watch-played").click()  # the game just played, in the viewer
    wait(browser, lambda d: shown(d, "viewer") and "played.jsonl line 1" in by(d, "#game-meta").text)


def test_a_record_is_stepped_through_and_opened_again_from_its_link(server, browser, data):
    load(browser, server)
    by(browser, 'button[data-file="games.jsonl"]').click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#game-list tr[data-line="2"]'))
    by(browser, '#game-list tr[data-line="2"]').click()
    wait(browser, lambda d: shown(d, "viewer") and "event 0 of" in by(d, "#position").text)
    record = json.loads((data / "games.jsonl").read_text(encoding="utf-8").splitlines()[1])
    events = record["events"]
    by(browser, "#next").click()
    by(browser, "#next").click()
    assert position(browser) == 2
    for _ in range(3):  # the next decisions: the move made marked among the legal ones
        by(browser, "#next-decision").click()
        k = position(browser)
        assert events[k]["e"] in ("place", "move")
        chosen = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#legal-list li.chosen")]
        legal = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#legal-list li")]
        assert chosen == [events[k]["a"]] and sorted(legal) == sorted(events[k]["legal"])
    by(browser, "body").send_keys(Keys.ARROW_RIGHT)
    assert position(browser) == k + 1
    by(browser, "#play-pause").click()  # play ... pause
    wait(browser, lambda d: position(d) >= k + 3, 30)
    by(browser, "#play-pause").click()
    stopped = position(browser)
    time.sleep(1.2)
    assert position(browser) == stopped
    by(browser, "#last").click()
    assert "game over" in by(browser, "#caption").text and position(browser) == len(events)
    browser.find_elements(By.CSS_SELECTOR, "#event-log li")[40].click()  # the event log jumps too
    assert position(browser) == 40
    link = by(browser, "#permalink").get_attribute("href")
    assert "file=games.jsonl" in link and "line=2" in link and "event=40" in link
    load(browser, link)  # the link opens the same game at the same event
    wait(browser, lambda d: shown(d, "viewer") and position(d) == 40)
    assert "games.jsonl line 2" in by(browser, "#game-meta").text

    png = browser.find_element(By.ID, "watch-board").screenshot_as_png
    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    assert image.shape[0] > 300 and image.shape[1] > 300
    colours = {tuple(c) for c in np.unique(image.reshape(-1, 3), axis=0)}
    assert len(colours) > 50  # not blank: the board, its rooms, guests, text
    for seat_colour in ((0x1F, 0x77, 0xB4), (0xFF, 0x7F, 0x0E), (0x94, 0x67, 0xBD)):  # every seat's disc
        assert seat_colour in colours


def test_a_record_is_analysed_and_the_loss_of_a_move_and_the_better_one_are_shown(server, browser, data):
    load(browser, server + "#watch?file=games.jsonl&line=1&event=0")
    wait(browser, lambda d: shown(d, "viewer") and "games.jsonl line 1" in by(d, "#game-meta").text)
    assert not shown(browser, "analysis-move")
    by(browser, "#analyse").click()
    wait(browser, lambda d: "decisions judged" in by(d, "#analysis-status").text)
    assert "value-midnight_party-3p:budget=1500" in by(browser, "#analysis-status").text  # the set-up's champion
    seats = browser.find_elements(By.CSS_SELECTOR, "#analysis-seats tr")
    assert len(seats) == 1 + 3  # a heading and a row per seat
    # three players: the evaluator's error was never measured there, so its losses are shown, not marked
    assert "accuracy not measured: nothing marked" in by(browser, "#analysis-status").text
    assert not browser.find_elements(By.CSS_SELECTOR, "#event-log .mark")
    record = json.loads((data / "games.jsonl").read_text(encoding="utf-8").splitlines()[0])
    for _ in range(len(record["events"])):  # the decisions, until one that loses points
        by(browser, "#next-decision").click()
        text = by(browser, "#analysis-move").text
        if text.startswith("Loses"):
            break
        assert text.startswith(("The best choice", "Forced")), text
    else:
        pytest.fail("no decision of the game loses points")
    k = position(browser)
    assert record["events"][k]["e"] in ("place", "move")
    better = by(browser, "#analysis-move .better").text.replace(" \u2192 ", ">")
    assert better in record["events"][k]["legal"] and better != record["events"][k]["a"]
    drawn = browser.find_elements(By.CSS_SELECTOR, "#watch-board .arrow-better, #watch-board .mark-better")
    assert better == "pass" or drawn  # the better move drawn on the board
    by(browser, "body").send_keys(Keys.ARROW_RIGHT)  # a roll: no judgement shown
    if record["events"][k + 1]["e"] not in ("place", "move"):
        assert not shown(browser, "analysis-move")


def test_the_leaderboard_shows_the_table_and_the_ratings_plot(server, browser):
    load(browser, server + "#leaderboard")
    wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#lb-table tbody tr")) == 3)
    agents = [row.find_elements(By.TAG_NAME, "td")[1].text for row in
              browser.find_elements(By.CSS_SELECTOR, "#lb-table tbody tr")]
    assert sorted(agents) == ["coward", "random", "runner"]
    wait(browser, lambda d: d.execute_script("const i = document.getElementById('lb-plot');"
                                             "return i.complete && i.naturalWidth > 100"), 60)


def test_a_bad_link_is_answered_on_the_page_and_the_server_serves_on(server, browser):
    load(browser, server + "#watch?file=../secret.jsonl&line=1")
    wait(browser, lambda d: shown(d, "message"))
    assert "outside the data folder" in by(browser, "#message-text").text
    load(browser, server + "#watch?file=games.jsonl&line=7")
    wait(browser, lambda d: shown(d, "message") and "no record on line 7" in by(d, "#message-text").text)
    load(browser, server + "#watch?agents=nobody&players=2&seed=1")
    wait(browser, lambda d: shown(d, "message") and "'nobody' is not one the page plays" in by(d, "#message-text").text)
    load(browser, server + "#watch?file=games.jsonl&line=1&event=5")
    wait(browser, lambda d: shown(d, "viewer") and position(d) == 5)
    assert not shown(browser, "message")


def test_the_html_file_of_one_game_works_from_disk(browser, data, tmp_path):
    from midnight_env.cli import main

    page = tmp_path / "game.html"
    assert main(["render", "--record", str(data / "games.jsonl"), "--line", "1", "--html", str(page)]) == 0
    load(browser, Path(page).as_uri() + "#event=12")
    assert position(browser) == 12 and not shown(browser, "sources")  # the viewer alone
    by(browser, "body").send_keys(Keys.END)
    assert "game over" in by(browser, "#caption").text


# ------------------------------------------------------------------------------------------------
# the layout: the board in the window without scrolling


BOARD_RECT = ("window.scrollTo(0, 0); const b = document.getElementById(arguments[0]).getBoundingClientRect();"
              "const page = document.documentElement;"
              "return {left: b.left, top: b.top, right: b.right, bottom: b.bottom, width: b.width, height: b.height,"
              " innerWidth: page.clientWidth, innerHeight: window.innerHeight, scrollWidth: page.scrollWidth};")


def window_inside(driver, width: int, height: int) -> None:
    """The window's inside (the page's viewport) made ``width`` x ``height``."""
    driver.set_window_size(width, height)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])
    assert driver.execute_script("return [window.innerWidth, window.innerHeight]") == [width, height]


def board_views(driver, server):
    """(view, board id) of each view that shows a board, the page left in that view: a record
    watched, the same with its analysis beside it, a game being played."""
    load(driver, server + "#watch?file=games.jsonl&line=1&event=5")
    wait(driver, lambda d: shown(d, "viewer") and position(d) == 5)
    yield "watch", "watch-board"
    by(driver, "#analyse").click()
    wait(driver, lambda d: "decisions judged" in by(d, "#analysis-status").text)
    by(driver, "#next-decision").click()
    wait(driver, lambda d: shown(d, "analysis-move"))
    yield "analysis", "watch-board"
    load(driver, server + "#play")
    Select(by(driver, "#play-players")).select_by_value("2")
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#play-opponents input")) == 1)
    opponent = by(driver, "#play-opponents input")
    opponent.clear()
    opponent.send_keys("random")
    by(driver, "#play-start").click()
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#play-moves button"))
    yield "play", "play-board"


def test_at_1024_by_700_the_board_of_every_view_is_in_the_window_without_scrolling(server, browser):
    window_inside(browser, 1024, 700)
    try:
        for view, board in board_views(browser, server):
            assert browser.execute_script("return window.scrollY") == 0, view  # the page did not scroll itself
            rect = browser.execute_script(BOARD_RECT, board)
            assert rect["width"] > 500 and rect["height"] > 400, (view, rect)  # the board, not a stamp
            assert rect["top"] >= 0 and rect["bottom"] <= rect["innerHeight"], (view, rect)
            assert rect["left"] >= 0 and rect["right"] <= rect["innerWidth"], (view, rect)
            beside = by(browser, "#details" if board == "watch-board" else "#play-side").rect  # the facts beside it
            assert beside["x"] >= rect["right"] and beside["y"] < rect["innerHeight"], (view, beside, rect)
    finally:
        browser.set_window_size(1500, 1000)


@pytest.mark.parametrize("width, height", [(1366, 768), (1920, 1080), (390, 844)])
def test_the_board_fits_the_width_of_other_windows_and_their_height_where_the_panels_are_beside_it(
        server, browser, width, height):
    window_inside(browser, width, height)
    try:
        for view, board in board_views(browser, server):
            rect = browser.execute_script(BOARD_RECT, board)
            assert rect["left"] >= 0 and rect["right"] <= rect["innerWidth"], (view, rect)  # never cut off
            assert rect["scrollWidth"] <= rect["innerWidth"], (view, rect)  # no sideways scrolling
            assert rect["width"] > min(0.8 * rect["innerWidth"], 600), (view, rect)  # as wide as it can be
            if width >= 720:  # a phone shows the board first, then the panels below it
                assert rect["top"] >= 0 and rect["bottom"] <= rect["innerHeight"], (view, rect)
    finally:
        browser.set_window_size(1500, 1000)
