//! File name patterns as Go's `filepath.Match` and `filepath.Glob` read
//! them (Kustomize's `edit` commands expand their arguments with these):
//! `*` (any run of characters but `/`), `?` (one such character),
//! `[...]` classes with ranges and `^` negation, and `\` escapes.

use std::path::Path;

use crate::error::{EditError, EditResult};

/// Go's `filepath.ErrBadPattern`.
const BAD_PATTERN: &str = "syntax error in pattern";

/// `name` matches `pattern` as a whole (Go's `filepath.Match`).
pub fn matches(pattern: &str, name: &str) -> EditResult<bool> {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Validate the whole pattern first: Go reports a bad pattern even when
    // the name is decided earlier.
    check(&p)?;
    Ok(match_from(&p, &n))
}

/// The pattern has a character that makes it a pattern (Go's `hasMeta`).
pub fn has_meta(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '\\'])
}

/// The paths under `base` that `pattern` names, as written relative to
/// `base` (Go's `filepath.Glob` run in `base`): sorted by directory, a
/// pattern without metacharacters names itself when it exists.
pub fn glob(base: &Path, pattern: &str) -> EditResult<Vec<String>> {
    if !has_meta(pattern) {
        let exists = std::fs::symlink_metadata(base.join(pattern)).is_ok();
        return Ok(if exists {
            vec![pattern.to_string()]
        } else {
            Vec::new()
        });
    }
    let (dir, file) = match pattern.rfind('/') {
        Some(i) => (&pattern[..i + 1], &pattern[i + 1..]),
        None => ("", pattern),
    };
    let dir_clean = dir.trim_end_matches('/');
    let dirs = if dir.is_empty() {
        vec![String::new()]
    } else if has_meta(dir_clean) {
        glob(base, dir_clean)?
    } else {
        vec![dir_clean.to_string()]
    };
    check(&file.chars().collect::<Vec<_>>())?;
    let mut out = Vec::new();
    for d in dirs {
        let full = if d.is_empty() {
            base.to_path_buf()
        } else {
            base.join(&d)
        };
        let Ok(entries) = std::fs::read_dir(&full) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            if matches(file, &name)? {
                out.push(if d.is_empty() {
                    name
                } else {
                    format!("{}/{name}", d.trim_end_matches('/'))
                });
            }
        }
    }
    Ok(out)
}

/// Fails on a pattern Go's `filepath.Match` calls malformed.
fn check(p: &[char]) -> EditResult<()> {
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' => {
                if i + 1 >= p.len() {
                    return Err(EditError::new(BAD_PATTERN));
                }
                i += 2;
            }
            '[' => i = class_end(p, i)?,
            _ => i += 1,
        }
    }
    Ok(())
}

/// The index after the class starting at `start` (`[`).
fn class_end(p: &[char], start: usize) -> EditResult<usize> {
    let mut i = start + 1;
    if p.get(i) == Some(&'^') {
        i += 1;
    }
    let mut first = true;
    loop {
        match p.get(i) {
            None => return Err(EditError::new(BAD_PATTERN)),
            Some(']') if !first => return Ok(i + 1),
            Some(_) => {
                let (_, next) = class_char(p, i)?;
                i = next;
                if p.get(i) == Some(&'-') {
                    let (_, next) = class_char(p, i + 1)?;
                    i = next;
                }
            }
        }
        first = false;
    }
}

/// One character of a class (escapes read), and the index after it.
fn class_char(p: &[char], i: usize) -> EditResult<(char, usize)> {
    match p.get(i) {
        None | Some('-') | Some(']') => Err(EditError::new(BAD_PATTERN)),
        Some('\\') => p
            .get(i + 1)
            .map(|&c| (c, i + 2))
            .ok_or_else(|| EditError::new(BAD_PATTERN)),
        Some(&c) => Ok((c, i + 1)),
    }
}

/// Matches a checked pattern against a name.
fn match_from(p: &[char], n: &[char]) -> bool {
    let Some(&c) = p.first() else {
        return n.is_empty();
    };
    match c {
        '*' => (0..=n.len())
            .take_while(|&k| k == 0 || n[k - 1] != '/')
            .any(|k| match_from(&p[1..], &n[k..])),
        '?' => n.first().is_some_and(|&x| x != '/') && match_from(&p[1..], &n[1..]),
        '[' => {
            let Some(&x) = n.first() else { return false };
            let Ok(end) = class_end(p, 0) else {
                return false;
            };
            x != '/' && class_matches(&p[1..end - 1], x) && match_from(&p[end..], &n[1..])
        }
        '\\' => n.first() == p.get(1) && match_from(&p[2..], &n[1..]),
        _ => n.first() == Some(&c) && match_from(&p[1..], &n[1..]),
    }
}

/// `x` is in the class body `body` (between `[` and `]`).
fn class_matches(body: &[char], x: char) -> bool {
    let (negated, body) = match body.first() {
        Some('^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut i = 0;
    let mut found = false;
    while i < body.len() {
        let Ok((lo, next)) = class_char(body, i) else {
            break;
        };
        i = next;
        let mut hi = lo;
        if body.get(i) == Some(&'-') {
            if let Ok((h, next)) = class_char(body, i + 1) {
                hi = h;
                i = next;
            }
        }
        found |= lo <= x && x <= hi;
    }
    found != negated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_as_go_does() {
        let yes = |p, n| assert!(matches(p, n).expect("valid"), "{p} {n}");
        let no = |p, n| assert!(!matches(p, n).expect("valid"), "{p} {n}");
        yes("*.yaml", "a.yaml");
        no("*.yaml", "d/a.yaml");
        yes("d/*.yaml", "d/a.yaml");
        yes("a?c", "abc");
        yes("[a-c]x", "bx");
        no("[^a-c]x", "bx");
        yes("\\*", "*");
        assert!(matches("[a", "a").is_err());
        assert!(matches("a\\", "a").is_err());
    }
}
