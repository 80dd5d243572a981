//! What `--target` names and whether the storage benchmark may write there. A pure decision
//! ([`decide`]) over what was found at the path ([`observe`]), so every case has a unit test:
//! a path under `/dev` must be an existing block device (rftune never creates a file in `/dev`),
//! a file's directory must already exist (rftune creates no directories for it), and anything
//! that is neither a regular file nor a block device is refused.

use crate::{Error, Result};
use std::os::unix::fs::FileTypeExt;
use std::path::{Component, Path, PathBuf};

/// The directory a missing target would be created in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parent {
    /// An existing directory.
    Directory,
    /// Nothing exists there.
    Missing,
    /// Something that is not a directory.
    NotADirectory,
}

/// What exists at the target path (symbolic links followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing; the file would be created in `parent`.
    Missing {
        /// What its directory is.
        parent: Parent,
    },
    /// A block device.
    BlockDevice,
    /// A regular file.
    RegularFile,
    /// A directory.
    Directory,
    /// Anything else: `character device`, `FIFO`, `socket`.
    Other(&'static str),
}

/// What the benchmark will use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A raw block device; [`crate::device`] decides whether it may be written.
    Device,
    /// A file that does not exist yet.
    NewFile,
    /// An existing regular file.
    ExistingFile,
}

/// Whether `path` lies under `/dev`, judged on the path made absolute with `.` and `..`
/// resolved lexically, and on its parent directory with symbolic links resolved (so neither
/// `/tmp/../dev/x` nor a link to `/dev` slips through).
pub fn under_dev(path: &Path) -> bool {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut lexical = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let resolved_parent = lexical.parent().and_then(|p| std::fs::canonicalize(p).ok());
    lexical.starts_with("/dev") || resolved_parent.is_some_and(|p| p.starts_with("/dev"))
}

/// Decides what `path` is to the benchmark, or why it cannot be used. `in_dev` is
/// [`under_dev`]`(path)`.
pub fn decide(path: &Path, in_dev: bool, found: &Found) -> Result<Kind> {
    let p = path.display();
    let elsewhere = "or give a file path outside /dev, such as /var/tmp/rftune.fio";
    match found {
        Found::BlockDevice => Ok(Kind::Device),
        Found::Missing { .. } if in_dev => Err(Error::Refused(format!(
            "--target {p} does not exist: a path under /dev must be an existing block device \
             (rftune never creates files in /dev); check the name with lsblk, {elsewhere}"
        ))),
        Found::RegularFile | Found::Directory | Found::Other(_) if in_dev => Err(Error::Refused(format!(
            "--target {p} is a {}, not a block device: a path under /dev must be an existing block \
             device; check the name with lsblk, {elsewhere}",
            describe(found)
        ))),
        Found::Missing {
            parent: Parent::Directory,
        } => Ok(Kind::NewFile),
        Found::Missing { parent } => {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .display();
            let what = if *parent == Parent::Missing {
                "does not exist"
            } else {
                "is not a directory"
            };
            Err(Error::Refused(format!(
                "--target {p}: the directory {dir} {what}; create it first (rftune does not create \
                 directories for a target) or choose a file in an existing directory"
            )))
        }
        Found::RegularFile => Ok(Kind::ExistingFile),
        Found::Directory => Err(Error::Refused(format!(
            "--target {p} is a directory; give a file path inside it, e.g. {}",
            path.join("rftune.fio").display()
        ))),
        Found::Other(kind) => Err(Error::Refused(format!(
            "--target {p} is a {kind}: the storage benchmark writes to a regular file or a block device"
        ))),
    }
}

fn describe(found: &Found) -> &'static str {
    match found {
        Found::Missing { .. } => "missing path",
        Found::BlockDevice => "block device",
        Found::RegularFile => "regular file",
        Found::Directory => "directory",
        Found::Other(kind) => kind,
    }
}

/// Looks at what is at `path` (following symbolic links).
pub fn observe(path: &Path) -> Result<Found> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            let dir = path
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let parent = match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => Parent::Directory,
                Ok(_) => Parent::NotADirectory,
                Err(_) => Parent::Missing,
            };
            return Ok(Found::Missing { parent });
        }
        Err(e) => {
            return Err(crate::io_err(format!(
                "reading --target {} (check the path and its permissions)",
                path.display()
            ))(e));
        }
    };
    let t = meta.file_type();
    Ok(if t.is_block_device() {
        Found::BlockDevice
    } else if t.is_file() {
        Found::RegularFile
    } else if t.is_dir() {
        Found::Directory
    } else if t.is_char_device() {
        Found::Other("character device")
    } else if t.is_fifo() {
        Found::Other("FIFO")
    } else if t.is_socket() {
        Found::Other("socket")
    } else {
        Found::Other("special file")
    })
}

/// [`observe`] and [`decide`] for `path`.
pub fn examine(path: &Path) -> Result<Kind> {
    decide(path, under_dev(path), &observe(path)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &str, in_dev: bool, found: Found) -> String {
        decide(Path::new(path), in_dev, &found).unwrap_err().to_string()
    }

    #[test]
    fn under_dev_sees_through_dot_dot_and_relative_paths() {
        assert!(under_dev(Path::new("/dev/nvme0n1")));
        assert!(under_dev(Path::new("/dev/disk/by-id/nvme-x")));
        assert!(under_dev(Path::new("/tmp/../dev/nvme9n1")));
        assert!(!under_dev(Path::new("/var/tmp/rftune.fio")));
        assert!(!under_dev(Path::new("/device/x")), "a prefix of a name is not /dev");
        assert!(
            !under_dev(Path::new("relative/x.fio")),
            "tests run in the crate's directory"
        );
    }

    #[test]
    fn under_dev_only_block_devices_are_accepted() {
        let dir = Found::Missing {
            parent: Parent::Directory,
        };
        let e = refused("/dev/nvme9n1", true, dir);
        assert!(
            e.contains("/dev/nvme9n1 does not exist") && e.contains("existing block device"),
            "{e}"
        );
        let e = refused("/dev/null", true, Found::Other("character device"));
        assert!(e.contains("character device, not a block device"), "{e}");
        let e = refused("/dev/shm/x", true, Found::RegularFile);
        assert!(e.contains("regular file, not a block device"), "{e}");
        assert_eq!(
            decide(Path::new("/dev/nvme0n1"), true, &Found::BlockDevice).unwrap(),
            Kind::Device
        );
    }

    #[test]
    fn a_file_needs_an_existing_directory() {
        let e = refused(
            "/nonexistent/dir/x.fio",
            false,
            Found::Missing {
                parent: Parent::Missing,
            },
        );
        assert!(
            e.contains("the directory /nonexistent/dir does not exist; create it first"),
            "{e}"
        );
        let e = refused(
            "/etc/passwd/x.fio",
            false,
            Found::Missing {
                parent: Parent::NotADirectory,
            },
        );
        assert!(e.contains("/etc/passwd is not a directory"), "{e}");
        let new = Found::Missing {
            parent: Parent::Directory,
        };
        assert_eq!(decide(Path::new("x.fio"), false, &new).unwrap(), Kind::NewFile);
        assert!(refused("/var/tmp", false, Found::Directory).contains("/var/tmp/rftune.fio"));
        assert!(refused("/run/x.sock", false, Found::Other("socket")).contains("is a socket"));
    }

    #[test]
    fn observe_tells_files_directories_and_missing_parents_apart() {
        let dir = std::env::temp_dir().join(format!("host-bench-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, b"data").unwrap();
        assert_eq!(observe(&file).unwrap(), Found::RegularFile);
        assert_eq!(observe(&dir).unwrap(), Found::Directory);
        assert_eq!(
            observe(&dir.join("new")).unwrap(),
            Found::Missing {
                parent: Parent::Directory
            }
        );
        assert_eq!(
            observe(&dir.join("no/new")).unwrap(),
            Found::Missing {
                parent: Parent::Missing
            }
        );
        assert_eq!(
            observe(&file.join("new")).unwrap(),
            Found::Missing {
                parent: Parent::NotADirectory
            }
        );
        assert_eq!(
            observe(Path::new("/dev/null")).unwrap(),
            Found::Other("character device")
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
