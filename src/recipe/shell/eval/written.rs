//! Files a script writes with a here-document (`cat > cfg.yml << EOF ...`,
//! `cat << EOF >> cfg.yml`): their content on each path, kept as a value of
//! the state, so a launch that hands the file to the engine
//! (`trtllm-serve ... --config cfg.yml`) can be audited with the text the
//! engine reads. An expansion in the body is what bash puts there on that
//! path: known, or unknown with why.
//!
//! The content lives in the state's variables under a name no shell variable
//! can have ([`WRITTEN`] + the path as written after expansion), so paths fork,
//! join and merge past the cap on it as on any variable: content that differs
//! between merged paths is unknown, never one path's text.

use super::*;

/// The prefix of a written file's name among the state's variables: a `>`
/// and a blank cannot start a shell name, and the name reads as what it is
/// where a note lists it (`> dsr1-fp4.yml`).
const WRITTEN: &str = "> ";

/// Whether a name among a state's variables is a written file's.
pub(super) fn is_written(name: &str) -> bool {
    name.starts_with(WRITTEN)
}

/// `cat > FILE << EOF` (the two redirections in either order, `>>` to
/// append): its here-document, whether it appends, and the destination word.
/// Syntax only, so that what `facts` counts as a write is what runs as one.
pub(super) struct HeredocWrite<'t> {
    pub heredoc: Node<'t>,
    pub append: bool,
    pub destination: Node<'t>,
}

/// The write a `redirected_statement` makes, if it is one: `cat` with no
/// operand but `-` copies its stdin, the here-document, to its stdout.
pub(super) fn heredoc_write<'t>(text: &str, node: Node<'t>) -> Option<HeredocWrite<'t>> {
    let body = node.child_by_field_name("body").filter(|b| b.kind() == "command")?;
    let program = body.child_by_field_name("name").map(|n| &text[n.byte_range()]);
    let operands = named_children(body).into_iter().filter(|c| c.kind() != "command_name" && &text[c.byte_range()] != "-").count();
    if program != Some("cat") || operands > 0 {
        return None;
    }
    let heredocs: Vec<Node> = named_children(node).into_iter().filter(|c| c.kind() == "heredoc_redirect").collect();
    let [heredoc] = heredocs[..] else { return None };
    let redirects = named_children(node).into_iter().chain(named_children(heredoc)).filter(|c| c.kind() == "file_redirect");
    // The last redirection of stdout is where the text goes.
    let (append, destination) = redirects.filter_map(|r| output_redirect(text, r)).next_back()?;
    Some(HeredocWrite { heredoc, append, destination })
}

/// A file a script wrote, as a launch that names it finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrittenFile {
    /// The path as the script names it (after expansion).
    pub path: String,
    /// The text bash writes, with each part not known replaced by a
    /// placeholder (see [`Piece::unknown`]).
    pub text: String,
    /// Where each part of `text` is written in the script, in order.
    pub pieces: Vec<Piece>,
}

/// A part of a written file's text and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Byte range in [`WrittenFile::text`].
    pub start: usize,
    pub end: usize,
    /// Where it is written in the script (or a file it sources).
    pub span: Span,
    /// The text is exactly the bytes of `span`.
    pub verbatim: bool,
    /// For a value not known: the expansion as written (`$MOE_BACKEND`) and
    /// why it is not known; `text` holds a placeholder there.
    pub unknown: Option<(String, String)>,
}

/// The text standing for the `n`th value not known in a written file: a
/// plain YAML scalar no recipe writes.
pub(crate) fn placeholder(n: usize) -> String {
    format!("{PLACEHOLDER}{n}__")
}

/// How every placeholder starts.
pub(crate) const PLACEHOLDER: &str = "__engine_audit_unknown_";

impl Interp<'_> {
    /// `cat > FILE << EOF` / `cat << EOF >> FILE` (any order of the two
    /// redirections): the state with the file's content written or appended.
    /// Any other statement leaves the state as it is. A destination whose
    /// name is not known writes no file the launch can be matched with.
    pub(super) fn write_heredoc(&mut self, f: &File, file: usize, node: Node, mut state: State) -> State {
        let Some(HeredocWrite { heredoc, append, destination }) = heredoc_write(&f.text, node) else { return state };
        let at = self.node_origin(file, destination);
        let Some(path) = known_text(&joined(self.expand(f, file, destination, &state, false), at)) else { return state };
        let content = self.heredoc_content(f, file, heredoc, &state);
        let name = format!("{WRITTEN}{path}");
        let statement_at = self.node_origin(file, node);
        let value = match (append, state.vars.get(&name)) {
            (false, _) => content,
            (true, Some(old)) => match &*old.value {
                Value::Str(frags) => frags.iter().cloned().chain(content).collect(),
                Value::Array(_) => content,
            },
            // Appending to a file the script did not write: what it held before is not known.
            (true, None) => {
                let mut frags = vec![Frag {
                    text: path.clone(),
                    unknown: Some(format!("is what `{path}` held before the script appended to it")),
                    split: false,
                    quoted: true,
                    origin: statement_at,
                    word: statement_at,
                }];
                frags.extend(content);
                frags
            }
        };
        let var = Var { value: Shared::new(Value::Str(value)), exported: false, maybe_unset: false, name_at: at, value_at: statement_at };
        state.vars.insert(name, var);
        state
    }

    /// The text a here-document gives, as bash expands it: with a quoted
    /// delimiter (`<< 'EOF'`) as written; otherwise with its expansions (as
    /// inside double quotes) and `\$`, `` \` ``, `\\` and `\<newline>`
    /// unescaped. `<<-` strips each line's leading tabs.
    fn heredoc_content(&mut self, f: &File, file: usize, heredoc: Node, state: &State) -> Vec<Frag> {
        let children = named_children(heredoc);
        let quoted = children.iter().find(|c| c.kind() == "heredoc_start").is_some_and(|s| {
            let delimiter = &f.text[s.byte_range()];
            delimiter.contains(['\'', '"', '\\'])
        });
        let strip_tabs = (0..heredoc.child_count()).filter_map(|i| heredoc.child(i)).any(|c| c.kind() == "<<-");
        let Some(body) = children.iter().find(|c| c.kind() == "heredoc_body") else { return Vec::new() };
        let word = self.node_origin(file, *body);
        let mut out = Vec::new();
        let mut last = body.start_byte();
        if !quoted {
            for child in named_children(*body) {
                if !matches!(child.kind(), "expansion" | "simple_expansion" | "command_substitution" | "arithmetic_expansion") {
                    continue;
                }
                self.heredoc_literal(f, file, last, child.start_byte(), strip_tabs, false, word, &mut out);
                out.extend(joined(self.expand_in(f, file, child, state, true, word), word));
                last = child.end_byte();
            }
        }
        self.heredoc_literal(f, file, last, body.end_byte(), strip_tabs, quoted, word, &mut out);
        out
    }

    /// Literal here-document text `start..end`, a piece per line so that each
    /// keeps its exact place in the script.
    #[allow(clippy::too_many_arguments)]
    fn heredoc_literal(
        &self,
        f: &File,
        file: usize,
        start: usize,
        end: usize,
        strip_tabs: bool,
        as_written: bool,
        word: Origin,
        out: &mut Vec<Frag>,
    ) {
        let mut at = start;
        while at < end {
            let line_end = f.text[at..end].find('\n').map_or(end, |i| at + i + 1);
            let mut from = at;
            if strip_tabs && (at == 0 || f.text.as_bytes()[at - 1] == b'\n') {
                from += f.text[at..line_end].len() - f.text[at..line_end].trim_start_matches('\t').len();
            }
            let raw = &f.text[from..line_end];
            let text = if as_written { raw.to_string() } else { unescape_heredoc(raw) };
            if !text.is_empty() {
                let verbatim = text == raw;
                out.push(Frag::literal(text, self.origin(file, from, line_end, verbatim), word, true));
            }
            at = line_end;
        }
    }

    /// The files a launch's words name (a word that is the path, or the part
    /// after `=` of `--opt=path`) that the script wrote on this path.
    pub(super) fn files_named(&self, state: &State, argv: &[ArgToken]) -> Vec<WrittenFile> {
        let words = argv.iter().filter_map(|t| t.value.value());
        let mut paths: Vec<&str> = words.flat_map(|w| std::iter::once(w.as_str()).chain(w.split_once('=').map(|(_, p)| p))).collect();
        paths.sort_unstable();
        paths.dedup();
        paths
            .into_iter()
            .filter_map(|path| match state.vars.get(&format!("{WRITTEN}{path}")).map(|v| &*v.value) {
                Some(Value::Str(frags)) => Some(self.written_file(path, frags)),
                _ => None,
            })
            .collect()
    }

    fn written_file(&self, path: &str, frags: &[Frag]) -> WrittenFile {
        let mut text = String::new();
        let mut pieces = Vec::new();
        let mut unknowns = 0;
        for frag in frags {
            let start = text.len();
            let unknown = frag.unknown.as_ref().map(|why| {
                text.push_str(&placeholder(unknowns));
                unknowns += 1;
                (frag.text.clone(), why.clone())
            });
            if unknown.is_none() {
                text.push_str(&frag.text);
            }
            pieces.push(Piece { start, end: text.len(), span: self.span_of(frag.origin), verbatim: frag.origin.verbatim, unknown });
        }
        WrittenFile { path: path.to_string(), text, pieces }
    }
}

/// `> FILE`, `>> FILE`, `>| FILE` on stdout: (appends, the destination).
fn output_redirect<'t>(text: &str, redirect: Node<'t>) -> Option<(bool, Node<'t>)> {
    if let Some(fd) = redirect.child_by_field_name("descriptor") {
        if &text[fd.byte_range()] != "1" {
            return None;
        }
    }
    let op = (0..redirect.child_count()).filter_map(|i| redirect.child(i)).find(|c| !c.is_named())?;
    let append = match op.kind() {
        ">" | ">|" => false,
        ">>" => true,
        _ => return None,
    };
    Some((append, redirect.child_by_field_name("destination")?))
}

/// bash's unescaping of an unquoted here-document's text: a backslash keeps
/// its meaning only before `$`, `` ` ``, `\` and a newline.
fn unescape_heredoc(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('$' | '`' | '\\')) => out.push(chars.next().unwrap_or('\\')),
            ('\\', Some('\n')) => {
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}
