// Grid boards shared by the games laid out on a grid of squares (Get Stuck,
// Romeo and Juliet, Suitors): square names, the grid element with one cell
// per square and its coordinate labels (column letters along the top, row
// numbers down the left, so that a player finds the squares the log and the
// hints name: "moves the 5♥ from d1 to d4"), and the play on it (gridPlay):
// the squares the moves light up, one click for a one-step move and two for
// a two-step one, the marks of the last move, the padlock of a locked card
// and one animation per turn.
//
// It knows no rules: the moves come with their structure (state.moves,
// docs/protocol.md, "Move structures") and each board says which squares
// a move is clicked on and what its cells are called.
//
// Squares follow the shared notation (docs/notation.md): columns a, b, c …
// left to right, rows 1, 2, 3 … top to bottom, a1 top-left.

import { el, svg } from "./dom.js";

/** The square of index `i` in a layout `width` squares wide, read row by row
 * from a1: (9, 7) → "c2". */
export function squareOf(i, width) {
  return String.fromCharCode(97 + (i % width)) + (Math.floor(i / width) + 1);
}

/** 0-based [column, row] of a square name: "c2" → [2, 1]. */
export function colRow(sq) { return [sq.charCodeAt(0) - 97, Number(sq.slice(1)) - 1]; }

function coord(kind, text) {
  const s = el("span", `coord coord-${kind}`, text);
  s.setAttribute("aria-hidden", "true");
  return s;
}

/**
 * A grid board: the cells of `tokens` (one per square, row by row from a1)
 * drawn by `draw(token, square, index)` (which returns the cell element,
 * class "cell") in a grid `width` squares wide, class `board w<width>` plus
 * `className`, with the accessible name `label`.
 *
 * Returns `{ frame, grid, cells }`: `frame` is the element to put on the
 * page (the grid with room for its coordinate labels), `grid` the grid
 * itself, `cells` the cell elements by square name. The labels live in the
 * cells of the top row and the left column (hidden from screen readers,
 * whose cell labels name the square) and do not catch clicks; a renderer
 * that replaces a card in a cell replaces the card element, not the cell's
 * children.
 */
export function gridBoard({ width, tokens, className = "", label, draw }) {
  const grid = el("div", `board w${width}${className ? ` ${className}` : ""}`);
  grid.setAttribute("role", "grid");
  grid.setAttribute("aria-label", label);
  const cells = {};
  tokens.forEach((tok, i) => {
    const sq = squareOf(i, width);
    const cell = draw(tok, sq, i);
    if (i < width) cell.append(coord("col", sq[0]));
    if (i % width === 0) cell.append(coord("row", sq.slice(1)));
    cells[sq] = cell;
    grid.append(cell);
  });
  const frame = el("div", "grid-frame");
  frame.append(grid);
  return { frame, grid, cells };
}

/**
 * The moves of `moves` (a state's `moves`) by how they are clicked.
 * `clicks(move)` gives the squares a move is played by: `[square]` for one
 * click, `[piece, target]` for two, or null for a move not played on the
 * board (a pass, played with the room's Pass button).
 *
 * Returns `{ single, pairs, pass }`: `single` maps a square to the move text
 * one click on it plays; `pairs` maps a piece's square to a map of target
 * square → move text; `pass` is the pass move or null.
 */
export function sortMoves(moves, clicks) {
  const single = new Map();
  const pairs = new Map();
  let pass = null;
  for (const m of moves) {
    if (m.kind === "pass") { pass = m; continue; }
    const squares = clicks(m);
    if (!squares) continue;
    if (squares.length === 1) {
      single.set(squares[0], m.move);
    } else {
      const [piece, target] = squares;
      if (!pairs.has(piece)) pairs.set(piece, new Map());
      pairs.get(piece).set(target, m.move);
    }
  }
  return { single, pairs, pass };
}

/** A padlock icon (class `cls`), for the cards a rule locks. */
export function padlock(cls = "") {
  const s = svg("svg", { viewBox: "0 0 16 18", focusable: "false", "aria-hidden": "true" });
  if (cls) s.setAttribute("class", cls);
  s.append(
    svg("path", { class: "lock-shackle", d: "M4.5 8V5.5a3.5 3.5 0 0 1 7 0V8" }),
    svg("rect", { class: "lock-body", x: 2, y: 8, width: 12, height: 9, rx: 1.8 }),
  );
  return s;
}

/** The badge (class `cls`, tooltip `title`) that carries a padlock (class
 * `iconCls`) on a locked card. */
export function lockBadge(cls, title, iconCls = "") {
  const badge = el("span", cls);
  badge.title = title;
  badge.append(padlock(iconCls));
  return badge;
}

/** Mark the last move on the cells: each of `marks` is `[square, ...classes]`. */
export function markLast(cells, marks) {
  for (const [sq, ...classes] of marks) if (cells[sq]) cells[sq].classList.add(...classes);
}

/** Arrow key → its [column, row] step. */
const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

/**
 * The play on one grid board: what lights up and what a click does.
 *
 * - `cell`: the class of the board's cells; `act`: the class that marks a
 *   clickable one (a page whose seat is not awaited has none).
 * - `clicks(move)`: the squares a move is clicked on (see sortMoves).
 * - `roles`: the classes a cell gets in each role: `single` (one click on it
 *   plays a move; while a piece is chosen only that piece keeps this role),
 *   `first` (a piece that starts a two-click move, other than the chosen
 *   one), `firstIdle` (such a piece while none is chosen), `selected` (the
 *   chosen piece), `second` (a target of the chosen piece). `choosing` is
 *   the class of the grid while a piece is chosen.
 * - `label(cell, roles)`: the accessible name of a clickable cell in these
 *   roles (`{ sq, sel, single, first, selected, second }`), or "" for none;
 *   a cell that is not clickable is named by its `data-label`.
 * - `onChoice(selected, grid)`: after every change of the choice (a status
 *   line).
 *
 * A click on a piece chooses it; then a click on one of its targets plays the
 * move, on the piece again plays its one-click move if it has one (else
 * cancels), on another piece chooses that one; Escape, or a click anywhere
 * else, cancels. A move just sent is not sent twice: nothing is lit until the
 * next state (or for 1.5 s, if the move was refused). Tab and the arrow keys
 * go from one clickable cell to another, Enter or Space clicks; keyboard focus
 * stays on the board across redraws. Returns `{ render, hasMoves, selected }`.
 */
export function gridPlay({ cell, act, clicks, roles, choosing = "", label, onChoice }) {
  const c = {
    key: "", selected: null, sent: false, play: null, grid: null, container: null,
    moves: sortMoves([], clicks), animated: "",
  };
  const roleClasses = [...new Set(Object.values(roles).flat())];

  function apply() {
    const grid = c.grid;
    if (!grid) return;
    const { single, pairs } = c.moves;
    const sel = c.selected;
    const sent = c.sent;
    const targets = sel ? pairs.get(sel) : null;
    if (choosing) grid.classList.toggle(choosing, !!sel);
    for (const e of grid.querySelectorAll(`.${cell}`)) {
      const sq = e.dataset.square;
      const r = {
        sq, sel,
        single: !sent && single.has(sq) && (!sel || sq === sel),
        first: !sent && pairs.has(sq),
        selected: sq === sel,
        second: !sent && !!targets && targets.has(sq),
      };
      const want = new Set([
        ...(r.single ? roles.single || [] : []),
        ...(r.first && !r.selected ? roles.first || [] : []),
        ...(r.first && !sel ? roles.firstIdle || [] : []),
        ...(r.selected ? roles.selected || [] : []),
        ...(r.second ? roles.second || [] : []),
      ]);
      for (const k of roleClasses) e.classList.toggle(k, want.has(k));
      mark(e, label(e, r));
    }
    if (onChoice) onChoice(sel, grid);
  }

  function mark(e, text) {
    if (text) {
      e.classList.add(act);
      e.tabIndex = 0;
      e.setAttribute("role", "button");
      e.setAttribute("aria-label", text);
      return;
    }
    e.classList.remove(act);
    e.removeAttribute("tabindex");
    e.setAttribute("role", "gridcell");
    if (e.dataset.label) e.setAttribute("aria-label", e.dataset.label);
    else e.removeAttribute("aria-label");
  }

  /** Keep the keyboard focus on the board while it offers nothing to play
   * (after your move, on the others' turns), so that your next turn is one
   * Tab away, not a walk through the page from its top. */
  function park(container) {
    if (!container) return;
    if (!container.hasAttribute("tabindex")) container.tabIndex = -1;
    container.focus({ preventScroll: true });
  }

  function select(sq) {
    c.selected = sq;
    apply();
  }

  function send(move) {
    const hadFocus = c.grid && c.grid.contains(document.activeElement);
    c.selected = null;
    c.sent = true;
    apply();
    if (hadFocus) park(c.container);
    c.play(move);
    // If the move is refused (an error toast), let the player try again.
    const key = c.key;
    setTimeout(() => {
      if (c.key === key && c.sent) { c.sent = false; apply(); }
    }, 1500);
  }

  function onCell(sq) {
    const { single, pairs } = c.moves;
    const sel = c.selected;
    if (c.sent) return;
    if (sel) {
      const targets = pairs.get(sel);
      if (targets && targets.has(sq)) send(targets.get(sq));
      else if (sq === sel && single.has(sq)) send(single.get(sq));
      else select(sq !== sel && pairs.has(sq) ? sq : null);
      return;
    }
    if (pairs.has(sq)) select(sq);
    else if (single.has(sq)) send(single.get(sq));
  }

  /** The clickable cell nearest to square `from` in the direction `[dx, dy]`
   * (a step along counts one, a step across two), or null. */
  function nearest(from, [dx, dy]) {
    const [x0, y0] = colRow(from);
    let best = null;
    let bestScore = Infinity;
    for (const e of c.grid.querySelectorAll(`.${cell}.${act}`)) {
      const [x, y] = colRow(e.dataset.square);
      const along = (x - x0) * dx + (y - y0) * dy;
      const score = along + 2 * (Math.abs((x - x0) * dy) + Math.abs((y - y0) * dx));
      if (along > 0 && score < bestScore) { best = e; bestScore = score; }
    }
    return best;
  }

  function listen(e) {
    e.addEventListener("click", () => onCell(e.dataset.square));
    e.addEventListener("keydown", (ev) => {
      if (!e.classList.contains(act) || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        onCell(e.dataset.square);
        return;
      }
      // The arrow keys go from one clickable card to the next in their direction.
      const step = ARROWS[ev.key];
      const next = step && c.grid ? nearest(e.dataset.square, step) : null;
      if (next) {
        ev.preventDefault();
        next.focus();
      }
    });
  }

  /** True once per turn, when `state` is the one right after `ctx.prev`
   * (same room and deal, one more move in the log): the time to animate it. */
  function justPlayed(state, ctx) {
    const prev = ctx.prev;
    const key = `${state.room}|${state.view.deal}|${state.view.log.length}`;
    if (!prev || !prev.view || c.animated === key) return false;
    if (prev.room !== state.room || prev.view.deal !== state.view.deal) return false;
    if (prev.view.log.length + 1 !== state.view.log.length) return false;
    c.animated = key;
    return true;
  }

  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !c.selected) return;
    const sel = c.selected;
    select(null);
    const target = c.grid && c.grid.querySelector(`.${cell}[data-square="${sel}"]`);
    if (target && target.classList.contains(act)) target.focus({ preventScroll: true });
  });
  document.addEventListener("click", (e) => {
    if (!c.selected) return;
    const t = e.target;
    if (t instanceof Element && t.closest(`.${cell}.${act}`)) return;
    select(null);
  });

  /**
   * Draw `state` into `container`: the grid of `tokens`, `width` squares
   * wide (class `className`, accessible name `gridLabel`), each cell drawn
   * by `draw(token, square, index)`, after `before()` (which may change the
   * page: the cells' places and the focus are read first); the last move's
   * `marks` (see markLast); `mount(frame, grid, cells)` puts the grid on the
   * page; then
   * the moves light up and `after({ grid, cells, oldRects, fresh })` runs,
   * with the cells' places before this redraw (`oldRects`, by square) and
   * `fresh` true if this state is the turn after the previous one (once).
   */
  function render(container, state, ctx, {
    width, tokens, className, gridLabel, draw, marks = [], before, mount, after,
  }) {
    c.moves = sortMoves(state.moves, clicks);
    c.container = container;
    const active = document.activeElement;
    const hadFocus = container.contains(active);
    const focused = hadFocus && active.dataset ? active.dataset.square || null : null;
    const oldRects = {};
    container.querySelectorAll(`.${cell}`).forEach((e) => { oldRects[e.dataset.square] = e.getBoundingClientRect(); });
    if (before) before();
    const { frame, grid, cells } = gridBoard({
      width, tokens, className, label: gridLabel,
      draw: (tok, sq, i) => {
        const e = draw(tok, sq, i);
        listen(e);
        return e;
      },
    });
    markLast(cells, marks);
    mount(frame, grid, cells);
    const key = `${state.room}|${state.view.deal}|${state.version}`;
    if (key !== c.key) { c.selected = null; c.sent = false; }
    c.key = key;
    c.play = ctx.play;
    c.grid = grid;
    if (c.selected && !c.moves.pairs.has(c.selected)) c.selected = null;
    apply();
    if (after) after({ grid, cells, oldRects, fresh: justPlayed(state, ctx) });
    if (hadFocus) {
      const again = focused ? cells[focused] : null;
      const target = again && again.classList.contains(act) ? again : grid.querySelector(`.${act}`);
      if (target) target.focus({ preventScroll: true });
      else park(container);
    }
  }

  return {
    render,
    /** The moves of the last state drawn, sorted (see sortMoves). */
    get moves() { return c.moves; },
    /** The square of the chosen piece, or null. */
    get selected() { return c.selected; },
  };
}
