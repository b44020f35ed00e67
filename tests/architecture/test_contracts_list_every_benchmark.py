"""The two import-linter contracts about benchmarks name every built-in benchmark package: a
benchmark added to core.benchmark.BUILTIN but not to the contracts would escape both (storage, app
and tui could import it by name; it could import another benchmark) with every check still green."""

import tomllib

from core.benchmark import BUILTIN, package_of
from tests.conftest import REPO

BENCHMARK_CONTRACTS = (
    "storage, the application layer and the UI ask the benchmark registry, never a benchmark by name",
    "a built-in benchmark never imports another",
)


def test_the_benchmark_contracts_name_every_builtin_package():
    contracts = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    packages = {f"core.benchmarks.{package_of(name)}" for name in BUILTIN}
    for name in BENCHMARK_CONTRACTS:
        (contract,) = [c for c in contracts if c["name"] == name]
        listed = set(contract.get("forbidden_modules") or contract.get("modules"))
        assert listed == packages, f"{name!r}: missing {packages - listed}, extra {listed - packages}"
