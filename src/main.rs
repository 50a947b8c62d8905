// mimalloc instead of glibc's malloc: allocation weighs on every request (bench/RESULTS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
