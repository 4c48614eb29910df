//! A transformer: injects a sidecar container into the pod template of
//! every workload its selector chooses, or updates it in place when a
//! container of that name is already there. The config is typed: the
//! container is a serde struct written into the item as it is.
//!
//! ```yaml
//! apiVersion: fn.krusty.dev/v1
//! kind: SidecarInjector
//! metadata:
//!   name: proxy
//! spec:
//!   selector:                     # a patch target; default: every workload
//!     labelSelector: mesh=on
//!   container:
//!     name: proxy
//!     image: envoyproxy/envoy:v1.30.1
//!     args: [--config-path, /etc/envoy.yaml]
//!     ports:
//!     - {name: admin, containerPort: 9901}
//!     env:
//!     - {name: LOG_LEVEL, value: info}
//! ```

use krusty_fn::{FnError, FnResult, KubeObject, ResourceList, Selector};
use serde::{Deserialize, Serialize};

use crate::pod_spec_path;

#[derive(Deserialize, Default)]
#[serde(default)]
struct Config {
    spec: Spec,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Spec {
    selector: Selector,
    container: Container,
}

/// The sidecar, as Kubernetes writes a container (the fields this
/// function supports).
#[derive(Serialize, Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Container {
    name: String,
    image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    ports: Vec<Port>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    env: Vec<EnvVar>,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Port {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    container_port: u16,
}

#[derive(Serialize, Deserialize, Default)]
#[serde(default)]
struct EnvVar {
    name: String,
    value: String,
}

/// Injects (or updates) the configured sidecar.
pub fn inject(list: &mut ResourceList) -> Result<(), FnError> {
    let config: Config = list.config()?;
    let container = &config.spec.container;
    if container.name.is_empty() || container.image.is_empty() {
        return Err("spec.container needs a name and an image".into());
    }
    let selector = config.spec.selector.compile()?;
    let mut results = Vec::new();
    for item in list.select_mut(selector) {
        let Some(pod) = pod_spec_path(item.kind()) else {
            continue;
        };
        let field = format!("{pod}.containers[name={}]", container.name);
        let verb = if item.at(&field)?.is_some() {
            "updated"
        } else {
            "injected"
        };
        item.set_field(&field, container)?;
        results.push(
            FnResult::info(format!("{verb} sidecar '{}'", container.name))
                .about(item)
                .at_field(field),
        );
    }
    if results.is_empty() {
        results.push(FnResult::warning("no workload matched the selector"));
    }
    list.results.extend(results);
    Ok(())
}
