// rackpulse front-end glue: charts (uPlot) and the "connection lost" banner.
// Pages work without this file; it only adds charts and live-update feedback.
(function () {
  "use strict";
  function drawChart(el) {
    if (!window.uPlot || el.dataset.drawn) return;
    el.dataset.drawn = "1";
    fetch(el.dataset.chart, { headers: { Accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d || !d.ts.length) { el.textContent = (el.dataset.title || "") + ": no data for this range yet."; return; }
        var width = Math.max(280, el.clientWidth - 16);
        var opts = {
          title: el.dataset.title || d.metric, width: width, height: 220,
          series: [{}, { label: "min", stroke: "#7aa6d8" }, { label: "avg", stroke: "#1f6fc5", width: 2 }, { label: "max", stroke: "#d87a7a" }],
          axes: [{ stroke: "currentColor" }, { stroke: "currentColor" }],
        };
        new window.uPlot(opts, [d.ts, d.min, d.avg, d.max], el);
      })
      .catch(function () { el.textContent = "Could not load the chart."; });
  }
  function drawAll() { document.querySelectorAll("[data-chart]").forEach(drawChart); }
  document.addEventListener("DOMContentLoaded", drawAll);
  document.addEventListener("htmx:afterSwap", drawAll);
  var banner = function () { return document.getElementById("offline"); };
  document.addEventListener("htmx:sendError", function () { var b = banner(); if (b) b.hidden = false; });
  document.addEventListener("htmx:responseError", function () { var b = banner(); if (b) b.hidden = false; });
  document.addEventListener("htmx:afterRequest", function (e) {
    if (e.detail.successful) { var b = banner(); if (b) b.hidden = true; }
  });
})();
