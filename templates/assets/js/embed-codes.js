// The embed box under a chart: its code selects itself, copies with one button, and holds
// full addresses where the site was built without site_url.

// Select all on focus, so a click and a copy take the whole snippet.
function selectOnFocus() {
  for (const code of document.querySelectorAll(".embed-code")) {
    code.addEventListener("focus", () => code.select());
  }
}

// A site built without site_url: its embed code and citations hold root-relative paths,
// which would point at the article's own site once pasted. Here they become this page's
// origin + path (only the exact places a path stands in: src="...", ", path." and \url{}).
function absoluteAddresses() {
  for (const box of document.querySelectorAll(".embed-box[data-relative]")) {
    const origin = location.origin;
    if (!/^https?:/.test(origin)) continue;  // opened from a file: no address to give
    const embed = box.dataset.embedPath;
    const page = box.dataset.pagePath;
    const absolute = (text) => text
      .replaceAll(`src="${embed}"`, `src="${origin}${embed}"`)
      .replaceAll(`, ${page}.`, `, ${origin}${page}.`)
      .replaceAll(`\\url{${page}}`, `\\url{${origin}${page}}`);
    const code = box.querySelector(".embed-code");
    if (code) code.value = absolute(code.value);
    for (const node of box.querySelectorAll(".cite, .bibtex")) {
      node.textContent = absolute(node.textContent);
    }
  }
}

// Copy buttons: the embed code to the clipboard, said aloud and on screen.
function copyButtons() {
  for (const button of document.querySelectorAll("button.copy[data-copy]")) {
    const source = document.getElementById(button.dataset.copy);
    const status = button.nextElementSibling;
    if (!source) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      let done = false;
      try {
        await navigator.clipboard.writeText(source.value);
        done = true;
      } catch {
        source.select();  // no clipboard permission: a selected code and the browser's copy
        done = document.execCommand && document.execCommand("copy");
      }
      if (status) status.textContent = done ? "Copied" : "Selected: press Ctrl+C (⌘C) to copy";
    });
  }
}

export function wireEmbedCodes() {
  selectOnFocus();
  absoluteAddresses();
  copyButtons();
}
