// Board for Romeo and Juliet: the 7×7 layout with the two Romeos (chess-king
// tokens), the two Juliets (each marked as the goal of the Romeo of its
// colour), the three Jokers face down and the lock of the most recent swap.
//
// It knows no rules: it draws the view (docs/notation/romeo-and-juliet.md),
// lights up exactly what legal_moves allows and reports clicks as moves. A
// plain square in legal_moves is a Romeo move: its square lights up. A move
// "swap a b" makes its Joker clickable; clicking the Joker lights up its
// partners, and clicking one plays the swap (Escape or a click elsewhere
// cancels). The last move's path (view.last.path) is drawn over the layout,
// leaving one edge and coming back at the opposite one where it wraps.

import { faceUp, faceDown, pretty, spoken, slide } from "../cards.js";
import { twoStep } from "../choose.js";
import { el, reduceMotion, svg } from "../dom.js";
import { colRow, gridBoard } from "../grid.js";

const NAMES = { red: "Red", black: "Black" };

/** A match is one game: room.js says "Game" where other games say "Deal". */
export const dealNoun = "game";

// The Joker chosen for a swap (choice.selected) and whether a move was just
// sent (so a double click does not send two moves).
const choice = twoStep({ cell: "rj-cell", act: "rj-act", redraw: applyChoice });

// What else this page keeps between two state frames.
const ui = {
  moves: null,        // the legal moves, sorted by kind (see sortMoves)
  prompt: null,       // the status line that explains the current choice
  view: null,         // the board view drawn last
  observer: null,     // redraws the path when the board changes size
  animated: "",       // the turn whose move was last animated
};

// ---------------------------------------------------------------- small helpers
function isJoker(tok) { return tok[0] === "7" && tok === tok.toLowerCase(); }

/** The legal moves by kind: Romeo destinations, swaps by Joker square
 * (partner square → move text) and whether pass is among them. */
function sortMoves(legal, jokers) {
  const dest = new Set();
  const swaps = new Map();
  let pass = false;
  for (const m of legal) {
    if (m === "pass") { pass = true; continue; }
    const parts = m.split(" ");
    if (parts[0] === "swap" && parts.length === 3) {
      const [a, b] = parts.slice(1);
      const j = jokers.includes(a) ? a : b;
      const p = j === a ? b : a;
      if (!swaps.has(j)) swaps.set(j, new Map());
      swaps.get(j).set(p, m);
    } else {
      dest.add(m);
    }
  }
  return { dest, swaps, pass };
}

/** A chess-king token drawn in SVG, in the colour of `seat`. */
export function romeoToken(seat) {
  const box = el("span", `rj-romeo rj-${seat}`);
  box.setAttribute("aria-hidden", "true");
  const s = svg("svg", { viewBox: "0 0 40 44", class: "rj-king", focusable: "false" });
  s.append(
    svg("path", { class: "rj-piece", d: "M18 1.5h4v3.8h3.6v3.8H22v4.4h-4V9.1h-3.6V5.3H18Z" }),
    svg("path", {
      class: "rj-piece",
      d: "M20 14.5c2.6 0 4.2 2.1 4.2 4.4 0 1.6-.8 3-1.7 4.2 2.6-3.4 6.4-5.4 9.7-4.6 4.2 1 5.4 5.6 3.4 9.6"
        + "-1.5 3-3.8 5-5.4 7.3H9.8c-1.6-2.3-3.9-4.3-5.4-7.3-2-4-.8-8.6 3.4-9.6 3.3-.8 7.1 1.2 9.7 4.6"
        + "-.9-1.2-1.7-2.6-1.7-4.2 0-2.3 1.6-4.4 4.2-4.4Z",
    }),
    svg("rect", { class: "rj-piece", x: 7.5, y: 36.5, width: 25, height: 5, rx: 1.6 }),
  );
  box.append(s);
  return box;
}

function padlock() {
  const s = svg("svg", { viewBox: "0 0 16 18", class: "rj-lock", focusable: "false", "aria-hidden": "true" });
  s.append(
    svg("path", { class: "rj-shackle", d: "M4.5 8V5.5a3.5 3.5 0 0 1 7 0V8" }),
    svg("rect", { class: "rj-lock-body", x: 2, y: 8, width: 12, height: 9, rx: 1.8 }),
  );
  return s;
}

// ---------------------------------------------------------------- room hooks
export function seatLabel(seat) { return NAMES[seat] || seat; }

export function seatExtra(seat) {
  const t = romeoToken(seat);
  t.classList.add("rj-seat-token");
  t.title = `${seatLabel(seat)}'s Romeo`;
  return t;
}

export function passLabel() { return "Pass (no legal move)"; }

export function hint(state) {
  const b = state.view.board;
  if (!state.legal_moves.length || !state.you) return "";
  const m = sortMoves(state.legal_moves, b.jokers);
  if (m.pass) return "Your Romeo cannot move and no swap is possible: press Pass.";
  const goal = b.juliets[state.you];
  const goalText = `Your Juliet is the ${pretty(b.cells[indexOf(goal, b.width)])} at ${goal}.`;
  if (b.opened && !b.opened[state.you]) {
    return `First move: step your Romeo off your Queen onto a lit square. ${goalText}`;
  }
  const how = m.swaps.size
    ? "Click a lit square to move your Romeo, or a Joker (★) to swap it with a card in its row or column."
    : "Click a lit square to move your Romeo.";
  return `${how} ${goalText}`;
}

export function matchNote(state) {
  const b = state.view.board;
  return `Turn limit: ${b.turn_limit} turns (a draw); a position seen three times is a draw too.`;
}

function indexOf(sq, width) {
  const [c, r] = colRow(sq);
  return r * width + c;
}

// ---------------------------------------------------------------- drawing
function cellLabel(b, sq, tok) {
  const parts = [`${sq}: ${isJoker(tok) ? "a Joker (face down)" : spoken(tok)}`];
  for (const seat of ["red", "black"]) {
    if (b.romeos[seat] === sq) parts.push(`${seatLabel(seat)}'s Romeo is here`);
    if (b.juliets[seat] === sq) parts.push(`Juliet, ${seatLabel(seat)}'s goal`);
  }
  if (b.locked.includes(sq)) parts.push("locked by the last swap");
  return parts.join(", ");
}

/** The status lines above the layout, drawn into `box` (kept from one
 * render to the next, so that screen readers announce each new move). */
function fillStatus(box, state) {
  const b = state.view.board;
  if (!box.firstChild) {
    const line = el("p", "rj-explain");
    line.setAttribute("aria-live", "polite");
    const lines = el("div", "rj-lines");
    lines.append(line, el("p", "rj-meta"));
    // The prompt while a Joker is chosen covers the status lines; an
    // invisible copy of its longest text keeps room for it, so that it
    // never covers the layout and the layout never moves.
    const prompt = el("p", "rj-prompt");
    prompt.setAttribute("aria-live", "polite");
    prompt.hidden = true;
    const room = el("p", "rj-prompt-room", promptText("a5", true));
    room.setAttribute("aria-hidden", "true");
    box.append(lines, prompt, room);
  }
  const [line, meta] = box.firstChild.children;
  const prompt = box.children[1];
  let text;
  const outcome = state.view.outcome;
  line.className = "rj-explain";
  if (b.over && outcome) {
    // A win is already told by the move ("… and reaches Juliet"); a draw
    // needs its reason.
    line.classList.add("rj-final");
    const end = outcome.winners.length
      ? `${outcome.winners.map(seatLabel).join(" and ")} wins.`
      : `${outcome.reason}.`;
    text = b.explain ? `${b.explain}. ${end}` : end;
  } else if (b.explain) {
    text = b.explain;
  } else {
    text = "No move yet: Red moves first.";
    line.classList.add("rj-muted");
  }
  const parts = [];
  if (b.last) {
    line.dataset.seat = b.last.seat;
    const mini = romeoToken(b.last.seat);
    mini.classList.add("rj-mini");
    parts.push(mini);
  } else {
    delete line.dataset.seat;
  }
  parts.push(el("span", "rj-explain-text", text));
  if (line.textContent !== text) line.replaceChildren(...parts);
  meta.replaceChildren(el("span", "rj-turns", `Turns played: ${b.turns} of ${b.turn_limit}`));
  if (b.repetitions >= 2 && !b.over) {
    meta.append(el("span", "rj-reps", `This position has now occurred ${b.repetitions} times: a third time is a draw.`));
  }
  return prompt;
}

function drawCell(b, tok, sq) {
  const cell = el("div", "cell rj-cell");
  cell.dataset.square = sq;
  cell.dataset.card = tok;
  cell.setAttribute("role", "gridcell");
  let card;
  if (isJoker(tok)) {
    card = faceDown(null);
    card.classList.add("rj-joker");
    card.append(el("span", "rj-star", "★"));
    card.setAttribute("aria-label", "a Joker, face down");
  } else {
    card = faceUp(tok);
  }
  cell.append(card);
  for (const seat of ["red", "black"]) {
    if (b.juliets[seat] === sq) {
      cell.dataset.juliet = seat;
      cell.classList.add("rj-juliet", `rj-juliet-${seat}`);
      const flag = el("span", `rj-goal rj-${seat}`);
      flag.append(el("span", "rj-long", `${seatLabel(seat)}'s goal`), el("span", "rj-short", "goal"));
      flag.setAttribute("aria-hidden", "true");
      cell.append(flag);
    }
    if (b.homes[seat] === sq) cell.dataset.home = seat;
  }
  if (b.locked.includes(sq)) {
    cell.dataset.locked = "true";
    cell.classList.add("rj-locked");
    const badge = el("span", "rj-lock-badge");
    badge.title = "locked: in the most recent swap";
    badge.append(padlock());
    cell.append(badge);
  }
  for (const seat of ["red", "black"]) {
    if (b.romeos[seat] === sq) {
      cell.dataset.romeo = seat;
      cell.classList.add("rj-has-romeo");
      cell.append(romeoToken(seat));
    }
  }
  cell.setAttribute("aria-label", cellLabel(b, sq, tok));
  return cell;
}

function markLast(b, cells) {
  const last = b.last;
  if (!last) return;
  if (last.kind === "move") {
    cells[last.from].classList.add("last-from");
    cells[last.to].classList.add("last-to");
    last.path.forEach((sq, i) => {
      const c = cells[sq];
      c.classList.add("rj-path");
      c.dataset.path = c.dataset.path ? `${c.dataset.path} ${i}` : String(i);
    });
  } else if (last.kind === "swap") {
    for (const sq of last.squares) cells[sq].classList.add("rj-swapped");
  }
}

// The path overlay: one SVG over the grid, in the grid's pixels.
function drawOverlay(wrap, grid, cells, b) {
  const old = wrap.querySelector("svg.rj-overlay");
  if (old) old.remove();
  const last = b.last;
  if (!last || (last.kind !== "move" && last.kind !== "swap")) return;
  const box = wrap.getBoundingClientRect();
  const g = grid.getBoundingClientRect();
  if (!box.width || !g.width) return;
  const o = svg("svg", {
    class: `rj-overlay rj-by-${last.seat}`, width: box.width, height: box.height,
    viewBox: `0 0 ${box.width} ${box.height}`, "aria-hidden": "true", focusable: "false",
  });
  const id = `rj-arrow-${last.seat}`;
  const defs = svg("defs");
  const marker = svg("marker", {
    id, viewBox: "0 0 10 10", refX: 6, refY: 5, markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse",
  });
  marker.append(svg("path", { d: "M0 0L10 5L0 10z", class: "rj-arrowhead" }));
  defs.append(marker);
  o.append(defs);
  const centre = (sq) => {
    const r = cells[sq].getBoundingClientRect();
    return [r.left + r.width / 2 - box.left, r.top + r.height / 2 - box.top];
  };
  const out = 10; // how far beyond the layout's edge a wrapping path goes
  const edges = {
    left: g.left - box.left - out, right: g.right - box.left + out,
    top: g.top - box.top - out, bottom: g.bottom - box.top + out,
  };
  const strokes = [];   // each a list of points; a wrap starts a new one
  if (last.kind === "swap") {
    strokes.push(last.squares.map(centre));
  } else {
    let cur = [centre(last.path[0])];
    for (let i = 1; i < last.path.length; i += 1) {
      const [c0, r0] = colRow(last.path[i - 1]);
      const [c1, r1] = colRow(last.path[i]);
      const p = centre(last.path[i - 1]), q = centre(last.path[i]);
      // Only a numeral's path wraps: between two squares of its line that
      // are not neighbours (a King, Jack, Joker or opening step never wraps).
      const wrap = last.wraps && (c0 === c1 || r0 === r1);
      if (wrap && Math.abs(c1 - c0) > 1) {  // wraps over the left or right edge
        const goingRight = c0 > c1;
        cur.push([goingRight ? edges.right : edges.left, p[1]]);
        strokes.push(cur);
        cur = [[goingRight ? edges.left : edges.right, q[1]], q];
      } else if (wrap && Math.abs(r1 - r0) > 1) {  // wraps over the top or bottom edge
        const goingDown = r0 > r1;
        cur.push([p[0], goingDown ? edges.bottom : edges.top]);
        strokes.push(cur);
        cur = [[q[0], goingDown ? edges.top : edges.bottom], q];
      } else {
        cur.push(q);
      }
    }
    strokes.push(cur);
  }
  strokes.forEach((pts, i) => {
    const d = pts.map((p) => p.map((x) => x.toFixed(1)).join(",")).join(" ");
    const lastStroke = i === strokes.length - 1;
    const wrapped = strokes.length > 1;
    o.append(svg("polyline", { points: d, class: "rj-halo" }));
    const line = svg("polyline", { points: d, class: "rj-line" + (wrapped ? " rj-wrapline" : "") });
    if (last.kind === "swap") {
      line.classList.add("rj-swapline");
      line.setAttribute("marker-start", `url(#${id})`);
    }
    if (lastStroke) line.setAttribute("marker-end", `url(#${id})`);
    o.append(line);
  });
  if (last.kind === "move") {
    // A dot on every square stepped through, so a long numeral can be counted.
    last.path.slice(1, -1).forEach((sq) => {
      const [x, y] = centre(sq);
      o.append(svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 4, class: "rj-step" }));
    });
  }
  o.dataset.strokes = String(strokes.length);
  wrap.append(o);
}

// ---------------------------------------------------------------- choosing
function setPrompt(text) {
  if (!ui.prompt) return;
  ui.prompt.textContent = text;
  ui.prompt.hidden = !text;
}

/** Light up what can be clicked now: Romeo destinations and swappable
 * Jokers, or (with a Joker chosen) its partners. */
function applyChoice() {
  const grid = choice.grid;
  if (!grid || !ui.moves) return;
  const { dest, swaps } = ui.moves;
  const sel = choice.selected;
  const sent = choice.sent;
  const partners = sel ? swaps.get(sel) : null;
  grid.classList.toggle("rj-choosing", !!sel);
  for (const cell of grid.querySelectorAll(".rj-cell")) {
    const sq = cell.dataset.square;
    const tok = cell.dataset.card;
    const here = `${isJoker(tok) ? "the Joker" : `the ${pretty(tok)}`} at ${sq}`;
    let label = "";
    const isDest = dest.has(sq) && (!sel || sq === sel) && !sent;
    const isSwappable = swaps.has(sq) && !sent;
    const isPartner = !!partners && partners.has(sq) && !sent;
    cell.classList.toggle("playable", isDest);
    cell.classList.toggle("rj-swappable", isSwappable && sq !== sel);
    cell.classList.toggle("rj-selected", sq === sel);
    cell.classList.toggle("rj-partner", isPartner);
    if (isPartner) label = `swap the Joker at ${sel} with ${here}`;
    else if (sq === sel && isDest) label = `move your Romeo onto the Joker at ${sq}`;
    else if (sq === sel) label = `cancel the swap of the Joker at ${sq}`;
    else if (isSwappable && dest.has(sq) && !sel) label = `the Joker at ${sq}: swap it, or move your Romeo onto it`;
    else if (isSwappable) label = `choose the Joker at ${sq} to swap`;
    else if (isDest) label = `move your Romeo to ${here}`;
    choice.mark(cell, label, cellLabel(ui.view, sq, tok));
  }
  setPrompt(sel ? promptText(sel, dest.has(sel)) : "");
}

/** What to do once the Joker at `sq` is chosen (`dest`: the Romeo may also
 * move onto it). */
function promptText(sq, dest) {
  const also = dest ? ", or click the Joker again to move your Romeo onto it" : "";
  return `Swap the Joker at ${sq} with a lit card in its row or column${also}. Esc or a click elsewhere cancels.`;
}

function onCell(sq) {
  const m = ui.moves;
  const sel = choice.selected;
  if (!m || choice.sent) return;
  if (sel) {
    const partners = m.swaps.get(sel);
    if (partners && partners.has(sq)) { choice.send(partners.get(sq)); return; }
    if (sq === sel) {
      if (m.dest.has(sq)) choice.send(sq);
      else choice.select(null);
      return;
    }
    choice.select(m.swaps.has(sq) ? sq : null);
    return;
  }
  if (m.swaps.has(sq)) choice.select(sq);
  else if (m.dest.has(sq)) choice.send(sq);
}

// ---------------------------------------------------------------- animation
function centreOf(rect) { return [rect.left + rect.width / 2, rect.top + rect.height / 2]; }

/** The Romeo token walks the last move's path (every square stepped through,
 * leaving by one edge and coming back by the other where it wraps). */
function travel(token, b, cells, grid) {
  if (!token || reduceMotion()) return;
  const path = b.last.path;
  const end = centreOf(cells[b.last.to].getBoundingClientRect());
  const g = grid.getBoundingClientRect();
  const frames = [];
  const at = (sq) => {
    const [x, y] = centreOf(cells[sq].getBoundingClientRect());
    return [x - end[0], y - end[1]];
  };
  const push = ([x, y], opacity = 1) => frames.push({ transform: `translate(${x}px, ${y}px)`, opacity });
  push(at(path[0]));
  for (let i = 1; i < path.length; i += 1) {
    const [c0, r0] = colRow(path[i - 1]);
    const [c1, r1] = colRow(path[i]);
    const p = at(path[i - 1]), q = at(path[i]);
    const wrap = b.last.wraps && (c0 === c1 || r0 === r1);
    if (wrap && Math.abs(c1 - c0) > 1) {
      const right = c0 > c1;
      push([(right ? g.right : g.left) - end[0], p[1]], 0);
      push([(right ? g.left : g.right) - end[0], q[1]], 0);
    } else if (wrap && Math.abs(r1 - r0) > 1) {
      const down = r0 > r1;
      push([p[0], (down ? g.bottom : g.top) - end[1]], 0);
      push([q[0], (down ? g.top : g.bottom) - end[1]], 0);
    }
    push(q);
  }
  const duration = Math.min(1400, 160 * (path.length - 1) + 200);
  token.animate(frames, { duration, easing: "ease-in-out" });
}

function animateTurn(state, ctx, cells, grid, oldRects) {
  const b = state.view.board;
  const prevB = ctx.prev && ctx.prev.view && ctx.prev.view.board;
  const key = `${state.room}|${state.view.deal}|${b.turns}`;
  if (!b.last || !prevB || ui.animated === key) return;
  if (ctx.prev.view.deal !== state.view.deal || prevB.turns + 1 !== b.turns) return;
  ui.animated = key;
  if (b.last.kind === "move") {
    travel(cells[b.last.to].querySelector(".rj-romeo"), b, cells, grid);
  } else if (b.last.kind === "swap") {
    const [a, c] = b.last.squares;
    for (const [to, from] of [[a, c], [c, a]]) {
      if (!oldRects[from]) continue;
      const card = cells[to].querySelector(".card");
      slide(card, { getBoundingClientRect: () => oldRects[from] });
    }
  }
}

// ---------------------------------------------------------------- render
export function render(container, state, ctx) {
  const b = state.view.board;
  ui.view = b;
  ui.moves = sortMoves(state.legal_moves, b.jokers);

  const focused = choice.focused(container);
  const oldRects = {};
  container.querySelectorAll(".rj-cell").forEach((c) => { oldRects[c.dataset.square] = c.getBoundingClientRect(); });

  const status = container.querySelector(":scope > .rj-status") || el("div", "rj-status");
  const prompt = fillStatus(status, state);
  const wrap = el("div", "rj-wrap");
  const { frame, grid, cells } = gridBoard({
    width: b.width, tokens: b.cells, className: "rj-board", label: "the layout",
    draw: (tok, sq) => {
      const cell = drawCell(b, tok, sq);
      choice.listen(cell, onCell);
      return cell;
    },
  });
  grid.dataset.turns = String(b.turns);
  grid.dataset.turn = b.turn || "";
  markLast(b, cells);
  wrap.append(frame);
  const oldWrap = container.querySelector(":scope > .rj-wrap");
  if (status.parentNode === container && oldWrap) oldWrap.replaceWith(wrap);
  else container.replaceChildren(status, wrap);
  choice.begin(state, ctx, grid);
  if (choice.selected && !ui.moves.swaps.has(choice.selected)) choice.selected = null;
  ui.prompt = prompt;
  applyChoice();

  drawOverlay(wrap, grid, cells, b);
  if (ui.observer) ui.observer.disconnect();
  if (window.ResizeObserver) {
    const r0 = grid.getBoundingClientRect();
    let size = `${Math.round(r0.width)}x${Math.round(r0.height)}`;
    ui.observer = new ResizeObserver(() => {
      const r = grid.getBoundingClientRect();
      const now = `${Math.round(r.width)}x${Math.round(r.height)}`;
      if (now !== size) { size = now; drawOverlay(wrap, grid, cells, b); }
    });
    ui.observer.observe(grid);
  }
  if (ctx.extra) ctx.extra.replaceChildren();
  animateTurn(state, ctx, cells, grid, oldRects);

  choice.refocus(focused, cells);
}
