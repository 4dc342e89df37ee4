//! `--junit FILE`: the results as JUnit XML, the format CI servers
//! (Jenkins, GitLab, GitHub Actions reporters) read.
//!
//! One `<testsuite>` per invocation inside `<testsuites>`; one `<testcase>`
//! per vector, `name` = the vector's path, `classname` = its top. A
//! mismatch or a divergence is a `<failure>`, bad input an `<error>`.
//!
//! The file is written atomically: into a temporary file next to it,
//! created before the first run (so a directory that cannot be written
//! stops the invocation before any time is spent), renamed over `FILE` at
//! the end. A reader never sees half a report.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// How one vector ended, as JUnit sees it.
pub enum Status {
    Pass,
    /// Mismatch or divergence: `kind` (`mismatch`, `diverged`), a one-line
    /// message and the full text.
    Failure {
        kind: &'static str,
        message: String,
        text: String,
    },
    /// Bad input: the vector did not load, or an output could not be
    /// written.
    Error {
        message: String,
        text: String,
    },
}

pub struct Case {
    pub name: String,
    pub classname: String,
    pub seconds: f64,
    pub status: Status,
}

/// The XML document for `cases`, `suite` naming the invocation.
pub fn render(suite: &str, cases: &[Case], seconds: f64) -> String {
    let failures = cases
        .iter()
        .filter(|c| matches!(c.status, Status::Failure { .. }))
        .count();
    let errors = cases
        .iter()
        .filter(|c| matches!(c.status, Status::Error { .. }))
        .count();
    let counts = format!(
        "tests=\"{}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{seconds:.3}\"",
        cases.len()
    );
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let name = attr(suite);
    let _ = writeln!(x, "<testsuites name=\"{name}\" {counts}>");
    let _ = writeln!(x, "  <testsuite name=\"{name}\" {counts}>");
    for c in cases {
        let _ = write!(
            x,
            "    <testcase name=\"{}\" classname=\"{}\" time=\"{:.3}\"",
            attr(&c.name),
            attr(&c.classname),
            c.seconds
        );
        match &c.status {
            Status::Pass => x.push_str("/>\n"),
            Status::Failure {
                kind,
                message,
                text,
            } => {
                let _ = writeln!(
                    x,
                    ">\n      <failure type=\"{kind}\" message=\"{}\">{}</failure>\n    </testcase>",
                    attr(message),
                    text_node(text)
                );
            }
            Status::Error { message, text } => {
                let _ = writeln!(
                    x,
                    ">\n      <error type=\"error\" message=\"{}\">{}</error>\n    </testcase>",
                    attr(message),
                    text_node(text)
                );
            }
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// `s` as element content: markup characters escaped, characters XML 1.0
/// does not allow written out as `\u{..}`.
pub fn text_node(s: &str) -> String {
    escape(s, false)
}

/// `s` as an attribute value (in double quotes): as [`text_node`], and
/// quotes and line breaks as character references, so a parser gives the
/// value back unchanged instead of normalising the white space.
pub fn attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&apos;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\t' | '\n' => out.push(c),
            c if allowed(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    out
}

/// XML 1.0's `Char` production (tab, line feed and carriage return are
/// handled before this).
fn allowed(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// A report file (JUnit XML, functional coverage), reserved before the
/// first run and written whole at the end.
pub struct Out {
    path: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl Out {
    /// Creates `path`'s directory and a temporary file in it; `flag`
    /// names the option in errors.
    pub fn create(flag: &str, path: &Path) -> Result<Out> {
        let name = path
            .file_name()
            .with_context(|| format!("{flag} {}: not a file name", path.display()))?;
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(d) = dir {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        if path.is_dir() {
            anyhow::bail!("{flag} {}: is a directory", path.display());
        }
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.tmp", std::process::id()));
        let tmp = dir.map_or_else(|| PathBuf::from(&tmp_name), |d| d.join(&tmp_name));
        let file =
            File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        Ok(Out {
            path: path.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// Writes `xml` and renames the temporary file over the report.
    pub fn commit(mut self, xml: &str) -> Result<()> {
        let mut f = self.file.take().expect("committed once");
        f.write_all(xml.as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(|| format!("cannot write {}", self.tmp.display()))?;
        drop(f);
        std::fs::rename(&self.tmp, &self.path)
            .with_context(|| format!("cannot write {}", self.path.display()))
    }
}

impl Drop for Out {
    /// Leaves no temporary file behind, committed or not.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_control_characters_are_escaped() {
        assert_eq!(
            attr("a<b>&\"c\"'\n\t\r"),
            "a&lt;b&gt;&amp;&quot;c&quot;&apos;&#10;&#9;&#13;"
        );
        assert_eq!(text_node("x<y & \"z\"\n"), "x&lt;y &amp; \"z\"\n");
        assert_eq!(
            text_node("\u{1b}[31m\u{0}\u{fffe}é"),
            "\\u{1b}[31m\\u{0}\\u{fffe}é"
        );
    }
}
