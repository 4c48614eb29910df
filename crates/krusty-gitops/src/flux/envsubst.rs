//! Flux's variable substitution (`postBuild`), as its fork of
//! drone/envsubst reads and evaluates it.
//!
//! - Only `${...}` is an expression; `$$` is a `$` (so `$${X}` is the text
//!   `${X}`); any other `$` is itself.
//! - `${NAME}` is the variable, NAME one or more letters, digits or `_`.
//! - `${NAME:-W}`, `${NAME:=W}`, `${NAME:+W}`, `${NAME:?W}` and
//!   `${NAME=W}` are all "the variable when it is not empty, else W"
//!   (the fork's semantics, not the shell's); W may hold expressions,
//!   which are evaluated whether used or not.
//! - `${#NAME}` its length in bytes; `${NAME^}`, `${NAME^^}`, `${NAME,}`,
//!   `${NAME,,}` case changes; `${NAME:OFFSET}` and
//!   `${NAME:OFFSET:LENGTH}` substrings; `${NAME/P/R}` (first), `//`
//!   (all), `/#` (prefix), `/%` (suffix) literal replacements (`\/` is a
//!   `/`); `${NAME#G}`, `##`, `%`, `%%` remove the shortest or longest
//!   prefix or suffix matching the glob G.
//! - In strict mode a variable that is not defined fails every form but
//!   the defaulting ones; otherwise it is empty.

use std::collections::BTreeMap;

/// Why a text could not be substituted, in the fork's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SubstError(pub String);

type Result<T> = std::result::Result<T, SubstError>;

fn missing_brace() -> SubstError {
    SubstError("missing closing brace".into())
}

/// `text` with every expression replaced from `vars`.
pub fn substitute(text: &str, vars: &BTreeMap<String, String>, strict: bool) -> Result<String> {
    let mut s = Scanner {
        chars: text.chars().collect(),
        pos: 0,
        vars,
        strict,
        depth: 0,
    };
    s.top()
}

struct Scanner<'a> {
    chars: Vec<char>,
    pos: usize,
    vars: &'a BTreeMap<String, String>,
    strict: bool,
    /// How many expressions the one being read lies in.
    depth: usize,
}

/// How deep expressions may lie inside one another's arguments.
const MAX_DEPTH: usize = 256;

/// What ends an argument inside an expression.
#[derive(Clone, Copy, PartialEq)]
enum Until {
    /// `}`.
    Brace,
    /// `:` or `}` (a substring's offset).
    ColonOrBrace,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn top(&mut self) -> Result<String> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            match (c, self.peek_at(1)) {
                ('$', Some('$')) => {
                    out.push('$');
                    self.pos += 2;
                }
                ('$', Some('{')) => {
                    self.pos += 2;
                    out.push_str(&self.expression()?);
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(out)
    }

    /// An argument: text with expressions, up to (not past) what ends it.
    fn argument(&mut self, until: Until) -> Result<String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(missing_brace()),
                Some('}') => return Ok(out),
                Some(':') if until == Until::ColonOrBrace => return Ok(out),
                Some('$') if self.peek_at(1) == Some('{') => {
                    self.pos += 2;
                    out.push_str(&self.expression()?);
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    /// A replacement's pattern or replacement: plain text where `\/` and
    /// `\\` are escapes, up to `/` (when `slash`) or `}`.
    fn escaped(&mut self, slash: bool) -> Result<String> {
        let mut out = String::new();
        loop {
            match self.peek() {
                None => return Err(missing_brace()),
                Some('}') => return Ok(out),
                Some('/') if slash => return Ok(out),
                Some('\\') if matches!(self.peek_at(1), Some('/') | Some('\\')) => {
                    out.push(self.peek_at(1).unwrap_or('\\'));
                    self.pos += 2;
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn close(&mut self) -> Result<()> {
        if self.peek() == Some('}') {
            self.pos += 1;
            Ok(())
        } else {
            Err(missing_brace())
        }
    }

    fn name(&mut self) -> Result<String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(SubstError("unable to parse variable name".into()));
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    /// The variable's value; in strict mode, one not defined fails.
    fn value(&self, name: &str) -> Result<String> {
        match self.vars.get(name) {
            Some(v) => Ok(v.clone()),
            None if self.strict => Err(SubstError(format!(
                "variable not set (strict mode): \"{name}\""
            ))),
            None => Ok(String::new()),
        }
    }

    /// After `${`: the expression, through its `}`.
    fn expression(&mut self) -> Result<String> {
        if self.depth >= MAX_DEPTH {
            return Err(SubstError(format!(
                "expressions nested more than {MAX_DEPTH} deep"
            )));
        }
        self.depth += 1;
        let value = self.expression_inside();
        self.depth -= 1;
        value
    }

    fn expression_inside(&mut self) -> Result<String> {
        if self.peek() == Some('#') {
            self.pos += 1;
            let name = self.name()?;
            self.close()?;
            return Ok(self.value(&name)?.len().to_string());
        }
        let name = self.name()?;
        let Some(op) = self.peek() else {
            return Err(missing_brace());
        };
        match op {
            '}' => {
                self.pos += 1;
                self.value(&name)
            }
            ':' if matches!(self.peek_at(1), Some('=' | '-' | '?' | '+')) => {
                self.pos += 2;
                self.defaulted(&name)
            }
            '=' => {
                self.pos += 1;
                self.defaulted(&name)
            }
            ':' => {
                self.pos += 1;
                let offset = self.argument(Until::ColonOrBrace)?;
                let length = if self.peek() == Some(':') {
                    self.pos += 1;
                    Some(self.argument(Until::Brace)?)
                } else {
                    None
                };
                self.close()?;
                let value = self.value(&name)?;
                Ok(substring(&value, &offset, length.as_deref()))
            }
            '^' | ',' => {
                self.pos += 1;
                let all = self.peek() == Some(op);
                if all {
                    self.pos += 1;
                }
                self.close()?;
                let value = self.value(&name)?;
                Ok(change_case(&value, op == '^', all))
            }
            '/' => {
                self.pos += 1;
                let mode = match self.peek() {
                    Some(m @ ('/' | '#' | '%')) => {
                        self.pos += 1;
                        m
                    }
                    _ => '1',
                };
                let pattern = self.escaped(true)?;
                let replacement = if self.peek() == Some('/') {
                    self.pos += 1;
                    self.escaped(false)?
                } else {
                    String::new()
                };
                self.close()?;
                let value = self.value(&name)?;
                Ok(replace(&value, &pattern, &replacement, mode))
            }
            '#' | '%' => {
                self.pos += 1;
                let longest = self.peek() == Some(op);
                if longest {
                    self.pos += 1;
                }
                let pattern = self.argument(Until::Brace)?;
                self.close()?;
                let value = self.value(&name)?;
                Ok(trim(&value, &pattern, op == '#', longest))
            }
            _ => Err(missing_brace()),
        }
    }

    /// The rest of a defaulting expression: its argument, evaluated
    /// whether used or not, is the result when the variable is empty.
    fn defaulted(&mut self, name: &str) -> Result<String> {
        let fallback = self.argument(Until::Brace)?;
        self.close()?;
        let value = self.vars.get(name).cloned().unwrap_or_default();
        Ok(if value.is_empty() { fallback } else { value })
    }
}

fn substring(value: &str, offset: &str, length: Option<&str>) -> String {
    let Ok(offset) = offset.parse::<i64>() else {
        return value.to_string();
    };
    let len = value.len() as i64;
    let start = if offset < 0 {
        (len + offset).max(0)
    } else {
        offset.min(len)
    } as usize;
    let Some(rest) = value.get(start..) else {
        return value.to_string();
    };
    match length {
        None => rest.to_string(),
        Some(length) => match length.parse::<usize>() {
            Ok(n) => rest.get(..n.min(rest.len())).unwrap_or(rest).to_string(),
            Err(_) => value.to_string(),
        },
    }
}

fn change_case(value: &str, upper: bool, all: bool) -> String {
    let convert = |s: &str| {
        if upper {
            s.to_uppercase()
        } else {
            s.to_lowercase()
        }
    };
    if all {
        return convert(value);
    }
    let mut chars = value.chars();
    match chars.next() {
        Some(first) => convert(&first.to_string()) + chars.as_str(),
        None => String::new(),
    }
}

fn replace(value: &str, pattern: &str, replacement: &str, mode: char) -> String {
    match mode {
        '/' => value.replace(pattern, replacement),
        '#' => match value.strip_prefix(pattern) {
            Some(rest) => format!("{replacement}{rest}"),
            None => value.to_string(),
        },
        '%' => match value.strip_suffix(pattern) {
            Some(rest) => format!("{rest}{replacement}"),
            None => value.to_string(),
        },
        _ => value.replacen(pattern, replacement, 1),
    }
}

/// `value` without the shortest (or longest) prefix (or suffix) matching
/// the glob `pattern`.
fn trim(value: &str, pattern: &str, prefix: bool, longest: bool) -> String {
    let mut tokens = glob_tokens(pattern);
    let mut chars: Vec<char> = value.chars().collect();
    if !prefix {
        // A suffix of the text matches the pattern where the reversed
        // suffix matches the reversed pattern.
        tokens.reverse();
        chars.reverse();
    }
    let matched = prefix_matches(&tokens, &chars);
    let cut = if longest {
        matched.iter().rposition(|m| *m)
    } else {
        matched.iter().position(|m| *m)
    };
    let Some(cut) = cut else {
        return value.to_string();
    };
    let mut rest: Vec<char> = chars[cut..].to_vec();
    if !prefix {
        rest.reverse();
    }
    rest.into_iter().collect()
}

/// One element of a glob: `*`, `?`, a set `[...]`, or a character
/// (`\` escapes the next one).
#[derive(Debug, Clone, PartialEq)]
enum Glob {
    Star,
    Any,
    Set {
        negated: bool,
        items: Vec<(char, char)>,
    },
    Char(char),
}

fn glob_tokens(pattern: &str) -> Vec<Glob> {
    let p: Vec<char> = pattern.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '*' => out.push(Glob::Star),
            '?' => out.push(Glob::Any),
            '\\' if i + 1 < p.len() => {
                i += 1;
                out.push(Glob::Char(p[i]));
            }
            '[' => {
                let mut j = i + 1;
                let negated = matches!(p.get(j), Some('!' | '^'));
                if negated {
                    j += 1;
                }
                let mut items = Vec::new();
                let mut first = true;
                while j < p.len() && (p[j] != ']' || first) {
                    first = false;
                    if j + 2 < p.len() && p[j + 1] == '-' && p[j + 2] != ']' {
                        items.push((p[j], p[j + 2]));
                        j += 3;
                    } else {
                        items.push((p[j], p[j]));
                        j += 1;
                    }
                }
                if j >= p.len() {
                    // No closing `]`: the `[` is itself.
                    out.push(Glob::Char('['));
                } else {
                    out.push(Glob::Set { negated, items });
                    i = j;
                }
            }
            c => out.push(Glob::Char(c)),
        }
        i += 1;
    }
    out
}

/// For each length `k` of `text`, whether `text[..k]` matches the glob
/// whole: the glob run as an automaton over the text, in time
/// proportional to the product of their lengths.
fn prefix_matches(tokens: &[Glob], text: &[char]) -> Vec<bool> {
    let m = tokens.len();
    let close = |states: &mut Vec<bool>| {
        for i in 0..m {
            if states[i] && tokens[i] == Glob::Star {
                states[i + 1] = true;
            }
        }
    };
    let mut states = vec![false; m + 1];
    states[0] = true;
    close(&mut states);
    let mut matched = Vec::with_capacity(text.len() + 1);
    matched.push(states[m]);
    for c in text {
        let mut next = vec![false; m + 1];
        for i in 0..m {
            if !states[i] {
                continue;
            }
            match &tokens[i] {
                Glob::Star => next[i] = true,
                Glob::Any => next[i + 1] = true,
                Glob::Char(x) => next[i + 1] |= x == c,
                Glob::Set { negated, items } => {
                    let within = items.iter().any(|(lo, hi)| lo <= c && c <= hi);
                    next[i + 1] |= within != *negated;
                }
            }
        }
        close(&mut next);
        matched.push(next[m]);
        states = next;
    }
    matched
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Inputs and outputs of the fork's own expansion tests
    /// (fluxcd/pkg envsubst/eval_test.go).
    #[test]
    fn expands_as_fluxs_envsubst_does() {
        type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);
        let cases: &[Case] = &[
            (&[], "abcdEFGH28ij", "abcdEFGH28ij"),
            (&[("var01", "abcdEFGH28ij")], "${#var01}", "12"),
            (&[("var01", "abcdEFGH28ij")], "${var01^}", "AbcdEFGH28ij"),
            (&[("var01", "abcdEFGH28ij")], "${var01^^}", "ABCDEFGH28IJ"),
            (&[("var01", "ABCDEFGH28IJ")], "${var01,}", "aBCDEFGH28IJ"),
            (&[("var01", "ABCDEFGH28IJ")], "${var01,,}", "abcdefgh28ij"),
            (
                &[("path_name", "/home/bozo/ideas/thoughts.for.today")],
                "${path_name:11}",
                "ideas/thoughts.for.today",
            ),
            (
                &[("path_name", "/home/bozo/ideas/thoughts.for.today")],
                "${path_name:11:5}",
                "ideas",
            ),
            (&[("var", "abc")], "${var=xyz}", "abc"),
            (&[], "${var=xyz}", "xyz"),
            (
                &[("default_var", "foo")],
                "something ${var=${default_var}}",
                "something foo",
            ),
            (
                &[("default_var", "foo1")],
                "foo: ${var=${default_var}-suffix}",
                "foo: foo1-suffix",
            ),
            (
                &[("default_var", "foo1")],
                "foo: ${var=prefix${default_var}-suffix}",
                "foo: prefixfoo1-suffix",
            ),
            (&[], "${var:=xyz}", "xyz"),
            (
                &[("stringZ", "abcABC123ABCabc")],
                "${stringZ/%abc/XYZ}",
                "abcABC123ABCXYZ",
            ),
            (
                &[("stringZ", "abcABC123ABCabc")],
                "${stringZ/#abc/XYZ}",
                "XYZABC123ABCabc",
            ),
            (
                &[("stringZ", "abcABC123ABCabc")],
                "${stringZ//abc/xyz}",
                "xyzABC123ABCxyz",
            ),
            (
                &[("stringZ", "abcABC123ABCabc")],
                "${stringZ/abc/xyz}",
                "xyzABC123ABCabc",
            ),
            (
                &[("filename", "bash.string.txt")],
                "${filename#*.}",
                "string.txt",
            ),
            (&[("filename", "path/to/file")], "${filename#*/}", "to/file"),
            (
                &[("filename", "/path/to/file")],
                "${filename#*/}",
                "path/to/file",
            ),
            (&[("filename", "bash.string.txt")], "${filename##*.}", "txt"),
            (&[("filename", "path/to/file")], "${filename##*/}", "file"),
            (&[("filename", "/path/to/file")], "${filename##*/}", "file"),
            (
                &[("filename", "bash.string.txt")],
                "${filename%.*}",
                "bash.string",
            ),
            (
                &[("filename", "bash.string.txt")],
                "${filename%%.*}",
                "bash",
            ),
            (
                &[("var01", "abcdEFGH28ij")],
                "${var=${var01^^}}",
                "ABCDEFGH28IJ",
            ),
            (&[("var01", "abcdEFGH28ij")], "$${var01}", "${var01}"),
            (
                &[("var01", "abcdEFGH28ij")],
                "some text ${var01}$${var$${var01}$var01${var01}",
                "some text abcdEFGH28ij${var${var01}$var01abcdEFGH28ij",
            ),
            (
                &[("default_var", "foo")],
                "something $${var=${default_var}}",
                "something ${var=foo}",
            ),
            (&[("stringZ", "foo/bar")], r"${stringZ/\//-}", "foo-bar"),
            (
                &[("stringZ", "foo/bar/baz")],
                r"${stringZ//\//-}",
                "foo-bar-baz",
            ),
            (
                &[("default_var", "foo")],
                r"\\something ${var=${default_var}}",
                r"\\something foo",
            ),
            (&[("stringZ", "foo.bar")], "${stringZ/./}", "foobar"),
        ];
        for (params, input, output) in cases {
            assert_eq!(
                substitute(input, &vars(params), false).as_deref(),
                Ok(*output),
                "{input}"
            );
        }
    }

    #[test]
    fn strict_mode_fails_a_missing_variable_except_where_defaulted() {
        let none = vars(&[]);
        for input in [
            "${missing}",
            "${#missing}",
            "${missing^}",
            "${missing^^}",
            "${missing,}",
            "${missing,,}",
            "${missing:0}",
            "${missing:0:10}",
            "${missing/pattern/replacement}",
            "${missing//pattern/replacement}",
            "${missing/#pattern/replacement}",
            "${missing/%pattern/replacement}",
            "${missing#pattern}",
            "${missing##pattern}",
            "${missing%pattern}",
            "${missing%%pattern}",
        ] {
            assert_eq!(
                substitute(input, &none, true),
                Err(SubstError(
                    "variable not set (strict mode): \"missing\"".into()
                )),
                "{input}"
            );
        }
        for (input, output) in [
            ("${missing:-fallback}", "fallback"),
            ("${missing:=assigned}", "assigned"),
            ("${missing=assigned}", "assigned"),
        ] {
            assert_eq!(substitute(input, &none, true).as_deref(), Ok(output));
        }
        assert_eq!(
            substitute("${foo}", &vars(&[("foo", "")]), true).as_deref(),
            Ok("")
        );
        assert_eq!(substitute("${missing}", &none, false).as_deref(), Ok(""));
    }

    #[test]
    fn trimming_takes_time_in_proportion_to_pattern_and_value() {
        let long = "a".repeat(4000);
        let vars = vars(&[("X", long.as_str())]);
        let start = std::time::Instant::now();
        let out = substitute("${X##*a*a*a*a*a*a*a*a*a*a*a*a*b}", &vars, false).unwrap();
        assert_eq!(out, long);
        let out = substitute("${X%%a*a*a*a*a*a*a*a*a*a*a*a}", &vars, false).unwrap();
        assert_eq!(out, "");
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
        let sets = self::vars(&[("f", "x-1.tar.gz")]);
        assert_eq!(
            substitute("${f%.[a-z][a-z]}", &sets, false).unwrap(),
            "x-1.tar"
        );
        assert_eq!(
            substitute("${f#[!a-w]-}", &sets, false).unwrap(),
            "1.tar.gz"
        );
        assert_eq!(substitute("${f##*\\.}", &sets, false).unwrap(), "gz");
    }

    #[test]
    fn expressions_nested_too_deep_are_refused() {
        let deep = "${a=".repeat(100_000) + &"}".repeat(100_000);
        let err = substitute(&deep, &vars(&[]), false).unwrap_err();
        assert_eq!(err.0, "expressions nested more than 256 deep");
        let fine = "${a=".repeat(200) + "x" + &"}".repeat(200);
        assert_eq!(substitute(&fine, &vars(&[]), false).unwrap(), "x");
    }

    #[test]
    fn malformed_expressions_are_errors() {
        let none = vars(&[]);
        for (input, message) in [
            ("${var-default}", "missing closing brace"),
            ("${a.b}", "missing closing brace"),
            ("${x", "missing closing brace"),
            ("${}", "unable to parse variable name"),
            ("${ x}", "unable to parse variable name"),
        ] {
            assert_eq!(
                substitute(input, &none, false),
                Err(SubstError(message.into())),
                "{input}"
            );
        }
    }
}
