// A seat's page: the views (table, sheet, clue cards) as tabs, and the decision form.
// Your turn shows in the form, the tab title and, where the person allowed it, a
// notification. What the person types is kept in this browser until it is sent, so a
// reopened page or a lost connection loses nothing; an answer that could not be sent is
// sent again when the server is back, and an answer to a question that has changed is
// not dropped silently: the page says so and keeps the text.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.fetch) { return; }
  var panel = document.getElementById("decision");
  var title = live.dataset.title;
  var prefix = "jubensha:" + live.dataset.key + ":";
  var PENDING = prefix + "pending", UNSENT = prefix + "unsent";
  var retrying = null, retry = 1000;
  var buttons = Array.prototype.slice.call(document.querySelectorAll(".tabs button"));
  var notifyButton = document.getElementById("notify");
  var store = (function () {
    try { return window.localStorage; } catch (e) { return null; }
  })();

  function get(key) { return store ? store.getItem(key) : null; }
  function put(key, value) { if (store) { try { store.setItem(key, value); } catch (e) { /* full */ } } }
  function drop(key) { if (store) { store.removeItem(key); } }
  function say(message, bad) { if (window.jubenshaLive) { window.jubenshaLive.say(message, bad); } }
  function phone() { return window.matchMedia("(max-width: 899px)").matches; }

  // -- the views --------------------------------------------------------------------------
  function show(tab) {
    live.dataset.active = tab;
    buttons.forEach(function (button) {
      button.setAttribute("aria-pressed", String(button.dataset.show === tab));
    });
    if (tab === "table" && window.jubenshaLive) { window.jubenshaLive.toEnd(); }
  }
  buttons.forEach(function (button) {
    button.addEventListener("click", function () { show(button.dataset.show); });
  });

  // -- your turn --------------------------------------------------------------------------
  function turn(form) {
    document.title = form ? live.dataset.turnTitle + " · " + title : title;
    if (!form) { return; }
    if (phone()) {
      show("table");
    } else if (form.dataset.kind === "vote" || form.dataset.kind === "accuse") {
      show("clues");
    }
    if (document.hidden && window.Notification && Notification.permission === "granted") {
      new Notification(live.dataset.notifyTitle);
    }
  }
  if (notifyButton && window.Notification && Notification.permission === "default"
      && !document.querySelector(".ending")) {
    notifyButton.hidden = false;
    notifyButton.addEventListener("click", function () {
      Notification.requestPermission().then(function () { notifyButton.hidden = true; });
    });
  }

  // -- what the person types ----------------------------------------------------------------
  function draftKey(decision, name) { return prefix + "draft:" + decision + ":" + name; }

  function fields(form) {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.name && el.name !== "decision" && el.type !== "submit";
    });
  }

  function restore(form, decision) {
    fields(form).forEach(function (el) {
      var kept = get(draftKey(decision, el.name));
      if (kept === null) { return; }
      if (el.type === "radio") { el.checked = el.value === kept; } else { el.value = kept; }
    });
  }

  function forget(decision) {
    if (!store) { return; }
    var start = prefix + "draft:" + decision + ":";
    Object.keys(store).forEach(function (key) { if (key.indexOf(start) === 0) { drop(key); } });
  }

  function unsent(form) {
    var kept = get(UNSENT);
    if (kept === null) { return; }
    drop(UNSENT);
    var texts = JSON.parse(kept), rest = [];
    Object.keys(texts).forEach(function (name) {
      var el = form.elements[name];
      if (el && el.tagName === "TEXTAREA" && !el.value) { el.value = texts[name]; } else { rest.push(texts[name]); }
    });
    if (rest.length) {
      var box = document.createElement("textarea");
      box.readOnly = true;
      box.rows = 3;
      box.value = rest.join("\n\n");
      box.setAttribute("aria-label", live.dataset.stale);
      form.insertBefore(box, form.querySelector(".send"));
    }
  }

  function count(area) {
    var out = document.getElementById(area.dataset.counter);
    if (!out) { return; }
    var left = area.maxLength - area.value.length;
    out.textContent = area.value ? live.dataset.left.split("{n}").join(String(left)) : "";
  }

  function choose(form) {
    var picked = form.querySelector("input[name=action]:checked");
    form.querySelectorAll(".when").forEach(function (part) {
      part.classList.toggle("on", !picked || part.classList.contains("when-" + picked.value));
    });
  }

  function setup() {
    var form = document.getElementById("decision-form");
    turn(form);
    if (!form) { return; }
    var decision = form.elements.decision.value;
    restore(form, decision);
    unsent(form);
    choose(form);
    form.querySelectorAll("textarea[data-counter]").forEach(count);
    form.addEventListener("input", function (event) {
      var el = event.target;
      if (!el.name) { return; }
      if (el.type !== "radio" || el.checked) { put(draftKey(decision, el.name), el.value); }
      if (el.dataset.counter) { count(el); }
      if (el.name === "action") { choose(form); }
    });
    form.addEventListener("change", function (event) {
      if (event.target.name === "action") { choose(form); }
    });
    form.addEventListener("submit", submit);
  }

  // -- sending --------------------------------------------------------------------------
  function confirmed(form) {
    var kind = form.dataset.kind;
    var target = form.elements.target;
    if ((kind !== "vote" && kind !== "accuse") || !target || !target.value) { return true; }
    var name = target.options[target.selectedIndex].text;
    var question = target.value === "0"
      ? (kind === "vote" ? live.dataset.confirmAbstain : "")
      : (kind === "vote" ? live.dataset.confirmVote : live.dataset.confirmAccuse);
    return !question || window.confirm(question.split("{name}").join(name));
  }

  function submit(event) {
    event.preventDefault();
    var form = event.target;
    if (!confirmed(form)) { return; }
    var answer = {};
    new FormData(form).forEach(function (value, name) { answer[name] = String(value); });
    put(PENDING, JSON.stringify(answer));
    form.querySelector("button[type=submit]").disabled = true;
    send(answer, false);
  }

  function send(answer, again) {
    fetch(location.pathname, {method: "POST", cache: "no-store", body: new URLSearchParams(answer),
                              headers: {Accept: "application/json"}})
      .then(function (r) {
        if (r.status >= 500) { throw new Error("status " + r.status); }
        return r.json().then(function (reply) { settle(answer, r.status, reply, again); });
      })
      .catch(function () {  // the server is away or catching up: try again soon
        say(live.dataset.queued, true);
        clearTimeout(retrying);
        retrying = setTimeout(resend, retry);
        retry = Math.min(retry * 2, 10000);
      });
  }

  function settle(answer, status, reply, again) {
    drop(PENDING);
    clearTimeout(retrying);
    retry = 1000;
    if (status === 200) {
      forget(answer.decision);
      if (again) { say(live.dataset.resent); }
      window.jubenshaLive.refresh();
      return;
    }
    if (reply.stale) {
      var texts = {};
      Object.keys(answer).forEach(function (name) {
        if (/^(text|method|motive|question\d|reason|remark)$/.test(name) && answer[name]) { texts[name] = answer[name]; }
      });
      put(UNSENT, JSON.stringify(texts));
      forget(answer.decision);
      say(live.dataset.stale, true);
      live.dataset.decision = "stale";  // take whatever the server asks now
      window.jubenshaLive.refresh();
      return;
    }
    var form = document.getElementById("decision-form");
    var error = document.getElementById("form-error");
    if (error) { error.textContent = reply.error || reply.detail || ""; error.hidden = false; }
    if (form) { form.querySelector("button[type=submit]").disabled = false; }
  }

  function resend() {
    var kept = get(PENDING);
    if (kept !== null) { send(JSON.parse(kept), true); }
  }

  // -- live updates -------------------------------------------------------------------------
  live.addEventListener("jubensha:update", function (event) {
    var data = event.detail;
    var id = data.decision === null || data.decision === undefined ? "" : String(data.decision);
    if (data.ended) { id = "ended"; }  // the game is over: nothing is asked any more
    if (typeof data.panel === "string" && id !== (live.dataset.decision || "")) {
      panel.innerHTML = data.panel;
      live.dataset.decision = id;
      setup();
      var first = panel.querySelector("textarea, select, input[type=radio]");
      if (first && !phone()) { first.focus({preventScroll: true}); }
    }
    if (data.ended && notifyButton) { notifyButton.hidden = true; }
    var counter = document.getElementById("clue-count");
    if (counter && typeof data.clue_count === "number") { counter.textContent = String(data.clue_count); }
  });
  live.addEventListener("jubensha:online", resend);

  setup();
  resend();
})();
