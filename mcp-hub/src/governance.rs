//! Governance: the authority (allow-lists and permissions), the host's
//! approval hook, and the one governed path every operation on a server
//! takes (`governed.rs`), with the operations themselves (`calls.rs`,
//! `rounds.rs`, `tasks.rs`).

pub(crate) mod approval;
pub(crate) mod authority;
pub(crate) mod calls;
pub(crate) mod governed;
pub(crate) mod rounds;
pub(crate) mod tasks;
