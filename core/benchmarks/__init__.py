"""The built-in benchmarks, one package each (``core/benchmarks/<name>/``), every one holding its
own formats, methods, prompts, judges, metrics and report sections behind one ``BENCHMARK``
descriptor (:class:`core.benchmark.Benchmark`). They are found like any installed benchmark,
through the ``prefscope.benchmarks`` entry points (:func:`core.benchmark.installed`); nothing here
is imported by the generic code.
"""
