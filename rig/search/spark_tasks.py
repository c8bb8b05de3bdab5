"""Running many simulations as Spark tasks: ship the rig package to the executors, map, collect.

The executors import rig from a zip of this very package added with `addPyFile` (what
`spark-submit --py-files` does), so a local or standalone cluster runs the same code as the
driver. rig's dependencies (pyyaml, orjson, structlog, …) must be installed where executors run.
pyspark is imported only inside functions.
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import rig

if TYPE_CHECKING:
    from pyspark import SparkContext

T = TypeVar("T")
R = TypeVar("R")

_shipped: dict[int, str] = {}


def _zip_rig(folder: Path) -> Path:
    """A zip of the rig package (sources and data files, no caches) under `folder`."""
    package = Path(rig.__file__).parent
    target = folder / "rig-package.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(package.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, Path("rig") / path.relative_to(package))
    return target


def ship_rig(sc: SparkContext) -> None:
    """Make `import rig` on the executors load this package (once per SparkContext)."""
    import tempfile

    key = id(sc)
    if key in _shipped:
        return
    folder = Path(tempfile.mkdtemp(prefix="rig-ship-"))
    _shipped[key] = str(_zip_rig(folder))
    sc.addPyFile(_shipped[key])


def spark_map(function: Callable[[T], R], items: Sequence[T], master: str | None) -> list[R]:
    """`[function(x) for x in items]`, each call a Spark task; results in the order of `items`.

    `function` must be a module-level function of rig (executors import it by name).
    """
    from rig.analysis.spark import get_spark

    # get_spark pins the executors' interpreter (PYSPARK_PYTHON) before it starts Spark.
    sc = get_spark(master).sparkContext
    ship_rig(sc)
    if not items:
        return []
    slices = min(len(items), max(1, sc.defaultParallelism) * 4)
    rdd: Any = sc.parallelize(list(items), slices)
    return list(rdd.map(function).collect())
