//! How a profile is named where people name one (a command line, an experiment file): a
//! shipped profile by its name, or a profile file by its path. One rule tells them apart.

use std::fmt;
use std::path::{Path, PathBuf};

/// A profile as named: shipped, or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileRef {
    /// A shipped profile (`performance`, `hpc`, ...).
    Shipped(String),
    /// A profile file: anything with a path separator or ending in `.toml`.
    File(PathBuf),
}

impl ProfileRef {
    /// `text` as a profile reference: a file when it holds a path separator or ends in `.toml`,
    /// else a shipped profile's name.
    pub fn parse(text: &str) -> Self {
        if text.contains(['/', '\\']) || text.ends_with(".toml") {
            Self::File(PathBuf::from(text))
        } else {
            Self::Shipped(text.to_owned())
        }
    }

    /// The file, if this names one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Self::File(path) => Some(path),
            Self::Shipped(_) => None,
        }
    }
}

impl fmt::Display for ProfileRef {
    /// As it was written.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Shipped(name) => f.write_str(name),
            Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_separator_or_a_toml_ending_names_a_file() {
        assert_eq!(ProfileRef::parse("hpc"), ProfileRef::Shipped("hpc".into()));
        assert_eq!(ProfileRef::parse("ours.toml").file(), Some(Path::new("ours.toml")));
        assert_eq!(ProfileRef::parse("dir/hpc").file(), Some(Path::new("dir/hpc")));
        assert_eq!(ProfileRef::parse(r"C:\p\hpc").to_string(), r"C:\p\hpc");
    }
}
