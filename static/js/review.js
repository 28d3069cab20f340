// The review board: a finished deal step by step, drawn by the same board
// module as play (static/js/games/<board>.js, named by the game's metadata
// in the review's summary) from positions the
// server sends (docs/protocol.md, "Records and reviews"). It knows no rules:
// every step's board, the seats to move, the sentences and the score lines
// come from the server; it only chooses which step to draw.
//
// Step through with the buttons, the slider, a click on a move, or the keys
// ← → (one move), Home and End. `openReview(container, source, options)`
// draws it in `container`; a source says where the match comes from: a room
// (roomSource), a finished match's id (matchSource) or a record's text
// (recordSource).

import { svg } from "./dom.js";
import { copyText, el, outcomeBlock, points, sentence } from "./ui.js";

// ---------------------------------------------------------------- sources
async function answer(res) {
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(typeof body.detail === "string" ? body.detail : `the server answered ${res.status}`);
  return body;
}
const getJSON = (url) => fetch(url, { headers: { Accept: "application/json" } }).then(answer);
const postJSON = (url, body) => fetch(url, {
  method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
}).then(answer);

/** The finished deals of the match in play in room `room`. */
export function roomSource(room) {
  const base = `/api/rooms/${encodeURIComponent(room)}`;
  return {
    key: `room ${room}`, recordUrl: `${base}/record`,
    summary: () => getJSON(`${base}/review`), deal: (n) => getJSON(`${base}/deals/${n}`),
  };
}

/** A finished match by its id: its page /m/<id> can link to a position. */
export function matchSource(id) {
  const m = encodeURIComponent(id);
  return {
    key: `match ${id}`, recordUrl: `/m/${m}.txt`,
    summary: () => getJSON(`/api/matches/${m}`), deal: (n) => getJSON(`/api/matches/${m}/deals/${n}`),
    link: (n, i) => `${location.origin}/m/${m}#deal${n}-move${i}`,
  };
}

/** A record's text, checked by the server each time and stored nowhere. */
export function recordSource(text) {
  return {
    key: "record",
    summary: () => postJSON("/api/records", { record: text }),
    deal: (n) => postJSON(`/api/records/deals/${n}`, { record: text }),
  };
}

/** "#deal2-move17" → { deal: 2, move: 17 } ("#deal2": move null); else null. */
export function parsePosition(hash) {
  const m = /^#deal(\d+)(?:-move(\d+))?$/.exec(hash || "");
  return m ? { deal: Number(m[1]), move: m[2] === undefined ? null : Number(m[2]) } : null;
}

/**
 * Draw the review of `source` in `container` and resolve to its controller
 * (`show(deal, move)`, `close()`). Options: `deal` and `move` to open at
 * (default: deal 1, its opening position); `onPosition(deal, move)` after
 * each step; `onClose` adds a "Back to the table" button (Escape too); `newTab` opens a
 * room made by "Play this deal again" in a new tab; `facing` the seat of the
 * player who reviews from the room, which a board drawn from one seat's side
 * (Stucco's hands) puts nearest, as at the table; `toast(text, kind)`
 * tells the user of a failure. Rejects with the server's message if the
 * match cannot be loaded.
 */
export async function openReview(container, source, options = {}) {
  const summary = await source.summary();
  // A copy of the module of its own ("?review"), so that the room's board and
  // the review board never share what a module keeps between two frames.
  const renderer = await import(`/static/js/games/${summary.board}.js?review`);
  const review = new Review(container, source, summary, renderer, options);
  const last = summary.deals.length;
  if (last) await review.show(Math.min(Math.max(options.deal || 1, 1), last), options.move);
  return review;
}

/** The step buttons' icons: a triangle, with a bar for first and last. */
const ICONS = {
  first: ["M4 3h2v10H4z", "M13 3v10L7 8z"], prev: ["M11 3v10L5 8z"],
  next: ["M5 3v10l6-5z"], last: ["M10 3h2v10h-2z", "M3 3v10l6-5z"],
};
function icon(name) {
  const s = svg("svg", { viewBox: "0 0 16 16", width: 16, height: 16, "aria-hidden": "true", focusable: "false" });
  for (const d of ICONS[name]) s.append(svg("path", { d, fill: "currentColor" }));
  return s;
}

class Review {
  constructor(container, source, summary, renderer, options) {
    this.container = container;
    this.source = source;
    this.summary = summary;
    this.renderer = renderer;
    this.options = options;
    this.deals = new Map();   // deal number → the server's steps
    this.n = 0;               // the deal shown
    this.i = 0;               // the step shown: 0 opening, i after move i
    this.drawn = null;        // the last frame drawn, for the board's animation
    this.closed = false;
    this.onKey = (e) => this.key(e);
    document.addEventListener("keydown", this.onKey);
    this.build();
  }

  // ---- names, as the board module words them
  noun() { return this.summary.deal_noun; }
  seatLabel(seat) {
    return this.renderer.seatLabel && this.drawn ? this.renderer.seatLabel(seat, this.drawn) : seat;
  }
  sideName(side) {
    if (this.renderer.sideLabel && this.drawn) return this.renderer.sideLabel(side, this.drawn);
    const s = this.summary.sides.find((x) => x.side === side);
    return s && s.seats.length === 1 ? this.seatLabel(s.seats[0]) : side;
  }

  // ---- the page
  build() {
    const s = this.summary;
    const b = (attrs, text) => el("button", { class: "btn small", type: "button", ...attrs }, text);
    this.title = el("h2", { id: "review-deal" });
    this.dealTabs = el("div", { class: "review-deals", role: "group", "aria-label": `${sentence(this.noun())}s` });
    if (s.deals.length > 1) {
      for (const d of s.deals) {
        this.dealTabs.append(b({ "data-deal": d.deal, onclick: () => this.show(d.deal, 0) }, String(d.deal)));
      }
    }
    const acts = el("div", { class: "review-actions" });
    // A game this server no longer deals (CARDBOARD_GAMES) is reviewed, not played.
    const playable = s.offered !== false;
    if (s.deals.length && playable) {
      acts.append(el("button", { class: "btn small primary", type: "button", id: "play-again",
        onclick: (e) => this.playAgain(e.currentTarget, false) }, `Play this ${this.noun()} again`));
    }
    if (s.over && s.seed && playable) {
      acts.append(b({ id: "new-from-seed", onclick: (e) => this.playAgain(e.currentTarget, true) },
        "New match from this seed"));
    }
    if (this.source.recordUrl) {
      acts.append(el("a", { class: "btn small", id: "record-link", href: this.source.recordUrl,
        download: `${s.game}-${s.date || "match"}.txt` }, "Record (text)"));
    }
    const head = el("div", { class: "review-head" }, this.title, this.dealTabs);
    if (this.options.onClose) {
      head.append(b({ id: "review-close", onclick: () => this.close() }, "Back to the table"));
    }

    this.board = el("div", { class: "review-board", id: "review-board" });
    this.extra = el("div", { class: "review-extra" });
    this.caption = el("p", { class: "review-caption", id: "review-caption", "aria-live": "polite" });
    this.slider = el("input", { type: "range", id: "review-slider", min: "0", max: "0", value: "0",
      "aria-label": `Position in the ${this.noun()}` });
    this.slider.addEventListener("input", () => this.go(Number(this.slider.value)));
    this.where = el("span", { class: "review-where", id: "review-where" });
    const controls = el("div", { class: "review-controls" },
      b({ "data-go": "first", "aria-label": "First position", onclick: () => this.go(0) }, icon("first")),
      b({ "data-go": "prev", "aria-label": "Previous move", onclick: () => this.go(this.i - 1) }, icon("prev")),
      this.slider,
      b({ "data-go": "next", "aria-label": "Next move", onclick: () => this.go(this.i + 1) }, icon("next")),
      b({ "data-go": "last", "aria-label": "Last position", onclick: () => this.go(this.steps().length - 1) },
        icon("last")),
      this.where);
    this.result = el("div", { class: "result review-result", id: "review-result", hidden: true });
    const table = el("section", { class: "table review-table", "aria-label": "The reviewed position" },
      this.caption, this.board, this.extra);

    this.moves = el("ol", { class: "log review-moves", id: "review-moves" });
    const side = el("aside", { class: "side" },
      el("section", { class: "panel", "aria-labelledby": "review-moves-h" },
        el("h2", { id: "review-moves-h" }, "Moves"), this.moves),
      this.aboutBox = el("section", { class: "panel review-about", "aria-label": "The match" }));
    if (this.source.link) {
      this.linkField = el("input", { type: "text", readonly: true, id: "review-link-field",
        "aria-label": "Link to this position" });
      const copy = b({ id: "copy-position", onclick: async () => {
        const ok = await copyText(this.source.link(this.n, this.i), this.linkField);
        copy.textContent = ok ? "Link copied!" : "Copy the link above";
        setTimeout(() => { copy.textContent = "Copy"; }, 2000);
      } }, "Copy");
      side.append(el("section", { class: "panel review-share", "aria-labelledby": "review-share-h" },
        el("h2", { id: "review-share-h" }, "Link to this position"),
        el("div", { class: "review-share-row" }, this.linkField, copy)));
    }
    // The step controls come after the layout: directly under it in one
    // column (a phone), beside it on a laptop (review.css).
    const main = el("div", { class: "review-main" }, table, controls, this.result);
    const grid = el("div", { class: "room-grid review-grid" }, main, side);
    if (!s.deals.length) {
      this.container.replaceChildren(head, el("p", { class: "panel" },
        `No ${this.noun()} of this match is over yet: a ${this.noun()} can be reviewed once it is over.`));
    } else {
      this.container.replaceChildren(head, acts, grid);
    }
    this.container.hidden = false;
  }

  /** The match in words: who sat where, the date, the totals and result, the seed. */
  about() {
    const s = this.summary;
    const who = el("ul", { class: "review-seats" });
    for (const seat of s.seats) {
      const article = /^[aeiou]/.test(seat.level || "") ? "an" : "a";  // "an easy computer"
      const level = seat.kind === "computer" || !seat.level ? ""
        : `, played by ${article} ${seat.level} computer for a while`;
      who.append(el("li", { "data-seat": seat.seat }, el("strong", {}, seat.name || "(nobody)"),
        ` · ${this.seatLabel(seat.seat)}${level}`));
    }
    const totals = Object.entries(s.totals).map(([side, p]) => `${this.sideName(side)} ${points(p)}`).join(" · ");
    const out = [el("h2", {}, "The match"), who];
    // (Only for a match that is over: one in play has no winners yet.)
    const won = !s.over ? "" : s.match_winners.length !== 1 ? (this.noun() === "game" ? "A draw." : "A tie.")
      : `${this.sideName(s.match_winners[0])} won.`;
    const over = s.deals.length === 1 ? "is over" : "are over";
    out.push(el("p", { class: "sub" }, s.over ? `Finished. Totals: ${totals}. ${won}`
      : `In play: ${s.deals.length} ${this.noun()}${s.deals.length === 1 ? "" : "s"} ${over} so far. Totals: ${totals}.`));
    const facts = [];
    if (s.date) facts.push(`Started ${s.date}`);
    if (s.seed) facts.push(`match seed ${s.seed}`);
    if (s.given) facts.push(`${this.noun()} 1 was played again from an earlier match`);
    if (facts.length) out.push(el("p", { class: "sub" }, `${facts.join(" · ")}.`));
    return out;
  }

  steps() { return this.deal ? this.deal.steps : []; }

  /** Open deal `n` at step `move` (its opening position by default). */
  async show(n, move = 0) {
    let deal = this.deals.get(n);
    if (!deal) {
      try {
        deal = await this.source.deal(n);
      } catch (e) {
        if (this.options.toast) this.options.toast(`Could not load ${this.noun()} ${n}: ${e.message}`, "error");
        return;
      }
      this.deals.set(n, deal);
    }
    if (this.closed) return;  // closed while the deal loaded: the container is another's now
    this.deal = deal;
    this.n = n;
    this.drawn = null;
    const d = this.summary.deals[n - 1];
    const total = this.summary.deals.length;
    this.title.textContent = `${sentence(this.noun())} ${n}${total > 1 ? ` of ${total}` : ""}`;
    for (const t of this.dealTabs.querySelectorAll("[data-deal]")) {
      t.setAttribute("aria-pressed", String(Number(t.dataset.deal) === n));
    }
    this.slider.max = String(deal.steps.length - 1);
    this.moves.replaceChildren();
    const item = (i, text, notation) => el("li", { "data-step": i },
      el("button", { type: "button", class: "review-move", onclick: () => this.go(i) },
        el("span", { class: "n" }, i ? `${i}.` : ""), text,
        notation ? el("span", { class: "notation" }, notation) : null));
    this.moves.append(item(0, "Opening position"));
    deal.moves.forEach((m, k) => this.moves.append(item(k + 1, sentence(m.text), m.move)));
    this.go(move === null || move === undefined ? 0 : move);
    if (d) this.container.dataset.deal = String(d.deal);
    this.aboutBox.replaceChildren(...this.about());
  }

  /** The step `i` as a state frame that the board module can draw (with
   * `facing`, the reviewing player's seat, which no state from the server has). */
  frame(i) {
    const s = this.summary, deal = this.deal, step = deal.steps[i];
    const last = deal.steps.length - 1;
    return {
      type: "state", version: i, room: `review ${this.source.key}`, game: s.game, you: null,
      facing: this.options.facing || null,
      phase: step.phase, to_move: step.to_move, legal_moves: [], moves: [],
      view: {
        title: s.title, seats: s.seats.map((x) => ({ ...x, connected: false })), sides: s.sides,
        options: s.options, deal: this.n, log: deal.moves.slice(0, i),
        outcome: i === last ? deal.outcome : null, history: [], totals: s.totals,
        match_winners: [], seed: null, seeded: false, match_id: null, board: step.board,
      },
    };
  }

  /** Draw step `i` (clamped to the deal). */
  go(i) {
    if (!this.deal) return;
    const last = this.deal.steps.length - 1;
    i = Math.max(0, Math.min(last, Number.isFinite(i) ? i : 0));
    const frame = this.frame(i);
    const prev = this.drawn;
    this.i = i;
    this.drawn = frame;
    this.renderer.render(this.board, frame, { play: () => {}, prev, extra: this.extra });
    this.slider.value = String(i);
    this.container.dataset.step = String(i);
    this.container.dataset.steps = String(last);
    this.where.textContent = i ? `Move ${i} of ${last}` : `Start · ${last} moves`;
    const m = i ? this.deal.moves[i - 1] : null;
    this.caption.textContent = m ? `${i}. ${sentence(m.text)}` : `${sentence(this.noun())} ${this.n} as dealt`;
    for (const li of this.moves.children) {
      if (Number(li.dataset.step) === i) li.setAttribute("aria-current", "step");
      else li.removeAttribute("aria-current");
    }
    this.scrollMove(i);
    this.result.hidden = i !== last;
    if (i === last) {
      this.result.replaceChildren(outcomeBlock(this.deal.outcome, `${sentence(this.noun())} ${this.n}`, {
        sideName: (side) => this.sideName(side), noun: this.noun(), you: this.options.facing }),
      ...this.matchEnd());
    }
    for (const [name, off] of [["first", i === 0], ["prev", i === 0], ["next", i === last], ["last", i === last]]) {
      const btn = this.container.querySelector(`[data-go="${name}"]`);
      if (btn) btn.disabled = off;
    }
    if (this.linkField) this.linkField.value = this.source.link(this.n, i);
    if (this.options.onPosition) this.options.onPosition(this.n, i);
  }

  /** After the match's last deal: the totals and the winner. */
  matchEnd() {
    const s = this.summary;
    if (!s.over || this.n !== s.deals.length) return [];
    const w = s.match_winners;
    const game = this.noun() === "game";
    const text = w.length !== 1 ? (game ? "The game is a draw." : "The match is a tie.")
      : `${this.sideName(w[0])} won the ${game ? "game" : "match"}.`;
    const totals = Object.entries(s.totals).map(([side, p]) => `${this.sideName(side)} ${points(p)}`).join(" · ");
    return [el("p", { id: "review-match-result" }, el("strong", {}, text), " ", totals)];
  }

  /** Keep the current move in view inside the move list (not the page). */
  scrollMove(i) {
    const li = this.moves.children[i];
    if (!li) return;
    const list = this.moves;
    const top = li.offsetTop;
    if (top < list.scrollTop || top + li.offsetHeight > list.scrollTop + list.clientHeight) {
      list.scrollTop = top - (list.clientHeight - li.offsetHeight) / 2;
    }
  }

  key(e) {
    if (this.container.hidden || e.altKey || e.ctrlKey || e.metaKey) return;
    const t = e.target;
    const inside = (sel) => t && t.closest && t.closest(sel);
    // Escape goes back to the table, as "Back to the table" does (in a room),
    // from anywhere but a text field, and before the deal has come.
    if (e.key === "Escape" && this.options.onClose && !inside("textarea, select, [contenteditable], input:not([type=range])")) {
      e.preventDefault();
      this.close();
      return;
    }
    // The slider handles its own keys (and says so with "input"); text fields keep theirs.
    if (!this.deal || inside("input, textarea, select, [contenteditable]")) return;
    const last = this.deal.steps.length - 1;
    const to = { ArrowRight: this.i + 1, ArrowLeft: this.i - 1, Home: 0, End: last }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    this.go(to);
  }

  /** "Play this deal again" (`whole` false) or "New match from this seed":
   * a new room with the same options, computer players in the seats they
   * held (and the first seat left for the user), then go there. */
  async playAgain(button, whole) {
    const s = this.summary;
    const computers = s.seats.filter((x) => x.kind === "computer");
    let seats = computers.map((x) => x.seat);
    if (seats.length === s.seats.length) seats = seats.slice(1);
    const body = { game: s.game, options: { ...s.options } };
    const d = s.deals[(whole ? 1 : this.n) - 1];
    if (whole) body.options.seed = s.seed;
    if (!whole || s.given) body.deal = { seed: d.seed, starter: d.starter };
    if (seats.length) {
      // Each computer player at the level it played (bots.levels).
      const levels = Object.fromEntries(computers.filter((x) => seats.includes(x.seat) && x.level)
        .map((x) => [x.seat, x.level]));
      body.bots = { level: "medium", seats, levels };
    }
    const tab = this.options.newTab ? window.open("about:blank", "_blank") : null;
    button.disabled = true;
    try {
      const made = await postJSON("/api/rooms", body);
      const url = made.seat ? `${made.url}?sit=${encodeURIComponent(made.seat)}` : made.url;
      if (tab) {
        tab.opener = null;
        tab.location = url;
      } else {
        location.href = url;
      }
    } catch (e) {
      if (tab) tab.close();
      if (this.options.toast) this.options.toast(`Could not create the room: ${e.message}`, "error");
    } finally {
      button.disabled = false;
    }
  }

  close() {
    this.closed = true;
    document.removeEventListener("keydown", this.onKey);
    this.container.hidden = true;
    this.container.replaceChildren();
    if (this.options.onClose) this.options.onClose();
  }
}
