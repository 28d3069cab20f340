// Board for Romeo and Juliet: the 7×7 layout with the two Romeos (chess-king
// tokens), the two Juliets (each marked as the goal of the Romeo of its
// colour), the three Jokers face down and the lock of the most recent swap.
//
// It knows no rules: it draws the view (docs/notation/romeo-and-juliet.md),
// lights up exactly the moves it is sent (state.moves, docs/protocol.md) and
// reports clicks as moves, through the shared grid play (grid.js). A Romeo
// move lights up the square it goes to. A swap makes its Joker clickable;
// clicking the Joker lights up its partners, and clicking one plays the swap
// (Escape or a click elsewhere cancels). The last move's path
// (view.last.path) is drawn over the layout, leaving one edge and coming back
// at the opposite one where it wraps.

import { faceUp, faceDown, inFlight, pretty, spoken, slide } from "../cards.js";
import { cancelHint, clickWord, el, playerSide, reduceMotion, svg } from "../dom.js";
import { colRow, gridPlay, lockBadge, sortMoves } from "../grid.js";

const NAMES = { red: "Red", black: "Black" };

/** The squares a move is clicked on: a Romeo move its destination; a swap
 * its Joker, then the card it swaps with. */
function clicks(m) {
  if (m.kind === "move") return [m.to];
  if (m.kind === "swap") return [m.joker, m.joker === m.a ? m.b : m.a];
  return null;
}

// The Joker chosen for a swap (choice.selected), the moves by how they are
// clicked (choice.moves) and what lights up.
const choice = gridPlay({
  cell: "rj-cell", act: "rj-act", clicks, choosing: "rj-choosing",
  roles: { single: ["playable"], first: ["rj-swappable"], selected: ["rj-selected"], second: ["rj-partner"] },
  label: cellAction,
  onChoice: (sel) => setPrompt(sel ? promptText(sel, choice.moves.single.has(sel)) : ""),
});

// What else this page keeps between two state frames.
const ui = {
  prompt: null,       // the status line that explains the current choice
  observer: null,     // redraws the path when the board changes size
};

// ---------------------------------------------------------------- small helpers
function isJoker(tok) { return tok[0] === "7" && tok === tok.toLowerCase(); }

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

// ---------------------------------------------------------------- room hooks
export function seatLabel(seat) { return NAMES[seat] || seat; }

/** A side is one seat, named by its player: "Ann (Red)", "You (Black)". */
export function sideLabel(side, state) { return playerSide(state, side, seatLabel(side)); }

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
  const m = sortMoves(state.moves, clicks);
  if (m.pass) return "Your Romeo cannot move and no swap is possible: you must pass.";
  const goal = b.juliets[state.you];
  const goalText = `Your Juliet is the ${pretty(b.cells[indexOf(goal, b.width)])} at ${goal}.`;
  if (b.opened && !b.opened[state.you]) {
    return `First move: step your Romeo off your Queen onto a lit square. ${goalText}`;
  }
  if (!m.single.size && m.pairs.size) {
    return `Your Romeo cannot move: ${clickWord()} a Joker (★) to swap it with a card in its row or column. ${goalText}`;
  }
  const how = m.pairs.size
    ? `${clickWord(true)} a lit square to move your Romeo, or a Joker (★) to swap it with a card in its row or column.`
    : `${clickWord(true)} a lit square to move your Romeo.`;
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
      // Whose goal, on a phone too (on two short lines there): Black's Romeo
      // starts on Red's Juliet, and a bare "goal" read as Black's own.
      flag.append(el("span", "rj-goal-who", `${seatLabel(seat)}'s`), " ", el("span", "", "goal"));
      flag.setAttribute("aria-hidden", "true");
      cell.append(flag);
    }
    if (b.homes[seat] === sq) cell.dataset.home = seat;
  }
  if (b.locked.includes(sq)) {
    cell.dataset.locked = "true";
    cell.classList.add("rj-locked");
    cell.append(lockBadge("rj-lock-badge", "locked: in the most recent swap", "rj-lock"));
  }
  for (const seat of ["red", "black"]) {
    if (b.romeos[seat] === sq) {
      cell.dataset.romeo = seat;
      cell.classList.add("rj-has-romeo");
      cell.append(romeoToken(seat));
    }
  }
  if (b.last && b.last.kind === "move") {
    // Where the last move's path steps on this square (a wrapping path may
    // step on it twice).
    const steps = b.last.path.flatMap((p, i) => (p === sq ? [String(i)] : []));
    if (steps.length) cell.dataset.path = steps.join(" ");
  }
  cell.dataset.label = cellLabel(b, sq, tok);
  cell.setAttribute("aria-label", cell.dataset.label);
  return cell;
}

/** The marks of the last move: its start, its end and its path; or the two
 * swapped cards. */
function lastMarks(b) {
  const last = b.last;
  if (!last) return [];
  if (last.kind === "move") {
    return [[last.from, "last-from"], [last.to, "last-to"], ...last.path.map((sq) => [sq, "rj-path"])];
  }
  if (last.kind === "swap") return last.squares.map((sq) => [sq, "rj-swapped"]);
  return [];
}

/** The centre of a Romeo `token` relative to `box` (its cell's place plus
 * its own, without the transform of a walk under way). */
function tokenCentre(token, box) {
  const cell = token.offsetParent.getBoundingClientRect();
  return [cell.left + token.offsetLeft + token.offsetWidth / 2 - box.left,
    cell.top + token.offsetTop + token.offsetHeight / 2 - box.top];
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
    // The path ends at the Romeo, which stands on its card's corner.
    const token = cells[last.to].querySelector(".rj-romeo");
    if (token && token.offsetParent) cur[cur.length - 1] = tokenCentre(token, box);
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

/** What a click on `cell` does now (its roles, see gridPlay), for screen
 * readers: move the Romeo there, choose the Joker, swap with it, cancel. */
function cellAction(cell, r) {
  const sq = r.sq;
  const tok = cell.dataset.card;
  const here = `${isJoker(tok) ? "the Joker" : `the ${pretty(tok)}`} at ${sq}`;
  if (r.second) return `swap the Joker at ${r.sel} with ${here}`;
  if (r.selected && r.single) return `move your Romeo onto the Joker at ${sq}`;
  if (r.selected) return `cancel the swap of the Joker at ${sq}`;
  if (r.first && r.single && !r.sel) return `the Joker at ${sq}: swap it, or move your Romeo onto it`;
  if (r.first) return `choose the Joker at ${sq} to swap`;
  if (r.single) return `move your Romeo to ${here}`;
  return "";
}

/** What to do once the Joker at `sq` is chosen (`dest`: the Romeo may also
 * move onto it). */
function promptText(sq, dest) {
  const also = dest ? `, or ${clickWord()} the Joker again to move your Romeo onto it` : "";
  return `Swap the Joker at ${sq} with a lit card in its row or column${also}. ${cancelHint()}`;
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
  inFlight(token, token.animate(frames, { duration, easing: "ease-in-out" }));
}

/** The turn just played: the Romeo walks its path, or the two swapped cards
 * slide into each other's place. */
function animateTurn(b, cells, grid, oldRects) {
  if (!b.last) return;
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
/** Draw the path again whenever the layout changes size. */
function watchSize(wrap, grid, cells, b) {
  if (ui.observer) ui.observer.disconnect();
  if (!window.ResizeObserver) return;
  const r0 = grid.getBoundingClientRect();
  let size = `${Math.round(r0.width)}x${Math.round(r0.height)}`;
  ui.observer = new ResizeObserver(() => {
    const r = grid.getBoundingClientRect();
    const now = `${Math.round(r.width)}x${Math.round(r.height)}`;
    if (now !== size) { size = now; drawOverlay(wrap, grid, cells, b); }
  });
  ui.observer.observe(grid);
}

/** Under the board while two cards are locked: what their padlock means
 * (RULINGS.md, Romeo and Juliet rule 4: a swap may not use either). */
function lockLegend(b) {
  if (!b.locked.length) return [];
  const line = el("p", "rj-legend");
  line.setAttribute("aria-hidden", "true");  // each locked cell's name says it
  line.append(lockBadge("rj-lock-badge", "", "rj-lock"),
    el("span", "", "The two cards of the last swap: no swap may use either of them now."));
  return [line];
}

export function render(container, state, ctx) {
  const b = state.view.board;
  const status = container.querySelector(":scope > .rj-status") || el("div", "rj-status");
  const wrap = el("div", "rj-wrap");
  choice.render(container, state, ctx, {
    width: b.width, tokens: b.cells, className: "rj-board", gridLabel: "the layout",
    draw: (tok, sq) => drawCell(b, tok, sq),
    marks: lastMarks(b),
    before: () => { ui.prompt = fillStatus(status, state); },
    mount: (frame, grid) => {
      grid.dataset.turns = String(b.turns);
      grid.dataset.turn = b.turn || "";
      wrap.append(frame);
      const oldWrap = container.querySelector(":scope > .rj-wrap");
      if (status.parentNode === container && oldWrap) oldWrap.replaceWith(wrap);
      else container.replaceChildren(status, wrap);
    },
    after: ({ grid, cells, oldRects, fresh }) => {
      drawOverlay(wrap, grid, cells, b);
      watchSize(wrap, grid, cells, b);
      if (ctx.extra) ctx.extra.replaceChildren(...lockLegend(b));
      if (fresh) animateTurn(b, cells, grid, oldRects);
    },
  });
}
