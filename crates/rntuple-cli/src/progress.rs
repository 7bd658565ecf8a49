//! Progress bars on stderr for the long-running commands.

/// A progress bar on stderr, or a hidden one when asked for none or stderr is not a terminal
/// (pipes, CI), so that scripts see exactly the same output either way.
pub(crate) fn progress_bar(len: u64, what: &str, enabled: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !enabled || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let style = indicatif::ProgressStyle::with_template("{msg:>8} [{elapsed_precise}] [{wide_bar}] {human_pos}/{human_len} ({per_sec}, {eta} left)")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> ");
    let pb = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr_with_hz(10)).with_style(style);
    pb.set_message(what.to_string());
    pb
}
