"""The load stage: the registries (:mod:`jouleboard.config.registry`) and the whole data
folder checked together (:mod:`jouleboard.loading.dataset`). Nothing is imported here, so
the kinds (the check stage) can read the registry types without loading the data loader.
(Not ``load/``: ``jouleboard.load`` is the notebook API's function.)"""

MEASUREMENTS_DIR = "measurements"  # the data folder's folder of measurement files
