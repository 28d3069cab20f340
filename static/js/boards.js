// Which board module draws a game (static/js/games/<module>.js): the room
// and the review board load the same one.

const MODULES = { "get-stuck-4": "get-stuck" };

/** The URL of the board module of `game`; `instance` (e.g. "review") loads
 * a second copy with state of its own, for a second board on one page. */
export function boardUrl(game, instance = "") {
  return `/static/js/games/${MODULES[game] || game}.js${instance ? `?${instance}` : ""}`;
}
