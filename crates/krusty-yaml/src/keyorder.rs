//! go-yaml v2's order for mapping keys: letters compare as characters, runs of
//! digits compare as numbers, and a letter sorts after a non-letter.

/// `true` if key `a` sorts before key `b`.
pub fn natural_less(a: &str, b: &str) -> bool {
    decided_at_first_difference(a.as_bytes(), b.as_bytes()).unwrap_or_else(|| less_scanning(a, b))
}

/// [`natural_less`] for any keys, comparing them character by character.
fn less_scanning(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        less_by(
            a.as_bytes(),
            b.as_bytes(),
            |c| (*c as char).is_ascii_alphabetic(),
            |c| c.is_ascii_digit(),
        )
    } else {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        less_by(
            &a,
            &b,
            |c: &char| c.is_alphabetic(),
            |c: &char| is_decimal_digit(*c),
        )
    }
}

/// The usual case, answered without scanning either key whole: where the
/// keys first differ, two ASCII characters that are not digits (so no run
/// of digits is compared as a number), or the end of one key. Equal bytes
/// before that point mean equal characters, and an ASCII byte is always a
/// whole character, so the byte and character comparisons agree.
fn decided_at_first_difference(a: &[u8], b: &[u8]) -> Option<bool> {
    let i = a.iter().zip(b).position(|(x, y)| x != y);
    let Some(i) = i else {
        return Some(a.len() < b.len());
    };
    let (x, y) = (a[i], b[i]);
    if !x.is_ascii() || !y.is_ascii() || x.is_ascii_digit() || y.is_ascii_digit() {
        return None;
    }
    Some(match (x.is_ascii_alphabetic(), y.is_ascii_alphabetic()) {
        (true, false) => false,
        (false, true) => true,
        _ => x < y,
    })
}

/// Decimal digits (Unicode category Nd) of the scripts keys are written in:
/// ASCII, Arabic-Indic, Extended Arabic-Indic, Devanagari, Bengali, Thai and
/// fullwidth digits.
fn is_decimal_digit(c: char) -> bool {
    const ZEROS: [u32; 7] = [0x30, 0x660, 0x6F0, 0x966, 0x9E6, 0xE50, 0xFF10];
    let v = c as u32;
    ZEROS.iter().any(|&z| (z..z + 10).contains(&v))
}

trait Digit: Copy + PartialOrd + PartialEq {
    fn value(self) -> i64;
    fn is_zero(self) -> bool;
}

impl Digit for u8 {
    fn value(self) -> i64 {
        i64::from(self) - i64::from(b'0')
    }
    fn is_zero(self) -> bool {
        self == b'0'
    }
}

impl Digit for char {
    fn value(self) -> i64 {
        i64::from(self as u32) - i64::from(b'0')
    }
    fn is_zero(self) -> bool {
        self == '0'
    }
}

fn less_by<T: Digit>(
    a: &[T],
    b: &[T],
    is_letter: impl Fn(&T) -> bool,
    is_digit: impl Fn(&T) -> bool,
) -> bool {
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            continue;
        }
        let (al, bl) = (is_letter(&a[i]), is_letter(&b[i]));
        if al && bl {
            return a[i] < b[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if a[i].is_zero() || b[i].is_zero() {
            // A zero inside a longer number (e.g. "10" vs "1a") is not leading.
            for j in (0..i).rev() {
                if !is_digit(&a[j]) {
                    break;
                }
                if !a[j].is_zero() {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < a.len() && is_digit(&a[ai]) {
            an = an.wrapping_mul(10).wrapping_add(a[ai].value());
            ai += 1;
        }
        let mut bi = i;
        while bi < b.len() && is_digit(&b[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(b[bi].value());
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return a[i] < b[i];
    }
    a.len() < b.len()
}

#[cfg(test)]
mod tests {
    use super::{less_scanning, natural_less};

    #[test]
    fn orders_like_go_yaml() {
        assert!(natural_less("a", "b"));
        assert!(natural_less("a2", "a10"));
        assert!(natural_less("apiVersion", "kind"));
        assert!(natural_less("A", "a"));
        assert!(natural_less("1", "a"));
        assert!(natural_less("_x", "a"));
        assert!(!natural_less("b", "a"));
        assert!(natural_less("a", "ab"));
    }

    /// The shortcut decides exactly as the character-by-character scan, on
    /// keys drawn from letters, digits (ASCII and other scripts), zeros,
    /// punctuation and non-ASCII letters, sharing prefixes often.
    #[test]
    fn shortcut_agrees_with_the_full_comparison() {
        const PIECES: [&str; 14] = [
            "a", "b", "Z", "0", "1", "9", "10", "-", "_", ".", "é", "\u{663}", "ß", "x0",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let key = |next: &mut dyn FnMut(usize) -> usize, prefix: &str| {
            let mut k = prefix.to_string();
            for _ in 0..next(5) {
                k.push_str(PIECES[next(PIECES.len())]);
            }
            k
        };
        for _ in 0..50_000 {
            let shared = key(&mut next, "");
            let a = key(&mut next, &shared);
            let b = key(&mut next, &shared);
            assert_eq!(natural_less(&a, &b), less_scanning(&a, &b), "{a:?} < {b:?}");
        }
    }
}
