"""Report records as the views see them (``storage.report``, ``storage.export``): the run filter
every table takes and the refusal for an unknown metric, factor or run."""

from storage.export import RunFilter
from storage.report import ReportError

__all__ = ["ReportError", "RunFilter"]
