"""Mutation testing of the gate's modules with cosmic-ray (not part of ./test).

    .venv/bin/pip install -e '.[mutation]'
    .venv/bin/python tests/mutation/mutate.py [NAME ...] [--report]

Each module in MODULES is mutated in turn, smallest first, against its own fast selection of
tests. cosmic-ray rewrites the module's file in place for each mutant, so this runs in a
detached git worktree of HEAD under .cache/mutation/tree-NAME (your checkout is never touched),
with PYTHONPATH pointing there so the `uji` processes the tests start run the mutant too.
Everything runs under `nice -n 19`, one mutant at a time. Sessions are kept in
.cache/mutation/NAME.sqlite: a second run resumes what is pending; `--report` only prints.

Mutants are cosmic-ray's core operators less the ones that only restate another here:
`==` turned into `is` or `is not` (strings and small ints are interned, so no test can tell),
`==` into an ordering (`<`, `>`…; the NotEq mutant already says whether the comparison is
tested), and binary operators other than `+` into `-` and back (see EXCLUDED). A module entry may name functions: only mutants inside them are run.
"""

from __future__ import annotations

import argparse
import ast
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[2]
CACHE = HERE / ".cache" / "mutation"
# One process (addopts would start xdist workers), stopping at the first failure.
PYTEST = f"{sys.executable} -m pytest -q -x -p no:cacheprovider -o addopts="  # this venv's

# name: (module, tests, functions to mutate or None for all). Smallest first.
MODULES: dict[str, tuple[str, str, tuple[str, ...] | None]] = {
    "verdict": (
        "src/uji/tools/verdict.py",
        "tests/test_policy.py tests/test_gate_layers.py::test_a_deny_tells_the_model_which_default_made_it",
        None,
    ),
    "gate": (
        "src/uji/tools/gate.py",
        "tests/test_policy.py tests/test_remembered.py tests/test_gate_decide.py tests/test_gate_layers.py",
        None,
    ),
    "decision": ("src/uji/tools/decision.py", "tests/test_gate_decide.py tests/test_gate_layers.py", None),
    "paths": (
        "src/uji/tools/path_forms.py",
        "tests/test_gate_paths.py tests/test_gate_layers.py::test_an_ask_rule_asks_through_symlink_and_dotdot_spellings",
        None,
    ),
    "compaction": ("src/uji/agent/compaction.py", "tests/test_compaction.py", None),
    "secrets": (
        "src/uji/tools/secrets.py",
        "tests/test_secrets.py -k 'split or nested_secrets'",
        ("__init__", "__bool__", "__call__", "stream", "feed", "flush", "_replace", "_partial", "_safe_cut"),
    ),
    "remembered": ("src/uji/tools/remembered.py", "tests/test_remembered.py", None),
    "policy": (
        "src/uji/tools/policy.py",
        "tests/test_policy.py",
        ("rule_kind", "compile_matcher", "_strictest", "match", "fallback", "decide", "decide_command"),
    ),
    "confine": ("src/uji/tools/confine.py", "tests/test_confine.py", None),
    "checkpoints": (
        "src/uji/store/checkpoints.py",
        "tests/test_rewind.py -k 'executable or restores or outside'",
        ("restore", "capture", "_safe"),
    ),
}

EXCLUDED = [
    r"core/ReplaceComparisonOperator_.*_(Is|IsNot)$",
    r"core/ReplaceComparisonOperator_(Eq|NotEq)_(Lt|LtE|Gt|GtE)$",
    # One mutant per arithmetic operator (+ into -, - into +), none for `|`: the others
    # of `+` (*, /, **, <<, &…) fail the same way, and `|` is in annotations (never run
    # under `from __future__ import annotations`) or set unions.
    r"core/ReplaceBinaryOperator_(?!Add_Sub$|Sub_Add$)",
]


def config(name: str) -> Path:
    module, tests, _ = MODULES[name]
    path = CACHE / f"{name}.toml"
    excluded = ", ".join(f"'{x}'" for x in EXCLUDED)
    path.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{module}"\n'
        "timeout = 300.0\n"
        "excluded-modules = []\n"
        f'test-command = "{PYTEST} {tests.replace(chr(34), chr(39))}"\n'
        "[cosmic-ray.distributor]\n"
        'name = "local"\n'
        "[cosmic-ray.filters.operators-filter]\n"
        f"exclude-operators = [{excluded}]\n"
    )
    return path


def tree(name: str, fresh: bool) -> Path:
    """The module's own detached worktree of HEAD to mutate (one per module, so runs of two
    modules at once never test against each other's mutants). `fresh`: made anew, to hold
    what is committed now."""
    path = CACHE / f"tree-{name}"
    if path.exists() and not fresh:
        return path
    if path.exists():
        subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=HERE, check=False)
    subprocess.run(["git", "worktree", "add", "--detach", "-q", str(path), "HEAD"], cwd=HERE, check=True)
    return path


def outside(db: Path, source: str, functions: tuple[str, ...]) -> None:
    """Mark the mutants outside `functions` skipped (cosmic-ray has no such filter)."""
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in functions
    ]
    con = sqlite3.connect(db)
    with con:
        rows = con.execute("SELECT job_id, start_pos_row FROM mutation_specs").fetchall()
        done = {r[0] for r in con.execute("SELECT job_id FROM work_results")}
        for job, row in rows:
            if job not in done and not any(a <= row <= b for a, b in spans):
                con.execute(
                    "INSERT INTO work_results (job_id, worker_outcome, output, test_outcome, diff)"
                    " VALUES (?, 'SKIPPED', 'outside the functions mutated', NULL, '')",
                    (job,),
                )
    con.close()


def counts(db: Path) -> dict[str, int]:
    con = sqlite3.connect(db)
    total = con.execute("SELECT COUNT(*) FROM mutation_specs").fetchone()[0]
    found: dict[str, int] = {"mutants": total}
    for outcome, test, n in con.execute(
        "SELECT worker_outcome, test_outcome, COUNT(*) FROM work_results GROUP BY worker_outcome, test_outcome"
    ):
        key = "skipped" if outcome == "SKIPPED" else (test or outcome).lower()
        found[key] = found.get(key, 0) + n
    con.close()
    found["pending"] = total - sum(v for k, v in found.items() if k != "mutants")
    return found


def survivors(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT s.operator_name, s.start_pos_row, r.diff FROM work_results r JOIN mutation_specs s USING (job_id)"
        " WHERE r.test_outcome = 'SURVIVED' ORDER BY s.start_pos_row"
    ).fetchall()
    con.close()
    return [f"line {row}: {op}\n{diff}" for op, row, diff in rows]


def run(name: str, fresh: bool) -> None:
    module, _, functions = MODULES[name]
    db = CACHE / f"{name}.sqlite"
    cfg = config(name)
    where = tree(name, fresh)
    env = dict(os.environ, PYTHONPATH=str(where / "src"), PYTHONDONTWRITEBYTECODE="1")
    bin_dir = Path(sys.executable).parent
    if not db.exists():
        # The selection must pass on the unmutated code, or every mutant would count as killed.
        _, tests, _ = MODULES[name]
        baseline = subprocess.run(f"{PYTEST} {tests}", shell=True, cwd=where, env=env, check=False)
        if baseline.returncode != 0:
            raise SystemExit(f"{name}: the tests fail without a mutant ({PYTEST} {tests}); nothing run")
        subprocess.run([bin_dir / "cosmic-ray", "init", cfg, db], cwd=where, env=env, check=True)
        subprocess.run([bin_dir / "cr-filter-operators", db, cfg], cwd=where, env=env, check=True)
        if functions:
            outside(db, (where / module).read_text(), functions)
    subprocess.run(
        ["nice", "-n", "19", bin_dir / "cosmic-ray", "exec", cfg, db], cwd=where, env=env, check=True
    )


def retest(name: str) -> None:
    """The mutants that survived NAME's run, run again against HEAD's tests (the module
    itself unchanged, so the mutants are the same): NAME-after.sqlite, in a fresh tree."""
    import shutil

    before, after = CACHE / f"{name}.sqlite", CACHE / f"{name}-after.sqlite"
    shutil.copy(before, after)
    con = sqlite3.connect(after)
    with con:
        con.execute("DELETE FROM work_results WHERE test_outcome = 'SURVIVED'")
        survived = {
            r[0]
            for r in sqlite3.connect(before).execute(
                "SELECT job_id FROM work_results WHERE test_outcome = 'SURVIVED'"
            )
        }
        for (job,) in con.execute("SELECT job_id FROM mutation_specs").fetchall():
            done = con.execute("SELECT 1 FROM work_results WHERE job_id = ?", (job,)).fetchone()
            if not done and job not in survived:  # never run before: left out here too
                con.execute(
                    "INSERT INTO work_results (job_id, worker_outcome, output, test_outcome, diff)"
                    " VALUES (?, 'SKIPPED', 'not run in the first pass', NULL, '')",
                    (job,),
                )
    con.close()
    where = tree(f"{name}-after", True)
    env = dict(os.environ, PYTHONPATH=str(where / "src"), PYTHONDONTWRITEBYTECODE="1")
    cosmic = Path(sys.executable).parent / "cosmic-ray"
    subprocess.run(["nice", "-n", "19", cosmic, "exec", config(name), after], cwd=where, env=env, check=True)


# The whole of the gate's tests, for `--recheck`: a mutant the module's fast selection let
# live is run once more against these before it is called a survivor.
WIDE = (  # in-process unit tests first: with -x in one process, most mutants die in seconds
    "tests/test_verdict.py tests/test_gate_pieces.py tests/test_compaction_pieces.py tests/test_policy.py tests/test_policy_layers.py"
    " tests/test_remembered.py tests/test_remembered_file.py tests/test_secrets.py tests/test_shell_parse.py tests/test_confine.py"
    " tests/test_gate_decide.py tests/test_gate_layers.py tests/test_gate_paths.py tests/test_gate_commands.py"
    " tests/test_gate_expansions.py tests/test_gate_hooks.py tests/test_gate_write_flags.py"
    " tests/test_gate_redirects.py tests/test_compaction.py tests/test_checkpoint_capture.py tests/test_rewind.py tests/test_sandbox.py"
)
RENAMED = {"src/uji/tools/paths.py": "src/uji/tools/path_forms.py"}


def recheck(name: str) -> None:
    """NAME's survivors applied to HEAD as text patches (the module may have moved since its
    run) and run against WIDE (or $RECHECK_TESTS) in one process, stopping at the first failure. Results go to
    NAME-recheck.json: killed (by which test), survived, or stale (the patch no longer applies)."""
    import json

    db = CACHE / f"{name}.sqlite"
    rows = (
        sqlite3.connect(db)
        .execute(
            "SELECT s.job_id, s.operator_name, s.start_pos_row, r.diff FROM work_results r"
            " JOIN mutation_specs s USING (job_id) WHERE r.test_outcome = 'SURVIVED' ORDER BY s.start_pos_row"
        )
        .fetchall()
    )
    out_file = CACHE / f"{name}-recheck.json"
    results: dict[str, dict[str, object]] = json.loads(out_file.read_text()) if out_file.exists() else {}
    where = tree(f"{name}-recheck", not results)
    # An interrupted run's mutant goes. cosmic-ray's exception mutants name an exception it
    # defines while it runs; here every process the tests start (PYTHONPATH=src) defines
    # it through sitecustomize.
    subprocess.run(["git", "checkout", "-q", "--", "src"], cwd=where, check=True)
    (where / "src" / "sitecustomize.py").write_text(
        "import builtins\n\n\nclass CosmicRayTestingException(Exception):\n    pass\n\n\n"
        "builtins.CosmicRayTestingException = CosmicRayTestingException\n"
    )
    env = dict(os.environ, PYTHONPATH=str(where / "src"), PYTHONDONTWRITEBYTECODE="1")
    for job, op, row, diff in rows:
        if job in results and results[job]["outcome"] != "stale":
            continue
        for old, new in RENAMED.items():
            diff = diff.replace(old, new)
        if (
            "+if not TYPE_CHECKING:" in diff or "+    if not TYPE_CHECKING:" in diff
        ):  # the imports for the types, run: nothing changes
            results[job] = {"op": op, "line": row, "outcome": "equivalent", "diff": diff}
            out_file.write_text(json.dumps(results, indent=1))
            continue
        applied = subprocess.run(
            ["patch", "-p1", "-F3", "--no-backup-if-mismatch"],
            input=diff,
            text=True,
            cwd=where,
            capture_output=True,
        )
        if applied.returncode != 0:
            results[job] = {"op": op, "line": row, "outcome": "stale", "diff": diff}
        else:
            ran = subprocess.run(
                [*PYTEST.split(), "--timeout", "120", *os.environ.get("RECHECK_TESTS", WIDE).split()],
                cwd=where,
                env=env,
                capture_output=True,
                text=True,
            )
            failed = [ln.split(" ")[1] for ln in ran.stdout.splitlines() if ln.startswith("FAILED ")]
            results[job] = {
                "op": op,
                "line": row,
                "diff": diff,
                "outcome": "survived" if ran.returncode == 0 else "killed",
                "by": failed[:1],
            }
            subprocess.run(["git", "checkout", "-q", "--", "src"], cwd=where, check=True)
        out_file.write_text(json.dumps(results, indent=1))
        print(name, row, op, results[job]["outcome"], results[job].get("by", ""), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help=f"modules to mutate (default: all): {', '.join(MODULES)}")
    ap.add_argument("--report", action="store_true", help="print the counts and survivors only")
    ap.add_argument("--fresh", action="store_true", help="make the worktree anew from HEAD first")
    ap.add_argument("--retest", action="store_true", help="run the survivors again against HEAD's tests")
    ap.add_argument("--recheck", action="store_true", help="the survivors as patches on HEAD, against WIDE")
    opts = ap.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    names = opts.names or list(MODULES)
    if opts.recheck:
        for name in names:
            recheck(name)
        return
    if opts.retest:
        for name in names:
            retest(name)
    elif not opts.report:
        for name in names:
            run(name, opts.fresh)
    for name in [n for m in names for n in (m, f"{m}-after")]:
        db = CACHE / f"{name}.sqlite"
        if db.exists():
            print(name, counts(db))
            for s in survivors(db):
                print("  survived", s.replace("\n", "\n    "))


if __name__ == "__main__":
    main()
