use serde_json::json;

use super::*;
use crate::source::MemTree;

fn fold(files: &[(&str, &str)], module: &str, name: &str) -> Known<PyValue> {
    let tree = MemTree::from_files("t", files.iter().copied());
    let pkg = Package::new(&tree, "p/e");
    let ev = ConstEval::new(&pkg);
    match ev.global(module, name) {
        Ok(v) => v.to_json().map(Known::Value).unwrap_or_else(|| Known::dynamic(v.repr())),
        Err(text) => Known::dynamic(text),
    }
}

fn value(j: serde_json::Value) -> Known<PyValue> {
    Known::Value(j)
}

#[test]
fn literals_and_arithmetic() {
    let src = "A = [1, -2, 0x10, 1_000]\nB = ('x',) + ('y',)\nC = 2 ** 10 * 3\nD = 'a' 'b'\nE = None or 'fallback'\nF = {'k': 1}['k']\n";
    let files = [("p/e/__init__.py", ""), ("p/e/m.py", src)];
    assert_eq!(fold(&files, "e.m", "A"), value(json!([1, -2, 16, 1000])));
    assert_eq!(fold(&files, "e.m", "B"), value(json!(["x", "y"])));
    assert_eq!(fold(&files, "e.m", "C"), value(json!(3072)));
    assert_eq!(fold(&files, "e.m", "D"), value(json!("ab")));
    assert_eq!(fold(&files, "e.m", "E"), value(json!("fallback")));
    assert_eq!(fold(&files, "e.m", "F"), value(json!(1)));
}

#[test]
fn module_level_mutations_apply_in_order() {
    let src = "L = ['a']\nL.append('b')\nL += ['c']\nadd_l = L.extend\nadd_l(('d',))\nS = {'x'}\nS.add('y')\nS.update(['x'])\n";
    let files = [("p/e/__init__.py", ""), ("p/e/m.py", src)];
    assert_eq!(fold(&files, "e.m", "L"), value(json!(["a", "b", "c", "d"])));
    assert_eq!(fold(&files, "e.m", "S"), value(json!(["x", "y"])));
}

#[test]
fn conditional_changes_make_a_value_unknown() {
    let src = "import os, sys\nL = ['a']\nif sys.platform == 'linux':\n    L.append('b')\ntry:\n    from missing import T\nexcept ImportError:\n    T = None\nM = ['m']\ndef later():\n    M.append('never at import')\nE = ['a']\nif os.environ.get('X'):\n    E.append('b')\n";
    let files = [("p/e/__init__.py", ""), ("p/e/m.py", src)];
    assert_eq!(fold(&files, "e.m", "L"), Known::dynamic("L"));
    assert_eq!(fold(&files, "e.m", "E"), value(json!(["a"])), "an env var unset: the block does not run");
    assert_eq!(fold(&files, "e.m", "T"), Known::dynamic("T"));
    assert_eq!(fold(&files, "e.m", "M"), value(json!(["m"])), "function bodies do not run at import");
}

#[test]
fn imports_classes_enums_and_dict_keys() {
    let files = [
        ("p/e/__init__.py", ""),
        ("p/e/sub/__init__.py", "from .names import NAMES as EXPORTED\n"),
        ("p/e/sub/names.py", "NAMES = ['n1', 'n2']\n"),
        (
            "p/e/kinds.py",
            "import enum\nclass Kind(enum.Enum):\n    RED = 'r'\n    BLUE = 'b'\nclass Holder:\n    TABLE = {'t1': object, 't2': object}\n    BOTH = (TABLE,)\n",
        ),
        (
            "p/e/m.py",
            "from e.sub import EXPORTED\nfrom . import kinds\nfrom .kinds import Kind, Holder\nA = EXPORTED + ['n3']\nB = [k.name.lower() for k in Kind]\nC = [k.value for k in kinds.Kind if k.value != 'r']\nD = list(Holder.TABLE.keys())\nE = sorted(Holder.TABLE)\nF = Kind.BLUE.value\nG = {**{'a': 1}, 'b': 2}\nH = [x for x in range(3)]\n",
        ),
    ];
    assert_eq!(fold(&files, "e.m", "A"), value(json!(["n1", "n2", "n3"])));
    assert_eq!(fold(&files, "e.m", "B"), value(json!(["red", "blue"])));
    // Comparisons of literals fold (`k.value != 'r'` on each member).
    assert_eq!(fold(&files, "e.m", "C"), value(json!(["b"])));
    assert_eq!(fold(&files, "e.m", "D"), value(json!(["t1", "t2"])));
    assert_eq!(fold(&files, "e.m", "E"), value(json!(["t1", "t2"])));
    assert_eq!(fold(&files, "e.m", "F"), value(json!("b")));
    assert_eq!(fold(&files, "e.m", "G"), value(json!({"a": 1, "b": 2})));
    assert!(fold(&files, "e.m", "H").is_dynamic(), "range() is not folded");
}

#[test]
fn cycles_terminate_as_unknown() {
    let files = [
        ("p/e/__init__.py", ""),
        ("p/e/a.py", "from e.b import Y\nX = Y + [1]\nSELF = SELF\n"),
        ("p/e/b.py", "from e.a import X\nY = X + [2]\n"),
    ];
    assert!(fold(&files, "e.a", "X").is_dynamic());
    assert!(fold(&files, "e.a", "SELF").is_dynamic());
    assert!(fold(&files, "e.b", "Y").is_dynamic());
}

#[test]
fn engine_functions_fold_their_static_path() {
    let names = "NAMES = ['deepseek-r1', 'qwen3']\n";
    let m = r#"
import sys
import msgspec


def _choices():
    module = sys.modules.get("e.heavy")
    if module is not None:
        return list(module.Parser.Map)
    from e.names import NAMES

    return list(NAMES)


def _declared_default(name: str):
    """A field default."""
    return next(
        field.default
        for field in msgspec.structs.fields(Args)
        if field.name == name
    )


class Args:
    port: int = 30000
    mode: str = msgspec.field(default="fast")


Args = msgspec.defstruct("Args", [(n, a) for n, a in Args.__annotations__.items()])

CHOICES = ["auto"] + _choices()
PORT = _declared_default("port")
MODE = _declared_default("mode")
UNKNOWN = _declared_default("nope")
NAMES_OF = [f.name for f in msgspec.structs.fields(Args)]
IN = ["x" for n in ["a", "c"] if n in ["a", "b"]]
NOT_IN = ["x" for n in ["a", "c"] if n not in ["a", "b"]]
"#;
    let files = [("p/e/__init__.py", ""), ("p/e/names.py", names), ("p/e/m.py", m)];
    assert_eq!(fold(&files, "e.m", "CHOICES"), value(json!(["auto", "deepseek-r1", "qwen3"])));
    assert_eq!(fold(&files, "e.m", "PORT"), value(json!(30000)));
    assert_eq!(fold(&files, "e.m", "MODE"), value(json!("fast")));
    assert_eq!(fold(&files, "e.m", "NAMES_OF"), value(json!(["port", "mode"])), "the struct rebuilt from the class");
    assert!(fold(&files, "e.m", "UNKNOWN").is_dynamic(), "no such field: next() of nothing");
    assert_eq!(fold(&files, "e.m", "IN"), value(json!(["x"])));
    assert_eq!(fold(&files, "e.m", "NOT_IN"), value(json!(["x"])));
}

/// Choices vLLM computes at import time from a `Literal` alias of another
/// module: `get_args(Alias)` in declaration order, and `permutations` of it.
#[test]
fn get_args_of_literal_aliases_and_their_permutations() {
    let files = [
        ("p/e/__init__.py", ""),
        (
            "p/e/levels.py",
            "from typing import Literal\nBase = Literal['low', 'mid']\nLevel = Literal[Base, 'high']\nPair = Literal[('x', 'y')]\n",
        ),
        (
            "p/e/m.py",
            "from itertools import permutations\nfrom typing import get_args\nimport typing\nfrom e.levels import Level, Pair\n\
             LEVELS = get_args(Level)\nASIS = list(typing.get_args(Pair))\n\
             JOINED = [','.join(p) for p in permutations(get_args(Pair), r=2)]\nALL = list(permutations(get_args(Pair)))\n\
             BAD = list(permutations(get_args(Pair), k=2))\nNOT_LITERAL = get_args(list[int])\n",
        ),
    ];
    assert_eq!(fold(&files, "e.m", "LEVELS"), value(json!(["low", "mid", "high"])), "nested Literals flatten, in order");
    assert_eq!(fold(&files, "e.m", "ASIS"), value(json!(["x", "y"])));
    assert_eq!(fold(&files, "e.m", "JOINED"), value(json!(["x,y", "y,x"])));
    assert_eq!(fold(&files, "e.m", "ALL"), value(json!([["x", "y"], ["y", "x"]])));
    assert!(fold(&files, "e.m", "BAD").is_dynamic(), "an unknown keyword is not guessed");
    assert!(fold(&files, "e.m", "NOT_LITERAL").is_dynamic());
}

/// `current_platform.X` is known when the CUDA and ROCm platform classes the
/// platforms package's plugins name agree on X; a machine-dependent value
/// (or a plugin table of another shape) stays dynamic.
#[test]
fn current_platform_attributes_known_where_the_gpu_platforms_agree() {
    let platforms = "def cuda_platform_plugin():\n    ok = probe()\n    return 'e.platforms.cuda.CudaPlatform' if ok else None\n\
                     def rocm_platform_plugin():\n    return 'e.platforms.rocm.RocmPlatform' if probe() else None\n\
                     def cpu_platform_plugin():\n    return 'e.platforms.cpu.CpuPlatform'\n\
                     builtin_platform_plugins = {'cuda': cuda_platform_plugin, 'rocm': rocm_platform_plugin, 'cpu': cpu_platform_plugin}\n\
                     def __getattr__(name):\n    if name == 'current_platform':\n        return make()\n";
    let files = [
        ("p/e/__init__.py", ""),
        ("p/e/platforms/__init__.py", platforms),
        ("p/e/platforms/interface.py", "class Platform:\n    device_type: str\n    dist_backend: str = ''\n"),
        (
            "p/e/platforms/cuda.py",
            "from e.platforms.interface import Platform\nclass CudaBase(Platform):\n    device_type: str = 'cuda'\n    dist_backend = 'nccl'\n\
             class WithNvml(CudaBase):\n    pass\nclass WithoutNvml(CudaBase):\n    pass\nCudaPlatform = WithNvml if have_nvml() else WithoutNvml\n",
        ),
        ("p/e/platforms/rocm.py", "from e.platforms.interface import Platform\nclass RocmPlatform(Platform):\n    device_type: str = 'cuda'\n    dist_backend = 'rccl'\n"),
        ("p/e/platforms/cpu.py", "from e.platforms.interface import Platform\nclass CpuPlatform(Platform):\n    device_type = 'cpu'\n"),
        (
            "p/e/args.py",
            "from e.platforms import current_platform\nimport e.platforms as p\n\
             CHOICES = ['auto', 'cpu'] + ([current_platform.device_type] if current_platform.device_type not in ('', 'cpu') else [])\n\
             BACKEND = p.current_platform.dist_backend\nCALLED = current_platform.is_cuda()\n",
        ),
    ];
    assert_eq!(fold(&files, "e.args", "CHOICES"), value(json!(["auto", "cpu", "cuda"])));
    assert!(fold(&files, "e.args", "BACKEND").is_dynamic(), "nccl on one GPU platform, rccl on the other");
    assert!(fold(&files, "e.args", "CALLED").is_dynamic());
    // Without the plugin table the platform is not known at all.
    let mut bare = files;
    bare[1] = ("p/e/platforms/__init__.py", "def __getattr__(name):\n    return make()\n");
    assert!(fold(&bare, "e.args", "CHOICES").is_dynamic());
}
