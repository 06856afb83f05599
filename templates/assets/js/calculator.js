// The electricity, cost and emissions calculator (render/footprint.py in the browser): its
// inputs in the page's state and URL, and its table. The amounts (per 1M tokens, per 1,000
// images), the columns and the figures' steps come from the explore JSON.
import { footprint } from "./rank.js";
import { energyText, numberText } from "./formats.js";
import { fieldError } from "./field-error.js";
import { cell, headerCells, modelCell } from "./table.js";

const FIELDS = [
  ["#price", "price", 0, "The price cannot be negative."],
  ["#pue", "pue", 1, "PUE is at least 1: a facility cannot use less than its IT energy."],
  ["#co2", "co2", 0, "Carbon intensity cannot be negative."]];

// The inputs' defaults, as the page states them.
export function calculatorDefaults(form) {
  return { price: Number(form.dataset.price), pue: Number(form.dataset.pue),
    co2: Number(form.dataset.co2) };
}

function footprintInputs(state) {
  return { pricePerKwh: state.price, pue: state.pue, gramsCo2ePerKwh: state.co2 };
}

export function showCalculator(calc, state) {
  for (const [id, key] of FIELDS) calc.querySelector(id).value = String(state[key]);
}

// The inputs into `getState()`, then `update(push)`.
export function wireCalculator(calc, getState, update) {
  calc.hidden = false;
  calc.addEventListener("submit", (event) => event.preventDefault());
  for (const [id, key, low, rule] of FIELDS) {
    const input = calc.querySelector(id);
    // As the reader types the figures follow (one history entry when the field is left);
    // a value the page cannot use is said beside the field and the last good one is kept.
    const take = (push) => {
      const value = Number(input.value);
      const ok = input.value.trim() !== "" && Number.isFinite(value) && value >= low;
      fieldError(input, ok ? "" : `${rule} The figures still use ${getState()[key]}.`);
      if (ok && (push || getState()[key] !== value)) {
        getState()[key] = value;
        update(push);
      }
    };
    input.addEventListener("input", () => take(false));
    input.addEventListener("change", () => take(true));
  }
}

function footprintRow(c, data, inputs) {
  const steps = data.footprint_steps;
  const cells = [];
  for (const scale of data.footprint) {
    const f = footprint(c[scale.energy] * scale.amount, inputs);
    cells.push([f.kwh, energyText(f.kwh, steps.energy)], [f.cost, numberText(f.cost, steps.number)],
      [f.gramsCo2e / 1000, numberText(f.gramsCo2e / 1000, steps.number)]);
  }
  const tr = document.createElement("tr");
  tr.append(modelCell(c, data), ...cells.map(([v, text]) => cell(v, text, { numeric: true })));
  return tr;
}

// The calculator's table: one row per configuration of `configs`.
export function footprintRows(configs, data, state) {
  return configs.map((c) => footprintRow(c, data, footprintInputs(state)));
}

// The calculator's header, from the explore JSON's footprint columns (render/footprint.py).
export function footprintHeader(table, data) {
  headerCells(table, data.footprint_columns.map((c) =>
    [c.label, c.unit, c.numeric, c.key, "", c.term]), "", data.glossary_url);
}
