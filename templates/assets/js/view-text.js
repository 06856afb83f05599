// The task page's view in words, for captions, the status line and empty tables.
import { latency } from "./rank.js";
import { deadlineText } from "./wording.js";

// The current settings: "median ITL ≤ 50 ms, on H100, FP8 only"; `text` is the deadline's.
export function viewText(state, data, text, allPrecisions) {
  const parts = [text, `on ${state.gpu.join(" and ") || "no GPU"}`];
  if (state.precision.length !== allPrecisions.length) {
    parts.push(`${state.precision.map((p) => data.precisions[p] || p).join(", ") ||
      "no precision"} only`);
  }
  if (state.budget !== "") parts.push(`at most ${budgetText(state, data)}`);
  return parts.join(", ");
}

// The energy budget (kept in J) as the budget box reads it: "0.07 MJ/video".
function budgetText(state, data) {
  const value = +(Number(state.budget) / data.units.scale_joules).toPrecision(12);
  return `${value} ${data.units.energy_scaled_label}`;
}

// Why a ranking is empty, and what would fill it; `scale`: ms per unit of the deadline box.
export function emptyText(state, data, scale) {
  if (!state.gpu.length) return "No GPU is selected: tick at least one GPU above.";
  if (!state.precision.length) return "No precision is selected: tick at least one above.";
  const budgetJ = state.budget === "" ? Infinity : Number(state.budget);
  const pool = data.configs.filter((c) => state.gpu.includes(c.gpu_model) &&
    state.precision.includes(c.weight_precision) && c[data.order.energy] <= budgetJ);
  if (!pool.length) {
    return `No configuration fits an energy budget of ${budgetText(state, data)} on these GPUs.`;
  }
  const fastest = Math.min(...pool.map((c) => latency(c, state.pct, data.order)));
  const step = scale >= 1000 ? 100 : 0.1;
  const lowest = Math.ceil(fastest / step - 1e-9) * step;
  return "No configuration is this fast. The lowest workable deadline here is " +
    `${deadlineText(lowest, state.pct, data.latency)}.`;
}
