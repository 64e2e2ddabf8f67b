//! The managed Short ACW campaign, through `apply`, as the server replays it.

mod common;
mod deadlines;
mod deployment;
mod examples;
mod properties;
mod refusals;
mod scenario_files;
mod script;
mod stored_outcomes;
mod victory;
mod words;
mod worked_example;
