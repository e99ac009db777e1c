// Flotilla console: live updates and actions without a reload.
// The server sends a "change" event when the hub changed; the page then
// fetches its own view again and swaps the content of <main> in.
(function () {
  "use strict";
  var main = document.getElementById("main");
  var live = document.getElementById("live");
  var flash = document.getElementById("flash");
  var busy = false, again = false, updates = 0;

  function partialURL() {
    var u = new URL(window.location.href);
    u.searchParams.set("partial", "1");
    return u.toString();
  }

  // focusKey remembers what had the focus, to give it back after a swap.
  function focusKey() {
    var a = document.activeElement;
    if (!a || !main.contains(a)) return null;
    if (a.id) return { sel: "#" + CSS.escape(a.id) };
    if (a.name) return { sel: '[name="' + CSS.escape(a.name) + '"]', value: a.value };
    if (a.getAttribute("href")) return { sel: 'a[href="' + CSS.escape(a.getAttribute("href")) + '"]' };
    return null;
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(partialURL(), { credentials: "same-origin", headers: { "X-Console": "1" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var key = focusKey();
        main.innerHTML = html;
        updates++;
        document.body.setAttribute("data-updates", String(updates));
        if (key) {
          var el = main.querySelector(key.sel);
          if (el) { if (key.value !== undefined) el.value = key.value; el.focus(); }
        }
      })
      .catch(function () { /* the next change tries again */ })
      .finally(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  function say(text, ok) {
    flash.textContent = text;
    flash.className = ok ? "okmsg" : "error";
    flash.hidden = false;
  }

  if (window.EventSource) {
    var es = new EventSource("/events");
    // What changed between rendering this page (or losing the stream) and
    // the stream opening sent no event to this page: fetch the view again.
    es.addEventListener("open", function () {
      live.textContent = "● live"; live.className = "live on";
      refresh();
    });
    es.addEventListener("error", function () { live.textContent = "○ reconnecting…"; live.className = "live off"; });
    es.addEventListener("change", refresh);
  }

  function post(url, body, button) {
    if (button) button.disabled = true;
    fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "X-Console": "1", "Content-Type": "application/x-www-form-urlencoded" },
      body: body.toString()
    }).then(function (r) {
      return r.text().then(function (t) { say(t, r.ok); });
    }).catch(function (e) { say("The console did not answer: " + e, false); })
      .finally(function () { if (button) button.disabled = false; refresh(); });
  }

  // An action with data-confirm is asked about in the dialog first, which
  // lives outside <main> so that a live update does not take it away; the
  // server does it only with confirmed=yes.
  var dialog = document.getElementById("confirm");
  var pending = null;
  document.getElementById("confirm-yes").addEventListener("click", function () {
    var p = pending;
    pending = null;
    dialog.close();
    if (!p) return;
    p.body.set("confirmed", "yes");
    post(p.url, p.body, null);
  });
  document.getElementById("confirm-no").addEventListener("click", function () { pending = null; dialog.close(); });
  dialog.addEventListener("close", function () { pending = null; });

  document.addEventListener("submit", function (ev) {
    var form = ev.target;
    if (!form.classList || !form.classList.contains("action")) return;
    var question = form.getAttribute("data-confirm");
    if (question && !dialog.showModal) return; // the server's page asks instead
    ev.preventDefault();
    var body = new URLSearchParams(new FormData(form));
    if (question) {
      var cli = form.querySelector("code.cli");
      pending = { url: form.action, body: body };
      document.getElementById("confirm-question").textContent = question;
      document.getElementById("confirm-command").textContent = cli ? cli.textContent : "";
      document.getElementById("confirm-yes").textContent = form.getAttribute("data-confirm-label") || "Yes";
      dialog.showModal();
      return;
    }
    post(form.action, body, form.querySelector("button"));
  });
})();
