//! The syntax check of Go's JSON decoder, with its messages. Kustomize
//! decodes an op list that starts with `[` as JSON, strictly (flow YAML
//! such as `[{op: add}]` fails); any other text is YAML.

use krusty_yaml::Pos;

/// Why a text is not one JSON value, in the words of Go's JSON decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum JsonSyntaxError {
    /// The text ends inside a value.
    #[error("unexpected end of JSON input")]
    UnexpectedEnd,
    /// A byte that cannot stand where it is (`invalid character 'o'
    /// looking for beginning of object key string`).
    #[error("invalid character {} {context}", quote_char(*.found))]
    InvalidCharacter {
        /// The byte found.
        found: u8,
        /// What the decoder was reading when it found the byte.
        context: Context,
    },
}

/// What Go's JSON decoder was reading when it found an invalid character,
/// printed in its words (`looking for beginning of value`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// The start of a value.
    BeginningOfValue,
    /// The start of an object key.
    BeginningOfObjectKey,
    /// What follows an object key (a `:`).
    AfterObjectKey,
    /// What follows an object entry (a `,` or `}`).
    AfterObjectEntry,
    /// What follows an array element (a `,` or `]`).
    AfterArrayElement,
    /// What follows the whole value (only blanks).
    AfterTopLevelValue,
    /// The text of a string.
    StringLiteral,
    /// The character after a `\` in a string.
    StringEscape,
    /// The hexadecimal digits of a `\u` escape.
    UnicodeEscape,
    /// A number's digits.
    NumericLiteral,
    /// The digits after a number's decimal point.
    AfterDecimalPoint,
    /// The digits of a number's exponent.
    Exponent,
    /// The literal `word` (`true`, `false`, `null`), which needs
    /// `expecting` next.
    Literal {
        /// The literal being read.
        word: &'static str,
        /// The byte the literal needs next.
        expecting: u8,
    },
}

impl std::fmt::Display for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Context::BeginningOfValue => "looking for beginning of value",
            Context::BeginningOfObjectKey => "looking for beginning of object key string",
            Context::AfterObjectKey => "after object key",
            Context::AfterObjectEntry => "after object key:value pair",
            Context::AfterArrayElement => "after array element",
            Context::AfterTopLevelValue => "after top-level value",
            Context::StringLiteral => "in string literal",
            Context::StringEscape => "in string escape code",
            Context::UnicodeEscape => "in \\u hexadecimal character escape",
            Context::NumericLiteral => "in numeric literal",
            Context::AfterDecimalPoint => "after decimal point in numeric literal",
            Context::Exponent => "in exponent of numeric literal",
            Context::Literal { word, expecting } => {
                return write!(
                    f,
                    "in literal {word} (expecting {})",
                    quote_char(*expecting)
                );
            }
        })
    }
}

/// Why `text` is not one JSON value (`invalid character 'o' looking for
/// beginning of object key string`), and where; `None` when it is one.
pub fn error(text: &str) -> Option<(JsonSyntaxError, Pos)> {
    let mut scan = Scan {
        b: text.as_bytes(),
        i: 0,
    };
    let outcome = scan.value().and_then(|()| {
        scan.blanks();
        match scan.peek() {
            None => Ok(()),
            Some(c) => Err(invalid(c, Context::AfterTopLevelValue)),
        }
    });
    outcome.err().map(|e| (e, position(text, scan.i)))
}

/// The error for byte `c` found while reading `context`.
fn invalid(c: u8, context: Context) -> JsonSyntaxError {
    JsonSyntaxError::InvalidCharacter { found: c, context }
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
    fn next(&mut self) -> Result<u8, JsonSyntaxError> {
        self.peek().ok_or(JsonSyntaxError::UnexpectedEnd)
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<(), JsonSyntaxError> {
        self.blanks();
        match self.next()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            c => Err(invalid(c, Context::BeginningOfValue)),
        }
    }

    fn object(&mut self) -> Result<(), JsonSyntaxError> {
        self.i += 1;
        self.blanks();
        if self.next()? == b'}' {
            self.i += 1;
            return Ok(());
        }
        loop {
            match self.next()? {
                b'"' => self.string()?,
                c => return Err(invalid(c, Context::BeginningOfObjectKey)),
            }
            self.blanks();
            match self.next()? {
                b':' => self.i += 1,
                c => return Err(invalid(c, Context::AfterObjectKey)),
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
                c => return Err(invalid(c, Context::AfterObjectEntry)),
            }
        }
    }

    fn array(&mut self) -> Result<(), JsonSyntaxError> {
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
                c => return Err(invalid(c, Context::AfterArrayElement)),
            }
        }
    }

    fn string(&mut self) -> Result<(), JsonSyntaxError> {
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
                                    c => return Err(invalid(c, Context::UnicodeEscape)),
                                }
                            }
                        }
                        c => return Err(invalid(c, Context::StringEscape)),
                    }
                }
                c if c < 0x20 => return Err(invalid(c, Context::StringLiteral)),
                _ => self.i += 1,
            }
        }
    }

    fn number(&mut self) -> Result<(), JsonSyntaxError> {
        if self.peek() == Some(b'-') {
            self.i += 1;
            match self.next()? {
                b'0'..=b'9' => {}
                c => return Err(invalid(c, Context::NumericLiteral)),
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
                c => return Err(invalid(c, Context::AfterDecimalPoint)),
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            match self.next()? {
                b'0'..=b'9' => self.digits(),
                c => return Err(invalid(c, Context::Exponent)),
            }
        }
        Ok(())
    }

    fn digits(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &'static str) -> Result<(), JsonSyntaxError> {
        self.i += 1;
        for expected in word.bytes().skip(1) {
            match self.next()? {
                c if c == expected => self.i += 1,
                c => {
                    let context = Context::Literal {
                        word,
                        expecting: expected,
                    };
                    return Err(invalid(c, context));
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
            (
                "[\"\\u12g4\"]",
                "invalid character 'g' in \\u hexadecimal character escape",
                (1, 7),
            ),
            ("[\n  {", "unexpected end of JSON input", (2, 4)),
        ];
        for (text, message, (line, col)) in cases {
            assert_eq!(
                error(text).map(|(e, pos)| (e.to_string(), pos)),
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
