//! Finding the vector files under the paths given on the command line.
//!
//! Every real file is found once, however many links or arguments lead to
//! it, and a directory tree whose links loop back into itself is read once:
//! directories are remembered by their canonical path. Each file also gets
//! the name its outputs are written under (pcap, VCDs, plot), derived from
//! where it was found rather than from anything inside it, so that a vector
//! cannot choose where the CLI writes.

use std::collections::HashSet;
use std::fs::{self, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum CollectError {
    #[error("{0}: no such file or directory")]
    Missing(PathBuf),
    #[error("{0}: symbolic link loop (the link leads back to itself and never reaches a file)")]
    LinkLoop(PathBuf),
    #[error("{path}: dangling link (its target {target} does not exist)")]
    Dangling { path: PathBuf, target: PathBuf },
    #[error("{path}: cannot read: {reason}")]
    Io { path: PathBuf, reason: String },
}

/// A vector file and the name its outputs go under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The file as it was reached (the argument, or the argument joined
    /// with the names below it).
    pub path: PathBuf,
    /// A file given directly: its stem. A file found under a directory
    /// argument: its path relative to that argument, without `.json`.
    /// Plain names only, never `..` or an absolute path.
    pub out_name: PathBuf,
}

/// What [`walk`] found, sorted by path, and why it skipped what it skipped.
#[derive(Debug, Default)]
pub struct Walk {
    pub found: Vec<Found>,
    /// One line per link or argument skipped because it leads back to a
    /// directory or file already found.
    pub notes: Vec<String>,
}

/// Every `*.json` under the given files or directories, each real file
/// once, with the names of their outputs.
pub fn walk(paths: &[PathBuf]) -> Result<Walk, CollectError> {
    let mut w = Walker::default();
    for p in paths {
        w.argument(p)?;
    }
    w.out.found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(w.out)
}

/// Every `*.json` under the given files or directories, each real file
/// once, sorted. (The notes of [`walk`] about skipped links are dropped.)
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CollectError> {
    Ok(walk(paths)?.found.into_iter().map(|f| f.path).collect())
}

#[derive(Default)]
struct Walker {
    dirs: HashSet<PathBuf>,
    files: HashSet<PathBuf>,
    out: Walk,
}

impl Walker {
    fn argument(&mut self, arg: &Path) -> Result<(), CollectError> {
        let (real, meta) = resolve(arg)?;
        if meta.is_dir() {
            return self.tree(arg, real);
        }
        let stem = arg.file_stem().unwrap_or(arg.as_os_str());
        self.file(arg.to_path_buf(), real, PathBuf::from(stem));
        Ok(())
    }

    fn file(&mut self, path: PathBuf, real: PathBuf, out_name: PathBuf) {
        if self.files.insert(real) {
            self.out.found.push(Found { path, out_name });
        } else {
            self.note(&path, "the same file as one already found");
        }
    }

    /// Reads the tree under `root`. Links are followed only once every real
    /// directory reachable without them has been read, so a directory that
    /// is both in the tree and behind a link keeps its real name and the
    /// link is the one skipped.
    fn tree(&mut self, root: &Path, real: PathBuf) -> Result<(), CollectError> {
        let mut dirs = vec![(root.to_path_buf(), real)];
        let mut links = Vec::new();
        loop {
            if let Some((dir, real)) = dirs.pop() {
                if self.dirs.insert(real.clone()) {
                    self.read_dir(root, &dir, &real, &mut dirs, &mut links)?;
                } else {
                    let why = format!("it leads back to {}, already read", real.display());
                    self.note(&dir, &why);
                }
            } else if let Some(link) = links.pop() {
                let (real, meta) = resolve(&link)?;
                if meta.is_dir() {
                    dirs.push((link, real));
                } else if is_json(&link) {
                    let name = out_name(root, &link);
                    self.file(link, real, name);
                }
            } else {
                return Ok(());
            }
        }
    }

    fn read_dir(
        &mut self,
        root: &Path,
        dir: &Path,
        real: &Path,
        dirs: &mut Vec<(PathBuf, PathBuf)>,
        links: &mut Vec<PathBuf>,
    ) -> Result<(), CollectError> {
        let mut entries = fs::read_dir(dir)
            .and_then(|rd| rd.collect::<io::Result<Vec<_>>>())
            .map_err(|e| io_error(dir, &e))?;
        // Reverse order on the stacks: the first name is read first.
        entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
        for ent in entries {
            let path = ent.path();
            let kind = ent.file_type().map_err(|e| io_error(&path, &e))?;
            // Below a canonical directory, a name that is not a link is
            // canonical too.
            let real_path = real.join(ent.file_name());
            if kind.is_symlink() {
                links.push(path);
            } else if kind.is_dir() {
                dirs.push((path, real_path));
            } else if kind.is_file() && is_json(&path) {
                let name = out_name(root, &path);
                self.file(path, real_path, name);
            }
        }
        Ok(())
    }

    fn note(&mut self, path: &Path, why: &str) {
        self.out
            .notes
            .push(format!("note: skipped {}: {why}", path.display()));
    }
}

fn is_json(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "json")
}

/// `path` relative to `root`, without `.json`. `path` was built by joining
/// names onto `root`, so the prefix is always there.
fn out_name(root: &Path, path: &Path) -> PathBuf {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.with_extension("")
}

/// The canonical path and metadata of `p`, following links, or an error
/// that says in words why a link cannot be followed.
fn resolve(p: &Path) -> Result<(PathBuf, Metadata), CollectError> {
    let meta = fs::metadata(p).map_err(|e| classify(p, &e))?;
    let real = fs::canonicalize(p).map_err(|e| classify(p, &e))?;
    Ok((real, meta))
}

fn classify(p: &Path, e: &io::Error) -> CollectError {
    let link = fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    if e.raw_os_error() == Some(libc::ELOOP) {
        CollectError::LinkLoop(p.to_path_buf())
    } else if e.kind() == io::ErrorKind::NotFound && link {
        CollectError::Dangling {
            path: p.to_path_buf(),
            target: fs::read_link(p).unwrap_or_default(),
        }
    } else if e.kind() == io::ErrorKind::NotFound {
        CollectError::Missing(p.to_path_buf())
    } else {
        io_error(p, e)
    }
}

fn io_error(p: &Path, e: &io::Error) -> CollectError {
    CollectError::Io {
        path: p.to_path_buf(),
        reason: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for f in ["a/x.json", "b/y.json", "b/c/z.json", "b/notes.txt"] {
            let p = d.path().join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "{}").unwrap();
        }
        d
    }

    fn names(w: &Walk) -> Vec<String> {
        w.found
            .iter()
            .map(|f| f.out_name.display().to_string())
            .collect()
    }

    #[test]
    fn directories_give_relative_names_and_files_their_stem() {
        let d = tree();
        let w = walk(&[d.path().to_path_buf()]).unwrap();
        assert_eq!(names(&w), ["a/x", "b/c/z", "b/y"]);
        let w = walk(&[d.path().join("b/c/z.json")]).unwrap();
        assert_eq!(names(&w), ["z"]);
    }

    #[test]
    fn links_looping_between_directories_are_read_once() {
        let d = tree();
        symlink("../b", d.path().join("a/to_b")).unwrap();
        symlink("../a", d.path().join("b/to_a")).unwrap();
        symlink(".", d.path().join("self")).unwrap();
        let w = walk(&[d.path().to_path_buf()]).unwrap();
        assert_eq!(names(&w), ["a/x", "b/c/z", "b/y"]);
        assert_eq!(w.notes.len(), 3, "{:?}", w.notes);
        assert!(w.notes.iter().all(|n| n.contains("already read")));
    }

    #[test]
    fn an_argument_inside_another_is_read_once() {
        let d = tree();
        let w = walk(&[d.path().to_path_buf(), d.path().join("b")]).unwrap();
        assert_eq!(names(&w), ["a/x", "b/c/z", "b/y"]);
        assert_eq!(w.notes.len(), 1);
    }

    #[test]
    fn unresolvable_links_are_errors_in_words() {
        let d = tree();
        let me = d.path().join("a/me.json");
        symlink("me.json", &me).unwrap();
        let e = walk(&[d.path().to_path_buf()]).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: symbolic link loop (the link leads back to itself and never reaches a file)",
                me.display()
            )
        );
        fs::remove_file(&me).unwrap();
        symlink("gone.json", &me).unwrap();
        let e = walk(&[d.path().to_path_buf()]).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: dangling link (its target gone.json does not exist)",
                me.display()
            )
        );
    }

    #[test]
    fn a_missing_path_is_named_once() {
        let e = collect(&[PathBuf::from("vectors/x.json")]).unwrap_err();
        assert_eq!(e.to_string(), "vectors/x.json: no such file or directory");
        assert!(std::error::Error::source(&e).is_none());
    }
}
