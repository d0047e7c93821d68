"""The results of tournaments in one SQLite file, and reading them back as arrays.

One file (WAL) holds any number of tournaments, each keyed by the hash of its configuration
(:attr:`TournamentConfig.key`). A game's row is keyed by (configuration hash, game index) and
written with INSERT OR IGNORE, one transaction per finished batch: a run killed at any moment
loses at most the batch in flight, which the next run with ``resume=True`` plays again
(identically: games depend on their seeds only), and a game is never counted twice, whoever
adds it. A file that is not a tournament database, and (without ``resume``) one holding other
tournaments or an unfinished run of this one, is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
import zlib
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar

import numpy as np

from midnight_env.core.records import is_special_file, write_record_lines
from midnight_env.tournament.config import FORMAT, TournamentConfig, TournamentError

DEFAULT_DB = "midnight_tournament.sqlite"
_T = TypeVar("_T")


@dataclass
class Results:
    """Games of one tournament as arrays (a store's are in game index order)."""

    config: TournamentConfig
    index: np.ndarray  # (G,) game indices
    deals: np.ndarray  # (G,)
    lineups: np.ndarray  # (G, N) agent index per seat
    points: np.ndarray  # (G, N)
    ranks: np.ndarray  # (G, N)

    @property
    def num_games(self) -> int:
        return len(self.index)


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
        self.others: list[dict] = []  # the identities of the other tournaments the file held when opened
        self.is_new = True  # the file held no game of this configuration when opened

    @classmethod
    def open(cls, path: str | Path, config: TournamentConfig, games: int, resume: bool = False) -> ResultStore:
        """Open or create the database; refuse (TournamentError, nothing written) a file that is not
        a tournament database, and without ``resume`` one that holds other tournaments or an
        unfinished run of this one."""
        path = Path(path)
        check_database_path(path)
        check_writable(path, "database ")
        for companion in database_files(path)[1:]:  # SQLite's own: a read-only one blocks every write
            if companion.exists() and not os.access(companion, os.W_OK):
                raise TournamentError(f"database {str(path)!r}: its file {str(companion)!r} is read-only (left by a "
                                      f"run on a read-only database?): make it writable, or delete it when no "
                                      f"process uses the database; nothing was changed", "db")
        existed = path.exists() and path.stat().st_size > 0
        held = []
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
                        f"{config.describe()}. Use another database, or pass resume=True to add this tournament to it",
                        "resume")
                if mine and mine[0][2] < games:
                    raise TournamentError(
                        f"database {str(path)!r} already holds {mine[0][2]} of {games} games of this tournament; "
                        f"pass resume=True to play the rest (nothing was changed)", "resume")
        store = cls(path, config)
        store.others = [json.loads(c) for k, c, _ in held if k != config.key]
        store.is_new = not any(k == config.key for k, _, _ in held)
        try:
            with store.conn:
                store.conn.executescript(_SCHEMA)
                store.conn.execute("INSERT OR IGNORE INTO meta VALUES ('format', ?)", (FORMAT,))
                store.conn.execute("INSERT OR IGNORE INTO tournaments VALUES (?, ?, ?)",
                                   (config.key, json.dumps(config.identity(), sort_keys=True), _now()))
        except sqlite3.Error as err:
            failed = store._write_failed(err)
            store.close()
            raise failed from None
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
        try:
            with self.conn:  # one transaction: the whole batch or nothing
                before = self.conn.total_changes
                self.conn.executemany("INSERT OR IGNORE INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", game_rows)
                added = self.conn.total_changes - before
                self.conn.executemany("INSERT OR IGNORE INTO seats VALUES (?,?,?,?,?,?)", seat_rows)
                self.conn.executemany("INSERT OR IGNORE INTO records VALUES (?,?,?)", record_rows)
        except sqlite3.Error as err:  # the batch was rolled back: the batches before it stay
            raise self._write_failed(err) from None
        return added

    def _write_failed(self, err: sqlite3.Error) -> TournamentError:
        """A write SQLite refused (a full disk: ``database or disk is full``) as one line naming the
        database, saying that the games stored so far are kept and how to play the rest."""
        full = getattr(err, "sqlite_errorcode", None) == 13 or "full" in str(err)  # SQLITE_FULL (Python 3.11+)
        why = "the disk is full" if full else "it cannot be written"
        try:
            kept = f"the {len(self.done())} games of this tournament stored so far are kept"
        except sqlite3.Error:
            kept = "the games stored so far are kept"
        return TournamentError(f"database {str(self.path)!r}: {why} ({err}); {kept}: "
                               f"{'free some space, then ' if full else ''}run the same command again with "
                               "resume=True to play the rest", "resume")

    def results(self, games: int | None = None) -> Results:
        return _results(self.conn, self.config, games)

    def export_records(self, out: str | Path, games: int | None = None) -> int:
        """Write the stored records (game index order) to ``out`` as JSON Lines: a regular file
        atomically, a FIFO or a device in place (:func:`write_record_lines`)."""
        query = "SELECT record FROM records WHERE config_hash = ?"
        params: tuple = (self.key,)
        if games is not None:
            query += " AND game_index < ?"
            params += (games,)
        rows = self.conn.execute(query + " ORDER BY game_index", params)
        return write_record_lines(out, (zlib.decompress(blob).decode() for (blob,) in rows))

    def close(self) -> None:
        self.conn.close()


def _results(conn: sqlite3.Connection, config: TournamentConfig, games: int | None = None) -> Results:
    """The stored games of ``config`` (those below index ``games``), in game index order."""
    query = "SELECT game_index, deal, agents, points, ranks FROM games WHERE config_hash = ?"
    params: tuple = (config.key,)
    if games is not None:
        query += " AND game_index < ?"
        params += (games,)
    rows = conn.execute(query + " ORDER BY game_index", params).fetchall()
    n = config.num_players
    index = np.array([r[0] for r in rows], np.int64)
    deals = np.array([r[1] for r in rows], np.int64)
    agent_of = {name: k for k, name in enumerate(config.agents)}
    lineups = np.array([[agent_of[a] for a in json.loads(r[2])] for r in rows], np.int64).reshape(-1, n)
    points = np.array([json.loads(r[3]) for r in rows], np.int64).reshape(-1, n)
    ranks = np.array([json.loads(r[4]) for r in rows], np.int64).reshape(-1, n)
    return Results(config, index, deals, lineups, points, ranks)


# ------------------------------------------------------------------------------------------------
# reading a database without writing to it (a viewer: midnight serve)
#
# Without creating a file beside it either. ``mode=ro`` alone does not give that: a read-only
# connection to a database in WAL mode (ours are) opens its -wal and -shm files and creates them when
# they are absent, and cannot delete them when it closes (only a connection that may write
# checkpoints and deletes them). SQLite reads a read-only WAL database when those two files exist,
# when it can create them, or when the connection declares the file ``immutable``
# (https://sqlite.org/wal.html#readonly, https://sqlite.org/walformat.html). ``immutable=1`` takes no
# lock and looks at no side file, so it is right only while nothing changes the file; _reading
# uses it only where that can be checked:
#
# - no -wal and no -journal file beside the database: immutable=1, checked after the read. Every
#   connection to a WAL database keeps the -wal file while it is open, and the last one to close
#   first checkpoints every committed transaction into the database file, then deletes the -wal; a
#   writer that comes creates the -wal before writing anything, and only a later checkpoint changes
#   the database file (a rollback-journal writer likewise creates its -journal before changing the
#   file). So no -wal means that no connection has the database open and that the file holds every
#   committed transaction; the read stands when, after it, there is still no -wal nor -journal and
#   the file has the same inode, size and times (a writer would have to open, write, checkpoint and
#   close inside one tick of the file system's clock to escape that); otherwise it is done again.
# - a -wal and a -shm file there (a tournament is writing the database, or a run left them): mode=ro,
#   through those files (with SQLite's locks), which creates nothing. A -journal without a -wal: the
#   rollback-journal mode, where mode=ro creates nothing either (a -journal left beside a WAL database,
#   an odd leftover, would get the -wal and -shm SQLite creates).
# - a -wal without a -shm (a writer is opening the database: SQLite creates the -wal first) is waited
#   on, like a file that changed under the read; after _READ_TRIES tries, mode=ro reads it, and SQLite
#   may then create the missing -shm (a database written without pause, or a -shm deleted by hand).


@dataclass
class StoredTournament:
    """One tournament a database holds: its configuration and how many games and records."""

    config: TournamentConfig
    games: int
    records: int  # games stored with their record (tournaments run with records)


class StoredGame(NamedTuple):
    index: int
    seed: int
    agents: list[str]  # by seat
    points: list[int]
    ranks: list[int]
    truncated: bool
    has_record: bool


def read_tournaments(path: str | Path) -> list[StoredTournament]:
    """Every tournament of a database file, read only; TournamentError for a file that is not a
    tournament database."""
    path = Path(path)
    if not path.is_file() or path.stat().st_size == 0:
        raise TournamentError(f"{str(path)!r} is not a tournament database (no such file, or an empty one)")

    def work(conn: sqlite3.Connection) -> tuple[list[tuple[str, str, int]], dict]:
        held = _tournaments_held(conn, path)
        try:
            counts = dict(conn.execute("SELECT config_hash, COUNT(*) FROM records GROUP BY config_hash").fetchall())
        except sqlite3.DatabaseError:  # a database of a run that never stored a record may lack the table
            counts = {}
        return held, counts

    try:
        held, counts = _reading(path, work)
    except sqlite3.DatabaseError as err:
        raise TournamentError(f"{str(path)!r} is not a readable SQLite database ({err}); nothing was changed") from None
    return [StoredTournament(_config_of(text, path), games, int(counts.get(key, 0))) for key, text, games in held]


def read_results(path: str | Path, key: str) -> Results:
    """The games of tournament ``key`` of a database file (read only), for a leaderboard."""

    def work(conn: sqlite3.Connection) -> Results:
        config = _stored_config(conn, path, key)
        try:
            return _results(conn, config)
        except (ValueError, TypeError, KeyError, RecursionError) as err:
            raise TournamentError(f"{str(path)!r} stores games of tournament {key} that cannot be read "
                                  f"({type(err).__name__}: {err})") from None

    return _reading(path, work)


def read_games(path: str | Path, key: str, offset: int = 0, limit: int = 100) -> list[StoredGame]:
    """Games ``offset`` .. ``offset + limit - 1`` (in game index order) of tournament ``key``, read only."""

    def work(conn: sqlite3.Connection) -> list:
        _stored_config(conn, path, key)
        return conn.execute(
            "SELECT g.game_index, g.seed, g.agents, g.points, g.ranks, g.truncated, EXISTS (SELECT 1 FROM records r "
            "WHERE r.config_hash = g.config_hash AND r.game_index = g.game_index) FROM games g WHERE g.config_hash = ? "
            "ORDER BY g.game_index LIMIT ? OFFSET ?", (key, int(limit), int(offset))).fetchall()

    rows = _reading(path, work)
    try:
        return [StoredGame(int(r[0]), int(r[1]), [str(a) for a in json.loads(r[2])], [int(x) for x in json.loads(r[3])],
                           [int(x) for x in json.loads(r[4])], bool(r[5]), bool(r[6])) for r in rows]
    except (ValueError, TypeError, RecursionError) as err:
        raise TournamentError(f"{str(path)!r} stores games of tournament {key} that cannot be read "
                              f"({type(err).__name__}: {err})") from None


def read_record(path: str | Path, key: str, game_index: int) -> dict | list | str | int | float | None:
    """The stored record of game ``game_index`` of tournament ``key`` (read only), as its JSON
    value (a record to check: the file may have been written by anyone); TournamentError when the
    game or its record is not stored."""

    def work(conn: sqlite3.Connection) -> tuple:
        _stored_config(conn, path, key)
        row = conn.execute("SELECT record FROM records WHERE config_hash = ? AND game_index = ?",
                           (key, int(game_index))).fetchone()
        if row is None:
            played = conn.execute("SELECT 1 FROM games WHERE config_hash = ? AND game_index = ?",
                                  (key, int(game_index))).fetchone()
            why = "was played without records" if played else "is not stored"
            raise TournamentError(f"game {game_index} of tournament {key} in {str(path)!r} {why}", "game")
        return row

    row = _reading(path, work)
    try:
        return json.loads(zlib.decompress(row[0]).decode("utf-8"))
    except (zlib.error, UnicodeDecodeError, ValueError, RecursionError, TypeError) as err:
        raise TournamentError(f"the record of game {game_index} of tournament {key} in {str(path)!r} cannot be "
                              f"read ({type(err).__name__}: {err})") from None


_READ_TRIES = 5  # reads of a database that changed under them (or a -wal without its -shm) before mode=ro


def _beside(path: Path, suffix: str) -> bool:
    return os.path.lexists(f"{path}{suffix}")


def _file_state(path: Path) -> tuple | None:
    """What a read with immutable=1 relies on: the database file's identity, size and times, and no
    -wal nor -journal beside it; None when the file cannot be looked at."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
            _beside(path, "-wal"), _beside(path, "-journal"))


def _reading(path: str | Path, work: Callable[[sqlite3.Connection], _T]) -> _T:
    """``work(connection)`` on a read-only connection to a database file, creating no file beside
    it (see the comment above); TournamentError when SQLite cannot open the file."""
    path = Path(path).absolute()
    uri = path.as_uri()  # the path percent-encoded ('%', '#', '?' in a name)
    for attempt in range(_READ_TRIES):
        if attempt:
            time.sleep(0.02 * attempt)
        before = _file_state(path)
        if before is None:
            break
        if before[5]:  # a -wal: with its -shm, SQLite reads through them; without, a writer is opening it
            if _beside(path, "-shm"):
                break
            continue
        if before[6]:  # a -journal without a -wal: the rollback-journal mode, where mode=ro creates nothing
            break
        conn = _open(path, f"{uri}?immutable=1")
        try:
            result = work(conn)
        except Exception:
            if _file_state(path) == before:
                raise
            continue  # the file changed under the read: its error may be one of a torn read
        finally:
            conn.close()
        if _file_state(path) == before:
            return result
    with closing(_open(path, f"{uri}?mode=ro")) as conn:
        return work(conn)


def _open(path: Path, uri: str) -> sqlite3.Connection:
    try:
        return sqlite3.connect(uri, uri=True, timeout=30)
    except sqlite3.DatabaseError as err:
        raise TournamentError(f"{str(path)!r} is not a readable SQLite database ({err})") from None


def _config_of(text: str, path: str | Path) -> TournamentConfig:
    """The configuration a database stores as JSON; TournamentError for one that is not one."""
    try:
        identity = json.loads(text)
        return TournamentConfig(variant=str(identity["variant"]), num_players=int(identity["num_players"]),
                                agents=tuple(str(a) for a in identity["agents"]), seed=int(identity["seed"]),
                                options=dict(identity["options"]), engine_version=str(identity["engine_version"]))
    except (ValueError, TypeError, KeyError, RecursionError) as err:
        raise TournamentError(f"{str(path)!r} stores a tournament configuration that cannot be read "
                              f"({type(err).__name__}: {err})") from None


def _stored_config(conn: sqlite3.Connection, path: str | Path, key: str) -> TournamentConfig:
    try:
        row = conn.execute("SELECT config FROM tournaments WHERE config_hash = ?", (str(key),)).fetchone()
    except sqlite3.DatabaseError as err:
        raise TournamentError(f"{str(path)!r} is not a readable tournament database ({err})") from None
    if row is None:
        raise TournamentError(f"{str(path)!r} holds no tournament {key!r}", "key")
    return _config_of(row[0], path)


def database_files(path: str | Path) -> list[Path]:
    """The database file and the two SQLite keeps beside it in WAL mode."""
    path = Path(path)
    return [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name the same file, through links and other spellings too."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_database_path(path: str | Path) -> None:
    """TournamentError unless ``path`` can be a database: a regular file, or a new one (checked
    before anything is created: SQLite would put its journal beside a device)."""
    path = Path(path)
    if path.is_dir():
        raise TournamentError(f"database {str(path)!r} is a directory, not a database file", "db")
    if is_special_file(path):
        raise TournamentError(f"database {str(path)!r} is {_kind(path)}, not a regular file: allowed is a database "
                              "file, or a new one; nothing was changed", "db")


def _kind(path: Path) -> str:
    mode = path.stat().st_mode
    return ("a character device" if stat.S_ISCHR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "a special file")


def check_writable(path: str | Path, label: str, parameter: str = "db") -> None:
    """TournamentError unless ``path`` can be written: an existing file writable by this user, or a
    new one in an existing folder this user can write (checked before any game is played).
    ``label`` starts the message: ``"database "``, ``"records="``."""
    path = Path(path)
    name = f"{label}{str(path)!r}"
    folder = path.parent
    if path.exists():
        if not os.access(path, os.W_OK):
            raise TournamentError(f"{name} is read-only: allowed is a file this user can write; nothing was changed",
                                  parameter)
        if is_special_file(path):  # a FIFO or a device is written in place: nothing is put beside it
            return
    elif not folder.is_dir():
        raise TournamentError(f"{name} cannot be created: folder {str(folder)!r} does not exist", parameter)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise TournamentError(f"{name}: folder {str(folder)!r} is not writable (SQLite and atomic writes put "
                              "files beside it); nothing was changed", parameter)


def tournament_keys(path: str | Path) -> list[str]:
    """The configuration keys of the tournaments a database file holds (none for a new file)."""
    path = Path(path)
    return [key for key, _, _ in _inspect(path)] if path.exists() and path.stat().st_size > 0 else []


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
    """(config hash, config JSON, games stored) of every tournament in an existing file (read only,
    creating no file beside it: :func:`_reading`)."""
    try:
        return _reading(path, lambda conn: _tournaments_held(conn, path))
    except sqlite3.DatabaseError as err:
        raise TournamentError(f"{str(path)!r} is not a readable SQLite database ({err}); nothing was changed") from None


def _tournaments_held(conn: sqlite3.Connection, path: Path) -> list[tuple[str, str, int]]:
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
    return [(r[0], r[1], int(r[2])) for r in rows]


