//! The writer's WAL frames reach the file together: a write for each 120 KiB of a commit, not
//! two a frame.
//!
//! SQLite writes each frame of a commit with two `pwrite`s, its 24-byte header and then its
//! page, and syncs the WAL once after the last. The frames run on from one another, and the
//! kernel does its work per call and per page of the file each call touches: a frame of 4,120
//! bytes touches two, its header a third time. With posts spread over many campaigns a commit
//! holds some 360 frames, and these calls were a third of the writer connection's time (figure
//! 1's 1,000-campaign row).
//!
//! This module is a VFS over SQLite's default one, for the writer connection alone. It opens every
//! file as the default VFS does, and leaves every file but a WAL file to it untouched. A WAL
//! file's writes that follow on from one another are gathered in memory and written with one
//! call: before the file is synced, read, truncated, asked its size or closed, and before a
//! write that does not follow on (each write lands in the file in the order it was made).
//!
//! Why nothing can be read that is not in the file yet: SQLite syncs a commit's frames before
//! it publishes them in the WAL index, so another connection (the readers, the checkpointer)
//! reads only frames written before a sync; this connection reads its own frames through this
//! file, which writes what it gathered first. That holds where the commit's sync is made
//! (`synchronous=FULL`, the store's setting, syncs every commit) and where SQLite writes nothing
//! after it: where the device does not promise that a write leaves the rest of its sector alone
//! (no `SQLITE_IOCAP_POWERSAFE_OVERWRITE`), SQLite pads the commit to a sector and writes part of
//! the last frame after the sync, and this file then gathers nothing. A commit still returns
//! only after its frames are written and synced: what gathering changes is when, before the
//! sync, they reach the kernel.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

use libsqlite3_sys::{
    sqlite3_file, sqlite3_int64, sqlite3_io_methods, sqlite3_vfs, sqlite3_vfs_find, sqlite3_vfs_register,
    SQLITE_IOCAP_POWERSAFE_OVERWRITE, SQLITE_IOERR, SQLITE_OK, SQLITE_OPEN_WAL,
};

/// The name the writer connection opens its database with (`SqliteConnectOptions::vfs`).
pub(crate) const VFS_NAME: &str = "adjutant-wal";
const VFS_NAME_C: &CStr = c"adjutant-wal";

/// Gathered bytes past which they are written before the sync: a commit of 64 posts over as many
/// campaigns gathers about 1.5 MB.
const MAX_GATHERED: usize = 4 << 20;

/// The most bytes handed to the default VFS in one write: its `pwrite` takes the length modulo
/// 128 KiB (`seekAndWriteFd`'s `nBuf &= 0x1ffff`), so a longer write would be cut short.
const WRITE_CHUNK: usize = 120 << 10;

/// The default VFS, as it was when this one was put over it.
struct DefaultVfs(*mut sqlite3_vfs);

// SAFETY: SQLite's registered VFS objects live as long as the process and are shared by every
// thread; this is only a pointer to one.
unsafe impl Send for DefaultVfs {}
unsafe impl Sync for DefaultVfs {}

static DEFAULT: OnceLock<DefaultVfs> = OnceLock::new();

fn default_vfs() -> *mut sqlite3_vfs {
    // Set before this VFS is registered, so before any file is opened through it.
    DEFAULT.get().map_or(std::ptr::null_mut(), |vfs| vfs.0)
}

/// A WAL file opened through this VFS: SQLite's handle to it, the default VFS's file just after
/// it in the same allocation, and what is gathered.
#[repr(C)]
struct WalFile {
    base: sqlite3_file,
    real: *mut sqlite3_file,
    gathered: *mut Gathered,
}

/// Writes that follow on from one another, from `at` on.
struct Gathered {
    /// The file's name, to count its writes by (tests).
    #[cfg(test)]
    name: String,
    at: sqlite3_int64,
    bytes: Vec<u8>,
    /// False where SQLite may write after a sync (see the module's text): each write then goes
    /// straight through.
    gathering: bool,
}

/// The room a [`WalFile`] takes before the default VFS's file, kept to its alignment.
const HEAD: usize = std::mem::size_of::<WalFile>().next_multiple_of(16);

unsafe fn parts<'a>(file: *mut sqlite3_file) -> (*mut sqlite3_file, &'a mut Gathered) {
    let file = file.cast::<WalFile>();
    ((*file).real, &mut *(*file).gathered)
}

unsafe fn methods<'a>(real: *mut sqlite3_file) -> &'a sqlite3_io_methods {
    &*(*real).pMethods
}

/// Writes what is gathered; it is let go whether or not the write succeeds (SQLite's next step
/// on a failed write abandons the transaction, and frames past the last commit are never read).
unsafe fn write_gathered(real: *mut sqlite3_file, gathered: &mut Gathered) -> c_int {
    if gathered.bytes.is_empty() {
        return SQLITE_OK;
    }
    let Some(write) = methods(real).xWrite else { return SQLITE_IOERR };
    let mut rc = SQLITE_OK;
    let mut at = gathered.at;
    for chunk in gathered.bytes.chunks(WRITE_CHUNK) {
        // At most `WRITE_CHUNK` bytes: a chunk's length fits a `c_int`.
        rc = write(real, chunk.as_ptr().cast(), chunk.len() as c_int, at);
        #[cfg(test)]
        tests::count(&gathered.name, 0, 1);
        if rc != SQLITE_OK {
            break;
        }
        at += chunk.len() as sqlite3_int64;
    }
    gathered.bytes.clear();
    if gathered.bytes.capacity() > MAX_GATHERED {
        gathered.bytes.shrink_to(MAX_GATHERED);
    }
    rc
}

unsafe extern "C" fn close(file: *mut sqlite3_file) -> c_int {
    let (real, gathered) = parts(file);
    let written = write_gathered(real, gathered);
    let closed = methods(real).xClose.map_or(SQLITE_OK, |close| close(real));
    drop(Box::from_raw((*file.cast::<WalFile>()).gathered));
    (*file).pMethods = std::ptr::null();
    if written != SQLITE_OK {
        written
    } else {
        closed
    }
}

unsafe extern "C" fn read(file: *mut sqlite3_file, into: *mut c_void, amount: c_int, at: sqlite3_int64) -> c_int {
    let (real, gathered) = parts(file);
    let rc = write_gathered(real, gathered);
    if rc != SQLITE_OK {
        return rc;
    }
    methods(real).xRead.map_or(SQLITE_IOERR, |read| read(real, into, amount, at))
}

unsafe extern "C" fn write(file: *mut sqlite3_file, from: *const c_void, amount: c_int, at: sqlite3_int64) -> c_int {
    let (real, gathered) = parts(file);
    #[cfg(test)]
    tests::count(&gathered.name, 1, u64::from(!gathered.gathering));
    if !gathered.gathering {
        return methods(real).xWrite.map_or(SQLITE_IOERR, |write| write(real, from, amount, at));
    }
    let end = gathered.at + gathered.bytes.len() as sqlite3_int64;
    if !gathered.bytes.is_empty() && at != end {
        let rc = write_gathered(real, gathered);
        if rc != SQLITE_OK {
            return rc;
        }
    }
    if gathered.bytes.is_empty() {
        gathered.at = at;
    }
    let amount = usize::try_from(amount).unwrap_or(0);
    gathered.bytes.extend_from_slice(std::slice::from_raw_parts(from.cast::<u8>(), amount));
    if gathered.bytes.len() >= MAX_GATHERED {
        return write_gathered(real, gathered);
    }
    SQLITE_OK
}

unsafe extern "C" fn truncate(file: *mut sqlite3_file, size: sqlite3_int64) -> c_int {
    let (real, gathered) = parts(file);
    let rc = write_gathered(real, gathered);
    if rc != SQLITE_OK {
        return rc;
    }
    methods(real).xTruncate.map_or(SQLITE_IOERR, |truncate| truncate(real, size))
}

unsafe extern "C" fn sync(file: *mut sqlite3_file, flags: c_int) -> c_int {
    let (real, gathered) = parts(file);
    let rc = write_gathered(real, gathered);
    if rc != SQLITE_OK {
        return rc;
    }
    methods(real).xSync.map_or(SQLITE_IOERR, |sync| sync(real, flags))
}

unsafe extern "C" fn file_size(file: *mut sqlite3_file, size: *mut sqlite3_int64) -> c_int {
    let (real, gathered) = parts(file);
    let rc = write_gathered(real, gathered);
    if rc != SQLITE_OK {
        return rc;
    }
    methods(real).xFileSize.map_or(SQLITE_IOERR, |file_size| file_size(real, size))
}

unsafe extern "C" fn lock(file: *mut sqlite3_file, level: c_int) -> c_int {
    let (real, _) = parts(file);
    methods(real).xLock.map_or(SQLITE_IOERR, |lock| lock(real, level))
}

unsafe extern "C" fn unlock(file: *mut sqlite3_file, level: c_int) -> c_int {
    let (real, _) = parts(file);
    methods(real).xUnlock.map_or(SQLITE_IOERR, |unlock| unlock(real, level))
}

unsafe extern "C" fn check_reserved_lock(file: *mut sqlite3_file, out: *mut c_int) -> c_int {
    let (real, _) = parts(file);
    methods(real).xCheckReservedLock.map_or(SQLITE_IOERR, |check| check(real, out))
}

unsafe extern "C" fn file_control(file: *mut sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    let (real, gathered) = parts(file);
    // Some controls act on the file's contents (`SQLITE_FCNTL_SYNC`, size hints): what is
    // gathered is written first.
    let rc = write_gathered(real, gathered);
    if rc != SQLITE_OK {
        return rc;
    }
    methods(real).xFileControl.map_or(SQLITE_IOERR, |control| control(real, op, arg))
}

unsafe extern "C" fn sector_size(file: *mut sqlite3_file) -> c_int {
    let (real, _) = parts(file);
    methods(real).xSectorSize.map_or(4096, |sector_size| sector_size(real))
}

unsafe extern "C" fn device_characteristics(file: *mut sqlite3_file) -> c_int {
    let (real, _) = parts(file);
    methods(real).xDeviceCharacteristics.map_or(0, |characteristics| characteristics(real))
}

unsafe extern "C" fn shm_map(
    file: *mut sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    let (real, _) = parts(file);
    methods(real).xShmMap.map_or(SQLITE_IOERR, |map| map(real, region, size, extend, out))
}

unsafe extern "C" fn shm_lock(file: *mut sqlite3_file, offset: c_int, n: c_int, flags: c_int) -> c_int {
    let (real, _) = parts(file);
    methods(real).xShmLock.map_or(SQLITE_IOERR, |lock| lock(real, offset, n, flags))
}

unsafe extern "C" fn shm_barrier(file: *mut sqlite3_file) {
    let (real, _) = parts(file);
    if let Some(barrier) = methods(real).xShmBarrier {
        barrier(real);
    }
}

unsafe extern "C" fn shm_unmap(file: *mut sqlite3_file, delete: c_int) -> c_int {
    let (real, _) = parts(file);
    methods(real).xShmUnmap.map_or(SQLITE_OK, |unmap| unmap(real, delete))
}

unsafe extern "C" fn fetch(file: *mut sqlite3_file, at: sqlite3_int64, amount: c_int, out: *mut *mut c_void) -> c_int {
    let (real, gathered) = parts(file);
    let rc = write_gathered(real, gathered);
    if rc != SQLITE_OK {
        return rc;
    }
    match methods(real).xFetch {
        Some(fetch) => fetch(real, at, amount, out),
        // No mapping: SQLite reads instead.
        None => {
            *out = std::ptr::null_mut();
            SQLITE_OK
        }
    }
}

unsafe extern "C" fn unfetch(file: *mut sqlite3_file, at: sqlite3_int64, page: *mut c_void) -> c_int {
    let (real, _) = parts(file);
    methods(real).xUnfetch.map_or(SQLITE_OK, |unfetch| unfetch(real, at, page))
}

static WAL_METHODS: sqlite3_io_methods = sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

/// Opens `name` as the default VFS does; a WAL file is wrapped in a [`WalFile`], with the
/// default VFS's file just after it.
unsafe extern "C" fn open(
    _vfs: *mut sqlite3_vfs,
    name: *const c_char,
    file: *mut sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let default = default_vfs();
    let Some(open) = default.as_ref().and_then(|vfs| vfs.xOpen) else { return SQLITE_IOERR };
    if flags & SQLITE_OPEN_WAL == 0 {
        // The whole allocation is the default VFS's file: SQLite calls its methods directly.
        return open(default, name, file, flags, out_flags);
    }
    let real = file.cast::<u8>().add(HEAD).cast::<sqlite3_file>();
    (*real).pMethods = std::ptr::null();
    let rc = open(default, name, real, flags, out_flags);
    if rc != SQLITE_OK {
        if let Some(close) = (*real).pMethods.as_ref().and_then(|methods| methods.xClose) {
            close(real);
        }
        (*file).pMethods = std::ptr::null();
        return rc;
    }
    let characteristics = methods(real).xDeviceCharacteristics.map_or(0, |characteristics| characteristics(real));
    let gathered = Box::new(Gathered {
        #[cfg(test)]
        name: CStr::from_ptr(name).to_string_lossy().into_owned(),
        at: 0,
        bytes: Vec::new(),
        gathering: characteristics & SQLITE_IOCAP_POWERSAFE_OVERWRITE != 0,
    });
    let wal = file.cast::<WalFile>();
    (*wal).real = real;
    (*wal).gathered = Box::into_raw(gathered);
    (*wal).base.pMethods = &WAL_METHODS;
    SQLITE_OK
}

/// Registers the VFS (not as the default), once per process, after SQLite's configuration
/// ([`crate::malloc::use_mimalloc`], [`crate::page_cache::install`]): finding the default VFS
/// starts SQLite. False where it could not be: the writer then opens through the default VFS.
pub fn install() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        // SAFETY: SQLite's VFS registry is thread-safe; the default VFS lives as long as the
        // process. The VFS registered is leaked: SQLite keeps a pointer to it for as long.
        unsafe {
            let default = sqlite3_vfs_find(std::ptr::null());
            let Some(base) = default.as_ref() else {
                tracing::warn!("SQLite has no default VFS: the writer's WAL writes go one by one");
                return false;
            };
            if DEFAULT.set(DefaultVfs(default)).is_err() {
                return false;
            }
            let mut vfs: sqlite3_vfs = std::ptr::read(base);
            vfs.szOsFile = c_int::try_from(HEAD).unwrap_or(c_int::MAX).saturating_add(base.szOsFile);
            vfs.zName = VFS_NAME_C.as_ptr();
            vfs.pNext = std::ptr::null_mut();
            vfs.xOpen = Some(open);
            let registered = sqlite3_vfs_register(Box::into_raw(Box::new(vfs)), 0);
            if registered != SQLITE_OK {
                tracing::warn!(registered, "the writer's WAL VFS could not be registered");
            }
            registered == SQLITE_OK
        }
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// For each WAL file opened through the VFS in this process: the writes SQLite made, and
    /// those handed to the default VFS.
    static WRITES: Mutex<Option<HashMap<String, (u64, u64)>>> = Mutex::new(None);

    pub(super) fn count(name: &str, asked: u64, made: u64) {
        let mut writes = WRITES.lock().unwrap_or_else(|e| e.into_inner());
        let counts = writes.get_or_insert_with(HashMap::new).entry(name.to_owned()).or_default();
        counts.0 += asked;
        counts.1 += made;
    }

    fn writes_of(wal: &std::path::Path) -> (u64, u64) {
        let writes = WRITES.lock().unwrap_or_else(|e| e.into_inner());
        let wal = std::fs::canonicalize(wal).unwrap();
        writes
            .as_ref()
            .and_then(|writes| {
                writes.iter().find(|(name, _)| std::fs::canonicalize(name).ok().as_ref() == Some(&wal)).map(|(_, c)| *c)
            })
            .unwrap_or_default()
    }

    /// The length of the value stored for key `k` (`hex(zeroblob(n))` is `2n` characters).
    fn length(k: i64) -> i64 {
        1000 + 2 * (k % 350)
    }

    const INSERT: &str = "WITH RECURSIVE n(k) AS (SELECT ?1 UNION ALL SELECT k + 1 FROM n WHERE k < ?2)
         INSERT INTO scratch (k, v) SELECT k, hex(zeroblob(500 + k % 350)) FROM n";

    async fn committed(readers: &sqlx::SqlitePool) -> (i64, i64) {
        sqlx::query_as("SELECT count(*), COALESCE(sum(length(v) + k), 0) FROM scratch")
            .fetch_one(readers)
            .await
            .unwrap()
    }

    /// Commits through a store's writer, each larger than one write to the default VFS may be,
    /// some rolled back, then one far larger than the writer's cache (its pages spilled to the
    /// WAL before the commit, read back by the writer, some written again in the same
    /// transaction): every commit is seen by the readers (the default VFS, connections of their
    /// own) at once and whole, the commits' frames reached the file together, and the database
    /// is whole.
    #[tokio::test]
    async fn the_writer_s_frames_are_written_together_and_read_whole() {
        let dir = std::env::temp_dir().join(format!("adjutant-wal-writes-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let url = format!("sqlite://{}", dir.join("a.db").display());
        let store = crate::SqliteStore::open(&url).await.unwrap();
        let mut conn = store.writer.acquire().await.unwrap();
        sqlx::query("CREATE TABLE scratch (k INTEGER PRIMARY KEY, v TEXT NOT NULL)").execute(&mut *conn).await.unwrap();
        let mut keys = Vec::new();
        let expected = |keys: &[i64], grown: bool| {
            let sum = keys.iter().map(|&k| length(k) + k + i64::from(grown && k % 97 == 0)).sum::<i64>();
            (keys.len() as i64, sum)
        };
        let mut next = 1_i64;
        for round in 0..12 {
            let n = 150 + round * 40;
            sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await.unwrap();
            sqlx::query(INSERT).bind(next).bind(next + n - 1).execute(&mut *conn).await.unwrap();
            if round % 4 == 3 {
                sqlx::query("ROLLBACK").execute(&mut *conn).await.unwrap();
            } else {
                sqlx::query("COMMIT").execute(&mut *conn).await.unwrap();
                keys.extend(next..next + n);
            }
            next += n;
            assert_eq!(committed(&store.readers).await, expected(&keys, false), "round {round}");
        }
        // Commits of 50 to 200 pages: a write of each frame's header and one of its page, and
        // in the file a write for each 120 KiB.
        let (asked, made) = writes_of(&dir.join("a.db-wal"));
        assert!(asked > 2_000, "SQLite wrote {asked} times to the WAL: the workload does not test the layer");
        assert!(made * 20 < asked, "{made} writes reached the file for SQLite's {asked}: not gathered");
        // A transaction of some 6 MB with a cache of 40 pages: SQLite spills pages to the WAL
        // before the commit, reads them back, and writes some of them again.
        sqlx::query("PRAGMA cache_size = 40").execute(&mut *conn).await.unwrap();
        sqlx::query("BEGIN IMMEDIATE").execute(&mut *conn).await.unwrap();
        sqlx::query(INSERT).bind(next).bind(next + 3_999).execute(&mut *conn).await.unwrap();
        sqlx::query("UPDATE scratch SET v = v || 'x' WHERE k % 97 = 0").execute(&mut *conn).await.unwrap();
        let (inside,): (i64,) =
            sqlx::query_as("SELECT count(*) FROM scratch WHERE k >= ?").bind(next).fetch_one(&mut *conn).await.unwrap();
        assert_eq!(inside, 4_000, "the writer reads back the pages it spilled");
        keys.extend(next..next + 4_000);
        let (grown,): (i64,) =
            sqlx::query_as("SELECT count(*) FROM scratch WHERE v LIKE '%x'").fetch_one(&mut *conn).await.unwrap();
        assert_eq!(grown, keys.iter().filter(|&&k| k % 97 == 0).count() as i64);
        sqlx::query("COMMIT").execute(&mut *conn).await.unwrap();
        assert_eq!(committed(&store.readers).await, expected(&keys, true));
        let (check,): (String,) = sqlx::query_as("PRAGMA integrity_check").fetch_one(&mut *conn).await.unwrap();
        assert_eq!(check, "ok");
        drop(conn);
        store.close().await;
        // Read again from the file, by a store of its own.
        let store = crate::SqliteStore::open(&url).await.unwrap();
        assert_eq!(committed(&store.readers).await, expected(&keys, true));
        store.close().await;
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
