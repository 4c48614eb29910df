//! `edit add|remove patch`: entries of `patches`.

use krusty_yaml::Node;

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;
use crate::node::{items, map_of_texts, text};

/// The target fields, in the order Kustomize's writer sorts them.
const TARGET_KEYS: [&str; 7] = [
    "annotationSelector",
    "group",
    "kind",
    "labelSelector",
    "name",
    "namespace",
    "version",
];

/// A patch entry as the flags give it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PatchArg {
    /// `--path`.
    pub path: String,
    /// `--patch`: the patch's text.
    pub patch: String,
    /// The target's fields, by [`TARGET_KEYS`] name ("" for unset).
    pub target: [String; 7],
}

impl PatchArg {
    /// Sets a target field by its key (`group`, `labelSelector`, ...).
    pub fn set_target(&mut self, key: &str, value: Option<String>) {
        if let (Some(i), Some(v)) = (TARGET_KEYS.iter().position(|k| *k == key), value) {
            self.target[i] = v;
        }
    }

    fn has_target(&self) -> bool {
        self.target.iter().any(|v| !v.is_empty())
    }

    /// The entry as written in `patches`.
    fn to_node(&self) -> Node {
        let mut node = map_of_texts([("patch", self.patch.as_str()), ("path", self.path.as_str())]);
        if self.has_target() {
            let target = map_of_texts(
                TARGET_KEYS
                    .iter()
                    .copied()
                    .zip(self.target.iter().map(String::as_str)),
            );
            node.set("target", target);
        }
        node
    }

    /// The entry `node` is this patch (same path, text and target; no
    /// options), as Kustomize compares them.
    fn same_as(&self, node: &Node) -> bool {
        let target_same = match node.get("target").filter(|t| !t.is_null()) {
            None => !self.has_target(),
            Some(t) => {
                self.has_target()
                    && TARGET_KEYS
                        .iter()
                        .zip(&self.target)
                        .all(|(k, v)| text(t, k) == v)
            }
        };
        text(node, "path") == self.path
            && text(node, "patch") == self.patch
            && target_same
            && node.get("options").is_none_or(Node::is_null)
    }
}

/// Checks `edit add patch` flags.
pub fn check_add(arg: &PatchArg) -> EditResult<()> {
    check_remove(arg)?;
    if arg.patch.is_empty() && arg.path.is_empty() {
        return Err(EditError::new("must provide either patch or path"));
    }
    Ok(())
}

/// Checks `edit remove patch` flags.
pub fn check_remove(arg: &PatchArg) -> EditResult<()> {
    if !arg.patch.is_empty() && !arg.path.is_empty() {
        return Err(EditError::new(
            "patch and path can't be set at the same time",
        ));
    }
    Ok(())
}

/// Appends the patch; `false` (with a note) when an equal entry is there.
pub fn add(k: &mut KustomizationFile, arg: &PatchArg, notes: &mut Vec<String>) -> bool {
    let mut list = items(k.get("patches"));
    if list.iter().any(|n| arg.same_as(n)) {
        notes.push("patch already in kustomization file".to_string());
        return false;
    }
    list.push(arg.to_node());
    k.set("patches", Node::seq_of(list));
    true
}

/// Removes the entries equal to the patch; `false` (with a note) when
/// there is none.
pub fn remove(k: &mut KustomizationFile, arg: &PatchArg, notes: &mut Vec<String>) -> bool {
    let list = items(k.get("patches"));
    let before = list.len();
    let kept: Vec<Node> = list.into_iter().filter(|n| !arg.same_as(n)).collect();
    if kept.len() == before {
        notes.push(format!(
            "patch {} doesn't exist in kustomization file",
            arg.patch
        ));
        return false;
    }
    k.set_or_remove("patches", Node::seq_of(kept));
    true
}
