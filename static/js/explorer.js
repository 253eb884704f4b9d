// Small progressive enhancements; every page works without them.
(function () {
  "use strict";

  // Words the scripts write come from the page (data-word-* on <html>, in its language).
  function word(name, fallback) {
    var key = "word" + name.charAt(0).toUpperCase() + name.slice(1);
    return document.documentElement.dataset[key] || fallback;
  }

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
      button.textContent = word("copied", "Copied");
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

  // On a phone the filter sidebar would push the results a screen down: fold it behind a
  // button that says how many filters are on (CSS shows the button on narrow screens only).
  // A search form keeps its search box in view and folds the rest.
  function activeFilters(form, skip) {
    var params = new URLSearchParams(location.search);
    var active = 0;
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name || el.name === skip || el.type === "hidden" || el.type === "submit") return;
      var on = (el.type === "checkbox" || el.type === "radio")
        ? el.checked && params.getAll(el.name).indexOf(el.value) !== -1
        : params.get(el.name);
      if (on) active += 1;
    });
    return active;
  }
  function foldFilters() {
    var forms = document.querySelectorAll(".with-sidebar > form.filters");
    Array.prototype.forEach.call(forms, function (form, index) {
      if (form.querySelector(".has-error, .form-errors")) return;
      if (!form.id) form.id = "filters-" + index;
      var search = form.classList.contains("search-form") && form.querySelector(".field-q");
      var active = activeFilters(form, search ? "q" : null);
      var label = search ? word("moreOptions", "More options") : word("filters", "Filters");
      var folded = search ? "folded-extra" : "collapsed";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "filters-toggle";
      button.setAttribute("aria-controls", form.id);
      button.setAttribute("aria-expanded", "false");
      button.textContent = active
        ? label + " (" + word("activeFilters", "{n} on").replace("{n}", active) + ")"
        : label;
      button.addEventListener("click", function () {
        var open = form.classList.toggle(folded) === false;
        button.setAttribute("aria-expanded", open ? "true" : "false");
      });
      form.classList.add(folded);
      if (search) search.parentNode.insertBefore(button, search.nextSibling);
      else form.parentNode.insertBefore(button, form);
    });
  }

  // Absolute times get their age on hover, relative ones ("3 hours ago") their date.
  var ages = [[31536000, "year"], [2592000, "month"], [86400, "day"], [3600, "hour"], [60, "minute"]];
  function age(date) {
    var seconds = (Date.now() - date.getTime()) / 1000;
    var future = seconds < 0;
    seconds = Math.abs(seconds);
    for (var i = 0; i < ages.length; i++) {
      var n = Math.floor(seconds / ages[i][0]);
      if (n >= 1) {
        var text = n + " " + ages[i][1] + (n > 1 ? "s" : "");
        return future ? "in " + text : text + " ago";
      }
    }
    return "just now";
  }
  function titleTimes() {
    var times = document.querySelectorAll("time[datetime]");
    Array.prototype.forEach.call(times, function (el) {
      var next = el.nextElementSibling;
      if (next && next.classList.contains("age")) return; // the age is already on screen
      var date = new Date(el.getAttribute("datetime"));
      if (isNaN(date.getTime())) return;
      var absolute = el.getAttribute("title") || el.getAttribute("datetime").replace("T", " ");
      el.title = absolute + " · " + age(date);
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    foldFilters();
    titleTimes();
  });
})();
