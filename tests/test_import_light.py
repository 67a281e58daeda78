"""``import ppk`` stays light: scipy, matplotlib and mpmath load only when a function needs them, and
``ppk --version`` answers before numpy loads (docs/architecture.md).  Each check runs in a fresh
interpreter: this one has long since loaded everything."""
import ast
import pathlib
import shutil
import subprocess
import sys

import pytest

import ppk

HEAVY = ("scipy", "matplotlib", "mpmath")


def _loaded(code: str) -> list[str]:
    """The top-level packages among HEAVY + numpy that a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nimport sys\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & {{*{HEAVY!r}, 'numpy'}}))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return ast.literal_eval(out.strip().splitlines()[-1])


def test_import_ppk_loads_nothing_heavy():
    assert _loaded("import ppk") == []


def test_every_export_loads_without_scipy_matplotlib_or_mpmath():
    # what ``import ppk`` loaded eagerly before the exports became lazy: numpy and the C++ core, no more
    loaded = _loaded("import ppk\nfor name in ppk.__all__: getattr(ppk, name)")
    assert loaded == ["numpy"]


def test_the_command_line_module_loads_nothing_heavy():
    assert _loaded("import ppk.cli") == []


def test_exports_resolve_to_their_definitions():
    # the lazy table names where each export lives; ppk.release is the function even once the
    # submodule of the same name has loaded (the import system binds submodules on the package)
    import ppk.release as release_module   # noqa: F401  (the submodule loads; the name stays the function)
    for name in ppk.__all__:
        assert getattr(ppk, name) is not None
    assert callable(ppk.release) and ppk.release.__module__ == "ppk.release"
    assert ppk.Release.__module__ == "ppk.release"
    assert ppk.noise.__name__ == "ppk.noise"
    with pytest.raises(AttributeError):
        ppk.no_such_name   # noqa: B018


def test_the_type_checkers_view_matches_the_lazy_table():
    # src/ppk/__init__.py lists each export twice: under TYPE_CHECKING (for mypy and IDEs) and in _EXPORTS
    # (at run time); an export added to one and not the other would be invisible to one of them
    tree = ast.parse(pathlib.Path(ppk.__file__).read_text())
    block = next(node for node in tree.body
                 if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING")
    typed = {(alias.name, (node.module or "").lstrip(".")) for node in block.body if isinstance(node, ast.ImportFrom)
             and node.module for alias in node.names}
    assert typed == {(name, module) for name, module in ppk._EXPORTS.items()}


@pytest.mark.parametrize("command", [[sys.executable, "-m", "ppk", "--version"],
                                     [sys.executable, "-m", "ppk.cli", "--version"]])
def test_version_is_printed(command):
    out = subprocess.run(command, capture_output=True, text=True, check=True)
    assert out.stdout == f"ppk {ppk.__version__}\n" and out.stderr == ""


def test_console_entry_prints_the_version():
    exe = shutil.which("ppk", path=str(pathlib.Path(sys.executable).parent))
    if exe is None:
        pytest.skip("no ppk console script next to this interpreter")
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=True)
    assert out.stdout == f"ppk {ppk.__version__}\n"


def test_version_loads_nothing_heavy():
    code = ("import sys\nfrom ppk.cli import main\nsys.argv = ['ppk', '--version']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")
    assert _loaded(code) == []


def test_version_in_process_exits_as_argparse_does(capsys):
    from ppk.cli import main
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out == f"ppk {ppk.__version__}\n"
    with pytest.raises(SystemExit) as stop:   # an abbreviation takes argparse's way: the same answer
        main(["--vers"])
    assert stop.value.code == 0 and capsys.readouterr().out == f"ppk {ppk.__version__}\n"
