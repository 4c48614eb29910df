//! One operation: what it runs, with its role, name and origin.

use krusty_resource::{Origin, RemoteRoot, ResMap};
use std::sync::Arc;

use super::{Apply, Build, Call, Role};
use crate::error::BuildResult;
use crate::loader::Loader;

/// One operation: what it runs, its role, its name in messages, and the
/// origin recorded on what it makes or changes.
pub struct Operation {
    /// Names the operation in errors.
    label: String,
    /// What it does to the resources.
    role: Role,
    /// What it runs.
    action: Box<dyn Apply>,
    /// Where it was configured.
    origin: Origin,
    /// Where it reads files and how errors name its file, when not the
    /// pipeline's (the transformers of a composition come from several
    /// files).
    place: Option<(Loader, String)>,
}

impl Operation {
    /// `action` run in `role`, named `label` in errors, recording `origin`.
    pub fn new(
        label: impl Into<String>,
        role: Role,
        action: impl Apply + 'static,
        origin: Origin,
    ) -> Operation {
        Operation {
            label: label.into(),
            role,
            action: Box::new(action),
            origin,
            place: None,
        }
    }

    /// Names the operation in messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// What it does to the resources.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Where it was configured.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// What it runs.
    pub fn action(&self) -> &dyn Apply {
        &*self.action
    }

    /// The same operation, reading files through `loader` and named in
    /// errors by `site` (`composition file ...`), whatever pipeline runs it.
    pub(crate) fn placed(mut self, loader: Loader, site: String) -> Operation {
        self.place = Some((loader, site));
        self
    }

    /// Whether it reads files and is named in errors as its own place says.
    pub(crate) fn is_placed(&self) -> bool {
        self.place.is_some()
    }

    /// The same operation, named `label` in errors.
    pub(crate) fn labelled(mut self, label: String) -> Operation {
        self.label = label;
        self
    }

    /// Places its origin in the remote base `remote`, unless it names a
    /// remote base already.
    pub(crate) fn within_remote(&mut self, remote: &Arc<RemoteRoot>) {
        if !matches!(self.origin, Origin::Remote { .. }) {
            let origin = std::mem::replace(&mut self.origin, Origin::File(Default::default()));
            self.origin = origin.within(Some(remote));
        }
    }

    /// Runs the operation over `resources`; files are read through
    /// `loader` and errors name `site`, the file configuring it (unless
    /// it is placed).
    pub fn run(
        &self,
        build: &mut dyn Build,
        loader: &Loader,
        site: &str,
        resources: &mut ResMap,
    ) -> BuildResult<()> {
        let (loader, site) = match &self.place {
            Some((loader, site)) => (loader, site.as_str()),
            None => (loader, site),
        };
        let call = Call {
            label: &self.label,
            role: self.role,
            origin: &self.origin,
            loader,
            site,
        };
        self.action.apply(build, &call, resources)
    }
}
