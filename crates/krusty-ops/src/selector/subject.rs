//! What krusty-ops' selectors look at: a resource as a patch target sees
//! it ([`Selected`]), or one of its ids as written ([`AsWritten`]).

use std::borrow::Cow;

use krusty_match::selector::Subject;
use krusty_resource::id::NOT_A_NAMESPACE;
use krusty_resource::{is_cluster_scoped, ResId, Resource};

use crate::typed;

/// A resource as Kustomize's patch targets select it: by its current
/// kind, group and version, its original or current name, and its
/// original or current namespace as `ResId::effective_namespace` gives it
/// (`default` when it has none, a marker when its kind is cluster-scoped);
/// its labels and annotations read as strings whatever their YAML type
/// (`replicas: 3` is `"3"`).
#[derive(Debug, Clone, Copy)]
pub struct Selected<'a>(pub &'a Resource);

impl Selected<'_> {
    /// Group and version, split from `apiVersion`.
    fn group_version(&self) -> (&str, &str) {
        let api_version = self.0.api_version();
        api_version.rsplit_once('/').unwrap_or(("", api_version))
    }

    /// Metadata mapping `map`'s entry `key`, as a string.
    fn metadata(&self, map: &str, key: &str) -> Option<Cow<'_, str>> {
        let value = self.0.node.get_path(&["metadata", map, key])?;
        Some(typed::lenient_str(value))
    }
}

impl Subject for Selected<'_> {
    fn group(&self) -> &str {
        self.group_version().0
    }

    fn version(&self) -> &str {
        self.group_version().1
    }

    fn kind(&self) -> &str {
        self.0.kind()
    }

    fn any_name(&self, matches: impl Fn(&str) -> bool) -> bool {
        let original = self.0.meta.previous.first().map(|p| p.name.as_str());
        matches(original.unwrap_or(self.0.name())) || matches(self.0.name())
    }

    fn any_namespace(&self, matches: impl Fn(&str) -> bool) -> bool {
        let r = self.0;
        let (group, version) = self.group_version();
        let (original_kind, original_namespace) = match r.meta.previous.first() {
            Some(p) => (p.kind.as_str(), p.namespace.as_str()),
            None => (r.kind(), r.namespace()),
        };
        let original_cluster = is_cluster_scoped(group, version, original_kind);
        let cluster = is_cluster_scoped(group, version, r.kind());
        matches(effective_namespace(original_cluster, original_namespace))
            || matches(effective_namespace(cluster, r.namespace()))
    }

    fn label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.metadata("labels", key)
    }

    fn annotation(&self, key: &str) -> Option<Cow<'_, str>> {
        self.metadata("annotations", key)
    }
}

/// The namespace a selector sees, as `ResId::effective_namespace` gives it.
fn effective_namespace(cluster_scoped: bool, namespace: &str) -> &str {
    if cluster_scoped {
        NOT_A_NAMESPACE
    } else if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}

/// A resource id as written: a resource without a namespace has none (not
/// `default`). An id has no labels or annotations, so only
/// [`IdPatterns`](krusty_match::selector::IdPatterns) match ids.
#[derive(Debug, Clone, Copy)]
pub struct AsWritten<'a>(pub &'a ResId);

impl Subject for AsWritten<'_> {
    fn group(&self) -> &str {
        &self.0.gvk.group
    }

    fn version(&self) -> &str {
        &self.0.gvk.version
    }

    fn kind(&self) -> &str {
        &self.0.gvk.kind
    }

    fn any_name(&self, matches: impl Fn(&str) -> bool) -> bool {
        matches(&self.0.name)
    }

    fn any_namespace(&self, matches: impl Fn(&str) -> bool) -> bool {
        matches(&self.0.namespace)
    }

    fn label(&self, _: &str) -> Option<Cow<'_, str>> {
        None
    }

    fn annotation(&self, _: &str) -> Option<Cow<'_, str>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::selector::{Compile, Selector};
    use crate::test_support::node;

    fn resource(yaml: &str) -> Resource {
        Resource::from_node(node(yaml)).unwrap()
    }

    fn selects(selector: &str, r: &Resource) -> bool {
        let s = Selector::from_node(&node(selector), "Selector", typed::Strictness::Strict);
        s.unwrap().compile_regex().unwrap().matches(r)
    }

    #[test]
    fn labels_are_read_as_strings() {
        let r = resource(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n  labels: {app: web, replicas: 3, on: true}\n",
        );
        assert!(selects("labelSelector: app=web,replicas>2", &r));
        assert!(selects("labelSelector: on=true", &r));
        assert!(!selects("labelSelector: app!=web", &r));
        assert!(!selects("annotationSelector: app", &r));
        assert!(selects("{}", &r));
    }

    #[test]
    fn a_resource_without_a_namespace_is_in_default_unless_cluster_scoped() {
        let cm = resource("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n");
        assert!(selects("namespace: default", &cm));
        assert!(selects("namespace: def.*", &cm));
        assert!(!selects("namespace: prod", &cm));
        let ns = resource("apiVersion: v1\nkind: Namespace\nmetadata: {name: prod}\n");
        assert!(!selects("namespace: default", &ns));
        assert!(selects(
            "group: ''\nversion: v1\nkind: Namespace|ConfigMap",
            &ns
        ));
        let id = cm.id();
        let written = |text: &str| {
            let s = Selector::from_node(&node(text), "Selector", typed::Strictness::Strict);
            s.unwrap()
                .compile_id_patterns()
                .unwrap()
                .matches(&AsWritten(&id))
        };
        assert!(!written("namespace: default"));
        assert!(written("name: w.*"));
    }
}
