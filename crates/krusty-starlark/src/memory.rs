//! Running out of memory: `krusty` starts this program with its memory
//! limit as the data size limit, so past it allocations fail. The
//! program's allocator ends it then with exit status
//! [`OUT_OF_MEMORY`](krusty_runtime::starlark::OUT_OF_MEMORY), which
//! `krusty` reports as the limit being reached, instead of the abort a
//! failed allocation is by default.

use std::alloc::{GlobalAlloc, Layout, System};

use krusty_runtime::starlark::OUT_OF_MEMORY;

/// The system allocator, ending the program with
/// [`OUT_OF_MEMORY`](krusty_runtime::starlark::OUT_OF_MEMORY) when an
/// allocation fails. The `krusty-starlark` program's global allocator.
pub struct ExitWhenExhausted;

// SAFETY: every call is passed to the system allocator unchanged; only a
// null answer (an allocation that failed) is acted on, and it never
// returns.
unsafe impl GlobalAlloc for ExitWhenExhausted {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        checked(System.alloc(layout))
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        checked(System.alloc_zeroed(layout))
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        checked(System.realloc(ptr, layout, new_size))
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

fn checked(ptr: *mut u8) -> *mut u8 {
    if ptr.is_null() {
        exhausted();
    }
    ptr
}

/// Ends the program at once with [`OUT_OF_MEMORY`]: nothing more can be
/// allocated, so the message is written straight to stderr and nothing is
/// cleaned up.
pub fn exhausted() -> ! {
    const MESSAGE: &[u8] = b"krusty-starlark: out of memory\n";
    // SAFETY: write(2) reads MESSAGE only; _exit(2) ends the process
    // without running any code of ours.
    unsafe {
        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        libc::_exit(OUT_OF_MEMORY)
    }
}
