//! The crate's one error type: reading, parsing and resolving profiles, and refusing to plan.

use crate::verdict::{Severity, Violation};
use std::fmt;
use std::path::PathBuf;

/// A 1-based line and column (in characters) inside a profile file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1, counted in characters.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `text` (clamped to the text).
    pub fn of(text: &str, offset: usize) -> Self {
        let mut end = offset.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Self { line, column }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A profile, source or catalog file is not valid TOML or does not follow the format.
    #[error("{file}{}: {message}", at(*.position))]
    Format {
        /// The file as the caller named it (shipped files: `profiles/dell/NAME.toml`).
        file: String,
        /// Where, when the parser could tell.
        position: Option<Position>,
        /// What is wrong, one line.
        message: String,
    },
    /// Several problems of one file, each with its place: every missing field of a profile is
    /// reported in one run. One line per problem, as [`Error::Format`] spells it.
    #[error("{}", problems.iter().map(|(place, m)| format!("{file}{}: {m}", at(*place))).collect::<Vec<_>>().join("\n"))]
    Problems {
        /// The file as the caller named it.
        file: String,
        /// Where and what, in file order.
        problems: Vec<(Option<Position>, String)>,
    },
    /// A profile file could not be read.
    #[error("cannot read profile {}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A profile file larger than any profile could sensibly be.
    #[error("profile {} is {size} bytes; profiles are limited to {limit} bytes (is this the right file?)", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Two profiles share a name.
    #[error(
        "{file}: a profile named `{name}` already exists ({existing}); rename it (extends = \"{name}\" builds on it)"
    )]
    DuplicateProfile {
        /// The name.
        name: String,
        /// The file being added.
        file: String,
        /// The file that defined it first.
        existing: String,
    },
    /// No profile has this name (and it is not a path to a file).
    #[error("no profile named `{name}`{}", did_you_mean(suggestions))]
    UnknownProfile {
        /// What was asked for.
        name: String,
        /// The closest known names.
        suggestions: Vec<String>,
    },
    /// `extends` names a profile that does not exist.
    #[error("{file}{}: profile `{profile}` extends `{parent}`, which is not a known profile{}", at(*.position), did_you_mean(suggestions))]
    UnknownParent {
        /// The file of the extending profile.
        file: String,
        /// Where `extends` is written.
        position: Option<Position>,
        /// The extending profile.
        profile: String,
        /// The missing parent.
        parent: String,
        /// The closest known names.
        suggestions: Vec<String>,
    },
    /// `extends` loops back on itself.
    #[error("`extends` forms a cycle: {}", cycle.join(" → "))]
    ExtendsCycle {
        /// The profiles in the loop, the first repeated at the end.
        cycle: Vec<String>,
    },
    /// The profile does not target this host's CPU generation or model.
    #[error("profile `{profile}` targets {targets}; this host is {host}")]
    NotTargeted {
        /// The profile.
        profile: String,
        /// What it targets.
        targets: String,
        /// What the host is.
        host: String,
    },
    /// Validation found errors, so no plan can be made.
    #[error("profile `{profile}` cannot be planned for this host: {}", first_error(violations))]
    Invalid {
        /// The profile.
        profile: String,
        /// Every problem found (errors and warnings).
        violations: Vec<Violation>,
    },
    /// The profile cannot be bound to a vendor as written: two of its settings would write one
    /// vendor attribute with different values.
    #[error("profile `{profile}` on {vendor}: {message}")]
    Binding {
        /// The profile.
        profile: String,
        /// The vendor (`hpe`).
        vendor: String,
        /// What collides, and what to do.
        message: String,
    },
    /// The profile's `[boot]` section cannot be resolved for this host (a device reference
    /// matches nothing, the BIOS cannot stage an order): says what the host has.
    #[error("profile `{profile}`: {message}")]
    Boot {
        /// The profile.
        profile: String,
        /// What is wrong, naming the host's boot devices.
        message: String,
    },
}

impl Error {
    /// The problems of one file: one [`Error::Format`] when there is one, else
    /// [`Error::Problems`].
    pub(crate) fn problems(file: &str, mut problems: Vec<(Option<Position>, String)>) -> Self {
        if problems.len() == 1 {
            let (position, message) = problems.remove(0);
            return Self::Format {
                file: file.to_owned(),
                position,
                message,
            };
        }
        Self::Problems {
            file: file.to_owned(),
            problems,
        }
    }

    /// A [`Error::Format`] for a TOML file that does not parse or does not follow its format.
    pub(crate) fn toml(file: &str, text: &str, e: &toml::de::Error) -> Self {
        Self::Format {
            file: file.to_owned(),
            position: e.span().map(|s| Position::of(text, s.start)),
            message: one_line(e.message()),
        }
    }
}

/// Collapses a multi-line parser message into one line.
fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn at(position: Option<Position>) -> String {
    position.map(|p| format!(":{p}")).unwrap_or_default()
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", suggestions.join(", "))
    }
}

fn first_error(violations: &[Violation]) -> String {
    let errors: Vec<&Violation> = violations.iter().filter(|v| v.severity == Severity::Error).collect();
    match errors.as_slice() {
        [] => "no errors".to_owned(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more)", rest.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "a = 1\nbé = 2\n";
        assert_eq!(Position::of(text, 0), Position { line: 1, column: 1 });
        assert_eq!(Position::of(text, 6), Position { line: 2, column: 1 });
        // "bé" is 3 bytes; the space after it is the third character.
        assert_eq!(Position::of(text, 9), Position { line: 2, column: 3 });
        // Offsets past the end or inside a character are clamped.
        assert_eq!(Position::of(text, 8), Position { line: 2, column: 2 });
        assert_eq!(Position::of(text, 999), Position { line: 3, column: 1 });
    }

    #[test]
    fn format_errors_name_file_line_and_column() {
        let e = Error::Format {
            file: "x.toml".into(),
            position: Some(Position { line: 3, column: 7 }),
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "x.toml:3:7: bad");
        let e = Error::Format {
            file: "x.toml".into(),
            position: None,
            message: "bad".into(),
        };
        assert_eq!(e.to_string(), "x.toml: bad");
    }
}
