//! Line diffs in the unified format (`@@ -a,b +c,d @@` hunks, `-`, `+` and
//! ` ` lines), from a longest common subsequence of the lines.

/// Unchanged lines shown before and after each change; changes closer
/// than twice this share a hunk (as GNU diff's `-U3`).
const CONTEXT: usize = 3;

/// The most cells (lines of one side times lines of the other, once the
/// common start and end are set aside) the subsequence table may have;
/// past it, the differing middle is shown removed whole, then added whole.
const MAX_CELLS: usize = 4_000_000;

/// What an edit does with a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// The line is in both texts.
    Same,
    /// The line is only in the old text.
    Removed,
    /// The line is only in the new text.
    Added,
}

/// The unified diff of `old` against `new`: hunks with `CONTEXT` lines of
/// context, every line ending in a newline; empty when their lines are
/// the same.
pub fn unified(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let script = edit_script(&a, &b);
    let mut out = String::new();
    for (start, end) in hunk_spans(&script) {
        write_hunk(&script, start, end, &mut out);
    }
    out
}

/// The edits that turn `a` into `b`: the common start and end as they
/// are, the middle from a longest common subsequence.
fn edit_script<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<(Op, &'a str)> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut script = Vec::with_capacity(a.len() + b.len());
    script.extend(a[..prefix].iter().map(|&line| (Op::Same, line)));
    middle(
        &a[prefix..a.len() - suffix],
        &b[prefix..b.len() - suffix],
        &mut script,
    );
    script.extend(a[a.len() - suffix..].iter().map(|&line| (Op::Same, line)));
    script
}

/// Appends the edits that turn `a` into `b` (which share no first or last
/// line) to `script`; removals come before additions where both fit.
fn middle<'a>(a: &[&'a str], b: &[&'a str], script: &mut Vec<(Op, &'a str)>) {
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        script.extend(a.iter().map(|&line| (Op::Removed, line)));
        script.extend(b.iter().map(|&line| (Op::Added, line)));
        return;
    }
    let table = Lcs::new(a, b);
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            script.push((Op::Same, a[i]));
            i += 1;
            j += 1;
        } else if j == b.len() || (i < a.len() && table.at(i + 1, j) >= table.at(i, j + 1)) {
            script.push((Op::Removed, a[i]));
            i += 1;
        } else {
            script.push((Op::Added, b[j]));
            j += 1;
        }
    }
}

/// Lengths of the longest common subsequences of the ends of two line
/// lists: `at(i, j)` for `a[i..]` and `b[j..]`.
struct Lcs {
    width: usize,
    cells: Vec<u32>,
}

impl Lcs {
    fn new(a: &[&str], b: &[&str]) -> Lcs {
        let width = b.len() + 1;
        let mut table = Lcs {
            width,
            cells: vec![0; (a.len() + 1) * width],
        };
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                let length = if a[i] == b[j] {
                    table.at(i + 1, j + 1) + 1
                } else {
                    table.at(i + 1, j).max(table.at(i, j + 1))
                };
                table.cells[i * width + j] = length;
            }
        }
        table
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }
}

/// The stretches of `script` shown as hunks (start inclusive, end
/// exclusive): each change with `CONTEXT` lines around it, overlapping or
/// touching stretches merged.
fn hunk_spans(script: &[(Op, &str)]) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (k, _) in script
        .iter()
        .enumerate()
        .filter(|(_, (op, _))| *op != Op::Same)
    {
        let start = k.saturating_sub(CONTEXT);
        let end = (k + CONTEXT + 1).min(script.len());
        // Ends only grow (`k` does): a merged stretch ends at `end`.
        let touches_last = spans.last().is_some_and(|last| start <= last.1);
        if touches_last {
            if let Some(last) = spans.last_mut() {
                last.1 = end;
            }
        } else {
            spans.push((start, end));
        }
    }
    spans
}

/// Appends the hunk of `script[start..end]`: its `@@` line, then its lines.
fn write_hunk(script: &[(Op, &str)], start: usize, end: usize, out: &mut String) {
    let before = &script[..start];
    let old_before = before.iter().filter(|(op, _)| *op != Op::Added).count();
    let new_before = before.iter().filter(|(op, _)| *op != Op::Removed).count();
    let lines = &script[start..end];
    let old_len = lines.iter().filter(|(op, _)| *op != Op::Added).count();
    let new_len = lines.iter().filter(|(op, _)| *op != Op::Removed).count();
    out.push_str(&format!(
        "@@ -{} +{} @@\n",
        range(old_before, old_len),
        range(new_before, new_len)
    ));
    for (op, line) in lines {
        out.push(match op {
            Op::Same => ' ',
            Op::Removed => '-',
            Op::Added => '+',
        });
        out.push_str(line);
        out.push('\n');
    }
}

/// A hunk's range of one side, as GNU diff writes it: `first,length`
/// (lines counted from 1), `first` alone for one line, and the line
/// before the hunk with length 0 for none.
fn range(lines_before: usize, length: usize) -> String {
    match length {
        0 => format!("{lines_before},0"),
        1 => format!("{}", lines_before + 1),
        _ => format!("{},{length}", lines_before + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_has_no_hunk() {
        assert_eq!(unified("a\nb\n", "a\nb\n"), "");
        assert_eq!(unified("", ""), "");
    }

    #[test]
    fn one_changed_line_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        assert_eq!(
            unified(old, new),
            "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn distant_changes_make_two_hunks_and_near_ones_one() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let far = old.replace("\n2\n", "\nB\n").replace("\n18\n", "\nR\n");
        assert_eq!(
            unified(&old, &far),
            "@@ -1,5 +1,5 @@\n 1\n-2\n+B\n 3\n 4\n 5\n\
             @@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+R\n 19\n 20\n"
        );
        // Six unchanged lines between two changes: one hunk.
        let near = old.replace("\n2\n", "\nB\n").replace("\n9\n", "\nI\n");
        let diff = unified(&old, &near);
        assert_eq!(diff.matches("@@ -").count(), 1, "{diff}");
        assert!(diff.starts_with("@@ -1,12 +1,12 @@\n"), "{diff}");
    }

    #[test]
    fn removed_and_added_lines_count_on_their_side_only() {
        assert_eq!(
            unified("a\nb\nc\n", "a\nc\n"),
            "@@ -1,3 +1,2 @@\n a\n-b\n c\n"
        );
        assert_eq!(unified("", "x\n"), "@@ -0,0 +1 @@\n+x\n");
        assert_eq!(unified("x\n", ""), "@@ -1 +0,0 @@\n-x\n");
    }

    #[test]
    fn interleaved_changes_follow_a_longest_common_subsequence() {
        let diff = unified("a\nb\nc\nd\n", "b\nc\nx\nd\n");
        assert_eq!(diff, "@@ -1,4 +1,4 @@\n-a\n b\n c\n+x\n d\n");
    }
}
