// Card elements drawn in CSS. Tokens follow docs/notation.md:
// "QH" face up, "qh" face down (public: its face is shown faintly on hover),
// "??" face down and unknown, ".." the gap.

export const SUIT_SYMBOL = { S: "♠", H: "♥", D: "♦", C: "♣" };
export const SUIT_NAME = { S: "spades", H: "hearts", D: "diamonds", C: "clubs" };
const RANK_NAME = { A: "Ace", T: "10", J: "Jack", Q: "Queen", K: "King" };

export function rankLabel(r) { return r === "T" ? "10" : r; }

/** "QH" → "Q♥" (either case). */
export function pretty(token) {
  const t = token.toUpperCase();
  return rankLabel(t[0]) + (SUIT_SYMBOL[t[1]] || "");
}

/** "QH" → "Queen of hearts", for screen readers. */
export function spoken(token) {
  const t = token.toUpperCase();
  return `${RANK_NAME[t[0]] || t[0]} of ${SUIT_NAME[t[1]] || "?"}`;
}

export function isRed(token) { return /[HD]/i.test(token[1] || ""); }

function span(cls, text) {
  const s = document.createElement("span");
  s.className = cls;
  if (text !== undefined) s.textContent = text;
  return s;
}

/** A face-up card element for a card token such as "QH". */
export function faceUp(token) {
  const t = token.toUpperCase();
  const r = t[0], s = SUIT_SYMBOL[t[1]];
  const el = document.createElement("div");
  el.className = "card" + (isRed(t) ? " red" : "") + ("JQK".includes(r) ? " court" : "") + (r === "A" ? " ace" : "");
  el.dataset.card = t;
  for (const pos of ["tl", "br"]) {
    const c = span(`corner ${pos}`);
    c.append(span("r", rankLabel(r)), span("s", s));
    c.setAttribute("aria-hidden", "true");
    el.append(c);
  }
  const face = span("face");
  face.setAttribute("aria-hidden", "true");
  if ("JQK".includes(r)) face.append(span("letter", r), span("s", s));
  else face.textContent = s;
  el.append(face);
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", spoken(t));
  return el;
}

/** A face-down card. `known` is the card token when the card is public. */
export function faceDown(known, opts = {}) {
  const el = document.createElement("div");
  el.className = "card back" + (opts.red ? " red-back" : "");
  if (known) {
    el.dataset.card = known.toUpperCase();
    el.append(span("ghost", pretty(known)));
    el.title = `face down: ${pretty(known)}`;
    el.setAttribute("aria-label", `face-down ${spoken(known)}`);
  } else {
    el.setAttribute("aria-label", "face-down card");
  }
  el.setAttribute("role", "img");
  return el;
}

/** The gap: an empty place in a layout. */
export function gapEl() {
  const el = document.createElement("div");
  el.className = "gap";
  el.setAttribute("aria-label", "the gap");
  el.setAttribute("role", "img");
  return el;
}

/** The element for any cell token. */
export function cardFor(token) {
  if (token === "..") return gapEl();
  if (token === "??") return faceDown(null);
  if (token === token.toLowerCase()) return faceDown(token);
  return faceUp(token);
}

/** Square name from 0-based column and row: (0,0) → "a1". */
export function squareName(col, row) { return String.fromCharCode(97 + col) + (row + 1); }

/**
 * Slide `el` from the screen position of `fromEl` to where it is now (FLIP),
 * then call `after`. Respects reduced motion.
 */
export function slide(el, fromEl, after) {
  if (!el || !fromEl || window.matchMedia("(prefers-reduced-motion: reduce)").matches) {
    if (after) after();
    return;
  }
  const a = fromEl.getBoundingClientRect(), b = el.getBoundingClientRect();
  const dx = a.left - b.left, dy = a.top - b.top;
  const anim = inFlight(el, el.animate(
    [{ transform: `translate(${dx}px, ${dy}px)`, zIndex: 5 }, { transform: "translate(0, 0)", zIndex: 5 }],
    { duration: 320, easing: "cubic-bezier(.2,.7,.2,1)" }));
  anim.onfinish = () => { if (after) after(); };
}

/**
 * While `anim` moves `el` over the board, clicks pass through it to the
 * square beneath (class `in-flight`): a card sliding past must not swallow
 * a click meant for the card it crosses. Returns `anim`.
 */
export function inFlight(el, anim) {
  el.classList.add("in-flight");
  const land = () => el.classList.remove("in-flight");
  anim.addEventListener("finish", land);
  anim.addEventListener("cancel", land);
  return anim;
}
