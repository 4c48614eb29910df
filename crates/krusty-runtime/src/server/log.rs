//! A function server's log: what it writes on stdout and stderr, read
//! from one pipe by a thread of its own. The start is kept for messages;
//! past [`MAX_LOG`] bytes in all, the server is stopped.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::policy::describe_size;
use crate::process::stderr_excerpt;

/// The most a server may write on stdout and stderr together in a run.
pub(super) const MAX_LOG: u64 = 16 << 20;

/// How much of the start of the log is kept for messages.
const KEPT: usize = 64 << 10;

/// A server's log, as its reader thread sees it.
pub(super) struct Log {
    /// The start of the log.
    kept: Mutex<Vec<u8>>,
    /// The server wrote more than [`MAX_LOG`] bytes.
    over: AtomicBool,
}

impl Log {
    /// A pipe for a server's stdout and stderr: the log that its reader
    /// fills, the read end for [`Log::read_from`], and the write end.
    pub fn pipe() -> std::io::Result<(Arc<Log>, std::io::PipeReader, std::io::PipeWriter)> {
        let (reader, writer) = std::io::pipe()?;
        let log = Arc::new(Log {
            kept: Mutex::new(Vec::new()),
            over: AtomicBool::new(false),
        });
        Ok((log, reader, writer))
    }

    /// Reads `pipe` on a thread of its own until its end; past
    /// [`MAX_LOG`] bytes, marks the log and runs `stop` (which stops the
    /// server), then reads no more.
    pub fn read_from(
        self: &Arc<Self>,
        mut pipe: std::io::PipeReader,
        stop: impl FnOnce() + Send + 'static,
    ) {
        let log = Arc::clone(self);
        let read = move || {
            let mut chunk = vec![0u8; 64 << 10];
            let mut total: u64 = 0;
            loop {
                let n = match pipe.read(&mut chunk) {
                    Ok(0) => return,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => return,
                };
                total = total.saturating_add(n as u64);
                if total > MAX_LOG {
                    log.over.store(true, Ordering::SeqCst);
                    stop();
                    return;
                }
                if let Ok(mut kept) = log.kept.lock() {
                    let room = KEPT.saturating_sub(kept.len());
                    kept.extend_from_slice(&chunk[..n.min(room)]);
                }
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("fn-server-log".into())
            .spawn(read)
        {
            // Unread, the pipe would fill and block the server: better
            // stopped at once, with the reason.
            if let Ok(mut kept) = self.kept.lock() {
                kept.extend_from_slice(format!("(its log cannot be read: {e})").as_bytes());
            }
            self.over.store(true, Ordering::SeqCst);
        }
    }

    /// Whether the server wrote more than [`MAX_LOG`] bytes.
    pub fn over(&self) -> bool {
        self.over.load(Ordering::SeqCst)
    }

    /// The start of the log, for messages.
    pub fn excerpt(&self) -> String {
        stderr_excerpt(&self.kept.lock().map(|k| k.clone()).unwrap_or_default())
    }

    /// Why a server whose log passed the bound failed the call.
    pub fn over_message(&self) -> String {
        format!(
            "its server wrote more than {} on stdout and stderr (the bound on a function server's log) and was stopped; its log starts with: {}",
            describe_size(MAX_LOG),
            self.excerpt()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::{Duration, Instant};

    fn wait_for(what: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !what() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn the_start_is_kept_and_the_bound_stops_the_writer() {
        let (log, reader, mut writer) = Log::pipe().unwrap();
        let stopped = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stopped);
        log.read_from(reader, move || flag.store(true, Ordering::SeqCst));
        writer.write_all(b"serving HTTP on unix:///x\n").unwrap();
        wait_for(|| log.excerpt().contains("serving"));
        assert_eq!(log.excerpt(), "serving HTTP on unix:///x");
        assert!(!log.over());
        // Exactly the bound is allowed; one byte more is not.
        let rest = MAX_LOG as usize - 26;
        writer.write_all(&vec![b'x'; rest]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!log.over() && !stopped.load(Ordering::SeqCst));
        writer.write_all(b"y").unwrap();
        wait_for(|| stopped.load(Ordering::SeqCst));
        assert!(log.over() && stopped.load(Ordering::SeqCst));
        let message = log.over_message();
        assert!(
            message.starts_with("its server wrote more than 16 MiB on stdout and stderr"),
            "{message}"
        );
        assert_eq!(log.kept.lock().unwrap().len(), KEPT);
        // The reader is gone: the writer is not blocked, it fails.
        assert!(writer.write_all(&vec![b'z'; 1 << 20]).is_err());
    }
}
