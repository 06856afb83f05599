// The deadline slider: positions 0..1000 on a log scale between the task's fastest and
// slowest latency, with round deadlines marked under it.
import { grouped } from "./formats.js";

// Round values a slider can offer as tick labels: 1, 3, 10, 30, ... within [low, high].
export function sliderTicks(low, high) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(low)); e <= Math.ceil(Math.log10(high)); e++) {
    for (const m of [1, 3]) {
      const v = m * 10 ** e;
      if (v >= low && v <= high) ticks.push(+v.toPrecision(6));
    }
  }
  return ticks.length > 6 ? ticks.filter((v) => String(v)[0] === "1") : ticks;
}

// The mapping between ms in [minMs, maxMs] and slider positions; a position's deadline is
// rounded (0.1 ms below 10 ms, else whole ms).
export function logScale(minMs, maxMs) {
  const min = Math.log(minMs);
  const max = Math.log(maxMs);
  return {
    toSlider: (ms) => Math.round(((Math.log(ms) - min) / (max - min)) * 1000),
    fromSlider: (v) => {
      const ms = Math.exp(min + (v / 1000) * (max - min));
      return ms < 10 ? Math.round(ms * 10) / 10 : Math.round(ms);
    },
  };
}

// Buttons under `range` at round deadlines (in the box's unit: ms per unit is `scale`);
// `pick(ms)` takes the one clicked.
export function addTicks(range, minMs, maxMs, unit, scale, pick) {
  const { toSlider } = logScale(minMs, maxMs);
  const holder = document.createElement("div");
  holder.className = "ticks";
  for (const v of sliderTicks(minMs / scale, maxMs / scale)) {
    const tick = document.createElement("button");
    tick.type = "button";
    tick.textContent = grouped(v, v < 1 ? String(v).split(".")[1].length : 0);
    tick.setAttribute("aria-label", `Deadline ${tick.textContent} ${unit}`);
    // The thumb's centre travels from 8 px to 8 px short of the track's ends.
    tick.style.left = `calc(8px + (100% - 16px) * ${toSlider(v * scale) / 1000})`;
    tick.addEventListener("click", () => pick(v * scale));
    holder.append(tick);
  }
  const wrap = document.createElement("span");
  wrap.className = "range-wrap";
  range.before(wrap);
  wrap.append(range, holder);
}
