// The admin console's one enhancement: a button that copies a secret
// shown once. Without script the secret is still there to select; the
// button stays hidden.
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (button) {
  if (!navigator.clipboard) {
    return;
  }
  var field = document.getElementById(button.getAttribute("data-copy"));
  var status = button.parentElement.querySelector(".copy-status");
  if (!field) {
    return;
  }
  button.hidden = false;
  button.addEventListener("click", function () {
    navigator.clipboard.writeText(field.value).then(function () {
      if (status) {
        status.textContent = button.getAttribute("data-copied");
      }
    }, function () {
      field.select();
    });
  });
});
