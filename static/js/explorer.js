// Small progressive enhancements; every page works without them.
(function () {
  "use strict";

  // "/" focuses the search box, as in most tools people use daily.
  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var tag = target && target.tagName;
    if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable)) return;
    var box = document.querySelector("[data-hotkey='/']");
    if (box) {
      event.preventDefault();
      box.focus();
      box.select();
    }
  });

  // Copy buttons: <button class="copy" data-copy="text">.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("button.copy[data-copy]");
    if (!button) return;
    var text = button.getAttribute("data-copy");
    var done = function () {
      var label = button.textContent;
      button.textContent = "Copied";
      button.classList.add("copied");
      setTimeout(function () { button.textContent = label; button.classList.remove("copied"); }, 1200);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () {});
    } else {
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "offscreen";
      document.body.appendChild(area);
      area.select();
      try { document.execCommand("copy"); done(); } catch (e) { /* nothing to do */ }
      document.body.removeChild(area);
    }
  });

  // Landing on #m123 inside a collapsed tool result: open what hides it.
  function revealHash() {
    if (!location.hash) return;
    var el = document.getElementById(location.hash.slice(1));
    if (!el) return;
    var node = el.parentElement;
    while (node) {
      if (node.tagName === "DETAILS") node.open = true;
      node = node.parentElement;
    }
    el.classList.add("target-hit");
    el.scrollIntoView({ block: "center" });
  }
  window.addEventListener("hashchange", revealHash);
  document.addEventListener("DOMContentLoaded", revealHash);
})();
