// Page helpers shared by the room page and the review board: elements built
// from attributes, the wording of points and sentences, and a deal's score
// breakdown. No rules here: everything drawn comes from the server.

/** An element `tag` with `attrs` ("class", "on<event>" handlers, other
 * attributes; false/null/undefined left out) and `children` (nodes or text). */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== false && v !== null && v !== undefined) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) e.append(c);
  return e;
}

/** A passing message in `area` (the page's #toasts): an error stays 6 s,
 * anything else 3.5 s, and any click, tap or Esc on the page dismisses them
 * all at once. A toast never takes the click itself (CSS: pointer-events),
 * so a card it covers can still be played. The same message twice shows once. */
export function showToast(area, message, kind = "info") {
  for (const old of [...area.children]) if (old.textContent === message) old.remove();
  const t = el("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  area.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 6000 : 3500);
  if (!area.dataset.dismiss) {
    area.dataset.dismiss = "on";
    const dismiss = () => area.replaceChildren();
    document.addEventListener("pointerdown", dismiss, { capture: true, passive: true });
    document.addEventListener("keydown", (e) => { if (e.key === "Escape") dismiss(); });
  }
}

/** Signed points with a true minus sign: +5, 0, −10. */
export function signed(n) { return n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0"; }

/** Points with a true minus sign: 5, 0, −10. */
export function points(n) { return n < 0 ? `−${-n}` : String(n); }

/** A sentence from the engine, with a capital first letter. */
export function sentence(text) { return text ? text.charAt(0).toUpperCase() + text.slice(1) : ""; }

/**
 * A deal's result: `title`, the engine's reason and each side's points with
 * the score lines that add up to them (`outcome` as the server sends it).
 * `sideName(side)` names a side; `noun` is "deal" or "game"; `you`, if
 * given, is the seat of the person looking, whose side says so ("Red (you)").
 */
export function outcomeBlock(outcome, title, { sideName, noun, you = null }) {
  const box = el("div", { class: "sides" });
  for (const s of outcome.scores) {
    const won = outcome.winners.includes(s.side);
    // A side scored by one line for the whole game ("Game: won the game =
    // +1") has nothing to break down: its line is said once, in the heading
    // ("Red won the game", "Black lost the game", "Red drew the game").
    const whole = s.lines.length === 1 && s.lines[0].label.toLowerCase() === noun.toLowerCase()
      && s.lines[0].points === s.points;
    let said = won ? ` · won the ${noun}` : "";
    if (whole) said = ` ${s.lines[0].detail}`;
    const lines = el("ul", { class: "breakdown" });
    for (const ln of s.lines) lines.append(el("li", {}, `${ln.label}: ${ln.detail} = ${signed(ln.points)}`));
    // A board that names the viewer's side "You (J♠)" has said it already.
    const name = sideName(s.side);
    const yours = you && s.seats.includes(you) && !/^You\b/.test(name) ? " (you)" : "";
    box.append(el("div", { class: `side-score${won ? " won" : ""}`, "data-side": s.side },
      el("div", {}, el("strong", {}, name), yours, said),
      el("div", { class: "pts" }, points(s.points)),
      whole ? null : lines));
  }
  // A side that lost the deal may still have scored more (Get Stuck: its
  // face-up cards count): say that the points, not the deals, decide.
  const best = Math.max(...outcome.scores.filter((s) => outcome.winners.includes(s.side)).map((s) => s.points));
  const ahead = outcome.scores.filter((s) => !outcome.winners.includes(s.side) && s.points > best);
  const note = ahead.length && noun !== "game"
    ? el("p", { class: "more-points" }, `${ahead.map((s) => sideName(s.side)).join(" and ")} scored more`
      + ` points this ${noun} than the side that won it: the match goes to the higher total.`)
    : null;
  return el("div", {}, el("h2", {}, title), el("p", {}, sentence(outcome.reason)), box, note);
}

/** Copy `text` to the clipboard; on a page without clipboard access (plain
 * http) select it in `field` (a visible input holding it) and copy that.
 * Resolves to true if it was copied. */
export async function copyText(text, field) {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch { /* fall back to the field */ }
  if (!field) return false;
  field.value = text;
  field.focus();
  field.select();
  try { return document.execCommand("copy"); } catch { return false; }
}
