//! The few Go standard library parsers and printers whose exact behaviour
//! decides how Kustomize reads a remote URL's query (`url.ParseQuery`,
//! `strconv.Atoi`, `strconv.ParseBool`, `time.ParseDuration`) and how it
//! prints a duration in a message (`time.Duration.String`).

use std::time::Duration;

/// `url.ParseQuery`: the query's parameters in order, percent-decoded, `+`
/// read as a space. `None` where Go reports an error (a `;` separator or a
/// bad escape), in which case Kustomize uses its defaults for everything.
pub fn parse_query(query: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    for pair in query.split('&') {
        if pair.is_empty() {
            continue;
        }
        if pair.contains(';') {
            return None;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        out.push((unescape(key)?, unescape(value)?));
    }
    Some(out)
}

/// Query-component unescaping: `%XX` and `+`.
fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let text = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(text, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    // Go keeps invalid UTF-8 bytes; a lossy string is close enough for
    // values that only ever name refs.
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// `strconv.Atoi`: an optional sign and decimal digits.
pub fn atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `strconv.ParseBool`.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// `time.ParseDuration` for the positive durations Kustomize accepts
/// (`None` for anything else, including zero and negative ones).
pub fn parse_duration(s: &str) -> Option<Duration> {
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return None;
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count();
        let number = &rest[..number_len];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return None;
        }
        let value: f64 = number.parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(rest.len(), |(i, _)| i);
        let nanos_per_unit = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += value * nanos_per_unit;
    }
    if negative || total < 1.0 {
        return None;
    }
    Some(Duration::from_nanos(total as u64))
}

/// `time.Duration.String`: `27s`, `1m30s`, `1h0m0s`, `1.5s`, `500ms`.
pub fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}\u{b5}s", fraction(nanos, 1_000));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", fraction(nanos, 1_000_000));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = (nanos / 60_000_000_000) % 60;
    let seconds = fraction(nanos % 60_000_000_000, 1_000_000_000);
    match (hours, minutes) {
        (0, 0) => format!("{seconds}s"),
        (0, m) => format!("{m}m{seconds}s"),
        (h, m) => format!("{h}h{m}m{seconds}s"),
    }
}

/// `value / unit` printed with the fraction Go prints (no trailing zeros).
fn fraction(value: u128, unit: u128) -> String {
    let whole = value / unit;
    let rest = value % unit;
    if rest == 0 {
        return whole.to_string();
    }
    let width = unit.to_string().len() - 1;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_print_as_go_prints_them() {
        let cases = [
            (Duration::from_secs(27), "27s"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(3600), "1h0m0s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(500), "500ms"),
            (Duration::from_micros(1), "1\u{b5}s"),
            (Duration::from_nanos(5), "5ns"),
        ];
        for (d, text) in cases {
            assert_eq!(format_duration(d), text);
        }
    }

    #[test]
    fn durations_parse_as_go_parses_them() {
        assert_eq!(parse_duration("61s"), Some(Duration::from_secs(61)));
        assert_eq!(parse_duration("1m30s"), Some(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5h"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        for bad in ["", "0", "-1s", "1", "s", "1x", "1..2s", "+"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn queries_parse_as_go_parses_them() {
        assert_eq!(
            parse_query("ref=a%2Fb&version=x+y&flag"),
            Some(vec![
                ("ref".into(), "a/b".into()),
                ("version".into(), "x y".into()),
                ("flag".into(), String::new())
            ])
        );
        assert_eq!(parse_query("ref=a;b"), None);
        assert_eq!(parse_query("ref=%zz"), None);
        assert_eq!(atoi("+12"), Some(12));
        assert_eq!(atoi("12s"), None);
        assert_eq!(parse_bool("True"), Some(true));
        assert_eq!(parse_bool("yes"), None);
    }
}
