// An embed page at a reader's own settings: the query string a task page's embed code
// carries (embed-codes.js followEmbedCodes). The task is ranked again with the task page's
// own rank.js and the chart redrawn; with no settings, or no script, the page shows its
// static image: the default view.
import { drawBars, drawScatter } from "./charts.js";
import { rank } from "./rank.js";
import { loadData } from "./task-data.js";
import { EMBED_KEYS, taskState } from "./url-state.js";
import { emptyText, viewText } from "./view-text.js";
import { capital, deadlineText } from "./wording.js";

// The view the query string asks for, checked against what the task offers; null when it
// is the default one. `f`: the figure's data attributes (templates/embed.html).
function askedView(f, data) {
  const choices = {
    percentiles: Object.keys(data.latency.axis), gpus: Object.keys(data.gpus),
    precisions: Object.keys(data.precisions), calculator: false,
  };
  const defaults = {
    deadline: Number(f.deadline), pct: f.percentile, gpu: f.gpus.split(","),
    precision: choices.precisions, budget: "",
  };
  const state = taskState(location.search, defaults, choices);
  const same = EMBED_KEYS.every((k) => String(state[k]) === String(defaults[k]));
  return same ? null : { state, choices };
}

export async function drawEmbedView(figure) {
  const f = figure.dataset;
  const data = await loadData(f.data);
  const asked = askedView(f, data);
  if (!asked) return;
  const { state, choices } = asked;
  const rows = rank(data.configs, {
    deadlineMs: state.deadline, percentile: state.pct, gpus: state.gpu,
    precisions: state.precision, energyBudget: state.budget === "" ? null : Number(state.budget),
    order: data.order, noise: data.noise,
  });
  const text = deadlineText(state.deadline, state.pct, data.latency);
  const view = viewText(state, data, text, choices.precisions);
  const note = document.querySelector(".credit .chart-note");
  if (note) note.textContent = capital(view);
  // "Full page" opens the task page at this view, not its default one.
  const full = Array.from(document.querySelectorAll(".credit a")).find((a) => a.target);
  if (full) full.search = location.search;
  const top = rows.slice(0, Number(f.top));
  if (f.view === "bar" && !top.length) {
    const empty = document.createElement("p");
    empty.className = "empty-view";
    empty.textContent = emptyText(state, data, data.latency.scale_ms);
    (figure.querySelector("picture") || figure.querySelector("img"))?.replaceWith(empty);
    return;
  }
  if (f.view === "bar") {
    // The whole view (GPUs, precisions) in the title: the credit line, which says it too,
    // is the first text a short frame cuts.
    const title = `${f.taskName}: top ${top.length} by ${data.units.efficiency_words} at ${view}`;
    document.querySelector("h1").textContent = title;
    drawBars(figure, data, top, title);
  } else {
    drawScatter(figure, data, rows, state);
  }
  figure.dataset.drawn = "view";
}
