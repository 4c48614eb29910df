//! Example KRM functions written with [`krusty_fn`], each also built as
//! an executable (`src/bin/`) that works as an exec function or, packaged
//! in an image, as a container function:
//!
//! - [`configmap_generator`]: a generator that makes a ConfigMap;
//! - [`set_labels`]: a transformer that sets labels at field specs;
//! - [`require_limits`]: a validator that wants CPU and memory limits on
//!   every container.

pub mod configmap_generator;
pub mod require_limits;
pub mod set_labels;
