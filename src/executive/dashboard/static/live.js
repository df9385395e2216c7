// Live refresh without a framework: re-fetch this same page and swap its <main>.
// Skipped while the reader has a disclosure open or a form field focused.
"use strict";
(function () {
  const main = document.getElementById("main");
  if (!main || !main.dataset.live) return;
  // ?refresh=N (whole seconds, at least 1) overrides EXECUTIVE_DASHBOARD_REFRESH_SECONDS for this tab.
  const asked = Math.floor(Number(new URLSearchParams(window.location.search).get("refresh")));
  const seconds = asked >= 1 ? asked : Number(main.dataset.live) || 5;
  const stamp = document.getElementById("refreshed");
  if (stamp && asked >= 1) stamp.textContent = "refreshes every " + seconds + " s";
  async function refresh() {
    if (document.hidden || main.querySelector("details[open]") || main.contains(document.activeElement)) return;
    try {
      const response = await fetch(window.location.href, { credentials: "same-origin" });
      if (!response.ok) throw new Error("HTTP " + response.status);
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = page.getElementById("main");
      if (fresh) main.innerHTML = fresh.innerHTML;
      if (stamp) stamp.textContent = "refreshed " + new Date().toLocaleTimeString();
    } catch (error) {
      // The daemon may be restarting; say so on the page and try again at the next tick.
      if (stamp) stamp.textContent = "daemon unreachable (" + error.message + "), retrying";
    }
  }
  window.setInterval(refresh, seconds * 1000);
})();
