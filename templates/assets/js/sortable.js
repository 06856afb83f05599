// Sortable tables: each header becomes a button; cells carry raw values in data-value.

// Order a table's body by column `index`; `notify` says so with a jb:sorted event (the task
// page keeps the sort in its URL).
export function sortTable(table, index, direction, notify = true) {
  const th = table.tHead.rows[0].cells[index];
  for (const cell of table.tHead.rows[0].cells) cell.removeAttribute("aria-sort");
  th.setAttribute("aria-sort", direction);
  const numeric = th.classList.contains("num");
  const body = table.tBodies[0];
  // Grouped rows (a model's configurations per GPU count) give way to the chosen order.
  for (const extra of Array.from(table.tBodies).slice(1)) {
    body.append(...Array.from(extra.rows));
    extra.remove();
  }
  for (const group of Array.from(body.querySelectorAll("tr.group"))) group.remove();
  const rows = Array.from(body.rows).filter((row) => row.cells.length > index &&
    !row.classList.contains("no-match"));
  rows.sort((a, b) => {
    const x = a.cells[index].dataset.value;
    const y = b.cells[index].dataset.value;
    const o = numeric ? Number(x) - Number(y) : x.localeCompare(y);
    return direction === "ascending" ? o : -o;
  });
  body.append(...rows);
  if (notify) table.dispatchEvent(new CustomEvent("jb:sorted", { detail: { index, direction } }));
}

export function makeSortable(table) {
  if (!table.tHead || table.dataset.sortable === "on") return;
  table.dataset.sortable = "on";
  Array.from(table.tHead.rows[0].cells).forEach((th, index) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "sort";
    // A definition link stays outside the button (no link inside a button).
    const definition = th.querySelector("a.def");
    button.append(...Array.from(th.childNodes).filter((n) => n !== definition));
    th.append(button);
    if (definition) th.append(definition);
    button.addEventListener("click", () => {
      const next = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      sortTable(table, index, next);
    });
  });
}
