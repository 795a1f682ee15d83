"""The hostile-input suite (issue 17): one test per case of tests/python/hostile's catalogs.

The cases do not run in this process: a module fixture hands every selected case id to
hostile.runner, which runs them in batches in two worker subprocesses (a segfault, an abort or a
hang fails its own case and ends nothing else), and each test reports its case's verdict. The
contract a case is judged by is in hostile/core.py's docstring; a failure says what kind of
breach it is (wrong, accepts-bad, rejects-good, untyped, prefix, no-arg, modified, stderr,
crash, hang, ...) and its detail.

Reproduce one case: ``GPULA_TEST_SEED=<seed> pytest tests/python/test_hostile_api.py -k
'<part of the id>'``, or without pytest: ``cd tests/python && python -m hostile.runner --seed
<seed> '<case id>'``.
"""

from __future__ import annotations

import os

import pytest

from hostile import catalog, runner

SEED = int(os.environ.get("GPULA_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
IDS = list(catalog.cases())


def _selected(request: pytest.FixtureRequest) -> list[str]:
    """The case ids of this module's collected tests (all of them, or what -k / ids chose)."""
    ids = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if item.module is request.module and spec is not None and "case_id" in spec.params:
            ids.append(spec.params["case_id"])
    return ids or IDS


@pytest.fixture(scope="module")
def verdicts(request: pytest.FixtureRequest) -> dict[str, dict]:
    return runner.run(_selected(request), SEED)


@pytest.mark.parametrize("case_id", IDS)
def test_hostile(case_id: str, verdicts: dict[str, dict]) -> None:
    r = verdicts.get(case_id)
    assert r is not None, f"{case_id}: no verdict from the workers (GPULA_TEST_SEED={SEED})"
    if r["status"] != "ok":
        pytest.fail(f"{case_id}: {r['kind']}: {r['detail']} (GPULA_TEST_SEED={SEED})",
                    pytrace=False)


# ---------------------------------------------------------------------------------------------
# The suite's own guarantees


def test_catalog_ids_are_stable_and_resolvable() -> None:
    """Every id names its case again (a worker rebuilds cases from ids alone)."""
    for cid, case in catalog.cases().items():
        again = catalog.case(cid)
        assert (again.entry.name, again.kind, again.arg, again.mutation, again.opt) == (
            case.entry.name, case.kind, case.arg, case.mutation, case.opt), cid


def test_catalog_covers_the_public_api() -> None:
    """Every public callable of gl, gl.linalg, gl.sparse, gl.sparse.linalg and gl.distributed (and,
    where torch is installed, of gpula.torch.linalg, .functional and .nn) has at least one entry
    (a new function without hostile cases fails here)."""
    import gpula as gl

    from hostile import coverage

    missing = coverage.uncovered(gl)
    assert not missing, f"public callables without hostile cases: {', '.join(missing)}"


def test_runner_survives_a_crash_and_names_the_case() -> None:
    """A case that kills its worker (SIGSEGV) fails alone; the cases around it still run."""
    ids = ["selftest|ok", "selftest|segfault", "selftest|ok2", "selftest|hang"]
    results = runner.run(ids, SEED)
    assert results["selftest|ok"]["status"] == "ok", results
    assert results["selftest|ok2"]["status"] == "ok", results
    assert results["selftest|segfault"]["kind"] == "crash", results
    assert "SIGSEGV" in results["selftest|segfault"]["detail"], results
    assert results["selftest|hang"]["kind"] == "hang", results
