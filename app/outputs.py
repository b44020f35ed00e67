"""Files the commands write (exports, reports, figures): never onto the database or another SQLite
file, nor over an existing file unless forced, and written whole or not at all
(``storage.output_files``); CSV cells through ``formula_safe``, so a spreadsheet runs none of them."""

from storage.output_files import OutputRefused, check_target, formula_safe, replace_atomically

__all__ = ["OutputRefused", "check_target", "formula_safe", "replace_atomically"]
