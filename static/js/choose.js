// The two-step choice of the grid boards: click a piece to choose it, then
// one of the targets it lights up (Suitors: a Jumper, then the square it
// lands on; Romeo and Juliet: a Joker, then the card it swaps with). Escape,
// or a click anywhere but on a clickable cell, cancels. It also keeps a move
// just sent from being sent twice, and keyboard focus on the board across
// redraws. It knows no rules: the renderer says what is clickable and what a
// click does.

/**
 * A choice for one board. `cell` is the class of the board's cells, `act`
 * the class that marks a clickable one; `redraw()` lights up the cells
 * again after the choice changed (it reads `selected` and `sent`).
 *
 * Returns an object with:
 * - `selected`: the square of the chosen piece, or null;
 * - `sent`: true from a move sent until the next state (or 1.5 s, if the
 *   move was refused, so the player may try again);
 * - `begin(state, ctx, grid)`: call on every render; a new state (room, deal
 *   or version) forgets the choice;
 * - `select(square or null)`, `send(move)`;
 * - `listen(cell, onClick)`: a click, Enter or Space on a clickable cell
 *   calls `onClick(cell.dataset.square)`;
 * - `mark(cell, label, restingLabel)`: makes the cell clickable with the
 *   accessible name `label`, or (no label) plain again, named `restingLabel`;
 * - `focused(container)` before a redraw and `refocus(square, cells)` after
 *   it: keep keyboard focus on the same cell if it is still clickable, else
 *   on the first clickable one.
 */
export function twoStep({ cell, act, redraw }) {
  const c = {
    key: "",
    selected: null,
    sent: false,
    play: null,
    grid: null,
  };

  c.begin = (state, ctx, grid) => {
    const key = `${state.room}|${state.view.deal}|${state.version}`;
    if (key !== c.key) { c.selected = null; c.sent = false; }
    c.key = key;
    c.play = ctx.play;
    c.grid = grid;
  };

  c.select = (sq) => {
    c.selected = sq;
    redraw();
  };

  c.send = (move) => {
    c.selected = null;
    c.sent = true;
    redraw();
    c.play(move);
    // If the move is refused (an error toast), let the player try again.
    const key = c.key;
    setTimeout(() => {
      if (c.key === key && c.sent) { c.sent = false; redraw(); }
    }, 1500);
  };

  c.listen = (el, onClick) => {
    el.addEventListener("click", () => onClick(el.dataset.square));
    el.addEventListener("keydown", (e) => {
      if ((e.key === "Enter" || e.key === " ") && el.classList.contains(act)) {
        e.preventDefault();
        onClick(el.dataset.square);
      }
    });
  };

  c.mark = (el, label, restingLabel) => {
    if (label) {
      el.classList.add(act);
      el.tabIndex = 0;
      el.setAttribute("role", "button");
      el.setAttribute("aria-label", label);
    } else {
      el.classList.remove(act);
      el.removeAttribute("tabindex");
      el.setAttribute("role", "gridcell");
      el.setAttribute("aria-label", restingLabel);
    }
  };

  c.focused = (container) => {
    const a = document.activeElement;
    return container.contains(a) && a.dataset ? a.dataset.square || null : null;
  };

  c.refocus = (sq, cells) => {
    if (!sq || !c.grid) return;
    const again = cells[sq];
    const target = again && again.classList.contains(act) ? again : c.grid.querySelector(`.${act}`);
    if (target) target.focus({ preventScroll: true });
  };

  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !c.selected) return;
    const sel = c.selected;
    c.select(null);
    const el = c.grid && c.grid.querySelector(`.${cell}[data-square="${sel}"]`);
    if (el && el.classList.contains(act)) el.focus({ preventScroll: true });
  });
  document.addEventListener("click", (e) => {
    if (!c.selected) return;
    const t = e.target;
    if (t instanceof Element && t.closest(`.${cell}.${act}`)) return;
    c.select(null);
  });
  return c;
}
