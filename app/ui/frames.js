// CHIEF's frame governor, the first script of every page the app serves (app/ui/page_script.py puts it there, before
// Gradio's own scripts take their copy of requestAnimationFrame).
//
// An open page asks the browser for a frame only when something on it can change. A frame asked for within
// IDLE_MS of a change to the page (a DOM mutation, the creator's pointer, keys, wheel or scrolling) or while a
// video or sound plays is asked for at once, as the browser schedules it (60 a second). On a page where nothing
// has changed for longer, a frame is asked for IDLE_FRAME_MS later instead: 4 a second.
//
// Why: Gradio 6.31's status tracker starts a timer loop (a frame per frame) when it shows "pending" and stops it
// only when its status changes. A tracker removed while pending (the page's own loading screen, at every page load)
// keeps its loop running for as long as the page is open, drawing nothing: about 6% of a core per open page,
// measured, on a page nobody touches. Anything that animates by changing the page keeps its full rate.
(() => {
  const IDLE_MS = 1000;
  const IDLE_FRAME_MS = 250;
  const nativeRequest = window.requestAnimationFrame.bind(window);
  const nativeCancel = window.cancelAnimationFrame.bind(window);
  let changed = performance.now();
  const touch = () => {
    changed = performance.now();
  };
  new MutationObserver(touch).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  for (const type of ["pointerdown", "pointermove", "keydown", "wheel", "scroll", "input", "resize"]) {
    window.addEventListener(type, touch, { capture: true, passive: true });
  }
  const playing = () => Array.from(document.querySelectorAll("video, audio")).some((m) => !m.paused && !m.ended);
  const idle = () => performance.now() - changed >= IDLE_MS && !playing();

  // A deferred request's id is negative (the browser's are positive), and names its timer, then its frame.
  const deferred = new Map();
  const counts = { atOnce: 0, deferred: 0 }; // frames asked for each way, for whoever wants to see it work
  let last = 0;
  window.requestAnimationFrame = (callback) => {
    if (!idle()) return counts.atOnce++, nativeRequest(callback);
    counts.deferred++;
    const id = --last;
    const timer = setTimeout(() => {
      deferred.set(id, { frame: nativeRequest((t) => (deferred.delete(id), callback(t))) });
    }, IDLE_FRAME_MS);
    deferred.set(id, { timer });
    return id;
  };
  window.cancelAnimationFrame = (id) => {
    const waiting = deferred.get(id);
    if (waiting === undefined) return nativeCancel(id);
    deferred.delete(id);
    if (waiting.timer !== undefined) clearTimeout(waiting.timer);
    if (waiting.frame !== undefined) nativeCancel(waiting.frame);
  };
  window.chiefFrames = { idle, counts, quietSince: () => changed, IDLE_MS, IDLE_FRAME_MS };
})();
