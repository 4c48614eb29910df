//! Listening sockets (TCP, or a unix socket that appears ready and with
//! its final mode) and the signals that stop the servers.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::{TcpListener, UnixListener};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

use super::addr::Address;
use super::ServeError;

/// The mode of a server's unix socket: any user may connect, so that a
/// client under another uid (a container's user against the host's, or
/// the other way round) reaches it; access is granted or denied by the
/// permissions of the directory holding the socket.
pub(crate) const SOCKET_MODE: u32 = 0o666;

/// A bound listening socket.
pub(crate) enum Listener {
    /// A TCP socket.
    Tcp(TcpListener),
    /// A unix socket, and the file to remove when the server stops.
    Unix(UnixListener, SocketFile),
}

impl Listener {
    /// Binds `address`. A unix socket is bound under a temporary name in
    /// the same directory, given [`SOCKET_MODE`], then renamed: its path
    /// appears only once a client can connect to it. A file already at
    /// the path is replaced only if it is a socket (a previous server's).
    pub(crate) async fn bind(address: &Address) -> Result<Listener, ServeError> {
        let listening = |source| ServeError::Listen {
            address: address.clone(),
            source,
        };
        match address {
            Address::Tcp(host_port) => TcpListener::bind(host_port)
                .await
                .map(Listener::Tcp)
                .map_err(listening),
            Address::Unix(path) => bind_unix(path).map_err(listening),
        }
    }

    /// The address clients reach: with the port a TCP `:0` got.
    pub(crate) fn describe(&self) -> String {
        match self {
            Listener::Tcp(l) => l
                .local_addr()
                .map_or_else(|_| "an unknown TCP address".into(), |a| a.to_string()),
            Listener::Unix(_, file) => Address::Unix(file.path.clone()).to_string(),
        }
    }
}

fn bind_unix(path: &Path) -> std::io::Result<Listener> {
    remove_stale_socket(path)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(".{name}.{}.binding", std::process::id()));
    remove_stale_socket(&temporary)?;
    let listener = UnixListener::bind(&temporary)?;
    let placed = std::fs::set_permissions(&temporary, std::fs::Permissions::from_mode(SOCKET_MODE))
        .and_then(|()| std::fs::rename(&temporary, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&temporary);
        return Err(e);
    }
    let meta = std::fs::symlink_metadata(path)?;
    let file = SocketFile {
        path: path.to_path_buf(),
        identity: (meta.dev(), meta.ino()),
    };
    Ok(Listener::Unix(listener, file))
}

fn remove_stale_socket(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => std::fs::remove_file(path),
        Ok(_) => Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "the path exists and is not a socket",
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// A socket file a server created; removed when dropped, unless another
/// file has taken its path since.
pub(crate) struct SocketFile {
    path: PathBuf,
    identity: (u64, u64),
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.identity {
                let _ = std::fs::remove_file(&self.path);
            }
        }
    }
}

/// Sets `stop` to `true` on the first SIGTERM, SIGINT or SIGHUP (the
/// terminal or the supervisor gone: nothing would read the answers).
pub(crate) fn stop_on_signals(
    stop: watch::Sender<bool>,
) -> Result<tokio::task::JoinHandle<()>, ServeError> {
    let watch = |kind: SignalKind| signal(kind).map_err(ServeError::Signals);
    let (mut term, mut interrupt, mut hangup) = (
        watch(SignalKind::terminate())?,
        watch(SignalKind::interrupt())?,
        watch(SignalKind::hangup())?,
    );
    Ok(tokio::spawn(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
            _ = hangup.recv() => {}
        }
        let _ = stop.send(true);
    }))
}

/// Resolves once `stop` turns `true` (or its sender is gone).
pub(crate) async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}
