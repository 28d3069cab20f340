// Board for Stucco: both open hands (yours along the bottom, the opponent's
// along the top; spectators see south at the bottom), the secret opening pick,
// and the spread with each seat's cards offset towards its own side. It draws
// the view it is sent (docs/notation/stucco.md) and highlights the cards of
// the moves it is sent (state.moves: a pick or a card to play, docs/protocol.md);
// a click, tap, Enter or Space on one plays it. The score at the end of a deal
// is the score line the server sends, drawn as its formula.

import { faceUp, faceDown, slide, pretty, spoken } from "../cards.js";
import { clickWord, el, nameWith, playerSide, reduceMotion } from "../dom.js";

const NAMES = { north: "North", south: "South" };
const OTHER = { north: "south", south: "north" };

/** The seat drawn at the bottom: your own (in a review from the room, the
 * seat of the player reviewing, so that it faces the way the table did),
 * else south. */
function bottomSeat(state) { return state.you || state.facing || "south"; }

/** "You", or "Ann (North)", or "North". */
function who(state, seat) {
  if (state.you === seat) return "You";
  const s = state.view.seats.find((x) => x.seat === seat);
  return s && s.name ? nameWith(s, NAMES[seat]) : NAMES[seat];
}

/** "you", or "North". */
function whoShort(state, seat) { return state.you === seat ? "you" : NAMES[seat]; }

// ---------------------------------------------------------------- room hooks
export function seatLabel(seat) { return NAMES[seat] || seat; }

/** A side is one seat, named by its player: "Ann (North)", "You (South)". */
export function sideLabel(side, state) { return playerSide(state, side, seatLabel(side)); }

/** The sentence that explains the reveal: who starts by the colour rule. */
function revealSentence(state) {
  const b = state.view.board;
  if (!b.reveal || !b.starter) return "";
  // Why this seat starts (same colours or not) is said beside the picks; on a
  // phone, saying it here too pushed the player's own hand off the screen.
  const back = OTHER[b.starter];
  const starter = state.you === b.starter ? "You start" : `${NAMES[b.starter]} starts`;
  const backWho = state.you === back ? "your" : `${NAMES[back]}'s`;
  return `Picks shown: ${starter} with the ${pretty(b.reveal[b.starter])}, and the`
    + ` ${pretty(b.reveal[back])} goes back to ${backWho} hand.`;
}

export function hint(state) {
  const b = state.view.board;
  if (state.phase !== "playing") return "";
  const mine = state.legal_moves.length > 0;
  if (b.phase === "opening") {
    const opp = state.you ? OTHER[state.you] : null;
    if (!state.you) {
      const done = ["north", "south"].filter((s) => b.picked[s]).map((s) => NAMES[s]);
      return `Both players pick a card in secret${done.length ? `; ${done.join(" and ")} ${done.length > 1 ? "have" : "has"} picked` : ""}.`;
    }
    if (b.pick) {
      return `You picked the ${pretty(b.pick)}: only you can see it. Waiting for ${NAMES[opp]} to pick.`;
    }
    // Who starts (same colours or not) is said beside the picks, not here
    // too: on a phone the banner pushed the player's own hand off the screen.
    const theirs = b.picked[opp] ? `${NAMES[opp]} has picked. ` : "";
    return `${theirs}Pick a card in secret: ${clickWord()} one of yours (a pick is final). ${NAMES[opp]} sees only`
      + " that you picked.";
  }
  const parts = [];
  // Right after the reveal (the log holds just the two picks), explain it.
  if (state.view.log.length === 2) parts.push(revealSentence(state));
  const last = b.spread.length ? b.spread[b.spread.length - 1].card : null;
  if (mine && state.moves.some((m) => m.kind === "pass")) {
    parts.push(`You cannot follow the ${pretty(last)}: none of your cards may follow it.`
      + ` You must pass, and ${NAMES[OTHER[state.you]]} plays on.`);
  } else if (mine) {
    parts.push(`Play a highlighted card to follow the ${pretty(last)}.`);
  } else if (b.turn) {
    // The banner already says who moves: tell what they answer.
    parts.push(waitingSentence(state, last));
  }
  return parts.join(" ");
}

/** While someone else moves (the banner names them): the card they must
 * follow and who played it (and how many in a row), or the pass that let
 * them play on. */
function waitingSentence(state, last) {
  const b = state.view.board;
  const passer = b.last && b.last.move === "pass" ? b.last.seat : null;
  if (passer) {
    const them = state.you === passer ? "You" : NAMES[passer];
    return `${them} could not follow the ${pretty(last)} and passed.`;
  }
  const runner = b.spread[b.spread.length - 1].seat;
  const by = whoShort(state, runner);
  return b.run > 1
    ? `Card to follow: the ${pretty(last)}, the last of ${b.run} in a row by ${by}.`
    : `Card to follow: the ${pretty(last)}, played by ${by}.`;
}

export function passLabel(state) {
  const b = state.view.board;
  const last = b.spread.length ? b.spread[b.spread.length - 1].card : null;
  return last ? `Pass: I cannot follow the ${pretty(last)}` : "Pass";
}

export function matchNote(state) {
  const v = state.view;
  const target = v.options && v.options.target;
  if (!target) return "";
  const totals = ["north", "south"].map((s) => `${NAMES[s]} ${v.totals[s] ?? 0}`).join(" · ");
  const dealer = v.board && v.board.dealer ? ` Deal ${v.deal}: ${NAMES[v.board.dealer]} deals; the deal alternates.` : "";
  return `First to ${target} point${target === 1 ? "" : "s"} wins the match (${totals}).${dealer}`;
}

// ---------------------------------------------------------------- drawing
function playable(card, move, label, ctx) {
  card.classList.add("st-playable");
  card.tabIndex = 0;
  card.setAttribute("role", "button");
  card.setAttribute("aria-label", label);
  const go = () => ctx.play(move);
  card.addEventListener("click", go);
  card.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === "Enter" || e.key === " ") { e.preventDefault(); go(); return; }
    // The arrow keys go to the previous or next playable card of the hand.
    const by = { ArrowLeft: -1, ArrowUp: -1, ArrowRight: 1, ArrowDown: 1 }[e.key];
    const row = card.closest(".st-cards");
    const hand = by && row ? [...row.querySelectorAll(".st-playable")] : [];
    const next = hand[hand.indexOf(card) + by];
    if (next) { e.preventDefault(); next.focus(); }
  });
}

function handLabel(state, seat) {
  const b = state.view.board;
  const row = el("div", "st-hand-label");
  const name = el("span", "st-who", state.you === seat ? `You (${NAMES[seat]})` : who(state, seat));
  row.append(name);
  if (b.dealer === seat) row.append(el("span", "st-tag", "dealer"));
  const count = b.hands[seat].length;
  row.append(el("span", "st-meta", `${count} card${count === 1 ? "" : "s"} in hand · ${b.played[seat]} played`));
  if (state.to_move.includes(seat) && state.phase === "playing") {
    row.classList.add("st-to-move");
    row.append(el("span", "st-tag st-turn", b.phase === "opening" ? "picking" : "on turn"));
  } else if (b.phase === "opening" && b.picked[seat]) {
    row.append(el("span", "st-tag", "has picked"));
  }
  return row;
}

function drawHand(state, seat, ctx, where) {
  const b = state.view.board;
  const byCard = new Map(state.moves.filter((m) => m.card).map((m) => [m.card, m]));
  const box = el("div", `st-hand st-${where}`);
  box.dataset.seat = seat;
  box.setAttribute("aria-label", `${who(state, seat)}: hand`);
  const cards = el("div", "st-cards");
  cards.setAttribute("role", "list");
  const opening = b.phase === "opening";
  for (const c of b.hands[seat]) {
    const card = faceUp(c);
    const slot = el("div", "st-slot");
    slot.setAttribute("role", "listitem");
    slot.append(card);
    const move = state.you === seat ? byCard.get(c) : null;
    if (move) {
      playable(card, move.move, move.kind === "pick" ? `pick the ${spoken(c)} in secret` : `play the ${spoken(c)}`, ctx);
    }
    if (opening && state.you === seat && b.pick === c) {
      slot.classList.add("st-chosen");
      const tag = el("span", "st-chosen-tag", "chosen");
      slot.append(tag);
      card.setAttribute("aria-label", `${spoken(c)}, your secret pick`);
    }
    cards.append(slot);
  }
  if (!b.hands[seat].length) cards.append(el("div", "st-empty", "no cards left"));
  box.append(handLabel(state, seat), cards);
  return box;
}

/** One opening slot: the seat's pick as this viewer may see it. */
function pickSlot(state, seat, revealed) {
  const b = state.view.board;
  const box = el("div", "st-pick");
  box.dataset.seat = seat;
  let card, note;
  if (revealed) {
    const c = b.reveal[seat];
    card = faceUp(c);
    note = b.starter === seat ? "opened the spread" : "went back to the hand";
    box.classList.add(b.starter === seat ? "st-opened" : "st-back");
  } else if (state.you === seat && b.pick) {
    card = faceDown(b.pick);
    card.classList.add("st-own-pick");
    note = `your pick: ${pretty(b.pick)} (only you see it)`;
    box.classList.add("st-picked");
  } else if (b.picked[seat]) {
    card = faceDown(null);
    note = "has picked";
    box.classList.add("st-picked");
  } else {
    card = el("div", "gap st-waiting");
    card.setAttribute("role", "img");
    card.setAttribute("aria-label", "no card picked yet");
    // Before the deal starts nobody is choosing yet (new-user pass).
    const holder = state.view.seats.find((x) => x.seat === seat);
    note = state.phase === "playing" ? "choosing…" : holder && holder.name ? "waiting to start" : "waiting for a player";
  }
  card.classList.add("st-pick-card");
  box.append(el("div", "st-pick-who", state.you === seat ? "You" : NAMES[seat]), card, el("div", "st-pick-note", note));
  return box;
}

function drawPicks(state, bottom) {
  const b = state.view.board;
  const revealed = b.phase !== "opening";
  const box = el("div", `st-picks${revealed ? " st-revealed" : ""}`);
  box.setAttribute("aria-label", revealed ? "the opening picks, shown" : "the secret opening picks");
  box.append(pickSlot(state, OTHER[bottom], revealed), pickSlot(state, bottom, revealed));
  if (revealed) {
    const same = b.starter !== b.dealer;
    box.append(el("div", "st-rule", same
      ? `Same colour: the non-dealer, ${NAMES[b.starter]}, started.`
      : `Different colours: the dealer, ${NAMES[b.starter]}, started.`));
  } else {
    box.append(el("div", "st-rule", `Same colour: the non-dealer starts. Different: the dealer (${NAMES[b.dealer]}).`));
  }
  return box;
}

function drawSpread(state, bottom) {
  const b = state.view.board;
  const box = el("div", "st-spread-box");
  const head = el("div", "st-spread-head");
  const n = b.spread.length;
  head.append(el("strong", "", `Spread: ${n} card${n === 1 ? "" : "s"}`));
  const top = OTHER[bottom];
  head.append(el("span", "st-legend st-up", `▲ ${NAMES[top]} ${b.played[top]}`));
  head.append(el("span", "st-legend st-down", `▼ ${NAMES[bottom]} ${b.played[bottom]}`));
  if (n) {
    const runner = b.spread[n - 1].seat;
    const run = el("span", "st-run-count", `${state.you === runner ? "You" : NAMES[runner]}: ${b.run} in a row`);
    run.setAttribute("aria-live", "polite");
    head.append(run);
  }
  if (b.last && b.last.move === "pass") {
    head.append(el("span", "st-passed", `${state.you === b.last.seat ? "You" : NAMES[b.last.seat]} passed`));
  }
  const row = el("div", "st-spread");
  row.setAttribute("role", "list");
  row.setAttribute("aria-label", "the spread, in the order played");
  b.spread.forEach((e, i) => {
    const item = el("div", `st-sp ${e.seat === bottom ? "st-down" : "st-up"}`);
    item.setAttribute("role", "listitem");
    item.dataset.seat = e.seat;
    const card = faceUp(e.card);
    card.setAttribute("aria-label", `${i + 1}: ${spoken(e.card)}, played by ${who(state, e.seat)}`);
    item.append(card);
    if (i >= n - b.run) item.classList.add("st-run");
    if (i === n - 1) item.classList.add("st-last");
    row.append(item);
  });
  if (!n) row.append(el("div", "st-empty", "The spread opens with the starter's pick."));
  box.append(head, row);
  return box;
}

/** At the end of a deal: the winner's score line as the product it is (the
 * factors the server sends with it), and the other seat's points. */
function drawFormula(state) {
  const v = state.view;
  if (!v.outcome || !v.outcome.winners.length) return null;
  const winner = v.outcome.winners[0];
  const score = v.outcome.scores.find((s) => s.side === winner);
  const line = score && score.lines.find((l) => l.factors);
  if (!line) return null;
  const box = el("div", "st-formula");
  box.setAttribute("aria-label", `${who(state, winner)} scored ${line.detail}: ${line.points} points`);
  box.append(el("div", "st-formula-who", `${who(state, winner)} played the last card`));
  const eq = el("div", "st-eq");
  const term = (value, label) => {
    const t = el("span", "st-term");
    t.append(el("span", "st-num", String(value)), el("span", "st-lbl", label));
    return t;
  };
  line.factors.forEach((f, i) => {
    if (i) eq.append(el("span", "st-op", "×"));
    eq.append(term(f.value, f.label));
  });
  eq.append(el("span", "st-op", "="), term(line.points, "points"));
  box.append(eq);
  for (const other of v.outcome.scores.filter((s) => s.side !== winner)) {
    box.append(el("div", "st-formula-other", `${who(state, other.side)}: ${other.points} points.`));
  }
  return box;
}

/** How much of each card of the spread `row` shows (its --st-step): the
 * cards fill as few lines as they can with at least --st-min of each card
 * showing, the same number on each line, each line as wide as the spread;
 * no overlap (and a small gap) when they fit side by side. */
function fitSpread(row) {
  const n = row.querySelectorAll(".st-sp").length;
  const width = row.getBoundingClientRect().width;
  if (!n || !width) return;
  const css = getComputedStyle(row);
  const card = parseFloat(css.getPropertyValue("--st-sw"));
  const least = parseFloat(css.getPropertyValue("--st-min"));
  const most = Math.max(1, Math.floor((width - card) / least) + 1);   // cards a line can hold
  const perLine = Math.ceil(n / Math.ceil(n / most));
  const step = perLine > 1 ? Math.min(card + 6, (width - card - 1) / (perLine - 1)) : card + 6;
  row.style.setProperty("--st-step", `${Math.floor(step * 100) / 100}px`);
}

let spreadObserver = null;   // fits the spread again when its width changes

function watchSpread(row) {
  if (spreadObserver) spreadObserver.disconnect();
  spreadObserver = null;
  if (!row) return;
  fitSpread(row);
  if (!window.ResizeObserver) return;
  let width = row.getBoundingClientRect().width;
  spreadObserver = new ResizeObserver(() => {
    const now = row.getBoundingClientRect().width;
    if (now !== width) { width = now; fitSpread(row); }
  });
  spreadObserver.observe(row);
}

// ---------------------------------------------------------------- render
function rects(container) {
  const out = {};
  container.querySelectorAll(".st-hand .card[data-card]").forEach((c) => { out[c.dataset.card] = c.getBoundingClientRect(); });
  return out;
}

function flip(slot, back, after) {
  const front = slot.querySelector(".st-pick-card");
  if (!front || reduceMotion()) { after(); return; }
  back.classList.add("st-pick-card");
  front.replaceWith(back);
  const half = { duration: 220, easing: "ease-in" };
  back.animate([{ transform: "rotateY(0deg)" }, { transform: "rotateY(90deg)" }], half).onfinish = () => {
    if (!back.isConnected) return;
    back.replaceWith(front);
    front.animate([{ transform: "rotateY(90deg)" }, { transform: "rotateY(0deg)" }], { duration: 220, easing: "ease-out" })
      .onfinish = after;
  };
}

export function render(container, state, ctx) {
  const b = state.view.board;
  const bottom = bottomSeat(state);
  const prevB = ctx.prev && ctx.prev.view && ctx.prev.view.board;
  const sameDeal = prevB && ctx.prev.view.deal === state.view.deal;
  const oldRects = rects(container);
  const hadFocus = container.contains(document.activeElement);
  const focusedCard = hadFocus ? document.activeElement.dataset.card || null : null;

  const wrap = el("div", `st-board st-phase-${b.phase}`);
  wrap.append(drawHand(state, OTHER[bottom], ctx, "top"));
  const mid = el("div", "st-middle");
  mid.append(drawPicks(state, bottom), drawSpread(state, bottom));
  wrap.append(mid);
  const formula = b.phase === "over" ? drawFormula(state) : null;
  if (formula) wrap.append(formula);
  wrap.append(drawHand(state, bottom, ctx, "bottom"));
  container.replaceChildren(wrap);
  if (ctx.extra) ctx.extra.replaceChildren();
  watchSpread(wrap.querySelector(".st-spread"));

  const spreadItems = wrap.querySelectorAll(".st-sp");
  const justRevealed = sameDeal && prevB.phase === "opening" && b.phase !== "opening";
  if (justRevealed) {
    // Both picks turn over together; then the starter's card moves into the
    // spread and the other goes back into its hand.
    const first = spreadItems[0] && spreadItems[0].querySelector(".card");
    const backCard = wrap.querySelector(`.st-hand .card[data-card="${b.reveal[OTHER[b.starter]]}"]`);
    if (first && !reduceMotion()) first.style.visibility = "hidden";
    let pending = 2;
    const done = () => {
      pending -= 1;
      if (pending) return;
      const from = (seat) => {
        const p = wrap.querySelector(`.st-pick[data-seat="${seat}"] .st-pick-card`);
        return p ? { getBoundingClientRect: () => p.getBoundingClientRect() } : null;
      };
      if (first) { first.style.visibility = ""; slide(first, from(b.starter)); }
      if (backCard) slide(backCard, from(OTHER[b.starter]));
    };
    for (const seat of ["north", "south"]) {
      const slot = wrap.querySelector(`.st-pick[data-seat="${seat}"]`);
      const known = state.you === seat ? b.reveal[seat] : null;
      const back = faceDown(known);
      if (known) back.classList.add("st-own-pick");
      flip(slot, back, done);
    }
  } else if (sameDeal && b.spread.length === prevB.spread.length + 1 && b.spread.length > 1) {
    // A card played: it slides from its place in the hand into the spread.
    const item = spreadItems[spreadItems.length - 1];
    const card = item && item.querySelector(".card");
    const r = card && oldRects[card.dataset.card];
    if (r) slide(card, { getBoundingClientRect: () => r });
  } else if (sameDeal && b.phase === "opening" && b.pick && !prevB.pick) {
    // Your own pick: the card slides from the hand to your pick slot.
    const c = wrap.querySelector(`.st-pick[data-seat="${state.you}"] .st-pick-card`);
    const r = oldRects[b.pick];
    if (c && r) slide(c, { getBoundingClientRect: () => r });
  }
  if (hadFocus) {
    // The card that had the focus keeps it while it is still playable (the
    // other player's pick redraws the table: Enter must not then play
    // another card); else the first playable card takes it.
    const again = focusedCard ? wrap.querySelector(`.st-bottom .st-playable[data-card="${focusedCard}"]`) : null;
    const target = again || wrap.querySelector(".st-playable");
    if (target) target.focus({ preventScroll: true });
  }
}
