//! Typed access to nodes through serde: read a `functionConfig` (or any
//! node) into the author's own struct, and the one call that reads a
//! config the way kyaml's `LoadFunctionConfig` does: schema, decoding,
//! defaults and validation, every problem a result of its own.

use krusty_yaml::Node;
use serde::de::DeserializeOwned;

use crate::result::FnResult;
use crate::run::FnError;
use crate::schema::Schema;
use crate::wire::ResourceList;

/// Converts a node to a JSON value, typing scalars as YAML does (plain
/// `1` is a number, `"1"` a string): the value `Node`'s `Serialize`
/// gives.
pub fn to_json_value(node: &Node) -> serde_json::Value {
    // A node serializes its mapping keys as strings, which is all that
    // JSON values can fail on.
    serde_json::to_value(node).unwrap_or(serde_json::Value::Null)
}

/// Why a node could not be read into a type: the field serde stopped at
/// and its reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// The path of the field from the node read (`spec.ports[1].port`;
    /// empty for the node itself).
    pub field: String,
    /// Serde's reason (`invalid type: string "x", expected u32`).
    pub message: String,
}

impl ReadError {
    /// The error with its field taken as relative to `path`.
    pub fn under(self, path: &str) -> ReadError {
        let field = match (path.is_empty(), self.field.is_empty()) {
            (true, _) => self.field,
            (false, true) => path.to_string(),
            (false, false) if self.field.starts_with('[') => format!("{path}{}", self.field),
            (false, false) => format!("{path}.{}", self.field),
        };
        ReadError { field, ..self }
    }
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads `node` into `T`. The error names the field serde could not read.
///
/// ```
/// #[derive(serde::Deserialize, Debug)]
/// struct Port {
///     port: u16,
/// }
/// let node = krusty_fn::parse_object("ports: [{port: 80}, {port: web}]").unwrap();
/// let err = krusty_fn::config::from_node::<Vec<Port>>(node.get("ports").unwrap()).unwrap_err();
/// assert_eq!(err.field, "[1].port");
/// assert!(err.message.starts_with("invalid type: string \"web\""), "{err}");
/// ```
pub fn from_node<T: DeserializeOwned>(node: &Node) -> Result<T, ReadError> {
    let value = to_json_value(node);
    serde_path_to_error::deserialize(&value).map_err(|e| {
        let field = e.path().to_string();
        ReadError {
            field: if field == "." { String::new() } else { field },
            message: e.into_inner().to_string(),
        }
    })
}

/// A `functionConfig` type that brings its own schema, fills in its own
/// defaults and checks itself, read with [`ResourceList::typed_config`]
/// (kyaml's framework calls these hooks `ValidationSchemaProvider`,
/// `Defaulter` and `Validator`).
///
/// ```
/// use krusty_fn::{config::FunctionConfig, FnError, FnResult, Schema};
///
/// #[derive(serde::Deserialize, Default)]
/// #[serde(default)]
/// struct Config {
///     replicas: u32,
///     team: String,
/// }
///
/// impl FunctionConfig for Config {
///     fn schema() -> Result<Option<Schema>, FnError> {
///         Schema::parse("type: object\nproperties:\n  replicas: {type: integer, maximum: 10}\n")
///             .map(Some)
///     }
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
    /// The OpenAPI schema the config must fit, checked before it is read;
    /// usually the function's own definition's,
    /// `Schema::from_definition(include_str!("definition.yaml"), "v1")`.
    /// None by default. An error here is the function's own fault and
    /// stops it as one.
    fn schema() -> Result<Option<Schema>, FnError> {
        Ok(None)
    }

    /// Fills in what the user left out; runs before [`validate`](Self::validate).
    fn apply_defaults(&mut self) {}

    /// Checks the config (after defaulting). Every result of a returned
    /// [`FnError::Results`] is reported; another error is one result.
    fn validate(&self) -> Result<(), FnError> {
        Ok(())
    }
}

impl ResourceList {
    /// The `functionConfig` read into `T` in one call: checked against
    /// [`FunctionConfig::schema`], read, defaulted with
    /// [`FunctionConfig::apply_defaults`] and checked with
    /// [`FunctionConfig::validate`]. Every problem found is one error
    /// result naming its field, all of them together in
    /// [`FnError::Results`]: the schema's problems, the field serde could
    /// not read (unless the schema named that field already; then the
    /// hooks do not run), and the validation hook's. A missing
    /// `functionConfig` reads as an empty mapping.
    pub fn typed_config<T: FunctionConfig>(&self) -> Result<T, FnError> {
        let empty = Node::map();
        let node = self.function_config.as_ref().unwrap_or(&empty);
        let mut problems = match T::schema()? {
            Some(schema) => schema.check(node),
            None => Vec::new(),
        };
        let mut config: T = match from_node(node) {
            Ok(config) => config,
            Err(e) => {
                let named = problems
                    .iter()
                    .any(|p| p.field.as_ref().is_some_and(|f| f.path == e.field));
                if !named {
                    let at = if e.field.is_empty() {
                        "the config"
                    } else {
                        &e.field
                    };
                    problems.push(
                        FnResult::error(format!("{at}: {}", e.message))
                            .about(node)
                            .at_field(e.field.clone()),
                    );
                }
                return Err(FnError::Results(problems));
            }
        };
        config.apply_defaults();
        match config.validate() {
            Ok(()) => {}
            Err(FnError::Results(results)) => problems.extend(results),
            Err(other) => problems.push(FnResult::error(other.to_string()).about(node)),
        }
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(FnError::Results(problems))
        }
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
        assert_eq!(err.field, "replicas");
        assert!(err.message.contains("invalid type"), "{err}");
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

    /// A config with a schema, defaults and a validation hook, as an
    /// author writes one.
    #[derive(serde::Deserialize, Default, Debug)]
    #[serde(default)]
    struct Checked {
        replicas: u32,
        team: String,
        tier: String,
    }

    impl FunctionConfig for Checked {
        fn schema() -> Result<Option<crate::Schema>, FnError> {
            crate::Schema::parse(
                "type: object\nproperties:\n  replicas: {type: integer, maximum: 10}\n  tier: {type: string, enum: [web, db]}\n",
            )
            .map(Some)
        }
        fn apply_defaults(&mut self) {
            if self.tier.is_empty() {
                self.tier = "web".into();
            }
        }
        fn validate(&self) -> Result<(), FnError> {
            let mut problems = Vec::new();
            if self.team.is_empty() {
                problems.push(crate::FnResult::error("team is required").at_field("team"));
            }
            if self.replicas == 0 {
                problems.push(crate::FnResult::error("replicas must be set").at_field("replicas"));
            }
            if problems.is_empty() {
                Ok(())
            } else {
                Err(problems.into())
            }
        }
    }

    fn problems(config: &str) -> Vec<(String, String)> {
        let list = ResourceList {
            function_config: Some(crate::parse_object(config).unwrap()),
            ..ResourceList::default()
        };
        match list.typed_config::<Checked>() {
            Ok(c) => panic!("expected problems, got {c:?}"),
            Err(FnError::Results(results)) => results
                .into_iter()
                .map(|r| (r.field.map(|f| f.path).unwrap_or_default(), r.message))
                .collect(),
            Err(other) => panic!("expected results, got {other:?}"),
        }
    }

    #[test]
    fn one_call_reports_schema_and_validation_problems_together() {
        let got = problems("replicas: 11\ntier: cache\n");
        let fields: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(fields, ["replicas", "tier", "team"], "{got:?}");
        assert!(got[0].1.starts_with("replicas: "), "{got:?}");
    }

    #[test]
    fn one_call_defaults_before_it_validates() {
        let list = ResourceList {
            function_config: Some(crate::parse_object("replicas: 2\nteam: a\n").unwrap()),
            ..ResourceList::default()
        };
        let config: Checked = list.typed_config().unwrap();
        assert_eq!(config.tier, "web");
    }

    #[test]
    fn a_field_serde_cannot_read_is_one_result_unless_the_schema_named_it() {
        // The schema names `replicas` (a string where an integer must be):
        // one result for it, not two, and the hooks do not run.
        let got = problems("replicas: many\n");
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, "replicas");
        // `team` is not in the schema: serde's reason, at its field.
        let got = problems("team: [a]\nreplicas: 1\n");
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, "team");
        assert!(
            got[0].1.starts_with("team: invalid type: sequence"),
            "{got:?}"
        );
    }

    #[test]
    fn field_errors_name_the_whole_path() {
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct Container {
            name: String,
            image: String,
        }
        use crate::KubeObject;
        let item = crate::parse_object(
            "spec:\n  template:\n    spec:\n      containers:\n      - {name: a, image: x}\n      - {name: b, image: [y]}\n",
        )
        .unwrap();
        let err = item
            .field::<Vec<Container>>("spec.template.spec.containers")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("spec.template.spec.containers[1].image: invalid type: sequence"),
            "{err}"
        );
        let ok = crate::parse_object("spec:\n  containers:\n  - {name: a, image: x}\n").unwrap();
        let containers: Vec<Container> = ok.field("spec.containers").unwrap().unwrap();
        assert_eq!(containers[0].image, "x");
    }
}
