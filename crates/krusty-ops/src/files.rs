//! How operations read files: through the kustomization's loader, which
//! resolves paths against its root and enforces the load restrictor.

use crate::error::OpResult;

/// A source of files for generators and configuration loading; shared by
/// the threads of a parallel step (a chain reads its patch files at once).
pub trait FileSource: Sync {
    /// Reads the file at `path` (relative to the kustomization root).
    fn read_bytes(&self, path: &str) -> OpResult<Vec<u8>>;
}

/// A source that has no files: every read fails.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoFiles;

impl FileSource for NoFiles {
    fn read_bytes(&self, path: &str) -> OpResult<Vec<u8>> {
        Err(crate::error::OpError::new(format!(
            "cannot read '{path}': no file system available"
        )))
    }
}
