//! Words as bash builds them: pieces of text that remember where they are
//! written, split into fields the way an unquoted expansion is split, and turned
//! into the command-line tokens the rest of the tool reads.

use super::super::argv::ArgToken;
use crate::surface::Known;
use crate::text::span::{SourceText, Span};

/// Bytes `start..end` of file `file` (an index into the files the evaluator read;
/// always a real file, never the text of an `eval`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Origin {
    pub file: usize,
    pub start: usize,
    pub end: usize,
    /// The text is exactly these bytes (no quotes, escapes or expansions between).
    pub verbatim: bool,
}

/// A piece of a word's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Frag {
    /// The text, or for an unknown value the expansion as written (`$EXTRA`).
    pub text: String,
    /// Why the value is not known (`None`: `text` is the value).
    pub unknown: Option<String>,
    /// From an unquoted expansion: bash splits it at whitespace (an unknown one
    /// may stand for any number of words).
    pub split: bool,
    /// Inside quotes where it is used.
    pub quoted: bool,
    /// Where the text is written.
    pub origin: Origin,
    /// The whole word it is written in (the fallback span of a token).
    pub word: Origin,
}

impl Frag {
    pub(crate) fn literal(text: String, origin: Origin, word: Origin, quoted: bool) -> Frag {
        Frag { text, unknown: None, split: false, quoted, origin, word }
    }
}

/// One expanded word, or the boundary between two words of an array expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Item {
    Frag(Frag),
    Break,
}

/// One field (a command-line word after expansion).
pub(crate) type Field = Vec<Frag>;

/// Split expanded items into fields as bash does: at whitespace inside unquoted
/// expansions and at array element boundaries. A word with quotes always yields a
/// field (`""` is an empty argument), unless it is only a `"${A[@]}"`.
pub(crate) fn fields(items: Vec<Item>, keep_empty: bool) -> Vec<Field> {
    let mut out = Vec::new();
    let mut current: Field = Vec::new();
    let mut started = false;
    for item in items {
        match item {
            Item::Break => {
                out.push(std::mem::take(&mut current));
                started = false;
            }
            Item::Frag(frag) if frag.split && frag.unknown.is_none() => {
                let text = frag.text.clone();
                let exact = frag.origin.verbatim && frag.origin.end - frag.origin.start == text.len();
                let mut at = 0;
                for piece in text.split_inclusive([' ', '\t', '\n']) {
                    let word = piece.trim_end_matches([' ', '\t', '\n']);
                    if !word.is_empty() {
                        let origin = if exact {
                            Origin { start: frag.origin.start + at, end: frag.origin.start + at + word.len(), ..frag.origin }
                        } else {
                            Origin { verbatim: false, ..frag.origin }
                        };
                        current.push(Frag { text: word.to_string(), origin, ..frag.clone() });
                        started = true;
                    }
                    if word.len() < piece.len() && started {
                        out.push(std::mem::take(&mut current));
                        started = false;
                    }
                    at += piece.len();
                }
            }
            Item::Frag(frag) => {
                started = true;
                current.push(frag);
            }
        }
    }
    if started || (keep_empty && out.is_empty()) {
        out.push(current);
    }
    out
}

/// The value of items without field splitting (an assignment's right side):
/// array elements are joined by a space.
pub(crate) fn joined(items: Vec<Item>, word: Origin) -> Vec<Frag> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::Frag(f) => out.push(Frag { split: false, ..f }),
            Item::Break => out.push(Frag::literal(" ".into(), Origin { verbatim: false, ..word }, word, true)),
        }
    }
    out
}

/// The text of frags when all of them are known.
pub(crate) fn known_text(frags: &[Frag]) -> Option<String> {
    frags.iter().all(|f| f.unknown.is_none()).then(|| frags.iter().map(|f| f.text.as_str()).collect())
}

/// A field as a command-line token. Its span is where its text is written: the
/// exact bytes when they are written in one piece (also inside an array element
/// or a variable's value), else the written word it starts in.
pub(crate) fn token(field: &Field, files: &[SourceText]) -> Option<ArgToken> {
    let first = field.first()?;
    let same_file = field.iter().all(|f| f.origin.file == first.origin.file);
    let contiguous = field.windows(2).all(|w| w[0].origin.end == w[1].origin.start);
    let verbatim = same_file && contiguous && field.iter().all(|f| f.origin.verbatim);
    let range = if verbatim { Origin { end: field[field.len() - 1].origin.end, ..first.origin } } else { first.word };
    let src = files.get(range.file)?;
    let raw = src.text.get(range.start..range.end)?.to_string();
    let span: Span = src.span(range.start, range.end);
    let value = match known_text(field) {
        Some(text) => Known::Value(text),
        // A word split out of a longer value (`$ARGS` holding
        // `--dp-size=$TP --ep`) is its own parts, not the whole text it came from.
        None if !verbatim => Known::dynamic(field.iter().map(|f| f.text.as_str()).collect::<String>()),
        None => Known::dynamic(raw.clone()),
    };
    // An unknown unquoted expansion may be several words (flags nobody can see).
    let quoted = field.iter().any(|f| f.quoted) && !field.iter().any(|f| f.unknown.is_some() && f.split);
    let unread = field.iter().find_map(|f| f.unknown.as_ref().map(|why| format!("`{}` {why}", f.text)));
    Some(ArgToken { value, raw, span, quoted, condition: None, unread })
}

/// Backslash removal in an unquoted word (`\"` → `"`, `\<newline>` → nothing).
pub(crate) fn unescape_word(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline.
pub(crate) fn unescape_double_quoted(raw: &str) -> String {
    let mut out = String::new();
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => out.push(chars.next().unwrap_or_default()),
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// bash's pattern matching for `case` and `[[ x == p ]]`: `*`, `?` and
/// literal text (`[...]` classes are compared literally).
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// `$(( ))` on known integers: `+ - * / % **`, comparisons, parentheses.
pub(crate) fn arithmetic(expr: &str, value_of: &mut dyn FnMut(&str) -> Option<i64>) -> Option<i64> {
    let tokens = arith_tokens(expr)?;
    let mut parser = Arith { tokens, at: 0, value_of };
    let v = parser.expr(0)?;
    (parser.at == parser.tokens.len()).then_some(v)
}

fn arith_tokens(expr: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect::<String>().trim_start_matches('$').to_string());
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            if ["**", "<=", ">=", "==", "!="].contains(&two.as_str()) {
                out.push(two);
                i += 2;
            } else if "+-*/%()<>".contains(c) {
                out.push(c.to_string());
                i += 1;
            } else {
                return None;
            }
        }
    }
    Some(out)
}

struct Arith<'v> {
    tokens: Vec<String>,
    at: usize,
    value_of: &'v mut dyn FnMut(&str) -> Option<i64>,
}

impl Arith<'_> {
    fn binding(op: &str) -> Option<u8> {
        Some(match op {
            "==" | "!=" => 1,
            "<" | ">" | "<=" | ">=" => 2,
            "+" | "-" => 3,
            "*" | "/" | "%" => 4,
            "**" => 5,
            _ => return None,
        })
    }

    fn expr(&mut self, min: u8) -> Option<i64> {
        let mut left = self.unary()?;
        while let Some(op) = self.tokens.get(self.at).cloned() {
            let Some(power) = Self::binding(&op).filter(|p| *p > min || (op == "**" && *p == min)) else { break };
            self.at += 1;
            let right = self.expr(if op == "**" { power - 1 } else { power })?;
            left = match op.as_str() {
                "+" => left.checked_add(right)?,
                "-" => left.checked_sub(right)?,
                "*" => left.checked_mul(right)?,
                "/" => left.checked_div(right)?,
                "%" => left.checked_rem(right)?,
                "**" => left.checked_pow(u32::try_from(right).ok()?)?,
                "==" => (left == right) as i64,
                "!=" => (left != right) as i64,
                "<" => (left < right) as i64,
                ">" => (left > right) as i64,
                "<=" => (left <= right) as i64,
                _ => (left >= right) as i64,
            };
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<i64> {
        let token = self.tokens.get(self.at)?.clone();
        self.at += 1;
        match token.as_str() {
            "-" => self.unary()?.checked_neg(),
            "+" => self.unary(),
            "(" => {
                let v = self.expr(0)?;
                (self.tokens.get(self.at).map(String::as_str) == Some(")")).then(|| self.at += 1)?;
                Some(v)
            }
            t if t.chars().all(|c| c.is_ascii_digit()) => t.parse().ok(),
            name => (self.value_of)(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_globs() {
        let mut vars = |n: &str| (n == "TP").then_some(8);
        assert_eq!(arithmetic("TP * 2 + 1", &mut vars), Some(17));
        assert_eq!(arithmetic("$TP / (2 - 0) ** 2", &mut vars), Some(2));
        assert_eq!(arithmetic("EP + 1", &mut vars), None);
        assert!(glob_match("*fp4*", "dsr1_fp4_b200"));
        assert!(glob_match("8", "8") && !glob_match("8", "4"));
    }
}
