//! Build metadata: what the build tracks about a resource beyond its content
//! (Kustomize keeps these as internal annotations and strips them on output).

use krusty_yaml::{CompactString, ThinVec};

/// An identity a resource had before a rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviousId {
    /// Kind at the time.
    pub kind: CompactString,
    /// Name at the time.
    pub name: CompactString,
    /// Namespace at the time; `default` when it was unset.
    pub namespace: CompactString,
}

pub use krusty_schema::generator::Behavior;

/// A folder of a remote repository built as a base: what it holds records
/// the repository, its ref, and a path from the folder the reference names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRoot {
    /// The folder the reference names, in its checkout.
    pub root: std::path::PathBuf,
    /// The path recorded for `root`: its path in the repository
    /// (Kustomize records `notCloned` for the repository's root).
    pub prefix: std::path::PathBuf,
    /// The repository's URL.
    pub repo: String,
    /// The ref asked for (`""`: none).
    pub reference: String,
}

/// Where a resource came from, or which configuration acted on it
/// (Kustomize's `buildMetadata` origin and transformation records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// Read from this file.
    File(std::path::PathBuf),
    /// Made or changed by a configured operation.
    Configured {
        /// The file holding the configuration (a kustomization or a config file).
        configured_in: std::path::PathBuf,
        /// The configuration's `apiVersion`.
        api_version: String,
        /// The configuration's `kind`.
        kind: String,
        /// The configuration's `metadata.name`, if it has one.
        name: String,
        /// The configuration's `metadata.namespace`, if it has one.
        namespace: String,
    },
    /// Read or configured inside a remote base.
    Remote {
        /// The remote base.
        remote: std::sync::Arc<RemoteRoot>,
        /// The file or configuration, with paths in the checkout.
        origin: Box<Origin>,
    },
}

impl Origin {
    /// The file or configuration, wherever it is.
    pub fn local(&self) -> &Origin {
        match self {
            Origin::Remote { origin, .. } => origin.local(),
            other => other,
        }
    }

    /// `self`, inside `remote` when there is one.
    pub fn within(self, remote: Option<&std::sync::Arc<RemoteRoot>>) -> Origin {
        match remote {
            Some(remote) => Origin::Remote {
                remote: std::sync::Arc::clone(remote),
                origin: Box::new(self),
            },
            None => self,
        }
    }
}

/// An annotation whose value was written as a number, boolean, null or
/// timestamp. Kustomize keeps such a value typed until it prints it (as
/// its source text), but a JSON patch turns the whole resource into JSON
/// and back, and the value comes out in its JSON form (`1e3` as `1000`,
/// `0o17` as `15`, `~` as `null`, a date in RFC 3339 form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedAnnotation {
    /// The annotation's key.
    pub key: CompactString,
    /// The value as written.
    pub source: CompactString,
    /// The value's text after a JSON round trip, or why JSON cannot hold
    /// it (an infinite number or NaN).
    pub json: Result<CompactString, crate::json_round_trip::JsonError>,
    /// The JSON value is a number, boolean or null (not a string).
    pub typed: bool,
}

/// Build-time facts about one resource.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BuildMeta {
    /// Earlier identities, oldest first.
    pub previous: Vec<PreviousId>,
    /// Name prefixes applied, innermost kustomization first.
    pub prefixes: Vec<String>,
    /// Name suffixes applied, innermost kustomization first.
    pub suffixes: Vec<String>,
    /// Made by a ConfigMap or Secret generator (Kustomize records its
    /// behavior on it).
    pub generated: bool,
    /// The name gets a content-hash suffix at the end of the build.
    pub needs_hash: bool,
    /// Generator behavior.
    pub behavior: Behavior,
    /// The resource may be renamed by a patch.
    pub allow_name_change: bool,
    /// The resource's kind may be changed by a patch.
    pub allow_kind_change: bool,
    /// Where it came from.
    pub origin: Option<Box<Origin>>,
    /// Operations that ran over it, in order.
    pub transformations: Vec<Origin>,
    /// Names of the vars whose `objref` names this resource (rarely any:
    /// one pointer).
    pub ref_vars: ThinVec<String>,
    /// Label and annotation values that are one YAML node in Kustomize.
    pub shared: Vec<SharedValue>,
    /// Annotations read as typed values (see [`TypedAnnotation`]); most
    /// resources have none, so the list is one pointer.
    pub typed_annotations: ThinVec<TypedAnnotation>,
    /// A replacement wrote number-like text into a field without a type of
    /// its own (one it created), which a later strategic merge quotes.
    pub untyped_numbers: bool,
    /// A replacement wrote text that does not suit a field's type (`x`
    /// into an integer field). Kustomize keeps the type, and fails when it
    /// next decodes the resource (a JSON patch over it, or the output),
    /// unless a later step (a `replicas:` entry, a strategic merge) has
    /// replaced the value by then.
    pub mistyped: bool,
}

/// A label or annotation value that one transformer run wrote into several
/// maps of a resource (labels, selectors, templates). Kustomize gives those
/// fields one YAML node, so a later in-place change of any of them (a
/// higher level's labels, a strategic merge, a replacement) changes all.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedValue {
    /// The key (label or annotation name).
    pub key: CompactString,
    /// The value the fields share, as last written.
    pub value: krusty_yaml::Node,
    /// The field-spec paths of the transformer run that wrote it.
    pub paths: std::sync::Arc<[Box<str>]>,
    /// Which of `paths` lead to maps holding it: bit `i` for `paths[i]`
    /// (the first 128 paths).
    pub members: u128,
}
