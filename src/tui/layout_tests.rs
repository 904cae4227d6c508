//! The console at every size: rendered-frame snapshots of each screen and
//! dialog at 80×24, 120×40 and 200×60, in a paused rollout with a long pause
//! reason, long node names and long label values; plus the layout rules the
//! snapshots illustrate, asserted directly (state line in full, `? help` last,
//! cut values marked, node names keep their tail) and the theme rules (no
//! content in colours that vanish on dark, light or Solarized themes; no green
//! on a failing row; Enter never confirms).

use kube::runtime::watcher;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;

use super::app::App;
use super::fixtures::{event, list, now};
use super::keymap::Action;
use super::ops::OpsConsole;
use super::view_model::ConsoleInfo;
use super::widgets::theme::UNREADABLE;
use crate::cluster::cache::{Cache, WatchUpdate};
use crate::engine::fixtures::{daemonset, node, pod, revision_of};
use crate::ops::state::annotations::{CANARIES, MODE, PAUSE_REASON, PAUSED_BY};

const SIZES: [(u16, u16); 3] = [(80, 24), (120, 40), (200, 60)];

/// The pause reason auto-advance writes, long on purpose.
const REASON: &str = "auto-advance stopped: node general-node-eu-west-1-042 CrashLoopBackOff (container main restarted 4 times during the 30s soak of batch 2)";

const KUBECONFIG: &str = "/tmp/rollcall-demo-41234.kubeconfig";

fn info() -> ConsoleInfo {
    ConsoleInfo {
        context: "embedded".into(),
        server: "https://127.0.0.1:41234".into(),
        note: Some(format!(
            "embedded cluster · scenario default · kubectl --kubeconfig {KUBECONFIG}"
        )),
    }
}

fn general(name: &str) -> crate::engine::fixtures::NodeBuilder {
    node(name)
        .label("node-pool", "general-purpose-on-demand-xlarge")
        .label(
            "topology.kubernetes.io/zone",
            "eu-west-1-edge-zone-with-long-name",
        )
}

/// A paused OnDelete rollout: revision 2 on two nodes (one crash looping, the
/// pause's cause), revision 1 elsewhere, a tainted node not eligible, a
/// NotReady node, a hand-marked canary.
fn paused() -> Cache {
    let mut cache = super::fixtures::started();
    let v1 = daemonset("registry.example/agent:v1").on_delete().build();
    let mut v2 = daemonset("registry.example/agent:v2")
        .on_delete()
        .annotation(PAUSED_BY, "ana@jumphost")
        .annotation(PAUSE_REASON, REASON)
        .annotation(MODE, "auto")
        .annotation(CANARIES, "general-node-eu-west-1-041")
        .build();
    if let Some(status) = v2.status.as_mut() {
        status.desired_number_scheduled = 5;
        status.current_number_scheduled = 5;
        status.updated_number_scheduled = Some(2);
        status.number_ready = 4;
        status.number_available = Some(4);
    }
    let nodes = vec![
        general("general-node-eu-west-1-041").build(),
        general("general-node-eu-west-1-042").build(),
        general("general-node-eu-west-1-043").build(),
        general("general-node-eu-west-1-044").not_ready().build(),
        general("general-node-eu-west-1-045").build(),
        node("gpu-node-eu-west-1-001")
            .label("node-pool", "gpu")
            .taint(
                "nvidia.com/gpu-dedicated-to-the-ml-team",
                "true",
                "NoSchedule",
            )
            .build(),
    ];
    let pods = vec![
        pod("agent-x41", "general-node-eu-west-1-041", "h2")
            .created(3000)
            .ready_since(3010)
            .build(),
        pod("agent-x42", "general-node-eu-west-1-042", "h2")
            .created(3200)
            .phase("Running")
            .waiting("CrashLoopBackOff", 4)
            .build(),
        pod("agent-o43", "general-node-eu-west-1-043", "h1")
            .created(60)
            .ready_since(70)
            .build(),
        pod("agent-o44", "general-node-eu-west-1-044", "h1")
            .created(60)
            .running_not_ready(70)
            .build(),
        pod("agent-o45", "general-node-eu-west-1-045", "h1")
            .created(60)
            .ready_since(70)
            .build(),
    ];
    list(&mut cache, WatchUpdate::Node, nodes);
    list(&mut cache, WatchUpdate::DaemonSet, vec![v2.clone()]);
    list(
        &mut cache,
        WatchUpdate::Revision,
        vec![
            revision_of(&v1, "h1", 1),
            with_cause(revision_of(&v2, "h2", 2)),
        ],
    );
    list(&mut cache, WatchUpdate::Pod, pods);
    let mut pod_events = vec![event(
        "agent-x42.1",
        "Pod",
        "agent-x42",
        "BackOff",
        "Back-off restarting failed container main in pod agent-x42_kube-system",
        3500,
    )];
    for i in 0..12 {
        pod_events.push(event(
            &format!("agent-x42.p{i}"),
            "Pod",
            "agent-x42",
            "Pulled",
            &format!(
                "Container image \"registry.example/agent:v2\" already present on machine ({i})"
            ),
            3300 + i,
        ));
    }
    list(&mut cache, WatchUpdate::PodEvent, pod_events);
    cache.apply(WatchUpdate::NodeEvent(watcher::Event::Init), now());
    cache.apply(WatchUpdate::NodeEvent(watcher::Event::InitDone), now());
    cache
}

fn with_cause(mut revision: crate::model::ControllerRevision) -> crate::model::ControllerRevision {
    revision.metadata.annotations = Some(
        [(
            "kubernetes.io/change-cause".to_owned(),
            "image registry.example/agent:v2 (ticket OPS-4242: fix the memory leak seen on edge nodes)"
                .to_owned(),
        )]
        .into(),
    );
    revision
}

#[test]
fn history_shows_the_change_cause() {
    let (_, _, buffer) = screen((200, 60), &[Action::History]);
    let screen = text(&buffer);
    assert!(screen.contains("CHANGE-CAUSE"), "{screen}");
    assert!(screen.contains("ticket OPS-4242"), "{screen}");
}

fn app_on(cache: &mut Cache, size: (u16, u16)) -> App {
    let mut app = App::new(
        info(),
        crate::model::Target::from_key("kube-system/agent"),
        size,
    );
    // The demo's console: on the embedded cluster, so the title says SIMULATED.
    app.simulated = true;
    app.refresh(cache, now());
    app.ops = OpsConsole::new(false, "ana@box".into());
    app
}

fn draw(app: &App, cache: &Cache) -> Buffer {
    let (width, height) = app.ui.size;
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    let view = app.view_model(cache, now());
    terminal
        .draw(|frame| frame.render_widget(&view, frame.area()))
        .unwrap();
    terminal.backend().buffer().clone()
}

pub(super) fn text(buffer: &Buffer) -> String {
    let area = buffer.area;
    (0..area.height)
        .map(|y| {
            let line: String = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
            line.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// SIMULATED comes before everything the right edge may cut: a DaemonSet
/// name far wider than the terminal still leaves it whole, at every size.
#[test]
fn simulated_survives_a_long_daemonset_name_at_every_size() {
    let long = format!("kube-system/{}agent", "node-agent-".repeat(20));
    for (width, height) in SIZES {
        let mut cache = paused();
        let mut app = App::new(
            info(),
            crate::model::Target::from_key(&long),
            (width, height),
        );
        app.simulated = true;
        app.refresh(&mut cache, now());
        let buffer = draw(&app, &cache);
        let screen = text(&buffer);
        let title = screen.lines().next().unwrap_or_default();
        assert!(
            title.starts_with("rollcall SIMULATED embedded "),
            "{screen}"
        );
        assert!(
            title.ends_with('…'),
            "the name is cut, not SIMULATED: {title}"
        );
        let x = u16::try_from("rollcall ".len()).unwrap();
        assert_eq!(buffer[(x, 0)].fg, ratatui::style::Color::Yellow, "{title}");
    }
    // A real cluster's title has no such word.
    let mut cache = paused();
    let mut app = App::new(info(), None, (80, 24));
    app.refresh(&mut cache, now());
    let screen = text(&draw(&app, &cache));
    assert!(!screen.contains("SIMULATED"), "{screen}");
}

fn select(app: &mut App, cache: &Cache, node: &str) {
    app.update(Action::Top, cache, now());
    for _ in 0..10 {
        if app.ui.selected_node.as_deref() == Some(node) {
            return;
        }
        app.update(Action::Down, cache, now());
    }
    panic!(
        "{node} not in the grid: {:?}\n{}",
        app.ui.selected_node,
        text(&draw(app, cache))
    );
}

/// Every screen and dialog, as `(name, keys to press from the grid)`.
fn screens() -> Vec<(&'static str, Vec<Action>)> {
    vec![
        ("grid", vec![]),
        ("detail", vec![Action::Open]),
        ("help", vec![Action::Help]),
        ("plan", vec![Action::ShowPlan]),
        ("history", vec![Action::History]),
        ("canary_dialog", vec![Action::ToggleCanary]),
        // Refused while paused: the status line says why.
        ("advance_refused", vec![Action::AdvanceSelected]),
        ("resume_dialog", vec![Action::TogglePause]),
        ("rollback_dialog", vec![Action::Rollback]),
    ]
}

/// A console at `size` on the paused rollout, the old-revision node
/// general-node-eu-west-1-043 selected, after `actions`.
fn screen(size: (u16, u16), actions: &[Action]) -> (App, Cache, Buffer) {
    let mut cache = paused();
    let mut app = app_on(&mut cache, size);
    select(&mut app, &cache, "general-node-eu-west-1-043");
    for action in actions {
        app.update(*action, &cache, now());
    }
    let buffer = draw(&app, &cache);
    (app, cache, buffer)
}

#[test]
fn every_screen_at_every_size() {
    for (name, actions) in screens() {
        for size in SIZES {
            let (_, _, buffer) = screen(size, &actions);
            insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), text(&buffer));
        }
    }
}

/// Issue 33: a long pause reason never pushes the summary (with the spec's
/// owner) or the counts out of the header; where it is cut, `m` shows it
/// whole.
#[test]
fn the_pause_reason_is_readable_in_full_at_every_size() {
    for size in SIZES {
        let (_, _, buffer) = screen(size, &[]);
        let screen_text = text(&buffer);
        let header: Vec<&str> = screen_text.lines().take(6).collect();
        assert!(
            header.iter().any(|l| l.starts_with("kube-system/agent · ")),
            "{size:?}: {header:?}"
        );
        assert!(
            header.iter().any(|l| l.starts_with("desired 5  current 5")),
            "{size:?}: {header:?}"
        );
        let joined = header
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            joined.contains("paused by ana@jumphost: auto-advance stopped"),
            "{size:?}: {joined}"
        );
        let (_, _, full) = self::screen(size, &[Action::ShowInFull]);
        let full = text(&full)
            .lines()
            .map(|l| l.trim_matches(|c: char| c == '│' || c.is_whitespace()))
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            full.contains(&format!("paused by ana@jumphost: {REASON}")),
            "{size:?}: {full}"
        );
    }
}

#[test]
fn the_footer_always_ends_with_help() {
    for (name, actions) in screens() {
        for size in SIZES {
            let (_, _, buffer) = screen(size, &actions);
            let footer = text(&buffer).lines().last().unwrap_or_default().to_owned();
            assert!(footer.ends_with("? help"), "{name} {size:?}: {footer:?}");
        }
    }
}

#[test]
fn cut_values_are_marked_and_node_names_keep_their_tail() {
    let (_, _, buffer) = screen((80, 24), &[]);
    let screen = text(&buffer);
    // At 80 columns the node names do not fit: each keeps its distinct tail.
    for n in 41..=45 {
        let name = format!("general-node-eu-west-1-0{n}");
        let shown = screen.lines().find_map(|l| {
            l.split_whitespace()
                .find(|w| w.ends_with(&format!("west-1-0{n}")))
        });
        assert!(
            shown.is_some_and(|w| w == name || (w.starts_with('…') && name.ends_with(&w[3..]))),
            "{n}: {screen}"
        );
    }
    // A value cut in the grid ends with "…"; no grid cell ends mid-word without it.
    let grid_rows: Vec<&str> = screen.lines().skip(6).take(6).collect();
    assert!(grid_rows.iter().any(|l| l.contains('…')), "{screen}");
    // At 200 columns the node names are whole; WHY says the crash loop in
    // a few words (not the kubelet's back-off text), and its long taint
    // reason takes the room left without pushing TAINTS or POOL/ZONE off.
    let (_, _, wide) = self::screen((200, 60), &[]);
    let wide = text(&wide);
    assert!(
        wide.contains("taint nvidia.com/gpu-dedicated-to-the-ml-team=true:NoSchedul"),
        "{wide}"
    );
    assert!(wide.contains("crash loop: 4 restarts"), "{wide}");
    assert!(!wide.contains("Back-off restarting"), "{wide}");
    for heading in ["POD", "TAINTS", "POOL/ZONE", "WHY"] {
        assert!(wide.contains(&format!(" {heading}")), "{heading}: {wide}");
    }
    for n in 41..=45 {
        assert!(
            wide.contains(&format!(" general-node-eu-west-1-0{n} ")),
            "{wide}"
        );
    }
}

#[test]
fn help_scrolls_to_the_rollout_keys_and_shows_the_kubeconfig() {
    let (mut app, cache, buffer) = screen((80, 24), &[Action::Help]);
    assert!(!text(&buffer).contains("roll back: pick a revision"));
    assert!(
        text(&buffer).contains('↓'),
        "a position marker says there is more"
    );
    let mut seen = String::new();
    for _ in 0..80 {
        app.update(Action::Down, &cache, now());
        seen.push_str(&text(&draw(&app, &cache)));
    }
    for needle in [
        "advance the selected node",
        "roll back: pick a revision",
        "keep",
        "rollcall-demo-41234.kubeconfig",
    ] {
        assert!(seen.contains(needle), "{needle} never shown");
    }
    app.update(Action::Top, &cache, now());
    assert!(text(&draw(&app, &cache)).contains("Connection"));
}

#[test]
fn detail_scrolls_to_the_events() {
    let mut cache = paused();
    let mut app = app_on(&mut cache, (80, 24));
    select(&mut app, &cache, "general-node-eu-west-1-042");
    app.update(Action::Open, &cache, now());
    // The recent events close the pane.
    let oldest = "already present on machine";
    assert!(!text(&draw(&app, &cache)).contains(oldest));
    app.update(Action::Bottom, &cache, now());
    let bottom = text(&draw(&app, &cache));
    assert!(bottom.contains(oldest), "{bottom}");
    app.update(Action::PageUp, &cache, now());
    app.update(Action::Top, &cache, now());
    assert_eq!(app.ui.detail().scroll, 0);
}

/// Relative luminance (WCAG) of an sRGB colour.
fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// A terminal theme: background, foreground and the ANSI colours
/// (black, red, green, yellow, blue, magenta, cyan, white, then the bright eight).
struct Palette {
    name: &'static str,
    background: (u8, u8, u8),
    foreground: (u8, u8, u8),
    ansi: [(u8, u8, u8); 16],
}

const PALETTES: [Palette; 4] = [
    Palette {
        name: "xterm dark",
        background: (0, 0, 0),
        foreground: (229, 229, 229),
        ansi: [
            (0, 0, 0),
            (205, 0, 0),
            (0, 205, 0),
            (205, 205, 0),
            (0, 0, 238),
            (205, 0, 205),
            (0, 205, 205),
            (229, 229, 229),
            (127, 127, 127),
            (255, 0, 0),
            (0, 255, 0),
            (255, 255, 0),
            (92, 92, 255),
            (255, 0, 255),
            (0, 255, 255),
            (255, 255, 255),
        ],
    },
    Palette {
        name: "Tango light",
        background: (255, 255, 255),
        foreground: (0, 0, 0),
        ansi: [
            (46, 52, 54),
            (204, 0, 0),
            (78, 154, 6),
            (196, 160, 0),
            (52, 101, 164),
            (117, 80, 123),
            (6, 152, 154),
            (211, 215, 207),
            (85, 87, 83),
            (239, 41, 41),
            (138, 226, 52),
            (252, 233, 79),
            (114, 159, 207),
            (173, 127, 168),
            (52, 226, 226),
            (238, 238, 236),
        ],
    },
    Palette {
        name: "Solarized dark",
        background: (0x00, 0x2b, 0x36),
        foreground: (0x83, 0x94, 0x96),
        ansi: [
            (0x07, 0x36, 0x42),
            (0xdc, 0x32, 0x2f),
            (0x85, 0x99, 0x00),
            (0xb5, 0x89, 0x00),
            (0x26, 0x8b, 0xd2),
            (0xd3, 0x36, 0x82),
            (0x2a, 0xa1, 0x98),
            (0xee, 0xe8, 0xd5),
            (0x00, 0x2b, 0x36),
            (0xcb, 0x4b, 0x16),
            (0x58, 0x6e, 0x75),
            (0x65, 0x7b, 0x83),
            (0x83, 0x94, 0x96),
            (0x6c, 0x71, 0xc4),
            (0x93, 0xa1, 0xa1),
            (0xfd, 0xf6, 0xe3),
        ],
    },
    Palette {
        name: "Solarized light",
        background: (0xfd, 0xf6, 0xe3),
        foreground: (0x65, 0x7b, 0x83),
        ansi: [
            (0x07, 0x36, 0x42),
            (0xdc, 0x32, 0x2f),
            (0x85, 0x99, 0x00),
            (0xb5, 0x89, 0x00),
            (0x26, 0x8b, 0xd2),
            (0xd3, 0x36, 0x82),
            (0x2a, 0xa1, 0x98),
            (0xee, 0xe8, 0xd5),
            (0x00, 0x2b, 0x36),
            (0xcb, 0x4b, 0x16),
            (0x58, 0x6e, 0x75),
            (0x65, 0x7b, 0x83),
            (0x83, 0x94, 0x96),
            (0x6c, 0x71, 0xc4),
            (0x93, 0xa1, 0xa1),
            (0xfd, 0xf6, 0xe3),
        ],
    },
];

impl Palette {
    fn rgb(&self, color: Color) -> Option<(u8, u8, u8)> {
        let index = match color {
            Color::Reset => return Some(self.foreground),
            Color::Black => 0,
            Color::Red => 1,
            Color::Green => 2,
            Color::Yellow => 3,
            Color::Blue => 4,
            Color::Magenta => 5,
            Color::Cyan => 6,
            Color::Gray => 7,
            Color::DarkGray => 8,
            Color::LightRed => 9,
            Color::LightGreen => 10,
            Color::LightYellow => 11,
            Color::LightBlue => 12,
            Color::LightMagenta => 13,
            Color::LightCyan => 14,
            Color::White => 15,
            // Fixed colours ignore the theme: never used for content.
            Color::Rgb(..) | Color::Indexed(_) => return None,
        };
        Some(self.ansi[index])
    }
}

/// The lowest contrast a content colour may have on a theme's background.
/// (Yellow on Tango's white is the weakest hue the console uses: ~2.1.)
const MIN_CONTRAST: f64 = 2.0;

#[test]
fn content_is_readable_on_dark_light_and_solarized_themes() {
    for (name, actions) in screens() {
        for size in SIZES {
            let (_, _, buffer) = screen(size, &actions);
            let area = buffer.area;
            for y in 0..area.height {
                for x in 0..area.width {
                    let cell = &buffer[(x, y)];
                    assert_eq!(
                        cell.bg,
                        Color::Reset,
                        "{name} {size:?} ({x},{y}): no backgrounds"
                    );
                    if cell.symbol().trim().is_empty() {
                        continue;
                    }
                    assert!(
                        !UNREADABLE.contains(&cell.fg),
                        "{name} {size:?} ({x},{y}) {:?} in {:?}",
                        cell.symbol(),
                        cell.fg
                    );
                    for palette in &PALETTES {
                        let rgb = palette.rgb(cell.fg);
                        let ratio = rgb.map_or(0.0, |rgb| contrast(rgb, palette.background));
                        assert!(
                            ratio >= MIN_CONTRAST,
                            "{name} {size:?} ({x},{y}) {:?} in {:?} on {}: contrast {ratio:.2}",
                            cell.symbol(),
                            cell.fg,
                            palette.name
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn the_old_dark_grey_would_have_failed() {
    // The check above can fail: DarkGray is Solarized Dark's background.
    let solarized = &PALETTES[2];
    let ratio = contrast(
        solarized.rgb(Color::DarkGray).unwrap(),
        solarized.background,
    );
    assert!(ratio < MIN_CONTRAST);
}

#[test]
fn no_green_on_a_failing_row() {
    let (_, _, buffer) = screen((200, 60), &[]);
    let area = buffer.area;
    let mut checked = 0;
    for y in 0..area.height {
        let line: String = (0..area.width).map(|x| buffer[(x, y)].symbol()).collect();
        if line.contains("CrashLoopBackOff") && line.contains("agent-x42") {
            checked += 1;
            for x in 0..area.width {
                assert_ne!(buffer[(x, y)].fg, Color::Green, "green at {x} on {line}");
            }
        }
    }
    assert_eq!(checked, 1);
}

#[test]
fn enter_does_not_confirm_a_destructive_action() {
    use crossterm::event::KeyCode;
    let (app, _, _) = screen((80, 24), &[Action::ToggleCanary]);
    assert!(app.ops.modal.is_some());
    let key = |code| {
        crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
            code,
            crossterm::event::KeyModifiers::NONE,
        ))
    };
    assert_eq!(app.action_for_event(&key(KeyCode::Enter)), None);
    assert_eq!(
        app.action_for_event(&key(KeyCode::Char('y'))),
        Some(Action::Confirm)
    );
}

#[test]
fn nodes_that_block_a_rolling_update_are_marked() {
    // The mid-rollout fixture as a RollingUpdate (maxUnavailable 1): the
    // crash-looping and the not-ready pods spend the budget.
    let mut cache = super::fixtures::mid_rollout();
    let rolling = daemonset("registry.example/agent:v2").build();
    cache.apply(
        WatchUpdate::DaemonSet(watcher::Event::Apply(rolling)),
        now(),
    );
    let mut app = App::new(
        info(),
        crate::model::Target::from_key("kube-system/agent"),
        (120, 24),
    );
    app.refresh(&mut cache, now());
    let screen = text(&draw(&app, &cache));
    let marked: Vec<&str> = screen
        .lines()
        .filter(|l| l.starts_with(" ×") || l.starts_with("◆×"))
        .collect();
    assert!(!marked.is_empty(), "{screen}");
    assert!(
        marked
            .iter()
            .all(|l| l.contains("node-03") || l.contains("node-05")),
        "{screen}"
    );
}

#[test]
fn every_keymap_context_offers_help_last() {
    use super::keymap::{Context, hints};
    for context in [
        Context::Grid,
        Context::Picker,
        Context::Detail,
        Context::History,
        Context::FilterInput,
        Context::Confirm,
        Context::FailingConfirm,
        Context::RollbackPicker,
        Context::PlanView,
        Context::AutoForm,
        Context::Logs,
    ] {
        assert!(
            hints(context)
                .iter()
                .any(|(key, label)| key == "?" && *label == "help"),
            "{context:?}"
        );
    }
}
