//! Whether the cache folder is the user's alone. krusty builds from what
//! the cache holds and runs the programs it keeps, so no one else may be
//! able to change it, nor the path that leads to it (as OpenSSH checks
//! the folders of a key, and Cargo the owner of a registry's lock):
//!
//! - the cache folder is owned by the user (krusty's effective uid) and
//!   writable by no one else (no group or other write bit);
//! - every folder above it is owned by the user or by root, and writable
//!   by no one else unless it is sticky (as `/tmp` is: there, no one else
//!   can move or replace what the user owns);
//! - every symlink on the way is owned by the user or by root (its owner
//!   may replace it), and the path is checked on through where it leads.
//!
//! What does not exist yet is made by krusty, private to the user, inside
//! the last folder checked.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// The most symlinks followed on the way (as the kernel's limit).
const MAX_LINKS: usize = 40;

/// What a folder is to the cache.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A folder above the cache folder.
    Above,
    /// The cache folder itself.
    Root,
}

/// Checks the path to the cache folder `root` (see the module's rules);
/// returns where it leads: the real path of the part that exists, and
/// the rest of `root` after it.
pub(crate) fn check(root: &Path) -> io::Result<PathBuf> {
    let absolute = if root.is_absolute() {
        root.to_path_buf()
    } else {
        std::env::current_dir()?.join(root)
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut pending: Vec<OsString> = parts(&absolute);
    pending.reverse();
    let mut real = PathBuf::from("/");
    check_folder(&real, &fs::metadata(&real)?, uid, Role::Above, root)?;
    let mut links = 0;
    while let Some(part) = pending.pop() {
        if part == ".." {
            real.pop();
            continue;
        }
        let next = real.join(&part);
        let meta = match fs::symlink_metadata(&next) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                real.push(part);
                real.extend(pending.into_iter().rev());
                return Ok(real);
            }
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", next.display()))),
        };
        if meta.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Err(refused(format!(
                    "the path to krusty's cache folder {} has more than {MAX_LINKS} symlinks",
                    root.display()
                )));
            }
            if meta.uid() != uid && meta.uid() != 0 {
                return Err(refused(format!(
                    "the symlink {} on the way to krusty's cache folder {} is owned by uid {}, neither you (uid {uid}) nor root, who could point it elsewhere; use a folder of your own ({})",
                    next.display(),
                    root.display(),
                    meta.uid(),
                    crate::cache::CACHE_DIR_ENV
                )));
            }
            let target = fs::read_link(&next)?;
            if target.is_absolute() {
                real = PathBuf::from("/");
            }
            pending.extend(parts(&target).into_iter().rev());
            continue;
        }
        if !meta.is_dir() {
            return Err(refused(format!(
                "{} on the way to krusty's cache folder {} is not a folder",
                next.display(),
                root.display()
            )));
        }
        check_folder(&next, &meta, uid, Role::Above, root)?;
        real = next;
    }
    check_folder(&real, &fs::metadata(&real)?, uid, Role::Root, root)?;
    Ok(real)
}

/// The names of `path` after its root (`..` kept, `.` dropped).
fn parts(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// Fails unless the folder `path` (with `meta`) may be `role` for the
/// user `uid`.
fn check_folder(
    path: &Path,
    meta: &fs::Metadata,
    uid: u32,
    role: Role,
    root: &Path,
) -> io::Result<()> {
    let fix = crate::cache::CACHE_DIR_ENV;
    let what = match role {
        Role::Root => format!("krusty's cache folder {}", path.display()),
        Role::Above => format!(
            "the folder {} above krusty's cache folder {}",
            path.display(),
            root.display()
        ),
    };
    let owner = meta.uid();
    let owned = owner == uid || (role == Role::Above && owner == 0);
    if !owned {
        let allowed = match role {
            Role::Root => format!("not by you (uid {uid})"),
            Role::Above => format!("neither you (uid {uid}) nor root"),
        };
        return Err(refused(format!(
            "{what} is owned by uid {owner}, {allowed}: its owner could change what krusty builds and runs; use a folder of your own ({fix})"
        )));
    }
    let mode = meta.mode();
    let sticky = mode & 0o1000 != 0;
    if mode & 0o022 == 0 || (role == Role::Above && sticky) {
        return Ok(());
    }
    let by = if mode & 0o002 != 0 {
        "others"
    } else {
        "its group"
    };
    Err(refused(format!(
        "{what} is writable by {by} (mode {:04o}): they could change what krusty builds and runs; run chmod go-w {}, or use a private folder ({fix})",
        mode & 0o7777,
        path.display()
    )))
}

fn refused(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_private_path_leads_where_its_links_lead() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir(base.join("real")).unwrap();
        std::os::unix::fs::symlink("real", base.join("link")).unwrap();
        assert_eq!(check(&base.join("link")).unwrap(), base.join("real"));
        assert_eq!(
            check(&base.join("link/../link/new/cache")).unwrap(),
            base.join("real/new/cache")
        );
        std::os::unix::fs::symlink("loop", base.join("loop")).unwrap();
        let err = check(&base.join("loop/cache")).unwrap_err().to_string();
        assert!(err.contains("more than 40 symlinks"), "{err}");
        fs::write(base.join("file"), "").unwrap();
        let err = check(&base.join("file/cache")).unwrap_err().to_string();
        assert!(err.contains("is not a folder"), "{err}");
    }

    #[test]
    fn writable_folders_are_refused_except_sticky_ones_above() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let cache = base.join("cache");
        fs::create_dir(&cache).unwrap();
        check(&cache).unwrap();
        for (mode, by) in [(0o720, "its group"), (0o702, "others"), (0o1777, "others")] {
            chmod(&cache, mode);
            let err = check(&cache).unwrap_err().to_string();
            assert!(
                err.contains(&format!("krusty's cache folder {}", cache.display()))
                    && err.contains(&format!("writable by {by} (mode {mode:04o})")),
                "{err}"
            );
        }
        chmod(&cache, 0o755);
        chmod(&base, 0o1777);
        check(&cache).unwrap();
        chmod(&base, 0o777);
        let err = check(&cache.join("below")).unwrap_err().to_string();
        assert!(
            err.contains(&format!("the folder {} above", base.display())),
            "{err}"
        );
        chmod(&base, 0o700);
    }
}
