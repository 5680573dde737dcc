//! `framework.cpu-only-build`'s cases (tests/it/rules.rs `cpu_only_torch_and_jax_without_plugin`,
//! on the synthetic 2 × H100's venv).
use super::RULE;
use crate::report::{Category::CpuOnlyBuild, Severity::Error};
use crate::rules::testkit::{run_table, Base::*, Case, Fires, Quiet, Table, CASE};

const TORCH_CPU: (&str, &str) = ("/python/value/0/torch", r#"{"version": "2.7.1+cpu"}"#);

pub(crate) const TABLE: Table = Table {
    rule: RULE,
    cases: &[
        Case {
            name: "torch-cpu-and-jax-without-plugin",
            set: &[
                TORCH_CPU,
                (
                    "/python/value/0/packages",
                    r#"[{"name": "jax", "version": "0.4.30"}, {"name": "jaxlib", "version": "0.4.30"}, {"name": "torch", "version": "2.7.1+cpu"}]"#,
                ),
            ],
            expect: Fires(Error, CpuOnlyBuild),
            ..CASE
        },
        Case {
            name: "jax-without-plugin",
            set: &[(
                "/python/value/0/packages",
                r#"[{"name": "jax", "version": "0.4.30"}, {"name": "jaxlib", "version": "0.4.30"}, {"name": "torch", "version": "2.7.1"}]"#,
            )],
            expect: Fires(Error, CpuOnlyBuild),
            ..CASE
        },
        Case {
            name: "jax-with-its-cuda12-plugin",
            set: &[(
                "/python/value/0/packages",
                r#"[{"name": "jax", "version": "0.4.30"}, {"name": "jax-cuda12-plugin", "version": "0.4.30"}, {"name": "jaxlib", "version": "0.4.30"}, {"name": "torch", "version": "2.7.1"}]"#,
            )],
            expect: Quiet,
            ..CASE
        },
        Case {
            name: "healthy-synthetic-2xh100",
            expect: Quiet,
            ..CASE
        },
        // torch 2.11.0+cu130 and jax 0.11.2 with jax-cuda13-plugin.
        Case {
            name: "healthy-recorded-h100",
            base: H100,
            expect: Quiet,
            ..CASE
        },
        // No GPU on the machine: a CPU build is what it can use.
        Case {
            name: "torch-cpu-without-gpus",
            base: NoDriver,
            set: &[(
                "/python",
                r#"{"status": "found", "value": [{"interpreter": "/opt/venv/bin/python3", "prefix": "/opt/venv", "kind": "venv", "origin": "VIRTUAL_ENV", "python_version": "3.11", "site_packages": ["/opt/venv/lib/python3.11/site-packages"], "packages": [{"name": "torch", "version": "2.7.1+cpu"}], "torch": {"version": "2.7.1+cpu"}}]}"#,
            )],
            expect: Quiet,
            ..CASE
        },
    ],
};

#[test]
fn cases() {
    run_table(&TABLE);
}
