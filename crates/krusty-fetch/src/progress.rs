//! A progress line on stderr while something is fetched or pulled, when
//! stderr is a terminal (the caller decides: [`Progress::start`]'s
//! `enabled`): what is being fetched, how much of it has arrived (of how
//! much, when the server says), and for how long; with several fetches at
//! once, the newest and how many others. Nothing is written otherwise.
//! Credentials in the URLs it names are redacted.
//!
//! The terminal is one per process, so the line is too: every fetch of
//! the process shares one board. A download reports its bytes to the
//! progress of the thread that asked for it ([`current`]), so callers
//! need not pass it down.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often the line is redrawn at most, and while nothing arrives.
const TICK: Duration = Duration::from_millis(250);

/// The longest line drawn, in characters (a longer one would wrap, and a
/// wrapped line cannot be erased).
const MAX_WIDTH: usize = 78;

/// One fetch being shown, until dropped.
pub struct Progress {
    meter: Option<Arc<Meter>>,
    previous: Option<Arc<Meter>>,
}

/// What one fetch has received.
#[derive(Debug)]
pub struct Meter {
    what: String,
    started: Instant,
    received: AtomicU64,
    /// The size announced; `u64::MAX` while unknown.
    total: AtomicU64,
}

/// The fetches being shown, and when the line was last drawn.
struct Board {
    active: Vec<Arc<Meter>>,
    drawn: Option<Instant>,
}

static BOARD: Mutex<Board> = Mutex::new(Board {
    active: Vec::new(),
    drawn: None,
});

/// Whether the thread that redraws the line while nothing arrives runs.
static TICKING: AtomicBool = AtomicBool::new(false);

thread_local! {
    static CURRENT: RefCell<Option<Arc<Meter>>> = const { RefCell::new(None) };
}

impl Progress {
    /// Shows `what` (`https://…`, `oci://…`, `image nginx:1.27`) while the
    /// returned value lives, if `enabled`; downloads this thread makes
    /// meanwhile report their bytes to it.
    pub fn start(enabled: bool, what: &str) -> Progress {
        if !enabled {
            return Progress {
                meter: None,
                previous: None,
            };
        }
        let meter = Arc::new(Meter {
            what: crate::redact(what).into_owned(),
            started: Instant::now(),
            received: AtomicU64::new(0),
            total: AtomicU64::new(u64::MAX),
        });
        let previous = CURRENT.with(|c| c.replace(Some(Arc::clone(&meter))));
        {
            let mut board = lock();
            board.active.push(Arc::clone(&meter));
            board.draw();
        }
        start_ticking();
        Progress {
            meter: Some(meter),
            previous,
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        let Some(meter) = self.meter.take() else {
            return;
        };
        CURRENT.with(|c| *c.borrow_mut() = self.previous.take());
        let mut board = lock();
        board.active.retain(|m| !Arc::ptr_eq(m, &meter));
        if board.active.is_empty() {
            board.clear();
        } else {
            board.draw();
        }
    }
}

/// The meter of the fetch this thread is showing, if any: a download
/// started on this thread reports to it (also from a thread of its own).
pub fn current() -> Option<Arc<Meter>> {
    CURRENT.with(|c| c.borrow().clone())
}

impl Meter {
    /// The server announced `bytes` in all.
    pub fn expect(&self, bytes: u64) {
        self.total.store(bytes, Ordering::Relaxed);
    }

    /// `bytes` more arrived.
    pub fn advance(&self, bytes: u64) {
        let received = self.received.fetch_add(bytes, Ordering::Relaxed) + bytes;
        // The last piece is always drawn: the line ends at 100%.
        let complete = received >= self.total.load(Ordering::Relaxed);
        let mut board = lock();
        if complete || board.drawn.is_none_or(|at| at.elapsed() >= TICK) {
            board.draw();
        }
    }

    /// What the line says of this fetch.
    fn status(&self) -> String {
        let received = self.received.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed);
        let seconds = self.started.elapsed().as_secs();
        let mut status = String::new();
        if total != u64::MAX && total > 0 {
            let percent = (received.min(total) * 100) / total;
            status.push_str(&format!(
                "{} of {} ({percent}%)",
                size(received),
                size(total)
            ));
        } else if received > 0 {
            status.push_str(&size(received));
        }
        if seconds > 0 {
            if !status.is_empty() {
                status.push_str(", ");
            }
            status.push_str(&format!("{seconds}s"));
        }
        status
    }
}

impl Board {
    fn draw(&mut self) {
        let Some(newest) = self.active.last() else {
            return;
        };
        let text = line(newest, self.active.len() - 1);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        self.drawn = Some(Instant::now());
    }

    fn clear(&mut self) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
        self.drawn = None;
    }
}

/// The line shown for `meter` with `others` more fetches at once, cut to
/// [`MAX_WIDTH`] characters (the start of what is fetched gives way).
fn line(meter: &Meter, others: usize) -> String {
    let status = meter.status();
    let mut tail = String::new();
    if !status.is_empty() {
        tail.push(' ');
        tail.push_str(&status);
    }
    if others > 0 {
        tail.push_str(&format!(" (+{others} more)"));
    }
    let room = MAX_WIDTH
        .saturating_sub("Fetching \u{2026}".chars().count() + tail.chars().count())
        .max(8);
    let count = meter.what.chars().count();
    let what = if count > room {
        let kept: String = meter.what.chars().skip(count - (room - 1)).collect();
        format!("\u{2026}{kept}")
    } else {
        meter.what.clone()
    };
    // Control characters in a URL cannot move the cursor.
    let what: String = what
        .chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    format!("Fetching {what}\u{2026}{tail}")
}

fn size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KIB {
        format!("{bytes} B")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else if b < KIB * KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    }
}

fn lock() -> std::sync::MutexGuard<'static, Board> {
    BOARD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Redraws the line every [`TICK`] while fetches are shown (a git clone
/// reports no bytes, but its time goes on); the thread ends with them.
fn start_ticking() {
    if TICKING.swap(true, Ordering::AcqRel) {
        return;
    }
    let started = std::thread::Builder::new()
        .name("krusty-progress".into())
        .spawn(|| loop {
            std::thread::sleep(TICK);
            let mut board = lock();
            if board.active.is_empty() {
                TICKING.store(false, Ordering::Release);
                return;
            }
            board.draw();
        });
    if started.is_err() {
        TICKING.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(what: &str, received: u64, total: u64) -> Meter {
        Meter {
            what: crate::redact(what).into_owned(),
            started: Instant::now(),
            received: AtomicU64::new(received),
            total: AtomicU64::new(total),
        }
    }

    #[test]
    fn the_line_shows_no_credentials() {
        let shown = line(
            &meter("https://user:s3cret@h.example/org/repo (main)", 0, u64::MAX),
            0,
        );
        assert_eq!(
            shown,
            "Fetching https://***@h.example/org/repo (main)\u{2026}"
        );
    }

    #[test]
    fn the_line_says_how_far_a_download_is() {
        let shown = line(&meter("https://h.example/c.yaml", 3 << 20, 12 << 20), 2);
        assert_eq!(
            shown,
            "Fetching https://h.example/c.yaml\u{2026} 3.0 MiB of 12.0 MiB (25%) (+2 more)"
        );
        let unknown = line(&meter("oci://r.example/x:v1", 1536, u64::MAX), 0);
        assert_eq!(unknown, "Fetching oci://r.example/x:v1\u{2026} 1.5 KiB");
    }

    #[test]
    fn a_long_name_is_cut_from_the_start_and_controls_are_replaced() {
        let long = format!("https://h.example/{}\x1b[2Jend", "a".repeat(200));
        let shown = line(&meter(&long, 10, 100), 0);
        assert!(shown.chars().count() <= MAX_WIDTH, "{shown}");
        assert!(
            shown.contains("\u{2026}aaa") && shown.contains("?[2Jend"),
            "{shown}"
        );
        assert!(!shown.contains('\x1b'), "{shown}");
    }
}
