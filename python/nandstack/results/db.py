"""The results database: every run, its config, metrics and time series, in one DuckDB file.

Schema (version 1; `nandstack results --schema` prints it):

- `runs`: one row per run — `run_id` (12 hex digits), `created_at` (UTC), `config_hash`, `seed`,
  `nandstack_version`, `git_commit`, `source` (api, cli, sweep, reproduce), `experiment`, `sweep`,
  `label`, `tags` (VARCHAR[]), `params` (JSON text: the sweep/experiment parameters of the run),
  `verify`, `config` (JSON text: the engine-normalized effective config), `summary` (JSON text: the
  report without its time series).
- `metrics`: `run_id` plus one DOUBLE column per numeric report value, nested keys joined with `_`
  (`waf`, `iops`, `write_latency_us_p99`, `device_effective_over_provisioning`, ...). Columns are added
  as new metrics appear; a run lacking one has NULL there.
- `timeseries`: `run_id`, `rows`, `data` — the interval time series as a Parquet file in a BLOB (in the
  database rather than beside it, so a run and its series are written in one transaction).
- view `results`: `runs` joined with `metrics` — what `--where` filters and `export` writes.

Each run is written in one transaction with Ctrl-C held back, so an interrupt never leaves half a run.
DuckDB lets one process write at a time: connections are short and retried while another holds the lock;
within a process, connections to one file take turns (a lock per file), so threads recording at once
never meet in a transaction conflict (one that still happens is retried). A damaged file is a
`DatabaseError` that names it and says what to do, never a raw DuckDB exception.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import os
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._core import NandstackError
from .._summary import flatten_metrics
from ._env import default_db_path, defer_sigint, git_commit

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from .._api import Result

__all__ = ["SCHEMA", "DatabaseError", "ResultsDB"]

SCHEMA_VERSION = 1

#: How long a writer keeps one connection for its runs (`ResultsDB.connect`).
HOLD_SECONDS = 5.0
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,
    created_at TIMESTAMP NOT NULL,
    config_hash VARCHAR NOT NULL,
    seed UBIGINT NOT NULL,
    nandstack_version VARCHAR NOT NULL,
    git_commit VARCHAR,
    source VARCHAR NOT NULL,
    experiment VARCHAR,
    sweep VARCHAR,
    label VARCHAR,
    tags VARCHAR[] NOT NULL,
    params VARCHAR NOT NULL,
    verify BOOLEAN NOT NULL,
    config VARCHAR NOT NULL,
    summary VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS metrics (run_id VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS timeseries (run_id VARCHAR NOT NULL, rows INTEGER NOT NULL, data BLOB);
CREATE OR REPLACE VIEW results AS
    SELECT r.* EXCLUDE (config, summary), m.* EXCLUDE (run_id), r.config, r.summary
    FROM runs r LEFT JOIN metrics m USING (run_id);
"""

#: Columns `list` shows by default (those present), after the identity columns.
DEFAULT_METRICS = (
    "waf",
    "iops",
    "write_latency_us_p99",
    "read_latency_us_p99",
    "sim_seconds",
    "wall_seconds",
)
ID_COLUMNS = ("run_id", "created_at", "source", "experiment", "sweep", "label", "tags", "seed", "config_hash")


class DatabaseError(NandstackError):
    """The results database cannot be opened, or a query on it failed."""


#: How often a run's transaction is tried when DuckDB reports a conflict.
RECORD_ATTEMPTS = 5
_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _file_lock(path: Path) -> threading.RLock:
    """The in-process lock of one database file (connections to it take turns)."""
    key = os.path.abspath(path)
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.RLock())


def _damaged(path: Path, e: BaseException) -> DatabaseError:
    """The error for a database file DuckDB cannot read: what it said, and what to do."""
    return DatabaseError(
        f"results database {path} cannot be read ({type(e).__name__}: {str(e).splitlines()[0][:300]}); "
        f"if it is damaged, move it aside (mv {path} {path}.damaged) and a new one is started, or give "
        "another file with --db or NANDSTACK_DB"
    )


class ResultsDB:
    """The results database at `path` (default: `$NANDSTACK_DB`, else the user data directory).

    >>> db = ResultsDB()
    >>> db.runs(where="waf > 3", experiment="gc-policies-vs-op")   # a polars DataFrame
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, lock_timeout: float = 60.0) -> None:
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.lock_timeout = lock_timeout
        # `writer` blocks open on this object (its lock is taken once, by the outermost).
        self._writers = 0
        self._writers_guard = threading.Lock()
        # Inside a writer block: the connection kept between runs (`connect`).
        self._held: duckdb.DuckDBPyConnection | None = None

    def __repr__(self) -> str:
        return f"ResultsDB({str(self.path)!r})"

    # --- connection ---------------------------------------------------------------------------------
    @contextlib.contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short-lived connection (schema created on first use), retried while another process
        holds DuckDB's write lock, for at most `lock_timeout` seconds.

        Inside a `writer` block the connection is kept for the next use, until a timer closes it
        `HOLD_SECONDS` after it was opened: opening and closing a DuckDB file costs tens of milliseconds
        (the close checkpoints the log), so a sweep recording a run every fraction of a second would
        spend more on connections than on its runs. Another process that reads the file meanwhile waits
        at most that long (it retries on DuckDB's lock). Every run is still its own transaction."""
        import duckdb

        with _file_lock(self.path):
            con = self._held
            if con is None:
                con = self._open()
            keep = False
            try:
                if con is not self._held:
                    _ensure_schema(con, self.path)
                yield con
                with self._writers_guard:
                    writing = self._writers > 0
                if writing and con is not self._held:
                    self._held = con
                    timer = threading.Timer(HOLD_SECONDS, self._release, args=(con,))
                    timer.daemon = True
                    timer.start()
                keep = writing
            except (duckdb.IOException, duckdb.SerializationException, duckdb.InternalException) as e:
                raise _damaged(self.path, e) from None
            except duckdb.Error as e:
                if isinstance(e, duckdb.TransactionException):
                    raise
                raise DatabaseError(f"results database {self.path}: {e}") from None
            finally:
                if not keep:
                    if con is self._held:
                        self._held = None
                    con.close()

    def _release(self, which: duckdb.DuckDBPyConnection | None = None) -> None:
        """Close the connection kept by `connect`: any (the outermost writer block ends), or only
        `which` (its hold is up; a later one stays)."""
        with _file_lock(self.path):
            con = self._held
            if con is None or (which is not None and con is not which):
                return
            self._held = None
            con.close()

    def _open(self) -> duckdb.DuckDBPyConnection:
        import duckdb

        # Only a regular file (or a path not there yet) can be a database: a device, FIFO or folder at
        # `--db` is refused by name (never "move it aside": /dev/null is nobody's database).
        if os.path.lexists(self.path) and not self.path.is_file():
            kind = "a folder" if self.path.is_dir() else "not a regular file (a device, FIFO or socket)"
            raise DatabaseError(
                f"results database {self.path} is {kind}; give --db (or NANDSTACK_DB) a file path"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DatabaseError(f"cannot create the folder of results database {self.path}: {e}") from None
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.02
        while True:
            try:
                return duckdb.connect(str(self.path))
            except duckdb.IOException as e:
                if "lock" not in str(e).lower():
                    raise _damaged(self.path, e) from None
                if time.monotonic() > deadline:
                    raise DatabaseError(f"cannot open results database {self.path}: {e}") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            except duckdb.Error as e:
                raise _damaged(self.path, e) from None

    @contextlib.contextmanager
    def writer(self, what: str) -> Iterator[None]:
        """Hold this database's writer lock while `what` (a sweep or a reproduction) records its runs:
        a second such process on the same file is refused by name (`DatabaseError`) instead of
        interleaving its writes with the first's. The lock is an advisory `flock` on the file
        `<db>.writer` beside the database (kept; it holds the current writer's pid and command), released
        when the block ends or the process dies. Blocks nested on this same object (`reproduce --all`
        holds it for the suite while each experiment's runs, in turn or at once from several threads, open
        their own) share the outer one's lock; another `ResultsDB` of the file is another writer."""
        with self._writers_guard:
            nested = self._writers > 0
            if nested:
                self._writers += 1
        if nested:
            try:
                yield
            finally:
                with self._writers_guard:
                    self._writers -= 1
            return
        with self._writer_lock(what):
            yield

    @contextlib.contextmanager
    def _writer_lock(self, what: str) -> Iterator[None]:
        """The advisory `flock` of `writer`, held for the block (counted as this object's first writer)."""
        import fcntl

        lock_path = self.path.with_name(self.path.name + ".writer")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise DatabaseError(
                f"cannot create the writer lock {lock_path} of results database {self.path}: {e}"
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 300, 0).decode("utf-8", "replace").strip() or "another process"
                raise DatabaseError(
                    f"results database {self.path} is being written by another nandstack process ({holder}); "
                    "wait for it to finish, or give this run another --db (or --no-record)"
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}: {what}".encode(), 0)
            with self._writers_guard:
                self._writers += 1
            try:
                yield
            finally:
                with self._writers_guard:
                    self._writers -= 1
                self._release()
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    # --- writing ------------------------------------------------------------------------------------
    def record(
        self,
        result: Result,
        *,
        source: str = "api",
        experiment: str | None = None,
        sweep: str | None = None,
        label: str | None = None,
        tags: Iterable[str] = (),
        params: Mapping[str, Any] | None = None,
        verify: bool = False,
    ) -> str:
        """Store one run in a single transaction; sets and returns `result.run_id`."""
        from .._config_obj import canonical_json, config_hash
        from .._core import __version__

        summary = {k: v for k, v in result.summary.items() if k != "timeseries"}
        config = summary.get("config") or result.config
        row = {
            "run_id": uuid.uuid4().hex[:12],
            "created_at": _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None),
            "config_hash": config_hash(config),
            "seed": int(summary.get("seed", config.get("seed", 0))),
            "nandstack_version": str(summary.get("nandstack_version", __version__)),
            "git_commit": git_commit(),
            "source": source,
            "experiment": experiment,
            "sweep": sweep,
            "label": label,
            "tags": sorted({tags} if isinstance(tags, str) else {str(t) for t in tags}),
            "params": canonical_json(dict(params or {})),
            "verify": bool(verify),
            "config": canonical_json(config),
            "summary": json.dumps(summary),
        }
        metrics = flatten_metrics(summary)
        series = result.timeseries
        parquet = _to_parquet(series) if series.height else None
        self._write(row, metrics, series.height, parquet)
        result.run_id = row["run_id"]
        return row["run_id"]

    def _write(
        self, row: dict[str, Any], metrics: Mapping[str, float], height: int, parquet: bytes | None
    ) -> None:
        """One run's transaction, tried again (with a growing pause) when DuckDB reports a conflict."""
        import duckdb

        for attempt in range(RECORD_ATTEMPTS):
            try:
                self._write_once(row, metrics, height, parquet)
                return
            except duckdb.TransactionException as e:
                if attempt + 1 == RECORD_ATTEMPTS:
                    raise DatabaseError(
                        f"results database {self.path}: run not recorded after {RECORD_ATTEMPTS} "
                        f"conflicting attempts: {e}"
                    ) from None
                time.sleep(0.05 * 2**attempt)

    def _write_once(
        self, row: dict[str, Any], metrics: Mapping[str, float], height: int, parquet: bytes | None
    ) -> None:
        with self.connect() as con, defer_sigint():
            con.execute("BEGIN TRANSACTION")
            try:
                _add_metric_columns(con, metrics)
                con.execute(
                    f"INSERT INTO runs ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    list(row.values()),
                )
                cols = ["run_id", *(_quote(m) for m in metrics)]
                con.execute(
                    f"INSERT INTO metrics ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [row["run_id"], *metrics.values()],
                )
                if parquet is not None:
                    con.execute("INSERT INTO timeseries VALUES (?, ?, ?)", [row["run_id"], height, parquet])
                con.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(Exception):
                    con.execute("ROLLBACK")
                raise

    # --- reading ------------------------------------------------------------------------------------
    def sql(self, query: str, parameters: Sequence[Any] = ()) -> pl.DataFrame:
        """Any SQL query on the database (tables `runs`, `metrics`, `timeseries`, view `results`)."""
        with self.connect() as con:
            return _frame(con, query, parameters)

    def runs(
        self,
        where: str | None = None,
        *,
        experiment: str | None = None,
        sweep: str | None = None,
        tag: str | None = None,
        label: str | None = None,
        columns: Sequence[str] | None = None,
        limit: int | None = None,
        exclude: Sequence[str] = ("config", "summary"),
    ) -> pl.DataFrame:
        """Runs (newest first) as a DataFrame of identity columns and metrics. `where` is a SQL
        expression over the `results` view (`"waf > 3 AND seed = 1"`); `columns` picks the columns
        (default: every column but those in `exclude`, the bulky `config` and `summary` JSON)."""
        clauses, args = [], []
        for column, value in (("experiment", experiment), ("sweep", sweep), ("label", label)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        if tag is not None:
            clauses.append("list_contains(tags, ?)")
            args.append(tag)
        if where:
            clauses.append(f"({where})")
        if columns:
            select = ", ".join(_quote(c) for c in columns)
        else:
            select = f"* EXCLUDE ({', '.join(_quote(c) for c in exclude)})" if exclude else "*"
        query = f"SELECT {select} FROM results"
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        query += " ORDER BY created_at DESC, run_id"
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        return self.sql(query, args)

    def table(self, metrics: Sequence[str] = ("waf",), **filters: Any) -> pl.DataFrame:
        """The analysis table of a sweep or experiment: one row per run with its parameters as columns
        (the sweep's dotted keys, `workload`, `seed`) followed by `metrics`. `filters` as for `runs`.

        >>> db.table(["waf", "iops"], sweep="op-vs-policy").group_by("device.ftl.gc.victim.policy").mean()
        """
        import polars as pl

        frame = self.runs(columns=["run_id", "params", *metrics], **filters).reverse()  # oldest first
        params = [json.loads(p) for p in frame["params"].to_list()]
        keys = list(dict.fromkeys(k for p in params for k in p))
        columns: dict[str, Any] = {"run_id": frame["run_id"]}
        for key in keys:
            values = [p.get(key) for p in params]
            plain = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in values]
            columns[key] = pl.Series(key, plain, strict=False)
        for metric in metrics:
            columns[metric] = frame[metric]
        return pl.DataFrame(columns)

    def count(self) -> int:
        with self.connect() as con:
            row = con.execute("SELECT count(*) FROM runs").fetchone()
        return int(row[0]) if row else 0

    def metric_names(self) -> list[str]:
        """The metric columns, in the order they were first seen."""
        with self.connect() as con:
            return [c for c in _columns(con, "metrics") if c != "run_id"]

    def resolve(self, run_id: str) -> str:
        """The full run id for a unique prefix of one."""
        with self.connect() as con:
            rows = con.execute(
                "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id LIMIT 2", [run_id]
            ).fetchall()
        if not rows:
            raise DatabaseError(f"no run with id `{run_id}` in {self.path}")
        if len(rows) > 1:
            raise DatabaseError(f"run id prefix `{run_id}` is ambiguous: give more digits")
        return str(rows[0][0])

    def result(self, run_id: str) -> Result:
        """A stored run as a `Result` (summary, config, time series)."""
        from .._api import Result
        from .._summary import timeseries_frame

        run_id = self.resolve(run_id)
        with self.connect() as con:
            config, summary = con.execute(
                "SELECT config, summary FROM runs WHERE run_id = ?", [run_id]
            ).fetchone() or ("{}", "{}")
        result = Result(json.loads(summary), json.loads(config), run_id=run_id)
        series = self.timeseries(run_id)
        result._timeseries = series if series.height else timeseries_frame(None)
        return result

    def timeseries(self, run_id: str) -> pl.DataFrame:
        """The time series of a run (an empty DataFrame if it had none)."""

        run_id = self.resolve(run_id)
        with self.connect() as con:
            row = con.execute("SELECT data FROM timeseries WHERE run_id = ?", [run_id]).fetchone()
        return _from_parquet(row[0] if row else None)

    def compare(self, run_ids: Sequence[str], metrics: Sequence[str] | None = None) -> pl.DataFrame:
        """Metrics side by side: one row per metric, one column per run (headed by its id), plus the
        config keys that differ between the runs (as `config.<dotted key>` rows)."""
        import polars as pl

        from .._term import flatten

        ids = list(dict.fromkeys(self.resolve(r) for r in run_ids))  # each run once
        if not ids:
            return pl.DataFrame()
        placeholders = ", ".join("?" * len(ids))
        with self.connect() as con:
            frame = _frame(con, f"SELECT * FROM results WHERE run_id IN ({placeholders})", ids)
        by_id = {row["run_id"]: row for row in frame.iter_rows(named=True)}
        rows = [by_id[i] for i in ids]
        configs = [flatten(json.loads(r["config"])) for r in rows]
        names = (
            list(metrics)
            if metrics
            else [m for m in self.metric_names() if any(r.get(m) is not None for r in rows)]
        )
        table: dict[str, list[Any]] = {"metric": []}
        for run_id in ids:
            table[run_id] = []
        keys = sorted({k for c in configs for k in c})
        for key in keys:
            values = [c.get(key) for c in configs]
            if any(v != values[0] for v in values):
                table["metric"].append(f"config.{key}")
                for run_id, value in zip(ids, values):
                    table[run_id].append(None if value is None else str(value))
        for name in names:
            if name not in frame.columns:
                raise DatabaseError(f"no metric `{name}` (see `nandstack results --metrics`)")
            table["metric"].append(name)
            for run_id, row in zip(ids, rows):
                value = row[name]
                table[run_id].append(None if value is None else _short(value))
        return pl.DataFrame(table, schema={c: pl.String for c in table})

    def finished(self, config_hashes: Iterable[str], version: str | None = None) -> set[str]:
        """Which of `config_hashes` already have a recorded run (made by nandstack `version`, if given)."""
        wanted = list(dict.fromkeys(config_hashes))
        if not wanted:
            return set()
        query = "SELECT DISTINCT config_hash FROM runs WHERE list_contains(?, config_hash)"
        args: list[Any] = [wanted]
        if version is not None:
            query += " AND nandstack_version = ?"
            args.append(version)
        with self.connect() as con:
            return {str(r[0]) for r in con.execute(query, args).fetchall()}

    def latest(self, config_hashes: Iterable[str], version: str | None = None) -> dict[str, Result]:
        """The newest recorded run of each of `config_hashes` (made by nandstack `version`, if given),
        as `Result`s keyed by config hash (time series loaded lazily from the database)."""
        from .._api import Result

        wanted = list(dict.fromkeys(config_hashes))
        if not wanted:
            return {}
        query = (
            "SELECT r.config_hash, r.run_id, r.config, r.summary, t.data FROM runs r "
            "LEFT JOIN timeseries t USING (run_id) WHERE list_contains(?, r.config_hash)"
            + (" AND r.nandstack_version = ?" if version is not None else "")
            + " QUALIFY row_number() OVER "
            "(PARTITION BY r.config_hash ORDER BY r.created_at DESC, r.run_id) = 1"
        )
        args: list[Any] = [wanted] + ([version] if version is not None else [])
        with self.connect() as con:
            rows = con.execute(query, args).fetchall()
        out = {}
        for digest, run_id, config, summary, data in rows:
            result = Result(json.loads(summary), json.loads(config), run_id=run_id)
            result._timeseries = _from_parquet(data)
            out[str(digest)] = result
        return out

    def export(self, path: str | os.PathLike[str], frame: pl.DataFrame | None = None, **filters: Any) -> int:
        """Write runs (`frame`, or `runs(**filters)` with the config JSON) to `path`: Parquet for
        `.parquet`, else CSV (list columns joined with `;`). Returns the number of rows written."""
        import polars as pl

        data = frame if frame is not None else self.runs(exclude=("summary",), **filters)
        target = Path(path)
        if target.suffix.lower() not in (".parquet", ".pq"):
            lists = [c for c, t in data.schema.items() if isinstance(t, pl.List)]
            joined = [pl.col(c).cast(pl.List(pl.String)).list.join(";") for c in lists]
            data = data.with_columns(joined)
        _write_atomically(target, data)
        return data.height


# --- helpers ------------------------------------------------------------------------------------------
def _write_atomically(target: Path, data: pl.DataFrame) -> None:
    """Write `data` (Parquet for `.parquet`/`.pq`, else CSV) to a temporary file beside `target`, then
    rename it into place: a full or read-only filesystem leaves no partial file, and the error names
    `target` (`DatabaseError`). Only a regular file (or nothing) is replaced: a device node, folder or
    other special file at `target` is refused; a symlink's target file is replaced, the link kept."""
    import polars as pl

    target = target.resolve() if target.is_symlink() else target  # a link's file is replaced, not the link
    if target.exists() and not target.is_file():
        raise DatabaseError(f"cannot write {target}: it is not a regular file (export writes only files)")
    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.suffix.lower() in (".parquet", ".pq"):
            data.write_parquet(tmp)
        else:
            data.write_csv(tmp)
        os.replace(tmp, target)
    except (OSError, pl.exceptions.PolarsError) as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise DatabaseError(f"cannot write {target}: {e}; nothing was written there") from None


def _ensure_schema(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    import duckdb

    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except duckdb.CatalogException:
        row = None
    if row:
        if not str(row[0]).isdigit():
            raise DatabaseError(
                f"results database {path}: schema version `{row[0]}` is no number (not a nandstack database)"
            )
        if int(row[0]) > SCHEMA_VERSION:
            raise DatabaseError(
                f"results database {path}: schema v{row[0]} is newer than this nandstack (v{SCHEMA_VERSION})"
            )
        return
    con.execute("BEGIN TRANSACTION")
    con.execute(SCHEMA)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
    con.execute("COMMIT")


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    cursor = con.execute(f"SELECT * FROM {_quote(table)} LIMIT 0")
    return [str(d[0]) for d in cursor.description or []]


def _add_metric_columns(con: duckdb.DuckDBPyConnection, metrics: Mapping[str, float]) -> None:
    existing = set(_columns(con, "metrics"))
    for name in metrics:
        if name not in existing:
            con.execute(f"ALTER TABLE metrics ADD COLUMN {_quote(name)} DOUBLE")


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _frame(con: duckdb.DuckDBPyConnection, query: str, parameters: Sequence[Any] = ()) -> pl.DataFrame:
    import duckdb
    import polars as pl

    try:
        cursor = con.execute(query, list(parameters))
        rows = cursor.fetchall()
    except duckdb.Error as e:
        raise DatabaseError(f"query failed: {e}") from None
    names = [d[0] for d in cursor.description or []]
    return pl.DataFrame([list(r) for r in rows], schema=names, orient="row", infer_schema_length=None)


def _to_parquet(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def _from_parquet(data: bytes | None) -> pl.DataFrame:
    import polars as pl

    return pl.read_parquet(io.BytesIO(data)) if data is not None else pl.DataFrame()


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)
