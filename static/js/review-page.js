// The review pages: /m/<id> (a finished match, read-only and shareable) and
// /review (a record pasted or uploaded on the home page, kept in this tab's
// session only). The position shown is in the address: #deal2-move17.

import { matchSource, openReview, parsePosition, recordSource } from "./review.js";
import { RECORD_KEY, wireRecordForms } from "./records.js";
import { el, showToast } from "./ui.js";

const root = document.getElementById("review-root");
const box = document.getElementById("review");
const toasts = document.getElementById("toasts");

function toast(message, kind = "info") { showToast(toasts, message, kind); }

async function start(source) {
  const at = parsePosition(location.hash) || {};
  try {
    const review = await openReview(box, source, {
      deal: at.deal, move: at.move, toast,
      onPosition: (n, i) => history.replaceState(null, "", `#deal${n}-move${i}`),
    });
    document.getElementById("review-title").textContent = `${review.summary.title}: review`;
    window.addEventListener("hashchange", () => {
      // An address typed by hand may name a deal that is not there: the nearest one.
      const to = parsePosition(location.hash);
      const last = review.summary.deals.length;
      if (to && last) review.show(Math.min(Math.max(to.deal || 1, 1), last), to.move);
    });
    root.dataset.ready = "true";
  } catch (e) {
    box.hidden = false;
    box.replaceChildren(el("p", { class: "panel", role: "alert" }, `This match cannot be shown: ${e.message}`));
  }
}

if (root.dataset.source === "match") {
  start(matchSource(root.dataset.match));
} else {
  const text = sessionStorage.getItem(RECORD_KEY);
  const form = document.getElementById("record-box");
  const another = document.getElementById("another-record");
  another.addEventListener("click", () => {
    form.hidden = false;
    another.hidden = true;
    form.querySelector("textarea").focus();
  });
  wireRecordForms((checked) => {
    sessionStorage.setItem(RECORD_KEY, checked);
    location.replace("/review");  // a fresh page for the new record, at its start
  });
  if (text) {
    start(recordSource(text));
    another.hidden = false;
  } else {
    form.hidden = false;
  }
}
