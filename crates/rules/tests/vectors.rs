//! The published test vectors in `docs/vectors/` are what the rules give now. Regenerate them
//! with `./scripts/vectors.sh` (this test with `ADJUTANT_WRITE_VECTORS=1`) after a rules change.

use std::path::PathBuf;

use adjutant_rules::vectors;

fn folder() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/vectors")
}

fn check(name: &str, generated: String) {
    let path = folder().join(name);
    if std::env::var("ADJUTANT_WRITE_VECTORS").as_deref() == Ok("1") {
        std::fs::create_dir_all(folder()).unwrap();
        std::fs::write(&path, &generated).unwrap();
    }
    let published = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        published == generated,
        "docs/vectors/{name} is not what the rules give now: run ./scripts/vectors.sh and commit the result"
    );
}

#[test]
fn result_numbers_are_current() {
    let text = vectors::result_numbers_csv();
    assert_eq!(text.lines().count(), 1 + 86_400);
    // The seed's worked example: 9:51:45 gives 21.
    assert!(text.contains("\n9:51:45,95145,21,"));
    check("result-numbers.csv", text);
}

#[test]
fn reinforcement_rolls_are_current() {
    let text = vectors::reinforcement_csv();
    assert_eq!(text.lines().count(), 1 + 1000);
    // 0 mod 6 = 0: gains even with no city held, as the seed's text says.
    assert!(text.contains("\n0,0,1,1,1,1,1,1,1\n"));
    assert!(text.contains("\n5,5,0,0,0,0,0,1,1\n"));
    check("reinforcement.csv", text);
}

#[test]
fn combat_cases_are_current() {
    let text = vectors::combat_json();
    let cases: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() > 50);
    // The seed's worked example: 15 factors against 6 in woods at 9:51:45.
    assert!(cases.iter().any(|c| c["time"] == "9:51:45"
        && c["battle"]["attacker"] == 15
        && c["battle"]["defender"] == 6
        && c["battle"]["defence"] == "woods"));
    check("combat.json", text);
}
