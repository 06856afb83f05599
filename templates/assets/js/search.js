// Model search boxes: a table's rows that do not mention the query are hidden.

// Hide the rows that do not mention `query`; returns how many stay shown.
export function filterRows(table, query) {
  const needle = query.trim().toLowerCase();
  const body = table.tBodies[0];
  let shown = 0;
  let rows = 0;
  for (const row of body.rows) {
    if (row.classList.contains("no-match")) continue;
    const name = row.querySelector("td:nth-child(2), td:first-child")?.textContent || "";
    row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle) &&
      !name.toLowerCase().includes(needle);
    rows += 1;
    if (!row.hidden) shown += 1;
  }
  // A search that hides every row says so, instead of leaving a bare header.
  let note = body.querySelector("tr.no-match");
  if (rows && !shown) {
    if (!note) {
      note = document.createElement("tr");
      note.className = "no-match";
      const cell = document.createElement("td");
      cell.colSpan = table.tHead.rows[0].cells.length;
      note.append(cell);
    }
    note.cells[0].textContent = `No model matches “${query.trim()}”.`;
    body.append(note);
  } else if (note) {
    note.remove();
  }
  return shown;
}

// Each input[data-search-for] filters the rows of the table it names.
export function wireSearchBoxes() {
  for (const input of document.querySelectorAll("input[data-search-for]")) {
    const table = document.getElementById(input.dataset.searchFor);
    if (!table) continue;
    input.closest("[hidden]")?.removeAttribute("hidden");
    input.addEventListener("input", () => filterRows(table, input.value));
  }
}
