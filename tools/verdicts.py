#!/usr/bin/env python3
"""Check that a claims verdict is not one draw: run only the runs that decide the verdicts of `diss` or
`znswap` (issue #35) at a seed shift, and print the claims table (the verdict is judged on the paper
platform, so today's numbers and the ablations are left out here; `nandstack reproduce NAME --seed N`
runs everything).

    python tools/verdicts.py diss --seed 1 [-j 2] [--json OUT]
    python tools/verdicts.py znswap --seed 1

The runs: DISS — the paper platform, four schemes on the four scenarios (16 runs); ZNSwap — every run the
claims read on the paper platform (29 runs). Each run's seed is shifted as
`reproduce --seed` shifts it (`experiments.base.shift_seeds`). Not recorded in the results database.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def diss_runs() -> tuple[list, object]:
    from nandstack.experiments import _diss_claims, diss

    tasks = [t for t in diss.tasks(False) if t.params.get("platform") == _diss_claims.PAPER]

    def entries(tasks, results):
        rows = [{**t.params, **diss.run_metrics(r.summary)} for t, r in zip(tasks, results) if r is not None]
        return diss._claims_of({}, rows, diss.SCENARIOS[0])[0]

    return tasks, entries


def znswap_runs() -> tuple[list, object]:
    from nandstack.experiments import _znswap_claims as claims
    from nandstack.experiments import _znswap_platform as platform
    from nandstack.experiments import znswap

    # A paper-platform run whose config equals today's is the same run (the full report reads today's).
    paper = claims._claim_runs(False, ("paper", platform.PAPER_KEYS))

    def entries(tasks, results):
        return claims.claim_entries(tasks, results, znswap._figures, False)[0]

    return paper, entries


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment", choices=("diss", "znswap"))
    parser.add_argument("--seed", type=int, default=0, help="seed shift (as reproduce --seed)")
    parser.add_argument("-j", "--workers", type=int, default=2)
    parser.add_argument("--json", type=Path, help="write the claim entries and run costs here")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keep only the runs whose parameter KEY is VALUE (e.g. scenario=video: a cheaper partial check)",
    )
    args = parser.parse_args()
    if args.seed < 0:
        parser.error("--seed takes a whole number >= 0")

    from nandstack.experiments._claims import claims_markdown
    from nandstack.experiments.base import shift_seeds
    from nandstack.sweep import LocalBackend, run_tasks

    tasks, entries = diss_runs() if args.experiment == "diss" else znswap_runs()
    for only in args.only:
        key, _, value = only.partition("=")
        tasks = [t for t in tasks if str(t.params.get(key)) == value]
    if not tasks:
        parser.error("no run left after --only")
    tasks = [shift_seeds(t, args.seed) for t in tasks]
    start = time.monotonic()
    outcome = run_tasks(tasks, backend=LocalBackend(args.workers), record=False, resume=False)
    for i, message in sorted(outcome.errors.items()):
        print(f"failed: {tasks[i].label}: {message}", file=sys.stderr)
    found = entries(tasks, outcome.results)
    only = f", only {', '.join(args.only)}" if args.only else ""
    print(f"{args.experiment} --seed {args.seed}: the paper platform's verdicts ({len(tasks)} runs{only})")
    print(claims_markdown(found))
    print(outcome.summary_line(), file=sys.stderr)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "experiment": args.experiment,
                    "seed_shift": args.seed,
                    "only": args.only,
                    "runs": len(tasks),
                    "wall_seconds": round(time.monotonic() - start, 1),
                    "wall_cpu_seconds": round(outcome.total_cpu_seconds, 1),
                    "claims": found,
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if outcome.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
