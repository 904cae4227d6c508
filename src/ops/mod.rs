//! Rollout operations (advance, auto-advance, pause, resume, rollback) shared by
//! the console's keys and the headless commands.
