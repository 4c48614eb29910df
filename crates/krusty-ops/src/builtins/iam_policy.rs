//! IAMPolicyGenerator: a Kubernetes ServiceAccount bound to a cloud service
//! account (GKE Workload Identity).

use krusty_resource::Resource;
use krusty_yaml::Node;

use crate::error::{OpError, OpResult};
use crate::typed::lenient_string;

/// The generator's configuration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IamPolicy {
    /// Cloud provider; only `gke` is supported, as in Kustomize.
    pub cloud: String,
    /// Name of the Kubernetes ServiceAccount.
    pub name: String,
    /// Its namespace, if any.
    pub namespace: String,
    /// Cloud service account name.
    pub account: String,
    /// Cloud project id.
    pub project: String,
}

impl IamPolicy {
    /// Reads an `apiVersion: builtin` IAMPolicyGenerator config.
    pub fn from_config(config: &Node) -> IamPolicy {
        let at = |path: &[&str]| {
            config
                .get_path(path)
                .map(lenient_string)
                .unwrap_or_default()
        };
        IamPolicy {
            cloud: at(&["cloud"]),
            name: at(&["kubernetesService", "name"]),
            namespace: at(&["kubernetesService", "namespace"]),
            account: at(&["serviceAccount", "name"]),
            project: at(&["serviceAccount", "projectId"]),
        }
    }

    /// Makes the ServiceAccount.
    pub fn generate(&self) -> OpResult<Resource> {
        if self.cloud != "gke" {
            return Err(OpError::new(format!(
                "cloud provider {} not supported yet",
                self.cloud
            )));
        }
        let mut meta = Node::map();
        meta.set("name", Node::string(self.name.as_str()));
        if !self.namespace.is_empty() {
            meta.set("namespace", Node::string(self.namespace.as_str()));
        }
        let mut annotations = Node::map();
        annotations.set(
            "iam.gke.io/gcp-service-account",
            Node::string(format!(
                "{}@{}.iam.gserviceaccount.com",
                self.account, self.project
            )),
        );
        meta.set("annotations", annotations);
        let mut root = Node::map();
        root.set("apiVersion", Node::string("v1"));
        root.set("kind", Node::string("ServiceAccount"));
        root.set("metadata", meta);
        Resource::from_node(root).map_err(OpError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gke_service_account() {
        let p = IamPolicy {
            cloud: "gke".into(),
            name: "k8s-sa".into(),
            account: "gsa".into(),
            project: "proj".into(),
            ..Default::default()
        };
        let r = p.generate().unwrap();
        assert_eq!(
            r.annotation("iam.gke.io/gcp-service-account"),
            Some("gsa@proj.iam.gserviceaccount.com")
        );
        let aws = IamPolicy {
            cloud: "aws".into(),
            ..p
        };
        assert!(aws.generate().is_err());
    }
}
