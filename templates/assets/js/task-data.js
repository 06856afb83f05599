// A task's explore JSON (plan/explore.py), fetched once per page and URL.
import { records } from "./rank.js";

const loaded = new Map();

export function loadData(url) {
  if (!loaded.has(url)) {
    loaded.set(url, fetch(url).then((r) => r.json()).then((data) => {
      data.configs = records(data);
      return data;
    }));
  }
  return loaded.get(url);
}
