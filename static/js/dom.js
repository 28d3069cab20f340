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

/** True when the user asks for reduced motion: skip the animations. */
export function reduceMotion() { return window.matchMedia("(prefers-reduced-motion: reduce)").matches; }
