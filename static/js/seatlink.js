// "Use this seat on another device": the seat link (the seat's token in the
// URL fragment, which browsers never send to the server, docs/protocol.md
// "Seat links") and its QR code, drawn in the page from the vendored
// encoder (static/js/vendor/README.md).

import qrcode from "/static/js/vendor/qrcode-generator.js";
import { svg } from "/static/js/dom.js";

const FRAGMENT = "seat=";

/** The token a seat link put in this page's address (`#seat=…`), or null. */
export function tokenFromAddress() {
  const hash = location.hash.slice(1);
  if (!hash.startsWith(FRAGMENT)) return null;
  const token = decodeURIComponent(hash.slice(FRAGMENT.length));
  return token || null;
}

/** This page's address without a seat link's fragment (for history.replaceState). */
export function addressWithoutToken() { return location.pathname + location.search; }

/** The seat link of `token` in room `room`. */
export function seatLink(room, token) {
  return `${location.origin}/r/${encodeURIComponent(room)}#${FRAGMENT}${encodeURIComponent(token)}`;
}

/** An SVG element drawing `text` as a QR code (error correction M, a
 * four-module quiet zone), one path of dark modules. */
export function qrSvg(text) {
  const qr = qrcode(0, "M");
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  const quiet = 4;
  let d = "";
  for (let r = 0; r < n; r += 1) {
    for (let c = 0; c < n; c += 1) if (qr.isDark(r, c)) d += `M${c + quiet} ${r + quiet}h1v1h-1z`;
  }
  const size = n + 2 * quiet;
  const root = svg("svg", { viewBox: `0 0 ${size} ${size}`, class: "qr", role: "img",
    "aria-label": "QR code of the seat link", "shape-rendering": "crispEdges" });
  root.append(svg("rect", { width: size, height: size, fill: "#fff" }), svg("path", { d, fill: "#000" }));
  return root;
}

/**
 * The seat link dialog: `dialog` (a <dialog> holding `#seat-qr`,
 * `#seat-url`, `#seat-copy`, `#seat-new` and `#seat-close`), the room id,
 * `token()` the seat's current token, and `renew()` which asks the server
 * for a new one (the dialog redraws when `refresh()` is called after it).
 */
export function seatLinkDialog({ dialog, room, token, renew }) {
  const $ = (sel) => dialog.querySelector(sel);
  const url = $("#seat-url");
  const copy = $("#seat-copy");

  function refresh() {
    const t = token();
    if (!t) { if (dialog.open) dialog.close(); return; }
    const link = seatLink(room, t);
    url.value = link;
    $("#seat-qr").replaceChildren(qrSvg(link));
  }

  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(url.value);
      copy.textContent = "Copied!";
    } catch {
      url.select();
      copy.textContent = "Select and copy the link";
    }
    setTimeout(() => { copy.textContent = "Copy link"; }, 2000);
  });
  $("#seat-new").addEventListener("click", () => {
    renew();
    $("#seat-new-note").hidden = false;
  });
  $("#seat-close").addEventListener("click", () => dialog.close());

  return {
    open() {
      $("#seat-new-note").hidden = true;
      refresh();
      dialog.showModal();
    },
    refresh() { if (dialog.open) refresh(); },
    close() { if (dialog.open) dialog.close(); },
  };
}
