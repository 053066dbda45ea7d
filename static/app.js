// rackpulse front-end glue: charts (uPlot) and the "connection lost" banner.
// Pages work without this file; it only adds charts and live-update feedback.
(function () {
  "use strict";
  var PREFIXES = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  // Units that are counted in small parts (seconds of a round trip) also take milli and micro.
  var SMALL = [[1e-3, "m"], [1e-6, "µ"]];

  function prefixFor(big, unit) {
    for (var i = 0; i < PREFIXES.length; i++) if (big >= PREFIXES[i][0]) return PREFIXES[i];
    if (unit === "s" && big > 0 && big < 1) {
      for (var j = 0; j < SMALL.length; j++) if (big >= SMALL[j][0]) return SMALL[j];
      return SMALL[SMALL.length - 1];
    }
    return [1, ""];
  }

  // One rounding per unit, as the pages write it (collectors/measure.py): a temperature to a
  // tenth, a fan whole, watts whole from 10 W, volts to hundredths; other units by their size.
  var DECIMALS = { "°C": [1], "RPM": [0], "W": [1, 0], "V": [2] };
  var FIXED = { "V": true };  // trailing zeros kept: a rail at "12.00 V" was read to the hundredth

  function round(v, unit) {
    var a = Math.abs(v), d = DECIMALS[unit];
    var dec = d ? (a < 10 || d.length === 1 ? d[0] : d[1]) : a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
    if (FIXED[unit]) return v.toFixed(dec);
    return String(Number(v.toFixed(dec)) || 0);
  }

  // 14829000 Wh -> "14.8 MWh"; 0.031 s -> "0.031 s". Units that take no prefix (°C, %) pass "" as prefixable.
  function si(v, unit, prefixable) {
    if (v == null || isNaN(v)) return "–";
    var sep = unit && unit !== "%" ? " " : "";  // "34 °C" as the pages say it, "85%"
    if (prefixable) {
      var p = prefixFor(Math.abs(v), unit);
      if (p[1]) return round(v / p[0], p[1] + unit) + " " + p[1] + unit;
    }
    return round(v, unit) + (unit ? sep + unit : "");
  }

  // Tick labels share one prefix and as many decimals as the tick step needs, so neighbouring
  // ticks never read the same ("14.8 MWh", "14.8 MWh" for 14.83 and 14.84).
  function tickLabels(unit, prefixable) {
    return function (u, splits, axisIdx, space, incr) {
      var big = 0;
      splits.forEach(function (v) { big = Math.max(big, Math.abs(v || 0)); });
      var div = 1, pre = "";
      if (prefixable) {
        var p = prefixFor(big, unit);
        div = p[0]; pre = p[1];
      }
      var step = (incr || 1) / div, dec = 0;  // the decimals the step itself has: 2.5 -> 1, 0.05 -> 2
      while (dec < 6 && Math.abs(Math.round(step * Math.pow(10, dec)) - step * Math.pow(10, dec)) > 1e-6) dec++;
      var sep = (unit || pre) && unit !== "%" ? " " : "";
      return splits.map(function (v) { return v == null ? "" : (v / div).toFixed(dec) + sep + pre + unit; });
    };
  }

  // One way to write a time everywhere (tables say 2026-12-01 14:05): 24-hour clock, year-month-day,
  // the date under the first tick of each new day. uPlot's own defaults are 12/1 and 2pm.
  var D = 86400;
  var TIME_TICKS = [
    // tick step, its label, then the label on a new year, month, day, hour, minute, second; 1: appended
    [365 * D, "{YYYY}", null, null, null, null, null, null, 1],
    [28 * D, "{MMM}", "\n{YYYY}", null, null, null, null, null, 1],
    [D, "{MM}-{DD}", "\n{YYYY}", null, null, null, null, null, 1],
    [3600, "{HH}:{mm}", "\n{YYYY}-{MM}-{DD}", null, "\n{MM}-{DD}", null, null, null, 1],
    [60, "{HH}:{mm}", "\n{YYYY}-{MM}-{DD}", null, "\n{MM}-{DD}", null, null, null, 1],
    [1, "{HH}:{mm}:{ss}", "\n{YYYY}-{MM}-{DD}", null, "\n{MM}-{DD}", null, null, null, 1],
  ];
  var WHEN = "{YYYY}-{MM}-{DD} {HH}:{mm}";
  function when(ts) { return window.uPlot.fmtDate(WHEN)(new Date(ts * 1000)); }

  // A count (links up, prefixes) ticks on whole numbers: "bond0 slaves up" read 5.00, 5.25 ... 6.00.
  var WHOLE_STEPS = [];
  for (var k = 0; k < 13; k++) [1, 2, 5].forEach(function (m) { WHOLE_STEPS.push(m * Math.pow(10, k)); });

  function css(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return v || fallback;
  }

  // Where a chart's time axis starts: the range asked for, or its first sample when the data
  // begins later (a new install's first hour: the chart is the data, not an empty grid).
  function since(d) {
    return d.ts.length && d.ts[0] > d.start + 3 * stepAt(d, d.ts[0]) ? d.ts[0] : null;
  }

  // The step of the part a point is in: hourly or 5-minute rollups where the raw samples begin
  // later than the range, then the collector's interval (the server's `steps`).
  function stepAt(d, t) {
    var step = d.step;
    (d.steps || []).forEach(function (p) { if (t >= p[0]) step = p[1]; });
    return step;
  }

  // The range's first and last second as empty points, so the time axis always spans the
  // range asked for (one point would otherwise sit alone on an axis of years), and a null
  // wherever the data skips more than 2.5 steps, so an outage shows as a gap, not a slope.
  function shape(d) {
    var first = since(d);
    var out = first ? [[], [], [], []] : [[d.start], [null], [null], [null]];
    for (var i = 0; i < d.ts.length; i++) {
      var step = i > 0 ? stepAt(d, d.ts[i - 1]) : d.step;
      if (i > 0 && d.ts[i] - d.ts[i - 1] > 2.5 * step) {
        out[0].push(d.ts[i - 1] + step); out[1].push(null); out[2].push(null); out[3].push(null);
      }
      out[0].push(d.ts[i]); out[1].push(d.min[i]); out[2].push(d.avg[i]); out[3].push(d.max[i]);
    }
    out[0].push(d.end); out[1].push(null); out[2].push(null); out[3].push(null);
    return out;
  }

  function labelWidth(u, values) {
    var longest = (values || []).reduce(function (m, s) { return Math.max(m, String(s).length); }, 0);
    return Math.ceil(longest * 7.5) + 22;
  }

  // A state as a number (0 down, 1 up): its words at whole values; a bucket that held both
  // (a rollup's average of 0.7) says how much of it was in the better state.
  function stateWord(states, v) {
    if (v == null || isNaN(v)) return "–";
    var i = Math.round(v);
    if (Math.abs(v - i) < 0.005 || states.length !== 2) return states[Math.max(0, Math.min(states.length - 1, i))];
    return Math.round(v * 100) + "% " + states[1];
  }

  function options(el, d, width) {
    var unit = el.dataset.unit || "", prefixable = el.dataset.si === "1";
    var states = el.dataset.states ? el.dataset.states.split("|") : null;
    var fg = css("--fg", "#1d1f21"), line = css("--line", "#ddd"), accent = css("--accent", "#1f6fc5");
    var band = css("--band", "rgba(31,111,197,.18)");
    var fmt = states ? function (u, v) { return stateWord(states, v); } : function (u, v) { return si(v, unit, prefixable); };
    var rolled = d.resolution !== "raw";
    // States step from one to the next (never a slope through "half up"); percentages stay within 0-100.
    var path = states && window.uPlot.paths && window.uPlot.paths.stepped ? window.uPlot.paths.stepped({ align: 1 }) : undefined;
    var y = { range: steadyRange };
    if (states) y = { range: [-0.2, states.length - 0.8] };
    else if (unit === "%") y = { range: function (u, lo, hi) { return [Math.min(0, lo), Math.max(100, hi)]; } };
    var yAxis = { stroke: fg, grid: { stroke: line }, ticks: { stroke: line }, size: labelWidth,
                  values: tickLabels(unit, prefixable) };
    if (el.dataset.whole === "1") yAxis.incrs = WHOLE_STEPS;
    if (states) {
      yAxis.splits = function () { return states.map(function (_, i) { return i; }); };
      yAxis.values = function (u, splits) { return splits.map(function (v) { return states[v] || ""; }); };
    }
    return {
      title: el.dataset.title || d.metric, width: width, height: states ? 160 : 220,
      scales: { x: { time: true }, y: y },
      series: [
        { value: WHEN },
        { label: "min", stroke: rolled ? band : "transparent", value: fmt, show: rolled, paths: path },
        { label: rolled ? (states ? "share" : "avg") : "value", stroke: accent, width: 2, value: fmt, paths: path },
        { label: "max", stroke: rolled ? band : "transparent", value: fmt, show: rolled, paths: path },
      ],
      bands: rolled ? [{ series: [3, 1], fill: band }] : [],
      axes: [{ stroke: fg, grid: { stroke: line }, ticks: { stroke: line }, values: TIME_TICKS }, yAxis],
      cursor: { drag: { x: true, y: false, setScale: true } },
      // The legend says the newest values until a point is hovered, and again when the pointer
      // leaves (uPlot shows "–" without a hovered point: a legend that said nothing).
      hooks: { ready: [latestInLegend], setCursor: [function (u) { if (u.cursor.idx == null) latestInLegend(u); }] },
    };
  }

  function latestInLegend(u) {
    var xs = u.data[0], last = null;
    for (var i = xs.length - 1; i >= 0 && last === null; i--) if (u.data[2][i] != null) last = i;
    if (last !== null) u.setLegend({ idx: last }, false);
  }

  // A steady series (a load of 0.2 all day) on an axis of 0.195-0.205 reads as a wild swing: one
  // that moves by less than 1 % of its size is drawn from zero, and is seen to be flat.
  function steadyRange(u, lo, hi) {
    if (lo == null || hi == null) return [0, 1];
    if (hi - lo > Math.abs(hi) * 0.01) return window.uPlot.rangeNum(lo, hi, 0.1, true);
    if (hi > 0) return [0, hi * 1.25];
    if (lo < 0) return [lo * 1.25, 0];
    return [0, 1];
  }

  // Under a chart that starts after its range does: when the data begins.
  function sinceNote(el, d) {
    var first = since(d);
    if (!first) return;
    var p = document.createElement("p");
    p.className = "since muted";
    p.textContent = "No data before " + when(first) + ".";
    el.appendChild(p);
  }

  // A chart whose data could not be fetched says so, with its title and a button that asks again
  // (a server restarting, a phone between networks): never a blank box, never a dead end.
  function failed(el, redraw) {
    if (el._chart) return;  // a drawn chart keeps its lines; the next refresh tries again
    el.textContent = "";
    var p = document.createElement("p");
    p.className = "chart-failed";
    p.textContent = (el.dataset.title ? el.dataset.title + ": " : "") + "could not load the chart. ";
    var b = document.createElement("button");
    b.type = "button";
    b.textContent = "Try again";
    b.addEventListener("click", function () {
      delete el.dataset.drawn;
      el.textContent = "Loading " + (el.dataset.title || "the chart") + "…";
      redraw(el);
    });
    p.appendChild(b);
    el.appendChild(p);
  }

  function answer(r) {
    if (!r.ok) throw new Error("HTTP " + r.status);
    return r.json();
  }

  function drawChart(el) {
    if (!window.uPlot || el.dataset.drawn || !el.getClientRects().length) return;  // folded: drawn when opened
    el.dataset.drawn = "1";
    el._fetched = Date.now();
    // About two points per pixel: a phone's narrow chart asks for fewer than the server's 1,500.
    var points = Math.max(100, Math.min(1500, 2 * Math.round(el.clientWidth || 750)));
    fetch(el.dataset.chart + "&points=" + points, { headers: { Accept: "application/json" } })
      .then(answer)
      .then(function (d) {
        if (!d || !d.ts.length) {
          // a chart already drawn keeps its lines when a refresh finds nothing (a restart's first seconds)
          if (!el._chart) el.textContent = (el.dataset.title || "") + ": no data for this range yet.";
          return;
        }
        // Old chart out and new one in within one task: the reader never sees an empty box.
        var width = el._chart ? el._chart.width : Math.max(260, el.clientWidth - 16);
        if (el._chart) el._chart.destroy();
        el.textContent = "";
        el._chart = new window.uPlot(options(el, d, width), shape(d), el);
        el._data = d;
        sinceNote(el, d);
      })
      .catch(function () { failed(el, drawChart); });
  }

  // A smokeping-like chart of round trips: per interval the spread from the fastest to the
  // slowest answer (light), from the average to the 95th percentile (darker), the average line.
  function smokeOptions(el, d, width) {
    var o = options(el, d, width), fmt = o.series[2].value;
    var band = css("--band", "rgba(31,111,197,.18)"), warn = css("--warn", "#a15c00");
    o.series = [{ value: WHEN },
      { label: "fastest", stroke: band, value: fmt }, { label: "avg", stroke: css("--accent", "#1f6fc5"), width: 2, value: fmt },
      { label: "p95", stroke: warn, value: fmt }, { label: "slowest", stroke: band, value: fmt }];
    o.bands = [{ series: [4, 1], fill: band }, { series: [3, 2], fill: band }];
    return o;
  }

  function drawSmoke(el) {
    if (!window.uPlot || el.dataset.drawn || !el.getClientRects().length) return;
    el.dataset.drawn = "1";
    el._fetched = Date.now();
    var urls = JSON.parse(el.dataset.smoke);
    Promise.all(["min", "avg", "p95", "max"].map(function (k) {
      return fetch(urls[k], { headers: { Accept: "application/json" } }).then(answer);
    })).then(function (ds) {
      var avg = ds[1];
      if (!avg || !avg.ts.length) { el.textContent = (el.dataset.title || "") + ": no data for this range yet."; return; }
      var at = function (d, pick) {
        var byTs = {};
        if (d) d.ts.forEach(function (t, j) { byTs[t] = d[pick][j]; });
        return avg.ts.map(function (t) { return byTs[t] == null ? null : byTs[t]; });
      };
      // The fastest of the fastest, the slowest of the slowest; p95 and avg as their bucket's mean.
      var d = { start: avg.start, end: avg.end, step: avg.step, resolution: "raw", ts: avg.ts,
                min: at(ds[0], "min"), avg: avg.avg, max: at(ds[3], "max"), p95: at(ds[2], "avg") };
      var rows = shape({ start: d.start, end: d.end, step: d.step, steps: avg.steps, ts: d.ts, min: d.min, avg: d.avg, max: d.p95 });
      var tops = shape({ start: d.start, end: d.end, step: d.step, steps: avg.steps, ts: d.ts, min: d.max, avg: d.max, max: d.max });
      var width = el._chart ? el._chart.width : Math.max(260, el.clientWidth - 16);
      if (el._chart) el._chart.destroy();
      el.textContent = "";
      el._chart = new window.uPlot(smokeOptions(el, d, width), [rows[0], rows[1], rows[2], rows[3], tops[1]], el);
    }).catch(function () { failed(el, drawSmoke); });
  }

  // On a phone a page of sections (/host was 19,000 px tall at a failing moment) shows each as its
  // headline, marked with its level (app.css); a tap on the headline opens it, and it stays as the
  // reader left it across live updates. A folded section's charts are drawn when it is opened.
  var phone = window.matchMedia ? window.matchMedia("(max-width: 600px)") : null;
  var opened = {};
  function foldSections() {
    document.querySelectorAll("main .sections > div.judged").forEach(function (d) {
      d.classList.toggle("folded", !!(phone && phone.matches) && !opened[d.dataset.plugin]);
    });
  }
  document.addEventListener("click", function (e) {
    var h = e.target.closest && e.target.closest("main .sections > div.judged > section > h2");
    if (!h || !(phone && phone.matches)) return;
    var d = h.closest("div.judged"), open = d.classList.contains("folded");
    d.classList.toggle("folded", !open);
    opened[d.dataset.plugin] = open;
    if (open) drawAll();
  });
  if (phone && phone.addEventListener) phone.addEventListener("change", function () { foldSections(); drawAll(); });
  // A chart is drawn once it can be seen: a <details> opened (a fold, a long list) draws its charts.
  document.addEventListener("toggle", function (e) { if (e.target.open) drawAll(); }, true);

  function drawAll() {
    document.querySelectorAll("[data-chart]").forEach(drawChart);
    document.querySelectorAll("[data-smoke]").forEach(drawSmoke);
  }

  // Colours come from the page's CSS variables: draw again when the system theme flips.
  function redrawAll() {
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      if (el._chart && el._data) {
        var d = el._data, w = el._chart.width;
        el._chart.destroy();
        el._chart = new window.uPlot(options(el, d, w), shape(d), el);
      }
    });
  }

  // A live update replaces the page's content every few seconds. Forms someone may be filling
  // in carry hx-preserve (htmx keeps them as they are); a <details> stays as the reader left it,
  // open or folded (a list that opens by itself when something in it is wrong included).
  //
  // A chart the new content asks for again (same data URL) stays the one already drawn: drawing
  // every chart of a long page anew on each update made the page flicker and asked the server for
  // every series every few seconds. A kept chart fetches its data again once a minute, and swaps
  // its lines in place.
  var folds = {}, kept = {};
  var REFETCH_MS = 60000;
  function chartKey(el) { return el.dataset.chart ? "c:" + el.dataset.chart : "s:" + el.dataset.smoke; }
  document.addEventListener("htmx:beforeSwap", function () {
    folds = {}; kept = {};
    document.querySelectorAll("main details[id]").forEach(function (d) { folds[d.id] = d.open; });
    document.querySelectorAll("main [data-chart], main [data-smoke]").forEach(function (el) {
      if (el.dataset.drawn) kept[chartKey(el)] = el;
    });
  });
  document.addEventListener("htmx:afterSwap", function () {
    Object.keys(folds).forEach(function (id) { var d = document.getElementById(id); if (d) d.open = folds[id]; });
    document.querySelectorAll("main [data-chart], main [data-smoke]").forEach(function (el) {
      var old = kept[chartKey(el)];
      if (!old) return;
      delete kept[chartKey(el)];
      el.replaceWith(old);
      if (Date.now() - (old._fetched || 0) >= REFETCH_MS) {
        delete old.dataset.drawn;
        if (old.dataset.chart) drawChart(old); else drawSmoke(old);
      }
    });
    kept = {};
  });

  // The wall screen shows everything on one screen, nothing scrolling: what is still taller than
  // the screen (a rebuild with most tiles not green) is scaled down to fit, after every update.
  function fitKiosk() {
    var body = document.body;
    if (!body || !body.classList.contains("kiosk")) return;
    body.style.zoom = "";
    var tall = document.documentElement.scrollHeight, room = window.innerHeight;
    if (tall > room) body.style.zoom = String(Math.max(0.5, Math.floor(room / tall * 100) / 100));
  }
  document.addEventListener("DOMContentLoaded", fitKiosk);
  document.addEventListener("htmx:afterSwap", fitKiosk);
  window.addEventListener("resize", fitKiosk);

  // The wall screen: dark from 20:00 to 07:00 by the screen's own clock (a hallway at night).
  function night() {
    if (!document.body.classList.contains("kiosk")) return;
    var h = new Date().getHours();
    document.documentElement.classList.toggle("night", h >= 20 || h < 7);
  }
  document.addEventListener("DOMContentLoaded", function () { night(); setInterval(night, 60000); });

  // The phone's menu: the pages fold behind one button so the header stays one line, on top.
  document.documentElement.classList.add("js");
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest(".menu-button");
    if (!button) return;
    var header = button.closest("header"), open = !header.classList.contains("open");
    header.classList.toggle("open", open);
    button.setAttribute("aria-expanded", open ? "true" : "false");
  });

  document.addEventListener("DOMContentLoaded", function () { foldSections(); drawAll(); });
  document.addEventListener("htmx:afterSwap", function () { foldSections(); drawAll(); });
  if (window.matchMedia) {
    var dark = window.matchMedia("(prefers-color-scheme: dark)");
    if (dark.addEventListener) dark.addEventListener("change", redrawAll);
  }
  var banner = function () { return document.getElementById("offline"); };
  document.addEventListener("htmx:sendError", function () { var b = banner(); if (b) b.hidden = false; });
  document.addEventListener("htmx:responseError", function () { var b = banner(); if (b) b.hidden = false; });
  document.addEventListener("htmx:afterRequest", function (e) {
    if (e.detail.successful) { var b = banner(); if (b) b.hidden = true; }
  });
})();
