//! One step of a pod's life on its node, fired by the fleet's timer: accept, pull (or fail to), create, start, become Ready
//! (or crash, or never pass readiness), back off, terminate. Each step writes
//! the pod's status through the store, records the Events the kubelet
//! would, and schedules the next step. A step on a node that is
//! not Ready does nothing: the pod resumes when the node comes back.

use std::time::Duration;

use serde_json::Value;

use super::clock::rfc3339;
use super::fleet::{Fleet, PodKey, Stage};
use super::pod_status;
use super::rules::rule_for;
use crate::sim::controller::events::{EventType, ObjectRef, Source};
use crate::sim::resources::ResourceKind;
use crate::sim::scenario::Failure;
use crate::sim::store::{StoreError, Subresource, WriteOptions};

/// How often a never-ready container's readiness probe failure is reported.
const PROBE_PERIOD: Duration = Duration::from_secs(10);

impl Fleet {
    /// Runs the pod's pending step.
    pub fn fire(&mut self, key: &PodKey) {
        let Some(life) = self.pods.get(key) else {
            return;
        };
        let node_ready = life
            .node
            .as_ref()
            .and_then(|n| self.nodes.get(n))
            .is_some_and(|n| n.ready);
        if !node_ready && life.stage != Stage::Terminating {
            return;
        }
        match life.stage {
            Stage::Bound => self.accept(key),
            Stage::SandboxFailed => self.create_sandbox(key),
            Stage::Pulling => self.finish_pull(key),
            Stage::PullFailed => self.pull_back_off(key),
            Stage::PullBackOff => self.start_pull(key),
            Stage::Creating => self.create_container(key),
            Stage::Starting => self.start_container(key),
            Stage::Started => self.probe(key),
            Stage::CrashBackOff => self.restart(key),
            Stage::Terminating => self.finish_termination(key),
            Stage::Ready | Stage::Done => {}
        }
    }

    /// Resumes a pod after its node came back (or on first sight).
    pub fn resume(&mut self, key: &PodKey) {
        let Some(stage) = self.pods.get(key).map(|l| l.stage) else {
            return;
        };
        let timing = self.options.scenario.timing.clone();
        let base = match stage {
            Stage::Bound => timing.pull_start,
            Stage::Pulling => timing.pull,
            Stage::PullFailed | Stage::Creating => timing.create,
            Stage::PullBackOff | Stage::CrashBackOff | Stage::SandboxFailed => timing.backoff,
            Stage::Starting => timing.start,
            Stage::Started => timing.ready,
            Stage::Terminating => timing.terminate,
            Stage::Ready => {
                self.write_status(key, pod_status::ready);
                return;
            }
            Stage::Done => return,
        };
        let after = self.delay(base);
        self.schedule(key, after);
    }

    fn set_stage(&mut self, key: &PodKey, stage: Stage) {
        if let Some(life) = self.pods.get_mut(key) {
            life.stage = stage;
        }
    }

    fn next(&mut self, key: &PodKey, stage: Stage, base: Duration) {
        self.set_stage(key, stage);
        let after = self.delay(base);
        self.schedule(key, after);
    }

    fn accept(&mut self, key: &PodKey) {
        let ip = self.node_of(key).map(|n| n.ip.clone()).unwrap_or_default();
        self.write_status(key, |pod, now| pod_status::accepted(pod, &ip, now));
        self.create_sandbox(key);
    }

    /// Creates the pod sandbox, or fails to (the scenario's
    /// `FailedCreatePodSandBox` rule): the pod stays Pending in
    /// ContainerCreating and the kubelet retries with growing back-off,
    /// recording upstream's `FailedCreatePodSandBox` event each time.
    fn create_sandbox(&mut self, key: &PodKey) {
        if self.failure(key) != Some(Failure::FailedCreatePodSandBox) {
            self.start_pull(key);
            return;
        }
        let sandbox = self.hex(64);
        let detail = self.failure_message(key).unwrap_or_else(|| format!(
            "failed to setup network for sandbox \"{sandbox}\": plugin type=\"loopback\" failed (add): failed to find plugin \"loopback\" in path [/opt/cni/bin]"
        ));
        let message =
            format!("Failed to create pod sandbox: rpc error: code = Unknown desc = {detail}");
        self.event(
            key,
            None,
            EventType::Warning,
            "FailedCreatePodSandBox",
            &message,
            "kubelet",
        );
        let failures = self.pods.get_mut(key).map_or(1, |l| {
            l.sandbox_failures += 1;
            l.sandbox_failures
        });
        let backoff = self.backoff(failures);
        self.set_stage(key, Stage::SandboxFailed);
        let after = backoff.div_f64(self.options.speed.max(0.001));
        self.schedule(key, after);
    }

    fn start_pull(&mut self, key: &PodKey) {
        let image = self
            .pods
            .get(key)
            .map(|l| l.image.clone())
            .unwrap_or_default();
        if let Some(life) = self.pods.get_mut(key) {
            life.pull_started = Some(tokio::time::Instant::now());
        }
        self.container_event(
            key,
            EventType::Normal,
            "Pulling",
            &format!("Pulling image \"{image}\""),
        );
        let pull = self.options.scenario.timing.pull;
        self.next(key, Stage::Pulling, pull);
    }

    fn finish_pull(&mut self, key: &PodKey) {
        let image = self
            .pods
            .get(key)
            .map(|l| l.image.clone())
            .unwrap_or_default();
        if self.failure(key) == Some(Failure::ImagePullBackOff) {
            let detail = self.failure_message(key).unwrap_or_else(|| format!(
                "rpc error: code = NotFound desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": {image}: not found"
            ));
            self.write_status(key, |pod, _| {
                pod_status::waiting(pod, "ErrImagePull", &detail);
            });
            self.container_event(
                key,
                EventType::Warning,
                "Failed",
                &format!("Failed to pull image \"{image}\": {detail}"),
            );
            self.container_event(key, EventType::Warning, "Failed", "Error: ErrImagePull");
            if let Some(life) = self.pods.get_mut(key) {
                life.pull_failures += 1;
            }
            let pause = self.options.scenario.timing.pull_start;
            self.next(key, Stage::PullFailed, pause);
            return;
        }
        let digest = format!("sha256:{}", self.hex(64));
        let took = self
            .pods
            .get(key)
            .and_then(|l| l.pull_started)
            .map(|t| t.elapsed().as_secs_f64() * self.options.speed)
            .unwrap_or_default();
        if let Some(life) = self.pods.get_mut(key) {
            life.pulled_digest = Some(digest);
        }
        let message = format!(
            "Successfully pulled image \"{image}\" in {took:.3}s ({took:.3}s including waiting)"
        );
        self.container_event(key, EventType::Normal, "Pulled", &message);
        let create = self.options.scenario.timing.create;
        self.next(key, Stage::Creating, create);
    }

    fn pull_back_off(&mut self, key: &PodKey) {
        let image = self
            .pods
            .get(key)
            .map(|l| l.image.clone())
            .unwrap_or_default();
        let message = format!("Back-off pulling image \"{image}\"");
        self.write_status(key, |pod, _| {
            pod_status::waiting(pod, "ImagePullBackOff", &message);
        });
        self.container_event(key, EventType::Normal, "BackOff", &message);
        self.container_event(key, EventType::Warning, "Failed", "Error: ImagePullBackOff");
        let failures = self.pods.get(key).map_or(1, |l| l.pull_failures);
        let backoff = self.backoff(failures);
        self.set_stage(key, Stage::PullBackOff);
        let after = backoff.div_f64(self.options.speed.max(0.001));
        self.schedule(key, after);
    }

    fn create_container(&mut self, key: &PodKey) {
        let container = self
            .pods
            .get(key)
            .map(|l| l.container.clone())
            .unwrap_or_default();
        self.container_event(
            key,
            EventType::Normal,
            "Created",
            &format!("Created container: {container}"),
        );
        let start = self.options.scenario.timing.start;
        self.next(key, Stage::Starting, start);
    }

    fn start_container(&mut self, key: &PodKey) {
        let container = self
            .pods
            .get(key)
            .map(|l| l.container.clone())
            .unwrap_or_default();
        let pod_ip = self.pod_ip();
        let container_id = self.hex(64);
        let digest = self.pods.get(key).and_then(|l| l.pulled_digest.clone());
        self.write_status(key, |pod, now| {
            let ip = pod["status"]["podIP"]
                .as_str()
                .map_or_else(|| pod_ip.clone(), str::to_owned);
            if let Some(digest) = &digest {
                pod_status::pulled(pod, digest);
            }
            pod_status::running(pod, &ip, &container_id, now);
        });
        self.container_event(
            key,
            EventType::Normal,
            "Started",
            &format!("Started container {container}"),
        );
        let timing = self.options.scenario.timing.clone();
        let base = if self.failure(key) == Some(Failure::CrashLoopBackOff) {
            timing.crash_after
        } else {
            timing.ready
        };
        self.next(key, Stage::Started, base);
    }

    fn probe(&mut self, key: &PodKey) {
        match self.failure(key) {
            Some(Failure::CrashLoopBackOff) => self.crash(key),
            Some(Failure::NeverReady) => {
                let message = "Readiness probe failed: HTTP probe failed with statuscode: 503";
                self.container_event(key, EventType::Warning, "Unhealthy", message);
                let after = PROBE_PERIOD.div_f64(self.options.speed.max(0.001));
                self.schedule(key, after);
            }
            _ => {
                self.write_status(key, pod_status::ready);
                self.set_stage(key, Stage::Ready);
            }
        }
    }

    fn crash(&mut self, key: &PodKey) {
        let restarts = self.pods.get_mut(key).map_or(1, |l| {
            l.restarts += 1;
            l.restarts
        });
        let backoff = self.backoff(restarts);
        let exit_code = self.failure_rule_exit_code(key);
        let message = self
            .failure_message(key)
            .unwrap_or_else(|| "container exited".to_owned());
        self.write_status(key, |pod, now| {
            pod_status::crashed(pod, exit_code, &message, backoff, now);
        });
        let (container, uid) = self
            .pods
            .get(key)
            .map(|l| (l.container.clone(), l.uid.clone()))
            .unwrap_or_default();
        let text = format!(
            "Back-off restarting failed container {container} in pod {}_{}({uid})",
            key.1, key.0
        );
        self.container_event(key, EventType::Warning, "BackOff", &text);
        self.set_stage(key, Stage::CrashBackOff);
        let after = backoff.div_f64(self.options.speed.max(0.001));
        self.schedule(key, after);
    }

    fn restart(&mut self, key: &PodKey) {
        let image = self
            .pods
            .get(key)
            .map(|l| l.image.clone())
            .unwrap_or_default();
        self.container_event(
            key,
            EventType::Normal,
            "Pulled",
            &format!("Container image \"{image}\" already present on machine"),
        );
        self.create_container(key);
    }

    /// Starts a deleted pod's termination (Killing), or finishes it at once
    /// when nothing was started or its node is gone.
    pub fn begin_termination(&mut self, key: &PodKey, grace: Duration) {
        let Some(life) = self.pods.get_mut(key) else {
            return;
        };
        let started = !matches!(
            life.stage,
            Stage::Bound | Stage::SandboxFailed | Stage::Done
        );
        life.stage = Stage::Terminating;
        life.grace = grace;
        let node_known = life
            .node
            .as_ref()
            .is_some_and(|n| self.nodes.contains_key(n));
        if !started || !node_known {
            self.finish_termination(key);
            return;
        }
        let container = self
            .pods
            .get(key)
            .map(|l| l.container.clone())
            .unwrap_or_default();
        self.container_event(
            key,
            EventType::Normal,
            "Killing",
            &format!("Stopping container {container}"),
        );
        if self.node_of(key).is_some_and(|n| n.ready) {
            let terminate = self.options.scenario.timing.terminate.min(grace);
            let after = self.delay(terminate);
            self.schedule(key, after);
        }
    }

    fn finish_termination(&mut self, key: &PodKey) {
        let uid = self.uid(key);
        let _ = self
            .store
            .finish_termination(ResourceKind::Pod, &key.0, &key.1, Some(&uid));
        self.forget(key);
    }

    /// The back-off before retry `attempt` (1-based): doubling from the base, capped.
    fn backoff(&self, attempt: u32) -> Duration {
        let timing = &self.options.scenario.timing;
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1).min(16));
        timing
            .backoff
            .saturating_mul(factor)
            .min(timing.backoff_max)
    }

    fn failure(&self, key: &PodKey) -> Option<Failure> {
        self.rule(key).map(|r| r.failure)
    }

    fn failure_message(&self, key: &PodKey) -> Option<String> {
        self.rule(key).and_then(|r| r.message.clone())
    }

    fn failure_rule_exit_code(&self, key: &PodKey) -> i32 {
        self.rule(key).and_then(|r| r.exit_code).unwrap_or(1)
    }

    fn rule(&self, key: &PodKey) -> Option<&crate::sim::scenario::ImageRule> {
        let life = self.pods.get(key)?;
        let node = life.node.as_deref()?;
        let pool = self.nodes.get(node).and_then(|n| n.pool.as_deref());
        rule_for(&self.options.scenario, &life.image, node, pool)
    }

    fn node_of(&self, key: &PodKey) -> Option<&super::fleet::NodeInfo> {
        self.pods
            .get(key)?
            .node
            .as_ref()
            .and_then(|n| self.nodes.get(n))
    }

    fn uid(&self, key: &PodKey) -> String {
        self.pods
            .get(key)
            .map(|l| l.uid.clone())
            .unwrap_or_default()
    }

    /// Edits the pod's status under the store lock (skipped if the pod is
    /// gone or is another pod by now).
    pub fn write_status(&mut self, key: &PodKey, edit: impl FnOnce(&mut Value, &str)) {
        let uid = self.uid(key);
        let now = rfc3339(self.clock.now());
        let result = self.store.modify_with(
            ResourceKind::Pod,
            &key.0,
            &key.1,
            Subresource::Status,
            WriteOptions::default(),
            |pod| {
                same_pod(pod, &uid)?;
                let mut next = pod.clone();
                edit(&mut next, &now);
                Ok(next)
            },
        );
        if let Err(err) = result {
            tracing::debug!(pod = %key.1, %err, "kubelet status write skipped");
        }
    }

    fn container_event(
        &mut self,
        key: &PodKey,
        type_: EventType,
        reason: &'static str,
        message: &str,
    ) {
        let container = self
            .pods
            .get(key)
            .map(|l| l.container.clone())
            .unwrap_or_default();
        self.event(key, Some(&container), type_, reason, message, "kubelet");
    }

    pub(super) fn event(
        &mut self,
        key: &PodKey,
        container: Option<&str>,
        type_: EventType,
        reason: &str,
        message: &str,
        component: &'static str,
    ) {
        let Some(life) = self.pods.get(key) else {
            return;
        };
        let mut object = ObjectRef {
            kind: "Pod",
            api_version: "v1",
            namespace: key.0.clone(),
            name: key.1.clone(),
            uid: life.uid.clone(),
            field_path: None,
        };
        if let Some(container) = container {
            object = object.container(container);
        }
        let host = (component == "kubelet")
            .then(|| life.node.clone())
            .flatten();
        self.recorder
            .record(&object, type_, reason, message, &Source { component, host });
    }
}

fn same_pod(pod: &Value, uid: &str) -> Result<(), StoreError> {
    if pod["metadata"]["uid"].as_str() == Some(uid) {
        Ok(())
    } else {
        Err(StoreError::Internal("pod was replaced".to_owned()))
    }
}
