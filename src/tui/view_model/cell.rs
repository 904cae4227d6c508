//! The view model's unit of text: a [`Cell`] of sanitised text with its
//! [`Tone`]. The floor under every part that builds display text (the view
//! model, the logs overlay, the roster marks); depends on nothing of the
//! console.

use crate::sanitize::sanitize;

/// What a piece of text means; the theme maps tones to colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tone {
    /// Ordinary text.
    Normal,
    /// Secondary text.
    Dim,
    /// Healthy.
    Good,
    /// Runs the current revision.
    Updated,
    /// Runs an old revision.
    Old,
    /// Needs attention.
    Warn,
    /// Broken.
    Bad,
    /// Highlighted (headings, keys).
    Accent,
}

/// A piece of text with its tone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The text (sanitised).
    pub text: String,
    /// What it means.
    pub tone: Tone,
}

impl Cell {
    /// A cell from API or UI text; sanitises it.
    pub fn new(text: &str, tone: Tone) -> Self {
        Self {
            text: sanitize(text).into_owned(),
            tone,
        }
    }

    /// An empty cell.
    pub fn empty() -> Self {
        Self::new("", Tone::Normal)
    }
}
