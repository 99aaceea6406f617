//! The servers: each one's cell (session, snapshots, status), its
//! supervisor (start, restart with back-off), and what bounds its calls
//! (concurrency slots, retries, the process's open-file limit).

pub(crate) mod backoff;
pub(crate) mod fdlimit;
pub(crate) mod lifecycle;
pub(crate) mod limits;
pub(crate) mod retry;
pub(crate) mod server;
