//! Field paths: `spec.template.spec.containers[name=app].image`.
//!
//! A path is a chain of steps:
//!
//! - `key` — a mapping key (`.` separates keys);
//! - `[N]` — the N-th item of a list (from 0);
//! - `[-]` — a new item at the end of a list (when setting);
//! - `[field=value]` — the item of a list whose `field` is `value`
//!   (created as `{field: value}` when setting and none matches);
//! - `["a.b/c"]` or `['a.b/c']` — a mapping key holding `.`, `[` or `]`.
//!
//! `metadata.annotations["example.com/owner"]` and
//! `spec.template.spec.containers[0].ports[containerPort=80]` are paths.

use std::fmt;

use krusty_yaml::{Node, Value};

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A mapping key.
    Key(String),
    /// A list index.
    Index(usize),
    /// A new item appended to a list.
    Append,
    /// The list item whose `field` is `value`.
    Match {
        /// The item's field compared.
        field: String,
        /// The value it must have.
        value: String,
    },
}

/// A parsed path.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Path {
    /// Its steps, from the root.
    pub steps: Vec<Step>,
}

/// A path that cannot be parsed or followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("path '{path}': {message}")]
pub struct PathError {
    /// The path as written.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl Path {
    /// Parses `text` (see the module's documentation).
    pub fn parse(text: &str) -> Result<Path, PathError> {
        let err = |message: &str| PathError {
            path: text.to_string(),
            message: message.to_string(),
        };
        let mut steps = Vec::new();
        let mut rest = text;
        let mut expect_key = true;
        while !rest.is_empty() {
            if let Some(inner) = rest.strip_prefix('[') {
                let (step, after) = bracket(inner).map_err(|m| err(&m.to_string()))?;
                steps.push(step);
                rest = after;
                expect_key = false;
            } else if let Some(after) = rest.strip_prefix('.') {
                if expect_key {
                    return Err(err("empty key"));
                }
                rest = after;
                expect_key = true;
                if rest.is_empty() {
                    return Err(err("ends with '.'"));
                }
            } else {
                if !expect_key {
                    return Err(err("expected '.' or '[' after ']'"));
                }
                let end = rest.find(['.', '[', ']']).unwrap_or(rest.len());
                if end == 0 {
                    return Err(err("unexpected ']'"));
                }
                steps.push(Step::Key(rest[..end].to_string()));
                rest = &rest[end..];
                expect_key = false;
            }
        }
        Ok(Path { steps })
    }

    /// The node at this path, if every step exists.
    pub fn lookup<'a>(&self, node: &'a Node) -> Option<&'a Node> {
        self.steps.iter().try_fold(node, |at, step| match step {
            Step::Key(k) => at.get(k),
            Step::Index(i) => at.as_seq()?.get(*i),
            Step::Append => None,
            Step::Match { field, value } => at.as_seq()?.iter().find(|x| matches(x, field, value)),
        })
    }

    /// The node at this path, mutably, if every step exists.
    pub fn lookup_mut<'a>(&self, node: &'a mut Node) -> Option<&'a mut Node> {
        self.steps.iter().try_fold(node, |at, step| match step {
            Step::Key(k) => at.get_mut(k),
            Step::Index(i) => at.as_seq_mut()?.get_mut(*i),
            Step::Append => None,
            Step::Match { field, value } => at
                .as_seq_mut()?
                .iter_mut()
                .find(|x| matches(x, field, value)),
        })
    }

    /// The node at this path, created (as null) when missing, with the
    /// mappings and lists on the way. A null on the way becomes the
    /// collection its step needs; a scalar, or a collection of the other
    /// kind, is an error, as is an index past the end of a list.
    pub fn create<'a>(&self, node: &'a mut Node) -> Result<&'a mut Node, PathError> {
        let mut at = node;
        for (n, step) in self.steps.iter().enumerate() {
            let err = |message: String| PathError {
                path: self.to_string(),
                message,
            };
            if at.is_null() {
                *at = match step {
                    Step::Key(_) => Node::map(),
                    _ => Node::seq(),
                };
            }
            let here = Path {
                steps: self.steps[..n].to_vec(),
            };
            let not_a = |want: &str| err(format!("'{here}' is not {want}"));
            at = match step {
                Step::Key(k) => {
                    if at.as_map().is_none() {
                        return Err(not_a("a mapping"));
                    }
                    if at.get(k).is_none() {
                        at.set(k, Node::null());
                    }
                    at.get_mut(k)
                        .ok_or_else(|| err(format!("cannot set '{k}'")))?
                }
                _ => {
                    let items = at.as_seq_mut().ok_or_else(|| not_a("a list"))?;
                    let len = items.len();
                    let i = match step {
                        Step::Index(i) => *i,
                        Step::Match { field, value } => items
                            .iter()
                            .position(|x| matches(x, field, value))
                            .unwrap_or_else(|| {
                                let mut item = Node::map();
                                item.set(field, Node::string(value.as_str()));
                                items.push(item);
                                len
                            }),
                        _ => len,
                    };
                    if i == items.len() {
                        items.push(Node::null());
                    }
                    items.get_mut(i).ok_or_else(|| {
                        err(format!(
                            "index {i} is past the end of '{here}' ({len} items)"
                        ))
                    })?
                }
            };
        }
        Ok(at)
    }

    /// Removes the node at this path, returning it.
    pub fn remove(&self, node: &mut Node) -> Option<Node> {
        let (last, parents) = self.steps.split_last()?;
        let parent = Path {
            steps: parents.to_vec(),
        }
        .lookup_mut(node)?;
        match (last, &mut parent.value) {
            (Step::Key(k), Value::Map(_)) => parent.remove(k),
            (Step::Index(i), Value::Seq(items)) if *i < items.len() => Some(items.remove(*i)),
            (Step::Match { field, value }, Value::Seq(items)) => {
                let i = items.iter().position(|x| matches(x, field, value))?;
                Some(items.remove(i))
            }
            _ => None,
        }
    }
}

/// `true` when list item `item` has `field` equal to `value`.
fn matches(item: &Node, field: &str, value: &str) -> bool {
    item.get(field).and_then(Node::as_str) == Some(value)
}

/// Why a bracketed step does not parse.
#[derive(Debug, thiserror::Error)]
enum BracketError {
    /// A quoted key with no closing quote (the quote).
    #[error("unclosed quote {0}")]
    UnclosedQuote(char),
    /// Something other than `]` after a quoted key.
    #[error("expected ']' after the quoted key")]
    AfterQuotedKey,
    /// No `]`.
    #[error("unclosed '['")]
    Unclosed,
    /// `[=value]`.
    #[error("empty field name in '[field=value]'")]
    EmptyField,
    /// Neither an index, `-` nor `field=value` (the text inside).
    #[error("'[{0}]' is not an index, '[-]' or '[field=value]'")]
    NotAStep(String),
}

/// Reads one bracketed step; `text` starts after `[`. Returns the step
/// and what follows the `]`.
fn bracket(text: &str) -> Result<(Step, &str), BracketError> {
    if let Some(q) = text.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let body = &text[1..];
        let end = body.find(q).ok_or(BracketError::UnclosedQuote(q))?;
        let after = body[end + 1..]
            .strip_prefix(']')
            .ok_or(BracketError::AfterQuotedKey)?;
        return Ok((Step::Key(body[..end].to_string()), after));
    }
    let end = text.find(']').ok_or(BracketError::Unclosed)?;
    let (inside, after) = (&text[..end], &text[end + 1..]);
    let step = if inside == "-" {
        Step::Append
    } else if let Some((field, value)) = inside.split_once('=') {
        if field.is_empty() {
            return Err(BracketError::EmptyField);
        }
        Step::Match {
            field: field.trim().to_string(),
            value: unquote(value.trim()).to_string(),
        }
    } else {
        Step::Index(
            inside
                .parse()
                .map_err(|_| BracketError::NotAStep(inside.to_string()))?,
        )
    };
    Ok((step, after))
}

fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// The canonical text of the path (which [`Path::parse`] reads back).
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                Step::Key(k) if k.contains(['.', '[', ']']) || k.is_empty() => {
                    write!(f, "[\"{k}\"]")?
                }
                Step::Key(k) if i == 0 => f.write_str(k)?,
                Step::Key(k) => write!(f, ".{k}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
                Step::Append => f.write_str("[-]")?,
                Step::Match { field, value } => write!(f, "[{field}={value}]")?,
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for Path {
    type Err = PathError;
    fn from_str(s: &str) -> Result<Path, PathError> {
        Path::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_yaml(text: &str) -> Node {
        krusty_yaml::parse_stream(text).unwrap()[0]
            .root
            .clone()
            .unwrap()
    }

    #[test]
    fn parses_keys_indexes_selectors_and_quoted_keys() {
        let p = Path::parse("spec.containers[name=app].ports[0].x[\"a.b/c\"][-]").unwrap();
        assert_eq!(
            p.steps,
            vec![
                Step::Key("spec".into()),
                Step::Key("containers".into()),
                Step::Match {
                    field: "name".into(),
                    value: "app".into()
                },
                Step::Key("ports".into()),
                Step::Index(0),
                Step::Key("x".into()),
                Step::Key("a.b/c".into()),
                Step::Append,
            ]
        );
        assert_eq!(
            p.to_string(),
            "spec.containers[name=app].ports[0].x[\"a.b/c\"][-]"
        );
        for bad in ["a..b", "a.", ".a", "a[x", "a[1]b", "a[q]", "a[=1]", "a]"] {
            assert!(Path::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn looks_up_creates_and_removes() {
        let mut n = parse_yaml("spec:\n  containers:\n  - name: app # main\n    image: a\n");
        let image = Path::parse("spec.containers[name=app].image").unwrap();
        assert_eq!(image.lookup(&n).and_then(Node::as_str), Some("a"));
        *Path::parse("spec.containers[name=side].image")
            .unwrap()
            .create(&mut n)
            .unwrap() = Node::string("b");
        *Path::parse("spec.containers[0].ports[-].containerPort")
            .unwrap()
            .create(&mut n)
            .unwrap() = Node::plain("80");
        assert_eq!(
            krusty_yaml::to_yaml_preserving(&n).unwrap(),
            "spec:\n  containers:\n  - name: app # main\n    image: a\n    ports:\n    - containerPort: 80\n  - name: side\n    image: b\n"
        );
        let err = Path::parse("spec.containers[5].x")
            .unwrap()
            .create(&mut n)
            .unwrap_err();
        assert!(err.to_string().contains("past the end"), "{err}");
        let err = Path::parse("spec.containers.x")
            .unwrap()
            .create(&mut n)
            .unwrap_err();
        assert!(err.to_string().contains("is not a mapping"), "{err}");
        assert!(Path::parse("spec.containers[name=side]")
            .unwrap()
            .remove(&mut n)
            .is_some());
        assert_eq!(
            n.get_path(&["spec", "containers"])
                .and_then(Node::as_seq)
                .map(|s| s.len()),
            Some(1)
        );
    }
}
