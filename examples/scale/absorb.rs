//! (f) What the console absorbs when the network is not the limit: watch
//! lines of the target's pods (up to 5,000 of them, in turn), as the API
//! server writes them (the server's own JSON, readiness flipped and the
//! resourceVersion moved on), decoded on one thread (the console's stream
//! task) and applied in batches of `watch::BATCH` on another (its watch
//! task), the rows and order refreshed per batch, a frame drawn every frame
//! interval and a key pressed every 50 ms, as the console does; timed, and
//! each key checked in the next frame. The embedded cluster cannot write
//! changes fast enough to load the console (a few thousand a second on two
//! cores), so this is the console's own ceiling.

use std::time::Instant;

use anyhow::Context;
use kube::api::{ListParams, WatchEvent};
use kube::runtime::watcher;
use rollcall::cluster::cache::WatchUpdate;
use rollcall::cluster::request::collection_url;
use rollcall::cluster::watch;
use rollcall::model::{Pod, Target};
use rollcall::tui::app::App;
use serde_json::Value;

/// Watch lines replayed.
const EVENTS: usize = 100_000;
/// A key (`j`/`k`) is pressed this often while the lines are replayed.
const KEY_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

/// Replays [`EVENTS`] pod changes; returns the report's `key=value` pairs.
pub(crate) async fn capacity(
    client: &kube::Client,
    app: &mut App,
    shared: &watch::Shared,
    target: &Target,
) -> anyhow::Result<String> {
    let lines = watch_lines(client, shared, target).await?;
    let events = lines.len();
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 60))?;
    let frame_interval = rollcall::tui::run::FRAME_INTERVAL;
    let cpu_before = super::cpu_secs();
    let started = Instant::now();
    // Decoded on a thread of its own, as the console's stream task decodes
    // while its watch task applies: batches handed over a short queue.
    let (batches, decoded) = std::sync::mpsc::sync_channel::<Vec<WatchUpdate>>(4);
    let decoding = std::thread::spawn(move || -> anyhow::Result<()> {
        for batch in lines.chunks(watch::BATCH) {
            let mut updates = Vec::with_capacity(batch.len());
            for line in batch {
                match serde_json::from_str::<WatchEvent<Pod>>(line)? {
                    WatchEvent::Modified(pod) => {
                        updates.push(WatchUpdate::Pod(watcher::Event::Apply(pod)));
                    }
                    other => anyhow::bail!("unexpected watch event {other:?}"),
                }
            }
            if batches.send(updates).is_err() {
                break;
            }
        }
        Ok(())
    });
    let mut last_frame = started;
    let mut frames = super::Timings::default();
    let mut key_to_frame = super::Timings::default();
    let (mut key_count, mut missed) = (0u32, 0u32);
    let mut last_key = started;
    // When the key not yet shown was pressed, and the row it selected.
    let mut key_pending: Option<(Instant, Option<String>)> = None;
    for updates in decoded {
        let now = jiff::Timestamp::now();
        let mut cache = shared.lock();
        for update in updates {
            cache.apply(update, now);
        }
        app.refresh(&mut cache, now);
        if last_key.elapsed() >= KEY_EVERY {
            last_key = Instant::now();
            if let Some(pressed) = super::press_key(app, &cache, key_count) {
                let first = key_pending.map_or(pressed, |(at, _)| at);
                key_pending = Some((first, app.ui.selected_node.clone()));
            }
            key_count += 1;
        }
        if last_frame.elapsed() >= frame_interval {
            let drawing = Instant::now();
            let view = app.view_model(&cache, now);
            drop(cache);
            terminal.draw(|f| f.render_widget(&view, f.area()))?;
            last_frame = Instant::now();
            frames.add(last_frame - drawing);
            if let Some((pressed, selected)) = key_pending.take() {
                key_to_frame.add(last_frame - pressed);
                if !super::shows_selection(&terminal, selected.as_deref()) {
                    missed += 1;
                }
            }
        }
    }
    decoding
        .join()
        .map_err(|_| anyhow::anyhow!("the decoder thread panicked"))??;
    let secs = started.elapsed().as_secs_f64();
    let cpu = super::cpu_secs() - cpu_before;
    #[allow(clippy::cast_precision_loss, reason = "display only")]
    let events = events as f64;
    Ok(format!(
        "events={events} secs={secs:.3} cpu={cpu:.3} per_s={:.0} frames={} frame_mean_ms={:.3} frame_max_ms={:.3} keys={} key_mean_ms={:.3} key_max_ms={:.3} key_missed={missed}",
        events / secs.max(1e-9),
        frames.count,
        frames.mean_ms(),
        frames.max_ms(),
        key_to_frame.count,
        key_to_frame.mean_ms(),
        key_to_frame.max_ms()
    ))
}

/// [`EVENTS`] MODIFIED lines: the target's pods as the server lists them,
/// each change flipping one pod's readiness, with resourceVersions past
/// every one the cache holds.
async fn watch_lines(
    client: &kube::Client,
    shared: &watch::Shared,
    target: &Target,
) -> anyhow::Result<Vec<String>> {
    let url = collection_url::<Pod>(Some(&target.namespace));
    // The target's pods, by its selector's labels.
    let selector = {
        let cache = shared.lock();
        let labels = cache
            .daemonset(target)
            .and_then(|ds| ds.spec.as_ref()?.selector.match_labels.clone())
            .context("the target's matchLabels")?;
        labels
            .iter()
            .map(|(key, value)| format!("{key}={value}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let request = kube::core::Request::new(&url)
        .list(&ListParams::default().labels(&selector).limit(5_000))
        .context("list request")?;
    let text = client.request_text(request).await?;
    let list: Value = serde_json::from_str(&text)?;
    let watched: std::collections::HashSet<String> = shared
        .lock()
        .pods()
        .map(|pod| pod.name().to_owned())
        .collect();
    let pods: Vec<Value> = list["items"]
        .as_array()
        .context("a pod list")?
        .iter()
        .filter(|pod| {
            let name = pod["metadata"]["name"].as_str().unwrap_or_default();
            watched.contains(name)
        })
        .cloned()
        .collect();
    anyhow::ensure!(!pods.is_empty(), "no pod of the target to change");
    let mut version: u64 = 1 << 60;
    let mut lines = Vec::with_capacity(EVENTS);
    for i in 0..EVENTS {
        let mut pod = pods[i % pods.len()].clone();
        version += 1;
        pod["metadata"]["resourceVersion"] = Value::String(version.to_string());
        let ready = if (i / pods.len()).is_multiple_of(2) {
            "False"
        } else {
            "True"
        };
        if let Some(conditions) = pod["status"]["conditions"].as_array_mut() {
            for condition in conditions {
                if condition["type"] == "Ready" || condition["type"] == "ContainersReady" {
                    condition["status"] = Value::String(ready.to_owned());
                }
            }
        }
        // `type` first, as API servers write it (the decoder then reads
        // the object straight; after it, the object would be buffered).
        lines.push(format!(
            "{{\"type\":\"MODIFIED\",\"object\":{}}}",
            serde_json::to_string(&pod)?
        ));
    }
    Ok(lines)
}
