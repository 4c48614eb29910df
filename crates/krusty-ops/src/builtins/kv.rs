//! Key/value sources of ConfigMap and Secret generators: literals
//! (`key=value`), files (`[key=]path`) and env files.

use crate::error::{OpError, OpResult};
use crate::files::FileSource;

/// A key and its (raw) value.
pub type Pair = (String, Vec<u8>);

/// Parses a `key=value` literal; matching quotes around the value are removed.
pub fn literal(source: &str) -> OpResult<Pair> {
    let invalid = || {
        OpError::new(format!(
            "invalid literal source {source}, expected key=value"
        ))
    };
    if source.starts_with('=') {
        return Err(invalid());
    }
    let (k, v) = source.split_once('=').ok_or_else(invalid)?;
    Ok((k.to_string(), unquote(v).as_bytes().to_vec()))
}

fn unquote(v: &str) -> &str {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// Splits a file source into its key and path; the key defaults to the
/// file's base name.
pub fn file_source(source: &str) -> OpResult<(String, String)> {
    match source.matches('=').count() {
        0 => {
            let base = source.rsplit('/').next().unwrap_or(source);
            Ok((base.to_string(), source.to_string()))
        }
        1 if source.starts_with('=') => Err(OpError::new(format!(
            "key name for file path {} missing",
            &source[1..]
        ))),
        1 if source.ends_with('=') => Err(OpError::new(format!(
            "file path for key name {} missing",
            &source[..source.len() - 1]
        ))),
        1 => {
            let (k, p) = source.split_once('=').unwrap_or_default();
            Ok((k.to_string(), p.to_string()))
        }
        _ => Err(OpError::new(format!(
            "source {source:?} key name or file path contains '='"
        ))),
    }
}

/// Reads a file source.
pub fn file(files: &dyn FileSource, source: &str) -> OpResult<Pair> {
    let (key, path) = file_source(source)?;
    Ok((key, files.read_bytes(&path)?))
}

/// Parses env-file content: `KEY=value` lines; blank lines and `#`
/// comments are skipped; a line with no `=` is a key with an empty value.
/// Each pair comes with its line number.
pub fn env_lines(content: &[u8]) -> OpResult<Vec<(u32, Pair)>> {
    let mut out = Vec::new();
    for (i, raw) in content.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(mut line) = std::str::from_utf8(raw) else {
            return Err(OpError::new(format!(
                "line {} has invalid utf8 bytes",
                i + 1
            )));
        };
        if i == 0 {
            line = line.strip_prefix('\u{feff}').unwrap_or(line);
        }
        let line = line.trim_start();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        // Kustomize does not validate keys: whatever precedes `=` is the
        // key (spaces included); a line without a key is skipped.
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k, v.to_string()),
            None => (line, String::new()),
        };
        if key.is_empty() {
            continue;
        }
        out.push((i as u32 + 1, (key.to_string(), value.into_bytes())));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_split_at_the_first_equals_and_lose_quotes() {
        assert_eq!(literal("a=b=c").unwrap(), ("a".into(), b"b=c".to_vec()));
        assert_eq!(literal("a='x y'").unwrap(), ("a".into(), b"x y".to_vec()));
        assert!(literal("=b").is_err());
        assert!(literal("ab").is_err());
    }

    #[test]
    fn file_sources() {
        assert_eq!(
            file_source("dir/app.properties").unwrap(),
            ("app.properties".into(), "dir/app.properties".into())
        );
        assert_eq!(
            file_source("k=dir/f").unwrap(),
            ("k".into(), "dir/f".into())
        );
        assert!(file_source("=f").is_err());
        assert!(file_source("k=").is_err());
        assert!(file_source("a=b=c").is_err());
    }

    #[test]
    fn env_files() {
        let pairs = env_lines(b"# c\n\n  A=1\nB=x=y\r\n").unwrap();
        assert_eq!(
            pairs,
            vec![
                (3, ("A".into(), b"1".to_vec())),
                (4, ("B".into(), b"x=y".to_vec()))
            ]
        );
        let unchecked = env_lines(b"1A=x\nA B=y\n=skipped\n").unwrap();
        assert_eq!(unchecked[0].1 .0, "1A");
        assert_eq!(unchecked[1].1 .0, "A B");
        assert_eq!(unchecked.len(), 2);
        assert!(env_lines(b"A=\xff\n").is_err());
    }
}
