"""The web app of ``midnight serve`` through Starlette's test client: the page, watching records,
uploads and tournament games, playing a whole game, the leaderboard, and a refusal per bad input
(malformed or hostile records, unknown games and agents, files outside the data folder, oversized
uploads), after each of which the server goes on serving."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import zlib

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: python -m pip install -e '.[web]'")
from starlette.testclient import TestClient  # noqa: E402

from midnight_env import Engine  # noqa: E402
from midnight_env.arena.play import play_batch  # noqa: E402
from midnight_env.arena.registry import make_agent  # noqa: E402
from midnight_env.core.records import replay_record  # noqa: E402
from midnight_env.tournament import leaderboard, make_tournament_config, run_tournament  # noqa: E402
from midnight_env.tournament.store import read_results, read_tournaments  # noqa: E402
from midnight_env.web.app import LOOPBACK_HOSTS, create_app  # noqa: E402
from midnight_env.web.export import STATIC  # noqa: E402
from midnight_env.web.sources import MAX_UPLOAD_BYTES, PLAYED_FILE  # noqa: E402
from midnight_env.web.views import MAX_EVENTS  # noqa: E402


def new_record(variant: str, players: int, seed: int, agent: str = "random") -> dict:
    engine = Engine(variant, players)
    return play_batch(engine, [make_agent(agent)], np.zeros((1, players), np.int64), [seed], record=True,
                      agent_names=[agent]).records[0]


@pytest.fixture(scope="module")
def classic():
    return new_record("midnight_party", 2, 3)


@pytest.fixture(scope="module")
def castle():
    return new_record("hidden_castle", 3, 4)


@pytest.fixture(scope="module")
def tournament_db(tmp_path_factory):
    """A tournament database with records, checkpointed so that the file alone holds everything."""
    folder = tmp_path_factory.mktemp("tournament")
    db = folder / "t.sqlite"
    config = make_tournament_config("midnight_party", 2, ["random", "runner"], seed=1)
    run_tournament(config, 4, db=db, records=folder / "t.jsonl", progress=False)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db.read_bytes(), config


@pytest.fixture
def data(tmp_path, classic, castle, tournament_db):
    folder = tmp_path / "data"
    folder.mkdir()
    lines = [json.dumps(classic), "{not json", json.dumps(castle)]
    (folder / "games.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "t.sqlite").write_bytes(tournament_db[0])
    (tmp_path / "secret.jsonl").write_text(json.dumps(classic) + "\n", encoding="utf-8")  # outside the folder
    return folder


@pytest.fixture
def client(data):
    return TestClient(create_app(data))


def tournament_key(client) -> str:
    return client.get("/api/tournaments", params={"db": "t.sqlite"}).json()["tournaments"][0]["key"]


def still_serving(client) -> None:
    assert client.get("/api/files").status_code == 200


# ------------------------------------------------------------------------------------------------
# the page


def test_the_page_and_its_files_load_nothing_from_the_network(client):
    page = client.get("/")
    assert page.status_code == 200 and 'src="static/app.js"' in page.text
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "script-src 'self'" in policy
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    for path in STATIC.iterdir():  # no CDN, no font or script from elsewhere: the one URL is SVG's namespace
        urls = set(re.findall(r"https?://[^\s\"'`)]+", path.read_text(encoding="utf-8")))
        assert urls <= {"http://www.w3.org/2000/svg"}, (path.name, urls)


def test_info_names_the_data_folder_variants_and_agents(client, data):
    info = client.get("/api/info").json()
    assert info["data"] == str(data.resolve())
    assert info["variants"] == ["midnight_party", "hidden_castle"]
    names = [a["name"] for a in info["agents"]]
    assert {"random", "expert", "ppo-midnight_party-4p"} <= set(names)


def test_agents_say_which_can_play_the_game_and_offer_the_shipped_champion(client):
    castle = client.get("/api/agents", params={"variant": "hidden_castle", "players": 4}).json()
    fits = {a["name"]: a["fits"] for a in castle["agents"]}
    assert fits["ppo-hidden_castle-4p"] and not fits["ppo-midnight_party-4p"] and fits["random"]
    assert castle["champion"] == "value-hidden_castle-4p"
    three = client.get("/api/agents", params={"variant": "midnight_party", "players": 3}).json()
    assert three["champion"] == "value-midnight_party-3p"
    five = client.get("/api/agents", params={"variant": "midnight_party", "players": 5}).json()
    assert five["champion"] == "expert"  # no trained model fits five players


# ------------------------------------------------------------------------------------------------
# watching


def test_the_data_folder_lists_record_files_and_databases_only(client, data, tmp_path):
    (data / "notes.txt").write_text("x")
    (data / ".hidden").mkdir()
    (data / ".hidden" / "h.jsonl").write_text("")
    (data / "sub").mkdir()
    (data / "sub" / "more.jsonl").write_text("")
    os.symlink(tmp_path / "secret.jsonl", data / "link.jsonl")  # leads outside: not listed
    listed = {f["name"]: f["kind"] for f in client.get("/api/files").json()["files"]}
    assert listed == {"games.jsonl": "records", "sub/more.jsonl": "records", "t.sqlite": "database"}


def test_a_record_file_lists_its_games_and_names_its_bad_lines(client, classic):
    games = client.get("/api/records", params={"file": "games.jsonl"}).json()["games"]
    assert [g["line"] for g in games] == [1, 2, 3]
    assert games[0]["agents"] == classic["agents"] and games[0]["final_points"] == classic["final_points"]
    assert "line 2" in games[1]["error"] and "not valid JSON" in games[1]["error"]
    assert games[2]["variant"] == "hidden_castle"


@pytest.mark.parametrize("line", [1, 3])
def test_a_game_is_shown_event_by_event_as_the_engine_replays_it(client, classic, castle, line):
    rec = classic if line == 1 else castle
    view = client.get("/api/game", params={"file": "games.jsonl", "line": line}).json()
    events, frames = view["events"], view["frames"]
    assert events == [{k: ev[k] for k in ("e", "p", "a", "face", "legal", "round", "points") if k in ev}
                      for ev in rec["events"]]
    assert len(frames) == len(events) + 1  # frame k: the position event k starts from; then the end
    for ev, frame in zip(events, frames):
        if ev["e"] in ("place", "move"):
            assert frame["phase"] == ev["e"] and frame["player"] == ev["p"]
            assert sorted(frame["legal"]) == sorted(ev["legal"])
        if ev["e"] == "move":
            assert frame["roll"] is not None  # the roll being decided
    assert frames[-1]["phase"] == "over" and frames[-1]["points"] == rec["final_points"]
    assert frames[-1]["winners"] == rec["winners"]
    assert view["board"]["variant"] == rec["variant"] and view["game"]["agents"] == rec["agents"]
    places = view["board"]["places"]
    assert {f"g{s}" for s in range(28)} <= set(places)


def test_a_cellar_move_names_the_step_its_guest_leaves(client):
    """hidden_castle: 'cellar>...' moves the player's guest on its highest step; the frame says where."""
    for seed in range(40):
        view = client.get("/api/game", params={"agents": "random", "variant": "hidden_castle", "players": 2,
                                               "seed": seed}).json()
        for frame in view["frames"]:
            if any(n.startswith("cellar>") for n in frame.get("legal", [])):
                assert len(frame["cellar"]) == 4  # the step's box, to mark and to click
                return
    pytest.fail("no cellar move in 40 random games")


def test_a_new_game_between_agents_is_the_same_game_for_the_same_link(client):
    params = {"agents": "random,expert", "variant": "midnight_party", "players": 2, "seed": 7}
    first = client.get("/api/game", params=params).json()
    again = client.get("/api/game", params=params).json()
    assert first["events"] == again["events"] and first["game"]["agents"] == ["random", "expert"]
    engine = Engine("midnight_party", 2)
    rec = play_batch(engine, [make_agent("random"), make_agent("expert")], np.array([[0, 1]]), [7], record=True,
                     agent_names=["random", "expert"]).records[0]
    assert [ev["e"] for ev in first["events"]] == [ev["e"] for ev in rec["events"]]
    assert first["game"]["final_points"] == rec["final_points"]


def test_a_game_is_analysed_decision_by_decision_beside_its_view(client, classic):
    params = {"file": "games.jsonl", "line": 1, "evaluator": "search:budget=100"}
    analysis = client.get("/api/analysis", params=params).json()
    decisions = [k for k, ev in enumerate(classic["events"]) if ev["e"] in ("place", "move")]
    assert [d["event"] for d in analysis["decisions"]] == decisions  # keyed by the event the view shows
    assert analysis["evaluator"]["spec"] == "search:budget=100" and len(analysis["seats"]) == 2
    for d in analysis["decisions"]:
        ev = classic["events"][d["event"]]
        assert d["chosen"] == ev["a"] and d["loss"] >= 0
        assert d["forced"] or (set(d["values"]) == set(ev["legal"]) and d["best"] in ev["legal"])
    assert any(d["loss"] > 0 for d in analysis["decisions"])  # random play loses points somewhere
    # the search is not measured on this set-up: no error, nothing marked, and the page is told so
    accuracy = analysis["evaluator"]["accuracy"]
    assert accuracy["measured"] is False and accuracy["about"].startswith("not measured") and accuracy["rule"]
    assert all(d["mark"] is None and (d["forced"] or d["loss_error"] is None) for d in analysis["decisions"])
    # the placement book covers midnight_party with two players: seat 0's first guest carries its values
    first = analysis["decisions"][0]
    assert first["book"]["chosen"]["square"] == first["chosen"] and first["book"]["best"]["half_width"] > 0
    assert all(d["book"] is None for d in analysis["decisions"][1:])


@pytest.mark.parametrize("params,status,why", [
    ({"evaluator": "search:path=/etc/passwd"}, 400, "option 'path' is not one the page takes"),
    ({"evaluator": "optimal:path=/tmp"}, 400, "option 'path' is not one the page takes"),
    ({"evaluator": "mymodule:Agent"}, 400, "is not one the page takes"),
    ({"evaluator": "expert"}, 400, "values no actions"),
    ({"evaluator": "optimal"}, 400, "cannot judge midnight_party 2 players"),
    ({"line": 2}, 422, "line 2: not valid JSON"),
])
def test_an_analysis_the_page_cannot_make_is_refused_by_name(client, params, status, why):
    reply = client.get("/api/analysis", params={"file": "games.jsonl", "line": 1, **params})
    assert reply.status_code == status and why in reply.json()["error"], reply.json()


def test_an_uploaded_file_is_shown_and_never_written(client, data, castle):
    before = sorted(p.name for p in data.iterdir())
    body = (json.dumps(castle) + "\n").encode()
    up = client.post("/api/upload", params={"name": "mine.jsonl"}, content=body,
                     headers={"content-type": "application/octet-stream"}).json()
    assert up["name"] == "mine.jsonl" and up["games"][0]["variant"] == "hidden_castle"
    view = client.get("/api/game", params={"upload": up["upload"], "line": 1}).json()
    assert len(view["frames"]) == len(castle["events"]) + 1
    assert sorted(p.name for p in data.iterdir()) == before


def test_a_tournament_shows_its_games_and_its_leaderboard(client, data, tournament_db):
    held = client.get("/api/tournaments", params={"db": "t.sqlite"}).json()["tournaments"]
    config = tournament_db[1]
    assert [(t["key"], t["games"], t["records"]) for t in held] == [(config.key, 4, 4)]
    games = client.get("/api/tournament", params={"db": "t.sqlite", "key": config.key}).json()["games"]
    assert [g["index"] for g in games] == [0, 1, 2, 3] and all(g["has_record"] for g in games)
    view = client.get("/api/game", params={"db": "t.sqlite", "key": config.key, "game": 2}).json()
    assert view["frames"][-1]["points"] == games[2]["points"]
    board = client.get("/api/leaderboard", params={"db": "t.sqlite", "key": config.key}).json()
    expected = leaderboard(read_results(data / "t.sqlite", config.key))
    assert [s["agent"] for s in board["standings"]] == [s.agent for s in expected]
    assert board["standings"][0]["mean_points"] == pytest.approx(expected[0].mean_points, abs=1e-4)
    plot = client.get("/api/leaderboard.png", params={"db": "t.sqlite", "key": config.key})
    assert plot.headers["content-type"] == "image/png" and plot.content.startswith(b"\x89PNG")
    assert read_tournaments(data / "t.sqlite")[0].games == 4  # (read only: still the same)


# ------------------------------------------------------------------------------------------------
# playing


def start(client, **body):
    reply = client.post("/api/play", json={"variant": "midnight_party", "players": 3, "seat": 1,
                                           "opponents": "random", "seed": 5, **body})
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_whole_game_is_played_and_written_as_a_record(client, data):
    reply = start(client)
    assert reply["agents"] == ["random", "human", "random"] and reply["board"]["num_players"] == 3
    events = [ev for step in reply["steps"] for ev in step["events"]]
    rng = np.random.default_rng(0)
    moves = 0
    while not reply["over"]:
        frame = reply["frame"]
        assert frame["player"] == 1 and frame["phase"] in ("place", "move")  # only the person's decisions stop
        move = str(rng.choice(frame["legal"]))
        reply = client.post(f"/api/play/{reply['id']}", json={"move": move}).json()
        mine = reply["steps"][0]["events"][0]
        assert mine["p"] == 1 and mine["a"] == move
        events += [ev for step in reply["steps"] for ev in step["events"]]
        moves += 1
    assert reply["saved"] == {"file": PLAYED_FILE, "line": 1}
    assert sorted(p.name for p in data.parent.iterdir()) == ["data", "secret.jsonl"]  # written inside only
    rec = json.loads((data / PLAYED_FILE).read_text().splitlines()[0])
    replay_record(rec)  # a valid record of the game just played
    assert rec["events"] == events and rec["agents"] == ["random", "human", "random"] and rec["seed"] == 5
    assert rec["final_points"] == reply["frame"]["points"]
    assert moves == sum(1 for ev in events if ev["e"] in ("place", "move") and ev["p"] == 1)
    again = start(client, seed=6)
    while not again["over"]:
        again = client.post(f"/api/play/{again['id']}", json={"move": again["frame"]["legal"][-1]}).json()
    assert again["saved"] == {"file": PLAYED_FILE, "line": 2}  # the next game on the next line
    listed = client.get("/api/records", params={"file": PLAYED_FILE}).json()["games"]
    assert [g["seed"] for g in listed] == ["5", "6"]


def test_a_person_may_play_hidden_castle_alone_against_hugo(client):
    reply = start(client, variant="hidden_castle", players=1, seat=0, opponents=[])
    while not reply["over"]:
        reply = client.post(f"/api/play/{reply['id']}", json={"move": reply["frame"]["legal"][0]}).json()
    assert reply["saved"]["line"] == 1 and reply["frame"]["winners"] == [0]


def test_an_illegal_move_is_refused_and_the_game_goes_on(client):
    reply = start(client)
    legal = reply["frame"]["legal"]
    refused = client.post(f"/api/play/{reply['id']}", json={"move": "g99>g3"})
    assert refused.status_code == 400 and "not legal here" in refused.json()["error"]
    assert legal[0] in refused.json()["error"]
    assert client.post(f"/api/play/{reply['id']}", json={"move": legal[0]}).status_code == 200


def test_a_finished_game_takes_no_more_moves(client):
    reply = start(client, variant="hidden_castle", players=1, seat=0, opponents=[])
    while not reply["over"]:
        reply = client.post(f"/api/play/{reply['id']}", json={"move": reply["frame"]["legal"][0]}).json()
    late = client.post(f"/api/play/{reply['id']}", json={"move": "pass"})
    assert late.status_code == 409 and "over" in late.json()["error"]


def test_a_read_only_data_folder_still_lets_a_game_finish(client, data, monkeypatch):
    def refuse(self, rec):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("midnight_env.web.sources.DataFolder.save_record", refuse)
    reply = start(client, variant="hidden_castle", players=1, seat=0, opponents=[])
    while not reply["over"]:
        reply = client.post(f"/api/play/{reply['id']}", json={"move": reply["frame"]["legal"][0]}).json()
    assert "could not be written" in reply["saved"]["error"]


# ------------------------------------------------------------------------------------------------
# bad input: a clear message and a 4xx, and the server goes on


def hostile_lines(classic: dict) -> dict[str, bytes]:
    """Record lines that must be refused, by what is wrong with them."""
    illegal = json.loads(json.dumps(classic))
    first_move = next(k for k, ev in enumerate(illegal["events"]) if ev["e"] == "move")
    illegal["events"][first_move]["a"] = "g0>r9"
    long = json.loads(json.dumps(classic))
    long["events"] = long["events"] * (MAX_EVENTS // len(long["events"]) + 1)
    script = json.loads(json.dumps(classic))
    script["options"]["<script>alert(1)</script>"] = 1
    return {
        "not JSON": b"{not json",
        "not UTF-8": b'{"format": "\xff"}',
        "nested too deeply": b"[" * 100_000 + b"]" * 100_000,
        "not an object": b"[1, 2, 3]",
        "another format": json.dumps({**classic, "format": "chess/1"}).encode(),
        "an illegal move": json.dumps(illegal).encode(),
        "too many events": json.dumps(long).encode(),
        "events not a list": json.dumps({**classic, "events": {"e": "roll"}}).encode(),
        "an unknown option": json.dumps(script).encode(),
    }


WHY = {"not JSON": "not valid JSON", "not UTF-8": "not UTF-8", "nested too deeply": "nested too deeply",
       "not an object": "must be a JSON object", "another format": "is not 'midnight-record/1'",
       "an illegal move": "is not legal here", "too many events": f"at most {MAX_EVENTS} events",
       "events not a list": "'events' a list", "an unknown option": "<script>alert(1)</script>"}


@pytest.mark.parametrize("what", list(WHY))
def test_a_malformed_or_hostile_record_is_refused_by_name(client, data, classic, what):
    (data / "bad.jsonl").write_bytes(json.dumps(classic).encode() + b"\n" + hostile_lines(classic)[what] + b"\n")
    reply = client.get("/api/game", params={"file": "bad.jsonl", "line": 2})
    assert reply.status_code == 422, reply.text
    message = reply.json()["error"]
    assert message.startswith("bad.jsonl: line 2") and WHY[what] in message  # the file, the line, what is wrong
    if what == "an illegal move":
        assert re.search(r"event \d+", message)
    assert client.get("/api/game", params={"file": "bad.jsonl", "line": 1}).status_code == 200
    up = client.post("/api/upload", content=hostile_lines(classic)[what],
                     headers={"content-type": "application/octet-stream"}).json()
    refused = client.get("/api/game", params={"upload": up["upload"], "line": 1})
    assert refused.status_code == 422 and WHY[what] in refused.json()["error"]
    still_serving(client)


@pytest.mark.parametrize("name", ["../secret.jsonl", "sub/../../secret.jsonl", "/etc/passwd", "..", "link.jsonl",
                                  "..\\secret.jsonl", "C:/secret.jsonl"])
def test_no_file_outside_the_data_folder_is_read(client, data, tmp_path, name):
    os.symlink(tmp_path / "secret.jsonl", data / "link.jsonl")
    for path, params in (("/api/records", {"file": name}), ("/api/game", {"file": name, "line": 1}),
                         ("/api/tournaments", {"db": name})):
        reply = client.get(path, params=params)
        assert reply.status_code in (400, 403), (path, name, reply.text)
        assert "outside the data folder" in reply.json()["error"] or "is not a" in reply.json()["error"]
    still_serving(client)


@pytest.mark.parametrize("request_, status, why", [
    (("/api/game", {"file": "games.jsonl", "line": 99}), 404, "has no record on line 99"),
    (("/api/game", {"file": "games.jsonl", "line": "x"}), 400, "is not a line number"),
    (("/api/game", {"file": "nothing.jsonl", "line": 1}), 404, "no records file 'nothing.jsonl'"),
    (("/api/game", {"file": "notes.txt", "line": 1}), 400, "not a records file"),
    (("/api/game", {"upload": "gone", "line": 1}), 404, "upload 'gone' is not here"),
    (("/api/game", {"db": "t.sqlite", "key": "nope", "game": 0}), 404, "holds no tournament 'nope'"),
    (("/api/game", {"db": "t.sqlite", "key": "KEY", "game": 99}), 404, "game 99 of tournament"),
    (("/api/game", {}), 400, "say which game"),
    (("/api/game", {"agents": "nobody", "players": 2, "seed": 1}), 400, "agent 'nobody' is not one the page plays"),
    (("/api/game", {"agents": "os:system:command=touch x", "players": 1, "seed": 1}), 400,
     "module:Attribute agents are for the command line"),
    (("/api/game", {"agents": "ppo:path=/etc/passwd", "players": 1, "seed": 1}), 400, "is not one the page plays"),
    (("/api/game", {"agents": "random", "variant": "chess", "players": 2, "seed": 1}), 400, "unknown variant"),
    (("/api/game", {"agents": "random", "players": 9, "seed": 1}), 400, "out of range"),
    (("/api/game", {"agents": "random,expert", "players": 3, "seed": 1}), 400, "2 agents for 3 seats"),
    (("/api/game", {"agents": "ppo-midnight_party-4p", "variant": "hidden_castle", "players": 4, "seed": 1}), 400,
     "cannot play hidden_castle"),
    (("/api/tournament", {"db": "t.sqlite", "key": "nope"}), 404, "holds no tournament"),
    (("/api/leaderboard", {"db": "t.sqlite", "key": "nope"}), 404, "holds no tournament"),
    (("/api/nothing", {}), 404, "no such API request"),
])
def test_an_unknown_game_or_agent_is_refused_by_name(client, request_, status, why):
    path, params = request_
    params = {k: (tournament_key(client) if v == "KEY" else v) for k, v in params.items()}
    reply = client.get(path, params=params)
    assert reply.status_code == status, reply.text
    assert why in reply.json()["error"]
    still_serving(client)


@pytest.mark.parametrize("body, why", [
    ({"opponents": "nobody"}, "agent 'nobody' is not one the page plays"),
    ({"opponents": "search:budget=100000000"}, "options and module:Attribute agents are for the command line"),
    ({"opponents": "ppo-midnight_party-4p"}, "cannot play midnight_party with 3 players"),
    ({"seat": 3}, "seat 3 is out of range"),
    ({"seat": "me"}, "seat 'me' is not a number"),
    ({"players": 0}, "out of range"),
    ({"variant": "chess"}, "unknown variant 'chess'"),
    ({"opponents": ["random", "random", "random"]}, "3 opponents for 2 other seats"),
    ({"seed": -1}, "seed"),
])
def test_a_game_against_unknown_or_unfit_agents_is_refused(client, body, why):
    reply = client.post("/api/play", json={"variant": "midnight_party", "players": 3, "seat": 0,
                                           "opponents": "random", **body})
    assert reply.status_code == 400, reply.text
    assert why in reply.json()["error"]
    still_serving(client)


def test_moves_for_an_unknown_game_or_of_the_wrong_kind_are_refused(client):
    reply = client.post("/api/play/nope", json={"move": "g1"})
    assert reply.status_code == 404 and "is not being played here" in reply.json()["error"]
    game = start(client)
    for body in ({"move": 3}, {}, {"move": ["g1"]}):
        refused = client.post(f"/api/play/{game['id']}", json=body)
        assert refused.status_code == 400 and "is not legal here" in refused.json()["error"]
    form = client.post("/api/play", content=b"variant=x", headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415  # (another site's page cannot post JSON here without asking first)
    bad = client.post("/api/play", content=b"{oops", headers={"content-type": "application/json"})
    assert bad.status_code == 400 and "not valid JSON" in bad.json()["error"]
    still_serving(client)


def test_an_oversized_or_empty_upload_is_refused(client, data):
    before = sorted(p.name for p in data.iterdir())
    big = client.post("/api/upload", content=b"x" * (MAX_UPLOAD_BYTES + 1),
                      headers={"content-type": "application/octet-stream"})
    assert big.status_code == 413 and f"at most {MAX_UPLOAD_BYTES // 2**20} MiB" in big.json()["error"]
    empty = client.post("/api/upload", content=b"", headers={"content-type": "application/octet-stream"})
    assert empty.status_code == 400 and "empty" in empty.json()["error"]
    form = client.post("/api/upload", content=b"x", headers={"content-type": "text/plain"})
    assert form.status_code == 415
    assert sorted(p.name for p in data.iterdir()) == before
    still_serving(client)


@pytest.mark.parametrize("content, why", [
    (b"this is not sqlite at all" * 100, "not a readable SQLite database"),
    ("another app", "not a midnight tournament database"),
    ("stored garbage", "cannot be read"),
])
def test_a_database_that_is_not_a_tournament_database_is_refused(client, data, tournament_db, content, why):
    path = data / "other.db"
    if content == "another app":
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.commit()
        conn.close()
    elif content == "stored garbage":  # a tournament database whose record blob is not a record
        path.write_bytes(tournament_db[0])
        conn = sqlite3.connect(path)
        conn.execute("UPDATE records SET record = ? WHERE game_index = 0", (zlib.compress(b"\xff\xfe"),))
        conn.commit()
        conn.close()
    else:
        path.write_bytes(content)
    if content == "stored garbage":
        key = tournament_db[1].key
        reply = client.get("/api/game", params={"db": "other.db", "key": key, "game": 0})
    else:
        reply = client.get("/api/tournaments", params={"db": "other.db"})
    assert reply.status_code == 422, reply.text
    assert why in reply.json()["error"]
    still_serving(client)


def test_pages_of_other_sites_cannot_reach_a_server_bound_to_this_machine(data):
    local = TestClient(create_app(data, hosts=LOOPBACK_HOSTS), base_url="http://127.0.0.1:8000")
    assert local.get("/api/files").status_code == 200
    assert local.get("/api/files", headers={"host": "evil.example:8000"}).status_code == 400


# ------------------------------------------------------------------------------------------------
# the commands: midnight serve, midnight render --html


def run_cli(capsys, *argv):
    from midnight_env.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_serve_help_says_what_it_serves_and_where(capsys):
    with pytest.raises(SystemExit):
        run_cli(capsys, "serve", "--help")
    text = capsys.readouterr().out
    for words in ("--data DIR", "--port", "--host", "127.0.0.1", "played.jsonl", "Watch", "Play", "Leaderboard",
                  "Ctrl-C"):
        assert words in text, words


@pytest.mark.parametrize("argv, why", [
    (["--data", "/nonexistent/folder"], "is not a folder"),
    (["--port", "70000"], "--port 70000 is out of range"),
    (["--host", "no-such-host.invalid"], "--host 'no-such-host.invalid' is not an address"),
])
def test_serve_refuses_bad_settings_in_one_line(capsys, argv, why):
    code, out, err = run_cli(capsys, "serve", "--port", "0", *argv)
    assert code == 2 and why in err and len(err.strip().splitlines()) == 1


def test_serve_names_a_port_in_use(capsys, data):
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    try:
        code, _, err = run_cli(capsys, "serve", "--port", str(taken.getsockname()[1]), "--data", str(data))
    finally:
        taken.close()
    assert code == 2 and "cannot listen on 127.0.0.1 port" in err and "--port" in err


def embedded_view(html: str) -> dict:
    match = re.search(r'<script id="midnight-game" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(match.group(1))


def test_render_html_writes_one_self_contained_page_of_a_record(capsys, data, tmp_path, classic):
    out = tmp_path / "game.html"
    code, text, _ = run_cli(capsys, "render", "--record", str(data / "games.jsonl"), "--line", "1",
                            "--html", str(out))
    assert code == 0 and str(out) in text
    html = out.read_text(encoding="utf-8")
    view = embedded_view(html)
    assert [ev["e"] for ev in view["events"]] == [ev["e"] for ev in classic["events"]]
    assert len(view["frames"]) == len(classic["events"]) + 1
    assert 'src="static/' not in html and 'href="static/' not in html  # script and style inside
    assert set(re.findall(r"https?://[^\s\"'`)<]+", html)) <= {"http://www.w3.org/2000/svg"}


def test_render_html_of_a_new_game_is_the_terminal_renders_game(capsys, tmp_path):
    out = tmp_path / "new.html"
    code, _, _ = run_cli(capsys, "render", "--variant", "hidden_castle", "--players", "2", "--agents",
                         "random,expert", "--seed", "9", "--html", str(out))
    assert code == 0
    view = embedded_view(out.read_text(encoding="utf-8"))
    code, text, _ = run_cli(capsys, "render", "--variant", "hidden_castle", "--players", "2", "--agents",
                            "random,expert", "--seed", "9", "--no-color")
    assert f"game over: points {view['game']['final_points']}" in text
    assert view["game"]["agents"] == ["random", "expert"] and view["game"]["seed"] == "9"


def test_render_html_refuses_a_bad_record_or_place(capsys, data, tmp_path):
    code, _, err = run_cli(capsys, "render", "--record", str(data / "games.jsonl"), "--line", "2",
                           "--html", str(tmp_path / "x.html"))
    assert code == 2 and "line 2" in err and "not valid JSON" in err
    code, _, err = run_cli(capsys, "render", "--record", str(data / "games.jsonl"), "--html", str(tmp_path))
    assert code == 2 and "is a folder" in err
    code, _, err = run_cli(capsys, "render", "--record", str(data / "games.jsonl"), "--html",
                           str(tmp_path / "no" / "x.html"))
    assert code == 2 and "does not exist" in err
    assert not (tmp_path / "x.html").exists()


# ------------------------------------------------------------------------------------------------
# databases are only read: no SQLite side file is created in the data folder


def test_serving_a_finished_tournament_database_creates_no_file_beside_it(capsys, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    db = data / "t.sqlite"
    code, _, err = run_cli(capsys, "tournament", "--games", "8", "--agents", "random,runner", "--players", "2",
                           "--db", str(db), "--no-progress")
    assert code == 0, err
    conn = sqlite3.connect(db)  # the last connection to close checkpoints and deletes the -wal and -shm
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert db.read_bytes()[18:20] == b"\x02\x02"  # still a WAL database: the case mode=ro alone gets wrong
    before = sorted(p.name for p in data.iterdir())
    assert not [n for n in before if n.endswith(("-wal", "-shm", "-journal"))]
    expected = {row.split(",")[0]: row.split(",") for row in (data / "t_leaderboard.csv").read_text().split()[1:]}
    client = TestClient(create_app(data))
    held = client.get("/api/tournaments", params={"db": "t.sqlite"}).json()["tournaments"]
    assert [(t["games"], t["agents"]) for t in held] == [(8, ["random", "runner"])]
    key = held[0]["key"]
    assert len(client.get("/api/tournament", params={"db": "t.sqlite", "key": key}).json()["games"]) == 8
    board = client.get("/api/leaderboard", params={"db": "t.sqlite", "key": key}).json()
    assert board["games"] == 8
    assert [s["agent"] for s in board["standings"]] == list(expected)  # the order the tournament wrote
    for s in board["standings"]:
        assert s["games"] == int(expected[s["agent"]][1])
        assert s["mean_points"] == pytest.approx(float(expected[s["agent"]][6]), abs=1e-3)
        assert s["win_rate"] == pytest.approx(float(expected[s["agent"]][9]), abs=1e-3)
    assert client.get("/api/leaderboard.png", params={"db": "t.sqlite", "key": key}).content.startswith(b"\x89PNG")
    assert client.get("/api/files").json()["files"]
    assert sorted(p.name for p in data.iterdir()) == before


def test_a_database_being_written_is_read_through_its_side_files_and_none_is_added(client, data, tournament_db):
    key = tournament_db[1].key
    writer = sqlite3.connect(data / "t.sqlite")  # a tournament at work: its -wal and -shm are there
    try:
        writer.execute("DELETE FROM games WHERE game_index = 3")
        writer.commit()  # in the -wal only: the database file still holds 4 games
        before = sorted(p.name for p in data.iterdir())
        assert "t.sqlite-wal" in before and "t.sqlite-shm" in before
        held = client.get("/api/tournaments", params={"db": "t.sqlite"}).json()["tournaments"]
        assert held[0]["games"] == 3
        assert client.get("/api/leaderboard", params={"db": "t.sqlite", "key": key}).json()["games"] == 3
        assert sorted(p.name for p in data.iterdir()) == before
    finally:
        writer.close()
    assert not [p.name for p in data.iterdir() if p.name.startswith("t.sqlite-")]  # the writer cleaned up
