#!/usr/bin/env python3
"""Ground truth for ATOM's server parser and env registry at one git ref.

A test harness, never part of the tool (which only reads source): it unpacks
the ref with `git archive` into a temporary folder, imports ATOM from there
with every third-party module (torch, aiter, triton, transformers, fastapi,
...) replaced by permissive stand-ins, runs the server's `main` the way
`python -m atom.entrypoints.openai_server` does (in a clean environment, so
the entry that runs is the default one) until it parses, and dumps the parser
it built and the `environment_variables` registry as JSON.

Usage: atom_dump.py --repo PATH_TO_ATOM_GIT --ref v0.1.5 --out atom-v0.1.5.json

Run it with a throwaway venv's interpreter (`python3 -m venv /tmp/x`), so no
real third-party package can be imported: only the standard library and
ATOM's own code are real. Values that come from a stand-in are marked
`*_from_stub` and are not ground truth.
"""

import argparse
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import types

STUBBED = set()


class _StubMeta(type):
    """Classes that answer every attribute, call, index and operator."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__name__}.{name}")

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __iter__(cls):
        return iter(())

    def __len__(cls):
        return 0

    def __bool__(cls):
        return False

    def __contains__(cls, item):
        return False


class Stub(metaclass=_StubMeta):
    """An instance or subclass of anything third-party."""

    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):
        # Class keywords of third-party bases (`msgspec.Struct, array_like=True`).
        super().__init_subclass__()

    def __call__(self, *args, **kwargs):
        # A decorator returns what it decorates.
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], Stub):
            return args[0]
        return Stub()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub()

    def __getitem__(self, item):
        return Stub()

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __float__(self):
        return 0.0

    def __contains__(self, item):
        return False

    def __mro_entries__(self, bases):
        return (Stub,)

    def __repr__(self):
        return "<stub>"

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def _binop(self, *other):
    return Stub()


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift", "rshift", "matmul"):
    setattr(Stub, f"__{_op}__", _binop)
    setattr(Stub, f"__r{_op}__", _binop)
for _op in ("lt", "le", "gt", "ge"):
    setattr(Stub, f"__{_op}__", lambda self, other: False)
for _op in ("neg", "pos", "invert", "abs"):
    setattr(Stub, f"__{_op}__", _binop)


def _stub_class(name):
    return _StubMeta(name, (Stub,), {"__module__": "stub"})


class StubModule(types.ModuleType):
    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []
        self.__file__ = f"<stub {name}>"
        self.__all__ = []

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Every module outside the standard library and ATOM is a stand-in."""

    def find_spec(self, fullname, path, target=None):
        top = fullname.split(".")[0]
        if top in sys.stdlib_module_names or top == "atom":
            return None
        STUBBED.add(top)
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return StubModule(spec.name)

    def exec_module(self, module):
        pass


def from_stub(value):
    if isinstance(value, Stub) or (isinstance(value, type) and issubclass(value, Stub)):
        return True
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(from_stub(v) for v in value)
    if isinstance(value, dict):
        return any(from_stub(k) or from_stub(v) for k, v in value.items())
    return False


def jsonable(value):
    """The value as JSON, or None and its repr when it has no JSON form."""
    try:
        json.dumps(value)
        return value, None
    except (TypeError, ValueError):
        pass
    if isinstance(value, (tuple, set, frozenset)):
        items = [jsonable(v) for v in (sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value)]
        if all(r is None for _, r in items):
            return [v for v, _ in items], None
    return None, repr(value)


def choice_string(c):
    return c if isinstance(c, str) else repr(c)


def type_name(t):
    if t is None:
        return None
    return getattr(t, "__qualname__", None) or getattr(t, "__name__", None) or repr(t)


class Captured(Exception):
    def __init__(self, parser):
        self.parser = parser


def build_parser(entry_module):
    """Run the entry's `main` until it parses the command line; its parser."""

    def capture(self, *args, **kwargs):
        raise Captured(self)

    argparse.ArgumentParser.parse_args = capture
    argparse.ArgumentParser.parse_known_args = capture
    import importlib

    module = importlib.import_module(entry_module)
    saved = sys.argv
    sys.argv = ["openai_server"]
    try:
        module.main()
    except Captured as c:
        return c.parser, f"{module.main.__module__}.main"
    finally:
        sys.argv = saved
    raise SystemExit(f"{entry_module}.main returned without parsing")


def dump_actions(parser):
    out = []
    for a in parser._actions:
        default, default_repr = jsonable(a.default)
        const, const_repr = jsonable(a.const)
        group = next((g.title for g in parser._action_groups if a in g._group_actions), None)
        out.append(
            {
                "option_strings": list(a.option_strings),
                "dest": a.dest,
                "default": default if default_repr is None else default_repr,
                "default_type": None if default_repr is None else type(a.default).__name__,
                "choices": None if a.choices is None else [choice_string(c) for c in a.choices],
                "type": type_name(a.type),
                "nargs": a.nargs,
                "const": const if const_repr is None else const_repr,
                "action": type(a).__name__,
                "required": a.required,
                "help": a.help,
                "group": group,
                "deprecated": False,
                "choices_from_stub": from_stub(a.choices),
                "default_from_stub": from_stub(a.default),
                "const_from_stub": from_stub(a.const),
                "type_from_stub": from_stub(a.type),
            }
        )
    return out


def dump_env():
    from atom.utils import envs

    registry = envs.environment_variables
    out = []
    for name, getter in registry.items():
        # Every registry variable unset: the defaults of a clean environment.
        for n in registry:
            os.environ.pop(n, None)
        try:
            value = getter()
            default, default_repr = jsonable(value)
            out.append(
                {
                    "name": name,
                    "default": default if default_repr is None else default_repr,
                    "default_type": None if default_repr is None else type(value).__name__,
                    "default_from_stub": from_stub(value),
                }
            )
        except Exception as e:  # the getter fails unset: no default
            out.append({"name": name, "default": None, "error": f"{type(e).__name__}: {e}", "default_from_stub": False})
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, help="ATOM git dir (bare or not)")
    ap.add_argument("--ref", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--entry", default="atom.entrypoints.openai_server")
    args = ap.parse_args()

    commit = subprocess.run(
        ["git", "--git-dir", args.repo, "rev-parse", f"{args.ref}^{{commit}}"], check=True, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="atom-oracle-") as tmp:
        archive = subprocess.run(["git", "--git-dir", args.repo, "archive", "--format=tar", commit, "atom"], check=True, capture_output=True)
        tar_path = os.path.join(tmp, "src.tar")
        with open(tar_path, "wb") as f:
            f.write(archive.stdout)
        with tarfile.open(tar_path) as t:
            t.extractall(tmp, filter="data")
        sys.path.insert(0, tmp)
        sys.meta_path.insert(0, StubFinder())
        # A clean environment: no registry variable set.
        for k in [k for k in os.environ if k.startswith("ATOM_") or k == "USE_ATOMESH_ENTRYPOINTS"]:
            del os.environ[k]
        parser, built_by = build_parser(args.entry)
        result = {
            "version": args.ref,
            "ref": args.ref,
            "commit": commit,
            "python": sys.version.split()[0],
            "parser_class": type(parser).__module__ + "." + type(parser).__qualname__,
            "parser_built_by": built_by,
            "allow_abbrev": parser.allow_abbrev,
            "actions": dump_actions(parser),
            "env_vars": dump_env(),
            "stubbed_top_level_modules": sorted(STUBBED),
        }
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    n = len(result["actions"])
    print(f"{args.ref} ({commit[:9]}): {n} actions, {len(result['env_vars'])} env vars -> {args.out}")


if __name__ == "__main__":
    main()
