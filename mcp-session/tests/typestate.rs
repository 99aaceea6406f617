//! The phases are types: protocol methods do not exist before the handshake.

#[test]
fn protocol_methods_need_a_ready_session() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
