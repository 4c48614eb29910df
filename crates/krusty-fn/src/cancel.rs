//! The deadline and cancellation of the request a function is answering.
//!
//! In server mode (specification v2) a request may carry a deadline
//! (gRPC's `grpc-timeout`; over HTTP the header `Krm-Timeout`, in the
//! same form: `30S`, `1500m`) and its client may go away before the
//! answer. The server cannot stop the function's thread, so it tells the
//! function: [`is_cancelled`] turns `true`, and [`check`] returns an error,
//! once the deadline has passed or the client is gone. A long function
//! calls [`check`] between steps and returns early; the server answers a
//! request past its deadline with gRPC `DEADLINE_EXCEEDED` or HTTP 504,
//! whatever the function does.
//!
//! As a process (specification v1) there is no deadline and nothing is
//! ever cancelled: the orchestrator ends the process itself.
//!
//! ```
//! use krusty_fn::{cancel, FnError, KubeObject, ResourceList};
//!
//! fn slow(list: &mut ResourceList) -> Result<(), FnError> {
//!     for item in &mut list.items {
//!         cancel::check()?; // stop early once nobody waits for the answer
//!         item.set_label("checked", "true");
//!     }
//!     Ok(())
//! }
//! # let mut list = ResourceList::default();
//! # slow(&mut list).unwrap();
//! ```

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::run::FnError;

/// One request's deadline and cancellation, shared by the server (which
/// cancels it) and the thread running the function (which checks it).
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    deadline: Option<Instant>,
    cancelled: Arc<AtomicBool>,
}

thread_local! {
    static CURRENT: RefCell<Option<Cancellation>> = const { RefCell::new(None) };
}

impl Cancellation {
    /// A request that must be answered by `deadline` (none: no limit).
    pub fn new(deadline: Option<Instant>) -> Cancellation {
        Cancellation {
            deadline,
            cancelled: Arc::default(),
        }
    }

    /// The request is cancelled: its client went away, or the server
    /// gave up on it.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Release);
    }

    /// Whether the request was cancelled or its deadline has passed.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Acquire)
            || self.deadline.is_some_and(|at| Instant::now() >= at)
    }

    /// When the answer is due, if the client said.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Runs `f` as the function answering this request: [`deadline`],
    /// [`is_cancelled`] and [`check`] on this thread are this request's
    /// until `f` returns.
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let previous = CURRENT.with(|c| c.replace(Some(self.clone())));
        let restore = Restore(previous);
        let out = f();
        drop(restore);
        out
    }
}

/// Puts back the request a thread answered before (also when `f` panics).
struct Restore(Option<Cancellation>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// The deadline of the request this thread is answering; `None` as a
/// process, or when the client set none.
pub fn deadline() -> Option<Instant> {
    CURRENT.with(|c| c.borrow().as_ref().and_then(Cancellation::deadline))
}

/// The time left before [`deadline`], zero once it has passed.
pub fn time_left() -> Option<Duration> {
    deadline().map(|at| at.saturating_duration_since(Instant::now()))
}

/// Whether nobody waits for this thread's answer any more: its client
/// went away or its deadline passed. Always `false` as a process.
pub fn is_cancelled() -> bool {
    CURRENT.with(|c| c.borrow().as_ref().is_some_and(Cancellation::is_cancelled))
}

/// An error once the request is cancelled (see [`is_cancelled`]), to
/// return early with `?`.
pub fn check() -> Result<(), FnError> {
    if is_cancelled() {
        let why = match deadline() {
            Some(at) if Instant::now() >= at => "the request's deadline passed",
            _ => "the request was cancelled",
        };
        return Err(FnError::Message(why.to_string()));
    }
    Ok(())
}

/// Reads a timeout written as gRPC writes `grpc-timeout`: at most eight
/// digits and a unit, `H`ours, `M`inutes, `S`econds, `m`illiseconds,
/// `u`microseconds or `n`anoseconds (`30S`, `1500m`).
pub fn parse_timeout(text: &str) -> Option<Duration> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let digits = &text[..text.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        'H' => Duration::from_secs(n * 3600),
        'M' => Duration::from_secs(n * 60),
        'S' => Duration::from_secs(n),
        'm' => Duration::from_millis(n),
        'u' => Duration::from_micros(n),
        'n' => Duration::from_nanos(n),
        _ => return None,
    })
}

/// A timeout in the form [`parse_timeout`] reads, in milliseconds
/// (rounded up, so that a short one never reads as none).
pub fn format_timeout(timeout: Duration) -> String {
    let millis = timeout.as_nanos().div_ceil(1_000_000).min(99_999_999);
    format!("{millis}m")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_never_cancelled() {
        assert!(!is_cancelled());
        assert!(deadline().is_none());
        assert!(check().is_ok());
    }

    #[test]
    fn the_request_is_the_threads_until_the_function_returns() {
        let request = Cancellation::new(None);
        request.run(|| {
            assert!(!is_cancelled());
            request.cancel();
            assert!(is_cancelled());
            let err = check().unwrap_err();
            assert_eq!(err.to_string(), "the request was cancelled");
        });
        assert!(!is_cancelled(), "the request outlived its run");
    }

    #[test]
    fn a_passed_deadline_cancels() {
        let request = Cancellation::new(Some(Instant::now()));
        request.run(|| {
            assert!(is_cancelled());
            assert_eq!(time_left(), Some(Duration::ZERO));
            assert_eq!(
                check().unwrap_err().to_string(),
                "the request's deadline passed"
            );
        });
        let later = Cancellation::new(Some(Instant::now() + Duration::from_secs(60)));
        later.run(|| assert!(!is_cancelled() && time_left().unwrap() > Duration::from_secs(50)));
    }

    #[test]
    fn timeouts_read_and_write_as_grpc_writes_them() {
        assert_eq!(parse_timeout("30S"), Some(Duration::from_secs(30)));
        assert_eq!(parse_timeout("1500m"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_timeout("2H"), Some(Duration::from_secs(7200)));
        assert_eq!(parse_timeout("5n"), Some(Duration::from_nanos(5)));
        for bad in ["", "S", "123456789S", "1.5S", "10x", "-1S", "10 S"] {
            assert_eq!(parse_timeout(bad), None, "{bad:?}");
        }
        assert_eq!(format_timeout(Duration::from_micros(1)), "1m");
        assert_eq!(format_timeout(Duration::from_secs(300)), "300000m");
        assert_eq!(
            parse_timeout(&format_timeout(Duration::from_millis(2500))),
            Some(Duration::from_millis(2500))
        );
    }
}
