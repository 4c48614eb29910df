//! The checks `krusty edit` and `krusty create` make through the build
//! engine (see [`krusty_edit::Checks`]): a build of the target, a fetch
//! of a remote target, the generation of a ConfigMap or Secret, and the
//! reading of a file as resources.

use std::path::{Path, PathBuf};

use krusty_build::loader::{canonical, clean};
use krusty_build::{BuildError, BuildOptions, LoadRestrictor, Loader};
use krusty_edit::{CheckError, Checks};
use krusty_fetch::{FetchError, Fetcher, GitUrl};
use krusty_ops::builtins::generator::{Generate, GeneratorArgs};
use krusty_ops::OpError;
use krusty_schema::generator::GeneratedKind;
use krusty_yaml::Node;

/// The checks of an edit, made as a build with `options` would make them
/// (`EditChecks::default()`: a build with no flags).
#[derive(Debug, Default)]
pub struct EditChecks {
    /// How the target is built, and remote targets fetched.
    pub options: BuildOptions,
}

impl Checks for EditChecks {
    fn build(&self, dir: &Path) -> Result<String, CheckError> {
        let out = krusty_build::build(dir, &self.options)?;
        Ok(crate::Stream::render(&out.resources)?.into_string())
    }

    fn remote_target(&self, target: &str) -> Option<Result<(), CheckError>> {
        let url = GitUrl::parse(target).ok()?;
        Some(check_remote(&url, &self.options).map_err(CheckError::from))
    }

    fn generate(&self, dir: &Path, kind: GeneratedKind, entry: &Node) -> Result<(), CheckError> {
        let loader = Loader::new(dir, LoadRestrictor::RootOnly)?;
        let version = self.options.kustomize_version;
        let args = GeneratorArgs::from_node(kind, entry, kind.field(), true, version)
            .map_err(OpError::from)?;
        args.generate(&loader)?;
        Ok(())
    }

    fn reads_as_resources(&self, text: &str, path: &Path) -> bool {
        krusty_build::read::resources_from_text(text, path).is_ok()
    }
}

/// Why a remote target is no folder of its repository, in the words of
/// Kustomize's loader.
#[derive(Debug, thiserror::Error)]
enum RemoteError {
    /// The repository cannot be fetched.
    #[error(transparent)]
    Fetch(#[from] FetchError),
    /// A path in the checkout cannot be resolved.
    #[error(transparent)]
    Path(#[from] BuildError),
    /// The target is a file.
    #[error("'{}' refers to file '{}'; expecting directory", .0.display(), file_name(.0))]
    NotADirectory(PathBuf),
    /// The target leaves the repository.
    #[error("{:?} refers to directory outside of repo {:?}", .wanted.display().to_string(), .repo.display().to_string())]
    OutsideRepo {
        /// The target.
        wanted: PathBuf,
        /// The checkout.
        repo: PathBuf,
    },
}

/// Fetches the repository `url` names, as Kustomize clones it, and checks
/// that the folder it names is a directory inside it.
fn check_remote(url: &GitUrl, options: &BuildOptions) -> Result<(), RemoteError> {
    let fetcher = Fetcher::new(options.fetch.clone());
    let checkout = fetcher.checkout(url)?;
    let repo = canonical(&checkout.dir)?;
    let wanted = clean(&repo.join(&url.root_path));
    let root = canonical(&wanted)?;
    if !root.is_dir() {
        return Err(RemoteError::NotADirectory(wanted));
    }
    if !root.starts_with(&repo) {
        return Err(RemoteError::OutsideRepo { wanted, repo });
    }
    Ok(())
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
