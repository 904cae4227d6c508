//! The matrix's `A`: the form over the clusters shown, the request it makes,
//! the run's line, and the halt by `A`, Ctrl-C or `q`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::FleetRequest;
use super::run::FleetAction;
use super::tests::{draw, fleet, press, state, text};

#[test]
fn the_auto_form_over_the_clusters_shown_at_80x24() {
    let mut state = state(fleet());
    press(&mut state, &[KeyCode::Char('A')]);
    let screen = text(&draw(&state, (80, 24)));
    insta::assert_snapshot!(screen);
}

#[test]
fn y_asks_for_one_run_over_the_filtered_clusters_with_the_forms_settings() {
    let mut state = state(fleet());
    let asked = press(
        &mut state,
        &[
            KeyCode::Char('/'),
            KeyCode::Char('p'),
            KeyCode::Char('r'),
            KeyCode::Char('o'),
            KeyCode::Char('d'),
            KeyCode::Enter,
            KeyCode::Char('A'),
            KeyCode::Right,
            KeyCode::Char('y'),
        ],
    );
    let [
        FleetRequest::Auto {
            daemonset,
            contexts,
            policy,
        },
    ] = asked.as_slice()
    else {
        panic!("one run asked for: {asked:?}");
    };
    assert_eq!(daemonset, "kube-system/agent");
    let mut shown = contexts.clone();
    shown.sort();
    assert_eq!(
        shown,
        ["prod-eu-west-1", "prod-us-east-1"],
        "prod-ap-south-1 is unreachable: left out"
    );
    assert_eq!(policy.batch, 2, "→ raised the batch from 1");
    assert!(state.form.is_none());
    let screen = text(&draw(&state, (80, 24)));
    assert!(
        screen.contains("fleet run: starting on 2 cluster(s)… · A or Ctrl-C halt"),
        "{screen}"
    );
}

/// As `fleet plan` refuses a member whose template differs from the
/// reference, `A` leaves a drifted cluster out, and one it could not read,
/// and says so in its form.
#[test]
fn clusters_with_drift_or_not_read_are_left_out_and_named() {
    let mut state = state(fleet());
    press(&mut state, &[KeyCode::Char('A')]);
    let screen = text(&draw(&state, (80, 24)));
    assert!(
        screen.contains("left out: prod-ap-south-1 (unreachable), staging-canary (template"),
        "{screen}"
    );
    let asked = press(&mut state, &[KeyCode::Char('y')]);
    let [FleetRequest::Auto { contexts, .. }] = asked.as_slice() else {
        panic!("one run asked for: {asked:?}");
    };
    let mut contexts = contexts.clone();
    contexts.sort();
    assert_eq!(contexts, ["dev", "prod-eu-west-1", "prod-us-east-1"]);
}

/// `y` rolls the clusters the form named, not what the matrix shows by
/// then: a cluster that stops answering while the form is open stays in the
/// run (which holds on it) rather than silently leaving it.
#[test]
fn y_rolls_the_clusters_the_form_named_even_if_the_matrix_changed() {
    let mut state = state(fleet());
    press(&mut state, &[KeyCode::Char('A')]);
    if let super::run::Mode::Matrix(matrix) = &mut state.mode {
        matrix.set_link(
            0,
            crate::fleet::live::row::Link::Failed {
                state: crate::fleet::connection::ConnectionState::Unreachable,
                message: "connection refused".into(),
            },
        );
    }
    let asked = press(&mut state, &[KeyCode::Char('y')]);
    let [FleetRequest::Auto { contexts, .. }] = asked.as_slice() else {
        panic!("one run asked for: {asked:?}");
    };
    let mut contexts = contexts.clone();
    contexts.sort();
    assert_eq!(contexts, ["dev", "prod-eu-west-1", "prod-us-east-1"]);
}

#[test]
fn esc_closes_the_form_and_asks_nothing() {
    let mut state = state(fleet());
    let asked = press(&mut state, &[KeyCode::Char('A'), KeyCode::Esc]);
    assert!(asked.is_empty());
    assert!(state.form.is_none());
}

#[test]
fn a_ctrl_c_and_q_halt_a_running_run_before_anything_else() {
    let ctrl_c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    let mut state = state(fleet());
    press(&mut state, &[KeyCode::Char('A'), KeyCode::Char('y')]);
    assert_eq!(state.action_for(&ctrl_c), Some(FleetAction::Halt));
    assert_eq!(
        press(&mut state, &[KeyCode::Char('A')]),
        [FleetRequest::HaltAuto]
    );
    let screen = text(&draw(&state, (80, 24)));
    assert!(screen.contains("fleet run halting"), "{screen}");
    state.on_run(
        "stopped: … ; every touched cluster is paused".to_owned(),
        true,
    );
    assert_eq!(
        state.action_for(&ctrl_c),
        Some(FleetAction::Quit),
        "ended: Ctrl-C quits"
    );
    let screen = text(&draw(&state, (80, 24)));
    assert!(screen.contains("fleet run ended: stopped:"), "{screen}");

    let mut state = super::tests::state(fleet());
    press(&mut state, &[KeyCode::Char('A'), KeyCode::Char('y')]);
    let quit = state.update(FleetAction::Quit);
    assert_eq!(quit, Ok(Some(FleetRequest::HaltAuto)), "q halts first");
    assert_eq!(state.update(FleetAction::Quit), Err(()), "q again leaves");
}
