//! Scalar resolution: what type an unquoted scalar has.
//!
//! Kustomize reads resources with go-yaml v3 rules (YAML 1.2 booleans, but
//! Go's integer syntax with `0x`, `0o`, `0b`, legacy `0777` octal and `_`
//! separators) and writes them with go-yaml v2 rules (YAML 1.1 booleans such
//! as `yes`/`on`, timestamps, base-60 numbers). [`resolve_input`] gives the
//! first, [`needs_quotes`] answers the second for the emitter.

use crate::node::{Node, ScalarStyle, Tag, Value};

/// The data type of a scalar after resolution.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved<'a> {
    /// A string computed from the source text (a decoded `!!binary`, or a
    /// timestamp in RFC 3339 form as Kustomize prints it).
    Owned(String),
    /// `null`, `~` or empty.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer (wide enough for both `i64` and `u64` ranges).
    Int(i128),
    /// A floating point number.
    Float(f64),
    /// A string.
    Str(&'a str),
}

const NULLS: [&str; 5] = ["", "~", "null", "Null", "NULL"];

/// `text` is one of [`NULLS`] (compared by length first: most text is not).
fn is_null_word(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}
const TRUES_V3: [&str; 3] = ["true", "True", "TRUE"];
const FALSES_V3: [&str; 3] = ["false", "False", "FALSE"];
const TRUES_V2_EXTRA: [&str; 8] = ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON"];
const FALSES_V2_EXTRA: [&str; 8] = ["n", "N", "no", "No", "NO", "off", "Off", "OFF"];
/// The length of the longest word above: longer text is none of them.
const LONGEST_WORD: usize = 5;
const NANS: [&str; 3] = [".nan", ".NaN", ".NAN"];
const INFS: [&str; 6] = [".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"];
const NEG_INFS: [&str; 3] = ["-.inf", "-.Inf", "-.INF"];

/// `true` if the node is a scalar that is null when read.
pub fn is_null(n: &Node) -> bool {
    let Value::Scalar(s) = &n.value else {
        return false;
    };
    match n.tag() {
        Tag::Null => true,
        Tag::None => n.style() == ScalarStyle::Plain && is_null_word(&s.text),
        _ => false,
    }
}

/// Resolves a scalar node as Kustomize's reader (go-yaml v3) types it (a
/// collection, which has no such type, as null).
pub fn resolve_input(n: &Node) -> Resolved<'_> {
    let Value::Scalar(s) = &n.value else {
        return Resolved::Null;
    };
    match n.tag() {
        Tag::None if n.style() == ScalarStyle::Plain => resolve_plain_v3(&s.text),
        Tag::Binary => match decode_base64(&s.text) {
            Some(text) => Resolved::Owned(text),
            None => Resolved::Str(&s.text),
        },
        Tag::Timestamp => match parse_timestamp(&s.text) {
            Some(ts) => Resolved::Owned(ts.rfc3339()),
            None => Resolved::Str(&s.text),
        },
        Tag::Str => Resolved::Str(&s.text),
        Tag::Int | Tag::Float | Tag::Bool | Tag::Null => match resolve_plain_v3(&s.text) {
            Resolved::Str(t) => Resolved::Str(t),
            other => other,
        },
        _ => Resolved::Str(&s.text),
    }
}

/// Why a scalar's text does not suit its explicit core tag, in go-yaml's
/// words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TagError {
    /// `!!binary` text that is not valid base64.
    #[error("!!binary value contains invalid base64 data")]
    InvalidBase64,
    /// Text of another type than its tag asks for.
    #[error(
        "cannot decode {} `{text}` as a {}",
        .found.core_text().unwrap_or_default(),
        .wanted.core_text().unwrap_or_default()
    )]
    Mismatch {
        /// The scalar's text.
        text: String,
        /// The type the text resolves to.
        found: Tag,
        /// The type the tag asks for.
        wanted: Tag,
    },
}

/// Checks a scalar's explicit core tag against its text as go-yaml does
/// when it decodes the scalar: `!!int`, `!!bool`, `!!null` and
/// `!!timestamp` need text of that type (`!!float` takes an integer too),
/// and `!!binary` needs valid base64. The error is go-yaml's message.
pub fn check_tagged_scalar(text: &str, tag: Tag) -> Result<(), TagError> {
    if tag == Tag::Binary {
        if is_go_base64(text) {
            return Ok(());
        }
        return Err(TagError::InvalidBase64);
    }
    let wanted = match tag {
        Tag::Int | Tag::Float | Tag::Bool | Tag::Null | Tag::Timestamp => tag,
        _ => return Ok(()),
    };
    let found = match resolve_plain_v3(text) {
        Resolved::Null => Tag::Null,
        Resolved::Bool(_) => Tag::Bool,
        Resolved::Int(_) => Tag::Int,
        Resolved::Float(_) => Tag::Float,
        // Timestamps are only tried for untagged and `!!timestamp` text.
        Resolved::Owned(_) if wanted == Tag::Timestamp => Tag::Timestamp,
        Resolved::Owned(_) | Resolved::Str(_) => Tag::Str,
    };
    if found == wanted || (wanted == Tag::Float && found == Tag::Int) {
        return Ok(());
    }
    Err(TagError::Mismatch {
        text: text.to_string(),
        found,
        wanted,
    })
}

/// The first scalar in `node` whose text does not suit its explicit core
/// tag, as go-yaml's decoder reports it (see [`check_tagged_scalar`]):
/// such a scalar cannot be parsed, but an operation may write one.
pub fn check_scalar_tags(node: &crate::Node) -> Result<(), TagError> {
    use crate::Value;
    match &node.value {
        Value::Scalar(s) => check_tagged_scalar(&s.text, node.tag()),
        Value::Seq(items) => items.iter().try_for_each(check_scalar_tags),
        Value::Map(entries) => entries.iter().try_for_each(|(k, v)| {
            check_scalar_tags(k)?;
            check_scalar_tags(v)
        }),
    }
}

/// `text` is what Go's standard base64 decoder accepts: padded groups of
/// four characters of the standard alphabet, line breaks ignored.
fn is_go_base64(text: &str) -> bool {
    let mut count = 0usize;
    let mut padding = 0usize;
    for c in text.bytes().filter(|&c| c != b'\n' && c != b'\r') {
        match c {
            b'=' if count % 4 >= 2 => padding += 1,
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' if padding == 0 => {}
            _ => return false,
        }
        count += 1;
    }
    count.is_multiple_of(4) && padding <= 2
}

/// go-yaml v2's resolution of an unquoted scalar decoded into a Go
/// `interface{}`: how Kustomize reads kustomization files (through
/// `sigs.k8s.io/yaml`). It differs from [`resolve_plain_v3`] in YAML 1.1
/// booleans (`yes`, `on`, `n`, ...) and in timestamps, which stay the
/// text they were written as.
pub fn resolve_plain_v2(text: &str) -> Resolved<'_> {
    if text.len() <= LONGEST_WORD {
        if TRUES_V2_EXTRA.contains(&text) {
            return Resolved::Bool(true);
        }
        if FALSES_V2_EXTRA.contains(&text) {
            return Resolved::Bool(false);
        }
    }
    match resolve_plain_v3(text) {
        // A timestamp decoded into `interface{}` stays a string.
        Resolved::Owned(_) => Resolved::Str(text),
        other => other,
    }
}

/// Gives a tree's unquoted scalars the types go-yaml v2 gives them, for
/// YAML that Kustomize decodes with it (through JSON, `sigs.k8s.io/yaml`:
/// kustomization files, JSON 6902 patches) where resources are read with
/// go-yaml v3: YAML 1.1 booleans (`yes`, `on`, `N`, ...) become `true` or
/// `false` (so a string field holding one fails, and a free-form value
/// gets a boolean), and timestamps stay the text they were written as
/// (`2024-01-01`, not a time in RFC 3339 form). A boolean map key becomes
/// the string `"true"` or `"false"`, as JSON keys are strings.
pub fn retype_as_go_yaml_v2(node: &mut Node) {
    retype(node, false);
}

/// Retypes `node` and what it holds; `true` when `node` itself changed.
fn retype(node: &mut Node, key: bool) -> bool {
    let retyped = match &node.value {
        Value::Scalar(s) if node.tag() == Tag::None && node.style() == ScalarStyle::Plain => {
            match (resolve_plain_v2(&s.text), resolve_plain_v3(&s.text)) {
                (Resolved::Bool(b), v3) if key || !matches!(v3, Resolved::Bool(_)) => {
                    Some(Retyped::Bool(b))
                }
                (Resolved::Str(_), Resolved::Owned(_)) => Some(Retyped::Text),
                _ => None,
            }
        }
        _ => None,
    };
    match (&mut node.value, retyped) {
        (Value::Map(entries), _) => {
            let mut keys_changed = false;
            for (k, v) in entries.iter_mut() {
                keys_changed |= retype(k, true);
                retype(v, false);
            }
            // Keys that became the same (`on` and `yes`, both "true"): the
            // last one stays, as when JSON fills a map.
            let mut i = 0;
            while keys_changed && i < entries.len() {
                let key = entries[i].0.key_str();
                if entries[i + 1..].iter().any(|(k, _)| k.key_str() == key) {
                    entries.remove(i);
                } else {
                    i += 1;
                }
            }
        }
        (Value::Seq(items), _) => {
            for item in items.iter_mut() {
                retype(item, false);
            }
        }
        (Value::Scalar(s), Some(Retyped::Bool(b))) => {
            s.text = if b { "true" } else { "false" }.into();
            if key {
                node.set_tag(Tag::Str);
            }
            return true;
        }
        (Value::Scalar(_), Some(Retyped::Text)) => {
            node.set_tag(Tag::Str);
            return true;
        }
        (Value::Scalar(_), None) => {}
    }
    false
}

/// How [`retype_as_go_yaml_v2`] changes a scalar.
enum Retyped {
    Bool(bool),
    Text,
}

/// go-yaml v3's resolution of an unquoted scalar.
pub fn resolve_plain_v3(text: &str) -> Resolved<'_> {
    let Some(&first) = text.as_bytes().first() else {
        return Resolved::Null;
    };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
            if text.len() > LONGEST_WORD {
                Resolved::Str(text)
            } else if NULLS.contains(&text) {
                Resolved::Null
            } else if TRUES_V3.contains(&text) {
                Resolved::Bool(true)
            } else if FALSES_V3.contains(&text) {
                Resolved::Bool(false)
            } else {
                Resolved::Str(text)
            }
        }
        b'.' => resolve_special_float(text)
            .or_else(|| text.parse::<f64>().ok().map(Resolved::Float))
            .unwrap_or(Resolved::Str(text)),
        b'+' | b'-' | b'0'..=b'9' => {
            if let Some(f) = resolve_special_float(text) {
                return f;
            }
            if let Some(ts) = parse_timestamp(text) {
                // Read as a time and printed by JSON in RFC 3339 form.
                return Resolved::Owned(ts.rfc3339());
            }
            resolve_number(text).unwrap_or(Resolved::Str(text))
        }
        _ => Resolved::Str(text),
    }
}

fn resolve_special_float(text: &str) -> Option<Resolved<'static>> {
    if NANS.contains(&text) {
        Some(Resolved::Float(f64::NAN))
    } else if INFS.contains(&text) {
        Some(Resolved::Float(f64::INFINITY))
    } else if NEG_INFS.contains(&text) {
        Some(Resolved::Float(f64::NEG_INFINITY))
    } else {
        None
    }
}

/// Integer or float by Go's rules, shared by v2 and v3.
fn resolve_number(text: &str) -> Option<Resolved<'static>> {
    let plain: std::borrow::Cow<str> = if text.contains('_') {
        text.replace('_', "").into()
    } else {
        text.into()
    };
    if let Some(i) = go_parse_int(&plain) {
        return Some(Resolved::Int(i));
    }
    if is_yaml_float(&plain) {
        // Go's ParseFloat rejects values out of range; Rust gives infinity.
        if let Ok(f) = plain.parse::<f64>().map_err(|_| ()).and_then(|f: f64| {
            if f.is_finite() {
                Ok(f)
            } else {
                Err(())
            }
        }) {
            return Some(Resolved::Float(f));
        }
    }
    let (neg, rest) = match plain.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, plain.as_ref()),
    };
    if let Some(bin) = rest.strip_prefix("0b") {
        if let Ok(v) = i128::from_str_radix(bin, 2) {
            let v = if neg { -v } else { v };
            if (i64::MIN as i128..=u64::MAX as i128).contains(&v) {
                return Some(Resolved::Int(v));
            }
        }
    }
    None
}

/// Go's `strconv.ParseInt(s, 0, 64)` falling back to `ParseUint`: sign, base
/// prefixes `0x`, `0o`, `0b`, and a leading `0` for octal.
pub fn go_parse_int(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = |p: &str| body.len() > 2 && body.as_bytes()[..2].eq_ignore_ascii_case(p.as_bytes());
    let (radix, digits) = if lower("0x") {
        (16, &body[2..])
    } else if lower("0o") {
        (8, &body[2..])
    } else if lower("0b") {
        (2, &body[2..])
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    let magnitude = u128::from_str_radix(digits, radix).ok()?;
    if neg {
        (magnitude <= i64::MAX as u128 + 1).then(|| -(magnitude as i128))
    } else {
        (magnitude <= u64::MAX as u128).then_some(magnitude as i128)
    }
}

/// The YAML float pattern `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+') | Some(b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e') | Some(b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+') | Some(b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// A timestamp in one of go-yaml's accepted layouts.
#[derive(Debug, Clone, PartialEq)]
pub struct Timestamp {
    date: (u32, u32, u32),
    time: (u32, u32, u32),
    /// Fraction digits as written (at most nine are kept).
    fraction: String,
    /// Offset from UTC in minutes; `None` for UTC.
    offset: Option<i32>,
}

impl Timestamp {
    /// Go's RFC 3339 form with nanoseconds: trailing zeros of the fraction
    /// dropped, `Z` for UTC.
    pub fn rfc3339(&self) -> String {
        let (y, mo, d) = self.date;
        let (h, mi, s) = self.time;
        let mut out = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}");
        let frac: String = self.fraction.chars().take(9).collect();
        let frac = frac.trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
        match self.offset {
            None | Some(0) => out.push('Z'),
            Some(m) => {
                let sign = if m < 0 { '-' } else { '+' };
                out.push_str(&format!("{sign}{:02}:{:02}", m.abs() / 60, m.abs() % 60));
            }
        }
        out
    }
}

/// `true` if go-yaml reads the text as a timestamp.
pub fn looks_like_timestamp(s: &str) -> bool {
    parse_timestamp(s).is_some()
}

/// Parses go-yaml's timestamp layouts: `YYYY-M-D`, `YYYY-M-D h:m:s[.f]`, and
/// `YYYY-M-DTh:m:s[.f]` (or `t`) followed by `Z` or `±hh:mm`.
pub fn parse_timestamp(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 8 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let mut i = 5;
    let month = take_number(b, &mut i, 2)?;
    if b.get(i) != Some(&b'-') {
        return None;
    }
    i += 1;
    let day = take_number(b, &mut i, 2)?;
    let year: u32 = s[..4].parse().ok()?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut ts = Timestamp {
        date: (year, month, day),
        time: (0, 0, 0),
        fraction: String::new(),
        offset: None,
    };
    if i == b.len() {
        return Some(ts);
    }
    let sep = b[i];
    if !matches!(sep, b'T' | b't' | b' ') {
        return None;
    }
    i += 1;
    let hour = take_number(b, &mut i, 2)?;
    if b.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    let min = take_number(b, &mut i, 2)?;
    if b.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    let sec = take_number(b, &mut i, 2)?;
    if hour > 23 || min > 59 || sec > 59 {
        return None;
    }
    ts.time = (hour, min, sec);
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return None;
        }
        ts.fraction = s[start..i].to_string();
    }
    if sep == b' ' {
        return (i == b.len()).then_some(ts);
    }
    match b.get(i)? {
        b'Z' if i + 1 == b.len() => Some(ts),
        c @ (b'+' | b'-') => {
            let rest = &b[i + 1..];
            let ok = rest.len() == 5
                && rest[..2].iter().all(u8::is_ascii_digit)
                && rest[2] == b':'
                && rest[3..].iter().all(u8::is_ascii_digit);
            if !ok {
                return None;
            }
            let h: i32 = s[i + 1..i + 3].parse().ok()?;
            let m: i32 = s[i + 4..i + 6].parse().ok()?;
            let total = h * 60 + m;
            ts.offset = Some(if *c == b'-' { -total } else { total });
            Some(ts)
        }
        _ => None,
    }
}

/// Decodes standard base64 (as `!!binary` holds it); `None` if the text is
/// not base64 or the bytes are not UTF-8.
fn decode_base64(text: &str) -> Option<String> {
    String::from_utf8(decode_base64_bytes(text)?).ok()
}

/// Decodes standard base64 (whitespace ignored, decoding stops at the
/// first `=`); `None` if the text holds another character.
pub fn decode_base64_bytes(text: &str) -> Option<Vec<u8>> {
    let mut bits = 0u32;
    let mut nbits = 0;
    let mut out = Vec::new();
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(v);
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out.push((bits >> nbits) as u8);
            bits &= (1 << nbits) - 1;
        }
    }
    Some(out)
}

fn take_number(b: &[u8], i: &mut usize, max_len: usize) -> Option<u32> {
    let start = *i;
    while *i < b.len() && *i - start < max_len && b[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i == start {
        return None;
    }
    std::str::from_utf8(&b[start..*i]).ok()?.parse().ok()
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `true` when go-yaml v2 must quote this string: written plain it would read
/// back as something other than the same string.
pub fn needs_quotes(text: &str) -> bool {
    let Some(&first) = text.as_bytes().first() else {
        return true;
    };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
            text.len() <= LONGEST_WORD
                && (NULLS.contains(&text)
                    || TRUES_V3.contains(&text)
                    || FALSES_V3.contains(&text)
                    || TRUES_V2_EXTRA.contains(&text)
                    || FALSES_V2_EXTRA.contains(&text))
        }
        b'.' => resolve_special_float(text).is_some() || text.parse::<f64>().is_ok(),
        b'+' | b'-' | b'0'..=b'9' => {
            resolve_special_float(text).is_some()
                || (first.is_ascii_digit() && looks_like_timestamp(text))
                || resolve_number(text).is_some()
                || is_base60_float(text)
        }
        _ => false,
    }
}

/// `[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?`
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+') | Some(b'-')) {
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() && i - start < 2 {
            i += 1;
        }
        let group = &b[start..i];
        let ok = match group.len() {
            1 => true,
            2 => group[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_is_base64_as_go_decodes_it() {
        for good in ["", "aGk=", "aGVsbG8=", "aGVs\nbG8=", "aA==", "aGVsbG8h\r\n"] {
            assert!(is_go_base64(good), "{good:?}");
        }
        for bad in [
            "aGVsbG8",
            "aGVs bG8=",
            "a===",
            "aA=a",
            "aA==aGk=",
            "!!!",
            "=",
        ] {
            assert!(!is_go_base64(bad), "{bad:?}");
        }
    }

    #[test]
    fn core_tags_check_their_text() {
        assert!(check_tagged_scalar("1", Tag::Float).is_ok());
        assert!(check_tagged_scalar("2001-12-14", Tag::Timestamp).is_ok());
        assert!(check_tagged_scalar("x", Tag::Str).is_ok());
        assert_eq!(
            check_tagged_scalar("2001-12-14", Tag::Int)
                .unwrap_err()
                .to_string(),
            "cannot decode !!str `2001-12-14` as a !!int"
        );
        assert_eq!(
            check_tagged_scalar("", Tag::Int).unwrap_err().to_string(),
            "cannot decode !!null `` as a !!int"
        );
    }

    #[test]
    fn no_special_word_is_longer_than_the_length_gate() {
        let words = NULLS.iter().chain(&TRUES_V3).chain(&FALSES_V3);
        let words = words.chain(&TRUES_V2_EXTRA).chain(&FALSES_V2_EXTRA);
        assert!(words.map(|w| w.len()).max() == Some(LONGEST_WORD));
    }

    #[test]
    fn v3_input_types() {
        assert_eq!(resolve_plain_v3("yes"), Resolved::Str("yes"));
        assert_eq!(resolve_plain_v3("True"), Resolved::Bool(true));
        assert_eq!(resolve_plain_v3("0x1F"), Resolved::Int(31));
        assert_eq!(resolve_plain_v3("0644"), Resolved::Int(420));
        assert_eq!(resolve_plain_v3("1_000"), Resolved::Int(1000));
        assert_eq!(resolve_plain_v3("08"), Resolved::Float(8.0));
        assert_eq!(
            resolve_plain_v3("2001-12-14"),
            Resolved::Owned("2001-12-14T00:00:00Z".into())
        );
        assert_eq!(
            resolve_plain_v3("2001-12-14t21:59:43.10-05:00"),
            Resolved::Owned("2001-12-14T21:59:43.1-05:00".into())
        );
        assert_eq!(
            resolve_plain_v3("2001-12-14T21:59:43"),
            Resolved::Str("2001-12-14T21:59:43")
        );
        assert_eq!(resolve_plain_v3("-"), Resolved::Str("-"));
        assert_eq!(resolve_plain_v3(".5"), Resolved::Float(0.5));
        assert_eq!(resolve_plain_v3("~"), Resolved::Null);
    }

    #[test]
    fn v2_quoting() {
        for s in [
            "",
            "yes",
            "On",
            "n",
            "123",
            "1e3",
            "0x1",
            "2001-12-14",
            "1:20",
            ".inf",
            "null",
            "08",
        ] {
            assert!(needs_quotes(s), "{s} should need quotes");
        }
        for s in [
            "<<",
            "abc",
            "1.2.3",
            "2001-13-01",
            "-",
            "1:70",
            "v1",
            "1e",
            "0xg",
        ] {
            assert!(!needs_quotes(s), "{s} should not need quotes");
        }
    }
}
