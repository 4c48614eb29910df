//! A pipeline: operations run in order.

use krusty_resource::ResMap;

use super::{Apply, Build, Call, Operation, Role};
use crate::error::{BuildError, BuildResult};
use crate::loader::Loader;

/// Operations run in order, each one's output the next one's input. As
/// an operation itself, a pipeline runs in its role: as a generator its
/// output is added, as a transformer it replaces the resources, as a
/// validator it is dropped.
#[derive(Default)]
pub struct Pipeline {
    operations: Vec<Operation>,
}

impl Pipeline {
    /// A pipeline of `operations`.
    pub fn new(operations: Vec<Operation>) -> Pipeline {
        Pipeline { operations }
    }

    /// The operations, in order.
    pub fn operations(&self) -> &[Operation] {
        &self.operations
    }

    /// Runs the operations in order over `resources`: files are read
    /// through `loader` and errors name `site` (see [`Operation::run`]).
    pub fn run(
        &self,
        build: &mut dyn Build,
        loader: &Loader,
        site: &str,
        resources: &mut ResMap,
    ) -> BuildResult<()> {
        for op in &self.operations {
            op.run(build, loader, site, resources)?;
        }
        Ok(())
    }
}

impl Apply for Pipeline {
    fn apply(&self, build: &mut dyn Build, call: &Call, resources: &mut ResMap) -> BuildResult<()> {
        let (loader, site) = (call.loader, call.site);
        match call.role {
            Role::Generator => {
                let mut out = ResMap::default();
                self.run(build, loader, site, &mut out)?;
                resources
                    .extend_hashed(out.into_hashed())
                    .map_err(BuildError::from)
            }
            Role::Transformer => self.run(build, loader, site, resources),
            Role::Validator => self.run(build, loader, site, &mut resources.clone()),
        }
    }
}
