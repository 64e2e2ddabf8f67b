//! SVG to PNG with resvg, using only the fonts embedded in this crate.
//!
//! A fresh machine may have no system fonts at all, and a picture should not change with the
//! fonts a server happens to have, so the font database holds the embedded DejaVu Sans subsets
//! (see `fonts/README.md`) and nothing else.

use std::sync::Arc;

use resvg::{tiny_skia, usvg};

const SANS: &[u8] = include_bytes!("../fonts/DejaVuSans-subset.ttf");
const SANS_BOLD: &[u8] = include_bytes!("../fonts/DejaVuSans-Bold-subset.ttf");

/// The font family the embedded fonts answer to.
pub const FONT_FAMILY: &str = "DejaVu Sans";

fn options() -> usvg::Options<'static> {
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_font_data(SANS.to_vec());
    fonts.load_font_data(SANS_BOLD.to_vec());
    // Any generic family the SVG might name falls back to the embedded font.
    fonts.set_sans_serif_family(FONT_FAMILY);
    fonts.set_serif_family(FONT_FAMILY);
    fonts.set_monospace_family(FONT_FAMILY);
    fonts.set_cursive_family(FONT_FAMILY);
    fonts.set_fantasy_family(FONT_FAMILY);
    usvg::Options { font_family: FONT_FAMILY.to_string(), fontdb: Arc::new(fonts), ..usvg::Options::default() }
}

/// The longest side of a PNG, in pixels. A scenario may be up to 99 × 99 hexes, which at full
/// size would be a picture of some 200 MB in memory; larger pictures are scaled down to fit.
pub const MAX_SIDE: u32 = 4096;

/// Renders an SVG picture to PNG bytes at its own size (scaled down to [`MAX_SIDE`] if larger).
pub fn map_png(svg: &str) -> Result<Vec<u8>, String> {
    let tree = usvg::Tree::from_str(svg, &options()).map_err(|e| format!("the SVG does not parse: {e}"))?;
    let size = tree.size();
    let longest = size.width().max(size.height());
    let scale = if longest > MAX_SIDE as f32 { MAX_SIDE as f32 / longest } else { 1.0 };
    let width = ((size.width() * scale).ceil() as u32).clamp(1, MAX_SIDE);
    let height = ((size.height() * scale).ceil() as u32).clamp(1, MAX_SIDE);
    let mut pixmap =
        tiny_skia::Pixmap::new(width, height).ok_or_else(|| format!("cannot make a {width}×{height} picture"))?;
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("PNG encoding failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_fonts_load() {
        let o = options();
        assert_eq!(o.fontdb.len(), 2);
        assert!(o.fontdb.faces().all(|f| f.families.iter().any(|(name, _)| name == FONT_FAMILY)));
    }

    #[test]
    fn a_huge_picture_is_scaled_down() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="10000" height="500"><rect width="10000" height="500" fill="red"/></svg>"#;
        let png = map_png(svg).unwrap();
        let pixmap = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((pixmap.width(), pixmap.height()), (4096, 205));
        let p = pixmap.pixel(4094, 200).unwrap();
        assert_eq!((p.red(), p.green(), p.alpha()), (255, 0, 255));
    }

    #[test]
    fn a_broken_svg_is_an_error_not_a_panic() {
        assert!(map_png("<svg").is_err());
    }
}
