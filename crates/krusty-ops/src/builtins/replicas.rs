//! ReplicaCountTransformer: sets the replica count of named workloads.

use krusty_resource::ResMap;
use krusty_yaml::Node;

use crate::error::{OpError, OpResult};
use crate::fieldspec::{apply, CreateKind, FieldSpec};

/// Sets `count` replicas on resources named `name` (current or earlier name).
#[derive(Debug, Clone, PartialEq)]
pub struct SetReplicas {
    /// Resource name.
    pub name: String,
    /// Replica count.
    pub count: i64,
    /// Which kinds and fields.
    pub specs: Vec<FieldSpec>,
}

impl SetReplicas {
    /// Applies the count; it is an error if no resource matches.
    pub fn apply(&self, resources: &mut ResMap) -> OpResult<()> {
        let mut found = false;
        for spec in &self.specs {
            for r in resources.resources_mut() {
                if !r.any_id(|id| id.name == self.name && id.gvk.is_selected_by(&spec.gvk)) {
                    continue;
                }
                found = true;
                let gvk = r.gvk();
                apply(
                    &mut r.node,
                    &gvk,
                    spec,
                    CreateKind::Scalar,
                    &mut |n: &mut Node| {
                        n.replace_keeping_pos(Node::plain(self.count.to_string()));
                        Ok(())
                    },
                )?;
            }
        }
        if !found {
            let gvks: Vec<String> = self.specs.iter().map(|s| s.gvk.to_string()).collect();
            return Err(OpError::new(format!(
                "resource with name {} does not match a config with the following GVK [{}]",
                self.name,
                gvks.join(" ")
            )));
        }
        Ok(())
    }
}
