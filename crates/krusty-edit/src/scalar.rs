//! `edit set nameprefix|namesuffix|namespace`: one text field.

use crate::error::{EditError, EditResult};
use crate::file::KustomizationFile;

/// A field `edit set` gives one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarField {
    /// `namePrefix`.
    NamePrefix,
    /// `nameSuffix`.
    NameSuffix,
    /// `namespace`.
    Namespace,
}

impl ScalarField {
    fn field(self) -> &'static str {
        match self {
            ScalarField::NamePrefix => "namePrefix",
            ScalarField::NameSuffix => "nameSuffix",
            ScalarField::Namespace => "namespace",
        }
    }

    fn word(self) -> &'static str {
        match self {
            ScalarField::NamePrefix => "prefix",
            ScalarField::NameSuffix => "suffix",
            ScalarField::Namespace => "namespace",
        }
    }
}

/// The one value of `edit set nameprefix|namesuffix|namespace`.
pub fn parse_value(field: ScalarField, args: &[String]) -> EditResult<String> {
    match args {
        [one] => Ok(one.clone()),
        _ => Err(EditError::new(format!(
            "must specify exactly one {} value",
            field.word()
        ))),
    }
}

/// Sets the field; an empty value removes it (Kustomize's writer leaves
/// empty fields out).
pub fn set(k: &mut KustomizationFile, field: ScalarField, value: &str) {
    let node = crate::node::replacing(k.get(field.field()), value);
    k.set_or_remove(field.field(), node);
}
