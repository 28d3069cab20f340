// Board for Get Stuck and Get Stuck for Four: the 7×7 layout, labelled a–g
// and 1–7 (grid.js). It draws the view it is sent and highlights the squares
// in legal_moves; a click or Enter on a highlighted card plays that square.

import { cardFor, faceUp, faceDown, slide, SUIT_SYMBOL } from "../cards.js";
import { gridBoard } from "../grid.js";

const SEAT_NAMES = { red: "Red", black: "Black", N: "North", E: "East", S: "South", W: "West" };

function suitsOf(state, seat) {
  const suits = state.view.board.suits[seat] || "";
  return [...suits].map((s) => SUIT_SYMBOL[s]).join("");
}

export function seatLabel(seat, state) {
  return `${SEAT_NAMES[seat] || seat} ${suitsOf(state, seat)}`;
}

export function sideLabel(side, state) {
  if (side === "N-S") return "North–South ♠♣";
  if (side === "E-W") return "East–West ♥♦";
  return seatLabel(side, state);
}

export function hint(state) {
  const b = state.view.board;
  if (!state.legal_moves.length) return "";
  if (state.legal_moves.includes("pass")) return "You are stuck: pass, and your indicator turns face down.";
  if (b.indicators) return `Move a ${suitsOf(state, state.you)} in line with the gap, in any direction.`;
  if (b.diagonal) return "Nothing of yours is in line with the gap's row or column: a diagonal move is allowed.";
  return "Move a card of your colour from the gap's row or column into the gap.";
}

export function passLabel() { return "Pass (stuck)"; }

export function seatExtra(seat, state) {
  const ind = state.view.board.indicators;
  if (!ind) return null;
  const ten = "T" + state.view.board.suits[seat];
  const c = ind[seat] ? faceUp(ten) : faceDown(null, { red: false });
  c.classList.add("ind");
  c.title = ind[seat] ? "indicator face up" : "indicator face down: stuck";
  const wrap = document.createElement("span");
  wrap.className = "ind";
  wrap.append(c);
  return wrap;
}

function indicators(state) {
  const b = state.view.board;
  const box = document.createElement("div");
  box.className = "indicators";
  for (const s of state.view.seats) {
    const d = document.createElement("div");
    d.className = "indicator" + (state.to_move.includes(s.seat) ? " to-move" : "");
    d.dataset.seat = s.seat;
    d.dataset.up = String(b.indicators[s.seat]);
    const ten = "T" + b.suits[s.seat];
    d.append(b.indicators[s.seat] ? faceUp(ten) : faceDown(null));
    const label = document.createElement("span");
    label.className = "who";
    label.textContent = s.name ? `${SEAT_NAMES[s.seat]}: ${s.name}` : SEAT_NAMES[s.seat];
    d.append(label);
    box.append(d);
  }
  return box;
}

export function render(container, state, ctx) {
  const b = state.view.board;
  const legal = new Set(state.legal_moves);
  const { frame, grid, cells } = gridBoard({
    width: b.width, tokens: b.cells, label: "the layout",
    draw: (tok, sq) => {
      const cell = document.createElement("div");
      cell.className = "cell";
      cell.dataset.square = sq;
      cell.setAttribute("role", "gridcell");
      cell.append(cardFor(tok));
      if (b.last && b.last.to === sq) cell.classList.add("last-to");
      if (b.last && b.last.from === sq) cell.classList.add("last-from");
      if (legal.has(sq)) {
        cell.classList.add("playable");
        cell.tabIndex = 0;
        cell.setAttribute("role", "button");
        cell.setAttribute("aria-label", `move ${cell.firstChild.getAttribute("aria-label")} at ${sq} into the gap`);
        const go = () => ctx.play(sq);
        cell.addEventListener("click", go);
        cell.addEventListener("keydown", (e) => {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); }
        });
      }
      return cell;
    },
  });
  // Keep keyboard focus on the board across re-renders.
  const hadFocus = container.contains(document.activeElement);
  // Remember where the moved card was drawn before, for the slide.
  const prevB = ctx.prev && ctx.prev.view && ctx.prev.view.board;
  const oldCells = {};
  container.querySelectorAll(".cell").forEach((c) => { oldCells[c.dataset.square] = c.getBoundingClientRect(); });
  // What just happened, in words, above the board (the log panel may be far
  // below on a phone, and computer players move quickly).
  const caption = document.createElement("div");
  caption.className = "gs-last";
  caption.setAttribute("aria-live", "polite");
  const log = state.view.log;
  caption.textContent = log.length ? `Last move: ${log[log.length - 1].text}` : "\u00a0";
  container.replaceChildren(caption, frame);
  if (ctx.extra) {
    ctx.extra.replaceChildren();
    if (b.indicators) ctx.extra.append(indicators(state));
  }
  const moved = b.last && prevB && ctx.prev.view.log.length + 1 === state.view.log.length
    && prevB.gap === b.last.to;
  if (moved && oldCells[b.last.from]) {
    // The card slides face up from its old square into the gap, then turns face down.
    const cell = cells[b.last.to];
    const down = cell.querySelector(".card");
    const up = faceUp(down.dataset.card || "");
    down.replaceWith(up);
    const ghost = { getBoundingClientRect: () => oldCells[b.last.from] };
    slide(up, ghost, () => {
      if (!up.isConnected) return;
      const half = { duration: 140, easing: "ease-in" };
      up.animate([{ transform: "rotateY(0deg)" }, { transform: "rotateY(90deg)" }], half).onfinish = () => {
        if (!up.isConnected) return;
        up.replaceWith(down);
        down.animate([{ transform: "rotateY(90deg)" }, { transform: "rotateY(0deg)" }], { duration: 140, easing: "ease-out" });
      };
    });
  }
  if (hadFocus) {
    const first = grid.querySelector(".cell.playable");
    if (first) first.focus({ preventScroll: true });
  }
}
