//! A whole GitOps repository rendered as the tools that deploy it render
//! it, and what a change does to every target.
//!
//! - [`discover`]: the kustomization roots of a tree, and its targets
//!   (the roots nothing else reaches).
//! - [`target`]: a target (a folder, a Flux `Kustomization`, an Argo CD
//!   `Application`) rendered on one side of a change, with the files the
//!   rendering read.
//! - [`affected`]: the targets whose inputs a change touches.
//! - [`git`]: revisions read from git objects into a folder of krusty's
//!   own; the user's work tree is never touched.
//! - [`diff`]: object-by-object comparison of two renderings, printed as
//!   text, Markdown or JSON.

pub mod affected;
pub mod argocd;
pub mod diff;
pub mod discover;
pub mod error;
pub mod flux;
pub mod git;
pub mod object;
pub mod target;

pub use error::{Error, Result};
