/* midnight: the page. Three tabs over the JSON API of midnight_env/web/app.py:
 *   Watch: pick a game (a record file, an upload, a tournament's stored game, or a new game between
 *     agents) and step through its frames; frame k is the position event k starts from.
 *   Play: a game against agents kept by the server; the agents' events come back with the
 *     position after each, shown one by one; the person's moves are clicked on the board or typed.
 *   Leaderboard: a tournament database's standings and ratings plot.
 * The board's SVG comes from the server (render/svg.py); this script only marks places on it.
 * Text from files is only ever set as text (textContent), never parsed as HTML.
 * In the HTML file of one game (midnight render --html) the game is inside the page
 * (#midnight-game) and only the viewer is shown: no server, no network. */
(function () {
  "use strict";

  const SVG_NS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);

  // ---------------------------------------------------------------------------------------------
  // small helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    for (const child of children) {
      if (child !== null && child !== undefined) node.append(child);
    }
    return node;
  }

  function svgEl(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }

  function showMessage(text, kind) {
    $("message-text").textContent = text;
    $("message").className = kind === "info" ? "info" : "";
    $("message").hidden = false;
  }

  function clearMessage() {
    $("message").hidden = true;
  }

  async function api(path, options) {
    let response;
    try {
      response = await fetch(path, options);
    } catch (err) {
      throw new Error("the server does not answer (is midnight serve still running?)");
    }
    const type = response.headers.get("content-type") || "";
    const body = type.includes("application/json") ? await response.json() : null;
    if (!response.ok) {
      throw new Error(body && body.error ? body.error : `the server answered ${response.status}`);
    }
    return body;
  }

  function query(params) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v !== null && v !== undefined && v !== "") q.set(k, String(v));
    }
    return q.toString();
  }

  // "g14>r5" in words the page shows: g14 → r5
  const notation = (a) => String(a).replace(">", " \u2192 ");

  function seatName(p, agents) {
    const agent = agents && agents[p] ? ` (${agents[p]})` : "";
    return `seat ${p}${agent}`;
  }

  function describe(ev, agents) {
    const who = seatName(ev.p, agents);
    switch (ev.e) {
      case "place": return `${who} places a guest on ${ev.a}`;
      case "roll": return ev.face === "hugo" ? `${who} rolled Hugo` : `${who} rolled ${ev.face}`;
      case "move": return ev.a === "pass" ? `${who} passes` : `${who} moves ${notation(ev.a)}`;
      case "round_end": return `round ${ev.round} ends: points ${(ev.points || []).join(", ")}`;
      default: return String(ev.e);
    }
  }

  const isDecision = (ev) => ev && (ev.e === "place" || ev.e === "move");

  // scroll a list (an event log) so that one of its items shows: the list only, never the page
  // (scrollIntoView would move the page too, and the board with it out of the window)
  function showInList(list, item) {
    const box = list.getBoundingClientRect();
    const line = item.getBoundingClientRect();
    if (line.top < box.top) list.scrollTop -= box.top - line.top;
    else if (line.bottom > box.bottom) list.scrollTop += line.bottom - box.bottom;
  }

  function swatch(colour) {
    const s = el("span", { class: "swatch" });
    s.style.background = colour;
    return s;
  }

  function fillSelect(select, values, selected) {
    select.replaceChildren(...values.map(([value, label]) => el("option", { value, text: label })));
    if (selected !== undefined) select.value = String(selected);
  }

  // ---------------------------------------------------------------------------------------------
  // the board: the server's SVG, and marks over it

  class Board {
    constructor(svg) {
      this.svg = svg;
      this.board = null;
    }

    setBoard(board) {
      this.board = board;
      const [x, y, w, h] = board.view;
      this.svg.setAttribute("viewBox", `${x} ${y} ${w} ${h}`);
      this.svg.replaceChildren();
      const head = (name) => {
        const marker = svgEl("marker", { id: `${this.svg.id}-${name}`, viewBox: "0 0 10 10", refX: 8, refY: 5,
          markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse" });
        marker.append(svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: `head-${name}` }));
        return marker;
      };
      const defs = svgEl("defs");
      defs.append(head("legal"), head("chosen"), head("better"));
      this.layers = { board: svgEl("g"), frame: svgEl("g"), marks: svgEl("g"), picks: svgEl("g") };
      this.layers.board.innerHTML = board.svg;
      this.svg.append(defs, this.layers.board, this.layers.frame, this.layers.marks, this.layers.picks);
    }

    show(frame) {
      this.frame = frame;
      this.layers.frame.innerHTML = frame.svg;
      this.layers.marks.replaceChildren();
      this.layers.picks.replaceChildren();
    }

    box(place) {
      if (place === "cellar") return this.frame && this.frame.cellar;
      return this.board.places[place];
    }

    centre(place) {
      const b = this.box(place);
      return b ? [b[0] + b[2] / 2, b[1] + b[3] / 2] : null;
    }

    outline(place, cls, pad) {
      const b = this.box(place);
      if (!b) return null;
      const p = pad || 0;
      const r = svgEl("rect", { x: b[0] - p, y: b[1] - p, width: b[2] + 2 * p, height: b[3] + 2 * p, class: cls,
        rx: 0.06 });
      this.layers.marks.append(r);
      return r;
    }

    arrow(from, to, kind) {
      const a = this.centre(from), b = this.centre(to);
      if (!a || !b) return;
      // a gentle curve, so that moves between neighbours and across the ring both read
      const mx = (a[0] + b[0]) / 2, my = (a[1] + b[1]) / 2;
      const dx = b[0] - a[0], dy = b[1] - a[1];
      const bend = 0.18;
      const c = [mx - dy * bend, my + dx * bend];
      this.layers.marks.append(svgEl("path", {
        d: `M${a[0]},${a[1]} Q${c[0]},${c[1]} ${b[0]},${b[1]}`, class: `arrow-${kind}`,
        "marker-end": `url(#${this.svg.id}-${kind})` }));
    }

    // the legal choices of a decision, and the one made (watching)
    markChoices(legal, chosen) {
      for (const note of legal || []) {
        if (note === chosen) continue;
        this.markOne(note, "legal");
      }
      if (chosen) this.markOne(chosen, "chosen");
    }

    markOne(note, kind) {
      if (note === "pass") return;
      const [from, to] = note.split(">");
      if (to === undefined) this.outline(from, `mark-${kind}`, 0.04);
      else {
        if (kind === "chosen") this.outline(from, "mark-chosen", 0.04);
        this.arrow(from, to, kind);
      }
    }

    // clickable places (playing): each calls onPick(place)
    pick(place, cls, onPick) {
      const b = this.box(place);
      if (!b) return;
      const r = svgEl("rect", { x: b[0], y: b[1], width: b[2], height: b[3], class: `pick ${cls}`, rx: 0.06,
        "data-place": place, tabindex: -1 });
      r.addEventListener("click", (e) => { e.stopPropagation(); onPick(place); });
      this.layers.picks.append(r);
    }

    clearPicks() {
      this.layers.picks.replaceChildren();
      this.layers.marks.replaceChildren();
    }
  }

  function pointsTable(table, board, agents, frame, seat) {
    const rows = frame.points.map((points, p) => {
      const winner = frame.winners && frame.winners.includes(p);
      const row = el("tr", { class: !frame.winners && frame.player === p ? "turn" : null },
        el("td", {}, swatch(board.colours[p])),
        el("td", { text: p === seat ? `seat ${p} (you)` : seatName(p, agents) }),
        el("td", { class: "number", text: String(points) }),
        el("td", { class: winner ? "winner" : null, text: winner ? "\u2605 winner" : "" }));
      return row;
    });
    table.replaceChildren(el("tr", {}, el("th"), el("th", { text: "seat" }), el("th", { text: "points" }), el("th")),
      ...rows);
  }

  // ---------------------------------------------------------------------------------------------
  // Watch

  const watch = {
    board: null, view: null, k: 0, source: null, timer: null, decisions: [], analysis: null,
  };

  function sourceParams(source) {
    return Object.fromEntries(Object.entries(source).filter(([, v]) => v !== null && v !== undefined));
  }

  async function openGame(source, k) {
    clearMessage();
    stopPlaying();
    let view;
    if (source.embedded) view = source.embedded;
    else {
      try {
        view = await api(`api/game?${query(sourceParams(source))}`);
      } catch (err) {
        showMessage(err.message);
        return false;
      }
    }
    watch.view = view;
    watch.source = source;
    resetAnalysis();
    watch.decisions = view.events.map((ev, i) => (isDecision(ev) ? i : -1)).filter((i) => i >= 0);
    watch.board.setBoard(view.board);
    $("welcome").hidden = true;
    $("viewer").hidden = false;
    $("details").hidden = false;
    const g = view.game;
    $("game-title").textContent = `${view.board.title}, ${g.num_players} player${g.num_players > 1 ? "s" : ""}`;
    const where = source.file ? `${source.file} line ${source.line}` : source.db
      ? `${source.db}, tournament ${source.key}, game ${source.game}` : source.upload ? `upload, line ${source.line}`
      : source.agents ? "a new game between agents" : "";
    const seed = g.seed === null || g.seed === undefined ? "" : `seed ${g.seed}`;
    $("game-meta").textContent = [where, seed, `${view.events.length} events`,
      g.truncated ? "stopped at max_turns" : ""].filter(Boolean).join(" \u00b7 ");
    const slider = $("slider");
    slider.max = String(view.events.length);
    $("event-input").max = String(view.events.length);
    const log = $("event-log");
    log.replaceChildren(...view.events.map((ev, i) => el("li", {
      class: isDecision(ev) ? "decision" : ev.e === "round_end" ? "round" : null, "data-k": i,
      text: describe(ev, g.agents), onclick: () => showStep(i) })),
    el("li", { "data-k": view.events.length, text: "game over", onclick: () => showStep(view.events.length) }));
    showStep(Math.max(0, Math.min(Number.isFinite(k) ? k : 0, view.events.length)));
    return true;
  }

  function showStep(k) {
    const view = watch.view;
    if (!view) return;
    k = Math.max(0, Math.min(k, view.events.length));
    watch.k = k;
    const frame = view.frames[k];
    const ev = view.events[k];
    const agents = view.game.agents;
    watch.board.show(frame);
    if (isDecision(ev)) watch.board.markChoices(frame.legal, ev.a);
    showJudged(k);
    $("slider").value = String(k);
    $("event-input").value = String(k);
    $("position").textContent = k < view.events.length ? `event ${k} of ${view.events.length}` : "the end";
    const caption = $("caption");
    caption.replaceChildren();
    if (k > 0) caption.append(el("span", { class: "last", text: `last: ${describe(view.events[k - 1], agents)}` }));
    if (!ev) {
      const g = view.game;
      const who = g.winners.length === 1 ? `${seatName(g.winners[0], agents)} wins`
        : `seats ${g.winners.join(", ")} share the win`;
      caption.append(`game over: ${who}; points ${g.final_points.join(", ")}`);
    } else if (isDecision(ev)) {
      const what = ev.e === "place" ? "places a guest" : `moves with roll ${frame.roll}`;
      const many = frame.legal.length;
      caption.append(`${seatName(ev.p, agents)} ${what}: `, el("b", { text: notation(ev.a) }),
        ` (${many} legal choice${many === 1 ? "" : "s"})`);
    } else {
      caption.append(`next: ${describe(ev, agents)}`);
    }
    const legalBox = $("legal-box");
    legalBox.hidden = !isDecision(ev);
    if (isDecision(ev)) {
      $("legal-list").replaceChildren(...frame.legal.map((note) => el("li", {
        class: note === ev.a ? "chosen" : null, text: note, title: note === ev.a ? "the choice made" : "legal" })));
    }
    pointsTable($("points"), view.board, agents, frame);
    for (const li of $("event-log").querySelectorAll("li.current")) li.classList.remove("current");
    const current = $("event-log").querySelector(`li[data-k="${k}"]`);
    if (current) {
      current.classList.add("current");
      showInList($("event-log"), current);
    }
    const link = watchLink(k);
    $("permalink").href = link;
    if (!watch.source.embedded || location.hash.startsWith("#event=") || location.hash === "") {
      history.replaceState(null, "", link);
    }
  }

  // the analysis (api/analysis): every decision judged, the loss of the one shown and the better move
  const MARK_SYMBOLS = { inaccuracy: "?!", mistake: "?", blunder: "??" };
  const signed = (v) => (v >= 0 ? "+" : "") + v.toFixed(2);
  // a loss with its error (the evaluator's measured error of a loss in that stage; none where not measured)
  const lossText = (d) => d.loss.toFixed(2) + (d.loss_error === null ? "" : ` \u00b1 ${d.loss_error.toFixed(2)}`);

  function resetAnalysis() {
    watch.analysis = null;
    $("analyse").disabled = false;
    $("analysis-status").textContent = "";
    $("analysis-move").hidden = true;
    $("analysis-seats").hidden = true;
  }

  async function analyse() {
    const source = watch.source;
    if (!source || source.embedded) return;
    $("analyse").disabled = true;
    $("analysis-status").textContent = "analysing\u2026";
    let data;
    try {
      data = await api(`api/analysis?${query(sourceParams(source))}`);
    } catch (err) {
      if (watch.source === source) {
        $("analyse").disabled = false;
        $("analysis-status").textContent = "";
        showMessage(err.message);
      }
      return;
    }
    if (watch.source !== source) return;  // another game was opened meanwhile
    watch.analysis = { data, byEvent: new Map(data.decisions.map((d) => [d.event, d])) };
    const status = $("analysis-status");
    status.textContent = `by ${data.evaluator.spec}: ${data.decisions.length} decisions judged in ${data.seconds} s`;
    const accuracy = data.evaluator.accuracy;
    status.title = `${data.evaluator.about}. A value is ${data.evaluator.values}; a loss is the best value minus the chosen one's, \u00b1 its error. Accuracy: ${accuracy.about}. Marks: ${accuracy.rule}.`;
    if (!accuracy.measured) status.append(" \u2014 accuracy not measured: nothing marked");
    const seats = $("analysis-seats");
    seats.replaceChildren(el("tr", {}, el("th"), el("th", { text: "seat" }), el("th", { text: "points lost" }),
      el("th", { text: "?!" , title: "inaccuracies" }), el("th", { text: "?", title: "mistakes" }),
      el("th", { text: "??", title: "blunders" })),
    ...data.seats.map((s) => el("tr", {}, el("td", {}, swatch(watch.view.board.colours[s.seat])),
      el("td", { text: seatName(s.seat, watch.view.game.agents) }), el("td", { class: "number", text: s.loss.toFixed(2) }),
      el("td", { class: "number", text: String(s.inaccuracies) }), el("td", { class: "number", text: String(s.mistakes) }),
      el("td", { class: "number", text: String(s.blunders) }))));
    seats.hidden = false;
    for (const d of data.decisions) {
      const li = $("event-log").querySelector(`li[data-k="${d.event}"]`);
      if (li && d.mark) li.append(el("span", { class: `mark ${d.mark}`, text: MARK_SYMBOLS[d.mark], title: `${d.mark}: loses ${lossText(d)} points` }));
    }
    showStep(watch.k);
  }

  function showJudged(k) {
    const box = $("analysis-move");
    const d = watch.analysis && watch.analysis.byEvent.get(k);
    if (!d) {
      box.hidden = true;
      return;
    }
    box.className = `analysis-move ${d.mark || ""}`;
    if (d.forced) box.replaceChildren("Forced: the only legal choice.");
    else if (d.loss === 0) box.replaceChildren(`The best choice (value ${signed(d.best_value)} points).`);
    else {
      const mark = d.mark ? ` \u2014 ${MARK_SYMBOLS[d.mark]} ${d.mark}` : "";
      const unclear = d.mark || d.loss < watch.analysis.data.thresholds.inaccuracy ? ""
        : d.loss_error === null ? " Not marked: the evaluator's error is not measured here."
        : ` Not marked: within ${watch.analysis.data.marking.clear} \u00d7 its error.`;
      box.replaceChildren(el("b", { text: `Loses ${lossText(d)} points${mark}.` }), unclear, " Better: ",
        el("span", { class: "better", text: notation(d.best) }),
        ` (value ${signed(d.best_value)}, the choice made ${signed(d.chosen_value)}), drawn in green.`);
      watch.board.markOne(d.best, "better");
    }
    if (d.book) {
      const b = d.book, one = (x) => `${notation(x.square)} ${signed(x.value)} \u00b1 ${x.half_width.toFixed(2)}`;
      box.append(el("br"), el("span", { class: "book", title: b.about,
        text: `Placement book: the choice made ${one(b.chosen)}, the best ${one(b.best)} (95 %).` }));
    }
    box.hidden = false;
  }

  function watchLink(k) {
    if (watch.source.embedded) return `#event=${k}`;
    return `#watch?${query({ ...sourceParams(watch.source), event: k })}`;
  }

  function step(delta) {
    stopPlaying();
    showStep(watch.k + delta);
  }

  function jumpDecision(direction) {
    stopPlaying();
    const list = watch.decisions;
    const target = direction > 0 ? list.find((i) => i > watch.k) : [...list].reverse().find((i) => i < watch.k);
    showStep(target === undefined ? (direction > 0 ? watch.view.events.length : 0) : target);
  }

  function stopPlaying() {
    if (watch.timer) clearInterval(watch.timer);
    watch.timer = null;
    $("play-pause").textContent = "play";
  }

  function togglePlaying() {
    if (!watch.view) return;
    if (watch.timer) {
      stopPlaying();
      return;
    }
    if (watch.k >= watch.view.events.length) showStep(0);
    $("play-pause").textContent = "pause";
    watch.timer = setInterval(() => {
      if (watch.k >= watch.view.events.length) stopPlaying();
      else showStep(watch.k + 1);
    }, Number($("speed").value));
  }

  function setupWatchControls() {
    watch.board = new Board($("watch-board"));
    $("first").onclick = () => { stopPlaying(); showStep(0); };
    $("last").onclick = () => { stopPlaying(); showStep(watch.view.events.length); };
    $("prev").onclick = () => step(-1);
    $("next").onclick = () => step(1);
    $("prev-decision").onclick = () => jumpDecision(-1);
    $("next-decision").onclick = () => jumpDecision(1);
    $("play-pause").onclick = togglePlaying;
    $("analyse").onclick = analyse;
    $("slider").oninput = () => { stopPlaying(); showStep(Number($("slider").value)); };
    $("event-input").onchange = () => { stopPlaying(); showStep(Number($("event-input").value)); };
    $("speed").onchange = () => { if (watch.timer) { stopPlaying(); togglePlaying(); } };
    document.addEventListener("keydown", (e) => {
      if (currentTab() !== "watch" || !watch.view) return;
      const tag = (e.target && e.target.tagName) || "";
      if (["INPUT", "SELECT", "TEXTAREA"].includes(tag)) return;
      const keys = {
        ArrowLeft: () => step(-1), ArrowRight: () => step(1), " ": togglePlaying,
        Home: () => { stopPlaying(); showStep(0); }, End: () => { stopPlaying(); showStep(watch.view.events.length); },
        PageUp: () => jumpDecision(-1), PageDown: () => jumpDecision(1),
      };
      if (keys[e.key] && !(tag === "BUTTON" && e.key === " ")) {
        e.preventDefault();
        keys[e.key]();
      }
    });
  }

  // the sources: files of the data folder, uploads, tournaments, new games between agents

  async function loadFiles() {
    const list = $("file-list");
    let listing;
    try {
      listing = await api("api/files");
    } catch (err) {
      list.replaceChildren(el("li", { class: "muted", text: err.message }));
      return [];
    }
    $("data-folder").textContent = `data folder: ${listing.folder}`;
    if (!listing.files.length) {
      list.replaceChildren(el("li", { class: "muted",
        text: "no record files (*.jsonl) or databases (*.sqlite) here yet: play a game, or start a new one below" }));
    } else {
      list.replaceChildren(...listing.files.map((f) => el("li", {}, el("button", {
        type: "button", "data-file": f.name, "data-kind": f.kind,
        onclick: (e) => { markCurrent(list, e.currentTarget); f.kind === "records" ? listRecords(f.name) : listTournaments(f.name); },
      }, f.name, " ", el("span", { class: "kind", text: f.kind === "records" ? "records" : "database" })))));
    }
    if (listing.truncated) list.append(el("li", { class: "muted", text: "(more files not listed)" }));
    return listing.files;
  }

  function markCurrent(container, node) {
    for (const b of container.querySelectorAll(".current")) b.classList.remove("current");
    if (node) node.classList.add("current");
  }

  function gameRows(headers, rows) {
    const table = $("game-list");
    table.tHead.replaceChildren(el("tr", {}, ...headers.map((h) => el("th", { text: h }))));
    table.tBodies[0].replaceChildren(...rows);
    $("game-list-box").hidden = false;
  }

  // points by seat, the winners' starred
  function pointsText(points, winners) {
    if (!points) return "";
    return points.map((pts, p) => (winners && winners.includes(p) ? `${pts}\u2605` : String(pts))).join(" ");
  }

  function recordRows(listing, source) {
    return listing.games.map((g) => {
      if (g.error) return el("tr", { class: "bad" }, el("td", { text: String(g.line) }), el("td", { colspan: 2, text: g.error }));
      const row = el("tr", { "data-line": g.line, tabindex: 0 },
        el("td", { text: String(g.line) }),
        el("td", {}, `${g.variant}, ${g.num_players ?? "?"} players`,
          el("div", { class: "muted", text: g.agents ? g.agents.join(", ") : "" })),
        el("td", { text: pointsText(g.final_points, g.winners) }));
      const open = () => { markCurrent($("game-list"), row); openGame({ ...source, line: g.line }, 0); };
      row.addEventListener("click", open);
      row.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
      return row;
    });
  }

  async function listRecords(file) {
    clearMessage();
    try {
      const listing = await api(`api/records?${query({ file })}`);
      $("tournament-pick").hidden = true;
      $("more-games").hidden = true;
      $("game-list-title").textContent = `${file}: ${listing.games.length} line${listing.games.length === 1 ? "" : "s"}`;
      gameRows(["line", "game", "points"], recordRows(listing, { file }));
    } catch (err) {
      showMessage(err.message);
    }
  }

  async function uploadFile(file) {
    clearMessage();
    try {
      const listing = await api(`api/upload?${query({ name: file.name })}`, {
        method: "POST", headers: { "Content-Type": "application/octet-stream" }, body: file });
      $("tournament-pick").hidden = true;
      $("more-games").hidden = true;
      $("game-list-title").textContent = `uploaded ${listing.name}: ${listing.games.length} line(s)`;
      gameRows(["line", "game", "points"], recordRows(listing, { upload: listing.upload }));
      const good = listing.games.filter((g) => !g.error);
      if (good.length) await openGame({ upload: listing.upload, line: good[0].line }, 0);
      else showMessage(`${listing.name} holds no record the page can show: ${listing.games.map((g) => g.error).join("; ")}`);
    } catch (err) {
      showMessage(err.message);
    }
  }

  const tourney = { db: null, key: null, offset: 0 };

  async function listTournaments(db, key) {
    clearMessage();
    try {
      const held = await api(`api/tournaments?${query({ db })}`);
      if (!held.tournaments.length) {
        showMessage(`${db} holds no tournament yet`);
        return;
      }
      const select = $("tournament-select");
      fillSelect(select, held.tournaments.map((t) => [t.key,
        `${t.variant} ${t.num_players}p, ${t.games} games${t.records ? "" : ", no records"} (${t.key})`]), key || held.tournaments[0].key);
      select.onchange = () => listTournamentGames(db, select.value, 0);
      $("tournament-pick").hidden = false;
      await listTournamentGames(db, select.value, 0);
    } catch (err) {
      showMessage(err.message);
    }
  }

  async function listTournamentGames(db, key, offset) {
    try {
      const page = await api(`api/tournament?${query({ db, key, offset, limit: 100 })}`);
      Object.assign(tourney, { db, key, offset });
      const rows = page.games.map((g) => {
        const row = el("tr", { class: g.has_record ? null : "none", "data-game": g.index, tabindex: g.has_record ? 0 : null,
          title: g.has_record ? null : "played without records: nothing to show" },
          el("td", { text: String(g.index) }), el("td", { text: g.agents.join(", ") }),
          el("td", { text: pointsText(g.points, g.ranks.map((r, p) => (r === 1 ? p : -1))) }));
        if (g.has_record) {
          const open = () => { markCurrent($("game-list"), row); openGame({ db, key, game: g.index }, 0); };
          row.addEventListener("click", open);
          row.addEventListener("keydown", (e) => { if (e.key === "Enter") open(); });
        }
        return row;
      });
      $("game-list-title").textContent = `${db}: games ${offset}\u2013${offset + page.games.length - 1}`;
      if (offset === 0) gameRows(["game", "agents by seat", "points"], rows);
      else $("game-list").tBodies[0].append(...rows);
      $("more-games").hidden = page.games.length < 100;
      $("more-games").onclick = () => listTournamentGames(db, key, offset + 100);
    } catch (err) {
      showMessage(err.message);
    }
  }

  // the agents offered for a game: every agent, those that cannot play it marked
  const agentCache = {};

  async function agentsFor(variant, players) {
    const key = `${variant}/${players}`;
    if (!agentCache[key]) agentCache[key] = await api(`api/agents?${query({ variant, players })}`);
    const listed = agentCache[key];
    $("agent-names").replaceChildren(...listed.agents.filter((a) => a.fits).map((a) =>
      el("option", { value: a.name, text: a.description })));
    return listed;
  }

  function seatInputs(container, seats, defaults, prefix, colours) {
    const previous = [...container.querySelectorAll("input")].map((i) => i.value);
    container.replaceChildren(...seats.map((p, j) => el("label", {},
      swatch(colours[p % colours.length]), `seat ${p}`,
      el("input", { id: `${prefix}-${p}`, list: "agent-names", value: defaults[j], "data-seat": p,
        "aria-label": `agent on seat ${p}`, spellcheck: "false" }))));
    return previous;
  }

  const SEAT_COLOURS = ["#1f77b4", "#ff7f0e", "#9467bd", "#e6b800", "#17becf", "#e377c2", "#8c564b", "#6b6b6b"];

  async function refreshAgentsForm() {
    const variant = $("agents-variant").value, players = Number($("agents-players").value);
    try {
      const listed = await agentsFor(variant, players);
      const others = listed.agents.filter((a) => a.fits && a.name !== listed.champion).map((a) => a.name);
      const preferred = ["expert", "search", "coward", "runner", "placer", "random"].filter((n) => others.includes(n));
      const pool = preferred.length ? preferred : others.length ? others : [listed.champion];
      const defaults = [...Array(players).keys()].map((p) => (p === 0 ? listed.champion : pool[(p - 1) % pool.length]));
      seatInputs($("agents-seats"), [...Array(players).keys()], defaults, "agents-seat", SEAT_COLOURS);
      $("welcome-lineup").textContent = `(${defaults[0]} against ${defaults.slice(1).join(", ") || "Hugo"}, ${variant})`;
    } catch (err) {
      showMessage(err.message);
    }
  }

  async function watchNewGame(e) {
    e.preventDefault();
    const agents = [...$("agents-seats").querySelectorAll("input")].map((i) => i.value.trim());
    const button = $("agents-go");
    button.disabled = true;
    button.textContent = "playing\u2026";
    try {
      await openGame({ agents: agents.join(","), variant: $("agents-variant").value,
        players: $("agents-players").value, seed: $("agents-seed").value || "0" }, 0);
    } finally {
      button.disabled = false;
      button.textContent = "Play it and watch";
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Play

  const play = { id: null, board: null, view: null, seat: 0, agents: [], frame: null, origin: null, busy: false,
    skip: false };

  async function refreshPlayForm() {
    const variant = $("play-variant").value, players = Number($("play-players").value);
    const seats = [...Array(players).keys()];
    const seatSelect = $("play-seat");
    const seat = Math.min(Number(seatSelect.value || 0), players - 1);
    fillSelect(seatSelect, seats.map((p) => [p, `seat ${p}${p === 0 ? " (places first)" : ""}`]), seat);
    try {
      const listed = await agentsFor(variant, players);
      const others = seats.filter((p) => p !== seat);
      seatInputs($("play-opponents"), others, others.map(() => listed.champion), "play-opponent", SEAT_COLOURS);
    } catch (err) {
      showMessage(err.message);
    }
  }

  async function startPlay(e) {
    e.preventDefault();
    clearMessage();
    const opponents = [...$("play-opponents").querySelectorAll("input")].map((i) => i.value.trim());
    const body = { variant: $("play-variant").value, players: Number($("play-players").value),
      seat: Number($("play-seat").value), opponents, seed: $("play-seed").value === "" ? null : $("play-seed").value };
    $("play-start").disabled = true;
    try {
      const reply = await api("api/play", { method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body) });
      play.id = reply.id;
      play.seat = reply.seat;
      play.agents = reply.agents;
      play.view = reply.board;
      play.board.setBoard(reply.board);
      $("play-area").hidden = false;
      $("play-side").hidden = false;
      $("play-result").hidden = true;
      $("play-log").replaceChildren();
      $("play-title").textContent = `${reply.board.title}, ${reply.agents.length} players, seed ${reply.seed}`;
      history.replaceState(null, "", "#play");
      await animate(reply);
    } catch (err) {
      showMessage(err.message);
    } finally {
      $("play-start").disabled = false;
    }
  }

  function logEvents(events) {
    const log = $("play-log");
    for (const ev of events) {
      log.append(el("li", { class: isDecision(ev) ? "decision" : ev.e === "round_end" ? "round" : null,
        text: describe(ev, play.agents.map((a, p) => (p === play.seat ? "you" : a))) }));
    }
    log.scrollTop = log.scrollHeight;
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  // the agents' events one by one, then the person's decision (or the end)
  async function animate(reply) {
    play.busy = true;
    play.skip = false;
    setChoosing(false);
    $("play-skip").hidden = false;
    for (const step of reply.steps) {
      logEvents(step.events);
      const delay = Number($("play-speed").value);
      const shown = !play.skip && delay > 0;
      if (shown) {
        play.board.show(step.frame);
        const last = step.events[step.events.length - 1];
        $("play-status").textContent = last ? describe(last, play.agents.map((a, p) => (p === play.seat ? "you" : a))) : "";
        pointsTable($("play-points"), play.view, play.agents, step.frame, play.seat);
        await sleep(delay);
      }
    }
    $("play-skip").hidden = true;
    play.busy = false;
    play.frame = reply.frame;
    play.board.show(reply.frame);
    pointsTable($("play-points"), play.view, play.agents, reply.frame, play.seat);
    if (reply.over) finishPlay(reply);
    else offerChoices();
  }

  function setChoosing(on) {
    $("play-input").disabled = !on;
    $("play-send").disabled = !on;
    if (!on) $("play-moves").replaceChildren();
  }

  function offerChoices() {
    const frame = play.frame;
    const legal = frame.legal || [];
    const placing = frame.phase === "place";
    $("play-status").textContent = placing ? "Your turn: place a guest (click a marked square)"
      : `Your turn: you rolled ${frame.roll}. Click a marked guest, then where it goes`;
    $("play-moves").replaceChildren(...legal.map((note, k) => el("li", {}, el("button", {
      type: "button", "data-move": note, title: `key ${k + 1}`, onclick: () => sendMove(note),
    }, `${k + 1}. ${notation(note)}`))));
    setChoosing(true);
    $("play-side").dataset.turn = String(Number($("play-side").dataset.turn || 0) + 1);  // (tests wait on it)
    play.origin = null;
    drawPicks();
    $("play-input").value = "";
    $("play-input").focus({ preventScroll: true });
  }

  // the places the person may click: squares to place on; guests that may move, then their targets
  function drawPicks() {
    const board = play.board;
    board.clearPicks();
    const legal = (play.frame.legal || []).filter((n) => n !== "pass");
    if (play.frame.phase === "place") {
      for (const note of legal) board.pick(note, "target", () => sendMove(note));
      return;
    }
    const origins = [...new Set(legal.map((n) => n.split(">")[0]))];
    for (const origin of origins) {
      board.pick(origin, origin === play.origin ? "origin selected" : "origin", () => {
        play.origin = play.origin === origin ? null : origin;
        for (const b of $("play-moves").querySelectorAll("button")) {
          b.classList.toggle("selected", b.dataset.move.startsWith(`${play.origin}>`));
        }
        drawPicks();
      });
    }
    if (play.origin) {
      for (const note of legal.filter((n) => n.startsWith(`${play.origin}>`))) {
        const target = note.split(">")[1];
        board.arrow(play.origin, target, "legal");
        board.pick(target, "target", () => sendMove(note));
      }
    }
  }

  async function sendMove(note) {
    if (play.busy || !play.id) return;
    clearMessage();
    play.busy = true;
    setChoosing(false);
    play.board.clearPicks();
    try {
      const reply = await api(`api/play/${encodeURIComponent(play.id)}`, { method: "POST",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify({ move: note }) });
      await animate(reply);
    } catch (err) {
      play.busy = false;
      showMessage(err.message);
      if (play.frame && !play.frame.winners) offerChoices();
    }
  }

  function typedMove(e) {
    e.preventDefault();
    const text = $("play-input").value.trim();
    const legal = (play.frame && play.frame.legal) || [];
    if (!text) return;
    if (/^\d+$/.test(text)) {
      const k = Number(text);
      if (k >= 1 && k <= legal.length) sendMove(legal[k - 1]);
      else showMessage(`${text} is not one of the choices: enter a number 1..${legal.length}`);
      return;
    }
    const note = text.replace(/\s+/g, "").replace("\u2192", ">");
    if (legal.includes(note)) sendMove(note);
    else showMessage(`${text} is not legal here: legal are ${legal.join(", ")}`);
  }

  function finishPlay(reply) {
    setChoosing(false);
    play.board.clearPicks();
    const frame = reply.frame;
    const winners = frame.winners || [];
    const won = winners.includes(play.seat);
    const box = $("play-result");
    box.className = won ? "" : "lost";
    const verdict = won ? (winners.length > 1 ? "You share the win!" : "You win!") : "You lose.";
    box.replaceChildren(el("p", {}, el("b", { text: verdict }),
      ` Points: ${frame.points.map((pts, p) => `seat ${p} ${pts}`).join(", ")}.`));
    if (reply.saved && reply.saved.file) {
      const link = `#watch?${query({ file: reply.saved.file, line: reply.saved.line, event: 0 })}`;
      box.append(el("p", {}, `Recorded as ${reply.saved.file} line ${reply.saved.line}: `,
        el("a", { href: link, id: "watch-played", text: "watch it" })));
    } else if (reply.saved && reply.saved.error) {
      box.append(el("p", { class: "muted", text: reply.saved.error }));
    }
    box.hidden = false;
    $("play-status").textContent = "Game over.";
    loadFiles().then((listed) => { files = listed; });  // the record just written is listed to watch
  }

  function setupPlay() {
    play.board = new Board($("play-board"));
    $("play-form").addEventListener("submit", startPlay);
    $("play-type").addEventListener("submit", typedMove);
    $("play-skip").onclick = () => { play.skip = true; };
    $("play-board").addEventListener("click", () => {
      if (play.origin && !play.busy) {
        play.origin = null;
        drawPicks();
      }
    });
    document.addEventListener("keydown", (e) => {
      if (currentTab() !== "play" || play.busy || !play.frame || play.frame.winners) return;
      if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName)) return;
      const legal = play.frame.legal || [];
      if (/^[1-9]$/.test(e.key) && Number(e.key) <= legal.length) {
        e.preventDefault();
        sendMove(legal[Number(e.key) - 1]);
      }
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Leaderboard

  async function loadLeaderboardFiles(files, db, key) {
    const dbs = files.filter((f) => f.kind === "database").map((f) => f.name);
    const select = $("lb-db");
    if (!dbs.length) {
      fillSelect(select, [["", "no database in the data folder"]]);
      $("lb-meta").textContent = "Run midnight tournament --db DIR/results.sqlite, then reload.";
      return;
    }
    fillSelect(select, dbs.map((d) => [d, d]), db && dbs.includes(db) ? db : dbs[0]);
    select.onchange = () => loadTournamentsFor(select.value);
    await loadTournamentsFor(select.value, key);
  }

  async function loadTournamentsFor(db, key) {
    clearMessage();
    try {
      const held = await api(`api/tournaments?${query({ db })}`);
      const select = $("lb-tournament");
      fillSelect(select, held.tournaments.map((t) => [t.key, `${t.variant} ${t.num_players}p, ${t.games} games (${t.key})`]),
        key || (held.tournaments[0] && held.tournaments[0].key));
      select.onchange = () => showLeaderboard(db, select.value);
      if (held.tournaments.length) await showLeaderboard(db, select.value);
    } catch (err) {
      showMessage(err.message);
    }
  }

  async function showLeaderboard(db, key) {
    clearMessage();
    const fmt = (v, digits) => (v === null || v === undefined ? "-" : v.toFixed(digits));
    try {
      const board = await api(`api/leaderboard?${query({ db, key })}`);
      $("lb-meta").textContent = `${board.variant}, ${board.num_players} players, ${board.games} games, seed ${board.seed}`;
      const heads = ["rank", "agent", "games", "rating", "\u00b1 95%", "mean points", "\u00b1 95%", "win rate", "mean rank"];
      const table = $("lb-table");
      table.tHead.replaceChildren(el("tr", {}, ...heads.map((h, c) => el("th", { class: c === 1 ? null : "number", text: h }))));
      table.tBodies[0].replaceChildren(...board.standings.map((s, i) => el("tr", {},
        ...[String(i + 1), s.agent, String(s.games), fmt(s.rating, 2), fmt(s.rating_ci, 2), fmt(s.mean_points, 2),
          fmt(s.points_ci, 2), fmt(s.win_rate, 3), fmt(s.mean_rank, 3)].map((v, c) =>
          el("td", { class: c === 1 ? null : "number", text: v })))));
      const img = $("lb-plot");
      img.hidden = false;
      img.onerror = () => { img.hidden = true; showMessage("the ratings plot could not be drawn"); };
      img.src = `api/leaderboard.png?${query({ db, key })}`;
      history.replaceState(null, "", `#leaderboard?${query({ db, key })}`);
    } catch (err) {
      showMessage(err.message);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // tabs and links: #watch?file=F&line=L&event=K, #watch?db=D&key=T&game=G&event=K,
  // #watch?agents=a,b&variant=V&players=N&seed=S&event=K, #play, #leaderboard?db=D&key=T

  function currentTab() {
    for (const name of ["watch", "play", "leaderboard"]) if (!$(`${name}-tab`).hidden) return name;
    return "watch";
  }

  function showTab(name) {
    for (const tab of ["watch", "play", "leaderboard"]) {
      $(`${tab}-tab`).hidden = tab !== name;
      $(`tab-${tab}`).classList.toggle("active", tab === name);
    }
    if (name !== "watch") stopPlaying();
  }

  function parseHash() {
    const hash = location.hash.replace(/^#/, "");
    const [name, rest] = hash.split("?");
    return { name: name || "watch", params: Object.fromEntries(new URLSearchParams(rest || "")) };
  }

  let files = [];

  async function route() {
    const { name, params } = parseHash();
    const tab = ["watch", "play", "leaderboard"].includes(name) ? name : "watch";
    showTab(tab);
    if (tab === "watch") {
      const keys = ["file", "line", "upload", "db", "key", "game", "agents", "variant", "players", "seed"];
      const source = Object.fromEntries(keys.filter((k) => k in params).map((k) => [k, params[k]]));
      const same = watch.source && JSON.stringify(sourceParams(watch.source)) === JSON.stringify(source);
      const k = Number(params.event || 0);
      if (Object.keys(source).length && !same) await openGame(source, k);
      else if (same && k !== watch.k) showStep(k);
    } else if (tab === "leaderboard") {
      await loadLeaderboardFiles(files, params.db, params.key);
    }
  }

  async function startServed() {
    setupWatchControls();
    setupPlay();
    $("message-close").onclick = clearMessage;
    $("upload").onchange = () => { if ($("upload").files[0]) uploadFile($("upload").files[0]); };
    $("agents-form").addEventListener("submit", watchNewGame);
    $("welcome-watch").onclick = () => $("agents-form").requestSubmit();
    let info;
    try {
      info = await api("api/info");
    } catch (err) {
      showMessage(err.message);
      return;
    }
    const variants = info.variants.map((v) => [v, v]);
    const players = [...Array(info.players[1] - info.players[0] + 1).keys()].map((k) => [k + info.players[0], String(k + info.players[0])]);
    fillSelect($("agents-variant"), variants, info.variants[0]);
    fillSelect($("agents-players"), players, 4);
    fillSelect($("play-variant"), variants, info.variants[0]);
    fillSelect($("play-players"), players, 4);
    $("agents-variant").onchange = refreshAgentsForm;
    $("agents-players").onchange = refreshAgentsForm;
    $("play-variant").onchange = refreshPlayForm;
    $("play-players").onchange = refreshPlayForm;
    $("play-seat").onchange = refreshPlayForm;
    if (Object.keys(info.plugin_errors || {}).length) {
      showMessage(`agent plugins that failed to load: ${Object.values(info.plugin_errors).join("; ")}`);
    }
    files = await loadFiles();
    await Promise.all([refreshAgentsForm(), refreshPlayForm()]);
    window.addEventListener("hashchange", route);
    await route();
    document.body.dataset.ready = "true";  // (the browser tests wait for this)
  }

  function startEmbedded(view) {
    document.body.classList.add("embedded");
    setupWatchControls();
    $("message-close").onclick = clearMessage;
    $("tab-watch").classList.add("active");
    const k = Number((location.hash.match(/^#event=(\d+)$/) || [])[1] || 0);
    openGame({ embedded: view }, k);
    window.addEventListener("hashchange", () => {
      const m = location.hash.match(/^#event=(\d+)$/);
      if (m && Number(m[1]) !== watch.k) showStep(Number(m[1]));
    });
    document.body.dataset.ready = "true";
  }

  const embedded = document.getElementById("midnight-game");
  if (embedded) startEmbedded(JSON.parse(embedded.textContent));
  else startServed();
})();
