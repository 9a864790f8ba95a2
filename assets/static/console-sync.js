// The live count of an LDAP directory's sync: while the sync's form is
// posted (the sync runs in that request), the directory's sync state is
// polled and its count shown. Without script the form posts all the same
// and the page shows the sync's result when it ends.
"use strict";
document.querySelectorAll("[data-sync-status]").forEach(function (status) {
  var form = document.getElementById("sync-now");
  if (!form || !window.fetch) {
    return;
  }
  var shown = function (processed) {
    status.textContent = status.getAttribute("data-running").replace("{0}", String(processed));
  };
  var poll = function () {
    fetch(status.getAttribute("data-sync-status"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) {
        if (s && s.running) {
          shown(s.processed);
        }
      })
      .catch(function () {});
  };
  form.addEventListener("submit", function () {
    // The post goes on as the browser's own; the page stays until its
    // answer comes, and shows the count meanwhile.
    shown(0);
    poll();
    window.setInterval(poll, 500);
  });
});
