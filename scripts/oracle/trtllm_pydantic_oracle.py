#!/usr/bin/env python3
"""Ground truth for TensorRT-LLM's LlmArgs YAML keys at one git ref, from pydantic itself.

A test harness, never part of the tool (which only reads source). NVIDIA's API
references cover the top-level `LLM` arguments only; this covers the nested
configs (`kv_cache_config.*`, `moe_config.*`, ...): it unpacks the ref with
`git archive`, loads `tensorrt_llm/llmapi/llm_args.py` (and the package modules
the tool says a nested model lives in) with every other import replaced by a
permissive stand-in, asks pydantic for `TorchLlmArgs.model_fields` and walks the
nested models, then compares that with `engine-audit surface --format json`:
dotted keys both ways, defaults, default factories, closed sets (`Literal`,
enums), aliases, `extra` policies and statuses.

Usage (with a throwaway venv that has pydantic, click, pyyaml and strenum):

    python3 -m venv /tmp/v && /tmp/v/bin/pip install pydantic click pyyaml strenum
    /tmp/v/bin/python scripts/oracle/trtllm_pydantic_oracle.py \
        --repo /work/trtllm-corpus/trtllm.git --ref v1.3.0rc3 --tool target/debug/engine-audit

Values that come from a stand-in (a default computed by a stubbed call) are not
ground truth and are left out of the scores, as are keys below a model the
stand-ins replaced. Exit status 1 when a key or a value disagrees.
"""

import argparse
import enum
import importlib.abc
import importlib.machinery
import importlib.util
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import types
import typing

PACKAGE = "tensorrt_llm"


class _StubMeta(type):
    """Stand-in classes answer every attribute, index and union."""

    def __getattr__(cls, name):
        if name == "__members__":
            # A pybind enum mirrored by an engine enum (`mirror_pybind_enum`).
            return {}
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stub_class(f"{cls.__name__}.{name}")

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return typing.Union[cls, other]

    def __ror__(cls, other):
        return typing.Union[other, cls]

    def __iter__(cls):
        return iter(())

    def __call__(cls, *args, **kwargs):
        # A decorator returns what it decorates.
        if len(args) == 1 and not kwargs and callable(args[0]) and not isinstance(args[0], Stub):
            return args[0]
        return type.__call__(cls)


class Stub(metaclass=_StubMeta):
    """An instance or subclass of anything stubbed."""

    def __init__(self, *args, **kwargs):
        pass

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__()

    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        from pydantic_core import core_schema

        return core_schema.any_schema()

    def __call__(self, *args, **kwargs):
        return Stub()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return Stub()

    def __getitem__(self, item):
        return Stub()

    def __iter__(self):
        return iter(())

    def __bool__(self):
        return False

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __repr__(self):
        return "<stub>"

    def __hash__(self):
        return id(self)

    def __mro_entries__(self, bases):
        return (Stub,)


def _stub_class(name):
    return _StubMeta(name.rsplit(".", 1)[-1], (Stub,), {"__module__": "stub"})


class StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        value = _stub_class(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        module = StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


class EngineFinder(importlib.abc.MetaPathFinder):
    """`tensorrt_llm.*`: the modules in `real` from the unpacked tree, the
    packages above them as empty packages (their `__init__` imports everything),
    the rest stubbed."""

    def __init__(self, root, real):
        self.root = root
        self.real = real

    def find_spec(self, name, path=None, target=None):
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            return None
        rel = name.replace(".", "/")
        if name in self.real:
            return importlib.util.spec_from_file_location(name, f"{self.root}/{rel}.py")
        if any(r.startswith(name + ".") for r in self.real):
            spec = importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)
            return spec
        return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)


class MissingFinder(importlib.abc.MetaPathFinder):
    """Last on the path: any third-party module not installed is stubbed."""

    def find_spec(self, name, path=None, target=None):
        return importlib.machinery.ModuleSpec(name, _StubLoader(), is_package=True)


def unpack(repo, ref, into):
    data = subprocess.run(["git", "-C", repo, "archive", ref], check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")


def tool_keys(tool, repo, ref):
    out = subprocess.run(
        [tool, "surface", "--trtllm", repo, "--at", ref, "--offline", "--format", "json"], check=True, capture_output=True
    ).stdout
    return json.loads(out)


def unwrap(annotation):
    """`Optional[X]`, `Annotated[X, ...]`, `Union[X, None]` as X; other unions as None."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return unwrap(typing.get_args(annotation)[0])
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        return unwrap(rest[0]) if len(rest) == 1 else None
    return annotation


def json_value(v):
    if isinstance(v, Stub) or isinstance(type(v), _StubMeta):
        return ("stub", None)
    if isinstance(v, enum.Enum):
        v = v.value
    try:
        return ("value", json.loads(json.dumps(v)))
    except (TypeError, ValueError):
        return ("stub", None)


def dump(model, prefix, out, seen):
    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    if model in seen:
        return
    seen.add(model)
    extra = model.model_config.get("extra") or "ignore"
    for name, f in model.model_fields.items():
        path = prefix + name
        inner = unwrap(f.annotation)
        choices = None
        if typing.get_origin(inner) is typing.Literal:
            choices = [json_value(a)[1] for a in typing.get_args(inner)]
        elif isinstance(inner, type) and issubclass(inner, enum.Enum) and not isinstance(inner, _StubMeta):
            choices = [json_value(m)[1] for m in inner]
        aliases = set()
        if f.alias and f.alias != name:
            aliases.add(f.alias)
        va = f.validation_alias
        if isinstance(va, str) and va != name:
            aliases.add(va)
        elif va is not None and hasattr(va, "choices"):
            aliases.update(c for c in va.choices if isinstance(c, str) and c != name)
        extra_schema = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
        entry = {
            "path": path,
            "model": model.__name__,
            "extra": extra,
            "required": f.is_required(),
            "factory": f.default_factory is not None,
            "default": None if f.default is PydanticUndefined else json_value(f.default),
            "choices": choices,
            "aliases": sorted(aliases),
            "status": extra_schema.get("status"),
            "stubbed_model": isinstance(inner, _StubMeta),
        }
        out.append(entry)
        if isinstance(inner, type) and issubclass(inner, BaseModel) and not isinstance(inner, _StubMeta):
            dump(inner, path + ".", out, seen)
    seen.discard(model)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--tool", required=True, help="the engine-audit binary")
    ap.add_argument("--root-class", default="TorchLlmArgs")
    args = ap.parse_args()

    surface = tool_keys(args.tool, args.repo, args.ref)
    keys = {k["path"]: k for k in surface["config_keys"]}
    # The modules the tool read a model from are loaded for real.
    real = {f"{PACKAGE}.llmapi.llm_args"}
    for k in surface["config_keys"]:
        path = k["evidence"]["path"]
        if path.startswith(PACKAGE + "/") and path.endswith(".py"):
            real.add(path[: -len(".py")].replace("/", "."))
    with tempfile.TemporaryDirectory() as tmp:
        unpack(args.repo, args.ref, tmp)
        sys.meta_path.insert(0, EngineFinder(f"{tmp}", real))
        sys.meta_path.append(MissingFinder())
        module = importlib.import_module(f"{PACKAGE}.llmapi.llm_args")
        truth = []
        dump(getattr(module, args.root_class), "", truth, set())

    scores = {name: [0, 0] for name in ("keys", "extra", "defaults", "choices", "aliases", "status")}
    wrong, skipped = [], []

    def score(what, ok, text):
        scores[what][1] += 1
        if ok:
            scores[what][0] += 1
        else:
            wrong.append(f"{what}: {text}")

    below_stub = set()
    for t in truth:
        if any(t["path"].startswith(p + ".") for p in below_stub):
            continue
        if t["stubbed_model"]:
            below_stub.add(t["path"])
        ours = keys.get(t["path"])
        score("keys", ours is not None, f"{t['path']} (pydantic has it, the tool does not)")
        if ours is None:
            continue
        score("extra", ours["extra"] == t["extra"], f"{t['path']}: {ours['extra']} vs {t['extra']}")
        ours_default = ours.get("default")
        if t["factory"]:
            score("defaults", ours.get("default_factory") is not None, f"{t['path']}: factory vs {ours_default}")
        elif t["required"]:
            score("defaults", "default" not in ours, f"{t['path']}: required vs {ours_default}")
        elif t["default"][0] == "stub":
            skipped.append(f"{t['path']}: default computed by a stand-in")
        elif isinstance(ours_default, dict) and "dynamic" in ours_default:
            skipped.append(f"{t['path']}: dynamic in the tool ({ours_default['dynamic']}), {t['default'][1]!r} in pydantic")
        else:
            score("defaults", ours_default == t["default"][1], f"{t['path']}: {ours_default!r} vs {t['default'][1]!r}")
        if t["choices"] is not None:
            got = ours.get("choices")
            score("choices", isinstance(got, list) and sorted(map(str, got)) == sorted(map(str, t["choices"])), f"{t['path']}: {got} vs {t['choices']}")
        score("aliases", sorted(ours.get("aliases", [])) == t["aliases"], f"{t['path']}: {ours.get('aliases', [])} vs {t['aliases']}")
        score("status", ours.get("status") == t["status"], f"{t['path']}: {ours.get('status')} vs {t['status']}")
    truth_paths = {t["path"] for t in truth}
    for path in keys:
        if path not in truth_paths:
            score("keys", False, f"{path} (the tool has it, pydantic does not)")

    print(f"== {args.ref}: pydantic {len(truth)} keys, tool {len(keys)} keys; loaded for real: {', '.join(sorted(real))}")
    for name, (hit, total) in scores.items():
        print(f"  {name:<9} {hit}/{total}")
    for s in skipped:
        print(f"  not scored: {s}")
    for w in wrong:
        print(f"  WRONG {w}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
