// "Your turn" alerts for the room page: the tab title, a short sound (made
// with WebAudio, no file) and, while the tab is hidden, a browser
// notification. The sound can be switched off (remembered in localStorage);
// the notification permission is asked for only when the user clicks
// "Notify me", never on load.

const SOUND_KEY = "cardboard.sound";

/**
 * The alerts of one page. `title` is the game's title; `sound` and
 * `notify` are the two buttons the page shows (their text is kept up to
 * date here). Returns `{ update(myTurn, text) }`: call it after every state
 * with whether it is this page's seat's turn (and a line for the
 * notification); the alerts go off when it becomes true, and the title
 * goes back when it becomes false.
 */
export function turnAlerts({ title, sound, notify }) {
  const plainTitle = document.title;
  let myTurn = false;
  let audio = null;

  const soundOn = () => localStorage.getItem(SOUND_KEY) !== "off";
  function showSound() {
    sound.textContent = soundOn() ? "Sound: on" : "Sound: off";
    sound.setAttribute("aria-pressed", soundOn() ? "true" : "false");
  }
  sound.addEventListener("click", () => {
    localStorage.setItem(SOUND_KEY, soundOn() ? "off" : "on");
    showSound();
    if (soundOn()) beep();
  });
  showSound();

  const canNotify = "Notification" in window;
  function showNotify() {
    notify.hidden = !canNotify || Notification.permission !== "default";
  }
  notify.addEventListener("click", async () => {
    if (!canNotify) return;
    try { await Notification.requestPermission(); } catch { /* an old browser: no promise */ }
    showNotify();
  });
  showNotify();

  // Browsers start an audio context only after a click or a key press: make
  // it on the first one, so that the first turn can already be heard.
  function wake() {
    if (!audio && window.AudioContext) audio = new AudioContext();
    if (audio && audio.state === "suspended") audio.resume().catch(() => {});
  }
  for (const type of ["pointerdown", "keydown"]) document.addEventListener(type, wake, { passive: true });

  /** Two short rising tones. */
  function beep() {
    // No click or key press on this page yet: the browser would refuse to
    // start the sound (and log a warning each time), so do not ask.
    if (!audio && navigator.userActivation && !navigator.userActivation.hasBeenActive) return;
    wake();
    if (!audio || audio.state !== "running") return;
    const now = audio.currentTime;
    [[660, 0], [880, 0.13]].forEach(([freq, at]) => {
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.type = "sine";
      osc.frequency.value = freq;
      gain.gain.setValueAtTime(0.0001, now + at);
      gain.gain.exponentialRampToValueAtTime(0.18, now + at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, now + at + 0.12);
      osc.connect(gain).connect(audio.destination);
      osc.start(now + at);
      osc.stop(now + at + 0.13);
    });
  }

  function notifyNow(text) {
    if (!canNotify || Notification.permission !== "granted" || document.visibilityState !== "hidden") return;
    try {
      const n = new Notification(`Your turn · ${title}`, { body: text, tag: "cardboard-turn" });
      n.onclick = () => { window.focus(); n.close(); };
    } catch { /* some browsers only notify from a service worker */ }
  }

  function update(turn, text = "") {
    if (turn && !myTurn) {
      document.title = `● Your turn · ${title}`;
      if (soundOn()) beep();
      notifyNow(text);
    } else if (!turn && myTurn) {
      document.title = plainTitle;
    }
    myTurn = turn;
  }

  return { update };
}
