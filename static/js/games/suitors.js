// Board for Suitors: the 9×5 layout (11×9 for the Big board) with the Queen
// of Hearts face up in the centre, the Jacks face up (each labelled with its
// player; unused Jacks dimmed) and every other card face down (??).
//
// It knows no rules: it draws the view (docs/notation/suitors.md), lights up
// exactly the moves it is sent (state.moves, docs/protocol.md) and reports
// clicks as moves, through the shared grid play (grid.js). A reveal lights
// its face-down card; a jump lights its Jumper. Clicking a Jumper lights its
// landing squares and clicking one plays the jump; Escape or a click
// elsewhere cancels. The player's connected region (view.connected) is
// shaded, the cards in view.locked carry a padlock, and the last move
// (view.last) is animated: a reveal flips, a jump slides the Jumper and the
// jumped cards.

import { faceUp, faceDown, pretty, spoken, slide } from "../cards.js";
import { bareName, cancelHint, clickWord, el, playerSide, reduceMotion } from "../dom.js";
import { colRow, gridPlay, lockBadge, sortMoves } from "../grid.js";
import { sentence } from "../ui.js";

/** The squares a move is clicked on: a reveal its card; a jump its Jumper,
 * then the square it lands on. */
function clicks(m) {
  if (m.kind === "reveal") return [m.at];
  if (m.kind === "jump") return [m.from, m.to];
  return null;
}

// The chosen Jumper (choice.selected), the moves by how they are clicked
// (choice.moves) and what lights up.
const choice = gridPlay({
  cell: "su-cell", act: "su-act", clicks, choosing: "su-choosing",
  roles: {
    single: ["playable", "su-reveal"], first: ["su-jumper"], firstIdle: ["playable"],
    selected: ["su-selected"], second: ["su-land", "playable"],
  },
  label: cellAction,
  onChoice: showChoice,
});

// What else this page keeps between two state frames.
const ui = {
  status: null,     // the status line (last move, prompt or result)
  statusText: "",
};

// ---------------------------------------------------------------- small helpers

function seatInfo(state, seat) { return state.view.seats.find((s) => s.seat === seat) || null; }

/** "You", the player's name, or the Jack itself. */
function playerName(state, seat) {
  if (state.you === seat) return "You";
  const s = seatInfo(state, seat);
  return s && s.name ? s.name : pretty(seat);
}

/** The tag under a Jack: as playerName, but a computer player's name without
 * its level ("Ada" for "Ada (strong)"), so that it fits under a card. */
function tagName(state, seat) {
  const s = seatInfo(state, seat);
  return state.you !== seat && s && s.name ? bareName(s) : playerName(state, seat);
}

// ---------------------------------------------------------------- room hooks
/** "J♠ a1": the Jack and the square it stands on now (room.js puts it in
 * brackets after the player's name: "Ann (J♠ a1) to move"). */
export function seatLabel(seat, state) {
  const b = state && state.view && state.view.board;
  const sq = b && b.jacks ? b.jacks[seat] : null;
  return sq ? `${pretty(seat)} ${sq}` : pretty(seat);
}

/** A side is one seat: "Ann (J♠)", "You (J♠)" (dom.js, playerSide). */
export function sideLabel(side, state) { return playerSide(state, side, pretty(side)); }

export function passLabel() { return "Pass (no legal move)"; }

export function hint(state) {
  if (!state.legal_moves.length || !state.you) return "";
  const m = sortMoves(state.moves, clicks);
  if (m.pass) return "You cannot reveal or jump: you must pass.";
  const b = state.view.board;
  const what = !m.pairs.size ? "Turn up a lit face-down card."
    : !m.single.size ? `${clickWord(true)} a lit Jumper, then where it lands.`
      : `Turn up a lit card, or ${clickWord()} a lit Jumper and then where it lands.`;
  // The goal, once, in the first round.
  const goal = b.turns < b.seats.length ? ` Your ${pretty(state.you)} wins by ending a jump next to the Queen.` : "";
  return what + goal;
}

export function matchNote(state) {
  const b = state.view.board;
  const turns = state.phase === "playing" || state.phase === "waiting"
    ? `Turn ${b.turns} · a draw after ${b.max_turns.toLocaleString("en")} turns or when everyone passes in a row.`
    : `The game lasted ${b.turns} turn${b.turns === 1 ? "" : "s"}.`;
  return `${turns} Suitors is a design by Jeff Wofford (2012).`;
}

// ---------------------------------------------------------------- drawing
function regionOf(state) {
  const b = state.view.board;
  const seat = b.seats.includes(state.you) ? state.you : b.turn;
  return new Set(seat && b.connected[seat] ? b.connected[seat] : []);
}

function jackAt(b) {
  const out = {};
  for (const [seat, sq] of Object.entries(b.jacks)) out[sq] = { seat, used: true };
  for (const [seat, sq] of Object.entries(b.unused || {})) out[sq] = { seat, used: false };
  return out;
}

/** A face-down card whose face the view gives (lower case: "9h"), as in the
 * review of a finished game. */
function knownDown(tok) { return tok !== "??" && tok !== tok.toUpperCase(); }

function cellLabel(state, sq, tok, extra) {
  const what = tok === "??" ? "a face-down card" : knownDown(tok) ? `a face-down ${spoken(tok)}` : spoken(tok);
  const parts = [`${sq}: ${what}`];
  const b = state.view.board;
  const j = extra.jack;
  if (j && j.used) parts.push(j.seat === state.you ? "your Jack" : `${playerName(state, j.seat)}'s Jack`);
  if (j && !j.used) parts.push("not in play");
  if (sq === b.queen) parts.push("the Queen, the goal");
  if (extra.mine) parts.push(state.you ? "in your region" : "in the region of the player to move");
  if (extra.locked) parts.push("moved since your last turn: it cannot be your Jumper");
  return parts.join(", ");
}

function drawCell(state, tok, sq, jacks, region, locked) {
  const b = state.view.board;
  const cell = el("div", "cell su-cell");
  cell.dataset.square = sq;
  cell.dataset.card = tok;
  cell.setAttribute("role", "gridcell");
  cell.append(tok === "??" ? faceDown(null) : knownDown(tok) ? faceDown(tok) : faceUp(tok));
  const jack = jacks[sq];
  if (jack) {
    cell.dataset.jack = jack.seat;
    const red = /[HD]/.test(jack.seat[1]);
    if (jack.used) {
      const tag = el("span", `su-tag${red ? " su-red" : ""}${jack.seat === state.you ? " su-you" : ""}`,
        tagName(state, jack.seat));
      tag.title = `${seatLabel(jack.seat, state)}: ${playerName(state, jack.seat)}`;
      // At the layout's edge the tag grows inward, not past the page's edge.
      const [col] = colRow(sq);
      if (col === 0) tag.classList.add("su-at-start");
      else if (col === b.width - 1) tag.classList.add("su-at-end");
      cell.append(tag);
    } else {
      cell.classList.add("su-unused");
      const tag = el("span", "su-tag su-off");
      tag.append(el("span", "su-long", "not in play"), el("span", "su-short", "unused"));
      cell.append(tag);
    }
  }
  if (sq === b.queen) cell.classList.add("su-queen");
  if (b.winner && b.jacks[b.winner] === sq) cell.classList.add("su-winner");
  const mine = region.has(sq);
  if (mine) cell.classList.add("su-mine");
  if (locked.has(sq)) {
    cell.classList.add("su-locked");
    cell.dataset.locked = "true";
    cell.append(lockBadge("su-lock",
      "moved in another player's turn since your last turn: it cannot be your Jumper now"));
  }
  cell.dataset.label = cellLabel(state, sq, tok, { jack, mine, locked: locked.has(sq) });
  cell.setAttribute("aria-label", cell.dataset.label);
  return cell;
}

/** The marks of the last move: the card turned up, or where the Jumper
 * landed and the cards it shifted. */
function lastMarks(b) {
  const last = b.last;
  if (!last) return [];
  if (last.kind === "reveal") return [[last.square, "last-to", "su-revealed"]];
  if (last.kind === "jump") return [[last.to, "last-to"], ...last.shifted.map((sq) => [sq, "su-shifted"])];
  return [];
}

function statusLine(state) {
  const b = state.view.board;
  const line = el("p", "su-status");
  line.setAttribute("aria-live", "polite");
  const outcome = state.view.outcome;
  let text;
  if (outcome && b.winner) {
    line.classList.add("su-final");
    const who = playerName(state, b.winner);
    // A computer player standing in for someone away wins for them, as the
    // match's record and review say: "Pat's J♣ …, played by Alan (medium): Pat wins."
    const person = seatInfo(state, b.winner)?.stand_in_for;
    text = who === "You"
      ? `Your ${pretty(b.winner)} reached the Queen of Hearts: you win!`
      : person
        ? `${person}'s ${pretty(b.winner)} reached the Queen of Hearts, played by ${who}: ${person} wins.`
      // "Alan's J♣ …: Alan (easy) wins", not "Alan (easy)'s J♣".
        : `${who === pretty(b.winner) ? "" : `${tagName(state, b.winner)}'s `}${pretty(b.winner)} reached the Queen of Hearts: ${who} wins.`;
    text = sentence(text);
  } else if (outcome) {
    line.classList.add("su-final");
    text = `${sentence(outcome.reason)}.`;
  } else if (state.view.log.length) {
    text = `Last move: ${sentence(state.view.log[state.view.log.length - 1].text || "")}`;
  } else {
    line.classList.add("su-muted");
    text = b.seats.includes(state.you)
      ? `The Queen of Hearts waits at ${b.queen}. Turn up cards next to your Jack and jump toward her.`
      : `The Queen of Hearts waits at ${b.queen}. Each Jack turns up cards and jumps toward her.`;
  }
  line.textContent = text;
  ui.statusText = text;
  line.dataset.kind = line.classList.contains("su-final") ? "final" : "info";
  return line;
}

function legend(state) {
  const box = el("div", "su-legend");
  box.setAttribute("aria-hidden", "true");
  const item = (cls, text) => {
    const i = el("span", "su-key");
    i.append(el("span", `su-swatch ${cls}`), el("span", "", text));
    box.append(i);
  };
  const playing = state.you && state.view.board.seats.includes(state.you);
  item("su-sw-region", playing ? "your region" : "region of the player to move");
  if (state.legal_moves.length) item("su-sw-act", "you may reveal or jump from");
  item("su-sw-land", "lands here");
  item("su-sw-lock", playing ? "moved since your last turn: not your Jumper"
    : "moved since the mover's last turn: not their Jumper");
  return box;
}

/** The set-aside cards, when the view shows them (a finished game). */
function aside(b) {
  if (!b.aside_cards || !b.aside_cards.length) return [];  // the Big board sets none aside
  return [el("p", "su-aside", `Set aside, unseen in play: ${b.aside_cards.map(pretty).join(" ")}`)];
}

// ---------------------------------------------------------------- choosing
function setStatus(text, prompt) {
  if (!ui.status) return;
  ui.status.textContent = text;
  ui.status.classList.toggle("su-prompt", !!prompt);
}

/** What a click on `cell` does now (its roles, see gridPlay), for screen
 * readers: turn it up, jump with it, land there, cancel. */
function cellAction(cell, r) {
  const sq = r.sq;
  const tok = cell.dataset.card;
  const what = tok === "??" ? "the face-down card" : `the ${pretty(tok)}`;
  if (r.second) return `jump from ${r.sel} to ${sq}, landing where ${what} is`;
  if (r.selected) return `cancel the jump of ${what} at ${sq}`;
  if (r.first) return `jump with ${what} at ${sq}`;
  if (r.single) return `turn up the face-down card at ${sq}`;
  return "";
}

/** The status line: the chosen Jumper's prompt, or the line of the state. */
function showChoice(sel, grid) {
  const cell = sel && grid.querySelector(`.su-cell[data-square="${sel}"]`);
  if (cell) {
    setStatus(`Jumper ${pretty(cell.dataset.card)} at ${sel}: ${clickWord()} a lit square to land on. ${cancelHint()}`, true);
  } else {
    setStatus(ui.statusText, false);
  }
}

// ---------------------------------------------------------------- animation
/** The card turns over: its back shows, turns edge-on, and its face comes round. */
function flip(cell) {
  const up = cell.querySelector(".card");
  if (!up) return;
  const back = faceDown(null);
  up.replaceWith(back);
  back.animate([{ transform: "rotateY(0deg)" }, { transform: "rotateY(90deg)" }],
    { duration: 170, easing: "ease-in" }).onfinish = () => {
    if (!back.isConnected) return;
    back.replaceWith(up);
    up.animate([{ transform: "rotateY(90deg)" }, { transform: "rotateY(0deg)" }], { duration: 170, easing: "ease-out" });
  };
}

/** The turn just played: a revealed card flips; a jump slides the Jumper and
 * the cards it jumped. */
function animateTurn(b, cells, oldRects) {
  if (!b.last || reduceMotion()) return;
  if (b.last.kind === "reveal") {
    flip(cells[b.last.square]);
  } else if (b.last.kind === "jump") {
    // The Jumper lands on the last square; each jumped card shifts one
    // square back, from jumped[i] to shifted[i].
    const paths = [[b.last.from, b.last.to], ...b.last.jumped.map((sq, i) => [sq, b.last.shifted[i]])];
    for (const [from, to] of paths) {
      const rect = oldRects[from];
      const card = cells[to] && cells[to].querySelector(".card");
      if (rect && card) slide(card, { getBoundingClientRect: () => rect });
    }
  }
}

// ---------------------------------------------------------------- render
export function render(container, state, ctx) {
  const b = state.view.board;
  const jacks = jackAt(b);
  const region = regionOf(state);
  const locked = new Set(b.locked);
  choice.render(container, state, ctx, {
    width: b.width, tokens: b.cells, className: "su-board", gridLabel: `the ${b.width}×${b.height} layout`,
    draw: (tok, sq) => drawCell(state, tok, sq, jacks, region, locked),
    marks: lastMarks(b),
    mount: (frame, grid) => {
      grid.dataset.turns = String(b.turns);
      grid.dataset.turn = b.turn || "";
      const status = statusLine(state);
      const wrap = el("div", `su-wrap su-w${b.width}`);
      wrap.append(status, frame);
      container.replaceChildren(wrap);
      ui.status = status;
    },
    after: ({ cells, oldRects, fresh }) => {
      if (ctx.extra) ctx.extra.replaceChildren(legend(state), ...aside(b));
      if (fresh) animateTurn(b, cells, oldRects);
    },
  });
}
