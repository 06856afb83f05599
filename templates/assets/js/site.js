// jouleboard site script: progressive enhancement only; every table and chart works without it.
(() => {
  "use strict";

  // --- sortable tables: each header becomes a button; cells carry raw values in data-value.
  function sortTable(table, index, direction, notify = true) {
    const th = table.tHead.rows[0].cells[index];
    for (const cell of table.tHead.rows[0].cells) cell.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", direction);
    const numeric = th.classList.contains("num");
    const body = table.tBodies[0];
    // Grouped rows (a model's configurations per GPU count) give way to the chosen order.
    for (const extra of Array.from(table.tBodies).slice(1)) {
      body.append(...Array.from(extra.rows));
      extra.remove();
    }
    for (const group of Array.from(body.querySelectorAll("tr.group"))) group.remove();
    const rows = Array.from(body.rows).filter((row) => row.cells.length > index &&
      !row.classList.contains("no-match"));
    rows.sort((a, b) => {
      const x = a.cells[index].dataset.value;
      const y = b.cells[index].dataset.value;
      const o = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return direction === "ascending" ? o : -o;
    });
    body.append(...rows);
    if (notify) table.dispatchEvent(new CustomEvent("jb:sorted", { detail: { index, direction } }));
  }

  function makeSortable(table) {
    if (!table.tHead || table.dataset.sortable === "on") return;
    table.dataset.sortable = "on";
    Array.from(table.tHead.rows[0].cells).forEach((th, index) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      // A definition link stays outside the button (no link inside a button).
      const definition = th.querySelector("a.def");
      button.append(...Array.from(th.childNodes).filter((n) => n !== definition));
      th.append(button);
      if (definition) th.append(definition);
      button.addEventListener("click", () => {
        const next = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
        sortTable(table, index, next);
      });
    });
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);

  // --- a visible cue when a table has more columns than its box shows.
  function cueScroll(wrap) {
    let cue = wrap.previousElementSibling;
    if (!cue || !cue.classList.contains("scroll-cue")) {
      cue = document.createElement("p");
      cue.className = "scroll-cue";
      cue.textContent = "More columns → scroll the table sideways";
      wrap.before(cue);
    }
    const more = wrap.scrollWidth - wrap.clientWidth > 2;
    const end = wrap.scrollLeft + wrap.clientWidth >= wrap.scrollWidth - 2;
    cue.hidden = !more || end;
  }
  const wraps = Array.from(document.querySelectorAll(".table-wrap"));
  const sized = new ResizeObserver((entries) => entries.forEach((e) => cueScroll(e.target)));
  for (const wrap of wraps) {
    sized.observe(wrap);
    wrap.addEventListener("scroll", () => cueScroll(wrap), { passive: true });
  }

  // --- charts: a static SVG by default; the shared Vega bundle loads only when needed.
  let vega = null;
  function loadVega() {
    if (!vega) {
      vega = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = document.body.dataset.vega;
        script.onload = () => resolve(window.vegaEmbed);
        script.onerror = reject;
        document.head.append(script);
      });
    }
    return vega;
  }

  const specs = new Map();
  function fetchSpec(url) {
    if (!specs.has(url)) specs.set(url, fetch(url).then((response) => response.json()));
    return specs.get(url).then((spec) => JSON.parse(JSON.stringify(spec)));
  }

  // charts.phone: one-column legends, shorter axis labels, the caption holds the title.
  function phoneLayout(spec, width) {
    delete spec.title;
    (function visit(node) {
      if (Array.isArray(node)) node.forEach(visit);
      else if (node && typeof node === "object") {
        if (node.axis && typeof node.axis === "object" && node.axis.labelLimit > 125) {
          node.axis.labelLimit = 125;
        }
        if (node.legend && typeof node.legend === "object") {
          node.legend.columns = 1;
          node.legend.labelLimit = Math.max(width - 40, 120);
        }
        Object.values(node).forEach(visit);
      }
    })(spec);
  }
  // charts.THEME_STYLE for live charts: the chart grey turns light on a dark page.
  function themed(spec) {
    if (!window.matchMedia("(prefers-color-scheme: dark)").matches) return spec;
    const data = spec.datasets;
    delete spec.datasets;
    const out = JSON.parse(JSON.stringify(spec).replaceAll("#6b6b6b", "#c3c9d2")
      .replaceAll('"#111"', '"#f2f4f7"'));
    if (data) out.datasets = data;
    return out;
  }

  // Render a figure's chart with vega-embed; `adjust` may rebind the spec's data first.
  async function embedChart(figure, adjust) {
    const [embed, spec] = await Promise.all([loadVega(), fetchSpec(figure.dataset.spec)]);
    if (adjust) adjust(spec);
    // The figure's caption (an embed page's h1) says the title: the chart does not repeat it.
    spec.title = "";
    spec.width = "container";
    spec.autosize = { type: "fit-x", contains: "padding" };
    // A narrow screen gets the phone layout (render/charts.py phone): text at its own size.
    if (figure.clientWidth < 480) phoneLayout(spec, figure.clientWidth);
    let holder = figure.querySelector(".vega");
    if (!holder) {
      holder = document.createElement("div");
      holder.className = "vega";
      const image = figure.querySelector("picture") || figure.querySelector("img");
      if (image) image.replaceWith(holder);
      else figure.prepend(holder);
    }
    if (figure.jbView) figure.jbView.finalize();
    // ast: true makes Vega interpret expressions instead of compiling them: no eval, so the
    // page's Content-Security-Policy needs no 'unsafe-eval'.
    const result = await embed(holder, themed(spec), {
      ast: true,
      renderer: "svg",
      actions: { export: true, source: false, compiled: false, editor: false },
    });
    figure.jbView = result.view;
    // vega-embed's actions menu opens from an icon alone: its summary needs a name.
    const actions = holder.querySelector("details > summary");
    if (actions) actions.setAttribute("aria-label", "Chart actions: save as SVG or PNG");
    const button = figure.querySelector("button.interactive");
    if (button) button.remove();
    return result;
  }

  for (const figure of document.querySelectorAll("figure.chart[data-spec]")) {
    const button = figure.querySelector("button.interactive");
    if (!button) continue;
    button.hidden = false;
    button.addEventListener("click", () => {
      button.disabled = true;
      embedChart(figure).catch(() => { button.disabled = false; });
    });
  }

  // Embed pages show the static SVG first (an embed's first view stays small) and load the
  // interactive chart on demand, with the button every page has (above).

  // Embed codes: select all on focus, so a click and a copy take the whole snippet.
  for (const code of document.querySelectorAll(".embed-code")) {
    code.addEventListener("focus", () => code.select());
  }

  // A site built without site_url: its embed code and citations hold root-relative paths,
  // which would point at the article's own site once pasted. Here they become this page's
  // origin + path (only the exact places a path stands in: src="...", ", path." and \url{}).
  for (const box of document.querySelectorAll(".embed-box[data-relative]")) {
    const origin = location.origin;
    if (!/^https?:/.test(origin)) continue;  // opened from a file: no address to give
    const embed = box.dataset.embedPath;
    const page = box.dataset.pagePath;
    const absolute = (text) => text
      .replaceAll(`src="${embed}"`, `src="${origin}${embed}"`)
      .replaceAll(`, ${page}.`, `, ${origin}${page}.`)
      .replaceAll(`\\url{${page}}`, `\\url{${origin}${page}}`);
    const code = box.querySelector(".embed-code");
    if (code) code.value = absolute(code.value);
    for (const node of box.querySelectorAll(".cite, .bibtex")) {
      node.textContent = absolute(node.textContent);
    }
  }

  // Copy buttons: the embed code to the clipboard, said aloud and on screen.
  for (const button of document.querySelectorAll("button.copy[data-copy]")) {
    const source = document.getElementById(button.dataset.copy);
    const status = button.nextElementSibling;
    if (!source) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      let done = false;
      try {
        await navigator.clipboard.writeText(source.value);
        done = true;
      } catch {
        source.select();  // no clipboard permission: a selected code and the browser's copy
        done = document.execCommand && document.execCommand("copy");
      }
      if (status) status.textContent = done ? "Copied" : "Selected: press Ctrl+C (⌘C) to copy";
    });
  }

  // A row of links that scrolls sideways (the tasks under the header on a phone) says so:
  // .more while some of it lies past the right edge (style.css fades that edge).
  for (const row of document.querySelectorAll(".tasks-nav ul")) {
    const cue = () => row.classList.toggle("more",
      row.scrollLeft + row.clientWidth < row.scrollWidth - 2);
    cue();
    row.addEventListener("scroll", cue, { passive: true });
    window.addEventListener("resize", cue);
  }

  // --- model search boxes: filter the rows of the table they name.
  for (const input of document.querySelectorAll("input[data-search-for]")) {
    const table = document.getElementById(input.dataset.searchFor);
    if (!table) continue;
    input.closest("[hidden]")?.removeAttribute("hidden");
    input.addEventListener("input", () => filterRows(table, input.value));
  }

  // Hide the rows that do not mention `query`; returns how many stay shown.
  function filterRows(table, query) {
    const needle = query.trim().toLowerCase();
    const body = table.tBodies[0];
    let shown = 0;
    let rows = 0;
    for (const row of body.rows) {
      if (row.classList.contains("no-match")) continue;
      const name = row.querySelector("td:nth-child(2), td:first-child")?.textContent || "";
      row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle) &&
        !name.toLowerCase().includes(needle);
      rows += 1;
      if (!row.hidden) shown += 1;
    }
    // A search that hides every row says so, instead of leaving a bare header.
    let note = body.querySelector("tr.no-match");
    if (rows && !shown) {
      if (!note) {
        note = document.createElement("tr");
        note.className = "no-match";
        const cell = document.createElement("td");
        cell.colSpan = table.tHead.rows[0].cells.length;
        note.append(cell);
      }
      note.cells[0].textContent = `No model matches “${query.trim()}”.`;
      body.append(note);
    } else if (note) {
      note.remove();
    }
    return shown;
  }

  window.jouleboardSite = { sortTable, makeSortable, embedChart, filterRows, loadVega };
})();
