//! What a build does once its top level has run, before its output is
//! printed: one pipeline of stages, each an operation (see
//! [`crate::pipeline`]).

use std::path::Path;

use krusty_ops::builtins::hash::AddHashSuffixes;
use krusty_ops::builtins::nameref::FixNameReferences;
use krusty_ops::vars::{self, VarSet};
use krusty_resource::{sort_legacy, LegacyOrder, Origin, ResMap, Resource};
use krusty_yaml::Node;

use crate::build_metadata::Records;
use crate::error::{BuildError, BuildResult};
use crate::kustomization::SortOptions;
use crate::level::Config;
use crate::pipeline::{Apply, Build, Call, Operation, Pipeline, Role};
use crate::timings::Timings;

/// What the finishing stages need of the top level and the options.
pub(crate) struct Finishing {
    /// The transformer configuration in force.
    pub config: Config,
    /// The vars declared.
    pub declared: VarSet,
    /// The build records to write.
    pub records: Records,
    /// The order of the output.
    pub order: SortOptions,
}

/// The finishing stages of the build of `root`, in order.
pub(crate) fn pipeline(finishing: Finishing, root: &Path) -> Pipeline {
    let Finishing {
        config,
        declared,
        records,
        order,
    } = finishing;
    let name_references = FixNameReferences {
        back_refs: config.name_reference.clone(),
    };
    let order = match order {
        SortOptions::Fifo => None,
        SortOptions::Legacy => Some(LegacyOrder::default()),
        SortOptions::LegacyWith {
            order_first,
            order_last,
        } => Some(LegacyOrder::new(order_first, order_last)),
    };
    Pipeline::new(vec![
        stage("strip build records", StripRecords, root),
        stage("hash suffixes", AddHashSuffixes, root),
        stage("name references", name_references, root),
        stage("vars", Vars { declared, config }, root),
        stage("check names", CheckNames, root),
        stage("check unique ids", CheckUnique, root),
        stage(
            "build records and order",
            RecordsAndOrder { records, order },
            root,
        ),
    ])
}

/// The finishing stage `label` of the build of `root`.
fn stage(label: &str, action: impl Apply + 'static, root: &Path) -> Operation {
    let origin = Origin::File(root.to_path_buf());
    Operation::new(label, Role::Transformer, Stage(action), origin)
}

/// A finishing stage, timed as one (`finish: ` and its label).
struct Stage<A>(A);

impl<A: Apply> Apply for Stage<A> {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let _timer = Timings::start(build.timings(), &call.loader.root, || {
            format!("finish: {}", call.label)
        });
        self.0.apply(build, call, resources)
    }
}

/// Build records a transformer wrote as annotations are removed (a
/// `needsHashSuffix` among them still asks for the hash).
struct StripRecords;

impl Apply for StripRecords {
    fn apply(&self, _: &mut dyn Build, _: &Call, resources: &mut ResMap) -> BuildResult<()> {
        krusty_ops::parallel::map_each(resources.resources_mut_keeping_identity(), |r| {
            if krusty_resource::build_records::strip(&mut r.node) {
                r.meta.needs_hash = true;
            }
        });
        Ok(())
    }
}

/// Generated names get their hash suffixes.
impl Apply for AddHashSuffixes {
    fn apply(&self, _: &mut dyn Build, _: &Call, resources: &mut ResMap) -> BuildResult<()> {
        AddHashSuffixes::apply(self, resources).map_err(BuildError::from)
    }
}

/// References follow every rename.
impl Apply for FixNameReferences {
    fn apply(&self, _: &mut dyn Build, _: &Call, resources: &mut ResMap) -> BuildResult<()> {
        FixNameReferences::apply(self, resources).map_err(BuildError::from)
    }
}

/// `$(VAR)` references are replaced by the values of the vars declared,
/// in the fields the configuration names.
struct Vars {
    declared: VarSet,
    config: Config,
}

impl Apply for Vars {
    fn apply(&self, _: &mut dyn Build, _: &Call, resources: &mut ResMap) -> BuildResult<()> {
        vars::resolve(resources, &self.declared, &self.config.var_reference)
            .map_err(BuildError::from)
    }
}

/// The build records `buildMetadata` asks for are written (paths from the
/// build's folder), and the resources ordered as `sortOptions` says
/// (`None`: in the order the build made them).
struct RecordsAndOrder {
    records: Records,
    order: Option<LegacyOrder>,
}

impl Apply for RecordsAndOrder {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let resources = resources.resources_mut();
        self.records
            .apply(resources, &call.loader.root, build.version());
        if let Some(order) = &self.order {
            sort_legacy(resources, order);
        }
        Ok(())
    }
}

/// A resource left without a name fails the build.
struct CheckNames;

impl Apply for CheckNames {
    fn apply(&self, _: &mut dyn Build, _: &Call, resources: &mut ResMap) -> BuildResult<()> {
        check_names(resources)
    }
}

/// Two resources left with one id fail the build (replacements may make
/// them; hash suffixes may have set them apart).
struct CheckUnique;

impl Apply for CheckUnique {
    fn apply(&self, _: &mut dyn Build, _: &Call, resources: &mut ResMap) -> BuildResult<()> {
        resources.check_unique().map_err(BuildError::from)
    }
}

/// Fails on the first resource left without a name (a patch or a
/// replacement emptied it, or made `metadata` a scalar or null), as
/// Kustomize does once the build is done; kinds ending in `List` need none.
fn check_names(resources: &ResMap) -> BuildResult<()> {
    for r in resources.iter() {
        if !r.kind().ends_with("List") {
            if r.name().is_empty() {
                return Err(BuildError::new(format!(
                    "missing metadata.name in object {}",
                    go_resource_meta(r)
                )));
            }
            continue;
        }
        // A list needs no name, but its records need a `metadata` map.
        let kind = match r.node.get("metadata").map(|m| &m.value) {
            Some(krusty_yaml::Value::Scalar(_))
                if !r.node.get("metadata").is_some_and(Node::is_null) =>
            {
                "ScalarNode"
            }
            Some(krusty_yaml::Value::Seq(_)) => "SequenceNode",
            _ => continue,
        };
        return Err(BuildError::new(format!(
            "failed to clean up origin tracking annotations: wrong node kind: expected MappingNode but got {kind}"
        )));
    }
    Ok(())
}

/// A resource's metadata as Kustomize prints it in messages (Go's `%v` of
/// its `ResourceMeta`): `{{v1 ConfigMap} {{name namespace} map[labels] map[annotations]}}`.
fn go_resource_meta(r: &Resource) -> String {
    let go_map = |field: &str| {
        let mut pairs: Vec<String> = r
            .node
            .get_path(&["metadata", field])
            .and_then(Node::as_map)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{}:{}", scalar_text(k), scalar_text(v)))
                    .collect()
            })
            .unwrap_or_default();
        pairs.sort_unstable();
        format!("map[{}]", pairs.join(" "))
    };
    format!(
        "{{{{{} {}}} {{{{{} {}}} {} {}}}}}",
        r.api_version(),
        r.kind(),
        r.name(),
        r.namespace(),
        go_map("labels"),
        go_map("annotations")
    )
}

/// A scalar's text; empty for a collection.
fn scalar_text(n: &Node) -> &str {
    n.as_scalar().map_or("", |s| s.text.as_str())
}
