//! The Short ACW map as an SVG picture: terrain, rivers, bridges, rail, cities with their
//! controller, the units' stacks, and the last turn's moves and battles.
//!
//! Geometry follows the scenario's hex numbering exactly (`short_acw::hex`): hexes are
//! flat-topped and stand in vertical columns counted from 1 at the left, rows from 1 at the top,
//! and every EVEN column sits half a hex lower than the odd columns beside it. So the centre of
//! hex (c, r) is at x = R + (c − 1)·1.5R, y = (√3/2)R + (r − 1)·√3R (+ (√3/2)R in even columns),
//! and two hexes the rules call adjacent are exactly the hexes drawn touching.
//!
//! Output is deterministic: everything is iterated in a fixed order and every coordinate is
//! written with one decimal, so the same scenario, state and outcomes give the same bytes.

use std::collections::BTreeMap;

/// √3, for hex geometry (pixels, not result numbers: those are integer arithmetic in `rules`).
const SQRT_3: f64 = 1.732_050_807_568_877_2;

use adjutant_rules::outcome::{Outcome, OutcomeData};
use adjutant_rules::short_acw::scenario::{BridgeKind, Hexside, Terrain};
use adjutant_rules::short_acw::state::UnitState;
use adjutant_rules::short_acw::{GameState, Hex, Phase, Scenario};
use adjutant_rules::Side;

/// Circumradius of a hex, in pixels.
const R: f64 = 44.0;
/// The map's top-left corner in the picture.
const ORIGIN: (f64, f64) = (24.0, 84.0);
/// Width of the side panel (status, legend, cities, last turn).
const PANEL_WIDTH: f64 = 390.0;
/// DejaVu Sans is embedded for the PNG (`png.rs`); browsers showing the SVG fall back to
/// whatever sans-serif they have.
const FONT: &str = "DejaVu Sans, Verdana, Arial, sans-serif";

// Colours: Union blue and Confederate red, as on the period's maps.
const UNION: &str = "#24589e";
const CONFEDERATE: &str = "#a3262a";
const PAPER: &str = "#f4efe1";
const CLEAR: &str = "#ebe5c9";
const WOODS: &str = "#a6c58a";
const TREE: &str = "#5f8f45";
const CITY: &str = "#dcc49b";
const GRID: &str = "#b5ad8c";
const RIVER: &str = "#3b7dc4";
const ROAD_BRIDGE: &str = "#8a5a2b";
const RAIL: &str = "#2b2b2b";
const BATTLE: &str = "#f2a900";
const INK: &str = "#222222";

fn side_colour(side: Side) -> &'static str {
    match side {
        Side::Union => UNION,
        Side::Confederate => CONFEDERATE,
    }
}

/// A number as SVG writes it: one decimal, never "-0.0".
fn n(v: f64) -> String {
    let text = format!("{v:.1}");
    if text == "-0.0" {
        "0.0".to_string()
    } else {
        text
    }
}

/// Text made safe for SVG (unit names come from players).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The centre of a hex in the picture.
pub fn centre(hex: Hex) -> (f64, f64) {
    let height = R * SQRT_3;
    let c = f64::from(hex.col);
    let r = f64::from(hex.row);
    let x = ORIGIN.0 + R + (c - 1.0) * 1.5 * R;
    let mut y = ORIGIN.1 + height / 2.0 + (r - 1.0) * height;
    // "every even column sits half a hex lower than the odd columns beside it" (written as
    // "not odd", the way `Hex::neighbours` tests it)
    if hex.col % 2 != 1 {
        y += height / 2.0;
    }
    (x, y)
}

fn hex_points(x: f64, y: f64, radius: f64) -> String {
    (0..6)
        .map(|i| {
            let a = std::f64::consts::PI / 3.0 * f64::from(i);
            format!("{},{}", n(x + radius * a.cos()), n(y + radius * a.sin()))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The two ends of the edge two adjacent hexes share: the edge crosses the line between their
/// centres at its middle, at right angles, and is R long.
fn hexside_ends(side: Hexside) -> ((f64, f64), (f64, f64)) {
    let (ax, ay) = centre(side.0);
    let (bx, by) = centre(side.1);
    let (mx, my) = ((ax + bx) / 2.0, (ay + by) / 2.0);
    let (dx, dy) = (bx - ax, by - ay);
    let len = dx.hypot(dy).max(f64::EPSILON);
    let (px, py) = (-dy / len * R / 2.0, dx / len * R / 2.0);
    ((mx - px, my - py), (mx + px, my + py))
}

/// Word-wraps `text` to lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![];
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

struct Svg {
    out: String,
}

impl Svg {
    fn push(&mut self, text: impl AsRef<str>) {
        self.out.push_str(text.as_ref());
        self.out.push('\n');
    }

    #[allow(clippy::too_many_arguments)]
    fn text(&mut self, x: f64, y: f64, size: f64, weight: &str, fill: &str, anchor: &str, text: &str) {
        self.push(format!(
            r#"<text x="{}" y="{}" font-size="{}" font-weight="{weight}" fill="{fill}" text-anchor="{anchor}">{}</text>"#,
            n(x),
            n(y),
            n(size),
            escape(text)
        ));
    }
}

/// A move to draw: a unit's path from hex to hex.
struct Track {
    side: Side,
    hexes: Vec<Hex>,
    retreat: bool,
}

/// A battle to mark.
struct BattleMark {
    number: u32,
    target: Hex,
    /// "victory/result", or None while the battle waits for the cavalry option.
    numbers: Option<(u32, u32)>,
    winner: Option<Side>,
}

/// An outcome on the map: its headline, listed in the panel, and its data where the map draws
/// it (`None` for a voided post's outcomes and for Adjutant's own records: listed, not drawn).
#[derive(Debug, Clone, PartialEq)]
pub struct MapEntry {
    pub headline: String,
    pub data: Option<OutcomeData>,
}

impl From<&Outcome> for MapEntry {
    fn from(o: &Outcome) -> Self {
        MapEntry { headline: o.headline.clone(), data: Some(o.data.clone()) }
    }
}

/// Reads the moves and battles out of the outcomes (other kinds are not drawn).
fn tracks_and_battles(state: &GameState, recent: &[MapEntry]) -> (Vec<Track>, Vec<BattleMark>) {
    let unit_side = |id: &str| state.unit(id).map(|u| u.side);
    let mut tracks = vec![];
    let mut battles: Vec<BattleMark> = vec![];
    let mut targets: BTreeMap<u32, Hex> = BTreeMap::new();
    let mark = |battles: &mut Vec<BattleMark>, number: u32, target: Hex, numbers, winner| {
        battles.retain(|b| b.number != number);
        battles.push(BattleMark { number, target, numbers, winner });
    };
    for data in recent.iter().filter_map(|e| e.data.as_ref()) {
        match data {
            OutcomeData::Moved(m) => {
                if let Some(side) = unit_side(&m.unit) {
                    let mut hexes = vec![m.from];
                    hexes.extend(&m.path);
                    tracks.push(Track { side, hexes, retreat: false });
                }
            }
            OutcomeData::Retreat(r) => {
                for m in &r.moves {
                    let mut hexes = vec![m.from];
                    hexes.extend(&m.path);
                    tracks.push(Track { side: r.side, hexes, retreat: true });
                }
            }
            OutcomeData::CavalryOption(c) if c.retreat => {
                let side = c.cavalry.first().and_then(|id| unit_side(id));
                if let (Some(side), Some(from), Some(to)) = (side, targets.get(&c.battle), c.hex) {
                    tracks.push(Track { side, hexes: vec![*from, to], retreat: true });
                }
            }
            OutcomeData::AttackDeclared(a) => {
                targets.insert(a.battle, a.target);
                mark(&mut battles, a.battle, a.target, None, None);
            }
            OutcomeData::Battle(b) => {
                targets.insert(b.battle, b.target);
                let numbers = Some((b.numbers.victory, b.numbers.result));
                mark(&mut battles, b.battle, b.target, numbers, Some(b.winner_side));
            }
            _ => {}
        }
    }
    (tracks, battles)
}

/// The outcomes of the last two player turns (the one in progress and the one before it) out of
/// a campaign's outcomes in order: what `map_svg` shows as "the last turn".
pub fn last_turn(outcomes: &[MapEntry]) -> &[MapEntry] {
    let starts: Vec<usize> = outcomes
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.data, Some(OutcomeData::TurnBegins(_))))
        .map(|(i, _)| i)
        .collect();
    match starts.len() {
        0 => outcomes,
        1 => &outcomes[starts[0]..],
        k => &outcomes[starts[k - 2]..],
    }
}

fn phase_text(state: &GameState) -> String {
    match state.phase {
        Phase::Deployment => "Deployment".to_string(),
        Phase::Over => "Game over".to_string(),
        phase => {
            let side = state.side_to_act.map(|s| s.name()).unwrap_or("—");
            let phase = match phase {
                Phase::Reinforcement => "reinforcement",
                Phase::Movement => "movement",
                _ => "combat",
            };
            format!("{side} player turn · {phase} phase")
        }
    }
}

/// The Short ACW map as SVG. `recent` are the outcomes whose moves (arrows) and battles
/// (markers) are drawn, usually [`last_turn`] of the campaign's outcomes; kinds other than
/// `moved`, `retreat`, `cavalry_option`, `attack_declared` and `battle` are ignored.
pub fn map_svg(scenario: &Scenario, state: &GameState, recent: &[MapEntry]) -> String {
    let height = R * SQRT_3;
    let map_w = ORIGIN.0 + R * (1.5 * f64::from(scenario.columns) + 0.5) + 16.0;
    let map_h = ORIGIN.1 + height * (f64::from(scenario.rows) + 0.5) + 16.0;
    let width = map_w + PANEL_WIDTH;
    let total_h = map_h.max(1060.0);
    let mut svg = Svg { out: String::new() };
    svg.push(format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}">"#,
        w = n(width),
        h = n(total_h)
    ));
    svg.push("<defs>");
    for (name, colour) in [("union", UNION), ("confederate", CONFEDERATE)] {
        svg.push(format!(
            r#"<marker id="arrow-{name}" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="4" markerHeight="4" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>"#
        ));
    }
    svg.push("</defs>");
    svg.push(format!(r#"<rect x="0" y="0" width="{}" height="{}" fill="{PAPER}"/>"#, n(width), n(total_h)));

    // Title.
    let subtitle = match (&state.result, state.phase) {
        (Some(result), _) => format!("Game over on turn {}: {}", result.turn, result.condition),
        (None, Phase::Deployment) => "Deployment: both sides place their units".to_string(),
        (None, _) => format!("Turn {} of {} · {}", state.turn, scenario.turns, phase_text(state)),
    };
    svg.text(ORIGIN.0, 36.0, 24.0, "bold", INK, "start", &scenario.title);
    // A stand-in map says so on a line of its own under the title.
    let subtitle_y = match scenario.stand_in_map() {
        Some(label) => {
            svg.text(ORIGIN.0, 56.0, 13.0, "bold", CONFEDERATE, "start", label);
            76.0
        }
        None => 62.0,
    };
    svg.text(ORIGIN.0, subtitle_y, 15.0, "normal", INK, "start", &subtitle);

    // Terrain.
    svg.push(r#"<g id="terrain">"#);
    for col in 1..=scenario.columns {
        for row in 1..=scenario.rows {
            let hex = Hex::new(col, row);
            let (x, y) = centre(hex);
            let fill = match scenario.terrain(hex) {
                Terrain::Clear => CLEAR,
                Terrain::Woods => WOODS,
                Terrain::City => CITY,
            };
            svg.push(format!(
                r#"<polygon points="{}" fill="{fill}" stroke="{GRID}" stroke-width="1"/>"#,
                hex_points(x, y, R)
            ));
            if scenario.terrain(hex) == Terrain::Woods {
                // A few trees, always in the same places.
                for (dx, dy) in [(-20.0, -8.0), (-8.0, 14.0), (14.0, 12.0), (22.0, -10.0), (-24.0, 16.0), (2.0, -14.0)]
                {
                    svg.push(format!(
                        r#"<circle cx="{}" cy="{}" r="4.5" fill="{TREE}" opacity="0.8"/>"#,
                        n(x + dx),
                        n(y + dy)
                    ));
                }
            }
            svg.push(format!(
                r##"<text x="{}" y="{}" font-size="8" fill="#7b745a" text-anchor="middle">{hex}</text>"##,
                // Cities wear their letter at the top right: the number steps aside.
                n(if scenario.city_at(hex).is_some() { x - 9.0 } else { x }),
                n(y - height / 2.0 + 10.0)
            ));
        }
    }
    svg.push("</g>");

    // Rail lines: track from hex centre to hex centre, with ties.
    svg.push(r#"<g id="rail">"#);
    for link in &scenario.rail_links {
        let ((ax, ay), (bx, by)) = (centre(link.0), centre(link.1));
        let d = format!("M{},{} L{},{}", n(ax), n(ay), n(bx), n(by));
        svg.push(format!(r#"<path d="{d}" stroke="{RAIL}" stroke-width="2.5" fill="none"/>"#));
        svg.push(format!(r#"<path d="{d}" stroke="{RAIL}" stroke-width="8" stroke-dasharray="1.5 6" fill="none"/>"#));
    }
    svg.push("</g>");

    // Rivers along hexsides, then bridges across them.
    svg.push(r#"<g id="rivers">"#);
    for side in scenario.rivers.keys() {
        let ((ax, ay), (bx, by)) = hexside_ends(*side);
        svg.push(format!(
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{RIVER}" stroke-width="6" stroke-linecap="round"/>"#,
            n(ax),
            n(ay),
            n(bx),
            n(by)
        ));
    }
    for (side, kind) in &scenario.bridges {
        let (ax, ay) = centre(side.0);
        let (bx, by) = centre(side.1);
        let (mx, my) = ((ax + bx) / 2.0, (ay + by) / 2.0);
        let angle = (by - ay).atan2(bx - ax).to_degrees();
        let (fill, stroke) = match kind {
            BridgeKind::Road => (ROAD_BRIDGE, "#4a2f14"),
            BridgeKind::Rail => (RAIL, "#000000"),
        };
        svg.push(format!(
            r#"<rect x="-13" y="-5" width="26" height="10" rx="1.5" fill="{fill}" stroke="{stroke}" stroke-width="1" transform="translate({},{}) rotate({})"/>"#,
            n(mx),
            n(my),
            n(angle)
        ));
    }
    svg.push("</g>");

    // Cities: the letter in a disc of the controller's colour.
    svg.push(r#"<g id="cities">"#);
    for city in &scenario.cities {
        let (x, y) = centre(city.hex);
        let controller = state.control.get(&city.hex).copied();
        let (fill, text) = match controller {
            Some(side) => (side_colour(side), "#ffffff"),
            None => ("#ffffff", INK),
        };
        let (cx, cy) = (x + 20.0, y - 25.0);
        svg.push(format!(
            r#"<circle cx="{}" cy="{}" r="9.5" fill="{fill}" stroke="{INK}" stroke-width="1.2"/>"#,
            n(cx),
            n(cy)
        ));
        svg.text(cx, cy + 4.5, 12.5, "bold", text, "middle", &city.letter.to_string());
        if state.units_in(city.hex).next().is_none() {
            svg.text(x, y + 22.0, 8.5, "normal", INK, "middle", &city.name);
        }
    }
    svg.push("</g>");

    // The last turn's moves, under the counters.
    let (tracks, battles) = tracks_and_battles(state, recent);
    svg.push(r#"<g id="moves">"#);
    for t in &tracks {
        if t.hexes.len() < 2 {
            continue;
        }
        let mut points: Vec<(f64, f64)> = t.hexes.iter().map(|h| centre(*h)).collect();
        // Stop short of the last centre so the head shows beside the counter.
        let k = points.len();
        let (px, py) = points[k - 2];
        let (lx, ly) = points[k - 1];
        let len = (lx - px).hypot(ly - py).max(f64::EPSILON);
        let cut = 24.0_f64.min(len / 2.0);
        points[k - 1] = (lx - (lx - px) / len * cut, ly - (ly - py) / len * cut);
        let d: Vec<String> = points
            .iter()
            .enumerate()
            .map(|(i, (x, y))| format!("{}{},{}", if i == 0 { "M" } else { "L" }, n(*x), n(*y)))
            .collect();
        let dash = if t.retreat { r#" stroke-dasharray="7 5""# } else { "" };
        svg.push(format!(
            r#"<path d="{}" stroke="{}" stroke-width="3.5" fill="none" stroke-linejoin="round" opacity="0.85"{dash} marker-end="url(#arrow-{})"/>"#,
            d.join(" "),
            side_colour(t.side),
            t.side.key()
        ));
        let (sx, sy) = points[0];
        svg.push(format!(
            r#"<circle cx="{}" cy="{}" r="4" fill="{}" opacity="0.85"/>"#,
            n(sx),
            n(sy),
            side_colour(t.side)
        ));
    }
    svg.push("</g>");

    // Units: one counter per hex, listing the stack.
    svg.push(r#"<g id="units">"#);
    let mut stacks: BTreeMap<Hex, Vec<&UnitState>> = BTreeMap::new();
    for u in state.units.iter().filter(|u| u.is_on_map()) {
        if let Some(hex) = u.hex {
            stacks.entry(hex).or_default().push(u);
        }
    }
    for (hex, units) in &stacks {
        draw_stack(&mut svg, *hex, units);
    }
    svg.push("</g>");

    // Battles: a star on the target with its number.
    svg.push(r#"<g id="battles">"#);
    for b in &battles {
        let (x, y) = centre(b.target);
        let (cx, cy) = (x - 24.0, y - 20.0);
        let star: Vec<String> = (0..16)
            .map(|i| {
                let a = std::f64::consts::PI / 8.0 * f64::from(i) - std::f64::consts::FRAC_PI_2;
                let r = if i % 2 == 0 { 15.0 } else { 8.0 };
                format!("{},{}", n(cx + r * a.cos()), n(cy + r * a.sin()))
            })
            .collect();
        svg.push(format!(
            r#"<polygon points="{}" fill="{BATTLE}" stroke="{INK}" stroke-width="1.2"/>"#,
            star.join(" ")
        ));
        svg.text(cx, cy + 4.0, 10.5, "bold", INK, "middle", &b.number.to_string());
        let label = match b.numbers {
            Some((v, r)) => format!("V{v} R{r}"),
            None => "pending".to_string(),
        };
        let colour = b.winner.map_or(INK, side_colour);
        svg.push(format!(
            r##"<rect x="{}" y="{}" width="50" height="13" rx="2" fill="#ffffff" stroke="{colour}" stroke-width="1.2" opacity="0.95"/>"##,
            n(x - 25.0),
            n(y + 25.0)
        ));
        svg.text(x, y + 35.0, 9.0, "bold", colour, "middle", &label);
    }
    svg.push("</g>");

    draw_panel(&mut svg, scenario, state, recent, map_w);
    svg.push("</svg>");
    svg.out
}

/// Lines a counter shows before it summarises the rest.
const COUNTER_LINES: usize = 4;

fn draw_stack(svg: &mut Svg, hex: Hex, units: &[&UnitState]) {
    let Some(side) = units.first().map(|u| u.side) else { return };
    let (x, y) = centre(hex);
    let mut lines: Vec<(String, String)> = units
        .iter()
        .map(|u| (u.name.clone(), format!("{}{}", u.factors, if u.fortified { "f" } else { "" })))
        .collect();
    if lines.len() > COUNTER_LINES {
        let rest = &units[COUNTER_LINES - 1..];
        let factors: u32 = rest.iter().map(|u| u.factors).sum();
        lines.truncate(COUNTER_LINES - 1);
        lines.push((format!("+{} more", rest.len()), factors.to_string()));
    }
    let line_h = 9.5;
    let w = 64.0;
    let h = line_h * lines.len() as f64 + 5.0;
    let top = y + 6.0 - h / 2.0;
    svg.push(format!(
        r#"<rect x="{}" y="{}" width="{}" height="{}" rx="3" fill="{}" stroke="{INK}" stroke-width="1"/>"#,
        n(x - w / 2.0),
        n(top),
        n(w),
        n(h),
        side_colour(side)
    ));
    for (i, (name, factors)) in lines.iter().enumerate() {
        let base = top + 2.0 + line_h * (i as f64 + 1.0) - 1.5;
        // A long name (a new unit's, "Mosby Rangers") is set smaller rather than cut off.
        let length = name.chars().count().max(1);
        let size = if length > 11 { (8.0 * 11.0 / length as f64).max(5.0) } else { 8.0 };
        let name: String = name.chars().take(17).collect();
        svg.text(x - w / 2.0 + 3.0, base, size, "normal", "#ffffff", "start", &name);
        svg.text(x + w / 2.0 - 3.0, base, 8.0, "bold", "#ffffff", "end", factors);
    }
}

fn draw_panel(svg: &mut Svg, scenario: &Scenario, state: &GameState, recent: &[MapEntry], left: f64) {
    let x = left + 8.0;
    let mut y = ORIGIN.1 + 6.0;
    let heading = |svg: &mut Svg, y: &mut f64, text: &str| {
        svg.text(x, *y, 14.0, "bold", INK, "start", text);
        *y += 18.0;
    };
    let line = |svg: &mut Svg, y: &mut f64, text: &str, fill: &str| {
        for l in wrap(text, 60) {
            svg.text(x + 4.0, *y, 10.5, "normal", fill, "start", &l);
            *y += 14.0;
        }
    };

    heading(svg, &mut y, "Waiting for");
    if state.awaiting.is_empty() {
        line(svg, &mut y, "nothing: the game is over", INK);
    }
    for a in &state.awaiting {
        line(svg, &mut y, &format!("{}: {}", a.side, a.detail), side_colour(a.side));
    }
    let points = state.reinforcement_points;
    line(
        svg,
        &mut y,
        &format!("Reinforcement points stored: Union {} · Rebel {}", points.union, points.confederate),
        INK,
    );
    y += 8.0;

    heading(svg, &mut y, "Legend");
    let swatch = |svg: &mut Svg, y: &mut f64, fill: &str, label: &str| {
        svg.push(format!(
            r#"<polygon points="{}" fill="{fill}" stroke="{GRID}" stroke-width="1"/>"#,
            hex_points(x + 12.0, *y - 4.0, 9.0)
        ));
        svg.text(x + 28.0, *y, 10.5, "normal", INK, "start", label);
        *y += 20.0;
    };
    swatch(svg, &mut y, CLEAR, "Clear");
    swatch(svg, &mut y, WOODS, "Woods (defence ×2)");
    swatch(svg, &mut y, CITY, "City");
    let item = |svg: &mut Svg, y: &mut f64, symbol: &dyn Fn(f64) -> String, label: &str| {
        svg.push(symbol(*y));
        svg.text(x + 28.0, *y, 10.5, "normal", INK, "start", label);
        *y += 20.0;
    };
    let ly = |y: f64| n(y - 4.0);
    item(
        svg,
        &mut y,
        &|y: f64| {
            format!(
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{RIVER}" stroke-width="6" stroke-linecap="round"/>"#,
                n(x + 2.0),
                ly(y),
                n(x + 22.0),
                ly(y)
            )
        },
        "River along hexsides (defence ×2)",
    );
    for (fill, label) in [(ROAD_BRIDGE, "Road bridge"), (RAIL, "Rail bridge")] {
        item(
            svg,
            &mut y,
            &|y: f64| {
                format!(r#"<rect x="{}" y="{}" width="20" height="9" rx="1.5" fill="{fill}"/>"#, n(x + 2.0), n(y - 8.5))
            },
            label,
        );
    }
    item(
        svg,
        &mut y,
        &|y: f64| {
            format!(
                r#"<path d="M{x1},{y1} L{x2},{y1}" stroke="{RAIL}" stroke-width="2.5"/><path d="M{x1},{y1} L{x2},{y1}" stroke="{RAIL}" stroke-width="8" stroke-dasharray="1.5 6"/>"#,
                x1 = n(x + 2.0),
                x2 = n(x + 22.0),
                y1 = ly(y)
            )
        },
        "Rail line",
    );
    for (side, fill) in [(Side::Union, UNION), (Side::Confederate, CONFEDERATE)] {
        item(
            svg,
            &mut y,
            &|y: f64| {
                format!(
                    r#"<rect x="{}" y="{}" width="20" height="12" rx="2" fill="{fill}" stroke="{INK}"/>"#,
                    n(x + 2.0),
                    n(y - 10.0)
                )
            },
            &format!("{side} units: name, factors (f = fortified)"),
        );
    }
    item(
        svg,
        &mut y,
        &|y: f64| {
            format!(
                r#"<circle cx="{}" cy="{}" r="7" fill="{UNION}" stroke="{INK}"/><circle cx="{}" cy="{}" r="7" fill="{CONFEDERATE}" stroke="{INK}"/>"#,
                n(x + 6.0),
                ly(y),
                n(x + 19.0),
                ly(y)
            )
        },
        "City held by the Union / the Rebels (white: nobody)",
    );
    for (side, dash, label) in [
        (Side::Union, "", "Move in the last turn, in the side's colour"),
        (Side::Confederate, r#" stroke-dasharray="7 5""#, "Retreat (dashed)"),
    ] {
        item(
            svg,
            &mut y,
            &|y: f64| {
                format!(
                    r#"<path d="M{},{} L{},{}" stroke="{}" stroke-width="3.5"{dash} marker-end="url(#arrow-{})"/>"#,
                    n(x + 2.0),
                    ly(y),
                    n(x + 20.0),
                    ly(y),
                    side_colour(side),
                    side.key()
                )
            },
            label,
        );
    }
    item(
        svg,
        &mut y,
        &|y: f64| format!(r#"<circle cx="{}" cy="{}" r="8" fill="{BATTLE}" stroke="{INK}"/>"#, n(x + 12.0), ly(y)),
        "Battle (number; V victory, R result number)",
    );
    y += 6.0;

    heading(svg, &mut y, "Cities");
    for city in &scenario.cities {
        let holder = state.control.get(&city.hex).copied();
        let holder_text = holder.map_or("nobody", |s| s.name());
        let fill = holder.map_or(INK, side_colour);
        svg.text(x + 4.0, y, 10.5, "bold", fill, "start", &city.letter.to_string());
        svg.text(x + 20.0, y, 10.5, "normal", INK, "start", &format!("{} ({})", city.name, city.hex));
        svg.text(x + PANEL_WIDTH - 30.0, y, 10.5, "normal", fill, "end", holder_text);
        y += 14.0;
    }
    y += 8.0;

    heading(svg, &mut y, "Last turn");
    let shown: Vec<&MapEntry> = recent
        .iter()
        .filter(|o| !matches!(o.data, Some(OutcomeData::Deployed(_) | OutcomeData::TurnEnded(_))))
        .collect();
    if shown.is_empty() {
        line(svg, &mut y, "nothing yet", INK);
    }
    // The newest entries matter most: when they do not all fit, the oldest give way.
    let bottom = (ORIGIN.1 + R * SQRT_3 * (f64::from(scenario.rows) + 0.5)).max(1040.0);
    let room = ((bottom - y) / 14.0).floor().max(2.0) as usize;
    let entries: Vec<Vec<String>> = shown.iter().map(|o| wrap(&o.headline, 58)).collect();
    let mut used = 0;
    let mut first = entries.len();
    while first > 0 && used + entries[first - 1].len() < room {
        used += entries[first - 1].len();
        first -= 1;
    }
    if first > 0 {
        line(svg, &mut y, &format!("… {} earlier", first), INK);
    }
    for entry in &entries[first..] {
        for (i, l) in entry.iter().enumerate() {
            let text = if i == 0 { format!("• {l}") } else { l.clone() };
            svg.text(x + if i == 0 { 4.0 } else { 14.0 }, y, 10.5, "normal", INK, "start", &text);
            y += 14.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjutant_rules::outcome::TurnBegins;

    fn h(s: &str) -> Hex {
        s.parse().unwrap()
    }

    #[test]
    fn hexes_the_rules_call_adjacent_touch_on_the_picture() {
        // Centres of adjacent hexes are exactly √3·R apart; the next ring is farther.
        let gap = R * SQRT_3;
        for c in 1..=16u8 {
            for r in 1..=12u8 {
                let a = Hex::new(c, r);
                for b in a.neighbours() {
                    let ((ax, ay), (bx, by)) = (centre(a), centre(b));
                    let d = (ax - bx).hypot(ay - by);
                    assert!((d - gap).abs() < 1e-9, "{a}–{b}: {d}");
                }
                for far in [Hex::new(c, r + 2), Hex::new(c + 2, r)] {
                    let ((ax, ay), (bx, by)) = (centre(a), centre(far));
                    assert!((ax - bx).hypot(ay - by) > gap * 1.5);
                }
            }
        }
        // Even columns sit half a hex lower: 0604 is below 0504 and above 0505.
        let (_, y504) = centre(h("0504"));
        let (_, y604) = centre(h("0604"));
        let (_, y505) = centre(h("0505"));
        assert!(y504 < y604 && y604 < y505);
        assert!((y604 - y504 - gap / 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_hexside_is_the_edge_both_hexes_share() {
        let side = Hexside::between(h("0506"), h("0606"));
        let ((ax, ay), (bx, by)) = hexside_ends(side);
        // Both ends are corners of both hexes: R from each centre.
        for hex in [side.0, side.1] {
            let (cx, cy) = centre(hex);
            for (px, py) in [(ax, ay), (bx, by)] {
                assert!(((px - cx).hypot(py - cy) - R).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn text_is_escaped_and_wrapped() {
        assert_eq!(escape(r#"<b>"Tom's" & co"#), "&lt;b&gt;&quot;Tom&#39;s&quot; &amp; co");
        assert_eq!(wrap("one two three four", 9), vec!["one two", "three", "four"]);
        assert_eq!(n(-0.04), "0.0");
        assert_eq!(n(12.345), "12.3");
    }

    #[test]
    fn last_turn_starts_at_the_turn_before_this_one() {
        let begins = || {
            let data =
                TurnBegins { turn: 1, side: Side::Union, points_gained: None, points_stored: None, deadline: None };
            MapEntry { headline: String::new(), data: Some(data.into()) }
        };
        let other = || MapEntry { headline: String::new(), data: None };
        let all = vec![other(), begins(), other(), begins(), other(), other()];
        assert_eq!(last_turn(&all).len(), 5);
        let all = vec![other(), begins(), other(), begins(), begins(), other()];
        assert_eq!(last_turn(&all).len(), 3);
        assert_eq!(last_turn(&all[..1]).len(), 1);
    }

    #[test]
    fn a_long_unit_name_is_set_smaller_not_cut_off() {
        let unit = |name: &str| UnitState {
            id: "cs-new-1".into(),
            name: name.into(),
            side: adjutant_rules::Side::Confederate,
            arm: adjutant_rules::short_acw::Arm::Cavalry,
            factors: 2,
            hex: Some(h("0504")),
            eliminated: false,
            fortified: false,
            moved: false,
            attacked: false,
            reinforced: false,
            must_fight: false,
        };
        let (long, short) = (unit("Mosby Rangers"), unit("52nd Inf"));
        let mut svg = Svg { out: String::new() };
        draw_stack(&mut svg, h("0504"), &[&long, &short]);
        assert!(svg.out.contains(">Mosby Rangers</text>"), "{}", svg.out);
        assert!(svg
            .out
            .contains(r##"font-size="6.8" font-weight="normal" fill="#ffffff" text-anchor="start">Mosby Rangers<"##));
        assert!(svg
            .out
            .contains(r##"font-size="8.0" font-weight="normal" fill="#ffffff" text-anchor="start">52nd Inf<"##));
    }
}
