"""The web app of ``midnight serve`` (Starlette): the page, and the JSON API it reads.

============================  ===========================================================================
``GET /``                     the page (``static/index.html``; its script and style under ``/static``)
``GET /api/info``             the data folder, the variants, every agent, the limits
``GET /api/agents``           the agents with whether each can play ``variant`` with ``players``
``GET /api/files``            the record files and databases of the data folder
``GET /api/records``          the games of record file ``file`` (or of upload ``upload``)
``POST /api/upload``          a record file (body, ``application/octet-stream``), kept in memory
``GET /api/game``             a game view: ``file`` + ``line``, ``upload`` + ``line``, ``db`` + ``key`` +
                              ``game``, or a new game of ``agents`` with ``variant``, ``players``, ``seed``
``GET /api/analysis``         every decision of such a game judged (``midnight analyze``; ``evaluator``:
                              optimal or an agent by name, with budget=N up to the server's limit;
                              default the strongest); at most ``max_analyses`` at once, else 503 busy
``GET /api/tournaments``      the tournaments of database ``db``
``GET /api/tournament``       the games of tournament ``key`` of ``db`` (``offset``, ``limit``)
``GET /api/leaderboard``      its standings; ``/api/leaderboard.png`` the ratings plot
``POST /api/play``            a new game against agents (JSON: variant, players, seat, opponents, seed)
``POST /api/play/{id}``       the person's move (JSON: move, in record notation)
============================  ===========================================================================

A request the app refuses gets a 4xx status and ``{"error": message}``, the message naming the
bad value and what is allowed (400 bad input: every field of a JSON body and a query string is
checked for its type and range, :mod:`midnight_env.web.checks`; 403 a file outside the data
folder; 404 nothing there; 409 a finished game; 413 too large; 422 a file that is not a valid
record or database); 503 when the analyses it runs at once are all taken. The app reads and
writes files only through :class:`~midnight_env.web.sources.DataFolder`.

What one request may cost is bounded: an analysis's evaluator searches at most ``max_budget``
positions a decision, the analyses running at once are at most ``max_analyses`` (another is
answered 503 at once, not queued), and an analysis whose client has gone stops at its next batch
of decisions (the page's "Analyse" moving on, or a script's timeout, frees its place).
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import logging
import threading
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from midnight_agents.catalog import SHIPPED_CHAMPIONS
from midnight_env.analysis.judge import AnalysisCancelled
from midnight_env.arena.agent import fit_error
from midnight_env.arena.registry import agent_infos, make_agent, plugin_errors
from midnight_env.core.config import VARIANTS
from midnight_env.core.engine import Engine
from midnight_env.web.checks import (
    MAX_ANALYSES,
    MAX_EVALUATOR_BUDGET,
    MAX_EVALUATOR_TURNS,
    known_fields,
    text,
    whole,
)
from midnight_env.web.errors import WebError
from midnight_env.web.export import STATIC
from midnight_env.web.play import HumanGame, HumanGames
from midnight_env.web.sources import (
    MAX_UPLOAD_BYTES,
    PLAYED_FILE,
    DataFolder,
    Uploads,
    check_line,
    record_at,
    summaries,
)
from midnight_env.web.views import MAX_EVENTS, agents_record, analysis_view, page_evaluator, record_view

LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]
# the page loads nothing from elsewhere, and no other site may frame it
PAGE_POLICY = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
               "script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
log = logging.getLogger("midnight_env.web")
DISCONNECT_POLL_S = 0.25  # how often a running analysis asks whether its client is still there
PLAY_FIELDS = ("variant", "players", "seat", "opponents", "seed")  # POST /api/play
MOVE_FIELDS = ("move",)  # POST /api/play/{id}


def _error(message: str, status: int) -> JSONResponse:
    headers = {"Retry-After": "5"} if status == 503 else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def api(handler):
    """An API endpoint: refusals as ``{"error": ...}`` with their 4xx status; anything else the
    server did not expect as a 500 naming it (and logged), the server serving on."""

    @functools.wraps(handler)
    async def endpoint(request: Request) -> Response:
        try:
            return await handler(request)
        except WebError as err:
            return _error(str(err), err.status)
        except PermissionError as err:
            return _error(f"the file cannot be read: {err.strerror or err}", 403)
        except FileNotFoundError as err:  # gone since it was listed
            return _error(f"the file is not there any more: {err.filename or err}", 404)
        except ValueError as err:  # the library's own refusals (unknown agent, bad option ...)
            return _error(str(err), 400)
        except Exception as err:
            log.exception("%s %s failed", request.method, request.url.path)
            return _error(f"internal error ({type(err).__name__}: {err}); the server goes on", 500)

    return endpoint


async def _body_json(request: Request) -> dict:
    """A JSON object body (``application/json``: another site's page cannot send one without asking)."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise WebError("send the request as application/json", 415)
    raw = await request.body()
    if len(raw) > 64 * 1024:
        raise WebError("request body too large: allowed are 64 KiB", 413)
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise WebError("request body is not valid JSON: allowed is a JSON object") from None
    if not isinstance(body, dict):
        raise WebError(f"request body is a JSON {type(body).__name__}: allowed is a JSON object")
    return body


def create_app(data: str | Path, hosts: list[str] | None = None, max_budget: int = MAX_EVALUATOR_BUDGET,
               max_analyses: int = MAX_ANALYSES) -> Starlette:
    """The app over the data folder ``data``; ``hosts``: the Host names it answers (None: any).
    A server bound to this machine only should answer its own names only, so that another site
    cannot reach it by pointing a name of its own at 127.0.0.1. ``max_budget``: the most positions
    a decision an analysis's evaluator may search; ``max_analyses``: the analyses run at once."""
    max_budget = whole("max_budget", max_budget, 1)
    max_analyses = whole("max_analyses", max_analyses, 1)
    folder = DataFolder(data)
    uploads = Uploads()
    games = HumanGames()
    fits_cache: dict[tuple[str, int], list[dict]] = {}

    def agents_for(variant: str, players: int) -> list[dict]:
        key = (variant, players)
        if key not in fits_cache:
            try:
                engine = Engine(variant, players)
            except (TypeError, ValueError) as err:
                raise WebError(str(err)) from None
            out = []
            for info in agent_infos():
                try:
                    why = fit_error(make_agent(info.name), engine)
                except (ValueError, OSError) as err:  # needs options (a model file ...), or a plugin's own failure
                    why = str(err)
                out.append({"name": info.name, "description": info.description, "source": info.source,
                            "fits": why is None, "why": why})
            fits_cache[key] = out
        return fits_cache[key]

    def champion(agents: list[dict]) -> str:
        """The agent the page offers first: the strongest shipped one that plays this game (the
        trained model where one fits, the strongest kind first, else the expert, else the first
        that fits)."""
        fitting = [a["name"] for a in agents if a["fits"]]
        trained = [name for name in SHIPPED_CHAMPIONS if name in fitting]
        if trained:
            return trained[0]
        return "expert" if "expert" in fitting else (fitting[0] if fitting else "random")

    async def index(request: Request) -> Response:
        page = (STATIC / "index.html").read_text(encoding="utf-8")
        return HTMLResponse(page, headers={"Content-Security-Policy": PAGE_POLICY, "X-Content-Type-Options": "nosniff",
                                           "Cache-Control": "no-store"})

    @api
    async def info(request: Request) -> Response:
        return JSONResponse({"data": str(folder.root), "played_file": PLAYED_FILE, "variants": list(VARIANTS),
                      "players": [1, 8], "max_upload_bytes": MAX_UPLOAD_BYTES, "max_events": MAX_EVENTS,
                      "limits": {"max_budget": max_budget, "max_turns": MAX_EVALUATOR_TURNS,
                                 "max_analyses": max_analyses, "analyses_running": running},
                      "agents": [{"name": i.name, "description": i.description, "source": i.source}
                                 for i in await run_in_threadpool(agent_infos)],
                      "plugin_errors": plugin_errors()})

    @api
    async def agents(request: Request) -> Response:
        q = request.query_params
        variant = text("variant", q.get("variant", VARIANTS[0]), ", ".join(VARIANTS))
        players = whole("players", q.get("players", "4"), 1, 8)
        listed = await run_in_threadpool(agents_for, variant, players)
        return JSONResponse({"variant": variant, "players": players, "agents": listed, "champion": champion(listed)})

    @api
    async def files(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(folder.files))

    @api
    async def records(request: Request) -> Response:
        q = request.query_params
        if "upload" in q:
            name, _ = uploads.get(q["upload"])
            return JSONResponse({"upload": q["upload"], "name": name, **summaries(uploads.lines(q["upload"]))})
        return JSONResponse({"file": q.get("file"), **await run_in_threadpool(folder.record_games, q.get("file"))})

    @api
    async def upload(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/octet-stream":
            raise WebError("send the file as application/octet-stream", 415)
        declared = request.headers.get("content-length")
        limit = f"uploads of at most {MAX_UPLOAD_BYTES // 2**20} MiB are taken"
        if declared and declared.isdigit() and int(declared) > MAX_UPLOAD_BYTES:
            raise WebError(f"the file is {int(declared) / 2**20:.1f} MiB: {limit}", 413)
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > MAX_UPLOAD_BYTES:
                raise WebError(f"the file is larger than {MAX_UPLOAD_BYTES // 2**20} MiB: {limit}", 413)
            chunks.append(chunk)
        if size == 0:
            raise WebError("the file is empty: allowed is a record file (JSON Lines, one game per line)")
        name = request.query_params.get("name", "upload")
        key = uploads.add(name, b"".join(chunks))
        listed = await run_in_threadpool(lambda: summaries(uploads.lines(key)))
        return JSONResponse({"upload": key, "name": uploads.get(key)[0], **listed})

    def record_of(q) -> tuple[Any, int | None, str | None]:
        """The record a request names, its line and where it comes from (for messages)."""
        sources = [k for k in ("file", "upload", "db", "agents") if k in q]
        if len(sources) != 1:
            raise WebError("say which game: file and line, upload and line, db, key and game, or agents, variant, "
                           "players and seed" + (f" (got {', '.join(sources)})" if sources else ""))
        if "file" in q:
            return folder.record(q["file"], q.get("line")), _line(q), q["file"]
        if "upload" in q:
            name, _ = uploads.get(q["upload"])
            return record_at(uploads.lines(q["upload"]), _line(q), name), _line(q), name
        if "db" in q:
            game = q.get("game")
            where = f"{q['db']}, tournament {q.get('key', '')}, game {game}"
            return folder.tournament_record(q["db"], q.get("key", ""), game), None, where
        return agents_record(q.get("variant", VARIANTS[0]), q.get("players", "4"), q["agents"],
                             q.get("seed", "0")), None, None

    def game_of(q) -> dict:
        return record_view(*record_of(q))

    def analysis_of(q, cancelled) -> dict:
        return analysis_view(*record_of(q), q.get("evaluator"), max_budget, cancelled)

    def _line(q) -> int:
        return check_line(q.get("line"))

    @api
    async def game(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(game_of, request.query_params))

    running = 0  # analyses running now (each until its thread has stopped)

    @api
    async def analysis(request: Request) -> Response:
        nonlocal running
        q = request.query_params
        await run_in_threadpool(page_evaluator, q.get("evaluator"), max_budget)  # over the limits: 400, not busy
        if running >= max_analyses:
            raise WebError(f"busy: {running} analyses running, try again in a moment (this server runs at most "
                           f"{max_analyses} at once: midnight serve --max-analyses)", 503)
        running += 1
        gone = threading.Event()
        try:
            work = asyncio.ensure_future(run_in_threadpool(analysis_of, q, gone.is_set))
            while not work.done():
                await asyncio.wait({work}, timeout=DISCONNECT_POLL_S)
                if not work.done() and await request.is_disconnected():
                    gone.set()  # the thread stops before its next batch of decisions
                    break
            try:
                result = await work
            except AnalysisCancelled:
                return _error("the analysis was cancelled: its client has gone", 499)
            return JSONResponse(result)
        finally:
            gone.set()
            running -= 1

    @api
    async def tournaments(request: Request) -> Response:
        q = request.query_params
        held = await run_in_threadpool(folder.tournaments, q.get("db"))
        return JSONResponse({"db": q.get("db"), "tournaments": [
            {"key": t.config.key, "variant": t.config.variant, "num_players": t.config.num_players,
             "agents": list(t.config.agents), "seed": t.config.seed, "options": t.config.options,
             "engine_version": t.config.engine_version, "games": t.games, "records": t.records} for t in held]})

    @api
    async def tournament(request: Request) -> Response:
        q = request.query_params
        offset = whole("offset", q.get("offset", "0"), 0)
        rows = await run_in_threadpool(folder.tournament_games, q.get("db"), q.get("key", ""), offset,
                                       q.get("limit", "100"))
        return JSONResponse({"db": q.get("db"), "key": q.get("key"), "offset": offset,
                      "games": [{**row._asdict(), "seed": str(row.seed)} for row in rows]})  # (63-bit seeds as text)

    @api
    async def leaderboard(request: Request) -> Response:
        q = request.query_params
        results, standings = await run_in_threadpool(folder.leaderboard, q.get("db"), q.get("key", ""))
        cfg = results.config

        def number(value: float) -> float | None:
            return None if value != value else round(value, 4)  # nan: no rating (solo games)

        return JSONResponse({"db": q.get("db"), "key": cfg.key, "variant": cfg.variant, "num_players": cfg.num_players,
                      "games": results.num_games, "seed": cfg.seed, "standings": [
                          {"agent": s.agent, "games": s.games, "rating": number(s.mu),
                           "rating_ci": number(1.96 * s.sigma),
                           "mean_points": number(s.mean_points), "points_ci": number(s.points_ci),
                           "win_rate": number(s.win_rate), "mean_rank": number(s.mean_rank)} for s in standings]})

    @api
    async def leaderboard_png(request: Request) -> Response:
        from midnight_env.tournament.report import plot_ratings

        q = request.query_params
        results, standings = await run_in_threadpool(folder.leaderboard, q.get("db"), q.get("key", ""))
        buffer = io.BytesIO()
        cfg = results.config
        title = f"{cfg.variant}, {cfg.num_players} players, {results.num_games} games"
        await run_in_threadpool(plot_ratings, standings, buffer, title)
        return Response(buffer.getvalue(), media_type="image/png")

    @api
    async def play_new(request: Request) -> Response:
        body = await _body_json(request)
        known_fields(body, PLAY_FIELDS, "POST /api/play")
        game = await run_in_threadpool(HumanGame, body.get("variant", VARIANTS[0]), body.get("players", 4),
                                       body.get("seat", 0), body.get("opponents", ""), body.get("seed"))
        games.add(game)
        return JSONResponse(await run_in_threadpool(game.start, folder))

    @api
    async def play_move(request: Request) -> Response:
        body = await _body_json(request)
        known_fields(body, MOVE_FIELDS, "POST /api/play/{id}")
        game = games.get(request.path_params["game"])
        return JSONResponse(await run_in_threadpool(game.choose, body.get("move"), folder))

    async def not_found(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        if request.url.path.startswith("/api/"):
            return _error(f"no such API request: {request.method} {request.url.path}", status)
        return HTMLResponse(f"<p>no page at {request.url.path}: the page is at <a href='/'>/</a></p>", status)

    routes = [
        Route("/", index),
        Route("/api/info", info),
        Route("/api/agents", agents),
        Route("/api/files", files),
        Route("/api/records", records),
        Route("/api/upload", upload, methods=["POST"]),
        Route("/api/game", game),
        Route("/api/analysis", analysis),
        Route("/api/tournaments", tournaments),
        Route("/api/tournament", tournament),
        Route("/api/leaderboard", leaderboard),
        Route("/api/leaderboard.png", leaderboard_png),
        Route("/api/play", play_new, methods=["POST"]),
        Route("/api/play/{game}", play_move, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    middleware = [Middleware(GZipMiddleware, minimum_size=2048)]
    if hosts is not None:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=hosts))
    app = Starlette(routes=routes, middleware=middleware, exception_handlers={404: not_found, 405: not_found})
    app.state.data_folder = folder.root
    return app


__all__ = ["create_app", "LOOPBACK_HOSTS", "PAGE_POLICY", "STATIC"]
