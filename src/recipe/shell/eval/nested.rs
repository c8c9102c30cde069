//! What nests: function calls (inlined, with `local` and `$1...`), `source`
//! of files in the script's repository, `eval` and `bash -c` of known strings.
//! Each is at most [`MAX_DEPTH`] deep.

use super::*;

impl Interp<'_> {
    pub(super) fn call(&mut self, name: String, file: usize, node: Node, words: &[Field], state: State, depth: usize) -> Vec<State> {
        let Some(&(def_file, start, end)) = self.functions.get(&name) else { return vec![state] };
        if depth >= MAX_DEPTH {
            let at = self.line(file, node);
            let why = format!("{at}: `{name}` is called more than {MAX_DEPTH} levels deep; not followed");
            // A launch in it is not read: said in the report, not only in a note.
            match launch::mentions_launcher(&self.files[def_file].text[start..end]) {
                Some((engine, launcher)) => {
                    let span = self.span_of(self.node_origin(file, node));
                    let run = Run {
                        path: state.path.clone(),
                        argv: None,
                        env: Vec::new(),
                        exports: self.exported_env(&state),
                        dynamic: Some(why),
                        files: Vec::new(),
                    };
                    self.record(engine, launcher, span, run);
                }
                None => self.note(why, Some(self.node_origin(file, node))),
            }
            return vec![state];
        }
        let def = self.files[def_file].clone();
        let Some(body) = def.tree.root_node().descendant_for_byte_range(start, end).and_then(|n| {
            std::iter::successors(Some(n), |n| n.parent())
                .find(|n| n.kind() == "function_definition")
                .and_then(|n| n.child_by_field_name("body"))
        }) else {
            return vec![state];
        };
        // A function that reads variables named by its arguments (`${!name}`,
        // `check_env_vars MAX_MODEL_LEN TP`) checks that the job sets them: they
        // come from the job's environment, even where the script also assigns them.
        if def.text[start..end].contains("${!") {
            for name in words[1..].iter().filter_map(|w| known_text(w)).filter(|n| launch::is_env_name(n)) {
                self.env_vars.insert(name);
            }
        }
        let saved = state.positional.clone();
        let mut inner = state;
        inner.positional = Some(words[1..].to_vec());
        inner.frames.push(Vec::new());
        let out = if self.runs_last(file, node, depth) {
            self.script_block(&def, def_file, body, vec![inner], depth + 1)
        } else {
            self.statement(&def, def_file, body, vec![inner], depth + 1)
        };
        out.into_iter()
            .map(|mut s| {
                if let Some(frame) = s.frames.pop() {
                    for (name, previous) in frame.into_iter().rev() {
                        match previous {
                            Some(v) => s.vars.insert(name, v),
                            None => s.vars.remove(&name),
                        };
                    }
                }
                s.positional = saved.clone();
                s.returned = false;
                s
            })
            .collect()
    }

    /// `source FILE` / `. FILE`: relative to the script's folder, else to the
    /// repository root; never outside the repository the script is in.
    pub(super) fn source(&mut self, file: usize, node: Node, words: &[Field], state: State, depth: usize) -> Vec<State> {
        let at = self.line(file, node);
        let origin = self.node_origin(file, node);
        let beside = words.get(1).and_then(|w| self.beside_script(file, w));
        if let Some((dir, name)) = &beside {
            let message = format!("{at}: `source {dir}/{name}`: `{dir}` is not known; read {name} from the script's own folder");
            let note = Note::info(message, Some(self.span_of(origin)));
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
        let Some(name) = words.get(1).and_then(|w| known_text(w)).or(beside.map(|(_, name)| name)) else {
            let raw = words.get(1).and_then(|w| words::token(w, &self.real)).map(|t| t.raw).unwrap_or_default();
            self.source_not_read(format!("{at}: `source {raw}`: the file's name is not known; what it sets is not read"), Some(origin));
            return vec![state];
        };
        if depth >= MAX_DEPTH {
            self.source_not_read(format!("{at}: `source {name}` nested more than {MAX_DEPTH} levels deep; not read"), Some(origin));
            return vec![state];
        }
        let path = match self.resolve_source(file, &name) {
            Ok(p) => p,
            Err(why) => {
                self.source_not_read(format!("{at}: `source {name}`: {why}; what it sets is not read"), Some(origin));
                return vec![state];
            }
        };
        let text = match std::fs::metadata(&path) {
            Ok(m) if m.is_file() && m.len() <= crate::recipe::MAX_RECIPE_BYTES => std::fs::read_to_string(&path).map_err(|e| e.to_string()),
            Ok(_) => Err("not a regular file of at most 4 MiB".to_string()),
            Err(e) => Err(e.to_string()),
        };
        self.looked_at.borrow_mut().push(super::LookedAt::Text { path: path.clone(), digest: super::text_digest(&path) });
        let text = match text {
            Ok(t) if !t.contains('\0') => t,
            Ok(_) => {
                self.source_not_read(format!("{at}: `source {name}`: not a text file; not read"), Some(origin));
                return vec![state];
            }
            Err(e) => {
                self.source_not_read(format!("{at}: `source {name}`: {e}; what it sets is not read"), Some(origin));
                return vec![state];
            }
        };
        let shown = self.shown_path(&path);
        let real = self.real.len();
        let Some(sourced::Sourced { tree, names, facts }) = sourced::parse(&path, &text, self.parser) else { return vec![state] };
        self.real.push(SourceText::new(shown, text.clone()));
        self.real_paths.push(Some(path));
        let read = File { tree, text, map: None, fallback: None, real: Some(real), unknown: Vec::new(), facts: Some(facts) };
        let id = self.add_file_with(read, &names);
        if self.files[id].tree.root_node().has_error() {
            self.note(format!("{at}: `source {name}`: shell syntax error in it; commands around it may be missed"), Some(origin));
        }
        let last = self.runs_last(file, node, depth);
        self.exec_file(id, vec![state], depth + 1, last)
    }

    /// `source $DIR/env.sh` where only the folder is not known (a mount the job
    /// sets) and the script's own folder has that file: the folder's variable
    /// and the file's name, to read it from there. Scripts deployed together
    /// are sourced from where they are deployed together.
    pub(super) fn beside_script(&self, file: usize, word: &Field) -> Option<(String, String)> {
        let split = word.iter().position(|f| f.unknown.is_none())?;
        let (dir, rest) = word.split_at(split);
        let rest = known_text(rest)?;
        let name = rest.strip_prefix('/')?;
        if dir.is_empty() || name.is_empty() || name.contains("..") || name.starts_with('/') {
            return None;
        }
        let real = self.files[file].real.unwrap_or(0);
        let script = self.real_paths.get(real).cloned().flatten()?;
        let beside = script.parent()?.join(name);
        let found = beside.is_file();
        self.looked_at.borrow_mut().push(super::LookedAt::IsFile { path: beside, found });
        found.then(|| (dir.iter().map(|f| f.text.as_str()).collect(), name.to_string()))
    }

    /// How a sourced file is named in notes and spans: next to the script's path
    /// as the user gave it.
    pub(super) fn shown_path(&self, path: &FsPath) -> String {
        match (&self.root, self.real_paths[0].as_ref()) {
            (Some(root), Some(script)) => {
                let real_root = root.canonicalize().unwrap_or(root.clone());
                let rel = path.strip_prefix(&real_root).unwrap_or(path);
                let script_rel = script.canonicalize().ok().and_then(|s| s.strip_prefix(&real_root).ok().map(FsPath::to_path_buf));
                // The script's path as given ends with its path in the repository.
                match script_rel.and_then(|r| self.real[0].path.strip_suffix(&r.display().to_string()).map(str::to_string)) {
                    Some(prefix) => format!("{prefix}{}", rel.display()),
                    None => path.display().to_string(),
                }
            }
            _ => path.display().to_string(),
        }
    }

    /// A `source` whose file is not read: say so, and from here on a variable
    /// the script assigns elsewhere is no longer empty where unset: the unread
    /// file may set it (`setup_eval_context` in a library that did not resolve).
    fn source_not_read(&mut self, message: String, origin: Option<Origin>) {
        self.note(message, origin);
        self.unread_source = true;
    }

    pub(super) fn resolve_source(&self, file: usize, name: &str) -> Result<PathBuf, String> {
        let real = self.files[file].real.unwrap_or(0);
        let Some(script) = self.real_paths.get(real).cloned().flatten().or_else(|| self.real_paths[0].clone()) else {
            return Err("the script is not read from disk".into());
        };
        let Some(root) = &self.root else { return Err("the script is in no repository or folder it could be read from".into()) };
        let dir = script.parent().map(FsPath::to_path_buf).unwrap_or_default();
        // A relative name is read as bash reads it too, from the working
        // folder: `$0` is the script's path as the user gave it, so
        // `$(dirname "$0")/lib.sh` names the file from there.
        let candidates = if FsPath::new(name).is_absolute() {
            vec![PathBuf::from(name)]
        } else {
            vec![dir.join(name), root.join(name), PathBuf::from(name)]
        };
        let real_root = root.canonicalize().map_err(|e| e.to_string())?;
        for candidate in &candidates {
            let resolved = candidate.canonicalize();
            self.looked_at.borrow_mut().push(super::LookedAt::Exists { path: candidate.clone(), found: resolved.is_ok() });
            if let Ok(resolved) = resolved {
                return if resolved.starts_with(&real_root) {
                    Ok(resolved)
                } else {
                    Err(format!("resolves to {}, outside {}; not read", resolved.display(), real_root.display()))
                };
            }
        }
        Err(format!("no such file next to the script or in {}", real_root.display()))
    }

    /// `eval WORDS` (their text joined by spaces) or `bash -c STRING`: the text
    /// is read as a script. A part whose value is not known stays as written
    /// (`$MODEL`): read again, it is the same unknown value. A string that is
    /// not known and names no launcher is a note.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn eval(
        &mut self,
        f: &File,
        file: usize,
        node: Node,
        args: &[Field],
        state: State,
        depth: usize,
        subshell: bool,
    ) -> Vec<State> {
        let what = if subshell { "bash -c" } else { "eval" };
        let at = self.line(file, node);
        let origin = self.node_origin(file, node);
        let mut text = String::new();
        let mut map: Vec<Option<(usize, usize)>> = Vec::new();
        let mut unknown = None;
        let mut unknown_ranges = Vec::new();
        for (i, field) in args.iter().enumerate() {
            if i > 0 {
                text.push(' ');
                map.push(None);
            }
            for frag in field {
                if let Some(why) = &frag.unknown {
                    unknown.get_or_insert_with(|| (frag.text.clone(), why.clone()));
                    unknown_ranges.push((text.len(), text.len() + frag.text.len(), format!("`{}` {why}", frag.text)));
                }
                text.push_str(&frag.text);
                let exact = (frag.origin.verbatim || frag.unknown.is_some()) && frag.origin.end - frag.origin.start == frag.text.len();
                map.extend((0..frag.text.len()).map(|k| exact.then_some((frag.origin.file, frag.origin.start + k))));
            }
        }
        if let Some((expansion, why)) = &unknown {
            if launch::mentions_launcher(&text).is_none() {
                let message = format!("{at}: `{what}` of a string that is not known (`{expansion}` {why}); commands in it are not read");
                match launch::mentions_launcher(&f.text[node.byte_range()]) {
                    Some((engine, launcher)) => {
                        let span = self.span_of(origin);
                        let run = Run {
                            path: state.path.clone(),
                            argv: None,
                            env: Vec::new(),
                            exports: self.exported_env(&state),
                            dynamic: Some(message),
                            files: Vec::new(),
                        };
                        self.record(engine, launcher, span, run);
                    }
                    None => self.note(message, Some(origin)),
                }
                return vec![state];
            }
        }
        if depth >= MAX_DEPTH {
            self.note(format!("{at}: `{what}` nested more than {MAX_DEPTH} levels deep; not read"), Some(origin));
            return vec![state];
        }
        let key = (text.clone(), origin);
        let id = match self.evals.get(&key) {
            Some(id) => *id,
            None => {
                let Some(tree) = self.parser.parse(&text, None) else { return vec![state] };
                if tree.root_node().has_error() {
                    self.note(format!("{at}: the string given to `{what}` is not valid shell; commands in it may be missed"), Some(origin));
                }
                let id = self.add_file(File {
                    tree,
                    text,
                    map: Some(map),
                    fallback: Some(origin),
                    real: None,
                    unknown: unknown_ranges,
                    facts: None,
                });
                self.evals.insert(key, id);
                id
            }
        };
        self.exec_file(id, vec![state], depth + 1, false)
    }
}
