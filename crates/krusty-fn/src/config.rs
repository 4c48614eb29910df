//! Typed access to nodes through serde: read a `functionConfig` (or any
//! node) into the author's own struct.

use krusty_yaml::{Node, Resolved, Value};
use serde::de::DeserializeOwned;

use crate::run::FnError;
use crate::wire::ResourceList;

/// Converts a node to a JSON value, typing scalars as YAML does (plain
/// `1` is a number, `"1"` a string).
pub fn to_json_value(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.value {
        Value::Scalar(s) => match krusty_yaml::resolve_input(node) {
            Resolved::Null => J::Null,
            Resolved::Bool(b) => J::Bool(b),
            Resolved::Int(i) => i64::try_from(i)
                .map(J::from)
                .or_else(|_| u64::try_from(i).map(J::from))
                .unwrap_or_else(|_| J::String(s.text.to_string())),
            Resolved::Float(f) => serde_json::Number::from_f64(f)
                .map(J::Number)
                .unwrap_or_else(|| J::String(s.text.to_string())),
            Resolved::Str(t) => J::String(t.to_string()),
            Resolved::Owned(t) => J::String(t),
        },
        Value::Seq(items) => J::Array(items.iter().map(to_json_value).collect()),
        Value::Map(entries) => J::Object(
            entries
                .iter()
                .map(|(k, v)| {
                    (
                        k.key_str().unwrap_or_default().to_string(),
                        to_json_value(v),
                    )
                })
                .collect(),
        ),
    }
}

/// Reads `node` into `T`. Errors name the field serde could not read.
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, String> {
    serde_json::from_value(to_json_value(node)).map_err(|e| e.to_string())
}

/// A `functionConfig` type that fills in its own defaults and checks
/// itself, read with [`ResourceList::typed_config`] (kyaml's framework
/// calls these hooks `Defaulter` and `Validator`).
///
/// ```
/// use krusty_fn::{config::FunctionConfig, FnError, FnResult};
///
/// #[derive(serde::Deserialize, Default)]
/// #[serde(default)]
/// struct Config {
///     replicas: u32,
///     team: String,
/// }
///
/// impl FunctionConfig for Config {
///     fn apply_defaults(&mut self) {
///         if self.replicas == 0 {
///             self.replicas = 1;
///         }
///     }
///     fn validate(&self) -> Result<(), FnError> {
///         if self.team.is_empty() {
///             return Err(FnResult::error("team is required").at_field("team").into());
///         }
///         Ok(())
///     }
/// }
/// ```
pub trait FunctionConfig: DeserializeOwned {
    /// Fills in what the user left out; runs before [`validate`](Self::validate).
    fn apply_defaults(&mut self) {}

    /// Checks the config (after defaulting); the error stops the function
    /// as an error result.
    fn validate(&self) -> Result<(), FnError> {
        Ok(())
    }
}

impl ResourceList {
    /// The `functionConfig` read into `T`, defaulted and validated by its
    /// [`FunctionConfig`] hooks.
    pub fn typed_config<T: FunctionConfig>(&self) -> Result<T, FnError> {
        let mut config: T = self.config()?;
        config.apply_defaults();
        config.validate()?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Config {
        data: BTreeMap<String, String>,
        replicas: Option<u32>,
        enabled: bool,
    }

    #[test]
    fn scalars_are_typed_as_yaml_types_them() {
        let n = krusty_yaml::parse_stream("data: {a: 'x', b: \"2\"}\nreplicas: 3\nenabled: true\n")
            .unwrap()[0]
            .root
            .clone()
            .unwrap();
        let c: Config = from_node(&n).unwrap();
        assert_eq!(c.replicas, Some(3));
        assert_eq!(c.data["b"], "2");
        assert!(c.enabled);
        let bad = krusty_yaml::parse_stream("data: {}\nreplicas: x\nenabled: true\n").unwrap()[0]
            .root
            .clone()
            .unwrap();
        let err = from_node::<Config>(&bad).unwrap_err();
        assert!(err.contains("invalid type"), "{err}");
    }

    #[derive(serde::Deserialize, Default, Debug)]
    #[serde(default)]
    struct Scaled {
        replicas: u32,
        team: String,
    }

    impl FunctionConfig for Scaled {
        fn apply_defaults(&mut self) {
            if self.replicas == 0 {
                self.replicas = 2;
            }
        }
        fn validate(&self) -> Result<(), FnError> {
            if self.team.is_empty() {
                return Err(crate::FnResult::error("team is required")
                    .at_field("team")
                    .into());
            }
            Ok(())
        }
    }

    #[test]
    fn typed_config_defaults_then_validates() {
        let mut list = ResourceList {
            function_config: Some(crate::parse_object("team: web").unwrap()),
            ..ResourceList::default()
        };
        let config: Scaled = list.typed_config().unwrap();
        assert_eq!((config.replicas, config.team.as_str()), (2, "web"));
        list.function_config = Some(crate::parse_object("replicas: 5").unwrap());
        let err = list.typed_config::<Scaled>().unwrap_err();
        match err {
            FnError::Results(r) => {
                assert_eq!(r[0].field.as_ref().map(|f| f.path.as_str()), Some("team"))
            }
            other => panic!("expected a result, got {other:?}"),
        }
    }
}
