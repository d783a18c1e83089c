// CrashDesk's only script of its own, served from our origin so the strict CSP allows it.
// Everything here is progressive: every page works without it.
(function () {
  "use strict";

  // Upload progress: a form with data-progress="ID" drives the <progress id="ID"> element
  // from htmx's xhr progress events while a large snapshot is sent.
  function progressFor(form) {
    var id = form.getAttribute("data-progress");
    return id ? document.getElementById(id) : null;
  }

  document.addEventListener("htmx:xhr:progress", function (event) {
    var form = event.target.closest ? event.target.closest("form[data-progress]") : null;
    var bar = form && progressFor(form);
    if (!bar || !event.detail.lengthComputable) {
      return;
    }
    bar.max = event.detail.total;
    bar.value = event.detail.loaded;
    var label = document.getElementById(bar.id + "-label");
    if (!label) {
      return;
    }
    if (event.detail.loaded < event.detail.total) {
      label.textContent = Math.floor((100 * event.detail.loaded) / event.detail.total) + " % sent";
    }
  });

  // Once the whole body is sent, reading and checking a large snapshot still takes the
  // server seconds: say so, rather than leave "100 % sent" standing.
  document.addEventListener("htmx:beforeSend", function (event) {
    var form = event.target.closest ? event.target.closest("form[data-progress]") : null;
    var bar = form && progressFor(form);
    var xhr = event.detail.xhr;
    if (!bar || !xhr || !xhr.upload) {
      return;
    }
    xhr.upload.addEventListener("load", function () {
      bar.removeAttribute("value");
      var label = document.getElementById(bar.id + "-label");
      if (label) {
        label.textContent = "All sent. The server is checking the snapshot…";
      }
    });
  });

  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.target.closest ? event.target.closest("form[data-progress]") : null;
    var bar = form && progressFor(form);
    if (!bar) {
      return;
    }
    bar.removeAttribute("value");
    var wrapper = bar.closest(".upload-progress");
    if (wrapper) {
      wrapper.hidden = false;
    }
  });

  // After a submit that was refused (a 422 with the form's problems), focus moves to the list
  // of problems, so keyboard and screen reader users land on what to fix. A full page that
  // carries a list of problems was itself such an answer (forms show them only when refused).
  function focusProblems() {
    var summary = document.querySelector("[data-error-summary]");
    if (summary) {
      summary.focus();
    }
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    var xhr = event.detail.xhr;
    if (xhr && xhr.status === 422) {
      focusProblems();
    }
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", focusProblems);
  } else {
    focusProblems();
  }

  // A plain (non-htmx) form with data-confirm asks before it is sent; htmx forms use
  // hx-confirm, which htmx handles itself.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute && form.getAttribute("data-confirm");
    if (question && !form.hasAttribute("hx-post") && !window.confirm(question)) {
      event.preventDefault();
    }
  });
})();
