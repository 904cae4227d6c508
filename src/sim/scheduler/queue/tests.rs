use std::time::Duration;

use tokio::time::Instant;

use super::*;

fn key(name: &str) -> PodKey {
    ("ns".to_owned(), name.to_owned())
}

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn backoff_doubles_from_one_second_to_ten_as_upstream_defaults() {
    let cases = [(1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (40, 10)];
    for (attempts, seconds) in cases {
        assert_eq!(
            backoff(attempts),
            Duration::from_secs(seconds),
            "attempt {attempts}"
        );
    }
}

#[test]
fn a_new_pod_is_tried_after_its_delay() {
    let start = Instant::now();
    let mut queue = SchedulingQueue::new();
    queue.add(&key("a"), 0, None, SECOND, start);
    assert_eq!(queue.pop(start), None, "not before the delay");
    assert_eq!(queue.next_deadline(), Some(start + SECOND));
    assert_eq!(queue.pop(start + SECOND), Some(key("a")));
    assert_eq!(
        queue.pop(start + SECOND),
        None,
        "in flight, not popped twice"
    );
}

#[test]
fn higher_priority_first_then_first_come() {
    let now = Instant::now();
    let mut queue = SchedulingQueue::new();
    queue.add(&key("low-1"), 0, None, Duration::ZERO, now);
    queue.add(&key("high"), 1000, None, Duration::ZERO, now);
    queue.add(&key("low-2"), 0, None, Duration::ZERO, now);
    let order: Vec<_> = std::iter::from_fn(|| queue.pop(now)).collect();
    assert_eq!(order, vec![key("high"), key("low-1"), key("low-2")]);
}

#[test]
fn a_parked_pod_waits_for_a_change_on_its_node_then_for_its_backoff() {
    let start = Instant::now();
    let mut queue = SchedulingQueue::new();
    queue.add(
        &key("pinned"),
        0,
        Some("n1".to_owned()),
        Duration::ZERO,
        start,
    );
    assert_eq!(queue.pop(start), Some(key("pinned")));
    queue.failed(&key("pinned"), false, start);
    let later = start + Duration::from_secs(30);
    assert_eq!(queue.pop(later), None, "parked: no retry without a change");
    queue.node_changed("n2", later);
    assert_eq!(
        queue.pop(later),
        None,
        "a change on another node does not wake it"
    );
    queue.node_changed("n1", later);
    assert_eq!(queue.pop(later), Some(key("pinned")), "back-off long over");
}

#[test]
fn a_change_during_the_backoff_waits_for_the_rest_of_it() {
    let start = Instant::now();
    let mut queue = SchedulingQueue::new();
    queue.add(&key("p"), 0, None, Duration::ZERO, start);
    queue.pop(start);
    queue.failed(&key("p"), false, start);
    queue.node_changed("any", start + Duration::from_millis(200));
    assert_eq!(queue.pop(start + Duration::from_millis(200)), None);
    assert_eq!(queue.pop(start + SECOND), Some(key("p")));
    queue.failed(&key("p"), false, start + SECOND);
    queue.node_changed("any", start + SECOND);
    assert_eq!(
        queue.pop(start + Duration::from_millis(2900)),
        None,
        "second back-off is 2 s"
    );
    assert_eq!(queue.pop(start + Duration::from_secs(3)), Some(key("p")));
}

#[test]
fn a_lost_race_retries_after_the_backoff_without_a_change() {
    let start = Instant::now();
    let mut queue = SchedulingQueue::new();
    queue.add(&key("p"), 0, None, Duration::ZERO, start);
    queue.pop(start);
    queue.failed(&key("p"), true, start);
    assert_eq!(queue.pop(start + SECOND), Some(key("p")));
}

#[test]
fn a_pod_parked_for_five_minutes_is_retried_anyway() {
    let start = Instant::now();
    let mut queue = SchedulingQueue::new();
    queue.add(&key("p"), 0, Some("n1".to_owned()), Duration::ZERO, start);
    queue.pop(start);
    queue.failed(&key("p"), false, start);
    assert_eq!(queue.pop(start + MAX_PARKED - SECOND), None);
    assert_eq!(queue.pop(start + MAX_PARKED), Some(key("p")));
    queue.node_changed("n1", start + MAX_PARKED);
    assert_eq!(
        queue.pop(start + MAX_PARKED),
        None,
        "no longer parked, not woken twice"
    );
}

#[test]
fn a_removed_pod_is_never_popped() {
    let now = Instant::now();
    let mut queue = SchedulingQueue::new();
    queue.add(&key("gone"), 0, Some("n1".to_owned()), Duration::ZERO, now);
    queue.pop(now);
    queue.failed(&key("gone"), false, now);
    queue.remove(&key("gone"));
    queue.everything_changed(now + MAX_BACKOFF);
    assert_eq!(queue.pop(now + MAX_PARKED), None);
    assert!(queue.is_empty());
}
