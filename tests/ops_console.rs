//! End to end: two consoles (the console's app state, its watch layer and the
//! effects task) on one embedded cluster. Keys go through the confirmation,
//! writes through the one executor; what one console does, the other sees.

mod common;
mod ops_support;

use std::time::Duration;

use ops_support::{Env, NEW_IMAGE, OLD_IMAGE, all_ready, placements, small};
use rollcall::cluster::watch::{self, Target, WatchHandle};
use rollcall::ops::journal::Journal;
use rollcall::ops::write::Executor;
use rollcall::tui::app::App;
use rollcall::tui::effect::Effect;
use rollcall::tui::keymap::Action;
use rollcall::tui::ops::OpsConsole;
use rollcall::tui::ops_link::{self, OpsLink};
use rollcall::tui::view_model::ConsoleInfo;

/// One console: app state, its watches and its effects task.
struct Console {
    app: App,
    watch: WatchHandle,
    link: OpsLink,
}

impl Console {
    async fn open(env: &Env, user: &str) -> Console {
        let target = Target {
            namespace: "kube-system".into(),
            name: "node-agent".into(),
        };
        let watch = watch::spawn(env.client.clone(), Some("kube-system".into()), Some(target));
        let executor = Executor::new(
            env.client.clone(),
            Journal::new(env.journal.clone()),
            false,
            "embedded".into(),
            user.into(),
        );
        let link = ops_link::start(
            env.client.clone(),
            executor,
            Some("kube-system".into()),
            std::sync::Arc::clone(&watch.shared),
        );
        let info = ConsoleInfo {
            context: "embedded".into(),
            server: String::new(),
            note: None,
        };
        let mut app = App::new(
            info,
            rollcall::model::Target::from_key("kube-system/node-agent"),
            (120, 40),
        );
        app.ops = OpsConsole::new(false, user.into());
        let mut console = Console { app, watch, link };
        console
            .settle(|c| {
                c.app
                    .view_model(&c.watch.shared.lock(), jiff::Timestamp::now())
                    .header
                    .is_some()
            })
            .await;
        console
    }

    /// Presses a key (as its action) and sends any writes it confirms.
    fn press(&mut self, action: Action) {
        let effect = self
            .app
            .update(action, &self.watch.shared.lock(), jiff::Timestamp::now());
        if let Some(Effect::Writes(writes)) = effect {
            for write in writes {
                self.link.writes.send(write).expect("effects task running");
            }
        }
    }

    /// Applies cache changes and write results until `done` holds (at most 30 s).
    async fn settle(&mut self, done: impl Fn(&Console) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            self.app
                .refresh(&mut self.watch.shared.lock(), jiff::Timestamp::now());
            while let Ok(event) = self.link.events.try_recv() {
                self.app.ops_on_event(event, jiff::Timestamp::now());
            }
            if done(self) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "console never settled: {:?}",
                self.app.ui.message
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn header_state(&self) -> String {
        let view = self
            .app
            .view_model(&self.watch.shared.lock(), jiff::Timestamp::now());
        view.header.map(|h| h.state.text).unwrap_or_default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_console_advances_the_other_pauses_and_both_see_it() {
    if !common::tool_available("kubectl") {
        return;
    }
    let env = small().await;
    let before = placements(&env.pods_of("node-agent").await);
    let mut ana = Console::open(&env, "ana@one").await;
    let mut bo = Console::open(&env, "bo@two").await;

    ana.app.ui.selected_node = Some("general-02".into());
    ana.press(Action::AdvanceSelected);
    assert!(ana.app.ops.modal.is_some(), "advance asks first");
    ana.press(Action::Confirm);
    ana.settle(|c| c.app.ops.pending.is_empty()).await;
    let pods = env
        .wait_pods("node-agent", "general-02 on the new image", |pods| {
            pods.len() == 5
                && all_ready(pods)
                && placements(pods)
                    .iter()
                    .any(|p| p.0 == "general-02" && p.1 == NEW_IMAGE)
        })
        .await;
    let moved: Vec<_> = placements(&pods)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert_eq!(moved.len(), 1, "exactly one pod replaced: {moved:?}");
    assert!(
        placements(&pods)
            .iter()
            .filter(|p| p.0 != "general-02")
            .all(|p| p.1 == OLD_IMAGE)
    );

    bo.press(Action::TogglePause);
    // The reason field first (left empty: optional), then the confirmation.
    bo.press(Action::Confirm);
    bo.press(Action::Confirm);
    bo.settle(|c| c.app.ops.pending.is_empty()).await;
    ana.settle(|c| c.header_state().starts_with("paused by bo@two"))
        .await;

    ana.press(Action::ToggleAuto);
    assert!(ana.app.ops.modal.is_none(), "auto refused while paused");
    let message = ana
        .app
        .ui
        .message
        .clone()
        .map(|m| m.text)
        .unwrap_or_default();
    assert!(message.contains("paused by bo@two"), "{message}");

    let actions: Vec<(String, String)> = env
        .journal_lines()
        .iter()
        .map(|l| {
            (
                l["action"].as_str().unwrap_or_default().to_owned(),
                l["user"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("advance".to_owned(), "ana@one".to_owned()),
            ("pause".to_owned(), "bo@two".to_owned())
        ]
    );
}
