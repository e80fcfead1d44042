// Keeps a seat or spectator page live: the server pushes a version number over
// server-sent events; on each, fetch what changed and put it in place. A form being
// filled in is replaced only when the decision it answers has changed.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource) { return; }
  var busy = false, again = false;

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    var count = parseInt(live.dataset.count || "0", 10);
    fetch(live.dataset.live + "?after=" + count, {cache: "no-store"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        var events = document.getElementById("events");
        if (events && data.count > count) {
          events.insertAdjacentHTML("beforeend", data.events);
          live.dataset.count = String(data.count);
          events.lastElementChild && events.lastElementChild.scrollIntoView({block: "nearest"});
        }
        var panel = document.getElementById("decision");
        var id = data.decision === null || data.decision === undefined ? "" : String(data.decision);
        if (panel && "panel" in data && id !== (live.dataset.decision || "")) {
          panel.innerHTML = data.panel;
          live.dataset.decision = id;
          var first = panel.querySelector("textarea, select, input[type=radio]");
          if (first) { first.focus(); }
        }
        var charts = document.getElementById("charts");
        if (charts && data.charts) { charts.innerHTML = data.charts; }
        if (data.ended) { var end = document.getElementById("ended"); if (end) { end.hidden = false; } }
      })
      .catch(function () {})
      .finally(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  var stream = new EventSource(live.dataset.stream);
  stream.onmessage = refresh;
  // EventSource reconnects by itself; on reconnection catch up with what was missed.
  stream.onopen = refresh;
})();
