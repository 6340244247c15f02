"""Analysis results of a database or sweep table: `dvfslab analyze --json` as Python objects."""
from __future__ import annotations

import os
from typing import Any, Dict, Iterator, List, Optional

from . import _dvfslab


class Record:
    """A JSON object of the analysis as read-only attributes (`case.optimum.sm_mhz`);
    nested objects are Records, lists are lists. to_dict() gives the JSON itself."""

    __slots__ = ("_data",)

    def __init__(self, data: Dict[str, Any]):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, key: str) -> Any:
        try:
            return _wrap(self._data[key])
        except KeyError:
            raise AttributeError(f"no field {key!r}; fields: {', '.join(self._data)}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("analysis results are read-only")

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __dir__(self) -> List[str]:
        return list(self._data)

    def to_dict(self) -> Dict[str, Any]:
        return self._data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and other._data == self._data

    def __repr__(self) -> str:
        return f"Record({self._data!r})"


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Record(value)
    if isinstance(value, list):
        return [_wrap(element) for element in value]
    return value


_CASE_COLUMNS = ("source", "gpu", "simulated", "workload", "batch", "mode", "precision", "item_unit")
_ESTIMATES = ("time_per_iteration_s", "throughput_items_per_s", "mean_power_w", "energy_per_iteration_j",
              "energy_per_item_j", "edp_j_s", "ed2p_j_s2")
# The knobs that tell one setting from another (workload_profile: a profile requested alone).
_KNOBS = ("sm_mhz", "mem_mhz", "power_limit_w", "workload_profile")


def _knobs(brief: Optional[Dict[str, Any]]) -> Optional[tuple]:
    return None if brief is None else tuple(brief[k] for k in _KNOBS)


class Results:
    """The analysis of one database or sweep table (docs/analysis.md, "JSON contract").

    objective: the objective's spelling; cases, workloads, summary: lists of
    Records with the keys of the JSON (every case has its per-setting `points`)."""

    def __init__(self, document: Dict[str, Any], path: str):
        self._document = document
        self.path = path

    @property
    def objective(self) -> str:
        return self._document["objective"]

    @property
    def cases(self) -> List[Record]:
        return _wrap(self._document["cases"])

    @property
    def workloads(self) -> List[Record]:
        return _wrap(self._document["workloads"])

    @property
    def summary(self) -> List[Record]:
        return _wrap(self._document["summary"])

    def to_dict(self) -> Dict[str, Any]:
        """What `dvfslab analyze --json --points` prints, as dicts and lists."""
        return self._document

    def rows(self, table: str = "points") -> List[Dict[str, Any]]:
        """Flat rows: "points" (one per setting of every case, with its means,
        `<metric>_ci95`, and whether it is the case's baseline, optimum or on its
        Pareto frontier) or "cases" (one per case: baseline, optimum, changes)."""
        if table == "points":
            return [row for case in self._document["cases"] for row in _point_rows(case)]
        if table == "cases":
            return [_case_row(case) for case in self._document["cases"]]
        raise ValueError(f"table {table!r}: choose 'points' or 'cases'")

    def to_pandas(self, table: str = "points") -> Any:
        """rows(table) as a pandas DataFrame (needs pandas: Debian's python3-pandas)."""
        try:
            import pandas
        except ImportError as missing:
            raise ImportError("Results.to_pandas() needs pandas (Debian: apt-get install python3-pandas)") \
                from missing
        return pandas.DataFrame(self.rows(table))

    def __repr__(self) -> str:
        return f"<dvfslab.Results {self.path!r}: {len(self._document['cases'])} cases, objective {self.objective}>"


def _case_columns(case: Dict[str, Any]) -> Dict[str, Any]:
    return {key: case[key] for key in _CASE_COLUMNS}


def _point_rows(case: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    baseline = _knobs(case["baseline"])
    optimum = _knobs(case["optimum"])
    pareto = {_knobs(brief) for brief in case["pareto"]}
    for point in case["points"]:
        row = _case_columns(case)
        knobs = _knobs(point["setting"])
        row.update(zip(_KNOBS, knobs))
        row["default"] = point["default"]
        row["repetitions"] = point["repetitions"]
        for name in _ESTIMATES:
            row[name] = point[name]["mean"]
            row[name + "_ci95"] = point[name]["ci95"]
        row["sm_mhz_mean"] = point["sm_mhz_mean"]
        row["flags"] = ",".join(point["flags"])
        row["baseline"] = knobs == baseline
        row["optimum"] = knobs == optimum
        row["pareto"] = knobs in pareto
        yield row


def _case_row(case: Dict[str, Any]) -> Dict[str, Any]:
    row = _case_columns(case)
    row["settings"] = case["settings"]
    row["baseline_kind"] = case["baseline_kind"]
    for role in ("baseline", "optimum"):
        brief = case[role] or {}
        for key in (*_KNOBS, "time_per_iteration_s", "mean_power_w", "energy_per_item_j", "throughput_items_per_s"):
            row[f"{role}_{key}"] = brief.get(key)
    for key in ("energy_saving_pct", "time_change_pct", "power_change_pct"):
        row[key] = case[key]
    return row


def results(path: "os.PathLike[str] | str", *, objective: str = "energy") -> Results:
    """Analyses a dvfslab database (or a sweep-table .csv) like `dvfslab analyze --json
    --points --objective OBJECTIVE`. Raises ConfigError for a missing file or a bad
    objective, StoreError for a file that is not a dvfslab database."""
    path_text = os.fspath(path)
    return Results(_dvfslab.analyze(path_text, objective, True), path_text)
