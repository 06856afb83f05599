// The compare page (entry module): two to six models of a task side by side at a deadline,
// their frontiers on one chart, and the calculator. The view lives in the URL.
import { calculatorDefaults, footprintHeader, footprintRows, showCalculator,
  wireCalculator } from "./calculator.js";
import { drawFrontiers } from "./charts.js";
import { ratioItems } from "./compare-ratios.js";
import { fieldError } from "./field-error.js";
import { rank } from "./rank.js";
import { fillBody, rankingHeader, rankingRow } from "./table.js";
import { loadData } from "./task-data.js";
import { compareState, ownKey, writeUrl } from "./url-state.js";
import { deadlineText } from "./wording.js";

const PICK = "Pick two to six models.";

// The tasks the select offers, by id: data URL, default deadline and percentile, the
// deadline box's unit and the percentiles its kind has (the option's data attributes).
function readTasks(select) {
  return Object.fromEntries(Array.from(select.options).map((o) => [o.value, {
    url: o.dataset.data, deadline: Number(o.dataset.deadline), pct: o.dataset.percentile,
    unit: o.dataset.unit || "ms", scale: Number(o.dataset.scale) || 1,
    percentiles: (o.dataset.percentiles || "p50").split(" "),
  }]));
}

// A checkbox per model of the task, by name; at most `max` ticked.
function modelChoices(data, state, max, update) {
  const ids = Object.keys(data.models).sort((a, b) =>
    data.models[a].nickname.localeCompare(data.models[b].nickname));
  return ids.map((id) => {
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
}

function startCompare(form) {
  const max = Number(form.dataset.max);
  const taskSelect = form.querySelector("#compare-task");
  const number = form.querySelector("#compare-deadline");
  const percentile = form.querySelector("#compare-percentile");
  // A kind with one latency (image and video tasks' batch latency) has no percentile choice.
  const percentileControl = form.querySelector("#compare-percentile-control");
  // The deadline box shows the task's kind's unit (ms or s); state and URL keep ms.
  const unitLabel = form.querySelector("label[for=compare-deadline] .unit");
  const out = document.getElementById("compare-results");
  const table = out.querySelector("#compare-table");
  const calc = document.querySelector("form.calculator");
  const tasks = readTasks(taskSelect);
  const first = taskSelect.options[0].value;
  const defaults = { task: first, models: [], deadline: tasks[first].deadline,
    pct: tasks[first].pct, gpu: [], ...(calc ? calculatorDefaults(calc) : {}) };
  const readState = () => compareState(location.search, tasks, first, defaults, max);
  let state = readState();

  function showState() {
    const task = tasks[state.task];
    taskSelect.value = state.task;
    number.value = String(state.deadline / task.scale);
    fieldError(number, "");
    if (unitLabel) unitLabel.textContent = task.unit;
    percentile.value = state.pct;
    if (percentileControl) percentileControl.hidden = task.percentiles.length < 2;
    if (calc) showCalculator(calc, state);
  }

  function showFootprint(data, best) {
    const target = document.getElementById(calc.dataset.table);
    footprintHeader(target, data);
    fillBody(target, footprintRows(best.map((r) => r.config), data, state), PICK);
  }

  async function render() {
    showState();
    const data = await loadData(tasks[state.task].url);
    // Models the task has not measured drop out (another task's choice), and the URL with them.
    const kept = state.models.filter((m) => ownKey(data.models, m));
    if (kept.length !== state.models.length) {
      state.models = kept;
      writeUrl(state, defaults, false, tasks[state.task]);
    }
    // The boxes are made again (the task's models): the one in focus keeps it, or a
    // keyboard user ticking models is sent back to the top of the page each time.
    const choices = form.querySelector(".model-choices");
    const focused = choices.contains(document.activeElement) ? document.activeElement.value : null;
    choices.replaceChildren(...modelChoices(data, state, max, update));
    if (focused !== null) {
      const box = Array.from(choices.querySelectorAll("input")).find((b) => b.value === focused);
      if (box) box.focus();
    }
    const chosen = state.models;
    // A task page's GPUs, when its link gave them: said in the heading, and every figure
    // (table, ratios, calculator, chart) on them alone.
    const gpus = state.gpu.filter((g) => ownKey(data.gpus, g));
    const view = gpus.length
      ? { ...data, configs: data.configs.filter((c) => gpus.includes(c.gpu_model)) } : data;
    out.querySelector(".compare-deadline").textContent =
      deadlineText(state.deadline, state.pct, data.latency) +
      (gpus.length ? `, on ${gpus.join(" and ")} only` : "");
    const best = rank(view.configs.filter((c) => chosen.includes(c.model_id)), {
      deadlineMs: state.deadline, percentile: state.pct, gpus: null, precisions: null,
      energyBudget: null, order: data.order, noise: data.noise });
    rankingHeader(table, data.table, data.ranked_key, data, state.pct);
    // What places mean under this task's noise, and where its accuracy comes from.
    const places = document.getElementById("compare-table-places");
    if (places && places.firstChild) places.firstChild.textContent = `${data.rank_note} `;
    const quality = out.querySelector(".quality-note");
    if (quality) {
      quality.textContent = data.quality_note;
      quality.hidden = !data.quality_note;
    }
    fillBody(table, best.map((r) => rankingRow(r, data, state.pct)),
      chosen.length ? "None of these models meets the deadline." : PICK);
    const missing = chosen.filter((m) => !best.some((r) => r.config.model_id === m));
    out.querySelector(".ratios").replaceChildren(...ratioItems(best, data, missing));
    if (calc) showFootprint(data, best);
    const figure = out.querySelector("figure.chart");
    figure.hidden = chosen.length === 0;
    if (chosen.length) drawFrontiers(figure, view, chosen, best, state);
  }

  function update(push) {
    writeUrl(state, defaults, push, tasks[state.task]);
    render();
  }

  taskSelect.addEventListener("change", () => {
    const t = tasks[taskSelect.value];
    // The chosen models stay chosen where the new task has them (render drops the rest).
    state = { ...state, task: taskSelect.value, deadline: t.deadline, pct: t.pct };
    update(true);
  });
  number.addEventListener("change", () => {
    const value = Number(number.value);
    const ok = Number.isFinite(value) && value > 0;
    // As the task page's box says it (js/task-controls.js): not taken, and what still holds.
    fieldError(number, ok ? "" : "Enter a deadline above 0. The comparison still uses " +
      `${state.deadline / tasks[state.task].scale}.`);
    if (!ok) return;
    state.deadline = value * tasks[state.task].scale;
    update(true);
  });
  percentile.addEventListener("change", () => { state.pct = percentile.value; update(true); });
  form.addEventListener("submit", (event) => { event.preventDefault(); update(true); });
  if (calc) wireCalculator(calc, () => state, update);
  window.addEventListener("popstate", () => { state = readState(); render(); });
  out.hidden = false;
  render();
}

const form = document.querySelector("form.compare");
if (form) startCompare(form);
