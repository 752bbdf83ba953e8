"""``kforge hotspots``: from a model to the kernels that matter. The model runs in a worker process
(``worker/``), profiled phase by phase; KForge's process prints the ranked table, draws the chart, and reads the
``model.json`` an extraction leaves for ``kforge integrate --hotspots`` and ``kforge bench``."""
