// The task page's explorer (entry module): re-rank the task in the browser by deadline,
// percentile, GPUs, precision and energy budget; the cost calculator follows. Every view
// lives in the URL. Without JavaScript the server-rendered tables stay as they are.
import { drawBars, drawScatter } from "./charts.js";
import { footprintRows } from "./calculator.js";
import { followEmbedCodes } from "./embed-codes.js";
import { rank } from "./rank.js";
import { filterRows } from "./search.js";
import { sortTable } from "./sortable.js";
import { columnHeading, fillBody, rankingRow } from "./table.js";
import { loadData } from "./task-data.js";
import { readControls, showState, wireControls } from "./task-controls.js";
import { viewFollowers } from "./task-follow.js";
import { EMBED_KEYS, taskState, viewQuery, writeUrl } from "./url-state.js";
import { emptyText, viewText } from "./view-text.js";
import { deadlineText, statusText } from "./wording.js";

// The settings that make a view other than the server-rendered one (q and sort do not).
const VIEW_KEYS = ["deadline", "pct", "gpu", "precision", "budget", "price", "pue", "co2"];

// A table in the order `sort` ("2.descending") names, or back in rank order.
function applySort(table, sort) {
  if (!sort) {
    // Back to rank order (column 0 holds the rank) with no header marked as sorted.
    if (table.querySelector("th[aria-sort]")) {
      sortTable(table, 0, "ascending", false);
      table.querySelectorAll("th[aria-sort]").forEach((th) => th.removeAttribute("aria-sort"));
    }
    return;
  }
  const [index, direction] = sort.split(".");
  if (table.tHead.rows[0].cells[Number(index)]) sortTable(table, Number(index), direction);
}

// The latency column's header, tooltip and definition link follow the percentile.
function labelLatencyColumn(table, data, pct) {
  data.table.forEach((column, i) => {
    if (!column.by_percentile) return;
    const th = table.tHead.rows[0].cells[i + 2];  // after the rank and model columns
    const [heading, title] = columnHeading(column, data, pct);
    const label = th.querySelector("button") || th;
    label.firstChild.textContent = `${heading} `;
    th.title = title;
    const definition = th.querySelector("a.def");
    if (definition) definition.setAttribute("aria-label", `Definition of ${heading}`);
  });
}

// The scatter of every configuration, and the bars of the top rows (`d`: the form's data).
function drawCharts(d, data, rows, state, text) {
  const scatter = document.getElementById(d.scatter);
  if (scatter) drawScatter(scatter, data, rows, state);
  const bars = document.getElementById(d.bar);
  if (!bars) return;
  bars.hidden = rows.length === 0;  // no bars to draw: hide, don't plot nothing
  const top = rows.slice(0, Number(d.top));
  if (top.length) {
    drawBars(bars, data, top,
      `${d.taskName}: top ${top.length} by ${data.units.efficiency_words} at ${text}`);
  }
}

function startTask(form) {
  const c = readControls(form);
  const d = c.d;
  const table = document.getElementById(d.table);
  const followers = viewFollowers(form, c, table);
  const readState = () => taskState(location.search, c.defaults, c.choices);
  const isDefault = () => VIEW_KEYS.every((k) => String(page.state[k]) === String(c.defaults[k]));
  let interactive = false;
  // Tables cut on the first view (plan/first_view.py): "Show all", a search or a sort
  // ranks every model from the explore JSON in place, as any other view does.
  const showAll = Array.from(document.querySelectorAll("button.show-all"));
  let everyRow = showAll.length === 0;

  const page = {
    state: readState(),
    update(push) {
      writeUrl(page.state, c.defaults, push, c.unit);
      render();
    },
    render: () => render(),
    reset() {
      const { defaults } = c;
      page.state = { ...defaults, gpu: defaults.gpu.slice(), precision: defaults.precision.slice() };
      showState(c, page.state);
      page.update(true);
    },
  };

  function showEveryRow() {
    if (everyRow) return;
    everyRow = true;
    for (const button of showAll) {
      const cut = document.getElementById(button.dataset.table);
      if (cut && followers.captions.has(cut)) followers.captions.set(cut, button.dataset.caption);
      button.closest(".more-rows").hidden = true;
    }
  }

  async function render() {
    filterRows(table, page.state.q);
    // A search re-renders from the data even when every row is shown, so that the status
    // line can say how many match.
    const wantAll = page.state.q !== "" || (!everyRow && page.state.sort !== "");
    if (!interactive && isDefault() && !wantAll) {
      applySort(table, page.state.sort);
      return; // the server-rendered page already shows this view
    }
    showEveryRow();
    interactive = true;
    const data = await loadData(d.data);
    const { state } = page;  // as it is now: the reader may have moved on while it loaded
    const options = {
      deadlineMs: state.deadline, percentile: state.pct, gpus: state.gpu,
      precisions: state.precision, energyBudget: state.budget === "" ? null : Number(state.budget),
      order: data.order, noise: data.noise,
    };
    const rows = rank(data.configs, options);
    const text = deadlineText(state.deadline, state.pct, data.latency);
    const view = viewText(state, data, text, c.choices.precisions);
    const empty = emptyText(state, data, c.scale);
    const plain = isDefault();
    fillBody(table, rows.map((r) => rankingRow(r, data, state.pct)), empty);
    table.caption.textContent = plain ? followers.captions.get(table)
      : `${d.taskName}: every model at ${view}`;
    labelLatencyColumn(table, data, state.pct);
    document.querySelectorAll(".deadline strong").forEach((el) => { el.textContent = text; });
    const shown = filterRows(table, state.q);
    c.status.textContent = statusText(rows.length, view, empty, state.q, shown);
    applySort(table, state.sort);
    if (c.calc) {
      fillBody(document.getElementById(c.calc.dataset.table),
        footprintRows(rows.slice(0, Number(d.top)).map((r) => r.config), data, state), empty);
    }
    drawCharts(d, data, rows, state, text);
    followers.follow({ state, data, rows }, options, text, plain);
    // The charts drawn at this view: their embed codes carry it.
    followEmbedCodes([d.scatter, d.bar].filter(Boolean),
      viewQuery(state, c.defaults, c.unit, EMBED_KEYS));
  }

  showAll.forEach((button) => {
    button.hidden = false;
    button.addEventListener("click", () => { interactive = true; render(); });
  });
  wireControls(form, c, page);
  table.addEventListener("jb:sorted", (event) => {
    const sort = `${event.detail.index}.${event.detail.direction}`;
    if (sort !== page.state.sort) {
      page.state.sort = sort;
      writeUrl(page.state, c.defaults, true, c.unit);
    }
    if (!everyRow) render();  // sort every model, not only the first view's rows
  });
  window.addEventListener("popstate", () => {
    page.state = readState();
    showState(c, page.state);
    render();
  });
  form.hidden = false;
  showState(c, page.state);
  render();
}

const form = document.querySelector("form.explore");
if (form) startTask(form);
