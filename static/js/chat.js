// The room's chat panel (docs/protocol.md, "Chat"): the messages, drawn as
// text only (markup is shown as it was typed and links are not made
// clickable), a line to write in for those who may, and, for the players of a
// room whose spectators may write, a switch that mutes them.

import { el } from "/static/js/dom.js";

const MAX = 300;

/**
 * The chat panel in `box` (holding `#chat-list`, `#chat-form`, `#chat-text`,
 * `#chat-note` and `#chat-mute`). `send(frame)` sends a frame; `who(seat)`
 * names a seat for people. Returns `{ reset(), add(message), update(state),
 * relabel() }`: `reset` empties the list (a new connection is sent the last
 * messages again), `add` shows one `chat` frame, `update` follows a state,
 * `relabel` names the senders again (once `who` knows the game's seat names).
 */
export function chatPanel({ box, send, who }) {
  const $ = (sel) => box.querySelector(sel);
  const list = $("#chat-list");
  const form = $("#chat-form");
  const input = $("#chat-text");
  const note = $("#chat-note");
  const mute = $("#chat-mute");
  let muted = false;

  input.maxLength = MAX;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    send({ type: "chat", text });
    input.value = "";
  });
  mute.addEventListener("click", () => send({ type: "mute_spectators", mute: !muted }));

  function time(at) {
    const d = new Date(at * 1000);
    return `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  }

  const sender = (m) => (m.seat ? who(m.seat, m.from) : `${m.from || "A spectator"} (watching)`);
  const sent = new WeakMap();  // list item → its chat frame

  function add(m) {
    const atBottom = list.scrollHeight - list.scrollTop - list.clientHeight < 24;
    const item = el("li", m.seat ? "chat-msg" : "chat-msg chat-spectator");
    sent.set(item, m);
    item.append(el("span", "chat-from", sender(m)), " ", el("span", "chat-text", m.text), " ",
      el("time", "chat-at", time(m.at)));
    item.querySelector("time").dateTime = new Date(m.at * 1000).toISOString();
    list.append(item);
    box.dataset.count = String(list.childElementCount);
    if (atBottom) list.scrollTop = list.scrollHeight;
  }

  function update(state) {
    const chat = state.view.chat;
    const seated = !!state.you;
    muted = chat.spectators === "muted";
    let why = "";
    if (!seated && chat.spectators === "off") why = "Only the players write here; you can read along.";
    else if (!seated && muted) why = `${chat.muted_by} has muted the spectators.`;
    else if (seated && muted) why = `Spectators are muted (by ${chat.muted_by}).`;
    note.textContent = why;
    note.hidden = !why;
    form.hidden = !seated && chat.spectators !== "on";
    mute.hidden = !seated || chat.spectators === "off";
    mute.textContent = muted ? "Let spectators write" : "Mute spectators";
  }

  return {
    reset() { list.replaceChildren(); box.dataset.count = "0"; },
    add,
    update,
    relabel() {
      for (const item of list.children) {
        const m = sent.get(item);
        if (m) item.querySelector(".chat-from").textContent = sender(m);
      }
    },
  };
}
