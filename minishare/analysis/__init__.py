"""Measurements and figures: parameter tables, layer-wise distances, memory and time. Each
measurement's figure is a module beside it (``params`` and ``params_figures``, ``layerwise`` and
``layerwise_figure``, ...; training curves in ``training_figures``), drawn in the one style of
``figure_style``. Imported inside IPython, it makes plans and configs that end a cell draw
themselves (``display.register_formatters``)."""
from minishare.analysis.params import albert_tables, count_parameters, format_table, preset_table
from minishare.analysis.display import register_formatters

register_formatters()      # inside IPython: plans and configs that end a cell are drawn (no-op outside)
