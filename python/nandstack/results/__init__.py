"""The results database (DuckDB): see `ResultsDB` and docs/python.md."""

from ._env import DB_ENV, default_db_path, git_commit
from .db import SCHEMA, DatabaseError, ResultsDB

__all__ = ["DB_ENV", "SCHEMA", "DatabaseError", "ResultsDB", "default_db_path", "git_commit"]
