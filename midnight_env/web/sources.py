"""Where the page's games come from: the data folder's record files and tournament databases, and
uploaded record files (kept in memory).

The data folder is the only place the app reads or writes files. A file is named by its path
relative to the folder, written with ``/``; :meth:`DataFolder.path` refuses anything else (an
absolute path, ``..``, a link that leads out, a name of another kind of file) before any file is
opened, so a request can never reach a file outside the folder. Databases are read without creating
a file beside them (:func:`midnight_env.tournament.store._reading`: a read-only connection to a WAL
database would create its ``-wal`` and ``-shm`` files), and one whose SQLite side files (``-wal``,
``-shm``, ``-journal``) are links is refused. The one file
written, PLAYED_FILE, is refused when it is a link leading out of the folder, a dangling one too (at
start-up and at every write), and opened with ``O_NOFOLLOW``: a link made in its place between the
check and the write is refused too.
"""

from __future__ import annotations

import errno
import io
import itertools
import os
import secrets
import stat
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from midnight_env.core.records import FORMAT, RecordError, parse_lines, read_lines, write_records
from midnight_env.tournament.config import TournamentError
from midnight_env.tournament.store import (
    StoredGame,
    StoredTournament,
    read_games,
    read_record,
    read_results,
    read_tournaments,
)
from midnight_env.web.checks import DIGITS, whole
from midnight_env.web.errors import WebError

RECORD_SUFFIXES = (".jsonl", ".json")
DATABASE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
KINDS = {"records": RECORD_SUFFIXES, "database": DATABASE_SUFFIXES}
MAX_FILE_BYTES = 64 * 2**20  # a record file read whole to list its games
MAX_UPLOAD_BYTES = 16 * 2**20
MAX_UPLOADS = 16  # uploads kept in memory; the oldest is dropped
MAX_GAMES_LISTED = 10_000  # games of one file or tournament listed
MAX_FILES_LISTED = 500
MAX_DEPTH = 4  # folder levels below the data folder that are listed
PLAYED_FILE = "played.jsonl"  # where the games played on the page are written
NOT_REGULAR = (f"{PLAYED_FILE} in the data folder is not a regular file (a folder, a named pipe ...): played games "
               "are written to a file (move it away)")
SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")  # files SQLite opens beside a database, its name + these


def _text(value: Any, limit: int = 60) -> str:
    """A free-form value of a file (an agent's name, a seed) as bounded text for the page."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _ints(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(type(x) is int for x in value):
        return value
    return None


def game_summary(number: int, rec: Any) -> dict:
    """One line of a record file as the page lists it: the set-up and the result, or why it is not
    a record. Nothing is replayed here (a game is checked when it is opened)."""
    if isinstance(rec, RecordError):
        return {"line": number, "error": str(rec)}
    if not isinstance(rec, dict):
        return {"line": number, "error": f"line {number}: a record must be a JSON object, got {type(rec).__name__}"}
    if rec.get("format") != FORMAT:
        return {"line": number, "error": f"line {number}: format {_text(rec.get('format'))!r} is not {FORMAT!r}"}
    agents = rec.get("agents")
    return {"line": number, "variant": _text(rec.get("variant"), 40),
            "num_players": rec.get("num_players") if type(rec.get("num_players")) is int else None,
            "agents": [_text(a) for a in agents] if isinstance(agents, list) else None,
            "seed": None if rec.get("seed") is None else _text(str(rec.get("seed")), 30),  # text: 63-bit seeds
            "final_points": _ints(rec.get("final_points")), "winners": _ints(rec.get("winners")),
            "truncated": rec.get("truncated") is True,
            "events": len(rec["events"]) if isinstance(rec.get("events"), list) else None}


def summaries(lines: Iterable[tuple[int, Any]]) -> dict:
    """The games of a record file's lines (:func:`game_summary` each), the first MAX_GAMES_LISTED."""
    games = [game_summary(number, rec) for number, rec in itertools.islice(lines, MAX_GAMES_LISTED + 1)]
    return {"games": games[:MAX_GAMES_LISTED], "truncated": len(games) > MAX_GAMES_LISTED}


def record_at(lines: Iterable[tuple[int, Any]], line: int, name: str) -> Any:
    """The record on line ``line``; WebError when the line holds none (404) or is not JSON (422)."""
    last = 0
    for number, rec in lines:
        last = number
        if number == line:
            if isinstance(rec, RecordError):
                raise WebError(f"{name}: {rec}", 422)
            return rec
        if number > line:
            break
    raise WebError(f"{name} has no record on line {line}: its records are on lines 1..{last}"
                   if last else f"{name} holds no record", 404)


def check_line(value: Any) -> int:
    """A line number from a request: an integer 1 or more (a JSON integer, or ASCII digits)."""
    if not (type(value) is int or (isinstance(value, str) and DIGITS.fullmatch(value.strip()))):
        raise WebError(f"line {_text(value, 30)!r} is not a line number: allowed are integers 1 or more")
    return whole("line", value, 1, None, "integers 1 or more")


class DataFolder:
    """The folder of ``--data``: its record files and databases, read; the games played, written."""

    def __init__(self, root: str | Path):
        root = Path(root)
        if not root.is_dir():
            raise WebError(f"--data {str(root)!r} is not a folder: allowed is an existing folder (it holds the "
                           f"record files and tournament databases to show, and receives {PLAYED_FILE})")
        self.root = root.resolve()
        self._write = threading.Lock()
        self._leaderboards: OrderedDict = OrderedDict()
        self.played_path()  # a played file that leads outside: refused before anything is served

    def _inside(self, path: Path) -> bool:
        """Whether ``path`` resolves inside the folder, every link followed (a dangling link to
        where it would lead; a loop of links: not inside)."""
        try:
            path.resolve().relative_to(self.root)
        except (ValueError, OSError, RuntimeError):  # RuntimeError: a loop of links (Python < 3.13)
            return False
        return True

    def played_path(self) -> Path:
        """Where a played game is written: PLAYED_FILE of the folder, or the file inside the folder a
        link of that name leads to; WebError (403) naming a link that leads outside the folder
        (dangling or not: it would be created there), or a PLAYED_FILE that is not a file."""
        path = self.root / PLAYED_FILE
        if path.is_symlink():
            try:
                target = os.readlink(path)
            except OSError as err:
                target = f"? ({err.strerror})"
            if not self._inside(path):
                raise WebError(f"{PLAYED_FILE} in the data folder is a symbolic link to {target!r}, outside --data "
                               f"{str(self.root)!r}: played games are written inside it only (remove the link, or "
                               "let it lead to a file inside the folder)", 403)
            path = path.resolve()
        if path.exists() and not path.is_file():
            raise WebError(NOT_REGULAR, 403)
        return path

    def path(self, name: Any, kind: str) -> Path:
        """The file ``name`` (relative to the folder, with ``/``) of ``kind`` ("records" or
        "database"); WebError unless it is an existing file of that kind inside the folder."""
        if not isinstance(name, str) or not name.strip():
            raise WebError(f"no {kind} file named: give its path inside the data folder")
        if "\x00" in name or len(name) > 1000:
            raise WebError(f"file name {_text(name)!r} is not allowed: allowed are paths of up to 1000 characters")
        rel = PurePosixPath(name)
        if rel.is_absolute() or ".." in rel.parts or "\\" in name or (rel.parts and ":" in rel.parts[0]):
            raise WebError(f"file {_text(name)!r} is outside the data folder: allowed are paths inside it, "
                           "relative to it (no '..', no absolute path)", 403)
        suffixes = KINDS[kind]
        if rel.suffix.lower() not in suffixes:
            raise WebError(f"file {_text(name)!r} is not a {kind} file: allowed are names ending in "
                           f"{', '.join(suffixes)}")
        full = self.root / rel
        if not self._inside(full):
            raise WebError(f"file {_text(name)!r} leads outside the data folder (a link): allowed are files inside "
                           "it", 403)
        if not full.is_file():
            raise WebError(f"no {kind} file {_text(name)!r} in the data folder", 404)
        full = full.resolve()
        if kind == "database":  # SQLite opens (and may create) these beside the file, following links
            for side in SQLITE_SIDE_FILES:
                other = full.with_name(full.name + side)
                if other.is_symlink():
                    raise WebError(f"database {_text(name)!r}: its SQLite side file {other.name} is a symbolic "
                                   f"link: allowed are databases whose {', '.join(SQLITE_SIDE_FILES)} files are "
                                   "plain files inside the data folder (or absent)", 403)
        return full

    def files(self) -> dict:
        """The record files and databases of the folder (MAX_DEPTH levels down, hidden folders
        and links leading out left out), by name."""
        found = []
        truncated = False
        for folder, dirs, names in os.walk(self.root):
            depth = len(Path(folder).relative_to(self.root).parts)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__" and depth < MAX_DEPTH)
            for name in sorted(names):
                kind = next((k for k, suffixes in KINDS.items() if Path(name).suffix.lower() in suffixes), None)
                path = Path(folder) / name
                if kind is None or name.startswith(".") or not self._inside(path) or not path.is_file():
                    continue
                if len(found) == MAX_FILES_LISTED:
                    truncated = True
                    break
                stat = path.stat()
                found.append({"name": path.relative_to(self.root).as_posix(), "kind": kind, "bytes": stat.st_size,
                              "modified": time.strftime("%Y-%m-%d %H:%M", time.localtime(stat.st_mtime))})
            if truncated:
                break
        return {"folder": str(self.root), "files": found, "truncated": truncated}

    # -- record files --------------------------------------------------------------------------
    def _record_lines(self, name: str) -> Iterator[tuple[int, Any]]:
        path = self.path(name, "records")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise WebError(f"{name} is {size / 2**20:.1f} MiB: files of at most {MAX_FILE_BYTES // 2**20} MiB are "
                           "shown (split it, or replay it with midnight replay)", 413)
        return read_lines(path)

    def record_games(self, name: str) -> dict:
        return summaries(self._record_lines(name))

    def record(self, name: str, line: Any) -> Any:
        return record_at(self._record_lines(name), check_line(line), name)

    def save_record(self, rec: dict) -> dict:
        """Append a record to PLAYED_FILE (:meth:`played_path`); returns its file and line. WebError
        (403) for a played file that leads outside the folder or is not a regular file (nothing is
        written), OSError when it cannot be written."""
        with self._write:
            path = self.played_path()
            flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
            try:
                fd = os.open(path, flags, 0o644)
            except OSError as err:
                if err.errno == errno.ELOOP:  # a link made in its place since the check
                    raise WebError(f"{PLAYED_FILE} in the data folder became a symbolic link: nothing was "
                                   "written", 403) from None
                raise
            with open(fd, "r+b") as out:
                if not stat.S_ISREG(os.fstat(fd).st_mode):  # a named pipe, a device: never read nor written
                    raise WebError(NOT_REGULAR, 403)
                data = out.read()
                text = b"\n" if data and not data.endswith(b"\n") else b""  # edited by hand: a line of its own
                lines = io.StringIO()
                write_records([rec], lines, PLAYED_FILE)
                try:
                    out.write(text + lines.getvalue().encode("utf-8"))
                    out.flush()
                except OSError as err:
                    raise OSError(err.errno, f"cannot write records to {PLAYED_FILE}: {err.strerror or err}") from None
        return {"file": PLAYED_FILE, "line": (data + text).count(b"\n") + 1}

    # -- tournament databases ---------------------------------------------------------------------
    def tournaments(self, name: str) -> list[StoredTournament]:
        path = self.path(name, "database")
        with _as_web_error(name):
            return read_tournaments(path)

    def tournament_games(self, name: str, key: str, offset: Any = 0, limit: Any = 100) -> list[StoredGame]:
        """Games ``offset`` .. ``offset + limit - 1`` of tournament ``key`` of database ``name``;
        WebError naming an offset or limit out of range (0 or more, 1..MAX_GAMES_LISTED)."""
        offset = whole("offset", offset, 0, None, "integers 0 or more")
        limit = whole("limit", limit, 1, MAX_GAMES_LISTED)
        path = self.path(name, "database")
        with _as_web_error(name):
            return read_games(path, key, offset, limit)

    def tournament_record(self, name: str, key: str, game: Any) -> Any:
        path = self.path(name, "database")
        if not (type(game) is int or (isinstance(game, str) and DIGITS.fullmatch(game.strip()))):
            raise WebError(f"game {_text(game, 30)!r} is not a game index: allowed are integers 0 or more")
        index = whole("game", game, 0, None, "integers 0 or more")
        with _as_web_error(name):
            return read_record(path, key, index)

    def leaderboard(self, name: str, key: str):
        """The standings of tournament ``key`` (kept while the file is unchanged: rating is slow)."""
        from midnight_env.tournament.ratings import leaderboard

        path = self.path(name, "database")
        stat = path.stat()
        cache_key = (str(path), stat.st_mtime_ns, stat.st_size, key)
        if cache_key not in self._leaderboards:
            with _as_web_error(name):
                results = read_results(path, key)
            if results.num_games == 0:
                raise WebError(f"tournament {key} of {name} has no games yet", 404)
            self._leaderboards[cache_key] = (results, leaderboard(results))
            while len(self._leaderboards) > 8:
                self._leaderboards.popitem(last=False)
        return self._leaderboards[cache_key]


@contextmanager
def _as_web_error(name: str):
    """A TournamentError of reading a database as the page's error: 404 for a tournament or game
    that is not stored, 422 for a file that is not a readable tournament database."""
    try:
        yield
    except TournamentError as err:
        raise WebError(f"{name}: {err}", 404 if err.parameter in ("key", "game") else 422) from None


class Uploads:
    """Uploaded record files, in memory only (nothing uploaded is written to disk), the newest
    MAX_UPLOADS of them."""

    def __init__(self):
        self._files: OrderedDict[str, tuple[str, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, name: str, data: bytes) -> str:
        key = secrets.token_urlsafe(9)
        with self._lock:
            self._files[key] = (_text(name or "upload", 80), data)
            while len(self._files) > MAX_UPLOADS:
                self._files.popitem(last=False)
        return key

    def get(self, key: Any) -> tuple[str, bytes]:
        with self._lock:
            found = self._files.get(key) if isinstance(key, str) else None
        if found is None:
            raise WebError(f"upload {_text(key, 30)!r} is not here (uploads are kept in memory, the newest "
                           f"{MAX_UPLOADS}, until the server stops): upload the file again", 404)
        return found

    def lines(self, key: Any) -> Iterator[tuple[int, Any]]:
        _, data = self.get(key)
        return parse_lines(data.split(b"\n"))


__all__ = ["DataFolder", "Uploads", "WebError", "PLAYED_FILE", "MAX_UPLOAD_BYTES", "MAX_FILE_BYTES",
           "RECORD_SUFFIXES", "DATABASE_SUFFIXES", "game_summary", "summaries", "record_at", "check_line"]
