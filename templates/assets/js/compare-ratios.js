// The compare page's sentences under its table: how many times the energy of the most
// frugal chosen model each other one uses, and whether the noise can tell them apart.
import { runsToSeparate, surelyLower } from "./rank.js";
import { grouped } from "./formats.js";

// Whether two configurations' energy per output differ beyond the measurement noise, and
// if not, how many runs of each would tell them apart were their point values to hold.
function distinguishable(a, b, data) {
  if (!data.noise) return "measurement noise unknown";
  const e = data.order.energy;
  const [low, high] = a[e] <= b[e] ? [a, b] : [b, a];
  if (surelyLower(low[e], low.runs || 1, high[e], high.runs || 1, data.noise)) {
    // At the confidence the comparison uses, as rank/noise.py percent() writes it (95%).
    const confidence = +(data.noise.confidence * 100).toPrecision(3);
    return `a difference beyond measurement noise at ${confidence}% confidence`;
  }
  const runs = runsToSeparate(high[e] / low[e], data.noise);
  const settle = runs === null ? "" : `; ${runs} runs of each would separate them if these ` +
    "values held";
  return `within measurement noise: not distinguishable${settle}`;
}

function ratioLines(best, data) {
  if (best.length < 2) return [];
  const name = (c) => data.models[c.model_id].nickname;
  const base = best.reduce((a, b) =>
    (b.config.energy_per_response_joules < a.config.energy_per_response_joules ? b : a)).config;
  return best.filter((r) => r.config !== base).map(({ config: c }) => {
    const times = c.energy_per_response_joules / base.energy_per_response_joules;
    const perOutput = c.energy_per_output_joules / base.energy_per_output_joules;
    const { output, response } = data.units;
    const uses = `${name(c)} uses ${grouped(times, 1)}× the energy per ${response} of ` +
      `${name(base)} at this deadline`;
    // The noise is judged on the energy per output: said beside that ratio, so it is not
    // read as a word on the per-response one (which the output's length also moves).
    if (response === output) return `${uses} (${distinguishable(base, c, data)}).`;
    return `${uses}; per ${output}, ${grouped(perOutput, 1)}×, ` +
      `${distinguishable(base, c, data)}.`;
  });
}

// The ratios of `best` (ranked rows), what differs in their outputs, and which of the
// chosen models (`missing`) have no configuration that meets the deadline.
export function ratioItems(best, data, missing) {
  const items = ratioLines(best, data);
  // Unlike outputs (image steps, video size and length) are not the same work per output.
  if (new Set(best.map((r) => r.config.output || "")).size > 1) {
    items.push("Outputs differ: " + best.map((r) =>
      `${data.models[r.config.model_id].nickname} at ${r.config.output}`).join("; ") + ".");
  }
  for (const m of missing) {
    items.push(`${data.models[m].nickname} has no configuration that meets this deadline.`);
  }
  return items.map((text) => {
    const li = document.createElement("li");
    li.textContent = text;
    return li;
  });
}
