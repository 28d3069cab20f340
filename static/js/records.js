// The form that takes a match record to review (home page, /review): pasted
// text or a chosen file, checked by the server (POST /api/records) before
// it is reviewed; a refusal shows the server's sentence (which line, which
// move and why).

export const RECORD_KEY = "cardboard.record";

async function check(text) {
  const res = await fetch("/api/records", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ record: text }),
  });
  if (res.ok) return null;
  const body = await res.json().catch(() => ({}));
  return typeof body.detail === "string" ? body.detail : `the server answered ${res.status}`;
}

/** Wire every `form[data-record-form]` on the page: a chosen file fills the
 * text box; on submit the text is checked and, if it is a good record,
 * `reviewed(text)` is called. */
export function wireRecordForms(reviewed) {
  for (const form of document.querySelectorAll("form[data-record-form]")) {
    const area = form.querySelector("textarea");
    const error = form.querySelector("[data-record-error]");
    const file = form.querySelector("[data-record-file]");
    file.addEventListener("change", async () => {
      const f = file.files && file.files[0];
      if (!f) return;
      area.value = await f.text();
      error.textContent = "";
    });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const text = area.value;
      if (!text.trim()) { error.textContent = "Paste a record or choose its file first."; return; }
      const button = form.querySelector("button[type=submit]");
      button.disabled = true;
      error.textContent = "";
      try {
        const problem = await check(text);
        if (problem) error.textContent = `This record cannot be reviewed: ${problem}`;
        else reviewed(text);
      } catch (ex) {
        error.textContent = `Could not reach the server: ${ex.message}`;
      } finally {
        button.disabled = false;
      }
    });
  }
}
