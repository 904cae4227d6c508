//! The matrix's `A`: auto-advance across the clusters shown (after the `/`
//! filter), as one wave carried out by the fleet run (`fleet::run`) on the
//! fleet side. The screen opens the single-cluster console's form
//! ([`AutoForm`]), asks for the run with the settings chosen, shows its
//! progress on the status line and asks for a halt on `A` or Ctrl-C. Pure.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::tui::auto_form::AutoForm;
use crate::tui::view_model::pane::{self, Overlay, TextPane};
use crate::tui::view_model::{Cell, Tone};

/// How many context names the form spells out.
const NAMED: usize = 4;

/// The open form, and the clusters it names: `y` rolls exactly these,
/// whatever the matrix shows by then.
#[derive(Clone, Debug)]
pub struct ClustersForm {
    /// The settings being chosen.
    pub settings: AutoForm,
    /// The clusters the form said it rolls.
    pub contexts: Vec<String>,
}

/// A fleet run started from the matrix, as the status line shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLine {
    /// Its last step, or how it ended.
    pub text: String,
    /// Still going (a halt is offered).
    pub running: bool,
    /// A halt was asked for.
    pub halting: bool,
}

impl RunLine {
    /// A run just asked for.
    pub fn starting(clusters: usize) -> Self {
        RunLine {
            text: format!("starting on {clusters} cluster(s)…"),
            running: true,
            halting: false,
        }
    }

    /// The status line.
    pub fn cell(&self) -> Cell {
        if self.halting && self.running {
            return Cell::new(
                &format!(
                    "fleet run halting (every cluster stops after its current step): {}",
                    self.text
                ),
                Tone::Warn,
            );
        }
        if self.running {
            return Cell::new(
                &format!("fleet run: {} · A or Ctrl-C halt", self.text),
                Tone::Accent,
            );
        }
        let tone = if self.text.starts_with("done") {
            Tone::Good
        } else {
            Tone::Warn
        };
        Cell::new(&format!("fleet run ended: {}", self.text), tone)
    }
}

/// The form `A` opens for `contexts` (the clusters shown it rolls;
/// `left_out`: those shown it does not, each with why): the single-cluster
/// console's settings, and what the fleet run will do.
pub fn form(contexts: Vec<String>, left_out: &[String]) -> ClustersForm {
    let over = if left_out.is_empty() {
        format!("the {} cluster(s) shown", contexts.len())
    } else {
        format!(
            "{} of the {} cluster(s) shown",
            contexts.len(),
            contexts.len() + left_out.len()
        )
    };
    let mut warnings = vec![format!(
        "one wave over {over}, all at once: {}",
        named(&contexts)
    )];
    if !left_out.is_empty() {
        warnings.push(format!("left out: {}", named(left_out)));
    }
    warnings.push("a failed node stops every cluster, each touched one left paused".to_owned());
    let settings = AutoForm::new(
        crate::tui::ops::DEFAULT_POLICY,
        warnings,
        false,
        "none: each cluster's plan goes in its order".to_owned(),
    );
    ClustersForm { settings, contexts }
}

/// The first [`NAMED`] of `contexts`, then `…`.
fn named(contexts: &[String]) -> String {
    let mut names: Vec<&str> = contexts.iter().take(NAMED).map(String::as_str).collect();
    if contexts.len() > NAMED {
        names.push("…");
    }
    names.join(", ")
}

/// Draws `form` as the console draws its dialogs, over `body`.
pub fn render_form(form: &AutoForm, body: Rect, buf: &mut Buffer) {
    let width = pane::overlay_inner_width(Overlay::Dialog, body.width);
    let lines: Vec<Vec<Cell>> = form.lines().into_iter().map(|c| vec![c]).collect();
    let lines = pane::wrap_all(&lines, width);
    let dialog = TextPane {
        title: " auto-advance these clusters with these settings? ".to_owned(),
        lines,
        scroll: 0,
    };
    crate::tui::widgets::pane::render_overlay(Overlay::Dialog, &dialog, body, buf);
}
