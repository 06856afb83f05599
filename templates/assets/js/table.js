// Leaderboard tables drawn from the explore JSON: its column descriptors (Table.browser()
// of jouleboard/rank/tables.py) say each column's key, label, unit and display rule. Text
// only: never innerHTML with data.
import { show } from "./formats.js";
import { makeSortable } from "./sortable.js";
import { capital } from "./wording.js";

export function cell(value, text, options = {}) {
  const td = document.createElement("td");
  td.dataset.value = String(value);
  td.className = [options.numeric ? "num" : "", options.key ? `col-${options.key}` : "",
    options.ranked ? "ranked" : ""].filter(Boolean).join(" ");
  if (options.href) {
    const a = document.createElement("a");
    a.href = options.href;
    a.textContent = text;
    td.append(a);
  } else {
    td.textContent = text;
  }
  if (options.note) {
    const note = document.createElement("span");
    note.className = "note";
    note.textContent = options.note;
    td.append(note);
  }
  return td;
}

// A table's body: `rows`, or one cell saying why there are none.
export function fillBody(table, rows, emptyText) {
  const body = table.tBodies[0];
  body.replaceChildren(...rows);
  if (rows.length === 0) {
    const tr = document.createElement("tr");
    const td = document.createElement("td");
    td.colSpan = table.tHead.rows[0].cells.length;
    td.className = "empty";
    td.textContent = emptyText;
    tr.append(td);
    body.append(tr);
  }
}

export function modelCell(c, data) {
  const m = data.models[c.model_id];
  return cell(m.nickname, m.nickname, { href: m.url, note: m.builder, key: "model" });
}

// Python's str() of a value, as the server writes data-value (66.0 for a float 66).
function pyValue(value, floats, key) {
  if (value === null || value === undefined) return "None";
  return floats.has(key) && Number.isInteger(value) ? value.toFixed(1) : String(value);
}

// The places the noise allows a ranked row: "3" or "2–4" (RankedRow.places in Python).
export function places(row) {
  const best = row.rankBest ?? row.rank;
  const worst = row.rankWorst ?? row.rank;
  return best === worst ? String(best) : `${best}–${worst}`;
}

// The columns with the ranked-by one first, the rest in order (plan/task.py task_table).
export function rankedFirst(columns, key) {
  return [...columns.filter((c) => c.key === key), ...columns.filter((c) => c.key !== key)];
}

// The record field a column shows at `percentile` (the latency column follows it).
export function columnField(column, percentile) {
  return column.by_percentile ? column.by_percentile[percentile] : column.key;
}

function gpuCell(c, data) {
  return cell(`${c.num_gpus}x ${c.gpu_model}`, `${c.num_gpus}× ${c.gpu_model}`,
    { href: data.gpus[c.gpu_model], key: "gpu" });
}

// One leaderboard row from the task's column descriptors (TaskKind.ranking_fields).
export function rankingRow(row, data, percentile, columns = data.table, ranked = data.ranked_key) {
  const c = row.config;
  const floats = data.floatSet || (data.floatSet = new Set(data.floats || []));
  const tr = document.createElement("tr");
  tr.append(cell(row.rank, places(row), { numeric: true, key: "rank" }), modelCell(c, data));
  for (const d of columns) {
    if (d.show === "gpu") {
      tr.append(gpuCell(c, data));
      continue;
    }
    const key = columnField(d, percentile);
    const value = c[key];
    tr.append(cell(pyValue(value, floats, key), show(d.show, value, data.precisions),
      { numeric: d.numeric, key: d.key, ranked: d.key === ranked }));
  }
  return tr;
}

function span(className, text) {
  const el = document.createElement("span");
  el.className = className;
  el.textContent = text;
  return el;
}

// A header row of [label, unit, numeric, key, title, term] as templates/macros.html writes
// it (the compare page follows the chosen task): the column keyed `ranked` marked, and with
// a `glossary` URL each column's "?" link to the term that defines it.
export function headerCells(table, labels, ranked = "", glossary = "") {
  const row = table.tHead.rows[0];
  row.replaceChildren(...labels.map(([label, unit, numeric, key, title, term]) => {
    const th = document.createElement("th");
    th.scope = "col";
    th.className = [numeric ? "num" : "", key ? `col-${key}` : "",
      key && key === ranked ? "ranked" : ""].filter(Boolean).join(" ");
    if (title) th.title = title;
    th.append(label);
    if (unit) th.append(" ", span("unit", unit));
    if (key && key === ranked) th.append(" ", span("ranked-mark", "ranked by"));
    if (term && glossary) {
      const a = document.createElement("a");
      a.className = "def";
      a.href = `${glossary}#${term}`;
      a.setAttribute("aria-label", `Definition of ${label}`);
      a.textContent = "?";
      th.append(a);
    }
    return th;
  }));
  table.dataset.sortable = "";
  makeSortable(table);
}

// A column's header and tooltip in a table ranked at `percentile`: the latency column's
// name that percentile's (Field.at in jouleboard/rank/tables.py).
export function columnHeading(column, data, percentile) {
  const short = column.by_percentile && data.latency.short[percentile];
  if (!short) return [column.label, column.title];
  return [capital(short), `${capital(data.latency.words[percentile])}.`];
}

// The place and model columns, then the task's (`columns`: the explore JSON's `table`), at
// `percentile`.
export function rankingHeader(table, columns, ranked, data, percentile) {
  headerCells(table, [["#", "", true, "rank", "", data.rank_term],
    ["Model", "", false, "model"],
    ...columns.map((d) => {
      const [label, title] = columnHeading(d, data, percentile);
      return [label, d.unit, d.numeric, d.key, title, d.term];
    })],
  ranked, data.glossary_url);
}
