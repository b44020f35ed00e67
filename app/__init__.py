"""The application layer: what the TUI and the CLI ask for, one module per use case.

``tui → app → storage → core``. :mod:`app.workbench` is the one composition root: it opens the
database, the recorder (the single writer), the providers and the caches once (:mod:`app.base`), and
is assembled from the use-case services (:mod:`app.data`, :mod:`app.runs`, :mod:`app.analyses`,
:mod:`app.annotation`, :mod:`app.judge_audit`). Batch orchestration is :mod:`app.batch` and
:mod:`app.provider_batch`. The record types and errors the views show or catch are re-exported by
:mod:`app.records`, :mod:`app.labels`, :mod:`app.reports`, :mod:`app.errors` and
:mod:`app.outputs`, so ``tui.cli``, ``tui.screens`` and ``tui.widgets`` never import ``storage``
(import-linter contracts in ``pyproject.toml``).
"""
