//! Where a build spends its time (`krusty build --timings`): the wall time
//! of each stage (reading a kustomization, reading resource files,
//! fetching a remote base, each generator, transformer, validator,
//! function and chart, each finishing stage), by the kustomization folder
//! it ran for.
//!
//! A build asks for them with [`crate::BuildRequest::timings`]; without
//! it nothing is measured. Stages measured are leaves (a base's build is
//! not a stage; its own stages are), so no time is counted twice in one
//! thread; entries of `resources:` built in parallel overlap, so the sum
//! of the stages can exceed the build's wall time.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The stages measured, shared by every thread of one or more builds.
#[derive(Debug, Default)]
pub struct Timings {
    spans: Mutex<Vec<Span>>,
}

/// One measured stage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The kustomization folder it ran for (empty for work of the whole
    /// build, such as the finishing stages of a target at the top).
    pub target: PathBuf,
    /// What ran: `read kustomization`, `transformer PatchTransformer`, ...
    pub stage: String,
    /// Its wall time.
    pub elapsed: Duration,
}

/// Measures one stage until dropped (see [`Timings::start`]).
pub struct Timer {
    timings: Arc<Timings>,
    target: PathBuf,
    stage: String,
    started: Instant,
}

impl Drop for Timer {
    fn drop(&mut self) {
        self.timings.record(Span {
            target: std::mem::take(&mut self.target),
            stage: std::mem::take(&mut self.stage),
            elapsed: self.started.elapsed(),
        });
    }
}

impl Timings {
    /// Starts measuring `stage` of `target`, when `timings` are asked
    /// for: the stage ends when the timer is dropped.
    pub fn start(
        timings: Option<&Arc<Timings>>,
        target: &Path,
        stage: impl FnOnce() -> String,
    ) -> Option<Timer> {
        timings.map(|timings| Timer {
            timings: Arc::clone(timings),
            target: target.to_path_buf(),
            stage: stage(),
            started: Instant::now(),
        })
    }

    /// Adds a measured stage.
    pub fn record(&self, span: Span) {
        self.spans
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(span);
    }

    /// Every stage measured so far, in the order they ended.
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The report `--timings` prints: the build's wall time `total`, then
    /// the stages (summed by name) and the targets (summed by folder, shown
    /// from `top`), longest first, each with its count and share of
    /// `total`.
    pub fn report(&self, top: &Path, total: Duration) -> String {
        let spans = self.spans();
        let mut by_stage: BTreeMap<String, (Duration, usize)> = BTreeMap::new();
        let mut by_target: BTreeMap<String, (Duration, usize)> = BTreeMap::new();
        for span in &spans {
            let stage = by_stage.entry(span.stage.clone()).or_default();
            stage.0 += span.elapsed;
            stage.1 += 1;
            let target = by_target
                .entry(shown_target(top, &span.target))
                .or_default();
            target.0 += span.elapsed;
            target.1 += 1;
        }
        let mut out = String::new();
        let _ = writeln!(out, "build: {} wall time", millis(total));
        table(&mut out, "stage", by_stage, total);
        table(&mut out, "target", by_target, total);
        out
    }
}

/// `target` as the report shows it: relative to `top` (`.` for `top`
/// itself and for work of the whole build, `../base` beside it), or as it
/// is when the two share no root (a remote base's checkout).
fn shown_target(top: &Path, target: &Path) -> String {
    if target.as_os_str().is_empty() || target == top {
        return ".".to_string();
    }
    let shared = top
        .components()
        .zip(target.components())
        .take_while(|(a, b)| a == b)
        .count();
    if shared <= 1 {
        return target.display().to_string();
    }
    let mut rel = PathBuf::new();
    for _ in top.components().skip(shared) {
        rel.push("..");
    }
    rel.extend(target.components().skip(shared));
    rel.display().to_string()
}

fn table(
    out: &mut String,
    heading: &str,
    rows: BTreeMap<String, (Duration, usize)>,
    total: Duration,
) {
    let mut rows: Vec<(String, (Duration, usize))> = rows.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then_with(|| a.0.cmp(&b.0)));
    let width = rows
        .iter()
        .map(|(name, _)| name.chars().count())
        .chain([heading.len()])
        .max()
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "{heading:<width$}  {:>10}  {:>6}  {:>5}",
        "time", "share", "count"
    );
    for (name, (elapsed, count)) in rows {
        let share = if total.is_zero() {
            0.0
        } else {
            100.0 * elapsed.as_secs_f64() / total.as_secs_f64()
        };
        let _ = writeln!(
            out,
            "{name:<width$}  {:>10}  {share:>5.1}%  {count:>5}",
            millis(elapsed)
        );
    }
}

fn millis(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(target: &str, stage: &str, ms: u64) -> Span {
        Span {
            target: PathBuf::from(target),
            stage: stage.to_string(),
            elapsed: Duration::from_millis(ms),
        }
    }

    #[test]
    fn the_report_sums_stages_and_targets_longest_first() {
        let timings = Timings::default();
        timings.record(span("/t/base", "read resources", 3));
        timings.record(span("/t/overlay", "transformer PatchTransformer", 5));
        timings.record(span("/t/base", "read resources", 4));
        timings.record(span("", "finish: name references", 1));
        let report = timings.report(Path::new("/t/overlay"), Duration::from_millis(20));
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines[0], "build: 20.0 ms wall time");
        assert!(lines[2].starts_with("read resources "), "{report}");
        assert!(
            lines[2].contains("7.0 ms") && lines[2].contains("35.0%"),
            "{report}"
        );
        assert!(lines[2].trim_end().ends_with(" 2"), "{report}");
        assert!(
            lines[3].starts_with("transformer PatchTransformer"),
            "{report}"
        );
        assert!(lines[4].starts_with("finish: name references"), "{report}");
        let targets = lines.iter().position(|l| l.starts_with("target ")).unwrap();
        assert!(lines[targets + 1].starts_with("../base "), "{report}");
        assert!(lines[targets + 2].starts_with(". "), "{report}");
    }

    #[test]
    fn targets_are_shown_from_the_top_folder() {
        let top = Path::new("/r/apps/overlays/prod");
        assert_eq!(shown_target(top, Path::new("/r/apps/overlays/prod")), ".");
        assert_eq!(shown_target(top, Path::new("")), ".");
        assert_eq!(
            shown_target(top, Path::new("/r/apps/overlays/prod/extra")),
            "extra"
        );
        assert_eq!(shown_target(top, Path::new("/r/apps/base")), "../../base");
        assert_eq!(
            shown_target(top, Path::new("/cache/checkout")),
            "/cache/checkout"
        );
    }

    #[test]
    fn nothing_is_measured_unless_asked_for() {
        assert!(Timings::start(None, Path::new("/t"), || unreachable!()).is_none());
        let timings = Arc::new(Timings::default());
        drop(Timings::start(Some(&timings), Path::new("/t"), || {
            "s".into()
        }));
        assert_eq!(timings.spans().len(), 1);
    }
}
