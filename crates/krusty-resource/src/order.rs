//! Output order: Kustomize's legacy kind-based ordering.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::resource::Resource;

/// Kinds printed first, in this order, by the default ordering.
pub const DEFAULT_ORDER_FIRST: [&str; 22] = [
    "Namespace",
    "ResourceQuota",
    "StorageClass",
    "CustomResourceDefinition",
    "ServiceAccount",
    "PodSecurityPolicy",
    "Role",
    "ClusterRole",
    "RoleBinding",
    "ClusterRoleBinding",
    "ConfigMap",
    "Secret",
    "Endpoints",
    "Service",
    "LimitRange",
    "PriorityClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Deployment",
    "StatefulSet",
    "CronJob",
    "PodDisruptionBudget",
];

/// Kinds printed last, in this order, by the default ordering.
pub const DEFAULT_ORDER_LAST: [&str; 2] = [
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// A legacy ordering: kinds listed first, then all others, then kinds listed last.
#[derive(Debug, Clone)]
pub struct LegacyOrder {
    rank: HashMap<String, i64>,
}

impl Default for LegacyOrder {
    fn default() -> Self {
        LegacyOrder::new(
            DEFAULT_ORDER_FIRST.iter().map(|s| s.to_string()).collect(),
            DEFAULT_ORDER_LAST.iter().map(|s| s.to_string()).collect(),
        )
    }
}

impl LegacyOrder {
    /// An ordering from explicit first and last kind lists.
    pub fn new(first: Vec<String>, last: Vec<String>) -> LegacyOrder {
        let mut rank = HashMap::new();
        let n = first.len() as i64;
        for (i, k) in first.into_iter().enumerate() {
            rank.insert(k, i as i64 - n);
        }
        for (i, k) in last.into_iter().enumerate() {
            rank.insert(k, i as i64 + 1);
        }
        LegacyOrder { rank }
    }

    /// A kind's place: below zero for kinds listed first, above zero for
    /// kinds listed last, zero for the others.
    pub fn rank(&self, kind: &str) -> i64 {
        self.rank.get(kind).copied().unwrap_or(0)
    }
}

/// The sort key of a resource in the legacy order.
struct LegacyKey {
    /// The kind's rank.
    rank: i64,
    /// `group_version_kind`, then `namespace|name`: Kustomize's id string,
    /// blanks standing as `~G`, `~V`, `~K`, `~X` and `~N`.
    text: String,
    /// Where the `namespace|name` part of `text` starts.
    split: usize,
}

impl LegacyKey {
    /// Builds the key of `r` (one allocation).
    fn of(order: &LegacyOrder, r: &Resource) -> LegacyKey {
        let api_version = r.api_version();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let kind = r.kind();
        let parts = [
            blank_as(group, "~G"),
            "_",
            blank_as(version, "~V"),
            "_",
            blank_as(kind, "~K"),
        ];
        let rest = [blank_as(r.namespace(), "~X"), "|", blank_as(r.name(), "~N")];
        let mut text = String::with_capacity(parts.iter().chain(&rest).map(|p| p.len()).sum());
        parts.iter().for_each(|p| text.push_str(p));
        let split = text.len();
        rest.iter().for_each(|p| text.push_str(p));
        LegacyKey {
            rank: order.rank(kind),
            text,
            split,
        }
    }

    /// Kustomize's comparison: kind rank, then the group/version/kind
    /// text, then the `namespace|name` text (so namespace `a-b` sorts
    /// before `a`, as `-` comes before `|`).
    fn cmp(&self, other: &LegacyKey) -> std::cmp::Ordering {
        self.rank
            .cmp(&other.rank)
            .then_with(|| self.text[..self.split].cmp(&other.text[..other.split]))
            .then_with(|| self.text[self.split..].cmp(&other.text[other.split..]))
    }
}

/// `s`, or `blank` when `s` is empty.
fn blank_as<'a>(s: &'a str, blank: &'a str) -> &'a str {
    if s.is_empty() {
        blank
    } else {
        s
    }
}

/// Sorts resources by kind rank, then by the text of group, version and
/// kind, then by the text `namespace|name`. Stable, so equal ids keep their
/// input order.
pub fn sort_legacy(resources: &mut [Resource], order: &LegacyOrder) {
    // Keys are computed once each, and both steps run in parallel (the
    // sort is stable: equal keys keep their input order).
    let perm: Vec<usize> = {
        let mut keyed: Vec<_> = resources
            .par_iter()
            .enumerate()
            .map(|(i, r)| (LegacyKey::of(order, r), i))
            .collect();
        keyed.par_sort_by(|a, b| a.0.cmp(&b.0));
        keyed.into_iter().map(|k| k.1).collect()
    };
    apply_permutation(resources, perm);
}

/// Puts `resources[perm[i]]` at position `i`, in place: each cycle of the
/// permutation is followed once, with swaps (no second array of resources).
fn apply_permutation(resources: &mut [Resource], mut perm: Vec<usize>) {
    const DONE: usize = usize::MAX;
    for start in 0..perm.len() {
        let mut at = start;
        while perm[at] != DONE {
            let from = perm[at];
            perm[at] = DONE;
            if perm[from] == DONE {
                break;
            }
            resources.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Resource {
        let text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
        let node = krusty_yaml::parse_stream(&text).unwrap()[0]
            .root
            .clone()
            .unwrap();
        Resource::from_node(node).unwrap()
    }

    #[test]
    fn permutations_are_applied_in_place() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for n in [0, 1, 2, 3, 7, 64, 257] {
            let mut perm: Vec<usize> = (0..n).collect();
            // Fisher-Yates with a xorshift generator.
            for i in (1..n).rev() {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                perm.swap(i, (seed % (i as u64 + 1)) as usize);
            }
            let mut resources: Vec<Resource> = (0..n).map(|i| named(&format!("r{i}"))).collect();
            apply_permutation(&mut resources, perm.clone());
            let names: Vec<&str> = resources.iter().map(Resource::name).collect();
            let expected: Vec<String> = perm.iter().map(|i| format!("r{i}")).collect();
            assert_eq!(names, expected, "n = {n}");
        }
    }
}
