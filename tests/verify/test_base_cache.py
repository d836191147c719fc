"""Issue 26 item 3: the base-side cache serves only what the same base, tests, arch and
environment compiled, under the user's own key; anything else is a miss."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from flydsl_lint.verify import base_cache, runner
from flydsl_lint.verify.base_cache import CACHEDIR_TAG, BaseCache, CacheFolderError, environment_fingerprint
from flydsl_lint.verify.config import VerifyConfig
from flydsl_lint.verify.compile import CompileFailure, CompileResult, SpecializationKey
from flydsl_lint.verify.isa import KernelIsa, Resources
from flydsl_lint.verify.runner import capture_jobs, deal
from flydsl_lint.verify.toolchain import Linker

TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
TESTS = ["tests/kernels/test_vec_add.py"]
ENVIRONMENT = {"flydsl": {"version": "0.5.0", "location": "/site", "record": "ab"}, "python": "3.11"}


def a_result(tmp_path: Path, arch: str = "gfx942") -> CompileResult:
    result = CompileResult(arch, tmp_path / "evidence", flydsl_versions={"0.5.0"})
    kernel = KernelIsa("vec_add_kernel_0", arch, ["v_add_f32 v0, v1, v2", "s_endpgm"],
                       Resources(vgpr=3, sgpr=8, lds_bytes=0, code_bytes=256), {"valu": 1}, code_object="ff" * 32)
    result.specializations[SpecializationKey(f"{TESTS[0]}::test_vec_add[4096]", kernel.name, 0)] = kernel
    result.failures.append(CompileFailure(f"{TESTS[0]}::test_other", "other_kernel", "ValueError: no"))
    result.outcomes[f"{TESTS[0]}::test_vec_add[4096]"] = ("output-mismatch", "AssertionError")
    result.calling.add(f"{TESTS[0]}::test_vec_add[4096]")
    return result


def open_cache(tmp_path: Path, *, tree: str = TREE, environment: dict = ENVIRONMENT, key_name: str = "key") -> BaseCache:
    return BaseCache(tmp_path / "cache", tree=tree, environment=environment, key_path=tmp_path / key_name)


@pytest.fixture
def stored(tmp_path):
    """A cache holding one result for (TREE, gfx942, TESTS, no probes); the entry's path."""
    cache = open_cache(tmp_path)
    cache.store(cache.key("gfx942", TESTS, []), a_result(tmp_path))
    [entry] = (tmp_path / "cache").glob("*.json")
    return entry


def lookup(tmp_path, arch="gfx942", tests=TESTS, probes=(), **cache_args):
    cache = open_cache(tmp_path, **cache_args)
    return cache.lookup(cache.key(arch, list(tests), list(probes)), tmp_path / "elsewhere")


def test_a_stored_result_comes_back_whole(tmp_path, stored):
    found = lookup(tmp_path)
    original = a_result(tmp_path)
    assert found is not None
    assert found.specializations == original.specializations
    assert found.failures == original.failures
    assert found.outcomes == original.outcomes
    assert found.flydsl_versions == original.flydsl_versions
    assert found.calling == original.calling
    assert found.evidence_dir == tmp_path / "elsewhere"


def cases(named: dict) -> list:
    """The values of ``named``, each with its name as its test id."""
    return [pytest.param(value, id=name) for name, value in named.items()]


KEY_CHANGES = {
    "another arch": {"arch": "gfx950"},
    "another base tree": {"tree": "1" * 40},
    "other tests": {"tests": [*TESTS, "tests/kernels/test_scale.py"]},
    "a probe more": {"probes": ["kernels.elementwise.scale:probe_wide_scale"]},
    "another flydsl release": {"environment": {**ENVIRONMENT, "flydsl": {**ENVIRONMENT["flydsl"], "version": "0.4.2"}}},
    "another flydsl install": {"environment": {**ENVIRONMENT, "flydsl": {**ENVIRONMENT["flydsl"], "record": "cd"}}},
    "another python": {"environment": {**ENVIRONMENT, "python": "3.12"}},
}


@pytest.mark.parametrize("change", cases(KEY_CHANGES))
def test_each_key_part_changed_is_a_miss(tmp_path, stored, change):
    assert lookup(tmp_path) is not None
    assert lookup(tmp_path, **change) is None


def test_an_entry_signed_with_another_key_is_a_miss(tmp_path, stored):
    assert lookup(tmp_path, key_name="another-users-key") is None


def _payload(entry: Path) -> dict:
    return json.loads(entry.read_bytes().partition(b"\n")[2])


def _write(entry: Path, signature: bytes, payload: dict) -> None:
    entry.write_bytes(signature + b"\n" + json.dumps(payload).encode())


def test_a_forged_entry_is_a_miss(tmp_path, stored):
    """A forger edits the result and keeps the old signature, or writes none."""
    signature = stored.read_bytes().partition(b"\n")[0]
    payload = _payload(stored)
    payload["result"]["specializations"][0][3]["instructions"] = ["s_endpgm"]
    _write(stored, signature, payload)
    assert lookup(tmp_path) is None
    _write(stored, b"", payload)
    assert lookup(tmp_path) is None


def test_a_signed_entry_under_another_keys_name_is_a_miss(tmp_path, stored):
    """One of the user's own entries copied to where another key's entry lives: its stored key differs."""
    cache = open_cache(tmp_path)
    other = cache._entry_path(cache.key("gfx950", TESTS, []).as_json(ENVIRONMENT))
    other.write_bytes(stored.read_bytes())
    assert lookup(tmp_path, arch="gfx950") is None


def _resign(entry: Path, tmp_path: Path, payload_bytes: bytes) -> None:
    cache = open_cache(tmp_path)
    entry.write_bytes(base_cache._signature(cache._key, payload_bytes) + b"\n" + payload_bytes)


DAMAGES = {
    "not JSON": lambda payload: b"{",
    "a count as text": lambda payload: json.dumps(_set(payload, ["result", "specializations", 0, 2], "0")).encode(),
    "a resource missing": lambda payload: json.dumps(_drop(payload, ["result", "specializations", 0, 3, "resources"],
                                                           "vgpr")).encode(),
    "a negative count": lambda payload: json.dumps(_set(payload, ["result", "specializations", 0, 3, "histogram",
                                                                  "valu"], -1)).encode(),
    "an extra field": lambda payload: json.dumps({**payload, "extra": 1}).encode(),
    "deep nesting": lambda payload: b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("damage", cases(DAMAGES))
def test_a_malformed_entry_even_if_signed_is_a_miss(tmp_path, stored, damage):
    _resign(stored, tmp_path, damage(_payload(stored)))
    assert lookup(tmp_path) is None


def _at(data, path):
    for step in path:
        data = data[step]
    return data


def _set(payload, path, value):
    _at(payload, path[:-1])[path[-1]] = value
    return payload


def _drop(payload, path, name):
    del _at(payload, path)[name]
    return payload


def test_an_entry_that_is_a_link_is_a_miss(tmp_path, stored):
    target = tmp_path / "target.json"
    target.write_bytes(stored.read_bytes())
    stored.unlink()
    stored.symlink_to(target)
    assert lookup(tmp_path) is None


def test_a_result_whose_process_failed_is_not_stored(tmp_path):
    """A timeout or an early exit may be the machine's load, not the tree's: never cached."""
    cache = open_cache(tmp_path)
    result = a_result(tmp_path)
    result.failures.append(CompileFailure("tests", "", "timed out after 1800s"))
    cache.store(cache.key("gfx942", TESTS, []), result)
    assert not list((tmp_path / "cache").glob("*.json"))


def test_a_folder_that_is_not_ours_is_refused(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me")
    with pytest.raises(CacheFolderError, match="not empty and not a flydsl-lint-verify cache"):
        open_cache(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["precious.txt"]


def test_an_empty_folder_is_claimed_and_tagged(tmp_path):
    (tmp_path / "cache").mkdir()
    open_cache(tmp_path)
    assert (tmp_path / "cache" / "CACHEDIR.TAG").read_text() == CACHEDIR_TAG


LINKER = Linker("ziglang ld.lld", Path("/tmp/toolchain"))


def test_the_fingerprint_follows_the_capture_environment(monkeypatch):
    base = environment_fingerprint(LINKER)
    monkeypatch.setenv("FLYDSL_LINT_VERIFY_CACHE_DIR", "/somewhere")  # ours: does not change what compiles
    assert environment_fingerprint(LINKER) == base
    for name, value in (("FLYDSL_DEBUG_LEVEL", "2"), ("COMPILE_ONLY", "0"), ("ROCM_PATH", "/opt/rocm-7")):
        monkeypatch.setenv(name, value)
        changed = environment_fingerprint(LINKER)
        assert changed != base, name
        monkeypatch.delenv(name)
    assert environment_fingerprint(Linker("ld.lld on PATH (/usr/bin/ld.lld)", Path("/x"))) != base


def test_the_fingerprint_names_the_flydsl_release_python_imports(tmp_path, monkeypatch):
    """Another flydsl distribution first on sys.path (another release installed) changes the key."""
    base = environment_fingerprint(LINKER)
    dist_info = tmp_path / "site" / "flydsl-9.9.0.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: flydsl\nVersion: 9.9.0\n")
    (dist_info / "RECORD").write_text("flydsl/__init__.py,sha256=abc,10\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "site"), *sys.path])
    changed = environment_fingerprint(LINKER)
    assert changed["flydsl"]["version"] == "9.9.0"
    assert changed != base


def test_work_is_dealt_the_same_way_for_both_sides():
    assert deal(["a", "b", "c"], 2) == [["a", "c"], ["b"]]
    assert deal(["a"], 8) == [["a"]]
    assert deal([], 4) == [[]]

    class Plan:
        tests = ["t1.py", "t2.py"]
        probes = ["m:probe"]
        archs = ["gfx942"]

    jobs = capture_jobs(Plan, 2)
    groups = {side: [(j.tests, j.probes) for j in jobs if j.side == side] for side in ("before", "after")}
    assert groups["before"] == groups["after"] == [(("t1.py",), ("m:probe",)), (("t2.py",), ())]


def test_verify_sources_are_part_of_the_fingerprint(monkeypatch):
    base = environment_fingerprint(LINKER)
    monkeypatch.setattr(base_cache, "_verify_sources_digest", lambda: "0" * 40)
    assert environment_fingerprint(LINKER) != base


ISA_FILE = "fake-isa.s"


class PlanOfThree:
    tests = ["tests/kernels/test_a.py", "tests/kernels/test_b.py"]
    probes = ["kernels.a:probe"]
    archs = ["gfx942"]


@pytest.fixture
def captures(monkeypatch, tmp_path):
    """run_capture replaced: each call recorded, each result one kernel whose ISA is its tree's
    ISA_FILE or else the tree's name."""
    calls = []

    def fake_run_capture(tree, *, arch, evidence_dir, tests, probes, **_):
        calls.append((tree.name, tuple(tests), tuple(probes)))
        result = CompileResult(arch, evidence_dir)
        isa = (tree / ISA_FILE).read_text() if (tree / ISA_FILE).exists() else tree.name
        for label in [*tests, *(f"probe:{p}" for p in probes)]:
            result.specializations[SpecializationKey(label, "k_0", 0)] = KernelIsa("k_0", arch, [isa], Resources())
        return result

    monkeypatch.setattr(runner, "run_capture", fake_run_capture)
    for side in ("base", "head"):
        for test in PlanOfThree.tests:
            (tmp_path / side / test).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / side / test).write_text("")
    return calls


def run(tmp_path, trees, cache, jobs=2):
    return runner.run_compile_mode(PlanOfThree, trees, config=VerifyConfig(), linker=LINKER,
                                   evidence_root=tmp_path / "evidence", jobs=jobs, base_cache=cache)


def same_code_on_both_sides(tmp_path):
    """No specialization changes, so none is captured again (see test_nondeterminism)."""
    for side in ("base", "head"):
        (tmp_path / side / ISA_FILE).write_text("s_endpgm")


def test_a_cached_base_is_neither_compiled_nor_checked_out(tmp_path, captures):
    same_code_on_both_sides(tmp_path)
    cache = open_cache(tmp_path)
    trees = {"before": tmp_path / "base", "after": tmp_path / "head"}
    cold = run(tmp_path, trees, cache)
    assert sorted(captures) == [("base", ("tests/kernels/test_a.py",), ("kernels.a:probe",)),
                                ("base", ("tests/kernels/test_b.py",), ()),
                                ("head", ("tests/kernels/test_a.py",), ("kernels.a:probe",)),
                                ("head", ("tests/kernels/test_b.py",), ())]
    captures.clear()
    warm = run(tmp_path, {"after": tmp_path / "head"}, open_cache(tmp_path))  # no base tree: KeyError if asked
    assert sorted(captures) == [("head", ("tests/kernels/test_a.py",), ("kernels.a:probe",)),
                                ("head", ("tests/kernels/test_b.py",), ())]
    assert [c.verdict for c in warm.comparisons] == [c.verdict for c in cold.comparisons] == ["identical"] * 3
    assert warm.notes == ["base side served from the base cache (2 capture group(s), gfx942): not compiled again"]


def test_other_jobs_make_other_groups_and_miss(tmp_path, captures):
    same_code_on_both_sides(tmp_path)
    trees = {"before": tmp_path / "base", "after": tmp_path / "head"}
    run(tmp_path, trees, open_cache(tmp_path), jobs=2)
    captures.clear()
    run(tmp_path, trees, open_cache(tmp_path), jobs=1)
    assert sorted(captures) == [(side, tuple(PlanOfThree.tests), tuple(PlanOfThree.probes)) for side in ("base", "head")]


# The import facts planning reads, cached by the base tree.
FACTS = {"a" * 40: (("import", ("kernels.norm", "torch")), ("from", 1, "common", ("helpers",))),
         "b" * 40: base_cache.Unreadable("does not parse (line 3: invalid syntax)", True)}


def _facts_cache(tmp_path, tree="t" * 40, key_name="key"):
    return base_cache.ImportFactsCache(tmp_path / "cache", tree=tree, key_path=tmp_path / key_name)


def test_import_facts_round_trip_under_the_same_tree(tmp_path):
    _facts_cache(tmp_path).store(FACTS)
    assert _facts_cache(tmp_path).lookup() == FACTS
    assert _facts_cache(tmp_path, tree="u" * 40).lookup() == {}


def test_forged_or_malformed_import_facts_are_a_miss(tmp_path):
    _facts_cache(tmp_path).store(FACTS)
    (entry,) = (tmp_path / "cache").glob("imports-*.json")
    signature, _, payload = entry.read_bytes().partition(b"\n")
    assert _facts_cache(tmp_path, key_name="other-key").lookup() == {}  # signed by another key
    entry.write_bytes(signature + b"\n" + payload.replace(b"torch", b"numpy"))
    assert _facts_cache(tmp_path).lookup() == {}  # the signature no longer matches
    key = (tmp_path / "key").read_bytes()
    for malformed in (b"[1]", b'{"d": [["from", -1, "m", []]]}', b'{"d": [["import"]]}', b'{"d": {"unreadable": 1}}'):
        entry.write_bytes(base_cache._signature(key, malformed) + b"\n" + malformed)
        assert _facts_cache(tmp_path).lookup() == {}, malformed


def test_planning_against_a_cached_base_parses_only_new_sources(tmp_path, monkeypatch):
    from flydsl_lint.verify import imports

    sources = [("kernels/norm.py", b"import torch\n"), ("tests/test_norm.py", b"from kernels import norm\n")]
    first = imports.ImportGraph().add_sources(sources)
    parsed = []
    real_parse = imports.parse_source
    monkeypatch.setattr(imports, "parse_source", lambda data: parsed.append(data) or real_parse(data))
    again = imports.ImportGraph(first.facts_by_digest).add_sources(sources + [("kernels/new.py", b"import os\n")])
    assert parsed == [b"import os\n"]
    assert again.imports["tests/test_norm.py"] == first.imports["tests/test_norm.py"] == {"kernels/norm.py"}
