// The page's ES modules (templates/assets/js/) for CommonJS tests and scripts: the named
// modules' exports as one object. A helper, not a test (its name has no .test).
"use strict";
const path = require("node:path");
const { pathToFileURL } = require("node:url");

const FOLDER = path.join(__dirname, "..", "..", "templates", "assets", "js");

async function modules(...names) {
  const loaded = await Promise.all(
    names.map((name) => import(pathToFileURL(path.join(FOLDER, name)).href)));
  return Object.assign({}, ...loaded);
}

module.exports = { modules };
