//! SQLite's memory comes from mimalloc, the allocator the service itself uses, and SQLite keeps
//! no count of it.
//!
//! sqlx copies every column of every row it reads (`sqlite3_value_dup`: an allocation and a
//! copy) on the connection's own thread, and frees the copies where the row is dropped, on an
//! async worker: glibc's malloc, with SQLite counting each allocation under a mutex, makes a
//! long read spend much of its time there, and mimalloc frees memory that another thread
//! allocated cheaply.

use std::ffi::{c_int, c_void};
use std::sync::Once;

use libmimalloc_sys::{mi_free, mi_malloc, mi_realloc, mi_usable_size};
use libsqlite3_sys::{sqlite3_config, sqlite3_mem_methods, SQLITE_CONFIG_MALLOC, SQLITE_CONFIG_MEMSTATUS, SQLITE_OK};

unsafe extern "C" fn malloc(size: c_int) -> *mut c_void {
    // SQLite asks for a size it rounded up with `roundup`, never a negative one.
    mi_malloc(usize::try_from(size).unwrap_or(0))
}

unsafe extern "C" fn free(at: *mut c_void) {
    mi_free(at);
}

unsafe extern "C" fn realloc(at: *mut c_void, size: c_int) -> *mut c_void {
    mi_realloc(at, usize::try_from(size).unwrap_or(0))
}

unsafe extern "C" fn size(at: *mut c_void) -> c_int {
    c_int::try_from(mi_usable_size(at)).unwrap_or(c_int::MAX)
}

extern "C" fn roundup(size: c_int) -> c_int {
    // SQLite wants 8-byte multiples; mimalloc rounds up further itself.
    size.saturating_add(7) & !7
}

extern "C" fn init(_: *mut c_void) -> c_int {
    SQLITE_OK
}

extern "C" fn shutdown(_: *mut c_void) {}

/// Hands SQLite its allocator, once per process, before the first connection opens (every
/// connection of this crate's store is opened after it). Once SQLite has started, it keeps the
/// allocator it has: `sqlite3_config` then refuses (SQLITE_MISUSE) and changes nothing.
pub fn use_mimalloc() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let methods = sqlite3_mem_methods {
            xMalloc: Some(malloc),
            xFree: Some(free),
            xRealloc: Some(realloc),
            xSize: Some(size),
            xRoundup: Some(roundup),
            xInit: Some(init),
            xShutdown: Some(shutdown),
            pAppData: std::ptr::null_mut(),
        };
        // SAFETY: both calls come before SQLite's initialisation in this process (or are
        // refused after it); SQLite copies `methods` before `sqlite3_config` returns, and every
        // function in it is thread-safe, as mimalloc's are.
        let (allocator, counting) = unsafe {
            (
                sqlite3_config(SQLITE_CONFIG_MALLOC, &methods as *const sqlite3_mem_methods),
                sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0 as c_int),
            )
        };
        if allocator != SQLITE_OK || counting != SQLITE_OK {
            tracing::debug!(allocator, counting, "SQLite had started already: it keeps its own allocator");
        }
    });
}
