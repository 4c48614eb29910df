//! The build's thread pool: one worker per core, optionally each kept on
//! a core of its own.

/// Stack size of the worker threads that build bases and render output in
/// parallel: the main thread's usual size, so deep trees and deeply nested
/// documents fit there as they do on the main thread.
const WORKER_STACK: usize = 8 << 20;

/// Runs `work` on a thread of a pool of one thread per core (or
/// `RAYON_NUM_THREADS`), so its serial parts and the parallel parts it
/// starts share the cores without an extra thread competing for them.
///
/// With `KRUSTY_PIN_THREADS=1`, and when the pool has one worker for each
/// CPU the process may run on, worker `i` is kept on the `i`-th of those
/// CPUs. A build's parallel stretches last a few milliseconds; a scheduler
/// that places a new or woken thread beside the one that started it (as
/// virtual machines that pack work onto few virtual CPUs do) runs both
/// halves of such a stretch on one CPU until it moves one of them. On an
/// otherwise idle machine of that kind pinning helps; on one where another
/// program keeps a CPU busy it hurts (a pinned worker cannot leave that
/// CPU), so it is not the default (docs/performance.md).
pub fn in_pool<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    let mut builder = rayon::ThreadPoolBuilder::new().stack_size(WORKER_STACK);
    if let Some(cpus) = cpus_to_pin() {
        builder = builder
            .num_threads(cpus.len())
            .start_handler(move |worker| {
                if let Some(&cpu) = cpus.get(worker) {
                    affinity::keep_on(cpu);
                }
            });
    }
    let built = builder.build();
    match built {
        Ok(pool) => {
            let done = pool.install(work);
            // The process ends next: the idle threads are left parked
            // instead of being woken only to exit.
            std::mem::forget(pool);
            done
        }
        // No threads to be had: rayon's default pool runs the parallel parts.
        Err(_) => work(),
    }
}

/// The CPUs to keep the workers on, one each: only when
/// `KRUSTY_PIN_THREADS=1` and the pool would have one worker per CPU the
/// process may run on.
fn cpus_to_pin() -> Option<Vec<usize>> {
    if std::env::var_os("KRUSTY_PIN_THREADS").is_none_or(|v| v != "1") {
        return None;
    }
    affinity::allowed_cpus().filter(|cpus| cpus.len() == thread_count())
}

/// The number of workers rayon starts: `RAYON_NUM_THREADS` when it is a
/// positive number, else the parallelism the process is allowed (its CPU
/// affinity and any cgroup quota).
fn thread_count() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(|n| n.get()))
        .unwrap_or(1)
}

#[cfg(target_os = "linux")]
mod affinity {
    /// The CPUs this process may run on, in order; `None` if the kernel
    /// does not say.
    pub fn allowed_cpus() -> Option<Vec<usize>> {
        // SAFETY: `cpu_set_t` is plain data (all zeroes is the empty set);
        // `sched_getaffinity` writes at most the size it is given, and
        // `CPU_ISSET` reads within the set.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
                return None;
            }
            let cpus = (0..libc::CPU_SETSIZE as usize)
                .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
                .collect();
            Some(cpus)
        }
    }

    /// Keeps the calling thread on `cpu`; nothing changes if the kernel
    /// refuses.
    pub fn keep_on(cpu: usize) {
        // SAFETY: as above; `CPU_SET` writes within the set, and
        // `sched_setaffinity` only reads it.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod affinity {
    pub fn allowed_cpus() -> Option<Vec<usize>> {
        None
    }

    pub fn keep_on(_cpu: usize) {}
}
