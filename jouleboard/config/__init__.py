"""site.yaml and the registries (models, GPUs, tasks, releases): their schema,
loading, identities; the site folder's prose."""
