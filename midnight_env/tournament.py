"""Tournaments between agents: a balanced schedule, batched play, results in SQLite, a leaderboard.

**Schedule.** Games come in *deals*: a deal draws as many agents as there are seats and plays
N seat-rotated copies of one game, all with the same game seed. The engine's dice stream depends
on the game seed alone, so every copy sees the same sequence of die faces: each agent of the
deal meets that luck once from every seat (duplicate play, as in duplicate bridge). The luck of
the dice and of the seat then cancels between the agents of a deal instead of adding to the
noise of their comparison. The agent sets of the deals cycle through every combination of N of
the K agents (shuffled once per cycle), so after every complete cycle each agent has played
every seat equally often and met every other agent equally often (for very many combinations,
random sets: about equally often). Game ``g`` is copy ``g % N`` of deal ``g // N``; its line-up
and seed depend on the configuration and ``g`` only, so a tournament can be extended or split
across workers.

**Results.** One SQLite file (WAL) holds any number of tournaments, each keyed by the hash of
its configuration (variant, players, rule options, agents, seed, engine version). A game's row
is keyed by (configuration hash, game index) and written with INSERT OR IGNORE, one transaction
per finished batch: a run killed at any moment loses at most the batch in flight, which the
next ``resume`` plays again (identically: games depend on their seeds only), and a game is never
counted twice, whoever adds it.

**Leaderboard.** Plackett-Luce ratings (openskill) on each game's finishing order (ties share a
rank), averaged over shuffled game orders so that no game counts more than another; mean spooky points with 95 % confidence intervals clustered by deal (the copies of a deal
are correlated), win rate (a shared win counts) and mean rank.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import sqlite3
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from midnight_env.config import make_config
from midnight_env.engine import ENGINE_VERSION, Engine
from midnight_env.provenance import code_commit
from midnight_env.registry import AgentError, list_agents, make_agent, split_specs

FORMAT = "midnight-tournament/1"
DEFAULT_DB = "midnight_tournament.sqlite"
DEFAULT_VARIANT = "midnight_party"
DEFAULT_PLAYERS = 4
DEFAULT_GAMES = 1000  # at least; rounded up to complete schedule cycles (see default_games)
# agents left out of the default tournament: too slow for a run of a few minutes, or needing
# options (a trained model's file)
SLOW_AGENTS = ("ppo",)
MAX_COMBINATIONS = 50_000  # beyond this many agent sets per cycle, deals draw random sets


class TournamentError(ValueError):
    """Bad tournament input or a database that cannot be used; nothing was written."""


# ------------------------------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class TournamentConfig:
    variant: str
    num_players: int
    agents: tuple[str, ...]  # agent specs, as given (names in the leaderboard)
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict, hash=False)  # every rule option, resolved
    engine_version: str = ENGINE_VERSION

    def identity(self) -> dict:
        return {"format": FORMAT, "variant": self.variant, "num_players": self.num_players,
                "options": {k: self.options[k] for k in sorted(self.options)}, "agents": list(self.agents),
                "seed": self.seed, "engine_version": self.engine_version}

    @property
    def key(self) -> str:
        """Hash of the configuration: results of different configurations never mix."""
        text = json.dumps(self.identity(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in sorted(self.options.items()))
        return (f"{self.variant}, {self.num_players} players, agents {', '.join(self.agents)}, seed {self.seed}, "
                f"options {opts}, engine {self.engine_version}")

    def engine(self) -> Engine:
        return Engine(self.variant, self.num_players, **self.options)


def fit_error(agent, engine: Engine) -> str | None:
    """Why ``agent`` cannot play ``engine``'s game (a trained model made for another one), or None."""
    model = getattr(agent, "model", None)
    check = getattr(model, "check_engine", None)
    if check is None:
        return None
    try:
        check(engine)
    except ValueError as err:
        return str(err)
    return None


def default_agents(variant: str = DEFAULT_VARIANT, num_players: int = DEFAULT_PLAYERS,
                   options: dict[str, Any] | None = None) -> list[str]:
    """Every registered agent that needs no options and can play this game, except the slow ones."""
    engine = Engine(variant, num_players, **(options or {}))
    names = []
    for name, _ in list_agents():
        if name in SLOW_AGENTS:
            continue
        try:
            agent = make_agent(name)
        except (AgentError, ValueError, OSError):
            continue  # needs options (e.g. a model file)
        if fit_error(agent, engine) is None:
            names.append(name)
    return names


def make_tournament_config(variant: str = DEFAULT_VARIANT, num_players: int = DEFAULT_PLAYERS,
                           agents: Sequence[str] | str | None = None, seed: int = 0,
                           options: dict[str, Any] | None = None) -> TournamentConfig:
    """Validate a tournament: the game set-up (ConfigError) and the agents (AgentError naming
    an unknown one; TournamentError for too few or repeated agents)."""
    config = make_config(variant, num_players, **(options or {}))
    if agents is None:
        specs = default_agents(config.variant, config.num_players, config.options)
    elif isinstance(agents, str):
        specs = split_specs(agents)
    else:
        specs = [str(a).strip() for a in agents]
    repeated = sorted({a for a in specs if specs.count(a) > 1})
    if repeated:
        raise TournamentError(f"agent {repeated[0]!r} is listed twice: every agent takes part once "
                              f"(give a variant a different option, e.g. {repeated[0].split(':')[0]}:budget=50)")
    needed = max(2, config.num_players)
    if len(specs) < needed:
        raise TournamentError(f"a {config.num_players}-player tournament needs at least {needed} agents, got "
                              f"{len(specs)} ({', '.join(specs) or 'none'})")
    engine = Engine(config)
    for spec in specs:
        reason = fit_error(make_agent(spec), engine)  # AgentError: unknown name or bad option
        if reason is not None:
            raise TournamentError(f"agent {spec!r} cannot play {config.variant} with {config.num_players} "
                                  f"players: {reason}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise TournamentError(f"--seed {seed!r} is out of range: allowed are integers 0 or more")
    return TournamentConfig(variant=config.variant, num_players=config.num_players, agents=tuple(specs),
                            seed=int(seed), options=dict(config.options))


# ------------------------------------------------------------------------------------------------
# schedule


def default_games(config: TournamentConfig, minimum: int = DEFAULT_GAMES) -> int:
    """At least ``minimum`` games, rounded up to complete cycles of the schedule (every agent set
    once) when a cycle is short enough, else to complete deals."""
    n = config.num_players
    cycle = math.comb(len(config.agents), n) * n
    unit = cycle if cycle <= 2 * minimum else n
    return unit * math.ceil(minimum / unit)


def _hash_int(*parts: Any) -> int:
    digest = hashlib.blake2b("/".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 2  # 62 bits: a non-negative int64 game seed


class Schedule:
    """Line-up and seed of every game of a tournament (see the module docstring)."""

    def __init__(self, config: TournamentConfig):
        self.config = config
        self.num_players = config.num_players
        k = len(config.agents)
        self.num_agents = k
        count = math.comb(k, self.num_players)
        self._sets = list(combinations(range(k), self.num_players)) if count <= MAX_COMBINATIONS else None
        self._cycles: dict[int, np.ndarray] = {}

    def deal_seed(self, deal: int) -> int:
        return _hash_int(self.config.key, "deal", deal)

    def deal_agents(self, deal: int) -> np.ndarray:
        """Agents of a deal in seat order of its first copy."""
        rng = np.random.default_rng(_hash_int(self.config.key, "seats", deal))
        if self._sets is not None:
            cycle, pos = divmod(deal, len(self._sets))
            if cycle not in self._cycles:
                order = np.random.default_rng(_hash_int(self.config.key, "cycle", cycle)).permutation(len(self._sets))
                self._cycles = {cycle: order}  # one cycle at a time: deals are asked for in order
            members = np.array(self._sets[self._cycles[cycle][pos]])
        else:
            members = rng.choice(self.num_agents, self.num_players, replace=False)
        return rng.permutation(members)

    def games(self, indices: Iterable[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lineups (n, N) agent index per seat, seeds (n,), deals (n,)) of games ``indices``."""
        idx = np.asarray(list(indices), dtype=np.int64)
        n = self.num_players
        lineups = np.empty((len(idx), n), np.int64)
        seeds = np.empty(len(idx), np.int64)
        deals = idx // n
        cache: dict[int, tuple[np.ndarray, int]] = {}
        for j, (g, d) in enumerate(zip(idx, deals)):
            if d not in cache:
                cache[int(d)] = (self.deal_agents(int(d)), self.deal_seed(int(d)))
            members, seed = cache[int(d)]
            lineups[j] = np.roll(members, int(g % n))  # copy r: every agent moves r seats on
            seeds[j] = seed
        return lineups, seeds, deals


# ------------------------------------------------------------------------------------------------
# results database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tournaments (
    config_hash TEXT PRIMARY KEY, config TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    config_hash TEXT NOT NULL, game_index INTEGER NOT NULL, deal INTEGER NOT NULL, seed INTEGER NOT NULL,
    variant TEXT NOT NULL, options TEXT NOT NULL, agents TEXT NOT NULL, points TEXT NOT NULL,
    ranks TEXT NOT NULL, rolls INTEGER NOT NULL, decisions INTEGER NOT NULL, truncated INTEGER NOT NULL,
    engine_version TEXT NOT NULL, code_commit TEXT, finished_at TEXT NOT NULL,
    PRIMARY KEY (config_hash, game_index));
CREATE TABLE IF NOT EXISTS seats (
    config_hash TEXT NOT NULL, game_index INTEGER NOT NULL, seat INTEGER NOT NULL, agent TEXT NOT NULL,
    points INTEGER NOT NULL, rank INTEGER NOT NULL, PRIMARY KEY (config_hash, game_index, seat));
CREATE TABLE IF NOT EXISTS records (
    config_hash TEXT NOT NULL, game_index INTEGER NOT NULL, record BLOB NOT NULL,
    PRIMARY KEY (config_hash, game_index));
"""


class ResultStore:
    """The SQLite results of one tournament configuration (the file may hold others too)."""

    def __init__(self, path: str | Path, config: TournamentConfig):
        self.path = Path(path)
        self.config = config
        self.key = config.key
        self.conn = _connect(self.path)

    @classmethod
    def open(cls, path: str | Path, config: TournamentConfig, games: int, resume: bool = False) -> ResultStore:
        """Open or create the database; refuse (TournamentError, nothing written) a file that is not
        a tournament database, and without ``resume`` one that holds other tournaments or an
        unfinished run of this one."""
        path = Path(path)
        if path.is_dir():
            raise TournamentError(f"--db {str(path)!r} is a directory, not a database file")
        existed = path.exists() and path.stat().st_size > 0
        if existed:
            held = _inspect(path)
            others = [h for h in held if h[0] != config.key]
            mine = [h for h in held if h[0] == config.key]
            if not resume:
                if others and not mine:
                    what = "; ".join(f"{json.loads(c)['variant']} {json.loads(c)['num_players']} players "
                                     f"({n} games, agents {', '.join(json.loads(c)['agents'])}, "
                                     f"seed {json.loads(c)['seed']})" for _, c, n in others[:3])
                    raise TournamentError(
                        f"database {str(path)!r} holds another tournament configuration: {what}; this run is "
                        f"{config.describe()}. Use another --db, or pass --resume to add this tournament to it")
                if mine and mine[0][2] < games:
                    raise TournamentError(
                        f"database {str(path)!r} already holds {mine[0][2]} of {games} games of this tournament; "
                        f"pass --resume to play the rest (nothing was changed)")
        store = cls(path, config)
        with store.conn:
            store.conn.executescript(_SCHEMA)
            store.conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
            store.conn.execute("INSERT OR IGNORE INTO tournaments VALUES (?, ?, ?)",
                               (config.key, json.dumps(config.identity(), sort_keys=True), _now()))
        return store

    def done(self) -> set[int]:
        rows = self.conn.execute("SELECT game_index FROM games WHERE config_hash = ?", (self.key,))
        return {r[0] for r in rows}

    def add(self, indices: np.ndarray, deals: np.ndarray, seeds: np.ndarray, lineups: np.ndarray,
            points: np.ndarray, ranks: np.ndarray, rolls: np.ndarray, decisions: np.ndarray,
            truncated: np.ndarray, commit: str | None, records: list[dict] | None = None) -> int:
        """Add finished games in one transaction (already stored games are left as they are)."""
        names = self.config.agents
        options = json.dumps(self.config.options, sort_keys=True)
        now = _now()
        game_rows, seat_rows, record_rows = [], [], []
        for j, g in enumerate(indices):
            lineup = [names[k] for k in lineups[j]]
            game_rows.append((self.key, int(g), int(deals[j]), int(seeds[j]), self.config.variant, options,
                              json.dumps(lineup), json.dumps([int(x) for x in points[j]]),
                              json.dumps([int(x) for x in ranks[j]]), int(rolls[j]), int(decisions[j]),
                              int(bool(truncated[j])), self.config.engine_version, commit, now))
            seat_rows.extend((self.key, int(g), s, lineup[s], int(points[j, s]), int(ranks[j, s]))
                             for s in range(len(lineup)))
            if records is not None:
                record_rows.append((self.key, int(g), zlib.compress(json.dumps(records[j]).encode())))
        with self.conn:  # one transaction: the whole batch or nothing
            before = self.conn.total_changes
            self.conn.executemany("INSERT OR IGNORE INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", game_rows)
            added = self.conn.total_changes - before
            self.conn.executemany("INSERT OR IGNORE INTO seats VALUES (?,?,?,?,?,?)", seat_rows)
            self.conn.executemany("INSERT OR IGNORE INTO records VALUES (?,?,?)", record_rows)
        return added

    def results(self, games: int | None = None) -> Results:
        query = "SELECT game_index, deal, agents, points, ranks FROM games WHERE config_hash = ?"
        params: tuple = (self.key,)
        if games is not None:
            query += " AND game_index < ?"
            params += (games,)
        rows = self.conn.execute(query + " ORDER BY game_index", params).fetchall()
        n = self.config.num_players
        index = np.array([r[0] for r in rows], np.int64)
        deals = np.array([r[1] for r in rows], np.int64)
        agent_of = {name: k for k, name in enumerate(self.config.agents)}
        lineups = np.array([[agent_of[a] for a in json.loads(r[2])] for r in rows], np.int64).reshape(-1, n)
        points = np.array([json.loads(r[3]) for r in rows], np.int64).reshape(-1, n)
        ranks = np.array([json.loads(r[4]) for r in rows], np.int64).reshape(-1, n)
        return Results(self.config, index, deals, lineups, points, ranks)

    def export_records(self, out: str | Path, games: int | None = None) -> int:
        """Write the stored records (game index order) to ``out`` as JSON Lines, atomically."""
        query = "SELECT record FROM records WHERE config_hash = ?"
        params: tuple = (self.key,)
        if games is not None:
            query += " AND game_index < ?"
            params += (games,)
        out = Path(out)
        tmp = out.with_name(out.name + ".tmp")
        n = 0
        with open(tmp, "w", encoding="utf-8") as f:
            for (blob,) in self.conn.execute(query + " ORDER BY game_index", params):
                f.write(zlib.decompress(blob).decode() + "\n")
                n += 1
        os.replace(tmp, out)
        return n

    def close(self) -> None:
        self.conn.close()


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _connect(path: Path) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(path, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # WAL: a killed process loses no committed batch
    except sqlite3.DatabaseError as err:
        raise TournamentError(f"{str(path)!r} is not a usable SQLite database ({err}); nothing was changed") from None
    return conn


def _inspect(path: Path) -> list[tuple[str, str, int]]:
    """(config hash, config JSON, games stored) of every tournament in an existing file."""
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not tables:
                return []  # an empty SQLite file: ours to initialise
            if not {"meta", "tournaments", "games"} <= tables:
                raise TournamentError(f"{str(path)!r} is an SQLite database but not a midnight tournament database "
                                      f"(tables: {', '.join(sorted(tables))}); nothing was changed")
            fmt = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if fmt is None or fmt[0] != FORMAT:
                raise TournamentError(f"{str(path)!r} has format {fmt[0] if fmt else None!r}, not {FORMAT!r}; "
                                      f"nothing was changed")
            rows = conn.execute("SELECT t.config_hash, t.config, (SELECT COUNT(*) FROM games g WHERE "
                                "g.config_hash = t.config_hash) FROM tournaments t").fetchall()
            conn.execute("PRAGMA quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.DatabaseError as err:
        raise TournamentError(f"{str(path)!r} is not a readable SQLite database ({err}); nothing was changed") from None
    return [(r[0], r[1], int(r[2])) for r in rows]


# ------------------------------------------------------------------------------------------------
# leaderboard


@dataclass
class Results:
    config: TournamentConfig
    index: np.ndarray  # (G,) game indices
    deals: np.ndarray  # (G,)
    lineups: np.ndarray  # (G, N) agent index per seat
    points: np.ndarray  # (G, N)
    ranks: np.ndarray  # (G, N)

    @property
    def num_games(self) -> int:
        return len(self.index)


@dataclass
class Standing:
    agent: str
    games: int
    mu: float  # Plackett-Luce rating
    sigma: float
    mean_points: float
    points_ci: float  # half-width of the 95 % interval
    win_rate: float
    mean_rank: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma


def _clustered_mean(values: np.ndarray, clusters: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % half-width with a cluster-robust standard error (clusters: deals)."""
    n = len(values)
    if n == 0:
        return float("nan"), float("nan")
    mean = float(values.mean())
    ids, inv = np.unique(clusters, return_inverse=True)
    if len(ids) < 2:
        return mean, float("nan")
    resid = np.bincount(inv, weights=values - mean)
    se = math.sqrt(len(ids) / (len(ids) - 1) * float((resid ** 2).sum())) / n
    return mean, 1.96 * se


RATING_ORDERS = 8  # shuffled game orders the ratings are averaged over


def ratings(results: Results, orders: int = RATING_ORDERS, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Plackett-Luce (openskill) rating mu and sigma per agent, independent of the game order.

    openskill updates one game at a time, so a single pass weighs the early games more than the
    late ones (its sigma shrinks as it goes). The passes here run over ``orders`` shuffled game
    orders, each from the same prior, and are averaged: mu is the mean of the passes, sigma
    combines each pass's sigma with the spread of mu between passes.
    """
    from openskill.models import PlackettLuce

    names = results.config.agents
    model = PlackettLuce(tau=0.0)  # the agents do not change during a tournament
    rng = np.random.default_rng(seed)
    mus = np.zeros((orders, len(names)))
    sigmas = np.zeros((orders, len(names)))
    for o in range(orders):
        current = [model.rating(name=name) for name in names]
        for g in rng.permutation(results.num_games):
            lineup = results.lineups[g]
            new = model.rate([[current[k]] for k in lineup], ranks=[int(r) for r in results.ranks[g]])
            for k, team in zip(lineup, new):
                current[k] = team[0]
        mus[o] = [r.mu for r in current]
        sigmas[o] = [r.sigma for r in current]
    spread = mus.var(axis=0, ddof=1) if orders > 1 else 0.0
    return mus.mean(axis=0), np.sqrt((sigmas ** 2).mean(axis=0) + spread)


def leaderboard(results: Results) -> list[Standing]:
    """Standings, best rating (mu - 3 sigma) first."""
    names = results.config.agents
    mu, sigma = ratings(results)
    standings = []
    seats_deal = np.repeat(results.deals, results.config.num_players)
    for k, name in enumerate(names):
        mask = (results.lineups == k).reshape(-1)
        pts = results.points.reshape(-1)[mask].astype(np.float64)
        rks = results.ranks.reshape(-1)[mask]
        mean, half = _clustered_mean(pts, seats_deal[mask])
        standings.append(Standing(agent=name, games=int(mask.sum()), mu=float(mu[k]),
                                  sigma=float(sigma[k]), mean_points=mean, points_ci=half,
                                  win_rate=float((rks == 1).mean()) if len(rks) else float("nan"),
                                  mean_rank=float(rks.mean()) if len(rks) else float("nan")))
    standings.sort(key=lambda s: -s.ordinal)
    return standings


_HEADER = ("rank", "agent", "games", "rating", "± 95%", "mean points", "± 95%", "win rate", "mean rank")


def _rows(standings: list[Standing]) -> list[tuple[str, ...]]:
    return [(str(i + 1), s.agent, str(s.games), f"{s.mu:.2f}", f"{1.96 * s.sigma:.2f}", f"{s.mean_points:.2f}",
             f"{s.points_ci:.2f}", f"{s.win_rate:.3f}", f"{s.mean_rank:.3f}") for i, s in enumerate(standings)]


def format_table(standings: list[Standing]) -> str:
    """Plain-text table (aligned columns)."""
    rows = [_HEADER] + _rows(standings)
    widths = [max(len(r[c]) for r in rows) for c in range(len(_HEADER))]
    lines = []
    for j, r in enumerate(rows):
        lines.append("  ".join(x.ljust(w) if c == 1 else x.rjust(w) for c, (x, w) in enumerate(zip(r, widths))))
        if j == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def print_table(standings: list[Standing], title: str = "") -> None:
    """The standings on stdout: a rich table on a terminal, aligned plain text otherwise (pipes and
    files get every agent name in full)."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # rich is optional
        Console = None
    console = Console() if Console is not None else None
    if console is None or not console.is_terminal:
        if title:
            print(title)
        print(format_table(standings))
        return
    table = Table(title=title or None)
    longest = max((len(s.agent) for s in standings), default=5)
    for c, head in enumerate(_HEADER):
        table.add_column(head, justify="left" if c == 1 else "right", no_wrap=True,
                         min_width=longest if c == 1 else None)
    for row in _rows(standings):
        table.add_row(*row)
    console.print(table)


def markdown_table(standings: list[Standing]) -> str:
    lines = ["| " + " | ".join(_HEADER) + " |", "|" + "|".join("---:" if c != 1 else ":---" for c in range(len(_HEADER))) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(standings)]
    return "\n".join(lines)


def write_leaderboard(standings: list[Standing], results: Results, out_dir: str | Path, stem: str,
                      command: str | None = None) -> dict[str, Path]:
    """Markdown, CSV and PNG (ratings with 95 % intervals) of the standings; returns the paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cfg = results.config
    paths = {"markdown": out_dir / f"{stem}_leaderboard.md", "csv": out_dir / f"{stem}_leaderboard.csv",
             "png": out_dir / f"{stem}_ratings.png"}
    head = [f"# Leaderboard: {cfg.variant}, {cfg.num_players} players", "",
            f"- games: {results.num_games} (deals of {cfg.num_players} seat-rotated copies with identical dice)",
            f"- agents: {', '.join(cfg.agents)}",
            f"- rule options: {', '.join(f'{k}={v}' for k, v in sorted(cfg.options.items()))}",
            f"- seed: {cfg.seed}; engine {cfg.engine_version}; configuration {cfg.key}"]
    if command:
        head.append(f"- command: `{command}`")
    head += ["", "Rating: openskill Plackett-Luce on finishing orders (mean ± 1.96 sigma). Points: mean spooky "
             "points with a 95 % interval clustered by deal. Win rate counts shared wins.", ""]
    paths["markdown"].write_text("\n".join(head) + markdown_table(standings) + "\n", encoding="utf-8")
    with open(paths["csv"], "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["agent", "games", "rating_mu", "rating_sigma", "rating_low", "rating_high", "mean_points",
                    "points_low", "points_high", "win_rate", "mean_rank"])
        for s in standings:
            w.writerow([s.agent, s.games, f"{s.mu:.4f}", f"{s.sigma:.4f}", f"{s.mu - 1.96 * s.sigma:.4f}",
                        f"{s.mu + 1.96 * s.sigma:.4f}", f"{s.mean_points:.4f}", f"{s.mean_points - s.points_ci:.4f}",
                        f"{s.mean_points + s.points_ci:.4f}", f"{s.win_rate:.4f}", f"{s.mean_rank:.4f}"])
    plot_ratings(standings, paths["png"], f"{cfg.variant}, {cfg.num_players} players, {results.num_games} games")
    return paths


def plot_ratings(standings: list[Standing], path: str | Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = standings[::-1]  # best at the top
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(order) + 1.2))
    y = np.arange(len(order))
    ax.errorbar([s.mu for s in order], y, xerr=[1.96 * s.sigma for s in order], fmt="o", capsize=4)
    ax.set_yticks(y, [s.agent for s in order])
    ax.set_xlabel("Plackett-Luce rating (mean ± 1.96 sigma)")
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------------
# running


@dataclass
class TournamentRun:
    config: TournamentConfig
    games: int
    played: int  # games played by this run
    elapsed: float
    results: Results
    standings: list[Standing]
    records_written: int | None = None  # records in the --records file (None: not asked for)


def run_tournament(config: TournamentConfig, games: int, db: str | Path = DEFAULT_DB, resume: bool = False,
                   batch_size: int = 256, records: str | Path | None = None, progress: bool = True) -> TournamentRun:
    """Play the games of ``config`` missing from ``db`` (0..games-1), batch by batch, and rate."""
    from tqdm import tqdm

    from midnight_env.play import play_batch

    if not isinstance(games, (int, np.integer)) or games < 1:
        raise TournamentError(f"--games {games!r} is out of range: allowed are 1 or more")
    if batch_size < 1:
        raise TournamentError(f"--batch-size {batch_size} is out of range: allowed are 1 or more")
    if records is not None and Path(records).is_dir():
        raise TournamentError(f"--records {str(records)!r} is a directory, not a file")
    store = ResultStore.open(db, config, games, resume)
    try:
        todo = np.array(sorted(set(range(games)) - store.done()), np.int64)
        schedule = Schedule(config)
        engine = config.engine()
        agents = [make_agent(spec) for spec in config.agents]
        commit = code_commit()
        start = time.perf_counter()
        with tqdm(total=games, initial=games - len(todo), unit="game", disable=not progress,
                  desc=f"{config.variant} {config.num_players}p", smoothing=0.1) as bar:
            for first in range(0, len(todo), batch_size):
                chunk = todo[first:first + batch_size]
                lineups, seeds, deals = schedule.games(chunk)
                res = play_batch(engine, agents, lineups, seeds, record=records is not None,
                                 agent_names=list(config.agents))
                store.add(chunk, deals, seeds, lineups, res.points, res.ranks, res.rolls, res.decisions,
                          res.truncated, commit, res.records)
                bar.update(len(chunk))
        elapsed = time.perf_counter() - start
        written = store.export_records(records, games) if records is not None else None
        results = store.results(games)
    finally:
        store.close()
    return TournamentRun(config, games, len(todo), elapsed, results, leaderboard(results), written)
