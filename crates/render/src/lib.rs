//! Pictures and forum text for Adjutant: pure functions, no IO.
//!
//! - [`map_svg`] draws a Short ACW campaign's map, and [`map_png`] rasterises it with resvg
//!   using fonts embedded in the crate;
//! - [`outcome_text`] writes an outcome as BBCode and Markdown, and [`forum_text`] adds the
//!   witness and marker lines (`adjutant_forum`) that the forum bot and `adjutant verify` read.

pub mod charts;
mod doc;
pub mod escape;
pub mod forum;
pub mod map;
pub mod png;
pub mod text;

pub use forum::forum_text;
pub use map::{last_turn, map_svg, MapEntry};
pub use png::map_png;
pub use text::{outcome_text, outcome_working, ForumText, Stored, Working};
