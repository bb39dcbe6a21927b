// crystallize review: progressive enhancement only. The page works
// without this file; it adds an Escape key to close an open matrix cell,
// keeps one cell open at a time, and refuses to send a decision without
// a reason before the server has to (which refuses it too).
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var cells = document.querySelectorAll("details.cell-detail");
  cells.forEach(function (d) {
    d.addEventListener("toggle", function () {
      if (!d.open) return;
      cells.forEach(function (o) { if (o !== d && o.open) o.open = false; });
    });
  });
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape") return;
    cells.forEach(function (d) {
      if (d.open) { d.open = false; d.querySelector("summary").focus(); }
    });
  });
  var form = document.getElementById("decide-form");
  if (form) {
    form.addEventListener("submit", function (e) {
      var reason = form.querySelector("textarea[name=reason]");
      if (reason && reason.value.trim() === "") {
        e.preventDefault();
        reason.focus();
      }
    });
  }
});
