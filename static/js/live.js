/*
 * Live updates for /live/ and for a followed session page.
 *
 * Why no library: the need is two polling loops (fetch an HTML fragment, swap or append it),
 * about sixty lines; a framework would add a dependency that must be vendored (no CDN under
 * the strict CSP, script-src 'self') for no gain.  Everything here is progressive: without
 * JavaScript the live page reloads itself and the session page is a plain transcript.
 */
(function () {
  "use strict";

  function every(seconds, task) {
    var busy = false;
    setInterval(function () {
      if (busy || document.hidden) return;
      busy = true;
      task().then(function () { busy = false; }, function () { busy = false; });
    }, seconds * 1000);
  }

  function liveTable() {
    var box = document.getElementById("live-table");
    if (!box) return;
    var url = box.getAttribute("data-live-partial");
    var seconds = parseInt(box.getAttribute("data-live-seconds"), 10) || 5;
    every(seconds, function () {
      return fetch(url, { credentials: "same-origin", cache: "no-store" }).then(function (r) {
        if (!r.ok) throw new Error("live: " + r.status);
        return r.text();
      }).then(function (html) {
        box.innerHTML = html;
      });
    });
  }

  function follow() {
    var button = document.getElementById("follow-toggle");
    var list = document.querySelector("ol.transcript");
    if (!button || !list) return;
    var base = button.getAttribute("data-follow-url");
    var last = button.getAttribute("data-last-id") || "0";
    var query = button.getAttribute("data-follow-query") || "";
    var seconds = parseInt(button.getAttribute("data-follow-seconds"), 10) || 3;
    var status = document.getElementById("follow-status");
    button.hidden = false;
    button.addEventListener("click", function () {
      var on = button.getAttribute("aria-pressed") !== "true";
      button.setAttribute("aria-pressed", on ? "true" : "false");
      var words = document.documentElement.dataset;
      button.textContent = on ? words.wordFollowing || "Following" : words.wordFollow || "Follow";
      if (status) {
        status.textContent = on
          ? words.wordFollowingStatus || "New messages are added below as they arrive."
          : "";
      }
    });
    every(seconds, function () {
      if (button.getAttribute("aria-pressed") !== "true") return Promise.resolve();
      return fetch(base.replace(/0\/$/, last + "/") + query, {
        credentials: "same-origin", cache: "no-store"
      }).then(function (r) {
        if (!r.ok) throw new Error("follow: " + r.status);
        var next = r.headers.get("X-Last-Message-Id");
        return r.text().then(function (html) {
          if (html.trim()) {
            var empty = list.querySelector("li.empty");
            if (empty) empty.remove();
            list.insertAdjacentHTML("beforeend", html);
            list.lastElementChild.scrollIntoView({ block: "end" });
          }
          if (next) last = next;
        });
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    liveTable();
    follow();
  });
})();
