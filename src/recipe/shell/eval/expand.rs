//! Expansion of one word on one state: quotes, `$X`, `${X...}`, arrays,
//! `$(( ))`, and what cannot be known (with why).

use super::*;

impl Interp<'_> {
    // ---- expansion ------------------------------------------------------------------------

    /// The items a word stands for; `quoted`: inside double quotes (no splitting).
    pub(super) fn expand(&mut self, f: &File, file: usize, node: Node, state: &State, quoted: bool) -> Vec<Item> {
        let word = self.node_origin(file, node);
        self.expand_in(f, file, node, state, quoted, word)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn expand_in(&mut self, f: &File, file: usize, node: Node, state: &State, quoted: bool, word: Origin) -> Vec<Item> {
        let raw = &f.text[node.byte_range()];
        // tree-sitter-bash puts the blank before an expansion inside a string into
        // the expansion (`"${A} ${B}"`): it is text.
        let lead = raw.len() - raw.trim_start().len();
        // In eval text, a value that paths merged past the cap disagree on is
        // written as its variable's expansion (`$ARGS`). Read again, it would
        // be that variable's value here, not the words either path wrote: an
        // array's first element (`$ARGS` is `${ARGS[0]}`, a second `-tp` on
        // server_atom.sh's decode line), or the eval'd string itself.
        if matches!(node.kind(), "expansion" | "simple_expansion") {
            let gap = f.unknown_within(node.start_byte() + lead, node.end_byte()).filter(|(_, _, why)| why.ends_with(DIFFERS));
            if gap.is_some() {
                let mut out = Vec::new();
                if lead > 0 {
                    let at = self.origin(file, node.start_byte(), node.start_byte() + lead, true);
                    out.push(Item::Frag(Frag::literal(raw[..lead].to_string(), at, word, quoted)));
                }
                out.push(Item::Frag(Frag {
                    text: raw[lead..].to_string(),
                    unknown: Some(DIFFERS.to_string()),
                    split: !quoted,
                    quoted,
                    origin: self.origin(file, node.start_byte() + lead, node.end_byte(), false),
                    word,
                }));
                return out;
            }
        }
        if lead > 0 && matches!(node.kind(), "expansion" | "simple_expansion") {
            let blank =
                Frag::literal(raw[..lead].to_string(), self.origin(file, node.start_byte(), node.start_byte() + lead, true), word, quoted);
            let mut out = vec![Item::Frag(blank)];
            let rest = &raw[lead..];
            let at = self.origin(file, node.start_byte() + lead, node.end_byte(), false);
            out.extend(match node.kind() {
                "simple_expansion" => self.lookup(rest.trim_start_matches('$'), None, state, quoted, at, rest),
                _ => self.expansion_text(f, file, node, rest, at, state, quoted, word),
            });
            return out;
        }
        let literal = |interp: &Self, text: String, start: usize, end: usize, q: bool| {
            let verbatim = text.len() == end - start && text == f.text[start..end];
            Item::Frag(Frag::literal(text, interp.origin(file, start, end, verbatim), word, q))
        };
        // In eval text, a value not known where the string was built is written
        // as its expansion; quoted or escaped there, it is still that value.
        if matches!(node.kind(), "word" | "raw_string" | "ansi_c_string") {
            if let Some((_, _, why)) = f.unknown_within(node.start_byte(), node.end_byte()) {
                let at = self.node_origin(file, node);
                return vec![Item::Frag(Frag {
                    text: raw.to_string(),
                    unknown: Some(format!("holds {why}")),
                    split: false,
                    quoted,
                    origin: at,
                    word,
                })];
            }
        }
        match node.kind() {
            "word" | "number" | "extglob_pattern" | "special_variable_name" | "variable_name" => {
                vec![literal(self, words::unescape_word(raw), node.start_byte(), node.end_byte(), quoted)]
            }
            "raw_string" => vec![literal(
                self,
                raw[1..raw.len().saturating_sub(1).max(1)].to_string(),
                node.start_byte() + 1,
                node.end_byte().saturating_sub(1).max(node.start_byte() + 1),
                true,
            )],
            "ansi_c_string" => {
                let inner = raw.trim_start_matches("$'").trim_end_matches('\'').to_string();
                vec![literal(self, inner, node.start_byte() + 2, node.end_byte().saturating_sub(1).max(node.start_byte() + 2), true)]
            }
            "string" | "translated_string" => {
                let mut out = Vec::new();
                let open = if node.kind() == "string" { 1 } else { 2 };
                let (start, end) = (node.start_byte() + open, node.end_byte().saturating_sub(1).max(node.start_byte() + open));
                let mut last = start;
                for child in named_children(node) {
                    if child.start_byte() > last {
                        out.extend(self.quoted_text(f, file, last, child.start_byte(), state, word));
                    }
                    out.extend(self.expand_in(f, file, child, state, true, word));
                    last = child.end_byte();
                }
                if end > last {
                    out.extend(self.quoted_text(f, file, last, end, state, word));
                }
                // `""` is an empty word; `"${A[@]}"` (and `"${A[@]}$E"`) of an
                // empty array and empty strings is no word at all.
                let expands_all_of = named_children(node).iter().any(|c| expands_all(f.text[c.byte_range()].trim_start()));
                if out.is_empty() && !expands_all_of {
                    out.push(literal(self, String::new(), start, start, true));
                }
                out
            }
            "string_content" => self.quoted_text(f, file, node.start_byte(), node.end_byte(), state, word),
            "concatenation" => {
                let mut out = Vec::new();
                let mut last = node.start_byte();
                for child in named_children(node) {
                    if child.start_byte() > last {
                        out.push(literal(self, words::unescape_word(&f.text[last..child.start_byte()]), last, child.start_byte(), quoted));
                    }
                    out.extend(self.expand_in(f, file, child, state, quoted, word));
                    last = child.end_byte();
                }
                if node.end_byte() > last {
                    out.push(literal(self, words::unescape_word(&f.text[last..node.end_byte()]), last, node.end_byte(), quoted));
                }
                out
            }
            "simple_expansion" => {
                let name = raw.trim_start_matches('$');
                let at = self.node_origin(file, node);
                self.lookup(name, None, state, quoted, at, raw)
            }
            "expansion" => self.expansion(f, file, node, state, quoted, word),
            "command_substitution" => {
                let at = self.node_origin(file, node);
                if let Some(dir) = self.script_dir_substitution(raw, file) {
                    return vec![Item::Frag(Frag::literal(dir, Origin { verbatim: false, ..at }, word, quoted))];
                }
                vec![unknown_frag(raw, "is the output of a command", !quoted, quoted, at)]
            }
            "arithmetic_expansion" => {
                let at = self.node_origin(file, node);
                let inner = raw.trim_start_matches("$((").trim_start_matches("$[").trim_end_matches("))").trim_end_matches(']');
                let mut value_of = |name: &str| -> Option<i64> {
                    let items = self.lookup(name, None, state, true, at, name);
                    known_text(&joined(items, at))?.trim().parse().ok()
                };
                match words::arithmetic(inner, &mut value_of) {
                    Some(v) => vec![Item::Frag(Frag {
                        split: !quoted,
                        ..Frag::literal(v.to_string(), Origin { verbatim: false, ..at }, word, quoted)
                    })],
                    None => vec![unknown_frag(raw, "is arithmetic on values not known", false, quoted, at)],
                }
            }
            _ => {
                let at = self.node_origin(file, node);
                vec![unknown_frag(raw, "is not read by engine-audit", !quoted, quoted, at)]
            }
        }
    }

    /// Text inside double quotes that the grammar left as plain content. It can
    /// still hold expansions (tree-sitter-bash reads `"${A} ${B}"` as `${A}`
    /// then the content ` ${B}`): `$NAME` and `${NAME}` are looked up, any other
    /// `$...` is unknown, the rest is text.
    pub(super) fn quoted_text(&self, f: &File, file: usize, start: usize, end: usize, state: &State, word: Origin) -> Vec<Item> {
        let text = &f.text[start..end];
        let bytes = text.as_bytes();
        let mut out = Vec::new();
        let mut literal_from = 0;
        let mut i = 0;
        let push_literal = |out: &mut Vec<Item>, from: usize, to: usize| {
            if to > from {
                let piece = words::unescape_double_quoted(&text[from..to]);
                let verbatim = piece.len() == to - from;
                out.push(Item::Frag(Frag::literal(piece, self.origin(file, start + from, start + to, verbatim), word, true)));
            }
        };
        while i < bytes.len() {
            match bytes[i] {
                b'\\' => i += 2,
                b'$' => {
                    let rest = &text[i + 1..];
                    let (len, name) = if let Some(inner) = rest.strip_prefix('{') {
                        match inner.find('}') {
                            Some(close) => (close + 3, Some(&inner[..close])),
                            None => (rest.len() + 1, None),
                        }
                    } else {
                        let n = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
                        (n + 1, (n > 0).then(|| &rest[..n]))
                    };
                    if len == 1 || rest.starts_with('(') {
                        if rest.starts_with('(') {
                            push_literal(&mut out, literal_from, i);
                            let at = self.origin(file, start + i, end, false);
                            out.push(unknown_frag(&text[i..], "is the output of a command", false, true, at));
                            return out;
                        }
                        i += 1;
                        continue;
                    }
                    push_literal(&mut out, literal_from, i);
                    let raw = &text[i..i + len];
                    let at = self.origin(file, start + i, start + i + len, false);
                    match name.filter(|n| launch::is_env_name(n) || n.chars().all(|c| c.is_ascii_digit())) {
                        Some(name) => out.extend(self.lookup(name, None, state, true, at, raw)),
                        None => out.push(unknown_frag(raw, "is not read by engine-audit", false, true, at)),
                    }
                    i += len;
                    literal_from = i;
                }
                _ => i += 1,
            }
        }
        push_literal(&mut out, literal_from, bytes.len().min(text.len()));
        out
    }

    /// `$(dirname "$0")` and the like: the folder of the file being read, so
    /// `source "$(dirname "$0")/../lib.sh"` finds its file.
    pub(super) fn script_dir_substitution(&self, raw: &str, file: usize) -> Option<String> {
        let names_self = raw.contains("$0") || raw.contains("BASH_SOURCE");
        if !(raw.contains("dirname") && names_self) || raw.matches("$(").count() > 3 {
            return None;
        }
        let real = self.files[file].real.unwrap_or(0);
        let path = self.real_paths.get(real).cloned().flatten()?;
        Some(path.parent()?.display().to_string())
    }

    /// `${...}`: `${X}`, `${X:-d}`, `${X-d}`, `${X:=d}`, `${X:+alt}`, `${#X}`,
    /// `${A[@]}`, `${A[*]}`, `${A[i]}`, `${X,,}`, `${X^^}`; others are unknown.
    pub(super) fn expansion(&mut self, f: &File, file: usize, node: Node, state: &State, quoted: bool, word: Origin) -> Vec<Item> {
        let raw = &f.text[node.byte_range()];
        let at = self.node_origin(file, node);
        self.expansion_text(f, file, node, raw, at, state, quoted, word)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn expansion_text(
        &mut self,
        f: &File,
        file: usize,
        node: Node,
        raw: &str,
        at: Origin,
        state: &State,
        quoted: bool,
        word: Origin,
    ) -> Vec<Item> {
        let unknown = |why: &str| vec![unknown_frag(raw, why, !quoted, quoted, at)];
        let Some(inner) = raw.strip_prefix("${").and_then(|r| r.strip_suffix('}')) else { return unknown("is not read by engine-audit") };
        let (length, inner) = match inner.strip_prefix('#') {
            Some(rest) if !rest.is_empty() => (true, rest),
            _ => (false, inner),
        };
        let name_len = inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len())
            .max(usize::from(inner.starts_with(['@', '*', '#', '?', '$', '!'])));
        let (name, rest) = inner.split_at(name_len);
        if name.is_empty() || inner.starts_with('!') {
            return unknown("is an indirect expansion");
        }
        let (index, op) = match rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
            Some((index, op)) => (Some(index), op),
            None => (None, rest),
        };
        if length {
            let items = self.lookup(name, index.filter(|i| *i != "@" && *i != "*"), state, true, at, raw);
            let count = match (index, state.vars.get(name).map(|v| &*v.value)) {
                (Some("@" | "*"), Some(Value::Array(e))) => Some(e.len()),
                _ => known_text(&joined(items, at)).map(|t| t.chars().count()),
            };
            return match count {
                Some(n) => vec![Item::Frag(Frag::literal(n.to_string(), Origin { verbatim: false, ..at }, word, quoted))],
                None => unknown("has a length not known"),
            };
        }
        let value = self.lookup(name, index, state, quoted, at, raw);
        if op.is_empty() {
            return value;
        }
        // The operand: the nodes after the operator.
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        let op_pos = children.iter().position(|c| !c.is_named() && c.kind() != "${" && c.kind() != "[" && c.kind() != "]");
        let operand: Vec<Item> = match op_pos {
            Some(p) => children[p + 1..]
                .iter()
                .filter(|c| c.kind() != "}")
                .flat_map(|c| self.expand_in(f, file, *c, state, quoted, word))
                .collect(),
            None => Vec::new(),
        };
        let set = state.vars.contains_key(name);
        let text = known_text(&joined(value.clone(), at));
        let is_null = text.as_deref().map(str::is_empty);
        let unset_known = !set && !self.is_environment_input(name, state);
        let pick = |use_operand: Option<bool>| match use_operand {
            Some(true) => operand.clone(),
            Some(false) => value.clone(),
            None => unknown("comes from the environment or its default"),
        };
        match op {
            _ if op.starts_with(":-") || op.starts_with(":=") => pick(match is_null {
                Some(null) => Some(null),
                None if unset_known => Some(true),
                None => None,
            }),
            _ if op.starts_with('-') || op.starts_with('=') => pick(if set || unset_known { Some(!set) } else { None }),
            _ if op.starts_with(":+") => match is_null {
                Some(true) => Vec::new(),
                Some(false) => operand,
                None => unknown("is set by the environment or not"),
            },
            _ if op.starts_with('+') => match (set, unset_known) {
                (true, _) => operand,
                (false, true) => Vec::new(),
                _ => unknown("is set by the environment or not"),
            },
            ",," | "^^" => match text {
                Some(t) => {
                    let t = if op == ",," { t.to_lowercase() } else { t.to_uppercase() };
                    vec![Item::Frag(Frag { split: !quoted, ..Frag::literal(t, Origin { verbatim: false, ..at }, word, quoted) })]
                }
                None => unknown("comes from the environment"),
            },
            _ => unknown("uses an operator engine-audit does not evaluate"),
        }
    }

    /// Whether `name`'s value comes from the job's environment on this path.
    pub(super) fn is_environment_input(&self, name: &str, state: &State) -> bool {
        !state.vars.contains_key(name) && (self.unread_source || !self.script_vars.contains(name) || self.env_vars.contains(name))
    }

    /// The items `$name` / `${name[index]}` stands for.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn lookup(&self, name: &str, index: Option<&str>, state: &State, quoted: bool, at: Origin, raw: &str) -> Vec<Item> {
        let split = |frags: &Field| frags.iter().map(|fr| Item::Frag(Frag { split: !quoted, quoted, ..fr.clone() })).collect::<Vec<_>>();
        let elements = |elements: &[Field], star: bool| {
            let mut out = Vec::new();
            for (i, e) in elements.iter().enumerate() {
                if i > 0 {
                    if quoted && star {
                        out.push(Item::Frag(Frag::literal(" ".into(), Origin { verbatim: false, ..at }, at, true)));
                    } else {
                        out.push(Item::Break);
                    }
                }
                // An element standing for any number of elements (an unquoted
                // unknown expansion in the array's assignment, or paths that
                // disagree) stays any number of words in `"${A[@]}"`.
                out.extend(e.iter().map(|fr| {
                    let many = !star && fr.split && fr.unknown.is_some();
                    Item::Frag(Frag { split: !quoted || many, quoted, ..fr.clone() })
                }));
            }
            out
        };
        let positional = matches!(name, "@" | "*") || name.chars().all(|c| c.is_ascii_digit()) && name != "0";
        if positional || name == "#" {
            let Some(args) = &state.positional else {
                return vec![unknown_frag(raw, "is an argument of the script", !quoted || name == "@", quoted, at)];
            };
            return match name {
                "@" | "*" => elements(args, name == "*"),
                "#" => vec![Item::Frag(Frag::literal(args.len().to_string(), Origin { verbatim: false, ..at }, at, quoted))],
                n => n.parse::<usize>().ok().and_then(|i| args.get(i.wrapping_sub(1))).map(split).unwrap_or_default(),
            };
        }
        if name == "0" {
            return vec![Item::Frag(Frag::literal(self.real[0].path.clone(), Origin { verbatim: false, ..at }, at, quoted))];
        }
        // A variable whose whole value is unknown is pointed at where it is used.
        if let Some((Value::Str(frags), value_at)) = state.vars.get(name).map(|v| (&*v.value, &v.value_at)) {
            if let [only] = frags.as_slice() {
                if only.unknown.is_some() && only.origin == *value_at {
                    let why = only.unknown.clone().unwrap_or_default();
                    return vec![unknown_frag(raw, &why, !quoted || index == Some("@"), quoted, at)];
                }
            }
        }
        match state.vars.get(name).map(|v| &*v.value) {
            Some(Value::Str(frags)) => match index {
                None | Some("0") | Some("@") | Some("*") => split(frags),
                Some(_) => Vec::new(),
            },
            Some(Value::Array(items)) => match index {
                Some("@") => elements(items, false),
                Some("*") => elements(items, true),
                Some(i) => match i.parse::<usize>() {
                    Ok(i) => items.get(i).map(split).unwrap_or_default(),
                    Err(_) => vec![unknown_frag(raw, "is an element at an index not known", !quoted, quoted, at)],
                },
                None => items.first().map(split).unwrap_or_default(),
            },
            None if !self.is_environment_input(name, state) => Vec::new(),
            None => {
                let many = !quoted || index == Some("@");
                let why = if self.unread_source && self.script_vars.contains(name) {
                    "comes from the environment or a sourced file that was not read"
                } else {
                    "comes from the environment"
                };
                vec![unknown_frag(raw, why, many, quoted, at)]
            }
        }
    }
}
