//! The syntax check of Go's JSON decoder, with its messages. Kustomize
//! decodes an op list that starts with `[` as JSON, strictly (flow YAML
//! such as `[{op: add}]` fails); any other text is YAML.

use krusty_yaml::Pos;

/// Why `text` is not one JSON value, in Go's words (`invalid character
/// 'o' looking for beginning of object key string`), and where; `None`
/// when it is one.
pub fn error(text: &str) -> Option<(String, Pos)> {
    let mut scan = Scan {
        b: text.as_bytes(),
        i: 0,
    };
    let outcome = scan.value().and_then(|()| {
        scan.blanks();
        match scan.peek() {
            None => Ok(()),
            Some(c) => Err(scan.invalid(c, "after top-level value")),
        }
    });
    outcome
        .err()
        .map(|message| (message, position(text, scan.i)))
}

/// The line and column (in characters) of byte `offset` of `text`.
fn position(text: &str, offset: usize) -> Pos {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Pos {
        line: before.matches('\n').count() as u32 + 1,
        col: before[line_start..].chars().count() as u32 + 1,
    }
}

struct Scan<'t> {
    b: &'t [u8],
    /// The byte being looked at (where an error is).
    i: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// The byte at the cursor, or Go's error for the end of the input.
    fn next(&mut self) -> Result<u8, String> {
        self.peek()
            .ok_or_else(|| "unexpected end of JSON input".to_string())
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn invalid(&self, c: u8, context: &str) -> String {
        format!("invalid character {} {context}", quote_char(c))
    }

    fn value(&mut self) -> Result<(), String> {
        self.blanks();
        match self.next()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            c => Err(self.invalid(c, "looking for beginning of value")),
        }
    }

    fn object(&mut self) -> Result<(), String> {
        self.i += 1;
        self.blanks();
        if self.next()? == b'}' {
            self.i += 1;
            return Ok(());
        }
        loop {
            match self.next()? {
                b'"' => self.string()?,
                c => return Err(self.invalid(c, "looking for beginning of object key string")),
            }
            self.blanks();
            match self.next()? {
                b':' => self.i += 1,
                c => return Err(self.invalid(c, "after object key")),
            }
            self.value()?;
            self.blanks();
            match self.next()? {
                b',' => {
                    self.i += 1;
                    self.blanks();
                }
                b'}' => {
                    self.i += 1;
                    return Ok(());
                }
                c => return Err(self.invalid(c, "after object key:value pair")),
            }
        }
    }

    fn array(&mut self) -> Result<(), String> {
        self.i += 1;
        self.blanks();
        if self.next()? == b']' {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.blanks();
            match self.next()? {
                b',' => self.i += 1,
                b']' => {
                    self.i += 1;
                    return Ok(());
                }
                c => return Err(self.invalid(c, "after array element")),
            }
        }
    }

    fn string(&mut self) -> Result<(), String> {
        self.i += 1;
        loop {
            match self.next()? {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.i += 1;
                    match self.next()? {
                        b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => self.i += 1,
                        b'u' => {
                            self.i += 1;
                            for _ in 0..4 {
                                match self.next()? {
                                    c if c.is_ascii_hexdigit() => self.i += 1,
                                    c => {
                                        return Err(
                                            self.invalid(c, "in \\u hexadecimal character escape")
                                        )
                                    }
                                }
                            }
                        }
                        c => return Err(self.invalid(c, "in string escape code")),
                    }
                }
                c if c < 0x20 => return Err(self.invalid(c, "in string literal")),
                _ => self.i += 1,
            }
        }
    }

    fn number(&mut self) -> Result<(), String> {
        if self.peek() == Some(b'-') {
            self.i += 1;
            match self.next()? {
                b'0'..=b'9' => {}
                c => return Err(self.invalid(c, "in numeric literal")),
            }
        }
        if self.next()? == b'0' {
            self.i += 1;
        } else {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            match self.next()? {
                b'0'..=b'9' => self.digits(),
                c => return Err(self.invalid(c, "after decimal point in numeric literal")),
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            match self.next()? {
                b'0'..=b'9' => self.digits(),
                c => return Err(self.invalid(c, "in exponent of numeric literal")),
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &str) -> Result<(), String> {
        self.i += 1;
        for expected in word.bytes().skip(1) {
            match self.next()? {
                c if c == expected => self.i += 1,
                c => {
                    let context = format!("in literal {word} (expecting {})", quote_char(expected));
                    return Err(self.invalid(c, &context));
                }
            }
        }
        Ok(())
    }
}

/// Go's `quoteChar`: a byte in single quotes, escaped as Go quotes a
/// string of that one character (a byte above 0x7F stands for the
/// character with that number).
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_string(),
        b'"' => "'\"'".to_string(),
        0x07 => r"'\a'".to_string(),
        0x08 => r"'\b'".to_string(),
        0x0C => r"'\f'".to_string(),
        b'\n' => r"'\n'".to_string(),
        b'\r' => r"'\r'".to_string(),
        b'\t' => r"'\t'".to_string(),
        0x0B => r"'\v'".to_string(),
        b'\\' => r"'\\'".to_string(),
        0x00..=0x1F | 0x7F => format!(r"'\x{c:02x}'"),
        0x80..=0xA0 | 0xAD => format!(r"'\u{c:04x}'"),
        _ => format!("'{}'", char::from(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_gos() {
        let cases = [
            (
                "[{op: add}]",
                "invalid character 'o' looking for beginning of object key string",
                (1, 3),
            ),
            (
                "[1,]",
                "invalid character ']' looking for beginning of value",
                (1, 4),
            ),
            ("[1 2]", "invalid character '2' after array element", (1, 4)),
            (
                "[{\"a\" 1}]",
                "invalid character '1' after object key",
                (1, 7),
            ),
            (
                "[{\"a\": 1 \"b\"}]",
                "invalid character '\"' after object key:value pair",
                (1, 10),
            ),
            (
                "[1] x",
                "invalid character 'x' after top-level value",
                (1, 5),
            ),
            (
                "[tru]",
                "invalid character ']' in literal true (expecting 'e')",
                (1, 5),
            ),
            ("[-x]", "invalid character 'x' in numeric literal", (1, 3)),
            (
                "[1.]",
                "invalid character ']' after decimal point in numeric literal",
                (1, 4),
            ),
            (
                "[1e+]",
                "invalid character ']' in exponent of numeric literal",
                (1, 5),
            ),
            (
                "[\"\\x\"]",
                "invalid character 'x' in string escape code",
                (1, 4),
            ),
            (
                "[\"a\tb\"]",
                "invalid character '\\t' in string literal",
                (1, 4),
            ),
            ("[\n  {", "unexpected end of JSON input", (2, 4)),
        ];
        for (text, message, (line, col)) in cases {
            assert_eq!(
                error(text),
                Some((message.to_string(), Pos { line, col })),
                "{text:?}"
            );
        }
        for ok in [
            "[]",
            " [ {\"op\": \"add\", \"value\": [1.5e3, -0, true, null]} ] ",
            "[\"\\u00e9\"]",
        ] {
            assert_eq!(error(ok), None, "{ok:?}");
        }
    }
}
