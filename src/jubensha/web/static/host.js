// The host's table page: copy buttons for the links, and a confirmation before removing
// a person (without a script the server asks on a page of its own).
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }

  function reveal() {
    document.querySelectorAll("button.copy").forEach(function (button) { button.hidden = false; });
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text);
    }
    var area = document.createElement("textarea");  // plain http on a LAN: no clipboard API
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "sr-only";
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    document.body.removeChild(area);
    return Promise.resolve();
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("button.copy");
    if (!button) { return; }
    copy(button.dataset.copy).then(function () {
      button.textContent = live.dataset.copied;
    });
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList.contains("remove")) { return; }
    var question = live.dataset.confirmRemove.split("{name}").join(form.dataset.name);
    if (window.confirm(question)) {
      form.elements.confirm.value = "yes";
    } else {
      event.preventDefault();
    }
  });

  live.addEventListener("jubensha:update", reveal);
  reveal();
})();
