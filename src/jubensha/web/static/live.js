// Keeps a live page (seat, spectator, host) current: the server pushes the table's version
// over server-sent events; on each, fetch what changed and put it in place. New events are
// appended to the conversation, which follows the newest only while the reader is at its
// end. While the server cannot be reached the page says so and keeps trying; a server
// started again (another "started" value) reloads the page, which finds its seat again.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource || !window.fetch) { return; }
  var notice = document.getElementById("notice");
  var events = document.getElementById("events");
  var newer = document.getElementById("newer");
  var FRAGMENTS = ["roster", "progress", "clues", "charts", "seats", "ending", "draft"];
  var shown = {};
  var busy = false, again = false, lost = false, done = false, stream = null, retry = 1000;
  var pinned = true;  // the reader is at the end of the conversation: keep them there

  function say(message, bad) {
    if (!notice) { return; }
    notice.textContent = message || "";
    notice.hidden = !message;
    notice.classList.toggle("bad", !!bad);
  }

  function emit(name, detail) {
    live.dispatchEvent(new CustomEvent(name, {detail: detail}));
  }

  function atEnd() {
    return events.scrollHeight - events.scrollTop - events.clientHeight < 60;
  }

  function toEnd() {
    if (!events) { return; }
    events.scrollTop = events.scrollHeight;  // the list scrolls, never the window
    pinned = true;
    if (newer) { newer.hidden = true; }
  }

  function apply(data) {
    if (data.started && live.dataset.started && data.started !== live.dataset.started) {
      location.reload();  // a new server: the page is built again from its state
      return;
    }
    if (data.waiting) { return; }
    var count = parseInt(live.dataset.count || "0", 10);
    if (events && typeof data.events === "string" && data.count > count) {
      var follow = pinned || atEnd();
      events.insertAdjacentHTML("beforeend", data.events);
      live.dataset.count = String(data.count);
      if (follow) { toEnd(); } else if (newer) { newer.hidden = false; }
    }
    FRAGMENTS.forEach(function (key) {
      var element = document.getElementById(key);
      if (element && typeof data[key] === "string" && shown[key] !== data[key]) {
        element.innerHTML = data[key];
        shown[key] = data[key];
      }
    });
    if (data.ended) {
      document.querySelectorAll("[data-after-end]").forEach(function (el) { el.hidden = false; });
    }
    emit("jubensha:update", data);
    if (data.ended) {
      done = true;
      if (stream) { stream.close(); stream = null; }
    }
  }

  function fetchState() {
    var count = live.dataset.count || "0";
    return fetch(live.dataset.live + "?after=" + count,
                 {cache: "no-store", headers: {Accept: "application/json"}})
      .then(function (r) {
        if (!r.ok) { throw new Error("status " + r.status); }
        return r.json();
      });
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetchState().then(apply).catch(function () {})
      .finally(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  function offline() {
    if (lost || done) { return; }
    lost = true;
    say(live.dataset.reconnecting || "…", true);
    emit("jubensha:offline");
  }

  function online() {
    if (!lost) { return; }
    lost = false;
    say(live.dataset.reconnected || "");
    setTimeout(function () { if (!lost) { say(""); } }, 3000);
    emit("jubensha:online");
  }

  function connect() {
    stream = new EventSource(live.dataset.stream);
    stream.onmessage = refresh;
    stream.onopen = function () { retry = 1000; online(); refresh(); };
    stream.onerror = function () {
      // The stream ends when the game ends and when the server goes away: ask which.
      fetchState().then(function (data) { online(); apply(data); }).catch(offline);
      if (stream && stream.readyState === EventSource.CLOSED && !done) {
        stream = null;
        setTimeout(connect, retry);
        retry = Math.min(retry * 2, 10000);
      }
    };
  }

  if (events) {
    toEnd();
    var lastTop = events.scrollTop;
    events.addEventListener("scroll", function () {
      // Only the reader scrolling up lets go of the end; the page's own scrolling (always
      // down, and reported a frame late, after the list may have shrunk) never does.
      var top = events.scrollTop;
      if (top < lastTop - 1) { pinned = atEnd(); } else if (atEnd()) { pinned = true; }
      lastTop = top;
      if (newer && pinned) { newer.hidden = true; }
    });
    if (window.ResizeObserver) {  // the form beside it grew or shrank
      new ResizeObserver(function () { if (pinned) { toEnd(); } }).observe(events);
    }
  }
  if (newer) { newer.addEventListener("click", toEnd); }
  window.jubenshaLive = {refresh: refresh, say: say, toEnd: toEnd,
                         online: function () { return !lost; }};
  connect();
})();
