//! `gpudoctor check`.

use super::children::run_smoke;
use super::Output;
use super::*;
use crate::assume;
use crate::cli::{CheckArgs, Format};
use crate::render::{self, human::HumanOptions};
use crate::report::ExitStatus;
use crate::rules::Selection;

pub(crate) fn check(a: CheckArgs) -> Output {
    let started = std::time::Instant::now();
    // Pure argument checks first, before touching the machine.
    if let Err(e) = probe_options(&a.probe) {
        return Output::tool_error(e);
    }
    let sel = Selection {
        only: a.only.clone(),
        skip: a.skip.clone(),
    };
    if let Err(e) = sel.validate() {
        return Output::tool_error(e);
    }
    if let Some(Err(e)) = a.gpu.as_deref().map(parse_gpu_list) {
        return Output::tool_error(e);
    }
    for raw in &a.assume {
        if let Err(e) = assume::parse(raw) {
            return Output::tool_error(e.0);
        }
    }
    let policy = match a.policy.policy.as_deref().map(crate::policy::Policy::load) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return Output::tool_error(e),
    };
    let matrix = match load_matrix(a.matrix.as_deref()) {
        Ok(m) => m,
        Err(e) => return Output::tool_error(e),
    };
    crate::probe::trace::line("matrix loaded");
    // On a terminal, say what is taking time (a --deep import can take many seconds).
    let activity = (a.snapshot.is_none() && !a.no_probe).then(|| {
        render::progress::Activity::start(&if a.probe.deep {
            format!(
                "Probing this machine and importing each framework (--deep; at most {} s)",
                a.probe.timeout
            )
        } else {
            format!("Probing this machine (at most {} s)", a.probe.timeout)
        })
    });
    let snap = match build_snapshot(&a, &matrix) {
        Ok(s) => s,
        Err(e) => return Output::tool_error(e),
    };
    let filter = match gpu_filter(a.gpu.as_deref(), &snap) {
        Ok(f) => f,
        Err(e) => return Output::tool_error(e),
    };
    let mut snap = snap;
    if a.snapshot.is_none() && !a.no_probe {
        snap.smoke = if a.no_smoke {
            crate::snapshot::Probed::absent_code("skipped", "skipped (--no-smoke)")
        } else {
            crate::probe::trace::line("smoke start");
            if let Some(act) = &activity {
                act.say("Running the GPU smoke tests");
            }
            // One deadline for the whole check: the smoke tests get what the probes left.
            let left = a.probe.timeout - started.elapsed().as_secs_f64();
            let r = if left < 0.25 {
                crate::snapshot::Probed::absent_code(
                    "no_time",
                    format!(
                        "not run: the probes used the whole --timeout of {} s",
                        a.probe.timeout
                    ),
                )
            } else {
                run_smoke(&snap, &filter, left)
            };
            crate::probe::trace::line("smoke done");
            r
        };
    }
    drop(activity);
    let opts = match policy_options(
        policy.as_ref(),
        a.policy.node_class.as_deref(),
        &snap,
        a.expect_gpus,
    ) {
        Ok(x) => x,
        Err(e) => return Output::tool_error(e),
    };
    let report = judge(
        snap,
        &matrix,
        &opts,
        &sel,
        &filter,
        policy.as_ref(),
        crate::report::LEFT_OUT_BY_FLAGS,
    );
    crate::probe::trace::line("rules judged");
    let fail_on = fail_severity(a.fail_on);
    let status = if report.unfit(fail_on) {
        ExitStatus::Unfit
    } else {
        ExitStatus::Healthy
    };
    let format = if a.json { Format::Json } else { a.format };
    let text = match format {
        Format::Human => render::human::render(
            &report,
            &HumanOptions {
                color: use_color(a.color),
                all_facts: a.verbose,
                gpus: filter,
                areas: None,
            },
        ),
        Format::Json => match render::json::render(&report) {
            Ok(s) => s,
            Err(e) => return Output::tool_error(format!("could not write the JSON report: {e}")),
        },
        // Written to be pasted into a bug report: redacted as `snapshot --redact` is.
        Format::Markdown => {
            let mut shared = report.clone();
            crate::redact::redact_report(&mut shared, crate::redact::home_dir().as_deref());
            render::markdown::render(&shared, &filter)
        }
        Format::Prometheus => render::prometheus::render(&report),
        Format::Junit => {
            render::junit::render(&report, &selected_rules(&sel), fail_on, "gpudoctor check")
        }
        Format::Line => render::line::render(&report),
    };
    Output::ok(text, status)
}
