// Home, rules and 404 pages: buttons that create a room and open it.
// A button `data-create="<game id>"` creates a room of that game with the
// options found in the nearest `form` (fields named after the options).

async function createRoom(game, options) {
  const res = await fetch("/api/rooms", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ game, options }),
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const msg = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail || body);
    throw new Error(msg);
  }
  return body;
}

function optionsFrom(form) {
  const out = {};
  if (!form) return out;
  for (const f of form.querySelectorAll("[data-option]")) {
    if (f.value === "") continue;
    const kind = f.dataset.kind || "int";
    out[f.dataset.option] = kind === "int" ? Number(f.value) : f.value;
  }
  return out;
}

document.addEventListener("click", async (e) => {
  const btn = e.target.closest("[data-create]");
  if (!btn) return;
  e.preventDefault();
  const form = btn.closest("form");
  const err = form && form.querySelector(".create-error");
  btn.disabled = true;
  try {
    const extra = btn.dataset.extra ? JSON.parse(btn.dataset.extra) : {};
    const room = await createRoom(btn.dataset.create, { ...optionsFrom(form), ...extra });
    location.href = room.url;
  } catch (ex) {
    if (err) err.textContent = `Could not create the room: ${ex.message}`;
    else alert(`Could not create the room: ${ex.message}`);
    btn.disabled = false;
  }
});
document.addEventListener("submit", (e) => {
  if (e.target.matches("form.create")) e.preventDefault();
});
