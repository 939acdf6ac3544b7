//! Keeping the resident set small: the config load's transient peak (a 10,000-zone TOML document
//! is several times the size of the compiled config) goes back to the OS instead of staying
//! mapped in the allocator's caches.
//!
//! The `escgate` binary runs on mimalloc; tests and library users run on the system allocator.
//! Both are handled, and each call is harmless for the allocator that is not in use.
#![allow(unsafe_code)] // The allocators have no safe bindings for these controls.

use std::ffi::c_long;
use std::sync::{Mutex, MutexGuard};

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_collect, mi_free, mi_malloc, mi_malloc_aligned, mi_option_get, mi_option_set, mi_option_t,
    mi_realloc, mi_realloc_aligned, mi_zalloc, mi_zalloc_aligned,
};

/// mimalloc as the global allocator (the `escgate` and `pingora_baseline` binaries, the benches).
///
/// The `mimalloc` crate sends every allocation through `mi_malloc_aligned`, whose slow path
/// (taken whenever the thread's page for the size class has no free block at the right
/// alignment, and for every block over 1 KiB whose size is not a power of two) over-allocates
/// and marks the page as holding interior pointers, which `mi_free` then pays for too. Rust asks
/// for at most 16-byte alignment almost always, and mimalloc's plain `mi_malloc` already aligns
/// every block of 16 bytes or more to 16 (sizes are rounded to double words), so those
/// allocations go through the plain entry points. Measured with `benches/load/instructions.sh`
/// (instructions per proxied request): pingora_baseline 106,612 → 102,366 (−4.0%), escgate
/// 116,509 → 109,985 (−5.6%).
pub struct MiMalloc;

/// Alignment every `mi_malloc` block of at least this size has (`MI_MAX_ALIGN_SIZE`).
const PLAIN_ALIGNMENT: usize = 16;

/// True when mimalloc's plain entry points satisfy `align` for a block of `size` bytes.
fn plainly_aligned(size: usize, align: usize) -> bool {
    align <= PLAIN_ALIGNMENT && align <= size
}

/// A block for `layout` from mimalloc's plain entry point when it aligns enough, else from the
/// aligned one.
///
/// # Safety
/// `layout` has a non-zero size (the `GlobalAlloc` contract).
#[inline]
unsafe fn allocate(
    layout: Layout,
    plain: unsafe extern "C" fn(usize) -> *mut c_void,
    aligned: unsafe extern "C" fn(usize, usize) -> *mut c_void,
) -> *mut u8 {
    let (size, align) = (layout.size(), layout.align());
    let block = if plainly_aligned(size, align) {
        plain(size)
    } else {
        aligned(size, align)
    };
    block.cast()
}

// SAFETY: every block comes from mimalloc with at least the layout's size and alignment (plain
// entry points only where `plainly_aligned` holds), and is freed or resized by mimalloc, which
// accepts blocks of any of its entry points.
unsafe impl GlobalAlloc for MiMalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        allocate(layout, mi_malloc, mi_malloc_aligned)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        allocate(layout, mi_zalloc, mi_zalloc_aligned)
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi_free(ptr.cast::<c_void>());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        let block = if plainly_aligned(new_size, align) {
            mi_realloc(ptr.cast(), new_size)
        } else {
            mi_realloc_aligned(ptr.cast(), new_size, align)
        };
        block.cast()
    }
}

// Positions in mimalloc's `mi_option_e` (v3, as libmimalloc-sys builds it), which libmimalloc-sys
// does not name; a unit test checks them against named neighbours and mimalloc's documented
// defaults, so a renumbering fails the tests.
const MI_OPTION_ARENA_EAGER_COMMIT: mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: mi_option_t = 15;

/// Registered by the `escgate` binary to run before `main` (and before its first allocation):
/// mimalloc commits the 1 GiB arena it reserves at the first allocation up front on
/// overcommitting systems, and pages touched once in an eagerly committed arena stayed resident
/// for the life of the process. Committing on demand costs nothing once the proxy runs in steady
/// state. Measured with 10,000 zones (with [`releasing_transient`]): RSS 41 → 36 MiB at startup,
/// 58 → 45 MiB after load. `MIMALLOC_ARENA_EAGER_COMMIT` in the environment still wins.
pub extern "C" fn configure_allocator() {
    // SAFETY: getenv reads the environment with a NUL-terminated name; nothing modifies the
    // environment this early. mi_option_set stores an integer in mimalloc's option table.
    unsafe {
        if libc::getenv(c"MIMALLOC_ARENA_EAGER_COMMIT".as_ptr()).is_null() {
            mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
        }
    }
}

/// Runs `work` (which allocates a large transient structure and frees it) so that the memory it
/// freed is returned to the OS when it ends, instead of being kept for reuse. Nests (startup
/// wraps the whole build, which loads the config) and overlaps safely.
pub fn releasing_transient<T>(work: impl FnOnce() -> T) -> T {
    let result = {
        let _immediate = ImmediatePurge::start();
        work()
    };
    // glibc raises its trim threshold after freeing large blocks (up to 64 MiB), so it keeps
    // them mapped unless asked.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it has no preconditions.
    unsafe {
        libc::malloc_trim(0);
    }
    result
}

/// How many `ImmediatePurge` guards live, and the purge delay to restore when none does.
static PURGE_MODE: Mutex<(usize, c_long)> = Mutex::new((0, 0));

fn purge_mode() -> MutexGuard<'static, (usize, c_long)> {
    PURGE_MODE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// mimalloc 3 purges freed pages after a delay (1 s), and only when the freeing thread
/// allocates again; the config parse thread exits first, so its pages would stay resident.
/// While a guard lives, purging is immediate; dropping the last one (also on unwind) collects
/// what is left and restores the delay for the request path, where reusing pages pays.
struct ImmediatePurge;

impl ImmediatePurge {
    fn start() -> Self {
        let mut mode = purge_mode();
        if mode.0 == 0 {
            // SAFETY: reading and writing integers in mimalloc's option table; any value is valid.
            mode.1 = unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
            unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, 0) };
        }
        mode.0 += 1;
        ImmediatePurge
    }
}

impl Drop for ImmediatePurge {
    fn drop(&mut self) {
        let mut mode = purge_mode();
        mode.0 -= 1;
        // SAFETY: mi_collect only walks mimalloc's own heaps (`force` includes the pages exited
        // threads abandoned); mi_option_set as above.
        unsafe {
            mi_collect(true);
            if mode.0 == 0 {
                mi_option_set(MI_OPTION_PURGE_DELAY, mode.1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The purge delay once no `releasing_transient` runs (other tests load configs).
    fn settled_purge_delay() -> c_long {
        for _ in 0..10_000 {
            let mode = purge_mode();
            if mode.0 == 0 {
                // SAFETY: reading mimalloc's option table.
                return unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) };
            }
            drop(mode);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("a releasing_transient never ended");
    }

    #[test]
    fn allocator_meets_every_alignment() {
        let allocator = MiMalloc;
        let mut blocks = Vec::new();
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [
                1, 7, 8, 9, 15, 16, 17, 24, 40, 100, 1000, 1025, 1500, 5000, 70_000,
            ] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; every block is freed below with its layout.
                unsafe {
                    let zeroed = allocator.alloc_zeroed(layout);
                    assert!(!zeroed.is_null());
                    assert!(std::slice::from_raw_parts(zeroed, size)
                        .iter()
                        .all(|b| *b == 0));
                    for block in [allocator.alloc(layout), zeroed] {
                        assert!(!block.is_null());
                        assert_eq!(block as usize % align, 0, "size {size} align {align}");
                        block.write_bytes(0xa5, size);
                        let grown = allocator.realloc(block, layout, size * 3);
                        assert_eq!(grown as usize % align, 0, "grown {size} align {align}");
                        assert!(std::slice::from_raw_parts(grown, size)
                            .iter()
                            .all(|b| *b == 0xa5));
                        let grown_layout = Layout::from_size_align(size * 3, align).unwrap();
                        let shrunk = allocator.realloc(grown, grown_layout, size.div_ceil(2));
                        assert_eq!(shrunk as usize % align, 0, "shrunk {size} align {align}");
                        blocks.push((shrunk, size.div_ceil(2), align));
                    }
                }
            }
        }
        for (block, size, align) in blocks {
            // SAFETY: allocated above with this layout.
            unsafe { allocator.dealloc(block, Layout::from_size_align(size, align).unwrap()) };
        }
    }

    #[test]
    fn option_positions_match_mimalloc() {
        // Neighbours that libmimalloc-sys does name, then mimalloc's documented defaults
        // (nothing in the test binary calls `configure_allocator`).
        assert_eq!(
            MI_OPTION_ARENA_EAGER_COMMIT + 2,
            libmimalloc_sys::mi_option_large_os_pages
        );
        assert_eq!(
            MI_OPTION_PURGE_DELAY,
            libmimalloc_sys::mi_option_use_numa_nodes - 1
        );
        // SAFETY: reading mimalloc's option table.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_ARENA_EAGER_COMMIT) }, 2);
        assert_eq!(settled_purge_delay(), 1000);
    }

    #[test]
    fn releasing_transient_purges_immediately_then_restores_the_delay() {
        let len = releasing_transient(|| {
            // SAFETY: reading mimalloc's option table.
            assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, 0);
            vec![0u8; 1 << 20].len()
        });
        assert_eq!(len, 1 << 20);
        assert_eq!(settled_purge_delay(), 1000);
        let panicked = std::panic::catch_unwind(|| releasing_transient(|| panic!("in the work")));
        assert!(panicked.is_err());
        // Restored on unwind too, and the lock is not left poisoned.
        assert_eq!(settled_purge_delay(), 1000);
        let nested = releasing_transient(|| releasing_transient(|| 7) + 1);
        assert_eq!(nested, 8);
        assert_eq!(settled_purge_delay(), 1000);
    }
}
