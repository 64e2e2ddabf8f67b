//! Lists each dialect's migrations (`migrations/sqlite`, `migrations/postgres`) for
//! `src/migrations.rs`, which builds them into the binary with `include_str!`: a file added to
//! a folder is in the next build, as with sqlx's `migrate!`, without its compile-time macros.
use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut out = String::new();
    for (name, folder) in [("SQLITE", "sqlite"), ("POSTGRES", "postgres")] {
        let dir = root.join(folder);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.expect("a migration folder entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "sql"))
            .collect();
        files.sort();
        writeln!(out, "const {name}_FILES: &[(&str, &str)] = &[").unwrap();
        for path in files {
            let file = path.file_name().and_then(|n| n.to_str()).expect("a UTF-8 file name");
            let path = path.canonicalize().expect("a migration's path");
            writeln!(out, "    ({file:?}, include_str!({:?})),", path.display().to_string()).unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    let target = Path::new(&std::env::var("OUT_DIR").expect("OUT_DIR")).join("migrations.rs");
    std::fs::write(&target, out).unwrap_or_else(|e| panic!("{}: {e}", target.display()));
}
