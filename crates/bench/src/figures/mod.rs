//! The figures the bench measures, each beside its ceiling. Figure 4 (peak memory) is read of the
//! servers of figure 1 ([`crate::child::Process::peak_kib`]).

pub mod backup;
pub mod calculator;
pub mod followers;
pub mod history;
pub mod posts;
pub mod profile;
pub mod scale;
