// The setup wizard's token form (ui/setup.templ): the address the server
// printed carries the bootstrap token in its fragment
// (/setup-wizard#token=…), which never reaches the server. Put it in the
// form and send it, after taking it off the address bar and the history.
(function () {
  "use strict";
  var match = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(window.location.hash);
  if (!match) {
    return;
  }
  window.history.replaceState(null, "", window.location.pathname + window.location.search);
  var form = document.querySelector("form[data-setup-token]");
  if (!form || !form.elements.token) {
    return;
  }
  form.elements.token.value = match[1];
  form.submit();
})();
