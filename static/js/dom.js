// Small DOM helpers shared by the game boards.

const SVG_NS = "http://www.w3.org/2000/svg";

/** An element `tag` with class `cls` (if any) and text `text` (set with
 * textContent, so it is safe for text from the server). */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** An SVG element `tag` with the attributes `attrs`. */
export function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** True on a touch screen without hover (a phone or a tablet): hints say
 * "tap", and never "Esc". */
export function touchScreen() { return window.matchMedia("(hover: none) and (pointer: coarse)").matches; }

/** "click", or "tap" on a touch screen (`capital`: "Click", "Tap"), for hints. */
export function clickWord(capital = false) {
  const word = touchScreen() ? "tap" : "click";
  return capital ? word.charAt(0).toUpperCase() + word.slice(1) : word;
}

/** How a choice is cancelled, as a sentence: "Esc or a click elsewhere
 * cancels.", or "Tap elsewhere to cancel." on a touch screen. */
export function cancelHint() { return touchScreen() ? "Tap elsewhere to cancel." : "Esc or a click elsewhere cancels."; }

/** True when the user asks for reduced motion: skip the animations. */
export function reduceMotion() { return window.matchMedia("(prefers-reduced-motion: reduce)").matches; }

/** A seat holder's name without a computer player's level: "Ada" for
 * "Ada (strong)". `s` is the seat's entry of `view.seats`. */
export function bareName(s) {
  const suffix = s.kind === "computer" && s.level ? ` (${s.level})` : "";
  return suffix && s.name.endsWith(suffix) ? s.name.slice(0, -suffix.length) : s.name;
}

/** A seat holder's name with `label` (the seat, side or Jack) in brackets:
 * "Ann (North)". A computer player's name already ends with its level in
 * brackets ("Ada (strong)"): the label joins it, "Ada (strong, North)",
 * rather than a second pair. */
export function nameWith(s, label) {
  const bare = bareName(s);
  return bare === s.name ? `${s.name} (${label})` : `${bare} (${s.level}, ${label})`;
}

/** A side of one seat as results and score tables name it, by its player
 * with `label` (the seat or Jack) in brackets: "You (Red)", "Ann (Red)"; a
 * computer player without its level ("Ada (Red)", so that the names fit the
 * score table's columns; the seats list gives the level), or by the person
 * away it stands in for ("Bob (Red)"); an empty seat by `label` alone. */
export function playerSide(state, seat, label) {
  // The label keeps one line in its brackets: a narrow column breaks before
  // them, "Ben / (Black ♠♣)", never inside ("Ben (Black / ♠♣)").
  const whole = label.replace(/ /g, "\u00a0");
  if (state.you === seat) return `You (${whole})`;
  const s = state.view.seats.find((x) => x.seat === seat);
  if (!s || !s.name) return label;
  return `${s.stand_in_for || bareName(s)} (${whole})`;
}
