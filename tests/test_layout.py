"""The package's layout: one gateway to the C++ core, lazy submodules, no shims of old paths."""
import importlib
import pathlib
import re

import pytest

import ppk

ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "ppk"   # the source tree (the tests may run against an installed copy)
#: Where the related papers' modules lived before ppk.related (never released): no shim keeps them alive.
OLD_PATHS = ("dp", "pk", "sp", "risk", "sensitivity", "risk_figures")


def test_only_the_gateway_imports_the_core():
    importers = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                       if re.search(r"^\s*(from \.+ import _core|from \.+_core import|import ppk\._core)",
                                    p.read_text(), re.M))
    assert importers == ["_kernels.py"]


def test_submodules_load_on_attribute_access():
    assert ppk.related.risk.confidence(eps=1.0, eps0=1.0) == 1.0
    assert ppk.related.dp.rr_gamma(0.0) == 0.0
    assert callable(ppk.baselines.analytic_gaussian_sigma)
    with pytest.raises(AttributeError, match="no_such_module"):
        ppk.no_such_module   # noqa: B018
    with pytest.raises(AttributeError, match="no_such_paper"):
        ppk.related.no_such_paper   # noqa: B018


@pytest.mark.parametrize("old", OLD_PATHS)
def test_old_paths_are_gone(old):
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"ppk.{old}")
    with pytest.raises(AttributeError):
        getattr(ppk, old)
    assert not (pathlib.Path(ppk.__file__).parent / f"{old}.py").exists()


PUBLIC_MODULES = ["ppk", "ppk.baselines", "ppk.samplers", "ppk.pld", "ppk.counting", "ppk.algorithm1", "ppk.noise",
                  "ppk.noise.natural", "ppk.noise.added", "ppk.noise.window", "ppk.noisy_query", "ppk.plotting",
                  "ppk.algorithm2", "ppk.release", "ppk.hypergeom", "ppk.related.dp", "ppk.related.pk",
                  "ppk.related.sp", "ppk.related.risk", "ppk.related.risk.sensitivity", "ppk.shuffle",
                  "ppk.related.shuffle_clones"]


def _public_callables():
    import inspect
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", None) or [a for a in vars(module) if not a.startswith("_")]:
            obj = getattr(module, attr)
            if getattr(obj, "__module__", None) != module.__name__:
                continue    # re-exported: checked where it is defined
            if inspect.isfunction(obj):
                yield f"{name}.{attr}", obj
            elif inspect.isclass(obj):
                for method_name, method in vars(obj).items():
                    method = getattr(method, "__func__", getattr(method, "fget", method))
                    if inspect.isfunction(method) and (not method_name.startswith("_") or method_name == "__init__"):
                        yield f"{name}.{attr}.{method_name}", method


def test_public_functions_are_annotated():
    import inspect
    missing = {}
    callables = list(_public_callables())
    assert len(callables) > 100    # the walk sees the API (a walk that finds nothing would pass vacuously)
    for qualname, fn in callables:
        sig = inspect.signature(fn)
        bad = [p for p, v in sig.parameters.items() if p not in ("self", "cls") and v.annotation is inspect.Parameter.empty]
        if sig.return_annotation is inspect.Signature.empty and fn.__name__ != "__init__":
            bad.append("return")
        if bad:
            missing[qualname] = bad
    assert not missing


def test_no_comment_cites_an_absent_specification():
    # The project's own docs/ (or the papers) explain what the code relies on; "spec E17" or
    # "seed 003" point a reader at documents that are not in the repository.
    pattern = re.compile(r"\bspec\b|\b[EF]\d{1,2}\b|\bseed 00\d|§")
    hits = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
            for p in [*SRC.rglob("*.py"), *(ROOT / "cpp").rglob("*.[ch]pp")] if p.is_file()
            for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits


# --- the house (docs/architecture.md) --------------------------------------------------------------

#: The modules that may call the kernel gateway: the queries (the shuffled randomized response's per-split
#: curve too), the laws, the PLD internals, the Gaussian mechanism's own curve, and the related papers with a
#: kernel of their own (the privacy-at-risk sensitivity, the shuffle clone bound).  Everything else reaches numbers
#: through a query.
KERNEL_CALLERS = {"counting.py", "noisy_query.py", "_family.py", "histogram.py", "_pair_bound.py",
                  "_histogram_noiseless.py", "baselines.py",
                  "hypergeom.py", "noise/natural.py", "noise/added.py", "noise/window.py", "noise/_convolve.py",
                  "pld/_convolution.py", "pld/mechanisms.py", "pld/subsampled.py", "related/risk/sensitivity.py",
                  "_shuffle_split.py", "_shuffle_kary.py", "related/shuffle_clones.py"}
MAX_LINES = 500


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: pathlib.Path) -> set[str]:
    """The ppk modules a module imports when it is loaded (imports inside functions are lazy: not counted)."""
    import ast
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.If):   # `if TYPE_CHECKING:` imports nothing at run time
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                known = (SRC.parent / candidate.replace(".", "/")).with_suffix(".py").exists() or \
                    (SRC.parent / candidate.replace(".", "/") / "__init__.py").exists()
                out.add(candidate if known else target)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("ppk."))
    return {m for m in out if m != name}


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """A circle of the import graph, or None (depth-first search)."""
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state and (found := visit(dep, stack + [dep])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [node])):
            return found
    return None


def test_no_import_circle():
    graph = {_module_name(p): _top_level_imports(p) for p in SRC.rglob("*.py")}
    # a package's __init__ importing its own submodules is how packages work; the circle that matters is
    # between modules: drop the edges from a module to the packages that contain it
    for name, deps in graph.items():
        deps -= {p for p in set(deps) if name.startswith(p + ".")}
    assert sum(map(len, graph.values())) > 100           # the graph was read
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]   # the search finds one
    assert _circle(graph) is None, "import circle: " + " -> ".join(_circle(graph) or [])


def _every_import(path: pathlib.Path) -> set[str]:
    """Every ppk module a module names: at load time, under ``if TYPE_CHECKING:``, inside functions (lazy), and
    by name through ``importlib.import_module("...")`` with a literal name."""
    import ast
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def absolute(level: int, module: str | None) -> str:
        base = package.split(".")[: len(package.split(".")) - level + 1]
        return ".".join(base + ([module] if module else []))

    def module_or_package(candidate: str, target: str) -> str:
        known = (SRC.parent / candidate.replace(".", "/")).with_suffix(".py").exists() or \
            (SRC.parent / candidate.replace(".", "/") / "__init__.py").exists()
        return candidate if known else target

    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            target = absolute(node.level, node.module) if node.level else (node.module or "")
            if target == "ppk" or target.startswith("ppk."):
                out.update(module_or_package(f"{target}.{a.name}", target) for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("ppk."))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            named = node.args[0].value
            level = len(named) - len(named.lstrip("."))
            out.add(absolute(level, named[level:]) if level else named)
    return {m for m in out if m != name and (m == "ppk" or m.startswith("ppk."))}


def test_no_import_circle_even_through_typing_or_lazy_imports():
    # _family imported NoisyQuery for its annotations while noisy_query imports the engine; figures imported
    # _check_rows from evaluation, which loads figures by name: each shared piece now has one home below both
    graph = {_module_name(p): _every_import(p) for p in SRC.rglob("*.py")}
    for name, deps in graph.items():      # (a package's __init__ importing its own submodules, as above)
        deps -= {p for p in set(deps) if name.startswith(p + ".")}
    assert "ppk.figures" in graph["ppk.evaluation"] and "ppk._family" in graph["ppk.noisy_query"]   # seen
    assert _circle(graph) is None, "import circle: " + " -> ".join(_circle(graph) or [])


def test_only_the_queries_laws_and_pld_call_the_kernels():
    callers = {str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
               if re.search(r"^\s*(from \.+ import [^\n]*\b_kernels\b|from \.+_kernels import|import ppk\._kernels)",
                            p.read_text(), re.M)}
    assert callers <= KERNEL_CALLERS, f"modules above the queries call the kernels: {sorted(callers - KERNEL_CALLERS)}"


@pytest.mark.parametrize("tree, patterns", [(SRC, ("*.py",)), (ROOT / "cpp", ("*.hpp", "*.cpp"))])
def test_no_file_over_500_lines(tree, patterns):
    if not tree.exists():
        pytest.skip("the source tree is not beside the tests")
    long = {str(p.relative_to(ROOT)): n for pattern in patterns for p in tree.rglob(pattern)
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"files over {MAX_LINES} lines (split them by concept): {long}"
