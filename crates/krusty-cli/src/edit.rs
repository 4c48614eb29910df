//! `krusty edit`: Kustomize's `edit` commands (in the current directory),
//! parsed here and carried out by `krusty-edit`.

use std::path::Path;

use clap::{Args, Subcommand};
use krusty_api::EditChecks;
use krusty_api::KustomizeVersion;
use krusty_edit::generator::GeneratedKind;
use krusty_edit::{
    AddFlags, BuildMetadataEdit, EditResult, Kind, Notes, PatchArg, PathList, ScalarField,
};

/// `edit`'s command groups.
#[derive(Subcommand)]
pub enum EditCommand {
    /// Sets the value of different fields in the kustomization file.
    #[command(subcommand)]
    Set(SetCommand),
    /// Adds an item to the kustomization file.
    #[command(subcommand)]
    Add(AddCommand),
    /// Removes items from the kustomization file.
    #[command(subcommand)]
    Remove(RemoveCommand),
    /// Rewrites deprecated fields to their current forms.
    Fix(FixArgs),
    /// [Alpha] List the builtin plugins.
    #[command(name = "alpha-list-builtin-plugin")]
    AlphaListBuiltinPlugin,
}

/// The builtin generators, then transformers, Kustomize lists (it lists
/// each group in an order that changes from run to run; krusty sorts them).
const BUILTIN_PLUGINS: [&str; 18] = [
    "ConfigMapGenerator",
    "HelmChartInflationGenerator",
    "IAMPolicyGenerator",
    "SecretGenerator",
    "AnnotationsTransformer",
    "HashTransformer",
    "ImageTagTransformer",
    "LabelTransformer",
    "NamespaceTransformer",
    "PatchJson6902Transformer",
    "PatchStrategicMergeTransformer",
    "PatchTransformer",
    "PrefixSuffixTransformer",
    "PrefixTransformer",
    "ReplacementTransformer",
    "ReplicaCountTransformer",
    "SuffixTransformer",
    "ValueAddTransformer",
];

/// `edit fix` flags.
#[derive(Args)]
pub struct FixArgs {
    /// Convert vars to replacements (rewriting the references in the
    /// resource and patch files the kustomization reaches).
    #[arg(long = "vars", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    vars: bool,
}

/// `create` (alias `init`) flags.
#[derive(Args)]
pub struct CreateArgs {
    /// Name of a file containing a file to add to the kustomization file
    /// (comma-separated paths or patterns).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    resources: String,
    /// Set the value of the namespace field in the kustomization file.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namespace: String,
    /// Add one or more common annotations (`k:v,k:v`).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    annotations: String,
    /// Add one or more common labels (`k:v,k:v`).
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    labels: String,
    /// Sets the value of the namePrefix field in the kustomization file.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    nameprefix: String,
    /// Sets the value of the nameSuffix field in the kustomization file.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namesuffix: String,
    /// Search for kubernetes resources in the current directory to be
    /// added to the kustomization file.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    autodetect: bool,
    /// Enable recursive directory searching for resource auto-detection.
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    recursive: bool,
}

/// Runs `create` in the current directory.
pub fn create(args: &CreateArgs) -> Result<(), String> {
    let args = krusty_edit::CreateArgs {
        resources: args.resources.clone(),
        namespace: args.namespace.clone(),
        name_prefix: args.nameprefix.clone(),
        name_suffix: args.namesuffix.clone(),
        labels: args.labels.clone(),
        annotations: args.annotations.clone(),
        autodetect: args.autodetect,
        recursive: args.recursive,
    };
    krusty_edit::create_file(Path::new("."), &args, &EditChecks::default())
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Values after the command (`--` allows values starting with `-`).
#[derive(Args)]
pub struct Values {
    #[arg(value_name = "VALUE")]
    values: Vec<String>,
}

/// `edit set configmap|secret` flags and name.
#[derive(Args)]
pub struct SetGeneratedArgs {
    #[arg(value_name = "NAME")]
    values: Vec<String>,
    /// An existing key and its new value (KEY=VALUE); repeatable.
    #[arg(long = "from-literal", allow_hyphen_values = true)]
    from_literal: Vec<String>,
    /// The object's current namespace.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namespace: String,
    /// Its new namespace.
    #[arg(long = "new-namespace", default_value = "", allow_hyphen_values = true)]
    new_namespace: String,
}

impl SetGeneratedArgs {
    fn flags(&self) -> krusty_edit::generator::GeneratorFlags {
        krusty_edit::generator::GeneratorFlags {
            args: self.values.clone(),
            literals: self.from_literal.clone(),
            namespace: self.namespace.clone(),
            new_namespace: self.new_namespace.clone(),
            ..Default::default()
        }
    }
}

/// `edit remove configmap|secret` flags and names.
#[derive(Args)]
pub struct RemoveGeneratedArgs {
    #[arg(value_name = "NAME[,NAME...]")]
    values: Vec<String>,
    /// The namespace of the objects to remove.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namespace: String,
}

/// `edit set ...`.
#[derive(Subcommand)]
pub enum SetCommand {
    /// Sets the value of the namePrefix field in the kustomization file.
    Nameprefix(Values),
    /// Sets the value of the nameSuffix field in the kustomization file.
    Namesuffix(Values),
    /// Sets the value of the namespace field in the kustomization file.
    Namespace(Values),
    /// Sets images and their new names, new tags or digests in the
    /// kustomization file (`name=newname:tag@digest`, `name:tag`,
    /// `name@digest`, `name=newname`; `*` keeps the file's value).
    Image(Values),
    /// Sets replicas count for resources in the kustomization file
    /// (`NAME=COUNT`).
    Replicas(Values),
    /// Sets one or more commonLabels in kustomization.yaml (`KEY:VALUE`).
    Label(Values),
    /// Sets one or more commonAnnotations in kustomization.yaml
    /// (`KEY:VALUE`).
    Annotation(Values),
    /// Sets the buildMetadata options (comma-separated), replacing those
    /// there.
    Buildmetadata(Values),
    /// Edits the value of existing keys (or the namespace) of a ConfigMap
    /// in the kustomization file.
    Configmap(SetGeneratedArgs),
    /// Edits the value of existing keys (or the namespace) of a Secret in
    /// the kustomization file.
    Secret(SetGeneratedArgs),
}

/// `edit add label` flags and values.
#[derive(Args)]
pub struct AddLabelArgs {
    #[arg(value_name = "KEY:VALUE")]
    values: Vec<String>,
    /// Overwrite commonLabel if it already exists.
    #[arg(short = 'f', long = "force", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    force: bool,
    /// Add the labels as a `labels` entry that leaves selectors alone.
    #[arg(long = "without-selector", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    without_selector: bool,
    /// Include labels in templates (requires --without-selector).
    #[arg(long = "include-templates", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    include_templates: bool,
}

/// `edit add annotation` flags and values.
#[derive(Args)]
pub struct AddAnnotationArgs {
    #[arg(value_name = "KEY:VALUE")]
    values: Vec<String>,
    /// Overwrite commonAnnotation if it already exists.
    #[arg(short = 'f', long = "force", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    force: bool,
}

/// `edit add resource` flags and values.
#[derive(Args)]
pub struct AddResourceArgs {
    #[arg(value_name = "PATH")]
    values: Vec<String>,
    /// Skip validation for resources.
    #[arg(long = "no-verify", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    no_verify: bool,
}

/// `edit add|remove patch` flags.
#[derive(Args)]
pub struct PatchArgs {
    /// Path to the patch file. Cannot be used with --patch at the same time.
    #[arg(long, allow_hyphen_values = true)]
    path: Option<String>,
    /// Literal string of patch content. Cannot be used with --path at the
    /// same time.
    #[arg(long, allow_hyphen_values = true)]
    patch: Option<String>,
    /// API group in patch target.
    #[arg(long, allow_hyphen_values = true)]
    group: Option<String>,
    /// API version in patch target.
    #[arg(long, allow_hyphen_values = true)]
    version: Option<String>,
    /// Resource kind in patch target.
    #[arg(long, allow_hyphen_values = true)]
    kind: Option<String>,
    /// Resource name in patch target.
    #[arg(long, allow_hyphen_values = true)]
    name: Option<String>,
    /// Resource namespace in patch target.
    #[arg(long, allow_hyphen_values = true)]
    namespace: Option<String>,
    /// annotationSelector in patch target.
    #[arg(long = "annotation-selector", allow_hyphen_values = true)]
    annotation_selector: Option<String>,
    /// labelSelector in patch target.
    #[arg(long = "label-selector", allow_hyphen_values = true)]
    label_selector: Option<String>,
}

impl PatchArgs {
    fn to_arg(&self) -> PatchArg {
        let mut arg = PatchArg {
            path: self.path.clone().unwrap_or_default(),
            patch: self.patch.clone().unwrap_or_default(),
            ..PatchArg::default()
        };
        for (key, value) in [
            ("group", &self.group),
            ("version", &self.version),
            ("kind", &self.kind),
            ("name", &self.name),
            ("namespace", &self.namespace),
            ("annotationSelector", &self.annotation_selector),
            ("labelSelector", &self.label_selector),
        ] {
            arg.set_target(key, value.clone());
        }
        arg
    }
}

/// `edit add configmap|secret` flags and name.
#[derive(Args)]
pub struct AddGeneratedArgs {
    #[arg(value_name = "NAME")]
    values: Vec<String>,
    /// Key file: its path (the key is its base name) or KEY=PATH; a
    /// pattern; comma-separated or repeated.
    #[arg(long = "from-file", value_delimiter = ',', allow_hyphen_values = true)]
    from_file: Vec<String>,
    /// A key and literal value (KEY=VALUE); repeatable.
    #[arg(long = "from-literal", allow_hyphen_values = true)]
    from_literal: Vec<String>,
    /// A file of KEY=VALUE lines (a Docker .env file).
    #[arg(long = "from-env-file", default_value = "", allow_hyphen_values = true)]
    from_env_file: String,
    /// The namespace of the object.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    namespace: String,
    /// Disable the name suffix (hash) for the object.
    #[arg(long = "disableNameSuffixHash", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    disable_hash: bool,
}

/// `edit add configmap` flags.
#[derive(Args)]
pub struct AddConfigMapArgs {
    #[command(flatten)]
    common: AddGeneratedArgs,
    /// create (the default), merge or replace: how the configmap meets one
    /// of the same name from a base.
    #[arg(long, default_value = "")]
    behavior: String,
}

/// `edit add secret` flags.
#[derive(Args)]
pub struct AddSecretArgs {
    #[command(flatten)]
    common: AddGeneratedArgs,
    /// The secret type: Opaque (the default) or kubernetes.io/tls.
    #[arg(long = "type", default_value = "Opaque")]
    secret_type: String,
}

impl AddGeneratedArgs {
    fn flags(&self, behavior: &str, secret_type: &str) -> krusty_edit::generator::GeneratorFlags {
        krusty_edit::generator::GeneratorFlags {
            args: self.values.clone(),
            files: self.from_file.clone(),
            literals: self.from_literal.clone(),
            env_file: self.from_env_file.clone(),
            behavior: behavior.to_string(),
            namespace: self.namespace.clone(),
            disable_hash: self.disable_hash,
            secret_type: secret_type.to_string(),
            new_namespace: String::new(),
        }
    }
}

/// `edit add ...`.
#[derive(Subcommand)]
pub enum AddCommand {
    /// Add the name of a file containing a resource to the kustomization
    /// file.
    Resource(AddResourceArgs),
    /// Add the name of a file containing a component to the kustomization
    /// file.
    Component(Values),
    /// Adds one or more bases (comma-separated) to the kustomization file
    /// (as resources).
    Base(Values),
    /// Add an item to patches field.
    Patch(PatchArgs),
    /// Adds a configmap to the kustomization file.
    Configmap(AddConfigMapArgs),
    /// Adds a secret to the kustomization file.
    Secret(AddSecretArgs),
    /// Adds one or more commonLabels to kustomization.yaml.
    Label(AddLabelArgs),
    /// Adds one or more commonAnnotations to kustomization.yaml.
    Annotation(AddAnnotationArgs),
    /// Add the name of a file containing a generator configuration to the
    /// kustomization file.
    Generator(Values),
    /// Add the name of a file containing a transformer configuration to
    /// the kustomization file.
    Transformer(Values),
    /// Adds one or more buildMetadata options (comma-separated).
    Buildmetadata(Values),
}

/// `edit remove label|annotation` flags and values.
#[derive(Args)]
pub struct RemoveMetadataArgs {
    #[arg(value_name = "KEY[,KEY...]")]
    values: Vec<String>,
    /// Ignore error if the given label doesn't exist.
    #[arg(short = 'i', long = "ignore-non-existence", num_args = 0..=1, require_equals = true, default_missing_value = "true", action = clap::ArgAction::Set, default_value_t = false, value_name = "BOOL")]
    ignore: bool,
}

/// `edit remove ...`.
#[derive(Subcommand)]
pub enum RemoveCommand {
    /// Removes one or more resource file paths (patterns) from
    /// kustomization.yaml.
    Resource(Values),
    /// Removes one or more component paths (patterns) from
    /// kustomization.yaml.
    Component(Values),
    /// Removes a patch from kustomization.yaml: the flags must match the
    /// entry exactly.
    Patch(PatchArgs),
    /// Removes one or more commonLabels from kustomization.yaml.
    Label(RemoveMetadataArgs),
    /// Removes one or more commonAnnotations from kustomization.yaml.
    Annotation(RemoveMetadataArgs),
    /// Removes one or more transformers (patterns) from kustomization.yaml.
    Transformer(Values),
    /// Removes one or more buildMetadata options (comma-separated).
    Buildmetadata(Values),
    /// Removes the named configmaps (comma-separated) from the
    /// kustomization file.
    Configmap(RemoveGeneratedArgs),
    /// Removes the named secrets (comma-separated) from the kustomization
    /// file.
    Secret(RemoveGeneratedArgs),
}

/// Runs an `edit` command on the kustomization file of the current
/// directory, printing Kustomize's notes on stderr.
pub fn run(command: &EditCommand, release: KustomizeVersion) -> Result<(), String> {
    let here = Path::new(".");
    let checks = EditChecks::default();
    let notes = match command {
        EditCommand::Set(c) => run_set(here, c, &checks),
        EditCommand::Add(c) => run_add(here, c, release, &checks),
        EditCommand::Remove(c) => run_remove(here, c),
        EditCommand::Fix(f) => {
            let report = krusty_edit::fix_file(here, f.vars, &checks).map_err(|e| e.to_string())?;
            for line in report {
                println!("{line}");
            }
            Ok(Vec::new())
        }
        EditCommand::AlphaListBuiltinPlugin => {
            print!("Builtin plugins:\n\n");
            for name in BUILTIN_PLUGINS {
                println!(" * {name}");
            }
            Ok(Vec::new())
        }
    }
    .map_err(|e| e.to_string())?;
    for note in notes {
        eprintln!("{note}");
    }
    Ok(())
}

fn run_set(dir: &Path, command: &SetCommand, checks: &EditChecks) -> EditResult<Notes> {
    match command {
        SetCommand::Nameprefix(v) => {
            krusty_edit::set_scalar(dir, ScalarField::NamePrefix, &v.values)
        }
        SetCommand::Namesuffix(v) => {
            krusty_edit::set_scalar(dir, ScalarField::NameSuffix, &v.values)
        }
        SetCommand::Namespace(v) => krusty_edit::set_scalar(dir, ScalarField::Namespace, &v.values),
        SetCommand::Image(v) => krusty_edit::set_images(dir, &v.values),
        SetCommand::Replicas(v) => krusty_edit::set_replicas(dir, &v.values),
        SetCommand::Label(v) => krusty_edit::set_metadata(dir, Kind::Label, &v.values),
        SetCommand::Annotation(v) => krusty_edit::set_metadata(dir, Kind::Annotation, &v.values),
        SetCommand::Buildmetadata(v) => {
            krusty_edit::edit_build_metadata(dir, BuildMetadataEdit::Set, &v.values)
        }
        SetCommand::Configmap(a) => {
            krusty_edit::set_generated(dir, GeneratedKind::ConfigMap, a.flags(), checks)
        }
        SetCommand::Secret(a) => {
            krusty_edit::set_generated(dir, GeneratedKind::Secret, a.flags(), checks)
        }
    }
}

fn run_add(
    dir: &Path,
    command: &AddCommand,
    release: KustomizeVersion,
    checks: &EditChecks,
) -> EditResult<Notes> {
    match command {
        AddCommand::Resource(a) => {
            krusty_edit::add_paths(dir, PathList::Resources, &a.values, !a.no_verify, checks)
        }
        AddCommand::Component(v) => {
            krusty_edit::add_paths(dir, PathList::Components, &v.values, true, checks)
        }
        AddCommand::Base(v) => krusty_edit::add_bases(dir, &v.values),
        AddCommand::Patch(p) => krusty_edit::add_patch(dir, &p.to_arg()),
        AddCommand::Configmap(a) => krusty_edit::add_generated(
            dir,
            GeneratedKind::ConfigMap,
            a.common.flags(&a.behavior, ""),
            checks,
        ),
        AddCommand::Secret(a) => krusty_edit::add_generated(
            dir,
            GeneratedKind::Secret,
            a.common.flags("", &a.secret_type),
            checks,
        ),
        AddCommand::Label(a) => {
            let flags = AddFlags {
                force: a.force,
                without_selector: a.without_selector,
                include_templates: a.include_templates,
                release,
            };
            krusty_edit::add_metadata(dir, Kind::Label, &a.values, flags)
        }
        AddCommand::Annotation(a) => {
            let flags = AddFlags {
                force: a.force,
                release,
                ..AddFlags::default()
            };
            krusty_edit::add_metadata(dir, Kind::Annotation, &a.values, flags)
        }
        AddCommand::Generator(v) => {
            krusty_edit::add_paths(dir, PathList::Generators, &v.values, true, checks)
        }
        AddCommand::Transformer(v) => {
            krusty_edit::add_paths(dir, PathList::Transformers, &v.values, true, checks)
        }
        AddCommand::Buildmetadata(v) => {
            krusty_edit::edit_build_metadata(dir, BuildMetadataEdit::Add, &v.values)
        }
    }
}

fn run_remove(dir: &Path, command: &RemoveCommand) -> EditResult<Notes> {
    match command {
        RemoveCommand::Resource(v) => {
            krusty_edit::remove_paths(dir, PathList::Resources, &v.values)
        }
        RemoveCommand::Component(v) => {
            krusty_edit::remove_paths(dir, PathList::Components, &v.values)
        }
        RemoveCommand::Patch(p) => krusty_edit::remove_patch(dir, &p.to_arg()),
        RemoveCommand::Label(a) => {
            krusty_edit::remove_metadata(dir, Kind::Label, &a.values, a.ignore)
        }
        RemoveCommand::Annotation(a) => {
            krusty_edit::remove_metadata(dir, Kind::Annotation, &a.values, a.ignore)
        }
        RemoveCommand::Transformer(v) => {
            krusty_edit::remove_paths(dir, PathList::Transformers, &v.values)
        }
        RemoveCommand::Buildmetadata(v) => {
            krusty_edit::edit_build_metadata(dir, BuildMetadataEdit::Remove, &v.values)
        }
        RemoveCommand::Configmap(a) => {
            krusty_edit::remove_generated(dir, GeneratedKind::ConfigMap, &a.values, &a.namespace)
        }
        RemoveCommand::Secret(a) => {
            krusty_edit::remove_generated(dir, GeneratedKind::Secret, &a.values, &a.namespace)
        }
    }
}
