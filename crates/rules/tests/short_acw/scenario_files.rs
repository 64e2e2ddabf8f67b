//! Scenario files: the shipped one loads, broken ones fail naming file, place and problem.

use adjutant_rules::short_acw::scenario::{VictoryGoal, SHORT_ACW_TOML};
use adjutant_rules::short_acw::{Hex, Scenario};
use adjutant_rules::Side;

fn h(s: &str) -> Hex {
    s.parse().unwrap()
}

#[test]
fn the_shipped_scenario_loads() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/scenarios/short-acw.toml")).unwrap();
    let s = Scenario::from_toml("short-acw.toml", &text).unwrap();
    assert_eq!(text, SHORT_ACW_TOML);
    assert_eq!(s.turns, 12);
    assert_eq!(s.first_side, Side::Union);
    let letters: String = {
        let mut l: Vec<char> = s.cities.iter().map(|c| c.letter).collect();
        l.sort();
        l.into_iter().collect()
    };
    assert_eq!(letters, "ABCDEFGHIJKLMNO");
    // The seed's orders of battle: 13 Union units (38 factors), 10 Rebel units (31 factors).
    let union: Vec<_> = s.units.iter().filter(|u| u.side == Side::Union).collect();
    let rebel: Vec<_> = s.units.iter().filter(|u| u.side == Side::Confederate).collect();
    assert_eq!(union.len(), 13);
    assert_eq!(union.iter().map(|u| u.factors).sum::<u32>(), 38);
    assert_eq!(rebel.len(), 10);
    assert_eq!(rebel.iter().map(|u| u.factors).sum::<u32>(), 31);
    assert_eq!(s.deployment[&Side::Union], ['A', 'B', 'C']);
    assert_eq!(s.deployment[&Side::Confederate], ['E', 'I', 'H', 'G']);
    // Two rivers, each with a road and a rail bridge.
    assert_eq!(s.rivers.values().collect::<std::collections::BTreeSet<_>>().len(), 2);
    assert_eq!(s.bridges.len(), 4);
    // Rail reaches the map edges.
    assert!(s.rail_hexes.iter().any(|r| r.col == 1));
    assert!(s.rail_hexes.iter().any(|r| r.col == s.columns));
    assert!(s.rail_hexes.iter().any(|r| r.row == s.rows));
    assert_eq!(s.victory[0].goal, VictoryGoal::Capture { city: 'M', by_turn: Some(7) });
    assert_eq!(s.victory[3].goal, VictoryGoal::HoldOut);
    // Zones: within 1 hex of A, B or C.
    let zone = s.deployment_zone(Side::Union);
    assert!(zone.contains(&h("0206")) && zone.contains(&h("0207")) && !zone.contains(&h("0208")));
    assert!(s.river_between(h("0504"), h("0604")));
}

fn broken(replace: &str, with: &str) -> Vec<String> {
    assert!(SHORT_ACW_TOML.contains(replace), "{replace}");
    let text = SHORT_ACW_TOML.replacen(replace, with, 1);
    Scenario::from_toml("broken.toml", &text).unwrap_err().into_iter().map(|e| e.to_string()).collect()
}

#[test]
fn broken_scenarios_name_file_place_and_problem() {
    let cases: [(&str, &str, &str); 10] = [
        (
            "woods = [\n    \"0208\"",
            "woods = [\n    \"1713\"",
            "broken.toml:map.woods[0]: unknown hex 1713: the map is 16 columns by 12 rows",
        ),
        (
            "id = \"us-13th-inf\"",
            "id = \"us-14th-inf\"",
            "broken.toml:units.union[1]: duplicate unit id `us-14th-inf`",
        ),
        (
            "letter = \"B\"",
            "letter = \"A\"",
            "broken.toml:map.cities[1]: city letter A is used twice",
        ),
        (
            "\"0501/0601\", \"0502/0601\"",
            "\"0501/0603\", \"0502/0601\"",
            "broken.toml:map.rivers[0].hexsides[0]: 0501 and 0603 are not adjacent, so they share no hexside",
        ),
        (
            "hexside = \"0509/0609\"",
            "hexside = \"0409/0509\"",
            "broken.toml:map.bridges[1]: hexside 0409/0509 has no river, so it cannot have a bridge",
        ),
        (
            "\"0106\", \"0206\", \"0306\"",
            "\"0106\", \"0306\", \"0206\"",
            "broken.toml:map.rail[0].hexes[1]: rail line Orange and Alexandria: 0306 does not touch the hex before it, 0106",
        ),
        (
            "union = [\"A\", \"B\", \"C\"]",
            "union = [\"A\", \"B\", \"Z\"]",
            "broken.toml:deployment.union[2]: there is no city Z on the map",
        ),
        (
            "by_turn = 7",
            "by_turn = 13",
            "broken.toml:victory[0].by_turn: turn 13 is not a turn of this 12-turn campaign",
        ),
        (
            "arm = \"cavalry\"",
            "arm = \"dragoons\"",
            "broken.toml:",
        ),
        (
            "columns = 16",
            "columns = 16\nsize = 3",
            "broken.toml:",
        ),
    ];
    for (replace, with, expect) in cases {
        let errors = broken(replace, with);
        assert!(errors.iter().any(|e| e.starts_with(expect)), "{with}: {errors:?}");
    }
    // TOML type and syntax errors carry line:column.
    let e = broken("arm = \"cavalry\"", "arm = \"dragoons\"");
    let line = SHORT_ACW_TOML.lines().position(|l| l.starts_with("arm = \"cavalry\"")).unwrap() + 1;
    assert!(e[0].starts_with(&format!("broken.toml:{line}:7: unknown variant `dragoons`")), "{e:?}");
    let e = broken("columns = 16", "columns = 16\nsize = 3");
    assert!(e[0].contains("unknown field `size`"), "{e:?}");
    let e = broken("turns = 12 ", "turns = = 12 ");
    assert!(e[0].starts_with("broken.toml:"), "{e:?}");
    assert!(e[0].split(':').nth(1).unwrap().parse::<u32>().is_ok(), "{e:?}");
}

#[test]
fn several_problems_are_reported_at_once() {
    let text = SHORT_ACW_TOML.replacen("id = \"us-13th-inf\"", "id = \"us-14th-inf\"", 1).replacen(
        "letter = \"B\"",
        "letter = \"A\"",
        1,
    );
    let errors = Scenario::from_toml("two.toml", &text).unwrap_err();
    assert_eq!(errors.len(), 3, "{errors:?}");
    let places: Vec<&str> = errors.iter().map(|e| e.place.as_str()).collect();
    // City B is gone, so the Union's deployment city B is unknown too.
    assert_eq!(places, ["map.cities[1]", "deployment.union[1]", "units.union[1]"]);
}

#[test]
fn an_upload_is_held_to_tighter_limits_than_a_file_and_each_problem_names_its_rule() {
    use adjutant_rules::short_acw::scenario::rule;
    use adjutant_rules::short_acw::Limits;
    let text = SHORT_ACW_TOML
        .replacen("columns = 16", "columns = 60", 1)
        .replacen("factors = 4", "factors = 0", 1)
        .replacen("union = [\"A\", \"B\", \"C\"]", "union = []", 1);
    // A file keeps the limits it always had: a wide map, a unit of no factors, a side that
    // deploys nowhere.
    assert!(Scenario::checked("wide.toml", &text, Limits::FILE).is_ok());
    let errors = Scenario::checked("wide.toml", &text, Limits::UPLOAD).unwrap_err();
    let found: Vec<(&str, &str)> = errors.iter().map(|e| (e.place.as_str(), e.rule)).collect();
    assert_eq!(
        found,
        [
            ("map", rule::MAP_SIZE),
            ("deployment.union", rule::DEPLOYMENT_NO_CITY),
            ("units.union[0].factors", rule::FACTORS),
        ],
        "{errors:?}"
    );
    assert!(Scenario::checked("short-acw.toml", SHORT_ACW_TOML, Limits::UPLOAD).is_ok());
}
