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
