// A message under an input that holds a value the page cannot use (none: clear it). In a
// form's controls it follows the input's control, and style.css gives it a row of its own:
// after the row of controls on a wide screen, under its control on a phone (inside the
// control it widened it and moved the controls beside it).
export function fieldError(input, message) {
  let note = document.getElementById(`${input.id}-error`);
  if (!note) {
    note = document.createElement("span");
    note.id = `${input.id}-error`;
    note.className = "field-error";
    note.setAttribute("role", "alert");
    (input.closest("form .control") || input).after(note);
    input.setAttribute("aria-describedby",
      `${input.getAttribute("aria-describedby") || ""} ${note.id}`.trim());
  }
  note.textContent = message;
  note.hidden = !message;
  if (message) input.setAttribute("aria-invalid", "true");
  else input.removeAttribute("aria-invalid");
}
