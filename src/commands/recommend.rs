//! `gpudoctor recommend`.

use super::Output;
use super::*;
use crate::assume;
use crate::cli::{FrameworkChoice, RecommendArgs};
use crate::probe::{self};
use crate::report::ExitStatus;
use crate::snapshot::Snapshot;

pub(crate) fn recommend(a: RecommendArgs) -> Output {
    let opts = match probe_options(&a.probe) {
        Ok(o) => o,
        Err(e) => return Output::tool_error(e),
    };
    let mut parsed = Vec::new();
    for raw in &a.assume {
        match assume::parse(raw) {
            Ok(kv) => parsed.push(kv),
            Err(e) => return Output::tool_error(e.0),
        }
    }
    let matrix = match load_matrix(a.matrix.as_deref()) {
        Ok(m) => m,
        Err(e) => return Output::tool_error(e),
    };
    let mut snap = if a.no_probe {
        Snapshot::empty()
    } else {
        probe::probe_all(&opts)
    };
    for (k, v) in parsed {
        if let Err(e) = assume::apply(&mut snap, &matrix, &k, &v) {
            return Output::tool_error(e.0);
        }
    }
    let only = a.framework.map(|f| match f {
        FrameworkChoice::Torch => "torch",
        FrameworkChoice::Tensorflow => "tensorflow",
        FrameworkChoice::Jax => "jax",
    });
    let r = crate::recommend::recommend(&snap, &matrix, only);
    if a.json {
        return match serde_json::to_string_pretty(&r) {
            Ok(s) => Output::ok(s + "\n", ExitStatus::Healthy),
            Err(e) => Output::tool_error(e.to_string()),
        };
    }
    Output::ok(crate::recommend::render(&r), ExitStatus::Healthy)
}
