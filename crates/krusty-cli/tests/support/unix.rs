//! Unix file system pieces the safety tests set up: FIFOs, device nodes,
//! folder listings and a file size limit for a child process.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

fn c_path(path: &Path) -> CString {
    CString::new(path.as_os_str().as_bytes()).expect("no NUL in path")
}

/// Makes a FIFO at `path`, failing the test when it cannot.
pub fn mkfifo(path: &Path) {
    // SAFETY: mkfifo reads the path and creates one FIFO.
    assert_eq!(
        unsafe { libc::mkfifo(c_path(path).as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.display()
    );
}

/// Makes a private character device at `path` with /dev/null's numbers
/// (1, 3), in the test's own folder and never a system one; why not where
/// the machine does not allow it.
pub fn null_device(path: &Path) -> std::io::Result<()> {
    // SAFETY: mknod reads the path and creates one node.
    let made = unsafe {
        libc::mknod(
            c_path(path).as_ptr(),
            libc::S_IFCHR | 0o666,
            libc::makedev(1, 3),
        )
    };
    if made == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Names in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Limits the files `cmd`'s process writes to `limit` bytes (`ulimit
/// -f`), standing in for a full disk.
pub fn limit_file_size(cmd: &mut Command, limit: usize) {
    // SAFETY: setrlimit touches only the child.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit as libc::rlim_t,
                rlim_max: limit as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
