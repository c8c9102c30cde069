//! The options of a Rust program's clap-derive command line
//! ([`FlagsStrategy::ClapDerive`](crate::profiles::FlagsStrategy::ClapDerive)):
//! ATOM's `atomesh` router (`atom/mesh/src/cliargs.rs`).
//!
//! clap's derive macros build the parser from the struct and enum items and
//! their attributes: `#[derive(Parser)]` on the root struct, a
//! `#[command(subcommand)]` field naming a `#[derive(Subcommand)]` enum, one
//! field per option with `#[arg(long, short, default_value..., value_parser =
//! [...], action = ArgAction::...)]`, `#[command(flatten)]` to inline another
//! struct's fields, `#[derive(ValueEnum)]` enums for closed sets of values. All
//! of it is written in the source, so it is read from there with
//! tree-sitter-rust; the program is never built or run. What the macros would
//! compute from something not written here (a `value_parser` function, a
//! `Default` impl) is dynamic, never guessed.

use tree_sitter::{Node, Parser};

use crate::surface::{Evidence, ExtractWarning, Flag, Known, ParserFacts, PyValue};

/// The clap command to read in `file`: `subcommand` of the root command (`launch`), or
/// the root's own options when empty; `prefilter` names a function of the file
/// that takes its own options out of the arguments before clap parses them.
#[derive(Clone, Copy)]
pub(crate) struct ClapCommand<'a> {
    pub file: &'a str,
    pub subcommand: &'a str,
    pub prefilter: Option<&'a str>,
}

/// [`extract_clap_options`] on the file `cmd.file` below the package root.
pub(crate) fn extract_clap_file(pkg: &super::Package, cmd: &ClapCommand, warnings: &mut Vec<ExtractWarning>) -> (Vec<Flag>, ParserFacts) {
    let path = format!("{}/{}", pkg.root, cmd.file);
    match pkg.tree.read_text_limited(&path, super::parsed::MAX_SOURCE_BYTES) {
        Ok(text) => extract_clap_options(&text, &ClapCommand { file: &path, ..*cmd }, warnings),
        Err(e) => {
            warnings.push(ExtractWarning { path, message: format!("the clap command line could not be read ({e}); no flags extracted") });
            (Vec::new(), ParserFacts::default())
        }
    }
}

/// Every option of the command, in declaration order (`--help` first, as clap
/// adds it), and its parser facts.
pub(crate) fn extract_clap_options(text: &str, cmd: &ClapCommand, warnings: &mut Vec<ExtractWarning>) -> (Vec<Flag>, ParserFacts) {
    let warn = |warnings: &mut Vec<ExtractWarning>, message: String| warnings.push(ExtractWarning { path: cmd.file.to_string(), message });
    let Some(tree) = parse_rust(text) else {
        warn(warnings, "the file could not be parsed within the parse deadline; no flags extracted".into());
        return (Vec::new(), ParserFacts::default());
    };
    let file = RustFile { path: cmd.file, text, root: tree.root_node() };
    let items = file.items();
    let Some(root) =
        items.iter().find(|i| i.kind == ItemKind::Struct && i.derives("Parser") && file.subcommand_field(i).is_some()).or_else(|| {
            // A command without subcommands: the one `Parser` struct.
            items.iter().find(|i| i.kind == ItemKind::Struct && i.derives("Parser"))
        })
    else {
        warn(warnings, "no struct with `#[derive(Parser)]`; no flags extracted".into());
        return (Vec::new(), ParserFacts::default());
    };
    let root_settings = file.attr_settings(&root.attrs, &["command", "clap"]);
    let facts = ParserFacts {
        // clap takes a prefix of a long option only with `infer_long_args`.
        allow_abbrev: Known::Value(setting_is_true(&root_settings, "infer_long_args")),
        evidence: Some(file.evidence(root.node)),
        rewrites: Default::default(),
    };
    let help = help_flag(&file, root.node);
    let fields = if cmd.subcommand.is_empty() {
        let mut flags = vec![help];
        if root_settings.iter().any(|(k, _)| k == "version") {
            flags.push(version_flag(&file, root.node));
        }
        file.struct_options(&items, root, &mut flags, warnings, 0);
        flags
    } else {
        let Some(enum_name) = file.subcommand_field(root).map(|t| strip_wrapper(&t, "Option").to_string()) else {
            warn(warnings, format!("`{}` has no `#[command(subcommand)]` field; no flags of `{}` extracted", root.name, cmd.subcommand));
            return (Vec::new(), facts);
        };
        let Some(enumeration) = items.iter().find(|i| i.kind == ItemKind::Enum && i.name == enum_name) else {
            warn(warnings, format!("the subcommand enum `{enum_name}` is not in this file; no flags of `{}` extracted", cmd.subcommand));
            return (Vec::new(), facts);
        };
        let Some(variant) = file.variants(enumeration).into_iter().find(|v| v.names.iter().any(|n| n == cmd.subcommand)) else {
            warn(warnings, format!("`{enum_name}` has no subcommand `{}`; no flags extracted", cmd.subcommand));
            return (Vec::new(), facts);
        };
        let mut flags = vec![help];
        match variant.body {
            Some(body) if body.kind() == "field_declaration_list" => file.field_options(&items, body, &mut flags, warnings, 0),
            Some(body) => match file.tuple_struct_type(body) {
                Some(ty) => match items.iter().find(|i| i.kind == ItemKind::Struct && i.name == ty) {
                    Some(args) => file.struct_options(&items, args, &mut flags, warnings, 0),
                    None => warn(warnings, format!("the arguments `{ty}` of `{}` are not in this file; not read", cmd.subcommand)),
                },
                None => warn(warnings, format!("the fields of subcommand `{}` are not one struct; not read", cmd.subcommand)),
            },
            None => {}
        }
        flags
    };
    let mut flags = fields;
    if let Some(function) = cmd.prefilter {
        match file.prefiltered(function) {
            Some(taken) => flags.extend(taken),
            None => warn(warnings, format!("no function `{function}` taking options out before clap parses; those options are not read")),
        }
    }
    (flags, facts)
}

/// tree-sitter-rust within the parse deadline every extractor keeps.
fn parse_rust(text: &str) -> Option<tree_sitter::Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_rust::LANGUAGE.into()).ok()?;
    let deadline = std::time::Instant::now() + crate::bounded_parse::parse_deadline();
    let mut past_deadline = |_: &tree_sitter::ParseState| std::time::Instant::now() > deadline;
    let options = tree_sitter::ParseOptions::new().progress_callback(&mut past_deadline);
    let bytes = text.as_bytes();
    let mut read = |at: usize, _: tree_sitter::Point| if at < bytes.len() { &bytes[at..] } else { &[] };
    parser.parse_with_options(&mut read, None, Some(options))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemKind {
    Struct,
    Enum,
}

/// A struct or enum at the file's top level, with the attributes and doc
/// comment lines written before it.
struct Item<'t> {
    kind: ItemKind,
    name: String,
    node: Node<'t>,
    attrs: Vec<Node<'t>>,
}

struct RustFile<'t> {
    path: &'t str,
    text: &'t str,
    root: Node<'t>,
}

/// One subcommand: every name it answers to (its own, then aliases) and its fields.
struct Variant<'t> {
    names: Vec<String>,
    body: Option<Node<'t>>,
}

/// How deep `#[command(flatten)]` is followed (a struct flattening itself is a
/// compile error upstream; the bound keeps a broken file from looping).
const MAX_FLATTEN_DEPTH: usize = 8;

fn named_children(node: Node) -> Vec<Node> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

impl<'t> RustFile<'t> {
    fn text(&self, node: Node) -> &'t str {
        &self.text[node.byte_range()]
    }

    fn evidence(&self, node: Node) -> Evidence {
        Evidence { path: self.path.to_string(), line: node.start_position().row as u32 + 1 }
    }

    /// Top-level structs and enums with the attributes before each.
    fn items(&self) -> Vec<ItemWithDerives<'t>> {
        let mut out = Vec::new();
        let mut attrs: Vec<Node<'t>> = Vec::new();
        for node in named_children(self.root) {
            match node.kind() {
                "attribute_item" => attrs.push(node),
                "line_comment" | "block_comment" => {}
                "struct_item" | "enum_item" => {
                    let name = node.child_by_field_name("name").map(|n| self.text(n).to_string()).unwrap_or_default();
                    let kind = if node.kind() == "struct_item" { ItemKind::Struct } else { ItemKind::Enum };
                    let derive_list = self.derives(&attrs);
                    out.push(ItemWithDerives { item: Item { kind, name, node, attrs: std::mem::take(&mut attrs) }, derive_list });
                }
                _ => attrs.clear(),
            }
        }
        out
    }

    /// The names in `#[derive(...)]` attributes, last path segment (`clap::Parser` is `Parser`).
    fn derives(&self, attrs: &[Node]) -> Vec<String> {
        let mut out = Vec::new();
        for (name, args) in attrs.iter().filter_map(|a| self.attribute(*a)) {
            if name == "derive" {
                out.extend(split_top_level(args).into_iter().map(|d| d.rsplit("::").next().unwrap_or(d).trim().to_string()));
            }
        }
        out
    }

    /// `#[name(args)]` as (last segment of name, the text inside the parentheses).
    fn attribute(&self, item: Node) -> Option<(&'t str, &'t str)> {
        let text = self.text(item).trim();
        let inner = text.strip_prefix("#[")?.strip_suffix(']')?.trim();
        let (name, rest) = match inner.find('(') {
            Some(i) => (&inner[..i], &inner[i..]),
            None => (inner, ""),
        };
        let args = rest.trim().strip_prefix('(').and_then(|r| r.strip_suffix(')')).unwrap_or("");
        Some((name.trim().rsplit("::").next().unwrap_or(name).trim(), args))
    }

    /// The `key` / `key = value` settings of the attributes named one of `names`.
    fn attr_settings(&self, attrs: &[Node], names: &[&str]) -> Vec<(String, Option<String>)> {
        let mut out = Vec::new();
        for (name, args) in attrs.iter().filter_map(|a| self.attribute(*a)) {
            if names.contains(&name) {
                out.extend(split_top_level(args).into_iter().map(setting));
            }
        }
        out
    }

    /// The type of the root struct's `#[command(subcommand)]` field.
    fn subcommand_field(&self, item: &ItemWithDerives<'t>) -> Option<String> {
        let body = item.node.child_by_field_name("body")?;
        self.fields(body).into_iter().find_map(|f| {
            let settings = self.attr_settings(&f.attrs, &["command", "clap"]);
            settings.iter().any(|(k, _)| k == "subcommand").then(|| self.text(f.ty).to_string())
        })
    }

    /// The variants of a `Subcommand` enum: each answers to its name (kebab-case
    /// of the variant, or `name = "..."`) and its aliases.
    fn variants(&self, item: &ItemWithDerives<'t>) -> Vec<Variant<'t>> {
        let Some(list) = item.node.child_by_field_name("body") else { return Vec::new() };
        let mut out = Vec::new();
        for (node, variant, settings) in self.enum_variants(list, &["command", "clap"]) {
            let mut names = vec![string_setting(&settings, "name").unwrap_or_else(|| kebab_case(variant))];
            for (k, v) in &settings {
                if matches!(k.as_str(), "alias" | "visible_alias" | "aliases" | "visible_aliases") {
                    names.extend(v.as_deref().map(string_list).unwrap_or_default());
                }
            }
            out.push(Variant { names, body: node.child_by_field_name("body") });
        }
        out
    }

    /// Each variant of an enum's body with its name and the settings of the
    /// attributes named `attr_names` written above it.
    #[allow(clippy::type_complexity)]
    fn enum_variants(&self, list: Node<'t>, attr_names: &[&str]) -> Vec<(Node<'t>, &'t str, Vec<(String, Option<String>)>)> {
        let mut out = Vec::new();
        let mut attrs = Vec::new();
        for node in named_children(list) {
            match node.kind() {
                "attribute_item" => attrs.push(node),
                "enum_variant" => {
                    let settings = self.attr_settings(&attrs, attr_names);
                    attrs.clear();
                    let variant = node.child_by_field_name("name").map(|n| self.text(n)).unwrap_or_default();
                    out.push((node, variant, settings));
                }
                _ => {}
            }
        }
        out
    }

    /// A tuple variant's one field type (`Launch(LaunchArgs)`).
    fn tuple_struct_type(&self, body: Node) -> Option<String> {
        let types: Vec<Node> = named_children(body).into_iter().filter(|n| n.kind() != "attribute_item").collect();
        match types.as_slice() {
            [one] => Some(self.text(*one).to_string()),
            _ => None,
        }
    }

    fn fields(&self, body: Node<'t>) -> Vec<Field<'t>> {
        let mut out = Vec::new();
        let mut attrs = Vec::new();
        let mut docs: Vec<&'t str> = Vec::new();
        for node in named_children(body) {
            match node.kind() {
                "attribute_item" => attrs.push(node),
                "line_comment" => {
                    if let Some(doc) = self.text(node).strip_prefix("///") {
                        docs.push(doc.trim());
                    }
                }
                "field_declaration" => {
                    let (Some(name), Some(ty)) = (node.child_by_field_name("name"), node.child_by_field_name("type")) else { continue };
                    let name = self.text(name).trim_start_matches("r#").to_string();
                    out.push(Field { name, ty, node, attrs: std::mem::take(&mut attrs), doc: std::mem::take(&mut docs).join(" ") });
                }
                _ => {}
            }
        }
        out
    }

    fn struct_options(
        &self,
        items: &[ItemWithDerives<'t>],
        item: &ItemWithDerives<'t>,
        out: &mut Vec<Flag>,
        warnings: &mut Vec<ExtractWarning>,
        depth: usize,
    ) {
        if let Some(body) = item.node.child_by_field_name("body").filter(|b| b.kind() == "field_declaration_list") {
            self.field_options(items, body, out, warnings, depth);
        }
    }

    /// The options of a field list: one per `long`/`short` field, flattened
    /// structs inlined. Fields without either are positionals (not options);
    /// the subcommand field and `skip`ped fields are no arguments.
    fn field_options(
        &self,
        items: &[ItemWithDerives<'t>],
        body: Node<'t>,
        out: &mut Vec<Flag>,
        warnings: &mut Vec<ExtractWarning>,
        depth: usize,
    ) {
        for field in self.fields(body) {
            let settings = self.attr_settings(&field.attrs, &["arg", "command", "clap"]);
            let has = |key: &str| settings.iter().any(|(k, _)| k == key);
            if has("subcommand") || has("skip") {
                continue;
            }
            if has("flatten") {
                let ty = strip_wrapper(self.text(field.ty), "Option").to_string();
                match items.iter().find(|i| i.kind == ItemKind::Struct && i.name == ty) {
                    Some(_) if depth >= MAX_FLATTEN_DEPTH => warnings.push(ExtractWarning {
                        path: self.path.to_string(),
                        message: format!(
                            "line {}: `#[command(flatten)]` nested past {MAX_FLATTEN_DEPTH} levels; not read",
                            self.line(field.node)
                        ),
                    }),
                    Some(inner) => self.struct_options(items, inner, out, warnings, depth + 1),
                    None => warnings.push(ExtractWarning {
                        path: self.path.to_string(),
                        message: format!(
                            "line {}: the flattened struct `{ty}` is not in this file; its options are not read",
                            self.line(field.node)
                        ),
                    }),
                }
                continue;
            }
            if let Some(flag) = self.option(items, &field, &settings) {
                out.push(flag);
            }
        }
    }

    fn line(&self, node: Node) -> u32 {
        node.start_position().row as u32 + 1
    }

    /// One field as an option, as clap 4's derive builds it.
    fn option(&self, items: &[ItemWithDerives<'t>], field: &Field<'t>, settings: &[(String, Option<String>)]) -> Option<Flag> {
        let value = |key: &str| settings.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let mut names = Vec::new();
        if let Some(long) = value("long") {
            names.push(format!("--{}", long.as_deref().and_then(string_literal).unwrap_or_else(|| field.name.replace('_', "-"))));
        }
        if let Some(short) = value("short") {
            let c = short.as_deref().and_then(char_literal).or_else(|| field.name.chars().next())?;
            names.push(format!("-{c}"));
        }
        if names.is_empty() {
            return None;
        }
        for (k, v) in settings {
            match k.as_str() {
                "alias" | "visible_alias" | "aliases" | "visible_aliases" => {
                    names.extend(v.as_deref().map(string_list).unwrap_or_default().into_iter().map(|a| format!("--{a}")))
                }
                "short_alias" | "visible_short_alias" | "short_aliases" | "visible_short_aliases" => {
                    names.extend(v.as_deref().map(char_list).unwrap_or_default().into_iter().map(|c| format!("-{c}")))
                }
                _ => {}
            }
        }
        let ty = self.text(field.ty);
        let shape = TypeShape::of(ty);
        let inner = shape.inner.to_string();
        let action = match value("action").flatten() {
            Some(a) => match a.rsplit("::").next().unwrap_or(&a) {
                "Set" => "store",
                "Append" => "append",
                "SetTrue" => "store_true",
                "SetFalse" => "store_false",
                "Count" => "count",
                "Help" | "HelpShort" | "HelpLong" => "help",
                "Version" => "version",
                other => return Some(self.dynamic_action(field, names, other)),
            },
            None if ty == "bool" => "store_true",
            None if shape.vec => "append",
            None => "store",
        };
        let nargs = value("num_args").flatten().map(|n| match n.replace(' ', "").as_str() {
            "0.." => PyValue::from("*"),
            "1.." => PyValue::from("+"),
            "0..=1" => PyValue::from("?"),
            other => other.parse::<i64>().map(PyValue::from).unwrap_or_else(|_| PyValue::from(other)),
        });
        let choices = match value("value_parser").flatten() {
            Some(parser) if parser.trim_start().starts_with('[') => {
                Some(Known::Value(string_list(&parser).into_iter().map(PyValue::from).collect()))
            }
            Some(parser) if parser.contains("PossibleValuesParser") => Some(match parser.find('[') {
                Some(i) => Known::Value(string_list(&parser[i..]).into_iter().map(PyValue::from).collect()),
                None => Known::Dynamic { dynamic: parser },
            }),
            // A parser function or type: what it accepts is not read.
            Some(parser) => Some(Known::Dynamic { dynamic: parser }),
            None => self.value_enum(items, &inner).map(|values| match values {
                Known::Value(v) => Known::Value(v.into_iter().map(PyValue::from).collect()),
                Known::Dynamic { dynamic } => Known::Dynamic { dynamic },
            }),
        };
        let default = self.default(items, settings, &shape, action);
        let required = matches!(default, Known::Value(PyValue::Null)) && !shape.option && !shape.vec && action == "store";
        let help = match value("help").flatten().and_then(|h| string_literal(&h)) {
            Some(h) => Some(h),
            None => Some(field.doc.clone()).filter(|d| !d.is_empty()),
        };
        Some(Flag {
            names,
            dest: field.name.clone(),
            action: action.to_string(),
            type_name: Some(inner),
            nargs,
            choices,
            choices_when_env: Default::default(),
            default,
            const_value: None,
            required,
            deprecated: None,
            help,
            evidence: self.evidence(field.node),
            effective_default: None,
            engine_parser: None,
        })
    }

    /// An option whose `action` is not one of clap's own: read as far as its names.
    fn dynamic_action(&self, field: &Field, names: Vec<String>, action: &str) -> Flag {
        Flag {
            names,
            dest: field.name.clone(),
            action: action.to_string(),
            type_name: Some(TypeShape::of(self.text(field.ty)).inner.to_string()),
            nargs: None,
            choices: None,
            choices_when_env: Default::default(),
            default: Known::Dynamic { dynamic: format!("action = {action}") },
            const_value: None,
            required: false,
            deprecated: None,
            help: Some(field.doc.clone()).filter(|d| !d.is_empty()),
            evidence: self.evidence(field.node),
            effective_default: None,
            engine_parser: None,
        }
    }

    /// The values a `ValueEnum` named `ty` accepts, when it is in this file:
    /// `None` when `ty` is no such enum (any value its parser takes).
    fn value_enum(&self, items: &[ItemWithDerives<'t>], ty: &str) -> Option<Known<Vec<String>>> {
        let item = items.iter().find(|i| i.kind == ItemKind::Enum && i.name == ty && i.derive_list.iter().any(|d| d == "ValueEnum"))?;
        let rename = string_setting(&self.attr_settings(&item.attrs, &["value", "clap"]), "rename_all");
        let Some(list) = item.node.child_by_field_name("body") else { return Some(Known::Dynamic { dynamic: ty.to_string() }) };
        let mut out = Vec::new();
        for (_, variant, settings) in self.enum_variants(list, &["value", "clap"]) {
            if settings.iter().any(|(k, _)| k == "skip") {
                continue;
            }
            let name = match (string_setting(&settings, "name"), rename.as_deref()) {
                (Some(n), _) => n,
                (None, None | Some("kebab-case")) => kebab_case(variant),
                (None, Some("snake_case")) => kebab_case(variant).replace('-', "_"),
                (None, Some("lower" | "lowercase")) => variant.to_lowercase(),
                (None, Some("verbatim")) => variant.to_string(),
                (None, Some(other)) => return Some(Known::Dynamic { dynamic: format!("rename_all = \"{other}\"") }),
            };
            out.push(name);
            for (k, v) in &settings {
                if matches!(k.as_str(), "alias" | "aliases") {
                    out.extend(v.as_deref().map(string_list).unwrap_or_default());
                }
            }
        }
        Some(Known::Value(out))
    }

    /// What the field holds when the option is not passed.
    fn default(
        &self,
        items: &[ItemWithDerives<'t>],
        settings: &[(String, Option<String>)],
        shape: &TypeShape,
        action: &str,
    ) -> Known<PyValue> {
        let value = |key: &str| settings.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        if let Some(text) = value("default_value").flatten() {
            return match string_literal(&text) {
                Some(s) => Known::Value(typed(&s, shape.inner)),
                None => Known::Dynamic { dynamic: text },
            };
        }
        match value("default_value_t") {
            Some(Some(text)) => {
                let text = text.trim();
                if let Some(v) = literal(text) {
                    return Known::Value(v);
                }
                // `Backend::Sglang`: the ValueEnum variant's name.
                if let Some((ty, variant)) = text.rsplit_once("::") {
                    if let Some(Known::Value(names)) = self.value_enum(items, ty.trim()) {
                        let kebab = kebab_case(variant.trim());
                        if names.contains(&kebab) {
                            return Known::Value(PyValue::from(kebab));
                        }
                    }
                }
                return Known::Dynamic { dynamic: text.to_string() };
            }
            // `default_value_t` alone: the type's `Default`.
            Some(None) => {
                return match shape.inner {
                    "bool" => Known::Value(PyValue::Bool(false)),
                    "String" => Known::Value(PyValue::from("")),
                    t if is_int(t) => Known::Value(PyValue::from(0)),
                    t if is_float(t) => Known::Value(PyValue::from(0.0)),
                    t => Known::Dynamic { dynamic: format!("{t}::default()") },
                };
            }
            None => {}
        }
        if let Some(text) = value("default_values_t").flatten().or_else(|| value("default_values").flatten()) {
            return Known::Dynamic { dynamic: text };
        }
        match action {
            "store_true" => Known::Value(PyValue::Bool(false)),
            "store_false" => Known::Value(PyValue::Bool(true)),
            "count" => Known::Value(PyValue::from(0)),
            _ if shape.vec && !shape.option => Known::Value(PyValue::Array(Vec::new())),
            _ => Known::Value(PyValue::Null),
        }
    }

    /// The options a function of the file takes out of the arguments before
    /// clap sees them (`args[i] == "--prefill"`): each an option of the program.
    fn prefiltered(&self, function: &str) -> Option<Vec<Flag>> {
        let def = find_function(self.root, self.text, function)?;
        let mut out: Vec<Flag> = Vec::new();
        let mut stack = vec![def];
        while let Some(node) = stack.pop() {
            if node.kind() == "binary_expression" && node.child_by_field_name("operator").is_some_and(|o| self.text(o) == "==") {
                for side in ["left", "right"] {
                    let Some(lit) = node.child_by_field_name(side).filter(|n| n.kind() == "string_literal") else { continue };
                    let Some(option) = string_literal(self.text(lit)).filter(|s| s.starts_with("--") && s.len() > 2) else { continue };
                    if out.iter().any(|f| f.names[0] == option) {
                        continue;
                    }
                    out.push(Flag {
                        dest: option.trim_start_matches('-').replace('-', "_"),
                        names: vec![option],
                        action: "append".into(),
                        type_name: None,
                        // The function takes the value and what follows it until the next option.
                        nargs: Some(PyValue::from("+")),
                        choices: None,
                        choices_when_env: Default::default(),
                        default: Known::Value(PyValue::Array(Vec::new())),
                        const_value: None,
                        required: false,
                        deprecated: None,
                        help: Some(format!("taken out of the arguments by `{function}` before clap parses them")),
                        evidence: self.evidence(lit),
                        effective_default: None,
                        engine_parser: None,
                    });
                }
            }
            stack.extend(named_children(node).into_iter().rev());
        }
        out.sort_by_key(|f| f.evidence.line);
        Some(out)
    }
}

/// A top-level struct or enum and the traits it derives.
struct ItemWithDerives<'t> {
    item: Item<'t>,
    derive_list: Vec<String>,
}

impl<'t> std::ops::Deref for ItemWithDerives<'t> {
    type Target = Item<'t>;
    fn deref(&self) -> &Item<'t> {
        &self.item
    }
}

impl ItemWithDerives<'_> {
    fn derives(&self, what: &str) -> bool {
        self.derive_list.iter().any(|d| d == what)
    }
}

struct Field<'t> {
    name: String,
    ty: Node<'t>,
    node: Node<'t>,
    attrs: Vec<Node<'t>>,
    doc: String,
}

/// `Option<...>` and `Vec<...>` around the value type, as clap's derive reads them.
struct TypeShape<'a> {
    option: bool,
    vec: bool,
    inner: &'a str,
}

impl<'a> TypeShape<'a> {
    fn of(ty: &'a str) -> TypeShape<'a> {
        let ty = ty.trim();
        let unwrapped = strip_wrapper(ty, "Option");
        let option = unwrapped.len() != ty.len();
        let inner = strip_wrapper(unwrapped, "Vec");
        TypeShape { option, vec: inner.len() != unwrapped.len(), inner }
    }
}

/// `Wrapper<T>` → `T` (also `std::option::Option<T>`); anything else unchanged.
fn strip_wrapper<'a>(ty: &'a str, wrapper: &str) -> &'a str {
    let ty = ty.trim();
    let Some(open) = ty.find('<') else { return ty };
    let head = ty[..open].trim();
    if head.rsplit("::").next() != Some(wrapper) || !ty.ends_with('>') {
        return ty;
    }
    ty[open + 1..ty.len() - 1].trim()
}

fn find_function<'t>(root: Node<'t>, text: &str, name: &str) -> Option<Node<'t>> {
    named_children(root)
        .into_iter()
        .find(|n| n.kind() == "function_item" && n.child_by_field_name("name").is_some_and(|id| &text[id.byte_range()] == name))
}

/// Splits attribute arguments at commas outside brackets, parentheses and literals.
fn split_top_level(args: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start, mut in_str, mut escaped, mut in_char) = (0i32, 0usize, false, false, false);
    for (i, c) in args.char_indices() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        if in_char {
            if c == '\'' && !escaped {
                in_char = false;
            }
            escaped = !escaped && c == '\\';
            continue;
        }
        match c {
            '"' => in_str = true,
            // A char literal (`short = 'p'`), not a lifetime: both are rare here.
            '\'' => in_char = true,
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push(args[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(args[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// `key` or `key = value`.
fn setting(item: &str) -> (String, Option<String>) {
    match item.split_once('=') {
        // `=` inside a value (`0..=1`) comes after the key's own.
        Some((k, v)) if k.trim().chars().all(|c| c.is_alphanumeric() || c == '_') => (k.trim().to_string(), Some(v.trim().to_string())),
        _ => (item.trim().to_string(), None),
    }
}

fn setting_is_true(settings: &[(String, Option<String>)], key: &str) -> bool {
    settings.iter().any(|(k, v)| k == key && v.as_deref().is_none_or(|v| v == "true"))
}

fn string_setting(settings: &[(String, Option<String>)], key: &str) -> Option<String> {
    settings.iter().find(|(k, _)| k == key).and_then(|(_, v)| v.as_deref().and_then(string_literal))
}

/// A Rust string literal's value (`"a\"b"`, `r#"..."#`); `None` for anything else.
fn string_literal(text: &str) -> Option<String> {
    let text = text.trim();
    if let Some(raw) = text.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let body = raw[hashes..].strip_prefix('"')?;
        return Some(body.strip_suffix(&format!("\"{}", "#".repeat(hashes)))?.to_string());
    }
    let body = text.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0' => out.push('\0'),
            c @ ('\\' | '"' | '\'') => out.push(c),
            // `\u{..}`, `\x..`, line continuations: not read.
            _ => return None,
        }
    }
    Some(out)
}

fn char_literal(text: &str) -> Option<char> {
    let body = text.trim().strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = body.chars();
    let c = chars.next()?;
    (chars.next().is_none() && c != '\\').then_some(c)
}

/// `"a"` or `["a", "b"]`: the strings, in order (`&[...]`, `vec![...]` too).
fn string_list(text: &str) -> Vec<String> {
    let t = text.trim().trim_start_matches('&').trim_start_matches("vec!").trim();
    match t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        Some(inner) => split_top_level(inner).into_iter().filter_map(string_literal).collect(),
        None => string_literal(t).into_iter().collect(),
    }
}

fn char_list(text: &str) -> Vec<char> {
    let t = text.trim().trim_start_matches('&');
    match t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        Some(inner) => split_top_level(inner).into_iter().filter_map(char_literal).collect(),
        None => char_literal(t).into_iter().collect(),
    }
}

/// A literal as JSON: `30000`, `-1`, `1.5`, `true`, `"x"`; `None` for anything else.
fn literal(text: &str) -> Option<PyValue> {
    let text = text.trim();
    match text {
        "true" => return Some(PyValue::Bool(true)),
        "false" => return Some(PyValue::Bool(false)),
        _ => {}
    }
    if let Some(s) = string_literal(text) {
        return Some(PyValue::from(s));
    }
    let number = text.replace('_', "");
    // A suffixed literal (`5u64`, `1.5f32`) is the same number.
    let digits = strip_number_suffix(&number);
    if let Ok(i) = digits.parse::<i64>() {
        return Some(PyValue::from(i));
    }
    digits.parse::<f64>().ok().filter(|f| f.is_finite()).and_then(|f| serde_json::Number::from_f64(f).map(PyValue::Number))
}

fn strip_number_suffix(text: &str) -> &str {
    for suffix in ["u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32", "f64"] {
        if let Some(n) = text.strip_suffix(suffix) {
            return n;
        }
    }
    text
}

fn is_int(ty: &str) -> bool {
    matches!(ty, "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128" | "isize")
}

fn is_float(ty: &str) -> bool {
    matches!(ty, "f32" | "f64")
}

/// A `default_value = "..."` as the field's type reads it: `"5"` on a `u64` is 5.
fn typed(text: &str, ty: &str) -> PyValue {
    if is_int(ty) {
        if let Ok(i) = text.parse::<i64>() {
            return PyValue::from(i);
        }
    }
    if is_float(ty) {
        if let Some(n) = text.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
            return PyValue::Number(n);
        }
    }
    if ty == "bool" {
        match text {
            "true" => return PyValue::Bool(true),
            "false" => return PyValue::Bool(false),
            _ => {}
        }
    }
    PyValue::from(text)
}

/// clap's kebab-case of an identifier (heck's rules): `RoundRobin` →
/// `round-robin`, `worker_urls` → `worker-urls`, `HTTPServer` → `http-server`.
fn kebab_case(ident: &str) -> String {
    let chars: Vec<char> = ident.trim_start_matches("r#").chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            continue;
        }
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if (prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower)) && !out.ends_with('-') {
                out.push('-');
            }
        }
        out.extend(c.to_lowercase());
    }
    out.trim_end_matches('-').to_string()
}

/// clap's own `-h, --help`, which every command has unless disabled.
fn help_flag(file: &RustFile, root: Node) -> Flag {
    Flag {
        names: vec!["-h".into(), "--help".into()],
        dest: "help".into(),
        action: "help".into(),
        type_name: None,
        nargs: Some(PyValue::from(0)),
        choices: None,
        choices_when_env: Default::default(),
        default: Known::Value(PyValue::Null),
        const_value: None,
        required: false,
        deprecated: None,
        help: Some("Print help".into()),
        evidence: file.evidence(root),
        effective_default: None,
        engine_parser: None,
    }
}

fn version_flag(file: &RustFile, root: Node) -> Flag {
    Flag {
        names: vec!["-V".into(), "--version".into()],
        dest: "version".into(),
        action: "version".into(),
        help: Some("Print version".into()),
        ..help_flag(file, root)
    }
}

#[cfg(test)]
#[path = "clap_derive_tests.rs"]
mod tests;
