//! `krusty diff`'s output: for a terminal, for a pull-request comment, or
//! for tools.

use std::fmt::Write;

use serde::Serialize;

use super::{Change, TargetDiff};

/// How a diff is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Target by target, a unified diff of each object, then a summary.
    #[default]
    Text,
    /// A summary, then a section per target with each object's diff in
    /// a collapsed block (a pull-request comment).
    Markdown,
    /// One JSON document: the targets that changed and a summary.
    Json,
}

/// An output format krusty does not print (as written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown output '{0}': use text, markdown or json")]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Format, UnknownFormat> {
        match s {
            "text" => Ok(Format::Text),
            "markdown" | "md" => Ok(Format::Markdown),
            "json" => Ok(Format::Json),
            other => Err(UnknownFormat(other.to_string())),
        }
    }
}

/// Counts over every target compared.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Summary {
    /// Targets compared.
    pub targets: usize,
    /// Targets that changed.
    pub changed_targets: usize,
    /// Objects added.
    pub added: usize,
    /// Objects removed.
    pub removed: usize,
    /// Objects changed.
    pub changed: usize,
}

impl Summary {
    fn of(diffs: &[TargetDiff], targets: usize) -> Summary {
        let mut s = Summary {
            targets,
            ..Summary::default()
        };
        for d in diffs.iter().filter(|d| d.changed()) {
            s.changed_targets += 1;
            for o in &d.objects {
                match o.change {
                    Change::Added => s.added += 1,
                    Change::Removed => s.removed += 1,
                    Change::Changed => s.changed += 1,
                }
            }
        }
        s
    }

    fn line(&self) -> String {
        format!(
            "{} of {} targets changed: {} {} added, {} removed, {} changed",
            self.changed_targets,
            self.targets,
            self.added,
            if self.added == 1 { "object" } else { "objects" },
            self.removed,
            self.changed
        )
    }
}

/// The diff of every target in `diffs` (those that did not change are
/// left out), out of `targets` compared, as `format` says.
pub fn print(diffs: &[TargetDiff], targets: usize, format: Format) -> String {
    let changed: Vec<&TargetDiff> = diffs.iter().filter(|d| d.changed()).collect();
    let summary = Summary::of(diffs, targets);
    match format {
        Format::Text => text(&changed, &summary),
        Format::Markdown => markdown(&changed, &summary),
        Format::Json => json(&changed, &summary),
    }
}

fn sign(change: Change) -> char {
    match change {
        Change::Added => '+',
        Change::Removed => '-',
        Change::Changed => '~',
    }
}

fn text(changed: &[&TargetDiff], summary: &Summary) -> String {
    let mut out = String::new();
    for d in changed {
        let _ = writeln!(out, "=== {} ({})", d.target, d.kind);
        errors(&mut out, d, "");
        for o in &d.objects {
            let _ = writeln!(out, "{} {}", sign(o.change), o.id);
        }
        for o in &d.objects {
            out.push_str(&o.diff);
        }
        out.push('\n');
    }
    out.push_str(&summary.line());
    out.push('\n');
    out
}

fn errors(out: &mut String, d: &TargetDiff, prefix: &str) {
    if d.base_error == d.head_error {
        return;
    }
    if let Some(e) = &d.base_error {
        let _ = writeln!(out, "{prefix}base failed: {e}");
    }
    if let Some(e) = &d.head_error {
        let _ = writeln!(out, "{prefix}head failed: {e}");
    }
}

/// A fence longer than any run of backticks in `text`, so no line of it
/// closes the block.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat(longest.max(2) + 1)
}

fn markdown(changed: &[&TargetDiff], summary: &Summary) -> String {
    let mut out = String::from("## krusty diff\n\n");
    let _ = writeln!(out, "{}\n", summary.line());
    for d in changed {
        let _ = writeln!(out, "### `{}` ({})\n", d.target.replace('`', "'"), d.kind);
        let mut failures = String::new();
        errors(&mut failures, d, "");
        if !failures.is_empty() {
            let f = fence(&failures);
            let _ = writeln!(out, "{f}\n{}{f}\n", failures);
        }
        for o in &d.objects {
            let f = fence(&o.diff);
            let _ = writeln!(
                out,
                "<details><summary><code>{} {}</code></summary>\n\n{f}diff\n{}{f}\n\n</details>\n",
                sign(o.change),
                html_escape(&o.id),
                o.diff
            );
        }
    }
    out
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn json(changed: &[&TargetDiff], summary: &Summary) -> String {
    #[derive(Serialize)]
    struct Document<'a> {
        targets: &'a [&'a TargetDiff],
        summary: &'a Summary,
    }
    let mut out = serde_json::to_string_pretty(&Document {
        targets: changed,
        summary,
    })
    .unwrap_or_default();
    out.push('\n');
    out
}
