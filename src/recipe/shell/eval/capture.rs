//! `X=$(f ...)`: what a function the script defines prints, read as the
//! value of the variable. The call runs like any other (its branches fork the
//! states) with its output collected per state from `echo`; a command whose
//! output is not known makes that part of the value unknown. A command
//! substitution runs in a subshell: the variables it sets do not come back.

use super::*;

/// Commands that print nothing on stdout (or whose effect is only their
/// status), so they leave the collected output as it is.
const SILENT: &[&str] = &[
    "[", "[[", "test", "true", "false", ":", "set", "shopt", "cd", "pushd", "popd", "export", "local", "declare", "typeset", "readonly",
    "unset", "shift", "return", "exit", "sleep", "mkdir", "rm", "touch", "wait", "trap", "source", ".", "eval",
];

impl Interp<'_> {
    /// An assignment statement: `X=$(f ...)` with `f` a function of the script
    /// gives `X` what `f` prints on each path through it; any other value is
    /// [`Interp::assign`].
    #[allow(clippy::too_many_arguments)]
    pub(super) fn assign_statement(
        &mut self,
        f: &File,
        file: usize,
        node: Node,
        state: State,
        export: bool,
        local: bool,
        depth: usize,
    ) -> Vec<State> {
        let call = node.child_by_field_name("value").and_then(|v| self.substituted_call(f, v));
        let name = node.child_by_field_name("name").filter(|n| n.kind() == "variable_name").map(|n| f.text[n.byte_range()].to_string());
        let (Some(call), Some(name)) = (call, name) else { return vec![self.assign(f, file, node, state, export, local)] };
        if depth >= MAX_DEPTH {
            return vec![self.assign(f, file, node, state, export, local)];
        }
        let assigned = self.assign(f, file, node, state.clone(), export, local);
        let inner = State { out: Some(Vec::new()), ..state };
        let printed = self.command(f, file, call, inner, depth);
        if printed.is_empty() {
            // Every path through it exits: nothing is known of what it printed.
            return vec![assigned];
        }
        printed
            .into_iter()
            .map(|p| {
                let mut s = assigned.clone();
                s.path = p.path;
                if let Some(var) = s.vars.get(&name).cloned() {
                    let value = Value::Str(trim_newlines(p.out.unwrap_or_default()));
                    s.vars.insert(name.clone(), Var { value: Shared::new(value), ..var });
                }
                s
            })
            .collect()
    }

    /// The command of `$(f ...)` / `"$(f ...)"` when it is one call of a
    /// function the script has defined by then.
    fn substituted_call<'t>(&self, f: &File, value: Node<'t>) -> Option<Node<'t>> {
        let sub = match value.kind() {
            "command_substitution" => value,
            "string" if value.named_child_count() == 1 => value.named_child(0).filter(|c| c.kind() == "command_substitution")?,
            _ => return None,
        };
        let children = named_children(sub);
        let [command] = children.as_slice() else { return None };
        let name = command.child_by_field_name("name")?;
        (command.kind() == "command" && self.functions.contains_key(&f.text[name.byte_range()])).then_some(*command)
    }

    /// Inside `$(...)`: `echo` adds its words to the output; a command that
    /// may print something not known makes the output partly unknown. `true`
    /// when the command was an `echo` (nothing more to do for it).
    pub(super) fn collect_output(&mut self, file: usize, node: Node, words: &[Field], state: &mut State) -> bool {
        let Some(out) = state.out.as_mut() else { return false };
        let name = words.first().and_then(|w| known_text(w));
        match name.as_deref() {
            Some("echo") => {
                let mut args = &words[1..];
                let mut newline = true;
                while let Some(option) =
                    args.first().and_then(|w| known_text(w)).filter(|o| matches!(o.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                {
                    newline &= !option.contains('n');
                    args = &args[1..];
                }
                let at = self.node_origin(file, node);
                for (i, field) in args.iter().enumerate() {
                    if i > 0 {
                        out.push(Frag::literal(" ".into(), Origin { verbatim: false, ..at }, at, true));
                    }
                    out.extend(field.iter().map(|fr| Frag { split: false, quoted: true, ..fr.clone() }));
                }
                if newline {
                    out.push(Frag::literal("\n".into(), Origin { verbatim: false, ..at }, at, true));
                }
                true
            }
            Some(n) if SILENT.contains(&n) || self.functions.contains_key(n) => false,
            _ => {
                out.push(tainted(self.node_origin(file, node)));
                false
            }
        }
    }
}

/// Output nobody can know (a command's, inside `$(...)`).
pub(super) fn tainted(at: Origin) -> Frag {
    Frag {
        text: "$(...)".into(),
        unknown: Some("is printed by a command inside `$(...)`".into()),
        split: false,
        quoted: true,
        origin: at,
        word: at,
    }
}

/// `$(...)` drops the trailing newlines of what was printed.
fn trim_newlines(mut frags: Vec<Frag>) -> Vec<Frag> {
    while let Some(last) = frags.last_mut() {
        if last.unknown.is_some() {
            break;
        }
        let kept = last.text.trim_end_matches('\n').len();
        if kept > 0 {
            last.text.truncate(kept);
            last.origin.verbatim = false;
            break;
        }
        frags.pop();
    }
    frags
}

/// Whether a redirection sends stdout elsewhere (`>&2`, `> file`, `&>/dev/null`).
pub(super) fn stdout_redirected(f: &File, node: Node) -> bool {
    named_children(node).into_iter().filter(|c| c.kind() == "file_redirect").any(|r| {
        let text = f.text[r.byte_range()].trim_start();
        text.starts_with('>') || text.starts_with("1>") || text.starts_with("&>")
    })
}
