//! Branches and loops: `if`/`elif`/`else`, `case`, `test && ...` fork the
//! states on the test they evaluate (or take the one side a known value
//! decides); a loop's body is read once.

use super::*;

impl Interp<'_> {
    /// `a && b`, `a || b`: a test on the left is a condition; any other command
    /// is taken to succeed.
    pub(super) fn list(&mut self, f: &File, file: usize, node: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        let parts = named_children(node);
        let op = (0..node.child_count()).filter_map(|i| node.child(i)).find(|c| matches!(c.kind(), "&&" | "||")).map(|c| c.kind());
        let (Some(left), Some(right), Some(op)) = (parts.first(), parts.last(), op) else {
            return self.block(f, file, &parts, states, depth);
        };
        if !is_test(f, *left) {
            return self.block(f, file, &parts, states, depth);
        }
        let mut out = Vec::new();
        for state in states {
            let cond = self.condition(f, file, &[*left], &state);
            let (yes, no) = fork(state, cond);
            let (run, skip) = if op == "&&" { (yes, no) } else { (no, yes) };
            if let Some(run) = run {
                out.extend(self.statement(f, file, *right, vec![run], depth));
            }
            out.extend(skip);
        }
        out
    }

    pub(super) fn if_statement(&mut self, f: &File, file: usize, node: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        // (condition statements, body statements) per `if`/`elif`, then the `else` body.
        let mut clauses: Vec<(Vec<Node>, Vec<Node>)> = Vec::new();
        let mut otherwise: Option<Vec<Node>> = None;
        clauses.push(split_then(node));
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "elif_clause" => clauses.push(split_then(child)),
                "else_clause" => otherwise = Some(named_children(child).into_iter().filter(|c| c.kind() != "comment").collect()),
                _ => {}
            }
        }
        let mut out = Vec::new();
        let mut remaining = states;
        for (cond, body) in clauses {
            let mut next = Vec::new();
            for state in remaining {
                let c = self.condition(f, file, &cond, &state);
                let (yes, no) = fork(state, c);
                if let Some(yes) = yes {
                    out.extend(self.block(f, file, &body, vec![yes], depth));
                }
                next.extend(no);
            }
            remaining = next;
        }
        match otherwise {
            Some(body) => out.extend(self.block(f, file, &body, remaining, depth)),
            None => out.extend(remaining),
        }
        out
    }

    pub(super) fn case_statement(&mut self, f: &File, file: usize, node: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        let Some(value) = node.child_by_field_name("value") else { return states };
        let var = plain_variable(f, value);
        let items: Vec<Node> = named_children(node).into_iter().filter(|c| c.kind() == "case_item").collect();
        let mut out = Vec::new();
        for state in states {
            let subject = known_text(&joined(self.expand(f, file, value, &state, false), self.node_origin(file, value)));
            let mut remaining = vec![state];
            for item in &items {
                let mut cursor = item.walk();
                let patterns: Vec<Node> = item.children_by_field_name("value", &mut cursor).collect();
                let body: Vec<Node> = named_children(*item)
                    .into_iter()
                    .filter(|c| !patterns.iter().any(|p| p.id() == c.id()) && c.kind() != "comment")
                    .collect();
                let mut next = Vec::new();
                for s in remaining {
                    let texts: Vec<Option<String>> = patterns
                        .iter()
                        .map(|p| known_text(&joined(self.expand(f, file, *p, &s, true), self.node_origin(file, *p))))
                        .collect();
                    let cond = match (&subject, texts.iter().cloned().collect::<Option<Vec<String>>>()) {
                        (Some(subject), Some(ps)) => Cond::Known(ps.iter().any(|p| words::glob_match(p, subject))),
                        (None, Some(ps)) if ps.iter().any(|p| p == "*") => Cond::Known(true),
                        (None, Some(ps)) if ps.iter().all(|p| !p.contains(['*', '?', '['])) && var.is_some() => {
                            Cond::Atom(Atom { test: Test::Is { var: var.clone().unwrap_or_default(), values: ps }, holds: true })
                        }
                        _ => Cond::Atom(Atom {
                            test: Test::Text(format!(
                                "{} matches {}",
                                squash(&f.text[value.byte_range()]),
                                patterns.iter().map(|p| squash(&f.text[p.byte_range()])).collect::<Vec<_>>().join("|")
                            )),
                            holds: true,
                        }),
                    };
                    let (yes, no) = fork(s, cond);
                    if let Some(yes) = yes {
                        out.extend(self.block(f, file, &body, vec![yes], depth));
                    }
                    next.extend(no);
                }
                remaining = next;
            }
            out.extend(remaining);
        }
        out
    }

    /// A loop's body is read once, with the loop variable unknown (the value it
    /// takes differs per iteration). Bash runs it any number of times (a
    /// `while (( X < CONC ))` doubling `X` ends on a value per job), so what
    /// the body changes is unknown after the loop: one pass would claim the
    /// value after exactly one iteration on every path.
    pub(super) fn loop_statement(&mut self, f: &File, file: usize, node: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        let Some(body) = node.child_by_field_name("body") else { return states };
        let before = states.clone();
        let after = self.loop_body(f, file, node, body, states, depth);
        let line = self.span_of(self.node_origin(file, node)).line;
        after.into_iter().map(|s| forget_loop_changes(s, &before, line)).collect()
    }

    fn loop_body(&mut self, f: &File, file: usize, node: Node, body: Node, states: Vec<State>, depth: usize) -> Vec<State> {
        let states = match node.child_by_field_name("variable") {
            Some(var) => {
                let name = f.text[var.byte_range()].to_string();
                let at = self.node_origin(file, var);
                states
                    .into_iter()
                    .map(|mut s| {
                        let why = format!("the loop variable of line {}", self.span_of(at).line);
                        let frag = Frag { text: format!("${name}"), unknown: Some(why), split: false, quoted: false, origin: at, word: at };
                        s.vars.insert(
                            name.clone(),
                            Var {
                                value: Shared::new(Value::Str(vec![frag])),
                                exported: false,
                                maybe_unset: false,
                                name_at: at,
                                value_at: at,
                            },
                        );
                        s
                    })
                    .collect()
            }
            None => states,
        };
        self.statement(f, file, body, states, depth)
    }

    // ---- conditions ---------------------------------------------------------------------

    pub(super) fn condition(&mut self, f: &File, file: usize, nodes: &[Node], state: &State) -> Cond {
        let [node] = nodes else {
            let text = nodes.iter().map(|n| squash(&f.text[n.byte_range()])).collect::<Vec<_>>().join("; ");
            return Cond::Atom(Atom { test: Test::Text(text), holds: true });
        };
        let node = *node;
        let text_atom = || Cond::Atom(Atom { test: Test::Text(squash(&f.text[node.byte_range()])), holds: true });
        match node.kind() {
            "negated_command" => match node.named_child(0) {
                Some(inner) => self.condition(f, file, &[inner], state).negate(),
                None => text_atom(),
            },
            // `(( C > 2048 ))` compares numbers: its words are arithmetic, not
            // text (`C` is the variable, not the letter).
            "compound_statement" if is_arithmetic_test(f, node) => {
                let raw = f.text[node.byte_range()].trim();
                let inner = raw.trim_start_matches("((").trim_end_matches("))");
                let at = self.node_origin(file, node);
                let mut value_of = |name: &str| -> Option<i64> {
                    let items = self.lookup(name, None, state, true, at, name);
                    known_text(&joined(items, at))?.trim().parse().ok()
                };
                match words::arithmetic(inner, &mut value_of) {
                    Some(v) => Cond::Known(v != 0),
                    None => text_atom(),
                }
            }
            "test_command" => match node.named_child(0) {
                Some(inner) if node.named_child_count() == 1 => self.test_expression(f, file, inner, state).unwrap_or_else(text_atom),
                _ => text_atom(),
            },
            "command" => {
                // `test X = y` / `[ X = y ]` written as a command.
                let name = node.child_by_field_name("name").map(|n| &f.text[n.byte_range()]);
                let args: Vec<Node> = named_children(node).into_iter().filter(|c| c.kind() != "command_name").collect();
                match (name, args.as_slice()) {
                    (Some("true"), []) => Cond::Known(true),
                    (Some("false"), []) => Cond::Known(false),
                    (Some("test"), [l, op, r]) => self.compare(f, file, *l, &f.text[op.byte_range()], *r, state).unwrap_or_else(text_atom),
                    _ => text_atom(),
                }
            }
            _ => text_atom(),
        }
    }

    pub(super) fn test_expression(&mut self, f: &File, file: usize, node: Node, state: &State) -> Option<Cond> {
        match node.kind() {
            "binary_expression" => {
                let left = node.child_by_field_name("left")?;
                let right = node.child_by_field_name("right")?;
                let op = node.child_by_field_name("operator").map(|o| &f.text[o.byte_range()])?;
                match op {
                    "&&" | "||" => {
                        let (a, b) = (self.test_expression(f, file, left, state)?, self.test_expression(f, file, right, state)?);
                        match (a, b, op) {
                            (Cond::Known(x), Cond::Known(y), "&&") => Some(Cond::Known(x && y)),
                            (Cond::Known(x), Cond::Known(y), _) => Some(Cond::Known(x || y)),
                            (Cond::Known(false), _, "&&") | (_, Cond::Known(false), "&&") => Some(Cond::Known(false)),
                            (Cond::Known(true), _, "||") | (_, Cond::Known(true), "||") => Some(Cond::Known(true)),
                            (Cond::Known(true), other, "&&") | (other, Cond::Known(true), "&&") => Some(other),
                            (Cond::Known(false), other, _) | (other, Cond::Known(false), _) => Some(other),
                            _ => None,
                        }
                    }
                    _ => self.compare(f, file, left, op, right, state),
                }
            }
            "unary_expression" => {
                let op = node.child(0).map(|o| &f.text[o.byte_range()])?;
                let operand = node.named_children(&mut node.walk()).last()?;
                let value = known_text(&joined(self.expand(f, file, operand, state, true), self.node_origin(file, operand)));
                match (op, value) {
                    ("-n", Some(v)) => Some(Cond::Known(!v.is_empty())),
                    ("-z", Some(v)) => Some(Cond::Known(v.is_empty())),
                    ("!", _) => None,
                    _ => None,
                }
            }
            "parenthesized_expression" => self.test_expression(f, file, node.named_child(0)?, state),
            _ => None,
        }
    }

    pub(super) fn compare(&mut self, f: &File, file: usize, left: Node, op: &str, right: Node, state: &State) -> Option<Cond> {
        let l = known_text(&joined(self.expand(f, file, left, state, true), self.node_origin(file, left)));
        let r = known_text(&joined(self.expand(f, file, right, state, true), self.node_origin(file, right)));
        let equal = match op {
            "==" | "=" => true,
            "!=" => false,
            "-eq" | "-ne" => op == "-eq",
            "-lt" | "-le" | "-gt" | "-ge" => {
                let (a, b) = (l?.trim().parse::<i64>().ok()?, r?.trim().parse::<i64>().ok()?);
                return Some(Cond::Known(match op {
                    "-lt" => a < b,
                    "-le" => a <= b,
                    "-gt" => a > b,
                    _ => a >= b,
                }));
            }
            _ => return None,
        };
        let numeric = op.starts_with('-');
        if let (Some(l), Some(r)) = (&l, &r) {
            let same = if numeric { l.trim().parse::<i64>().ok()? == r.trim().parse::<i64>().ok()? } else { words::glob_match(r, l) };
            return Some(Cond::Known(same == equal));
        }
        let (var, value) = match (plain_variable(f, left), r, plain_variable(f, right), l) {
            (Some(var), Some(value), _, _) | (_, _, Some(var), Some(value)) if !value.contains(['*', '?', '[']) => (var, value),
            _ => return None,
        };
        Some(Cond::Atom(Atom { test: Test::Is { var, values: vec![value] }, holds: equal }))
    }
}

/// `after` (a state past one pass of a loop's body) with each variable the
/// body changed unknown. What it changed is what differs from the state it
/// came from: of the states before the loop, the one it differs least from.
fn forget_loop_changes(mut after: State, before: &[State], line: u32) -> State {
    let Some(changed) = before.iter().map(|b| after.vars.differing(&b.vars)).min_by_key(Vec::len) else { return after };
    for name in changed {
        let Some(var) = after.vars.get(&name).cloned() else { continue };
        let why = format!("is changed in the loop of line {line}, run a number of times not known");
        after.vars.insert(name.clone(), Var { value: Shared::new(unknown_value(&name, &why, var.value_at)), ..var });
    }
    after
}
