//! Patching items: [`strategic_merge`] applies a patch the way a
//! Kubernetes strategic merge patch does for the fields functions patch
//! most (pod specs), keeping comments and order of what stays.
//!
//! The rules:
//!
//! - mappings merge key by key; a `null` value removes the key;
//!   `$patch: replace` in a patch mapping replaces the target mapping;
//! - lists of objects with a merge key merge item by item: `containers`,
//!   `initContainers`, `ephemeralContainers`, `volumes`, `env`,
//!   `imagePullSecrets` and `resourceClaims` by `name`; `volumeMounts` by
//!   `mountPath`; `volumeDevices` by `devicePath`; `hostAliases` by `ip`;
//!   `ports` by `containerPort` (container ports) or `port` (Service ports).
//!   A patch item with `$patch: delete` removes the matching item; new
//!   items are appended;
//! - every other list, and every scalar, is replaced.
//!
//! This is not Kubernetes' whole schema (it does not know `$setElementOrder`,
//! `$retainKeys` or other types' merge keys): for those, edit with
//! [`crate::KubeObject`].

use krusty_yaml::{Node, Value};

use crate::to_node::assign;

/// The merge key of the list under `field`, given a patch item.
fn merge_key(field: &str, sample: &Node) -> Option<&'static str> {
    match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims" => Some("name"),
        "volumeMounts" => Some("mountPath"),
        "volumeDevices" => Some("devicePath"),
        "hostAliases" => Some("ip"),
        "ports" if sample.get("containerPort").is_some() => Some("containerPort"),
        "ports" => Some("port"),
        _ => None,
    }
}

/// The directive of a patch mapping (`$patch: delete|replace|merge`).
fn directive(patch: &Node) -> Option<&str> {
    patch.get("$patch").and_then(Node::as_str)
}

/// Applies `patch` to `target` (see the module's documentation).
pub fn strategic_merge(target: &mut Node, mut patch: Node) {
    if directive(&patch) == Some("replace") {
        patch.remove("$patch");
        *target = patch;
        return;
    }
    if patch.as_map().is_none() || target.as_map().is_none() {
        strip_directives(&mut patch);
        assign(target, patch);
        return;
    }
    let Value::Map(entries) = &mut patch.value else {
        return;
    };
    for (key, value) in std::mem::take(entries) {
        let Some(name) = key.key_str().map(str::to_string) else {
            continue;
        };
        if name == "$patch" {
            continue;
        }
        if value.is_null() {
            target.remove(&name);
            continue;
        }
        match target.get_mut(&name) {
            None => {
                let mut value = value;
                strip_directives(&mut value);
                target.set(&name, value);
            }
            Some(slot) => merge_field(&name, slot, value),
        }
    }
}

/// Merges the patch value of field `name` into `slot`.
fn merge_field(name: &str, slot: &mut Node, value: Node) {
    let key = value
        .as_seq()
        .and_then(|items| items.first())
        .and_then(|first| merge_key(name, first));
    match (key, &mut slot.value, value.value) {
        (Some(key), Value::Seq(items), Value::Seq(patch_items)) => {
            for p in patch_items {
                merge_item(items, key, p);
            }
        }
        (_, _, v) => {
            let mut v = Node::new(v);
            if slot.as_map().is_some() && v.as_map().is_some() {
                strategic_merge(slot, v);
            } else {
                strip_directives(&mut v);
                assign(slot, v);
            }
        }
    }
}

/// Merges one patch item into a keyed list.
fn merge_item(items: &mut krusty_yaml::ThinVec<Node>, key: &str, mut p: Node) {
    let id = p.get(key).and_then(Node::as_str).map(str::to_string);
    let found = id.as_deref().and_then(|id| {
        items
            .iter()
            .position(|i| i.get(key).and_then(Node::as_str) == Some(id))
    });
    match (found, directive(&p)) {
        (Some(i), Some("delete")) => {
            items.remove(i);
        }
        (None, Some("delete")) => {}
        (Some(i), _) => strategic_merge(&mut items[i], p),
        (None, _) => {
            strip_directives(&mut p);
            items.push(p);
        }
    }
}

/// Removes `$patch` directives from a value added as it is.
fn strip_directives(node: &mut Node) {
    match &mut node.value {
        Value::Map(entries) => {
            entries.retain(|(k, _)| k.key_str() != Some("$patch"));
            for (_, v) in entries.iter_mut() {
                strip_directives(v);
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(strip_directives),
        Value::Scalar(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        crate::parse_object(text).unwrap()
    }

    #[test]
    fn merges_pod_lists_by_key_and_keeps_comments() {
        let mut d = parse(
            "spec:\n  replicas: 1 # one\n  template:\n    spec:\n      containers:\n      - name: app # main\n        image: a\n        ports:\n        - containerPort: 80\n      - name: old\n        image: o\n      tolerations: [{key: a}]\n",
        );
        let patch = parse(
            "spec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n      - name: app\n        image: b\n        ports:\n        - containerPort: 81\n      - name: old\n        $patch: delete\n      - name: side\n        image: s\n      tolerations: [{key: b}]\n",
        );
        strategic_merge(&mut d, patch);
        assert_eq!(
            crate::to_yaml(&d).unwrap(),
            "spec:\n  replicas: 2 # one\n  template:\n    spec:\n      containers:\n      - name: app # main\n        image: b\n        ports:\n        - containerPort: 80\n        - containerPort: 81\n      - name: side\n        image: s\n      tolerations: [{key: b}]\n"
        );
        let mut m = parse("a: {b: 1, c: 2}\nd: 3\n");
        strategic_merge(&mut m, parse("a: {$patch: replace, e: 5}\nd: null\n"));
        assert_eq!(crate::to_yaml(&m).unwrap(), "a:\n  e: 5\n");
    }
}
