//! Kubernetes label selectors, as `k8s.io/apimachinery`'s `labels.Parse`
//! reads them (Kustomize's `labelSelector` and `annotationSelector`,
//! kubectl's `-l`).
//!
//! A selector is requirements separated by commas, all of which must hold:
//! `k` (exists), `!k` (does not exist), `k=v`, `k==v`, `k!=v`,
//! `k in (a,b)`, `k notin (a,b)`, `k>n` and `k<n` (the value, read as an
//! integer, is greater or less than `n`). Keys must be qualified names
//! (`[prefix/]name`) and values label values, as Kubernetes validates them.

/// A parsed selector; the empty one matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<Requirement>);

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Operator,
    /// The values, sorted and without duplicates (as a Go string set).
    values: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// Why a selector does not parse, in apimachinery's words. The `String`s
/// are the text found where something else was expected (empty at the
/// end of the selector).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectorError {
    /// A run of special characters that starts with no operator.
    #[error("error expected: keyword found '{0}'")]
    UnknownSymbol(String),
    /// A requirement that does not parse.
    #[error("unable to parse requirement: {0}")]
    Requirement(#[source] RequirementError),
    /// No requirement after a comma.
    #[error("found '{0}', expected: identifier after ','")]
    AfterComma(String),
    /// Neither a comma nor the end after a requirement.
    #[error("found '{0}', expected: ',' or 'end of string'")]
    AfterRequirement(String),
    /// No requirement where one starts.
    #[error("found '{0}', expected: !, identifier, or 'end of string'")]
    NoRequirement(String),
}

/// Why one requirement of a selector does not parse, in apimachinery's
/// words. The `String`s of the `Expected…` variants are the text found
/// instead (empty at the end of the selector).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequirementError {
    /// No key, or no value after `=`, `==`, `!=`, `>` or `<`.
    #[error("found '{0}', expected: identifier")]
    ExpectedIdentifier(String),
    /// No operator after the key.
    #[error("found '{0}', expected: '=', '!=', '==', 'in', notin'")]
    ExpectedOperator(String),
    /// No `(` after `in` or `notin`.
    #[error("found '{0}' expected: '('")]
    ExpectedOpenParen(String),
    /// Neither a value, a comma nor `)` after `(`.
    #[error("found '{0}', expected: ',', ')' or identifier")]
    ExpectedSetStart(String),
    /// Neither a comma nor `)` after a value of a set.
    #[error("found '{0}', expected: ',' or ')'")]
    ExpectedSetSeparator(String),
    /// Neither a value nor a comma in a set.
    #[error("found '{0}', expected: ',', or identifier")]
    ExpectedSetValue(String),
    /// A value of `>` or `<` that is not an integer (the value).
    #[error(
        "values[0]: Invalid value: {0:?}: for 'Gt', 'Lt' operators, the value must be an integer"
    )]
    NotAnInteger(String),
    /// A key that is not a qualified name.
    #[error("invalid label key {key:?}: {rule}")]
    InvalidKey {
        /// The key.
        key: String,
        /// The rule it breaks.
        rule: KeyRule,
    },
    /// A value that is not a label value.
    #[error("invalid label value: {value:?}: at key: {key:?}: {rule}")]
    InvalidValue {
        /// The requirement's key.
        key: String,
        /// The value.
        value: String,
        /// The rule it breaks.
        rule: ValueRule,
    },
}

/// The rule of qualified names (`[prefix/]name`) a label key breaks, in
/// apimachinery's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyRule {
    /// More than one `/`.
    #[error("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")]
    QualifiedName,
    /// An empty prefix before the `/`.
    #[error("prefix part must be non-empty")]
    EmptyPrefix,
    /// A prefix that is not a DNS-1123 subdomain.
    #[error("prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]
    PrefixNotSubdomain,
    /// An empty name.
    #[error("name part must be non-empty")]
    EmptyName,
    /// A name longer than 63 characters.
    #[error("name part must be no more than 63 characters")]
    NameTooLong,
    /// A name with other characters than alphanumerics, `-`, `_` and `.`,
    /// or that does not start and end alphanumeric.
    #[error("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]
    Name,
}

/// The rule of label values a value breaks, in apimachinery's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueRule {
    /// Longer than 63 characters.
    #[error("must be no more than 63 characters")]
    TooLong,
    /// Other characters than alphanumerics, `-`, `_` and `.`, or not
    /// starting and ending alphanumeric.
    #[error("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]
    Name,
}

impl LabelSelector {
    /// Parses `text`; whitespace around tokens is ignored.
    pub fn parse(text: &str) -> Result<LabelSelector, SelectorError> {
        let tokens = lex(text)?;
        Parser { tokens, at: 0 }.selector().map(LabelSelector)
    }

    /// `true` if the labels (or annotations) that `get` looks up satisfy
    /// every requirement.
    pub fn matches<S: AsRef<str>>(&self, get: impl Fn(&str) -> Option<S>) -> bool {
        self.0
            .iter()
            .all(|r| r.matches(get(&r.key).as_ref().map(AsRef::as_ref)))
    }

    /// `true` for the selector that matches everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Requirement {
    fn matches(&self, value: Option<&str>) -> bool {
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.op {
            Operator::In => value.is_some_and(has),
            Operator::NotIn => value.is_none_or(|v| !has(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(Ok(actual)), [bound]) = (value.map(str::parse::<i64>), &self.values[..])
                else {
                    return false;
                };
                let Ok(bound) = bound.parse::<i64>() else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    actual > bound
                } else {
                    actual < bound
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Identifier(String),
    /// `in` or `notin`: an identifier where a value is expected.
    Keyword(&'static str),
    Symbol(&'static str),
    End,
}

impl Token {
    /// The text apimachinery quotes in its errors.
    fn literal(&self) -> &str {
        match self {
            Token::Identifier(s) => s,
            Token::Keyword(s) | Token::Symbol(s) => s,
            Token::End => "",
        }
    }

    /// The token as a value: keywords are identifiers there.
    fn as_value(&self) -> Option<&str> {
        match self {
            Token::Identifier(s) => Some(s),
            Token::Keyword(s) => Some(s),
            _ => None,
        }
    }
}

const SYMBOLS: [&str; 9] = ["!=", "==", "!", "=", ">", "<", "(", ")", ","];

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

/// Splits `text` into tokens: runs of special characters become the
/// longest symbol they start with, other runs identifiers or keywords.
fn lex(text: &str) -> Result<Vec<Token>, SelectorError> {
    let mut tokens = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches([' ', '\t', '\r', '\n']);
        let Some(c) = rest.chars().next() else {
            tokens.push(Token::End);
            return Ok(tokens);
        };
        if is_special(c) {
            let run: String = rest.chars().take_while(|&c| is_special(c)).collect();
            let Some(symbol) = SYMBOLS.iter().find(|s| run.starts_with(**s)) else {
                return Err(SelectorError::UnknownSymbol(run));
            };
            tokens.push(Token::Symbol(symbol));
            rest = &rest[symbol.len()..];
        } else {
            let end = rest
                .find(|c: char| is_special(c) || matches!(c, ' ' | '\t' | '\r' | '\n'))
                .unwrap_or(rest.len());
            let word = &rest[..end];
            tokens.push(match word {
                "in" => Token::Keyword("in"),
                "notin" => Token::Keyword("notin"),
                _ => Token::Identifier(word.to_string()),
            });
            rest = &rest[end..];
        }
    }
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }

    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        self.at += 1;
        t
    }

    fn selector(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Token::End => return Ok(out),
                t if t.as_value().is_some() || *t == Token::Symbol("!") => {
                    let r = self.requirement().map_err(SelectorError::Requirement)?;
                    out.push(r);
                    match self.next() {
                        Token::End => return Ok(out),
                        Token::Symbol(",") => {
                            let t = self.peek();
                            if t.as_value().is_none() && *t != Token::Symbol("!") {
                                return Err(SelectorError::AfterComma(t.literal().to_string()));
                            }
                        }
                        t => return Err(SelectorError::AfterRequirement(t.literal().to_string())),
                    }
                }
                t => return Err(SelectorError::NoRequirement(t.literal().to_string())),
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, RequirementError> {
        let mut op = None;
        let mut t = self.next();
        if t == Token::Symbol("!") {
            op = Some(Operator::DoesNotExist);
            t = self.next();
        }
        let Some(key) = t.as_value().map(str::to_string) else {
            return Err(RequirementError::ExpectedIdentifier(
                t.literal().to_string(),
            ));
        };
        validate_key(&key)?;
        if matches!(self.peek(), Token::End | Token::Symbol(",")) && op.is_none() {
            op = Some(Operator::Exists);
        }
        if let Some(op) = op {
            return Ok(Requirement {
                key,
                op,
                values: Vec::new(),
            });
        }
        let (op, values) = match self.next() {
            Token::Keyword("in") => (Operator::In, self.set()?),
            Token::Keyword("notin") => (Operator::NotIn, self.set()?),
            Token::Symbol("=" | "==") => (Operator::In, self.exact_value()?),
            Token::Symbol("!=") => (Operator::NotIn, self.exact_value()?),
            Token::Symbol(">") => (Operator::GreaterThan, self.exact_value()?),
            Token::Symbol("<") => (Operator::LessThan, self.exact_value()?),
            t => return Err(RequirementError::ExpectedOperator(t.literal().to_string())),
        };
        let mut values = values;
        values.sort();
        values.dedup();
        if matches!(op, Operator::GreaterThan | Operator::LessThan) {
            if let Some(v) = values.iter().find(|v| v.parse::<i64>().is_err()) {
                return Err(RequirementError::NotAnInteger(v.clone()));
            }
        }
        for v in &values {
            validate_value(&key, v)?;
        }
        Ok(Requirement { key, op, values })
    }

    /// `(a, b, …)`: the values of `in` and `notin` (`()` is one empty value).
    fn set(&mut self) -> Result<Vec<String>, RequirementError> {
        let t = self.next();
        if t != Token::Symbol("(") {
            return Err(RequirementError::ExpectedOpenParen(t.literal().to_string()));
        }
        let mut values = Vec::new();
        match self.peek().clone() {
            Token::Symbol(")") => {
                self.next();
                return Ok(vec![String::new()]);
            }
            t if t.as_value().is_some() || t == Token::Symbol(",") => {}
            t => return Err(RequirementError::ExpectedSetStart(t.literal().to_string())),
        }
        loop {
            let t = self.next();
            if let Some(v) = t.as_value() {
                values.push(v.to_string());
                match self.peek() {
                    Token::Symbol(",") => {
                        self.next();
                        if *self.peek() == Token::Symbol(")") {
                            values.push(String::new());
                        }
                    }
                    Token::Symbol(")") => {}
                    t => {
                        return Err(RequirementError::ExpectedSetSeparator(
                            t.literal().to_string(),
                        ))
                    }
                }
            } else if t == Token::Symbol(",") {
                // A comma with no value before or after it stands for "".
                values.push(String::new());
                if *self.peek() == Token::Symbol(")") {
                    values.push(String::new());
                }
            } else if t != Token::Symbol(")") {
                return Err(RequirementError::ExpectedSetValue(t.literal().to_string()));
            }
            if *self.peek() == Token::Symbol(")") {
                self.next();
                return Ok(values);
            }
        }
    }

    /// The one value after `=`, `==`, `!=`, `>` or `<` (empty at the end
    /// or before a comma).
    fn exact_value(&mut self) -> Result<Vec<String>, RequirementError> {
        if matches!(self.peek(), Token::End | Token::Symbol(",")) {
            return Ok(vec![String::new()]);
        }
        let t = self.next();
        match t.as_value() {
            Some(v) => Ok(vec![v.to_string()]),
            None => Err(RequirementError::ExpectedIdentifier(
                t.literal().to_string(),
            )),
        }
    }
}

/// The name part of a qualified name and a label value: alphanumerics,
/// `-`, `_` and `.`, starting and ending alphanumeric.
fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A DNS-1123 subdomain: lowercase labels of alphanumerics and `-`,
/// joined by dots.
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b[0].is_ascii_alphanumeric()
                && b[b.len() - 1].is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase() || *c == b'-')
        })
}

/// A label key: a qualified name, `[prefix/]name`.
fn validate_key(key: &str) -> Result<(), RequirementError> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    let broken = if name.contains('/') {
        KeyRule::QualifiedName
    } else if prefix == Some("") {
        KeyRule::EmptyPrefix
    } else if prefix.is_some_and(|p| !is_dns_subdomain(p)) {
        KeyRule::PrefixNotSubdomain
    } else if name.is_empty() {
        KeyRule::EmptyName
    } else if name.len() > 63 {
        KeyRule::NameTooLong
    } else if !is_name(name) {
        KeyRule::Name
    } else {
        return Ok(());
    };
    Err(RequirementError::InvalidKey {
        key: key.to_string(),
        rule: broken,
    })
}

/// A label value: empty, or at most 63 characters of the name form.
fn validate_value(key: &str, value: &str) -> Result<(), RequirementError> {
    let rule = if value.len() > 63 {
        ValueRule::TooLong
    } else if !value.is_empty() && !is_name(value) {
        ValueRule::Name
    } else {
        return Ok(());
    };
    Err(RequirementError::InvalidValue {
        key: key.to_string(),
        value: value.to_string(),
        rule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(selector: &str, labels: &[(&str, &str)]) -> bool {
        LabelSelector::parse(selector)
            .unwrap()
            .matches(|k| labels.iter().find(|(l, _)| *l == k).map(|(_, v)| *v))
    }

    #[test]
    fn equality_set_and_existence_requirements() {
        let l = [("app", "web"), ("tier", "front")];
        assert!(matches("", &l));
        assert!(matches("app=web", &l));
        assert!(matches("app==web,tier", &l));
        assert!(!matches("app!=web", &l));
        assert!(matches("tier in (front, back)", &l));
        assert!(!matches("tier notin (front)", &l));
        assert!(matches("!missing", &l));
        assert!(matches("missing!=x", &l));
        assert!(!matches("missing in (x)", &l));
        assert!(matches("  app = web ,  tier  ", &l));
        // `in` and `notin` are values where a value is expected.
        assert!(matches("k in (in, notin)", &[("k", "notin")]));
        // An empty value, written or implied by a comma.
        assert!(matches("k=", &[("k", "")]));
        assert!(matches("k in (a,)", &[("k", "")]));
        assert!(matches("k in ()", &[("k", "")]));
    }

    #[test]
    fn greater_and_less_compare_integers() {
        assert!(matches("n>1", &[("n", "2")]));
        assert!(!matches("n>1", &[("n", "1")]));
        assert!(matches("n<1", &[("n", "-3")]));
        // A value that is not an integer, or no value, never matches.
        assert!(!matches("n>1", &[("n", "a")]));
        assert!(!matches("n<1", &[]));
        assert!(LabelSelector::parse("n>a").is_err());
    }

    #[test]
    fn malformed_selectors_are_errors() {
        for bad in [
            "app in x",
            "app=web,",
            "app=web tier",
            "!app=web",
            "a b",
            "=x",
            "app=(x)",
            "app in (a b)",
            "A/x=a",
            "-app",
            "app=-x",
            "app=a/b",
            "a/b/c",
            "app=>1",
        ] {
            assert!(LabelSelector::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            LabelSelector::parse("app=web,").unwrap_err().to_string(),
            "found '', expected: identifier after ','"
        );
        assert_eq!(
            LabelSelector::parse("app ~ x").unwrap_err().to_string(),
            "unable to parse requirement: found '~', expected: '=', '!=', '==', 'in', notin'"
        );
    }

    #[test]
    fn errors_use_apimachinery_words() {
        let name_rule = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        for (selector, error) in [
            ("a,,b", "found ',', expected: identifier after ','".to_string()),
            ("a=b c", "found 'c', expected: ',' or 'end of string'".into()),
            (")", "found ')', expected: !, identifier, or 'end of string'".into()),
            ("!)", "unable to parse requirement: found ')', expected: identifier".into()),
            ("a in x", "unable to parse requirement: found 'x' expected: '('".into()),
            ("a in )", "unable to parse requirement: found ')' expected: '('".into()),
            ("a in (=)", "unable to parse requirement: found '=', expected: ',', ')' or identifier".into()),
            ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'".into()),
            ("a in (b,=)", "unable to parse requirement: found '=', expected: ',', or identifier".into()),
            ("a=(", "unable to parse requirement: found '(', expected: identifier".into()),
            ("a>b", "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer".into()),
            ("a/b/c", format!("unable to parse requirement: invalid label key \"a/b/c\": a qualified name {name_rule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")),
            ("/a", "unable to parse requirement: invalid label key \"/a\": prefix part must be non-empty".into()),
            ("A/a", "unable to parse requirement: invalid label key \"A/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into()),
            ("a/", "unable to parse requirement: invalid label key \"a/\": name part must be non-empty".into()),
            (&"k".repeat(64), format!("unable to parse requirement: invalid label key \"{}\": name part must be no more than 63 characters", "k".repeat(64))),
            ("-a", format!("unable to parse requirement: invalid label key \"-a\": name part {name_rule}")),
            ("a=-b", "unable to parse requirement: invalid label value: \"-b\": at key: \"a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into()),
            (&format!("a={}", "v".repeat(64)), format!("unable to parse requirement: invalid label value: \"{}\": at key: \"a\": must be no more than 63 characters", "v".repeat(64))),
        ] {
            assert_eq!(
                LabelSelector::parse(selector).unwrap_err().to_string(),
                error,
                "{selector}"
            );
        }
    }

    #[test]
    fn keys_may_have_a_dns_prefix() {
        assert!(matches(
            "app.kubernetes.io/name=web",
            &[("app.kubernetes.io/name", "web")]
        ));
        assert!(LabelSelector::parse("Example.com/x").is_err());
        assert!(LabelSelector::parse(&format!("{}=x", "k".repeat(64))).is_err());
        assert!(LabelSelector::parse(&format!("k={}", "v".repeat(64))).is_err());
    }
}
