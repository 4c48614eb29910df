//! The bottom of krusty's stack for child processes: every program krusty
//! starts (KRM functions and their servers, container CLIs, git, helm)
//! runs through here.
//!
//! - [`run`]: a child with its stdin fed and its output drained at once,
//!   in a process group of its own, under a time limit, an output limit
//!   and (optionally) a memory limit; [`run_combined`] for programs whose
//!   stdout and stderr are read as one text (git).
//! - [`interrupt`]: the clean-ups SIGINT, SIGTERM and SIGHUP run before
//!   the process ends.
//! - [`watchdog`]: kills the process groups and removes the containers
//!   krusty leaves behind when it is killed outright.

pub mod interrupt;
mod run;
pub mod watchdog;

pub use run::{
    describe_exit, limit_memory, run, run_combined, stderr_excerpt, Combined, Failure, Finished,
};
