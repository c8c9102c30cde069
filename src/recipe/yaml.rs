//! A small YAML tree that remembers where every node was written.
//!
//! serde drops positions, so recipes are read through yaml-rust2's event parser and
//! rebuilt here with byte-exact spans. yaml-rust2 only gives the start of each event
//! (and its `index` counts characters, inconsistently inside block scalars), so
//! starts are taken from line/column and ends are found by re-lexing the source.
//!
//! Anchors, aliases and `<<` merge keys are resolved while building: a node reached
//! through an alias keeps the span of the text it was anchored at, plus the span of
//! the alias itself, so a finding points at the line that actually holds the value.

use super::RecipeError;
use crate::text::span::{SourceText, Span};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Node {
    pub kind: NodeKind,
    /// The written text of this node (for an alias: the anchored node's text).
    pub span: Span,
    /// Where this node was referenced as `*alias`, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias: Option<Span>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) enum NodeKind {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Scalar {
    /// The scalar's value after YAML unquoting/folding.
    pub text: String,
    pub style: ScalarStyle,
    /// Explicit tag (`!!str` → `tag:yaml.org,2002:str`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

/// What a scalar means to a YAML 1.1 loader (PyYAML's `safe_load`, which srtctl uses):
/// the type a plain `yes` or `1_000` resolves to differs from YAML 1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScalarType {
    Null,
    Bool(bool),
    Int,
    Float,
    Str,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Entry {
    pub key: Node,
    pub value: Node,
    /// Set when the entry came in through a `<<` merge key: where that key is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_at: Option<Span>,
    /// The (key, value) spans of the entries this one replaced when an override
    /// variant was merged over its base: they never reach the engine while this
    /// one is there, and an edit of this key must carry over to them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shadows: Vec<(Span, Span)>,
}

impl Node {
    pub(crate) fn as_map(&self) -> Option<&[Entry]> {
        match &self.kind {
            NodeKind::Map(entries) => Some(entries),
            _ => None,
        }
    }
    pub(crate) fn as_seq(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq(items) => Some(items),
            _ => None,
        }
    }
    pub(crate) fn as_scalar(&self) -> Option<&Scalar> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
        }
    }
    /// The scalar text, when this node is a scalar that is not null.
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.as_scalar().filter(|s| s.resolve() != ScalarType::Null).map(|s| s.text.as_str())
    }
    pub(crate) fn is_null(&self) -> bool {
        self.as_scalar().is_some_and(|s| s.resolve() == ScalarType::Null)
    }
    /// The entry under a scalar key.
    pub(crate) fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_map()?.iter().find(|e| e.key.as_scalar().is_some_and(|k| k.text == key))
    }
    pub(crate) fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }
    /// Follow a path of keys through nested maps.
    pub(crate) fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }
    pub(crate) fn kind_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar(_) if self.is_null() => "null",
            NodeKind::Scalar(_) => "scalar",
            NodeKind::Seq(_) => "list",
            NodeKind::Map(_) => "map",
        }
    }
}

impl Scalar {
    pub(crate) fn is_quoted(&self) -> bool {
        self.style != ScalarStyle::Plain
    }

    /// The type PyYAML (YAML 1.1 core resolver) gives this scalar.
    pub(crate) fn resolve(&self) -> ScalarType {
        if let Some(tag) = &self.tag {
            return match tag.rsplit(':').next().unwrap_or("") {
                "null" => ScalarType::Null,
                "bool" => ScalarType::Bool(bool_value(&self.text).unwrap_or(false)),
                "int" => ScalarType::Int,
                "float" => ScalarType::Float,
                _ => ScalarType::Str,
            };
        }
        if self.style != ScalarStyle::Plain {
            return ScalarType::Str;
        }
        let t = self.text.as_str();
        if matches!(t, "" | "~" | "null" | "Null" | "NULL") {
            return ScalarType::Null;
        }
        if let Some(b) = bool_value(t) {
            return ScalarType::Bool(b);
        }
        if is_yaml11_int(t) {
            return ScalarType::Int;
        }
        if is_yaml11_float(t) {
            return ScalarType::Float;
        }
        ScalarType::Str
    }
}

fn bool_value(t: &str) -> Option<bool> {
    match t {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

/// PyYAML's int regexp: binary, octal, decimal, hex, sexagesimal; `_` allowed.
fn is_yaml11_int(t: &str) -> bool {
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let all = |s: &str, f: fn(char) -> bool| !s.is_empty() && s.chars().all(|c| f(c) || c == '_');
    if let Some(b) = body.strip_prefix("0b") {
        return all(b, |c| c == '0' || c == '1');
    }
    if let Some(h) = body.strip_prefix("0x") {
        return all(h, |c| c.is_ascii_hexdigit());
    }
    if body == "0" {
        return true;
    }
    if body.starts_with('0') {
        return all(body, |c| ('0'..='7').contains(&c));
    }
    if body.contains(':') {
        let mut parts = body.split(':');
        let head = parts.next().unwrap_or("");
        return head.starts_with(|c: char| ('1'..='9').contains(&c))
            && all(head, |c| c.is_ascii_digit())
            && parts.all(|p| p.len() <= 2 && p.chars().all(|c| c.is_ascii_digit()) && p.parse::<u32>().is_ok_and(|n| n < 60));
    }
    body.starts_with(|c: char| ('1'..='9').contains(&c)) && all(body, |c| c.is_ascii_digit())
}

/// PyYAML's float regexp: needs a `.` (so `1e5` is a string), or `.inf` / `.nan`.
fn is_yaml11_float(t: &str) -> bool {
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    if matches!(body, ".inf" | ".Inf" | ".INF") || matches!(t, ".nan" | ".NaN" | ".NAN") {
        return true;
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let Some(dot) = mantissa.find('.') else {
        return false;
    };
    let (int_part, frac) = (&mantissa[..dot], &mantissa[dot + 1..]);
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit() || c == '_');
    let exp_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    (!int_part.is_empty() || !frac.is_empty()) && digits(int_part) && digits(frac) && exp_ok
}

/// Parse one YAML document. `Ok(None)` for a file with no document (empty or only
/// comments). More than one document is an error: recipes are one document each.
/// A key written twice in one map. PyYAML (srt-slurm's loader) keeps the
/// later value; the earlier entry has no effect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DuplicateKey {
    pub key: String,
    /// The entry that has no effect.
    pub dead_key: Span,
    pub dead_value: Span,
    /// The key that wins.
    pub kept_key: Span,
}

/// Parse strictly: a key written twice is an error (the tool's own files:
/// `.engine-audit.yaml`, rules).
pub(crate) fn parse(src: &SourceText) -> Result<Option<Node>, RecipeError> {
    parse_with(src, Duplicates::Refuse).map(|(root, _)| root)
}

/// Parse as srt-slurm's loader does: a key written twice keeps its last value;
/// each repeat is returned so the audit can say which line has no effect.
pub(crate) fn parse_last_wins(src: &SourceText) -> Result<(Option<Node>, Vec<DuplicateKey>), RecipeError> {
    parse_with(src, Duplicates::LastWins)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Duplicates {
    Refuse,
    LastWins,
}

fn parse_with(src: &SourceText, duplicates: Duplicates) -> Result<(Option<Node>, Vec<DuplicateKey>), RecipeError> {
    // yaml-rust2 ends the stream at a NUL without an error: every key after it
    // (a recipe's whole `sglang_config:`) would be silently missing. Refused
    // here, whoever calls, not only by the file loaders.
    if let Some(offset) = src.text.find('\0') {
        return Err(RecipeError::NotText { path: src.path.clone(), offset });
    }
    // yaml-rust2 does not skip a byte-order mark: parse the text after it and shift
    // every offset back so spans stay exact in the file as written.
    let bom = if src.text.starts_with('\u{feff}') { 3 } else { 0 };
    let body = &src.text[bom..];
    let mut builder = Builder {
        src,
        bom,
        stack: Vec::new(),
        anchors: HashMap::new(),
        root: None,
        documents: 0,
        expanded: 0,
        on_duplicate: duplicates,
        duplicates: Vec::new(),
    };
    let mut parser = Parser::new_from_str(body);
    loop {
        let (event, mark) = parser.next_token().map_err(|e| builder.syntax_error(e.info().to_string(), e.marker()))?;
        if event == Event::StreamEnd {
            break;
        }
        builder.on_event(event, mark)?;
    }
    Ok((builder.root, builder.duplicates))
}

struct Builder<'a> {
    src: &'a SourceText,
    bom: usize,
    stack: Vec<Frame>,
    /// Each anchored node with its size in nodes (aliases inside it expanded).
    anchors: HashMap<usize, (Node, usize)>,
    root: Option<Node>,
    documents: usize,
    /// Nodes copied in through aliases so far, against [`MAX_ALIAS_NODES`].
    expanded: usize,
    on_duplicate: Duplicates,
    duplicates: Vec<DuplicateKey>,
}

/// Aliases are expanded into copies, so nested aliases grow exponentially (a
/// "billion laughs" file of a few hundred bytes expands to 10^9 nodes and
/// exhausts memory). Real recipes alias a few small blocks; past this many
/// copied nodes the file is rejected.
const MAX_ALIAS_NODES: usize = 1_000_000;

/// Lists and maps nested deeper than this are refused: every walk over a
/// [`Node`] (clone, drop, count, the readers) recurses, and a 14 KB file of
/// `- - - …` would otherwise overflow the stack. Real recipes nest under 10.
const MAX_NESTING: usize = 128;

/// Values in a tree: scalars, lists and maps, keys included.
pub(crate) fn node_count(node: &Node) -> usize {
    1 + match &node.kind {
        NodeKind::Scalar(_) => 0,
        NodeKind::Seq(items) => items.iter().map(node_count).sum(),
        NodeKind::Map(entries) => entries.iter().map(|e| node_count(&e.key) + node_count(&e.value)).sum(),
    }
}

enum Frame {
    Seq {
        anchor: usize,
        start: usize,
        flow: bool,
        items: Vec<Node>,
    },
    Map {
        anchor: usize,
        start: usize,
        flow: bool,
        entries: Vec<Entry>,
        pending_key: Option<Node>,
        /// Scalar key text → index in `entries`: duplicate checks stay O(1) per
        /// key (a generated map of a million keys must not take n² compares).
        keys: HashMap<String, usize>,
    },
}

impl Builder<'_> {
    /// Byte offset in the file of a yaml-rust2 marker (1-based line, 0-based char column).
    fn offset(&self, mark: &Marker) -> usize {
        let line = mark.line().max(1);
        let offset = self.src.offset_of(line, mark.col());
        // Line 1 of the parsed body starts after the BOM; offset_of already counts
        // from the file start, where the BOM is one character.
        if line == 1 && self.bom > 0 {
            self.src.offset_of(line, mark.col() + 1)
        } else {
            offset
        }
    }

    fn syntax_error(&self, message: String, mark: &Marker) -> RecipeError {
        let at = self.offset(mark);
        let span = self.src.span(at, at);
        let (excerpt, label) = self.src.excerpt_at(&span);
        RecipeError::Yaml { path: self.src.path.clone(), line: span.line, column: span.column, message, src: excerpt, at: label }
    }

    /// yaml-rust2 balances start/end events; this reports it instead of panicking
    /// should a parser bug ever break that.
    fn unbalanced(&self, at: usize) -> RecipeError {
        let span = self.src.span(at, at);
        RecipeError::shape(self.src, &span, "unbalanced YAML events (parser bug)")
    }

    fn on_event(&mut self, event: Event, mark: Marker) -> Result<(), RecipeError> {
        let at = self.offset(&mark);
        match event {
            Event::DocumentStart => {
                self.documents += 1;
                if self.documents > 1 {
                    let span = self.src.span(at, self.src.line_end(at));
                    return Err(RecipeError::shape(self.src, &span, "a second YAML document; a recipe file holds one"));
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                let style = match style {
                    TScalarStyle::Plain => ScalarStyle::Plain,
                    TScalarStyle::SingleQuoted => ScalarStyle::SingleQuoted,
                    TScalarStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
                    TScalarStyle::Literal => ScalarStyle::Literal,
                    TScalarStyle::Folded => ScalarStyle::Folded,
                };
                let end = scalar_end(self.src, at, &text, style);
                let node = Node {
                    kind: NodeKind::Scalar(Scalar { text, style, tag: tag.map(|t| format!("{}{}", t.handle, t.suffix)) }),
                    span: self.src.span(at, end),
                    alias: None,
                };
                self.finish(node, anchor)?;
            }
            Event::Alias(id) => {
                let end = alias_end(&self.src.text, at);
                let alias = self.src.span(at, end);
                // yaml-rust2 rejects unknown anchors itself; this guards the lookup anyway.
                let Some((target, size)) = self.anchors.get(&id) else {
                    return Err(RecipeError::shape(self.src, &alias, "alias to an unknown anchor"));
                };
                self.expanded = self.expanded.saturating_add(*size);
                if self.expanded > MAX_ALIAS_NODES {
                    let message = format!("aliases expand to more than {MAX_ALIAS_NODES} values (nested aliases multiply); not audited");
                    return Err(RecipeError::shape(self.src, &alias, message));
                }
                let mut node = target.clone();
                node.alias = Some(alias);
                self.finish(node, 0)?;
            }
            Event::SequenceStart(..) | Event::MappingStart(..) if self.stack.len() >= MAX_NESTING => {
                let span = self.src.span(at, self.src.line_end(at));
                let message = format!("values nested more than {MAX_NESTING} levels deep; too deeply nested to be a recipe, not audited");
                return Err(RecipeError::shape(self.src, &span, message));
            }
            Event::SequenceStart(anchor, _) => {
                let flow = self.src.text[at..].starts_with('[');
                self.stack.push(Frame::Seq { anchor, start: at, flow, items: Vec::new() });
            }
            Event::MappingStart(anchor, _) => {
                let flow = self.src.text[at..].starts_with('{');
                self.stack.push(Frame::Map { anchor, start: at, flow, entries: Vec::new(), pending_key: None, keys: HashMap::new() });
            }
            Event::SequenceEnd => {
                let Some(Frame::Seq { anchor, start, flow, items }) = self.stack.pop() else {
                    return Err(self.unbalanced(at));
                };
                let (start, end) = collection_range(start, flow, at, items.iter().map(|n| &n.span));
                let node = Node { kind: NodeKind::Seq(items), span: self.src.span(start, end), alias: None };
                self.finish(node, anchor)?;
            }
            Event::MappingEnd => {
                let Some(Frame::Map { anchor, start, flow, entries, .. }) = self.stack.pop() else {
                    return Err(self.unbalanced(at));
                };
                let spans = entries.iter().filter(|e| e.merged_at.is_none()).flat_map(|e| [&e.key.span, &e.value.span]);
                let (start, end) = collection_range(start, flow, at, spans);
                let entries = self.apply_merges(entries)?;
                let node = Node { kind: NodeKind::Map(entries), span: self.src.span(start, end), alias: None };
                self.finish(node, anchor)?;
            }
            Event::StreamStart | Event::DocumentEnd | Event::Nothing | Event::StreamEnd => {}
        }
        Ok(())
    }

    /// Attach a completed node to its parent (or make it the document root).
    fn finish(&mut self, node: Node, anchor: usize) -> Result<(), RecipeError> {
        if anchor != 0 {
            // Counted once per anchor; bounded because every alias inside the
            // node was already charged against MAX_ALIAS_NODES.
            self.anchors.insert(anchor, (node.clone(), node_count(&node)));
        }
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map { entries, pending_key, keys, .. }) => match pending_key.take() {
                None => *pending_key = Some(node),
                Some(key) => {
                    if let Some(text) = key.as_scalar().map(|k| k.text.clone()) {
                        if let Some(&first) = keys.get(&text) {
                            if self.on_duplicate == Duplicates::Refuse {
                                return Err(duplicate_key(self.src, &entries[first].key, &key));
                            }
                            let dead =
                                std::mem::replace(&mut entries[first], Entry { key, value: node, merged_at: None, shadows: Vec::new() });
                            self.duplicates.push(DuplicateKey {
                                key: text,
                                dead_key: dead.key.span,
                                dead_value: dead.value.span,
                                kept_key: entries[first].key.span.clone(),
                            });
                            return Ok(());
                        }
                        keys.insert(text, entries.len());
                    }
                    entries.push(Entry { key, value: node, merged_at: None, shadows: Vec::new() });
                }
            },
        }
        Ok(())
    }

    /// Replace `<<` entries by the entries of the maps they name. Keys written in
    /// the map win over merged ones; among merged maps the first listed wins (YAML
    /// merge-key spec, as PyYAML does it).
    fn apply_merges(&self, entries: Vec<Entry>) -> Result<Vec<Entry>, RecipeError> {
        let is_merge = |e: &Entry| e.key.as_scalar().is_some_and(|k| k.text == "<<" && k.style == ScalarStyle::Plain);
        if !entries.iter().any(is_merge) {
            return Ok(entries);
        }
        let mut own = Vec::new();
        let mut merged: Vec<Entry> = Vec::new();
        let mut merged_keys: HashSet<String> = HashSet::new();
        for entry in entries {
            if !is_merge(&entry) {
                own.push(entry);
                continue;
            }
            let sources: Vec<&Node> = match &entry.value.kind {
                NodeKind::Map(_) => vec![&entry.value],
                NodeKind::Seq(items) => items.iter().collect(),
                NodeKind::Scalar(_) => vec![&entry.value],
            };
            for source in sources {
                let Some(source_entries) = source.as_map() else {
                    // Report where the merge names it (the alias), not the anchor's line.
                    let at = source.alias.as_ref().unwrap_or(&source.span);
                    return Err(RecipeError::shape(self.src, at, format!("`<<` merges maps, found a {}", source.kind_name())));
                };
                for e in source_entries {
                    // Sets, not scans: merging a large anchored map must stay linear.
                    let new = e.key.as_scalar().is_none_or(|k| merged_keys.insert(k.text.clone()));
                    if new {
                        let mut e = e.clone();
                        e.merged_at.get_or_insert(entry.key.span.clone());
                        merged.push(e);
                    }
                }
            }
        }
        let own_keys: HashSet<&str> = own.iter().filter_map(|o| o.key.as_scalar()).map(|k| k.text.as_str()).collect();
        merged.retain(|m| m.key.as_scalar().is_none_or(|k| !own_keys.contains(k.text.as_str())));
        own.extend(merged);
        Ok(own)
    }
}

fn duplicate_key(src: &SourceText, first: &Node, second: &Node) -> RecipeError {
    let (excerpt, labels) = src.excerpt(&[&first.span, &second.span]);
    RecipeError::DuplicateKey {
        path: src.path.clone(),
        key: first.as_scalar().map(|s| s.text.clone()).unwrap_or_default(),
        first_line: first.span.line,
        second_line: second.span.line,
        second_column: second.span.column,
        second_offset: second.span.offset,
        src: excerpt,
        first: labels[0],
        second: labels[1],
    }
}

/// Start and end of a collection. Flow collections run from the bracket to the
/// closing bracket (whose marker is `end_mark`); block collections from their
/// first child to their last, since yaml-rust2's block start/end markers sit on
/// neighbouring tokens.
fn collection_range<'s>(start: usize, flow: bool, end_mark: usize, children: impl Iterator<Item = &'s Span>) -> (usize, usize) {
    if flow {
        return (start, end_mark + 1);
    }
    let mut range: Option<(usize, usize)> = None;
    for span in children {
        range = Some(match range {
            None => (span.offset, span.end()),
            Some((s, e)) => (s.min(span.offset), e.max(span.end())),
        });
    }
    range.unwrap_or((start, start))
}

fn alias_end(text: &str, at: usize) -> usize {
    let rest = &text[at..];
    at + rest
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}'))
        .map(|(i, _)| i)
        .unwrap_or(rest.len())
}

/// End offset of a scalar that starts at `at`, found by re-lexing its written form.
fn scalar_end(src: &SourceText, at: usize, value: &str, style: ScalarStyle) -> usize {
    let text = &src.text;
    let bytes = text.as_bytes();
    match style {
        ScalarStyle::DoubleQuoted => {
            let mut i = at + 1;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'"' => return i + 1,
                    _ => i += 1,
                }
            }
            text.len()
        }
        ScalarStyle::SingleQuoted => {
            let mut i = at + 1;
            while i < bytes.len() {
                if bytes[i] == b'\'' {
                    if bytes.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return i + 1;
                }
                i += 1;
            }
            text.len()
        }
        ScalarStyle::Plain => {
            if value.is_empty() {
                return at; // an empty value (`key:`) has no text of its own
            }
            if text[at..].starts_with(value) {
                return at + value.len();
            }
            // Folded over several lines: walk the source, letting any run of
            // whitespace/line breaks stand for one folded space or newline.
            let mut src_chars = text[at..].char_indices().peekable();
            let mut end = at;
            for vc in value.chars() {
                if vc == ' ' || vc == '\n' {
                    while let Some(&(_, c)) = src_chars.peek() {
                        if c.is_whitespace() {
                            src_chars.next();
                        } else {
                            break;
                        }
                    }
                    continue;
                }
                match src_chars.next() {
                    Some((i, c)) if c == vc => end = at + i + c.len_utf8(),
                    _ => return src.line_end(at), // cannot follow it: the rest of the line
                }
            }
            end
        }
        ScalarStyle::Literal | ScalarStyle::Folded => {
            // `at` is the first content line; the block ends at the last non-blank
            // line indented at least as deep.
            let indent = at - src.line_start(at);
            let mut end = src.line_end(at);
            let mut line_start = end;
            while let Some(nl) = text[line_start..].find('\n') {
                line_start += nl + 1;
                let line_end = src.line_end(line_start);
                let line = &text[line_start..line_end];
                if line.trim().is_empty() {
                    continue;
                }
                if line.len() - line.trim_start_matches(' ').len() < indent {
                    break;
                }
                end = line_end;
            }
            end
        }
    }
}

/// serde_yaml_ng ends its messages with ` at line L column C`. Rule and config
/// errors start with the (more exact) line of the key instead: two places in one
/// message would disagree.
pub(crate) fn strip_serde_location(message: &str) -> &str {
    let Some(i) = message.rfind(" at line ") else { return message };
    let tail = &message[i + " at line ".len()..];
    let is_location = tail
        .split_once(" column ")
        .is_some_and(|(l, c)| !l.is_empty() && !c.is_empty() && l.bytes().chain(c.bytes()).all(|b| b.is_ascii_digit()));
    if is_location {
        &message[..i]
    } else {
        message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> (SourceText, Node) {
        let src = SourceText::new("t.yaml", text.to_string());
        let node = parse(&src).unwrap().unwrap();
        (src, node)
    }

    #[test]
    fn a_nul_byte_is_refused_not_read_up_to() {
        // A v1 recipe whose comment holds a NUL before its `sglang_config:`:
        // yaml-rust2 alone returns the document up to the NUL, without a word.
        let text = "name: n\nbackend:\n  type: sglang\n  # note\0\n  sglang_config:\n    decode:\n      made-up-flag: 1\n";
        let src = SourceText::new("r.yaml", text.to_string());
        for result in [parse(&src).map(drop), parse_last_wins(&src).map(drop)] {
            match result {
                Err(RecipeError::NotText { path, offset }) => assert_eq!((path.as_str(), offset), ("r.yaml", 40)),
                other => panic!("expected NotText, got {other:?}"),
            }
        }
        // Every other control character is read through.
        for c in (1u32..0x20).filter(|c| *c != 0x0a && *c != 0x0d).chain([0x7f, 0x85]) {
            let text = format!("a: 1\n# note{}\nb: 2\n", char::from_u32(c).unwrap());
            let (_, root) = tree(&text);
            assert!(root.get("b").is_some(), "{c:#x}");
        }
    }

    #[test]
    fn scalar_spans_are_byte_exact_for_every_style() {
        let text = "a: plain value # c\nb: \"dq \\\" x\"\nc: 'sq '' y'\nd: [1, two]\ne: |\n  line1\n  line2\n\nf: multi\n  line\n";
        let (src, root) = tree(text);
        let slice = |k: &str| src.slice(&root.get(k).unwrap().span).to_string();
        assert_eq!(slice("a"), "plain value");
        assert_eq!(slice("b"), "\"dq \\\" x\"");
        assert_eq!(slice("c"), "'sq '' y'");
        assert_eq!(slice("d"), "[1, two]");
        assert_eq!(slice("e"), "line1\n  line2");
        assert_eq!(slice("f"), "multi\n  line");
        let key = &root.entry("d").unwrap().key.span;
        assert_eq!((key.line, key.column), (4, 1));
    }

    #[test]
    fn bom_and_crlf_keep_offsets_exact() {
        let text = "\u{feff}a: 1\r\nbb: \"x\"\r\n";
        let (src, root) = tree(text);
        let a = &root.get("a").unwrap().span;
        assert_eq!((a.offset, a.line, a.column), (6, 1, 4));
        let b = &root.get("bb").unwrap().span;
        assert_eq!(src.slice(b), "\"x\"");
        assert_eq!((b.line, b.column), (2, 5));
    }

    #[test]
    fn non_ascii_text_before_a_value_does_not_shift_it() {
        let (src, root) = tree("name: \"héllo wörld\"\nnext: 5\n");
        assert_eq!(src.slice(&root.get("next").unwrap().span), "5");
        assert_eq!(src.slice(&root.get("name").unwrap().span), "\"héllo wörld\"");
    }

    #[test]
    fn aliases_and_merge_keys_point_at_the_anchored_text() {
        let text = "base: &b\n  x: 1\n  y: 2\nother:\n  <<: *b\n  y: 3\nplain: *b\n";
        let (src, root) = tree(text);
        let other = root.get("other").unwrap();
        let x = other.entry("x").unwrap();
        assert_eq!(x.value.span.line, 2, "merged value points at the anchor's text");
        assert_eq!(x.merged_at.as_ref().unwrap().line, 5);
        assert_eq!(src.slice(&other.get("y").unwrap().span), "3", "own key wins over merged");
        assert_eq!(other.as_map().unwrap().len(), 2);
        let plain = root.get("plain").unwrap();
        assert_eq!(plain.span.line, 2);
        assert_eq!(src.slice(plain.alias.as_ref().unwrap()), "*b");
    }

    #[test]
    fn merge_of_a_scalar_is_an_error() {
        let src = SourceText::new("t.yaml", "a: &s 1\nb:\n  <<: *s\n".into());
        let err = parse(&src).unwrap_err();
        assert!(err.to_string().contains("merges maps"), "{err}");
    }

    #[test]
    fn duplicate_keys_name_both_lines() {
        let src = SourceText::new("t.yaml", "a: 1\nb: 2\na: 3\n".into());
        match parse(&src).unwrap_err() {
            RecipeError::DuplicateKey { key, first_line, second_line, .. } => {
                assert_eq!((key.as_str(), first_line, second_line), ("a", 1, 3))
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn empty_and_comment_only_files_have_no_document() {
        for text in ["", "# nothing\n", "\u{feff}"] {
            let src = SourceText::new("t.yaml", text.into());
            assert!(parse(&src).unwrap().is_none(), "{text:?}");
        }
    }

    #[test]
    fn syntax_errors_are_typed_with_a_position() {
        for text in ["a: b\n\tc: d\n", "a: \"unterminated\nb: c\n", "a: *nope\n", "a: [1, 2\n"] {
            let src = SourceText::new("t.yaml", text.into());
            match parse(&src) {
                Err(RecipeError::Yaml { line, .. }) => assert!(line >= 1),
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn nested_alias_bomb_is_rejected_not_expanded() {
        // Regression (found by robustness testing): 9 levels of 9 aliases expand
        // to 9^9 nodes; this used to exhaust memory.
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..9 {
            let items = vec![format!("*a{}", i - 1); 9].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{items}]\n"));
        }
        let src = SourceText::new("t.yaml", text);
        match parse(&src) {
            Err(RecipeError::Shape { message, line, .. }) => {
                assert!(message.contains("aliases expand"), "{message}");
                assert!(line >= 6, "points at the alias that overflows: line {line}");
            }
            other => panic!("expected a Shape error, got {other:?}"),
        }
        // Ordinary reuse stays fine.
        let (_, root) = tree("a: &a {x: 1}\nb: *a\nc: *a\n");
        assert_eq!(root.get("c").unwrap().get("x").unwrap().as_str(), Some("1"));
    }

    #[test]
    fn second_document_is_rejected() {
        let src = SourceText::new("t.yaml", "a: 1\n---\nb: 2\n".into());
        assert!(matches!(parse(&src), Err(RecipeError::Shape { line: 2, .. })));
    }

    #[test]
    fn yaml11_types_follow_pyyaml() {
        let s = |t: &str| Scalar { text: t.into(), style: ScalarStyle::Plain, tag: None }.resolve();
        assert_eq!(s("yes"), ScalarType::Bool(true));
        assert_eq!(s("Off"), ScalarType::Bool(false));
        assert_eq!(s("~"), ScalarType::Null);
        assert_eq!(s("1_000"), ScalarType::Int);
        assert_eq!(s("0x1F"), ScalarType::Int);
        assert_eq!(s("0.95"), ScalarType::Float);
        assert_eq!(s("1e5"), ScalarType::Str, "PyYAML floats need a dot");
        assert_eq!(s("1.0e+5"), ScalarType::Float);
        assert_eq!(s("fp8_e4m3"), ScalarType::Str);
        let quoted = Scalar { text: "true".into(), style: ScalarStyle::DoubleQuoted, tag: None };
        assert_eq!(quoted.resolve(), ScalarType::Str);
    }

    #[test]
    fn only_a_trailing_location_is_stripped() {
        assert_eq!(strip_serde_location("bad at line 3 column 7"), "bad");
        assert_eq!(
            strip_serde_location("no ',' at line 7 column 1, while parsing a flow mapping at line 6 column 7"),
            "no ',' at line 7 column 1, while parsing a flow mapping"
        );
        assert_eq!(strip_serde_location("the line at line five"), "the line at line five");
    }
}
