"""Measurements and figures: parameter tables, layer-wise distances, memory and time."""
from minishare.analysis.params import albert_tables, count_parameters, format_table, preset_table
