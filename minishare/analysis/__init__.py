"""Measurements and figures: parameter tables, layer-wise distances, memory and time. Each
measurement's figure is a module beside it (``params`` and ``params_figures``, ``layerwise`` and
``layerwise_figure``, ...; training curves in ``training_figures``), drawn in the one style of
``figure_style``."""
from minishare.analysis.params import albert_tables, count_parameters, format_table, preset_table
