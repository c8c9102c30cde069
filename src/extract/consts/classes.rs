//! Members of engine classes (`ServerArgs` above all): fields, methods,
//! properties, `self.x = ...` attributes, inherited ones from engine bases, and
//! the fields of a record assembled from a literal list of namespace classes
//! (`Cls.__annotations__ = {**collected, ...}` with `collected` built by a call
//! over `[NamespaceA, NamespaceB, ...]`).

use tree_sitter::Node;

use super::{class_body, flat_statements, may_bind, statement_bindings, BindingKind, ClassRef, ConstEval, Scope, Val};
use crate::extract::package::Package;
use crate::extract::python::{named_children, walk, PyFile};
use crate::surface::{ClassInfo, Member, MemberKind};

/// One field declaration (`name: T = default`) of a record class.
pub(crate) struct FieldSite<'f> {
    pub name: String,
    pub annotation: Node<'f>,
    pub default: Option<Node<'f>>,
    pub stmt: Node<'f>,
}

/// Bound on base-class and namespace nesting (guards against cycles).
const MAX_NESTING: usize = 16;

/// Visit every field of a record class in declaration order: engine bases
/// first, then the namespace classes it is assembled from, then its own.
pub(crate) fn visit_record_fields(ev: &ConstEval, class: &ClassRef, visit: &mut dyn FnMut(&PyFile, &ClassRef, FieldSite)) {
    visit_fields_depth(ev, class, visit, 0);
}

fn visit_fields_depth(ev: &ConstEval, class: &ClassRef, visit: &mut dyn FnMut(&PyFile, &ClassRef, FieldSite), depth: usize) {
    if depth > MAX_NESTING {
        return;
    }
    for base in ev.class_bases(class) {
        if let Val::Class(base) = base {
            visit_fields_depth(ev, &base, visit, depth + 1);
        }
    }
    for source in namespace_sources(ev, class) {
        visit_fields_depth(ev, &source, visit, depth + 1);
    }
    let Some(file) = ev.module_file(&class.module) else { return };
    let Some(body) = ev.class_def(&file, &class.name).and_then(class_body) else { return };
    for stmt in flat_statements(body) {
        for (name, binding) in statement_bindings(&file.source, stmt) {
            if let BindingKind::Assign { value, annotation: Some(annotation) } = binding.kind {
                if is_class_var(&file, annotation) {
                    continue;
                }
                visit(&file, class, FieldSite { name, annotation, default: value, stmt: binding.stmt });
            }
        }
    }
}

/// What `dataclasses.fields(C)` / `msgspec.structs.fields(C)` iterate: each
/// field's declaring class and name, in declaration order, a redeclared field
/// once (at its first position).
pub(crate) fn record_fields(ev: &ConstEval, class: &ClassRef) -> Vec<(ClassRef, String)> {
    let mut out: Vec<(ClassRef, String)> = Vec::new();
    visit_record_fields(ev, class, &mut |_, owner, site| match out.iter_mut().find(|(_, n)| *n == site.name) {
        Some(slot) => slot.0 = owner.clone(),
        None => out.push((owner.clone(), site.name)),
    });
    out
}

/// A field's declared default, as declared by `owner`: the value after `=`,
/// or the `default=` of a `field(...)` call. A field without one is unknown.
pub(crate) fn field_default(ev: &ConstEval, owner: &ClassRef, name: &str) -> crate::extract::consts::Folded {
    let mut found = None;
    visit_record_fields(ev, owner, &mut |file, declared_by, site| {
        if declared_by != owner || site.name != name {
            return;
        }
        let scope = Scope { module: &owner.module, locals: None, class: None };
        found = Some(match site.default {
            None => Err(name.to_string()),
            Some(node) => default_value(ev, file, node, scope),
        });
    });
    found.unwrap_or_else(|| Err(name.to_string()))
}

fn default_value(ev: &ConstEval, file: &PyFile, node: Node, scope: Scope) -> crate::extract::consts::Folded {
    if node.kind() == "call" {
        if let Some(Ok(Val::External(callee))) = node.child_by_field_name("function").map(|f| ev.eval(file, f, scope)) {
            if callee.ends_with(".field") {
                let args = node.child_by_field_name("arguments").map(named_children).unwrap_or_default();
                let default = args
                    .into_iter()
                    .filter(|a| a.kind() == "keyword_argument")
                    .find(|kw| kw.child_by_field_name("name").map(|k| file.text(k)) == Some("default"))
                    .and_then(|kw| kw.child_by_field_name("value"));
                return match default {
                    Some(value) => ev.eval(file, value, scope),
                    None => Err(file.text(node).to_string()),
                };
            }
        }
    }
    ev.eval(file, node, scope)
}

fn is_class_var(file: &PyFile, annotation: Node) -> bool {
    let text = file.text(annotation);
    text.starts_with("ClassVar") || text.starts_with("typing.ClassVar")
}

/// Classes whose fields a record takes through a module-level
/// `Cls.__annotations__ = {**collected, ...}`, where `collected` comes from a
/// call over a literal list of engine classes.
pub(crate) fn namespace_sources(ev: &ConstEval, class: &ClassRef) -> Vec<ClassRef> {
    let Some(file) = ev.module_file(&class.module) else { return Vec::new() };
    let root = file.root();
    let target = format!("{}.__annotations__", class.name);
    let scope = Scope::module(&class.module);
    let mut sources = Vec::new();
    for stmt in flat_statements(root) {
        let Some(assign) = named_children(stmt.node).into_iter().find(|n| n.kind() == "assignment") else { continue };
        let (Some(left), Some(right)) = (assign.child_by_field_name("left"), assign.child_by_field_name("right")) else {
            continue;
        };
        if file.text(left) != target || right.kind() != "dictionary" {
            continue;
        }
        for splat in named_children(right).into_iter().filter(|n| n.kind() == "dictionary_splat") {
            let Some(name) = named_children(splat).first().copied() else { continue };
            if name.kind() != "identifier" {
                continue;
            }
            if let Some(list) = collected_from(ev, &file, root, file.text(name), scope) {
                sources.extend(list);
            }
        }
    }
    sources
}

/// Follow `name` to the call that produced it (`a, b = f(LIST)` or `a = f(LIST)`)
/// and fold the first argument to a list of engine classes.
fn collected_from(ev: &ConstEval, file: &PyFile, root: Node, name: &str, scope: Scope) -> Option<Vec<ClassRef>> {
    let mut call = None;
    for stmt in flat_statements(root).into_iter().filter(|s| may_bind(&file.source, *s, name)) {
        for (bound, binding) in statement_bindings(&file.source, stmt) {
            if bound != name || binding.conditional {
                continue;
            }
            let assign = named_children(binding.stmt).into_iter().find(|n| n.kind() == "assignment")?;
            call = assign.child_by_field_name("right").filter(|r| r.kind() == "call");
        }
    }
    let args = call?.child_by_field_name("arguments")?;
    let first = named_children(args).into_iter().next()?;
    let items = ev.eval(file, first, scope).ok()?.iter_items()?;
    items
        .into_iter()
        .map(|v| match v {
            Val::Class(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Members of an engine class, `None` when the class is not defined in `module`
/// (or imported into it from another engine module).
pub fn class_info(pkg: &Package, module: &str, class: &str) -> Option<ClassInfo> {
    let ev = ConstEval::new(pkg);
    let file = ev.module_file(module)?;
    let class_ref = if ev.class_def(&file, class).is_some() {
        ClassRef { module: module.to_string(), name: class.to_string() }
    } else {
        match ev.global(module, class) {
            Ok(Val::Class(c)) => c,
            _ => return None,
        }
    };
    class_info_of(&ev, &class_ref, 0)
}

fn class_info_of(ev: &ConstEval, class: &ClassRef, depth: usize) -> Option<ClassInfo> {
    let file = ev.module_file(&class.module)?;
    let def = ev.class_def(&file, &class.name)?;
    let body = class_body(def)?;
    let short = class.name.rsplit('.').next().unwrap_or(&class.name).to_string();
    let mut members: Vec<Member> = Vec::new();
    let add = |members: &mut Vec<Member>, name: String, kind: MemberKind, defined_in: &str, evidence| {
        if !members.iter().any(|m| m.name == name) {
            members.push(Member { name, kind, defined_in: defined_in.to_string(), evidence });
        }
    };

    for stmt in flat_statements(body) {
        for (name, binding) in statement_bindings(&file.source, stmt) {
            let kind = match binding.kind {
                BindingKind::Assign { annotation: Some(a), .. } if !is_class_var(&file, a) => MemberKind::Field,
                BindingKind::Function(f) if is_property(&file, f) => MemberKind::Property,
                BindingKind::Function(_) => MemberKind::Method,
                _ => MemberKind::Attribute,
            };
            add(&mut members, name, kind, &short, file.evidence(binding.stmt));
        }
    }
    for source in namespace_sources(ev, class) {
        visit_record_fields(ev, &source, &mut |f, owner, site| {
            let owner_short = owner.name.rsplit('.').next().unwrap_or(&owner.name).to_string();
            add(&mut members, site.name, MemberKind::Field, &owner_short, f.evidence(site.stmt));
        });
    }
    // `self.x = ...` in any method.
    walk(body, |n| {
        if matches!(n.kind(), "assignment" | "augmented_assignment") {
            if let Some(left) = n.child_by_field_name("left") {
                walk(left, |t| {
                    if t.kind() == "attribute" {
                        let obj = t.child_by_field_name("object");
                        if obj.is_some_and(|o| o.kind() == "identifier" && file.text(o) == "self") {
                            if let Some(attr) = t.child_by_field_name("attribute") {
                                add(&mut members, file.text(attr).to_string(), MemberKind::Attribute, &short, file.evidence(t));
                            }
                        }
                        return false;
                    }
                    true
                });
            }
        }
        true
    });
    let mut bases = Vec::new();
    if let Some(supers) = def.child_by_field_name("superclasses") {
        for b in named_children(supers).into_iter().filter(|n| n.kind() != "keyword_argument") {
            bases.push(file.text(b).to_string());
        }
    }
    if depth < MAX_NESTING {
        for base in ev.class_bases(class) {
            if let Val::Class(base) = base {
                if let Some(info) = class_info_of(ev, &base, depth + 1) {
                    for m in info.members {
                        add(&mut members, m.name, m.kind, &m.defined_in, m.evidence);
                    }
                }
            }
        }
    }
    Some(ClassInfo { name: short, module: class.module.clone(), bases, members, evidence: file.evidence(def) })
}

fn is_property(file: &PyFile, function: Node) -> bool {
    let Some(decorated) = function.parent().filter(|p| p.kind() == "decorated_definition") else {
        return false;
    };
    named_children(decorated).into_iter().filter(|n| n.kind() == "decorator").any(|d| {
        let text = file.text(d).trim_start_matches('@').trim();
        let last = text.rsplit('.').next().unwrap_or(text);
        matches!(last, "property" | "cached_property" | "setter" | "getter" | "deleter")
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::source::DirTree;

    fn info(fixture: &str, package: &str, module: &str) -> ClassInfo {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/flags").join(fixture);
        let tree = DirTree::open(&root).expect("fixture exists");
        let pkg = Package::new(&tree, package);
        class_info(&pkg, module, "ServerArgs").expect("ServerArgs found")
    }

    fn kind_of(info: &ClassInfo, name: &str) -> Option<(MemberKind, String)> {
        info.members.iter().find(|m| m.name == name).map(|m| (m.kind, m.defined_in.clone()))
    }

    #[test]
    fn dataclass_members_by_kind() {
        let info = info("dataclass_style", "python/minisrv", "minisrv.srt.server_args");
        assert_eq!(kind_of(&info, "model_path"), Some((MemberKind::Field, "ServerArgs".into())));
        assert_eq!(kind_of(&info, "hidden_field"), Some((MemberKind::Field, "ServerArgs".into())));
        assert_eq!(kind_of(&info, "helper_method").map(|k| k.0), Some(MemberKind::Method));
        assert_eq!(kind_of(&info, "address").map(|k| k.0), Some(MemberKind::Property));
        assert_eq!(kind_of(&info, "derived_value").map(|k| k.0), Some(MemberKind::Attribute));
        assert_eq!(kind_of(&info, "no_such_member"), None);
        assert_eq!(info.evidence.path, "python/minisrv/srt/server_args.py");
    }

    #[test]
    fn namespace_assembled_record_has_the_namespace_fields() {
        let info = info("namespace_style", "python/nssrv", "nssrv.srt.server_args");
        assert_eq!(kind_of(&info, "path"), Some((MemberKind::Field, "ModelNs".into())));
        assert_eq!(kind_of(&info, "verbose"), Some((MemberKind::Field, "ServingNs".into())));
        assert_eq!(kind_of(&info, "describe").map(|k| k.0), Some(MemberKind::Method));
    }

    #[test]
    fn inherited_members_name_their_class() {
        let tree = crate::source::MemTree::from_files(
            "t",
            [
                ("p/e/__init__.py", ""),
                ("p/e/base.py", "class Base:\n    shared: int = 1\n    def ping(self):\n        self.seen = True\n"),
                ("p/e/child.py", "from .base import Base\nclass Child(Base):\n    own = 2\n"),
            ],
        );
        let pkg = Package::new(&tree, "p/e");
        let info = class_info(&pkg, "e.child", "Child").expect("found");
        assert_eq!(info.bases, ["Base"]);
        assert_eq!(kind_of(&info, "own"), Some((MemberKind::Attribute, "Child".into())));
        assert_eq!(kind_of(&info, "shared"), Some((MemberKind::Field, "Base".into())));
        assert_eq!(kind_of(&info, "seen"), Some((MemberKind::Attribute, "Base".into())));
        // Imported into another module: still found.
        assert!(class_info(&pkg, "e.child", "Base").is_some());
        assert!(class_info(&pkg, "e.child", "Nope").is_none());
    }
}
