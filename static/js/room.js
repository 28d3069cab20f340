// The room client: one websocket, automatic reconnect with backoff, seat
// management, banner, scoreboard and log. The board itself is drawn by the
// game's board module (static/js/games/<board>.js), which knows no rules: it
// draws the view it is sent, highlights the legal moves and reports clicks.
// What the game is (its board module, what it calls a deal) and the computer
// levels come with the page, from the game's declared metadata
// (GET /api/games, docs/protocol.md). Around the board: "your turn" alerts
// (alerts.js), the chat (chat.js), the seat link for another device
// (seatlink.js), who is here and who is ready between deals.

import { turnAlerts } from "/static/js/alerts.js";
import { chatPanel } from "/static/js/chat.js";
import { addressWithoutToken, seatLinkDialog, tokenFromAddress } from "/static/js/seatlink.js";

import { bareName, nameWith, reduceMotion } from "./dom.js";
import { el, outcomeBlock as drawOutcome, points, sentence, showToast, signed } from "./ui.js";

const root = document.getElementById("room");
const ROOM = root.dataset.room;
const GAME = root.dataset.game;
const BOARD = root.dataset.board;
const DEAL_NOUN = root.dataset.dealNoun || "deal";
const TOKEN_KEY = `cardboard.token.${ROOM}`;
const NAME_KEY = "cardboard.name";
const LEVEL_KEY = "cardboard.botLevel";
const LEVELS = root.dataset.levels.split(" ");
const DEFAULT_LEVEL = root.dataset.defaultLevel;
// "Play the computer" opens /r/<room>?sit=<seat>: take that seat.
let sitAt = new URLSearchParams(location.search).get("sit");
let lastSeat = null;  // the seat this tab held last
// A seat link (#seat=<token>) hands this page a seat: keep the token, and
// take it out of the address bar at once.
const linkedToken = tokenFromAddress();
if (linkedToken) {
  localStorage.setItem(TOKEN_KEY, linkedToken);
  history.replaceState(null, "", addressWithoutToken());
}
// The server's clock (Unix seconds) as this page sees it, for "away 12 s".
const CLOCK_OFFSET = Number(root.dataset.serverTime || 0) * 1000 - Date.now();
function serverNow() { return (Date.now() + (root.dataset.serverTime ? CLOCK_OFFSET : 0)) / 1000; }

const $ = (sel) => root.querySelector(sel);
const els = {
  conn: $("#conn"), banner: $("#banner"), board: $("#board"), extra: $("#board-extra"),
  result: $("#result"), seats: $("#seats"), seeded: $("#seeded-note"), joinbox: $("#joinbox"),
  name: $("#name"), log: $("#log"), logTitle: $("#log-h"), scores: $("#scores"), copy: $("#copy-link"), toasts: $("#toasts"),
  watchers: $("#watchers"), dealCount: $("#deal-count"), seatLink: $("#seat-link-btn"),
  review: $("#review"), grid: $("#room-grid"),
};

let renderer = null;
let state = null;       // the last state frame
let prev = null;        // the one before
let ws = null;
let attempt = 0;
let reconnectTimer = null;
let outage = null;      // why the socket closed: "restart" (1012), "storage" (1011), "lost" (no answer) or null
let replaced = false;   // this tab lost its seat to another tab: don't resume automatically
let levelBox = null;    // the computer level choice under the seats, built once
let watchSent = false;  // this connection has told the server our name as a spectator
// The name of the last join or watch sent, until another frame that may be
// refused as a bad field goes: a bad_field meanwhile is that name's refusal.
// `quiet` when the page sent it by itself (the name remembered from before).
let nameOnTrial = null;

// ---------------------------------------------------------------- helpers
export function toast(message, kind = "info") { showToast(els.toasts, message, kind); }

/** "deal", or "game" for games played one game per match (the game's deal_noun). */
function noun() { return DEAL_NOUN; }
function Noun() { return sentence(noun()); }

function seatInfo(seat) { return state.view.seats.find((s) => s.seat === seat); }
function seatLabel(seat) { return renderer && renderer.seatLabel ? renderer.seatLabel(seat, state) : seat; }
function who(seat) {
  const s = seatInfo(seat);
  const label = seatLabel(seat);
  if (state.you === seat) return `You (${label})`;
  return s && s.name ? nameWith(s, label) : label;
}
function sideName(side, st = state) {
  const s = st.view.sides.find((x) => x.side === side);
  if (renderer && renderer.sideLabel) return renderer.sideLabel(side, st);
  if (s && s.seats.length === 1) return seatLabel(s.seats[0]);
  return side;
}

// ---------------------------------------------------------------- connection
function setConn(kind, text) {
  els.conn.dataset.state = kind;
  els.conn.textContent = text;
  // Cut off from the server, the page no longer knows who is connected:
  // the seats' dots go grey until a state says again (site.css).
  els.seats.classList.toggle("stale", kind !== "open");
}

function connect() {
  clearTimeout(reconnectTimer);
  if (ws && (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING)) return;
  const proto = location.protocol === "https:" ? "wss" : "ws";
  setConn("connecting", attempt ? "Reconnecting…" : "Connecting…");
  // A seat's token rides on the handshake too, so that a player coming back
  // to a crowded room is let in (docs/protocol.md, "Connecting"); the page
  // still sends resume once the socket is open.
  const held = replaced ? null : localStorage.getItem(TOKEN_KEY);
  const sock = new WebSocket(`${proto}://${location.host}/ws/${encodeURIComponent(ROOM)}`,
    held ? ["cardboard", `cardboard.seat.${held}`] : []);
  ws = sock;
  sock.onopen = () => {
    attempt = 0;
    watchSent = false;
    chat.reset();  // the server sends the last messages again
    outage = null;      // the state that follows redraws the banner
    setConn("open", "Connected");
    // Later states as what changed (docs/protocol.md, "Patches"): a full
    // state follows at once, the base of the first patch.
    sock.send(JSON.stringify({ type: "patches" }));
    patchBase = null;
    const token = localStorage.getItem(TOKEN_KEY);
    if (token && !replaced) sock.send(JSON.stringify({ type: "resume", token }));
    // No ping yet: the handshake just showed the path works, and the server
    // reads this socket's frames only once the room lets it in (after a
    // save under way, which may be slow).
  };
  sock.onmessage = (ev) => {
    heardAt = Date.now();
    let frame;
    try { frame = JSON.parse(ev.data); } catch { return; }
    if (frame.type === "pong") { answered(); return; }
    if (frame.type === "patch") {
      frame = patched(frame, ev.data);
      if (!frame) { sock.send(JSON.stringify({ type: "patches" })); return; }  // ask for a full state
    } else if (frame.type === "state") {
      // The seed is a 63-bit integer, beyond what a JS number holds exactly:
      // keep its digits as text.
      const m = /"seed":\s*(\d+)/.exec(ev.data);
      frame.seedText = m ? m[1] : null;
    }
    if (frame.type === "state") {
      fillSentences(frame);
      patchBase = structuredClone(frame);
    }
    onFrame(frame);
  };
  sock.onclose = (ev) => {
    if (ws !== sock) return;
    ws = null;
    answered();
    if (ev.code === 4404) { roomGone(); return; }
    // A server restart (1012) or a storage outage (1011) keeps the room and
    // the seat: say so until the socket is open again. Failed attempts in
    // between (1006) keep the reason.
    if (ev.code === 1012) outage = "restart";
    else if (ev.code === 1011) outage = "storage";
    scheduleReconnect();
  };
  sock.onerror = () => { /* onclose follows */ };
}

// Is the socket still a way to the server? A page cannot see the server's
// websocket pings, and a path can die without closing the socket (a proxy or
// a NAT that stopped passing bytes, a phone that changed networks): the page
// would show "Connected" and lose every click. So after each frame that
// matters, and whenever it has heard nothing for IDLE_MS or the network or
// the tab comes back, the page sends `ping`; the server handles a
// connection's frames in order, so the `pong` also tells that the frames
// before it arrived. No pong within ANSWER_MS: drop the socket and connect
// again (the state on connect shows whether a move got through).
const ANSWER_MS = 5000;
const IDLE_MS = 25000;
let answerTimer = null;   // a ping awaits its pong
let heardAt = Date.now(); // the last frame received
function probe(sock = ws) {
  if (answerTimer !== null || !sock || sock.readyState !== WebSocket.OPEN) return;
  sock.send(JSON.stringify({ type: "ping" }));
  answerTimer = setTimeout(() => noAnswer(sock), ANSWER_MS);
}
function answered() { clearTimeout(answerTimer); answerTimer = null; }
function noAnswer(sock) {
  answerTimer = null;
  if (ws !== sock) return;
  ws = null;
  sock.close();
  outage = "lost";
  scheduleReconnect();
}
setInterval(() => { if (!document.hidden && Date.now() - heardAt >= IDLE_MS) probe(); }, 5000);

// The last state the server sent this connection, as it sent it: the base
// of the next patch (kept apart from `state`, which the page may change).
let patchBase = null;

/** The state a patch frame makes of the last one (docs/protocol.md,
 * "Patches"): each op sets a value at a path of keys and indices, an index at
 * an array's end appending. Null if it does not fit (ask for a full state). */
function patched(patch, text) {
  if (!patchBase) return null;
  let frame = structuredClone(patchBase);
  for (const [path, value] of patch.ops) {
    if (!path.length) { frame = value; continue; }
    let node = frame;
    for (const key of path.slice(0, -1)) {
      node = node?.[key];
      if (node == null || typeof node !== "object") return null;
    }
    const last = path[path.length - 1];
    if (Array.isArray(node) && !(Number.isInteger(last) && last >= 0 && last <= node.length)) return null;
    node[last] = value;
  }
  // The seed's digits, exactly (a patch that sets it carries them).
  const m = /\["view","seed"\],(\d+)/.exec(text);
  frame.seedText = m ? m[1] : (frame.view.seed == null ? null : patchBase.seedText);
  return frame;
}

// A log entry's sentence, and who made the move, come once per connection:
// later states leave them out (docs/protocol.md, "log"). Keep them by deal and
// position, and fill them in.
let sentences = [];
function fillSentences(frame) {
  frame.view.log.forEach((entry, i) => {
    if (entry.text != null) sentences[i] = { text: entry.text, by: entry.by };
    else if (sentences[i] != null) Object.assign(entry, sentences[i]);
  });
  sentences.length = frame.view.log.length;
}

// Exponential backoff (0.5 s, 1 s, 2 s … 10 s) with ±50 % jitter, so that the
// clients of a restarted server do not all come back at the same instant.
function scheduleReconnect() {
  attempt += 1;
  const delay = Math.min(10000, 500 * 2 ** Math.min(attempt - 1, 5)) * (0.5 + Math.random());
  const secs = Math.max(1, Math.round(delay / 1000));
  if (outage === "restart") {
    setConn("closed", "Server restarting, reconnecting…");
    showOutage("Server restarting, reconnecting…", `${state && state.you ? "Your seat is kept: the" : "The"}`
      + " game goes on by itself once the server is back.");
  } else if (outage === "lost") {
    setConn("closed", "Connection lost, reconnecting…");
    showOutage("Connection lost, reconnecting…",
      "The server stopped answering. Once back, the table shows whether your last click got through.");
  } else if (outage === "storage") {
    setConn("closed", `Server cannot save games, retrying in ${secs}s`);
    showOutage("The server cannot save games just now.",
      `Nothing that was shown to you is lost. Retrying in ${secs}s…`);
  } else {
    setConn("closed", `Offline, retrying in ${secs}s`);
  }
  clearTimeout(reconnectTimer);
  reconnectTimer = setTimeout(connect, delay);
}

// Come back at once when the tab wakes up or the network returns.
// A socket kept meanwhile is asked whether it still leads to the server.
const wake = () => { if (!ws) connect(); else probe(); };
document.addEventListener("visibilitychange", () => { if (!document.hidden) wake(); });
window.addEventListener("online", wake);
window.addEventListener("pageshow", wake);

function send(frame) {
  if (ws && ws.readyState === WebSocket.OPEN) {
    if (frame.type !== "ping" && frame.type !== "patches") nameOnTrial = null;
    ws.send(JSON.stringify(frame));
    if (frame.type !== "watch") probe();
  } else { toast("Not connected: reconnecting…", "error"); connect(); }
}

let lastMoveAt = 0;
export function play(move) {
  if (!state) return;
  lastMoveAt = Date.now();
  send({ type: "move", move, version: state.version });
}

/** The connection is down for ``text`` (a restart, a storage outage): offer
 * no move, and say it in the banner until the next state redraws both. */
function showOutage(text, sub) {
  if (state && state.legal_moves.length) {
    state = { ...state, legal_moves: [], moves: [] };
    render();
  }
  els.banner.className = "banner outage";
  els.banner.replaceChildren(el("span", { id: "banner-text" }, text), el("span", { class: "sub" }, sub));
}

/** The room is gone (freed after a long idle time): nothing may be clicked any more. */
function roomGone() {
  setConn("closed", "This room no longer exists");
  if (state) {
    state = { ...state, legal_moves: [], moves: [], to_move: [] };
    render();
  }
  els.banner.className = "banner over";
  els.banner.replaceChildren(el("span", {}, "This room no longer exists (it may have been closed after a long idle time). "),
    el("a", { href: "/" }, "Start a new game"));
}

// ---------------------------------------------------------------- frames
// The server's frames by type (docs/protocol.md, "Frames the server sends");
// a type this page does not know is ignored.
const FRAME_HANDLERS = {
  state(f) {
    prev = state;
    state = f;
    // Which way a watching tab faces (the boards that turn, Stucco's): the
    // seat it lost to another tab, or the one it was asked to take, so that
    // the table does not turn round under the player.
    if (f.you) lastSeat = f.you;
    else f.facing = (replaced && lastSeat) || sitAt || null;
    render();
    tellName();
    tellPlayedForYou();
    if (prev && dealStarted(prev, f)) closeReviewForNewDeal();
    if (prev && prev.phase === "playing" && ["deal_over", "match_over"].includes(f.phase)) showResult();
  },
  chat(f) { chat.add(f); },
  spectators(f) {
    if (!state) return;
    state.view.spectators = { count: f.count, names: f.names };
    renderWatchers();
  },
  joined(f) {
    localStorage.setItem(TOKEN_KEY, f.token);
    replaced = false;
    seatDialog.refresh();
    // Seated: drop the "type your name" hint and bring the banner (whose turn,
    // what to do) back into view, which matters on a phone.
    els.toasts.replaceChildren();
    els.banner.scrollIntoView({ block: "nearest", behavior: "smooth" });  // only if out of view
    if (sitAt) {
      sitAt = null;
      history.replaceState(null, "", location.pathname);
    }
  },
  error(f) {
    const handle = ERROR_HANDLERS[f.code] || showError;
    handle(f);
  },
};

/** Back in a seat that a computer player held: "While you were away,
 * Alan (easy) played 3 moves for you.", once for each such run of moves
 * (the log names who made each move). Only after a move of one's own in the
 * deal: someone who took a seat a computer player had left learns nothing
 * from it. */
let toldPlayedFor = "";
function tellPlayedForYou() {
  const me = state.you ? seatInfo(state.you) : null;
  if (!me || me.kind !== "human" || !me.name) return;
  const log = state.view.log;
  let n = 0;
  let last = -1;
  let by = "";
  let mine = false;
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i];
    if (e.seat !== state.you || !e.by) continue;
    mine = e.by === me.name;
    if (mine) break;
    n += 1;
    by = e.by;
    if (last < 0) last = i;
  }
  // Told once in this tab, a reload included.
  const told = `cardboard-told-${state.room}`;
  const key = `${state.view.deal}|${last}`;
  if (!n || !mine || key === toldPlayedFor || key === sessionStorage.getItem(told)) return;
  toldPlayedFor = key;
  try { sessionStorage.setItem(told, key); } catch { /* storage full or off: told once per page */ }
  toast(`While you were away, ${by} played ${n} move${n === 1 ? "" : "s"} for you.`);
}

function onFrame(f) {
  const handle = Object.hasOwn(FRAME_HANDLERS, f.type) ? FRAME_HANDLERS[f.type] : null;
  if (handle) handle(f);
}

function showError(f) { toast(f.message || f.code, "error"); }

/** A second click of a move already on its way: the fresh state is coming. */
function justMoved() { return Date.now() - lastMoveAt < 1500; }

// The error codes this page answers in its own way; any other is shown.
const ERROR_HANDLERS = {
  replaced() {
    replaced = true;
    toast("Your seat was opened in another tab or device. This tab now watches.", "error");
  },
  bad_token() {
    // The seat this browser knew is no longer its own: say so, then watch.
    localStorage.removeItem(TOKEN_KEY);
    toast(linkedToken || replaced
      ? "This seat link no longer works: a newer link was made, or the seat was given up. You are watching."
      : "Your seat here has ended (it was given up, or moved to another device). You are watching.", "error");
    replaced = false;
    if (state) render();
  },
  no_such_room() { roomGone(); },
  unavailable() {
    // The server could not save the action: nothing changed, a fresh state follows.
    toast("The server could not save that just now, so nothing changed. Try again in a moment.", "error");
  },
  not_your_turn(f) { if (!justMoved()) showError(f); },
  // "Take a seat" pressed twice: the first press seated you, as the page shows.
  already_seated(f) { if (!(state && state.you)) showError(f); },
  name_taken(f) { showError(f); els.name.focus(); els.name.select(); },
  // A name refused for itself (invisible characters only, a pasted
  // zero-width space) is forgotten, not offered again in every room; one the
  // page sent by itself goes silently. The refusal brings no fresh state:
  // the page is drawn again so that the button pressed for it (disabled by
  // once()) can be pressed again.
  bad_field(f) {
    const refused = nameOnTrial;
    nameOnTrial = null;
    if (refused) {
      if (localStorage.getItem(NAME_KEY) === refused.name) localStorage.removeItem(NAME_KEY);
      if (els.name.value.trim() === refused.name) els.name.value = "";
      watchSent = false;
    }
    if (!refused || !refused.quiet) showError(f);
    if (state) render();
  },
  stale_version() {
    // A double click: the first click played, the second was on an old version.
    if (!justMoved()) toast("The position changed before your move arrived. Here it is.", "error");
  },
};

/** True while a seat of the table is free. */
function freeSeat() { return state.view.seats.some((s) => !s.name); }

/** A spectator shows under the name this browser remembers (docs/protocol.md, "watch"). */
function tellName() {
  // A tab that holds a seat's token (or lost the seat to another tab of the
  // same person) is not a spectator to name: that person is seated.
  if (watchSent || state.you || localStorage.getItem(TOKEN_KEY) || replaced) return;
  const name = (localStorage.getItem(NAME_KEY) || "").trim();
  if (name) watchUnder(name, true);
}

/** Send `watch` with `name`, on trial until the server takes it (`quiet`:
 * the page sent it by itself, so a refusal is not shown; see bad_field). */
function watchUnder(name, quiet) {
  watchSent = true;
  send({ type: "watch", name });
  nameOnTrial = { name, quiet };
}

/** The spectator's own name, given in the watch box: remembered like a player's. */
function watchAs(e) {
  e.preventDefault();
  const input = $("#watch-name");
  const name = input.value.trim();
  if (!name) { toast("Type your name first.", "error"); input.focus(); return; }
  localStorage.setItem(NAME_KEY, name);
  els.name.value = name;
  watchUnder(name, false);
  $("#watchbox").hidden = true;
}

// ---------------------------------------------------------------- rendering
function render() {
  if (!renderer) return;
  renderBanner();
  renderer.render(els.board, state, { play, prev, extra: els.extra });
  renderResult();
  renderSeats();
  renderWatchers();
  renderLog();
  els.logTitle.textContent = `Moves this ${noun()}`;
  renderScores();
  renderDealCount();
  chat.update(state);
  // A forced pass is the server's to play: no "your turn" for it.
  alerts.update(state.phase === "playing" && state.legal_moves.length > 0 && !forcedPass(), bannerLine());
  root.dataset.phase = state.phase;
  root.dataset.version = state.version;
  sitIfAsked();
}

function bannerLine() { return els.banner.querySelector("#banner-text")?.textContent || ""; }

/** "Deal 2 of 4" next to the title, in games with a fixed number of deals. */
function renderDealCount() {
  const { deal, deals } = state.view;
  els.dealCount.hidden = !(deals > 1);
  els.dealCount.textContent = deals > 1 ? `${Noun()} ${deal} of ${deals}` : "";
}

// Take the seat named by ?sit= once: at once with the remembered name, else
// after the user types one (the "Take a seat" button then takes that seat;
// the banner says so, and the name field has the focus).
let sitTried = false;
function sitIfAsked() {
  if (!sitAt || sitTried || state.you) return;
  const s = seatInfo(sitAt);
  if (!s || s.name || localStorage.getItem(TOKEN_KEY)) { sitAt = null; return; }
  sitTried = true;
  if (els.name.value.trim()) join(sitAt);
  else els.name.focus();
}

function renderBanner() {
  const b = els.banner;
  b.className = "banner";
  b.replaceChildren();
  const v = state.view;
  const mine = state.legal_moves.length > 0;
  let text = "", sub = "";
  if (state.phase === "waiting") {
    const taken = v.seats.filter((s) => s.name).length;
    text = `Waiting for players: ${taken} of ${v.seats.length} seats taken.`;
    const playComputer = sitAt && !state.you && v.seats.every((s) => s.name || s.seat === sitAt);
    sub = state.you ? `Share the link; the ${noun()} starts when every seat is taken.`
      : playComputer ? "The computer players are ready: type your name and press Take a seat to start."
      : "Type a name and take a free seat, or watch.";
  } else if (state.phase === "playing") {
    if (mine) {
      b.classList.add("your-turn");
      text = state.to_move.length > 1 ? "Your move (both players choose at once)." : "Your turn.";
    } else {
      text = state.to_move.map(who).join(" and ") + (state.to_move.length > 1 ? " to move." : " to move.");
    }
    const hint = renderer.hint ? renderer.hint(state) || "" : "";
    sub = hint;
    const away = awayToMove();
    if (away.length) {
      const offer = state.you && away.some((s) => s.handover);
      // When a computer may take over is counted down, so that the button
      // does not come as a surprise (new-user pass).
      const soon = state.you && !offer ? Math.min(...away.map((s) => s.handover_at || Infinity)) : Infinity;
      sub = [`${AND.format(away.map(bareName))} ${away.length > 1 ? "are" : "is"} away: ${
        offer ? "wait, or hand the seat to a computer player." : "the game waits for them to come back."}`];
      if (soon < Infinity) {
        sub.push(" In ", el("span", { class: "countdown", "data-until": soon }, untilText(soon)),
          ", you may hand the seat to a computer player.");
      }
      if (hint) sub.push(` ${hint}`);
    }
    const then = (more) => (sub.length ? [...[sub].flat(), ` ${more}`] : more);
    if (forcedPass()) {
      b.classList.add("forced-pass");
      sub = then("The table passes for you in a moment, or press Pass now.");
    } else if (onlyPass()) {
      sub = then("Press Pass.");
    }
  } else if (state.phase === "deal_over") {
    b.classList.add("over");
    text = `${Noun()} ${v.deal} is over. ${v.outcome ? sentence(v.outcome.reason) : ""}`;
    sub = readyLine();
  } else if (state.phase === "match_over") {
    b.classList.add("over");
    text = `The ${matchNoun()} is over. ${matchResultText()}`;
    sub = readyLine();
  }
  // (sub: text, or the parts of one, some of them elements: readyLine)
  if (!state.you && state.phase !== "waiting") sub = sub ? ["You are watching. ", ...[sub].flat()] : "You are watching.";
  b.append(el("span", { id: "banner-text" }, text));
  if (sub && sub.length) b.append(el("span", { class: "sub" }, ...[sub].flat()));
  const acts = bannerActions();
  if (acts.childElementCount) b.append(acts);
}

/** The seats awaited in play whose person has lost their connection. */
function awayToMove() {
  if (state.phase !== "playing") return [];
  return state.to_move.map(seatInfo).filter((s) => s && s.kind === "human" && !s.connected);
}

/** A pass is this page's seat's only move. */
function onlyPass() { return state.moves.length === 1 && state.moves[0].kind === "pass"; }

/** The server will pass for this page's seat: a pass is its only move (docs/protocol.md, "Forced passes"). */
function forcedPass() { return state.view.room_options.auto_pass && onlyPass(); }

const AND = new Intl.ListFormat("en", { type: "conjunction" });  // "you and Bob", "A, B, and C"

/** "2 of 4 ready · waiting for you and Bob (East)", between deals. */
function readyLine() {
  const r = state.view.ready;
  if (!r) return "";
  const names = (seats) => AND.format(seats.map((s) => (s === state.you ? "you" : who(s))));
  // After the match a seat someone left is free: whoever takes it presses too.
  const free = state.view.seats.filter((s) => !s.name).length;
  // Someone disconnected is waited for a while only: counted down, so that
  // nobody is surprised when the table goes on (new-user pass).
  const gone = (seat) => { const s = seatInfo(seat); return s && !s.connected && s.away_since; };
  const here = r.missing.filter((s) => !gone(s));
  const parts = [`${r.ready.length} of ${state.view.seats.length} ready`];
  if (here.length) parts.push(` · waiting for ${names(here)}`);
  for (const seat of r.missing.filter(gone)) {
    const until = seatInfo(seat).away_since + (r.wait_away || 0);
    parts.push(" · waiting ", el("span", { class: "countdown", "data-until": until }, untilText(until)),
      ` more for ${who(seat)}, away`);
  }
  if (free) parts.push(` · waiting for someone to take ${free === 1 ? "the free seat" : `the ${free} free seats`}`);
  if (r.away.length) parts.push(` · not waiting for ${names(r.away)}, away`);
  // Nobody awaited, no seat free, and still between deals: no person has
  // said they are ready yet (new-user pass: "not waiting for Pat" read as if
  // the table were going on without anyone).
  if (!r.missing.length && !free) parts.push(" · waiting for a player to say they are ready");
  parts.push(".");
  return parts;
}

/** "42 s": the seconds left until `until` (server time, in seconds). */
function untilText(until) { return `${Math.max(0, Math.round(until - serverNow()))} s`; }

/** Pass and Ready live in the banner, so they are always in view. */
function bannerActions() {
  const box = el("span", { class: "banner-actions" });
  const pass = state.moves.find((m) => m.kind === "pass");
  if (pass) {
    box.append(el("button", { class: "btn primary", type: "button", id: "pass-btn", onclick: () => play(pass.move) },
      renderer.passLabel ? renderer.passLabel(state) : "Pass"));
  }
  // The seats panel has the same button, but on a phone it is below the board.
  for (const s of state.you ? awayToMove().filter((x) => x.handover) : []) {
    box.append(el("button", { class: "btn", type: "button", "data-hand-over-banner": s.seat,
      onclick: addBot(s.seat) },
      `Hand ${bareName(s)}'s seat to a computer`));
  }
  const ready = readyButton();
  if (ready) {
    ready.id = state.phase === "match_over" ? "rematch-btn" : "next-deal-btn";
    box.append(ready);
  }
  return box;
}

/** "Ready for deal 2" (or a rematch) between deals, for a seated player; else null. */
function readyButton() {
  const r = state.view.ready;
  if (!r || !state.you) return null;
  const over = state.phase === "match_over";
  const ready = r.ready.includes(state.you);
  const label = ready ? "Ready ✓" : over ? "Ready for a rematch" : `Ready for ${noun()} ${state.view.deal + 1}`;
  return el("button", { class: "btn primary", type: "button", "data-ready": ready ? "yes" : "no", disabled: ready,
    onclick: once(() => send({ type: "ready", version: state.version })) }, label);
}

/** "game" where a match is one game (Suitors, Romeo and Juliet), else "match". */
function matchNoun() { return DEAL_NOUN === "game" ? "game" : "match"; }

function matchResultText() {
  const w = state.view.match_winners || [];
  if (!w.length) return "";
  // Level totals: a drawn game where the match is one game (Romeo and
  // Juliet, Suitors: their rules say "draw"), else a tie on points.
  if (w.length > 1) return matchNoun() === "game" ? "It's a draw." : "It's a tie.";
  const what = matchNoun();
  const side = state.view.sides.find((x) => x.side === w[0]);
  if (state.you && side && side.seats.includes(state.you)) {
    return side.seats.length > 1 ? `Your side, ${sideName(w[0])}, wins the ${what}.` : `You win the ${what}.`;
  }
  // A partnership takes the plural, as the deal's result does ("East–West win").
  const name = sideName(w[0]);
  const plural = name.startsWith("You") || (side && side.seats.length > 1);
  // A seated player who lost is told so, as a winner is.
  const mine = state.you ? state.view.sides.find((x) => x.seats.includes(state.you)) : null;
  const lost = mine ? (mine.seats.length > 1 ? " Your side loses." : " You lose.") : "";
  return `${name} ${plural ? "win" : "wins"} the ${what}.${lost}`;
}


function outcomeBlock(outcome, title) {
  return drawOutcome(outcome, title, { sideName, noun: noun(), you: state.you });
}

function renderResult() {
  const r = els.result;
  r.replaceChildren();
  r.hidden = true;
  const v = state.view;
  if (!v.outcome || !["deal_over", "match_over", "waiting"].includes(state.phase)) return;
  r.hidden = false;
  r.append(outcomeBlock(v.outcome, `${Noun()} ${v.deal}`));
  if (state.phase === "match_over") {
    r.append(el("p", { id: "match-result" }, el("strong", {}, matchResultText()), " ",
      Object.entries(v.totals).map(([s, p]) => `${sideName(s)} ${points(p)}`).join(" · ")));
    if (state.seedText) r.append(el("p", { class: "sub" }, `Match seed: ${state.seedText}`));
  }
  // Review the deal just over; once the match is over, its own page and
  // record. Ready is here too, for when the banner is out of view.
  const links = el("div", { class: "room-links" });
  const ready = readyButton();
  if (ready) {
    ready.classList.add("small");
    ready.dataset.readyCopy = "";
    links.append(ready);
  }
  links.append(el("button", { class: "btn small", type: "button", id: "review-last", onclick: () => reviewDeal(v.deal) },
    `Review this ${noun()}`));
  if (state.phase === "match_over" && v.match_id) {
    links.append(
      el("a", { class: "btn small", id: "match-page", href: `/m/${encodeURIComponent(v.match_id)}`, target: "_blank",
        rel: "noopener" }, "Match page (share it)"),
      el("a", { class: "btn small", id: "match-record", href: `/m/${encodeURIComponent(v.match_id)}.txt`,
        download: `${GAME}-match.txt` }, "Match record"));
  }
  r.append(links);
}

// ---------------------------------------------------------------- review
// A finished deal opens in the review board (review.js) in place of the
// table; the game goes on underneath, and "Back to the table" returns. A
// new deal (or a rematch) starting closes the review by itself: the table
// is where the player is needed.
let review = null;
let reviewAsked = 0;    // counts the reviews asked for, so that a late one that is no longer wanted stays shut
async function reviewDeal(n) {
  const asked = ++reviewAsked;
  const opener = document.activeElement;  // where focus goes back to, for keyboards and screen readers
  const { openReview, roomSource } = await import("./review.js");
  if (asked !== reviewAsked) return;
  if (review) review.close();
  els.grid.hidden = true;
  // Closed (Escape, "Back to the table") maybe before it has finished
  // loading: then `opened` is not set yet, and the table comes back at once.
  let opened = null;
  let shut = false;
  try {
    opened = await openReview(els.review, roomSource(ROOM), {
      deal: n, toast, newTab: true, facing: state && state.you,
      onClose: () => {
        shut = true;
        if (opened && review === opened) review = null;
        els.grid.hidden = false;
        const back = opener && opener !== document.body && opener.isConnected ? opener : $("#review-last");
        if (back && !els.review.contains(back)) back.focus({ preventScroll: true });
      },
    });
    if (shut) return;
    if (asked !== reviewAsked) { opened.close(); return; }
    review = opened;
    els.banner.scrollIntoView({ block: "start" });
    const heading = $("#review-deal");
    if (heading) { heading.tabIndex = -1; heading.focus({ preventScroll: true }); }
  } catch (e) {
    if (asked !== reviewAsked) return;
    review = null;
    els.review.hidden = true;
    els.grid.hidden = false;
    toast(`Could not open the review: ${e.message}`, "error");
  }
}

/** Whether the state `now` is the first of a deal that `before` was not
 * playing: the next deal, or the first of a rematch, has begun. */
function dealStarted(before, now) {
  if (now.phase !== "playing") return false;
  return before.phase !== "playing" || before.view.deal !== now.view.deal;
}

/** Close the review (or one still loading) and show the live table. */
function closeReviewForNewDeal() {
  const loading = els.grid.hidden && !review;
  if (!review && !loading) return;
  reviewAsked += 1;  // a review still loading will not open
  if (review) review.close();
  els.review.hidden = true;
  els.review.replaceChildren();
  els.grid.hidden = false;
  toast(`${Noun()} ${state.view.deal} has begun: back at the table.`);
}

/** At a deal's end, once: bring the result (scores and breakdown) into
 * view if it is not all in view (on a laptop it is under the board), as
 * little as it takes. A result already in view, or a review open, is left
 * alone, and so is the page after that. */
function showResult() {
  const r = els.result;
  if (r.hidden || els.grid.hidden) return;
  const box = r.getBoundingClientRect();
  if (box.top >= 0 && box.bottom <= window.innerHeight) return;
  r.scrollIntoView({ block: "nearest", behavior: reduceMotion() ? "auto" : "smooth" });
}

function renderSeats() {
  // Before anyone sits down: a room dealt from a seed its creator chose
  // (docs/protocol.md, view.seeded) may have no secrets from that creator.
  els.seeded.hidden = !state.view.seeded;
  const list = els.seats;
  list.replaceChildren();
  const canLeave = state.you && state.phase !== "playing";
  let offersComputer = false;
  for (const s of state.view.seats) {
    const row = el("li", { class: "seat-row", "data-seat": s.seat });
    if (state.to_move.includes(s.seat)) row.classList.add("to-move");
    if (state.you === s.seat) row.classList.add("you");
    if (s.kind === "computer") row.classList.add("computer");
    row.append(el("span", { class: `dot${s.connected ? " on" : ""}`, title: s.connected ? "connected" : "not connected" }));
    let name = s.name || "free seat";
    if (s.kind === "computer" && s.stand_in_for) name = `${s.name}, playing for ${s.stand_in_for}`;
    const named = el("span", { class: "grow" }, el("span", { class: "seat-name" }, name), " ",
      el("span", { class: "seat-label" }, seatLabel(s.seat)));
    const status = presence(s);
    if (status) named.append(" ", status);
    row.append(named);
    if (renderer.seatExtra) {
      const x = renderer.seatExtra(s.seat, state);
      if (x) row.append(x);
    }
    if (!s.name && !state.you) {
      row.append(el("button", { class: "btn small", type: "button", "data-join": s.seat, onclick: once(() => join(s.seat)) }, "Sit here"));
    }
    if (state.you === s.seat && canLeave) {
      row.append(el("button", { class: "btn small", type: "button", id: "leave-btn",
        onclick: once(() => send({ type: "leave" })) }, "Leave"));
    }
    const button = state.you ? computerButton(s) : null;
    if (button) {
      row.append(button);
      if (!button.dataset.removeBot) offersComputer = true;
    }
    list.append(row);
  }
  levelPicker().hidden = !offersComputer;
  const free = freeSeat();
  els.joinbox.hidden = !!state.you || !free;
  // Before the game starts, a visitor without a seat is here to take one:
  // on a narrow screen the seats come above the board (site.css).
  els.grid.classList.toggle("seating", !state.you && free && state.phase === "waiting");
  const reclaim = $("#reclaim");
  reclaim.hidden = !(replaced && localStorage.getItem(TOKEN_KEY) && !state.you);
  els.seatLink.hidden = !state.you;
  if (!state.you) seatDialog.close();
}

/** A seat's presence beside its name: "away 12 s" (counted here from the
 * server's `away_since`), "Ann left" on a seat given up, or nothing. */
function presence(s) {
  if (s.left && !s.name) return el("span", { class: "presence left" }, `${s.left} left`);
  if (s.kind === "human" && !s.connected && s.away_since) {
    const e = el("span", { class: "presence away", "data-since": s.away_since });
    e.textContent = awayText(s.away_since);
    return e;
  }
  return null;
}

function awayText(since) {
  const secs = Math.max(0, Math.floor(serverNow() - since));
  if (secs < 60) return `away ${secs} s`;
  if (secs < 3600) return `away ${Math.floor(secs / 60)} min`;
  return `away ${Math.floor(secs / 3600)} h`;
}

// The away times count on their own, between states, and so does the wait
// for someone away between deals (readyLine) or mid-deal (the handover).
setInterval(() => {
  for (const e of els.seats.querySelectorAll(".presence.away")) e.textContent = awayText(Number(e.dataset.since));
  for (const e of els.banner.querySelectorAll(".countdown")) e.textContent = untilText(Number(e.dataset.until));
}, 1000);

/** "3 watching: Zoe, Max" under the seats. */
function renderWatchers() {
  const { count, names } = state.view.spectators;
  const others = state.you ? count : Math.max(0, count - 1);
  let text = "";
  if (count) {
    text = `${count} watching`;
    if (names.length) text += `: ${names.join(", ")}${names.length < count ? ` and ${count - names.length} more` : ""}`;
    if (!state.you) text += others ? " (you among them)" : " (you)";
  }
  els.watchers.textContent = text;
  els.watchers.hidden = !text;
  // A spectator with no name shown, where no seat is free, may give the name
  // the players see (where one is free, the name field is to take it).
  const free = freeSeat();
  $("#watchbox").hidden = !!state.you || free || watchSent || replaced || !!localStorage.getItem(TOKEN_KEY);
}

// For a seated player: "Add computer player" on a free seat, "Remove" on a
// computer's seat between deals, "Hand to a computer" on the seat of someone
// who has been away too long in the middle of a deal (the server says so).
function computerButton(s) {
  const label = seatLabel(s.seat);
  const btn = (attrs, text) => el("button", { class: "btn small", type: "button", ...attrs }, text);
  if (!s.name) {
    return btn({ "data-add-bot": s.seat, "aria-label": `Add a computer player at ${label}`,
      onclick: addBot(s.seat) }, "Add computer player");
  }
  if (s.kind === "computer" && state.phase !== "playing") {
    return btn({ "data-remove-bot": s.seat, "aria-label": `Remove the computer player at ${label}`,
      onclick: once(() => send({ type: "remove_bot", seat: s.seat })) }, "Remove");
  }
  if (s.handover && state.phase === "playing" && s.seat !== state.you) {
    return btn({ "data-hand-over": s.seat, "aria-label": `Hand ${s.name}'s seat to a computer player`,
      onclick: addBot(s.seat) }, "Hand to a computer");
  }
  return null;
}

/** A click handler that seats a computer player of the chosen level at `seat`
 * (a free seat, or one handed over), once. */
function addBot(seat) { return once(() => send({ type: "add_bot", seat, level: chosenLevel() })); }

// One level choice for every computer button, kept across redraws so that an
// open list is not closed by the next state.
function levelPicker() {
  if (levelBox) return levelBox;
  const pick = el("select", { id: "bot-level" });
  const remembered = localStorage.getItem(LEVEL_KEY);
  for (const level of LEVELS) {
    pick.append(el("option", { value: level, selected: level === (remembered || DEFAULT_LEVEL) },
      level.charAt(0).toUpperCase() + level.slice(1)));
  }
  pick.addEventListener("change", () => localStorage.setItem(LEVEL_KEY, pick.value));
  levelBox = el("div", { class: "bot-level-box" }, el("label", { for: "bot-level" }, "Computer level"), pick);
  els.seats.after(levelBox);
  return levelBox;
}
function chosenLevel() { return levelPicker().querySelector("select").value; }

/** Returns false if nothing was sent (no name yet). */
function join(seat) {
  const name = els.name.value.trim();
  if (!name) { toast("Type your name first.", "error"); els.name.focus(); return false; }
  localStorage.setItem(NAME_KEY, name);
  send(seat ? { type: "join", seat, name } : { type: "join", name });
  nameOnTrial = { name, quiet: false };
  return true;
}

/** A button's click handler (Ready, and the seats' buttons): the button is
 * disabled on its first click (the state that answers draws it anew), so
 * that a double click does not send twice and earn a refusal ("you already
 * sit at red") for the second; `act` returning false (nothing sent) leaves
 * it enabled. */
function once(act) {
  return (e) => {
    const button = e.currentTarget;
    button.disabled = true;
    if (act() === false) button.disabled = false;
  };
}

function renderLog() {
  const log = els.log;
  log.replaceChildren();
  const holders = new Map(state.view.seats.filter((s) => s.name).map((s) => [s.seat, s]));
  state.view.log.forEach((m, i) => {
    const text = m.text || `${m.seat}: ${m.move ?? "(secret)"}`;
    // Who moved, by name: the sentences name seats (a colour, a point of the compass, a Jack).
    // `by` is who made the move then: shown whole when someone else holds the seat now
    // (the computer that stood in, a person since gone), else the holder's bare name.
    const now = holders.get(m.seat);
    const who = now && (m.by == null || m.by === now.name) ? bareName(now) : m.by;
    log.append(el("li", {}, el("span", { class: "n" }, `${i + 1}.`),
      ...(who ? [el("span", { class: "who" }, who), " "] : []), sentence(text)));
  });
  log.scrollTop = log.scrollHeight;
  log.classList.toggle("scrolled", log.scrollTop > 0);
}

function renderScores() {
  const v = state.view;
  const sides = v.sides.map((s) => s.side);
  const table = el("table", { "data-sides": sides.length });
  // The column of Review buttons only once a deal has ended: until then its
  // room goes to the players' names (four of them in a side panel 300 px wide).
  const review = v.history.length ? (cell) => [cell] : () => [];
  table.append(el("thead", {}, el("tr", {}, el("th", {}, Noun()), ...sides.map((s) => el("th", {}, sideName(s))),
    ...review(el("th", { class: "review-cell" }, el("span", { class: "sr-only" }, "Review"))))));
  const body = el("tbody");
  for (const h of v.history) {
    body.append(el("tr", {}, el("td", {}, String(h.deal)),
      ...sides.map((s) => {
        const sc = h.outcome.scores.find((x) => x.side === s);
        const td = el("td", { title: sc ? sc.lines.map((l) => `${l.label}: ${signed(l.points)}`).join("\n") : "" }, sc ? points(sc.points) : "");
        return td;
      }),
      el("td", { class: "review-cell" }, el("button", { class: "btn small", type: "button", "data-review": h.deal,
        "aria-label": `Review ${noun()} ${h.deal}`, title: `Review ${noun()} ${h.deal}`,
        onclick: () => reviewDeal(h.deal) }, ...reviewFace()))));
  }
  table.append(body);
  table.append(el("tfoot", {}, el("tr", {}, el("td", {}, "Total"), ...sides.map((s) => el("td", { "data-total": s }, points(v.totals[s] ?? 0))),
    ...review(el("td", { class: "review-cell" })))));
  els.scores.replaceChildren(table);
  const more = renderer.matchNote ? renderer.matchNote(state) : "";
  if (more) els.scores.append(el("p", { class: "sub" }, more));
  else if (v.deals > 1) {
    const over = ["deal_over", "match_over"].includes(state.phase) ? " is over" : "";
    els.scores.append(el("p", { class: "sub", id: "deal-of" }, `${Noun()} ${v.deal} of ${v.deals}${over}`));
  }
  if (v.history.length) {
    els.scores.append(el("p", { class: "sub" }, el("a", { href: `/api/rooms/${encodeURIComponent(ROOM)}/record`,
      download: `${GAME}-record.txt`, id: "room-record" }, `Download the record of the finished ${noun()}s`)));
  }
  renderEarlier(sides);
}

/** A Review button's face in the score tables: the word, or, where four
 * players' names share a narrow table (Suitors' Big board beside a laptop's
 * board), only a ▶, so that the names read whole (site.css); its
 * aria-label and title say it in words. */
function reviewFace() {
  return [el("span", { class: "review-icon", "aria-hidden": "true" }, "▶\uFE0E"), el("span", { class: "review-word" }, "Review")];
}

/** The room's matches finished before this one (a rematch followed), newest
 * first: their totals, the winners' in bold, and a link to each match's page.
 * A match of one deal is called a game. */
function renderEarlier(sides) {
  const earlier = state.view.earlier || [];
  if (!earlier.length) return;
  const what = state.view.deals === 1 ? "game" : "match";
  // The sides by their seats only: who sits there now may not have played then.
  const nobody = { ...state, you: null, view: { ...state.view, seats: state.view.seats.map((x) => ({ ...x, name: null })) } };
  const table = el("table", { class: "earlier", "aria-labelledby": "earlier-h", "data-sides": sides.length });
  table.append(el("thead", {}, el("tr", {}, el("th", {}, sentence(what)), ...sides.map((s) => el("th", {}, sideName(s, nobody))),
    el("th", { class: "review-cell" }, el("span", { class: "sr-only" }, "Review")))));
  const body = el("tbody");
  for (const m of [...earlier].reverse()) {
    body.append(el("tr", { "data-match": m.match_id }, el("td", {}, String(m.number)),
      ...sides.map((s) => el("td", {}, m.winners.includes(s) ? el("strong", {}, points(m.totals[s] ?? 0))
        : points(m.totals[s] ?? 0))),
      el("td", { class: "review-cell" }, el("a", { class: "btn small", href: `/m/${encodeURIComponent(m.match_id)}`,
        target: "_blank", rel: "noopener", "aria-label": `Review ${what} ${m.number} (opens a new tab)`,
        title: `Review ${what} ${m.number} (opens a new tab)` }, ...reviewFace()))));
  }
  table.append(body);
  els.scores.append(el("h3", { class: "earlier-h", id: "earlier-h" }, `Earlier ${what === "game" ? "games" : "matches"} here`), table);
}

// ---------------------------------------------------------------- page wiring
els.name.value = localStorage.getItem(NAME_KEY) || "";
$("#watch-name").value = els.name.value;
$("#watchbox").addEventListener("submit", watchAs);
els.log.addEventListener("scroll", () => els.log.classList.toggle("scrolled", els.log.scrollTop > 0), { passive: true });
$("#join-any").addEventListener("click", () => {
  const asked = sitAt && state && seatInfo(sitAt) && !seatInfo(sitAt).name;
  join(asked ? sitAt : null);
});
els.name.addEventListener("keydown", (e) => { if (e.key === "Enter") $("#join-any").click(); });
$("#reclaim").addEventListener("click", () => {
  replaced = false;
  const token = localStorage.getItem(TOKEN_KEY);
  if (token) send({ type: "resume", token });
});
els.copy.addEventListener("click", async () => {
  const url = location.href.split("#")[0];
  try {
    if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(url);
    else {
      const tmp = el("textarea", { readonly: true, class: "copy-buffer" });
      tmp.value = url; document.body.append(tmp); tmp.select(); document.execCommand("copy"); tmp.remove();
    }
    els.copy.textContent = "Link copied!";
  } catch {
    els.copy.textContent = "Copy failed: copy the address bar";
  }
  setTimeout(() => { els.copy.textContent = "Copy link"; }, 2000);
});

// ---------------------------------------------------------------- around the board
const alerts = turnAlerts({ title: $("h1").textContent.trim(), sound: $("#sound-btn"), notify: $("#notify-btn") });
const chat = chatPanel({ box: $("#chat"), send, who: (seat, name) => `${name || "?"} (${seatLabel(seat)})` });
const seatDialog = seatLinkDialog({
  dialog: $("#seat-link"), room: ROOM,
  token: () => (state && state.you ? localStorage.getItem(TOKEN_KEY) : null),
  renew: () => send({ type: "new_token" }),
});
els.seatLink.addEventListener("click", () => seatDialog.open());

import(`/static/js/games/${BOARD}.js`).then((mod) => {
  renderer = mod;
  chat.relabel();  // messages that came before the board knew its seats' names
  if (state) render();
}).catch((e) => {
  toast(`Could not load the board ${BOARD}: ${e}`, "error");
});
connect();
