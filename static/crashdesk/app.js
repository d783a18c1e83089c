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

  // Focus and announcements across swaps. When a swap removes the element that had focus,
  // the browser drops focus to <body> and a keyboard user starts again from the top. htmx
  // itself gives focus back to an element of the same id in the new content, so an opener
  // that comes back (a sort header, "Next", "leave out") carries an id. Otherwise focus goes
  // to the new content's list of problems, else its [data-focus-after-swap] (a heading with
  // tabindex="-1", or a control), else the main region. What the swap brought, from each
  // [data-announce] in it (its value, or else its text), is said through one live region
  // that is never swapped: screen readers often miss a live region that is replaced whole.
  function focusLost() {
    var active = document.activeElement;
    return !active || active === document.body || !active.isConnected;
  }

  function within(root, selector) {
    var found = Array.prototype.slice.call(root.querySelectorAll(selector));
    return root.matches(selector) ? [root].concat(found) : found;
  }

  function announce(root) {
    var region = document.getElementById("swap-status");
    var words = within(root, "[data-announce]").map(function (source) {
      return (source.getAttribute("data-announce") || source.textContent).replace(/\s+/g, " ").trim();
    });
    if (!region || !words.length) {
      return;
    }
    // Emptied first, so that the same words said after another swap are read again.
    region.textContent = "";
    window.setTimeout(function () {
      region.textContent = words.join(" ");
    }, 100);
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    var root = event.target;
    if (!(root instanceof Element) || !root.isConnected) {
      return;
    }
    if (focusLost()) {
      var next =
        within(root, "[data-error-summary]")[0] ||
        within(root, "[data-focus-after-swap]")[0] ||
        document.getElementById("main");
      if (next) {
        next.focus();
      }
    }
    announce(root);
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

  // A button with data-print prints the page (the printable statement); an inline onclick
  // would be refused by the strict CSP.
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-print]");
    if (button) {
      window.print();
    }
  });
})();
