// Board for Get Stuck and Get Stuck for Four: the 7×7 layout, labelled a–g
// and 1–7. It draws the view it is sent and highlights the card of each move
// it is sent (state.moves, docs/protocol.md: a card moved into the gap); a
// click or Enter on a highlighted card plays it, through the shared grid
// play (grid.js).

import { cardFor, faceUp, faceDown, slide, SUIT_SYMBOL } from "../cards.js";
import { el, playerSide } from "../dom.js";
import { gridPlay } from "../grid.js";

const SEAT_NAMES = { red: "Red", black: "Black", N: "North", E: "East", S: "South", W: "West" };

// A move is clicked on the card it moves.
const choice = gridPlay({
  cell: "gs-cell", act: "gs-act", clicks: (m) => (m.kind === "move" ? [m.from] : null),
  roles: { single: ["playable"] },
  label: (cell, r) => (r.single ? `move ${cell.firstChild.getAttribute("aria-label")} at ${r.sq} into the gap` : ""),
});

function suitsOf(state, seat) {
  const suits = state.view.board.suits[seat] || "";
  return [...suits].map((s) => SUIT_SYMBOL[s]).join("");
}

export function seatLabel(seat, state) {
  return `${SEAT_NAMES[seat] || seat} ${suitsOf(state, seat)}`;
}

/** A partnership by its seats' names and suits; a seat (two players) by its
 * player: "Ann (Red ♥♦)", "You (Red ♥♦)" (dom.js, playerSide). */
export function sideLabel(side, state) {
  if (side === "N-S") return "North–South ♠♣";
  if (side === "E-W") return "East–West ♥♦";
  return playerSide(state, side, seatLabel(side, state));
}

export function hint(state) {
  const b = state.view.board;
  if (!state.legal_moves.length) return "";
  if (state.moves.some((m) => m.kind === "pass")) return "You are stuck: pass, and your indicator turns face down.";
  if (b.indicators) return `Move a ${suitsOf(state, state.you)} in line with the gap, in any direction.`;
  if (b.diagonal) return "None of your cards can move into the gap along its row or column: a diagonal move is allowed.";
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

/** The card just moved slides face up from its old square into the gap,
 * then turns face down. */
function animateMove(b, cells, from) {
  const down = cells[b.last.to].querySelector(".card");
  const up = faceUp(down.dataset.card || "");
  down.replaceWith(up);
  slide(up, { getBoundingClientRect: () => from }, () => {
    if (!up.isConnected) return;
    const half = { duration: 140, easing: "ease-in" };
    up.animate([{ transform: "rotateY(0deg)" }, { transform: "rotateY(90deg)" }], half).onfinish = () => {
      if (!up.isConnected) return;
      up.replaceWith(down);
      down.animate([{ transform: "rotateY(90deg)" }, { transform: "rotateY(0deg)" }], { duration: 140, easing: "ease-out" });
    };
  });
}

export function render(container, state, ctx) {
  const b = state.view.board;
  const prevB = ctx.prev && ctx.prev.view && ctx.prev.view.board;
  choice.render(container, state, ctx, {
    width: b.width, tokens: b.cells, gridLabel: "the layout",
    draw: (tok, sq) => {
      const cell = el("div", "cell gs-cell");
      cell.dataset.square = sq;
      cell.setAttribute("role", "gridcell");
      cell.append(cardFor(tok));
      return cell;
    },
    marks: b.last ? [[b.last.to, "last-to"], [b.last.from, "last-from"]] : [],
    mount: (frame) => {
      // What just happened, in words, above the board (the log panel may be
      // far below on a phone, and computer players move quickly).
      const log = state.view.log;
      // A note in brackets ("played by the server: …") stays in the log and
      // the title: the line says what happened, on one line of a laptop.
      const text = log.length ? log[log.length - 1].text : "";
      const caption = el("div", "gs-last", text ? `Last move: ${text.replace(/ \([^()]*\)$/, "")}` : "\u00a0");
      if (text) caption.title = `Last move: ${text}`;  // whole, where the line is cut short
      caption.setAttribute("aria-live", "polite");
      container.replaceChildren(caption, frame);
      // A long sentence over a narrow board (a 1280×720 laptop): a smaller
      // font before the line is cut short.
      if (caption.scrollWidth > caption.clientWidth) caption.classList.add("tight");
      if (ctx.extra) {
        ctx.extra.replaceChildren();
        if (b.indicators) ctx.extra.append(indicators(state));
      }
    },
    after: ({ cells, oldRects, fresh }) => {
      // A pass leaves the last move (and the gap) as they were: nothing slides.
      if (fresh && b.last && prevB && prevB.gap === b.last.to && oldRects[b.last.from]) {
        animateMove(b, cells, oldRects[b.last.from]);
      }
    },
  });
}
