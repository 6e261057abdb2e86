#!/usr/bin/env bash
# python_package.sh: the Python binding as a package.
#   1. The committed bindings/python/remem/_ops.py is what
#      bindings/python/tools/gen_ops.py writes from this build's
#      operation table (so a new or changed operation without a regenerated
#      module fails here).
#   2. `pip install ./bindings/python` in a fresh virtual environment, then
#      the operation methods have named parameters, type hints and
#      docstrings; `from remem import *` does not shadow open(); every
#      REMEM_E* status has its own exception class under RememError.
# Without python3-venv, or when pip cannot build the package, part 2 is a
# SKIP.
set -u
. "$(dirname "$0")/../support/e2e.sh"
e2e_init python_package
root=${REMEM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${REMEM_BUILD:-$root/build}
lib=$build/libremem.so
# A sanitizer build of the library needs its runtime loaded first into the
# uninstrumented python3 (as python_binding.sh does).
runtime=$(ldd "$lib" 2>/dev/null | awk '/lib(asan|ubsan)\.so/ {print $3}' | tr '\n' ' ')
if [ -n "${runtime// }" ]; then
    export LD_PRELOAD="$runtime" ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
fi
[ -f "$lib" ] || { echo "no $lib (make builds it)"; exit 1; }

python3 "$root/bindings/python/tools/gen_ops.py" "$lib" - > "$tmp/ops.py" || fail "gen_ops.py failed"
if ! cmp -s "$tmp/ops.py" "$root/bindings/python/remem/_ops.py"; then
    diff -u "$root/bindings/python/remem/_ops.py" "$tmp/ops.py" | head -n 20
    fail "bindings/python/remem/_ops.py is stale: run make"
fi

# A fresh virtual environment and pip's own way (build isolation: pip
# fetches setuptools from the package index). Where no index is reachable,
# a fresh environment of Debian's python3 that sees its setuptools and
# wheel (python3-setuptools, python3-wheel) builds it without isolation.
cp -r "$root/bindings/python" "$tmp/src"   # pip's build leaves files beside the source
py=
if python3 -m venv "$tmp/venv" > "$tmp/venv.log" 2>&1 &&
   PIP_RETRIES=0 PIP_TIMEOUT=5 "$tmp/venv/bin/python" -m pip install -q "$tmp/src" > "$tmp/pip.log" 2>&1; then
    py=$tmp/venv/bin/python
elif [ -x /usr/bin/python3 ] && /usr/bin/python3 -m venv --system-site-packages "$tmp/venv2" >> "$tmp/venv.log" 2>&1 &&
     "$tmp/venv2/bin/python" -m pip install -q --no-build-isolation "$tmp/src" >> "$tmp/pip.log" 2>&1; then
    py=$tmp/venv2/bin/python
    echo "(no package index here: built with Debian's setuptools and wheel, without isolation)"
else
    sed 's/^/    /' "$tmp/venv.log" "$tmp/pip.log" | tail -n 5
    echo "SKIP: python_package: no venv could build the package here (python3-venv, python3-setuptools, python3-wheel: scripts/deps.sh test)"
    [ $fails -eq 0 ] && exit 0 || exit 1
fi
cd "$tmp"   # away from the source tree: the installed package is imported
REMEM_LIB=$lib "$py" - "$tmp/x.db" <<'PY' || fail "the installed package"
import inspect, sys, remem
assert "site-packages" in remem.__file__, remem.__file__
db = remem.open(sys.argv[1], embedder="hash")
sig = inspect.signature(db.decision_add)
print("decision_add" + str(sig))
names = list(sig.parameters)
assert names[:2] == ["ns", "title"] and "reward" in names, names
assert all(p.kind is p.KEYWORD_ONLY for p in sig.parameters.values()), sig
assert sig.parameters["reward"].annotation in (float, "float"), sig.parameters["reward"]
assert db.decision_add.__doc__ and "decision" in db.decision_add.__doc__.lower()
assert "decision_add" in dir(db)
import keyword
for op in remem.operations():
    py = op["name"].replace(".", "_")
    m = getattr(db, py + "_" if keyword.iskeyword(py) else py, None)
    assert m is not None and m.__doc__, op["name"]
# the generated method is a call of the operation
r = db.decision_add(ns="p", title="Friday", action="rest", domain="health", reward=0.5)
assert db.memory_get(ns="p", id=r["id"])["memory"]["kind"] == "decision", r
# a refusal is the status's own exception
try:
    db.memory_get(ns="p", id="nope")
    raise SystemExit("memory_get of a missing id did not raise")
except remem.NotFoundError as e:
    assert e.name == "REMEM_ENOTFOUND", e.name
try:
    db.decision_add(ns="p", title="x", action="y", domain="z", reward="high")
    raise SystemExit("a string reward was accepted")
except remem.InvalidArgumentError as e:
    assert "reward" in str(e), e
# every status has its own class, all under RememError
codes = [c for c in range(-1, -40, -1) if remem._str(remem._status_name(c)) not in (None, "REMEM_UNKNOWN")]
classes = {c: type(remem._error(c, "x")) for c in codes}
assert all(issubclass(k, remem.RememError) and k is not remem.RememError for k in classes.values()), classes
assert len(set(classes.values())) == len(codes), classes
# no builtin shadowed by a star import
assert "open" not in remem.__all__ and "connect" in remem.__all__
ns = {}
exec("from remem import *", ns)
assert "open" not in ns and ns["connect"] is remem.connect
db.close()
print("ok - installed package: named parameters, docstrings, exceptions per status")
PY
# The acceptance line as the issue writes it.
REMEM_LIB=$lib "$py" -c "import remem, inspect; print(inspect.signature(remem.open('x.db').decision_add))" \
    > "$tmp/sig" 2>&1 || fail "the acceptance line failed: $(cat "$tmp/sig")"
grep -q '^(\*, ns: str, title: str' "$tmp/sig" || fail "no named parameters: $(cat "$tmp/sig")"
[ $fails -eq 0 ] && echo "ok - pip install ./bindings/python: $(cat "$tmp/sig")" || exit 1
