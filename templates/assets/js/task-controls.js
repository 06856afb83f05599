// The task page's controls (templates/explore.html): what they offer and their defaults,
// the state shown in them, and their changes into the state.
import { calculatorDefaults, showCalculator, wireCalculator } from "./calculator.js";
import { fieldError } from "./field-error.js";
import { addTicks, logScale } from "./slider.js";

const values = (boxes) => boxes.map((b) => b.value);
// A scaled figure without the last bit's noise (0.07 MJ is 70000 J, not 70000.00000000001).
const rounded = (x) => +x.toPrecision(12);

// The controls of `form`, with the page's defaults and choices as its markup states them.
export function readControls(form) {
  const d = form.dataset;
  const gpuBoxes = Array.from(form.querySelectorAll("input[name=gpu]"));
  const precisionBoxes = Array.from(form.querySelectorAll("input[name=precision]"));
  const percentile = form.querySelector("#percentile");
  const calc = document.querySelector("form.calculator");
  // The deadline box shows the kind's unit (ms or s); state and URL keep ms. The budget
  // box reads as the table's energy column (J/token, kJ/image, MJ/video); they keep J.
  const scale = Number(d.scale || 1);
  const budgetScale = Number(d.budgetScale || 1);
  return {
    d, calc, gpuBoxes, precisionBoxes, percentile, scale, budgetScale,
    unit: { scale, unit: d.unit || "ms" },
    range: form.querySelector("#deadline-range"),
    number: form.querySelector("#deadline-ms"),
    budget: form.querySelector("#budget"),
    search: form.querySelector("#model-search"),
    status: form.querySelector(".status"),
    slider: logScale(Number(d.min), Number(d.max)),
    defaults: {
      deadline: Number(d.deadline), pct: d.percentile,
      gpu: values(gpuBoxes.filter((b) => b.defaultChecked)),
      precision: values(precisionBoxes), budget: "", q: "", sort: "",
      ...(calc ? calculatorDefaults(calc) : {}),
    },
    choices: {
      // A select offers the kind's percentiles; a kind with one has a hidden input.
      percentiles: percentile.options ? values(Array.from(percentile.options)) : [percentile.value],
      gpus: values(gpuBoxes), precisions: values(precisionBoxes), calculator: Boolean(calc),
    },
  };
}

// The slider at deadline `ms`, its value read out as the deadline ("300 ms"), not the
// thumb's position on its 0-1000 scale.
function placeThumb(c, ms) {
  c.range.value = String(c.slider.toSlider(ms));
  sayDeadline(c, ms);
}

function sayDeadline(c, ms) {
  c.range.setAttribute("aria-valuetext", `${ms / c.scale} ${c.unit.unit}`);
}

export function showState(controls, state) {
  const c = controls;
  c.number.value = String(state.deadline / c.scale);
  placeThumb(c, state.deadline);
  c.percentile.value = state.pct;
  c.gpuBoxes.forEach((b) => { b.checked = state.gpu.includes(b.value); });
  c.precisionBoxes.forEach((b) => { b.checked = state.precision.includes(b.value); });
  c.budget.value = state.budget === "" ? "" : String(rounded(Number(state.budget) / c.budgetScale));
  c.search.value = state.q;
  if (c.calc) showCalculator(c.calc, state);
}

// Slider changes this close together (arrow keys held or pressed in a run) make one entry
// in the browser's history, not one per step.
const ONE_GESTURE_MS = 1000;

// The deadline controls: the slider's drag (the view follows, one history entry when let
// go), the number box and the round-deadline ticks.
function wireDeadline(c, page) {
  c.range.addEventListener("input", () => {
    page.state.deadline = c.slider.fromSlider(Number(c.range.value));
    c.number.value = String(page.state.deadline / c.scale);
    sayDeadline(c, page.state.deadline);
    page.render();
  });
  let lastChange = -Infinity;
  c.range.addEventListener("change", () => {
    const now = performance.now();
    page.update(now - lastChange > ONE_GESTURE_MS);
    lastChange = now;
  });
  c.number.addEventListener("change", () => {
    const value = Number(c.number.value) * c.scale;
    const ok = Number.isFinite(value) && value > 0;
    fieldError(c.number, ok ? "" :
      `Enter a deadline above 0. The ranking still uses ${page.state.deadline / c.scale}.`);
    if (!ok) return;
    page.state.deadline = value;
    placeThumb(c, value);
    page.update(true);
  });
  addTicks(c.range, Number(c.d.min), Number(c.d.max), c.unit.unit, c.scale, (ms) => {
    page.state.deadline = ms;
    fieldError(c.number, "");
    showState(c, page.state);
    page.update(true);
  });
}

function wireBudget(c, page) {
  c.budget.addEventListener("change", () => {
    const value = Number(c.budget.value);
    const empty = c.budget.value.trim() === "";
    const ok = empty || (Number.isFinite(value) && value > 0);
    // 0 or less admits nothing: said beside the field, not silently read as "no budget".
    fieldError(c.budget, ok ? "" : `An energy budget is more than 0 ${c.d.budgetUnit || "J"}; ` +
      "leave it empty for none.");
    if (!ok) return;
    page.state.budget = empty ? "" : String(rounded(value * c.budgetScale));
    page.update(true);
  });
}

// Controls -> page.state -> page.update (URL and view); Reset -> page.reset.
export function wireControls(form, c, page) {
  wireDeadline(c, page);
  c.percentile.addEventListener("change", () => {
    page.state.pct = c.percentile.value;
    page.update(true);
  });
  c.gpuBoxes.concat(c.precisionBoxes).forEach((box) => box.addEventListener("change", () => {
    page.state.gpu = values(c.gpuBoxes.filter((b) => b.checked));
    page.state.precision = values(c.precisionBoxes.filter((b) => b.checked));
    page.update(true);
  }));
  wireBudget(c, page);
  c.search.addEventListener("input", () => { page.state.q = c.search.value; page.update(false); });
  form.addEventListener("submit", (event) => event.preventDefault());
  form.querySelector("button[type=reset]").addEventListener("click", (event) => {
    event.preventDefault();
    page.reset();
  });
  if (c.calc) wireCalculator(c.calc, () => page.state, page.update);
}
