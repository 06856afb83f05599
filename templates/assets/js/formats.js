// Number formats: the rules of jouleboard/measure/formats.py (kept equal by
// tests/test_format_parity.py). Which rule a column uses is the page's data to say (the
// explore JSON's column descriptors), never this file's.

export function grouped(value, decimals) {
  return new Intl.NumberFormat("en-US", {
    minimumFractionDigits: decimals, maximumFractionDigits: decimals,
  }).format(value);
}

export function significant(value, digits) {
  if (value === 0 || !Number.isFinite(value)) return String(value);
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  let decimals = Math.max(digits - 1 - magnitude, 0);
  const rounded = Number(value.toFixed(decimals));
  if (rounded !== 0 && Math.floor(Math.log10(Math.abs(rounded))) !== magnitude) {
    decimals = Math.max(decimals - 1, 0);
  }
  return grouped(value, decimals);
}

// formats.show: a display rule (int, fixedN, sigN, text, precision) applied to a value.
export function show(rule, value, precisions = {}) {
  if (value === null || value === undefined) return "–";
  if (rule === "precision") return precisions[value] || String(value).toUpperCase();
  if (rule === "text" || typeof value !== "number") return String(value);
  if (rule === "int") return grouped(Math.trunc(value), 0);
  if (rule.startsWith("fixed")) return grouped(value, Number(rule.slice(5)));
  if (rule.startsWith("sig")) return significant(value, Number(rule.slice(3)));
  throw new Error(`unknown display rule ${rule}`);
}

// render/footprint.py scaled: `value` in the largest of `steps` ([suffix, size], from the
// explore JSON) it reaches, to 3 significant digits; a figure that rounds to 1,000 of a
// step reads 1.00 of the next (350 Wh, 1.23 MWh; 1.23k, 45.6M), never 1,000,000,000.
export function scaled(value, steps) {
  let i = 0;
  if (value !== 0 && Number.isFinite(value)) {
    steps.forEach(([, size], n) => { if (Math.abs(value) >= size) i = n; });
  }
  let text = significant(value / steps[i][1], 3);
  if (i + 1 < steps.length && Math.abs(Number(text.replaceAll(",", ""))) >= 1000) {
    i += 1;
    text = significant(value / steps[i][1], 3);
  }
  return [text, steps[i][0]];
}

// render/footprint.py energy_text and number_text: "350 Wh", "1.23k".
export function energyText(kwh, steps) {
  const [text, unit] = scaled(kwh, steps);
  return `${text} ${unit}`;
}

export function numberText(value, steps) {
  const [text, suffix] = scaled(value, steps);
  return `${text}${suffix}`;
}
