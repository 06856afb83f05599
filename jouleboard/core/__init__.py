"""The ground floor: located problems, reading supplied files safely, text rules,
canonical JSON and YAML, escaping, slugs and URLs, the console."""
