//! go-yaml v2's order for mapping keys: letters compare as characters, runs of
//! digits compare as numbers, and a letter sorts after a non-letter.

/// `true` if key `a` sorts before key `b`.
pub fn natural_less(a: &str, b: &str) -> bool {
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
    use super::natural_less;

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
}
