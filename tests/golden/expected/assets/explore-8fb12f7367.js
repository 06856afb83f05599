// jouleboard exploration: re-rank a task in the browser (deadline, percentile, GPUs,
// precision, energy budget), compare models, and a cost/CO2 calculator. Every view lives in
// the URL. Without JavaScript the server-rendered tables stay as they are.
// The URL readers are pure functions, exported for Node's test runner (tests/js/).
(function (root) {
  "use strict";

  // Latency percentiles a URL may name (a kind without percentiles reads every one as its
  // single latency, as rank.py does).
  const PERCENTILE_KEYS = { p50: true, p90: true, p95: true, p99: true };

  // A URL value may only select an object's own key: "constructor", "__proto__" or
  // "toString" name something every object inherits, and must fall back to the default.
  function ownKey(object, key) {
    return typeof key === "string" && object != null && Object.hasOwn(object, key);
  }

  // --- number formats: the same rules as jouleboard/measure/formats.py ------------------
  function grouped(value, decimals) {
    return new Intl.NumberFormat("en-US", {
      minimumFractionDigits: decimals, maximumFractionDigits: decimals,
    }).format(value);
  }
  function significant(value, digits) {
    if (value === 0 || !Number.isFinite(value)) return String(value);
    const magnitude = Math.floor(Math.log10(Math.abs(value)));
    let decimals = Math.max(digits - 1 - magnitude, 0);
    const rounded = Number(value.toFixed(decimals));
    if (rounded !== 0 && Math.floor(Math.log10(Math.abs(rounded))) !== magnitude) {
      decimals = Math.max(decimals - 1, 0);
    }
    return grouped(value, decimals);
  }
  // formats.show: a display rule (int, fixedN, sigN, text, precision) applied to a value.
  function show(rule, value, precisions = {}) {
    if (value === null || value === undefined) return "–";
    if (rule === "precision") return precisions[value] || String(value).toUpperCase();
    if (rule === "text" || typeof value !== "number") return String(value);
    if (rule === "int") return grouped(Math.trunc(value), 0);
    if (rule.startsWith("fixed")) return grouped(value, Number(rule.slice(5)));
    if (rule.startsWith("sig")) return significant(value, Number(rule.slice(3)));
    throw new Error(`unknown display rule ${rule}`);
  }
  const fmt = { sig: (v) => significant(v, 3) };
  // render/footprint.py scaled, energy_text, number_text: the calculator's figures in the
  // largest step they reach (350 Wh, 1.23 MWh; 1.23k, 45.6M, 7.89B), never 1,000,000,000.
  const ENERGY_STEPS = [["Wh", 1e-3], ["kWh", 1], ["MWh", 1e3], ["GWh", 1e6], ["TWh", 1e9]];
  const NUMBER_STEPS = [["", 1], ["k", 1e3], ["M", 1e6], ["B", 1e9], ["T", 1e12]];
  function scaled(value, steps) {
    let i = 0;
    if (value !== 0 && Number.isFinite(value)) {
      steps.forEach(([, size], n) => { if (Math.abs(value) >= size) i = n; });
    }
    let text = significant(value / steps[i][1], 3);
    if (i + 1 < steps.length && Math.abs(Number(text.replaceAll(",", ""))) >= 1000) {
      i += 1;
      text = significant(value / steps[i][1], 3);
    }
    return [text, steps[i][0]];
  }
  function energyText(kwh) {
    const [text, unit] = scaled(kwh, ENERGY_STEPS);
    return `${text} ${unit}`;
  }
  function numberText(value) {
    const [text, suffix] = scaled(value, NUMBER_STEPS);
    return `${text}${suffix}`;
  }

  // The status line: how many models meet the view and, while the search box holds a query,
  // how many of them match it (it follows the search as it changes).
  function statusText(meet, view, empty, query, shown) {
    if (!meet) return empty;
    const line = `${meet} model${meet === 1 ? "" : "s"} meet ${view}.`;
    const q = query.trim();
    return q ? `${line} ${shown} of them match${shown === 1 ? "es" : ""} “${q}”.` : line;
  }
  // A kind's deadline wording (TaskKind.latency): "median inter-token latency ≤ 300 ms".
  function deadlineText(ms, percentile, latency) {
    return `${latency.words[percentile]} ≤ ${+(ms / latency.scale_ms).toPrecision(6)} ` +
      `${latency.unit}`;
  }
  function capital(text) {
    return `${text[0].toUpperCase()}${text.slice(1)}`;
  }
  function latencyTitle(percentile, latency) {
    return `${capital(latency.words[percentile])} (${latency.unit}, log scale)`;
  }
  // charts.side: a label beside a value in the right half of the log range goes left.
  function side(value, values) {
    const all = [value, ...values];
    const low = Math.min(...all);
    const high = Math.max(...all);
    if (low <= 0 || high <= low) return "left";
    return Math.log(value / low) / Math.log(high / low) > 0.5 ? "right" : "left";
  }
  function deadlineRule(ms, latency, points = []) {
    const shown = +(ms / latency.scale_ms).toPrecision(6);
    const x = ms / latency.scale_ms;
    return [{ latency: x, label: `deadline ${shown} ${latency.unit}`,
      side: side(x, points.map((p) => p.latency)) }];
  }
  function chartLatency(c, percentile, data) {
    return R.latency(c, percentile, data.order) / data.latency.scale_ms;
  }

  // A deadline in a file name, as urls.deadline_slug writes it: p50-300ms, batch-1800s.
  function deadlineSlug(ms, percentile) {
    if (ms >= 1000 && Number.isInteger(ms / 1000)) return `${percentile}-${ms / 1000}s`;
    return `${percentile}-${+ms.toPrecision(6)}ms`.replace(".", "_");
  }
  // One CSV field: quoted when it must be; text that a spreadsheet would run as a formula
  // starts with an apostrophe (as escape.py does for the published CSVs).
  function csvField(value) {
    if (value === null || value === undefined) return "";
    let text = String(value);
    if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }
  // A ranking as CSV: rank, model id and name, then the table's columns at full precision.
  function rankingCsv(rows, data, percentile) {
    const keys = data.table.filter((d) => d.show !== "gpu")
      .map((d) => (d.by_percentile ? d.by_percentile[percentile] : d.key));
    const lines = [["rank", "model_id", "nickname", "gpu_model", "num_gpus", ...keys].join(",")];
    for (const r of rows) {
      const c = r.config;
      lines.push([r.rank, c.model_id, data.models[c.model_id].nickname, c.gpu_model,
        c.num_gpus, ...keys.map((k) => c[k])].map(csvField).join(","));
    }
    return `${lines.join("\r\n")}\r\n`;
  }
  // Round values a slider can offer as tick labels: 1, 3, 10, 30, ... within [low, high].
  function sliderTicks(low, high) {
    const ticks = [];
    for (let e = Math.floor(Math.log10(low)); e <= Math.ceil(Math.log10(high)); e++) {
      for (const m of [1, 3]) {
        const v = m * 10 ** e;
        if (v >= low && v <= high) ticks.push(+v.toPrecision(6));
      }
    }
    return ticks.length > 6 ? ticks.filter((v) => String(v)[0] === "1") : ticks;
  }

  // --- DOM helpers: text only (never innerHTML with data) -------------------------------
  function cell(value, text, options = {}) {
    const td = document.createElement("td");
    td.dataset.value = String(value);
    td.className = [options.numeric ? "num" : "", options.key ? `col-${options.key}` : "",
      options.ranked ? "ranked" : ""].filter(Boolean).join(" ");
    if (options.href) {
      const a = document.createElement("a");
      a.href = options.href;
      a.textContent = text;
      td.append(a);
    } else {
      td.textContent = text;
    }
    if (options.note) {
      const note = document.createElement("span");
      note.className = "note";
      note.textContent = options.note;
      td.append(note);
    }
    return td;
  }

  function fillBody(table, rows, emptyText) {
    const body = table.tBodies[0];
    body.replaceChildren(...rows);
    if (rows.length === 0) {
      const tr = document.createElement("tr");
      const td = document.createElement("td");
      td.colSpan = table.tHead.rows[0].cells.length;
      td.className = "empty";
      td.textContent = emptyText;
      tr.append(td);
      body.append(tr);
    }
  }

  function modelCell(c, data) {
    const m = data.models[c.model_id];
    return cell(m.nickname, m.nickname, { href: m.url, note: m.builder, key: "model" });
  }

  // Python's str() of a value, as the server writes data-value (66.0 for a float 66).
  function pyValue(value, floats, key) {
    if (value === null || value === undefined) return "None";
    return floats.has(key) && Number.isInteger(value) ? value.toFixed(1) : String(value);
  }

  // The places the noise allows a ranked row: "3" or "2–4" (RankedRow.places in Python).
  function places(row) {
    const best = row.rankBest ?? row.rank;
    const worst = row.rankWorst ?? row.rank;
    return best === worst ? String(best) : `${best}–${worst}`;
  }

  // The columns with the ranked-by one first, the rest in order (plan/task.py task_table).
  function rankedFirst(columns, key) {
    return [...columns.filter((c) => c.key === key), ...columns.filter((c) => c.key !== key)];
  }

  // One leaderboard row from the task's column descriptors (TaskKind.ranking_fields).
  function rankingRow(row, data, percentile, columns = data.table, ranked = data.ranked_key) {
    const c = row.config;
    const floats = data.floatSet || (data.floatSet = new Set(data.floats || []));
    const tr = document.createElement("tr");
    tr.append(cell(row.rank, places(row), { numeric: true, key: "rank" }), modelCell(c, data));
    for (const d of columns) {
      if (d.show === "gpu") {
        tr.append(cell(`${c.num_gpus}x ${c.gpu_model}`, `${c.num_gpus}× ${c.gpu_model}`,
          { href: data.gpus[c.gpu_model], key: "gpu" }));
        continue;
      }
      const key = d.by_percentile ? d.by_percentile[percentile] : d.key;
      const value = c[key];
      tr.append(cell(pyValue(value, floats, key), show(d.show, value, data.precisions),
        { numeric: d.numeric, key: d.key, ranked: d.key === ranked }));
    }
    return tr;
  }

  function footprintRow(c, data, inputs) {
    const cells = [];
    for (const scale of data.footprint) {
      const f = R.footprint(c[scale.energy] * scale.amount, inputs);
      cells.push([f.kwh, energyText(f.kwh)], [f.cost, numberText(f.cost)],
        [f.gramsCo2e / 1000, numberText(f.gramsCo2e / 1000)]);
    }
    const tr = document.createElement("tr");
    tr.append(modelCell(c, data), ...cells.map(([v, text]) => cell(v, text, { numeric: true })));
    return tr;
  }

  // A header row for the task's columns (the compare page follows the chosen task).
  function headerCells(table, labels) {
    const row = table.tHead.rows[0];
    const now = Array.from(row.cells).map((th) => th.textContent.trim());
    if (now.join("|") === labels.map((l) => l.join(" ").trim()).join("|")) return;
    row.replaceChildren(...labels.map(([label, unit, numeric, key]) => {
      const th = document.createElement("th");
      th.scope = "col";
      th.className = [numeric ? "num" : "", key ? `col-${key}` : ""].filter(Boolean).join(" ");
      th.append(label);
      if (unit) {
        const span = document.createElement("span");
        span.className = "unit";
        span.textContent = unit;
        th.append(" ", span);
      }
      return th;
    }));
    table.dataset.sortable = "";
    S.makeSortable(table);
  }
  function rankingHeader(table, columns) {
    headerCells(table, [["#", "", true, "rank"], ["Model", "", false, "model"],
      ...columns.map((d) => [d.label, d.unit, d.numeric, d.key])]);
  }
  function footprintHeader(table, data) {
    const labels = [["Model", "", false, "model"]];
    for (const s of data.footprint) {
      labels.push(["Electricity", s.per, true], ["Cost", `USD ${s.per}`, true],
        ["CO₂e", `kg ${s.per}`, true]);
    }
    headerCells(table, labels);
  }

  // Set the title of every encoding of `field` in a Vega-Lite spec (axis follows percentile).
  function retitle(node, field, title) {
    if (Array.isArray(node)) node.forEach((n) => retitle(n, field, title));
    else if (node && typeof node === "object") {
      if (node.field === field && "title" in node) node.title = title;
      Object.values(node).forEach((n) => retitle(n, field, title));
    }
  }
  // charts.with_model_colors: each model drawn in its own colour (the explore data's
  // `color`), the same on every chart of the site.
  function colorModels(node, colors) {
    if (Array.isArray(node)) node.forEach((n) => colorModels(n, colors));
    else if (node && typeof node === "object") {
      const c = node.color;
      if (c && typeof c === "object" && c.field === "model" && "scale" in c) {
        c.scale = { domain: Object.keys(colors), range: Object.values(colors) };
      }
      Object.entries(node).forEach(([k, n]) => { if (k !== "datasets") colorModels(n, colors); });
    }
  }
  // --- URL state --------------------------------------------------------------------------
  function numberParam(params, name, fallback, valid) {
    const value = Number(params.get(name));
    return params.has(name) && Number.isFinite(value) && valid(value) ? value : fallback;
  }
  // An empty value is a choice (nothing ticked); a value naming nothing offered is not.
  function listParam(params, name, allowed, fallback) {
    if (!params.has(name)) return fallback;
    const given = params.get(name).split(",").filter(Boolean);
    const kept = given.filter((v) => allowed.includes(v));
    return given.length && !kept.length ? fallback : kept;
  }
  // ?deadline= in the unit of the page's deadline box: a bare number on ms pages (300), the
  // number and its unit where the box shows seconds (60s). Links from before seconds were
  // written this way held ms as a bare number; a bare number still reads as ms, so they
  // keep their view (deadlineParam).
  function deadlineValue(ms, latency) {
    if (!latency || latency.scale === 1) return String(ms);
    return `${+(ms / latency.scale).toPrecision(12)}${latency.unit}`;
  }
  // A ?deadline= value in ms: "300" and "300ms" are ms, "60s" seconds; null if it is none.
  function deadlineParam(text) {
    const found = /^\s*(\d+(?:\.\d*)?(?:e[+-]?\d+)?|\.\d+)\s*(ms|s)?\s*$/i.exec(text || "");
    if (!found) return null;
    const ms = Number(found[1]) * (found[2] && found[2].toLowerCase() === "s" ? 1000 : 1);
    return Number.isFinite(ms) && ms > 0 ? ms : null;
  }
  function writeUrl(state, defaults, push, latency) {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(state)) {
      const shown = (v) => (key === "deadline" ? deadlineValue(v, latency) : v);
      const text = Array.isArray(value) ? value.join(",") : String(shown(value) ?? "");
      const fallback = defaults[key];
      const base = Array.isArray(fallback) ? fallback.join(",") : String(shown(fallback) ?? "");
      if (text !== base) params.set(key, text);
    }
    const query = params.toString();
    const url = `${location.pathname}${query ? `?${query}` : ""}${location.hash}`;
    if (url === `${location.pathname}${location.search}${location.hash}`) return;
    if (push) history.pushState(null, "", url);
    else history.replaceState(null, "", url);
  }

  // The task page's view from a query string; `choices` lists the GPUs and precisions the
  // page offers and whether it has a calculator.
  function taskState(search, defaults, choices) {
    const p = new URLSearchParams(search);
    const sort = p.get("sort") || "";
    return {
      deadline: deadlineParam(p.get("deadline")) ?? defaults.deadline,
      pct: ownKey(PERCENTILE_KEYS, p.get("pct")) ? p.get("pct") : defaults.pct,
      gpu: listParam(p, "gpu", choices.gpus, defaults.gpu),
      precision: listParam(p, "precision", choices.precisions, defaults.precision),
      budget: p.has("budget") && Number(p.get("budget")) > 0 ? p.get("budget") : "",
      q: p.get("q") || "",
      sort: /^\d+\.(ascending|descending)$/.test(sort) ? sort : "",
      ...(choices.calculator ? calculatorState(p, defaults) : {}),
    };
  }

  // The compare page's view: `tasks` maps task ids to {deadline, pct}; `first` is the default.
  function compareState(search, tasks, first, defaults, max) {
    const p = new URLSearchParams(search);
    const task = ownKey(tasks, p.get("task")) ? p.get("task") : first;
    return {
      task,
      models: (p.get("models") || "").split(",").filter(Boolean).slice(0, max),
      deadline: deadlineParam(p.get("deadline")) ?? tasks[task].deadline,
      pct: ownKey(PERCENTILE_KEYS, p.get("pct")) ? p.get("pct") : tasks[task].pct,
      ...(defaults.price !== undefined ? calculatorState(p, defaults) : {}),
    };
  }

  function calculatorState(params, defaults) {
    return {
      price: numberParam(params, "price", defaults.price, (v) => v >= 0),
      pue: numberParam(params, "pue", defaults.pue, (v) => v >= 1),
      co2: numberParam(params, "co2", defaults.co2, (v) => v >= 0),
    };
  }
  function footprintInputs(state) {
    return { pricePerKwh: state.price, pue: state.pue, gramsCo2ePerKwh: state.co2 };
  }
  function calculatorDefaults(form) {
    return { price: Number(form.dataset.price), pue: Number(form.dataset.pue),
      co2: Number(form.dataset.co2) };
  }

  const CALCULATOR_FIELDS = [
    ["#price", "price", 0, "The price cannot be negative."],
    ["#pue", "pue", 1, "PUE is at least 1: a facility cannot use less than its IT energy."],
    ["#co2", "co2", 0, "Carbon intensity cannot be negative."]];

  // A message under an input that holds a value the page cannot use (none: clear it).
  function fieldError(input, message) {
    let note = document.getElementById(`${input.id}-error`);
    if (!note) {
      note = document.createElement("span");
      note.id = `${input.id}-error`;
      note.className = "field-error";
      note.setAttribute("role", "alert");
      input.after(note);
      input.setAttribute("aria-describedby",
        `${input.getAttribute("aria-describedby") || ""} ${note.id}`.trim());
    }
    note.textContent = message;
    note.hidden = !message;
    if (message) input.setAttribute("aria-invalid", "true");
    else input.removeAttribute("aria-invalid");
  }
  function showCalculator(calc, state) {
    for (const [id, key] of CALCULATOR_FIELDS) calc.querySelector(id).value = String(state[key]);
  }
  function wireCalculator(calc, getState, update) {
    calc.hidden = false;
    calc.addEventListener("submit", (event) => event.preventDefault());
    for (const [id, key, low, rule] of CALCULATOR_FIELDS) {
      const input = calc.querySelector(id);
      // As the reader types the figures follow (one history entry when the field is left);
      // a value the page cannot use is said beside the field and the last good one is kept.
      const take = (push) => {
        const value = Number(input.value);
        const ok = input.value.trim() !== "" && Number.isFinite(value) && value >= low;
        fieldError(input, ok ? "" : `${rule} The figures still use ${getState()[key]}.`);
        if (ok && (push || getState()[key] !== value)) {
          getState()[key] = value;
          update(push);
        }
      };
      input.addEventListener("input", () => take(false));
      input.addEventListener("change", () => take(true));
    }
  }

  const cache = new Map();
  function loadData(url) {
    if (!cache.has(url)) {
      cache.set(url, fetch(url).then((r) => r.json()).then((data) => {
        data.configs = R.records(data);
        return data;
      }));
    }
    return cache.get(url);
  }

  // --- the task page ------------------------------------------------------------------------
  function initTask(form) {
    const d = form.dataset;
    const table = document.getElementById(d.table);
    const calc = document.querySelector("form.calculator");
    const gpuBoxes = Array.from(form.querySelectorAll("input[name=gpu]"));
    const precisionBoxes = Array.from(form.querySelectorAll("input[name=precision]"));
    const allGpus = gpuBoxes.map((b) => b.value);
    const allPrecisions = precisionBoxes.map((b) => b.value);
    const defaults = {
      deadline: Number(d.deadline), pct: d.percentile,
      gpu: gpuBoxes.filter((b) => b.defaultChecked).map((b) => b.value),
      precision: allPrecisions, budget: "", q: "", sort: "",
      ...(calc ? calculatorDefaults(calc) : {}),
    };
    // The deadline box shows the kind's unit (ms or s); state and URL keep ms.
    const scale = Number(d.scale || 1);
    const latencyUnit = { scale, unit: d.unit || "ms" };
    const range = form.querySelector("#deadline-range");
    const number = form.querySelector("#deadline-ms");
    const percentile = form.querySelector("#percentile");
    const budget = form.querySelector("#budget");
    const search = form.querySelector("#model-search");
    const status = form.querySelector(".status");
    const min = Math.log(Number(d.min));
    const max = Math.log(Number(d.max));
    const toSlider = (ms) => Math.round(((Math.log(ms) - min) / (max - min)) * 1000);
    const fromSlider = (v) => {
      const ms = Math.exp(min + (v / 1000) * (max - min));
      return ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms);
    };
    let state = readState();
    let interactive = false;
    // What follows the controls besides the main table: the correct-answer table, the cost
    // table, the figure captions, the ranking downloads and the embed notes.
    const correct = document.getElementById(`correct-${d.task}`);
    const costTable = calc ? document.getElementById(calc.dataset.table) : null;
    const downloads = document.getElementById("ranking-downloads");
    const figures = Array.from(document.querySelectorAll("main figure.chart"));
    const captions = new Map([table, correct, costTable].filter(Boolean)
      .map((t) => [t, t.caption.textContent]));
    for (const f of figures) {
      const note = f.querySelector(".chart-note");
      if (note) note.dataset.default = note.textContent;
    }
    // The finding is written for the default view: off it, a line says so. The compare link
    // carries the page's deadline and percentile.
    const finding = document.querySelector("main .finding");
    const defaultView = `${document.querySelector(".deadline strong")?.textContent || ""}, on ` +
      `${defaults.gpu.join(" and ")}`;
    let findingNote = null;
    if (finding) {
      findingNote = document.createElement("p");
      findingNote.className = "finding-view";
      findingNote.hidden = true;
      findingNote.textContent = `This finding is for the default view (${defaultView}); ` +
        "the tables and charts below follow your settings.";
      finding.prepend(findingNote);
    }
    const compareLink = form.querySelector("a.compare-link");
    const compareBase = compareLink ? compareLink.getAttribute("href") : "";
    let viewUrl = null;
    // Tables cut on the first view (plan/first_view.py): "Show all", a search or a sort
    // ranks every model from the explore JSON in place, as any other view does.
    const showAll = Array.from(document.querySelectorAll("button.show-all"));
    let everyRow = showAll.length === 0;
    showAll.forEach((button) => {
      button.hidden = false;
      button.addEventListener("click", () => { interactive = true; render(); });
    });
    addTicks();

    function showEveryRow() {
      if (everyRow) return;
      everyRow = true;
      for (const button of showAll) {
        const cut = document.getElementById(button.dataset.table);
        if (cut && captions.has(cut)) captions.set(cut, button.dataset.caption);
        button.closest(".more-rows").hidden = true;
      }
    }

    function addTicks() {
      const holder = document.createElement("div");
      holder.className = "ticks";
      for (const v of sliderTicks(Number(d.min) / scale, Number(d.max) / scale)) {
        const tick = document.createElement("button");
        tick.type = "button";
        tick.textContent = grouped(v, v < 1 ? String(v).split(".")[1].length : 0);
        tick.setAttribute("aria-label", `Deadline ${tick.textContent} ${d.unit || "ms"}`);
        // The thumb's centre travels from 8 px to 8 px short of the track's ends.
        tick.style.left = `calc(8px + (100% - 16px) * ${toSlider(v * scale) / 1000})`;
        tick.addEventListener("click", () => {
          state.deadline = v * scale;
          fieldError(number, "");
          showState();
          update(true);
        });
        holder.append(tick);
      }
      const wrap = document.createElement("span");
      wrap.className = "range-wrap";
      range.before(wrap);
      wrap.append(range, holder);
    }

    // The current settings in words: "median ITL ≤ 50 ms, on H100, FP8 only".
    function viewText(data, text) {
      const parts = [text, `on ${state.gpu.join(" and ") || "no GPU"}`];
      if (state.precision.length !== allPrecisions.length) {
        parts.push(`${state.precision.map((p) => data.precisions[p] || p).join(", ") ||
          "no precision"} only`);
      }
      if (state.budget !== "") parts.push(`at most ${state.budget} ${data.units.energy_label}`);
      return parts.join(", ");
    }

    // Why a ranking is empty, and what would fill it.
    function emptyText(data) {
      if (!state.gpu.length) return "No GPU is selected: tick at least one GPU above.";
      if (!state.precision.length) return "No precision is selected: tick at least one above.";
      const budgetJ = state.budget === "" ? Infinity : Number(state.budget);
      const pool = data.configs.filter((c) => state.gpu.includes(c.gpu_model) &&
        state.precision.includes(c.weight_precision) && c[data.order.energy] <= budgetJ);
      if (!pool.length) {
        return `No configuration fits an energy budget of ${state.budget} ` +
          `${data.units.energy_label} on these GPUs.`;
      }
      const fastest = Math.min(...pool.map((c) => R.latency(c, state.pct, data.order)));
      const step = scale >= 1000 ? 100 : 0.1;
      const lowest = Math.ceil(fastest / step - 1e-9) * step;
      return "No configuration is this fast. The lowest workable deadline here is " +
        `${deadlineText(lowest, state.pct, data.latency)}.`;
    }

    function followControls(data, rows, options, text) {
      const view = viewText(data, text);
      const plain = isDefault();
      if (findingNote) findingNote.hidden = plain;
      if (compareLink) {
        const moved = state.deadline !== defaults.deadline || state.pct !== defaults.pct;
        compareLink.href = moved
          ? `${compareBase}&deadline=${deadlineValue(state.deadline, latencyUnit)}` +
            `&pct=${encodeURIComponent(state.pct)}`
          : compareBase;
      }
      if (correct) {
        const accuracy = {};
        for (const c of data.configs) {
          if (c.accuracy_percent !== null && c.accuracy_percent !== undefined) {
            accuracy[c.model_id] = c.accuracy_percent;
          }
        }
        const best = R.rank(data.configs,
          { ...options, objective: "energy_per_correct_answer", accuracy });
        const key = "energy_per_correct_answer_joules";
        fillBody(correct, best.map((r) => rankingRow(r, data, state.pct,
          rankedFirst(data.table, key), key)), emptyText(data));
        correct.caption.textContent = plain ? captions.get(correct) :
          `${d.taskName}: ranked by energy per correct answer at ${view}`;
      }
      if (costTable) {
        costTable.caption.textContent = plain ? captions.get(costTable) :
          `Electricity, cost and emissions of ${rows.length ? `the top ` +
            `${Math.min(rows.length, Number(d.top))} ` : "the models "}at ${view}`;
      }
      for (const f of figures) {
        const note = f.querySelector(".chart-note");
        const follows = f.id === d.scatter || f.id === d.bar;
        if (note) {
          note.textContent = plain ? note.dataset.default : follows ? view :
            `default view, ${note.dataset.default}; the controls above do not change it`;
        }
        const embedNote = f.querySelector(".default-view");
        if (embedNote) embedNote.hidden = plain;
      }
      if (downloads) renderDownloads(data, rows, view, plain);
    }

    function renderDownloads(data, rows, view, plain) {
      const prebuilt = downloads.querySelector(".prebuilt");
      const mine = downloads.querySelector(".view-download");
      prebuilt.hidden = !plain;
      mine.hidden = plain;
      if (viewUrl) URL.revokeObjectURL(viewUrl);
      viewUrl = null;
      if (plain) return;
      const parts = [d.task, deadlineSlug(state.deadline,
        (data.slug_prefix || {})[state.pct] || state.pct), ...state.gpu.map((g) => g.toLowerCase())];
      if (state.precision.length !== allPrecisions.length) parts.push(...state.precision);
      if (state.budget !== "") parts.push(`budget-${state.budget}`);
      const name = `${parts.join("-").replace(/[^A-Za-z0-9_.-]+/g, "_")}.csv`;
      viewUrl = URL.createObjectURL(new Blob([rankingCsv(rows, data, state.pct)],
        { type: "text/csv" }));
      const link = document.createElement("a");
      link.href = viewUrl;
      link.download = name;
      link.textContent = `CSV (${name})`;
      mine.replaceChildren(`Download this view (${view}): `, link,
        ". The prebuilt files show the default view.");
    }

    function readState() {
      return taskState(location.search, defaults,
        { gpus: allGpus, precisions: allPrecisions, calculator: Boolean(calc) });
    }

    function showState() {
      number.value = String(state.deadline / scale);
      range.value = String(toSlider(state.deadline));
      percentile.value = state.pct;
      gpuBoxes.forEach((b) => { b.checked = state.gpu.includes(b.value); });
      precisionBoxes.forEach((b) => { b.checked = state.precision.includes(b.value); });
      budget.value = state.budget;
      search.value = state.q;
      if (calc) showCalculator(calc, state);
    }

    function isDefault() {
      return ["deadline", "pct", "gpu", "precision", "budget", "price", "pue", "co2"]
        .every((k) => String(state[k]) === String(defaults[k]));
    }

    async function render() {
      S.filterRows(table, state.q);
      // A search re-renders from the data even when every row is shown, so that the status
      // line can say how many match.
      const wantAll = state.q !== "" || (!everyRow && state.sort !== "");
      if (!interactive && isDefault() && !wantAll) {
        applySort();
        return; // the server-rendered page already shows this view
      }
      showEveryRow();
      interactive = true;
      const data = await loadData(d.data);
      const options = {
        deadlineMs: state.deadline, percentile: state.pct, gpus: state.gpu,
        precisions: state.precision, energyBudget: state.budget === "" ? null : Number(state.budget),
        order: data.order, noise: data.noise,
      };
      const rows = R.rank(data.configs, options);
      const text = deadlineText(state.deadline, state.pct, data.latency);
      const empty = emptyText(data);
      fillBody(table, rows.map((r) => rankingRow(r, data, state.pct)), empty);
      table.caption.textContent = isDefault() ? captions.get(table)
        : `${d.taskName}: every model at ${viewText(data, text)}`;
      data.table.forEach((column, i) => {  // the latency column follows the percentile
        if (!column.by_percentile) return;
        const th = table.tHead.rows[0].cells[i + 2];
        const label = th.querySelector("button") || th;
        label.firstChild.textContent = `${capital(data.latency.short[state.pct])} `;
      });
      document.querySelectorAll(".deadline strong").forEach((el) => { el.textContent = text; });
      const shown = S.filterRows(table, state.q);
      status.textContent = statusText(rows.length, viewText(data, text), empty, state.q, shown);
      applySort();
      renderFootprint(data, rows, empty);
      renderCharts(data, rows, text);
      followControls(data, rows, options, text);
    }

    function renderFootprint(data, rows, empty) {
      if (!calc) return;
      const target = document.getElementById(calc.dataset.table);
      const top = rows.slice(0, Number(d.top)).map((r) => r.config);
      fillBody(target, top.map((c) => footprintRow(c, data, footprintInputs(state))), empty);
    }

    function renderCharts(data, rows, text) {
      const chosen = new Set(rows.map((r) => r.config.source));
      const scatter = document.getElementById(d.scatter);
      if (scatter) {
        const points = data.configs.map((c) => ({
          model: data.models[c.model_id].nickname, gpu: c.gpu_model,
          latency: chartLatency(c, state.pct, data), energy: c.energy_per_output_joules,
          chosen: chosen.has(c.source), config: c.config,
        }));
        const deadline = deadlineRule(state.deadline, data.latency, points);
        S.embedChart(scatter, (spec) => {
          spec.datasets = { table: points, deadline };
          retitle(spec, "latency", latencyTitle(state.pct, data.latency));
        }).catch(() => {});
      }
      const bar = document.getElementById(d.bar);
      if (bar) bar.hidden = rows.length === 0;  // no bars to draw: hide, don't plot nothing
      if (bar && rows.length) {
        const top = rows.slice(0, Number(d.top));
        S.embedChart(bar, (spec) => {
          spec.datasets = { table: top.map((r) => {
            const value = r.config.efficiency;
            const [low, high] = R.interval(value, r.config.runs || 1, data.noise);
            const fmt = (v) => show(data.units.efficiency_show, v);
            const shared = (r.rankBest ?? r.rank) !== (r.rankWorst ?? r.rank);
            return { model: data.models[r.config.model_id].nickname, rank: r.rank,
              places: places(r), value, low, high, gpu: r.config.gpu_model, shown: fmt(value),
              label: shared ? `${fmt(value)} (#${places(r)})` : fmt(value),
              interval: data.noise ? `${fmt(low)}–${fmt(high)}` : "unknown" };
          }) };
          spec.title = `${d.taskName}: top ${top.length} by ${data.units.efficiency_words} ` +
            `at ${text}`;
          const title = bar.querySelector(".chart-title");
          if (title) title.textContent = spec.title;
        }).catch(() => {});
      }
    }

    function applySort() {
      if (!state.sort) {
        // Back to rank order (column 0 holds the rank) with no header marked as sorted.
        if (table.querySelector("th[aria-sort]")) {
          S.sortTable(table, 0, "ascending", false);
          table.querySelectorAll("th[aria-sort]").forEach((th) => th.removeAttribute("aria-sort"));
        }
        return;
      }
      const [index, direction] = state.sort.split(".");
      if (table.tHead.rows[0].cells[Number(index)]) S.sortTable(table, Number(index), direction);
    }

    function update(push) {
      writeUrl(state, defaults, push, latencyUnit);
      render();
    }

    // Controls -> state -> URL -> view.
    range.addEventListener("input", () => {
      // While dragging, only the view follows; the URL gets one history entry on "change".
      state.deadline = fromSlider(Number(range.value));
      number.value = String(state.deadline / scale);
      render();
    });
    range.addEventListener("change", () => update(true));
    number.addEventListener("change", () => {
      const value = Number(number.value) * scale;
      fieldError(number, Number.isFinite(value) && value > 0 ? "" :
        `Enter a deadline above 0. The ranking still uses ${state.deadline / scale}.`);
      if (Number.isFinite(value) && value > 0) {
        state.deadline = value;
        range.value = String(toSlider(value));
        update(true);
      }
    });
    percentile.addEventListener("change", () => { state.pct = percentile.value; update(true); });
    gpuBoxes.concat(precisionBoxes).forEach((box) => box.addEventListener("change", () => {
      state.gpu = gpuBoxes.filter((b) => b.checked).map((b) => b.value);
      state.precision = precisionBoxes.filter((b) => b.checked).map((b) => b.value);
      update(true);
    }));
    budget.addEventListener("change", () => {
      const value = Number(budget.value);
      const empty = budget.value.trim() === "";
      const ok = empty || (Number.isFinite(value) && value > 0);
      // 0 or less admits nothing: said beside the field, not silently read as "no budget".
      fieldError(budget, ok ? "" : `An energy budget is more than 0 ${d.budgetUnit || "J"}; ` +
        "leave it empty for none.");
      if (!ok) return;
      state.budget = empty ? "" : budget.value;
      update(true);
    });
    search.addEventListener("input", () => { state.q = search.value; update(false); });
    table.addEventListener("jb:sorted", (event) => {
      const sort = `${event.detail.index}.${event.detail.direction}`;
      if (sort !== state.sort) { state.sort = sort; writeUrl(state, defaults, true, latencyUnit); }
      if (!everyRow) render();  // sort every model, not only the first view's rows
    });
    form.addEventListener("submit", (event) => event.preventDefault());
    form.querySelector("button[type=reset]").addEventListener("click", (event) => {
      event.preventDefault();
      state = { ...defaults, gpu: defaults.gpu.slice(), precision: defaults.precision.slice() };
      showState();
      update(true);
    });
    if (calc) wireCalculator(calc, () => state, update);
    window.addEventListener("popstate", () => { state = readState(); showState(); render(); });

    form.hidden = false;
    showState();
    render();
  }

  // --- the compare page ---------------------------------------------------------------------
  function initCompare(form) {
    const d = form.dataset;
    const max = Number(d.max);
    const taskSelect = form.querySelector("#compare-task");
    const list = form.querySelector(".model-choices");
    const number = form.querySelector("#compare-deadline");
    const percentile = form.querySelector("#compare-percentile");
    const out = document.getElementById("compare-results");
    const calc = document.querySelector("form.calculator");
    const tasks = Object.fromEntries(Array.from(taskSelect.options).map((o) =>
      [o.value, { url: o.dataset.data, deadline: Number(o.dataset.deadline), pct: o.dataset.percentile,
        unit: o.dataset.unit || "ms", scale: Number(o.dataset.scale) || 1,
        percentiles: (o.dataset.percentiles || "p50").split(" ") }]));
    // A kind with one latency (image and video tasks' batch latency) has no percentile choice.
    const percentileControl = form.querySelector("#compare-percentile-control");
    // The deadline box shows the task's kind's unit (ms or s); state and URL keep ms.
    const unitLabel = form.querySelector("label[for=compare-deadline] .unit");
    const first = taskSelect.options[0].value;
    const defaults = { task: first, models: [], deadline: tasks[first].deadline,
      pct: tasks[first].pct, ...(calc ? calculatorDefaults(calc) : {}) };
    let state = readState();

    function readState() {
      return compareState(location.search, tasks, first, defaults, max);
    }

    async function render() {
      taskSelect.value = state.task;
      number.value = String(state.deadline / tasks[state.task].scale);
      if (unitLabel) unitLabel.textContent = tasks[state.task].unit;
      percentile.value = state.pct;
      if (percentileControl) percentileControl.hidden = tasks[state.task].percentiles.length < 2;
      if (calc) showCalculator(calc, state);
      const data = await loadData(tasks[state.task].url);
      state.models = state.models.filter((m) => ownKey(data.models, m));
      renderChoices(data);
      const chosen = state.models;
      const text = deadlineText(state.deadline, state.pct, data.latency);
      out.querySelector(".compare-deadline").textContent = text;
      const table = out.querySelector("#compare-table");
      const best = R.rank(data.configs.filter((c) => chosen.includes(c.model_id)), {
        deadlineMs: state.deadline, percentile: state.pct, gpus: null, precisions: null,
        energyBudget: null, order: data.order, noise: data.noise });
      rankingHeader(table, data.table);
      fillBody(table, best.map((r) => rankingRow(r, data, state.pct)),
        chosen.length ? "None of these models meets the deadline." : "Pick two to six models.");
      const missing = chosen.filter((m) => !best.some((r) => r.config.model_id === m));
      renderRatios(best, data, missing);
      if (calc) {
        footprintHeader(document.getElementById(calc.dataset.table), data);
        fillBody(document.getElementById(calc.dataset.table),
          best.map((r) => footprintRow(r.config, data, footprintInputs(state))),
          "Pick two to six models.");
      }
      const figure = out.querySelector("figure.chart");
      if (chosen.length) {
        figure.hidden = false;
        const points = [];
        for (const m of chosen) {
          const mine = data.configs.filter((c) => c.model_id === m);
          const frontier = new Set(R.paretoFrontier(mine, state.pct, data.order)
            .map((c) => c.source));
          for (const c of mine) {
            const [low, high] = R.interval(c.energy_per_output_joules, c.runs || 1, data.noise);
            points.push({ model: data.models[m].nickname, gpu: c.gpu_model,
              latency: chartLatency(c, state.pct, data), energy: c.energy_per_output_joules,
              low, high, frontier: frontier.has(c.source), config: c.config,
              chosen: best.some((r) => r.config.source === c.source) });
          }
        }
        S.embedChart(figure, (spec) => {
          spec.datasets = { table: points, deadline: deadlineRule(state.deadline, data.latency, points) };
          spec.title = `Energy vs latency: ${chosen.map((m) => data.models[m].nickname).join(", ")}`;
          retitle(spec, "latency", latencyTitle(state.pct, data.latency));
          retitle(spec, "energy", data.units.energy_axis);
          const colors = {};
          for (const m of chosen) {
            if (data.models[m].color) colors[data.models[m].nickname] = data.models[m].color;
          }
          if (Object.keys(colors).length === chosen.length) colorModels(spec, colors);
        }).catch(() => {});
      } else {
        figure.hidden = true;
      }
    }

    function renderChoices(data) {
      const ids = Object.keys(data.models).sort((a, b) =>
        data.models[a].nickname.localeCompare(data.models[b].nickname));
      const boxes = ids.map((id) => {
        const label = document.createElement("label");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.name = "models";
        box.value = id;
        box.checked = state.models.includes(id);
        box.disabled = !box.checked && state.models.length >= max;
        box.addEventListener("change", () => {
          state.models = box.checked ? state.models.concat(id) : state.models.filter((m) => m !== id);
          update(true);
        });
        label.append(box, ` ${data.models[id].nickname}`);
        return label;
      });
      list.replaceChildren(...boxes);
    }

    // Whether two configurations' energy per output differ beyond the measurement noise.
    function distinguishable(a, b, data) {
      if (!data.noise) return "measurement noise unknown";
      const e = data.order.energy;
      const [low, high] = a[e] <= b[e] ? [a, b] : [b, a];
      return R.surelyLower(low[e], low.runs || 1, high[e], high.runs || 1, data.noise)
        ? "a real difference, beyond measurement noise"
        : "within measurement noise: not distinguishable";
    }

    function renderRatios(best, data, missing) {
      const ratios = out.querySelector(".ratios");
      const items = [];
      if (best.length >= 2) {
        const base = best.reduce((a, b) =>
          (b.config.energy_per_response_joules < a.config.energy_per_response_joules ? b : a));
        for (const r of best) {
          if (r === base) continue;
          const times = r.config.energy_per_response_joules / base.config.energy_per_response_joules;
          const perOutput = r.config.energy_per_output_joules /
            base.config.energy_per_output_joules;
          items.push(`${data.models[r.config.model_id].nickname} uses ${grouped(times, 1)}× the ` +
            `energy per response of ${data.models[base.config.model_id].nickname} at this ` +
            `deadline (${grouped(perOutput, 1)}× per ${data.units.output}; ` +
            `${distinguishable(base.config, r.config, data)}).`);
        }
      }
      // Unlike outputs (image steps, video size and length) are not the same work per output.
      if (new Set(best.map((r) => r.config.output || "")).size > 1) {
        items.push("Outputs differ: " + best.map((r) =>
          `${data.models[r.config.model_id].nickname} at ${r.config.output}`).join("; ") + ".");
      }
      for (const m of missing) {
        items.push(`${data.models[m].nickname} has no configuration that meets this deadline.`);
      }
      ratios.replaceChildren(...items.map((text) => {
        const li = document.createElement("li");
        li.textContent = text;
        return li;
      }));
    }

    function update(push) {
      writeUrl(state, defaults, push, tasks[state.task]);
      render();
    }

    taskSelect.addEventListener("change", () => {
      const t = tasks[taskSelect.value];
      state = { ...state, task: taskSelect.value, models: [], deadline: t.deadline, pct: t.pct };
      update(true);
    });
    number.addEventListener("change", () => {
      const value = Number(number.value);
      if (Number.isFinite(value) && value > 0) {
        state.deadline = value * tasks[state.task].scale;
        update(true);
      }
    });
    percentile.addEventListener("change", () => { state.pct = percentile.value; update(true); });
    form.addEventListener("submit", (event) => { event.preventDefault(); update(true); });
    if (calc) wireCalculator(calc, () => state, update);
    window.addEventListener("popstate", () => { state = readState(); render(); });
    out.hidden = false;
    render();
  }

  const api = { significant, show, energyText, numberText, statusText, deadlineText,
    deadlineParam, deadlineValue, ownKey, taskState,
    compareState,
    deadlineSlug, csvField, rankingCsv, sliderTicks, side };
  if (typeof module === "object" && module.exports) {
    module.exports = api;
    return;
  }
  const R = root.jouleboardRank;
  const S = root.jouleboardSite;
  if (!R || !S) return;
  const task = document.querySelector("form.explore");
  if (task) initTask(task);
  const compare = document.querySelector("form.compare");
  if (compare) initCompare(compare);
  root.jouleboardExplore = api;
})(typeof self !== "undefined" ? self : this);
