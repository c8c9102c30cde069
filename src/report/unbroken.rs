//! Lines are wrapped at spaces only, so a URL or path in a report or an error
//! stays whole on one line, to be clicked or copied. miette's defaults would
//! cut it: at the width (`break_words`), after a hyphen (`HyphenSplitter`),
//! and after `/` or `-` (Unicode line-break opportunities). A word longer
//! than the width overflows its line instead.

use miette::{GraphicalReportHandler, MietteHandlerOpts};
use textwrap::{WordSeparator, WordSplitter};

/// `handler`, wrapping at spaces only.
pub(crate) fn handler(handler: GraphicalReportHandler) -> GraphicalReportHandler {
    handler.with_break_words(false).with_word_separator(WordSeparator::AsciiSpace).with_word_splitter(WordSplitter::NoHyphenation)
}

/// The error hook's options, wrapping at spaces only.
pub(crate) fn hook(opts: MietteHandlerOpts) -> MietteHandlerOpts {
    opts.break_words(false).word_separator(WordSeparator::AsciiSpace).word_splitter(WordSplitter::NoHyphenation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error, miette::Diagnostic)]
    #[error("cannot open engine repository {path}: clone of {url} failed because the server said no")]
    #[diagnostic(help("remove {path} and fetch {url} again, or pass a local clone of the engine instead"))]
    struct Long {
        path: String,
        url: String,
    }

    fn long() -> Long {
        Long {
            path: format!("/home/ci-runner/work/{}/engine-audit-cache/repos/0123456789abcdef01234567", "a-very-long-folder-name".repeat(3)),
            url: "https://github.example.org/some-organisation/some-very-long-repository-name-for-sglang-forks.git".into(),
        }
    }

    fn render(handler: GraphicalReportHandler) -> String {
        let mut out = String::new();
        handler.render_report(&mut out, &long()).unwrap();
        out
    }

    #[test]
    fn urls_and_paths_stay_on_one_line_at_any_width() {
        let base = || GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
        let Long { path, url } = long();
        // miette as configured by default cuts them: what this module is for.
        let cut = render(base().with_width(60));
        assert!(!cut.lines().any(|l| l.contains(&path)), "{cut}");
        for width in [40, 60, 100] {
            let out = render(handler(base().with_width(width)));
            let whole = |s: &str| out.lines().filter(|l| l.contains(s)).count();
            assert_eq!((whole(&path), whole(&url)), (2, 2), "width {width}: message and help each hold both whole:\n{out}");
            // Prose is still wrapped at spaces.
            assert!(out.lines().count() > 4, "{out}");
        }
    }
}
