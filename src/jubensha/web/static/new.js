// The set-up page: choosing pages in another language than the mystery's is warned of as
// it is chosen (the mystery itself stays in its own language); choosing any language
// settles what the default would have been.
(function () {
  "use strict";
  var select = document.getElementById("f-language");
  if (!select) { return; }
  var warning = document.getElementById("language-warning");
  var fallback = document.getElementById("language-default");
  var shownAtFirst = fallback && !fallback.hidden;
  function update() {
    warning.hidden = !select.value || select.value === select.dataset.script;
    if (fallback) { fallback.hidden = !shownAtFirst || !!select.value; }
  }
  select.addEventListener("change", update);
  update();
})();
