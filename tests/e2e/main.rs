//! Adjutant end to end: real servers over real HTTP on SQLite and on PostgreSQL, the store
//! conformance suite, the reference bot against stand-in forums, and the pages in a browser.
//!
//! One test binary, one module per subject, so the whole server is linked once; what the
//! modules share (a server on a fresh database, the shapes of set-up, the stand-in forum) is the
//! `adjutant_e2e` library in `tests/support`. The tests run side by side on threads of one
//! process: each starts servers, databases, stand-ins and logs of its own, and none changes
//! the process's environment.

mod api;
mod authz;
mod backup;
mod bot;
mod bot_contract;
mod browser;
mod conformance;
mod deadlines;
mod edge;
mod editor;
mod events;
mod fair_shares;
mod feed;
mod limits;
mod live;
mod mail;
mod metrics;
mod phone;
mod play;
mod post_pages;
mod resolver;
mod revocation;
mod scenarios;
mod sealed;
mod sealed_delay;
mod service;
mod short_acw;
mod webhooks;
mod witness;
