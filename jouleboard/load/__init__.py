"""The load stage: the registries (:mod:`jouleboard.load.registry`) and the whole data folder
checked together (:mod:`jouleboard.load.dataset`). Nothing is imported here, so the kinds
(the check stage) can read the registry types without loading the data loader."""
