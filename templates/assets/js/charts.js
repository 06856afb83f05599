// The charts that follow a view: the task page's scatter and bar chart, the compare page's
// frontier chart. Each rebinds the data of the figure's published Vega-Lite spec; axis
// titles and the deadline's wording come from the explore JSON.
import { embedChart } from "./live-chart.js";
import { show } from "./formats.js";
import { interval, latency, paretoFrontier } from "./rank.js";
import { places } from "./table.js";
import { deadlineLabel } from "./wording.js";

// charts.side: a label beside a value in the right half of the log range goes left.
export function side(value, values) {
  const all = [value, ...values];
  const low = Math.min(...all);
  const high = Math.max(...all);
  if (low <= 0 || high <= low) return "left";
  return Math.log(value / low) / Math.log(high / low) > 0.5 ? "right" : "left";
}

function deadlineRule(ms, data, points) {
  const x = ms / data.latency.scale_ms;
  return [{ latency: x, label: deadlineLabel(ms, data.latency),
    side: side(x, points.map((p) => p.latency)) }];
}

// A configuration's latency at `percentile` in the unit the chart's axis shows.
function chartLatency(c, percentile, data) {
  return latency(c, percentile, data.order) / data.latency.scale_ms;
}

// Set the title of every encoding of `field` in a Vega-Lite spec (axis follows percentile).
function retitle(node, field, title) {
  if (Array.isArray(node)) node.forEach((n) => retitle(n, field, title));
  else if (node && typeof node === "object") {
    if (node.field === field && "title" in node) node.title = title;
    Object.values(node).forEach((n) => retitle(n, field, title));
  }
}

// The scale of a spec's colour encoding of `field` ("model", "legend"), or null.
function colourScale(node, field) {
  if (Array.isArray(node)) return node.map((n) => colourScale(n, field)).find(Boolean) || null;
  if (!node || typeof node !== "object") return null;
  const c = node.color;
  if (c && typeof c === "object" && c.field === field && c.scale) return c.scale;
  return Object.entries(node).filter(([k]) => k !== "datasets")
    .map(([, n]) => colourScale(n, field)).find(Boolean) || null;
}

// charts.with_model_colors: each model of `colors` (name -> colour) drawn in its colour.
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

// A chart draws over the static image; a failed load leaves the image, so errors are quiet.
function redraw(figure, adjust) {
  embedChart(figure, adjust).catch(() => {});
}

// Every configuration of the task; the ranked ones (`rows`) drawn as chosen.
export function drawScatter(figure, data, rows, state) {
  const chosen = new Set(rows.map((r) => r.config.source));
  const points = data.configs.map((c) => ({
    model: data.models[c.model_id].nickname, gpu: c.gpu_model,
    latency: chartLatency(c, state.pct, data), energy: c.energy_per_output_joules,
    chosen: chosen.has(c.source), config: c.config,
  }));
  redraw(figure, (spec) => {
    // plan/task_charts.py scatter_colors: a model the legend does not name is one of the
    // grey "other models".
    const named = new Set(colourScale(spec, "legend")?.domain || []);
    for (const p of points) p.legend = named.has(p.model) ? p.model : spec.usermeta?.other;
    spec.datasets = { table: points, deadline: deadlineRule(state.deadline, data, points) };
    retitle(spec, "latency", data.latency.axis[state.pct]);
  });
}

// One bar of the top rows, with its noise interval (plan/task.py bar_chart).
function bar(r, data) {
  const value = r.config.efficiency;
  const [low, high] = interval(value, r.config.runs || 1, data.noise);
  const fmt = (v) => show(data.units.efficiency_show, v);
  const shared = (r.rankBest ?? r.rank) !== (r.rankWorst ?? r.rank);
  return { model: data.models[r.config.model_id].nickname, rank: r.rank,
    places: places(r), value, low, high, gpu: r.config.gpu_model, shown: fmt(value),
    // plan/task.py bar_label: the places a bar shares within the noise
    label: shared ? `${fmt(value)} (#${places(r)})` : fmt(value),
    interval: data.noise ? `${fmt(low)}–${fmt(high)}` : "unknown" };
}

// The top rows' efficiency as bars, under `title` (the figure's caption says it too).
export function drawBars(figure, data, top, title) {
  redraw(figure, (spec) => {
    spec.datasets = { table: top.map((r) => bar(r, data)) };
    spec.title = title;
    const caption = figure.querySelector(".chart-title");
    if (caption) caption.textContent = title;
  });
}

// Every configuration of the `chosen` models with each one's Pareto frontier; the ones
// ranked (`best`) drawn as chosen.
export function drawFrontiers(figure, data, chosen, best, state) {
  const points = [];
  for (const m of chosen) {
    const mine = data.configs.filter((c) => c.model_id === m);
    const frontier = new Set(paretoFrontier(mine, state.pct, data.order).map((c) => c.source));
    for (const c of mine) {
      const [low, high] = interval(c.energy_per_output_joules, c.runs || 1, data.noise);
      points.push({ model: data.models[m].nickname, gpu: c.gpu_model,
        latency: chartLatency(c, state.pct, data), energy: c.energy_per_output_joules,
        low, high, frontier: frontier.has(c.source), config: c.config,
        chosen: best.some((r) => r.config.source === c.source) });
    }
  }
  redraw(figure, (spec) => {
    spec.datasets = { table: points, deadline: deadlineRule(state.deadline, data, points) };
    spec.title = `Energy vs latency: ${chosen.map((m) => data.models[m].nickname).join(", ")}`;
    retitle(spec, "latency", data.latency.axis[state.pct]);
    // The energy axis's title on every layer that draws on it (the whiskers' "low" too:
    // Vega-Lite joins different titles of one axis with commas).
    for (const field of ["energy", "low"]) retitle(spec, field, data.units.energy_axis);
    // The palette in the order the models were chosen: the first colours are the most
    // distinct ones (for colour-blind readers too), and no two chosen models share one.
    const palette = colourScale(spec, "model")?.range || [];
    if (palette.length >= chosen.length) {
      colorModels(spec, Object.fromEntries(
        chosen.map((m, i) => [data.models[m].nickname, palette[i]])));
    }
  });
}
