"""Parameter sweeps: a TOML spec expanded into tasks, run on a local process pool or Ray, resumable,
every run recorded in the results database. See docs/experiments.md."""

from .backends import (
    BACKENDS,
    LocalBackend,
    RayBackend,
    SerialBackend,
    execute_task,
    import_ray,
    make_backend,
)
from .runner import TaskOutcome, run_sweep, run_tasks
from .spec import SweepSpec, Task, load_spec, spec_from_dict

__all__ = [
    "BACKENDS",
    "LocalBackend",
    "RayBackend",
    "SerialBackend",
    "SweepSpec",
    "Task",
    "TaskOutcome",
    "execute_task",
    "import_ray",
    "load_spec",
    "make_backend",
    "run_sweep",
    "run_tasks",
    "spec_from_dict",
]
