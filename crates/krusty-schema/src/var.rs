//! A `vars:` entry: a name for a field of a resource.

use krusty_yaml::{Node, Pos};

use crate::error::SchemaResult;
use crate::id::Gvk;
use crate::typed::{self, At, Strictness::Strict};

/// The field a var reads when it names none.
const DEFAULT_FIELD_PATH: &str = "metadata.name";

/// One declared var.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Var {
    /// The name used in `$(NAME)`.
    pub name: String,
    /// `objref.apiVersion`.
    pub api_version: String,
    /// `objref` group, version and kind.
    pub gvk: Gvk,
    /// `objref.name`.
    pub object_name: String,
    /// `objref.namespace`.
    pub namespace: String,
    /// `fieldref.fieldPath` as written (may be empty).
    pub field_path: String,
    /// Where the var is declared: its kustomization file (once the build
    /// knows it) and position, for messages.
    pub written_at: (Option<String>, Pos),
}

impl Var {
    /// The objref's group, version and kind (from `apiVersion` when given).
    pub fn target_gvk(&self) -> Gvk {
        if self.api_version.is_empty() {
            self.gvk.clone()
        } else {
            Gvk::from_api_version(&self.api_version, &self.gvk.kind)
        }
    }

    /// `fieldref.fieldPath`, or `metadata.name` when it is not given.
    pub fn field_path(&self) -> &str {
        if self.field_path.is_empty() {
            DEFAULT_FIELD_PATH
        } else {
            &self.field_path
        }
    }
}

/// Reads the `vars:` list.
pub fn read_vars(node: &Node) -> SchemaResult<Vec<Var>> {
    let items = typed::array(
        node,
        At {
            owner: "Kustomization",
            path: "vars",
        },
        "[]Var",
    )?;
    let mut out = Vec::new();
    for item in items {
        let mut var = Var {
            written_at: (None, item.pos()),
            ..Var::default()
        };
        for (name, value) in typed::fields(item, &["name", "objref", "fieldref"], "Var", Strict)? {
            match name {
                "name" => {
                    var.name = typed::string(
                        value,
                        At {
                            owner: "Var",
                            path: "vars.name",
                        },
                    )?
                }
                "objref" => {
                    let known = [
                        "apiVersion",
                        "group",
                        "version",
                        "kind",
                        "name",
                        "namespace",
                    ];
                    for (field, v) in typed::fields(value, &known, "Target", Strict)? {
                        let text = typed::string(
                            v,
                            At {
                                owner: "Target",
                                path: field,
                            },
                        )?;
                        match field {
                            "apiVersion" => var.api_version = text,
                            "group" => var.gvk.group = text.into(),
                            "version" => var.gvk.version = text.into(),
                            "kind" => var.gvk.kind = text.into(),
                            "name" => var.object_name = text,
                            _ => var.namespace = text,
                        }
                    }
                }
                _ => {
                    for (_, v) in typed::fields(value, &["fieldPath"], "FieldSelector", Strict)? {
                        var.field_path = typed::string(
                            v,
                            At {
                                owner: "FieldSelector",
                                path: "fieldPath",
                            },
                        )?;
                    }
                }
            }
        }
        out.push(var);
    }
    Ok(out)
}
