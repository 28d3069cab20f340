// Grid boards shared by the games laid out on a grid of squares (Get Stuck,
// Romeo and Juliet, Suitors): square names, the grid element with one cell
// per square, and the coordinate labels (column letters along the top, row
// numbers down the left) that let a player find the squares the log and the
// hints name ("moves the 5♥ from d1 to d4").
//
// Squares follow the shared notation (docs/notation.md): columns a, b, c …
// left to right, rows 1, 2, 3 … top to bottom, a1 top-left.

/** The square of index `i` in a layout `width` squares wide, read row by row
 * from a1: (9, 7) → "c2". */
export function squareOf(i, width) {
  return String.fromCharCode(97 + (i % width)) + (Math.floor(i / width) + 1);
}

/** 0-based [column, row] of a square name: "c2" → [2, 1]. */
export function colRow(sq) { return [sq.charCodeAt(0) - 97, Number(sq.slice(1)) - 1]; }

function coord(kind, text) {
  const s = document.createElement("span");
  s.className = `coord coord-${kind}`;
  s.textContent = text;
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
  const grid = document.createElement("div");
  grid.className = `board w${width}${className ? ` ${className}` : ""}`;
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
  const frame = document.createElement("div");
  frame.className = "grid-frame";
  frame.append(grid);
  return { frame, grid, cells };
}
