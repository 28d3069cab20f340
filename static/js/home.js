// Home, rules and 404 pages: buttons that create a room and open it.
// A button `data-create="<game id>"` creates a room of that game with the
// options found in the nearest `form` (fields named after the options).
// A button `data-vs-computer="<game id>"` does the same with computer players
// in every seat but the first (level from the form's `[data-bot-level]`), then
// opens the room with `?sit=<that seat>` so that the room page seats the user.
// A field `data-option="seed"` gives a seed (its digits, sent as text: a
// JavaScript number cannot hold every seed exactly). The record form opens
// the review of a pasted or uploaded match record (records.js).

import { RECORD_KEY, wireRecordForms } from "./records.js";

const LEVEL_KEY = "cardboard.botLevel";

async function createRoom(game, options, bots) {
  const res = await fetch("/api/rooms", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(bots ? { game, options, bots } : { game, options }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const msg = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail || body);
    throw new Error(msg);
  }
  return body;
}

/** The server names an option as the API does ("option 'target' must be at
 * least 1"); say it as the form does ("“Play to” must be at least 1"): the
 * field's `data-words`, else the start of its label. */
function inFormWords(message, form) {
  return message.replace(/option '([a-z_]+)'/g, (whole, name) => {
    const field = form && form.querySelector(`[data-option="${name}"]`);
    const label = field && field.closest("label");
    const words = (field && field.dataset.words)
      || (label && label.firstChild && label.firstChild.textContent.trim());
    return words ? `“${words}”` : whole;
  });
}

function optionsFrom(form) {
  const out = {};
  if (!form) return out;
  for (const f of form.querySelectorAll("[data-option]")) {
    const kind = f.dataset.kind || "int";
    if (kind === "bool") { out[f.dataset.option] = f.checked; continue; }
    if (f.value === "") continue;
    out[f.dataset.option] = kind === "int" ? Number(f.value) : f.value;
  }
  return out;
}

document.addEventListener("click", async (e) => {
  const btn = e.target.closest("[data-create], [data-vs-computer]");
  if (!btn) return;
  e.preventDefault();
  const form = btn.closest("form");
  const err = form && form.querySelector(".create-error");
  btn.disabled = true;
  try {
    const extra = btn.dataset.extra ? JSON.parse(btn.dataset.extra) : {};
    const options = { ...optionsFrom(form), ...extra };
    if (btn.dataset.vsComputer) {
      const pick = form && form.querySelector("[data-bot-level]");
      const level = pick ? pick.value : "medium";
      localStorage.setItem(LEVEL_KEY, level);
      const room = await createRoom(btn.dataset.vsComputer, options, { level, seats: "others" });
      location.href = `${room.url}?sit=${encodeURIComponent(room.seat)}`;
    } else {
      const room = await createRoom(btn.dataset.create, options);
      location.href = room.url;
    }
  } catch (ex) {
    const msg = inFormWords(ex.message, form);
    if (err) err.textContent = `Could not create the room: ${msg}`;
    else alert(`Could not create the room: ${msg}`);
    btn.disabled = false;
  }
});

// A choice may allow only some values of another option: `data-only-<option>`
// lists them ("2": Suitors' Colours variant is for two players). While it is
// chosen, that option's other values are disabled, so that the form never
// offers a room the server would refuse.
function applyLimits(form) {
  const allowed = {};
  for (const sel of form.querySelectorAll("select[data-option]")) {
    const chosen = sel.selectedOptions[0];
    for (const [key, values] of Object.entries(chosen ? chosen.dataset : {})) {
      if (key.startsWith("only")) allowed[key.slice(4).toLowerCase()] = values.split(" ");
    }
  }
  for (const sel of form.querySelectorAll("select[data-option]")) {
    const only = allowed[sel.dataset.option];
    for (const o of sel.options) o.disabled = Boolean(only) && !only.includes(o.value);
    if (only && !only.includes(sel.value)) sel.value = only[0];
  }
}
// A choice that changes the size of the layout (Suitors' Big board) carries
// it, from the server (`data-layout`, the game's `layouts`): the card's
// blurb says the size of the table the form would make.
function showLayout(form) {
  const size = form.querySelector("[data-layout-size]");
  if (!size) return;
  for (const sel of form.querySelectorAll("select[data-option]")) {
    const chosen = sel.selectedOptions[0];
    if (chosen && chosen.dataset.layout) size.textContent = chosen.dataset.layout;
  }
}
document.addEventListener("change", (e) => {
  const form = e.target.closest && e.target.closest("form");
  if (!form || !e.target.matches("select[data-option]")) return;
  applyLimits(form);
  showLayout(form);
});
// (A page come back to may have kept the choices made on it.)
for (const form of document.querySelectorAll("form")) {
  applyLimits(form);
  showLayout(form);
}

// The level chosen last time is chosen again.
const remembered = localStorage.getItem(LEVEL_KEY);
if (remembered) {
  for (const pick of document.querySelectorAll("[data-bot-level]")) {
    if ([...pick.options].some((o) => o.value === remembered)) pick.value = remembered;
  }
}

document.addEventListener("submit", (e) => {
  if (e.target.matches("form.create")) e.preventDefault();
});

// A good record opens its review (kept in this tab's session only).
wireRecordForms((text) => {
  sessionStorage.setItem(RECORD_KEY, text);
  location.href = "/review";
});
