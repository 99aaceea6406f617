//! The intake rules with simulated time.

use super::*;

const LOG: &str = "notifications/message";
const PROGRESS: &str = "notifications/progress";

#[test]
fn a_budget_admits_its_burst_then_its_rate_and_buckets_are_separate() {
    let t0 = Instant::now();
    let mut intake = Intake::new(NotificationIntake::new(
        NotificationBudget::new(10, 3),
        false,
    ));
    let admitted = |intake: &mut Intake, at: Instant, method: &str, n: usize| {
        (0..n)
            .filter(|_| intake.admit(at, method) == Admit::Parse)
            .count()
    };
    assert_eq!(admitted(&mut intake, t0, LOG, 10), 3);
    // Progress has its own bucket.
    assert_eq!(admitted(&mut intake, t0, PROGRESS, 10), 3);
    // Other notifications are never budgeted.
    assert_eq!(
        admitted(&mut intake, t0, "notifications/tools/list_changed", 50),
        50
    );
    // A tenth of a second refills one.
    let t1 = t0 + Duration::from_millis(100);
    assert_eq!(admitted(&mut intake, t1, LOG, 10), 1);
    // A long quiet refills no more than the burst.
    let t2 = t1 + Duration::from_secs(60);
    assert_eq!(admitted(&mut intake, t2, LOG, 10), 3);
}

#[test]
fn unwanted_log_messages_are_discarded_and_a_zero_rate_never_refills() {
    let t0 = Instant::now();
    let mut intake = Intake::new(NotificationIntake::new(NotificationBudget::new(0, 2), true));
    assert_eq!(intake.admit(t0, LOG), Admit::Discard);
    assert_eq!(intake.admit(t0, PROGRESS), Admit::Parse);
    assert_eq!(intake.admit(t0, PROGRESS), Admit::Parse);
    let later = t0 + Duration::from_secs(3600);
    assert_eq!(intake.admit(later, PROGRESS), Admit::OverBudget);
}

#[test]
fn drops_are_reported_at_most_once_a_second() {
    let t0 = Instant::now();
    let mut intake = Intake::new(NotificationIntake::default());
    assert!(intake.report_due(t0));
    assert!(!intake.report_due(t0 + Duration::from_millis(999)));
    assert!(intake.report_due(t0 + Duration::from_secs(1)));
}
