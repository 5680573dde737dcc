//! `gpudoctor recommend`.

use super::config::RecommendConfig;
use super::Output;
use super::*;
use crate::cli::RecommendArgs;
use crate::report::ExitStatus;

pub(crate) fn recommend(a: RecommendArgs) -> Output {
    // The command line, resolved once: this starts the run's one deadline.
    let cfg = match RecommendConfig::resolve(a) {
        Ok(c) => c,
        Err(e) => return Output::tool_error(e),
    };
    let matrix = match load_matrix(cfg.matrix.as_deref()) {
        Ok(m) => m,
        Err(e) => return Output::tool_error(e),
    };
    let mut snap = if cfg.probing {
        probe::probe_all(&cfg.probe.options)
    } else {
        Snapshot::empty()
    };
    if let Err(e) = apply_assumptions(&mut snap, &matrix, &cfg.assume) {
        return Output::tool_error(e);
    }
    let r = crate::recommend::recommend(&snap, &matrix, cfg.framework);
    if cfg.json {
        return match serde_json::to_string_pretty(&r) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    Output::ok(crate::recommend::render(&r), ExitStatus::Healthy)
}
