//! What a change does to rendered targets: the objects each one gains,
//! loses and changes, with a unified diff of every changed object.
//!
//! Objects are matched by API group, kind, namespace and name (a new
//! `apiVersion` of the same group is a change, not a removal and an
//! addition). Secret values (`data`, `stringData`) are masked as `kubectl
//! diff` masks them unless asked for: `***` where both sides agree,
//! `*** (before)` and `*** (after)` where they differ.

mod print;

use std::collections::HashMap;

use krusty_resource::Resource;
use krusty_yaml::Node;
use serde::Serialize;

pub use print::{print, Format, UnknownFormat};

/// The lines of context around each change in an object's diff.
const CONTEXT_LINES: usize = 3;

/// A target as rendered on one side: its objects, or why it failed.
#[derive(Debug, Clone)]
pub enum Rendering {
    /// The objects, in output order.
    Objects(Vec<Resource>),
    /// The build's error, with the side's folder written as the
    /// repository-relative path.
    Failed(String),
    /// The target does not exist on this side.
    Absent,
}

/// How an object changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// It is new.
    Added,
    /// It is gone.
    Removed,
    /// It is there on both sides, differently.
    Changed,
}

/// One object's change.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectDiff {
    /// `apiVersion kind namespace/name` (no namespace: `name`).
    pub id: String,
    /// How it changed.
    pub change: Change,
    /// The unified diff of its YAML, Secret values masked unless asked
    /// for.
    pub diff: String,
}

/// What changed in one target.
#[derive(Debug, Clone, Serialize)]
pub struct TargetDiff {
    /// The target, as listed (a folder, or a Flux or Argo CD object).
    pub target: String,
    /// What kind of target it is.
    pub kind: &'static str,
    /// Objects added, removed and changed, in id order.
    pub objects: Vec<ObjectDiff>,
    /// The base side's build error, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_error: Option<String>,
    /// The head side's build error, if it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head_error: Option<String>,
}

impl TargetDiff {
    /// Whether anything changed.
    pub fn changed(&self) -> bool {
        !self.objects.is_empty() || self.base_error != self.head_error
    }
}

/// `text` with every control character written as an escape (`\n`,
/// `\u{7f}`): a name printed on a line of its own can then neither end
/// the line nor hide what follows.
pub(crate) fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control()
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
            {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out
}

/// The key objects are matched by.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Key {
    group: String,
    kind: String,
    namespace: String,
    name: String,
}

fn key(r: &Resource) -> Key {
    let id = r.id();
    Key {
        group: id.gvk.group.to_string(),
        kind: id.gvk.kind.to_string(),
        namespace: id.namespace.to_string(),
        name: id.name.to_string(),
    }
}

/// An object's id as printed.
fn shown_id(r: &Resource) -> String {
    let id = r.id();
    let shown = |s: &str| escape_controls(s);
    let api_version = if id.gvk.group.is_empty() {
        id.gvk.version.to_string()
    } else {
        format!("{}/{}", id.gvk.group, id.gvk.version)
    };
    let api_version = shown(&api_version);
    if id.namespace.is_empty() {
        format!("{api_version} {} {}", shown(&id.gvk.kind), shown(&id.name))
    } else {
        format!(
            "{api_version} {} {}/{}",
            shown(&id.gvk.kind),
            shown(&id.namespace),
            shown(&id.name)
        )
    }
}

/// Compares the renderings of one target at the base and the head.
pub fn compare(
    target: &str,
    kind: &'static str,
    base: &Rendering,
    head: &Rendering,
    show_secrets: bool,
) -> TargetDiff {
    let error = |r: &Rendering| match r {
        Rendering::Failed(e) => Some(e.clone()),
        _ => None,
    };
    let objects = |r: &Rendering| match r {
        Rendering::Objects(objects) => objects.clone(),
        _ => Vec::new(),
    };
    let (base_error, head_error) = (error(base), error(head));
    if base_error.is_some() || head_error.is_some() {
        // A side that failed has no objects to compare: the errors say
        // what changed.
        return TargetDiff {
            target: escape_controls(target),
            kind,
            objects: Vec::new(),
            base_error,
            head_error,
        };
    }
    let (before, after) = (objects(base), objects(head));
    let mut before_by_key: HashMap<Key, Resource> =
        before.into_iter().map(|r| (key(&r), r)).collect();
    let mut diffs = Vec::new();
    for new in after {
        let k = key(&new);
        match before_by_key.remove(&k) {
            None => diffs.push(object_diff(target, None, Some(&new), show_secrets)),
            Some(old) => {
                if old.node != new.node {
                    let diff = object_diff(target, Some(&old), Some(&new), show_secrets);
                    if diff.change != Change::Changed || !diff.diff.is_empty() {
                        diffs.push(diff);
                    }
                }
            }
        }
    }
    for old in before_by_key.into_values() {
        diffs.push(object_diff(target, Some(&old), None, show_secrets));
    }
    diffs.sort_by(|a, b| a.id.cmp(&b.id));
    TargetDiff {
        target: escape_controls(target),
        kind,
        objects: diffs,
        base_error: None,
        head_error: None,
    }
}

fn object_diff(
    target: &str,
    before: Option<&Resource>,
    after: Option<&Resource>,
    show_secrets: bool,
) -> ObjectDiff {
    let shown = after.or(before).map(shown_id).unwrap_or_default();
    let change = match (before, after) {
        (None, _) => Change::Added,
        (_, None) => Change::Removed,
        _ => Change::Changed,
    };
    let (mut old, mut new) = (
        before.map(|r| r.node.clone()),
        after.map(|r| r.node.clone()),
    );
    // Any kind named Secret, whatever its group: masking fails closed.
    let is_secret = after
        .or(before)
        .is_some_and(|r| r.id().gvk.kind == "Secret");
    if is_secret && !show_secrets {
        mask_secrets(old.as_mut(), new.as_mut());
    }
    let text = |n: &Option<Node>| {
        let mut out = String::new();
        if let Some(n) = n {
            if krusty_yaml::emit_document(n, &mut out).is_err() {
                out = "(cannot print this object)\n".into();
            }
        }
        out
    };
    let (old_text, new_text) = (text(&old), text(&new));
    let diff = if old_text == new_text {
        String::new()
    } else {
        similar::TextDiff::from_lines(&old_text, &new_text)
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .header(
                &format!("a/{} {shown}", escape_controls(target)),
                &format!("b/{} {shown}", escape_controls(target)),
            )
            .to_string()
    };
    ObjectDiff {
        id: shown,
        change,
        diff,
    }
}

/// Replaces the values of a Secret's `data` and `stringData` on both
/// sides: `***` where the two agree (or one side lacks the key),
/// `*** (before)` and `*** (after)` where they differ.
fn mask_secrets(mut before: Option<&mut Node>, mut after: Option<&mut Node>) {
    for field in ["data", "stringData"] {
        let old: HashMap<String, Node> = values(before.as_deref(), field);
        let new: HashMap<String, Node> = values(after.as_deref(), field);
        let differs = |key: &str| match (old.get(key), new.get(key)) {
            (Some(a), Some(b)) => a != b,
            _ => false,
        };
        for (side, suffix) in [
            (before.as_deref_mut(), " (before)"),
            (after.as_deref_mut(), " (after)"),
        ] {
            let Some(map) = side
                .and_then(|n| n.get_mut(field))
                .and_then(|m| m.as_map_mut())
            else {
                continue;
            };
            for (k, v) in map.iter_mut() {
                let key = k.as_str().unwrap_or_default().to_string();
                let masked = if differs(&key) {
                    format!("***{suffix}")
                } else {
                    "***".to_string()
                };
                *v = Node::string(masked);
            }
        }
    }
}

fn values(node: Option<&Node>, field: &str) -> HashMap<String, Node> {
    node.and_then(|n| n.get(field))
        .and_then(|m| m.as_map())
        .map(|entries| {
            entries
                .iter()
                .filter_map(|(k, v)| k.as_str().map(|k| (k.to_string(), v.clone())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resources(text: &str) -> Vec<Resource> {
        krusty_yaml::parse_stream(text)
            .unwrap()
            .into_iter()
            .filter_map(|d| d.root)
            .map(|n| Resource::from_node(n).unwrap())
            .collect()
    }

    #[test]
    fn objects_are_matched_by_group_kind_namespace_and_name() {
        let base = resources(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"1\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n---\napiVersion: apps/v1beta1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n",
        );
        let head = resources(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  x: \"2\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: prod\n",
        );
        let diff = compare(
            "app",
            "kustomization",
            &Rendering::Objects(base),
            &Rendering::Objects(head),
            false,
        );
        let seen: Vec<(&str, Change)> = diff
            .objects
            .iter()
            .map(|o| (o.id.as_str(), o.change))
            .collect();
        assert_eq!(
            seen,
            [
                ("apps/v1 Deployment prod/web", Change::Changed),
                ("v1 ConfigMap a", Change::Changed),
                ("v1 ConfigMap gone", Change::Removed),
                ("v1 ConfigMap new", Change::Added),
            ]
        );
        assert!(
            diff.objects[1].diff.contains("-  x: \"1\"\n+  x: \"2\"\n"),
            "{}",
            diff.objects[1].diff
        );
        assert!(diff.changed());
    }

    #[test]
    fn secret_values_are_masked_unless_asked_for() {
        let base = resources(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  same: YQ==\n  pw: b2xk\n",
        );
        let head = resources(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  same: YQ==\n  pw: bmV3\n",
        );
        let masked = compare(
            "app",
            "kustomization",
            &Rendering::Objects(base.clone()),
            &Rendering::Objects(head.clone()),
            false,
        );
        let diff = &masked.objects[0].diff;
        assert!(
            diff.contains("-  pw: '*** (before)'\n+  pw: '*** (after)'\n"),
            "{diff}"
        );
        assert!(
            !diff.contains("b2xk") && !diff.contains("bmV3") && !diff.contains("YQ=="),
            "{diff}"
        );
        let shown = compare(
            "app",
            "kustomization",
            &Rendering::Objects(base),
            &Rendering::Objects(head),
            true,
        );
        assert!(shown.objects[0].diff.contains("-  pw: b2xk\n+  pw: bmV3\n"));
    }

    #[test]
    fn names_cannot_break_the_lines_they_are_printed_on() {
        let objects = resources("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"x\\n\\n</details>\\n# H\\u202e\"\n");
        let diff = compare(
            "dir\n=== fake",
            "kustomization",
            &Rendering::Absent,
            &Rendering::Objects(objects),
            false,
        );
        assert_eq!(diff.target, "dir\\n=== fake");
        assert_eq!(
            diff.objects[0].id,
            "v1 ConfigMap x\\n\\n</details>\\n# H\\u{202e}"
        );
        assert!(diff.objects[0]
            .diff
            .lines()
            .all(|l| !l.starts_with("=== ") && !l.starts_with("</details>")));
    }

    #[test]
    fn the_same_rendering_is_no_change() {
        let objects = resources("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
        let diff = compare(
            "app",
            "kustomization",
            &Rendering::Objects(objects.clone()),
            &Rendering::Objects(objects),
            false,
        );
        assert!(!diff.changed());
        let failed = Rendering::Failed("boom".into());
        assert!(!compare("app", "kustomization", &failed, &failed, false).changed());
        let broken = compare(
            "app",
            "kustomization",
            &Rendering::Objects(resources(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
            )),
            &failed,
            false,
        );
        assert!(broken.changed() && broken.objects.is_empty());
        assert_eq!(broken.head_error.as_deref(), Some("boom"));
    }
}
