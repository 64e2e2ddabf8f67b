//! SQLite's own page cache, with its commits' truncation skipped when there is nothing to cut.
//!
//! At every commit SQLite asks the page cache to drop the pages past the end of the database
//! (`xTruncate`). Its cache answers by scanning its whole hash table, every slot and every page
//! (each page's header a cache miss of its own), whenever it has once seen a page number far past
//! that end since the last truncation. And it always has, in a transaction that split a B-tree page
//! and sorted the new pages: SQLite's balance swaps two pages by their numbers through a third
//! number, the page of the file's lock byte (page 262,145 at 4 KiB pages: never a page of the
//! database), for a moment. So in a database under 1 GiB each commit whose inserts split a page
//! scanned all 8,192 pages of the writer's 32 MiB cache, about 300 µs on the writer's thread,
//! every batch or so, to cut nothing.
//!
//! This module puts a thin layer over the default cache (whose every method it calls, and
//! whose pages it neither holds nor changes): it keeps, per cache, a bound on the highest page
//! number the cache may hold, not counting the lock byte's page while the balance has a page
//! there, and passes a truncation on only where a page may lie past the limit. Everything else
//! is the default cache's.

use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Once, OnceLock};

use libsqlite3_sys::{
    sqlite3_config, sqlite3_pcache, sqlite3_pcache_methods2, sqlite3_pcache_page, SQLITE_CONFIG_GETPCACHE2,
    SQLITE_CONFIG_PCACHE2, SQLITE_OK,
};

/// The byte SQLite locks files at (its default `PENDING_BYTE`): the page holding it is never a
/// page of the database, and is the number balance swaps pages through.
const PENDING_BYTE: c_uint = 0x4000_0000;

/// What one cache may hold, as far as its truncations need to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bound {
    /// No page of the cache has a number above this one, but for those at `swap`.
    high: c_uint,
    /// The number balance moves a page to for a moment: the lock byte's page.
    swap: c_uint,
    /// Pages at `swap` now.
    at_swap: u32,
}

impl Bound {
    fn new(page_size: c_uint) -> Self {
        Self { high: 0, swap: PENDING_BYTE / page_size.max(1) + 1, at_swap: 0 }
    }

    /// A page numbered `key` is in the cache.
    fn fetched(&mut self, key: c_uint) {
        self.high = self.high.max(key);
    }

    /// A page moved from `old` to `new`.
    fn rekeyed(&mut self, old: c_uint, new: c_uint) {
        if old == self.swap {
            self.at_swap = self.at_swap.saturating_sub(1);
        }
        if new == self.swap {
            self.at_swap += 1;
        } else {
            self.fetched(new);
        }
    }

    /// Whether a page numbered `limit` or more may be in the cache.
    fn holds_from(&self, limit: c_uint) -> bool {
        self.high >= limit || (self.at_swap > 0 && self.swap >= limit)
    }

    /// The pages numbered `limit` or more were dropped.
    fn truncated(&mut self, limit: c_uint) {
        self.high = self.high.min(limit.saturating_sub(1));
        if self.swap >= limit {
            self.at_swap = 0;
        }
    }
}

/// One cache: the default cache's, and its bound.
struct Cache {
    inner: *mut sqlite3_pcache,
    bound: Bound,
}

/// The default cache's methods, as SQLite had them before this module's.
struct DefaultCache(sqlite3_pcache_methods2);

// SAFETY: the methods are functions SQLite calls from any thread, and `pArg` is the default
// cache's own argument, only ever handed back to them.
unsafe impl Send for DefaultCache {}
unsafe impl Sync for DefaultCache {}

static DEFAULT: OnceLock<DefaultCache> = OnceLock::new();

fn default() -> &'static sqlite3_pcache_methods2 {
    &DEFAULT.get().expect("SQLite calls its page cache only after `install` set it").0
}

// SAFETY (every function below): SQLite calls them with the handle `create` returned, from one
// connection at a time (a cache belongs to one connection's pager), and the default cache's
// methods with the same arguments as SQLite would have.

unsafe extern "C" fn init(_: *mut c_void) -> c_int {
    match default().xInit {
        Some(init) => init(default().pArg),
        None => SQLITE_OK,
    }
}

unsafe extern "C" fn shutdown(_: *mut c_void) {
    if let Some(shutdown) = default().xShutdown {
        shutdown(default().pArg);
    }
}

unsafe extern "C" fn create(page_size: c_int, extra: c_int, purgeable: c_int) -> *mut sqlite3_pcache {
    let Some(create) = default().xCreate else { return std::ptr::null_mut() };
    let inner = create(page_size, extra, purgeable);
    if inner.is_null() {
        return inner;
    }
    let bound = Bound::new(c_uint::try_from(page_size).unwrap_or(1));
    Box::into_raw(Box::new(Cache { inner, bound })).cast()
}

unsafe fn cache<'a>(handle: *mut sqlite3_pcache) -> &'a mut Cache {
    &mut *handle.cast::<Cache>()
}

unsafe extern "C" fn cache_size(handle: *mut sqlite3_pcache, pages: c_int) {
    if let Some(set) = default().xCachesize {
        set(cache(handle).inner, pages);
    }
}

unsafe extern "C" fn page_count(handle: *mut sqlite3_pcache) -> c_int {
    default().xPagecount.map_or(0, |count| count(cache(handle).inner))
}

unsafe extern "C" fn fetch(handle: *mut sqlite3_pcache, key: c_uint, create: c_int) -> *mut sqlite3_pcache_page {
    let cache = cache(handle);
    let Some(fetch) = default().xFetch else { return std::ptr::null_mut() };
    let page = fetch(cache.inner, key, create);
    if !page.is_null() {
        cache.bound.fetched(key);
    }
    page
}

unsafe extern "C" fn unpin(handle: *mut sqlite3_pcache, page: *mut sqlite3_pcache_page, discard: c_int) {
    if let Some(unpin) = default().xUnpin {
        unpin(cache(handle).inner, page, discard);
    }
}

unsafe extern "C" fn rekey(handle: *mut sqlite3_pcache, page: *mut sqlite3_pcache_page, old: c_uint, new: c_uint) {
    let cache = cache(handle);
    if let Some(rekey) = default().xRekey {
        rekey(cache.inner, page, old, new);
    }
    #[cfg(test)]
    if new == cache.bound.swap {
        tests::SWAPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    cache.bound.rekeyed(old, new);
}

unsafe extern "C" fn truncate(handle: *mut sqlite3_pcache, limit: c_uint) {
    let cache = cache(handle);
    if !cache.bound.holds_from(limit) {
        #[cfg(test)]
        tests::SKIPPED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    #[cfg(test)]
    tests::PASSED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Some(truncate) = default().xTruncate {
        truncate(cache.inner, limit);
    }
    cache.bound.truncated(limit);
}

unsafe extern "C" fn destroy(handle: *mut sqlite3_pcache) {
    let cache = Box::from_raw(handle.cast::<Cache>());
    if let Some(destroy) = default().xDestroy {
        destroy(cache.inner);
    }
}

unsafe extern "C" fn shrink(handle: *mut sqlite3_pcache) {
    if let Some(shrink) = default().xShrink {
        shrink(cache(handle).inner);
    }
}

/// Puts the layer over SQLite's default page cache, once per process, before the first
/// connection opens (as [`crate::malloc::use_mimalloc`]); once SQLite has started it keeps the
/// cache it has.
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let mut methods = std::mem::MaybeUninit::<sqlite3_pcache_methods2>::zeroed();
        // SAFETY: SQLite writes its current methods (the default cache's, set up if none were)
        // into `methods`, which is large enough for them.
        let got = unsafe { sqlite3_config(SQLITE_CONFIG_GETPCACHE2, methods.as_mut_ptr()) };
        if got != SQLITE_OK {
            tracing::debug!(got, "SQLite had started already: it keeps its page cache");
            return;
        }
        // SAFETY: written by SQLite just above.
        let methods = unsafe { methods.assume_init() };
        if DEFAULT.set(DefaultCache(methods)).is_err() {
            return;
        }
        let layer = sqlite3_pcache_methods2 {
            iVersion: 1,
            pArg: std::ptr::null_mut(),
            xInit: Some(init),
            xShutdown: Some(shutdown),
            xCreate: Some(create),
            xCachesize: Some(cache_size),
            xPagecount: Some(page_count),
            xFetch: Some(fetch),
            xUnpin: Some(unpin),
            xRekey: Some(rekey),
            xTruncate: Some(truncate),
            xDestroy: Some(destroy),
            xShrink: Some(shrink),
        };
        // SAFETY: before SQLite's initialisation in this process (or refused after it, changing
        // nothing); SQLite copies `layer` before `sqlite3_config` returns, and each method only
        // calls the default cache's on the handle it was given.
        let set = unsafe { sqlite3_config(SQLITE_CONFIG_PCACHE2, &layer as *const sqlite3_pcache_methods2) };
        if set != SQLITE_OK {
            tracing::debug!(set, "SQLite had started already: it keeps its page cache");
        }
    });
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    /// Truncations the layer found nothing for, and passed on, in this process.
    pub(crate) static SKIPPED: AtomicU64 = AtomicU64::new(0);
    pub(crate) static PASSED: AtomicU64 = AtomicU64::new(0);
    /// Pages balance moved to the lock byte's number, in this process.
    pub(crate) static SWAPS: AtomicU64 = AtomicU64::new(0);

    #[test]
    fn a_commit_after_a_balance_swap_cuts_nothing_and_is_skipped() {
        let mut bound = Bound::new(4096);
        assert_eq!(bound.swap, 262_145);
        for key in 1..=500 {
            bound.fetched(key);
        }
        // Balance swaps pages 120 and 90 through the lock byte's page.
        bound.rekeyed(120, bound.swap);
        assert!(bound.holds_from(501), "a page is at the swap number for now");
        bound.rekeyed(90, 120);
        bound.rekeyed(bound.swap, 90);
        // The commit of a 500-page database: nothing past page 500.
        assert!(!bound.holds_from(501));
        // A new page at the end, then the commit of a 501-page database.
        bound.fetched(501);
        assert!(!bound.holds_from(502));
        assert!(bound.holds_from(501));
    }

    #[test]
    fn a_rollback_that_shrinks_the_database_is_passed_on() {
        let mut bound = Bound::new(4096);
        for key in 1..=700 {
            bound.fetched(key);
        }
        // The transaction grew the database from 500 to 700 pages and rolled back.
        assert!(bound.holds_from(501));
        bound.truncated(501);
        assert!(!bound.holds_from(501));
        assert_eq!(bound.high, 500);
        // A cache cleared (another connection wrote): every page goes.
        assert!(bound.holds_from(1));
        bound.truncated(1);
        assert_eq!(bound.high, 0);
        assert!(!bound.holds_from(1));
    }

    #[test]
    fn a_page_left_at_the_swap_number_is_truncated_with_the_rest() {
        let mut bound = Bound::new(4096);
        bound.fetched(10);
        bound.rekeyed(10, bound.swap);
        assert!(bound.holds_from(11));
        assert!(!bound.holds_from(bound.swap + 1));
        bound.truncated(11);
        assert!(!bound.holds_from(11));
        // A page fetched at the lock byte's number itself (a damaged file asks for it) counts.
        bound.fetched(bound.swap);
        assert!(bound.holds_from(11));
        // Page sizes other than 4 KiB swap through their own number.
        assert_eq!(Bound::new(65_536).swap, 16_385);
        assert_eq!(Bound::new(512).swap, 2_097_153);
    }

    /// Transactions that split pages of an index of random keys (so balance swaps pages through
    /// the lock byte's number), some rolled back after growing the file, on a store's writer:
    /// commits that cut nothing are skipped, and the database is whole and holds what was
    /// committed.
    #[tokio::test]
    async fn a_database_written_through_the_layer_is_whole() {
        let dir = std::env::temp_dir().join(format!("adjutant-page-cache-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let store = crate::SqliteStore::open(&format!("sqlite://{}", dir.join("a.db").display())).await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        sqlx::query("CREATE TABLE scratch (k TEXT PRIMARY KEY, v BLOB NOT NULL)").execute(&mut *conn).await.unwrap();
        let counts = || [&SKIPPED, &PASSED, &SWAPS].map(|c| c.load(Ordering::Relaxed));
        let before = counts();
        let (mut kept, mut next) = (0_i64, 0_u64);
        for round in 0..24 {
            sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await.unwrap();
            for _ in 0..200 {
                // Keys spread over the index, so that its pages split in the middle.
                next += 1;
                let key = format!("{:016x}", next.wrapping_mul(0x9e37_79b9_7f4a_7c15));
                sqlx::query("INSERT INTO scratch (k, v) VALUES (?, zeroblob(300))")
                    .bind(key)
                    .execute(&mut *conn)
                    .await
                    .unwrap();
            }
            if round % 4 == 3 {
                sqlx::query("ROLLBACK").execute(&mut *conn).await.unwrap();
            } else {
                sqlx::query("COMMIT").execute(&mut *conn).await.unwrap();
                kept += 200;
            }
        }
        let (count,): (i64,) = sqlx::query_as("SELECT count(*) FROM scratch").fetch_one(&mut *conn).await.unwrap();
        assert_eq!(count, kept);
        let (check,): (String,) = sqlx::query_as("PRAGMA integrity_check").fetch_one(&mut *conn).await.unwrap();
        assert_eq!(check, "ok");
        let [skipped, passed, swaps] = counts();
        assert!(swaps > before[2], "balance never swapped pages: the workload does not test the layer");
        assert!(skipped > before[0], "no commit's truncation was skipped");
        assert!(passed > before[1], "no rollback's truncation was passed on");
        drop(conn);
        store.close().await;
        // Read again by a connection of its own, from the file.
        let store = crate::SqliteStore::open(&format!("sqlite://{}", dir.join("a.db").display())).await.unwrap();
        let (count,): (i64,) = sqlx::query_as("SELECT count(*) FROM scratch").fetch_one(&store.readers).await.unwrap();
        assert_eq!(count, kept);
        store.close().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
