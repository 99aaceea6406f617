use mcp_session::{Session, Spawned};

async fn too_early(session: Session<Spawned>) {
    let _ = session.list_tools().await;
}

fn main() {}
