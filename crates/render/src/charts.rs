//! The fairness report's pictures, as SVG a moderator reads at a glance: a side's attacker wins
//! against the count its victory numbers promised, and counts against an even spread (result
//! numbers by tens, posts by second of the minute) with the cells that stand out marked.
//!
//! Every word drawn is ours (numbers, side names, captions); the only text a caller passes is
//! escaped all the same.

use std::fmt::Write;

const WIDTH: f64 = 640.0;
const INK: &str = "#222222";
const MUTED: &str = "#5f574c";
const BAR: &str = "#2b4a8b";
const MARKED: &str = "#a8321e";
const BAND: &str = "#d9e4c7";

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn open(height: f64, title: &str, description: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" \
         font-family=\"Georgia, serif\" font-size=\"13\"><title>{}</title><desc>{}</desc>\
         <rect width=\"{WIDTH}\" height=\"{height}\" fill=\"#ffffff\"/>",
        escape(title),
        escape(description)
    )
}

/// A side's attacker wins on a line from 0 to its attacks: the band two standard deviations
/// either side of the expected count shaded, the expected count ticked, the observed count a dot.
pub fn wins_against_expected(side: &str, attacks: usize, observed: usize, expected: f64, deviation: f64) -> String {
    let (left, right, y) = (40.0, WIDTH - 40.0, 70.0);
    let span = attacks.max(1) as f64;
    let x = |count: f64| left + (right - left) * count.clamp(0.0, span) / span;
    let (low, high) = ((expected - 2.0 * deviation).max(0.0), (expected + 2.0 * deviation).min(span));
    let wins = format!("{observed} {} in {attacks} {}", plural(observed, "win"), plural(attacks, "attack"));
    let title = format!("{side}: attacker wins against the victory numbers' promise");
    let description = format!(
        "{wins}; the victory numbers promised {expected:.1}, and counts from {low:.1} to {high:.1} (two standard deviations) are usual."
    );
    let mut svg = open(130.0, &title, &description);
    let _ = write!(
        svg,
        "<text x=\"{left}\" y=\"22\" fill=\"{INK}\" font-weight=\"bold\">{}</text>\
         <rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"24\" fill=\"{BAND}\"/>\
         <line x1=\"{left}\" y1=\"{y}\" x2=\"{right}\" y2=\"{y}\" stroke=\"{MUTED}\" stroke-width=\"1.5\"/>\
         <line x1=\"{ex:.1}\" y1=\"{:.1}\" x2=\"{ex:.1}\" y2=\"{:.1}\" stroke=\"{INK}\" stroke-width=\"2\"/>\
         <circle cx=\"{ox:.1}\" cy=\"{y}\" r=\"7\" fill=\"{MARKED}\"/>\
         <text x=\"{:.1}\" y=\"48\" fill=\"{MARKED}\" text-anchor=\"middle\">observed {observed}</text>\
         <text x=\"{:.1}\" y=\"100\" fill=\"{INK}\" text-anchor=\"middle\">expected {expected:.1}</text>\
         <text x=\"{left}\" y=\"122\" fill=\"{MUTED}\" font-size=\"11\">0</text>\
         <text x=\"{right}\" y=\"122\" fill=\"{MUTED}\" font-size=\"11\" text-anchor=\"end\">{attacks}</text>",
        escape(&format!("{side}: {wins}")),
        x(low),
        y - 12.0,
        (x(high) - x(low)).max(1.0),
        y - 16.0,
        y + 16.0,
        x(observed as f64).clamp(left + 40.0, right - 40.0),
        x(expected).clamp(left + 50.0, right - 50.0),
        ex = x(expected),
        ox = x(observed as f64),
    );
    svg.push_str("</svg>");
    svg
}

fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

/// Counts as bars against an even spread: a dashed line at the count each cell would have,
/// the `marked` cells drawn in red and labelled with their count.
pub fn counts_against_even(title: &str, labels: &[String], counts: &[u64], expected: f64, marked: &[usize]) -> String {
    let (left, right, top, bottom) = (40.0, WIDTH - 10.0, 34.0, 170.0);
    let highest = counts.iter().copied().max().unwrap_or(0).max(expected.ceil() as u64).max(1) as f64;
    let slot = (right - left) / counts.len().max(1) as f64;
    let height = |count: f64| (bottom - top) * count / highest;
    let total: u64 = counts.iter().sum();
    let description = format!(
        "{total} in all, {expected:.1} to a cell if evenly spread; {}",
        if marked.is_empty() {
            "no cell marked".to_owned()
        } else {
            let cells: Vec<String> = marked.iter().map(|&i| format!("{} ({})", labels[i], counts[i])).collect();
            format!("marked: {}", cells.join(", "))
        }
    );
    let mut svg = open(200.0, title, &description);
    let _ = write!(svg, "<text x=\"{left}\" y=\"20\" fill=\"{INK}\" font-weight=\"bold\">{}</text>", escape(title));
    for (i, &count) in counts.iter().enumerate() {
        let h = height(count as f64);
        let colour = if marked.contains(&i) { MARKED } else { BAR };
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{colour}\"/>",
            left + slot * i as f64 + slot * 0.1,
            bottom - h,
            slot * 0.8
        );
        if marked.contains(&i) {
            let _ = write!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{MARKED}\" text-anchor=\"middle\" font-size=\"11\">{count}</text>",
                left + slot * (i as f64 + 0.5),
                bottom - h - 3.0
            );
        }
    }
    // Labels along the bottom, as many as fit.
    let every = (labels.len() / 12).max(1);
    for (i, label) in labels.iter().enumerate().filter(|(i, _)| i % every == 0) {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{MUTED}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
            left + slot * (i as f64 + 0.5),
            bottom + 16.0,
            escape(label)
        );
    }
    let even = bottom - height(expected);
    let _ = write!(
        svg,
        "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"{MUTED}\"/>\
         <line x1=\"{left}\" y1=\"{even:.1}\" x2=\"{right}\" y2=\"{even:.1}\" stroke=\"{INK}\" stroke-dasharray=\"6 4\"/>\
         <text x=\"{right}\" y=\"{:.1}\" fill=\"{INK}\" text-anchor=\"end\" font-size=\"11\">even spread: {expected:.1} each</text>\
         <text x=\"4\" y=\"{:.1}\" fill=\"{MUTED}\" font-size=\"11\">{}</text>",
        (even - 4.0).max(30.0),
        top + 10.0,
        highest as u64
    );
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wins_picture_places_the_dot_and_the_band_and_says_it_in_words() {
        let svg = wins_against_expected("Union", 20, 15, 10.0, 2.0);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert!(
            svg.contains("<desc>15 wins in 20 attacks; the victory numbers promised 10.0, and counts from 6.0 to 14.0")
        );
        // 15 of 20 on a line from 40 to 600: the dot at 460.
        assert!(svg.contains("<circle cx=\"460.0\""), "{svg}");
        // The band from 6 to 14: x 208 to 432.
        assert!(svg.contains("<rect x=\"208.0\" y=\"58.0\" width=\"224.0\""), "{svg}");
    }

    #[test]
    fn marked_cells_are_red_and_counted_and_titles_are_escaped() {
        let labels: Vec<String> = (0..6).map(|i| i.to_string()).collect();
        let svg = counts_against_even("<b>by \"mod\" 6</b>", &labels, &[1, 1, 9, 1, 1, 1], 2.33, &[2]);
        assert!(svg.contains("&lt;b&gt;by &quot;mod&quot; 6&lt;/b&gt;") && !svg.contains("<b>"));
        assert_eq!(svg.matches(MARKED).count(), 2, "one red bar and its count: {svg}");
        assert!(svg.contains(">9</text>"));
        assert!(svg.contains("marked: 2 (9)"));
    }
}
