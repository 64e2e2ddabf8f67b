//! The map of the shipped scenario mid-game: the scripted campaign
//! (`crates/rules/tests/data/short_acw_script.json`) replayed through `apply`.

mod common;

use adjutant_render::{last_turn, map_png, map_svg, MapEntry};
use adjutant_rules::short_acw::Outcome;
use common::replay;

fn entries(outcomes: &[Outcome]) -> Vec<MapEntry> {
    outcomes.iter().map(MapEntry::from).collect()
}

/// Mid-game: turn 2, the Union has fought the worked example's battle at 0604 and the Rebels
/// have retreated.
const MID_GAME: usize = 17;

fn mid_game_svg() -> String {
    let (scenario, state, outcomes) = replay(MID_GAME);
    map_svg(&scenario, &state, last_turn(&entries(&outcomes)))
}

#[test]
fn the_mid_game_svg_shows_the_map_units_moves_and_the_battle() {
    let (scenario, state, outcomes) = replay(MID_GAME);
    assert_eq!(state.turn, 2);
    let svg = map_svg(&scenario, &state, last_turn(&entries(&outcomes)));
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    // Title with turn and phase.
    assert!(svg.contains(">A Short ACW Campaign</text>"));
    assert!(svg.contains(">Turn 2 of 12 · Union player turn · combat phase</text>"), "{svg}");
    // The seed publishes no map: a line under the title says this one is a stand-in.
    assert!(svg.contains(r##"y="56.0" font-size="13.0" font-weight="bold" fill="#a3262a" text-anchor="start">Stand-in map: the seed publishes no map</text>"##), "{svg}");
    let mut real = scenario.clone();
    real.note = "A map drawn from the battlefield survey.".into();
    let labelled = map_svg(&real, &state, last_turn(&entries(&outcomes)));
    assert!(!labelled.contains("Stand-in map"), "a real map carries no stand-in line");
    assert!(labelled.contains(r#"y="62.0" font-size="15.0""#));
    // Every hex, with its number: 16 × 12.
    assert_eq!(svg.matches("<polygon points=").count() - 3 - 1, 16 * 12, "hexes + 3 legend swatches + 1 battle star");
    assert!(svg.contains(">0101</text>") && svg.contains(">1612</text>"));
    // 46 river hexsides, 4 bridges, the cities' letters.
    assert_eq!(svg.matches(r##"stroke="#3b7dc4" stroke-width="6""##).count(), 46 + 1, "46 rivers + the legend");
    assert_eq!(svg.matches("transform=\"translate(").count(), 4);
    for letter in ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O'] {
        assert!(svg.contains(&format!(">{letter}</text>")), "city {letter}");
    }
    // Units: the Union's 12th Inf took a casualty (3 factors left) and the Rebels' 52nd is down to 1.
    assert!(svg.contains(">12th Inf</text>"));
    assert!(svg.contains(">52nd Inf</text>"));
    // The battle at 0604 with victory 56 and result 21, and the moves as arrows.
    assert!(svg.contains(">V56 R21</text>"));
    assert!(svg.contains("marker-end=\"url(#arrow-union)\""));
    assert!(svg.contains("stroke-dasharray=\"7 5\" marker-end=\"url(#arrow-confederate)\""), "the Rebel retreat");
    // The same input gives the same bytes.
    assert_eq!(svg, mid_game_svg());
}

#[test]
fn the_map_draws_before_deployment_and_after_the_end() {
    for posts in [0, 24] {
        let (scenario, state, outcomes) = replay(posts);
        let svg = map_svg(&scenario, &state, last_turn(&entries(&outcomes)));
        let png = map_png(&svg).expect("renders");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
        if posts == 24 {
            assert!(svg.contains("Game over on turn 3: Major Union Victory"), "{svg}");
        } else {
            assert!(svg.contains(">Deployment: both sides place their units</text>"));
        }
    }
}

#[test]
fn names_from_players_are_escaped_and_the_svg_still_parses() {
    let (scenario, mut state, outcomes) = replay(MID_GAME);
    let unit = state.units.iter_mut().find(|u| u.id == "us-14th-inf").expect("unit");
    unit.name = "<b>\"Tom's\" & co".to_string();
    let svg = map_svg(&scenario, &state, last_turn(&entries(&outcomes)));
    // 15 characters: set smaller, not cut, then escaped.
    assert!(svg.contains(">&lt;b&gt;&quot;Tom&#39;s&quot; &amp; co</text>"), "names are escaped whole: {svg}");
    assert!(!svg.contains("<b>"));
    map_png(&svg).expect("still well-formed");
}

fn png_size(png: &[u8]) -> (u32, u32) {
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (be(&png[16..20]), be(&png[20..24]))
}

#[test]
fn the_mid_game_png_renders_with_the_embedded_fonts() {
    let svg = mid_game_svg();
    let png = map_png(&svg).expect("renders");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "PNG signature");
    assert_eq!(&png[12..16], b"IHDR");
    let (w, h) = png_size(&png);
    assert_eq!((w, h), (1508, 1060));
    // Not blank: decode the pixels again through resvg's own PNG reader and look at the spread.
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).expect("decodes");
    let pixels = pixmap.pixels();
    let distinct: std::collections::BTreeSet<[u8; 4]> =
        pixels.iter().map(|p| [p.red(), p.green(), p.blue(), p.alpha()]).collect();
    assert!(distinct.len() > 50, "only {} colours", distinct.len());
    let mean = pixels.iter().map(|p| f64::from(p.red())).sum::<f64>() / pixels.len() as f64;
    let var = pixels.iter().map(|p| (f64::from(p.red()) - mean).powi(2)).sum::<f64>() / pixels.len() as f64;
    assert!(var > 100.0, "variance {var}");
    // Text is drawn: the title's area has dark pixels (the font was found without system fonts).
    let dark_in_title = (10..40u32)
        .flat_map(|y| (24..300u32).map(move |x| (x, y)))
        .filter(|&(x, y)| pixmap.pixel(x, y).is_some_and(|p| p.red() < 80 && p.green() < 80))
        .count();
    assert!(dark_in_title > 200, "{dark_in_title} dark pixels in the title");
    // Only ever written under the target dir.
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("map-mid-game.png");
    std::fs::write(&out, &png).expect("write under the target dir");
}

/// Regenerates `docs/map-example.svg` and `.png` (run by hand:
/// `cargo test -p adjutant-render --test map -- --ignored`).
#[test]
#[ignore]
fn regenerate_the_docs_example() {
    let svg = mid_game_svg();
    let png = map_png(&svg).expect("renders");
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    std::fs::write(docs.join("map-example.svg"), &svg).expect("write svg");
    std::fs::write(docs.join("map-example.png"), &png).expect("write png");
}
