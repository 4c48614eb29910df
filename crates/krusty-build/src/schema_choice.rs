//! The build's merge schema: which `openapi:` field decides it, and where a
//! custom document stands beside the built-in Kubernetes schema.
//!
//! Kustomize keeps one schema per build. The top kustomization's `openapi:`
//! decides first; otherwise the first base or component with one does, when
//! it is loaded. Such a document is added to whatever the build already
//! holds: the built-in schema if a strategic merge read it before, or the
//! built-in schema after the document if the build was asked the scope of
//! a type it does not know by heart ([`KubernetesLayer`]).

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use krusty_ops::schema::{scope_known_without_schema, KubernetesLayer, Schema};
use krusty_resource::Resource;
use krusty_yaml::Node;

/// What the build did with the built-in schema before any `openapi:` field
/// decided, in the order Kustomize's states follow one another.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
enum BuiltinUse {
    /// Nothing yet.
    #[default]
    Unused,
    /// A resource of a type whose scope is not known by heart was read:
    /// the built-in schema is to be read with the next document.
    Flagged,
    /// A strategic merge read the built-in schema.
    Read,
}

/// The build's schema choice, carried from kustomization to kustomization
/// in the order Kustomize loads them.
#[derive(Debug, Default)]
pub(crate) struct SchemaChoice {
    /// `None`: nothing decided yet (the built-in schema applies);
    /// `Some(None)`: the built-in schema, chosen by version;
    /// `Some(Some(schema))`: a custom document.
    chosen: Option<Option<Arc<Schema>>>,
    /// What happened to the built-in schema before the choice.
    builtin: BuiltinUse,
    /// Set by strategic merges that read the built-in schema.
    builtin_read: AtomicBool,
}

impl Clone for SchemaChoice {
    fn clone(&self) -> SchemaChoice {
        SchemaChoice {
            chosen: self.chosen.clone(),
            builtin: self.use_so_far(),
            builtin_read: AtomicBool::new(false),
        }
    }
}

impl PartialEq for SchemaChoice {
    /// The same choice, reached from the same use of the built-in schema.
    fn eq(&self, other: &SchemaChoice) -> bool {
        let same_choice = match (&self.chosen, &other.chosen) {
            (None, None) | (Some(None), Some(None)) => true,
            (Some(Some(a)), Some(Some(b))) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_choice && self.use_so_far() == other.use_so_far()
    }
}

impl SchemaChoice {
    /// Whether an `openapi:` field has decided.
    pub(crate) fn is_decided(&self) -> bool {
        self.chosen.is_some()
    }

    /// The custom schema chosen, if one was.
    pub(crate) fn custom(&self) -> Option<&Schema> {
        match &self.chosen {
            Some(Some(schema)) => Some(schema),
            _ => None,
        }
    }

    /// The flag strategic merges set when they read the built-in schema.
    pub(crate) fn builtin_read_flag(&self) -> &AtomicBool {
        &self.builtin_read
    }

    /// Takes note of resources the build read or made while nothing has
    /// decided: Kustomize asks each one's scope.
    pub(crate) fn note_resources<'r>(&mut self, resources: impl IntoIterator<Item = &'r Resource>) {
        if self.is_decided() || self.use_so_far() != BuiltinUse::Unused {
            return;
        }
        if resources
            .into_iter()
            .any(|r| !scope_known_without_schema(r.api_version(), r.kind()))
        {
            self.builtin = BuiltinUse::Flagged;
        }
    }

    /// Where the built-in definitions stand beside a custom document
    /// chosen now.
    pub(crate) fn layer(&self) -> KubernetesLayer {
        match self.use_so_far() {
            BuiltinUse::Unused => KubernetesLayer::Absent,
            BuiltinUse::Flagged => KubernetesLayer::Above,
            BuiltinUse::Read => KubernetesLayer::Below,
        }
    }

    /// Records a decision: `Some(None)` for the built-in schema by
    /// version, `Some(Some(schema))` for a custom one, `None` for a
    /// kustomization without `openapi:` (which decides only at the top).
    pub(crate) fn decide(&mut self, top: bool, chosen: Option<Option<Arc<Schema>>>) {
        if top || chosen.is_some() {
            self.chosen = chosen;
        }
    }

    /// Takes on what building one entry on its own (from a copy of this
    /// choice) did, when it goes with what came before it.
    pub(crate) fn absorb(&mut self, entry: SchemaChoice) {
        if self.is_decided() {
            return;
        }
        self.builtin = self.use_so_far().max(entry.use_so_far());
        self.chosen = entry.chosen;
    }

    /// Whether an entry built on its own from `start` must be built again
    /// after what earlier entries did to this choice: its own decision
    /// depended on the state they changed, or one of them decided before
    /// it.
    pub(crate) fn outdates(&self, start: &SchemaChoice, entry: &SchemaChoice) -> bool {
        if start.is_decided() {
            return false;
        }
        self.is_decided() || (entry.is_decided() && self != start)
    }

    fn use_so_far(&self) -> BuiltinUse {
        if self.builtin_read.load(Ordering::Relaxed) {
            BuiltinUse::Read
        } else {
            self.builtin
        }
    }
}

/// The schema of an `openapi: path:` file, beside the built-in definitions
/// as `layer` says. One that cannot be read fails the first strategic
/// merge, not the build, as in Kustomize (a file with nothing but comments
/// or blank lines is an empty document; an empty file is unreadable).
pub(crate) fn custom_schema(file: &Path, text: &str, layer: KubernetesLayer) -> Schema {
    let invalid =
        |why: &str| Schema::unusable(format!("invalid schema file {}: {why}", file.display()));
    if text.is_empty() {
        return invalid("the file is empty");
    }
    let docs = match krusty_yaml::parse_stream(text) {
        Ok(docs) => docs,
        Err(e) => return invalid(&format!("line {}: {}", e.pos.line, e.message)),
    };
    let doc = docs
        .into_iter()
        .find_map(|d| d.root)
        .unwrap_or_else(Node::null);
    Schema::custom(&doc, layer).unwrap_or_else(|e| invalid(&e.to_string()))
}
