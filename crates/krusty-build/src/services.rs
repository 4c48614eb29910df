//! What every build of an engine shares: its options, the fetcher and
//! the function host. The engine owns them; each build borrows them.

use std::sync::Arc;

use krusty_fetch::Fetcher;
use krusty_runtime::Host;

use crate::loader::DiskReads;
use crate::request::BuildOptions;

/// The services of an engine.
#[derive(Debug)]
pub(crate) struct Services {
    /// The options of every build.
    pub(crate) options: BuildOptions,
    /// Fetches remote bases, files, catalogs and programs.
    pub(crate) fetcher: Arc<Fetcher>,
    /// Runs the builds' KRM functions and owns their servers.
    pub(crate) host: Arc<Host>,
    /// How the builds' file reads fare in the page cache, which decides
    /// whether a build reads ahead.
    pub(crate) reads: Arc<DiskReads>,
}
