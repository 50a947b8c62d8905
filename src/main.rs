// mimalloc instead of glibc's malloc: allocation weighs on every request (bench/RESULTS.md).
#[global_allocator]
static ALLOCATOR: WordAligned = WordAligned;

/// mimalloc, asked for an alignment only when a layout needs more than a word. The `mimalloc`
/// crate passes every layout to `mi_malloc_aligned`, and mimalloc 3 serves a block over 1 KiB
/// from there by its slow path, over-allocating, even at word alignment: every boxed future and
/// buffer of a request (bench/RESULTS.md). Every mimalloc block is word-aligned, so `mi_malloc`
/// serves those layouts as they are.
struct WordAligned;

const WORD: usize = std::mem::size_of::<usize>();

// SAFETY: each call forwards to mimalloc with the layout's size, and with its alignment
// whenever that exceeds the word alignment every mimalloc block has; `mi_free` frees both kinds.
unsafe impl std::alloc::GlobalAlloc for WordAligned {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_malloc, mi_malloc_aligned};
        // SAFETY: as for the impl; a non-zero size is the caller's obligation.
        unsafe {
            if layout.align() <= WORD {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_zalloc, mi_zalloc_aligned};
        // SAFETY: as for `alloc`.
        unsafe {
            if layout.align() <= WORD {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new_size: usize) -> *mut u8 {
        use libmimalloc_sys::{mi_realloc, mi_realloc_aligned};
        // SAFETY: as for `alloc`; `ptr` came from this allocator with `layout`'s alignment.
        unsafe {
            if layout.align() <= WORD {
                mi_realloc(ptr.cast(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast(), new_size, layout.align()).cast()
            }
        }
    }
}

/// Commit arena memory as it is used and hand freed pages back at once, so an idle instance
/// holds what it uses rather than whole arenas (figures in bench/RESULTS.md).
/// It runs from `.init_array`, before the first allocation reserves an arena: set from `main`,
/// the settings come too late for it. `MIMALLOC_*` variables still override both.
#[cfg(target_os = "linux")]
#[used]
#[unsafe(link_section = ".init_array")]
static CONFIGURE_ALLOCATOR: extern "C" fn() = configure_allocator;

extern "C" fn configure_allocator() {
    use libmimalloc_sys::{mi_option_set_default, mi_option_t};
    const ARENA_EAGER_COMMIT: mi_option_t = 4;
    const PURGE_DELAY: mi_option_t = 15;
    // SAFETY: plain integer settings, written while the process is still single-threaded.
    unsafe {
        mi_option_set_default(ARENA_EAGER_COMMIT, 0);
        mi_option_set_default(PURGE_DELAY, 0);
    }
}

fn main() -> std::process::ExitCode {
    #[cfg(not(target_os = "linux"))]
    configure_allocator();
    tandem::cli::main()
}

#[cfg(test)]
mod tests {
    use std::alloc::{GlobalAlloc, Layout};

    use super::WordAligned;

    /// Every alignment, at sizes on both sides of mimalloc's 1 KiB small-block limit, comes back
    /// aligned, writable, zeroed when asked, and kept across a reallocation.
    #[test]
    fn blocks_are_aligned_zeroed_and_kept_across_reallocation() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 24, 40, 1000, 1024, 1032, 4936, 70_000] {
                let size = size.max(align);
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: non-zero sizes; each block is freed once, with the layout it has.
                unsafe {
                    let zeroed = WordAligned.alloc_zeroed(layout);
                    assert_eq!(zeroed as usize % align, 0, "zeroed {size} at {align}");
                    assert!(std::slice::from_raw_parts(zeroed, size).iter().all(|&b| b == 0));
                    WordAligned.dealloc(zeroed, layout);

                    let block = WordAligned.alloc(layout);
                    assert_eq!(block as usize % align, 0, "{size} at {align}");
                    for i in 0..size {
                        *block.add(i) = i as u8;
                    }
                    let grown = WordAligned.realloc(block, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "grown {size} at {align}");
                    assert!((0..size).all(|i| *grown.add(i) == i as u8), "kept {size} at {align}");
                    WordAligned.dealloc(grown, Layout::from_size_align(size * 3, align).unwrap());
                }
            }
        }
    }
}
