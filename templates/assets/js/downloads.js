// "Download this view": the ranking the reader is looking at as a CSV file, named as the
// prebuilt downloads are (urls.deadline_slug), shown in place of them off the default view.
import { columnField } from "./table.js";

// A deadline in a file name, as urls.deadline_slug writes it: p50-300ms, batch-1800s.
export function deadlineSlug(ms, percentile) {
  if (ms >= 1000 && Number.isInteger(ms / 1000)) return `${percentile}-${ms / 1000}s`;
  return `${percentile}-${+ms.toPrecision(6)}ms`.replace(".", "_");
}

// One CSV field: quoted when it must be; text that a spreadsheet would run as a formula
// starts with an apostrophe (as escape.py does for the published CSVs).
export function csvField(value) {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

// The noise columns a ranking download ends with, as rank/tables.py with_noise names them.
const NOISE_KEYS = ["rank_best", "rank_worst", "critical_value", "degrees_of_freedom"];

// A ranking as CSV: rank, model id and name, the GPUs (the columns the prebuilt ranking
// files begin with), then the table's columns at full precision, then the places the noise
// allows and the critical value and degrees of freedom behind them (empty when unknown).
// UTF-8 with LF line ends, as the downloads page says of every CSV file (core/escape.py).
export function rankingCsv(rows, data, percentile) {
  const keys = data.table.filter((d) => d.show !== "gpu").map((d) => columnField(d, percentile));
  const lines = [["rank", "model_id", "nickname", "gpu_model", "num_gpus", ...keys,
    ...NOISE_KEYS].join(",")];
  const noise = data.noise || {};
  for (const r of rows) {
    const c = r.config;
    lines.push([r.rank, c.model_id, data.models[c.model_id].nickname, c.gpu_model,
      c.num_gpus, ...keys.map((k) => c[k]), r.rankBest ?? r.rank, r.rankWorst ?? r.rank,
      noise.c ?? null, noise.nu ?? null].map(csvField).join(","));
  }
  return `${lines.join("\n")}\n`;
}

// The view's file name: task, deadline, GPUs, then the precisions and budget if narrowed.
function viewFileName(task, state, data, allPrecisions) {
  const prefix = (data.slug_prefix || {})[state.pct] || state.pct;
  const parts = [task, deadlineSlug(state.deadline, prefix),
    ...state.gpu.map((g) => g.toLowerCase())];
  if (state.precision.length !== allPrecisions.length) parts.push(...state.precision);
  if (state.budget !== "") parts.push(`budget-${state.budget}`);
  return `${parts.join("-").replace(/[^A-Za-z0-9_.-]+/g, "_")}.csv`;
}

let viewUrl = null;  // the object URL of the file offered now (freed when replaced)

// The prebuilt links on the default view (`plain`); else a link to this view's file.
export function offerDownloads(holder, view, plain, page) {
  const prebuilt = holder.querySelector(".prebuilt");
  const mine = holder.querySelector(".view-download");
  prebuilt.hidden = !plain;
  mine.hidden = plain;
  if (viewUrl) URL.revokeObjectURL(viewUrl);
  viewUrl = null;
  if (plain) return;
  const { task, state, data, rows, allPrecisions } = page;
  const name = viewFileName(task, state, data, allPrecisions);
  viewUrl = URL.createObjectURL(new Blob([rankingCsv(rows, data, state.pct)],
    { type: "text/csv" }));
  const link = document.createElement("a");
  link.href = viewUrl;
  link.download = name;
  link.textContent = `CSV (${name})`;
  // What it holds, beside the prebuilt files' (rank/tables.py with_noise): two reviews
  // took it for one of them and missed their columns.
  mine.replaceChildren(`Download this view (${view}): `, link,
    ": the table's columns and each row's places. The prebuilt files, of the default view, " +
    "also give each row's runs, uncertainty and intervals.");
}
